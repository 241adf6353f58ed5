"""The shared-coins Perm-Both engine (metaeval.stats.permboth) against its
NumPy twin and against the generic level code on the same swapped halves.

Expected values: the generic path (``levels.level_values`` on halves built
with ``np.where`` from the unpacked coins), itself tested against the slow
references in tests/reference.py, and the kernels' NumPy twins (scipy
``rankdata`` and explicit pair signs)."""

import numpy as np
import pytest

from metaeval.stats import _kernels as K
from metaeval.stats import _numpy_kernels as NK
from metaeval.stats.levels import level_values
from metaeval.stats.permboth import PairLayout, perm_both_values, swapped_halves
from metaeval.stats.resampling import fair_bytes

LEVELS = ("system", "input", "item", "global")
METHODS = ("pearson", "spearman", "kendall_b")


def _common(xa, xb, z):
    ok = np.isfinite(xa) & np.isfinite(xb) & np.isfinite(z)
    return np.where(ok, xa, np.nan), np.where(ok, xb, np.nan), np.where(ok, z, np.nan)


def _zs(a):
    if not np.isfinite(a).any():
        return a
    s = np.nanstd(a)
    return (a - np.nanmean(a)) / (s if s > 0 else 1.0)


def _case(seed, N, M, kind):
    g = np.random.default_rng(seed)
    if kind == "continuous":
        xa, xb, z = g.normal(size=(3, N, M))
    elif kind == "ties":  # few levels everywhere, ties within and across metrics
        xa = g.integers(0, 3, (N, M)).astype(float)
        xb = g.integers(0, 3, (N, M)).astype(float)
        z = g.integers(0, 4, (N, M)).astype(float)
    elif kind == "nan":
        xa, xb, z = g.normal(size=(3, N, M))
        xa[g.random((N, M)) < 0.2] = np.nan
        z[g.random((N, M)) < 0.2] = np.nan
        z[0] = np.nan  # a system without cells
        z[:, 1] = np.nan  # an input without cells
    elif kind == "constant":
        xa = g.integers(0, 2, (N, M)).astype(float)
        xb = xa.copy()
        xb[:, 0] = 1.0
        z = g.normal(size=(N, M))
        z[:, 2] = 3.0  # a constant human column
        z[1] = 0.5  # a constant human row
        xa[2] = 7.0
        xb[2] = 7.0  # a row constant in both metrics
    elif kind == "small":  # groups of 0, 1 and 2 valid cells
        xa, xb, z = g.normal(size=(3, N, M))
        z[:, :] = np.nan
        z[0, 0] = 1.0
        z[1, 0] = 2.0
        z[0, 1] = 0.3
    xa, xb, z = _common(xa, xb, z)
    return _zs(xa), _zs(xb), z


KINDS = ("continuous", "ties", "nan", "constant", "small")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(4, 7), (8, 30), (3, 3)])
def test_group_stats_numba_equals_numpy_twin(kind, shape):
    za, zb, z = _case(7, *shape, kind)
    B = 25
    bits = fair_bytes(np.random.default_rng(1), B * z.size)
    for level in ("input", "item", "global"):
        lay = PairLayout(za, zb, z, level)
        fast = lay.group_stats(bits, B, fast=True)
        slow = lay.group_stats(bits, B, fast=False)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
        assert np.array_equal(np.isnan(fast), np.isnan(slow))
        means_f = lay.group_means(bits, B, fast=True)
        means_s = lay.group_means(bits, B, fast=False)
        np.testing.assert_array_equal(means_f, means_s)  # correctly rounded: unique


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("average", ["macro", "micro"])
def test_perm_both_values_equal_generic_path(kind, average):
    za, zb, z = _case(3, 6, 40, kind)
    B = 30
    bits = fair_bytes(np.random.default_rng(5), B * z.size)
    measures = [(lv, m) for lv in LEVELS for m in (*METHODS, "kendall_c", "acc_23")]
    got = perm_both_values(za, zb, z, measures, bits, B, average=average)
    pa, pb = swapped_halves(bits, B, za, zb)
    for lv, m in measures:
        for h, p in enumerate((pa, pb)):
            want = level_values(p, z, lv, m, average=average, detail=False).value
            np.testing.assert_allclose(
                got[(lv, m)][:, h], want, rtol=0, atol=1e-12, equal_nan=True, err_msg=f"{lv}/{m}"
            )


def test_coins_follow_unpackbits_order():
    # one resample, one byte: 0b10000000 swaps only cell 0 (numpy.unpackbits order)
    za = np.array([[0.0, 1.0, 2.0, 3.0]])
    zb = np.array([[10.0, 11.0, 12.0, 13.0]])
    bits = np.array([0b10000000], np.uint8)
    pa, pb = swapped_halves(bits, 1, za, zb)
    assert pa.tolist() == [[[10.0, 1.0, 2.0, 3.0]]]
    lay = PairLayout(za, zb, np.array([[1.0, 2.0, 3.0, 4.0]]), "global")
    means = lay.group_means(bits, 1)
    assert means[0, 0, 0] == pytest.approx(np.mean([10.0, 1.0, 2.0, 3.0]))
    assert means[0, 0, 1] == pytest.approx(np.mean([0.0, 11.0, 12.0, 13.0]))


def test_group_means_preserve_exact_ties():
    # two rows holding the same values in another order get identical means
    g = np.random.default_rng(0)
    v = g.normal(size=50)
    za = np.stack([v, v[::-1]])
    zb = za.copy()
    lay = PairLayout(za, zb, np.ones_like(za) + np.arange(2)[:, None], "item")
    bits = np.zeros(13, np.uint8)
    m = lay.group_means(bits, 1)
    assert m[0, 0, 0] == m[0, 1, 0]


def test_kernel_module_twins_share_signatures():
    import inspect

    for name in ("swap_group_stats", "swap_group_means"):
        fast = getattr(K, name).py_func
        assert list(inspect.signature(fast).parameters) == list(
            inspect.signature(getattr(NK, name)).parameters
        )


@pytest.mark.parametrize("M", [8, 20, 40])
def test_group_means_bit_identical_to_matched_means(M):
    # the kernel, its twin and levels._matched_mean all add the sorted row
    # left to right: bit-identical system means, hence identical ties
    from metaeval.stats.levels import arrange

    g = np.random.default_rng(M)
    za = g.integers(0, 5, (7, M)).astype(float) / 3.0
    zb = g.integers(0, 5, (7, M)).astype(float) / 7.0
    z = g.normal(size=(7, M))
    B = 20
    bits = fair_bytes(np.random.default_rng(0), B * z.size)
    lay = PairLayout(za, zb, z, "item")
    pa, pb = swapped_halves(bits, B, za, zb)
    for fast in (True, False):
        got = lay.group_means(bits, B, fast=fast)
        for h, p in enumerate((pa, pb)):
            want = arrange(p, z, "system")[0][:, 0, :]
            np.testing.assert_array_equal(got[:, :, h], want)
