"""Inference shared by the analyses: p-values and intervals from resamples, and
the analytic p-value of one correlation.

* :func:`resampling_pvalue`: (count + 1) / (n + 1) over the finite null
  statistics at least as extreme as the observed one (Davison and Hinkley
  1997, eq. 4.11; never 0), with the relative tie tolerance
  :data:`RESAMPLING_TOL`; :func:`exceeds` is its comparison, for callers
  that count exceedances themselves (sequential tests).
* :func:`percentile_interval`: the percentile bootstrap interval over the
  finite replicates (Efron and Tibshirani 1993, section 13.3).
* :func:`analytic_pvalue`: the coefficient's own p-value (scipy's tests, via
  :mod:`metaeval.stats.coefficients`) on the pooled cells of an arranged
  level (``system`` or ``global``).
* :func:`binomial_interval`: Wilson and Clopper-Pearson intervals of a
  proportion.
* :func:`correlation_test`: statistic, analytic p-value and n of one
  correlation, as :func:`metaeval.correlate` computes them.
* :func:`statistic`: the statistic of one metric at one level, as
  :func:`metaeval.correlate` reports it (the engine of
  :mod:`metaeval.stats.levels`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._vocab import BINOMIAL_CIS, check_choice
from .coefficients import get_coefficient
from .levels import arrange, grouped_values, level_values

#: Relative tolerance when comparing resampled statistics with the observed one.
RESAMPLING_TOL = 1e-12


def exceeds(null, obs, alternative, centred=False):
    """Boolean array: null statistics at least as extreme as ``obs``.

    ``two-sided`` compares distances to 0 (or to the null's mean when
    ``centred``); a null value within ``RESAMPLING_TOL * max(1, |obs|)`` of
    the boundary counts as extreme.
    """
    tol = RESAMPLING_TOL * max(1.0, abs(obs))
    if alternative == "greater":
        return null >= obs - tol
    if alternative == "less":
        return null <= obs + tol
    centre = np.nanmean(null) if centred else 0.0
    return np.abs(null - centre) >= abs(obs - centre) - tol


def resampling_pvalue(null, obs, alternative, *, centred=False):
    """(count + 1) / (n + 1) over the finite null statistics (NaN if none, or ``obs`` is NaN).

    Examples
    --------
    >>> resampling_pvalue([0.1, -0.3, 0.5, 0.2], 0.4, "greater")
    0.4
    """
    null = np.asarray(null, float)
    null = null[np.isfinite(null)]
    if not np.isfinite(obs) or null.size == 0:
        return np.nan
    count = int(exceeds(null, obs, alternative, centred).sum())
    return (count + 1.0) / (null.size + 1.0)


def percentile_interval(dist, confidence_level, *, min_finite_fraction=0.0):
    """Percentile bootstrap interval over the finite replicates.

    (NaN, NaN) when fewer than ``max(2, min_finite_fraction * len(dist))``
    replicates are finite: 2 by default (correlation, the pair tests, SPA);
    the preference analyses pass 0.5, so that an interval is not read from a
    minority of the replicates when most of them are degenerate (a resample
    with no usable pair).

    Examples
    --------
    >>> percentile_interval([1.0, 2.0, 3.0, 4.0, 5.0], 0.5)
    (2.0, 4.0)
    >>> percentile_interval([1.0, 2.0, np.nan, np.nan, np.nan], 0.5, min_finite_fraction=0.5)
    (nan, nan)
    """
    d = np.asarray(dist, float)
    n = d.size
    d = d[np.isfinite(d)]
    if d.size < max(2, min_finite_fraction * n):
        return np.nan, np.nan
    a = (1.0 - confidence_level) / 2.0
    lo, hi = np.percentile(d, [100 * a, 100 * (1 - a)])
    return float(lo), float(hi)


def story_note(pvalue, ci_low, ci_high, confidence_level, *, why, null=0.0, alternative="two-sided",
               both_ways=True):
    """The note a row needs when its p-value and its interval tell two stories, else ``""``.

    With ``alpha = 1 - confidence_level``, a row disagrees when ``pvalue < alpha``
    while ``[ci_low, ci_high]`` contains ``null`` ("significant" beside an interval
    that does not exclude the null), or, with ``both_ways`` and a two-sided test,
    when ``pvalue >= alpha`` while the interval excludes ``null``.  ``why`` says
    why the two can differ (the resampling units or the hypotheses of the two);
    the note names both numbers.  NaN p-values or intervals never disagree.

    Examples
    --------
    >>> story_note(1e-9, -0.01, 0.6, 0.95, why="the p-value treats cells as independent")
    'p = 1e-09 < 0.05 but the 95% interval [-0.01, 0.6] contains 0: the p-value treats cells as independent'
    >>> story_note(0.2, -0.01, 0.6, 0.95, why="...")
    ''
    """
    p, lo, hi = float(pvalue), float(ci_low), float(ci_high)
    if not (math.isfinite(p) and math.isfinite(lo) and math.isfinite(hi)):
        return ""
    alpha = round(1.0 - float(confidence_level), 12)  # 1 - 0.95 is 0.050000000000000044 in floats
    contains = lo <= null <= hi
    if p < alpha and contains:
        rel, side = "<", "contains"
    elif both_ways and alternative == "two-sided" and p >= alpha and not contains:
        rel, side = ">=", "excludes"
    else:
        return ""
    return (f"p = {p:.4g} {rel} {alpha:.3g} but the {100 * float(confidence_level):.3g}% interval "
            f"[{lo:.4g}, {hi:.4g}] {side} {null:g}: {why}")


def analytic_pvalue(coef, xg, yg, alternative):
    """The coefficient's analytic p-value on the pooled finite pairs of ``xg``, ``yg``.

    ``coef`` is a :mod:`~metaeval.stats.coefficients` entry with a
    ``pvalue``; NaN for fewer than 3 pairs or a constant side.
    """
    x = np.ravel(xg)
    y = np.ravel(yg)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(coef.pvalue(x, y, alternative))


def statistic(x, z, level, method, average="macro", *, detail=False):
    """The statistic of ``method`` at ``level`` (averaged over groups with ``average``).

    ``x`` and ``z`` are metric and human scores of shape (N, M), or batches
    (B, N, M); returns an array of shape (B,) (B = 1 for 2-D input).  Names
    are validated by the caller (:mod:`metaeval._vocab`).
    """
    return level_values(x, z, level, method, average=average, detail=detail).value


def correlation_test(x, z, level, method, alternative="two-sided"):
    """``(statistic, analytic p-value, n)`` of one correlation at ``system`` or ``global``.

    The numbers of ``correlate(..., level=level, method=method, pvalue="auto")``:
    the engine's statistic (:mod:`metaeval.stats.levels`, matched system means)
    and :func:`analytic_pvalue` on the same arranged pairs; ``n`` counts the
    pairs where both are finite.  A 1-D ``x`` and ``z`` are one row of cells
    (use ``level="global"``).
    """
    x = np.asarray(x, float)
    z = np.asarray(z, float)
    if x.ndim == 1:
        x, z = x[None, :], z[None, :]
    xg, zg = arrange(x, z, level)
    n = int((np.isfinite(xg) & np.isfinite(zg)).sum())
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        stat = float(grouped_values(xg, zg, method, detail=False).value[0])
    return stat, analytic_pvalue(get_coefficient(method), xg, zg, alternative), n


def use_kernels(n_values: int) -> bool:
    """Use the numba kernels only for large batches: on small ones their NumPy
    twins (same definitions) are faster, as they skip thread start-up."""
    return n_values >= 1_000_000


def binomial_interval(k: int, n: int, *, confidence_level: float = 0.95, method: str = "wilson"):
    r"""Two-sided confidence interval for a binomial proportion k / n.

    ``wilson`` (Wilson 1927, the score interval without continuity
    correction): with :math:`\hat p = k/n` and :math:`z = \Phi^{-1}((1+c)/2)`,
    :math:`(2n\hat p + z^2 \mp z\sqrt{4n\hat p(1-\hat p) + z^2}) / (2(n + z^2))`,
    with the bound set to exactly 0 when k = 0 and 1 when k = n.
    ``clopper-pearson`` (Clopper and Pearson 1934, "exact"): the
    :math:`(1-c)/2` quantile of Beta(k, n-k+1) and the :math:`(1+c)/2`
    quantile of Beta(k+1, n-k) (0 and 1 at the ends).  These are
    ``scipy.stats.binomtest(k, n).proportion_ci(c, method="wilson")`` and
    ``method="exact"``.  ``(nan, nan)`` when n = 0.

    >>> [round(v, 4) for v in binomial_interval(8, 10)]
    [0.4902, 0.9433]
    """
    import scipy.special as _sp
    import scipy.stats as _st

    check_choice(method, "ci", BINOMIAL_CIS)
    if n == 0:
        return math.nan, math.nan
    a = 1.0 - confidence_level
    if method == "wilson":
        z = float(_sp.ndtri(0.5 + 0.5 * confidence_level))
        p = k / n
        denom = 2.0 * (n + z * z)
        center = (2.0 * n * p + z * z) / denom
        delta = z / denom * math.sqrt(4.0 * n * p * (1.0 - p) + z * z)
        lo = 0.0 if k == 0 else center - delta
        hi = 1.0 if k == n else center + delta
        return float(lo), float(hi)
    lo = 0.0 if k == 0 else float(_st.beta.ppf(a / 2.0, k, n - k + 1))
    hi = 1.0 if k == n else float(_st.beta.ppf(1.0 - a / 2.0, k + 1, n - k))
    return lo, hi


__all__ = [
    "RESAMPLING_TOL",
    "binomial_interval",
    "correlation_test",
    "use_kernels",
    "analytic_pvalue",
    "exceeds",
    "percentile_interval",
    "resampling_pvalue",
    "statistic",
]
