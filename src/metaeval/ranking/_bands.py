"""Binned contexts: quantile bands of a numeric per-input quantity (e.g. user activity)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError


def quantile_bands(values, n_bands: int = 3, *, name: str = "band") -> pd.DataFrame:
    """Cut a numeric quantity per input into quantile bands: a contexts table.

    Parameters
    ----------
    values : Series or mapping
        Input label (index / key) -> number, e.g. the number of training
        interactions of each LastFM user (``user_stats.csv``, ``n_train``).
    n_bands : int
        Number of bands (3: tertiles).  Edges are the ``k / n_bands``
        quantiles of the values (``pandas.qcut``, linear interpolation);
        a band is left-open, right-closed, the first one closed on both sides.
        Tied values never straddle an edge, so with many ties fewer bands may
        result (repeated edges are merged; the labels show the real edges).
    name : str
        Name of the context column.

    Returns
    -------
    DataFrame
        Columns ``input`` (str labels) and ``name``: labels ``"1: [lo, e1]"``,
        ``"2: (e1, e2]"``, ... (numbered from the lowest band, so they sort).
        Pass it as ``contexts=`` to :func:`score_runs`.

    Raises
    ------
    DataError
        A value that is not a finite number, or repeated labels.

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.ranking import quantile_bands
    >>> quantile_bands(pd.Series([1, 2, 3, 4, 5, 6], index=list("abcdef")), 3,
    ...                name="activity")["activity"].tolist()
    ['1: [1, 2.67]', '1: [1, 2.67]', '2: (2.67, 4.33]', '2: (2.67, 4.33]', '3: (4.33, 6]', '3: (4.33, 6]']
    """
    if isinstance(values, Mapping):
        values = pd.Series(dict(values))
    if not isinstance(values, pd.Series):
        raise ParameterError(f"values must be a pandas Series or a mapping, got "
                             f"{type(values).__name__}")
    if isinstance(n_bands, bool) or not isinstance(n_bands, (int, np.integer)) or n_bands < 2:
        raise ParameterError(f"n_bands={n_bands!r} must be an int >= 2")
    if not isinstance(name, str) or name in ("input", "system"):
        raise ParameterError(f"name={name!r} must be a str other than 'input' and 'system'")
    labels = values.index.astype(str)
    if labels.has_duplicates:
        raise DataError(f"values has repeated labels, e.g. {labels[labels.duplicated()][0]!r}")
    x = pd.to_numeric(values, errors="coerce").astype(float)
    bad = values.index[~np.isfinite(x.to_numpy())]
    if len(bad):
        raise DataError(f"values of {len(bad)} input(s) are not finite numbers, e.g. "
                        f"{str(bad[0])!r}: {values[bad[0]]!r}")
    _, edges = pd.qcut(x, n_bands, retbins=True, duplicates="drop")
    if len(edges) < 2 or edges[0] == edges[-1]:
        raise DataError("every value is the same: there is nothing to band")
    idx = np.clip(np.searchsorted(edges, x.to_numpy(), side="left"), 1, len(edges) - 1)

    def fmt(v: float) -> str:
        return f"{v:.3g}" if not float(v).is_integer() else str(int(v))

    names = [f"{k}: {'[' if k == 1 else '('}{fmt(edges[k - 1])}, {fmt(edges[k])}]"
             for k in range(1, len(edges))]
    return pd.DataFrame({"input": list(labels), name: [names[k - 1] for k in idx]})
