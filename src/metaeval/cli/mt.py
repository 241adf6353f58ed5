"""`metaeval read-mtme`, `wmt` and `span-agreement`: mt-metrics-eval data."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..report import tables as _tables
from ._api import ApiOption
from ._data import FORMATS, _split
from ._messages import _fail
from ._output import _emit_csv, _emit_json, _nan_to_none, _show, _write_csv

# --------------------------------------------------------------------------
# read-mtme: mt-metrics-eval's WMT data layout into a long file

@click.command("read-mtme")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("testset")
@click.argument("lp")
@click.option("--human", default="mqm", show_default=True,
              help="Human score name (human-scores/LP.NAME.LEVEL.score): mqm, wmt-z, da-sqm, ...")
@click.option("--score-level", "level", type=click.Choice(["seg", "doc", "sys"]), default="seg", show_default=True,
              help="Which score files to read: segments, documents, or system-level scores "
                   "(mt-metrics-eval's file level; an analysis' grouping level is --level).")
@click.option("--refs", default=None, help="Comma-separated references in use (e.g. refA): other metric "
              "variants are dropped and these human translations are never systems.")
@click.option("--include-human", is_flag=True, help="Keep human translations (reference names) as systems.")
@click.option("--exclude-systems", default=None, help="Comma-separated systems to drop (e.g. outliers).")
@click.option("--metrics", default=None, help="Comma-separated metric columns or base names (default: all).")
@click.option("--primary", default=None, help="Comma-separated base names of the primary metrics.")
@click.option("--primary-only", is_flag=True, help="Keep only the --primary metrics.")
@click.option("--segments", type=click.Choice(["all", "rated"]), default="all", show_default=True,
              help="System level: metric means over all segments (the .sys.score files) or over the "
              "human-rated ones (the '.true' convention).")
@click.option("--ratings", default=None, help="Error-span rating name (human-scores/LP.NAME.seg.rating, "
              "e.g. mqm.merged): adds a human column of MQM scores from the spans (Major 5, Minor 1, ...).")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Long table to write (.csv, .tsv, .jsonl, .parquet): system, input, contexts, scores.")
@click.option("--texts-out", default=None, type=click.Path(dir_okay=False),
              help="JSONL of the texts (system, input, source, reference, hypothesis) for --texts.")
def read_mtme_cmd(root, testset, lp, human, level, refs, include_human, exclude_systems, metrics,
                  primary, primary_only, segments, ratings, out, texts_out):
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

    ds = read_mtme(root, testset, lp, human=human, level=level, refs=_split(refs),
                   include_human=include_human, exclude_systems=_split(exclude_systems) or (),
                   metrics=_split(metrics), primary=_split(primary), primary_only=primary_only,
                   segments=segments, texts=texts_out is not None, ratings=ratings)
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
            _fail(f"no texts for level {level!r}: texts are per segment (use --level seg)")
        ds.texts.to_json(texts_out, orient="records", lines=True)
    n, m = ds.shape
    click.echo(f"{out}: {n} systems x {m} inputs, human {', '.join(map(repr, ds.human))}, "
               f"{len(ds.metrics)} metrics")
    if sys_out is not None:
        click.echo(f"{sys_out}: given system-level scores of {len(ds.system_score_columns)} column(s) "
                   f"(the .sys.score files); use them with --system-scores {sys_out}")




@click.command("wmt")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("testset")
@click.option("--lps", required=True, help="Comma-separated language pairs, e.g. en-de,zh-en.")
@click.option("--preset", type=click.Choice(_choices.WMT_PRESETS), default="wmt24", show_default=True,
              help="wmt24: per lp system SPA + segment acc_eq; wmt23: pooled accuracy + system/segment "
              "Pearson + segment acc_eq.")
@click.option("--human", default="mqm", show_default=True)
@click.option("--refs", default=None, help="Standard reference (one for all lps, or lp=ref,lp=ref).")
@click.option("--primary", default=None, help="Comma-separated base names of the primary metrics.")
@click.option("--primary-only", is_flag=True)
@click.option("--include-human", is_flag=True, help="Keep human translations as systems.")
@click.option("--n-resamples", type=int, default=1000, show_default=True,
              help="Perm-Both draws per metric pair (0: no clusters).")
@click.option("--n-permutations", type=int, default=1000, show_default=True, help="SPA sign draws.")
@click.option("--clusters", type=click.Choice(_choices.WMT_CLUSTER_RULES), default="holm", show_default=True,
              help="holm: (count+1)/(n+1) one-sided p-values, Holm-corrected over each task's pairs (the rule "
                   "of compare and the report); mtme: mt-metrics-eval's exact rule, count/n uncorrected; "
                   "metaeval: (count+1)/(n+1) uncorrected.")
@click.option("--rng", "--seed", "seed", cls=ApiOption, aliases=("--seed",), type=int, default=None)
@click.option("--format", "fmt", type=click.Choice(["text", "csv", "latex"]), default="text", show_default=True)
def wmt_cmd(root, testset, lps, preset, human, refs, primary, primary_only, include_human, n_resamples,
            n_permutations, clusters, seed, fmt):
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
    res, weights = run_wmt(root, testset, _split(lps), preset=preset, human=human, refs=ref_arg,
                           primary=_split(primary), primary_only=primary_only, include_human=include_human,
                           n_resamples=n_resamples, n_permutations=n_permutations, clusters=clusters,
                           rng=seed)
    click.echo(_tables.wmt_table(res, weights, fmt=fmt), nl=False)  # names escaped by the view


@click.command("span-agreement")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--match", type=click.Choice(["char", "exact"]), default="char", show_default=True,
              help="char: F1 over characters marked as error; exact: F1 over identical spans.")
@click.option("--severity", is_flag=True, help="A match needs the same severity.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def span_agreement_cmd(files, match, severity, fmt):
    """Rater agreement on error spans: precision/recall/F1 per rater pair (docs/mt.md).

    FILES are mt-metrics-eval .rating files (one per rater, e.g. LP.mqm.rater1.seg.rating)
    or TSVs with columns system, input, rater, start, end, severity, category."""
    import pandas as pd

    from ..wmt import read_error_spans, read_rating_spans, span_agreement

    spans = pd.concat([read_rating_spans(f) if str(f).endswith(".rating") else read_error_spans(f)
                       for f in files], ignore_index=True)
    res = span_agreement(spans, match=match, severity=severity)
    frame = res.to_frame()
    if fmt == "json":
        _emit_json(_nan_to_none({"pairs": frame.to_dict(orient="records"), "mean_f1": res.mean_f1}))
    elif fmt == "csv":
        _emit_csv(frame)
    else:
        _show(_tables.span_agreement_table(res, match=match, severity=severity))
