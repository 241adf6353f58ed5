"""The two-sample Kolmogorov-Smirnov distance with where it is reached and its sign: the
statistic of :func:`metaeval.diagnostics.ks_score` (seed paper 002's KS score), arrays in,
numbers out.  Its p-values are scipy's (``scipy.stats.ks_2samp``), called by the analysis.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ks_statistic"]


def ks_statistic(a, b) -> tuple[float, float, int]:
    """Two-sample KS distance sup |F_a - F_b|, where it is reached, and its sign.

    Returns ``(statistic, location, sign)``: ``sign`` is +1 when F_a - F_b
    is largest (a's empirical CDF above b's: a's values tend to be smaller)
    and -1 otherwise, as ``statistic_sign`` of ``scipy.stats.ks_2samp(a, b)``.

    >>> ks_statistic([1, 2, 3], [4, 5, 6])
    (1.0, 3.0, 1)
    """
    a = np.sort(np.asarray(a, float))
    b = np.sort(np.asarray(b, float))
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    diff = fa - fb
    i_plus, i_minus = int(np.argmax(diff)), int(np.argmin(diff))
    d_plus, d_minus = float(diff[i_plus]), float(-diff[i_minus])
    if d_plus >= d_minus:
        return d_plus, float(grid[i_plus]), 1
    return d_minus, float(grid[i_minus]), -1
