"""Correctly rounded means: the aggregation of every mean that feeds a rank,
a tie test or a comparison (issue 23, item 1).

Why
---
A system-level correlation ranks the systems by their mean scores.  A mean
summed left to right (in any fixed order, sorted or not) is not correctly
rounded: two systems whose exact means are equal can get different floats,
and a true tie becomes an order (Kendall's tau-b and Spearman's rho then
differ from their values on the exact means; on a story-generation dataset
of 11 systems x 96 inputs, every score a mean of 3 ratings, 594 of 2,544
system-level values were wrong, by up to 0.069); two systems whose exact
means differ by less than the summation error can come out in the reverse
order (``tests/test_system_mean_order.py``: 37 reversed pairs of 200 rows).

The rule
--------
The mean of the valid entries of a row is computed in one of two ways, both
independent of the order of the entries:

(a) **On the grid.**  Human scores are usually means of a few integer ratings
    (multiples of 1/3 for three raters), decimals (0.1, 0.25) or both; as
    floats they are only the nearest doubles of those rationals, so even an
    exact sum of the floats breaks their ties (fl(1/3) + fl(2/3) and
    fl(1/2) + fl(1/2) differ as exact sums).  A *unit* of scores (one score
    matrix of a batch: a column's N x M cells, a resample, a Perm-Both half)
    whose valid values all lie within 2^-48 (relative; about 16 ulps) of a
    multiple k / GRID of ``GRID = 126000 = 2^4 3^2 5^3 7`` (which divides by
    every denominator 1-10, 12, 14-16, 18, 20, 25, 100, 1000, ...: means of
    3-10 raters, tenths, hundredths, thousandths, quarters, eighths) takes
    those integer codes k: the mean is ``K / (GRID n)`` with ``K = sum k``
    summed exactly in int64, one IEEE division of two integers below 2^53,
    hence correctly rounded.  Equal rational means are bit-equal whatever
    the counts, multisets and order.  A value codes only when
    ``|k| <= 2^53 / L`` (L: the length of the summed axis, which bounds every
    row's count, bootstrap multiplicities included), so K stays exact;
    zero codes only as 0.0 itself (a value of 1e-20 is not rounded to 0).
(b) **Otherwise** the exact sum of the floats (an integer multiple of
    2^-1074, held in 32-bit limbs of int64 accumulators in the numba kernels,
    as a Python integer in their NumPy twins) divided by n and rounded once:
    the correctly rounded mean of the given floats.  Equal exact means (of
    any counts) give equal floats, a strictly larger exact mean never a
    smaller float, and values near 1e308 neither overflow nor need the
    rescaling the sorted sum had.

The decision is per unit, from its valid values only, so a bootstrap
replicate or a Perm-Both half decides from the cells it holds (the kernels
scan the drawn cells and stop at the first one off the grid), exactly as the
generic code decides on the materialised replicate: kernels, twins and the
generic path agree bit for bit (a correctly rounded result is unique).

Cost
----
Measured in BENCHMARKS.md ("Exact means"; one core, 10^6 values): the exact
sums take 4.8 ms and the grid codes about 3 ms per pass, against 7-9 ms for
the sorted cumulative sum they replace, and the kernels no longer sort.
Bootstrap replicates at ``system`` level (``_kernels.boot_row_means``) read
each row once with the column multiplicities; the Perm-Both halves
(``_kernels.swap_group_means``) sum each value as three exact int64 words
when the layout's values span at most about 124 bits (z-scores span 60-80),
and fall back to the limbs otherwise.  End to end the system-level paths got
faster (0.48-0.96 of before); averaging raters into cells
(``_kernels.exact_col_means``, over the first axis without a copy) costs
about what the NumPy sum did.

Alternatives not taken: ``math.fsum`` (Shewchuk) per row is correctly
rounded but gives equal floats only for equal exact *sums*, not means of
different counts, and needs a Python loop per row; a double-double (TwoSum)
accumulation certified against its error bound is fast but still needs an
exact fallback and the same per-unit grid rule for rational scores.
"""

from __future__ import annotations

import numpy as np

from ._columns import OFF_GRID

#: The grid of rational scores: 2^4 3^2 5^3 7 (module docstring).
GRID = 126_000
#: Largest relative distance of a value's GRID-multiple from its integer code.
GRID_TOL = 2.0**-48

__all__ = ["GRID", "OFF_GRID", "grid_codes", "masked_mean", "means", "nanmean"]


def grid_codes(a, length):
    """Integer codes ``k`` of the values ``a`` on the grid (``a ~ k / GRID``):
    ``OFF_GRID`` for a finite value off the grid (or too large to be summed
    exactly over ``length`` entries), 0 for a value that is not finite."""
    a = np.asarray(a, float)
    kmax = _kmax(length)
    with np.errstate(invalid="ignore", over="ignore"):
        small = np.abs(a) * GRID <= kmax  # False for NaN and inf
        t = np.where(small, a, 0.0) * GRID
        k = np.rint(t)
        ok = small & (np.abs(t - k) <= GRID_TOL * np.abs(k)) & ((k != 0) | (a == 0))
    codes = np.where(ok, k, 0.0).astype(np.int64)
    codes[np.isfinite(a) & ~ok] = OFF_GRID
    return codes


def means(a, valid=None, *, unit_ndim=2, fast=True):
    """Correctly rounded means over the last axis of ``a`` (module docstring).

    Parameters
    ----------
    a : ndarray
        Scores; the mean is taken over the last axis.
    valid : ndarray of bool, optional
        Entries to average (default: the finite ones; an infinite or NaN
        entry is never averaged).  A row without one gives NaN.
    unit_ndim : int
        The grid decision is taken per unit of the last ``unit_ndim`` axes
        (2: per (N, M) score matrix of a batch; ``a.ndim``: the whole array).
    fast : bool
        The numba kernel (True) or its NumPy twin (the same numbers).
    """
    from .coefficients import kernels

    a = np.asarray(a, float)
    if valid is None:
        valid = np.isfinite(a)
    shape = a.shape[:-1]
    if a.ndim == 0 or a.size == 0:
        return np.full(shape, np.nan)
    L = a.shape[-1]
    unit_ndim = max(1, min(int(unit_ndim), a.ndim))
    rows_per_unit = int(np.prod(a.shape[a.ndim - unit_ndim:-1], dtype=np.int64))
    # only finite values are averaged (a caller's mask may not say so)
    valid = np.ascontiguousarray(np.broadcast_to(np.asarray(valid, bool), a.shape)
                                 & np.isfinite(a)).reshape(-1, L)
    out = kernels(fast, a.size).exact_means(np.ascontiguousarray(a).reshape(-1, L), valid,
                                    rows_per_unit, float(GRID), _kmax(L), GRID_TOL)
    return out.reshape(shape)


def _kmax(length):
    """Largest code magnitude summed exactly over ``length`` entries."""
    return float(2**53 // max(int(length), 1))


def nanmean(a, axis=-1, *, fast=True):
    """Correctly rounded mean of the finite values of ``a`` along ``axis``
    (NaN where there is none, without a warning); the grid decision is taken
    over the whole array."""
    a = np.asarray(a, float)
    if a.ndim >= 1 and axis in (0, -a.ndim) and a.shape[0] and a[0].size:
        # over the first axis (raters or runs into cells): no transposed copy
        from .coefficients import kernels

        flat = np.ascontiguousarray(a).reshape(a.shape[0], -1)
        out = kernels(fast, flat.size).exact_col_means(flat, float(GRID), _kmax(a.shape[0]), GRID_TOL)
        return out.reshape(a.shape[1:])
    a = np.moveaxis(a, axis, -1)
    return means(a, unit_ndim=a.ndim, fast=fast)


def masked_mean(a, valid, axis, *, fast=True):
    """The mean of the entries ``valid`` of ``a`` along ``axis``, correctly rounded (equal exact
    means give equal floats, in any order), NaN where there is none.

    For the means that become cells (a metric's score over several references, an LLM judge's
    over its samples): an infinite entry is not dropped but kept, as in numpy's mean, so such a
    row is the IEEE mean of its entries (+-inf, or NaN for +inf and -inf together).
    """
    a = np.asarray(a, float)
    valid = np.moveaxis(np.broadcast_to(np.asarray(valid, bool), a.shape), axis, -1)
    a = np.moveaxis(a, axis, -1)
    valid = valid & ~np.isnan(a)
    out = means(a, valid, unit_ndim=a.ndim, fast=fast)
    inf = (valid & np.isinf(a)).any(axis=-1)
    if inf.any():
        with np.errstate(invalid="ignore"):
            out[inf] = np.where(valid[inf], a[inf], 0.0).sum(axis=-1) / valid[inf].sum(axis=-1)
    return out
