"""Multiple-testing adjustment of p-values.

One registry of methods (``ADJUSTMENTS``), applied to an array of any shape
(:func:`adjust_pvalues`) or to the upper triangle of a symmetric matrix of
pairwise p-values (:func:`adjust_pairwise_matrix`).  NaN entries are not
tests: they stay NaN and do not count towards the family size m.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import ParameterError


def _bonferroni(p: np.ndarray) -> np.ndarray:
    # each p-value multiplied by the family size m, capped at 1
    return np.minimum(p * p.size, 1.0)


def _holm(p: np.ndarray) -> np.ndarray:
    # p: 1-D, finite, sorted ascending.  Step-down: the i-th smallest
    # (1-based) is multiplied by m - i + 1, then made non-decreasing.
    m = p.size
    return np.minimum(np.maximum.accumulate((m - np.arange(m)) * p), 1.0)


def _bh(p: np.ndarray) -> np.ndarray:
    # p: 1-D, finite, sorted ascending.  Step-up: the i-th smallest is
    # multiplied by m / i, then made non-decreasing from the largest down.
    m = p.size
    q = p * m / np.arange(1, m + 1)
    return np.minimum(np.minimum.accumulate(q[::-1])[::-1], 1.0)


def _none(p: np.ndarray) -> np.ndarray:
    return p.copy()


#: name -> (function of sorted finite p-values, description)
ADJUSTMENTS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], str]] = {
    "bonferroni": (_bonferroni, "Bonferroni, controls the family-wise error rate"),
    "holm": (_holm, "Holm (1979) step-down, controls the family-wise error rate"),
    "bh": (_bh, "Benjamini-Hochberg (1995) step-up, controls the false discovery rate"),
    "none": (_none, "no adjustment"),
}


def check_method(method: str) -> str:
    """Validate an adjustment method name; return it unchanged."""
    if not isinstance(method, str) or method not in ADJUSTMENTS:
        choices = "; ".join(f"{k!r} ({d})" for k, (_, d) in ADJUSTMENTS.items())
        raise ParameterError(f"method={method!r} is not a p-value adjustment; choose one of {choices}")
    return method


def _as_pvalues(p, name: str) -> np.ndarray:
    try:
        arr = np.array(p, dtype=float)  # a copy: never modify the caller's array
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be numeric p-values: {exc}") from exc
    bad = ~np.isnan(arr) & ~((arr >= 0) & (arr <= 1))
    if bad.any():
        raise ParameterError(
            f"{name} must lie in [0, 1] (NaN marks a missing test); {int(bad.sum())} "
            f"value(s) do not, e.g. {float(arr[bad].flat[0])!r}"
        )
    return arr


def adjust_pvalues(p, *, method: str = "holm") -> np.ndarray:
    r"""Adjust a family of p-values for multiple testing.

    Parameters
    ----------
    p : array_like
        p-values in [0, 1], any shape; all finite entries form one family.
        NaN entries are missing tests: they stay NaN and are not counted in
        the family size m.
    method : {'bonferroni', 'holm', 'bh', 'none'}, optional
        ``'bonferroni'``: each p-value times the family size m, capped at 1
        (controls the family-wise error rate).
        ``'holm'``: Holm's (1979) step-down procedure, controlling the
        family-wise error rate.  With the finite p-values sorted,
        :math:`p_{(1)} \le \dots \le p_{(m)}`,
        :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1) p_{(j)})`.
        ``'bh'``: Benjamini & Hochberg's (1995) step-up procedure,
        controlling the false discovery rate:
        :math:`\tilde p_{(i)} = \min(1, \min_{j \ge i} m p_{(j)} / j)`.
        ``'none'``: the p-values unchanged.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, float, same shape as ``p`` (0-d for a scalar),
        monotone in ``p`` (a smaller p never gets a larger adjusted value),
        and at most 1.  Equal p-values get equal adjusted values.  Reject a
        hypothesis at level alpha when its adjusted p-value is ``<= alpha``.

    Raises
    ------
    ParameterError
        For an unknown ``method`` or p-values outside [0, 1] (including
        infinities).

    Notes
    -----
    Matches ``statsmodels.stats.multitest.multipletests`` (``'holm'``,
    ``'fdr_bh'``) and ``scipy.stats.false_discovery_control`` (``'bh'``) on
    finite inputs.

    References
    ----------
    S. Holm (1979). A simple sequentially rejective multiple test procedure.
    *Scandinavian Journal of Statistics*, 6(2), 65-70.

    Y. Benjamini and Y. Hochberg (1995). Controlling the false discovery
    rate. *Journal of the Royal Statistical Society B*, 57(1), 289-300.

    Examples
    --------
    >>> from metaeval.stats.multitest import adjust_pvalues
    >>> adjust_pvalues([0.001, 0.01, 0.03, 0.04, 0.2], method="holm")
    array([0.005, 0.04 , 0.09 , 0.09 , 0.2  ])
    >>> adjust_pvalues([0.04, float("nan"), 0.01], method="bh")
    array([0.04,  nan, 0.02])
    """
    check_method(method)
    arr = _as_pvalues(p, "p")
    out = np.full(arr.shape, np.nan)
    flat = arr.reshape(-1)
    idx = np.flatnonzero(~np.isnan(flat))
    if idx.size:
        order = idx[np.argsort(flat[idx], kind="stable")]
        adjusted = ADJUSTMENTS[method][0](flat[order])
        out.reshape(-1)[order] = adjusted
    return out


def adjust_pairwise_matrix(P, *, method: str = "holm") -> np.ndarray:
    """Adjust a symmetric matrix of pairwise p-values as one family.

    Parameters
    ----------
    P : array_like, shape (k, k)
        Symmetric matrix of p-values of the k (k - 1) / 2 pairwise tests
        (two-sided, or otherwise symmetric); ``P[i, j]`` is the test of i
        against j.  The diagonal is ignored.  NaN marks a missing test.
    method : {'bonferroni', 'holm', 'bh', 'none'}, optional
        As in :func:`adjust_pvalues`.

    Returns
    -------
    numpy.ndarray, shape (k, k)
        The upper triangle (``i < j``) adjusted once, as one family of the
        non-NaN pairs, mirrored into the lower triangle; NaN on the diagonal.

    Raises
    ------
    ParameterError
        If ``P`` is not square or not symmetric off the diagonal (a matrix of
        one-sided p-values, with ``P[j, i] = 1 - P[i, j]``, is not a family
        of k (k - 1) / 2 tests: adjust the one-sided values you intend to
        use with :func:`adjust_pvalues` instead), or for the reasons
        :func:`adjust_pvalues` gives.

    Examples
    --------
    >>> from metaeval.stats.multitest import adjust_pairwise_matrix
    >>> P = [[0, .01, .04], [.01, 0, .03], [.04, .03, 0]]
    >>> adjust_pairwise_matrix(P, method="holm")
    array([[ nan, 0.03, 0.06],
           [0.03,  nan, 0.06],
           [0.06, 0.06,  nan]])
    """
    check_method(method)
    arr = _as_pvalues(P, "P")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ParameterError(f"P must be a square (k, k) matrix of pairwise p-values; got shape {arr.shape}")
    k = arr.shape[0]
    iu = np.triu_indices(k, 1)
    upper, lower = arr[iu], arr.T[iu]
    if not np.allclose(upper, lower, rtol=0, atol=1e-12, equal_nan=True):
        bad = np.flatnonzero(~np.isclose(upper, lower, rtol=0, atol=1e-12, equal_nan=True))[0]
        i, j = iu[0][bad], iu[1][bad]
        raise ParameterError(
            f"P must be symmetric (one p-value per unordered pair), but P[{i}, {j}] = "
            f"{float(arr[i, j])!r} and P[{j}, {i}] = {float(arr[j, i])!r}; for one-sided p-values "
            "select the tests you intend to use and call adjust_pvalues on them"
        )
    out = np.full((k, k), np.nan)
    adjusted = adjust_pvalues(upper, method=method)
    out[iu] = adjusted
    out.T[iu] = adjusted
    return out


__all__ = ["ADJUSTMENTS", "adjust_pairwise_matrix", "adjust_pvalues", "check_method"]
