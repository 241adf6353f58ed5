"""Rank-based inverse-normal transforms of scores (seed paper 002, App. A.2): Blom, Tukey,
rankit, van der Waerden and MetricEval's ``normalize2``.

Arrays in, arrays out; re-exported by :mod:`metaeval.reliability` (``rank_normal``,
``NORMALIZATIONS``), whose ``normalize=`` option it serves.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from .._vocab import check_choice

#: Rank-based normalizations (``normalize=`` / :func:`rank_normal`).
NORMALIZATIONS = {
    "none": "no transformation",
    "blom": "Phi^-1((r - 3/8) / (n + 1/4)), average ranks r (Blom 1958)",
    "tukey": "Phi^-1((r - 1/3) / (n + 1/3)), average ranks r (Tukey 1962)",
    "rankit": "Phi^-1((r - 1/2) / n), average ranks r (Bliss 1956)",
    "van_der_waerden": "Phi^-1(r / (n + 1)), average ranks r (van der Waerden 1952)",
    "metriceval": "Phi^-1(0.001 + 0.998 F_n(x)), F_n the empirical CDF (ties: the count of "
    "values <= x), then standardized (seed paper 002 App. A.2; MetricEval's normalize2)",
}
#: The offset c of each rank-based transform.
NORMAL_OFFSET = {"blom": 3 / 8, "tukey": 1 / 3, "rankit": 1 / 2, "van_der_waerden": 0.0}


def rank_normal(x, *, method="blom"):
    """Rank-based inverse-normal transform of scores (seed paper 002, App. A.2).

    All finite values of ``x`` are ranked together (for a score column, pass
    its N x M cells); NaN stays NaN.

    ``blom``, ``tukey``, ``rankit``, ``van_der_waerden``
        :math:`z = \\Phi^{-1}((r - c) / (n - 2c + 1))` with the *average*
        rank ``r`` of each value among the ``n`` finite values (tied values
        get the same score) and c = 3/8, 1/3, 1/2, 0 respectively.
    ``metriceval``
        the paper's transform, :math:`X^* = \\Phi^{-1}(\\frac1n \\sum_i
        I(X_i \\le X))`, as MetricEval implements it (``normalize2``):
        the empirical CDF (ties get the count of values ``<= x``, i.e. the
        largest rank) is squeezed to ``0.001 + 0.998 F`` so that the largest
        value is finite, and the result is standardized to mean 0 and
        standard deviation 1 (``ddof=1``, as R's ``scale``).  The bundled
        SummEval metric columns are exactly this transform of the raw scores.
    ``none``
        ``x`` as float.

    Parameters
    ----------
    x : array_like
        Scores of any shape.
    method : str
        A key of :data:`NORMALIZATIONS`.

    Returns
    -------
    ndarray
        Same shape as ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from metaeval.reliability import rank_normal
    >>> rank_normal([1.0, 2.0, 2.0, 3.0]).round(4)  # Blom, average ranks 1, 2.5, 2.5, 4
    array([-1.0491,  0.    ,  0.    ,  1.0491])
    >>> rank_normal([3.0, np.nan, 1.0], method="van_der_waerden").round(4)
    array([ 0.4307,     nan, -0.4307])
    """
    check_choice(method, "method", NORMALIZATIONS)
    a = np.array(x, dtype=float)
    if method == "none":
        return a
    out = np.full(a.shape, np.nan)
    ok = np.isfinite(a)
    v = a[ok]
    n = v.size
    if n == 0:
        return out
    if method == "metriceval":
        s = np.sort(v)
        f = np.searchsorted(s, v, side="right") / n
        z = _st.norm.ppf(0.001 + 0.998 * f)
        sd = z.std(ddof=1) if n > 1 else 0.0
        z = (z - z.mean()) / sd if sd > 0 else np.zeros_like(z)
    else:
        c = NORMAL_OFFSET[method]
        r = _st.rankdata(v, method="average")
        z = _st.norm.ppf((r - c) / (n - 2 * c + 1))
    out[ok] = z
    return out


def normalized_runs(runs, normalize):
    """(R, N, M) -> each run rank-normalized over its cells."""
    if normalize == "none":
        return np.asarray(runs, dtype=float)
    return np.stack([rank_normal(r, method=normalize) for r in runs])


__all__ = ["NORMALIZATIONS", "NORMAL_OFFSET", "rank_normal", "normalized_runs"]
