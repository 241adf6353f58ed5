"""How well each metric agrees with humans: :func:`correlate`.

Every metric of a :class:`~metaeval.Dataset` is correlated with a human score
column at the requested grouping levels (``system``, ``input``, ``item``,
``global``; see :mod:`metaeval.stats.levels`) with the requested coefficients
(see :mod:`metaeval.stats.coefficients`), each with a p-value, a confidence
interval, the counts of what was used and dropped, and a signature.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ._parallel import check_n_jobs, run_units
from ._results import _ARR, _Collection, _Result
from ._stacklevel import user_stacklevel
from .data import accepts_frames
from ._signature import make_signature
from .data import sysscores as _sys
from .errors import (
    ConstantInputWarning,
    ParameterError,
    SystemScoresWarning,
    TooFewPairsWarning,
    TwoPointWarning,
    UndefinedStatisticWarning,
)
from ._vocab import (
    ALTERNATIVES,
    CI_METHODS,
    PVALUE_METHODS,
    as_list,
    check_choice,
    check_level_size,
    check_probability,
    human_column,
    metric_columns,
)
from .stats.coefficients import check_method_levels
from .stats import resampling as _rs
from .stats.cellboot import clear_layouts
from .stats.replicates import bootstrap_distribution, permutation_null  # public here too
from .stats.inference import analytic_pvalue, percentile_interval, resampling_pvalue, story_note
from .stats.coefficients import DEFAULT_METHOD, fisher_interval, get_coefficient
from .stats.levels import (
    arrange,
    check_average,
    check_level,
    level_values,
)

# Bootstrap intervals warn when more than this share of replicates is NaN.
NAN_REPLICATE_WARN = 0.05


@dataclass(frozen=True)
class Correlation(_Result):
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
    n_two_points : int
        Groups used whose statistic rests on exactly two valid pairs (two
        systems of an input, two inputs of a system; at ``system`` and
        ``global`` level 1 when the one correlation does): a coefficient of
        two points takes only its extreme values, whatever the scores
        (:class:`~metaeval.errors.TwoPointWarning`).
    epsilon : float
        The calibrated metric tie threshold (``acc_eq`` only, else NaN).
    n_resamples_nan : int
        Bootstrap and permutation replicates whose statistic was undefined,
        summed over the two when both are drawn (each has ``n_resamples``
        draws; the warning gives the two counts).
    distribution : ndarray or None
        Bootstrap replicates (``ci="boot-*"``) of the statistic.
    null_distribution : ndarray or None
        Permutation null distribution (``pvalue="permutation"``).
    group_statistics : ndarray
        Per-group statistics (one value for ``system``/``global``).
    notes : str
        Empty, or why the p-value and the interval disagree: a p-value below
        ``1 - confidence_level`` beside an interval that contains 0, or (two-sided,
        correlations) one above it beside an interval that excludes 0; the two
        rest on different resampling units or hypotheses (see :func:`correlate`,
        "One story per row").
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
    n_two_points: int
    epsilon: float
    average: str
    alternative: str
    confidence_level: float
    ci_method: str
    pvalue_method: str
    n_resamples_nan: int
    signature: str
    distribution: np.ndarray | None = field(**_ARR)
    null_distribution: np.ndarray | None = field(**_ARR)
    group_statistics: np.ndarray | None = field(**_ARR)
    notes: str = ""


@dataclass(frozen=True)
class Correlations(_Collection):
    """The results of :func:`correlate`: a sequence of :class:`Correlation`.

    ``to_frame()`` gives one row per result with the columns ``metric, human,
    level, method, statistic, pvalue, ci_low, ci_high, n, n_groups,
    n_groups_dropped, n_constant, n_too_few, n_two_points, epsilon, average, alternative,
    confidence_level, ci_method, pvalue_method, n_resamples_nan, signature, notes``;
    ``get(metric, level=..., method=...)`` the single matching result.
    """

    results: tuple[Correlation, ...]

    _item: ClassVar[type] = Correlation


# --------------------------------------------------------------------------
# the computation for one (metric, level, method)


def _unit_generator(ss, metric, level, method):
    return _rs.named_generator(ss, metric, level, method)


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


def _correlate_one(x, y, metric, level, method, opt: _Options, ss, systag=None, boot=None):
    """One (metric, level, method) result.  ``boot(gen)``, if given, replaces
    the bootstrap: it receives the unit's generator where the bootstrap's
    draws begin and returns the replicates, or None to leave the interval
    for :func:`_with_distribution` (the run split into blocks of resamples)."""
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
    n_two = int((nv[~dropped] == 2).sum())
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
            pvalue = analytic_pvalue(coef, xg[0], yg[0], opt.alternative)
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
    elif opt.ci in _sys.INPUT_RESAMPLING and systag and systag.startswith("given"):
        pass  # inputs of given system scores cannot be resampled: NaN, warned in correlate()
    elif opt.ci.startswith("boot-"):
        if boot is None:
            dist = bootstrap_distribution(
                gen, x, y, level, method, opt.average, opt.n_resamples, opt.ci[5:], opt.budget
            )
        else:
            dist = boot(gen)
        if dist is not None:
            n_nan += int((~np.isfinite(dist)).sum())
            lo, hi = _interval(stat, dist, opt)

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
        sys=systag,
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
        n_two_points=n_two,
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
        notes=_story(pvalue, lo, hi, opt, pmethod, method, n),
    )


_UNITS = {"boot-both": "systems and inputs", "boot-systems": "systems", "boot-inputs": "inputs"}


def _story(res_pvalue, lo, hi, opt, pmethod, method, n):
    """The row's note when its p-value and interval disagree (:func:`metaeval.stats.inference.story_note`)."""
    if opt.ci in _UNITS:
        interval = f"the interval resamples {_UNITS[opt.ci]}"
    else:
        interval = "the Fisher-z interval is an i.i.d. approximation of its own (Bonett and Wright)"
    if pmethod == "analytic":
        why = (f"the analytic p-value treats the {n} pairs as independent draws, while {interval}"
               + (" and so also counts how the result varies between them; with scores clustered by "
                  "system and input, read the interval" if opt.ci in _UNITS else "; they differ near the boundary"))
    else:
        why = (f"the permutation p-value tests no association (metric scores shuffled within groups), while "
               f"{interval}: they answer different questions; read the interval for the size of the effect")
    coef = get_coefficient(method)
    return story_note(res_pvalue, lo, hi, opt.confidence_level, why=why, alternative=opt.alternative,
                      both_ways=coef.constant_is_degenerate)


def _interval(stat, dist, opt):
    # an undefined statistic has no interval, whatever the replicates say
    if np.isfinite(stat):
        return percentile_interval(dist, opt.confidence_level)
    return np.nan, np.nan


def _with_distribution(res: Correlation, dist, opt: _Options) -> Correlation:
    """``res`` (computed with its bootstrap left out) completed with the
    replicates ``dist``: the same result as the unsplit computation."""
    lo, hi = _interval(res.statistic, dist, opt)
    return replace(res, distribution=dist, ci_low=float(lo), ci_high=float(hi),
                   n_resamples_nan=res.n_resamples_nan + int((~np.isfinite(dist)).sum()),
                   notes=_story(res.pvalue, lo, hi, opt, res.pvalue_method, res.method, res.n))


#: Fewest resamples in one block of a bootstrap split over workers (each
#: block repeats the interval's set-up: sorting the groups once).
MIN_BLOCK = 50


def boot_blocks(n_units, n_resamples, workers):
    """How many blocks of resamples each bootstrap interval is split into
    when ``workers`` workers run ``n_units`` intervals: enough for two tasks
    per worker, in blocks of at least :data:`MIN_BLOCK` resamples; 1 (no
    split) on one worker or when the intervals alone are enough."""
    if workers <= 1 or n_units <= 0:
        return 1
    want = -(-2 * workers // n_units)
    return max(1, min(want, n_resamples // MIN_BLOCK))


def _block_slices(n_resamples, k):
    """``k`` consecutive slices of ``range(n_resamples)`` of (nearly) equal size."""
    edges = [(n_resamples * i) // k for i in range(k + 1)]
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def _workers(n_jobs) -> int:
    """The number of workers ``n_jobs`` means for the active joblib backend
    (a Dask cluster's threads under ``parallel_config(backend="dask")``)."""
    if n_jobs == 1:
        return 1
    from joblib import effective_n_jobs

    try:
        return max(1, int(effective_n_jobs(n_jobs)))
    except Exception:  # noqa: BLE001 - a backend that cannot tell: do not split
        return 1


def _warn_degenerate(res: Correlation, n_resamples: int, two_point_levels=()):
    """Warnings are raised here, in the calling process, from the counts.
    ``two_point_levels``: the levels the dataset-wide :func:`_warn_two_points`
    warned about (their groups are not warned about again)."""
    _warn_undefined_resamples(res, n_resamples)
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
    if res.n_two_points and res.level not in two_point_levels:
        _warn_two_point_groups(res)
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


def _warn_two_points(dataset, level) -> bool:
    """A correlation over two points is +-1 (or undefined) whatever the scores: say so
    when a level correlates across only two systems (``system``, ``input``) or two
    inputs (``item``); True if it did."""
    N, M = len(dataset.systems), len(dataset.inputs)
    across = {"system": ("systems", N), "input": ("systems", N), "item": ("inputs", M)}.get(level)
    if across is not None and across[1] == 2:
        warnings.warn(
            f"level={level!r} correlates across 2 {across[0]} only: every correlation of two points is "
            f"+1 or -1 (or undefined) whatever the scores, and a test has nothing to go on; add "
            f"{across[0]} or read the global level",
            TwoPointWarning,
            stacklevel=user_stacklevel(),
        )
        return True
    return False


def _warn_undefined_resamples(res: Correlation, n_resamples: int):
    """More than :data:`NAN_REPLICATE_WARN` of the bootstrap resamples or of the
    permutations gave an undefined statistic: each count against the ``n_resamples``
    asked for (a run with both draws ``n_resamples`` of each, not twice as many)."""
    parts, uses = [], []
    for dist, what, used in ((res.distribution, "bootstrap resamples", "the interval"),
                             (res.null_distribution, "permutations", "the p-value")):
        if dist is None:
            continue
        k = int((~np.isfinite(dist)).sum())
        parts.append((k, what))
        uses.append(f"{used} uses the {n_resamples - k} defined {what}")
    if not any(k > NAN_REPLICATE_WARN * n_resamples for k, _ in parts):
        return
    counted = ("counted in n_resamples_nan" if len(parts) == 1
               else f"n_resamples_nan = {res.n_resamples_nan} counts both")
    warnings.warn(
        f"{res.method} for metric {res.metric!r} at level {res.level!r} is undefined (constant or too few "
        f"pairs) in {' and '.join(f'{k} of the {n_resamples} {what}' for k, what in parts)}; "
        f"{', '.join(uses)} ({counted})",
        UndefinedStatisticWarning,
        stacklevel=user_stacklevel(),
    )


#: How the group warning names the groups with 2 valid pairs, per level.
_TWO_POINT_GROUPS = {
    "input": "input groups have scores of only 2 systems",
    "item": "item groups (systems) have scores on only 2 inputs",
}
_TWO_POINT_SINGLE = {
    "system": "correlates only 2 systems with scores",
    "global": "correlates only 2 cells with scores",
}


def _warn_two_point_groups(res: Correlation):
    """Groups (or the one correlation of a single level) left with 2 valid pairs by
    missing cells, counted in ``n_two_points``."""
    coef = get_coefficient(res.method)
    value = "is +1 or -1" if coef.constant_is_degenerate else "takes only its extreme values"
    if res.level in _TWO_POINT_GROUPS:
        what = (f"{res.n_two_points} of {res.n_groups} {_TWO_POINT_GROUPS[res.level]}: the {res.method} of "
                f"two points {value} whatever the scores, and they enter the average as they are")
    else:
        what = (f"the {res.level}-level correlation {_TWO_POINT_SINGLE[res.level]}: the {res.method} of two "
                f"points {value} whatever the scores")
    warnings.warn(
        f"{res.method} of metric {res.metric!r} vs {res.human!r} at level {res.level!r}: {what} "
        "(counted in n_two_points)",
        TwoPointWarning,
        stacklevel=user_stacklevel(),
    )


@accepts_frames(human="human")
def correlate(
    dataset,
    human: str,
    *,
    metrics=None,
    level="system",
    method=DEFAULT_METHOD,
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
    system_scores: str | None = None,
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
        (system level only).  Default ``pearson``, the one default of every
        correlation table (:data:`metaeval.stats.coefficients.DEFAULT_METHOD`).
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
        t-approximation (exact over all n! pairings for n <= 9 pairs,
        :data:`metaeval.stats.coefficients.SPEARMAN_EXACT_N`),
        ``kendalltau`` exact or asymptotic), none (NaN)
        otherwise: the average of group correlations has no analytic null
        distribution, and averaging per-group p-values (as mt-metrics-eval
        does) does not give a valid p-value.  ``permutation``: a test of no
        association at any level and for any method: the metric scores are
        permuted among the valid pairs within each group (``n_resamples``
        times) and the statistic recomputed; p = (count + 1) / (n + 1);
        correlations are compared by absolute value, accuracy-type statistics
        by distance from the null mean.

        One story per row: the default p-value (analytic, i.i.d. pairs) and the
        default interval (``boot-both``, systems and inputs resampled) rest on
        different units, so on clustered scores they can disagree (p = 8.6e-81
        beside [0.0005, 0.726] on one file, p = 0.0004 beside an interval
        containing 0 on another).  Such a row carries a ``notes`` text saying
        which number says what (:func:`metaeval.stats.inference.story_note`),
        in every view.  The default is kept rather than replaced by a bootstrap
        p-value (docs/levels-and-methods.md, "One story per row", says why).
    alternative : {"two-sided", "greater", "less"}
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts; ``None`` draws
        fresh entropy, recorded in the signature.
    n_jobs : int
        Workers (joblib; ``-1``: one per core, or the threads of a Dask
        cluster under ``joblib.parallel_config(backend="dask")``).  The
        (metric, level, method) units are the tasks; when they are fewer
        than two per worker, each bootstrap interval is also split into
        blocks of resamples (at least 50), one task each.  The results do
        not depend on it.
    progress : callable, optional
        Called with 1 after each metric x level x method unit.
    memory_budget : int or str, optional
        Bytes (or a string like ``"512MB"``) that the resampled cell arrays of
        one unit may take; resamples are processed in chunks that fit.
        Default: the environment variable ``METAEVAL_MEMORY_BUDGET``, else
        1 GiB (:func:`metaeval.stats.resampling.memory_budget`).  The numbers
        do not depend on it.
    system_scores : {None, "given", "mean"}
        At ``system`` level, for a dataset that carries system-level scores
        of its own (:attr:`metaeval.Dataset.system_scores`: corpus BLEU,
        WMT ``.sys.score`` files): ``"given"`` correlates those where a
        column has them (the other column's means over its cells otherwise),
        ``"mean"`` the means of the cells; None (default) is ``"given"`` with a
        :class:`~metaeval.errors.SystemScoresWarning` note when given scores
        differ from the means.  The signature says which (``sys:given:metric``,
        ``sys:given:metric+human``, ``sys:mean``; no key for a dataset without
        given scores).  Bootstrap intervals over inputs (``boot-inputs``,
        ``boot-both``) of given scores are NaN with a warning: a corpus score
        cannot be recomputed on resampled inputs without its sufficient
        statistics (use ``ci="boot-systems"``).

    Returns
    -------
    Correlations

    Warns
    -----
    ConstantInputWarning, TooFewPairsWarning
        When groups are dropped (also counted in each result).
    TwoPointWarning
        When a level correlates across 2 systems (or 2 inputs) only, or
        groups are left with 2 valid pairs by missing cells (counted in
        ``n_two_points``): a coefficient of two points is +1 or -1 whatever
        the scores.
    UndefinedStatisticWarning
        When more than 5% of the bootstrap resamples or of the permutations
        give an undefined statistic (each counted against ``n_resamples``;
        their sum is ``n_resamples_nan``), or when the statistic itself is
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
    human = human_column(dataset, human)
    metrics = metric_columns(dataset, metrics)
    levels = [check_level(v) for v in as_list(level, "level")]
    methods = as_list(method, "method")
    for m in methods:
        check_method_levels(m, levels)
    average = check_average(average)
    check_choice(ci, "ci", CI_METHODS)
    check_choice(pvalue, "pvalue", PVALUE_METHODS)
    check_choice(alternative, "alternative", ALTERNATIVES)
    confidence_level = check_probability(confidence_level)
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
    two_point_levels = set()
    for lv in levels:
        check_level_size(dataset, lv)
        if _warn_two_points(dataset, lv):
            two_point_levels.add(lv)
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    opt = _Options(
        human, average, ci, confidence_level, n_resamples, pvalue, alternative, tag, budget
    )
    y = dataset.scores(human)
    units = [(m, lv, meth) for m in metrics for lv in levels for meth in methods]
    sys_mode = _sys.check_mode(system_scores)
    sys_inputs = {}
    if "system" in levels:
        _sys.note_given(dataset, [*metrics, human], sys_mode)
        for m in metrics:
            sys_inputs[m] = _sys.system_level_matrices(dataset, [m, human], ["metric", "human"], sys_mode)
        uses = any((sys_inputs[m][1] or "").startswith("given") for m in metrics)
        # the columns with given scores (a metric's or the human's) are the culprits
        given = [c for c in dict.fromkeys([*metrics, human]) if dataset.system_score(c) is not None]
        if uses and given and ci in _sys.INPUT_RESAMPLING:
            warnings.warn(
                _sys.input_resampling_message(given, f"ci={ci!r}")
                + "; these system-level intervals are NaN",
                SystemScoresWarning,
                stacklevel=user_stacklevel(),
            )

    def inputs(m, lv):
        if lv == "system":
            return sys_inputs[m]
        return (dataset.scores(m), y), None

    def work(u, boot=None):
        m, lv, meth = u
        (x, yy), tag = inputs(m, lv)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return _correlate_one(x, yy, m, lv, meth, opt, ss, tag, boot=boot)

    blocks = boot_blocks(len(units), n_resamples, _workers(n_jobs)) if ci.startswith("boot-") else 1
    try:
        if blocks <= 1:
            out = run_units(work, units, n_jobs=n_jobs, progress=progress)
        else:
            out = _run_in_blocks(units, work, inputs, opt, blocks, n_jobs, progress)
    finally:
        clear_layouts()
    for r in out:
        _warn_degenerate(r, n_resamples, two_point_levels)
    return Correlations(tuple(out))


def _run_in_blocks(units, work, inputs, opt, blocks, n_jobs, progress):
    """The units with each bootstrap split into ``blocks`` blocks of
    resamples, every block one task (so that one interval can use several
    workers or Dask tasks).  First each unit without its bootstrap, which
    also records its generator's state where the bootstrap's draws begin;
    then the blocks, each restarting from that state and drawing as the
    whole run does (``bootstrap_chunks(block=...)``); the replicates are
    joined in order.  The numbers equal the unsplit run's (tested).
    ``work(unit, boot)`` computes one unit; ``inputs(metric, level)`` gives
    its score matrices."""

    def first(u):
        state = {}

        def record(gen):
            state["s"] = gen.bit_generator.state
            return None

        return work(u, boot=record), state.get("s")

    head = run_units(first, units, n_jobs=n_jobs)
    tasks = [(i, sl, st) for i, (_, st) in enumerate(head) if st is not None
             for sl in _block_slices(opt.n_resamples, blocks)]

    def block(t):
        i, sl, st = t
        m, lv, meth = units[i]
        (x, yy), _ = inputs(m, lv)
        bg = getattr(np.random, st["bit_generator"])()
        bg.state = st
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return bootstrap_distribution(np.random.Generator(bg), x, yy, lv, meth, opt.average,
                                          opt.n_resamples, opt.ci[5:], opt.budget, block=sl)

    done = {"blocks": 0}
    n_boot = len(tasks) // blocks
    if progress is not None and len(head) > n_boot:
        progress(len(head) - n_boot)  # the units without a bootstrap are finished

    def tick(k):
        before = done["blocks"] // blocks
        done["blocks"] += k
        if progress is not None and done["blocks"] // blocks > before:
            progress(done["blocks"] // blocks - before)

    parts = run_units(block, tasks, n_jobs=n_jobs, progress=tick)
    out = [res for res, _ in head]
    for j in range(0, len(tasks), blocks):
        i = tasks[j][0]
        out[i] = _with_distribution(out[i], np.concatenate(parts[j:j + blocks]), opt)
    return out


__all__ = ["correlate", "Correlation", "Correlations", "CI_METHODS", "PVALUE_METHODS"]
