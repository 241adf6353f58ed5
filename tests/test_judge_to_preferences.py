"""End to end: the pairwise LLM judge's table feeds the preference analyses (issue 17).

``metaeval.textmetrics.judge_pairs`` asks a scripted OpenAI-compatible server on loopback
(``tests/_judge_server.py``: directive ``[[pair]]`` prefers the text with the higher
``quality:N``, ``[[pairbias]]`` always answers "A") and returns its long table; that table goes
unchanged into ``metaeval.PreferenceData.from_frames`` with human preferences derived from
per-rater ratings, and ``metaeval.preference_agreement`` gives the agreement.  The expected
accuracies and Cohen's kappa are computed here by hand from the fixture (labels A / tie / B per
(pair, rater) cell, kappa = (p_o - p_e) / (1 - p_e) with pooled marginals, Cohen 1960).
"""

from __future__ import annotations

import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import textmetrics as tm
from metaeval.data import Dataset

sys.path.insert(0, str(Path(__file__).parent))
from _judge_server import ScriptedServer  # noqa: E402

KEY_ENV = "METAEVAL_TEST_KEY"
SYSTEMS = ("S1", "S2", "S3")
INPUTS = ("i1", "i2", "i3", "i4")
#: quality:N written in each output (what the scripted judge compares)
QUALITY = {"S1": [3, 1, 2, 4], "S2": [1, 1, 3, 2], "S3": [2, 3, 3, 1]}
#: ratings of 3 raters per (system, input): rater r sees quality + noise of its own
RATINGS = {
    "r1": {"S1": [3, 1, 2, 4], "S2": [1, 2, 3, 2], "S3": [2, 3, 3, 1]},
    "r2": {"S1": [3, 2, 2, 3], "S2": [2, 1, 2, 2], "S3": [2, 3, 3, 2]},
    "r3": {"S1": [2, 1, 3, 4], "S2": [1, 1, 3, 3], "S3": [3, 2, 1, 1]},
}


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(hang=2.0) as srv:
        yield srv


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-secret")


def _dataset():
    rows = [{"system": s, "input": i, "hypothesis": f"quality:{QUALITY[s][k]} output of {s}",
             "source": f"source of {i}"} for s in SYSTEMS for k, i in enumerate(INPUTS)]
    return Dataset.from_arrays({"h": np.ones((3, 4))}, human="h", systems=list(SYSTEMS),
                               inputs=list(INPUTS), texts=pd.DataFrame(rows))


def _judge(srv, directive, name, tmp_path):
    backend = tm.OpenAIBackend("scripted", base_url=srv.url, timeout=2.0, backoff=0.01,
                               max_backoff=0.05, max_retries=2, concurrency=2,
                               api_key_env=KEY_ENV)
    return tm.LLMJudge(f"[[{directive}]] which summary is more coherent", backend=backend,
                       cache_dir=tmp_path / name, name=name)


def _human_long():
    rows = []
    for k, i in enumerate(INPUTS):
        for a, b in itertools.combinations(SYSTEMS, 2):
            for r, rat in RATINGS.items():
                x, y = rat[a][k], rat[b][k]
                rows.append({"input": i, "system_a": a, "system_b": b, "rater": r,
                             "preference": 1.0 if x > y else 0.0 if x < y else 0.5})
    return pd.DataFrame(rows)


def _label(p):
    return "A" if p > 0.5 else "B" if p < 0.5 else "tie"


def _by_hand(judge_label):
    """acc and pooled Cohen's kappa of judge label vs each rater's label."""
    cells = []
    for k, i in enumerate(INPUTS):
        for a, b in itertools.combinations(SYSTEMS, 2):
            for rat in RATINGS.values():
                x, y = rat[a][k], rat[b][k]
                h = "A" if x > y else "B" if x < y else "tie"
                cells.append((judge_label(k, a, b), h))
    n = len(cells)
    p_o = sum(j == h for j, h in cells) / n
    cats = ("A", "tie", "B")
    p_e = sum((sum(j == c for j, _ in cells) / n) * (sum(h == c for _, h in cells) / n)
              for c in cats)
    return p_o, (p_o - p_e) / (1 - p_e)


def test_judge_pairs_table_into_preference_agreement(server, key, tmp_path):
    ds = _dataset()
    fair = tm.judge_pairs(ds, _judge(server, "pair", "fair", tmp_path))
    biased = tm.judge_pairs(ds, _judge(server, "pairbias", "biased", tmp_path))
    assert fair["preference"].notna().all() and biased["preference"].notna().all()
    judges = pd.concat([fair, biased], ignore_index=True)
    data = metaeval.PreferenceData.from_frames(_human_long(), judges)
    assert data.judges == ("fair", "biased") and data.raters == ("r1", "r2", "r3")
    assert len(data.pairs) == len(INPUTS) * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = metaeval.preference_agreement(data, n_resamples=0, epsilon=0.0)
    frame = res.to_frame()

    def value(judge, measure):
        row = frame[(frame["judge"] == judge) & (frame["measure"] == measure)]
        assert len(row) == 1, (judge, measure)
        return float(row["statistic"].iloc[0])

    # the fair judge states the quality order in both orders
    def fair_label(k, a, b):
        return _label(1.0 if QUALITY[a][k] > QUALITY[b][k] else
                      0.0 if QUALITY[a][k] < QUALITY[b][k] else 0.5)

    acc, kappa = _by_hand(fair_label)
    assert value("fair", "acc_23") == pytest.approx(acc, abs=1e-12)
    assert value("fair", "kappa_raters") == pytest.approx(kappa, abs=1e-12)
    # the biased judge says "A" in both orders: 1.0 for "ab", 0.0 for "ba" -> a tie on average
    acc_b, kappa_b = _by_hand(lambda k, a, b: "tie")
    assert value("biased", "acc_23") == pytest.approx(acc_b, abs=1e-12)
    assert value("biased", "kappa_raters") == pytest.approx(kappa_b, abs=1e-12)
    assert acc > acc_b
    # position consistency from the same table: the fair judge gives the same verdict in both
    # orders on all 12 pairs (ties included); the biased one picks the first-shown output in
    # both orders on every pair
    pc = metaeval.position_consistency(data, n_resamples=0)
    f, b = pc.get("fair"), pc.get("biased")
    assert (f.n, f.consistency, f.first_position, f.second_position) == (12, 1.0, 0.0, 0.0)
    assert (b.n, b.consistency, b.first_position, b.second_position) == (12, 0.0, 1.0, 0.0)
