"""The shared vocabulary of the analysis layer and its checks.

Every analysis module takes its choices (``ALTERNATIVES``, ``CORRECTIONS``,
...) and validates its options with the functions here, so that one name
means one thing and one kind of mistake gets one kind of message: the
parameter, the value given, what is allowed, and (``option=``) the
command-line option that sets it.  See docs/architecture.md for the table of
names.

It imports no pandas, no analysis module and, at import time, nothing of
:mod:`metaeval.stats` (which uses these checks): the names come from
:mod:`metaeval._choices`.  It sits below the engine and the data layer and imports
neither (``tests/test_architecture.py``, the layer map): a check that needs the
coefficient registry is :func:`metaeval.stats.coefficients.check_method_levels`, one that
builds a Dataset is :func:`metaeval.data.dataset_from`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import DataError, ParameterError

# The names (light lists that the CLI's help also reads) live in metaeval._choices;
# this module adds their checks.  It imports nothing from metaeval.stats, which uses
# these checks (tests/test_architecture.py): CORRECTIONS is _choices' copy of the keys
# of stats.multitest.ADJUSTMENTS, pinned to that registry by tests/test_cli_registries.py.
from ._choices import (  # noqa: E402
    ALTERNATIVES,
    AVERAGES,
    BINOMIAL_CIS,
    CI_METHODS,
    CORRECTIONS,
    LEVELS,
    PVALUE_METHODS,
)

__all__ = [
    "ALTERNATIVES",
    "AVERAGES",
    "BINOMIAL_CIS",
    "CI_METHODS",
    "CORRECTIONS",
    "LEVELS",
    "PVALUE_METHODS",
    "as_list",
    "check_choice",
    "check_dataset",
    "check_int",
    "check_level_size",
    "check_number",
    "check_probability",
    "human_column",
    "human_columns",
    "metric_columns",
]


def _cli(option: str | None) -> str:
    return f" (CLI: {option})" if option else ""


# --------------------------------------------------------------------------
# choices, numbers, probabilities, integers


def as_list(v, name):
    """``v`` as a non-empty list (a single string becomes a one-item list)."""
    if isinstance(v, str):
        v = [v]
    try:
        v = list(v)
    except TypeError:
        raise ParameterError(f"{name}={v!r} must be a string or a list of strings") from None
    if not v:
        raise ParameterError(f"{name} is empty")
    return v


def check_choice(v, name, allowed, *, option: str | None = None):
    """``v`` if it is one of ``allowed``, else a ParameterError listing them."""
    if not isinstance(v, str) or v not in allowed:
        raise ParameterError(f"{name}={v!r}; choose one of {', '.join(allowed)}{_cli(option)}")
    return v


def check_number(v, name, *, lo=None, hi=None, open_lo=False, open_hi=False,
                 note: str = "", option: str | None = None) -> float:
    """``v`` as a finite float within the bounds (``open_*``: the bound excluded).

    With both bounds the message names the interval (``[-1, 1]``, ``(0, 1]``);
    ``note`` says what the number is (e.g. ``"a standard deviation"``).
    """
    extra = (f" ({note})" if note else "") + _cli(option)
    if (isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real)
            or not math.isfinite(v)):
        raise ParameterError(f"{name}={v!r} must be a finite number{extra}")
    x = float(v)
    below = lo is not None and (x < lo or (open_lo and x == lo))
    above = hi is not None and (x > hi or (open_hi and x == hi))
    if not (below or above):
        return x
    if lo is not None and hi is not None:
        interval = f"{'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        raise ParameterError(f"{name}={v!r} must be in {interval}{extra}")
    if below:
        raise ParameterError(f"{name}={v!r} must be {'>' if open_lo else '>='} {lo:g}{extra}")
    raise ParameterError(f"{name}={v!r} must be {'<' if open_hi else '<='} {hi:g}{extra}")


def check_probability(v, name="confidence_level", *, note: str = "",
                      option: str | None = None) -> float:
    """A number strictly between 0 and 1 (a confidence level, a target reliability)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not 0 < v < 1:
        extra = f", {note}" if note else ""
        raise ParameterError(f"{name}={v!r} must be a number in (0, 1){extra}{_cli(option)}")
    return float(v)


def check_int(v, name, minimum=1, *, option: str | None = None) -> int:
    """An int (not a bool) of at least ``minimum``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise ParameterError(f"{name}={v!r} must be an int >= {minimum}{_cli(option)}")
    if v < minimum:
        raise ParameterError(f"{name}={v!r} must be >= {minimum}{_cli(option)}")
    return int(v)


# --------------------------------------------------------------------------
# datasets and their columns


def check_dataset(dataset):
    """Raise a TypeError unless ``dataset`` behaves like a metaeval Dataset.

    Duck-typed so that subclasses and proxies work.  (DataFrames are turned
    into Datasets before this by :func:`metaeval.data.accepts_frames`.)
    """
    if not all(hasattr(dataset, a) for a in ("ratings", "scores", "rater_labels", "columns")):
        raise TypeError(
            f"dataset must be a metaeval.Dataset, got {type(dataset).__name__}; build one with "
            "metaeval.Dataset.from_frame or metaeval.load_dataset"
        )
    return dataset


def _not_human(dataset, h):
    hint = " (it is a metric column)" if h in dataset.metrics else ""
    available = ", ".join(dataset.human) or "none (the dataset was built with human=[])"
    return DataError(
        f"human={h!r} is not a human score column of this dataset{hint}; available: {available}"
    )


def human_column(dataset, human):
    """The one human score column ``human`` of ``dataset``."""
    if not isinstance(human, str):
        raise ParameterError(f"human={human!r} must be the name of one human score column")
    if human not in dataset.human:
        raise _not_human(dataset, human)
    return human


def human_columns(dataset, human, *, what: str):
    """The human columns ``human`` names (a name or a list; None: all of them)."""
    if not dataset.human:
        raise DataError(
            f"{what} needs human scores, and this dataset has none (it was built with "
            "human=[]); add a human column"
        )
    humans = list(dataset.human) if human is None else as_list(human, "human")
    for h in humans:
        if not isinstance(h, str) or h not in dataset.human:
            raise _not_human(dataset, h)
    return humans


def metric_columns(dataset, metrics, *, available=None, where: str = "the dataset",
                   distinct: bool = False, minimum: int = 1, what: str = "", suffix: str = ""):
    """The metric columns to analyse: all of them (``metrics=None``) or the named ones.

    ``available`` (default: the dataset's metrics; any score column may be
    named) restricts the names; ``distinct`` refuses duplicates; ``minimum``
    (with ``what``, the analysis, and ``suffix``) asks for that many metrics.
    """
    default = list(dataset.metrics if available is None else available)
    known = dataset.columns if available is None else default
    if metrics is None:
        if not default:
            raise DataError(f"{where} has no metric columns")
        metrics = default
    else:
        metrics = as_list(metrics, "metrics")
        unknown = [m for m in metrics if m not in known]
        if unknown:
            raise DataError(
                f"unknown metric column(s): {', '.join(map(str, unknown))}; "
                f"available metrics: {', '.join(default)}"
            )
    if distinct and len(set(metrics)) != len(metrics):
        raise ParameterError(f"metrics contains duplicates: {metrics}")
    if len(metrics) < minimum:
        raise ParameterError(f"{what} needs at least {minimum} metrics{suffix}")
    return metrics


def check_level_size(dataset, level):
    """Raise if the dataset is too small for ``level``."""
    N, M = len(dataset.systems), len(dataset.inputs)
    if level in ("system", "input") and N < 2:
        raise DataError(
            f"level={level!r} correlates across systems but the dataset has {N} system(s) "
            f"({', '.join(dataset.systems)}); use level='item' or 'global' (command line: --level "
            "item or global), or add systems"
        )
    if level == "item" and M < 2:
        raise DataError(
            f"level='item' correlates across inputs but the dataset has {M} input(s); "
            "use level='system', 'input' or 'global' (command line: --level system, input or global), "
            "or add inputs"
        )
    if level == "global" and N * M < 2:
        raise DataError("level='global' needs at least 2 cells; the dataset has 1")
