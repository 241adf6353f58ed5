"""compare's resampling without materialised resamples (issue 15).

Perm-Both (``stats.pairtest.perm_both_null``: each group sorted once, the
halves never built) and the paired bootstrap (``stats.pairtest.boot_null``:
replicates from the draws, ``stats.cellboot``) must give the numbers of the
previous path bit for bit (the bootstrap's Pearson/Spearman outside the
system level: up to rounding, as in test_cellboot.py).  The reference here *is* the previous path, kept
in this file: the halves built with ``np.where`` from
``resampling.swap_mask_chunks`` and the replicates materialised with
``resampling.take_cells``, both scored by ``pairtest.pair_delta`` (the
generic level code, itself checked against slow references and scipy in
test_compare.py and test_coefficients.py).  The new kernel is also checked
against its NumPy twin.
"""

from __future__ import annotations

import numpy as np
import pytest

import metaeval
from metaeval.stats import _kernels as K
from metaeval.stats import _numpy_kernels as NK
from metaeval.stats import resampling as rs
from metaeval.stats.pairtest import (
    PairOptions,
    boot_null,
    common_cells,
    fast_perm_both,
    pair_delta,
    perm_both_null,
    zscore,
)
from metaeval.stats.permboth import PAIR_METHODS, PairLayout

try:  # tests/ as a package or as a rootdir on sys.path
    from . import boot_reference as br
except ImportError:  # pragma: no cover - depends on how pytest imports tests
    import boot_reference as br

LEVELS = ("system", "input", "item", "global")
KINDS = ("continuous", "ties", "nan", "constant", "small")


def _case(kind, N, M, seed=0):
    g = np.random.default_rng(seed)
    if kind == "continuous":
        xa, xb, z = g.normal(size=(3, N, M))
    elif kind == "ties":  # few levels: ties within and across metrics and in the human
        xa = g.integers(0, 3, (N, M)).astype(float)
        xb = g.integers(0, 3, (N, M)).astype(float)
        z = g.integers(1, 6, (3, N, M)).mean(0)
    elif kind == "nan":
        xa, xb, z = g.normal(size=(3, N, M))
        xa[g.random((N, M)) < 0.2] = np.nan
        z[g.random((N, M)) < 0.2] = np.nan
        z[0] = np.nan  # a system without cells
        z[:, 1] = np.nan  # an input without cells
        xb[xb > 1.0] = 0.0
        xb[xb < -1.0] = -0.0  # signed zeros tie
    elif kind == "constant":
        xa = g.integers(0, 2, (N, M)).astype(float)
        xb = xa.copy()
        xb[:, 0] = 1.0
        z = g.normal(size=(N, M))
        z[:, 2] = 3.0  # a constant human column
        z[1] = 0.5  # a constant human row
        xa[2] = 7.0
        xb[2] = 7.0  # a row constant in both metrics
    else:  # "small": groups of 0, 1 and 2 valid cells
        xa, xb, z = g.normal(size=(3, N, M))
        z[:, :] = np.nan
        z[0, 0] = 1.0
        z[1, 0] = 2.0
        z[0, 1] = 0.3
        z[2, 2] = 0.3
    xa, xb, z, _ = common_cells(xa, xb, z)
    return xa, xb, z


def _previous_perm(seed, xa, xb, z, opt):
    N, M = z.shape
    gen = np.random.default_rng(seed)
    za, zb = zscore(xa), zscore(xb)
    null = np.empty(opt.n_resamples)
    for sl, w in rs.swap_mask_chunks(gen, opt.n_resamples, N, M, "both", opt.budget):
        null[sl] = pair_delta(np.where(w, zb, za), np.where(w, za, zb), z, opt)
    return null


def _previous_boot(seed, xa, xb, z, opt):
    from metaeval.stats.levels import DUP_VARIANTS

    N, M = z.shape
    gen = np.random.default_rng(seed)
    valid = np.isfinite(z)
    dup_needed = opt.method in DUP_VARIANTS or opt.method == "acc_eq"
    out = np.empty(opt.n_resamples)
    for sl, rows, cols in rs.bootstrap_chunks(gen, opt.n_resamples, N, M, opt.test[5:],
                                              opt.budget):
        dup = rs.duplicate_pairs(rows, cols, valid, opt.level) if dup_needed else None
        out[sl] = pair_delta(rs.take_cells(xa, rows, cols), rs.take_cells(xb, rows, cols),
                             rs.take_cells(z, rows, cols), opt, dup)
    return out


def _opt(level, method, test, average="macro", B=37, budget=None):
    return PairOptions(level=level, method=method, test=test, average=average, n_resamples=B,
                       budget=budget)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("average", ["macro", "micro"])
def test_perm_both_equals_the_materialised_halves_bit_for_bit(kind, level, average):
    xa, xb, z = _case(kind, 6, 9, seed=len(kind))
    for method in PAIR_METHODS:
        opt = _opt(level, method, "perm-both", average)
        assert fast_perm_both(opt)
        got = perm_both_null(np.random.default_rng(4), xa, xb, z, opt)
        want = _previous_perm(4, xa, xb, z, opt)
        np.testing.assert_array_equal(got, want, err_msg=f"{kind}/{level}/{method}")


@pytest.mark.parametrize("level", ["input", "global"])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b"])
def test_perm_both_large_groups_use_the_same_numbers(level, method):
    # groups above the kernels' switches (Knight's algorithm from 400 items,
    # the ranked-human kernel from 200, the sorted ranks from 25)
    xa, xb, z = _case("ties", 420, 3, seed=1)
    xa = xa + np.random.default_rng(2).normal(size=xa.shape).round(1)
    opt = _opt(level, method, "perm-both", B=6)
    got = perm_both_null(np.random.default_rng(8), xa, xb, z, opt)
    np.testing.assert_array_equal(got, _previous_perm(8, xa, xb, z, opt))


@pytest.mark.parametrize("budget", [1, 300, 1000, 10**9])
def test_perm_both_does_not_depend_on_the_budget(budget):
    # N*M = 45 cells: chunks of 1 resample start off a byte boundary
    xa, xb, z = _case("ties", 5, 9, seed=3)
    for level in LEVELS:
        opt = _opt(level, "kendall_b", "perm-both", budget=budget)
        got = perm_both_null(np.random.default_rng(1), xa, xb, z, opt)
        np.testing.assert_array_equal(got, _previous_perm(1, xa, xb, z, _opt(level, "kendall_b",
                                                                             "perm-both")))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("test", ["boot-systems", "boot-inputs", "boot-both"])
def test_bootstrap_equals_the_materialised_replicates(kind, test):
    # bit for bit, except Pearson/Spearman outside the system level: their
    # replicates are sums over the weighted sorted cells (stats/cellboot.py),
    # equal to the materialised replicates' up to rounding
    xa, xb, z = _case(kind, 6, 9, seed=len(kind) + 1)
    for level in LEVELS:
        methods = list(PAIR_METHODS) + ["acc_eq"] + (["pairwise_accuracy"] if level == "system" else [])
        for method in methods:
            for average in ("macro", "micro"):
                opt = _opt(level, method, test, average, B=23)
                got = boot_null(np.random.default_rng(6), xa, xb, z, opt)
                want = _previous_boot(6, xa, xb, z, opt)
                br.assert_as_materialised(got, want, level, method, f"{level}/{method}/{average}")


@pytest.mark.parametrize("budget", [1, 2000, 10**9])
def test_bootstrap_does_not_depend_on_the_budget(budget):
    xa, xb, z = _case("nan", 5, 8, seed=2)
    for level in LEVELS:
        opt = _opt(level, "kendall_23", "boot-both", budget=budget)
        got = boot_null(np.random.default_rng(3), xa, xb, z, opt)
        np.testing.assert_array_equal(got, _previous_boot(3, xa, xb, z, _opt(level, "kendall_23",
                                                                              "boot-both")))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", ["input", "item", "global"])
def test_swap_pair_values_equals_its_numpy_twin(kind, level):
    xa, xb, z = _case(kind, 5, 7, seed=9)
    za, zb = zscore(xa), zscore(xb)
    lay = PairLayout(za, zb, z, level)
    B = 11
    bits = rs.fair_bytes(np.random.default_rng(0), B * z.size)
    lay.pair_values(bits, 1, "pearson")  # makes the per-entry arrays
    for which, hy in ((0, lay.hval), (1, lay.havg), (2, lay.hval)):
        args = (bits, B, lay.ncell, lay.za, lay.zb, lay.gptr, lay.cell, hy, lay.eptr, lay.ecell,
                lay.ecode, lay.eslot, lay.esrc, lay.enew, lay.gk, lay.hn2, which)
        fast, slow = K.swap_pair_values(*args), NK.swap_pair_values(*args)
        if which == 2:
            np.testing.assert_array_equal(fast, slow)
        else:
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
            assert np.array_equal(np.isnan(fast), np.isnan(slow))


@pytest.mark.parametrize("human_levels", [3, 12, 16, 17, None])
@pytest.mark.parametrize("level", ["input", "item", "global"])
def test_swap_pair_values_kendall_scan_and_fenwick_walks_equal_the_numpy_twin(human_levels, level):
    """The Kendall statistics of both halves counted by a scan of the level counts (groups of
    at most 16 human levels) and by the Fenwick trees (more), against the NumPy twin that
    materialises the halves: metrics with ties within and across the two metrics (blocks of
    equal values), missing cells, 3 to 17 human levels or one per cell."""
    g = np.random.default_rng(human_levels or 0)
    N, M = 20, 18
    xa = np.round(g.normal(size=(N, M)), 1)
    xb = np.where(g.random((N, M)) < 0.3, xa, np.round(g.normal(size=(N, M)), 1))
    z = g.normal(size=(N, M)) if human_levels is None else g.integers(0, human_levels, (N, M)) * 0.5
    xa[g.random((N, M)) < 0.1] = np.nan
    ok = np.isfinite(xa) & np.isfinite(xb) & np.isfinite(z)
    xa, xb, z = (np.where(ok, a, np.nan) for a in (xa, xb, z))
    za, zb = zscore(xa), zscore(xb)
    lay = PairLayout(za, zb, z, level)
    B = 9
    bits = rs.fair_bytes(np.random.default_rng(1), B * z.size)
    lay.pair_values(bits, 1, "kendall_b")  # makes the per-entry arrays
    args = (bits, B, lay.ncell, lay.za, lay.zb, lay.gptr, lay.cell, lay.hval, lay.eptr, lay.ecell,
            lay.ecode, lay.eslot, lay.esrc, lay.enew, lay.gk, lay.hn2, 2)
    np.testing.assert_array_equal(K.swap_pair_values(*args), NK.swap_pair_values(*args))


def test_coin_stream_packed_chunks_on_byte_boundaries_equal_packbits():
    B, n = 24, 16  # every chunk starts on a byte
    bits = np.unpackbits(rs.fair_bytes(np.random.default_rng(2), B * n))[: B * n].reshape(B, n)
    coins = rs.CoinStream(np.random.default_rng(2), B, n)
    for sl in (slice(0, 1), slice(1, 4), slice(4, 21), slice(21, 24)):
        np.testing.assert_array_equal(coins.packed(sl), np.packbits(bits[sl].ravel()))
    B, n = 9, 12  # 96 bits per 8 resamples: aligned and unaligned starts alternate
    bits = np.unpackbits(rs.fair_bytes(np.random.default_rng(5), B * n))[: B * n].reshape(B, n)
    coins = rs.CoinStream(np.random.default_rng(5), B, n)
    for sl in (slice(0, 1), slice(1, 2), slice(2, 5), slice(5, 9)):
        np.testing.assert_array_equal(coins.packed(sl), np.packbits(bits[sl].ravel()))


@pytest.mark.parametrize("test", ["perm-both", "boot-both"])
def test_compare_and_compare_all_are_identical_for_budgets_and_workers(test):
    ds = metaeval.load_dataset("summeval")
    metrics = ["BLEU", "ROUGE.L", "BertScore_f1"]
    for level in LEVELS:
        ref = metaeval.compare(ds, "coherence", "BLEU", "ROUGE.L", level=level, test=test,
                               method="kendall_b", n_resamples=30, rng=2)
        for budget in (1, 5000, 2**20):
            c = metaeval.compare(ds, "coherence", "BLEU", "ROUGE.L", level=level, test=test,
                                 method="kendall_b", n_resamples=30, rng=2, memory_budget=budget)
            np.testing.assert_array_equal(c.null_distribution, ref.null_distribution)
            assert c.pvalue == ref.pvalue
    kw = dict(level="input", method="spearman", test=test, n_resamples=25, rng=3)
    one = metaeval.compare_all(ds, "coherence", metrics=metrics, n_jobs=1, **kw)
    two = metaeval.compare_all(ds, "coherence", metrics=metrics, n_jobs=2, memory_budget=3000,
                               **kw)
    np.testing.assert_array_equal(one.pvalues, two.pvalues)
