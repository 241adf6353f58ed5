"""`metaeval datasets` and `metaeval bench`."""

from __future__ import annotations

import click

from .. import _choices
from ..report import tables as _tables
from ._api import api_option, api_options, command, given
from ._data import _LEVELS_HELP, FORMATS, _lower_is_better, _split, FORMAT_HELP
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
_BENCH = "bench:bench"


def _bench_levels(ctx, param, value):
    """--level: comma-separated command-line level names -> the API's (group-by-system -> item)."""
    from ._data import _levels_option

    return _split(_levels_option(ctx, param, value))


@command("bench", epilog="Example: metaeval bench --metric chrf --baselines bleu --datasets summeval "
                         "--n-resamples 50 --rng 0")
@click.option("--metric", default=None, metavar="SPEC",
              help="The metric: a text-metric name (listed by metaeval score --help), a metric column of the datasets, "
                   "or module:function (a Python function taking a list of records, returning one score each).")
@click.option("--command", "command", default=None, metavar="CMD",
              help="The metric as a shell command: records as JSON Lines on stdin, one score per line on stdout.")
@click.option("--scores", "scores_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="The metric's scores computed elsewhere: CSV/TSV/JSONL with dataset, system, input, score.")
@api_option(_BENCH, "name", when_absent="the function's name, the --scores file's name, or 'command' for --command")
@api_option(_BENCH, "baselines", type=list, metavar="NAME[,NAME]",
            help="Comma-separated baselines to rank beside the metric: text metrics, metric columns of the "
                 "datasets (e.g. ROUGE.L where a dataset has it), module:function.")
@api_option(_BENCH, "datasets", type=list, metavar="NAME[,NAME]",
            when_absent="every bundled and downloadable dataset")
@api_option(_BENCH, "needs", type=list, choices=_choices.BENCH_TEXTS)
@api_option(_BENCH, "levels", name="level", aliases=("--levels",), type=list, callback=_bench_levels,
            metavar="LEVEL[,LEVEL]", when_absent="every level each dataset supports", complete=tuple(_choices.LEVELS),
            help="Comma-separated grouping levels: " + _LEVELS_HELP + ".")
@api_option(_BENCH, "method", choices=_choices.METHODS, when_absent=_choices.DEFAULT_METHOD)
@api_options(_BENCH, "n_resamples", "confidence_level", "alpha", "clusters", "weighting",
             clusters=dict(strict_choices=_choices.WMT_CLUSTER_RULES,
                           help="holm: (count+1)/(n+1) one-sided p-values, Holm-corrected over each task's pairs "
                                "(the rule of compare, wmt and the report); mtme: mt-metrics-eval's exact rule, "
                                "count/n uncorrected; metaeval: (count+1)/(n+1) uncorrected."),
             weighting=dict(aliases=("--weights",), strict_choices=_choices.BENCH_WEIGHTINGS))
@api_option(_BENCH, "lower_is_better", type=str, callback=_lower_is_better, metavar="NAME[,NAME]|none",
            help="Comma-separated metrics whose lower scores are better (negated before the analyses), or none.",
            when_absent="the names of lower-is-better text metrics such as TER, with a warning")
@api_option(_BENCH, "rng")
@api_option(_BENCH, "cache_dir", metavar="DIR", when_absent="<dataset cache>/.bench")
@click.option("--no-cache", is_flag=True, help="Do not cache the metric's scores.")
@api_option(_BENCH, "data_dir", metavar="DIR", when_absent="$METAEVAL_DATA, else ~/.cache/metaeval/datasets")
@api_option(_BENCH, "base_url", metavar="URL", when_absent="$METAEVAL_DATA_URL")
@api_options(_BENCH, "n_jobs", "dask",
             n_jobs=dict(help="Worker processes, a positive integer (-1: one per core); the datasets are the "
                              "work units."),
             dask=dict(help="Dask scheduler address: run the datasets on that cluster."))
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "latex", "json"]), default="table",
              show_default=True, help="table: ranking and per-task tables; csv/latex: the WMT-style table.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Also write an HTML report with the bench section (and its tables as CSV/LaTeX) here.")
def bench_cmd(metric, command, scores_file, no_cache, fmt, out, **api):
    """Rank a metric beside baselines on every human-judgment dataset (docs/bench.md)."""
    from ..bench import Command, ScoresFile, bench

    chosen = [x for x in (metric, command, scores_file) if x is not None]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --metric, --command, --scores")
    api = given(api)
    if "level" in api:  # --level sets bench's levels=
        api["levels"] = api.pop("level")
    name = api.get("name")
    spec = metric if metric is not None else (Command(command, name or "command") if command is not None
                                              else ScoresFile(scores_file, name))
    if no_cache:
        if "cache_dir" in api:
            raise click.UsageError("--cache-dir and --no-cache: give one")
        api["cache_dir"] = False
    res = bench(spec, **api)
    if out is not None:
        from ..report import write

        write(res.report(command="metaeval bench"), out)
    if fmt == "json":
        _emit_json(res.to_dict())
    elif fmt in ("csv", "latex"):
        click.echo(res.table(fmt=fmt), nl=False)
    else:
        _show(_tables.bench_ranking_table(res), _tables.bench_tasks_table(res))
