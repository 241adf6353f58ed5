"""Soft pairwise accuracy (SPA) kernels: batched pairwise permutation p-values.

SPA (Thompson et al. 2024, "Improving Statistical Significance in Human
Evaluation of Automatic Metrics via Soft Pairwise Accuracy", WMT24's
system-level statistic) compares, for every pair of systems (i, j), the
p-value of "i is better than j" from the human scores with the same p-value
from the metric scores:

    SPA = 1 - mean_{i<j} | p_human(i > j) - p_metric(i > j) |

Each p-value is a paired permutation test over segments: a draw flips the
sign of each segment's difference ``s_i - s_j`` with probability 1/2 (sign
vector ``2m - 1``), and

    p(i > j) = #{draws: sum_k (2m_k - 1)(s_ik - s_jk) >= sum_k (s_ik - s_jk)} / P

(the share of draws, without the +1 of metaeval's usual p-values: the
definition of SPA uses these p-values as soft pairwise decisions).  As in
mt-metrics-eval's ``pce.py`` (``compute_pairwise_p_values``), one sign matrix
is drawn for all systems and pairs: ``partial = signs @ scores.T`` once,
then every pair is a difference of two columns.  Here one matmul also serves
the human scores and every metric (a leading batch axis).

The sign matrix is drawn as pce.py does (uniform float32 in [0, 1) rounded
to the nearest integer, half to even), so an int seed gives the same draws
as ``compute_pairwise_p_values(..., seed=that int)``; with
``precision="float32"`` the arithmetic is pce.py's too (float32 scores, sums
and matmul), which reproduces its p-values exactly.
"""

from __future__ import annotations

import numpy as np

from .coefficients import pow2_scaled

PRECISIONS = ("float64", "float32")


def sign_draws(gen: np.random.Generator, n_permutations: int, n_inputs: int) -> np.ndarray:
    """``(P, M)`` float32 matrix of +-1 (pce.py's draw recipe, same stream use)."""
    u = gen.random(size=(n_permutations, n_inputs), dtype=np.float32)
    np.rint(u, out=u)  # 0 or 1 (0.5 rounds to 0)
    u *= 2.0
    u -= 1.0
    return u


#: Relative tolerance of the float64 comparison of a null sum with the observed one (see
#: :func:`pairwise_pvalues`); pce.py's float32 comparison is exact (``precision="float32"``).
_TIE_RTOL = 1e-10


def pairwise_pvalues(scores: np.ndarray, signs: np.ndarray, *, precision: str = "float64") -> np.ndarray:
    """Permutation p-values of "system i better than system j" for a batch.

    Parameters
    ----------
    scores : ndarray, shape (K, N, M)
        K score matrices (human, metrics) of N systems on the same M inputs,
        no NaN.
    signs : ndarray, shape (P, M)
        +-1 sign draws (:func:`sign_draws`).
    precision : {"float64", "float32"}
        Arithmetic. ``float64`` counts a draw whose sum equals the observed
        one up to rounding (relative tolerance 1e-10 of the two rows'
        absolute sums) as reaching it, so draws that tie exactly (the
        identity draw, flips of tied segments) count whatever the summation
        order; ``float32`` is pce.py's exact comparison in float32, which
        reproduces WMT's numbers draw for draw but decides such ties by
        rounding.

    Returns
    -------
    ndarray, shape (K, N, N)
        ``p[k, i, j]`` for i < j; NaN on and below the diagonal.
    """
    S = np.asarray(scores)
    K, N, M = S.shape
    P = signs.shape[0]
    out = np.full((K, N, N), np.nan)
    iu = np.triu_indices(N, 1)
    if precision == "float32":
        sg = np.asarray(signs, dtype=np.float32)
        for k in range(K):
            s32 = S[k].astype(np.float32)
            tot = np.sum(s32, axis=1)
            part = np.matmul(sg, s32.T)  # (P, N)
            null = part[:, iu[0]] - part[:, iu[1]]
            test = tot[iu[0]] - tot[iu[1]]
            out[k][iu] = np.sum(null >= test, axis=0) / P
        return out
    sg = np.asarray(signs, dtype=np.float64)
    flat = S.reshape(K * N, M).astype(np.float64)
    tot = flat.sum(axis=1).reshape(K, N)
    part = (sg @ flat.T).reshape(P, K, N)
    null = part[:, :, iu[0]] - part[:, :, iu[1]]  # (P, K, pairs)
    test = tot[:, iu[0]] - tot[:, iu[1]]  # (K, pairs)
    # Draws equal to the observed sum in exact arithmetic (the all-+1 draw; flips of tied
    # segments) must count whatever the summation order: the matmul and the row sums round
    # differently, by at most about M * eps * sum|s|. Count null >= test - tol with tol far
    # above that bound and far below any real difference of two sums.
    mag = np.abs(flat).sum(axis=1).reshape(K, N)
    tol = _TIE_RTOL * (mag[:, iu[0]] + mag[:, iu[1]])
    out[:, iu[0], iu[1]] = np.count_nonzero(null >= test - tol, axis=0) / P
    return out


def spa_from_pvalues(p_human: np.ndarray, p_metric: np.ndarray) -> np.ndarray:
    """``1 - mean_{i<j} |p_human - p_metric|`` over the last two axes (N, N)."""
    ph = np.asarray(p_human, dtype=float)
    pm = np.asarray(p_metric, dtype=float)
    N = pm.shape[-1]
    iu = np.triu_indices(N, 1)
    d = np.abs(ph[..., iu[0], iu[1]] - pm[..., iu[0], iu[1]])
    if d.ndim == 1:
        return 1.0 - np.mean(d)
    flat = d.reshape(-1, d.shape[-1])
    # one 1-D mean per matrix: the same summation order as pce.py's np.mean
    out = np.array([1.0 - np.mean(row) for row in flat])
    return out.reshape(d.shape[:-1])


def swapped_spa(za, zb, p_human, signs, masks, *, precision="float64", chunk=32):
    """SPA of the two Perm-Both halves for each swap mask.

    Parameters
    ----------
    za, zb : ndarray (N, M)
        The two metrics (z-scored), complete.
    p_human : ndarray (N, N)
        Human pairwise p-values (same ``signs``).
    signs : ndarray (P, M)
    masks : ndarray (D, N, M) of bool
        True: the cell's values are exchanged.

    Returns
    -------
    ndarray (D, 2): SPA of half A (``where(mask, zb, za)``) and half B.
    """
    D = masks.shape[0]
    out = np.empty((D, 2))
    for s in range(0, D, chunk):
        w = masks[s : s + chunk]
        a = np.where(w, zb, za)
        b = np.where(w, za, zb)
        both = np.concatenate([a, b], axis=0)  # (2d, N, M)
        p = pairwise_pvalues(both, signs, precision=precision)
        spa = spa_from_pvalues(p_human, p)
        d = w.shape[0]
        out[s : s + d, 0] = spa[:d]
        out[s : s + d, 1] = spa[d:]
    return out


def zscore_flat(a):
    """Global z-score over all cells (population sd), as scipy.stats.zscore
    on the flattened vector (mt-metrics-eval ``PermutationSigDiff``): the
    scores of two metrics made exchangeable before a Perm-Both swap."""
    a = pow2_scaled(a)  # beyond ~1e154 the sum of squares overflowed: std inf, z all 0
    v = a.ravel()
    sd = v.std()
    return (a - v.mean()) / sd if sd > 0 else a - v.mean()


__all__ = [
    "PRECISIONS",
    "sign_draws",
    "pairwise_pvalues",
    "spa_from_pvalues",
    "swapped_spa",
    "zscore_flat",
]
