"""The ordered pairs of outputs that the local analyses (seed paper 004) take as input.

:func:`metaeval.local.local_pairs` builds them from a dataset and its perturbed scores or
from human scores; :func:`~metaeval.local.local_accuracy`, :func:`~metaeval.local.context_chi2`
and :func:`~metaeval.local.context_tau` read them.  ``metaeval.local.LocalPairs`` and
``metaeval.LocalPairs`` name the same class.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._results import _HtmlView
from .._signature import fmt_number


@dataclass(frozen=True, repr=False)
class LocalPairs(_HtmlView):
    """Ordered pairs (y, y') of outputs of one input, y known to be better.

    Built by :func:`metaeval.local.local_pairs`; the input of :func:`~metaeval.local.local_accuracy`,
    :func:`~metaeval.local.context_chi2` and :func:`~metaeval.local.context_tau`.

    Attributes
    ----------
    source : {"perturbation", "human"}
        Where the true order comes from: y' is a perturbed (degraded) version
        of y, or humans scored y above y'.
    category : str
        The context column (``"context"`` when labels were given as an array).
    metrics : tuple of str
    contexts : tuple of str
        The context labels that have at least one pair, in order of first
        appearance (systems x inputs, row-major).
    systems, inputs : tuple of str
        Labels of the data the pairs come from.
    human : str or None
        Human column ordering the pairs (human-ordered pairs).
    lower_is_better : tuple of str
        Metrics for which a lower score is better (WER, TER): correct means
        ``metric(y) < metric(y')`` for them.
    pair_context : str or None
        How a human-ordered pair got its context (:data:`metaeval.local.PAIR_CONTEXTS`).
    atol, human_atol : float
        Tie tolerances: the metric ties when ``|metric(y) - metric(y')| <=
        atol``; humans tie (the pair is left out) when ``|human(y) -
        human(y')| <= human_atol``.
    n_skipped : int
        Candidate pairs without any usable metric score (e.g. a skipped
        perturbation, NaN in every metric) or, for human-ordered pairs, with
        a missing human score.
    n_unknown_context : int
        Pairs left out because their context label is unknown (None).
    n_human_ties : int
        Output pairs of one input that humans scored equally (left out).
    n_cross_context : int
        Human-ordered pairs left out by ``pair_context="within"`` because
        their two outputs have different context labels.
    outcome : ndarray of int8, shape (n_metrics, n_pairs)
        Per metric and pair: 1 correct (the metric prefers y), 0 tie, -1
        incorrect, -2 missing (a score of y or y' is NaN).
    context, input, system, other : ndarray of int, shape (n_pairs,)
        Codes into ``contexts``, ``inputs`` and ``systems``: the pair's
        context and input, the system of y and that of y' (the same system
        for perturbation pairs).
    """

    source: str
    category: str
    metrics: tuple
    contexts: tuple
    systems: tuple
    inputs: tuple
    human: str | None
    lower_is_better: tuple
    pair_context: str | None
    atol: float
    human_atol: float
    n_skipped: int
    n_unknown_context: int
    n_human_ties: int
    n_cross_context: int
    outcome: np.ndarray = field(repr=False, compare=False)
    context: np.ndarray = field(repr=False, compare=False)
    input: np.ndarray = field(repr=False, compare=False)
    system: np.ndarray = field(repr=False, compare=False)
    other: np.ndarray = field(repr=False, compare=False)

    @property
    def n_pairs(self) -> int:
        return int(self.context.size)

    def __len__(self) -> int:
        return self.n_pairs

    def __repr__(self) -> str:
        return (
            f"LocalPairs({self.source}, category={self.category!r}, {self.n_pairs} pairs, "
            f"{len(self.metrics)} metrics, {len(self.contexts)} contexts)"
        )

    def signature_fields(self) -> dict:
        """The fields these pairs contribute to the signatures of analyses."""
        return {
            "human": self.human,
            "pairs": self.source,
            "context": self.category,
            "pair_context": self.pair_context,
            "atol": fmt_number(self.atol),
            "human_atol": None if self.human is None else fmt_number(self.human_atol),
            "lower": ",".join(self.lower_is_better) or None,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per metric x pair: ``metric, context, input, system,
        other_system, outcome`` (``correct``, ``tie``, ``incorrect`` or
        ``missing``)."""
        from ..stats.localacc import OUTCOME_NAMES  # scipy.stats: loaded by the view only

        K, P = self.outcome.shape
        ctx = np.asarray(self.contexts, dtype=object)[self.context]
        inp = np.asarray(self.inputs, dtype=object)[self.input]
        sy = np.asarray(self.systems, dtype=object)[self.system]
        ot = np.asarray(self.systems, dtype=object)[self.other]
        names = np.vectorize(OUTCOME_NAMES.get, otypes=[object])
        return pd.DataFrame(
            {
                "metric": np.repeat(np.asarray(self.metrics, dtype=object), P),
                "context": np.tile(ctx, K),
                "input": np.tile(inp, K),
                "system": np.tile(sy, K),
                "other_system": np.tile(ot, K),
                "outcome": names(self.outcome.reshape(-1))
                if P
                else np.array([], object),
            }
        )
