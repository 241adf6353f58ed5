"""`metaeval report`: everything, as one HTML page."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import click

from .. import _choices
from ._api import SEED, ApiOption
from ._data import (
    SYSTEM_HELP,
    INPUT_HELP,
    JOBS_HELP,
    _ALL_LEVELS,
    _LEVELS_HELP,
    _layout_options,
    _levels_option,
    _load,
    _metrics,
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


@click.command(epilog="Example: metaeval report summeval --quick --no-text --out report")
@_layout_options(texts=True)
@_system_score_options
@click.argument("data", required=False, default="summeval")
@click.option("--human", default=None,
              help="Comma-separated human columns (default: those with 2+ raters, else all; required for files).")
@click.option("--metrics", default=None, help="Comma-separated metric columns (default: all).")
@click.option("--out", default="report", show_default=True, type=click.Path(file_okay=False),
              help="Output folder: report.html, results.json, figures/, tables/.")
@click.option("--quick", is_flag=True,
              help="Fewer resamples (100), a pairwise set of 5 metrics, no text rescoring: about a minute.")
@click.option("--rng", "--seed", "seed", cls=ApiOption, aliases=("--seed",), type=SEED, default=None, help="Random seed, a non-negative integer (not set: fresh entropy, recorded in results.json). "
                                                                                              "[default: fresh entropy]")
@click.option("--method", type=click.Choice(_choices.REPORT_METHODS), default=_choices.DEFAULT_METHOD,
              show_default=True, help="Coefficient of the correlation tables, clusters and correlation design "
                                      "(validity keeps Kendall's tau-b, as seed paper 002).")
@click.option("--level", "--levels", "levels", cls=ApiOption, aliases=("--levels",), default=_ALL_LEVELS, show_default=True, callback=_levels_option,
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--n-resamples", type=int, default=None,
              help="Bootstrap and permutation resamples (default 1000; --quick 100).")
@click.option("--n-splits", "--splits", "splits", cls=ApiOption, aliases=("--splits",), type=int, default=None,
              help="Ranking-consistency splits (not set: 1000; --quick 100). [default: not set]")
@click.option("--pairwise-metrics", "pairwise", default=None,
              help="Metrics of the pairwise sections (clusters, DP, RC): a number K (default 10; --quick 5), "
                   "'all', or comma-separated names.")
@click.option("--context", default=None,
              help="Context for local metric accuracy (system, input or a context column); default: skipped.")
@click.option("--no-text", is_flag=True, help="Skip the text diagnostics (rescoring perturbed texts).")
@click.option("--text-metrics", default="bleu,rouge1", show_default=True,
              help="Text metrics of the perturbation-detection test.")
@click.option("--low", "--ks-low", "ks_low", cls=ApiOption, aliases=("--ks-low",), type=float, default=None,
              help="KS: low-quality texts have human < this (not set: seed paper 001's for a known dataset). "
                   "[default: not set]")
@click.option("--high", "--ks-high", "ks_high", cls=ApiOption, aliases=("--ks-high",), type=float, default=None,
              help="KS: high-quality texts have human >= this. [default: not set]")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level of the clusters.")
@click.option("--cache", default=None, type=click.Path(file_okay=False), help="Text-metric score cache folder.")
@click.option("--n-jobs", "--jobs", "jobs", cls=ApiOption, aliases=("--jobs",), type=int, default=1, show_default=True, help=JOBS_HELP)
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@click.option("--rater", "--rater-col", "rater", cls=ApiOption, aliases=("--rater-col",), default=None, help="Rater column (long files with several raters).")
@click.option("--run", "--run-col", "run", cls=ApiOption, aliases=("--run-col",), default=None, help="Run column (long files with repeated metric runs).")
@click.option("--contexts", "context_cols", default=None, help="Files: comma-separated context label columns.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Files: JSONL with the texts (hypothesis, references/source).")
def report(data, human, metrics, out, quick, seed, method, levels, n_resamples, splits, pairwise, context,
           no_text, text_metrics, ks_low, ks_high, alpha, cache, jobs, system, input_, rater, run,
           context_cols, texts_path):
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
    load = dict(texts=texts_path, run=run, contexts=_split(context_cols),
                file_only={"--contexts": context_cols, "--texts": texts_path, "--rater": rater,
                           "--run": run})
    ds = _load(data, system, input_, _split(human), _metrics(metrics), rater, **load)
    ds_runs = _load(data, system, input_, _split(human), _metrics(metrics), rater, runs=True, **load) \
        if bundled else ds
    if pairwise is not None:
        p = pairwise.strip()
        if p.isdigit():
            pairwise = int(p)
            if pairwise < 2:
                raise click.BadParameter("give at least 2 metrics", param_hint="--pairwise-metrics")
        elif p != "all":
            pairwise = tuple(_split(p))
    for name, v in (("--n-resamples", n_resamples), ("--n-splits", splits)):
        if v is not None and v < 1:
            raise click.BadParameter("must be a positive integer", param_hint=name)
    cfg = ReportConfig(human=tuple(_split(human) or ()) or None, metrics=tuple(_metrics(metrics) or ()) or None,
                       method=method, levels=tuple(_split(levels) or ()), quick=quick, seed=seed,
                       n_resamples=n_resamples, splits=splits, pairwise=pairwise, context=context,
                       text=False if no_text else None, text_metrics=tuple(_split(text_metrics) or ()),
                       ks_low=ks_low, ks_high=ks_high, alpha=alpha, cache_dir=cache, n_jobs=jobs,
                       system_scores=_system_level())
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



