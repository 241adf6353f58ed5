"""Errors raised by the analyses name the command-line option (issue 14, finding 7).

Issue 25.3: an option is spelled as the API keyword it sets (``--confidence-level`` sets
``confidence_level``, ``--n-jobs`` sets ``n_jobs``), so an analysis' message, printed as the
analysis writes it (``confidence_level=1.5``), names the option too; the regex that re-spelled
messages (``_cli_spelling``, which mangled a cell location ``(system='S0'`` into
``(--system-col 'S0'``) is retired.  These tests check, for each message, that the keyword it
names is an option of the command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.cli import main


@pytest.fixture(scope="module")
def basic(tmp_path_factory):
    rng = np.random.default_rng(0)
    rows = [
        {"system": f"s{s}", "input": f"i{i}", "human": int(h), "bleu": h + rng.normal(),
         "chrf": h + rng.normal()}
        for s in range(5) for i in range(12) for h in [rng.integers(1, 6)]
    ]
    path = tmp_path_factory.mktemp("names") / "basic.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def _option_of(command, keyword):
    """The command's option that sets ``keyword`` (its name is the keyword)."""
    flag = "--" + keyword.replace("_", "-")
    assert any(flag in p.opts for p in main.commands[command].params), (command, flag)
    return flag


def _err(*args):
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("metaeval: error:")]
    assert len(lines) == 1, res.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, flag, keyword",
    [
        (["--ci", "bogus"], "ci='bogus'", "ci"),
        (["--confidence-level", "1.5"], "confidence_level=1.5", "confidence_level"),
        (["--alternative", "up"], "alternative='up'", "alternative"),
    ],
)
def test_correlate_names_the_option(basic, args, flag, keyword):
    line = _err("correlate", basic, "--human", "human", *args)
    assert flag in line and _option_of("correlate", keyword) == args[0]


def test_diagnose_names_the_ks_options(basic):
    line = _err("diagnose", basic, "--human", "human", "--metrics", "bleu,chrf")
    assert "low= and high=" in line
    assert _option_of("diagnose", "low") and _option_of("diagnose", "high")


def test_messages_for_both_audiences_are_left_alone(basic):
    # check_level_size's message already gives the command-line spelling: not rewritten
    line = _err("correlate", basic, "--human", "human", "--level", "system", "--systems", "s0")
    assert "command line" in line or "--" in line


@pytest.mark.parametrize("command", ["correlate", "compare"])
def test_jobs_is_named_as_the_option(basic, command):
    # the analyses say n_jobs=; the command line's option is --n-jobs (--jobs: its old spelling)
    for flag in ("--n-jobs", "--jobs"):
        line = _err(command, basic, "--human", "human", flag, "0")
        assert "n_jobs=0" in line and _option_of(command, "n_jobs")


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--alpha", "2"], "alpha=2"),
        (["--correction", "nope"], "correction='nope'"),
        (["--cluster-correction", "x"], "cluster_correction='x'"),
        (["--n-jobs", "0"], "n_jobs=0"),
    ],
)
def test_compare_of_two_metrics_refuses_bad_all_pairs_options(basic, args, flag):
    # with two metrics these options do not apply (one test), but a bad value
    # was silently accepted; it is the same error as with more metrics
    two = _err("compare", basic, "--human", "human", "--metrics", "bleu,chrf",
               "--n-resamples", "20", *args)
    assert flag in two
