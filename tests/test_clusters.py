"""Significance clusters (metaeval.stats.clusters)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.clusters import ranking_order, significance_clusters

# mt-metrics-eval, mt_metrics_eval/data_test.py::DataTest.testAssignRanks
# (google-research/mt-metrics-eval, commit 0b82d96b; the same test and matrices
# at commit 68a481a).  There the sig matrix is already in sorted order (metric 0
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


# ---- mt-metrics-eval's exact AssignRanks and its p-values (issue 16.2) --------

from _mtme_anchor import mtme, mtme_function  # noqa: E402

from metaeval.stats.clusters import assign_ranks, mtme_pvalue  # noqa: E402


def _adversarial_matrices(rng):
    """Random upper-triangular p-value matrices with ties at alpha, NaN, 0 and 1."""
    for k in (1, 2, 3, 5, 8, 28):
        for _ in range(40):
            P = rng.choice([0.0, 0.01, 0.049, 0.05, 0.0501, 0.2, 1.0, np.nan], size=(k, k))
            yield k, P
            yield k, rng.random((k, k)) * 0.1
    yield 4, np.zeros((4, 4))
    yield 4, np.full((4, 4), np.nan)


def test_assign_ranks_equals_mtme_assignranks():
    """Same ranks as mt-metrics-eval data.py, function AssignRanks, commit 68a481a
    (run from its source; data.py itself imports apache_beam) on random and
    adversarial p-value matrices (p exactly alpha, NaN, 0, 1, one metric)."""
    AssignRanks = mtme_function("data", "AssignRanks")
    rng = np.random.default_rng(16)
    n = 0
    for k, P in _adversarial_matrices(rng):
        for alpha in (0.05, 0.0, 1.0):
            exp = AssignRanks(P, alpha)
            np.testing.assert_array_equal(assign_ranks(P, alpha), exp)
            n += 1
    assert n > 1000


def test_mtme_pvalue_equals_permutation_sig_diff():
    """mtme_pvalue on the draws of mt-metrics-eval stats.py PermutationSigDiff
    (commit 68a481a) gives its p-value: count(delta* >= delta) / k."""
    stats = mtme("stats")
    gold = [1, 2, 3, 4, 5, 5, 7, 8]
    m1 = [1, 2, 3, 3, 7, 3, 5, 5]
    m2 = [2, 1, 2, 6, 8, 8, 7, 6]
    c1, c2 = stats.Correlation(4, gold, m1), stats.Correlation(4, gold, m2)
    import scipy.stats

    np.random.seed(3)
    p, delta, k, draws = stats.PermutationSigDiff(c1, c2, scipy.stats.pearsonr, "sys", 1000)
    null = np.array([a - b for a, b in draws])
    assert mtme_pvalue(null, delta) == p
    assert mtme_pvalue(null, delta) <= (np.count_nonzero(null >= delta) + 1) / (k + 1)
    assert np.isnan(mtme_pvalue([], 0.1)) and np.isnan(mtme_pvalue([0.1], np.nan))
    assert mtme_pvalue([np.nan, 1.0], 0.5) == 0.5  # a NaN draw counts, never exceeds


def test_regression_wmt21_tail_merged_by_plus_one_estimator():
    """Issue 16.2 (WMT21 zh-en MQM, 28 metrics: 7 clusters in mt-metrics-eval,
    6 in metaeval, tail merged).  With the same draws, a pair with exactly
    alpha * k = 50 exceedances out of k = 1000 is significant under
    mt-metrics-eval's count / k (0.05 <= 0.05) and not under (count + 1) /
    (k + 1) (0.0509): the last cluster boundary disappears."""
    from metaeval.correlation import resampling_pvalue

    k, stats_ = 1000, np.array([0.9, 0.8, 0.7])
    delta = 0.1
    nulls = {}
    for (i, j), c in {(0, 1): 400, (0, 2): 300, (1, 2): 50}.items():
        null = np.linspace(-1, 0.09, k)  # all below delta ...
        null[:c] = 0.2  # ... except exactly c exceedances
        nulls[i, j] = null
    mt = np.full((3, 3), np.nan)
    me = np.full((3, 3), np.nan)
    for (i, j), null in nulls.items():
        mt[i, j] = mtme_pvalue(null, delta)
        me[i, j] = resampling_pvalue(null, delta, "greater")
    assert mt[1, 2] == 0.05 and me[1, 2] == pytest.approx(51 / 1001)
    np.testing.assert_array_equal(significance_clusters(stats_, mt), [1, 1, 2])
    np.testing.assert_array_equal(assign_ranks(mt, 0.05), [1, 1, 2])
    np.testing.assert_array_equal(significance_clusters(stats_, me), [1, 1, 1])


def test_compare_all_clusters_mtme_uses_count_over_n():
    import metaeval

    rng = np.random.default_rng(5)
    N = 12
    h = rng.standard_normal((N, 1))
    cols = {"h": h}
    for j, noise in enumerate([0.1, 0.3, 0.6, 1.0, 2.0]):
        cols[f"m{j}"] = h + noise * rng.standard_normal((N, 1))
    ds = metaeval.Dataset.from_arrays(cols, human="h")
    a = metaeval.compare_all(ds, "h", n_resamples=200, rng=1, clusters="mtme")
    b = metaeval.compare_all(ds, "h", n_resamples=200, rng=1)
    K = len(a.metrics)
    for i in range(K):
        for j in range(i + 1, K):
            c = next(p for p in a.pairs if (p.metric_a, p.metric_b) == (a.metrics[i], a.metrics[j]))
            null = c.null_distribution
            assert a.better[i, j] == np.count_nonzero(null >= c.statistic) / null.size
            assert b.better[i, j] == c.pvalue_greater
    np.testing.assert_array_equal(a.clusters, assign_ranks(a.better, 0.05))
    assert ":mtme" in a.signature
    with pytest.raises(metaeval.ParameterError, match="clusters='mtme' needs a permutation test"):
        metaeval.compare_all(ds, "h", test="williams", clusters="mtme")
    with pytest.raises(metaeval.ParameterError, match="clusters"):
        metaeval.compare_all(ds, "h", clusters="wmt")
