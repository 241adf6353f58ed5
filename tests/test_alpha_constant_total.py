"""Cronbach's alpha when the total score is constant up to rounding (found by review2).

alpha = M / (M - 1) * (1 - sum_j var(Y_j) / var(T)) (Cronbach 1951) is undefined
when the totals T_i = sum_j Y_ij are equal.  In exact arithmetic the totals of
[[0.1, 0.2], [0.2, 0.1], [0.3, 0.0]] are all 0.3; in floating point 0.1 + 0.2 and
0.3 + 0.0 differ by one ulp, and var(T) = 1e-33 gave alpha = -2.6e31 with a
NonPositiveReliabilityWarning instead of NaN.
"""

from __future__ import annotations

import warnings

import numpy as np

import metaeval
from metaeval.stats.alpha import alpha_batch


def test_totals_equal_up_to_rounding_give_nan():
    y = np.array([[0.1, 0.2], [0.2, 0.1], [0.3, 0.0]])
    assert np.ptp(y.sum(-1)) > 0  # the rounding this test is about
    assert np.isnan(alpha_batch(y[None]))[0]
    ds = metaeval.Dataset.from_arrays({"h": np.array([[1.0, 2], [2, 1], [3, 0]]), "m": y}, human=["h"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = metaeval.consistency(ds, columns=["m"], n_resamples=20, rng=0)
    assert np.isnan(res[0].statistic)


def test_small_genuine_spread_of_totals_is_kept():
    # totals 0.3, 0.3 + 1e-9, 0.3 + 2e-9: far above rounding; closed form with
    # item variances (ddof=1) summed and the variance of the totals
    d = 1e-9
    y = np.array([[0.1, 0.2], [0.2, 0.1 + d], [0.3, 2 * d]])
    item = y.var(0, ddof=1).sum()
    total = np.var([0.3, 0.3 + d, 0.3 + 2 * d], ddof=1)
    exp = 2.0 * (1 - item / total)
    np.testing.assert_allclose(alpha_batch(y[None])[0], exp, rtol=1e-6)
    # and an ordinary case: 3 systems x 3 inputs, integers
    z = np.array([[1.0, 2, 2], [2, 3, 3], [4, 4, 5]])
    it = z.var(0, ddof=1).sum()
    tt = z.sum(1).var(ddof=1)
    np.testing.assert_allclose(alpha_batch(z[None])[0], 1.5 * (1 - it / tt), rtol=1e-12)
