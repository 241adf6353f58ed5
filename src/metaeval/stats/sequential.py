"""Sequential Monte Carlo p-values with early stopping (Besag and Clifford 1991).

A permutation test usually draws a fixed number ``n`` of resamples.  When the
observed statistic is clearly not significant, most of them are wasted:
Besag and Clifford's sequential rule draws until ``h`` resampled statistics
are at least as extreme as the observed one, or until ``n - 1`` draws:

* stopped at draw ``L`` with ``h`` exceedances: ``p = h / L``;
* ``n - 1`` draws with ``g < h`` exceedances: ``p = (g + 1) / n``.

The p-value is valid (``P(p <= a) <= a`` under the null for every ``a``) and
equals the fixed-``n`` p-value ``(g + 1) / n`` of the first ``n - 1`` draws
whenever it does not stop early; with small ``h`` (10-20) it needs only about
``h / p`` draws for a large p.

Reference: J. Besag and P. Clifford (1991). Sequential Monte Carlo p-values.
Biometrika 78(2), 301-304.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError


@dataclass(frozen=True)
class SequentialPValue:
    """``pvalue``, ``n_draws`` used, ``n_exceed`` (exceedances counted),
    ``stopped`` (True when ``h`` exceedances were reached early), and the
    ``null`` draws made."""

    pvalue: float
    n_draws: int
    n_exceed: int
    stopped: bool
    null: np.ndarray


def besag_clifford(chunks, observed: float, *, h: int, n: int, tol: float = 0.0) -> SequentialPValue:
    """Sequential p-value of "null >= observed" from a stream of null draws.

    Parameters
    ----------
    chunks : iterable of array_like
        Successive blocks of null statistics (drawn lazily: the iteration
        stops as soon as the rule stops, so later blocks are never computed).
        NaN draws count as draws that do not exceed.
    observed : float
    h : int
        Exceedances that stop the sampling (>= 1).
    n : int
        The fixed-sample size it replaces: at most ``n - 1`` draws (>= 2).
    tol : float
        A draw exceeds when ``null >= observed - tol``.

    Returns
    -------
    SequentialPValue
    """
    for name, v, lo in (("h", h, 1), ("n", n, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ParameterError(f"{name}={v!r} must be an int >= {lo}")
    if not np.isfinite(observed):
        return SequentialPValue(float("nan"), 0, 0, False, np.empty(0))
    limit = n - 1
    got, count = [], 0
    used = 0
    for block in chunks:
        b = np.asarray(block, dtype=float).ravel()[: limit - used]
        with np.errstate(invalid="ignore"):
            ex = b >= observed - tol
        cum = np.cumsum(ex)
        if count + (cum[-1] if cum.size else 0) >= h:
            k = int(np.searchsorted(cum, h - count)) + 1  # draws of this block up to the h-th exceedance
            got.append(b[:k])
            used += k
            return SequentialPValue(h / used, used, h, True, np.concatenate(got))
        count += int(cum[-1]) if cum.size else 0
        used += b.size
        got.append(b)
        if used >= limit:
            break
    null = np.concatenate(got) if got else np.empty(0)
    return SequentialPValue((count + 1) / (used + 1), used, count, False, null)


__all__ = ["besag_clifford", "SequentialPValue"]
