"""Issue 25.4: every command's --help ends with an example, and the example runs (on the bundled
SummEval; the commands that need mt-metrics-eval data, an LLM endpoint or minutes of work are
parsed instead of run)."""

from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner

from metaeval.cli import COMMANDS, main

#: examples parsed, not run: mt-metrics-eval folders, an OpenAI-compatible endpoint, the report
PARSED = {"wmt", "read-mtme", "span-agreement", "judge", "report"}
#: examples that run but take longer than a few seconds
SLOW = {"bench"}


def _example(name):
    epilog = main.commands[name].epilog or ""
    assert epilog.startswith("Example: metaeval "), (name, epilog)
    args = shlex.split(epilog[len("Example: "):])
    assert args[:2] == ["metaeval", name], args
    return args[2:]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_an_example_in_its_help(name):
    _example(name)
    text = " ".join(CliRunner().invoke(main, [name, "--help"]).output.split())
    assert "Example: metaeval " + name in text


RUN = [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(set(COMMANDS) - PARSED)]


@pytest.mark.parametrize("name", RUN)
def test_the_example_runs(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, [name, *_example(name)])
    assert res.exit_code == 0, (res.output, res.exception)


@pytest.mark.parametrize("name", sorted(PARSED))
def test_the_example_parses(name, tmp_path, monkeypatch):
    """The example's options exist and its values convert (paths made to exist here)."""
    monkeypatch.chdir(tmp_path)
    args = _example(name)
    for a in args:
        if a.startswith("mt-metrics-eval"):
            (tmp_path / a).mkdir(exist_ok=True)
        elif a.endswith(".rating"):
            (tmp_path / a).write_text("")
    cmd = main.commands[name]
    ctx = cmd.make_context(name, list(args))
    assert ctx.params
