"""Pearson's r over rows and average ranks: numba kernels and NumPy twins (private).

``pearson_rows`` (the corrected two-pass algorithm, scaled by a power of two
when the magnitudes could overflow) and ``average_ranks`` (Spearman's ranks),
then their NumPy twins ``pearson_rows_numpy`` and ``average_ranks_numpy``.
Conventions in :mod:`._kbase`.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel
from ._kbase import _chunk, _lexsort2, _n_workers

# numba.prange once the family is compiled (_jit.compile_family); the builtin
# range until then.
prange = range


# Rows with at most this many finite entries are ranked by direct counting.
SMALL_RANK_N = 24


# Finite values whose magnitude lies in [2**-_SAFE_EXP, 2**_SAFE_EXP] can be
# centred and squared without overflow or underflow; other rows are first
# scaled by a power of two (exact).
_SAFE_EXP = 400
_SAFE_LO = 2.0 ** (-_SAFE_EXP - 1)
_SAFE_HI = 2.0 ** _SAFE_EXP


@kernel
def _pow2_exponent(amax):
    """0 if ``amax`` is within the safe range, else the binary exponent ``e``
    with ``amax = f * 2**e``, ``0.5 <= f < 1`` (scaling by ``2**-e`` is exact)."""
    # the safe range without frexp's library call: 2**(e - 1) <= amax < 2**e
    if amax == 0.0 or (_SAFE_LO <= amax < _SAFE_HI):
        return 0
    e = math.frexp(amax)[1]
    if -_SAFE_EXP <= e <= _SAFE_EXP:
        return 0
    return e


@kernel
def _pearson_row(x, y):
    """Pearson's r of the finite pairs of ``x``, ``y``.

    Centred first (corrected two-pass algorithm, Chan, Golub and LeVeque
    1983): with ``m`` the computed mean and ``d_i = x_i - m``,
    ``Sxx = sum d_i^2 - n dbar^2`` and ``Sxy = sum dx_i dy_i - n dxbar dybar``
    where ``dbar = sum d_i / n`` corrects the rounding of the mean, so the
    error stays near machine epsilon however large the mean is against the
    spread.  Rows whose magnitudes could overflow or underflow are scaled by
    a power of two first, which is exact.
    """
    n = x.size
    m = 0
    xmin = np.inf
    xmax = -np.inf
    ymin = np.inf
    ymax = -np.inf
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            m += 1
            xmin = min(xmin, x[i])
            xmax = max(xmax, x[i])
            ymin = min(ymin, y[i])
            ymax = max(ymax, y[i])
    if m < 2 or not (xmax > xmin) or not (ymax > ymin):
        return np.nan
    ex = -_pow2_exponent(max(abs(xmin), abs(xmax)))
    ey = -_pow2_exponent(max(abs(ymin), abs(ymax)))
    sx = 0.0
    sy = 0.0
    scaled = ex != 0 or ey != 0
    # the same sums with and without the scaling (ldexp by 0 is the identity;
    # the unscaled loops only skip its library calls)
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            if scaled:
                sx += math.ldexp(x[i], ex)
                sy += math.ldexp(y[i], ey)
            else:
                sx += x[i]
                sy += y[i]
    mx = sx / m
    my = sy / m
    cx = 0.0
    cy = 0.0
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            if scaled:
                dx = math.ldexp(x[i], ex) - mx
                dy = math.ldexp(y[i], ey) - my
            else:
                dx = x[i] - mx
                dy = y[i] - my
            cx += dx
            cy += dy
            sxy += dx * dy
            sxx += dx * dx
            syy += dy * dy
    cx /= m
    cy /= m
    sxy -= m * cx * cy
    sxx -= m * cx * cx
    syy -= m * cy * cy
    if not (sxx > 0.0 and syy > 0.0):
        return np.nan
    r = sxy / (np.sqrt(sxx) * np.sqrt(syy))
    return min(1.0, max(-1.0, r))


@kernel
def _y_side(y, dy):
    """The quantities of ``_pearson_row(x, y)`` that depend on ``y`` alone, for
    a finite ``y`` (the same operations in the same order): ``(ymin, ymax,
    ey, cy / m, syy - m (cy / m)^2)`` and the centred values ``dy`` (written).
    A scaling of ``y`` by 2^0 (when only ``x`` needs one) is the identity, so
    none of them depends on ``x``."""
    m = y.size
    ymin = np.inf
    ymax = -np.inf
    for i in range(m):
        ymin = min(ymin, y[i])
        ymax = max(ymax, y[i])
    if m < 2 or not (ymax > ymin):
        return ymin, ymax, 0, 0.0, 0.0
    ey = -_pow2_exponent(max(abs(ymin), abs(ymax)))
    sy = 0.0
    for i in range(m):
        sy += math.ldexp(y[i], ey) if ey != 0 else y[i]
    my = sy / m
    cy = 0.0
    syy = 0.0
    for i in range(m):
        d = (math.ldexp(y[i], ey) if ey != 0 else y[i]) - my
        dy[i] = d
        cy += d
        syy += d * d
    cy /= m
    syy -= m * cy * cy
    return ymin, ymax, ey, cy, syy


@kernel
def _pearson_row_given_y(x, y, dy, ymin, ymax, ey, cy, syy):
    """``_pearson_row(x, y)`` with the ``y`` side from ``_y_side`` (finite
    ``y``): the same operations in the same order, so the same bits, with
    half the passes over ``y``.  A non-finite ``x`` falls back to
    ``_pearson_row``."""
    m = x.size
    xmin = np.inf
    xmax = -np.inf
    for i in range(m):
        if not np.isfinite(x[i]):
            return _pearson_row(x, y)
        xmin = min(xmin, x[i])
        xmax = max(xmax, x[i])
    if m < 2 or not (xmax > xmin) or not (ymax > ymin):
        return np.nan
    ex = -_pow2_exponent(max(abs(xmin), abs(xmax)))
    scaled = ex != 0 or ey != 0
    sx = 0.0
    for i in range(m):
        if scaled:
            sx += math.ldexp(x[i], ex)
        else:
            sx += x[i]
    mx = sx / m
    cx = 0.0
    sxy = 0.0
    sxx = 0.0
    for i in range(m):
        if scaled:
            dx = math.ldexp(x[i], ex) - mx
        else:
            dx = x[i] - mx
        cx += dx
        sxy += dx * dy[i]
        sxx += dx * dx
    cx /= m
    sxy -= m * cx * cy
    sxx -= m * cx * cx
    if not (sxx > 0.0 and syy > 0.0):
        return np.nan
    r = sxy / (np.sqrt(sxx) * np.sqrt(syy))
    return min(1.0, max(-1.0, r))


@kernel
def _pearson_finish(sxy, sxx, cx, m, cy, syy):
    """The last steps of ``_pearson_row_given_y`` from its sums."""
    cx /= m
    sxy -= m * cx * cy
    sxx -= m * cx * cx
    if not (sxx > 0.0 and syy > 0.0):
        return np.nan
    r = sxy / (np.sqrt(sxx) * np.sqrt(syy))
    return min(1.0, max(-1.0, r))


@kernel
def _pearson_halves_given_y(xa, xb, y, dy, ymin, ymax, ey, cy, syy):
    """``(_pearson_row_given_y(xa, ...), _pearson_row_given_y(xb, ...))``
    for two rows of the same length against the same ``y`` (the two
    Perm-Both halves of a group): each half's operations are those of
    ``_pearson_row_given_y`` in the same order, so the same bits, but the
    two halves go through each pass together, so that their chains of
    dependent additions overlap (a pass over one half waits ~4 cycles per
    element for the previous addition; two independent chains fill that
    wait).  ``ldexp`` by 0 is the identity, so a half is scaled when its
    own exponent is not 0.  A non-finite value falls back to the
    one-row kernel for both halves."""
    m = xa.size
    amin = np.inf
    amax = -np.inf
    bmin = np.inf
    bmax = -np.inf
    # the unscaled sums in the same pass (used when neither half is scaled)
    sa = 0.0
    sb = 0.0
    for i in range(m):
        a = xa[i]
        b = xb[i]
        sa += a
        sb += b
        if not (np.isfinite(a) and np.isfinite(b)):
            return (_pearson_row_given_y(xa, y, dy, ymin, ymax, ey, cy, syy),
                    _pearson_row_given_y(xb, y, dy, ymin, ymax, ey, cy, syy))
        amin = min(amin, a)
        amax = max(amax, a)
        bmin = min(bmin, b)
        bmax = max(bmax, b)
    if m < 2 or not (ymax > ymin):
        return np.nan, np.nan
    oka = amax > amin
    okb = bmax > bmin
    if not (oka and okb):
        return (_pearson_row_given_y(xa, y, dy, ymin, ymax, ey, cy, syy) if oka else np.nan,
                _pearson_row_given_y(xb, y, dy, ymin, ymax, ey, cy, syy) if okb else np.nan)
    ea = -_pow2_exponent(max(abs(amin), abs(amax)))
    eb = -_pow2_exponent(max(abs(bmin), abs(bmax)))
    if ea != 0 or eb != 0:
        return (_pearson_row_given_y(xa, y, dy, ymin, ymax, ey, cy, syy),
                _pearson_row_given_y(xb, y, dy, ymin, ymax, ey, cy, syy))
    ma = sa / m
    mb = sb / m
    ca = 0.0
    cb = 0.0
    sya = 0.0
    syb = 0.0
    saa = 0.0
    sbb = 0.0
    for i in range(m):
        da = xa[i] - ma
        db = xb[i] - mb
        d = dy[i]
        ca += da
        cb += db
        sya += da * d
        syb += db * d
        saa += da * da
        sbb += db * db
    return _pearson_finish(sya, saa, ca, m, cy, syy), _pearson_finish(syb, sbb, cb, m, cy, syy)


@kernel(parallel=True)
def pearson_rows(x, y):
    """Pearson's r per (b, g) of ``x`` (B, G, n) against ``y`` (B or 1, G, n)
    with pairwise deletion; NaN for fewer than 2 pairs or a constant side."""
    B, G, _ = x.shape
    shared = y.shape[0] == 1
    out = np.empty((B, G))
    for t in prange(B * G):
        b = t // G
        g = t % G
        out[b, g] = _pearson_row(x[b, g], y[0 if shared else b, g])
    return out


@kernel
def _rank_row(a, out, wf, wi):
    """Average ranks (1-based) of the finite entries of ``a``; NaN elsewhere.
    Workspace (nothing is allocated): ``wf`` (2, >= n) float64, ``wi``
    (2, >= n) int64."""
    n = a.size
    idx = wi[0]
    m = 0
    for i in range(n):
        if np.isfinite(a[i]):
            idx[m] = i
            m += 1
        else:
            out[i] = np.nan
    if m <= SMALL_RANK_N:
        # direct counting: rank = 1 + #smaller + (#equal - 1) / 2
        for p in range(m):
            v = a[idx[p]]
            less = 0
            eq = 0
            for q in range(m):
                w = a[idx[q]]
                if w < v:
                    less += 1
                elif w == v:
                    eq += 1
            out[idx[p]] = 1.0 + less + 0.5 * (eq - 1)
        return
    vals = wf[0]
    for k in range(m):
        vals[k] = a[idx[k]]
    # ties get the mean of their positions whatever their order
    _lexsort2(vals, idx, wf[1], wi[1], m)
    k = 0
    while k < m:
        e = k
        while e + 1 < m and vals[e + 1] == vals[k]:
            e += 1
        r = 0.5 * (k + e) + 1.0
        for t in range(k, e + 1):
            out[idx[t]] = r
        k = e + 1


@kernel(parallel=True)
def average_ranks(a):
    """Average ranks along the last axis of a 2-D array, ignoring non-finite
    entries (which get NaN); scipy ``rankdata(method="average",
    nan_policy="omit")``.  The result and the workspace (2 n floats and 2 n
    integers per thread) are allocated before the parallel region
    (MemoryError there)."""
    R, n = a.shape
    out = np.empty(a.shape)
    T = _n_workers(R)
    wf = np.empty((T, 2, n))
    wi = np.empty((T, 2, n), np.int64)
    for w in prange(T):
        lo, hi = _chunk(R, T, w)
        for r in range(lo, hi):
            _rank_row(a[r], out[r], wf[w], wi[w])
    return out


# --------------------------------------------------------------------------
# NumPy twins: same signatures and results, used when numba is disabled
# (METAEVAL_DISABLE_NUMBA=1), on small batches and as the cross-check in tests.


def pearson_rows_numpy(x, y):
    """See :func:`pearson_rows`."""
    from .coefficients import pearson_numpy

    return pearson_numpy(x, y)


def average_ranks_numpy(a):
    """See :func:`average_ranks`."""
    from scipy.stats import rankdata

    a = np.where(np.isfinite(a), a, np.nan)
    return rankdata(a, axis=-1, nan_policy="omit")
