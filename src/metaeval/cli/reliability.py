"""`metaeval reliability` and `validity` (seed paper 002)."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..errors import DataError, ParameterError
from ..report import tables as _tables
from ._api import ApiOption, api_option, api_options, command, given, signature
from ._data import (
    SYSTEM_HELP,
    INPUT_HELP,
    FORMAT_HELP,
    _LEVELS_HELP,
    FORMATS,
    _layout_options,
    _load,
    _metrics,
    _one_level_option,
    _split,
)
from ._output import (
    _clean,
    _emit_csv,
    _emit_csv_by_analysis,
    _emit_json,
    _note,
    _save_figure,
    _say,
    _show,
    _write_csv,
    _write_json,
)


def _agreement_registry():
    """The agreement coefficients the library knows (metaeval.reliability.AGREEMENT_METHODS, kept in
    the light module metaeval._agreement_registry so that --help imports no statistics)."""
    from .._agreement_registry import AGREEMENT_METHODS

    return AGREEMENT_METHODS


def _agreement_methods(value):
    """--agreement: comma-separated keys of the registry (None: the library's default)."""
    from .._agreement_registry import DEFAULT_AGREEMENT

    names = _split(value)
    if not names:
        return DEFAULT_AGREEMENT
    known = _agreement_registry()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ParameterError(f"--agreement: unknown coefficient(s) {', '.join(map(repr, unknown))}; choose from "
                             f"{', '.join(known)}")
    return list(dict.fromkeys(names))


def _agreement_notes(res, rater_slots):
    """Say which rating design the agreement table rests on (rotating raters, slots)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    notes = ctx.meta.setdefault("metaeval.notes", [])
    for design, why in (("rotating", "raters rotate over cells"), ("slots", "--rater-slots")):
        cols = sorted({r.column for r in res if f"raters:{design}" in r.signature})
        if cols:
            notes.append(f"agreement of {', '.join(map(repr, cols))}: {why}, so the ICCs are the one-way "
                         "ICC(1)/ICC(1,k) of each cell's own ratings; ICC(2)/ICC(3) and per-rater "
                         "correlations need the same raters in every cell")


_CONSISTENCY = "reliability:consistency"
_MTMM = "validity:mtmm"


@command(epilog="Example: metaeval reliability summeval --human coherence --metrics ROUGE.1,BLEU "
                      "--n-resamples 100 --rng 0")
@_layout_options(texts=False)
@click.argument("data")
@click.option("--metrics", default=None, help="Comma-separated metric columns (default: all).")
@click.option("--human", default=None,
              help="Comma-separated human columns (required for files; agreement is computed for "
                   "those with 2+ raters).")
@api_options(_CONSISTENCY, "target", "ci", "n_resamples", "normalize", "rng",
             target=dict(help="Target reliability for runs/inputs needed (Spearman-Brown)."),
             ci=dict(choices=_choices.CONSISTENCY_CI, help="Interval of alpha."),
             normalize=dict(choices=_choices.NORMALIZATIONS, help="Rank normalization first."))
@click.option("--sizes", default=None, help="Comma-separated input counts for the alpha-vs-size curve.")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@click.option("--rater", "--rater-col", "rater", cls=ApiOption, aliases=("--rater-col",), default=None, help="Rater column (long files with several raters).")
@click.option("--run", "--run-col", "run", cls=ApiOption, aliases=("--run-col",), default=None,
              help="Run column (long files where a stochastic metric was scored several times): "
                   "enables test-retest stability.")
@click.option("--agreement", "agreement_methods", default=None, metavar="METHOD[,METHOD]",
              help="Comma-separated agreement coefficients of the raters (default: "
                   "krippendorff_interval, krippendorff_ordinal and the six ICCs): "
                   + "; ".join(f"{k}: {v}" for k, v in _agreement_registry().items()) + ".")
@click.option("--rater-slots", is_flag=True,
              help="The rater columns are slots (rater1..raterK: different people in different "
                   "cells): report only the agreement forms that apply (ICC(1), ICC(1,k), "
                   "Krippendorff's alpha).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, JSON and figures.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def reliability(data, metrics, human, sizes, system,
                input_, rater, run, agreement_methods, rater_slots, out, fmt, **api):
    """Reliability: metric stability (runs), consistency (Cronbach's alpha), rater agreement (seed paper 002)."""
    from ..reliability import SAME_RATER_FORMS, agreement, stability

    methods = _agreement_methods(agreement_methods)

    ds = _load(data, system, input_, _split(human), _metrics(metrics), rater, runs=True, run=run,
               file_only={"--run": run})
    mets = _metrics(metrics) or list(ds.metrics)
    with_runs = [m for m in mets if ds.ratings(m).shape[0] >= 2]
    humans = [h for h in (_split(human) or ds.human) if ds.ratings(h).shape[0] >= 2]
    single = [h for h in (_split(human) or []) if h not in humans]
    if single:
        _note(f"rater agreement skipped for {', '.join(map(repr, single))}: one rating "
              "per cell (declare the rater column with --rater)")
    if not mets and not humans:
        raise click.BadParameter("nothing to assess: no metric columns and no human column with 2+ "
                                 "raters (name them with --metrics, or --human with --rater)",
                                 param_hint="--metrics/--human")
    results = {}
    if with_runs:
        results["stability"] = stability(ds, with_runs, **_some(api, "target", "normalize"))
    elif mets:
        _note("stability skipped: no metric has 2+ runs (declare the run column with --run)")
    if mets:
        _consistency_results(results, ds, mets, api, sizes)
    if humans:
        res = agreement(ds, humans, method=methods, raters="slots" if rater_slots else "same")
        _agreement_notes(res, rater_slots)
        # only the forms that apply: ICC(2)/(3) of rotating raters or slots are NaN by design
        results["agreement"] = type(res)(tuple(r for r in res if not (
            r.method in SAME_RATER_FORMS and ("raters:rotating" in r.signature or "raters:slots" in r.signature))))
    if out:
        from ..report.figures import alpha_curve, reliability_bars

        os.makedirs(out, exist_ok=True)
        for name, res in results.items():
            _write_csv(res.to_frame(), os.path.join(out, f"{name}.csv"))
        _write_json({k: v.to_dict() for k, v in results.items()}, os.path.join(out, "reliability.json"))
        if "consistency" in results:
            _save_figure(lambda: reliability_bars(results.get("stability"), results["consistency"]),
                         os.path.join(out, "reliability_bars.png"))
            _save_figure(lambda: alpha_curve(results["consistency_curve"]),
                         os.path.join(out, "alpha_vs_size.png"))
    if fmt == "json":
        _emit_json({k: _clean(v.to_frame().drop(columns=["signature"]).to_dict(orient="records"))
                    for k, v in results.items()})
        return
    if fmt == "csv":
        _emit_csv_by_analysis({k: v for k, v in results.items() if k != "consistency_curve"})
        return
    target = api.get("target")  # absent options are None here: the analysis' default then
    _reliability_tables(results, signature(_CONSISTENCY)["target"].default if target is None else target)


def _some(api, *keys):
    """The given options among ``keys``."""
    return {k: api[k] for k in keys if api.get(k) is not None}


def _consistency_results(results, ds, mets, api, sizes):
    import warnings

    from ..reliability import consistency, consistency_curve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        results["consistency"] = consistency(ds, mets, **_some(api, "ci", "n_resamples", "target", "normalize",
                                                               "rng"))
        try:
            size_list = [int(v) for v in _split(sizes)] if sizes else None
        except ValueError:
            raise click.BadParameter(f"{sizes!r}: give comma-separated integers, e.g. 10,20,50",
                                     param_hint="--sizes") from None
        results["consistency_curve"] = consistency_curve(ds, mets, sizes=size_list,
                                                         **_some(api, "normalize", "rng"))


def _reliability_tables(results, target):
    _show(*_tables.reliability_tables(results, target))


@command(epilog="Example: metaeval validity summeval --human coherence,consistency,fluency --no-cfa")
@_layout_options(texts=False, run_col=True)
@click.argument("data")
@click.option("--human", default=None,
              help="Comma-separated human columns with individual raters: the MTMM traits and CFA "
                   "factors (default: every human column with 2+ raters).")
@click.option("--metrics", default=None,
              help="Comma-separated metrics for concurrent validity (default: all).")
@api_option(_MTMM, "level", callback=_one_level_option, help="One of " + _LEVELS_HELP + ".",
            complete=tuple(_choices.LEVELS))
@api_option(_MTMM, "method", choices=_choices.METHODS,
            help="Coefficient of the MTMM table and concurrent validity: Kendall's tau-b by default, as seed "
                 "paper 002 prescribes (Sec. 4, Fig. 4: \"Values are based on Kendall's tau\"); correlate, "
                 "compare and the report's correlation tables default to pearson.")
@click.option("--criterion", type=click.Choice(["human", "factors"]), default="human", show_default=True,
              help="Concurrent validity against the raw human means or the CFA factor scores.")
@click.option("--no-cfa", is_flag=True, help="Skip the confirmatory factor analysis.")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@click.option("--rater", "--rater-col", "rater", cls=ApiOption, aliases=("--rater-col",), default=None, help="Rater column (long files with several raters).")
@click.option("--rater-slots", is_flag=True,
              help="The rater columns are slots (different people in different cells): refused here, "
                   "since MTMM and CFA treat each rater as one method; use `reliability --rater-slots`.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: CSV tables, JSON and the MTMM table as HTML.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def validity(data, human, metrics, level, method, criterion, no_cfa, system, input_, rater, rater_slots,
             out, fmt):
    """Validity: MTMM table, confirmatory factor analysis, concurrent validity (seed paper 002)."""
    from ..validity import cfa, concurrent_validity, mtmm

    if criterion == "factors" and no_cfa:
        raise click.BadParameter("--criterion factors needs the CFA (drop --no-cfa)")
    if rater_slots:
        raise ParameterError("--rater-slots: MTMM and CFA treat each rater as one method, the same person "
                             "in every cell; rater slots are not, so their MTMM blocks and factor loadings "
                             "would mix raters; run `metaeval reliability --rater-slots` for the agreement "
                             "forms that apply")
    ds = _load(data, system, input_, _split(human), _metrics(metrics), rater)
    # checked before the CFA (minutes on large data): a file of human ratings only has no metric
    # to validate; MTMM and CFA still run (issue 14.6)
    has_metrics = bool(_metrics(metrics) or ds.metrics)
    if criterion == "factors" and not has_metrics:
        raise DataError(f"--criterion factors: {os.path.basename(data)!r} has no metric column, so there is "
                        "no concurrent validity to compute (name metric columns with --metrics)")
    lm = given({"level": level, "method": method})
    # the traits (default: every human column with 2+ raters) and the rules of the rating design
    # (single raters, raters rotating over cells, one trait) are the analysis' own (issue 25)
    res_mtmm = mtmm(ds, _split(human) or None, **lm)
    traits = list(res_mtmm.traits)
    fa = None if no_cfa else cfa(ds, {t: [f"{t}@{r}" for r in ds.rater_labels(t)] for t in traits})
    crit = fa if criterion == "factors" else traits
    cv = concurrent_validity(ds, crit, metrics=_metrics(metrics), **lm) \
        if has_metrics else None
    if cv is None:
        click.get_current_context().meta.setdefault("metaeval.notes", []).append(
            f"concurrent validity skipped: {os.path.basename(data)!r} has no metric column (human ratings "
            "only); MTMM and CFA are shown")
    if out:
        os.makedirs(out, exist_ok=True)
        _write_csv(res_mtmm.to_frame(), os.path.join(out, "mtmm.csv"))
        _write_csv(res_mtmm.campbell_fiske(), os.path.join(out, "campbell_fiske.csv"))
        with open(os.path.join(out, "mtmm.html"), "w") as f:
            f.write(_tables.mtmm_html(res_mtmm))
        if cv is not None:
            _write_csv(cv.to_frame(), os.path.join(out, "concurrent_validity.csv"))
        if fa is not None:
            _write_csv(fa.to_frame(), os.path.join(out, "cfa_parameters.csv"))
            _write_csv(fa.fit_frame(), os.path.join(out, "cfa_fit.csv"))
            _write_csv(fa.correlation_matrix(), os.path.join(out, "cfa_factor_correlations.csv"), index=True)
    if fmt == "json":
        doc = {"mtmm": _clean(res_mtmm.to_frame().to_dict(orient="records")),
               "campbell_fiske": _clean(res_mtmm.campbell_fiske().to_dict(orient="records")),
               "concurrent_validity": [] if cv is None else _clean(cv.to_frame().to_dict(orient="records"))}
        if fa is not None:
            doc["cfa"] = {"converged": fa.converged, "admissible": fa.admissible,
                          "interpretable": fa.interpretable, "problem": fa.problem}
            doc["cfa_fit"] = _clean(fa.fit_frame().to_dict(orient="records"))
            doc["cfa_factor_correlations"] = fa.correlation_matrix().to_dict()
        _emit_json(doc)
        return
    if fmt == "csv":
        if cv is None:  # no metric: the MTMM table is the result
            _emit_csv(res_mtmm.to_frame())
        else:
            _emit_csv(cv.to_frame())
        return
    _tables.render_rich(_tables.mtmm_table(res_mtmm))
    _say(res_mtmm.signature)
    _show(_tables.campbell_fiske_table(res_mtmm))
    if fa is not None and not fa.interpretable:
        # a non-converged or inadmissible fit: no estimates shown (its numbers mean nothing)
        for line in _tables.cfa_withheld(fa):
            _say(line)
    elif fa is not None:
        _show(*_tables.cfa_tables(fa))
    if cv is None:
        return
    used = {k: lm.get(k, signature(_MTMM)[k].default) for k in ("level", "method")}
    _show(_tables.concurrent_validity_table(cv, **used, criterion=criterion))

