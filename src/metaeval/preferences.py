r"""Pairwise-preference meta-evaluation: how well a judge agrees with human preferences.

Most validation of LLM judges uses *pairwise preferences* (which of two outputs of the
same input is better, ties allowed), as in the MT-Bench and Chatbot Arena human
judgments (Zheng et al. 2023) and AlpacaEval's evaluator analysis (Dubois et al. 2023).
This module holds the statistics that read such data; the data type and its reader live in
:mod:`metaeval.data` (``metaeval.data._preferences``) and are re-exported here:

=====================================  ==================================================
:class:`PreferenceData`                pairs (input, system A, system B), the preference
                                       of every human rater, the output of every judge
                                       (each sample and A/B order), validated once
:func:`read_preferences`               plain CSV/JSONL, MT-Bench human judgments JSONL,
                                       AlpacaEval annotation JSON
:func:`preference_agreement`           acc_23, tie-calibrated acc_eq, Cohen's kappa (vs
                                       the raters and vs the leave-one-out majority),
                                       Fleiss' kappa and Krippendorff's alpha with the
                                       judge among the raters; the human-human ceiling
                                       computed the same way; bootstrap CIs over inputs
:func:`compare_judges`                 two judges on the same pairs: paired bootstrap CI
                                       of the difference, permutation p-value
:func:`position_consistency`           A/B versus B/A: share of consistent verdicts,
                                       first/second-position wins, CI
:func:`length_bias`                    logistic regression of the preference on the
                                       length difference, Wald CI (humans and judges)
:func:`bradley_terry`                  Bradley-Terry strengths of the systems from human
                                       and judge preferences (MM algorithm, ties as half
                                       wins) and Kendall tau-b between the rankings
=====================================  ==================================================

Preferences and margins
-----------------------
A human preference is 1.0 (A better), 0.5 (tie) or 0.0 (B better); NaN is missing.
A judge gives per pair, sample and A/B order either a ``preference`` in [0, 1] in terms
of the original A/B (the layout of :mod:`metaeval.judge`'s pairwise prompt: 1.0 A
better, 0.5 tie, 0.0 B better, a probability of "A better" allowed, NaN a failure) or a
``margin``, any real number, positive when A is better (e.g. the difference of a
metric's scores, s_A - s_B).  Internally a preference p is the margin p - 1/2.  A
judge's margin for a pair is the **mean margin over its samples and orders** (so an
"A" in one order and a "B" in the other average to a tie).

Labels and the tie threshold epsilon
------------------------------------
With a tie threshold :math:`\varepsilon \ge 0` a margin :math:`d` gives the label
A if :math:`d > \varepsilon`, B if :math:`d < -\varepsilon` and tie if
:math:`|d| \le \varepsilon`.  Discrete outputs (margins -1/2, 0, 1/2) at
:math:`\varepsilon = 0` are scored exactly as the judge said them.

**acc_23** is the pairwise accuracy with ties of Deutsch, Foster and Freitag (2023,
"Ties Matter", Eq. for acc_eq, and mt-metrics-eval's ``KendallVariants`` variant
``acc23``) carried over to preferences: the share of (pair, rater) cells in which the
judge's label at :math:`\varepsilon = 0` equals the rater's label, a tie counting as a
label of its own (a judge tie against a rater preference is wrong, and vice versa):

.. math:: \mathrm{acc} = \frac{\sum_i \sum_r [\ell_i = h_{ri}]}{\sum_i \sum_r [h_{ri}\ \mathrm{present}]}

over pairs the judge labelled.  **acc_eq** is the same accuracy at the *tie-calibrated*
:math:`\varepsilon^*` (Deutsch et al. 2023, Section 5, "tie calibration"): the smallest
:math:`\varepsilon \in \{0\} \cup \{|d_i|\}` that maximizes the accuracy, found by one
sweep over the sorted :math:`|d_i|`.  Calibrating on the data that are scored favours
the judge (an optimistic bias Deutsch et al. acknowledge); pass ``epsilon=`` a value
chosen on held-out data to avoid it.  Bootstrap replicates of acc_eq re-calibrate
:math:`\varepsilon` in every resample.

Degenerate cases (a kappa whose chance agreement is 1, no complete pair for Fleiss'
kappa, a logistic fit with separation) give NaN and a typed warning; nothing is filled.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats as _st

from ._results import _ARR, _Collection, _Result
from ._signature import make_signature
from ._vocab import check_choice, check_number, check_probability
from .data import HUMAN, PreferenceData, read_preferences
from .data import MT_BENCH_WINNERS  # noqa: F401  (re-exported: documented here)
from .data import PREFERENCE_FORMATS as FORMATS  # noqa: F401  (re-exported: formats of read_preferences)
from .data import fmt_labels as _shown
from .errors import (
    DataError,
    NonConvergenceWarning,
    ParameterError,
    UndefinedStatisticWarning,
)
from .stats import resampling as _rs
from .stats.inference import percentile_interval, resampling_pvalue, story_note

#: The statistics of :func:`preference_agreement` (``measure`` column).
MEASURES = ("acc_23", "acc_eq", "kappa_raters", "kappa_majority", "fleiss_kappa", "alpha")
#: Bootstrap/permutation replicates drawn per block, at most; fewer when the data are large,
#: so that a block matrix (block x pairs or block x inputs) holds at most _BLOCK_CELLS floats.
_BLOCK = 128
_BLOCK_CELLS = 2**21


# --------------------------------------------------------------------------
# the arrays-only statistics live in stats/: labels, sufficient statistics, kappas and the
# tie-calibrated accuracy (stats.prefagree), the logistic fit (stats.logistic), Bradley-Terry
# by MM (stats.bradley_terry)

from .stats.bradley_terry import bt_mm  # noqa: E402  (public here)
from .stats.bradley_terry import win_matrix as _win_matrix  # noqa: E402
from .stats.logistic import logistic_fit  # noqa: E402  (public here)
from .stats.prefagree import (  # noqa: E402
    acc_eq_sweep as _acc_eq_sweep,
    human_counts as _human_counts,
    labels,
    majority_others as _majority_others,
    measures as _measures,
    pair_stats as _pair_stats,
    per_input as _per_input,
)


# --------------------------------------------------------------------------
# validation helpers


def _check_epsilon(eps):
    if eps is None:
        return None
    return check_number(eps, "epsilon", lo=0, note="or None to calibrate it", option="--epsilon")


def _block_size(*sizes):
    return int(max(1, min(_BLOCK, _BLOCK_CELLS // max(1, *sizes))))


def _weight_blocks(ss, B, M, P):
    """The bootstrap weight matrices (b, M), block by block; a fresh stream per call, so
    every annotator gets the same resamples, and the numbers do not depend on the block
    size (the draws are consecutive in one stream)."""
    gen = _rs.named_generator(ss, "bootstrap")
    step = _block_size(M, P)
    for s in range(0, B, step):
        yield _rs.bootstrap_counts(gen, min(step, B - s), M)


# --------------------------------------------------------------------------
# agreement


@dataclass(frozen=True)
class PreferenceAgreement(_Result):
    """One agreement statistic of one annotator (a judge, or ``human`` for the ceiling).

    Frame columns: ``judge``, ``measure`` (one of :data:`MEASURES`), ``statistic``,
    ``ci_low``, ``ci_high`` (percentile bootstrap over inputs), ``n`` (pairs used),
    ``epsilon`` (the tie threshold of the judge's labels; 0 for humans), ``signature``,
    ``above_ceiling`` (the judge's statistic is above the human-human ceiling's for
    the same measure; False for the ceiling itself and without a ceiling) and
    ``notes`` (for a judge above the ceiling, the reading that implies:
    :func:`ceiling_note`).
    """

    judge: str
    measure: str
    statistic: float
    ci_low: float
    ci_high: float
    n: int
    epsilon: float
    signature: str
    bootstrap: np.ndarray = field(**_ARR)
    above_ceiling: bool = False
    notes: str = ""


def ceiling_note(measure: str, statistic: float, ceiling: float, ceiling_ci=(np.nan, np.nan),
                 ci=(np.nan, np.nan), *, calibrated: bool = True) -> str:
    """The reading of a judge whose ``statistic`` is above the human-human ``ceiling``
    (empty when it is not, or either is NaN).

    A judge cannot agree with the raters better than they agree with one another
    unless it tracks what the raters share (their common component, the majority)
    rather than one rater's own judgments: it then reaches the raters' pooled
    agreement, which is not the same as being better than a human.  The ceiling is
    also limited by the raters' own noise (more or better-trained raters raise it).
    For ``acc_eq`` a calibrated tie threshold is chosen on the same data while the
    raters' ties are taken as given, which favours the judge (Deutsch et al. 2023,
    section 5).  Whether the intervals overlap says whether these data separate
    the two at all.

    Examples
    --------
    >>> ceiling_note("acc_23", 0.30, 0.31)
    ''
    >>> ceiling_note("acc_23", 0.44, 0.31).startswith("above the human-human ceiling (0.310)")
    True
    """
    if not (np.isfinite(statistic) and np.isfinite(ceiling)) or statistic <= ceiling:
        return ""
    txt = (f"above the human-human ceiling ({ceiling:.3f}) by {statistic - ceiling:.3f}: the judge agrees with "
           f"the raters more than a rater agrees with the others, so it tracks what the raters share rather than "
           f"any one rater; read it as reaching the raters' pooled agreement, not as better than a human, and "
           f"note that the ceiling is limited by the raters' own noise")
    if measure == "acc_eq" and calibrated:
        txt += ("; part of the margin is the tie threshold, calibrated on these data while the raters' ties are "
                "as given (compare acc_23, or fix epsilon on held-out data)")
    lo, hi = ci
    clo, chi = ceiling_ci
    if all(np.isfinite(v) for v in (lo, hi, clo, chi)):
        txt += ("; the intervals overlap, so these data do not separate the judge from the ceiling"
                if hi >= clo and chi >= lo else "; the intervals do not overlap")
    return txt


@dataclass(frozen=True)
class PreferenceAgreements(_Collection):
    """The results of :func:`preference_agreement`, keyed by ``judge``; see
    :class:`PreferenceAgreement` for the frame columns."""

    _item = PreferenceAgreement
    _key = "judge"

    def table(self) -> pd.DataFrame:
        """Wide view: one row per annotator, one column per measure (statistics only)."""
        f = self.to_frame()
        t = f.pivot(index="judge", columns="measure", values="statistic")
        cols = [m for m in MEASURES if m in t.columns]
        order = list(dict.fromkeys(f["judge"]))
        return t.loc[order, cols]


def _prep(data):
    if not isinstance(data, PreferenceData):
        raise ParameterError(f"data must be a PreferenceData (see read_preferences), got {type(data).__name__}")
    Hc = _human_counts(data.human)
    maj = _majority_others(Hc)
    kmax = int(Hc.sum(1).max()) if Hc.size else 0
    return Hc, maj, kmax


def _judge_list(data, judges):
    if judges is None:
        return list(data.judges)
    if isinstance(judges, str):
        judges = [judges]
    judges = list(judges)
    for j in judges:
        data.margin(j)  # raises for unknown
    return judges


def preference_agreement(data: PreferenceData, judges: Sequence[str] | None = None, *,
                         epsilon: float | None = None, ceiling: bool | None = None,
                         n_resamples: int = 1000, confidence_level: float = 0.95,
                         rng=None) -> PreferenceAgreements:
    r"""Agreement of each judge with the human raters, and the human-human ceiling.

    Measures (``measure`` column), all on the three labels A / tie / B:

    ``acc_23``
        Accuracy with ties at :math:`\varepsilon = 0` (module docstring): the share of
        (pair, rater) cells where the judge's label equals the rater's.
    ``acc_eq``
        The same at the tie-calibrated :math:`\varepsilon^*` (or at ``epsilon`` when
        given).  Its ``epsilon`` column holds the threshold used.
    ``kappa_raters``
        Cohen's (1960) unweighted kappa of the pooled (judge label, rater label) cells,
        :math:`(p_o - p_e)/(1 - p_e)` with :math:`p_e` from the pooled marginals (equal to
        ``sklearn.metrics.cohen_kappa_score`` on the flattened cells).
    ``kappa_majority``
        Cohen's kappa of (judge, majority of the *other* raters) over every (pair, rater)
        cell that has another rater: leave-one-rater-out, so that the ceiling compares
        rater r with the same majority.  The majority is the most frequent label; a
        shared top count is a tie.
    ``fleiss_kappa``
        Fleiss' (1971) kappa of the raters plus the judge, on pairs with the largest
        number of human labels (plus the judge's), the others left out.
    ``alpha``
        Krippendorff's nominal alpha (coincidence form) of the raters plus the judge.

    Judge labels use ``epsilon`` (default: the calibrated :math:`\varepsilon^*` of acc_eq;
    0 for ``acc_23``).  The **ceiling** (annotator ``human``) computes the same numbers
    with each rater in the judge's place: acc and kappa_raters pool every ordered pair of
    distinct raters of a pair, kappa_majority pools (rater r, majority of the others), and
    fleiss_kappa/alpha are those of the raters alone (both estimate the same pairwise
    agreement whatever the number of raters, so a judge that behaves like one more rater
    leaves them unchanged).  Human labels are used as given, so the ceiling's acc_eq
    equals its acc_23 (a calibrated judge has an advantage there).

    Confidence intervals are percentile bootstraps over **inputs** (all pairs of an input
    move together), the same resamples for every annotator; acc_eq re-calibrates
    :math:`\varepsilon` inside every resample, the other judge measures keep the labels
    at the full-data threshold.  Memory is bounded by drawing ``n_resamples`` in blocks.

    Parameters
    ----------
    data : PreferenceData
    judges : sequence of str, optional
        Default: every judge.
    epsilon : float, optional
        Fixed tie threshold (e.g. calibrated on held-out data); None calibrates.
    ceiling : bool, optional
        Add the human-human rows (``judge == "human"``).  None (default): when there are
        at least two raters; True with fewer is an error.
    n_resamples : int
        Bootstrap resamples (0 for no intervals).
    confidence_level : float
    rng : seed or Generator

    Returns
    -------
    PreferenceAgreements
    """
    Hc, maj, kmax = _prep(data)
    judges = _judge_list(data, judges)
    epsilon = _check_epsilon(epsilon)
    cl = check_probability(confidence_level, option="--confidence-level")
    B = 0 if n_resamples == 0 else _rs.check_n_resamples(n_resamples)
    ss, seed = _rs.seed_sequence(rng)
    M = len(data.inputs)
    codes = data.pair_input
    sig = dict(nan="pairwise", ci=f"boot-inputs:{B}:{cl}" if B else None,
               seed=seed if B else None)
    results = []
    if ceiling is None:
        ceiling = len(data.raters) >= 2
    annotators = ([HUMAN] if ceiling else []) + judges
    if ceiling and len(data.raters) < 2:
        raise ParameterError("the human-human ceiling needs at least two raters; pass ceiling=False "
                             "(CLI: --no-ceiling)")
    n_undefined = []
    for who in annotators:
        if who == HUMAN:
            S = _pair_stats(None, Hc, maj, kmax)
            eps_used, d = 0.0, None
            used = Hc.sum(1) >= 2
        else:
            d = np.asarray(data.margin(who))
            has = ~np.isnan(d) & (Hc.sum(1) > 0)
            if epsilon is None:
                w = has.astype(float)
                _, e = _acc_eq_sweep(np.where(has, d, 0.0), Hc, w[None, :])
                eps_used = float(e[0])
            else:
                eps_used = epsilon
            lab = np.where(has, labels(d, eps_used), -1)
            S = _pair_stats(lab, Hc, maj, kmax)
            lab0 = np.where(has, labels(d, 0.0), -1)
            S0 = _pair_stats(lab0, Hc, maj, kmax)
            used = has
        Sin = _per_input(S, codes, M)
        point = _measures(Sin.sum(0))
        reps = {k: [] for k in MEASURES}
        # acc_eq is the accuracy at the judge's threshold (calibrated or fixed); humans: as given
        point["acc_eq"] = point["acc"]
        if who != HUMAN:
            S0in = _per_input(S0, codes, M)
            point["acc_23"] = _measures(S0in.sum(0))["acc"]
        else:
            point["acc_23"] = point["acc"]
        for Wb in _weight_blocks(ss, B, M, len(codes)):
            mb = _measures(Wb @ Sin)
            for k in ("kappa_raters", "kappa_majority", "fleiss_kappa", "alpha"):
                reps[k].append(mb[k])
            if who == HUMAN:
                reps["acc_23"].append(mb["acc"])
                reps["acc_eq"].append(mb["acc"])
            else:
                reps["acc_23"].append(_measures(Wb @ S0in)["acc"])
                if epsilon is None:
                    wp = Wb[:, codes] * used[None, :]
                    a, _ = _acc_eq_sweep(np.where(used, d, 0.0), Hc, wp)
                    reps["acc_eq"].append(a)
                else:
                    reps["acc_eq"].append(mb["acc"])
        for k in MEASURES:
            stat = float(point[k])
            boot = np.concatenate(reps[k]) if reps[k] else None
            lo, hi = ((np.nan, np.nan) if boot is None
                      else percentile_interval(boot, cl, min_finite_fraction=0.5))
            if math.isnan(stat):
                n_undefined.append(f"{who}:{k}")
            eps_field = 0.0 if (who == HUMAN or k == "acc_23") else eps_used
            epsig = ("none" if who == HUMAN else ("calibrated" if epsilon is None else f"fixed:{epsilon}")) \
                if k != "acc_23" else "0"
            results.append(PreferenceAgreement(
                judge=who, measure=k, statistic=stat, ci_low=lo, ci_high=hi, n=int(used.sum()),
                epsilon=eps_field,
                signature=make_signature(human="raters", method=k, eps=epsig, **sig),
                bootstrap=boot))
    if n_undefined:
        warnings.warn(f"undefined statistics (no data, constant labels or no complete pair): "
                      f"{_shown(n_undefined, 8)}", UndefinedStatisticWarning, stacklevel=2)
    ceil = {r.measure: r for r in results if r.judge == HUMAN}
    results = [r if r.judge == HUMAN or r.measure not in ceil else _flag_ceiling(r, ceil[r.measure], epsilon)
               for r in results]
    return PreferenceAgreements(tuple(results))


def _flag_ceiling(r, c, epsilon):
    """``r`` with ``above_ceiling`` and the reading of :func:`ceiling_note` against the ceiling row ``c``."""
    note = ceiling_note(r.measure, r.statistic, c.statistic, (c.ci_low, c.ci_high), (r.ci_low, r.ci_high),
                        calibrated=epsilon is None)
    return replace(r, above_ceiling=bool(note), notes=note) if note else r


# --------------------------------------------------------------------------
# paired comparison of two judges


@dataclass(frozen=True)
class JudgeComparison(_Result):
    """Difference of one agreement measure between two judges on the same pairs.

    Frame columns: ``judge_a``, ``judge_b``, ``measure``, ``statistic`` (a - b),
    ``ci_low``, ``ci_high`` (paired percentile bootstrap over inputs), ``pvalue``
    (two-sided permutation test swapping the two judges' labels per pair,
    (count + 1) / (n + 1), ties within 1e-12 counted), ``n`` (pairs both labelled),
    ``signature``, ``notes`` (empty, or why p and interval disagree: the test swaps
    labels pair by pair, the interval resamples inputs, so pairs that share an input
    make the interval the wider;
    :func:`metaeval.stats.inference.story_note`).  Arrays: ``bootstrap``,
    ``null_distribution``.
    """

    judge_a: str
    judge_b: str
    measure: str
    statistic: float
    ci_low: float
    ci_high: float
    pvalue: float
    n: int
    signature: str
    bootstrap: np.ndarray = field(**_ARR)
    null_distribution: np.ndarray = field(**_ARR)
    notes: str = ""


_CMP_MEASURES = ("acc_23", "acc_eq", "kappa_raters", "kappa_majority")


def compare_judges(data: PreferenceData, judge_a: str, judge_b: str, *, measure: str = "acc_eq",
                   epsilon: float | None = None, n_resamples: int = 1000, confidence_level: float = 0.95,
                   rng=None) -> JudgeComparison:
    r"""Is judge A's agreement with the raters different from judge B's?

    Both judges are restricted to the pairs both labelled.  The statistic is
    :math:`m(A) - m(B)` for ``measure`` in acc_23, acc_eq, kappa_raters, kappa_majority.
    The CI resamples inputs (the same resample for both judges: paired); acc_eq
    re-calibrates each judge's :math:`\varepsilon` in every resample.  The permutation
    test swaps the two judges' *labels* (each at its own full-data threshold, so acc_eq is
    conditional on the calibrated thresholds) on each pair independently with probability
    1/2: under the null that the judges are exchangeable per pair.

    Parameters
    ----------
    data : PreferenceData
    judge_a, judge_b : str
        Two different judges of ``data``.
    measure : {"acc_eq", "acc_23", "kappa_raters", "kappa_majority"}
    epsilon : float, optional
        Fixed tie threshold for both judges; None calibrates each.
    n_resamples : int
        Bootstrap resamples and permutations (each).
    confidence_level : float
    rng : seed or Generator

    Returns
    -------
    JudgeComparison
    """
    check_choice(measure, "measure", _CMP_MEASURES, option="--measure")
    if judge_a == judge_b:
        raise ParameterError(f"judge_a and judge_b are both {judge_a!r}; give two different judges")
    Hc, maj, kmax = _prep(data)
    epsilon = _check_epsilon(epsilon)
    cl = check_probability(confidence_level, option="--confidence-level")
    B = _rs.check_n_resamples(n_resamples)
    ss, seed = _rs.seed_sequence(rng)
    da, db = np.asarray(data.margin(judge_a)), np.asarray(data.margin(judge_b))
    used = ~np.isnan(da) & ~np.isnan(db) & (Hc.sum(1) > 0)
    if not used.any():
        raise DataError(f"judges {judge_a!r} and {judge_b!r} have no labelled pair with a human rating in common")
    codes, M = data.pair_input, len(data.inputs)
    d = {}
    labs, Sp = {}, {}
    for j, dj in ((judge_a, da), (judge_b, db)):
        dj = np.where(used, dj, 0.0)
        d[j] = dj
        if measure == "acc_23":
            e = 0.0
        elif epsilon is None:
            e = float(_acc_eq_sweep(dj, Hc, used[None, :].astype(float))[1][0])
        else:
            e = epsilon
        labs[j] = np.where(used, labels(dj, e), -1)
        Sp[j] = _pair_stats(labs[j], Hc, maj, kmax)
    key = "acc" if measure in ("acc_23", "acc_eq") else measure

    def stat_of(S):
        return _measures(S)[key]

    obs = float(stat_of(Sp[judge_a].sum(0)) - stat_of(Sp[judge_b].sum(0)))
    # bootstrap (paired, over inputs)
    Sa_in, Sb_in = _per_input(Sp[judge_a], codes, M), _per_input(Sp[judge_b], codes, M)
    boot = []
    for Wb in _weight_blocks(ss, B, M, len(codes)):
        if measure == "acc_eq" and epsilon is None:
            wp = Wb[:, codes] * used[None, :]
            boot.append(_acc_eq_sweep(d[judge_a], Hc, wp)[0] - _acc_eq_sweep(d[judge_b], Hc, wp)[0])
        else:
            boot.append(stat_of(Wb @ Sa_in) - stat_of(Wb @ Sb_in))
    boot = np.concatenate(boot)
    lo, hi = percentile_interval(boot, cl, min_finite_fraction=0.5)
    # permutation: swap labels per pair
    genp = _rs.named_generator(ss, "permutation")
    Sa, Sb = Sp[judge_a][used], Sp[judge_b][used]
    diff = Sb - Sa
    base_a, base_b = Sa.sum(0), Sb.sum(0)
    null = []
    step = _block_size(Sa.shape[0])
    for s in range(0, B, step):
        mask = _rs.coin_masks(genp, (min(step, B - s), Sa.shape[0]))
        shift = mask.astype(float) @ diff
        null.append(stat_of(base_a + shift) - stat_of(base_b - shift))
    null = np.concatenate(null)
    p = resampling_pvalue(null, obs, "two-sided")
    if math.isnan(p):
        warnings.warn(f"compare_judges: the {measure} difference is undefined", UndefinedStatisticWarning,
                      stacklevel=2)
    sig = make_signature(human="raters", method=measure, test="perm-pairs", n=B,
                         ci=f"boot-inputs:{B}:{cl}",
                         eps="0" if measure == "acc_23" else ("calibrated" if epsilon is None else f"fixed:{epsilon}"),
                         seed=seed)
    return JudgeComparison(judge_a=judge_a, judge_b=judge_b, measure=measure, statistic=obs, ci_low=lo,
                           ci_high=hi, pvalue=float(p), n=int(used.sum()), signature=sig,
                           bootstrap=boot, null_distribution=null,
                           notes=story_note(p, lo, hi, cl, why=(
                               "the permutation test swaps the two judges' labels pair by pair, the interval "
                               "resamples inputs: pairs that share an input are not independent, which only the "
                               "interval counts; read the interval")))


# --------------------------------------------------------------------------
# position-swap consistency


@dataclass(frozen=True)
class PositionConsistency(_Result):
    """A/B versus B/A verdicts of one judge.

    Frame columns: ``judge``, ``n`` (pairs judged in both orders), ``consistency`` (share
    of those pairs whose verdicts in the two orders agree, in terms of the original A/B),
    ``ci_low``, ``ci_high`` (percentile bootstrap over inputs), ``first_position`` (share
    of pairs where the output shown first won in both orders), ``second_position`` (the
    output shown second won in both orders), ``signature``.
    """

    judge: str
    n: int
    consistency: float
    ci_low: float
    ci_high: float
    first_position: float
    second_position: float
    signature: str
    bootstrap: np.ndarray = field(**_ARR)


@dataclass(frozen=True)
class PositionConsistencies(_Collection):
    """Results of :func:`position_consistency`, keyed by ``judge``."""

    _item = PositionConsistency
    _key = "judge"


def position_consistency(data: PreferenceData, judges: Sequence[str] | None = None, *,
                         n_resamples: int = 1000, confidence_level: float = 0.95,
                         rng=None) -> PositionConsistencies:
    r"""Does the judge's verdict follow the content when A and B swap places?

    For each pair judged in both orders ("ab": A shown first; "ba": B shown first), the
    verdict of an order is the label (A, tie, B, at :math:`\varepsilon = 0`) of the mean
    margin of that order's samples, in terms of the original A/B.  The pair is
    *consistent* when both verdicts agree.  A pair with verdict A in "ab" and B in "ba"
    is a first-position win (the first-shown output won both times); B then A a
    second-position win.  Judges without pairs in both orders get NaN and a warning.

    Parameters
    ----------
    data : PreferenceData
    judges : sequence of str, optional
        Default: every judge.
    n_resamples : int
        Bootstrap resamples over inputs for the CI of ``consistency`` (0: none).
    confidence_level : float
    rng : seed or Generator

    Returns
    -------
    PositionConsistencies
    """
    _prep(data)
    judges = _judge_list(data, judges)
    cl = check_probability(confidence_level, option="--confidence-level")
    B = 0 if n_resamples == 0 else _rs.check_n_resamples(n_resamples)
    ss, seed = _rs.seed_sequence(rng)
    M = len(data.inputs)
    out, none = [], []
    for j in judges:
        r = data.judge_rows[(data.judge_rows["judge"] == j) & data.judge_rows["margin"].notna()
                            & data.judge_rows["order"].isin(["ab", "ba"])]
        g = r.groupby(["pair", "order"])["margin"].mean().unstack("order")
        if not {"ab", "ba"} <= set(g.columns):
            g = pd.DataFrame(columns=["ab", "ba"], dtype=float)
        g = g.dropna(subset=["ab", "ba"])
        la, lb = labels(g["ab"].to_numpy()), labels(g["ba"].to_numpy())
        n = len(g)
        cons = (la == lb).astype(float)
        first = ((la == 2) & (lb == 0)).astype(float)
        second = ((la == 0) & (lb == 2)).astype(float)
        sig = make_signature(method="position-consistency", eps="0",
                             ci=f"boot-inputs:{B}:{cl}" if B else None, seed=seed if B else None)
        if n == 0:
            none.append(j)
            out.append(PositionConsistency(j, 0, np.nan, np.nan, np.nan, np.nan, np.nan, sig))
            continue
        codes = data.pair_input[g.index.to_numpy(dtype=np.intp)]
        cnt = np.bincount(codes, minlength=M).astype(float)
        cin = np.bincount(codes, weights=cons, minlength=M)
        boot = None
        lo = hi = np.nan
        if B:
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = np.concatenate([(Wb @ cin) / (Wb @ cnt) for Wb in _weight_blocks(ss, B, M, M)])
            lo, hi = percentile_interval(boot, cl, min_finite_fraction=0.5)
        out.append(PositionConsistency(j, n, float(cons.mean()), lo, hi, float(first.mean()),
                                       float(second.mean()), sig, bootstrap=boot))
    if none:
        warnings.warn(f"position_consistency: judges without pairs judged in both orders ('ab' and 'ba'): "
                      f"{_shown(none)}", UndefinedStatisticWarning, stacklevel=2)
    return PositionConsistencies(tuple(out))


# --------------------------------------------------------------------------
# length bias


@dataclass(frozen=True)
class LengthBias(_Result):
    """Logistic regression of "A preferred" on the length difference, one annotator.

    Frame columns: ``judge`` (``human`` = every rater label), ``n`` (non-tied labels with
    both lengths), ``intercept``, ``slope`` (log-odds of preferring A per ``per`` units of
    length difference A - B), ``se``, ``ci_low``, ``ci_high`` (Wald), ``pvalue`` (Wald),
    ``odds_ratio`` (exp(slope)), ``per``, ``unit``, ``signature``.
    """

    judge: str
    n: int
    intercept: float
    slope: float
    se: float
    ci_low: float
    ci_high: float
    pvalue: float
    odds_ratio: float
    per: float
    unit: str
    signature: str


@dataclass(frozen=True)
class LengthBiases(_Collection):
    """Results of :func:`length_bias`, keyed by ``judge``."""

    _item = LengthBias
    _key = "judge"


def length_bias(data: PreferenceData, judges: Sequence[str] | None = None, *, per: float = 100.0,
                confidence_level: float = 0.95) -> LengthBiases:
    r"""Do the preferences favour the longer output?

    For every non-tied label (each rater's label of each pair for ``human``; each judge's
    label at :math:`\varepsilon = 0` of its mean margin), :math:`y = 1` when A is
    preferred, and :math:`x = (\mathrm{len}_A - \mathrm{len}_B) / \mathrm{per}` (lengths
    in the data's unit: words of the outputs, or the given lengths).  The fit is
    :func:`logistic_fit`; ``slope > 0`` means longer outputs win more often, and comparing a
    judge's slope with the humans' tells whether the judge's length preference exceeds
    theirs.  The Wald interval treats labels as independent (several raters of one pair
    are not), so the human interval is somewhat too narrow.  Ties are left out.

    Parameters
    ----------
    data : PreferenceData
        With lengths (texts or ``length_a``/``length_b``).
    judges : sequence of str, optional
        Default: every judge.
    per : float
        The slope is per this many length units.
    confidence_level : float

    Returns
    -------
    LengthBiases
        One row for ``human`` and one per judge.
    """
    if data.lengths is None:
        raise DataError("length_bias needs output lengths: give output_a/output_b texts or length_a/length_b "
                        "columns (CLI: the file's columns)")
    check_number(per, "per", lo=0, open_lo=True, option="--length-per")
    cl = check_probability(confidence_level, option="--confidence-level")
    judges = _judge_list(data, judges)
    dl = (data.lengths[:, 0] - data.lengths[:, 1]) / per
    out, failed = [], []
    sig = make_signature(method="logit-wald", per=per, ci=f"wald:{cl}")
    for who in [HUMAN] + judges:
        if who == HUMAN:
            H = data.human
            x = np.broadcast_to(dl, H.shape)
            ok = np.isin(H, (0.0, 1.0)) & np.isfinite(x)
            xs, ys = x[ok], H[ok]
        else:
            lab = labels(data.margin(who))
            ok = np.isin(lab, (0, 2)) & np.isfinite(dl)
            xs, ys = dl[ok], (lab[ok] == 2).astype(float)
        b0, b1, se, lo, hi, pv, conv = logistic_fit(xs, ys, confidence_level=cl)
        if not conv:
            failed.append(who)
        out.append(LengthBias(who, int(xs.size), b0, b1, se, lo, hi, pv, float(np.exp(b1)), float(per),
                              data.length_unit, sig))
    if failed:
        warnings.warn(f"length_bias: no finite maximum-likelihood fit (separation, constant lengths or one "
                      f"class) for {_shown(failed)}", NonConvergenceWarning, stacklevel=2)
    return LengthBiases(tuple(out))


# --------------------------------------------------------------------------
# Bradley-Terry


@dataclass(frozen=True)
class BradleyTerryFit(_Result):
    """Bradley-Terry strengths of the systems from one annotator's preferences.

    Frame columns: ``judge`` (``human`` = all rater labels), ``n_comparisons``,
    ``tau_b`` and ``tau_pvalue`` (Kendall tau-b between this annotator's and the
    humans' strengths, scipy.stats.kendalltau; NaN for ``human``), ``iterations``,
    ``converged``, ``signature``.  ``systems`` and ``log_strength`` (sum zero) are in
    ``to_dict()``; :meth:`BradleyTerry.ranking` tabulates them.
    """

    judge: str
    n_comparisons: float
    tau_b: float
    tau_pvalue: float
    iterations: int
    converged: bool
    signature: str
    systems: tuple = field(default=(), metadata={"nofr": True})
    log_strength: np.ndarray = field(**_ARR)


@dataclass(frozen=True)
class BradleyTerry(_Collection):
    """Results of :func:`bradley_terry`, keyed by ``judge``."""

    _item = BradleyTerryFit
    _key = "judge"

    def ranking(self) -> pd.DataFrame:
        """Log-strengths: one row per system, one column per annotator (sorted by human)."""
        cols = {r.judge: pd.Series(r.log_strength, index=list(r.systems)) for r in self.results}
        f = pd.DataFrame(cols)
        f.index.name = "system"
        return f.sort_values(self.results[0].judge, ascending=False)


def bradley_terry(data: PreferenceData, judges: Sequence[str] | None = None, *,
                  epsilon: float | None = 0.0) -> BradleyTerry:
    r"""Bradley-Terry ranking of the systems from human and from judge preferences.

    Every rater label is one comparison (A's share of the win: 1, 1/2 for a tie, 0);
    every judge contributes one comparison per pair, its label at ``epsilon`` (0 by
    default; None = each judge's calibrated threshold of acc_eq).  **Ties are half a win
    to each side** (not Davidson's 1970 tie model), so the strengths are the MLE of the
    plain Bradley-Terry likelihood :math:`\prod \pi_i^{w_{ij}} / (\pi_i + \pi_j)^{w_{ij}}`
    with fractional counts, fitted by :func:`bt_mm`.  Each judge's strengths are
    compared with the humans' by Kendall tau-b (scipy.stats.kendalltau, variant "b").
    Judges also use pairs without human labels; the human fit uses the rated pairs.

    Parameters
    ----------
    data : PreferenceData
    judges : sequence of str, optional
        Default: every judge.
    epsilon : float or None
        Tie threshold of the judges' labels (None: each judge's calibrated threshold).

    Returns
    -------
    BradleyTerry
        ``human`` first, then one fit per judge; :meth:`BradleyTerry.ranking` tabulates
        the log-strengths.
    """
    Hc, _, _ = _prep(data)
    judges = _judge_list(data, judges)
    if epsilon is not None:
        epsilon = _check_epsilon(epsilon)
    systems = data.systems
    sa = data.pairs["system_a"].to_numpy()
    sb = data.pairs["system_b"].to_numpy()
    out, bad = [], []
    human_ls = None
    for who in [HUMAN] + judges:
        if who == HUMAN:
            H = data.human
            k, i = np.nonzero(~np.isnan(H))
            w = _win_matrix(sa[i], sb[i], H[k, i], systems)
        else:
            d = np.asarray(data.margin(who))
            has = ~np.isnan(d)
            if epsilon is None:
                usable = has & (Hc.sum(1) > 0)
                e = float(_acc_eq_sweep(np.where(usable, d, 0.0), Hc, usable[None, :].astype(float))[1][0])
            else:
                e = epsilon
            lab = labels(d, e)[has]
            w = _win_matrix(sa[has], sb[has], lab / 2.0, systems)
        ls, it, conv = bt_mm(w)
        if not conv:
            bad.append(who)
        if who == HUMAN:
            human_ls = ls
            tau = pv = np.nan
        elif np.all(np.isfinite(ls)) and np.all(np.isfinite(human_ls)):
            res = _st.kendalltau(human_ls, ls, variant="b")
            tau, pv = float(res.statistic), float(res.pvalue)
        else:
            tau = pv = np.nan
        eps_sig = "0" if epsilon == 0 else ("calibrated" if epsilon is None else f"fixed:{epsilon}")
        sig = make_signature(method="bradley-terry-mm", ties="half-win", eps=eps_sig, corr="kendall_b")
        out.append(BradleyTerryFit(who, float(w.sum()), tau, pv, int(it), bool(conv), sig,
                                   systems=tuple(systems), log_strength=ls))
    if bad:
        warnings.warn(f"bradley_terry: no finite MLE or no convergence for {_shown(bad)} (the win graph is not "
                      "strongly connected: some system never beats, or never loses to, the others)",
                      NonConvergenceWarning, stacklevel=2)
    return BradleyTerry(tuple(out))


__all__ = [
    "MEASURES",
    "PreferenceData",
    "read_preferences",
    "labels",
    "preference_agreement",
    "PreferenceAgreement",
    "PreferenceAgreements",
    "compare_judges",
    "JudgeComparison",
    "position_consistency",
    "PositionConsistency",
    "PositionConsistencies",
    "logistic_fit",
    "length_bias",
    "LengthBias",
    "LengthBiases",
    "bt_mm",
    "bradley_terry",
    "BradleyTerryFit",
    "BradleyTerry",
]
