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


def test_reliability_single_run_metric_skips_stability_and_names_run_col(tmp_path):
    # A metric scored once has no test-retest stability, but its consistency is defined: the
    # command computes it and says which option declares runs (it used to stop with an error).
    g = np.random.default_rng(0)
    df = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 4), "input": list("wxyz") * 3,
                       "human": g.normal(size=12), "m": g.normal(size=12)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    res = run("reliability", path, "--metrics", "m", "--human", "human", "--ci", "feldt")
    assert res.exit_code == 0, res.output
    assert "stability skipped" in res.output and "--run)" in res.output
    assert f"{_cronbach(df.pivot(index='system', columns='input', values='m').to_numpy()):.4f}" in res.output


def test_reliability_run_col_gives_stability(tmp_path):
    # --run-col declares the runs of a long file; stability then equals the Pearson correlation
    # of the two runs' system means (seed paper 002's test-retest coefficient for two runs; scipy).
    from scipy.stats import pearsonr

    g = np.random.default_rng(1)
    sys_eff = g.normal(size=6)
    human = g.integers(1, 6, size=(6, 5)).astype(float)
    rows = [{"system": f"s{s}", "input": f"i{i}", "run": r, "human": human[s, i],
             "m": sys_eff[s] + g.normal(scale=0.5)} for s in range(6) for i in range(5) for r in (0, 1)]
    df = pd.DataFrame(rows)
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    res = run("reliability", path, "--metrics", "m", "--human", "human", "--run-col", "run",
              "--ci", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    import json

    doc = json.loads(res.output[res.output.index("{"):])
    means = df.groupby(["run", "system"]).m.mean().unstack()
    np.testing.assert_allclose(doc["stability"][0]["statistic"], pearsonr(means.loc[0], means.loc[1])[0],
                               rtol=1e-12)


def test_reliability_rater_only_file(tmp_path):
    # A file with only human ratings (no metric column): agreement alone, not "columns is empty".
    g = np.random.default_rng(2)
    rows = [{"system": f"s{s}", "input": f"i{i}", "rater": f"r{r}", "human": int(g.integers(1, 6))}
            for s in range(4) for i in range(5) for r in range(3)]
    path = tmp_path / "raters.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    res = run("reliability", path, "--human", "human", "--rater-col", "rater", "--format", "csv")
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output[res.output.index("analysis,"):]))
    assert set(got.analysis) == {"agreement"}
    import krippendorff

    units = pd.DataFrame(rows).pivot_table(index="rater", columns=["system", "input"], values="human")
    ref = krippendorff.alpha(reliability_data=units.to_numpy(), level_of_measurement="interval")
    np.testing.assert_allclose(got.set_index("method").loc["krippendorff_interval", "statistic"], ref,
                               rtol=1e-10)


def _cronbach(y):
    """Cronbach's alpha of a systems x inputs matrix, from its textbook formula
    k/(k-1) * (1 - sum of input variances / variance of the system totals)."""
    k = y.shape[1]
    return k / (k - 1) * (1 - y.var(axis=0, ddof=1).sum() / y.sum(axis=1).var(ddof=1))


def _negative_alpha_file(tmp_path):
    # inputs 0 and 1 rank the systems in opposite directions: alpha < 0
    m = np.array([[1.0, 3.0], [2.0, 1.5], [3.0, 1.0], [4.0, 0.0], [5.0, 0.5]])
    rows = [{"system": f"s{s}", "input": f"i{i}", "rater": f"r{r}", "human": float((s + i + r) % 5 + 1),
             "m": m[s, i]} for s in range(5) for i in range(2) for r in range(2)]
    path = tmp_path / "neg.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, _cronbach(m)


def test_reliability_negative_alpha_is_shown_not_a_crash(tmp_path):
    # Regression: a negative Cronbach's alpha made inputs_needed = inf, which crashed the table
    # (OverflowError: cannot convert float infinity to integer) and --out (inf is not JSON).
    path, alpha = _negative_alpha_file(tmp_path)
    assert alpha < 0
    res = CliRunner().invoke(main, ["reliability", str(path), "--human", "human", "--rater-col", "rater",
                                    "--metrics", "m", "--n-resamples", "20", "--seed", "0",
                                    "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    assert "NonPositiveReliabilityWarning" in res.output and "SmallSampleWarning" in res.output
    row = [ln for ln in res.output.splitlines() if ln.startswith("│ m ")][0]
    assert f"{alpha:.4f}" in row and row.rstrip(" │").endswith("inf")
    import json

    doc = json.loads((tmp_path / "out" / "reliability.json").read_text())
    (rec,) = doc["consistency"]["results"]
    assert rec["inputs_needed"] == "inf"
    np.testing.assert_allclose(rec["statistic"], alpha, rtol=1e-12)
    res = CliRunner().invoke(main, ["reliability", str(path), "--human", "human", "--rater-col", "rater",
                                    "--metrics", "m", "--n-resamples", "20", "--seed", "0", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert '"inputs_needed": "inf"' in res.output


def test_sizes_curve_is_printed_in_the_table_view(tmp_path):
    """Regression (this session's review): `reliability --sizes` computed the alpha-vs-size
    curve (in --format json) but the table view did not print it."""
    import numpy as np
    import pandas as pd
    from click.testing import CliRunner

    from metaeval import Dataset
    from metaeval.cli import main
    from metaeval.reliability import consistency_curve

    rng = np.random.default_rng(5)
    q = rng.normal(size=(6, 1))
    rows = [{"system": f"s{s}", "input": f"i{i}", "human": float(q[s, 0] + rng.normal()),
             "m": float(q[s, 0] + rng.normal())} for s in range(6) for i in range(16)]
    path = tmp_path / "d.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    res = CliRunner().invoke(main, ["reliability", str(path), "--human", "human", "--metrics", "m",
                                    "--sizes", "4,8", "--seed", "0", "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    assert "alpha vs number of inputs" in res.stdout
    ds = Dataset.from_frame(pd.read_csv(path), human=["human"], metrics=["m"])
    f = consistency_curve(ds, ["m"], sizes=[4, 8], rng=0).to_frame()  # the library's numbers
    for r in f.itertuples():
        assert f"{r.alpha_mean:.4f}" in res.stdout
