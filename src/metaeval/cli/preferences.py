"""`metaeval preferences`: pairwise-preference meta-evaluation."""

from __future__ import annotations

import click

from .. import _choices
from ..report import tables as _tables
from ._api import Registry, api_option, api_options, command, given, signature
from ._data import FORMATS, _split, FORMAT_HELP
from ._output import _clean, _emit_csv_by_analysis, _emit_json, _say, _show

_AGREE = "preferences:preference_agreement"
_COMPARE = "preferences:compare_judges"
_LENGTH = "preferences:length_bias"


@command(epilog="Example: metaeval preferences summeval --human coherence --judges ROUGE.1,BLEU "
                      "--n-resamples 100 --rng 0")
@click.argument("data")
@click.option("--input-format", "input_format", default="auto", show_default=True,
              type=Registry(("auto", *_choices.PREFERENCE_FORMATS)), help="|".join(("auto", *_choices.PREFERENCE_FORMATS)) + " (files only).")
@click.option("--judges", default=None,
              help="Comma-separated judges (default: all). mt-bench/alpacaeval files: the annotators that are "
                   "judges (the others are human raters). Bundled datasets: metric columns.")
@click.option("--human", default=None, help="Bundled datasets: the human column whose raters give the preferences.")
@click.option("--judge-outputs", "judge_outputs", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Bundled datasets: a CSV/JSONL of pairwise judge outputs (input, system_a, system_b, judge, "
                   "order, preference[, raw]), e.g. written by 'metaeval judge --pairwise'.")
@click.option("--compare", "compare_", default=None, help="Two judges 'A,B': paired test of their agreement.")
@api_options(_AGREE, "epsilon", "ceiling", "n_resamples", "confidence_level", "rng",
             epsilon=dict(help="Fixed tie threshold of judge margins (none: tie-calibrated, acc_eq)."),
             ceiling=dict(help="Add the human-human ceiling rows (--no-ceiling: never).",
                          when_absent="when the data has 2+ raters"))
@api_option(_COMPARE, "measure", choices=_choices.PREFERENCE_COMPARE_MEASURES, help="--compare statistic.")
@api_option(_LENGTH, "per", aliases=("--length-per",),
            help="Length-bias slope per this many words of length difference.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def preferences(data, input_format, judges, human, judge_outputs, compare_, fmt, **api):
    """Pairwise-preference meta-evaluation of judges against human raters.

    DATA is a preference file (plain CSV/JSONL, MT-Bench human judgments JSONL, AlpacaEval
    annotation JSON) or a bundled dataset (pairs of system outputs, --human raters,
    metrics as judges).  Prints agreement (acc_23, acc_eq, kappas, alpha) with the
    human-human ceiling, position consistency, length bias and the Bradley-Terry rankings.
    """
    import warnings

    from .. import preferences as pf
    from ..data import list_datasets, load_dataset

    api = given(api)
    if api.get("n_resamples", 0) < 0:
        raise click.BadParameter("must be >= 0", param_hint="--n-resamples")
    shared = {k: api[k] for k in ("n_resamples", "confidence_level", "rng") if k in api}
    bundled = data in {d["name"] for d in list_datasets()}
    if bundled:
        if not human:
            raise click.BadParameter("a bundled dataset needs --human (a human column with raters)",
                                     param_hint="--human")
        ds = load_dataset(data)
        extra = None
        if judge_outputs:
            import pandas as pd

            extra = (pd.read_json(judge_outputs, lines=True) if judge_outputs.lower().endswith((".jsonl", ".json"))
                     else pd.read_csv(judge_outputs))
        named = _split(judges)
        metric_cols = [j for j in named if j in ds.metrics] if named else ([] if extra is not None else None)
        prefs = pf.PreferenceData.from_dataset(ds, human, metrics=metric_cols, judges=extra)
        judge_list = named or None
    else:
        if human or judge_outputs:
            raise click.BadParameter("--human and --judge-outputs apply to bundled datasets; files carry their "
                                     "raters and judges", param_hint="--human" if human else "--judge-outputs")
        fmt_in = input_format.strip().lower()
        if fmt_in not in ("auto",) + pf.FORMATS:
            raise click.BadParameter(f"{input_format!r}; choose one of auto, {', '.join(pf.FORMATS)}",
                                     param_hint="--input-format")
        judge_list = _split(judges)
        # mt-bench/alpacaeval: --judges names the annotators that are judges; csv/jsonl: the
        # judges to analyse (unknown names are errors either way)
        prefs = pf.read_preferences(data, format=fmt_in, judges=judge_list)
        judge_list = judge_list or None
    results = {}
    eps = {"epsilon": api["epsilon"]} if "epsilon" in api else {}
    ceiling = {"ceiling": api["ceiling"]} if "ceiling" in api else {}
    results["agreement"] = pf.preference_agreement(prefs, judge_list, **eps, **ceiling, **shared)
    if compare_:
        pair = _split(compare_)
        if len(pair) != 2:
            raise click.BadParameter("give two judges 'A,B'", param_hint="--compare")
        cmp = dict(shared, **eps, **({"measure": api["measure"]} if "measure" in api else {}))
        if "n_resamples" in cmp:
            cmp["n_resamples"] = max(cmp["n_resamples"], 1)  # the paired test needs draws
        results["compare"] = pf.compare_judges(prefs, pair[0], pair[1], **cmp)
    if (prefs.judge_rows["order"] != "").any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pf.UndefinedStatisticWarning)  # judges without orders: left out
            pc = pf.position_consistency(prefs, judge_list, **shared)
        results["position"] = pf.PositionConsistencies(tuple(r for r in pc if r.n > 0))
    if prefs.lengths is not None:
        results["length"] = pf.length_bias(prefs, judge_list,
                                           **{k: api[k] for k in ("per", "confidence_level") if k in api})
    results["bradley_terry"] = pf.bradley_terry(prefs, judge_list)
    if fmt == "json":
        doc = {k: _clean(v.to_frame().to_dict(orient="records")) for k, v in results.items()
               if k != "compare"}
        if "compare" in results:
            doc["compare"] = _clean([results["compare"].to_dict()])
        doc["ranking"] = _clean(results["bradley_terry"].ranking().reset_index().to_dict(orient="records"))
        _emit_json(doc)
        return
    if fmt == "csv":
        _emit_csv_by_analysis(results)
        return
    _say(repr(prefs))
    _show(*_tables.preference_tables(results, length_unit=prefs.length_unit,
                                     length_per=api.get("per", signature(_LENGTH)["per"].default)))
