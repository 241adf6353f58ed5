"""Weighted Kendall tau (Shieh 1998, Vigna 2015): the statistic, its validation, and the
kernels of the local-accuracy permutation tests, each with its NumPy twin.

:func:`weighted_tau` of two vectors is public (re-exported by :mod:`metaeval.local`, which
uses this module for paper 004's context tau).  The numba kernels are serial (cheap to compile); parallelism comes from the
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
import warnings
from collections.abc import Callable

import numpy as np

from .._stacklevel import user_stacklevel
from ..errors import ConstantInputWarning, ParameterError, TooFewPairsWarning
from .inference import use_kernels

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


# --------------------------------------------------------------------------
# the statistic: validation and the public function

#: Weighted-tau variants: name -> (symmetric, additive, description).
WTAU_VARIANTS = {
    "vigna": (
        True,
        True,
        (
            "Vigna's (2015) additive tau_h, averaged over the rankings by (x, y) and "
            "(y, x): scipy.stats.weightedtau(x, y, rank=True, weigher=w, additive=True), "
            "scipy's default; symmetric"
        ),
    ),
    "shieh": (
        False,
        False,
        (
            "Shieh's (1998) product weights w(r_a) w(r_b), ranks r from the first "
            "(row) vector: scipy.stats.weightedtau(x, y, rank=None, weigher=w, "
            "additive=False); directed"
        ),
    ),
}


def _hyperbolic(r):
    return 1.0 / (r + 1.0)


def rank_weights(weigher, K: int) -> tuple[np.ndarray, str]:
    """The weights of ranks 0..K-1 and their name for a signature: ``weigher(r)`` (finite,
    positive), or the hyperbolic ``1/(r+1)`` of paper 004 when ``weigher`` is None."""
    if weigher is None:
        return _hyperbolic(np.arange(K, dtype=float)), "hyperbolic"
    if not callable(weigher):
        raise ParameterError(
            f"weigher={weigher!r} must be a function of the 0-based rank r (e.g. "
            "lambda r: 1 / (r + 1), the default hyperbolic weigher)"
        )
    w = np.array([float(weigher(r)) for r in range(K)])
    if not (np.isfinite(w).all() and (w > 0).all()):
        raise ParameterError(
            f"weigher must give a finite positive weight to every rank 0..{K - 1}; got "
            f"{w.tolist()}"
        )
    return w, "custom"


def check_variant(variant):
    """``(symmetric, additive)`` of a name of :data:`WTAU_VARIANTS`, or the error listing them."""
    if not isinstance(variant, str) or variant not in WTAU_VARIANTS:
        choices = "; ".join(f"{k!r}: {v[2]}" for k, v in WTAU_VARIANTS.items())
        raise ParameterError(f"variant={variant!r}; choose one of {choices}")
    return WTAU_VARIANTS[variant][:2]


def weighted_tau(
    x, y, *, variant: str = "vigna", weigher: Callable | None = None
) -> float:
    r"""Weighted Kendall tau of two score vectors, top-weighted by rank.

    Elements are ranked by decreasing value (rank 0 = the largest; in
    :func:`context_tau` the most accurate metric) and weighted by
    ``weigher(r)``, by default the hyperbolic weight :math:`1/(r+1)` of
    paper 004 (section 4.3).  With pair weights :math:`W_{ab}`,

    .. math:: \tau = \frac{\sum_{a<b} W_{ab}\,\mathrm{sgn}(x_a - x_b)\,
              \mathrm{sgn}(y_a - y_b)}{\sqrt{\sum_{a<b} W_{ab}[x_a \ne x_b]}
              \sqrt{\sum_{a<b} W_{ab}[y_a \ne y_b]}}

    (Vigna 2015, Def. of :math:`\tau_w` with ties, a weighted tau-b).  The
    rank of an element is its position in the decreasing lexicographic order
    of (x, y): ties in x are broken by y; ties in both do not affect the
    value.  ``variant``:

    ``"vigna"`` (default)
        :math:`W_{ab} = w(r_a) + w(r_b)` (additive), and the value is the
        average of the one ranked by (x, y) and the one ranked by (y, x):
        Vigna's :math:`\tau_h`, symmetric in x and y.  Equals
        ``scipy.stats.weightedtau(x, y, rank=True, weigher=lambda r: 1/(r+1),
        additive=True)``, which is scipy's default; the wording of paper 004
        ("a hyperbolic weighing that maps each rank r to weight 1/(r+1)")
        is that of scipy's documentation of this default.
    ``"shieh"``
        :math:`W_{ab} = w(r_a)\,w(r_b)` (multiplicative) with the ranks of x
        (then y) only.  For x and y without ties this is Shieh's (1998)
        weighted tau :math:`\tau_w = \sum_{a<b} w_{ab}\,\mathrm{sgn}(a-b)\,
        \mathrm{sgn}(R_a - R_b) / \sum_{a<b} w_{ab}` with the product
        weights :math:`w_{ab} = v_a v_b`, :math:`v_a = 1/(a+1)` over the
        positions a of x's ranking; with ties, Vigna's generalisation.
        Equals ``scipy.stats.weightedtau(x, y, rank=None, weigher=...,
        additive=False)``.  Not symmetric: x gives the weights.

    Unlike scipy (which takes NaN for the smallest value), pairs with a NaN
    are left out.

    Parameters
    ----------
    x, y : array_like
        1-D, same length.
    variant : {"vigna", "shieh"}
    weigher : callable, optional
        Weight of a 0-based rank (finite, positive); default ``1/(r+1)``.

    Returns
    -------
    float
        NaN (with a warning) when fewer than two complete pairs remain or x
        or y is constant.

    References
    ----------
    G. S. Shieh (1998). A weighted Kendall's tau statistic. *Statistics &
    Probability Letters* 39(1), 17-24.

    S. Vigna (2015). A weighted correlation index for rankings with ties.
    *Proceedings of WWW 2015*, 1166-1176.

    Examples
    --------
    >>> round(weighted_tau([0.9, 0.7, 0.3], [0.3, 0.7, 0.9]), 6)
    -1.0
    >>> from scipy.stats import weightedtau
    >>> x, y = [0.9, 0.8, 0.5, 0.4], [0.8, 0.9, 0.4, 0.5]
    >>> bool(np.isclose(weighted_tau(x, y), weightedtau(x, y).statistic))
    True
    """
    symmetric, additive = check_variant(variant)
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ParameterError(
            f"x and y must be 1-D of the same length; got {x.shape}, {y.shape}"
        )
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    w, _ = rank_weights(weigher, max(n, 1))
    A = np.stack([x[ok], y[ok]])[None]  # (1, 2, n)
    t = float(
        weighted_tau_pairs_numpy(
            A, np.array([0]), np.array([1]), w, symmetric, additive
        )[0, 0]
    )
    if not np.isfinite(t):
        cls = TooFewPairsWarning if n < 2 else ConstantInputWarning
        warnings.warn(
            f"weighted tau undefined: {n} complete pair(s)"
            + ("" if n < 2 else ", and x or y is constant"),
            cls,
            stacklevel=user_stacklevel(),
        )
    return t


def tau_batch(A, I, J, w, symmetric, additive):
    """:func:`weighted_tau_pairs` on a batch (B, C, K), by the kernel or its NumPy twin
    (:func:`metaeval.stats.inference.use_kernels` decides by size)."""
    B, _, K = A.shape
    fn = (
        weighted_tau_pairs
        if use_kernels(B * I.size * K * K)
        else weighted_tau_pairs_numpy
    )
    return fn(np.ascontiguousarray(A), I, J, w, symmetric, additive)
