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
from .data import sysscores as _sys
from .data import accepts_frames
from ._vocab import check_choice, check_int, check_probability, human_column, metric_columns
from .errors import (
    DataError,
    MissingCellsWarning,
    MtmeWarning,
    ParameterError,
)
from .data.mtme_meta import WMT20_STD_GOLD, WMT20_STD_REF
from .stats import resampling as _rs
from .stats.clusters import adjust_better, mtme_pvalue
from .stats.inference import RESAMPLING_TOL, percentile_interval, resampling_pvalue
from .stats.sequential import besag_clifford
from .stats.pairacc import pair_agreement, pooled_swap_accuracy
from .stats.spa import PRECISIONS, pairwise_pvalues, sign_draws, spa_from_pvalues, swapped_spa, zscore_flat

SPA_CI = ("none", "boot-inputs")


def _complete_inputs(dataset, columns):
    """Inputs where every system has every column; warn when some are dropped."""
    ok = np.ones(dataset.shape[1], dtype=bool)
    for c in columns:
        ok &= np.isfinite(dataset.scores(c)).all(axis=0)
    if not ok.any():
        raise DataError(
            f"no input has scores of every system for {', '.join(map(repr, columns))}: soft "
            "pairwise accuracy needs the same inputs for all systems (a paired test); drop "
            "the systems with missing scores (Dataset.subset; option --exclude-systems or --where)"
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


@accepts_frames(human="human")
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
    dataset : Dataset or DataFrame
        Segment-level scores (systems x inputs): any dataset, e.g. a file
        read with :func:`metaeval.read_dataset` (a long DataFrame is read as
        :func:`metaeval.correlate` reads it).
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
        ``pce.compute_pairwise_p_values(..., seed=s)``; ``rng=4,
        precision="float32"`` is mt-metrics-eval's WMT24 computation.
    precision : {"float64", "float32"}
        ``float32`` is pce.py's arithmetic: the same p-values as pce.py
        whenever the float32 sums agree.  numpy's float32 summation depends
        on the memory order of the array, so pce.py's own p-values move with
        it (on 13 x 147 MQM-like matrices, a third of the pairs differ
        between C and Fortran order) and a few tied draws can flip: the SPA
        then agrees with pce.py's within about 1e-3, not bit for bit
        (docs/mt.md, section 4).  The default ``float64`` avoids float32
        rounding of the sums.
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
    human = human_column(dataset, human)
    metrics = metric_columns(dataset, metrics)
    _sys.note_ignored(dataset, "soft_pairwise_accuracy (from per-segment permutations)")
    n_permutations = check_int(n_permutations, "n_permutations")
    check_choice(precision, "precision", PRECISIONS)
    check_choice(ci, "ci", SPA_CI)
    n_resamples = check_int(n_resamples, "n_resamples")
    confidence_level = check_probability(confidence_level)
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
        idx = _rs.resample_indices(bgen, n_resamples, M)
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
        Draws made (fewer than asked when ``stopped_early``).
    signature : str
    stopped_early : bool
        True when the sequential rule stopped before ``n_resamples`` draws.
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
    stopped_early: bool = False
    null_distribution: np.ndarray = field(**_ARR)


@accepts_frames(human="human")
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
    sequential: int | None = None,
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
        As in :func:`soft_pairwise_accuracy` (any dataset, or a long
        DataFrame).
    n_resamples : int
        Perm-Both draws.
    n_permutations : int
        Sign draws of the SPA p-values (see :func:`soft_pairwise_accuracy`).
    rng : seed
    precision : {"float64", "float32"}
    sequential : int, optional
        Stop early by Besag and Clifford's rule (:mod:`metaeval.stats.sequential`):
        draw until ``sequential`` swapped differences reach the observed one
        (``pvalue = h / L`` after ``L`` draws) or ``n_resamples`` draws
        (then the usual ``(count + 1) / (n_resamples + 1)``).  The draws
        made are the first ones of the fixed-size test.

    Returns
    -------
    SPAComparison
    """
    human = human_column(dataset, human)
    ms = metric_columns(dataset, [metric_a, metric_b])
    if ms[0] == ms[1]:
        raise ParameterError("compare_spa needs two different metrics")
    _sys.note_ignored(dataset, "compare_spa (from per-segment permutations)")
    n_resamples = check_int(n_resamples, "n_resamples")
    n_permutations = check_int(n_permutations, "n_permutations")
    check_choice(precision, "precision", PRECISIONS)
    if sequential is not None:
        check_int(sequential, "sequential")
    ok = _complete_inputs(dataset, [human, *ms])
    H = dataset.scores(human)[:, ok]
    za = zscore_flat(dataset.scores(ms[0])[:, ok])
    zb = zscore_flat(dataset.scores(ms[1])[:, ok])
    N, M = H.shape
    ss, tag = _rs.seed_sequence(rng)
    signs = sign_draws(np.random.default_rng(ss), n_permutations, M)
    p = pairwise_pvalues(np.stack([H, za, zb]), signs, precision=precision)
    sa, sb = spa_from_pvalues(p[0], p[1:])
    delta = float(sa - sb)

    gen = _rs.named_generator(ss, "spa-perm-both")
    chunk = 32

    def null_chunks():
        # one stream, drawn block by block (the same numbers as one big draw)
        for s in range(0, n_resamples, chunk):
            masks = _rs.coin_masks(gen, (min(chunk, n_resamples - s), N, M))
            halves = swapped_spa(za, zb, p[0], signs, masks, precision=precision)
            yield halves[:, 0] - halves[:, 1]

    stopped = False
    if sequential is None:
        null = np.concatenate(list(null_chunks()))
        pvalue = float(resampling_pvalue(null, delta, "greater"))
    else:
        res = besag_clifford(null_chunks(), delta, h=sequential, n=n_resamples + 1,
                             tol=RESAMPLING_TOL * max(1.0, abs(delta)))
        null, pvalue, stopped = res.null, res.pvalue, res.stopped
    sig = make_signature(
        human=human, level="system", method="spa", test="perm-both", alt="greater",
        n=n_resamples, spa_n=n_permutations, precision=precision,
        sequential=None if sequential is None else f"besag-clifford:{sequential}", seed=tag,
    )
    return SPAComparison(
        metric_a=ms[0], metric_b=ms[1], human=human, statistic_a=float(sa), statistic_b=float(sb),
        statistic=delta, pvalue=pvalue, pvalue_mtme=mtme_pvalue(null, delta),
        n_resamples=int(null.size), signature=sig, stopped_early=bool(stopped), null_distribution=null,
    )


# --------------------------------------------------------------------------
# Task sets and aggregation (mt-metrics-eval tasks.py)

#: Methods whose statistic lies in [0, 1] (the others in [-1, 1]), for the
#: rescaling of :meth:`TaskSetResults.average_corrs` (mt-metrics-eval
#: ``TaskResults.range``).
UNIT_RANGE_METHODS = ("spa", "acc_eq", "acc_23", "pairwise_accuracy", "accuracy")
TASK_ATTRS = ("lp", "level", "method", "human", "refs", "data")
#: How the clusters are formed: ``holm`` (default; metaeval's ``(count + 1) / (n + 1)`` one-sided
#: p-values, Holm-corrected over each task's pairs: the one rule of compare, compare_all and the
#: report), ``mtme`` (mt-metrics-eval's exact rule: ``count / n``, uncorrected, as the published WMT
#: rankings) and ``metaeval`` (``(count + 1) / (n + 1)``, uncorrected).
CLUSTER_RULES = ("holm", "mtme", "metaeval")
TABLE_FORMATS = ("text", "csv", "latex")


@dataclass(frozen=True)
class Task:
    """One WMT task: a dataset, a level and a method, ranked into clusters.

    Parameters
    ----------
    data : str
        Key of the dataset in the mapping given to :func:`run_tasks` (e.g.
        ``"en-de:seg"``; build them with :func:`metaeval.read_mtme`).
    human : str
        Human score column.
    level : str
        metaeval level (``system``, ``input``, ``item``, ``global``; see
        docs/mt.md for mt-metrics-eval's names).  ``method="spa"`` is
        system level on segment scores.
    method : str
        A correlation method (``pearson``, ``kendall_b``, ``acc_eq``, ...) or
        ``"spa"`` (:func:`soft_pairwise_accuracy`).
    lp, refs : str, optional
        Attributes used for weights and table headers (``lp`` defaults to
        the part of ``data`` before ``:``).
    average : {"macro", "micro"}
    """

    data: str
    human: str
    level: str = "system"
    method: str = "pearson"
    lp: str | None = None
    refs: str | None = None
    average: str = "macro"

    def attr(self, name: str) -> str:
        """The task's value of attribute ``name`` (one of TASK_ATTRS), as a string."""
        if name not in TASK_ATTRS:
            raise ParameterError(f"task attribute {name!r}; choose one of {', '.join(TASK_ATTRS)}")
        if name == "lp":
            return self.lp if self.lp is not None else self.data.split(":")[0]
        v = getattr(self, name)
        return "" if v is None else str(v)

    @property
    def name(self) -> str:
        return " ".join(f"{a}={self.attr(a)}" for a in TASK_ATTRS)

    @property
    def label(self) -> str:
        """A short name, ``lp:level:method`` (e.g. ``en-de:system:spa``): the task's column in
        :meth:`TaskSetResults.table_frame` (made unique there by the other attributes)."""
        return f"{self.attr('lp')}:{self.level}:{self.method}"

    @property
    def range(self) -> tuple[float, float]:
        return (0.0, 1.0) if self.method in UNIT_RANGE_METHODS else (-1.0, 1.0)


@dataclass(frozen=True)
class TaskResult(_Result):
    """Statistic and cluster rank of every metric on one task.

    ``metrics`` are in decreasing order of ``statistics`` (ties by name);
    ``ranks`` are significance-cluster ranks (1 = top); ``better[i, j]``
    (i < j) is the p-value of "metric i better than metric j" used for the
    clusters (NaN without a significance test: then ``ranks`` are the
    positions 1..K, as mt-metrics-eval does with ``k=0``).
    """

    task: Task = field(metadata={"nofr": True})
    metrics: tuple = field(metadata={"nofr": True})
    statistics: np.ndarray = field(**_ARR)
    ranks: np.ndarray = field(**_ARR)
    better: np.ndarray = field(**_ARR)
    signature: str = ""

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict: the task's attributes, metrics, statistics and ranks (and,
        with ``arrays``, the ``better`` matrix)."""
        d = {"task": self.task.name, **{a: self.task.attr(a) for a in TASK_ATTRS},
             "metrics": list(self.metrics), "statistics": [float(v) for v in self.statistics],
             "ranks": [int(v) for v in self.ranks], "signature": self.signature}
        if arrays:
            d["better"] = np.asarray(self.better).tolist()
        return d

    def stat(self, metric: str) -> float:
        return float(self.statistics[self.metrics.index(metric)])

    def rank(self, metric: str) -> int:
        return int(self.ranks[self.metrics.index(metric)])


def _order(stats: dict) -> list:
    return sorted(stats, key=lambda m: (-stats[m] if np.isfinite(stats[m]) else np.inf, m))


def _cluster_correction(rule):
    """The correction of the clusters' one-sided p-values under a :data:`CLUSTER_RULES` rule."""
    return "holm" if rule == "holm" else "none"


def _sig_fields(signature):
    """A signature's fields (without the version), to rebuild it with more keys."""
    parts = [p.split(":", 1) for p in signature.split("|")]
    return {k: v for k, v in parts if k != "metaeval"}


def _run_task(task, ds, metrics, n_resamples, gen_ss, alpha, clusters, n_permutations):
    from .compare import compare_all
    from .correlation import correlate
    from .stats.clusters import significance_clusters

    ms = [m for m in ds.metrics if metrics is None or m in metrics]
    if not ms:
        raise ParameterError(f"task {task.name!r}: none of the metrics is in dataset {task.data!r}")
    if task.method == "spa":
        spa = soft_pairwise_accuracy(ds, task.human, metrics=ms, rng=gen_ss, n_permutations=n_permutations)
        stats = spa.statistics
        order = _order(stats)
        K = len(order)
        better = np.full((K, K), np.nan)
        if n_resamples:
            for i in range(K):
                for j in range(i + 1, K):
                    c = compare_spa(ds, task.human, order[i], order[j], n_resamples=n_resamples,
                                    n_permutations=n_permutations, rng=gen_ss)
                    better[i, j] = c.pvalue_mtme if clusters == "mtme" else c.pvalue
            better = adjust_better(better, _cluster_correction(clusters))
        sig = spa[0].signature
        if n_resamples:
            sig = make_signature(**_sig_fields(sig), clusters=clusters)
    else:
        if n_resamples:
            cmp = compare_all(ds, task.human, metrics=ms, level=task.level, method=task.method,
                              average=task.average, n_resamples=n_resamples, correction="none",
                              alpha=alpha, rng=gen_ss, clusters="mtme" if clusters == "mtme" else "metaeval",
                              cluster_correction=_cluster_correction(clusters))
            stats = dict(zip(cmp.metrics, cmp.statistics))
            order = list(cmp.metrics)
            better = adjust_better(cmp.better, cmp.cluster_correction)
            sig = cmp.signature
        else:
            cor = correlate(ds, task.human, metrics=ms, level=task.level, method=task.method,
                            average=task.average, ci="none", pvalue="none")
            fr = cor.to_frame()
            stats = dict(zip(fr["metric"], fr["statistic"].astype(float)))
            order = _order(stats)
            better = np.full((len(order), len(order)), np.nan)
            sig = str(fr["signature"].iloc[0])
    st = np.array([stats[m] for m in order], dtype=float)
    if n_resamples:
        ranks = significance_clusters(st, better, alpha=alpha, names=order)
    else:
        ranks = np.arange(1, len(order) + 1)
    return TaskResult(task=task, metrics=tuple(order), statistics=st, ranks=np.asarray(ranks),
                      better=better, signature=sig)


def run_tasks(
    tasks,
    datasets,
    *,
    metrics=None,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    alpha: float = 0.05,
    clusters: str = "holm",
    rng=None,
    exclude_systems=None,
) -> TaskSetResults:
    """Run a WMT-style task set: each task's statistics and cluster ranks.

    Parameters
    ----------
    tasks : sequence of Task
    datasets : mapping of str to Dataset
        The datasets the tasks name (``Task.data``).
    metrics : sequence of str, optional
        Metrics to rank (default: every metric of each task's dataset).
        :meth:`TaskSetResults.average_ranks` keeps those present in all tasks.
    n_resamples : int
        Perm-Both draws per metric pair (0: no test; ranks are positions).
    n_permutations : int
        Sign draws of SPA tasks.
    alpha : float
    clusters : {"holm", "mtme", "metaeval"}
        How the clusters are formed (:data:`CLUSTER_RULES`): ``holm``
        (default, the rule of :func:`metaeval.compare_all` and the report):
        metaeval's ``(count + 1) / (n + 1)`` one-sided p-values,
        Holm-corrected over the task's K(K-1)/2 pairs; ``mtme``:
        mt-metrics-eval's exact rule, ``count / n`` uncorrected (to
        reproduce the published WMT rankings); ``metaeval``:
        ``(count + 1) / (n + 1)`` uncorrected (see
        :mod:`metaeval.stats.clusters`).  ``TaskResult.better`` holds the
        p-values the clusters read (adjusted under ``holm``), and each
        task's signature the rule: :func:`metaeval.compare_all`'s
        ``clusters:holm``, ``clusters:none:mtme``, ``clusters:none`` for
        correlation tasks, the rule's name for SPA tasks (and for
        :func:`global_pairwise_accuracy`).
    rng : seed
        Each task draws from a stream named after the task, so a task's
        numbers do not depend on the other tasks.
    exclude_systems : sequence of str or mapping of str to sequence, optional
        Systems left out before any statistic (e.g. outlier systems, as
        mt-metrics-eval's ``GetCorrelations`` leaves them out of the systems
        it correlates): a list is dropped from every dataset that has them, a
        mapping names them per dataset key.  A name that is a system of no
        dataset (of no dataset of its key) is an error.

    Returns
    -------
    TaskSetResults
    """
    tasks = list(tasks)
    if not tasks or not all(isinstance(t, Task) for t in tasks):
        raise ParameterError("tasks must be a non-empty sequence of metaeval.wmt.Task")
    names = [t.name for t in tasks]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ParameterError(f"duplicate task(s): {dup[0]!r}")
    missing = sorted({t.data for t in tasks if t.data not in datasets})
    if missing:
        raise ParameterError(f"datasets lacks {', '.join(map(repr, missing))} (named by Task.data); "
                             f"available: {', '.join(map(repr, datasets))}")
    check_int(n_resamples, "n_resamples", 0)
    check_choice(clusters, "clusters", CLUSTER_RULES)
    used = {t.data: datasets[t.data] for t in tasks}
    datasets = {**used, **_drop_systems(used, exclude_systems)}
    ss, _ = _rs.seed_sequence(rng)
    out = []
    for t in tasks:
        child = _rs.child_seed(ss, t.name)
        out.append(_run_task(t, datasets[t.data], metrics, int(n_resamples), child, alpha, clusters,
                             n_permutations))
    return TaskSetResults(tuple(out))


def _exclusions(keys, exclude_systems, what: str = "dataset"):
    """``{key: set of systems}`` from ``exclude_systems``: None, a system name or a sequence of
    them (every key) or a mapping of key to name(s) (per key, each key one of ``keys``, called
    ``what`` in messages).  Anything else is a one-line ParameterError naming exclude_systems."""
    if exclude_systems is None:
        return {}

    def names(v, where=""):
        if isinstance(v, str):
            return {v}
        bad = isinstance(v, (bytes, dict)) or not hasattr(v, "__iter__")
        items = [] if bad else list(v)
        wrong = [x for x in items if isinstance(x, bool) or not isinstance(x, (str, int, np.integer))]
        if bad or wrong:
            raise ParameterError(
                f"exclude_systems{where}: {(v if bad else wrong[0])!r} is not a system name; give a list "
                f"of names or a mapping of {what} to lists of names (option --exclude-systems)")
        return {str(x) for x in items}

    if isinstance(exclude_systems, dict):
        unknown = [k for k in exclude_systems if k not in keys]
        if unknown:
            raise ParameterError(f"exclude_systems names unknown {what}(s) {', '.join(map(repr, unknown))}; "
                                 f"the {what}s: {', '.join(map(repr, keys))}")
        return {k: names(v, f"[{k!r}]") for k, v in exclude_systems.items()}
    excl = names(exclude_systems)
    return {k: excl for k in keys} if excl else {}


def _unknown_systems(excl, have, per_key):
    """DataError if a name of ``excl`` (``{key: names}``) is a system of no key of ``have``
    (``{key: systems}``; of its own key when ``per_key``), listing the systems."""
    unknown = sorted({s for k, names in excl.items() for s in names
                      if (s not in have[k] if per_key else not any(s in h for h in have.values()))})
    if unknown:
        raise DataError(f"exclude_systems: unknown system(s) {', '.join(map(repr, unknown))} (option "
                        "--exclude-systems); the systems: "
                        + "; ".join(f"{k}: {', '.join(sorted(h))}" for k, h in have.items()))


def _too_few_left(key, n):
    if n < 2:
        raise DataError(f"exclude_systems leaves {n} system(s) in {key!r}: a task ranks 2 or more "
                        "(option --exclude-systems)")


def _drop_systems(datasets, exclude_systems):
    """The datasets of ``datasets`` that lose systems under ``exclude_systems`` (the others are
    not returned), each a :meth:`Dataset.subset`; a name no dataset of its key has is an error."""
    excl = _exclusions(list(datasets), exclude_systems)
    if not excl:
        return {}
    _unknown_systems(excl, {k: set(map(str, datasets[k].systems)) for k in excl},
                     isinstance(exclude_systems, dict))
    out = {}
    for k, names in excl.items():
        keep = [s for s in datasets[k].systems if str(s) not in names]
        if len(keep) == len(datasets[k].systems):
            continue
        _too_few_left(k, len(keep))
        out[k] = datasets[k].subset(systems=keep)
    return out


@dataclass(frozen=True)
class TaskSetResults(_Collection):
    """Results of :func:`run_tasks`, with WMT's aggregation.

    ``to_frame()`` columns: ``task, lp, level, method, human, metric,
    statistic, rank``.
    """

    _item = TaskResult
    _key = "task"

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for r in self.results:
            for m, s, k in zip(r.metrics, r.statistics, r.ranks):
                rows.append({"task": r.task.name, "lp": r.task.attr("lp"), "level": r.task.level,
                             "method": r.task.method, "human": r.task.human, "metric": m,
                             "statistic": float(s), "rank": int(k)})
        return pd.DataFrame(rows, columns=["task", "lp", "level", "method", "human", "metric",
                                           "statistic", "rank"])

    def assign_weights(self, attrs=(), total: float = 1.0) -> list:
        """Weights that split ``total`` equally over the values of ``attrs[0]``,
        then recursively over ``attrs[1:]``; equal within the last split
        (mt-metrics-eval tasks.py, ``TaskSetResults.AssignWeights``)."""
        attrs = list(attrs)
        n = len(self.results)
        if not attrs:
            return [total / n] * n
        groups: dict[str, list[int]] = {}
        for k, r in enumerate(self.results):
            groups.setdefault(r.task.attr(attrs[0]), []).append(k)
        w = [0.0] * n
        for idx in groups.values():
            sub = TaskSetResults(tuple(self.results[k] for k in idx))
            for k, v in zip(idx, sub.assign_weights(attrs[1:], total / len(groups))):
                w[k] = v
        return w

    def _weights(self, weights):
        n = len(self.results)
        if weights is None:
            return [1.0 / n] * n
        weights = [float(x) for x in weights]
        if len(weights) != n:
            raise ParameterError(f"weights has {len(weights)} entries for {n} tasks")
        return weights

    def _common_metrics(self):
        sets = [set(r.metrics) for r in self.results]
        return set.intersection(*sets) if sets else set()

    def average_ranks(self, weights=None) -> dict:
        """Weighted sum of cluster ranks of the metrics present in every task,
        ascending (mt-metrics-eval ``TaskSetResults.AverageRanks``)."""
        w = self._weights(weights)
        common = self._common_metrics()
        out = {m: sum(wk * r.rank(m) for wk, r in zip(w, self.results)) for m in common}
        return dict(sorted(out.items(), key=lambda kv: (kv[1], kv[0])))

    def average_corrs(self, weights=None) -> dict:
        """Weighted sum of statistics rescaled to [0, 1] by each task's range
        ((c - lo) / (hi - lo), range (-1, 1) for correlations and (0, 1) for
        accuracies and SPA), metrics present in every task, descending
        (mt-metrics-eval ``TaskSetResults.AverageCorrs``)."""
        w = self._weights(weights)
        common = self._common_metrics()
        out = {}
        for m in common:
            tot = 0.0
            for wk, r in zip(w, self.results):
                lo, hi = r.task.range
                tot += wk * (r.stat(m) - lo) / (hi - lo)
            out[m] = tot
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def labels(self) -> list:
        """One unique column name per task, in order: :attr:`Task.label`
        (``lp:level:method``), with ``:human``, then ``:refs``, then ``:data``
        appended to the labels two tasks share."""
        labels = [r.task.label for r in self.results]
        for extra in ("human", "refs", "data"):
            dup = {x for x in labels if labels.count(x) > 1}
            labels = [f"{x}:{r.task.attr(extra)}" if x in dup else x for x, r in zip(labels, self.results)]
        if len(set(labels)) < len(labels):  # pragma: no cover  (run_tasks refuses duplicate tasks)
            labels = [r.task.name for r in self.results]
        return labels

    def table_frame(self, weights=None) -> pd.DataFrame:
        """One row per metric present in every task: ``metric, avg_corr,
        avg_rank``, then per task its statistic and rank in the columns
        ``<label>`` and ``<label>_rank`` (:meth:`labels`, e.g.
        ``en-de:system:spa``, ``en-de:system:spa_rank``); sorted by
        decreasing average correlation (WMT23/24 tables)."""
        ac = self.average_corrs(weights)
        ar = self.average_ranks(weights)
        labels = self.labels()
        rows = []
        for m in ac:
            row = {"metric": m, "avg_corr": ac[m], "avg_rank": ar[m]}
            for lab, r in zip(labels, self.results):
                row[lab] = r.stat(m)
                row[f"{lab}_rank"] = r.rank(m)
            rows.append(row)
        return pd.DataFrame(rows, columns=["metric", "avg_corr", "avg_rank"]
                            + [c for lab in labels for c in (lab, f"{lab}_rank")])

    def table(self, weights=None, *, fmt: str = "text", digits: int = 3) -> str:
        """The WMT-style table as text, CSV or LaTeX (booktabs).

        Rows: metrics by decreasing average correlation; columns: average
        correlation, average rank, then ``rank statistic`` per task, with the
        task attributes (lp, level, method) as header rows.
        """
        check_choice(fmt, "fmt", TABLE_FORMATS)
        from .report.tables import wmt_table  # the view

        return wmt_table(self, weights, fmt=fmt, digits=digits)


# --------------------------------------------------------------------------
# WMT22 pooled global pairwise accuracy


def _sys_vector(ds, column, human):
    """System-level score of ``column`` over the cells the human scores cover."""
    from .stats.levels import arrange

    x, _ = arrange(ds.scores(column), ds.scores(human), "system")
    return x[0, 0]


@dataclass(frozen=True)
class GlobalAccuracy(_Result):
    """WMT22's pooled system-level pairwise accuracy (:func:`global_pairwise_accuracy`).

    ``metrics`` in decreasing accuracy (ties by name), ``statistics`` the
    pooled accuracies, ``n_pairs`` the pooled pair count, ``ranks`` the
    clusters, ``better[i, j]`` the Perm-Both p-value of "i better than j".
    """

    metrics: tuple = field(metadata={"nofr": True})
    human: str = ""
    n_pairs: int = 0
    datasets: tuple = field(default=(), metadata={"nofr": True})
    signature: str = ""
    statistics: np.ndarray = field(**_ARR)
    ranks: np.ndarray = field(**_ARR)
    better: np.ndarray = field(**_ARR)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"metric": list(self.metrics), "statistic": self.statistics,
                             "rank": self.ranks, "n_pairs": self.n_pairs, "signature": self.signature})


def global_pairwise_accuracy(
    datasets,
    human,
    *,
    metrics=None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    clusters: str = "holm",
    rng=None,
) -> GlobalAccuracy:
    """WMT22's global system-level pairwise accuracy pooled over datasets.

    For each dataset (e.g. one per language pair), every pair of systems with
    both human scores counts once; a metric agrees when
    ``sign(h_i - h_j) == sign(m_i - m_j)`` (ties agree only with ties).
    Agreements and pair counts are summed over datasets, and only metrics
    present in every dataset are kept (mt-metrics-eval data.py,
    ``CompareMetricsWithGlobalAccuracy``).  System scores are each dataset's
    system-level scores (a one-input dataset from ``read_mtme(level="sys")``)
    or the means over the human-scored cells.

    Significance: Perm-Both on the merged system vectors (z-scored over all
    systems of all datasets, one coin per system), as mt-metrics-eval's
    ``PermutationSigDiff`` with ``average_by='none'``; clusters by
    mt-metrics-eval's rule with ``clusters`` p-values (see :func:`run_tasks`).

    Parameters
    ----------
    datasets : mapping of str to Dataset
    human : str or mapping of str to str
        Human column (per dataset if a mapping).
    metrics : sequence of str, optional
    n_resamples : int
        0: no test (ranks are positions).
    alpha : float
    clusters : {"holm", "mtme", "metaeval"}
        As for :func:`run_tasks`.
    rng : seed

    Returns
    -------
    GlobalAccuracy
    """
    from .stats.clusters import significance_clusters

    if not datasets:
        raise ParameterError("datasets is empty")
    names = list(datasets)
    hum = {n: human[n] if isinstance(human, dict) else human for n in names}
    for n in names:
        human_column(datasets[n], hum[n])
        _sys.note_ignored(datasets[n], f"global_pairwise_accuracy ({n})")
    check_choice(clusters, "clusters", CLUSTER_RULES)
    common = set.intersection(*(set(datasets[n].metrics) for n in names))
    if metrics is not None:
        common &= set(metrics)
    if not common:
        raise DataError("no metric is present in every dataset (global accuracy keeps only those)")
    hs, cols, bounds = [], {m: [] for m in common}, []
    for n in names:
        ds = datasets[n]
        h = _sys_vector(ds, hum[n], hum[n])
        keep = np.isfinite(h)
        s = sum(len(x) for x in hs)
        hs.append(h[keep])
        bounds.append((s, s + int(keep.sum())))
        for m in common:
            v = _sys_vector(ds, m, hum[n])[keep]
            if not np.isfinite(v).all():
                raise DataError(f"metric {m!r} lacks a system-level score for a system of {n!r}")
            cols[m].append(v)
    H = np.concatenate(hs)
    X = {m: np.concatenate(v) for m, v in cols.items()}
    acc, npairs = {}, 0
    for m in sorted(common):
        agree, pairs = 0, 0
        for s, e in bounds:
            a, p = pair_agreement(H[s:e], X[m][s:e])
            agree += int(a)
            pairs += int(p)
        acc[m] = agree / pairs if pairs else np.nan
        npairs = pairs
    order = _order(acc)
    K = len(order)
    better = np.full((K, K), np.nan)
    ss, tag = _rs.seed_sequence(rng)
    if n_resamples:
        from .stats.clusters import mtme_pvalue

        for i in range(K):
            for j in range(i + 1, K):
                za, zb = zscore_flat(X[order[i]]), zscore_flat(X[order[j]])
                masks = _rs.coin_masks(_rs.named_generator(ss, order[i], order[j]), (n_resamples, H.size))
                halves = pooled_swap_accuracy(za, zb, H, bounds, masks)
                null = halves[:, 0] - halves[:, 1]
                d = acc[order[i]] - acc[order[j]]
                better[i, j] = mtme_pvalue(null, d) if clusters == "mtme" else resampling_pvalue(null, d, "greater")
        better = adjust_better(better, _cluster_correction(clusters))
        ranks = significance_clusters(np.array([acc[m] for m in order]), better, alpha=alpha, names=order)
    else:
        ranks = np.arange(1, K + 1)
    sig = make_signature(human=",".join(sorted(set(hum.values()))), level="system",
                         method="pairwise_accuracy", test="perm-both" if n_resamples else None,
                         n=n_resamples or None, clusters=clusters if n_resamples else None,
                         pooled=len(names), seed=tag)
    return GlobalAccuracy(metrics=tuple(order), human=",".join(sorted(set(hum.values()))),
                          n_pairs=npairs, datasets=tuple(names), signature=sig,
                          statistics=np.array([acc[m] for m in order]), ranks=np.asarray(ranks),
                          better=better)


# --------------------------------------------------------------------------
# WMT presets: from an mt-metrics-eval folder to the table

PRESETS = ("wmt20", "wmt23", "wmt24")

#: The standard human score of each preset (mt-metrics-eval ``meta_info.py``: ``mqm`` for the
#: WMT23-24 MQM pairs; WMT20's ``std_gold['sys']``, the system-level DA z-scores ``wmt-z``).
PRESET_HUMAN = {"wmt20": WMT20_STD_GOLD["sys"], "wmt23": "mqm", "wmt24": "mqm"}

#: The language pairs whose human translations (systems named like a reference other than the
#: standard one) each preset's tasks keep as systems: mt-metrics-eval tasks.py, ``WMT23``'s and
#: ``WMT24``'s ``lps_with_multiple_refs`` (``Task(human=lp in lps_with_multiple_refs)``); None:
#: every pair, as ``Task``'s default ``human=True``, which a WMT20 system-level task keeps.
PRESET_HUMAN_TRANSLATIONS = {"wmt20": None, "wmt23": frozenset({"en-he", "he-en"}),
                             "wmt24": frozenset({"en-de"})}


def wmt_tasks(preset: str, lps, *, human: str | None = None):
    """The tasks and weights of a WMT metrics-task preset (mt-metrics-eval
    tasks.py ``WMT23`` / ``WMT24``; ``meta_info.py`` ``WMT20``).

    ``wmt24`` (also WMT25): per language pair, system-level SPA and segment
    ``acc_eq`` grouped by segment (metaeval ``input``), uniform weights.
    ``wmt23``: pooled system pairwise accuracy over all pairs (weight = number
    of pairs, a task on the key ``"*:sys"``), then per pair system Pearson,
    segment Pearson without grouping (``global``) and segment ``acc_eq`` by
    segment, weight 1 each; normalised.
    ``wmt20``: per language pair, system-level Pearson against the DA
    z-scores (``wmt-z``, mt-metrics-eval's standard WMT20 system-level
    human score), uniform weights: the WMT20 metrics task's system-level
    evaluation (Mathur et al. 2020), which mt-metrics-eval runs as
    ``Task(test_set="wmt20", level="sys", corr_fcn="pearson")`` (its
    tasks.py has no WMT20 task set), whose defaults :func:`run_wmt`
    follows: the standard reference ``ref`` (``refs={std_ref}``) and
    human translations kept as systems (``human=True``).  WMT20's segment-level DARR
    Kendall-like statistic (``stats.KendallLike``) is not a metaeval
    coefficient, so it is not in the preset.

    ``human`` defaults to the preset's standard score (:data:`PRESET_HUMAN`).

    Returns
    -------
    (list of Task, list of float)
        Datasets are named ``"<lp>:sys"`` and ``"<lp>:seg"``.
    """
    check_choice(preset, "preset", PRESETS)
    human = PRESET_HUMAN[preset] if human is None else human
    lps = sorted(lps)
    if not lps:
        raise ParameterError("lps is empty: give at least one language pair")
    if preset == "wmt20":
        return [Task(f"{lp}:sys", human, level="system", method="pearson") for lp in lps], [1 / len(lps)] * len(lps)
    tasks, w = [], []
    if preset == "wmt23":
        tasks.append(Task("*:sys", human, level="system", method="pairwise_accuracy", lp=",".join(lps)))
        w.append(len(lps))
    for lp in lps:
        if preset == "wmt23":
            tasks.append(Task(f"{lp}:sys", human, level="system", method="pearson"))
            tasks.append(Task(f"{lp}:seg", human, level="global", method="pearson"))
            w += [1, 1]
        else:
            tasks.append(Task(f"{lp}:seg", human, level="system", method="spa"))
            w.append(1)
        tasks.append(Task(f"{lp}:seg", human, level="input", method="acc_eq"))
        w.append(1)
    tot = float(sum(w))
    return tasks, [x / tot for x in w]


def _without_partial_metrics(lp, sets, human):
    """The datasets ``sets`` of one language pair (one per level) without the metrics that lack
    every score of a system the human column rated (at any level), with one MtmeWarning per
    metric: such a metric cannot enter the language pair's tasks (SPA, pairwise accuracy and
    the system-level tasks compare every system), so it is left out of them, as mt-metrics-eval
    leaves out a metric that did not score every system, instead of stopping the whole table."""
    partial: dict[str, set] = {}
    for ds in sets:
        rated = np.isfinite(ds.scores(human)).any(axis=1)
        for m in ds.metrics:
            gap = rated & ~np.isfinite(ds.scores(m)).any(axis=1)
            if gap.any():
                partial.setdefault(m, set()).update(np.asarray(ds.systems, dtype=object)[gap])
    if not partial:
        return sets
    for m, systems in partial.items():
        shown = ", ".join(map(repr, sorted(map(str, systems))))
        warnings.warn(
            f"{lp}: metric {m!r} has no scores for system(s) {shown}, which the human column "
            f"{human!r} rated: it is left out of the {lp} tasks (and so of the average over "
            "tasks)", MtmeWarning, stacklevel=3)
    return [ds.subset(metrics=[m for m in ds.metrics if m not in partial]) for ds in sets]


def _folder_systems(root, testset, lp, level, human) -> set:
    """The systems of an mt-metrics-eval (test set, language pair) folder: those with an output
    file (human translations and outliers included), else (no system-outputs/ folder) those the
    human score ``human`` rates at ``level``."""
    from .data import mtme_info, read_mtme

    info = mtme_info(root, testset, lp)
    if info.systems:
        return set(info.systems)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = read_mtme(root, testset, lp, human=human, level=level, include_human=True, texts=False,
                       system_scores=False)
    return set(map(str, ds.systems))


def run_wmt(
    root,
    testset: str,
    lps,
    *,
    preset: str = "wmt24",
    human: str | None = None,
    refs=None,
    primary=None,
    primary_only: bool = False,
    include_human: bool | None = None,
    include_outliers: bool = False,
    exclude_systems=None,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    alpha: float = 0.05,
    clusters: str = "holm",
    rng=None,
):
    """Read an mt-metrics-eval folder and run a WMT preset (see :func:`wmt_tasks`).

    Parameters
    ----------
    root, testset : path, str
        As for :func:`metaeval.read_mtme`.
    lps : sequence of str
    human : str, optional
        The human score (default: the preset's, :data:`PRESET_HUMAN`).
    refs : str or mapping of lp to str, optional
        The standard reference of each language pair (mt-metrics-eval's
        ``std_ref``): metrics using another reference are left out, and the
        standard reference is never a system.  Default (and for a pair a
        mapping leaves out): mt-metrics-eval's ``meta_info.py`` standard
        reference of the test set and pair
        (:data:`metaeval.data.mtme_meta.STD_REF`: ``ref`` for every WMT20
        pair, ``refB`` for WMT24 en-de and WMT23 he-en/en-he, else ``refA``),
        as its tasks use (tasks.py ``Task._StdRefs``); ``ref`` for the
        ``wmt20`` preset on another test set; every metric variant for other
        test sets.  Metrics are named by mt-metrics-eval's display names so
        that they match across pairs.
    primary, primary_only
        As for :func:`metaeval.read_mtme`.
    include_human : bool, optional
        Keep human translations (systems named like a reference other than
        the standard one) as systems.  Default: as the preset's tasks in
        mt-metrics-eval (:data:`PRESET_HUMAN_TRANSLATIONS`): every pair for
        ``wmt20`` (``Task(human=True)``), ``en-he``/``he-en`` for ``wmt23``
        and ``en-de`` for ``wmt24`` (tasks.py ``lps_with_multiple_refs``).
    include_outliers : bool
        Keep the systems mt-metrics-eval marks as outliers for the test set
        and language pair (``meta_info.py``,
        :data:`metaeval.data.mtme_meta.OUTLIER_SYSTEMS`; e.g. ``MSLC`` in
        WMT24 en-de).  Default False: they are left out, as mt-metrics-eval's
        task sets leave them out (``Task(use_outliers=False)``).
    exclude_systems : sequence of str or mapping of lp to sequence, optional
        Further systems to leave out: a list from every language pair that
        has them, a mapping per language pair.  Any system of the folder can
        be named (an outlier or a human translation too); a name that is a
        system of no language pair's folder (of its pair's, for a mapping) is
        an error that lists the folder's systems.
    n_resamples, n_permutations, alpha, clusters, rng
        As for :func:`run_tasks` (the pooled accuracy of ``wmt23`` uses
        :func:`global_pairwise_accuracy` with the same settings).

    Returns
    -------
    (TaskSetResults, list of float)
        The results and the preset's weights (pass them to
        :meth:`TaskSetResults.table`).
    """
    from .data import read_mtme
    from .data.mtme_meta import outlier_systems, std_ref

    lps = [lps] if isinstance(lps, str) else list(lps)

    human = PRESET_HUMAN.get(preset, "mqm") if human is None else human
    tasks, weights = wmt_tasks(preset, lps, human=human)
    for name, v in (("include_outliers", include_outliers), ("include_human", include_human)):
        if not isinstance(v, bool) and not (name == "include_human" and v is None):
            raise ParameterError(f"{name}={v!r} must be True or False")
    levels = sorted({t.data.split(":")[1] for t in tasks if not t.data.startswith("*:")} |
                    ({"sys"} if preset == "wmt23" else set()))
    user = _exclusions(sorted(lps), exclude_systems, "language pair")
    if user:  # names checked against the folder's systems, outliers and human translations included
        _unknown_systems(user, {lp: _folder_systems(root, testset, lp, levels[0], human) for lp in user},
                         isinstance(exclude_systems, dict))
    datasets = {}
    for lp in sorted(lps):
        r = refs.get(lp) if isinstance(refs, dict) else refs
        if r is None:
            r = std_ref(testset, lp) or (WMT20_STD_REF if preset == "wmt20" else None)
        with_human = PRESET_HUMAN_TRANSLATIONS[preset] if include_human is None else include_human
        if isinstance(with_human, frozenset):
            with_human = lp in with_human
        kw = dict(human=human, refs=r, primary=primary, primary_only=primary_only,
                  include_human=with_human is None or with_human, names="display")
        drop = set(user.get(lp, ())) | (set() if include_outliers else set(outlier_systems(testset, lp)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingCellsWarning)
            for lv in levels:
                datasets[f"{lp}:{lv}"] = ds = read_mtme(root, testset, lp, level=lv, exclude_systems=sorted(drop),
                                                        **kw)
                if user.get(lp):
                    _too_few_left(lp, len(ds.systems))
    for lp in sorted(lps):
        keys = [f"{lp}:{lv}" for lv in levels]
        datasets.update(zip(keys, _without_partial_metrics(lp, [datasets[k] for k in keys], human)))
    rest = [t for t in tasks if t.data != "*:sys"]
    res = run_tasks(rest, datasets, n_resamples=n_resamples, n_permutations=n_permutations,
                    alpha=alpha, clusters=clusters, rng=rng)
    if preset == "wmt23":
        sets = {lp: datasets[f"{lp}:sys"] for lp in sorted(lps)}
        ga = global_pairwise_accuracy(sets, human, n_resamples=n_resamples, alpha=alpha,
                                      clusters=clusters, rng=rng)
        first = TaskResult(task=tasks[0], metrics=ga.metrics, statistics=ga.statistics,
                           ranks=ga.ranks, better=ga.better, signature=ga.signature)
        res = TaskSetResults((first,) + res.results)
    return res, weights


# ---- rater agreement on error spans (issue 16.5): metaeval.spans, re-exported here

from .data import read_error_spans, read_rating_spans  # noqa: E402,F401  (error-span readers)
from .spans import SPAN_MATCHES, SpanAgreement, SpanAgreementPair, span_agreement  # noqa: E402,F401


__all__ = [
    "span_agreement",
    "SpanAgreement",
    "SpanAgreementPair",
    "read_error_spans",
    "read_rating_spans",
    "wmt_tasks",
    "run_wmt",
    "PRESETS",
    "PRESET_HUMAN",
    "PRESET_HUMAN_TRANSLATIONS",
    "Task",
    "TaskResult",
    "TaskSetResults",
    "run_tasks",
    "global_pairwise_accuracy",
    "GlobalAccuracy",
    "soft_pairwise_accuracy",
    "SoftPairwiseAccuracy",
    "SoftPairwiseAccuracies",
    "compare_spa",
    "SPAComparison",
]
