"""`metaeval judge`: LLM judges."""

from __future__ import annotations

import os
from contextlib import contextmanager

import click

from .. import _choices
from ..report import tables as _tables
from ..report.tables import literal as _literal
from ._api import ApiOption, api_option, api_options, command, given, signature
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


_JUDGE = "textmetrics._judge:LLMJudge"
_OPENAI = "textmetrics._judge_backends:OpenAIBackend"
_LOCAL = "textmetrics._judge_backends:LocalBackend"
_PAIRS = "textmetrics._judge:judge_pairs"

#: The keywords of each backend's options (given with another --backend: an error).
_BACKEND_KEYWORDS = {"openai": ("base_url", "api_key_env", "api_key_header", "concurrency", "timeout", "max_retries",
                                "backoff", "max_backoff", "jitter", "rng", "max_response_bytes", "extra_body",
                                "headers"),
                     "local": ("decoding", "answer_prefix", "chat_template", "device")}
#: Keywords of ratings, refused with --pairwise (its verdicts have no scale, samples or aggregation).
_RATING_KEYWORDS = ("scale", "samples", "aggregate", "on_failure", "top_logprobs")


def _prefixed(prefix, keywords, **per_keyword):
    """api_options' per-keyword arguments of one backend's options: each help starts with ``prefix``."""
    return {k: {"prefix": prefix, **per_keyword.get(k, {})} for k in keywords}


def _system_pairs(ctx, param, value):
    """--pairs A:B,C:D -> [(A, B), (C, D)] (judge_pairs checks the systems)."""
    out = []
    for item in _split(value) or []:
        a, sep, b = item.partition(":")
        if not sep or not a.strip() or not b.strip():
            raise click.BadParameter(f"{item!r}: write each pair as system_a:system_b, e.g. M11:M13",
                                     param_hint="--pairs")
        out.append((a.strip(), b.strip()))
    return out


def _json_object(ctx, param, value):
    """--extra-body / --headers: a JSON object -> dict (the backend checks its content)."""
    import json

    flag = "--" + param.name.replace("_", "-")
    try:
        out = json.loads(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not JSON ({exc.msg}): give an object such as "
                                 + ('\'{"top_p": 1.0}\'' if param.name == "extra_body"
                                    else '\'{"OpenAI-Organization": "org-..."}\''), param_hint=flag) from None
    if not isinstance(out, dict):
        raise click.BadParameter(f"{value!r} is a JSON {type(out).__name__}: give an object {{...}}", param_hint=flag)
    return out


@command(epilog="Example: metaeval judge summeval --aspect coherence --backend openai --model "
                "gpt-4o-mini --max-inputs 2")
@_layout_options(texts=True, rater_col=True, run_col=True)
@click.argument("data")
@click.option("--aspect", required=True,
              help="The evaluation criterion ({aspect} of the prompt): the text itself, or a file holding it.")
@api_option(_JUDGE, "backend", strict_choices=_choices.JUDGE_BACKENDS)
@click.option("--model", required=True, help="Model name (openai) or local model folder (local).")
@api_options(_JUDGE, "scale", "samples", "temperature", "aggregate", "top_logprobs",
             aggregate=dict(strict_choices=_choices.JUDGE_AGGREGATES))
@api_options(_OPENAI, *_BACKEND_KEYWORDS["openai"], **_prefixed("openai: ", _BACKEND_KEYWORDS["openai"],
             base_url=dict(when_absent="$OPENAI_BASE_URL, else https://api.openai.com/v1"),
             rng=dict(aliases=(),  # --seed is the judge's request seed
                      help="Seed of the random part of the waits between retries (--jitter), a non-negative "
                           "integer; it changes waits only, never answers or cache keys."),
             extra_body=dict(callback=_json_object, metavar="JSON"),
             headers=dict(callback=_json_object, metavar="JSON")))
@api_options(_LOCAL, *_BACKEND_KEYWORDS["local"], **_prefixed("local: ", _BACKEND_KEYWORDS["local"],
             decoding=dict(strict_choices=_choices.JUDGE_DECODINGS),
             chat_template=dict(when_absent="when the tokenizer has one")))
@api_options(_JUDGE, "task", "source_des", "target_des")
@click.option("--template", "template_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A prompt template file (default: seed paper 000 Table 4).")
@api_options(_JUDGE, "context", "pattern", "on_failure", "on_error", "seed", "max_tokens", "name",
             context=dict(strict_choices=_choices.JUDGE_CONTEXTS),
             pattern=dict(when_absent="the number after 'Rating:'"),
             on_failure=dict(strict_choices=_choices.JUDGE_ON_FAILURE),
             on_error=dict(strict_choices=_choices.JUDGE_ON_ERROR),
             name=dict(when_absent="llm_judge"))
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
@api_option(_PAIRS, "pairs", callback=_system_pairs, metavar="A:B[,A:B]",
            help="With --pairwise: the system pairs to compare (system_a:system_b, comma-separated).",
            when_absent="every pair of systems, in their order")
def judge(data, aspect, model, template_path, cache, no_cache, texts_path, human, system, input_, max_inputs, out,
          fmt, pairwise, **api):
    """Rate a dataset's outputs with an LLM judge (prompt of seed paper 000 Table 4; G-Eval)."""
    from .. import textmetrics as tm

    if os.path.isfile(aspect):
        with open(aspect, encoding="utf8") as f:
            aspect = f.read().strip()
    elif " " not in aspect.strip() and (os.sep in aspect or aspect.lower().endswith((".txt", ".md"))):
        # a file name that is not there would otherwise become the criterion sent to the model
        raise click.BadParameter(f"{aspect!r} looks like a file name but there is no such file; give the "
                                 "criterion as text or the path of an existing file", param_hint="--aspect")
    api = given(api)
    if template_path is not None:
        with open(template_path, encoding="utf8") as f:
            api["template"] = f.read()
    backend = api.pop("backend", signature(_JUDGE)["backend"].default)
    for other, names in _BACKEND_KEYWORDS.items():
        wrong = [n for n in names if other != backend and n in api]
        if wrong:
            flags = ", ".join("--" + n.replace("_", "-") for n in wrong)
            raise click.BadParameter(f"{flags} appl{'ies' if len(wrong) == 1 else 'y'} to --backend {other}, "
                                     f"not {backend}: give --backend {other} or leave "
                                     f"{'it' if len(wrong) == 1 else 'them'} out", param_hint="--backend")
    pairs = {"pairs": api.pop("pairs")} if "pairs" in api else {}
    if pairs and not pairwise:
        raise click.BadParameter("--pairs chooses the system pairs of --pairwise: give --pairwise too",
                                 param_hint="--pairs")
    if pairwise:
        wrong = [n for n in _RATING_KEYWORDS if n in api]
        if wrong:
            flags = ", ".join("--" + n.replace("_", "-") for n in wrong)
            raise click.BadParameter(f"{flags} appl{'ies' if len(wrong) == 1 else 'y'} to ratings, not to "
                                     "--pairwise verdicts",
                                     param_hint="--pairwise")
        if "template" in api:
            api["pairwise_template"] = api.pop("template")
        if "pattern" in api:
            api["preference_pattern"] = api.pop("pattern")
    backend_kw = {k: api.pop(k) for k in _BACKEND_KEYWORDS[backend] if k in api}
    be = (tm.OpenAIBackend if backend == "openai" else tm.LocalBackend)(model, **backend_kw)
    if no_cache or cache is not None:
        api["cache_dir"] = False if no_cache else cache
    metric = tm.LLMJudge(aspect, backend=be, **api)
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
            return _judge_pairwise_output(tm.judge_pairs(ds, metric, progress=prog, **pairs), out, fmt)
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
