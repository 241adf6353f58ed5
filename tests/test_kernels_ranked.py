"""The ranked-human Kendall kernel (fast path for a human score shared by a
batch of resampled metrics) against its NumPy twin, the general kernel and
the slow pure-Python reference of tests/reference.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metaeval.stats import _kernels, _numpy_kernels
from metaeval.stats import coefficients as co

import reference as ref

FIELDS = ("C", "D", "Tx", "Ty", "Txy")


def _data(rng, B, G, n, nan=0.1, levels=5, xlevels=None):
    y = rng.integers(0, levels, size=(1, G, n)).astype(float)
    if xlevels is None:
        x = rng.normal(size=(B, G, n))
    else:
        x = rng.integers(0, xlevels, size=(B, G, n)).astype(float)
    x[rng.random(x.shape) < nan] = np.nan
    y[rng.random(y.shape) < nan] = np.nan
    return x, y


@pytest.mark.parametrize("seed", range(6))
def test_ranked_kernel_equals_general_kernel_and_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(64, 300))
    x, y = _data(rng, 4, 3, n, xlevels=[None, 3, 20][seed % 3])
    general = _kernels.kendall_stats(x, np.ascontiguousarray(np.broadcast_to(y, x.shape)), 0.0)
    yr, k = co.dense_ranks(y[0])
    fast = _kernels.kendall_stats_ranked_y(x, yr, k)
    twin = _numpy_kernels.kendall_stats_ranked_y(x, yr, k)
    np.testing.assert_array_equal(fast, general)
    np.testing.assert_array_equal(twin, general)
    # the dispatching wrapper takes the ranked path for this shape
    np.testing.assert_array_equal(co.kendall_stats(x, y), general)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 80),
    levels=st.integers(1, 6),
    xlevels=st.integers(1, 6),
    nan=st.sampled_from([0.0, 0.2, 0.9, 1.0]),
    seed=st.integers(0, 2**31),
)
def test_ranked_kernel_against_slow_reference(n, levels, xlevels, nan, seed):
    rng = np.random.default_rng(seed)
    x, y = _data(rng, 2, 1, n, nan=nan, levels=levels, xlevels=xlevels)
    yr, k = co.dense_ranks(y[0])
    out = _kernels.kendall_stats_ranked_y(x, yr, k)
    for b in range(2):
        s = ref.kendall_stats(list(x[b, 0]), list(y[0, 0]))
        assert tuple(out[b, 0]) == s.as_tuple()


def test_dense_ranks():
    y = np.array([[3.0, np.nan, 1.0, 3.0, 2.0], [np.nan] * 5])
    r, k = co.dense_ranks(y)
    # by hand: distinct finite values of row 0 are 1 < 2 < 3
    np.testing.assert_array_equal(r, [[2, -1, 0, 2, 1], [-1] * 5])
    np.testing.assert_array_equal(k, [3, 0])
