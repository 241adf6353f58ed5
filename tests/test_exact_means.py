"""Correctly rounded means (stats/exact.py; issue 23, item 1).

Acceptance of the issue: equal exact means from different multisets, in any
order (thirds, tenths, sevenths; means of 3-10 raters), compare equal at every
level and in every resampling kernel (bootstrap and Perm-Both, numba and NumPy
twin); system-level Kendall and Spearman equal scipy's on exact means on data
of the issue's shape (11 systems x 96 inputs, every score a mean of 3 integer
ratings 1-5).

The independent reference everywhere is exact rational arithmetic
(:class:`fractions.Fraction`): a rater mean is the rational ``sum / r``, a
float score on the grid stands for that rational, and ``float(Fraction)`` is
the correctly rounded value.  Kernels are also compared with their NumPy
twins (Python integers) on values off the grid: subnormals, values near
1e308, signed zeros, wide exponent ranges.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metaeval
from metaeval.stats import _kernels, _numpy_kernels, exact
from metaeval.stats import resampling as rs
from metaeval.stats.cellboot import CellBootstrap, counts
from metaeval.stats.levels import arrange, given_system_matrices, level_values
from metaeval.stats.permboth import PairLayout, swapped_halves
from metaeval.stats.resampling import fair_bytes

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _tied_rows(rng, r, n, n_rows=4):
    """Rows of rater means (numerators over ``r``) with one exact mean: row 0
    holds ``n`` random means of ``r`` ratings 1-5; every other row another
    multiset of as many or twice as many cells (NaN-padded) with the same
    exact mean, in a random order.  Returns the (rows, 2n) float scores and
    the numerators."""
    base = rng.integers(r, 5 * r + 1, size=n)  # sum of r ratings 1-5
    nums = np.full((n_rows, 2 * n), -1, np.int64)
    nums[0, :n] = base
    for i in range(1, n_rows):
        k = n if i % 2 else 2 * n
        row = np.concatenate([base] * (k // n)).copy()
        for _ in range(3 * k):  # move one rating point between two cells
            a, b = rng.integers(0, k, size=2)
            if row[a] > r and row[b] < 5 * r:
                row[a] -= 1
                row[b] += 1
        nums[i, :k] = rng.permutation(row)
    scores = np.where(nums >= 0, nums / r, np.nan)  # one division: the float of a rater mean
    return scores, nums


def _exact_mean(nums, r, mult=None):
    nums = np.asarray(nums)
    mult = np.ones(nums.shape, np.int64) if mult is None else np.asarray(mult)
    keep = (nums >= 0) & (mult > 0)
    n = int(mult[keep].sum())
    return Fraction(int((nums[keep] * mult[keep]).sum()), r * n) if n else None


@SETTINGS
@given(r=st.integers(3, 10), n=st.integers(1, 24), seed=st.integers(0, 2**32 - 1))
def test_equal_rational_means_are_equal_floats_at_system_level_regression_sorted_sum(r, n, seed):
    rng = np.random.default_rng(seed)
    scores, nums = _tied_rows(rng, r, n)
    x = rng.normal(size=scores.shape)  # a metric present everywhere: the human's cells count
    want = float(_exact_mean(nums[0], r))
    xs, ys = arrange(x, scores, "system")
    assert ys[0, 0].tolist() == [want] * len(ys[0, 0])
    g = given_system_matrices([x, scores], [None, None])[1][:, 0]
    assert g.tolist() == [want] * len(g)
    for fast in (True, False):
        assert exact.means(scores, fast=fast).tolist() == [want] * scores.shape[0]


@SETTINGS
@given(r=st.sampled_from([3, 7, 10]), n=st.integers(2, 12), seed=st.integers(0, 2**32 - 1))
def test_bootstrap_replicates_take_the_exact_rational_means(r, n, seed):
    # every replicate row's mean is the correctly rounded rational mean of
    # its multiset of cells, in the kernel and in its twin: replicates with
    # equal exact means compare equal, whatever multiset and order
    rng = np.random.default_rng(seed)
    scores, nums = _tied_rows(rng, r, n)
    N, M = scores.shape
    x = rng.integers(0, 4, size=(N, M)) / 7.0  # sevenths: the metric on a grid too
    xnum = np.rint(x * 7).astype(np.int64)
    rows, cols = rs.bootstrap_indices(rng, 6, N, M, "both")
    cb = CellBootstrap(x, scores, "system", "kendall_b")
    cc, cr = counts(cols, M), counts(rows, N)
    cnt = np.rint(cc.astype(float) @ cb.valid.astype(float).T).astype(np.int64)
    args = (cb.sx, cb.cx, cb.sy, cb.cy, cb.grid_all, cc, cr, cnt, exact.GRID)
    fast = _kernels.boot_row_means(*args)
    np.testing.assert_array_equal(fast, _numpy_kernels.boot_row_means(*args))
    valid = nums >= 0
    for b in range(rows.shape[0]):
        for row in set(rows[b].tolist()):
            want_y = _exact_mean(np.where(valid[row], nums[row], -1), r, cc[b])
            want_x = _exact_mean(np.where(valid[row], xnum[row], -1), 7, cc[b])
            if want_y is None:
                assert np.isnan(fast[1, b, row])
            else:
                assert fast[1, b, row] == float(want_y)
                assert fast[0, b, row] == float(want_x)
    # and the statistic of the replicate equals the materialised one
    np.testing.assert_array_equal(
        cb.values(rows, cols),
        level_values(rs.take_cells(x, rows, cols), rs.take_cells(scores, rows, cols), "system",
                     "kendall_b", detail=False).value)


@SETTINGS
@given(r=st.sampled_from([3, 7, 10]), n=st.integers(2, 12), seed=st.integers(0, 2**32 - 1))
def test_perm_both_halves_take_the_exact_rational_means(r, n, seed):
    rng = np.random.default_rng(seed)
    sa, na = _tied_rows(rng, r, n)
    nb_ = np.where(na >= 0, rng.integers(r, 5 * r + 1, size=na.shape), -1)
    sb = np.where(nb_ >= 0, nb_ / r, np.nan)
    z = np.where(na >= 0, rng.normal(size=na.shape), np.nan)
    B = 8
    bits = fair_bytes(rng, B * z.size)
    lay = PairLayout(sa, sb, z, "item")
    w = np.unpackbits(bits)[: B * z.size].reshape(B, *z.shape).astype(bool)
    pa, pb = swapped_halves(bits, B, sa, sb)
    for fast in (True, False):
        got = lay.group_means(bits, B, fast=fast)
        for b in range(B):
            for h, (p, q) in enumerate(((na, nb_), (nb_, na))):
                chosen = np.where(w[b], q, p)
                for g in range(z.shape[0]):
                    e = _exact_mean(chosen[g], r)
                    assert got[b, g, h] == float(e)
            # equal to the generic level code on the materialised halves
            for h, p in enumerate((pa, pb)):
                np.testing.assert_array_equal(got[b, :, h], arrange(p[b], z, "system")[0][0, 0])


def _issue_data(seed, n_systems=11, n_inputs=96, n_base=6):
    """The issue's shape: 11 systems x 96 inputs, every human score and every
    metric score a mean of 3 integer ratings 1-5; systems beyond the first
    ``n_base`` are rearrangements of earlier ones (other cells, same total),
    so several system means tie exactly."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):  # human, metric
        nums = rng.integers(3, 16, size=(n_systems, n_inputs))
        for s in range(n_base, n_systems):
            row = nums[rng.integers(0, n_base)].copy()
            for _ in range(50):
                a, b = rng.integers(0, n_inputs, size=2)
                if row[a] > 3 and row[b] < 15:
                    row[a] -= 1
                    row[b] += 1
            nums[s] = rng.permutation(row)
        out.append(nums)
    return out


def _ranks(fracs):
    """Dense ranks of exact means (Kendall and Spearman depend only on them)."""
    order = sorted(set(fracs))
    return np.array([order.index(f) for f in fracs], float)


@pytest.mark.parametrize("seed", range(6))
def test_system_kendall_and_spearman_equal_scipy_on_exact_means_regression_sorted_sum(seed):
    hn, mn = _issue_data(seed)
    h, m = hn / 3.0, mn / 3.0
    hq = [Fraction(int(v.sum()), 3 * v.size) for v in hn]
    mq = [Fraction(int(v.sum()), 3 * v.size) for v in mn]
    assert len(set(hq)) < len(hq)  # the data has tied system means
    # the fsum means tie here as well (the reference the issue names)
    assert _ranks([math.fsum(v) / v.size for v in h]).tolist() == _ranks(hq).tolist()
    ds = metaeval.Dataset.from_arrays({"human": h, "metric": m}, human=["human"])
    res = metaeval.correlate(ds, "human", level="system", method=["kendall_b", "spearman"],
                             ci="none", pvalue="none")
    want_k = scipy.stats.kendalltau(_ranks(mq), _ranks(hq)).statistic
    want_s = scipy.stats.spearmanr(_ranks(mq), _ranks(hq)).statistic
    assert res.get("metric", level="system", method="kendall_b").statistic == pytest.approx(want_k, abs=1e-12)
    assert res.get("metric", level="system", method="spearman").statistic == pytest.approx(want_s, abs=1e-12)


@pytest.mark.parametrize("order", ["forward", "reverse", "shuffled"])
def test_rater_means_do_not_depend_on_the_raters_order_regression_sorted_sum(order):
    # cells rated in tenths by 3 raters: (0.1, 0.2, 0.3) and (0.3, 0.2, 0.1)
    # summed left to right give 0.20000000000000004 and 0.19999999999999998;
    # the dataset's cell means are the rational means, equal in every order
    rng = np.random.default_rng(3)
    t = rng.integers(0, 11, size=(3, 4, 20))
    if order == "reverse":
        t = t[::-1]
    elif order == "shuffled":
        t = np.take_along_axis(t, rng.random(t.shape).argsort(0), 0)
    t[:, 0, 0], t[:, 0, 1], t[:, 0, 2] = [1, 2, 3], [3, 2, 1], [2, 2, 2]
    ratings = t / 10.0
    ds = metaeval.Dataset.from_arrays({"human": ratings, "metric": rng.normal(size=(4, 20))},
                                      human=["human"])
    got = ds.scores("human")
    want = np.vectorize(lambda a, b, c: float(Fraction(int(a + b + c), 30)))(*t)
    np.testing.assert_array_equal(got, want)
    assert got[0, 0] == got[0, 1] == got[0, 2] == 0.2


ADVERSARIAL = [
    [5e-324, -5e-324, 1e-323, 2.5e-308],
    [1.7e308, 1.7e308, -1e308, 1e-300],
    [1e308, 1e308, 1e308],
    [-0.0, -0.0],
    [0.1, 0.2, 0.3, 0.1 + 0.2],
    [1e16, 1.0, -1e16, 1.0],
    [2.0**-1074 * 3, 2.0**-1074],
]


@pytest.mark.parametrize("row", ADVERSARIAL)
def test_exact_means_equal_the_fraction_mean_on_adversarial_rows(row):
    a = np.array([row])
    want = float(sum(map(Fraction, row)) / len(row))
    for fast in (True, False):
        got = exact.means(a, fast=fast)[0]
        if all(exact.grid_codes(a, a.shape[1])[0] != exact.OFF_GRID):
            codes = exact.grid_codes(a, a.shape[1])[0]
            want = float(Fraction(int(codes.sum()), exact.GRID * len(row)))
        assert got == want and math.copysign(1, got) == math.copysign(1, want or 1.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=9))
def test_exact_means_of_any_floats_are_correctly_rounded(vals):
    a = np.array([vals])
    codes = exact.grid_codes(a, a.shape[1])
    fast = exact.means(a)[0]
    assert fast == exact.means(a, fast=False)[0] or (fast == 0 == exact.means(a, fast=False)[0])
    if (codes == exact.OFF_GRID).any():
        want = float(sum(map(Fraction, vals)) / len(vals))
    else:
        want = float(Fraction(int(codes.sum()), exact.GRID * len(vals)))
        # the grid stands for rationals within 2^-48 of the floats
        assert abs(want - float(sum(map(Fraction, vals)) / len(vals))) <= 2.0**-46 * max(
            map(abs, vals))
    assert fast == want


def test_grid_codes_take_rationals_and_refuse_the_rest():
    a = np.array([1 / 3, 2 / 7, 0.1 + 0.2, 0.37, 0.001, 1e-20, 0.0, -0.0, np.nan, np.pi, 1e300])
    c = exact.grid_codes(a, 10)
    G = exact.GRID
    assert c[:5].tolist() == [G // 3, 2 * G // 7, 3 * G // 10, 37 * G // 100, G // 1000]
    assert c[5] == exact.OFF_GRID  # not rounded to 0
    assert c[6:9].tolist() == [0, 0, 0]
    assert c[9] == c[10] == exact.OFF_GRID


@pytest.mark.parametrize("kind", ["zscores", "dyadic", "wide", "subnormal", "mixed-grid"])
def test_perm_both_group_means_equal_the_fraction_means_off_the_grid(kind):
    # the kernel's fixed-point words (values spanning <= 124 bits) and its
    # limb fallback (wider spans) against exact rational means of the halves
    rng = np.random.default_rng(5)
    N, M = 4, 9
    za, zb = rng.normal(size=(2, N, M))
    if kind == "dyadic":  # trailing zeros in the mantissas (the lowest set bit above pos)
        za, zb = np.round(za * 8) / 8 + 2.0**-30, np.round(zb * 4) / 4
    elif kind == "wide":
        za = za * 10.0 ** rng.integers(-200, 200, size=(N, M))
    elif kind == "subnormal":
        za = za * 1e-310
        zb = zb * 5e-324
    elif kind == "mixed-grid":
        za = np.round(za * 3) / 3  # on the grid; zb off it: halves decide per resample
    z = rng.normal(size=(N, M))
    B = 16
    bits = fair_bytes(rng, B * z.size)
    lay = PairLayout(za, zb, z, "item")
    w = np.unpackbits(bits)[: B * z.size].reshape(B, N, M).astype(bool)
    fast = lay.group_means(bits, B, fast=True)
    np.testing.assert_array_equal(fast, lay.group_means(bits, B, fast=False))
    for b in range(B):
        for h, (p, q) in enumerate(((za, zb), (zb, za))):
            half = np.where(w[b], q, p)
            codes = exact.grid_codes(half, M)
            on_grid = not (codes == exact.OFF_GRID).any()
            for g in range(N):
                if on_grid:
                    want = float(Fraction(int(codes[g].sum()), exact.GRID * M))
                else:
                    want = float(sum(map(Fraction, half[g])) / M)
                assert fast[b, g, h] == want


@pytest.mark.parametrize("kind", ["tenths", "continuous", "missing", "wide"])
def test_means_over_the_first_axis_equal_the_row_kernel_and_the_twin(kind):
    # exact.nanmean(axis=0) (raters into cells, without a transposed copy)
    # equals exact.means on the transposed array and the Fraction means
    rng = np.random.default_rng(9)
    a = rng.integers(0, 11, size=(3, 4, 6)) / 10.0
    if kind == "continuous":
        a = rng.normal(size=(5, 4, 6))
    elif kind == "missing":
        a[rng.random(a.shape) < 0.4] = np.nan
    elif kind == "wide":
        a = rng.normal(size=(4, 3, 5)) * 10.0 ** rng.integers(-300, 300, size=(4, 3, 5))
    got = exact.nanmean(a, axis=0)
    np.testing.assert_array_equal(got, exact.nanmean(a, axis=0, fast=False))
    np.testing.assert_array_equal(got, exact.means(np.moveaxis(a, 0, -1), unit_ndim=3))
    codes = exact.grid_codes(a, a.shape[0])
    grid = not (codes == exact.OFF_GRID).any()
    for i in range(a.shape[1]):
        for j in range(a.shape[2]):
            ok = np.isfinite(a[:, i, j])
            if not ok.any():
                assert np.isnan(got[i, j])
            elif grid:
                assert got[i, j] == float(Fraction(int(codes[ok, i, j].sum()), exact.GRID * int(ok.sum())))
            else:
                assert got[i, j] == float(sum(map(Fraction, a[ok, i, j])) / int(ok.sum()))
