"""Diagnostics of metric behaviour beyond one correlation (seed papers 001 and 003).

=================================  ==========================================================
:func:`perturbation_detection`     share of (original, perturbed) pairs the metric orders
                                   correctly (seed paper 001, section 2.3.2; Table 9)
:func:`ks_score`                   Kolmogorov-Smirnov distance between the metric scores of
                                   low- and high-quality texts (001, Eq. 4, Table 3)
:func:`meta_correlation`           correlation across systems between system quality and the
                                   metric's within-system correlation (001, Eq. 5-7)
:func:`sample_size`                mean and spread of the sample-level correlation on random
                                   subsets of n texts (001, Appendix C)
:func:`reference_sensitivity`      distribution of the correlation when one reference per
                                   input is drawn at random (001, Appendix B, Figure 5)
:func:`correlation_design`         system- and sentence-level correlation matrices of all
                                   columns with Bonferroni-corrected significance (003, Fig. 1)
=================================  ==========================================================

Seed paper 001's *sample-level* correlation (its Eq. 3: one correlation over
all texts) is our ``global`` level, and so is seed paper 003's
*sentence-level* correlation (every generated text is a data point); their
*system-level* correlation is our ``system`` level.  Eq. 6 (the correlation
within system i) is one group of our ``item`` level.

Every analysis takes the data first and keyword-only options and returns a
frozen result (raw floats) with ``to_frame()`` (tidy; the columns are listed
in the class docstring), ``to_dict()`` and a ``signature``; degenerate cases
give NaN, a typed warning (:mod:`metaeval.errors`) and a count in the result.
Data may be a :class:`~metaeval.Dataset` or a mapping of column name to a
score array (``(N, M)`` systems x inputs, or 1-D for texts without systems),
with ``human=`` naming the human column(s).

The ``plot_*`` functions draw the paper's figures from results (matplotlib
is imported only when one is called) and return the Figure.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as _st

from ._results import _ARR, _Collection, _Result
from ._signature import make_signature
from ._stacklevel import user_stacklevel
from .data import accepts_frames
from ._signature import fmt_number
from ._vocab import (
    ALTERNATIVES,
    BINOMIAL_CIS,
    CORRECTIONS,
    as_list,
    check_choice,
    check_int,
    check_number,
    check_probability,
    metric_columns,
)
from .data import dataset_from
from .data import Dataset
from .data import sysscores as _sys
from .errors import (
    ConstantInputWarning,
    DataError,
    ParameterError,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
)
from .stats import resampling as _rs
from .stats.coefficients import get_coefficient
from .stats.inference import binomial_interval, correlation_test, use_kernels
from .stats.exact import nanmean as exact_nanmean
from .stats.ks import ks_statistic
from .stats.levels import check_level, level_values, match_system_shapes
from .stats.multitest import adjust_pvalues

#: Correlation coefficients offered by the diagnostics.
CORRELATIONS = ("pearson", "spearman", "kendall_b", "kendall_c")
#: ``pvalue`` of :func:`ks_score`: the methods of ``scipy.stats.ks_2samp``.
KS_PVALUES = ("auto", "exact", "asymp")
#: Binomial confidence intervals of :func:`perturbation_detection`.
#: Multiple-testing corrections of :func:`correlation_design`.

#: Seed paper 001, Table 3: human-score thresholds ``(low, high)`` per dataset
#: (low quality: human ``< low``; high quality: human ``>= high``).
KS_THRESHOLDS = {
    "bagel": (3.0, 5.0),
    "newsroom": (3.0, 4.0),
    "qags": (1.0, 1.0),
    "sfhot": (3.0, 5.0),
    "sfres": (3.0, 5.0),
    "summeval": (3.0, 4.0),
    "usr": (2.0, 2.0),
    "webnlg": (2.0, 3.0),
}


# --------------------------------------------------------------------------
# result plumbing



# --------------------------------------------------------------------------
# validation helpers


def _method(method, name="method"):
    get_coefficient(method)  # unknown names: the registry's message
    if method not in CORRELATIONS:
        raise ParameterError(
            f"{name}={method!r} is not offered here; choose one of {', '.join(CORRELATIONS)}"
        )
    return method


#: accepted besides a Dataset and a DataFrame (the error message names it)
_MAPPING = "a mapping of column name to score array"


# --------------------------------------------------------------------------
# 1. perturbation detection


@dataclass(frozen=True)
class Detection(_Result):
    """How often a metric scores an original above its perturbed version.

    Attributes
    ----------
    metric : str
    statistic : float
        Detection accuracy: n_greater / n, the share of pairs with
        s > s_hat (seed paper 001, section 2.3.2); ties count as misses, as
        in the paper.  NaN when n = 0.
    tie_share, less_share : float
        n_ties / n and n_less / n (the three shares sum to 1).
    ci_low, ci_high : float
        Binomial interval of ``statistic`` (``ci_method``).
    pvalue : float
        Exact sign test of the untied pairs: binomial test of n_greater out
        of n_greater + n_less against 1/2 (``alternative``; scipy's
        ``binomtest``).  NaN when every pair is tied.
    n : int
        Pairs used: both scores present (and, with ``min_human``, the human
        score of the original present and >= ``min_human``).
    n_greater, n_ties, n_less : int
        Pairs with s - s_hat > atol, |s - s_hat| <= atol, s - s_hat < -atol.
    n_missing : int
        Pairs with a missing score (e.g. skipped perturbations).
    n_excluded : int
        Pairs dropped by ``min_human`` (human score missing or below it).
    """

    metric: str
    statistic: float
    tie_share: float
    less_share: float
    ci_low: float
    ci_high: float
    pvalue: float
    n: int
    n_greater: int
    n_ties: int
    n_less: int
    n_missing: int
    n_excluded: int
    min_human: float
    atol: float
    ci_method: str
    confidence_level: float
    alternative: str
    signature: str


@dataclass(frozen=True)
class Detections(_Collection):
    """Results of :func:`perturbation_detection`, one :class:`Detection` per metric.

    ``to_frame()`` columns: ``metric, statistic, tie_share, less_share,
    ci_low, ci_high, pvalue, n, n_greater, n_ties, n_less, n_missing,
    n_excluded, min_human, atol, ci_method, confidence_level, alternative,
    signature``.
    """

    _item = Detection


def _score_table(x, name: str) -> dict[str, np.ndarray]:
    if isinstance(x, Dataset):
        return {m: np.asarray(x.scores(m), float) for m in x.metrics}
    if isinstance(x, Mapping):
        return {str(k): np.asarray(v, float) for k, v in x.items()}
    try:
        return {"metric": np.asarray(x, float)}
    except (TypeError, ValueError):
        raise ParameterError(
            f"{name} must be an array of scores, a mapping of metric name to array, or a "
            f"Dataset; got {type(x).__name__}"
        ) from None


@accepts_frames(
    "original",
    "perturbed",
    human="human",
    accepts=(Mapping, np.ndarray, list, tuple),
    accepts_text="a mapping of metric name to score array, or one score array",
)
def perturbation_detection(
    original,
    perturbed,
    *,
    human=None,
    min_human: float | None = None,
    atol: float = 0.0,
    ci: str = "wilson",
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
    lower_is_better=(),
) -> Detections:
    r"""Share of (original, perturbed) pairs whose original the metric scores higher.

    Seed paper 001, section 2.3.2 (perturbation detection test, after Sai et
    al. 2021) and section 3.4: for each text, s is the metric score of the
    original and :math:`\hat s` that of its perturbed version; the accuracy
    is :math:`\#\{s > \hat s\} / n`.  Ties (:math:`|s - \hat s| \le`
    ``atol``) are reported separately (``tie_share``): a metric blind to the
    perturbation (ROUGE under sentence reordering) ties and so scores far
    below the 50% of a coin flip, as the paper observes.

    Parameters
    ----------
    original : array_like, mapping or Dataset
        Scores of the original texts: one array (one metric, named
        ``"metric"``), a mapping of metric name to array, or a Dataset
        (its metric columns, ``(N, M)``).
    perturbed : array_like, mapping or Dataset
        Scores of the perturbed texts, in the same layout; the metrics
        compared are those of ``perturbed`` (each must be in ``original``,
        with the same shape).  NaN marks a missing score (a skipped
        perturbation): the pair is left out and counted in ``n_missing``.
    human : array_like or str, optional
        Human scores of the originals (same shape), or a human column of
        ``original`` when it is a Dataset; needed for ``min_human``.
    min_human : float, optional
        Keep only the pairs whose original has a human score of at least
        this (seed paper 001 uses 3 "to ensure the quality of the
        original"; needs ``human``).
    atol : float
        Absolute tolerance of a tie (default 0: exact equality).
    ci : {"wilson", "clopper-pearson"}
        Binomial interval of the accuracy (:func:`binomial_interval`).
    confidence_level : float
    alternative : {"two-sided", "greater", "less"}
        Of the sign test (``greater``: the metric prefers originals).
    lower_is_better : str or sequence of str
        Metrics where a lower score is better (TER, WER): for them the
        original is preferred when :math:`s < \hat s`, so the accuracy is
        :math:`\#\{s < \hat s\} / n` and ``n_greater`` counts pairs whose
        original is *better*.  Each name must be a metric of ``perturbed``.

    Returns
    -------
    Detections

    Warns
    -----
    UndefinedStatisticWarning
        When a metric has no usable pair (its accuracy is NaN, n = 0).

    Examples
    --------
    >>> res = perturbation_detection([3.0, 2.0, 5.0, 1.0], [1.0, 2.0, 4.0, 2.0])
    >>> r = res[0]
    >>> r.statistic, r.tie_share, r.n_greater, r.n_ties, r.n_less
    (0.5, 0.25, 2, 1, 1)
    """
    check_choice(ci, "ci", BINOMIAL_CIS)
    check_choice(alternative, "alternative", ALTERNATIVES)
    confidence_level = check_probability(confidence_level)
    atol = check_number(atol, "atol", lo=0)
    orig = _score_table(original, "original")
    pert = _score_table(perturbed, "perturbed")
    lower = as_list(lower_is_better, "lower_is_better") if lower_is_better else []
    bad = [m for m in lower if not isinstance(m, str) or m not in pert]
    if bad:
        raise ParameterError(
            f"lower_is_better names {', '.join(map(repr, bad))}, not metric(s) of perturbed; "
            f"its metrics: {', '.join(pert)}"
        )
    if min_human is not None:
        min_human = check_number(min_human, "min_human")
        if human is None:
            raise ParameterError("min_human needs the human scores of the originals: pass human=")
    h = None
    if human is not None:
        if isinstance(human, str):
            if not isinstance(original, Dataset) or human not in original.human:
                raise DataError(
                    f"human={human!r} names a column, which needs original to be a Dataset "
                    "with that human column; otherwise pass the human scores as an array"
                )
            h = np.asarray(original.scores(human), float)
        else:
            h = np.asarray(human, float)
    if isinstance(original, Dataset) and not isinstance(perturbed, (Dataset, Mapping)):
        raise ParameterError(
            "original is a Dataset: pass perturbed as a mapping of metric name to (N, M) array "
            "or as a Dataset"
        )
    unknown = [m for m in pert if m not in orig]
    if unknown:
        raise DataError(
            f"perturbed has metric(s) {', '.join(map(repr, unknown))} that original lacks; "
            f"original has: {', '.join(orig)}"
        )
    out = []
    for m, sp in pert.items():
        so = orig[m]
        if so.shape != sp.shape:
            raise DataError(
                f"metric {m!r}: original scores have shape {so.shape} but perturbed {sp.shape}"
            )
        if h is not None and h.shape != so.shape:
            raise DataError(f"human scores have shape {h.shape} but the scores of {m!r} {so.shape}")
        so, sp1 = so.ravel(), sp.ravel()
        valid = np.isfinite(so) & np.isfinite(sp1)
        n_missing = int((~valid).sum())
        keep = valid
        n_excluded = 0
        if min_human is not None:
            hv = h.ravel()
            ok = np.isfinite(hv) & (hv >= min_human)
            keep = valid & ok
            n_excluded = int((valid & ~ok).sum())
        d = so[keep] - sp1[keep]
        if m in lower:
            d = -d
        n = int(d.size)
        g = int((d > atol).sum())
        lt = int((d < -atol).sum())
        t = n - g - lt
        if n == 0:
            warnings.warn(
                f"perturbation detection of metric {m!r}: no usable pair ({n_missing} missing, "
                f"{n_excluded} excluded by min_human); the accuracy is NaN",
                UndefinedStatisticWarning,
                stacklevel=user_stacklevel(),
            )
            acc = ties = less = math.nan
        else:
            acc, ties, less = g / n, t / n, lt / n
        lo, hi = binomial_interval(g, n, confidence_level=confidence_level, method=ci)
        p = (
            float(_st.binomtest(g, g + lt, 0.5, alternative=alternative).pvalue)
            if g + lt
            else math.nan
        )
        sig = make_signature(
            test="detection",
            alt=alternative,
            ci=(ci, confidence_level),
            pvalue="sign",
            atol=fmt_number(atol),
            min_human=None if min_human is None else fmt_number(min_human),
            better="lower" if m in lower else None,
        )
        out.append(
            Detection(
                metric=m,
                statistic=acc,
                tie_share=ties,
                less_share=less,
                ci_low=lo,
                ci_high=hi,
                pvalue=p,
                n=n,
                n_greater=g,
                n_ties=t,
                n_less=lt,
                n_missing=n_missing,
                n_excluded=n_excluded,
                min_human=math.nan if min_human is None else min_human,
                atol=atol,
                ci_method=ci,
                confidence_level=confidence_level,
                alternative=alternative,
                signature=sig,
            )
        )
    return Detections(tuple(out))


# --------------------------------------------------------------------------
# 2. Kolmogorov-Smirnov score


@dataclass(frozen=True)
class KSScore(_Result):
    """Kolmogorov-Smirnov score of one metric for one human dimension.

    Attributes
    ----------
    metric, human : str
    statistic : float
        KS_M = sup_x |F_low(x) - F_high(x)| (seed paper 001, Eq. 4): the
        largest gap between the empirical CDFs of the metric scores of the
        low- and high-quality texts; 0 for identical distributions, 1 when
        the groups are perfectly separated.  NaN when a group is empty.
    pvalue : float
        Two-sample KS test (``scipy.stats.ks_2samp``, ``method``).
    direction : int
        +1 when the gap is the low group's CDF above the high group's (the
        metric scores low-quality texts lower: the useful direction), -1
        when reversed (0 when undefined).  The paper's KS score ignores it.
    location : float
        Metric score at which the gap is largest.
    low, high : float
        Thresholds: low quality is human < ``low``, high quality is human
        >= ``high`` (Table 3).
    n_low, n_high : int
        Texts in each group.
    n_middle : int
        Texts in neither group (``low <= human < high``).
    n_missing : int
        Texts with a missing metric or human score.
    """

    metric: str
    human: str
    statistic: float
    pvalue: float
    direction: int
    location: float
    low: float
    high: float
    n_low: int
    n_high: int
    n_middle: int
    n_missing: int
    method: str
    signature: str


@dataclass(frozen=True)
class KSScores(_Collection):
    """Results of :func:`ks_score`, one :class:`KSScore` per metric x human.

    ``to_frame()`` columns: ``metric, human, statistic, pvalue, direction,
    location, low, high, n_low, n_high, n_middle, n_missing, method,
    signature``.
    """

    _item = KSScore

    def matrix(self, value: str = "statistic") -> pd.DataFrame:
        """Metrics x human dimensions table of ``value`` (the heatmap of Figure 2)."""
        f = self.to_frame()
        return f.pivot(index="metric", columns="human", values=value).reindex(
            index=list(dict.fromkeys(f.metric)), columns=list(dict.fromkeys(f.human))
        )


@accepts_frames(human="human", accepts=(Mapping,), accepts_text=_MAPPING)
def ks_score(
    data,
    human=None,
    *,
    metrics=None,
    low: float | None = None,
    high: float | None = None,
    pvalue: str = "auto",
) -> KSScores:
    r"""Kolmogorov-Smirnov score: how well a metric separates low- from high-quality texts.

    Seed paper 001, section 2.3.2 and Eq. 4 (after Nimah et al. 2023):
    :math:`KS_M = \sup_x |F_A(x) - F_B(x)|` with :math:`F_A`, :math:`F_B` the
    empirical CDFs of the metric scores of texts (system x input cells) in
    the low-quality group A (human score < ``low``) and the high-quality
    group B (human score >= ``high``).  The human score of a text is the
    column's value (for SummEval, the mean of the three experts).

    Parameters
    ----------
    data : Dataset or mapping
        Scores; a mapping holds ``(N, M)`` or 1-D arrays.
    human : str or list of str, optional
        Human dimension(s) defining the groups (default: every human column
        of a Dataset).
    metrics : str or list of str, optional
        Default: every metric.
    low, high : float, optional
        Thresholds.  Default: seed paper 001's Table 3 entry for the
        dataset's name (:data:`KS_THRESHOLDS`; SummEval: < 3 and >= 4).
    pvalue : {"auto", "exact", "asymp"}
        How the p-value is computed: the ``method`` of ``scipy.stats.ks_2samp``
        (kept in the result's ``method`` field and the signature's ``pvalue``).

    Returns
    -------
    KSScores

    Warns
    -----
    UndefinedStatisticWarning
        When a group is empty (statistic and p-value NaN; see ``n_low``,
        ``n_high``).

    Examples
    --------
    >>> import numpy as np
    >>> data = {"human": np.array([1.0, 2.0, 4.0, 5.0]), "m": np.array([0.1, 0.2, 0.3, 0.4])}
    >>> r = ks_score(data, "human", low=3, high=4)[0]
    >>> r.statistic, r.direction, r.n_low, r.n_high
    (1.0, 1, 2, 2)
    """
    ds, humans = dataset_from(data, human, what="ks_score")
    metrics = metric_columns(ds, metrics, where="the data")
    check_choice(pvalue, "pvalue", KS_PVALUES)
    if low is None and high is None:
        key = (ds.name or "").lower()
        if key not in KS_THRESHOLDS:
            known = ", ".join(f"{k} (<{v[0]:g}, >={v[1]:g})" for k, v in KS_THRESHOLDS.items())
            raise ParameterError(
                f"give the group thresholds low= and high= (low quality: human < low, high "
                f"quality: human >= high); seed paper 001 Table 3 has defaults only for the "
                f"datasets {known}, not for {ds.name!r}"
            )
        low, high = KS_THRESHOLDS[key]
    elif low is None or high is None:
        raise ParameterError("give both low= and high= (or neither, for the Table 3 defaults)")
    low = check_number(low, "low")
    high = check_number(high, "high")
    if high < low:
        raise ParameterError(
            f"high={high:g} is below low={low:g}: the groups human < low and human >= high "
            "would overlap"
        )
    out = []
    for hname in humans:
        hv = np.asarray(ds.scores(hname), float).ravel()
        for m in metrics:
            x = np.asarray(ds.scores(m), float).ravel()
            ok = np.isfinite(x) & np.isfinite(hv)
            lo_mask = ok & (hv < low)
            hi_mask = ok & (hv >= high)
            a, b = x[lo_mask], x[hi_mask]
            n_missing = int((~ok).sum())
            n_mid = int(ok.sum() - lo_mask.sum() - hi_mask.sum())
            if a.size == 0 or b.size == 0:
                warnings.warn(
                    f"KS score of metric {m!r} for {hname!r}: the "
                    f"{'low' if a.size == 0 else 'high'}-quality group (human "
                    f"{'< ' + format(low, 'g') if a.size == 0 else '>= ' + format(high, 'g')}) "
                    "is empty; the statistic is NaN",
                    UndefinedStatisticWarning,
                    stacklevel=user_stacklevel(),
                )
                stat = p = loc = math.nan
                sign = 0
            else:
                stat, loc, sign = ks_statistic(a, b)
                p = float(_st.ks_2samp(a, b, method=pvalue).pvalue)
            sig = make_signature(
                human=hname,
                level="global",
                test="ks",
                low=fmt_number(low),
                high=fmt_number(high),
                pvalue=pvalue,
            )
            out.append(
                KSScore(
                    metric=m,
                    human=hname,
                    statistic=stat,
                    pvalue=p,
                    direction=sign,
                    location=loc,
                    low=low,
                    high=high,
                    n_low=int(a.size),
                    n_high=int(b.size),
                    n_middle=n_mid,
                    n_missing=n_missing,
                    method=pvalue,
                    signature=sig,
                )
            )
    return KSScores(tuple(out))


# --------------------------------------------------------------------------
# 3. meta-correlation


@dataclass(frozen=True)
class MetaCorrelation(_Result):
    """Meta-correlation of one metric for one human dimension.

    Attributes
    ----------
    metric, human : str
    statistic : float
        M = rho([Q_1..Q_k], [P_1..P_k]) (seed paper 001, Eq. 7) with
        ``meta_method``, over the systems whose P_i is defined.  Negative:
        the metric agrees less with humans on better systems.
    pvalue : float
        Analytic p-value of M (scipy, ``alternative``); NaN with < 3 systems.
    sample_correlation : float
        The metric's sample-level (``global``) correlation with ``method``
        (Eq. 3), the red line of Figure 4.
    n_systems : int
        Systems used (Q_i and P_i defined).
    n_systems_dropped : int
        Systems whose P_i is undefined: constant scores (``n_constant``) or
        fewer than two valid pairs (``n_too_few``).
    quality, system_correlation, n_pairs : ndarray
        Per system (in ``systems`` order): Q_i (Eq. 5, the mean human score
        over the system's texts with a human score), P_i (Eq. 6, ``method``
        over the system's texts with both scores), and the pairs behind P_i.
    """

    metric: str
    human: str
    method: str
    meta_method: str
    statistic: float
    pvalue: float
    sample_correlation: float
    n_systems: int
    n_systems_dropped: int
    n_constant: int
    n_too_few: int
    alternative: str
    signature: str
    systems: tuple = field(**_ARR)
    quality: np.ndarray = field(**_ARR)
    system_correlation: np.ndarray = field(**_ARR)
    n_pairs: np.ndarray = field(**_ARR)


@dataclass(frozen=True)
class MetaCorrelations(_Collection):
    """Results of :func:`meta_correlation`, one :class:`MetaCorrelation` per metric x human.

    ``to_frame()`` columns: ``metric, human, method, meta_method, statistic,
    pvalue, sample_correlation, n_systems, n_systems_dropped, n_constant,
    n_too_few, alternative, signature``.  ``systems_frame()``: one row per
    metric x human x system with ``quality`` (Q_i), ``correlation`` (P_i)
    and ``n`` (pairs).
    """

    _item = MetaCorrelation

    def systems_frame(self) -> pd.DataFrame:
        rows = [
            {
                "metric": r.metric,
                "human": r.human,
                "system": s,
                "quality": float(r.quality[i]),
                "correlation": float(r.system_correlation[i]),
                "n": int(r.n_pairs[i]),
            }
            for r in self.results
            for i, s in enumerate(r.systems)
        ]
        return pd.DataFrame(
            rows, columns=["metric", "human", "system", "quality", "correlation", "n"]
        )


@accepts_frames(human="human", accepts=(Mapping,), accepts_text=_MAPPING)
def meta_correlation(
    data,
    human=None,
    *,
    metrics=None,
    method: str = "spearman",
    meta_method: str | None = None,
    alternative: str = "two-sided",
) -> MetaCorrelations:
    r"""Meta-correlation: does a metric's agreement with humans depend on system quality?

    Seed paper 001, section 2.3.3 (after Shen et al. 2023), Eq. 5-7: for
    each system i, its quality :math:`Q_i = \frac1{N_i}\sum_j h_{ij}` (Eq. 5,
    the mean human score of its texts) and the metric's sample-level
    correlation within the system :math:`P_i = \rho(s_{i\cdot}, h_{i\cdot})`
    (Eq. 6; one group of our ``item`` level); then
    :math:`M = \rho([Q_1..Q_k], [P_1..P_k])` (Eq. 7).

    Parameters
    ----------
    data : Dataset or mapping of (N, M) arrays
    human : str or list of str, optional
        Default: every human column of a Dataset.
    metrics : str or list of str, optional
    method : {"pearson", "spearman", "kendall_b", "kendall_c"}
        rho of Eq. 6 (default Spearman, as the paper's Figure 4).
    meta_method : str, optional
        The coefficient correlating the systems' quality with their
        correlations (rho of Eq. 7).  Default: ``method``, as in the
        paper's Table 11.
    alternative : {"two-sided", "greater", "less"}
        Alternative hypothesis of the analytic p-value of M (default
        two-sided).

    Returns
    -------
    MetaCorrelations

    Warns
    -----
    ConstantInputWarning, TooFewPairsWarning
        When a system's P_i is undefined (counted; the system is dropped).

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[1., 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]])
    >>> m = h + np.array([[0, 0, 0, 0], [0, 0, 1.5, -1.5], [3, -3, 3, -3]])
    >>> r = meta_correlation({"human": h, "m": m}, "human")[0]
    >>> r.quality.tolist(), np.round(r.system_correlation, 6).tolist(), round(r.statistic, 12)
    ([2.5, 3.5, 4.5], [1.0, 0.8, 0.0], -1.0)
    """
    ds, humans = dataset_from(data, human, what="meta_correlation")
    metrics = metric_columns(ds, metrics, where="the data")
    method = _method(method)
    meta_method = method if meta_method is None else _method(meta_method, "meta_method")
    check_choice(alternative, "alternative", ALTERNATIVES)
    if len(ds.systems) < 3:
        raise DataError(
            f"meta-correlation correlates across systems; the data have {len(ds.systems)} "
            "system(s), at least 3 are needed"
        )
    out = []
    for hname in humans:
        y = np.asarray(ds.scores(hname), float)
        q = exact_nanmean(y, axis=1)  # correctly rounded: tied system means stay tied
        for m in metrics:
            x = np.asarray(ds.scores(m), float)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                lv = level_values(x, y, "item", method, fast=False)
                sample = float(level_values(x, y, "global", method, fast=False).value[0])
            p_i = np.asarray(lv.group[0], float)
            nv = np.asarray(lv.n_valid[0], int)
            undefined = ~np.isfinite(p_i)
            too_few = undefined & (nv < 2)
            constant = undefined & ~too_few
            stat, pval, n_used = correlation_test(p_i, q, "global", meta_method, alternative)
            _warn_groups(m, hname, int(constant.sum()), int(too_few.sum()), len(ds.systems))
            if not np.isfinite(stat):
                warnings.warn(
                    f"meta-correlation of metric {m!r} vs {hname!r} is undefined: {n_used} "
                    "system(s) with a defined P_i, or P_i or Q_i constant across systems",
                    ConstantInputWarning,
                    stacklevel=user_stacklevel(),
                )
            sig = make_signature(
                human=hname,
                level="item",
                method=method,
                nan="pairwise",
                alt=alternative,
                meta=meta_method,
                pvalue="analytic",
            )
            out.append(
                MetaCorrelation(
                    metric=m,
                    human=hname,
                    method=method,
                    meta_method=meta_method,
                    statistic=stat,
                    pvalue=pval,
                    sample_correlation=sample,
                    n_systems=n_used,
                    n_systems_dropped=int(undefined.sum()),
                    n_constant=int(constant.sum()),
                    n_too_few=int(too_few.sum()),
                    alternative=alternative,
                    signature=sig,
                    systems=tuple(ds.systems),
                    quality=q,
                    system_correlation=p_i,
                    n_pairs=nv,
                )
            )
    return MetaCorrelations(tuple(out))


def _warn_groups(metric, human, n_constant, n_too_few, n_groups):
    if n_constant:
        warnings.warn(
            f"meta-correlation of metric {metric!r} vs {human!r}: {n_constant} of {n_groups} "
            "systems have constant scores; their P_i is NaN and they are left out "
            "(counted in n_constant)",
            ConstantInputWarning,
            stacklevel=user_stacklevel(),
        )
    if n_too_few:
        warnings.warn(
            f"meta-correlation of metric {metric!r} vs {human!r}: {n_too_few} of {n_groups} "
            "systems have fewer than two valid pairs; their P_i is NaN and they are left out "
            "(counted in n_too_few)",
            TooFewPairsWarning,
            stacklevel=user_stacklevel(),
        )


# --------------------------------------------------------------------------
# 4. pre-assessment sample size


@dataclass(frozen=True)
class SampleSize(_Result):
    """Spread of the sample-level correlation on random subsets (one metric x human).

    Attributes
    ----------
    metric, human, method : str
    statistic : float
        The correlation on all valid texts (the "all" column of seed paper
        001's Tables 4-6).
    sizes : tuple of int
        Subset sizes n.
    mean, std : tuple of float
        Per size: mean and standard deviation (``ddof``) of the correlation
        over the ``n_resamples`` subsets whose correlation is defined.
    n_nan : tuple of int
        Per size: subsets whose correlation is undefined (constant scores).
    n_valid : int
        Texts with both scores (the population subsets are drawn from).
    threshold : float
        The standard-deviation target (NaN if none was given).
    recommended : int or None
        The smallest size whose std is below ``threshold``; None if none is
        (or no threshold was given).
    distribution : ndarray, shape (len(sizes), n_resamples)
        The subset correlations.
    """

    metric: str
    human: str
    method: str
    statistic: float
    sizes: tuple
    mean: tuple
    std: tuple
    n_nan: tuple
    n_valid: int
    n_resamples: int
    ddof: int
    threshold: float
    recommended: int | None
    signature: str
    distribution: np.ndarray = field(**_ARR)

    def _rows(self):
        base = {
            "metric": self.metric,
            "human": self.human,
            "method": self.method,
            "statistic": self.statistic,
        }
        tail = {
            "n_valid": self.n_valid,
            "n_resamples": self.n_resamples,
            "ddof": self.ddof,
            "threshold": self.threshold,
            "recommended": self.recommended,
            "signature": self.signature,
        }
        return [
            {**base, "size": n, "mean": mu, "std": sd, "n_nan": k, **tail}
            for n, mu, sd, k in zip(self.sizes, self.mean, self.std, self.n_nan)
        ]

    @classmethod
    def frame_columns(cls):
        return [
            "metric", "human", "method", "statistic", "size", "mean", "std", "n_nan",
            "n_valid", "n_resamples", "ddof", "threshold", "recommended", "signature",
        ]  # fmt: skip


@dataclass(frozen=True)
class SampleSizes(_Collection):
    """Results of :func:`sample_size`, one :class:`SampleSize` per metric x human.

    ``to_frame()``: one row per metric x human x size with the columns
    ``metric, human, method, statistic, size, mean, std, n_nan, n_valid,
    n_resamples, ddof, threshold, recommended, signature``.
    """

    _item = SampleSize


def _check_sizes(sizes):
    try:
        sizes = list(sizes)
    except TypeError:
        raise ParameterError(f"sizes={sizes!r} must be a list of ints") from None
    # ints only: int() would silently turn 3.7 into 3 and True into 1
    bad = [s for s in sizes if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral)]
    if bad:
        raise ParameterError(f"sizes={sizes!r} must be a list of ints; not {bad[0]!r}")
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise ParameterError("sizes is empty")
    bad = [s for s in sizes if s < 3]
    if bad:
        raise ParameterError(f"sizes must be >= 3 (a correlation of fewer texts); got {bad}")
    return tuple(sorted(set(sizes)))


@accepts_frames(human="human", accepts=(Mapping,), accepts_text=_MAPPING)
def sample_size(
    data,
    human=None,
    *,
    metrics=None,
    sizes: Sequence[int] = (20, 50, 100),
    n_resamples: int = 100,
    method: str = "spearman",
    threshold: float | None = None,
    ddof: int = 1,
    rng=None,
) -> SampleSizes:
    r"""How many texts a pre-assessment needs: the correlation on random subsets.

    Seed paper 001, Appendix C (and section 4): draw n texts (system x input
    cells with both scores) uniformly without replacement, compute the
    sample-level correlation (our ``global`` level; Spearman by default),
    repeat ``n_resamples`` times (the paper: 100) and report the mean and
    the standard deviation, for each n in ``sizes`` (the paper: 20, 50,
    100).  With ``threshold``, ``recommended`` is the smallest n whose
    standard deviation is below it (the paper finds n = 50 enough).

    Parameters
    ----------
    data : Dataset or mapping
    human : str or list of str, optional
    metrics : str or list of str, optional
    sizes : sequence of int
        Subset sizes (>= 3, at most the number of valid texts).
    n_resamples : int
        Random subsets drawn per size (default 100, as the paper).
    method : {"pearson", "spearman", "kendall_b", "kendall_c"}
    threshold : float, optional
        Target standard deviation.
    ddof : int
        Delta degrees of freedom of the standard deviation (default 1, the
        sample standard deviation).
    rng : seed, optional
        Each metric x human x size gets its own stream (named after them),
        so results do not depend on which other metrics are run.

    Returns
    -------
    SampleSizes

    Warns
    -----
    UndefinedStatisticWarning
        When some subsets have an undefined correlation (counted in
        ``n_nan``; mean and std use the others).

    Examples
    --------
    >>> import numpy as np
    >>> h = np.arange(40.0)
    >>> r = sample_size({"human": h, "m": h ** 2}, "human", sizes=[5, 20], rng=0)[0]
    >>> np.round(r.mean, 12).tolist(), np.round(r.std, 12).tolist()
    ([1.0, 1.0], [0.0, 0.0])
    """
    ds, humans = dataset_from(data, human, what="sample_size")
    metrics = metric_columns(ds, metrics, where="the data")
    method = _method(method)
    sizes = _check_sizes(sizes)
    n_resamples = _rs.check_n_resamples(n_resamples)
    check_int(ddof, "ddof", 0)
    thr = math.nan if threshold is None else check_number(threshold, "threshold", lo=0, open_lo=True)
    coef = get_coefficient(method)
    ss, tag = _rs.seed_sequence(rng)
    out = []
    for hname in humans:
        yall = np.asarray(ds.scores(hname), float).ravel()
        for m in metrics:
            xall = np.asarray(ds.scores(m), float).ravel()
            ok = np.isfinite(xall) & np.isfinite(yall)
            x, y = xall[ok], yall[ok]
            V = x.size
            too_big = [n for n in sizes if n > V]
            if too_big:
                raise ParameterError(
                    f"sizes {too_big} exceed the {V} texts with both {m!r} and {hname!r} scores"
                )
            full, _, _ = correlation_test(x, y, "global", method)
            means, stds, nans, dists = [], [], [], []
            for n in sizes:
                gen = _rs.named_generator(ss, "sample_size", hname, m, str(n))
                idx = _rs.subsets(gen, n_resamples, V, n)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    r = coef.batch(
                        x[idx][:, None, :], y[idx][:, None, :], fast=use_kernels(idx.size)
                    )[:, 0]
                fin = r[np.isfinite(r)]
                nans.append(int(r.size - fin.size))
                means.append(float(fin.mean()) if fin.size else math.nan)
                stds.append(float(fin.std(ddof=ddof)) if fin.size > ddof else math.nan)
                dists.append(r)
            if sum(nans):
                warnings.warn(
                    f"sample_size of metric {m!r} vs {hname!r}: {sum(nans)} subsets have an "
                    "undefined correlation (constant scores); mean and std use the others "
                    "(counted in n_nan)",
                    UndefinedStatisticWarning,
                    stacklevel=user_stacklevel(),
                )
            rec = next((n for n, s in zip(sizes, stds) if s < thr), None)
            sig = make_signature(
                human=hname,
                level="global",
                method=method,
                nan="pairwise",
                n=":".join(map(str, sizes)),
                resamples=n_resamples,
                ddof=ddof,
                seed=tag,
            )
            out.append(
                SampleSize(
                    metric=m,
                    human=hname,
                    method=method,
                    statistic=full,
                    sizes=sizes,
                    mean=tuple(means),
                    std=tuple(stds),
                    n_nan=tuple(nans),
                    n_valid=int(V),
                    n_resamples=n_resamples,
                    ddof=int(ddof),
                    threshold=thr,
                    recommended=rec,
                    signature=sig,
                    distribution=np.vstack(dists),
                )
            )
    return SampleSizes(tuple(out))


# --------------------------------------------------------------------------
# 5. reference sensitivity


@dataclass(frozen=True)
class ReferenceSensitivity(_Result):
    """Distribution of a metric's correlation over random reference choices.

    Attributes
    ----------
    metric, human, level, method : str
    statistic : float
        Mean of ``distribution``.
    std, low, high, min, max : float
        Standard deviation (ddof 1), the ``coverage`` central percentile
        range, and the extremes of ``distribution``.
    n_references : int
        R, the references per input (the largest number present).
    n_resamples : int
    n_nan : int
        Draws whose correlation is undefined.
    distribution : ndarray, shape (n_resamples,)
        The correlation for each draw of one reference per input.
    reference_statistics : ndarray, shape (R,)
        The correlation when reference k is used for every input (NaN if
        some input lacks it).
    """

    metric: str
    human: str
    level: str
    method: str
    statistic: float
    std: float
    low: float
    high: float
    min: float
    max: float
    coverage: float
    n_references: int
    n_resamples: int
    n_nan: int
    signature: str
    distribution: np.ndarray = field(**_ARR)
    reference_statistics: np.ndarray = field(**_ARR)


@dataclass(frozen=True)
class ReferenceSensitivities(_Collection):
    """Results of :func:`reference_sensitivity`, one per metric x human.

    ``to_frame()`` columns: ``metric, human, level, method, statistic, std,
    low, high, min, max, coverage, n_references, n_resamples, n_nan,
    signature``.
    """

    _item = ReferenceSensitivity


def _references_from_texts(ds, fn, name, hypothesis, references):
    texts = ds.texts
    if texts is None:
        raise DataError("score= needs the dataset's texts (hypotheses and references)")
    for c in (hypothesis, references):
        if c not in texts.columns:
            raise DataError(
                f"the dataset's texts have no column {c!r}; columns: {', '.join(texts.columns)}"
            )
    if "system" not in texts.columns or "input" not in texts.columns:
        raise DataError("score= needs texts with 'system' and 'input' columns")
    sys_pos = {s: i for i, s in enumerate(ds.systems)}
    inp_pos = {s: j for j, s in enumerate(ds.inputs)}
    refs = [
        tuple(r) if isinstance(r, (list, tuple, np.ndarray)) else (r,) for r in texts[references]
    ]
    R = max((len(r) for r in refs), default=0)
    if R == 0:
        raise DataError(f"the texts column {references!r} holds no references")
    out = np.full((len(ds.systems), len(ds.inputs), R), np.nan)
    hyps = texts[hypothesis].tolist()
    rows = [sys_pos[s] for s in texts["system"]]
    cols = [inp_pos[s] for s in texts["input"]]
    for k in range(R):
        sel = [
            t
            for t in range(len(hyps))
            if isinstance(hyps[t], str) and len(refs[t]) > k and isinstance(refs[t][k], str)
        ]
        if not sel:
            continue
        vals = np.asarray(fn([hyps[t] for t in sel], [refs[t][k] for t in sel]), float)
        if vals.shape != (len(sel),):
            raise DataError(
                f"score callable for {name!r} returned shape {vals.shape}; expected "
                f"({len(sel)},), one score per hypothesis"
            )
        out[[rows[t] for t in sel], [cols[t] for t in sel], k] = vals
    return out


@accepts_frames(human="human")
def reference_sensitivity(
    data,
    human=None,
    *,
    scores=None,
    score: Callable | Mapping[str, Callable] | None = None,
    level: str = "global",
    method: str = "spearman",
    n_resamples: int = 1000,
    coverage: float = 0.95,
    hypothesis: str = "hypothesis",
    references: str = "references",
    rng=None,
) -> ReferenceSensitivities:
    r"""How much a reference-based metric's correlation depends on the reference.

    Seed paper 001, Appendix B and Figure 5: for each input one reference is
    drawn uniformly at random (among the references the input has; the same
    reference for every system's output of that input), the metric's
    correlation with the human scores is computed at ``level`` (the paper:
    sample level, our ``global``), and this is repeated ``n_resamples``
    times (the paper: 5000).

    Parameters
    ----------
    data : Dataset
        Human scores (and texts, with ``score``).
    human : str or list of str, optional
    scores : array_like (N, M, R) or mapping of name to such arrays
        Precomputed metric scores of every hypothesis against each of its R
        references (NaN where a reference is missing).  Keeps this analysis
        independent of any text metric.
    score : callable or mapping of name to callable
        ``score(hyps, refs) -> array``: scores a list of hypotheses against
        a list of references (one each).  It is called once per reference
        index k (R calls), on the dataset's texts (``hypothesis`` and
        ``references`` columns), to build the (N, M, R) array.
    level : {"system", "input", "item", "global"}
        The level of the correlations (default ``"global"``, the paper's
        sample level).
    method : {"pearson", "spearman", "kendall_b", "kendall_c"}
    n_resamples : int
        Draws of one reference per input (default 1000).
    coverage : float
        Central share of the distribution reported as ``low``-``high``.
    rng : seed, optional
        One stream per metric x human, named after them.

    Returns
    -------
    ReferenceSensitivities

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    >>> s = np.stack([h, -h], axis=-1)           # reference 0 agrees, reference 1 reverses
    >>> ds = Dataset.from_arrays({"human": h}, human="human")
    >>> r = reference_sensitivity(ds, "human", scores={"m": s}, n_resamples=200, rng=0)[0]
    >>> r.reference_statistics.tolist(), r.min >= -1.0, r.max <= 1.0
    ([1.0, -1.0], True, True)
    """
    if not isinstance(data, Dataset):
        raise ParameterError("reference_sensitivity needs a Dataset (its human scores)")
    ds, humans = dataset_from(data, human, what="reference_sensitivity")
    if (scores is None) == (score is None):
        raise ParameterError(
            "give exactly one of scores= (an (N, M, R) array of per-reference scores) and "
            "score= (a callable score(hyps, refs) -> array)"
        )
    level = check_level(level)
    method = _method(method)
    n_resamples = _rs.check_n_resamples(n_resamples)
    coverage = check_number(coverage, "coverage", lo=0, hi=1, open_lo=True, open_hi=True)
    N, M = ds.shape
    if scores is not None:
        table = dict(scores) if isinstance(scores, Mapping) else {"metric": scores}
        arrays = {}
        for k, v in table.items():
            a = np.asarray(v, float)
            if a.ndim != 3 or a.shape[:2] != (N, M):
                raise DataError(
                    f"scores[{k!r}] has shape {a.shape}; expected (N, M, R) = ({N}, {M}, R) "
                    "systems x inputs x references"
                )
            arrays[str(k)] = a
    else:
        fns = dict(score) if isinstance(score, Mapping) else {"metric": score}
        for k, f in fns.items():
            if not callable(f):
                raise ParameterError(f"score[{k!r}] is not callable")
        arrays = {
            str(k): _references_from_texts(ds, f, k, hypothesis, references) for k, f in fns.items()
        }
    ss, tag = _rs.seed_sequence(rng)
    out = []
    for hname in humans:
        y = np.asarray(ds.scores(hname), float)
        for m, S in arrays.items():
            R = S.shape[2]
            avail = np.isfinite(S).any(axis=0)  # (M, R): input j has reference k
            count = avail.sum(axis=1)
            order = np.argsort(~avail, axis=1, kind="stable")  # available indices first
            gen = _rs.named_generator(ss, "reference_sensitivity", hname, m)
            pick = _rs.uniform_choices(gen, n_resamples, count)
            ref = order[np.arange(M), pick]  # (B, M) reference index per input
            dist = np.empty(n_resamples)
            block = max(1, 2_000_000 // max(N * M, 1))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for s in range(0, n_resamples, block):
                    r = ref[s : s + block]
                    xb = S[np.arange(N)[None, :, None], np.arange(M)[None, None, :], r[:, None, :]]
                    xb = np.where(count[None, None, :] > 0, xb, np.nan)
                    dist[s : s + block] = level_values(
                        xb, y, level, method, detail=False, fast=use_kernels(n_resamples * N * M)
                    ).value
                per_ref = level_values(
                    np.moveaxis(S, 2, 0), y, level, method, detail=False, fast=use_kernels(S.size)
                ).value
            fin = dist[np.isfinite(dist)]
            n_nan = int(dist.size - fin.size)
            if n_nan:
                warnings.warn(
                    f"reference_sensitivity of {m!r} vs {hname!r}: {n_nan} of {dist.size} draws "
                    "give an undefined correlation (counted in n_nan)",
                    UndefinedStatisticWarning,
                    stacklevel=user_stacklevel(),
                )
            a = (1.0 - coverage) / 2.0
            if fin.size:
                lo, hi = (float(v) for v in np.percentile(fin, [100 * a, 100 * (1 - a)]))
                stats_ = (float(fin.mean()), float(fin.std(ddof=1)) if fin.size > 1 else math.nan)
                mn, mx = float(fin.min()), float(fin.max())
            else:
                lo = hi = mn = mx = math.nan
                stats_ = (math.nan, math.nan)
            sig = make_signature(
                human=hname,
                level=level,
                method=method,
                nan="pairwise",
                refs=f"random-1-of-{R}",
                resamples=n_resamples,
                seed=tag,
            )
            out.append(
                ReferenceSensitivity(
                    metric=m,
                    human=hname,
                    level=level,
                    method=method,
                    statistic=stats_[0],
                    std=stats_[1],
                    low=lo,
                    high=hi,
                    min=mn,
                    max=mx,
                    coverage=coverage,
                    n_references=int(R),
                    n_resamples=n_resamples,
                    n_nan=n_nan,
                    signature=sig,
                    distribution=dist,
                    reference_statistics=np.asarray(per_ref, float),
                )
            )
    return ReferenceSensitivities(tuple(out))


# --------------------------------------------------------------------------
# 6. correlation design (seed paper 003)

_DESIGN_LEVELS = ("system", "global")


@dataclass(frozen=True)
class CorrelationDesign(_Result):
    """Correlation matrices of all columns at the system and sentence levels.

    Attributes
    ----------
    columns : tuple of str
        The k columns, human first.
    kinds : tuple of str
        ``"human"`` or ``"metric"`` per column.
    levels : tuple of str
        ``system`` and/or ``global`` (seed paper 003's sentence level).
    method, correction, alternative : str
    alpha : dict
        Significance level per level.
    statistic, pvalue, pvalue_adjusted, n : dict of level -> (k, k) ndarray
        Symmetric matrices (diagonal: statistic 1, p-values NaN, n the
        column's own count).  ``n``: systems (system level) or texts
        (global) with both scores.
    n_undefined : dict of level -> int
        Pairs whose correlation is undefined (constant column).
    level_signatures : dict of level -> str
        The signature of each level's numbers (used in ``to_frame()``).
    signature : str
        One line for the whole design (levels joined with ``+``).

    ``to_frame()``: one row per level x unordered pair (i < j) with the
    columns ``level, column_1, column_2, kind_1, kind_2, statistic, pvalue,
    pvalue_adjusted, significant, alpha, n, signature``.  ``matrix(level,
    value)`` gives one matrix as a labelled DataFrame.
    """

    columns: tuple
    kinds: tuple
    levels: tuple
    method: str
    correction: str
    alternative: str
    alpha: dict
    n_undefined: dict
    level_signatures: dict
    signature: str
    statistic: dict = field(**_ARR)
    pvalue: dict = field(**_ARR)
    pvalue_adjusted: dict = field(**_ARR)
    n: dict = field(**_ARR)

    def to_dict(self, *, arrays: bool = False) -> dict:
        d = super().to_dict()
        if arrays:
            for f in ("statistic", "pvalue", "pvalue_adjusted", "n"):
                d[f] = {lv: np.asarray(v).tolist() for lv, v in getattr(self, f).items()}
        return d

    def matrix(self, level: str, value: str = "statistic") -> pd.DataFrame:
        """The k x k matrix of ``value`` (statistic, pvalue, pvalue_adjusted, n, significant)."""
        level = check_level(level)
        if level not in self.levels:
            raise ParameterError(
                f"level={level!r} was not computed; levels: {', '.join(self.levels)}"
            )
        if value == "significant":
            a = self.pvalue_adjusted[level] <= self.alpha[level]
        else:
            check_choice(value, "value", ("statistic", "pvalue", "pvalue_adjusted", "n",
                                          "significant"))
            a = getattr(self, value)[level]
        return pd.DataFrame(a, index=list(self.columns), columns=list(self.columns))

    @classmethod
    def frame_columns(cls):
        return [
            "level", "column_1", "column_2", "kind_1", "kind_2", "statistic", "pvalue",
            "pvalue_adjusted", "significant", "alpha", "n", "signature",
        ]  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        rows = []
        k = len(self.columns)
        for lv in self.levels:
            sig = self.level_signatures[lv]
            for i in range(k):
                for j in range(i + 1, k):
                    pa = float(self.pvalue_adjusted[lv][i, j])
                    rows.append(
                        {
                            "level": lv,
                            "column_1": self.columns[i],
                            "column_2": self.columns[j],
                            "kind_1": self.kinds[i],
                            "kind_2": self.kinds[j],
                            "statistic": float(self.statistic[lv][i, j]),
                            "pvalue": float(self.pvalue[lv][i, j]),
                            "pvalue_adjusted": pa,
                            "significant": bool(pa <= self.alpha[lv]),
                            "alpha": self.alpha[lv],
                            "n": int(self.n[lv][i, j]),
                            "signature": sig,
                        }
                    )
        return pd.DataFrame(rows, columns=self.frame_columns())


@accepts_frames(human="human", accepts=(Mapping,), accepts_text=_MAPPING)
def correlation_design(
    data,
    *,
    columns=None,
    human=None,
    levels: str | Sequence[str] = ("system", "global"),
    method: str = "spearman",
    alpha: float | Mapping[str, float] = 0.05,
    correction: str = "bonferroni",
    alternative: str = "two-sided",
    system_scores: str | None = None,
) -> CorrelationDesign:
    r"""System- vs sentence-level correlation matrices of human and automatic scores.

    Seed paper 003 (Shimorina 2018), Figure 1: every pair of columns (human
    dimensions and metrics) is correlated at the ``system`` level (the N
    per-system mean scores; means over the cells both columns score) and at
    the sentence level, where every generated text is a data point (our
    ``global`` level), with an analytic p-value (scipy: ``spearmanr``
    t-approximation, exact over all n! pairings for n <= 9 pairs;
    ``pearsonr`` t-test; ``kendalltau``).  Each level's
    k (k - 1) / 2 tests form one family, corrected with ``correction``
    (Bonferroni by default: :math:`\tilde p = \min(1, m p)`, m the number of
    defined tests at that level); a pair is significant when
    :math:`\tilde p \le \alpha`.  The paper reports alpha = .05 at the system
    level and .001 at the sentence level (``alpha={"system": .05,
    "global": .001}``).

    Parameters
    ----------
    data : Dataset or mapping of (N, M) arrays
    columns : list of str, optional
        Columns to include (default: the human columns, then every metric).
    human : str or list of str, optional
        With a mapping: the human columns (default for a Dataset: its own).
    levels : "system", "global" or both
    method : {"pearson", "spearman", "kendall_b", "kendall_c"}
    alpha : float or mapping level -> float
        Significance level of the corrected p-values, or one per level
        (default 0.05; the paper: ``{"system": .05, "global": .001}``).
    correction : {"bonferroni", "holm", "bh", "none"}
        Multiple-testing adjustment within each level's family of tests
        (default Bonferroni, as the paper).
    alternative : {"two-sided", "greater", "less"}
        Alternative hypothesis of the analytic p-values (default two-sided).
    system_scores : {None, "given", "mean"}
        At the ``system`` level, a column with given system-level scores
        (:attr:`metaeval.Dataset.system_scores`, e.g. corpus BLEU) enters
        with them (``"given"``; None: given when present, with a note) or
        with the means of its cells (``"mean"``); a pair of a given and a
        mean column uses the mean over the latter's own cells.  Recorded in
        the system level's signature (``sys:given`` / ``sys:mean``).

    Returns
    -------
    CorrelationDesign

    Warns
    -----
    ConstantInputWarning
        When some pairs are undefined (a constant column; counted in
        ``n_undefined``).

    Examples
    --------
    >>> import numpy as np
    >>> rs = np.random.default_rng(0)
    >>> h = rs.normal(size=(5, 40))
    >>> data = {"human": h, "m": h + rs.normal(size=(5, 40))}
    >>> res = correlation_design(data, human="human")
    >>> res.to_frame()[["level", "column_1", "column_2", "n", "significant"]]
        level column_1 column_2    n  significant
    0  system    human        m    5        False
    1  global    human        m  200         True
    """
    ds, humans = dataset_from(data, human, what="correlation_design")
    method = _method(method)
    check_choice(correction, "correction", CORRECTIONS)
    check_choice(alternative, "alternative", ALTERNATIVES)
    levels = tuple(check_level(lv) for lv in as_list(levels, "levels"))
    bad = [lv for lv in levels if lv not in _DESIGN_LEVELS]
    if bad:
        raise ParameterError(
            f"levels {', '.join(bad)}: the correlation design compares single correlations "
            "with analytic p-values, defined at the system and global (sentence) levels only"
        )
    levels = tuple(dict.fromkeys(levels))
    if isinstance(alpha, Mapping):
        unknown = [str(k) for k in alpha if k not in _DESIGN_LEVELS]
        if unknown:
            raise ParameterError(f"alpha names {', '.join(map(repr, unknown))}, not a level of the design; "
                                 f"give a value for each of {', '.join(levels)}")
        missing = [lv for lv in levels if lv not in alpha]
        if missing:
            raise ParameterError(f"alpha has no value for level(s) {', '.join(missing)}")
        alphas = {
            lv: check_number(alpha[lv], f"alpha[{lv!r}]", lo=0, hi=1, open_lo=True) for lv in levels
        }
    else:
        a = check_number(alpha, "alpha", lo=0, hi=1, open_lo=True)
        alphas = {lv: a for lv in levels}
    if columns is None:
        cols = list(ds.human if human is None else humans) + list(ds.metrics)
    else:
        cols = as_list(columns, "columns")
        unknown = [c for c in cols if c not in ds.columns]
        if unknown:
            raise DataError(
                f"unknown column(s): {', '.join(map(str, unknown))}; available: "
                f"{', '.join(ds.columns)}"
            )
        cols = list(dict.fromkeys(cols))
    if len(cols) < 2:
        raise ParameterError("the correlation design needs at least 2 columns")
    if "system" in levels and len(ds.systems) < 3:
        raise DataError(
            f"level 'system' correlates the {len(ds.systems)} system means; at least 3 "
            "systems are needed"
        )
    kinds = tuple("human" if c in ds.human else "metric" for c in cols)
    k = len(cols)
    cell_arrays = [np.asarray(ds.scores(c), float) for c in cols]
    sys_mode = _sys.check_mode(system_scores)
    sys_given, sys_tag = _sys.resolve_system_scores(ds, cols, cols, sys_mode)
    if "system" in levels:
        _sys.note_given(ds, cols, sys_mode)
    if sys_tag is not None:
        sys_tag = "given" if any(g is not None for g in sys_given) else "mean"
    stat_m, p_m, padj_m, n_m, n_undef = {}, {}, {}, {}, {}
    for lv in levels:
        arrays = cell_arrays
        if lv == "system" and any(g is not None for g in sys_given):
            arrays = [a if g is None else np.asarray(g, float)[:, None]
                      for a, g in zip(cell_arrays, sys_given)]
        S = np.full((k, k), np.nan)
        P = np.full((k, k), np.nan)
        Nn = np.zeros((k, k), dtype=int)
        for i in range(k):
            for j in range(i + 1, k):
                # (metric, human) order of correlate(), whose numbers these are
                ai, aj = (match_system_shapes(arrays[i], arrays[j]) if lv == "system"
                          else (arrays[i], arrays[j]))
                stat, p, n = correlation_test(aj, ai, lv, method, alternative)
                S[i, j] = S[j, i] = stat
                P[i, j] = P[j, i] = p
                Nn[i, j] = Nn[j, i] = n
        np.fill_diagonal(S, 1.0)
        np.fill_diagonal(P, np.nan)
        finite = [np.isfinite(a) for a in arrays]
        np.fill_diagonal(Nn, [int((f.any(axis=1) if lv == "system" else f).sum()) for f in finite])
        iu = np.triu_indices(k, 1)
        pu = P[iu]
        adj = adjust_pvalues(pu, method=correction)
        A = np.full((k, k), np.nan)
        A[iu] = adj
        A.T[iu] = adj
        undefined = int((~np.isfinite(S[iu])).sum())
        if undefined:
            warnings.warn(
                f"correlation design at level {lv!r}: {undefined} of {len(pu)} pairs have an "
                "undefined correlation (a constant column or fewer than two shared values; "
                "counted in n_undefined)",
                ConstantInputWarning,
                stacklevel=user_stacklevel(),
            )
        stat_m[lv], p_m[lv], padj_m[lv], n_m[lv], n_undef[lv] = S, P, A, Nn, undefined

    def _sig(lv, a):
        return make_signature(
            level=lv,
            method=method,
            nan="pairwise",
            alt=alternative,
            pvalue=("analytic", correction),
            alpha=a,
            sys=sys_tag if "system" in lv else None,
        )

    return CorrelationDesign(
        columns=tuple(cols),
        kinds=kinds,
        levels=levels,
        method=method,
        correction=correction,
        alternative=alternative,
        alpha=alphas,
        n_undefined=n_undef,
        level_signatures={lv: _sig(lv, f"{alphas[lv]:g}") for lv in levels},
        signature=_sig("+".join(levels), ":".join(f"{alphas[lv]:g}" for lv in levels)),
        statistic=stat_m,
        pvalue=p_m,
        pvalue_adjusted=padj_m,
        n=n_m,
    )


# --------------------------------------------------------------------------
# plots: views in metaeval.report.figures; these names stay for the documented API


def plot_ks(ks, *, title=None):
    """Heatmap of KS scores, metrics x human dimensions (seed paper 001, Figure 2) (a view: drawn by :func:`metaeval.report.figures.plot_ks`)."""
    from .report.figures import plot_ks as _draw

    return _draw(ks, title=title)


def plot_detection(detections, *, title=None):
    """Bars of perturbation-detection accuracy per metric (seed paper 001, Figure 3) (a view: drawn by :func:`metaeval.report.figures.plot_detection`)."""
    from .report.figures import plot_detection as _draw

    return _draw(detections, title=title)


def plot_meta_correlation(mc, *, title=None):
    """Bars of meta-correlation per metric, one panel per human dimension (001, Figure 4) (a view: drawn by :func:`metaeval.report.figures.plot_meta_correlation`)."""
    from .report.figures import plot_meta_correlation as _draw

    return _draw(mc, title=title)


def plot_reference_sensitivity(rs, *, bins=30, title=None):
    """Histograms of the correlation over random reference draws (001, Figure 5) (a view: drawn by :func:`metaeval.report.figures.plot_reference_sensitivity`)."""
    from .report.figures import plot_reference_sensitivity as _draw

    return _draw(rs, bins=bins, title=title)


def plot_correlation_design(cd, *, title=None):
    """Correlation matrices, one heatmap per level, crosses where not significant (003, Fig. 1) (a view: drawn by :func:`metaeval.report.figures.plot_correlation_design`)."""
    from .report.figures import plot_correlation_design as _draw

    return _draw(cd, title=title)


__all__ = [
    "perturbation_detection",
    "binomial_interval",
    "ks_score",
    "ks_statistic",
    "meta_correlation",
    "sample_size",
    "reference_sensitivity",
    "correlation_design",
    "plot_ks",
    "plot_detection",
    "plot_meta_correlation",
    "plot_reference_sensitivity",
    "plot_correlation_design",
    "Detection",
    "Detections",
    "KSScore",
    "KSScores",
    "MetaCorrelation",
    "MetaCorrelations",
    "SampleSize",
    "SampleSizes",
    "ReferenceSensitivity",
    "ReferenceSensitivities",
    "CorrelationDesign",
    "KS_THRESHOLDS",
    "CORRELATIONS",
    "BINOMIAL_CIS",
    "CORRECTIONS",
]
