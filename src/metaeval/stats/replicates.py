"""The resampled statistics of one (level, method): the within-group permutation null and the
bootstrap replicates, drawn in chunks of resamples that fit a memory budget (the same numbers
for any chunking).  Arrays in, arrays out: :func:`metaeval.correlate` runs them per metric, level
and coefficient, and :mod:`metaeval.stats.cellboot` computes the replicates without
materialising the resampled cells where it can."""

from __future__ import annotations

import numpy as np

from . import resampling as _rs
from .cellboot import CellBootstrap
from .levels import DUP_VARIANTS, grouped_values, level_values

__all__ = ["permutation_null", "bootstrap_distribution"]


def permutation_null(gen, xg, yg, method, average, n_resamples, budget=None):
    """Null statistics of the within-group permutation test, in chunks of
    resamples that fit the memory budget (the same numbers for any chunking)."""
    shuffle = _rs.WithinGroupShuffle(xg, yg)
    null = np.empty(n_resamples)
    for sl in _rs.resample_chunks(n_resamples, xg.size, budget):
        xs, ys = shuffle.draw(gen, sl.stop - sl.start)
        null[sl] = grouped_values(xs, ys, method, average=average, detail=False).value
    return null


def bootstrap_distribution(gen, x, y, level, method, average, n_resamples, unit, budget=None,
                           block=None):
    """Bootstrap replicates of the statistic, in chunks of resamples.

    Pairs formed by one original drawn twice are left out of the pair
    statistics (:mod:`metaeval.stats.levels`, "Bootstrap replicates and
    duplicated originals").  ``block`` (a slice of ``range(n_resamples)``):
    only those replicates, with the draws of the whole run
    (:func:`metaeval.stats.resampling.bootstrap_chunks`).
    """
    N, M = x.shape
    valid = np.isfinite(x) & np.isfinite(y)
    dup_needed = method in DUP_VARIANTS or method == "acc_eq"
    lo, hi = (0, n_resamples) if block is None else (block.start, block.stop)
    dist = np.empty(hi - lo)
    # replicates computed from the draws, not materialised (stats/cellboot.py)
    cells = (CellBootstrap(x, y, level, method, average)
             if CellBootstrap.supports(level, method, x.shape) else None)
    bpc = None if cells is None else CellBootstrap.bytes_per_resample(N, M) / max(1, N * M)
    for sl, rows, cols in _rs.bootstrap_chunks(gen, n_resamples, N, M, unit, budget, bpc, block):
        dup = _rs.duplicate_pairs(rows, cols, valid, level) if dup_needed else None
        sl = slice(sl.start - lo, sl.stop - lo)
        if cells is not None:
            dist[sl] = cells.values(rows, cols, dup)
            continue
        xb = _rs.take_cells(x, rows, cols)
        yb = _rs.take_cells(y, rows, cols)
        dist[sl] = level_values(
            xb, yb, level, method, average=average, detail=False, dup_pairs=dup
        ).value
    return dist
