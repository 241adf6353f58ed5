"""Bootstrap replicates of a level statistic without materialising them.

A bootstrap replicate over systems and/or inputs
(:func:`metaeval.stats.resampling.bootstrap_chunks`) is a multiset of the
original cells: row r drawn cr[r] times and column c drawn cc[c] times put
cell (r, c) cr[r] cc[c] times into the ``global`` group, row r cr[r] times
into each copy of column c's ``input`` group, column c cc[c] times into each
copy of row r's ``item`` group.  :class:`CellBootstrap` sorts each original
group once and then computes every replicate from these multiplicities
(:mod:`metaeval.stats._kernels`, "Bootstrap replicates from the original
cells"), instead of building the (B, N, M) replicate arrays and sorting or
ranking each of them:

* Kendall-family statistics (``kendall_b``, ``kendall_c``, ``kendall_23``,
  ``acc_23``): one weighted walk per original group and replicate, with a
  Fenwick tree over the group's human levels: O(n log k) per replicate
  instead of O(n log n) sorting of float64 values, and integer counts equal
  to the materialised replicate's;
* ``pearson``: the corrected two-pass algorithm of the engine's Pearson
  routine with each cell counted as often as it was drawn, over the sorted
  slots (O(n) per replicate, sequential reads); ``spearman``: the doubled
  average ranks of a multiset are cumulative weights over the blocks of
  equal values, and the tie-corrected sums of squares and the cross sum are
  exact integers (O(n + k) per replicate).  Both equal the materialised
  replicate's value up to rounding (the sums run in another order), not
  bit for bit; Spearman's is exact until its final division;
* ``system`` level: each replicate's matched row means are the correctly
  rounded means of the original row's values with the column multiplicities
  (:func:`~metaeval.stats._kernels.boot_row_means`; the rule of
  :mod:`metaeval.stats.exact`, decided per replicate from the cells it
  holds): bit-identical to the materialised replicate's, so systems with
  equal exact (or, on a rational grid, equal rational) means keep exactly
  equal means; then the registry coefficient on the N means.

Memory per replicate is its (N + M) draws and its (G, 8) statistics; the
kernels' workspace is O(cells) per worker, whatever the number of
replicates.  ``acc_eq`` outside the system level is not covered (:meth:`CellBootstrap.supports`): the caller materialises
those replicates as before.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from . import exact
from .coefficients import NVALID, TXY, get_coefficient, kendall_from_stats, kernels
from .levels import DUP_VARIANTS, _aggregate, _weights, grouped_values
from .resampling import multiplicities

KENDALL_VARIANTS = {"kendall_b": "b", "kendall_c": "c", "kendall_23": "23", "acc_23": "acc23"}
_LEVEL_CODE = {"input": 0, "item": 1, "global": 2}

#: Largest replicate group (cells) whose Spearman rho is computed from the
#: draws: its integer sums stay below n^3 < 2^63.  Larger groups (a
#: ``global`` level of more than 2 million cells) are materialised.
SPEARMAN_EXACT_MAX = 2_000_000


#: (B, n) int64 multiplicities of 0..n-1 in each row of ``idx`` (B, k); one function with
#: the resampling module's (issue 25 item 1).
counts = multiplicities


# The sorted layouts of the last few (scores, level) seen in this process:
# the methods of one level (correlate's units come metric by metric, level by
# level) share them instead of sorting the same 10^6 cells again.  Keyed by
# a digest of the values, so a hit is the same data.  (Not flagged read-only:
# numba would compile every kernel again for read-only arrays.)
_LAYOUTS: OrderedDict = OrderedDict()
_LAYOUTS_LOCK = threading.Lock()
_LAYOUTS_KEEP = 2
_LAYOUTS_MIN_CELLS = 100_000


def clear_layouts() -> None:
    """Forget the shared layouts (``correlate``, ``compare`` and
    ``compare_all`` call it when they return, so a session does not keep
    them)."""
    with _LAYOUTS_LOCK:
        _LAYOUTS.clear()


def _digest(a) -> bytes:
    return hashlib.blake2b(memoryview(np.ascontiguousarray(a)).cast("B"), digest_size=16).digest()


def _shared(kind, x, y, make, min_cells=None):
    """``make()``, computed once per (``kind``, values of ``x`` and ``y``)
    among the last few (only for data of ``min_cells`` cells or more: by
    default ``_LAYOUTS_MIN_CELLS``, large data, as small data sorts in no time)."""
    if x.size < (_LAYOUTS_MIN_CELLS if min_cells is None else min_cells):
        return make()
    key = (kind, x.shape, _digest(x), _digest(y))
    with _LAYOUTS_LOCK:
        hit = _LAYOUTS.get(key)
        if hit is not None:
            _LAYOUTS.move_to_end(key)
            return hit
    val = make()  # shared by the instances of one data: never written to
    with _LAYOUTS_LOCK:
        _LAYOUTS[key] = val
        while len(_LAYOUTS) > _LAYOUTS_KEEP:
            _LAYOUTS.popitem(last=False)
    return val


def slot_layout(x, y, valid, level):
    """The sorted slots of each original group (layout of the
    ``_kernels`` block comment): ``gptr, rows, cols, ycode, xnew, xynew, gk``.

    Slots are the valid cells, grouped by column (``input``), row (``item``)
    or all together (``global``), sorted by (metric, human) within a group;
    ``ycode`` is the dense rank of the human score within its group and
    ``gk`` the number of distinct human scores per group.  The order is that
    of ``np.lexsort((y, x, group))`` over the valid cells in row-major order
    (tested); it is computed with cheaper sorts where they give the same
    order (:func:`_xy_order`, :func:`_group_order`, :func:`_dense_codes`)."""
    N, M = x.shape
    r, c = np.nonzero(valid)
    if level == "input":
        g, G = c, M
    elif level == "item":
        g, G = r, N
    else:
        g, G = np.zeros(r.size, np.int64), 1
    xs = x[r, c]
    ys = y[r, c]
    order = _xy_order(xs, ys)
    if G > 1:
        order = order[_group_order(g[order], G)]
    r, c, g, xs, ys = r[order], c[order], g[order], xs[order], ys[order]
    S = r.size
    gptr = np.zeros(G + 1, np.int64)
    np.cumsum(np.bincount(g, minlength=G), out=gptr[1:])
    first = np.ones(S, bool)
    first[1:] = g[1:] != g[:-1]
    xnew = first.copy()
    xnew[1:] |= xs[1:] != xs[:-1]
    xynew = xnew.copy()
    xynew[1:] |= ys[1:] != ys[:-1]
    ycode, gk = _dense_codes(ys, g, G, gptr)
    return (gptr, r.astype(np.int64), c.astype(np.int64), ycode.astype(np.int32),
            xnew.astype(np.int8), xynew.astype(np.int8), gk)


def _xy_order(xs, ys):
    """``np.lexsort((ys, xs))``: when no two metric values are equal (as
    for continuous metrics) the plain (unstable, faster) sort of ``xs`` is
    the same order; otherwise the stable two-key sort."""
    o = np.argsort(xs)
    xo = xs[o]
    if xo.size > 1 and (xo[1:] == xo[:-1]).any():
        return np.lexsort((ys, xs))
    return o


def _group_order(g, G):
    """Stable order of the group numbers ``g`` (0..G-1): a radix sort of
    16-bit integers when G fits in them (NumPy's stable sort of 16-bit
    types), else the stable sort of int64."""
    if G <= 1 << 16:
        return np.argsort(g.astype(np.uint16), kind="stable")
    return np.argsort(g, kind="stable")


def _dense_codes(ys, g, G, gptr):
    """Dense rank of each slot's human score within its group, and the
    number of distinct scores per group.  With K distinct scores overall
    and G * K small, from a (G, K) table of the codes present; otherwise by
    sorting (group, score) pairs."""
    S = ys.size
    gk = np.zeros(G, np.int64)
    if S == 0:
        return np.zeros(0, np.int64), gk
    _, yc = np.unique(ys, return_inverse=True)
    yc = yc.reshape(-1)
    K = int(yc.max()) + 1
    if G * K <= 1 << 22:  # the table and its int32 counts: at most 20 MB
        present = np.zeros((G, K), bool)
        present[g, yc] = True
        rank = np.cumsum(present, axis=1, dtype=np.int32)
        rank -= 1
        return rank[g, yc].astype(np.int64), present.sum(1).astype(np.int64)
    o2 = np.lexsort((yc, g))
    g2, y2 = g[o2], yc[o2]
    new2 = np.ones(S, bool)
    new2[1:] = (g2[1:] != g2[:-1]) | (y2[1:] != y2[:-1])
    code = np.cumsum(new2) - 1
    code -= code[gptr[g2]]
    ycode = np.empty(S, np.int64)
    ycode[o2] = code
    np.maximum.at(gk, g, ycode + 1)
    return ycode, gk


class CellBootstrap:
    """Bootstrap replicates of ``method`` at ``level`` on the (N, M) scores
    ``x`` (metric) and ``y`` (human), computed from each replicate's row and
    column draws (module docstring).

    :meth:`values` equals ``levels.level_values`` on the materialised
    replicates ``x[rows[:, :, None], cols[:, None, :]]``, with the same
    ``dup_pairs`` correction: bit for bit for the Kendall family and at the
    ``system`` level, up to rounding for Pearson and Spearman elsewhere (the
    tests compare them).
    """

    def __init__(self, x, y, level, method, average="macro", *, fast=True):
        if not self.supports(level, method, np.shape(x)):
            raise ValueError(f"{method} at {level}: not covered by CellBootstrap")
        self.x = np.ascontiguousarray(x, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.level = level
        self.method = method
        self.average = average
        self.fast = fast
        self.coef = get_coefficient(method)
        self.valid = np.isfinite(self.x) & np.isfinite(self.y)
        N, M = self.x.shape
        if level == "system":
            self.sx, self.cx, self.sy, self.cy, self.grid_all = _shared(
                "system", self.x, self.y, self._system_layout)
            self.vf = self.valid.astype(float)
            self.all_valid = bool(self.valid.all())
            return
        gptr, r, c, ycode, xnew, xynew, gk = _shared(
            level, self.x, self.y, lambda: slot_layout(self.x, self.y, self.valid, level))
        self.gptr, self.ycode, self.xnew, self.xynew, self.gk = gptr, ycode, xnew, xynew, gk
        zero = np.zeros(r.size, np.int32)
        r32, c32 = r.astype(np.int32), c.astype(np.int32)
        if level == "input":
            self.ia, self.ib = r32, zero
        elif level == "item":
            self.ia, self.ib = c32, zero
        else:
            self.ia, self.ib = r32, c32
        self.xs = self.ys = np.zeros(0)
        if method == "pearson":
            self.xs = self.x[r, c]
            self.ys = self.y[r, c]

    def _system_layout(self):
        """The scores with 0 in the cells that are not valid, their grid
        codes (:mod:`metaeval.stats.exact`) and whether each score is on the
        grid in every valid cell: ``sx, cx, sy, cy, grid_all``."""
        M = self.x.shape[1]
        out = []
        grid_all = np.zeros(2, np.int8)
        for h, a in enumerate((self.x, self.y)):
            v = np.ascontiguousarray(np.where(self.valid, a, 0.0))
            c = np.ascontiguousarray(np.where(self.valid, exact.grid_codes(a, M), 0))
            grid_all[h] = not (c == exact.OFF_GRID).any()
            out += [v, c]
        return out[0], out[1], out[2], out[3], grid_all

    @staticmethod
    def supports(level, method, shape=None):
        """Whether :class:`CellBootstrap` computes ``method`` at ``level``
        (on (N, M) scores of ``shape``: Spearman's replicate groups must
        hold at most :data:`SPEARMAN_EXACT_MAX` cells)."""
        if level == "system":
            return True
        if level not in _LEVEL_CODE:
            return False
        if method == "spearman" and shape is not None:
            N, M = shape
            size = {"input": N, "item": M, "global": N * M}[level]
            return size <= SPEARMAN_EXACT_MAX
        return method in KENDALL_VARIANTS or method in ("pearson", "spearman")

    @staticmethod
    def bytes_per_resample(n_systems, n_inputs):
        """Memory of one replicate in :meth:`values`: its draws and counts
        (int64, N + M each, four arrays) and its per-group arrays (at most
        max(N, M) groups: the kernel's statistics by original group and by
        drawn group, 8 floats each, and the weights and values, about 8
        more)."""
        return 8 * (4 * (n_systems + n_inputs) + 24 * max(n_systems, n_inputs, 1))

    def values(self, rows, cols, dup_pairs=None):
        """The statistic of each replicate (B,) for draws ``rows`` (B, N)
        and ``cols`` (B, M); ``dup_pairs`` as in ``levels.level_values``."""
        if self.level == "system":
            return self.group_weights(rows, cols, dup_pairs)[0][:, 0]
        group, w = self.group_weights(rows, cols, dup_pairs)
        return _aggregate(group, w)

    def group_weights(self, rows, cols, dup_pairs=None):
        """Each replicate's group statistics and their weights (B, G), as
        ``LevelValues.group`` and ``.weight`` of the materialised replicate;
        at ``system`` level the statistic itself (B, 1) and no weights
        (None)."""
        N, M = self.x.shape
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        B = rows.shape[0]
        k = kernels(self.fast, B * N * M)
        cr = counts(rows, N)
        cc = counts(cols, M)
        if self.level == "system":
            return self._system(k, rows, cols, cr, cc, dup_pairs)[:, None], None
        ones = np.ones((B, 1), np.int64)
        if self.level == "input":
            wa, wb, gmult, og = cr, ones, cc, cols
        elif self.level == "item":
            wa, wb, gmult, og = cc, ones, cr, rows
        else:
            wa, wb, gmult, og = cr, cc, ones, np.zeros((B, 1), np.int64)
        if self.method in KENDALL_VARIANTS:
            so = k.boot_kendall_stats(wa, self.ia, wb, self.ib, gmult, self.gptr, self.ycode,
                                      self.xnew, self.xynew, self.gk)
            variant = KENDALL_VARIANTS[self.method]
            pairs = None
            if dup_pairs is not None and self.method in DUP_VARIANTS:
                s = np.take_along_axis(so, og[:, :, None], axis=1)
                nv = s[..., NVALID]
                s[..., TXY] -= dup_pairs
                pairs = nv * (nv - 1) / 2.0 - dup_pairs
                group = kendall_from_stats(s, variant)
            else:
                # the statistic of each original group, then in drawn order
                # (elementwise: the same values as from the drawn groups' counts)
                group = np.take_along_axis(kendall_from_stats(so, variant), og, axis=1)
                nv = np.take_along_axis(so[..., NVALID], og, axis=1)
        else:
            out = k.boot_pearson(wa, self.ia, wb, self.ib, gmult, self.gptr, self.xs, self.ys,
                                 self.ycode, self.xnew, self.gk, self.method == "spearman")
            out = np.take_along_axis(out, og[:, :, None], axis=1)
            group, nv, pairs = out[..., 0], out[..., 1], None
        return group, _weights(group, nv, self.coef.pair_weighted, self.average, pairs)

    def _system(self, k, rows, cols, cr, cc, dup_pairs):
        # (B, N) valid cells of each original row: exact integers, from a
        # float matrix product (BLAS; an int64 @ float64 product took
        # numpy's slow mixed-type loop, 11 ms per replicate at 100 x 10^4),
        # or M when every cell is valid (the columns' draws sum to M)
        if self.all_valid:
            cnt = np.full((cc.shape[0], self.x.shape[0]), self.x.shape[1], np.int64)
        else:
            cnt = np.rint(cc.astype(float) @ self.vf.T).astype(np.int64)
        mx, my = k.boot_row_means(self.sx, self.cx, self.sy, self.cy, self.grid_all, cc, cr, cnt,
                                  exact.GRID)
        xg = np.take_along_axis(mx, rows, axis=1)[:, None, :]
        yg = np.take_along_axis(my, rows, axis=1)[:, None, :]
        return grouped_values(xg, yg, self.method, average=self.average, fast=self.fast,
                              detail=False, dup_pairs=dup_pairs).value
