"""CSV exports that are safe to open in a spreadsheet.

A spreadsheet (Excel, LibreOffice, Google Sheets) runs a cell whose text
starts with ``=``, ``+``, ``-`` or ``@`` as a formula, and some also treat a
leading tab or carriage return so; a metric or system named
``=HYPERLINK(...)`` in a data file would then run on the machine of whoever
opens the exported table ("CSV injection", OWASP).  Every CSV the command
line and the report write goes through :func:`to_csv`, which prefixes such
*text* cells (and column or index names) with a single quote ``'``, the
spreadsheet convention for "this is text".  Numbers are never touched:
``-0.5`` stays the number ``-0.5``; a *label* spelled ``-1`` (text) becomes
``'-1``.

The same cells are also made safe to print (:func:`metaeval._escape.literal`, the one
escaping function of every view): control and bidi characters (ESC, BEL, CR, tab,
U+202E, ...) are written as visible escapes (``\\x1b``), so neither ``--format csv`` on a
terminal nor ``cat`` of an exported table runs an escape sequence or reorders text; a
newline is kept and the field quoted, so a name cannot forge a row.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

import pandas as pd

from ._escape import literal

#: First characters that make a spreadsheet read a text cell as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def protect_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` if it is text that a spreadsheet would run.

    Parameters
    ----------
    value : object
        A cell; only ``str`` values are changed.

    Returns
    -------
    object

    Examples
    --------
    >>> protect_cell("=1+1"), protect_cell("-x"), protect_cell("bleu"), protect_cell(-0.5)
    ("'=1+1", "'-x", 'bleu', -0.5)
    >>> protect_cell("\\x1b]0;title\\x07m")
    '\\\\x1b]0;title\\\\x07m'
    """
    if not isinstance(value, str):
        return value
    value = literal(value, newlines=True)
    if value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def _protect_index(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return index.set_levels([_protect_index(level) for level in index.levels])
    if index.dtype == object or pd.api.types.is_string_dtype(index.dtype):
        return pd.Index([protect_cell(v) for v in index], name=protect_cell(index.name),
                        dtype=object)
    return index.rename(protect_cell(index.name))


def protect_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells, column names and index labels cannot
    run as spreadsheet formulas nor reach a terminal raw (see the module docstring);
    numeric columns are unchanged.

    Parameters
    ----------
    frame : DataFrame

    Returns
    -------
    DataFrame
        The same shape and order; only ``str`` values differ: those holding
        characters that are not printable (escaped) and those starting with
        one of :data:`FORMULA_PREFIXES` (a leading ``'``).
    """
    out = frame.copy()
    for k in range(out.shape[1]):
        column = out.iloc[:, k]
        if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            out.isetitem(k, pd.Series([protect_cell(v) for v in column], index=out.index,
                                      dtype=object))
    out.columns = _protect_index(out.columns)
    out.index = _protect_index(out.index)
    return out


def to_csv(
    frame: pd.DataFrame, path: str | os.PathLike[str] | None = None, *, index: bool = False,
    **kwargs: Any
) -> str | None:
    """Write ``frame`` as CSV with :func:`protect_formulas` applied.

    Parameters
    ----------
    frame : DataFrame
    path : str or path-like, optional
        The file; None returns the text.
    index : bool, optional
        Write the index (default False, as every metaeval table).
    **kwargs
        Passed to :meth:`pandas.DataFrame.to_csv`.

    Returns
    -------
    str or None
        The CSV text when ``path`` is None.

    Examples
    --------
    >>> import pandas as pd
    >>> print(to_csv(pd.DataFrame({"metric": ["=cmd()", "bleu"], "statistic": [-0.5, 0.25]})), end="")
    metric,statistic
    '=cmd(),-0.5
    bleu,0.25
    """
    safe = protect_formulas(frame)
    return safe.to_csv(path, index=index, **kwargs)


def plain(v):
    """A JSON-ready Python value: numpy scalars to Python, NaN to None,
    infinities to the strings ``"inf"``/``"-inf"`` (standard JSON has neither)."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return plain(v.tolist())
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, float) and math.isinf(v):  # standard JSON has no infinity (e.g. "runs needed: inf")
        return "inf" if v > 0 else "-inf"
    return v
