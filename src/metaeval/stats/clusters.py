"""Significance clusters: rank metrics so that a new rank starts only where a
significant difference separates a metric from its current cluster.

This is mt-metrics-eval's greedy ``AssignRanks`` rule (used for the WMT
metrics task rankings), written for a p-value matrix in the caller's order.

Why metaeval and mt-metrics-eval can give different cluster counts
------------------------------------------------------------------
Both use the same greedy rule (``p <= alpha``, one-sided "the higher-ranked
metric is better", only members of the current cluster consulted), so on
the *same* p-value matrix they agree (tested against
``mt_metrics_eval.data.AssignRanks``).  The p-values differ:

1. estimator: mt-metrics-eval's ``PermutationSigDiff`` returns
   ``count / k`` (count of draws with ``delta* >= delta``); metaeval's
   resampling p-values are ``(count + 1) / (k + 1)``.  The latter is larger,
   by up to ``1 / (k + 1)``: with ``k = 1000`` and ``alpha = 0.05`` a pair
   with exactly 50 exceedances is significant for mt-metrics-eval (0.0500)
   and not for metaeval (0.0509), so a cluster boundary can disappear and
   the tail merges;
2. ties: metaeval counts null values within a relative tolerance of the
   observed difference as exceedances; mt-metrics-eval compares exactly;
3. draws: both are Monte Carlo; mt-metrics-eval draws from NumPy's global
   state (unseeded), and its tasks stop early (``block_size=100``: stop at a
   block boundary when ``p < 0.02`` or ``p > 0.5``), so borderline pairs
   (p within about two binomial standard errors of ``alpha``, +-0.014 at
   ``k = 1000``) flip between runs of either tool;
4. permutation unit: at system level mt-metrics-eval swaps whole systems of
   the system-score files, while metaeval's ``perm-both`` on a segment-level
   dataset swaps cells (read the data with ``read_mtme(level="sys")`` to
   swap systems).

:func:`mtme_pvalue` is mt-metrics-eval's estimator on a stored null
distribution, and :func:`assign_ranks` its ranking of a p-value matrix in
ranked order; ``compare_all(..., clusters="mtme")`` uses both.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError


def _as_statistics(statistics) -> np.ndarray:
    try:
        s = np.asarray(statistics, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"statistics must be a 1-D array of numbers: {exc}") from exc
    if s.ndim != 1:
        raise ParameterError(f"statistics must be 1-D (one value per metric); got shape {s.shape}")
    return s


def _check_names(names, k: int) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        raise ParameterError("names must be a sequence of metric names, not one string")
    names = list(names)
    if len(names) != k:
        raise ParameterError(f"names has {len(names)} entries but there are {k} statistics")
    not_str = [n for n in names if not isinstance(n, str)]
    if not_str:
        raise ParameterError(f"names must be strings; got {not_str[0]!r}")
    return names


def ranking_order(statistics, *, names=None) -> np.ndarray:
    """The order in which :func:`significance_clusters` visits the metrics.

    Parameters
    ----------
    statistics : array_like, shape (k,)
        One statistic per metric (larger is better).
    names : sequence of str, optional
        Metric names, used to break ties in ``statistics``.

    Returns
    -------
    numpy.ndarray of intp, shape (k,)
        Indices into ``statistics``: descending statistic; equal statistics
        by ascending name (by index when ``names`` is None, or when names are
        equal too); NaN statistics last, ordered the same way among
        themselves.

    Examples
    --------
    >>> from metaeval.stats.clusters import ranking_order
    >>> ranking_order([0.2, float("nan"), 0.5, 0.2], names=["b", "c", "z", "a"])
    array([2, 3, 0, 1])
    """
    s = _as_statistics(statistics)
    k = s.size
    checked = _check_names(names, k)
    tiebreak = checked if checked is not None else [""] * k
    nan = np.isnan(s)

    def key(i: int):
        return (bool(nan[i]), 0.0 if nan[i] else -s[i], tiebreak[i], i)

    return np.array(sorted(range(k), key=key), dtype=np.intp)


def significance_clusters(
    statistics,
    pvalues,
    *,
    alpha: float = 0.05,
    names=None,
    strict: bool = False,
) -> np.ndarray:
    """Rank metrics into significance clusters (1 = best).

    Parameters
    ----------
    statistics : array_like, shape (k,)
        One statistic per metric, larger is better (e.g. the correlation of
        each metric with the human scores).
    pvalues : array_like, shape (k, k)
        ``pvalues[i, j]`` is the one-sided p-value of the test "metric i is
        better than metric j" (small: i significantly better), indexed in the
        same order as ``statistics``.  Only the entries with i ranked before
        j (see :func:`ranking_order`) are read, so the other half and the
        diagonal may hold anything in [0, 1] or NaN.  A NaN p-value counts as
        not significant.
    alpha : float, optional
        Significance level, in [0, 1].
    names : sequence of str, optional
        Metric names, used only to break ties in ``statistics``.
    strict : bool, optional
        How a p-value equal to ``alpha`` counts.  False (the default): a
        difference is significant when ``p <= alpha``, as in mt-metrics-eval's
        ``AssignRanks``, which produces the published WMT cluster ranks (and
        the usual textbook rule "reject when p <= alpha").  True: only when
        ``p < alpha``, as in mt-metrics-eval's ``TaskResults.Sig``.  The two
        differ only for p-values exactly equal to alpha, which resampling
        p-values such as (count + 1) / (n + 1) can hit.

    Returns
    -------
    numpy.ndarray of int, shape (k,)
        The cluster rank of each metric, in the ORIGINAL order of
        ``statistics``.  Ranks are consecutive integers from 1.

    Notes
    -----
    The metrics are visited in :func:`ranking_order` (descending statistic,
    ties by name, else by index).  The first metric opens cluster 1.  Each
    next metric opens a new cluster (rank + 1) if any metric of the
    *current* cluster beats it significantly, i.e. ``pvalues[c, j] <= alpha``
    (``< alpha`` if ``strict``) for some member c; otherwise it joins the
    current cluster.  Hence no member of a cluster significantly beats a
    later member of the same cluster, but only members of the *current*
    cluster are consulted: a metric that a member of an earlier cluster
    beats significantly can still join the current cluster, and a cluster's
    members need not all beat every member of the next cluster (one of them
    beats its first member).  Clusters are a greedy, order-dependent summary
    (mt-metrics-eval ``data.py``, ``AssignRanks``).

    Metrics with a NaN statistic cannot be placed: they all share the rank
    after the last cluster (rank 1 if every statistic is NaN), whatever their
    p-values.

    Examples
    --------
    >>> import numpy as np
    >>> from metaeval.stats.clusters import significance_clusters
    >>> P = np.array([[np.nan, 0.30, 0.01],
    ...               [np.nan, np.nan, 0.20],
    ...               [np.nan, np.nan, np.nan]])
    >>> significance_clusters([0.9, 0.8, 0.7], P, alpha=0.05)
    array([1, 1, 2])
    """
    s = _as_statistics(statistics)
    k = s.size
    order = ranking_order(s, names=names)
    try:
        P = np.asarray(pvalues, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"pvalues must be a numeric (k, k) matrix: {exc}") from exc
    if P.shape != (k, k):
        raise ParameterError(
            f"pvalues must have shape (k, k) = ({k}, {k}) to match statistics; got {P.shape}"
        )
    bad = ~np.isnan(P) & ~((P >= 0) & (P <= 1))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ParameterError(f"pvalues must lie in [0, 1] or be NaN; pvalues[{i}, {j}] = {float(P[i, j])!r}")
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise ParameterError(f"alpha={alpha!r} must be a number in [0, 1]")
    if not 0 <= alpha <= 1:
        raise ParameterError(f"alpha={float(alpha)!r} must lie in [0, 1]")
    if not isinstance(strict, (bool, np.bool_)):
        raise ParameterError(f"strict={strict!r} must be True or False")

    ranks = np.empty(k, dtype=int)
    placed = [i for i in order if not np.isnan(s[i])]
    rank, start = 1, 0
    for pos in range(1, len(placed)):
        p = P[placed[start:pos], placed[pos]]
        significant = p < alpha if strict else p <= alpha  # NaN -> False
        if significant.any():
            rank, start = rank + 1, pos
        ranks[placed[pos]] = rank
    if placed:
        ranks[placed[0]] = 1
    ranks[np.isnan(s)] = rank + 1 if placed else 1
    return ranks


def assign_ranks(sig_matrix, alpha: float = 0.05) -> np.ndarray:
    """Cluster ranks of metrics already sorted best first (mt-metrics-eval's rule).

    Parameters
    ----------
    sig_matrix : array_like, shape (k, k)
        ``sig_matrix[i, j]`` (i < j) is the p-value of the null hypothesis
        that metric j is at least as good as metric i, rows and columns in
        decreasing order of the statistic.  Only the strict upper triangle is
        read; NaN counts as not significant.
    alpha : float
        A p-value ``<= alpha`` is significant.

    Returns
    -------
    numpy.ndarray of int, shape (k,)
        Rank of each metric in the given order: metric i opens a new cluster
        when ``sig_matrix[c, i] <= alpha`` for a member c of the current
        cluster (mt-metrics-eval data.py, ``AssignRanks``).

    Examples
    --------
    >>> from metaeval.stats.clusters import assign_ranks
    >>> assign_ranks([[0, 0.3, 0.01], [0, 0, 0.2], [0, 0, 0]], 0.05)
    array([1, 1, 2])
    """
    try:
        P = np.asarray(sig_matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"sig_matrix must be a numeric (k, k) matrix: {exc}") from exc
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ParameterError(f"sig_matrix must be square (k, k); got shape {P.shape}")
    k = P.shape[0]
    return significance_clusters(-np.arange(k, dtype=float), P, alpha=alpha)


def mtme_pvalue(null, observed) -> float:
    """mt-metrics-eval's one-sided permutation p-value: ``count / n``.

    Parameters
    ----------
    null : array_like
        Resampled differences ``statistic_a* - statistic_b*`` (one per draw).
    observed : float
        The observed difference ``statistic_a - statistic_b``.

    Returns
    -------
    float
        The share of draws with ``null >= observed`` (exact comparison, no
        tolerance), over *all* draws: a NaN draw counts as not exceeding, as
        mt-metrics-eval's ``PermutationSigDiff`` (stats.py) never counts a
        NaN difference.  It can be exactly 0; prefer metaeval's
        ``(count + 1) / (n + 1)`` except to reproduce WMT rankings.  NaN if
        ``observed`` is NaN or there are no draws.
    """
    d = np.asarray(null, dtype=float).ravel()
    if d.size == 0 or not np.isfinite(observed):
        return float("nan")
    with np.errstate(invalid="ignore"):
        return float(np.count_nonzero(d >= observed) / d.size)


def adjust_better(better, correction: str) -> np.ndarray:
    """Adjust a (k, k) matrix of one-sided p-values ``better[i, j]`` ("i better
    than j") for multiple testing: the upper-triangle tests (i < j, the tests
    the clusters read when the metrics are in ranking order) form one family,
    the lower triangle another (:func:`metaeval.stats.multitest.adjust_pvalues`;
    NaN entries are missing tests).  ``correction="none"`` returns a copy.
    """
    from .multitest import adjust_pvalues

    P = np.asarray(better, dtype=float)
    out = np.full_like(P, np.nan)
    iu = np.triu_indices(P.shape[0], 1)
    out[iu] = adjust_pvalues(P[iu], method=correction)
    il = (iu[1], iu[0])
    out[il] = adjust_pvalues(P[il], method=correction)
    return out


def separating_pvalues(statistics, pvalues, *, alpha: float = 0.05, names=None,
                       strict: bool = False):
    """The p-value that decided each metric's cluster under :func:`significance_clusters`.

    When metric j is visited, the rule reads ``pvalues[c, j]`` for the members
    c of the current cluster and opens a new cluster when the smallest of them
    is ``<= alpha`` (``< alpha`` if ``strict``).  That smallest p-value, and
    the member c it belongs to, is the number that separates j from the
    cluster above it (when significant) or keeps it in that cluster (when not):
    the cluster tables print it.  Membership depends on ``alpha``, so give the
    clusters' ``alpha``.

    Returns
    -------
    (numpy.ndarray of float, list)
        Per metric, in the original order of ``statistics``: the smallest
        p-value read when it was placed (NaN for the first metric, for a metric
        with a NaN statistic, and when every p-value read is NaN), and the
        index of the member it was read against (None where the p-value is NaN).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[np.nan, 0.30, 0.01],
    ...               [np.nan, np.nan, 0.20],
    ...               [np.nan, np.nan, np.nan]])
    >>> p, against = separating_pvalues([0.9, 0.8, 0.7], P, alpha=0.05)
    >>> p.tolist(), against
    ([nan, 0.3, 0.01], [None, 0, 0])
    """
    ranks = significance_clusters(statistics, pvalues, alpha=alpha, names=names, strict=strict)
    s = _as_statistics(statistics)
    P = np.asarray(pvalues, dtype=float)
    placed = [i for i in ranking_order(s, names=names) if not np.isnan(s[i])]
    out = np.full(s.size, np.nan)
    against: list = [None] * s.size
    start = 0
    for pos in range(1, len(placed)):
        j = placed[pos]
        members = placed[start:pos]
        p = P[members, j]
        if np.isfinite(p).any():
            k = int(np.nanargmin(p))
            out[j], against[j] = float(p[k]), int(members[k])
        if ranks[j] != ranks[placed[pos - 1]]:
            start = pos
    return out, against


__all__ = ["adjust_better", "assign_ranks", "mtme_pvalue", "ranking_order", "separating_pvalues",
           "significance_clusters"]
