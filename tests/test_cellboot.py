"""Bootstrap replicates computed from the draws (stats/cellboot.py, issue 15).

The reference is the materialised replicate: ``levels.level_values`` on
``x[rows[:, :, None], cols[:, None, :]]`` (what ``correlate`` computed
before), whose Kendall counts are themselves checked against pair-by-pair
counting and scipy in test_coefficients.py / test_kernels_alloc.py.  The
fast path must give the same numbers bit for bit: Kendall statistics are
integer counts, and Pearson/Spearman run the same ``_pearson_row`` on the
same values (ranks are exact half-integers) in the same order.  Each new
kernel is also checked against its NumPy twin, which materialises the
replicates (Kendall: expands the multiset and counts the pairs).
"""

from __future__ import annotations

import numpy as np
import pytest

import metaeval
from metaeval.stats import _kernels, _numpy_kernels
from metaeval.stats import resampling as rs
from metaeval.stats.cellboot import CellBootstrap, counts, slot_layout
from metaeval.stats.levels import LEVELS, level_values

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23",
           "pairwise_accuracy", "acc_eq")
SYSTEM_ONLY = ("pairwise_accuracy", "acc_eq")  # acc_eq elsewhere is materialised (not covered)


def _data(kind, N, M, seed):
    """Adversarial (N, M) scores: heavy ties, NaN and inf, a constant row and
    column, an all-missing column."""
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 6, size=(3, N, M)).mean(0)
    if kind == "continuous":
        x = y + rng.normal(size=(N, M))
    elif kind == "ties":
        x = np.round(y + rng.normal(size=(N, M)), 0)
    else:  # adversarial
        x = np.round(rng.normal(size=(N, M)), 1)
        x[rng.random((N, M)) < 0.1] = np.nan
        y[rng.random((N, M)) < 0.05] = np.inf
        x[0] = 0.5  # constant system
        y[:, 0] = 2.0  # constant human score on input 0
        if M > 2:
            x[:, 1] = np.nan  # input without a valid cell
        x[x == 0.0] = -0.0  # signed zeros tie with zeros
    return x, y


def _reference(x, y, rows, cols, level, method, average, dup, fast=True):
    xb = rs.take_cells(x, rows, cols)
    yb = rs.take_cells(y, rows, cols)
    return level_values(xb, yb, level, method, average=average, detail=False, dup_pairs=dup,
                        fast=fast).value


def _dup(rows, cols, x, y, level, method):
    if method not in ("kendall_23", "acc_23", "pairwise_accuracy", "acc_eq"):
        return None
    return rs.duplicate_pairs(rows, cols, np.isfinite(x) & np.isfinite(y), level)


@pytest.mark.parametrize("kind, N, M", [("adversarial", 6, 9), ("ties", 5, 30), ("continuous", 3, 4),
                                        ("adversarial", 1, 7), ("ties", 8, 1)])
@pytest.mark.parametrize("unit", rs.BOOTSTRAP_UNITS)
def test_replicates_equal_the_materialised_replicates_bit_for_bit(kind, N, M, unit):
    x, y = _data(kind, N, M, seed=N * M)
    rows, cols = rs.bootstrap_indices(np.random.default_rng(7), 12, N, M, unit)
    for level in LEVELS:
        for method in METHODS:
            if method in SYSTEM_ONLY and level != "system":
                assert not CellBootstrap.supports(level, method) or method != "acc_eq"
                continue
            dup = _dup(rows, cols, x, y, level, method)
            for average in ("macro", "micro"):
                with np.errstate(all="ignore"):
                    got = CellBootstrap(x, y, level, method, average).values(rows, cols, dup)
                    ref = _reference(x, y, rows, cols, level, method, average, dup)
                np.testing.assert_array_equal(got, ref, err_msg=f"{level} {method} {average}")


@pytest.mark.parametrize("level", ["input", "item", "global"])
def test_large_groups_use_the_same_counts_as_knight_and_ranked_kernels(level):
    # groups above KNIGHT_MIN_N / RANKED_Y_MIN_N take the O(n log n) kernels
    # on the materialised replicate; the counts must still agree exactly
    N, M = 3, _kernels.KNIGHT_MIN_N + 37
    x, y = _data("ties", N, M, seed=3)
    x[1, :20] = np.nan
    rows, cols = rs.bootstrap_indices(np.random.default_rng(1), 4, N, M, "both")
    for method in ("pearson", "spearman", "kendall_b", "acc_23"):
        dup = _dup(rows, cols, x, y, level, method)
        got = CellBootstrap(x, y, level, method).values(rows, cols, dup)
        np.testing.assert_array_equal(got, _reference(x, y, rows, cols, level, method, "macro", dup))


def _kernel_args(x, y, level, rows, cols):
    cb = CellBootstrap(x, y, level, "spearman")
    N, M = x.shape
    B = rows.shape[0]
    cr, cc = counts(rows, N), counts(cols, M)
    ones = np.ones((B, 1), np.int64)
    wa, wb, gmult = {"input": (cr, ones, cc), "item": (cc, ones, cr), "global": (cr, cc, ones)}[level]
    return cb, wa, wb, gmult


@pytest.mark.parametrize("level", ["input", "item", "global"])
@pytest.mark.parametrize("kind", ["adversarial", "ties"])
def test_boot_kendall_stats_equals_its_numpy_twin(level, kind):
    x, y = _data(kind, 5, 8, seed=11)
    rows, cols = rs.bootstrap_indices(np.random.default_rng(2), 6, 5, 8, "both")
    cb, wa, wb, gmult = _kernel_args(x, y, level, np.asarray(rows), np.asarray(cols))
    args = (wa, cb.ia, wb, cb.ib, gmult, cb.gptr, cb.ycode, cb.xnew, cb.xynew, cb.gk)
    np.testing.assert_array_equal(_kernels.boot_kendall_stats(*args), _numpy_kernels.boot_kendall_stats(*args))


@pytest.mark.parametrize("level", ["input", "item", "global"])
@pytest.mark.parametrize("ranked", [False, True])
def test_boot_pearson_equals_its_numpy_twin(level, ranked):
    N, M = 5, 8
    x, y = _data("adversarial", N, M, seed=5)
    rows, cols = (np.ascontiguousarray(a) for a in rs.bootstrap_indices(np.random.default_rng(4), 6, N, M, "both"))
    cb, wa, wb, gmult = _kernel_args(x, y, level, rows, cols)
    none = np.zeros((0, 0), np.int32)
    args = (cb.xg, cb.yg, cb.xcode if ranked else none, cb.ycodes if ranked else none,
            {"input": 0, "item": 1, "global": 2}[level], M, rows, cols, gmult, wa, cb.ia, wb, cb.ib,
            cb.gptr, cb.ycode, cb.xnew, cb.gk)
    with np.errstate(all="ignore"):
        fast = _kernels.boot_pearson(*args)
        slow = _numpy_kernels.boot_pearson(*args)
    # counts exact; r from two implementations of the corrected two-pass sums
    np.testing.assert_array_equal(fast[..., 1], slow[..., 1])
    np.testing.assert_allclose(fast[..., 0], slow[..., 0], rtol=0, atol=1e-13)
    assert np.array_equal(np.isnan(fast[..., 0]), np.isnan(slow[..., 0]))


def test_boot_row_sums_equals_its_numpy_twin_and_the_sorted_cumulative_sum():
    x, y = _data("adversarial", 6, 9, seed=8)
    rows, cols = rs.bootstrap_indices(np.random.default_rng(3), 5, 6, 9, "both")
    cb = CellBootstrap(x, y, "system", "pearson")
    cc, cr = counts(cols, 9), counts(rows, 6)
    args = (cb.sx, cb.ox, cb.sy, cb.oy, cc, cr)
    fast = _kernels.boot_row_sums(*args)
    np.testing.assert_array_equal(fast, _numpy_kernels.boot_row_sums(*args))
    # the sums levels._matched_mean takes: numpy's sorted cumulative sums
    valid = np.isfinite(x) & np.isfinite(y)
    for h, a in enumerate((x, y)):
        v = np.where(valid, a, 0.0)[:, cols].transpose(1, 0, 2)  # (B, N, M) by original row
        ref = np.cumsum(np.sort(v, -1), -1)[..., -1]
        np.testing.assert_array_equal(np.where(cr > 0, fast[h], 0.0), np.where(cr > 0, ref, 0.0))


def test_signed_zero_sums_as_numpy():
    # a row of -0.0 sums to -0.0 and a mixed row to +0.0, as np.cumsum
    vs = np.array([[-0.0, -0.0, -0.0], [-0.0, 0.0, -0.0]])
    oc = np.array([[0, 1, 2], [0, 1, 2]])
    out = _kernels.boot_row_sums(vs, oc, vs, oc, np.array([[1, 1, 1]]), np.ones((1, 2), np.int64))
    assert np.signbit(out[0, 0, 0]) and not np.signbit(out[0, 0, 1])
    assert np.signbit(np.cumsum(vs[0])[-1]) and not np.signbit(np.cumsum(vs[1])[-1])


def test_slot_layout_sorts_each_group_and_codes_the_human_scores():
    x = np.array([[3.0, 1.0, np.nan], [1.0, 1.0, 2.0]])
    y = np.array([[1.0, 5.0, 1.0], [2.0, 1.0, 2.0]])
    valid = np.isfinite(x) & np.isfinite(y)
    gptr, r, c, ycode, xnew, xynew, gk = slot_layout(x, y, valid, "item")
    assert gptr.tolist() == [0, 2, 5]
    assert list(zip(r, c)) == [(0, 1), (0, 0), (1, 1), (1, 0), (1, 2)]
    assert ycode.tolist() == [1, 0, 0, 1, 1] and gk.tolist() == [2, 2]
    assert xnew.tolist() == [1, 1, 1, 0, 1] and xynew.tolist() == [1, 1, 1, 1, 1]


@pytest.mark.parametrize("level", ["system", "input", "item", "global"])
def test_correlate_bootstrap_is_bit_identical_for_any_budget_and_n_jobs(level):
    # the draws, hence the replicates, do not depend on the chunk of
    # resamples (memory budget) nor on the worker processes
    rng = np.random.default_rng(0)
    h = rng.integers(1, 6, size=(4, 30)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h, "a": h + rng.normal(size=h.shape),
                                       "b": np.round(h + rng.normal(size=h.shape))}, human="h")
    kw = dict(level=level, method=["pearson", "spearman", "kendall_b"], ci="boot-both",
              n_resamples=40, rng=1)
    ref = metaeval.correlate(ds, "h", **kw)
    for budget, jobs in [(1, 1), (3000, 2), (10**9, 1)]:
        got = metaeval.correlate(ds, "h", memory_budget=budget, n_jobs=jobs, **kw)
        for r0, r1 in zip(ref, got):
            np.testing.assert_array_equal(r1.distribution, r0.distribution)


def test_correlate_on_a_dask_cluster_equals_the_local_run():
    # the (metric, level, method) units run as Dask tasks through joblib's
    # dask backend; every unit's draws come from the seed and its names
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster
    from joblib import parallel_config

    rng = np.random.default_rng(2)
    h = rng.integers(1, 6, size=(5, 40)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h, "a": h + rng.normal(size=h.shape),
                                       "b": h + rng.normal(size=h.shape)}, human="h")
    kw = dict(level=["input", "global"], method=["spearman", "kendall_b"], ci="boot-both",
              n_resamples=20, rng=4)
    local = metaeval.correlate(ds, "h", **kw)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl, \
            Client(cl), parallel_config(backend="dask"):
        remote = metaeval.correlate(ds, "h", n_jobs=-1, **kw)
    assert len(local) == len(remote) == 8
    for r0, r1 in zip(local, remote):
        np.testing.assert_array_equal(r1.distribution, r0.distribution)
        assert (r1.ci_low, r1.ci_high) == (r0.ci_low, r0.ci_high)
