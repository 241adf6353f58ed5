"""metaeval.wmt: soft pairwise accuracy, WMT task sets and aggregation.

Oracles: mt-metrics-eval (github.com/google-research/mt-metrics-eval, commit
68a481a) pce.py (compute_pairwise_p_values, compute_one_minus_pce), stats.py
(Correlation.PairwiseConfidenceError, PermutationSigDiff), read from
``../shared/anchors``; slow references written here; exact enumeration.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import metaeval
from metaeval.errors import DataError, MissingCellsWarning, ParameterError
from metaeval.stats.spa import pairwise_pvalues, sign_draws, spa_from_pvalues, swapped_spa
from metaeval.wmt import compare_spa, soft_pairwise_accuracy

from _mtme_anchor import mtme


def _datasets(seed=0):
    """Random and adversarial (ties, constant and identical systems, N=2) data."""
    rng = np.random.default_rng(seed)
    out = []
    N, M = 6, 40
    h = rng.standard_normal((N, M))
    out.append((h, [h + rng.standard_normal((N, M)), rng.standard_normal((N, M))]))
    hi = rng.integers(0, 3, (N, M)).astype(float)  # heavy ties
    xi = rng.integers(0, 2, (N, M)).astype(float)
    xi[2] = xi[1]  # identical systems
    xi[4] = 1.0  # constant system
    out.append((hi, [xi, -hi]))
    out.append((rng.standard_normal((2, 7)), [rng.standard_normal((2, 7))]))  # N = 2
    return out


def _ds(h, xs):
    cols = {"h": h, **{f"m{k}": x for k, x in enumerate(xs)}}
    return metaeval.Dataset.from_arrays(cols, human="h")


# ---- SPA against pce.py ------------------------------------------------------


@pytest.mark.parametrize("case", range(3))
def test_pvalues_float32_equal_pce(case):
    """Same draws and float32 arithmetic as mt-metrics-eval pce.py,
    compute_pairwise_p_values (commit 68a481a): identical p-values."""
    pce = mtme("pce")
    h, xs = _datasets()[case]
    for S in [h, *xs]:
        for seed in (4, 11):
            exp = pce.compute_pairwise_p_values(S, num_permutations=300, seed=seed)
            signs = sign_draws(np.random.default_rng(seed), 300, S.shape[1])
            got = pairwise_pvalues(S[None], signs, precision="float32")[0]
            np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("case", range(3))
def test_spa_equals_compute_one_minus_pce(case):
    """soft_pairwise_accuracy(rng=4, precision='float32') = mt-metrics-eval
    pce.py compute_one_minus_pce on pce's p-values (commit 68a481a)."""
    pce = mtme("pce")
    h, xs = _datasets()[case]
    res = soft_pairwise_accuracy(_ds(h, xs), "h", rng=4, precision="float32")
    ph = pce.compute_pairwise_p_values(h, num_permutations=1000, seed=4)
    for k, x in enumerate(xs):
        pm = pce.compute_pairwise_p_values(x, num_permutations=1000, seed=4)
        assert res.get(f"m{k}").statistic == pce.compute_one_minus_pce(ph, pm)
        # exactly equal given the p-values
        assert spa_from_pvalues(ph, pm) == pce.compute_one_minus_pce(ph, pm)


def test_spa_stats_case_7():
    """mt-metrics-eval stats_test.py: Correlation(2, [1,2,3,2,3,4], [2,2,4,1,3,5])
    .PairwiseConfidenceError() = 0.872 (seed 4, 1000 permutations)."""
    ds = metaeval.Dataset.from_arrays(
        {"h": np.array([[1, 2, 3], [2, 3, 4.0]]), "m": np.array([[2, 2, 4], [1, 3, 5.0]])}, human="h"
    )
    assert soft_pairwise_accuracy(ds, "h", rng=4, precision="float32").get("m").statistic == pytest.approx(0.872, abs=1e-12)
    stats = mtme("stats")
    exp = stats.Correlation(2, [1, 2, 3, 2, 3, 4], [2, 2, 4, 1, 3, 5]).PairwiseConfidenceError()[0]
    assert soft_pairwise_accuracy(ds, "h", rng=4, precision="float32").get("m").statistic == exp


def _slow_pvalues(S, signs):
    """Reference: loop over pairs and draws (float64)."""
    N = S.shape[0]
    p = np.full((N, N), np.nan)
    for i in range(N):
        for j in range(i + 1, N):
            d = S[i] - S[j]
            obs = d.sum()
            p[i, j] = np.mean([float(np.dot(s, d)) >= obs for s in signs])
    return p


@pytest.mark.parametrize("case", range(3))
def test_float64_fast_equals_slow_reference(case):
    h, xs = _datasets(1)[case]
    signs = sign_draws(np.random.default_rng(0), 200, h.shape[1]).astype(float)
    S = np.stack([h, *xs])
    fast = pairwise_pvalues(S, signs)
    for k in range(len(S)):
        slow = _slow_pvalues(S[k], signs)
        # float64: the batched matmul and the dot can differ in the last bit only on exact ties
        assert np.nanmax(np.abs(fast[k] - slow)) <= 1 / 200 + 1e-12
        np.testing.assert_allclose(fast[k], slow, atol=1 / 200 + 1e-12)


def test_equal_in_the_limit_to_exact_enumeration():
    """With all 2^M sign vectors the p-value is the exact permutation p-value;
    Monte Carlo draws converge to it (binomial error bound)."""
    rng = np.random.default_rng(3)
    M = 10
    S = rng.standard_normal((3, M))
    allsigns = np.array(list(itertools.product([-1.0, 1.0], repeat=M)))
    exact = pairwise_pvalues(S[None], allsigns)[0]
    mc = pairwise_pvalues(S[None], sign_draws(np.random.default_rng(1), 40000, M))[0]
    iu = np.triu_indices(3, 1)
    assert np.all(np.abs(mc[iu] - exact[iu]) < 5 * np.sqrt(0.25 / 40000))


def test_spa_properties_and_determinism():
    h, xs = _datasets()[0]
    ds = _ds(h, xs + [h])
    a = soft_pairwise_accuracy(ds, "h", rng=7)
    b = soft_pairwise_accuracy(ds, "h", rng=7)
    assert a.statistics == b.statistics
    assert a.get("m2").statistic == 1.0  # the human scores themselves
    assert all(0 <= r.statistic <= 1 for r in a)
    # invariant to a positive affine map of a metric (same draws)
    ds2 = _ds(h, [3 * xs[0] + 5])
    assert soft_pairwise_accuracy(ds2, "h", rng=7).get("m0").statistic == a.get("m0").statistic
    assert "method:spa" in a[0].signature and "seed:7" in a[0].signature


def test_spa_bootstrap_ci_and_missing_cells():
    h, xs = _datasets()[0]
    xs = [x.copy() for x in xs]
    xs[0][1, 3] = np.nan
    ds = _ds(h, xs)
    with pytest.warns(MissingCellsWarning, match="1 input"):
        r = soft_pairwise_accuracy(ds, "h", rng=1, ci="boot-inputs", n_resamples=50, n_permutations=200)
    for x in r:
        assert x.ci_low <= x.statistic <= x.ci_high or np.isclose(x.ci_low, x.statistic)
        assert x.bootstrap_distribution.shape == (50,) and x.n_inputs == h.shape[1] - 1
    with pytest.raises(ParameterError, match="precision"):
        soft_pairwise_accuracy(ds, "h", precision="half")
    with pytest.raises(ParameterError, match="n_permutations"):
        soft_pairwise_accuracy(ds, "h", n_permutations=0)
    hh = h.copy()
    hh[0, :] = np.nan
    hh[0, 0] = 1.0
    hh[1, 0] = np.nan
    with pytest.raises(DataError, match="no input has scores of every system"):
        soft_pairwise_accuracy(_ds(hh, [np.where(np.isnan(hh), np.nan, xs[1])]), "h")


# ---- Perm-Both comparison of two SPAs -----------------------------------------


def test_compare_spa_matches_mtme_permutation_sig_diff():
    """swapped_spa on mt-metrics-eval's own swap draws gives the p-value of
    mt-metrics-eval stats.py PermutationSigDiff with PairwiseConfidenceError
    (as data.py CompareMetricsWithPairwiseConfidenceError calls it; commit
    68a481a): same draws, same count / k."""
    stats = mtme("stats")
    import functools

    rng = np.random.default_rng(2)
    N, M, k = 4, 12, 40
    h = rng.standard_normal((N, M))
    x1 = h + rng.standard_normal((N, M))
    x2 = h + 2 * rng.standard_normal((N, M))
    gold = list(h.ravel())
    c1 = stats.Correlation(N, gold, list(x1.ravel()))
    c2 = stats.Correlation(N, gold, list(x2.ravel()))
    wrap = functools.partial(stats.PairwiseConfidenceError, num_sys=N, filter_nones=False)
    np.random.seed(123)
    p, delta, used, draws = stats.PermutationSigDiff(c2, c1, wrap, "none", k)  # "x1 better"
    np.random.seed(123)
    w1 = np.array([np.random.binomial(1, 0.5, N * M) for _ in range(k)]).reshape(k, N, M)
    import scipy.stats

    za = scipy.stats.zscore(x1.ravel()).reshape(N, M)
    zb = scipy.stats.zscore(x2.ravel()).reshape(N, M)
    signs = sign_draws(np.random.default_rng(4), 1000, M)
    ph = pairwise_pvalues(h[None], signs, precision="float32")[0]
    halves = swapped_spa(za, zb, ph, signs, w1 == 0, precision="float32")
    np.testing.assert_array_equal(halves, np.array(draws))
    from metaeval.stats.clusters import mtme_pvalue

    assert mtme_pvalue(halves[:, 0] - halves[:, 1], delta) == p


def test_compare_spa_slow_reference_and_api():
    rng = np.random.default_rng(4)
    N, M = 5, 30
    h = rng.standard_normal((N, M))
    ds = _ds(h, [h + 0.3 * rng.standard_normal((N, M)), h + 3 * rng.standard_normal((N, M))])
    r = compare_spa(ds, "h", "m0", "m1", n_resamples=60, n_permutations=300, rng=9)
    # slow reference: rebuild each half and call soft_pairwise_accuracy's kernels one by one
    ss, _ = metaeval.stats.resampling.seed_sequence(9)
    signs = sign_draws(np.random.default_rng(ss), 300, M)
    masks = metaeval.stats.resampling.named_generator(ss, "spa-perm-both").random((60, N, M)) < 0.5
    za = (ds.scores("m0") - ds.scores("m0").mean()) / ds.scores("m0").std()
    zb = (ds.scores("m1") - ds.scores("m1").mean()) / ds.scores("m1").std()
    ph = _slow_pvalues(h, signs.astype(float))
    null = []
    for w in masks:
        pa = _slow_pvalues(np.where(w, zb, za), signs.astype(float))
        pb = _slow_pvalues(np.where(w, za, zb), signs.astype(float))
        null.append(spa_from_pvalues(ph, pa) - spa_from_pvalues(ph, pb))
    np.testing.assert_allclose(r.null_distribution, null, atol=2 / 300)
    assert r.statistic == pytest.approx(r.statistic_a - r.statistic_b)
    c = np.count_nonzero(r.null_distribution >= r.statistic)
    assert r.pvalue_mtme == c / 60
    assert r.pvalue >= r.pvalue_mtme
    assert r.statistic > 0 and r.pvalue < 0.05
    with pytest.raises(ParameterError, match="two different metrics"):
        compare_spa(ds, "h", "m0", "m0")
