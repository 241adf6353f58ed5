"""Perm-Both resamples from layouts prepared once (private).

``swap_group_stats`` (the Kendall statistics of both halves),
``swap_pair_values`` (one statistic of both halves, bit-identical to the
generic level code) and ``swap_group_means`` (correctly rounded system means
of both halves), then their NumPy twins ``*_numpy``, which materialise the
halves.  The layouts are built by :mod:`metaeval.stats.permboth`.
Conventions in :mod:`._kbase`.
"""

from __future__ import annotations

import math

import numpy as np

from ._columns import KX, KY, N_STATS, NVALID, OFF_GRID, TX, TXY, TY, C, D
from ._exactsum import (
    N_ACC,
    _acc_add,
    _acc_add_int,
    _acc_lo,
    _acc_mean,
    _exact_mean,
    _fixed_words,
    _grid_mean,
    _grid_mean_numpy,
    _mant_pos,
)
from ._jit import kernel
from ._kbase import _chunk, _n_workers
from ._kendall import kendall_stats_numpy
from ._pearson import (
    _pearson_halves_given_y,
    _y_side,
    average_ranks_numpy,
    pearson_rows_numpy,
)

# numba.prange once the family is compiled (_jit.compile_family); the builtin
# range until then.
prange = range


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


@kernel
def _coin(bits, idx):
    return (bits[idx >> 3] >> (7 - (idx & 7))) & 1


@kernel
def _fen_add(tree, i, k):
    i += 1
    while i <= k:
        tree[i] += 1
        i += i & (-i)


@kernel
def _fen_prefix(tree, i):
    # number of inserted codes <= i
    i += 1
    s = 0
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@kernel
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


@kernel(parallel=True)
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
    for w in prange(T):
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            base = b * ncell
            for g in range(G):
                _swap_group(bits, base, za, zb, gptr[g], gptr[g + 1] - gptr[g], cell, hc, hr2,
                            hcode, eptr[g], eptr[g + 1], eslot, esrc, enew, gk[g], hss[g],
                            hrss[g], hn2[g], sel[w], fa[w], fb[w], out[b, g])
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


@kernel
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


#: Groups with at most this many human levels count the Kendall statistics
#: of the Perm-Both halves by a scan of the level counts
#: (``_swap_walk_kendall_scan``), others by the Fenwick trees of ``_swap_walk``.
SCAN_MAX_K = 16


@kernel
def _scan_gt(cnt, h, code, k):
    """Entries of half ``h`` counted in ``cnt[h]`` with a human code above
    ``code`` (a fixed number of steps: no data-dependent branch)."""
    gt = 0
    for q in range(k):
        gt += cnt[h, q] if q > code else 0
    return gt


@kernel
def _swap_walk_kendall_scan(bits, base, e0, e1, ecell, ecode, esrc, enew, k, cnt):
    """The Kendall counts of ``_swap_walk`` (``kendall=True``, no ranks) for
    a group of at most ``SCAN_MAX_K`` human levels: the inserted entries of
    each half counted per level in ``cnt`` (2, >= k) instead of a Fenwick
    tree (``posa - prefix(code)`` is the count above ``code``), and a block
    of one entry assigned to its half by arithmetic rather than a branch on
    the random coin.  The same integer counts."""
    for q in range(k):
        cnt[0, q] = 0
        cnt[1, q] = 0
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
            code = ecode[e]
            h = 1 - (esrc[e] == _coin(bits, base + ecell[e]))  # 0: half A, 1: half B
            gt = _scan_gt(cnt, h, code, k)
            da += gt * (1 - h)
            db += gt * h
            kxa += 1 - h
            kxb += h
            cnt[h, code] += 1
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
        # entries of a block are sorted by human code: runs of equal codes
        lasta = -1
        runa = 0
        lastb = -1
        runb = 0
        for q in range(e, r):
            code = ecode[q]
            if esrc[q] == _coin(bits, base + ecell[q]):
                da += _scan_gt(cnt, 0, code, k)
                if code == lasta:
                    runa += 1
                else:
                    n3a += runa * (runa - 1) // 2
                    runa = 1
                    lasta = code
            else:
                db += _scan_gt(cnt, 1, code, k)
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
            h = 0 if esrc[q] == _coin(bits, base + ecell[q]) else 1
            cnt[h, ecode[q]] += 1
        e = r
    return da, db, n1a, n1b, n3a, n3b, kxa, kxb


@kernel
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


@kernel(parallel=True)
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
    # the human side of each group's Pearson's r, once (the same for every
    # resample; finite, as the layout holds the common cells only)
    hd = np.empty(max(1, gptr[G]))
    hmin = np.empty(G)
    hmax = np.empty(G)
    hey = np.zeros(G, np.int64)
    hcy = np.empty(G)
    hsyy = np.empty(G)
    if which != 2:
        for g in range(G):
            s0 = gptr[g]
            hmin[g], hmax[g], hey[g], hcy[g], hsyy[g] = _y_side(hy[s0:gptr[g + 1]],
                                                               hd[s0:gptr[g + 1]])
    T = _n_workers(B)
    # workspace per worker, before the parallel region (issue 14.1)
    xa = np.empty((T, nmax))
    xb = np.empty((T, nmax))
    fa = np.empty((T, kmax + 1), np.int64)
    fb = np.empty((T, kmax + 1), np.int64)
    fc = np.empty((T, 2, kmax + 1), np.int64)
    for w in prange(T):
        lo, hi = _chunk(B, T, w)
        for b in range(lo, hi):
            base = b * ncell
            for g in range(G):
                s0 = gptr[g]
                n = gptr[g + 1] - s0
                if which == 2:
                    if gk[g] <= SCAN_MAX_K:
                        da, db, n1a, n1b, n3a, n3b, kxa, kxb = _swap_walk_kendall_scan(
                            bits, base, eptr[g], eptr[g + 1], ecell, ecode, esrc, enew, gk[g],
                            fc[w])
                    else:
                        da, db, n1a, n1b, n3a, n3b, kxa, kxb = _swap_walk(
                            bits, base, eptr[g], eptr[g + 1], ecell, ecode, eslot, esrc, enew,
                            gk[g], False, xa[w], xb[w], fa[w], fb[w], True)
                    _swap_kendall_out(out[b, g, 0], n, da, n1a, n3a, kxa, gk[g], hn2[g])
                    _swap_kendall_out(out[b, g, 1], n, db, n1b, n3b, kxb, gk[g], hn2[g])
                    continue
                if which == 1:
                    _swap_walk(bits, base, eptr[g], eptr[g + 1], ecell, ecode, eslot, esrc, enew,
                               gk[g], True, xa[w], xb[w], fa[w], fb[w], False)
                else:
                    # selects, not branches: the coins are random, and a
                    # mispredicted branch per cell cost more than the rest of
                    # the resample's arithmetic (8 of 14 ns per cell)
                    for t in range(n):
                        c = cell[s0 + t]
                        sw = _coin(bits, base + c)
                        va = za[c]
                        vb = zb[c]
                        xa[w, t] = vb if sw else va
                        xb[w, t] = va if sw else vb
                h = hy[s0:s0 + n]
                d = hd[s0:s0 + n]
                out[b, g, 0, 0], out[b, g, 1, 0] = _pearson_halves_given_y(
                    xa[w, :n], xb[w, :n], h, d, hmin[g], hmax[g], hey[g], hcy[g], hsyy[g])
    return out


@kernel(parallel=True)
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
    # half A's words of group g = its metric A words + the swapped cells'
    # (B - A) words; half B's = the group's A + B words - half A's (exact
    # integers, so the same words as summing each half's values)
    wd = np.empty((S if fixed else 0, 3), np.int64)
    ga0 = np.zeros((G if fixed else 0, 3), np.int64)
    gab = np.zeros((G if fixed else 0, 3), np.int64)
    for g in range(G if fixed else 0):
        for q in range(gptr[g], gptr[g + 1]):
            for j in range(3):
                wd[q, j] = wb[q, j] - wa[q, j]
                ga0[g, j] += wa[q, j]
                gab[g, j] += wa[q, j] + wb[q, j]
    flo = (s >> 5) + 2
    fhi = ((s + 62) >> 5) + 2
    T = _n_workers(B)
    accs = np.zeros((T, 2, N_ACC), np.int64)  # before the parallel region (issue 14.1)
    for w in prange(T):
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
                    # the coin selects by a mask, not a branch (random coins:
                    # a mispredicted branch per cell)
                    a0 = ga0[g, 0]
                    a1 = ga0[g, 1]
                    a2 = ga0[g, 2]
                    for t in range(n):
                        q = s0 + t
                        m = -np.int64(_coin(bits, base + cell[q]))
                        a0 += wd[q, 0] & m
                        a1 += wd[q, 1] & m
                        a2 += wd[q, 2] & m
                    b0 = gab[g, 0] - a0
                    b1 = gab[g, 1] - a1
                    b2 = gab[g, 2] - a2
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


# --------------------------------------------------------------------------
# NumPy twins: same signatures and results, used when numba is disabled
# (METAEVAL_DISABLE_NUMBA=1), on small batches and as the cross-check in tests.


def _swap_halves(bits, n_resamples, ncell, za, zb):
    """(B, ncell) values of both Perm-Both halves from the packed coins."""
    w = np.unpackbits(bits)[: n_resamples * ncell].reshape(n_resamples, ncell).astype(bool)
    a, b = np.ravel(za), np.ravel(zb)
    return np.where(w, b, a), np.where(w, a, b)


def swap_group_stats_numpy(bits, n_resamples, ncell, za, zb, gptr, cell, hc, hr2, hcode, eptr,
                     eslot, esrc, enew, gk, hss, hrss, hn2):
    """See :func:`swap_group_stats`.

    Plain version: builds both halves, then Pearson from deviations,
    Spearman as Pearson of scipy's average ranks and tau-b from pair signs;
    only ``gptr``, ``cell`` and the human values (recovered from ``hc``)
    are used from the layout.
    """
    from scipy.stats import rankdata

    pa, pb = _swap_halves(bits, n_resamples, ncell, za, zb)
    G = gptr.size - 1
    out = np.full((n_resamples, G, 3, 2), np.nan)
    for g in range(G):
        sl = slice(gptr[g], gptr[g + 1])
        cells = cell[sl]
        h = hc[sl]
        n = cells.size
        if n < 2:
            continue
        dh = np.sign(h[:, None] - h[None, :])
        iu = np.triu_indices(n, 1)
        for half, p in enumerate((pa, pb)):
            v = p[:, cells]  # (B, n)
            for b in range(n_resamples):
                x = v[b]
                if np.ptp(x) == 0 or np.ptp(h) == 0:
                    continue
                dx = x - x.mean()
                out[b, g, 0, half] = np.clip((dx @ h) / np.sqrt((dx @ dx) * (h @ h)), -1, 1)
                rx = rankdata(x) - (n + 1) / 2
                rh = rankdata(h) - (n + 1) / 2
                out[b, g, 1, half] = np.clip((rx @ rh) / np.sqrt((rx @ rx) * (rh @ rh)), -1, 1)
                sx = np.sign(x[:, None] - x[None, :])[iu]
                sh = dh[iu]
                out[b, g, 2, half] = (sx * sh).sum() / np.sqrt(
                    float((sx != 0).sum()) * float((sh != 0).sum())
                )
    return out


def swap_pair_values_numpy(bits, n_resamples, ncell, za, zb, gptr, cell, hy, eptr, ecell, ecode, eslot,
                     esrc, enew, gk, hn2, which):
    """See :func:`swap_pair_values`.

    Plain version: builds both halves and computes each group's statistic
    with the plain twins (Pearson from deviations, scipy's average ranks,
    Kendall counts from pair signs); only ``gptr``, ``cell`` and ``hy`` are
    used from the layout (for Kendall, ``hy`` holds the human values).
    """
    halves = _swap_halves(bits, n_resamples, ncell, za, zb)
    G = gptr.size - 1
    B = n_resamples
    out = np.full((B, G, 2, N_STATS if which == 2 else 1), np.nan)
    for g in range(G):
        cells = cell[gptr[g] : gptr[g + 1]]
        h = np.broadcast_to(hy[gptr[g] : gptr[g + 1]], (B, 1, cells.size))
        for half, p in enumerate(halves):
            v = p[:, cells][:, None, :]  # (B, 1, n)
            if which == 2:
                out[:, g, half, :] = kendall_stats_numpy(v, h, 0.0)[:, 0]
            elif which == 1:
                out[:, g, half, 0] = pearson_rows_numpy(average_ranks_numpy(v[:, 0])[:, None, :], h)[:, 0]
            else:
                out[:, g, half, 0] = pearson_rows_numpy(v, h)[:, 0]
    return out


def swap_group_means_numpy(bits, n_resamples, ncell, za, zb, acodes, bcodes, grid_all, gptr, cell,
                     grid):
    """See :func:`swap_group_means` (materialised halves)."""
    pa, pb = _swap_halves(bits, n_resamples, ncell, za, zb)
    ca, cb = _swap_halves(bits, n_resamples, ncell, acodes, bcodes)
    G = gptr.size - 1
    out = np.full((n_resamples, G, 2), np.nan)
    for b in range(n_resamples):
        for h, (p, cd) in enumerate(((pa, ca), (pb, cb))):
            on_grid = not (cd[b, cell] == OFF_GRID).any()
            for g in range(G):
                cells = cell[gptr[g] : gptr[g + 1]]
                if not cells.size:
                    continue
                if on_grid:
                    out[b, g, h] = _grid_mean_numpy(int(cd[b, cells].sum()), cells.size, grid)
                else:
                    out[b, g, h] = _exact_mean(p[b, cells], np.ones(cells.size, np.int64),
                                               cells.size)
    return out
