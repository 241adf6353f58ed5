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

import numba as nb
import numpy as np

# Columns of the sufficient-statistics array returned by ``kendall_stats``.
C, D, TX, TY, TXY, NVALID, KX, KY = range(8)
N_STATS = 8

# Groups with more valid items than this use the O(n log n) algorithm of
# Knight (1966) when eps == 0; smaller ones use the direct O(n^2) double loop.
KNIGHT_MIN_N = 64

# Rows with at most this many finite entries are ranked by direct counting.
SMALL_RANK_N = 24

# Tolerance when choosing the maximum of the tie-calibration sweep.
TIE_TOL = 1e-12


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
def _kendall_small(x, y, eps, out):
    """Direct O(n^2) pass over one group (branch-free inner loop).

    With sx, sy in {-1, 0, 1} the signs of a pair's differences (a metric
    difference within eps counts as 0): C - D = sum(sx sy), pairs untied in
    the metric nx = sum(sx^2), untied in the human score ny = sum(sy^2),
    untied in both C + D = sum(sx^2 sy^2); the tie counts follow.  Distinct
    values are counted as items with no equal earlier item.
    """
    n = x.size
    xv = np.empty(n)
    yv = np.empty(n)
    m = 0
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            xv[m] = x[i]
            yv[m] = y[i]
            m += 1
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
def _kendall_group(x, y, eps, out):
    """Sufficient statistics of one group (1-D ``x``, ``y``) into ``out``."""
    n = x.size
    if eps > 0.0 or n < KNIGHT_MIN_N:
        _kendall_small(x, y, eps, out)
        return
    idx = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            idx[m] = i
            m += 1
    if m < KNIGHT_MIN_N:
        _kendall_small(x[idx[:m]], y[idx[:m]], eps, out)
        return
    xv = np.empty(m)
    yv = np.empty(m)
    for k in range(m):
        xv[k] = x[idx[k]]
        yv[k] = y[idx[k]]
    out[NVALID] = m
    # Knight's algorithm: sort by (x, y); strict discordances are the
    # inversions of y in that order.
    order = np.argsort(yv, kind="mergesort")
    order = order[np.argsort(xv[order], kind="mergesort")]
    xo = xv[order]
    yo = yv[order]
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
    ycopy = yo.copy()
    d = _count_inversions(ycopy, np.empty(m))
    ty_all = _tie_pairs_sorted(ycopy)  # ycopy is now sorted
    out[KY] = _n_distinct_sorted(ycopy)
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
    """
    B, G, _ = x.shape
    shared = y.shape[0] == 1
    out = np.empty((B, G, N_STATS))
    for t in nb.prange(B * G):
        b = t // G
        g = t % G
        _kendall_group(x[b, g], y[0 if shared else b, g], eps, out[b, g])
    return out


@nb.njit(cache=True)
def _kendall_group_ranked_y(x, yr, k, out):
    """Sufficient statistics of one group whose human scores are given as
    dense ranks ``yr`` (0..k-1, -1 = missing): sort by the metric once, then
    sweep blocks of equal metric values with a Fenwick tree over human ranks
    (O(n log n + n log k)); eps = 0."""
    n = x.size
    idx = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        if yr[i] >= 0 and np.isfinite(x[i]):
            idx[m] = i
            m += 1
    for t in range(N_STATS):
        out[t] = 0.0
    out[NVALID] = m
    if m == 0:
        return
    xv = np.empty(m)
    for t in range(m):
        xv[t] = x[idx[t]]
    order = np.argsort(xv)
    tree = np.zeros(k + 1, np.int64)  # Fenwick tree over ranks 1..k
    level = np.zeros(k, np.int64)  # counts per human level (all inserted)
    block = np.zeros(k, np.int64)  # counts per human level within a block
    c = 0
    d = 0
    tx_all = 0
    txy = 0
    inserted = 0
    kx = 0
    s = 0
    while s < m:
        e = s
        xs = xv[order[s]]
        while e + 1 < m and xv[order[e + 1]] == xs:
            e += 1
        kx += 1
        # queries against strictly smaller metric values
        for t in range(s, e + 1):
            r = yr[idx[order[t]]]
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
            r = yr[idx[order[t]]]
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
    """
    B, G, _ = x.shape
    out = np.empty((B, G, N_STATS))
    for t in nb.prange(B * G):
        b = t // G
        g = t % G
        _kendall_group_ranked_y(x[b, g], yr[g], k[g], out[b, g])
    return out


@nb.njit(cache=True)
def _pearson_row(x, y):
    n = x.size
    m = 0
    sx = 0.0
    sy = 0.0
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
    # scale by the largest magnitude so sums of squares cannot overflow
    ax = max(abs(xmin), abs(xmax))
    ay = max(abs(ymin), abs(ymax))
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            sx += x[i] / ax
            sy += y[i] / ay
    mx = sx / m
    my = sy / m
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for i in range(n):
        if np.isfinite(x[i]) and np.isfinite(y[i]):
            dx = x[i] / ax - mx
            dy = y[i] / ay - my
            sxy += dx * dy
            sxx += dx * dx
            syy += dy * dy
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
def _rank_row(a, out):
    """Average ranks (1-based) of the finite entries of ``a``; NaN elsewhere."""
    n = a.size
    idx = np.empty(n, np.int64)
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
    vals = np.empty(m)
    for k in range(m):
        vals[k] = a[idx[k]]
    order = np.argsort(vals)
    k = 0
    while k < m:
        e = k
        while e + 1 < m and vals[order[e + 1]] == vals[order[k]]:
            e += 1
        r = 0.5 * (k + e) + 1.0
        for t in range(k, e + 1):
            out[idx[order[t]]] = r
        k = e + 1


@nb.njit(parallel=True, cache=True)
def average_ranks(a):
    """Average ranks along the last axis of a 2-D array, ignoring non-finite
    entries (which get NaN); scipy ``rankdata(method="average",
    nan_policy="omit")``."""
    R = a.shape[0]
    out = np.empty(a.shape)
    for r in nb.prange(R):
        _rank_row(a[r], out[r])
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

    See :func:`metaeval.stats._numpy_kernels.tie_calibration`.
    """
    return _tie_calibration_one(x, y, weights)


@nb.njit(parallel=True, cache=True)
def tie_calibration_best(x, y, weights):
    """Best (epsilon, acc_eq) for each batch item.

    ``x``, ``y``: (B, G, n); ``weights``: (B, G).  Returns (B, 2): the
    smallest threshold reaching the maximum, and that maximum.
    """
    B = x.shape[0]
    out = np.empty((B, 2))
    for b in nb.prange(B):
        thr, val = _tie_calibration_one(x[b], y[b], weights[b])
        best = 0
        for k in range(1, val.size):
            # tolerance: the sweep accumulates floating-point increments, so
            # mathematically equal values may differ in the last bits; the
            # smallest threshold wins among (near-)equal maxima.
            if val[k] > val[best] + TIE_TOL:
                best = k
        out[b, 0] = thr[best]
        out[b, 1] = val[best]
    return out
