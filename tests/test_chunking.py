"""Resampling loops in chunks sized from a memory budget (issue 15.1).

The oracle is the unchunked computation: with a budget that fits every
resample at once, each loop is the one-step draw it was before; numbers must
be bit-for-bit equal for any budget (down to one resample per chunk) and any
``n_jobs``.  The draws themselves are checked against numpy's one-step draws
(``bootstrap_indices``, ``swap_masks``, ``fair_bytes``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metaeval import (
    Dataset,
    ParameterError,
    compare,
    compare_all,
    correlate,
    discriminative_power,
    ranking_consistency,
)
from metaeval.stats import resampling as rs

BIG = "1GB"
BUDGETS = (1, 96 * 30 * 7, BIG)  # one resample per chunk, 7 resamples, all at once


def data(seed=0, N=6, M=5):
    g = np.random.default_rng(seed)
    h = np.round(g.normal(size=(N, M)), 1)
    a = h + g.normal(size=(N, M))
    b = np.round(h + 2 * g.normal(size=(N, M)))
    c = g.normal(size=(N, M))
    a[1, 2] = np.nan
    return Dataset.from_arrays({"h": h, "a": a, "b": b, "c": c}, human="h")


@pytest.mark.parametrize("unit", rs.BOOTSTRAP_UNITS)
@pytest.mark.parametrize("budget", [1, 96 * 20 * 3, BIG])
def test_bootstrap_chunks_are_the_one_step_draw(unit, budget):
    rows, cols = rs.bootstrap_indices(np.random.default_rng(4), 23, 4, 5, unit)
    got = list(rs.bootstrap_chunks(np.random.default_rng(4), 23, 4, 5, unit, budget))
    assert got[0][0].start == 0 and got[-1][0].stop == 23
    np.testing.assert_array_equal(np.concatenate([r for _, r, _ in got]), rows)
    np.testing.assert_array_equal(np.concatenate([c for _, _, c in got]), cols)


@pytest.mark.parametrize("scheme", rs.PERMUTATION_SCHEMES)
@pytest.mark.parametrize("budget", [1, 96 * 21 * 5, BIG])
def test_swap_mask_chunks_are_the_one_step_draw(scheme, budget):
    # 3 x 7 = 21 cells: chunk boundaries fall inside bytes of the coin stream
    want = rs.swap_masks(np.random.default_rng(8), 17, 3, 7, scheme)
    got = np.concatenate(
        [w for _, w in rs.swap_mask_chunks(np.random.default_rng(8), 17, 3, 7, scheme, budget)]
    )
    np.testing.assert_array_equal(got, want)


def test_coin_stream_repacks_chunks_from_their_first_coin():
    B, n = 29, 13
    bits = np.unpackbits(rs.fair_bytes(np.random.default_rng(2), B * n))[: B * n].reshape(B, n)
    coins = rs.CoinStream(np.random.default_rng(2), B, n)
    for sl in (slice(0, 1), slice(1, 4), slice(4, 21), slice(21, 29)):
        packed = coins.packed(sl)
        k = (sl.stop - sl.start) * n
        np.testing.assert_array_equal(np.unpackbits(packed)[:k].reshape(-1, n), bits[sl])


def test_memory_budget_parsing_and_environment(monkeypatch):
    assert rs.parse_bytes("512MB") == 512 * 10**6
    assert rs.parse_bytes("2GiB") == 2 * 2**30
    assert rs.parse_bytes(4096) == 4096
    monkeypatch.delenv(rs.MEMORY_BUDGET_ENV, raising=False)
    assert rs.memory_budget() == 2**30
    monkeypatch.setenv(rs.MEMORY_BUDGET_ENV, "64MiB")
    assert rs.memory_budget() == 64 * 2**20
    assert rs.memory_budget("1KB") == 1000  # the call wins over the environment
    monkeypatch.setenv(rs.MEMORY_BUDGET_ENV, "lots")
    with pytest.raises(ParameterError, match="METAEVAL_MEMORY_BUDGET='lots' is not a size"):
        rs.memory_budget()
    with pytest.raises(ParameterError, match="memory_budget=0 must be positive"):
        rs.memory_budget(0)
    # 1 GiB and 10 x 10 cells: every resample in one chunk; 1 byte: one per chunk
    assert len(rs.resample_chunks(1000, 100, "1GiB")) == 1
    assert len(rs.resample_chunks(7, 100, 1)) == 7


def _corr(ds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return correlate(ds, "h", metrics=["a", "b"], level=["input", "global", "system"],
                         method=["spearman", "acc_23", "kendall_b"], ci="boot-both",
                         pvalue="permutation", n_resamples=37, rng=3, **kw)


def test_correlate_is_bit_identical_for_any_budget_and_n_jobs():
    ds = data()
    ref = _corr(ds, memory_budget=BIG)
    for kw in ({"memory_budget": 1}, {"memory_budget": 96 * 30 * 7},
               {"memory_budget": 1, "n_jobs": 2}):
        for r0, r1 in zip(ref, _corr(ds, **kw)):
            np.testing.assert_array_equal(r1.distribution, r0.distribution)
            np.testing.assert_array_equal(r1.null_distribution, r0.null_distribution)
            assert (r1.ci_low, r1.ci_high, r1.pvalue) == (r0.ci_low, r0.ci_high, r0.pvalue) or (
                np.isnan(r0.pvalue) and np.isnan(r1.pvalue))


def test_memory_budget_from_the_environment_gives_the_same_numbers(monkeypatch):
    ds = data(1)
    monkeypatch.setenv(rs.MEMORY_BUDGET_ENV, "1")
    small = _corr(ds)
    monkeypatch.delenv(rs.MEMORY_BUDGET_ENV)
    for r0, r1 in zip(_corr(ds), small):
        np.testing.assert_array_equal(r1.distribution, r0.distribution)


@pytest.mark.parametrize("test", ["perm-both", "perm-systems", "perm-both-rowcol", "boot-both"])
@pytest.mark.parametrize("level, method", [("input", "pearson"), ("global", "acc_23")])
def test_compare_is_bit_identical_for_any_budget(test, level, method):
    ds = data(2)
    cs = [compare(ds, "h", "a", "b", level=level, method=method, test=test, n_resamples=41,
                  rng=5, memory_budget=b) for b in BUDGETS]
    for c in cs[:-1]:
        np.testing.assert_array_equal(c.null_distribution, cs[-1].null_distribution)
        assert (c.pvalue, c.ci_low, c.ci_high) == pytest.approx(
            (cs[-1].pvalue, cs[-1].ci_low, cs[-1].ci_high), rel=0, abs=0, nan_ok=True)


def test_compare_all_is_bit_identical_for_any_budget_and_n_jobs():
    ds = data(3)
    kw = {"level": "item", "method": "kendall_b", "n_resamples": 39, "rng": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r0 = compare_all(ds, "h", memory_budget=BIG, **kw)
        r1 = compare_all(ds, "h", memory_budget=1, n_jobs=2, **kw)
    np.testing.assert_array_equal(r0.pvalues, r1.pvalues)
    np.testing.assert_array_equal(r0.clusters, r1.clusters)


@pytest.mark.parametrize("test", ["perm-both", "boot-inputs"])
def test_discriminative_power_is_bit_identical_for_any_budget_and_n_jobs(test):
    ds = data(4)
    kw = {"measures": ["input:spearman", "global:kendall_b", "system:pearson", "item:acc_23"],
          "test": test, "n_resamples": 45, "rng": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d0 = discriminative_power(ds, "h", memory_budget=BIG, **kw)
        d1 = discriminative_power(ds, "h", memory_budget=1, **kw)
        d2 = discriminative_power(ds, "h", memory_budget=96 * 30 * 4, n_jobs=2, **kw)
    np.testing.assert_array_equal(d0.pvalues, d1.pvalues)
    np.testing.assert_array_equal(d0.pvalues, d2.pvalues)


def test_ranking_consistency_is_bit_identical_for_any_budget():
    ds = data(5, M=8)
    kw = {"measures": ["input:pearson", "global:kendall_b"], "n_splits": 23, "rng": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r0 = ranking_consistency(ds, "h", memory_budget=BIG, **kw)
        r1 = ranking_consistency(ds, "h", memory_budget=1, **kw)
    np.testing.assert_array_equal(r0.half_statistics, r1.half_statistics)
    np.testing.assert_array_equal(r0.rc, r1.rc)
