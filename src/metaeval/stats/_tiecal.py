"""Tie calibration (acc_eq, Deutsch et al. 2023): numba kernels and NumPy twins (private).

``tie_calibration`` (every threshold of one group set) and
``tie_calibration_best`` (the best threshold in O(n) memory, streamed), then
their NumPy twins ``tie_calibration_numpy`` and ``tie_calibration_best_numpy``.
Conventions in :mod:`._kbase`.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, serial_build
from ._kbase import _chunk, _count_inversions, _tie_pairs_sorted

# numba.prange once the family is compiled (_jit.compile_family); the builtin
# range until then.
prange = range


# Tolerance when choosing the maximum of the tie-calibration sweep.
TIE_TOL = 1e-12


@kernel
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


@kernel
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
# When every group has the same unit u (equal weights and pair counts) and
# the groups are small, S(t) = u K(t) with K an integer count, which no order
# of the pairs changes: the pairs that change K are listed and radix-sorted
# instead (``_sweep_sorted_pairs``; O(P) time, 16 bytes per pair).
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


#: The sorted-pairs sweep (``_sweep_sorted_pairs``) is used for groups of at
#: most this many cells (its workspace, 16 bytes per pair, is then at most
#: 8 (n - 1) bytes per cell per thread) and items of at most this many pairs.
SORT_PAIRS_MAX_N = 33
SORT_PAIRS_MAX = 1 << 22


def tc_workspace_length(G, n):
    """Length of the workspace rows of the streaming tie calibration."""
    return max(G * n, G, 1)


@kernel
def _lex_less(xs, ys, a, b):
    return xs[a] < xs[b] or (xs[a] == xs[b] and ys[a] < ys[b])


@kernel
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


@kernel
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


@kernel
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


@kernel
def _radix_sort_u64(a, tmp, n, cnt):
    """Sort ``a[:n]`` (uint64) ascending: LSD radix sort by bytes through
    ``tmp`` (length >= n), counts in ``cnt`` (8, 256) int64; a byte equal in
    every value is skipped.  Returns the array (``a`` or ``tmp``) that holds
    the result.  Allocates nothing."""
    for d in range(8):
        for k in range(256):
            cnt[d, k] = 0
    for i in range(n):
        v = a[i]
        for d in range(8):
            cnt[d, (v >> np.uint64(8 * d)) & np.uint64(255)] += 1
    src = a
    dst = tmp
    for d in range(8):
        c = cnt[d]
        skip = False
        for k in range(256):
            if c[k] == n:
                skip = True
                break
        if skip:
            continue
        tot = 0
        for k in range(256):
            t = c[k]
            c[k] = tot
            tot += t
        sh = np.uint64(8 * d)
        for i in range(n):
            v = src[i]
            k = (v >> sh) & np.uint64(255)
            dst[c[k]] = v
            c[k] += 1
        src, dst = dst, src
    return src


@kernel
def _sweep_sorted_pairs(xs, ys, iend, ntot, u, PW, cnt):
    """The sweep of ``_tie_calibration_stream`` when every group has the same
    unit ``u``: S(t) = u K(t) with K(t) an integer (human-tied minus
    concordant pairs with 0 < |dx| <= t), so the order of pairs of equal
    |dx| does not matter and S(t) is correctly rounded (one product).  The
    pairs that change K are listed as ``(bits of |dx|) << 1 | (human tie)``
    (|dx| >= 0, so its bits order as its values), radix-sorted, and swept.
    Pairs of |dx| = 0 and discordant pairs never change K, so they never
    make a threshold better than the one before and are not listed.
    Returns ``(best_t, best_s)`` as the heap's sweep defines them."""
    a = PW[0]
    q = 0
    for i in range(ntot):
        xi = xs[i]
        yi = ys[i]
        for j in range(i + 1, iend[i]):
            dk = xs[j] - xi
            dy = ys[j] - yi
            if dk > 0.0 and dy >= 0.0:
                kb = np.uint64(np.float64(dk).view(np.int64))
                a[q] = (kb << np.uint64(1)) | np.uint64(1 if dy == 0.0 else 0)
                q += 1
    srt = _radix_sort_u64(a, PW[1], q, cnt)
    K = 0
    best_s = 0.0
    best_t = 0.0
    prev = np.uint64(0)
    for r in range(q):
        v = srt[r]
        kb = v >> np.uint64(1)
        if kb > prev:
            # every pair with |dx| <= prev has been counted: S(prev) is final
            sv = u * K
            if sv > best_s + TIE_TOL:
                best_s = sv
                best_t = np.int64(prev).view(np.float64)
            prev = kb
        K += 1 if (v & np.uint64(1)) else -1
    sv = u * K
    if sv > best_s + TIE_TOL:
        best_s = sv
        best_t = np.int64(prev).view(np.float64)
    return best_t, best_s


@kernel
def _tie_calibration_stream(x, y, weights, dup, WF, WI, PW, cnt):
    """(epsilon, acc_eq) of one batch item in O(G n) memory.

    ``x``, ``y``: (G, n); ``weights``, ``dup``: (G,); ``WF``, ``WI``: the
    workspace rows (see the block comment above), length >= G * n; ``PW``
    (2, P) uint64 and ``cnt`` (8, 256) int64: the workspace of
    ``_sweep_sorted_pairs``, which replaces the heap when every group has
    the same unit and the item's pairs fit in P (P = 0: never).
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
    # one unit for every group (equal weights and pair counts, as at input
    # level without missing cells): the sorted-pairs sweep, O(P) memory
    u0 = 0.0
    same = True
    npair_all = 0
    for g in range(G):
        if units[g] != 0.0:
            if u0 == 0.0:
                u0 = units[g]
            elif units[g] != u0:
                same = False
    for i in range(ntot):
        npair_all += iend[i] - i - 1
    if same and u0 != 0.0 and npair_all <= PW.shape[1]:
        best_t, best_s = _sweep_sorted_pairs(xs, ys, iend, ntot, u0, PW, cnt)
        return best_t, base + best_s
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


@kernel(parallel=True)
def _tie_calibration_best_all(x, y, weights, dup, WF, WI, PW, CNT, out):
    """Every item of ``tie_calibration_best`` in one parallel region: worker
    ``w`` takes the items ``_chunk(B, T, w)`` (T = WF.shape[0]) one after the
    other in ``WF[w]``, ``WI[w]``.  An item's result does not depend on the
    worker (its workspace is rewritten before it is read)."""
    B = x.shape[0]
    T = WF.shape[0]
    shared = y.shape[0] == 1
    for w in prange(T):
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            e, v = _tie_calibration_stream(x[b], y[0 if shared else b], weights[b], dup[b],
                                           WF[w], WI[w], PW[w], CNT[w])
            out[b, 0] = e
            out[b, 1] = v


def tie_calibration_best(x, y, weights, dup_pairs=None, *, sort_pairs=True):
    """Best (epsilon, acc_eq) for each batch item, in O(G n) memory (O(G n^2)
    for groups of at most ``SORT_PAIRS_MAX_N`` cells sharing one unit).

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

    sort_pairs : bool
        Sweep the pairs sorted (radix sort, O(G n^2) memory per thread) for
        an item whose groups share one unit, when the groups are small
        (n <= :data:`SORT_PAIRS_MAX_N`, at most :data:`SORT_PAIRS_MAX`
        pairs); False: always the heap (for the tests).

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
    import numba

    # one parallel region for the whole batch (a region per T items waited,
    # T at a time, for the slowest item and for the pool's start); one item
    # runs the serial build (no region)
    T = max(1, min(B, numba.get_num_threads()))
    L = tc_workspace_length(G, n)
    WF = np.empty((T, TC_FLOAT_ROWS, L))
    WI = np.empty((T, TC_INT_ROWS, L), np.int64)
    P = G * (n * (n - 1) // 2)
    if not (sort_pairs and n <= SORT_PAIRS_MAX_N and P <= SORT_PAIRS_MAX):
        P = 0
    PW = np.empty((T, 2, P), np.uint64)
    CNT = np.empty((T, 8, 256), np.int64)
    run = _tie_calibration_best_all if T > 1 else serial_build(_tie_calibration_best_all)
    run(x, y, w, dup, WF, WI, PW, CNT, out)
    return out


# --------------------------------------------------------------------------
# NumPy twins: same signatures and results, used when numba is disabled
# (METAEVAL_DISABLE_NUMBA=1), on small batches and as the cross-check in tests.


def tie_calibration_numpy(x, y, weights, dup_pairs=None):
    """Thresholds and averaged acc_23 values of the tie-calibration sweep.

    Materialises every within-group pair (O(n^2) memory per group); the
    numba ``tie_calibration_best`` streams them instead.

    Parameters
    ----------
    x, y : ndarray, shape (G, n)
        Metric and human scores of each group.
    weights : ndarray, shape (G,)
        Weight of each group's accuracy in the average (sum to one over the
        groups with at least one valid pair).

    Returns
    -------
    thresholds, values : ndarray, shape (K,)
        ``thresholds[0] == 0`` and then every distinct positive absolute metric
        difference of a valid within-group pair, ascending; ``values[k]`` is the
        weighted average over groups of acc_23 when pairs with
        ``|dx| <= thresholds[k]`` count as metric ties.
    dup_pairs : ndarray, shape (G,), optional
        Pairs formed by two copies of one cell (tied in both scores), left out
        of each group's pair count and correct pairs (see
        :func:`tie_calibration_best`).
    """
    diffs = []
    deltas = []
    base = 0.0
    G, n = x.shape
    iu, ju = np.triu_indices(n, 1)
    for g in range(G):
        valid = np.isfinite(x[g]) & np.isfinite(y[g])
        pv = valid[iu] & valid[ju]
        dup = 0.0 if dup_pairs is None else float(dup_pairs[g])
        npairs = int(pv.sum()) - dup
        if npairs <= 0:
            continue
        unit = weights[g] / npairs
        with np.errstate(over="ignore", invalid="ignore"):
            dx = (x[g, ju] - x[g, iu])[pv]
            dy = (y[g, ju] - y[g, iu])[pv]
        ad = np.abs(dx)
        yt = dy == 0
        conc = ~yt & ((dx > 0) == (dy > 0))
        base += unit * (np.sum(np.where(ad == 0, yt, conc)) - dup)
        d = np.where(conc, -unit, np.where(yt, unit, 0.0))
        d[ad == 0] = 0.0
        diffs.append(ad)
        deltas.append(d)
    if not diffs:
        return np.zeros(1), np.array([base])
    ad = np.concatenate(diffs)
    d = np.concatenate(deltas)
    order = np.argsort(ad, kind="mergesort")
    ad = ad[order]
    cum = base + np.cumsum(d[order])
    thr = np.unique(ad[ad > 0])
    # value at a threshold: the cumulative sum at the last pair with |dx| <= thr
    last = np.searchsorted(ad, thr, side="right") - 1
    return np.concatenate([[0.0], thr]), np.concatenate([[base], cum[last]])


def tie_calibration_best_numpy(x, y, weights, dup_pairs=None):
    """See :func:`tie_calibration_best`."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    B = x.shape[0]
    w = np.broadcast_to(np.asarray(weights, float), x.shape[:2])
    dup = np.zeros(x.shape[:2]) if dup_pairs is None else np.broadcast_to(
        np.asarray(dup_pairs, float), x.shape[:2])
    out = np.empty((B, 2))
    for b in range(B):
        thr, val = tie_calibration_numpy(x[b], y[0 if y.shape[0] == 1 else b], w[b], dup[b])
        best = 0
        for k in range(1, val.size):
            if val[k] > val[best] + TIE_TOL:
                best = k
        out[b] = thr[best], val[best]
    return out
