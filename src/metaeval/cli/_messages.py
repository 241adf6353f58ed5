"""Messages of the commands: one-line errors, grouped warnings, the missing-extra message."""

from __future__ import annotations

import sys

import click

from ..report.tables import literal as _literal


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


class _WarningGroups:
    """Warnings of one command, grouped: same category and same message template
    (:func:`_template`) -> one line ``metaeval: warning (Category): message (xN)``,
    printed by :meth:`flush` (at the end of the command).  The line shows the first
    message of the group; ``(xN, first shown)`` says the others differ in names or
    numbers."""

    def __init__(self):
        self.groups = {}

    def show(self, message, category, filename, lineno, file=None, line=None):
        text = str(message).strip()
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
                    "ir_measures": "ranking", "pytrec_eval": "ranking",
                    "torch": "neural", "transformers": "neural", "bert_score": "neural",
                    "tokenizers": "neural", "safetensors": "neural", "dask": "dist", "distributed": "dist"}


#: Top-level module -> the package that brings it, for optional packages no extra of
#: pyproject.toml holds (tests/test_cli_api.py checks both tables against pyproject.toml).
_PLAIN_PACKAGES = {"matplotlib": "matplotlib"}


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
        plain = _PLAIN_PACKAGES.get(module.split(".")[0])
        if plain:
            return (f"`{cmd}` needs the optional package {plain!r}, which is not installed (or fails to "
                    f"import); install it with: pip install {plain}")
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

