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
"""

from __future__ import annotations

import json
import math
import os
import sys
from contextlib import contextmanager

import click

from . import _choices
from ._version import __version__
from .report import tables as _tables
from .report.tables import literal as _literal
from .errors import DataError, MetaevalError, ParameterError

FORMATS = ("table", "json", "csv")


def _split(v):
    if v is None:
        return None
    out = [s.strip() for s in v.split(",") if s.strip()]
    return out or None


# `item` names different groupings in different tools: metaeval's (seed paper 000) correlates across
# the inputs of each system, mt-metrics-eval's correlates across the systems of each item (our `input`).
# On the command line only unambiguous spellings are taken, so nobody gets the other one by accident.
# The names are one table with the API's (metaeval._choices: LEVEL_ALIASES, AMBIGUOUS_LEVELS).
_CLI_LEVELS = {**{name: lv for lv, name in _choices.CLI_LEVEL_NAMES.items()}, **_choices.LEVEL_ALIASES}
_LEVELS_HELP = ", ".join(f"{_choices.CLI_LEVEL_NAMES[lv]} (metaeval's item level)" if lv == "item"
                         else _choices.CLI_LEVEL_NAMES[lv] for lv in _choices.LEVELS)


def _levels_option(ctx, param, value):
    """Click callback of every --level option: comma-separated names -> canonical names (comma-joined)."""
    if value is None:
        return None
    out = []
    for t in _split(value) or []:
        key = t.lower()
        if key in _choices.CLI_AMBIGUOUS_LEVELS or key in ("sys", "seg", "segment"):
            raise ParameterError(
                f"--level {t!r} is ambiguous: metaeval's item level (seed paper 000: per system, across its inputs; "
                "mt-metrics-eval's 'sys' grouping, WMT's group-by-system) is spelled 'group-by-system'; "
                "mt-metrics-eval's 'item' grouping (per input, across systems) is 'input'; WMT's "
                "'seg'/'none' (all cells) is 'global'")
        if key in _choices.AMBIGUOUS_LEVELS:
            raise ParameterError(f"--level {t!r} is ambiguous: {_choices.AMBIGUOUS_LEVELS[key]}; choose from "
                                 f"{_choices.cli_levels()}")
        if key not in _CLI_LEVELS:
            raise ParameterError(f"--level {t!r} is not a level; choose from {_LEVELS_HELP}")
        out.append(_CLI_LEVELS[key])
    return ",".join(dict.fromkeys(out)) or None


def _one_level_option(ctx, param, value):
    """Click callback of a --level option that takes one level (compare, validity)."""
    value = _levels_option(ctx, param, value)
    if value is not None and "," in value:
        raise ParameterError(
            f"--level takes one level in `metaeval {ctx.info_name}` (got {len(value.split(','))}: "
            f"{', '.join(_choices.CLI_LEVEL_NAMES[lv] for lv in value.split(','))}); run it once per level")
    return value


_ALL_LEVELS = ",".join(_choices.CLI_LEVEL_NAMES[lv] for lv in _choices.LEVELS)


def _load(data, system, input_, human, metrics, rater, runs=False, texts=None, need_texts=False,
          run=None, contexts=None, file_only=None):
    """DATA as a Dataset: a bundled name, or a file (with ``texts``: a JSONL of its texts).

    ``metrics=None`` takes the file's default metric columns, ``[]`` none; ``run`` and
    ``contexts`` are passed to the reader; ``file_only`` maps option flags to their values:
    any of them set with a bundled dataset is an error (they describe a file's columns).
    """
    from .data import list_datasets, load_dataset, read_dataset
    from .data import option_names

    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta["metaeval.data"] = data  # named by the messages of unexpected errors
    layout = _layout_values(ctx)
    extra_rater, extra_run = _layout_axes(ctx)
    rater, run = rater or extra_rater, run or extra_run
    if extra_rater or extra_run:
        file_only = {**(file_only or {}), "--rater-col": extra_rater, "--run-col": extra_run}
    names = {d["name"] for d in list_datasets()}
    if data in names:
        scale = _scale_values(ctx)
        file_only = {**(file_only or {}), "--where": layout["where"], "--rater-cols": layout["rater_cols"],
                     "--text-cols": layout["text_cols"], "--scale-bounds": scale.get("bounds"),
                     "--missing-values": scale.get("missing_values")}
        given = [flag for flag, v in file_only.items() if v]
        if given:
            raise ParameterError(f"{', '.join(given)}: options for the columns of a data file, not the "
                                 f"bundled dataset {data!r}")
        ds = load_dataset(data, runs=runs)
        return _attach_system_scores(_select_bundled(ds, layout), ctx, layout, "system")
    if not os.path.isfile(data):
        what = "a directory, not a file" if os.path.isdir(data) else "neither a file nor a bundled dataset"
        raise DataError(f"DATA {data!r} is {what} (bundled datasets: {', '.join(sorted(names))})")
    if texts is not None and layout["text_cols"]:
        raise ParameterError("--texts/--text-cols: give --texts (a JSONL of texts) or --text-cols (text "
                             "columns of DATA), not both")
    if need_texts and texts is None and not layout["text_cols"]:
        raise click.BadParameter("a data file needs --texts (JSONL with the texts) or --text-cols (text "
                                 "columns of DATA, e.g. --text-cols hypothesis=output,reference=ref)",
                                 param_hint="--texts")
    kw = dict(system=system, input=input_, human=human)
    for key, v in (("metrics", metrics), ("contexts", contexts)):
        if v is not None:
            kw[key] = v
    for key, v in (("rater", rater), ("run", run)):
        if v:
            kw[key] = v
    kw.update(_scale_values(ctx))
    with option_names(_option_flags(ctx)):
        if texts is not None:
            kw["texts"] = _read_texts(texts, system, input_)
        try:
            if any(layout.values()):
                ds = _read_selected(data, kw, layout)
            else:
                ds = read_dataset(data, **kw)
        except DataError as exc:
            # a data error names the file it is about (the sweep found many that did not)
            base = os.path.basename(data)
            if base in str(exc):
                raise
            raise DataError(f"{base}: {exc}") from None
    if metrics is None:
        # commands that score texts do not read the file's metric columns: flag them, refuse nothing
        ds = _announce_metrics(ds, data, infer=not need_texts)
    return _attach_system_scores(ds, ctx, layout, system)


def _system_score_options(f):
    """Decorator adding --system-scores FILE and --system-level given|mean to a subcommand whose
    analyses use system-level scores (correlate, compare, diagnose's correlation design, report).
    Their values are stashed in ``ctx.meta``: :func:`_load` attaches the table, and
    :func:`_system_level` gives the analyses' ``system_scores=``."""
    import functools

    @functools.wraps(f)
    def wrapper(*args, **kw):
        ctx = click.get_current_context()
        ctx.meta["metaeval.sysscores"] = {"path": kw.pop("sys_scores_path", None),
                                          "mode": kw.pop("sys_level", None)}
        return f(*args, **kw)

    wrapper = click.option(
        "--system-level", "sys_level", type=click.Choice(_choices.SYSTEM_SCORE_MODES), default=None,
        help="At the system level: 'given' correlates the given system-level scores (--system-scores, "
             "e.g. corpus BLEU) where a column has them, 'mean' the means of the cells. Default: given "
             "when there are any (with a note when they differ from the means); the signature says "
             "which (sys:given:... / sys:mean).")(wrapper)
    wrapper = click.option(
        "--system-scores", "sys_scores_path", default=None, type=click.Path(exists=True, dir_okay=False),
        metavar="FILE",
        help="Given system-level scores that are not means of the cells (corpus BLEU, WMT .sys.score): "
             "a CSV/TSV/JSONL/Parquet table with a system column (--system-col) and one column per "
             "score column, or the long 'system, metric, score' table of textmetrics.corpus_scores, "
             "or the <out>.sys.csv that read-mtme writes. Only the system level uses them.")(wrapper)
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
    from .data.sysscores import read_system_scores

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


#: Click parameter names of the layout options (see :func:`_layout_options`); their values
#: reach :func:`_load` through the click context, so subcommands need no extra arguments.
_LAYOUT_PARAMS = ("sel_systems", "sel_exclude", "sel_where", "rater_cols", "text_cols", "layout_rater",
                  "layout_run", "scale_bounds", "missing_values")

#: Text columns --text-cols can name, as the text metrics read them.
_TEXT_KINDS = ("hypothesis", "reference", "source")


def _layout_options(texts=False, rater_col=False, run_col=False):
    """Decorator adding the shared data-layout options to a subcommand: --systems,
    --exclude-systems, --where, --rater-cols (and --text-cols with ``texts=True``; --rater-col
    and --run-col for subcommands that lack them).  Their values are stashed in ``ctx.meta``
    for :func:`_load`."""
    import functools

    opts = [
        click.option("--systems", "sel_systems", default=None,
                     help="Comma-separated systems to keep (files and bundled datasets)."),
        click.option("--exclude-systems", "sel_exclude", default=None,
                     help="Comma-separated systems to drop, e.g. the human reference: Human,refA."),
        click.option("--where", "sel_where", multiple=True, metavar="COL=VALUE[,VALUE]",
                     help="Keep rows whose COL equals one of the values (plain equality, no "
                          "expressions); repeat for several columns (all must match)."),
        click.option("--rater-cols", "rater_cols", multiple=True, metavar="HUMAN=COL,COL|PATTERN",
                     help="Raters in columns: HUMAN=c_r1,c_r2,c_r3 or a pattern HUMAN='coherence_r*' "
                          "makes HUMAN a human column with one rater per column; repeatable."),
        click.option("--scale-bounds", "scale_bounds", multiple=True, metavar="COL=LOW:HIGH",
                     help="Declare a column's rating scale, e.g. judge=1:5: values outside are an "
                          "error (undeclared scales are checked for failure codes); repeatable."),
        click.option("--missing-values", "missing_values", multiple=True, metavar="COL=V[,V]",
                     help="Codes that mean 'no score' in a column, made missing, e.g. judge=-1,0; "
                          "repeatable."),
    ]
    if rater_col:
        opts.append(click.option("--rater-col", "layout_rater", default=None,
                                 help="Rater column (long files with several raters per cell: human "
                                      "scores are averaged over them)."))
    if run_col:
        opts.append(click.option("--run-col", "layout_run", default=None,
                                 help="Run column (long files where a metric was scored several times: "
                                      "its score is the mean over the runs)."))
    if texts:
        opts.append(click.option(
            "--text-cols", "text_cols", default=None, metavar="KIND=COL,...",
            help="Texts from columns of DATA instead of a --texts JSONL: comma-separated "
                 f"KIND=COLUMN with KIND in {', '.join(_TEXT_KINDS)}, e.g. "
                 "hypothesis=output,reference=ref,source=src; several references: "
                 "reference=ref1,reference=ref2."))

    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kw):
            ctx = click.get_current_context()
            ctx.meta["metaeval.layout"] = {k: kw.pop(k, None) for k in _LAYOUT_PARAMS}
            return f(*args, **kw)

        for o in reversed(opts):
            wrapper = o(wrapper)
        return wrapper

    return deco


def _pairs(values, flag, *, several=True):
    """``("a=x,y", "b=z")`` -> ``{"a": ["x", "y"], "b": ["z"]}``; a one-line error naming ``flag``."""
    out = {}
    for item in values:
        key, sep, rest = item.partition("=")
        key = key.strip()
        vals = [v.strip() for v in rest.split(",")] if several else [rest.strip()]
        if not sep or not key or not all(vals) or any(op in item for op in ("==", "!=", "<", ">")):
            raise ParameterError(f"{flag} {item!r}: expected COLUMN=VALUE[,VALUE], plain equality "
                                 "(no expression such as dataset == 'x'; write dataset=x)")
        if key in out:
            raise ParameterError(f"{flag}: {key!r} is given twice")
        out[key] = vals
    return out


def _layout_values(ctx):
    """The layout options of the running command, parsed: systems, exclude, where, rater_cols, text_cols."""
    raw = (ctx.meta.get("metaeval.layout") if ctx is not None else None) or {}
    where = _pairs(raw.get("sel_where") or (), "--where")
    raters = {}
    for key, vals in _pairs(raw.get("rater_cols") or (), "--rater-cols").items():
        if len(vals) == 1 and set("*?[") & set(vals[0]):
            raters[key] = vals[0]  # a pattern, expanded by the reader
        elif len(vals) < 2:
            raise ParameterError(f"--rater-cols {key}={vals[0]}: give two or more rater columns or a "
                                 "pattern such as 'coherence_r*'")
        else:
            raters[key] = vals
    text_items = _split(raw.get("text_cols")) or []
    refs = [t for t in text_items if t.partition("=")[0].strip() == "reference"]
    texts = {}
    for kind, vals in _pairs([t for t in text_items if t not in refs] + refs[:1], "--text-cols",
                             several=False).items():
        if kind not in _TEXT_KINDS:
            raise ParameterError(f"--text-cols: {kind!r} is not a text kind; choose from "
                                 f"{', '.join(_TEXT_KINDS)} (e.g. hypothesis=output)")
        texts[kind] = vals[0]
    if len(refs) > 1:  # several references: reference=ref1,reference=ref2
        texts["reference"] = [_pairs([t], "--text-cols", several=False)["reference"][0] for t in refs]
    return {"systems": _split(raw.get("sel_systems")), "exclude": _split(raw.get("sel_exclude")),
            "where": where, "rater_cols": raters, "text_cols": texts}


def _scale_values(ctx):
    """--scale-bounds / --missing-values as the ``bounds`` / ``missing_values`` keywords of the reader."""
    raw = (ctx.meta.get("metaeval.layout") if ctx is not None else None) or {}
    out = {}
    bounds = {}
    for key, vals in _pairs(raw.get("scale_bounds") or (), "--scale-bounds", several=False).items():
        lo, sep, hi = vals[0].partition(":")
        try:
            bounds[key] = (float(lo), float(hi))
        except ValueError:
            raise ParameterError(f"--scale-bounds {key}={vals[0]}: write COL=LOW:HIGH, e.g. judge=1:5") from None
        if not sep:
            raise ParameterError(f"--scale-bounds {key}={vals[0]}: write COL=LOW:HIGH, e.g. judge=1:5")
    if bounds:
        out["bounds"] = bounds
    codes = {}
    for key, vals in _pairs(raw.get("missing_values") or (), "--missing-values").items():
        try:
            codes[key] = [float(v) for v in vals]
        except ValueError:
            raise ParameterError(f"--missing-values {key}={','.join(vals)}: the codes must be numbers, "
                                 "e.g. judge=-1,0") from None
    if codes:
        out["missing_values"] = codes
    return out


def _layout_axes(ctx):
    """--rater-col/--run-col added by :func:`_layout_options` (None where the command has its own)."""
    raw = (ctx.meta.get("metaeval.layout") if ctx is not None else None) or {}
    return raw.get("layout_rater"), raw.get("layout_run")


def _select_bundled(ds, layout):
    """--systems/--exclude-systems on a bundled dataset."""
    if not (layout["systems"] or layout["exclude"]):
        return ds
    for flag, chosen in (("--systems", layout["systems"]), ("--exclude-systems", layout["exclude"])):
        unknown = [s for s in chosen or [] if s not in ds.systems]
        if unknown:
            raise DataError(f"{flag}: unknown system(s) {', '.join(map(repr, unknown))}; the systems of "
                            f"{ds.name!r} are {', '.join(map(repr, ds.systems))}")
    keep = [s for s in ds.systems if (not layout["systems"] or s in layout["systems"])
            and s not in (layout["exclude"] or [])]
    if not keep:
        raise DataError("no system is left after --systems/--exclude-systems")
    return ds.subset(systems=keep)


def _read_selected(data, kw, layout):
    """A data file read as a table, filtered (--systems, --exclude-systems, --where), with raters
    in columns (--rater-cols) and texts from columns (--text-cols), then built as a Dataset."""
    from pathlib import Path

    import pandas as pd

    from .data import Dataset
    from .data import select_rows
    from .data import READERS
    from .data import infer_format

    path = Path(data)
    fmt, suffix = infer_format(path)
    labels = [c for c in (kw.get("system"), kw.get("input"), kw.get("rater"), kw.get("run"))
              if isinstance(c, str)]
    frame = READERS[fmt].reader(path, labels)
    frame = select_rows(frame, system=kw.get("system", "system"), systems=layout["systems"],
                        exclude_systems=layout["exclude"], where=layout["where"])
    kw = dict(kw)
    # a --where column has done its job: it is not a score (else a numeric one, `year`, would
    # become a default metric) unless the command names it
    named = {c for v in kw.values() for c in (v if isinstance(v, list) else [v]) if isinstance(c, str)}
    frame = frame.drop(columns=[c for c in layout["where"] if c not in named])
    if layout["rater_cols"]:
        kw["raters"] = layout["rater_cols"]
    if layout["text_cols"]:
        cols = list(frame.columns)
        spec = dict(layout["text_cols"])
        several = spec.pop("reference") if isinstance(spec.get("reference"), list) else None
        if several:
            missing = [c for c in several if c not in cols]
            if missing:
                raise DataError(f"--text-cols: unknown reference column(s) {', '.join(map(repr, missing))}; "
                                f"available columns: {', '.join(map(repr, cols[:40]))}")
            if "references" in cols:
                raise DataError("--text-cols: DATA already has a column named 'references'; rename it")
            # one tuple of the non-missing references per row, as the text metrics read them
            frame = frame.assign(references=[tuple(str(v) for v in row if isinstance(v, str) or pd.notna(v))
                                             for row in frame[several].itertuples(index=False)])
            cols = list(frame.columns)
        missing = [c for c in spec.values() if c not in cols]
        if missing:
            raise DataError(f"--text-cols: unknown column(s) {', '.join(map(repr, missing))}; available "
                            f"columns: {', '.join(map(repr, cols[:40]))}")
        clash = [k for k, c in spec.items() if k in cols and k != c]
        if clash:
            raise DataError(f"--text-cols: DATA already has a column named {clash[0]!r} that is not the "
                            f"one given for it; name it in --text-cols ({clash[0]}={clash[0]}) or rename it")
        frame = frame.rename(columns={c: k for k, c in spec.items()})
        kw["texts"] = list(spec) + (["references"] if several else [])
    kw.setdefault("name", path.name[: len(path.name) - len(suffix)] or path.name)
    return Dataset.from_frame(frame, **kw)


def _announce_metrics(ds, data, infer=True):
    """Say which columns of a file became metrics (no --metrics given) and flag the ones that
    look like ids, counts or ratings (metaeval.data._columns.column_notes); the notes are
    printed when the command has succeeded (an error stays one line)."""
    from .data import column_notes, human_dimensions

    mets = list(ds.metrics)
    ctx = click.get_current_context(silent=True)
    if not mets or ctx is None:
        return ds
    # human dimensions are not metrics; a column that cannot be told apart stops the command
    mets, humans, unclear = human_dimensions(ds, mets) if infer else (mets, {}, {})
    if unclear:
        raise click.BadParameter(
            f"cannot tell whether {', '.join(_literal(c) for c in unclear)} "
            f"{'is a metric or a human column' if len(unclear) == 1 else 'are metrics or human columns'} "
            f"({'; '.join(f'{_literal(c)}: {why}' for c, why in unclear.items())}); name the metrics with "
            f"--metrics (or declare human columns with --human)", param_hint="--metrics")
    if humans and not mets:
        raise click.BadParameter(
            f"every numeric column of {_literal(os.path.basename(data))} looks like a human dimension "
            f"({', '.join(_literal(c) for c in humans)}); name the metrics with --metrics", param_hint="--metrics")
    notes = ctx.meta.setdefault("metaeval.notes", [])
    if humans:
        ds = ds.subset(metrics=mets)
        notes.append("not taken as metrics, they look like human dimensions: "
                     + "; ".join(f"{_literal(c)}: {why}" for c, why in humans.items())
                     + " (declare them with --human to use them, or list every metric with --metrics)")
    shown = ", ".join(_literal(m) for m in mets[:12]) + (f" and {len(mets) - 12} more" if len(mets) > 12 else "")
    notes.append(f"{len(mets)} metric column(s) taken from {_literal(os.path.basename(data))}: every numeric "
                 f"column not named as human, label, rater or run column (choose with --metrics): {shown}")
    odd = column_notes(ds, mets)
    if odd:
        notes.append("check these metric columns, they do not look like metric scores: "
                     + "; ".join(f"{_literal(c)}: {why}" for c, why in odd.items())
                     + " (leave them out with --metrics, or declare human ones with --human)")
    return ds


#: Keywords of ``Dataset.from_frame`` -> the name of the click parameter that
#: sets them (its flag is looked up on the running command).
_API_PARAMS = {"system": "system", "input": "input_", "human": "human", "metrics": "metrics",
               "rater": "rater", "run": "run", "contexts": "context_cols", "texts": "texts_path",
               "systems": "sel_systems", "exclude_systems": "sel_exclude", "where": "sel_where",
               "raters": "rater_cols", "bounds": "scale_bounds", "missing_values": "missing_values"}


#: --rater-col/--run-col when :func:`_layout_options` adds them (subcommands without their own).
_LAYOUT_AXES = {"rater": "layout_rater", "run": "layout_run"}


def _long_option(p):
    """The first long spelling (``--x``) of a click parameter; None for arguments and
    parameters without one."""
    longs = [o for o in getattr(p, "opts", []) if o.startswith("--")] if isinstance(p, click.Option) else []
    return longs[0] if longs else None


def _option_flags(ctx):
    """``{"rater": "--rater-col", ...}`` for the running command: data-layer messages name
    these flags instead of the Python keywords (None: the command has no such option)."""
    params = {p.name: p for p in (ctx.command.params if ctx is not None else [])}
    return {key: _long_option(params.get(name) or params.get(_LAYOUT_AXES.get(key)))
            for key, name in _API_PARAMS.items()}


def _read_texts(path, system, input_):
    """The --texts JSONL as a frame, read like a data file (named errors, exact values);
    system and input labels as text."""
    from pathlib import Path

    from .data import read_jsonl

    frame = read_jsonl(Path(path), [])
    for c in (system, input_):
        if c in frame.columns:
            frame[c] = [v if v is None or isinstance(v, str) else str(v) for v in frame[c]]
    return frame


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
    if not enabled or (total is not None and total <= 1) or not sys.stderr.isatty():
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
    from ._export import plain

    return plain(o)


def _write_json(obj, path):
    with open(path, "w") as f:
        json.dump(_nan_to_none(obj), f, indent=1, default=_json_default, allow_nan=False)


def _emit_csv(frame, **kwargs):
    """Print a frame as CSV on stdout, protected against spreadsheet formulas
    (see :func:`metaeval._export.to_csv`)."""
    from ._export import to_csv

    click.echo(to_csv(frame, **kwargs), nl=False)


def _write_csv(frame, path, **kwargs):
    """Write a frame to a CSV file, protected against spreadsheet formulas."""
    from ._export import to_csv

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


class _Group(click.Group):
    def invoke(self, ctx):
        import warnings

        from .errors import MetaevalWarning

        groups = _WarningGroups()
        with warnings.catch_warnings():
            # count every occurrence (the default filter shows a message once per place)
            warnings.simplefilter("always", MetaevalWarning)
            warnings.showwarning = groups.show
            try:
                rv = super().invoke(ctx)
                for note in ctx.meta.pop("metaeval.notes", []):  # only when the command succeeded
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
                sub = ctx.invoked_subcommand
                msg = _cli_spelling(msg, self.get_command(ctx, sub) if sub else None)
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
                groups.flush()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metaeval")
def main():
    """Meta-evaluation of NLG evaluation metrics."""


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--fetch", "fetch_names", multiple=True, metavar="NAME",
              help="Download a registry dataset into the cache (once; checked against its pinned sha256) "
                   "and print its license and citation. Repeatable; 'all' fetches every one.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Cache folder (default: $METAEVAL_DATA, else ~/.cache/metaeval/datasets).")
@click.option("--base-url", default=None, metavar="URL",
              help="Mirror replacing the host of every download URL (default: $METAEVAL_DATA_URL).")
def datasets(fmt, fetch_names, cache_dir, base_url):
    """List the bundled and downloadable datasets, or fetch some (--fetch NAME)."""
    from .data import list_datasets

    if fetch_names:
        from .data import REGISTRY, fetch, get_entry

        names = list(REGISTRY) if "all" in fetch_names else list(dict.fromkeys(fetch_names))
        for n in names:
            get_entry(n)  # every name known before anything is downloaded
        for n in names:
            folder = fetch(n, cache_dir=cache_dir, base_url=base_url)
            click.echo(f"{n}\t{folder}")
        return
    from .data import listing

    bundled = {d["name"]: d for d in list_datasets()}
    ds = [{**bundled.get(r["name"], {}), **r} for r in listing()]
    if fmt == "json":
        _emit_json(ds)
    elif fmt == "csv":
        import pandas as pd

        _emit_csv(pd.DataFrame(ds))
    else:
        cols = ["name", "task", "systems_x_inputs", "human", "raters", "texts", "license"]
        _show(_tables.datasets_table([{c: d[c] for c in cols} for d in ds]))


def _agreement_registry():
    """The agreement coefficients the library knows (metaeval.reliability.AGREEMENT_METHODS, kept in
    the light module metaeval._agreement_registry so that --help imports no statistics)."""
    from ._agreement_registry import AGREEMENT_METHODS

    return AGREEMENT_METHODS


def _agreement_methods(value):
    """--agreement: comma-separated keys of the registry (None: the library's default)."""
    from ._agreement_registry import DEFAULT_AGREEMENT

    names = _split(value)
    if not names:
        return DEFAULT_AGREEMENT
    known = _agreement_registry()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ParameterError(f"--agreement: unknown coefficient(s) {', '.join(map(repr, unknown))}; choose from "
                             f"{', '.join(known)}")
    return list(dict.fromkeys(names))


def _agreement_notes(res, rater_slots):
    """Say which rating design the agreement table rests on (rotating raters, slots)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    notes = ctx.meta.setdefault("metaeval.notes", [])
    for design, why in (("rotating", "raters rotate over cells"), ("slots", "--rater-slots")):
        cols = sorted({r.column for r in res if f"raters:{design}" in r.signature})
        if cols:
            notes.append(f"agreement of {', '.join(map(repr, cols))}: {why}, so the ICCs are the one-way "
                         "ICC(1)/ICC(1,k) of each cell's own ratings; ICC(2)/ICC(3) and per-rater "
                         "correlations need the same raters in every cell")


_data_options = [
    click.argument("data"),
    click.option("--human", required=True, help="Human score column."),
    click.option("--metrics", default=None, help="Comma-separated metric columns (default: all)."),
    click.option("--system-col", "system", default="system", show_default=True, help="System column (files)."),
    click.option("--input-col", "input_", default="input", show_default=True, help="Input column (files)."),
    click.option("--rater-col", "rater", default=None, help="Rater column for long files with several raters."),
]


def _local_average(ctx, param, value):
    """Click callback of ``local --average``: macro|micro, or their earlier names input|pair."""
    value = _choices.LOCAL_AVERAGE_ALIASES.get(value, value)
    if value not in _choices.AVERAGES:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(map(repr, _choices.AVERAGES))} "
                                 "(or input, pair: their earlier names)", param_hint="--average")
    return value


def _with(options):
    def deco(f):
        for o in reversed(options):
            f = o(f)
        return f

    return deco


@main.command()
@_layout_options(texts=False, run_col=True)
@_system_score_options
@_with(_data_options)
@click.option("--level", "--levels", "level", default="system", show_default=True, callback=_levels_option,
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--method", default=_choices.DEFAULT_METHOD, show_default=True,
              help="Comma-separated coefficients: " + ", ".join(_choices.METHODS)
                   + " (the default is the one of every correlation table).")
@click.option("--average", type=click.Choice(_choices.AVERAGES), default="macro", show_default=True)
@click.option("--ci", default="boot-both", show_default=True, help="|".join(_choices.CI_METHODS))
@click.option("--confidence-level", type=float, default=0.95, show_default=True)
@click.option("--n-resamples", type=int, default=1000, show_default=True)
@click.option("--pvalue", default="auto", show_default=True, help="|".join(_choices.PVALUE_METHODS))
@click.option("--alternative", default="two-sided", show_default=True, help="|".join(_choices.ALTERNATIVES))
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh entropy, shown in the signature).")
@click.option("--jobs", type=int, default=1, show_default=True,
              help="Worker processes (1: in-process; the kernels use all cores anyway; -1: one per "
                   "core). The metric x level x method intervals are the tasks, split into blocks "
                   "of resamples when there are fewer than two per worker; same numbers.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def correlate(data, human, metrics, system, input_, rater, level, method, average, ci,
              confidence_level, n_resamples, pvalue, alternative, seed, jobs, fmt):
    """Correlate every metric with a human column at the given levels."""
    from .correlation import correlate as _correlate

    ds = _load(data, system, input_, human, _split(metrics), rater)
    levels, methods = _split(level), _split(method)
    mets = _split(metrics)
    total = len(mets or ds.metrics) * len(levels or [1]) * len(methods or [1])
    with _progress(total, "correlating") as prog:
        res = _correlate(ds, human, metrics=mets, level=levels, method=methods, average=average,
                         ci=ci, confidence_level=confidence_level, n_resamples=n_resamples,
                         pvalue=pvalue, alternative=alternative, rng=seed, n_jobs=jobs, progress=prog,
                         system_scores=_system_level())
    if fmt == "json":  # every field of the CSV and of results.json, the counts the warnings name included
        _emit_json(_clean([r.to_dict() for r in res]))
    elif fmt == "csv":
        _emit_csv(res.to_frame())
    else:
        _show(_tables.correlations_table(res, human))


@main.command()
@_layout_options(texts=False, run_col=True)
@_system_score_options
@_with(_data_options)
@click.option("--level", default="system", show_default=True, callback=_one_level_option,
              help="One of " + _LEVELS_HELP + ".")
@click.option("--method", default=_choices.DEFAULT_METHOD, show_default=True,
              help="Coefficient: " + ", ".join(_choices.METHODS) + " (the default is the one of every correlation table).")
@click.option("--test", default="perm-both", show_default=True,
              help="|".join(_choices.TESTS))
@click.option("--average", type=click.Choice(_choices.AVERAGES), default="macro", show_default=True)
@click.option("--n-resamples", type=int, default=1000, show_default=True)
@click.option("--alternative", default="two-sided", show_default=True, help="|".join(_choices.ALTERNATIVES))
@click.option("--correction", default="holm", show_default=True,
              help="|".join(_choices.CORRECTIONS) + ": p-value matrix (all pairs)")
@click.option("--cluster-correction", default=None,
              help="|".join(_choices.CORRECTIONS) + ": correction of the one-sided p-values that form the "
                   "clusters (default: holm; none with --clusters mtme, mt-metrics-eval's exact rule)")
@click.option("--clusters", "cluster_rule", type=click.Choice(_choices.CLUSTER_RULES), default="metaeval",
              show_default=True,
              help="p-values of the clusters: (count+1)/(n+1), or count/n as mt-metrics-eval (mtme).")
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--seed", type=int, default=None)
@click.option("--jobs", type=int, default=1, show_default=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--sequential", type=int, default=None,
              help="h: stop permutation tests early after h exceedances (Besag-Clifford); "
                   "h >= alpha*(n_resamples+1) keeps every decision at alpha. Default: off.")
def compare(data, human, metrics, system, input_, rater, level, method, test, average, n_resamples,
            alternative, correction, cluster_correction, cluster_rule, alpha, seed, jobs, fmt, sequential):
    """Test metric pairs (two metrics: one test; more: all pairs, clusters)."""
    from .compare import compare as _compare
    from .compare import compare_all as _compare_all

    ds = _load(data, system, input_, human, _split(metrics), rater)
    mets = _split(metrics) or list(ds.metrics)
    if len(mets) < 2:
        raise click.BadParameter(f"a comparison needs at least 2 metrics; {os.path.basename(data)} gives "
                                 f"{len(mets)}: {', '.join(map(repr, mets)) or 'none'}", param_hint="--metrics")
    common = dict(level=level, method=method, test=test, average=average,
                  n_resamples=n_resamples, alternative=alternative, rng=seed, sequential=sequential,
                  system_scores=_system_level())
    if len(mets) == 2:
        # one pair: the all-pairs options (matrix and cluster corrections, alpha,
        # workers) do not apply, but a bad value is still an error
        from ._parallel import check_n_jobs
        from ._vocab import check_choice, check_number

        check_choice(correction, "correction", _choices.CORRECTIONS)
        if cluster_correction is not None:
            check_choice(cluster_correction, "cluster_correction", _choices.CORRECTIONS)
        check_number(alpha, "alpha", lo=0, hi=1, open_lo=True, open_hi=True)
        check_n_jobs(jobs)
        c = _compare(ds, human, mets[0], mets[1], **common)
        if fmt == "json":  # every field of the CSV, the counts the warnings name included
            _emit_json(_clean([c.to_dict()])[0])
        elif fmt == "csv":
            import pandas as pd

            _emit_csv(pd.DataFrame([c.to_dict()]))
        else:
            _show(_tables.comparison_table(c, human))
        return
    k = len(mets)
    with _progress(k * (k - 1) // 2, "comparing pairs") as prog:
        res = _compare_all(ds, human, metrics=mets, correction=correction,
                           cluster_correction=cluster_correction, clusters=cluster_rule, alpha=alpha,
                           n_jobs=jobs, progress=prog, **common)
    if fmt == "json":
        out = _clean(res.to_frame().to_dict(orient="records"))  # every column of the CSV
        _emit_json({"pairs": out, "ranking": _clean(res.ranking_frame().to_dict(orient="records")),
                    "signature": res.signature})
    elif fmt == "csv":
        _emit_csv(res.to_frame())
    else:
        _show(_tables.clusters_table(res, human, level=level, method=method, test=test,
                                     cluster_correction=res.cluster_correction))


def _run_seed(seed, out):
    """The seed of a run: as given; else, with an output folder, the one
    recorded there (so a restarted run continues with the same streams) or
    fresh entropy recorded for the next start; else None (fresh, and shown
    in the signature)."""
    if seed is not None or out is None:
        return seed
    import numpy as np

    path = os.path.join(out, "seed.txt")
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
    from .report import figures

    return figures


def _save_figure(make, path):
    try:
        from .report.figures import save

        save(make(), path)
        return True
    except MetaevalError as exc:  # matplotlib missing
        click.echo(f"metaeval: warning: no figure ({_literal(exc)})", err=True)
        return False


@main.command()
@_layout_options(texts=False, run_col=True)
@_with(_data_options)
@click.option("--measures", "measures_", default=None,
              help="Comma-separated level:method list, e.g. system:kendall_b,group-by-system:pearson "
                   "(default: the 12 of --level x --method).")
@click.option("--level", "--levels", "levels", default=_ALL_LEVELS, show_default=True, callback=_levels_option,
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--method", "--methods", "methods", default=",".join(_choices.MEASURE_METHODS), show_default=True,
              help="Comma-separated coefficients.")
@click.option("--test", default="perm-both", show_default=True, help="perm-both|williams (or any compare test)")
@click.option("--n-resamples", type=int, default=1000, show_default=True)
@click.option("--splits", type=int, default=1000, show_default=True,
              help="Random half-splits for ranking consistency (0: skip it).")
@click.option("--average", type=click.Choice(_choices.AVERAGES), default="macro", show_default=True)
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh, recorded in --out).")
@click.option("--jobs", type=int, default=1, show_default=True,
              help="Worker processes (1: in-process; the kernels use all cores anyway).")
@click.option("--dask", default=None, help="Dask scheduler address: run the units on that cluster.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: tables, JSON, figures and checkpoints (a restarted run resumes).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def measures(data, human, metrics, system, input_, rater, measures_, levels, methods, test,
             n_resamples, splits, average, seed, jobs, dask, out, fmt):
    """Discriminative power and ranking consistency of correlation measures (seed paper 000)."""
    from .measures import discriminative_power, measure_table, ranking_consistency

    ds = _load(data, system, input_, human, _split(metrics), rater)
    mets = _split(metrics) or list(ds.metrics)
    seed = _run_seed(seed, out)
    if measures_:
        picked = []
        for t in _split(measures_):
            lv, sep, m = t.partition(":")
            if not sep:
                raise click.BadParameter(f"{t!r}: write level:method, e.g. system:kendall_b",
                                         param_hint="--measures")
            picked.append(f"{_levels_option(None, None, lv)}:{m}")
        sel = dict(measures=picked)
    else:
        sel = dict(levels=_split(levels), methods=_split(methods))
    if splits < 0:
        raise click.BadParameter("--splits must be >= 0")
    ck = (lambda name: os.path.join(out, "checkpoints", name)) if out else (lambda name: None)
    k = len(mets)
    if k < 2:
        raise click.BadParameter(f"discriminative power compares metric pairs: it needs at least 2 metrics; "
                                 f"{os.path.basename(data)} gives {k}: {', '.join(map(repr, mets)) or 'none'}",
                                 param_hint="--metrics")
    if splits and k < 3:
        raise click.BadParameter(f"ranking consistency needs at least 3 metrics (got {k}); "
                                 "add metrics or pass --splits 0", param_hint="--splits")
    if splits and len(ds.inputs) < 4:
        raise click.BadParameter(f"ranking consistency splits the inputs in halves; the data has "
                                 f"{len(ds.inputs)} input(s), at least 4 are needed (or --splits 0)",
                                 param_hint="--splits")
    with _progress(k * (k - 1) // 2, "discriminative power (pairs)") as prog:
        dp = discriminative_power(ds, human, metrics=mets, test=test, n_resamples=n_resamples,
                                  average=average, rng=seed, n_jobs=jobs, dask=dask,
                                  checkpoint=ck("dp"), progress=prog, **sel)
    rc = None
    if splits:
        with _progress(k, "ranking consistency (metrics)") as prog:
            rc = ranking_consistency(ds, human, metrics=mets, n_splits=splits, average=average,
                                     rng=seed, n_jobs=jobs, dask=dask, checkpoint=ck("rc"),
                                     progress=prog, **sel)
    table = measure_table(dp, rc)
    if out:
        from .report.figures import pvalue_curves

        os.makedirs(out, exist_ok=True)
        _write_csv(table, os.path.join(out, "measures.csv"))
        _write_csv(dp.to_frame(), os.path.join(out, "dp.csv"))
        _write_csv(dp.pvalue_frame(), os.path.join(out, "dp_pvalues.csv"))
        _write_csv(dp.curve_frame(), os.path.join(out, "dp_curves.csv"))
        doc = {"discriminative_power": dp.to_dict()}
        if rc is not None:
            _write_csv(rc.to_frame(), os.path.join(out, "rc.csv"))
            doc["ranking_consistency"] = rc.to_dict()
        _write_json(doc, os.path.join(out, "measures.json"))
        _save_figure(lambda: pvalue_curves(dp), os.path.join(out, "pvalue_curves.png"))
    if fmt == "json":
        _emit_json({"table": _clean(table.to_dict(orient="records")),
                    "dp_signature": dp.signature, "rc_signature": rc.signature if rc else None})
    elif fmt == "csv":
        _emit_csv(table)
    else:
        _show(_tables.measures_table(table, dp, rc, human, len(mets)))


@main.command()
@_layout_options(texts=False)
@click.argument("data")
@click.option("--metrics", default=None, help="Comma-separated metric columns (default: all).")
@click.option("--human", default=None,
              help="Comma-separated human columns (required for files; agreement is computed for "
                   "those with 2+ raters).")
@click.option("--target", type=float, default=0.9, show_default=True,
              help="Target reliability for runs/inputs needed (Spearman-Brown).")
@click.option("--ci", default="boot-systems", show_default=True,
              help="Interval of alpha: " + "|".join(_choices.CONSISTENCY_CI))
@click.option("--n-resamples", type=int, default=1000, show_default=True)
@click.option("--sizes", default=None, help="Comma-separated input counts for the alpha-vs-size curve.")
@click.option("--normalize", default="none", show_default=True,
              help="|".join(_choices.NORMALIZATIONS) + ": rank normalization first.")
@click.option("--seed", type=int, default=None)
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--rater-col", "rater", default=None, help="Rater column (long files with several raters).")
@click.option("--run-col", "run", default=None,
              help="Run column (long files where a stochastic metric was scored several times): "
                   "enables test-retest stability.")
@click.option("--agreement", "agreement_methods", default=None, metavar="METHOD[,METHOD]",
              help="Comma-separated agreement coefficients of the raters (default: "
                   "krippendorff_interval, krippendorff_ordinal and the six ICCs): "
                   + "; ".join(f"{k}: {v}" for k, v in _agreement_registry().items()) + ".")
@click.option("--rater-slots", is_flag=True,
              help="The rater columns are slots (rater1..raterK: different people in different "
                   "cells): report only the agreement forms that apply (ICC(1), ICC(1,k), "
                   "Krippendorff's alpha).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, JSON and figures.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def reliability(data, metrics, human, target, ci, n_resamples, sizes, normalize, seed, system,
                input_, rater, run, agreement_methods, rater_slots, out, fmt):
    """Reliability: metric stability (runs), consistency (Cronbach's alpha), rater agreement (seed paper 002)."""
    from .reliability import SAME_RATER_FORMS, agreement, stability

    methods = _agreement_methods(agreement_methods)

    ds = _load(data, system, input_, _split(human), _split(metrics), rater, runs=True, run=run,
               file_only={"--run-col": run})
    mets = _split(metrics) or list(ds.metrics)
    with_runs = [m for m in mets if ds.ratings(m).shape[0] >= 2]
    humans = [h for h in (_split(human) or ds.human) if ds.ratings(h).shape[0] >= 2]
    single = [h for h in (_split(human) or []) if h not in humans]
    if single:
        click.echo(f"metaeval: note: rater agreement skipped for {', '.join(map(repr, single))}: one rating "
                   "per cell (declare the rater column with --rater-col)", err=True)
    if not mets and not humans:
        raise click.BadParameter("nothing to assess: no metric columns and no human column with 2+ "
                                 "raters (name them with --metrics, or --human with --rater-col)",
                                 param_hint="--metrics/--human")
    results = {}
    if with_runs:
        results["stability"] = stability(ds, with_runs, target=target, normalize=normalize)
    elif mets:
        click.echo("metaeval: note: stability skipped: no metric has 2+ runs (declare the run column "
                   "with --run-col)", err=True)
    if mets:
        _consistency_results(results, ds, mets, ci, n_resamples, target, normalize, seed, sizes)
    if humans:
        res = agreement(ds, humans, method=methods, raters="slots" if rater_slots else "same")
        _agreement_notes(res, rater_slots)
        # only the forms that apply: ICC(2)/(3) of rotating raters or slots are NaN by design
        results["agreement"] = type(res)(tuple(r for r in res if not (
            r.method in SAME_RATER_FORMS and ("raters:rotating" in r.signature or "raters:slots" in r.signature))))
    if out:
        from .report.figures import alpha_curve, reliability_bars

        os.makedirs(out, exist_ok=True)
        for name, res in results.items():
            _write_csv(res.to_frame(), os.path.join(out, f"{name}.csv"))
        _write_json({k: v.to_dict() for k, v in results.items()}, os.path.join(out, "reliability.json"))
        if "consistency" in results:
            _save_figure(lambda: reliability_bars(results.get("stability"), results["consistency"]),
                         os.path.join(out, "reliability_bars.png"))
            _save_figure(lambda: alpha_curve(results["consistency_curve"]),
                         os.path.join(out, "alpha_vs_size.png"))
    if fmt == "json":
        _emit_json({k: _clean(v.to_frame().drop(columns=["signature"]).to_dict(orient="records"))
                    for k, v in results.items()})
        return
    if fmt == "csv":
        _emit_csv_by_analysis({k: v for k, v in results.items() if k != "consistency_curve"})
        return
    _reliability_tables(results, target)


def _refuse_rotating_raters(ds, traits):
    """validity: MTMM and CFA take each rater as one method; raters rotating over cells are not."""
    import numpy as np

    from .reliability import _rater_design

    for t in traits:
        r = np.asarray(ds.ratings(t), dtype=float)
        if r.shape[0] >= 2 and _rater_design(r.reshape(r.shape[0], -1), "same") == "rotating":
            raise DataError(f"the raters of {t!r} rotate over cells (fewer than two cells rated by all "
                            f"{r.shape[0]}): MTMM and CFA treat each rater as one method and need the same "
                            "raters in every cell; run `metaeval reliability` for the one-way ICC(1)/ICC(1,k) "
                            "and Krippendorff's alpha, which apply")


def _consistency_results(results, ds, mets, ci, n_resamples, target, normalize, seed, sizes):
    import warnings

    from .reliability import consistency, consistency_curve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        results["consistency"] = consistency(ds, mets, ci=ci, n_resamples=n_resamples, target=target,
                                             normalize=normalize, rng=seed)
        try:
            size_list = [int(v) for v in _split(sizes)] if sizes else None
        except ValueError:
            raise click.BadParameter(f"{sizes!r}: give comma-separated integers, e.g. 10,20,50",
                                     param_hint="--sizes") from None
        results["consistency_curve"] = consistency_curve(ds, mets, sizes=size_list,
                                                         normalize=normalize, rng=seed)


def _reliability_tables(results, target):
    _show(*_tables.reliability_tables(results, target))


@main.command()
@_layout_options(texts=False)
@click.argument("data")
@click.option("--human", default=None,
              help="Comma-separated human columns with individual raters: the MTMM traits and CFA "
                   "factors (default: every human column with 2+ raters).")
@click.option("--metrics", default=None,
              help="Comma-separated metrics for concurrent validity (default: all).")
@click.option("--level", default="system", show_default=True, callback=_one_level_option,
              help="One of " + _LEVELS_HELP + ".")
@click.option("--method", default=_choices.VALIDITY_METHOD, show_default=True,
              help="Coefficient of the MTMM table and concurrent validity. Default Kendall's tau-b, as seed "
                   "paper 002 prescribes (Sec. 4, Fig. 4: \"Values are based on Kendall's tau\"); correlate, "
                   "compare and the report's correlation tables default to pearson.")
@click.option("--criterion", type=click.Choice(["human", "factors"]), default="human", show_default=True,
              help="Concurrent validity against the raw human means or the CFA factor scores.")
@click.option("--no-cfa", is_flag=True, help="Skip the confirmatory factor analysis.")
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--rater-col", "rater", default=None, help="Rater column (long files with several raters).")
@click.option("--rater-slots", is_flag=True,
              help="The rater columns are slots (different people in different cells): refused here, "
                   "since MTMM and CFA treat each rater as one method; use `reliability --rater-slots`.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, JSON and the MTMM table as HTML.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def validity(data, human, metrics, level, method, criterion, no_cfa, system, input_, rater, rater_slots,
             out, fmt):
    """Validity: MTMM table, confirmatory factor analysis, concurrent validity (seed paper 002)."""
    from .validity import cfa, concurrent_validity, mtmm

    if criterion == "factors" and no_cfa:
        raise click.BadParameter("--criterion factors needs the CFA (drop --no-cfa)")
    if rater_slots:
        raise ParameterError("--rater-slots: MTMM and CFA treat each rater as one method, the same person "
                             "in every cell; rater slots are not, so their MTMM blocks and factor loadings "
                             "would mix raters; run `metaeval reliability --rater-slots` for the agreement "
                             "forms that apply")
    ds = _load(data, system, input_, _split(human), _split(metrics), rater)
    traits = _split(human) or [h for h in ds.human if ds.ratings(h).shape[0] >= 2]
    single = [t for t in traits if ds.ratings(t).shape[0] < 2]
    if single:
        raise click.BadParameter(f"{', '.join(map(repr, single))}: one rating per cell; MTMM and CFA take "
                                 "human columns with 2+ raters (long files: --rater-col)", param_hint="--human")
    if not traits:
        raise DataError("no human column has individual raters: MTMM and CFA need 2+ raters "
                        "(long files: --rater-col; raters in columns: --rater-cols)")
    _refuse_rotating_raters(ds, traits)
    # checked before the CFA (minutes on large data): a file of human ratings only has no metric
    # to validate; MTMM and CFA still run (issue 14.6)
    has_metrics = bool(_split(metrics) or ds.metrics)
    if criterion == "factors" and not has_metrics:
        raise DataError(f"--criterion factors: {os.path.basename(data)!r} has no metric column, so there is "
                        "no concurrent validity to compute (name metric columns with --metrics)")
    if len(traits) < 2:
        raise click.BadParameter(f"MTMM needs 2+ human columns (traits) with raters; got {traits[0]!r}",
                                 param_hint="--human")
    res_mtmm = mtmm(ds, traits, level=level, method=method)
    fa = None if no_cfa else cfa(ds, {t: [f"{t}@{r}" for r in ds.rater_labels(t)] for t in traits})
    crit = fa if criterion == "factors" else traits
    cv = concurrent_validity(ds, crit, metrics=_split(metrics), level=level, method=method) \
        if has_metrics else None
    if cv is None:
        click.get_current_context().meta.setdefault("metaeval.notes", []).append(
            f"concurrent validity skipped: {os.path.basename(data)!r} has no metric column (human ratings "
            "only); MTMM and CFA are shown")
    if out:
        os.makedirs(out, exist_ok=True)
        _write_csv(res_mtmm.to_frame(), os.path.join(out, "mtmm.csv"))
        _write_csv(res_mtmm.campbell_fiske(), os.path.join(out, "campbell_fiske.csv"))
        with open(os.path.join(out, "mtmm.html"), "w") as f:
            f.write(_tables.mtmm_html(res_mtmm))
        if cv is not None:
            _write_csv(cv.to_frame(), os.path.join(out, "concurrent_validity.csv"))
        if fa is not None:
            _write_csv(fa.to_frame(), os.path.join(out, "cfa_parameters.csv"))
            _write_csv(fa.fit_frame(), os.path.join(out, "cfa_fit.csv"))
            _write_csv(fa.correlation_matrix(), os.path.join(out, "cfa_factor_correlations.csv"), index=True)
    if fmt == "json":
        doc = {"mtmm": _clean(res_mtmm.to_frame().to_dict(orient="records")),
               "campbell_fiske": _clean(res_mtmm.campbell_fiske().to_dict(orient="records")),
               "concurrent_validity": [] if cv is None else _clean(cv.to_frame().to_dict(orient="records"))}
        if fa is not None:
            doc["cfa"] = {"converged": fa.converged, "admissible": fa.admissible,
                          "interpretable": fa.interpretable, "problem": fa.problem}
            doc["cfa_fit"] = _clean(fa.fit_frame().to_dict(orient="records"))
            doc["cfa_factor_correlations"] = fa.correlation_matrix().to_dict()
        _emit_json(doc)
        return
    if fmt == "csv":
        if cv is None:  # no metric: the MTMM table is the result
            _emit_csv(res_mtmm.to_frame())
        else:
            _emit_csv(cv.to_frame())
        return
    _tables.render_rich(_tables.mtmm_table(res_mtmm))
    _say(res_mtmm.signature)
    _show(_tables.campbell_fiske_table(res_mtmm))
    if fa is not None and not fa.interpretable:
        # a non-converged or inadmissible fit: no estimates shown (its numbers mean nothing)
        for line in _tables.cfa_withheld(fa):
            _say(line)
    elif fa is not None:
        _show(*_tables.cfa_tables(fa))
    if cv is None:
        return
    _show(_tables.concurrent_validity_table(cv, method=method, level=level, criterion=criterion))


def _sample_size(dg, ds, humans, **kw):
    """diagnostics.sample_size; its 'sizes ... exceed' error names --sizes."""
    try:
        return dg.sample_size(ds, humans, **kw)
    except ParameterError as exc:
        if str(exc).startswith("sizes"):
            raise click.BadParameter(str(exc), param_hint="--sizes") from None
        raise


@main.command()
@_layout_options(texts=True, run_col=True)
@_system_score_options
@_with(_data_options)
@click.option("--ks-low", "--low", "low", type=float, default=None,
              help="KS: low-quality group is human < this (default: paper 001 Table 3).")
@click.option("--ks-high", "--high", "high", type=float, default=None, help="KS: high-quality group is human >= this.")
@click.option("--method", type=click.Choice(_choices.DIAGNOSTIC_METHODS), default=_choices.DIAGNOSTIC_METHOD,
              show_default=True, help="Coefficient of the sample-level correlations (default Spearman, as seed "
                                      "paper 001, Fig. 4 and Table 2).")
@click.option("--sizes", default="20,50,100", show_default=True, help="Sample sizes of the pre-assessment study.")
@click.option("--threshold", type=float, default=None, help="Sample size: largest acceptable sd.")
@click.option("--n-resamples", type=int, default=100, show_default=True)
@click.option("--reference-metrics", default=None,
              help="Text metrics for the reference-sensitivity study (seed paper 001, App. B): each is scored "
                   "against every reference, and one reference per input is drawn --reference-draws times.")
@click.option("--reference-draws", type=int, default=1000, show_default=True)
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file with --reference-metrics: JSONL with hypothesis and references.")
@click.option("--cache", default=None, type=click.Path(file_okay=False), help="Text-metric score cache folder.")
@click.option("--model", default=None, type=click.Path(exists=True), help="Local model for bertscore.")
@click.option("--seed", type=int, default=None)
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, JSON and figures (KS heatmap, meta-correlation bars, "
                   "correlation-design heatmaps, reference-sensitivity histogram).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def diagnose(data, human, metrics, system, input_, rater, low, high, method, sizes, threshold,
             n_resamples, reference_metrics, reference_draws, texts_path, cache, model, seed, out, fmt):
    """Text-level diagnostics: KS score, meta-correlation, sample size, correlation design,
    reference sensitivity (papers 001, 003)."""
    from . import diagnostics as dg

    ref_adapters = _text_adapters(reference_metrics, model) if reference_metrics else None
    humans = _split(human)  # several human columns: COL[,COL] (issue 14.9)
    ds = _load(data, system, input_, humans, _split(metrics), rater, texts=texts_path,
               need_texts=ref_adapters is not None)
    scored = None
    if ref_adapters is not None:
        from . import textmetrics as tm

        with _progress(None, "scoring against each reference") as bar:
            scored = tm.score(ds, ref_adapters, cache_dir=cache,
                              progress=bar.update if bar is not None else None)
        no_refs = [c for c in scored.columns if scored.reference_scores[c] is None]
        if no_refs:
            raise click.BadParameter(f"{', '.join(no_refs)} do(es) not score against references",
                                     param_hint="--reference-metrics")
        if not _split(metrics) and not ds.metrics:
            ds = scored.attach(ds)  # the text metrics (best reference) are the metrics studied
    mets = _split(metrics) or list(ds.metrics)
    try:
        size_list = [int(v) for v in _split(sizes)]
    except ValueError:
        raise click.BadParameter(f"{sizes!r}: give comma-separated integers", param_hint="--sizes") from None
    if len(ds.systems) < 3:
        raise click.BadParameter(f"{os.path.basename(data)} has {len(ds.systems)} system(s); the meta-correlation "
                                 "correlates across systems and needs at least 3", param_hint="DATA")
    results = {
        "ks": dg.ks_score(ds, humans, metrics=mets, low=low, high=high),
        "meta_correlation": dg.meta_correlation(ds, humans, metrics=mets, method=method),
        "sample_size": _sample_size(dg, ds, humans, metrics=mets, sizes=size_list, n_resamples=n_resamples,
                                    method=method, threshold=threshold, rng=seed),
        "correlation_design": dg.correlation_design(ds, columns=[*humans, *mets], method=method,
                                                    system_scores=_system_level()),
    }
    if scored is not None:
        per_ref = {c: scored.reference_scores[c] for c in scored.columns}
        results["reference_sensitivity"] = dg.reference_sensitivity(
            ds, humans, scores=per_ref, method=method, n_resamples=reference_draws, rng=seed)
    if out:
        os.makedirs(out, exist_ok=True)
        for name, res in results.items():
            _write_csv(res.to_frame(), os.path.join(out, f"{name}.csv"))
        _write_json({k: v.to_dict() for k, v in results.items()}, os.path.join(out, "diagnostics.json"))
        _save_figure(lambda: _figures().plot_ks(results["ks"]), os.path.join(out, "ks.png"))
        _save_figure(lambda: _figures().plot_meta_correlation(results["meta_correlation"]),
                     os.path.join(out, "meta_correlation.png"))
        _save_figure(lambda: _figures().plot_correlation_design(results["correlation_design"]),
                     os.path.join(out, "correlation_design.png"))
        if "reference_sensitivity" in results:
            _save_figure(lambda: _figures().plot_reference_sensitivity(results["reference_sensitivity"]),
                         os.path.join(out, "reference_sensitivity.png"))
    if fmt == "json":
        _emit_json({k: _clean(v.to_frame().drop(columns=["signature"], errors="ignore").to_dict(orient="records"))
                    for k, v in results.items()})
        return
    if fmt == "csv":
        _emit_csv_by_analysis(results)
        return
    _show(*(_tables.frame_table(name, res) for name, res in results.items()))


_MODEL_METRICS = _choices.MODEL_METRICS


def _text_adapters(metrics, model):
    """The text-metric adapters named in --metrics (model-based ones need --model)."""
    from . import textmetrics as tm

    adapters = []
    for n in _split(metrics) or []:
        if n in _MODEL_METRICS:
            if model is None:
                what = "a local COMET model or a model name" if n in ("comet", "bleurt") else "a local model folder"
                raise click.BadParameter(f"{n} needs --model ({what})", param_hint="--model")
            adapters.append(tm.get_metric(n, model=model))
        else:
            adapters.append(tm.get_metric(n))
    if not adapters:
        raise click.BadParameter("give at least one text metric", param_hint="--metrics")
    return adapters


@main.command()
@_layout_options(texts=True, rater_col=True)
@click.argument("data")
@click.option("--metrics", required=True,
              help="Comma-separated text metrics (" + ", ".join(_choices.TEXT_METRICS) + "; llm_judge is "
                   "configured by `metaeval judge`).")
@click.option("--multi-ref", default="best", show_default=True, help="|".join(_choices.MULTI_REF))
@click.option("--model", default=None,
              help="Model of bertscore / gptscore / bartscore (a local folder; nothing is downloaded), "
                   "comet (a local COMET model or a name such as Unbabel/wmt22-comet-da) or bleurt.")
@click.option("--cache", default=None, type=click.Path(file_okay=False),
              help="Score cache folder: finished scores are never recomputed.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file: JSONL with system, input, hypothesis and references/reference/source.")
@click.option("--human", default=None, help="Human columns (files).")
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--jobs", type=int, default=1, show_default=True)
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Write the scores (one row per metric x system x input) to CSV or Parquet.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def score(data, metrics, multi_ref, model, cache, texts_path, human, system, input_, jobs, out, fmt):
    """Score a dataset's texts with text metrics (sacreBLEU, rouge-score, METEOR, local models)."""
    from . import textmetrics as tm

    adapters = _text_adapters(metrics, model)
    ds = _load(data, system, input_, _split(human), None, None, texts=texts_path, need_texts=True)
    with _progress(None, "scoring texts") as bar:
        res = tm.score(ds, adapters, multi_ref=multi_ref, cache_dir=cache, n_jobs=jobs,
                       progress=bar.update if bar is not None else None)
    frame = res.to_frame()
    if out:
        if out.endswith((".parquet", ".pq")):
            frame.to_parquet(out, index=False)
        else:
            _write_csv(frame, out)
    if fmt == "json":
        _emit_json(_clean(frame.to_dict(orient="records")))
    elif fmt == "csv":
        _emit_csv(frame)
    else:
        _show(_tables.score_table(res, frame))


def _perturbation_options(pairs, names):
    """--option KEY=VALUE (repeatable) -> {perturbation: {key: value}}, typed like the default."""
    from .perturb import get_perturbation

    perts = {n: get_perturbation(n) for n in names}
    out = {n: {} for n in names}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise click.BadParameter(f"{pair!r}: write KEY=VALUE, e.g. fraction=0.3", param_hint="--option")
        takers = [n for n, p in perts.items() if key in p.defaults]
        if not takers:
            known = sorted({k for p in perts.values() for k in p.defaults})
            raise click.BadParameter(
                f"no chosen perturbation has an option {key!r}; their options: {', '.join(known) or 'none'}",
                param_hint="--option")
        for n in takers:
            default = perts[n].defaults[key]
            try:
                if isinstance(default, bool):
                    if raw.lower() not in ("true", "false", "yes", "no", "1", "0"):
                        raise ValueError
                    value = raw.lower() in ("true", "yes", "1")
                elif isinstance(default, int):
                    value = int(raw)
                elif isinstance(default, float):
                    value = float(raw)
                else:
                    value = None if raw.lower() == "none" else raw
            except ValueError:
                raise click.BadParameter(
                    f"{pair!r}: {key} of {n} takes a {type(default).__name__}", param_hint="--option"
                ) from None
            out[n][key] = value
    return out


@main.command()
@_layout_options(texts=True, rater_col=True)
@click.argument("data")
@click.option("--perturbation", "perturbations", required=True,
              help="Comma-separated perturbations (" + ", ".join(_choices.PERTURBATIONS) + ").")
@click.option("--metrics", required=True, help="Comma-separated text metrics (as for `metaeval score`).")
@click.option("--option", "options", multiple=True,
              help="KEY=VALUE option of the perturbations that have it (repeatable), e.g. fraction=0.3.")
@click.option("--human", default=None, help="Human column of the originals (with --min-human; and for files).")
@click.option("--min-human", type=float, default=None,
              help="Keep only originals whose human score is >= this (seed paper 001 uses 3).")
@click.option("--multi-ref", default="best", show_default=True, help="|".join(_choices.MULTI_REF))
@click.option("--model", default=None, type=click.Path(exists=True),
              help="Local model folder for bertscore / gptscore / bartscore.")
@click.option("--cache", default=None, type=click.Path(file_okay=False),
              help="Score cache folder: a re-run computes nothing it has already scored.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file: JSONL with system, input, hypothesis and references/source.")
@click.option("--ci", default="wilson", show_default=True, help="|".join(_choices.BINOMIAL_CIS))
@click.option("--seed", type=int, default=None, help="Perturbation seed (default: fresh, recorded in --out).")
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--jobs", type=int, default=1, show_default=True)
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: detection.csv/json, perturbed texts (JSONL) and detection.png.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def perturb(data, perturbations, metrics, options, human, min_human, multi_ref, model, cache, texts_path,
            ci, seed, system, input_, jobs, out, fmt):
    """Perturbation detection: does each metric score outputs above their degraded versions?

    Seed paper 001, section 2.3.2: every hypothesis is perturbed (seeded), the original and the
    perturbed text are scored by the same text metrics, and a metric's accuracy is the share of
    pairs where it prefers the original (ties reported apart, binomial interval, sign test).
    """
    import pandas as pd

    from .perturb import score_perturbed

    names = _split(perturbations) or []
    opts = _perturbation_options(options, names)
    adapters = _text_adapters(metrics, model)
    if min_human is not None and not human:
        raise click.BadParameter("--min-human needs --human (the column of the originals)", param_hint="--human")
    ds = _load(data, system, input_, _split(human), None, None, texts=texts_path, need_texts=True)
    seed = _run_seed(seed, out)
    results, scored = {}, {}
    for name in names:
        with _progress(None, f"{name}: scoring originals and perturbed texts") as bar:
            ps = score_perturbed(ds, name, adapters, rng=seed, options=opts[name], multi_ref=multi_ref,
                                 cache_dir=cache, n_jobs=jobs,
                                 progress=bar.update if bar is not None else None)
        scored[name] = ps
        results[name] = ps.detection(human=human if min_human is not None else None,
                                     min_human=min_human, ci=ci)
    frame = pd.concat([r.to_frame().assign(perturbation=n, n_skipped=scored[n].perturbation.n_skipped)
                       for n, r in results.items()], ignore_index=True)
    frame = frame[["perturbation", *[c for c in frame.columns if c != "perturbation"]]]
    if out:
        os.makedirs(out, exist_ok=True)
        _write_csv(frame, os.path.join(out, "detection.csv"))
        _write_json({n: {"detection": r.to_dict(), "scoring": scored[n].to_dict()} for n, r in results.items()},
                    os.path.join(out, "detection.json"))
        for n, ps in scored.items():
            # ASCII JSON, as all JSON of --out: a text or name holding U+202E is written \u202e
            ps.perturbation.to_frame().to_json(os.path.join(out, f"perturbed_{n}.jsonl"), orient="records",
                                               lines=True)
        _save_figure(lambda: _figures().plot_detection(results), os.path.join(out, "detection.png"))
    if fmt == "json":
        _emit_json(_clean(frame.to_dict(orient="records")))
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    _show(*(_tables.detection_table(n, det, scored[n].perturbation) for n, det in results.items()))


@main.command()
@_layout_options(texts=True, rater_col=True)
@click.argument("data")
@click.option("--context", required=True,
              help="The context category: system, input, or a context column (--contexts).")
@click.option("--perturbation", default=None,
              help="Perturbation pairs (paper 004): degrade every output with this perturbation "
                   "(" + ", ".join(_choices.PERTURBATIONS) + ") and score both with the --metrics text metrics.")
@click.option("--human", default=None,
              help="Human-ordered pairs: order the outputs of each input by this human column "
                   "(without --perturbation); also the human column(s) of a data file.")
@click.option("--metrics", default=None,
              help="Text metrics (with --perturbation) or metric columns (human pairs; default: all).")
@click.option("--option", "options", multiple=True, help="KEY=VALUE option of the perturbation (repeatable).")
@click.option("--contexts", "context_cols", default=None,
              help="For a data file: comma-separated label columns to use as contexts (e.g. speaker,domain).")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file with --perturbation: JSONL with the texts.")
@click.option("--multi-ref", default="best", show_default=True, help="|".join(_choices.MULTI_REF))
@click.option("--model", default=None, type=click.Path(exists=True), help="Local model for bertscore etc.")
@click.option("--cache", default=None, type=click.Path(file_okay=False), help="Text-metric score cache folder.")
@click.option("--pair-context", type=click.Choice(_choices.PAIR_CONTEXTS), default=None,
              help="Human pairs whose outputs have different contexts: whose label counts.")
@click.option("--lower-is-better", "lower", default=None,
              help="Human pairs: comma-separated metric columns where lower is better (WER, TER); "
                   "default: the columns named like a lower-is-better text metric (" + ", ".join(
                       _choices.LOWER_IS_BETTER) + "), said on stderr (the API's rule, "
                   "metaeval.direction); 'none' for no column.")
@click.option("--average", default="macro", show_default=True, callback=_local_average,
              help="|".join(_choices.AVERAGES) + ": macro is Eq. 2, the mean over inputs of the per-input "
                   "accuracy (each input weighs the same); micro pools the pairs (each input weighs by its "
                   "pairs), as --average in correlate. The earlier names input and pair are accepted.")
@click.option("--ties", type=click.Choice(_choices.LOCAL_TIES), default="incorrect", show_default=True)
@click.option("--chi2-test", type=click.Choice(_choices.CHI2_TESTS), default="auto",
              show_default=True, help="H1: chi-square p-value (auto: permutation when an expected count < 5).")
@click.option("--chi2-resamples", type=int, default=9999, show_default=True)
@click.option("--tau-resamples", type=int, default=999, show_default=True,
              help="H2: permutations of the weighted-tau test.")
@click.option("--tau-variant", type=click.Choice(_choices.WTAU_VARIANTS), default="vigna", show_default=True)
@click.option("--correction", default="holm", show_default=True,
              help="|".join(_choices.CORRECTIONS) + ", across metrics / context pairs")
@click.option("--cluster-threshold", type=float, default=0.5, show_default=True,
              help="Contexts whose weighted tau is above this (average linkage) share a cluster.")
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh, recorded in --out).")
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--jobs", type=int, default=1, show_default=True)
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, local.json, accuracy.png (Figures 1a-3a), tau.png (1b-3b).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def local(data, context, perturbation, human, metrics, options, context_cols, texts_path, multi_ref, model,
          cache, pair_context, lower, average, ties, chi2_test, chi2_resamples, tau_resamples, tau_variant, correction,
          cluster_threshold, seed, system, input_, jobs, out, fmt):
    """Local metric accuracy across contexts (paper 004): accuracy per context, H1 and H2 tests."""
    from . import local as lc

    if perturbation is None and human is None:
        raise click.BadParameter("give --perturbation (perturbation pairs) or --human (human-ordered pairs)",
                                 param_hint="--perturbation")
    if perturbation is not None and (pair_context is not None or lower is not None):
        raise click.BadParameter("--pair-context and --lower-is-better apply to human pairs (perturbation "
                                 "pairs take each text metric's own direction)", param_hint="--perturbation")
    seed = _run_seed(seed, out)
    if perturbation is not None:
        met_cols = []  # the text metrics are scored below
    else:
        met_cols = _split(metrics)
    ds = _load(data, system, input_, _split(human) or [], met_cols, None, texts=texts_path,
               need_texts=perturbation is not None, contexts=_split(context_cols),
               file_only={"--contexts": context_cols})
    if context not in ds.context_names:
        raise click.BadParameter(f"{context!r} is not a context of the data; available: "
                                 f"{', '.join(ds.context_names)}", param_hint="--context")
    labels = {v for v in ds.context(context).ravel() if v is not None}
    if len(labels) < 2:
        raise click.BadParameter(f"context {context!r} has {len(labels)} label(s); local accuracy across "
                                 "contexts needs at least 2", param_hint="--context")
    scoring = None
    if perturbation is not None:
        from .perturb import score_perturbed

        opts = _perturbation_options(options, [perturbation])[perturbation]
        adapters = _text_adapters(metrics, model)
        if sum(len(a.columns) for a in adapters) < 2:
            raise click.BadParameter("H2 ranks metrics within each context: give at least 2 metrics",
                                     param_hint="--metrics")
        with _progress(None, f"{perturbation}: scoring originals and perturbed texts") as bar:
            scoring = score_perturbed(ds, perturbation, adapters, rng=seed, options=opts, multi_ref=multi_ref,
                                      cache_dir=cache, n_jobs=jobs,
                                      progress=bar.update if bar is not None else None)
        pairs = lc.local_pairs(scoring, context=context)
    else:
        if options:
            raise click.BadParameter("--option needs --perturbation", param_hint="--option")
        hum = _split(human)
        if len(hum) != 1:
            raise click.BadParameter("human-ordered pairs take one human column", param_hint="--human")
        mets = _split(metrics) or list(ds.metrics)
        if len(mets) < 2:
            raise click.BadParameter("H2 ranks metrics within each context: give at least 2 metrics",
                                     param_hint="--metrics")
        # one rule with the API (metaeval.direction): None -> columns named like a lower-is-better text
        # metric, announced with an AssumedDirectionWarning (printed on stderr)
        lower_list = None if lower is None else (() if lower.strip().lower() == "none" else tuple(_split(lower)))
        pairs = lc.local_pairs(ds, context=context, human=hum[0], metrics=mets,
                               pair_context=pair_context, lower_is_better=lower_list)
    acc = lc.local_accuracy(pairs, average=average, ties=ties)
    chi = lc.context_chi2(pairs, ties=ties, test=chi2_test, n_resamples=chi2_resamples, rng=seed,
                          correction=correction)
    tau = lc.context_tau(pairs, average=average, ties=ties, variant=tau_variant, n_resamples=tau_resamples,
                         rng=seed, correction=correction, cluster_threshold=cluster_threshold, n_jobs=jobs)
    results = {"accuracy": acc, "chi2": chi, "tau": tau}
    if out:
        os.makedirs(out, exist_ok=True)
        import pandas as pd

        _write_csv(pd.concat([acc.to_frame(), acc.overall_frame()], ignore_index=True),
                   os.path.join(out, "local_accuracy.csv"))
        _write_csv(chi.to_frame(), os.path.join(out, "chi2.csv"))
        _write_csv(tau.to_frame(), os.path.join(out, "tau.csv"))
        _write_csv(tau.clusters_frame(), os.path.join(out, "clusters.csv"))
        doc = {k: v.to_dict() for k, v in results.items()}
        if scoring is not None:
            doc["scoring"] = scoring.to_dict()
        _write_json(doc, os.path.join(out, "local.json"))
        _save_figure(lambda: _figures().plot_local_accuracy(acc), os.path.join(out, "accuracy.png"))
        _save_figure(lambda: _figures().plot_context_tau(tau), os.path.join(out, "tau.png"))
    if fmt == "json":
        _emit_json({"accuracy": _clean(acc.to_frame().to_dict(orient="records")),
                    "overall": _clean(acc.overall_frame().to_dict(orient="records")),
                    "chi2": _clean(chi.to_frame().to_dict(orient="records")),
                    "tau": _clean(tau.to_frame().to_dict(orient="records")),
                    "clusters": _clean(tau.clusters_frame().to_dict(orient="records"))})
        return
    if fmt == "csv":
        _emit_csv_by_analysis({"accuracy": acc, "chi2": chi, "tau": tau})
        return
    _show(*_tables.local_tables(acc, chi, tau, context=context, source=pairs.source, average=acc.average,
                                ties=ties))


def _floats(v, name):
    if v is None:
        return None
    out = []
    for t in _split(v):
        if t.lower() in ("none", "continuous"):
            out.append(None)
            continue
        try:
            out.append(float(t) if name not in ("c_m", "c_h") else int(t))
        except ValueError:
            raise click.BadParameter(f"{t!r} is not a number", param_hint=f"--{name.replace('_', '-')}")
    # one value is a scalar, except 'none' (continuous), kept as a one-point axis so that it
    # overrides a --grid preset instead of being read as "not given"
    return out[0] if len(out) == 1 and out[0] is not None else out


def _sizes(v):
    if v is None:
        return None
    out = []
    for t in _split(v):
        try:
            n, m = t.lower().split("x")
            out.append((int(n), int(m)))
        except ValueError:
            raise click.BadParameter(f"{t!r}: write sizes as NxM, e.g. 15x200,5x100",
                                     param_hint="--sizes")
    return out


def _bounds(v):
    """--bounds LOW:HIGH or COL=LOW:HIGH[,...] as (low, high) or {col: (low, high)}."""
    if v is None:
        return None

    def pair(t):
        try:
            lo, hi = t.split(":")
            return float(lo), float(hi)
        except ValueError:
            raise click.BadParameter(f"{t!r}: write LOW:HIGH, e.g. 1:5", param_hint="--bounds") from None

    items = _split(v) or []
    if len(items) == 1 and "=" not in items[0]:
        return pair(items[0])
    out = {}
    for t in items:
        if "=" not in t:
            raise click.BadParameter(f"{t!r}: with several columns write COL=LOW:HIGH", param_hint="--bounds")
        col, rng = t.rsplit("=", 1)
        out[col.strip()] = pair(rng)
    return out


def _simulate_run(sim, from_data, human, metrics, grid, given, common, bounds=None):
    estimates = None
    if from_data:
        if not human:
            raise click.BadParameter("--from-data needs --human", param_hint="--human")
        ds = _load(from_data, "system", "input", [human], _split(metrics), None)
        mets = _split(metrics) or list(ds.metrics)
        try:
            estimates = sim.estimate_parameters(ds, human, metrics=mets, bounds=_bounds(bounds))
            overrides = {k: v for k, v in given.items()
                         if k in ("rho_sys", "mu_rho_item", "sigma_rho_item", "c_m", "c_h", "sizes")}
            if "sizes" in overrides:
                raise click.BadParameter("--sizes cannot be combined with --from-data (N, M come from the data)")
            kw = {k: given[k] for k in ("scale", "n_iterations", "n_discretizations") if k in given}
            res = sim.simulate_dataset(ds, human, mets, overrides=overrides or None, bounds=_bounds(bounds),
                                       **kw, **common)
        except DataError as exc:
            # name the file and the options that choose its columns
            raise DataError(f"--from-data {os.path.basename(from_data)}: {exc} (choose the columns with "
                            "--human and --metrics)") from None
    elif grid:
        res = sim.simulate_paper_grid(grid, **given, **common)
    else:
        res = sim.simulate(**given, **common)
    return res, estimates


@main.command()
@click.option("--grid", default=None, help="A paper grid: " + "|".join(_choices.PAPER_GRIDS) + " (options override it).")
@click.option("--rho-sys", default=None, help="Comma-separated values (a grid axis).")
@click.option("--mu-rho-item", default=None)
@click.option("--sigma-rho-item", default=None)
@click.option("--c-m", default=None, help="Metric scale sizes (comma-separated; 'none' = continuous).")
@click.option("--c-h", default=None, help="Human scale sizes (comma-separated; 'none' = continuous).")
@click.option("--scale", type=click.Choice(_choices.SCALE_RESTRICTIONS), default=None,
              help="Which (c_m, c_h) combinations to run.")
@click.option("--sizes", default=None, help="Comma-separated NxM (systems x inputs), e.g. 15x200,5x100.")
@click.option("--n-iterations", type=int, default=None, help="T1 (default 100; the levels grid: 1000).")
@click.option("--n-discretizations", type=int, default=None, help="T2 (default 100).")
@click.option("--level", "--levels", "levels", default=_ALL_LEVELS, show_default=True, callback=_levels_option,
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--method", "--methods", "methods", default=",".join(_choices.MEASURE_METHODS), show_default=True,
              help="Comma-separated coefficients.")
@click.option("--from-data", "from_data", default=None,
              help="Simulate at the parameters estimated from this dataset (file or bundled name).")
@click.option("--human", default=None, help="With --from-data: the human column.")
@click.option("--metrics", default=None, help="With --from-data: comma-separated metrics (default: all).")
@click.option("--bounds", default=None,
              help="With --from-data: the rating scale's bounds for the 0-1 normalization, LOW:HIGH for "
                   "every column or COL=LOW:HIGH[,COL=LOW:HIGH] (default: each column's observed range).")
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh, recorded in --out).")
@click.option("--jobs", type=int, default=None, help="Worker processes (default: all cores for large grids).")
@click.option("--dask", default=None, help="Dask scheduler address.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: tidy CSV, JSON, figures and checkpoints (a restarted run resumes).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def simulate(grid, rho_sys, mu_rho_item, sigma_rho_item, c_m, c_h, scale, sizes, n_iterations,
             n_discretizations, levels, methods, from_data, human, metrics, bounds, seed, jobs, dask, out,
             fmt):
    """Statistical simulation of the correlation measures (seed paper 000, Algorithm 1)."""
    from . import simulation as sim

    seed = _run_seed(seed, out)
    opts = dict(rho_sys=_floats(rho_sys, "rho_sys"), mu_rho_item=_floats(mu_rho_item, "mu_rho_item"),
                sigma_rho_item=_floats(sigma_rho_item, "sigma_rho_item"), c_m=_floats(c_m, "c_m"),
                c_h=_floats(c_h, "c_h"), scale=scale, sizes=_sizes(sizes),
                n_iterations=n_iterations, n_discretizations=n_discretizations)
    given = {k: v for k, v in opts.items() if v is not None}
    common = dict(level=_split(levels), method=_split(methods), rng=seed, n_jobs=jobs, dask=dask,
                  checkpoint=os.path.join(out, "checkpoints", "sim") if out else None)
    with _progress(None, "simulating (work units)") as prog:
        common["progress"] = prog
        if bounds and not from_data:
            raise click.BadParameter("--bounds applies to --from-data only", param_hint="--bounds")
        res, estimates = _simulate_run(sim, from_data, human, metrics, grid, given, common, bounds)
    frame = res.to_frame()
    if out:
        os.makedirs(out, exist_ok=True)
        _write_csv(frame, os.path.join(out, "simulation.csv"))
        _write_json(res.to_dict(), os.path.join(out, "simulation.json"))
        if estimates is not None:
            _write_csv(estimates.to_frame(), os.path.join(out, "estimates.csv"))
        swept = [c for c in ("c_m", "rho_sys", "mu_rho_item", "sigma_rho_item", "c_h")
                 if frame[c].nunique(dropna=False) > 1]
        if swept:
            from .report.figures import simulation_curves

            x = swept[0]
            facet = None
            if frame["n_systems"].nunique() > 1:
                facet = "n_systems"
            elif len(swept) > 1 and frame[swept[1]].nunique() <= 6:
                facet = swept[1]
            plot = frame.dropna(subset=[x]) if x in ("c_m", "c_h") else frame
            _save_figure(lambda: simulation_curves(plot.astype({x: float}), x, facet=facet),
                         os.path.join(out, "simulation.png"))
    if fmt == "json":
        _emit_json(_clean(frame.drop(columns=["signature"]).to_dict(orient="records")))
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    if estimates is not None:
        _show(_tables.estimates_table(estimates, human))
    _show(_tables.simulation_table(frame, res.signature, from_data=estimates is not None))



# ----------------------------------------------------------------------------- judge (LLM judges)


@contextmanager
def _judge_log():
    """Show the judge's log records (retries, failures recorded as NaN) on stderr as
    ``metaeval: judge: ...`` lines while the command runs."""
    import logging

    class _Echo(logging.Handler):
        def emit(self, record):
            click.echo(f"metaeval: judge: {_literal(record.getMessage())}", err=True)

    log = logging.getLogger("metaeval.judge")
    handler = _Echo(logging.WARNING)
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)


@main.command()
@_layout_options(texts=True, rater_col=True)
@click.argument("data")
@click.option("--aspect", required=True,
              help="The evaluation criterion ({aspect} of the prompt): the text itself, or a file holding it.")
@click.option("--scale", default="1-5", show_default=True,
              help="Integer rating scale LOW-HIGH: 1-5, 1-10, 0-100, ...")
@click.option("--samples", type=int, default=1, show_default=True,
              help="Answers per output; each is a run of the metric (stability across samples).")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--aggregate", type=click.Choice(_choices.JUDGE_AGGREGATES), default="mean",
              show_default=True, help="Aggregation of the samples (geval: probability-weighted, needs logprobs).")
@click.option("--backend", type=click.Choice(_choices.JUDGE_BACKENDS), required=True,
              help="openai: any OpenAI-compatible chat-completions endpoint; local: a causal LM folder.")
@click.option("--model", required=True, help="Model name (openai) or local model folder (local).")
@click.option("--base-url", default=None,
              help="openai: the API root (default $OPENAI_BASE_URL, else https://api.openai.com/v1); "
                   "redirects are never followed.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="openai: environment variable holding the API key (never printed or stored).")
@click.option("--concurrency", type=int, default=4, show_default=True, help="openai: requests in flight.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="openai: deadline in seconds of each attempt (connect, send, whole answer).")
@click.option("--max-retries", type=int, default=5, show_default=True,
              help="openai: retries on 429/5xx/time-outs (exponential backoff with jitter).")
@click.option("--max-backoff", type=float, default=60.0, show_default=True,
              help="openai: longest wait between attempts; a longer Retry-After stops the request.")
@click.option("--max-response-bytes", type=int, default=16 * 2**20, show_default=True,
              help="openai: largest response body accepted.")
@click.option("--decoding", type=click.Choice(_choices.JUDGE_DECODINGS), default="generate", show_default=True,
              help="local: free answer then parse, or the rating drawn from the scale values' probabilities.")
@click.option("--task", default="the target text", show_default=True, help="{task} of the prompt.")
@click.option("--source-des", default="Source text", show_default=True, help="{source_des} of the prompt.")
@click.option("--target-des", default="Target text", show_default=True, help="{target_des} of the prompt.")
@click.option("--template", "template_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A prompt template file (default: seed paper 000 Table 4).")
@click.option("--context", type=click.Choice(["source", "references"]), default="source", show_default=True,
              help="What fills {source}.")
@click.option("--pattern", default=None, help="Rating regex with one group (default: the number after 'Rating:').")
@click.option("--on-failure", type=click.Choice(_choices.JUDGE_ON_FAILURE), default="nan", show_default=True,
              help="Answers without a rating: NaN, or paper 000's random rating (replication only).")
@click.option("--on-error", type=click.Choice(_choices.JUDGE_ON_ERROR), default="raise", show_default=True,
              help="A request failing after its retries: stop (resumable), or NaN and go on.")
@click.option("--seed", type=int, default=0, show_default=True, help="Base of the per-request seeds.")
@click.option("--max-tokens", type=int, default=512, show_default=True)
@click.option("--name", default="llm_judge", show_default=True, help="The score column.")
@click.option("--cache", default=None, type=click.Path(file_okay=False),
              help="Response cache folder (default $METAEVAL_CACHE_DIR, $XDG_CACHE_HOME/metaeval or ~/.cache/metaeval).")
@click.option("--no-cache", is_flag=True, help="Cache nothing.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file: JSONL with system, input, hypothesis and source/references.")
@click.option("--human", default=None, help="Human columns (files).")
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--max-inputs", type=int, default=None, help="Judge only the first K inputs (a trial run).")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Write one row per system x input x sample (value, rating, status, raw answer) to CSV or Parquet.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--pairwise", is_flag=True,
              help="Compare the outputs of each pair of systems (A, B or tie, in both orders) instead of "
                   "rating them; --template and --pattern then give the pairwise prompt and verdict parser.")
def judge(data, aspect, scale, samples, temperature, aggregate, backend, model, base_url, api_key_env,
          concurrency, timeout, max_retries, max_backoff, max_response_bytes, decoding, task, source_des, target_des, template_path, context,
          pattern, on_failure, on_error, seed, max_tokens, name, cache, no_cache, texts_path, human, system,
          input_, max_inputs, out, fmt, pairwise):
    """Rate a dataset's outputs with an LLM judge (prompt of seed paper 000 Table 4; G-Eval)."""
    from . import textmetrics as tm

    if os.path.isfile(aspect):
        with open(aspect, encoding="utf8") as f:
            aspect = f.read().strip()
    kw = {}
    if template_path is not None:
        with open(template_path, encoding="utf8") as f:
            kw["template"] = f.read()
    from click.core import ParameterSource

    ctx = click.get_current_context()
    only = {"openai": ("concurrency", "timeout", "max_retries", "max_backoff", "max_response_bytes",
                       "base_url", "api_key_env"),
            "local": ("decoding",)}
    for other, names in only.items():
        given = [n for n in names if other != backend
                 and ctx.get_parameter_source(n) == ParameterSource.COMMANDLINE]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise click.BadParameter(f"{flags} apply to --backend {other}, not {backend}",
                                     param_hint="--backend")
    if pairwise:
        given = [n for n in ("scale", "samples", "aggregate", "on_failure")
                 if ctx.get_parameter_source(n) == ParameterSource.COMMANDLINE]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise click.BadParameter(f"{flags} apply to ratings, not to --pairwise verdicts",
                                     param_hint="--pairwise")
        if "template" in kw:
            kw["pairwise_template"] = kw.pop("template")
        if pattern is not None:
            kw["preference_pattern"], pattern = pattern, None
    if backend == "openai":
        be = tm.OpenAIBackend(model, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                              max_retries=max_retries, max_backoff=max_backoff,
                              max_response_bytes=max_response_bytes, concurrency=concurrency)
    else:
        be = tm.LocalBackend(model, decoding=decoding)
    metric = tm.LLMJudge(aspect, backend=be, scale=scale, samples=samples, temperature=temperature,
                         aggregate=aggregate, task=task, source_des=source_des, target_des=target_des,
                         context=context, pattern=pattern, on_failure=on_failure, on_error=on_error,
                         seed=seed, max_tokens=max_tokens, name=name,
                         cache_dir=False if no_cache else cache, **kw)
    ds = _load(data, system, input_, _split(human), None, None, texts=texts_path, need_texts=True)
    if max_inputs is not None:
        if max_inputs < 1:
            raise click.BadParameter(f"{max_inputs}: give a positive number of inputs", param_hint="--max-inputs")
        ds = ds.subset(inputs=list(ds.inputs[:max_inputs]))
    with _progress(None, "judging") as bar, _judge_log():
        def prog(done, total, counts):
            if bar is not None:
                bar.update(done, total, description=(
                    f"judging: {counts['requested']} requested, {counts['cached']} cached, "
                    f"{counts['failed']} failed"))

        if pairwise:
            return _judge_pairwise_output(tm.judge_pairs(ds, metric, progress=prog), out, fmt)
        res = tm.judge(ds, metric, progress=prog)
    frame = res.to_frame()
    if out:
        if out.endswith((".parquet", ".pq")):
            frame.to_parquet(out, index=False)
        else:
            _write_csv(frame, out)
    if fmt == "json":
        _emit_json(_nan_to_none(res.to_dict(arrays=True)))
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    _show(*_tables.judge_tables(res))

def _judge_pairwise_output(frame, out, fmt):
    """Write and print the long table of ``judge --pairwise``."""
    if out:
        if out.endswith((".parquet", ".pq")):
            frame.to_parquet(out, index=False)
        else:
            _write_csv(frame, out)
    counts = frame.attrs["counts"]
    if fmt == "json":
        rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        _emit_json({"signature": frame.attrs["signature"], **counts, "rows": rows})
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    _show(_tables.judge_pairs_table(frame))


# ----------------------------------------------------------------------------- report


def _report_progress():
    """The whole run's progress on stderr (rich; only when stderr is a terminal):
    one bar over the steps, one for the units of the current step."""
    from .report import Progress

    if not sys.stderr.isatty():
        return None, Progress()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TimeElapsedColumn

    rp = RichProgress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=Console(stderr=True), transient=True)

    class _Step(_Bar):
        def set_total(self, total):
            self._p.update(self._task, total=total)

    class _Run(Progress):
        overall = None

        def start(self, n_steps):
            if self.overall is None:
                self.overall = rp.add_task("metaeval report", total=n_steps)
            else:
                rp.update(self.overall, total=rp.tasks[self.overall].total + n_steps)

        @contextmanager
        def step(self, label, total=None):
            task = rp.add_task(f"  {_markup_safe(label)}", total=total)  # labels hold column names
            try:
                yield _Step(rp, task)
            finally:
                rp.remove_task(task)
                if self.overall is not None:
                    rp.advance(self.overall, 1)

    return rp, _Run()


@main.command()
@_layout_options(texts=True)
@_system_score_options
@click.argument("data", required=False, default="summeval")
@click.option("--human", default=None,
              help="Comma-separated human columns (default: those with 2+ raters, else all; required for files).")
@click.option("--metrics", default=None, help="Comma-separated metric columns (default: all).")
@click.option("--out", default="report", show_default=True, type=click.Path(file_okay=False),
              help="Output folder: report.html, results.json, figures/, tables/.")
@click.option("--quick", is_flag=True,
              help="Fewer resamples (100), a pairwise set of 5 metrics, no text rescoring: about a minute.")
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh, recorded in results.json).")
@click.option("--method", type=click.Choice(_choices.REPORT_METHODS), default=_choices.DEFAULT_METHOD,
              show_default=True, help="Coefficient of the correlation tables, clusters and correlation design "
                                      "(validity keeps Kendall's tau-b, as seed paper 002).")
@click.option("--level", "--levels", "levels", default=_ALL_LEVELS, show_default=True, callback=_levels_option,
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--n-resamples", type=int, default=None,
              help="Bootstrap and permutation resamples (default 1000; --quick 100).")
@click.option("--splits", type=int, default=None, help="Ranking-consistency splits (default 1000; --quick 100).")
@click.option("--pairwise-metrics", "pairwise", default=None,
              help="Metrics of the pairwise sections (clusters, DP, RC): a number K (default 10; --quick 5), "
                   "'all', or comma-separated names.")
@click.option("--context", default=None,
              help="Context for local metric accuracy (system, input or a context column); default: skipped.")
@click.option("--no-text", is_flag=True, help="Skip the text diagnostics (rescoring perturbed texts).")
@click.option("--text-metrics", default="bleu,rouge1", show_default=True,
              help="Text metrics of the perturbation-detection test.")
@click.option("--ks-low", type=float, default=None, help="KS: low-quality texts have human < this.")
@click.option("--ks-high", type=float, default=None, help="KS: high-quality texts have human >= this.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level of the clusters.")
@click.option("--cache", default=None, type=click.Path(file_okay=False), help="Text-metric score cache folder.")
@click.option("--jobs", type=int, default=1, show_default=True)
@click.option("--system-col", "system", default="system", show_default=True)
@click.option("--input-col", "input_", default="input", show_default=True)
@click.option("--rater-col", "rater", default=None, help="Rater column (long files with several raters).")
@click.option("--run-col", "run", default=None, help="Run column (long files with repeated metric runs).")
@click.option("--contexts", "context_cols", default=None, help="Files: comma-separated context label columns.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Files: JSONL with the texts (hypothesis, references/source).")
def report(data, human, metrics, out, quick, seed, method, levels, n_resamples, splits, pairwise, context,
           no_text, text_metrics, ks_low, ks_high, alpha, cache, jobs, system, input_, rater, run,
           context_cols, texts_path):
    """One command from data to a readable, citable meta-evaluation: report.html + results.json.

    Runs every analysis that applies to DATA (default: the bundled SummEval) and writes a
    self-contained static HTML report with its figures (PNG, SVG), every table as CSV and
    LaTeX, and results.json; the report says which sections were skipped and why.
    """
    from .data import list_datasets
    from .report import ReportConfig, Writer, build, write

    bundled = data in {d["name"] for d in list_datasets()}
    if not bundled and os.path.isfile(data) and not human:
        raise click.BadParameter("a data file needs --human (its human score columns)", param_hint="--human")
    load = dict(texts=texts_path, run=run, contexts=_split(context_cols),
                file_only={"--contexts": context_cols, "--texts": texts_path, "--rater-col": rater,
                           "--run-col": run})
    ds = _load(data, system, input_, _split(human), _split(metrics), rater, **load)
    ds_runs = _load(data, system, input_, _split(human), _split(metrics), rater, runs=True, **load) \
        if bundled else ds
    if pairwise is not None:
        p = pairwise.strip()
        if p.isdigit():
            pairwise = int(p)
            if pairwise < 2:
                raise click.BadParameter("give at least 2 metrics", param_hint="--pairwise-metrics")
        elif p != "all":
            pairwise = tuple(_split(p))
    for name, v in (("--n-resamples", n_resamples), ("--splits", splits)):
        if v is not None and v < 1:
            raise click.BadParameter("must be a positive integer", param_hint=name)
    cfg = ReportConfig(human=tuple(_split(human) or ()) or None, metrics=tuple(_split(metrics) or ()) or None,
                       method=method, levels=tuple(_split(levels) or ()), quick=quick, seed=seed,
                       n_resamples=n_resamples, splits=splits, pairwise=pairwise, context=context,
                       text=False if no_text else None, text_metrics=tuple(_split(text_metrics) or ()),
                       ks_low=ks_low, ks_high=ks_high, alpha=alpha, cache_dir=cache, n_jobs=jobs,
                       system_scores=_system_level())
    from .report import estimate
    from .report import rated_columns, select_humans, select_metrics

    humans = select_humans(ds, cfg.human, quick=cfg.quick)
    est = estimate(len(ds.systems), len(ds.inputs), len(humans), len(select_metrics(ds, cfg.metrics)), cfg,
                   n_rated=len(rated_columns(ds, humans)))
    click.echo(f"metaeval: estimated cost: {est['text']}", err=True)  # before any work starts
    import shlex

    argv = sys.argv[1:]
    command = "metaeval " + shlex.join(argv) if argv[:1] == ["report"] else None
    rp, prog = _report_progress()
    if rp is not None:
        rp.start()
    try:
        writer = Writer(out)  # finished sections are written as the run goes
        rep = build(ds, cfg, ds_runs=ds_runs, progress=prog, command=command, writer=writer)
        doc = write(rep, out, progress=prog, writer=writer)
    finally:
        if rp is not None:
            rp.stop()
    _say(f"report: {os.path.join(out, 'report.html')}")
    _say(f"results: {os.path.join(out, 'results.json')} (seed {doc['seed']}, {doc['mode']} mode, "
         f"{doc['seconds_analyses']:.0f} s)")
    for k in doc["skipped"]:
        _say(f"skipped ({k['section']}): {k['reason']}")



# --------------------------------------------------------------------------
# read-mtme: mt-metrics-eval's WMT data layout into a long file

@main.command("read-mtme")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("testset")
@click.argument("lp")
@click.option("--human", default="mqm", show_default=True,
              help="Human score name (human-scores/LP.NAME.LEVEL.score): mqm, wmt-z, da-sqm, ...")
@click.option("--score-level", "level", type=click.Choice(["seg", "doc", "sys"]), default="seg", show_default=True,
              help="Which score files to read: segments, documents, or system-level scores "
                   "(mt-metrics-eval's file level; an analysis' grouping level is --level).")
@click.option("--refs", default=None, help="Comma-separated references in use (e.g. refA): other metric "
              "variants are dropped and these human translations are never systems.")
@click.option("--include-human", is_flag=True, help="Keep human translations (reference names) as systems.")
@click.option("--exclude-systems", default=None, help="Comma-separated systems to drop (e.g. outliers).")
@click.option("--metrics", default=None, help="Comma-separated metric columns or base names (default: all).")
@click.option("--primary", default=None, help="Comma-separated base names of the primary metrics.")
@click.option("--primary-only", is_flag=True, help="Keep only the --primary metrics.")
@click.option("--segments", type=click.Choice(["all", "rated"]), default="all", show_default=True,
              help="System level: metric means over all segments (the .sys.score files) or over the "
              "human-rated ones (the '.true' convention).")
@click.option("--ratings", default=None, help="Error-span rating name (human-scores/LP.NAME.seg.rating, "
              "e.g. mqm.merged): adds a human column of MQM scores from the spans (Major 5, Minor 1, ...).")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Long table to write (.csv, .tsv, .jsonl, .parquet): system, input, contexts, scores.")
@click.option("--texts-out", default=None, type=click.Path(dir_okay=False),
              help="JSONL of the texts (system, input, source, reference, hypothesis) for --texts.")
def read_mtme_cmd(root, testset, lp, human, level, refs, include_human, exclude_systems, metrics,
                  primary, primary_only, segments, ratings, out, texts_out):
    """Read mt-metrics-eval data (ROOT/TESTSET/..., language pair LP) into a long file.

    The file has one row per system x input with the human column, one column
    per metric variant (BLEU-refA, COMETKiwi-src, ...) and the context columns
    doc and domain; other commands read it with --human NAME (and
    --contexts doc,domain).  At seg and doc level the system-level scores of
    the .sys.score files (corpus BLEU, WMT's human system scores) are written
    beside it as OUT's name with .sys before the suffix (ende.csv ->
    ende.sys.csv: system, then one column per score column); pass it to
    correlate, compare, diagnose or report with --system-scores so that their
    system level uses these numbers, as mt-metrics-eval does.  See docs/mt.md.
    """
    from .data import read_mtme

    ds = read_mtme(root, testset, lp, human=human, level=level, refs=_split(refs),
                   include_human=include_human, exclude_systems=_split(exclude_systems) or (),
                   metrics=_split(metrics), primary=_split(primary), primary_only=primary_only,
                   segments=segments, texts=texts_out is not None, ratings=ratings)
    frame = ds.to_frame()
    if ds.contexts is not None:
        ctx = ds.contexts
        frame = frame.merge(ctx, on=[k for k in ("system", "input") if k in ctx.columns], how="left")
        cols = ["system", "input"] + [c for c in ctx.columns if c not in ("system", "input")]
        frame = frame[cols + [c for c in frame.columns if c not in cols]]
    suffix = os.path.splitext(out)[1].lower()
    # CSV/TSV through the exports' escaping (names from file names shown, never obeyed; a newline
    # kept in a quoted field), JSON Lines in ASCII (\u001b, \u202e), as every table metaeval writes
    writers = {".csv": lambda f, p: _write_csv(f, p),
               ".tsv": lambda f, p: _write_csv(f, p, sep="\t"),
               ".jsonl": lambda f, p: f.to_json(p, orient="records", lines=True),
               ".parquet": lambda f, p: f.to_parquet(p, index=False)}
    if suffix not in writers:
        raise click.BadParameter(f"unknown suffix {suffix!r}: use .csv, .tsv, .jsonl or .parquet",
                                 param_hint="--out")
    writers[suffix](frame, out)
    sys_out = None
    if ds.system_scores is not None:  # the .sys.score files: a second table that --system-scores reads
        sys_out = out[: len(out) - len(suffix)] + ".sys" + suffix
        writers[suffix](ds.system_scores.reset_index(), sys_out)
    if texts_out is not None:
        if ds.texts is None:
            _fail(f"no texts for level {level!r}: texts are per segment (use --level seg)")
        ds.texts.to_json(texts_out, orient="records", lines=True)
    n, m = ds.shape
    click.echo(f"{out}: {n} systems x {m} inputs, human {', '.join(map(repr, ds.human))}, "
               f"{len(ds.metrics)} metrics")
    if sys_out is not None:
        click.echo(f"{sys_out}: given system-level scores of {len(ds.system_score_columns)} column(s) "
                   f"(the .sys.score files); use them with --system-scores {sys_out}")


# ---------------------------------------------------------------- preferences (issue 17.1)


@main.command()
@click.argument("data")
@click.option("--input-format", "input_format", default="auto", show_default=True,
              help="|".join(("auto", *_choices.PREFERENCE_FORMATS)) + " (files only).")
@click.option("--judges", default=None,
              help="Comma-separated judges (default: all). mt-bench/alpacaeval files: the annotators that are "
                   "judges (the others are human raters). Bundled datasets: metric columns.")
@click.option("--human", default=None, help="Bundled datasets: the human column whose raters give the preferences.")
@click.option("--judge-outputs", "judge_outputs", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Bundled datasets: a CSV/JSONL of pairwise judge outputs (input, system_a, system_b, judge, "
                   "order, preference[, raw]), e.g. written by 'metaeval judge --pairwise'.")
@click.option("--epsilon", type=float, default=None,
              help="Fixed tie threshold of judge margins (default: tie-calibrated, acc_eq).")
@click.option("--compare", "compare_", default=None, help="Two judges 'A,B': paired test of their agreement.")
@click.option("--measure", default="acc_eq", show_default=True,
              help="--compare statistic: " + "|".join(_choices.PREFERENCE_COMPARE_MEASURES) + ".")
@click.option("--no-ceiling", is_flag=True, help="Leave out the human-human ceiling rows.")
@click.option("--length-per", type=float, default=100.0, show_default=True,
              help="Length-bias slope per this many words of length difference.")
@click.option("--n-resamples", type=int, default=1000, show_default=True)
@click.option("--confidence-level", type=float, default=0.95, show_default=True)
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh entropy, shown in the signature).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def preferences(data, input_format, judges, human, judge_outputs, epsilon, compare_, measure, no_ceiling,
                length_per, n_resamples, confidence_level, seed, fmt):
    """Pairwise-preference meta-evaluation of judges against human raters.

    DATA is a preference file (plain CSV/JSONL, MT-Bench human judgments JSONL, AlpacaEval
    annotation JSON) or a bundled dataset (pairs of system outputs, --human raters,
    metrics as judges).  Prints agreement (acc_23, acc_eq, kappas, alpha) with the
    human-human ceiling, position consistency, length bias and the Bradley-Terry rankings.
    """
    import warnings

    from . import preferences as pf
    from .data import list_datasets, load_dataset

    if n_resamples < 0:
        raise click.BadParameter("must be >= 0", param_hint="--n-resamples")
    bundled = data in {d["name"] for d in list_datasets()}
    if bundled:
        if not human:
            raise click.BadParameter("a bundled dataset needs --human (a human column with raters)",
                                     param_hint="--human")
        ds = load_dataset(data)
        extra = None
        if judge_outputs:
            import pandas as pd

            extra = (pd.read_json(judge_outputs, lines=True) if judge_outputs.lower().endswith((".jsonl", ".json"))
                     else pd.read_csv(judge_outputs))
        named = _split(judges)
        metric_cols = [j for j in named if j in ds.metrics] if named else ([] if extra is not None else None)
        prefs = pf.PreferenceData.from_dataset(ds, human, metrics=metric_cols, judges=extra)
        judge_list = named or None
    else:
        if human or judge_outputs:
            raise click.BadParameter("--human and --judge-outputs apply to bundled datasets; files carry their "
                                     "raters and judges", param_hint="--human" if human else "--judge-outputs")
        fmt_in = input_format.strip().lower()
        if fmt_in not in ("auto",) + pf.FORMATS:
            raise click.BadParameter(f"{input_format!r}; choose one of auto, {', '.join(pf.FORMATS)}",
                                     param_hint="--input-format")
        judge_list = _split(judges)
        # mt-bench/alpacaeval: --judges names the annotators that are judges; csv/jsonl: the
        # judges to analyse (unknown names are errors either way)
        prefs = pf.read_preferences(data, format=fmt_in, judges=judge_list)
        judge_list = judge_list or None
    results = {}
    results["agreement"] = pf.preference_agreement(prefs, judge_list, epsilon=epsilon,
                                                   ceiling=False if no_ceiling else None,
                                                   n_resamples=n_resamples, confidence_level=confidence_level,
                                                   rng=seed)
    if compare_:
        pair = _split(compare_)
        if len(pair) != 2:
            raise click.BadParameter("give two judges 'A,B'", param_hint="--compare")
        results["compare"] = pf.compare_judges(prefs, pair[0], pair[1], measure=measure, epsilon=epsilon,
                                               n_resamples=max(n_resamples, 1),
                                               confidence_level=confidence_level, rng=seed)
    if (prefs.judge_rows["order"] != "").any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pf.UndefinedStatisticWarning)  # judges without orders: left out
            pc = pf.position_consistency(prefs, judge_list, n_resamples=n_resamples,
                                         confidence_level=confidence_level, rng=seed)
        results["position"] = pf.PositionConsistencies(tuple(r for r in pc if r.n > 0))
    if prefs.lengths is not None:
        results["length"] = pf.length_bias(prefs, judge_list, per=length_per, confidence_level=confidence_level)
    results["bradley_terry"] = pf.bradley_terry(prefs, judge_list)
    if fmt == "json":
        doc = {k: _clean(v.to_frame().to_dict(orient="records")) for k, v in results.items()
               if k != "compare"}
        if "compare" in results:
            doc["compare"] = _clean([results["compare"].to_dict()])
        doc["ranking"] = _clean(results["bradley_terry"].ranking().reset_index().to_dict(orient="records"))
        _emit_json(doc)
        return
    if fmt == "csv":
        _emit_csv_by_analysis(results)
        return
    _say(repr(prefs))
    _show(*_tables.preference_tables(results, length_unit=prefs.length_unit, length_per=length_per))


@main.command("wmt")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("testset")
@click.option("--lps", required=True, help="Comma-separated language pairs, e.g. en-de,zh-en.")
@click.option("--preset", type=click.Choice(_choices.WMT_PRESETS), default="wmt24", show_default=True,
              help="wmt24: per lp system SPA + segment acc_eq; wmt23: pooled accuracy + system/segment "
              "Pearson + segment acc_eq.")
@click.option("--human", default="mqm", show_default=True)
@click.option("--refs", default=None, help="Standard reference (one for all lps, or lp=ref,lp=ref).")
@click.option("--primary", default=None, help="Comma-separated base names of the primary metrics.")
@click.option("--primary-only", is_flag=True)
@click.option("--include-human", is_flag=True, help="Keep human translations as systems.")
@click.option("--n-resamples", type=int, default=1000, show_default=True,
              help="Perm-Both draws per metric pair (0: no clusters).")
@click.option("--n-permutations", type=int, default=1000, show_default=True, help="SPA sign draws.")
@click.option("--clusters", type=click.Choice(_choices.WMT_CLUSTER_RULES), default="holm", show_default=True,
              help="holm: (count+1)/(n+1) one-sided p-values, Holm-corrected over each task's pairs (the rule "
                   "of compare and the report); mtme: mt-metrics-eval's exact rule, count/n uncorrected; "
                   "metaeval: (count+1)/(n+1) uncorrected.")
@click.option("--seed", type=int, default=None)
@click.option("--format", "fmt", type=click.Choice(["text", "csv", "latex"]), default="text", show_default=True)
def wmt_cmd(root, testset, lps, preset, human, refs, primary, primary_only, include_human, n_resamples,
            n_permutations, clusters, seed, fmt):
    """A WMT metrics-task table from mt-metrics-eval data (ROOT/TESTSET). See docs/mt.md."""
    from .wmt import run_wmt

    ref_arg = refs
    if refs is not None and "=" in refs:
        ref_arg = {}
        for part in _split(refs):
            if "=" not in part:
                raise click.BadParameter(f"{part!r}: use lp=ref for every pair", param_hint="--refs")
            k, v = part.split("=", 1)
            ref_arg[k] = v
    res, weights = run_wmt(root, testset, _split(lps), preset=preset, human=human, refs=ref_arg,
                           primary=_split(primary), primary_only=primary_only, include_human=include_human,
                           n_resamples=n_resamples, n_permutations=n_permutations, clusters=clusters,
                           rng=seed)
    click.echo(_tables.wmt_table(res, weights, fmt=fmt), nl=False)  # names escaped by the view


@main.command("span-agreement")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--match", type=click.Choice(["char", "exact"]), default="char", show_default=True,
              help="char: F1 over characters marked as error; exact: F1 over identical spans.")
@click.option("--severity", is_flag=True, help="A match needs the same severity.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def span_agreement_cmd(files, match, severity, fmt):
    """Rater agreement on error spans: precision/recall/F1 per rater pair (docs/mt.md).

    FILES are mt-metrics-eval .rating files (one per rater, e.g. LP.mqm.rater1.seg.rating)
    or TSVs with columns system, input, rater, start, end, severity, category."""
    import pandas as pd

    from .wmt import read_error_spans, read_rating_spans, span_agreement

    spans = pd.concat([read_rating_spans(f) if str(f).endswith(".rating") else read_error_spans(f)
                       for f in files], ignore_index=True)
    res = span_agreement(spans, match=match, severity=severity)
    frame = res.to_frame()
    if fmt == "json":
        _emit_json(_nan_to_none({"pairs": frame.to_dict(orient="records"), "mean_f1": res.mean_f1}))
    elif fmt == "csv":
        _emit_csv(frame)
    else:
        _show(_tables.span_agreement_table(res, match=match, severity=severity))


@main.command("bench")
@click.option("--metric", default=None, metavar="SPEC",
              help="The metric: a text-metric name (metaeval score --list), a metric column of the datasets, "
                   "or module:function (a Python function taking a list of records, returning one score each).")
@click.option("--command", "command", default=None, metavar="CMD",
              help="The metric as a shell command: records as JSON Lines on stdin, one score per line on stdout.")
@click.option("--scores", "scores_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="The metric's scores computed elsewhere: CSV/TSV/JSONL with dataset, system, input, score.")
@click.option("--name", default=None, help="Column name of the metric (default: function, command or file name).")
@click.option("--baselines", default=None, help="Comma-separated baselines (text metrics, metric columns, "
              "module:function).")
@click.option("--datasets", "datasets_", default=None,
              help="Comma-separated datasets (default: every bundled and downloadable one; see metaeval datasets).")
@click.option("--needs", default="hypothesis", show_default=True,
              help="Texts the metric reads (hypothesis, source, references); datasets lacking one are skipped.")
@click.option("--level", "levels", default=None,
              help="Comma-separated levels (default: every level each dataset supports).")
@click.option("--method", default=None, help="Correlation coefficient (default: pearson).")
@click.option("--n-resamples", type=int, default=1000, show_default=True,
              help="Bootstrap draws of the intervals and permutation draws of the paired tests.")
@click.option("--confidence-level", type=float, default=0.95, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--clusters", type=click.Choice(_choices.WMT_CLUSTER_RULES), default="holm", show_default=True,
              help="holm: (count+1)/(n+1) one-sided p-values, Holm-corrected over each task's pairs (the rule "
                   "of compare, wmt and the report); mtme: mt-metrics-eval's exact rule, count/n uncorrected; "
                   "metaeval: (count+1)/(n+1) uncorrected.")
@click.option("--weights", "weighting", type=click.Choice(["data,human", "data", "equal"]), default="data,human",
              show_default=True, help="Task weights over datasets (see docs/bench.md).")
@click.option("--lower-is-better", "lower_is_better", default=None,
              help="Comma-separated metrics whose lower scores are better (negated before the analyses), or "
                   "'none' (default: names of lower-is-better text metrics such as TER, with a warning).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Cache of the metric's scores (default: <dataset cache>/.bench).")
@click.option("--no-cache", is_flag=True, help="Do not cache the metric's scores.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Dataset cache (default: $METAEVAL_DATA, else ~/.cache/metaeval/datasets).")
@click.option("--base-url", default=None, metavar="URL", help="Download mirror (default: $METAEVAL_DATA_URL).")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes (datasets are the units).")
@click.option("--dask", default=None, help="Dask scheduler address: run the datasets on that cluster.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "latex", "json"]), default="table",
              show_default=True, help="table: ranking and per-task tables; csv/latex: the WMT-style table.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Also write an HTML report with the bench section (and its tables as CSV/LaTeX) here.")
def bench_cmd(metric, command, scores_file, name, baselines, datasets_, needs, levels, method, n_resamples,
              confidence_level, alpha, clusters, weighting, lower_is_better, seed, cache_dir, no_cache, data_dir,
              base_url, jobs, dask, fmt, out):
    """Rank a metric beside baselines on every human-judgment dataset (docs/bench.md)."""
    from .bench import Command, ScoresFile, bench

    given = [x for x in (metric, command, scores_file) if x is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --metric, --command, --scores")
    spec = metric if metric is not None else (Command(command, name or "command") if command is not None
                                              else ScoresFile(scores_file, name))
    res = bench(spec, name=name, baselines=_split(baselines) or (), datasets=_split(datasets_),
                needs=_split(needs) or ("hypothesis",), levels=_split(levels), method=method,
                n_resamples=n_resamples, confidence_level=confidence_level, alpha=alpha, clusters=clusters,
                weighting=weighting, rng=seed, cache_dir=False if no_cache else cache_dir, data_dir=data_dir,
                lower_is_better=None if lower_is_better is None else (
                    "none" if lower_is_better.strip() == "none" else _split(lower_is_better)),
                base_url=base_url, n_jobs=jobs, dask=dask)
    if out is not None:
        from .report import write

        write(res.report(command="metaeval bench"), out)
    if fmt == "json":
        _emit_json(res.to_dict())
    elif fmt in ("csv", "latex"):
        click.echo(res.table(fmt=fmt), nl=False)
    else:
        _show(_tables.bench_ranking_table(res), _tables.bench_tasks_table(res))


if __name__ == "__main__":  # pragma: no cover
    main()
