"""Issue 23 item 2: one story per row.  No view shows a p-value below alpha beside an interval that
contains 0 (or, two-sided, a p-value above alpha beside one that excludes 0) without a note saying
why.  The reference is the rule itself, applied here to the numbers of each view; the data are the
bundled SummEval scores, where the analytic (i.i.d.) p-value and the boot-both interval disagree."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval.cli import main
from metaeval.stats.inference import story_note


def disagrees(p, lo, hi, alpha=0.05, two_sided=True, null=0.0):
    """The rule, written out: 'significant' beside an interval holding the null, or the reverse."""
    if any(math.isnan(v) for v in (p, lo, hi)):
        return False
    holds = lo <= null <= hi
    return (p < alpha and holds) or (two_sided and p >= alpha and not holds)


@pytest.fixture(scope="module")
def summeval():
    return metaeval.load_dataset("summeval")


#: coherence vs SummaQA at global level: analytic p = 1.1e-4 (scipy.stats.pearsonr on the 1700
#: cells) beside a boot-both interval that contains 0 at seed 0
CASE = {"human": "coherence", "metrics": ["SummaQA", "ROUGE.1", "BARTScore"], "level": ["system", "global"]}


def test_story_note_rule_on_random_rows():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        p = float(rng.choice([rng.random(), rng.random() * 0.1, 0.05]))
        lo = float(rng.normal(0, 0.3))
        hi = lo + float(rng.random())
        alt = str(rng.choice(["two-sided", "greater"]))
        note = story_note(p, lo, hi, 0.95, why="w", alternative=alt)
        assert bool(note) == disagrees(p, lo, hi, two_sided=alt == "two-sided"), (p, lo, hi, alt)
        if note:
            assert note.endswith(": w") and f"{p:.4g}" in note
    assert story_note(float("nan"), -1, 1, 0.95, why="w") == ""
    assert story_note(0.01, -1, 1, 0.99, why="w") == ""  # alpha is 1 - confidence level: .01 is not < .01
    assert story_note(0.009, -1, 1, 0.99, why="w").startswith("p = 0.009 < 0.01 but the 99% interval")


def test_correlate_rows_that_disagree_carry_a_note(summeval):
    from scipy.stats import pearsonr

    res = metaeval.correlate(summeval, CASE["human"], metrics=CASE["metrics"], level=CASE["level"], rng=0)
    x, y = summeval.scores("SummaQA").ravel(), summeval.scores("coherence").ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    r = res.get("SummaQA", level="global")
    assert r.pvalue == pytest.approx(pearsonr(x[ok], y[ok]).pvalue, rel=1e-9)
    assert r.pvalue < 0.05 and r.ci_low <= 0 <= r.ci_high  # the contradiction
    assert "analytic p-value treats the 1700 pairs as independent" in r.notes
    for r in res:
        assert bool(r.notes) == disagrees(r.pvalue, r.ci_low, r.ci_high), r


def test_every_correlate_view_carries_the_note(summeval):
    args = ["correlate", "summeval", "--human", CASE["human"], "--metrics", ",".join(CASE["metrics"]),
            "--level", "system,global", "--seed", "0"]
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0, table.output
    line = next(ln for ln in table.output.splitlines() if "SummaQA" in ln and "global" in ln)
    assert "*1" in line and "note" in table.output
    assert any(ln.startswith("*1: p = ") and "contains 0" in ln for ln in table.output.splitlines())
    fr = pd.read_csv(io.StringIO(CliRunner().invoke(main, args + ["--format", "csv"]).output))
    js = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).output)
    for rows in (fr.to_dict(orient="records"), js):
        for r in rows:
            note = r["notes"] if isinstance(r["notes"], str) else ""
            assert bool(note) == disagrees(r["pvalue"], r["ci_low"], r["ci_high"]), r
        assert sum(bool(r["notes"]) and isinstance(r["notes"], str) for r in rows) >= 1


def test_report_correlation_table_says_which_entries_disagree(tmp_path, summeval):
    from metaeval.report import ReportConfig, build

    ds = summeval.subset(metrics=CASE["metrics"]) if hasattr(summeval, "subset") else summeval
    rep = build(ds, ReportConfig(quick=True, seed=0, human=("coherence",), metrics=tuple(CASE["metrics"]),
                                 levels=("system", "global"), n_resamples=1000, splits=10, pairwise=2))
    sec = next(s for s in rep.sections if s.id == "correlations")
    t = next(t for t in sec.tables if t.id == "corr-coherence")
    assert "SummaQA (global)" in t.note and "notes field says why" in t.note
    rows = rep.results["correlations"]["coherence"]
    rows = rows["results"] if isinstance(rows, dict) and "results" in rows else rows
    assert any("contains 0" in r["notes"] for r in rows)


def test_compare_bootstrap_rows_with_disagreeing_p_and_interval_carry_a_note(summeval):
    hits = 0
    for seed in range(6):
        c = metaeval.compare(summeval, "coherence", "BLEU", "ROUGE.1", level="system", test="boot-both",
                             n_resamples=300, rng=seed)
        assert bool(c.notes) == disagrees(c.pvalue, c.ci_low, c.ci_high), c
        hits += bool(c.notes)
    args = ["compare", "summeval", "--human", "coherence", "--metrics", "BLEU,ROUGE.1", "--level", "system",
            "--test", "boot-both", "--n-resamples", "300", "--seed", "0"]
    js = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).output)
    assert bool(js["notes"]) == disagrees(js["pvalue"], js["ci_low"], js["ci_high"])
    table = CliRunner().invoke(main, args).output
    assert "CI" in table  # the interval beside the p-value, so the two can be read together


def _icc_case():
    """3 systems x 4 inputs x 3 raters (seed 54 of a search): ICC(2,1) one-sided F-test p = 0.030
    beside a 95% McGraw-Wong interval [-0.010, 0.713]."""
    g = np.random.default_rng(54)
    q = 0.25 * g.standard_normal((3, 4))
    return q[None] + g.standard_normal((3, 3, 4))


def test_icc_rows_with_a_one_sided_p_beside_an_interval_holding_0_carry_a_note():
    from metaeval import reliability as rl

    for seed in range(60):
        g = np.random.default_rng(seed)
        R = 0.3 * g.standard_normal((3, 4))[None] + g.standard_normal((3, 3, 4))
        ds = metaeval.Dataset.from_arrays({"h": R}, human=["h"])
        for r in rl.agreement(ds, ["h"], method=("icc2", "icc2k", "icc3", "krippendorff_interval")):
            assert bool(r.notes) == disagrees(r.pvalue, r.ci_low, r.ci_high, two_sided=False), r
    ds = metaeval.Dataset.from_arrays({"h": _icc_case()}, human=["h"])
    r = rl.agreement(ds, ["h"], method=("icc2",))[0]
    assert 0.025 < r.pvalue < 0.05 and r.ci_low < 0 < r.ci_high and "one-sided" in r.notes


def test_reliability_views_carry_the_icc_note(tmp_path):
    R = _icc_case()
    rows = [{"system": f"s{i}", "input": f"d{j}", "rater": f"r{k}", "h": R[k, i, j], "m": float(i + j)}
            for k in range(3) for i in range(3) for j in range(4)]
    path = tmp_path / "icc.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    args = ["reliability", str(path), "--human", "h", "--metrics", "m", "--rater-col", "rater",
            "--agreement", "icc2"]
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0, table.output
    assert any(ln.startswith("*1: p = 0.03011") and "one-sided" in ln for ln in table.output.splitlines())
    js = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).stdout)
    text = json.dumps(js)
    assert "one-sided (ICC > 0)" in text
