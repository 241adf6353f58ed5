"""Kendall sufficient statistics: numba kernels and their NumPy twins (private).

Kendall sufficient statistics (per ``(b, g)``), the names of
Deutsch et al. (2023, "Ties Matter"); the columns are in :mod:`._columns`:

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

``kendall_stats`` (any human scores; the direct double loop or Knight's
algorithm) and ``kendall_stats_ranked_y`` (a batch sharing one ranked human
score; a Fenwick tree), then their NumPy twins ``kendall_stats_numpy`` and
``kendall_stats_ranked_y_numpy``.  Conventions in :mod:`._kbase`.
"""

from __future__ import annotations

import numpy as np

from ._columns import KX, KY, N_STATS, NVALID, TX, TXY, TY, C, D
from ._jit import kernel
from ._kbase import (
    _chunk,
    _count_inversions,
    _lexsort2,
    _n_distinct_sorted,
    _n_workers,
    _tie_pairs_sorted,
)

# numba.prange once the family is compiled (_jit.compile_family); the builtin
# range until then.
prange = range

_CHUNK_ELEMS = 2_000_000


# Groups with at least this many valid items use the O(n log n) algorithm of
# Knight (1966) when eps == 0; smaller ones use the direct O(n^2) double loop,
# which is faster up to a few hundred items (benchmarks/kendall_switch.py:
# crossover near n = 300 for Likert data, n = 600 for continuous data).
KNIGHT_MIN_N = 400

# Batches sharing one human score use the ranked-human kernel (Fenwick tree)
# from this group size on (crossover near n = 200, same benchmark).
RANKED_Y_MIN_N = 200


@kernel
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


@kernel
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


@kernel(parallel=True)
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
    for w in prange(T):
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


@kernel
def _float_key(u):
    """The bits ``u`` of a float64 as an unsigned key ordered as the floats
    (negative: all bits flipped; positive: sign bit set).  -0.0 and 0.0 get
    adjacent keys, so equal values stay adjacent."""
    if u & _SIGN:
        return ~u
    return u | _SIGN


@kernel
def _key_float_bits(k):
    if k & _SIGN:
        return k & ~_SIGN
    return ~k


@kernel
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


@kernel
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


@kernel(parallel=True)
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
    for w in prange(T):
        lo, hi = _chunk(N, T, w)
        for t in range(lo, hi):
            b = t // G
            g = t % G
            _kendall_group_ranked_y(x[b, g], xbits[b, g], yr[g], k[g], out[b, g], wf[w], wfu[w],
                                    wi[w], wu[w])
    return out


# --------------------------------------------------------------------------
# The Kendall-family statistics from the sufficient statistics, in the
# kernel: the same IEEE operations in the same order as the NumPy twin
# (``kendall_values_numpy``, which ``coefficients.kendall_from_stats`` runs on
# small arrays), one pass over the rows instead of a dozen strided NumPy
# passes with their temporaries.

#: ``variant`` codes of :func:`kendall_values`.
KENDALL_VARIANT_CODES = {"b": 0, "c": 1, "23": 2, "acc23": 3}


@kernel(error_model="numpy")
def kendall_values(s, variant):
    """The statistic of each row of ``s`` (R, 8) (Kendall sufficient
    statistics): ``variant`` 0 tau-b, 1 tau-c, 2 tau-23, 3 acc-23
    (:data:`KENDALL_VARIANT_CODES`); NaN where undefined."""
    R = s.shape[0]
    out = np.empty(R)
    for r in range(R):
        c = s[r, C]
        d = s[r, D]
        tx = s[r, TX]
        ty = s[r, TY]
        txy = s[r, TXY]
        npairs = c + d + tx + ty + txy
        if variant == 0:
            a = npairs - tx - txy
            b = npairs - ty - txy
            bad = a == 0 or b == 0
            val = (c - d) / np.sqrt(a * b)
        elif variant == 1:
            k = min(s[r, KX], s[r, KY])
            n = s[r, NVALID]
            bad = k < 2
            val = 2.0 * (c - d) / (n * n * (k - 1) / k)
        elif variant == 2:
            bad = False
            val = (c + txy - d - tx - ty) / npairs
        else:
            bad = False
            val = (c + txy) / npairs
        out[r] = np.nan if (bad or npairs == 0) else val
    return out


# --------------------------------------------------------------------------
# NumPy twins: same signatures and results, used when numba is disabled
# (METAEVAL_DISABLE_NUMBA=1), on small batches and as the cross-check in tests.


def _n_distinct(a, valid):
    """Distinct finite values per row of (R, n) ``a`` restricted to ``valid``."""
    s = np.sort(np.where(valid, a, np.inf), axis=-1)
    new = np.ones_like(s, dtype=bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    return (new & np.isfinite(s)).sum(-1)


def kendall_stats_numpy(x, y, eps):
    """See :func:`kendall_stats`."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    B, G, n = x.shape
    out = np.zeros((B, G, N_STATS))
    xf = x.reshape(B * G, n)
    yf = y.reshape(B * G, n)
    of = out.reshape(B * G, N_STATS)
    iu, ju = np.triu_indices(n, 1)
    step = max(1, _CHUNK_ELEMS // max(1, iu.size))
    for lo in range(0, B * G, step):
        xs = xf[lo : lo + step]
        ys = yf[lo : lo + step]
        valid = np.isfinite(xs) & np.isfinite(ys)
        pv = valid[:, iu] & valid[:, ju]
        with np.errstate(over="ignore", invalid="ignore"):
            dx = xs[:, ju] - xs[:, iu]
            dy = ys[:, ju] - ys[:, iu]
        xt = np.abs(dx) <= eps
        yt = dy == 0
        o = of[lo : lo + step]
        o[:, TXY] = (pv & xt & yt).sum(-1)
        o[:, TX] = (pv & xt & ~yt).sum(-1)
        o[:, TY] = (pv & ~xt & yt).sum(-1)
        strict = pv & ~xt & ~yt
        same = (dx > 0) == (dy > 0)
        o[:, C] = (strict & same).sum(-1)
        o[:, D] = (strict & ~same).sum(-1)
        o[:, NVALID] = valid.sum(-1)
        o[:, KX] = _n_distinct(xs, valid)
        o[:, KY] = _n_distinct(ys, valid)
    return out


def kendall_stats_ranked_y_numpy(x, yr, k):
    """See :func:`kendall_stats_ranked_y`."""
    y = np.where(yr >= 0, yr, np.nan).astype(float)
    return kendall_stats_numpy(x, np.broadcast_to(y, x.shape), 0.0)


def kendall_values_numpy(s, variant):
    """A Kendall-family statistic from sufficient statistics ``s`` (..., 8)
    (``variant`` ``"b"``, ``"c"``, ``"23"`` or ``"acc23"``; the kernel takes
    its code, :data:`KENDALL_VARIANT_CODES`)."""
    if not isinstance(variant, str):
        variant = {v: k for k, v in KENDALL_VARIANT_CODES.items()}[int(variant)]
    c, d, tx, ty, txy, n = (s[..., k] for k in (C, D, TX, TY, TXY, NVALID))
    npairs = c + d + tx + ty + txy
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            val = (c - d) / np.sqrt((npairs - tx - txy) * (npairs - ty - txy))
            bad = (npairs - tx - txy == 0) | (npairs - ty - txy == 0)
        elif variant == "c":
            k = np.minimum(s[..., KX], s[..., KY])
            val = 2.0 * (c - d) / (n * n * (k - 1) / k)
            bad = k < 2
        elif variant == "23":
            val = (c + txy - d - tx - ty) / npairs
            bad = np.zeros(val.shape, bool)
        elif variant == "acc23":
            val = (c + txy) / npairs
            bad = np.zeros(val.shape, bool)
        else:  # pragma: no cover - internal
            raise ValueError(variant)
    bad = bad | (npairs == 0)
    return np.where(bad, np.nan, val)
