"""Correlation measures of batches of discretized scores: the integer-code engine.

The simulation (:mod:`metaeval.simulation`) evaluates every (level, method)
measure on batches of (B, N, M) score matrices.  Two twins compute the same
numbers:

* :func:`generic_measures` / :func:`arranged_measures`: the reference path,
  :func:`metaeval.stats.levels.level_values` on float scores;
* :func:`code_measures`: the fast path for integer codes 0..C-1 (discretized
  scores), which counts instead of sorting: system means of small integers,
  Spearman ranks per code (:func:`ranks_from_codes`), Kendall statistics from
  contingency tables (:func:`kendall_stats_from_codes`).  It equals the
  generic path exactly (tests/test_simulation.py).
"""

from __future__ import annotations

import numpy as np

from ._kendall import KNIGHT_MIN_N
from .coefficients import get_coefficient, kendall_from_stats
from .levels import _aggregate, _weights, arrange, grouped_values, level_values

# Kendall statistics of codes come from contingency tables when a table has
# at most TABLE_FACTOR times as many cells as a group has items.
TABLE_FACTOR = 4

_KENDALL_VARIANTS = {"kendall_b": "b", "kendall_c": "c", "kendall_23": "23", "acc_23": "acc23"}


def dropped_groups(lv, method):
    if get_coefficient(method).batch is None:  # acc_eq: only groups without a pair
        return (lv.n_valid < 2).sum(-1)
    return np.isnan(lv.group).sum(-1)


def generic_measures(x, z, measures, average):
    """Every measure with :func:`level_values` (the reference path)."""
    K, B = len(measures), x.shape[0]
    vals = np.empty((K, B))
    drop = np.empty((K, B), np.int64)
    for k, (level, method) in enumerate(measures):
        lv = level_values(x, z, level, method, average=average)
        vals[k] = lv.value
        drop[k] = dropped_groups(lv, method)
    return vals, drop


def arranged_measures(x, z, measures, average):
    """Like :func:`generic_measures`, arranging each level once."""
    K, B = len(measures), x.shape[0]
    vals = np.empty((K, B))
    drop = np.empty((K, B), np.int64)
    by_level = {}
    for k, (level, method) in enumerate(measures):
        by_level.setdefault(level, []).append((k, method))
    for level, items in by_level.items():
        xg, zg = arrange(x, z, level)
        for k, method in items:
            lv = grouped_values(xg, zg, method, average=average, detail=False)
            vals[k] = lv.value
            drop[k] = dropped_groups(lv, method)
    return vals, drop


def _arrange_codes(c, level):
    B, N, M = c.shape
    if level == "input":
        return np.ascontiguousarray(c.transpose(0, 2, 1))
    if level == "global":
        return c.reshape(B, 1, N * M)
    return c  # item


def ranks_from_codes(codes, n_categories):
    """Average ranks (1-based; ties get the mean rank) of integer codes
    0..C-1 along the last axis, by counting: the rank of code a is
    ``#{codes < a} + (#{codes == a} + 1) / 2``.  O(n + C) per row; equal to
    :func:`metaeval.stats.coefficients.rank_batch` (exact: half-integers).
    """
    c = np.asarray(codes, np.int64)
    R = c.size // c.shape[-1] if c.size else 0
    flat = c.reshape(R, -1) + n_categories * np.arange(R)[:, None]
    cnt = np.bincount(flat.ravel(), minlength=R * n_categories)
    below = np.cumsum(cnt.reshape(R, n_categories), axis=1).ravel() - cnt
    rank_of = below + (cnt + 1) * 0.5
    return rank_of[flat].reshape(c.shape)


def kendall_stats_from_codes(xc, zc, n_x, n_z):
    """Kendall sufficient statistics (B, G, 8) of integer codes from each
    group's n_x x n_z contingency table T (layout of
    :func:`metaeval.stats.coefficients.kendall_stats`).  With
    ``P[a, b] = sum_{a' < a, b' < b} T`` and ``Q[a, b] = sum_{a' < a, b' > b} T``::

        C   = sum_{a,b} T[a,b] P[a,b]              (concordant pairs)
        D   = sum_{a,b} T[a,b] Q[a,b]              (discordant pairs)
        Txy = sum T[a,b] (T[a,b] - 1) / 2
        Tx  = sum_a r_a (r_a - 1) / 2 - Txy        (r: row sums)
        Ty  = sum_b c_b (c_b - 1) / 2 - Txy        (c: column sums)

    O(n + n_x n_z) per group, in exact integer arithmetic.
    """
    xc = np.asarray(xc, np.int64)
    zc = np.asarray(zc, np.int64)
    B, G, n = xc.shape
    A, K = n_x, n_z
    cell = (np.arange(B * G).reshape(B, G, 1) * A + xc) * K + zc
    T = np.bincount(cell.ravel(), minlength=B * G * A * K).reshape(B, G, A, K)
    # U[a, b] = sum_{a' < a, b' <= b} T  (rows strictly above, columns up to b)
    U = np.zeros((B, G, A, K), np.int64)
    np.cumsum(T[..., :-1, :], axis=-2, out=U[..., 1:, :])
    np.cumsum(U, axis=-1, out=U)
    conc = (T[..., 1:, 1:] * U[..., 1:, :-1]).sum((-2, -1))
    disc = (T * (U[..., -1:] - U)).sum((-2, -1))
    txy = (T * (T - 1)).sum((-2, -1)) // 2
    rows = T.sum(-1)
    cols = T.sum(-2)
    tx = (rows * (rows - 1)).sum(-1) // 2 - txy
    ty = (cols * (cols - 1)).sum(-1) // 2 - txy
    out = np.empty((B, G, 8))
    out[..., 0] = conc
    out[..., 1] = disc
    out[..., 2] = tx
    out[..., 3] = ty
    out[..., 4] = txy
    out[..., 5] = n
    out[..., 6] = (rows > 0).sum(-1)
    out[..., 7] = (cols > 0).sum(-1)
    return out


def code_measures(xc, zc, n_x, n_z, measures, average, *, table_factor=None):
    """Every measure on integer-coded (discretized) batches.

    Equal to :func:`generic_measures` on the float codes (tested for
    exact equality): system means are sums of small integers (exact in any
    order), Spearman ranks are counted per code (:func:`ranks_from_codes`),
    Kendall statistics come from contingency tables
    (:func:`kendall_stats_from_codes`) when a table is not much larger than
    a group (``n_x * n_z <= TABLE_FACTOR * n``); everything else goes
    through the generic code on the same arrays.
    """
    factor = TABLE_FACTOR if table_factor is None else table_factor
    K, B = len(measures), xc.shape[0]
    M = xc.shape[-1]
    vals = np.empty((K, B))
    drop = np.empty((K, B), np.int64)
    by_level = {}
    for k, (level, method) in enumerate(measures):
        by_level.setdefault(level, []).append((k, method))
    xf = zf = None
    for level, items in by_level.items():
        if level == "system":
            xg = (xc.sum(-1) / M)[:, None, :]
            zg = (zc.sum(-1) / M)[:, None, :]
            for k, method in items:
                lv = grouped_values(xg, zg, method, average=average, detail=False)
                vals[k] = lv.value
                drop[k] = dropped_groups(lv, method)
            continue
        xi = zi = xg = zg = stats = None
        for k, method in items:
            if method == "spearman":
                if xi is None:
                    xi, zi = _arrange_codes(xc, level), _arrange_codes(zc, level)
                rx = ranks_from_codes(xi, n_x)
                rz = ranks_from_codes(zi, n_z)
                lv = grouped_values(rx, rz, "pearson", average=average, detail=False)
            elif method in _KENDALL_VARIANTS and _use_table(
                n_x * n_z, _group_size(xc, level), factor
            ):
                if stats is None:
                    if xi is None:
                        xi, zi = _arrange_codes(xc, level), _arrange_codes(zc, level)
                    stats = kendall_stats_from_codes(xi, zi, n_x, n_z)
                group = kendall_from_stats(stats, _KENDALL_VARIANTS[method])
                nv = np.full(group.shape, xi.shape[-1])
                w = _weights(group, nv, get_coefficient(method).pair_weighted, average)
                vals[k] = _aggregate(group, w)
                drop[k] = np.isnan(group).sum(-1)
                continue
            else:
                if xg is None:
                    if xf is None:
                        xf, zf = xc.astype(float), zc.astype(float)
                    xg, zg = arrange(xf, zf, level)
                lv = grouped_values(xg, zg, method, average=average, detail=False)
            vals[k] = lv.value
            drop[k] = dropped_groups(lv, method)
    return vals, drop


def _use_table(cells, n, factor):
    # small groups: the generic O(n^2) kernel beats building tables
    return n >= KNIGHT_MIN_N and cells <= factor * n


def _group_size(c, level):
    _, N, M = c.shape
    return {"input": N, "item": M, "global": N * M}[level]


__all__ = [
    "TABLE_FACTOR",
    "arranged_measures",
    "code_measures",
    "dropped_groups",
    "generic_measures",
    "kendall_stats_from_codes",
    "ranks_from_codes",
]
