"""Given system-level scores on the command line: --system-scores FILE, --system-level,
and the system-score table that `read-mtme` writes beside its long file.

Expected values are scipy's kendalltau / pearsonr on the same system vectors (the given
scores where a column has them, the row means of the cells otherwise), and for the WMT
layout the library's `read_mtme` + `correlate`, which tests/test_system_scores.py checks
against mt-metrics-eval's stats.Correlation on the .sys.score files."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import metaeval
from metaeval.cli import main

from test_cli import assert_one_line_error

SYSTEMS = [f"s{k}" for k in range(6)]
INPUTS = [f"i{k}" for k in range(9)]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    """A long file (6 systems x 9 inputs: human, m1, m2, m3) and two system-score tables:
    a wide one (system, m1, human) and corpus_scores' long one (system, metric, score, ...)."""
    rng = np.random.default_rng(16)
    cells = {c: rng.normal(size=(6, 9)) for c in ("human", "m1", "m2", "m3")}
    cells["m1"] += cells["human"]
    rows = [{"system": s, "input": i, **{c: v[a, b] for c, v in cells.items()}}
            for a, s in enumerate(SYSTEMS) for b, i in enumerate(INPUTS)]
    data = tmp_path / "d.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    given = {"m1": rng.normal(size=6), "human": rng.normal(size=6), "m2": rng.normal(size=6)}
    wide = tmp_path / "sys.csv"
    pd.DataFrame({"system": SYSTEMS, "m1": given["m1"], "human": given["human"]}).to_csv(wide, index=False)
    long = tmp_path / "corpus.tsv"
    pd.DataFrame({"system": SYSTEMS, "metric": "m2", "score": given["m2"], "n_segments": 9,
                  "signature": "metric:m2|scope:corpus"}).to_csv(long, index=False, sep="\t")
    means = {c: v.mean(axis=1) for c, v in cells.items()}
    return data, wide, long, given, means


def _json(res):
    assert res.exit_code == 0, res.output
    return {r["metric"]: r for r in json.loads(res.stdout)}


def test_correlate_uses_the_given_table_against_scipy(files):
    data, wide, _, given, means = files
    base = ("correlate", data, "--human", "human", "--level", "system", "--ci", "none")
    for method, fn in (("kendall_b", stats.kendalltau), ("pearson", stats.pearsonr)):
        got = _json(run(*base, "--method", method, "--format", "json", "--system-scores", wide))
        # m1 and the human have given scores; m2 and m3 enter with their means
        assert got["m1"]["statistic"] == pytest.approx(fn(given["m1"], given["human"])[0], abs=1e-12)
        for m in ("m2", "m3"):
            assert got[m]["statistic"] == pytest.approx(fn(means[m], given["human"])[0], abs=1e-12)
        assert "|sys:given:metric+human|" in got["m1"]["signature"]
        assert "|sys:given:human|" in got["m2"]["signature"]
        # --system-level mean: the means of the cells, as without the table
        mean = _json(run(*base, "--method", method, "--format", "json", "--system-scores", wide,
                         "--system-level", "mean"))
        plain = _json(run(*base, "--method", method, "--format", "json"))
        for m in ("m1", "m2", "m3"):
            assert mean[m]["statistic"] == pytest.approx(fn(means[m], means["human"])[0], abs=1e-12)
            assert mean[m]["statistic"] == plain[m]["statistic"]
            assert "|sys:mean|" in mean[m]["signature"]
            assert "sys:" not in plain[m]["signature"]


def test_correlate_csv_signature_and_default_note(files):
    data, wide, long, given, means = files
    res = run("correlate", data, "--human", "human", "--metrics", "m1,m2", "--ci", "none",
              "--method", "kendall_b", "--format", "csv", "--system-scores", wide)
    assert res.exit_code == 0, res.output
    frame = pd.read_csv(io.StringIO(res.stdout))
    assert list(frame.signature.str.extract(r"\|(sys:[^|]+)\|")[0]) == [
        "sys:given:metric+human", "sys:given:human"]
    # the default (given) notes that the given scores differ from the means, in CLI spelling
    assert "SystemScoresWarning" in res.stderr and "system_scores='mean'" in res.stderr
    quiet = run("correlate", data, "--human", "human", "--metrics", "m1", "--ci", "none",
                "--format", "csv", "--system-scores", wide, "--system-level", "given")
    assert quiet.exit_code == 0 and "SystemScoresWarning" not in quiet.stderr


def test_long_corpus_scores_table(files):
    data, _, long, given, means = files
    got = _json(run("correlate", data, "--human", "human", "--metrics", "m2", "--ci", "none",
                    "--method", "kendall_b", "--format", "json", "--system-scores", long))
    assert got["m2"]["statistic"] == pytest.approx(stats.kendalltau(given["m2"], means["human"])[0],
                                                   abs=1e-12)
    assert "|sys:given:metric|" in got["m2"]["signature"]


def test_compare_uses_the_given_table(files):
    data, wide, _, given, means = files
    res = run("compare", data, "--human", "human", "--metrics", "m1,m2", "--method", "pearson",
              "--n-resamples", 99, "--seed", 3, "--format", "json", "--system-scores", wide)
    assert res.exit_code == 0, res.output
    c = json.loads(res.stdout)
    assert c["statistic_a"] == pytest.approx(stats.pearsonr(given["m1"], given["human"])[0], abs=1e-12)
    assert c["statistic_b"] == pytest.approx(stats.pearsonr(means["m2"], given["human"])[0], abs=1e-12)
    assert "|sys:given:a+human|" in c["signature"]
    # all pairs: the overall signature says some metrics use given scores and others do not
    res = run("compare", data, "--human", "human", "--metrics", "m1,m2,m3", "--n-resamples", 99,
              "--seed", 3, "--format", "json", "--system-scores", wide, "--system-level", "given")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert "sys:mixed" in doc["signature"]
    pair = {frozenset((p["metric_a"], p["metric_b"])): p for p in doc["pairs"]}
    assert "|sys:given:human|" in pair[frozenset(("m2", "m3"))]["signature"]
    # a test that resamples inputs is refused on given scores, naming the CLI option
    bad = run("compare", data, "--human", "human", "--metrics", "m1,m2", "--test", "boot-inputs",
              "--system-scores", wide, "--system-level", "given")
    assert_one_line_error(bad, "system_scores='mean'")


def test_diagnose_correlation_design_uses_the_given_table(files, tmp_path):
    data, wide, _, given, means = files
    res = run("diagnose", data, "--human", "human", "--metrics", "m1,m2", "--method", "pearson",
              "--low", 0, "--high", 0, "--sizes", "10", "--n-resamples", 20, "--seed", 1, "--format", "json",
              "--system-scores", wide, "--system-level", "given")
    assert res.exit_code == 0, res.output
    design = pd.DataFrame(json.loads(res.stdout)["correlation_design"])
    row = design[(design.level == "system") & (design.column_1 == "human") & (design.column_2 == "m1")]
    assert row.statistic.iloc[0] == pytest.approx(stats.pearsonr(given["human"], given["m1"])[0],
                                                  abs=1e-12)


@pytest.mark.parametrize("content, needles", [
    ("system,m1,human\ns0,1,2\n\ns9,2,3\n", ["bad.csv, line 4", "system 's9'", "--system-scores"]),
    ("system,m1,human\ns0,1,2\ns1,abc,3\n", ["bad.csv, line 3", "not a finite number", "'abc'"]),
    ("system,m1,human\ns0,1,2\ns1,2,3\ns0,4,5\n", ["bad.csv, line 4", "system 's0'", "repeats line 2"]),
    ("system,m1,nope\ns0,1,2\n", ["bad.csv", "'nope'", "not score columns"]),
    ("sys,m1\ns0,1\n", ["bad.csv", "no column 'system'"]),
    ("system,m1,human\ns0,1,inf\n", ["bad.csv, line 2", "not a finite number"]),
])
def test_bad_tables_exit_2_with_one_line(files, tmp_path, content, needles):
    data = files[0]
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    res = run("correlate", data, "--human", "human", "--ci", "none", "--system-scores", bad)
    assert_one_line_error(res, *needles)


def test_bad_long_table_and_given_without_table(files, tmp_path):
    data = files[0]
    bad = tmp_path / "long.jsonl"
    bad.write_text('{"system": "s0", "metric": "m2", "score": 1}\n\n'
                   '{"system": "s0", "metric": "m2", "score": 2}\n')
    assert_one_line_error(run("correlate", data, "--human", "human", "--system-scores", bad),
                          "long.jsonl, line 3", "system 's0' and metric 'm2' repeats line 1")
    assert_one_line_error(run("correlate", data, "--human", "human", "--system-level", "given"),
                          "--system-level given", "--system-scores FILE")


def test_dropped_systems_are_skipped_not_unknown(files):
    data, wide, _, given, means = files
    got = _json(run("correlate", data, "--human", "human", "--metrics", "m1", "--ci", "none",
                    "--method", "kendall_b", "--format", "json", "--system-scores", wide,
                    "--exclude-systems", "s5"))
    assert got["m1"]["statistic"] == pytest.approx(
        stats.kendalltau(given["m1"][:5], given["human"][:5])[0], abs=1e-12)


def test_report_sections_use_the_given_table(files, tmp_path):
    data, wide, _, given, means = files
    out = tmp_path / "rep"
    res = run("report", data, "--human", "human", "--metrics", "m1,m2", "--quick", "--no-text",
              "--levels", "system", "--n-resamples", 20, "--seed", 1, "--out", out,
              "--system-scores", wide, "--system-level", "given")
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "results.json").read_text())
    assert doc["config"]["system_scores"] == "given"
    rows = {r["metric"]: r for r in doc["results"]["correlations"]["human"]["results"]}
    assert rows["m1"]["statistic"] == pytest.approx(stats.pearsonr(given["m1"], given["human"])[0],
                                                    abs=1e-12)
    assert "|sys:given:metric+human|" in rows["m1"]["signature"]
    assert any("|sys:mixed|" in sig for sig in doc["signatures"])  # the clusters (compare_all)


# ----------------------------------------------------------------------------- read-mtme


def test_read_mtme_writes_the_sys_table_and_correlate_reads_it(tmp_path):
    from test_system_scores import _corpus_layout

    _corpus_layout(tmp_path)
    out = tmp_path / "ende.csv"
    res = run("read-mtme", tmp_path, "wmt99", "en-de", "--refs", "refA", "--out", out)
    assert res.exit_code == 0, res.output
    sys_out = tmp_path / "ende.sys.csv"
    assert sys_out.exists() and str(sys_out) in res.stdout
    ds = metaeval.read_mtme(tmp_path, "wmt99", "en-de", refs="refA")
    table = pd.read_csv(sys_out).set_index("system")
    pd.testing.assert_frame_equal(table, ds.system_scores, check_names=False, check_index_type=False)
    got = _json(run("correlate", out, "--human", "mqm", "--level", "system",
                    "--method", "kendall_b", "--ci", "none", "--format", "json",
                    "--system-scores", sys_out, "--system-level", "given"))
    exp = metaeval.correlate(ds, "mqm", level="system", method="kendall_b", ci="none",
                             system_scores="given")
    assert set(got) == set(ds.metrics)
    for r in exp:
        assert got[r.metric]["statistic"] == r.statistic
        assert "|sys:given:metric+human|" in got[r.metric]["signature"]
    # --score-level sys: the files are the cells, no second table
    res = run("read-mtme", tmp_path, "wmt99", "en-de", "--refs", "refA", "--score-level", "sys",
              "--out", tmp_path / "sys_level.csv")
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "sys_level.sys.csv").exists()
