"""The radix sort of the ranked-human Kendall kernel (issue 15 item 2).

From ``RADIX_MIN_N`` valid items, ``kendall_stats_ranked_y`` sorts the
metric by an LSD radix sort of its bits instead of the merge sort.  The
reference is ``kendall_stats`` (Knight's algorithm on the (x, y) merge sort,
itself checked against pair-by-pair counting and scipy in
test_kernels_alloc.py) and NumPy's sort for the key order.
"""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats import _kernels as K
from metaeval.stats import _numpy_kernels as NK
from metaeval.stats import coefficients as co

N = K.RADIX_MIN_N + 101


def _x(kind, rng, shape):
    x = rng.normal(size=shape)
    if kind == "ties":
        x = np.round(x, 1)
    elif kind == "signed-zeros":
        x = np.round(x)
        x[x == 0] = -0.0
        x[..., ::3] = np.where(x[..., ::3] == 0, 0.0, x[..., ::3])
    elif kind == "extreme":
        x = x * np.where(rng.random(shape) < 0.5, 1e300, 1e-300)
        x[..., :7] = -np.inf
        x[..., 7:9] = np.inf
        x[..., 9:15] = np.nan
        x[..., 15:20] = 5e-324  # subnormal
    elif kind == "constant":
        x[:] = 0.25
    return x


@pytest.mark.parametrize("kind", ["continuous", "ties", "signed-zeros", "extreme", "constant"])
def test_ranked_y_with_radix_sort_equals_knight_counts(kind):
    rng = np.random.default_rng(len(kind))
    x = _x(kind, rng, (3, 2, N))
    y = rng.integers(0, 5, size=(1, 2, N)).astype(float)
    y[0, 0, ::13] = np.nan
    y[0, 1, :] = np.where(np.arange(N) < N - 1, np.nan, 3.0)  # a one-item group
    yr, k = co.dense_ranks(y[0])
    got = K.kendall_stats_ranked_y(x, yr, k)
    want = K.kendall_stats(x, np.ascontiguousarray(np.broadcast_to(y, x.shape)), 0.0)
    np.testing.assert_array_equal(got, want)


def test_ranked_y_radix_equals_numpy_twin_on_a_small_batch():
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(1, 1, N)), 2)
    y = rng.integers(0, 4, size=(1, 1, N)).astype(float)
    yr, k = co.dense_ranks(y[0])
    np.testing.assert_array_equal(K.kendall_stats_ranked_y(x, yr, k), NK.kendall_stats_ranked_y(x, yr, k))


def test_radix_keys_order_floats_as_numpy_sort():
    rng = np.random.default_rng(1)
    v = np.concatenate([rng.normal(size=3000) * 10.0 ** rng.integers(-300, 300, 3000),
                        [0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324]])
    ku = np.array([K._float_key(np.uint64(u)) for u in v.view(np.uint64)], np.uint64)
    rv = np.arange(v.size, dtype=np.int64)
    K._radix_sort_keys(ku, rv, np.empty_like(ku), np.empty_like(rv), np.empty(256, np.int64), v.size)
    back = np.array([K._key_float_bits(k) for k in ku], np.uint64).view(np.float64)
    np.testing.assert_array_equal(back, np.sort(v))  # -0.0 == 0.0 for the comparison
    np.testing.assert_array_equal(v[rv], back)
