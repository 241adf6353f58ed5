"""System-level means must never reverse the exact order of two systems.

Found while benchmarking against mt-metrics-eval (benchmarks/wmt_table.py,
BENCHMARKS.md "Scale"): ``levels._matched_mean`` sums each row left to right
in sorted order, which is not correctly rounded; two systems whose exact means
differ by less than that rounding error can come out in the reverse order,
which changes Kendall/accuracy statistics at system level (one pair of the WMT
benchmark's metric7 at 100 segments: acc_23 0.7917 instead of 0.7833).

Reference: exact rational arithmetic (:class:`fractions.Fraction`) on the
given float64 values; correctly rounded means (``math.fsum``) are monotone in
the exact sums, so they can tie but never reverse.  Fixed by correctly
rounded means (:mod:`metaeval.stats.exact`, issue 23 item 1); the test
failed on the sorted sum (37 reversed pairs of these 200 rows).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from metaeval.stats.levels import arrange


def _rows():
    g = np.random.default_rng(0)
    x = np.round(g.normal(size=(200, 100)), 1)  # decimals: many equal decimal sums
    y = g.normal(size=(200, 100))
    return x, y


def _reversed_pairs(means, exact):
    n = len(exact)
    return [(i, j) for i in range(n) for j in range(n) if means[i] > means[j] and exact[i] < exact[j]]


def test_reference_fsum_means_never_reverse_the_exact_order():
    # the slow reference itself: correctly rounded means keep the exact order
    x, _ = _rows()
    exact = [sum(map(Fraction, r)) for r in x]
    fs = [math.fsum(r) / r.size for r in x]
    assert _reversed_pairs(fs, exact) == []


def test_system_means_never_reverse_the_exact_order_regression_sorted_sum():
    x, y = _rows()
    means, _ = arrange(x, y, "system")
    exact = [sum(map(Fraction, r)) for r in x]
    assert _reversed_pairs(means[0, 0], exact) == []
