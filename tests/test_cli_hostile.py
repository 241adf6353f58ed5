"""The command line on hostile input (issues 18.7, 14.5, 14.7).

Every bad input ends in exactly one ``metaeval: error: ...`` line on stderr
and exit code 2 (no traceback, no click ``Aborted!``); names from the data are
shown literally in terminal tables; CSV exports cannot run as spreadsheet
formulas; repeated warnings are grouped; data-layer errors name the command
line's options.  Expected numbers come from scipy (``scipy.stats.pearsonr``).
"""

from __future__ import annotations

import gzip
import io
import sys
import warnings

import click
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from metaeval.cli import _Group, main
from metaeval.errors import ConstantInputWarning, TooFewPairsWarning

ESC = "\x1b"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_one_line_error(res, *needles):
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    err = res.stderr
    assert err.startswith("metaeval: error: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in res.output and "Aborted" not in res.output
    for n in needles:
        assert n in err, err


HOSTILE = {"markup": "[/bold]", "styled": "[red]x[/red]", "escape": ESC + "[31mred",
           "formula": '=HYPERLINK("http://x")'}


@pytest.fixture
def names_csv(tmp_path):
    """5 systems x 4 inputs; metrics named with rich markup, an ANSI escape and a
    spreadsheet formula; the formula metric is the negated human score plus noise,
    so its statistic is negative."""
    rng = np.random.default_rng(3)
    human = rng.normal(size=(5, 4))
    frame = {"system": np.repeat([f"S{s}" for s in range(5)], 4),
             "input": np.tile([f"i{i}" for i in range(4)], 5),
             "human": human.ravel()}
    for key, name in HOSTILE.items():
        noise = rng.normal(scale=0.5, size=(5, 4))
        frame[name] = (-human if key == "formula" else human) .ravel() + noise.ravel()
    path = tmp_path / "names.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    return path, pd.DataFrame(frame)


# ----------------------------------------------------------------------------- rc 2 promise
def test_truncated_gz_gave_aborted_rc_1(tmp_path):
    data = gzip.compress(("system,input,human,bleu\n" + "A,x,1,0.5\n" * 2000).encode())
    path = tmp_path / "scores.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    assert_one_line_error(run("correlate", path, "--human", "human"),
                          "scores.csv.gz: the gzip stream is truncated")


def test_latin1_file_decode_error_named_no_file_or_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_bytes("system,input,human,bleu\nA,caf\xe9,1,0.5\n".encode("latin-1"))
    assert_one_line_error(run("correlate", path, "--human", "human"),
                          "scores.csv: line 2, byte 6 is not UTF-8")


def test_jsonl_integer_above_1e308_gave_overflowerror_traceback(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text('{"system": "A", "input": "x", "human": 1, "bleu": 1%s}\n' % ("0" * 400))
    assert_one_line_error(run("correlate", path, "--human", "human"),
                          "scores.jsonl: line 1: the integer", "beyond the float range")


def test_deeply_nested_json_gave_recursionerror_traceback(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text('{"system": "A", "input": "x", "human": %s}\n' % ("[" * 100_000 + "]" * 100_000))
    assert_one_line_error(run("correlate", path, "--human", "human"),
                          "scores.jsonl: line 1 nests JSON")


def test_repeated_csv_header_became_metric_human_1(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("system,input,human,human\nA,x,1,2\nB,x,2,3\n")
    assert_one_line_error(run("correlate", path, "--human", "human"),
                          "scores.csv: the header (line 1) repeats column name(s): 'human'")


def test_texts_jsonl_decode_error_names_the_file(tmp_path, names_csv):
    path, _ = names_csv
    texts = tmp_path / "texts.jsonl"
    texts.write_bytes('{"system": "S0", "input": "i0", "hypothesis": "caf\xe9"}\n'.encode("latin-1"))
    assert_one_line_error(run("score", path, "--metrics", "bleu", "--human", "human",
                              "--texts", texts), "texts.jsonl: line 1")


@pytest.mark.parametrize(
    "exc, needles",
    [
        (MemoryError(), ["out of memory in `metaeval correlate` on ", "names.csv", "--n-resamples"]),
        (RecursionError("maximum recursion depth exceeded"),
         ["`metaeval correlate` on ", "nested too deeply"]),
        (OverflowError("int too large to convert to float"),
         ["`metaeval correlate` on ", "int too large to convert to float"]),
        (EOFError("Compressed file ended"), ["unexpected end of input (Compressed file ended)"]),
    ],
)
def test_unexpected_exceptions_gave_tracebacks(monkeypatch, names_csv, exc, needles):
    import metaeval.correlation

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(metaeval.correlation, "correlate", boom)
    path, _ = names_csv
    assert_one_line_error(run("correlate", path, "--human", "human"), *needles)


def test_missing_text_extra_gave_importerror_traceback(monkeypatch):
    monkeypatch.setitem(sys.modules, "sacrebleu", None)  # import sacrebleu -> ImportError
    assert_one_line_error(run("score", "summeval", "--metrics", "bleu"),
                          "'sacrebleu'", 'pip install "metaeval[text]"')


# ----------------------------------------------------------------------------- names shown literally
def test_metric_named_like_rich_markup_crashed_the_table(names_csv):
    path, frame = names_csv
    res = run("correlate", path, "--human", "human", "--ci", "none", "--pvalue", "none")
    assert res.exit_code == 0, (res.output, res.exception)
    assert "[/bold]" in res.stdout and "[red]x[/red]" in res.stdout
    # the value next to the name is scipy's Pearson r of the system means
    means = frame.groupby("system")[["human", "[/bold]"]].mean()
    r = stats.pearsonr(means["human"], means["[/bold]"]).statistic
    line = next(row for row in res.stdout.splitlines() if "[/bold]" in row)
    assert f"{r:.4f}" in line


def test_escape_sequence_in_a_name_reached_the_terminal(names_csv):
    path, _ = names_csv
    res = run("correlate", path, "--human", "human", "--ci", "none", "--pvalue", "none")
    assert res.exit_code == 0
    assert ESC not in res.stdout
    assert "\\x1b[31mred" in res.stdout


def test_escape_sequence_in_an_error_reached_the_terminal(names_csv):
    path, _ = names_csv
    res = run("correlate", path, "--human", ESC + "[2J")
    assert res.exit_code == 2 and ESC not in res.stderr


# ----------------------------------------------------------------------------- CSV formulas
def test_csv_export_ran_names_as_spreadsheet_formulas(names_csv):
    path, frame = names_csv
    res = run("correlate", path, "--human", "human", "--ci", "none", "--pvalue", "none",
              "--format", "csv")
    assert res.exit_code == 0, res.output
    out = pd.read_csv(io.StringIO(res.stdout), keep_default_na=False)
    assert "'" + HOSTILE["formula"] in set(out["metric"])
    assert "[/bold]" in set(out["metric"])  # not a formula prefix: unchanged
    row = out[out["metric"] == "'" + HOSTILE["formula"]].iloc[0]
    means = frame.groupby("system")[["human", HOSTILE["formula"]]].mean()
    r = stats.pearsonr(means["human"], means[HOSTILE["formula"]]).statistic
    assert r < 0
    assert float(row["statistic"]) == pytest.approx(r, abs=1e-12)  # a number, not "'-0.9"


def test_csv_file_written_by_the_cli_ran_labels_as_formulas(tmp_path):
    pytest.importorskip("sacrebleu")
    rows = [{"system": s, "input": i, "human": h}
            for (s, i, h) in [("=cmd()", "x", 1.0), ("@sum", "x", 2.0), ("-base", "x", 3.0)]]
    data = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(
        '{"system": "%s", "input": "x", "hypothesis": "the cat sat", "references": ["the cat sat"]}\n'
        % r["system"] for r in rows))
    out = tmp_path / "bleu.csv"
    res = run("score", data, "--metrics", "bleu", "--human", "human", "--texts", texts, "--out", out)
    assert res.exit_code == 0, (res.output, res.exception)
    written = pd.read_csv(out, keep_default_na=False)
    assert set(written["system"]) == {"'=cmd()", "'@sum", "'-base"}


# ----------------------------------------------------------------------------- warnings grouped
def _warning_group():
    @click.group(cls=_Group)
    def cli():
        pass

    @cli.command()
    def noisy():
        for k in range(37):
            warnings.warn(f"input 'i{k}' has constant human scores", ConstantInputWarning)
        for _ in range(3):
            warnings.warn("3 of 9 groups have fewer than 2 pairs", TooFewPairsWarning)
        warnings.warn("input 'i0' has constant human scores", ConstantInputWarning)
        click.echo("done")

    @cli.command()
    def fails():
        warnings.warn("one", TooFewPairsWarning)
        warnings.warn("one", TooFewPairsWarning)
        raise ValueError("bad thing")

    return cli


def test_122_warning_lines_for_a_300_row_file():
    res = CliRunner().invoke(_warning_group(), ["noisy"])
    assert res.exit_code == 0
    assert res.stdout == "done\n"
    assert res.stderr.splitlines() == [
        "metaeval: warning (ConstantInputWarning): input 'i0' has constant human scores "
        "(x38, first shown)",
        "metaeval: warning (TooFewPairsWarning): 3 of 9 groups have fewer than 2 pairs (x3)",
    ]


def test_grouped_warnings_are_printed_before_the_error_line():
    res = CliRunner().invoke(_warning_group(), ["fails"])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        "metaeval: warning (TooFewPairsWarning): one (x2)",
        "metaeval: error: bad thing",
    ]


# ----------------------------------------------------------------------------- CLI option names
@pytest.fixture
def dup_csv(tmp_path):
    rows = [("A", "x", 1.0, 0.1), ("A", "x", 2.0, 0.1), ("B", "x", 3.0, 0.2)]
    path = tmp_path / "dup.csv"
    pd.DataFrame(rows, columns=["system", "input", "human", "bleu"]).to_csv(path, index=False)
    return path


def test_duplicate_keys_error_named_api_keywords_rater_and_run(dup_csv):
    # validity has --rater and, since the blind run (issue 25 item 3), --run as correlate
    res = run("validity", dup_csv, "--human", "human")
    assert_one_line_error(res, "pass --rater or --run with the column")
    assert "rater=" not in res.stderr and "run=" not in res.stderr and "groupby" not in res.stderr


def test_duplicate_keys_error_names_run_col_where_the_command_has_it(dup_csv, tmp_path):
    res = run("report", dup_csv, "--human", "human", "--out", tmp_path / "r", "--quick")
    assert_one_line_error(res, "pass --rater or --run with the column")


def test_unknown_metric_error_named_no_option(names_csv):
    assert_one_line_error(run("correlate", names_csv[0], "--human", "human", "--metrics", "[/bold],nope"),
                          "unknown metric column(s): 'nope' (check --metrics)")


def test_unknown_label_column_error_named_api_keywords(dup_csv):
    res = run("validity", dup_csv, "--human", "human", "--system-col", "sys")
    assert_one_line_error(res, "(check --system, --input, --rater, --run): 'sys'")  # --run: as correlate
    res = run("correlate", dup_csv, "--human", "human", "--system-col", "sys")
    assert_one_line_error(res, "(check --system, --input, --rater, --run): 'sys'")
    assert "`system`" not in res.stderr


def test_repeated_metric_error_named_metrics_keyword(dup_csv):
    assert_one_line_error(run("correlate", dup_csv, "--human", "human", "--metrics", "bleu,bleu"),
                          "--metrics names a column more than once: 'bleu'")


def test_api_messages_keep_the_python_keywords(dup_csv, names_csv):
    from metaeval.data import read_dataset
    from metaeval.errors import DataError

    with pytest.raises(DataError, match=r"pass `rater=` or `run=` with the column"):
        read_dataset(dup_csv, human="human")
    with pytest.raises(DataError, match=r"unknown metric column\(s\): 'nope'; available"):
        read_dataset(names_csv[0], human="human", metrics=["nope"])


# ----------------------------------------------------------------------------- the shared emitters
@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_prefix_is_quoted_in_text_cells_headers_and_index(prefix):
    from metaeval._export import to_csv

    frame = pd.DataFrame({prefix + "name": [prefix + "cell", "plain"], "value": [-0.5, 1e-300]},
                         index=pd.Index([prefix + "row", "row2"], name=prefix + "ix"))
    out = pd.read_csv(io.StringIO(to_csv(frame, index=True)), index_col=0, keep_default_na=False)
    # a tab or carriage return is written as a visible escape (issue 24, item 2): the cell then
    # starts with a backslash, which no spreadsheet runs
    shown = {"\t": "\\t", "\r": "\\r"}.get(prefix, "'" + prefix)
    assert list(out.columns) == [shown + "name", "value"]
    assert out.index.name == shown + "ix"
    assert list(out.index) == [shown + "row", "row2"]
    assert list(out[shown + "name"]) == [shown + "cell", "plain"]
    # numbers are never quoted and round-trip exactly (repr-based CSV floats)
    assert out["value"].tolist() == [-0.5, 1e-300]


def test_numbers_stored_in_text_columns_are_not_touched_but_text_is():
    from metaeval._export import protect_formulas

    frame = pd.DataFrame({"mixed": [-1.5, "-1.5", None, np.nan, 3]})
    got = protect_formulas(frame)["mixed"].tolist()
    assert got[0] == -1.5 and got[1] == "'-1.5" and got[2] is None and np.isnan(got[3])
    assert got[4] == 3


def test_literal_neutralises_control_and_bidi_characters():
    from metaeval.cli import _literal

    assert _literal("plain [b]name[/b] é") == "plain [b]name[/b] é"
    assert _literal("\x1b[31mred\x07") == "\\x1b[31mred\\x07"
    assert _literal("a\u202eb\nc\rd\te") == "a\\u202eb\\nc\\rd\\te"


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_column_named_like_markup_crashed_the_progress_bars(monkeypatch):
    from metaeval.cli import _progress, _report_progress

    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    rp, run_progress = _report_progress()
    with rp:
        run_progress.start(1)
        with run_progress.step("correlations for [/bold]" + ESC, 2) as bar:
            bar(1)
            rp.refresh()
    with _progress(3, "scoring [/x]") as bar:
        bar.update(1, 3, description="metric [/bold]")
        bar._p.refresh()
    assert "[/bold]" in term.getvalue() and ESC + "[/" not in term.getvalue()


def test_truncated_parquet_names_the_file_and_no_api_keyword(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "s.parquet"
    pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"], "human": [1.0, 2.0]}).to_parquet(path)
    path.write_bytes(path.read_bytes()[:-20])
    res = run("correlate", path, "--human", "human")
    assert_one_line_error(res, "s.parquet: cannot be read as Parquet")
    assert "format=" not in res.stderr


def test_same_label_column_twice_error_named_api_keywords(names_csv):
    res = run("correlate", names_csv[0], "--human", "human", "--input-col", "system")
    assert_one_line_error(res, "the label columns must differ: --system 'system', --input 'system'")
