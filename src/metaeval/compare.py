"""Is metric A really better than metric B?  :func:`compare` and :func:`compare_all`.

The tests (``test=``):

``williams``
    Williams' (1959) t-test for two dependent correlations sharing the human
    variable (Graham and Baldwin 2014; seed paper 000 section 5.1), on the
    correlations at the chosen level.  For ``system`` and ``global`` it is
    the classical test with n = the number of pairs.  At ``input`` and
    ``item`` the averaged correlations are plugged in with n = the largest
    number of valid pairs in a group (as nlpstats and seed paper 000 do); this
    treats an average as one correlation and is an approximation: prefer a
    permutation test there.  Defined for ``pearson``, ``spearman``,
    ``kendall_b``, ``kendall_c``.
``perm-both`` (default), ``perm-systems``, ``perm-inputs``
    The paired permutation tests of Deutsch et al. (2021, section 4.2): both
    metrics are z-scored over their common cells, then their scores are
    exchanged per (system, input) cell (Perm-Both, as in the paper and
    SacreROUGE), per system (whole rows) or per input (whole columns), and the
    difference of the statistics is recomputed.
``perm-both-rowcol``
    nlpstats' ``"both"`` scheme: rows are swapped, then columns, so a cell is
    exchanged iff its row coin XOR its column coin; offered to reproduce
    nlpstats and NLGCorrEval, distinct from the paper's Perm-Both.
``boot-systems``, ``boot-inputs``, ``boot-both``
    Paired bootstrap: systems, inputs or both are resampled with replacement
    (the same draw for both metrics and the human scores), giving replicates
    delta* of the difference; the null distribution is delta* - delta (the
    bootstrap shifted to the null), so the one-sided p-value counts
    delta* >= 2 delta (Berg-Kirkpatrick et al. 2012) and the two-sided one
    |delta* - delta| >= |delta|.  The result also carries the percentile
    interval of delta.

Resampling p-values are (count + 1) / (n + 1) with a relative tie tolerance
of 1e-12 (see :data:`metaeval.stats.inference.RESAMPLING_TOL`), and results keep
the null distribution.  Only cells where the human score and both metrics
are present are used (so the two statistics are computed on the same data).
At ``input`` and ``item`` level both averages are taken over the same
groups: those where *both* metrics' statistics are defined (a metric that is
constant on an input has no correlation there, and averaging each metric
over its own groups would compare averages over different inputs).  This is
done in every resample too; the groups left out are counted
(``n_groups_dropped``) and reported with a
:class:`~metaeval.errors.DegenerateGroupWarning`.  The bootstrap tests leave
out, for the pair statistics, the pairs formed by one original drawn twice
(see :mod:`metaeval.stats.levels`).  Resamples are processed in chunks that
fit the memory budget (:func:`metaeval.stats.resampling.memory_budget`); the
numbers do not depend on it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ._parallel import check_n_jobs, run_units
from ._results import _ARR, _Result
from .data import sysscores as _sys
from ._stacklevel import user_stacklevel
from .data import accepts_frames
from ._signature import make_signature
from ._vocab import (
    ALTERNATIVES,
    CORRECTIONS,
    check_choice,
    check_level_size,
    check_number,
    check_probability,
    human_column,
    metric_columns,
)
from .stats.coefficients import check_method_levels
from .errors import (
    DataError,
    DegenerateGroupWarning,
    InsufficientResamplesWarning,
    ParameterError,
    UndefinedStatisticWarning,
)
from .stats import resampling as _rs
from .stats.cellboot import clear_layouts
from .stats.clusters import mtme_pvalue as _mtme_pvalue
from .stats.clusters import significance_clusters
from .stats.coefficients import DEFAULT_METHOD
from .stats.inference import statistic, story_note
from .stats.levels import check_average, check_level
from .stats.multitest import adjust_pairwise_matrix
from .stats.pairtest import (
    TESTS,
    PairOptions,
    check_test,
    common_cells,
    pair_generator,
    pair_test,
)

#: p-values of :func:`compare_all`'s clusters: metaeval's ``(count + 1) / (n + 1)``
#: or mt-metrics-eval's ``count / n`` (``mtme``, for its exact rule).
CLUSTER_RULES = ("metaeval", "mtme")


@dataclass(frozen=True)
class Comparison(_Result):
    """The test of metric A against metric B.

    Attributes
    ----------
    statistic : float
        delta = statistic_a - statistic_b.
    pvalue : float
        p-value for ``alternative`` (``greater``: A agrees better with humans).
    pvalue_greater, pvalue_less : float
        Both one-sided p-values from the same null distribution.
    ci_low, ci_high : float
        Percentile bootstrap interval of delta (bootstrap tests), else NaN.
    t : float
        Williams' t (``williams`` only, else NaN).
    n : int
        Cells used (present for the human score and both metrics); for
        Williams, the n of the t statistic.
    n_groups : int
        Groups at the level where both statistics are defined (the groups
        compared; 1 or 0 at ``system`` and ``global``).
    n_groups_dropped : int
        Groups left out because the statistic of metric A, of metric B or of
        both is undefined there (``n_groups_a_only`` + ``n_groups_b_only`` +
        those undefined for both).
    n_groups_a_only, n_groups_b_only : int
        Groups where only metric A's (B's) statistic is defined.
    null_distribution : ndarray or None
        Resampled delta under the null (permutation) or delta* - delta
        (bootstrap); with ``sequential``, the draws made.
    n_resamples : int
        Resamples drawn (with ``sequential``, fewer than asked when the test
        stopped early; NaN draws included, counted in ``n_resamples_nan``).
    stopped_early : bool
        With ``sequential``: every p-value stopped before ``n_resamples`` draws.
    notes : str
        Empty, or why the p-value and the interval of a bootstrap test disagree
        (p below ``1 - confidence_level`` beside an interval containing 0, or,
        two-sided, above it beside one excluding 0): the p-value compares the
        shifted replicates ``delta* - delta`` with ``delta``, the interval takes
        the percentiles of ``delta*``; skewed replicates separate the two
        (:func:`metaeval.stats.inference.story_note`).
    """

    metric_a: str
    metric_b: str
    human: str
    level: str
    method: str
    test: str
    alternative: str
    statistic_a: float
    statistic_b: float
    statistic: float
    pvalue: float
    pvalue_greater: float
    pvalue_less: float
    ci_low: float
    ci_high: float
    t: float
    n: int
    n_resamples: int
    n_resamples_nan: int
    signature: str
    null_distribution: np.ndarray | None = field(**_ARR)
    n_groups: int = 0
    n_groups_dropped: int = 0
    n_groups_a_only: int = 0
    n_groups_b_only: int = 0
    stopped_early: bool = False
    notes: str = ""


@dataclass(frozen=True)
class Comparisons(_Result):
    """All-pairs comparison of metrics (:func:`compare_all`).

    Attributes
    ----------
    metrics : tuple of str
        Metrics in the order of the matrices (descending statistic; ties by name).
    statistics : ndarray (K,)
        Each metric's statistic (on its cells shared with the human scores).
    pvalues : ndarray (K, K)
        ``pvalues[i, j]``: p-value of the test of metric i against metric j
        for ``alternative`` (two-sided: symmetric); NaN diagonal.
    pvalues_adjusted : ndarray (K, K)
        After ``correction`` over the K(K-1)/2 pairs (one family).
    cluster_correction : str
        The correction applied to ``better`` before forming the clusters.
    better : ndarray (K, K)
        ``better[i, j]``: one-sided p-value that metric i is better than j.
    clusters : ndarray (K,) of int
        Significance clusters (mt-metrics-eval's greedy ranking; 1 = top),
        from ``better`` (adjusted with ``cluster_correction``) at ``alpha``,
        among the metrics with a defined statistic; 0 for a metric that is
        not ranked (see ``unranked``).
    unranked : tuple of (str, str)
        Metrics with an undefined (NaN) statistic and the reason; they are
        last in ``metrics`` and have no cluster.
    pairs : tuple of Comparison
        Every tested pair (i < j in matrix order).
    """

    metrics: tuple
    statistics: np.ndarray
    pvalues: np.ndarray
    pvalues_adjusted: np.ndarray
    better: np.ndarray
    clusters: np.ndarray
    correction: str
    cluster_correction: str
    alpha: float
    pairs: tuple
    signature: str
    unranked: tuple = ()

    @classmethod
    def frame_columns(cls) -> list[str]:
        """The columns of ``to_frame()``: a :class:`Comparison`'s, then ``pvalue_adjusted``
        and ``pvalue_cluster``."""
        return [*Comparison.frame_columns(), "pvalue_adjusted", "pvalue_cluster"]

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: the :class:`Comparison` fields plus ``pvalue_adjusted``
        (``correction`` over the pairs) and ``pvalue_cluster``: the one-sided p-value of
        "metric_a better than metric_b" adjusted with ``cluster_correction``, the number
        the clusters compare with ``alpha``."""
        rows = []
        idx = {m: k for k, m in enumerate(self.metrics)}
        adj = _adjust_full(np.asarray(self.better, float), self.cluster_correction)
        for c in self.pairs:
            d = c.to_dict()
            i, j = idx[c.metric_a], idx[c.metric_b]
            d["pvalue_adjusted"] = float(self.pvalues_adjusted[i, j])
            d["pvalue_cluster"] = float(adj[i, j])
            rows.append(d)
        return pd.DataFrame(rows, columns=self.frame_columns())

    def separating(self):
        """Per metric: the ``cluster_correction``-adjusted one-sided p-value that
        placed it (:func:`metaeval.stats.clusters.separating_pvalues`: <= alpha
        opens its cluster, > alpha keeps it in the one above) and the metric of
        the current cluster it was read against (None for the first metric and
        for unranked ones)."""
        from .stats.clusters import separating_pvalues

        adj = _adjust_full(np.asarray(self.better, float), self.cluster_correction)
        p, against = separating_pvalues(self.statistics, adj, alpha=self.alpha,
                                        names=list(self.metrics))
        return p, [None if a is None else self.metrics[a] for a in against]

    def ranking_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric, statistic, cluster, p_separating,
        separated_from, reason`` (``cluster`` is missing and ``reason`` says
        why for unranked metrics; ``p_separating`` is the adjusted p-value of
        "``separated_from`` is better than this metric" that decided its
        cluster, see :meth:`separating`)."""
        why = dict(self.unranked)
        p, against = self.separating()
        return pd.DataFrame(
            {
                "metric": list(self.metrics),
                "statistic": self.statistics,
                "cluster": pd.array(
                    [None if m in why else int(c) for m, c in zip(self.metrics, self.clusters)],
                    dtype="Int64",
                ),
                "p_separating": p,
                "separated_from": against,
                "reason": [why.get(m, "") for m in self.metrics],
            }
        )

    def pvalue_frame(self, *, adjusted: bool = True) -> pd.DataFrame:
        m = self.pvalues_adjusted if adjusted else self.pvalues
        return pd.DataFrame(m, index=list(self.metrics), columns=list(self.metrics))

    def get(self, metric_a: str, metric_b: str | None = None, **match):
        """The single :class:`Comparison` of ``metric_a`` with ``metric_b`` (either order of
        the pair as stored) and any other field given; ``KeyError`` unless exactly one."""
        hits = [
            c for c in self.pairs
            if metric_a in (c.metric_a, c.metric_b)
            and (metric_b is None or {metric_a, metric_b} == {c.metric_a, c.metric_b})
            and all(getattr(c, k) == v for k, v in match.items() if v is not None)
        ]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} pairs match metric_a={metric_a!r}, metric_b={metric_b!r}")
        return hits[0]

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict: metrics, statistics, clusters, options, signature and the pairs
        (with ``arrays``, also the p-value matrices and each pair's null distribution)."""
        d = {
            "metrics": list(self.metrics),
            "statistics": self.statistics.tolist(),
            "clusters": self.clusters.tolist(),
            "unranked": [list(u) for u in self.unranked],
            "correction": self.correction,
            "cluster_correction": self.cluster_correction,
            "alpha": self.alpha,
            "signature": self.signature,
            "pairs": [
                dict(c.to_dict(arrays=arrays), pvalue_adjusted=float(self.pvalues_adjusted[i, j]))
                for c, (i, j) in zip(self.pairs, _upper_pairs(len(self.metrics)))
            ],
        }
        if arrays:
            for name in ("pvalues", "pvalues_adjusted", "better"):
                d[name] = np.asarray(getattr(self, name)).tolist()
        return d


def _upper_pairs(k):
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Labels:
    """What a comparison's signature names besides the test's options."""

    human: str
    alternative: str
    seed_tag: str


def _check_sequential(sequential, test):
    """``sequential`` is None (fixed-size test) or an int h >= 1 for a permutation test."""
    if sequential is None:
        return None
    if isinstance(sequential, bool) or not isinstance(sequential, (int, np.integer)) or sequential < 1:
        raise ParameterError(
            f"sequential={sequential!r} must be None (fixed number of resamples) or an int h >= 1 "
            "(Besag-Clifford: stop after h exceedances; option --sequential)"
        )
    if not test.startswith("perm-"):
        raise ParameterError(
            f"sequential={sequential!r} stops permutation tests early; test={test!r} is not one "
            f"(use {', '.join(t for t in TESTS if t.startswith('perm-'))})"
        )
    return int(sequential)


def _pair_test(xa, xb, z, opt: PairOptions, lab: _Labels, gen, n_cells, names):
    a, b = names
    pt = pair_test(xa, xb, z, opt, gen, n_cells)
    groups = _group_counts(pt.defined_a, pt.defined_b)
    sig = make_signature(
        human=lab.human,
        level=opt.level,
        method=opt.method,
        avg=opt.average if opt.level in ("input", "item") else None,
        nan="pairwise",
        common="cells",
        test=opt.test,
        alt=lab.alternative,
        n=opt.n_resamples if opt.test != "williams" else None,
        ci=opt.confidence_level if opt.test.startswith("boot-") else None,
        seed=lab.seed_tag if opt.test != "williams" else None,
        sequential=None if opt.sequential is None else f"besag-clifford:{opt.sequential}",
    )
    return Comparison(
        metric_a=a,
        metric_b=b,
        human=lab.human,
        level=opt.level,
        method=opt.method,
        test=opt.test,
        alternative=lab.alternative,
        statistic_a=pt.statistic_a,
        statistic_b=pt.statistic_b,
        statistic=pt.statistic,
        pvalue=pt.pvalues[lab.alternative],
        pvalue_greater=pt.pvalues["greater"],
        pvalue_less=pt.pvalues["less"],
        ci_low=pt.ci_low,
        ci_high=pt.ci_high,
        t=pt.t,
        n=pt.n,
        n_resamples=0 if opt.test == "williams" else int(pt.null_distribution.size),
        n_resamples_nan=pt.n_resamples_nan,
        signature=sig,
        null_distribution=pt.null_distribution,
        **groups,
        stopped_early=pt.stopped_early,
        notes=story_note(pt.pvalues[lab.alternative], pt.ci_low, pt.ci_high, opt.confidence_level,
                         alternative=lab.alternative,
                         why="the p-value compares the shifted replicates (delta* - delta) with delta, the "
                             "interval takes the percentiles of delta*: skewed replicates separate the two; "
                             "the difference is borderline"),
    )


def _group_counts(da, db):
    da, db = np.asarray(da[0]), np.asarray(db[0])
    return {
        "n_groups": int((da & db).sum()),
        "n_groups_dropped": int((~(da & db)).sum()),
        "n_groups_a_only": int((da & ~db).sum()),
        "n_groups_b_only": int((db & ~da).sum()),
    }


def _warn_pair(c: Comparison):
    """Warnings of one comparison, raised in the calling process from its counts."""
    if c.n_groups_a_only or c.n_groups_b_only:
        warnings.warn(
            f"{c.method} at level {c.level!r}: of the groups where only one metric's statistic "
            f"is defined, {c.n_groups_a_only} ({c.metric_a!r} only) and {c.n_groups_b_only} "
            f"({c.metric_b!r} only) are left out, so both are averaged over the same "
            f"{c.n_groups} groups (counted in n_groups_dropped)",
            DegenerateGroupWarning,
            stacklevel=user_stacklevel(),
        )
    if not np.isfinite(c.statistic):
        warnings.warn(
            f"{c.method} at level {c.level!r}: the comparison of {c.metric_a!r} with "
            f"{c.metric_b!r} is undefined (no group where both statistics are defined); "
            "statistic, p-values and interval are NaN",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    elif c.test == "williams" and not np.isfinite(c.pvalue):
        warnings.warn(
            f"Williams' test of {c.metric_a!r} against {c.metric_b!r} at level {c.level!r} is "
            f"undefined here (its t has n - 3 degrees of freedom and needs |r| < 1 for all three "
            f"correlations; n = {c.n}): the p-value is NaN; use a permutation test "
            "(test='perm-both') or more units",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )


def _validate(dataset, human, level, method, test, average, n_resamples, alternative, cl):
    human = human_column(dataset, human)
    if not isinstance(level, str) or not isinstance(method, str):
        raise ParameterError("compare takes one level and one method (strings)")
    level = check_level(level)
    check_method_levels(method, [level])
    check_test(test, method)
    average = check_average(average)
    n_resamples = _rs.check_n_resamples(n_resamples)
    check_choice(alternative, "alternative", ALTERNATIVES)
    check_probability(cl)
    check_level_size(dataset, level)
    return human, level, average, n_resamples


@accepts_frames(human="human")
def compare(
    dataset,
    human: str,
    metric_a: str,
    metric_b: str,
    *,
    level: str = "system",
    method: str = DEFAULT_METHOD,
    test: str = "perm-both",
    average: str = "macro",
    n_resamples: int = 1000,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    rng=None,
    memory_budget=None,
    sequential: int | None = None,
    system_scores: str | None = None,
) -> Comparison:
    """Test whether metric A agrees with the human scores better than metric B.

    Parameters
    ----------
    dataset : Dataset
    human : str
        Human score column.
    metric_a, metric_b : str
        The two metrics (``alternative="greater"`` means A is better).
    level, method, average
        As in :func:`metaeval.correlate`.
    test : str
        One of :data:`TESTS` (module docstring).
    n_resamples : int
        Permutations or bootstrap replicates (default 1000).
    alternative : {"two-sided", "greater", "less"}
    confidence_level : float
        For the bootstrap interval of the difference.
    rng : seed, optional
        See :func:`metaeval.correlate`.
    memory_budget : int or str, optional
        See :func:`metaeval.correlate` (chunks of resamples; the numbers do
        not depend on it).
    sequential : int, optional
        Permutation tests only: stop early by Besag and Clifford's (1991)
        sequential rule with ``h = sequential`` (default None: always
        ``n_resamples`` draws).  Each of the three p-values (two-sided,
        greater, less) draws until ``h`` permuted differences are at least as
        extreme as the observed one (``p = h / L`` after ``L`` finite draws) or
        ``n_resamples`` draws (then the usual ``(count + 1) / (n + 1)``); the
        draws stop when all three have stopped.  Guarantee: each p-value is
        valid, ``P(p <= a) <= a`` under the null for every ``a``, and equals
        the fixed-size p-value whenever fewer than ``h`` of the
        ``n_resamples`` draws reach the observed difference; the draws made
        are the first ones of the fixed-size test (same ``rng``).  A stopped
        p-value is ``h / L >= h / n_resamples``, so with
        ``h >= alpha * (n_resamples + 1)`` every decision at level ``alpha``
        is the fixed-size test's (p <= alpha unchanged, p > alpha stays
        above); a smaller ``h`` saves more draws but can move p-values near
        ``alpha`` across it.  It saves draws on pairs that are far from
        significant (about ``h / p`` draws).  Recorded in the signature
        (``sequential:besag-clifford:h``).  See :mod:`metaeval.stats.sequential`.
    system_scores : {None, "given", "mean"}
        At ``system`` level, use the dataset's given system-level scores
        (corpus BLEU, ``.sys.score`` files) or the means of the cells, as in
        :func:`metaeval.correlate` (recorded as ``sys:...`` in the
        signature).  Tests that resample or permute inputs (``boot-inputs``,
        ``boot-both``, ``perm-inputs``, ``perm-both-rowcol``) are refused on
        given scores; ``perm-both`` then swaps whole systems' scores, as
        mt-metrics-eval does with ``.sys.score`` files.

    Returns
    -------
    Comparison

    Warns
    -----
    DegenerateGroupWarning
        When groups where only one metric's statistic is defined are left
        out (counted in ``n_groups_dropped``).
    UndefinedStatisticWarning
        When no group has both statistics defined (everything is NaN).

    Examples
    --------
    >>> import metaeval
    >>> ds = metaeval.load_dataset("summeval")
    >>> c = metaeval.compare(ds, "coherence", "ROUGE.1", "ROUGE.1", rng=0)
    >>> c.statistic, c.pvalue
    (0.0, 1.0)
    """
    human, level, average, n_resamples = _validate(
        dataset, human, level, method, test, average, n_resamples, alternative, confidence_level
    )
    sequential = _check_sequential(sequential, test)
    cols = metric_columns(dataset, [metric_a, metric_b])
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    opt = PairOptions(level=level, method=method, test=test, average=average,
                      n_resamples=n_resamples, confidence_level=confidence_level, budget=budget,
                      sequential=sequential)
    lab = _Labels(human=human, alternative=alternative, seed_tag=tag)
    sys_mode = _sys.check_mode(system_scores)
    mats, systag = [dataset.scores(c) for c in (cols[0], cols[1], human)], None
    if level == "system":
        _sys.note_given(dataset, [cols[0], cols[1], human], sys_mode)
        mats, systag = _sys.system_level_matrices(
            dataset, [cols[0], cols[1], human], ["a", "b", "human"], sys_mode
        )
        _refuse_input_resampling(test, systag, dataset, [cols[0], cols[1], human])
    xa, xb, z, n = common_cells(*mats)
    if n < 2:
        raise DataError(
            f"metrics {metric_a!r} and {metric_b!r} share fewer than 2 cells with {human!r}"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            c = _pair_test(xa, xb, z, opt, lab, pair_generator(ss, metric_a, metric_b), n, cols)
    finally:
        clear_layouts()
    if systag is not None:
        c = replace(c, signature=_sys.add_sys_key(c.signature, systag))
    _warn_pair(c)
    return c


def _refuse_input_resampling(test, systag, dataset, cols):
    """Refuse an input-resampling test of a unit (metrics and human ``cols``) that uses
    given system scores; the message names the columns that have them."""
    if test in _sys.INPUT_RESAMPLING and systag and systag.startswith("given"):
        given = [c for c in dict.fromkeys(cols) if dataset.system_score(c) is not None]
        raise ParameterError(_sys.input_resampling_message(given, f"test={test!r}"))


@accepts_frames(human="human")
def compare_all(
    dataset,
    human: str,
    *,
    metrics=None,
    level: str = "system",
    method: str = DEFAULT_METHOD,
    test: str = "perm-both",
    average: str = "macro",
    n_resamples: int = 1000,
    alternative: str = "two-sided",
    correction: str = "holm",
    cluster_correction: str | None = None,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    rng=None,
    n_jobs: int = 1,
    progress=None,
    clusters: str = "metaeval",
    memory_budget=None,
    sequential: int | None = None,
    system_scores: str | None = None,
) -> Comparisons:
    """Compare every pair of metrics; p-value matrix, correction and clusters.

    ``clusters="mtme"`` forms the clusters (and ``better``) from
    mt-metrics-eval's one-sided permutation p-value ``count / n``
    (:func:`metaeval.stats.clusters.mtme_pvalue`) instead of
    ``(count + 1) / (n + 1)``, which reproduces mt-metrics-eval's
    ``AssignRanks`` on the same draws (permutation tests only); see
    :mod:`metaeval.stats.clusters` for why the two can differ.

    Metrics are ordered by their statistic (descending, ties by name); each
    pair i < j is tested once (:func:`compare`), giving the two-sided and both
    one-sided p-values from the same null distribution.  ``correction``
    (``holm``, ``bh``, ``bonferroni`` or ``none``: :data:`CORRECTIONS`) is
    applied to the p-value matrix over the K(K-1)/2 pairs as one family.  Significance clusters follow
    mt-metrics-eval's greedy rule (a metric starts a new cluster when a
    metric of the current cluster is significantly better, one-sided
    p <= ``alpha``), on p-values adjusted with ``cluster_correction``.
    The default (None) is the one clustering rule of compare, the report and
    :mod:`metaeval.wmt`: ``holm`` over the K(K-1)/2 one-sided tests, except
    with ``clusters="mtme"``, where it is ``none`` so that mt-metrics-eval's
    exact rule (``count / n``, uncorrected, as WMT) is reproduced.  The
    signature's ``clusters`` key records the correction used (and ``:mtme``);
    :meth:`Comparisons.ranking_frame` gives the adjusted p-value that placed
    each metric (``p_separating``).  When the smallest
    possible resampling p-value cannot reach ``alpha`` after a correction,
    an :class:`~metaeval.errors.InsufficientResamplesWarning` says how many
    resamples are needed.

    Each pair's random stream is derived from the seed and the two metric
    names only, so results do not depend on ``n_jobs`` or on which other
    metrics are compared.

    A metric whose own statistic is undefined (NaN: for example constant
    scores, or no group with a defined correlation) is not ranked: it comes
    last, gets cluster 0 (no cluster) and its reason is in ``unranked``; it
    never takes part in the clusters of the others.  Its pairs are still
    tested (and are NaN when the comparison is undefined).  ``memory_budget``
    is as in :func:`metaeval.correlate`.

    ``sequential=h`` (permutation tests, default None) stops each pair's test
    early by Besag and Clifford's rule, as in :func:`compare`: every p-value
    (hence ``pvalues`` and ``better``) stays valid and pairs far from
    significance need about ``h / p`` draws instead of ``n_resamples``.
    With ``h >= alpha * (n_resamples + 1)`` and ``cluster_correction="none"``
    the clusters are those of the fixed-size test (each one-sided decision at
    ``alpha`` is unchanged); a smaller ``h`` can move borderline pairs.  Not
    with ``clusters="mtme"`` (mt-metrics-eval's ``count / n`` needs the fixed
    ``n``).  Recorded in the signature.

    ``system_scores`` (``None``, ``"given"``, ``"mean"``) chooses, at
    ``system`` level, between the dataset's given system-level scores and
    the means of the cells, as in :func:`compare`.
    """
    human, level, average, n_resamples = _validate(
        dataset, human, level, method, test, average, n_resamples, alternative, confidence_level
    )
    check_choice(correction, "correction", CORRECTIONS)
    check_choice(clusters, "clusters", CLUSTER_RULES)
    if cluster_correction is None:
        cluster_correction = "none" if clusters == "mtme" else "holm"
    check_choice(cluster_correction, "cluster_correction", CORRECTIONS)
    sequential = _check_sequential(sequential, test)
    if sequential is not None and clusters == "mtme":
        raise ParameterError(
            f"sequential={sequential!r} cannot be combined with clusters='mtme' (mt-metrics-eval's "
            "count/n p-value needs all n_resamples draws); use clusters='metaeval' or sequential=None"
        )
    if clusters == "mtme" and not test.startswith("perm-"):
        raise ParameterError(
            f"clusters='mtme' needs a permutation test (mt-metrics-eval's count/n p-value); "
            f"test={test!r} is not one (use test='perm-both')"
        )
    check_number(alpha, "alpha", lo=0, hi=1, open_lo=True, open_hi=True)
    check_n_jobs(n_jobs)
    metrics = metric_columns(dataset, metrics, distinct=True, minimum=2, what="compare_all")
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    opt = PairOptions(level=level, method=method, test=test, average=average,
                      n_resamples=n_resamples, confidence_level=confidence_level, budget=budget,
                      sequential=sequential)
    lab = _Labels(human=human, alternative=alternative, seed_tag=tag)
    sys_mode = _sys.check_mode(system_scores)

    def unit(cols, roles):
        """The unit's score matrices (system-level scores when given) and sys tag."""
        if level != "system":
            return [dataset.scores(c) for c in cols], None
        return _sys.system_level_matrices(dataset, cols, roles, sys_mode)

    if level == "system":
        _sys.note_given(dataset, [*metrics, human], sys_mode)
        for m in metrics:
            _refuse_input_resampling(test, unit([m, human], ["a", "human"])[1], dataset,
                                     [m, human])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # each metric's own statistic on its cells shared with the human scores
        own = {m: float(statistic(*unit([m, human], ["metric", "human"])[0], level, method,
                                  average)[0])
               for m in metrics}
    order = sorted(metrics, key=lambda m: (-own[m] if np.isfinite(own[m]) else np.inf, m))
    K = len(order)
    units = _upper_pairs(K)

    def work(ij):
        i, j = ij
        a, b = order[i], order[j]
        mats, tag = unit([a, b, human], ["a", "b", "human"])
        xa, xb, zz, n = common_cells(*mats)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            c = _pair_test(xa, xb, zz, opt, lab, pair_generator(ss, a, b), n, (a, b))
        return c if tag is None else replace(c, signature=_sys.add_sys_key(c.signature, tag))

    try:
        pairs = run_units(work, units, n_jobs=n_jobs, progress=progress)
    finally:
        clear_layouts()
    for c in pairs:
        _warn_pair(c)
    P = np.full((K, K), np.nan)
    better = np.full((K, K), np.nan)
    for (i, j), c in zip(units, pairs):
        if alternative == "two-sided":
            P[i, j] = P[j, i] = c.pvalue
        else:
            P[i, j] = c.pvalue
            P[j, i] = c.pvalue_less if alternative == "greater" else c.pvalue_greater
        if clusters == "mtme":
            better[i, j] = _mtme_pvalue(c.null_distribution, c.statistic)
            better[j, i] = _mtme_pvalue(-np.asarray(c.null_distribution), -c.statistic)
        else:
            better[i, j] = c.pvalue_greater
            better[j, i] = c.pvalue_less
    P_adj = adjust_pairwise_matrix(P, method=correction) if alternative == "two-sided" else _adjust_full(P, correction)
    better_adj = _adjust_full(better, cluster_correction)
    if test != "williams":
        _warn_resolution(n_resamples, K * (K - 1) // 2, alpha, correction, cluster_correction)
    stats_arr = np.array([own[m] for m in order])
    ranked = np.isfinite(stats_arr)
    ranks = np.zeros(K, int)  # 0: not ranked
    if ranked.any():
        idx = np.flatnonzero(ranked)
        ranks[idx] = significance_clusters(
            stats_arr[idx], better_adj[np.ix_(idx, idx)], alpha=alpha,
            names=[order[i] for i in idx],
        )
    unranked = tuple(
        (order[i], f"its {method} at level {level!r} is undefined (NaN): constant scores or "
         "too few valid pairs in every group")
        for i in np.flatnonzero(~ranked)
    )
    if unranked:
        warnings.warn(
            f"compare_all: {', '.join(repr(m) for m, _ in unranked)} not ranked (statistic "
            "undefined); cluster 0, listed in unranked",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    sig = make_signature(
        human=human,
        level=level,
        method=method,
        avg=average if level in ("input", "item") else None,
        nan="pairwise",
        common="cells",
        test=test,
        alt=alternative,
        n=n_resamples if test != "williams" else None,
        correction=correction,
        clusters=cluster_correction if clusters == "metaeval" else f"{cluster_correction}:mtme",
        alpha=alpha,
        seed=tag if test != "williams" else None,
        sequential=None if sequential is None else f"besag-clifford:{sequential}",
    )
    if level == "system":
        tags = {unit([m, human], ["metric", "human"])[1] for m in metrics}
        tags.discard(None)
        if tags:  # one tag when every metric agrees, else each metric's own
            sig = _sys.add_sys_key(sig, tags.pop() if len(tags) == 1 else "mixed")
    return Comparisons(
        metrics=tuple(order),
        statistics=np.array([own[m] for m in order]),
        pvalues=P,
        pvalues_adjusted=P_adj,
        better=better,
        clusters=np.asarray(ranks),
        unranked=unranked,
        correction=correction,
        cluster_correction=cluster_correction,
        alpha=float(alpha),
        pairs=tuple(pairs),
        signature=sig,
    )


def _warn_resolution(n_resamples, n_tests, alpha, *corrections):
    """Warn when no pair can reach ``alpha`` after a correction: the smallest
    resampling p-value is 1 / (n_resamples + 1), and Holm multiplies the
    smallest by the number of tests (BH too, for a single rejection)."""
    pmin = 1.0 / (n_resamples + 1)
    bad = sorted({c for c in corrections if c != "none" and pmin * n_tests > alpha})
    if bad:
        warnings.warn(
            f"with n_resamples={n_resamples} the smallest p-value is {pmin:.2g}; after "
            f"{'/'.join(bad)} over {n_tests} pairs it exceeds alpha={alpha}, so no pair can be "
            f"significant; use n_resamples >= {int(np.ceil(n_tests / alpha))}",
            InsufficientResamplesWarning,
            stacklevel=user_stacklevel(),
        )


def _adjust_full(P, correction):
    """Adjust an asymmetric matrix of one-sided p-values: the upper-triangle
    tests (i better than j, i < j) form the family used by the clusters."""
    from .stats.clusters import adjust_better

    return adjust_better(P, correction)


__all__ = ["compare", "compare_all", "CLUSTER_RULES", "Comparison", "Comparisons", "TESTS", "CORRECTIONS"]
