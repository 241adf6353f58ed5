"""Validation helpers shared by every way of building a :class:`Dataset`.

Each helper either returns clean data (``str`` labels, ``float64`` scores) or
raises :class:`~metaeval.errors.DataError` with a message that names the
culprit (column, labels, rows) and says how to fix it.  Nothing here knows
about files; readers and constructors call these helpers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd

from metaeval.errors import DataError

#: How many offending labels or values an error message names before it
#: summarizes the rest as "and K more".
MAX_SHOWN = 5

#: Score column names that would collide with the key columns of
#: :meth:`Dataset.to_frame`.
RESERVED_NAMES = ("system", "input")


#: How error messages name the options of :meth:`Dataset.from_frame` and
#: :func:`read_dataset`: empty means the Python spelling (```rater=```); the
#: command line maps them to its flags (``rater`` -> ``--rater-col``) with
#: :func:`option_names`, so the same message is right in both places.
_OPTION_NAMES: ContextVar[Mapping[str, str | None] | None] = ContextVar(
    "metaeval_option_names", default=None
)


@contextmanager
def option_names(mapping: Mapping[str, str | None]) -> Iterator[None]:
    """Name the options in messages raised inside the block as ``mapping`` says.

    Parameters
    ----------
    mapping : mapping of str to str or None
        Keyword of :meth:`Dataset.from_frame` (``"rater"``, ``"run"``,
        ``"metrics"``, ...) -> how to name it instead (``"--rater-col"``);
        ``None`` marks an option the caller does not offer, which messages
        then leave out.  Keywords not in the mapping are not offered either.

    Examples
    --------
    >>> from metaeval.data._validate import option, option_names
    >>> option("rater")
    '`rater=`'
    >>> with option_names({"rater": "--rater-col"}):
    ...     option("rater"), option("run")
    ('--rater-col', None)
    """
    token = _OPTION_NAMES.set(dict(mapping))
    try:
        yield
    finally:
        _OPTION_NAMES.reset(token)


def option(name: str) -> str | None:
    """How a message names the option ``name``: ```name=``` by default, the
    caller's spelling inside :func:`option_names` (None: not offered there)."""
    names = _OPTION_NAMES.get()
    if names is None:
        return f"`{name}=`"
    return names.get(name)


def options_text(names: Sequence[str], *, joiner: str = " or ") -> str:
    """The offered options among ``names``, joined: ``"`rater=` or `run=`"``."""
    shown = [o for o in map(option, names) if o]
    return joiner.join(shown)


def in_api() -> bool:
    """True unless a caller (the command line) renamed the options."""
    return _OPTION_NAMES.get() is None


def plain(value: object) -> object:
    """NumPy scalars as Python scalars, so messages show ``0.5``, not ``np.float64(0.5)``."""
    return value.item() if isinstance(value, np.generic) else value


def fmt_items(items: Iterable[object], *, limit: int = MAX_SHOWN) -> str:
    """Format up to ``limit`` items with ``repr`` and summarize the rest.

    Parameters
    ----------
    items : iterable
        The items to show, in order.
    limit : int, optional
        How many items to show before ``"and K more"``.

    Returns
    -------
    str
        For example ``"'a', 'b' and 3 more"``; ``"(none)"`` when empty.
    """
    items = list(items)
    if not items:
        return "(none)"
    shown = ", ".join(repr(plain(item)) for item in items[:limit])
    rest = len(items) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def fmt_key(names: Sequence[str], values: Sequence[object]) -> str:
    """Format one row key as ``(system='A', input='i1')``."""
    inner = ", ".join(f"{n}={plain(v)!r}" for n, v in zip(names, values, strict=True))
    return f"({inner})"


def as_name_list(value: object, *, parameter: str) -> list:
    """Normalize a column-name option to a list.

    Parameters
    ----------
    value : str, sequence of str or None
        The option as the user gave it; a single name may be a bare string.
    parameter : str
        The option's name, for the error message.

    Returns
    -------
    list
        The names, in the given order (``[]`` for ``None``).

    Raises
    ------
    TypeError
        If ``value`` is neither a name nor a sequence of names.
    DataError
        If a name is repeated.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (Sequence, pd.Index, np.ndarray)) and not isinstance(value, bytes):
        names = list(value)
    else:
        raise TypeError(
            f"`{parameter}` must be a column name or a list of column names, "
            f"got {type(value).__name__}"
        )
    seen: set = set()
    repeated = [n for n in names if n in seen or seen.add(n)]
    if repeated:
        named = f"`{parameter}`" if in_api() else (option(parameter) or f"`{parameter}`")
        raise DataError(f"{named} names a column more than once: {fmt_items(repeated)}")
    return names


def labels_to_str(
    values: pd.Series | Sequence, *, what: str, allow_empty: bool = False
) -> np.ndarray:
    """Convert system, input, rater or run labels to an array of ``str``.

    Parameters
    ----------
    values : Series or sequence
        The raw labels (any type: ``1`` becomes ``"1"``, ``1.5`` becomes
        ``"1.5"``).
    what : str
        A description for error messages, e.g. ``"column 'system'"``.
    allow_empty : bool, optional
        Accept the empty string (used for the rater label ``""`` of a
        column without a rater axis).

    Returns
    -------
    numpy.ndarray
        One-dimensional ``object`` array of ``str``.

    Raises
    ------
    DataError
        If a label is missing (``None``, NaN, ``pd.NA``) or the empty string.
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    missing = series.isna().to_numpy()
    if series.dtype == object:
        # Element by element, so that 1, 1.0 and True stay distinct labels.
        out = np.empty(len(series), dtype=object)
        out[:] = [v if type(v) is str else str(v) for v in series.tolist()]
    else:
        # Typed columns: convert each distinct value once.
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        as_str = np.empty(len(uniques) + 1, dtype=object)
        as_str[:-1] = [str(u) for u in uniques.tolist()]
        as_str[-1] = ""
        out = as_str[codes]
    bad = missing if allow_empty else missing | (out == "")
    if bad.any():
        positions = np.flatnonzero(bad)
        raise DataError(
            f"{what} has {positions.size} missing or empty label(s), at row position(s) "
            f"{fmt_items(positions.tolist())}: every row needs a label; drop those rows or fill "
            "the labels"
        )
    return out


def unique_in_order(labels: np.ndarray) -> tuple[str, ...]:
    """Unique labels in order of first appearance."""
    _, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=False)
    return tuple(str(u) for u in uniques)


def check_duplicate_keys(
    key_arrays: Sequence[np.ndarray], key_names: Sequence[str], *, hint: str
) -> None:
    """Raise if a combination of key labels occurs on more than one row.

    Parameters
    ----------
    key_arrays : sequence of numpy.ndarray
        One label array per key column, all the same length.
    key_names : sequence of str
        The key names shown in the message, e.g. ``("system", "input")``.
    hint : str
        How to fix it, appended to the message.

    Raises
    ------
    DataError
        Naming up to five duplicated keys, their count and the number of rows
        involved.
    """
    # Fast path: one integer code per row from the per-key codes.
    combined = np.zeros(len(key_arrays[0]), dtype=np.int64)
    for arr in key_arrays:
        codes, uniques = pd.factorize(np.asarray(arr, dtype=object), sort=False)
        combined = combined * max(len(uniques), 1) + codes
    if not pd.Index(combined).has_duplicates:
        return
    frame = pd.DataFrame({f"k{i}": arr for i, arr in enumerate(key_arrays)})
    dup_mask = frame.duplicated(keep=False).to_numpy()
    dup_rows = frame[dup_mask]
    distinct = dup_rows.drop_duplicates()
    keys = [fmt_key(key_names, tuple(row)) for row in distinct.itertuples(index=False)]
    raise DataError(
        f"{len(distinct)} duplicated ({', '.join(key_names)}) key(s) over "
        f"{int(dup_mask.sum())} rows, e.g. {', '.join(keys[:MAX_SHOWN])}"
        f"{' and more' if len(keys) > MAX_SHOWN else ''}: each key must appear once; {hint}"
    )


def _is_bool_dtype(dtype: object) -> bool:
    return pd.api.types.is_bool_dtype(dtype)


def is_numeric_dtype(dtype: object) -> bool:
    """True for integer and floating dtypes (numpy or nullable), not bool."""
    return (
        pd.api.types.is_numeric_dtype(dtype)
        and not _is_bool_dtype(dtype)
        and not pd.api.types.is_complex_dtype(dtype)
    )


def looks_numeric(series: pd.Series) -> bool:
    """Whether a non-numeric-dtype column is probably a score column with typos.

    True when the column has at least one present value and at least half of
    its present values parse as numbers.  Used to pick default metric columns
    so that a metric column spoiled by a stray string (``"n/a"``, ``"-"``) is
    reported instead of silently dropped.
    """
    if is_numeric_dtype(series.dtype):
        return True
    if _is_bool_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype):
        return False
    present = series.dropna()
    if len(present) == 0:
        return False
    obj = present.astype(object)
    not_bool = obj[[not isinstance(v, (bool, np.bool_)) for v in obj]]
    parsed = _coerce(not_bool)
    return bool(parsed.notna().sum() * 2 >= len(present))


def _coerce(obj: pd.Series) -> pd.Series:
    """``pd.to_numeric(errors="coerce")`` that never raises."""
    try:
        return pd.to_numeric(obj, errors="coerce")
    except (TypeError, ValueError):
        out = []
        for v in obj:
            try:
                out.append(float(pd.to_numeric(v)))
            except (TypeError, ValueError):
                out.append(np.nan)
        return pd.Series(out, index=obj.index, dtype=float)


def to_float(
    series: pd.Series,
    *,
    column: str,
    key_arrays: Sequence[np.ndarray],
    key_names: Sequence[str],
) -> np.ndarray:
    """Convert one score column to ``float64``, rejecting anything not a number.

    Missing values (``None``, NaN, ``pd.NA``) become NaN.  Numbers stored as
    strings (``"3.5"``) are parsed; any other string, booleans, complex
    numbers, dates and infinities are errors.

    Parameters
    ----------
    series : Series
        The raw column.
    column : str
        The score column's name, for the message.
    key_arrays, key_names : sequence
        The row keys (e.g. system and input labels) used to locate offending
        values in the message.

    Returns
    -------
    numpy.ndarray
        Float64 values, NaN where missing.

    Raises
    ------
    DataError
        Naming the column and up to five offending values with their rows.
    """
    dtype = series.dtype
    n = len(series)

    def where(positions: Sequence[int]) -> str:
        shown = [
            f"{plain(raw)!r} at {fmt_key(key_names, [k[p] for k in key_arrays])}"
            for p, raw in ((p, series.iloc[p]) for p in positions[:MAX_SHOWN])
        ]
        rest = len(positions) - MAX_SHOWN
        return ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")

    if _is_bool_dtype(dtype):
        present = np.flatnonzero(series.notna().to_numpy())
        raise DataError(
            f"score column {column!r} holds booleans ({len(present)} values, e.g. "
            f"{where(list(present))}): scores must be numbers; convert them "
            f"explicitly (e.g. df[{column!r}].astype(float)) if 0/1 is meant"
        )
    if (
        pd.api.types.is_complex_dtype(dtype)
        or pd.api.types.is_datetime64_any_dtype(dtype)
        or (pd.api.types.is_timedelta64_dtype(dtype))
    ):
        raise DataError(
            f"score column {column!r} has dtype {dtype}, which is not a real number: "
            "scores must be int or float"
        )
    if is_numeric_dtype(dtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        obj = series.astype(object)
        missing = obj.isna().to_numpy()
        is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in obj), dtype=bool, count=n)
        parsed = _coerce(obj.where(~is_bool, None)).to_numpy(dtype=np.float64, na_value=np.nan)
        offending = np.flatnonzero(~missing & (is_bool | np.isnan(parsed)))
        if offending.size:
            raise DataError(
                f"score column {column!r} has {offending.size} non-numeric value(s): "
                f"{where(list(offending))}; scores must be numbers (booleans too are "
                "rejected): fix or blank those cells (a blank cell is read as missing)"
            )
        values = parsed
    inf = np.flatnonzero(np.isinf(values))
    if inf.size:
        raise DataError(
            f"score column {column!r} has {inf.size} infinite value(s): {where(list(inf))}; "
            "scores must be finite: replace them with a finite value or NaN (missing)"
        )
    return values


def check_unknown(
    names: Iterable[object], available: Sequence[object], *, what: str, fix: str = ""
) -> None:
    """Raise if some ``names`` are not among ``available`` columns.

    Parameters
    ----------
    names : iterable
        Column names the user asked for.
    available : sequence
        The columns that exist.
    what : str
        What kind of names these are, e.g. ``"human column(s)"``.
    fix : str, optional
        Shown right after the unknown names, e.g. ``" (check --metrics)"``.

    Raises
    ------
    DataError
        Listing every unknown name and the available columns.
    """
    avail = set(available)
    unknown = [n for n in names if n not in avail]
    if unknown:
        raise DataError(
            f"unknown {what}: {fmt_items(unknown, limit=20)}{fix}; available columns: "
            f"{fmt_items(list(available), limit=60)}"
        )
