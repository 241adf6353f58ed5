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
of 1e-12 (see :data:`metaeval.correlation.RESAMPLING_TOL`), and results keep
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
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from ._parallel import check_n_jobs, run_units
from ._stacklevel import user_stacklevel
from .data._accept import accepts_frames
from ._signature import make_signature
from .correlation import (
    ALTERNATIVES,
    _as_list,
    _exceeds,
    _check_choice,
    _distinct_metric_columns,
    _human_column,
    _metric_columns,
    check_level_size,
    percentile_interval,
    resampling_pvalue,
)
from .errors import (
    DataError,
    DegenerateGroupWarning,
    InsufficientResamplesWarning,
    ParameterError,
    UndefinedStatisticWarning,
)
from .stats import resampling as _rs
from .stats.clusters import mtme_pvalue as _mtme_pvalue
from .stats.clusters import significance_clusters
from .stats.coefficients import DEFAULT_METHOD, get_coefficient
from .stats.levels import (
    DUP_VARIANTS,
    _aggregate,
    arrange,
    check_average,
    check_level,
    grouped_values,
)
from .stats.multitest import adjust_pairwise_matrix
from .stats.sequential import sequential_pvalues
from .stats.williams import williams_test

TESTS = (
    "perm-both",
    "perm-systems",
    "perm-inputs",
    "perm-both-rowcol",
    "williams",
    "boot-systems",
    "boot-inputs",
    "boot-both",
)
_PERM_SCHEME = {
    "perm-both": "both",
    "perm-systems": "systems",
    "perm-inputs": "inputs",
    "perm-both-rowcol": "both-rowcol",
}
CORRECTIONS = ("holm", "bh", "none")
_WILLIAMS_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")


@dataclass(frozen=True)
class Comparison:
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
    null_distribution: np.ndarray | None = field(default=None, repr=False, compare=False)
    n_groups: int = 0
    n_groups_dropped: int = 0
    n_groups_a_only: int = 0
    n_groups_b_only: int = 0
    stopped_early: bool = False

    def to_dict(self, *, arrays: bool = False) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "null_distribution"}
        if arrays:
            nd = self.null_distribution
            d["null_distribution"] = None if nd is None else nd.tolist()
        return d


@dataclass(frozen=True)
class Comparisons:
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

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: the :class:`Comparison` fields plus ``pvalue_adjusted``."""
        rows = []
        idx = {m: k for k, m in enumerate(self.metrics)}
        for c in self.pairs:
            d = c.to_dict()
            d["pvalue_adjusted"] = float(self.pvalues_adjusted[idx[c.metric_a], idx[c.metric_b]])
            rows.append(d)
        return pd.DataFrame(rows)

    def ranking_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric, statistic, cluster, reason``
        (``cluster`` is missing and ``reason`` says why for unranked metrics)."""
        why = dict(self.unranked)
        return pd.DataFrame(
            {
                "metric": list(self.metrics),
                "statistic": self.statistics,
                "cluster": pd.array(
                    [None if m in why else int(c) for m, c in zip(self.metrics, self.clusters)],
                    dtype="Int64",
                ),
                "reason": [why.get(m, "") for m in self.metrics],
            }
        )

    def pvalue_frame(self, *, adjusted: bool = True) -> pd.DataFrame:
        m = self.pvalues_adjusted if adjusted else self.pvalues
        return pd.DataFrame(m, index=list(self.metrics), columns=list(self.metrics))

    def to_dict(self) -> dict:
        return {
            "metrics": list(self.metrics),
            "statistics": self.statistics.tolist(),
            "clusters": self.clusters.tolist(),
            "unranked": [list(u) for u in self.unranked],
            "correction": self.correction,
            "cluster_correction": self.cluster_correction,
            "alpha": self.alpha,
            "signature": self.signature,
            "pairs": [
                dict(c.to_dict(), pvalue_adjusted=float(self.pvalues_adjusted[i, j]))
                for c, (i, j) in zip(self.pairs, _upper_pairs(len(self.metrics)))
            ],
        }


def _upper_pairs(k):
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Opt:
    human: str
    level: str
    method: str
    test: str
    average: str
    n_resamples: int
    alternative: str
    confidence_level: float
    seed_tag: str
    budget: int | None = None
    sequential: int | None = None


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


def _sequential_null(gen, xa, xb, z, opt, delta):
    """Perm test with Besag-Clifford early stopping on the three p-values.

    The swap masks are those of the fixed-size test (same stream, same
    order); each mask chunk is evaluated in growing blocks (2h, 4h, ...
    draws, at least 16) so that few draws past the stopping point are
    computed.  Returns ``(null, {alternative: pvalue}, stopped)``.
    """
    N, M = z.shape
    h = opt.sequential
    za, zb = _zscore(xa), _zscore(xb)

    def blocks():
        size = max(16, 2 * h)
        for _, w in _rs.swap_mask_chunks(gen, opt.n_resamples, N, M, _PERM_SCHEME[opt.test], opt.budget):
            s = 0
            while s < w.shape[0]:
                e = min(s + size, w.shape[0])
                ws = w[s:e]
                yield _pair_delta(np.where(ws, zb, za), np.where(ws, za, zb), z, opt)
                s, size = e, size * 2

    if not np.isfinite(delta):
        return np.empty(0), {alt: np.nan for alt in ALTERNATIVES}, False
    r = sequential_pvalues(
        blocks(),
        lambda b: np.stack([_exceeds(b, delta, alt, False) for alt in ALTERNATIVES]),
        h=h,
        n=opt.n_resamples + 1,
    )
    pv = {alt: float(p) for alt, p in zip(ALTERNATIVES, r.pvalues)}
    return r.null, pv, bool(r.stopped.all())


def _check_test(test, method):
    _check_choice(test, "test", TESTS)
    if test == "williams" and method not in _WILLIAMS_METHODS:
        raise ParameterError(
            f"test='williams' compares correlations; method={method!r} is not one "
            f"(use {', '.join(_WILLIAMS_METHODS)}, or a permutation test)"
        )
    return test


def _zscore(a):
    m = np.nanmean(a)
    s = np.nanstd(a)
    return (a - m) / s if s > 0 else a - m


def _common(x, y, z):
    """Restrict the three matrices to the cells where all are finite."""
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    return np.where(ok, x, np.nan), np.where(ok, y, np.nan), np.where(ok, z, np.nan), int(ok.sum())


def _stat(x, z, opt, detail=False):
    xg, zg = arrange(x, z, opt.level)
    return grouped_values(xg, zg, opt.method, average=opt.average, detail=detail).value


def _values(x, z, opt, dup=None):
    xg, zg = arrange(x, z, opt.level)
    return grouped_values(xg, zg, opt.method, average=opt.average, detail=False, dup_pairs=dup)


def _pair_values(xa, xb, z, opt, dup=None):
    """Both metrics' statistics (B,) averaged over the groups where both are
    defined, and the per-group definedness (B, G) of each."""
    la = _values(xa, z, opt, dup)
    lb = _values(xb, z, opt, dup)
    if la.weight is None:  # acc_eq: a group is defined by its pairs, the same for both
        da = db = la.n_valid >= 2
        return la.value, lb.value, da, db
    da, db = np.isfinite(la.group), np.isfinite(lb.group)
    both = da & db
    va = _aggregate(la.group, np.where(both, la.weight, 0.0))
    vb = _aggregate(lb.group, np.where(both, lb.weight, 0.0))
    return va, vb, da, db


def _pair_delta(xa, xb, z, opt, dup=None):
    va, vb, _, _ = _pair_values(xa, xb, z, opt, dup)
    return va - vb


def _williams(xa, xb, z, opt):
    va, vb, _, _ = _pair_values(xa, xb, z, opt)
    sa, sb = float(va[0]), float(vb[0])
    sab = float(_stat(xa, xb, opt)[0])
    ag, _ = arrange(xa, z, opt.level)
    nv = np.isfinite(ag[0]).sum(-1)
    n = int(nv.max()) if nv.size else 0
    t, p2 = williams_test(sa, sb, sab, n, alternative="two-sided")
    _, pg = williams_test(sa, sb, sab, n, alternative="greater")
    _, pl = williams_test(sa, sb, sab, n, alternative="less")
    return sa, sb, float(t), float(p2), float(pg), float(pl), n


def _pair_test(xa, xb, z, opt: _Opt, gen, n_cells, names):
    a, b = names
    t = np.nan
    ci = (np.nan, np.nan)
    null = None
    n_nan = 0
    stopped = False
    if opt.test == "williams":
        sa, sb, t, p2, pg, pl, n = _williams(xa, xb, z, opt)
        delta = sa - sb
        pv = {"two-sided": p2, "greater": pg, "less": pl}
        _, _, da, db = _pair_values(xa, xb, z, opt)
    else:
        va, vb, da, db = _pair_values(xa, xb, z, opt)
        sa, sb = float(va[0]), float(vb[0])
        delta = sa - sb
        N, M = z.shape
        B = opt.n_resamples
        null = np.empty(B)
        if opt.sequential is not None:
            null, pv, stopped = _sequential_null(gen, xa, xb, z, opt, delta)
        elif opt.test.startswith("perm-"):
            za, zb = _zscore(xa), _zscore(xb)
            for sl, w in _rs.swap_mask_chunks(gen, B, N, M, _PERM_SCHEME[opt.test], opt.budget):
                null[sl] = _pair_delta(np.where(w, zb, za), np.where(w, za, zb), z, opt)
        else:
            valid = np.isfinite(z)
            dup_needed = opt.method in DUP_VARIANTS or opt.method == "acc_eq"
            chunks = _rs.bootstrap_chunks(gen, B, N, M, opt.test[5:], opt.budget)
            for sl, rows, cols in chunks:
                dup = _rs.duplicate_pairs(rows, cols, valid, opt.level) if dup_needed else None
                null[sl] = _pair_delta(
                    _rs.take_cells(xa, rows, cols),
                    _rs.take_cells(xb, rows, cols),
                    _rs.take_cells(z, rows, cols),
                    opt,
                    dup,
                )
            boot = null
            if np.isfinite(delta):
                ci = percentile_interval(boot, opt.confidence_level)
            null = boot - delta
        n_nan = int((~np.isfinite(null)).sum())
        if opt.sequential is None:
            pv = {alt: resampling_pvalue(null, delta, alt) for alt in ALTERNATIVES}
        n = n_cells
    groups = _group_counts(da, db)
    sig = make_signature(
        human=opt.human,
        level=opt.level,
        method=opt.method,
        avg=opt.average if opt.level in ("input", "item") else None,
        nan="pairwise",
        common="cells",
        test=opt.test,
        alt=opt.alternative,
        n=opt.n_resamples if opt.test != "williams" else None,
        ci=opt.confidence_level if opt.test.startswith("boot-") else None,
        seed=opt.seed_tag if opt.test != "williams" else None,
        sequential=None if opt.sequential is None else f"besag-clifford:{opt.sequential}",
    )
    return Comparison(
        metric_a=a,
        metric_b=b,
        human=opt.human,
        level=opt.level,
        method=opt.method,
        test=opt.test,
        alternative=opt.alternative,
        statistic_a=sa,
        statistic_b=sb,
        statistic=float(delta),
        pvalue=float(pv[opt.alternative]),
        pvalue_greater=float(pv["greater"]),
        pvalue_less=float(pv["less"]),
        ci_low=float(ci[0]),
        ci_high=float(ci[1]),
        t=float(t),
        n=int(n),
        n_resamples=0 if opt.test == "williams" else int(null.size),
        n_resamples_nan=n_nan,
        signature=sig,
        null_distribution=null,
        **groups,
        stopped_early=stopped,
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


def _pair_generator(ss, a, b):
    """The pair's stream: a function of the seed and the *unordered* pair of
    names, so compare(A, B) and compare(B, A) use the same draws (their null
    distributions are exact mirrors) and agree with compare_all."""
    return _rs.named_generator(ss, *sorted((a, b)))


def _validate(dataset, human, level, method, test, average, n_resamples, alternative, cl):
    human = _human_column(dataset, human)
    if not isinstance(level, str) or not isinstance(method, str):
        raise ParameterError("compare takes one level and one method (strings)")
    level = check_level(level)
    coef = get_coefficient(method)
    if coef.levels is not None and level not in coef.levels:
        raise ParameterError(f"method={method!r} is defined only at level {', '.join(coef.levels)}")
    _check_test(test, method)
    average = check_average(average)
    n_resamples = _rs.check_n_resamples(n_resamples)
    _check_choice(alternative, "alternative", ALTERNATIVES)
    if not isinstance(cl, (int, float)) or not 0 < cl < 1:
        raise ParameterError(f"confidence_level={cl!r} must be a number in (0, 1)")
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
    cols = _metric_columns(dataset, [metric_a, metric_b])
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    opt = _Opt(
        human, level, method, test, average, n_resamples, alternative, confidence_level, tag,
        budget, sequential,
    )
    xa, xb, z, n = _common(dataset.scores(cols[0]), dataset.scores(cols[1]), dataset.scores(human))
    if n < 2:
        raise DataError(
            f"metrics {metric_a!r} and {metric_b!r} share fewer than 2 cells with {human!r}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        c = _pair_test(xa, xb, z, opt, _pair_generator(ss, metric_a, metric_b), n, cols)
    _warn_pair(c)
    return c


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
    cluster_correction: str = "none",
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    rng=None,
    n_jobs: int = 1,
    progress=None,
    clusters: str = "metaeval",
    memory_budget=None,
    sequential: int | None = None,
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
    (``holm``, ``bh`` or ``none``) is applied to the p-value matrix over the
    K(K-1)/2 pairs as one family.  Significance clusters follow
    mt-metrics-eval's greedy rule (a metric starts a new cluster when a
    metric of the current cluster is significantly better, one-sided
    p <= ``alpha``), on p-values adjusted with ``cluster_correction``
    (default ``none``, as mt-metrics-eval and WMT do).  When the smallest
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
    """
    human, level, average, n_resamples = _validate(
        dataset, human, level, method, test, average, n_resamples, alternative, confidence_level
    )
    _check_choice(correction, "correction", CORRECTIONS)
    _check_choice(cluster_correction, "cluster_correction", CORRECTIONS)
    _check_choice(clusters, "clusters", ("metaeval", "mtme"))
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
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ParameterError(f"alpha={alpha!r} must be in (0, 1)")
    check_n_jobs(n_jobs)
    metrics = _distinct_metric_columns(dataset, metrics, minimum=2, what="compare_all")
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    opt = _Opt(
        human, level, method, test, average, n_resamples, alternative, confidence_level, tag,
        budget, sequential,
    )
    z = dataset.scores(human)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # each metric's own statistic on its cells shared with the human scores
        own = {m: float(_stat(dataset.scores(m), z, opt)[0]) for m in metrics}
    order = sorted(metrics, key=lambda m: (-own[m] if np.isfinite(own[m]) else np.inf, m))
    K = len(order)
    units = _upper_pairs(K)

    def work(ij):
        i, j = ij
        a, b = order[i], order[j]
        xa, xb, zz, n = _common(dataset.scores(a), dataset.scores(b), z)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return _pair_test(xa, xb, zz, opt, _pair_generator(ss, a, b), n, (a, b))

    pairs = run_units(work, units, n_jobs=n_jobs, progress=progress)
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
    from .stats.multitest import adjust_pvalues

    out = np.full_like(P, np.nan)
    iu = np.triu_indices(P.shape[0], 1)
    out[iu] = adjust_pvalues(P[iu], method=correction)
    il = (iu[1], iu[0])
    out[il] = adjust_pvalues(P[il], method=correction)
    return out


__all__ = ["compare", "compare_all", "Comparison", "Comparisons", "TESTS", "CORRECTIONS"]
