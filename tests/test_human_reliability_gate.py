"""Issue 23 item 4: each level's recommendation shows the reliability of the human scores it
correlates, and a level below the stated threshold (.7) recommends no metric, saying why.

References written out here or from pingouin: Cronbach's alpha of the system x input matrix
(inputs as items, systems as examinees: alpha = k/(k-1) (1 - sum of item variances / variance of
the totals), Cronbach 1951) and ICC(2,k) of the raters over the cells (pingouin.intraclass_corr,
"ICC(A,k)", i.e. ICC(2,k); Shrout and Fleiss 1979)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import reliability as rl
from metaeval.report import ReportConfig, build
from metaeval.report._readings import HUMAN_RELIABILITY_MIN, human_reliability


def _data(seed=0, N=8, M=30, cell_noise=3.0):
    """Systems far apart (reliable system means), raters that disagree on the cells (low ICC)."""
    g = np.random.default_rng(seed)
    sys_q = np.linspace(-2, 2, N)[:, None]
    ratings = np.clip(np.rint(3 + sys_q[None] + cell_noise * g.standard_normal((3, N, M))), 1, 5)
    truth = sys_q + 0.0 * g.standard_normal((N, M))
    scores = {"h": ratings, "good": truth + 0.3 * g.standard_normal((N, M)),
              "fair": truth + g.standard_normal((N, M)), "noise": g.standard_normal((N, M))}
    return metaeval.Dataset.from_arrays(scores, human=["h"], systems=[f"s{i}" for i in range(N)],
                                        inputs=[f"d{j}" for j in range(M)])


def _alpha_reference(X):
    k = X.shape[1]
    return k / (k - 1) * (1 - X.var(axis=0, ddof=1).sum() / X.sum(axis=1).var(ddof=1))


def _icc2k_reference(ds):
    pg = pytest.importorskip("pingouin")
    R = ds.ratings("h")  # (raters, systems, inputs)
    long = pd.DataFrame([(f"{i}/{j}", f"r{r}", R[r, i, j]) for r in range(R.shape[0]) for i in range(R.shape[1])
                         for j in range(R.shape[2])], columns=["cell", "rater", "y"])
    return float(pg.intraclass_corr(long, targets="cell", raters="rater", ratings="y").set_index("Type").ICC["ICC(A,k)"])  # ICC2k: two-way random, absolute agreement, mean of k


def test_human_reliability_reads_the_reliability_section():
    ds = _data()
    state = {"reliability": {
        "consistency": rl.consistency(ds, ["h"], ci="none"),
        "agreement": rl.agreement(ds, ["h"], method=("krippendorff_interval", "icc2k"))}}
    v, text = human_reliability(state, "h", "system")
    assert v == pytest.approx(_alpha_reference(ds.scores("h")), abs=1e-10) and "Cronbach's alpha" in text
    icc = _icc2k_reference(ds)
    for lv in ("input", "item", "global"):
        v, text = human_reliability(state, "h", lv)
        assert v == pytest.approx(icc, abs=1e-10) and text.startswith("ICC(2,k)")
    assert np.isnan(human_reliability({"reliability": {}}, "h", "item")[0])


def test_a_level_with_unreliable_human_scores_recommends_no_metric():
    ds = _data()
    rep = build(ds, ReportConfig(quick=True, seed=0, human=("h",), pairwise="all", splits=10,
                                 levels=("system", "item")))
    sys_alpha = _alpha_reference(ds.scores("h"))
    icc2k = _icc2k_reference(ds)
    assert sys_alpha >= HUMAN_RELIABILITY_MIN > icc2k  # the data do what they are built for
    sec = next(s for s in rep.sections if s.id == "recommendation")
    t = next(t for t in sec.tables if t.id == "rec-trust")
    keys = [c.key for c in t.columns]
    rows = {r[keys.index("level")]: r for r in t.rows}
    item, system = rows["item"], rows["system"]
    # the table's cell is short (QA pass: the whole reason kept the reliability column off-screen);
    # the reading says it whole
    assert item[keys.index("trust")] == "no trusted metric: human scores unreliable (< 0.7)"
    assert item[keys.index("human_reliability")].startswith("ICC(2,k)")
    assert not system[keys.index("trust")].startswith("no trusted metric")
    assert system[keys.index("human_reliability")].startswith("Cronbach's alpha over inputs")
    data = rep.results["recommendation"]["trust"]["h"]
    assert data["item"]["trust"] == [] and data["item"]["human_reliability"] == pytest.approx(icc2k)
    rec = " ".join(r.text for r in sec.readings if r.rule == "rec-trust")
    assert "item level: no trusted metric: the human scores are unreliable at this level" in rec


def test_rotating_raters_showed_a_dash_for_the_human_reliability_without_a_reason():
    """QA pass: with rotating raters (each cell rated by 3 of 6 raters) ICC(2,k) is not defined
    (reliability.agreement: it needs the same raters in every cell), the report's 'reliability of
    the human scores' cell read "ICC(2,k) of the raters' mean – (...)" and the .7 gate silently did
    not apply. The text now says why and that the gate is not applied."""
    from metaeval.errors import RaterDesignWarning

    g = np.random.default_rng(3)
    rows = [{"system": f"s{i}", "input": f"d{j}", "rater": f"r{(j + t) % 6}", "h": int(g.integers(1, 6)),
             "m": float(i + j)} for j in range(12) for i in range(4) for t in range(3)]
    ds = metaeval.Dataset.from_frame(pd.DataFrame(rows), human="h", rater="rater")
    with pytest.warns(RaterDesignWarning):
        agr = rl.agreement(ds, ["h"], method=("krippendorff_interval", "icc2k"))
    state = {"reliability": {"agreement": agr}}
    for lv in ("input", "item", "global"):
        v, text = human_reliability(state, "h", lv)
        assert np.isnan(v)
        assert "raters rotate over the cells" in text and "gate is not applied" in text, text


def _icc1k_reference(ds, column):
    """One-way random ICC(1,k) = (MSB - MSW) / MSB over the cells, each with its own k ratings
    (Shrout and Fleiss 1979, case 1; McGraw and Wong 1996, model 1), written out here."""
    R = ds.ratings(column).reshape(ds.ratings(column).shape[0], -1).T  # cells x rater slots, NaN where unrated
    cells = [row[np.isfinite(row)] for row in R]
    k = max({len(c) for c in cells}, key=[len(c) for c in cells].count)
    Y = np.array([c for c in cells if len(c) == k])
    n = len(Y)
    msb = k * ((Y.mean(axis=1) - Y.mean()) ** 2).sum() / (n - 1)
    msw = ((Y - Y.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (k - 1))
    return (msb - msw) / msb


def test_rotating_raters_passed_the_reliability_gate_unchecked():
    """QA pass: with rotating raters the report asked agreement() for ICC(2,k) only, which is NaN for
    that design, so a level correlating noisy human scores still recommended metrics, while
    `metaeval reliability` showed ICC(1,k) = .41 for the same column. The report now computes the
    one-way ICC(1,k) for such designs and gates on it."""
    g = np.random.default_rng(11)
    N, M, k = 6, 24, 3
    sys_q = np.linspace(-1.5, 1.5, N)
    rows = []
    for j in range(M):
        for i in range(N):
            truth, noise = sys_q[i] + 0.3 * g.standard_normal(), float(g.standard_normal())
            for t in range(k):  # raters r0..r5 rotate: input j is rated by r(j), r(j+1), r(j+2)
                rows.append({"system": f"s{i}", "input": f"d{j}", "rater": f"r{(j + t) % 6}",
                             "h": float(np.clip(np.rint(3 + truth + 3.0 * g.standard_normal()), 1, 5)),
                             "good": truth, "noise": noise})
    ds = metaeval.Dataset.from_frame(pd.DataFrame(rows), human="h", rater="rater")
    icc1k = _icc1k_reference(ds, "h")
    assert icc1k < HUMAN_RELIABILITY_MIN  # the data do what they are built for
    rep = build(ds, ReportConfig(quick=True, seed=0, human=("h",), pairwise="all", splits=10,
                                 levels=("system", "item")))
    sec = next(s for s in rep.sections if s.id == "recommendation")
    t = next(t for t in sec.tables if t.id == "rec-trust")
    keys = [c.key for c in t.columns]
    item = {r[keys.index("level")]: r for r in t.rows}["item"]
    assert item[keys.index("human_reliability")].startswith("ICC(1,k) of the raters' mean"), item
    assert item[keys.index("trust")] == "no trusted metric: human scores unreliable (< 0.7)", item
    data = rep.results["recommendation"]["trust"]["h"]["item"]
    assert data["trust"] == [] and data["human_reliability"] == pytest.approx(icc1k, rel=1e-10)
    # QA pass: the reliability section's reading named only ICC(2,k), which is undefined for rotating
    # raters, so it stopped after Krippendorff's alpha; it now names the one-way ICC(1,k) it gates on
    rel = next(s for s in rep.sections if s.id == "reliability")
    text = " ".join(r.text for r in rel.readings if r.rule == "rel-agreement")
    assert "ICC(1,k)" in text and "rotating" in text, text
    assert f"{icc1k:.2f}" in text, (icc1k, text)
    # QA pass: the data section counted 6 raters for h without saying that each cell has 3 of them
    data_sec = next(s for s in rep.sections if s.id == "data")
    t = next(t for t in data_sec.tables if t.id == "data-columns")
    keys = [c.key for c in t.columns]
    row = {r[0]: r for r in t.rows}["h"]
    assert (row[keys.index("raters_or_runs")], row[keys.index("per_cell")]) == (6, k)  # by construction
