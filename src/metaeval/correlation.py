"""How well each metric agrees with humans: :func:`correlate`.

Every metric of a :class:`~metaeval.Dataset` is correlated with a human score
column at the requested grouping levels (``system``, ``input``, ``item``,
``global``; see :mod:`metaeval.stats.levels`) with the requested coefficients
(see :mod:`metaeval.stats.coefficients`), each with a p-value, a confidence
interval, the counts of what was used and dropped, and a signature.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
from scipy import stats as _st

from ._parallel import check_n_jobs, run_units
from ._stacklevel import user_stacklevel
from .data._accept import accepts_frames
from ._signature import make_signature
from .errors import (
    ConstantInputWarning,
    DataError,
    ParameterError,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
)
from .stats import resampling as _rs
from .stats.cellboot import CellBootstrap
from .stats.coefficients import fisher_interval, get_coefficient
from .stats.levels import (
    DUP_VARIANTS,
    arrange,
    check_average,
    check_level,
    grouped_values,
    level_values,
)

CI_METHODS = ("none", "fisher", "boot-systems", "boot-inputs", "boot-both")
PVALUE_METHODS = ("auto", "permutation", "none")
ALTERNATIVES = ("two-sided", "greater", "less")

# Relative tolerance when comparing resampled statistics with the observed one.
RESAMPLING_TOL = 1e-12
# Bootstrap intervals warn when more than this share of replicates is NaN.
NAN_REPLICATE_WARN = 0.05


@dataclass(frozen=True)
class Correlation:
    """One metric x human x level x method result.

    Attributes
    ----------
    statistic : float
        The coefficient (averaged over groups at ``input`` and ``item``).
    pvalue : float
        NaN when none is defined (see :func:`correlate`, ``pvalue``).
    ci_low, ci_high : float
        Confidence interval bounds (NaN when ``ci="none"`` or undefined).
    n : int
        Valid (metric, human) pairs used: systems at ``system`` level, cells
        at the other levels (summed over the groups that were used).
    n_groups : int
        Groups at this level (1 for ``system`` and ``global``).
    n_groups_dropped : int
        Groups whose statistic was undefined (``n_constant + n_too_few``).
    n_constant, n_too_few : int
        Dropped groups with constant scores / fewer than two valid pairs.
    epsilon : float
        The calibrated metric tie threshold (``acc_eq`` only, else NaN).
    n_resamples_nan : int
        Bootstrap or permutation replicates whose statistic was undefined.
    distribution : ndarray or None
        Bootstrap replicates (``ci="boot-*"``) of the statistic.
    null_distribution : ndarray or None
        Permutation null distribution (``pvalue="permutation"``).
    group_statistics : ndarray
        Per-group statistics (one value for ``system``/``global``).
    """

    metric: str
    human: str
    level: str
    method: str
    statistic: float
    pvalue: float
    ci_low: float
    ci_high: float
    n: int
    n_groups: int
    n_groups_dropped: int
    n_constant: int
    n_too_few: int
    epsilon: float
    average: str
    alternative: str
    confidence_level: float
    ci_method: str
    pvalue_method: str
    n_resamples_nan: int
    signature: str
    distribution: np.ndarray | None = field(default=None, repr=False, compare=False)
    null_distribution: np.ndarray | None = field(default=None, repr=False, compare=False)
    group_statistics: np.ndarray | None = field(default=None, repr=False, compare=False)

    _ARRAYS = ("distribution", "null_distribution", "group_statistics")

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict of the scalar fields (and the arrays as lists if ``arrays``)."""
        d = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in self._ARRAYS:
                if arrays:
                    d[f.name] = None if v is None else np.asarray(v).tolist()
                continue
            d[f.name] = v
        return d


@dataclass(frozen=True)
class Correlations:
    """The results of :func:`correlate`: a sequence of :class:`Correlation`.

    ``to_frame()`` gives one row per result with the columns ``metric, human,
    level, method, statistic, pvalue, ci_low, ci_high, n, n_groups,
    n_groups_dropped, n_constant, n_too_few, epsilon, average, alternative,
    confidence_level, ci_method, pvalue_method, n_resamples_nan, signature``.
    """

    results: tuple[Correlation, ...]

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)

    def __getitem__(self, key):
        return self.results[key]

    def get(self, metric: str, *, level: str | None = None, method: str | None = None):
        """The single result for ``metric`` (and ``level``/``method`` if several)."""
        hits = [
            r
            for r in self.results
            if r.metric == metric
            and (level is None or r.level == level)
            and (method is None or r.method == method)
        ]
        if len(hits) != 1:
            raise KeyError(
                f"{len(hits)} results match metric={metric!r}, level={level!r}, method={method!r}"
            )
        return hits[0]

    def to_records(self, *, arrays: bool = False) -> list[dict]:
        return [r.to_dict(arrays=arrays) for r in self.results]

    def to_dict(self) -> dict:
        return {"results": self.to_records()}

    def to_frame(self) -> pd.DataFrame:
        cols = [f.name for f in fields(Correlation) if f.name not in Correlation._ARRAYS]
        return pd.DataFrame(self.to_records(), columns=cols)


# --------------------------------------------------------------------------
# validation


def _as_list(v, name, allowed=None):
    if isinstance(v, str):
        v = [v]
    try:
        v = list(v)
    except TypeError:
        raise ParameterError(f"{name}={v!r} must be a string or a list of strings") from None
    if not v:
        raise ParameterError(f"{name} is empty")
    return v


def _check_choice(v, name, allowed):
    if not isinstance(v, str) or v not in allowed:
        raise ParameterError(f"{name}={v!r}; choose one of {', '.join(allowed)}")
    return v


def _check_confidence(cl):
    if not isinstance(cl, (float, int)) or isinstance(cl, bool) or not 0 < cl < 1:
        raise ParameterError(f"confidence_level={cl!r} must be a number in (0, 1)")
    return float(cl)


def check_level_size(dataset, level):
    """Raise if the dataset is too small for ``level``."""
    N, M = len(dataset.systems), len(dataset.inputs)
    if level in ("system", "input") and N < 2:
        raise DataError(
            f"level={level!r} correlates across systems but the dataset has {N} system(s) "
            f"({', '.join(dataset.systems)}); use level='item' or 'global' (command line: --level "
            "group-by-system or global), or add systems"
        )
    if level == "item" and M < 2:
        raise DataError(
            f"level='item' correlates across inputs but the dataset has {M} input(s); "
            "use level='system', 'input' or 'global' (command line: --level system, input or global), "
            "or add inputs"
        )
    if level == "global" and N * M < 2:
        raise DataError("level='global' needs at least 2 cells; the dataset has 1")


def _human_column(dataset, human):
    if not isinstance(human, str):
        raise ParameterError(f"human={human!r} must be the name of one human score column")
    if human not in dataset.human:
        hint = " (it is a metric column)" if human in dataset.metrics else ""
        available = ", ".join(dataset.human) or "none (the dataset was built with human=[])"
        raise DataError(
            f"human={human!r} is not a human score column of this dataset{hint}; "
            f"available: {available}"
        )
    return human


def _metric_columns(dataset, metrics):
    if metrics is None:
        metrics = list(dataset.metrics)
        if not metrics:
            raise DataError("the dataset has no metric columns")
        return metrics
    metrics = _as_list(metrics, "metrics")
    unknown = [m for m in metrics if m not in dataset.columns]
    if unknown:
        raise DataError(
            f"unknown metric column(s): {', '.join(map(str, unknown))}; "
            f"available metrics: {', '.join(dataset.metrics)}"
        )
    return metrics


def _distinct_metric_columns(dataset, metrics, *, minimum, what, suffix=""):
    """:func:`_metric_columns` for analyses over a set of metrics: no
    duplicates, and at least ``minimum`` of them."""
    metrics = _metric_columns(dataset, metrics)
    if len(set(metrics)) != len(metrics):
        raise ParameterError("metrics contains duplicates")
    if len(metrics) < minimum:
        raise ParameterError(f"{what} needs at least {minimum} metrics{suffix}")
    return metrics


# --------------------------------------------------------------------------
# the computation for one (metric, level, method)


def _unit_generator(ss, metric, level, method):
    return _rs.named_generator(ss, metric, level, method)


def _exceeds(null, obs, alternative, centred):
    """Boolean array: null statistics at least as extreme as ``obs``."""
    tol = RESAMPLING_TOL * max(1.0, abs(obs))
    if alternative == "greater":
        return null >= obs - tol
    if alternative == "less":
        return null <= obs + tol
    centre = np.nanmean(null) if centred else 0.0
    return np.abs(null - centre) >= abs(obs - centre) - tol


def resampling_pvalue(null, obs, alternative, *, centred=False):
    """(count + 1) / (n + 1) over the finite null statistics."""
    null = np.asarray(null, float)
    null = null[np.isfinite(null)]
    if not np.isfinite(obs) or null.size == 0:
        return np.nan
    count = int(_exceeds(null, obs, alternative, centred).sum())
    return (count + 1.0) / (null.size + 1.0)


def percentile_interval(dist, confidence_level):
    """Percentile bootstrap interval over the finite replicates."""
    d = np.asarray(dist, float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return np.nan, np.nan
    a = (1.0 - confidence_level) / 2.0
    lo, hi = np.percentile(d, [100 * a, 100 * (1 - a)])
    return float(lo), float(hi)


def _analytic_pvalue(coef, xg, yg, alternative):
    x = xg.ravel()
    y = yg.ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(coef.pvalue(x, y, alternative))


@dataclass(frozen=True)
class _Options:
    human: str
    average: str
    ci: str
    confidence_level: float
    n_resamples: int
    pvalue: str
    alternative: str
    seed_tag: str
    budget: int | None = None


def permutation_null(gen, xg, yg, method, average, n_resamples, budget=None):
    """Null statistics of the within-group permutation test, in chunks of
    resamples that fit the memory budget (the same numbers for any chunking)."""
    shuffle = _rs.WithinGroupShuffle(xg, yg)
    null = np.empty(n_resamples)
    for sl in _rs.resample_chunks(n_resamples, xg.size, budget):
        xs, ys = shuffle.draw(gen, sl.stop - sl.start)
        null[sl] = grouped_values(xs, ys, method, average=average, detail=False).value
    return null


def bootstrap_distribution(gen, x, y, level, method, average, n_resamples, unit, budget=None):
    """Bootstrap replicates of the statistic, in chunks of resamples.

    Pairs formed by one original drawn twice are left out of the pair
    statistics (:mod:`metaeval.stats.levels`, "Bootstrap replicates and
    duplicated originals").
    """
    N, M = x.shape
    valid = np.isfinite(x) & np.isfinite(y)
    dup_needed = method in DUP_VARIANTS or method == "acc_eq"
    dist = np.empty(n_resamples)
    # replicates computed from the draws, not materialised (stats/cellboot.py)
    cells = CellBootstrap(x, y, level, method, average) if CellBootstrap.supports(level, method) else None
    bpc = None if cells is None else CellBootstrap.bytes_per_resample(N, M) / max(1, N * M)
    for sl, rows, cols in _rs.bootstrap_chunks(gen, n_resamples, N, M, unit, budget, bpc):
        dup = _rs.duplicate_pairs(rows, cols, valid, level) if dup_needed else None
        if cells is not None:
            dist[sl] = cells.values(rows, cols, dup)
            continue
        xb = _rs.take_cells(x, rows, cols)
        yb = _rs.take_cells(y, rows, cols)
        dist[sl] = level_values(
            xb, yb, level, method, average=average, detail=False, dup_pairs=dup
        ).value
    return dist


def _correlate_one(x, y, metric, level, method, opt: _Options, ss):
    coef = get_coefficient(method)
    lv = level_values(x, y, level, method, average=opt.average)
    stat = float(lv.value[0])
    group = lv.group[0]
    nv = lv.n_valid[0]
    too_few = nv < 2
    dropped = ~np.isfinite(group) if coef.batch is not None else too_few
    n_too_few = int(too_few.sum())
    n_constant = int((dropped & ~too_few).sum())
    n = int(nv[~dropped].sum())
    eps = float(lv.epsilon[0]) if lv.epsilon is not None else np.nan
    gen = _unit_generator(ss, metric, level, method)
    xg, yg = arrange(x, y, level)
    single = level in ("system", "global")

    # p-value
    pmethod = opt.pvalue
    pvalue = np.nan
    null = None
    if pmethod == "auto":
        if single and coef.pvalue is not None:
            pmethod = "analytic"
            pvalue = _analytic_pvalue(coef, xg[0], yg[0], opt.alternative)
        else:
            pmethod = "none"
    elif pmethod == "permutation":
        null = permutation_null(
            gen, xg[0], yg[0], method, opt.average, opt.n_resamples, opt.budget
        )
        centred = not coef.constant_is_degenerate
        pvalue = resampling_pvalue(null, stat, opt.alternative, centred=centred)

    # confidence interval
    lo = hi = np.nan
    dist = None
    n_nan = 0 if null is None else int((~np.isfinite(null)).sum())
    if opt.ci == "fisher":
        lo, hi = (float(v) for v in fisher_interval(stat, n, method, opt.confidence_level))
    elif opt.ci.startswith("boot-"):
        dist = bootstrap_distribution(
            gen, x, y, level, method, opt.average, opt.n_resamples, opt.ci[5:], opt.budget
        )
        n_nan += int((~np.isfinite(dist)).sum())
        # an undefined statistic has no interval, whatever the replicates say
        if np.isfinite(stat):
            lo, hi = percentile_interval(dist, opt.confidence_level)

    sig = make_signature(
        human=opt.human,
        level=level,
        method=method,
        avg=opt.average if level in ("input", "item") else None,
        nan="pairwise",
        alt=opt.alternative,
        ci=(opt.ci, opt.n_resamples, opt.confidence_level)
        if opt.ci.startswith("boot-")
        else (opt.ci, opt.confidence_level)
        if opt.ci == "fisher"
        else "none",
        pvalue=(pmethod, opt.n_resamples) if pmethod == "permutation" else pmethod,
        seed=opt.seed_tag if (opt.ci.startswith("boot-") or pmethod == "permutation") else None,
    )
    return Correlation(
        metric=metric,
        human=opt.human,
        level=level,
        method=method,
        statistic=stat,
        pvalue=float(pvalue),
        ci_low=float(lo),
        ci_high=float(hi),
        n=n,
        n_groups=int(group.size),
        n_groups_dropped=int(dropped.sum()),
        n_constant=n_constant,
        n_too_few=n_too_few,
        epsilon=eps,
        average=opt.average,
        alternative=opt.alternative,
        confidence_level=opt.confidence_level,
        ci_method=opt.ci,
        pvalue_method=pmethod,
        n_resamples_nan=n_nan,
        signature=sig,
        distribution=dist,
        null_distribution=null,
        group_statistics=group,
    )


def _warn_degenerate(res: Correlation, n_resamples: int):
    """Warnings are raised here, in the calling process, from the counts."""
    total = n_resamples * ((res.distribution is not None) + (res.null_distribution is not None))
    if res.n_resamples_nan > NAN_REPLICATE_WARN * total:
        warnings.warn(
            f"{res.n_resamples_nan} of {total} resampled values of {res.method} for metric "
            f"{res.metric!r} at level {res.level!r} are undefined (constant or too few "
            "pairs); intervals and p-values use the remaining ones (counted in "
            "n_resamples_nan)",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    if res.distribution is not None and not np.isfinite(res.statistic):
        warnings.warn(
            f"{res.method} of metric {res.metric!r} at level {res.level!r} is undefined, so "
            "its bootstrap interval is NaN (resampled data cannot define it)",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    if res.ci_method == "fisher" and np.isfinite(res.statistic) and np.isnan(res.ci_low):
        warnings.warn(
            f"the Fisher interval of {res.method} for metric {res.metric!r} at level "
            f"{res.level!r} is undefined with n={res.n} pairs (it needs n > "
            f"{get_coefficient(res.method).fisher[0]:.0f}); ci_low and ci_high are NaN",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    if res.n_groups_dropped == 0:
        return
    what = {"system": "system-level", "global": "global"}.get(res.level, f"{res.level} groups")
    if res.n_constant:
        warnings.warn(
            f"{res.method} of metric {res.metric!r} vs {res.human!r}: {res.n_constant} of "
            f"{res.n_groups} {what} have constant scores; their coefficient is NaN and they "
            "are excluded from the average (counted in n_constant)",
            ConstantInputWarning,
            stacklevel=user_stacklevel(),
        )
    if res.n_too_few:
        warnings.warn(
            f"{res.method} of metric {res.metric!r} vs {res.human!r}: {res.n_too_few} of "
            f"{res.n_groups} {what} have fewer than 2 valid pairs; their coefficient is NaN "
            "and they are excluded (counted in n_too_few)",
            TooFewPairsWarning,
            stacklevel=user_stacklevel(),
        )


@accepts_frames(human="human")
def correlate(
    dataset,
    human: str,
    *,
    metrics=None,
    level="system",
    method="pearson",
    average: str = "macro",
    ci: str = "boot-both",
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    pvalue: str = "auto",
    alternative: str = "two-sided",
    rng=None,
    n_jobs: int = 1,
    progress=None,
    memory_budget=None,
) -> Correlations:
    """Correlate every metric with a human score column.

    Parameters
    ----------
    dataset : Dataset
        The scores (see :class:`metaeval.Dataset`).
    human : str
        The human score column (averaged over raters if it has several).
    metrics : str or list of str, optional
        Metric columns (default: all of the dataset's metrics).  Human columns
        may be listed too (to correlate one rater with another).
    level : str or list of str
        ``system``, ``input``, ``item``, ``global`` (seed paper 000 section 2;
        mt-metrics-eval's ``item`` grouping is our ``input``).
    method : str or list of str
        ``pearson``, ``spearman``, ``kendall_b``, ``kendall_c``,
        ``kendall_23``, ``acc_23``, ``acc_eq``, ``pairwise_accuracy``
        (system level only).
    average : {"macro", "micro"}
        How ``input`` and ``item`` levels average their groups (see
        :mod:`metaeval.stats.levels`).
    ci : {"boot-both", "boot-systems", "boot-inputs", "fisher", "none"}
        Percentile bootstrap over systems, inputs or both (rows then columns,
        resampled with replacement; the whole statistic, including the level's
        grouping and acc_eq's threshold, is recomputed on every replicate;
        the pair statistics ``acc_23``, ``kendall_23``, ``acc_eq`` and
        ``pairwise_accuracy`` leave out the pairs formed by one original drawn
        twice, see :mod:`metaeval.stats.levels`; an undefined statistic gets
        a NaN interval), or
        the Fisher-z interval with the Bonett and Wright (2000) constants,
        defined for single correlations (``system``, ``global``) with
        ``pearson``, ``spearman`` or ``kendall_b``.
    confidence_level : float
        Default 0.95.
    n_resamples : int
        Bootstrap replicates and permutation resamples (default 1000).
    pvalue : {"auto", "permutation", "none"}
        ``auto``: the analytic p-value of a single correlation (``system``
        and ``global`` levels; scipy's ``pearsonr`` t-test, ``spearmanr``
        t-approximation, ``kendalltau`` exact or asymptotic), none (NaN)
        otherwise: the average of group correlations has no analytic null
        distribution, and averaging per-group p-values (as mt-metrics-eval
        does) does not give a valid p-value.  ``permutation``: a test of no
        association at any level and for any method: the metric scores are
        permuted among the valid pairs within each group (``n_resamples``
        times) and the statistic recomputed; p = (count + 1) / (n + 1);
        correlations are compared by absolute value, accuracy-type statistics
        by distance from the null mean.
    alternative : {"two-sided", "greater", "less"}
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts; ``None`` draws
        fresh entropy, recorded in the signature.
    n_jobs : int
        Workers (joblib); results do not depend on it.
    progress : callable, optional
        Called with 1 after each metric x level x method unit.
    memory_budget : int or str, optional
        Bytes (or a string like ``"512MB"``) that the resampled cell arrays of
        one unit may take; resamples are processed in chunks that fit.
        Default: the environment variable ``METAEVAL_MEMORY_BUDGET``, else
        1 GiB (:func:`metaeval.stats.resampling.memory_budget`).  The numbers
        do not depend on it.

    Returns
    -------
    Correlations

    Warns
    -----
    ConstantInputWarning, TooFewPairsWarning
        When groups are dropped (also counted in each result).
    UndefinedStatisticWarning
        When more than 5% of the resampled statistics are undefined
        (counted in ``n_resamples_nan``), or when the statistic itself is
        undefined (its bootstrap interval is then NaN).

    Examples
    --------
    >>> import metaeval
    >>> ds = metaeval.load_dataset("summeval")
    >>> res = metaeval.correlate(ds, "coherence", metrics=["ROUGE.1"], level="system",
    ...                          method="kendall_b", ci="fisher")
    >>> round(res[0].statistic, 4)
    0.2941
    >>> res[0].signature
    'human:coherence|level:system|method:kendall_b|nan:pairwise|alt:two-sided|ci:fisher:0.95|pvalue:analytic|metaeval:0.1.0'

    """
    human = _human_column(dataset, human)
    metrics = _metric_columns(dataset, metrics)
    levels = [check_level(v) for v in _as_list(level, "level")]
    methods = _as_list(method, "method")
    for m in methods:
        coef = get_coefficient(m)
        bad = [lv for lv in levels if coef.levels is not None and lv not in coef.levels]
        if bad:
            raise ParameterError(
                f"method={m!r} is defined only at level {', '.join(coef.levels)}; "
                f"not at {', '.join(bad)}"
            )
    average = check_average(average)
    _check_choice(ci, "ci", CI_METHODS)
    _check_choice(pvalue, "pvalue", PVALUE_METHODS)
    _check_choice(alternative, "alternative", ALTERNATIVES)
    confidence_level = _check_confidence(confidence_level)
    n_resamples = _rs.check_n_resamples(n_resamples)
    check_n_jobs(n_jobs)
    if ci == "fisher":
        bad = [(lv, m) for lv in levels for m in methods]
        bad = [
            f"{lv}/{m}"
            for lv, m in bad
            if lv not in ("system", "global") or get_coefficient(m).fisher is None
        ]
        if bad:
            raise ParameterError(
                "ci='fisher' applies to single correlations (levels system, global) with "
                f"pearson, spearman or kendall_b; not to {', '.join(bad)}; use a bootstrap "
                "interval (ci='boot-both') instead"
            )
    for lv in levels:
        check_level_size(dataset, lv)
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    opt = _Options(
        human, average, ci, confidence_level, n_resamples, pvalue, alternative, tag, budget
    )
    y = dataset.scores(human)
    units = [(m, lv, meth) for m in metrics for lv in levels for meth in methods]

    def work(u):
        m, lv, meth = u
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return _correlate_one(dataset.scores(m), y, m, lv, meth, opt, ss)

    out = run_units(work, units, n_jobs=n_jobs, progress=progress)
    for r in out:
        _warn_degenerate(r, n_resamples)
    return Correlations(tuple(out))


__all__ = ["correlate", "Correlation", "Correlations", "CI_METHODS", "PVALUE_METHODS"]
