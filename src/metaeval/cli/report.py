"""`metaeval report`: everything, as one HTML page."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import click

from .. import _choices
from ._api import ApiOption, Registry, api_option, api_options, command, given
from ._data import (
    SYSTEM_HELP,
    INPUT_HELP,
    _ALL_LEVELS,
    _LEVELS_HELP,
    _layout_options,
    _levels_option,
    _load,
    _metrics,
    _contexts_with,
    _split,
    _system_level,
    _system_score_options,
)
from ._output import _Bar, _markup_safe, _say


def _report_progress():
    """The whole run's progress on stderr (rich; only when stderr is a terminal):
    one bar over the steps, one for the units of the current step."""
    from ..report import Progress

    ctx = click.get_current_context(silent=True)
    if not sys.stderr.isatty() or (ctx is not None and ctx.meta.get("metaeval.quiet")):
        return None, Progress()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    rp = RichProgress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=Console(stderr=True), transient=True)

    class _Step(_Bar):
        def set_total(self, total):
            self._p.update(self._task, total=total)

    class _Run(Progress):
        overall = None

        def start(self, n_steps):
            if self.overall is None:
                self.overall = rp.add_task("metaeval report", total=n_steps)
            else:
                rp.update(self.overall, total=rp.tasks[self.overall].total + n_steps)

        @contextmanager
        def step(self, label, total=None):
            task = rp.add_task(f"  {_markup_safe(label)}", total=total)  # labels hold column names
            try:
                yield _Step(rp, task)
            finally:
                rp.remove_task(task)
                if self.overall is not None:
                    rp.advance(self.overall, 1)

    return rp, _Run()


_REPORT = "report._build:ReportConfig"


def _pairwise(ctx, param, value):
    """--pairwise-metrics: a number K >= 2, 'all', or comma-separated metric names."""
    p = value.strip()
    if p.isdigit():
        if int(p) < 2:
            raise click.BadParameter("give at least 2 metrics", param_hint="--pairwise-metrics")
        return int(p)
    return p if p == "all" else tuple(_split(p) or ())


def _positive(ctx, param, value):
    if value < 1:
        raise click.BadParameter("must be a positive integer", param_hint=param.opts[0])
    return value


@command(epilog="Example: metaeval report summeval --quick --no-text --out report")
@_layout_options(texts=True)
@_system_score_options
@click.argument("data", required=False, default="summeval")
@click.option("--human", default=None,
              help="Comma-separated human columns (default: those with 2+ raters, else all; required for files).")
@click.option("--metrics", default=None, help="Comma-separated metric columns (default: all).")
@click.option("--out", default="report", show_default=True, type=click.Path(file_okay=False),
              help="Output folder: report.html, results.json, figures/, tables/.")
@api_option(_REPORT, "quick", type=bool)
@api_option(_REPORT, "rng")
@api_option(_REPORT, "method", strict_choices=_choices.REPORT_METHODS)
@click.option("--level", "--levels", "levels", cls=ApiOption, aliases=("--levels",), default=_ALL_LEVELS,
              show_default=True, callback=_levels_option, type=Registry(_choices.LEVELS, many=True),
              help="Comma-separated: " + _LEVELS_HELP + ".")
@api_options(_REPORT, "n_resamples", "n_splits",
             n_resamples=dict(callback=_positive, when_absent="1000; --quick: 100"),
             n_splits=dict(aliases=("--splits",), callback=_positive, when_absent="1000; --quick: 100"))
@api_option(_REPORT, "pairwise", name="pairwise_metrics", type=str, callback=_pairwise, metavar="K|all|NAME,NAME",
            help="Metrics of the pairwise sections (clusters, discriminative power, ranking consistency) per human "
                 "column: a number K, all, or comma-separated names.", when_absent="10; --quick: 5")
@api_option(_REPORT, "context", when_absent="none, the section is skipped")
@api_option(_REPORT, "text", when_absent="yes; --quick: no")
@api_option(_REPORT, "text_metrics", metavar="NAME[,NAME]",
            complete=tuple(m for m in _choices.TEXT_METRICS if m != "llm_judge"))
@api_options(_REPORT, "low", "high",
             low=dict(aliases=("--ks-low",), when_absent="seed paper 001's for a known dataset, else no KS score"),
             high=dict(aliases=("--ks-high",), when_absent="seed paper 001's for a known dataset, else no KS score"))
@api_option(_REPORT, "alpha")
@api_option(_REPORT, "cache_dir", name="cache", metavar="DIR", when_absent="a temporary folder per run")
@api_option(_REPORT, "n_jobs")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@click.option("--rater", "--rater-col", "rater", cls=ApiOption, aliases=("--rater-col",), default=None, help="Rater column (long files with several raters).")
@click.option("--run", "--run-col", "run", cls=ApiOption, aliases=("--run-col",), default=None, help="Run column (long files with repeated metric runs).")
@click.option("--contexts", "context_cols", default=None, help="Files: comma-separated context label columns.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Files: JSONL with the texts (hypothesis, references/source).")
def report(data, human, metrics, out, levels, system, input_, rater, run, context_cols, texts_path, **api):
    """One command from data to a readable, citable meta-evaluation: report.html + results.json.

    Runs every analysis that applies to DATA (default: the bundled SummEval) and writes a
    self-contained static HTML report with its figures (PNG, SVG), every table as CSV and
    LaTeX, and results.json; the report says which sections were skipped and why.
    """
    from ..data import list_datasets
    from ..report import ReportConfig, Writer, build, write

    bundled = data in {d["name"] for d in list_datasets()}
    if not bundled and os.path.isfile(data) and not human:
        raise click.BadParameter("a data file needs --human (its human score columns)", param_hint="--human")
    load = dict(texts=texts_path, run=run, contexts=_contexts_with(data, api.get("context"), context_cols),
                file_only={"--contexts": context_cols, "--texts": texts_path, "--rater": rater,
                           "--run": run})
    ds = _load(data, system, input_, _split(human), _metrics(metrics), rater, **load)
    ds_runs = _load(data, system, input_, _split(human), _metrics(metrics), rater, runs=True, **load) \
        if bundled else ds
    api = {k: tuple(v) if isinstance(v, list) else v for k, v in given(api).items()}
    if "pairwise_metrics" in api:  # the option's name; ReportConfig's keyword is pairwise
        api["pairwise"] = api.pop("pairwise_metrics")
    if "cache" in api:  # --cache, as in score and perturb: ReportConfig's cache_dir
        api["cache_dir"] = api.pop("cache")
    cfg = ReportConfig(human=tuple(_split(human) or ()) or None, metrics=tuple(_metrics(metrics) or ()) or None,
                       levels=tuple(_split(levels) or ()), system_scores=_system_level(), **api)
    from ..report import estimate, rated_columns, select_humans, select_metrics

    humans = select_humans(ds, cfg.human, quick=cfg.quick)
    est = estimate(len(ds.systems), len(ds.inputs), len(humans), len(select_metrics(ds, cfg.metrics)), cfg,
                   n_rated=len(rated_columns(ds, humans)))
    if not click.get_current_context().meta.get("metaeval.quiet"):
        click.echo(f"metaeval: estimated cost: {est['text']}", err=True)  # before any work starts
    import shlex

    argv = sys.argv[1:]
    command = "metaeval " + shlex.join(argv) if argv[:1] == ["report"] else None
    rp, prog = _report_progress()
    if rp is not None:
        rp.start()
    try:
        writer = Writer(out)  # finished sections are written as the run goes
        rep = build(ds, cfg, ds_runs=ds_runs, progress=prog, command=command, writer=writer)
        doc = write(rep, out, progress=prog, writer=writer)
    finally:
        if rp is not None:
            rp.stop()
    _say(f"report: {os.path.join(out, 'report.html')}")
    _say(f"results: {os.path.join(out, 'results.json')} (seed {doc['seed']}, {doc['mode']} mode, "
         f"{doc['seconds_analyses']:.0f} s)")
    for k in doc["skipped"]:
        _say(f"skipped ({k['section']}): {k['reason']}")



