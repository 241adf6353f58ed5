"""Rating scales: declared bounds, explicit missing-value codes, and the
detection of out-of-scale codes nobody declared.

LLM judges and annotation tools write failure codes into score columns: ``-1``
when an answer could not be parsed, ``0`` on a 1-5 scale, ``999`` for "not
rated".  Used as scores they bend every correlation without an error.  At
construction a :class:`~metaeval.data.Dataset`

- checks the scale of every column declared with ``bounds=`` (values outside
  are a :class:`~metaeval.errors.DataError`);
- makes the values listed in ``missing_values=`` missing (NaN), explicitly;
- and, for the other columns, looks for codes where that is unambiguous
  (:func:`scale_codes`): the column is a rating scale (integers, a small
  range of at least two values) plus a few (at most 5%) values that are
  negative while the scale is not, ``0`` under a scale starting at 1 (up to
  10 points), or far above the scale (more than twice its span beyond its
  top, e.g. ``99`` or ``999`` on 1-5).  It warns
  (:class:`~metaeval.errors.OutOfScaleWarning`) naming the column, the values
  and their counts, and how to declare the scale or drop the codes; it
  never changes a value;
- and looks for repeated failure codes that the rule above leaves out
  (:func:`sentinel_codes`): a negative integer (``-1``, ``-99``) in a
  column whose other values are all non-negative, or an all-nines value
  (``999``) far above them, whatever its share (``-1`` on 30% of a 1-5
  column, on 10% of a BLEU column in [0, 1]).  It warns
  (:class:`~metaeval.errors.FailureCodeWarning`, an ``OutOfScaleWarning``)
  naming the column, the codes, their share, and how to make them missing.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metaeval._stacklevel import user_stacklevel
from metaeval.errors import DataError, FailureCodeWarning, OutOfScaleWarning

from ._validate import MAX_SHOWN, fmt_items, in_api, option

#: Most values a column may hold to be checked for codes (a scale plus codes).
MAX_DISTINCT = 120
#: Fewest finite values for the detection (fewer cannot show a scale).
MIN_VALUES = 20
#: Largest share of the values that codes may make up.
MAX_CODE_SHARE = 0.05
#: Widest scale (top minus bottom) considered a rating scale (0-100 DA).
MAX_SPAN = 100


def scale_codes(values: np.ndarray) -> tuple[float, float, dict[float, int]] | None:
    """Codes outside an undeclared rating scale, when unambiguous.

    Parameters
    ----------
    values : ndarray
        A column's ratings (any shape; NaN ignored).

    Returns
    -------
    (low, high, codes) or None
        The scale's observed bottom and top and ``{code: count}``; None when
        the column is not an integer rating scale or has no such code.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.tile([1, 2, 3, 4, 5], 20), [-1, -1, 0]].astype(float)
    >>> scale_codes(x)
    (1.0, 5.0, {-1.0: 2, 0.0: 1})
    >>> scale_codes(np.r_[np.tile([1, 2, 3, 4, 5], 20), [999]].astype(float))
    (1.0, 5.0, {999.0: 1})
    >>> scale_codes(np.linspace(0, 1, 50)) is None  # not integers
    True
    """
    x = np.asarray(values, float).ravel()
    x = x[np.isfinite(x)]
    n = x.size
    if n < MIN_VALUES:
        return None
    probe = x[:1000]
    if not np.array_equal(probe, np.rint(probe)) or not np.array_equal(x, np.rint(x)):
        return None
    vals, counts = np.unique(x, return_counts=True)
    if vals.size < 3 or vals.size > MAX_DISTINCT:
        return None
    count = dict(zip(vals.tolist(), counts.tolist()))
    codes: set[float] = set()
    # negative codes on a scale that is otherwise non-negative
    if counts[vals >= 0].sum() >= (1 - MAX_CODE_SHARE) * n:
        codes |= {v for v in vals.tolist() if v < 0}
    # values far above the scale: the first big gap above the bottom
    rest = [v for v in vals.tolist() if v not in codes]
    for i in range(1, len(rest)):
        span = rest[i - 1] - rest[0]
        above = sum(count[v] for v in rest[i:])
        if rest[i] - rest[i - 1] > 2 * max(span, 1) and above <= MAX_CODE_SHARE * n:
            codes |= set(rest[i:])
            break
    # 0 under a short scale that starts at 1 (1-3, 1-5, 1-7, 1-10)
    rest = [v for v in vals.tolist() if v not in codes]
    if 0.0 in rest and count[0.0] <= MAX_CODE_SHARE * n:
        pos = [v for v in rest if v != 0.0]
        if pos and pos[0] == 1.0 and pos[-1] <= 10 and len(pos) >= 2:
            codes.add(0.0)
    if not codes:
        return None
    core = [v for v in vals.tolist() if v not in codes]
    if len(core) < 2 or core[-1] - core[0] > MAX_SPAN:
        return None
    if sum(count[v] for v in codes) > MAX_CODE_SHARE * n:
        return None
    return float(core[0]), float(core[-1]), {float(v): int(count[v]) for v in sorted(codes)}


#: Most distinct negative codes one column may hold (``-1`` and ``-2``, say).
MAX_SENTINELS = 2
#: Values written for "missing" far above a scale.
NINES = (99.0, 999.0, 9999.0, 99999.0, 999999.0)


def sentinel_codes(values: np.ndarray) -> tuple[float, float, dict[float, int]] | None:
    """Repeated failure codes outside a column's other values, at any share.

    A code is a negative integer (at most :data:`MAX_SENTINELS` of them) in a
    column whose other values are all non-negative, unless the column is an
    integer scale that runs through 0 (the negatives are -k..-1, the rest
    starts at 0 and reaches at most 2k: ``{-1, 0, 1}`` preferences or a
    -2..2 scale, not ``-1`` codes); or an all-nines value (:data:`NINES`)
    more than twice the others' span above their top.  The codes must occur at least twice in all.  This finds
    what :func:`scale_codes` leaves out: codes on more than
    :data:`MAX_CODE_SHARE` of the values, and codes in columns that are not
    integer scales (a metric in [0, 1]).

    Parameters
    ----------
    values : ndarray
        A column's scores (any shape; NaN ignored).

    Returns
    -------
    (low, high, codes) or None
        The bottom and top of the other values and ``{code: count}``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.tile([1, 2, 3, 4, 5], 16), [-1] * 20].astype(float)  # -1 on 20%
    >>> sentinel_codes(x)
    (1.0, 5.0, {-1.0: 20})
    >>> sentinel_codes(np.r_[np.linspace(0, 1, 45), [-1] * 5])  # a metric in [0, 1]
    (0.0, 1.0, {-1.0: 5})
    >>> sentinel_codes(np.tile([-1.0, 0.0, 1.0], 10)) is None  # a preference scale
    True
    >>> sentinel_codes(np.tile([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0], 10))  # -1 on a 0-4 scale
    (0.0, 4.0, {-1.0: 10})
    """
    x = np.asarray(values, float).ravel()
    x = x[np.isfinite(x)]
    if x.size < MIN_VALUES:
        return None
    vals, counts = np.unique(x, return_counts=True)
    count = dict(zip(vals.tolist(), counts.tolist()))
    codes: set[float] = set()
    neg = [v for v in vals.tolist() if v < 0]
    rest = [v for v in vals.tolist() if v >= 0]
    if 0 < len(neg) <= MAX_SENTINELS and all(float(v).is_integer() for v in neg) and len(rest) >= 2:
        # integers from the negatives on to 0 and about as far below 0 as the rest goes above:
        # a scale that runs through 0 (-1..1, -2..2), not codes
        through_zero = (all(float(v).is_integer() for v in rest) and rest[0] == 0.0
                        and neg == [float(v) for v in range(int(neg[0]), 0)] and -2 * neg[0] >= rest[-1])
        if not through_zero:
            codes |= set(neg)
    rest = [v for v in vals.tolist() if v not in codes]
    if len(rest) >= 2:
        nines = [v for v in rest if v in NINES]
        core = [v for v in rest if v not in NINES]
        if nines and len(core) >= 2 and min(nines) > core[-1] + 2 * max(core[-1] - core[0], 1):
            codes |= set(nines)
    if not codes or sum(count[v] for v in codes) < 2:
        return None
    core = [v for v in vals.tolist() if v not in codes]
    return float(core[0]), float(core[-1]), {float(v): int(count[v]) for v in sorted(codes)}


def _fmt_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _fmt_counts(codes: Mapping[float, int]) -> str:
    return ", ".join(f"{_fmt_num(v)} (x{c})" for v, c in codes.items())


def _named(name: str) -> str:
    """How a message names the option ``name``: the command line's flag inside it
    (``--scale-bounds``), else the keyword (``bounds``)."""
    return name if in_api() else (option(name) or name)


def _check_named_columns(pairs: Mapping[str, Any], columns: Sequence[str], what: str) -> None:
    """Every key of ``pairs`` (an option keyed by column) must be a score column."""
    known = set(columns)
    unknown = [c for c in pairs if c not in known]
    if unknown:
        raise DataError(
            f"{what} names column(s) {fmt_items(unknown)} that are not score columns; the "
            f"columns are {fmt_items(list(columns), limit=40)}"
        )


def check_bounds(bounds: Any, columns: Sequence[str], human: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``bounds`` as ``{column: (low, high)}``; a pair applies to every human column."""
    if bounds is None:
        return {}
    what = _named("bounds")
    if isinstance(bounds, Mapping):
        pairs = dict(bounds)
    else:
        pairs = {c: bounds for c in human}
    _check_named_columns(pairs, columns, what)
    out = {}
    for c, b in pairs.items():
        try:
            if isinstance(b, (str, bytes)):  # "15" is not (1, 5)
                raise TypeError
            lo, hi = (_number(v) for v in b)
        except (TypeError, ValueError):
            raise DataError(f"{what} of {c!r}: give (low, high) numbers, got {b!r}") from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise DataError(
                f"{what} of {c!r}: need finite low < high, got ({_fmt_num(lo)}, {_fmt_num(hi)})"
            )
        out[c] = (lo, hi)
    return out


def _number(v: Any) -> float:
    """``float(v)``, refusing booleans (``True`` is not the score 1)."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("a boolean is not a score")
    return float(v)


def _codes(v: Any) -> Sequence[Any]:
    """One column's codes as a sequence (a single number is one code)."""
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        return [v]
    return list(v)


def check_missing_values(missing: Any, columns: Sequence[str]) -> dict[str, tuple[float, ...]]:
    """``missing_values`` as ``{column: codes}``; a list of numbers applies to every column."""
    if missing is None:
        return {}
    what = _named("missing_values")
    if isinstance(missing, Mapping):
        pairs = {c: _codes(v) for c, v in missing.items()}
    else:
        pairs = {c: _codes(missing) for c in columns}
    _check_named_columns(pairs, columns, what)
    out = {}
    for c, vals in pairs.items():
        try:
            codes = tuple(_number(v) for v in vals)
        except (TypeError, ValueError):
            raise DataError(
                f"{what} of {c!r}: give numbers (the codes to treat as missing), got {vals!r}"
            ) from None
        out[c] = codes
    return out


def apply_missing_values(array: np.ndarray, codes: Sequence[float]) -> int:
    """Set the cells holding one of ``codes`` to NaN in place; returns how many."""
    if not codes:
        return 0
    hit = np.isin(array, np.asarray(codes, float))
    array[hit] = np.nan
    return int(hit.sum())


def _bounds_hint(column: str, lo: float, hi: float) -> str:
    """How to declare the scale: the command line's flag inside it, else ``bounds=``."""
    flag = None if in_api() else option("bounds")
    if flag:
        return f"{flag} {column}={_fmt_num(lo)}:{_fmt_num(hi)}"
    return f"bounds={{{column!r}: ({_fmt_num(lo)}, {_fmt_num(hi)})}}"


def _missing_hint(column: str, codes: Sequence[float]) -> str:
    """How to make the codes missing: the command line's flag inside it, else ``missing_values=``."""
    flag = None if in_api() else option("missing_values")
    if flag:
        return f"{flag} {column}={','.join(_fmt_num(v) for v in codes)}"
    return f"missing_values={{{column!r}: [{', '.join(_fmt_num(v) for v in codes)}]}}"


def check_declared(arrays: Mapping[str, np.ndarray], bounds: Mapping[str, tuple[float, float]]) -> None:
    """Raise if a column has values outside its declared scale."""
    for c, (lo, hi) in bounds.items():
        a = arrays[c]
        out = a[np.isfinite(a) & ((a < lo) | (a > hi))]
        if out.size:
            vals, counts = np.unique(out, return_counts=True)
            codes = dict(zip(vals.tolist(), counts.tolist()))
            raise DataError(
                f"score column {c!r} has {out.size} value(s) outside its declared scale "
                f"[{_fmt_num(lo)}, {_fmt_num(hi)}]: {_fmt_counts(dict(list(codes.items())[:MAX_SHOWN]))}"
                f"{' and more' if len(codes) > MAX_SHOWN else ''}; if they are codes (failures, "
                f"not rated) make them missing with {_missing_hint(c, list(codes)[:MAX_SHOWN])}, "
                "else fix the bounds"
            )


def warn_undeclared(arrays: Mapping[str, np.ndarray], columns: Sequence[str]) -> None:
    """One :class:`OutOfScaleWarning` naming every column with a few undeclared codes
    (:func:`scale_codes`), one :class:`FailureCodeWarning` naming every column with
    repeated failure codes beyond them (:func:`sentinel_codes`)."""
    found, frequent = [], []
    for c in columns:
        hit = scale_codes(arrays[c])
        codes = sentinel_codes(arrays[c])
        # the failure codes win when the scale rule took one of them for a point of the scale
        # (-1 on 20% and a rare 999 read as a -1..5 scale with the code 999)
        if codes is not None and (hit is None or any(v not in hit[2] for v in codes[2])):
            frequent.append((c, int(np.isfinite(np.asarray(arrays[c], float)).sum()), *codes))
        elif hit is not None:
            found.append((c, *hit))
    if frequent:
        _warn_frequent(frequent)
    if not found:
        return
    parts = []
    for c, lo, hi, codes in found[:MAX_SHOWN]:
        parts.append(
            f"{c!r} looks like a {_fmt_num(lo)}-{_fmt_num(hi)} scale with {sum(codes.values())} "
            f"value(s) outside it: {_fmt_counts(codes)} (drop them: "
            f"{_missing_hint(c, list(codes))}; or, if they are points of the scale, declare it: "
            f"{_bounds_hint(c, min(lo, *codes), max(hi, *codes))})"
        )
    _warn_columns("possible failure codes", parts, len(found), OutOfScaleWarning)


def _warn_columns(what: str, parts: list, n_columns: int, category) -> None:
    """One warning naming the first :data:`MAX_SHOWN` columns' ``parts`` and how many more there are."""
    rest = n_columns - MAX_SHOWN
    warnings.warn(
        f"{what} in score column(s), used as scores as they are: "
        + "; ".join(parts)
        + (f"; and {rest} more column(s)" if rest > 0 else ""),
        category,
        stacklevel=user_stacklevel(),
    )


def _fmt_range(v: float) -> str:
    return _fmt_num(v) if float(v).is_integer() else f"{v:.3g}"


def _warn_frequent(frequent) -> None:
    """The :class:`FailureCodeWarning` of the columns ``(column, n_values, low, high, codes)``."""
    parts = []
    for c, n, lo, hi, codes in frequent[:MAX_SHOWN]:
        k = sum(codes.values())
        scale_lo, scale_hi = np.floor(min(lo, *codes)), np.ceil(max(hi, *codes))
        parts.append(
            f"{c!r} has {_fmt_num(next(iter(codes))) if len(codes) == 1 else _fmt_counts(codes)} on "
            f"{100 * k / n:.3g}% of its values ({k} of {n}; the "
            f"others lie in [{_fmt_range(lo)}, {_fmt_range(hi)}]) (make them missing: "
            f"{_missing_hint(c, list(codes))}; or, if they are scores, declare the scale: "
            f"{_bounds_hint(c, scale_lo, scale_hi)})"
        )
    _warn_columns("failure codes", parts, len(frequent), FailureCodeWarning)


__all__ = [
    "scale_codes",
    "sentinel_codes",
    "check_bounds",
    "check_missing_values",
    "apply_missing_values",
    "check_declared",
    "warn_undeclared",
]
