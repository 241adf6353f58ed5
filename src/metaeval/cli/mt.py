"""`metaeval read-mtme`, `wmt` and `span-agreement`: mt-metrics-eval data."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..report import tables as _tables
from ._api import api_option, api_options, command, given, signature
from ._data import (
    FORMAT_HELP,
    FORMATS,
    _data_options,
    _layout_options,
    _load,
    _metrics,
    _some_metrics,
    _split,
    _with,
)
from ._messages import _fail
from ._output import _emit_csv, _emit_json, _nan_to_none, _show, _write_csv

# --------------------------------------------------------------------------
# read-mtme: mt-metrics-eval's WMT data layout into a long file

_READ = "data:read_mtme"


@command("read-mtme", epilog="Example: metaeval read-mtme mt-metrics-eval-v2 wmt23 en-de --out ende.csv")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("testset")
@click.argument("lp")
@api_option(_READ, "human")
@api_option(_READ, "system_human", when_absent="--human")
@api_option(_READ, "level", name="score_level", strict_choices=("seg", "doc", "sys"))
@api_option(_READ, "refs", type=list, metavar="REF[,REF]", when_absent="keep every metric variant",
            help="Comma-separated references in use (e.g. refA): metric variants that use another reference "
                 "are dropped, and these human translations are never systems.")
@api_options(_READ, "include_human", "exclude_systems", "metrics", "primary", "primary_only", "segments",
             "ratings", "names",
             exclude_systems=dict(type=list, metavar="NAME[,NAME]"),
             metrics=dict(type=list, metavar="NAME[,NAME]|none", callback=lambda ctx, param, value: _metrics(value),
                          when_absent="all"),
             primary=dict(type=list, metavar="NAME[,NAME]"),
             segments=dict(strict_choices=("all", "rated")),
             names=dict(strict_choices=("full", "display")))
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Long table to write (.csv, .tsv, .jsonl, .parquet): system, input, contexts, scores.")
@click.option("--texts-out", default=None, type=click.Path(dir_okay=False),
              help="JSONL of the texts (system, input, source, reference, hypothesis) for --texts.")
def read_mtme_cmd(root, testset, lp, out, texts_out, score_level=None, **api):
    """Read mt-metrics-eval data (ROOT/TESTSET/..., language pair LP) into a long file.

    The file has one row per system x input with the human column, one column
    per metric variant (BLEU-refA, COMETKiwi-src, ...) and the context columns
    doc and domain; other commands read it with --human NAME (and
    --contexts doc,domain).  At seg and doc level the system-level scores of
    the .sys.score files (corpus BLEU, WMT's human system scores) are written
    beside it as OUT's name with .sys before the suffix (ende.csv ->
    ende.sys.csv: system, then one column per score column); pass it to
    correlate, compare, diagnose or report with --system-scores so that their
    system level uses these numbers, as mt-metrics-eval does.  See docs/mt.md.
    """
    from ..data import read_mtme

    api = given(api)
    if score_level is not None:  # --score-level sets read_mtme's level= (--level is a grouping level elsewhere)
        api["level"] = score_level
    ds = read_mtme(root, testset, lp, texts=texts_out is not None, **api)
    frame = ds.to_frame()
    if ds.contexts is not None:
        ctx = ds.contexts
        frame = frame.merge(ctx, on=[k for k in ("system", "input") if k in ctx.columns], how="left")
        cols = ["system", "input"] + [c for c in ctx.columns if c not in ("system", "input")]
        frame = frame[cols + [c for c in frame.columns if c not in cols]]
    suffix = os.path.splitext(out)[1].lower()
    # CSV/TSV through the exports' escaping (names from file names shown, never obeyed; a newline
    # kept in a quoted field), JSON Lines in ASCII (\u001b, \u202e), as every table metaeval writes
    writers = {".csv": lambda f, p: _write_csv(f, p),
               ".tsv": lambda f, p: _write_csv(f, p, sep="\t"),
               ".jsonl": lambda f, p: f.to_json(p, orient="records", lines=True),
               ".parquet": lambda f, p: f.to_parquet(p, index=False)}
    if suffix not in writers:
        raise click.BadParameter(f"unknown suffix {suffix!r}: use .csv, .tsv, .jsonl or .parquet",
                                 param_hint="--out")
    writers[suffix](frame, out)
    sys_out = None
    if ds.system_scores is not None:  # the .sys.score files: a second table that --system-scores reads
        sys_out = out[: len(out) - len(suffix)] + ".sys" + suffix
        writers[suffix](ds.system_scores.reset_index(), sys_out)
    if texts_out is not None:
        if ds.texts is None:
            _fail(f"no texts for --score-level {score_level}: texts are per segment (use --score-level seg)")
        ds.texts.to_json(texts_out, orient="records", lines=True)
    n, m = ds.shape
    click.echo(f"{out}: {n} systems x {m} inputs, human {', '.join(map(repr, ds.human))}, "
               f"{len(ds.metrics)} metrics")
    if sys_out is not None:
        click.echo(f"{sys_out}: given system-level scores of {len(ds.system_score_columns)} column(s) "
                   f"(the .sys.score files); use them with --system-scores {sys_out}")




_WMT = "wmt:run_wmt"
_SPANS = "wmt:span_agreement"
_SPA = "wmt:soft_pairwise_accuracy"
_COMPARE_SPA = "wmt:compare_spa"
#: The values metaeval.wmt.soft_pairwise_accuracy takes (tests/test_cli_api.py checks them against wmt.SPA_CI).
SPA_CI = ("none", "boot-inputs")
SPA_PRECISIONS = ("float64", "float32")


@command("wmt", epilog="Example: metaeval wmt mt-metrics-eval-v2 wmt23 --lps en-de --preset wmt23 --rng 0")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("testset")
@click.option("--lps", required=True, help="Comma-separated language pairs, e.g. en-de,zh-en.")
@api_option(_WMT, "preset", strict_choices=_choices.WMT_PRESETS,
            help="wmt24: per lp system SPA + segment acc_eq; wmt23: pooled accuracy + system/segment "
                 "Pearson + segment acc_eq; wmt20: per lp system Pearson on wmt-z (docs/mt.md).")
@api_option(_WMT, "human", help="Human score name (mqm, wmt-z, da-sqm, ...); none: the preset's standard "
                                "score, wmt-z for wmt20 and mqm otherwise.")
@click.option("--refs", default=None, help="Reference (one for all lps, or lp=ref,lp=ref) [default: each pair's "
                                            "standard reference, as mt-metrics-eval's meta_info].")
@api_options(_WMT, "primary", "primary_only", "include_human", "include_outliers", "exclude_systems", "n_resamples", "n_permutations", "alpha", "clusters",
             "rng", primary=dict(help="Comma-separated base names of the primary metrics."),
             primary_only=dict(help="Keep only the --primary metrics."),
             include_human=dict(help="Keep human translations as systems (or not); none: as mt-metrics-eval's "
                                     "tasks of the preset do."),
             alpha=dict(help="Significance level of the clusters and of wmt23's pooled accuracy."),
             include_outliers=dict(help="Keep the systems mt-metrics-eval marks as outliers (left out by "
                                        "default, as its tasks do)."),
             exclude_systems=dict(type=list, help="Comma-separated systems to leave out of every pair "
                                                  "(e.g. a human reference)."),
             n_resamples=dict(help="Perm-Both draws per metric pair (0: no clusters)."),
             n_permutations=dict(help="SPA sign draws."),
             clusters=dict(strict_choices=_choices.WMT_CLUSTER_RULES,
                           help="holm: (count+1)/(n+1) one-sided p-values, Holm-corrected over each task's pairs "
                                "(the rule of compare and the report); mtme: mt-metrics-eval's exact rule, count/n "
                                "uncorrected; metaeval: (count+1)/(n+1) uncorrected."))
@click.option("--format", "fmt", type=click.Choice(["text", "csv", "latex"]), default="text", show_default=True,
              help="Output: text (terminal), csv or latex (stdout).")
def wmt_cmd(root, testset, lps, refs, fmt, **api):
    """A WMT metrics-task table from mt-metrics-eval data (ROOT/TESTSET). See docs/mt.md."""
    from ..wmt import run_wmt

    ref_arg = refs
    if refs is not None and "=" in refs:
        ref_arg = {}
        for part in _split(refs):
            if "=" not in part:
                raise click.BadParameter(f"{part!r}: use lp=ref for every pair", param_hint="--refs")
            k, v = part.split("=", 1)
            ref_arg[k] = v
    res, weights = run_wmt(root, testset, _split(lps), refs=ref_arg, **given(api))
    click.echo(_tables.wmt_table(res, weights, fmt=fmt), nl=False)  # names escaped by the view


@command("span-agreement",
               epilog="Example: metaeval span-agreement en-de.mqm.rater1.seg.rating en-de.mqm.rater2.seg.rating")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@api_option(_SPANS, "match", strict_choices=("char", "exact"),
            help="char: F1 over characters marked as error; exact: F1 over identical spans.")
@api_option(_SPANS, "severity", help="A match needs the same severity.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def span_agreement_cmd(files, fmt, **api):
    """Rater agreement on error spans: precision/recall/F1 per rater pair (docs/mt.md).

    FILES are mt-metrics-eval .rating files (one per rater, e.g. LP.mqm.rater1.seg.rating)
    or TSVs with columns system, input, rater, start, end, severity, category."""
    import pandas as pd

    from ..wmt import read_error_spans, read_rating_spans, span_agreement

    spans = pd.concat([read_rating_spans(f) if str(f).endswith(".rating") else read_error_spans(f)
                       for f in files], ignore_index=True)
    api = given(api)
    res = span_agreement(spans, **api)
    frame = res.to_frame()
    if fmt == "json":
        _emit_json(_nan_to_none({"pairs": frame.to_dict(orient="records"), "mean_f1": res.mean_f1}))
    elif fmt == "csv":
        _emit_csv(frame)
    else:
        used = {k: api.get(k, p.default) for k, p in signature(_SPANS).items()}
        _show(_tables.span_agreement_table(res, **used))


@command("spa", epilog="Example: metaeval spa summeval --human coherence --metrics ROUGE.1,BLEU "
                             "--n-permutations 200 --rng 0")
@_layout_options(texts=False, run_col=True)
@_with(_data_options)
@api_options(_SPA, "n_permutations", "precision", "ci", "n_resamples", "confidence_level", "rng",
             precision=dict(choices=SPA_PRECISIONS), ci=dict(choices=SPA_CI),
             n_resamples=dict(help="Bootstrap resamples (--ci boot-inputs); with --compare: the Perm-Both draws "
                                   "of the one-sided test that A's SPA is higher than B's."))
@click.option("--compare", "pair", default=None, metavar="A,B",
              help="Two metrics: the Perm-Both test of their SPA difference (metaeval.wmt.compare_spa) "
                   "instead of the SPA of every metric.")
@api_option(_COMPARE_SPA, "sequential",
            help="With --compare: stop the Perm-Both test early after h exceedances (Besag-Clifford).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def spa_cmd(data, human, metrics, system, input_, rater, pair, fmt, **api):
    """Soft pairwise accuracy of every metric (Thompson et al. 2024, WMT24's system-level statistic).

    SPA compares each pair of systems' metric and human p-values (sign-flip permutations over the
    inputs); --compare A,B tests the difference of two metrics' SPA (Perm-Both).  DATA is any file
    or bundled dataset, as for correlate."""
    from ..wmt import compare_spa, soft_pairwise_accuracy

    api = given(api)
    ds = _load(data, system, input_, human, _some_metrics(metrics, "spa") if pair is None else _metrics(metrics),
               rater)
    if pair is not None:
        names = _split(pair) or []
        if len(names) != 2:
            raise click.BadParameter(f"{pair!r}: give two metrics A,B", param_hint="--compare")
        cmp_keys = set(signature(_COMPARE_SPA))
        wrong = [k for k in api if k not in cmp_keys]
        if wrong:
            raise click.BadParameter(f"{', '.join('--' + k.replace('_', '-') for k in wrong)} "
                                     f"appl{'ies' if len(wrong) == 1 else 'y'} to the SPA of every metric, not to "
                                     "--compare", param_hint="--compare")
        res = compare_spa(ds, human, names[0], names[1], **api)
        if fmt == "json":
            _emit_json(_nan_to_none(res.to_dict()))
        elif fmt == "csv":
            import pandas as pd

            _emit_csv(pd.DataFrame([res.to_dict()]))
        else:
            import pandas as pd

            _show(_tables.frame_table("SPA comparison", _Frame(pd.DataFrame([res.to_dict()]))))
        return
    if "sequential" in api:
        raise click.BadParameter("--sequential applies to --compare", param_hint="--sequential")
    res = soft_pairwise_accuracy(ds, human, metrics=_metrics(metrics), **api)
    if fmt == "json":
        _emit_json(_nan_to_none(res.to_frame().to_dict(orient="records")))
    elif fmt == "csv":
        _emit_csv(res.to_frame())
    else:
        _show(_tables.frame_table("soft pairwise accuracy", res))


class _Frame:
    """A frame as a result for the generic table view."""

    def __init__(self, frame):
        self._frame = frame

    def to_frame(self):
        return self._frame
