"""Numba kernels of the statistics engine (private).

Every kernel takes plain float64 arrays and returns plain arrays; random
numbers are drawn outside.  Each kernel has a NumPy twin with the same
signature in :mod:`metaeval.stats._numpy_kernels`; the tests check one
against the other and both against slow pure-Python references.

Conventions
-----------
``x`` is the metric and ``y`` the human score.  Batched inputs have shape
``(B, G, n)``: ``B`` resamples, ``G`` groups, ``n`` items per group.  A pair
of items ``(i, j)`` is used only if both ``x`` and ``y`` are finite at ``i``
and at ``j`` (pairwise deletion).

Kendall sufficient statistics (per ``(b, g)``), the names of
Deutsch et al. (2023, "Ties Matter"):

====  ==================================================================
C     concordant pairs: ``sign(dx) == sign(dy) != 0``
D     discordant pairs: ``sign(dx) == -sign(dy) != 0``
Tx    pairs tied in the metric only (``|dx| <= eps``, ``dy != 0``)
Ty    pairs tied in the human score only (``dy == 0``, ``|dx| > eps``)
Txy   pairs tied in both
n     number of valid items
kx    number of distinct metric values among valid items
ky    number of distinct human values among valid items
====  ==================================================================
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from . import _jit

# Columns of the sufficient-statistics array returned by ``kendall_stats``
# (defined in a module without numba, for the registry and the levels).
from ._columns import C, D, KX, KY, N_STATS, NVALID, OFF_GRID, TX, TXY, TY  # noqa: E402,F401

# Groups with at least this many valid items use the O(n log n) algorithm of
# Knight (1966) when eps == 0; smaller ones use the direct O(n^2) double loop,
# which is faster up to a few hundred items (benchmarks/kendall_switch.py:
# crossover near n = 300 for Likert data, n = 600 for continuous data).
KNIGHT_MIN_N = 400

# Batches sharing one human score use the ranked-human kernel (Fenwick tree)
# from this group size on (crossover near n = 200, same benchmark).
RANKED_Y_MIN_N = 200

# Rows with at most this many finite entries are ranked by direct counting.
SMALL_RANK_N = 24

# Tolerance when choosing the maximum of the tie-calibration sweep.
TIE_TOL = 1e-12

# Workers of the parallel kernels (see ``_n_workers``).
_POOL = int(nb.config.NUMBA_NUM_THREADS)

# The compiled kernels depend on _POOL, which numba's cache index ignores:
# they are cached in a folder per pool size (stats/_jit.py), restored at the
# end of this module.
_jit.begin_pool_cache(_POOL)


@nb.njit(cache=True)
def _n_distinct_sorted(a):
    if a.size == 0:
        return 0
    k = 1
    for i in range(1, a.size):
        if a[i] != a[i - 1]:
            k += 1
    return k


@nb.njit(cache=True)
def _tie_pairs_sorted(a):
    """Number of tied pairs in a sorted 1-D array."""
    s = 0
    c = 1
    for i in range(1, a.size):
        if a[i] == a[i - 1]:
            c += 1
        else:
            s += c * (c - 1) // 2
            c = 1
    return s + c * (c - 1) // 2


@nb.njit(cache=True)
def _count_inversions(y, tmp):
    """Strict inversions of ``y`` (pairs i < j with y[i] > y[j]); sorts ``y``."""
    n = y.size
    inv = 0
    w = 1
    while w < n:
        lo = 0
        while lo < n - w:
            mid = lo + w
            hi = min(lo + 2 * w, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if y[j] < y[i]:
                    tmp[k] = y[j]
                    j += 1
                    inv += mid - i
                else:
                    tmp[k] = y[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = y[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = y[j]
                j += 1
                k += 1
            for t in range(lo, hi):
                y[t] = tmp[t]
            lo += 2 * w
        w *= 2
    return inv


@nb.njit(cache=True)
def _n_workers(N):
    """Workers of a parallel kernel over ``N`` tasks: one per thread, at most
    ``N``, at least 1.  Worker ``w`` takes tasks ``_chunk(N, T, w)`` (static
    contiguous chunks, as numba's own prange schedule) and works in row ``w``
    of a workspace allocated before the parallel region, so no prange body
    allocates (issue 14.1: a failed allocation inside a parallel region is
    not raised and left uninitialised memory in the result).

    The thread count is the size of numba's pool (``NUMBA_NUM_THREADS``),
    frozen at compile time: ``nb.get_num_threads()`` would stop the kernels
    from being cached.  The kernels are cached in a folder per pool size
    (``_jit.begin_pool_cache``): a cache compiled for another pool would
    split the tasks for that pool (never changing a result or a memory
    access, but leaving cores idle)."""
    return max(1, min(_POOL, N))


@nb.njit(cache=True)
def _chunk(N, T, w):
    return (w * N) // T, ((w + 1) * N) // T


@nb.njit(cache=True)
def _lexsort2(a, b, ta, tb, m):
    """Sort ``a[:m]`` ascending, ties by ``b[:m]``, moving ``b`` along
    (stable; insertion sort on runs of 16, then bottom-up merges through
    ``ta``, ``tb`` (length >= m)).  Allocates nothing."""
    run = 16
    for lo in range(0, m, run):
        hi = min(lo + run, m)
        for i in range(lo + 1, hi):
            va = a[i]
            vb = b[i]
            j = i - 1
            while j >= lo and (a[j] > va or (a[j] == va and b[j] > vb)):
                a[j + 1] = a[j]
                b[j + 1] = b[j]
                j -= 1
            a[j + 1] = va
            b[j + 1] = vb
    w = run
    while w < m:
        lo = 0
        while lo < m - w:
            mid = lo + w
            hi = min(lo + 2 * w, m)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if a[j] < a[i] or (a[j] == a[i] and b[j] < b[i]):
                    ta[k] = a[j]
                    tb[k] = b[j]
                    j += 1
                else:
                    ta[k] = a[i]
                    tb[k] = b[i]
                    i += 1
                k += 1
            while i < mid:
                ta[k] = a[i]
                tb[k] = b[i]
                i += 1
                k += 1
            while j < hi:
                ta[k] = a[j]
                tb[k] = b[j]
                j += 1
                k += 1
            for t in range(lo, hi):
                a[t] = ta[t]
                b[t] = tb[t]
            lo += 2 * w
        w *= 2


@nb.njit(cache=True)
def _kendall_pairs(xv, yv, m, eps, out):
    """Direct O(n^2) pass over ``m`` valid items (branch-free inner loop).

    With sx, sy in {-1, 0, 1} the signs of a pair's differences (a metric
    difference within eps counts as 0): C - D = sum(sx sy), pairs untied in
    the metric nx = sum(sx^2), untied in the human score ny = sum(sy^2),
    untied in both C + D = sum(sx^2 sy^2); the tie counts follow.  Distinct
    values are counted as items with no equal earlier item.
    """
    s = 0
    nx = 0
    ny = 0
    nxy = 0
    kx = 0
    ky = 0
    for i in range(m):
        xi = xv[i]
        yi = yv[i]
        eqx = 0
        eqy = 0
        for j in range(i):
            dx = xi - xv[j]
            dy = yi - yv[j]
            sx = np.int64(dx > eps) - np.int64(dx < -eps)
            sy = np.int64(dy > 0.0) - np.int64(dy < 0.0)
            s += sx * sy
            ax = sx * sx
            ay = sy * sy
            nx += ax
            ny += ay
            nxy += ax * ay
            eqx |= np.int64(dx == 0.0)
            eqy |= np.int64(dy == 0.0)
        kx += 1 - eqx
        ky += 1 - eqy
    tot = m * (m - 1) // 2
    out[C] = (nxy + s) // 2
    out[D] = (nxy - s) // 2
    out[TX] = ny - nxy
    out[TY] = nx - nxy
    out[TXY] = tot - nx - ny + nxy
    out[NVALID] = m
    out[KX] = kx
    out[KY] = ky


@nb.njit(cache=True)
def _kendall_group(x, y, eps, out, work):
    """Sufficient statistics of one group (1-D ``x``, ``y``) into ``out``;
    ``work`` (4, >= n) float64 is the workspace (nothing is allocated)."""
    n = x.size
    xv = work[0]
    yv = work[1]
    m = 0
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            xv[m] = x[i]
            yv[m] = y[i]
            m += 1
    if eps > 0.0 or m < KNIGHT_MIN_N:
        _kendall_pairs(xv, yv, m, eps, out)
        return
    out[NVALID] = m
    # Knight's algorithm: sort by (x, y); strict discordances are the
    # inversions of y in that order.
    _lexsort2(xv, yv, work[2], work[3], m)
    xo = xv[:m]
    yo = yv[:m]
    out[KX] = _n_distinct_sorted(xo)
    tot = m * (m - 1) // 2
    tx_all = _tie_pairs_sorted(xo)
    # pairs tied in both: runs of equal (x, y) in the lexicographic order
    txy = 0
    run = 1
    for i in range(1, m):
        if xo[i] == xo[i - 1] and yo[i] == yo[i - 1]:
            run += 1
        else:
            txy += run * (run - 1) // 2
            run = 1
    txy += run * (run - 1) // 2
    d = _count_inversions(yo, work[2])  # sorts yo
    ty_all = _tie_pairs_sorted(yo)
    out[KY] = _n_distinct_sorted(yo)
    c = tot - d - tx_all - ty_all + txy
    out[C] = c
    out[D] = d
    out[TX] = tx_all - txy
    out[TY] = ty_all - txy
    out[TXY] = txy


@nb.njit(parallel=True, cache=True)
def kendall_stats(x, y, eps):
    """Kendall sufficient statistics for a batch.

    Parameters
    ----------
    x : ndarray, shape (B, G, n)
        Metric scores.
    y : ndarray, shape (B, G, n) or (1, G, n)
        Human scores (a batch of one is shared by every batch item).
    eps : float
        Metric tie threshold: ``|x_i - x_j| <= eps`` is a metric tie.

    Returns
    -------
    ndarray, shape (B, G, 8)
        ``C, D, Tx, Ty, Txy, n, kx, ky`` as float64.

    Raises
    ------
    MemoryError
        When the result or the workspace (4 n floats per thread) cannot be
        allocated; both are allocated before the parallel region.
    """
    B, G, n = x.shape
    shared = y.shape[0] == 1
    N = B * G
    out = np.empty((B, G, N_STATS))
    T = _n_workers(N)
    work = np.empty((T, 4, n))
    for w in nb.prange(T):
        lo, hi = _chunk(N, T, w)
        for t in range(lo, hi):
            b = t // G
            g = t % G
            _kendall_group(x[b, g], y[0 if shared else b, g], eps, out[b, g], work[w])
    return out


# Groups with at least this many valid items are sorted by an LSD radix sort
# of the metric's bits (linear time, sequential memory passes) in the
# ranked-human kernel instead of the merge sort.
RADIX_MIN_N = 2048
_RADIX_BITS = 8
_RADIX_SIZE = 1 << _RADIX_BITS
_SIGN = np.uint64(0x8000000000000000)


@nb.njit(cache=True)
def _float_key(u):
    """The bits ``u`` of a float64 as an unsigned key ordered as the floats
    (negative: all bits flipped; positive: sign bit set).  -0.0 and 0.0 get
    adjacent keys, so equal values stay adjacent."""
    if u & _SIGN:
        return ~u
    return u | _SIGN


@nb.njit(cache=True)
def _key_float_bits(k):
    if k & _SIGN:
        return k & ~_SIGN
    return ~k


@nb.njit(cache=True)
def _radix_sort_keys(ku, rv, ku2, rv2, hist, m):
    """Sort ``ku[:m]`` ascending, moving ``rv`` along (stable LSD radix sort
    on 8-bit digits; ``ku2``, ``rv2`` (>= m) and ``hist`` (>= 256) are
    the workspace; passes whose digit is the same for every key are
    skipped).  Allocates nothing."""
    mask = np.uint64(_RADIX_SIZE - 1)
    flip = False
    for p in range(0, 64, _RADIX_BITS):
        sh = np.uint64(p)
        sk = ku2 if flip else ku
        sr = rv2 if flip else rv
        dk = ku if flip else ku2
        dr = rv if flip else rv2
        for q in range(_RADIX_SIZE):
            hist[q] = 0
        for i in range(m):
            hist[np.int64((sk[i] >> sh) & mask)] += 1
        if hist[np.int64((sk[0] >> sh) & mask)] == m:
            continue
        tot = 0
        for q in range(_RADIX_SIZE):
            c = hist[q]
            hist[q] = tot
            tot += c
        for i in range(m):
            d = np.int64((sk[i] >> sh) & mask)
            pos = hist[d]
            dk[pos] = sk[i]
            dr[pos] = sr[i]
            hist[d] = pos + 1
        flip = not flip
    if flip:
        for i in range(m):
            ku[i] = ku2[i]
            rv[i] = rv2[i]


@nb.njit(cache=True)
def _kendall_group_ranked_y(x, xbits, yr, k, out, wf, wfu, wi, wu):
    """Sufficient statistics of one group whose human scores are given as
    dense ranks ``yr`` (0..k-1, -1 = missing): sort by the metric once, then
    sweep blocks of equal metric values with a Fenwick tree over human ranks
    (O(n log n + n log k); from ``RADIX_MIN_N`` valid items the sort is a
    radix sort, O(n)); eps = 0.  ``xbits`` is ``x`` viewed as uint64.
    Workspace (nothing is allocated): ``wf`` (2, >= n) float64 and ``wfu``
    the same memory as uint64, ``wi`` (5, >= max(n + 1, 256)) int64, ``wu``
    (2, >= n) uint64."""
    n = x.size
    xv = wf[0]
    rv = wi[0]
    m = 0
    for i in range(n):
        if yr[i] >= 0 and np.isfinite(x[i]):
            m += 1
    radix = m >= RADIX_MIN_N
    m = 0
    for i in range(n):
        if yr[i] >= 0 and np.isfinite(x[i]):
            if radix:
                wu[0, m] = _float_key(xbits[i])
            else:
                xv[m] = x[i]
            rv[m] = yr[i]
            m += 1
    for t in range(N_STATS):
        out[t] = 0.0
    out[NVALID] = m
    if m == 0:
        return
    # any order with equal metric values adjacent gives the same counts
    if radix:
        _radix_sort_keys(wu[0], rv, wu[1], wi[1], wi[2], m)
        xu = wfu[0]
        for t in range(m):
            xu[t] = _key_float_bits(wu[0, t])
    else:
        _lexsort2(xv, rv, wf[1], wi[1], m)
    tree = wi[2]  # Fenwick tree over ranks 1..k
    level = wi[3]  # counts per human level (all inserted)
    block = wi[4]  # counts per human level within a block
    for r in range(k + 1):
        tree[r] = 0
    for r in range(k):
        level[r] = 0
        block[r] = 0
    c = 0
    d = 0
    tx_all = 0
    txy = 0
    inserted = 0
    kx = 0
    s = 0
    while s < m:
        e = s
        xs = xv[s]
        while e + 1 < m and xv[e + 1] == xs:
            e += 1
        kx += 1
        # queries against strictly smaller metric values
        for t in range(s, e + 1):
            r = rv[t]
            below = 0
            j = r  # prefix sum over ranks 0..r-1 -> tree indices 1..r
            while j > 0:
                below += tree[j]
                j -= j & (-j)
            c += below
            d += inserted - below - level[r]
            block[r] += 1
        cnt = e - s + 1
        tx_all += cnt * (cnt - 1) // 2
        for t in range(s, e + 1):
            r = rv[t]
            b = block[r]
            if b > 0:
                txy += b * (b - 1) // 2
                block[r] = 0
            level[r] += 1
            j = r + 1
            while j <= k:
                tree[j] += 1
                j += j & (-j)
        inserted += cnt
        s = e + 1
    ty_all = 0
    ky = 0
    for r in range(k):
        ty_all += level[r] * (level[r] - 1) // 2
        if level[r] > 0:
            ky += 1
    out[C] = c
    out[D] = d
    out[TX] = tx_all - txy
    out[TY] = ty_all - txy
    out[TXY] = txy
    out[KX] = kx
    out[KY] = ky


@nb.njit(parallel=True, cache=True)
def kendall_stats_ranked_y(x, yr, k):
    """Kendall sufficient statistics (B, G, 8) for metric batches ``x``
    (B, G, n) against one fixed human score per group given as dense ranks
    ``yr`` (G, n) (int64, -1 = missing) with ``k`` (G,) levels; eps = 0.

    Same result as ``kendall_stats(x, y, 0.0)`` with y broadcast over B.
    The result and the workspace (2 n floats, 5 (n + 1) integers and, from
    ``RADIX_MIN_N`` items, 2 n radix keys per thread) are allocated before
    the parallel region (MemoryError there).
    """
    B, G, n = x.shape
    N = B * G
    out = np.empty((B, G, N_STATS))
    T = _n_workers(N)
    wf = np.empty((T, 2, n))
    wfu = wf.view(np.uint64)
    wi = np.empty((T, 5, max(n + 1, _RADIX_SIZE)), np.int64)
    wu = np.empty((T, 2, n if n >= RADIX_MIN_N else 1), np.uint64)
    xbits = x.view(np.uint64)
    for w in nb.prange(T):
        lo, hi = _chunk(N, T, w)
        for t in range(lo, hi):
            b = t // G
            g = t % G
            _kendall_group_ranked_y(x[b, g], xbits[b, g], yr[g], k[g], out[b, g], wf[w], wfu[w],
                                    wi[w], wu[w])
    return out


# Finite values whose magnitude lies in [2**-_SAFE_EXP, 2**_SAFE_EXP] can be
# centred and squared without overflow or underflow; other rows are first
# scaled by a power of two (exact).
_SAFE_EXP = 400


@nb.njit(cache=True)
def _pow2_exponent(amax):
    """0 if ``amax`` is within the safe range, else the binary exponent ``e``
    with ``amax = f * 2**e``, ``0.5 <= f < 1`` (scaling by ``2**-e`` is exact)."""
    e = math.frexp(amax)[1]
    if -_SAFE_EXP <= e <= _SAFE_EXP:
        return 0
    return e


@nb.njit(cache=True)
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


@nb.njit(parallel=True, cache=True)
def pearson_rows(x, y):
    """Pearson's r per (b, g) of ``x`` (B, G, n) against ``y`` (B or 1, G, n)
    with pairwise deletion; NaN for fewer than 2 pairs or a constant side."""
    B, G, _ = x.shape
    shared = y.shape[0] == 1
    out = np.empty((B, G))
    for t in nb.prange(B * G):
        b = t // G
        g = t % G
        out[b, g] = _pearson_row(x[b, g], y[0 if shared else b, g])
    return out


@nb.njit(cache=True)
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


@nb.njit(parallel=True, cache=True)
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
    for w in nb.prange(T):
        lo, hi = _chunk(R, T, w)
        for r in range(lo, hi):
            _rank_row(a[r], out[r], wf[w], wi[w])
    return out


@nb.njit(cache=True)
def _tie_calibration_one(x, y, weights):
    """Tie calibration of acc_23 for one batch item.

    ``x``, ``y``: (G, n); ``weights``: (G,) weight of each group's accuracy in
    the average (already normalised; zero for unused groups).  Returns
    thresholds (K,) and the averaged accuracy at each threshold (K,).
    """
    G, n = x.shape
    # count valid pairs
    npairs = 0
    for g in range(G):
        m = 0
        for i in range(n):
            if np.isfinite(x[g, i]) and np.isfinite(y[g, i]):
                m += 1
        npairs += m * (m - 1) // 2
    diffs = np.empty(npairs)
    delta = np.empty(npairs)
    base = 0.0
    p = 0
    for g in range(G):
        wg = weights[g]
        m = 0
        for i in range(n):
            if np.isfinite(x[g, i]) and np.isfinite(y[g, i]):
                m += 1
        if m < 2:
            continue
        ng = m * (m - 1) // 2
        unit = wg / ng
        for i in range(n - 1):
            if not (np.isfinite(x[g, i]) and np.isfinite(y[g, i])):
                continue
            for j in range(i + 1, n):
                if not (np.isfinite(x[g, j]) and np.isfinite(y[g, j])):
                    continue
                dx = x[g, j] - x[g, i]
                dy = y[g, j] - y[g, i]
                ad = abs(dx)
                ytie = dy == 0.0
                if ad == 0.0:
                    # already a metric tie at eps = 0
                    if ytie:
                        base += unit
                    diffs[p] = 0.0
                    delta[p] = 0.0
                else:
                    conc = (not ytie) and ((dx > 0.0) == (dy > 0.0))
                    if conc:
                        base += unit
                        delta[p] = -unit
                    elif ytie:
                        delta[p] = unit
                    else:
                        delta[p] = 0.0
                    diffs[p] = ad
                p += 1
    order = np.argsort(diffs, kind="mergesort")
    # thresholds: 0, then each distinct positive difference
    nthr = 1
    prev = 0.0
    for k in range(npairs):
        v = diffs[order[k]]
        if v > prev:
            nthr += 1
            prev = v
    thr = np.empty(nthr)
    val = np.empty(nthr)
    thr[0] = 0.0
    val[0] = base
    cur = base
    t = 0
    prev = 0.0
    for k in range(npairs):
        v = diffs[order[k]]
        if v > prev:
            t += 1
            thr[t] = v
            prev = v
        cur += delta[order[k]]
        val[t] = cur
    return thr, val


@nb.njit(cache=True)
def tie_calibration(x, y, weights):
    """Thresholds and averaged acc_23 values of the tie-calibration sweep.

    See :func:`metaeval.stats._numpy_kernels.tie_calibration`.  Lists every
    threshold, so it materialises all within-group pairs (O(n^2) memory):
    for small data and tests; ``tie_calibration_best`` streams them.
    """
    return _tie_calibration_one(x, y, weights)


# --------------------------------------------------------------------------
# Tie calibration in O(n) memory (issue 15.2)
#
# acc(t) = sum_g u_g (base_g + sum over pairs p of g with 0 < |dx_p| <= t of
# delta_p), u_g = w_g / N_g, with delta = +1 for a pair tied in the human
# score only, -1 for a concordant pair, 0 otherwise; base_g = C_g + Txy_g
# (acc_23's numerator at t = 0, from Knight's algorithm).  Each group's valid
# items are sorted by (x, y) once; for a fixed item i the differences
# x_j - x_i (j > i) are then ascending in j, so every pair of every group is
# visited in ascending |dx| by a k-way merge of those runs through a binary
# heap of one entry per item: O(P log n) time, O(n) memory, no pair list.
# The sweep keeps S(t) = acc(t) - sum_g u_g base_g with compensated
# (Neumaier) summation and the same choice rule as the full sweep: a
# threshold replaces the best one only if it is larger by more than TIE_TOL.
#
# Workspace (per batch item; the caller allocates it before the parallel
# region, so no allocation happens inside a prange body):
#   WF (6, L) float64: xs, ys, ycopy, tmp (Knight), heap keys, group units
#   WI (4, L) int64: item -> end of its group, item -> group, heap items,
#                    item -> its next partner j
# with L = max(G * n, G, 1) (``tc_workspace_length``).
_TC_XS, _TC_YS, _TC_YC, _TC_TMP, _TC_KEY, _TC_UNIT = range(6)
_TC_END, _TC_GRP, _TC_HEAP, _TC_CURJ = range(4)
TC_FLOAT_ROWS = 6
TC_INT_ROWS = 4


def tc_workspace_length(G, n):
    """Length of the workspace rows of the streaming tie calibration."""
    return max(G * n, G, 1)


@nb.njit(cache=True)
def _lex_less(xs, ys, a, b):
    return xs[a] < xs[b] or (xs[a] == xs[b] and ys[a] < ys[b])


@nb.njit(cache=True)
def _lex_heapsort(xs, ys, lo, hi):
    """Sort xs[lo:hi], ys[lo:hi] in place by (x, y) (heapsort: no allocation)."""
    n = hi - lo
    for start in range(n // 2 - 1, -1, -1):
        _lex_sift(xs, ys, lo, start, n)
    for end in range(n - 1, 0, -1):
        a = lo
        b = lo + end
        xs[a], xs[b] = xs[b], xs[a]
        ys[a], ys[b] = ys[b], ys[a]
        _lex_sift(xs, ys, lo, 0, end)


@nb.njit(cache=True)
def _lex_sift(xs, ys, lo, root, n):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and _lex_less(xs, ys, lo + child, lo + child + 1):
            child += 1
        if _lex_less(xs, ys, lo + root, lo + child):
            a = lo + root
            b = lo + child
            xs[a], xs[b] = xs[b], xs[a]
            ys[a], ys[b] = ys[b], ys[a]
            root = child
        else:
            return


@nb.njit(cache=True)
def _heap_sift(key, item, pos, size):
    """Restore the min-heap property below ``pos`` (hole technique)."""
    k = key[pos]
    it = item[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and key[child + 1] < key[child]:
            child += 1
        if key[child] < k:
            key[pos] = key[child]
            item[pos] = item[child]
            pos = child
        else:
            break
    key[pos] = k
    item[pos] = it


@nb.njit(cache=True)
def _tie_calibration_stream(x, y, weights, dup, WF, WI):
    """(epsilon, acc_eq) of one batch item in O(G n) memory.

    ``x``, ``y``: (G, n); ``weights``, ``dup``: (G,); ``WF``, ``WI``: the
    workspace rows (see the block comment above), length >= G * n.
    """
    G, n = x.shape
    xs = WF[_TC_XS]
    ys = WF[_TC_YS]
    yc = WF[_TC_YC]
    tmp = WF[_TC_TMP]
    key = WF[_TC_KEY]
    iend = WI[_TC_END]
    igrp = WI[_TC_GRP]
    item = WI[_TC_HEAP]
    curj = WI[_TC_CURJ]
    units = WF[_TC_UNIT]
    base = 0.0
    p = 0
    for g in range(G):
        s0 = p
        for i in range(n):
            if np.isfinite(x[g, i]) and np.isfinite(y[g, i]):
                xs[p] = x[g, i]
                ys[p] = y[g, i]
                p += 1
        m = p - s0
        tot = m * (m - 1) // 2
        npairs = tot - dup[g]
        units[g] = 0.0
        if m < 2 or npairs <= 0 or weights[g] == 0.0:
            p = s0  # the group takes no part in the sweep
            continue
        _lex_heapsort(xs, ys, s0, p)
        # Knight (1966): discordant pairs are the inversions of y in (x, y) order
        tx_all = _tie_pairs_sorted(xs[s0:p])
        txy = 0
        run = 1
        for i in range(s0 + 1, p):
            if xs[i] == xs[i - 1] and ys[i] == ys[i - 1]:
                run += 1
            else:
                txy += run * (run - 1) // 2
                run = 1
        txy += run * (run - 1) // 2
        for i in range(s0, p):
            yc[i] = ys[i]
        d = _count_inversions(yc[s0:p], tmp[s0:p])
        ty_all = _tie_pairs_sorted(yc[s0:p])
        c = tot - d - tx_all - ty_all + txy
        u = weights[g] / npairs
        units[g] = u
        # pairs correct at t = 0: concordant, or tied in both (duplicates out)
        base += u * (c + txy - dup[g])
        for i in range(s0, p):
            iend[i] = p
            igrp[i] = g
    ntot = p
    # heap of one entry per item i: its next partner j = curj[i] > i
    size = 0
    for i in range(ntot):
        if i + 1 < iend[i]:
            curj[i] = i + 1
            key[size] = xs[i + 1] - xs[i]
            item[size] = i
            size += 1
    for pos in range(size // 2 - 1, -1, -1):
        _heap_sift(key, item, pos, size)
    s = 0.0  # S(t), Neumaier-compensated: s + comp
    comp = 0.0
    best_s = 0.0
    best_t = 0.0
    prev = 0.0
    while size > 0:
        dk = key[0]
        i = item[0]
        j = curj[i]
        if dk > prev:
            # every pair with |dx| <= prev has been added: S(prev) is final
            v = s + comp
            if v > best_s + TIE_TOL:
                best_s = v
                best_t = prev
            prev = dk
        if dk > 0.0:
            dy = ys[j] - ys[i]
            if dy >= 0.0:
                # human tie: the metric tie becomes correct (+u);
                # concordant pair (dx > 0 in this order): it becomes wrong (-u)
                dv = units[igrp[i]] if dy == 0.0 else -units[igrp[i]]
                t = s + dv
                if abs(s) >= abs(dv):
                    comp += (s - t) + dv
                else:
                    comp += (dv - t) + s
                s = t
        j += 1
        if j < iend[i]:
            curj[i] = j
            key[0] = xs[j] - xs[i]
        else:
            size -= 1
            key[0] = key[size]
            item[0] = item[size]
        _heap_sift(key, item, 0, size)
    v = s + comp
    if v > best_s + TIE_TOL:
        best_s = v
        best_t = prev
    return best_t, base + best_s


@nb.njit(parallel=True, cache=True)
def _tie_calibration_best_chunk(x, y, weights, dup, b0, WF, WI, out):
    """Items ``b0 .. b0 + T - 1`` (T = WF.shape[0], clipped to the batch) of
    ``tie_calibration_best``; item ``b0 + t`` works in ``WF[t]``, ``WI[t]``."""
    T = min(WF.shape[0], x.shape[0] - b0)
    shared = y.shape[0] == 1
    for t in nb.prange(T):
        b = b0 + t
        e, v = _tie_calibration_stream(x[b], y[0 if shared else b], weights[b], dup[b],
                                       WF[t], WI[t])
        out[b, 0] = e
        out[b, 1] = v


def tie_calibration_best(x, y, weights, dup_pairs=None):
    """Best (epsilon, acc_eq) for each batch item, in O(G n) memory.

    Parameters
    ----------
    x : ndarray, shape (B, G, n)
        Metric scores.
    y : ndarray, shape (B, G, n) or (1, G, n)
        Human scores (a batch of one is shared).
    weights : ndarray, shape (B, G)
        Weight of each group's accuracy in the average (zero for unused
        groups).
    dup_pairs : ndarray, shape (B, G), optional
        Pairs of each group formed by two copies of one original cell (a
        bootstrap resample drawing a cell twice); they are tied in both
        scores and are left out of the group's pair count ``N_g`` and of its
        correct pairs.  Default: none.

    Returns
    -------
    ndarray, shape (B, 2)
        The smallest threshold reaching the maximum of the averaged acc_23
        (a threshold replaces the best one only if larger by ``TIE_TOL``),
        and that maximum.

    Raises
    ------
    MemoryError
        When the workspace (``O(T G n)`` for T threads) cannot be allocated;
        it is allocated here, before the parallel region.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    B, G, n = x.shape
    w = np.ascontiguousarray(np.broadcast_to(np.asarray(weights, np.float64), (B, G)))
    if dup_pairs is None:
        dup = np.zeros((B, G))
    else:
        dup = np.ascontiguousarray(np.broadcast_to(np.asarray(dup_pairs, np.float64), (B, G)))
    out = np.empty((B, 2))
    if B == 0:
        return out
    T = max(1, min(B, nb.get_num_threads()))
    L = tc_workspace_length(G, n)
    WF = np.empty((T, TC_FLOAT_ROWS, L))
    WI = np.empty((T, TC_INT_ROWS, L), np.int64)
    for b0 in range(0, B, T):
        _tie_calibration_best_chunk(x, y, w, dup, b0, WF, WI, out)
    return out


# --------------------------------------------------------------------------
# Perm-Both with sufficient statistics prepared once per metric pair
#
# A Perm-Both resample takes, in every cell, the value of metric A or of
# metric B (``pa``) and gives the other one to ``pb``.  Each group's 2n
# candidate values are sorted once (the "entries"); a resample then selects
# its n entries for ``pa`` (the rest go to ``pb``) by one walk over that
# order, which yields the ranks (Spearman) and the x-sorted human codes
# (Kendall, by a Fenwick tree over the human levels) without sorting again.
#
# Layout of one level (G groups, cells of group g in slots gptr[g]:gptr[g+1]):
#   cell[s]   flat cell index (row-major in the N x M matrix) of slot s
#   hc[s]     human score minus the group mean
#   hr2[s]    2 * (average rank of the human score in its group) - (n + 1)
#   hcode[s]  dense rank 0..gk[g]-1 of the human score in its group
#   eptr[g]   entries of group g: eptr[g]:eptr[g+1] (2n of them), sorted by
#             (value, hcode); eslot = slot within the group (0..n-1),
#             esrc = 0 (metric A) or 1 (metric B), enew = value differs from
#             the previous entry's
#   hss[g], hrss[g], hn2[g]  sum hc^2, sum hr2^2, human-tied pairs
# ``bits`` is the packed Perm-Both coin stream of ``B * ncell`` cells
# (``numpy.unpackbits`` order): coin 1 swaps the cell.
# Output (B, G, 3, 2): [pearson, spearman, kendall_b] x [pa, pb].


@nb.njit(cache=True)
def _coin(bits, idx):
    return (bits[idx >> 3] >> (7 - (idx & 7))) & 1


@nb.njit(cache=True)
def _fen_add(tree, i, k):
    i += 1
    while i <= k:
        tree[i] += 1
        i += i & (-i)


@nb.njit(cache=True)
def _fen_prefix(tree, i):
    # number of inserted codes <= i
    i += 1
    s = 0
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@nb.njit(cache=True)
def _swap_group(bits, base, za, zb, s0, n, cell, hc, hr2, hcode, e0, e1, eslot, esrc,
                enew, k, hss, hrss, hn2, sel, fa, fb, out):
    for m in range(3):
        out[m, 0] = np.nan
        out[m, 1] = np.nan
    if n < 2:
        return
    # Pearson (two passes, exact constant check as pearson_rows)
    sa = 0.0
    sb = 0.0
    amin = np.inf
    amax = -np.inf
    bmin = np.inf
    bmax = -np.inf
    for t in range(n):
        c = cell[s0 + t]
        w = _coin(bits, base + c)
        sel[t] = w
        va = zb[c] if w else za[c]
        vb = za[c] if w else zb[c]
        sa += va
        sb += vb
        amin = min(amin, va)
        amax = max(amax, va)
        bmin = min(bmin, vb)
        bmax = max(bmax, vb)
    ma = sa / n
    mb = sb / n
    sxa = 0.0
    sxb = 0.0
    saa = 0.0
    sbb = 0.0
    for t in range(n):
        c = cell[s0 + t]
        va = zb[c] if sel[t] else za[c]
        vb = za[c] if sel[t] else zb[c]
        da = va - ma
        db = vb - mb
        h = hc[s0 + t]
        sxa += da * h
        sxb += db * h
        saa += da * da
        sbb += db * db
    if hss > 0.0:
        if amax > amin:
            out[0, 0] = min(1.0, max(-1.0, sxa / (np.sqrt(saa) * np.sqrt(hss))))
        if bmax > bmin:
            out[0, 1] = min(1.0, max(-1.0, sxb / (np.sqrt(sbb) * np.sqrt(hss))))
    # one walk over the sorted entries: Spearman and Kendall tau-b
    for q in range(k + 1):
        fa[q] = 0
        fb[q] = 0
    posa = 0
    posb = 0
    sra = 0.0
    srb = 0.0
    rra = 0.0
    rrb = 0.0
    da_ = 0
    db_ = 0
    n1a = 0
    n1b = 0
    n3a = 0
    n3b = 0
    e = e0
    while e < e1:
        if e + 1 == e1 or enew[e + 1]:
            # a run of one entry (the usual case for a continuous metric)
            sl = eslot[e]
            s = s0 + sl
            code = hcode[s]
            if esrc[e] == sel[sl]:
                ra2 = 2.0 * posa + 1 - n
                sra += ra2 * hr2[s]
                rra += ra2 * ra2
                da_ += posa - _fen_prefix(fa, code)
                _fen_add(fa, code, k)
                posa += 1
            else:
                rb2 = 2.0 * posb + 1 - n
                srb += rb2 * hr2[s]
                rrb += rb2 * rb2
                db_ += posb - _fen_prefix(fb, code)
                _fen_add(fb, code, k)
                posb += 1
            e += 1
            continue
        r = e + 1
        while r < e1 and not enew[r]:
            r += 1
        ka = 0
        for q in range(e, r):
            if esrc[q] == sel[eslot[q]]:
                ka += 1
        kb = (r - e) - ka
        ra2 = 2.0 * posa + ka - n
        rb2 = 2.0 * posb + kb - n
        lasta = -1
        runa = 0
        lastb = -1
        runb = 0
        for q in range(e, r):
            s = s0 + eslot[q]
            code = hcode[s]
            if esrc[q] == sel[eslot[q]]:
                sra += ra2 * hr2[s]
                da_ += posa - _fen_prefix(fa, code)
                if code == lasta:
                    runa += 1
                else:
                    n3a += runa * (runa - 1) // 2
                    runa = 1
                    lasta = code
            else:
                srb += rb2 * hr2[s]
                db_ += posb - _fen_prefix(fb, code)
                if code == lastb:
                    runb += 1
                else:
                    n3b += runb * (runb - 1) // 2
                    runb = 1
                    lastb = code
        n3a += runa * (runa - 1) // 2
        n3b += runb * (runb - 1) // 2
        rra += ka * ra2 * ra2
        rrb += kb * rb2 * rb2
        n1a += ka * (ka - 1) // 2
        n1b += kb * (kb - 1) // 2
        for q in range(e, r):
            code = hcode[s0 + eslot[q]]
            if esrc[q] == sel[eslot[q]]:
                _fen_add(fa, code, k)
            else:
                _fen_add(fb, code, k)
        posa += ka
        posb += kb
        e = r
    if hrss > 0.0:
        if rra > 0.0:
            out[1, 0] = min(1.0, max(-1.0, sra / (np.sqrt(rra) * np.sqrt(hrss))))
        if rrb > 0.0:
            out[1, 1] = min(1.0, max(-1.0, srb / (np.sqrt(rrb) * np.sqrt(hrss))))
    n0 = n * (n - 1) // 2
    if n0 - hn2 > 0:
        if n0 - n1a > 0:
            out[2, 0] = (n0 - n1a - hn2 + n3a - 2 * da_) / np.sqrt(
                float(n0 - n1a) * float(n0 - hn2)
            )
        if n0 - n1b > 0:
            out[2, 1] = (n0 - n1b - hn2 + n3b - 2 * db_) / np.sqrt(
                float(n0 - n1b) * float(n0 - hn2)
            )


@nb.njit(parallel=True, cache=True)
def swap_group_stats(bits, n_resamples, ncell, za, zb, gptr, cell, hc, hr2, hcode, eptr,
                     eslot, esrc, enew, gk, hss, hrss, hn2):
    """Pearson, Spearman and Kendall tau-b of both Perm-Both halves, per
    resample and group: (B, G, 3, 2).  Layout: see the block comment above."""
    B = n_resamples
    G = gptr.size - 1
    nmax = 1
    kmax = 1
    for g in range(G):
        nmax = max(nmax, gptr[g + 1] - gptr[g])
        kmax = max(kmax, gk[g])
    out = np.empty((B, G, 3, 2))
    # workspace per worker, allocated before the parallel region (issue 14.1);
    # _swap_group clears the Fenwick trees itself
    T = _n_workers(B)
    sel = np.empty((T, nmax), np.int8)
    fa = np.empty((T, kmax + 1), np.int64)
    fb = np.empty((T, kmax + 1), np.int64)
    for w in nb.prange(T):
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            base = b * ncell
            for g in range(G):
                _swap_group(bits, base, za, zb, gptr[g], gptr[g + 1] - gptr[g], cell, hc, hr2,
                            hcode, eptr[g], eptr[g + 1], eslot, esrc, enew, gk[g], hss[g],
                            hrss[g], hn2[g], sel[w], fa[w], fb[w], out[b, g])
    return out


# --------------------------------------------------------------------------
# Bootstrap replicates from the original cells (issue 15, item 1)
#
# A bootstrap replicate (resampling systems and/or inputs) is a multiset of
# the original cells: at ``global`` level cell (r, c) appears cr[r] * cc[c]
# times (cr, cc: how often row r and column c were drawn); at ``input``
# level the group of original column c holds row r cr[r] times; at
# ``item`` level the group of original row r holds column c cc[c] times.
# Each original group's valid cells are sorted by (x, y) once ("slots");
# a replicate is then a weight per slot, and
#
# * the Kendall sufficient statistics are one weighted walk over the slots
#   with a Fenwick tree over the group's dense human codes
#   (O(n log k), no sort; integer counts, so exactly today's numbers);
# * Pearson's r is the corrected two-pass algorithm of ``_pearson_row``
#   with each slot's value counted w times, summed in slot order (one pass
#   for the means, one for the centred sums; O(n), sequential reads);
# * Spearman's rho comes from the doubled average ranks 2 (weight of the
#   smaller values) + (weight of the equal ones) + 1 of the blocks of equal
#   metric values and of the human codes, in exact integer arithmetic
#   (O(n + k)).
# Pearson and Spearman thus equal the materialised replicate's values up to
# rounding (the sums run in another order; Spearman's is exact until its
# final division), not bit for bit.
#
# Slot layout of one level (G0 original groups, slots gptr[g]:gptr[g+1]):
#   ia[s], ib[s]  columns of the weight matrices wa (B, A), wb (B, Bd): the
#                 slot's weight in replicate b is wa[b, ia[s]] * wb[b, ib[s]]
#   xs[s], ys[s]  the slot's metric and human values
#   ycode[s]      dense rank 0..gk[g]-1 of the human score in its group
#   xnew[s]       1 if the metric value differs from the previous slot's
#                 (1 at the group's first slot); xynew[s] likewise for (x, y)
# Levels are coded 0 input, 1 item, 2 global.


@nb.njit(cache=True)
def _weighted_kendall_group(b, s0, s1, wa, ia, wb, ib, ycode, xnew, xynew, k, tree, cnt, out):
    """Kendall sufficient statistics of slots s0:s1 under replicate b's
    weights; ``tree`` (>= k + 1) and ``cnt`` (>= k) int64 workspace."""
    for q in range(k + 1):
        tree[q] = 0
    for q in range(k):
        cnt[q] = 0
    n = 0
    d = 0
    tx_all = 0
    txy = 0
    kx = 0
    wx = 0  # weight of the current block of equal metric values
    wxy = 0  # and of equal (metric, human) values
    for s in range(s0, s1):
        if xnew[s]:
            tx_all += wx * (wx - 1) // 2
            if wx > 0:
                kx += 1
            wx = 0
        if xynew[s]:
            txy += wxy * (wxy - 1) // 2
            wxy = 0
        w = wa[b, ia[s]] * wb[b, ib[s]]
        if w == 0:
            continue
        code = ycode[s]
        # inserted items with a larger human code: in (x, y) order they
        # have a smaller or equal metric value, and a strictly smaller one
        # (equal metric values come in ascending human order)
        j = code + 1
        le = 0
        while j > 0:
            le += tree[j]
            j -= j & (-j)
        d += w * (n - le)
        j = code + 1
        while j <= k:
            tree[j] += w
            j += j & (-j)
        cnt[code] += w
        n += w
        wx += w
        wxy += w
    tx_all += wx * (wx - 1) // 2
    if wx > 0:
        kx += 1
    txy += wxy * (wxy - 1) // 2
    ty_all = 0
    ky = 0
    for q in range(k):
        ty_all += cnt[q] * (cnt[q] - 1) // 2
        if cnt[q] > 0:
            ky += 1
    tot = n * (n - 1) // 2
    out[C] = tot - d - tx_all - ty_all + txy
    out[D] = d
    out[TX] = tx_all - txy
    out[TY] = ty_all - txy
    out[TXY] = txy
    out[NVALID] = n
    out[KX] = kx
    out[KY] = ky


@nb.njit(parallel=True, cache=True)
def boot_kendall_stats(wa, ia, wb, ib, gmult, gptr, ycode, xnew, xynew, gk):
    """Kendall sufficient statistics (B, G0, 8) of every original group in
    every bootstrap replicate (see the block comment above); groups with
    ``gmult[b, g] == 0`` (not drawn in replicate b) are left at zero.  The
    result and the workspace (2 (k + 1) integers per worker) are allocated
    before the parallel region."""
    B = wa.shape[0]
    G = gptr.size - 1
    kmax = 1
    for g in range(G):
        kmax = max(kmax, gk[g])
    out = np.zeros((B, G, N_STATS))
    N = B * G
    T = _n_workers(N)
    tree = np.empty((T, kmax + 1), np.int64)
    cnt = np.empty((T, kmax + 1), np.int64)
    for w in nb.prange(T):
        lo, hi = _chunk(N, T, w)
        for t in range(lo, hi):
            b = t // G
            g = t % G
            if gmult[b, g] == 0:
                continue
            _weighted_kendall_group(b, gptr[g], gptr[g + 1], wa, ia, wb, ib, ycode, xnew, xynew,
                                    gk[g], tree[w], cnt[w], out[b, g])
    return out


@nb.njit(cache=True)
def _weighted_pearson_group(b, s0, s1, wa, ia, wb, ib, xs, ys):
    """Pearson's r and the weight n of slots s0:s1 under replicate b's
    weights (the replicate's multiset of the group's valid cells):
    ``_pearson_row``'s corrected two-pass algorithm with each value counted
    w times (Sxx = sum w d^2 - n dbar^2, dbar = sum w d / n), over the slots
    ``xs``, ``ys`` in their sorted order.  As ``_pearson_row``, a replicate
    whose drawn values lie outside the safe range is scaled by a power of two
    taken from its own largest drawn magnitude (the sums are then taken
    again, scaled), and the result is NaN for n < 2 or a side constant in
    the replicate."""
    # no branch on the weight (0 for about a third of the slots of a
    # bootstrap draw): a slot of weight 0 adds exact zeros and is left out
    # of the extremes
    n = 0
    sx = 0.0
    sy = 0.0
    xmin = np.inf
    xmax = -np.inf
    ymin = np.inf
    ymax = -np.inf
    for s in range(s0, s1):
        w = wa[b, ia[s]] * wb[b, ib[s]]
        vx = xs[s]
        vy = ys[s]
        fw = float(w)
        n += w
        sx += fw * vx
        sy += fw * vy
        on = w > 0
        xmin = min(xmin, vx if on else np.inf)
        xmax = max(xmax, vx if on else -np.inf)
        ymin = min(ymin, vy if on else np.inf)
        ymax = max(ymax, vy if on else -np.inf)
    if n < 2 or not (xmax > xmin) or not (ymax > ymin):
        return np.nan, n
    ex = -_pow2_exponent(max(abs(xmin), abs(xmax)))
    ey = -_pow2_exponent(max(abs(ymin), abs(ymax)))
    scaled = ex != 0 or ey != 0
    if scaled:
        sx = 0.0
        sy = 0.0
        for s in range(s0, s1):
            fw = float(wa[b, ia[s]] * wb[b, ib[s]])
            sx += fw * math.ldexp(xs[s], ex)
            sy += fw * math.ldexp(ys[s], ey)
    mx = sx / n
    my = sy / n
    cx = 0.0
    cy = 0.0
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for s in range(s0, s1):
        fw = float(wa[b, ia[s]] * wb[b, ib[s]])
        if scaled:
            dx = math.ldexp(xs[s], ex) - mx
            dy = math.ldexp(ys[s], ey) - my
        else:
            dx = xs[s] - mx
            dy = ys[s] - my
        wdx = fw * dx
        wdy = fw * dy
        cx += wdx
        cy += wdy
        sxy += wdx * dy
        sxx += wdx * dx
        syy += wdy * dy
    cx /= n
    cy /= n
    sxy -= n * cx * cy
    sxx -= n * cx * cx
    syy -= n * cy * cy
    if not (sxx > 0.0 and syy > 0.0):
        return np.nan, n
    r = sxy / (np.sqrt(sxx) * np.sqrt(syy))
    return min(1.0, max(-1.0, r)), n


@nb.njit(cache=True)
def _weighted_spearman_group(b, s0, s1, wa, ia, wb, ib, ycode, xnew, k, wy, ay):
    """Spearman's rho and the weight n of slots s0:s1 under replicate b's
    weights, in exact integer arithmetic (valid for n <= ``cellboot.SPEARMAN_EXACT_MAX``).

    With doubled average ranks R = 2 (weight of the smaller values) + (weight
    of the equal ones) + 1, whose mean is n + 1:

    * Sxx = ((n^3 - n) - sum over blocks of equal metric values (t^3 - t)) / 3
      and Syy likewise over the human codes' weights W_c (the tie-corrected
      sums of squares, 4x those of plain ranks);
    * Sxy = sum_c (R_c - n - 1) (A_c - (n + 1) W_c), with A_c the sum of
      w R over the slots of human code c (``ay``; ``wy`` holds W_c).

    Every term is an integer below n^3 (< 2^63); rho = Sxy / sqrt(Sxx Syy)
    rounds once at the end, so it is at least as accurate as Pearson's r of
    the materialised replicate's ranks.  NaN for n < 2 or a side constant in
    the replicate (Sxx or Syy = 0, exactly)."""
    for q in range(k):
        wy[q] = 0
        ay[q] = 0
    n = 0
    t3 = 0
    s = s0
    while s < s1:
        e = s + 1
        while e < s1 and not xnew[e]:
            e += 1
        t = 0
        for u in range(s, e):
            t += wa[b, ia[u]] * wb[b, ib[u]]
        # no branch on t = 0 (a block not drawn adds zeros)
        rk = 2 * n + t + 1
        for u in range(s, e):
            w = wa[b, ia[u]] * wb[b, ib[u]]
            c = ycode[u]
            wy[c] += w
            ay[c] += w * rk
        t3 += t * t * t - t
        n += t
        s = e
    if n < 2:
        return np.nan, n
    n1 = n + 1
    full = n * n * n - n
    sxx = (full - t3) // 3
    cum = 0
    u3 = 0
    sxy = 0
    for c in range(k):
        wc = wy[c]
        if wc == 0:
            continue
        sxy += (2 * cum + wc + 1 - n1) * (ay[c] - n1 * wc)
        u3 += wc * wc * wc - wc
        cum += wc
    syy = (full - u3) // 3
    if sxx == 0 or syy == 0:
        return np.nan, n
    r = sxy / (np.sqrt(float(sxx)) * np.sqrt(float(syy)))
    return min(1.0, max(-1.0, r)), n


@nb.njit(parallel=True, cache=True)
def boot_pearson(wa, ia, wb, ib, gmult, gptr, xs, ys, ycode, xnew, gk, ranked):
    """Pearson's r of every original group of every bootstrap replicate (or
    Spearman's rho when ``ranked``), and its number of valid cells: (B, G0, 2);
    groups with ``gmult[b, g] == 0`` are skipped (NaN).

    Computed from the slots and the replicate's weights (block comment
    above), without gathering the replicate's cells: Pearson by
    ``_weighted_pearson_group`` on the slot values ``xs``, ``ys``; Spearman
    by ``_weighted_spearman_group`` in exact integers (groups of at most
    ``cellboot.SPEARMAN_EXACT_MAX`` replicate cells; the caller checks).  The values
    equal ``pearson_rows`` on the materialised replicate (or on its
    ``average_ranks``) up to rounding: the sums run in another order (tested
    against the NumPy twin, which materialises).  The result and the
    workspace (2 (k + 1) integers per worker) are allocated before the
    parallel region."""
    B = wa.shape[0]
    G = gptr.size - 1
    kmax = 1
    for g in range(G):
        kmax = max(kmax, gk[g])
    out = np.full((B, G, 2), np.nan)
    NT = B * G
    T = _n_workers(NT)
    wy = np.empty((T, kmax + 1), np.int64)
    ay = np.empty((T, kmax + 1), np.int64)
    for w in nb.prange(T):
        lo, hi = _chunk(NT, T, w)
        for t in range(lo, hi):
            b = t // G
            g = t % G
            if gmult[b, g] == 0:
                continue
            if ranked:
                r, n = _weighted_spearman_group(b, gptr[g], gptr[g + 1], wa, ia, wb, ib, ycode,
                                                xnew, gk[g], wy[w], ay[w])
            else:
                r, n = _weighted_pearson_group(b, gptr[g], gptr[g + 1], wa, ia, wb, ib, xs, ys)
            out[b, g, 0] = r
            out[b, g, 1] = n
    return out


# --------------------------------------------------------------------------
# Perm-Both of one statistic, bit-identical to the generic level code
# (compare / compare_all; issue 15).  The layout is permboth.PairLayout's:
# each group's valid cells (slots, in cell order) and its 2n candidate
# values sorted once.  Per resample and group the coins select each half's
# values; Pearson's r runs ``_pearson_row`` on the half's values (or average
# ranks) gathered in cell order, as ``pearson_rows`` does on the
# materialised half; the Kendall statistics are integer counts from one
# walk over the sorted entries with a Fenwick tree over the human codes.


@nb.njit(cache=True)
def _swap_walk(bits, base, e0, e1, ecell, ecode, eslot, esrc, enew, k, ranks, ra, rb, fa, fb,
               kendall):
    """One walk over a group's sorted entries for both halves: the average
    ranks (``ra``, ``rb`` by slot, when ``ranks``) and/or the Kendall
    counts (when ``kendall``).  Entry q belongs to half A when its source
    ``esrc[q]`` equals its cell's coin (A takes metric B's value where the
    coin is 1)."""
    if kendall:
        for q in range(k + 1):
            fa[q] = 0
            fb[q] = 0
    posa = 0
    posb = 0
    da = 0
    db = 0
    n1a = 0
    n1b = 0
    n3a = 0
    n3b = 0
    kxa = 0
    kxb = 0
    e = e0
    while e < e1:
        if e + 1 == e1 or enew[e + 1]:
            # a block of one entry (the usual case for a continuous metric)
            code = ecode[e]
            if esrc[e] == _coin(bits, base + ecell[e]):
                if ranks:
                    ra[eslot[e]] = posa + 1.0
                if kendall:
                    da += posa - _fen_prefix(fa, code)
                    _fen_add(fa, code, k)
                    kxa += 1
                posa += 1
            else:
                if ranks:
                    rb[eslot[e]] = posb + 1.0
                if kendall:
                    db += posb - _fen_prefix(fb, code)
                    _fen_add(fb, code, k)
                    kxb += 1
                posb += 1
            e += 1
            continue
        r = e + 1
        while r < e1 and not enew[r]:
            r += 1
        ka = 0
        for q in range(e, r):
            if esrc[q] == _coin(bits, base + ecell[q]):
                ka += 1
        kb = (r - e) - ka
        if ranks:
            # average rank (1-based) of a block of ka equal values from posa on
            rka = posa + 0.5 * (ka + 1)
            rkb = posb + 0.5 * (kb + 1)
            for q in range(e, r):
                if esrc[q] == _coin(bits, base + ecell[q]):
                    ra[eslot[q]] = rka
                else:
                    rb[eslot[q]] = rkb
        if kendall:
            # entries of a block are sorted by human code: runs of equal codes
            lasta = -1
            runa = 0
            lastb = -1
            runb = 0
            for q in range(e, r):
                code = ecode[q]
                if esrc[q] == _coin(bits, base + ecell[q]):
                    da += posa - _fen_prefix(fa, code)
                    if code == lasta:
                        runa += 1
                    else:
                        n3a += runa * (runa - 1) // 2
                        runa = 1
                        lasta = code
                else:
                    db += posb - _fen_prefix(fb, code)
                    if code == lastb:
                        runb += 1
                    else:
                        n3b += runb * (runb - 1) // 2
                        runb = 1
                        lastb = code
            n3a += runa * (runa - 1) // 2
            n3b += runb * (runb - 1) // 2
            n1a += ka * (ka - 1) // 2
            n1b += kb * (kb - 1) // 2
            kxa += 1 if ka > 0 else 0
            kxb += 1 if kb > 0 else 0
            for q in range(e, r):
                if esrc[q] == _coin(bits, base + ecell[q]):
                    _fen_add(fa, ecode[q], k)
                else:
                    _fen_add(fb, ecode[q], k)
        posa += ka
        posb += kb
        e = r
    return da, db, n1a, n1b, n3a, n3b, kxa, kxb


@nb.njit(cache=True)
def _swap_kendall_out(st, n, d, n1, n3, kx, k, hn2):
    # C, D, Tx (metric only), Ty (human only), Txy, n, kx, ky as _kendall_pairs
    n0 = n * (n - 1) // 2
    st[C] = n0 - d - n1 - hn2 + n3
    st[D] = d
    st[TX] = n1 - n3
    st[TY] = hn2 - n3
    st[TXY] = n3
    st[NVALID] = n
    st[KX] = kx
    st[KY] = k if n > 0 else 0


@nb.njit(parallel=True, cache=True)
def swap_pair_values(bits, n_resamples, ncell, za, zb, gptr, cell, hy, eptr, ecell, ecode, eslot,
                     esrc, enew, gk, hn2, which):
    """One statistic of both Perm-Both halves per resample and group.

    ``which`` 0: Pearson's r of the halves against ``hy`` (the human values
    by slot), 1: Spearman's rho (``hy``: the human average ranks by slot),
    both (B, G, 2, 1); 2: the Kendall sufficient statistics (B, G, 2, 8).
    NaN (Pearson, Spearman) for groups of fewer than 2 cells or a constant
    side, as ``pearson_rows``.
    """
    B = n_resamples
    G = gptr.size - 1
    nmax = 1
    kmax = 1
    for g in range(G):
        nmax = max(nmax, gptr[g + 1] - gptr[g])
        kmax = max(kmax, gk[g])
    ns = N_STATS if which == 2 else 1
    out = np.empty((B, G, 2, ns))
    T = _n_workers(B)
    # workspace per worker, before the parallel region (issue 14.1)
    xa = np.empty((T, nmax))
    xb = np.empty((T, nmax))
    fa = np.empty((T, kmax + 1), np.int64)
    fb = np.empty((T, kmax + 1), np.int64)
    for w in nb.prange(T):
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            base = b * ncell
            for g in range(G):
                s0 = gptr[g]
                n = gptr[g + 1] - s0
                if which == 2:
                    da, db, n1a, n1b, n3a, n3b, kxa, kxb = _swap_walk(
                        bits, base, eptr[g], eptr[g + 1], ecell, ecode, eslot, esrc, enew, gk[g],
                        False, xa[w], xb[w], fa[w], fb[w], True)
                    _swap_kendall_out(out[b, g, 0], n, da, n1a, n3a, kxa, gk[g], hn2[g])
                    _swap_kendall_out(out[b, g, 1], n, db, n1b, n3b, kxb, gk[g], hn2[g])
                    continue
                if which == 1:
                    _swap_walk(bits, base, eptr[g], eptr[g + 1], ecell, ecode, eslot, esrc, enew,
                               gk[g], True, xa[w], xb[w], fa[w], fb[w], False)
                else:
                    for t in range(n):
                        c = cell[s0 + t]
                        if _coin(bits, base + c):
                            xa[w, t] = zb[c]
                            xb[w, t] = za[c]
                        else:
                            xa[w, t] = za[c]
                            xb[w, t] = zb[c]
                h = hy[s0:s0 + n]
                out[b, g, 0, 0] = _pearson_row(xa[w, :n], h)
                out[b, g, 1, 0] = _pearson_row(xb[w, :n], h)
    return out


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


@nb.njit(cache=True)
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


@nb.njit(cache=True)
def _acc_lo(bits):
    """Lowest limb ``_acc_add`` touches for this value."""
    e = (bits >> 52) & 0x7FF
    return ((e - 1 if e > 0 else 0) >> 5) + 2


@nb.njit(cache=True)
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


@nb.njit(cache=True)
def _grid_mean(K, n, grid):
    """K / (grid n): both integers below 2^53, so one correctly rounded division."""
    return float(K) / float(grid * n)


@nb.njit(cache=True)
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


@nb.njit(parallel=True, cache=True)
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
    for w in nb.prange(T):
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


@nb.njit(parallel=True, cache=True)
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
    for w in nb.prange(T):  # the grid decision, split over the columns
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
    for w in nb.prange(T):
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


@nb.njit(cache=True)
def _row_lows(bits, lows, highs):
    """Lowest and highest ``_acc_lo`` of the nonzero values of each row of
    (N, M) IEEE bits, into ``lows``, ``highs`` (N,)."""
    N, M = bits.shape
    for r in range(N):
        lows[r] = N_ACC
        highs[r] = -1
        for c in range(M):
            if bits[r, c] != 0:
                q = _acc_lo(bits[r, c])
                lows[r] = min(lows[r], q)
                highs[r] = max(highs[r], q)


@nb.njit(parallel=True, cache=True)
def boot_row_means(xs, xcodes, ys, ycodes, grid_all, cc, rows_used, cnt, grid):
    """Matched means of the bootstrap replicates' rows, of the metric and of
    the human score: (2, B, N), correctly rounded (the means
    ``exact.means`` takes on the materialised replicate).  ``xs``, ``ys``
    (N, M) hold the scores with 0.0 in the cells that are not valid and
    ``xcodes``, ``ycodes`` their grid codes (0 there); ``grid_all`` (2,)
    whether every valid cell of a score is on the grid; ``cc`` (B, M) the
    column multiplicities (replicate row r holds column c cc[b, c] times);
    ``cnt`` (B, N) the valid cells of each replicate row.  A replicate takes
    the grid codes of a score when all its drawn valid cells are on the grid
    (one scan, which stops at the first drawn cell off the grid), else the
    exact sums.  Rows with ``rows_used[b, r] == 0`` or no valid cell: NaN.
    Result and workspace are allocated before the parallel region."""
    B = cc.shape[0]
    N, M = xs.shape
    out = np.empty((2, B, N))
    xb = xs.view(np.int64)
    yb = ys.view(np.int64)
    lows = np.empty((2, N), np.int64)
    highs = np.empty((2, N), np.int64)
    _row_lows(xb, lows[0], highs[0])
    _row_lows(yb, lows[1], highs[1])
    T = _n_workers(B)
    accs = np.zeros((T, N_ACC), np.int64)
    for w in nb.prange(T):
        acc = accs[w]
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            for h in range(2):
                vb = xb if h == 0 else yb
                codes = xcodes if h == 0 else ycodes
                on_grid = grid_all[h] != 0
                if not on_grid:
                    on_grid = True
                    for r in range(N):
                        if rows_used[b, r] == 0:
                            continue
                        for c in range(M):
                            if cc[b, c] != 0 and codes[r, c] == OFF_GRID:
                                on_grid = False
                                break
                        if not on_grid:
                            break
                for r in range(N):
                    n = cnt[b, r]
                    if rows_used[b, r] == 0 or n == 0:
                        out[h, b, r] = np.nan
                    elif on_grid:
                        K = 0
                        for c in range(M):
                            K += cc[b, c] * codes[r, c]
                        out[h, b, r] = _grid_mean(K, n, grid)
                    else:
                        for c in range(M):
                            _acc_add(acc, vb[r, c], cc[b, c])
                        out[h, b, r] = _acc_mean(acc, lows[h, r], highs[h, r], n)
    return out


@nb.njit(cache=True)
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


@nb.njit(cache=True)
def _mant_pos(v):
    """|float| = mant * 2^(pos - 1074) for IEEE bits ``v``."""
    e = (v >> 52) & 0x7FF
    mant = v & 0xFFFFFFFFFFFFF
    if e == 0:
        return mant, 0
    return mant | (1 << 52), e - 1


@nb.njit(cache=True)
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


@nb.njit(cache=True)
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


@nb.njit(parallel=True, cache=True)
def swap_group_means(bits, n_resamples, ncell, za, zb, acodes, bcodes, grid_all, gptr, cell,
                     grid):
    """Per-group means of both Perm-Both halves: (B, G, 2), NaN for empty
    groups, correctly rounded (the means ``exact.means`` takes on the
    materialised halves, so groups holding the same values in any order
    get the same mean).  ``acodes``, ``bcodes``: grid codes of ``za``,
    ``zb``; ``grid_all``: both are on the grid in every cell of the groups.
    A half takes the grid codes when every value it holds is on the grid
    (one scan, which stops at the first value off it), else exact sums.

    The exact sums: when the layout's values span few enough bits (lowest
    set bit s to the top bit, plus the bits of the largest group's count, at
    most 124; z-scores span about 60-80), each value is x 2^(s - 1074) with
    the integer x in three 31-bit words, precomputed per slot, and a half's
    sum is three int64 sums (exact), put into the limbs once per group;
    otherwise every value goes into the limbs (``_acc_add``)."""
    B = n_resamples
    G = gptr.size - 1
    S = cell.size
    out = np.empty((B, G, 2))
    ab = za.view(np.int64)
    bb = zb.view(np.int64)
    low = N_ACC
    high = -1
    s = 1 << 30
    top = -1
    nmax = 1
    for g in range(G):
        nmax = max(nmax, gptr[g + 1] - gptr[g])
    for q in range(S):
        c = cell[q]
        for v in (ab[c], bb[c]):
            if v != 0 and v != -(1 << 63):
                low = min(low, _acc_lo(v))
                high = max(high, _acc_lo(v))
                mant, pos = _mant_pos(v)
                s = min(s, pos + math.frexp(float(mant & -mant))[1] - 1)  # lowest set bit
                top = max(top, pos + math.frexp(float(mant))[1] - 1)
    fixed = top < 0 or (top - s + 1) + math.frexp(float(nmax))[1] <= 124
    if top < 0:
        s = 0
    wa = np.zeros((S if fixed else 0, 3), np.int64)
    wb = np.zeros((S if fixed else 0, 3), np.int64)
    for q in range(S if fixed else 0):
        _fixed_words(ab[cell[q]], s, wa[q])
        _fixed_words(bb[cell[q]], s, wb[q])
    flo = (s >> 5) + 2
    fhi = ((s + 62) >> 5) + 2
    T = _n_workers(B)
    accs = np.zeros((T, 2, N_ACC), np.int64)  # before the parallel region (issue 14.1)
    for w in nb.prange(T):
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            base = b * ncell
            ga = grid_all
            gb = grid_all
            if not grid_all:
                ga = True
                gb = True
                for q in range(S):
                    c = cell[q]
                    if _coin(bits, base + c):
                        ga = ga and bcodes[c] != OFF_GRID
                        gb = gb and acodes[c] != OFF_GRID
                    else:
                        ga = ga and acodes[c] != OFF_GRID
                        gb = gb and bcodes[c] != OFF_GRID
                    if not (ga or gb):
                        break
            for g in range(G):
                s0 = gptr[g]
                n = gptr[g + 1] - s0
                if n == 0:
                    out[b, g, 0] = np.nan
                    out[b, g, 1] = np.nan
                    continue
                if fixed and not ga and not gb:
                    a0 = 0
                    a1 = 0
                    a2 = 0
                    b0 = 0
                    b1 = 0
                    b2 = 0
                    for t in range(n):
                        q = s0 + t
                        if _coin(bits, base + cell[q]):
                            a0 += wb[q, 0]
                            a1 += wb[q, 1]
                            a2 += wb[q, 2]
                            b0 += wa[q, 0]
                            b1 += wa[q, 1]
                            b2 += wa[q, 2]
                        else:
                            a0 += wa[q, 0]
                            a1 += wa[q, 1]
                            a2 += wa[q, 2]
                            b0 += wb[q, 0]
                            b1 += wb[q, 1]
                            b2 += wb[q, 2]
                    for h in range(2):
                        acc = accs[w, h]
                        _acc_add_int(acc, a2 if h == 0 else b2, s)
                        _acc_add_int(acc, a1 if h == 0 else b1, s + 31)
                        _acc_add_int(acc, a0 if h == 0 else b0, s + 62)
                        out[b, g, h] = _acc_mean(acc, flo, fhi, n)
                    continue
                Ka = 0
                Kb = 0
                for t in range(n):
                    c = cell[s0 + t]
                    if _coin(bits, base + c):
                        va, vb, ka, kb = bb[c], ab[c], bcodes[c], acodes[c]
                    else:
                        va, vb, ka, kb = ab[c], bb[c], acodes[c], bcodes[c]
                    if ga:
                        Ka += ka
                    else:
                        _acc_add(accs[w, 0], va, 1)
                    if gb:
                        Kb += kb
                    else:
                        _acc_add(accs[w, 1], vb, 1)
                out[b, g, 0] = _grid_mean(Ka, n, grid) if ga else _acc_mean(accs[w, 0], low, high, n)
                out[b, g, 1] = _grid_mean(Kb, n, grid) if gb else _acc_mean(accs[w, 1], low, high, n)
    return out


_jit.end_pool_cache(globals())
