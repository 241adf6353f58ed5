"""The shared draws of stats/resampling.py (issue 25 item 1): subsets without replacement,
bootstrap counts, index matrices, coin masks, choices among a varying number of options,
label permutations and the sub-seeds of named work units were each written by hand in the
analyses.  Each shared function is checked here against a slow twin written in the test (the
recipe its callers used, loop by loop) on the same seed, and for the property that defines
the draw; tests/test_bit_identical.py pins the analyses' numbers that use them.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.stats import resampling as rs


@pytest.mark.parametrize("n,k", [(1, 1), (7, 3), (7, 7), (50, 10)])
def test_subsets_are_without_replacement_and_uniform(n, k):
    got = rs.subsets(np.random.default_rng(3), 400, n, k)
    assert got.shape == (400, k)
    assert all(len(set(row)) == k and min(row) >= 0 and max(row) < n for row in got.tolist())
    # slow twin: the rank order of each row of uniforms, row by row
    g = np.random.default_rng(3)
    u = g.random((400, n))
    want = np.array([sorted(range(n), key=lambda j: u[b, j])[:k] for b in range(400)])
    np.testing.assert_array_equal(got, want)
    orders = rs.random_orders(np.random.default_rng(3), 400, n)
    np.testing.assert_array_equal(orders[:, :k], got)
    if n == 7 and k == 3:  # every element equally likely (chi-square, 7 cells)
        freq = np.bincount(rs.subsets(np.random.default_rng(0), 7000, n, k).ravel(), minlength=n)
        assert stats.chisquare(freq).pvalue > 1e-3


def test_bootstrap_counts_and_multiplicities():
    B, n = 50, 9
    idx = rs.resample_indices(np.random.default_rng(5), B, n)
    assert idx.shape == (B, n) and idx.min() >= 0 and idx.max() < n
    want = np.zeros((B, n))
    for b in range(B):  # slow twin: count each drawn unit
        for j in idx[b]:
            want[b, j] += 1
    np.testing.assert_array_equal(rs.multiplicities(idx, n), want)
    assert rs.multiplicities(idx, n).dtype == np.int64
    w = rs.bootstrap_counts(np.random.default_rng(5), B, n)
    np.testing.assert_array_equal(w, want)
    assert w.dtype == float and (w.sum(1) == n).all()
    # the old cellboot.counts and resampling._multiplicities are this one function
    from metaeval.stats import cellboot

    assert cellboot.counts is rs.multiplicities
    np.testing.assert_array_equal(rs._multiplicities(idx, n), want)
    # uneven rows: k draws of n originals
    idx2 = np.array([[0, 0, 2], [1, 1, 1]])
    np.testing.assert_array_equal(rs.multiplicities(idx2, 4), [[2, 0, 1, 0], [0, 3, 0, 0]])


def test_coin_masks_uniform_choices_and_permutations():
    m = rs.coin_masks(np.random.default_rng(2), (300, 4, 5))
    assert m.shape == (300, 4, 5) and m.dtype == bool
    assert stats.binomtest(int(m.sum()), m.size).pvalue > 1e-3
    np.testing.assert_array_equal(m, np.random.default_rng(2).random((300, 4, 5)) < 0.5)
    counts = np.array([3, 1, 0, 5])
    c = rs.uniform_choices(np.random.default_rng(4), 2000, counts)
    assert c.shape == (2000, 4)
    for j, k in enumerate(counts):  # each position below its count, uniformly
        col = c[:, j]
        assert col.min() >= 0 and col.max() <= max(k - 1, 0)
        if k > 1:
            assert stats.chisquare(np.bincount(col, minlength=k)).pvalue > 1e-3
    u = np.random.default_rng(4).random((2000, 4))
    slow = np.array([[min(int(u[b, j] * k), max(k - 1, 0)) for j, k in enumerate(counts)]
                     for b in range(2000)])
    np.testing.assert_array_equal(c, slow)
    lab = np.array([0, 0, 1, 2, 2, 2])
    p = rs.permuted_copies(np.random.default_rng(9), 30, lab)
    assert p.shape == (30, 6) and all(sorted(r) == sorted(lab) for r in p.tolist())
    g = np.random.default_rng(9)
    np.testing.assert_array_equal(p, [g.permutation(lab) for _ in range(30)])


def test_child_seed_depends_on_the_name_only():
    ss, _ = rs.seed_sequence(0)
    a = rs.child_seed(ss, "task one")
    assert isinstance(a, np.random.SeedSequence)
    assert a.entropy == rs.child_seed(ss, "task one").entropy != rs.child_seed(ss, "task two").entropy
    # the words are four 32-bit integers of the named stream
    words = rs.named_generator(ss, "task one").integers(0, 2**32, size=4).tolist()
    assert list(a.entropy) == words
