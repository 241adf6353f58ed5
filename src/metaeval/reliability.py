"""Reliability of metrics and of human ratings.

Seed paper 002 (MetricEval; Xiao et al. 2023) section 3.1 frames a metric's
score of a system as X = T + E (classical test theory): the reliability
rho^2_XT = sigma^2_T / sigma^2_X (Eq. 1) is the share of the variance of the
observed scores across systems that is not measurement error.  This module
estimates it in the ways the paper proposes, plus the agreement statistics for
human ratings that the same question needs when several raters score every
output:

:func:`stability`
    test-retest reliability of a stochastic metric from two or more runs
    (section 3.1.1), with the Spearman-Brown number of runs needed to reach a
    target reliability.
:func:`consistency`
    Cronbach's alpha with systems as examinees and inputs as items (section
    3.1.2, Eq. 2), its interval, the standard error of measurement (section
    4.1.1) and the number of inputs needed to reach a target.
:func:`consistency_curve`
    alpha on random subsets of m inputs against the Spearman-Brown prophecy
    (the paper's Figure 3).
:func:`agreement`
    Krippendorff's alpha (interval, ordinal, nominal, ratio) and the six
    intraclass correlations of Shrout and Fleiss (1979) between raters, each
    (system, input) cell being a unit.
:func:`rater_correlations`
    every pair of raters correlated at a grouping level (the convergent
    entries of the paper's Table 1).
:func:`rank_normal`
    the rank-based inverse-normal transform of Appendix A.2.

Every result is a frozen dataclass of raw floats with ``to_dict()`` and a
``signature``; every collection has ``to_frame()`` (a tidy table whose
columns are listed in its docstring).  Degenerate data (constant scores,
fewer than two systems) give NaN and a typed warning; missing cells are
dropped as each function documents, counted in the result, and reported with
a :class:`MissingCellsWarning`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._results import _ARR, _Result
from ._results import _Collection as _BaseCollection
from ._signature import make_signature
from ._stacklevel import user_stacklevel
from .data import accepts_frames
from ._vocab import (
    as_list,
    check_choice,
    check_dataset,
    check_int,
    check_probability,
)
from .stats.coefficients import check_method_levels
from .errors import (
    MissingCellsWarning,
    RaterDesignWarning,
    ConstantInputWarning,
    DataError,
    NonPositiveReliabilityWarning,
    ParameterError,
    SmallSampleWarning,
    UndefinedStatisticWarning,
)
from .stats import exact as _exact
from .stats import resampling as _rs
from .stats.alpha import BLOCK_CELLS as _BLOCK_CELLS
from .stats.alpha import alpha_batch, feldt_interval, listwise_complete
from .stats.coefficients import pow2_exponent
from .stats.inference import statistic, story_note
from .stats.levels import check_average, check_level, level_values

# --------------------------------------------------------------------------
# registries (error messages and docs read these)

#: Single-run reliability estimators of :func:`stability`.
STABILITY_METHODS = {
    "auto": "pearson with 2 runs, icc_c1 with more",
    "pearson": "Pearson r of the per-system means of two runs (seed paper 002 sec. 3.1.1); "
    "with more runs, the mean over run pairs",
    "icc_c1": "ICC(C,1) = ICC(3,1): two-way, consistency, single run",
    "icc_a1": "ICC(A,1) = ICC(2,1): two-way, absolute agreement, single run",
}

#: Interval methods of :func:`consistency`.
CONSISTENCY_CI = {
    "boot-systems": "percentile bootstrap over systems (examinees), inputs fixed",
    "boot-inputs": "percentile bootstrap over inputs (items), systems fixed",
    "boot-both": "percentile bootstrap over systems and inputs",
    "feldt": "Feldt (1965) F-distribution interval (as pingouin.cronbach_alpha, psych::alpha)",
    "none": "no interval",
}

from .stats.agreement import krippendorff as _krippendorff  # noqa: E402
from .stats.agreement import nested_table as _nested_table  # noqa: E402
from .stats.agreement import rater_design as _rater_design  # noqa: E402
from .stats.icc import icc_table as _icc_table  # noqa: E402
from .stats.prophecy import needed_length as _needed  # noqa: E402
from .stats.prophecy import spearman_brown, spearman_brown_factor  # noqa: E402,F401  (public here)
from .stats.ranknormal import NORMALIZATIONS, normalized_runs as _normalized, rank_normal  # noqa: E402,F401
from ._agreement_registry import (  # noqa: E402  (the registry, light for the CLI)
    AGREEMENT_METHODS,
    DEFAULT_AGREEMENT,
    ICC_FORMS,
    KRIPPENDORFF_METRICS,
    RATER_DESIGNS,
    SAME_RATER_FORMS,
)

# fewer resampling units than this: the bootstrap interval is flagged (SmallSampleWarning)
_SMALL_BOOTSTRAP = 10


# --------------------------------------------------------------------------
# small validators


def _check_target(target, name="target"):
    return check_probability(target, name, note="a reliability, e.g. 0.9")


def _known(dataset, column):
    """Raise the dataset's own DataError (it lists the columns) for an unknown name."""
    if not isinstance(column, str) or column not in dataset.columns:
        dataset.ratings(column)  # raises DataError naming the column and the available ones
        raise DataError(f"unknown score column {column!r}")  # pragma: no cover
    return column


# --------------------------------------------------------------------------
# Spearman-Brown and rank normalization: metaeval.stats.prophecy and metaeval.stats.ranknormal,
# the ICC table and Krippendorff's alpha: metaeval.stats.icc and metaeval.stats.agreement

# --------------------------------------------------------------------------
# result containers




class _Collection(_BaseCollection):
    """Reliability results are keyed by their score ``column``."""

    _key = "column"


# ------------------------------------------------------------------ stability


@dataclass(frozen=True)
class Stability(_Result):
    """Test-retest reliability of one metric (see :func:`stability`).

    Attributes
    ----------
    column : str
        The metric.
    method : str
        The estimator of ``statistic`` (``pearson``, ``icc_c1`` or ``icc_a1``).
    statistic : float
        Reliability of a single run.
    pearson : float
        Pearson r between the runs' per-system means (two runs); with more
        runs, the mean over run pairs.
    icc_c1, icc_a1 : float
        ICC(C,1) (consistency) and ICC(A,1) (absolute agreement) over
        systems x runs of per-system means.
    icc_ck, icc_ak : float
        The same for the mean of the ``n_runs`` runs.
    reliability_of_mean : float
        Spearman-Brown reliability of the mean of ``n_runs`` runs,
        ``spearman_brown(statistic, n_runs)`` (equals ``icc_ck`` when
        ``method="icc_c1"``).
    target : float
        Target reliability.
    runs_needed : float
        Runs whose mean reaches ``target``: ceil of ``runs_needed_exact``, at
        least 1; ``inf`` if ``statistic <= 0``; NaN if undefined.
    runs_needed_exact : float
        ``spearman_brown_factor(statistic, target)``.
    sd : float
        sigma_X: standard deviation (ddof=1) of the per-system means of one
        run, pooled over runs (root of the mean of the runs' variances).
    sem : float
        Standard error of measurement of a single run's system mean,
        ``sd * sqrt(1 - statistic)`` (seed paper 002 section 4.1.1).
    n_systems, n_runs : int
        Systems and runs used.
    n_cells_dropped : int
        (system, input) cells left out because some run misses them.
    n_systems_dropped : int
        Systems without any cell present in every run.
    normalize : str
        Rank normalization applied to each run first (see :func:`rank_normal`).
    runs : tuple of str
        Run labels.
    signature : str
    system_means : ndarray
        (n_systems, n_runs) per-system means of each run.
    """

    column: str
    method: str
    statistic: float
    pearson: float
    icc_c1: float
    icc_a1: float
    icc_ck: float
    icc_ak: float
    reliability_of_mean: float
    target: float
    runs_needed: float
    runs_needed_exact: float
    sd: float
    sem: float
    n_systems: int
    n_runs: int
    n_cells_dropped: int
    n_systems_dropped: int
    normalize: str
    runs: tuple = field(metadata={"nofr": True})
    signature: str
    system_means: np.ndarray | None = field(**_ARR)


@dataclass(frozen=True)
class Stabilities(_Collection):
    """The results of :func:`stability`, one :class:`Stability` per metric.

    ``to_frame()`` has one row per metric with the columns ``column, method,
    statistic, pearson, icc_c1, icc_a1, icc_ck, icc_ak, reliability_of_mean,
    target, runs_needed, runs_needed_exact, sd, sem, n_systems, n_runs,
    n_cells_dropped, n_systems_dropped, normalize, signature``.
    """

    _item = Stability


def _metric_columns_with_runs(dataset, metrics):
    if metrics is None:
        cols = [c for c in dataset.metrics if dataset.ratings(c).shape[0] >= 2]
        if not cols:
            raise DataError(
                "no metric column of this dataset has two or more runs, so test-retest "
                "stability cannot be estimated; build the Dataset with a run column "
                "(Dataset.from_frame(..., run='run')) or load bundled runs "
                "(metaeval.load_dataset('summeval', runs=True))"
            )
        return cols
    cols = [_known(dataset, c) for c in as_list(metrics, "metrics")]
    for c in cols:
        if c in dataset.human:
            raise DataError(
                f"column {c!r} is a human column: its second axis holds raters, not runs of a "
                "metric; use metaeval.reliability.agreement or rater_correlations for raters"
            )
        r = dataset.ratings(c).shape[0]
        if r < 2:
            raise DataError(
                f"metric {c!r} has a single run, so its test-retest stability cannot be "
                "estimated: score the same outputs again and build the Dataset with a run "
                "column (Dataset.from_frame(..., run='run')), or for the bundled data use "
                "metaeval.load_dataset('summeval', runs=True)"
            )
    return cols


def _stability_one(runs, column, labels, method, target, normalize):
    x = _normalized(runs, normalize)
    # ICCs and correlations are scale-free: computed on values scaled by a power of two
    # (exact) where their squares would over- or underflow; sd and the means scaled back
    e = pow2_exponent(x)
    x = np.ldexp(x, -e) if e else x
    K = x.shape[0]
    common = np.isfinite(x).all(0)
    n_cells_dropped = int((~common & np.isfinite(x).any(0)).sum())
    cnt = common.sum(1)
    keep = cnt > 0
    # each run's system means, correctly rounded (stats.exact; the grid decided per run)
    means = _exact.means(x, np.broadcast_to(common[None], x.shape), unit_ndim=2)
    means = means[:, keep].T  # (n_systems, K)
    n = means.shape[0]
    pairs = [(a, b) for a in range(K) for b in range(a + 1, K)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        rs = [float(statistic(means[None, :, a], means[None, :, b], "global", "pearson")[0])
              for a, b in pairs] if n >= 2 else []
    finite = [r for r in rs if np.isfinite(r)]
    pearson = float(np.mean(finite)) if finite else np.nan
    tab, _ = _icc_table(means, 0.95)
    icc_c1, icc_a1 = tab["icc3"][0], tab["icc2"][0]
    icc_ck, icc_ak = tab["icc3k"][0], tab["icc2k"][0]
    resolved = method if method != "auto" else ("pearson" if K == 2 else "icc_c1")
    stat = {"pearson": pearson, "icc_c1": icc_c1, "icc_a1": icc_a1}[resolved]
    with np.errstate(all="ignore"):
        sd = float(np.ldexp(np.sqrt(means.var(axis=0, ddof=1).mean()), e)) if n >= 2 else np.nan
        sem = sd * math.sqrt(max(0.0, 1.0 - stat)) if np.isfinite(stat) else np.nan
    means = np.ldexp(means, e) if e else means
    needed, exact = _needed(stat, target, 1.0)
    sig = make_signature(
        method=resolved, nan="common-cells", runs=K, norm=normalize, target=target
    )
    return Stability(
        column=column,
        method=resolved,
        statistic=float(stat),
        pearson=pearson,
        icc_c1=icc_c1,
        icc_a1=icc_a1,
        icc_ck=icc_ck,
        icc_ak=icc_ak,
        reliability_of_mean=float(spearman_brown(stat, K)),
        target=target,
        runs_needed=needed,
        runs_needed_exact=exact,
        sd=sd,
        sem=float(sem),
        n_systems=int(n),
        n_runs=int(K),
        n_cells_dropped=n_cells_dropped,
        n_systems_dropped=int((~keep).sum()),
        normalize=normalize,
        runs=tuple(labels),
        signature=sig,
        system_means=means,
    )


@accepts_frames()
def stability(dataset, metrics=None, *, method="auto", target=0.9, normalize="none") -> Stabilities:
    """Metric stability: test-retest reliability from repeated runs (seed paper 002, sec. 3.1.1).

    For each metric, the runs ``dataset.ratings(metric)`` (shape ``(K, N,
    M)``, K >= 2 runs of the metric on the same outputs) are reduced to
    per-system mean scores, one column per run, and the reliability of a
    single run is estimated across systems:

    ``pearson`` (the paper's estimator, two runs)
        r(X_1, X_2), the Pearson correlation of the two runs' system means.
        Under X_k = T + E_k with equal error variances, r estimates
        rho^2_XT of Eq. 1 (Allen and Yen 2001).  With more runs: the mean of
        the pairwise correlations.
    ``icc_c1`` (the general form; the default with more than two runs)
        ICC(C,1) = ICC(3,1) = (MSR - MSE) / (MSR + (K - 1) MSE) of the
        systems x runs table (McGraw and Wong 1996), the two-way consistency
        ICC: like Pearson it ignores a shift of a whole run, and equals it
        for two runs with equal variances.
    ``icc_a1``
        ICC(A,1) = ICC(2,1), absolute agreement: a run-level shift counts as
        error.

    The k-run forms ``icc_ck`` (= Cronbach's alpha of the runs) and
    ``icc_ak`` are reported as the reliability of the runs' mean.  The number
    of runs whose mean reaches ``target`` follows from Spearman-Brown:
    n = target (1 - r) / (r (1 - target)), rounded up.

    Parameters
    ----------
    dataset : Dataset
    metrics : str or list of str, optional
        Metric columns; default: every metric with two or more runs.
    method : {"auto", "pearson", "icc_c1", "icc_a1"}
        The estimator of ``statistic`` (see :data:`STABILITY_METHODS`).
    target : float
        Target reliability for ``runs_needed`` (default 0.9, the paper's
        conventional threshold, section 4.1.1).
    normalize : str
        Rank normalization of each run over its N x M cells before averaging
        (see :func:`rank_normal`; the paper uses ``"metriceval"``, which the
        bundled SummEval columns already are).  Default ``"none"``.

    Returns
    -------
    Stabilities

    Raises
    ------
    DataError
        If a metric has a single run (the message says how to add runs), is a
        human column, or is unknown; or if ``metrics`` is None and no metric
        has runs.

    Warns
    -----
    MissingCellsWarning
        Cells missing in some run are left out of every run (so the runs'
        system means cover the same inputs); counted in ``n_cells_dropped``.
    ConstantInputWarning
        When the system means of a run are constant (the statistic is NaN).

    Examples
    --------
    >>> import numpy as np
    >>> import metaeval
    >>> from metaeval.reliability import stability
    >>> runs = np.array([[[1.0, 2.0], [2.0, 3.0], [4.0, 4.0]],
    ...                  [[1.5, 2.0], [2.5, 2.5], [4.0, 3.0]]])   # 2 runs x 3 systems x 2 inputs
    >>> ds = metaeval.Dataset(
    ...     {"human": np.zeros((3, 2)), "llm": runs}, human="human",
    ...     systems=["a", "b", "c"], inputs=["x", "y"])
    >>> res = stability(ds)[0]
    >>> res.method, round(res.statistic, 4), res.runs_needed
    ('pearson', 0.9995, 1.0)
    >>> res.signature
    'method:pearson|nan:common-cells|runs:2|norm:none|target:0.9|metaeval:0.1.0'
    """
    check_dataset(dataset)
    check_choice(method, "method", STABILITY_METHODS)
    target = _check_target(target)
    check_choice(normalize, "normalize", NORMALIZATIONS)
    cols = _metric_columns_with_runs(dataset, metrics)
    out = []
    for c in cols:
        res = _stability_one(
            dataset.ratings(c), c, dataset.rater_labels(c), method, target, normalize
        )
        out.append(res)
        if res.n_cells_dropped:
            warnings.warn(
                f"stability of {c!r}: {res.n_cells_dropped} (system, input) cell(s) are missing "
                "in at least one run and were left out of every run (counted in "
                "n_cells_dropped)",
                MissingCellsWarning,
                stacklevel=user_stacklevel(),
            )
        if not np.isfinite(res.statistic):
            few = res.n_systems < 2
            warnings.warn(
                f"stability of {c!r} is undefined (NaN): "
                + (
                    f"it needs at least 2 systems with scores in every run; {res.n_systems} remain"
                    if few
                    else "the per-system means of a run are constant"
                ),
                UndefinedStatisticWarning if few else ConstantInputWarning,
                stacklevel=user_stacklevel(),
            )
        elif res.statistic <= 0:
            warnings.warn(
                f"stability of {c!r} is {res.statistic:.3g} <= 0: its runs do not rank the systems "
                f"alike, so no number of runs reaches {target} (runs_needed = inf)",
                NonPositiveReliabilityWarning,
                stacklevel=user_stacklevel(),
            )
    return Stabilities(tuple(out))


# ------------------------------------------------------------------ consistency


@dataclass(frozen=True)
class Consistency(_Result):
    """Cronbach's alpha of one score column (see :func:`consistency`).

    Attributes
    ----------
    column : str
    statistic : float
        Cronbach's alpha (systems as examinees, inputs as items).
    ci_low, ci_high : float
        Interval bounds (NaN with ``ci="none"`` or when undefined).
    se : float
        Bootstrap standard error (standard deviation, ddof=1, of the finite
        replicates); NaN for ``feldt`` and ``none``.
    confidence_level : float
    ci_method : str
    n_resamples : int
        Bootstrap replicates drawn (0 without a bootstrap).
    n_resamples_nan : int
        Replicates whose alpha was undefined (constant total score).
    sd : float
        sigma_X: standard deviation (ddof=1) over systems of the mean score
        over the inputs used.
    sem : float
        Standard error of measurement of a system's mean score,
        ``sd * sqrt(1 - statistic)`` (seed paper 002 section 4.1.1).
    target : float
    inputs_needed : float
        Inputs for alpha to reach ``target`` by Spearman-Brown, ceil of
        ``inputs_needed_exact`` (at least 1; ``inf`` when alpha <= 0).
    inputs_needed_exact : float
        ``n_inputs * spearman_brown_factor(statistic, target)``.
    n_systems, n_inputs : int
        Systems and inputs used.
    n_systems_dropped, n_inputs_dropped : int
        Systems without any score, and inputs with a missing cell (listwise
        deletion).
    run : str or None
        The run or rater used (None: the mean over them, ``dataset.scores``).
    normalize : str
    signature : str
    distribution : ndarray or None
        The bootstrap replicates.
    """

    column: str
    statistic: float
    ci_low: float
    ci_high: float
    se: float
    confidence_level: float
    ci_method: str
    n_resamples: int
    n_resamples_nan: int
    sd: float
    sem: float
    target: float
    inputs_needed: float
    inputs_needed_exact: float
    n_systems: int
    n_inputs: int
    n_systems_dropped: int
    n_inputs_dropped: int
    run: str | None
    normalize: str
    signature: str
    distribution: np.ndarray | None = field(**_ARR)


@dataclass(frozen=True)
class Consistencies(_Collection):
    """The results of :func:`consistency`, one :class:`Consistency` per column.

    ``to_frame()`` has one row per column with the columns ``column,
    statistic, ci_low, ci_high, se, confidence_level, ci_method,
    n_resamples, n_resamples_nan, sd, sem, target, inputs_needed,
    inputs_needed_exact, n_systems, n_inputs, n_systems_dropped,
    n_inputs_dropped, run, normalize, signature``.
    """

    _item = Consistency


def _score_columns(dataset, columns, run=None):
    if columns is None:
        if run is None:
            return list(dataset.columns)
        cols = [c for c in dataset.columns if run in dataset.rater_labels(c)]
        if not cols:
            raise DataError(
                f"no column has a run or rater labelled {run!r}; pass run=None to use the "
                "mean over runs/raters, or one of the labels of dataset.rater_labels(column)"
            )
        return cols
    return [_known(dataset, c) for c in as_list(columns, "columns")]


def _matrix(dataset, column, run, normalize):
    """The (N, M) matrix of ``column``: one run/rater or the mean over them."""
    runs = dataset.ratings(column)
    labels = dataset.rater_labels(column)
    if run is not None:
        if run not in labels:
            what = "raters" if column in dataset.human else "runs"
            shown = ", ".join(repr(v) for v in labels) if labels != ("",) else "none"
            raise DataError(
                f"column {column!r} has no run or rater {run!r}; its {what}: {shown}; "
                "pass run=None to use the mean over them"
            )
        runs = runs[[labels.index(run)]]
    x = _normalized(runs, normalize)
    if x.shape[0] == 1:
        return x[0]
    present = np.isfinite(x)
    cnt = present.sum(0)
    with np.errstate(all="ignore"):
        mean = np.where(present, x, 0.0).sum(0) / cnt
    return np.where(cnt > 0, mean, np.nan)


def _warn_missing(what, column, n_sys, n_inp):
    if n_sys or n_inp:
        parts = []
        if n_sys:
            parts.append(f"{n_sys} system(s) without any score")
        if n_inp:
            parts.append(f"{n_inp} input(s) with a missing cell")
        warnings.warn(
            f"{what} of {column!r}: dropped {' and '.join(parts)} (listwise deletion; counted "
            "in n_systems_dropped / n_inputs_dropped)",
            MissingCellsWarning,
            stacklevel=user_stacklevel(),
        )


def _warn_alpha_undefined(what, column, n, m):
    if n < 2 or m < 2:
        warnings.warn(
            f"{what} of {column!r} is undefined (NaN): it needs at least 2 systems and 2 "
            f"complete inputs; {n} system(s) and {m} input(s) remain",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    else:
        warnings.warn(
            f"{what} of {column!r} is undefined (NaN): the total score is constant over "
            "systems",
            ConstantInputWarning,
            stacklevel=user_stacklevel(),
        )


def _consistency_one(y, column, opt, ss):
    y, n_sys_drop, n_inp_drop = listwise_complete(y)
    N, M = y.shape
    alpha = float(alpha_batch(y[None])[0])
    e = pow2_exponent(y)  # the sd in the data's unit, without squaring huge values
    with np.errstate(all="ignore"):
        sd = float(np.ldexp(np.ldexp(y, -e).mean(1).std(ddof=1), e)) if N >= 2 and M >= 1 \
            else np.nan
    sem = sd * math.sqrt(1.0 - alpha) if np.isfinite(alpha) else np.nan
    lo = hi = se = np.nan
    dist = None
    n_nan = 0
    n_res = 0
    if np.isfinite(alpha) and opt["ci"] == "feldt":
        lo, hi = feldt_interval(alpha, N, M, opt["confidence_level"])
    elif opt["ci"].startswith("boot-") and N >= 2 and M >= 2:
        gen = _rs.named_generator(ss, "consistency", column, opt["ci"])
        n_res = opt["n_resamples"]
        rows, cols = _rs.bootstrap_indices(gen, n_res, N, M, opt["ci"][5:])
        dist = np.empty(n_res)
        step = max(1, _BLOCK_CELLS // (N * M))
        for s in range(0, n_res, step):
            blk = slice(s, s + step)
            dist[blk] = alpha_batch(_rs.take_cells(y, rows[blk], cols[blk]))
        finite = dist[np.isfinite(dist)]
        n_nan = int(n_res - finite.size)
        if finite.size >= 2:
            a = (1.0 - opt["confidence_level"]) / 2.0
            lo, hi = (float(v) for v in np.percentile(finite, [100 * a, 100 * (1 - a)]))
            se = float(finite.std(ddof=1))
    needed, exact = _needed(alpha, opt["target"], M)
    ci_sig = (
        (opt["ci"], opt["n_resamples"], opt["confidence_level"])
        if opt["ci"].startswith("boot-")
        else (opt["ci"], opt["confidence_level"])
        if opt["ci"] == "feldt"
        else "none"
    )
    sig = make_signature(
        method="cronbach_alpha",
        nan="listwise-inputs",
        ci=ci_sig,
        seed=opt["seed"] if opt["ci"].startswith("boot-") else None,
        run=opt["run"] if opt["run"] is not None else "mean",
        norm=opt["normalize"],
        ddof=1,
    )
    return Consistency(
        column=column,
        statistic=alpha,
        ci_low=float(lo),
        ci_high=float(hi),
        se=float(se),
        confidence_level=opt["confidence_level"],
        ci_method=opt["ci"],
        n_resamples=n_res,
        n_resamples_nan=n_nan,
        sd=sd,
        sem=float(sem),
        target=opt["target"],
        inputs_needed=needed,
        inputs_needed_exact=exact,
        n_systems=int(N),
        n_inputs=int(M),
        n_systems_dropped=n_sys_drop,
        n_inputs_dropped=n_inp_drop,
        run=opt["run"],
        normalize=opt["normalize"],
        signature=sig,
        distribution=dist,
    )


@accepts_frames()
def consistency(
    dataset,
    columns=None,
    *,
    run=None,
    normalize="none",
    ci="boot-systems",
    confidence_level=0.95,
    n_resamples=1000,
    target=0.9,
    rng=None,
) -> Consistencies:
    """Metric consistency: Cronbach's alpha over inputs (seed paper 002, sec. 3.1.2, Eq. 2).

    Each system is an examinee and each input an item: with Y the N x M
    matrix of a column's scores (``dataset.scores(column)``, or one run or
    rater with ``run=``), Y_j the scores of input j across systems and X =
    sum_j Y_j a system's total,

    .. math:: \\alpha = \\frac{M}{M - 1}\\left(1 - \\frac{\\sum_j \\sigma^2_{Y_j}}
              {\\sigma^2_X}\\right)

    with variances over systems (computed with ddof=1; the ratio is the same
    with ddof=0, which the paper's R code uses).  alpha is a lower bound of
    the reliability of X (equal when all inputs measure the true score
    equally well, "tau-equivalence").

    The standard error of measurement of a system's mean score is
    ``sd * sqrt(1 - alpha)`` where ``sd`` is the standard deviation (ddof=1)
    over systems of the mean scores (section 4.1.1: METEOR on SummEval, sd
    .38 and alpha .966 give .07; MetricEval's ``metric.consistency`` uses the
    same sd).  ``inputs_needed`` is the benchmark size at which alpha would
    reach ``target`` by Spearman-Brown, ``M * target (1 - alpha) / (alpha (1
    - target))``.

    Parameters
    ----------
    dataset : Dataset
    columns : str or list of str, optional
        Human or metric columns; default all (with ``run``: all that have a
        run or rater of that label).
    run : str, optional
        Use one run (metric) or rater (human) of each column, by label
        (``dataset.rater_labels(column)``); default the mean over them.
    normalize : str
        Rank normalization of each run over its cells before averaging (see
        :func:`rank_normal`).  Default ``"none"``.
    ci : {"boot-systems", "boot-inputs", "boot-both", "feldt", "none"}
        ``boot-systems`` (default): percentile bootstrap resampling systems
        with replacement, inputs fixed (the sampling of examinees, the
        classical bootstrap of alpha); ``boot-inputs``: resampling inputs,
        systems fixed (the sampling of the benchmark's items); ``boot-both``:
        both; ``feldt``: Feldt's (1965) interval 1 - (1 - alpha) F, F the
        F(N - 1, (N - 1)(M - 1)) quantiles (exact under normal scores with
        equal item variances; the interval of ``pingouin.cronbach_alpha``).
    confidence_level : float
        Default 0.95.
    n_resamples : int
        Bootstrap replicates (default 1000).
    target : float
        Target reliability of ``inputs_needed`` (default 0.9).
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts; a column's stream
        depends only on the seed, the column name and ``ci``.

    Returns
    -------
    Consistencies

    Raises
    ------
    DataError
        Unknown column, or unknown ``run`` label for a column.
    ParameterError
        Bad option values.

    Warns
    -----
    MissingCellsWarning
        Missing cells: systems without any score are dropped, then every
        input with a missing cell (listwise deletion of items, so alpha is
        computed on a complete matrix); counted in the result.
    ConstantInputWarning, UndefinedStatisticWarning
        alpha is NaN when the total score is constant over systems, or fewer
        than two systems or complete inputs remain.

    Examples
    --------
    >>> import numpy as np
    >>> import metaeval
    >>> from metaeval.reliability import consistency
    >>> y = np.array([[1.0, 2.0, 2.0], [2.0, 3.0, 3.0], [4.0, 4.0, 5.0], [3.0, 3.0, 2.0]])
    >>> ds = metaeval.Dataset({"human": y}, human="human", systems=list("abcd"),
    ...                       inputs=list("xyz"))
    >>> res = consistency(ds, ci="feldt")[0]
    >>> round(res.statistic, 4), round(res.sem, 4)
    (0.9091, 0.3333)
    """
    check_dataset(dataset)
    cols = _score_columns(dataset, columns, run)
    check_choice(normalize, "normalize", NORMALIZATIONS)
    check_choice(ci, "ci", CONSISTENCY_CI)
    opt = {
        "ci": ci,
        "confidence_level": check_probability(confidence_level),
        "n_resamples": _rs.check_n_resamples(n_resamples),
        "target": _check_target(target),
        "run": run,
        "normalize": normalize,
    }
    ss, tag = _rs.seed_sequence(rng)
    opt["seed"] = tag
    out = []
    for c in cols:
        res = _consistency_one(_matrix(dataset, c, run, normalize), c, opt, ss)
        out.append(res)
        _warn_missing("consistency", c, res.n_systems_dropped, res.n_inputs_dropped)
        if not np.isfinite(res.statistic):
            _warn_alpha_undefined("Cronbach's alpha", c, res.n_systems, res.n_inputs)
            continue
        if res.statistic <= 0:
            warnings.warn(
                f"Cronbach's alpha of {c!r} is {res.statistic:.3g} <= 0: its inputs do not rank the "
                f"systems in the same direction, so no number of inputs reaches {opt['target']} "
                "(inputs_needed = inf)",
                NonPositiveReliabilityWarning,
                stacklevel=user_stacklevel(),
            )
        unit = {"boot-systems": "systems", "boot-inputs": "inputs", "boot-both": "systems"}.get(ci)
        n_units = {"systems": res.n_systems, "inputs": res.n_inputs}.get(unit, 0)
        if unit is not None and n_units < _SMALL_BOOTSTRAP:
            warnings.warn(
                f"the {ci} interval of alpha for {c!r} resamples only {n_units} {unit} "
                f"(fewer than {_SMALL_BOOTSTRAP}): its coverage can be far from "
                f"{opt['confidence_level']:.0%}; read it as a rough range",
                SmallSampleWarning,
                stacklevel=user_stacklevel(),
            )
        if res.n_resamples_nan > 0.05 * max(res.n_resamples, 1):
            warnings.warn(
                f"{res.n_resamples_nan} of {res.n_resamples} bootstrap replicates of alpha for "
                f"{c!r} are undefined (constant total score); the interval uses the rest "
                "(counted in n_resamples_nan)",
                UndefinedStatisticWarning,
                stacklevel=user_stacklevel(),
            )
    return Consistencies(tuple(out))


# ------------------------------------------------------------------ alpha vs benchmark size


@dataclass(frozen=True)
class ConsistencyCurve(_Result):
    """alpha against the number of inputs for one column (see :func:`consistency_curve`).

    Attributes
    ----------
    column : str
    alpha_full : float
        alpha on all ``n_inputs`` complete inputs.
    n_inputs : int
    n_subsets : int
        Random subsets per size.
    confidence_level : float
    run : str or None
    normalize : str
    signature : str
    sizes : ndarray of int
        The subset sizes m.
    mean, sd : ndarray
        Mean and standard deviation (ddof=1) of alpha over the subsets of
        each size (NaN replicates left out).
    ci_low, ci_high : ndarray
        Percentiles of alpha over the subsets (the central
        ``confidence_level`` range).
    prophecy : ndarray
        Spearman-Brown prophecy ``spearman_brown(alpha_full, m / n_inputs)``.
    n_nan : ndarray of int
        Subsets whose alpha was undefined.
    """

    column: str
    alpha_full: float
    n_inputs: int
    n_subsets: int
    confidence_level: float
    run: str | None
    normalize: str
    signature: str
    sizes: np.ndarray | None = field(**_ARR)
    mean: np.ndarray | None = field(**_ARR)
    sd: np.ndarray | None = field(**_ARR)
    ci_low: np.ndarray | None = field(**_ARR)
    ci_high: np.ndarray | None = field(**_ARR)
    prophecy: np.ndarray | None = field(**_ARR)
    n_nan: np.ndarray | None = field(**_ARR)

    _CURVE = ("size", "alpha_mean", "alpha_sd", "ci_low", "ci_high", "prophecy", "n_nan")

    @classmethod
    def frame_columns(cls):
        return ["column", *cls._CURVE, "alpha_full", "n_inputs", "n_subsets",
                "confidence_level", "run", "normalize", "signature"]

    def _rows(self):
        base = {
            "column": self.column,
            "alpha_full": self.alpha_full,
            "n_inputs": self.n_inputs,
            "n_subsets": self.n_subsets,
            "confidence_level": self.confidence_level,
            "run": self.run,
            "normalize": self.normalize,
            "signature": self.signature,
        }
        rows = []
        for i, m in enumerate(self.sizes):
            rows.append(
                {
                    **base,
                    "size": int(m),
                    "alpha_mean": float(self.mean[i]),
                    "alpha_sd": float(self.sd[i]),
                    "ci_low": float(self.ci_low[i]),
                    "ci_high": float(self.ci_high[i]),
                    "prophecy": float(self.prophecy[i]),
                    "n_nan": int(self.n_nan[i]),
                }
            )
        return rows


@dataclass(frozen=True)
class ConsistencyCurves(_Collection):
    """The results of :func:`consistency_curve`, one :class:`ConsistencyCurve` per column.

    ``to_frame()`` has one row per column and size with the columns
    ``column, size, alpha_mean, alpha_sd, ci_low, ci_high, prophecy, n_nan,
    alpha_full, n_inputs, n_subsets, confidence_level, run, normalize,
    signature``.
    """

    _item = ConsistencyCurve


def _default_sizes(M):
    return np.unique(np.clip(np.round(np.linspace(M / 10, M, 10)).astype(int), 2, M))


@accepts_frames()
def consistency_curve(
    dataset,
    columns=None,
    *,
    sizes=None,
    n_subsets=200,
    run=None,
    normalize="none",
    confidence_level=0.95,
    rng=None,
) -> ConsistencyCurves:
    """alpha as a function of benchmark size (seed paper 002, Figure 3).

    For each size m, ``n_subsets`` subsets of m inputs are drawn at random
    without replacement (each subset independently) from the complete inputs
    of the column (after the listwise deletion of :func:`consistency`), and
    Cronbach's alpha is computed on each; the mean, standard deviation and
    central ``confidence_level`` percentile range over the subsets are
    reported beside the Spearman-Brown prophecy from the full alpha,
    ``m/M alpha / (1 + (m/M - 1) alpha)``.  MetricEval's
    ``metric.consistency(data, N)`` does the same with 200 subsets (it keeps
    only the distinct ones) and reports the mean.

    Parameters
    ----------
    dataset : Dataset
    columns : str or list of str, optional
        Default all columns (with ``run``: all that have that label).
    sizes : sequence of int, optional
        Subset sizes, each in [2, M]; default 10 sizes from M/10 to M (10,
        20, ..., 100 for SummEval, as the paper's figure).
    n_subsets : int
        Subsets per size (default 200, as MetricEval).
    run, normalize
        As in :func:`consistency`.
    confidence_level : float
        Width of the percentile range (default 0.95).
    rng : seed, optional
        A size's subsets depend only on the seed, the column name and m.

    Returns
    -------
    ConsistencyCurves

    Examples
    --------
    >>> import numpy as np
    >>> import metaeval
    >>> from metaeval.reliability import consistency_curve
    >>> rng = np.random.default_rng(0)
    >>> y = np.arange(6.0)[:, None] + rng.normal(0, 3, size=(6, 40))  # 6 systems, 40 inputs
    >>> ds = metaeval.Dataset({"human": y}, human="human", systems=list("abcdef"),
    ...                       inputs=[f"i{j}" for j in range(40)])
    >>> cur = consistency_curve(ds, sizes=[5, 10, 20, 40], n_subsets=100, rng=0)[0]
    >>> round(cur.alpha_full, 4)
    0.9123
    >>> cur.mean.round(2), cur.prophecy.round(2)
    (array([0.37, 0.68, 0.82, 0.91]), array([0.57, 0.72, 0.84, 0.91]))
    >>> cur.to_frame().shape
    (4, 15)
    """
    check_dataset(dataset)
    cols = _score_columns(dataset, columns, run)
    check_choice(normalize, "normalize", NORMALIZATIONS)
    n_subsets = check_int(n_subsets, "n_subsets")
    cl = check_probability(confidence_level)
    if sizes is not None:
        sizes = [sizes] if isinstance(sizes, (int, np.integer)) else sizes
        try:
            sizes = list(sizes)
        except TypeError:
            raise ParameterError(f"sizes={sizes!r} must be a sequence of ints") from None
        sizes = [check_int(m, "sizes", minimum=2) for m in sizes]
        if not sizes:
            raise ParameterError("sizes is empty")
    ss, tag = _rs.seed_sequence(rng)
    out = []
    for c in cols:
        y, n_sys_drop, n_inp_drop = listwise_complete(_matrix(dataset, c, run, normalize))
        N, M = y.shape
        _warn_missing("consistency_curve", c, n_sys_drop, n_inp_drop)
        if sizes is not None:
            grid = np.array(sorted(set(sizes)))
        else:  # the default curve of a column with < 2 complete inputs is empty (its alpha is NaN, warned)
            grid = np.array(_default_sizes(M) if M >= 2 else [], dtype=int)
        if grid.size and grid.max() > M:
            raise ParameterError(
                f"sizes={grid.tolist()} exceed the {M} complete inputs of column {c!r}; "
                f"choose sizes in [2, {M}]"
            )
        full = float(alpha_batch(y[None])[0])
        if not np.isfinite(full):
            _warn_alpha_undefined("Cronbach's alpha", c, N, M)
        mean, sd, lo, hi, nn = [], [], [], [], []
        a = (1.0 - cl) / 2.0
        for m in grid:
            gen = _rs.named_generator(ss, "consistency_curve", c, str(int(m)))
            pick = _rs.subsets(gen, n_subsets, M, m)
            vals = alpha_batch(y[:, pick].transpose(1, 0, 2))
            fin = vals[np.isfinite(vals)]
            nn.append(int(n_subsets - fin.size))
            mean.append(float(fin.mean()) if fin.size else np.nan)
            sd.append(float(fin.std(ddof=1)) if fin.size >= 2 else np.nan)
            if fin.size:
                q = np.percentile(fin, [100 * a, 100 * (1 - a)])
                lo.append(float(q[0]))
                hi.append(float(q[1]))
            else:
                lo.append(np.nan)
                hi.append(np.nan)
        sig = make_signature(
            method="cronbach_alpha",
            nan="listwise-inputs",
            seed=tag,
            curve=("subsets", n_subsets, cl),
            run=run if run is not None else "mean",
            norm=normalize,
            ddof=1,
        )
        out.append(
            ConsistencyCurve(
                column=c,
                alpha_full=full,
                n_inputs=int(M),
                n_subsets=n_subsets,
                confidence_level=cl,
                run=run,
                normalize=normalize,
                signature=sig,
                sizes=grid.astype(int),
                mean=np.array(mean),
                sd=np.array(sd),
                ci_low=np.array(lo),
                ci_high=np.array(hi),
                prophecy=np.asarray(spearman_brown(full, grid / max(M, 1)), dtype=float),
                n_nan=np.array(nn, dtype=int),
            )
        )
    return ConsistencyCurves(tuple(out))


# ------------------------------------------------------------------ rater agreement


@dataclass(frozen=True)
class Agreement(_Result):
    """One agreement statistic of one column's raters (see :func:`agreement`).

    Attributes
    ----------
    column : str
    method : str
        A key of :data:`AGREEMENT_METHODS`.
    statistic : float
        Krippendorff's alpha or the ICC.
    ci_low, ci_high : float
        ICC confidence interval (McGraw and Wong 1996); NaN for
        Krippendorff's alpha.
    pvalue : float
        ICC F test of ICC = 0 (one-sided); NaN for Krippendorff's alpha.
    f_statistic, df1, df2 : float
        The F test's statistic and degrees of freedom (ICC only).
    confidence_level : float
    n_units : int
        Units used: pairable cells (at least two ratings) for Krippendorff,
        complete cells for the ICCs.
    n_units_dropped : int
        Cells not used (fewer than two ratings; for the ICCs, any missing).
    n_raters : int
        Raters per unit: R, or for the one-way ICCs of rotating raters or
        rater slots the k ratings of each cell used.
    n_values : int
        Ratings used (Krippendorff's n of pairable values; ``n_units *
        n_raters`` for the ICCs).
    observed_disagreement, expected_disagreement : float
        Krippendorff's D_o and D_e (NaN for the ICCs).
    signature : str
    notes : str
        Empty, or why the p-value and the interval of an ICC disagree: the F
        test is one-sided (ICC > 0) and the interval two-sided, so a p-value
        between (1 - confidence_level) / 2 and 1 - confidence_level sits beside
        an interval that contains 0 (:func:`metaeval.stats.inference.story_note`).
    """

    column: str
    method: str
    statistic: float
    ci_low: float
    ci_high: float
    pvalue: float
    f_statistic: float
    df1: float
    df2: float
    confidence_level: float
    n_units: int
    n_units_dropped: int
    n_raters: int
    n_values: int
    observed_disagreement: float
    expected_disagreement: float
    signature: str
    notes: str = ""


@dataclass(frozen=True)
class Agreements(_Collection):
    """The results of :func:`agreement`, one :class:`Agreement` per column and method.

    ``to_frame()`` has one row per (column, method) with the columns
    ``column, method, statistic, ci_low, ci_high, pvalue, f_statistic, df1,
    df2, confidence_level, n_units, n_units_dropped, n_raters, n_values,
    observed_disagreement, expected_disagreement, signature``.
    """

    _item = Agreement


def _rater_columns(dataset, columns):
    if columns is None:
        cols = [c for c in dataset.human if dataset.ratings(c).shape[0] >= 2]
        if not cols:
            raise DataError(
                "no human column of this dataset has two or more raters; rater agreement needs "
                "individual ratings: build the Dataset with a rater column "
                "(Dataset.from_frame(..., rater='rater')) or raters in columns "
                "(Dataset.from_frame(..., raters={'coherence': ['r1', 'r2']}))"
            )
        return cols
    cols = [_known(dataset, c) for c in as_list(columns, "columns")]
    for c in cols:
        if dataset.ratings(c).shape[0] < 2:
            what = "rater" if c in dataset.human else "run"
            raise DataError(
                f"column {c!r} has a single {what}, so agreement between raters cannot be "
                "computed: it needs the individual ratings (R >= 2), e.g. "
                "Dataset.from_frame(..., rater='rater') or raters={...}; for SummEval use the "
                "averaged columns 'coherence', 'consistency', 'fluency', 'relevance', which "
                "carry the 3 experts"
            )
    return cols


@accepts_frames(human="columns")
def agreement(
    dataset, columns=None, *, method=DEFAULT_AGREEMENT, confidence_level=0.95, raters="same"
) -> Agreements:
    """Agreement between the raters of each human column.

    Units are the (system, input) cells; each is rated by the R raters of
    ``dataset.ratings(column)`` (shape ``(R, N, M)``), giving an R x (N M)
    reliability table.

    Krippendorff's alpha (``krippendorff_interval``, ``_ordinal``,
    ``_nominal``, ``_ratio``; Krippendorff 2011)
        alpha = 1 - D_o / D_e from the coincidence matrix of pairable values
        (see :data:`KRIPPENDORFF_METRICS` for the difference functions).
        Missing ratings are allowed: units with fewer than two ratings are
        not pairable and are left out.  alpha is NaN (with a
        :class:`~metaeval.errors.ConstantInputWarning`) when all pairable
        values are equal (D_e = 0).
    Intraclass correlations (``icc1`` ... ``icc3k``; Shrout and Fleiss 1979,
    McGraw and Wong 1996)
        From the two-way ANOVA of the complete units x raters table: MSR
        (units), MSC (raters), MSE (residual), MSW (within units):

        ======  ==========================================================
        icc1    (MSR - MSW) / (MSR + (k - 1) MSW)
        icc2    (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n)
        icc3    (MSR - MSE) / (MSR + (k - 1) MSE)
        icc1k   (MSR - MSW) / MSR
        icc2k   (MSR - MSE) / (MSR + (MSC - MSE) / n)
        icc3k   (MSR - MSE) / MSR
        ======  ==========================================================

        with the F test of ICC = 0 and the McGraw and Wong confidence
        intervals (the output of ``pingouin.intraclass_corr`` and
        ``psych::ICC``).  Units with a missing rating are dropped (listwise,
        as pingouin and psych do), with a :class:`MissingCellsWarning`.

    Rotating raters and rater slots
        ICC(2), ICC(3) and their k forms need the same raters in every cell
        (they separate a rater effect, MSC).  When raters rotate over cells
        (each cell rated by k of R raters, so fewer than two cells have all
        R ratings; detected) or when ``raters="slots"`` declares that the
        rater columns are slots (``rater1..raterK``, different people in
        different cells), raters are nested in units: only the one-way
        forms ``icc1`` and ``icc1k`` apply (Shrout and Fleiss 1979, case 1;
        McGraw and Wong 1996, Table 4, model 1).  They are computed from
        each cell's own k ratings (k the most common count; cells with
        another count are dropped with a :class:`MissingCellsWarning`),
        their ``n_raters`` is k, and their signature says ``raters:rotating``
        or ``raters:slots``.  The other ICC forms are NaN (``n_units`` 0,
        signature ``raters:...``) with a
        :class:`~metaeval.errors.RaterDesignWarning`; the command line leaves
        them out of its table.  Krippendorff's alpha needs no fixed raters and
        is computed as usual.

    Parameters
    ----------
    dataset : Dataset
    columns : str or list of str, optional
        Columns with R >= 2 raters; default every human column that has them.
    method : str or list of str
        Keys of :data:`AGREEMENT_METHODS`; default the interval and ordinal
        Krippendorff alphas and the six ICCs.
    confidence_level : float
        Of the ICC intervals (default 0.95).
    raters : {"same", "slots"}
        The rating design (:data:`RATER_DESIGNS`): ``"same"`` (default; the
        same R raters in every cell, rotating raters detected) or
        ``"slots"``.

    Returns
    -------
    Agreements

    Raises
    ------
    DataError
        A column with a single rater (or run), an unknown column, or no
        column with raters when ``columns`` is None.

    Examples
    --------
    >>> import numpy as np
    >>> import metaeval
    >>> from metaeval.reliability import agreement
    >>> r = np.array([[[1.0, 2.0, 3.0]], [[1.0, 2.0, 4.0]]])   # 2 raters, 1 system, 3 inputs
    >>> ds = metaeval.Dataset({"q": r}, human="q", systems=["s"], inputs=["x", "y", "z"])
    >>> res = agreement(ds, method=["krippendorff_interval", "icc3"])
    >>> [round(a.statistic, 4) for a in res]
    [0.878, 0.9]
    """
    check_dataset(dataset)
    methods = [check_choice(m, "method", AGREEMENT_METHODS) for m in as_list(method, "method")]
    cl = check_probability(confidence_level)
    raters = check_choice(raters, "raters", RATER_DESIGNS)
    cols = _rater_columns(dataset, columns)
    out = []
    for c in cols:
        r = np.asarray(dataset.ratings(c), dtype=float)
        R = r.shape[0]
        data = r.reshape(R, -1)
        U = data.shape[1]
        icc_tab = None
        design = _rater_design(data, raters)
        left_out = [m for m in methods if m in SAME_RATER_FORMS] if design != "same" else []
        if left_out:
            why = (
                "its rater columns are declared slots (different people in different cells)"
                if design == "slots"
                else f"its raters rotate over cells (fewer than two cells rated by all {R})"
            )
            warnings.warn(
                f"agreement of {c!r}: {', '.join(left_out)} not defined (NaN): {why}, and "
                "ICC(2)/ICC(3) need the same raters in every cell; the one-way icc1/icc1k and "
                "Krippendorff's alpha apply",
                RaterDesignWarning,
                stacklevel=2,
            )
        for m in methods:
            if m in left_out:
                out.append(
                    Agreement(
                        column=c,
                        method=m,
                        statistic=np.nan,
                        ci_low=np.nan,
                        ci_high=np.nan,
                        pvalue=np.nan,
                        f_statistic=np.nan,
                        df1=np.nan,
                        df2=np.nan,
                        confidence_level=cl,
                        n_units=0,
                        n_units_dropped=U,
                        n_raters=R,
                        n_values=0,
                        observed_disagreement=np.nan,
                        expected_disagreement=np.nan,
                        signature=make_signature(method=m, raters=design, units="cells"),
                    )
                )
                continue
            if m in KRIPPENDORFF_METRICS:
                a, do, de, n, nu = _krippendorff(data, m)
                res = Agreement(
                    column=c,
                    method=m,
                    statistic=float(a),
                    ci_low=np.nan,
                    ci_high=np.nan,
                    pvalue=np.nan,
                    f_statistic=np.nan,
                    df1=np.nan,
                    df2=np.nan,
                    confidence_level=cl,
                    n_units=int(nu),
                    n_units_dropped=int(U - nu),
                    n_raters=R,
                    n_values=int(n),
                    observed_disagreement=float(do),
                    expected_disagreement=float(de),
                    signature=make_signature(method=m, nan="pairable-units", units="cells"),
                )
                if not np.isfinite(a):
                    warnings.warn(
                        f"{m} of {c!r} is undefined (NaN): "
                        + (
                            "no unit has two or more ratings"
                            if nu == 0
                            else "all pairable ratings are equal (no expected disagreement)"
                        ),
                        ConstantInputWarning if nu else UndefinedStatisticWarning,
                        stacklevel=user_stacklevel(),
                    )
            else:
                if design == "same":
                    complete = np.isfinite(data).all(0)
                    table, k_used = data[:, complete].T, R
                else:
                    table, complete, k_used = _nested_table(data)
                if icc_tab is None:
                    icc_tab, _ = _icc_table(table, cl)
                    n_drop = int((~complete).sum())
                    if n_drop:
                        warnings.warn(
                            f"ICC of {c!r}: {n_drop} of {U} cells miss a rating and were "
                            "dropped (listwise; counted in n_units_dropped)"
                            if design == "same"
                            else f"ICC of {c!r}: {n_drop} of {U} cells do not have exactly "
                            f"{k_used} ratings (the most common count) and were dropped "
                            "(counted in n_units_dropped)",
                            MissingCellsWarning,
                            stacklevel=user_stacklevel(),
                        )
                    if not np.isfinite(icc_tab["icc3"][0]):
                        warnings.warn(
                            f"the ICCs of {c!r} are undefined (NaN): all ratings are equal "
                            "or fewer than 2 complete cells remain",
                            ConstantInputWarning,
                            stacklevel=user_stacklevel(),
                        )
                icc, F, d1, d2, p, lo, hi = icc_tab[m]
                nu = int(complete.sum())
                res = Agreement(
                    column=c,
                    method=m,
                    statistic=icc,
                    ci_low=lo,
                    ci_high=hi,
                    pvalue=p,
                    f_statistic=F,
                    df1=d1,
                    df2=d2,
                    confidence_level=cl,
                    n_units=nu,
                    n_units_dropped=int(U - nu),
                    n_raters=k_used,
                    n_values=nu * k_used,
                    observed_disagreement=np.nan,
                    expected_disagreement=np.nan,
                    signature=make_signature(
                        method=m,
                        nan="listwise-units",
                        ci=("mcgraw-wong", cl),
                        units="cells",
                        raters=None if design == "same" else design,
                    ),
                    notes=story_note(p, lo, hi, cl, alternative="greater", why=(
                        "the F test is one-sided (ICC > 0), the interval two-sided: a one-sided p between "
                        f"{(1 - cl) / 2:.3g} and {1 - cl:.3g} sits beside an interval that contains 0")),
                )
            out.append(res)
    return Agreements(tuple(out))


# ------------------------------------------------------------------ pairwise rater correlations


@dataclass(frozen=True)
class RaterCorrelation(_Result):
    """The correlation between two raters of one column (see :func:`rater_correlations`).

    Attributes
    ----------
    column : str
    rater_a, rater_b : str
        Rater labels (``rater_a`` comes first in the dataset's order).
    level, method, average : str
        As in :func:`metaeval.correlate`.
    statistic : float
    n : int
        Valid (rater_a, rater_b) pairs used (systems at ``system`` level,
        cells otherwise, summed over the groups used).
    n_groups, n_groups_dropped : int
        Groups at the level, and groups whose statistic was undefined.
    signature : str
    """

    column: str
    rater_a: str
    rater_b: str
    level: str
    method: str
    average: str
    statistic: float
    n: int
    n_groups: int
    n_groups_dropped: int
    signature: str


@dataclass(frozen=True)
class RaterCorrelations(_Collection):
    """The results of :func:`rater_correlations`, one per column and rater pair.

    ``to_frame()`` has one row per (column, rater pair) with the columns
    ``column, rater_a, rater_b, level, method, average, statistic, n,
    n_groups, n_groups_dropped, signature``.
    """

    _item = RaterCorrelation

    def matrix(self, column: str) -> pd.DataFrame:
        """R x R table of one column's correlations (diagonal 1, symmetric)."""
        rs = [r for r in self.results if r.column == column]
        if not rs:
            raise KeyError(f"no results for column {column!r}")
        labels = list(dict.fromkeys([x for r in rs for x in (r.rater_a, r.rater_b)]))
        out = pd.DataFrame(np.eye(len(labels)), index=labels, columns=labels)
        for r in rs:
            out.loc[r.rater_a, r.rater_b] = out.loc[r.rater_b, r.rater_a] = r.statistic
        return out


@accepts_frames(human="columns")
def rater_correlations(
    dataset, columns=None, *, level="system", method="kendall_b", average="macro", raters="same"
) -> RaterCorrelations:
    """Correlation between every pair of raters of each human column.

    Rater a's N x M scores are correlated with rater b's at ``level`` with
    ``method``, exactly as :func:`metaeval.correlate` correlates a metric
    with a human column (same levels, coefficients, pairwise deletion of
    missing cells and averaging).  Seed paper 002 (Table 1, section 4.1.2)
    reports Kendall's tau between experts' system means as the convergent
    validity entries of its MTMM table; that is ``level="system",
    method="kendall_b"`` (the default; R's ``cor(method="kendall")`` is
    tau-b).

    Parameters
    ----------
    dataset : Dataset
    columns : str or list of str, optional
        Columns with R >= 2 raters; default every human column that has them.
    level : str
        ``system``, ``input``, ``item`` or ``global``.
    method : str
        A coefficient of :data:`metaeval.METHODS`.
    average : {"macro", "micro"}
        Averaging at ``input`` and ``item``.
    raters : {"same", "slots"}
        The rating design (:data:`RATER_DESIGNS`).  Per-rater correlations
        need the same raters in every cell: ``"slots"`` is an error, and
        rotating raters (fewer than two cells rated by all raters) give a
        :class:`~metaeval.errors.RaterDesignWarning` (each pair is
        correlated over the cells both rated).

    Returns
    -------
    RaterCorrelations

    Raises
    ------
    DataError
        A column with a single rater, or an unknown column.
    ParameterError
        ``raters="slots"``.

    Warns
    -----
    ConstantInputWarning
        When a pair's statistic is undefined (a rater is constant).

    Examples
    --------
    >>> import numpy as np
    >>> import metaeval
    >>> from metaeval.reliability import rater_correlations
    >>> r = np.array([[[1.0, 2.0], [3.0, 3.0], [2.0, 5.0]],
    ...               [[2.0, 2.0], [3.0, 4.0], [4.0, 5.0]]])   # 2 raters, 3 systems, 2 inputs
    >>> ds = metaeval.Dataset({"q": r}, human="q", systems=list("abc"), inputs=["x", "y"])
    >>> res = rater_correlations(ds, level="global", method="pearson")
    >>> res[0].rater_a, res[0].rater_b, round(res[0].statistic, 4)
    ('r0', 'r1', 0.8058)
    """
    check_dataset(dataset)
    level = check_level(level)
    check_method_levels(method, [level])
    average = check_average(average)
    raters = check_choice(raters, "raters", RATER_DESIGNS)
    if raters == "slots":
        raise ParameterError(
            "rater_correlations needs the same raters in every cell, but raters='slots' says the "
            "rater columns are slots (different people in different cells): a correlation "
            "between two slots mixes raters; use agreement(..., raters='slots') (ICC(1), "
            "Krippendorff's alpha) instead"
        )
    cols = _rater_columns(dataset, columns)
    out = []
    for c in cols:
        r = dataset.ratings(c)
        labels = dataset.rater_labels(c)
        R = r.shape[0]
        if _rater_design(np.asarray(r, dtype=float).reshape(R, -1), raters) == "rotating":
            warnings.warn(
                f"rater correlations of {c!r}: its raters rotate over cells (fewer than two cells "
                f"rated by all {R}); each pair is correlated over the cells both rated, which "
                "differ between pairs, so the correlations are not comparable as an MTMM block",
                RaterDesignWarning,
                stacklevel=2,
            )
        for a in range(R):
            for b in range(a + 1, R):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    lv = level_values(r[a], r[b], level, method, average=average)
                group = lv.group[0]
                nv = lv.n_valid[0]
                dropped = ~np.isfinite(group)
                stat = float(lv.value[0])
                res = RaterCorrelation(
                    column=c,
                    rater_a=labels[a],
                    rater_b=labels[b],
                    level=level,
                    method=method,
                    average=average,
                    statistic=stat,
                    n=int(nv[~dropped].sum()),
                    n_groups=int(group.size),
                    n_groups_dropped=int(dropped.sum()),
                    signature=make_signature(
                        level=level,
                        method=method,
                        avg=average if level in ("input", "item") else None,
                        nan="pairwise",
                    ),
                )
                out.append(res)
                if res.n_groups_dropped:
                    warnings.warn(
                        f"{method} between raters {labels[a]!r} and {labels[b]!r} of {c!r}: "
                        f"{res.n_groups_dropped} of {res.n_groups} group(s) at level {level!r} "
                        "are constant or have fewer than 2 valid pairs (NaN, left out)",
                        ConstantInputWarning,
                        stacklevel=user_stacklevel(),
                    )
    return RaterCorrelations(tuple(out))


__all__ = [
    "AGREEMENT_METHODS",
    "CONSISTENCY_CI",
    "ICC_FORMS",
    "KRIPPENDORFF_METRICS",
    "RATER_DESIGNS",
    "SAME_RATER_FORMS",
    "NORMALIZATIONS",
    "STABILITY_METHODS",
    "Agreement",
    "Agreements",
    "Consistencies",
    "Consistency",
    "ConsistencyCurve",
    "ConsistencyCurves",
    "MissingCellsWarning",
    "RaterCorrelation",
    "RaterCorrelations",
    "Stabilities",
    "Stability",
    "agreement",
    "consistency",
    "consistency_curve",
    "rank_normal",
    "rater_correlations",
    "spearman_brown",
    "spearman_brown_factor",
    "stability",
]
