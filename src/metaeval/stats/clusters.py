"""Significance clusters: rank metrics so that a new rank starts only where a
significant difference separates a metric from its current cluster.

This is mt-metrics-eval's greedy ``AssignRanks`` rule (used for the WMT
metrics task rankings), written for a p-value matrix in the caller's order.
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


__all__ = ["ranking_order", "significance_clusters"]
