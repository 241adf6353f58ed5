"""Correctly rounded means: exact accumulators, numba kernels and NumPy twins (private).

``exact_means`` and ``exact_col_means`` (design in :mod:`metaeval.stats.exact`)
and the accumulator helpers the bootstrap and Perm-Both mean kernels share,
then the NumPy twins ``exact_means_numpy`` and ``exact_col_means_numpy``
(Python's integers instead of the limbs).
"""

from __future__ import annotations

import math

import numpy as np

from ._columns import OFF_GRID
from ._jit import kernel
from ._kbase import _chunk, _n_workers

# numba.prange once the family is compiled (_jit.compile_family); the builtin
# range until then.
prange = range


# --------------------------------------------------------------------------
# Correctly rounded means (issue 23, item 1; design in metaeval.stats.exact)
#
# A float64 is mant * 2^(pos - 1074) with an integer mant < 2^53 and a bit
# position pos in 0..2045.  The exact sum of any multiset of floats is an
# integer multiple of 2^-1074 below 2^(1024 + 31); it is held in 32-bit limbs
# of int64 accumulators (limb j holds bits 32 (j - 2) ... of that integer: two
# limbs of room below bit 0 take the quotient's fraction bits at the end).  A
# value touches three limbs, each addition adds less than 2^33 times its
# multiplicity, so up to 2^29 additions (times multiplicity) never overflow.
# The mean (sum / n) is then rounded once, to nearest, ties to even.
#
# A score on the rational grid k / GRID (module exact) is summed as its
# integer code k instead: K = sum k exactly, mean = K / (GRID n), one IEEE
# division of two integers below 2^53, correctly rounded.

#: Limbs of an exact accumulator (two fraction limbs, 66 for the 2098 bit
#: positions of a float64 and the carries of 2^29 additions, one spare).
N_ACC = 70
_M32 = 0xFFFFFFFF


@kernel
def _acc_add(acc, bits, m):
    """Add ``m`` (an integer, may be 0) times the float whose IEEE bits are
    ``bits`` (int64) to the accumulator, exactly."""
    e = (bits >> 52) & 0x7FF
    mant = bits & 0xFFFFFFFFFFFFF
    if e == 0:
        pos = 0
    else:
        mant |= 1 << 52
        pos = e - 1
    if bits < 0:
        m = -m
    i = (pos >> 5) + 2
    off = pos & 31
    a = (mant & _M32) << off
    b = (mant >> 32) << off
    acc[i] += m * (a & _M32)
    acc[i + 1] += m * ((a >> 32) + (b & _M32))
    acc[i + 2] += m * (b >> 32)


@kernel
def _acc_lo(bits):
    """Lowest limb ``_acc_add`` touches for this value."""
    e = (bits >> 52) & 0x7FF
    return ((e - 1 if e > 0 else 0) >> 5) + 2


@kernel
def _acc_mean(acc, lo, hi, n):
    """The accumulated sum divided by the positive integer ``n`` (below
    2^31), rounded to nearest (ties to even), as a float64.  ``lo`` and
    ``hi``: the lowest and highest ``_acc_lo`` of the values added (limbs
    outside lo..hi + 2 are zero; the sum of fewer than 2^29 additions fits
    below limb hi + 5).  Clears the accumulator."""
    end = min(N_ACC, hi + 5)
    # carry-normalise: limbs in [0, 2^32), the sign from the last carry
    carry = 0
    for i in range(lo, end):
        t = acc[i] + carry
        acc[i] = t & _M32
        carry = t >> 32
    neg = carry < 0
    if neg:  # two's complement (the zero limbs below lo pass the +1 on to lo)
        c = 1
        for i in range(lo, end):
            t = (acc[i] ^ _M32) + c
            acc[i] = t & _M32
            c = t >> 32
    td = end - 1
    while td >= 0 and acc[td] == 0:
        td -= 1
    # long division by n from the top, down to three limbs below the
    # quotient's top limb (X below needs limbs top..top-2); what is left
    # decides only the sticky bit
    rem = 0
    top = -1
    i = td
    while i >= 0:
        cur = (rem << 32) | acc[i]
        qi = cur // n
        rem = cur - qi * n
        acc[i] = qi
        if top < 0 and qi != 0:
            top = i
        if top >= 0 and i <= top - 3:
            break
        i -= 1
    stop = max(i, 0)
    sticky = rem != 0
    for j in range(stop):
        if acc[j] != 0:
            sticky = True
    r = 0.0
    if top >= 0:
        tb = math.frexp(float(acc[top]))[1]  # bit length, 1..32
        P = 32 * top + tb - 1  # top bit of the quotient; bit 64 is 2^-1074
        if P >= 63:
            s = P - 61  # X: the 62 bits at positions s..P
            iL = s >> 5
            offL = s & 31
            X = 0
            for j in range(top, iL, -1):
                X |= acc[j] << (32 * j - s)
            X |= acc[iL] >> offL
            if acc[iL] & ((1 << offL) - 1):
                sticky = True
            for j in range(stop, iL):
                if acc[j] != 0:
                    sticky = True
            if P == 63:  # in [2^-1075, 2^-1074): 2^-1074, or 0 at the tie (even)
                if X != (1 << 61) or sticky:
                    r = math.ldexp(1.0, -1074)
            else:
                k = min(53, P - 63)  # bits kept (fewer below the normal range)
                dd = 62 - k
                mant = X >> dd
                rb = X & ((1 << dd) - 1)
                half = 1 << (dd - 1)
                if rb > half or (rb == half and (sticky or (mant & 1))):
                    mant += 1
                r = math.ldexp(float(mant), s + dd - 1074 - 64)
    for j in range(min(lo, stop), end):
        acc[j] = 0
    return -r if neg else r


@kernel
def _grid_mean(K, n, grid):
    """K / (grid n): both integers below 2^53, so one correctly rounded division."""
    return float(K) / float(grid * n)


@kernel
def _grid_code(v, grid, kmax, tol):
    """The integer code k of ``v`` on the grid (``v ~ k / grid``) or
    ``OFF_GRID``: the elementwise rule of ``exact.grid_codes`` (the same
    IEEE operations, so the same codes)."""
    if not abs(v) * grid <= kmax:
        return OFF_GRID
    t = v * grid
    k = np.rint(t)
    if abs(t - k) <= tol * abs(k) and (k != 0 or v == 0):
        return np.int64(k)
    return OFF_GRID


@kernel(parallel=True)
def exact_means(vals, valid, rows_per_unit, grid, kmax, tol):
    """Correctly rounded means of the ``valid`` entries of each row of
    ``vals`` (R, L): (R,), NaN for a row without one.  Rows come in units of
    ``rows_per_unit`` (one score matrix each); a unit whose valid values are
    all on the grid (``_grid_code``) takes the codes' exact integer sums, any
    other the exact sums of the floats (module ``exact``)."""
    R, L = vals.shape
    out = np.empty(R)
    U = R // rows_per_unit
    bits = vals.view(np.int64)
    T = _n_workers(U)
    accs = np.zeros((T, N_ACC), np.int64)  # before the parallel region (issue 14.1)
    for w in prange(T):
        acc = accs[w]
        lo, hi = _chunk(U, T, w)
        for u in range(lo, hi):
            r0 = u * rows_per_unit
            on_grid = True
            for r in range(r0, r0 + rows_per_unit):
                for j in range(L):
                    if valid[r, j] and _grid_code(vals[r, j], grid, kmax, tol) == OFF_GRID:
                        on_grid = False
                        break
                if not on_grid:
                    break
            for r in range(r0, r0 + rows_per_unit):
                n = 0
                if on_grid:
                    K = 0
                    for j in range(L):
                        if valid[r, j]:
                            K += _grid_code(vals[r, j], grid, kmax, tol)
                            n += 1
                    out[r] = _grid_mean(K, n, grid) if n else np.nan
                    continue
                low = N_ACC
                high = -1
                for j in range(L):
                    if valid[r, j]:
                        _acc_add(acc, bits[r, j], 1)
                        q = _acc_lo(bits[r, j])
                        low = min(low, q)
                        high = max(high, q)
                        n += 1
                out[r] = _acc_mean(acc, low, high, n) if n else np.nan
    return out


@kernel(parallel=True)
def exact_col_means(vals, grid, kmax, tol):
    """Correctly rounded means over axis 0 of the finite entries of ``vals``
    (R, K): (K,), NaN for a column without one; one unit (the grid codes
    when every finite value is on the grid, else exact sums), as
    ``exact_means`` on the transposed array (raters or runs into cells,
    without the transposed copy)."""
    R, K = vals.shape
    out = np.empty(K)
    bits = vals.view(np.int64)
    T = _n_workers(K)
    flags = np.ones(T, np.int8)
    for w in prange(T):  # the grid decision, split over the columns
        lo, hi = _chunk(K, T, w)
        for k in range(lo, hi):
            for r in range(R):
                v = vals[r, k]
                if np.isfinite(v) and _grid_code(v, grid, kmax, tol) == OFF_GRID:
                    flags[w] = 0
                    break
            if flags[w] == 0:
                break
    on_grid = True
    for w in range(T):
        if flags[w] == 0:
            on_grid = False
    accs = np.zeros((T, N_ACC), np.int64)  # before the parallel region (issue 14.1)
    for w in prange(T):
        acc = accs[w]
        lo, hi = _chunk(K, T, w)
        for k in range(lo, hi):
            n = 0
            if on_grid:
                Ks = 0
                for r in range(R):
                    v = vals[r, k]
                    if np.isfinite(v):
                        Ks += _grid_code(v, grid, kmax, tol)
                        n += 1
                out[k] = _grid_mean(Ks, n, grid) if n else np.nan
                continue
            low = N_ACC
            high = -1
            for r in range(R):
                v = vals[r, k]
                if np.isfinite(v):
                    _acc_add(acc, bits[r, k], 1)
                    q = _acc_lo(bits[r, k])
                    low = min(low, q)
                    high = max(high, q)
                    n += 1
            out[k] = _acc_mean(acc, low, high, n) if n else np.nan
    return out


@kernel
def _acc_add_int(acc, v, p):
    """Add the integer ``v`` (|v| < 2^63) times 2^(p - 1074) to the accumulator."""
    sgn = 1
    if v < 0:
        sgn = -1
        v = -v
    i = (p >> 5) + 2
    off = p & 31
    a = (v & _M32) << off
    b = (v >> 32) << off
    acc[i] += sgn * (a & _M32)
    acc[i + 1] += sgn * ((a >> 32) + (b & _M32))
    acc[i + 2] += sgn * (b >> 32)


@kernel
def _mant_pos(v):
    """|float| = mant * 2^(pos - 1074) for IEEE bits ``v``."""
    e = (v >> 52) & 0x7FF
    mant = v & 0xFFFFFFFFFFFFF
    if e == 0:
        return mant, 0
    return mant | (1 << 52), e - 1


@kernel
def _low_bits(mant, d, lo, width):
    """Bits lo .. lo + width - 1 of mant * 2^d (width <= 62), as an integer."""
    if d >= lo:
        k = d - lo
        if k >= width:
            return 0
        return (mant & ((1 << (width - k)) - 1)) << k
    k = lo - d
    if k >= 63:
        return 0
    return (mant >> k) & ((1 << width) - 1)


@kernel
def _fixed_words(vb, s, out):
    """The float of IEEE bits ``vb`` as x * 2^(s - 1074) with the integer x
    in three signed words, x = out[0] 2^62 + out[1] 2^31 + out[2]
    (|out[1]|, |out[2]| < 2^31); the caller checked that x fits."""
    out[0] = 0
    out[1] = 0
    out[2] = 0
    if vb == 0 or vb == -(1 << 63):
        return
    mant, pos = _mant_pos(vb)
    d = pos - s
    w2 = _low_bits(mant, d, 0, 31)
    w1 = _low_bits(mant, d, 31, 31)
    # (a shift by 64 or more is undefined in LLVM: d < -1 leaves nothing above bit 62)
    w0 = mant << (d - 62) if d >= 62 else (mant >> (62 - d) if d > -2 else 0)
    if vb < 0:
        w0, w1, w2 = -w0, -w1, -w2
    out[0] = w0
    out[1] = w1
    out[2] = w2


# --------------------------------------------------------------------------
# NumPy twins: same signatures and results, used when numba is disabled
# (METAEVAL_DISABLE_NUMBA=1), on small batches and as the cross-check in tests.


# --------------------------------------------------------------------------
# Correctly rounded means: Python's integers instead of the limbs


def _exact_mean(values, mult, n):
    """sum(mult * values) / n rounded once to the nearest float64 (ties to
    even): the exact sum as a Python integer times a power of two, and
    CPython's correctly rounded true division of integers."""
    keep = (mult != 0) & (values != 0)
    if not keep.any():
        return 0.0
    f, e = np.frexp(values[keep])
    mant = np.ldexp(f, 53).astype(np.int64)  # exact: |mant| < 2^53
    e = e.astype(np.int64) - 53
    e0 = int(e.min())
    terms = mant.astype(object) * mult[keep].astype(object) * (
        np.ones(e.size, dtype=object) << (e - e0).astype(object))
    S = int(terms.sum())
    return S / (n << -e0) if e0 < 0 else (S << e0) / n


def _grid_mean_numpy(K, n, grid):
    """K / (grid n) for integers below 2^53: one correctly rounded division."""
    return float(K) / float(grid * n)


def exact_means_numpy(vals, valid, rows_per_unit, grid, kmax, tol):
    """See :func:`exact_means`."""
    from .exact import grid_codes

    R, L = vals.shape
    codes = np.where(valid, grid_codes(vals, L), 0)
    unit_grid = ~(codes == OFF_GRID).reshape(-1, rows_per_unit * L).any(-1)
    out = np.full(R, np.nan)
    for r in range(R):
        v = valid[r]
        n = int(v.sum())
        if n == 0:
            continue
        if unit_grid[r // rows_per_unit]:
            out[r] = _grid_mean_numpy(int(codes[r][v].sum()), n, grid)
        else:
            out[r] = _exact_mean(vals[r][v], np.ones(n, np.int64), n)
    return out


def exact_col_means_numpy(vals, grid, kmax, tol):
    """See :func:`exact_col_means` (the transposed rows)."""
    t = np.ascontiguousarray(vals.T)
    return exact_means_numpy(t, np.isfinite(t), t.shape[0], grid, kmax, tol)
