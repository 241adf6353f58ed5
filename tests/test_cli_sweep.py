"""Every subcommand of the `metaeval` command on random dataset shapes and on
malformed files (issues 14 and 18.5/18.7).

The contract (``tests/_shapes.py``, :func:`check_run`): exit 0 with finite or
explicitly missing (null), bounded statistics in the JSON/CSV output (|r| <= 1,
accuracies and p-values in [0, 1], ci_low <= ci_high), or exit 2 with exactly one
line ``metaeval: error: ...`` that names a command-line option or the file; never
exit 1, never a traceback.  The bounds are the definitions of the statistics
(a correlation coefficient lies in [-1, 1], a proportion in [0, 1]); no expected
value here comes from the code under test.

Hypothesis runs derandomized with few examples so CI is deterministic and the file
stays near a minute on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from metaeval.cli import main

try:  # tests/ as a package or as a rootdir on sys.path
    from ._shapes import (Shape, _reject_constant, check_numbers, check_run, long_frame, malformed_files,
                          preference_frame, shapes, write_mtme)
except ImportError:  # pragma: no cover - depends on how pytest imports tests
    from _shapes import (Shape, _reject_constant, check_numbers, check_run, long_frame, malformed_files,
                         preference_frame, shapes, write_mtme)

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def data_commands(path, shape):
    """(name, argv) of every data subcommand with small resampling sizes."""
    p, R = str(path), shape.rater_args
    humans = "human,human2" if shape.n_humans == 2 else "human"
    # a second human column must not be read as a metric: name the metrics then
    M = ["--metrics", ",".join(shape.metrics)] if shape.n_humans == 2 else []
    R = R + M
    quick = ["--seed", "0", "--format", "json"]
    yield "correlate", ["correlate", p, "--human", "human", *R, "--level", "system,input,group-by-system,global",
                        "--method", "pearson,spearman,kendall_b", "--n-resamples", "19", *quick]
    yield "correlate", ["correlate", p, "--human", "human", *R, "--level", "system,global", "--ci", "fisher",
                        "--pvalue", "permutation", "--n-resamples", "19", *quick]
    yield "compare", ["compare", p, "--human", "human", *R, "--n-resamples", "19", *quick]
    yield "compare", ["compare", p, "--human", "human", *R, "--test", "williams", "--level", "system", *quick]
    yield "compare", ["compare", p, "--human", "human", *R, "--test", "boot-both", "--level", "input",
                      "--method", "kendall_b", "--n-resamples", "19", *quick]
    yield "measures", ["measures", p, "--human", "human", *R, "--n-resamples", "19",
                       "--splits", "5" if shape.n_metrics >= 3 else "0", *quick]
    yield "simulate", ["simulate", "--from-data", p, "--human", "human", *M, "--n-iterations", "2",
                       "--n-discretizations", "2", "--jobs", "1", "--level", "system,input",
                       "--method", "pearson,kendall_b", *quick]
    yield "reliability", ["reliability", p, "--human", humans, *R, "--n-resamples", "19", *quick]
    yield "validity", ["validity", p, "--human", humans, *R, "--no-cfa", "--format", "json"]
    yield "validity", ["validity", p, "--human", humans, *R, "--format", "json"]
    yield "diagnose", ["diagnose", p, "--human", "human", *R, "--low", "2", "--high", "4", "--sizes", "3,5",
                       "--n-resamples", "5", *quick]
    yield "local", ["local", p, "--context", "system", "--human", "human", *M, "--chi2-resamples", "19",
                    "--tau-resamples", "19", *quick]
    yield "local", ["local", p, "--context", "input", "--human", "human", *M, "--ties", "exclude",
                    "--chi2-test", "asymptotic", "--tau-resamples", "19", *quick]


def csv_commands(path, shape):
    p, R = str(path), shape.rater_args
    R = R + (["--metrics", ",".join(shape.metrics)] if shape.n_humans == 2 else [])
    yield "correlate", ["correlate", p, "--human", "human", *R, "--level", "input,global", "--ci", "none",
                        "--pvalue", "none", "--format", "csv"]
    yield "compare", ["compare", p, "--human", "human", *R, "--n-resamples", "19", "--seed", "1",
                      "--format", "csv"]


def test_every_data_subcommand_keeps_the_contract_on_random_shapes():
    seen = Counter()

    @settings(max_examples=25, **SETTINGS)
    @given(shape=shapes())
    def sweep(shape):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "scores.csv"
            long_frame(shape).to_csv(path, index=False)
            for name, argv in data_commands(path, shape):
                res = run(*argv)
                check_run(res, name, files=[path])
                seen[name, res.exit_code] += 1
            for name, argv in csv_commands(path, shape):
                res = run(*argv)
                check_run(res, name, fmt="csv", files=[path])
                seen[name, res.exit_code] += 1

    sweep()
    # not a vacuous sweep: every subcommand produced numbers on some shapes
    names = {name for name, _ in seen}
    assert names == {"correlate", "compare", "measures", "simulate", "reliability", "validity", "diagnose",
                     "local"}, names
    assert all(seen[name, 0] > 0 for name in names), dict(seen)


def test_preferences_keeps_the_contract_on_random_shapes():
    seen = Counter()

    @settings(max_examples=10, **SETTINGS)
    @given(shape=shapes(max_systems=6, max_inputs=8))
    def sweep(shape):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "prefs.csv"
            preference_frame(shape).to_csv(path, index=False)
            for extra in ([], ["--epsilon", "0.1"], ["--compare", "J0,J1", "--measure", "acc_23"]):
                res = run("preferences", path, "--n-resamples", "19", "--seed", "0", "--format", "json", *extra)
                check_run(res, "preferences", files=[path])
                seen[res.exit_code] += 1

    sweep()
    assert seen[0] > 0, dict(seen)


@settings(max_examples=3, **SETTINGS)
@given(shape=shapes(min_systems=3, max_systems=6, min_inputs=4, max_inputs=8))
def test_report_quick_keeps_the_contract_on_random_shapes(shape):
    pytest.importorskip("matplotlib")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.csv"
        long_frame(shape).to_csv(path, index=False)
        out = Path(tmp) / "rep"
        res = run("report", path, "--human", "human", *shape.rater_args, "--quick", "--no-text", "--seed", "0",
                  "--n-resamples", "19", "--splits", "5", "--out", out)
        check_run(res, "report", fmt="text", files=[path])
        assert res.exit_code == 0 or shape.constant or shape.missing != "none", res.stderr
        if res.exit_code == 0:
            results = json.loads((out / "results.json").read_text(), parse_constant=_reject_constant)
            check_numbers("report", results, "report results.json")


# ----------------------------------------------------------------------------- malformed files
MALFORMED = malformed_files()
SWEEP = {
    "correlate": ["correlate", "{p}", "--human", "human", "--ci", "none", "--format", "json"],
    "compare": ["compare", "{p}", "--human", "human", "--n-resamples", "19", "--seed", "0", "--format", "csv"],
    "measures": ["measures", "{p}", "--human", "human", "--n-resamples", "19", "--splits", "0", "--seed", "0",
                 "--format", "json"],
    "simulate": ["simulate", "--from-data", "{p}", "--human", "human", "--n-iterations", "2",
                 "--n-discretizations", "2", "--jobs", "1", "--seed", "0", "--format", "json"],
    "reliability": ["reliability", "{p}", "--human", "human", "--n-resamples", "19", "--seed", "0",
                    "--format", "json"],
    "validity": ["validity", "{p}", "--human", "human", "--format", "json"],
    "diagnose": ["diagnose", "{p}", "--human", "human", "--low", "2", "--high", "4", "--sizes", "3",
                 "--n-resamples", "5", "--seed", "0", "--format", "json"],
    "local": ["local", "{p}", "--context", "system", "--human", "human", "--tau-resamples", "19",
              "--chi2-resamples", "19", "--seed", "0", "--format", "json"],
    "preferences": ["preferences", "{p}", "--n-resamples", "19", "--seed", "0", "--format", "json"],
    "correlate-table": ["correlate", "{p}", "--human", "human", "--ci", "none", "--pvalue", "none"],
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
@pytest.mark.parametrize("command", sorted(SWEEP))
def test_malformed_file_gives_a_result_or_one_error_line(tmp_path, kind, command):
    name, data = MALFORMED[kind]
    path = tmp_path / name
    path.write_bytes(data)
    argv = [str(path) if a == "{p}" else a for a in SWEEP[command]]
    fmt = "text" if command.endswith("-table") else ("csv" if "csv" in argv else "json")
    check_run(run(*argv), command.split("-")[0], fmt=fmt, files=[path])


@pytest.mark.parametrize("kind", ["markup-names", "escape-names", "formula-names", "slash-name", "long-name"])
@pytest.mark.parametrize("command", sorted(c for c in SWEEP if not c.endswith("-table")))
def test_hostile_names_in_terminal_tables(tmp_path, kind, command):
    name, data = MALFORMED[kind]
    path = tmp_path / name
    path.write_bytes(data)
    argv = [str(path) if a == "{p}" else a for a in SWEEP[command]]
    i = argv.index("--format")
    check_run(run(*argv[:i], *argv[i + 2:]), command, fmt="text", files=[path])


# ----------------------------------------------------------------------------- regressions found by the sweep
def test_preferences_jsonl_line_not_an_object_gave_typeerror_exit_1(tmp_path):
    path = tmp_path / "prefs.jsonl"
    path.write_text('{"input": "x", "system_a": "A", "system_b": "B", "rater": "r", "preference": 1}\n[1, 2]\n')
    res = run("preferences", path, "--format", "json")
    err = check_run(res, "preferences", files=[path])
    assert res.exit_code == 2 and "prefs.jsonl: line 2 is a JSON list" in err


@pytest.mark.parametrize("kind, needle", [
    ("latin-1", "scores.csv: line 5, byte 7 is not UTF-8"),
    ("truncated-gz", "scores.csv.gz: the gzip stream is truncated"),
    ("long-row", "scores.csv"),
])
def test_preferences_csv_read_errors_named_no_file(tmp_path, kind, needle):
    name, data = MALFORMED[kind]
    path = tmp_path / name
    path.write_bytes(data)
    res = run("preferences", path, "--format", "json")
    err = check_run(res, "preferences", files=[path])
    assert res.exit_code == 2 and needle in err, err


def _write(tmp_path, kind):
    name, data = MALFORMED[kind]
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _one_metric(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("system,input,human,bleu\n" + "".join(
        f"S{s},i{i},{(s + i) % 3},{(s * i) % 4}\n" for s in range(4) for i in range(5)))
    return path


@pytest.mark.parametrize("argv, needle", [
    (["correlate", "{p}"], "Missing option '--human'. (see `"),
    (["correlate", "{p}", "--human", "human", "--n-resamples", "x"], "'--n-resamples': 'x' is not a valid integer"),
    (["correlate", "{p}", "--human", "human", "--bogus"], "No such option '--bogus'"),
    (["local", "{p}", "--context", "system", "--human", "human"], "--metrics: H2 ranks metrics"),
])
def test_click_usage_errors_were_three_lines_not_one(tmp_path, argv, needle):
    path = _one_metric(tmp_path)
    res = run(*[str(path) if a == "{p}" else a for a in argv])
    err = check_run(res, argv[0], files=[path])
    assert res.exit_code == 2 and needle in err and "Usage:" not in res.stderr, res.stderr


@pytest.mark.parametrize("kind, needle", [
    ("text-score", "scores.csv: score column 'bleu' has 1 non-numeric value(s): 'high'"),
    ("inf-score", "scores.csv: score column 'bleu' has 1 infinite value(s)"),
    ("header-only", "scores.csv: empty data"),
])
def test_data_errors_named_no_file(tmp_path, kind, needle):
    path = _write(tmp_path, kind)
    for command in ("correlate", "reliability", "diagnose"):
        extra = ["--low", "2", "--high", "4"] if command == "diagnose" else []
        res = run(command, path, "--human", "human", *extra)
        err = check_run(res, command, files=[path])
        assert res.exit_code == 2 and needle in err, err


def test_duplicate_keys_in_a_command_without_rater_col_named_no_file(tmp_path):
    path = _write(tmp_path, "duplicate-key")
    res = run("local", path, "--context", "system", "--human", "human")
    err = check_run(res, "local", files=[path])
    assert res.exit_code == 2 and err.startswith("metaeval: error: scores.csv: 1 duplicated (system, input) key")


@pytest.mark.parametrize("command", ["compare", "measures"])
def test_one_metric_error_named_compare_all_not_metrics_option(tmp_path, command):
    path = _one_metric(tmp_path)
    res = run(command, path, "--human", "human", "--splits", "0") if command == "measures" else \
        run(command, path, "--human", "human")
    err = check_run(res, command, files=[path])
    assert res.exit_code == 2 and "--metrics" in err and "one.csv gives 1: 'bleu'" in err, err
    assert "compare_all" not in err


def test_simulate_from_data_constant_column_error_named_no_option(tmp_path):
    path = tmp_path / "const.csv"
    path.write_text("system,input,human,bleu\n" + "".join(
        f"S{s},i{i},3,{(s * i) % 4}\n" for s in range(4) for i in range(5)))
    res = run("simulate", "--from-data", path, "--human", "human", "--n-iterations", "2",
              "--n-discretizations", "2", "--jobs", "1", "--seed", "0")
    err = check_run(res, "simulate", files=[path])
    assert res.exit_code == 2 and "--from-data const.csv: column 'human'" in err and "--human" in err, err


def test_validity_single_rater_human_suggested_the_python_design_argument(tmp_path):
    path = _one_metric(tmp_path)
    res = run("validity", path, "--human", "human", "--format", "json")
    err = check_run(res, "validity", files=[path])
    assert res.exit_code == 2 and "--human" in err and "one rating per cell" in err, err
    assert "design=" not in err


def test_reliability_default_curve_aborted_on_a_column_without_two_complete_inputs(tmp_path):
    # one system misses every input but i0 for 'bleu': no input is complete, so alpha is NaN
    # (warned) and the default alpha-vs-size curve has no size to draw; it raised instead
    rows = "".join(f"S{s},i{i},{(s + i) % 3},{'' if (s == 3 and i > 0) else (s * i) % 4}\n"
                   for s in range(4) for i in range(5))
    path = tmp_path / "gaps.csv"
    path.write_text("system,input,human,bleu\n" + rows)
    res = run("reliability", path, "--human", "human", "--n-resamples", "19", "--seed", "0", "--format", "json")
    out = check_run(res, "reliability", files=[path])
    assert res.exit_code == 0, res.stderr
    bleu = [r for r in out["consistency"] if r["column"] == "bleu"]
    assert len(bleu) == 1 and bleu[0]["statistic"] is None  # NaN, shown as null
    assert not [r for r in out.get("consistency_curve", []) if r["column"] == "bleu"]
    assert "UndefinedStatisticWarning" in res.stderr


def test_one_system_error_suggested_level_item_which_the_cli_rejects(tmp_path):
    path = tmp_path / "one_system.csv"
    path.write_text("system,input,human,bleu,chrf\n" + "".join(f"S0,i{i},{i % 3},{i / 5},{i % 2}\n" for i in range(5)))
    res = run("correlate", path, "--human", "human", "--ci", "none", "--format", "json")
    err = check_run(res, "correlate", files=[path])
    assert res.exit_code == 2 and "--level item or global" in err, err
    # and the spelling it suggests works
    res = run("correlate", path, "--human", "human", "--ci", "none", "--level", "item", "--format", "json")
    check_run(res, "correlate", files=[path])
    assert res.exit_code == 0, res.stderr


def test_preferences_without_pairs_error_named_no_file(tmp_path):
    path = tmp_path / "prefs.csv"
    path.write_text("input,system_a,system_b,rater,judge,preference\n")
    res = run("preferences", path, "--format", "json")
    err = check_run(res, "preferences", files=[path])
    assert res.exit_code == 2 and "prefs.csv" in err, err


def test_diagnose_with_two_systems_error_named_no_option_or_file(tmp_path):
    # blind run 2: two systems no longer stop the command; the across-systems diagnostics are left
    # out with a note naming the file (KS and the sample size still run)
    path = tmp_path / "two.csv"
    path.write_text("system,input,human,bleu\n" + "".join(
        f"S{s},i{i},{(s + i) % 5 + 1},{(s * i) % 4}\n" for s in range(2) for i in range(6)))
    res = run("diagnose", path, "--human", "human", "--low", "2", "--high", "4", "--sizes", "3", "--format", "json")
    out = check_run(res, "diagnose", files=[path])
    assert res.exit_code == 0 and "two.csv has 2 system(s)" in res.stderr and set(out) == {"ks", "sample_size"}


# ----------------------------------------------------------------------------- read-mtme
def test_read_mtme_and_correlate_keep_the_contract_on_random_shapes():
    seen = Counter()

    @settings(max_examples=8, **SETTINGS)
    @given(shape=shapes(max_systems=8, max_inputs=12))
    def sweep(shape):
        with tempfile.TemporaryDirectory() as tmp:
            root = write_mtme(Path(tmp) / "mtme", shape)
            out = Path(tmp) / "long.csv"
            for level in ("seg", "sys"):
                res = run("read-mtme", root, "wmt99", "en-de", "--refs", "refA", "--score-level", level, "--out", out)
                check_run(res, "read-mtme", fmt="text", files=[root])
                seen["read-mtme", res.exit_code] += 1
                if res.exit_code != 0:
                    continue
                levels = "system,input,group-by-system,global" if level == "seg" else "system"
                res = run("correlate", out, "--human", "mqm", "--level", levels, "--method", "pearson,kendall_b",
                          "--n-resamples", "19", "--seed", "0", "--format", "json")
                check_run(res, "correlate", files=[out])
                seen["correlate", res.exit_code] += 1

    sweep()
    assert seen["read-mtme", 0] > 0 and seen["correlate", 0] > 0, dict(seen)


@pytest.mark.parametrize("damage", ["cut-mid-line", "bad-number", "missing-file", "latin-1"])
def test_read_mtme_damaged_folder_gives_one_error_line(tmp_path, damage):
    shape = Shape(4, 6, 0, False, 2, 1, "none", "", False, 5)
    root = write_mtme(tmp_path / "mtme", shape)
    seg = root / "wmt99" / "human-scores" / "en-de.mqm.seg.score"
    if damage == "cut-mid-line":
        text = seg.read_text()
        seg.write_text(text[: len(text) // 2 + 3])
    elif damage == "bad-number":
        seg.write_text(seg.read_text().replace("\t", "\tx", 1))
    elif damage == "missing-file":
        (root / "wmt99" / "sources" / "en-de.txt").unlink()
    else:
        seg.write_bytes(seg.read_bytes().replace(b"S1", b"S\xe9", 1))
    res = run("read-mtme", root, "wmt99", "en-de", "--refs", "refA", "--out", tmp_path / "o.csv")
    check_run(res, "read-mtme", fmt="text", files=[root, seg])


def test_read_mtme_latin1_score_file_gave_bare_unicodedecodeerror(tmp_path):
    shape = Shape(4, 6, 0, False, 2, 1, "none", "", False, 5)
    root = write_mtme(tmp_path / "mtme", shape)
    seg = root / "wmt99" / "human-scores" / "en-de.mqm.seg.score"
    seg.write_bytes(seg.read_bytes().replace(b"S1\t", b"S\xe9\t", 1))
    res = run("read-mtme", root, "wmt99", "en-de", "--refs", "refA", "--out", tmp_path / "o.csv")
    err = check_run(res, "read-mtme", fmt="text", files=[seg])
    assert res.exit_code == 2 and f"{seg}, line 7: not UTF-8 text (byte 0xe9)" in err, err


def test_analysis_data_error_named_neither_the_file_nor_an_option(tmp_path):
    path = tmp_path / "one_system.csv"
    path.write_text("system,input,human,bleu,chrf\n" + "".join(f"S0,i{i},{i % 3},{i / 5},{i % 2}\n" for i in range(5)))
    res = run("local", path, "--context", "input", "--human", "human")
    err = check_run(res, "local", files=[path])
    assert res.exit_code == 2 and err.startswith("metaeval: error: one_system.csv: human-ordered pairs"), err


def test_validity_with_one_trait_error_named_no_option(tmp_path):
    path = tmp_path / "raters.csv"
    path.write_text("system,input,rater,human,bleu\n" + "".join(
        f"S{s},i{i},r{r},{(s + i + r) % 5},{s * i}\n" for s in range(3) for i in range(4) for r in range(2)))
    res = run("validity", path, "--human", "human", "--rater-col", "rater", "--format", "json")
    err = check_run(res, "validity", files=[path])
    assert res.exit_code == 2 and "--human" in err and "needs at least 2 traits" in err, err  # the analysis' message (issue 25: the rule lives in mtmm)


def test_diagnose_sizes_above_the_texts_error_named_sizes_not_the_option(tmp_path):
    path = tmp_path / "small.csv"
    path.write_text("system,input,human,bleu\n" + "".join(
        f"S{s},i0,{s % 5 + 1},{s / 4}\n" for s in range(4)))
    res = run("diagnose", path, "--human", "human", "--low", "2", "--high", "4", "--sizes", "3,5")
    err = check_run(res, "diagnose", files=[path])
    assert res.exit_code == 2 and "--sizes" in err and "sizes [5] exceed the 4 texts" in err, err


@pytest.mark.parametrize("command", ["compare", "validity"])
def test_compare_level_list_error_offered_the_refused_item_spelling(tmp_path, command):
    """QA pass: `compare --level system,input,group-by-system` fell through to the library's
    message "choose one of system, input, item, global", offering `item`, which the command
    line then refused as ambiguous, and never said that these commands take one level. (The
    command line now takes `item`, the name every output prints; the message names the levels
    as the results do.)"""
    path = _one_metric(tmp_path)
    res = run(command, str(path), "--human", "human", "--level", "system,input,group-by-system")
    err = check_run(res, command, files=[path])
    assert res.exit_code == 2, res.stderr
    assert "--level takes one level" in err and "(got 3: system, input, item)" in err, err
