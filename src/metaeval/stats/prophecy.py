"""The Spearman-Brown prophecy: reliability of a longer (or shorter) measurement, and the length
that reaches a target reliability (Spearman 1910; Brown 1910).

Arrays in, arrays out; re-exported by :mod:`metaeval.reliability` (``spearman_brown``,
``spearman_brown_factor``), whose stability, consistency and ICC(k) bounds use it.
"""

from __future__ import annotations

import math

import numpy as np

from .._vocab import check_probability
from ..errors import ParameterError


def spearman_brown(reliability, factor):
    """Spearman-Brown prophecy: reliability of a measurement ``factor`` times as long.

    .. math:: \\rho_n = \\frac{n \\rho}{1 + (n - 1) \\rho}

    where ``n = factor`` is the ratio of the new length to the old one (runs
    averaged, inputs in the benchmark, raters averaged) and ``rho`` the
    reliability at the old length (Spearman 1910; Brown 1910; seed paper 002
    section 3.1 cites Spearman 1910 for lengthening the test set).

    Parameters
    ----------
    reliability : float or array_like
        Reliability at the current length, in (-1, 1].
    factor : float or array_like
        Length ratio n > 0 (may be fractional, e.g. a subset of the inputs).

    Returns
    -------
    float or ndarray
        NaN where ``reliability`` is NaN.

    Examples
    --------
    >>> from metaeval.reliability import spearman_brown
    >>> round(spearman_brown(0.8, 2), 6)
    0.888889
    >>> round(spearman_brown(0.9, 0.5), 6)
    0.818182
    """
    r = np.asarray(reliability, dtype=float)
    n = np.asarray(factor, dtype=float)
    if isinstance(factor, (bool, np.bool_, str)) or not np.all(n > 0) or not np.all(np.isfinite(n)):
        raise ParameterError(f"factor={factor!r} must be a finite length ratio > 0")
    with np.errstate(all="ignore"):
        out = n * r / (1.0 + (n - 1.0) * r)
    return float(out) if out.ndim == 0 else out


def spearman_brown_factor(reliability, target):
    """How many times longer a measurement must be to reach ``target`` reliability.

    Solving the Spearman-Brown prophecy for the length ratio:

    .. math:: n = \\frac{\\rho^* (1 - \\rho)}{\\rho (1 - \\rho^*)}

    with ``rho`` the current reliability and ``rho*`` the target.  ``n <= 1``
    means the target is already met; a reliability ``<= 0`` can never reach
    a positive target (``inf``).

    Parameters
    ----------
    reliability : float or array_like
        Current reliability.
    target : float
        Target reliability in (0, 1).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from metaeval.reliability import spearman_brown_factor
    >>> round(spearman_brown_factor(0.8, 0.9), 6)
    2.25
    """
    r = np.asarray(reliability, dtype=float)
    t = check_probability(target, "target", note="a reliability, e.g. 0.9")
    with np.errstate(all="ignore"):
        out = t * (1.0 - r) / (r * (1.0 - t))
    out = np.where(r <= 0, np.inf, out)
    out = np.where(np.isnan(r), np.nan, out)
    return float(out) if out.ndim == 0 else out


def needed_length(reliability, target, length):
    """(ceil, exact) length to reach ``target``: the current ``length`` times the factor."""
    if not np.isfinite(reliability):
        return np.nan, np.nan
    exact = float(length * spearman_brown_factor(reliability, target))
    return (float(max(math.ceil(exact - 1e-9), 1)) if np.isfinite(exact) else np.inf), exact


__all__ = ["spearman_brown", "spearman_brown_factor", "needed_length"]
