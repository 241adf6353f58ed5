"""``bench``: a metric on every human-judgment dataset of the registry, beside baselines.

The user's metric is one of

* a text-metric registry name or adapter (:mod:`metaeval.textmetrics`: ``"chrf"``, ``"bleu"``...),
* a Python callable or ``"module:function"`` taking a list of *records* and returning one
  score per record,
* a shell command (:class:`Command`) reading the records as JSON Lines on stdin and
  writing one score per line on stdout,
* a scores file (:class:`ScoresFile`: CSV, TSV or JSONL with ``dataset, system, input,
  score`` columns).

A record is a dict with ``dataset``, ``system``, ``input``, ``hypothesis`` and, where the
dataset has them, ``source`` and ``references`` (a list of str).  A dataset is scored only
if it has every text of ``needs`` (default ``("hypothesis",)``).  Scores of callables and
commands are cached per chunk of records (keyed by the metric's ``name`` and a hash of the
chunk), so an interrupted run resumes where it stopped.

Per dataset and human dimension, at every level the data support (``system``, ``input``,
``item``, ``global`` with at least 3 systems; ``input`` for a pairwise release, 2 systems
per input; ``global`` for one system): :func:`metaeval.correlate` gives each metric's
correlation with its bootstrap interval, and one :func:`metaeval.wmt.run_tasks` task per
(dataset, dimension, level) ranks the metrics into significance clusters from
:func:`metaeval.compare_all`'s paired permutation tests; the test of the metric against
each baseline is that pair's one-sided p-value.  Over datasets, the tasks are aggregated
as the WMT task sets are (:class:`metaeval.wmt.TaskSetResults`: weighted average of the
correlations rescaled to [0, 1] and of the cluster ranks, over the metrics present in
every task), by default with each dataset weighing the same and, within it, each
dimension.  Datasets are independent work units of the execution layer
(``n_jobs``/``dask``), and every task draws from a stream named after it, so the numbers
do not depend on the workers.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._choices import BENCH_TEXTS, BENCH_WEIGHTINGS
from ._escape import literal
from ._parallel import run_units
from .data import read_scores_table
from .errors import DataError, ParameterError

BENCH_LEVELS = ("system", "input", "item", "global")
WEIGHTINGS = BENCH_WEIGHTINGS
TEXT_FIELDS = BENCH_TEXTS
_CHUNK = 256


@dataclass(frozen=True)
class Command:
    """A shell command scoring records: JSON Lines on stdin, one score per line on stdout."""

    command: str
    name: str = "command"


@dataclass(frozen=True)
class ScoresFile:
    """Scores computed elsewhere: a CSV/TSV/JSONL file with ``dataset, system, input, score``."""

    path: str
    name: str | None = None


# ---------------------------------------------------------------------- metric sources
def _resolve_callable(spec):
    if callable(spec):
        return spec, getattr(spec, "__name__", "metric")
    mod, _, fn = spec.partition(":")
    try:
        obj = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as exc:
        raise ParameterError(f"metric {spec!r}: cannot import {fn!r} from module {mod!r} ({exc}); "
                             "give module:function importable from the current directory or PYTHONPATH "
                             "(option --metric)") from None
    if not callable(obj):
        raise ParameterError(f"metric {spec!r} is not callable (option --metric)")
    return obj, fn


def _source_kind(spec) -> str:
    from .textmetrics import TextMetric

    if isinstance(spec, (Command, ScoresFile)):
        return "command" if isinstance(spec, Command) else "file"
    if isinstance(spec, TextMetric):
        return "textmetric"
    if callable(spec):
        return "function"
    if isinstance(spec, str) and ":" in spec:
        return "function"
    if isinstance(spec, str):
        return "textmetric_or_column"
    raise ParameterError(f"metric {spec!r}: give a text-metric name, module:function, a callable, "
                         "Command(...) or ScoresFile(...)")


def _records(ds, name: str, needs) -> list[dict] | None:
    """The scoring records of a dataset (cells with a hypothesis), or None if it lacks a needed text."""
    tx = ds.texts
    if tx is None:
        return None
    cols = set(tx.columns)
    refcol = "references" if "references" in cols else ("reference" if "reference" in cols else None)
    have = {"hypothesis": "hypothesis" in cols, "source": "source" in cols, "references": refcol is not None}
    if not all(have.get(n, False) for n in needs):
        return None
    out = []
    for row in tx.itertuples(index=False):
        r = row._asdict()
        hyp = r.get("hypothesis")
        if not isinstance(hyp, str):
            continue
        rec = {"dataset": name, "system": str(r["system"]), "input": str(r["input"]), "hypothesis": hyp}
        if have["source"] and isinstance(r.get("source"), str):
            rec["source"] = r["source"]
        if refcol is not None:
            v = r.get(refcol)
            refs = [v] if isinstance(v, str) else [x for x in (v or ()) if isinstance(x, str)]
            if refs:
                rec["references"] = refs
        if all(n in rec for n in needs):
            out.append(rec)
    return out


def _chunk_key(metric_key: str, chunk: list[dict]) -> str:
    h = hashlib.sha256(metric_key.encode())
    h.update(json.dumps(chunk, sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()


def _as_scores(values, n: int, who: str) -> np.ndarray:
    try:
        arr = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{who}: a score is not a number ({exc})") from None
    if arr.shape != (n,):
        raise DataError(f"{who} returned {arr.shape[0] if arr.ndim == 1 else arr.shape} scores for {n} records")
    return arr


def _run_command(cmd: str, chunk: list[dict], who: str) -> np.ndarray:
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chunk)
    try:
        proc = subprocess.run(shlex.split(cmd), input=payload, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ParameterError(f"{who}: cannot run {cmd!r} ({exc}) (option --command)") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [""])[-1]
        raise DataError(f"{who}: {cmd!r} exited with status {proc.returncode}: {tail}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return _as_scores([None if ln.strip().lower() in ("nan", "none", "null") else ln for ln in lines],
                      len(chunk), f"{who} ({cmd!r})")


def _score_records(fn: Callable | str, records: list[dict], metric_key: str, cache: Path | None,
                   who: str) -> np.ndarray:
    """Score records in chunks, each cached as soon as it is done (resumable)."""
    out = np.full(len(records), np.nan)
    for start in range(0, len(records), _CHUNK):
        chunk = records[start:start + _CHUNK]
        path = None
        if cache is not None:
            path = cache / f"{_chunk_key(metric_key, chunk)}.json"
            if path.is_file():
                vals = json.loads(path.read_text())
                out[start:start + len(chunk)] = [np.nan if v is None else v for v in vals]
                continue
        if isinstance(fn, str):
            vals = _run_command(fn, chunk, who)
        else:
            vals = _as_scores(fn([dict(r) for r in chunk]), len(chunk), who)
        out[start:start + len(chunk)] = vals
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.part-{os.getpid()}")
            tmp.write_text(json.dumps([None if np.isnan(v) else float(v) for v in vals]))
            os.replace(tmp, path)
    return out


def _matrix(ds, records, values) -> np.ndarray:
    n, m = ds.shape
    X = np.full((n, m), np.nan)
    si = {s: i for i, s in enumerate(ds.systems)}
    ii = {s: j for j, s in enumerate(ds.inputs)}
    for r, v in zip(records, values):
        X[si[r["system"]], ii[r["input"]]] = v
    return X


class _Source:
    """One metric (the user's or a baseline) as a column to add to each dataset."""

    def __init__(self, spec, name: str | None, needs, cache_root: Path | None):
        self.spec = spec
        self.kind = _source_kind(spec)
        self.needs = tuple(needs)
        self.cache_root = cache_root
        self.fn = None
        if self.kind == "function":
            self.fn, default = _resolve_callable(spec)
            qual = getattr(self.fn, "__qualname__", default)
            self.key = f"function:{spec}" if isinstance(spec, str) else \
                f"function:{getattr(self.fn, '__module__', '?')}.{qual}"
            if not isinstance(spec, str) and "<" in qual:  # a lambda or local function: no name of its own
                self.cache_root = None
        elif self.kind == "command":
            self.fn, default = spec.command, spec.name
            self.key = f"command:{spec.command}"
        elif self.kind == "file":
            self.table = read_scores_table(spec.path)
            default = spec.name or Path(spec.path).name.split(".")[0]
            self.key = f"file:{spec.path}"
        elif self.kind == "textmetric":
            default = spec.columns[0]
            self.key = f"textmetric:{spec.cache_signature()}"
        else:
            default = spec
            self.key = f"name:{spec}"
        self.name = name or default

    def column(self, ds, dsname: str):
        """The (N, M) scores of this source on ``ds``, or (None, reason)."""
        if self.kind == "textmetric_or_column" and self.spec in ds.metrics:
            return ds.scores(self.spec), None
        if self.kind == "file":
            rows = self.table[self.table["dataset"] == dsname]
            if rows.empty:
                found = sorted(map(str, self.table["dataset"].dropna().unique()))
                shown = ", ".join(map(repr, found[:8])) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
                return None, (f"no scores for dataset {dsname!r} in {self.spec.path}, whose dataset column has "
                              f"{shown or 'no label'} (the dataset column takes the registry names of "
                              "`metaeval datasets`; option --scores)")
            unknown = sorted(set(rows["system"]) - set(ds.systems))[:3] + \
                sorted(set(rows["input"]) - set(ds.inputs))[:3]
            if unknown:
                raise DataError(f"scores file {self.spec.path}: dataset {dsname!r} has no system/input "
                                f"{', '.join(map(repr, unknown))} (option --scores)")
            recs = rows.to_dict("records")
            return _matrix(ds, recs, [r["score"] for r in recs]), None
        if self.kind in ("textmetric", "textmetric_or_column"):
            from .textmetrics import get_metric, list_metrics, score

            metric = self.spec
            if isinstance(metric, str):
                if metric not in set(list_metrics()["name"]):
                    return None, f"{metric!r} is neither a metric column of {dsname!r} nor a text metric"
                metric = get_metric(metric)
            try:
                ts = score(ds, metric, cache_dir=None if self.cache_root is None else self.cache_root / "textmetrics")
            except DataError as exc:
                return None, str(exc).splitlines()[0]
            return ts.scores[metric.columns[0]], None
        recs = _records(ds, dsname, self.needs)
        if recs is None:
            return None, f"{dsname!r} lacks a text of {', '.join(self.needs)}"
        if not recs:
            return None, f"{dsname!r} has no record with {', '.join(self.needs)}"
        cache = None
        if self.cache_root is not None:
            cache = self.cache_root / "scores" / hashlib.sha256(self.key.encode()).hexdigest()[:16] / dsname
        vals = _score_records(self.fn, recs, self.key, cache, f"metric {self.name!r}")
        return _matrix(ds, recs, vals), None


# ---------------------------------------------------------------------- datasets and levels
def _dataset_names(datasets) -> list[str]:
    from .data import BUNDLED, REGISTRY

    known = [*BUNDLED, *REGISTRY]
    if datasets is None:
        return known
    names = [datasets] if isinstance(datasets, str) else list(datasets)
    bad = [n for n in names if n not in known]
    if bad:
        raise ParameterError(f"unknown dataset(s) {', '.join(map(repr, bad))}; choose from "
                             f"{', '.join(known)} (option --datasets)")
    return list(dict.fromkeys(names))


def _load(name: str, cache_dir, base_url, quiet):
    from .data import BUNDLED, REGISTRY, SUMMEVAL_DIMENSIONS, load_registry_dataset

    if name in BUNDLED:
        from .data import load_dataset

        return load_dataset(name), list(SUMMEVAL_DIMENSIONS) if name == "summeval" else None, None
    e = REGISTRY[name]
    ds = load_registry_dataset(name, form="dataset", cache_dir=cache_dir, base_url=base_url, quiet=quiet)
    if e.kind == "mtme":
        dims = [e.options["human"]]
    elif e.kind == "judge-bench-pairwise":
        dims = ["preference"]
    else:
        dims = list(e.dims)
    return ds, dims, e.levels


def supported_levels(shape) -> list[str]:
    """Levels a systems x inputs design supports: one system, ``global`` (``item`` would equal it);
    two systems (a pairwise release), ``input`` (agreement pair by pair); three or more, all four
    (``item`` needs at least 3 inputs)."""
    n, m = shape
    if n == 1:
        return ["global"]
    if n == 2:
        return ["input"]
    return [lv for lv in BENCH_LEVELS if lv != "item" or m >= 3]


def bench_ci(shape) -> str:
    """The bootstrap of the intervals: over systems and inputs (``boot-both``), except for a pairwise
    release (2 systems, the pair's two outputs), whose units are the pairs (``boot-inputs``: drawing
    one of two systems twice would leave no pair to correlate in half of the replicates)."""
    return "boot-inputs" if shape[0] == 2 else "boot-both"


# ---------------------------------------------------------------------- result
@dataclass(frozen=True)
class BenchResult:
    """What :func:`bench` returns.

    Attributes
    ----------
    metric : str
        The column name of the user's metric.
    baselines : tuple of str
    correlations : DataFrame
        ``dataset, human, level, metric, statistic, ci_low, ci_high, pvalue, n, signature``
        (:func:`metaeval.correlate`, one row per metric).
    tests : DataFrame
        ``dataset, human, level, metric, baseline, statistic, baseline_statistic, ahead, pvalue,
        significant, rank, baseline_rank``: the paired permutation test of the metric against each
        baseline; ``pvalue`` is the one-sided p-value that the one ``ahead`` (higher statistic) is
        better, as the clusters read it (Holm-adjusted over the task's pairs under ``clusters="holm"``),
        the one that forms the significance clusters (``rank``: cluster rank, 1 = top).
    tasks : metaeval.wmt.TaskSetResults
        One task per dataset x human dimension x level.
    weights : tuple of float
        One per task (``weighting``).
    weighting : str
    skipped : tuple of (str, str)
        Datasets or baselines left out, and why.
    signature : str
    shapes : dict
        Each dataset's (systems, inputs).
    seconds : float
        Wall-clock time of the run (scoring and analyses).
    """

    metric: str
    baselines: tuple
    correlations: pd.DataFrame = field(repr=False)
    tests: pd.DataFrame = field(repr=False)
    tasks: object = field(repr=False)
    weights: tuple
    weighting: str
    skipped: tuple
    signature: str
    shapes: dict = field(default_factory=dict)
    seconds: float = 0.0

    def ranking(self) -> pd.DataFrame:
        """Over datasets: ``metric, avg_corr, avg_rank`` then each task's statistic and rank
        (:meth:`metaeval.wmt.TaskSetResults.table_frame` with the bench's weights)."""
        return self.tasks.table_frame(list(self.weights))

    def table(self, *, fmt: str = "text", digits: int = 3) -> str:
        """The ranked table (text, CSV or LaTeX) of :meth:`metaeval.wmt.TaskSetResults.table`."""
        return self.tasks.table(list(self.weights), fmt=fmt, digits=digits)

    def to_frame(self) -> pd.DataFrame:
        """The per-task correlations with intervals (``correlations``)."""
        return self.correlations.copy()

    def to_dict(self) -> dict:
        return {"metric": self.metric, "baselines": list(self.baselines), "weighting": self.weighting,
                "ranking": self.ranking().to_dict("records"),
                "correlations": self.correlations.to_dict("records"), "tests": self.tests.to_dict("records"),
                "tasks": [r.to_dict() for r in self.tasks.results], "weights": list(self.weights),
                "skipped": [list(s) for s in self.skipped], "signature": self.signature}

    def report_section(self):
        """The bench as a section of metaeval's HTML report (a view:
        :func:`metaeval.report.bench_section`)."""
        from .report import bench_section

        return bench_section(self)

    def report(self, *, command: str | None = None):
        """A :class:`metaeval.report.Report` holding only :meth:`report_section` (write it with
        :func:`metaeval.report.write`; a view: :func:`metaeval.report.bench_report`)."""
        from .report import bench_report

        return bench_report(self, command=command)


# ---------------------------------------------------------------------- the unit: one dataset
def _bench_unit(u):
    from .correlation import correlate
    from .wmt import run_tasks

    name, ds, dims, metrics, levels, opt = u
    tasks = [bench_task(name, h, lv, opt["method"]) for h in dims for lv in levels]
    # one metric alone (no baseline on this dataset): nothing to test, its rank is 1
    n_tests = opt["n_resamples"] if len(metrics) >= 2 else 0
    ts = run_tasks(tasks, {name: ds}, metrics=metrics, n_resamples=n_tests, alpha=opt["alpha"],
                   clusters=opt["clusters"], rng=opt["ss"])
    frames = []
    for h in dims:
        cor = correlate(ds, h, metrics=metrics, level=levels, method=opt["method"], ci=bench_ci(ds.shape),
                        n_resamples=opt["n_resamples"], confidence_level=opt["confidence_level"], rng=opt["ss"])
        f = cor.to_frame()
        f.insert(0, "dataset", name)
        frames.append(f)
    return ts.results, pd.concat(frames, ignore_index=True)


def bench_task(dataset: str, human: str, level: str, method: str):
    """The :class:`metaeval.wmt.Task` of one dataset x human dimension x level (its ``lp``, the
    table's header, is ``dataset/human``; its name names its random stream)."""
    from .wmt import Task

    return Task(data=dataset, human=human, level=level, method=method, lp=f"{dataset}/{human}")


def _tests(results, metric, baselines, alpha) -> pd.DataFrame:
    rows = []
    for r in results:
        if metric not in r.metrics:
            continue
        iu = r.metrics.index(metric)
        for b in baselines:
            if b not in r.metrics:
                continue
            ib = r.metrics.index(b)
            i, j = min(iu, ib), max(iu, ib)
            p = float(r.better[i, j])
            rows.append({"dataset": r.task.data, "human": r.task.human, "level": r.task.level, "metric": metric,
                         "baseline": b, "statistic": float(r.statistics[iu]),
                         "baseline_statistic": float(r.statistics[ib]), "ahead": r.metrics[i], "pvalue": p,
                         "significant": bool(p <= alpha), "rank": int(r.ranks[iu]),
                         "baseline_rank": int(r.ranks[ib])})
    return pd.DataFrame(rows, columns=["dataset", "human", "level", "metric", "baseline", "statistic",
                                       "baseline_statistic", "ahead", "pvalue", "significant", "rank",
                                       "baseline_rank"])


def bench(
    metric=None,
    *,
    name: str | None = None,
    baselines: Sequence = (),
    datasets: Sequence[str] | None = None,
    needs: Sequence[str] = ("hypothesis",),
    levels: Sequence[str] | None = None,
    method: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    clusters: str = "holm",
    weighting: str = "data,human",
    lower_is_better=None,
    rng=None,
    cache_dir=None,
    data_dir=None,
    base_url: str | None = None,
    n_jobs: int = 1,
    dask=None,
    quiet: bool = False,
) -> BenchResult:
    """Score a metric on every registry dataset with the texts it needs and rank it beside baselines.

    Parameters
    ----------
    metric : str, callable, TextMetric, Command or ScoresFile
        The user's metric (see the module docstring): a text-metric name (``"chrf"``), a metric
        column of the datasets, ``"module:function"`` or a callable taking a list of records, a
        :class:`Command`, or a :class:`ScoresFile`.
    name : str, optional
        The metric's column name in the results (default: the function, command or file name).
    baselines : sequence
        Metrics of the same kinds to rank beside it (a metric column of a dataset, e.g.
        SummEval's ``"ROUGE.L"``, is used where the dataset has it).
    datasets : sequence of str, optional
        Registry names of the datasets (bundled and downloadable, listed by ``metaeval datasets``),
        downloaded once.  Default: all of them.
    needs : sequence of {"hypothesis", "source", "references"}
        The texts the metric reads (datasets lacking one are skipped, and the result says so in
        ``skipped``).
    levels : sequence of str, optional
        The grouping levels of the correlations (system, input, item, global).  Default: every
        level each dataset supports (:func:`supported_levels`: item needs 3 or more inputs).
    method : str, optional
        The correlation coefficient (default: metaeval's default, Pearson).
    n_resamples : int
        Bootstrap draws of the intervals and permutation draws of the paired tests.
    confidence_level : float
        Confidence level of the bootstrap intervals.
    alpha : float
        Significance level of the clusters (pairs whose p-value is at most alpha).
    clusters : {"holm", "mtme", "metaeval"}
        p-value rule of the significance clusters (:func:`metaeval.wmt.run_tasks`): ``holm``
        (default, the rule of ``compare``, ``compare_all``, the report and ``wmt``), Holm-corrected
        over each task's pairs; ``mtme``, mt-metrics-eval's exact rule; ``metaeval`` uncorrected.
    weighting : {"data,human", "data", "equal"}
        Task weights: each dataset the same and, within it, each human dimension
        (``"data,human"``), each dataset the same (``"data"``), or each task (``"equal"``);
        :meth:`metaeval.wmt.TaskSetResults.assign_weights`.
    lower_is_better : sequence of str or "none", optional
        Metrics (the metric's or a baseline's name) whose lower scores are better: their scores are
        negated before any analysis, so that a metric agreeing with the humans has a positive
        correlation and the rankings compare like with like.  Default: the names of lower-is-better
        text metrics (TER, WER, ...), announced with a warning (:mod:`metaeval.direction`).
    rng : seed
        The seed: anything :func:`numpy.random.default_rng` accepts.
    cache_dir : path or False, optional
        Cache folder of the metric's scores (default: ``<dataset cache>/.bench``; False: none).
    data_dir : path, optional
        Dataset cache folder (default: ``$METAEVAL_DATA``, else ``~/.cache/metaeval/datasets``;
        :func:`metaeval.load_dataset`).
    base_url : str, optional
        Download mirror replacing the scheme and host of every download URL (default:
        ``$METAEVAL_DATA_URL``).
    n_jobs : int
        Worker processes; the datasets are the work units (:func:`metaeval._parallel.run_units`).
    dask : optional
        A Dask client or scheduler address: run the datasets on that cluster.
    quiet : bool
        Do not print the downloaded datasets' licenses and citations.

    Returns
    -------
    BenchResult
    """
    from ._version import __version__
    from .data import cache_root
    from .stats import resampling as _rs
    from .stats.coefficients import DEFAULT_METHOD
    from .wmt import CLUSTER_RULES, TaskSetResults

    if metric is None:
        raise ParameterError("bench needs a metric (option --metric, --command or --scores)")
    method = DEFAULT_METHOD if method is None else method
    if weighting not in WEIGHTINGS:
        raise ParameterError(f"weighting={weighting!r}; choose one of {', '.join(WEIGHTINGS)} (option --weighting)")
    if clusters not in CLUSTER_RULES:
        raise ParameterError(f"clusters={clusters!r}; choose one of {', '.join(CLUSTER_RULES)}")
    bad = [n for n in needs if n not in TEXT_FIELDS]
    if bad:
        raise ParameterError(f"needs: unknown text(s) {', '.join(map(repr, bad))}; choose from "
                             f"{', '.join(TEXT_FIELDS)} (option --needs)")
    if levels is not None:
        levels = [levels] if isinstance(levels, str) else list(levels)
        badl = [lv for lv in levels if lv not in BENCH_LEVELS]
        if badl:
            raise ParameterError(f"levels: unknown {', '.join(map(repr, badl))}; choose from "
                                 f"{', '.join(BENCH_LEVELS)} (option --level)")
    names = _dataset_names(datasets)
    croot = None if cache_dir is False else (Path(cache_dir) if cache_dir is not None
                                            else cache_root(data_dir) / ".bench")
    user = _Source(metric, name, needs, croot)
    base_src = [_Source(b, None, needs, croot) for b in baselines]
    all_names = [user.name, *(b.name for b in base_src)]
    dupn = sorted({n for n in all_names if all_names.count(n) > 1})
    if dupn:
        raise ParameterError(f"metric and baselines share the name(s) {', '.join(map(repr, dupn))}; "
                             "rename with name= (option --name)")
    from .direction import resolve_lower_is_better

    if isinstance(lower_is_better, str):
        lower_is_better = () if lower_is_better == "none" else [lower_is_better]
    unknown = sorted(set(lower_is_better or ()) - set(all_names))
    if unknown:
        raise ParameterError(f"lower_is_better names {', '.join(map(repr, unknown))}, which is neither the metric "
                             f"nor a baseline ({', '.join(all_names)}) (option --lower-is-better)")
    negated = resolve_lower_is_better(all_names, lower_is_better)
    ss, seed_str = _rs.seed_sequence(rng)
    t0 = time.perf_counter()
    skipped = []
    units = []
    unknown_base = {b.name: [] for b in base_src}  # baseline -> metric columns of the datasets it is not in
    for dsname in names:
        ds, dims, meaningful = _load(dsname, data_dir, base_url, quiet)
        cols = {}
        col, why = user.column(ds, dsname)
        if col is None:
            skipped.append((dsname, why))
            continue
        cols[user.name] = col
        for b in base_src:
            bc, bwhy = b.column(ds, dsname)
            if bc is None:
                skipped.append((dsname, f"baseline {b.name!r}: {bwhy}"))
                if b.name in unknown_base and "is neither a metric column" in bwhy:
                    unknown_base[b.name].extend(ds.metrics)
                else:
                    unknown_base.pop(b.name, None)
            else:
                cols[b.name] = bc
                unknown_base.pop(b.name, None)
        cols = {c: (-v if c in negated else v) for c, v in cols.items()}
        work = ds.subset(metrics=[]) if ds.metrics else ds
        work = _attach(work, cols)
        ok = [x for x in supported_levels(ds.shape) if meaningful is None or x in meaningful]
        lv = ok if levels is None else [x for x in levels if x in ok]
        if not lv:
            skipped.append((dsname, f"supports none of the levels {', '.join(levels)}"))
            continue
        opt = {"method": method, "n_resamples": int(n_resamples), "alpha": alpha, "clusters": clusters,
               "confidence_level": confidence_level, "ss": ss}
        units.append((dsname, work, dims, list(cols), lv, opt))
    if not units:
        raise DataError("bench: no dataset left to score; " + "; ".join(f"{d}: {w}" for d, w in skipped))
    typos = unknown_base  # left: baselines found in no dataset that was scored
    if typos:
        # a baseline that is a column of no scored dataset and no text metric is a typo, not a skip
        import difflib

        name, cands = next(iter(typos.items()))
        close = difflib.get_close_matches(name, list(dict.fromkeys(cands)), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ParameterError(f"baseline {name!r} is neither a metric column of the datasets scored "
                             f"({', '.join(u[0] for u in units)}) nor a text metric{hint} (option --baselines)")
    outs = run_units(_bench_unit, units, n_jobs=n_jobs, dask=dask)
    results = tuple(r for res, _ in outs for r in res)
    tasks = TaskSetResults(results)
    weights = tuple(tasks.assign_weights([] if weighting == "equal" else weighting.split(",")))
    corr = pd.concat([f for _, f in outs], ignore_index=True)
    tests = _tests(results, user.name, [b.name for b in base_src], alpha)
    sig = (f"bench|metric:{literal(user.name)}|method:{method}|n:{int(n_resamples)}|cl:{confidence_level}|alpha:{alpha}"
           f"|clusters:{clusters}|weights:{weighting}|negated:{literal(','.join(negated)) or 'none'}|seed:{seed_str}"
           f"|metaeval:{__version__}")
    return BenchResult(metric=user.name, baselines=tuple(b.name for b in base_src), correlations=corr,
                       tests=tests, tasks=tasks, weights=weights, weighting=weighting, skipped=tuple(skipped),
                       signature=sig, shapes={u[0]: u[1].shape for u in units},
                       seconds=time.perf_counter() - t0)


def _attach(ds, cols: dict):
    """``ds`` with the metric columns ``cols`` ((N, M) arrays) added."""
    from .textmetrics import TextScores

    ts = TextScores(systems=ds.systems, inputs=ds.inputs, scores=cols, signatures={c: "" for c in cols},
                    multi_ref={c: None for c in cols}, reference_scores={c: None for c in cols},
                    n_items=0, n_cached=0, n_computed=0, n_missing={c: 0 for c in cols})
    return ts.attach(ds, replace=True)
