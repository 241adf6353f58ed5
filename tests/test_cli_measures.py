"""The `metaeval measures` command: tables, output folder, resumed runs.

Expected values: the library functions (metaeval.discriminative_power and
metaeval.ranking_consistency, tested in test_measures.py) on the same data
and seed."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval.cli import main

METRICS = "ROUGE.1,ROUGE.2,BLEU"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_measures_csv_matches_library():
    res = run("measures", "summeval", "--human", "coherence", "--metrics", METRICS,
              "--measures", "system:pearson,input:kendall_b", "--n-resamples", 50,
              "--splits", 20, "--seed", 1, "--format", "csv")
    assert res.exit_code == 0, res.output
    got = pd.read_csv(__import__("io").StringIO(res.output))
    ds = metaeval.load_dataset("summeval")
    kw = dict(metrics=METRICS.split(","), measures=["system:pearson", "input:kendall_b"], rng=1)
    dp = metaeval.discriminative_power(ds, "coherence", n_resamples=50, **kw)
    rc = metaeval.ranking_consistency(ds, "coherence", n_splits=20, **kw)
    np.testing.assert_allclose(got.dp, dp.dp)
    np.testing.assert_allclose(got.rc, rc.rc)
    assert list(got.columns) == ["level", "method", "dp", "dp_rank", "rc", "rc_se", "rc_rank"]


def test_measures_out_folder_and_resume(tmp_path):
    out = tmp_path / "run"
    args = ["measures", "summeval", "--human", "coherence", "--metrics", METRICS,
            "--measures", "group-by-system:spearman,global:pearson", "--n-resamples", 30, "--splits", 10,
            "--out", out, "--format", "json"]
    first = run(*args)
    assert first.exit_code == 0, first.output
    for f in ("measures.csv", "dp.csv", "dp_pvalues.csv", "dp_curves.csv", "rc.csv",
              "measures.json", "pvalue_curves.png", "seed.txt"):
        assert (out / f).exists(), f
    # a restart reuses the recorded seed and the finished units: same numbers
    n_units = len(list((out / "checkpoints" / "dp").glob("*.npz")))
    assert n_units == 3
    again = run(*args)
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["table"] == json.loads(first.output)["table"]
    # after losing a unit, the resumed run recomputes it to the same value
    next((out / "checkpoints" / "dp").glob("*.npz")).unlink()
    third = run(*args)
    assert json.loads(third.output)["table"] == json.loads(first.output)["table"]
    # other arguments in the same folder: refused with a clear message
    bad = run(*[a if a != 30 else 31 for a in args])
    assert bad.exit_code == 2
    assert "other arguments" in bad.output


def test_measures_errors_are_one_line():
    res = run("measures", "summeval", "--human", "coherence", "--metrics", "ROUGE.1",
              "--splits", 0)
    assert res.exit_code == 2
    assert "at least 2 metrics" in res.output
    res = run("measures", "summeval", "--human", "coherence", "--measures", "sys:pearson")
    assert res.exit_code == 2
    assert "'sys'" in res.output and len(res.output.strip().splitlines()) == 1


def test_pvalue_curve_figure():
    pytest.importorskip("matplotlib")
    from metaeval.report.figures import pvalue_curves

    ds = metaeval.load_dataset("summeval")
    dp = metaeval.discriminative_power(ds, "coherence", metrics=METRICS.split(","),
                                       measures=["system:pearson", "global:kendall_b"],
                                       n_resamples=20, rng=0)
    fig = pvalue_curves(dp)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2
    # each curve is the measure's p-values in descending order
    np.testing.assert_allclose(lines[0].get_ydata(), np.sort(dp.pvalues[0])[::-1])


def test_measures_checks_rc_before_running_dp():
    res = run("measures", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,ROUGE.2")
    assert res.exit_code == 2
    assert "at least 3 metrics" in res.output and "--n-splits 0" in res.output
