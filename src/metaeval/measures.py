"""Which correlation measure to trust: discriminative power and ranking consistency.

A *measure* is one grouping level with one coefficient (seed paper 000,
section 2: the 12 measures are {system, input, item, global} x {pearson,
spearman, kendall_b}).  This module evaluates measures on a dataset with
several metrics, as seed paper 000 section 5 does:

:func:`discriminative_power` (Algorithm 2)
    For every distinct pair of metrics the two-sided p-value of the test
    that their correlations with the human scores differ; per measure the
    sorted p-value curve and the DP value, the mean p-value (lower: the
    measure separates more metric pairs).
:func:`ranking_consistency` (Algorithm 3)
    T random half-splits of the inputs; per split the metrics are ranked by
    the measure on each half and the two rankings compared with Kendall's
    tau-b; RC is the mean over splits (higher: a more stable ranking).

Both run their independent units (metric pairs, metrics) through the one
execution layer (:mod:`metaeval._parallel`): in-process by default (the numba
kernels use every core), in worker processes with ``n_jobs``, on a Dask
cluster with ``dask=``, and resumable with ``checkpoint=``.  Random streams
derive from the seed and the unit's names, so results do not depend on any
of these.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from ._parallel import Checkpoint, check_n_jobs, run_units
from ._results import _Table
from ._stacklevel import user_stacklevel
from .data import sysscores as _sys
from .data import accepts_frames
from ._signature import make_signature
from ._vocab import check_choice, check_int, check_level_size, human_column, metric_columns
from .errors import ParameterError, UndefinedStatisticWarning
from .stats import exact as _exact
from .stats import resampling as _rs
from .stats.coefficients import get_coefficient
from .stats.inference import resampling_pvalue
from .stats.levels import LEVELS, check_average, check_level
from .stats.pairtest import (
    TESTS,
    PairOptions,
    common_cells,
    pair_generator,
    pair_test,
    pair_values,
    williams,
    zscore,
)
from .stats.permboth import perm_both_values

PAPER_METHODS = ("pearson", "spearman", "kendall_b")
PAPER_MEASURES = tuple((level, method) for level in LEVELS for method in PAPER_METHODS)
DP_TESTS = TESTS
# Ranking consistency compares metrics' statistics rounded to this many
# decimals, so float noise cannot break a tie (e.g. two averages of Spearman
# values that are equal as real numbers but summed in another order).
RC_TIE_DECIMALS = 12


# --------------------------------------------------------------------------
# validation shared by both analyses


def check_measures(measures=None, *, levels=None, methods=None):
    """The list of (level, method) measures to evaluate.

    ``measures`` (pairs or ``"level:method"`` strings) is used as given;
    otherwise the product of ``levels`` (default all four) and ``methods``
    (default pearson, spearman, kendall_b: the paper's 12 measures).
    """
    if measures is not None:
        if levels is not None or methods is not None:
            raise ParameterError("give either measures= or levels=/methods=, not both")
        if isinstance(measures, str):
            measures = [measures]
        out = []
        for m in measures:
            if isinstance(m, str):
                parts = m.split(":")
                if len(parts) != 2:
                    raise ParameterError(
                        f"measure {m!r} must be 'level:method', e.g. 'input:kendall_b'"
                    )
                m = tuple(parts)
            if not (isinstance(m, tuple) and len(m) == 2):
                raise ParameterError(f"measure {m!r} must be a (level, method) pair")
            out.append(m)
    else:
        levels = LEVELS if levels is None else ([levels] if isinstance(levels, str) else list(levels))
        methods = (
            PAPER_METHODS if methods is None else ([methods] if isinstance(methods, str) else list(methods))
        )
        out = [(lv, m) for lv in levels for m in methods]
    if not out:
        raise ParameterError("no measures to evaluate")
    checked = []
    bad = []
    for level, method in out:
        level = check_level(level)
        coef = get_coefficient(method)
        if coef.levels is not None and level not in coef.levels:
            bad.append(f"{level}:{method}")
        checked.append((level, method))
    if bad:
        raise ParameterError(
            f"measure(s) {', '.join(bad)} not defined (pairwise_accuracy is system-level only); "
            "pass measures= explicitly"
        )
    if len(set(checked)) != len(checked):
        raise ParameterError("measures contains duplicates")
    return checked


def _data_fingerprint(dataset, columns):
    h = hashlib.sha1()
    h.update(repr((dataset.systems, dataset.inputs)).encode())
    for c in columns:
        h.update(c.encode())
        h.update(np.ascontiguousarray(dataset.scores(c)).tobytes())
    return h.hexdigest()


def _checkpoint(checkpoint, analysis, dataset, human, metrics, measures, signature, rng,
                random=True):
    """The run's :class:`Checkpoint` (None without one): its key is the
    analysis, a fingerprint of the data, the signature and the names."""
    if checkpoint is None:
        return None
    key = {
        "analysis": analysis,
        "data": _data_fingerprint(dataset, [human, *metrics]),
        "signature": signature,
        "measures": [_measure_label(*m) for m in measures],
        "metrics": list(metrics),
    }
    if rng is None and random:
        raise ParameterError(
            "checkpoint= needs an explicit seed (rng=...): a resumed run must draw the same "
            "random numbers as the interrupted one"
        )
    if isinstance(checkpoint, Checkpoint):
        return checkpoint.for_run(key)
    return Checkpoint(checkpoint, key)


from .stats.metameasures import rank_low_first as _rank_low_first  # noqa: E402
from .stats.metameasures import split_half_statistics as _rc_metric  # noqa: E402
from .stats.resampling import half_splits  # noqa: E402,F401  (public here)


def _measure_label(level, method):
    return f"{level}:{method}"


# --------------------------------------------------------------------------
# discriminative power


@dataclass(frozen=True)
class DiscriminativePower(_Table):
    """Discriminative power of correlation measures (seed paper 000, Algorithm 2).

    Attributes
    ----------
    measures : tuple of (level, method)
    metrics : tuple of str
    pairs : tuple of (str, str)
        Every distinct metric pair (i < j in ``metrics`` order).
    statistic_a, statistic_b, delta : ndarray (n_measures, n_pairs)
        The two metrics' correlations on their common cells and the difference.
    pvalues : ndarray (n_measures, n_pairs)
        Two-sided p-values; NaN where a correlation is undefined.
    dp : ndarray (n_measures,)
        Mean of the finite p-values (lower is better).
    rank : ndarray (n_measures,)
        1 = the most discriminative measure (ties share the smaller rank).
    n_nan : ndarray (n_measures,) of int
        Pairs without a p-value (left out of ``dp``).
    """

    human: str
    measures: tuple
    metrics: tuple
    pairs: tuple
    test: str
    n_resamples: int
    statistic_a: np.ndarray
    statistic_b: np.ndarray
    delta: np.ndarray
    pvalues: np.ndarray
    dp: np.ndarray
    rank: np.ndarray
    n_nan: np.ndarray
    signature: str
    measure_signatures: tuple
    average: str = "macro"

    _get_keys: ClassVar[tuple] = ("level", "method")

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``level, method, dp, rank, n_pairs, n_nan, signature``
        (the measure's own signature)."""
        return pd.DataFrame(
            {
                "level": [lv for lv, _ in self.measures],
                "method": [m for _, m in self.measures],
                "dp": self.dp,
                "rank": self.rank,
                "n_pairs": len(self.pairs),
                "n_nan": self.n_nan,
                "signature": list(self.measure_signatures),
            }
        )

    def pvalue_frame(self) -> pd.DataFrame:
        """One row per measure x pair: ``level, method, metric_a, metric_b,
        statistic_a, statistic_b, delta, pvalue``."""
        rows = []
        for k, (lv, m) in enumerate(self.measures):
            for p, (a, b) in enumerate(self.pairs):
                rows.append(
                    (lv, m, a, b, self.statistic_a[k, p], self.statistic_b[k, p],
                     self.delta[k, p], self.pvalues[k, p])
                )
        cols = ["level", "method", "metric_a", "metric_b", "statistic_a", "statistic_b",
                "delta", "pvalue"]
        return pd.DataFrame(rows, columns=cols)

    def curve_frame(self) -> pd.DataFrame:
        """The p-value curves (paper Figures 7-36): per measure the p-values
        sorted in descending order; columns ``level, method, position``
        (1-based), ``fraction`` (position / number of finite p-values),
        ``pvalue``."""
        rows = []
        for k, (lv, m) in enumerate(self.measures):
            p = self.pvalues[k]
            p = np.sort(p[np.isfinite(p)])[::-1]
            for i, v in enumerate(p):
                rows.append((lv, m, i + 1, (i + 1) / p.size, v))
        return pd.DataFrame(rows, columns=["level", "method", "position", "fraction", "pvalue"])

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict of the options, p-values and ranks (with ``arrays``, also
        ``statistic_a`` and ``statistic_b``)."""
        d = {
            "human": self.human,
            "test": self.test,
            "n_resamples": self.n_resamples,
            "average": self.average,
            "metrics": list(self.metrics),
            "measures": [_measure_label(*m) for m in self.measures],
            "dp": self.dp.tolist(),
            "rank": self.rank.tolist(),
            "n_nan": self.n_nan.tolist(),
            "pairs": [list(p) for p in self.pairs],
            "pvalues": self.pvalues.tolist(),
            "delta": self.delta.tolist(),
            "signature": self.signature,
        }
        if arrays:
            d["statistic_a"] = self.statistic_a.tolist()
            d["statistic_b"] = self.statistic_b.tolist()
        return d


def _dp_pair(a, b, xa_raw, xb_raw, z, measures, test, n_resamples, average, ss, human,
             budget=None):
    """Per measure: (statistic_a, statistic_b, delta, two-sided p) for one pair."""
    xa, xb, zz, n = common_cells(xa_raw, xb_raw, z)
    K = len(measures)
    res = np.full((K, 4), np.nan)
    if n < 2:
        return res
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "perm-both":
            stats = []
            for lv, m in measures:
                # both on the groups where both are defined, as compare() does
                opt = PairOptions(level=lv, method=m, test=test, average=average,
                                  n_resamples=n_resamples)
                va, vb, _, _ = pair_values(xa, xb, zz, opt)
                stats.append((float(va[0]), float(vb[0])))
            # the pair's coins, drawn chunk by chunk (the same stream as one draw)
            coins = _rs.CoinStream(pair_generator(ss, a, b), n_resamples, zz.size)
            za, zb = zscore(xa), zscore(xb)
            nulls = np.empty((K, n_resamples))
            layouts = {}
            for sl in _rs.resample_chunks(n_resamples, zz.size, budget):
                halves = perm_both_values(
                    za, zb, zz, measures, coins.packed(sl), sl.stop - sl.start,
                    average=average, layouts=layouts,
                )
                for k, key in enumerate(measures):
                    nulls[k, sl] = halves[key][:, 0] - halves[key][:, 1]
            for k, (lv, m) in enumerate(measures):
                sa, sb = stats[k]
                delta = sa - sb
                res[k] = (sa, sb, delta, resampling_pvalue(nulls[k], delta, "two-sided"))
            return res
        for k, (lv, m) in enumerate(measures):
            opt = PairOptions(level=lv, method=m, test=test, average=average,
                              n_resamples=n_resamples, budget=budget)
            if test == "williams":
                sa, sb, _, p2, _, _, _ = williams(xa, xb, zz, opt)
                res[k] = (sa, sb, sa - sb, p2)
            else:
                pt = pair_test(xa, xb, zz, opt, pair_generator(ss, a, b), n)
                res[k] = (pt.statistic_a, pt.statistic_b, pt.statistic, pt.pvalues["two-sided"])
    return res


@accepts_frames(human="human")
def discriminative_power(
    dataset,
    human: str,
    *,
    metrics=None,
    measures=None,
    levels=None,
    methods=None,
    test: str = "perm-both",
    n_resamples: int = 1000,
    average: str = "macro",
    rng=None,
    n_jobs: int = 1,
    dask=None,
    checkpoint=None,
    progress=None,
    memory_budget=None,
) -> DiscriminativePower:
    """Discriminative power of correlation measures (seed paper 000, Algorithm 2).

    For a measure c and K metrics, every distinct pair (i, j), i < j, is
    tested for a difference of their correlations with the human scores,
    giving a two-sided p-value p_ij, and

        DP(c) = 2 / (K (K - 1)) * sum_{i<j} p_ij

    (lower is better; it is the area under the descending p-value curve,
    normalised by the number of pairs).  The paper's pseudocode loops
    ``j`` from ``i`` (which would add the K self-pairs, each p = 1) but
    divides by K(K-1)/2; we use the K(K-1)/2 distinct pairs, as the text
    and the normalisation intend.

    Parameters
    ----------
    dataset : Dataset
    human : str
        Human score column.
    metrics : list of str, optional
        Default: every metric column.  At least 2.
    measures : list of (level, method) or "level:method", optional
        Default: the product of ``levels`` and ``methods``, i.e. the paper's
        12 measures.  Any method of the core is allowed.
    test : str
        ``perm-both`` (default; the paper's, with 1000 resamples), ``williams``
        (the paper's Table 7), or any other test of :func:`metaeval.compare`.
        For Perm-Both, the pair's coins are drawn once and shared by all
        measures; each measure's p-value equals that of
        ``metaeval.compare(dataset, human, a, b, level=..., method=...,
        test="perm-both", rng=rng)``.
    n_resamples, average, rng
        As in :func:`metaeval.compare`.
    n_jobs, dask, checkpoint
        Execution (:mod:`metaeval._parallel`): worker processes, a Dask
        client or scheduler address, and a folder (or
        :class:`~metaeval._parallel.Checkpoint`) in which finished pairs are
        kept so that an interrupted run continues where it stopped.
    progress : callable, optional
        Called with 1 as each pair finishes.
    memory_budget : int or str, optional
        Bytes (or e.g. ``"512MB"``) for the resampled cell arrays of one unit;
        resamples are processed in chunks that fit (default: the environment
        variable ``METAEVAL_MEMORY_BUDGET``, else 1 GiB).  The numbers do
        not depend on it.

    Returns
    -------
    DiscriminativePower

    Examples
    --------
    >>> import metaeval
    >>> ds = metaeval.load_dataset("summeval")
    >>> dp = metaeval.discriminative_power(ds, "coherence",
    ...     metrics=["ROUGE.1", "ROUGE.2", "BertScore_f1"],
    ...     measures=["system:kendall_b", "global:pearson"], n_resamples=200, rng=0)
    >>> dp.to_frame()[["level", "method", "rank"]]
        level     method  rank
    0  system  kendall_b   2.0
    1  global    pearson   1.0
    """
    human = human_column(dataset, human)
    measures = check_measures(measures, levels=levels, methods=methods)
    check_choice(test, "test", DP_TESTS)
    if test == "williams":
        bad = [f"{lv}:{m}" for lv, m in measures if m not in ("pearson", "spearman", "kendall_b", "kendall_c")]
        if bad:
            raise ParameterError(
                f"test='williams' compares correlations; not defined for {', '.join(bad)}"
            )
    average = check_average(average)
    n_resamples = _rs.check_n_resamples(n_resamples)
    check_n_jobs(n_jobs)
    for lv in dict.fromkeys(lv for lv, _ in measures):
        check_level_size(dataset, lv)
    if any(lv == "system" for lv, _ in measures):
        _sys.note_ignored(dataset, "discriminative_power")
    metrics = metric_columns(dataset, metrics, distinct=True, minimum=2,
                             what="discriminative power")
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    z = np.asarray(dataset.scores(human), float)
    arrays = {m: np.asarray(dataset.scores(m), float) for m in metrics}
    pairs = [(metrics[i], metrics[j]) for i in range(len(metrics)) for j in range(i + 1, len(metrics))]
    def signature(level=None, method=None, n_measures=None):
        return make_signature(
            human=human,
            level=level,
            method=method,
            avg=average,
            nan="pairwise",
            common="cells",
            test=test,
            alt="two-sided",
            n=n_resamples if test != "williams" else None,
            seed=tag if test != "williams" else None,
            measures=n_measures,
            metrics=len(metrics),
            analysis="discriminative-power",
        )

    sig = signature(n_measures=len(measures))
    ckpt = _checkpoint(checkpoint, "discriminative_power", dataset, human, metrics, measures, sig,
                       rng, random=test != "williams")

    def work(pair):
        a, b = pair
        return _dp_pair(a, b, arrays[a], arrays[b], z, measures, test, n_resamples, average, ss,
                        human, budget)

    res = run_units(
        work, pairs, n_jobs=n_jobs, progress=progress, checkpoint=ckpt, dask=dask,
        names=[f"pair\x1f{a}\x1f{b}" for a, b in pairs],
    )
    arr = np.stack(res, axis=1) if res else np.zeros((len(measures), 0, 4))  # (K, P, 4)
    pv = arr[..., 3]
    n_nan = (~np.isfinite(pv)).sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dp = _exact.nanmean(pv, axis=1)  # correctly rounded: measures are ranked by dp
    if n_nan.any():
        bad = [f"{_measure_label(*measures[k])} ({n_nan[k]})" for k in np.flatnonzero(n_nan)]
        warnings.warn(
            f"some metric pairs have no p-value (an undefined correlation) and are left out "
            f"of DP: {', '.join(bad)}",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    return DiscriminativePower(
        human=human,
        measures=tuple(measures),
        metrics=tuple(metrics),
        pairs=tuple(pairs),
        test=test,
        n_resamples=n_resamples if test != "williams" else 0,
        statistic_a=arr[..., 0],
        statistic_b=arr[..., 1],
        delta=arr[..., 2],
        pvalues=pv,
        dp=dp,
        rank=_rank_low_first(dp),
        n_nan=n_nan.astype(int),
        signature=sig,
        measure_signatures=tuple(signature(lv, m) for lv, m in measures),
        average=average,
    )


# --------------------------------------------------------------------------
# ranking consistency


@dataclass(frozen=True)
class RankingConsistency(_Table):
    """Ranking consistency of correlation measures (seed paper 000, Algorithm 3).

    Attributes
    ----------
    measures : tuple of (level, method)
    metrics : tuple of str
    rc : ndarray (n_measures,)
        Mean over splits of Kendall's tau-b between the metric rankings on
        the two halves (higher is better).
    se : ndarray (n_measures,)
        Standard error of ``rc``: std (ddof=1) of the per-split taus over
        sqrt(number of finite taus).
    rank : ndarray (n_measures,)
        1 = the most consistent measure.
    n_nan : ndarray (n_measures,)
        Splits whose tau is undefined (left out of ``rc``).
    taus : ndarray (n_measures, n_splits)
        The per-split tau-b values.
    half_statistics : ndarray (n_measures, 2, n_splits, n_metrics)
        Each metric's statistic on each half (kept for inspection).
    """

    human: str
    measures: tuple
    metrics: tuple
    n_splits: int
    rc: np.ndarray
    se: np.ndarray
    rank: np.ndarray
    n_nan: np.ndarray
    signature: str
    measure_signatures: tuple
    average: str = "macro"

    _get_keys: ClassVar[tuple] = ("level", "method")
    taus: np.ndarray | None = field(default=None, repr=False, compare=False)
    half_statistics: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``level, method, rc, se, rank, n_splits, n_nan, signature``."""
        return pd.DataFrame(
            {
                "level": [lv for lv, _ in self.measures],
                "method": [m for _, m in self.measures],
                "rc": self.rc,
                "se": self.se,
                "rank": self.rank,
                "n_splits": self.n_splits,
                "n_nan": self.n_nan,
                "signature": list(self.measure_signatures),
            }
        )

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict of the options, rc, se and ranks (with ``arrays``, also ``taus``
        and ``half_statistics``)."""
        d = {
            "human": self.human,
            "n_splits": self.n_splits,
            "average": self.average,
            "metrics": list(self.metrics),
            "measures": [_measure_label(*m) for m in self.measures],
            "rc": self.rc.tolist(),
            "se": self.se.tolist(),
            "rank": self.rank.tolist(),
            "n_nan": self.n_nan.tolist(),
            "signature": self.signature,
        }
        if arrays:
            for name in ("taus", "half_statistics"):
                v = getattr(self, name)
                d[name] = None if v is None else np.asarray(v).tolist()
        return d


@accepts_frames(human="human")
def ranking_consistency(
    dataset,
    human: str,
    *,
    metrics=None,
    measures=None,
    levels=None,
    methods=None,
    n_splits: int = 1000,
    average: str = "macro",
    rng=None,
    n_jobs: int = 1,
    dask=None,
    checkpoint=None,
    progress=None,
    memory_budget=None,
) -> RankingConsistency:
    """Ranking consistency of correlation measures (seed paper 000, Algorithm 3).

    For each of T splits, the M inputs are split at random into halves of
    floor(M/2) and M - floor(M/2) inputs (all systems kept); each metric's
    correlation with the human scores is computed on each half with the
    measure, and the two vectors of K correlations are compared with
    Kendall's tau-b (ties in the correlations are handled by tau-b, with
    statistics equal to 12 decimals counted as tied, see
    :data:`RC_TIE_DECIMALS`; a metric whose correlation is undefined on a
    half is left out of that split's tau).  RC is the mean of the T taus; its standard error is the standard
    deviation of the taus over sqrt(T).

    The same T splits are used for every measure (a paired design, so
    measures are compared on identical data); they are drawn once from the
    seed, so results do not depend on ``n_jobs``, Dask or checkpoints.

    Parameters
    ----------
    dataset, human, metrics, measures, levels, methods, average
        As in :func:`discriminative_power`; at least 3 metrics.
    n_splits : int
        T (default 1000, as the paper).
    rng, n_jobs, dask, checkpoint, progress, memory_budget
        As in :func:`discriminative_power` (units are metrics; chunks are
        splits).

    Returns
    -------
    RankingConsistency

    Examples
    --------
    >>> import metaeval
    >>> ds = metaeval.load_dataset("summeval")
    >>> rc = metaeval.ranking_consistency(ds, "coherence",
    ...     metrics=["ROUGE.1", "ROUGE.2", "BertScore_f1", "BLEU"],
    ...     measures=["system:pearson", "global:pearson"], n_splits=50, rng=0)
    >>> rc.to_frame()[["level", "method", "rc", "rank"]].round(3)
        level   method     rc  rank
    0  system  pearson  0.487   1.0
    1  global  pearson  0.067   2.0
    """
    human = human_column(dataset, human)
    measures = check_measures(measures, levels=levels, methods=methods)
    average = check_average(average)
    n_splits = check_int(n_splits, "n_splits")
    check_n_jobs(n_jobs)
    M = len(dataset.inputs)
    if M < 4:
        raise ParameterError(
            f"ranking consistency splits the inputs in halves; the dataset has {M} input(s), "
            "at least 4 are needed"
        )
    metrics = metric_columns(
        dataset, metrics, distinct=True, minimum=3, what="ranking consistency", suffix=" to rank"
    )
    if any(lv == "system" for lv, _ in measures):
        _sys.note_ignored(dataset, "ranking_consistency")
    budget = _rs.memory_budget(memory_budget)
    ss, tag = _rs.seed_sequence(rng)
    d1, d2 = half_splits(_rs.named_generator(ss, "ranking-consistency", "splits"), n_splits, M)
    z = np.asarray(dataset.scores(human), float)
    def signature(level=None, method=None, n_measures=None):
        return make_signature(
            human=human,
            level=level,
            method=method,
            avg=average,
            nan="pairwise",
            seed=tag,
            splits=n_splits,
            measures=n_measures,
            metrics=len(metrics),
            analysis="ranking-consistency",
        )

    sig = signature(n_measures=len(measures))
    ckpt = _checkpoint(checkpoint, "ranking_consistency", dataset, human, metrics, measures, sig, rng)
    arrays = {m: np.asarray(dataset.scores(m), float) for m in metrics}

    def work(metric):
        return _rc_metric(arrays[metric], z, d1, d2, measures, average, budget)

    res = run_units(
        work, metrics, n_jobs=n_jobs, progress=progress, checkpoint=ckpt, dask=dask,
        names=[f"metric\x1f{m}" for m in metrics],
    )
    half = np.stack(res, axis=-1)  # (n_measures, 2, T, K)
    # statistics equal to RC_TIE_DECIMALS decimals are tied: averaged
    # correlations that are mathematically equal may differ in the last bits
    snapped = np.round(half, RC_TIE_DECIMALS)
    kendall = get_coefficient("kendall_b").batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        taus = np.stack(
            [
                kendall(snapped[k, 0][:, None, :], snapped[k, 1][:, None, :])[:, 0]
                for k in range(len(measures))
            ]
        )
        finite = np.isfinite(taus)
        cnt = finite.sum(axis=1)
        rc = _exact.nanmean(taus, axis=1)  # correctly rounded: measures are ranked by rc
        sd = np.array([np.std(t[np.isfinite(t)], ddof=1) if np.isfinite(t).sum() > 1 else np.nan for t in taus])
        se = sd / np.sqrt(np.maximum(cnt, 1))
    n_nan = (~finite).sum(axis=1)
    if n_nan.any():
        bad = [f"{_measure_label(*measures[k])} ({n_nan[k]})" for k in np.flatnonzero(n_nan)]
        warnings.warn(
            f"some splits have no ranking correlation (fewer than 2 metrics with a defined "
            f"statistic, or constant) and are left out of RC: {', '.join(bad)}",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    return RankingConsistency(
        human=human,
        measures=tuple(measures),
        metrics=tuple(metrics),
        n_splits=n_splits,
        rc=rc,
        se=se,
        rank=_rank_low_first(rc, higher_is_better=True),
        n_nan=n_nan.astype(int),
        signature=sig,
        measure_signatures=tuple(signature(lv, m) for lv, m in measures),
        average=average,
        taus=taus,
        half_statistics=half,
    )


def measure_table(dp=None, rc=None) -> pd.DataFrame:
    """The paper's Tables 2 and 3 side by side: one row per measure with
    ``level, method`` and, when given, ``dp, dp_rank`` and ``rc, rc_se,
    rc_rank``.  Both results must evaluate the same measures."""
    if dp is None and rc is None:
        raise ParameterError("measure_table needs dp=, rc= or both")
    if dp is not None and rc is not None and tuple(dp.measures) != tuple(rc.measures):
        raise ParameterError("dp and rc evaluate different measures")
    ms = (dp or rc).measures
    out = pd.DataFrame({"level": [lv for lv, _ in ms], "method": [m for _, m in ms]})
    if dp is not None:
        out["dp"] = dp.dp
        out["dp_rank"] = dp.rank
    if rc is not None:
        out["rc"] = rc.rc
        out["rc_se"] = rc.se
        out["rc_rank"] = rc.rank
    return out


__all__ = [
    "measure_table",
    "discriminative_power",
    "ranking_consistency",
    "DiscriminativePower",
    "RankingConsistency",
    "PAPER_MEASURES",
    "check_measures",
]
