"""System-level scores that are not means of cells.

BLEU, chrF and TER at system level are corpus statistics: the n-gram
matches, lengths or edits of all a system's segments are summed before one
score is computed, so a system's corpus BLEU is not the mean of its sentence
BLEUs.  WMT ships these numbers in ``.sys.score`` files (mt-metrics-eval
layout), and human system scores (e.g. WMT's z-normalised DA) are not always
the means of the segment scores either.  A :class:`~metaeval.data.Dataset`
can carry such *given* system scores per column (``system_scores=``); at the
``system`` level the analyses then correlate them instead of the means of
the cells (``system_scores="given"``, the default when present) or keep the
means (``system_scores="mean"``), and say which in the signature
(``sys:given:...`` / ``sys:mean``).

This module validates a ``system_scores`` table against a dataset's labels
(:func:`check_system_scores`) and decides, for an analysis, which columns use
their given scores (:func:`resolve_system_scores`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from metaeval import _choices
from metaeval._stacklevel import user_stacklevel
from metaeval.errors import DataError, ParameterError, SystemScoresWarning

from ._validate import fmt_items, labels_to_str

#: Values of the analyses' ``system_scores`` option (``None``: given when present).
SYSTEM_SCORE_MODES = _choices.SYSTEM_SCORE_MODES


def _dups(keys: list) -> list:
    return sorted(set(pd.Index(keys)[pd.Index(keys).duplicated()]))


def _series_from(value: Any, column: str, systems: tuple[str, ...]) -> pd.Series:
    """One column's given scores as a Series indexed by system label."""
    if isinstance(value, pd.Series):
        return value
    if isinstance(value, Mapping):
        return pd.Series(dict(value), dtype=object)
    try:
        array = np.asarray(value, dtype=object)
    except Exception:  # noqa: BLE001 - reported below
        array = None
    if array is None or array.ndim != 1:
        raise DataError(
            f"system_scores[{column!r}] must be a Series or mapping indexed by system, or a "
            f"1-D array of {len(systems)} values in the dataset's system order"
        )
    if len(array) != len(systems):
        raise DataError(
            f"system_scores[{column!r}] has {len(array)} values but the dataset has "
            f"{len(systems)} systems; give a Series indexed by system to cover some of them"
        )
    return pd.Series(list(array), index=list(systems), dtype=object)


def _as_mapping(value: Any, columns: Sequence[str]) -> dict[str, Any]:
    """``system_scores`` in any accepted form as {column: values}."""
    if isinstance(value, pd.DataFrame):
        df = value
        long_cols = {"system", "metric", "score"}
        if long_cols <= set(map(str, df.columns)) and "metric" not in columns and "score" not in columns:
            # the long form of metaeval.textmetrics.corpus_scores: system, metric, score
            out: dict[str, Any] = {}
            for name, part in df.groupby("metric", sort=False):
                keys = list(labels_to_str(list(part["system"]), what="system_scores column 'system'"))
                dup = _dups(keys)
                if dup:
                    raise DataError(
                        f"system_scores: metric {name!r} has several rows for system(s) "
                        f"{fmt_items(dup)}; give one score per system and column"
                    )
                out[str(name)] = pd.Series(part["score"].tolist(), index=keys, dtype=object)
            return out
        if "system" in df.columns:
            df = df.set_index("system")
        keys = list(labels_to_str(list(df.index), what="system_scores index (system labels)"))
        dup = _dups(keys)
        if dup:
            raise DataError(
                f"system_scores has several rows for system(s) {fmt_items(dup)}; give one row "
                "per system (the index or a 'system' column holds the system labels)"
            )
        return {
            str(c): pd.Series(df[c].tolist(), index=keys, dtype=object) for c in df.columns
        }
    if isinstance(value, Mapping):
        return {str(k) if not isinstance(k, str) else k: v for k, v in value.items()}
    raise TypeError(
        "`system_scores` must be a DataFrame indexed by system (one column per score column), "
        "the long table of metaeval.textmetrics.corpus_scores (system, metric, score), a "
        f"mapping of column name to scores, or None; got {type(value).__name__}"
    )


def check_system_scores(
    value: Any, systems: tuple[str, ...], columns: Sequence[str]
) -> dict[str, np.ndarray]:
    """Validate given system-level scores against a dataset's labels.

    Parameters
    ----------
    value : DataFrame, mapping or None
        A table indexed by system (or with a ``system`` column) with one
        column per score column; the long table of
        :func:`metaeval.textmetrics.corpus_scores` (``system, metric,
        score``); or a mapping of column name to a Series/mapping indexed by
        system or a 1-D array of ``N`` values in system order.
    systems : tuple of str
        The dataset's system labels.
    columns : sequence of str
        The dataset's score columns.

    Returns
    -------
    dict of str to ndarray
        Column -> read-only float64 array of shape ``(N,)`` in system order;
        NaN for a system without a given score (that system is then left out
        at the ``system`` level of that column).

    Raises
    ------
    DataError
        Unknown columns or systems, duplicate systems, non-numeric or
        infinite values, or a column without any value.
    """
    if value is None:
        return {}
    mapping = _as_mapping(value, columns)
    unknown = [c for c in mapping if c not in set(columns)]
    if unknown:
        raise DataError(
            f"system_scores names column(s) {fmt_items(unknown)} that are not score columns of "
            f"the dataset; its columns are {fmt_items(list(columns), limit=40)}"
        )
    index = pd.Index(list(systems), dtype=object)
    out: dict[str, np.ndarray] = {}
    for column, raw in mapping.items():
        series = _series_from(raw, column, systems)
        keys = list(labels_to_str(list(series.index), what=f"system_scores[{column!r}] system labels"))
        dup = _dups(keys)
        if dup:
            raise DataError(f"system_scores[{column!r}] repeats system(s) {fmt_items(dup)}")
        bad_sys = [k for k in keys if k not in set(systems)]
        if bad_sys:
            raise DataError(
                f"system_scores[{column!r}] has system(s) {fmt_items(bad_sys)} that the dataset "
                f"lacks; its systems are {fmt_items(list(systems), limit=40)}"
            )
        vals = np.full(len(systems), np.nan)
        pos = index.get_indexer(keys)
        for p, k, v in zip(pos, keys, series.tolist()):
            if v is None or v is pd.NA:
                continue
            if isinstance(v, (bool, np.bool_)):
                raise DataError(f"system_scores[{column!r}] for system {k!r} is a boolean ({v!r})")
            try:
                f = float(v)
            except (TypeError, ValueError):
                raise DataError(
                    f"system_scores[{column!r}] for system {k!r} is not a number: {v!r}"
                ) from None
            if np.isnan(f):  # any NaN (also numpy float32/float16 scalars): no given score
                continue
            if not np.isfinite(f):
                raise DataError(
                    f"system_scores[{column!r}] for system {k!r} is {f!r}; scores must be finite "
                    "(NaN marks a system without a given score)"
                )
            vals[p] = f
        if np.isnan(vals).all():
            raise DataError(f"system_scores[{column!r}] has no value for any system")
        vals.flags.writeable = False
        out[column] = vals
    return {c: out[c] for c in columns if c in out}


def check_mode(system_scores: Any) -> str | None:
    """Validate an analysis' ``system_scores`` option (``None``, "given" or "mean")."""
    if system_scores is None or system_scores in SYSTEM_SCORE_MODES:
        return system_scores
    raise ParameterError(
        f"system_scores={system_scores!r}; choose 'given' (the dataset's own system-level "
        "scores, e.g. corpus BLEU, where it has them), 'mean' (means of the cells) or None "
        "(given when present)"
    )


def resolve_system_scores(
    dataset: Any, columns: Sequence[str], roles: Sequence[str], mode: str | None
) -> tuple[list[np.ndarray | None], str | None]:
    """Which columns use their given system scores, and the signature tag.

    Parameters
    ----------
    dataset : Dataset
    columns : sequence of str
        The columns of one analysis unit (e.g. the metric and the human).
    roles : sequence of str
        Their roles in the tag (``"metric"``, ``"human"``, ``"a"``, ``"b"``).
    mode : {None, "given", "mean"}
        Validated by :func:`check_mode`.

    Returns
    -------
    (given, tag)
        ``given[k]`` is column k's (N,) given scores or None (means of its
        cells); ``tag`` is the signature value: None when the dataset has no
        given system scores at all (signatures as before), ``"mean"`` when
        means are used although some column has given scores, else
        ``"given:<roles>"`` naming the roles that use given scores (e.g.
        ``given:metric+human``).
    """
    if not getattr(dataset, "system_score_columns", ()):
        return [None] * len(columns), None
    if mode == "mean":
        return [None] * len(columns), "mean"
    given = [dataset.system_score(c) for c in columns]
    used = [r for r, g in zip(roles, given) if g is not None]
    return given, ("given:" + "+".join(used)) if used else "mean"


def system_level_matrices(
    dataset: Any,
    columns: Sequence[str],
    roles: Sequence[str],
    mode: str | None,
) -> tuple[list[np.ndarray], str | None]:
    """The score matrices one ``system``-level unit correlates, and its tag.

    When no column of the unit uses given scores, these are the columns'
    ``(N, M)`` cell scores unchanged (the ``system`` level then takes the
    matched means, as always: numbers and signatures as before, except for
    a ``sys:mean`` tag when the dataset has given scores elsewhere).  When
    some do, each becomes an ``(N, 1)`` matrix of system scores
    (:func:`metaeval.stats.levels.given_system_matrices`): the given ones as
    they are, the others the means over the cells where all of those others
    are present; a system is then used where every column has a value.
    """
    given, tag = resolve_system_scores(dataset, columns, roles, mode)
    arrays = [dataset.scores(c) for c in columns]
    if all(g is None for g in given):
        return arrays, tag
    from metaeval.stats.levels import given_system_matrices

    return given_system_matrices(arrays, given), tag


#: Tests and intervals that resample or permute inputs: undefined on given
#: system scores (a corpus score cannot be recomputed on resampled inputs
#: without its per-segment sufficient statistics).
INPUT_RESAMPLING = ("boot-inputs", "boot-both", "perm-inputs", "perm-both-rowcol")


def input_resampling_message(columns: Sequence[str], what: str) -> str:
    return (
        f"{what} resamples inputs, but at level 'system' the given system-level scores of "
        f"{fmt_items(list(columns))} are corpus-level numbers (e.g. corpus BLEU), not means of "
        "cells: recomputing them on resampled inputs needs their per-segment sufficient "
        "statistics, which the dataset does not carry; resample systems instead "
        "(ci='boot-systems'; test='perm-both', 'perm-systems' or 'boot-systems'), or use the "
        "means of the cells (system_scores='mean')"
    )


def add_sys_key(signature: str, tag: str | None) -> str:
    """Append ``sys:<tag>`` before the version key of a signature (no-op for None)."""
    if tag is None:
        return signature
    head, sep, version = signature.rpartition("|metaeval:")
    if not sep:
        return f"{signature}|sys:{tag}"
    return f"{head}|sys:{tag}|metaeval:{version}"


def note_ignored(dataset: Any, what: str) -> None:
    """An analysis that does not take given system scores says so when the dataset
    has some: its system level uses the means of the cells."""
    cols = tuple(getattr(dataset, "system_score_columns", ()) or ())
    if not cols:
        return
    warnings.warn(
        f"{what} uses the means of the cells at the system level; the dataset's given "
        f"system-level scores of {fmt_items(cols)} are not used by it (correlate, compare, "
        "compare_all and correlation_design use them)",
        SystemScoresWarning,
        stacklevel=user_stacklevel(),
    )


def note_given(dataset: Any, columns: Sequence[str], mode: str | None) -> None:
    """The default's note: warn once when given system scores that differ from
    the means of the cells are used because ``system_scores`` was not chosen."""
    if mode is not None or not getattr(dataset, "system_score_columns", ()):
        return
    differ = []
    for c in dict.fromkeys(columns):
        g = dataset.system_score(c)
        if g is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(np.asarray(dataset.scores(c), float), axis=1)
        ok = np.isfinite(g) & np.isfinite(mean)
        if not np.allclose(g[ok], mean[ok], rtol=1e-6, atol=1e-9) or (np.isfinite(g) != np.isfinite(mean)).any():
            differ.append(c)
    if differ:
        warnings.warn(
            f"system level uses the given system-level scores of {fmt_items(differ)} (e.g. "
            "corpus BLEU from .sys.score files), which are not the means of their cells; "
            "pass system_scores='mean' for the means, or system_scores='given' to silence "
            "this note (recorded in the signature as sys:given:... / sys:mean)",
            SystemScoresWarning,
            stacklevel=user_stacklevel(),
        )


# --------------------------------------------------------------------------
# a system-score table from a file (the command line's --system-scores)


def _record_lines(path: Any, fmt: str, n_rows: int) -> list[str]:
    """Where each data row of a file starts, as ``"line k"`` (``"row k"`` for Parquet).

    CSV/TSV rows are counted as the reader counts them (blank lines skipped,
    quoted line breaks inside one record), after the header line.
    """
    import csv
    import io

    from ._io import decode, read_bytes

    if fmt == "parquet":
        return [f"row {k + 1}" for k in range(n_rows)]
    text = decode(path, read_bytes(path)).replace("\r\n", "\n")
    if fmt == "jsonl":
        starts = [k for k, line in enumerate(text.split("\n"), start=1) if line.strip()]
    else:
        reader = csv.reader(io.StringIO(text), delimiter="\t" if fmt == "tsv" else ",")
        starts, line = [], 1
        for record in reader:
            if record:
                starts.append(line)
            line = reader.line_num + 1
        starts = starts[1:]  # the header
    if len(starts) != n_rows:  # cannot happen for a file the reader accepted; fall back to rows
        return [f"row {k + 1}" for k in range(n_rows)]
    return [f"line {k}" for k in starts]


def _number(value: Any, text: bool) -> float | None:
    """A cell of a score column as a float, None when missing; ValueError when not a number.
    ``text``: the cell was read from a delimited text file (a column with one non-number
    in it holds every cell as its text)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, str) and not text):
        raise ValueError
    f = float(value.strip()) if isinstance(value, str) else float(value)
    if not np.isfinite(f):
        raise ValueError
    return f


def read_system_scores(
    path: Any,
    systems: Sequence[str],
    columns: Sequence[str],
    *,
    system: str = "system",
    ignore: Sequence[str] = (),
    option: str = "--system-scores",
) -> dict[str, dict[str, float]]:
    """Read given system-level scores from a CSV, TSV, JSONL or Parquet file.

    Two forms are accepted: a wide table with a ``system`` column (or the
    column named by ``system``) and one column per score column of the
    dataset, or the long table that :func:`metaeval.textmetrics.corpus_scores`
    returns (``system, metric, score``; further columns such as
    ``n_segments`` and ``signature`` are ignored).  The file is read by the
    data layer's checked readers (encoding, field counts, header), and every
    error names the file and the line (the row, for Parquet) and ``option``.

    Parameters
    ----------
    path : path-like
    systems, columns : sequence of str
        The dataset's system labels and score columns.
    system : str
        The system column of the table.
    ignore : container of str
        System labels that the caller dropped from the dataset on purpose
        (e.g. ``--exclude-systems``; anything supporting ``in``): their rows
        are skipped, not errors.
    option : str
        The option named in the messages.

    Returns
    -------
    dict
        ``{column: {system: score}}`` for :meth:`metaeval.Dataset.with_system_scores`;
        an empty cell is a system without a given score (left out).

    Raises
    ------
    DataError
        Unknown system or column, a system repeated, a value that is not a
        finite number, or a table with neither form.
    """
    from pathlib import Path

    from ._io import FORMATS, infer_format

    path = Path(path)
    name = path.name
    fmt, _ = infer_format(path)
    frame = FORMATS[fmt].reader(path, [system])
    where = _record_lines(path, fmt, len(frame))
    cols = [str(c) for c in frame.columns]
    known_sys, known_cols, skip = set(systems), list(columns), ignore
    if system not in cols:
        raise DataError(
            f"{option} {name}: no column {system!r} with the system labels; its columns are "
            f"{fmt_items(cols, limit=20)} (a table indexed by system: a '{system}' column and one "
            "column per score column, or the long system, metric, score table of corpus_scores)"
        )
    long_form = {"metric", "score"} <= set(cols) and "metric" not in known_cols and "score" not in known_cols
    if long_form:
        units = [(r, str(m), "score") for r, m in enumerate(frame["metric"].tolist())]
        bad = [(r, m) for r, m, _ in units if m not in known_cols]
        if bad:
            r, m = bad[0]
            raise DataError(
                f"{option} {name}, {where[r]}: metric {m!r} is not a score column of the dataset; "
                f"its columns are {fmt_items(known_cols, limit=40)}"
            )
    else:
        extra = [c for c in cols if c != system and c not in known_cols]
        if extra:
            raise DataError(
                f"{option} {name}: column(s) {fmt_items(extra)} are not score columns of the dataset "
                f"(its columns are {fmt_items(known_cols, limit=40)}); a wide table has a '{system}' "
                "column and one column per score column"
            )
        units = [(r, c, c) for r in range(len(frame)) for c in cols if c != system]
    labels = frame[system].tolist()
    for r, lab in enumerate(labels):
        if lab is None or (isinstance(lab, float) and np.isnan(lab)) or str(lab) == "":
            raise DataError(f"{option} {name}, {where[r]}: the system label is empty")
    labels = [str(v) for v in labels]
    out: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    for r, column, field in units:
        lab = labels[r]
        if lab in skip and lab not in known_sys:
            continue
        if lab not in known_sys:
            raise DataError(
                f"{option} {name}, {where[r]}: system {lab!r} is not a system of the dataset; its "
                f"systems are {fmt_items(list(systems), limit=40)}"
            )
        if (lab, column) in seen:
            what = f"system {lab!r} and metric {column!r}" if long_form else f"system {lab!r}"
            raise DataError(
                f"{option} {name}, {where[r]}: {what} repeats {where[seen[lab, column]]}; give one "
                "score per system and column"
            )
        seen[lab, column] = r
        value = frame[field].iloc[r]
        try:
            number = _number(value, fmt in ("csv", "tsv"))
        except (TypeError, ValueError):
            shown = value.item() if isinstance(value, np.generic) else value  # inf, not np.float64(inf)
            raise DataError(
                f"{option} {name}, {where[r]}: the score of system {lab!r} in {column!r} is not a "
                f"finite number: {shown!r} (leave the cell empty for a system without a score)"
            ) from None
        if number is not None:
            out.setdefault(column, {})[lab] = number
    if not out:
        raise DataError(f"{option} {name}: no score for any system of the dataset")
    return out


__all__ = [
    "SYSTEM_SCORE_MODES",
    "check_system_scores",
    "check_mode",
    "resolve_system_scores",
    "note_given",
    "system_level_matrices",
    "INPUT_RESAMPLING",
    "input_resampling_message",
    "add_sys_key",
    "read_system_scores",
]
