"""Spearman's analytic p-value for few pairs (system level over few systems) is exact.

Regression: scipy's t approximation gave p = 1.4e-24 for rho = 1 over 5 systems
(found by the review of this session); the exact permutation p-value is 2/120.
Oracles: the closed form 2/n! for a perfect monotone pairing, and
``scipy.stats.permutation_test(..., permutation_type="pairings")``, which
enumerates all n! pairings when ``n_resamples >= n!``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metaeval.stats.coefficients import SPEARMAN_EXACT_N, get_coefficient

P = get_coefficient("spearman").pvalue


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_perfect_order_closed_form(n):
    x = np.arange(n, dtype=float)
    # one pairing of n! reaches rho = 1 (and one rho = -1): 1/n! one-sided, 2/n! two-sided
    assert P(x, x, "greater") == pytest.approx(1 / math.factorial(n), rel=1e-15)
    assert P(x, x, "two-sided") == pytest.approx(2 / math.factorial(n), rel=1e-15)
    assert P(x, -x, "less") == pytest.approx(1 / math.factorial(n), rel=1e-15)
    assert P(x, x, "less") == 1.0


def test_five_systems_regression():
    x = np.array([0.1, 0.4, 0.35, 0.8, 0.9])
    y = np.array([1.0, 2.0, 1.5, 3.0, 4.0])  # same order: rho = 1
    assert P(x, y, "two-sided") == pytest.approx(2 / 120, rel=1e-15)


def _scipy_exact(x, y, alternative):
    res = stats.permutation_test(
        (y,), lambda yy: stats.spearmanr(x, yy).statistic, permutation_type="pairings",
        alternative=alternative, n_resamples=np.inf,
    )
    return res.pvalue


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_equals_scipy_permutation_test_with_ties(seed, alternative):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, SPEARMAN_EXACT_N - 1))  # up to 7 keeps scipy's enumeration quick
    x = rng.integers(1, 4, n).astype(float)  # heavy ties
    y = rng.integers(1, 5, n).astype(float) if seed % 2 else rng.normal(size=n)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        x[0], y[0] = 0.0, 0.0
        x[-1], y[-1] = 9.0, -9.0
    assert P(x, y, alternative) == pytest.approx(_scipy_exact(x, y, alternative), rel=1e-12)


def test_above_the_exact_range_is_scipy_t_approximation():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=SPEARMAN_EXACT_N + 1), rng.normal(size=SPEARMAN_EXACT_N + 1)
    assert P(x, y, "two-sided") == stats.spearmanr(x, y).pvalue


def test_correlate_uses_it_at_system_level():
    import metaeval

    h = np.array([[1.0, 2], [2, 3], [3, 3], [4, 5], [5, 6]])
    m = h * 2 + 0.5
    ds = metaeval.Dataset.from_arrays({"h": h, "m": m}, human=["h"])
    r = metaeval.correlate(ds, human="h", level="system", method="spearman", ci="none")
    assert r.get("m").statistic == pytest.approx(1.0)
    assert r.get("m").pvalue == pytest.approx(2 / 120, rel=1e-15)
