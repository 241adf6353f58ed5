"""Regression tests of issue 24 ("trust under attack, round 2"): each test is named after the
defect it pins and failed before its fix.

Oracles: the expected outcomes are read off the issue's text (which number a hostile answer
must *not* give, which bytes must not reach a terminal) and off hand-written answers; servers
listen on 127.0.0.1 only (tests/_judge_server.py).
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import textmetrics as tm
from metaeval.errors import ParseFailureWarning

sys.path.insert(0, str(Path(__file__).parent))
from _judge_server import RecordingServer, completion_json, send  # noqa: E402

KEY_ENV = "METAEVAL_TEST_KEY"
SECRET = "sk-test-0123456789-SECRET-abcdef"


# ----------------------------------------------------------------------------- 1. the parser

#: Answers whose number is not a whole rating: each once gave the digits after "Rating:" with
#: status ok (issue 24, item 1).  On a 1-5 scale every one must be unparseable.
NOT_A_RATING = [
    "Rating: .5",        # was 5
    "Rating: 1e400",     # was 1 (and a server answering this filled cells with 1.0)
    "Rating: 1e3",       # was 1
    "Rating: 1E-2",
    "Rating: 1,000",     # was 1
    "Rating: 4_0",       # was 4
    "Rating: 2-3",       # was 2: a range
    "Rating: 2 - 3",
    "Rating: 2\u20133",  # en dash
    "Rating: 2 to 3",
    "Rating: 2 or 3",
    "Rating: 4/10",      # was 4: a fraction of another scale
    "Rating: **4**/10",
    "Rating: 4 out of 10",
    "Rating: 1.5.2",
    "Rating: 4x",
    "Rating: 3'000",
]


@pytest.mark.parametrize("answer", NOT_A_RATING)
def test_rating_parser_reads_no_part_of_a_number(answer):
    got = tm.parse_rating(answer, "1-5")
    assert got.status == "unparseable", got
    assert math.isnan(got.value)


@pytest.mark.parametrize("answer, scale, value", [
    ("Rating: 4/5", "1-5", 4.0),            # a fraction of the declared scale reads as its rating
    ("Rating: 3 / 5.", "1-5", 3.0),
    ("Rating: **4**/5", "1-5", 4.0),
    ("Rating: 4 out of 5", "1-5", 4.0),
    ("Rating: 7/10", "1-10", 7.0),
    ("Rating: 4.", "1-5", 4.0),              # a full stop ends the sentence, not a decimal
    ("Rating: 4, well written", "1-5", 4.0),
    ("Rating: 4 - good", "1-5", 4.0),        # a dash followed by words is no range
    ("Rating: 4.0", "1-5", 4.0),
    ("Rating: -1", "-2..2", -1.0),
    ("Rating: 2 to be fair", "1-5", 2.0),
])
def test_rating_parser_still_reads_whole_ratings(answer, scale, value):
    got = tm.parse_rating(answer, scale)
    assert (got.status, got.value) == ("ok", value), got


#: The pairwise twins: a verdict followed by a second verdict is ambiguous (item 1: "Preference:
#: A or B" parsed as A).
AMBIGUOUS_VERDICTS = [
    "Preference: A or B",
    "Preference: **A** or **B**",
    "Preference: A/B",
    "Preference: A-B",
    "Preference: A vs B",
    "Preference: A vs. B",
    "Preference: A, B",
    "Preference: A and B",
    "Preference: A & B",
    "Preference: tie or A",
    "Preference: B or tie",
    "Preference: Output A or Output B",
    "Preference: A_B",
]


@pytest.mark.parametrize("answer", AMBIGUOUS_VERDICTS)
def test_preference_parser_refuses_ambiguous_verdicts(answer):
    assert tm.parse_preference(answer) is None


@pytest.mark.parametrize("answer, verdict", [
    ("Preference: A, because B repeats itself", "A"),
    ("Preference: A.", "A"),
    ("Preference: tie (both fine)", "tie"),
    ("Preference: **B**\nA is worse", "B"),
])
def test_preference_parser_still_reads_one_verdict(answer, verdict):
    assert tm.parse_preference(answer) == verdict


def _echo_server():
    """A loopback server answering each chat request with its prompt: a test passes the answers
    it wants as prompts (``LLMJudge.run`` takes finished prompts)."""
    def respond(handler, entry):
        prompt = json.loads(entry["body"])["messages"][-1]["content"]
        send(handler, 200, completion_json(prompt))
    return RecordingServer(respond)


def _echo_judge(srv, monkeypatch, **kw):
    monkeypatch.setenv(KEY_ENV, SECRET)
    backend = tm.OpenAIBackend("echo", base_url=srv.url, timeout=5, max_retries=0,
                               api_key_env=KEY_ENV)
    return tm.LLMJudge("aspect", backend=backend, template="{aspect}\n{target}", **kw)


def test_hostile_server_ratings_are_unparseable_not_ok(monkeypatch):
    """Through the HTTP judge: a server answering "Rating: 1e400" once gave cells of 1.0 with
    status ok; every shape of NOT_A_RATING is now counted unparseable, and the pairwise twins
    give no verdict."""
    with _echo_server() as srv:
        j = _echo_judge(srv, monkeypatch, cache_dir=False)
        with pytest.warns(ParseFailureWarning, match=f"{len(NOT_A_RATING)} unparseable"):
            run = j.run(NOT_A_RATING + ["Rating: 4/5"])
        assert list(run.status[0]) == ["unparseable"] * len(NOT_A_RATING) + ["ok"]
        assert np.isnan(run.scores[:-1]).all() and run.scores[-1] == 4.0
        prompts = [(a, "ab") for a in AMBIGUOUS_VERDICTS] + [("Preference: B", "ab")]
        with pytest.warns(ParseFailureWarning, match=f"{len(AMBIGUOUS_VERDICTS)} of"):
            pref, raw, counts = j.run_pairwise(prompts)
        assert np.isnan(pref[:-1]).all() and pref[-1] == 0.0
        assert counts["n_unparseable"] == len(AMBIGUOUS_VERDICTS)


# ----------------------------------------------------------------------------- 2. raw names

#: Names that attack a terminal: an OSC title sequence ending in BEL, a right-to-left override,
#: a newline forging a row, a carriage return overwriting the line, rich markup.
EVIL_METRICS = ["\x1b]0;pwned\x07m1", "m2\u202eevil", "m3\nGOLD-METRIC 0.999", "m4\rGOLD",
                "[red]m5[/red]"]


def _unsafe(text):
    """The characters of ``text`` a terminal would act on (everything not printable but the
    line feed that ends each line)."""
    return sorted({c for c in text if not (c.isprintable() or c == "\n")})


def _forged(text):
    """Lines of a terminal table that start with the forged name (after the table's borders)."""
    return [line for line in text.splitlines() if line.lstrip("│┃ |").startswith("GOLD")]


@pytest.fixture(scope="module")
def evil_files(tmp_path_factory):
    import csv

    d = tmp_path_factory.mktemp("evil")
    rng = np.random.default_rng(24)
    h = rng.normal(size=(6, 8))
    rows = []
    for s in range(6):
        for i in range(8):
            row = {"system": "S0\x1b[2J" if s == 0 else f"S{s}",
                   "input": "i0\u202e" if i == 0 else f"i{i}", "human": h[s, i]}
            for k, name in enumerate(EVIL_METRICS):
                row[name] = h[s, i] + rng.normal(scale=0.5 + k)
            rows.append(row)
    pd.DataFrame(rows).to_csv(d / "scores.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)
    prefs = [{"input": f"q{i}", "system_a": "A\x1b]0;x\x07", "system_b": "B\nGOLD",
              "judge": "judge\x1b[2J" if who == 0 else "", "rater": "" if who == 0 else f"h{who}\u202e",
              "preference": float(rng.integers(0, 3)) / 2} for i in range(12) for who in range(3)]
    pd.DataFrame(prefs).to_csv(d / "prefs.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)
    spans = [{"system": s, "input": "i1", "rater": r, "start": 0, "end": 5 + k,
              "severity": "major\x1b[5m", "category": "acc"}
             for k, r in enumerate(["r1\x1b[2J", "r2\u202e\nGOLD"]) for s in ("S\x07", "T")]
    pd.DataFrame(spans).to_csv(d / "spans.tsv", index=False, sep="\t")
    raters = [{"system": f"S{s}", "input": f"i{i}", "rater": r, "coh\x1b]0;t\x07": rng.normal(),
               "flu\nGOLD": rng.normal()}
              for s in range(5) for i in range(6) for r in ("r1\x1b[2J", "r2")]
    pd.DataFrame(raters).to_csv(d / "raters.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)
    return d


COMMANDS = {
    "correlate": ("scores.csv", ["--human", "human", "--ci", "none", "--pvalue", "none"]),
    "compare": ("scores.csv", ["--human", "human", "--n-resamples", "20"]),
    "reliability": ("scores.csv", ["--human", "human"]),
    "measures": ("scores.csv", ["--human", "human", "--n-resamples", "10"]),
    "local": ("scores.csv", ["--human", "human", "--context", "system"]),
    "validity": ("raters.csv", ["--rater-col", "rater", "--human", "coh\x1b]0;t\x07,flu\nGOLD",
                                "--no-cfa"]),
    "diagnose": ("scores.csv", ["--human", "human", "--ks-low", "0", "--ks-high", "0.5",
                                "--sizes", "10,20"]),
    "preferences": ("prefs.csv", []),
    "span-agreement": ("spans.tsv", []),
}


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_names_reached_the_terminal_raw(evil_files, command, fmt):
    """Every command, every format: no byte a terminal acts on (ESC, BEL, CR, U+202E) reaches
    stdout or stderr, and a name holding a newline forges no row (item 2: --format csv of
    correlate and span-agreement wrote raw ESC/BEL bytes and passed U+202E through)."""
    from click.testing import CliRunner

    from metaeval.cli import main

    data, args = COMMANDS[command]
    res = CliRunner().invoke(main, [command, str(evil_files / data), *args, "--format", fmt])
    assert res.exit_code == 0, (res.stderr, res.exception)
    assert _unsafe(res.stdout) == [] and _unsafe(res.stderr) == []
    if fmt == "table":
        assert _forged(res.stdout) == []
        if command != "measures":  # its table shows measures, not names
            assert "\\x1b" in res.stdout  # shown, escaped
    elif fmt == "csv":
        # newlines stay inside quoted fields: the CSV reads back with the escaped names
        import io

        frame = pd.read_csv(io.StringIO(res.stdout), keep_default_na=False)
        cells = set(frame.astype(str).to_numpy().ravel()) | set(frame.columns)
        assert command == "measures" or any("\\x1b" in c for c in cells)
        assert not any(c.startswith("GOLD") for c in cells)
    else:
        json.loads(res.stdout)


@pytest.fixture(scope="module")
def evil_mtme(tmp_path_factory):
    from test_mtme import make_data, write_layout

    root = tmp_path_factory.mktemp("mtme")
    h, m = make_data(0)
    m["EVIL\x1b]0;pwned\x07\u202e\nGOLD-METRIC 0.999-refA"] = m.pop("KIWI-src")
    write_layout(root, h, m, lp="en-de")
    return root


@pytest.mark.parametrize("fmt", ["text", "csv", "latex"])
def test_wmt_metric_named_by_a_file_forged_a_row_and_set_the_title(evil_mtme, fmt):
    """Item 2: `metaeval wmt` wrote metric names (from file names) unescaped in every format;
    a name with an OSC sequence set the terminal's title, one with a newline forged a
    "GOLD-METRIC 0.999" row in the default table."""
    from click.testing import CliRunner

    from metaeval.cli import main

    res = CliRunner().invoke(main, ["wmt", str(evil_mtme), "wmt99", "--lps", "en-de", "--refs",
                                    "refA", "--n-resamples", "10", "--n-permutations", "50",
                                    "--seed", "1", "--format", fmt])
    assert res.exit_code == 0, (res.stderr, res.exception)
    assert _unsafe(res.stdout) == [] and _unsafe(res.stderr) == []
    if fmt == "text":
        assert _forged(res.stdout) == []
        assert "EVIL\\x1b]0;pwned\\x07\\u202e\\nGOLD-METRIC 0.999" in res.stdout
    elif fmt == "latex":
        assert _forged(res.stdout) == []
        assert "EVIL\\textbackslash{}x1b]0;pwned" in res.stdout
    else:
        import io

        frame = pd.read_csv(io.StringIO(res.stdout))
        assert "EVIL\\x1b]0;pwned\\x07\\u202e\nGOLD-METRIC 0.999" in set(frame["metric"])
        assert len(frame) == 3


def test_wmt_latex_escapes_every_special_character():
    from metaeval.report.tables import _LATEX

    # the ten characters LaTeX reads as commands (The LaTeX Companion, 2nd ed., sec. 7.4.1)
    assert set(_LATEX) == set("\\_%&#${}~^")


def test_literal_keeps_only_newlines_when_asked():
    from metaeval.report.tables import literal

    assert literal("a\nb\rc\td\x1b\u202e\u2028") == "a\\nb\\rc\\td\\x1b\\u202e\\u2028"
    assert literal("a\nb\rc\td\x1b\u202e", newlines=True) == "a\nb\\rc\\td\\x1b\\u202e"
    assert literal("é [b]x[/b] 中文") == "é [b]x[/b] 中文"


# ----------------------------------------------------------------------------- 3. sums of squares


def _spa_ds(scale):
    import metaeval

    rng = np.random.default_rng(7)
    N, M = 6, 25
    h = rng.standard_normal((N, M))
    m0 = h + 0.4 * rng.standard_normal((N, M))
    m1 = h + 2.0 * rng.standard_normal((N, M))
    return metaeval.Dataset.from_arrays({"h": h, "m0": m0 * scale, "m1": m1}, human="h")


@pytest.mark.parametrize("exponent", [520, 1000, -600])
def test_compare_spa_zscored_through_an_overflowing_std(exponent):
    """Item 3: beyond ~1e154 the metric's std overflowed, the z-scores were all 0 and the
    Perm-Both null of compare_spa flipped the sign of the result.  Oracle: a z-score is
    invariant to a positive scale, and scaling by a power of two is exact, so the null
    distribution must equal the unscaled one bit for bit (2**1000 ~ 1e301; 2**-600: the
    squares underflowed)."""
    from metaeval.wmt import compare_spa

    kw = dict(n_resamples=40, n_permutations=200, rng=5)
    base = compare_spa(_spa_ds(1.0), "h", "m0", "m1", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "overflow in reduce"
        big = compare_spa(_spa_ds(2.0 ** exponent), "h", "m0", "m1", **kw)
    assert big.statistic == base.statistic
    np.testing.assert_array_equal(big.null_distribution, base.null_distribution)
    assert big.pvalue == base.pvalue


def test_pairtest_zscore_through_an_overflowing_std():
    """The same defect in the z-score of the permutation tests (stats.pairtest.zscore, used by
    compare's Perm-Both and measures): against scipy.stats.zscore on the unscaled vector."""
    from scipy import stats

    from metaeval.stats.pairtest import zscore

    x = np.random.default_rng(1).standard_normal(40)
    want = stats.zscore(x)
    for e in (0, 600, 1020, -700):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            np.testing.assert_allclose(zscore(x * 2.0 ** e), want, rtol=1e-13, atol=1e-13)


# ----------------------------------------------------------------------------- 4. the key on disk


@pytest.fixture
def judge_files(tmp_path):
    rows = [{"system": s, "input": i, "human": float(k)}
            for k, (s, i) in enumerate((s, i) for s in ("S1", "S2") for i in ("i1", "i2"))]
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    texts = [{"system": r["system"], "input": r["input"], "source": "src",
              "hypothesis": f"text of {r['system']} {r['input']}"} for r in rows]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in texts))
    return tmp_path / "d.csv", tmp_path / "t.jsonl"


def _echo_key(handler, entry):
    """A 200 answer that echoes the request's Authorization header twice: as written, and with
    its first letter as a JSON escape (the same string once decoded)."""
    auth = entry["headers"].get("authorization", "")
    key = auth.removeprefix("Bearer ")
    escaped = "\\u%04x" % ord(key[0]) + key[1:]
    content = f"You sent {auth}. Key again: KEY_ESCAPED.\\nRating: 4"
    body = completion_json(content).replace("KEY_ESCAPED", escaped)
    send(handler, 200, body)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_api_key_echoed_in_a_200_answer_was_stored_and_printed(judge_files, tmp_path, monkeypatch,
                                                                fmt):
    """Item 4: a 200 answer echoing the Authorization header was stored unredacted in the cache,
    --out and stdout (errors were redacted).  Now no byte of the key is in any of them."""
    from click.testing import CliRunner

    from metaeval.cli import main

    data, texts = judge_files
    monkeypatch.setenv(KEY_ENV, SECRET)
    cache, out = tmp_path / "cache", tmp_path / "judged.csv"
    with RecordingServer(_echo_key) as srv:
        res = CliRunner().invoke(main, [
            "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "x",
            "--backend", "openai", "--model", "m", "--base-url", srv.url, "--api-key-env",
            KEY_ENV, "--cache", str(cache), "--out", str(out), "--format", fmt])
        assert srv.log and all(e["headers"]["authorization"] == f"Bearer {SECRET}"
                               for e in srv.log)
    assert res.exit_code == 0, (res.output, res.exception)
    assert SECRET not in res.output
    written = out.read_text()
    assert SECRET not in written and "You sent Bearer ***. Key again: ***." in written
    for f in cache.rglob("*"):
        if f.is_file():
            blob = f.read_bytes()
            assert SECRET.encode() not in blob and SECRET[1:].encode() not in blob, f
    frame = pd.read_csv(out)
    assert (frame["status"] == "ok").all() and (frame["value"] == 4.0).all()


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_judge_answers_and_names_reached_the_terminal_raw(judge_files, tmp_path, monkeypatch,
                                                           fmt):
    """Item 2 for `metaeval judge`: a server's answer holding an OSC sequence, U+202E and a
    newline, and a system named with an escape, reach neither the terminal nor --out raw."""
    from click.testing import CliRunner

    from metaeval.cli import main

    data, texts = judge_files
    frame = pd.read_csv(data)
    frame["system"] = frame["system"].replace({"S1": "S1\x1b[2J"})
    frame.to_csv(data, index=False)
    rows = [json.loads(line) for line in texts.read_text().splitlines()]
    texts.write_text("".join(json.dumps({**r, "system": r["system"].replace("S1", "S1\x1b[2J")})
                             + "\n" for r in rows))
    monkeypatch.setenv(KEY_ENV, SECRET)
    out = tmp_path / "judged.csv"

    def respond(handler, entry):
        send(handler, 200, completion_json("evil \x1b]0;title\x07 \u202e\nRating: 4"))

    with RecordingServer(respond) as srv:
        res = CliRunner().invoke(main, [
            "judge", str(data), "--texts", str(texts), "--human", "human", "--aspect", "x",
            "--backend", "openai", "--model", "m", "--base-url", srv.url, "--api-key-env",
            KEY_ENV, "--no-cache", "--out", str(out), "--format", fmt])
    assert res.exit_code == 0, (res.output, res.exception)
    assert _unsafe(res.stdout) == [] and _unsafe(res.stderr) == []
    written = out.read_text()
    assert _unsafe(written) == [] and "evil \\x1b]0;title\\x07 \\u202e" in written


# ----------------------------------------------------------------------------- 5. --dask


def _listener(mode):
    """A loopback TCP listener: ``silent`` accepts and sends nothing, ``garbage`` sends bytes
    that are no Dask frame, ``http`` answers as a web server."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held = []

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            held.append(conn)
            if mode == "garbage":
                conn.sendall(b"\xff" * 64 + b"garbage" * 100)
            elif mode == "http":
                conn.recv(1000)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return sock


def _square(x):
    return x * x


@pytest.mark.parametrize("mode", ["silent", "garbage", "http", "refused"])
def test_dask_address_that_is_no_scheduler_hung_or_blamed_memory(mode):
    """Item 5: `--dask ADDR` at a listener that accepts and sends nothing ran until killed (400 s);
    garbage gave "Maximum allowed dimension exceeded" or "out of memory".  Now: one
    ParameterError naming the address and the cause, within dask's connect timeout."""
    import time

    pytest.importorskip("distributed")
    import dask

    from metaeval import ParameterError
    from metaeval._parallel import run_units

    sock = _listener(mode)
    port = sock.getsockname()[1]
    if mode == "refused":
        sock.close()
    address = f"tcp://127.0.0.1:{port}"
    t0 = time.monotonic()
    try:
        with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
            with pytest.raises(ParameterError) as info:
                run_units(_square, [1, 2, 3], dask=address)
    finally:
        sock.close()
    assert time.monotonic() - t0 < 15
    msg = str(info.value)
    assert msg.startswith(f"cannot connect to the Dask scheduler at {address}: "), msg
    assert f"dask={address!r}" in msg and "\n" not in msg
    if mode == "silent":
        assert "no handshake within 1 s" in msg
    elif mode in ("garbage", "http"):
        assert "its answer is not a Dask handshake" in msg
    assert "memory" not in msg.lower().split("(")[0]


def test_dask_option_that_hung_names_the_option(tmp_path):
    import time

    pytest.importorskip("distributed")
    import dask
    from click.testing import CliRunner

    from metaeval.cli import main

    rng = np.random.default_rng(0)
    h = rng.normal(size=(5, 6))
    rows = [{"system": f"S{s}", "input": f"i{i}", "human": h[s, i],
             **{f"m{k}": h[s, i] + rng.normal() for k in range(3)}}
            for s in range(5) for i in range(6)]
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    sock = _listener("silent")
    address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    t0 = time.monotonic()
    try:
        with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
            res = CliRunner().invoke(main, ["measures", str(tmp_path / "d.csv"), "--human", "human",
                                            "--n-resamples", "5", "--splits", "3",
                                            "--dask", address])
    finally:
        sock.close()
    assert time.monotonic() - t0 < 30
    assert res.exit_code == 2, (res.output, res.exception)
    err = res.stderr
    assert err.count("\n") == 1 and err.startswith(
        f"metaeval: error: cannot connect to the Dask scheduler at {address}: no handshake"), err
    assert f"dask='{address}'" in err  # the keyword, spelled --dask on the command line


# ----------------------------------------------------------------------------- 6. reader gaps


def _mt_bench(tmp_path, judge_self_pair):
    recs = [{"question_id": 81, "model_a": "gpt-4", "model_b": "llama", "winner": "model_a",
             "judge": "author_0", "turn": 1},
            {"question_id": 82, "model_a": "gpt-4", "model_b": "llama", "winner": "tie",
             "judge": "author_1", "turn": 1},
            {"question_id": 81, "model_a": "gpt-4", "model_b": "llama", "winner": "model_b",
             "judge": ["gpt-4", "pair-v2"], "turn": 1}]
    if judge_self_pair:
        recs.append({"question_id": 82, "model_a": "llama", "model_b": "llama",
                     "winner": "model_a", "judge": ["gpt-4", "pair-v2"], "turn": 1})
    path = tmp_path / "mt.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_mt_bench_reader_accepted_a_self_pair(tmp_path):
    """Item 6: the MT-Bench reader accepted model_a == model_b (in a judge record), which the
    CSV reader rejects for human rows; both now refuse it, naming the record/row."""
    from metaeval import DataError
    from metaeval.preferences import read_preferences

    kw = dict(format="mt-bench", judges=["gpt-4/pair-v2"])
    assert read_preferences(_mt_bench(tmp_path, False), **kw).judges == ("gpt-4/pair-v2",)
    with pytest.raises(DataError, match=r"mt\.jsonl: MT-Bench judgments compare a model with "
                                        r"itself \(model_a equals model_b\) in records 3"):
        read_preferences(_mt_bench(tmp_path, True), **kw)
    # the plain CSV reader, judge rows: refused as human rows already were
    rows = [{"input": "q", "system_a": "A", "system_b": "B", "rater": "r", "judge": "",
             "preference": 1.0},
            {"input": "q", "system_a": "A", "system_b": "A", "rater": "", "judge": "j",
             "preference": 1.0}]
    pd.DataFrame(rows).to_csv(tmp_path / "p.csv", index=False)
    with pytest.raises(DataError, match=r"judge outputs: system_a equals system_b in rows 0"):
        read_preferences(tmp_path / "p.csv")


@pytest.mark.parametrize("offset", ["true", "1.5", "false", "null", "[1]"])
def test_rating_span_offset_true_or_1_5_read_as_1(tmp_path, offset):
    """Item 6: `.rating` span offsets `true` and `1.5` were read as 1 (int()); the TSV reader
    rejects 0.5.  Now the line is named and the offset refused."""
    from metaeval import DataError
    from metaeval.wmt import read_rating_spans

    good = json.dumps({"errors": [{"start": 0, "end": 3, "severity": "major"}]})
    bad = '{"errors": [{"start": %s, "end": 4, "severity": "minor"}]}' % offset
    path = tmp_path / "en-de.mqm.rater1.seg.rating"
    path.write_text(f"sysA\t{good}\nsysA\t{bad}\n")
    with pytest.raises(DataError, match=r"rating, line 2: .*integer 'start' and 'end'"):
        read_rating_spans(path)
    path.write_text(f"sysA\t{good}\nsysA\t" + good.replace("3", "3.0") + "\n")
    assert read_rating_spans(path)["end"].tolist() == [3, 3]  # an integral float is an offset


def test_span_agreement_with_one_rater_printed_an_empty_table(tmp_path):
    """Item 6: one rater gave an empty table, rc 0, no message.  Now one error line."""
    from click.testing import CliRunner

    from metaeval import DataError
    from metaeval.cli import main
    from metaeval.wmt import span_agreement

    spans = pd.DataFrame({"system": ["s", "s"], "input": ["0", "1"], "rater": ["r1", "r1"],
                          "start": [0, 2], "end": [4, 5], "severity": ["major", "minor"]})
    with pytest.raises(DataError, match=r"the spans have one rater, 'r1'; give the spans of 2\+"):
        span_agreement(spans)
    spans.assign(category="accuracy").to_csv(tmp_path / "one.tsv", sep="\t", index=False)
    res = CliRunner().invoke(main, ["span-agreement", str(tmp_path / "one.tsv")])
    assert res.exit_code == 2 and res.stderr.startswith("metaeval: error: span agreement "
                                                        "compares raters"), res.output
    # two raters without a common segment: an empty result, with a typed warning
    from metaeval.errors import UndefinedStatisticWarning

    spans.loc[1, "rater"] = "r2"
    with pytest.warns(UndefinedStatisticWarning, match="no two of the 2 raters rated a common"):
        assert len(span_agreement(spans)) == 0


@pytest.mark.parametrize("preset", ["wmt24", "wmt23"])
def test_wmt_metric_missing_one_system_stopped_the_whole_table(tmp_path, preset):
    """Item 6: one metric without scores for one system (read-mtme only warns) stopped the whole
    `wmt` table.  Now that metric is left out of that language pair's tasks with a warning, and
    the other metrics' numbers are those of a run on data without the metric."""
    import shutil

    from test_mtme import make_data, write_layout

    from metaeval.errors import MtmeWarning
    from metaeval.wmt import run_wmt

    full = tmp_path / "full"
    for k, lp in enumerate(("en-de", "zh-en")):
        h, m = make_data(k)
        write_layout(full, h, m, lp=lp)
    gap = tmp_path / "gap"
    shutil.copytree(full, gap)
    for level in ("seg", "sys"):  # COMET-refA of en-de lacks sysB
        f = gap / "wmt99" / "metric-scores" / "en-de" / f"COMET-refA.{level}.score"
        f.write_text("".join(ln for ln in f.read_text().splitlines(True)
                             if not ln.startswith("sysB\t")))
    without = tmp_path / "without"  # the oracle: COMET-refA never existed for en-de
    shutil.copytree(full, without)
    for level in ("seg", "sys"):
        (without / "wmt99" / "metric-scores" / "en-de" / f"COMET-refA.{level}.score").unlink()
    kw = dict(preset=preset, refs="refA", n_resamples=20, n_permutations=50, rng=3)
    with pytest.warns(MtmeWarning, match=r"en-de: metric 'COMET' has no scores for system\(s\) "
                                         r"'sysB'.*left out of the en-de tasks"):
        got, _ = run_wmt(gap, "wmt99", ["en-de", "zh-en"], **kw)
    want, _ = run_wmt(without, "wmt99", ["en-de", "zh-en"], **kw)
    assert [r.task.name for r in got] == [r.task.name for r in want]
    for a, b in zip(got, want):
        assert a.metrics == b.metrics
        np.testing.assert_array_equal(a.statistics, b.statistics)


# ----------------------------------------------------------------------------- 7. messages


def test_deeply_nested_judge_answer_aborted_and_blamed_the_data(monkeypatch):
    """Item 7: a 200 answer nested 100 000 deep raised RecursionError through the judge, even
    with on_error='nan', and the command line blamed the data.  It is the server's answer: a
    failed request, recorded as such."""
    nested = '{"choices": [{"message": {"content": "Rating: 4"}}], "x": ' + "[" * 100_000 + \
        "]" * 100_000 + "}"

    def respond(handler, entry):
        prompt = json.loads(entry["body"])["messages"][-1]["content"]
        send(handler, 200, nested if prompt == "deep" else completion_json("Rating: 3"))

    with RecordingServer(respond) as srv:
        j = _echo_judge(srv, monkeypatch, cache_dir=False, on_error="nan")
        run = j.run(["deep", "flat"])
    assert list(run.status[0]) == ["request_failed", "ok"]
    assert "nested too deeply" in run.errors[0, 0]
    assert np.isnan(run.scores[0]) and run.scores[1] == 3.0


def test_deeply_nested_rating_file_gave_no_file_or_line(tmp_path):
    from metaeval import DataError
    from metaeval.wmt import read_rating_spans

    path = tmp_path / "en-de.mqm.rater1.seg.rating"
    path.write_text('sysA\t{"errors": []}\nsysA\t' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataError, match=r"rating, line 2: the rating's JSON is nested too deeply"):
        read_rating_spans(path)


def test_lone_surrogate_in_a_jsonl_label_gave_no_file_or_line(tmp_path):
    """Item 7: a label "S\\ud800" failed far from its line ("'utf-8' codec can't encode")."""
    from click.testing import CliRunner

    from metaeval import DataError, read_dataset
    from metaeval.cli import main

    lines = [json.dumps({"system": "S\ud800" if s == 0 else f"S{s}", "input": f"i{i}",
                         "human": float(s + i), "m": float(s * i)})
             for s in range(3) for i in range(3)]
    ok = json.dumps({"system": "S\U0001f600", "input": "i9", "human": 1.0, "m": 2.0})
    assert "\\ud83d\\ude00" in ok  # a surrogate *pair* is one character: accepted
    path = tmp_path / "d.jsonl"
    path.write_text(ok + "\n" + "\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"d\.jsonl: line 2: field 'system' holds a lone "
                                        r"surrogate \(\\ud800\)"):
        read_dataset(path, human="human")
    res = CliRunner().invoke(main, ["correlate", str(path), "--human", "human"])
    assert res.exit_code == 2 and "d.jsonl: line 2: field 'system'" in res.stderr, res.output


def test_alpacaeval_error_named_format_not_input_format(tmp_path):
    from click.testing import CliRunner

    from metaeval.cli import main

    path = tmp_path / "annotations.json"
    path.write_text(json.dumps([{"instruction": "Say hi", "output_1": "hi", "preference": 1}]))
    res = CliRunner().invoke(main, ["preferences", str(path), "--input-format", "alpacaeval"])
    assert res.exit_code == 2
    assert "lack fields ['output_2'] (CLI: --input-format)" in res.stderr, res.stderr
    res = CliRunner().invoke(main, ["preferences", str(path), "--input-format", "bogus"])
    assert res.exit_code == 2 and "--format" not in res.stderr.replace("--input-format", "")


def test_option_rewriting_turned_a_cell_location_into_an_option(tmp_path):
    """Item 7: `system='S0'` in a cell's location "(system='S0', input='i0')" became
    "(--system-col 'S0'".  Issue 25.3 retired the rewriting (options are spelled as the
    keywords they set): a message is printed as the analysis writes it."""
    from click.testing import CliRunner

    from metaeval import cli
    from metaeval.cli import main

    assert not hasattr(cli, "_cli_spelling")
    # end to end: a human score that differs across the runs of a cell
    rows = [{"system": f"S{s}", "input": f"i{i}", "run": r, "human": float(s + i + (r if s == 0 and i == 0 else 0)),
             "m": float(s * i + r)} for s in range(3) for i in range(3) for r in range(2)]
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    res = CliRunner().invoke(main, ["correlate", str(tmp_path / "d.csv"), "--human", "human",
                                    "--run-col", "run"])
    assert res.exit_code == 2, res.output
    assert "(system='S0', input='i0')" in res.stderr and "(--system-col" not in res.stderr


def test_checkpoint_unit_with_a_wrongly_shaped_array_named_neither_unit_nor_advice(tmp_path):
    import io as _io

    from metaeval import ParameterError
    from metaeval._parallel import Checkpoint

    ck = Checkpoint(tmp_path / "ck", {"analysis": "x"})
    ck.save("unit-7", {"stat": np.arange(5.0), "n": np.int64(3)})
    path = next((tmp_path / "ck").glob("*.npz"))
    with np.load(path, allow_pickle=False) as z:
        entries = {k: z[k] for k in z.files}
    entries["a0"] = np.arange(2.0)  # same header, an array of another shape
    buf = _io.BytesIO()
    np.savez(buf, **entries)
    path.write_bytes(buf.getvalue())
    with pytest.raises(ParameterError) as info:
        ck.load("unit-7")
    msg = str(info.value)
    assert str(path) in msg and "(unit-7)" in msg and "delete this file" in msg
    assert "has shape (2,)" in msg and "recorded (5,)" in msg


def _rated(scale, seed=11):
    """6 systems x 10 inputs x 3 raters (human 'h'), a metric 'm' with 3 runs and metrics for
    Cronbach's alpha, all multiplied by ``scale``."""
    import metaeval

    rng = np.random.default_rng(seed)
    N, M, K = 6, 10, 3
    h = rng.normal(size=(N, M))
    rat = h + 0.7 * rng.normal(size=(K, N, M))
    m2, m3 = h + rng.normal(size=(N, M)), 2 * h + rng.normal(size=(N, M))
    runs2 = m2 + 0.5 * rng.normal(size=(K, N, M))
    rows = [{"system": f"S{s}", "input": f"i{i}", "rater": f"r{k}", "h": rat[k, s, i] * scale,
             "m2": m2[s, i] * scale, "m3": m3[s, i] * scale, "u": runs2[k, s, i] * scale}
            for k in range(K) for s in range(N) for i in range(M)]
    frame = pd.DataFrame(rows)
    # runs: the metric 'u' differs per run, the human column not
    runs = frame.rename(columns={"rater": "run"})[["system", "input", "run", "h", "u"]].copy()
    runs["h"] = runs.groupby(["system", "input"])["h"].transform("first")
    return (metaeval.Dataset.from_frame(frame.drop(columns=["u"]), human="h", rater="rater"),
            metaeval.Dataset.from_frame(runs, human="h", metrics=["u"], run="run"))


#: Columns in the data's unit (scaled back by the same power of two) and in its square.
_UNIT = {"sd", "sem"}
_SQUARED = {"observed_disagreement", "expected_disagreement"}


@pytest.mark.parametrize("exponent", [600, -600])
def test_reliability_sums_of_squares_overflowed_to_constant_or_nan(exponent):
    """Item 3, "other unscaled sums of squares": with values ~1e180 Krippendorff's interval
    alpha and the six ICCs (agreement), Cronbach's alpha (consistency) and the run ICCs
    (stability) were NaN with a ConstantInputWarning ("the total score is constant"); at
    2**-600 the squares underflowed the same way.  Oracle: these statistics are scale-free
    and a power of two scales exactly, so they must equal the unscaled ones bit for bit; sd
    and sem are in the data's unit (x 2**e), the disagreements in its square (x 2**2e)."""
    import metaeval

    base_r, base_u = _rated(1.0)
    big_r, big_u = _rated(2.0 ** exponent)
    runs = [
        (lambda r, u: metaeval.agreement(r).to_frame()),
        (lambda r, u: metaeval.consistency(r, ci="feldt").to_frame()),
        (lambda r, u: metaeval.stability(u, method="icc_c1").to_frame()),
    ]
    for run in runs:
        want = run(base_r, base_u)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = run(big_r, big_u)
        for c in want.select_dtypes(float).columns:
            w = want[c].to_numpy()
            if c in _UNIT:
                w = np.ldexp(w, exponent)
            elif c in _SQUARED:
                with np.errstate(over="ignore"):  # 2**1200: beyond the float range, inf
                    w = np.where(want["method"] == "krippendorff_interval",
                                 np.ldexp(w, 2 * exponent), w)
            np.testing.assert_array_equal(got[c].to_numpy(), w, err_msg=c)
        assert np.isfinite(got["statistic"]).all()


@pytest.mark.parametrize("exponent", [600, -600])
def test_cfa_covariances_overflowed_or_read_as_constant(exponent):
    """Item 3 (other sums of squares): continuous CFA of indicators ~1e180 stopped with the
    solver's "function value at x=0.0 is NaN" (a raw ValueError); at 2**-600 an indicator was
    "constant over the cells".  Oracle: ML CFA is invariant to rescaling the indicators
    (Bollen 1989, ch. 7: the ML fit function is scale-free), so the fit, the standardized
    loadings and the factor correlations equal the unscaled ones (to the optimizer's
    tolerance: each indicator is scaled by its own power of two, so the iterations round
    differently); raw loadings and their SEs carry the indicator's unit."""
    import metaeval

    rng = np.random.default_rng(3)
    n = 300
    f1 = rng.normal(size=n)
    f2 = 0.5 * f1 + rng.normal(size=n)
    cols = {f"a{j}": f1 + 0.6 * rng.normal(size=n) for j in range(3)}
    cols |= {f"b{j}": f2 + 0.6 * rng.normal(size=n) for j in range(3)}
    model = {"F1": ["a0", "a1", "a2"], "F2": ["b0", "b1", "b2"]}

    def fit(scale):
        ds = metaeval.Dataset.from_arrays({k: (v * scale).reshape(15, 20) for k, v in cols.items()},
                                          human=list(cols))
        return metaeval.cfa(ds, model, ordered=False)

    want = fit(1.0)
    got = fit(2.0 ** exponent)
    assert got.converged and got.admissible
    for field in ("chi2", "cfi", "srmr", "loadings", "factor_correlations", "residual_variances"):
        np.testing.assert_allclose(getattr(got, field), getattr(want, field), rtol=1e-6,
                                   atol=1e-12, err_msg=field)
    for field in ("loadings_raw", "loadings_se"):
        np.testing.assert_allclose(getattr(got, field), np.ldexp(getattr(want, field), exponent),
                                   rtol=1e-6, err_msg=field)


@pytest.mark.parametrize("exponent", [0, 500, 1019, -500, -1000])
def test_alpha_batch_of_huge_or_tiny_scores(exponent):
    """Cronbach's alpha is scale-free: alpha_batch of Y * 2**e equals that of Y bit for bit,
    up to values near the float maximum (2**1019 * |Y| up to ~2**1022: the row sums overflow)
    and down to 2**-1000 (whose squares underflowed).  Oracle: the formula restated here,
    alpha = M/(M-1) (1 - sum_j var(Y_j) / var(sum_j Y_j)), on the unscaled Y."""
    from metaeval.stats.alpha import alpha_batch

    rng = np.random.default_rng(2)
    y = rng.normal(size=(4, 8, 10)) + rng.normal(size=(4, 8, 1))
    M = y.shape[2]
    want = np.array([M / (M - 1) * (1 - b.var(axis=0, ddof=1).sum() / b.sum(1).var(ddof=1))
                     for b in y])
    base = alpha_batch(y)
    np.testing.assert_allclose(base, want, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = alpha_batch(np.ldexp(y, exponent))
    np.testing.assert_array_equal(got, base)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_score_names_reached_the_terminal_raw(tmp_path, fmt):
    """Item 2 for `metaeval score` (sacreBLEU): system names with ESC and U+202E."""
    pytest.importorskip("sacrebleu")
    from click.testing import CliRunner

    from metaeval.cli import main

    rows = [{"system": s, "input": i, "human": float(k)} for k, (s, i) in enumerate(
        (s, i) for s in ("S1\x1b[2J", "S2\u202e", "S3") for i in ("i1", "i2", "i3"))]
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(
        {"system": r["system"], "input": r["input"], "hypothesis": f"the cat sat on the mat {k}",
         "references": ["the cat sat on a mat"]}) + "\n" for k, r in enumerate(rows)))
    res = CliRunner().invoke(main, ["score", str(tmp_path / "d.csv"), "--metrics", "bleu",
                                    "--human", "human", "--texts", str(tmp_path / "t.jsonl"),
                                    "--out", str(tmp_path / "o.csv"), "--format", fmt])
    assert res.exit_code == 0, (res.output, res.exception)
    assert _unsafe(res.stdout) == [] and _unsafe(res.stderr) == []
    written = (tmp_path / "o.csv").read_text()
    assert _unsafe(written) == [] and "S1\\x1b[2J" in written and "S2\\u202e" in written


# ------------------------------------------- 2. names: the commands tested above leave out (sec2)


def _files_unsafe(folder, *, allow=""):
    """{file: unsafe characters} of the text files under ``folder`` (figures' PNG left out)."""
    out = {}
    for p in sorted(Path(folder).rglob("*")):
        if p.is_file() and p.suffix not in (".png", ".npz", ".parquet"):
            bad = [c for c in _unsafe(p.read_text(errors="replace")) if c not in allow]
            if bad:
                out[p.name] = bad
    return out


def _invoke(args):
    from click.testing import CliRunner

    from metaeval.cli import main

    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, (res.stderr, res.exception)
    assert _unsafe(res.stdout) == [] and _unsafe(res.stderr) == []
    return res


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_perturb_wrote_raw_names_in_its_perturbed_texts(evil_files, tmp_path, fmt):
    """`perturb --out` wrote perturbed_NAME.jsonl with force_ascii=False: a system named with
    U+202E reached the file raw (the JSON of --out escapes every non-ASCII character)."""
    import csv

    pytest.importorskip("sacrebleu")
    frame = pd.read_csv(evil_files / "scores.csv", keep_default_na=False)
    frame["hyp"] = [f"the cat number {k % 7} sat on the mat . it was happy ." for k in range(len(frame))]
    frame["ref"] = "the cat sat on a mat . it was glad ."
    frame.to_csv(tmp_path / "d.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)
    res = _invoke(["perturb", tmp_path / "d.csv", "--human", "human", "--text-cols",
                   "hypothesis=hyp,reference=ref", "--perturbation", "drop_words", "--metrics", "bleu",
                   "--seed", "1", "--out", tmp_path / "o", "--format", fmt])
    assert _files_unsafe(tmp_path / "o") == {}
    # perturb reads no metric column of the file, so it prints no note naming them (blind run 2);
    # the output it prints is checked safe by _invoke
    assert "taken from" not in res.stderr
    texts = pd.read_json(tmp_path / "o" / "perturbed_drop_words.jsonl", lines=True, dtype=False)
    assert {"S0\x1b[2J", "S1"} <= set(texts["system"]) and "i0\u202e" in set(texts["input"])  # read back whole


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_simulate_from_data_names_reached_the_terminal_raw(evil_files, tmp_path, fmt):
    """`simulate --from-data` shows the data's metric names (its estimates table, CSV, JSON)."""
    res = _invoke(["simulate", "--from-data", evil_files / "scores.csv", "--human", "human",
                   "--n-iterations", "2", "--n-discretizations", "2", "--seed", "1",
                   "--out", tmp_path / "o", "--format", fmt])
    assert _files_unsafe(tmp_path / "o") == {}
    if fmt == "table":
        assert _forged(res.stdout) == [] and "\\x1b]0;pwned\\x07m1" in res.stdout
    elif fmt == "csv":
        import io

        assert "\\x1b]0;pwned\\x07m1" in set(pd.read_csv(io.StringIO(res.stdout))["metric"])
    else:
        assert "\x1b]0;pwned\x07m1" in {r["metric"] for r in json.loads(res.stdout)}


EVIL_SYSTEM = "sysB\x1b[2J\u202e"


@pytest.fixture(scope="module")
def evil_mtme_systems(tmp_path_factory):
    """The mt-metrics-eval layout of ``evil_mtme``, with a system named by a hostile file name
    (and in every score file) and a hostile source text."""
    from test_mtme import make_data, write_layout

    root = tmp_path_factory.mktemp("mtme_sys")
    h, m = make_data(0)
    m["EVIL\x1b]0;pwned\x07\u202e\nGOLD-METRIC 0.999-refA"] = m.pop("KIWI-src")
    write_layout(root, h, m, lp="en-de")
    for p in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):
        if p.is_file():
            p.write_text(p.read_text().replace("sysB", EVIL_SYSTEM).replace("source 1\n", "source\u202e 1\n"))
        if "sysB" in p.name:
            p.rename(p.with_name(p.name.replace("sysB", EVIL_SYSTEM)))
    return root


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_read_mtme_wrote_raw_names_into_its_tables(evil_mtme_systems, tmp_path, suffix):
    """`read-mtme --out X.csv/.tsv` wrote metric names (file names) and system names raw, ESC,
    BEL and U+202E included, and a newline unquoted in TSV; `--texts-out` wrote U+202E raw."""
    out = tmp_path / f"o{suffix}"
    _invoke(["read-mtme", evil_mtme_systems, "wmt99", "en-de", "--refs", "refA", "--out", out,
             "--texts-out", tmp_path / "t.jsonl"])
    assert _files_unsafe(tmp_path, allow="\t" if suffix == ".tsv" else "") == {}
    texts = pd.read_json(tmp_path / "t.jsonl", lines=True, dtype=False)
    assert EVIL_SYSTEM in set(texts["system"]) and "source\u202e 1" in set(texts["source"])  # whole
    if suffix == ".jsonl":
        frame = pd.read_json(out, lines=True, dtype=False)
        assert EVIL_SYSTEM in set(frame["system"])
    else:
        frame = pd.read_csv(out, sep="\t" if suffix == ".tsv" else ",")
        assert "sysB\\x1b[2J\\u202e" in set(frame["system"])
        assert "EVIL\\x1b]0;pwned\\x07\\u202e\nGOLD-METRIC 0.999-refA" in set(frame.columns)
        assert len(frame) == len(set(zip(frame["system"], frame["input"])))  # no forged row
        sys_frame = pd.read_csv(tmp_path / f"o.sys{suffix}", sep="\t" if suffix == ".tsv" else ",")
        assert "sysB\\x1b[2J\\u202e" in set(sys_frame["system"])


def test_report_wrote_raw_names_into_latex_and_svg(evil_files, tmp_path):
    """`report` wrote the data's names raw into its LaTeX tables (ESC, BEL, U+202E) and into the
    SVG figures, which an XML parser then refused (ESC is not allowed in XML 1.0)."""
    pytest.importorskip("matplotlib")
    import xml.etree.ElementTree as ET

    out = tmp_path / "rep"
    res = _invoke(["report", evil_files / "scores.csv", "--human", "human", "--metrics",
                   ",".join(EVIL_METRICS[:3]), "--quick", "--no-text", "--n-resamples", "20",
                   "--splits", "10", "--seed", "1", "--out", out])
    assert _forged(res.stdout) == []
    bad = _files_unsafe(out)
    bad.pop("report.html", None)  # the HTML escapes names for HTML (docs/security.md)
    assert bad == {}
    tex = (out / "tables" / "corr-human.tex").read_text()
    assert "\\textbackslash{}x1b]0;pwned\\textbackslash{}x07m1" in tex
    svgs = sorted((out / "figures").glob("*.svg"))
    assert svgs
    for p in svgs:
        ET.parse(p)  # well-formed XML
    assert any("\\x1b]0;pwned\\x07m1" in p.read_text() for p in svgs)


@pytest.fixture(scope="module")
def evil_bench_scores(tmp_path_factory):
    """Scores of a metric on the bundled SummEval, in a file whose name (the metric's default
    name) holds an OSC sequence, BEL, U+202E and a newline forging a row."""
    from metaeval import load_dataset

    ds = load_dataset("summeval")
    rng = np.random.default_rng(5)
    path = tmp_path_factory.mktemp("bench") / "ev\x1b]0;pwned\x07\u202e\nGOLD-METRIC 0.999.csv"
    pd.DataFrame([{"dataset": "summeval", "system": s, "input": i, "score": rng.normal()}
                  for s in ds.systems for i in ds.inputs]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("fmt", ["table", "csv", "latex", "json"])
def test_bench_metric_named_by_a_file_forged_a_line(evil_bench_scores, tmp_path, fmt):
    """`bench --scores FILE` names the metric after the file: its signature, printed under the
    ranking table, carried the newline raw and forged a "GOLD-METRIC ..." line; the LaTeX tables
    of --out had ESC, BEL and U+202E raw."""
    pytest.importorskip("matplotlib")
    res = _invoke(["bench", "--scores", evil_bench_scores, "--baselines", "ROUGE.L", "--datasets", "summeval",
                   "--level", "system", "--n-resamples", "20", "--format", fmt, "--out", tmp_path / "o"])
    shown = "ev\\x1b]0;pwned\\x07\\u202e\\nGOLD-METRIC 0"
    bad = _files_unsafe(tmp_path / "o")
    bad.pop("report.html", None)
    assert bad == {}
    if fmt == "table":
        assert _forged(res.stdout) == [] and shown in res.stdout
        assert f"bench|metric:{shown}|" in res.stdout
    elif fmt == "csv":
        import io

        frame = pd.read_csv(io.StringIO(res.stdout))
        assert len(frame) == 2 and "ev\\x1b]0;pwned\\x07\\u202e\nGOLD-METRIC 0" in set(frame["metric"])
    elif fmt == "latex":
        assert _forged(res.stdout) == [] and "ev\\textbackslash{}x1b]0;pwned" in res.stdout
    else:
        assert json.loads(res.stdout)["metric"] == "ev\x1b]0;pwned\x07\u202e\nGOLD-METRIC 0"


@contextlib.contextmanager
def _raw_server(answer):
    """A loopback server that answers every connection with the bytes ``answer``; yields its URL."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def test_datasets_fetch_from_a_garbage_server_printed_its_answer_raw(tmp_path):
    """`datasets --fetch` from a mirror answering a garbage status line crashed with a traceback
    that printed the server's bytes raw (ESC, BEL) instead of one error line."""
    from metaeval.data import REGISTRY

    with _raw_server(b"\x1b]0;pwned\x07 GARBAGE\r\n\r\n") as url:
        from click.testing import CliRunner

        from metaeval.cli import main

        res = CliRunner().invoke(main, ["datasets", "--fetch", next(iter(REGISTRY)), "--cache-dir",
                                        str(tmp_path), "--base-url", url])
    assert res.exit_code == 2, (res.stderr, res.exception)
    assert _unsafe(res.stderr) == [] and len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith("metaeval: error: dataset ") and "sent no valid HTTP answer" in res.stderr
    assert "\\x1b]0;pwned\\x07 GARBAGE" in res.stderr  # the server's bytes, shown escaped



EVIL_HUMAN = "hum\x1b]0;x\x07\u202e\nGOLD-METRIC 0.999"


@pytest.fixture(scope="module")
def evil_human_file(evil_files, tmp_path_factory):
    import csv

    path = tmp_path_factory.mktemp("evil_human") / "scores.csv"
    frame = pd.read_csv(evil_files / "scores.csv", keep_default_na=False)
    frame.rename(columns={"human": EVIL_HUMAN}).to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
    return path


@pytest.mark.parametrize("command, args", [
    ("correlate", ["--ci", "none"]), ("compare", ["--n-resamples", "20"]),
    ("measures", ["--n-resamples", "10", "--splits", "10"]), ("local", ["--context", "system"])])
def test_human_name_in_a_signature_forged_a_caption_line(evil_human_file, command, args):
    """A signature is one line (``human:NAME|level:...``), printed under the table: a human
    column named with a newline split it and forged a "GOLD-METRIC 0.999|..." line."""
    res = _invoke([command, evil_human_file, "--human", EVIL_HUMAN, *args])
    assert _forged(res.stdout) == []
    assert "human:hum\\x1b]0;x\\x07\\u202e\\nGOLD-METRIC 0.999|" in res.stdout
