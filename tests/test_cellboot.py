"""Bootstrap replicates computed from the draws (stats/cellboot.py, issue 15).

The reference is the materialised replicate: ``levels.level_values`` on
``x[rows[:, :, None], cols[:, None, :]]`` (what ``correlate`` computed
before), whose Kendall counts are themselves checked against pair-by-pair
counting and scipy in test_coefficients.py / test_kernels_alloc.py.  The
fast path must give the same numbers bit for bit where it adds the same
numbers in the same order: the Kendall statistics (integer counts) and the
system level (correctly rounded row means, which are unique).  Pearson and Spearman at the other
levels sum over the sorted slots with weights instead of over the
materialised cells, so they agree up to rounding (1e-12 here); Spearman's
sums are exact integers, checked against exact rational arithmetic
(``fractions``) below.  Each kernel is also checked against its NumPy
twin, which materialises the replicates (expands the multiset).
"""

from __future__ import annotations

import numpy as np
import pytest

import metaeval
from metaeval.stats import _kernels, _numpy_kernels, exact
from metaeval.stats import resampling as rs
from metaeval.stats.cellboot import CellBootstrap, counts, slot_layout
from metaeval.stats.levels import LEVELS, level_values

try:  # tests/ as a package or as a rootdir on sys.path
    from . import boot_reference as br
except ImportError:  # pragma: no cover - depends on how pytest imports tests
    import boot_reference as br

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
def test_replicates_equal_the_materialised_replicates(kind, N, M, unit):
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
                br.assert_as_materialised(got, ref, level, method, f"{level} {method} {average}")




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
        ref = _reference(x, y, rows, cols, level, method, "macro", dup)
        br.assert_as_materialised(got, ref, level, method)


def _kernel_args(x, y, level, rows, cols, method="spearman"):
    cb = CellBootstrap(x, y, level, method)
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
@pytest.mark.parametrize("human", ["few-levels", "many-levels"])
@pytest.mark.parametrize("shape", [(3, 31), (33, 40), (40, 33)])
def test_boot_kendall_stats_paths_equal_the_numpy_twin(level, human, shape):
    """The three ways of ``boot_kendall_stats`` to count the discordant weight (pairs of slots
    for groups of <= 32 slots, a scan of the level counts for <= 16 human levels, the Fenwick
    tree beyond) against the NumPy twin, which expands each replicate: groups on either side of
    32 slots, human scores with few levels (ties) or one level per cell, missing cells."""
    N, M = shape
    x, y = _data("adversarial" if human == "few-levels" else "ties", N, M, seed=N + M)
    if human == "many-levels":
        y = np.random.default_rng(N).normal(size=(N, M))
        y[0, :3] = y[1, :3]  # a few ties
    rows, cols = rs.bootstrap_indices(np.random.default_rng(5), 7, N, M, "both")
    cb, wa, wb, gmult = _kernel_args(x, y, level, np.asarray(rows), np.asarray(cols))
    args = (wa, cb.ia, wb, cb.ib, gmult, cb.gptr, cb.ycode, cb.xnew, cb.xynew, cb.gk)
    np.testing.assert_array_equal(_kernels.boot_kendall_stats(*args),
                                  _numpy_kernels.boot_kendall_stats(*args))


@pytest.mark.parametrize("level", ["input", "item", "global"])
@pytest.mark.parametrize("ranked", [False, True])
@pytest.mark.parametrize("kind", ["adversarial", "ties", "continuous"])
def test_boot_pearson_equals_its_numpy_twin(level, ranked, kind):
    N, M = 5, 8
    x, y = _data(kind, N, M, seed=5)
    rows, cols = (np.ascontiguousarray(a) for a in rs.bootstrap_indices(np.random.default_rng(4), 6, N, M, "both"))
    cb, wa, wb, gmult = _kernel_args(x, y, level, rows, cols, "spearman" if ranked else "pearson")
    args = (wa, cb.ia, wb, cb.ib, gmult, cb.gptr, cb.xs, cb.ys, cb.ycode, cb.xnew, cb.gk, ranked)
    with np.errstate(all="ignore"):
        fast = _kernels.boot_pearson(*args)
        slow = _numpy_kernels.boot_pearson(*args)
    # counts exact; r from the weighted slots (fast) and the expanded multiset (slow)
    np.testing.assert_array_equal(fast[..., 1], slow[..., 1])
    assert np.array_equal(np.isnan(fast[..., 0]), np.isnan(slow[..., 0]))
    np.testing.assert_allclose(fast[..., 0], slow[..., 0], rtol=0, atol=1e-13)


def _exact_spearman(xe, ye):
    """Spearman's rho of the expanded values in exact rational arithmetic
    (average ranks as Fractions), rounded once; None when undefined."""
    from fractions import Fraction

    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [None] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for t in range(i, j + 1):
                r[order[t]] = Fraction(i + j + 2, 2)
            i = j + 1
        return r

    n = len(xe)
    if n < 2:
        return None
    rx, ry = ranks(xe), ranks(ye)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    # rho^2 exactly, then the root of a correctly rounded float: within 2 ulps
    return float(sxy / abs(sxy)) * float(sxy * sxy / (sxx * syy)) ** 0.5 if sxy else 0.0


@pytest.mark.parametrize("level", ["input", "item", "global"])
@pytest.mark.parametrize("seed", range(4))
def test_spearman_replicates_are_exact_until_the_last_division(level, seed):
    # against exact rational arithmetic on the expanded multiset: the
    # fast path's integer sums leave only the final root and division
    N, M = 4, 7
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 4, size=(N, M)).astype(float)
    x = np.round(y + rng.normal(size=(N, M)), 0)
    x[0, 0] = np.nan
    rows, cols = rs.bootstrap_indices(rng, 5, N, M, "both")
    got = CellBootstrap(x, y, level, "spearman").values(rows, cols)
    group, w = CellBootstrap(x, y, level, "spearman").group_weights(rows, cols)
    valid = np.isfinite(x) & np.isfinite(y)
    for b in range(rows.shape[0]):
        xb = x[rows[b][:, None], cols[b][None, :]]
        yb = y[rows[b][:, None], cols[b][None, :]]
        vb = valid[rows[b][:, None], cols[b][None, :]]
        groups = {"input": [(slice(None), j) for j in range(M)],
                  "item": [(i, slice(None)) for i in range(N)], "global": [(slice(None), slice(None))]}[level]
        exact = []
        for gi in groups:
            keep = vb[gi].ravel()
            e = _exact_spearman(list(xb[gi].ravel()[keep]), list(yb[gi].ravel()[keep]))
            exact.append(np.nan if e is None else e)
        # the replicate's groups are in drawn order; compare group by group
        og = {"input": cols[b], "item": rows[b], "global": [0]}[level]
        for gpos, g0 in enumerate(og):
            v = group[b, gpos]
            if np.isnan(exact[gpos]):
                assert np.isnan(v)
            else:
                assert abs(v - exact[gpos]) <= 4 * np.spacing(abs(exact[gpos]) or 1.0), (level, b, g0)
    assert got.shape == (rows.shape[0],)


def test_spearman_of_groups_beyond_the_exact_range_is_materialised():
    from metaeval.stats.cellboot import SPEARMAN_EXACT_MAX

    assert CellBootstrap.supports("global", "spearman", (1000, SPEARMAN_EXACT_MAX // 1000))
    assert not CellBootstrap.supports("global", "spearman", (1000, SPEARMAN_EXACT_MAX // 1000 + 1))
    assert CellBootstrap.supports("input", "spearman", (1000, SPEARMAN_EXACT_MAX))
    assert CellBootstrap.supports("global", "pearson", (10**4, 10**4))


def _fraction_row_mean(values, mult):
    """Independent reference: the exact mean of the floats ``values`` repeated
    ``mult`` times (fractions.Fraction), rounded once (Fraction -> float is
    correctly rounded)."""
    from fractions import Fraction

    pairs = [(Fraction(float(v)), int(m)) for v, m in zip(values, mult) if m]
    n = sum(m for _, m in pairs)
    return float(sum(v * m for v, m in pairs) / n) if n else np.nan


def _row_means_args(cb, cc, cr):
    cnt = np.rint(cc.astype(float) @ cb.valid.astype(float).T).astype(np.int64)
    return (cb.sx, cb.cx, cb.sy, cb.cy, cb.grid_all, cc, cr, cnt, exact.GRID)


def test_boot_row_means_equal_their_numpy_twin_and_the_materialised_means():
    x, y = _data("adversarial", 6, 9, seed=8)
    rows, cols = rs.bootstrap_indices(np.random.default_rng(3), 5, 6, 9, "both")
    cb = CellBootstrap(x, y, "system", "pearson")
    cc, cr = counts(cols, 9), counts(rows, 6)
    args = _row_means_args(cb, cc, cr)
    fast = _kernels.boot_row_means(*args)
    np.testing.assert_array_equal(fast, _numpy_kernels.boot_row_means(*args))
    # the means levels.arrange takes on the materialised replicate, row by original row
    valid = np.isfinite(x) & np.isfinite(y)
    for h, a in enumerate((x, y)):
        xb = rs.take_cells(np.where(valid, a, np.nan), rows, cols)
        ref = exact.means(xb, np.isfinite(xb))
        for b in range(rows.shape[0]):
            for pos, r in enumerate(rows[b]):
                assert fast[h, b, r] == ref[b, pos] or np.isnan(ref[b, pos]) and np.isnan(fast[h, b, r])


@pytest.mark.parametrize("used", [[1, 1, 1, 1, 1], [0, 1, 1, 0, 1], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
def test_boot_row_means_with_large_multiplicities_are_exact(used):
    # multiplicities 0..7, values over seven decades (off the grid): each
    # replicate row's mean is the exact mean of its multiset, rounded once
    rng = np.random.default_rng(12)
    x = rng.normal(size=(5, 8)) * 10.0 ** rng.integers(-3, 4, size=(5, 8))
    cb = CellBootstrap(x, np.round(x), "system", "pearson")
    cc = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [7, 0, 0, 1, 0, 0, 0, 0]], np.int64)
    cr = np.array([used, used], np.int64)
    args = _row_means_args(cb, cc, cr)
    fast = _kernels.boot_row_means(*args)
    np.testing.assert_array_equal(fast, _numpy_kernels.boot_row_means(*args))
    for b in range(2):
        for r in range(5):
            want = _fraction_row_mean(x[r], cc[b]) if used[r] else np.nan
            np.testing.assert_array_equal(fast[0, b, r], want)


def test_boot_row_means_decide_the_grid_per_replicate():
    # a row of thirds with one value off the grid: replicates that do not
    # draw that column are on the grid (their rational means), the others
    # exact means of the floats; as the materialised replicate decides
    x = np.array([[1 / 3, 2 / 3, 1.0, 0.1234567], [0.5, 0.5, 1.0, 1.0]])
    y = np.ones_like(x)
    cb = CellBootstrap(x, y, "system", "pearson")
    assert cb.grid_all.tolist() == [0, 1]
    cc = np.array([[1, 1, 1, 0], [0, 1, 2, 1], [2, 1, 0, 1]], np.int64)
    cr = np.ones((3, 2), np.int64)
    args = _row_means_args(cb, cc, cr)
    fast = _kernels.boot_row_means(*args)
    np.testing.assert_array_equal(fast, _numpy_kernels.boot_row_means(*args))
    from fractions import Fraction

    # replicate 0 on the grid: (1/3 + 2/3 + 1) / 3 = 2/3 and (1/2 + 1/2 + 1) / 3 = 2/3, equal
    assert fast[0, 0, 0] == fast[0, 0, 1] == float(Fraction(2, 3))
    # replicate 1 off the grid: the exact means of the given floats
    assert fast[0, 1, 0] == _fraction_row_mean(x[0], cc[1])
    assert fast[0, 1, 1] == _fraction_row_mean(x[1], cc[1])


def test_negative_zeros_average_to_zero():
    # a row of -0.0 and a mixed row: exact sums are 0, the mean +0.0 in both
    vs = np.array([[-0.0, -0.0, -0.0], [-0.0, 0.0, -0.0]])
    cb = CellBootstrap(vs, vs, "system", "pearson")
    args = _row_means_args(cb, np.array([[1, 1, 1]]), np.ones((1, 2), np.int64))
    out = _kernels.boot_row_means(*args)
    assert (out == 0.0).all()
    np.testing.assert_array_equal(out, _numpy_kernels.boot_row_means(*args))


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


def _slot_layout_reference(x, y, valid, level):
    """The slot layout by two lexsorts (cellboot.slot_layout's first version)."""
    N, M = x.shape
    r, c = np.nonzero(valid)
    g, G = {"input": (c, M), "item": (r, N), "global": (np.zeros(r.size, np.int64), 1)}[level]
    xs, ys = x[r, c], y[r, c]
    order = np.lexsort((ys, xs, g))
    r, c, g, xs, ys = r[order], c[order], g[order], xs[order], ys[order]
    S = r.size
    gptr = np.zeros(G + 1, np.int64)
    np.cumsum(np.bincount(g, minlength=G), out=gptr[1:])
    first = np.ones(S, bool)
    first[1:] = g[1:] != g[:-1]
    xnew = first.copy()
    xnew[1:] |= xs[1:] != xs[:-1]
    xynew = xnew.copy()
    xynew[1:] |= ys[1:] != ys[:-1]
    o2 = np.lexsort((ys, g))
    g2, y2 = g[o2], ys[o2]
    new2 = np.ones(S, bool)
    new2[1:] = (g2[1:] != g2[:-1]) | (y2[1:] != y2[:-1])
    code = np.cumsum(new2) - 1
    if S:
        code -= code[gptr[g2]]
    ycode = np.empty(S, np.int64)
    ycode[o2] = code
    gk = np.zeros(G, np.int64)
    np.maximum.at(gk, g, ycode + 1)
    return gptr, r, c, ycode, xnew.astype(np.int8), xynew.astype(np.int8), gk


@pytest.mark.parametrize("kind", ["adversarial", "ties", "continuous", "continuous-human"])
@pytest.mark.parametrize("shape", [(6, 9), (1, 7), (8, 1), (3, 70000)])
def test_slot_layout_equals_two_lexsorts(kind, shape):
    # the faster sorts (unstable sort without metric ties, 16-bit radix sort
    # of the groups, a table of human codes) give the lexsort order exactly;
    # 70,000 inputs exceed the 16-bit group sort, continuous human scores the table
    N, M = shape
    if kind == "continuous-human":
        rng = np.random.default_rng(1)
        x, y = rng.normal(size=(N, M)), rng.normal(size=(N, M))
    else:
        x, y = _data(kind, N, M, seed=N + M)
    valid = np.isfinite(x) & np.isfinite(y)
    for level in ("input", "item", "global"):
        got = slot_layout(x, y, valid, level)
        want = _slot_layout_reference(x, y, valid, level)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=f"{kind} {shape} {level}")


@pytest.mark.parametrize("unit", rs.BOOTSTRAP_UNITS)
@pytest.mark.parametrize("budget", [1, 5000, None])
def test_bootstrap_chunks_of_a_block_are_the_whole_runs_draws(unit, budget):
    # a block restarts from the generator's state and skips the earlier
    # resamples' column draws: the same indices as the whole run
    N, M, B = 4, 7, 23
    whole = {}
    for sl, rows, cols in rs.bootstrap_chunks(np.random.default_rng(5), B, N, M, unit):
        for b in range(sl.start, sl.stop):
            whole[b] = (rows[b - sl.start].copy(), cols[b - sl.start].copy())
    for block in (slice(0, 23), slice(0, 1), slice(5, 12), slice(22, 23), slice(7, 7)):
        seen = []
        for sl, rows, cols in rs.bootstrap_chunks(np.random.default_rng(5), B, N, M, unit,
                                                  budget=budget, block=block):
            for b in range(sl.start, sl.stop):
                np.testing.assert_array_equal(rows[b - sl.start], whole[b][0])
                np.testing.assert_array_equal(cols[b - sl.start], whole[b][1])
                seen.append(b)
        assert seen == list(range(block.start, block.stop))


def test_boot_blocks_split_only_when_the_intervals_do_not_fill_the_workers():
    from metaeval.correlation import MIN_BLOCK, boot_blocks

    assert boot_blocks(60, 1000, 1) == 1  # one worker: never split
    assert boot_blocks(60, 1000, 2) == 1  # 60 intervals keep 2 workers busy
    assert boot_blocks(1, 1000, 2) == 4  # two tasks per worker
    assert boot_blocks(1, 1000, 16) == 1000 // MIN_BLOCK  # blocks of at least MIN_BLOCK
    assert boot_blocks(3, 40, 8) == 1  # too few resamples to split


@pytest.mark.parametrize("ci", ["boot-both", "boot-systems", "boot-inputs"])
def test_correlate_split_into_blocks_equals_the_unsplit_run(ci, monkeypatch):
    # n_jobs=2 with one or two intervals splits each bootstrap into blocks
    # (one task each); the permutation p-value draws from the same generator
    # first, so the blocks must start from the state after it
    import metaeval.correlation as mc

    rng = np.random.default_rng(3)
    h = rng.integers(1, 6, size=(6, 40)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h, "a": h + rng.normal(size=h.shape)}, human="h")
    for level, pvalue in (("global", "permutation"), ("input", "none"), ("system", "permutation")):
        kw = dict(level=level, method="kendall_b", ci=ci, pvalue=pvalue, n_resamples=230, rng=9)
        ref = metaeval.correlate(ds, "h", **kw)
        calls = []
        real = mc._run_in_blocks
        monkeypatch.setattr(mc, "_run_in_blocks", lambda *a: calls.append(a[4]) or real(*a))
        ticks = []
        got = metaeval.correlate(ds, "h", n_jobs=2, memory_budget=20_000, progress=ticks.append, **kw)
        monkeypatch.undo()
        assert calls == [4] and sum(ticks) == 1
        r0, r1 = ref[0], got[0]
        np.testing.assert_array_equal(r1.distribution, r0.distribution)
        np.testing.assert_array_equal(r1.null_distribution, r0.null_distribution)
        assert (r1.ci_low, r1.ci_high, r1.pvalue, r1.n_resamples_nan, r1.signature) == \
            (r0.ci_low, r0.ci_high, r0.pvalue, r0.n_resamples_nan, r0.signature)


def test_correlate_blocks_on_a_dask_cluster_equal_the_local_run():
    # one interval on a 2-thread Dask cluster: its resamples run as 4 tasks
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster
    from joblib import parallel_config

    import metaeval.correlation as mc

    rng = np.random.default_rng(4)
    h = rng.integers(1, 6, size=(5, 40)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h, "a": h + rng.normal(size=h.shape)}, human="h")
    kw = dict(level="global", method="spearman", ci="boot-both", n_resamples=200, rng=4)
    local = metaeval.correlate(ds, "h", **kw)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl, \
            Client(cl), parallel_config(backend="dask"):
        assert mc.boot_blocks(1, 200, mc._workers(-1)) == 4
        remote = metaeval.correlate(ds, "h", n_jobs=-1, **kw)
    np.testing.assert_array_equal(remote[0].distribution, local[0].distribution)
    assert (remote[0].ci_low, remote[0].ci_high) == (local[0].ci_low, local[0].ci_high)


def test_the_methods_of_one_level_share_the_sorted_layout(monkeypatch):
    # correlate's units for one (metric, level) sort the same cells: the
    # layout is computed once per data (keyed by the values), and the
    # replicates are those of a fresh layout
    import metaeval.stats.cellboot as cbm

    monkeypatch.setattr(cbm, "_LAYOUTS_MIN_CELLS", 0)
    monkeypatch.setattr(cbm, "_LAYOUTS", type(cbm._LAYOUTS)())
    x, y = _data("ties", 5, 8, seed=1)
    rows, cols = rs.bootstrap_indices(np.random.default_rng(0), 7, 5, 8, "both")
    for level in ("system", "input", "global"):
        a = CellBootstrap(x, y, level, "kendall_b")
        b = CellBootstrap(x.copy(), y.copy(), level, "spearman")  # equal values, other arrays
        c = CellBootstrap(x + 1.0, y, level, "kendall_b")  # other values
        if level == "system":
            assert a.sx is b.sx and a.sx is not c.sx
        else:
            assert a.ycode is b.ycode and a.ycode is not c.ycode
        monkeypatch.setattr(cbm, "_LAYOUTS_MIN_CELLS", 10**9)  # no sharing: fresh layouts
        fresh = CellBootstrap(x, y, level, "spearman").values(rows, cols)
        monkeypatch.setattr(cbm, "_LAYOUTS_MIN_CELLS", 0)
        np.testing.assert_array_equal(b.values(rows, cols), fresh)
    assert len(cbm._LAYOUTS) == cbm._LAYOUTS_KEEP


def test_correlate_forgets_the_shared_layouts_when_it_returns(monkeypatch):
    import metaeval.stats.cellboot as cbm

    monkeypatch.setattr(cbm, "_LAYOUTS_MIN_CELLS", 0)
    monkeypatch.setattr(cbm, "_LAYOUTS", type(cbm._LAYOUTS)())
    seen = []
    real = cbm._shared
    monkeypatch.setattr(cbm, "_shared", lambda *a: seen.append(a[0]) or real(*a))
    rng = np.random.default_rng(1)
    h = rng.integers(1, 6, size=(4, 30)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h, "a": h + rng.normal(size=h.shape)}, human="h")
    metaeval.correlate(ds, "h", level=["system", "input"], method=["pearson", "kendall_b"],
                       n_resamples=20, rng=0)
    assert seen.count("input") == 2 and seen.count("system") == 2  # shared while running
    assert len(cbm._LAYOUTS) == 0  # and forgotten after


@pytest.mark.parametrize("level", ["input", "item", "global"])
def test_pearson_replicates_scale_by_their_own_drawn_values(level):
    # a group spanning more than the safe range (an overflow sentinel 1e300,
    # or tiny values beside an ordinary one): a replicate that does not draw
    # the extreme value is scaled by its own largest value, as the
    # materialised replicate's Pearson routine does (found in review: scaling
    # by the whole group's largest value underflowed the squares to NaN)
    y = np.array([[1.0, 2.0], [2.0, 1.5], [3.0, 3.5], [4.0, 4.0], [4.5, 5.0]])
    rows = np.array([[1, 2, 3, 4, 4], [0, 1, 2, 3, 4], [1, 1, 2, 3, 4]])
    cols = np.array([[0, 1], [0, 0], [1, 1]])
    for x in (np.array([[1e300, 1.0], [1.0, 2.0], [2.0, 2.5], [3.0, 3.0], [5.0, 6.0]]),
              np.array([[1.0, 2e-200], [1e-200, 1e-200], [2e-200, 4e-200], [3e-200, 3e-200],
                        [5e-200, 6e-200]])):
        got = CellBootstrap(x, y, level, "pearson").values(rows, cols)
        ref = _reference(x, y, rows, cols, level, "pearson", "macro", None)
        # (at item level, a replicate drawing one column twice is constant: NaN both ways)
        assert np.array_equal(np.isnan(got), np.isnan(ref)) and np.isfinite(ref).any()
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_compare_clears_the_shared_layouts(monkeypatch):
    import metaeval.stats.cellboot as cbm

    monkeypatch.setattr(cbm, "_LAYOUTS_MIN_CELLS", 0)
    monkeypatch.setattr(cbm, "_LAYOUTS", type(cbm._LAYOUTS)())
    rng = np.random.default_rng(2)
    h = rng.integers(1, 6, size=(5, 20)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h, "a": h + rng.normal(size=h.shape),
                                       "b": h + rng.normal(size=h.shape),
                                       "c": h + rng.normal(size=h.shape)}, human="h")
    metaeval.compare(ds, "h", "a", "b", level="input", test="boot-both", n_resamples=20, rng=0)
    assert len(cbm._LAYOUTS) == 0
    metaeval.compare_all(ds, "h", level="input", test="boot-both", n_resamples=20, rng=0)
    assert len(cbm._LAYOUTS) == 0
