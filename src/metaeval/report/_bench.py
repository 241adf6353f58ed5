"""The HTML report of :func:`metaeval.bench.bench` (a view of its result)."""

from __future__ import annotations

from .._version import __version__
from ._build import Report
from ._model import Column, Section, Table


def _span(values) -> str:
    v = sorted(set(values))
    return "-" if not v else (str(v[0]) if len(v) == 1 else f"{v[0]}-{v[-1]}")


def bench_section(result):
    """A :class:`metaeval.bench.BenchResult` as a section of metaeval's HTML report."""
    rk = result.ranking()
    sec = Section(id="bench", title=f"Benchmark of {result.metric}",
                  intro=f"{len(result.tasks.results)} tasks (dataset x human dimension x level), weighted "
                        f"{result.weighting}; average correlation rescaled to [0, 1] and average "
                        "significance-cluster rank over the metrics present in every task.")
    sec.tables.append(Table(
        id="bench-ranking", title="Ranking over datasets",
        columns=[Column("metric", "metric", "text"), Column("avg_corr", "avg corr"),
                 Column("avg_rank", "avg rank")],
        rows=[[r["metric"], r["avg_corr"], r["avg_rank"]] for r in rk.to_dict("records")],
        signatures=[result.signature]))
    c = result.correlations
    sec.tables.append(Table(
        id="bench-correlations", title="Correlations per dataset, human dimension and level",
        columns=[Column("dataset", "dataset", "text"), Column("human", "human", "text"),
                 Column("level", "level", "text"), Column("metric", "metric", "text"),
                 Column("statistic", "statistic"), Column("ci", "95% CI", "ci"), Column("n", "n", "int")],
        rows=[[r["dataset"], r["human"], r["level"], r["metric"], r["statistic"],
               [r["ci_low"], r["ci_high"]], int(r["n"])] for r in c.to_dict("records")],
        signatures=sorted(set(c["signature"]))))
    t = result.tests
    sec.tables.append(Table(
        id="bench-tests", title=f"{result.metric} against each baseline (paired permutation test)",
        columns=[Column("dataset", "dataset", "text"), Column("human", "human", "text"),
                 Column("level", "level", "text"), Column("baseline", "baseline", "text"),
                 Column("ahead", "ahead", "text"), Column("pvalue", "p (one-sided)", "p")],
        rows=[[r["dataset"], r["human"], r["level"], r["baseline"], r["ahead"], r["pvalue"]]
              for r in t.to_dict("records")],
        signatures=[result.signature]))
    for d, why in result.skipped:
        sec.skip(f"{d}: {why}", part=True)
    sec.functions += ["metaeval.bench.bench", "metaeval.correlate", "metaeval.compare_all",
                      "metaeval.wmt.run_tasks"]
    return sec


def bench_report(result, *, command: str | None = None):
    """A :class:`Report` holding only :func:`bench_section` of a bench result (write it with
    :func:`metaeval.report.write`)."""
    datasets = list(dict.fromkeys(r.task.data for r in result.tasks.results))
    sig = dict(kv.split(":", 1) for kv in result.signature.split("|")[1:])
    meta = {"metaeval": __version__, "title": f"metaeval bench: {result.metric}", "command": command,
            "mode": "bench", "seed": sig.get("seed"),
            "config": {"metric": result.metric, "baselines": ", ".join(result.baselines),
                       "datasets": ", ".join(datasets), "method": sig.get("method"),
                       "n_resamples": sig.get("n"), "confidence_level": sig.get("cl"),
                       "alpha": sig.get("alpha"), "clusters": sig.get("clusters"),
                       "weights": result.weighting},
            "data": {"name": f"{len(datasets)} dataset(s): {', '.join(datasets)}",
                     "n_systems": _span(n for n, _ in result.shapes.values()),
                     "n_inputs": _span(m for _, m in result.shapes.values()),
                     "report_human": sorted({r.task.human for r in result.tasks.results}),
                     "report_metrics": [result.metric, *result.baselines]},
            "seconds_analyses": result.seconds, "estimate": None, "failures": [], "rules": []}
    return Report(sections=[bench_section(result)], meta=meta)
