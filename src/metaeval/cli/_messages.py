"""Messages of the commands: one-line errors, grouped warnings, the missing-extra message."""

from __future__ import annotations

import sys

import click

from .. import _choices
from ..report.tables import literal as _literal
from ._data import _long_option


def _fail(msg):
    click.echo(f"metaeval: error: {_literal(msg)}", err=True)
    sys.exit(2)


_QUOTED_OR_NUMBER = None


def _template(message):
    """A warning's message with quoted names and numbers blanked: warnings that differ
    only in those are one group."""
    import re

    global _QUOTED_OR_NUMBER
    if _QUOTED_OR_NUMBER is None:
        _QUOTED_OR_NUMBER = re.compile(r"'[^']*'|\"[^\"]*\"|[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
    return _QUOTED_OR_NUMBER.sub("#", message)


#: analysis keyword -> the parameter name of the command-line option that sets it
_KEYWORD_OPTIONS = {"n_jobs": "jobs", "rng": "seed"}


def _cli_spelling(text, command=None):
    """An analysis' message with its options spelled as the command line's.

    ``system_scores=`` becomes ``--system-level``; given the running
    subcommand, every ``name=`` that is a parameter of the command becomes its long
    option (``ci='bogus'; choose ...`` -> ``--ci 'bogus'; choose ...``,
    ``low= and high=`` -> ``--ks-low and --ks-high``).  A message that already
    names a command-line option (``--``, or "command line") is left as it is: it
    was written for both audiences.
    """
    if "system_scores=" in text:
        for mode in _choices.SYSTEM_SCORE_MODES:
            text = text.replace(f"system_scores='{mode}'", f"--system-level {mode}")
        text = text.replace("system_scores=", "--system-level ")
    if command is None or "--" in text or "command line" in text:
        return text
    flags = {p.name: _long_option(p) for p in command.params if p.name and _long_option(p)}
    if not flags:
        return text
    # keywords the analyses spell otherwise than the options
    for keyword, name in _KEYWORD_OPTIONS.items():
        if name in flags:
            flags.setdefault(keyword, flags[name])
    import re

    def spell(part):
        return re.sub(r"(?<![\w.\-])([a-z][a-z0-9_]*)= ?",
                      lambda m: f"{flags[m.group(1)]} " if m.group(1) in flags else m.group(0), part)

    # a cell's location, "(system='S0', input='i0')" (data._validate.fmt_key), names label
    # columns and their values, not options: it is kept as written
    global _LOCATION
    if _LOCATION is None:
        _LOCATION = re.compile(rf"(\({_PAIR}(?:, {_PAIR})+\))")
    pieces = _LOCATION.split(text)
    return "".join(p if k % 2 else spell(p) for k, p in enumerate(pieces))


#: A row key as the data layer writes it: two or more ``column=value`` in parentheses.
_PAIR = r"[A-Za-z_]\w*=(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()'\"]*)"
_LOCATION = None


class _WarningGroups:
    """Warnings of one command, grouped: same category and same message template
    (:func:`_template`) -> one line ``metaeval: warning (Category): message (xN)``,
    printed by :meth:`flush` (at the end of the command).  The line shows the first
    message of the group; ``(xN, first shown)`` says the others differ in names or
    numbers."""

    def __init__(self):
        self.groups = {}

    def show(self, message, category, filename, lineno, file=None, line=None):
        text = _cli_spelling(str(message).strip())
        text = text.splitlines()[0] if text else category.__name__
        key = (category, _template(text))
        group = self.groups.get(key)
        if group is None:
            self.groups[key] = [text, 1, False]
        else:
            group[1] += 1
            group[2] = group[2] or text != group[0]

    def flush(self):
        for (category, _), (text, count, varied) in self.groups.items():
            more = "" if count == 1 else f" (x{count}, first shown)" if varied else f" (x{count})"
            click.echo(f"metaeval: warning ({category.__name__}): {_literal(text)}{more}", err=True)
        self.groups = {}


#: Top-level module -> the pip extra that brings it (pyproject.toml).
_EXTRA_OF_MODULE = {"sacrebleu": "text", "rouge_score": "text", "nltk": "text", "jiwer": "text",
                    "matplotlib": "plot", "ir_measures": "ranking", "pytrec_eval": "ranking",
                    "torch": "neural", "transformers": "neural", "bert_score": "neural",
                    "tokenizers": "neural", "safetensors": "neural", "dask": "dist", "distributed": "dist"}


def _missing_module(exc):
    """The name of the module whose import failed (through ``raise ... from``), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ImportError) and getattr(exc, "name", None):
            return exc.name
        exc = exc.__cause__ or exc.__context__
    return None


def _unexpected_message(exc, ctx):
    """One line for an exception metaeval did not raise on purpose, naming DATA."""
    data = ctx.meta.get("metaeval.data")
    on = f" on {data}" if data else ""
    cmd = f"metaeval {ctx.invoked_subcommand}" if ctx.invoked_subcommand else "metaeval"
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, ImportError):
        module = _missing_module(exc) or ""
        extra = _EXTRA_OF_MODULE.get(module.split(".")[0])
        if extra:
            return (f"`{cmd}` needs the optional package {module.split('.')[0]!r}, which is not installed "
                    f'(or fails to import); install it with: pip install "metaeval[{extra}]"')
        return f"`{cmd}` cannot import a package it needs ({detail or type(exc).__name__}); check the installation"
    if isinstance(exc, MemoryError):
        return (f"out of memory in `{cmd}`{on}: the data or the requested work is too large for this "
                "machine; use a smaller file or subset (--metrics), fewer --n-resamples/--splits, "
                "or more memory")
    if isinstance(exc, RecursionError):
        return (f"`{cmd}`{on}: a value is nested too deeply to process (RecursionError); flatten "
                "the nested values in the data")
    if isinstance(exc, OverflowError):
        return (f"`{cmd}`{on}: a number is beyond the float range ({detail or 'OverflowError'}); "
                "check the data for huge values")
    if isinstance(exc, EOFError):
        return (f"`{cmd}`{on}: unexpected end of input ({detail or 'EOFError'}): a file is truncated; "
                "get a complete copy")
    return f"`{cmd}`{on}: {type(exc).__name__}: {detail}"

