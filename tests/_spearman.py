"""scipy's Spearman test as metaeval defines its analytic p-value.

Up to 9 pairs the p-value is exact, from ``scipy.stats.permutation_test`` with
``permutation_type="pairings"`` (all n! pairings are enumerated when
``n_resamples=np.inf``); above, ``scipy.stats.spearmanr``'s t approximation.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from scipy import stats


def spearman_test(a, b, alternative="two-sided"):
    """``(statistic, pvalue)`` as metaeval's ``pvalue="auto"`` defines them for Spearman."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    res = stats.spearmanr(a, b, alternative=alternative)
    if a.size > 9:
        return res
    p = stats.permutation_test(
        (b,), lambda bb: stats.spearmanr(a, bb).statistic, permutation_type="pairings",
        alternative=alternative, n_resamples=np.inf,
    ).pvalue
    return SimpleNamespace(statistic=res.statistic, pvalue=p)
