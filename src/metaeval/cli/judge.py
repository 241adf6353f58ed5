"""`metaeval judge`: LLM judges."""

from __future__ import annotations

import os
from contextlib import contextmanager

import click

from .. import _choices
from ..report import tables as _tables
from ..report.tables import literal as _literal
from ._api import ApiOption
from ._data import FORMATS, _layout_options, _load, _split, SYSTEM_HELP, INPUT_HELP, FORMAT_HELP
from ._output import _emit_csv, _emit_json, _nan_to_none, _progress, _show, _write_csv


@contextmanager
def _judge_log():
    """Show the judge's log records (retries, failures recorded as NaN) on stderr as
    ``metaeval: judge: ...`` lines while the command runs."""
    import logging

    class _Echo(logging.Handler):
        def emit(self, record):
            click.echo(f"metaeval: judge: {_literal(record.getMessage())}", err=True)

    log = logging.getLogger("metaeval.judge")
    handler = _Echo(logging.WARNING)
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)


@click.command(epilog="Example: metaeval judge summeval --aspect coherence --backend openai --model "
                      "gpt-4o-mini --max-inputs 2")
@_layout_options(texts=True, rater_col=True, run_col=True)
@click.argument("data")
@click.option("--aspect", required=True,
              help="The evaluation criterion ({aspect} of the prompt): the text itself, or a file holding it.")
@click.option("--scale", default="1-5", show_default=True,
              help="Integer rating scale LOW-HIGH: 1-5, 1-10, 0-100, ...")
@click.option("--samples", type=int, default=1, show_default=True,
              help="Answers per output; each is a run of the metric (stability across samples).")
@click.option("--temperature", type=float, default=0.0, show_default=True, help="Sampling temperature of the model.")
@click.option("--aggregate", type=click.Choice(_choices.JUDGE_AGGREGATES), default="mean",
              show_default=True, help="Aggregation of the samples (geval: probability-weighted, needs logprobs).")
@click.option("--backend", type=click.Choice(_choices.JUDGE_BACKENDS), required=True,
              help="openai: any OpenAI-compatible chat-completions endpoint; local: a causal LM folder.")
@click.option("--model", required=True, help="Model name (openai) or local model folder (local).")
@click.option("--base-url", default=None,
              help="openai: the API root (default $OPENAI_BASE_URL, else https://api.openai.com/v1); "
                   "redirects are never followed.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="openai: environment variable holding the API key (never printed or stored).")
@click.option("--concurrency", type=int, default=4, show_default=True, help="openai: requests in flight.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="openai: deadline in seconds of each attempt (connect, send, whole answer).")
@click.option("--max-retries", type=int, default=5, show_default=True,
              help="openai: retries on 429/5xx/time-outs (exponential backoff with jitter).")
@click.option("--max-backoff", type=float, default=60.0, show_default=True,
              help="openai: longest wait between attempts; a longer Retry-After stops the request.")
@click.option("--max-response-bytes", type=int, default=16 * 2**20, show_default=True,
              help="openai: largest response body accepted.")
@click.option("--decoding", type=click.Choice(_choices.JUDGE_DECODINGS), default="generate", show_default=True,
              help="local: free answer then parse, or the rating drawn from the scale values' probabilities.")
@click.option("--task", default="the target text", show_default=True, help="{task} of the prompt.")
@click.option("--source-des", default="Source text", show_default=True, help="{source_des} of the prompt.")
@click.option("--target-des", default="Target text", show_default=True, help="{target_des} of the prompt.")
@click.option("--template", "template_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A prompt template file (default: seed paper 000 Table 4).")
@click.option("--context", type=click.Choice(["source", "references"]), default="source", show_default=True,
              help="What fills {source}.")
@click.option("--pattern", default=None, help="Rating regex with one group (default: the number after 'Rating:').")
@click.option("--on-failure", type=click.Choice(_choices.JUDGE_ON_FAILURE), default="nan", show_default=True,
              help="Answers without a rating: NaN, or paper 000's random rating (replication only).")
@click.option("--on-error", type=click.Choice(_choices.JUDGE_ON_ERROR), default="raise", show_default=True,
              help="A request failing after its retries: stop (resumable), or NaN and go on.")
@click.option("--seed", type=int, default=0, show_default=True, help="Base of the per-request seeds.")
@click.option("--max-tokens", type=int, default=512, show_default=True, help="Largest answer, in tokens.")
@click.option("--name", default=None, help="The score column (none: the judge's, llm_judge).")
@click.option("--cache", default=None, type=click.Path(file_okay=False),
              help="Response cache folder (default $METAEVAL_CACHE_DIR, $XDG_CACHE_HOME/metaeval or ~/.cache/metaeval).")
@click.option("--no-cache", is_flag=True, help="Cache nothing.")
@click.option("--texts", "texts_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="For a data file: JSONL with system, input, hypothesis and source/references.")
@click.option("--human", default=None, help="Human columns (files).")
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system", show_default=True, help=SYSTEM_HELP)
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input", show_default=True, help=INPUT_HELP)
@click.option("--max-inputs", type=int, default=None, help="Judge only the first K inputs (a trial run).")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Write one row per system x input x sample (value, rating, status, raw answer) to CSV or Parquet.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
@click.option("--pairwise", is_flag=True,
              help="Compare the outputs of each pair of systems (A, B or tie, in both orders) instead of "
                   "rating them; --template and --pattern then give the pairwise prompt and verdict parser.")
def judge(data, aspect, scale, samples, temperature, aggregate, backend, model, base_url, api_key_env,
          concurrency, timeout, max_retries, max_backoff, max_response_bytes, decoding, task, source_des, target_des, template_path, context,
          pattern, on_failure, on_error, seed, max_tokens, name, cache, no_cache, texts_path, human, system,
          input_, max_inputs, out, fmt, pairwise):
    """Rate a dataset's outputs with an LLM judge (prompt of seed paper 000 Table 4; G-Eval)."""
    from .. import textmetrics as tm

    if os.path.isfile(aspect):
        with open(aspect, encoding="utf8") as f:
            aspect = f.read().strip()
    kw = {}
    if template_path is not None:
        with open(template_path, encoding="utf8") as f:
            kw["template"] = f.read()
    from click.core import ParameterSource

    ctx = click.get_current_context()
    only = {"openai": ("concurrency", "timeout", "max_retries", "max_backoff", "max_response_bytes",
                       "base_url", "api_key_env"),
            "local": ("decoding",)}
    for other, names in only.items():
        given = [n for n in names if other != backend
                 and ctx.get_parameter_source(n) == ParameterSource.COMMANDLINE]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise click.BadParameter(f"{flags} apply to --backend {other}, not {backend}",
                                     param_hint="--backend")
    if pairwise:
        given = [n for n in ("scale", "samples", "aggregate", "on_failure")
                 if ctx.get_parameter_source(n) == ParameterSource.COMMANDLINE]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise click.BadParameter(f"{flags} apply to ratings, not to --pairwise verdicts",
                                     param_hint="--pairwise")
        if "template" in kw:
            kw["pairwise_template"] = kw.pop("template")
        if pattern is not None:
            kw["preference_pattern"], pattern = pattern, None
    if backend == "openai":
        be = tm.OpenAIBackend(model, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                              max_retries=max_retries, max_backoff=max_backoff,
                              max_response_bytes=max_response_bytes, concurrency=concurrency)
    else:
        be = tm.LocalBackend(model, decoding=decoding)
    metric = tm.LLMJudge(aspect, backend=be, scale=scale, samples=samples, temperature=temperature,
                         aggregate=aggregate, task=task, source_des=source_des, target_des=target_des,
                         context=context, pattern=pattern, on_failure=on_failure, on_error=on_error,
                         seed=seed, max_tokens=max_tokens, name=name,
                         cache_dir=False if no_cache else cache, **kw)
    ds = _load(data, system, input_, _split(human), None, None, texts=texts_path, need_texts=True)
    if max_inputs is not None:
        if max_inputs < 1:
            raise click.BadParameter(f"{max_inputs}: give a positive number of inputs", param_hint="--max-inputs")
        ds = ds.subset(inputs=list(ds.inputs[:max_inputs]))
    with _progress(None, "judging") as bar, _judge_log():
        def prog(done, total, counts):
            if bar is not None:
                bar.update(done, total, description=(
                    f"judging: {counts['requested']} requested, {counts['cached']} cached, "
                    f"{counts['failed']} failed"))

        if pairwise:
            return _judge_pairwise_output(tm.judge_pairs(ds, metric, progress=prog), out, fmt)
        res = tm.judge(ds, metric, progress=prog)
    frame = res.to_frame()
    if out:
        if out.endswith((".parquet", ".pq")):
            frame.to_parquet(out, index=False)
        else:
            _write_csv(frame, out)
    if fmt == "json":
        _emit_json(_nan_to_none(res.to_dict(arrays=True)))
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    _show(*_tables.judge_tables(res))

def _judge_pairwise_output(frame, out, fmt):
    """Write and print the long table of ``judge --pairwise``."""
    if out:
        if out.endswith((".parquet", ".pq")):
            frame.to_parquet(out, index=False)
        else:
            _write_csv(frame, out)
    counts = frame.attrs["counts"]
    if fmt == "json":
        rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
        _emit_json({"signature": frame.attrs["signature"], **counts, "rows": rows})
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    _show(_tables.judge_pairs_table(frame))


# ----------------------------------------------------------------------------- report
