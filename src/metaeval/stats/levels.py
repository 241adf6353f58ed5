"""Grouping levels: one wrapper that turns a batched coefficient into the four
levels of seed paper 000 (section 2), with the NaN policy.

With N systems and M inputs, scores are (N, M) matrices (batched: (B, N, M)):

``system``
    correlation of the N per-system mean scores.  The means are taken over
    the *matched* cells of each system: cells where both the metric and the
    human score are present (pairwise deletion), so both means describe the
    same inputs.
``input``
    per input, the correlation across the N systems; averaged over inputs
    (mt-metrics-eval ``item``, nlpstats ``input``, "summary level").
``item``
    per system, the correlation across the M inputs; averaged over systems
    (mt-metrics-eval ``sys`` grouping).
``global``
    one correlation over all N x M cells (mt-metrics-eval ``none``,
    nlpstats ``global``).

Averaging at ``input`` and ``item`` is ``macro`` (the plain mean over the
groups whose statistic is defined; the default, as in seed paper 000 and
nlpstats) or ``micro`` (a weighted mean: weights are the numbers of valid
items per group for the correlations, and the numbers of valid pairs per group
for the pair statistics ``kendall_23``, ``acc_23``, ``acc_eq``, which makes
micro-averaged accuracy the pooled share of correct pairs).

Bootstrap replicates and duplicated originals
---------------------------------------------
A bootstrap replicate (:func:`metaeval.stats.resampling.bootstrap_indices`)
may hold the same original system, input or cell several times.  Two copies
of one original form a pair that is tied in both the metric and the human
score (Txy); the pair statistics count such a pair as a correctly predicted
tie, so the replicates of ``acc_23``, ``kendall_23``, ``pairwise_accuracy``
and ``acc_eq`` are biased upward (on SummEval, coherence vs ROUGE-1 at input
level, most of the bootstrap distribution of acc_23 lay above the estimate
and the 95% interval excluded it).  The population statistic is defined over
pairs of *distinct* units, so pairs formed by one original drawn twice are
not pairs of the population and must not count.  With multiplicities c_k of
the valid originals k among a group's items there are

    D = sum_k C(c_k, 2)

such pairs (:func:`metaeval.stats.resampling.duplicate_pairs`); every one
is in Txy.  Passing ``dup_pairs`` (B, G) removes them:

    Txy' = Txy - D,  N' = N - D,
    acc_23 = (C + Txy') / N',  tau_23 = (C + Txy' - D_disc - Tx - Ty) / N'

(D_disc: discordant pairs), and micro weights use N'.  Kendall's tau-b is
unaffected: its numerator C - D_disc has no ties and its denominator
sqrt((N - Tx - Txy)(N - Ty - Txy)) keeps N - Txy = N' - Txy'; Pearson,
Spearman and tau-c are not pair counts and are left as they are.  For
``acc_eq`` every duplicate pair has |dx| = 0, so it is a metric tie at any
threshold and counts in every group accuracy of the sweep; with N_g pairs
in group g and weight w_g, the corrected average at threshold t,

    sum_g w_g (correct_g(t) - D_g) / (N_g - D_g),

equals the sweep of the weights w_g N_g / (N_g - D_g) minus the constant
sum_g w_g D_g / (N_g - D_g), so the same kernel, with those weights, finds
the threshold, and the constant is subtracted from its maximum.  A group (or
replicate) with no non-duplicate pair is undefined (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _choices
from ..errors import ParameterError, ResourceError
from ._columns import C
from .exact import means as exact_means
from .coefficients import TXY, get_coefficient, kendall_from_stats, kendall_stats, kernels

LEVELS = _choices.LEVELS
AVERAGES = _choices.AVERAGES
# Pair statistics whose bootstrap replicates drop the pairs formed by one
# original drawn twice (``dup_pairs``), with their Kendall-family variant.
DUP_VARIANTS = {"kendall_23": "23", "acc_23": "acc23", "pairwise_accuracy": "acc23"}

# Names other tools use: one table with the command line's (metaeval._choices, importable
# without numpy).  Unambiguous ones map to ours; ambiguous ones are refused with an explanation.
_ALIASES = _choices.LEVEL_ALIASES
_AMBIGUOUS = _choices.AMBIGUOUS_LEVELS


def check_level(level: str) -> str:
    """Validate a level name, resolving unambiguous aliases."""
    if level in LEVELS:
        return level
    if isinstance(level, str):
        if level in _AMBIGUOUS:
            raise ParameterError(
                f"level={level!r} is ambiguous: {_AMBIGUOUS[level]}; choose one of "
                f"{', '.join(LEVELS)}"
            )
        if level in _ALIASES:
            return _ALIASES[level]
    raise ParameterError(
        f"level={level!r} is not a grouping level; choose one of {', '.join(LEVELS)} "
        "(note: mt-metrics-eval's 'item' grouping is our 'input'; our 'item' "
        "correlates across inputs within each system)"
    )


def check_average(average: str) -> str:
    if average not in AVERAGES:
        raise ParameterError(f"average={average!r}; choose one of {', '.join(AVERAGES)}")
    return average


def _matched_mean(a, valid, cnt=None, *, fast=True):
    """Row means over ``valid`` cells, correctly rounded (:mod:`metaeval.stats.exact`):
    independent of the cells' order, equal for equal exact means (on a
    rational grid such as means of 3 raters: equal for equal rational means),
    never in the reverse of the exact order, and without overflow near 1e308.
    The grid decision is taken per (N, M) score matrix of a batch.  ``cnt``
    (the valid cells per row) is accepted for the callers' convenience and
    not needed."""
    return exact_means(a, valid, unit_ndim=2, fast=fast)


def given_system_matrices(arrays, given):
    """(N, 1) system-score matrices for one ``system``-level unit.

    Parameters
    ----------
    arrays : list of ndarray, shape (N, M)
        The cell scores of the unit's columns (metric(s), human).
    given : list of ndarray (N,) or None
        Each column's given system scores (corpus BLEU, a ``.sys.score``
        file), or None.

    Returns
    -------
    list of ndarray, shape (N, 1)
        Given scores as they are; for the other columns the mean over the
        cells where *all* the other columns are present (the matched-means
        rule of the ``system`` level among the columns that have cells), NaN
        for a system without such a cell.  The ``system`` level of an (N, 1)
        matrix is its single column, so :func:`arrange` then correlates
        exactly these numbers (a system is used where every column has one).
    """
    arrays = [np.asarray(a, float) for a in arrays]
    out = [None] * len(arrays)
    mean_idx = [k for k, g in enumerate(given) if g is None]
    if mean_idx:
        valid = np.logical_and.reduce([np.isfinite(arrays[k]) for k in mean_idx])
        cnt = valid.sum(-1)
        for k in mean_idx:
            out[k] = _matched_mean(arrays[k], valid, cnt)[:, None]
    for k, g in enumerate(given):
        if g is not None:
            out[k] = np.asarray(g, float).reshape(-1, 1)
    return out


def match_system_shapes(a, b):
    """Two score matrices for a ``system``-level pair, one of which may already
    be (N, 1) given system scores: the other is then reduced to the means of
    its own cells (NaN-ignoring); two matrices of the same shape are returned
    unchanged."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if a.shape == b.shape:
        return a, b
    if a.shape[-1] != 1:
        a = given_system_matrices([a], [None])[0]
    if b.shape[-1] != 1:
        b = given_system_matrices([b], [None])[0]
    return a, b


def arrange(x, y, level):
    """Arrange (B, N, M) score batches into (B, G, n) groups for ``level``.

    ``x`` and ``y`` may have different batch sizes (1 broadcasts); a 2-D
    input gets a batch axis of 1.  They are *not* broadcast against each
    other (except for the matched system means), so a human score shared by
    a batch stays a batch of one and is ranked or preprocessed once.
    """
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if x.ndim == 2:
        x = x[None]
    if y.ndim == 2:
        y = y[None]
    if level == "system":
        x, y = np.broadcast_arrays(x, y)
        valid = np.isfinite(x) & np.isfinite(y)
        cnt = valid.sum(-1)
        return _matched_mean(x, valid, cnt)[:, None, :], _matched_mean(y, valid, cnt)[:, None, :]
    if level == "input":
        return x.transpose(0, 2, 1), y.transpose(0, 2, 1)
    if level == "item":
        return x, y
    if level == "global":
        return x.reshape(x.shape[0], 1, -1), y.reshape(y.shape[0], 1, -1)
    raise ParameterError(f"level={level!r}")  # pragma: no cover - validated


@dataclass
class LevelValues:
    """Batched statistic at one level.

    value : (B,) the level statistic (averaged over groups where applicable).
    group : (B, G) per-group statistics (for ``acc_eq``: acc_23 of each
        group at the calibrated threshold).
    n_valid : (B, G) valid items per group.
    epsilon : (B,) calibrated tie threshold (``acc_eq`` only) else None.
    weight : (B, G) each group's weight in ``value`` (zero where the group
        statistic is undefined); None for ``acc_eq``.
    """

    value: np.ndarray
    group: np.ndarray
    n_valid: np.ndarray
    epsilon: np.ndarray | None = None
    weight: np.ndarray | None = None


def _weights(group, nv, pair_weighted, average, pairs=None):
    defined = np.isfinite(group)
    if average == "macro":
        w = defined.astype(float)
    else:
        if pair_weighted and pairs is None:
            pairs = nv * (nv - 1) / 2.0
        w = np.where(defined, pairs if pair_weighted else nv, 0.0)
    return w


def _aggregate(group, w):
    tot = w.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        val = (np.where(w > 0, group, 0.0) * w).sum(-1) / tot
    return np.where(tot > 0, val, np.nan)


def level_values(
    x, y, level, method, *, average="macro", fast=True, detail=True, dup_pairs=None
) -> LevelValues:
    """The statistic of ``method`` at ``level`` for every batch item.

    Parameters
    ----------
    x, y : ndarray, shape (B, N, M) or (N, M)
        Metric and human scores (broadcastable).
    level, method, average : str
        Validated names.
    fast : bool
        Use the numba kernels (True) or their NumPy twins.
    detail : bool
        For ``acc_eq``, also compute each group's acc_23 at the calibrated
        threshold (``group``); resampling loops pass False and get NaN there.
    dup_pairs : ndarray (B, G), optional
        Pairs formed by one original drawn twice in a bootstrap replicate
        (:func:`metaeval.stats.resampling.duplicate_pairs`); the pair
        statistics leave them out (module docstring).  Ignored by the other
        methods.
    """
    xg, yg = arrange(x, y, level)
    return grouped_values(
        xg, yg, method, average=average, fast=fast, detail=detail, dup_pairs=dup_pairs
    )


def _out_of_memory(method, shape, exc, need=None):
    B, G, n = shape
    size = f" (about {need / 2**20:.0f} MiB of working memory)" if need else ""
    return ResourceError(
        f"method={method!r}: not enough memory for {B} batch item(s) of {G} group(s) of up to "
        f"{n} cells{size}; use fewer resamples (--n-resamples), a level with smaller groups "
        f"(--level), or fewer metrics at once ({type(exc).__name__}: {exc})"
    )


def grouped_values(xg, yg, method, *, average="macro", fast=True, detail=True,
                   dup_pairs=None) -> LevelValues:
    """The statistic of ``method`` on already arranged (B, G, n) groups.

    Parameters
    ----------
    xg, yg : ndarray, shape (B, G, n)
        Metric and human scores of each group (``yg`` may have a batch of one).
    method, average : str
        Validated names.
    fast : bool
        Use the numba kernels (True) or their NumPy twins.
    detail : bool
        For ``acc_eq``, also compute each group's acc_23 at the calibrated
        threshold.
    dup_pairs : ndarray, shape (B, G), optional
        Pairs of each group formed by two copies of the same original cell (a
        bootstrap resample drawing a cell twice).  They are tied in both
        scores and are left out of the group's pairs by the pair statistics
        (``acc_eq`` and the tie-counting variants of ``DUP_VARIANTS``), so a
        resample is scored on the pairs of distinct cells; micro weights use
        the remaining pair counts.  Ignored by the other methods.  Default:
        none.

    Raises
    ------
    ResourceError
        When a kernel's working memory cannot be allocated.
    """
    try:
        return _grouped_values(xg, yg, method, average, fast, detail, dup_pairs)
    except MemoryError as exc:
        if isinstance(exc, ResourceError):
            raise
        raise _out_of_memory(method, np.shape(xg), exc) from exc


def _grouped_values(xg, yg, method, average, fast, detail, dup_pairs):
    coef = get_coefficient(method)
    xg, yg = np.asarray(xg, float), np.asarray(yg, float)
    nv = (np.isfinite(xg) & np.isfinite(yg)).sum(-1)
    if coef.batch is not None:
        pairs = None
        if dup_pairs is not None and method in DUP_VARIANTS:
            s = np.array(kendall_stats(xg, yg, 0.0, fast=fast))
            s[..., TXY] -= dup_pairs
            group = kendall_from_stats(s, DUP_VARIANTS[method])
            pairs = nv * (nv - 1) / 2.0 - dup_pairs
        else:
            # unbroadcast inputs: a human batch of one is ranked/used once
            group = coef.batch(xg, yg, fast=fast)
        w = _weights(group, nv, coef.pair_weighted, average, pairs)
        return LevelValues(_aggregate(group, w), group, nv, weight=w)
    # acc_eq: one threshold shared by all groups
    B = max(xg.shape[0], yg.shape[0])
    if dup_pairs is None:
        dup = np.zeros((B,) + nv.shape[1:])
    else:
        dup = np.broadcast_to(np.asarray(dup_pairs, float), (B,) + nv.shape[1:])
    npairs = np.maximum(nv * (nv - 1) / 2.0 - dup, 0.0)
    has_pair = npairs > 0
    if average == "macro":
        w = has_pair / np.maximum(has_pair.sum(-1, keepdims=True), 1)
    else:
        pairs = np.where(has_pair, npairs, 0.0)
        w = pairs / np.maximum(pairs.sum(-1, keepdims=True), 1)
    if xg.shape[0] != B:
        xg = np.broadcast_to(xg, (B,) + xg.shape[1:])
    k = kernels(fast)
    best = k.tie_calibration_best(xg, yg, w, None if dup_pairs is None else dup)
    any_pair = has_pair.any(-1)
    eps = np.where(any_pair, best[:, 0], np.nan)
    value = np.where(any_pair, best[:, 1], np.nan)
    group = np.full(npairs.shape, np.nan)
    yb = yg.shape[0] != 1
    for b in range(B if detail else 0):
        if not any_pair[b]:
            continue
        s = kernels(fast, xg[0].size).kendall_stats(
            np.ascontiguousarray(xg[b : b + 1]),
            np.ascontiguousarray(yg[b : b + 1] if yb else yg),
            float(eps[b]),
        )
        # acc_23 at epsilon; duplicate pairs (tied in both) are left out
        correct = s[0, :, C] + s[0, :, TXY] - dup[b]
        with np.errstate(invalid="ignore", divide="ignore"):
            group[b] = np.where(has_pair[b], correct / npairs[b], np.nan)
    return LevelValues(value, group, nv, eps)
