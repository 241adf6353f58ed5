"""Small batches without numba: the same bits as the kernels (issue 26.2).

A command whose only work is a handful of small statistics (a system-level
correlation of 17 means, say) spent most of its time loading numba (its
import, its CPU target, each kernel's cached machine code: about 0.6-0.8
CPU-s) for microseconds of arithmetic.  The functions here compute what the
numba kernels of :mod:`metaeval.stats._kernels` compute, with NumPy and
Python integers, **bit for bit**, so that such a command never imports
numba and its numbers do not depend on which path ran:

``pearson_rows``
    The kernel's corrected two-pass Pearson (``_kernels._pearson_row``)
    performs its floating-point operations one at a time, left to right
    over the valid pairs (numba emits no fused multiply-add and no
    reassociation: it compiles without ``fastmath``, and LLVM does not
    contract ``a * b + c`` unless told to; checked on the host code of an
    FMA-capable CPU).  The same sums are running sums here:
    ``numpy.cumsum`` adds left to right, one IEEE addition per element (it
    has no pairwise summation, unlike ``numpy.sum``), over the values with
    the invalid pairs replaced by ``+0.0``.  Adding ``+0.0`` changes no
    running sum, since a running sum that starts at ``+0.0`` is never
    ``-0.0`` (in round-to-nearest, ``a + b`` is ``-0.0`` only when both are
    ``-0.0``).  Every other step (the power-of-two scaling, the means, the
    corrections, the two square roots, the clip to [-1, 1]) is the same
    IEEE operation in the same order.
``exact_means``, ``exact_col_means``
    Correctly rounded means (:mod:`metaeval.stats.exact`): a correctly
    rounded result is unique, so any exact computation gives the kernels'
    bits.  On the grid, the integer codes summed in int64 (exact) and one
    division; off it, the exact sum of the floats as a Python integer and
    CPython's correctly rounded integer division.

:func:`suits` chooses this path for a batch of at most :data:`SMALL_MAX`
values while numba is not loaded; once it is (a command that resamples has
loaded it anyway), the kernels serve every size.  ``tests/test_small.py``
compares every function with its kernel, bit for bit, on random and
adversarial batches (ties, constant and one-item groups, NaN and infinite
values, signed zeros, magnitudes near the float limits).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ._columns import OFF_GRID

#: Largest batch (number of values of ``x``) computed here rather than by a
#: kernel, while numba is not loaded (a few milliseconds at most).
SMALL_MAX = 1 << 16

#: The kernels' safe range of binary exponents (``_kernels._SAFE_EXP``).
_SAFE_EXP = 400


def suits(size: int) -> bool:
    """True when a batch of ``size`` values is cheaper here than in a kernel:
    small, and numba not loaded yet (its import and target cost 0.5 CPU-s and
    more; once paid, the kernels serve every size)."""
    return size <= SMALL_MAX and "numba" not in sys.modules


def _pow2_shift(amax):
    """``-e`` for the rows whose largest magnitude ``amax`` has a binary
    exponent ``e`` outside [-_SAFE_EXP, _SAFE_EXP], else 0
    (``_kernels._pow2_exponent``, negated)."""
    e = np.frexp(amax)[1]
    return np.where((e >= -_SAFE_EXP) & (e <= _SAFE_EXP), 0, -e)


def _running_sum(a):
    """The left-to-right sum over the last axis (one IEEE addition per
    element, starting from +0.0, as the kernels' loops)."""
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1])
    return np.cumsum(a, axis=-1)[..., -1] + 0.0


def pearson_rows(x, y):
    """Pearson's r per (b, g) of ``x`` (B, G, n) against ``y`` (B or 1, G, n)
    with pairwise deletion; NaN for fewer than 2 pairs or a constant side.
    The bits of :func:`metaeval.stats._kernels.pearson_rows` (module
    docstring)."""
    x = np.asarray(x, float)
    y = np.broadcast_to(np.asarray(y, float), x.shape)
    valid = np.isfinite(x) & np.isfinite(y)
    m = valid.sum(-1)
    with np.errstate(all="ignore"):
        xmin = np.where(valid, x, np.inf).min(-1, initial=np.inf)
        xmax = np.where(valid, x, -np.inf).max(-1, initial=-np.inf)
        ymin = np.where(valid, y, np.inf).min(-1, initial=np.inf)
        ymax = np.where(valid, y, -np.inf).max(-1, initial=-np.inf)
        bad = (m < 2) | ~(xmax > xmin) | ~(ymax > ymin)
        ex = _pow2_shift(np.where(bad, 1.0, np.maximum(np.abs(xmin), np.abs(xmax))))
        ey = _pow2_shift(np.where(bad, 1.0, np.maximum(np.abs(ymin), np.abs(ymax))))
        # ldexp by 0 is the identity, so the unscaled rows are unchanged
        xs = np.where(valid, np.ldexp(np.where(valid, x, 0.0), ex[..., None]), 0.0)
        ys = np.where(valid, np.ldexp(np.where(valid, y, 0.0), ey[..., None]), 0.0)
        mf = m.astype(float)
        mx = _running_sum(xs) / mf
        my = _running_sum(ys) / mf
        dx = np.where(valid, xs - mx[..., None], 0.0)
        dy = np.where(valid, ys - my[..., None], 0.0)
        cx = _running_sum(dx) / mf
        cy = _running_sum(dy) / mf
        sxy = _running_sum(dx * dy) - mf * cx * cy
        sxx = _running_sum(dx * dx) - mf * cx * cx
        syy = _running_sum(dy * dy) - mf * cy * cy
        bad |= ~(sxx > 0.0) | ~(syy > 0.0)
        r = sxy / (np.sqrt(sxx) * np.sqrt(syy))
        r = np.minimum(1.0, np.maximum(-1.0, r))
    return np.where(bad, np.nan, r)


# --------------------------------------------------------------------------
# correctly rounded means


def _codes(vals, grid, kmax, tol):
    """Grid codes of ``vals`` (``_kernels._grid_code``, elementwise):
    ``OFF_GRID`` for a value off the grid or too large, else ``k`` with
    ``vals ~ k / grid``; the codes of non-finite values are not used."""
    with np.errstate(invalid="ignore", over="ignore"):
        small = np.abs(vals) * grid <= kmax  # False for NaN and inf
        t = np.where(small, vals, 0.0) * grid
        k = np.rint(t)
        ok = small & (np.abs(t - k) <= tol * np.abs(k)) & ((k != 0) | (vals == 0))
    codes = np.where(ok, k, 0.0).astype(np.int64)
    codes[~ok] = OFF_GRID
    return codes


def _exact_mean(values):
    """The mean of the floats ``values`` (finite, at least one) rounded once:
    their exact sum in units of 2**-1074 as a Python integer, divided by the
    count with CPython's correctly rounded integer division."""
    total = 0
    for v in values.tolist():
        num, den = v.as_integer_ratio()  # den a power of two, at most 2**1074
        total += num << (1074 - (den.bit_length() - 1))
    return total / (len(values) << 1074)


def exact_means(vals, valid, rows_per_unit, grid, kmax, tol):
    """Correctly rounded means of the ``valid`` entries of each row of
    ``vals`` (R, L), NaN for a row without one; the grid decision per unit
    of ``rows_per_unit`` rows (:func:`metaeval.stats._kernels.exact_means`)."""
    vals = np.asarray(vals, float)
    valid = np.asarray(valid, bool)
    R, L = vals.shape
    codes = _codes(vals, grid, kmax, tol)
    off = (valid & (codes == OFF_GRID)).reshape(-1, rows_per_unit * L).any(-1)
    n = valid.sum(-1)
    K = np.where(valid, codes, 0).sum(-1)  # exact: |code| <= kmax = 2**53 // L
    out = np.full(R, np.nan)
    for r in range(R):
        if not n[r]:
            continue
        if off[r // rows_per_unit]:
            out[r] = _exact_mean(vals[r][valid[r]])
        else:
            out[r] = float(int(K[r])) / float(grid * int(n[r]))
    return out


def exact_col_means(vals, grid, kmax, tol):
    """Correctly rounded means over axis 0 of the finite entries of ``vals``
    (R, K), one grid decision for the whole array
    (:func:`metaeval.stats._kernels.exact_col_means`)."""
    t = np.ascontiguousarray(np.asarray(vals, float).T)
    return exact_means(t, np.isfinite(t), t.shape[0], grid, kmax, tol)


__all__ = ["SMALL_MAX", "exact_col_means", "exact_means", "pearson_rows", "suits"]
