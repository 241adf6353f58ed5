"""Regression tests of issue 24 ("trust under attack, round 2"): each test is named after the
defect it pins and failed before its fix.

Oracles: the expected outcomes are read off the issue's text (which number a hostile answer
must *not* give, which bytes must not reach a terminal) and off hand-written answers; servers
listen on 127.0.0.1 only (tests/_judge_server.py).
"""

from __future__ import annotations

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
