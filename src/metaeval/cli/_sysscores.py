"""--system-scores and --system-level: given system-level scores (corpus BLEU, WMT .sys.score)
for the commands whose analyses take ``system_scores=`` (correlate, compare, diagnose, report)."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..errors import DataError, ParameterError


def _system_score_options(f):
    """Decorator adding --system-scores FILE and --system-level given|mean to a subcommand whose
    analyses use system-level scores (correlate, compare, diagnose's correlation design, report).
    Their values are stashed in ``ctx.meta``: :func:`_load` attaches the table, and
    :func:`_system_level` gives the analyses' ``system_scores=``."""
    import functools

    @functools.wraps(f)
    def wrapper(*args, **kw):
        ctx = click.get_current_context()
        path, mode = kw.pop("sys_scores_path", None), kw.pop("sys_level", None)
        if path in _choices.SYSTEM_SCORE_MODES and not os.path.exists(path):
            # the analyses' keyword system_scores='given'|'mean' (their messages name it)
            if mode is not None and mode != path:
                raise click.BadParameter(f"--system-scores {path} and --system-level {mode} disagree",
                                         param_hint="--system-scores")
            path, mode = None, path
        elif path is not None and not os.path.isfile(path):
            raise click.BadParameter(f"{path!r}: no such file (give a table of system-level scores, "
                                     f"or {' or '.join(_choices.SYSTEM_SCORE_MODES)})", param_hint="--system-scores")
        ctx.meta["metaeval.sysscores"] = {"path": path, "mode": mode}
        return f(*args, **kw)

    wrapper = click.option(
        "--system-level", "sys_level", type=click.Choice(_choices.SYSTEM_SCORE_MODES), default=None,
        help="At the system level: 'given' correlates the given system-level scores (--system-scores, "
             "e.g. corpus BLEU) where a column has them, 'mean' the means of the cells. Default: given "
             "when there are any (with a note when they differ from the means); the signature says "
             "which (sys:given:... / sys:mean).")(wrapper)
    wrapper = click.option(
        "--system-scores", "sys_scores_path", default=None, metavar="FILE|given|mean",
        help="Given system-level scores that are not means of the cells (corpus BLEU, WMT .sys.score): "
             "a CSV/TSV/JSONL/Parquet table with a system column (--system) and one column per "
             "score column, or the long 'system, metric, score' table of textmetrics.corpus_scores, "
             "or the <out>.sys.csv that read-mtme writes. Only the system level uses them. 'given' or "
             "'mean' instead of a file: the analyses' system_scores= (as --system-level).")(wrapper)
    return wrapper


def _system_level():
    """The running command's --system-level (None: given when the data has given scores)."""
    ctx = click.get_current_context(silent=True)
    return ((ctx.meta.get("metaeval.sysscores") if ctx is not None else None) or {}).get("mode")


def _attach_system_scores(ds, ctx, layout, system):
    """The dataset with the --system-scores table attached (as it is without the option)."""
    opts = (ctx.meta.get("metaeval.sysscores") if ctx is not None else None) or {}
    path = opts.get("path")
    if path is None:
        if opts.get("mode") == "given" and not ds.system_score_columns:
            raise ParameterError("--system-level given: the data has no given system-level scores; "
                                 "give them with --system-scores FILE (or use --system-level mean)")
        return ds
    from ..data.sysscores import read_system_scores

    # rows of systems that --systems/--exclude-systems dropped are skipped, not unknown
    table = read_system_scores(path, ds.systems, ds.columns, system=system or "system",
                               ignore=_Dropped(layout["systems"], layout["exclude"]))
    try:
        return ds.with_system_scores(table)
    except DataError as exc:
        raise DataError(f"--system-scores {os.path.basename(path)}: {exc}") from None


class _Dropped:
    """``label in _Dropped(keep, exclude)``: the system was dropped by --systems/--exclude-systems."""

    def __init__(self, keep, exclude):
        self._keep, self._exclude = (None if not keep else set(keep)), set(exclude or ())

    def __contains__(self, label):
        return label in self._exclude or (self._keep is not None and label not in self._keep)
