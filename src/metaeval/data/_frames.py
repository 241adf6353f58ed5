"""Turn long and wide tables into :class:`~metaeval.data.Dataset` arrays.

Both layouts are parsed into a :class:`_Table`: label orders (systems,
inputs, raters or runs) and, per score column, validated float values with
the integer coordinates of their cells.  One assembly step then builds the
``(R, N, M)`` arrays, so long and wide tables obey exactly the same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from metaeval.errors import DataError, ParameterError

from ._validate import (
    MAX_SHOWN,
    as_name_list,
    check_duplicate_keys,
    check_unknown,
    fmt_items,
    fmt_key,
    in_api,
    labels_to_str,
    looks_numeric,
    option,
    options_text,
    to_float,
    unique_in_order,
)

#: Allowed values of ``form``.
FORMS = ("long", "wide")

#: In a stacked wide table, the column naming each row's score column.
WIDE_SCORE_COLUMN = "score"


@dataclass(frozen=True)
class _Table:
    """A parsed table: label orders plus a way to fetch each score column."""

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    axis_labels: tuple[str, ...]  # raters or runs; () when there is no axis
    available: tuple[Any, ...]  # score column names as the user refers to them
    key_columns: tuple[Any, ...]  # label columns (cannot be score columns)
    fetch: Callable[[Any], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]]
    is_default_metric: Callable[[Any], bool]


def _check_frame_columns(frame: pd.DataFrame, what: str) -> list:
    columns = list(frame.columns)
    if isinstance(frame.columns, pd.MultiIndex):
        raise DataError(f"{what} has MultiIndex columns; flatten them to single names first")
    seen: set = set()
    repeated = [c for c in columns if c in seen or seen.add(c)]
    if repeated:
        raise DataError(f"{what} has repeated column name(s) {fmt_items(repeated)}; rename them")
    return columns


def _check_option(name: str) -> str:
    """`` (check --metrics)`` under the command line; nothing in the Python API,
    where the message already says which keyword it is about."""
    if in_api():
        return ""
    flag = option(name)
    return f" (check {flag})" if flag else ""


def _given(name: Any, value: Any) -> str:
    """An option and its value as the caller spells it: ``rater='r'`` in Python,
    ``--rater-col 'r'`` on the command line."""
    flag = None if in_api() else option(str(name))
    return f"{flag} {value!r}" if flag else f"{name}={value!r}"


def _codes(labels: np.ndarray, order: tuple[str, ...]) -> np.ndarray:
    return pd.Index(order, dtype=object).get_indexer(pd.Index(labels, dtype=object))


def _long_table(df: Any, *, system: Any, input: Any, axis: Any, axis_kind: str | None) -> _Table:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`df` must be a pandas DataFrame for form='long', got {type(df).__name__}")
    columns = _check_frame_columns(df, "the frame")
    key_columns = [system, input] + ([axis] if axis is not None else [])
    if len(set(key_columns)) != len(key_columns):
        raise ParameterError(
            f"the label columns must differ: {_given('system', system)}, "
            f"{_given('input', input)}"
            + (f", {_given(axis_kind, axis)}" if axis is not None else "")
        )
    check_unknown(
        key_columns,
        columns,
        what="label column(s) (check "
        f"{options_text(['system', 'input', 'rater', 'run'], joiner=', ')})",
    )
    if len(df) == 0:
        raise DataError("empty data: the frame has no rows")
    frame = df.reset_index(drop=True)
    sys_labels = labels_to_str(frame[system], what=f"column {system!r}")
    inp_labels = labels_to_str(frame[input], what=f"column {input!r}")
    key_arrays = [sys_labels, inp_labels]
    key_names = [str(system), str(input)]
    axis_labels_arr = None
    if axis is not None:
        axis_labels_arr = labels_to_str(frame[axis], what=f"column {axis!r}")
        key_arrays.append(axis_labels_arr)
        key_names.append(str(axis))
    if axis is not None:
        hint = f"each system x input x {axis_kind} needs a single row"
    else:
        hint = (
            "aggregate first (e.g. df.groupby([...]).mean())"
            if in_api()
            else "aggregate the repeated rows first"
        )
        axis_options = options_text(["rater", "run"])
        if axis_options:
            hint += (
                f" or, if the repeated rows are raters or runs, pass {axis_options} with the "
                "column that tells them apart"
            )
    check_duplicate_keys(key_arrays, key_names, hint=hint)
    systems = unique_in_order(sys_labels)
    inputs = unique_in_order(inp_labels)
    axis_labels = unique_in_order(axis_labels_arr) if axis_labels_arr is not None else ()
    s_codes = _codes(sys_labels, systems)
    i_codes = _codes(inp_labels, inputs)
    a_codes = _codes(axis_labels_arr, axis_labels) if axis_labels_arr is not None else None

    def fetch(column: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        values = to_float(
            frame[column], column=str(column), key_arrays=key_arrays, key_names=key_names
        )
        return values, s_codes, i_codes, a_codes

    def is_default_metric(column: Any) -> bool:
        return looks_numeric(frame[column])

    return _Table(
        systems=systems,
        inputs=inputs,
        axis_labels=axis_labels,
        available=tuple(c for c in columns if c not in set(key_columns)),
        key_columns=tuple(key_columns),
        fetch=fetch,
        is_default_metric=is_default_metric,
    )


def _stack_matrices(frames: Mapping[Any, Any], *, system: Any) -> pd.DataFrame:
    """Stack a mapping of score name -> systems x inputs matrix into one table."""
    parts = []
    for score_name, matrix in frames.items():
        if not isinstance(matrix, pd.DataFrame):
            raise TypeError(
                f"form='wide' with a mapping needs a DataFrame per score; {score_name!r} is "
                f"{type(matrix).__name__}"
            )
        if isinstance(matrix.index, pd.MultiIndex):
            raise DataError(
                f"the matrix of {score_name!r} has a MultiIndex; give one system label per row"
            )
        if WIDE_SCORE_COLUMN in matrix.columns:
            raise DataError(
                f"the matrix of {score_name!r} has a column named {WIDE_SCORE_COLUMN!r}, which "
                "the wide form reserves for score names; rename it"
            )
        part = matrix if system in matrix.columns else matrix.rename_axis(system).reset_index()
        part = part.copy()
        part.insert(0, WIDE_SCORE_COLUMN, score_name)
        parts.append(part)
    if not parts:
        raise DataError("empty data: the mapping of score matrices is empty")
    return pd.concat(parts, ignore_index=True, sort=False)


def _wide_table(df: Any, *, system: Any, axis: Any, axis_kind: str | None) -> _Table:
    if isinstance(df, Mapping):
        df = _stack_matrices(df, system=system)
    elif not isinstance(df, pd.DataFrame):
        raise TypeError(
            "`df` must be a DataFrame or a mapping of score name to DataFrame for "
            f"form='wide', got {type(df).__name__}"
        )
    columns = _check_frame_columns(df, "the wide frame")
    key_columns = [system, WIDE_SCORE_COLUMN] + ([axis] if axis is not None else [])
    if len(set(key_columns)) != len(key_columns):
        raise ParameterError(
            f"the label columns must differ: {_given('system', system)}, the score column "
            f"{WIDE_SCORE_COLUMN!r}" + (f", {_given(axis_kind, axis)}" if axis is not None else "")
        )
    check_unknown(
        key_columns,
        columns,
        what=f"label column(s) of the wide form (it needs `system`, a {WIDE_SCORE_COLUMN!r} "
        "column naming each row's score, and optionally `rater`/`run`)",
    )
    if len(df) == 0:
        raise DataError("empty data: the wide frame has no rows")
    input_columns = [c for c in columns if c not in set(key_columns)]
    if not input_columns:
        raise DataError(
            "the wide frame has no input columns: besides the label columns "
            f"{fmt_items(key_columns)} it needs one column per input"
        )
    input_labels = labels_to_str(
        pd.Series(input_columns, dtype=object), what="the input column names"
    )
    check_duplicate_keys(
        [input_labels], ["input"], hint="input column names must stay distinct as str"
    )
    frame = df.reset_index(drop=True)
    sys_labels = labels_to_str(frame[system], what=f"column {system!r}")
    score_labels = labels_to_str(frame[WIDE_SCORE_COLUMN], what=f"column {WIDE_SCORE_COLUMN!r}")
    key_arrays = [sys_labels, score_labels]
    key_names = [str(system), WIDE_SCORE_COLUMN]
    axis_labels_arr = None
    if axis is not None:
        axis_labels_arr = labels_to_str(frame[axis], what=f"column {axis!r}")
        key_arrays.append(axis_labels_arr)
        key_names.append(str(axis))
    check_duplicate_keys(
        key_arrays,
        key_names,
        hint="in the wide form each system x score"
        + (f" x {axis_kind}" if axis is not None else "")
        + " needs a single row",
    )
    systems = unique_in_order(sys_labels)
    inputs = tuple(input_labels)
    axis_labels = unique_in_order(axis_labels_arr) if axis_labels_arr is not None else ()
    n_inputs = len(input_columns)
    available = unique_in_order(score_labels)

    def fetch(column: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        rows = np.flatnonzero(score_labels == column)
        block = frame.iloc[rows]
        series = pd.concat([block[c] for c in input_columns], ignore_index=True)
        row_sys = np.tile(sys_labels[rows], n_inputs)
        row_inp = np.repeat(input_labels, len(rows))
        arrays = [row_sys, row_inp]
        names = [str(system), "input"]
        if axis_labels_arr is not None:
            arrays.append(np.tile(axis_labels_arr[rows], n_inputs))
            names.append(str(axis))
        values = to_float(series, column=str(column), key_arrays=arrays, key_names=names)
        return (
            values,
            _codes(row_sys, systems),
            np.repeat(np.arange(n_inputs), len(rows)),
            _codes(arrays[2], axis_labels) if axis_labels_arr is not None else None,
        )

    return _Table(
        systems=systems,
        inputs=inputs,
        axis_labels=axis_labels,
        available=available,
        key_columns=tuple(key_columns),
        fetch=fetch,
        is_default_metric=lambda column: True,
    )


#: Characters that make a ``raters`` entry a shell-style pattern (:mod:`fnmatch`).
_PATTERN_CHARS = frozenset("*?[")


def _expand_rater_patterns(raters: Any, available: Sequence[Any]) -> Any:
    """Replace ``raters`` entries given as one pattern (``"coherence_r*"``) by the
    matching columns, in the table's column order (:func:`fnmatch.fnmatchcase`)."""
    import fnmatch

    if not isinstance(raters, Mapping):
        return raters
    out: dict = {}
    for key, spec in raters.items():
        if isinstance(spec, str) and _PATTERN_CHARS & set(spec):
            matched = [c for c in available if fnmatch.fnmatchcase(str(c), spec)]
            if len(matched) < 2:
                flag = "`raters`" if in_api() else (option("raters") or "`raters`")
                raise DataError(
                    f"{flag} pattern {spec!r} for {key!r} matches {len(matched)} column(s) "
                    f"({fmt_items(matched)}); rater agreement needs two or more rater columns: "
                    f"fix the pattern; available columns: {fmt_items(list(available), limit=30)}"
                )
            out[key] = matched
        else:
            out[key] = spec
    return out


def _normalize_raters(raters: Any) -> dict[str, tuple[tuple[str, ...], list]]:
    """``raters`` option -> {human column: (rater labels, source columns)}."""
    if raters is None:
        return {}
    if not isinstance(raters, Mapping):
        raise TypeError(
            "`raters` must be a mapping of human column to its rater columns, got "
            f"{type(raters).__name__}"
        )
    out: dict[str, tuple[tuple[str, ...], list]] = {}
    for key, spec in raters.items():
        if not isinstance(key, str):
            raise TypeError(f"`raters` keys must be str column names, got {key!r}")
        if isinstance(spec, Mapping):
            labels = tuple(str(k) for k in spec)
            sources = list(spec.values())
        elif isinstance(spec, Sequence) and not isinstance(spec, str):
            sources = list(spec)
            labels = tuple(str(c) for c in sources)
        else:
            raise TypeError(
                f"raters[{key!r}] must be a list of columns, a {{rater: column}} mapping or a "
                f"pattern such as 'coherence_r*', got {type(spec).__name__}"
            )
        if not sources:
            raise DataError(f"raters[{key!r}] lists no columns")
        check_duplicate_keys(
            [np.array(labels, dtype=object)],
            [f"rater of {key!r}"],
            hint="rater labels must be unique",
        )
        out[key] = (labels, sources)
    return out


def _collapse(
    array: np.ndarray,
    *,
    column: str,
    role: str,
    axis_kind: str,
    systems: tuple[str, ...],
    inputs: tuple[str, ...],
) -> np.ndarray:
    """Collapse an axis on which a column must be constant; (R, N, M) -> (1, N, M)."""
    high = np.fmax.reduce(array, axis=0)
    low = np.fmin.reduce(array, axis=0)
    differs = ~np.isnan(high) & (high != low)
    if differs.any():
        cells = np.argwhere(differs)
        shown = ", ".join(
            f"{fmt_key(('system', 'input'), (systems[s], inputs[i]))}: "
            f"{float(low[s, i])!r} vs {float(high[s, i])!r}"
            for s, i in cells[:MAX_SHOWN]
        )
        rest = len(cells) - MAX_SHOWN
        what = (
            "a metric scores the output, not the rater (a column that varies by rater is a human "
            "dimension: declare it with human=)"
            if axis_kind == "rater"
            else "human scores do not change between metric runs"
        )
        raise DataError(
            f"{role} {column!r} has different values across the {axis_kind}s of "
            f"{len(cells)} cell(s), at {shown}{f' and {rest} more' if rest > 0 else ''}: "
            f"{what}; give one value per system x input (repeat it on every {axis_kind} "
            "row, or fill one row and leave the others missing)"
        )
    return high[np.newaxis]


def dataset_from_frame(
    cls: type,
    df: Any,
    *,
    system: Any,
    input: Any,
    human: Any,
    metrics: Any,
    rater: Any,
    run: Any,
    raters: Any,
    form: str,
    name: str | None,
    texts: pd.DataFrame | None,
    provenance: str | None,
    contexts: Any = None,
    system_scores: Any = None,
    bounds: Any = None,
    missing_values: Any = None,
) -> Any:
    """Implementation of :meth:`Dataset.from_frame` (see its docstring)."""
    if form not in FORMS:
        raise ParameterError(f"`form` must be one of {fmt_items(FORMS)}, got {form!r}")
    if rater is not None and run is not None:
        both = "`rater` or `run`" if in_api() else options_text(["rater", "run"])
        raise ParameterError(
            f"give {both}, not both (got rater={rater!r}, run={run!r}): a dataset "
            "has a rater axis on human columns or a run axis on metrics; average the runs "
            "(or the raters) first"
        )
    if raters is not None and not isinstance(raters, Mapping):
        _normalize_raters(raters)  # raises the TypeError
    rater_given = bool(raters)
    if rater is not None and rater_given:
        raise ParameterError(
            "give `rater` (raters in rows) or `raters` (raters in columns), not both"
        )
    human_list = as_name_list(human, parameter="human")
    metrics_list = None if metrics is None else as_name_list(metrics, parameter="metrics")
    if human is None and not rater_given:
        raise ParameterError(
            "`human` is required: name the human score column(s), e.g. human='overall' or "
            "human=['coherence', 'fluency'] (or give `raters`)"
            if in_api()
            else f"{option('human') or 'the human column'} is required: name the human score "
            "column(s)"
        )
    axis = rater if rater is not None else run
    axis_kind = "rater" if rater is not None else ("run" if run is not None else None)

    if form == "long":
        table = _long_table(df, system=system, input=input, axis=axis, axis_kind=axis_kind)
    else:
        table = _wide_table(df, system=system, axis=axis, axis_kind=axis_kind)
    rater_map = _normalize_raters(_expand_rater_patterns(raters, table.available))

    context_cols: list = []
    if isinstance(contexts, (str, Sequence)) and not isinstance(contexts, pd.DataFrame):
        context_cols = as_name_list(contexts, parameter="contexts")
        if form != "long":
            raise ParameterError(
                "`contexts` as column names needs the long form; for the wide form pass a "
                "contexts table keyed by 'system' and/or 'input'"
            )
        check_unknown(
            context_cols, table.available, what="context column(s)", fix=_check_option("contexts")
        )
        contexts = _cells_from_columns(df, system, input, context_cols, what="context")
    text_cols: list = []
    if isinstance(texts, (str, Sequence)) and not isinstance(texts, pd.DataFrame):
        text_cols = as_name_list(texts, parameter="texts")
        if form != "long":
            raise ParameterError(
                "`texts` as column names needs the long form; for the wide form pass a texts "
                "table keyed by 'system' and/or 'input'"
            )
        check_unknown(
            text_cols, table.available, what="text column(s)", fix=_check_option("texts")
        )
        texts = _cells_from_columns(df, system, input, text_cols, what="text")
    context_cols = context_cols + text_cols

    # ---- resolve column roles
    requested = (
        human_list + (metrics_list or []) + [c for _, srcs in rater_map.values() for c in srcs]
    )
    as_keys = [c for c in requested if c in set(table.key_columns)]
    if as_keys:
        raise DataError(
            f"column(s) {fmt_items(as_keys)} are label columns (system/input/rater/run) and "
            "cannot also be score columns"
        )
    sources = [c for _, srcs in rater_map.values() for c in srcs]
    check_unknown(
        sources, table.available, what=f"column(s) in {'`raters`' if in_api() else _flag('raters')}"
    )
    clashing = [k for k in rater_map if k in set(table.available)]
    if clashing:
        raise DataError(
            f"`raters` key(s) {fmt_items(clashing)} are already columns of the table; choose "
            "new names for the rater-axis columns"
        )
    check_unknown(
        [h for h in human_list if h not in rater_map],
        table.available,
        what="human column(s)",
        fix=_check_option("human"),
    )
    if metrics_list is not None:
        check_unknown(
            metrics_list, table.available, what="metric column(s)", fix=_check_option("metrics")
        )
        both = [c for c in metrics_list if c in set(human_list) or c in rater_map]
        if both:
            raise DataError(
                f"column(s) {fmt_items(both)} are listed both as human and as metric; "
                "a column is one or the other"
            )
        source_metrics = [c for c in metrics_list if c in set(sources)]
        if source_metrics:
            raise DataError(
                f"column(s) {fmt_items(source_metrics)} are rater columns in `raters` (human "
                "scores) and also listed as metrics; a column is one or the other"
            )
    else:
        excluded = set(human_list) | set(sources) | set(context_cols)
        metrics_list = [
            c for c in table.available if c not in excluded and table.is_default_metric(c)
        ]
    human_final = human_list + [k for k in rater_map if k not in set(human_list)]
    all_names = [*map(str, human_final), *map(str, metrics_list)]
    check_duplicate_keys(
        [np.array(all_names, dtype=object)],
        ["score column"],
        hint="score column names must stay distinct when converted to str",
    )

    used_as_context = list(
        dict.fromkeys(c for c in requested + metrics_list if c in set(context_cols))
    )
    if used_as_context:
        raise DataError(
            f"column(s) {fmt_items(used_as_context)} are listed as contexts or texts and as "
            "scores; a column is one or the other"
        )

    # ---- assemble (R, N, M) arrays
    n, m = len(table.systems), len(table.inputs)
    r_axis = max(len(table.axis_labels), 1)

    def build(column: Any, *, role: str, keep_axis: bool) -> np.ndarray:
        values, s_codes, i_codes, a_codes = table.fetch(column)
        array = np.full((r_axis, n, m), np.nan)
        array[a_codes if a_codes is not None else 0, s_codes, i_codes] = values
        if a_codes is None or keep_axis:
            return array
        return _collapse(
            array,
            column=str(column),
            role=role,
            axis_kind=axis_kind or "",
            systems=table.systems,
            inputs=table.inputs,
        )

    ratings: dict[str, np.ndarray] = {}
    rater_labels: dict[str, tuple[str, ...]] = {}
    for column in human_final:
        if column in rater_map:
            labels, srcs = rater_map[column]
            ratings[column] = np.concatenate(
                [build(src, role="human column", keep_axis=False) for src in srcs], axis=0
            )
            rater_labels[column] = labels
        else:
            keep = axis_kind == "rater"
            ratings[str(column)] = build(column, role="human column", keep_axis=keep)
            if keep:
                rater_labels[str(column)] = table.axis_labels
    for column in metrics_list:
        keep = axis_kind == "run"
        ratings[str(column)] = build(column, role="metric", keep_axis=keep)
        if keep:
            rater_labels[str(column)] = table.axis_labels

    texts = _rename_keys(texts, system, input)
    contexts = _rename_keys(contexts, system, input)

    return cls(
        ratings,
        human=[str(h) for h in human_final],
        systems=table.systems,
        inputs=table.inputs,
        rater_labels=rater_labels,
        name=name,
        texts=texts,
        provenance=provenance,
        contexts=contexts,
        system_scores=system_scores,
        bounds=bounds,
        missing_values=missing_values,
    )


def _rename_keys(table: Any, system: Any, input: Any) -> Any:
    """Rename a keyed table's ``system``/``input`` columns to the dataset's names."""
    if table is None or not isinstance(table, pd.DataFrame):
        return table
    renames = {
        old: new
        for old, new in ((system, "system"), (input, "input"))
        if old != new and old in table.columns and new not in table.columns
    }
    return table.rename(columns=renames) if renames else table


def _cells_from_columns(
    df: Any, system: Any, input: Any, columns: list, *, what: str
) -> pd.DataFrame:
    """One row per system x input with the given (context or text) columns of a long table."""
    frame = pd.DataFrame(
        {
            "system": labels_to_str(df[system], what=f"column {system!r}"),
            "input": labels_to_str(df[input], what=f"column {input!r}"),
        }
    )
    for c in columns:
        # list cells (several references) become tuples, so they can be compared
        frame[str(c)] = [tuple(v) if isinstance(v, list) else v for v in df[c].to_numpy(dtype=object)]
    grouped = frame.groupby(["system", "input"], sort=False)
    for c in columns:
        counts = grouped[str(c)].nunique(dropna=True)
        bad = counts[counts > 1]
        if len(bad):
            cells = [f"(system {s!r}, input {i!r})" for s, i in bad.index[:MAX_SHOWN]]
            rest = len(bad) - MAX_SHOWN
            raise DataError(
                f"{what} column {c!r} has several values in {len(bad)} system x input cell(s): "
                f"{', '.join(cells)}{f' and {rest} more' if rest > 0 else ''}; a {what} belongs "
                "to a whole cell (give one value per system x input)"
            )
    return grouped.first().reset_index()


def _flag(name: str) -> str:
    """How a message names option ``name`` (```name=``` in Python, its flag on the command line)."""
    return option(name) or f"`{name}=`"


def _as_labels(series: pd.Series) -> np.ndarray:
    """A column's values as ``str`` labels (missing stays None), as labels are read."""
    return np.array(
        [None if pd.isna(v) else (v if isinstance(v, str) else str(v)) for v in series.tolist()],
        dtype=object,
    )


def _matches(series: pd.Series, values: Sequence[str]) -> np.ndarray:
    """Rows of ``series`` equal to one of ``values`` (text, or numbers for a numeric column)."""
    labels = _as_labels(series)
    hit = np.isin(labels, np.array(list(values), dtype=object))
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        given = pd.Series(list(values), dtype=object)
        numbers = pd.to_numeric(given, errors="coerce").to_numpy(float)
        numbers = numbers[np.isfinite(numbers)]
        if numbers.size:
            hit |= np.isin(series.to_numpy(dtype=float, na_value=np.nan), numbers)
    return hit


def select_rows(
    frame: pd.DataFrame,
    *,
    system: Any = "system",
    systems: Sequence[str] | None = None,
    exclude_systems: Sequence[str] | None = None,
    where: Mapping[Any, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Keep the rows of a long table that pass simple equality filters.

    No user text is evaluated (no :meth:`pandas.DataFrame.query`): each
    filter is a column and a set of allowed values, compared as text (and as
    numbers when the column is numeric, so ``year=2020`` matches ``2020.0``).

    Parameters
    ----------
    frame : DataFrame
        The long table, before it becomes a :class:`~metaeval.data.Dataset`.
    system : str
        The system column.
    systems : sequence of str, optional
        Keep only these systems (every one must occur).
    exclude_systems : sequence of str, optional
        Drop these systems (for example the human reference ``Human``);
        every one must occur, so a typo is not silently ignored.
    where : mapping of column to sequence of str, optional
        Keep rows whose value in the column is one of the given values
        (several columns: all must match).

    Returns
    -------
    DataFrame
        The kept rows, in their order.

    Raises
    ------
    DataError
        An unknown column or system (the message lists what exists), or no
        row left.

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.data._frames import select_rows
    >>> df = pd.DataFrame(
    ...     {"system": ["A", "Human", "A"], "dataset": ["x", "x", "y"], "q": [1, 2, 3]}
    ... )
    >>> select_rows(df, exclude_systems=["Human"], where={"dataset": ["x"]})
      system dataset  q
    0      A       x  1
    """
    keep = np.ones(len(frame), dtype=bool)
    if systems or exclude_systems:
        if system not in frame.columns:
            raise DataError(
                f"no system column {system!r} to select systems by (check "
                f"{_flag('system')}); available columns: {fmt_items(list(frame.columns), limit=30)}"
            )
        labels = _as_labels(frame[system])
        present = unique_in_order(labels[[v is not None for v in labels]])
        for name, chosen in (("systems", systems), ("exclude_systems", exclude_systems)):
            unknown = [s for s in (chosen or []) if s not in set(present)]
            if unknown:
                raise DataError(
                    f"{_flag(name)}: unknown system(s) {fmt_items(unknown, limit=20)}; the "
                    f"systems of column {system!r} are {fmt_items(list(present), limit=40)}"
                )
        if systems:
            keep &= np.isin(labels, np.array(list(systems), dtype=object))
        if exclude_systems:
            keep &= ~np.isin(labels, np.array(list(exclude_systems), dtype=object))
    for column, values in (where or {}).items():
        if column not in frame.columns:
            raise DataError(
                f"{_flag('where')}: unknown column {column!r}; available columns: "
                f"{fmt_items(list(frame.columns), limit=40)}"
            )
        values = list(values)
        if not values:
            raise DataError(f"{_flag('where')}: no value given for column {column!r}")
        hit = _matches(frame[column], values)
        if not hit.any():
            labels = _as_labels(frame[column])
            seen = unique_in_order(labels[[v is not None for v in labels]])
            raise DataError(
                f"{_flag('where')}: no row has {column!r} in {fmt_items(values)}; its values "
                f"are {fmt_items(list(seen), limit=20)}"
            )
        keep &= hit
    if not keep.any():
        raise DataError(
            "no row is left after the row filters "
            f"({options_text(['systems', 'exclude_systems', 'where'], joiner=', ')}): loosen them"
        )
    return frame.loc[keep].reset_index(drop=True)
