"""Means that become cells or rank systems are correctly rounded (issue 23 item 1, the audit's
last three): a text metric's mean over references (``multi_ref="mean"``), an LLM judge's mean
over samples, and meta_correlation's human system means.

Reference: exact rational arithmetic (:class:`fractions.Fraction`) on the given floats, and on
the decimal rationals they stand for (0.1, 0.2, 0.3 as tenths): the mean of (0.1, 0.2, 0.3) in
any order is the float nearest 1/5, 0.2, where a left-to-right sum gives 0.20000000000000004 or
0.19999999999999998 depending on the order.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from metaeval.stats.exact import masked_mean
from metaeval.textmetrics._engine import _reduce
from metaeval.textmetrics._judge import _aggregate

ORDERS = [list(p) for p in itertools.permutations([0.1, 0.2, 0.3])] + [[0.2, 0.2, 0.2]]


def test_the_left_to_right_mean_breaks_the_tie_this_test_pins():
    # the failure these tests guard against (numpy's order-dependent sum over 3 values)
    got = {float(np.sum(np.array(o)) / 3) for o in ORDERS}
    assert len(got) > 1


def test_mean_over_references_is_equal_for_equal_exact_means_in_any_order():
    values = np.array(ORDERS, float)[:, :, None]  # (cells, references, 1 column)
    out = _reduce(values, np.ones(values.shape, bool), "mean")[:, 0]
    assert set(out.tolist()) == {float(Fraction(1, 5))}


def test_judge_mean_over_samples_is_equal_for_equal_exact_means_in_any_order():
    values = np.array(ORDERS, float).T  # (samples, prompts)
    assert set(_aggregate(values, "mean").tolist()) == {0.2}


def test_off_grid_values_give_the_correctly_rounded_mean_of_the_floats():
    g = np.random.default_rng(3)
    rows = g.normal(size=(200, 7)) * 10.0 ** g.integers(-5, 5, size=(200, 1))
    mask = g.random(rows.shape) > 0.2
    out = masked_mean(rows, mask, axis=1)
    for r, m, o in zip(rows, mask, out):
        vals = r[m]
        want = float(sum(map(Fraction, vals)) / len(vals)) if len(vals) else np.nan
        assert o == want or (np.isnan(o) and np.isnan(want))


@pytest.mark.parametrize("row, want", [
    ([1.0, np.inf, 2.0], np.inf),
    ([-np.inf, 1.0], -np.inf),
    ([np.inf, -np.inf], np.nan),
    ([np.nan, 2.0, 4.0], 3.0),
    ([np.nan, np.nan], np.nan),
])
def test_infinite_entries_are_kept_as_numpy_keeps_them_and_nan_is_left_out(row, want):
    a = np.array([row])
    got = masked_mean(a, ~np.isnan(a), axis=1)[0]
    assert got == want or (np.isnan(got) and np.isnan(want))
    assert _aggregate(a.T, "mean")[0] == got or np.isnan(got)


def test_meta_correlation_ranks_tied_human_system_means_as_ties():
    """Systems 0 and 1 have human scores (0.1, 0.2, 0.3) and (0.3, 0.2, 0.1): equal exact means
    Q_0 = Q_1 = 1/5 (seed paper 001, Eq. 5).  The meta-correlation (Kendall's tau-b between the
    systems' P_i and Q_i) must treat them as tied: scipy on the Fraction-exact means, with P_i
    from scipy's Pearson per system."""
    import scipy.stats as st

    import metaeval

    tenths = [[1, 2, 3], [3, 2, 1], [5, 6, 7], [4, 5, 9]]
    y = np.array(tenths, float) / 10
    x = np.array([[1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [1.0, 2.0, 4.0], [3.0, 1.0, 2.0]])
    ds = metaeval.Dataset.from_arrays({"h": y, "m": x}, human=["h"])
    res = metaeval.meta_correlation(ds, "h", method="pearson", meta_method="kendall_b")
    p = [st.pearsonr(xr, yr).statistic for xr, yr in zip(x, y)]
    q = [float(sum(Fraction(v, 10) for v in r) / 3) for r in tenths]
    assert q[0] == q[1]
    want = st.kendalltau(p, q).statistic
    assert res.get("m").statistic == pytest.approx(want, abs=1e-12)
