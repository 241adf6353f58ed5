r"""Local metric accuracy across contexts (seed paper 004).

Paper 004 ("Contextual Metric Meta-Evaluation by Measuring Local Metric
Accuracy") asks whether a metric's ability to order two outputs of the same
input depends on the *context* the outputs come from (a system, a domain, a
speaker, a quality band, ...):

=====================================  ==================================================
:func:`local_pairs`                    the ordered pairs (y, y'): an output and its
                                       perturbed version, or two outputs of one input
                                       ordered by humans; each with its context
:func:`local_accuracy`                 pointwise accuracy per input (Eq. 1) and local
                                       accuracy per context (Eq. 2), ties apart, CIs
:func:`context_chi2`                   H1: chi-square test of independence of context
                                       and (correct, incorrect), per metric (section 4.3)
:func:`context_tau`                    H2: weighted Kendall tau (hyperbolic weights
                                       1/(r+1)) between the metric rankings of every
                                       pair of contexts, permutation p-values, clusters
:func:`weighted_tau`                   the weighted tau of two vectors
:func:`plot_local_accuracy`            accuracy per metric across contexts (Figs. 1a-3a)
:func:`plot_context_tau`               the weighted-tau heatmap (Figs. 1b-3b)
=====================================  ==================================================

A *context category* (``category`` in results; paper 004 section 4.1 calls
SYSTEM, DOMAIN, SPEAKER ID, ... categories) is any categorical column of a
:class:`~metaeval.Dataset` (``"system"``, ``"input"`` or a column of its
``contexts`` table); its labels are the *contexts*.  The analyses take the
pairs built once by :func:`local_pairs` and return frozen results of raw
floats with ``to_frame()`` (tidy; columns listed in each class docstring),
``to_dict()`` and a ``signature``.  Degenerate cases give NaN, a typed
warning and a count in the result.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats as _st

from . import _choices
from ._parallel import check_n_jobs, run_units
from ._signature import make_signature
from ._stacklevel import user_stacklevel
from .data import accepts_frames
from ._signature import fmt_number
from ._vocab import (
    BINOMIAL_CIS,
    CORRECTIONS,
    check_choice,
    check_int,
    check_number,
    check_probability,
    metric_columns,
)
from .data import Dataset
from ._results import _ARR, _Collection, _Result, _Table
from .direction import resolve_lower_is_better
from .errors import (
    ConstantInputWarning,
    DataError,
    ParameterError,
    SmallExpectedCountWarning,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
)
from .stats import wtau as _wtau
from .stats.wtau import WTAU_VARIANTS, check_variant, rank_weights, tau_batch, weighted_tau
from .stats import resampling as _rs
from .stats.inference import resampling_pvalue, use_kernels
from .stats.multitest import adjust_pvalues

#: How a pair of outputs that both belong to an input is assigned a context
#: when its two outputs carry different labels (human-ordered pairs only).
PAIR_CONTEXTS = ("better", "worse", "within")
#: Averages of :func:`local_accuracy` and :func:`context_tau`, the correlations' names
#: (:data:`metaeval._choices.AVERAGES`): ``macro`` (each input weighs the same) is Eq. 2 of
#: paper 004, ``micro`` (each weighs by its pairs) the pooled share of the pairs.
AVERAGES = _choices.AVERAGES
#: The names these averages had before they took the correlations' names; still accepted.
AVERAGE_ALIASES = _choices.LOCAL_AVERAGE_ALIASES
#: Handling of pairs the metric scores equally.
TIES = ("incorrect", "exclude")
#: p-values of :func:`context_chi2`.
CHI2_TESTS = ("auto", "asymptotic", "permutation")


#: Expected count below which the asymptotic chi-square is considered
#: unreliable (Cochran's rule).
MIN_EXPECTED = 5.0

# the arrays-only parts (outcome codes, the accuracy interval, tolerance-tied ranks, the
# chi-square statistic, the context clustering) live in metaeval.stats.localacc
from .stats.localacc import (  # noqa: E402
    ACCURACY_TIE_TOL,  # noqa: F401  (public here)
    CORRECT,
    INCORRECT,  # noqa: F401  (public here)
    MISSING,
    TIE,
    accuracies as _accuracies,
    accuracy_interval as _interval,
    chi2_stat as _chi2_stat,
    cluster_contexts as _cluster,
    mean_tau as _mean_tau,
    outcome as _outcome,
    snap_ties as _snap,
    tied_ranks as _ranks,
)


# --------------------------------------------------------------------------
# helpers

# the pairs, the input of the local analyses, are a data type of metaeval.data
from .data import LocalPairs  # noqa: E402


def _label(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return None
        return str(int(v)) if float(v).is_integer() else str(float(v))
    s = str(v)
    return s if s != "" else None


def _label_array(a) -> np.ndarray:
    a = np.asarray(a, dtype=object)
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(a.reshape(-1)):
        flat[i] = _label(v)
    return out


def _check_pairs(pairs, fn: str) -> LocalPairs:
    if not isinstance(pairs, LocalPairs):
        raise ParameterError(
            f"{fn}() takes the pairs built by metaeval.local.local_pairs(), got "
            f"{type(pairs).__name__}; e.g. pairs = local_pairs(original, perturbed, "
            "context='system') or local_pairs(dataset, human='overall', context='domain')"
        )
    return pairs


def _score_arrays(x, name: str) -> tuple[dict[str, np.ndarray], Dataset | None]:
    if isinstance(x, Dataset):
        return {m: np.asarray(x.scores(m), float) for m in x.metrics}, x
    if isinstance(x, Mapping):
        out = {}
        for k, v in x.items():
            a = np.asarray(v, float)
            out[str(k)] = a[None, :] if a.ndim == 1 else a
        return out, None
    try:
        a = np.asarray(x, float)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{name} must be a Dataset, a mapping of metric name to score array, or one "
            f"score array; got {type(x).__name__}"
        ) from None
    return {"metric": a[None, :] if a.ndim == 1 else a}, None



def _context_labels(
    context, ds: Dataset | None, shape, what: str
) -> tuple[str, np.ndarray]:
    """(category name, (N, M) object array of str/None labels)."""
    if isinstance(context, str):
        if ds is None:
            raise ParameterError(
                f"context={context!r} names a context column, which needs {what} to be a "
                "Dataset; with score arrays pass the context labels themselves (an array "
                "of the scores' shape)"
            )
        if context not in ds.context_names:
            raise DataError(
                f"context={context!r} is not a context of this dataset; available: "
                f"{', '.join(ds.context_names)} (add context columns with the Dataset's "
                "contexts table, e.g. Dataset.from_frame(df, ..., contexts=['speaker']))"
            )
        return context, ds.context(context)
    if context is None:
        raise ParameterError(
            "context= is required: a context column of the Dataset ('system', 'input' or "
            "a column of its contexts table) or an array of labels"
        )
    labels = _label_array(context)
    if labels.ndim == 1:
        labels = labels[None, :]
    if labels.shape != tuple(shape):
        raise DataError(
            f"context labels have shape {np.shape(context)} but the scores have shape "
            f"{tuple(shape)}; give one label per score cell"
        )
    return "context", labels


def _factorize_used(
    labels: np.ndarray, used: np.ndarray
) -> tuple[tuple[str, ...], np.ndarray]:
    """Codes of ``labels`` (-1 for None); the contexts are the labels of the
    ``used`` cells, in order of first appearance in a row-major scan."""
    flat = labels.reshape(-1)
    codes, uniques = pd.factorize(pd.Series(flat, dtype=object), use_na_sentinel=True)
    codes = codes.reshape(labels.shape)
    if len(uniques) == 0:
        return (), np.full(labels.shape, -1, np.int64)
    keep = np.zeros(len(uniques), bool)
    u = codes[used & (codes >= 0)]
    keep[u] = True
    remap = np.full(len(uniques), -1, np.int64)
    remap[keep] = np.arange(int(keep.sum()))
    out = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    return tuple(str(v) for v in np.asarray(uniques, dtype=object)[keep]), out


# --------------------------------------------------------------------------
# pairs


@accepts_frames(
    "original",
    "perturbed",
    human="human",
    accepts=(
        Mapping,
        np.ndarray,
        list,
        tuple,
        lambda o: isinstance(getattr(o, "original", None), Dataset),  # PerturbedScores
    ),
    accepts_text="a mapping of metric name to score array, one score array, or PerturbedScores",
)
def local_pairs(
    original,
    perturbed=None,
    *,
    context,
    human: str | None = None,
    metrics=None,
    lower_is_better=None,
    pair_context: str | None = None,
    atol: float = 0.0,
    human_atol: float = 0.0,
    category: str | None = None,
) -> LocalPairs:
    r"""Ordered output pairs (y, y') with their contexts, for local metric accuracy.

    Paper 004, section 3: for an input x, :math:`Q_x` is a set of pairs
    :math:`\langle y, y' \rangle` in which y is known to be better than y'.
    Two sources of such pairs:

    * **perturbation** (``perturbed=`` given; the paper's setting, section
      4.2): every system x input cell gives the pair (its output y, its
      degraded version y'), scored by each metric in ``original`` and
      ``perturbed``.
    * **human order** (``human=`` given): for each input, every two systems
      whose outputs both have a human score form a pair, y being the output
      humans scored higher; pairs humans scored equally
      (``|h - h'| <= human_atol``) are left out and counted
      (``n_human_ties``).  This needs no perturbation.

    A metric is *correct* on a pair when it scores y better than y':
    ``metric(y) - metric(y') > atol`` (higher is better) or
    ``< -atol`` for the metrics in ``lower_is_better``; it *ties* when
    ``|metric(y) - metric(y')| <= atol``; a NaN score makes the pair
    *missing* for that metric.

    The context of a pair is the context label of y's cell (the output, not
    its perturbed copy).  For human-ordered pairs the two outputs can carry
    different labels when the context varies across systems (``"system"``,
    or a per-output label such as a quality band); ``pair_context`` decides:
    ``"better"`` (default) takes the label of y (the human-preferred output,
    as a perturbation pair takes the label of its original), ``"worse"`` that
    of y', ``"within"`` keeps only pairs whose two outputs share the label
    (others are counted in ``n_cross_context``).  For contexts that are a
    property of the input (``"input"``, a speaker or domain keyed by input)
    the three coincide.

    Parameters
    ----------
    original : Dataset, mapping, array_like or PerturbedScores
        Perturbation pairs: the metric scores of the original outputs (a
        Dataset's metric columns, a mapping of metric name to ``(N, M)`` or
        1-D array, or one array named ``"metric"``), or the result of
        :func:`metaeval.perturb.score_perturbed` alone (its ``original`` and
        ``perturbed`` datasets and, unless given, its ``lower_is_better``).
        Human-ordered pairs: the data holding the ``human`` column and the
        metrics.
    perturbed : Dataset, mapping or array_like, optional
        The metric scores of the perturbed outputs, in the layout of
        ``original`` (e.g. from :func:`metaeval.perturb.score_perturbed`);
        NaN where a perturbation was skipped.
    context : str or array_like
        The context category: a context of the Dataset (``"system"``,
        ``"input"`` or a column of its contexts table, see
        :meth:`~metaeval.Dataset.context`), or an array of labels with the
        scores' shape.  Cells whose label is unknown (None) are left out and
        counted (``n_unknown_context``).
    human : str, optional
        The human column ordering the pairs (human-ordered pairs).
    metrics : str or list of str, optional
        Default: every metric of ``perturbed`` (perturbation pairs; each must
        be in ``original``) or of ``original`` (human-ordered pairs).
    lower_is_better : str or list of str, optional
        Metrics for which a lower score is better (WER, CER, TER, ...); ``()``
        or ``"none"`` for none.  Default (``None``): the rule of
        :mod:`metaeval.direction` (columns named like a lower-is-better text
        metric, announced with an ``AssumedDirectionWarning``), which the
        ``local`` command applies too; a ``score_perturbed`` result brings
        its adapters' own ``higher_is_better``.
    pair_context : {"better", "worse", "within"}, optional
        Human-ordered pairs whose two outputs have different context labels:
        the label of the better output counts (``"better"``, default), that
        of the worse one (``"worse"``), or such pairs are left out
        (``"within"``).
    atol : float
        Tie tolerance of the metric scores (default 0: exact equality).
    human_atol : float
        Tie tolerance of the human scores (human-ordered pairs).
    category : str, optional
        Name of the context category when ``context`` is an array of labels
        (default ``"context"``); e.g. ``"quality"`` for human scores binned
        with :func:`pandas.cut`.

    Returns
    -------
    LocalPairs

    Raises
    ------
    ParameterError, DataError
        Neither or both of ``perturbed`` and ``human``; unknown metrics,
        context or human column; shapes that differ; no pair at all.

    Examples
    --------
    >>> import numpy as np
    >>> orig = {"m": np.array([[3.0, 2.0], [5.0, 1.0]])}
    >>> pert = {"m": np.array([[1.0, 2.0], [4.0, 2.0]])}
    >>> pairs = local_pairs(orig, pert, context=[["a", "a"], ["b", "b"]])
    >>> pairs.contexts, pairs.outcome.tolist()
    (('a', 'b'), [[1, 0, 1, -1]])
    """
    atol = check_number(atol, "atol", lo=0)
    human_atol = check_number(human_atol, "human_atol", lo=0)
    if (
        perturbed is None
        and human is None
        and isinstance(getattr(original, "original", None), Dataset)
        and isinstance(getattr(original, "perturbed", None), Dataset)
    ):  # metaeval.perturb.PerturbedScores
        if lower_is_better is None:
            lower_is_better = tuple(getattr(original, "lower_is_better", ()))  # the adapters' own directions
        original, perturbed = original.original, original.perturbed
    if category is not None and (
        isinstance(context, str) or not isinstance(category, str)
    ):
        raise ParameterError(
            "category= names the context category when context= is an array of labels; "
            "with a context column its name is the category"
            if isinstance(context, str)
            else f"category={category!r} must be a string"
        )
    if perturbed is not None and human is not None:
        raise ParameterError(
            "give perturbed= (pairs of an output and its perturbed version) or human= "
            "(pairs of outputs ordered by human scores), not both"
        )
    if perturbed is None and human is None:
        raise ParameterError(
            "local_pairs needs the true order of the pairs: pass perturbed= (the metric "
            "scores of the perturbed outputs) or human= (a human score column)"
        )
    if perturbed is not None:
        if pair_context is not None:
            raise ParameterError(
                "pair_context applies to human-ordered pairs only: a perturbation pair "
                "takes the context of its original output"
            )
        pairs = _perturbation_pairs(
            original, perturbed, context, metrics, lower_is_better, atol
        )
    else:
        pair_context = "better" if pair_context is None else pair_context
        check_choice(pair_context, "pair_context", PAIR_CONTEXTS)
        pairs = _human_pairs(
            original,
            human,
            context,
            metrics,
            lower_is_better,
            pair_context,
            atol,
            human_atol,
        )
    if category is not None:
        pairs = replace(pairs, category=category)
    return pairs


def _labels_of(ds: Dataset | None, shape):
    n, m = shape
    if ds is not None:
        return tuple(ds.systems), tuple(ds.inputs)
    return tuple(f"s{i}" for i in range(n)), tuple(f"i{j}" for j in range(m))


def _perturbation_pairs(original, perturbed, context, metrics, lower_is_better, atol):
    orig, ods = _score_arrays(original, "original")
    pert, pds = _score_arrays(perturbed, "perturbed")
    if ods is not None and not isinstance(perturbed, (Dataset, Mapping)):
        raise ParameterError(
            "original is a Dataset: pass perturbed as a Dataset or a mapping of metric name "
            "to (N, M) array"
        )
    if (
        ods is not None
        and pds is not None
        and (ods.systems != pds.systems or ods.inputs != pds.inputs)
    ):
        raise DataError(
            "original and perturbed datasets must have the same systems and inputs in the "
            "same order (perturbed holds the scores of the perturbed version of each cell)"
        )
    missing = [m for m in pert if m not in orig]
    if metrics is None and missing:
        raise DataError(
            f"perturbed has metric(s) {', '.join(map(repr, missing))} that original lacks; "
            f"original has: {', '.join(orig)} (or choose metrics=)"
        )
    metrics = metric_columns(None, metrics, available=[m for m in pert if m in orig],
                             where="both original and perturbed", distinct=True)
    shape = orig[metrics[0]].shape
    for m in metrics:
        for what, a in (("original", orig[m]), ("perturbed", pert[m])):
            if a.ndim != 2 or a.shape != shape:
                raise DataError(
                    f"metric {m!r}: {what} scores have shape {a.shape}, expected {shape} "
                    "(the shape of the first metric's original scores)"
                )
    ds = ods if ods is not None else pds
    category, labels = _context_labels(context, ds, shape, "original")
    lower = resolve_lower_is_better(metrics, lower_is_better)
    O = np.stack([orig[m] for m in metrics])
    Pt = np.stack([pert[m] for m in metrics])
    with np.errstate(invalid="ignore"):
        d = O - Pt
    for k, m in enumerate(metrics):
        if m in lower:
            d[k] = -d[k]
    code = _outcome(d, atol)  # (K, N, M)
    usable = (code != MISSING).any(axis=0)
    known = (
        np.vectorize(lambda v: v is not None, otypes=[bool])(labels)
        if labels.size
        else (np.zeros(labels.shape, bool))
    )
    keep = usable & known
    contexts, ccode = _factorize_used(labels, keep)
    if not keep.any():
        raise DataError(
            "no usable pair: every cell lacks an original or perturbed score for every "
            f"metric, or has no context label ({int(usable.sum())} usable cells, "
            f"{int((usable & ~known).sum())} of them without a label)"
        )

    sys_idx, inp_idx = np.nonzero(keep)  # row-major
    systems, inputs = _labels_of(ds, shape)
    return LocalPairs(
        source="perturbation",
        category=category,
        metrics=tuple(metrics),
        contexts=contexts,
        systems=systems,
        inputs=inputs,
        human=None,
        lower_is_better=lower,
        pair_context=None,
        atol=atol,
        human_atol=0.0,
        n_skipped=int((~usable).sum()),
        n_unknown_context=int((usable & ~known).sum()),
        n_human_ties=0,
        n_cross_context=0,
        outcome=np.ascontiguousarray(code[:, sys_idx, inp_idx]),
        context=ccode[sys_idx, inp_idx].astype(np.int64),
        input=inp_idx.astype(np.int64),
        system=sys_idx.astype(np.int64),
        other=sys_idx.astype(np.int64),
    )


def _human_pairs(
    data, human, context, metrics, lower_is_better, pair_context, atol, human_atol
):
    if not isinstance(human, str):
        raise ParameterError(
            f"human={human!r} must be the name of one human score column"
        )
    if isinstance(data, Dataset):
        ds = data
        if human not in ds.human:
            hint = " (it is a metric column)" if human in ds.metrics else ""
            avail = ", ".join(ds.human) or "none (the dataset was built with human=[])"
            raise DataError(
                f"human={human!r} is not a human score column of this dataset{hint}; "
                f"available: {avail}"
            )
        H = np.asarray(ds.scores(human), float)
        metrics = metric_columns(None, metrics, available=list(ds.metrics),
                                 where="the dataset's metrics", distinct=True)
        S = {m: np.asarray(ds.scores(m), float) for m in metrics}
    elif isinstance(data, Mapping):
        ds = None
        arrays, _ = _score_arrays(data, "original")
        if human not in arrays:
            raise DataError(
                f"human column {human!r} not in the data; columns: {', '.join(arrays)}"
            )
        H = arrays[human]
        metrics = metric_columns(None, metrics, available=[k for k in arrays if k != human],
                                 where="the data", distinct=True)
        S = {m: arrays[m] for m in metrics}
    else:
        raise ParameterError(
            "human-ordered pairs need a Dataset or a mapping of column name to (N, M) array "
            f"holding the human column and the metrics; got {type(data).__name__}"
        )
    shape = H.shape
    if H.ndim != 2:
        raise DataError(
            f"human scores have shape {shape}; expected (N systems, M inputs)"
        )
    for m in metrics:
        if S[m].shape != shape:
            raise DataError(
                f"metric {m!r} has shape {S[m].shape} but the human scores {shape}"
            )
    N, M = shape
    if N < 2:
        raise DataError(
            "human-ordered pairs compare the outputs of two systems for the same input; the "
            f"data have {N} system(s)"
        )
    category, labels = _context_labels(context, ds, shape, "the data")
    lower = resolve_lower_is_better(metrics, lower_is_better)
    X = np.stack([(-S[m] if m in lower else S[m]) for m in metrics])  # (K, N, M)
    known = np.vectorize(lambda v: v is not None, otypes=[bool])(labels)
    # context codes over the whole label array; pairs keep the used ones below
    contexts_all, ccode_all = _factorize_used(labels, known)
    chunks = []
    n_ties = n_skipped = n_unknown = n_cross = 0
    for i in range(N - 1):
        j = np.arange(i + 1, N)
        with np.errstate(invalid="ignore"):
            dh = H[i][None, :] - H[j]  # (nj, M)
        ok = np.isfinite(dh)
        tie = ok & (np.abs(np.where(ok, dh, 0.0)) <= human_atol)
        n_ties += int(tie.sum())
        ordered = ok & ~tie
        sgn = np.sign(np.where(ordered, dh, 0.0))
        with np.errstate(invalid="ignore"):
            dm = (X[:, i][:, None, :] - X[:, j]) * sgn[None]
        code = _outcome(np.where(ordered[None], dm, np.nan), atol)
        usable = (code != MISSING).any(axis=0) & ordered
        n_skipped += int((~ok).sum() + (ordered & ~usable).sum())
        ii = np.broadcast_to(np.int64(i), dh.shape)
        jj = np.broadcast_to(j[:, None], dh.shape)
        better = np.where(dh > 0, ii, jj)
        worse = np.where(dh > 0, jj, ii)
        cols = np.broadcast_to(np.arange(M)[None, :], dh.shape)
        cb = ccode_all[better, cols]
        cw = ccode_all[worse, cols]
        if pair_context == "better":
            pc = cb
        elif pair_context == "worse":
            pc = cw
        else:
            both = (cb >= 0) & (cw >= 0)
            cross = usable & both & (cb != cw)
            n_cross += int(cross.sum())
            pc = np.where(cross, -2, np.where(both, cb, -1))
        unknown = usable & (pc == -1)
        n_unknown += int(unknown.sum())
        sel = usable & (pc >= 0)
        if sel.any():
            r, c = np.nonzero(sel)
            chunks.append((code[:, r, c], pc[r, c], c, better[r, c], worse[r, c]))
    if not chunks:
        raise DataError(
            f"no human-ordered pair: {n_ties} output pairs tied in {human!r}, {n_skipped} "
            f"lacked a score, {n_unknown} had no context label, {n_cross} spanned two "
            f"contexts (pair_context={pair_context!r})"
            + (
                "; with a context that differs between the two outputs of every pair (such "
                "as 'system'), use pair_context='better' or 'worse'"
                if pair_context == "within" and n_cross
                else ""
            )
        )
    code = np.concatenate([c[0] for c in chunks], axis=1)
    pc = np.concatenate([c[1] for c in chunks])
    inp = np.concatenate([c[2] for c in chunks])
    bet = np.concatenate([c[3] for c in chunks])
    wor = np.concatenate([c[4] for c in chunks])
    # keep the contexts that have pairs, in first-appearance order
    used = np.zeros(len(contexts_all), bool)
    used[pc] = True
    remap = np.full(len(contexts_all), -1, np.int64)
    remap[used] = np.arange(int(used.sum()))
    contexts = tuple(c for c, u in zip(contexts_all, used) if u)
    systems, inputs = _labels_of(ds, shape)
    return LocalPairs(
        source="human",
        category=category,
        metrics=tuple(metrics),
        contexts=contexts,
        systems=systems,
        inputs=inputs,
        human=human,
        lower_is_better=lower,
        pair_context=pair_context,
        atol=atol,
        human_atol=human_atol,
        n_skipped=n_skipped,
        n_unknown_context=n_unknown,
        n_human_ties=n_ties,
        n_cross_context=n_cross,
        outcome=np.ascontiguousarray(code),
        context=remap[pc].astype(np.int64),
        input=inp.astype(np.int64),
        system=bet.astype(np.int64),
        other=wor.astype(np.int64),
    )


# --------------------------------------------------------------------------
# blocks: the pairs of one input in one context (Q_x within a context)


@dataclass(frozen=True)
class _Blocks:
    context: np.ndarray  # (nb,) sorted
    input: np.ndarray  # (nb,)
    valid: np.ndarray  # (K, nb) int: pairs with both scores
    correct: np.ndarray  # (K, nb)
    ties: np.ndarray  # (K, nb)
    bounds: np.ndarray  # (C + 1,) block offsets of the contexts


def _blocks(pairs: LocalPairs) -> _Blocks:
    M = max(1, len(pairs.inputs))
    key = pairs.context * M + pairs.input
    ukey, block = np.unique(key, return_inverse=True)
    nb = ukey.size
    K = len(pairs.metrics)
    valid = np.empty((K, nb), np.int64)
    correct = np.empty((K, nb), np.int64)
    ties = np.empty((K, nb), np.int64)
    for k in range(K):
        o = pairs.outcome[k]
        valid[k] = np.bincount(block[o != MISSING], minlength=nb)
        correct[k] = np.bincount(block[o == CORRECT], minlength=nb)
        ties[k] = np.bincount(block[o == TIE], minlength=nb)
    bctx = ukey // M
    bounds = np.searchsorted(bctx, np.arange(len(pairs.contexts) + 1))
    return _Blocks(bctx, ukey % M, valid, correct, ties, bounds.astype(np.int64))


def _block_values(b: _Blocks, average: str, ties: str):
    """(num, den) per metric x block: the context accuracy is sum(num) / sum(den)."""
    den_pairs = b.valid - (b.ties if ties == "exclude" else 0)
    if average == "micro":
        return b.correct.astype(float), den_pairs.astype(float)
    defined = den_pairs > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(defined, b.correct / np.where(defined, den_pairs, 1), 0.0)
    return acc, defined.astype(float)


def _check_options(average, ties):
    """Check ``average`` and ``ties``; the canonical average (``input``/``pair`` -> ``macro``/``micro``)."""
    average = AVERAGE_ALIASES.get(average, average) if isinstance(average, str) else average
    check_choice(average, "average", AVERAGES)
    check_choice(ties, "ties", TIES)
    return average


# --------------------------------------------------------------------------
# local accuracy (Eq. 1-2)


@dataclass(frozen=True)
class LocalAccuracy(_Table):
    """Local accuracy of every metric in every context (paper 004, Eq. 1-2).

    Attributes
    ----------
    category, source, human : str
        From the pairs (``human`` is None for perturbation pairs).
    metrics, contexts, inputs : tuple of str
    average, ties, ci_method : str
    confidence_level : float
    statistic : ndarray, shape (n_metrics, n_contexts)
        The local accuracy: with ``average="macro"`` Eq. 2, the mean over
        the context's inputs x of the pointwise accuracy Acc(Q_x) (Eq. 1,
        the share of x's pairs in the context that the metric orders
        correctly); with ``average="micro"`` the share of all the context's
        pairs.  NaN when the metric has no usable pair in the context.
    ci_low, ci_high : ndarray
        Binomial confidence interval (see :func:`local_accuracy`).
    n, n_correct, n_ties, n_incorrect, n_missing, n_inputs : ndarray of int
        Per metric x context: pairs with both scores, ordered correctly,
        tied, ordered wrongly; pairs lacking a score; inputs contributing
        to Eq. 2 (with at least one pair that counts).
    rank : ndarray
        Rank of the metric within the context by ``statistic`` (1 = most
        accurate; average ranks for equal accuracies; NaN if undefined).
    overall : ndarray, shape (n_metrics,)
        The same statistic over all pairs of all contexts (Q is the union
        of the contexts' pairs; the "global" column of the paper's Table 1);
        ``overall_ci_low``, ``overall_ci_high``, ``overall_n``, ... likewise.
    n_undefined : int
        Metric x context cells with a NaN statistic.
    signature : str

    ``to_frame()`` columns: ``metric, context, statistic, ci_low, ci_high,
    tie_share, rank, n, n_correct, n_ties, n_incorrect, n_missing, n_inputs,
    category, average, ties, ci_method, confidence_level, signature``
    (``tie_share`` = n_ties / n).  ``overall_frame()``: the same columns
    with ``context`` set to ``"(all)"``.  ``inputs_frame()``: the pointwise
    accuracy of Eq. 1, one row per metric x context x input.
    """

    category: str
    source: str
    human: str | None
    average: str
    ties: str
    ci_method: str
    confidence_level: float
    n_undefined: int
    signature: str
    metrics: tuple = field(repr=False)
    contexts: tuple = field(repr=False)
    inputs: tuple = field(repr=False)
    statistic: np.ndarray = field(**_ARR)
    ci_low: np.ndarray = field(**_ARR)
    ci_high: np.ndarray = field(**_ARR)
    n: np.ndarray = field(**_ARR)
    n_correct: np.ndarray = field(**_ARR)
    n_ties: np.ndarray = field(**_ARR)
    n_incorrect: np.ndarray = field(**_ARR)
    n_missing: np.ndarray = field(**_ARR)
    n_inputs: np.ndarray = field(**_ARR)
    rank: np.ndarray = field(**_ARR)
    overall: np.ndarray = field(**_ARR)
    overall_ci_low: np.ndarray = field(**_ARR)
    overall_ci_high: np.ndarray = field(**_ARR)
    overall_n: np.ndarray = field(**_ARR)
    overall_n_correct: np.ndarray = field(**_ARR)
    overall_n_ties: np.ndarray = field(**_ARR)
    overall_n_incorrect: np.ndarray = field(**_ARR)
    overall_n_missing: np.ndarray = field(**_ARR)
    overall_n_inputs: np.ndarray = field(**_ARR)
    _blocks: _Blocks = field(**_ARR)

    _COLUMNS = (
        "metric", "context", "statistic", "ci_low", "ci_high", "tie_share", "rank", "n",
        "n_correct", "n_ties", "n_incorrect", "n_missing", "n_inputs", "category",
        "average", "ties", "ci_method", "confidence_level", "signature",
    )  # fmt: skip

    _get_keys: ClassVar[tuple] = ("metric", "context")

    @classmethod
    def frame_columns(cls) -> list[str]:
        return list(cls._COLUMNS)

    def _frame(self, ctx_labels, arrays) -> pd.DataFrame:
        stat, lo, hi, rank, n, nc, nt, ni, nm, nx = arrays
        K, C = stat.shape
        with np.errstate(invalid="ignore", divide="ignore"):
            tie_share = np.where(n > 0, nt / np.maximum(n, 1), np.nan)
        d = {
            "metric": np.repeat(np.asarray(self.metrics, dtype=object), C),
            "context": np.tile(np.asarray(ctx_labels, dtype=object), K),
            "statistic": stat.reshape(-1),
            "ci_low": lo.reshape(-1),
            "ci_high": hi.reshape(-1),
            "tie_share": tie_share.reshape(-1),
            "rank": rank.reshape(-1),
            "n": n.reshape(-1),
            "n_correct": nc.reshape(-1),
            "n_ties": nt.reshape(-1),
            "n_incorrect": ni.reshape(-1),
            "n_missing": nm.reshape(-1),
            "n_inputs": nx.reshape(-1),
            "category": self.category,
            "average": self.average,
            "ties": self.ties,
            "ci_method": self.ci_method,
            "confidence_level": self.confidence_level,
            "signature": self.signature,
        }
        return pd.DataFrame(d, columns=self._COLUMNS)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric x context (columns in the class docstring)."""
        return self._frame(
            self.contexts,
            (self.statistic, self.ci_low, self.ci_high, self.rank, self.n, self.n_correct,
             self.n_ties, self.n_incorrect, self.n_missing, self.n_inputs),
        )  # fmt: skip

    def overall_frame(self) -> pd.DataFrame:
        """One row per metric over all contexts (``context`` is ``"(all)"``)."""
        c = lambda a: np.asarray(a)[:, None]
        ov = self.overall
        snapped = _snap(ov)  # accuracies equal up to float error tie, as in the per-context rank
        with np.errstate(invalid="ignore"):
            rank = _st.rankdata(
                np.where(np.isfinite(snapped), -snapped, np.inf), method="average"
            )
        rank = np.where(np.isfinite(ov), rank, np.nan)
        return self._frame(
            ["(all)"],
            (c(ov), c(self.overall_ci_low), c(self.overall_ci_high), c(rank), c(self.overall_n),
             c(self.overall_n_correct), c(self.overall_n_ties), c(self.overall_n_incorrect),
             c(self.overall_n_missing), c(self.overall_n_inputs)),
        )  # fmt: skip

    def matrix(self, value: str = "statistic") -> pd.DataFrame:
        """Metrics x contexts table of ``value`` (a field: ``statistic``,
        ``n``, ``rank``, ...), the data of Figures 1a-3a."""
        allowed = ("statistic", "ci_low", "ci_high", "rank", "n", "n_correct", "n_ties",
                   "n_incorrect", "n_missing", "n_inputs")  # fmt: skip
        check_choice(value, "value", allowed)
        return pd.DataFrame(
            getattr(self, value), index=pd.Index(self.metrics, name="metric"),
            columns=pd.Index(self.contexts, name="context"),
        )  # fmt: skip

    def inputs_frame(self) -> pd.DataFrame:
        """Pointwise local accuracy Acc(Q_x) (Eq. 1), one row per metric x
        context x input: ``metric, context, input, accuracy, n, n_correct,
        n_ties, n_incorrect`` (``accuracy`` follows ``ties``; NaN when the
        input has no pair that counts)."""
        b = self._blocks
        K, nb = b.valid.shape
        den = b.valid - (b.ties if self.ties == "exclude" else 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(den > 0, b.correct / np.maximum(den, 1), np.nan)
        return pd.DataFrame(
            {
                "metric": np.repeat(np.asarray(self.metrics, dtype=object), nb),
                "context": np.tile(
                    np.asarray(self.contexts, dtype=object)[b.context], K
                ),
                "input": np.tile(np.asarray(self.inputs, dtype=object)[b.input], K),
                "accuracy": acc.reshape(-1),
                "n": b.valid.reshape(-1),
                "n_correct": b.correct.reshape(-1),
                "n_ties": b.ties.reshape(-1),
                "n_incorrect": (b.valid - b.correct - b.ties).reshape(-1),
            }
        )

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Scalar fields plus ``rows`` (the records of ``to_frame()``) and
        ``overall`` (those of ``overall_frame()``); with ``arrays``, also
        ``inputs`` and the (metric x context) arrays as nested lists."""
        d = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not f.metadata.get("array")
        }
        d["metrics"] = list(self.metrics)
        d["contexts"] = list(self.contexts)
        d.pop("inputs", None)
        d["rows"] = self.to_frame().to_dict("records")
        d["overall"] = self.overall_frame().to_dict("records")
        if arrays:
            d["inputs"] = list(self.inputs)
            for f in fields(self):
                if f.metadata.get("array") and not f.name.startswith("_"):
                    d[f.name] = np.asarray(getattr(self, f.name)).tolist()
        return d


def local_accuracy(
    pairs: LocalPairs,
    *,
    average: str = "macro",
    ties: str = "incorrect",
    ci: str = "wilson",
    confidence_level: float = 0.95,
) -> LocalAccuracy:
    r"""Local metric accuracy per context (paper 004, Eq. 1-2), with ties and CIs.

    For an input x with pairs :math:`Q_x` (in one context), the pointwise
    local accuracy (Eq. 1) is

    .. math:: \mathrm{Acc}_\mu(Q_x) = \frac{1}{|Q_x|}
              \sum_{\langle y, y' \rangle \in Q_x} \mathbb 1[\mu(x, y) > \mu(x, y')]

    and the local accuracy of a context with inputs X (Eq. 2) is
    :math:`\mathrm{Acc}_\mu(Q) = \frac{1}{|X|}\sum_{x \in X}\mathrm{Acc}_\mu(Q_x)`.
    "Better" is "lower" for the pairs' ``lower_is_better`` metrics.  Pairs
    with a missing score of the metric are left out of its Q_x (counted in
    ``n_missing``); an input whose pairs are all left out is not in X.

    Parameters
    ----------
    pairs : LocalPairs
        From :func:`local_pairs`.
    average : {"macro", "micro"}
        ``"macro"`` (default): Eq. 2, the plain mean of Eq. 1 over the
        context's inputs (each input weighs the same).  ``"micro"``: the
        share of all the context's pairs, i.e. the mean of Eq. 1 weighted by
        each input's pairs (the two agree when every input has the same
        number of pairs, e.g. one perturbation pair per input in a system
        context).  These are the ``macro``/``micro`` averages of
        :func:`metaeval.correlate` over input groups; ``"input"`` and
        ``"pair"``, their earlier names here, are accepted for them.
    ties : {"incorrect", "exclude"}
        A pair the metric scores equally (``|difference| <= atol``) counts
        as not correct (``"incorrect"``, default: Eq. 1's strict ">") or is
        left out (``"exclude"``: accuracy among the pairs the metric
        orders).  Either way ties are counted apart (``n_ties``,
        ``tie_share``).
    ci : {"wilson", "clopper-pearson"}
        Binomial interval (:func:`metaeval.diagnostics.binomial_interval`).
        With ``average="micro"``: the interval of a proportion of n
        independent pairs.  With ``average="macro"`` (Eq. 2, a mean over
        the |X| inputs of their accuracies, which are the independent
        units): the interval of a proportion with Kish's effective sample
        size :math:`n_{eff} = |X|\hat p(1-\hat p)/s^2` (:math:`s^2` the
        sample variance of the per-input accuracies), clipped to
        [|X|, pairs]; |X| is the conservative bound (a mean of values in
        [0, 1] has variance at most p(1 - p)/|X|) and the number of pairs
        the case of independent pairs.  With one pair per input this is the
        plain binomial interval of the pairs.
    confidence_level : float
        Confidence level of the binomial intervals (default 0.95).

    Returns
    -------
    LocalAccuracy

    Warns
    -----
    UndefinedStatisticWarning
        When a metric has no usable pair in a context (NaN, counted in
        ``n_undefined``).

    Examples
    --------
    Two inputs in context ``a`` (one with two pairs), one in ``b``:

    >>> import numpy as np
    >>> orig = {"m": np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])}
    >>> pert = {"m": np.array([[1.0, 2.0, 0.0], [4.0, 1.0, 0.0]])}
    >>> ctx = [["a", "a", "b"], ["a", "a", "b"]]
    >>> acc = local_accuracy(local_pairs(orig, pert, context=ctx))
    >>> acc.statistic.tolist()  # a: mean of Acc(Q_x) = 1/2 and 1/2
    [[0.5, 1.0]]
    >>> acc.n_ties.tolist(), acc.n_incorrect.tolist()
    ([[1, 0]], [[1, 0]])
    """
    pairs = _check_pairs(pairs, "local_accuracy")
    average = _check_options(average, ties)
    check_choice(ci, "ci", BINOMIAL_CIS)
    cl = check_probability(confidence_level)
    b = _blocks(pairs)
    K, C = len(pairs.metrics), len(pairs.contexts)
    num, den = _block_values(b, average, ties)
    starts = b.bounds[:-1]
    snum = np.add.reduceat(num, starts, axis=1)
    sden = np.add.reduceat(den, starts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(sden > 0, snum / np.where(sden > 0, sden, 1), np.nan)
    n = np.add.reduceat(b.valid, starts, axis=1)
    nc = np.add.reduceat(b.correct, starts, axis=1)
    nt = np.add.reduceat(b.ties, starts, axis=1)
    ni = n - nc - nt
    # pairs of each context lacking the metric's scores
    npairs_ctx = np.bincount(pairs.context, minlength=C)
    nm = npairs_ctx[None, :] - n
    den_pairs = b.valid - (b.ties if ties == "exclude" else 0)
    nx = np.add.reduceat((den_pairs > 0).astype(np.int64), starts, axis=1)
    lo = np.full((K, C), np.nan)
    hi = np.full((K, C), np.nan)
    sq = np.add.reduceat(num * num, starts, axis=1) if average == "macro" else None
    npairs_dec = np.add.reduceat(den_pairs, starts, axis=1)
    for k in range(K):
        for c in range(C):
            lo[k, c], hi[k, c] = _interval(
                snum[k, c], sden[k, c], cl, ci,
                None if sq is None else sq[k, c], npairs_dec[k, c],
            )  # fmt: skip
    undefined = ~np.isfinite(stat)
    if undefined.any():
        cells = [
            f"{pairs.metrics[k]}@{pairs.contexts[c]}"
            for k, c in zip(*np.nonzero(undefined))
        ]
        warnings.warn(
            f"local accuracy undefined (no usable pair) for {len(cells)} metric x context "
            f"cell(s): {', '.join(cells[:10])}{' ...' if len(cells) > 10 else ''}; they are NaN "
            "(counted in n_undefined)",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    # overall: the pairs of every context, grouped by input across contexts
    ov = _overall(b, pairs, average, ties, cl, ci)
    sig = make_signature(
        **pairs.signature_fields(),
        avg=average,
        ties=ties,
        ci=(ci, cl),
        test="local-accuracy",
    )
    return LocalAccuracy(
        category=pairs.category,
        source=pairs.source,
        human=pairs.human,
        average=average,
        ties=ties,
        ci_method=ci,
        confidence_level=cl,
        n_undefined=int(undefined.sum()),
        signature=sig,
        metrics=pairs.metrics,
        contexts=pairs.contexts,
        inputs=pairs.inputs,
        statistic=stat,
        ci_low=lo,
        ci_high=hi,
        n=n,
        n_correct=nc,
        n_ties=nt,
        n_incorrect=ni,
        n_missing=nm,
        n_inputs=nx,
        rank=_ranks(stat),
        _blocks=b,
        **ov,
    )


def _overall(b: _Blocks, pairs: LocalPairs, average, ties, cl, ci) -> dict:
    K = len(pairs.metrics)
    M = max(1, len(pairs.inputs))
    # merge the blocks of each input across contexts
    inp = b.input
    sums = {}
    for name, a in (("valid", b.valid), ("correct", b.correct), ("ties", b.ties)):
        s = np.zeros((K, M), np.int64)
        for k in range(K):
            s[k] = np.bincount(inp, weights=a[k], minlength=M).astype(np.int64)
        sums[name] = s
    merged = _Blocks(np.zeros(M, np.int64), np.arange(M), sums["valid"], sums["correct"],
                     sums["ties"], np.array([0, M], np.int64))  # fmt: skip
    num, den = _block_values(merged, average, ties)
    snum, sden = num.sum(1), den.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(sden > 0, snum / np.where(sden > 0, sden, 1), np.nan)
    n = sums["valid"].sum(1)
    nc = sums["correct"].sum(1)
    nt = sums["ties"].sum(1)
    den_pairs = sums["valid"] - (sums["ties"] if ties == "exclude" else 0)
    sq = (num * num).sum(1) if average == "macro" else None
    ndec = den_pairs.sum(1)
    ci_pairs = [
        _interval(snum[k], sden[k], cl, ci, None if sq is None else sq[k], ndec[k])
        for k in range(K)
    ]
    return {
        "overall": stat,
        "overall_ci_low": np.array([c[0] for c in ci_pairs]),
        "overall_ci_high": np.array([c[1] for c in ci_pairs]),
        "overall_n": n,
        "overall_n_correct": nc,
        "overall_n_ties": nt,
        "overall_n_incorrect": n - nc - nt,
        "overall_n_missing": pairs.n_pairs - n,
        "overall_n_inputs": (den_pairs > 0).sum(1),
    }


# --------------------------------------------------------------------------
# H1: chi-square test of independence (section 4.3)


@dataclass(frozen=True)
class Chi2Test(_Result):
    """Chi-square test of independence of context and outcome, for one metric.

    Attributes
    ----------
    metric, category : str
    statistic : float
        Pearson's :math:`X^2 = \\sum_{c, o} (O_{co} - E_{co})^2 / E_{co}`
        over the contexts c with at least one pair that counts and the
        outcomes o in (correct, not correct), :math:`E_{co} = n_c
        n_o / n` (Pearson 1900; no continuity correction).  NaN when fewer
        than two contexts have pairs or when every pair has the same
        outcome.
    df : int
        (contexts used - 1).
    pvalue : float
        Asymptotic chi-square p-value or permutation p-value (``test``).
    pvalue_adjusted : float
        ``pvalue`` adjusted over the metrics (``correction``).
    test : {"asymptotic", "permutation"}
        The test actually used.
    cramers_v : float
        Effect size :math:`\\sqrt{X^2 / n}` (Cramér's V of an r x 2 table).
    n : int
        Pairs in the table.
    n_contexts, n_empty_contexts : int
        Contexts in the table / with no pair for this metric (left out).
    min_expected : float
        Smallest expected count.
    n_small_expected : int
        Cells with an expected count below ``MIN_EXPECTED`` (5).
    n_resamples : int
        Permutations (0 for the asymptotic test).
    ties, correction, signature : str
    contexts : tuple
        Row labels of ``table``.
    table : ndarray, shape (n_contexts, 2)
        Counts (correct, not correct); with ``ties="exclude"`` tied pairs
        are left out, otherwise they are in the second column.
    expected : ndarray
        Expected counts under independence.
    null_distribution : ndarray or None
        The permutation statistics.
    """

    metric: str
    category: str
    statistic: float
    df: int
    pvalue: float
    pvalue_adjusted: float
    test: str
    cramers_v: float
    n: int
    n_contexts: int
    n_empty_contexts: int
    min_expected: float
    n_small_expected: int
    n_resamples: int
    ties: str
    correction: str
    signature: str
    contexts: tuple = field(**_ARR)
    table: np.ndarray = field(**_ARR)
    expected: np.ndarray = field(**_ARR)
    null_distribution: np.ndarray = field(**_ARR)


@dataclass(frozen=True)
class ContextChi2(_Collection):
    """Results of :func:`context_chi2`, one :class:`Chi2Test` per metric.

    ``to_frame()`` columns: ``metric, category, statistic, df, pvalue,
    pvalue_adjusted, test, cramers_v, n, n_contexts, n_empty_contexts,
    min_expected, n_small_expected, n_resamples, ties, correction,
    signature``.  ``tables_frame()``: the contingency tables, one row per
    metric x context with ``n_correct, n_not_correct, expected_correct,
    expected_not_correct``.
    """

    _item = Chi2Test

    def tables_frame(self) -> pd.DataFrame:
        rows = []
        for r in self.results:
            for i, c in enumerate(r.contexts):
                rows.append(
                    {
                        "metric": r.metric,
                        "context": c,
                        "n_correct": int(r.table[i, 0]),
                        "n_not_correct": int(r.table[i, 1]),
                        "expected_correct": float(r.expected[i, 0]),
                        "expected_not_correct": float(r.expected[i, 1]),
                    }
                )
        cols = ["metric", "context", "n_correct", "n_not_correct", "expected_correct",
                "expected_not_correct"]  # fmt: skip
        return pd.DataFrame(rows, columns=cols)


def context_chi2(
    pairs: LocalPairs,
    *,
    ties: str = "incorrect",
    test: str = "auto",
    n_resamples: int = 9999,
    rng=None,
    correction: str = "holm",
) -> ContextChi2:
    r"""H1: does a metric's local accuracy change with the context?  (paper 004, 4.3)

    For each metric, the chi-square test of independence (Pearson 1900,
    1904) of the contingency table contexts x (correct, not correct) of its
    pairs: :math:`X^2 = \sum_{c,o} (O_{co} - E_{co})^2/E_{co}` with
    :math:`E_{co} = n_c n_o / n`, df = (contexts - 1), without continuity
    correction: ``scipy.stats.chi2_contingency(table, correction=False)``.
    The table counts pairs (each pair one observation), so the test assumes
    independent pairs; contexts without a pair for the metric are left out.

    Parameters
    ----------
    pairs : LocalPairs
    ties : {"incorrect", "exclude"}
        Tied pairs count as not correct (default) or are left out.
    test : {"auto", "asymptotic", "permutation"}
        ``"asymptotic"``: the chi-square distribution.  ``"permutation"``:
        a Monte Carlo permutation test: the context labels are permuted over
        the metric's pairs, which keeps both margins of the table fixed (the
        contexts' sizes and the number of correct pairs), and X^2 is
        recomputed.  Under that permutation the counts of correct pairs per
        context follow the multivariate hypergeometric distribution, which
        is how they are drawn (``numpy.random.Generator.
        multivariate_hypergeometric``; the same distribution as shuffling the
        labels, in O(contexts) per draw).  p = (count + 1) / (n_resamples +
        1) with count the permuted X^2 >= the observed one (relative tie
        tolerance 1e-12).  ``"auto"`` (default): asymptotic, unless an
        expected count is below 5 (Cochran's rule), then permutation, with a
        :class:`~metaeval.errors.SmallExpectedCountWarning`.
    n_resamples : int
        Permutations (default 9999).
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts; each metric draws
        from its own stream, named ``("local-chi2", metric)``
        (:func:`metaeval.stats.resampling.named_generator`), so its p-value
        does not depend on the other metrics.
    correction : {"holm", "bonferroni", "bh", "none"}
        Multiple-testing adjustment over the metrics (``pvalue_adjusted``;
        :func:`metaeval.stats.multitest.adjust_pvalues`).

    Returns
    -------
    ContextChi2

    Warns
    -----
    SmallExpectedCountWarning
        An expected count is below 5 (with ``"auto"``: the permutation test
        is used; with ``"asymptotic"``: the p-value may be inaccurate).
    UndefinedStatisticWarning
        A metric's table has fewer than two contexts or a single outcome
        (statistic NaN).

    Examples
    --------
    Context a: 18 of 20 pairs correct, b: 6 of 20; expected 12 correct in
    each, so X^2 = 2 (18 - 12)^2 / (20 * 0.6 * 0.4) = 15:

    >>> import numpy as np
    >>> ctx = np.repeat(["a", "b"], 20)[None, :]
    >>> orig = {"m": np.ones((1, 40))}
    >>> pert = {"m": np.r_[np.zeros(18), 2, 2, np.zeros(6), 2 * np.ones(14)][None, :]}
    >>> r = context_chi2(local_pairs(orig, pert, context=ctx))[0]
    >>> r.table.tolist(), round(r.statistic, 10), r.df, r.test
    ([[18, 2], [6, 14]], 15.0, 1, 'asymptotic')
    """
    pairs = _check_pairs(pairs, "context_chi2")
    check_choice(ties, "ties", TIES)
    check_choice(test, "test", CHI2_TESTS)
    check_choice(correction, "correction", CORRECTIONS)
    B = _rs.check_n_resamples(n_resamples)
    if len(pairs.contexts) < 2:
        raise DataError(
            f"context {pairs.category!r} has {len(pairs.contexts)} context(s) with pairs; the "
            "chi-square test compares at least two"
        )
    ss, tag = _rs.seed_sequence(rng)
    b = _blocks(pairs)
    starts = b.bounds[:-1]
    C = len(pairs.contexts)
    items = []
    switched, small_asym, undefined = [], [], []
    for k, m in enumerate(pairs.metrics):
        den = b.valid[k] - (b.ties[k] if ties == "exclude" else 0)
        n_c = np.add.reduceat(den, starts)
        k_c = np.add.reduceat(b.correct[k], starts)
        rows = n_c > 0
        n_c, k_c = n_c[rows], k_c[rows]
        ctx = tuple(c for c, r in zip(pairs.contexts, rows) if r)
        N = int(n_c.sum())
        K1 = int(k_c.sum())
        table = np.stack([k_c, n_c - k_c], axis=1) if N else np.zeros((0, 2), np.int64)
        expected = np.outer(n_c, [K1, N - K1]) / N if N else np.zeros((0, 2))
        r = int(rows.sum())
        degenerate = r < 2 or K1 == 0 or K1 == N
        min_e = float(expected.min()) if expected.size else math.nan
        n_small = int((expected < MIN_EXPECTED).sum())
        used = test
        null = None
        if degenerate:
            undefined.append(m)
            stat = p = v = math.nan
            used = "asymptotic" if test == "auto" else test
            nres = 0
        else:
            stat = float(_chi2_stat(k_c.astype(float), n_c.astype(float)))
            v = math.sqrt(stat / N)
            if test == "auto":
                used = "permutation" if n_small else "asymptotic"
                if n_small:
                    switched.append(m)
            elif test == "asymptotic" and n_small:
                small_asym.append(m)
            if used == "asymptotic":
                p = float(_st.chi2.sf(stat, r - 1))
                nres = 0
            else:
                gen = _rs.named_generator(ss, "local-chi2", m)
                draws = gen.multivariate_hypergeometric(
                    n_c.astype(np.int64), K1, size=B
                )
                null = _chi2_stat(draws.astype(float), n_c.astype(float))
                p = resampling_pvalue(null, stat, "greater")
                nres = B
        items.append(
            {
                "metric": m,
                "category": pairs.category,
                "statistic": stat,
                "df": max(r - 1, 0),
                "pvalue": p,
                "test": used,
                "cramers_v": v,
                "n": N,
                "n_contexts": r,
                "n_empty_contexts": C - r,
                "min_expected": min_e,
                "n_small_expected": n_small,
                "n_resamples": nres,
                "ties": ties,
                "correction": correction,
                "contexts": ctx,
                "table": table,
                "expected": expected,
                "null_distribution": null,
            }
        )
    if switched:
        warnings.warn(
            f"chi-square of {', '.join(map(repr, switched))}: expected counts below "
            f"{MIN_EXPECTED:g}; the permutation test is used (pass test='asymptotic' or "
            "test='permutation' to choose)",
            SmallExpectedCountWarning,
            stacklevel=user_stacklevel(),
        )
    if small_asym:
        warnings.warn(
            f"chi-square of {', '.join(map(repr, small_asym))}: expected counts below "
            f"{MIN_EXPECTED:g}, so the asymptotic p-value may be inaccurate; consider "
            "test='permutation'",
            SmallExpectedCountWarning,
            stacklevel=user_stacklevel(),
        )
    if undefined:
        warnings.warn(
            f"chi-square undefined for {', '.join(map(repr, undefined))}: fewer than two "
            "contexts with pairs, or every pair has the same outcome; statistic NaN",
            UndefinedStatisticWarning,
            stacklevel=user_stacklevel(),
        )
    adj = adjust_pvalues([it["pvalue"] for it in items], method=correction)
    out = []
    for it, pa in zip(items, adj):
        sig = make_signature(
            **pairs.signature_fields(),
            ties=ties,
            test="chi2",
            pvalue="asymptotic" if it["test"] == "asymptotic" else ("permutation", B),
            correction=correction,
            seed=tag if it["test"] == "permutation" else None,
        )
        out.append(Chi2Test(pvalue_adjusted=float(pa), signature=sig, **it))
    return ContextChi2(tuple(out))


# --------------------------------------------------------------------------
# H2: weighted Kendall tau between the metric rankings of contexts


@dataclass(frozen=True)
class ContextTau(_Table):
    """Weighted tau between the metric rankings of every pair of contexts (H2).

    Attributes
    ----------
    category : str
    variant : str
        :data:`WTAU_VARIANTS` (``"vigna"``: symmetric matrix; ``"shieh"``:
        row context gives the weights).
    weigher : str
        ``"hyperbolic"`` (1/(r+1)) or ``"custom"``; ``weights`` holds the
        weight of each rank.
    average, ties : str
        How the accuracies were computed (:func:`local_accuracy`).
    statistic : float
        Mean weighted tau over the defined context pairs (upper triangle
        for ``"vigna"``, every ordered pair for ``"shieh"``): a summary of
        how stable the metric ordering is across contexts.
    pvalue : float
        One-sided permutation p-value of ``statistic`` (small: the orderings
        agree less than under exchangeable contexts; NaN without
        permutations).
    n_resamples : int
    n_undefined : int
        Context pairs whose tau is NaN (constant accuracies in a context, or
        fewer than two metrics defined in both).
    correction : str
    n_clusters : int
    cluster_threshold : float
    signature : str
    metrics, contexts : tuple of str
    accuracy : ndarray, shape (n_contexts, n_metrics)
        The local accuracies ranked in each context (values within
        ``ACCURACY_TIE_TOL`` of each other in a context set equal).
    tau : ndarray, shape (n_contexts, n_contexts)
        ``tau[c, d]`` between contexts c and d (the diagonal is 1 unless the
        context's accuracies are constant).
    n_metrics : ndarray of int
        Metrics defined in both contexts.
    pvalues, pvalues_adjusted : ndarray
        One-sided permutation p-values of each pair (NaN on the diagonal),
        and adjusted over the family of pairs (``correction``).
    clusters : ndarray of int
        Cluster (1, 2, ...; numbered by first appearance) of each context.
    order : ndarray of int
        Contexts in dendrogram order (clusters contiguous).
    linkage : ndarray
        The ``scipy.cluster.hierarchy.linkage`` matrix.
    pair_index : ndarray, shape (2, n_pairs)
        Row and column of each tested pair (columns of ``null_distribution``).
    null_distribution : ndarray, shape (n_resamples, n_pairs)
    null_statistic : ndarray, shape (n_resamples,)
    weights : ndarray

    ``to_frame()`` columns: ``context_a, context_b, tau, n_metrics, pvalue,
    pvalue_adjusted, cluster_a, cluster_b, category, variant, signature``
    (one row per tested pair).  ``clusters_frame()``: ``context, cluster,
    position``.  ``matrix(value)``: a contexts x contexts table.
    """

    category: str
    variant: str
    weigher: str
    average: str
    ties: str
    statistic: float
    pvalue: float
    n_resamples: int
    n_undefined: int
    correction: str
    n_clusters: int
    cluster_threshold: float
    signature: str
    metrics: tuple = field(repr=False)
    contexts: tuple = field(repr=False)
    accuracy: np.ndarray = field(**_ARR)
    tau: np.ndarray = field(**_ARR)
    n_metrics: np.ndarray = field(**_ARR)
    pvalues: np.ndarray = field(**_ARR)
    pvalues_adjusted: np.ndarray = field(**_ARR)
    clusters: np.ndarray = field(**_ARR)
    order: np.ndarray = field(**_ARR)
    linkage: np.ndarray = field(**_ARR)
    pair_index: np.ndarray = field(**_ARR)
    null_distribution: np.ndarray = field(**_ARR)
    null_statistic: np.ndarray = field(**_ARR)
    weights: np.ndarray = field(**_ARR)

    _MATRICES = ("tau", "n_metrics", "pvalues", "pvalues_adjusted")

    _get_keys: ClassVar[tuple] = ("context_a", "context_b")

    def matrix(self, value: str = "tau", *, ordered: bool = False) -> pd.DataFrame:
        """Contexts x contexts table of ``value`` (``tau``, ``n_metrics``,
        ``pvalues``, ``pvalues_adjusted``); ``ordered=True`` puts the
        contexts in dendrogram order (the heatmap of Figures 1b-3b)."""
        check_choice(value, "value", self._MATRICES)
        a = np.asarray(getattr(self, value))
        labels = list(self.contexts)
        if ordered:
            a = a[np.ix_(self.order, self.order)]
            labels = [labels[i] for i in self.order]
        return pd.DataFrame(
            a,
            index=pd.Index(labels, name="context"),
            columns=pd.Index(labels, name="context"),
        )

    def to_frame(self) -> pd.DataFrame:
        I, J = self.pair_index
        ctx = np.asarray(self.contexts, dtype=object)
        cols = ["context_a", "context_b", "tau", "n_metrics", "pvalue", "pvalue_adjusted",
                "cluster_a", "cluster_b", "category", "variant", "signature"]  # fmt: skip
        return pd.DataFrame(
            {
                "context_a": ctx[I],
                "context_b": ctx[J],
                "tau": self.tau[I, J],
                "n_metrics": self.n_metrics[I, J],
                "pvalue": self.pvalues[I, J],
                "pvalue_adjusted": self.pvalues_adjusted[I, J],
                "cluster_a": self.clusters[I],
                "cluster_b": self.clusters[J],
                "category": self.category,
                "variant": self.variant,
                "signature": self.signature,
            },
            columns=cols,
        )

    def clusters_frame(self) -> pd.DataFrame:
        pos = np.empty(len(self.contexts), np.int64)
        pos[self.order] = np.arange(len(self.contexts))
        return pd.DataFrame(
            {"context": list(self.contexts), "cluster": self.clusters, "position": pos}
        )

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Scalar fields, ``metrics``, ``contexts``, ``pairs`` (records of
        ``to_frame()``) and ``clusters``; with ``arrays`` also the matrices
        and null distributions as lists."""
        d = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not f.metadata.get("array")
        }
        d["metrics"] = list(self.metrics)
        d["contexts"] = list(self.contexts)
        d["pairs"] = self.to_frame().to_dict("records")
        d["clusters"] = dict(zip(self.contexts, self.clusters.tolist()))
        if arrays:
            for name in ("accuracy", "tau", "n_metrics", "pvalues", "pvalues_adjusted",
                         "linkage", "null_distribution", "null_statistic", "weights"):  # fmt: skip
                v = getattr(self, name)
                d[name] = None if v is None else np.asarray(v).tolist()
        return d


def context_tau(
    pairs: LocalPairs,
    *,
    average: str = "macro",
    ties: str = "incorrect",
    variant: str = "vigna",
    weigher: Callable | None = None,
    n_resamples: int = 999,
    rng=None,
    correction: str = "holm",
    cluster_threshold: float = 0.5,
    n_clusters: int | None = None,
    n_jobs: int = 1,
) -> ContextTau:
    r"""H2: does the ordering of metrics by local accuracy change with the context?

    Paper 004, section 4.3: in each context the metrics are ranked by local
    accuracy (:func:`local_accuracy`, Eq. 2 with ``average="macro"``), and
    every two contexts are compared with a weighted Kendall tau that weighs
    disagreements among the most accurate metrics more, with hyperbolic
    weights 1/(r+1) of the rank r (:func:`weighted_tau`; Shieh 1998, Vigna
    2015).  Metrics tied in accuracy within a context are tied in its
    ranking: the tau handles ties as a weighted tau-b (a tied pair is
    neither concordant nor discordant and leaves the normalisation), and
    the weights of tied metrics come from the decreasing lexicographic
    order of (accuracy here, accuracy in the other context), as in
    ``scipy.stats.weightedtau``.  Accuracies within ``ACCURACY_TIE_TOL``
    (1e-9) of each other are tied first (Eq. 2 sums fractions in floating
    point, so 1/3 and 2/6 may differ in the last bits); ``accuracy`` holds
    the tied values, so ``scipy.stats.weightedtau(accuracy[c], accuracy[d],
    ...)`` gives ``tau[c, d]``.  A metric undefined in one of the two
    contexts is left out of that pair.

    **Permutation test.**  Under the null hypothesis that the context does
    not matter, the *blocks* (the pairs of one input within one context,
    :math:`Q_x`, each keeping the outcomes of all metrics jointly) are
    exchangeable across contexts.  Each permutation reassigns the blocks to
    contexts at random, keeping the number of blocks of each context (so
    Eq. 2 averages over as many inputs as observed), recomputes the
    accuracies of all metrics in all contexts, their rankings and all taus.
    With one pair per block (e.g. perturbation pairs with system contexts)
    this permutes the pairs.  For each pair of contexts,
    ``pvalue = (count + 1) / (n_resamples + 1)`` with count the permuted
    taus <= the observed one (one-sided: H2 predicts low agreement;
    relative tie tolerance 1e-12; undefined permuted taus are left out).
    The same holds for ``statistic``, the mean tau.  This null is
    exchangeability of the contexts as a whole, so a context effect on the
    absolute accuracies alone (H1) can also lower the taus through
    accuracies compressed near 0 or 1; read the p-values with the
    chi-square results.

    **Clusters.**  Average-linkage hierarchical clustering
    (``scipy.cluster.hierarchy.linkage(..., method="average")``) of the
    distance 1 - tau (of the symmetrised matrix for ``"shieh"``; an
    undefined tau counts as 0, distance 1), cut at distance
    ``1 - cluster_threshold``: two groups of contexts merge while the mean
    tau between them is at least ``cluster_threshold``.  ``n_clusters``
    instead cuts the tree into at most that many clusters (``maxclust``).
    Deterministic.

    Parameters
    ----------
    pairs : LocalPairs
    average, ties : str
        As in :func:`local_accuracy`.
    variant : {"vigna", "shieh"}
        The weighted tau (:func:`weighted_tau`): Vigna's additive weights,
        averaged over the two contexts' rankings (``"vigna"``, default:
        scipy's, symmetric), or Shieh's product weights from the first
        context's ranks (``"shieh"``, directed).
    weigher : callable, optional
        Weight of a 0-based rank; default ``1/(r+1)``.
    n_resamples : int
        Permutations (default 999; 0 for no test: p-values NaN).  Cost
        O(n_resamples x (blocks + context pairs x metrics^2)).
    rng : seed, optional
        Permutations are drawn in chunks of ``min(256, max(1, 2_000_000 //
        n_blocks))``; chunk u draws from the stream named ``("local-tau",
        str(u))`` (:func:`metaeval.stats.resampling.named_generator`), one
        ``Generator.permutation`` of the blocks' context labels (blocks
        sorted by context, then input) per resample, so the numbers do not
        depend on ``n_jobs``.
    correction : {"holm", "bonferroni", "bh", "none"}
        Adjustment of the pairs' p-values over the family of tested pairs.
    cluster_threshold : float
        In [-1, 1]; default 0.5.
    n_clusters : int, optional
        Cut into this many clusters instead.
    n_jobs : int
        Workers for the permutation chunks (joblib, see
        :func:`metaeval._parallel.run_units`).

    Returns
    -------
    ContextTau

    Warns
    -----
    ConstantInputWarning
        A context ranks all metrics equal (its taus are NaN).
    TooFewPairsWarning
        Two contexts share fewer than two defined metrics.

    Examples
    --------
    Table 1 of paper 004 as three contexts of 10 single-pair inputs:

    >>> import numpy as np
    >>> acc = {"A": [0.9, 0.9, 0.3], "B": [0.7, 0.7, 0.7], "C": [0.3, 0.3, 0.9]}
    >>> orig = {m: np.ones((1, 30)) for m in acc}
    >>> pert = {m: np.concatenate([np.where(np.arange(10) < 10 * a, 0.0, 2.0)
    ...                            for a in v])[None, :] for m, v in acc.items()}
    >>> ctx = np.repeat(["X", "Y", "Z"], 10)[None, :]
    >>> res = context_tau(local_pairs(orig, pert, context=ctx), n_resamples=0)
    >>> np.round(res.tau, 4).tolist()
    [[1.0, 1.0, -1.0], [1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]
    >>> res.clusters.tolist()
    [1, 1, 2]
    """
    pairs = _check_pairs(pairs, "context_tau")
    average = _check_options(average, ties)
    symmetric, additive = check_variant(variant)
    check_choice(correction, "correction", CORRECTIONS)
    B = check_int(n_resamples, "n_resamples", 0)
    cluster_threshold = check_number(cluster_threshold, "cluster_threshold", lo=-1, hi=1)
    if n_clusters is not None:
        check_int(n_clusters, "n_clusters")
    check_n_jobs(n_jobs)
    K, C = len(pairs.metrics), len(pairs.contexts)
    if K < 2:
        raise DataError(
            "the weighted tau compares rankings of metrics: give at least 2 metrics "
            f"(the pairs have {K}: {', '.join(pairs.metrics)})"
        )
    if C < 2:
        raise DataError(
            f"context {pairs.category!r} has {C} context(s) with pairs; the weighted tau "
            "compares at least two"
        )
    w, wname = rank_weights(weigher, K)
    b = _blocks(pairs)
    num, den = _block_values(b, average, ties)
    values = np.ascontiguousarray(np.concatenate([num, den], axis=0).T)  # (nb, 2K)
    nb = values.shape[0]
    if symmetric:
        I, J = np.triu_indices(C, 1)
    else:
        I, J = np.nonzero(~np.eye(C, dtype=bool))
    I = I.astype(np.int64)
    J = J.astype(np.int64)
    lab0 = b.context.astype(np.int64)  # block -> context, sorted
    A_obs = _snap(
        _accuracies(_wtau.label_sums_numpy(values, lab0[None], C), K)
    )  # (1, C, K)
    t_obs = tau_batch(A_obs, I, J, w, symmetric, additive)[0]
    diag = tau_batch(A_obs, np.arange(C), np.arange(C), w, symmetric, additive)[0]
    fin = np.isfinite(A_obs[0])
    n_met = (fin[:, None, :] & fin[None, :, :]).sum(-1)
    tau = np.full((C, C), np.nan)
    tau[I, J] = t_obs
    if symmetric:
        tau[J, I] = t_obs
    tau[np.arange(C), np.arange(C)] = diag
    stat = float(_mean_tau(t_obs))
    # warnings for undefined pairs
    undefined = ~np.isfinite(t_obs)
    if undefined.any():
        few = undefined & (n_met[I, J] < 2)
        const = undefined & ~few
        if const.any():
            cc = sorted(
                {pairs.contexts[c] for c in range(C) if not np.isfinite(diag[c])}
            )
            warnings.warn(
                f"weighted tau undefined for {int(const.sum())} context pair(s): the "
                f"metrics' accuracies are all equal in context(s) {', '.join(cc[:10])}"
                f"{' ...' if len(cc) > 10 else ''} (counted in n_undefined)",
                ConstantInputWarning,
                stacklevel=user_stacklevel(),
            )
        if few.any():
            warnings.warn(
                f"weighted tau undefined for {int(few.sum())} context pair(s) sharing fewer "
                "than two metrics with a defined accuracy (counted in n_undefined)",
                TooFewPairsWarning,
                stacklevel=user_stacklevel(),
            )
    ss, tag = _rs.seed_sequence(rng)
    null = np.empty((B, I.size))
    null_stat = np.empty(B)
    if B:
        chunk = max(1, min(256, 2_000_000 // max(1, nb)))
        units = [(s, min(B, s + chunk)) for s in range(0, B, chunk)]

        def work(unit):
            s, e = unit
            gen = _rs.named_generator(ss, "local-tau", str(s // chunk))
            labels = _rs.permuted_copies(gen, e - s, lab0)
            sums = (
                _wtau.label_sums
                if use_kernels((e - s) * nb * values.shape[1])
                else _wtau.label_sums_numpy
            )
            A = _snap(_accuracies(sums(values, labels, C), K))
            t = tau_batch(A, I, J, w, symmetric, additive)
            return t, _mean_tau(t)

        for (s, e), (t, m) in zip(units, run_units(work, units, n_jobs=n_jobs)):
            null[s:e] = t
            null_stat[s:e] = m
        pv = np.array(
            [resampling_pvalue(null[:, p], t_obs[p], "less") for p in range(I.size)]
        )
        p_stat = resampling_pvalue(null_stat, stat, "less")
    else:
        pv = np.full(I.size, np.nan)
        p_stat = math.nan
    pva = adjust_pvalues(pv, method=correction)
    P = np.full((C, C), np.nan)
    PA = np.full((C, C), np.nan)
    P[I, J], PA[I, J] = pv, pva
    if symmetric:
        P[J, I], PA[J, I] = pv, pva
    clusters, order, Z = _cluster(tau, cluster_threshold, n_clusters)
    sig = make_signature(
        **pairs.signature_fields(),
        avg=average,
        ties=ties,
        method=("wtau", variant, wname),
        test="perm-blocks" if B else None,
        n=B if B else None,
        correction=correction,
        seed=tag if B else None,
        cluster=(
            "average",
            fmt_number(cluster_threshold) if n_clusters is None else f"k{n_clusters}",
        ),
    )
    return ContextTau(
        category=pairs.category,
        variant=variant,
        weigher=wname,
        average=average,
        ties=ties,
        statistic=stat,
        pvalue=p_stat,
        n_resamples=B,
        n_undefined=int(undefined.sum()),
        correction=correction,
        n_clusters=int(clusters.max()),
        cluster_threshold=cluster_threshold,
        signature=sig,
        metrics=pairs.metrics,
        contexts=pairs.contexts,
        accuracy=A_obs[0],
        tau=tau,
        n_metrics=n_met,
        pvalues=P,
        pvalues_adjusted=PA,
        clusters=clusters,
        order=order,
        linkage=Z,
        pair_index=np.stack([I, J]),
        null_distribution=null,
        null_statistic=null_stat,
        weights=w,
    )


# --------------------------------------------------------------------------
# plots: views in metaeval.report.figures; these names stay for the documented API


def plot_local_accuracy(acc, *, metrics=None, contexts=None, groups=None, ci=False, title=None):
    """Line plot of local accuracy per metric across contexts (paper 004, Figures 1a-3a) (a view: drawn by :func:`metaeval.report.figures.plot_local_accuracy`)."""
    from .report.figures import plot_local_accuracy as _draw

    return _draw(acc, metrics=metrics, contexts=contexts, groups=groups, ci=ci, title=title)


def plot_context_tau(tau, *, ordered=True, title=None):
    """Heatmap of the weighted tau between contexts (paper 004, Figures 1b-3b) (a view: drawn by :func:`metaeval.report.figures.plot_context_tau`)."""
    from .report.figures import plot_context_tau as _draw

    return _draw(tau, ordered=ordered, title=title)


__all__ = [
    "AVERAGES",
    "CHI2_TESTS",
    "PAIR_CONTEXTS",
    "TIES",
    "WTAU_VARIANTS",
    "Chi2Test",
    "ContextChi2",
    "ContextTau",
    "LocalAccuracy",
    "LocalPairs",
    "context_chi2",
    "context_tau",
    "local_accuracy",
    "local_pairs",
    "plot_context_tau",
    "plot_local_accuracy",
    "weighted_tau",
]
