"""The registry of text metrics: name -> adapter class and default options.

Error messages, :func:`list_metrics` and the docs read this registry, so they
never drift from what is available.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import ParameterError
from ._base import TextMetric


@dataclass(frozen=True)
class _Entry:
    factory: type
    defaults: dict = field(default_factory=dict)
    description: str = ""
    extra: str = "text"


METRICS: dict[str, _Entry] = {}


def register_metric(name: str, factory, *, description: str, defaults=None,
                    extra: str = "text", replace: bool = False) -> None:
    """Add an adapter to the registry.

    Parameters
    ----------
    name : str
        The registry name (used by :func:`get_metric` and ``score(dataset, [name])``).
    factory : type
        A :class:`TextMetric` subclass (or a callable returning one) taking
        the options as keyword arguments.
    description : str
        One line for :func:`list_metrics` and error messages.
    defaults : dict, optional
        Options the registry name fixes (e.g. ``{"word_order": 2}`` for
        ``"chrf++"``); keyword arguments of :func:`get_metric` override them.
    extra : str
        The pip extra that installs the adapter's library.
    replace : bool
        Allow replacing an existing name.
    """
    if not isinstance(name, str) or not name:
        raise ParameterError(f"name={name!r} must be a non-empty str")
    if name in METRICS and not replace:
        raise ParameterError(f"text metric {name!r} is already registered; pass replace=True")
    if not callable(factory):
        raise ParameterError(f"factory={factory!r} must be a TextMetric subclass or a callable")
    METRICS[name] = _Entry(factory, dict(defaults or {}), description, extra)


def list_metrics() -> pd.DataFrame:
    """The registry as a table: ``name``, ``adapter``, ``options``, ``extra``, ``description``.

    Examples
    --------
    >>> from metaeval.textmetrics import list_metrics
    >>> list_metrics()["name"].tolist()[:4]
    ['bleu', 'chrf', 'chrf++', 'ter']
    """
    rows = [
        {
            "name": name,
            "adapter": getattr(e.factory, "__name__", repr(e.factory)),
            "options": ", ".join(f"{k}={v!r}" for k, v in e.defaults.items()),
            "extra": e.extra,
            "description": e.description,
        }
        for name, e in METRICS.items()
    ]
    return pd.DataFrame(rows, columns=["name", "adapter", "options", "extra", "description"])


def get_metric(metric, /, **options: Any) -> TextMetric:
    """An adapter from a registry name (with options), or ``metric`` itself.

    Parameters
    ----------
    metric : str or TextMetric
        A name from :func:`list_metrics`, or an adapter (returned as is;
        options are then not allowed).
    **options
        Keyword options of the adapter (see its class), overriding the
        registry defaults; e.g. ``get_metric("rouge", use_stemmer=False)``
        or ``get_metric("bertscore", model="/models/roberta-large",
        num_layers=17)``.

    Raises
    ------
    ParameterError
        For an unknown name (the message lists the registry) or options the
        adapter does not take.
    """
    if isinstance(metric, TextMetric):
        if options:
            raise ParameterError(
                f"options {sorted(options)} given with an adapter instance; set them when "
                "building the adapter"
            )
        return metric
    if not isinstance(metric, str):
        raise ParameterError(
            f"metric={metric!r} must be a registry name (str) or a TextMetric adapter"
        )
    entry = METRICS.get(metric)
    if entry is None:
        raise ParameterError(
            f"unknown text metric {metric!r}; the registry has {', '.join(METRICS)} "
            "(see metaeval.textmetrics.list_metrics())"
        )
    kwargs = {**entry.defaults, **options}
    sig = inspect.signature(entry.factory)
    try:
        sig.bind(**kwargs)
    except TypeError as exc:
        # names only: a default such as a prompt template spans many lines
        shown = ", ".join(p.name + (" (required)" if p.default is p.empty else "")
                          for p in sig.parameters.values())
        raise ParameterError(f"text metric {metric!r}: {exc}; its options are ({shown})") from None
    return entry.factory(**kwargs)


def _register_builtins() -> None:
    from ._bertscore import BERTScore
    from ._jiwer import ASR_METRICS
    from ._lm import BARTScore, GPTScore
    from ._meteor import METEOR
    from ._rouge import ROUGE
    from ._sacrebleu import BLEU, CHRF, TER

    register_metric("bleu", BLEU, description="sentence BLEU (sacrebleu: tok 13a, exp "
                    "smoothing, effective order), 0-100")
    register_metric("chrf", CHRF, description="chrF (sacrebleu: 6 character n-gram orders, "
                    "beta 2), 0-100")
    register_metric("chrf++", CHRF, defaults={"word_order": 2},
                    description="chrF++ (sacrebleu chrF with word bigrams), 0-100")
    register_metric("ter", TER, description="TER (sacrebleu, tercom; lower is better), "
                    "edits per 100 reference words")
    register_metric("rouge", ROUGE, defaults={"types": ("rouge1", "rouge2", "rougeL"),
                                              "use_stemmer": True},
                    description="ROUGE-1, -2, -L F-measures in one pass (rouge-score, "
                    "Porter stemming), 0-1")
    for t in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        register_metric(t, ROUGE, defaults={"types": (t,), "use_stemmer": True},
                        description=f"{t} F-measure (rouge-score, Porter stemming), 0-1")
    register_metric("meteor", METEOR, description="METEOR (nltk; WordNet 3.0 synonyms), 0-1")
    register_metric("bertscore", BERTScore, extra="neural",
                    description="BERTScore F (bert-score) with an encoder in a local folder "
                    "(model=...)")
    register_metric("gptscore", GPTScore, extra="neural",
                    description="GPTScore-style mean log-likelihood of the hypothesis given the "
                    "source under a local causal LM (model=...)")
    register_metric("bartscore", BARTScore, extra="neural",
                    description="BARTScore-style mean log-likelihood under a local seq2seq LM "
                    "(model=...; direction src->hyp by default)")
    asr = {"wer": "word error rate", "mer": "match error rate", "wil": "word information lost",
           "wip": "word information preserved (higher is better)",
           "cer": "character error rate"}
    for key, what in asr.items():
        register_metric(key, ASR_METRICS[key], defaults={"normalize": "lower-punct"},
                        description=f"{what} of one utterance (jiwer; lowercase, punctuation "
                        "removed)" + ("" if key == "wip" else "; lower is better"))

    from ._bleurt import BLEURT
    from ._comet_model import COMET

    register_metric("comet", COMET, extra="comet",
                    description="COMET segment score (unbabel-comet, in process or through "
                    "comet-score; model=... a local model or a name such as "
                    "Unbabel/wmt22-comet-da); reads the source and each reference")
    register_metric("bleurt", BLEURT, extra="comet",
                    description="BLEURT (bleurt-pytorch; model=... a local folder or a name such "
                    "as lucadiliello/BLEURT-20)")

    from ._metricx import MetricX

    register_metric("metricx", MetricX, extra="neural",
                    description="MetricX-24/23 error score, 0-25, lower is better (a MetricX "
                    "checkpoint in transformers' MT5ForConditionalGeneration; model=..., "
                    "tokenizer=...)")

    from ._judge import LLMJudge  # an LLM judge: see docs/judge.md

    register_metric("llm_judge", LLMJudge, extra="core",
                    description="LLM judge: ratings on an integer scale from an OpenAI-compatible "
                    "endpoint or a local causal LM (aspect=..., backend=..., model=...; seed "
                    "paper 000 Table 4 prompt)")


_register_builtins()
