"""Oracle tests of the coefficient kernels (``metaeval.stats.coefficients``,
``_kernels`` and their NumPy twins ``_numpy_kernels``).

Three kinds of oracle:

* scipy (``pearsonr``, ``spearmanr``, ``kendalltau`` variants b and c) on
  heavily tied data, small and large groups (the numba Kendall kernel switches
  to Knight's O(n log n) algorithm at ``KNIGHT_MIN_N`` valid items);
* the slow pure-Python references in ``tests/reference.py``;
* numbers published in mt-metrics-eval's tests (google-research/mt-metrics-eval,
  commit 68a481a), each with its file and test name.

The level wrapper (grouping, averaging, NaN policy) is tested in
``test_levels.py``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats as sst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval.errors import ParameterError
from metaeval.stats import _kernels, _numpy_kernels
from metaeval.stats import coefficients as co
from metaeval.stats._kernels import KNIGHT_MIN_N, KX, KY, NVALID, TX, TXY, TY, C, D

try:  # tests/ as a package or as a rootdir on sys.path
    from . import reference as ref
except ImportError:  # pragma: no cover - depends on how pytest imports tests
    import reference as ref

KERNELS = {"numba": _kernels, "numpy": _numpy_kernels}
FAST = pytest.mark.parametrize("fast", [True, False], ids=["numba", "numpy"])

# coefficients that are a plain function of one group (acc_eq is not: its
# threshold is shared by all groups and computed by the level code)
BATCHED = ("pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23",
           "pairwise_accuracy")

HYP = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NAN = np.nan


def batch(method, x, y, fast=True):
    """The registry's batched coefficient."""
    return co.get_coefficient(method).batch(np.asarray(x, float), np.asarray(y, float),
                                            fast=fast)


def one(method, x, y, fast=True):
    """The coefficient of one group (1-D vectors)."""
    x = np.asarray(x, float)[None, None]
    y = np.asarray(y, float)[None, None]
    return float(batch(method, x, y, fast)[0, 0])


def scipy_stat(method, x, y):
    """scipy's statistic on the finite-mask subset; NaN with < 2 items."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 2:
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's ConstantInputWarning -> NaN
        if method == "pearson":
            return float(sst.pearsonr(x, y).statistic)
        if method == "spearman":
            return float(sst.spearmanr(x, y).statistic)
        if method == "kendall_b":
            return float(sst.kendalltau(x, y, variant="b").statistic)
        if method == "kendall_c":
            return float(sst.kendalltau(x, y, variant="c").statistic)
    raise AssertionError(method)


def ref_stat(method, x, y):
    return ref.COEFFICIENTS[method](list(x), list(y))


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------
# 1. scipy as the oracle


SCIPY_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
# small n, both sides of the Knight switch, and large n
SIZES = (2, 3, 5, 8, 20, KNIGHT_MIN_N - 1, KNIGHT_MIN_N, KNIGHT_MIN_N + 1, 200, 513)


def _likert(rng, shape):
    return rng.integers(1, 6, size=shape).astype(float)


@FAST
@pytest.mark.parametrize("n", SIZES)
def test_matches_scipy_on_likert_ties(n, fast):
    rng = np.random.default_rng(10_000 + n)
    B, G = 2, 4
    x = _likert(rng, (B, G, n))
    y = _likert(rng, (B, G, n))
    # group 1: a noisy copy (strong positive association), group 2: reversed
    y[:, 1] = np.clip(x[:, 1] + rng.integers(-1, 2, size=(B, n)), 1, 5)
    y[:, 2] = 6 - x[:, 2]
    for method in SCIPY_METHODS:
        got = batch(method, x, y, fast)
        want = [[scipy_stat(method, x[b, g], y[b, g]) for g in range(G)] for b in range(B)]
        close(got, want)


@FAST
@pytest.mark.parametrize("n", (3, 64, 200))
def test_matches_scipy_on_continuous_scores(n, fast):
    rng = np.random.default_rng(20_000 + n)
    x = rng.normal(size=(3, 2, n))
    y = 0.5 * x + rng.normal(size=(3, 2, n))
    for method in SCIPY_METHODS:
        got = batch(method, x, y, fast)
        want = [[scipy_stat(method, x[b, g], y[b, g]) for g in range(2)] for b in range(3)]
        close(got, want)


@FAST
@pytest.mark.parametrize("n", (6, 30, 150))
def test_nan_is_deleted_pairwise_like_scipy_on_the_finite_subset(n, fast):
    rng = np.random.default_rng(30_000 + n)
    B, G = 2, 3
    x = _likert(rng, (B, G, n))
    y = np.clip(x + rng.integers(-2, 3, size=(B, G, n)), 1, 5)
    x[rng.random((B, G, n)) < 0.2] = np.nan
    y[rng.random((B, G, n)) < 0.2] = np.nan
    for method in SCIPY_METHODS:
        got = batch(method, x, y, fast)
        want = [[scipy_stat(method, x[b, g], y[b, g]) for g in range(G)] for b in range(B)]
        close(got, want)


def _with_infinities(n, seed):
    rng = np.random.default_rng(seed)
    x = _likert(rng, (2, 3, n))
    y = np.clip(x + rng.integers(-2, 3, size=(2, 3, n)), 1, 5)
    x[rng.random(x.shape) < 0.2] = np.nan
    x[rng.random(x.shape) < 0.1] = np.inf
    y[rng.random(y.shape) < 0.1] = -np.inf
    return x, y


@pytest.mark.parametrize("n", (6, 30, 150))
def test_infinite_scores_are_deleted_pairwise_like_nan(n):
    # coefficients.py: "Pairs with a non-finite value on either side are dropped"
    x, y = _with_infinities(n, 31_000 + n)
    for method in BATCHED:
        got = batch(method, x, y, fast=True)
        close(got, batch(method, np.where(np.isfinite(x), x, NAN),
                         np.where(np.isfinite(y), y, NAN), fast=True))
        if method in SCIPY_METHODS:
            close(got, [[scipy_stat(method, x[b, g], y[b, g]) for g in range(3)]
                        for b in range(2)])


@FAST
def test_y_broadcasts_against_a_batch_of_x(fast):
    # resampling passes one human matrix against a batch of metric matrices
    rng = np.random.default_rng(7)
    x = _likert(rng, (4, 3, 70))
    y = _likert(rng, (1, 3, 70))
    for method in BATCHED:
        close(batch(method, x, y, fast), batch(method, x, np.repeat(y, 4, axis=0), fast))


@pytest.mark.parametrize("seed", range(3))
def test_the_reference_itself_agrees_with_scipy(seed):
    # the oracle of sections 3-5 checked against an independent implementation
    rng = np.random.default_rng(40_000 + seed)
    x = _likert(rng, 30)
    y = np.clip(x + rng.integers(-2, 3, 30), 1, 5)
    x[rng.random(30) < 0.2] = NAN
    y[:3] = 4.0
    for method in SCIPY_METHODS:
        close(ref_stat(method, x, y), scipy_stat(method, x, y), rtol=1e-12)
    assert ref.average_ranks([3, 1, 3, 2]) == list(sst.rankdata([3, 1, 3, 2]))


# ---------------------------------------------------------------------------
# 2. degenerate groups: the NaN policy of one group


@FAST
@pytest.mark.parametrize("method", ("kendall_b", "kendall_c", "kendall_23", "acc_23"))
def test_empty_group_is_nan_for_the_kendall_family(method, fast):
    x = np.empty((2, 3, 0))
    assert np.isnan(batch(method, x, x, fast)).all()


@FAST
@pytest.mark.parametrize("method", ("pearson", "spearman"))
def test_empty_group_is_nan_for_pearson_and_spearman(method, fast):
    x = np.empty((2, 3, 0))
    assert np.isnan(batch(method, x, x, fast)).all()


@FAST
@pytest.mark.parametrize("method", BATCHED)
@pytest.mark.parametrize(
    "x, y",
    [
        ([1.0], [2.0]),  # one item
        ([NAN, NAN, NAN], [1.0, 2.0, 3.0]),  # all metric values missing
        ([1.0, 2.0, 3.0], [NAN, np.inf, -np.inf]),  # no finite human value
        ([1.0, NAN, 3.0], [NAN, 2.0, 4.0]),  # only one matched item
    ],
    ids=["n1", "x-all-nan", "y-all-nonfinite", "one-matched"],
)
def test_fewer_than_two_valid_items_is_nan(method, x, y, fast):
    assert math.isnan(one(method, x, y, fast))


@FAST
@pytest.mark.parametrize(
    "x, y, expected",
    [
        # constant metric: Tx = 3 pairs; constant human: Ty; both: Txy
        ([2, 2, 2], [1, 2, 3], {"kendall_23": -1.0, "acc_23": 0.0}),
        ([1, 2, 3], [4, 4, 4], {"kendall_23": -1.0, "acc_23": 0.0}),
        ([5, 5, 5], [4, 4, 4], {"kendall_23": 1.0, "acc_23": 1.0}),
        ([5, NAN, 5], [1, 3, 1], {"kendall_23": 1.0, "acc_23": 1.0}),
    ],
    ids=["const-metric", "const-human", "both-const", "const-after-deletion"],
)
def test_constant_groups(x, y, expected, fast):
    # correlations are undefined (NaN) on a constant side (coefficients.py docstring,
    # MTME forces NaN too: stats.py AverageCorrelation, 68a481a); pair statistics stay defined
    for method in ("pearson", "spearman", "kendall_b", "kendall_c"):
        assert math.isnan(one(method, x, y, fast)), method
        assert math.isnan(scipy_stat(method, x, y)), method  # scipy agrees
    for method, want in expected.items():
        assert one(method, x, y, fast) == want, method


@FAST
def test_two_items(fast):
    for method in ("pearson", "spearman", "kendall_b", "kendall_c"):
        assert one(method, [1, 2], [3, 5], fast) == pytest.approx(1.0)
        assert one(method, [1, 2], [5, 3], fast) == pytest.approx(-1.0)
    assert one("acc_23", [1, 2], [3, 5], fast) == 1.0
    assert one("acc_23", [1, 2], [5, 3], fast) == 0.0
    assert one("kendall_23", [1, 2], [5, 3], fast) == -1.0


# ---------------------------------------------------------------------------
# 3. kernels: numba vs NumPy twin vs the pure-Python reference

VALUES = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 10.0, NAN)
CELL = st.one_of(
    st.sampled_from(VALUES),
    # decimals: differences that are not exactly representable
    st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 3)),
)


@st.composite
def groups(draw, max_g=3, min_n=0, max_n=12, cell=CELL):
    g = draw(st.integers(1, max_g))
    n = draw(st.integers(min_n, max_n))
    rows = st.lists(st.lists(cell, min_size=n, max_size=n), min_size=g, max_size=g)
    x = np.array(draw(rows), float).reshape(1, g, n)
    y = np.array(draw(rows), float).reshape(1, g, n)
    return x, y


EPS = st.sampled_from([0.0, 0.5, 1.0, 2.5, 0.1])


def _ref_stats(x, y, eps):
    return np.array([[ref.kendall_stats(list(x[b, g]), list(y[b, g]), eps).as_tuple()
                      for g in range(x.shape[1])] for b in range(x.shape[0])], float)


@HYP
@given(groups(), EPS)
def test_kendall_stats_numba_twin_and_reference_agree(xy, eps):
    x, y = xy
    want = _ref_stats(x, y, eps)
    for name, k in KERNELS.items():
        got = k.kendall_stats(x, y, eps)
        assert got.shape == x.shape[:2] + (8,)
        np.testing.assert_array_equal(got, want, err_msg=name)
    # the public wrapper (both paths)
    np.testing.assert_array_equal(co.kendall_stats(x, y, eps, fast=True), want)
    np.testing.assert_array_equal(co.kendall_stats(x, y, eps, fast=False), want)


@HYP
@given(groups(min_n=1))  # n = 0: see test_empty_group_is_nan_for_pearson_and_spearman
def test_every_batched_coefficient_matches_the_reference(xy):
    x, y = xy
    for method in BATCHED:
        want = [[ref_stat(method, x[0, g], y[0, g]) for g in range(x.shape[1])]]
        for fast in (True, False):
            close(batch(method, x, y, fast), want)


@HYP
@given(groups(min_n=KNIGHT_MIN_N - 2, max_n=KNIGHT_MIN_N + 40, max_g=2,
              cell=st.sampled_from((1.0, 2.0, 3.0, 4.0, 5.0, NAN))))
def test_knight_path_matches_reference_around_the_switch(xy):
    # NaNs move the number of valid items across KNIGHT_MIN_N
    x, y = xy
    want = _ref_stats(x, y, 0.0)
    np.testing.assert_array_equal(_kernels.kendall_stats(x, y, 0.0), want)
    np.testing.assert_array_equal(_numpy_kernels.kendall_stats(x, y, 0.0), want)


def _adversarial(n, rng):
    up = np.arange(n, dtype=float)
    ties = rng.integers(1, 4, n).astype(float)
    return {
        "all-x-tied": (np.full(n, 3.0), rng.integers(1, 6, n).astype(float)),
        "all-y-tied": (rng.integers(1, 6, n).astype(float), np.full(n, 3.0)),
        "both-tied": (np.full(n, 1.0), np.full(n, 2.0)),
        "reversed": (up, up[::-1].copy()),
        "identical": (up, up.copy()),
        "binary-ties": (ties, ties.copy()),
        "binary-vs-reversed": (ties, 4 - ties),
        "continuous": (rng.normal(size=n), rng.normal(size=n)),
        "negative-zero": (np.where(rng.random(n) < 0.5, -0.0, 0.0), up),
        "nan-crossing": (
            np.where(np.arange(n) % 9 == 0, np.nan, rng.integers(1, 6, n)).astype(float),
            rng.integers(1, 6, n).astype(float),
        ),
    }


@pytest.mark.parametrize("n", (KNIGHT_MIN_N - 1, KNIGHT_MIN_N, 70, 257))
def test_knight_path_on_adversarial_groups(n):
    rng = np.random.default_rng(n)
    for kind, (gx, gy) in _adversarial(n, rng).items():
        x, y = gx[None, None], gy[None, None]
        want = _ref_stats(x, y, 0.0)
        np.testing.assert_array_equal(_kernels.kendall_stats(x, y, 0.0), want, err_msg=kind)
        np.testing.assert_array_equal(_numpy_kernels.kendall_stats(x, y, 0.0), want,
                                      err_msg=kind)
        for method in ("kendall_b", "kendall_c"):
            close(one(method, gx, gy), scipy_stat(method, gx, gy))


def test_positive_eps_on_a_large_group_uses_the_direct_count():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(1, 2, 150)).round(2)
    y = rng.integers(1, 6, size=(1, 2, 150)).astype(float)
    for eps in (0.01, 0.3):
        want = _ref_stats(x, y, eps)
        np.testing.assert_array_equal(_kernels.kendall_stats(x, y, eps), want)
        np.testing.assert_array_equal(_numpy_kernels.kendall_stats(x, y, eps), want)


def test_kernels_accept_broadcast_views():
    rng = np.random.default_rng(8)
    x = _likert(rng, (3, 2, 80))
    y = np.broadcast_to(_likert(rng, (1, 2, 80)), x.shape)  # zero stride on axis 0
    for k in KERNELS.values():
        np.testing.assert_array_equal(k.kendall_stats(x, y, 0.0),
                                      k.kendall_stats(x, np.ascontiguousarray(y), 0.0))


# ---------------------------------------------------------------------------
# 4. extreme magnitudes

SCALES = (1e-300, 1e-320, 1e300)  # 1e-320: subnormal numbers


@FAST
@pytest.mark.parametrize("scale", SCALES)
def test_rank_statistics_are_scale_free_at_extreme_magnitudes(scale, fast):
    rng = np.random.default_rng(11)
    x = _likert(rng, (1, 3, 90))
    y = _likert(rng, (1, 3, 90))
    for method in ("spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23"):
        close(batch(method, x * scale, y / scale if scale > 1 else y * scale, fast),
              batch(method, x, y, fast), rtol=1e-13)


@FAST
@pytest.mark.parametrize("scale, shift", [(1e-8, 0.0), (1e8, 0.0), (1.0, 1e6), (1e-3, -1e4)])
def test_pearson_is_affine_invariant_at_moderate_magnitudes(scale, shift, fast):
    rng = np.random.default_rng(12)
    x = rng.normal(size=(1, 2, 40))
    y = x + rng.normal(size=(1, 2, 40))
    got = batch("pearson", x * scale + shift, y, fast)
    want = [[ref.pearson(list(x[0, g] * scale + shift), list(y[0, g])) for g in range(2)]]
    close(got, want, rtol=1e-8)
    close(got, batch("pearson", x, y, fast), rtol=1e-8)


@FAST
@pytest.mark.parametrize("scale", (1e-100, 1e100))
def test_pearson_is_scale_free_at_extreme_magnitudes(scale, fast):
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]])
    y = np.array([[[1.0, 3.0, 2.0, 4.0]]])
    # r = 0.8 exactly for these vectors (reference: exact rational arithmetic)
    assert ref.pearson([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8, rel=1e-15)
    assert ref.pearson(list(x[0, 0] * scale), list(y[0, 0] * scale)) == pytest.approx(0.8)
    close(batch("pearson", x * scale, y * scale, fast), [[0.8]])


def test_numba_kernels_handle_differences_that_overflow():
    x = np.array([[[1e308, -1e308, 0.0, 5.0]]])
    y = np.array([[[1.0, 2.0, 3.0, 3.0]]])
    np.testing.assert_array_equal(_kernels.kendall_stats(x, y, 0.0), _ref_stats(x, y, 0.0))
    thr, val = _kernels.tie_calibration(x[0], y[0], np.ones(1))
    rthr, rval = ref.tie_calibration([(list(x[0, 0]), list(y[0, 0]))])
    assert list(thr) == rthr  # includes |1e308 - (-1e308)| = inf
    close(val, [float(v) for v in rval])


@pytest.mark.parametrize("kind", ("inf", "overflow"))
def test_numpy_twins_are_silent_on_nonfinite_differences(kind):
    if kind == "inf":
        x = np.array([[[np.inf, 1.0, np.inf, 0.0]]])  # inf - inf is NaN
    else:
        x = np.array([[[1e308, -1e308, 0.0, 5.0]]])
    y = np.array([[[1.0, 2.0, 3.0, 3.0]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.testing.assert_array_equal(_numpy_kernels.kendall_stats(x, y, 0.0),
                                      _kernels.kendall_stats(x, y, 0.0))
        thr, val = _numpy_kernels.tie_calibration(x[0], y[0], np.ones(1))
    rthr, _ = _kernels.tie_calibration(x[0], y[0], np.ones(1))
    np.testing.assert_array_equal(thr, rthr)


# ---------------------------------------------------------------------------
# 5. tie calibration (acc_eq) kernels


def _macro_weights(x, y):
    """The level code's macro weights: uniform over groups with >= 1 valid pair."""
    nv = (np.isfinite(x) & np.isfinite(y)).sum(-1)
    has = nv >= 2
    return has / max(has.sum(), 1)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize(
    "metric, human, thresholds, taus, best",
    [
        # MTME tau_optimization_test.py::test_zero_threshold_is_best (commit 68a481a)
        ([0, 2, 6, 8], [1, 2, 3, 4], [0, 2, 4, 6, 8],
         [6 / 6, 4 / 6, 3 / 6, 1 / 6, 0 / 6], (0.0, 1.0)),
        # MTME tau_optimization_test.py::test_nonzero_threshold_is_best (commit 68a481a)
        ([0, 2, 6, 8], [1, 1, 1, 4], [0, 2, 4, 6, 8],
         [3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6], (4.0, 4 / 6)),
    ],
    ids=["zero-threshold-best", "nonzero-threshold-best"],
)
def test_tie_calibration_mtme_single_group(name, metric, human, thresholds, taus, best):
    k = KERNELS[name]
    x = np.array([metric], float)
    y = np.array([human], float)
    thr, val = k.tie_calibration(x, y, np.ones(1))
    assert list(thr) == thresholds
    close(val, taus, rtol=1e-14)
    close(k.tie_calibration_best(x[None], y[None], np.ones((1, 1)))[0], best, rtol=1e-14)


# MTME tau_optimization_test.py::test_regression_example, commit 68a481a (rows = groups,
# None -> NaN); MTME averages acc_23 over the 4 groups that have a pair
REG_METRIC = [[0, 5, 2, 3, 2], [None, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1],
              [None] * 5]
REG_HUMAN = [[1, 5, 2, 1, 1], [4, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, None, 3, 2],
             [None] * 5]
REG_TAUS = [0.4666666666666667, 0.4916666666666668, 0.38333333333333347,
            0.29166666666666674, 0.2666666666666667, 0.2, 0.15833333333333335,
            0.15833333333333335, 0.1166666666666667]


@pytest.mark.parametrize("name", KERNELS)
def test_tie_calibration_mtme_regression_example(name):
    k = KERNELS[name]
    x = np.array(REG_METRIC, float)
    y = np.array(REG_HUMAN, float)
    w = _macro_weights(x, y)
    np.testing.assert_array_equal(w, [0.25, 0.25, 0.25, 0.25, 0.0])
    thr, val = k.tie_calibration(x, y, w)
    assert list(thr) == [0, 1, 2, 3, 4, 5, 6, 7, 8]  # test_regression_example
    close(val, REG_TAUS, rtol=1e-13)  # test_regression_example (MTME's own float sums)
    eps, tau = k.tie_calibration_best(x[None], y[None], w[None])[0]
    assert eps == 1.0  # test_regression_example: best threshold 1
    assert tau == pytest.approx(0.4916666666666668, rel=1e-13)  # same test
    # exact value from the reference: 59/120
    _, rval = ref.tie_calibration(list(zip(ref.as_rows(x), ref.as_rows(y))))
    assert rval[1] == ref.Fraction(59, 120)


@HYP
@given(groups(max_g=4, max_n=9))
def test_tie_calibration_matches_brute_force(xy):
    x, y = xy
    xg, yg = x[0], y[0]
    w = _macro_weights(xg, yg)
    gl = [(list(xg[g]), list(yg[g])) for g in range(xg.shape[0])]
    rthr, rval = ref.tie_calibration(gl, weights=w)
    for name, k in KERNELS.items():
        thr, val = k.tie_calibration(xg, yg, w)
        assert list(thr) == rthr, name
        close(val, [float(v) for v in rval], atol=1e-12)
        eps, best = k.tie_calibration_best(x, y, w[None])[0]
        if w.sum() > 0:
            reps, rbest = ref.acc_eq(gl)
            assert eps == reps, name
            assert best == pytest.approx(rbest, abs=1e-12), name
        else:
            assert (eps, best) == (0.0, 0.0), name


@settings(HYP, max_examples=20)
@given(groups(max_g=3, max_n=8))
def test_tie_calibration_value_equals_acc23_recounted_at_each_threshold(xy):
    # the sweep's incremental updates must equal a fresh count at each threshold
    x, y = xy
    w = _macro_weights(x[0], y[0])
    thr, val = _kernels.tie_calibration(x[0], y[0], w)
    for t, v in zip(thr, val):
        acc = co.kendall_from_stats(_kernels.kendall_stats(x, y, float(t)), "acc23")[0]
        close(v, np.nansum(acc * w) if w.sum() else 0.0, atol=1e-12)


# ---------------------------------------------------------------------------
# 6. published single-vector cases (mt-metrics-eval stats_test.py, commit 68a481a)


@FAST
def test_mtme_case2_kendall_variants(fast):
    # MTME stats_test.py CorrelationTest.testKendallVariants:
    # Correlation(1, [1,2,2,3,4], [2,1,1.5,5,3])
    human = [1, 2, 2, 3, 4]
    metric = [2, 1, 1.5, 5, 3]
    assert one("kendall_b", metric, human, fast) == pytest.approx(0.316227766, abs=1e-9)
    assert one("kendall_c", metric, human, fast) == pytest.approx(0.32, abs=1e-12)
    assert one("kendall_23", metric, human, fast) == pytest.approx(0.2, abs=1e-12)
    assert one("acc_23", metric, human, fast) == pytest.approx(0.6, abs=1e-12)
    s = co.kendall_stats(np.array([[metric]], float), np.array([[human]], float), 2.0,
                         fast=fast)
    # testKendallVariants: acc23 with epsilon = 2 gives 0.4
    assert co.kendall_from_stats(s, "acc23")[0, 0] == pytest.approx(0.4, abs=1e-12)


@FAST
def test_mtme_case3_tau23_and_acc23_with_epsilon(fast):
    # MTME stats_test.py CorrelationFunctionsTest.testKendallVariants_23 and
    # testKendallVariantsWithPositiveEpsilon (pair counts written out there):
    # x is gold, y is metric
    gold = np.array([[[1, 1, 1, 2, 2, 3, 4]]], float)
    metric = np.array([[[1, 1, 2, 2, 4, 3, 3]]], float)
    s0 = co.kendall_stats(metric, gold, 0.0, fast=fast)
    s1 = co.kendall_stats(metric, gold, 1.0, fast=fast)
    assert co.kendall_from_stats(s0, "23")[0, 0] == pytest.approx(7 / 21, abs=1e-12)
    assert co.kendall_from_stats(s0, "acc23")[0, 0] == pytest.approx(14 / 21, abs=1e-12)
    assert co.kendall_from_stats(s1, "23")[0, 0] == pytest.approx(-1 / 21, abs=1e-12)
    assert co.kendall_from_stats(s1, "acc23")[0, 0] == pytest.approx(10 / 21, abs=1e-12)


@FAST
def test_mtme_case4_tau_b_and_c_equal_scipy(fast):
    # MTME stats_test.py CorrelationFunctionsTest.testKendallVariants_b_and_c (asserts
    # equality with scipy.stats.kendalltau; the digits below are scipy's)
    gold = [7, 1, 2, 7, 4, 3, 2]
    metric = [4, 1, 3, 6, 1, 5, 6]
    assert one("kendall_b", metric, gold, fast) == pytest.approx(0.2631578947, abs=1e-10)
    assert one("kendall_c", metric, gold, fast) == pytest.approx(0.2551020408, abs=1e-10)
    close(one("kendall_b", metric, gold, fast), scipy_stat("kendall_b", metric, gold))
    close(one("kendall_c", metric, gold, fast), scipy_stat("kendall_c", metric, gold))


@FAST
def test_mtme_case6_agreement_is_acc23(fast):
    # MTME stats_test.py CorrelationFunctionsTest.testAgreement: 5 agreements of 10 pairs
    gold = [1, 2, 3, 3, 4]
    metric = [1, 1, 2, 1, 2]
    assert one("pairwise_accuracy", metric, gold, fast) == 0.5
    s = co.kendall_stats(np.array([[metric]], float), np.array([[gold]], float), 0.0,
                         fast=fast)[0, 0]
    assert s[C] + s[TXY] == 5
    assert s[C] + s[D] + s[TX] + s[TY] + s[TXY] == 10
    assert (s[NVALID], s[KX], s[KY]) == (5, 2, 4)


# ---------------------------------------------------------------------------
# 7. Fisher intervals (formula; the nlpstats oracle is in test_levels.py)


@pytest.mark.parametrize(
    "method, b, c",
    [
        # Bonett & Wright (2000, Psychometrika 65(1)) constants, as in danieldeutsch/nlpstats
        # nlpstats/correlations/fisher.py
        ("pearson", 3, lambda r: 1.0),
        ("spearman", 3, lambda r: math.sqrt(1 + r * r / 2)),
        ("kendall_b", 4, lambda r: math.sqrt(0.437)),
    ],
)
@pytest.mark.parametrize("conf", (0.9, 0.95, 0.99))
def test_fisher_interval_formula(method, b, c, conf):
    rs = np.array([-0.9, -0.2, 0.0, 0.35, 0.8])
    ns = np.array([b + 1, 10, 25, 100, 7])
    lo, hi = co.fisher_interval(rs, ns, method, conf)
    z = sst.norm.ppf(1 - (1 - conf) / 2)
    for r, n, lo1, hi1 in zip(rs, ns, lo, hi):
        h = z * c(r) / math.sqrt(n - b)
        assert lo1 == pytest.approx(math.tanh(math.atanh(r) - h), rel=1e-12, abs=1e-15)
        assert hi1 == pytest.approx(math.tanh(math.atanh(r) + h), rel=1e-12, abs=1e-15)
        assert lo1 <= r <= hi1


def test_fisher_interval_undefined_cases():
    # NaN when n <= b (nlpstats/correlations/fisher.py) or when r is NaN
    lo, hi = co.fisher_interval([0.5, 0.5, NAN], [3, 4, 50], "pearson")
    assert np.isnan(lo[[0, 2]]).all() and np.isnan(hi[[0, 2]]).all()
    assert np.isfinite([lo[1], hi[1]]).all()
    lo, hi = co.fisher_interval([0.5, 0.5], [4, 5], "kendall_b")
    assert np.isnan([lo[0], hi[0]]).all() and np.isfinite([lo[1], hi[1]]).all()
    # a perfect correlation has a degenerate interval (nlpstats gives the same)
    lo, hi = co.fisher_interval(1.0, 10, "pearson")
    assert (lo, hi) == (1.0, 1.0)


@pytest.mark.parametrize("method", ("kendall_c", "kendall_23", "acc_23", "acc_eq"))
def test_fisher_interval_refuses_coefficients_without_constants(method):
    with pytest.raises(ParameterError, match="fisher.*not defined.*bootstrap"):
        co.fisher_interval(0.3, 30, method)


# ---------------------------------------------------------------------------
# 8. the registry


def test_registry_names():
    assert set(co.COEFFICIENTS) == {"pearson", "spearman", "kendall_b", "kendall_c",
                                    "kendall_23", "acc_23", "acc_eq", "pairwise_accuracy"}
    for name, coef in co.COEFFICIENTS.items():
        assert coef.name == name
        assert co.get_coefficient(name) is coef
    assert co.COEFFICIENTS["pairwise_accuracy"].levels == ("system",)
    assert co.COEFFICIENTS["acc_eq"].batch is None


@pytest.mark.parametrize("name", ("kendall", "Kendall", "tau"))
def test_registry_refuses_ambiguous_kendall(name):
    with pytest.raises(ParameterError, match="ambiguous.*kendall_b, kendall_c or kendall_23"):
        co.get_coefficient(name)


def test_registry_lists_choices_for_unknown_names():
    with pytest.raises(ParameterError, match="pearson, spearman, kendall_b"):
        co.get_coefficient("cosine")


# ---------------------------------------------------------------------------
# 8. Pearson numerics (issue 18.8): centring before summing squares


def _exact_pearson(x, y):
    """Pearson's r of the exact binary values of the floats: rational sums
    (fractions.Fraction), the square root at the end with 50 decimal digits."""
    from decimal import Decimal, localcontext

    xs = [ref.Fraction(float(v)) for v in x]
    ys = [ref.Fraction(float(v)) for v in y]
    n = len(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys))
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    r2 = sxy * sxy / (sxx * syy)
    with localcontext() as ctx:
        ctx.prec = 50
        r = (Decimal(r2.numerator) / Decimal(r2.denominator)).sqrt()
    return float(r) if sxy >= 0 else -float(r)


@FAST
@pytest.mark.parametrize("ratio", (1e6, 1e8, 1e10, 1e12))
def test_pearson_offset_data_loses_no_precision_regression_18_8(ratio, fast):
    # issue 18.8: scaling by max|x| before centring gave errors growing like
    # eps * (mean/sd)^2 (1.3e-6 at mean/sd = 1e12); centred sums stay near eps
    rng = np.random.default_rng(188)
    n = 50
    x = ratio + rng.normal(size=(1, 3, n))
    y = -0.5 * ratio + x - ratio + 0.7 * rng.normal(size=(1, 3, n))
    got = batch("pearson", x, y, fast)
    want = [[_exact_pearson(x[0, g], y[0, g]) for g in range(3)]]
    close(got, want, rtol=1e-13, atol=0)


@FAST
def test_pearson_values_a_few_ulps_apart_regression_18_8(fast):
    # issue 18.8: values one ulp apart gave 0.431 against an exact 0.635
    rng = np.random.default_rng(1881)
    for base in (1.0, 1e6, 3.0e15, 1e300, 1e-300):
        kx = rng.integers(0, 4, size=(1, 4, 12))
        ky = rng.integers(0, 4, size=(1, 4, 12))
        x = np.empty(kx.shape)
        y = np.empty(ky.shape)
        for idx in np.ndindex(kx.shape):  # base + k ulps, k in 0..3
            x[idx] = base
            y[idx] = base
            for _ in range(kx[idx]):
                x[idx] = np.nextafter(x[idx], np.inf)
            for _ in range(ky[idx]):
                y[idx] = np.nextafter(y[idx], np.inf)
        got = batch("pearson", x, y, fast)
        for g in range(4):
            if np.ptp(x[0, g]) == 0 or np.ptp(y[0, g]) == 0:
                assert np.isnan(got[0, g])
            else:
                close(got[0, g], _exact_pearson(x[0, g], y[0, g]), rtol=1e-13, atol=1e-15)


@FAST
@pytest.mark.parametrize("seed", range(5))
def test_pearson_agrees_with_scipy_pearsonr_on_random_data(seed, fast):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 300))
    x = rng.normal(loc=rng.normal(scale=100), scale=rng.uniform(0.01, 10), size=(1, 4, n))
    y = 0.3 * x + rng.normal(size=(1, 4, n))
    got = batch("pearson", x, y, fast)
    want = [[sst.pearsonr(x[0, g], y[0, g]).statistic for g in range(4)]]
    close(got, want, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------
# 9. path switches and one compiled layout (issue 15)


@pytest.mark.parametrize("n", (_kernels.RANKED_Y_MIN_N - 1, _kernels.RANKED_Y_MIN_N,
                               KNIGHT_MIN_N - 1, KNIGHT_MIN_N))
def test_kendall_paths_agree_around_both_switches(n):
    # direct loop, ranked-human kernel (shared y, B > 1, n >= RANKED_Y_MIN_N)
    # and Knight (n >= KNIGHT_MIN_N) against the NumPy twin's pair count
    rng = np.random.default_rng(n)
    x = rng.integers(1, 8, size=(3, 2, n)).astype(float)
    x[0, 0, ::7] = np.nan
    y = rng.integers(1, 5, size=(1, 2, n)).astype(float)
    want = _numpy_kernels.kendall_stats(x, np.broadcast_to(y, x.shape), 0.0)
    np.testing.assert_array_equal(co.kendall_stats(x, y, 0.0), want)
    np.testing.assert_array_equal(co.kendall_stats(x, np.repeat(y, 3, 0), 0.0), want)


def test_kendall_wrapper_passes_one_contiguous_layout(monkeypatch):
    # issue 15: kendall_stats was compiled once per array layout (up to 4
    # times); the wrapper now hands the kernels C-contiguous arrays only
    seen = []

    def record(space, name):
        real = getattr(space, name)

        def f(*args):
            seen.extend((name, a.flags.c_contiguous) for a in args if isinstance(a, np.ndarray))
            return real(*args)
        return f

    for name in ("kendall_stats", "kendall_stats_ranked_y"):
        # the parallel builds and the serial builds of small calls
        for space in (_kernels, _kernels.SERIAL):
            monkeypatch.setattr(space, name, record(space, name))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 30, 250))
    y = rng.integers(0, 4, size=(1, 30, 250)).astype(float)
    for xv, yv in ((x.transpose(0, 2, 1), y.transpose(0, 2, 1)),  # input level
                   (x[:, ::2], y[:, ::2]), (x[:1, :, :50], y[:, :, :50])):
        co.kendall_stats(xv, yv, 0.0)
        co.kendall_stats(xv, np.broadcast_to(yv, xv.shape), 0.0)
    assert seen and all(c for _, c in seen), seen
