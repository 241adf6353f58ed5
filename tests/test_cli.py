"""Tests of the ``metaeval`` command (``metaeval.cli.main``).

Most tests use click's CliRunner; one runs the installed console script in
a subprocess.  Expected numbers are computed independently: with pandas from
the raw SummEval file ``../shared/data/summeval/scores.csv`` (the source
the bundled parquet was converted from, PROVENANCE.md) and scipy, or with
scipy on a small CSV written here.
"""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from _spearman import spearman_test
from click.testing import CliRunner
from scipy import stats

import metaeval
from metaeval.cli import main

from _shared import SHARED, need  # noqa: E402  (tests/_shared.py: ../shared beside the checkout)

RAW = SHARED / "data" / "summeval" / "scores.csv"
REQUIRED = ["metric", "human", "level", "method", "statistic", "pvalue", "ci_low", "ci_high",
            "n", "signature"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def system_means():
    """SummEval system means from the raw CSV with pandas: coherence is the mean
    of the three experts per (system, document), then averaged per system (the
    file has no missing values, so matched-cell means are plain means)."""
    need(RAW, "raw SummEval scores")
    df = pd.read_csv(RAW)
    assert not df.isna().any().any()
    df["coherence"] = df[[f"expert{k}_coherence" for k in (1, 2, 3)]].mean(axis=1)
    return df.groupby("system").mean(numeric_only=True)


@pytest.fixture
def long_csv(tmp_path):
    """A long-form CSV: 4 systems x 3 inputs, human column 'quality', two metrics."""
    rows = []
    quality = [[1, 2, 3], [2, 4, 3], [5, 4, 4], [3, 1, 2]]
    m1 = [[0.1, 0.3, 0.2], [0.4, 0.6, 0.5], [0.9, 0.7, 0.8], [0.2, 0.1, 0.35]]
    m2 = [[0.5, 0.1, 0.9], [0.3, 0.3, 0.2], [0.6, 0.8, 0.1], [0.7, 0.2, 0.4]]
    for i, s in enumerate(["sysA", "sysB", "sysC", "sysD"]):
        for j, d in enumerate(["d1", "d2", "d3"]):
            rows.append({"system": s, "input": d, "quality": quality[i][j],
                         "m1": m1[i][j], "m2": m2[i][j]})
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    means = {k: np.mean(v, axis=1) for k, v in (("quality", quality), ("m1", m1), ("m2", m2))}
    return path, means, np.array(quality, float), np.array(m1), np.array(m2)


def assert_one_line_error(res, *needles):
    assert res.exit_code == 2, (res.exit_code, res.output)
    err = res.stderr
    assert err.startswith("metaeval: error: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err  # exactly one line
    assert res.stdout == ""
    for n in needles:
        assert n in err, err


# --------------------------------------------------------------------------
# datasets


def test_datasets_table_json_csv():
    res = run("datasets")
    assert res.exit_code == 0 and "summeval" in res.stdout
    res = run("datasets", "--format", "json")
    assert res.exit_code == 0
    recs = json.loads(res.stdout)
    assert recs[0]["name"] == "summeval" and recs[0]["bundled"] is True
    assert all(not r["bundled"] for r in recs[1:]) and len(recs) > 1  # the downloadable registry
    assert recs[0]["shape"] == [17, 100] and "coherence" in recs[0]["human"]
    res = run("datasets", "--format", "csv")
    assert res.exit_code == 0
    df = pd.read_csv(io.StringIO(res.stdout))
    assert df["name"][0] == "summeval" and int(df["n_metrics"][0]) == 43


# --------------------------------------------------------------------------
# correlate on the bundled dataset


ARGS = ["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU",
        "--level", "system", "--method", "kendall_b", "--ci", "fisher"]


def test_correlate_json_matches_scipy_on_raw_file(system_means):
    res = run(*ARGS, "--format", "json")
    assert res.exit_code == 0, res.output
    recs = json.loads(res.stdout)
    assert [r["metric"] for r in recs] == ["ROUGE.1", "BLEU"]
    zc = stats.norm.ppf(0.975) * math.sqrt(0.437) / math.sqrt(17 - 4)  # Bonett & Wright 2000, Kendall
    for r in recs:
        assert set(REQUIRED) <= set(r)
        assert (r["human"], r["level"], r["method"], r["n"]) == ("coherence", "system",
                                                                 "kendall_b", 17)
        kt = stats.kendalltau(system_means[r["metric"]], system_means["coherence"])  # scipy
        assert r["statistic"] == pytest.approx(kt.statistic, abs=1e-12)
        assert r["pvalue"] == pytest.approx(kt.pvalue, rel=1e-9)
        z = math.atanh(kt.statistic)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((math.tanh(z - zc),
                                                             math.tanh(z + zc)), rel=1e-9)
        assert r["signature"].startswith("human:coherence|level:system|method:kendall_b|")
        assert "ci:fisher:0.95" in r["signature"]


def test_correlate_csv_parses_with_pandas(system_means):
    res = run(*ARGS, "--format", "csv")
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    assert set(REQUIRED) <= set(df.columns) and list(df["metric"]) == ["ROUGE.1", "BLEU"]
    for _, row in df.iterrows():
        kt = stats.kendalltau(system_means[row["metric"]], system_means["coherence"])  # scipy
        assert row["statistic"] == pytest.approx(kt.statistic, abs=1e-12)


def test_correlate_table_shows_metrics_and_signature(system_means):
    res = run(*ARGS)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "ROUGE.1" in out and "BLEU" in out
    kt = stats.kendalltau(system_means["ROUGE.1"], system_means["coherence"])  # scipy
    assert f"{kt.statistic:.4f}" in out  # rounded by the renderer only
    assert ("human:coherence|level:system|method:kendall_b|nan:pairwise|alt:two-sided|"
            "ci:fisher:0.95|pvalue:analytic|metaeval:") in out


def test_correlate_signature_records_fresh_entropy_and_seed_reproduces():
    args = ["correlate", "summeval", "--human", "coherence", "--metrics", "BLEU",
            "--n-resamples", "20", "--format", "json"]
    first = json.loads(run(*args).stdout)[0]
    seed = int(first["signature"].split("|seed:")[1].split("|")[0])
    again = json.loads(run(*args, "--seed", seed).stdout)[0]
    assert again == first


# --------------------------------------------------------------------------
# compare


def test_compare_two_metrics_json(system_means):
    res = run("compare", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU",
              "--n-resamples", "99", "--seed", "0", "--format", "json")
    assert res.exit_code == 0, res.output
    c = json.loads(res.stdout)
    assert (c["metric_a"], c["metric_b"], c["test"], c["level"]) == ("ROUGE.1", "BLEU",
                                                                     "perm-both", "system")
    ra = stats.pearsonr(system_means["ROUGE.1"], system_means["coherence"]).statistic  # scipy
    rb = stats.pearsonr(system_means["BLEU"], system_means["coherence"]).statistic
    assert (c["statistic_a"], c["statistic_b"]) == pytest.approx((ra, rb), abs=1e-12)
    assert c["statistic"] == pytest.approx(ra - rb, abs=1e-12)
    assert 1 / 100 <= c["pvalue"] <= 1 and c["n"] == 1700
    assert "seed:0" in c["signature"] and "test:perm-both" in c["signature"]
    # the CLI is a view of the library result (same seed)
    api = metaeval.compare(metaeval.load_dataset("summeval"), "coherence", "ROUGE.1", "BLEU",
                           n_resamples=99, rng=0)
    assert c["pvalue"] == api.pvalue
    assert json.loads(run("compare", "summeval", "--human", "coherence", "--metrics",
                          "ROUGE.1,BLEU", "--n-resamples", "99", "--seed", "0",
                          "--format", "json").stdout) == c


def test_compare_three_metrics_json_and_table(system_means):
    args = ["compare", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,CHRF",
            "--n-resamples", "99", "--seed", "0", "--test", "perm-systems"]
    res = run(*args, "--format", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out) >= {"pairs", "ranking", "signature"}
    r = {m: stats.pearsonr(system_means[m], system_means["coherence"]).statistic
         for m in ("ROUGE.1", "BLEU", "CHRF")}  # scipy on the raw file
    ranking = out["ranking"]
    assert [x["metric"] for x in ranking] == sorted(r, key=lambda m: -r[m])
    for x in ranking:
        assert x["statistic"] == pytest.approx(r[x["metric"]], abs=1e-12)
        assert x["cluster"] >= 1
    assert len(out["pairs"]) == 3
    for p in out["pairs"]:
        assert {"metric_a", "metric_b", "statistic", "pvalue", "pvalue_adjusted",
                "signature"} <= set(p)
        assert p["statistic"] == pytest.approx(r[p["metric_a"]] - r[p["metric_b"]], abs=1e-12)
        assert p["pvalue"] <= p["pvalue_adjusted"] <= 1
        assert "test:perm-systems" in p["signature"]
    assert "correction:holm" in out["signature"]
    table = run(*args)
    assert table.exit_code == 0
    for m in r:
        assert m in table.stdout
    assert out["signature"] in table.stdout


# --------------------------------------------------------------------------
# bad input: exit code 2 and one line on stderr


@pytest.mark.parametrize(
    "args, needles",
    [
        (["correlate", "summeval", "--human", "coherance"], ["human='coherance'", "coherence"]),
        (["correlate", "summeval", "--human", "coherence", "--level", "sys"],
         ["--level 'sys' is ambiguous"]),
        (["correlate", "summeval", "--human", "coherence", "--level", "segment"],
         ["--level 'segment' is ambiguous"]),
        (["correlate", "summeval", "--human", "coherence", "--method", "kendall"],
         ["kendall_b, kendall_c or kendall_23"]),
        (["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.9"],
         ["unknown metric column(s): ROUGE.9"]),
        (["correlate", "summeval", "--human", "coherence", "--ci", "fisher", "--level", "input"],
         ["ci='fisher' applies to single correlations"]),
        (["correlate", "summeval", "--human", "coherence", "--n-resamples", "0"],
         ["n_resamples=0"]),
        (["compare", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU",
          "--test", "williams", "--method", "acc_23"], ["test='williams' compares correlations"]),
        (["compare", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU",
          "--test", "bogus"], ["test='bogus'; choose one of perm-both"]),
        (["compare", "summeval", "--human", "nope", "--metrics", "ROUGE.1,BLEU"],
         ["human='nope'"]),
    ],
)
def test_bad_input_exits_2_with_one_line(args, needles):
    assert_one_line_error(run(*args), *needles)


@pytest.mark.parametrize("data", ["summevall", "no/such/file.csv"])
def test_unknown_dataset_or_file_exits_2_with_one_line(data):
    assert_one_line_error(run("correlate", data, "--human", "coherence"),
                          "neither a file nor a bundled dataset")


def test_directory_as_data_exits_2_with_one_line(tmp_path):
    d = tmp_path / "scores.csv"
    d.mkdir()
    assert_one_line_error(run("correlate", d, "--human", "h"))


def test_unknown_dataset_is_still_refused_with_exit_code_2():
    # what works today: exit code 2 and the message (even if not on one line)
    res = run("correlate", "summevall", "--human", "coherence")
    assert res.exit_code == 2
    assert "'summevall' is neither a file nor a bundled dataset (bundled datasets: summeval)" in res.stderr


# --------------------------------------------------------------------------
# a long-form CSV file


def test_long_csv_with_human_option(long_csv):
    path, means, q, m1, m2 = long_csv
    res = run("correlate", path, "--human", "quality", "--level", "system,global",
              "--method", "pearson,spearman", "--ci", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    recs = {(r["metric"], r["level"], r["method"]): r for r in json.loads(res.stdout)}
    assert len(recs) == 8
    assert all(r["ci_low"] is None and r["ci_high"] is None for r in recs.values())  # NaN -> null
    for metric, x in (("m1", m1), ("m2", m2)):
        for method, fn in (("pearson", stats.pearsonr), ("spearman", spearman_test)):
            s = fn(means[metric], means["quality"])  # scipy on the system means
            assert recs[metric, "system", method]["statistic"] == pytest.approx(s.statistic,
                                                                                abs=1e-12)
            assert recs[metric, "system", method]["pvalue"] == pytest.approx(s.pvalue, rel=1e-9)
            g = fn(x.ravel(), q.ravel())  # scipy on all cells
            assert recs[metric, "global", method]["statistic"] == pytest.approx(g.statistic,
                                                                                abs=1e-12)
            assert recs[metric, "global", method]["n"] == 12
    res = run("compare", path, "--human", "quality", "--metrics", "m1,m2", "--level", "global",
              "--test", "williams", "--format", "json")
    assert res.exit_code == 0, res.output
    c = json.loads(res.stdout)
    r1 = stats.pearsonr(m1.ravel(), q.ravel()).statistic
    r2 = stats.pearsonr(m2.ravel(), q.ravel()).statistic
    assert c["statistic"] == pytest.approx(r1 - r2, abs=1e-12) and c["n"] == 12


def test_long_csv_with_custom_label_columns(tmp_path):
    df = pd.DataFrame({"model": ["a", "a", "b", "b", "c", "c"], "doc": ["x", "y"] * 3,
                       "h": [1, 2, 3, 5, 2, 2], "m": [0.2, 0.1, 0.5, 0.9, 0.3, 0.4]})
    path = tmp_path / "custom.csv"
    df.to_csv(path, index=False)
    res = run("correlate", path, "--human", "h", "--system-col", "model", "--input-col", "doc",
              "--level", "group-by-system", "--method", "kendall_b", "--ci", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)[0]
    # item level: per system across its 2 inputs; system c's human scores tie -> dropped;
    # a: tau(0.2,0.1 vs 1,2) = -1, b: +1 (scipy) -> mean 0
    taus = [stats.kendalltau([0.2, 0.1], [1, 2]).statistic,
            stats.kendalltau([0.5, 0.9], [3, 5]).statistic]
    assert r["statistic"] == pytest.approx(np.mean(taus), abs=1e-12)
    assert (r["n_groups"], r["n_groups_dropped"], r["n"]) == (3, 1, 4)


def test_console_script_in_a_subprocess(long_csv):
    exe = shutil.which("metaeval")
    if exe is None:
        pytest.skip("the metaeval console script is not on PATH")
    path, means, *_ = long_csv
    proc = subprocess.run([exe, "correlate", str(path), "--human", "quality", "--metrics", "m1",
                           "--method", "kendall_b", "--ci", "none", "--format", "json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)[0]
    kt = stats.kendalltau(means["m1"], means["quality"])  # scipy
    assert r["statistic"] == pytest.approx(kt.statistic, abs=1e-12)
    assert r["pvalue"] == pytest.approx(kt.pvalue, rel=1e-9)


def test_ambiguous_level_names_are_refused_on_the_command_line():
    # Regression: `--level item` was once accepted silently, but mt-metrics-eval's 'item' grouping
    # is our `input` (chrF .173 here vs .088 there on the same data). The names other tools use for
    # different groupings stay refused with the mapping; `item`, the name every output prints, is
    # taken with a note saying which grouping it is (tests/test_cli_blind_run_open.py).
    # `--levels` stays an alias of `--level`.
    for cmd in (["correlate", "summeval", "--human", "coherence"], ["compare", "summeval", "--human", "coherence"],
                ["measures", "summeval", "--human", "coherence"]):
        for name in ("sys", "seg", "segment", "sample"):
            res = run(*cmd, "--level", f"system,{name}")
            assert res.exit_code == 2, res.output
            assert "ambiguous" in res.output and "'input'" in res.output, res.output
    res = run("correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1", "--levels",
              "group-by-system,group-by-item", "--ci", "none", "--pvalue", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    got = {r["level"]: r["statistic"] for r in json.loads(res.stdout)}
    ds = metaeval.load_dataset("summeval")
    want = metaeval.correlate(ds, "coherence", metrics=["ROUGE.1"], level=["item", "input"], ci="none",
                              pvalue="none")
    assert got == {r.level: r.statistic for r in want}
    res = run("measures", "summeval", "--human", "coherence", "--measures", "sys:pearson")
    assert res.exit_code == 2 and "group-by-system" in res.output


def test_inferred_metrics_are_announced_and_suspicious_ones_flagged(tmp_path):
    # Regression: every other numeric column silently became a metric (other human
    # dimensions, ids, counts, raw copies) and was then ranked among "metrics to trust".
    g = np.random.default_rng(0)
    rows = [{"system": f"s{s}", "input": f"i{i}", "human": g.normal(), "bleu": g.random(),
             "segment_id": 6 * s + i, "DA_n": int(g.integers(1, 4)), "Engagement": int(g.integers(1, 6)),
             "DA_raw": 20 * g.normal()} for s in range(4) for i in range(6)]
    path = tmp_path / "cols.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    res = run("correlate", path, "--human", "human", "--ci", "none", "--pvalue", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    err = res.stderr
    # issue 23 item 7: Engagement (a human-sounding name, ratings 1-5) is a human dimension, not a metric
    assert "4 metric column(s) taken from cols.csv" in err and "--metrics" in err
    assert "not taken as metrics, they look like human dimensions: Engagement: a human-sounding name and " \
           "ratings 1-5" in err
    assert {r["metric"] for r in json.loads(res.stdout)} == {"bleu", "segment_id", "DA_n", "DA_raw"}
    for col, why in (("segment_id", "an id"), ("DA_n", "a count"), ("DA_raw", "a raw copy")):
        assert f"{col}: {why}" in err, (col, err)
    assert "bleu:" not in err
    res = run("correlate", path, "--human", "human", "--metrics", "bleu", "--ci", "none", "--format", "json")
    assert res.exit_code == 0 and "note" not in res.stderr  # an explicit metric set: nothing to announce


def test_correlate_json_lacked_the_counts_its_warnings_name(tmp_path):
    """QA pass: `correlate --format json` kept 14 of the 22 fields of the CSV: a warning saying
    'counted in n_resamples_nan' (or n_constant, n_too_few) pointed at a field the JSON did not
    have. The JSON now carries the CSV's columns, with the same values."""
    g = np.random.default_rng(5)
    rows = [{"system": f"S{s}", "input": f"i{i}", "human": float(g.integers(1, 6)),
             "bleu": float(g.normal())} for s in range(3) for i in range(8)]
    rows[0]["human"] = rows[8]["human"] = rows[16]["human"] = 3.0  # input i0: constant human scores
    rows[0]["bleu"], rows[8]["bleu"], rows[16]["bleu"] = 0.1, 0.2, 0.3
    path = tmp_path / "three.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    argv = ["correlate", path, "--human", "human", "--level", "system,input", "--n-resamples", "200",
            "--seed", "1"]
    res_json, res_csv = run(*argv, "--format", "json"), run(*argv, "--format", "csv")
    assert res_json.exit_code == 0 and res_csv.exit_code == 0, res_json.output + res_csv.output
    assert "n_resamples_nan" in res_json.stderr and "n_constant" in res_json.stderr  # what the warnings name
    recs = json.loads(res_json.stdout)
    frame = pd.read_csv(io.StringIO(res_csv.stdout), keep_default_na=False, na_values=[""])
    assert [list(r) for r in recs] == [list(frame.columns)] * len(recs)
    for r, (_, row) in zip(recs, frame.iterrows()):
        for k in ("n_constant", "n_too_few", "n_resamples_nan", "n_groups_dropped"):
            assert r[k] == row[k], (k, r, row)
    by_level = {r["level"]: r for r in recs}
    assert by_level["input"]["n_constant"] == 1 and by_level["system"]["n_resamples_nan"] > 0


@pytest.mark.parametrize("metrics", ["bleu,chrf", "bleu,chrf,ter"])
def test_compare_json_lacked_fields_of_its_csv(tmp_path, metrics):
    """QA pass: `compare --format json` kept 17 of the CSV's 28 columns (no pvalue_greater/less,
    n_resamples, n_resamples_nan, stopped_early), as correlate's JSON did. Both forms now carry
    the same fields with the same values (one pair: one record; several: the pairs)."""
    g = np.random.default_rng(6)
    rows = [{"system": f"S{s}", "input": f"i{i}", "human": float(g.integers(1, 6)),
             "bleu": float(g.normal()), "chrf": float(g.normal()), "ter": float(g.normal())}
            for s in range(4) for i in range(10)]
    path = tmp_path / "four.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    argv = ["compare", path, "--human", "human", "--metrics", metrics, "--level", "input",
            "--n-resamples", "99", "--seed", "1"]
    res_json, res_csv = run(*argv, "--format", "json"), run(*argv, "--format", "csv")
    assert res_json.exit_code == 0 and res_csv.exit_code == 0, res_json.output + res_csv.output
    got = json.loads(res_json.stdout)
    recs = [got] if isinstance(got, dict) and "pairs" not in got else got["pairs"]
    frame = pd.read_csv(io.StringIO(res_csv.stdout), keep_default_na=False, na_values=[""])
    assert [sorted(r) for r in recs] == [sorted(frame.columns)] * len(frame)
    for r, (_, row) in zip(recs, frame.iterrows()):
        for k in ("pvalue", "pvalue_greater", "pvalue_less", "n_resamples", "n_resamples_nan"):
            assert r[k] == pytest.approx(row[k]), (k, r[k], row[k])
