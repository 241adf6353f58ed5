"""Text metrics: score a dataset's outputs with established libraries.

Adapters are thin wrappers: each calls one library (sacreBLEU, rouge-score,
NLTK, bert-score, transformers) on batches of (hypothesis, reference or
source) pairs.  One engine pairs the texts of a :class:`~metaeval.Dataset`,
aggregates several references (``multi_ref``), caches every score on disk
keyed by the metric's signature and a hash of the texts, cuts the work into
chunks for the execution layer, and reports progress.  The scores come back
as ``(N, M)`` systems x inputs matrices (:class:`TextScores`) that
:meth:`TextScores.attach` adds to the dataset as metric columns.

Importing this package imports no metric library: sacreBLEU, rouge-score,
NLTK and jiwer (the ``text`` extra) are imported when an adapter is built, torch,
transformers and bert-score (the ``neural`` extra) when a model-based
adapter first scores.

Public names
------------
score, add_scores, score_texts, corpus_scores
    Score a dataset (or plain lists of texts).
TextScores
    The result: score matrices, signatures, per-reference scores, counts.
get_metric, list_metrics, register_metric, METRICS, MULTI_REF
    The adapter registry.
TextMetric
    The adapter base class (see docs/textmetrics.md, "Adding an adapter").
BLEU, CHRF, TER, ROUGE, METEOR, BERTScore, GPTScore, BARTScore, COMET, BLEURT, MetricX
    The adapters (COMET runs in process or through the user's ``comet-score``).
WER, MER, WIL, WIP, CER, normalize_transcript, NORMALIZATIONS, EmptyReferenceWarning
    Speech-recognition error rates over jiwer and their text normalisation.
read_transcripts, ASR_DEFAULT_METRICS
    Read ASR transcripts and score them into a metric-only dataset with contexts
    (also importable as ``metaeval.data.read_transcripts``).
ScoreCache
    The on-disk cache.
LLMJudge, judge, JudgeScores, JudgeRun, OpenAIBackend, LocalBackend, JudgeBackend, ResponseCache
    LLM judges as metrics (docs/judge.md): prompt, samples, parsing, aggregation,
    backends and the raw-response cache.
judge_pairs, parse_preference, PAIRWISE_TEMPLATE, DEFAULT_PREFERENCE_PATTERN
    Pairwise LLM judging (A, B or tie, in both orders) as a long table.
parse_rating, parse_scale, sample_seed, default_cache_dir, TABLE4_TEMPLATE, DEFAULT_PATTERN
    The judge's building blocks.
read_comet
    Segment scores from Unbabel COMET's ``comet-score`` output (stdout or JSON).
install_wordnet
    Put Debian's WordNet where NLTK (METEOR) reads it.
"""

from ._asr import ASR_DEFAULT_METRICS, read_transcripts
from ._base import MULTI_REF, TextMetric
from ._bertscore import BERTScore
from ._bleurt import BLEURT
from ._cache import ScoreCache
from ._comet import read_comet
from ._comet_model import COMET
from ._jiwer import (
    CER,
    MER,
    NORMALIZATIONS,
    WER,
    WIL,
    WIP,
    EmptyReferenceWarning,
    normalize_transcript,
)
from ._judge import (
    DEFAULT_PATTERN,
    DEFAULT_PREFERENCE_PATTERN,
    PAIRWISE_TEMPLATE,
    TABLE4_TEMPLATE,
    JudgeRun,
    JudgeScores,
    LLMJudge,
    judge,
    judge_pairs,
    parse_preference,
    parse_rating,
    parse_scale,
    sample_seed,
)
from ._judge_backends import JudgeBackend, LocalBackend, OpenAIBackend
from ._judge_cache import ResponseCache, default_cache_dir
from ._lm import BARTScore, GPTScore
from ._meteor import METEOR
from ._metricx import MetricX
from ._registry import METRICS, get_metric, list_metrics, register_metric
from ._rouge import ROUGE
from ._sacrebleu import BLEU, CHRF, TER
from ._score import TextScores, add_scores, corpus_scores, score, score_texts
from ._wordnet import install_wordnet

__all__ = [
    "read_transcripts",
    "ASR_DEFAULT_METRICS",
    "score",
    "add_scores",
    "score_texts",
    "corpus_scores",
    "TextScores",
    "get_metric",
    "list_metrics",
    "register_metric",
    "METRICS",
    "MULTI_REF",
    "TextMetric",
    "BLEU",
    "CHRF",
    "TER",
    "ROUGE",
    "METEOR",
    "BERTScore",
    "GPTScore",
    "BARTScore",
    "COMET",
    "BLEURT",
    "MetricX",
    "WER",
    "MER",
    "WIL",
    "WIP",
    "CER",
    "normalize_transcript",
    "NORMALIZATIONS",
    "EmptyReferenceWarning",
    "ScoreCache",
    "install_wordnet",
    "read_comet",
    "LLMJudge",
    "judge",
    "judge_pairs",
    "parse_preference",
    "PAIRWISE_TEMPLATE",
    "DEFAULT_PREFERENCE_PATTERN",
    "JudgeScores",
    "JudgeRun",
    "OpenAIBackend",
    "LocalBackend",
    "JudgeBackend",
    "ResponseCache",
    "default_cache_dir",
    "parse_rating",
    "parse_scale",
    "sample_seed",
    "TABLE4_TEMPLATE",
    "DEFAULT_PATTERN",
]
