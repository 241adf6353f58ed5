"""Sequential Monte Carlo p-values with early stopping (Besag and Clifford 1991).

A permutation test usually draws a fixed number ``n - 1`` of resamples.  When
the observed statistic is clearly not significant, most of them are wasted:
Besag and Clifford's sequential rule draws until ``h`` resampled statistics
are at least as extreme as the observed one, or until ``n - 1`` draws:

* stopped at draw ``L`` with ``h`` exceedances: ``p = h / L``;
* ``n - 1`` draws with ``g < h`` exceedances: ``p = (g + 1) / n``.

The p-value is valid (``P(p <= a) <= a`` under the null for every ``a``) and
equals the fixed-size p-value ``(g + 1) / n`` of the first ``n - 1`` draws
whenever it does not stop early; with small ``h`` (10-20) it needs only about
``h / p`` draws for a large p.

Undefined (NaN) draws are dropped, as the fixed-size
:func:`metaeval.stats.inference.resampling_pvalue` drops them: they count neither
as draws (``L``) nor as exceedances, but they do count towards the ``n - 1``
draws made at most, so that without early stopping the p-value is
``(g + 1) / (F + 1)`` over the ``F`` finite draws among the first ``n - 1``,
exactly the fixed-size one (NaN when ``F = 0``).

Several statistics computed from the same draws (the two one-sided and the
two-sided p-value of one test) each get their own rule
(:func:`sequential_pvalues`): each p-value is the Besag-Clifford p-value of
its statistic on the same stream (drawing past a statistic's stopping time
does not change its p-value), and the draws stop when every statistic has
stopped.

Reference: J. Besag and P. Clifford (1991). Sequential Monte Carlo p-values.
Biometrika 78(2), 301-304.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError


@dataclass(frozen=True)
class SequentialPValue:
    """``pvalue``, ``n_draws`` made (NaN draws included), ``n_exceed``
    (exceedances counted), ``stopped`` (True when ``h`` exceedances were
    reached early), the ``null`` draws made, and ``n_nan`` of them NaN."""

    pvalue: float
    n_draws: int
    n_exceed: int
    stopped: bool
    null: np.ndarray
    n_nan: int = 0


@dataclass(frozen=True)
class SequentialPValues:
    """:func:`sequential_pvalues`: per statistic ``pvalues``, ``n_exceed``,
    ``stopped`` and ``n_finite`` (the ``L`` of its p-value), and the draws
    made (``null``, all statistics stopped or ``n - 1`` draws)."""

    pvalues: np.ndarray
    n_exceed: np.ndarray
    stopped: np.ndarray
    n_finite: np.ndarray
    null: np.ndarray

    @property
    def n_draws(self) -> int:
        return int(self.null.size)


def _check(h, n):
    for name, v, lo in (("h", h, 1), ("n", n, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ParameterError(f"{name}={v!r} must be an int >= {lo}")


def sequential_pvalues(chunks, exceed, *, h: int, n: int) -> SequentialPValues:
    """Besag-Clifford p-values of ``k`` statistics from one stream of null draws.

    Parameters
    ----------
    chunks : iterable of array_like
        Successive blocks of null draws (drawn lazily: the iteration stops as
        soon as every statistic has stopped).
    exceed : callable
        ``exceed(block)`` -> bool array ``(k, len(block))``: whether each draw is
        at least as extreme as the observed value, for each statistic (NaN draws
        are dropped whatever it returns).
    h : int
        Exceedances that stop a statistic (>= 1).
    n : int
        The fixed-sample size it replaces: at most ``n - 1`` draws (>= 2).

    Returns
    -------
    SequentialPValues
    """
    _check(h, n)
    limit = n - 1
    got = []
    used = 0
    count = fin = None
    pv = L = stopped = None
    for block in chunks:
        b = np.asarray(block, dtype=float).ravel()[: limit - used]
        if b.size == 0:
            if used >= limit:
                break
            continue
        finite = np.isfinite(b)
        with np.errstate(invalid="ignore"):
            ex = np.atleast_2d(np.asarray(exceed(b), dtype=bool)) & finite
        if count is None:
            k = ex.shape[0]
            count, fin = np.zeros(k, np.int64), 0
            pv, L, stopped = np.full(k, np.nan), np.zeros(k, np.int64), np.zeros(k, bool)
        cum = np.cumsum(ex, axis=1)
        cfin = np.cumsum(finite)
        last = 0  # draws of this block needed by the statistics that stop in it
        for s in np.flatnonzero(~stopped):
            if count[s] + cum[s, -1] >= h:
                j = int(np.searchsorted(cum[s], h - count[s]))  # index of the h-th exceedance
                L[s] = fin + int(cfin[j])
                pv[s] = h / L[s]
                stopped[s] = True
                count[s] = h
                last = max(last, j + 1)
            else:
                count[s] += int(cum[s, -1])
        if stopped.all():
            got.append(b[:last])
            used += last
            break
        got.append(b)
        used += b.size
        fin += int(cfin[-1])
        if used >= limit:
            break
    null = np.concatenate(got) if got else np.empty(0)
    if count is None:
        return SequentialPValues(np.empty(0), np.empty(0, np.int64), np.empty(0, bool),
                                 np.empty(0, np.int64), null)
    for s in np.flatnonzero(~stopped):
        L[s] = fin
        pv[s] = (count[s] + 1) / (fin + 1) if fin else np.nan
    return SequentialPValues(pv, count, stopped, L, null)


def besag_clifford(chunks, observed: float, *, h: int, n: int, tol: float = 0.0) -> SequentialPValue:
    """Sequential p-value of "null >= observed" from a stream of null draws.

    Parameters
    ----------
    chunks : iterable of array_like
        Successive blocks of null statistics (drawn lazily: the iteration
        stops as soon as the rule stops, so later blocks are never computed).
        NaN draws are dropped (module docstring).
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
    _check(h, n)
    if not np.isfinite(observed):
        return SequentialPValue(float("nan"), 0, 0, False, np.empty(0))
    r = sequential_pvalues(chunks, lambda b: (b >= observed - tol)[None], h=h, n=n)
    n_nan = int(np.count_nonzero(~np.isfinite(r.null)))
    if r.pvalues.size == 0:
        return SequentialPValue(float("nan"), 0, 0, False, r.null, n_nan)
    return SequentialPValue(float(r.pvalues[0]), r.n_draws, int(r.n_exceed[0]), bool(r.stopped[0]),
                            r.null, n_nan)


__all__ = ["besag_clifford", "sequential_pvalues", "SequentialPValue", "SequentialPValues"]
