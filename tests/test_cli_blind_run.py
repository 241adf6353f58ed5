"""Problems a blind user run of the command line found (each test fails without its fix)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from metaeval.cli import COMMANDS, main
from metaeval.cli._api import ApiOption


def _help(*cmd):
    res = CliRunner().invoke(main, [*cmd, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def _option_help(cmd, flag):
    """The help of one option as --help shows it (its visible names, then its text)."""
    import click

    command = main.commands[cmd]
    ctx = click.Context(command)
    for p in command.params:
        if flag in getattr(p, "opts", ()):
            names, text = p.get_help_record(ctx)
            return " ".join(f"{names} {text}".split())
    raise AssertionError((cmd, flag))


def test_cluster_correction_help_says_holm_runs_when_absent():
    """compare --cluster-correction showed [default: none] while leaving it out runs holm."""
    text = _option_help("compare", "--cluster-correction")
    assert "[default: none]" not in text
    assert "[default: holm; none with --clusters mtme" in text


def test_preferences_ceiling_default_says_what_absent_does():
    text = _option_help("preferences", "--ceiling")
    assert "[default: none]" not in text and "[default: when the data has 2+ raters]" in text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_number_options_do_not_show_the_word_none_they_refuse(name):
    """--rng, --sequential, diagnose --low/--high, --threshold showed [default: none] but reject none."""
    import click

    bad = []
    for p in main.commands[name].params:
        if isinstance(p, click.Option) and isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)) \
                and p.help and ("[default: none]" in p.help or "(none: " in p.help):
            bad.append((p.opts[0], p.help))
    assert bad == []


def test_rng_default_is_fresh_entropy():
    assert "[default: fresh entropy]" in _option_help("compare", "--rng")
    assert "[default: not set]" in _option_help("diagnose", "--low")
