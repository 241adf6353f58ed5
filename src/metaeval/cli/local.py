"""`metaeval local`: local metric accuracy across contexts (seed paper 004)."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..report import tables as _tables

from ._api import ApiOption, Registry, api_option, api_options, command, given, signature
from ._data import (
    SYSTEM_HELP,
    INPUT_HELP,
    FORMAT_HELP,
    FORMATS,
    _layout_options,
    _load,
    _metrics,
    _contexts_with,
    _split,
    _lower_is_better,
)
from ._output import (
    _clean,
    _emit_csv_by_analysis,
    _emit_json,
    _figures,
    _progress,
    _run_seed,
    _save_figure,
    _show,
    _write_csv,
    _write_json,
)
from .texts import _text_adapters, _perturbation_options, _PERTURBED

_ACC = "local:local_accuracy"
_CHI = "local:context_chi2"
_TAU = "local:context_tau"
_PAIRS = "local:local_pairs"


def _local_average(ctx, param, value):
    """Click callback of ``local --average``: macro|micro, or their earlier names input|pair."""
    value = _choices.LOCAL_AVERAGE_ALIASES.get(value, value)
    if value not in _choices.AVERAGES:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(map(repr, _choices.AVERAGES))} "
                                 "(or input, pair: their earlier names)", param_hint="--average")
    return value


#: local_pairs keywords that apply to human-ordered pairs only (perturbation pairs take each
#: text metric's own direction and have no human scores)
_HUMAN_PAIR_KEYWORDS = ("pair_context", "lower_is_better", "human_atol")


@command(epilog="Example: metaeval local summeval --context system --human coherence --metrics "
                "ROUGE.1,ROUGE.2,BLEU --chi2-resamples 99 --tau-resamples 99 --rng 0")
@_layout_options(texts=True, rater_col=True, run_col=True)
@click.argument("data")
@click.option("--context", required=True,
              help="The context category: system, input, or a column of a data file (declared as a context; --contexts is not needed for it).")
@click.option("--perturbation", default=None, type=Registry(_choices.PERTURBATIONS),
              help="Perturbation pairs (paper 004): degrade every output with this perturbation "
                   "(" + ", ".join(_choices.PERTURBATIONS) + ") and score both with the --metrics text metrics.")
@click.option("--human", default=None,
              help="Human-ordered pairs: order the outputs of each input by this human column "
                   "(without --perturbation); also the human column(s) of a data file.")
@click.option("--metrics", default=None,
              help="Text metrics (with --perturbation) or metric columns (human pairs; default: all).")
@click.option("--option", "options", multiple=True, help="KEY=VALUE option of the perturbation (repeatable).")
@click.option("--contexts", "context_cols", default=None,
              help="For a data file: comma-separated label columns to use as contexts (e.g. speaker,domain).")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file with --perturbation: JSONL with the texts.")
@api_option(_PERTURBED, "multi_ref", choices=_choices.MULTI_REF, prefix="Perturbation pairs: ")
@click.option("--model", default=None, type=click.Path(exists=True), help="Local model for bertscore etc.")
@click.option("--cache", default=None, type=click.Path(file_okay=False), help="Text-metric score cache folder.")
@api_options(_PAIRS, "pair_context", "lower_is_better", "atol", "human_atol",
             pair_context=dict(strict_choices=_choices.PAIR_CONTEXTS, when_absent="better"),
             lower_is_better=dict(callback=_lower_is_better, metavar="COL[,COL]",
                                  help="Human pairs: comma-separated metric columns where lower is better "
                                       "(WER, TER); none for no column.",
                                  when_absent="the columns named like a lower-is-better text metric (" + ", ".join(
                                      _choices.LOWER_IS_BETTER) + "), said on stderr (the API's rule, "
                                      "metaeval.direction)"),
             human_atol=dict(help="Human pairs: tie tolerance of the human scores (such pairs are left out)."))
@api_option(_ACC, "average", choices=_choices.AVERAGES, callback=_local_average,
            help="|".join(_choices.AVERAGES) + ": macro is Eq. 2, the mean over inputs of the per-input accuracy "
                 "(each input weighs the same); micro pools the pairs (each input weighs by its pairs), as "
                 "--average in correlate. The earlier names input and pair are accepted.")
@api_option(_ACC, "ties", strict_choices=_choices.LOCAL_TIES)
@api_options(_ACC, "ci", "confidence_level", ci=dict(choices=_choices.BINOMIAL_CIS),
             confidence_level=dict(help="Confidence level of the accuracies' binomial intervals."))
@api_option(_CHI, "test", name="chi2_test", strict_choices=_choices.CHI2_TESTS,
            help="H1: chi-square p-value (auto: permutation when an expected count < 5).")
@api_option(_CHI, "n_resamples", name="chi2_resamples", help="H1: permutations of the chi-square test.")
@api_option(_TAU, "n_resamples", name="tau_resamples", help="H2: permutations of the weighted-tau test.")
@api_option(_TAU, "variant", name="tau_variant", strict_choices=_choices.WTAU_VARIANTS, prefix="H2: ")
@api_option(_CHI, "correction", choices=_choices.CORRECTIONS,
            help="Multiple-testing adjustment of H1 (over metrics) and H2 (over context pairs).")
@api_option(_TAU, "cluster_threshold",
            help="Contexts whose weighted tau is above this (average linkage) share a cluster.")
@api_option(_TAU, "n_clusters", help="Cut the clustering into at most this many clusters instead.",
            when_absent="not set: --cluster-threshold decides")
@api_option(_TAU, "rng", help="Random seed, a non-negative integer (not set: fresh entropy, recorded in --out).")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@api_option(_TAU, "n_jobs")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, local.json, accuracy.png (Figures 1a-3a), tau.png (1b-3b).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def local(data, context, perturbation, human, metrics, options, context_cols, texts_path, model, cache, system,
          input_, out, fmt, **api):
    """Local metric accuracy across contexts (paper 004): accuracy per context, H1 and H2 tests."""
    from .. import local as lc

    if perturbation is None and human is None:
        raise click.BadParameter("give --perturbation (perturbation pairs) or --human (human-ordered pairs)",
                                 param_hint="--perturbation")
    api = given(api)
    pairs_kw = {k: api.pop(k) for k in ("pair_context", "lower_is_better", "atol", "human_atol") if k in api}
    scoring_kw = {k: api.pop(k) for k in ("multi_ref",) if k in api}
    if perturbation is not None and any(k in pairs_kw for k in _HUMAN_PAIR_KEYWORDS):
        named = ["--" + k.replace("_", "-") for k in _HUMAN_PAIR_KEYWORDS if k in pairs_kw]
        raise click.BadParameter(f"{' and '.join(named)} appl{'ies' if len(named) == 1 else 'y'} to human pairs "
                                 "(perturbation pairs take each text metric's own direction)",
                                 param_hint="--perturbation")
    if perturbation is None and scoring_kw:
        raise click.BadParameter("--multi-ref applies to perturbation pairs (the text metrics scored against "
                                 "references), not to human pairs", param_hint="--multi-ref")
    seed = _run_seed(api.pop("rng", None), out)
    jobs = {k: api.pop(k) for k in ("n_jobs",) if k in api}
    if perturbation is not None:
        met_cols = None  # the text metrics are scored below; _load reads no metric column of the file
    else:
        met_cols = _metrics(metrics)
    ds = _load(data, system, input_, _split(human) or [], met_cols, None, texts=texts_path,
               need_texts=perturbation is not None, contexts=_contexts_with(data, context, context_cols),
               file_only={"--contexts": context_cols})
    if context not in ds.context_names:
        raise click.BadParameter(f"{context!r} is not a context of the data; available: "
                                 f"{', '.join(ds.context_names)}", param_hint="--context")
    labels = {v for v in ds.context(context).ravel() if v is not None}
    if len(labels) < 2:
        raise click.BadParameter(f"context {context!r} has {len(labels)} label(s); local accuracy across "
                                 "contexts needs at least 2", param_hint="--context")
    scoring = None
    if perturbation is not None:
        from ..perturb import score_perturbed

        opts = _perturbation_options(options, [perturbation])[perturbation]
        adapters = _text_adapters(metrics, model)
        if sum(len(a.columns) for a in adapters) < 2:
            raise click.BadParameter("H2 ranks metrics within each context: give at least 2 metrics",
                                     param_hint="--metrics")
        with _progress(None, f"{perturbation}: scoring originals and perturbed texts") as bar:
            scoring = score_perturbed(ds, perturbation, adapters, rng=seed, options=opts, cache_dir=cache,
                                      progress=bar.update if bar is not None else None, **scoring_kw, **jobs)
        pairs = lc.local_pairs(scoring, context=context, **pairs_kw)
    else:
        if options:
            raise click.BadParameter("--option needs --perturbation", param_hint="--option")
        hum = _split(human)
        if len(hum) != 1:
            raise click.BadParameter("human-ordered pairs take one human column", param_hint="--human")
        mets = _metrics(metrics) or list(ds.metrics)
        if len(mets) < 2:
            raise click.BadParameter("H2 ranks metrics within each context: give at least 2 metrics",
                                     param_hint="--metrics")
        # one rule with the API (metaeval.direction): lower_is_better absent -> columns named like a
        # lower-is-better text metric, announced with an AssumedDirectionWarning (printed on stderr)
        pairs = lc.local_pairs(ds, context=context, human=hum[0], metrics=mets, **pairs_kw)
    both = {k: api[k] for k in ("average", "ties") if k in api}
    acc = lc.local_accuracy(pairs, **both, **{k: api[k] for k in ("ci", "confidence_level") if k in api})
    chi = lc.context_chi2(pairs, **{k: api[k] for k in ("ties", "correction") if k in api},
                          **given({"test": api.get("chi2_test"), "n_resamples": api.get("chi2_resamples")}),
                          rng=seed)
    tau = lc.context_tau(pairs, **both, **{k: api[k] for k in ("correction", "cluster_threshold", "n_clusters")
                                           if k in api},
                         **given({"variant": api.get("tau_variant"), "n_resamples": api.get("tau_resamples")}),
                         rng=seed, **jobs)
    ties = api.get("ties", signature(_ACC)["ties"].default)
    results = {"accuracy": acc, "chi2": chi, "tau": tau}
    if out:
        os.makedirs(out, exist_ok=True)
        import pandas as pd

        _write_csv(pd.concat([acc.to_frame(), acc.overall_frame()], ignore_index=True),
                   os.path.join(out, "local_accuracy.csv"))
        _write_csv(chi.to_frame(), os.path.join(out, "chi2.csv"))
        _write_csv(tau.to_frame(), os.path.join(out, "tau.csv"))
        _write_csv(tau.clusters_frame(), os.path.join(out, "clusters.csv"))
        doc = {k: v.to_dict() for k, v in results.items()}
        if scoring is not None:
            doc["scoring"] = scoring.to_dict()
        _write_json(doc, os.path.join(out, "local.json"))
        _save_figure(lambda: _figures().plot_local_accuracy(acc), os.path.join(out, "accuracy.png"))
        _save_figure(lambda: _figures().plot_context_tau(tau), os.path.join(out, "tau.png"))
    if fmt == "json":
        _emit_json({"accuracy": _clean(acc.to_frame().to_dict(orient="records")),
                    "overall": _clean(acc.overall_frame().to_dict(orient="records")),
                    "chi2": _clean(chi.to_frame().to_dict(orient="records")),
                    "tau": _clean(tau.to_frame().to_dict(orient="records")),
                    "clusters": _clean(tau.clusters_frame().to_dict(orient="records"))})
        return
    if fmt == "csv":
        _emit_csv_by_analysis({"accuracy": acc, "chi2": chi, "tau": tau})
        return
    _show(*_tables.local_tables(acc, chi, tau, context=context, source=pairs.source, average=acc.average,
                                ties=ties))

