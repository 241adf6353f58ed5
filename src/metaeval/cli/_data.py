"""Loading DATA and the layout options every command that reads data shares."""

from __future__ import annotations

import os
import warnings

import click

from .. import _choices
from ..errors import DataError, FailureCodeWarning, ParameterError
from ..report.tables import literal as _literal
from ._api import ApiOption
from ._sysscores import _attach_system_scores, _system_level, _system_score_options  # noqa: F401  (commands import them here)

FORMATS = ("table", "json", "csv")


def _metrics(v):
    """--metrics: comma-separated columns; ``none``: no metric column (a file of human ratings with
    other numeric columns); absent or empty: the file's default metric columns (None)."""
    if v is not None and v.strip().lower() == "none":
        return []
    return _split(v)


def _some_metrics(v, command):
    """--metrics for a command that scores metrics: ``none`` is a one-line error naming --metrics."""
    mets = _metrics(v)
    if mets == []:
        raise click.BadParameter(f"{v!r}: {command} needs at least one metric column; name them "
                                 "(comma-separated) or leave --metrics out for the data's metric columns",
                                 param_hint="--metrics")
    return mets


def _split(v):
    if v is None:
        return None
    out = [s.strip() for s in v.split(",") if s.strip()]
    return out or None


# `item` names different groupings in different tools: metaeval's (seed paper 000) correlates across
# the inputs of each system, mt-metrics-eval's across the systems of each item (our `input`). The
# command line takes the names the API takes and every output prints (`item` included, so that a level
# read in a table, CSV, JSON or signature can be typed back), refuses the ambiguous ones with the
# mapping, and says what `item` means whenever it is typed (metaeval._choices: LEVEL_ALIASES,
# AMBIGUOUS_LEVELS).
_CLI_LEVELS = {**{lv: lv for lv in _choices.LEVELS}, **_choices.LEVEL_ALIASES}
_LEVELS_HELP = ", ".join(
    f"{lv} (per system, across its inputs; alias group-by-system; mt-metrics-eval's 'item' grouping is input)"
    if lv == "item" else lv for lv in _choices.LEVELS)
#: Said (as a note) when ``item`` is typed: our ``item`` is not mt-metrics-eval's.
ITEM_LEVEL_NOTE = ("level 'item' is metaeval's item level (seed paper 000: per system, across its inputs; "
                   "WMT's group-by-system, mt-metrics-eval's average_by='sys'); mt-metrics-eval's 'item' "
                   "grouping (per input, across systems) is level 'input'")


def _levels_option(ctx, param, value):
    """Click callback of every --level option: comma-separated names -> canonical names (comma-joined)."""
    if value is None:
        return None
    out = []
    for t in _split(value) or []:
        key = t.lower()
        if key in ("sys", "seg", "segment"):
            raise ParameterError(
                f"--level {t!r} is ambiguous: metaeval's item level (seed paper 000: per system, across its "
                "inputs; mt-metrics-eval's 'sys' grouping, WMT's group-by-system) is 'item' (or "
                "'group-by-system'); mt-metrics-eval's 'item' grouping (per input, across systems) is "
                "'input'; WMT's 'seg'/'none' (all cells) is 'global'")
        if key in _choices.AMBIGUOUS_LEVELS:
            raise ParameterError(f"--level {t!r} is ambiguous: {_choices.AMBIGUOUS_LEVELS[key]}; choose from "
                                 f"{', '.join(_choices.LEVELS)}")
        if key not in _CLI_LEVELS:
            raise ParameterError(f"--level {t!r} is not a level; choose from {_LEVELS_HELP}")
        if key == "item" and _typed(ctx, param):
            _note_once(ITEM_LEVEL_NOTE)
        out.append(_CLI_LEVELS[key])
    return ",".join(dict.fromkeys(out)) or None


def _typed(ctx, param):
    """Whether the value of ``param`` came from the user (not the option's default)."""
    if ctx is None or param is None:
        return True  # parsed by a command from another option (measures' --measures)
    from click.core import ParameterSource

    return ctx.get_parameter_source(param.name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


def _note_once(text):
    """A note printed when the command succeeds (none with --quiet), once."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    notes = ctx.find_root().meta.setdefault("metaeval.notes", [])
    if text not in notes:
        notes.append(text)


def _one_level_option(ctx, param, value):
    """Click callback of a --level option that takes one level (compare, validity)."""
    value = _levels_option(ctx, param, value)
    if value is not None and "," in value:
        raise ParameterError(
            f"--level takes one level in `metaeval {ctx.info_name}` (got {len(value.split(','))}: "
            f"{', '.join(value.split(','))}); run it once per level")
    return value


_ALL_LEVELS = ",".join(_choices.LEVELS)

def _load(data, system, input_, human, metrics, rater, runs=False, texts=None, need_texts=False,
          run=None, contexts=None, file_only=None):
    """DATA as a Dataset: a bundled name, or a file (with ``texts``: a JSONL of its texts).

    ``metrics=None`` takes the file's default metric columns, ``[]`` none; ``run`` and
    ``contexts`` are passed to the reader; ``file_only`` maps option flags to their values:
    any of them set with a bundled dataset is an error (they describe a file's columns).
    """
    from ..data import list_datasets, load_dataset, option_names, read_dataset

    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta["metaeval.data"] = data  # named by the messages of unexpected errors
    if isinstance(system, str) and system.strip().lower() == "none":
        system = None  # --system none: one unnamed system (Dataset.from_frame(system=None))
    layout = _layout_values(ctx)
    extra_rater, extra_run = _layout_axes(ctx)
    rater, run = rater or extra_rater, run or extra_run
    if extra_rater or extra_run:
        file_only = {**(file_only or {}), "--rater": extra_rater, "--run": extra_run}
    names = {d["name"] for d in list_datasets()}
    if data in names:
        scale = _scale_values(ctx)
        file_only = {**(file_only or {}), "--where": layout["where"], "--raters": layout["rater_cols"],
                     "--text-cols": layout["text_cols"], "--bounds": scale.get("bounds"),
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
    if need_texts and metrics is None:
        # commands that score texts (score, judge, perturb) read no metric column of the file and
        # need no human one: with --human only that column is read, without it the file's score
        # columns are kept as they are (a Dataset needs one) and none is taken as human
        if human:
            metrics = []
        elif not layout["rater_cols"]:
            human = []
    kw = dict(system=system, input=input_, human=human)
    for key, v in (("metrics", metrics), ("contexts", contexts)):
        if v is not None:
            kw[key] = v
    for key, v in (("rater", rater), ("run", run)):
        if v:
            kw[key] = v
    kw.update(_scale_values(ctx))
    with option_names(_option_flags(ctx)), warnings.catch_warnings():
        if need_texts and kw.get("human") == [] and metrics is None:
            # the file's score columns are kept only because a Dataset needs one: the command reads
            # none of them, so a failure code in one of them is no concern of this run
            warnings.simplefilter("ignore", FailureCodeWarning)
        if texts is not None:
            try:
                kw["texts"] = _read_texts(texts, system, input_)
            except DataError as exc:
                # the texts file is not DATA: name the option that reads it
                msg = str(exc)
                name = os.path.basename(texts)
                msg = msg[len(name) + 2:] if msg.startswith(name + ": ") else msg
                raise DataError(f"--texts {name}: {msg} (--texts takes a JSONL file, one text record "
                                "per line)") from None
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
    if metrics is None and not need_texts:
        ds = _announce_metrics(ds, data)
    return _attach_system_scores(ds, ctx, layout, system)


def _lower_is_better(ctx, param, value):
    """--lower-is-better: comma-separated columns, or none (no column) -> the API's tuple
    (``()``: nothing is negated, not even the text metrics the direction rule knows)."""
    return () if value.strip().lower() == "none" else tuple(_split(value) or ())


def _contexts_with(data, context, context_cols):
    """--contexts as a list, with the --context column added for a data file: ``--context domain``
    names the column to compare across, so it need not be declared twice (``--contexts domain``);
    system and input are always contexts, and a bundled dataset declares its own."""
    cols = _split(context_cols) or []
    if (context is None or context in ("system", "input") or context in cols
            or not os.path.isfile(str(data))):
        return cols or None
    return [*cols, context]


#: Click parameter names of the layout options (see :func:`_layout_options`); their values
#: reach :func:`_load` through the click context, so subcommands need no extra arguments.
_LAYOUT_PARAMS = ("sel_systems", "sel_exclude", "sel_where", "rater_cols", "text_cols", "layout_rater",
                  "layout_run", "scale_bounds", "missing_values")

#: Text columns --text-cols can name, as the text metrics read them.
_TEXT_KINDS = ("hypothesis", "reference", "source")


def _layout_options(texts=False, rater_col=False, run_col=False, bounds=True):
    """Decorator adding the shared data-layout options to a subcommand: --systems,
    --exclude-systems, --where, --raters (and --text-cols with ``texts=True``; --rater
    and --run for subcommands that lack them).  Their values are stashed in ``ctx.meta``
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
        click.option("--raters", "--rater-cols", "rater_cols", cls=ApiOption, aliases=("--rater-cols",), multiple=True, metavar="HUMAN=COL,COL|PATTERN",
                     help="Raters in columns: HUMAN=c_r1,c_r2,c_r3 or a pattern HUMAN='coherence_r*' "
                          "makes HUMAN a human column with one rater per column (the rater labels are "
                          "the column names); HUMAN=r1:c_r1,r2:c_r2 names the raters, so that several "
                          "human columns share them (validity); repeatable."),
        click.option("--missing-values", "missing_values", multiple=True, metavar="COL=V[,V]",
                     help="Codes that mean 'no score' in a column, made missing, e.g. judge=-1,0; "
                          "repeatable."),
    ]
    if bounds:
        opts.insert(4, click.option("--bounds", "--scale-bounds", "scale_bounds", cls=ApiOption, aliases=("--scale-bounds",), multiple=True, metavar="[COL=]LOW:HIGH",
                     help=BOUNDS_HELP))
    if rater_col:
        opts.append(click.option("--rater", "--rater-col", "layout_rater", cls=ApiOption, aliases=("--rater-col",), default=None,
                                 help="Rater column (long files with several raters per cell: human "
                                      "scores are averaged over them)."))
    if run_col:
        opts.append(click.option("--run", "--run-col", "layout_run", cls=ApiOption, aliases=("--run-col",), default=None,
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


#: How each KEY=VALUE option is written, for its one-line error (the --where wording about
#: expressions does not fit the others).
_PAIR_SYNTAX = {
    "--raters": "expected HUMAN=COL,COL[,...] or HUMAN='PATTERN*', e.g. coherence=coh_r1,coh_r2 or "
                "coherence='coh_r*'",
    "--missing-values": "expected COL=CODE[,CODE], e.g. judge=-1,0",
}


def _pairs(values, flag, *, several=True):
    """``("a=x,y", "b=z")`` -> ``{"a": ["x", "y"], "b": ["z"]}``; a one-line error naming ``flag``."""
    out = {}
    for item in values:
        key, sep, rest = item.partition("=")
        key = key.strip()
        vals = [v.strip() for v in rest.split(",")] if several else [rest.strip()]
        if not sep or not key or not all(vals) or any(op in item for op in ("==", "!=", "<", ">")):
            raise ParameterError(f"{flag} {item!r}: " + _PAIR_SYNTAX.get(
                flag, "expected COLUMN=VALUE[,VALUE], plain equality (no expression such as dataset == 'x'; "
                      "write dataset=x)"))
        if key in out:
            raise ParameterError(f"{flag}: {key!r} is given twice")
        out[key] = vals
    return out


def _layout_values(ctx):
    """The layout options of the running command, parsed: systems, exclude, where, rater_cols, text_cols."""
    raw = (ctx.meta.get("metaeval.layout") if ctx is not None else None) or {}
    where = _pairs(raw.get("sel_where") or (), "--where")
    raters = {}
    for key, vals in _pairs(raw.get("rater_cols") or (), "--raters").items():
        if len(vals) == 1 and set("*?[") & set(vals[0]):
            raters[key] = vals[0]  # a pattern, expanded by the reader
        elif len(vals) < 2:
            raise ParameterError(f"--raters {key}={vals[0]}: give two or more rater columns or a "
                                 "pattern such as 'coherence_r*'")
        elif any(":" in v for v in vals):
            # LABEL:COLUMN items name the raters, so that several human columns share their raters
            # (validity's traits x methods; Dataset.from_frame(raters={human: {label: column}}))
            pairs = [v.partition(":") for v in vals]
            if not all(sep and lab.strip() and col.strip() for lab, sep, col in pairs):
                raise ParameterError(f"--raters {key}=...: give every rater as LABEL:COLUMN (e.g. "
                                     f"{key}=r1:{key}_r1,r2:{key}_r2) or none of them")
            labels = [lab.strip() for lab, _, _ in pairs]
            if len(set(labels)) < len(labels):
                raise ParameterError(f"--raters {key}=...: a rater label is given twice")
            raters[key] = {lab.strip(): col.strip() for lab, _, col in pairs}
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


SYSTEM_HELP = "System column (files; none: one unnamed system)."
INPUT_HELP = "Input column (files)."
FORMAT_HELP = "Output: table (terminal), json or csv (stdout)."
JOBS_HELP = "Worker processes, a positive integer (-1: one per core)."

BOUNDS_HELP = ("Rating scales: LOW:HIGH for every human column (e.g. 1:5) or COL=LOW:HIGH for one "
               "column (e.g. judge=1:5); comma-separated or repeated. Values outside are an error "
               "(undeclared scales are checked for failure codes).")


def parse_bounds(values):
    """--bounds as ``Dataset(bounds=)`` takes it: ``LOW:HIGH`` alone -> (low, high), the scale of
    every human column; ``COL=LOW:HIGH`` (comma-separated or repeated) -> {col: (low, high)}.
    Empty -> None; a one-line error naming --bounds otherwise."""
    items = [t.strip() for v in values for t in v.split(",") if t.strip()]

    def pair(text, item):
        lo, sep, hi = text.partition(":")
        try:
            if not sep:
                raise ValueError
            return float(lo), float(hi)
        except ValueError:
            raise ParameterError(f"--bounds {item!r}: write LOW:HIGH for every human column (e.g. 1:5) "
                                 "or COL=LOW:HIGH for one column (e.g. judge=1:5)") from None

    if not items:
        return None
    if len(items) == 1 and "=" not in items[0]:
        return pair(items[0], items[0])
    out = {}
    for item in items:
        key, sep, rest = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--bounds {item!r}: with several scales write COL=LOW:HIGH for each "
                                 "(e.g. judge=1:5,coh=1:5), or one LOW:HIGH for every human column")
        if key.strip() in out:
            raise ParameterError(f"--bounds: {key.strip()!r} is given twice")
        out[key.strip()] = pair(rest.strip(), item)
    return out


def _scale_values(ctx):
    """--bounds / --missing-values as the ``bounds`` / ``missing_values`` keywords of the reader."""
    raw = (ctx.meta.get("metaeval.layout") if ctx is not None else None) or {}
    out = {}
    bounds = parse_bounds(raw.get("scale_bounds") or ())
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
    """--rater/--run added by :func:`_layout_options` (None where the command has its own)."""
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
    in columns (--raters) and texts from columns (--text-cols), then built as a Dataset."""
    from pathlib import Path

    import pandas as pd

    from ..data import READERS, Dataset, infer_format, select_rows

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
    from ..data import column_notes, human_dimensions

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


#: --rater/--run when :func:`_layout_options` adds them (subcommands without their own), and
#: simulate's own --bounds (it sets the scales of --from-data, passed to the reader as well).
_LAYOUT_AXES = {"rater": "layout_rater", "run": "layout_run", "bounds": "bounds"}


def _long_option(p):
    """The first long spelling (``--x``) of a click parameter; None for arguments and
    parameters without one."""
    longs = [o for o in getattr(p, "opts", []) if o.startswith("--")] if isinstance(p, click.Option) else []
    return longs[0] if longs else None


def _option_flags(ctx):
    """``{"rater": "--rater", ...}`` for the running command: data-layer messages name
    these flags instead of the Python keywords (None: the command has no such option)."""
    params = {p.name: p for p in (ctx.command.params if ctx is not None else [])}
    return {key: _long_option(params.get(name) or params.get(_LAYOUT_AXES.get(key)))
            for key, name in _API_PARAMS.items()}


def _read_texts(path, system, input_):
    """The --texts JSONL as a frame, read like a data file (named errors, exact values);
    system and input labels as text."""
    from pathlib import Path

    from ..data import read_jsonl

    frame = read_jsonl(Path(path), [])
    for c in (system, input_):
        if c in frame.columns:
            frame[c] = [v if v is None or isinstance(v, str) else str(v) for v in frame[c]]
    return frame

_data_options = [
    click.argument("data"),
    click.option("--human", required=True, help="Human score column."),
    click.option("--metrics", default=None,
                 help="Comma-separated metric columns (default: all; none: no metric column)."),
    click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP),
    click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP),
    click.option("--rater", "--rater-col", "rater", cls=ApiOption, aliases=("--rater-col",), default=None, help="Rater column for long files with several raters."),
]

def _with(options):
    def deco(f):
        for o in reversed(options):
            f = o(f)
        return f

    return deco

