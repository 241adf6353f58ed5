"""Issue 25.4, "everything the API does, the CLI reaches": the keywords of LLMJudge, OpenAIBackend
and LocalBackend that had no option of `metaeval judge` (top_logprobs, api_key_header, backoff,
jitter, rng, extra_body, headers, answer_prefix, chat_template, device) reach the object they
configure, and what the OpenAI backend sends is seen on a scripted endpoint on 127.0.0.1
(tests/_judge_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import textmetrics as tm
from metaeval.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from _judge_server import ScriptedServer  # noqa: E402

KEY_ENV = "METAEVAL_TEST_KEY"
SECRET = "sk-test-keywords-SECRET-0123"


class _Stop(Exception):
    pass


class _Recorder:
    """Stands for a class of the judge: records its arguments, then stops or returns a stand-in."""

    def __init__(self, calls, stop=False):
        self.calls, self.stop = calls, stop

    def __call__(self, *a, **kw):
        self.calls.append((a, kw))
        if self.stop:
            raise _Stop
        return object()


BASE = ["judge", "summeval", "--aspect", "coherence", "--model", "m"]


@pytest.fixture
def recorded(monkeypatch):
    backends, judges = [], []
    monkeypatch.setattr(tm, "OpenAIBackend", _Recorder(backends))
    monkeypatch.setattr(tm, "LocalBackend", _Recorder(backends))
    monkeypatch.setattr(tm, "LLMJudge", _Recorder(judges, stop=True))
    return backends, judges


def test_openai_backend_keywords_reach_the_backend(recorded):
    backends, judges = recorded
    res = CliRunner().invoke(main, BASE + [
        "--api-key-header", "api-key", "--backoff", "0.25", "--jitter", "0", "--rng", "7",
        "--extra-body", '{"top_p": 0.5}', "--headers", '{"X-Org": "o1"}', "--top-logprobs", "5"])
    assert isinstance(res.exception, _Stop), res.output
    assert backends == [(("m",), {"api_key_header": "api-key", "backoff": 0.25, "jitter": 0.0, "rng": 7,
                                  "extra_body": {"top_p": 0.5}, "headers": {"X-Org": "o1"}})]
    assert {k: v for k, v in judges[0][1].items() if k != "backend"} == {"top_logprobs": 5}


def test_local_backend_keywords_reach_the_backend(recorded):
    backends, _ = recorded
    args = BASE + ["--backend", "local", "--answer-prefix", "Score:", "--device", "cuda:1"]
    for flag, want in (("--chat-template", True), ("--no-chat-template", False), (None, None)):
        backends.clear()
        res = CliRunner().invoke(main, args + ([flag] if flag else []))
        assert isinstance(res.exception, _Stop), res.output
        kw = {"answer_prefix": "Score:", "device": "cuda:1"}
        if want is not None:
            kw["chat_template"] = want
        assert backends == [(("m",), kw)], flag


@pytest.mark.parametrize("args,message", [
    (["--device", "cpu"], "--device applies to --backend local, not openai"),
    (["--chat-template"], "--chat-template applies to --backend local, not openai"),
    (["--backend", "local", "--jitter", "0.1", "--headers", "{}"],
     "--jitter, --headers apply to --backend openai, not local"),
    (["--pairwise", "--top-logprobs", "3"], "--top-logprobs applies to ratings, not to --pairwise"),
    (["--extra-body", "[1]"], "is a JSON list: give an object"),
    (["--headers", "X-Org: o1"], "is not JSON"),
])
def test_judge_refuses_misplaced_keywords(recorded, args, message):
    res = CliRunner().invoke(main, BASE + args)
    assert res.exit_code == 2 and message in res.output, res.output


def test_the_real_backend_holds_the_given_values(monkeypatch):
    """The OpenAIBackend the command builds (not a stand-in) has the values: its jitter generator
    is numpy's default_rng(7) (the first draw is compared)."""
    judges = []
    monkeypatch.setattr(tm, "LLMJudge", _Recorder(judges, stop=True))
    res = CliRunner().invoke(main, BASE + ["--base-url", "http://127.0.0.1:9/v1", "--backoff", "0.25",
                                           "--jitter", "0.75", "--rng", "7", "--api-key-header", "api-key"])
    assert isinstance(res.exception, _Stop), res.output
    be = judges[0][1]["backend"]
    assert isinstance(be, tm.OpenAIBackend)
    assert (be.backoff, be.jitter, be.api_key_header) == (0.25, 0.75, "api-key")
    assert be._rng.random() == np.random.default_rng(7).random()


@pytest.fixture
def files(tmp_path):
    rows, texts = [], []
    for s in ("A", "B"):
        for i in ("x", "y"):
            rows.append({"system": s, "input": i, "human": 3.0})
            texts.append({"system": s, "input": i, "source": f"source of {i}", "hypothesis": f"[[geval]] {s} {i}"})
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(t) for t in texts) + "\n")
    return tmp_path / "d.csv", tmp_path / "t.jsonl"


def test_what_the_endpoint_receives(files, monkeypatch):
    """--api-key-header sends the bare key in that header (no Authorization), --headers and
    --extra-body are sent as given, --top-logprobs is the request's top_logprobs."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    data, texts = files
    with ScriptedServer() as srv:
        res = CliRunner().invoke(main, [
            "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "keywords-cli",
            "--model", "scripted", "--base-url", srv.url, "--api-key-env", KEY_ENV, "--api-key-header", "api-key",
            "--headers", '{"X-Org": "o1"}', "--extra-body", '{"top_p": 0.5}', "--aggregate", "geval",
            "--top-logprobs", "5", "--no-cache", "--format", "json"])
        log = list(srv.log)
    assert res.exit_code == 0, res.output
    assert SECRET not in res.output
    assert len(log) == 4  # 2 systems x 2 inputs, one sample each
    for entry in log:
        assert entry["headers"]["api-key"] == SECRET and entry["auth"] is None
        assert entry["headers"]["x-org"] == "o1"
        assert entry["body"]["top_p"] == 0.5
        assert entry["body"]["logprobs"] is True and entry["body"]["top_logprobs"] == 5
    # the scripted G-Eval answer: p(4) = 0.5 + 0.05 ("4" and " 4"), p(3) = 0.3, p(5) = 0.1,
    # renormalised over the scale: (4 * 0.55 + 3 * 0.3 + 5 * 0.1) / 0.95
    got = json.loads(res.stdout)
    assert np.allclose(np.asarray(got["scores"], float), (4 * 0.55 + 3 * 0.3 + 5 * 0.1) / 0.95)


def test_a_reserved_extra_body_field_is_one_line_naming_it():
    res = CliRunner().invoke(main, BASE + ["--extra-body", '{"model": "other"}'])
    assert res.exit_code != 0
    assert "extra_body may not set model" in res.output
    assert "Traceback" not in res.output


def test_pairs_reach_judge_pairs(recorded, monkeypatch):
    """--pairs A:B,C:D is judge_pairs' pairs=[(A, B), (C, D)]; absent, it is not passed."""
    seen = []

    def record(dataset, metric, **kw):
        seen.append(kw)
        raise _Stop

    monkeypatch.setattr(tm, "judge_pairs", record)
    monkeypatch.setattr(tm, "LLMJudge", _Recorder([]))  # built, not stopped: judge_pairs is reached
    res = CliRunner().invoke(main, BASE + ["--pairwise", "--pairs", "M11:M13, M8:M9"])
    assert isinstance(res.exception, _Stop), res.output
    res = CliRunner().invoke(main, BASE + ["--pairwise"])
    assert isinstance(res.exception, _Stop), res.output
    assert seen[0]["pairs"] == [("M11", "M13"), ("M8", "M9")] and "pairs" not in seen[1]
    res = CliRunner().invoke(main, BASE + ["--pairs", "M11:M13"])
    assert res.exit_code == 2 and "give --pairwise too" in res.output
    res = CliRunner().invoke(main, BASE + ["--pairwise", "--pairs", "M11"])
    assert res.exit_code == 2 and "write each pair as system_a:system_b" in res.output
