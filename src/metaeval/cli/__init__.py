"""The ``metaeval`` command.

Subcommands: ``datasets`` (list bundled datasets), ``correlate`` (every
metric against a human column), ``compare`` (pairwise tests and significance
clusters), ``measures`` (discriminative power and ranking consistency of the
correlation measures), ``simulate`` (the statistical simulation of seed
paper 000), ``reliability`` and ``validity`` (seed paper 002), ``score``
(text metrics), ``perturb``, ``diagnose`` and ``local`` (text-level
diagnostics, local accuracy), ``judge`` (LLM judges, pointwise or pairwise),
``preferences`` (pairwise-preference meta-evaluation), ``read-mtme`` and
``wmt`` (mt-metrics-eval data, WMT task tables), ``report`` (everything, as
one HTML page).  DATA is a file (CSV, TSV, JSONL, Parquet) or the name of a
bundled dataset.  Bad input exits with code 2 and a one-line message.

The package: this module holds the group and the table of commands, each
imported only when it runs or its help is shown (``metaeval correlate``
imports no other command's module); ``_data`` loads DATA with the layout
options, ``_output`` writes tables, CSV and JSON, ``_messages`` turns
errors and warnings into one-line messages, ``_api`` derives options from
an analysis' signature and docstring; one module per group of commands.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from .._version import __version__
from ..errors import DataError, MetaevalError
from ..report.tables import literal as _literal
from ._messages import _fail, _unexpected_message, _WarningGroups

#: command name -> "module:function" of this package; a command's module is imported
#: only when the command runs or its help is shown.
COMMANDS = {
    "bench": "datasets:bench_cmd",
    "compare": "correlation:compare",
    "correlate": "correlation:correlate",
    "datasets": "datasets:datasets",
    "diagnose": "texts:diagnose",
    "judge": "judge:judge",
    "local": "local:local",
    "measures": "correlation:measures",
    "perturb": "texts:perturb",
    "preferences": "preferences:preferences",
    "read-mtme": "mt:read_mtme_cmd",
    "reliability": "reliability:reliability",
    "report": "report:report",
    "score": "texts:score",
    "simulate": "simulate:simulate",
    "span-agreement": "mt:span_agreement_cmd",
    "spa": "mt:spa_cmd",
    "validity": "reliability:validity",
    "wmt": "mt:wmt_cmd",
}


def _set_quiet(ctx, param, value):
    if value:
        ctx.meta["metaeval.quiet"] = True


class _LazyCommands(dict):
    """The group's ``commands``: every name is listed, a command is imported on first look-up."""

    def __init__(self, table):
        super().__init__((name, None) for name in table)
        self._table = table

    def __getitem__(self, name):
        cmd = super().__getitem__(name)
        if cmd is None:
            module, _, attr = self._table[name].partition(":")
            cmd = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
            cmd.name = name
            # the list itself, without building generated options (cli._api.ApiCommand)
            params = cmd.__dict__.get("_params", cmd.__dict__.get("params", []))
            if not any(getattr(p, "name", None) == "quiet" for p in params):
                params.append(click.Option(
                    ["--quiet", "-q"], is_flag=True, expose_value=False, callback=_set_quiet,
                    help="No progress bars, notes or cost estimates. Warnings are still printed (they "
                         "say why a value is NaN, shown as '-', or cannot be trusted), and so are errors."))
            super().__setitem__(name, cmd)
        return cmd

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def values(self):
        return [self[n] for n in self]

    def items(self):
        return [(n, self[n]) for n in self]

    def __iter__(self):
        return iter(list(super().keys()))


class _Group(click.Group):
    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None:
            from ._api import check_spellings

            check_spellings(cmd, rest, click.Context(cmd, info_name=name, parent=ctx))
        return name, cmd, rest

    def invoke(self, ctx):
        import warnings

        from ..errors import MetaevalWarning

        groups = _WarningGroups()
        with warnings.catch_warnings():
            # count every occurrence (the default filter shows a message once per place)
            warnings.simplefilter("always", MetaevalWarning)
            warnings.showwarning = groups.show
            try:
                rv = super().invoke(ctx)
                for note in ctx.meta.pop("metaeval.notes", []):  # only when the command succeeded
                    if not ctx.meta.get("metaeval.quiet"):
                        click.echo(f"metaeval: note: {_literal(note)}", err=True)
                return rv
            except click.UsageError as exc:
                # click's own form is three lines ("Usage: ...", "Try ...", "Error: ..."); one line
                # like every other error, naming the option and where the help is
                groups.flush()
                path = exc.ctx.command_path if exc.ctx is not None else "metaeval"
                msg = " ".join(exc.format_message().split("\n")).strip()
                _fail(f"{msg} (see `{path} --help`)")
            except BrokenPipeError:
                # the reader of stdout went away (`metaeval ... | head`): stop quietly, as Python's
                # docs advise (point stdout at devnull so the interpreter's flush at exit is quiet)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                sys.exit(0)
            except (MetaevalError, ValueError, KeyError, OSError) as exc:
                groups.flush()
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                # printed as the analysis wrote it: an option is spelled as the keyword it sets
                data = ctx.meta.get("metaeval.data")
                if (isinstance(exc, DataError) and data and os.path.isfile(data) and "--" not in msg
                        and os.path.basename(data) not in msg):
                    msg = f"{os.path.basename(data)}: {msg}"  # an analysis' data error: say which data
                _fail(msg)
            except (ImportError, MemoryError, RecursionError, OverflowError, EOFError) as exc:
                # EOFError would reach click as Ctrl-D ("Aborted!", exit 1); the others as tracebacks
                groups.flush()
                _fail(_unexpected_message(exc, ctx))
            finally:
                # printed with --quiet too: a warning explains a number of the output (a '-' for NaN,
                # an interval on few units); --quiet hides progress, notes and estimates
                groups.flush()




@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metaeval")
def main():
    """Meta-evaluation of NLG evaluation metrics."""


main.commands = _LazyCommands(COMMANDS)

#: names tests and scripts import from ``metaeval.cli`` -> the module that holds them
_MOVED = {"_literal": "_output", "_progress": "_output", "_report_progress": "report",
          "_CLI_LEVELS": "_data", "_levels_option": "_data", "_one_level_option": "_data"}


def __getattr__(name):
    if name in _MOVED:
        return getattr(importlib.import_module(f"{__name__}.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
