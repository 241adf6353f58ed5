"""Issue 25.4: the shell completes every option whose values are a fixed list.

An option whose help lists its values (``a|b|c: ...`` or ``One of a, b, ...``) or whose type
is a choice completes them (click's shell completion, ``_METAEVAL_COMPLETE=bash_complete``),
so a user can press TAB instead of reading ``--help``.  Every command is checked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import click
import pytest

from metaeval.cli import COMMANDS, main

#: A help text that enumerates the option's values ("a|b|c") or starts with "One of".
_LISTS_VALUES = re.compile(r"(?:^|\s)(?:[a-z][\w.-]*\|)+[a-z][\w.-]*\b|^One of ")


#: Options whose values are a fixed list whatever their help says (grouping levels, coefficients).
_FIXED_LISTS = ("level", "levels", "method", "methods")


def _options(name):
    ctx = click.Context(main)
    cmd = main.get_command(ctx, name)
    cctx = click.Context(cmd, info_name=name, parent=ctx)
    for p in cmd.params:
        if isinstance(p, click.Option) and not p.hidden:
            yield cctx, p


def _completes(cctx, p):
    return [c.value for c in p.shell_complete(cctx, "")]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_with_a_fixed_list_of_values_completes_them(name):
    missing = []
    for cctx, p in _options(name):
        choices = getattr(p.type, "choices", None)
        fixed = choices or _LISTS_VALUES.search(p.help or "") or p.name in _FIXED_LISTS
        if fixed and not _completes(cctx, p):
            missing.append(f"{'/'.join(p.opts)}: {(p.help or '')[:60]}")
    assert missing == [], f"metaeval {name}: options that list values but complete none: {missing}"


def test_the_completion_check_sees_an_option_that_lists_values_without_completing():
    # a planted option whose help lists values, typed as a plain string
    cmd = click.Command("x", params=[click.Option(["--kind"], help="a|b|c: the kind.")])
    cctx = click.Context(cmd, info_name="x")
    (p,) = cmd.params
    assert _LISTS_VALUES.search(p.help) and _completes(cctx, p) == []


def test_bash_completion_of_a_generated_choice_option():
    # the shell's own protocol, end to end: `metaeval correlate summeval --ci b<TAB>`
    env = {**os.environ, "_METAEVAL_COMPLETE": "bash_complete",
           "COMP_WORDS": "metaeval correlate summeval --ci boot", "COMP_CWORD": "4"}
    out = subprocess.run([sys.executable, "-m", "metaeval"], env=env, capture_output=True, text=True,
                         check=False).stdout.split()
    assert {"plain,boot-systems", "plain,boot-inputs", "plain,boot-both"} <= set(out)
