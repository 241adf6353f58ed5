"""Issue 23 item 6: p-values print with enough digits to tell 0.0498 from 0.0500 in every view,
and the report's cluster tests have resolution to spare (closed forms, written out here)."""

from __future__ import annotations

import math

import pytest

from metaeval.report._build import RESOLUTION, cluster_resamples
from metaeval.report._model import fmt
from metaeval.report.tables import frame_table, pval


@pytest.mark.parametrize("p, shown", [(0.0498, "0.0498"), (0.05, "0.0500"), (10 / 201, "0.0498"),
                                      (0.00049, "0.0005"), (0.00004, "<0.0001"), (1.0, "1.0000")])
def test_report_prints_pvalues_with_four_decimals(p, shown):
    assert fmt(p, "p") == shown
    assert fmt(0.0498, "num") == "0.050"  # numbers that are not p-values keep 3 decimals


def test_tables_print_pvalues_with_four_decimals():
    assert pval(0.0498) == "0.0498" and pval(0.05) == "0.0500" and pval(float("nan")) == "-"

    class R:
        def to_frame(self):
            import pandas as pd

            return pd.DataFrame({"metric": ["a"], "statistic": [0.12345], "pvalue": [0.0498],
                                 "pvalue_adjusted": [0.0499], "signature": ["s"]})

    t = frame_table("x", R())
    assert t.rows == [["a", "0.123", "0.0498", "0.0499"]]


@pytest.mark.parametrize("m", [1, 3, 10, 15, 45, 903])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1])
def test_cluster_resamples_put_the_holm_floor_at_alpha_over_ten(m, alpha):
    n = cluster_resamples(100, m, alpha)
    # smallest Holm-corrected resampling p-value over m pairs: m * 1/(n+1)
    assert m / (n + 1) <= alpha / RESOLUTION + 1e-15
    if n > 100:  # the smallest such n
        assert m / n > alpha / RESOLUTION
    assert cluster_resamples(10 ** 6, m, alpha) == 10 ** 6


def test_quick_run_of_ten_pairs_draws_1999():
    # the case: 5 metrics, 10 pairs, alpha .05: 10/201 = .0498 before, 10/2000 = .005 now
    assert cluster_resamples(100, 10, 0.05) == 1999 == math.ceil(10 * 10 / 0.05) - 1
    # the full mode: 45 pairs at alpha/2: 45/1800 = .025
    assert cluster_resamples(1000, 45, 0.05, 2) == 1799 == math.ceil(2 * 45 / 0.05) - 1
