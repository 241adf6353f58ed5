"""Local metric accuracy on arrays (paper 004): the outcome codes of pairs, the binomial
interval of an accuracy (pooled pairs or Kish's effective size of a mean over inputs), ranks
with accuracies within a tolerance tied, Pearson's chi-square of a context x outcome table, and
the clustering of contexts by weighted tau.

Arrays in, arrays out; :mod:`metaeval.local` (``local_accuracy``, ``context_chi2``,
``context_tau``) reads them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _st

from .inference import binomial_interval

#: Outcome codes of a pair for one metric.
CORRECT, TIE, INCORRECT, MISSING = 1, 0, -1, -2
#: The name of each outcome code.
OUTCOME_NAMES = {
    CORRECT: "correct",
    TIE: "tie",
    INCORRECT: "incorrect",
    MISSING: "missing",
}

#: Accuracies closer than this are tied when metrics are ranked (rank
#: column, weighted tau): Eq. 2 sums fractions in floating point, so two
#: equal accuracies (1/3 and 2/6) can differ in the last bits.
ACCURACY_TIE_TOL = 1e-9


def outcome(d, atol):
    """The outcome code of each score difference ``d`` (better minus worse output): CORRECT
    above ``atol``, INCORRECT below ``-atol``, TIE within, MISSING for NaN."""
    code = np.full(d.shape, MISSING, np.int8)
    ok = np.isfinite(d)
    code[ok & (d > atol)] = CORRECT
    code[ok & (d < -atol)] = INCORRECT
    code[ok & (np.abs(np.where(ok, d, 0.0)) <= atol)] = TIE
    return code


def accuracy_interval(k, n, cl, method, sumsq=None, n_pairs=None):
    """Binomial interval of the accuracy k / n.

    Pooled pairs (``sumsq`` None): k correct of n pairs.  Eq. 2 (``sumsq``
    given): k is the sum of the n per-input accuracies and ``sumsq`` the sum
    of their squares; the interval is that of a proportion p = k / n with
    Kish's effective sample size n_eff = n p (1 - p) / s^2 (s^2 the sample
    variance of the per-input accuracies, ddof 1), clipped to
    [n, n_pairs]: n inputs is the conservative bound (a mean of values in
    [0, 1] has variance at most p (1 - p) / n), n_pairs the case of
    independent pairs.  With one input or s^2 = 0 (every input has the same
    accuracy) the bound that applies is used: n for one input, n_pairs
    otherwise.
    """
    if n <= 0:
        return math.nan, math.nan
    if sumsq is None:
        return binomial_interval(k, n, confidence_level=cl, method=method)
    p = k / n
    if n < 2:
        n_eff = float(n)
    else:
        s2 = max(0.0, (sumsq - k * k / n) / (n - 1))
        n_eff = n * p * (1.0 - p) / s2 if s2 > 0 else float(n_pairs)
        n_eff = min(max(n_eff, float(n)), float(n_pairs))
    return binomial_interval(p * n_eff, n_eff, confidence_level=cl, method=method)


def snap_ties(A: np.ndarray, tol: float = ACCURACY_TIE_TOL) -> np.ndarray:
    """Tie the values of each row (last axis) that are within ``tol`` of their
    neighbour in sorted order: each run of such values takes the value of its
    smallest member.  NaN stays NaN."""
    A = np.asarray(A, float)
    order = np.argsort(A, axis=-1, kind="stable")  # NaN last
    s = np.take_along_axis(A, order, -1)
    brk = np.ones(s.shape, bool)
    with np.errstate(invalid="ignore"):
        brk[..., 1:] = ~(s[..., 1:] - s[..., :-1] <= tol)
    pos = np.broadcast_to(np.arange(s.shape[-1]), s.shape)
    first = np.maximum.accumulate(np.where(brk, pos, 0), axis=-1)
    rep = np.take_along_axis(s, first, -1)
    out = np.empty_like(A)
    np.put_along_axis(out, order, rep, -1)
    return out


def tied_ranks(stat: np.ndarray) -> np.ndarray:
    """Average ranks (1 = highest) over the finite entries of each column
    (accuracies within ``ACCURACY_TIE_TOL`` tied)."""
    stat = snap_ties(stat.T).T
    out = np.full(stat.shape, np.nan)
    for c in range(stat.shape[1]):
        ok = np.isfinite(stat[:, c])
        if ok.any():
            out[ok, c] = _st.rankdata(-stat[ok, c], method="average")
    return out


def chi2_stat(k, n):
    """Pearson's X^2 of the r x 2 table [[k_c, n_c - k_c]] (batched over a
    leading axis of k), with the margins of the observed table."""
    N = n.sum()
    p = k.sum(-1, keepdims=True) / N
    e = n * p  # expected correct
    with np.errstate(invalid="ignore", divide="ignore"):
        return (((k - e) ** 2) / (e * (1.0 - p))).sum(-1)


def accuracies(sums, K):
    """Accuracies num / den from the stacked sums (..., 2K): NaN where den is 0."""
    num, den = sums[..., :K], sums[..., K:]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def mean_tau(t):
    """Mean of the finite entries along the last axis (NaN if none)."""
    from .exact import nanmean

    return nanmean(t, axis=-1)  # correctly rounded: equal exact means tie


def cluster_contexts(tau, threshold, n_clusters):
    """Average-linkage clusters of contexts on 1 - tau (symmetrized; a cut at ``1 - threshold``
    or ``n_clusters`` clusters): labels by first appearance, leaf order and the linkage."""
    from scipy.cluster.hierarchy import fcluster, leaves_list, linkage
    from scipy.spatial.distance import squareform

    sym = (tau + tau.T) / 2.0
    D = 1.0 - np.where(np.isfinite(sym), sym, 0.0)
    np.fill_diagonal(D, 0.0)
    D = np.clip(D, 0.0, 2.0)
    Z = linkage(squareform(D, checks=False), method="average")
    if n_clusters is not None:
        raw = fcluster(Z, t=n_clusters, criterion="maxclust")
    else:
        raw = fcluster(Z, t=1.0 - threshold, criterion="distance")
    # number the clusters by first appearance of their contexts
    mapping = {}
    for r in raw:
        mapping.setdefault(int(r), len(mapping) + 1)
    labels = np.array([mapping[int(r)] for r in raw], np.int64)
    return labels, leaves_list(Z).astype(np.int64), Z


__all__ = [
    "OUTCOME_NAMES",
    "ACCURACY_TIE_TOL",
    "outcome",
    "accuracy_interval",
    "snap_ties",
    "tied_ranks",
    "chi2_stat",
    "accuracies",
    "mean_tau",
    "cluster_contexts",
]
