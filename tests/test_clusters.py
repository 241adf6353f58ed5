"""Significance clusters (metaeval.stats.clusters)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.clusters import ranking_order, significance_clusters

# mt-metrics-eval, mt_metrics_eval/data_test.py::DataTest.testAssignRanks
# (google-research/mt-metrics-eval, commit 0b82d96b; ANCHORS C.3
# "AssignRanks").  There the sig matrix is already in sorted order (metric 0
# best) and sig[i, j] (i < j) is the p-value that metric i is not better
# than metric j, i.e. the one-sided p-value of "i better than j": exactly
# our pvalues[i, j].  Statistics 4 > 3 > 2 > 1 keep that order.
MTME_SIG_1 = np.array([
    0, 1, 1, 1,
    0, 0, 1, 1,
    0, 0, 0, 1,
    0, 0, 0, 0]).reshape((4, 4)).astype(float)
MTME_SIG_2 = np.array([
    0, 1, 0, 1,
    0, 0, 1, 1,
    0, 0, 0, 1,
    0, 0, 0, 0]).reshape((4, 4)).astype(float)
MTME_SIG_3 = np.array([
    0, 0, 1, 1,
    0, 0, 1, 1,
    0, 0, 0, 0,
    0, 0, 0, 0]).reshape((4, 4)).astype(float)
STATS = np.array([4.0, 3.0, 2.0, 1.0])


@pytest.mark.parametrize(
    "sig, alpha, expected",
    [
        # AssignRanks(sig_matrix, 0.5) == [1, 1, 1, 1]: no p <= .5
        (MTME_SIG_1, 0.5, [1, 1, 1, 1]),
        # AssignRanks(sig_matrix, 1.0) == [1, 2, 3, 4]: every p <= 1 (needs <=)
        (MTME_SIG_1, 1.0, [1, 2, 3, 4]),
        # [1, 1, 2, 2]: 0 does not beat 1 (p=1); 0 beats 2 (p=0) -> 2 opens
        # cluster 2; 2 does not beat 3 (p=1), and 0, 1 are no longer consulted
        (MTME_SIG_2, 0.5, [1, 1, 2, 2]),
        # [1, 2, 2, 3]: 0 beats 1 -> cluster 2 = {1, ...}; 1 does not beat 2
        # (0 would not either, but it is not consulted); 2 beats 3 -> cluster 3
        (MTME_SIG_3, 0.5, [1, 2, 2, 3]),
    ],
)
def test_mtme_assign_ranks(sig, alpha, expected):
    ranks = significance_clusters(STATS, sig, alpha=alpha)
    np.testing.assert_array_equal(ranks, expected)
    assert ranks.dtype.kind == "i"


@pytest.mark.parametrize(
    "sig, alpha, expected",
    [(MTME_SIG_1, 0.5, [1, 1, 1, 1]), (MTME_SIG_1, 1.0, [1, 2, 3, 4]),
     (MTME_SIG_2, 0.5, [1, 1, 2, 2]), (MTME_SIG_3, 0.5, [1, 2, 2, 3])],
)
def test_mtme_assign_ranks_in_shuffled_input_order(sig, alpha, expected):
    # the same metrics handed over in another order: ranks follow the input
    rng = np.random.default_rng(0)
    for _ in range(10):
        perm = rng.permutation(4)  # new position q holds old metric perm[q]
        ranks = significance_clusters(STATS[perm], sig[np.ix_(perm, perm)], alpha=alpha)
        np.testing.assert_array_equal(ranks, np.array(expected)[perm])


def test_strict_changes_only_p_equal_alpha():
    # pvalue exactly alpha: significant with <= (AssignRanks, default),
    # not with < (TaskResults.Sig)
    np.testing.assert_array_equal(significance_clusters(STATS, MTME_SIG_1, alpha=1.0, strict=True), [1, 1, 1, 1])
    P = np.full((3, 3), np.nan)
    P[0, 1], P[0, 2], P[1, 2] = 0.05, 0.5, 0.5
    np.testing.assert_array_equal(significance_clusters([3, 2, 1], P, alpha=0.05), [1, 2, 2])
    np.testing.assert_array_equal(significance_clusters([3, 2, 1], P, alpha=0.05, strict=True), [1, 1, 1])


def test_only_the_current_cluster_is_consulted():
    # 0 beats 1 and 2; 1 does not beat 2: 2 joins 1's cluster although 0
    # beats it (greedy rule)
    P = np.full((3, 3), 0.9)
    P[0, 1] = P[0, 2] = 0.01
    np.testing.assert_array_equal(significance_clusters([0.9, 0.8, 0.7], P), [1, 2, 2])


def test_ties_broken_by_name():
    # equal statistics: visit "a" before "b"; only "a beats b" is significant
    # if "a" comes first; the reverse direction p is large
    stats_ = [0.5, 0.5]  # metric 0 is "b", metric 1 is "a"
    P = np.array([[np.nan, 0.9], [0.01, np.nan]])  # P[1, 0]: a beats b
    np.testing.assert_array_equal(significance_clusters(stats_, P, names=["b", "a"]), [2, 1])
    np.testing.assert_array_equal(ranking_order(stats_, names=["b", "a"]), [1, 0])
    # with names the other way round, "b" (index 1) is visited first and does
    # not beat "a"
    np.testing.assert_array_equal(significance_clusters(stats_, P, names=["a", "b"]), [1, 1])


def test_ties_broken_by_index_without_names():
    P = np.array([[np.nan, 0.01], [0.01, np.nan]])
    np.testing.assert_array_equal(ranking_order([0.5, 0.5]), [0, 1])
    np.testing.assert_array_equal(significance_clusters([0.5, 0.5], P), [1, 2])


def test_nan_statistic_ranks_last():
    # documented: NaN statistics share the rank after the last cluster,
    # whatever their p-values say
    P = np.full((4, 4), 0.0)  # everything "significant"
    ranks = significance_clusters([np.nan, 0.9, np.nan, 0.1], P)
    np.testing.assert_array_equal(ranks, [3, 1, 3, 2])
    np.testing.assert_array_equal(ranking_order([np.nan, 0.9, np.nan, 0.1]), [1, 3, 0, 2])
    P = np.full((3, 3), 1.0)  # nothing significant
    np.testing.assert_array_equal(significance_clusters([0.2, np.nan, 0.5], P), [1, 2, 1])
    np.testing.assert_array_equal(significance_clusters([np.nan, np.nan], np.ones((2, 2))), [1, 1])


def test_nan_pvalue_is_not_significant():
    P = np.full((3, 3), np.nan)
    P[1, 2] = 0.001
    np.testing.assert_array_equal(significance_clusters([3, 2, 1], P), [1, 1, 2])


def test_original_order_preserved():
    # statistics out of order; cluster boundaries by hand:
    # sorted: m2 (0.9), m0 (0.7), m3 (0.5), m1 (0.1)
    s = [0.7, 0.1, 0.9, 0.5]
    P = np.full((4, 4), 0.5)
    P[0, 3] = 0.01  # m0 beats m3: m3 opens cluster 2
    P[3, 1] = 0.02  # m3 beats m1: m1 opens cluster 3
    np.testing.assert_array_equal(significance_clusters(s, P), [1, 3, 1, 2])
    names = ["bleu", "chrf", "comet", "bleurt"]
    np.testing.assert_array_equal(significance_clusters(s, P, names=names), [1, 3, 1, 2])


def test_ranks_are_consecutive_and_order_consistent():
    rng = np.random.default_rng(5)
    for _ in range(100):
        k = rng.integers(1, 9)
        s = rng.normal(size=k)
        P = rng.uniform(size=(k, k))
        ranks = significance_clusters(s, P, alpha=0.3)
        order = ranking_order(s)
        r_sorted = ranks[order]
        assert r_sorted[0] == 1 and set(np.diff(r_sorted)) <= {0, 1}


def test_empty():
    assert significance_clusters([], np.zeros((0, 0))).shape == (0,)


def test_validation():
    with pytest.raises(ParameterError, match=r"shape \(k, k\) = \(3, 3\).*\(2, 2\)"):
        significance_clusters([1, 2, 3], np.zeros((2, 2)))
    with pytest.raises(ParameterError, match=r"1-D"):
        significance_clusters([[1, 2]], np.zeros((2, 2)))
    with pytest.raises(ParameterError, match=r"names has 1 entries but there are 2"):
        significance_clusters([1, 2], np.zeros((2, 2)), names=["a"])
    with pytest.raises(ParameterError, match=r"names must be strings"):
        significance_clusters([1, 2], np.zeros((2, 2)), names=["a", 2])
    with pytest.raises(ParameterError, match=r"alpha=1.5 must lie in \[0, 1\]"):
        significance_clusters([1, 2], np.zeros((2, 2)), alpha=1.5)
    with pytest.raises(ParameterError, match=r"pvalues\[0, 1\] = 2.0"):
        significance_clusters([1, 2], np.array([[0, 2.0], [0, 0]]))
    with pytest.raises(ParameterError, match=r"strict"):
        significance_clusters([1, 2], np.zeros((2, 2)), strict="no")
