"""Tests of the LLM judge (:mod:`metaeval.textmetrics._judge`): prompting, sampling,
parsing, retries, caching, resuming, the local backend and the ``judge`` command.

Oracles, each named where it is used:

* a real HTTP server on loopback (``tests/_judge_server.py``) that speaks the
  chat-completions protocol and answers from a script: well-formed ratings,
  malformed text, out-of-scale numbers, 429 and 500 responses, an unreadable
  body and a hanging request.  Expected ratings and request counts are read
  off that script by hand (each test says which directive gives what);
* the per-request seed formula documented in :func:`sample_seed`, restated
  here (``_seed``), for the script's seed-dependent answers ``1 + seed % 5``;
* hand computations for the G-Eval weighted score and for the random-fill
  policy (``numpy.random.default_rng([seed, 1]).integers``, as documented);
* seed paper 000 Table 4, copied verbatim below, for the default prompt;
* for the local backend, a tiny randomly initialised GPT-2 built in a
  fixture, checked against ``transformers``' own ``generate`` (same seed),
  against full unbatched forward passes (token log-probabilities, exact
  rating probabilities), and a numpy inverse-CDF draw.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import math
import os
import pickle
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import DataError, Dataset, ParameterError
from metaeval import textmetrics as tm
from metaeval.cli import main
from metaeval.errors import JudgeRequestError, MissingLogprobsWarning, ParseFailureWarning
from metaeval.textmetrics._judge_backends import redact

sys.path.insert(0, str(Path(__file__).parent))
from _judge_server import GEVAL_ALTS, RecordingServer, ScriptedServer, completion_json, send

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

KEY_ENV = "METAEVAL_TEST_KEY"
SECRET = "sk-test-0123456789-SECRET-abcdef"

#: Seed paper 000, Appendix A.2, Table 4 (copied from the paper's text, independently of the code).
PAPER_TABLE4 = (
    "###Instruction###\n"
    "Please act as an impartial and helpful evaluator for natural language generation (NLG), "
    "and the audience is an expert in the field.\n"
    "Your task is to evaluate the quality of {task} strictly based on the given evaluation "
    "criterion.\n"
    "Begin the evaluation by providing your analysis concisely and accurately, and then on the "
    "next line, start with \"Rating:\" followed by your rating on a Likert scale from {scale} "
    "(higher means better).\n"
    "You MUST keep to the strict boundaries of the evaluation criterion and focus solely on the "
    "issues and errors involved; otherwise, you will be penalized.\n"
    "Make sure you read and understand these instructions, as well as the following evaluation "
    "criterion and example content, carefully.\n"
    "\n###Evaluation Criterion###\n{aspect}\n"
    "\n###Example###\n{source_des}:\n{source}\n\n{target_des}:\n{target}\n"
    "\n###Your Evaluation###\n"
)


def _seed(seed, prompt, sample):
    """The documented per-request seed (docstring of ``sample_seed``), restated."""
    msgs = [{"role": "user", "content": prompt}]
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{seed}:{sample}:".encode())
    h.update(json.dumps(msgs, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
    return int.from_bytes(h.digest(), "little") % 2**31


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(hang=2.0) as srv:
        yield srv


def _judge(srv, aspect, *, max_retries=3, concurrency=4, timeout=0.3, model="scripted", **kw):
    backend = tm.OpenAIBackend(model, base_url=srv.url, timeout=timeout, backoff=0.01,
                               max_backoff=0.05, max_retries=max_retries,
                               concurrency=concurrency, api_key_env=KEY_ENV)
    return tm.LLMJudge(aspect, backend=backend, template="{aspect}\n{target}", **kw)


def _served(srv, prompt):
    return [e for e in srv.requests() if e["prompt"] == prompt]


# ----------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("answer, scale, value, status", [
    ("The summary is fine.\nRating: 4", "1-5", 4.0, "ok"),           # the Table 4 format
    ("**Rating:** 5", "1-5", 5.0, "ok"),                              # markdown
    ("rating: [2]", "1-5", 2.0, "ok"),                                # case, brackets
    ("Rating: 3/5", "1-5", 3.0, "ok"),
    ("Rating: 4.0", "1-5", 4.0, "ok"),                                # an integer written as x.0
    ("Rating: 1\n...on reflection...\nRating: 2", "1-5", 2.0, "ok"),  # the last one counts
    ("Rating: 100", "0-100", 100.0, "ok"),
    ("Rating: 0", "0-100", 0.0, "ok"),
    ("Rating: 0", "1-5", math.nan, "out_of_scale"),
    ("Rating: 7", "1-5", math.nan, "out_of_scale"),
    ("Rating: 3.5", "1-5", math.nan, "out_of_scale"),
    ("Rating: -1", "1-5", math.nan, "out_of_scale"),
    ("Rating: four", "1-5", math.nan, "unparseable"),
    ("I cannot evaluate this.", "1-5", math.nan, "unparseable"),
    ("", "1-5", math.nan, "unparseable"),
    (None, "1-5", math.nan, "unparseable"),
])
def test_parse_rating_reads_the_last_rating_and_checks_the_scale(answer, scale, value, status):
    got = tm.parse_rating(answer, scale)
    assert got.status == status
    assert (math.isnan(got.value) and math.isnan(value)) or got.value == value


def test_parse_rating_with_a_user_pattern_and_bad_patterns():
    assert tm.parse_rating("Score = 8 of 10", "1-10", r"Score = (\d+)").value == 8.0
    assert tm.parse_rating("<s>3</s>", "1-5", r"<s>(?P<rating>\d)</s>").value == 3.0
    with pytest.raises(ParameterError, match="exactly one capturing group"):
        tm.parse_rating("x", "1-5", r"(a)(b)")
    with pytest.raises(ParameterError, match="not a valid regular expression"):
        tm.parse_rating("x", "1-5", r"(")


def test_scale_and_options_are_validated_with_messages_that_name_them():
    assert tm.parse_scale("1-5") == (1, 5)
    assert tm.parse_scale("0 - 100") == (0, 100)
    assert tm.parse_scale("-2..2") == (-2, 2)
    assert tm.parse_scale((1, 10)) == (1, 10)
    for bad in ("1-5-7", "five", (5, 1), (1.0, 5.0), "3-3"):
        with pytest.raises(ParameterError, match="scale="):
            tm.parse_scale(bad)
    kw = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"}
    with pytest.raises(ParameterError, match="aggregate='avg'.*'mean', 'median', 'geval'"):
        tm.LLMJudge("a", aggregate="avg", **kw)
    with pytest.raises(ParameterError, match="temperature=-1"):
        tm.LLMJudge("a", temperature=-1, **kw)
    with pytest.raises(ParameterError, match="samples=0"):
        tm.LLMJudge("a", samples=0, **kw)
    with pytest.raises(ParameterError, match="on_failure='fill'.*'nan', 'random'"):
        tm.LLMJudge("a", on_failure="fill", **kw)
    with pytest.raises(ParameterError, match="backend='anthropic'.*'openai', 'local'"):
        tm.LLMJudge("a", backend="anthropic", model="m")
    with pytest.raises(ParameterError, match="needs model="):
        tm.LLMJudge("a", backend="openai")
    with pytest.raises(ParameterError, match="base_url="):
        tm.LLMJudge("a", backend="openai", model="m", base_url="api.openai.com")
    with pytest.raises(ParameterError, match=r"unknown field\(s\) \{criterion\}.*\{aspect\}"):
        tm.LLMJudge("a", template="{criterion} {target}", **kw)
    with pytest.raises(ParameterError, match=r"no \{target\}"):
        tm.LLMJudge("a", template="{aspect}", **kw)
    with pytest.raises(ParameterError, match="on_failure='random'.*seed"):
        tm.LLMJudge("a", on_failure="random", seed=None, **kw)


def test_default_prompt_is_paper_000_table_4_and_literal_braces_survive():
    j = tm.LLMJudge("Coherence: the collective quality of all sentences.", backend="openai",
                    model="m", task="a summary", source_des="Article", target_des="Summary",
                    scale="1-10")
    want = PAPER_TABLE4.format(task="a summary", scale="1 to 10",
                               aspect="Coherence: the collective quality of all sentences.",
                               source_des="Article", source="SRC {x}", target_des="Summary",
                               target="TGT")
    assert j.prompt("TGT", "SRC {x}") == want
    j2 = tm.LLMJudge("a", backend="openai", model="m", template="{{json}} {target}")
    assert j2.prompt("T") == "{json} T"
    j3 = tm.LLMJudge("a", backend="openai", model="m", context="references",
                     template="{source}|{target}")
    assert j3.prompt("T", ("r1", "r2")) == "r1\n\nr2|T"


# ----------------------------------------------------------------------------- HTTP backend


#: directive -> (rating of every sample, status, requests per sample), read off the script.
SCRIPTED = {
    "good": (4.0, "ok", 1), "bold": (5.0, "ok", 1), "slash": (3.0, "ok", 1),
    "malformed": (math.nan, "unparseable", 1), "words": (math.nan, "unparseable", 1),
    "oos": (math.nan, "out_of_scale", 1), "zero": (math.nan, "out_of_scale", 1),
    "decimal": (math.nan, "out_of_scale", 1),
    "r429": (2.0, "ok", 2),      # 429 (Retry-After: 0), then an answer
    "r500": (1.0, "ok", 3),      # 500 twice, then an answer
    "hang": (5.0, "ok", 2),      # never answers the first time: a time-out, then an answer
    "notjson": (3.0, "ok", 2),   # a 200 whose body is not JSON, then an answer
}


def test_http_parsing_retries_timeouts_and_counts(server):
    j = _judge(server, "scripted-main", samples=2, temperature=1.0, cache_dir=False)
    names = [*SCRIPTED, "vary"]
    prompts = [j.prompt(f"[[{d}]]") for d in names]
    seen = []
    with pytest.warns(ParseFailureWarning,
                      match=r"10 of 26 judge answers .* \(4 unparseable, 6 out of scale\); they "
                            r"are NaN"):
        run = j.run(prompts, progress=lambda done, total, counts: seen.append((done, total,
                                                                                counts)))
    for k, d in enumerate(names):
        for s in range(2):
            if d == "vary":
                want, status = 1.0 + _seed(0, prompts[k], s) % 5, "ok"
            else:
                want, status, _ = SCRIPTED[d]
            assert run.status[s, k] == status, (d, s)
            got = run.ratings[s, k]
            assert (math.isnan(want) and math.isnan(got)) or got == want, (d, s)
            assert np.array_equal(run.values[s, k], got, equal_nan=True)
    # the raw answers are kept, also for failures
    assert run.answers[0, names.index("malformed")] == "I cannot evaluate this text."
    assert run.answers[1, names.index("oos")] == "Rating: 7"
    # aggregate: mean over the samples with a rating
    assert run.scores[names.index("good")] == 4.0
    assert math.isnan(run.scores[names.index("malformed")])
    vary = [1 + _seed(0, prompts[-1], s) % 5 for s in range(2)]
    assert run.scores[-1] == np.mean(vary)
    # requests: the server's log against the script
    for k, d in enumerate(names[:-1]):
        assert len(_served(server, prompts[k])) == 2 * SCRIPTED[d][2], d
    assert run.n_requests == 26 and run.n_requested == 26 and run.n_cached == 0
    assert run.n_failed == 0
    assert run.n_retries == sum(2 * (v[2] - 1) for v in SCRIPTED.values()) == 10
    # the hanging request was abandoned after the 0.3 s time-out, not after the server's 2 s
    for s_seed in {e["seed"] for e in _served(server, prompts[names.index("hang")])}:
        tries = sorted(e["t"] for e in _served(server, prompts[names.index("hang")])
                       if e["seed"] == s_seed)
        assert 0.29 <= tries[1] - tries[0] < 1.9
    # each sample sent its own seed, the documented one
    for k, p in enumerate(prompts):
        assert {e["seed"] for e in _served(server, p)} == {_seed(0, p, s) for s in range(2)}
    # progress: once after the cache lookup, then per request; counts at the end
    assert seen[0] == (0, 26, {"cached": 0, "requested": 0, "failed": 0, "retries": 0})
    assert seen[-1][:2] == (26, 26) and seen[-1][2]["retries"] == 10
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)


def test_retry_budget_then_a_clear_error_and_what_was_received_is_kept(server, tmp_path):
    j = _judge(server, "budget", max_retries=2, cache_dir=tmp_path, concurrency=1)
    good, down = j.prompt("[[good]]"), j.prompt("[[always500]]")
    with pytest.raises(JudgeRequestError, match=r"gave up after 3 attempts \(max_retries=2\); "
                                                r"last error: HTTP 500") as info:
        j.run([good, down])
    assert info.value.attempts == 3 and info.value.status == 500
    assert "run again to resume" in str(info.value)
    assert len(_served(server, down)) == 3                       # 1 + max_retries, no more
    # the good answer was cached: asking for it again costs nothing
    before = len(_served(server, good))
    assert before == 1
    again = j.run([good])
    assert again.n_cached == 1 and again.n_requested == 0 and len(_served(server, good)) == 1
    # on_error="nan": the failure is NaN, counted, and the run goes on
    j_nan = _judge(server, "budget", max_retries=2, cache_dir=tmp_path, on_error="nan")
    run = j_nan.run([good, down])
    assert run.status[0].tolist() == ["ok", "request_failed"] and run.n_failed == 1
    assert run.n_retries == 2 and run.n_cached == 1          # the failed request retried twice
    assert math.isnan(run.scores[1]) and "gave up after 3 attempts" in run.errors[0, 1]
    # the same through judge(): the failure is a row of failures(), with its error
    ds = Dataset.from_arrays({"h": np.ones((1, 1))}, human="h", systems=["A"], inputs=["x"],
                             texts=pd.DataFrame({"system": ["A"], "input": ["x"],
                                                 "hypothesis": ["[[always500]]"]}))
    res = tm.judge(ds, j_nan)
    fail = res.failures()
    assert fail["status"].tolist() == ["request_failed"] and res.n_failed == 1
    assert "gave up after 3 attempts" in fail["error"][0] and fail["answer"][0] is None
    # a 400 is not retried
    bad = j.prompt("[[badreq]]")
    with pytest.raises(JudgeRequestError, match=r"HTTP 400 \(not retried\)"):
        j.run([bad])
    assert len(_served(server, bad)) == 1


def test_the_api_key_is_sent_but_never_stored_shown_or_logged(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    with ScriptedServer(api_key=SECRET) as srv:
        j = _judge(srv, "key", cache_dir=tmp_path, timeout=5)
        run = j.run([j.prompt("[[good]]")])
        assert run.ratings[0, 0] == 4.0
        assert srv.requests()[0]["auth"] == f"Bearer {SECRET}"      # it was sent
        # the server echoes the key in its 401 body: the error shows it redacted
        with pytest.raises(JudgeRequestError) as info:
            j.run([j.prompt("[[auth]]")])
        msg = str(info.value)
        assert SECRET not in msg and "***" in msg and "HTTP 401" in msg and "set: yes" in msg
        monkeypatch.delenv(KEY_ENV)
        with pytest.raises(JudgeRequestError, match=r"check the API key in \$METAEVAL_TEST_KEY "
                                                    r"\(set: no\)"):
            j.run([j.prompt("[[good]] again")])
    # another header (Azure OpenAI's "api-key") carries the bare key
    with ScriptedServer() as srv:
        be = tm.OpenAIBackend("scripted", base_url=srv.url, api_key_env=KEY_ENV,
                              api_key_header="api-key")
        monkeypatch.setenv(KEY_ENV, SECRET)
        tm.LLMJudge("key", backend=be, template="{target}", cache_dir=tmp_path).run(["[[good]]"])
        sent = srv.requests()[0]["headers"]
        assert sent["api-key"] == SECRET and "authorization" not in sent  # names: any case
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in stored
    for text in (j.signature(), j.cache_signature(), repr(j), repr(j.backend),
                 pickle.dumps(j).decode("latin1"),
                 json.dumps([e[1] for e in tm.ResponseCache(tmp_path).entries()])):
        assert SECRET not in text
    assert not hasattr(j.backend, "api_key")
    # a judge holding its cache object pickles (for worker processes)
    held = pickle.loads(pickle.dumps(tm.LLMJudge("k", backend=j.backend, cache_dir=tm.ResponseCache(
        tmp_path))))
    assert len(held.cache_dir) == len(tm.ResponseCache(tmp_path))


# ----------------------------------------------------------------------------- security (issue 18.1)


def _http_backend(url, **kw):
    opts = {"timeout": 5, "max_retries": 0, "backoff": 0.01, "api_key_env": KEY_ENV}
    opts.update(kw)
    return tm.OpenAIBackend("scripted", base_url=url, **opts)


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_judge_follows_redirects_to_other_hosts(code, tmp_path, monkeypatch):
    """Issue 18.1: urllib turned a 302 into a body-less GET to the Location's host, with the
    Authorization header, and cached that host's answer as the rating of a prompt never sent."""
    monkeypatch.setenv(KEY_ENV, SECRET)

    def other(handler, entry):  # a host that answers anything with a rating
        send(handler, 200, completion_json("Rating: 5"))

    with RecordingServer(other) as evil:
        def redirect(handler, entry):
            send(handler, code, "", {"Location": evil.url + "/chat/completions"})

        with RecordingServer(redirect) as first:
            j = tm.LLMJudge("a", backend=_http_backend(first.url, max_retries=3),
                            template="{target}", cache_dir=tmp_path)
            with pytest.raises(JudgeRequestError, match=rf"HTTP {code} redirect to "
                               rf"http://127\.0\.0\.1:\d+/v1/chat/completions refused.*--base-url"):
                j.run(["[[good]]"])
            assert len(first.log) == 1                         # refused, not retried
            assert first.log[0]["headers"]["authorization"] == f"Bearer {SECRET}"
        assert evil.log == []                                  # never reached: no request, no key
    assert len(tm.ResponseCache(tmp_path)) == 0                # nothing cached


def _trickle(head_too):
    def respond(handler, entry):
        body = completion_json("Rating: 4").encode()
        head = (f"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        if not head_too:
            handler.wfile.write(head)
            handler.wfile.flush()
        for b in (head if head_too else b"") + body:      # one byte every 0.2 s (~50 s in all)
            handler.wfile.write(bytes([b]))
            handler.wfile.flush()
            time.sleep(0.2)
    return respond


@pytest.mark.parametrize("head_too", [False, True], ids=["body", "headers"])
def test_timeout_is_a_deadline_not_a_per_read_limit(head_too):
    """Issue 18.1: the socket time-out applied to each read, so a server trickling one byte at a
    time held a request far beyond --timeout."""
    with RecordingServer(_trickle(head_too)) as srv:
        j = tm.LLMJudge("a", backend=_http_backend(srv.url, timeout=1.0, max_retries=1),
                        template="{target}", cache_dir=False)
        t0 = time.monotonic()
        with pytest.raises(JudgeRequestError, match=r"gave up after 2 attempts.*no complete "
                                                    r"response within timeout=1 s \(deadline\)"):
            j.run(["[[good]]"])
        elapsed = time.monotonic() - t0
        assert len(srv.log) == 2
    # two attempts of at most 1 s each plus a 0.01 s backoff; slack for a loaded machine
    assert elapsed < 3.5, elapsed


def test_judge_command_timeout_is_a_deadline(files, tmp_path, monkeypatch):
    data, texts, aspect = files
    with RecordingServer(_trickle(False)) as srv:
        t0 = time.monotonic()
        res = CliRunner().invoke(main, [
            "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "x",
            "--backend", "openai", "--model", "m", "--base-url", srv.url, "--api-key-env", KEY_ENV,
            "--timeout", "1", "--max-retries", "0", "--concurrency", "1", "--no-cache"])
        elapsed = time.monotonic() - t0
    # the command line names its options (--timeout, --max-retries), not the keywords
    assert res.exit_code == 2 and "within timeout=1 s (deadline)" in res.output, res.output
    assert "(max_retries=0)" in res.output, res.output  # the API spelling of --max-retries (issue 25: no rewriting)
    assert elapsed < 4, elapsed
    # one error line; the log adds nothing when nothing is retried
    assert [ln for ln in res.output.splitlines() if ln.startswith("metaeval:")] == [
        ln for ln in res.output.splitlines() if ln.startswith("metaeval: error: ")]
    assert len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "until-close"])
def test_response_size_is_capped(announce, tmp_path):
    big = completion_json("Rating: 4" + " pad" * 100_000)             # ~400 kB

    def respond(handler, entry):
        send(handler, 200, big, length=announce)

    with RecordingServer(respond) as srv:
        be = _http_backend(srv.url, max_response_bytes=100_000, max_retries=2)
        j = tm.LLMJudge("a", backend=be, template="{target}", cache_dir=tmp_path)
        with pytest.raises(JudgeRequestError, match=r"over max_response_bytes=100000 \(raise it "
                                                    r"with --max-response-bytes"):
            j.run(["[[good]]"])
        assert len(srv.log) == 1                                   # not retried
        assert len(tm.ResponseCache(tmp_path)) == 0
        # a limit above the size reads it whole
        ok = tm.LLMJudge("a", backend=_http_backend(srv.url, max_response_bytes=len(big)),
                         template="{target}", cache_dir=False).run(["[[good]]"])
        assert ok.ratings[0, 0] == 4.0
    with pytest.raises(ParameterError, match="max_response_bytes=0"):
        _http_backend("http://127.0.0.1:9/v1", max_response_bytes=0)


def test_credentials_in_base_url_are_sent_as_basic_auth_and_never_shown(tmp_path, caplog,
                                                                        monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    password = "pa55-w0rd-9f8e7d"

    def respond(handler, entry):
        directive = "fail" if b"[[always500]]" in entry["body"] else "ok"
        if directive == "fail":  # an error body that echoes what it got
            auth = entry["headers"].get("authorization")
            send(handler, 500, json.dumps({"error": f"cannot use {auth} for {handler.path}; "
                                                    f"user alice:{password}"}))
        else:
            send(handler, 200, completion_json("Rating: 3"))

    with RecordingServer(respond) as srv:
        host = srv.url.split("//", 1)[1]
        url = f"http://alice:{password}@{host}"
        be = _http_backend(url, max_retries=1)
        j = tm.LLMJudge("a", backend=be, template="{target}", cache_dir=tmp_path)
        with caplog.at_level(logging.DEBUG, logger="metaeval.judge"):
            assert j.run(["[[good]]"]).ratings[0, 0] == 3.0
            with pytest.raises(JudgeRequestError) as info:
                j.run(["[[always500]]"])
        sent = srv.log[0]["headers"]["authorization"]
        assert sent == "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()
        assert srv.log[0]["path"] == "/v1/chat/completions"
        # and a key in the Authorization header as well is a clear error, not a silent choice
        monkeypatch.setenv(KEY_ENV, SECRET)
        with pytest.raises(JudgeRequestError, match=r"both go in the Authorization header"):
            j.run(["[[good]] two"])
    shown = [str(info.value), caplog.text, j.signature(), j.cache_signature(), repr(j),
             repr(be), json.dumps([e[1] for e in tm.ResponseCache(tmp_path).entries()])]
    assert "***" in str(info.value) and "gave up after 2 attempts" in str(info.value)
    for text in shown:
        assert password not in text and "alice:" not in text
        assert base64.b64encode(f"alice:{password}".encode()).decode() not in text
    assert f"url:{srv.url}|" in j.signature()
    # a malformed URL with credentials: the error does not show them either
    with pytest.raises(ParameterError) as bad:
        tm.OpenAIBackend("m", base_url=f"http://alice:{password}@host:notaport/v1")
    assert password not in str(bad.value) and "--base-url" in str(bad.value)


@pytest.mark.parametrize("secret, text, want", [
    # whole tokens only: a key inside a longer token is left alone
    ("sk-abc", "key sk-abc is wrong; sk-abcdef is another", "key *** is wrong; sk-abcdef is another"),
    ("sk-abc", "Bearer sk-abc.", "Bearer ***."),                       # sentence end
    ("sk-abc", '{"auth": "Bearer sk-abc"}', '{"auth": "Bearer ***"}'),
    ("sk-abc", "xsk-abc sk-abc_1 sk-abc.v2", "xsk-abc sk-abc_1 sk-abc.v2"),
    # short keys: substring replacement would have eaten the status code
    ("1", "HTTP 401: key 1 rejected", "HTTP 401: key *** rejected"),
    ("40", "HTTP 401 (40 ms)", "HTTP 401 (*** ms)"),
    # URL user info is scrubbed whatever the secrets
    ("zzz", "at https://bob:hunter2@example.org/v1", "at https://***@example.org/v1"),
])
def test_the_api_key_is_redacted_by_substring(secret, text, want):
    """Issue 18.1: the key was replaced with str.replace, so a short key mangled every message
    (``HTTP 4***``) and told the reader where the key's characters were."""
    assert redact(text, [secret]) == want


def test_a_short_api_key_echoed_in_an_error_is_redacted_as_a_token(tmp_path, monkeypatch):
    short = "k9"
    monkeypatch.setenv(KEY_ENV, short)
    with ScriptedServer(api_key="other") as srv:
        j = tm.LLMJudge("a", backend=_http_backend(srv.url), template="{target}",
                        cache_dir=False)
        with pytest.raises(JudgeRequestError) as info:
            j.run(["[[good]] k9k9 xk9"])
    msg = str(info.value)
    assert "Incorrect API key provided: Bearer ***" in msg and "HTTP 401" in msg
    assert "(set: yes)" in msg


# ----------------------------------------------------------------------------- cache errors (issue 18.7)


class _DiskFullOnWrite:
    """A sqlite3 connection whose INSERTs fail as on a full disk."""

    def __init__(self, con):
        self._con = con

    def execute(self, sql, *args):
        if sql.lstrip().upper().startswith("INSERT"):
            raise sqlite3.OperationalError("database or disk is full")
        return self._con.execute(sql, *args)

    def __enter__(self):
        self._con.__enter__()
        return self

    def __exit__(self, *exc):
        return self._con.__exit__(*exc)

    def close(self):
        self._con.close()


def test_judge_cache_on_a_full_disk_or_read_only_folder_gives_a_traceback(server, files, tmp_path,
                                                                           monkeypatch):
    """Issue 18.7: sqlite3 errors escaped as tracebacks; they are one line naming the cache file
    and the options that choose another folder."""
    # a folder that cannot exist (under a regular file: blocks writes even for root)
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x")
    with pytest.raises(ParameterError, match=r"judge cache .*plain\.txt.sub: cannot create the "
                                             r"folder .*--cache DIR .*--no-cache"):
        tm.ResponseCache(blocker / "sub")
    # the database cannot be opened (sqlite3.connect fails as on a full disk)
    real_connect = sqlite3.connect

    def no_space(*args, **kwargs):
        raise sqlite3.OperationalError("disk is full")

    monkeypatch.setattr(sqlite3, "connect", no_space)
    with pytest.raises(ParameterError) as info:
        tm.ResponseCache(tmp_path / "c1")
    msg = str(info.value)
    assert "\n" not in msg and str(tmp_path / "c1" / "judge.sqlite") in msg
    assert "cannot open or create the database (disk is full)" in msg and "--cache DIR" in msg
    # the disk fills during a run: the write of an answer fails
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    cache = tm.ResponseCache(tmp_path / "c2")
    monkeypatch.setattr(sqlite3, "connect",
                        lambda *a, **k: _DiskFullOnWrite(real_connect(*a, **k)))
    j = _judge(server, "full-disk", cache_dir=cache)
    with pytest.raises(ParameterError, match=r"judge cache .*c2.judge\.sqlite: cannot write a "
                                             r"response \(database or disk is full\); .*--cache "
                                             r"DIR"):
        j.run([j.prompt("[[good]] full disk")])
    assert len(cache) == 0                                     # reads still work
    # the command: exit 2 and one line, no traceback
    data, texts, aspect = files
    res = CliRunner().invoke(main, [
        "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "full-disk-cli",
        "--backend", "openai", "--model", "scripted", "--base-url", server.url,
        "--api-key-env", KEY_ENV, "--timeout", "5", "--cache", str(tmp_path / "c3")])
    assert res.exit_code == 2, res.output
    assert "metaeval: error: judge cache " in res.output and "Traceback" not in res.output
    assert "database or disk is full" in res.output and "--cache DIR" in res.output
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    res = CliRunner().invoke(main, [
        "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "x",
        "--backend", "openai", "--model", "scripted", "--base-url", server.url,
        "--api-key-env", KEY_ENV, "--cache", str(blocker / "sub")])
    assert res.exit_code == 2 and "cannot create the folder" in res.output, res.output


# ----------------------------------------------------------------------------- retries, logging (issue 17.5)


class _Clock:
    """Records the waits instead of sleeping."""

    def __init__(self):
        self.waits = []

    def sleep(self, seconds, cancel=None):
        self.waits.append(seconds)
        return False


def test_retries_back_off_exponentially_with_seeded_jitter(server, caplog):
    clock = _Clock()
    be = tm.OpenAIBackend("scripted", base_url=server.url, timeout=5, max_retries=4, backoff=1.0,
                          max_backoff=3.0, jitter=0.5, rng=7, clock=clock, api_key_env=KEY_ENV)
    j = tm.LLMJudge("jitter", backend=be, template="{target}", cache_dir=False)
    with caplog.at_level(logging.WARNING, logger="metaeval.judge"):
        with pytest.raises(JudgeRequestError, match="gave up after 5 attempts"):
            j.run(["[[always500]] jitter"])
    # documented: min(max_backoff, backoff * 2**k) * (1 - jitter * u_k), u_k from default_rng(7)
    u = np.random.default_rng(7).random(4)
    want = [min(3.0, 2.0 ** k) * (1 - 0.5 * u[k]) for k in range(4)]
    np.testing.assert_allclose(clock.waits, want, rtol=0, atol=0)
    assert len(_served(server, "[[always500]] jitter")) == 5
    # each retry is logged on the "metaeval.judge" logger, and the give-up too
    retries = [r for r in caplog.records if r.name == "metaeval.judge" and "retrying" in r.message]
    assert len(retries) == 4 and all(r.levelno == logging.WARNING for r in retries)
    assert "attempt 1 failed (HTTP 500" in retries[0].message
    # a failure for good is raised, not logged as well; with on_error="nan" it is logged
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="metaeval.judge"):
        tm.LLMJudge("jitter", backend=be, template="{target}", cache_dir=False,
                    on_error="nan").run(["[[always500]] jitter"])
    assert [r.message for r in caplog.records if "recorded as NaN" in r.message] == [
        "request failed for good, recorded as NaN (on_error='nan'): " + str(
            server.url) + "/chat/completions: gave up after 5 attempts (max_retries=4); last "
        "error: HTTP 500: {\"error\": {\"message\": \"down\"}}"]
    # jitter=0: exactly the exponential sequence
    clock0 = _Clock()
    be0 = tm.OpenAIBackend("scripted", base_url=server.url, timeout=5, max_retries=3, backoff=0.5,
                           max_backoff=1.5, jitter=0, clock=clock0, api_key_env=KEY_ENV)
    with pytest.raises(JudgeRequestError):
        tm.LLMJudge("jitter", backend=be0, template="{target}", cache_dir=False).run(
            ["[[always500]] nojitter"])
    assert clock0.waits == [0.5, 1.0, 1.5]
    with pytest.raises(ParameterError, match=r"jitter=1\.5 must be in \[0, 1\]"):
        tm.OpenAIBackend("m", base_url=server.url, jitter=1.5)


def test_retry_only_429_5xx_and_network_errors_and_honour_retry_after(server):
    clock = _Clock()
    be = tm.OpenAIBackend("scripted", base_url=server.url, timeout=5, max_retries=3, backoff=0.01,
                          max_backoff=60.0, clock=clock, api_key_env=KEY_ENV)
    j = tm.LLMJudge("retry-policy", backend=be, template="{target}", cache_dir=False)
    # 408 is a 4xx other than 429: not retried (it was, before issue 17.5)
    with pytest.raises(JudgeRequestError, match=r"HTTP 408 \(not retried\)"):
        j.run(["[[r408]]"])
    assert len(_served(server, "[[r408]]")) == 1 and clock.waits == []
    # Retry-After in seconds: exactly that wait, no jitter
    assert j.run(["[[wait2]]"]).ratings[0, 0] == 2.0
    assert clock.waits == [2.0]
    # Retry-After as an HTTP date 30 s ahead (one-second resolution)
    assert j.run(["[[waitdate]]"]).ratings[0, 0] == 2.0
    assert 28.0 <= clock.waits[1] <= 30.0
    # Retry-After beyond max_backoff: give up at once rather than retry before the server allows
    with pytest.raises(JudgeRequestError, match=r"asks to wait 90 s .*more than max_backoff=60 s; "
                                                r"gave up after 1 attempts \(raise --max-backoff"):
        j.run(["[[wait90]]"])
    assert len(_served(server, "[[wait90]]")) == 1 and len(clock.waits) == 2
    # a refused connection is retried
    with RecordingServer(lambda h, e: None) as dead:
        url = dead.url
    clock2 = _Clock()
    be2 = tm.OpenAIBackend("m", base_url=url, timeout=2, max_retries=2, backoff=0.01, jitter=0,
                           clock=clock2, api_key_env=KEY_ENV)
    with pytest.raises(JudgeRequestError, match=r"gave up after 3 attempts.*ConnectionRefused"):
        tm.LLMJudge("a", backend=be2, template="{target}", cache_dir=False).run(["x"])
    assert clock2.waits == [0.01, 0.02]


def test_openai_base_url_is_honoured_when_no_base_url_is_given(server, files, tmp_path,
                                                               monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    be = tm.OpenAIBackend("scripted", api_key_env=KEY_ENV)
    assert be.base_url == server.url and be.base_url_source == "$OPENAI_BASE_URL"
    # an explicit base_url wins over the variable
    assert tm.OpenAIBackend("m", base_url="http://127.0.0.1:9/v1").base_url == \
        "http://127.0.0.1:9/v1"
    # the shortcut and the command read it too
    j = tm.LLMJudge("env-url", backend="openai", model="scripted", template="{target}",
                    cache_dir=False)
    assert j.backend.base_url == server.url and f"url:{server.url}|" in j.signature()
    data, texts, aspect = files
    res = CliRunner().invoke(main, [
        "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "env-url-cli",
        "--backend", "openai", "--model", "scripted", "--api-key-env", KEY_ENV, "--no-cache",
        "--format", "json"])
    assert res.exit_code == 0, res.output
    assert server.url in json.loads(res.output)["signature"]
    assert any("env-url-cli" in e["prompt"] for e in server.requests())
    # unset or empty: the default endpoint
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    assert tm.OpenAIBackend("m").base_url == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "ftp://example.org")
    with pytest.raises(ParameterError, match=r"\$OPENAI_BASE_URL='ftp://example.org' must be an "
                                             r"http:// or https:// URL"):
        tm.OpenAIBackend("m")


def test_cache_rerun_costs_nothing_and_keys_follow_the_request(server, tmp_path):
    j = _judge(server, "cache", samples=2, temperature=1.0, cache_dir=tmp_path)
    prompts = [j.prompt("[[vary]] one"), j.prompt("[[good]] two")]
    first = j.run(prompts)
    n_log = len(server.requests())
    assert first.n_requested == 4
    # the same run, and runs that only change the parsing or aggregation, ask nothing
    for kw in ({}, {"aggregate": "median"}, {"pattern": r"Rating: (\d)"},
               {"on_failure": "random"}, {"scale": "1-10"}):
        again = _judge(server, "cache", samples=2, temperature=1.0, cache_dir=tmp_path, **kw)
        run = again.run(prompts)
        assert run.n_cached == 4 and run.n_requested == 0, kw
    assert len(server.requests()) == n_log
    np.testing.assert_array_equal(j.run(prompts).values, first.values)
    # one more sample: only sample 2 of each prompt is asked, with its own seed
    three = _judge(server, "cache", samples=3, temperature=1.0, cache_dir=tmp_path).run(prompts)
    assert three.n_cached == 4 and three.n_requested == 2
    new = server.requests()[n_log:]
    assert sorted((e["prompt"], e["seed"]) for e in new) == sorted(
        (p, _seed(0, p, 2)) for p in prompts)
    np.testing.assert_array_equal(three.values[:2], first.values)
    # what the request depends on is in the key: temperature, model, seed
    for kw in ({"temperature": 0.7}, {"model": "other"}, {"seed": 1}):
        other = _judge(server, "cache", samples=2, cache_dir=tmp_path,
                       **{"temperature": 1.0, **kw}).run(prompts)
        assert other.n_requested == 4 and other.n_cached == 0, kw
    # the raw body is stored as received, with a readable request description
    entries = tm.ResponseCache(tmp_path).entries()
    req, body = entries[0][1], json.loads(entries[0][2])
    served = next(e for e in server.requests() if e["prompt"] == req["messages"][0]["content"]
                  and e["seed"] == req["params"]["seed"])
    assert body["choices"][0]["message"]["content"] == served["content"]
    assert req["backend"]["url"] == server.url and req["params"]["temperature"] == 1.0


def test_concurrency_does_not_change_the_answers(server, tmp_path):
    prompts = [f"[[vary]] item {k}" for k in range(6)]
    runs = []
    for conc in (1, 4):
        j = _judge(server, "conc", samples=3, temperature=1.0, concurrency=conc,
                   cache_dir=tmp_path / str(conc))
        runs.append(j.run([j.prompt(p) for p in prompts]))
        want = np.array([[1 + _seed(0, j.prompt(p), s) % 5 for p in prompts] for s in range(3)])
        np.testing.assert_array_equal(runs[-1].values, want)
    np.testing.assert_array_equal(runs[0].values, runs[1].values)


KILLED_RUN = textwrap.dedent("""
    import json, sys
    import metaeval.textmetrics as tm
    url, cache, prompts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    be = tm.OpenAIBackend("scripted", base_url=url, concurrency=2, timeout=5, backoff=0.01,
                          max_retries=1, api_key_env="METAEVAL_TEST_KEY")
    j = tm.LLMJudge("resume", backend=be, template="{aspect}\\n{target}", samples=3,
                    temperature=1.0, cache_dir=cache)
    # an HTTP judge imports no deep-learning library
    print(sorted(m for m in ("torch", "transformers") if m in sys.modules), flush=True)
    j.run([j.prompt(p) for p in prompts])
    print("finished")
""")


def test_a_run_killed_half_way_resumes_without_repeating_a_request(tmp_path):
    targets = [f"[[vary]] #{k}" for k in range(8)] + ["[[good]] #8", "[[malformed]] #9",
                                                      "[[oos]] #10", "[[slash]] #11"]
    cache = tmp_path / "cache"
    with ScriptedServer(delay=0.05) as srv:
        proc = subprocess.Popen([sys.executable, "-c", KILLED_RUN, srv.url, str(cache),
                                 json.dumps(targets)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (cache / "judge.sqlite").exists() and len(tm.ResponseCache(cache)) >= 8:
                break
            time.sleep(0.01)
        proc.kill()
        proc.wait()
        t_kill = time.monotonic()
        out = proc.stdout.read().decode()
        assert "finished" not in out, "the run ended before it could be killed"
        assert out.splitlines()[0] == "[]"             # no torch, no transformers
        cached = {(r["messages"][0]["content"], r["params"]["seed"])
                  for _, r, _ in tm.ResponseCache(cache).entries()}
        assert 8 <= len(cached) < 36
        # resume, in this process, with the same configuration
        be = tm.OpenAIBackend("scripted", base_url=srv.url, concurrency=2, timeout=5,
                              backoff=0.01, max_retries=1, api_key_env=KEY_ENV)
        j = tm.LLMJudge("resume", backend=be, template="{aspect}\n{target}", samples=3,
                        temperature=1.0, cache_dir=cache)
        prompts = [j.prompt(t) for t in targets]
        with pytest.warns(ParseFailureWarning):
            resumed = j.run(prompts)
        everything = {(p, _seed(0, p, s)) for p in prompts for s in range(3)}
        after = Counter((e["prompt"], e["seed"]) for e in srv.requests() if e["t"] > t_kill)
        assert not set(after) & cached                 # nothing cached was asked again
        assert set(after) == everything - cached       # everything else was asked ...
        assert set(after.values()) == {1}              # ... once
        assert resumed.n_cached == len(cached) and resumed.n_requested == 36 - len(cached)
        # the same numbers as an uninterrupted run
        with pytest.warns(ParseFailureWarning):
            fresh = j.run(prompts, cache_dir=tmp_path / "fresh")
        np.testing.assert_array_equal(resumed.values, fresh.values)
        np.testing.assert_array_equal(resumed.status, fresh.status)
        np.testing.assert_array_equal(resumed.scores, fresh.scores)
        # and a third run costs nothing
        n_log = len(srv.requests())
        with pytest.warns(ParseFailureWarning):
            third = j.run(prompts)
        assert third.n_cached == 36 and len(srv.requests()) == n_log


def test_geval_weighted_score_from_top_logprobs(server):
    j = _judge(server, "geval", aggregate="geval", cache_dir=False)
    run = j.run([j.prompt("[[geval]]")])
    body = _served(server, j.prompt("[[geval]]"))[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    # hand computation from the script's alternatives of the token " 4":
    # p(4) = 0.5 (" 4") + 0.05 ("4"), p(3) = 0.3, p(5) = 0.1; " six" is not a scale value
    assert dict(GEVAL_ALTS) == {" 4": 0.5, " 3": 0.3, " 5": 0.1, " six": 0.05, "4": 0.05}
    want = (4 * 0.55 + 3 * 0.3 + 5 * 0.1) / (0.55 + 0.3 + 0.1)
    assert run.values[0, 0] == pytest.approx(want, rel=1e-12)
    assert run.mass[0, 0] == pytest.approx(0.95, rel=1e-12)
    assert run.ratings[0, 0] == 4.0 and run.scores[0] == pytest.approx(want, rel=1e-12)
    # a rating split over two tokens (" 10" + "0"), or no logprobs at all: NaN, counted
    j100 = _judge(server, "geval", aggregate="geval", scale="0-100", cache_dir=False)
    with pytest.warns(MissingLogprobsWarning, match="2 of 2 judge answers"):
        run = j100.run([j100.prompt("[[geval100]]"), j100.prompt("[[good]]")])
    assert run.ratings[0].tolist() == [100.0, 4.0]
    assert run.status[0].tolist() == ["no_logprobs", "no_logprobs"]
    assert np.isnan(run.values).all()


def test_random_fill_is_explicit_seeded_and_counted(server):
    j = _judge(server, "fill", samples=2, temperature=1.0, on_failure="random", seed=7,
               cache_dir=False)
    prompts = [j.prompt("[[malformed]]"), j.prompt("[[oos]]"), j.prompt("[[good]]")]
    with pytest.warns(ParseFailureWarning, match="4 filled with a random rating"):
        run = j.run(prompts)
    for k in range(2):
        for s in range(2):
            want = np.random.default_rng([_seed(7, prompts[k], s), 1]).integers(1, 6)
            assert run.values[s, k] == want and run.filled[s, k]
            assert math.isnan(run.ratings[s, k])         # the parsed rating stays NaN
    assert run.status[:, 0].tolist() == ["unparseable"] * 2
    assert run.status[:, 1].tolist() == ["out_of_scale"] * 2
    assert run.values[:, 2].tolist() == [4.0, 4.0] and not run.filled[:, 2].any()


# ----------------------------------------------------------------------------- datasets


def _dataset(directive="vary"):
    systems, inputs = ["A", "B", "C"], ["x", "y"]
    human = np.array([[1.0, 2.0], [3.0, 5.0], [4.0, 4.0]])
    rows = [{"system": s, "input": i, "source": f"source of {i}",
             "hypothesis": None if (s, i) == ("C", "y") else f"[[{directive}]] {s} {i}"}
            for s in systems for i in inputs]
    return Dataset.from_arrays({"human": human}, human="human", systems=systems, inputs=inputs,
                               texts=pd.DataFrame(rows), name="toy")


def _icc_c1(x):
    """ICC(C,1) of an (n subjects x k runs) table from the two-way ANOVA (McGraw and Wong 1996)."""
    n, k = x.shape
    grand = x.mean()
    ssr = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ssc = n * ((x.mean(axis=0) - grand) ** 2).sum()
    sse = ((x - grand) ** 2).sum() - ssr - ssc
    msr, mse = ssr / (n - 1), sse / ((n - 1) * (k - 1))
    return (msr - mse) / (msr + (k - 1) * mse)


def test_judge_a_dataset_with_the_paper_prompt_then_correlate_and_stability(server, tmp_path):
    from metaeval import correlate
    from metaeval.reliability import stability

    ds = _dataset()
    be = tm.OpenAIBackend("scripted", base_url=server.url, timeout=5, api_key_env=KEY_ENV)
    j = tm.get_metric("llm_judge", aspect="dataset-loop", backend=be, samples=3,
                      temperature=1.0, cache_dir=tmp_path, source_des="Article",
                      target_des="Summary", task="a summary")
    res = tm.judge(ds, j)
    assert res.samples.shape == (3, 3, 2) and res.scores.shape == (3, 2)
    # the prompts the server saw are Table 4 filled in
    for si, s in enumerate(ds.systems):
        for ii, i in enumerate(ds.inputs):
            if (s, i) == ("C", "y"):
                assert (res.status[:, si, ii] == "missing").all()
                assert math.isnan(res.scores[si, ii])
                continue
            prompt = PAPER_TABLE4.format(task="a summary", scale="1 to 5", aspect="dataset-loop",
                                         source_des="Article", source=f"source of {i}",
                                         target_des="Summary", target=f"[[vary]] {s} {i}")
            assert len(_served(server, prompt)) == 3
            want = [1 + _seed(0, prompt, k) % 5 for k in range(3)]
            assert res.samples[:, si, ii].tolist() == want
            assert res.scores[si, ii] == np.mean(want)
    assert res.n_missing == 3 and res.n_nan_cells == 1 and res.n_requests == 15
    assert res.signature.startswith("seed:0|metric:llm_judge|backend:openai|model:scripted|")
    assert "|scale:1-5|samples:3|temp:1.0|agg:mean|" in res.signature
    frame = res.to_frame()
    assert len(frame) == 18 and set(frame.columns) >= {"system", "input", "sample", "value",
                                                       "rating", "status", "answer"}
    # the samples become runs of the metric
    ds2 = res.attach(ds)
    assert ds2.ratings("llm_judge").shape == (3, 3, 2)
    assert ds2.rater_labels("llm_judge") == ("sample0", "sample1", "sample2")
    np.testing.assert_array_equal(ds2.scores("llm_judge"), res.scores)
    # stability across samples = ICC(C,1) of the systems x samples table of system means
    # (cell C,y is missing in every run: C's mean is over x only)
    st = stability(ds2, "llm_judge", method="icc_c1")[0]
    means = np.array([[np.nanmean(res.samples[k, si]) for k in range(3)] for si in range(3)])
    assert st.n_runs == 3 and st.statistic == pytest.approx(_icc_c1(means), abs=1e-12)
    # correlation with the human scores, system level: Pearson of the system means over the
    # matched cells (levels.py: pairwise deletion, so C's human mean is over x only)
    c = correlate(ds2, "human", metrics=["llm_judge"], level="system", method="pearson",
                  ci="none", pvalue="none").get("llm_judge")
    h = np.nanmean(np.where(np.isnan(res.scores), np.nan, ds.scores("human")), axis=1)
    assert h.tolist() == [1.5, 4.0, 4.0]
    want = np.corrcoef(h, np.nanmean(res.scores, axis=1))[0, 1]
    assert c.statistic == pytest.approx(want, abs=1e-12)
    # the median is added as its own column; the same answers come from the cache
    med = tm.judge(ds, tm.LLMJudge("dataset-loop", backend=be, samples=3, temperature=1.0,
                                   aggregate="median", cache_dir=tmp_path, source_des="Article",
                                   target_des="Summary", task="a summary"))
    assert med.n_requested == 0
    ds3 = med.attach(ds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(ds3.scores("llm_judge_median"),
                                      np.nanmedian(med.samples, axis=0))
    with pytest.raises(DataError, match="already exist"):
        res.attach(ds2)


def test_the_adapter_works_in_textmetrics_score(server, tmp_path):
    ds = _dataset()
    j = _judge(server, "engine", samples=2, temperature=1.0, cache_dir=tmp_path)
    j = tm.LLMJudge("engine", backend=j.backend, template=tm.TABLE4_TEMPLATE, samples=2,
                    temperature=1.0, cache_dir=tmp_path)
    res = tm.judge(ds, j)
    via = tm.score(ds, j)
    np.testing.assert_array_equal(via["llm_judge"], res.scores)
    assert via.signatures["llm_judge"] == res.signature
    assert "llm_judge" in tm.list_metrics()["name"].tolist()


def test_engine_score_cache_never_keeps_failed_or_stale_judge_scores(server, tmp_path):
    """Regression (review): through tm.score, a failed request (on_error="nan") was stored in
    the engine's ScoreCache as NaN and never asked again, and a changed extra_body reused the
    old scores.  The judge's own response cache (keyed by the backend's whole identity, never
    holding failures) is the only cache of judge answers."""
    ds = Dataset.from_arrays({"h": np.ones((1, 2))}, human="h", systems=["A"], inputs=["x", "y"],
                             texts=pd.DataFrame({"system": ["A", "A"], "input": ["x", "y"],
                                                 "source": ["s", "s"],
                                                 "hypothesis": ["[[always500]]", "[[good]]"]}))
    j = _judge(server, "engine-cache", max_retries=1, cache_dir=tmp_path / "resp", on_error="nan")
    down = j.prompt("[[always500]]")
    tm.score(ds, j, cache_dir=tmp_path / "scores")
    asked = len(_served(server, down))
    assert asked == 2                                              # 1 + max_retries
    tm.score(ds, j, cache_dir=tmp_path / "scores")
    assert len(_served(server, down)) == 2 * asked                 # asked again, not a cached NaN
    be = tm.OpenAIBackend("scripted", base_url=server.url, timeout=0.3, backoff=0.01,
                          max_backoff=0.05, max_retries=1, api_key_env=KEY_ENV,
                          extra_body={"top_p": 0.1})
    j2 = tm.LLMJudge("engine-cache", backend=be, template="{aspect}\n{target}",
                     cache_dir=tmp_path / "resp", on_error="nan")
    good = j2.prompt("[[good]]")
    before = len(_served(server, good))
    res = tm.score(ds, j2, cache_dir=tmp_path / "scores")
    assert len(_served(server, good)) == before + 1                # new options: asked anew
    assert "|extra:" in res.signatures["llm_judge"] and "|extra:" not in j.signature()


def test_default_cache_folder_comes_from_the_environment(server, tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "here"))
    assert tm.default_cache_dir() == tmp_path / "here"
    j = _judge(server, "default-cache")
    j.run([j.prompt("[[good]]")])
    assert len(tm.ResponseCache(tmp_path / "here")) == 1
    monkeypatch.delenv("METAEVAL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tm.default_cache_dir() == tmp_path / "xdg" / "metaeval"


# ----------------------------------------------------------------------------- pairwise (issue 17.1)

#: Pairwise fixture: the hypothesis of each (system, input); the scripted model prefers the
#: higher quality:N, says tie when equal, and cannot compare when a text has no quality:N.
PAIR_TEXTS = {("S1", "i1"): "quality:3 first", ("S2", "i1"): "quality:1 second",
              ("S3", "i1"): "quality:3 first",               # same text as S1: a tie
              ("S1", "i2"): "quality:2 alpha", ("S2", "i2"): None,  # no text
              ("S3", "i2"): "no score here"}                  # the model cannot compare


def _pair_dataset():
    systems, inputs = ["S1", "S2", "S3"], ["i1", "i2"]
    rows = [{"system": s, "input": i, "source": f"source of {i}",
             "hypothesis": PAIR_TEXTS[(s, i)]} for s in systems for i in inputs]
    return Dataset.from_arrays({"h": np.ones((3, 2))}, human="h", systems=systems, inputs=inputs,
                               texts=pd.DataFrame(rows))


def _quality(text):
    return None if text is None or "quality:" not in text else int(text.split(":")[1].split()[0])


def test_pairwise_judging_in_both_orders_with_cache_reuse(server, tmp_path):
    ds = _pair_dataset()
    j = _judge(server, "[[pair]] which summary is more coherent", cache_dir=tmp_path)
    j = tm.LLMJudge("[[pair]] which summary is more coherent", backend=j.backend,
                    cache_dir=tmp_path, name="coh-judge")              # the default pair prompt
    n_log = len(server.requests())
    with pytest.warns(ParseFailureWarning, match=r"2 of 8 pairwise judge answers have no "
                                                 r"verdict"):
        frame = tm.judge_pairs(ds, j)
    assert list(frame.columns) == ["input", "system_a", "system_b", "judge", "order",
                                   "preference", "raw"]
    assert frame["preference"].dtype == float
    # rows: input x pair (S1-S2, S1-S3, S2-S3) x order (ab, ba)
    want_keys = [(i, a, b, o) for i in ("i1", "i2") for a, b in
                 (("S1", "S2"), ("S1", "S3"), ("S2", "S3")) for o in ("ab", "ba")]
    assert list(frame[["input", "system_a", "system_b", "order"]].itertuples(
        index=False, name=None)) == want_keys
    assert set(frame["judge"]) == {"coh-judge"}
    # expected by hand from the fixture: the model prefers the higher quality in either order,
    # and the preference is stated for the pair as given (1 = system_a better)
    for row in frame.itertuples(index=False):
        ta, tb = PAIR_TEXTS[(row.system_a, row.input)], PAIR_TEXTS[(row.system_b, row.input)]
        qa, qb = _quality(ta), _quality(tb)
        if ta is None or tb is None:
            assert math.isnan(row.preference) and row.raw is None, row
        elif qa is None or qb is None:
            assert math.isnan(row.preference) and row.raw == "I cannot compare these.", row
        else:
            want = 1.0 if qa > qb else 0.0 if qa < qb else 0.5
            assert row.preference == want, row
            shown_first = qa if row.order == "ab" else qb
            shown_second = qb if row.order == "ab" else qa
            verdict = ("A" if shown_first > shown_second else "B" if shown_first < shown_second
                       else "tie")
            assert row.raw == f"Both are fine.\nPreference: {verdict}", row
    # the prompts: system_a's text is shown as A in "ab" and as B in "ba"
    new = server.requests()[n_log:]
    ab = j.pairwise_prompt("quality:3 first", "quality:1 second", "source of i1")
    ba = j.pairwise_prompt("quality:1 second", "quality:3 first", "source of i1")
    assert ab.index("quality:3 first") < ab.index("quality:1 second")
    assert "Target text A:\nquality:3 first" in ab and "Target text B:\nquality:3 first" in ba
    # S1 and S3 wrote the same text on i1, so S1-S2 "ab" and S2-S3 "ba" show the same prompt; the
    # order is part of the cache key, so each is its own request
    assert [e["prompt"] for e in new].count(ab) == 2 and [e["prompt"] for e in new].count(ba) == 2
    # each request carries its own documented seed
    assert {e["seed"] for e in new if e["prompt"] == ab} == {_seed(0, ab, 0)}
    # identical outputs (S1, S3 on i1): the two orders give the same prompt, still asked twice
    same = j.pairwise_prompt("quality:3 first", "quality:3 first", "source of i1")
    assert [e["prompt"] for e in new].count(same) == 2
    # 8 requests: 12 rows minus the 4 rows of the two pairs with S2 on i2 (no text)
    counts = frame.attrs["counts"]
    assert counts == {"n_requests": 8, "n_cached": 0, "n_requested": 8, "n_failed": 0,
                      "n_retries": 0, "n_unparseable": 2, "n_missing": 4}
    assert len(new) == 8
    sig = frame.attrs["signature"]
    assert "metric:llm_judge_pairwise|backend:openai|model:scripted|" in sig and "seed:0" in sig
    assert "|orders:ab+ba|" in sig and "|parse:preference|" in sig and "|ctx:source|" in sig
    # run again: everything from the cache, nothing asked, the same table
    with pytest.warns(ParseFailureWarning):
        again = tm.judge_pairs(ds, j)
    assert len(server.requests()) == n_log + 8
    assert again.attrs["counts"]["n_cached"] == 8 and again.attrs["counts"]["n_requested"] == 0
    pd.testing.assert_frame_equal(again, frame)
    # a run that stopped after some pairs resumes: only the new pairs are asked
    fresh = tmp_path / "resume"
    first = tm.judge_pairs(ds, j, pairs=[("S1", "S2")], cache_dir=fresh)
    assert first.attrs["counts"]["n_requested"] == 2              # S1-S2 on i1, both orders
    with pytest.warns(ParseFailureWarning):
        rest = tm.judge_pairs(ds, j, cache_dir=fresh)
    assert rest.attrs["counts"]["n_cached"] == 2 and rest.attrs["counts"]["n_requested"] == 6
    pd.testing.assert_frame_equal(rest, frame)
    # pointwise answers in the same cache are other keys
    point = tm.LLMJudge("[[pair]] which summary is more coherent", backend=j.backend,
                        cache_dir=tmp_path, template="{aspect}\n{target}")
    with pytest.warns(ParseFailureWarning):
        assert point.run(["quality:3 first"]).n_cached == 0


def test_pairwise_position_bias_shows_as_disagreement_between_orders(server):
    ds = _pair_dataset()
    j = _judge(server, "bias", cache_dir=False)
    j = tm.LLMJudge("[[pairbias]]", backend=j.backend, cache_dir=False,
                    pairwise_template="{aspect}\nA: {output_a}\nB: {output_b}")
    frame = tm.judge_pairs(ds, j, pairs=[("S2", "S1")])
    # the model always answers A, i.e. the output shown first: system_a in "ab", system_b in "ba"
    assert frame["preference"].tolist()[:2] == [1.0, 0.0]
    assert frame["raw"][0] == "The first one reads better.\n**Preference:** A"
    assert frame["system_a"].tolist() == ["S2"] * 4 and frame["system_b"].tolist() == ["S1"] * 4
    # i2 has no text for S2: no request, NaN
    assert frame["preference"][2:].isna().all() and frame["raw"][2:].isna().all()
    assert frame.attrs["counts"]["n_requests"] == 2
    assert "|prompt:" in frame.attrs["signature"] and "ctx:source" in frame.attrs["signature"]
    # a request that fails for good: NaN with on_error="nan", an error with the default
    bad = tm.LLMJudge("[[always500]]", backend=j.backend, cache_dir=False, on_error="nan",
                      pairwise_template="{aspect}\nA: {output_a}\nB: {output_b}")
    failed = tm.judge_pairs(ds, bad, pairs=[("S1", "S3")])
    assert failed["preference"].isna().all() and failed["raw"].isna().all()
    assert failed.attrs["counts"]["n_failed"] == 4        # 2 inputs x 2 orders
    with pytest.raises(JudgeRequestError, match="gave up after 4 attempts"):
        tm.judge_pairs(ds, tm.LLMJudge("[[always500]]", backend=j.backend, cache_dir=False,
                                       pairwise_template="{aspect}{output_a}{output_b}"),
                       pairs=[("S1", "S3")])


def test_pairwise_options_are_validated(server):
    ds = _pair_dataset()
    be = _judge(server, "v").backend
    j = tm.LLMJudge("v", backend=be, cache_dir=False)
    with pytest.raises(DataError, match=r"unknown system\(s\) 'S9'; the dataset has 'S1', 'S2', "
                                        r"'S3'"):
        tm.judge_pairs(ds, j, pairs=[("S1", "S9")])
    with pytest.raises(DataError, match="compares a system with itself"):
        tm.judge_pairs(ds, j, pairs=[("S1", "S1")])
    with pytest.raises(DataError, match=r"given more than once \(either order\)"):
        tm.judge_pairs(ds, j, pairs=[("S1", "S2"), ("S2", "S1")])
    with pytest.raises(ParameterError, match=r"samples=2: pairwise judging asks once per order"):
        tm.judge_pairs(ds, tm.LLMJudge("v", backend=be, samples=2, cache_dir=False))
    with pytest.raises(ParameterError, match=r"pairwise_template has no \{output_b\} field"):
        tm.LLMJudge("v", backend=be, pairwise_template="{output_a}")
    with pytest.raises(ParameterError, match=r"unknown field\(s\) \{target\}"):
        tm.LLMJudge("v", backend=be, pairwise_template="{target}{output_a}{output_b}")
    with pytest.raises(ParameterError, match="exactly one capturing group"):
        tm.LLMJudge("v", backend=be, preference_pattern=r"(x)(y)")
    # a user pattern for another answer format
    assert tm.parse_preference("Winner: [[B]]", r"Winner: \[\[(A|B|tie)\]\]") == "B"
    assert tm.parse_preference("Preference: A\nOn reflection, Preference: B") == "B"
    assert tm.parse_preference("Preference: Alpha") is None


# ----------------------------------------------------------------------------- local backend


@pytest.fixture(scope="module")
def tiny_gpt(tmp_path_factory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import ByteLevelBPETokenizer

    torch.set_num_threads(1)
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    corpus = ["Rating: 1 2 3 4 5 6 7 8 9 10 11 25 50 99 100", "The summary is coherent.",
              "the cat sat on the mat", "Rate the fluency of this text"] * 4
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=300, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>"])
    special = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}
    folder = tmp_path_factory.mktemp("tiny_judge") / "gpt2"
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=300, n_positions=256, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
        eos_token_id=2, pad_token_id=1))
    model.save_pretrained(folder)
    transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, **special) \
        .save_pretrained(folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    ref = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    return folder, tok, ref


def test_local_generation_matches_transformers_generate(tiny_gpt, tmp_path):
    import torch

    folder, tok, ref = tiny_gpt
    targets = ["the cat sat on the mat", "The summary is coherent."]
    for temperature in (0.8, 0.0):
        j = tm.LLMJudge("Rate the fluency of this text", backend=tm.LocalBackend(folder),
                        template="{aspect}\n{target}\n", samples=2, temperature=temperature,
                        max_tokens=10, aggregate="geval", cache_dir=tmp_path / str(temperature))
        prompts = [j.prompt(t) for t in targets]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ParseFailureWarning)  # a random model: no ratings
            run = j.run(prompts)
        bodies = {(r["messages"][0]["content"], r["sample"]): json.loads(b)
                  for _, r, b in tm.ResponseCache(tmp_path / str(temperature)).entries()}
        for k, p in enumerate(prompts):
            ids = torch.tensor([tok(p)["input_ids"]])
            for s in range(2):
                torch.manual_seed(_seed(0, p, s))
                kw = ({"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
                      if temperature else {"do_sample": False})
                out = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=10,
                                   pad_token_id=1, **kw)[0, ids.shape[1]:].tolist()
                if 2 in out:
                    out = out[: out.index(2)]
                assert run.answers[s, k] == tok.decode(out, skip_special_tokens=True)
                # stored log-probabilities: a full forward pass over prompt + answer
                content = bodies[(p, s)]["choices"][0]["logprobs"]["content"]
                assert "".join(c["token"] for c in content) == run.answers[s, k]
                full = torch.tensor([ids[0].tolist() + out])
                with torch.inference_mode():
                    logp = torch.log_softmax(ref(full).logits[0].double(), dim=-1)
                for t, c in enumerate(content):
                    pos = ids.shape[1] - 1 + t
                    assert c["logprob"] == pytest.approx(float(logp[pos, out[t]]), abs=1e-5)
                    assert c["top_logprobs"][0]["logprob"] == pytest.approx(
                        float(logp[pos].max()), abs=1e-5)


def test_local_rating_decoding_uses_exact_scale_probabilities(tiny_gpt, tmp_path):
    import torch

    folder, tok, ref = tiny_gpt
    target = "the cat sat on the mat"
    j = tm.LLMJudge("Rate the fluency of this text",
                    backend=tm.LocalBackend(folder, decoding="rating"),
                    template="{aspect}\n{target}\n", scale="0-100", samples=3, temperature=1.0,
                    aggregate="geval", cache_dir=tmp_path)
    prompt = j.prompt(target)
    run = j.run([prompt])
    # slow reference: one unbatched forward pass per value
    base = tok(prompt + "Rating:")["input_ids"]
    texts = [tok.decode([i]) for i in range(300)]
    vocab_digit = np.array([bool(t) and t[0].isdigit() for t in texts])
    want = np.empty(101)
    lengths = []
    for v in range(101):
        cand = tok(" " + str(v), add_special_tokens=False)["input_ids"]
        lengths.append(len(cand))
        with torch.inference_mode():
            logp = torch.log_softmax(ref(torch.tensor([base + cand])).logits[0].double(), -1)
        total = sum(float(logp[len(base) - 1 + t, cand[t]]) for t in range(len(cand)))
        stop = float(torch.logsumexp(logp[len(base) + len(cand) - 1][~torch.from_numpy(
            vocab_digit)], 0))
        want[v] = total + stop
    assert max(lengths) > 1                      # multi-token numbers are covered
    body = json.loads(tm.ResponseCache(tmp_path).entries()[0][2])
    got = np.array([body["scale_logprobs"][str(v)] for v in range(101)])
    np.testing.assert_allclose(got, want, atol=2e-5)
    p = np.exp(want)
    assert p.sum() <= 1.0                        # disjoint answers
    # the drawn ratings: inverse CDF of p renormalised, u = default_rng(request seed).random()
    for s in range(3):
        u = np.random.default_rng(_seed(0, prompt, s)).random()
        cdf = np.cumsum(p / p.sum())
        assert run.ratings[s, 0] == min(int(np.searchsorted(cdf, u, side="right")), 100)
        assert run.answers[s, 0] == f"Rating: {int(run.ratings[s, 0])}"
    # G-Eval: sum v p(v) / sum p(v), the same for every sample (exact on the stored p(v);
    # float32 forward passes against the float64 reference above: rtol 1e-6)
    q = np.exp(got)
    np.testing.assert_allclose(run.values[:, 0], np.sum(np.arange(101) * q) / q.sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(run.values[:, 0], np.sum(np.arange(101) * p) / p.sum(), rtol=1e-6)
    assert run.mass[0, 0] == pytest.approx(p.sum(), rel=1e-4)
    # temperature 0: the most probable value
    j0 = tm.LLMJudge("Rate the fluency of this text",
                     backend=tm.LocalBackend(folder, decoding="rating"),
                     template="{aspect}\n{target}\n", scale="0-100", cache_dir=False)
    assert j0.run([prompt]).ratings[0, 0] == int(np.argmax(want))


def test_local_judge_uses_the_past_key_values_keyword_that_transformers_deprecates(tiny_gpt,
                                                                                     tmp_path):
    """Issue 17.5: transformers 5.x warns (FutureWarning) that ``past_key_values`` goes away in
    5.40 and renames it ``cache``; the local judge passes the keyword ``forward`` declares."""
    folder, _, _ = tiny_gpt
    for decoding in ("generate", "rating"):
        j = tm.LLMJudge("Rate the fluency of this text",
                        backend=tm.LocalBackend(folder, decoding=decoding),
                        template="{aspect}\n{target}\n", max_tokens=4, cache_dir=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            j.run(["the cat sat on the mat"])
        assert not [w for w in caught if "past_key_values" in str(w.message)], decoding


def test_local_backend_errors(tiny_gpt):
    folder, _, _ = tiny_gpt
    with pytest.raises(ParameterError, match="explicit seeds"):
        tm.LLMJudge("a", backend=tm.LocalBackend(folder), seed=None)
    with pytest.raises(ParameterError, match="not a local folder.*never download"):
        tm.LocalBackend("gpt2")
    with pytest.raises(ParameterError, match="decoding='beam'.*'generate', 'rating'"):
        tm.LocalBackend(folder, decoding="beam")
    j = tm.LLMJudge("a", backend="local", model=folder, template="{target}", cache_dir=False)
    with pytest.raises(JudgeRequestError, match="prompt has .* tokens.*at most 256 positions"):
        j.run(["word " * 400])


# ----------------------------------------------------------------------------- the command


@pytest.fixture
def files(tmp_path):
    ds = _dataset()
    rows = [{"system": s, "input": i, "human": float(ds.scores("human")[si, ii])}
            for si, s in enumerate(ds.systems) for ii, i in enumerate(ds.inputs)]
    data = tmp_path / "d.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    texts = tmp_path / "t.jsonl"
    texts.write_text("\n".join(json.dumps(r) for r in ds.texts.to_dict(orient="records")) + "\n")
    aspect = tmp_path / "aspect.txt"
    aspect.write_text("cli-aspect: how coherent the summary is\n")
    return data, texts, aspect


def test_judge_command(server, files, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    data, texts, aspect = files
    out = tmp_path / "judged.csv"
    args = ["judge", str(data), "--texts", str(texts), "--human", "human", "--aspect",
            str(aspect), "--backend", "openai", "--model", "scripted", "--base-url", server.url,
            "--api-key-env", KEY_ENV, "--samples", "2", "--temperature", "1", "--cache",
            str(tmp_path / "c"), "--timeout", "5"]
    res = CliRunner().invoke(main, args + ["--out", str(out)])
    assert res.exit_code == 0, res.output
    assert SECRET not in res.output
    assert "requests and answers" in res.output and "metric:llm_judge" in res.output
    frame = pd.read_csv(out, dtype={"input": str})
    assert len(frame) == 12 and (frame["status"] == "ok").sum() == 10
    # the same answers through the API, from the cache the command filled
    j = tm.LLMJudge("cli-aspect: how coherent the summary is",
                    backend=tm.OpenAIBackend("scripted", base_url=server.url, timeout=5,
                                             api_key_env=KEY_ENV),
                    samples=2, temperature=1.0, cache_dir=tmp_path / "c")
    api = tm.judge(_dataset(), j)
    assert api.n_requested == 0
    np.testing.assert_array_equal(frame["value"].to_numpy(), api.to_frame()["value"].to_numpy())
    res = CliRunner().invoke(main, args + ["--format", "json"])
    got = json.loads(res.output)
    assert got["n_cached"] == 10 and got["n_requested"] == 0 and got["n_missing"] == 2
    res = CliRunner().invoke(main, args + ["--scale", "five"])
    assert res.exit_code == 2 and "scale='five'" in res.output
    res = CliRunner().invoke(main, args + ["--max-inputs", "1", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(io.StringIO(res.output))) == 6      # 3 systems x 1 input x 2 samples
    # retries are logged on stderr as "metaeval: judge: ..." lines, the key never
    rows = pd.read_json(texts, lines=True)
    rows["hypothesis"] = rows["hypothesis"].where(rows["hypothesis"].isna(), "[[r500]] cli log")
    retry_texts = tmp_path / "r.jsonl"
    rows.to_json(retry_texts, orient="records", lines=True)
    res = CliRunner().invoke(main, [a if a != str(texts) else str(retry_texts) for a in args]
                             + ["--no-cache", "--samples", "1", "--max-backoff", "0.05"])
    assert res.exit_code == 0, res.output
    logged = [ln for ln in res.output.splitlines() if ln.startswith("metaeval: judge: ")]
    assert logged and all("attempt" in ln and "retrying in" in ln for ln in logged)
    assert SECRET not in res.output
    # options of the other backend are refused, not ignored (review)
    res = CliRunner().invoke(main, args + ["--decoding", "rating"])
    assert res.exit_code == 2 and "--decoding applies to --backend local, not openai" in res.output


def test_judge_command_pairwise(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    ds = _pair_dataset()
    data = tmp_path / "d.csv"
    pd.DataFrame([{"system": s, "input": i, "h": 1.0} for s in ds.systems
                  for i in ds.inputs]).to_csv(data, index=False)
    texts = tmp_path / "t.jsonl"
    texts.write_text("\n".join(json.dumps(r) for r in ds.texts.to_dict(orient="records")) + "\n")
    out = tmp_path / "pairs.csv"
    args = ["judge", str(data), "--texts", str(texts), "--human", "h", "--aspect",
            "[[pair]] cli pairwise", "--backend", "openai", "--model", "scripted", "--base-url",
            server.url, "--api-key-env", KEY_ENV, "--cache", str(tmp_path / "c"), "--timeout", "5",
            "--pairwise"]
    res = CliRunner().invoke(main, args + ["--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "pairwise judgments (2 inputs x 3 pairs x 2 orders)" in res.output
    assert "metric:llm_judge_pairwise" in res.output and SECRET not in res.output
    frame = pd.read_csv(out, dtype={"input": str}, keep_default_na=False, na_values=[""])
    # the same table through the API, from the cache the command filled
    j = tm.LLMJudge("[[pair]] cli pairwise", backend=tm.OpenAIBackend(
        "scripted", base_url=server.url, timeout=5, api_key_env=KEY_ENV), cache_dir=tmp_path / "c")
    with pytest.warns(ParseFailureWarning):
        api = tm.judge_pairs(ds, j)
    assert api.attrs["counts"]["n_requested"] == 0
    assert list(frame.columns) == list(api.columns)
    np.testing.assert_array_equal(frame["preference"].to_numpy(), api["preference"].to_numpy())
    assert frame["order"].tolist() == api["order"].tolist()
    res = CliRunner().invoke(main, args + ["--format", "json"])
    assert "metaeval: warning (ParseFailureWarning): 2 of 8 pairwise" in res.stderr
    got = json.loads(res.stdout)
    assert got["n_cached"] == 8 and len(got["rows"]) == 12 and got["rows"][0]["order"] == "ab"
    res = CliRunner().invoke(main, args + ["--scale", "1-10"])
    assert res.exit_code == 2 and "--scale applies to ratings, not to --pairwise" in res.output
