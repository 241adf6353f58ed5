"""`metaeval diagnose`, `score` and `perturb`: text-level diagnostics (`local` is in local.py)."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..errors import ParameterError
from ..report import tables as _tables
from ._api import ApiOption, Registry, api_option, api_options, command, given, signature
from ._data import (
    SYSTEM_HELP,
    INPUT_HELP,
    FORMAT_HELP,
    FORMATS,
    _data_options,
    _layout_options,
    _load,
    _metrics,
    _one_level_option,
    _split,
    _system_level,
    _system_score_options,
    _with,
)
from ._output import (
    _clean,
    _emit_csv,
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

#: The text metrics a command scores (llm_judge is configured by `metaeval judge`).
_SCORABLE = tuple(m for m in _choices.TEXT_METRICS if m != "llm_judge")

def _sample_size(dg, ds, humans, **kw):
    """diagnostics.sample_size; its 'sizes ... exceed' error names --sizes.  Without --sizes the
    default sizes that fit the fewest texts a (human, metric) pair has scores on are used (a note
    names those left out; None when none fits), as the report does."""
    import numpy as np

    if kw.get("sizes") is None:
        kw.pop("sizes", None)
        default = tuple(signature("diagnostics:sample_size")["sizes"].default)
        mets = kw.get("metrics") or list(ds.metrics)
        n = min((int(np.sum(np.isfinite(ds.scores(h)) & np.isfinite(ds.scores(m)))) for h in humans for m in mets),
                default=0)
        fit = [k for k in default if k < n]
        if len(fit) < len(default):
            click.get_current_context().meta.setdefault("metaeval.notes", []).append(
                f"sample size: default size(s) {', '.join(str(k) for k in default if k not in fit)} left out, "
                f"since only {n} texts have both a human and a metric score"
                + ("" if fit else "; the sample-size study is skipped") + " (choose with --sizes)")
        if not fit:
            return None
        kw["sizes"] = fit
    try:
        return dg.sample_size(ds, humans, **kw)
    except ParameterError as exc:
        if str(exc).startswith("sizes"):
            raise click.BadParameter(str(exc), param_hint="--sizes") from None
        raise


_KS = "diagnostics:ks_score"
_META = "diagnostics:meta_correlation"
_SIZES = "diagnostics:sample_size"
_DESIGN = "diagnostics:correlation_design"
_REFS = "diagnostics:reference_sensitivity"
#: Keywords of the reference-sensitivity study (run with --reference-metrics only).
_REF_KEYWORDS = ("reference_draws", "level", "coverage")


def _alpha(ctx, param, value):
    """--alpha: a level, or LEVEL=A[,LEVEL=A] (one per level of the design) -> float or dict."""
    try:
        if "=" not in value:
            return float(value)
        out = {}
        for item in _split(value) or []:
            key, _, a = item.partition("=")
            out[key.strip()] = float(a)
        return out
    except ValueError:
        raise click.BadParameter(f"{value!r}: give a number such as 0.05, or system=0.05,global=0.001",
                                 param_hint="--alpha") from None


@command(epilog="Example: metaeval diagnose summeval --human coherence --metrics ROUGE.1,ROUGE.2,BLEU "
                      "--n-resamples 20 --rng 0")
@_layout_options(texts=True, run_col=True)
@_system_score_options
@_with([_data_options[0], click.option("--human", required=True, metavar="COL[,COL]",
                                      help="Human score columns, comma-separated (each is diagnosed)."),
        *_data_options[2:]])
@api_options(_KS, "low", "high", "pvalue",
             low=dict(aliases=("--ks-low",), help="KS: the low-quality group is human < this "
                                                  "(none: seed paper 001 Table 3)."),
             high=dict(aliases=("--ks-high",), help="KS: the high-quality group is human >= this."),
             pvalue=dict(strict_choices=_choices.KS_PVALUES, prefix="KS: "))
@api_option(_SIZES, "method", strict_choices=_choices.DIAGNOSTIC_METHODS,
            help="Coefficient of the sample-level correlations (Spearman by default, as seed paper 001, Fig. 4 "
                 "and Table 2).")
@api_option(_META, "meta_method", strict_choices=_choices.DIAGNOSTIC_METHODS, prefix="Meta-correlation: ",
            when_absent="--method")
@api_option(_META, "alternative", strict_choices=_choices.ALTERNATIVES,
            help="Meta-correlation and correlation design: alternative hypothesis of the analytic p-values.")
@api_options(_DESIGN, "alpha", "correction",
             alpha=dict(type=str, callback=_alpha, metavar="A|LEVEL=A,...",
                        help="Correlation design: significance level of the corrected p-values, or one per level "
                             "(system=0.05,global=0.001, as seed paper 003)."),
             correction=dict(choices=_choices.CORRECTIONS, prefix="Correlation design: "))
@api_options(_SIZES, "sizes", "threshold", "n_resamples", "rng",
             sizes=dict(help="Sample sizes of the pre-assessment study."),
             threshold=dict(help="Sample size: largest acceptable sd."),
             n_resamples=dict(prefix="Sample size: "))
@click.option("--reference-metrics", default=None, type=Registry(_SCORABLE, many=True),
              help="Text metrics for the reference-sensitivity study (seed paper 001, App. B): each is scored "
                   "against every reference, and one reference per input is drawn --reference-draws times.")
@api_option(_REFS, "n_resamples", name="reference_draws",
            help="Draws of one reference per input (reference sensitivity).")
@api_options(_REFS, "level", "coverage",
             level=dict(choices=tuple(_choices.LEVELS),
                        callback=_one_level_option, prefix="Reference sensitivity: ",
                        help="The level of the correlations (item: per system, across its inputs)."),
             coverage=dict(prefix="Reference sensitivity: "))
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file with --reference-metrics: JSONL with hypothesis and references.")
@click.option("--cache", default=None, type=click.Path(file_okay=False), help="Text-metric score cache folder.")
@click.option("--model", default=None, type=click.Path(exists=True), help="Local model for bertscore.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, JSON and figures (KS heatmap, meta-correlation bars, "
                   "correlation-design heatmaps, reference-sensitivity histogram).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def diagnose(data, human, metrics, system, input_, rater, reference_metrics, texts_path, cache, model, out, fmt,
             **api):
    """Text-level diagnostics: KS score, meta-correlation, sample size, correlation design,
    reference sensitivity (papers 001, 003)."""
    from .. import diagnostics as dg

    if not reference_metrics and any(api.get(k) is not None for k in _REF_KEYWORDS):
        named = ["--" + k.replace("_", "-") for k in _REF_KEYWORDS if api.get(k) is not None]
        one = len(named) == 1
        raise click.BadParameter(
            f"{', '.join(named)} set{'s' if one else ''} the reference-sensitivity study only (the other "
            f"diagnostics take no level: KS and sample size use all cells, the meta-correlation the item level, "
            f"the correlation design system and global): give --reference-metrics too, or leave "
            f"{'it' if one else 'them'} out", param_hint=named[0])
    ref_adapters = _text_adapters(reference_metrics, model, "--reference-metrics") if reference_metrics else None
    humans = _split(human)  # several human columns: COL[,COL] (issue 14.9)
    ds = _load(data, system, input_, humans, _metrics(metrics), rater, texts=texts_path,
               need_texts=ref_adapters is not None)
    scored = None
    if ref_adapters is not None:
        from .. import textmetrics as tm

        with _progress(None, "scoring against each reference") as bar:
            scored = tm.score(ds, ref_adapters, cache_dir=cache,
                              progress=bar.update if bar is not None else None)
        no_refs = [c for c in scored.columns if scored.reference_scores[c] is None]
        if no_refs:
            raise click.BadParameter(f"{', '.join(no_refs)} do(es) not score against references",
                                     param_hint="--reference-metrics")
        if not _metrics(metrics) and not ds.metrics:
            ds = scored.attach(ds)  # the text metrics (best reference) are the metrics studied
    mets = _metrics(metrics) or list(ds.metrics)
    api = given(api)
    ks = {k: api.pop(k) for k in ("low", "high", "pvalue") if k in api}
    method = {"method": api["method"]} if "method" in api else {}
    meta = {k: api.pop(k) for k in ("meta_method", "alternative") if k in api}
    design = {k: api.pop(k) for k in ("alpha", "correction") if k in api}
    refs = {k: api.pop(k) for k in _REF_KEYWORDS if k in api}
    refs = {"n_resamples" if k == "reference_draws" else k: v for k, v in refs.items()}
    try:
        results = {"ks": dg.ks_score(ds, humans, metrics=mets, **ks)}
    except ParameterError as exc:
        if "low" in ks or "high" in ks:
            raise
        raise click.BadParameter(f"{str(exc).splitlines()[0]} (command line: --low L --high H)",
                                 param_hint="--low/--high") from None
    # the meta-correlation and the correlation design's system level correlate across systems:
    # with fewer than 3 they are left out with a note, and the other diagnostics still run
    few = len(ds.systems) < 3
    if few:
        click.get_current_context().meta.setdefault("metaeval.notes", []).append(
            f"meta-correlation and correlation design skipped: {os.path.basename(data)} has "
            f"{len(ds.systems)} system(s), and both correlate across systems (at least 3)")
    else:
        results["meta_correlation"] = dg.meta_correlation(ds, humans, metrics=mets, **method, **meta)
    sizes = _sample_size(dg, ds, humans, metrics=mets, **api)
    if sizes is not None:
        results["sample_size"] = sizes
    if not few:
        results["correlation_design"] = dg.correlation_design(
            ds, columns=[*humans, *mets], **method, **design,
            **{k: v for k, v in meta.items() if k == "alternative"}, system_scores=_system_level())
    if scored is not None:
        per_ref = {c: scored.reference_scores[c] for c in scored.columns}
        results["reference_sensitivity"] = dg.reference_sensitivity(
            ds, humans, scores=per_ref, **method, **({"rng": api["rng"]} if "rng" in api else {}), **refs)
    if out:
        os.makedirs(out, exist_ok=True)
        for name, res in results.items():
            _write_csv(res.to_frame(), os.path.join(out, f"{name}.csv"))
        _write_json({k: v.to_dict() for k, v in results.items()}, os.path.join(out, "diagnostics.json"))
        _save_figure(lambda: _figures().plot_ks(results["ks"]), os.path.join(out, "ks.png"))
        if "meta_correlation" in results:
            _save_figure(lambda: _figures().plot_meta_correlation(results["meta_correlation"]),
                         os.path.join(out, "meta_correlation.png"))
        if "correlation_design" in results:
            _save_figure(lambda: _figures().plot_correlation_design(results["correlation_design"]),
                         os.path.join(out, "correlation_design.png"))
        if "reference_sensitivity" in results:
            _save_figure(lambda: _figures().plot_reference_sensitivity(results["reference_sensitivity"]),
                         os.path.join(out, "reference_sensitivity.png"))
    if fmt == "json":
        _emit_json({k: _clean(v.to_frame().drop(columns=["signature"], errors="ignore").to_dict(orient="records"))
                    for k, v in results.items()})
        return
    if fmt == "csv":
        _emit_csv_by_analysis(results)
        return
    tables = [_tables.frame_table(name, res) for name, res in results.items()]
    for t in tables:
        _dash_unset_recommended(t, threshold="threshold" in api)
    _show(*tables)


def _dash_unset_recommended(table, threshold):
    """The sample-size table's ``recommended`` is None when no size qualifies: a dash, and a
    footnote saying why (no --threshold, or no size whose sd is below it)."""
    if "recommended" not in table.columns:
        return
    k = table.columns.index("recommended")
    unset = [r for r in table.rows if r[k] == "None"]
    for r in unset:
        r[k] = "-"
    if unset:
        why = ("no size has an sd below --threshold" if threshold
               else "no --threshold given (with it: the smallest size whose sd is below it)")
        table.caption = "\n".join(filter(None, [table.caption, f"recommended -: {why}"]))


_MODEL_METRICS = _choices.MODEL_METRICS


def _text_adapters(metrics, model, flag="--metrics"):
    """The text-metric adapters named in --metrics (model-based ones need --model)."""
    from .. import textmetrics as tm

    adapters = []
    names = _split(metrics) or []
    if model is not None and names and not any(n in _MODEL_METRICS for n in names):
        # --model would be silently unused
        raise click.BadParameter(f"--model sets the model of {', '.join(_MODEL_METRICS)}; {flag} "
                                 f"{','.join(names)} take{'s' if len(names) == 1 else ''} none: leave --model "
                                 "out or add a model-based metric", param_hint="--model")
    for n in names:
        if n == "llm_judge":
            raise click.BadParameter("llm_judge is an LLM judge, configured by its own command: "
                                     "metaeval judge DATA --aspect TEXT --model NAME", param_hint=flag)
        if n not in _SCORABLE:
            raise click.BadParameter(f"unknown text metric {n!r}; choose from {', '.join(_SCORABLE)}",
                                     param_hint=flag)
        if n in _MODEL_METRICS:
            if model is None:
                what = "a local COMET model or a model name" if n in ("comet", "bleurt") else "a local model folder"
                raise click.BadParameter(f"{n} needs --model ({what})", param_hint="--model")
            adapters.append(tm.get_metric(n, model=model))
        else:
            adapters.append(tm.get_metric(n))
    if not adapters:
        raise click.BadParameter("give at least one text metric", param_hint="--metrics")
    return adapters


_SCORE = "textmetrics:score"
_PERTURBED = "perturb:score_perturbed"
_DETECTION = "diagnostics:perturbation_detection"


@command(epilog="Example: metaeval score summeval --metrics bleu,rouge1 --format csv")
@_layout_options(texts=True, rater_col=True, run_col=True)
@click.argument("data")
@click.option("--metrics", required=True, type=Registry(_SCORABLE, many=True),
              help="Comma-separated text metrics (" + ", ".join(_SCORABLE) + "; llm_judge is "
                   "configured by `metaeval judge`).")
@api_option(_SCORE, "multi_ref", choices=_choices.MULTI_REF)
@click.option("--model", default=None,
              help="Model of bertscore / gptscore / bartscore (a local folder; nothing is downloaded), "
                   "comet (a local COMET model or a name such as Unbabel/wmt22-comet-da) or bleurt.")
@click.option("--cache", default=None, type=click.Path(file_okay=False),
              help="Score cache folder: finished scores are never recomputed.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file: JSONL with system, input, hypothesis and references/reference/source.")
@click.option("--human", default=None, help="Human columns (files).")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@api_option(_SCORE, "n_jobs")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Write the scores (one row per metric x system x input) to CSV or Parquet.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def score(data, metrics, model, cache, texts_path, human, system, input_, out, fmt, **api):
    """Score a dataset's texts with text metrics (sacreBLEU, rouge-score, METEOR, local models)."""
    from .. import textmetrics as tm

    adapters = _text_adapters(metrics, model)
    ds = _load(data, system, input_, _split(human), None, None, texts=texts_path, need_texts=True)
    with _progress(None, "scoring texts") as bar:
        res = tm.score(ds, adapters, cache_dir=cache, progress=bar.update if bar is not None else None,
                       **given(api))
    frame = res.to_frame()
    if out:
        if out.endswith((".parquet", ".pq")):
            frame.to_parquet(out, index=False)
        else:
            _write_csv(frame, out)
    if fmt == "json":
        _emit_json(_clean(frame.to_dict(orient="records")))
    elif fmt == "csv":
        _emit_csv(frame)
    else:
        _show(_tables.score_table(res, frame))


def _perturbation_options(pairs, names):
    """--option KEY=VALUE (repeatable) -> {perturbation: {key: value}}, typed like the default."""
    from ..perturb import get_perturbation

    perts = {n: get_perturbation(n) for n in names}
    out = {n: {} for n in names}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise click.BadParameter(f"{pair!r}: write KEY=VALUE, e.g. fraction=0.3", param_hint="--option")
        takers = [n for n, p in perts.items() if key in p.defaults]
        if not takers:
            known = sorted({k for p in perts.values() for k in p.defaults})
            raise click.BadParameter(
                f"no chosen perturbation has an option {key!r}; their options: {', '.join(known) or 'none'}",
                param_hint="--option")
        for n in takers:
            default = perts[n].defaults[key]
            try:
                if isinstance(default, bool):
                    if raw.lower() not in ("true", "false", "yes", "no", "1", "0"):
                        raise ValueError
                    value = raw.lower() in ("true", "yes", "1")
                elif isinstance(default, int):
                    value = int(raw)
                elif isinstance(default, float):
                    value = float(raw)
                else:
                    value = None if raw.lower() == "none" else raw
            except ValueError:
                raise click.BadParameter(
                    f"{pair!r}: {key} of {n} takes a {type(default).__name__}", param_hint="--option"
                ) from None
            out[n][key] = value
    return out


@command(epilog="Example: metaeval perturb summeval --perturbation drop_words --metrics bleu --rng 0")
@_layout_options(texts=True, rater_col=True, run_col=True)
@click.argument("data")
@click.option("--perturbation", "perturbations", required=True, type=Registry(_choices.PERTURBATIONS, many=True),
              help="Comma-separated perturbations (" + ", ".join(_choices.PERTURBATIONS) + ").")
@click.option("--metrics", required=True, type=Registry(_SCORABLE, many=True),
              help="Comma-separated text metrics (as for `metaeval score`).")
@click.option("--option", "options", multiple=True,
              help="KEY=VALUE option of the perturbations that have it (repeatable), e.g. fraction=0.3.")
@click.option("--human", default=None, help="Human column of the originals (with --min-human; and for files).")
@api_option(_DETECTION, "min_human")
@api_option(_PERTURBED, "multi_ref", choices=_choices.MULTI_REF)
@click.option("--model", default=None, type=click.Path(exists=True),
              help="Local model folder for bertscore / gptscore / bartscore.")
@click.option("--cache", default=None, type=click.Path(file_okay=False),
              help="Score cache folder: a re-run computes nothing it has already scored.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file: JSONL with system, input, hypothesis and references/source.")
@api_option(_DETECTION, "ci", choices=_choices.BINOMIAL_CIS)
@api_option(_PERTURBED, "rng",
            help="Perturbation seed, a non-negative integer (not set: fresh entropy, recorded in --out).")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@api_option(_PERTURBED, "n_jobs")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: detection.csv/json, perturbed texts (JSONL) and detection.png.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def perturb(data, perturbations, metrics, options, human, model, cache, texts_path, system, input_, out, fmt,
            **api):
    """Perturbation detection: does each metric score outputs above their degraded versions?

    Seed paper 001, section 2.3.2: every hypothesis is perturbed (seeded), the original and the
    perturbed text are scored by the same text metrics, and a metric's accuracy is the share of
    pairs where it prefers the original (ties reported apart, binomial interval, sign test).
    """
    import pandas as pd

    from ..perturb import score_perturbed

    names = _split(perturbations) or []
    opts = _perturbation_options(options, names)
    adapters = _text_adapters(metrics, model)
    api = given(api)
    detection = {k: api.pop(k) for k in ("min_human", "ci") if k in api}
    if "min_human" in detection:
        if not human:
            raise click.BadParameter("--min-human needs --human (the column of the originals)",
                                     param_hint="--human")
        detection["human"] = human
    ds = _load(data, system, input_, _split(human), None, None, texts=texts_path, need_texts=True)
    seed = _run_seed(api.pop("rng", None), out)
    results, scored = {}, {}
    for name in names:
        with _progress(None, f"{name}: scoring originals and perturbed texts") as bar:
            ps = score_perturbed(ds, name, adapters, rng=seed, options=opts[name], cache_dir=cache,
                                 progress=bar.update if bar is not None else None, **api)
        scored[name] = ps
        results[name] = ps.detection(**detection)
    frame = pd.concat([r.to_frame().assign(perturbation=n, n_skipped=scored[n].perturbation.n_skipped)
                       for n, r in results.items()], ignore_index=True)
    frame = frame[["perturbation", *[c for c in frame.columns if c != "perturbation"]]]
    if out:
        os.makedirs(out, exist_ok=True)
        _write_csv(frame, os.path.join(out, "detection.csv"))
        _write_json({n: {"detection": r.to_dict(), "scoring": scored[n].to_dict()} for n, r in results.items()},
                    os.path.join(out, "detection.json"))
        for n, ps in scored.items():
            # ASCII JSON, as all JSON of --out: a text or name holding U+202E is written \u202e
            ps.perturbation.to_frame().to_json(os.path.join(out, f"perturbed_{n}.jsonl"), orient="records",
                                               lines=True)
        _save_figure(lambda: _figures().plot_detection(results), os.path.join(out, "detection.png"))
    if fmt == "json":
        _emit_json(_clean(frame.to_dict(orient="records")))
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    _show(*(_tables.detection_table(n, det, scored[n].perturbation) for n, det in results.items()))
