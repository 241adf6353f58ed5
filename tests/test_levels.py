"""Oracle tests of the grouping levels (``metaeval.stats.levels.level_values``).

Oracles: the pure-Python reference (``tests/reference.py``), nlpstats 0.0.1 run
live, and numbers published in the test suites of mt-metrics-eval
(google-research/mt-metrics-eval, commit 68a481a), nlpstats
(danieldeutsch/nlpstats tests/correlations/) and ExplainaBoard
(neulab/ExplainaBoard integration_tests/meta_eval_nlg_test.py), each named with
its file and test where it is used.

Vocabulary (MTME stats.py ``_Reshape``, nlpstats correlations.py): x is the metric, y the human
score, both N systems x M inputs.  MTME ``'none'`` = our ``global``, MTME
``'sys'`` grouping = our ``item`` (per system, across inputs), MTME ``'item'``
grouping = our ``input`` (per input, across systems).  MTME's
``Correlation(num_sys, gold, metric)`` takes system-major flattened vectors,
so they are reshaped to (num_sys, -1).  nlpstats' ``kendall`` is scipy's
default, tau-b.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nlpstats.correlations import correlate as nlp_correlate
from nlpstats.correlations import fisher as nlp_fisher

from metaeval.errors import ParameterError
from metaeval.stats import coefficients as co
from metaeval.stats.levels import LEVELS, check_level, level_values

try:  # tests/ as a package or as a rootdir on sys.path
    from . import reference as ref
except ImportError:  # pragma: no cover - depends on how pytest imports tests
    import reference as ref

NAN = np.nan
FAST = pytest.mark.parametrize("fast", [True, False], ids=["numba", "numpy"])
METHODS = ("pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23",
           "acc_eq")
CORRELATIONS = ("pearson", "spearman", "kendall_b", "kendall_c")
AVERAGES = ("macro", "micro")
NLP_COEF = {"pearson": "pearson", "spearman": "spearman", "kendall": "kendall_b"}

HYP = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def lv(x, y, level, method, average="macro", fast=True, **kw):
    return level_values(np.asarray(x, float), np.asarray(y, float), level, method,
                        average=average, fast=fast, **kw)


def value(x, y, level, method, average="macro", fast=True):
    return float(lv(x, y, level, method, average, fast).value[0])


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def mtme(num_sys, gold, metric):
    """MTME ``Correlation(num_sys, gold, metric)`` as our (metric, human) matrices."""
    g = np.array([NAN if v is None else v for v in gold], float).reshape(num_sys, -1)
    m = np.array([NAN if v is None else v for v in metric], float).reshape(num_sys, -1)
    return m, g


def nlp(X, Z, level, coefficient):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's constant-input warnings
        return float(nlp_correlate(X, Z, level, coefficient))


def assert_matches_reference(x, y, level, method, average, fast):
    """Engine vs reference for a (B, N, M) batch (or one N x M table)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if x.ndim == 2:
        x, y = x[None], y[None]
    got = lv(x, y, level, method, average, fast)
    for b in range(x.shape[0]):
        want = ref.level(x[b], y[b], level, method, average)
        ctx = f"{level}/{method}/{average}/fast={fast}/b={b}"
        np.testing.assert_allclose(got.value[b], want.value, rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=ctx)
        np.testing.assert_allclose(got.group[b], want.group, rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=ctx)
        np.testing.assert_array_equal(got.n_valid[b], want.n_valid, err_msg=ctx)
        if method == "acc_eq":
            if np.isfinite(want.value):
                assert got.epsilon[b] == want.epsilon, ctx
        else:
            assert got.epsilon is None, ctx


# ---------------------------------------------------------------------------
# 1. engine vs the pure-Python reference

# dyadic values: sums are exact, so per-system means agree bit for bit with the
# reference's math.fsum means (ties between system means are then exact)
CELL = st.sampled_from((-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 7.25, NAN))


@st.composite
def matrices(draw, max_b=3, max_n=5, max_m=5, cell=CELL):
    """A batch of B tables (B, N, M): one engine call checks B reference results."""
    b = draw(st.integers(1, max_b))
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_m))
    cells = st.lists(cell, min_size=b * n * m, max_size=b * n * m)
    x = np.array(draw(cells), float).reshape(b, n, m)
    y = np.array(draw(cells), float).reshape(b, n, m)
    return x, y


@settings(HYP, max_examples=20)
@given(matrices(), st.sampled_from(AVERAGES))
def test_every_level_and_method_matches_the_reference(xy, average):
    x, y = xy
    for level in LEVELS:
        methods = METHODS + (("pairwise_accuracy",) if level == "system" else ())
        for method in methods:
            for fast in (True, False):
                assert_matches_reference(x, y, level, method, average, fast)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("level", LEVELS)
def test_matches_reference_on_larger_likert_tables_with_missing_cells(level, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, size=(8, 11)).astype(float)
    y = np.clip(x + rng.integers(-2, 3, size=x.shape), 1, 5)
    x[rng.random(x.shape) < 0.15] = NAN
    y[rng.random(y.shape) < 0.15] = NAN
    y[3] = 4.0  # a system whose human scores are constant
    y[:, 5] = 2.0  # an input whose human scores are constant
    for method in METHODS:
        for average in AVERAGES:
            assert_matches_reference(x, y, level, method, average, fast=True)


@FAST
def test_batches_and_broadcast_human_scores(fast):
    rng = np.random.default_rng(3)
    xs = rng.integers(1, 6, size=(3, 6, 9)).astype(float)
    xs[rng.random(xs.shape) < 0.1] = NAN
    y = rng.integers(1, 6, size=(6, 9)).astype(float)
    for level in LEVELS:
        for method in METHODS:
            got = lv(xs, y, level, method, fast=fast)
            assert got.value.shape == (3,)
            for b in range(3):
                one = lv(xs[b], y, level, method, fast=fast)
                close(got.value[b], one.value[0])
                close(got.group[b], one.group[0])
                if method == "acc_eq":
                    assert got.epsilon[b] == one.epsilon[0]


# ---------------------------------------------------------------------------
# 2. NaN and degenerate-group rules


@FAST
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("method", METHODS)
def test_all_missing_gives_nan(level, method, fast):
    x = np.full((4, 3), NAN)
    y = np.arange(12.0).reshape(4, 3)
    got = lv(x, y, level, method, fast=fast)
    assert np.isnan(got.value).all()
    assert np.isnan(got.group).all()
    assert (got.n_valid == 0).all()


@FAST
def test_constant_human_input_is_dropped_for_correlations_but_kept_for_accuracy(fast):
    # Common in NLG data: every system got the same human score on input 2.
    x = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.5], [3.0, 3.0, 4.0]])
    y = np.array([[1.0, 1.0, 5.0], [2.0, 3.0, 5.0], [3.0, 2.0, 5.0]])
    got = lv(x, y, "input", "pearson", fast=fast)
    assert np.isnan(got.group[0, 2])
    # columns 0 and 1: r = 1 and r([2,1,3],[1,3,2]) = -0.5; macro over the 2 defined
    close(got.group[0, :2], [1.0, -0.5])
    close(got.value[0], 0.25)
    # acc_23 keeps input 2: its 3 pairs are human ties predicted as non-ties -> 0
    acc = lv(x, y, "input", "acc_23", fast=fast)
    close(acc.group[0], [1.0, 1 / 3, 0.0])
    close(acc.value[0], (1 + 1 / 3 + 0) / 3)


@FAST
def test_group_with_one_valid_item_is_dropped(fast):
    x = np.array([[1.0, 2.0, 3.0], [5.0, NAN, NAN]])
    y = np.array([[1.0, 3.0, 2.0], [1.0, 2.0, NAN]])
    for method in METHODS:
        got = lv(x, y, "item", method, fast=fast)
        np.testing.assert_array_equal(got.n_valid[0], [3, 1])
        assert np.isnan(got.group[0, 1]), method
        close(got.value[0], got.group[0, 0])


@FAST
def test_macro_and_micro_weights(fast):
    rng = np.random.default_rng(4)
    x = rng.integers(1, 6, size=(5, 8)).astype(float)
    y = rng.integers(1, 6, size=(5, 8)).astype(float)
    x[rng.random(x.shape) < 0.3] = NAN
    for method in METHODS:
        for level in ("input", "item"):
            g = lv(x, y, level, method, "macro", fast)
            m = lv(x, y, level, method, "micro", fast)
            close(g.group, m.group)
            ok = np.isfinite(g.group[0])
            nv = g.n_valid[0][ok]
            close(g.value[0], g.group[0][ok].mean())
            # micro: items for correlations, pairs for the pair statistics
            w = nv if method in CORRELATIONS else nv * (nv - 1) / 2
            close(m.value[0], np.sum(w * g.group[0][ok]) / np.sum(w))


@FAST
def test_micro_acc23_is_the_pooled_share_of_correct_pairs(fast):
    # levels.py: pair weights make micro acc_23 the pooled share of correct pairs
    x = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, NAN, NAN]])
    y = np.array([[1.0, 2.0, 4.0, 3.0], [2.0, 1.0, NAN, NAN]])
    # row 0: 5 of 6 pairs correct; row 1: 0 of 1
    assert value(x, y, "item", "acc_23", "micro", fast) == pytest.approx(5 / 7)
    assert value(x, y, "item", "acc_23", "macro", fast) == pytest.approx((5 / 6 + 0) / 2)


@FAST
def test_acc_eq_shares_one_epsilon_and_reports_group_accuracies(fast):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(6, 7)).round(1)
    y = rng.integers(1, 4, size=(6, 7)).astype(float)
    x[rng.random(x.shape) < 0.2] = NAN
    for level in ("input", "item"):
        for average in AVERAGES:
            got = lv(x, y, level, "acc_eq", average, fast)
            eps = got.epsilon[0]
            # each group's accuracy at the shared epsilon, recounted
            xg = x.T if level == "input" else x
            yg = y.T if level == "input" else y
            s = co.kendall_stats(xg[None], yg[None], eps, fast=fast)
            close(got.group, co.kendall_from_stats(s, "acc23"))
            ok = np.isfinite(got.group[0])
            nv = got.n_valid[0][ok]
            w = np.ones_like(nv) if average == "macro" else nv * (nv - 1) / 2
            close(got.value[0], np.sum(w * got.group[0][ok]) / np.sum(w))
            # epsilon = 0 is a candidate, so calibration never loses to plain acc_23
            assert got.value[0] >= value(x, y, level, "acc_23", average, fast) - 1e-12
            # detail=False (resampling loops): same value and epsilon, no group values
            quick = lv(x, y, level, "acc_eq", average, fast, detail=False)
            assert quick.value[0] == got.value[0] and quick.epsilon[0] == eps
            assert np.isnan(quick.group).all()


# ---------------------------------------------------------------------------
# 3. invariants


def _random_table(seed, n=6, m=7, nan=0.15, likert=True):
    rng = np.random.default_rng(seed)
    if likert:
        x = rng.integers(1, 6, size=(n, m)).astype(float)
        y = np.clip(x + rng.integers(-2, 3, size=(n, m)), 1, 5)
    else:
        x = rng.normal(size=(n, m))
        y = x + rng.normal(size=(n, m))
    x[rng.random((n, m)) < nan] = NAN
    y[rng.random((n, m)) < nan] = NAN
    return x, y


def _same(a, b, ctx):
    np.testing.assert_allclose(a.value, b.value, rtol=1e-10, atol=1e-12, equal_nan=True,
                               err_msg=ctx)
    np.testing.assert_allclose(a.group, b.group, rtol=1e-10, atol=1e-12, equal_nan=True,
                               err_msg=ctx)
    np.testing.assert_array_equal(a.n_valid, b.n_valid, err_msg=ctx)
    if a.epsilon is not None or b.epsilon is not None:
        np.testing.assert_array_equal(a.epsilon, b.epsilon, err_msg=ctx)


@FAST
@pytest.mark.parametrize("seed", range(2))
def test_single_system_item_level_equals_global_level(seed, fast):
    x, y = _random_table(seed, n=1, m=12)
    for method in METHODS:
        for average in AVERAGES:
            _same(lv(x, y, "item", method, average, fast),
                  lv(x, y, "global", method, average, fast), method)


@FAST
@pytest.mark.parametrize("seed", range(2))
def test_transposition_swaps_item_and_input(seed, fast):
    x, y = _random_table(seed)
    for method in METHODS:
        for average in AVERAGES:
            _same(lv(x.T, y.T, "item", method, average, fast),
                  lv(x, y, "input", method, average, fast), method)
            _same(lv(x.T, y.T, "input", method, average, fast),
                  lv(x, y, "item", method, average, fast), method)
            close(value(x.T, y.T, "global", method, average, fast),
                  value(x, y, "global", method, average, fast))


@pytest.mark.parametrize("seed", range(3))
def test_metric_and_human_play_symmetric_roles_without_calibration(seed):
    # everything but acc_eq (whose epsilon applies to the metric) is symmetric
    x, y = _random_table(seed)
    for level in LEVELS:
        for method in METHODS[:-1]:
            close(value(x, y, level, method), value(y, x, level, method), rtol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_rank_statistics_are_invariant_under_monotone_transforms(seed):
    x, y = _random_table(seed, likert=False)
    fx = np.exp(x) * 3 + 1  # strictly increasing
    for level in ("input", "item", "global"):  # not system: means are not ranks
        for method in ("spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23"):
            close(value(fx, y, level, method), value(x, y, level, method), rtol=1e-12)
        for method in CORRELATIONS:
            close(value(-x, y, level, method), -value(x, y, level, method), rtol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_input_order_does_not_matter_for_integer_scores(seed):
    x, y = _random_table(seed)
    perm = np.random.default_rng(seed + 100).permutation(x.shape[1])
    for level in LEVELS:
        for method in METHODS + ("pairwise_accuracy",):
            if method == "pairwise_accuracy" and level != "system":
                continue
            a = lv(x, y, level, method)
            b = lv(x[:, perm], y[:, perm], level, method)
            close(a.value, b.value)


@FAST
def test_system_level_ties_do_not_depend_on_input_order(fast):
    # Both systems' human scores are {0.1, 0.2, 0.3}: their means are equal, a
    # human tie; the metric also ties them, so the pair is a correctly predicted tie.
    # (0.1 + 0.2) + 0.3 = 0.6000000000000001 but (0.3 + 0.2) + 0.1 = 0.6.
    y = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1], [0.5, 0.5, 0.5]])
    x = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    # reference: exact ties -> all 3 pairs correct
    assert ref.level(x, y, "system", "pairwise_accuracy").value == 1.0
    assert value(x, y, "system", "pairwise_accuracy", fast=fast) == 1.0
    assert value(x, y, "system", "kendall_b", fast=fast) == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# 4. published cases: mt-metrics-eval (google-research/mt-metrics-eval, commit 68a481a)

# MTME stats_test.py CorrelationTest (testPearson, testKendall, testKendallC), commit
# 68a481a: Correlation(2, g=[1..6], m=[2,1,4,3,3,7]); the tests assert 3 decimals,
# the "exact" values are those methods of stats.py run at that commit
CASE1 = mtme(2, [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 3, 7])


@FAST
@pytest.mark.parametrize(
    "level, method, expected, tol",
    [
        ("global", "pearson", 0.7763237543, 1e-10),  # testPearson 'none', exact
        ("item", "pearson", 0.7603395372, 1e-10),  # testPearson 'sys', exact
        ("input", "pearson", 1.0, 1e-12),  # testPearson 'item' (asserted 1.000)
        ("global", "kendall_b", 0.5520524475, 1e-10),  # testKendall 'none', exact
        ("item", "kendall_b", 0.5749149571, 1e-10),  # testKendall 'sys', exact
        ("input", "kendall_b", 1.0, 1e-12),  # testKendall 'item'
        ("global", "kendall_c", 0.556, 5e-4),  # testKendallC 'none' (3 decimals)
        ("item", "kendall_c", 0.611, 5e-4),  # testKendallC 'sys' (3 decimals)
        ("input", "kendall_c", 1.0, 1e-12),  # testKendallC 'item'
    ],
)
def test_mtme_case1(level, method, expected, tol, fast):
    x, y = CASE1
    assert value(x, y, level, method, fast=fast) == pytest.approx(expected, abs=tol)


@FAST
def test_mtme_case1_kendall_c_exact(fast):
    # exact rationals behind MTME testKendallC's 0.556 and 0.611 (derived by hand)
    x, y = CASE1
    # none: n = 6, C - D = 8, k = min(5 metric values, 6 gold values) = 5:
    # 2 * 8 / (36 * 4 / 5) = 5/9
    assert value(x, y, "global", "kendall_c", fast=fast) == pytest.approx(5 / 9, abs=1e-14)
    assert ref.level(x, y, "global", "kendall_c").value == pytest.approx(5 / 9, abs=1e-14)
    # sys: row 0 gives 2 * 1 / (9 * 2 / 3) = 1/3, row 1 gives 2 * 2 / (9 * 1 / 2) = 8/9
    assert value(x, y, "item", "kendall_c", fast=fast) == pytest.approx(11 / 18, abs=1e-14)


@FAST
def test_mtme_case2_single_system(fast):
    # MTME stats_test.py CorrelationTest.testKendallVariants (commit 68a481a):
    # Correlation(1, [1,2,2,3,4], [2,1,1.5,5,3])
    x, y = mtme(1, [1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3])
    for level in ("global", "item"):  # one system: 'none' == 'sys'
        assert value(x, y, level, "kendall_b", fast=fast) == pytest.approx(0.316227766,
                                                                           abs=1e-9)
        assert value(x, y, level, "kendall_c", fast=fast) == pytest.approx(0.32)
        assert value(x, y, level, "kendall_23", fast=fast) == pytest.approx(0.2)
        assert value(x, y, level, "acc_23", fast=fast) == pytest.approx(0.6)
        got = lv(x, y, level, "acc_eq", fast=fast)
        # MTME stats_test.py CorrelationTest.testKendallWithTiesOpt:
        # KendallWithTiesOpt(acc23, sample_rate=1) = 0.7; epsilon* = 0.5 from running
        # stats.KendallWithTiesOpt at commit 68a481a (not asserted there)
        assert got.value[0] == pytest.approx(0.7)
        assert got.epsilon[0] == 0.5


@FAST
def test_mtme_case6_agreement_is_system_pairwise_accuracy(fast):
    # MTME stats_test.py CorrelationFunctionsTest.testAgreement: gold [1,2,3,3,4],
    # metric [1,1,2,1,2] -> 5 agreements / 10 pairs (system scores)
    gold = np.array([1, 2, 3, 3, 4], float)
    metric = np.array([1, 1, 2, 1, 2], float)
    x = np.repeat(metric[:, None], 3, axis=1)  # every input gives the system score
    y = np.repeat(gold[:, None], 3, axis=1)
    assert value(x, y, "system", "pairwise_accuracy", fast=fast) == 0.5
    assert value(x, y, "system", "acc_23", fast=fast) == 0.5


@FAST
def test_mtme_case8_constant_group_is_dropped(fast):
    # MTME stats_test.py AverageCorrelationTest.testNaNHandling(WithZeros): g=[1..6],
    # m=[2,2,2,4,5,6], sys-avg
    # Pearson: NaN dropped gives 1.0; replace_nans_with_zeros gives 0.5
    x, y = mtme(2, [1, 2, 3, 4, 5, 6], [2, 2, 2, 4, 5, 6])
    got = lv(x, y, "item", "pearson", fast=fast)
    assert got.value[0] == pytest.approx(1.0)
    close(got.group[0], [NAN, 1.0])
    assert np.nan_to_num(got.group[0]).mean() == pytest.approx(0.5)


@FAST
def test_mtme_case9_micro_average_with_missing_gold(fast):
    # MTME stats_test.py AverageCorrelationTest.testMicroAveraging: g=[1,None,3,4,5,6],
    # m=[2,1,8,3,5,6], sys, macro=False: (2*1.0 + 3*r([4,5,6],[3,5,6])) / 5
    # = 0.9891883036 (its closed form evaluated here to 10 digits)
    x, y = mtme(2, [1, None, 3, 4, 5, 6], [2, 1, 8, 3, 5, 6])
    got = lv(x, y, "item", "pearson", "micro", fast=fast)
    assert got.value[0] == pytest.approx(0.9891883036, abs=1e-10)
    np.testing.assert_array_equal(got.n_valid[0], [2, 3])


# mt-metrics-eval tau_optimization_test.py::test_regression_example (commit 68a481a)
REG_METRIC = [[0, 5, 2, 3, 2], [None, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1],
              [None] * 5]
REG_HUMAN = [[1, 5, 2, 1, 1], [4, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, None, 3, 2],
             [None] * 5]


@FAST
def test_mtme_tie_calibration_regression_example(fast):
    x = np.array(REG_METRIC, float)  # rows = groups = our item level
    y = np.array(REG_HUMAN, float)
    got = lv(x, y, "item", "acc_eq", fast=fast)
    assert got.epsilon[0] == 1.0  # test_regression_example: best threshold 1
    assert got.value[0] == pytest.approx(0.4916666666666668, rel=1e-13)  # same test
    # the same groups as columns, at input level
    t = lv(x.T, y.T, "input", "acc_eq", fast=fast)
    assert (t.epsilon[0], t.value[0]) == (got.epsilon[0], got.value[0])


@FAST
@pytest.mark.parametrize(
    "human, eps, tau",
    [
        ([1, 2, 3, 4], 0.0, 1.0),  # MTME tau_optimization_test.py, same name
        ([1, 1, 1, 4], 4.0, 4 / 6),  # MTME tau_optimization_test.py, same name
    ],
)
def test_mtme_tie_calibration_single_group(human, eps, tau, fast):
    x = np.array([[0, 2, 6, 8]], float)
    got = lv(x, np.array([human], float), "global", "acc_eq", fast=fast)
    assert got.epsilon[0] == eps
    assert got.value[0] == pytest.approx(tau, rel=1e-14)


# ---------------------------------------------------------------------------
# 5. published cases: nlpstats (danieldeutsch/nlpstats tests/correlations/, the same
# numbers as SacreROUGE sacrerouge/tests/stats_test.py)

NLP_X = np.array([[1, 9, 2], [4, 5, 2], [6, 7, 1]], float)
NLP_Z = np.array([[11, 12, 13], [14, 15, 16], [17, 18, 19]], float)


@FAST
@pytest.mark.parametrize(
    "level, method, expected",
    [
        # nlpstats tests/correlations/correlations_test.py::test_correlate (commit a5ff296)
        ("system", "pearson", 0.6546536707),
        ("input", "pearson", -0.124208712),
        ("global", "pearson", 0.0),
        ("system", "spearman", 0.5),
        ("input", "spearman", -0.1220084679),
        ("global", "spearman", 0.04201829034),
        ("system", "kendall_b", 0.33333333333),
        ("input", "kendall_b", -0.0499433047),
        ("global", "kendall_b", 0.11433239009),
        # mt-metrics-eval stats.py KendallVariants / KendallWithTiesOpt (commit 68a481a)
        # run on the same data (not asserted in its tests)
        ("global", "acc_23", 0.5277778),
        ("global", "kendall_23", 0.0555556),
        ("input", "acc_23", 0.4444444),
        ("global", "acc_eq", 0.5277778),
    ],
)
def test_nlpstats_correlate_table(level, method, expected, fast):
    got = lv(NLP_X, NLP_Z, level, method, fast=fast)
    assert got.value[0] == pytest.approx(expected, abs=5e-8)
    if method == "acc_eq":
        assert got.epsilon[0] == 0.0  # MTME KendallWithTiesOpt on this data: epsilon = 0


@FAST
@pytest.mark.parametrize(
    "level, X, Z, expected",
    [
        # nlpstats tests/correlations/correlations_test.py::test_system_level (a5ff296)
        ("system", [[1, 9, 2], [4, 5, 2], [6, 7, 2]], NLP_Z, 0.7205766921),
        # ::test_system_level_nans (NaNs at the same cells in X and Z)
        ("system", [[1, 9, 2], [4, 5, NAN], [6, NAN, 2]],
         [[11, 12, 13], [14, 15, NAN], [17, NAN, 19]], -0.09578262852),
        # ::test_system_level_nan_correlation (constant system means)
        ("system", [[1, 2], [1, 2]], [[11, 12], [14, 15]], NAN),
        # ::test_input_level
        ("input", [[1, 9, 2], [4, 5, 4], [6, 7, 1]], NLP_Z, 0.05535747748),
        # ::test_input_level_nan_values
        ("input", [[1, 9, 2], [NAN, 5, 4], [6, 7, 7]],
         [[11, 12, 13], [NAN, 15, 16], [17, 18, 19]], 0.4977997559),
        # ::test_input_level_skipped_column (constant column dropped)
        ("input", [[1, 9, 2], [4, 5, 2], [6, 7, 2]], NLP_Z, 0.2466996339),
        # ::test_input_level_nan_correlations (all columns constant)
        ("input", [[1, 2], [1, 2]], [[11, 12], [14, 15]], NAN),
        # ::test_global_level
        ("global", [[1, 9, 2], [4, 5, 2], [6, 7, 2]], NLP_Z, 0.06691496051),
        # ::test_global_level_nans
        ("global", [[1, 9, 2], [4, 5, NAN], [NAN, 7, 2]],
         [[11, 12, 13], [14, 15, NAN], [NAN, 18, 19]], 0.05436067275),
        # ::test_global_level_nans, "almost all NaN": two valid points
        ("global", [[1, NAN, NAN], [4, NAN, NAN], [NAN, NAN, NAN]],
         [[11, NAN, NAN], [4, NAN, NAN], [NAN, NAN, NAN]], -1.0),
    ],
    ids=["system", "system-nan", "system-constant", "input", "input-nan",
         "input-constant-column", "input-all-constant", "global", "global-nan",
         "global-two-points"],
)
def test_nlpstats_level_cases(level, X, Z, expected, fast):
    got = value(X, Z, level, "pearson", fast=fast)
    assert got == pytest.approx(expected, abs=1e-10, nan_ok=True)


# nlpstats tests/correlations/fisher_test.py::test_fisher_regression (commit 796d764)
FISHER_TABLE = {
    ("global", "pearson"): (-0.02763744135012373, 0.5818846438651135),
    ("global", "spearman"): (-0.06733469087453943, 0.5640758668009686),
    ("global", "kendall_b"): (-0.029964677270600665, 0.4098565164085108),
    ("system", "pearson"): (-0.6445648014599665, 0.9644395142168088),
    ("system", "spearman"): (-0.6708734441360908, 0.9756771001362685),
    ("system", "kendall_b"): (-0.7023910748254728, 0.9377789575997956),
    ("input", "pearson"): (-0.808376631595968, 0.9287863878043723),
    ("input", "spearman"): (-0.7262127280589684, 0.9653646507719408),
    ("input", "kendall_b"): (-0.684486849088761, 0.9418063314024349),
}


def nlpstats_n(X, level):
    """The n that nlpstats' fisher uses (nlpstats/correlations/fisher.py)."""
    if level == "system":
        return X.shape[0]  # the number of systems
    if level == "input":
        return int((~np.isnan(X)).sum(axis=0).max())  # the largest column count
    return int((~np.isnan(X)).sum())  # global: non-NaN cells


@FAST
@pytest.mark.parametrize("level, method", sorted(FISHER_TABLE))
def test_fisher_matches_nlpstats_regression_table(level, method, fast):
    rs = np.random.RandomState(12)  # same stream as np.random.seed(12)
    X = rs.rand(5, 7)
    Z = rs.rand(5, 7)
    r = lv(X, Z, level, method, fast=fast).value
    lo, hi = co.fisher_interval(r, nlpstats_n(X, level), method)
    want = FISHER_TABLE[level, method]
    assert (lo[0], hi[0]) == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------------------
# 6. published cases: ExplainaBoard (neulab/ExplainaBoard)

# integration_tests/meta_eval_nlg_test.py (commit 0817722) MetaEvalNLGTest: rows =
# segments, columns = 5 systems;
# ours are systems x inputs, hence the transposes
EB_TRUE = np.array([[1, 2, 3, 4, 5], [2, 1, 4, 5, 2], [5, 4, 3, 2, 1]], float).T
EB_PRED = np.array([[2, 1, 3, 4, 5], [2, 4, 5, 5, 2], [5, 3, 4, 2, 1]], float).T


@FAST
@pytest.mark.parametrize(
    "level, method, expected, tol",
    [
        ("input", "spearman", 0.8162952, 1e-7),  # test_sample_level_spearmanr
        ("input", "kendall_b", 0.69046817, 1e-8),  # test_sample_level_kendalltau
        ("input", "pearson", 0.820707397, 1e-9),  # test_sample_level_pearsonr
        # test_system_level_{spearmanr,kendalltau}: column sums; no missing cells, so the sums
        # rank and correlate exactly like our means
        ("system", "spearman", 0.815789, 1e-6),
        ("system", "kendall_b", 0.66666, 1e-5),
        # mt-metrics-eval stats.Correlation(5, ...) (commit 68a481a) run on the same data
        ("system", "pearson", 0.8877834, 1e-7),
        ("global", "pearson", 0.7891603, 1e-7),
        ("global", "kendall_b", 0.7005762, 1e-7),
        ("input", "acc_23", 0.8333333, 1e-7),
    ],
)
def test_explainaboard_cases(level, method, expected, tol, fast):
    assert value(EB_PRED, EB_TRUE, level, method, fast=fast) == pytest.approx(expected,
                                                                               abs=tol)


# ---------------------------------------------------------------------------
# 7. nlpstats as a live oracle


def _nlp_table(seed, likert, with_nan):
    rng = np.random.default_rng(seed)
    n, m = 7, 9
    if likert:
        X = rng.integers(1, 6, size=(n, m)).astype(float)
        Z = np.clip(X + rng.integers(-2, 3, size=(n, m)), 1, 5)
    else:
        X = rng.normal(size=(n, m))
        Z = 0.6 * X + rng.normal(size=(n, m))
    if with_nan:
        # nlpstats needs identical NaN cells in X and Z, >= 2 values per column
        # (scipy's pearsonr rejects shorter vectors) and >= 1 per row
        miss = rng.random((n, m)) < 0.25
        miss[:2] = False
        X[miss] = NAN
        Z[miss] = NAN
    return X, Z


@FAST
@pytest.mark.parametrize("with_nan", [False, True], ids=["full", "nan"])
@pytest.mark.parametrize("likert", [False, True], ids=["continuous", "likert"])
@pytest.mark.parametrize("seed", range(3))
def test_nlpstats_live(seed, likert, with_nan, fast):
    X, Z = _nlp_table(seed, likert, with_nan)
    for level in ("system", "input", "global"):
        for coefficient, method in NLP_COEF.items():
            want = nlp(X, Z, level, coefficient)
            got = value(X, Z, level, method, fast=fast)
            assert got == pytest.approx(want, rel=1e-10, abs=1e-12, nan_ok=True), (
                level, method)
            lo, hi = co.fisher_interval(got, nlpstats_n(X, level), method)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nlo, nhi = nlp_fisher(X, Z, level, coefficient)
            close([lo, hi], [nlo, nhi], rtol=1e-9)


def test_system_level_matched_means_differ_from_nlpstats_independent_means():
    # nlpstats' system level averages X and Z over their own non-NaN cells; ours
    # averages both over the matched cells only (levels.py docstring), so the
    # two means describe the same inputs.  Here the metric skipped system 0's
    # second input, on which the human score is high:
    X = np.array([[1.0, NAN], [2.0, 2.0], [3.0, 3.0]])
    Z = np.array([[1.0, 5.0], [2.0, 2.0], [3.0, 3.0]])
    # nlpstats: metric means [1, 2, 3], human means [3, 2, 3] -> r = 0
    assert nlp(X, Z, "system", "pearson") == pytest.approx(0.0, abs=1e-15)
    # ours: human mean of system 0 over its matched cell only -> [1, 2, 3] -> r = 1
    assert value(X, Z, "system", "pearson") == pytest.approx(1.0)
    assert ref.level(X, Z, "system", "pearson").value == pytest.approx(1.0)
    # where the NaN cells coincide, the two definitions agree
    Zm = np.where(np.isnan(X), NAN, Z)
    assert value(X, Zm, "system", "pearson") == pytest.approx(
        nlp(X, Zm, "system", "pearson"))


# ---------------------------------------------------------------------------
# 8. level names


@pytest.mark.parametrize("name, expected", [
    ("system", "system"), ("input", "input"), ("item", "item"), ("global", "global"),
    ("none", "global"),  # MTME average_by='none' (stats.py _Reshape)
    ("summary", "input"),  # SacreROUGE summary_level_corr (sacrerouge/stats.py)
])
def test_level_aliases(name, expected):
    assert check_level(name) == expected


@pytest.mark.parametrize("name", ("segment", "seg"))
def test_ambiguous_level_names_are_refused(name):
    with pytest.raises(ParameterError, match="ambiguous"):
        check_level(name)


def test_unknown_level_explains_the_item_clash():
    with pytest.raises(ParameterError, match="mt-metrics-eval's 'item'.*our 'input'"):
        check_level("segments")


@pytest.mark.parametrize("name", ("sys", "sample"))
def test_names_that_mean_another_level_elsewhere_are_refused(name):
    with pytest.raises(ParameterError, match="ambiguous"):
        check_level(name)
