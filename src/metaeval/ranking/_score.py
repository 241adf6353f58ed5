"""Score runs per query with ir-measures into a metric-only :class:`~metaeval.Dataset`."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from importlib import metadata

import numpy as np
import pandas as pd

from .._signature import make_signature
from ..data import Dataset
from ..errors import DataError, MissingQueriesWarning, ParameterError
from ._trec import Qrels, Run, read_qrels, read_run

#: The measures of seed paper 004 (Table 2), in ir-measures names.
DEFAULT_MEASURES = (
    "AP", "Rprec", "RR",
    "IPrec@0.0", "IPrec@0.1", "IPrec@0.2", "IPrec@0.3", "IPrec@0.4",
    "P@5", "P@10", "P@15", "P@20", "P@30",
    "R@5", "R@10", "R@15", "R@20", "R@30",
    "nDCG@5", "nDCG@10", "nDCG@15", "nDCG@20", "nDCG@30",
)  # fmt: skip

#: ``missing_queries=`` choices.
MISSING_QUERIES = {
    "zero": "a judged query absent from a run scores the measure's default (0), as ir-measures "
            "and trec_eval -c do",
    "nan": "a judged query absent from a run is a missing (NaN) cell, as trec_eval without -c "
           "(which averages over the queries a run answers)",
}

#: Measures whose relevance threshold ``rel=`` applies (binary relevance).
_BINARY = ("AP", "Rprec", "RR", "IPrec", "P", "R", "SetP", "SetR", "SetF", "Success")



def _ir_measures():
    try:
        import ir_measures
    except ImportError as exc:
        raise ImportError(
            f"ranking measures need the 'ir-measures' package ({exc}); install it with "
            "pip install 'metaeval[ranking]'"
        ) from exc
    return ir_measures


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def parse_measures(measures, *, rel: int = 1) -> list:
    """ir-measures measure objects from names (``"P@10"``, ``"nDCG@5"``, ``"AP(rel=2)"``...).

    ``rel`` is the relevance threshold given to every binary measure whose
    name does not set one (relevance >= ``rel`` is relevant); graded
    measures (nDCG) use the relevance values as gains and ignore it.
    """
    ir_measures = _ir_measures()
    if isinstance(rel, bool) or not isinstance(rel, (int, np.integer)):
        raise ParameterError(f"rel={rel!r} must be an int (the lowest relevant grade)")
    if isinstance(measures, str):
        measures = [measures]
    try:
        measures = list(measures)
    except TypeError:
        raise ParameterError(f"measures={measures!r} must be a list of measure names") from None
    if not measures:
        raise ParameterError("measures is empty; name at least one (e.g. 'AP', 'nDCG@10')")
    out = []
    for m in measures:
        if isinstance(m, str):
            try:
                m = ir_measures.parse_measure(m)
            except (NameError, ValueError, TypeError) as exc:
                raise ParameterError(
                    f"measure {m!r} is not an ir-measures measure ({exc}); write e.g. 'AP', "
                    f"'P@10', 'nDCG@10', 'IPrec@0.1', 'R(rel=2)@100'; the defaults are "
                    f"{', '.join(DEFAULT_MEASURES)}"
                ) from None
        elif not hasattr(m, "NAME"):
            raise ParameterError(f"measure {m!r} is neither a name nor an ir-measures measure")
        if m.NAME in _BINARY and "rel" not in m.params and int(rel) != 1:
            m = m(rel=int(rel))
        out.append(m)
    names = [str(m) for m in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ParameterError(f"measures repeat: {', '.join(dup)}")
    return out


def _provider(name: str):
    ir_measures = _ir_measures()
    registry = ir_measures.providers.registry
    if name not in registry:
        raise ParameterError(f"provider={name!r}; ir-measures has {', '.join(sorted(registry))}")
    provider = registry[name]
    if not provider.is_available():
        raise ParameterError(
            f"ir-measures provider {name!r} is not installed here: {provider.install_instructions()}"
        )
    return provider


_PROVIDER_DIST = {"pytrec_eval": "pytrec-eval-terrier"}


def measure_signature(measure, *, provider: str = "pytrec_eval", missing_queries: str = "zero",
                      cache: bool = False) -> str:
    """The reproducibility line of one measure column.

    ``cache=True`` gives the cache signature (no missing-query rule and no
    metaeval version: cached values are per evaluated query).
    """
    fields = {"metric": str(measure)}
    if getattr(measure, "NAME", None) in _BINARY:
        fields["rel"] = measure.params.get("rel", 1)
    if not cache:
        fields["missing"] = missing_queries
    fields["provider"] = provider
    fields["ir-measures"] = _version("ir-measures")
    dist = _PROVIDER_DIST.get(provider)
    if dist:
        fields[dist] = _version(dist)
    sig = make_signature(**fields)
    return sig.rsplit("|metaeval:", 1)[0] if cache else sig


def _as_runs(runs) -> list[Run]:
    if isinstance(runs, (Run, str, os.PathLike)):
        runs = [runs]
    if isinstance(runs, Mapping):
        items = []
        for key, r in runs.items():
            r = read_run(r, name=str(key)) if isinstance(r, (str, os.PathLike)) else r
            if not isinstance(r, Run):
                raise ParameterError(f"runs[{key!r}] is a {type(r).__name__}, not a Run or path")
            if r.name != key:
                raise ParameterError(f"runs[{key!r}] is a run named {r.name!r}; keys must be names")
            items.append(r)
    else:
        try:
            seq = list(runs)
        except TypeError:
            raise ParameterError("runs must be a Run, a path, or a list or mapping of them") from None
        items = [read_run(r) if isinstance(r, (str, os.PathLike)) else r for r in seq]
        bad = [type(r).__name__ for r in items if not isinstance(r, Run)]
        if bad:
            raise ParameterError(f"runs holds {bad[0]} objects; give Run objects or paths")
    if not items:
        raise ParameterError("runs is empty")
    names = [r.name for r in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ParameterError(f"two runs share the name(s) {', '.join(dup)}; rename one")
    pert = {r.perturbation for r in items}
    if len(pert) > 1:
        raise ParameterError(
            "runs mix perturbations (or perturbed and original runs); score them separately"
        )
    return items


def _as_qrels(qrels) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_qrels(qrels)
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise ParameterError(f"qrels is a {type(qrels).__name__}; give a Qrels, a path or a dict")


def coverage(runs, qrels) -> pd.DataFrame:
    """How runs and qrels overlap, per run.

    Returns
    -------
    DataFrame
        One row per run: ``run``, ``n_queries`` (in the run),
        ``n_judged`` (queries of the qrels), ``n_evaluated`` (in both, with
        a ranked list),
        ``n_missing`` (judged, not in the run: 0 or NaN, see
        ``missing_queries``), ``n_unjudged`` (in the run, not judged: not
        evaluated), ``n_skipped`` (not changed by a perturbation),
        ``n_reordered`` (queries whose file ranks disagree with the
        evaluation order), ``n_no_relevant`` (judged queries without a
        document of relevance >= 1: every measure is 0 on them).
    """
    items, q = _as_runs(runs), _as_qrels(qrels)
    judged = set(q.queries)
    no_rel = sum(q.n_relevant(x) == 0 for x in q.queries)
    rows = []
    for r in items:
        have, skipped = set(r.queries), set(r.skipped)  # a skipped query was in the original
        rows.append({
            "run": r.name, "n_queries": len(have | skipped), "n_judged": len(judged),
            "n_evaluated": len(have & judged), "n_missing": len(judged - have - skipped),
            "n_unjudged": len((have | skipped) - judged),
            "n_skipped": sum(x in judged for x in r.skipped),
            "n_reordered": r.n_reordered, "n_no_relevant": no_rel,
        })
    return pd.DataFrame(rows)


def _check_contexts(contexts, systems, inputs) -> pd.DataFrame | None:
    if contexts is None:
        return None
    if not isinstance(contexts, pd.DataFrame):
        raise ParameterError(
            f"contexts must be a DataFrame keyed by 'input' (query id) and/or 'system', got "
            f"{type(contexts).__name__}"
        )
    ctx = contexts.rename(columns=str)
    if "input" not in ctx.columns and "query_id" in ctx.columns:
        ctx = ctx.rename(columns={"query_id": "input"})
    keys = [k for k in ("system", "input") if k in ctx.columns]
    if not keys:
        raise DataError(
            "contexts needs an 'input' (or 'query_id') and/or a 'system' column; its columns "
            f"are {', '.join(map(repr, ctx.columns))}"
        )
    keep = np.ones(len(ctx), dtype=bool)
    known = {"system": set(systems), "input": set(inputs)}
    for k in keys:
        ctx[k] = [_id_str(v) for v in ctx[k]]
        keep &= ctx[k].isin(known[k]).to_numpy()
    if len(ctx) and not keep.any():
        raise DataError(
            f"no row of contexts matches the runs' {' and '.join(keys)} ids (e.g. "
            f"{ctx[keys[0]].iloc[0]!r} against {sorted(known[keys[0]])[:3]}); check the id "
            "column (read the file with dtype=str)"
        )
    # annotation files usually cover more topics than are judged: rows of unevaluated
    # queries/runs are dropped
    return ctx[keep].reset_index(drop=True)


def _id_str(v) -> str:
    """An id as str: integer-valued floats (ids read as numbers) lose their ``.0``."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def score_runs(
    runs,
    qrels,
    measures: Sequence = DEFAULT_MEASURES,
    *,
    rel: int = 1,
    missing_queries: str = "zero",
    contexts: pd.DataFrame | None = None,
    cache_dir=None,
    provider: str = "pytrec_eval",
    name: str | None = None,
    provenance: str | None = None,
) -> Dataset:
    """Score every query of every run with ir-measures: a metric-only dataset.

    Parameters
    ----------
    runs : Run, path, or a list or mapping of them
        The systems (a mapping's keys must be the runs' names).  Paths are
        read with :func:`read_run`.  All runs must be original, or all
        perturbed the same way.
    qrels : Qrels, path or dict
        Relevance judgments (:func:`read_qrels`).
    measures : sequence of str
        ir-measures names; default :data:`DEFAULT_MEASURES` (seed paper 004:
        AP, Rprec, RR, IPrec@0.0-0.4, P, R and nDCG at 5, 10, 15, 20, 30).
        Each becomes a metric column named ``str(measure)``.
    rel : int
        Lowest relevant grade for the binary measures (AP, Rprec, RR, IPrec,
        P, R) whose name sets none; trec_eval's default is 1.  TREC DL passage
        conventions use 2.  nDCG uses the grades as gains.
    missing_queries : {"zero", "nan"}
        A judged query absent from a run: ``"zero"`` (default) scores the
        measure's default value 0, as ir-measures (and ``trec_eval -c``) do,
        so a system's mean over inputs equals ``ir_measures.calc_aggregate``;
        ``"nan"`` leaves the cell missing.  For perturbed runs such cells
        are always NaN (there was nothing to perturb).
    contexts : DataFrame, optional
        Context labels keyed by ``input`` (or ``query_id``) and/or
        ``system``, e.g. query types or user activity bands
        (:func:`quantile_bands`).  Rows of queries or runs that are not in
        the dataset are dropped.
    cache_dir : str or Path or ScoreCache, optional
        Folder of the on-disk cache (:class:`metaeval.textmetrics.ScoreCache`,
        the same SQLite file as the text metrics).  A value is keyed by the
        measure's cache signature (measure, provider, library versions) and a
        hash of the query's ranked document ids plus its judgments, so a
        rerun, or a run that shares ranked lists with one scored before,
        reuses finished values.
    provider : str
        The ir-measures provider (default ``"pytrec_eval"``: trec_eval's
        code through pytrec-eval-terrier).
    name, provenance : str, optional
        Dataset name and provenance text (the scoring details are appended).

    Returns
    -------
    Dataset
        Runs x judged queries (qrels order), ``human=()``, one metric column
        per measure, contexts as given.  Its provenance lists the measure
        signatures, the runs' and qrels' fingerprints and the perturbation.

    Warns
    -----
    MissingQueriesWarning
        When a run lacks judged queries or has queries without judgments
        (:func:`coverage` gives the counts).

    Examples
    --------
    >>> from metaeval.ranking import Qrels, Run, score_runs
    >>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2, "d4": 1}})
    >>> run = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d5": 0.5}}, name="A")
    >>> ds = score_runs([run], qrels, ["AP", "P@2", "nDCG@3"])
    >>> ds.metrics, ds.scores("AP").round(4), ds.scores("P@2")
    (('AP', 'P@2', 'nDCG@3'), array([[0.5556]]), array([[0.5]]))
    """
    from ..textmetrics import ScoreCache

    ms = parse_measures(measures, rel=rel)
    if missing_queries not in MISSING_QUERIES:
        raise ParameterError(
            f"missing_queries={missing_queries!r}; choose one of {', '.join(MISSING_QUERIES)}"
        )
    items, q = _as_runs(runs), _as_qrels(qrels)
    prov = _provider(provider)
    unsupported = [str(m) for m in ms if not prov.supports(m)]
    if unsupported:
        raise ParameterError(
            f"provider {provider!r} cannot compute {', '.join(unsupported)}; choose another "
            f"provider= or other measures (the defaults are {', '.join(DEFAULT_MEASURES)})"
        )
    cache = None if cache_dir is None else (
        cache_dir if isinstance(cache_dir, ScoreCache) else ScoreCache(cache_dir))

    systems = [r.name for r in items]
    inputs = list(q.queries)
    n, m = len(systems), len(inputs)
    q_pos = {x: k for k, x in enumerate(inputs)}
    perturbed = items[0].perturbation is not None

    # cells to evaluate: (run index, query) with a ranked list and judgments
    todo_cells = [(i, x) for i, r in enumerate(items) for x in r.queries
                  if x in q_pos and x not in r.skipped]
    keys = {}
    qkeys = {x: q.query_key(x) for x in inputs}
    for i, x in todo_cells:
        keys[(i, x)] = _combine(items[i].ranking_key(x), qkeys[x])

    cols = [str(mm) for mm in ms]
    by_col = dict(zip(cols, ms))
    values = {c: np.full((n, m), np.nan) for c in cols}
    sigs = {c: measure_signature(mm, provider=provider, cache=True) for c, mm in zip(cols, ms)}
    # which (cell, measure) pairs still need computing
    need: dict[tuple[int, str], set[str]] = {}
    all_keys = list(dict.fromkeys(keys.values()))
    for col in cols:
        found = cache.get(sigs[col], all_keys) if cache is not None else {}
        grid = values[col]
        for i, x in todo_cells:
            hit = found.get(keys[(i, x)])
            if hit is not None and hit.shape == (1,):
                grid[i, q_pos[x]] = hit[0]
            else:
                need.setdefault((i, x), set()).add(col)
    # evaluate per run, only what is missing (all of a cell's missing measures at once)
    qrels_dict = q.to_dict()
    fresh: dict[str, dict[bytes, np.ndarray]] = {c: {} for c in cols}
    by_run: dict[int, list[str]] = {}
    for (i, x) in need:
        by_run.setdefault(i, []).append(x)
    for i, queries in by_run.items():
        wanted = [by_col[c] for c in cols if any(c in need[(i, x)] for x in queries)]
        names = {id(mm): str(mm) for mm in wanted}
        evaluator = prov.evaluator(wanted, {x: qrels_dict[x] for x in queries})
        sub = {}
        for x in queries:  # rank-based scores reproduce the stored order exactly
            docs, _ = items[i].rankings[x]
            sub[x] = {d: float(len(docs) - k) for k, d in enumerate(docs)}
        for metric in evaluator.iter_calc(sub):
            col = names.get(id(metric.measure)) or str(metric.measure)
            x = metric.query_id
            todo = need.get((i, x))
            if todo is not None and col in todo:
                v = float(metric.value)
                values[col][i, q_pos[x]] = v
                fresh[col][keys[(i, x)]] = np.array([v])
    if cache is not None:
        for col, vals in fresh.items():
            if vals:
                cache.put(sigs[col], vals)

    # judged queries a run lacks
    miss_counts, unjudged = {}, {}
    for i, r in enumerate(items):
        absent = [x for x in inputs if x not in r.rankings and x not in r.skipped]
        miss_counts[r.name] = len(absent)
        unjudged[r.name] = sum(x not in q_pos for x in (*r.queries, *r.skipped))
        if absent and missing_queries == "zero" and not perturbed:
            cols_idx = [q_pos[x] for x in absent]
            for mm in ms:
                values[str(mm)][i, cols_idx] = float(mm.DEFAULT)
    if any(miss_counts.values()) or any(unjudged.values()):
        parts = []
        for r in items:
            bits = []
            if miss_counts[r.name]:
                fill = "NaN" if (perturbed or missing_queries == "nan") else "0"
                bits.append(f"{miss_counts[r.name]} judged queries missing (scored {fill})")
            if unjudged[r.name]:
                bits.append(f"{unjudged[r.name]} unjudged queries not evaluated")
            if bits:
                parts.append(f"{r.name}: {', '.join(bits)}")
        warnings.warn(
            "runs and qrels cover different queries; " + "; ".join(parts[:6])
            + (f"; and {len(parts) - 6} more runs" if len(parts) > 6 else "")
            + " (see metaeval.ranking.coverage)",
            MissingQueriesWarning,
            stacklevel=2,
        )

    lines = [] if provenance is None else [provenance]
    lines.append(f"ranking measures per query, qrels {q.source or 'dict'} "
                 f"(fingerprint {q.fingerprint()}, {len(q)} judged queries, rel >= {rel} "
                 "relevant for binary measures)")
    lines.append("runs: " + ", ".join(f"{r.name} ({r.fingerprint()})" for r in items))
    if perturbed:
        lines.append(f"perturbation: {items[0].perturbation}")
    lines.extend(f"{c}: {measure_signature(mm, provider=provider, missing_queries=missing_queries)}"
                 for c, mm in zip(cols, ms))
    return Dataset(
        values, human=[], systems=systems, inputs=inputs, name=name,
        provenance="\n".join(lines), contexts=_check_contexts(contexts, systems, inputs),
    )


def _combine(a: bytes, b: bytes) -> bytes:
    import hashlib

    return hashlib.blake2b(a + b, digest_size=16).digest()
