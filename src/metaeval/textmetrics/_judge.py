"""LLM judges as metrics: prompting, sampling, parsing, caching.

:class:`LLMJudge` asks a language model to rate each output on an integer
scale with a prompt template (by default the one of seed paper 000, Table 4),
draws several samples per output, parses the rating after ``"Rating:"``,
and aggregates the samples (mean, median, or the G-Eval probability-weighted
score of Liu et al. 2023).  :func:`judge` runs it over a
:class:`~metaeval.Dataset` and returns a :class:`JudgeScores`: the
aggregated ``(N, M)`` scores, every sample as a run ``(S, N, M)`` (so
:func:`metaeval.reliability.stability` applies directly), the raw answers,
and the counts of failed requests, unparseable and out-of-scale answers.

Every answer is stored raw in a :class:`ResponseCache` as soon as it
arrives, before it is parsed: an interrupted run resumes without repeating a
request and a re-run costs nothing.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
import string
import threading
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._signature import make_signature
from ..stats.exact import masked_mean
from ..data import Dataset
from ..errors import (
    DataError,
    JudgeRequestError,
    MissingLogprobsWarning,
    ParameterError,
    ParseFailureWarning,
)
from ._base import TextMetric, check_choice, check_positive_int, texts_fingerprint
from ._judge_backends import JudgeBackend, logger, make_backend
from ._judge_cache import ResponseCache, canonical_json, default_cache_dir, request_key

#: The prompt template of seed paper 000 (Appendix A.2, Table 4), verbatim.
TABLE4_TEMPLATE = """###Instruction###
Please act as an impartial and helpful evaluator for natural language generation (NLG), and the audience is an expert in the field.
Your task is to evaluate the quality of {task} strictly based on the given evaluation criterion.
Begin the evaluation by providing your analysis concisely and accurately, and then on the next line, start with "Rating:" followed by your rating on a Likert scale from {scale} (higher means better).
You MUST keep to the strict boundaries of the evaluation criterion and focus solely on the issues and errors involved; otherwise, you will be penalized.
Make sure you read and understand these instructions, as well as the following evaluation criterion and example content, carefully.

###Evaluation Criterion###
{aspect}

###Example###
{source_des}:
{source}

{target_des}:
{target}

###Your Evaluation###
"""

#: The fields a template may use.
TEMPLATE_FIELDS = ("task", "aspect", "scale", "source_des", "source", "target_des", "target")

#: The default rating parser: the number after the last "Rating:" (any case),
#: skipping spaces and markup such as ``**`` or ``[``.
DEFAULT_PATTERN = r"(?i)rating\s*:\W*?([+-]?\d+(?:\.\d+)?)"

AGGREGATES = {
    "mean": "mean of the samples' ratings (NaN samples left out)",
    "median": "median of the samples' ratings (NaN samples left out)",
    "geval": "G-Eval: per sample the probability-weighted rating sum_v v p(v) / sum_v p(v) "
             "from token log-probabilities, then the mean over samples (Liu et al. 2023)",
}

ON_FAILURE = {
    "nan": "an answer without a rating in the scale is NaN (counted and reported)",
    "random": "seed paper 000's policy (section 3.3): replace it by a rating drawn uniformly "
              "from the scale with a seeded generator (counted in n_filled)",
}

ON_ERROR = {
    "raise": "stop at the first request that fails for good (JudgeRequestError); what was "
             "received is cached",
    "nan": "record the failed request as NaN (status 'request_failed') and go on",
}

CONTEXTS = ("source", "references")

#: Per-sample statuses, in the order the counts are reported.
STATUSES = ("ok", "unparseable", "out_of_scale", "no_logprobs", "request_failed", "missing")

#: metaeval's pairwise prompt: the Table 4 prompt of seed paper 000 adapted to two outputs
#: (an A/B/tie verdict after "Preference:" instead of a rating after "Rating:").
PAIRWISE_TEMPLATE = """###Instruction###
Please act as an impartial and helpful evaluator for natural language generation (NLG), and the audience is an expert in the field.
Your task is to compare the quality of two versions of {task} strictly based on the given evaluation criterion.
Begin the evaluation by providing your analysis concisely and accurately, and then on the next line, start with "Preference:" followed by A if {target_des} A is better, B if {target_des} B is better, or tie if they are equally good.
You MUST keep to the strict boundaries of the evaluation criterion and focus solely on the issues and errors involved; otherwise, you will be penalized.
Do not let the order in which the two texts are presented or their lengths influence your judgment.
Make sure you read and understand these instructions, as well as the following evaluation criterion and example content, carefully.

###Evaluation Criterion###
{aspect}

###Example###
{source_des}:
{source}

{target_des} A:
{output_a}

{target_des} B:
{output_b}

###Your Evaluation###
"""

#: The fields a pairwise template may use.
PAIRWISE_FIELDS = ("task", "aspect", "source_des", "source", "target_des", "output_a", "output_b")

#: The default verdict parser: A, B or tie after the last "Preference:" (any case), skipping
#: spaces and markup such as ``**`` or ``[``, and an optional word "Output".
DEFAULT_PREFERENCE_PATTERN = r"(?i)preference\s*:\W*?(?:output\s+)?(tie|a|b)\b"

#: The pairwise judge's two presentation orders: ``"ab"`` shows system_a's output as A,
#: ``"ba"`` shows it as B.
ORDERS = ("ab", "ba")

#: The columns of :func:`judge_pairs`' table, in order.
PAIRWISE_COLUMNS = ("input", "system_a", "system_b", "judge", "order", "preference", "raw")


# ----------------------------------------------------------------------------- scale, parsing


def parse_scale(scale) -> tuple[int, int]:
    """``(low, high)`` of an integer rating scale.

    Parameters
    ----------
    scale : str or tuple of int
        ``"1-5"``, ``"1-10"``, ``"0-100"``, ``"1 to 7"``, ``"-2..2"``, or
        ``(low, high)``; both ends are included and ``low < high``.

    Examples
    --------
    >>> from metaeval.textmetrics import parse_scale
    >>> parse_scale("1-5"), parse_scale("0-100"), parse_scale((1, 10))
    ((1, 5), (0, 100), (1, 10))
    """
    if isinstance(scale, str):
        m = re.fullmatch(r"\s*([+-]?\d+)\s*(?:-|to|\.\.)\s*([+-]?\d+)\s*", scale)
        if m is None:
            raise ParameterError(
                f"scale={scale!r} is not an integer range; write it as 'LOW-HIGH' "
                "(e.g. '1-5', '1-10', '0-100') or give a (low, high) tuple"
            )
        lo, hi = int(m.group(1)), int(m.group(2))
    elif isinstance(scale, (tuple, list)) and len(scale) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in scale):
        lo, hi = int(scale[0]), int(scale[1])
    else:
        raise ParameterError(
            f"scale={scale!r} must be 'LOW-HIGH' (e.g. '1-5', '1-10', '0-100') or a "
            "(low, high) tuple of int"
        )
    if lo >= hi:
        raise ParameterError(f"scale={scale!r}: the low end must be below the high end")
    return lo, hi


def _compile_regex(pattern, default, name, group, what) -> re.Pattern:
    """``pattern`` (None: ``default``) compiled and checked to capture one group (or a group named
    ``group``) around ``what``; errors name the ``name`` argument."""
    if pattern is None:
        pattern = default
    if isinstance(pattern, str):
        try:
            pattern = re.compile(pattern)
        except re.error as exc:
            raise ParameterError(f"{name}={pattern!r} is not a valid regular expression: {exc}") \
                from None
    if not isinstance(pattern, re.Pattern):
        raise ParameterError(f"{name}={pattern!r} must be a regular expression (str or compiled)")
    if group not in pattern.groupindex and pattern.groups != 1:
        raise ParameterError(
            f"{name}={pattern.pattern!r} has {pattern.groups} groups; give exactly one "
            f"capturing group (or a group named {group!r}) around {what}"
        )
    return pattern


def _compile_pattern(pattern) -> re.Pattern:
    return _compile_regex(pattern, DEFAULT_PATTERN, "pattern", "rating", "the number")


class Rating(NamedTuple):
    """A parsed answer: the rating (NaN if none), the status, and where it was read."""

    value: float
    status: str  # "ok", "unparseable" or "out_of_scale"
    span: tuple[int, int] | None  # of the captured number in the answer
    text: str | None  # the captured number as written


def parse_rating(answer, scale="1-5", pattern=None) -> Rating:
    """Read the rating of one answer and check it against the scale.

    The rating is the number captured by the **last** match of ``pattern``
    in the answer (default :data:`DEFAULT_PATTERN`: the number after
    ``"Rating:"``, any case, skipping spaces and markup such as ``**4**`` or
    ``[4]``).  It must be an integer of the scale (``"4.0"`` reads as 4,
    ``"3.5"`` is out of scale) and a whole number: a capture that is part of
    a larger number or of a range (``.5``, ``1e3``, ``1,000``, ``4_0``,
    ``2-3``, ``2 or 3``) or a fraction of another scale (``4/10`` on 1-5) is
    unparseable; ``4/5`` on 1-5 reads as 4.

    Parameters
    ----------
    answer : str or None
        The model's answer.
    scale : str or tuple
        See :func:`parse_scale`.
    pattern : str or re.Pattern, optional
        A regular expression with one capturing group (or a group named
        ``rating``) around the number.

    Returns
    -------
    Rating
        ``value`` is NaN unless ``status == "ok"``; ``"unparseable"``: no
        match, or the match is not a number; ``"out_of_scale"``: a number
        that is not an integer of the scale.

    Examples
    --------
    >>> from metaeval.textmetrics import parse_rating
    >>> parse_rating("Coherent and concise.\\nRating: **4**").value
    4.0
    >>> parse_rating("Rating: 7", "1-5").status
    'out_of_scale'
    >>> parse_rating("I would give it four.").status
    'unparseable'
    """
    lo, hi = parse_scale(scale)
    rx = _compile_pattern(pattern)
    return _parse(answer, lo, hi, rx)


#: What may not touch a captured rating on its left: a digit, a letter, ``_`` or a decimal
#: point (``.5`` is not 5, ``x4`` is not 4).
_BEFORE_NUMBER = re.compile(r"[\w.]\Z")
#: What may not follow a captured rating: more of a number (``1e3``, ``1,000``, ``4_0``,
#: ``1.5.2``, ``4x``), or a range (``2-3``, ``2 to 3``, ``2 or 3``).
_AFTER_NUMBER = re.compile(
    r"\w|[.,_'\u2019]\d|\s*(?:[-\u2010-\u2015~]|to\b|or\b|and\b)\s*[+-]?\.?\d", re.IGNORECASE)
#: A fraction after the rating: ``4/5``, ``4 / 10``, ``4 out of 5``; it reads as a rating only
#: when the denominator is the scale's top.
_FRACTION = re.compile(
    r"[\s*\])}>`]*(?:/|out\s+of\b)\s*([+-]?\d+(?:\.\d+)?)(?![\w.,]\d|\w)", re.IGNORECASE)
_SLASH = re.compile(r"[\s*\])}>`]*(?:/|out\s+of\b)", re.IGNORECASE)


def _whole_number(answer: str, span: tuple[int, int], hi: int) -> bool:
    """Whether the number captured at ``span`` stands alone in ``answer``: nothing of a
    number on either side, no range after it, and a fraction only of the scale's top."""
    start, end = span
    if _BEFORE_NUMBER.search(answer, 0, start):
        return False
    if _AFTER_NUMBER.match(answer, end):
        return False
    frac = _FRACTION.match(answer, end)
    if frac is not None:
        return float(frac.group(1)) == hi
    return _SLASH.match(answer, end) is None


def _parse(answer, lo: int, hi: int, rx: re.Pattern) -> Rating:
    if not isinstance(answer, str) or not answer:
        return Rating(math.nan, "unparseable", None, None)
    last = None
    for last in rx.finditer(answer):
        pass
    if last is None:
        return Rating(math.nan, "unparseable", None, None)
    group = "rating" if "rating" in rx.groupindex else 1
    raw = last.group(group)
    if raw is None:
        return Rating(math.nan, "unparseable", None, None)
    span = last.span(group)
    try:
        value = float(raw.strip())
    except ValueError:
        return Rating(math.nan, "unparseable", span, raw)
    if not math.isfinite(value) or not _whole_number(answer, span, hi):
        return Rating(math.nan, "unparseable", span, raw)
    if value != round(value) or not lo <= value <= hi:
        return Rating(math.nan, "out_of_scale", span, raw)
    return Rating(float(round(value)), "ok", span, raw)


def _compile_preference_pattern(pattern) -> re.Pattern:
    return _compile_regex(pattern, DEFAULT_PREFERENCE_PATTERN, "preference_pattern", "verdict",
                          "A, B or tie")


def parse_preference(answer, pattern=None) -> str | None:
    """Read the verdict of a pairwise answer: ``"A"``, ``"B"``, ``"tie"`` or None.

    The verdict is the text captured by the **last** match of ``pattern``
    (default :data:`DEFAULT_PREFERENCE_PATTERN`: ``A``, ``B`` or ``tie``
    after ``"Preference:"``, any case, markup skipped); anything else
    captured, a verdict followed by another (``A or B``, ``A/B``), or no
    match, is None (unparseable).

    Examples
    --------
    >>> from metaeval.textmetrics import parse_preference
    >>> parse_preference("B repeats itself.\\nPreference: **A**")
    'A'
    >>> parse_preference("Preference: Tie"), parse_preference("Both are good.")
    ('tie', None)
    """
    return _parse_preference(answer, _compile_preference_pattern(pattern))


def _parse_preference(answer, rx: re.Pattern) -> str | None:
    if not isinstance(answer, str) or not answer:
        return None
    last = None
    for last in rx.finditer(answer):
        pass
    if last is None:
        return None
    group = "verdict" if "verdict" in rx.groupindex else 1
    raw = last.group(group)
    word = (raw or "").strip().lower()
    if raw is not None and _SECOND_VERDICT.match(answer, last.end(group)):
        return None  # "A or B", "A/B", "tie or A": no verdict
    return {"a": "A", "b": "B", "tie": "tie"}.get(word)


#: A second verdict right after the first (``A or B``, ``A/B``, ``A-B``, ``A vs B``,
#: ``A, B``, ``tie or A``): the answer is ambiguous, hence unparseable.
_SECOND_VERDICT = re.compile(
    r"[\s*\])}>`]*(?:or|and|vs\.?|versus|nor|/|\\|&|,|;|\+|[-\u2010-\u2015~]|\|)"
    r"[\s*\[({<`]*(?:output\s+)?(?:a|b|tie)\b", re.IGNORECASE)


#: The preference for system_a of a verdict, per presentation order.
_PREFERENCE = {("ab", "A"): 1.0, ("ab", "B"): 0.0, ("ba", "A"): 0.0, ("ba", "B"): 1.0,
               ("ab", "tie"): 0.5, ("ba", "tie"): 0.5}


def _geval(body: dict, answer: str, rating: Rating, lo: int, hi: int) -> tuple[float, float]:
    """``(probability-weighted rating, probability mass on the scale)``; NaN if unavailable.

    From ``scale_logprobs`` (local ``"rating"`` decoding: exact), else from
    the token log-probabilities of the answer (``logprobs.content``): the
    rating must be one token; its alternatives (``top_logprobs`` plus the
    token itself) whose text, stripped of whitespace, is an integer of the
    scale give ``p(v)`` (alternatives with the same value add up).
    """
    scale_lp = body.get("scale_logprobs")
    if isinstance(scale_lp, Mapping) and scale_lp:
        vals = np.array([int(k) for k in scale_lp], dtype=float)
        lps = np.array([float(v) for v in scale_lp.values()])
        keep = (vals >= lo) & (vals <= hi)
        vals, lps = vals[keep], lps[keep]
        if not vals.size or not np.isfinite(lps).any():
            return math.nan, 0.0
        top = np.max(lps)
        w = np.exp(lps - top)
        return float(np.sum(vals * w) / np.sum(w)), float(np.exp(top) * np.sum(w))
    try:
        tokens = body["choices"][0]["logprobs"]["content"]
    except (KeyError, IndexError, TypeError):
        return math.nan, math.nan
    if not tokens or rating.span is None:
        return math.nan, math.nan
    texts = [t.get("token", "") for t in tokens]
    if "".join(texts) != answer:
        return math.nan, math.nan
    start = 0
    index = None
    for i, t in enumerate(texts):
        if start <= rating.span[0] < start + len(t):
            index = i
            break
        start += len(t)
    if index is None or texts[index].strip() != rating.text:
        return math.nan, math.nan  # the rating is not exactly one token
    alts = {texts[index]: tokens[index].get("logprob")}
    for alt in tokens[index].get("top_logprobs") or ():
        alts.setdefault(alt.get("token", ""), alt.get("logprob"))
    probs: dict[int, float] = {}
    for tok, lp in alts.items():
        s = str(tok).strip()
        if lp is None or not re.fullmatch(r"[+-]?\d+", s):
            continue
        v = int(s)
        if lo <= v <= hi:
            probs[v] = probs.get(v, 0.0) + math.exp(float(lp))
    mass = sum(probs.values())
    if mass <= 0:
        return math.nan, 0.0
    return sum(v * p for v, p in probs.items()) / mass, mass


def sample_seed(seed: int, messages, sample: int) -> int:
    """The seed of one request: 31 bits of a BLAKE2b hash of the judge's seed,
    the sample index and the messages.

    ``int.from_bytes(blake2b(f"{seed}:{sample}:".encode() + canonical_json(messages).encode(),
    digest_size=8).digest(), "little") % 2**31``, where ``canonical_json`` is
    ``json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.
    Every (prompt, sample) thus has its own seed, whatever the order or
    concurrency of the requests.
    """
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{seed}:{sample}:".encode())
    h.update(canonical_json(messages).encode("utf8"))
    return int.from_bytes(h.digest(), "little") % 2**31


def _fill_value(request_seed: int, lo: int, hi: int) -> float:
    """The ``on_failure="random"`` rating: ``default_rng([request_seed, 1]).integers(lo, hi + 1)``."""
    return float(np.random.default_rng([request_seed, 1]).integers(lo, hi + 1))


def _progress_arity(progress) -> int:
    try:
        inspect.signature(progress).bind(0, 0, {})
    except TypeError:
        return 2
    except ValueError:  # no signature (some builtins)
        return 2
    return 3


# ----------------------------------------------------------------------------- the adapter


class LLMJudge(TextMetric):
    """An LLM judge as a text metric: prompt, samples, parsing, aggregation.

    Each output (the *target*) is put in a prompt with its source (or its
    references), the model is asked ``samples`` times at ``temperature``,
    the rating is read from each answer (:func:`parse_rating`) and the
    samples are aggregated.  Use :func:`judge` to run it over a dataset (it
    keeps every sample, the raw answers and the failure counts); the
    adapter also works in :func:`metaeval.textmetrics.score`, which keeps the
    aggregated score only.

    Parameters
    ----------
    aspect : str
        The evaluation criterion (the ``{aspect}`` of the template), e.g.
        SummEval's definition of coherence.
    backend : {"openai", "local"} or JudgeBackend
        Where the answers come from: an OpenAI-compatible chat-completions
        endpoint (``"openai"``, :class:`OpenAIBackend`) or a causal LM in a
        local folder (``"local"``, :class:`LocalBackend`).  Pass a backend
        instance to set its options (time-out, retries, concurrency,
        decoding, ...).
    model : str, optional
        With a backend name: the model name (``"openai"``) or folder
        (``"local"``).
    base_url, api_key_env : str, optional
        With ``backend="openai"``: the API root (default
        ``https://api.openai.com/v1``) and the name of the environment
        variable holding the key (default ``OPENAI_API_KEY``).
    scale : str or tuple of int
        The integer rating scale, ``"1-5"`` (default), ``"1-10"``,
        ``"0-100"`` or any ``"LOW-HIGH"``; ``{scale}`` is filled with
        ``"LOW to HIGH"``.
    samples : int
        Answers per output (default 1), each a run of the metric
        (stability across samples).  Each is a separate request with its own
        seed and cache entry.
    temperature : float
        Sampling temperature of the model (default 0).  Seed paper 000 uses T=0 sampled
        once and T=1 sampled ten times and averaged.
    aggregate : {"mean", "median", "geval"}
        How the samples of an output become its score: the ``"mean"``
        (default) or ``"median"`` of their ratings, or ``"geval"``, the mean
        of their G-Eval probability-weighted scores (needs token
        log-probabilities).  NaN samples are left out.  ``"geval"`` scores
        a sample by ``sum_v v p(v) / sum_v p(v)`` over the scale's values
        ``v`` (Liu et al. 2023, Eq. 1), from the backend's token
        log-probabilities (see Notes).
    template : str
        The prompt (default :data:`TABLE4_TEMPLATE`, seed paper 000 Table 4)
        with fields among ``{task}``, ``{aspect}``, ``{scale}``,
        ``{source_des}``, ``{source}``, ``{target_des}``, ``{target}``
        (``{target}`` is required; write literal braces as ``{{ }}``).
    task : str
        ``{task}``: what is evaluated (default ``"the target text"``; e.g.
        ``"a summary of a news article"``).
    source_des : str
        ``{source_des}``: the name of the source text (default
        ``"Source text"``; e.g. ``"Article"``).
    target_des : str
        ``{target_des}``: the name of the rated text (default
        ``"Target text"``; e.g. ``"Summary"``).
    context : {"source", "references"}
        What fills ``{source}``: the output's source (default) or its
        references, separated by blank lines.
    pattern : str or re.Pattern, optional
        The rating parser: a regular expression with one group around the
        number (default :data:`DEFAULT_PATTERN`, the number after
        ``"Rating:"``); see :func:`parse_rating`.
    on_failure : {"nan", "random"}
        What an answer without a rating in the scale gets: NaN (default), or
        seed paper 000's random rating (``"random"``, replication only).
        ``"nan"``: such an answer is NaN, counted (``n_unparseable``,
        ``n_out_of_scale``), warned about
        (:class:`~metaeval.errors.ParseFailureWarning`) and kept raw.
        ``"random"``: seed paper 000's policy (section 3.3), only for
        replicating that paper: such a sample gets a rating drawn uniformly
        from the scale, ``numpy.random.default_rng([request_seed,
        1]).integers(low, high + 1)``, counted in ``n_filled`` (the raw answer,
        the status and the unfilled ``ratings`` are kept).
    on_error : {"raise", "nan"}
        What a request that fails for good (after the backend's retries)
        does: stop the run, resumable from the cache (default), or record NaN
        and go on.  ``"raise"`` stops with
        :class:`~metaeval.errors.JudgeRequestError` after the requests in
        flight have finished and been cached; ``"nan"`` records NaN (status
        ``request_failed``, counted in ``n_failed``) and goes on.
    seed : int or None
        Base of the per-request seeds (default 0).  Request ``(prompt,
        sample)`` gets :func:`sample_seed` ``(seed, messages, sample)``, sent as
        the ``seed`` field to HTTP endpoints (best-effort determinism on
        their side) and used by the local backend's sampler (exact).  None
        sends no seed (not allowed for the local backend or with
        ``on_failure="random"``).
    max_tokens : int or None
        Longest answer, in tokens (default 512; ``max_tokens`` of the request;
        None sends none to an HTTP endpoint).
    top_logprobs : int
        With ``aggregate="geval"``: alternatives asked per token (default 20,
        the OpenAI maximum).
    cache_dir : str, Path, or False, optional
        Folder of the response cache; None (default) uses
        :func:`default_cache_dir` (``$METAEVAL_CACHE_DIR``, else
        ``$XDG_CACHE_HOME/metaeval``, else ``~/.cache/metaeval``); False
        caches nothing.
    name : str, optional
        The score column (default ``"llm_judge"``); the ``judge`` column of
        :func:`judge_pairs`.
    pairwise_template : str
        The prompt of :func:`judge_pairs` (default :data:`PAIRWISE_TEMPLATE`)
        with fields among ``{task}``, ``{aspect}``, ``{source_des}``,
        ``{source}``, ``{target_des}``, ``{output_a}``, ``{output_b}`` (both
        outputs required).
    preference_pattern : str or re.Pattern, optional
        The verdict parser of :func:`judge_pairs` (default
        :data:`DEFAULT_PREFERENCE_PATTERN`); see :func:`parse_preference`.

    Notes
    -----
    **Requests and the cache.**  One request per (prompt, sample); identical
    prompts (two systems with the same output) are asked once.  The cache
    key is a hash of the backend's identity (kind, model, endpoint URL
    without query or credentials, or the local model's content hash), the
    messages, the sampling parameters the backend uses (temperature,
    max_tokens, the request seed, logprobs) and the sample index; the parser,
    scale, aggregation and failure policy are applied to cached answers, so
    changing them asks nothing again (except the local ``"rating"``
    decoding, whose answer depends on the scale).  Raising ``samples`` from
    5 to 10 asks only for samples 5 to 9.

    **The G-Eval weighted score** (``aggregate="geval"``).  G-Eval scores an
    answer by ``sum_v v p(v)`` over the scale's values (Liu et al. 2023,
    section 2.3).  metaeval computes ``p(v)`` as follows:

    * from an HTTP endpoint (and the local ``"generate"`` decoding), with
      the token log-probabilities of the answer (``logprobs: true``,
      ``top_logprobs``): at the token holding the parsed rating, the token
      itself and its ``top_logprobs`` alternatives whose text, stripped of
      whitespace, is an integer of the scale (``"4"`` and ``" 4"`` both
      count for 4) give ``p(v) = sum exp(logprob)``; these are renormalised
      over the scale: ``score = sum_v v p(v) / sum_v p(v)``.  The rating must
      be exactly one token: a number split over several tokens (``"10"`` as
      ``"1"`` + ``"0"``, as Llama-style tokenizers do) gives NaN (counted in
      ``n_no_logprobs``), and on such tokenizers the alternative ``"1"`` may
      be the start of ``"10"``, so use ``"mean"`` or the local ``"rating"``
      decoding there.  OpenAI's ``cl100k``/``o200k`` tokenizers keep numbers
      up to 999 in one token, so 1-5, 1-10 and 0-100 are all one token.  At
      most ``top_logprobs`` (<= 20) alternatives are seen: with 0-100 the
      mass beyond the top 20 is ignored (``mass``, the summed ``p(v)`` before
      renormalising, is reported).
    * with the local ``"rating"`` decoding, ``p(v)`` is the model's exact
      probability of the answer ``v`` (multi-token numbers included; see
      :class:`LocalBackend`), renormalised the same way.

    The score needs a parsed rating in the scale: a sample whose answer has
    none is NaN (or filled by ``on_failure="random"``).

    References
    ----------
    Seed paper 000 (Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation), section 3.2, section 3.3 and Appendix A.2, Table 4.
    Y. Liu, D. Iter, Y. Xu, S. Wang, R. Xu and C. Zhu (2023), "G-Eval: NLG
    Evaluation using GPT-4 with Better Human Alignment", EMNLP.
    Seed paper 002 (MetricEval), section 3.1.1 (metric stability over runs).
    """

    kind = "llm_judge"
    library = "metaeval"
    # Responses are cached by the judge itself (before parsing, keyed by the backend's whole
    # identity); the engine's score cache would also keep failed requests as NaN scores.
    cacheable = False
    higher_is_better = True
    batch_size = 256

    def __init__(self, aspect: str, *, backend="openai", model=None, base_url=None,
                 api_key_env=None, scale="1-5", samples: int = 1, temperature: float = 0.0,
                 aggregate: str = "mean", template: str = TABLE4_TEMPLATE,
                 task: str = "the target text", source_des: str = "Source text",
                 target_des: str = "Target text", context: str = "source", pattern=None,
                 on_failure: str = "nan", on_error: str = "raise", seed: int | None = 0,
                 max_tokens: int | None = 512, top_logprobs: int = 20, cache_dir=None,
                 name: str | None = None, batch_size: int | None = None,
                 pairwise_template: str = PAIRWISE_TEMPLATE, preference_pattern=None):
        super().__init__(name=name, batch_size=batch_size)
        for label, value in (("aspect", aspect), ("task", task), ("source_des", source_des),
                             ("target_des", target_des)):
            if not isinstance(value, str):
                raise ParameterError(f"{label}={value!r} must be a str")
        if not aspect.strip():
            raise ParameterError("aspect='' is empty: give the evaluation criterion")
        self.aspect, self.task = aspect, task
        self.source_des, self.target_des = source_des, target_des
        self.backend: JudgeBackend = make_backend(backend, model=model, base_url=base_url,
                                                  api_key_env=api_key_env)
        self.scale = parse_scale(scale)
        self.samples = check_positive_int(samples, "samples")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)) \
                or not math.isfinite(temperature) or temperature < 0:
            raise ParameterError(f"temperature={temperature!r} must be a finite number >= 0")
        self.temperature = float(temperature)
        self.aggregate = check_choice(aggregate, "aggregate", tuple(AGGREGATES))
        self.template = self._check_template(template)
        self.pairwise_template = self._check_pairwise_template(pairwise_template)
        self.preference_pattern = _compile_preference_pattern(preference_pattern)
        self.context = check_choice(context, "context", CONTEXTS)
        self.pattern = _compile_pattern(pattern)
        self.on_failure = check_choice(on_failure, "on_failure", tuple(ON_FAILURE))
        self.on_error = check_choice(on_error, "on_error", tuple(ON_ERROR))
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                                 or seed < 0):
            raise ParameterError(f"seed={seed!r} must be an int >= 0 or None")
        self.seed = None if seed is None else int(seed)
        if self.seed is None and self.on_failure == "random":
            raise ParameterError("on_failure='random' draws from a seeded generator: give seed=<int>")
        if max_tokens is not None:
            max_tokens = check_positive_int(max_tokens, "max_tokens")
        self.max_tokens = max_tokens
        self.top_logprobs = check_positive_int(top_logprobs, "top_logprobs")
        if cache_dir is not None and cache_dir is not False \
                and not isinstance(cache_dir, (str, Path, ResponseCache)):
            raise ParameterError(
                f"cache_dir={cache_dir!r} must be a folder (str or Path), a ResponseCache, None "
                "(the default folder) or False (no cache)"
            )
        self.cache_dir = cache_dir
        # Check the request parameters once (e.g. the local backend needs a seed).
        self._params()

    # -------------------------------------------------------------- configuration
    @staticmethod
    def _template_fields(template, name, allowed) -> list:
        """The fields of a prompt template, each one of ``allowed`` (ParameterError naming ``name``)."""
        if not isinstance(template, str):
            raise ParameterError(f"{name}={template!r} must be a str")
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
        except ValueError as exc:
            raise ParameterError(
                f"{name} is not a valid format string ({exc}); write literal braces as {{{{ }}}}"
            ) from None
        bad = [f for f in fields if f not in allowed]
        if bad:
            raise ParameterError(
                f"{name} uses unknown field(s) {', '.join('{' + f + '}' for f in bad)}; the "
                f"fields are {', '.join('{' + f + '}' for f in allowed)} (write literal "
                "braces as {{ }})"
            )
        return fields

    @classmethod
    def _check_template(cls, template) -> str:
        if "target" not in cls._template_fields(template, "template", TEMPLATE_FIELDS):
            raise ParameterError("template has no {target} field: the output to rate must be in it")
        return template

    @classmethod
    def _check_pairwise_template(cls, template) -> str:
        fields = cls._template_fields(template, "pairwise_template", PAIRWISE_FIELDS)
        lacking = [f for f in ("output_a", "output_b") if f not in fields]
        if lacking:
            raise ParameterError(
                f"pairwise_template has no {' or '.join('{' + f + '}' for f in lacking)} field: "
                "both outputs must be in it")
        return template

    @property
    def uses(self) -> str:
        return "source" if self.context == "source" else "references"

    @property
    def native_multi_ref(self) -> bool:  # all references go into one prompt
        return self.context == "references"

    @property
    def needs_context(self) -> bool:
        """Whether the template uses ``{source}`` (then outputs without one are not judged)."""
        return any(f == "source" for _, f, _, _ in string.Formatter().parse(self.template))

    def resolve_multi_ref(self, multi_ref: str) -> str:
        if self.context == "references":
            if multi_ref not in ("best", "native"):
                raise ParameterError(
                    f"multi_ref={multi_ref!r}: the judge puts every reference in one prompt; use "
                    "multi_ref='native' (or the default 'best')"
                )
            return "native"
        return super().resolve_multi_ref(multi_ref)

    def _params(self) -> dict:
        return self.backend.request_params(
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed,
            logprobs=self.aggregate == "geval", top_logprobs=self.top_logprobs, scale=self.scale)

    def _prompt_hash(self) -> str:
        return texts_fingerprint([self.template, self.task, self.aspect, self.source_des,
                                  self.target_des])

    def options(self) -> dict:
        lo, hi = self.scale
        out = dict(self.backend.signature_fields())
        lib = {k: out.pop(k) for k in ("transformers",) if k in out}
        out.update({"scale": f"{lo}-{hi}", "samples": self.samples, "temp": self.temperature,
                    "agg": self.aggregate, "seed": self.seed})
        if self.aggregate == "geval":
            out["toplp"] = self.top_logprobs
        if self.max_tokens is not None and getattr(self.backend, "decoding", "generate") == "generate":
            out["maxtok"] = self.max_tokens
        out["prompt"] = self._prompt_hash()
        out["parse"] = "rating" if self.pattern.pattern == DEFAULT_PATTERN else \
            texts_fingerprint([self.pattern.pattern])
        out["fail"] = self.on_failure
        out.update(lib)
        return out

    def cache_signature(self) -> str:
        fields = {"metric": self.kind, **self.options(), "ctx": self.context,
                  "adapter": self.version}
        return make_signature(**fields).rsplit("|metaeval:", 1)[0]

    def signature(self, column: str | None = None, *, multi_ref: str | None = None,
                  nrefs=None) -> str:
        """The reproducibility line, e.g. ``metric:llm_judge|backend:openai|model:...``.

        Names the backend and model (never the API key), the scale, samples,
        temperature, aggregation, seed, a hash of the prompt (template and
        its fields), the parser (``rating`` for the default), the failure
        policy and the context.
        """
        fields = {"metric": self.kind, **self.options()}
        if self.context == "references":
            fields["refs"] = nrefs
            fields["ctx"] = "references"
        else:
            fields["ctx"] = "source"
        return make_signature(**fields)

    def __repr__(self) -> str:
        lo, hi = self.scale
        return (f"LLMJudge(backend={self.backend!r}, scale='{lo}-{hi}', samples={self.samples}, "
                f"temperature={self.temperature}, aggregate={self.aggregate!r})")

    # -------------------------------------------------------------- prompts
    def prompt(self, target: str, context=None) -> str:
        """The prompt for one output: the template with its fields filled.

        ``context`` is the source (a str) or, with ``context="references"``,
        a str or sequence of references (joined by blank lines).
        """
        if context is None:
            ctx = ""
        elif isinstance(context, str):
            ctx = context
        else:
            ctx = "\n\n".join(context)
        lo, hi = self.scale
        return self.template.format_map({
            "task": self.task, "aspect": self.aspect, "scale": f"{lo} to {hi}",
            "source_des": self.source_des, "source": ctx, "target_des": self.target_des,
            "target": target,
        })

    def pairwise_prompt(self, output_a: str, output_b: str, context=None) -> str:
        """The pairwise prompt: :attr:`pairwise_template` with ``{output_a}`` and
        ``{output_b}`` (shown as A and B) and the other fields filled.

        ``context`` is as in :meth:`prompt`.
        """
        if context is None:
            ctx = ""
        elif isinstance(context, str):
            ctx = context
        else:
            ctx = "\n\n".join(context)
        return self.pairwise_template.format_map({
            "task": self.task, "aspect": self.aspect, "source_des": self.source_des,
            "source": ctx, "target_des": self.target_des, "output_a": output_a,
            "output_b": output_b,
        })

    @property
    def pairwise_needs_context(self) -> bool:
        """Whether the pairwise template uses ``{source}``."""
        return any(f == "source" for _, f, _, _ in string.Formatter().parse(self.pairwise_template))

    def _check_pairwise(self) -> None:
        if self.samples != 1:
            raise ParameterError(
                f"samples={self.samples}: pairwise judging asks once per order (A/B and B/A); "
                "build the judge with samples=1")
        if getattr(self.backend, "decoding", "generate") != "generate":
            raise ParameterError(
                "decoding='rating' draws a rating of the scale; pairwise judging needs a free "
                "answer: use LocalBackend(..., decoding='generate')")

    def _pairwise_params(self) -> dict:
        return self.backend.request_params(
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed,
            logprobs=False, top_logprobs=self.top_logprobs, scale=self.scale)

    def pairwise_signature(self, *, nrefs=None) -> str:
        """The reproducibility line of :func:`judge_pairs`, e.g.
        ``metric:llm_judge_pairwise|backend:openai|model:...|orders:ab+ba|...``.

        Names the backend and model (never a secret), the temperature, seed
        and answer length, a hash of the pairwise prompt (template and its
        fields), the verdict parser (``preference`` for the default), both
        orders and the context.
        """
        fields = dict(self.backend.signature_fields())
        lib = {k: fields.pop(k) for k in ("transformers",) if k in fields}
        fields.update({"temp": self.temperature, "seed": self.seed})
        if self.max_tokens is not None:
            fields["maxtok"] = self.max_tokens
        fields["prompt"] = texts_fingerprint([self.pairwise_template, self.task, self.aspect,
                                              self.source_des, self.target_des])
        fields["parse"] = ("preference" if self.preference_pattern.pattern
                           == DEFAULT_PREFERENCE_PATTERN
                           else texts_fingerprint([self.preference_pattern.pattern]))
        fields["orders"] = "ab+ba"
        fields.update(lib)
        if self.context == "references":
            fields["refs"] = nrefs
        fields["ctx"] = self.context
        return make_signature(metric=f"{self.kind}_pairwise", **fields)

    def run_pairwise(self, prompts: Sequence[tuple[str | None, str]], *, cache_dir=None,
                     progress=None) -> tuple[np.ndarray, np.ndarray, dict]:
        """Ask, cache and parse pairwise prompts.

        Parameters
        ----------
        prompts : sequence of (str or None, {"ab", "ba"})
            Each a pairwise prompt (:meth:`pairwise_prompt`) and the order it
            presents the pair in; None marks a pair without texts.
        cache_dir, progress
            As in :meth:`run`.

        Returns
        -------
        preference : ndarray of float
            Per prompt, in terms of the pair as given (system_a first): 1.0
            if system_a's output is preferred, 0.5 for a tie, 0.0 if
            system_b's is, NaN for a failed request or an unparseable answer.
        raw : ndarray of object
            The answers (None where there is none).
        counts : dict
            ``n_requests``, ``n_cached``, ``n_requested``, ``n_failed``,
            ``n_retries``, ``n_unparseable``, ``n_missing``.
        """
        self._check_pairwise()
        if progress is not None and not callable(progress):
            raise ParameterError(
                f"progress={progress!r} must be None or a callable progress(done, total)")
        cache = self._cache(cache_dir)
        params = self._pairwise_params()
        identity = self.backend.identity()
        requests, slot = [], []
        index: dict[bytes, int] = {}
        for j, item in enumerate(prompts):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise DataError(f"pairwise item {j} must be a (prompt, order) pair, got {item!r}")
            prompt, order = item
            check_choice(order, "order", ORDERS)
            if prompt is None:
                slot.append(None)
                continue
            if not isinstance(prompt, str):
                raise DataError(f"pairwise prompt {j} is a {type(prompt).__name__}, not a str")
            msgs = self.messages(prompt)
            rseed = None if self.seed is None else sample_seed(self.seed, msgs, 0)
            par = dict(params)
            if "seed" in par:
                par["seed"] = rseed
            desc = {"backend": identity, "task": "pairwise", "order": order, "messages": msgs,
                    "params": par, "sample": 0}
            key = request_key(desc)
            if key not in index:
                index[key] = len(requests)
                requests.append((len(requests), 0, key, canonical_json(desc), msgs, par, rseed))
            slot.append((key, order))
        bodies, errors, counts = self._execute(requests, cache, progress)
        pref = np.full(len(prompts), np.nan)
        raw = np.full(len(prompts), None, dtype=object)
        n_unparseable = 0
        for j, got in enumerate(slot):
            if got is None or got[0] not in bodies:
                continue
            key, order = got
            try:
                answer = json.loads(bodies[key][0])["choices"][0]["message"].get("content")
            except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
                answer = None
            raw[j] = answer
            verdict = _parse_preference(answer, self.preference_pattern)
            if verdict is None:
                n_unparseable += 1
            else:
                pref[j] = _PREFERENCE[(order, verdict)]
        out = {"n_requests": len(requests), "n_cached": counts["cached"],
               "n_requested": counts["requested"], "n_failed": counts["failed"],
               "n_retries": counts["retries"], "n_unparseable": n_unparseable,
               "n_missing": sum(1 for x in slot if x is None)}
        if n_unparseable:
            asked = len(prompts) - out["n_missing"]
            warnings.warn(
                f"{n_unparseable} of {asked} pairwise judge answers have no verdict (A, B or tie) "
                "the parser can read; they are NaN (see the raw column)",
                ParseFailureWarning, stacklevel=3)
        return pref, raw, out

    @staticmethod
    def messages(prompt: str) -> list[dict]:
        """The chat messages of one prompt: one user message."""
        return [{"role": "user", "content": prompt}]

    # -------------------------------------------------------------- running
    def _cache(self, cache_dir=None) -> ResponseCache | None:
        where = self.cache_dir if cache_dir is None else cache_dir
        if where is False:
            return None
        if isinstance(where, ResponseCache):
            return where
        return ResponseCache(default_cache_dir() if where is None else where)

    def run(self, prompts: Sequence[str | None], *, cache_dir=None, progress=None) -> JudgeRun:
        """Ask, cache, parse and aggregate for a list of prompts.

        Parameters
        ----------
        prompts : sequence of str or None
            One prompt per item (:meth:`prompt`); None marks an item without
            texts (its samples get the status ``missing``).
        cache_dir : str, Path, ResponseCache or False, optional
            Overrides the judge's ``cache_dir``.
        progress : callable, optional
            ``progress(done, total)`` or ``progress(done, total, counts)``,
            counted in distinct requests: once after the cache lookup, then
            as each request finishes; ``counts`` is a dict with ``cached``,
            ``requested``, ``failed`` and ``retries``.

        Returns
        -------
        JudgeRun

        Warns
        -----
        ParseFailureWarning, MissingLogprobsWarning
            See :func:`judge`.
        """
        if progress is not None and not callable(progress):
            raise ParameterError(
                f"progress={progress!r} must be None or a callable progress(done, total)"
            )
        cache = self._cache(cache_dir)
        n, s_count = len(prompts), self.samples
        params = self._params()
        identity = self.backend.identity()
        unique: dict[str, int] = {}
        item_of = np.full(n, -1, dtype=np.intp)
        for j, p in enumerate(prompts):
            if p is None:
                continue
            if not isinstance(p, str):
                raise DataError(f"prompt {j} is a {type(p).__name__}, not a str")
            item_of[j] = unique.setdefault(p, len(unique))
        uprompts = list(unique)
        requests = []  # (unique prompt index, sample, key, description JSON, messages, params, seed)
        for u, p in enumerate(uprompts):
            msgs = self.messages(p)
            for s in range(s_count):
                rseed = None if self.seed is None else sample_seed(self.seed, msgs, s)
                par = dict(params)
                if "seed" in par:
                    par["seed"] = rseed
                desc = {"backend": identity, "messages": msgs, "params": par, "sample": s}
                requests.append((u, s, request_key(desc), canonical_json(desc), msgs, par, rseed))
        bodies, errors, counts = self._execute(requests, cache, progress)
        run = self._interpret(n, item_of, requests, bodies, errors, counts)
        run.warn(stacklevel=3)
        return run

    def _execute(self, requests, cache, progress):
        total = len(requests)
        counts = {"cached": 0, "requested": 0, "failed": 0, "retries": 0}
        bodies: dict[bytes, tuple[str, bool]] = {}
        errors: dict[bytes, str] = {}
        arity = 0 if progress is None else _progress_arity(progress)

        def report():
            if progress is None:
                return
            done = counts["cached"] + counts["requested"] + counts["failed"]
            if arity == 3:
                progress(done, total, dict(counts))
            else:
                progress(done, total)

        found = cache.get(r[2] for r in requests) if cache is not None and requests else {}
        todo = []
        seen = set()
        for r in requests:
            if r[2] in found:
                bodies[r[2]] = (found[r[2]], True)
            elif r[2] not in seen:
                seen.add(r[2])
                todo.append(r)
        counts["cached"] = len(bodies)
        logger.info("%d requests: %d answered from the cache%s, %d to ask", total,
                    counts["cached"], "" if cache is None else f" ({cache.path})", len(todo))
        report()
        if not todo:
            return bodies, errors, counts
        cancel = threading.Event()
        backend = self.backend

        def work(req):
            if cancel.is_set():
                return None
            reply = backend.request(req[4], req[5], cancel=cancel)
            if cache is not None:
                cache.put(req[2], req[3], reply.body)
            return reply

        first_error: JudgeRequestError | None = None
        pool = ThreadPoolExecutor(max_workers=min(backend.concurrency, len(todo)),
                                  thread_name_prefix="metaeval-judge")
        try:
            futures = {pool.submit(work, r): r for r in todo}
            for fut in as_completed(futures):
                req = futures[fut]
                try:
                    reply = fut.result()
                except JudgeRequestError as exc:
                    counts["failed"] += 1
                    counts["retries"] += max(exc.attempts - 1, 0)
                    errors[req[2]] = str(exc)
                    if self.on_error == "nan":
                        logger.warning("request failed for good, recorded as NaN "
                                       "(on_error='nan'): %s", exc)
                    if self.on_error == "raise" and first_error is None:
                        first_error = exc
                        cancel.set()
                    report()
                    continue
                if reply is None:  # cancelled before it started
                    continue
                bodies[req[2]] = (reply.body, False)
                counts["requested"] += 1
                counts["retries"] += reply.attempts - 1
                report()
        except BaseException:
            cancel.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        logger.info("%d asked and answered, %d failed, %d retries", counts["requested"],
                    counts["failed"], counts["retries"])
        if first_error is not None:
            kept = ("received and cached in this run, run again to resume" if cache is not None
                    else "received in this run (no cache: running again asks for them again)")
            raise JudgeRequestError(
                f"{first_error} [{counts['requested']} answers {kept}; {counts['cached']} came "
                f"from the cache; {total - len(bodies)} not received]",
                status=first_error.status, attempts=first_error.attempts,
            ) from first_error
        return bodies, errors, counts

    def _interpret(self, n, item_of, requests, bodies, errors, counts) -> JudgeRun:
        lo, hi = self.scale
        s_count = self.samples
        n_u = int(item_of.max()) + 1 if n else 0
        u_rating = np.full((s_count, n_u), np.nan)
        u_value = np.full((s_count, n_u), np.nan)
        u_mass = np.full((s_count, n_u), np.nan)
        u_status = np.full((s_count, n_u), "request_failed", dtype=object)
        u_answer = np.full((s_count, n_u), None, dtype=object)
        u_cached = np.zeros((s_count, n_u), dtype=bool)
        u_filled = np.zeros((s_count, n_u), dtype=bool)
        u_error = np.full((s_count, n_u), None, dtype=object)
        for u, s, key, _, _, _, rseed in requests:
            got = bodies.get(key)
            if got is None:
                u_error[s, u] = errors.get(key, "not requested (the run stopped before it)")
                continue
            body_text, was_cached = got
            u_cached[s, u] = was_cached
            try:
                body = json.loads(body_text)
                answer = body["choices"][0]["message"].get("content")
            except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
                body, answer = {}, None
            u_answer[s, u] = answer
            rating = _parse(answer, lo, hi, self.pattern)
            u_rating[s, u] = rating.value
            status = rating.status
            value = rating.value
            if status == "ok" and self.aggregate == "geval":
                value, mass = _geval(body, answer, rating, lo, hi)
                u_mass[s, u] = mass
                if math.isnan(value):
                    status = "no_logprobs"
            if status in ("unparseable", "out_of_scale") and self.on_failure == "random":
                value = _fill_value(rseed, lo, hi)
                u_filled[s, u] = True
            u_status[s, u] = status
            u_value[s, u] = value

        def spread(a, fill):
            out = np.full((s_count, n), fill, dtype=a.dtype)
            ok = item_of >= 0
            out[:, ok] = a[:, item_of[ok]]
            return out

        status = spread(u_status, "missing")
        return JudgeRun(
            ratings=spread(u_rating, np.nan), values=spread(u_value, np.nan),
            mass=spread(u_mass, np.nan) if self.aggregate == "geval" else None,
            status=status, answers=spread(u_answer, None), cached=spread(u_cached, False),
            filled=spread(u_filled, False), errors=spread(u_error, None),
            scores=_aggregate(spread(u_value, np.nan), self.aggregate),
            n_requests=len(requests), n_cached=counts["cached"], n_requested=counts["requested"],
            n_failed=counts["failed"], n_retries=counts["retries"],
        )

    # -------------------------------------------------------------- the TextMetric interface
    def score_batch(self, hypotheses, contexts):
        prompts = [self.prompt(h, c) for h, c in zip(hypotheses, contexts)]
        return self.run(prompts).scores[:, None]


def _aggregate(values: np.ndarray, how: str) -> np.ndarray:
    """Aggregate ``(S, n)`` per-sample values over samples, NaN samples left out."""
    ok = ~np.isnan(values)
    count = ok.sum(axis=0)
    out = np.full(values.shape[1], np.nan)
    has = count > 0
    if how == "median":
        if has.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out[has] = np.nanmedian(values[:, has], axis=0)
        return out
    # correctly rounded: equal exact means of the samples tie, whatever their order
    return masked_mean(values, ok, axis=0)


@dataclass(frozen=True, repr=False)
class JudgeRun:
    """What :meth:`LLMJudge.run` returns: per-sample arrays ``(S, n)`` over the
    prompts given, the aggregated scores ``(n,)`` and the request counts."""

    ratings: np.ndarray
    values: np.ndarray
    mass: np.ndarray | None
    status: np.ndarray
    answers: np.ndarray
    cached: np.ndarray
    filled: np.ndarray
    errors: np.ndarray
    scores: np.ndarray
    n_requests: int = 0
    n_cached: int = 0
    n_requested: int = 0
    n_failed: int = 0
    n_retries: int = 0

    def count(self, status: str) -> int:
        return int((self.status == status).sum())

    def warn(self, stacklevel: int = 3) -> None:
        bad = self.count("unparseable") + self.count("out_of_scale")
        asked = int(self.status.size - self.count("missing"))
        if bad:
            fill = (f"; {int(self.filled.sum())} filled with a random rating (on_failure='random')"
                    if self.filled.any() else "; they are NaN")
            warnings.warn(
                f"{bad} of {asked} judge answers have no rating in the scale "
                f"({self.count('unparseable')} unparseable, {self.count('out_of_scale')} out of "
                f"scale){fill}; see failures() for the raw answers",
                ParseFailureWarning, stacklevel=stacklevel)
        missing_lp = self.count("no_logprobs")
        if missing_lp:
            warnings.warn(
                f"{missing_lp} of {asked} judge answers have a rating but no usable token "
                "log-probabilities for the G-Eval score (none returned, a rating split over "
                "several tokens, or no alternative in the scale); they are NaN",
                MissingLogprobsWarning, stacklevel=stacklevel)


# ----------------------------------------------------------------------------- the result


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, repr=False)
class JudgeScores:
    """An LLM judge's scores of a dataset's outputs, with every sample and answer.

    Attributes
    ----------
    name : str
        The score column.
    systems, inputs : tuple of str
        The dataset's labels (``N`` and ``M``).
    scores : ndarray
        ``(N, M)`` aggregated scores (``aggregate`` over the samples, NaN
        samples left out); NaN where no sample has a value or the cell has no
        texts.
    samples : ndarray
        ``(S, N, M)`` per-sample values: the rating, or for
        ``aggregate="geval"`` the sample's probability-weighted score; NaN
        where missing (filled only under ``on_failure="random"``).
    ratings : ndarray
        ``(S, N, M)`` parsed ratings, NaN where none (never filled).
    status : ndarray of str
        ``(S, N, M)``: ``ok``, ``unparseable``, ``out_of_scale``,
        ``no_logprobs``, ``request_failed`` or ``missing`` (no texts).
    answers : ndarray of object
        ``(S, N, M)`` raw answer texts (None where no answer).
    errors : ndarray of object
        ``(S, N, M)`` the error of a request that failed for good
        (``on_error="nan"``), else None.
    cached : ndarray of bool
        ``(S, N, M)``: the answer came from the cache.
    filled : ndarray of bool
        ``(S, N, M)``: the value was drawn by ``on_failure="random"``.
    mass : ndarray or None
        ``(S, N, M)`` probability mass on the scale's values behind each
        G-Eval score (``aggregate="geval"`` only).
    signature : str
        The reproducibility line (see :meth:`LLMJudge.signature`).
    aggregate : str
    n_requests, n_cached, n_requested, n_failed, n_retries : int
        Distinct requests (prompt x sample), how many were answered from the
        cache, asked and answered in this call, failed for good, and how
        many extra attempts (retries) were made.
    n_unparseable, n_out_of_scale, n_no_logprobs, n_filled, n_missing : int
        Samples (cells x samples) without a rating, with a rating outside
        the scale, without usable log-probabilities (``geval``), filled
        by ``on_failure="random"``, and without texts.
    n_nan_cells : int
        Cells whose aggregated score is NaN.
    """

    name: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    scores: np.ndarray = field(repr=False)
    samples: np.ndarray = field(repr=False)
    ratings: np.ndarray = field(repr=False)
    status: np.ndarray = field(repr=False)
    answers: np.ndarray = field(repr=False)
    cached: np.ndarray = field(repr=False)
    filled: np.ndarray = field(repr=False)
    mass: np.ndarray | None = field(repr=False)
    errors: np.ndarray | None = field(repr=False, default=None)
    signature: str = ""
    aggregate: str = "mean"
    n_requests: int = 0
    n_cached: int = 0
    n_requested: int = 0
    n_failed: int = 0
    n_retries: int = 0
    n_unparseable: int = 0
    n_out_of_scale: int = 0
    n_no_logprobs: int = 0
    n_filled: int = 0
    n_missing: int = 0
    n_nan_cells: int = 0

    def __repr__(self) -> str:
        s, n, m = self.samples.shape
        return (f"JudgeScores({self.name!r}: {n} systems x {m} inputs x {s} samples, "
                f"n_requests={self.n_requests}, n_cached={self.n_cached}, "
                f"n_requested={self.n_requested}, n_failed={self.n_failed}, "
                f"n_unparseable={self.n_unparseable}, n_out_of_scale={self.n_out_of_scale})")

    @property
    def counts(self) -> dict:
        """The counts as a dict (the ``n_*`` fields)."""
        return {k: getattr(self, k) for k in (
            "n_requests", "n_cached", "n_requested", "n_failed", "n_retries", "n_unparseable",
            "n_out_of_scale", "n_no_logprobs", "n_filled", "n_missing", "n_nan_cells")}

    def to_frame(self) -> pd.DataFrame:
        """Tidy table: one row per system x input x sample.

        Columns ``metric``, ``system``, ``input``, ``sample`` (0-based),
        ``value`` (the sample's value), ``rating`` (parsed), ``status``,
        ``filled``, ``cached``, ``answer`` (raw), ``error`` (of a request
        that failed for good), ``mass`` (``geval`` only) and ``signature``.
        """
        s, n, m = self.samples.shape
        sys_col = np.tile(np.repeat(np.array(self.systems, dtype=object), m), s)
        inp_col = np.tile(np.array(self.inputs, dtype=object), n * s)
        data = {
            "metric": self.name, "system": sys_col, "input": inp_col,
            "sample": np.repeat(np.arange(s), n * m),
            "value": self.samples.reshape(-1), "rating": self.ratings.reshape(-1),
            "status": self.status.reshape(-1), "filled": self.filled.reshape(-1),
            "cached": self.cached.reshape(-1), "answer": self.answers.reshape(-1),
            "error": (np.full(self.samples.size, None, dtype=object) if self.errors is None
                      else self.errors.reshape(-1)),
        }
        if self.mass is not None:
            data["mass"] = self.mass.reshape(-1)
        data["signature"] = self.signature
        return pd.DataFrame(data)

    def failures(self) -> pd.DataFrame:
        """The rows of :meth:`to_frame` whose status is not ``ok`` or ``missing``."""
        f = self.to_frame()
        return f[~f["status"].isin(["ok", "missing"])].reset_index(drop=True)

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict: name, labels, signature, counts (and the score and sample
        matrices as nested lists with NaN as None if ``arrays``)."""
        d = {"name": self.name, "systems": list(self.systems), "inputs": list(self.inputs),
             "signature": self.signature, "aggregate": self.aggregate, **self.counts}
        if arrays:
            def lists(a):
                return [None if math.isnan(v) else float(v) for v in a] if a.ndim == 1 \
                    else [lists(x) for x in a]
            d["scores"] = lists(self.scores)
            d["samples"] = lists(self.samples)
        return d

    def attach(self, dataset: Dataset, *, replace: bool = False) -> Dataset:
        """A new :class:`~metaeval.Dataset` with the judge's scores as a metric.

        The column ``name`` holds the samples as runs, ``(S, N, M)`` with run
        labels ``sample0``, ``sample1``, ... (a plain ``(N, M)`` column when
        ``S == 1``), so :func:`metaeval.reliability.stability` reads the
        samples and ``dataset.scores(name)`` (the mean over runs, NaN runs
        left out) is the aggregated score for ``aggregate="mean"`` and
        ``"geval"``.  For ``aggregate="median"`` the median is added as a
        second column ``name + "_median"``.

        Raises
        ------
        DataError
            If the dataset's systems or inputs differ from the judged ones,
            or a column exists (a human column is never replaced; a metric
            column only with ``replace=True``).
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a metaeval Dataset, got {type(dataset).__name__}")
        if set(dataset.systems) != set(self.systems) or set(dataset.inputs) != set(self.inputs):
            raise DataError(
                "attach: the dataset's systems or inputs differ from the judged ones; judge "
                "this dataset, or subset it to the judged labels"
            )
        new = [self.name] + ([f"{self.name}_median"] if self.aggregate == "median" else [])
        clash_h = [c for c in new if c in dataset.human]
        clash_m = [c for c in new if c in dataset.metrics]
        if clash_h or (clash_m and not replace):
            raise DataError(
                f"attach: column(s) {', '.join(map(repr, clash_h + clash_m))} already exist in "
                "the dataset; give the judge another name=" + ("" if clash_h else
                                                               " or pass replace=True")
            )
        s_idx = [self.systems.index(s) for s in dataset.systems]
        i_idx = [self.inputs.index(i) for i in dataset.inputs]
        ratings = {c: dataset.ratings(c) for c in dataset.columns if c not in clash_m}
        labels = {}
        runs = self.samples[:, s_idx][:, :, i_idx]
        if runs.shape[0] == 1:
            ratings[self.name] = runs[0]
        else:
            ratings[self.name] = runs
            labels[self.name] = [f"sample{k}" for k in range(runs.shape[0])]
        if self.aggregate == "median":
            ratings[new[1]] = self.scores[np.ix_(s_idx, i_idx)]
        return dataset._with(ratings, rater_labels=labels)


# ----------------------------------------------------------------------------- entry point


def judge(dataset: Dataset, metric: LLMJudge, *, cache_dir=None, progress=None,
          hypothesis: str = "hypothesis", references: str | None = None,
          source: str = "source") -> JudgeScores:
    """Rate every output of a dataset with an LLM judge.

    Parameters
    ----------
    dataset : Dataset
        Its :attr:`~metaeval.Dataset.texts` must have ``system``, ``input``,
        ``hypothesis`` and (when the template uses ``{source}``) ``source``
        or, with ``context="references"``, ``references``/``reference``.
    metric : LLMJudge
        The configured judge (``LLMJudge(...)`` or
        ``get_metric("llm_judge", aspect=..., ...)``).
    cache_dir : str, Path, ResponseCache or False, optional
        Overrides the judge's ``cache_dir`` (default: the judge's, whose
        default is :func:`default_cache_dir`).
    progress : callable, optional
        ``progress(done, total)`` or ``progress(done, total, counts)`` (see
        :meth:`LLMJudge.run`), counted in distinct requests.
    hypothesis, references, source : str
        Text column names.

    Returns
    -------
    JudgeScores

    Raises
    ------
    JudgeRequestError
        With ``on_error="raise"``: a request failed for good (answers
        received before are cached).
    DataError
        Missing texts or text columns.

    Warns
    -----
    ParseFailureWarning
        Some answers have no rating in the scale (counted in the result).
    MissingLogprobsWarning
        Some G-Eval scores could not be computed (counted).
    """
    from ._score import dataset_texts

    if not isinstance(metric, LLMJudge):
        raise ParameterError(
            f"metric={metric!r} must be an LLMJudge (build it with LLMJudge(aspect, ...) or "
            "get_metric('llm_judge', aspect=..., ...))"
        )
    need_ctx = metric.needs_context
    hyps, refs, srcs = dataset_texts(
        dataset, hypothesis=hypothesis, references=references, source=source,
        need_refs=need_ctx and metric.context == "references",
        need_source=need_ctx and metric.context == "source")
    n, m = dataset.shape
    prompts: list[str | None] = []
    for c in range(n * m):
        ctx = (srcs[c] if metric.context == "source" else refs[c]) if need_ctx else ""
        if hyps[c] is None or ctx is None:
            prompts.append(None)
        else:
            prompts.append(metric.prompt(hyps[c], ctx))
    run = metric.run(prompts, cache_dir=cache_dir, progress=progress)
    s = metric.samples

    def cube(a):
        return _readonly(a.reshape(s, n, m).copy())

    scores = _readonly(run.scores.reshape(n, m).copy())
    nrefs = None
    if metric.context == "references" and need_ctx:
        counts = sorted({len(r) for r in refs if r})
        nrefs = (counts[0] if len(counts) == 1 else f"{counts[0]}-{counts[-1]}") if counts else 0
    return JudgeScores(
        name=metric.name, systems=dataset.systems, inputs=dataset.inputs, scores=scores,
        samples=cube(run.values), ratings=cube(run.ratings), status=cube(run.status),
        answers=cube(run.answers), cached=cube(run.cached), filled=cube(run.filled),
        mass=None if run.mass is None else cube(run.mass), errors=cube(run.errors),
        signature=metric.signature(nrefs=nrefs), aggregate=metric.aggregate,
        n_requests=run.n_requests, n_cached=run.n_cached, n_requested=run.n_requested,
        n_failed=run.n_failed, n_retries=run.n_retries,
        n_unparseable=run.count("unparseable"), n_out_of_scale=run.count("out_of_scale"),
        n_no_logprobs=run.count("no_logprobs"), n_filled=int(run.filled.sum()),
        n_missing=run.count("missing"), n_nan_cells=int(np.isnan(scores).sum()),
    )


def judge_pairs(dataset: Dataset, metric: LLMJudge, *, pairs=None, cache_dir=None,
                progress=None, hypothesis: str = "hypothesis", references: str | None = None,
                source: str = "source") -> pd.DataFrame:
    """Pairwise LLM judging: for each input and pair of systems, which output is better.

    Each pair's two outputs are shown to the judge in **both orders**
    (:data:`PAIRWISE_TEMPLATE`: ``system_a``'s output as A and ``system_b``'s
    as B, then swapped), each answer is parsed for a verdict (A, B or tie,
    :func:`parse_preference`) and mapped back to the pair as given, so
    position bias shows as disagreement between the two orders.  Requests
    are cached and resumed exactly like :func:`judge`'s (the same cache; the
    key holds the backend, the prompt, the order and the sampling
    parameters).  No statistic is computed here (see
    :mod:`metaeval.preferences`).

    Parameters
    ----------
    dataset : Dataset
        With texts (``system``, ``input``, ``hypothesis`` and, when the
        pairwise template uses ``{source}``, ``source`` or references).
    metric : LLMJudge
        The judge (``samples=1``; its ``pairwise_template`` and
        ``preference_pattern``, backend, temperature, seed, ``max_tokens``,
        ``on_error`` and cache are used; the scale and aggregation are not).
    pairs : sequence of (str, str), optional
        The system pairs ``(system_a, system_b)``; default every pair of the
        dataset's systems in their order (``i < j``).
    cache_dir, progress, hypothesis, references, source
        As in :func:`judge`.

    Returns
    -------
    pandas.DataFrame
        One row per input x pair x order, inputs in the dataset's order,
        then pairs, then ``"ab"`` before ``"ba"``; columns ``input``,
        ``system_a``, ``system_b``, ``judge`` (the judge's name), ``order``
        (``"ab"``: system_a's output shown as A; ``"ba"``: shown as B),
        ``preference`` (float, for the pair as given: 1.0 system_a better,
        0.5 tie, 0.0 system_b better, NaN for a failed request, an
        unparseable answer or a pair without texts) and ``raw`` (the answer,
        None where there is none).  ``frame.attrs`` holds ``signature``
        (:meth:`LLMJudge.pairwise_signature`) and ``counts`` (``n_requests``,
        ``n_cached``, ``n_requested``, ``n_failed``, ``n_retries``,
        ``n_unparseable``, ``n_missing``).

    Raises
    ------
    JudgeRequestError
        With ``on_error="raise"``: a request failed for good (answers
        received before are cached).
    DataError
        Missing texts or columns; unknown or repeated systems in ``pairs``.
    ParameterError
        ``samples`` other than 1, or a local backend with ``decoding="rating"``.

    Warns
    -----
    ParseFailureWarning
        Some answers have no verdict (they are NaN; the raw answer is kept).
    """
    from ._score import dataset_texts

    if not isinstance(metric, LLMJudge):
        raise ParameterError(
            f"metric={metric!r} must be an LLMJudge (build it with LLMJudge(aspect, ...))")
    metric._check_pairwise()
    systems = list(dataset.systems) if isinstance(dataset, Dataset) else []
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    else:
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
            raise DataError(f"pairs={pairs!r} must be a sequence of (system_a, system_b)")
        pairs = [tuple(p) if isinstance(p, (tuple, list)) else p for p in pairs]
        bad = [p for p in pairs if not (isinstance(p, tuple) and len(p) == 2)]
        if bad:
            raise DataError(f"pairs: {bad[0]!r} is not a (system_a, system_b) pair")
        unknown = sorted({str(x) for p in pairs for x in p if x not in systems})
        if unknown:
            raise DataError(
                f"pairs name unknown system(s) {', '.join(map(repr, unknown))}; the dataset has "
                f"{', '.join(map(repr, systems))}")
        same = [p for p in pairs if p[0] == p[1]]
        if same:
            raise DataError(f"pairs: {same[0]!r} compares a system with itself")
        seen = Counter(frozenset(p) for p in pairs)
        twice = [p for p in pairs if seen[frozenset(p)] > 1]
        if twice:
            raise DataError(
                f"pairs: {twice[0]!r} is given more than once (either order); each pair is "
                "judged in both orders already")
    need_ctx = metric.pairwise_needs_context
    hyps, refs, srcs = dataset_texts(
        dataset, hypothesis=hypothesis, references=references, source=source,
        need_refs=need_ctx and metric.context == "references",
        need_source=need_ctx and metric.context == "source")
    n, m = dataset.shape
    pos = {s: k for k, s in enumerate(systems)}
    rows, prompts = [], []
    for j, inp in enumerate(dataset.inputs):
        for a, b in pairs:
            ca, cb = pos[a] * m + j, pos[b] * m + j
            ctx = ""
            if need_ctx:
                both = (srcs[ca], srcs[cb]) if metric.context == "source" else (refs[ca], refs[cb])
                ctx = next((c for c in both if c is not None), None)
            ok = hyps[ca] is not None and hyps[cb] is not None and ctx is not None
            for order in ORDERS:
                first, second = (hyps[ca], hyps[cb]) if order == "ab" else (hyps[cb], hyps[ca])
                prompts.append((metric.pairwise_prompt(first, second, ctx) if ok else None, order))
                rows.append((inp, a, b, order))
    pref, raw, counts = metric.run_pairwise(prompts, cache_dir=cache_dir, progress=progress)
    nrefs = None
    if metric.context == "references" and need_ctx:
        sizes = sorted({len(r) for r in refs if r})
        nrefs = (sizes[0] if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}") if sizes else 0
    frame = pd.DataFrame({
        "input": pd.Series([r[0] for r in rows], dtype=object),
        "system_a": pd.Series([r[1] for r in rows], dtype=object),
        "system_b": pd.Series([r[2] for r in rows], dtype=object),
        "judge": pd.Series([metric.name] * len(rows), dtype=object),
        "order": pd.Series([r[3] for r in rows], dtype=object),
        "preference": pd.Series(pref, dtype=float),
        "raw": pd.Series(raw, dtype=object),
    }, columns=list(PAIRWISE_COLUMNS))
    frame.attrs["signature"] = metric.pairwise_signature(nrefs=nrefs)
    frame.attrs["counts"] = counts
    return frame
