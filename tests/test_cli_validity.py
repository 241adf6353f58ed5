"""The `metaeval validity` command against the library functions
(metaeval.mtmm / cfa / concurrent_validity, tested against R lavaan and
closed forms in test_validity.py)."""

import io
import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

import metaeval
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_validity_outputs_match_library(tmp_path):
    res = run("validity", "summeval", "--metrics", "ROUGE.1,G.EVAL.4.COH", "--out", tmp_path,
              "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    ds = metaeval.load_dataset("summeval")
    traits = ["coherence", "consistency", "fluency", "relevance"]
    fa = metaeval.cfa(ds)
    fc = fa.correlation_matrix()
    assert doc["cfa_factor_correlations"]["relevance"]["coherence"] == fc.loc["coherence", "relevance"]
    cv = metaeval.concurrent_validity(ds, traits, metrics=["ROUGE.1", "G.EVAL.4.COH"])
    np.testing.assert_allclose([r["statistic"] for r in doc["concurrent_validity"]],
                               cv.to_frame().statistic)
    m = metaeval.mtmm(ds, traits)
    np.testing.assert_allclose([r["convergent"] for r in doc["campbell_fiske"]],
                               m.campbell_fiske().convergent)
    html = (tmp_path / "mtmm.html").read_text()
    assert "<table" in html
    for f in ("mtmm.csv", "campbell_fiske.csv", "concurrent_validity.csv", "cfa_parameters.csv",
              "cfa_fit.csv", "cfa_factor_correlations.csv"):
        assert (tmp_path / f).exists(), f


def test_validity_table_marks_blocks():
    res = run("validity", "summeval", "--metrics", "ROUGE.1", "--no-cfa")
    assert res.exit_code == 0, res.output
    assert "(0.96)" in res.output  # a reliability on the diagonal
    assert "[0.74]" in res.output  # a convergent entry
    assert "0.43*" in res.output  # a heterotrait-monomethod entry
    assert "[convergent]" in res.output  # the legend


def test_validity_needs_raters(tmp_path):
    g = np.random.default_rng(0)
    df = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 4), "input": list("wxyz") * 3,
                       "human": g.normal(size=12), "m": g.normal(size=12)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    res = run("validity", path, "--human", "human")
    assert res.exit_code == 2
    assert "raters" in res.output and len(res.output.strip().splitlines()) == 1


def _six_traits_three_slots(tmp_path):
    """6 traits x 3 rater slots on 5 systems x 8 inputs, traits 0-2 nearly collinear: the
    ordinal CFA does not converge (factor correlations in the thousands, as in the report
    finding "Coherence-Relevance 41313.978")."""
    g = np.random.default_rng(0)
    traits = [f"T{k}" for k in range(6)]
    base = g.normal(size=(5, 8))
    metric = base + np.random.default_rng(1).normal(size=(5, 8))
    rows = []
    for s in range(5):
        for i in range(8):
            for r in range(3):
                rec = {"system": f"s{s}", "input": f"i{i}", "rater": f"r{r}", "m": metric[s, i]}
                for k, t in enumerate(traits):
                    rec[t] = int(np.clip(np.round(3 + base[s, i] + g.normal(scale=0.3 if k < 3 else 2.0)), 1, 5))
                rows.append(rec)
    path = tmp_path / "six.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, traits


def test_cfa_not_converged_is_flagged_everywhere_and_drives_nothing(tmp_path):
    # Regression: a CFA that did not converge was shown as results (factor correlations
    # 41313.978 in the report's reading), fed concurrent validity, and its CSVs had no flag.
    import warnings

    path, traits = _six_traits_three_slots(tmp_path)
    ds = metaeval.read_dataset(path, human=traits, metrics=["m"], rater="rater")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fa = metaeval.cfa(ds, {t: [f"{t}@{r}" for r in ds.rater_labels(t)] for t in traits})
    # a correlation outside [-1, 1] cannot be an estimate of one: the fit must be flagged
    assert np.abs(fa.factor_correlations).max() > 1
    assert not fa.interpretable and not fa.admissible
    assert "not interpretable" in fa.problem and "try" in fa.problem
    assert fa.fit_frame()[["converged", "admissible"]].drop_duplicates().shape == (1, 2)
    assert not fa.to_frame().admissible.any()
    import pytest

    with pytest.raises(metaeval.errors.ParameterError, match="not interpretable"):
        metaeval.concurrent_validity(ds, fa)
    args = ["validity", path, "--human", ",".join(traits), "--metrics", "m", "--rater-col", "rater"]
    res = run(*args, "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "NOT INTERPRETABLE" in res.output and "factor correlations\n" not in res.output
    fit = pd.read_csv(tmp_path / "out" / "cfa_fit.csv")
    assert {"converged", "admissible"} <= set(fit.columns) and not fit.admissible.any()
    assert "admissible" in pd.read_csv(tmp_path / "out" / "cfa_parameters.csv").columns
    res = run(*args, "--format", "json")
    assert json.loads(res.stdout)["cfa"]["interpretable"] is False
    res = run(*args, "--criterion", "factors")
    assert res.exit_code == 2 and "not interpretable" in res.output
