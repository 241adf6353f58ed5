"""The `metaeval diagnose` command against metaeval.diagnostics (tested
against scipy and slow references in test_diagnostics.py)."""

import io

import numpy as np
import pandas as pd
from click.testing import CliRunner

import metaeval
from metaeval import diagnostics as dg
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_diagnose_matches_library(tmp_path):
    res = run("diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU",
              "--n-resamples", 20, "--seed", 0, "--format", "csv", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output))
    ds = metaeval.load_dataset("summeval")
    ks = dg.ks_score(ds, "coherence", metrics=["ROUGE.1", "BLEU"]).to_frame()
    mc = dg.meta_correlation(ds, "coherence", metrics=["ROUGE.1", "BLEU"]).to_frame()
    np.testing.assert_allclose(got[got.analysis == "ks"].statistic, ks.statistic)
    np.testing.assert_allclose(got[got.analysis == "meta_correlation"].statistic, mc.statistic)
    for f in ("ks.csv", "meta_correlation.csv", "sample_size.csv", "correlation_design.csv",
              "diagnostics.json", "ks.png", "meta_correlation.png", "correlation_design.png"):
        assert (tmp_path / f).exists(), f


def test_diagnose_bad_sizes():
    res = run("diagnose", "summeval", "--human", "coherence", "--sizes", "ten")
    assert res.exit_code == 2 and "--sizes" in res.output
