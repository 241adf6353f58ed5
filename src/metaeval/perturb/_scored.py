"""Scoring perturbed texts with text metrics: the pairs of a perturbation test."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import Dataset
from ..errors import DataError, ParameterError
from ._api import PerturbationResult, perturb_dataset


@dataclass(frozen=True)
class PerturbedScores:
    """Text-metric scores of a dataset's outputs and of their perturbed versions.

    The two datasets line up cell by cell, so
    ``metaeval.diagnostics.perturbation_detection(ps.original, ps.perturbed)``
    and the local-accuracy analyses (:mod:`metaeval.local`) read the pairs
    directly.

    Attributes
    ----------
    perturbation : PerturbationResult
        The perturbed texts, what was skipped and why, the signature.
    original : Dataset
        The input dataset with the text-metric columns (scored on the
        original hypotheses) in place of its metric columns; human columns,
        texts and contexts kept.
    perturbed : Dataset
        Metric scores only (``human=[]``: perturbed texts have no human
        scores), on the perturbed hypotheses; NaN where the perturbation
        was skipped or the cell has no text.  Texts are the perturbed ones;
        contexts are kept.
    metrics : tuple of str
        The text-metric columns.
    higher_is_better : dict
        Metric column -> direction (from the adapters; TER and the ASR error
        rates are lower-is-better).
    signatures : dict
        Metric column -> the text metric's signature (the perturbation's is
        ``perturbation.signature``).
    n_cached, n_computed : int
        Work items (pairs) over both scoring passes that came from the cache
        or were computed.
    """

    perturbation: PerturbationResult
    original: Dataset = field(repr=False)
    perturbed: Dataset = field(repr=False)
    metrics: tuple
    higher_is_better: dict = field(repr=False)
    signatures: dict = field(repr=False)
    n_cached: int = 0
    n_computed: int = 0

    @property
    def lower_is_better(self) -> tuple:
        """The metric columns where a lower score is better."""
        return tuple(m for m in self.metrics if not self.higher_is_better[m])

    def detection(self, *, human=None, min_human=None, **options):
        """:func:`metaeval.diagnostics.perturbation_detection` of these pairs.

        ``human`` (a human column of :attr:`original`) and ``min_human``
        keep only originals rated at least ``min_human``; other options
        (``atol``, ``ci``, ``confidence_level``, ``alternative``) are passed
        on.  The metrics' directions are applied.
        """
        from ..diagnostics import perturbation_detection

        return perturbation_detection(
            self.original,
            {m: self.perturbed.scores(m) for m in self.metrics},
            human=human,
            min_human=min_human,
            lower_is_better=self.lower_is_better,
            **options,
        )

    def to_dict(self) -> dict:
        """Summary: the perturbation's summary, metrics, directions, signatures, counts."""
        return {
            "perturbation": self.perturbation.to_dict(),
            "metrics": list(self.metrics),
            "higher_is_better": dict(self.higher_is_better),
            "signatures": dict(self.signatures),
            "n_cached": self.n_cached,
            "n_computed": self.n_computed,
        }


def score_perturbed(
    dataset: Dataset,
    perturbation: str,
    metrics,
    *,
    rng=None,
    options: dict | None = None,
    multi_ref: str = "best",
    cache_dir=None,
    n_jobs: int = 1,
    progress=None,
) -> PerturbedScores:
    """Perturb a dataset's hypotheses and score originals and perturbed texts.

    The perturbation test of seed paper 001 (section 2.3.2, after Sai et al.
    2021) and the perturbation pairs of seed paper 004 (section 4.2): each
    hypothesis y is degraded into y' by a named, seeded perturbation
    (:func:`perturb_dataset`), and both are scored by the same text metrics
    against the same references or source
    (:func:`metaeval.textmetrics.score`, with its on-disk cache, so a
    re-run computes nothing).

    Parameters
    ----------
    dataset : Dataset
        With texts (``hypothesis`` and references and/or source).
    perturbation : str
        A registered perturbation (:func:`metaeval.perturb.describe`).
    metrics : str, TextMetric or sequence of them
        Text metrics (:func:`metaeval.textmetrics.list_metrics`).
    rng : seed, optional
        The perturbation's seed (see :func:`perturb_dataset`); None draws
        fresh entropy, recorded in ``perturbation.signature``.
    options : dict, optional
        The perturbation's options (e.g. ``{"fraction": 0.3}``).
    multi_ref, cache_dir, n_jobs : optional
        As in :func:`metaeval.textmetrics.score`.
    progress : callable, optional
        ``progress(done, total)`` over both passes (work items).

    Returns
    -------
    PerturbedScores

    Raises
    ------
    DataError
        If the dataset has no texts, or no hypothesis column.
    ParameterError
        Unknown perturbation, option or metric.

    Examples
    --------
    >>> import metaeval
    >>> from metaeval.perturb import score_perturbed
    >>> doc = "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    >>> ds = metaeval.load_dataset("summeval").subset(inputs=[doc])
    >>> ps = score_perturbed(ds, "sentence_reorder", ["rouge1", "bleu"], rng=0)
    >>> ps.perturbation.n_applied, ps.perturbation.skipped
    (15, {'fewer than 2 sentences': 1, 'missing text': 1})
    >>> det = ps.detection()      # ROUGE-1 is blind to sentence order; BLEU nearly so
    >>> det.to_frame()[["metric", "statistic", "tie_share", "n"]].round(3)
       metric  statistic  tie_share   n
    0  rouge1      0.000      1.000  15
    1    bleu      0.067      0.867  15
    """
    from .. import textmetrics as tm

    if not isinstance(dataset, Dataset):
        raise ParameterError(f"dataset must be a metaeval Dataset, got {type(dataset).__name__}")
    if options is not None and not isinstance(options, dict):
        raise ParameterError(f"options must be a dict of the perturbation's options, got {options!r}")
    adapters = tm._score._metrics_list(metrics)
    pert = perturb_dataset(dataset, perturbation, rng=rng, **(options or {}))
    texts = dataset.texts
    perturbed_texts = texts.copy()
    perturbed_texts["hypothesis"] = list(pert.perturbed)

    done = {"orig": 0, "pert": 0}
    total = {"orig": 0, "pert": 0}

    def relay(key):
        if progress is None:
            return None

        def report(d, t):
            done[key], total[key] = d, t
            # the second pass has at most as many items as the first until it reports
            progress(done["orig"] + done["pert"], total["orig"] + (total["pert"] or total["orig"]))

        return report

    clash = [c for a in adapters for c in a.columns if c in dataset.human]
    if clash:
        raise DataError(
            f"text metric column(s) {', '.join(map(repr, clash))} are human columns of the "
            "dataset; rename the metric (name=...)"
        )
    kw = dict(multi_ref=multi_ref, cache_dir=cache_dir, n_jobs=n_jobs)
    res_o = tm.score(dataset, adapters, progress=relay("orig"), **kw)
    with_pert = dataset._with(texts=perturbed_texts)
    res_p = tm.score(with_pert, adapters, progress=relay("pert"), **kw)
    original = dataset._with({
        **{h: dataset.ratings(h) for h in dataset.human},
        **{c: np.asarray(res_o[c]) for c in res_o.columns},
    })
    perturbed = dataset._with(
        {c: np.asarray(res_p[c]) for c in res_p.columns}, human=[], texts=perturbed_texts
    )
    directions = {}
    for a in adapters:
        for c in a.columns:
            directions[c] = bool(a.higher_is_better)
    return PerturbedScores(
        perturbation=pert,
        original=original,
        perturbed=perturbed,
        metrics=res_o.columns,
        higher_is_better=directions,
        signatures=dict(res_o.signatures),
        n_cached=res_o.n_cached + res_p.n_cached,
        n_computed=res_o.n_computed + res_p.n_computed,
    )
