"""Bootstrap replicates as weights on the original cells (private).

``boot_kendall_stats``, ``boot_pearson`` (Pearson or Spearman) and
``boot_row_means`` (correctly rounded system means), then their NumPy twins
``*_numpy``, which expand each replicate.  The layouts are built by
:mod:`metaeval.stats.cellboot`.  Conventions in :mod:`._kbase`.
"""

from __future__ import annotations

import math

import numpy as np

from ._columns import KX, KY, N_STATS, NVALID, OFF_GRID, TX, TXY, TY, C, D
from ._exactsum import (
    N_ACC,
    _acc_add,
    _acc_lo,
    _acc_mean,
    _exact_mean,
    _grid_mean,
    _grid_mean_numpy,
)
from ._jit import kernel
from ._kbase import _chunk, _n_workers
from ._kendall import kendall_stats_numpy
from ._pearson import _pow2_exponent, pearson_rows_numpy

# numba.prange once the family is compiled (_jit.compile_family); the builtin
# range until then.
prange = range


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


#: Groups of at most this many slots count the discordant weight pair by
#: pair (in ``boot_kendall_stats``, over the slots' weights: a triangular
#: loop with no data-dependent branch, as the drawn weights are random);
#: larger groups with at most ``SMALL_K``
#: human levels by a scan of the level counts, others by a Fenwick tree
#: (``_weighted_kendall_group``).  All three are exact integer sums of the
#: same products, so the same statistics.
PAIRS_MAX_N = 32
SMALL_K = 16


@kernel
def _kendall_stats_out(out, n, d, tx_all, txy, kx, cnt, k):
    """The eight statistics from the walk's counts (``cnt``: weight per
    human level)."""
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


@kernel
def _weighted_kendall_group(b, s0, s1, wa, ia, wb, ib, ycode, xnew, xynew, k, tree, cnt, out):
    """Kendall sufficient statistics of slots s0:s1 under replicate b's
    weights; ``tree`` (>= k + 1) and ``cnt`` (>= k) int64 workspace.

    The discordant weight D = sum over slots j of w_j times the weight of
    the earlier slots with a larger human code (in (x, y) order they have a
    smaller or equal metric value, and a strictly smaller one, as equal
    metric values come in ascending human order): for at most ``SMALL_K``
    human levels a scan of the level counts (a fixed number of steps, no
    data-dependent branch), else a Fenwick tree."""
    fen = k > SMALL_K
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
        code = ycode[s]
        if fen:
            if w == 0:
                continue
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
        else:
            # a slot not drawn (w = 0) adds exact zeros
            gt = 0
            for q in range(k):
                gt += cnt[q] if q > code else 0
            d += w * gt
        cnt[code] += w
        n += w
        wx += w
        wxy += w
    tx_all += wx * (wx - 1) // 2
    if wx > 0:
        kx += 1
    txy += wxy * (wxy - 1) // 2
    _kendall_stats_out(out, n, d, tx_all, txy, kx, cnt, k)


@kernel(parallel=True)
def boot_kendall_stats(wa, ia, wb, ib, gmult, gptr, ycode, xnew, xynew, gk):
    """Kendall sufficient statistics (B, G0, 8) of every original group in
    every bootstrap replicate (see the block comment above); groups with
    ``gmult[b, g] == 0`` (not drawn in replicate b) are left at zero.  The
    result and the workspace (2 (k + 1) + min(n, 32) integers per worker)
    are allocated before the parallel region."""
    B = wa.shape[0]
    G = gptr.size - 1
    kmax = 1
    for g in range(G):
        kmax = max(kmax, gk[g])
    out = np.zeros((B, G, N_STATS))
    N = B * G
    T = _n_workers(N)
    nmax = 1
    for g in range(G):
        nmax = max(nmax, gptr[g + 1] - gptr[g])
    tree = np.empty((T, kmax + 1), np.int64)
    cnt = np.empty((T, kmax + 1), np.int64)
    wv = np.empty((T, min(nmax, PAIRS_MAX_N)), np.int64)
    for w in prange(T):
        lo, hi = _chunk(N, T, w)
        for t in range(lo, hi):
            b = t // G
            g = t % G
            if gmult[b, g] == 0:
                continue
            s0 = gptr[g]
            s1 = gptr[g + 1]
            if s1 - s0 <= PAIRS_MAX_N:
                # the discordant weight over the slot pairs (written out
                # here: as a helper call it measured 9.8 against 6.5 ns per
                # slot); the rest as _weighted_kendall_group
                k = gk[g]
                cw = cnt[w]
                vw = wv[w]
                for q in range(k):
                    cw[q] = 0
                n = 0
                d = 0
                tx_all = 0
                txy = 0
                kx = 0
                wx = 0
                wxy = 0
                for s in range(s0, s1):
                    if xnew[s]:
                        tx_all += wx * (wx - 1) // 2
                        if wx > 0:
                            kx += 1
                        wx = 0
                    if xynew[s]:
                        txy += wxy * (wxy - 1) // 2
                        wxy = 0
                    x = wa[b, ia[s]] * wb[b, ib[s]]
                    vw[s - s0] = x
                    cw[ycode[s]] += x
                    n += x
                    wx += x
                    wxy += x
                for j in range(1, s1 - s0):
                    cj = ycode[s0 + j]
                    gt = 0
                    for i in range(j):
                        gt += vw[i] if ycode[s0 + i] > cj else 0
                    d += vw[j] * gt
                tx_all += wx * (wx - 1) // 2
                if wx > 0:
                    kx += 1
                txy += wxy * (wxy - 1) // 2
                _kendall_stats_out(out[b, g], n, d, tx_all, txy, kx, cw, k)
            else:
                _weighted_kendall_group(b, gptr[g], gptr[g + 1], wa, ia, wb, ib, ycode, xnew,
                                        xynew, gk[g], tree[w], cnt[w], out[b, g])
    return out


@kernel
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


@kernel
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


@kernel(parallel=True)
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
    for w in prange(T):
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


@kernel
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


@kernel(parallel=True)
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
    for w in prange(T):
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


# --------------------------------------------------------------------------
# NumPy twins: same signatures and results, used when numba is disabled
# (METAEVAL_DISABLE_NUMBA=1), on small batches and as the cross-check in tests.


def boot_kendall_stats_numpy(wa, ia, wb, ib, gmult, gptr, ycode, xnew, xynew, gk):
    """See :func:`boot_kendall_stats`.

    Plain version: expands each replicate's multiset of slots (``np.repeat``
    by the weights) and counts the pairs of the expanded group with
    :func:`kendall_stats` (metric values replaced by their block codes, which
    keeps every comparison)."""
    out = np.zeros((wa.shape[0], gptr.size - 1, N_STATS))
    for b, g, xe, ye in _expanded(wa, ia, wb, ib, gmult, gptr, _block_codes(xnew),
                                  ycode.astype(float)):
        out[b, g] = kendall_stats_numpy(xe[None, None], ye[None, None], 0.0)[0, 0]
    return out


def _block_codes(xnew):
    """Each slot's block of equal metric values, numbered in slot order: the
    metric's comparisons within every group, as floats."""
    return (np.cumsum(xnew) - 1).astype(float)


def _expanded(wa, ia, wb, ib, gmult, gptr, xv, yv):
    """The replicates of the slot layout as expanded multisets: yields
    ``(b, g, xe, ye)`` for every group ``g`` drawn in replicate ``b``, the
    slots' values ``xv``, ``yv`` repeated by their weights."""
    for g in range(gptr.size - 1):
        sl = slice(gptr[g], gptr[g + 1])
        for b in range(wa.shape[0]):
            if gmult[b, g] == 0:
                continue
            w = (wa[b, ia[sl]] * wb[b, ib[sl]]).astype(np.int64)
            yield b, g, np.repeat(xv[sl], w), np.repeat(yv[sl], w)


def boot_pearson_numpy(wa, ia, wb, ib, gmult, gptr, xs, ys, ycode, xnew, gk, ranked):
    """See :func:`boot_pearson`.

    Plain version: expands each replicate's multiset of slots (``np.repeat``
    by the weights) and computes Pearson's r of the expanded group (of
    scipy's average ranks when ``ranked``: the metric's block codes and the
    human codes, which keep every comparison)."""
    from scipy.stats import rankdata

    out = np.full((wa.shape[0], gptr.size - 1, 2), np.nan)
    xv, yv = (_block_codes(xnew), ycode.astype(float)) if ranked else (xs, ys)
    for b, g, xe, ye in _expanded(wa, ia, wb, ib, gmult, gptr, xv, yv):
        if ranked and xe.size:
            xe, ye = rankdata(xe), rankdata(ye)
        out[b, g, 0] = pearson_rows_numpy(xe[None, None], ye[None, None])[0, 0]
        out[b, g, 1] = xe.size
    return out


def boot_row_means_numpy(xs, xcodes, ys, ycodes, grid_all, cc, rows_used, cnt, grid):
    """See :func:`boot_row_means`.

    Plain version: each replicate row as the original row's values with the
    column multiplicities, its grid decision from the drawn cells."""
    B = cc.shape[0]
    N, M = xs.shape
    out = np.full((2, B, N), np.nan)
    for h, (vals, codes) in enumerate(((xs, xcodes), (ys, ycodes))):
        for b in range(B):
            drawn = (rows_used[b] != 0)[:, None] & (cc[b] != 0)[None, :]
            on_grid = bool(grid_all[h]) or not (drawn & (codes == OFF_GRID)).any()
            for r in range(N):
                n = int(cnt[b, r])
                if rows_used[b, r] == 0 or n == 0:
                    continue
                if on_grid:
                    out[h, b, r] = _grid_mean_numpy(int((cc[b] * codes[r]).sum()), n, grid)
                else:
                    out[h, b, r] = _exact_mean(vals[r], cc[b], n)
    return out
