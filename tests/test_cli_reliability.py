"""The `metaeval reliability` command against the library functions
(metaeval.stability / consistency / agreement, tested against R psych,
pingouin and krippendorff in test_reliability.py)."""

import io

import numpy as np
import pandas as pd
from click.testing import CliRunner

import metaeval
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_reliability_csv_matches_library(tmp_path):
    res = run("reliability", "summeval", "--metrics", "ROUGE.1,G.EVAL.4.COH", "--human", "coherence",
              "--n-resamples", 50, "--seed", 0, "--format", "csv", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output))
    ds = metaeval.load_dataset("summeval", runs=True)
    st = metaeval.stability(ds, ["ROUGE.1", "G.EVAL.4.COH"]).to_frame()
    co = metaeval.consistency(ds, ["ROUGE.1", "G.EVAL.4.COH"], n_resamples=50, rng=0).to_frame()
    ag = metaeval.agreement(ds, ["coherence"]).to_frame()
    np.testing.assert_allclose(got[got.analysis == "stability"].statistic, st.statistic)
    np.testing.assert_allclose(got[got.analysis == "consistency"].statistic, co.statistic)
    np.testing.assert_allclose(got[got.analysis == "consistency"].ci_low, co.ci_low)
    np.testing.assert_allclose(got[got.analysis == "agreement"].statistic, ag.statistic)
    for f in ("stability.csv", "consistency.csv", "consistency_curve.csv", "agreement.csv",
              "reliability.json", "reliability_bars.png", "alpha_vs_size.png"):
        assert (tmp_path / f).exists(), f


def test_reliability_single_run_metric_is_a_clear_error(tmp_path):
    g = np.random.default_rng(0)
    df = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 4), "input": list("wxyz") * 3,
                       "human": g.normal(size=12), "m": g.normal(size=12)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    res = run("reliability", path, "--metrics", "m", "--human", "human")
    assert res.exit_code == 2
    assert "'m'" in res.output and len(res.output.strip().splitlines()) == 1
