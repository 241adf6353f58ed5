"""Williams' t-test for two dependent correlations that share a variable.

The test compares how strongly two metrics A and B correlate with the same
human scores, computed on the same n units, taking into account that A and B
are correlated with each other (Williams 1959; the form of Steiger 1980,
Eq. 14, used for MT metrics by Graham & Baldwin 2014 and in seed paper 000,
section 5.1).  It is the same test as R's ``psych::r.test(n, r12, r13, r23)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special as _sp

from ..errors import ParameterError

ALTERNATIVES = ("two-sided", "greater", "less")

# Rounding slack: correlations computed from data may exceed 1 in magnitude,
# and the determinant K of a singular correlation matrix may come out
# slightly negative, by a few ulps.  Beyond these tolerances the input is
# not a correlation matrix and the result is NaN.
_R_TOL = 1e-12
_K_TOL = 1e-12


class WilliamsResult(NamedTuple):
    """Result of :func:`williams_test`; unpacks as ``(statistic, pvalue)``.

    Both fields have the broadcast shape of the inputs: ``numpy.ndarray`` for
    array inputs, ``numpy.float64`` (a subclass of :class:`float`) when every
    input is a scalar.  NaN marks an undefined test.
    """

    statistic: np.ndarray | np.float64
    pvalue: np.ndarray | np.float64


def check_alternative(alternative: str) -> str:
    """Validate ``alternative``; return it unchanged."""
    if not isinstance(alternative, str) or alternative not in ALTERNATIVES:
        raise ParameterError(
            f"alternative={alternative!r} is not a valid alternative; choose one of "
            f"{', '.join(repr(a) for a in ALTERNATIVES)} ('greater': metric A "
            "correlates more strongly with the human scores than metric B)"
        )
    return alternative


def williams_test(
    r12,
    r13,
    r23,
    n,
    *,
    alternative: str = "two-sided",
    use_abs: bool = False,
) -> WilliamsResult:
    r"""Williams' t-test for the difference of two dependent correlations.

    Tests H0: rho(human, A) = rho(human, B) when both correlations are
    computed on the same ``n`` units and A and B are themselves correlated.

    Parameters
    ----------
    r12 : array_like
        Correlation of the human scores with metric A.
    r13 : array_like
        Correlation of the human scores with metric B.
    r23 : array_like
        Correlation of metric A with metric B.
    n : array_like
        Number of units the correlations were computed on; df = n - 3.
        All four inputs broadcast against each other.
    alternative : {'two-sided', 'greater', 'less'}, optional
        ``'greater'``: A correlates more strongly with the human scores than
        B (p = P(T >= t)); ``'less'``: B correlates more strongly
        (p = P(T <= t)); ``'two-sided'``: p = 2 P(T >= |t|), at most 1.
    use_abs : bool, optional
        If False (the default), the raw correlations are used: a metric that
        correlates *negatively* with the human scores is worse than one that
        correlates positively (mt-metrics-eval's ``WilliamsSigDiff``).  If
        True, the absolute values of all three correlations are used, as
        nlpstats / SacreROUGE do ("the WMT scripts do the same before calling
        r.test"): only the strength of association matters, not its sign.

    Returns
    -------
    WilliamsResult
        Named tuple ``(statistic, pvalue)``: the t statistic and its p-value,
        each with the broadcast shape of the inputs (a ``numpy.float64``
        when all inputs are scalars, otherwise a ``numpy.ndarray``).

    Notes
    -----
    With :math:`K = 1 - r_{12}^2 - r_{13}^2 - r_{23}^2 + 2 r_{12} r_{13} r_{23}`
    (the determinant of the 3 x 3 correlation matrix) and
    :math:`\bar r = (r_{12} + r_{13}) / 2`,

    .. math::

        t = \frac{(r_{12} - r_{13}) \sqrt{(n - 1)(1 + r_{23})}}
                 {\sqrt{2 K (n - 1)/(n - 3) + \bar r^2 (1 - r_{23})^3}}

    which follows Student's t with n - 3 degrees of freedom under H0
    (Steiger 1980, Eq. 14).

    Degenerate inputs give NaN in both fields, never an exception or a
    numpy warning: ``n <= 3`` or non-finite ``n``; a NaN or a correlation
    with ``|r| > 1`` (beyond a rounding slack of 1e-12; values within it are
    clipped to +-1); ``K < 0`` beyond the same slack (the three values are
    not a valid correlation matrix); and a zero denominator with a non-zero
    numerator (e.g. ``r23 = -1``).  One convention: when ``r12 == r13`` the
    statistic is 0 even if the denominator vanishes, so comparing a metric
    with itself (``r12 == r13``, ``r23 == 1``) gives t = 0 and a two-sided
    p-value of 1.  Callers that need to report *why* a test is undefined
    check these conditions themselves; this kernel does not warn.

    ``p_greater(A, B) == p_less(A, B)`` with A and B swapped, and
    ``p_greater(A, B) + p_greater(B, A) == 1``.

    References
    ----------
    E. J. Williams (1959). The comparison of regression variables. *Journal
    of the Royal Statistical Society B*, 21(2), 396-399.

    J. H. Steiger (1980). Tests for comparing elements of a correlation
    matrix. *Psychological Bulletin*, 87(2), 245-251, Eq. 14.

    Y. Graham and T. Baldwin (2014). Testing for significance of increased
    correlation with human judgment. *EMNLP 2014*, 172-176.

    Examples
    --------
    The values R's ``psych::r.test(n=100, r12=.6, r13=.4, r23=.5)`` prints:

    >>> from metaeval.stats.williams import williams_test
    >>> t, p = williams_test(0.6, 0.4, 0.5, 100)
    >>> print(f"{t:.6f} {p:.8f}")
    2.448709 0.01613243
    >>> res = williams_test([0.6, 0.4], 0.4, 0.5, 100, alternative="greater")
    >>> res.pvalue.round(6)
    array([0.008066, 0.5     ])
    """
    check_alternative(alternative)
    if not isinstance(use_abs, (bool, np.bool_)):
        raise ParameterError(f"use_abs={use_abs!r} must be True or False")
    try:
        arrays = [np.asarray(v, dtype=float) for v in (r12, r13, r23, n)]
        r12, r13, r23, n = np.broadcast_arrays(*arrays)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            "r12, r13, r23 and n must be numbers or numeric arrays that broadcast "
            f"against each other: {exc}"
        ) from exc

    with np.errstate(all="ignore"):
        if use_abs:
            r12, r13, r23 = np.abs(r12), np.abs(r13), np.abs(r23)
        valid = np.isfinite(n) & (n > 3)
        for r in (r12, r13, r23):
            valid &= np.abs(r) <= 1 + _R_TOL  # False for NaN
        r12, r13, r23 = (np.clip(r, -1.0, 1.0) for r in (r12, r13, r23))

        # grouped so that swapping A and B (r12 <-> r13) negates t exactly
        K = 1 - r23**2 - (r12**2 + r13**2) + 2 * r23 * (r12 * r13)
        valid &= K >= -_K_TOL
        K = np.maximum(K, 0.0)
        rbar = (r12 + r13) / 2
        num = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
        den = np.sqrt(2 * K * (n - 1) / (n - 3) + rbar**2 * (1 - r23) ** 3)
        t = num / den
        same = r12 == r13
        t = np.where(same, 0.0, t)
        valid &= same | (den > 0)
        t = np.where(valid, t, np.nan)

        df = np.where(valid, n - 3, np.nan)
        # stdtr(df, x) is the CDF of Student's t: accurate in the lower tail,
        # so every p-value is computed as a lower tail.
        if alternative == "greater":
            p = _sp.stdtr(df, -t)
        elif alternative == "less":
            p = _sp.stdtr(df, t)
        else:
            p = np.minimum(2 * _sp.stdtr(df, -np.abs(t)), 1.0)
    return WilliamsResult(t[()], p[()])


__all__ = ["ALTERNATIVES", "WilliamsResult", "check_alternative", "williams_test"]
