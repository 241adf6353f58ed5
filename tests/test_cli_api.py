"""Issue 25.3: the command line is generated from the API.

* Every option that sets a keyword of an analysis (metaeval.cli._api.ApiOption) shows the
  default of the analysis' signature (read here with :func:`inspect.signature` of the imported
  function, independently of the ``ast`` reading that builds the option), has no default of its
  own, and, when absent, leaves the keyword unset: the call receives the function's default.
* Hand-written options that feed a keyword (DECLARED) have the signature's default too.
* A planted drift (an option whose default differs from the function's) fails the check.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from metaeval.cli import COMMANDS, main
from metaeval.cli._api import ApiOption, api_option, command, given, shown, signature

ROOT = Path(__file__).resolve().parents[1]


def _function(target):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(f"metaeval.{module}"), name)


def _signature_default(target, keyword):
    return inspect.signature(_function(target)).parameters[keyword].default


#: Hand-written options that set an analysis keyword under another option name or through a
#: conversion: (command, click parameter name) -> (target, keyword).  Their click default must be
#: the signature's (None: not given, the analysis decides).
DECLARED = {
    ("wmt", "refs"): ("wmt:run_wmt", "refs"),
    ("reliability", "agreement_methods"): ("reliability:agreement", None),  # None: the library's default
    ("validity", "criterion"): (None, "human"),  # a CLI choice: raw human means (the API takes columns)
    ("report", "levels"): ("report._build:ReportConfig", "levels"),
    ("measures", "levels"): ("simulation:simulate", "level"),  # the 12 measures of seed paper 000
    ("measures", "methods"): ("simulation:simulate", "method"),
    ("simulate", "levels"): ("simulation:simulate", "level"),
    ("simulate", "methods"): ("simulation:simulate", "method"),
}


def _as_api(value):
    """A hand option's literal default as the analysis would receive it: comma-separated -> tuple,
    command-line level names -> the API's."""
    from metaeval.cli._data import _CLI_LEVELS

    if isinstance(value, str) and "," in value or isinstance(value, str) and value in ("hypothesis",):
        items = tuple(v for v in value.split(","))
        return tuple(_CLI_LEVELS.get(v, v) for v in items)
    return value


def _drift(command):
    """The problems of one command's options against the analyses' signatures."""
    out = []
    for p in command.params:
        if isinstance(p, ApiOption) and p.api_target:
            want = _signature_default(p.api_target, p.api_keyword)
            if p.api_default != want and not (isinstance(want, tuple) and list(want) == p.api_default):
                out.append(f"{p.opts[0]}: reads default {p.api_default!r}, {p.api_target} has {want!r}")
            if p.default is not None:
                out.append(f"{p.opts[0]}: has a default of its own ({p.default!r})")
            text = p.when_absent if want is None and p.when_absent else shown(want, p.api_kind, p.api_keyword)
            if not (p.help or "").endswith(f"[default: {text}]"):
                out.append(f"{p.opts[0]}: help does not end with [default: {text}]: {p.help!r}")
            if want is None and p.api_kind in (int, float) and "[default: none]" in (p.help or ""):
                out.append(f"{p.opts[0]}: a number option shows [default: none], a word it refuses")
    return out


def _all_commands():
    return sorted(COMMANDS)


@pytest.mark.parametrize("name", _all_commands())
def test_every_option_of_a_keyword_shows_the_signature_default(name):
    assert _drift(main.commands[name]) == []


def test_the_generated_options_cover_every_command_that_runs_an_analysis():
    with_api = {n for n in COMMANDS if any(isinstance(p, ApiOption) and p.api_target
                                           for p in main.commands[n].params)}
    # datasets lists and fetches (no analysis keyword); reliability and validity have their
    # keyword options checked in DECLARED or generated below
    assert {"correlate", "compare", "measures", "preferences", "wmt", "span-agreement", "spa", "judge", "score",
            "perturb", "local", "diagnose", "report", "simulate", "bench", "read-mtme"} <= with_api


def test_planted_drift_fails():
    """An option whose shown default differs from the function's is reported."""
    @command()
    @api_option("correlation:correlate", "n_resamples")
    def cmd(**kw):
        pass

    assert _drift(cmd) == []
    opt = next(p for p in cmd.params if p.name == "n_resamples")
    opt.api_default = 999  # as if the option read another default
    assert any("reads default 999" in d for d in _drift(cmd))
    opt.api_default, opt.default = 1000, 1000  # a literal default of its own
    assert any("default of its own" in d for d in _drift(cmd))
    opt.default, opt.help = None, "Resamples [default: 999]"
    assert any("help does not end" in d for d in _drift(cmd))


def test_ast_reading_equals_inspect_signature_for_every_target():
    targets = {p.api_target for n in COMMANDS for p in main.commands[n].params
               if isinstance(p, ApiOption) and p.api_target}
    assert len(targets) >= 8
    for t in sorted(targets):
        params = inspect.signature(_function(t)).parameters
        for k, p in signature(t).items():
            want = params[k].default
            assert p.default == want or (isinstance(want, tuple) and p.default == want), (t, k)


@pytest.mark.parametrize("name,key", sorted(DECLARED))
def test_declared_hand_options_have_the_signature_default(name, key):
    target, keyword = DECLARED[(name, key)]
    param = next(p for p in main.commands[name].params if p.name == key)
    if target is None or keyword is None:
        assert param.default in (None, keyword)
        return
    want = _signature_default(target, keyword)
    got = param.default if isinstance(want, str) else _as_api(param.default)
    assert got == want or (isinstance(want, (tuple, list)) and tuple(want) == got), (name, key, got, want)


class _Stop(Exception):
    pass


#: command args (on the bundled summeval) and the analysis each calls
CALLS = [
    (["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1"], "correlation:correlate"),
    (["compare", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2"], "compare:compare_all"),
    (["measures", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2"],
     "measures:discriminative_power"),
    (["spa", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU"], "wmt:soft_pairwise_accuracy"),
    (["spa", "summeval", "--human", "coherence", "--compare", "ROUGE.1,BLEU"], "wmt:compare_spa"),
    (["preferences", "summeval", "--human", "coherence", "--judges", "ROUGE.1"],
     "preferences:preference_agreement"),
    (["score", "summeval", "--metrics", "bleu"], "textmetrics:score"),
    (["perturb", "summeval", "--perturbation", "drop_words", "--metrics", "bleu"], "perturb:score_perturbed"),
    (["local", "summeval", "--context", "system", "--human", "coherence", "--metrics", "ROUGE.1,BLEU"],
     "local:local_pairs"),
    (["local", "summeval", "--context", "system", "--human", "coherence", "--metrics", "ROUGE.1,BLEU"],
     "local:local_accuracy"),
    (["local", "summeval", "--context", "system", "--perturbation", "drop_words", "--metrics", "bleu,chrf"],
     "perturb:score_perturbed"),
    (["diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2"], "diagnostics:ks_score"),
    (["diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2"],
     "diagnostics:meta_correlation"),
    (["simulate", "--format", "csv"], "simulation:simulate"),
    (["bench", "--metric", "ROUGE.L"], "bench:bench"),
]


@pytest.mark.parametrize("args,target", CALLS, ids=[f"{a[0]}-{t}" for a, t in CALLS])
def test_absent_options_leave_the_keyword_unset(monkeypatch, args, target):
    module, _, name = target.partition(":")
    mod = importlib.import_module(f"metaeval.{module}")
    seen = {}

    def record(*a, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(mod, name, record)
    res = CliRunner().invoke(main, args)
    assert isinstance(res.exception, _Stop), res.output
    cmd = main.commands[args[0]]
    generated = {p.api_keyword for p in cmd.params if isinstance(p, ApiOption) and p.api_target == target}
    assert generated, target
    passed = generated & set(seen)
    # the only keywords passed without being given are the ones the command computes itself
    assert passed <= {"rng"} and seen.get("rng") is None, (passed, {k: seen[k] for k in passed})


def test_a_given_option_reaches_the_keyword(monkeypatch):
    import metaeval.correlation as mod

    seen = {}

    def record(*a, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(mod, "correlate", record)
    CliRunner().invoke(main, ["correlate", "summeval", "--human", "coherence", "--n-resamples", "7",
                              "--seed", "3", "--jobs", "2", "--method", "pearson,spearman", "--level",
                              "system,group-by-system"])
    assert seen["n_resamples"] == 7 and seen["rng"] == 3 and seen["n_jobs"] == 2
    assert seen["method"] == ["pearson", "spearman"] and seen["level"] == ["system", "item"]


def test_bench_options_reach_the_keywords(monkeypatch):
    """bench's --level takes the command line's level names (levels=), --weights is the old
    spelling of --weighting, --no-cache is cache_dir=False."""
    import metaeval.bench as mod

    seen = {}

    def record(*a, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(mod, "bench", record)
    res = CliRunner().invoke(main, ["bench", "--metric", "ROUGE.L", "--level", "system,group-by-system",
                                    "--weights", "equal", "--needs", "hypothesis,source", "--no-cache",
                                    "--lower-is-better", "none", "--n-jobs", "2"])
    assert isinstance(res.exception, _Stop), res.output
    assert seen["levels"] == ["system", "item"] and seen["weighting"] == "equal" and seen["cache_dir"] is False
    assert seen["needs"] == ["hypothesis", "source"] and seen["lower_is_better"] == () and seen["n_jobs"] == 2
    seen.clear()
    res = CliRunner().invoke(main, ["bench", "--metric", "ROUGE.L", "--level", "item"])
    assert isinstance(res.exception, _Stop) and seen["levels"] == ["item"]  # the name outputs print
    res = CliRunner().invoke(main, ["bench", "--metric", "ROUGE.L", "--level", "seg"])
    assert res.exit_code == 2 and "ambiguous" in res.output


def test_read_mtme_passes_only_the_options_given(monkeypatch, tmp_path):
    """read-mtme's generated options: absent ones leave read_mtme's defaults; --score-level sets
    level= (--level is a grouping level in every other command)."""
    import metaeval.data as mod

    calls = []

    def record(*a, **kw):
        calls.append(kw)
        raise _Stop

    monkeypatch.setattr(mod, "read_mtme", record)
    args = ["read-mtme", str(tmp_path), "wmt99", "en-de", "--out", str(tmp_path / "o.csv")]
    res = CliRunner().invoke(main, args)
    assert isinstance(res.exception, _Stop), res.output
    assert calls[-1] == {"texts": False}
    res = CliRunner().invoke(main, [*args, "--score-level", "sys", "--refs", "refA,refB", "--metrics", "none",
                                    "--include-human", "--system-human", "wmt-z", "--names", "display"])
    assert isinstance(res.exception, _Stop), res.output
    assert calls[-1] == {"texts": False, "level": "sys", "refs": ["refA", "refB"], "metrics": [],
                         "include_human": True, "system_human": "wmt-z", "names": "display"}


def test_report_options_reach_report_config_keywords(monkeypatch):
    """report's options are ReportConfig's keywords: absent ones are not passed (its defaults
    apply); the earlier spellings (--seed, --splits, --ks-low, --ks-high) set the renamed keywords."""
    import metaeval.report as mod

    mod.ReportConfig  # noqa: B018  (resolves the lazy name, so that it can be patched)
    seen = []

    def record(*a, **kw):
        seen.append(kw)
        raise _Stop

    monkeypatch.setattr(mod, "ReportConfig", record)
    res = CliRunner().invoke(main, ["report", "summeval"])
    assert isinstance(res.exception, _Stop), res.output
    assert set(seen[-1]) == {"human", "metrics", "levels", "system_scores"}
    res = CliRunner().invoke(main, ["report", "summeval", "--seed", "3", "--splits", "5", "--ks-low", "2",
                                    "--high", "4", "--no-text", "--pairwise-metrics", "all", "--cache", "d",
                                    "--quick", "--n-jobs", "2", "--text-metrics", "bleu"])
    assert isinstance(res.exception, _Stop), res.output
    kw = seen[-1]
    assert (kw["rng"], kw["n_splits"], kw["low"], kw["high"], kw["text"]) == (3, 5, 2.0, 4.0, False)
    assert (kw["pairwise"], kw["cache_dir"], kw["quick"], kw["n_jobs"], kw["text_metrics"]) == \
        ("all", "d", True, 2, ("bleu",))


def test_report_config_takes_its_earlier_keywords():
    from metaeval.report import ReportConfig

    cfg = ReportConfig(seed=3, splits=4, ks_low=2, ks_high=4)
    assert (cfg.rng, cfg.n_splits, cfg.low, cfg.high) == (3, 4, 2, 4) == (cfg.seed, cfg.splits, cfg.ks_low, cfg.ks_high)
    assert cfg.value("splits") == cfg.value("n_splits") == 4 and ReportConfig(quick=True).value("splits") == 100
    d = cfg.to_dict()
    assert d["n_splits"] == d["splits"] == 4 and d["rng"] == d["seed"] == 3
    with pytest.raises(TypeError, match="earlier name of rng="):
        ReportConfig(seed=1, rng=2)


def test_old_spellings_are_hidden_aliases():
    cmd = main.commands["correlate"]
    text = CliRunner().invoke(main, ["correlate", "--help"]).output
    for new, old in (("--rng", "--seed"), ("--n-jobs", "--jobs"), ("--system", "--system-col"),
                     ("--input", "--input-col"), ("--raters", "--rater-cols"), ("--bounds", "--scale-bounds"),
                     ("--run", "--run-col")):
        assert re.search(rf"{new}\b", text) and old not in text, (new, old)
        assert any(old in p.opts and new in p.opts for p in cmd.params), (new, old)


def test_perturb_passes_detection_keywords_only_when_given(monkeypatch):
    """--min-human and --ci set perturbation_detection's keywords (through PerturbedScores.detection)."""
    import metaeval.perturb as mod

    seen = []

    class Scored:
        def detection(self, **kw):
            seen.append(kw)
            raise _Stop

    monkeypatch.setattr(mod, "score_perturbed", lambda *a, **kw: Scored())
    args = ["perturb", "summeval", "--perturbation", "drop_words", "--metrics", "bleu"]
    res = CliRunner().invoke(main, args)
    assert isinstance(res.exception, _Stop), res.output
    res = CliRunner().invoke(main, args + ["--human", "coherence", "--min-human", "3", "--ci", "clopper-pearson"])
    assert isinstance(res.exception, _Stop), res.output
    assert seen == [{}, {"human": "coherence", "min_human": 3.0, "ci": "clopper-pearson"}]
    res = CliRunner().invoke(main, args + ["--min-human", "3"])
    assert res.exit_code == 2 and "--min-human needs --human" in res.output


class _Recorder:
    """Stands for a class of the judge: records its arguments, then stops or goes on."""

    def __init__(self, calls, stop=False):
        self.calls, self.stop = calls, stop

    def __call__(self, *a, **kw):
        self.calls.append((a, kw))
        if self.stop:
            raise _Stop
        return object()


def test_judge_passes_only_the_given_keywords(monkeypatch):
    import metaeval.textmetrics as tm

    backends, judges = [], []
    monkeypatch.setattr(tm, "OpenAIBackend", _Recorder(backends))
    monkeypatch.setattr(tm, "LocalBackend", _Recorder(backends))
    monkeypatch.setattr(tm, "LLMJudge", _Recorder(judges, stop=True))
    base = ["judge", "summeval", "--aspect", "coherence", "--model", "m"]
    res = CliRunner().invoke(main, base)
    assert isinstance(res.exception, _Stop), res.output
    # --backend left out: the LLMJudge default (openai), built with the model only
    assert backends == [(("m",), {})] and len(judges) == 1
    (aspect,), kw = judges[0]
    assert aspect == "coherence" and set(kw) == {"backend"}
    backends.clear(), judges.clear()
    res = CliRunner().invoke(main, base + ["--timeout", "5", "--max-response-bytes", "100", "--samples", "3",
                                           "--seed", "2", "--name", "j", "--no-cache"])
    assert isinstance(res.exception, _Stop), res.output
    assert backends == [(("m",), {"timeout": 5.0, "max_response_bytes": 100})]
    kw = judges[0][1]
    assert {k: v for k, v in kw.items() if k != "backend"} == {"samples": 3, "seed": 2, "name": "j",
                                                               "cache_dir": False}
    backends.clear(), judges.clear()
    res = CliRunner().invoke(main, base + ["--backend", "local", "--decoding", "rating"])
    assert isinstance(res.exception, _Stop), res.output
    assert backends == [(("m",), {"decoding": "rating"})]
    # an option of the other backend is refused, also when --backend is left out (openai)
    res = CliRunner().invoke(main, base + ["--decoding", "rating"])
    assert res.exit_code == 2 and "--decoding applies to --backend local, not openai" in res.output
    res = CliRunner().invoke(main, base + ["--backend", "local", "--timeout", "3"])
    assert res.exit_code == 2 and "--timeout applies to --backend openai, not local" in res.output
    # --pairwise: the pattern is the verdict parser, the rating options are refused
    judges.clear()
    res = CliRunner().invoke(main, base + ["--pairwise", "--pattern", "V: (A|B)"])
    assert isinstance(res.exception, _Stop), res.output
    assert judges[0][1].get("preference_pattern") == "V: (A|B)" and "pattern" not in judges[0][1]
    res = CliRunner().invoke(main, base + ["--pairwise", "--samples", "2"])
    assert res.exit_code == 2 and "--samples applies to ratings, not to --pairwise" in res.output


def test_a_class_target_reads_init_and_the_class_docstring():
    """``module:Class`` targets: the keywords of ``__init__``, described in the class docstring
    (numpydoc puts a class' Parameters there)."""
    from metaeval.textmetrics import LLMJudge, OpenAIBackend

    params = signature("textmetrics._judge:LLMJudge")
    want = {k: p.default for k, p in inspect.signature(LLMJudge).parameters.items()
            if p.default is not inspect.Parameter.empty}
    assert {k: p.default for k, p in params.items()} == want
    assert "self" not in params and "aspect" not in params  # positional without a default
    doc = " ".join(inspect.getdoc(LLMJudge).replace("``", "").split())
    for k in ("scale", "samples", "temperature", "context", "on_error", "max_tokens"):
        # the description's first words, as the class docstring writes them under its name
        head = " ".join(params[k].doc.split()[:3]).rstrip(",.;:")
        assert re.search(rf"\b{k} : [^:]+? {re.escape(head)}", doc), (k, params[k].doc)
    # a default written as arithmetic on numbers (16 * 2**20) reads as its value
    backend = signature("textmetrics._judge_backends:OpenAIBackend")
    assert backend["max_response_bytes"].default == \
        inspect.signature(OpenAIBackend).parameters["max_response_bytes"].default == 16777216


def test_a_default_the_ast_cannot_compute_is_named():
    import ast

    from metaeval.cli._api import _resolve

    with pytest.raises(LookupError, match=r"cannot read the default \"'ab' \* 2\""):
        _resolve("correlation", ast.parse("'ab' * 2", mode="eval").body)


def test_as_in_follows_the_named_function():
    """A keyword described "As in metaeval.textmetrics.score." gets score's description."""
    assert "As in" in inspect.getdoc(_function("perturb:score_perturbed"))
    got = signature("perturb:score_perturbed")["multi_ref"].doc
    assert got == signature("textmetrics:score")["multi_ref"].doc
    assert got.startswith("How the scores against several references become one")


def test_given_drops_absent_options():
    assert given({"a": None, "b": 0, "c": False, "d": "x"}) == {"b": 0, "c": False, "d": "x"}


def test_spa_choices_are_the_api_s():
    from metaeval import wmt
    from metaeval.cli import mt

    assert mt.SPA_CI == wmt.SPA_CI
    doc = inspect.getdoc(wmt.soft_pairwise_accuracy)
    assert '{"float64", "float32"}' in doc and mt.SPA_PRECISIONS == ("float64", "float32")


def test_missing_extra_message_names_only_extras_that_exist():
    from metaeval.cli._messages import _EXTRA_OF_MODULE, _PLAIN_PACKAGES

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(_EXTRA_OF_MODULE.values()) <= set(extras)
    for module, package in _PLAIN_PACKAGES.items():
        assert module not in _EXTRA_OF_MODULE


def test_matplotlib_missing_names_the_package_not_an_extra():
    from metaeval.cli._messages import _unexpected_message

    class Ctx:
        meta = {}
        invoked_subcommand = "measures"

    exc = ImportError("No module named 'matplotlib'", name="matplotlib")
    msg = _unexpected_message(exc, Ctx())
    assert "pip install matplotlib" in msg and "metaeval[" not in msg


def _readme_synopsis():
    """README's "The command" block: command -> the options its lines name."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## The command", 1)[1].split("```", 2)[1]
    out, current = {}, None
    for line in block.splitlines():
        m = re.match(r"metaeval ([\w-]+)", line)
        if m:
            current = m.group(1)
        if current:
            out.setdefault(current, set()).update(re.findall(r"(--[a-z][a-z0-9-]*)", line))
    return out


def test_readme_synopsis_agrees_with_help():
    """Every option README's synopsis shows is a visible option of that command (not an old
    spelling kept as a hidden alias), and every command is listed."""
    synopsis = _readme_synopsis()
    assert set(COMMANDS) - {"bench"} <= set(synopsis)  # bench: docs/bench.md
    for name, flags in synopsis.items():
        cmd = main.commands[name]
        visible = {o for p in cmd.params for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])
                   if o not in getattr(p, "aliases", ())}
        assert flags <= visible, (name, sorted(flags - visible))
