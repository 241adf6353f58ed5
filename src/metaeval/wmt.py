"""WMT metrics-task meta-evaluation: soft pairwise accuracy, task sets, aggregation.

* :func:`soft_pairwise_accuracy` -- SPA (Thompson et al. 2024), WMT24/25's
  system-level statistic, with mt-metrics-eval's per-segment permutation
  p-values (``pce.py``), a bootstrap CI, and :func:`compare_spa`, a
  Perm-Both comparison of two metrics' SPA.
* :class:`Task`, :func:`run_tasks`, :class:`TaskSetResults` -- WMT-style task
  sets (language pair x level x method x human x references), each ranked
  into significance clusters, aggregated with weights into an average
  correlation and an average rank per metric (mt-metrics-eval ``tasks.py``),
  with terminal, CSV and LaTeX tables; :func:`global_pairwise_accuracy` --
  WMT22's pooled system-level pairwise accuracy over language pairs.

See ``docs/mt.md`` for a walkthrough from an mt-metrics-eval directory to the
WMT-style table.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._results import _ARR, _Collection, _Result
from ._signature import make_signature
from .correlation import (
    _check_choice,
    _check_confidence,
    _human_column,
    _metric_columns,
    percentile_interval,
)
from .errors import DataError, MissingCellsWarning, ParameterError
from .stats import resampling as _rs
from .stats.clusters import mtme_pvalue
from .stats.spa import PRECISIONS, pairwise_pvalues, sign_draws, spa_from_pvalues, swapped_spa

SPA_CI = ("none", "boot-inputs")


def _check_int(v, name, minimum=1):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ParameterError(f"{name}={v!r} must be an int >= {minimum}")
    return int(v)


def _complete_inputs(dataset, columns):
    """Inputs where every system has every column; warn when some are dropped."""
    ok = np.ones(dataset.shape[1], dtype=bool)
    for c in columns:
        ok &= np.isfinite(dataset.scores(c)).all(axis=0)
    if not ok.any():
        raise DataError(
            f"no input has scores of every system for {', '.join(map(repr, columns))}: soft "
            "pairwise accuracy needs the same inputs for all systems (a paired test); drop "
            "the systems with missing scores (Dataset.subset)"
        )
    dropped = int((~ok).sum())
    if dropped:
        warnings.warn(
            f"soft pairwise accuracy uses the {int(ok.sum())} inputs where every system has "
            f"every score; {dropped} input(s) with a missing cell left out",
            MissingCellsWarning,
            stacklevel=3,
        )
    return ok


@dataclass(frozen=True)
class SoftPairwiseAccuracy(_Result):
    """SPA of one metric.

    Attributes
    ----------
    metric, human : str
    statistic : float
        ``1 - mean_{i<j} |p_human(i > j) - p_metric(i > j)|`` (in [0, 1]).
    ci_low, ci_high : float
        Bootstrap percentile interval over inputs (NaN with ``ci="none"``).
    n_systems, n_inputs, n_permutations : int
    signature : str
    pvalues_metric, pvalues_human : ndarray (N, N)
        Pairwise p-values, ``[i, j]`` for i < j in dataset system order.
    bootstrap_distribution : ndarray or None
    """

    metric: str
    human: str
    statistic: float
    ci_low: float
    ci_high: float
    n_systems: int
    n_inputs: int
    n_permutations: int
    signature: str
    pvalues_metric: np.ndarray = field(**_ARR)
    pvalues_human: np.ndarray = field(**_ARR)
    bootstrap_distribution: np.ndarray = field(**_ARR)


@dataclass(frozen=True)
class SoftPairwiseAccuracies(_Collection):
    """SPA of every metric (:func:`soft_pairwise_accuracy`); ``to_frame()``
    columns: ``metric, human, statistic, ci_low, ci_high, n_systems,
    n_inputs, n_permutations, signature``."""

    _item = SoftPairwiseAccuracy

    @property
    def statistics(self) -> dict:
        return {r.metric: r.statistic for r in self.results}


def soft_pairwise_accuracy(
    dataset,
    human: str,
    *,
    metrics=None,
    n_permutations: int = 1000,
    rng=None,
    precision: str = "float64",
    ci: str = "none",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
) -> SoftPairwiseAccuracies:
    """Soft pairwise accuracy of each metric (system level; WMT24's statistic).

    Parameters
    ----------
    dataset : Dataset
        Segment-level scores (systems x inputs).
    human : str
        The human score column.
    metrics : str or list of str, optional
        Default: every metric column.
    n_permutations : int
        Sign-flip draws per system pair (pce.py's ``num_permutations``).
    rng : seed, optional
        Seeds the sign draws.  One ``(n_permutations, M)`` sign matrix is
        drawn and shared by the human scores, every metric and every system
        pair, as in pce.py (which seeds both the human and the metric call
        with ``seed=4``).  An int ``s`` gives the same draws as
        ``pce.compute_pairwise_p_values(..., seed=s)``: ``rng=4,
        precision="float32"`` reproduces mt-metrics-eval's WMT24 numbers.
    precision : {"float64", "float32"}
        ``float32`` is pce.py's arithmetic (bit-identical p-values); the
        default ``float64`` avoids float32 rounding of the sums, which can
        flip a draw that ties the observed difference.
    ci : {"none", "boot-inputs"}
        ``boot-inputs``: percentile interval from ``n_resamples`` bootstrap
        resamples of the inputs (segments), each recomputing all p-values
        with the same sign draws.
    n_resamples : int
        Bootstrap resamples (``ci="boot-inputs"``).
    confidence_level : float

    Returns
    -------
    SoftPairwiseAccuracies

    Notes
    -----
    With systems i, j and per-segment scores s, the p-value of "i better
    than j" is the share of sign draws m in {-1, 1}^M with
    ``m . (s_i - s_j) >= 1 . (s_i - s_j)`` (count / P, no +1: SPA's
    definition; mt-metrics-eval pce.py, ``compute_pairwise_p_values``), and
    ``SPA = 1 - mean_{i<j} |p_h - p_m|`` (``compute_one_minus_pce``).  Only
    inputs where every system has the human and every metric score are
    used (a :class:`~metaeval.errors.MissingCellsWarning` counts the others).

    References
    ----------
    B. Thompson, N. Mathur, D. Deutsch, H. Khayrallah (2024). Improving
    Statistical Significance in Human Evaluation of Automatic Metrics via
    Soft Pairwise Accuracy. WMT 2024.
    """
    human = _human_column(dataset, human)
    metrics = _metric_columns(dataset, metrics)
    n_permutations = _check_int(n_permutations, "n_permutations")
    _check_choice(precision, "precision", PRECISIONS)
    _check_choice(ci, "ci", SPA_CI)
    n_resamples = _check_int(n_resamples, "n_resamples")
    confidence_level = _check_confidence(confidence_level)
    if len(dataset.systems) < 2:
        raise DataError("soft pairwise accuracy needs at least 2 systems")
    ok = _complete_inputs(dataset, [human, *metrics])
    H = dataset.scores(human)[:, ok]
    X = np.stack([dataset.scores(m)[:, ok] for m in metrics])
    M = H.shape[1]
    ss, tag = _rs.seed_sequence(rng)
    gen = np.random.default_rng(ss)
    signs = sign_draws(gen, n_permutations, M)
    allp = pairwise_pvalues(np.concatenate([H[None], X]), signs, precision=precision)
    ph, pm = allp[0], allp[1:]
    spa = spa_from_pvalues(ph, pm)
    boot = None
    lo = hi = np.full(len(metrics), np.nan)
    if ci == "boot-inputs":
        bgen = _rs.named_generator(ss, "spa-bootstrap")
        idx = bgen.integers(0, M, size=(n_resamples, M))
        S = np.concatenate([H[None], X])
        boot = np.empty((n_resamples, len(metrics)))
        for b in range(n_resamples):
            p = pairwise_pvalues(S[:, :, idx[b]], signs, precision=precision)
            boot[b] = spa_from_pvalues(p[0], p[1:])
        ints = [percentile_interval(boot[:, k], confidence_level) for k in range(len(metrics))]
        lo = np.array([a for a, _ in ints])
        hi = np.array([b for _, b in ints])
    sig = make_signature(
        human=human, level="system", method="spa", n=n_permutations,
        ci=(ci, n_resamples, confidence_level) if ci != "none" else None,
        precision=precision, seed=tag,
    )
    return SoftPairwiseAccuracies(
        tuple(
            SoftPairwiseAccuracy(
                metric=m, human=human, statistic=float(spa[k]), ci_low=float(lo[k]),
                ci_high=float(hi[k]), n_systems=int(H.shape[0]), n_inputs=int(M),
                n_permutations=n_permutations, signature=sig, pvalues_metric=pm[k],
                pvalues_human=ph, bootstrap_distribution=None if boot is None else boot[:, k],
            )
            for k, m in enumerate(metrics)
        )
    )


@dataclass(frozen=True)
class SPAComparison(_Result):
    """Perm-Both comparison of two metrics' SPA (:func:`compare_spa`).

    Attributes
    ----------
    metric_a, metric_b, human : str
    statistic_a, statistic_b : float
        SPA of each metric on the shared inputs.
    statistic : float
        ``statistic_a - statistic_b``.
    pvalue : float
        One-sided "A better": ``(count + 1) / (n + 1)`` of swapped differences
        ``>= statistic``.
    pvalue_mtme : float
        ``count / n`` (mt-metrics-eval's ``PermutationSigDiff`` estimator).
    n_resamples : int
    signature : str
    null_distribution : ndarray (n_resamples,)
    """

    metric_a: str
    metric_b: str
    human: str
    statistic_a: float
    statistic_b: float
    statistic: float
    pvalue: float
    pvalue_mtme: float
    n_resamples: int
    signature: str
    null_distribution: np.ndarray = field(**_ARR)


def _zscore_flat(a):
    """Global z-score over all cells (population sd), as scipy.stats.zscore
    on the flattened vector (mt-metrics-eval ``PermutationSigDiff``)."""
    v = a.ravel()
    sd = v.std()
    return (a - v.mean()) / sd if sd > 0 else a - v.mean()


def compare_spa(
    dataset,
    human: str,
    metric_a: str,
    metric_b: str,
    *,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    rng=None,
    precision: str = "float64",
) -> SPAComparison:
    """Is metric A's SPA higher than metric B's?  A Perm-Both permutation test.

    Each draw exchanges the (globally z-scored) scores of A and B in each
    (system, input) cell with probability 1/2 and recomputes both SPAs with
    the *same* sign draws (as mt-metrics-eval's ``PermutationSigDiff`` with
    ``PairwiseConfidenceError``, whose pce.py calls are all seeded alike).
    The swap masks of all draws come from one stream; the SPA p-values of a
    chunk of draws come from one matmul.

    Parameters
    ----------
    dataset, human, metric_a, metric_b
    n_resamples : int
        Perm-Both draws.
    n_permutations : int
        Sign draws of the SPA p-values (see :func:`soft_pairwise_accuracy`).
    rng : seed
    precision : {"float64", "float32"}

    Returns
    -------
    SPAComparison
    """
    human = _human_column(dataset, human)
    ms = _metric_columns(dataset, [metric_a, metric_b])
    if ms[0] == ms[1]:
        raise ParameterError("compare_spa needs two different metrics")
    n_resamples = _check_int(n_resamples, "n_resamples")
    n_permutations = _check_int(n_permutations, "n_permutations")
    _check_choice(precision, "precision", PRECISIONS)
    ok = _complete_inputs(dataset, [human, *ms])
    H = dataset.scores(human)[:, ok]
    za = _zscore_flat(dataset.scores(ms[0])[:, ok])
    zb = _zscore_flat(dataset.scores(ms[1])[:, ok])
    N, M = H.shape
    ss, tag = _rs.seed_sequence(rng)
    signs = sign_draws(np.random.default_rng(ss), n_permutations, M)
    p = pairwise_pvalues(np.stack([H, za, zb]), signs, precision=precision)
    sa, sb = spa_from_pvalues(p[0], p[1:])
    delta = float(sa - sb)
    masks = _rs.named_generator(ss, "spa-perm-both").random((n_resamples, N, M)) < 0.5
    halves = swapped_spa(za, zb, p[0], signs, masks, precision=precision)
    null = halves[:, 0] - halves[:, 1]
    from .correlation import resampling_pvalue

    sig = make_signature(
        human=human, level="system", method="spa", test="perm-both", alt="greater",
        n=n_resamples, spa_n=n_permutations, precision=precision, seed=tag,
    )
    return SPAComparison(
        metric_a=ms[0], metric_b=ms[1], human=human, statistic_a=float(sa), statistic_b=float(sb),
        statistic=delta, pvalue=float(resampling_pvalue(null, delta, "greater")),
        pvalue_mtme=mtme_pvalue(null, delta), n_resamples=n_resamples, signature=sig,
        null_distribution=null,
    )


__all__ = [
    "soft_pairwise_accuracy",
    "SoftPairwiseAccuracy",
    "SoftPairwiseAccuracies",
    "compare_spa",
    "SPAComparison",
]
