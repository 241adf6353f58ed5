"""`metaeval datasets` and `metaeval bench`."""

from __future__ import annotations

import click

from .. import _choices
from ..report import tables as _tables
from ._api import ApiOption, api_option, command
from ._data import FORMATS, _split, FORMAT_HELP
from ._output import _emit_csv, _emit_json, _show


@command(epilog="Example: metaeval datasets --format csv")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
@click.option("--fetch", "fetch_names", multiple=True, metavar="NAME",
              help="Download a registry dataset into the cache (once; checked against its pinned sha256) "
                   "and print its license and citation. Repeatable; 'all' fetches every one.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Cache folder (default: $METAEVAL_DATA, else ~/.cache/metaeval/datasets).")
@click.option("--base-url", default=None, metavar="URL",
              help="Mirror replacing the host of every download URL (default: $METAEVAL_DATA_URL).")
def datasets(fmt, fetch_names, cache_dir, base_url):
    """List the bundled and downloadable datasets, or fetch some (--fetch NAME)."""
    from ..data import list_datasets

    if fetch_names:
        from ..data import REGISTRY, fetch, get_entry

        names = list(REGISTRY) if "all" in fetch_names else list(dict.fromkeys(fetch_names))
        for n in names:
            get_entry(n)  # every name known before anything is downloaded
        for n in names:
            folder = fetch(n, cache_dir=cache_dir, base_url=base_url)
            click.echo(f"{n}\t{folder}")
        return
    from ..data import listing

    bundled = {d["name"]: d for d in list_datasets()}
    ds = [{**bundled.get(r["name"], {}), **r} for r in listing()]
    if fmt == "json":
        _emit_json(ds)
    elif fmt == "csv":
        import pandas as pd

        _emit_csv(pd.DataFrame(ds))
    else:
        cols = ["name", "task", "systems_x_inputs", "human", "raters", "texts", "license"]
        _show(_tables.datasets_table([{c: d[c] for c in cols} for d in ds]))
@command("bench", epilog="Example: metaeval bench --metric chrf --baselines bleu --datasets summeval "
                      "--n-resamples 50 --rng 0")
@click.option("--metric", default=None, metavar="SPEC",
              help="The metric: a text-metric name (metaeval score --list), a metric column of the datasets, "
                   "or module:function (a Python function taking a list of records, returning one score each).")
@click.option("--command", "command", default=None, metavar="CMD",
              help="The metric as a shell command: records as JSON Lines on stdin, one score per line on stdout.")
@click.option("--scores", "scores_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="The metric's scores computed elsewhere: CSV/TSV/JSONL with dataset, system, input, score.")
@click.option("--name", default=None, help="Column name of the metric (default: function, command or file name).")
@click.option("--baselines", default=None, help="Comma-separated baselines (text metrics, metric columns, "
              "module:function).")
@click.option("--datasets", "datasets_", default=None,
              help="Comma-separated datasets (default: every bundled and downloadable one; see metaeval datasets).")
@click.option("--needs", default="hypothesis", show_default=True,
              help="Texts the metric reads (hypothesis, source, references); datasets lacking one are skipped.")
@click.option("--level", "levels", default=None,
              help="Comma-separated levels (default: every level each dataset supports).")
@click.option("--method", default=None, help="Correlation coefficient (default: pearson).")
@click.option("--n-resamples", type=int, default=1000, show_default=True,
              help="Bootstrap draws of the intervals and permutation draws of the paired tests.")
@click.option("--confidence-level", type=float, default=0.95, show_default=True,
              help="Confidence level of the bootstrap intervals.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level of the clusters.")
@click.option("--clusters", type=click.Choice(_choices.WMT_CLUSTER_RULES), default="holm", show_default=True,
              help="holm: (count+1)/(n+1) one-sided p-values, Holm-corrected over each task's pairs (the rule "
                   "of compare, wmt and the report); mtme: mt-metrics-eval's exact rule, count/n uncorrected; "
                   "metaeval: (count+1)/(n+1) uncorrected.")
@click.option("--weights", "weighting", type=click.Choice(["data,human", "data", "equal"]), default="data,human",
              show_default=True, help="Task weights over datasets (see docs/bench.md).")
@click.option("--lower-is-better", "lower_is_better", default=None,
              help="Comma-separated metrics whose lower scores are better (negated before the analyses), or "
                   "'none' (default: names of lower-is-better text metrics such as TER, with a warning).")
@api_option("bench:bench", "rng")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Cache of the metric's scores (default: <dataset cache>/.bench).")
@click.option("--no-cache", is_flag=True, help="Do not cache the metric's scores.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Dataset cache (default: $METAEVAL_DATA, else ~/.cache/metaeval/datasets).")
@click.option("--base-url", default=None, metavar="URL", help="Download mirror (default: $METAEVAL_DATA_URL).")
@click.option("--n-jobs", "--jobs", "jobs", cls=ApiOption, aliases=("--jobs",), type=int, default=1, show_default=True, help="Worker processes, a positive integer (-1: one per core; datasets are the units).")
@click.option("--dask", default=None, help="Dask scheduler address: run the datasets on that cluster.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "latex", "json"]), default="table",
              show_default=True, help="table: ranking and per-task tables; csv/latex: the WMT-style table.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Also write an HTML report with the bench section (and its tables as CSV/LaTeX) here.")
def bench_cmd(metric, command, scores_file, name, baselines, datasets_, needs, levels, method, n_resamples,
              confidence_level, alpha, clusters, weighting, lower_is_better, rng, cache_dir, no_cache, data_dir,
              base_url, jobs, dask, fmt, out):
    """Rank a metric beside baselines on every human-judgment dataset (docs/bench.md)."""
    from ..bench import Command, ScoresFile, bench

    given = [x for x in (metric, command, scores_file) if x is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --metric, --command, --scores")
    spec = metric if metric is not None else (Command(command, name or "command") if command is not None
                                              else ScoresFile(scores_file, name))
    res = bench(spec, name=name, baselines=_split(baselines) or (), datasets=_split(datasets_),
                needs=_split(needs) or ("hypothesis",), levels=_split(levels), method=method,
                n_resamples=n_resamples, confidence_level=confidence_level, alpha=alpha, clusters=clusters,
                weighting=weighting, rng=rng, cache_dir=False if no_cache else cache_dir, data_dir=data_dir,
                lower_is_better=None if lower_is_better is None else (
                    "none" if lower_is_better.strip() == "none" else _split(lower_is_better)),
                base_url=base_url, n_jobs=jobs, dask=dask)
    if out is not None:
        from ..report import write

        write(res.report(command="metaeval bench"), out)
    if fmt == "json":
        _emit_json(res.to_dict())
    elif fmt in ("csv", "latex"):
        click.echo(res.table(fmt=fmt), nl=False)
    else:
        _show(_tables.bench_ranking_table(res), _tables.bench_tasks_table(res))
