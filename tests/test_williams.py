"""Williams' test for dependent correlations (metaeval.stats.williams).

Oracles: R's psych::r.test (pasted output; R is not needed to run these
tests), mt-metrics-eval's stats_test.py WilliamsSigDiffTest (commit 68a481a),
nlpstats 0.0.1 (run live, and the values pasted in its
tests/correlations/williams_test.py), and the closed form (Steiger 1980, Eq. 14).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.stats.williams import WilliamsResult, williams_test

# --------------------------------------------------------------------------
# R psych::r.test, the gold oracle.
# R version 4.2.2 Patched (2022-11-10 r83330), psych 2.2.9 (Debian
# r-base-core, r-cran-psych).  Each case was run as
#   library(psych); r1 <- r.test(n=N, r12=A, r13=B, r23=C)
#   r2 <- r.test(n=N, r12=A, r13=B, r23=C, twotailed=FALSE)
#   sprintf("t=%.12g  p2=%.12g  p1=%.12g", r1$t, r1$p, r2$p)
# r.test's one-tailed p is pt(abs(t), n-3, lower.tail=FALSE): the tail in
# the direction of t, i.e. our "greater" when t > 0 and "less" when t < 0.
R_CASES = [
    # > r.test(n=100, r12=.6, r13=.4, r23=.5)
    # Call:[1] "r.test(n =  100 ,  r12 =  0.6 ,  r23 =  0.5 ,  r13 =  0.4 )"
    # Test of difference between two correlated  correlations
    #  t value 2.45    with probability < 0.016
    # t=2.44870894764  p2=0.016132427652  p1=0.00806621382598
    (100, 0.6, 0.4, 0.5, 2.44870894764, 0.016132427652, 0.00806621382598),
    # > r.test(n=103, r12=.4, r13=.5, r23=.1)   (psych's own help example)
    # Call:[1] "r.test(n =  103 ,  r12 =  0.4 ,  r23 =  0.1 ,  r13 =  0.5 )"
    #  t value -0.89    with probability < 0.37
    # t=-0.891279904761  p2=0.374918517491  p1=0.187459258746
    (103, 0.4, 0.5, 0.1, -0.891279904761, 0.374918517491, 0.187459258746),
    # > r.test(n=10, r12=.7, r13=.5, r23=.6)
    # Call:[1] "r.test(n =  10 ,  r12 =  0.7 ,  r23 =  0.6 ,  r13 =  0.5 )"
    #  t value 0.83    with probability < 0.44
    # t=0.825187161885  p2=0.436479924578  p1=0.218239962289
    (10, 0.7, 0.5, 0.6, 0.825187161885, 0.436479924578, 0.218239962289),
    # > r.test(n=5, r12=-.3, r13=.6, r23=-.2)
    # Call:[1] "r.test(n =  5 ,  r12 =  -0.3 ,  r23 =  -0.2 ,  r13 =  0.6 )"
    #  t value -1.05    with probability < 0.41
    # t=-1.04647625546  p2=0.405172340117  p1=0.202586170059
    (5, -0.3, 0.6, -0.2, -1.04647625546, 0.405172340117, 0.202586170059),
    # > r.test(n=30, r12=-.6, r13=-.4, r23=.5)
    # Call:[1] "r.test(n =  30 ,  r12 =  -0.6 ,  r23 =  0.5 ,  r13 =  -0.4 )"
    #  t value -1.29    with probability < 0.21
    # t=-1.29292808551  p2=0.206990354173  p1=0.103495177087
    (30, -0.6, -0.4, 0.5, -1.29292808551, 0.206990354173, 0.103495177087),
    # > r.test(n=4, r12=.9, r13=.2, r23=.3)     (df = 1)
    # Call:[1] "r.test(n =  4 ,  r12 =  0.9 ,  r23 =  0.3 ,  r13 =  0.2 )"
    #  t value 1.31    with probability < 0.41
    # t=1.31106827813  p2=0.414823314948  p1=0.207411657474
    (4, 0.9, 0.2, 0.3, 1.31106827813, 0.414823314948, 0.207411657474),
    # > r.test(n=5, r12=0.9994005394605665, r13=0.9868634624770863,
    # +        r23=0.990611473031326)   (the r's of MTME Case 11 below)
    # Call:[1] "r.test(n =  5 ,  r12 =  0.999400539460567 ,  r23 =  0.990611473031326 ,
    #           r13 =  0.986863462477086 )"
    #  t value 4.97    with probability < 0.038
    # t=4.97230782778 p2=0.0381473759663 p1=0.0190736879832
    (5, 0.9994005394605665, 0.9868634624770863, 0.990611473031326,
     4.97230782778, 0.0381473759663, 0.0190736879832),
]


@pytest.mark.parametrize("n, r12, r13, r23, t_r, p2_r, p1_r", R_CASES)
def test_matches_r_psych_r_test(n, r12, r13, r23, t_r, p2_r, p1_r):
    t, p2 = williams_test(r12, r13, r23, n)
    assert t == pytest.approx(t_r, rel=1e-10)
    assert p2 == pytest.approx(p2_r, rel=1e-10)
    one_sided = "greater" if t_r > 0 else "less"
    _, p1 = williams_test(r12, r13, r23, n, alternative=one_sided)
    assert p1 == pytest.approx(p1_r, rel=1e-10)


def test_matches_r_vectorised():
    # the same R cases in one broadcast call
    n, r12, r13, r23, t_r, p2_r, _ = map(np.array, zip(*R_CASES))
    res = williams_test(r12, r13, r23, n)
    np.testing.assert_allclose(res.statistic, t_r, rtol=1e-10)
    np.testing.assert_allclose(res.pvalue, p2_r, rtol=1e-10)


def test_ecosystem_verified_case():
    # R psych::r.test output quoted without its inputs: "t = 2.448709,
    # two-sided p = 0.01613243".  The inputs were
    # recovered as n = 100 (2 * t.sf(2.448709, df) = 0.01613243 only for
    # df = 97) and r12 = .6, r13 = .4, r23 = .5 (a 0.05 grid search), and
    # confirmed with R: see the first R_CASES entry.
    t, p = williams_test(0.6, 0.4, 0.5, 100)
    assert t == pytest.approx(2.448709, abs=5e-7)
    assert p == pytest.approx(0.01613243, abs=5e-9)


def test_mtme_case_11():
    # mt-metrics-eval stats_test.py WilliamsSigDiffTest.testSigDiff (commit 68a481a):
    # WilliamsSigDiff on global Pearson, one-sided p = 0.019 (exact 0.0190736880 from
    # stats.WilliamsSigDiff run on these vectors); r1 = 0.999, r2 = 0.987.  nlpstats
    # williams_test 'greater' gives the same; two-sided 0.0381474 = 2 p.
    gold = [1, 2, 3, 4, 5]
    m1 = [1.1, 2, 3.1, 4, 5.1]
    m2 = [1.5, 2, 3.1, 4, 5.5]
    r12 = stats.pearsonr(gold, m1).statistic
    r13 = stats.pearsonr(gold, m2).statistic
    r23 = stats.pearsonr(m1, m2).statistic
    assert r12 == pytest.approx(0.9994005, abs=1e-7)
    assert r13 == pytest.approx(0.9868635, abs=1e-7)
    _, p = williams_test(r12, r13, r23, len(gold), alternative="greater")
    assert p == pytest.approx(0.0190736880, abs=1e-10)
    _, p2 = williams_test(r12, r13, r23, len(gold))
    assert p2 == pytest.approx(0.0381474, abs=1e-7)


def test_nlpstats_pasted_values():
    # nlpstats tests/correlations/williams_test.py::test_williams_test (796d764), checked
    # there against R psych::r.test: np.random.seed(12); X, Y, Z =
    # np.random.random((9, 5)) x 3; global Pearson: greater 0.2716978,
    # two-sided 0.5433956.  nlpstats takes abs() of the r's: use_abs=True.
    rs = np.random.RandomState(12)
    X, Y, Z = rs.random_sample((9, 5)), rs.random_sample((9, 5)), rs.random_sample((9, 5))
    r12 = stats.pearsonr(X.ravel(), Z.ravel()).statistic
    r13 = stats.pearsonr(Y.ravel(), Z.ravel()).statistic
    r23 = stats.pearsonr(X.ravel(), Y.ravel()).statistic
    kw = dict(use_abs=True)
    assert williams_test(r12, r13, r23, 45, alternative="greater", **kw).pvalue == pytest.approx(0.2716978, abs=1e-7)
    assert williams_test(r12, r13, r23, 45, **kw).pvalue == pytest.approx(0.5433956, abs=1e-7)
    assert williams_test(r13, r12, r23, 45, alternative="greater", **kw).pvalue == pytest.approx(1 - 0.2716978, abs=1e-7)


def _rs_for_nlpstats(X, Y, Z, level):
    if level == "system":
        X, Y, Z = X.mean(1), Y.mean(1), Z.mean(1)
    else:  # global
        X, Y, Z = X.ravel(), Y.ravel(), Z.ravel()
    r = lambda a, b: stats.pearsonr(a, b).statistic  # noqa: E731
    return r(X, Z), r(Y, Z), r(X, Y), X.size


@pytest.mark.parametrize("level", ["global", "system"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_matches_nlpstats_on_random_data(level, alternative):
    # nlpstats 0.0.1 williams_test run live (pip install nlpstats==0.0.1).
    nlp = pytest.importorskip("nlpstats.correlations")
    rng = np.random.default_rng(20240611)
    for _ in range(20):
        N, M = rng.integers(5, 12), rng.integers(3, 8)
        Z = rng.normal(size=(N, M))
        # metrics related to the humans, sometimes inversely: exercises the
        # sign convention (nlpstats uses abs(); equal to raw r's when r > 0)
        X = rng.choice([-1, 1]) * Z + rng.normal(scale=rng.uniform(0.3, 2), size=(N, M))
        Y = Z + 0.5 * X + rng.normal(scale=rng.uniform(0.3, 2), size=(N, M))
        r12, r13, r23, n = _rs_for_nlpstats(X, Y, Z, level)
        expected = nlp.williams_test(X, Y, Z, level, "pearson", alternative).pvalue
        ours = williams_test(r12, r13, r23, n, alternative=alternative, use_abs=True).pvalue
        assert ours == pytest.approx(expected, rel=1e-9, abs=1e-15)
        if min(r12, r13, r23) > 0:
            raw = williams_test(r12, r13, r23, n, alternative=alternative).pvalue
            assert raw == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_sign_convention_raw_vs_abs():
    # A correlates -0.8 with the humans, B +0.5.  Raw r's: A is worse
    # (t < 0); use_abs=True: A's association is stronger (t > 0).
    t_raw, p_raw = williams_test(-0.8, 0.5, -0.3, 50, alternative="greater")
    t_abs, p_abs = williams_test(-0.8, 0.5, -0.3, 50, alternative="greater", use_abs=True)
    assert t_raw < 0 < t_abs
    assert p_raw > 0.5 > p_abs
    # use_abs=True is exactly the raw test on |r|
    assert williams_test(0.8, 0.5, 0.3, 50).statistic == t_abs


# --------------------------------------------------------------------------
# invariants


def test_metric_against_itself():
    # A vs A: r12 == r13 and r23 == 1 (K = 0 and the formula is 0/0): t = 0
    # by convention, p = 1 two-sided, 1/2 one-sided.
    t, p = williams_test(0.7, 0.7, 1.0, 20)
    assert t == 0.0 and p == 1.0
    assert williams_test(0.7, 0.7, 1.0, 20, alternative="greater").pvalue == 0.5
    assert williams_test(0.7, 0.7, 1.0, 20, alternative="less").pvalue == 0.5
    # also with r's computed from data (r23 may be 1 - eps)
    rng = np.random.default_rng(3)
    h, a = rng.normal(size=30), rng.normal(size=30)
    r = stats.pearsonr(h, a).statistic
    t, p = williams_test(r, r, stats.pearsonr(a, a).statistic, 30)
    assert t == 0.0 and p == 1.0


def test_swap_mirrors():
    rng = np.random.default_rng(7)
    for _ in range(200):
        A = rng.normal(size=(3, 3))
        C = np.corrcoef(A @ rng.normal(size=(3, 12)))  # a valid correlation matrix
        r12, r13, r23 = C[0, 1], C[0, 2], C[1, 2]
        n = rng.integers(4, 200)
        g_ab = williams_test(r12, r13, r23, n, alternative="greater")
        l_ab = williams_test(r12, r13, r23, n, alternative="less")
        g_ba = williams_test(r13, r12, r23, n, alternative="greater")
        two = williams_test(r12, r13, r23, n).pvalue
        assert g_ba.statistic == -g_ab.statistic
        assert g_ba.pvalue == pytest.approx(l_ab.pvalue, rel=1e-12, abs=1e-300)
        assert g_ab.pvalue + g_ba.pvalue == pytest.approx(1.0, abs=1e-12)
        assert two == pytest.approx(min(1.0, 2 * min(g_ab.pvalue, l_ab.pvalue)), rel=1e-12, abs=1e-300)


# --------------------------------------------------------------------------
# degenerate inputs: NaN, never an exception or a numpy warning


@pytest.mark.parametrize(
    "r12, r13, r23, n, nan_with_abs, why",
    [
        (0.5, 0.3, 0.2, 3, True, "n <= 3: df = 0"),
        (0.5, 0.3, 0.2, 2, True, "n < 3"),
        (0.5, 0.3, 0.2, -10, True, "negative n"),
        (0.5, 0.3, 0.2, np.nan, True, "NaN n"),
        (0.5, 0.3, 0.2, np.inf, True, "infinite n"),
        (np.nan, 0.3, 0.2, 10, True, "NaN r12"),
        (0.5, np.nan, 0.2, 10, True, "NaN r13"),
        (0.5, 0.3, np.nan, 10, True, "NaN r23"),
        (1.2, 0.3, 0.2, 10, True, "|r12| > 1"),
        (0.5, -1.5, 0.2, 10, True, "|r13| > 1"),
        (0.5, 0.3, np.inf, 10, True, "infinite r23"),
        (0.5, 0.3, 1.0, 10, True, "r23 = 1 with r12 != r13: K < 0"),
        # the next three become valid (r12 == r13, t = 0) under abs()
        (0.9, -0.9, 0.9, 10, False, "K < 0: not a correlation matrix"),
        (0.5, -0.5, -1.0, 10, False, "r23 = -1: t = 0/0"),
        (0.5, -0.5, 0.5, 10, False, "K = 0 and rbar = 0: t = x/0"),
    ],
)
def test_degenerate_gives_nan_without_warnings(r12, r13, r23, n, nan_with_abs, why):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alt in ("two-sided", "greater", "less"):
            t, p = williams_test(r12, r13, r23, n, alternative=alt)
            assert np.isnan(t) and np.isnan(p), why
            t, p = williams_test(r12, r13, r23, n, alternative=alt, use_abs=True)
            if nan_with_abs:
                assert np.isnan(t) and np.isnan(p), why
            else:
                assert t == 0.0, why


def test_rounding_slack_is_tolerated():
    # pearsonr-like results a few ulps beyond +-1 or K a few ulps below 0
    t, p = williams_test(1 + 1e-15, 0.5, 0.5, 10)
    assert np.isfinite(t) and np.isfinite(p)
    assert t == williams_test(1.0, 0.5, 0.5, 10).statistic


def test_degenerate_entries_do_not_spoil_the_batch():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t, p = williams_test([0.6, np.nan, 0.6], 0.4, 0.5, [100, 100, 3])
    assert np.isnan(t[1:]).all() and np.isnan(p[1:]).all()
    assert t[0] == pytest.approx(2.44870894764, rel=1e-10)  # R, first R_CASES entry


# --------------------------------------------------------------------------
# shapes, types, validation


def test_return_types_and_broadcasting():
    res = williams_test(0.6, 0.4, 0.5, 100)
    assert isinstance(res, WilliamsResult) and isinstance(res, tuple)
    assert isinstance(res.statistic, float) and isinstance(res.pvalue, float)
    assert np.ndim(res.statistic) == 0
    res = williams_test([[0.6], [0.5]], [0.4, 0.3, 0.2], 0.1, 50)
    assert res.statistic.shape == res.pvalue.shape == (2, 3)
    assert res.statistic.dtype == res.pvalue.dtype == np.float64
    res = williams_test(np.array([0.6]), 0.4, 0.5, 100)
    assert isinstance(res.statistic, np.ndarray) and res.statistic.shape == (1,)
    expected = williams_test(0.5, 0.2, 0.1, 50).statistic
    assert res.statistic[0] == williams_test(0.6, 0.4, 0.5, 100).statistic
    assert williams_test([[0.6], [0.5]], [0.4, 0.3, 0.2], 0.1, 50).statistic[1, 2] == expected


def test_pvalue_bounds():
    rng = np.random.default_rng(11)
    r12, r13 = rng.uniform(-1, 1, (2, 1000))
    r23 = rng.uniform(-1, 1, 1000)
    for alt in ("two-sided", "greater", "less"):
        p = williams_test(r12, r13, r23, 20, alternative=alt).pvalue
        p = p[np.isfinite(p)]
        assert p.size > 100 and (p >= 0).all() and (p <= 1).all()


@pytest.mark.parametrize("bad", ["two_sided", "both", "GREATER", None, 1])
def test_bad_alternative(bad):
    with pytest.raises(ParameterError, match=r"alternative=.*choose one of 'two-sided', 'greater', 'less'"):
        williams_test(0.5, 0.3, 0.2, 10, alternative=bad)


def test_bad_use_abs_and_inputs():
    with pytest.raises(ParameterError, match="use_abs"):
        williams_test(0.5, 0.3, 0.2, 10, use_abs="yes")
    with pytest.raises(ParameterError, match="broadcast"):
        williams_test([0.5, 0.4], [0.3, 0.2, 0.1], 0.2, 10)
    with pytest.raises(ParameterError, match="numeric"):
        williams_test("a", 0.3, 0.2, 10)
    with pytest.raises(TypeError):  # options are keyword-only
        williams_test(0.5, 0.3, 0.2, 10, "greater")
