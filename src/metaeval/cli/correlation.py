"""`metaeval correlate`, `compare` and `measures`."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..report import tables as _tables
from ._api import ApiOption, Registry, api_option, api_options, command, given, signature
from ._data import (
    FORMAT_HELP,
    _ALL_LEVELS,
    _LEVELS_HELP,
    FORMATS,
    _data_options,
    _layout_options,
    _levels_option,
    _load,
    _metrics,
    _some_metrics,
    _one_level_option,
    _split,
    _system_level,
    _system_score_options,
    _with,
)
from ._output import (
    _clean,
    _emit_csv,
    _emit_json,
    _progress,
    _run_seed,
    _save_figure,
    _show,
    _write_csv,
    _write_json,
)

_CORRELATE = "correlation:correlate"
_COMPARE = "compare:compare_all"
_DP = "measures:discriminative_power"
_RC = "measures:ranking_consistency"


#: The level names as the command line spells them (completed by the shell).
_LEVEL_NAMES = tuple(_choices.LEVELS)


def _level_list(ctx, param, value):
    """--level: comma-separated CLI level names -> the API's list."""
    return _split(_levels_option(ctx, param, value))


def _one_human(human, cmd):
    """--human of a command that takes one human column: a comma-separated list is named as such
    (it was looked up as one column name, 'coherence,fluency')."""
    names = [h for h in str(human).split(",") if h.strip()]
    if len(names) > 1:
        raise click.BadParameter(f"`metaeval {cmd}` takes one human column (got {len(names)}: "
                                 f"{', '.join(names)}); run it once per column", param_hint="--human")


@command(epilog="Example: metaeval correlate summeval --human coherence --metrics ROUGE.1,ROUGE.L "
                      "--level system,input --n-resamples 200 --rng 0")
@_layout_options(texts=False, run_col=True)
@_system_score_options
@_with(_data_options)
@api_option(_CORRELATE, "level", aliases=("--levels",), callback=_level_list,
            help="Comma-separated: " + _LEVELS_HELP + ".", complete=_LEVEL_NAMES)
@api_option(_CORRELATE, "method", type=list, choices=_choices.METHODS,
            help="comma-separated coefficients (the default is the one of every correlation table).")
@api_options(_CORRELATE, "average", "ci", "confidence_level", "n_resamples", "pvalue", "alternative", "rng",
             "n_jobs", average=dict(strict_choices=_choices.AVERAGES), ci=dict(choices=_choices.CI_METHODS),
             pvalue=dict(choices=_choices.PVALUE_METHODS), alternative=dict(choices=_choices.ALTERNATIVES))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def correlate(data, human, metrics, system, input_, rater, fmt, **api):
    """Correlate every metric with a human column at the given levels."""
    from ..correlation import correlate as _correlate

    mets = _some_metrics(metrics, "correlate")
    _one_human(human, "correlate")
    ds = _load(data, system, input_, human, mets, rater)
    total = len(mets or ds.metrics) * len(api.get("level") or [1]) * len(api.get("method") or [1])
    with _progress(total, "correlating") as prog:
        res = _correlate(ds, human, metrics=mets, progress=prog, system_scores=_system_level(), **given(api))
    if fmt == "json":  # every field of the CSV and of results.json, the counts the warnings name included
        _emit_json(_clean([r.to_dict() for r in res]))
    elif fmt == "csv":
        _emit_csv(res.to_frame())
    else:
        _show(_tables.correlations_table(res, human))


def _one_level(ctx, param, value):
    return _one_level_option(ctx, param, value)


@command(epilog="Example: metaeval compare summeval --human coherence --metrics ROUGE.1,ROUGE.2,ROUGE.L "
                      "--n-resamples 200 --rng 0")
@_layout_options(texts=False, run_col=True)
@_system_score_options
@_with(_data_options)
@api_option(_COMPARE, "level", callback=_one_level, help="One of " + _LEVELS_HELP + ".", complete=_LEVEL_NAMES)
@api_option(_COMPARE, "method", choices=_choices.METHODS,
            help="the coefficient (the default is the one of every correlation table).")
@api_options(_COMPARE, "test", "average", "n_resamples", "alternative", "confidence_level", "correction",
             "cluster_correction", "clusters", "alpha", "rng", "n_jobs", "sequential",
             alpha=dict(help="Significance level of the clusters (pairs whose adjusted p-value is <= alpha)."),
             test=dict(choices=_choices.TESTS, help=""), average=dict(strict_choices=_choices.AVERAGES),
             alternative=dict(choices=_choices.ALTERNATIVES),
             correction=dict(choices=_choices.CORRECTIONS,
                             help="|".join(_choices.CORRECTIONS) + ": p-value matrix (all pairs)."),
             cluster_correction=dict(
                 choices=_choices.CORRECTIONS,
                 help="|".join(_choices.CORRECTIONS) + ": correction of the one-sided p-values that form the "
                      "clusters (none: no correction).",
                 when_absent="holm; none with --clusters mtme, mt-metrics-eval's exact rule"),
             clusters=dict(strict_choices=_choices.CLUSTER_RULES,
                           help="p-values of the clusters: (count+1)/(n+1), or count/n as mt-metrics-eval "
                                "(mtme)."),
             sequential=dict(help="h: stop permutation tests early after h exceedances (Besag-Clifford); "
                                  "h >= alpha*(n_resamples+1) keeps every decision at alpha."))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def compare(data, human, metrics, system, input_, rater, fmt, **api):
    """Test metric pairs (two metrics: one test; more: all pairs, clusters)."""
    from ..compare import compare as _compare
    from ..compare import compare_all as _compare_all

    _one_human(human, "compare")
    ds = _load(data, system, input_, human, _metrics(metrics), rater)
    mets = _metrics(metrics)
    mets = list(ds.metrics) if mets is None else mets  # --metrics none: no metric (an error below)
    if len(mets) < 2:
        raise click.BadParameter(f"a comparison needs at least 2 metrics; {os.path.basename(data)} gives "
                                 f"{len(mets)}: {', '.join(map(repr, mets)) or 'none'}", param_hint="--metrics")
    api = given(api)
    pairs_only = {k: api.pop(k) for k in ("correction", "cluster_correction", "clusters", "alpha", "n_jobs")
                  if k in api}
    if len(mets) == 2:
        # one pair: the all-pairs options (matrix and cluster corrections, alpha,
        # workers) do not apply, but a bad value is still an error
        from .._parallel import check_n_jobs
        from .._vocab import check_choice, check_number

        if "correction" in pairs_only:
            check_choice(pairs_only["correction"], "correction", _choices.CORRECTIONS)
        if "cluster_correction" in pairs_only:
            check_choice(pairs_only["cluster_correction"], "cluster_correction", _choices.CORRECTIONS)
        if "alpha" in pairs_only:
            check_number(pairs_only["alpha"], "alpha", lo=0, hi=1, open_lo=True, open_hi=True)
        if "n_jobs" in pairs_only:
            check_n_jobs(pairs_only["n_jobs"])
        c = _compare(ds, human, mets[0], mets[1], system_scores=_system_level(), **api)
        if fmt == "json":  # every field of the CSV, the counts the warnings name included
            _emit_json(_clean([c.to_dict()])[0])
        elif fmt == "csv":
            import pandas as pd

            _emit_csv(pd.DataFrame([c.to_dict()]))
        else:
            _show(_tables.comparison_table(c, human))
        return
    k = len(mets)
    with _progress(k * (k - 1) // 2, "comparing pairs") as prog:
        res = _compare_all(ds, human, metrics=mets, progress=prog, system_scores=_system_level(), **api,
                           **pairs_only)
    if fmt == "json":
        out = _clean(res.to_frame().to_dict(orient="records"))  # every column of the CSV
        _emit_json({"pairs": out, "ranking": _clean(res.ranking_frame().to_dict(orient="records")),
                    "signature": res.signature})
    elif fmt == "csv":
        _emit_csv(res.to_frame())
    else:
        used = {k: api.get(k, signature(_COMPARE)[k].default) for k in ("level", "method", "test")}
        _show(_tables.clusters_table(res, human, **used, cluster_correction=res.cluster_correction))


@command(epilog="Example: metaeval measures summeval --human coherence --metrics ROUGE.1,ROUGE.2,ROUGE.L "
                      "--level system --method kendall_b --n-resamples 50 --n-splits 20 --rng 0")
@_layout_options(texts=False, run_col=True)
@_with(_data_options)
@click.option("--measures", "measures_", default=None,
              help="Comma-separated level:method list, e.g. system:kendall_b,item:pearson "
                   "(default: the 12 of --level x --method).")
@click.option("--level", "--levels", "levels", cls=ApiOption, aliases=("--levels",), default=_ALL_LEVELS, show_default=True, callback=_levels_option,
              type=Registry(_LEVEL_NAMES, many=True),
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--method", "--methods", "methods", cls=ApiOption, aliases=("--methods",), default=",".join(_choices.MEASURE_METHODS), show_default=True,
              type=Registry(_choices.METHODS, many=True),
              help="Comma-separated coefficients: " + ", ".join(_choices.METHODS) + ".")
@api_options(_DP, "test", "n_resamples", "average", "rng", "n_jobs", "dask",
             test=dict(choices=_choices.TESTS, help="perm-both or williams (seed paper 000), or any test of compare."),
             average=dict(strict_choices=_choices.AVERAGES),
             dask=dict(help="Dask scheduler address: run the units on that cluster."))
@api_option(_RC, "n_splits", aliases=("--splits",), help="Random half-splits for ranking consistency (0: skip it).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: tables, JSON, figures and checkpoints (a restarted run resumes).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def measures(data, human, metrics, system, input_, rater, measures_, levels, methods, out, fmt, **api):
    """Discriminative power and ranking consistency of correlation measures (seed paper 000)."""
    from ..measures import discriminative_power, measure_table, ranking_consistency

    _one_human(human, "measures")
    ds = _load(data, system, input_, human, _metrics(metrics), rater)
    mets = _metrics(metrics)
    mets = list(ds.metrics) if mets is None else mets  # --metrics none: no metric (an error below)
    api = given(api)
    api["rng"] = _run_seed(api.get("rng"), out)
    splits = api.pop("n_splits", signature(_RC)["n_splits"].default)
    if measures_:
        picked = []
        for t in _split(measures_):
            lv, sep, m = t.partition(":")
            if not sep:
                raise click.BadParameter(f"{t!r}: write level:method, e.g. system:kendall_b",
                                         param_hint="--measures")
            picked.append(f"{_levels_option(None, None, lv)}:{m}")
        sel = dict(measures=picked)
    else:
        sel = dict(levels=_split(levels), methods=_split(methods))
    if splits < 0:
        raise click.BadParameter("--n-splits must be >= 0", param_hint="--n-splits")
    ck = (lambda name: os.path.join(out, "checkpoints", name)) if out else (lambda name: None)
    k = len(mets)
    if k < 2:
        raise click.BadParameter(f"discriminative power compares metric pairs: it needs at least 2 metrics; "
                                 f"{os.path.basename(data)} gives {k}: {', '.join(map(repr, mets)) or 'none'}",
                                 param_hint="--metrics")
    if splits and k < 3:
        raise click.BadParameter(f"ranking consistency needs at least 3 metrics (got {k}); "
                                 "add metrics or pass --n-splits 0", param_hint="--n-splits")
    if splits and len(ds.inputs) < 4:
        raise click.BadParameter(f"ranking consistency splits the inputs in halves; the data has "
                                 f"{len(ds.inputs)} input(s), at least 4 are needed (or --n-splits 0)",
                                 param_hint="--n-splits")
    with _progress(k * (k - 1) // 2, "discriminative power (pairs)") as prog:
        dp = discriminative_power(ds, human, metrics=mets, checkpoint=ck("dp"), progress=prog, **sel, **api)
    rc = None
    if splits:
        with _progress(k, "ranking consistency (metrics)") as prog:
            rc_api = {k: v for k, v in api.items() if k in signature(_RC)}
            rc = ranking_consistency(ds, human, metrics=mets, n_splits=splits, checkpoint=ck("rc"),
                                     progress=prog, **sel, **rc_api)
    table = measure_table(dp, rc)
    if out:
        from ..report.figures import pvalue_curves

        os.makedirs(out, exist_ok=True)
        _write_csv(table, os.path.join(out, "measures.csv"))
        _write_csv(dp.to_frame(), os.path.join(out, "dp.csv"))
        _write_csv(dp.pvalue_frame(), os.path.join(out, "dp_pvalues.csv"))
        _write_csv(dp.curve_frame(), os.path.join(out, "dp_curves.csv"))
        doc = {"discriminative_power": dp.to_dict()}
        if rc is not None:
            _write_csv(rc.to_frame(), os.path.join(out, "rc.csv"))
            doc["ranking_consistency"] = rc.to_dict()
        _write_json(doc, os.path.join(out, "measures.json"))
        _save_figure(lambda: pvalue_curves(dp), os.path.join(out, "pvalue_curves.png"))
    if fmt == "json":
        _emit_json({"table": _clean(table.to_dict(orient="records")),
                    "dp_signature": dp.signature, "rc_signature": rc.signature if rc else None})
    elif fmt == "csv":
        _emit_csv(table)
    else:
        _show(_tables.measures_table(table, dp, rc, human, len(mets)))

