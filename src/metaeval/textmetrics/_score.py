"""Public entry points: :func:`score`, :func:`add_scores`, :func:`score_texts`,
:func:`corpus_scores`, and the :class:`TextScores` result."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._signature import make_signature
from ..data import Dataset
from ..errors import DataError, ParameterError
from ._base import MULTI_REF, TextMetric, library_version
from ._cache import ScoreCache
from ._engine import cell_scores, make_plan, run_plans
from ._registry import get_metric

# ----------------------------------------------------------------------------- the result


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, repr=False)
class TextScores:
    """Scores of a dataset's outputs by one or more text metrics.

    Attributes
    ----------
    systems, inputs : tuple of str
        The dataset's labels (``N`` and ``M``).
    scores : mapping of str to ndarray
        One read-only ``(N, M)`` float64 array per score column; NaN where a
        cell has no hypothesis or no reference/source.
    signatures : mapping of str to str
        One reproducibility line per column, e.g.
        ``metric:bleu|case:mixed|eff:yes|tok:13a|smooth:exp|refs:11|multi:max|sacrebleu:2.6.0|metaeval:0.1.0``.
    multi_ref : mapping of str to str or None
        The aggregation over references used for each column (``"max"``,
        ``"min"``, ``"mean"``, ``"native"``; None for source-based scores).
    reference_scores : mapping of str to ndarray or None
        Per-reference scores, ``(N, M, R)`` (NaN-padded), for columns
        aggregated by metaeval; None for ``"native"`` and source-based ones.
    n_items, n_cached, n_computed : int
        Distinct work items (pairs) over all metrics, how many came from the
        cache and how many were scored in this call.
    n_missing : mapping of str to int
        Cells without a score, per column.
    """

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    scores: Mapping[str, np.ndarray] = field(repr=False)
    signatures: Mapping[str, str] = field(repr=False)
    multi_ref: Mapping[str, str | None] = field(repr=False)
    reference_scores: Mapping[str, np.ndarray | None] = field(repr=False, compare=False)
    n_items: int = 0
    n_cached: int = 0
    n_computed: int = 0
    n_missing: Mapping[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"TextScores({len(self.systems)} systems x {len(self.inputs)} inputs, "
            f"columns={self.columns!r}, n_items={self.n_items}, n_cached={self.n_cached}, "
            f"n_computed={self.n_computed})"
        )

    @property
    def columns(self) -> tuple[str, ...]:
        """The score columns, in the order the metrics were given."""
        return tuple(self.scores)

    def __getitem__(self, column: str) -> np.ndarray:
        try:
            return self.scores[column]
        except KeyError:
            raise KeyError(
                f"no score column {column!r}; the columns are {', '.join(self.scores)}"
            ) from None

    def to_frame(self) -> pd.DataFrame:
        """Tidy table: one row per column x system x input.

        Columns ``metric``, ``system``, ``input``, ``score``, ``signature``.
        """
        n, m = len(self.systems), len(self.inputs)
        sys_col = np.repeat(np.array(self.systems, dtype=object), m)
        inp_col = np.tile(np.array(self.inputs, dtype=object), n)
        frames = [
            pd.DataFrame({"metric": col, "system": sys_col, "input": inp_col,
                          "score": self.scores[col].reshape(-1), "signature": self.signatures[col]})
            for col in self.columns
        ]
        if not frames:
            return pd.DataFrame(columns=["metric", "system", "input", "score", "signature"])
        return pd.concat(frames, ignore_index=True)

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict: columns, signatures, counts (and the score matrices as nested lists
        with NaN as None if ``arrays``)."""
        d = {
            "columns": list(self.columns),
            "systems": list(self.systems),
            "inputs": list(self.inputs),
            "signatures": dict(self.signatures),
            "multi_ref": dict(self.multi_ref),
            "n_items": self.n_items,
            "n_cached": self.n_cached,
            "n_computed": self.n_computed,
            "n_missing": dict(self.n_missing),
        }
        if arrays:
            d["scores"] = {
                c: [[None if math.isnan(v) else float(v) for v in row] for row in a]
                for c, a in self.scores.items()
            }
        return d

    def attach(self, dataset: Dataset, *, replace: bool = False) -> Dataset:
        """A new :class:`~metaeval.Dataset` with these columns added as metrics.

        Parameters
        ----------
        dataset : Dataset
            Must have the same systems and inputs (any order).
        replace : bool
            Replace metric columns of the same name (default: an error).

        Raises
        ------
        DataError
            If labels differ, or a column exists (a human column is never
            replaced).
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a metaeval Dataset, got {type(dataset).__name__}")
        if set(dataset.systems) != set(self.systems) or set(dataset.inputs) != set(self.inputs):
            raise DataError(
                "attach: the dataset's systems or inputs differ from the scored ones; score "
                "this dataset, or subset it to the scored labels"
            )
        clash_h = [c for c in self.columns if c in dataset.human]
        clash_m = [c for c in self.columns if c in dataset.metrics]
        if clash_h or (clash_m and not replace):
            raise DataError(
                f"attach: column(s) {', '.join(map(repr, clash_h + clash_m))} already exist in "
                "the dataset; rename the metric (name=...)"
                + ("" if clash_h else " or pass replace=True")
            )
        s_idx = [self.systems.index(s) for s in dataset.systems]
        i_idx = [self.inputs.index(i) for i in dataset.inputs]
        ratings = {c: dataset.ratings(c) for c in dataset.columns if c not in clash_m}
        for c in self.columns:
            ratings[c] = self.scores[c][np.ix_(s_idx, i_idx)]
        return dataset._with(ratings)


# ----------------------------------------------------------------------------- inputs


def _is_missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _as_text(value, what: str, where) -> str | None:
    if _is_missing(value):
        return None
    if not isinstance(value, str):
        raise DataError(f"{what} at {where} is a {type(value).__name__} ({value!r}), not a str")
    return value


def _as_refs(value, what: str, where) -> tuple[str, ...] | None:
    if _is_missing(value):
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        refs = tuple(_as_text(v, what, where) for v in value)
        refs = tuple(r for r in refs if r is not None)
        return refs or None
    raise DataError(
        f"{what} at {where} is a {type(value).__name__} ({value!r}); give a str or a "
        "list/tuple of str"
    )


def _metrics_list(metrics) -> list[TextMetric]:
    if isinstance(metrics, (str, TextMetric)):
        metrics = [metrics]
    try:
        metrics = list(metrics)
    except TypeError:
        raise ParameterError(
            f"metrics={metrics!r} must be a registry name, an adapter, or a list of them"
        ) from None
    if not metrics:
        raise ParameterError("metrics is empty; name at least one (see list_metrics())")
    out = [get_metric(m) for m in metrics]
    seen: dict[str, str] = {}
    for m in out:
        for c in m.columns:
            if c in seen:
                raise ParameterError(
                    f"two metrics write the column {c!r}; give one of them another name= "
                    "(e.g. get_metric('rouge1', name='rouge1_nostem', use_stemmer=False))"
                )
            seen[c] = m.kind
    return out


def _cache(cache_dir) -> ScoreCache | None:
    if cache_dir is None or isinstance(cache_dir, ScoreCache):
        return cache_dir
    return ScoreCache(cache_dir)


def _check_progress(progress):
    if progress is not None and not callable(progress):
        raise ParameterError(
            f"progress={progress!r} must be None or a callable progress(done, total)"
        )


def dataset_texts(dataset: Dataset, *, hypothesis="hypothesis", references=None,
                  source="source", need_refs=True, need_source=False):
    """Per-cell (system-major) hypotheses, reference tuples and sources of a dataset."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a metaeval Dataset, got {type(dataset).__name__}")
    tx = dataset.texts
    if tx is None:
        raise DataError(
            "the dataset has no texts: build it with texts= (a DataFrame with system, input, "
            "hypothesis and references or source columns)"
        )
    cols = list(tx.columns)
    missing_keys = [k for k in ("system", "input") if k not in cols]
    if missing_keys:
        raise DataError(
            f"the dataset's texts lack the {' and '.join(missing_keys)} column(s): hypotheses "
            "are per system x input"
        )
    if references is None:
        references = next((c for c in ("references", "reference") if c in cols), "references")
    wanted = [hypothesis] + ([references] if need_refs else []) + ([source] if need_source else [])
    absent = [c for c in wanted if c not in cols]
    if absent:
        raise DataError(
            f"the dataset's texts have no column(s) {', '.join(map(repr, absent))}; they have "
            f"{', '.join(map(repr, cols))} (choose with hypothesis=, references=, source=)"
        )
    n, m = dataset.shape
    si = pd.Index(dataset.systems).get_indexer(tx["system"].astype(str))
    ii = pd.Index(dataset.inputs).get_indexer(tx["input"].astype(str))
    hyps: list = [None] * (n * m)
    refs: list = [None] * (n * m)
    srcs: list = [None] * (n * m)
    h_col = tx[hypothesis].tolist()
    r_col = tx[references].tolist() if need_refs else None
    s_col = tx[source].tolist() if need_source else None
    for row, (s, i) in enumerate(zip(si, ii)):
        cell = s * m + i
        where = f"(system {dataset.systems[s]!r}, input {dataset.inputs[i]!r})"
        hyps[cell] = _as_text(h_col[row], f"texts[{hypothesis!r}]", where)
        if need_refs:
            refs[cell] = _as_refs(r_col[row], f"texts[{references!r}]", where)
        if need_source:
            srcs[cell] = _as_text(s_col[row], f"texts[{source!r}]", where)
    return hyps, refs, srcs


# ----------------------------------------------------------------------------- scoring


def score(dataset: Dataset, metrics, *, multi_ref: str = "best", cache_dir=None,
          n_jobs: int = 1, progress=None, hypothesis: str = "hypothesis",
          references: str | None = None, source: str = "source") -> TextScores:
    """Score every output of a dataset with text metrics.

    Parameters
    ----------
    dataset : Dataset
        Its :attr:`~metaeval.Dataset.texts` must have ``system``, ``input`` and
        ``hypothesis`` columns plus ``references`` (a list or tuple of str per
        row) or ``reference`` (a str), and/or ``source`` for source-based
        metrics.
    metrics : str, TextMetric, or sequence of them
        Registry names (:func:`list_metrics`) or configured adapters
        (:func:`get_metric`, or the adapter classes).
    multi_ref : {"best", "max", "min", "mean", "native"}
        How the scores against several references become one: the best of
        the per-reference scores (``"best"``: the ``max``, or the ``min`` where
        lower is better, as for TER), their ``max``, ``min`` or ``mean``, or the library's own
        multi-reference score (``"native"``, see each adapter).  The default
        is ``"best"``.  Ignored by source-based metrics.
    cache_dir : str or Path or ScoreCache, optional
        Folder of the on-disk cache; scores found there are not computed
        again, and new ones are stored as each chunk finishes.  No cache by
        default.
    n_jobs : int
        Worker processes for the chunks (:mod:`metaeval._parallel`; ``-1``
        uses every core).  Model-based adapters load their model once per
        worker.
    progress : callable, optional
        ``progress(done, total)``, counted in distinct work items (pairs),
        called once for the cached items and after each chunk.
    hypothesis, references, source : str
        Text column names (``references=None`` takes ``references``, else
        ``reference``).

    Returns
    -------
    TextScores
        ``(N, M)`` score matrices with signatures; ``attach(dataset)`` adds
        them to the dataset.

    Raises
    ------
    ParameterError
        Unknown metric or option, ``multi_ref`` not allowed for a metric.
    DataError
        Missing texts or text columns, or non-text values in them.
    """
    metric_objs = _metrics_list(metrics)
    if not isinstance(multi_ref, str) or multi_ref not in MULTI_REF:
        raise ParameterError(f"multi_ref={multi_ref!r}; choose one of {', '.join(MULTI_REF)}")
    _check_progress(progress)
    need_refs = any(m.uses in ("references", "source+references") for m in metric_objs)
    need_src = any(m.uses in ("source", "source+references") for m in metric_objs)
    hyps, refs, srcs = dataset_texts(dataset, hypothesis=hypothesis, references=references,
                                     source=source, need_refs=need_refs, need_source=need_src)
    n, m = dataset.shape
    order = [s * m + i for i in range(m) for s in range(n)]  # input-major: shared references together
    plans = [make_plan(mt, hyps, refs, srcs, multi_ref=multi_ref, order=order) for mt in metric_objs]
    run_plans(plans, cache=_cache(cache_dir), n_jobs=n_jobs, progress=progress)
    scores, sigs, aggs, per_refs, missing = {}, {}, {}, {}, {}
    for plan in plans:
        values, per_ref = cell_scores(plan)
        for j, col in enumerate(plan.metric.columns):
            scores[col] = _readonly(values[:, j].reshape(n, m).copy())
            sigs[col] = plan.metric.signature(col, multi_ref=plan.multi_ref, nrefs=plan.nrefs)
            aggs[col] = plan.multi_ref
            per_refs[col] = None if per_ref is None else _readonly(
                per_ref[:, :, j].reshape(n, m, -1).copy())
            missing[col] = int(np.isnan(scores[col]).sum())
    return TextScores(
        systems=dataset.systems, inputs=dataset.inputs, scores=scores, signatures=sigs,
        multi_ref=aggs, reference_scores=per_refs,
        n_items=sum(len(p.items) for p in plans), n_cached=sum(p.n_cached for p in plans),
        n_computed=sum(p.n_computed for p in plans), n_missing=missing,
    )


def add_scores(dataset: Dataset, metrics, *, replace: bool = False, **options) -> Dataset:
    """``score(dataset, metrics, **options).attach(dataset, replace=replace)``.

    Returns a new :class:`~metaeval.Dataset` whose metric columns include the
    text metrics' columns, ready for :func:`metaeval.correlate`.
    """
    return score(dataset, metrics, **options).attach(dataset, replace=replace)


def score_texts(metric, hypotheses: Sequence[str], *, references=None, sources=None,
                multi_ref: str = "best", cache_dir=None, n_jobs: int = 1,
                progress=None) -> dict[str, np.ndarray]:
    """Score plain lists of texts with one metric.

    Parameters
    ----------
    metric : str or TextMetric
        A registry name or an adapter.
    hypotheses : sequence of str
        The outputs (None for a missing one: its score is NaN).
    references : sequence, optional
        Per hypothesis, a str or a sequence of str (reference-based metrics).
    sources : sequence of str, optional
        Per hypothesis, the source (source-based metrics, and metrics that read the
        source with each reference, such as COMET).
    multi_ref, cache_dir, n_jobs, progress
        As in :func:`score`.

    Returns
    -------
    dict of str to ndarray
        One float64 array of ``len(hypotheses)`` scores per output column.

    Examples
    --------
    >>> from metaeval.textmetrics import score_texts
    >>> out = score_texts("bleu", ["The cat sat on the mat."],
    ...                   references=[["The cat is sitting on the mat."]])
    >>> out["bleu"].round(2)
    array([42.38])
    """
    metric = get_metric(metric)
    if not isinstance(multi_ref, str) or multi_ref not in MULTI_REF:
        raise ParameterError(f"multi_ref={multi_ref!r}; choose one of {', '.join(MULTI_REF)}")
    _check_progress(progress)
    if isinstance(hypotheses, str):
        raise ParameterError("hypotheses must be a sequence of str, not one str")
    hyps = [_as_text(h, "hypotheses", f"position {j}") for j, h in enumerate(hypotheses)]
    n = len(hyps)
    refs = srcs = [None] * n
    if metric.uses in ("references", "source+references"):
        if references is None or len(references) != n:
            raise ParameterError(
                f"{metric.kind!r} scores against references: give references= with one entry "
                f"(a str or a list of str) per hypothesis ({n})"
            )
        refs = [_as_refs(r, "references", f"position {j}") for j, r in enumerate(references)]
    if metric.uses in ("source", "source+references"):
        if sources is None or len(sources) != n:
            raise ParameterError(
                f"{metric.kind!r} scores against the source: give sources= with one str per "
                f"hypothesis ({n})"
            )
        srcs = [_as_text(s, "sources", f"position {j}") for j, s in enumerate(sources)]
    plan = make_plan(metric, hyps, refs, srcs, multi_ref=multi_ref)
    run_plans([plan], cache=_cache(cache_dir), n_jobs=n_jobs, progress=progress)
    values, _ = cell_scores(plan)
    return {c: values[:, j].copy() for j, c in enumerate(metric.columns)}


def corpus_scores(dataset: Dataset, metric, *, hypothesis: str = "hypothesis",
                  references: str | None = None) -> pd.DataFrame:
    """Corpus-level score of each system (sacreBLEU's BLEU, chrF, chrF++, TER; jiwer's rates).

    The corpus score sums sufficient statistics over a system's segments
    (the convention of MT system-level BLEU; for the ASR rates, the edits
    and reference lengths are pooled, as jiwer does on lists), which differs from the mean of
    the sentence scores that :func:`score` gives per cell.  Cells without a
    hypothesis or references are left out.

    Returns
    -------
    DataFrame
        Columns ``system``, ``metric``, ``score``, ``n_segments``,
        ``signature``.
    """
    metric = get_metric(metric)
    if not hasattr(metric, "corpus_score"):
        raise ParameterError(
            f"corpus_scores needs a metric with a corpus-level score (bleu, chrf, chrf++, ter, "
            f"wer, mer, wil, wip, cer), got {metric.kind!r}"
        )
    hyps, refs, _ = dataset_texts(dataset, hypothesis=hypothesis, references=references)
    m = dataset.shape[1]
    rows = []
    for s, system in enumerate(dataset.systems):
        cells = [s * m + i for i in range(m) if hyps[s * m + i] is not None and refs[s * m + i]]
        value = (metric.corpus_score([hyps[c] for c in cells], [refs[c] for c in cells])
                 if cells else float("nan"))
        nrefs = sorted({len(refs[c]) for c in cells})
        fields = {"metric": metric.kind, **metric.corpus_options(),
                  "refs": (nrefs[0] if len(nrefs) == 1 else f"{nrefs[0]}-{nrefs[-1]}") if nrefs else 0,
                  "scope": "corpus", metric.library: library_version(metric.library)}
        rows.append({"system": system, "metric": metric.name, "score": value,
                     "n_segments": len(cells), "signature": make_signature(**fields)})
    return pd.DataFrame(rows, columns=["system", "metric", "score", "n_segments", "signature"])
