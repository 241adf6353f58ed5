"""Perm-Both null distributions of many correlation measures at once.

The paired permutation test Perm-Both (Deutsch et al. 2021, section 4.2;
:mod:`metaeval.compare`) exchanges the z-scored values of two metrics in each
(system, input) cell with a fair coin and recomputes the statistic of both
halves.  Discriminative power (seed paper 000, Algorithm 2) needs this for
every metric pair and every measure; computing it measure by measure through
the generic level code re-sorts and re-ranks every resample.

Here the coins of a pair are drawn once (the same packed stream as
:func:`metaeval.compare.compare` draws for that pair, so the p-values are the
same) and all measures are computed from them:

* ``pearson``, ``spearman`` and ``kendall_b`` at ``input``, ``item`` and
  ``global`` level come from :func:`~metaeval.stats._kernels.swap_group_stats`,
  which sorts each group's 2n candidate values once per pair and then needs
  one linear walk per resample (no sorting) plus a Fenwick tree over the
  human levels for Kendall;
* ``system`` level takes the halves' matched row means
  (:func:`~metaeval.stats._kernels.swap_group_means` on the rows, correctly
  rounded) and the registry
  coefficients on N values;
* any other method falls back to building both halves and the generic
  level code.

At ``input`` and ``item`` level both halves are averaged over the groups
where both halves' statistics are defined, as :func:`metaeval.compare.compare`
does (issue 18.3).

The NumPy twins of both kernels, and the generic path, are the references
of the tests.
"""

from __future__ import annotations

import numpy as np

from . import exact
from .cellboot import _shared
from .coefficients import kernels
from .levels import _aggregate, _weights, grouped_values, arrange

FAST_METHODS = ("pearson", "spearman", "kendall_b")
#: Methods of :meth:`PairLayout.pair_values` (bit-identical to the generic path).
PAIR_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23")


def _group_cells(shape, level):
    N, M = shape
    ids = np.arange(N * M).reshape(N, M)
    if level == "input":
        return list(ids.T)
    if level == "item":
        return list(ids)
    return [ids.ravel()]


def _dense_codes(v):
    """Dense ranks 0..k-1, average ranks (1-based) and k of ``v`` (1-D)."""
    uniq, inv, cnt = np.unique(v, return_inverse=True, return_counts=True)
    start = np.concatenate(([0], np.cumsum(cnt)[:-1]))
    avg = start + (cnt + 1) / 2.0
    return inv.astype(np.int64), avg[inv], uniq.size, int((cnt * (cnt - 1) // 2).sum())


def _human_layout(z, level):
    """What a level's layout takes from the human scores alone (NaN outside
    the common cells), the same for every metric pair: each group's valid
    cells (slots, in cell order), their dense codes, average ranks, centred
    values and the group's sums, and each entry's slot and side (an entry is
    a slot's value of metric A, then of metric B, group by group)."""
    zf = np.ravel(z)
    valid = np.isfinite(zf)
    gptr = [0]
    cells, hc, hr2, hcode, hval, havg = [], [], [], [], [], []
    gk, hss, hrss, hn2 = [], [], [], []
    for g in _group_cells(np.shape(z), level):
        c = g[valid[g]]
        n = c.size
        h = zf[c]
        code, avg, k, n2 = _dense_codes(h)
        d = h - h.mean() if n else h
        r2 = 2.0 * avg - (n + 1)
        cells.append(c)
        hc.append(d)
        hval.append(h)
        havg.append(avg)
        hr2.append(r2)
        hcode.append(code)
        gk.append(max(k, 1))
        hss.append(float(d @ d) if k > 1 else 0.0)
        hrss.append(float(r2 @ r2))
        hn2.append(n2)
        gptr.append(gptr[-1] + n)
    cat = np.concatenate
    lay = {
        "ncell": zf.size,
        "M": np.shape(z)[-1],
        "gptr": np.asarray(gptr, np.int64),
        "cell": cat(cells).astype(np.int64),
        "hc": cat(hc).astype(float),
        "hval": cat(hval).astype(float),  # human score of each slot
        "havg": cat(havg).astype(float),  # its average rank (1-based) in the group
        "hr2": cat(hr2).astype(float),
        "hcode": cat(hcode).astype(np.int64),
        "gk": np.asarray(gk, np.int64),
        "hss": np.asarray(hss, float),
        "hrss": np.asarray(hrss, float),
        "hn2": np.asarray(hn2, np.int64),
    }
    nv = np.diff(lay["gptr"])
    G = nv.size
    # entries of group g: its n slots' A values, then their B values
    egroup = np.repeat(np.arange(G), 2 * nv)
    local = np.arange(egroup.size) - 2 * lay["gptr"][egroup]
    side = local >= nv[egroup]
    lay["eptr"] = 2 * lay["gptr"]
    lay["egroup"] = egroup
    lay["elocal"] = np.where(side, local - nv[egroup], local)  # slot within the group
    lay["eslot_all"] = lay["gptr"][egroup] + lay["elocal"]  # slot overall
    lay["eside"] = side.astype(np.int8)
    lay["ecodes"] = lay["hcode"][lay["eslot_all"]]
    lay["ecellv"] = lay["cell"][lay["eslot_all"]]
    lay["first"] = lay["eptr"][:-1][nv > 0]  # each non-empty group's first entry
    return lay


def human_layout(z, level):
    """:func:`_human_layout`, computed once per human score matrix among the
    last few (:func:`metaeval.stats.cellboot.clear_layouts` forgets them): in
    ``compare_all`` every pair shares the human column."""
    z = np.ascontiguousarray(z, dtype=float)
    return _shared(("pair-human", level), z, z, lambda: _human_layout(z, level), min_cells=0)


def human_system_means(za, z):
    """``arrange(za, z, "system")[1]``: the human means over the cells where
    both ``za`` and ``z`` are finite, computed once per (human scores,
    metric's finite cells) among the last few (every pair of
    ``compare_all`` on complete data shares them; ``za``'s values do not
    enter them)."""
    z = np.ascontiguousarray(z, dtype=float)
    fin = np.isfinite(za)
    return _shared(("pair-human-system-means",), z, fin,
                   lambda: arrange(np.where(fin, 0.0, np.nan), z, "system")[1], min_cells=0)


class PairLayout:
    """Sorted entries and human statistics of one level for one metric pair.

    ``za``, ``zb``, ``z``: (N, M) with NaN in exactly the same cells (the
    cells where the human score and both metrics are present).  The human
    part is shared by every pair on the same human scores
    (:func:`human_layout`); the pair's part is one sort of all groups'
    entries by (group, value, human code), made on first use (the system
    level's means need none), which orders each group's entries
    as sorting it alone would (a stable sort: the same permutation as
    ``np.lexsort((codes, values))`` per group; tested against that twin,
    :func:`_pair_entries_per_group`).
    """

    def __init__(self, za, zb, z, level):
        h = human_layout(z, level)
        af = np.ravel(za)
        bf = np.ravel(zb)
        self.ncell = h["ncell"]
        self.za = np.ascontiguousarray(af, dtype=float)
        self.zb = np.ascontiguousarray(bf, dtype=float)
        for name in ("gptr", "cell", "hc", "hval", "havg", "hr2", "hcode", "gk", "hss", "hrss",
                     "hn2", "eptr"):
            setattr(self, name, h[name])
        self._h = h
        self._entries = None  # (eslot, esrc, enew), sorted on first use
        self.n_valid = np.diff(self.gptr)
        self.ecell = self.ecode = None  # per-entry copies, made by pair_values
        self.M = h["M"]
        self.acodes = self.bcodes = self.grid_all = None  # grid codes, made by group_means


    def _sorted_entries(self):
        """The entries sorted by (group, value, human code): made on first
        use (the system level's means need none of them)."""
        if self._entries is None:
            h = self._h
            c = h["ecellv"]
            vals = np.where(h["eside"] == 0, self.za[c], self.zb[c])
            order = np.lexsort((h["ecodes"], vals, h["egroup"]))
            sv = vals[order]
            enew = np.ones(sv.size, np.bool_)
            enew[1:] = sv[1:] != sv[:-1]
            enew[h["first"]] = True
            self._entries = (np.ascontiguousarray(h["elocal"][order], dtype=np.int64),
                             np.ascontiguousarray(h["eside"][order]), enew)
        return self._entries

    @property
    def eslot(self):
        """Each sorted entry's slot within its group."""
        return self._sorted_entries()[0]

    @property
    def esrc(self):
        """Each sorted entry's source: 0 metric A, 1 metric B."""
        return self._sorted_entries()[1]

    @property
    def enew(self):
        """Whether each sorted entry's value differs from the previous one's."""
        return self._sorted_entries()[2]

    def group_stats(self, bits, n_resamples, *, fast=True):
        """(B, G, 3, 2): pearson/spearman/kendall_b of the two halves."""
        return kernels(fast, n_resamples * self.ncell).swap_group_stats(
            bits, n_resamples, self.ncell, self.za, self.zb, self.gptr, self.cell, self.hc,
            self.hr2, self.hcode, self.eptr, self.eslot, self.esrc, self.enew, self.gk,
            self.hss, self.hrss, self.hn2,
        )


    def pair_values(self, bits, n_resamples, method, *, fast=True):
        """One statistic of both halves, computed as the generic level code
        computes it on the materialised halves (bit-identical):
        ``pearson``/``spearman`` (B, G, 2) and the Kendall family's sufficient
        statistics (B, G, 2, 8) for any other method of :data:`PAIR_METHODS`."""
        which = PAIR_METHODS.index(method) if method in ("pearson", "spearman") else 2
        hy = self.havg if which == 1 else self.hval
        if self.ecell is None:
            # per entry: its cell and its human code (sequential reads in the walk)
            g = np.repeat(np.arange(self.gk.size), np.diff(self.eptr))
            slot = self.gptr[g] + self.eslot
            self.ecell = np.ascontiguousarray(self.cell[slot])
            self.ecode = np.ascontiguousarray(self.hcode[slot])
        out = kernels(fast, n_resamples * self.ncell).swap_pair_values(
            bits, n_resamples, self.ncell, self.za, self.zb, self.gptr, self.cell, hy,
            self.eptr, self.ecell, self.ecode, self.eslot, self.esrc, self.enew, self.gk,
            self.hn2, which,
        )
        return out[..., 0] if which < 2 else out

    def group_means(self, bits, n_resamples, *, fast=True):
        """(B, G, 2): each group's mean of the two halves, correctly rounded
        (:mod:`metaeval.stats.exact`; the grid decision per half over all
        groups, as ``levels.arrange`` takes it on the materialised half)."""
        if self.acodes is None:
            L = self.M
            self.acodes = np.ascontiguousarray(np.where(np.isfinite(self.za), exact.grid_codes(self.za, L), 0))
            self.bcodes = np.ascontiguousarray(np.where(np.isfinite(self.zb), exact.grid_codes(self.zb, L), 0))
            cells = self.cell
            self.grid_all = not ((self.acodes[cells] == exact.OFF_GRID).any()
                                 or (self.bcodes[cells] == exact.OFF_GRID).any())
        return kernels(fast, n_resamples * self.ncell).swap_group_means(
            bits, n_resamples, self.ncell, self.za, self.zb, self.acodes, self.bcodes,
            self.grid_all, self.gptr, self.cell, exact.GRID,
        )


def _pair_entries_per_group(za, zb, z, level):
    """The entries' ``(eslot, esrc, enew)`` sorted group by group (each group's
    ``np.lexsort((codes, values))``): the slow twin of :class:`PairLayout`'s
    one sort, for the tests."""
    zf, af, bf = np.ravel(z), np.ravel(za), np.ravel(zb)
    valid = np.isfinite(zf)
    eslot, esrc, enew = [], [], []
    for g in _group_cells(np.shape(z), level):
        c = g[valid[g]]
        n = c.size
        code = _dense_codes(zf[c])[0]
        vals = np.concatenate((af[c], bf[c]))
        order = np.lexsort((np.concatenate((code, code)), vals))
        sv = vals[order]
        eslot.append(np.concatenate((np.arange(n), np.arange(n)))[order])
        esrc.append(np.repeat(np.array([0, 1], np.int8), n)[order])
        enew.append(np.concatenate(([True], sv[1:] != sv[:-1])) if n else np.zeros(0, bool))
    cat = np.concatenate
    return cat(eslot).astype(np.int64), cat(esrc).astype(np.int8), cat(enew).astype(np.bool_)


def _level_value(group, nv, average):
    """Aggregate (B, G) group values as :func:`levels.grouped_values` does
    for the correlation coefficients (items-weighted for ``micro``)."""
    w = _weights(group, np.broadcast_to(nv, group.shape), False, average)
    return _aggregate(group, w)


def swapped_halves(bits, n_resamples, za, zb):
    """The two Perm-Both halves (B, N, M) from packed coins (generic path)."""
    N, M = np.shape(za)
    w = np.unpackbits(bits)[: n_resamples * N * M].reshape(n_resamples, N, M).astype(bool)
    return np.where(w, zb, za), np.where(w, za, zb)


def perm_both_values(
    za, zb, z, measures, bits, n_resamples, *, average="macro", fast=True, layouts=None
):
    """Statistics of both Perm-Both halves for every measure.

    Parameters
    ----------
    za, zb : ndarray (N, M)
        z-scored metrics, NaN outside the common cells.
    z : ndarray (N, M)
        Human scores, NaN outside the common cells.
    measures : sequence of (level, method)
    bits : ndarray of uint8
        Packed coins of ``n_resamples * N * M`` cells
        (:func:`metaeval.stats.resampling.fair_bytes`; for a chunk of
        resamples, :meth:`metaeval.stats.resampling.CoinStream.packed`).
    layouts : dict, optional
        A cache of the :class:`PairLayout` of each level, filled on first use,
        so that chunks of resamples of one pair sort the entries once.

    Returns
    -------
    dict mapping (level, method) to a (B, 2) array (halves A and B).
    """
    B = n_resamples
    out = {}
    if layouts is None:
        layouts = {}

    def layout(level):
        if level not in layouts:
            layouts[level] = PairLayout(za, zb, z, level)
        return layouts[level]

    levels = list(dict.fromkeys(level for level, _ in measures))
    halves = None
    for level in levels:
        methods = [m for lv, m in measures if lv == level]
        fast_m = [m for m in methods if m in FAST_METHODS]
        if fast_m and level == "system":
            means = layout("item").group_means(bits, B, fast=fast)
            _, zm = arrange(za, z, "system")  # human means over the common cells
            for m in fast_m:
                va = grouped_values(np.ascontiguousarray(means[:, None, :, 0]), zm, m, average=average).value
                vb = grouped_values(np.ascontiguousarray(means[:, None, :, 1]), zm, m, average=average).value
                out[(level, m)] = np.stack([va, vb], axis=-1)
        elif fast_m:
            lay = layout(level)
            st = lay.group_stats(bits, B, fast=fast)
            for m in fast_m:
                k = FAST_METHODS.index(m)
                g = st[:, :, k, :]
                # both halves over the groups where both are defined (compare's rule)
                both = np.isfinite(g[..., 0]) & np.isfinite(g[..., 1])
                out[(level, m)] = np.stack(
                    [_level_value(np.where(both, g[..., h], np.nan), lay.n_valid, average)
                     for h in (0, 1)],
                    axis=-1,
                )
        for m in methods:
            if m in FAST_METHODS:
                continue
            if halves is None:
                halves = swapped_halves(bits, B, za, zb)
            lv = []
            for p in halves:
                xg, zg = arrange(p, z, level)
                lv.append(grouped_values(xg, zg, m, average=average, detail=False))
            if lv[0].weight is None:  # acc_eq: groups defined by their pairs
                vals = [v.value for v in lv]
            else:
                both = np.isfinite(lv[0].group) & np.isfinite(lv[1].group)
                vals = [_aggregate(v.group, np.where(both, v.weight, 0.0)) for v in lv]
            out[(level, m)] = np.stack(vals, axis=-1)
    return out
