"""Output of the commands: progress bars, JSON/CSV emitters, terminal tables, figures."""

from __future__ import annotations

import json
import math
import os
import sys
from contextlib import contextmanager

import click

from ..errors import MetaevalError
from ..report import tables as _tables
from ..report.tables import literal as _literal


class _Bar:
    """A progress bar's callbacks: ``bar(k)`` advances by k units (the analyses'
    convention); ``bar.update(done, total)`` sets both (textmetrics' convention)."""

    def __init__(self, progress, task):
        self._p, self._task = progress, task

    def __call__(self, k=1):
        self._p.advance(self._task, k)

    def update(self, done, total, description=None):
        extra = {} if description is None else {"description": _markup_safe(description)}
        self._p.update(self._task, completed=done, total=total, **extra)


@contextmanager
def _progress(total, label, enabled=True):
    """A rich progress bar on stderr (only when stderr is a terminal);
    ``total=None``: the number of work units is not known in advance."""
    ctx = click.get_current_context(silent=True)
    quiet = ctx is not None and ctx.meta.get("metaeval.quiet")
    if not enabled or quiet or (total is not None and total <= 1) or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as p:
        task = p.add_task(_markup_safe(label), total=total)
        yield _Bar(p, task)


def _note(text):
    """A ``metaeval: note:`` line on stderr (none with --quiet)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or not ctx.meta.get("metaeval.quiet"):
        click.echo(f"metaeval: note: {text}", err=True)


def _json_default(o):
    if isinstance(o, float) and math.isnan(o):
        return None
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o))


def _clean(records):
    """NaN -> None so the JSON is standard."""
    out = []
    for r in records:
        out.append({k: _nan_to_none(v) for k, v in r.items()})
    return out


def _nan_to_none(o):
    """JSON-ready: NaN -> None, infinities -> "inf"/"-inf", numpy -> Python; the same conversion
    as the report's results.json (:func:`metaeval._export.plain`)."""
    from .._export import plain

    return plain(o)


def _write_json(obj, path):
    with open(path, "w") as f:
        json.dump(_nan_to_none(obj), f, indent=1, default=_json_default, allow_nan=False)


def _emit_csv(frame, **kwargs):
    """Print a frame as CSV on stdout, protected against spreadsheet formulas
    (see :func:`metaeval._export.to_csv`)."""
    from .._export import to_csv

    click.echo(to_csv(frame, **kwargs), nl=False)


def _write_csv(frame, path, **kwargs):
    """Write a frame to a CSV file, protected against spreadsheet formulas."""
    from .._export import to_csv

    to_csv(frame, path, **kwargs)


def _emit_csv_by_analysis(results):
    """One CSV of several results' frames, each row tagged with its ``analysis``."""
    import pandas as pd

    frames = []
    for k, v in results.items():
        f = v.to_frame()
        f.insert(0, "analysis", k)
        frames.append(f)
    _emit_csv(pd.concat(frames, ignore_index=True))


def _emit_json(obj):
    click.echo(json.dumps(_nan_to_none(obj), indent=2, default=_json_default, allow_nan=False))


def _say(text):
    """Print one line of text made of names on stdout, through the views' escaping
    (:func:`metaeval.report.tables.literal`)."""
    click.echo(_literal(text))


def _show(*tables):
    """Print the terminal views (metaeval.report.tables) of a command's results."""
    for t in tables:
        _tables.render(t, echo=click.echo)


def _markup_safe(text):
    """``text`` for a place where rich reads markup (progress descriptions): literal."""
    from rich.markup import escape

    return escape(_literal(text))

def _run_seed(seed, out):
    """The seed of a run: as given; else, with an output folder, the one
    recorded there (so a restarted run continues with the same streams) or
    fresh entropy recorded for the next start; else None (fresh, and shown
    in the signature)."""
    if out is None:
        return seed
    path = os.path.join(out, "seed.txt")
    if seed is not None:
        if not os.path.exists(path):
            # recorded as well: a restart without --rng continues the run with this seed
            os.makedirs(out, exist_ok=True)
            with open(path, "w") as f:
                f.write(f"{seed}\n")
        return seed
    import numpy as np

    if os.path.exists(path):
        with open(path) as f:
            return int(f.read().strip())
    os.makedirs(out, exist_ok=True)
    seed = int(np.random.SeedSequence().entropy)
    with open(path, "w") as f:
        f.write(f"{seed}\n")
    return seed


def _figures():
    """The figure views (metaeval.report.figures; matplotlib is imported when one is drawn)."""
    from ..report import figures

    return figures


def _save_figure(make, path):
    try:
        from ..report.figures import save

        save(make(), path)
        return True
    except MetaevalError as exc:  # matplotlib missing
        click.echo(f"metaeval: warning: no figure ({_literal(exc)})", err=True)
        return False
