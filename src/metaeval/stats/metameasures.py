"""Meta-evaluation of correlation measures on arrays (paper 001): competition ranks of the
measures and the statistics of one metric on both halves of every split of the inputs
(ranking consistency, Algorithm 3).

Arrays in, arrays out; :mod:`metaeval.measures` (``discriminative_power``,
``ranking_consistency``) reads them.
"""

from __future__ import annotations

import warnings

import numpy as np

from .levels import level_values
from .resampling import resample_chunks


def rank_low_first(values, *, higher_is_better=False):
    """1 = best; ties share the smallest rank; NaN stays NaN."""
    v = np.asarray(values, float)
    key = -v if higher_is_better else v
    out = np.full(v.shape, np.nan)
    ok = np.isfinite(key)
    for i in np.flatnonzero(ok):
        out[i] = 1 + int((key[ok] < key[i]).sum())
    return out


def split_half_statistics(x, z, d1, d2, measures, average, budget=None):
    """(n_measures, 2, T) statistics of one metric on both halves of every split,
    in chunks of splits whose cell arrays fit the memory budget."""
    T = d1.shape[0]
    out = np.empty((len(measures), 2, T))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for sl in resample_chunks(T, x.size, budget):
            for h, d in enumerate((d1[sl], d2[sl])):
                xs = np.ascontiguousarray(np.transpose(x[:, d], (1, 0, 2)))  # (t, N, Mh)
                zs = np.ascontiguousarray(np.transpose(z[:, d], (1, 0, 2)))
                for k, (lv, m) in enumerate(measures):
                    out[k, h, sl] = level_values(xs, zs, lv, m, average=average,
                                                 detail=False).value
    return out


__all__ = ["rank_low_first", "split_half_statistics"]
