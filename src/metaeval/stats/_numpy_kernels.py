"""NumPy twins of the numba kernels in :mod:`metaeval.stats._kernels`.

Same signatures and results; used when numba is disabled
(``METAEVAL_DISABLE_NUMBA=1``) and as the fast-path's cross-check in tests.
They favour clarity over speed (they vectorise over pairs, chunking the batch
axis to bound memory).
"""

from __future__ import annotations

import numpy as np

from ._kernels import C, D, KX, KY, N_STATS, NVALID, OFF_GRID, TIE_TOL, TX, TXY, TY

_CHUNK_ELEMS = 2_000_000


def _n_distinct(a, valid):
    """Distinct finite values per row of (R, n) ``a`` restricted to ``valid``."""
    s = np.sort(np.where(valid, a, np.inf), axis=-1)
    new = np.ones_like(s, dtype=bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    return (new & np.isfinite(s)).sum(-1)


def kendall_stats(x, y, eps):
    """See :func:`metaeval.stats._kernels.kendall_stats`."""
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


def pearson_rows(x, y):
    """See :func:`metaeval.stats._kernels.pearson_rows`."""
    from .coefficients import pearson_numpy

    return pearson_numpy(x, y)


def average_ranks(a):
    """See :func:`metaeval.stats._kernels.average_ranks`."""
    from scipy.stats import rankdata

    a = np.where(np.isfinite(a), a, np.nan)
    return rankdata(a, axis=-1, nan_policy="omit")


def kendall_stats_ranked_y(x, yr, k):
    """See :func:`metaeval.stats._kernels.kendall_stats_ranked_y`."""
    y = np.where(yr >= 0, yr, np.nan).astype(float)
    return kendall_stats(x, np.broadcast_to(y, x.shape), 0.0)


def tie_calibration(x, y, weights, dup_pairs=None):
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
        :func:`metaeval.stats._kernels.tie_calibration_best`).
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


def tie_calibration_best(x, y, weights, dup_pairs=None):
    """See :func:`metaeval.stats._kernels.tie_calibration_best`."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    B = x.shape[0]
    w = np.broadcast_to(np.asarray(weights, float), x.shape[:2])
    dup = np.zeros(x.shape[:2]) if dup_pairs is None else np.broadcast_to(
        np.asarray(dup_pairs, float), x.shape[:2])
    out = np.empty((B, 2))
    for b in range(B):
        thr, val = tie_calibration(x[b], y[0 if y.shape[0] == 1 else b], w[b], dup[b])
        best = 0
        for k in range(1, val.size):
            if val[k] > val[best] + TIE_TOL:
                best = k
        out[b] = thr[best], val[best]
    return out


def _swap_halves(bits, n_resamples, ncell, za, zb):
    """(B, ncell) values of both Perm-Both halves from the packed coins."""
    w = np.unpackbits(bits)[: n_resamples * ncell].reshape(n_resamples, ncell).astype(bool)
    a, b = np.ravel(za), np.ravel(zb)
    return np.where(w, b, a), np.where(w, a, b)


def swap_group_stats(bits, n_resamples, ncell, za, zb, gptr, cell, hc, hr2, hcode, eptr,
                     eslot, esrc, enew, gk, hss, hrss, hn2):
    """See :func:`metaeval.stats._kernels.swap_group_stats`.

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


def swap_pair_values(bits, n_resamples, ncell, za, zb, gptr, cell, hy, eptr, ecell, ecode, eslot,
                     esrc, enew, gk, hn2, which):
    """See :func:`metaeval.stats._kernels.swap_pair_values`.

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
                out[:, g, half, :] = kendall_stats(v, h, 0.0)[:, 0]
            elif which == 1:
                out[:, g, half, 0] = pearson_rows(average_ranks(v[:, 0])[:, None, :], h)[:, 0]
            else:
                out[:, g, half, 0] = pearson_rows(v, h)[:, 0]
    return out


def boot_kendall_stats(wa, ia, wb, ib, gmult, gptr, ycode, xnew, xynew, gk):
    """See :func:`metaeval.stats._kernels.boot_kendall_stats`.

    Plain version: expands each replicate's multiset of slots (``np.repeat``
    by the weights) and counts the pairs of the expanded group with
    :func:`kendall_stats` (metric values replaced by their block codes, which
    keeps every comparison)."""
    out = np.zeros((wa.shape[0], gptr.size - 1, N_STATS))
    for b, g, xe, ye in _expanded(wa, ia, wb, ib, gmult, gptr, _block_codes(xnew),
                                  ycode.astype(float)):
        out[b, g] = kendall_stats(xe[None, None], ye[None, None], 0.0)[0, 0]
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


def boot_pearson(wa, ia, wb, ib, gmult, gptr, xs, ys, ycode, xnew, gk, ranked):
    """See :func:`metaeval.stats._kernels.boot_pearson`.

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
        out[b, g, 0] = pearson_rows(xe[None, None], ye[None, None])[0, 0]
        out[b, g, 1] = xe.size
    return out


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


def _grid_mean(K, n, grid):
    """K / (grid n) for integers below 2^53: one correctly rounded division."""
    return float(K) / float(grid * n)


def exact_means(vals, valid, rows_per_unit, grid, kmax, tol):
    """See :func:`metaeval.stats._kernels.exact_means`."""
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
            out[r] = _grid_mean(int(codes[r][v].sum()), n, grid)
        else:
            out[r] = _exact_mean(vals[r][v], np.ones(n, np.int64), n)
    return out


def exact_col_means(vals, grid, kmax, tol):
    """See :func:`metaeval.stats._kernels.exact_col_means` (the transposed rows)."""
    t = np.ascontiguousarray(vals.T)
    return exact_means(t, np.isfinite(t), t.shape[0], grid, kmax, tol)


def boot_row_means(xs, xcodes, ys, ycodes, grid_all, cc, rows_used, cnt, grid):
    """See :func:`metaeval.stats._kernels.boot_row_means`.

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
                    out[h, b, r] = _grid_mean(int((cc[b] * codes[r]).sum()), n, grid)
                else:
                    out[h, b, r] = _exact_mean(vals[r], cc[b], n)
    return out


def swap_group_means(bits, n_resamples, ncell, za, zb, acodes, bcodes, grid_all, gptr, cell,
                     grid):
    """See :func:`metaeval.stats._kernels.swap_group_means` (materialised halves)."""
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
                    out[b, g, h] = _grid_mean(int(cd[b, cells].sum()), cells.size, grid)
                else:
                    out[b, g, h] = _exact_mean(p[b, cells], np.ones(cells.size, np.int64),
                                               cells.size)
    return out
