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
