"""Errors and typed warnings raised by metaeval.

Errors subclass :class:`ValueError` or :class:`TypeError` so that generic
handlers keep working; their messages name the parameter, the allowed values
and the offending labels.  Warnings form one hierarchy under
:class:`MetaevalWarning`, so ``warnings.simplefilter("ignore", MetaevalWarning)``
silences all of them; every result also *counts* the degenerate cases that
produced a warning, so nothing is lost when warnings are silenced.
"""

from __future__ import annotations


class MetaevalError(Exception):
    """Base class of every error metaeval raises on purpose."""


class DataError(MetaevalError, ValueError):
    """The data given to a :class:`~metaeval.Dataset` is malformed.

    Raised at construction: duplicate keys, non-numeric scores, unknown
    columns, metrics covering systems or inputs the human scores lack, empty
    data.
    """


class ParameterError(MetaevalError, ValueError):
    """An option has a value outside its allowed set or range."""


class MetaevalWarning(UserWarning):
    """Base class of every warning metaeval emits."""


class DegenerateGroupWarning(MetaevalWarning):
    """A group (system, input, or the whole table) gave no defined statistic.

    The group had fewer than two valid pairs, or one of its score vectors was
    constant, so its coefficient is NaN.  The group is counted in the result's
    ``n_groups_dropped`` and excluded from averages.
    """


class ConstantInputWarning(DegenerateGroupWarning):
    """A score vector in a group is constant, so the coefficient is undefined."""


class TooFewPairsWarning(DegenerateGroupWarning):
    """A group has fewer than two valid (non-NaN) pairs."""


class UndefinedStatisticWarning(MetaevalWarning):
    """A p-value or confidence interval is undefined (for example ``n <= 3``
    for a Fisher interval, or a bootstrap with too few finite replicates)."""


class InsufficientResamplesWarning(MetaevalWarning):
    """Too few resamples for the requested resolution: for example, no
    resampling p-value can fall below alpha after a multiple-testing
    correction."""


class MissingCellsWarning(MetaevalWarning):
    """Cells with missing scores were left out of a reliability statistic.

    Each function says which cells it drops (inputs with a missing cell for
    :func:`metaeval.reliability.consistency`, cells missing in some run for
    :func:`~metaeval.reliability.stability`, units with a missing rating for
    the ICCs); the counts are in the result.
    """


class NonConvergenceWarning(MetaevalWarning):
    """An iterative estimator stopped before its convergence criterion was met."""


class HeywoodCaseWarning(MetaevalWarning):
    """A residual variance estimate is negative (or a factor correlation exceeds 1)."""


__all__ = [
    "NonConvergenceWarning",
    "HeywoodCaseWarning",
    "MissingCellsWarning",
    "MetaevalError",
    "DataError",
    "ParameterError",
    "MetaevalWarning",
    "DegenerateGroupWarning",
    "ConstantInputWarning",
    "TooFewPairsWarning",
    "UndefinedStatisticWarning",
    "InsufficientResamplesWarning",
]
