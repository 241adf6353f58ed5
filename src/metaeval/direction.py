"""Which metrics are lower-is-better: one rule for the API and the command line.

Most metrics score a better output higher; error rates (TER, WER, CER, ...)
score it lower.  Wherever "better" is decided per metric (the human-ordered
and perturbation pairs of :func:`metaeval.local.local_pairs`), the direction
comes from :func:`resolve_lower_is_better`:

* an explicit list wins: ``lower_is_better=["ter"]``, or ``()`` (also
  ``"none"``) for no metric;
* otherwise (``None``), a metric column is lower-is-better when its name,
  ignoring case, is the name of a lower-is-better text metric of the registry
  (:data:`metaeval.textmetrics.METRICS`, the adapters with
  ``higher_is_better = False``: :func:`lower_is_better_names`), and the choice
  is announced with an :class:`~metaeval.errors.AssumedDirectionWarning`
  naming the columns, so that it is never silent.

The ``local`` command applies the same function, so the API and the CLI form
the same pairs from the same data.

Examples
--------
>>> from metaeval.direction import lower_is_better_names, resolve_lower_is_better
>>> sorted(lower_is_better_names())
['cer', 'mer', 'metricx', 'ter', 'wer', 'wil']
>>> resolve_lower_is_better(["BLEU", "TER"], ())
()
>>> import warnings
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     resolve_lower_is_better(["BLEU", "TER"])
('TER',)
>>> print(w[0].message)
taking TER as lower-is-better (named like a lower-is-better text metric: cer, mer, metricx, ter, wer, wil); pass lower_is_better= (CLI: --lower-is-better) to choose
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ._stacklevel import user_stacklevel
from .errors import AssumedDirectionWarning, DataError, ParameterError

__all__ = ["lower_is_better_names", "resolve_lower_is_better"]


def lower_is_better_names() -> frozenset:
    """Names (lower case) of the registry's lower-is-better text metrics."""
    from .textmetrics import METRICS

    return frozenset(n.lower() for n, e in METRICS.items() if not getattr(e.factory, "higher_is_better", True))


def resolve_lower_is_better(metrics: Sequence[str], lower_is_better=None, *, warn: bool = True) -> tuple:
    """The metrics of ``metrics`` where a lower score is better, in their order.

    Parameters
    ----------
    metrics : sequence of str
        The metric columns analysed.
    lower_is_better : None, str or sequence of str
        ``None``: the rule of the module (names of lower-is-better text
        metrics, announced with a warning).  ``"none"`` or an empty sequence:
        no metric.  Otherwise the names, each of which must be in
        ``metrics``.
    warn : bool
        Announce an inferred direction with :class:`AssumedDirectionWarning`.

    Returns
    -------
    tuple of str
    """
    metrics = [str(m) for m in metrics]
    if lower_is_better is None:
        known = lower_is_better_names()
        picked = tuple(m for m in metrics if m.lower() in known)
        if picked and warn:
            warnings.warn(
                f"taking {', '.join(picked)} as lower-is-better (named like a lower-is-better text metric: "
                f"{', '.join(sorted(known))}); pass lower_is_better= (CLI: --lower-is-better) to choose",
                AssumedDirectionWarning,
                stacklevel=user_stacklevel(),
            )
        return picked
    if isinstance(lower_is_better, str):
        if lower_is_better.strip().lower() == "none":
            return ()
        names = [lower_is_better]
    else:
        try:
            names = list(lower_is_better)
        except TypeError:
            raise ParameterError(
                f"lower_is_better={lower_is_better!r}: give None, 'none' or a list of metric names"
            ) from None
    unknown = [n for n in names if n not in metrics]
    if unknown:
        raise DataError(
            f"lower_is_better names {', '.join(map(repr, unknown))}, which are not among the "
            f"metrics analysed ({', '.join(metrics)})"
        )
    return tuple(m for m in metrics if m in names)
