"""Kernels of the local-accuracy permutation tests (private).

The numba kernels are serial (cheap to compile); parallelism comes from the
execution layer (:func:`metaeval._parallel.run_units` over chunks of
permutations).

Two batched computations of :func:`metaeval.local.context_tau`, each a numba
kernel with a NumPy twin of the same signature (``*_numpy``); the tests check
the twins against each other and against slow pure-Python references, and
the weighted tau against ``scipy.stats.weightedtau``.

``label_sums(values, labels, n_labels)``
    ``out[b, c] = values[labels[b] == c].sum(0)``: the sums of the per-block
    sufficient statistics over the blocks that (permuted) label vector ``b``
    assigns to context ``c``.
``weighted_tau_pairs(A, I, J, weights, symmetric, additive)``
    Weighted Kendall tau (Vigna 2015; Shieh 1998 for product weights on
    permutations) between rows ``A[b, I[p]]`` and ``A[b, J[p]]`` of a batch of
    accuracy matrices, over the columns finite in both rows.

Weighted tau of two vectors x, y (n entries, NaN-free), as computed by
``scipy.stats.weightedtau``: the *rank* of element a is its 0-based position
in the decreasing lexicographic order of (x, y) (ties in x broken by larger
y first; ties in both by larger index first, which does not change the
result), its weight is ``weights[rank]``, and a pair (a, b) weighs
``w_a + w_b`` (additive) or ``w_a * w_b``.  With
``S = sum_{a<b} W_ab sgn(x_a - x_b) sgn(y_a - y_b)``,
``Dx = sum_{a<b} W_ab [x_a != x_b]`` and ``Dy`` likewise,
``tau = S / sqrt(Dx Dy)`` clipped to [-1, 1], NaN when x or y is constant or
n < 2.  ``symmetric`` averages this value and the one with the roles of x
and y swapped (the ranks then come from (y, x)): scipy's ``rank=True``.
"""

from __future__ import annotations

import os

import numpy as np

_DISABLED = os.environ.get("METAEVAL_DISABLE_NUMBA", "") not in ("", "0")

_CHUNK_ELEMS = 2_000_000


# --------------------------------------------------------------------------
# NumPy twins


def label_sums_numpy(values, labels, n_labels):
    """See the module docstring.  ``values`` (nb, F) float64, ``labels``
    (B, nb) integer in [0, n_labels).  Returns (B, n_labels, F)."""
    values = np.asarray(values, float)
    labels = np.asarray(labels, np.int64)
    B, nb = labels.shape
    C = int(n_labels)
    F = values.shape[1]
    out = np.empty((B, C, F))
    step = max(1, _CHUNK_ELEMS // max(1, nb))
    for s in range(0, B, step):
        lab = labels[s : s + step]
        b = lab.shape[0]
        idx = (np.arange(b)[:, None] * C + lab).reshape(-1)
        for f in range(F):
            w = np.broadcast_to(values[:, f], lab.shape).reshape(-1)
            out[s : s + b, :, f] = np.bincount(idx, weights=w, minlength=b * C).reshape(
                b, C
            )
    return out


def _half_numpy(X, Y, V, weights, additive):
    """One direction of the weighted tau for rows of X, Y (R, K), valid V."""
    K = X.shape[1]
    # b precedes a in the decreasing lexicographic order of (x, y, index)
    xa, xb = X[:, :, None], X[:, None, :]
    ya, yb = Y[:, :, None], Y[:, None, :]
    idx = np.arange(K)
    later = (idx[None, :] > idx[:, None])[None]  # b > a
    with np.errstate(invalid="ignore"):
        before = (xb > xa) | ((xb == xa) & ((yb > ya) | ((yb == ya) & later)))
    before &= V[:, None, :]
    rank = before.sum(-1)  # (R, K) position among the valid entries
    w = np.where(V, weights[np.minimum(rank, K - 1)], 0.0)
    W = w[:, :, None] + w[:, None, :] if additive else w[:, :, None] * w[:, None, :]
    upper = np.triu(np.ones((K, K), bool), 1)[None] & V[:, :, None] & V[:, None, :]
    with np.errstate(invalid="ignore"):
        sx = np.where(upper, np.sign(xa - xb), 0.0)
        sy = np.where(upper, np.sign(ya - yb), 0.0)
    W = np.where(upper, W, 0.0)
    num = (W * sx * sy).sum((1, 2))
    dx = (W * (sx != 0)).sum((1, 2))
    dy = (W * (sy != 0)).sum((1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = num / np.sqrt(dx) / np.sqrt(dy)
    tau = np.where((dx > 0) & (dy > 0), np.clip(tau, -1.0, 1.0), np.nan)
    return tau


def weighted_tau_pairs_numpy(A, I, J, weights, symmetric, additive):
    """See the module docstring.  ``A`` (B, C, K) float64 (NaN: undefined),
    ``I``, ``J`` (P,) int64 row indices, ``weights`` (K,) float64 weight of
    each rank.  Returns (B, P)."""
    A = np.asarray(A, float)
    I = np.asarray(I, np.int64)
    J = np.asarray(J, np.int64)
    weights = np.asarray(weights, float)
    B, _, K = A.shape
    P = I.size
    out = np.empty((B, P))
    step = max(1, _CHUNK_ELEMS // max(1, P * K * K))
    for s in range(0, B, step):
        X = A[s : s + step][:, I, :].reshape(-1, K)
        Y = A[s : s + step][:, J, :].reshape(-1, K)
        V = np.isfinite(X) & np.isfinite(Y)
        t = _half_numpy(X, Y, V, weights, additive)
        if symmetric:
            t = (t + _half_numpy(Y, X, V, weights, additive)) / 2.0
        out[s : s + step] = t.reshape(-1, P)
    return out


# --------------------------------------------------------------------------
# numba kernels

if _DISABLED:  # pragma: no cover - exercised with METAEVAL_DISABLE_NUMBA=1
    label_sums = label_sums_numpy
    weighted_tau_pairs = weighted_tau_pairs_numpy
else:
    from . import _jit

    _jit.setup_cache()  # before any kernel is decorated (read-only installs)
    import numba as nb

    @nb.njit(cache=True)
    def label_sums(values, labels, n_labels):  # pragma: no cover - numba
        B, nb_ = labels.shape
        F = values.shape[1]
        out = np.zeros((B, n_labels, F))
        for b in range(B):
            for j in range(nb_):
                c = labels[b, j]
                for f in range(F):
                    out[b, c, f] += values[j, f]
        return out

    @nb.njit(cache=True)
    def _half(x, y, n, weights, additive, w):  # pragma: no cover - numba
        for a in range(n):
            r = 0
            for b in range(n):
                if x[b] > x[a] or (
                    x[b] == x[a] and (y[b] > y[a] or (y[b] == y[a] and b > a))
                ):
                    r += 1
            w[a] = weights[r]
        num = 0.0
        dx = 0.0
        dy = 0.0
        for a in range(n):
            for b in range(a + 1, n):
                W = w[a] + w[b] if additive else w[a] * w[b]
                sx = 0.0
                if x[a] > x[b]:
                    sx = 1.0
                elif x[a] < x[b]:
                    sx = -1.0
                sy = 0.0
                if y[a] > y[b]:
                    sy = 1.0
                elif y[a] < y[b]:
                    sy = -1.0
                num += W * sx * sy
                if sx != 0.0:
                    dx += W
                if sy != 0.0:
                    dy += W
        if dx > 0.0 and dy > 0.0:
            t = num / np.sqrt(dx) / np.sqrt(dy)
            return min(1.0, max(-1.0, t))
        return np.nan

    @nb.njit(cache=True)
    def weighted_tau_pairs(A, I, J, weights, symmetric, additive):  # pragma: no cover
        B, _, K = A.shape
        P = I.size
        out = np.empty((B, P))
        x = np.empty(K)
        y = np.empty(K)
        w = np.empty(K)
        for b in range(B):
            for p in range(P):
                out[b, p] = _pair(
                    A, b, I[p], J[p], weights, symmetric, additive, x, y, w
                )
        return out

    @nb.njit(cache=True)
    def _pair(A, b, i, j, weights, symmetric, additive, x, y, w):  # pragma: no cover
        K = A.shape[2]
        n = 0
        for k in range(K):
            u = A[b, i, k]
            v = A[b, j, k]
            if np.isfinite(u) and np.isfinite(v):
                x[n] = u
                y[n] = v
                n += 1
        t = _half(x, y, n, weights, additive, w)
        if symmetric:
            t = (t + _half(y, x, n, weights, additive, w)) / 2.0
        return t
