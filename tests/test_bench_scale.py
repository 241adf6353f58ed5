"""Smoke tests of the scale benchmarks (issue 15): the scripts run, and the WMT
table equals mt-metrics-eval on a small instance.

Oracle: mt-metrics-eval stats.py (``Correlation.Pearson/Spearman/Kendall/
KendallVariants/KendallWithTiesOpt``, ``Agreement``), github.com/google-research/
mt-metrics-eval commit 68a481a, kept in ``../shared/anchors``; the test skips
when it is absent.  The benchmark compares every (method, level) cell within
an absolute 1e-9 and exits non-zero on a mismatch.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from _mtme_anchor import CANDIDATES, anchor_dir

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wmt_table_small_equals_mt_metrics_eval(tmp_path, capsys):
    if anchor_dir() is None:
        pytest.skip(f"mt-metrics-eval oracle not found in {', '.join(map(str, CANDIDATES))} (../shared is absent)")
    wt = _load("wmt_table")
    out = tmp_path / "wmt.json"
    wt.main(["--systems", "6", "--segments", "40", "--metrics", "3", "--acc-eq-segments", "10",
             "--repeats", "1", "--out", str(out)])
    res = json.loads(out.read_text())
    assert res["mismatches"] == []
    cells = {(r["method"], r["level"]) for r in res["rows"]}
    assert len(cells) == 7 * 4 + 1  # 7 methods x 4 levels + pairwise_accuracy at system
    assert all(r["max_abs_diff"] <= 1e-9 for r in res["rows"])


def test_wmt_table_data_is_mqm_like():
    wt = _load("wmt_table")
    cols = wt.make_data(16, 200, 8, seed=0)
    human = cols["mqm"]
    assert (human <= 0).all() and (human == human.round()).all()  # integer penalty sums
    assert (human == 0).mean() > 0.3  # many zeros: heavy ties
    assert len(cols) == 9


def test_growth_child_reports_one_json_line(capsys, monkeypatch):
    gr = _load("growth")
    monkeypatch.setattr(sys, "argv", ["growth.py"])
    gr.child("perm", 400, 3)
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("RESULT "))
    rec = json.loads(line[7:])
    assert rec["cells"] == 400 and rec["n_inputs"] == 20
    # pair comparisons at input level: 2 metrics x 20 inputs x C(20, 2) pairs x 3 resamples
    assert rec["input_pair_comparisons"] == 2 * 20 * 190 * 3
    assert 0.0 < rec["pvalue_input"] <= 1.0 and 0.0 < rec["pvalue_global"] <= 1.0


def test_cellboot_benchmark_finds_equal_replicates(capsys):
    # the benchmark times both ways and compares the values: bit-identical for
    # Kendall and the system level, to rounding for Pearson/Spearman elsewhere
    _load("cellboot").main(["--n-systems", "4", "--n-inputs", "30", "--b", "2"])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("RESULT "))
    rows = json.loads(line[7:])
    assert len(rows) == 12
    for r in rows:
        if r["level"] == "system" or r["method"] == "kendall_b":
            assert r["identical"], r
        assert r["max_abs_diff"] <= 1e-12, r


def test_scale_target_runs_all_levels_and_methods(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SCALE_TARGET_OUT", str(tmp_path / "t.csv"))
    _load("scale").main(["--target", "--n-systems", "4", "--n-inputs", "25", "--n-metrics", "2",
                         "--n-resamples", "5"])
    import pandas as pd

    frame = pd.read_csv(tmp_path / "t.csv")
    assert len(frame) == 2 * 4 * 3 and frame["ci_low"].notna().all()


def test_scale_compare_target_runs_every_level_and_method(capsys):
    _load("scale").main(["--compare", "--n-systems", "4", "--n-inputs", "25", "--n-metrics", "2",
                         "--n-resamples", "5"])
    lines = [x for x in capsys.readouterr().out.splitlines() if " s wall " in x]
    assert len(lines) == 2 * 3 and all("p=" in x for x in lines)
