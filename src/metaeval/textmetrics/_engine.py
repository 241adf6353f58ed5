"""The scoring engine: texts -> work items -> cache -> chunks -> aggregation.

One engine serves every adapter:

1. **Work items.**  For each cell (an output with its context), the pairs the
   adapter scores: one per reference (``multi_ref`` ``max``/``min``/``mean``),
   one with all references (``native``), or one with the source.  Identical
   items are scored once.
2. **Cache.**  Items already in the :class:`~metaeval.textmetrics.ScoreCache`
   under the adapter's cache signature are not scored again.
3. **Chunks.**  The remaining items are cut into chunks of
   ``metric.batch_size`` and scored through the one execution layer
   (:func:`metaeval._parallel.run_units`); each finished chunk is written to
   the cache at once, so an interrupted run loses at most the chunks in
   flight.
4. **Aggregation** over the references of a cell, with NaN for cells lacking
   a hypothesis or a context.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..stats.exact import masked_mean

from .._parallel import check_n_jobs, run_units
from ..errors import ParameterError
from ._base import TextMetric
from ._cache import ScoreCache, item_key


@dataclass
class Plan:
    """The work of one adapter over one list of cells."""

    metric: TextMetric
    mode: str  # "ref" (one item per reference), "native" (all references), "src"
    multi_ref: str | None  # resolved aggregation ("max", "min", "mean", "native") or None
    n_cells: int
    items: list = field(default_factory=list)  # (key, hypothesis, context), unique keys
    # "ref": (n_cells, R) item index, -1 where no reference; else (n_cells,) index, -1 = missing
    index: np.ndarray | None = None
    nrefs: object = None
    values: np.ndarray | None = None  # (n_items, k) once computed
    n_cached: int = 0
    n_computed: int = 0


def make_plan(metric: TextMetric, hypotheses, references, sources, *, multi_ref: str,
              order=None) -> Plan:
    """Work items of ``metric`` over cells.

    ``hypotheses[c]`` is a str or None; ``references[c]`` a tuple of str or
    None; ``sources[c]`` a str or None.  ``order`` is the cell order in which
    items are listed (items of cells sharing references next to each other
    let adapters reuse tokenizations within a chunk).
    """
    n = len(hypotheses)
    order = range(n) if order is None else order
    if metric.uses == "source":
        mode, agg = "src", None
    else:
        agg = metric.resolve_multi_ref(multi_ref)
        mode = "native" if agg == "native" else "ref"
    # "source+references" (COMET): one item per reference, its context the pair (source, reference)
    with_src = metric.uses == "source+references"
    if with_src and mode == "native":
        raise ParameterError(  # a bug in an adapter: it reads the source and claims a native score
            f"adapter {metric.kind!r} reads the source with each reference and has no "
            "multi_ref='native'"
        )
    key_mode = "srcref" if with_src else mode
    plan = Plan(metric=metric, mode=mode, multi_ref=agg, n_cells=n)
    positions: dict[bytes, int] = {}

    def add(hyp, ctx) -> int:
        key = item_key(key_mode, hyp, ctx)
        pos = positions.get(key)
        if pos is None:
            pos = positions[key] = len(plan.items)
            plan.items.append((key, hyp, ctx))
        return pos

    if mode == "ref":
        counts = [len(references[c]) if references[c] else 0 for c in range(n)]
        width = max(counts, default=0)
        index = np.full((n, max(width, 1)), -1, dtype=np.intp)
        for c in order:
            hyp, refs = hypotheses[c], references[c]
            if hyp is None or not refs or (with_src and sources[c] is None):
                continue
            for r, ref in enumerate(refs):
                index[c, r] = add(hyp, (sources[c], ref) if with_src else ref)
        present = [k for c, k in enumerate(counts)
                   if k and hypotheses[c] is not None and not (with_src and sources[c] is None)]
    else:
        contexts = sources if mode == "src" else references
        index = np.full(n, -1, dtype=np.intp)
        for c in order:
            hyp, ctx = hypotheses[c], contexts[c]
            if hyp is None or not ctx:
                continue
            index[c] = add(hyp, ctx)
        present = [len(references[c]) for c in range(n)
                   if mode == "native" and hypotheses[c] is not None and references[c]]
    if metric.uses in ("references", "source+references"):
        lo, hi = (min(present), max(present)) if present else (0, 0)
        plan.nrefs = lo if lo == hi else f"{lo}-{hi}"
    plan.index = index
    return plan


def _score_unit(unit):
    metric, hypotheses, contexts = unit
    return metric(hypotheses, contexts)


class _ChunkSink:
    """Receives finished chunks from :func:`run_units` (its checkpoint hook):
    stores them, writes them to the cache, and reports progress."""

    def __init__(self, plan: Plan, chunks, cache: ScoreCache | None, signature: str, report):
        self.plan, self.chunks, self.cache, self.signature = plan, chunks, cache, signature
        self.report = report

    def load(self, name):
        return False, None

    def save(self, name, result):
        rows = self.chunks[int(name)]
        self.plan.values[rows] = result
        if self.cache is not None:
            self.cache.put(self.signature, {self.plan.items[i][0]: result[j]
                                            for j, i in enumerate(rows)})
        self.plan.n_computed += len(rows)
        self.report(len(rows))


def run_plans(plans, *, cache: ScoreCache | None, n_jobs: int, progress) -> None:
    """Fill ``plan.values`` for every plan (cache first, then chunks)."""
    check_n_jobs(n_jobs)
    total = sum(len(p.items) for p in plans)
    done = [0]

    def report(k):
        done[0] += k
        if progress is not None:
            progress(done[0], total)

    for plan in plans:
        k = len(plan.metric.columns)
        plan.values = np.full((len(plan.items), k), np.nan)
        signature = plan.metric.cache_signature()
        todo = list(range(len(plan.items)))
        plan_cache = cache if plan.metric.cacheable else None
        if plan_cache is not None and plan.items:
            found = plan_cache.get(signature, (key for key, _, _ in plan.items))
            todo = []
            for i, (key, _, _) in enumerate(plan.items):
                hit = found.get(key)
                if hit is not None and hit.shape == (k,):
                    plan.values[i] = hit
                else:
                    todo.append(i)
            plan.n_cached = len(plan.items) - len(todo)
            if plan.n_cached:
                report(plan.n_cached)
        if not todo:
            continue
        size = plan.metric.chunk_size
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        units = [
            (plan.metric, [plan.items[i][1] for i in rows], [plan.items[i][2] for i in rows])
            for rows in chunks
        ]
        sink = _ChunkSink(plan, chunks, plan_cache, signature, report)
        run_units(_score_unit, units, n_jobs=n_jobs, names=[str(i) for i in range(len(units))],
                  checkpoint=sink)


def _reduce(values: np.ndarray, present: np.ndarray, how: str) -> np.ndarray:
    """Max/min/mean over axis 1 of (n, R, k) values where ``present`` (no warnings)."""
    ok = present & ~np.isnan(values)
    count = ok.sum(axis=1)
    if how == "mean":
        # correctly rounded: two cells whose references' scores have equal exact means tie
        return masked_mean(values, ok, axis=1)
    fill = -np.inf if how == "max" else np.inf
    red = np.where(ok, values, fill)
    out = red.max(axis=1) if how == "max" else red.min(axis=1)
    return np.where(count > 0, out, np.nan)


def cell_scores(plan: Plan) -> tuple[np.ndarray, np.ndarray | None]:
    """``(per-cell scores (n_cells, k), per-reference scores (n_cells, R, k) or None)``."""
    k = len(plan.metric.columns)
    if plan.mode == "ref":
        idx = plan.index
        present = idx >= 0
        per_ref = np.full(idx.shape + (k,), np.nan)
        per_ref[present] = plan.values[idx[present]]
        agg = _reduce(per_ref, present[:, :, None], plan.multi_ref)
        return agg, per_ref
    out = np.full((plan.n_cells, k), np.nan)
    ok = plan.index >= 0
    out[ok] = plan.values[plan.index[ok]]
    return out, None
