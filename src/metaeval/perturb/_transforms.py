"""The perturbations: one function per transform and the registry.

Each transform takes one text and a :class:`numpy.random.Generator` (unused
by the deterministic ones) plus its options, and returns the perturbed text,
or raises :class:`Skip` with a short fixed reason when the text cannot be
perturbed (the reasons are counted in results, so they are kept few and
stable).  A transform never returns its input unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ParameterError
from ._text import ROUNDINGS, is_word, join, match_case, round_count, sentences, tokens


class Skip(Exception):
    """A text that a perturbation cannot change; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------
# option validation


def _fraction(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < float(v) < 1:
        raise ParameterError(f"{name}={v!r} must be a number strictly between 0 and 1")
    return float(v)


def _positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ParameterError(f"{name}={v!r} must be a positive int")
    return int(v)


def _choice(allowed):
    def check(name, v):
        if v not in allowed:
            raise ParameterError(f"{name}={v!r}; choose one of {', '.join(allowed)}")
        return v

    return check


# --------------------------------------------------------------------------
# sentence reorder


def sentence_reorder(text: str, gen: np.random.Generator) -> str:
    """Shuffle the sentences into a random order different from the original.

    A uniformly random permutation is drawn until the text changes (at most
    100 draws; then the sentences are rotated by one, which changes any text
    with two distinct sentences).  Skips: ``fewer than 2 sentences``,
    ``all sentences identical``.
    """
    sents = [join(s) for s in sentences(text)]
    if len(sents) < 2:
        raise Skip("fewer than 2 sentences")
    if len(set(sents)) < 2:
        raise Skip("all sentences identical")
    for _ in range(100):
        new = [sents[i] for i in gen.permutation(len(sents))]
        if new != sents:
            return join(new)
    return join(sents[1:] + sents[:1])  # pragma: no cover - probability <= 2**-100


# --------------------------------------------------------------------------
# subject-verb disagreement

#: Auxiliary and verb forms whose grammatical number is swapped (both ways).
NUMBER_PAIRS = (
    ("is", "are"),
    ("was", "were"),
    ("has", "have"),
    ("does", "do"),
    ("isn't", "aren't"),
    ("wasn't", "weren't"),
    ("hasn't", "haven't"),
    ("doesn't", "don't"),
)
_SWAP = {}
for _a, _b in NUMBER_PAIRS:
    for _q in ("'", "’"):
        _SWAP[_a.replace("'", _q)] = _b.replace("'", _q)
        _SWAP[_b.replace("'", _q)] = _a.replace("'", _q)

_SINGULAR_SUBJECTS = frozenset({"he", "she", "it"})
_PLURAL_SUBJECTS = frozenset({"they", "we", "i"})
#: Words after a subject pronoun that are not present-tense lexical verbs.
NOT_VERBS = frozenset(
    """can could will would shall should may might must ought also still never always
    often just only then now already even really too not soon usually sometimes rarely
    all both each perhaps thus as had did got went said came made took gave saw knew
    thought told found left felt became began kept brought won lost met paid put ran
    sat set spent stood sent held heard drew wrote spoke fell rose chose broke led fled
    fought bought caught taught threw grew flew drove rode struck am""".split()
)


def _third_person(verb: str) -> str:
    """Base form -> 3rd person singular (try -> tries, watch -> watches, go -> goes)."""
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def _base_form(verb: str) -> str:
    """3rd person singular -> base form (tries -> try, watches -> watch, goes -> go)."""
    if len(verb) > 4 and verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1]


def _agreement_candidates(toks: list[str]) -> list[tuple[int, str]]:
    out = []
    for k, t in enumerate(toks):
        low = t.lower()
        if low in _SWAP:
            out.append((k, match_case(_SWAP[low], t)))
            continue
        if k == 0 or not t.isalpha() or not t.islower() or low in NOT_VERBS:
            continue
        subj = toks[k - 1].lower()
        if subj in _SINGULAR_SUBJECTS:
            if len(low) >= 3 and low.endswith("s") and not low.endswith(("ss", "us", "is")):
                out.append((k, _base_form(low)))
        elif subj in _PLURAL_SUBJECTS:
            if (
                len(low) >= 2
                and not low.endswith(("ed", "ing", "ly"))
                and (not low.endswith("s") or low.endswith("ss"))
            ):
                out.append((k, _third_person(low)))
    return out


def subject_verb_disagreement(text: str, gen: np.random.Generator, *, n_edits: int = 1) -> str:
    """Change the grammatical number of up to ``n_edits`` verb forms.

    Candidates (a small rule set, no tagger):

    * every auxiliary form in ``NUMBER_PAIRS`` (is <-> are, was <-> were,
      has <-> have, does <-> do and their ``n't`` forms), wherever it
      occurs, keeping its capitalisation;
    * a lowercase word right after *he*/*she*/*it* that ends in ``-s``
      (not ``-ss``, ``-us``, ``-is``) loses its 3rd person ending (says ->
      say, tries -> try, watches -> watch, goes -> go);
    * a lowercase word right after *they*/*we*/*I* that does not end in
      ``-s`` (``-ss`` allowed), ``-ed``, ``-ing`` or ``-ly`` gets one
      (say -> says, try -> tries, watch -> watches, go -> goes);

    words in ``NOT_VERBS`` (modals, frequent adverbs, irregular past forms)
    are never changed.  ``n_edits`` distinct candidates are drawn uniformly
    without replacement (all of them if there are fewer).  The rules are a
    heuristic: a swapped form is almost always an agreement error, but in
    rare cases (``there is/are`` before an ambiguous noun) the result stays
    grammatical.  Skip: ``no verb form to change``.
    """
    toks = tokens(text)
    cands = _agreement_candidates(toks)
    if not cands:
        raise Skip("no verb form to change")
    k = min(n_edits, len(cands))
    picks = gen.choice(len(cands), size=k, replace=False)
    for p in sorted(int(v) for v in picks):
        pos, word = cands[p]
        toks[pos] = word
    return join(toks)


# --------------------------------------------------------------------------
# dropping words


def _word_positions(toks):
    return [k for k, t in enumerate(toks) if is_word(t)]


def drop_words(
    text: str, gen: np.random.Generator, *, fraction: float = 0.2, rounding: str = "half_up"
) -> str:
    """Delete ``round(fraction * n_words)`` randomly chosen words.

    Seed paper 004, section 4.2: "removing 20% of the words in the outputs,
    rounded to the nearest integer".  Words are tokens with a letter or a
    digit (punctuation tokens stay); the count is rounded half up by
    default (``rounding="half_even"`` rounds halves to even; with the
    default 20% no half arises).  The deleted words are drawn uniformly
    without replacement.  Skips: ``no words``, ``rounds to 0 words``,
    ``would drop every word``.
    """
    toks = tokens(text)
    pos = _word_positions(toks)
    if not pos:
        raise Skip("no words")
    k = round_count(fraction, len(pos), rounding)
    if k == 0:
        raise Skip("rounds to 0 words")
    if k >= len(pos):
        raise Skip("would drop every word")
    drop = {pos[int(i)] for i in gen.choice(len(pos), size=k, replace=False)}
    return join(t for j, t in enumerate(toks) if j not in drop)


# --------------------------------------------------------------------------
# word swap


def word_swap(text: str, gen: np.random.Generator, *, n_swaps: int = 1) -> str:
    """Swap up to ``n_swaps`` pairs of adjacent, different words.

    Candidate positions are adjacent token pairs that are both words and
    differ; ``n_swaps`` of them are drawn uniformly without replacement (all
    if fewer) and swapped from left to right.  Skips: ``no adjacent
    different words``, ``swaps cancel out`` (overlapping swaps that restore
    the text; rare).
    """
    toks = tokens(text)
    cands = [
        k
        for k in range(len(toks) - 1)
        if is_word(toks[k]) and is_word(toks[k + 1]) and toks[k] != toks[k + 1]
    ]
    if not cands:
        raise Skip("no adjacent different words")
    picks = gen.choice(len(cands), size=min(n_swaps, len(cands)), replace=False)
    new = list(toks)
    for p in sorted(int(v) for v in picks):
        k = cands[p]
        new[k], new[k + 1] = new[k + 1], new[k]
    if new == toks:
        raise Skip("swaps cancel out")
    return join(new)


# --------------------------------------------------------------------------
# negation removal

_NT = re.compile(r"^(.+?)n['’]t$", re.IGNORECASE)
#: Stems of negative contractions that are not the positive form.
_NT_STEMS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
#: Tokens removed outright.
NEGATION_WORDS = frozenset({"not", "never"})


def negation_removal(text: str, gen: np.random.Generator | None = None) -> str:
    """Remove every negation, turning the statement positive.

    ``not`` and ``never`` are deleted; ``cannot`` becomes ``can``; a
    contraction ``Xn't`` becomes ``X`` (don't -> do, isn't -> is, can't ->
    can, won't -> will, shan't -> shall); a separate ``n't`` token (the
    tokenized ``do n't``) is deleted and the stems ``ca``/``wo``/``sha``
    before it repaired.  When a removed word is capitalised (``Never``,
    ``Not`` starting a sentence), the next word is capitalised.  ``no``,
    ``none``, ``nobody``, ``nothing`` are left alone (removing them needs a
    rewrite).
    Deterministic (``gen`` is unused).  Skip: ``no negation``.
    """
    out: list[str] = []
    changed = False
    cap_next = False
    for t in tokens(text):
        low = t.lower()
        m = _NT.match(t)
        if low in NEGATION_WORDS:
            cap_next = cap_next or t[:1].isupper()
            changed = True
            continue
        if low in ("n't", "n’t"):
            if out and out[-1].lower() in _NT_STEMS:
                out[-1] = match_case(_NT_STEMS[out[-1].lower()], out[-1])
            changed = True
            continue
        if low == "cannot":
            t, changed = match_case("can", t), True
        elif m and m.group(1).isalpha():
            stem = m.group(1)
            if stem.lower() in _NT_STEMS:
                stem = match_case(_NT_STEMS[stem.lower()], stem)
            t, changed = stem, True
        if cap_next and t[:1].islower():
            t = t[:1].upper() + t[1:]
        cap_next = False
        out.append(t)
    if not changed:
        raise Skip("no negation")
    if not out:
        raise Skip("only negation words")
    return join(out)


# --------------------------------------------------------------------------
# repetition


def repetition(text: str, gen: np.random.Generator, *, unit: str = "words", length: int = 4) -> str:
    """Repeat a random span right after itself.

    ``unit="words"``: a span of ``length`` consecutive tokens, its start drawn
    uniformly (skip: ``fewer tokens than length``).  ``unit="sentence"``: a
    sentence drawn uniformly (skip: ``no words`` for an empty text).
    """
    toks = tokens(text)
    if unit == "sentence":
        sents = sentences(text)
        if not sents:
            raise Skip("no words")
        k = int(gen.integers(len(sents)))
        sents.insert(k + 1, sents[k])
        return join(t for s in sents for t in s)
    if len(toks) < length:
        raise Skip("fewer tokens than length")
    s = int(gen.integers(len(toks) - length + 1))
    return join(toks[: s + length] + toks[s : s + length] + toks[s + length :])


# --------------------------------------------------------------------------
# truncation


def truncation(
    text: str,
    gen: np.random.Generator | None = None,
    *,
    fraction: float = 0.5,
    rounding: str = "half_up",
) -> str:
    """Cut off the last ``round(fraction * n_words)`` words.

    The text is cut right after its ``n_words - k``-th word (punctuation
    after it goes too), rounding as in :func:`drop_words`.  Deterministic.
    Skips: ``no words``, ``rounds to 0 words``, ``would drop every word``.
    """
    toks = tokens(text)
    pos = _word_positions(toks)
    if not pos:
        raise Skip("no words")
    k = round_count(fraction, len(pos), rounding)
    if k == 0:
        raise Skip("rounds to 0 words")
    if k >= len(pos):
        raise Skip("would drop every word")
    return join(toks[: pos[len(pos) - k - 1] + 1])


# --------------------------------------------------------------------------
# the registry


@dataclass(frozen=True)
class Perturbation:
    """A registered perturbation.

    Attributes
    ----------
    name : str
        Registry name (the ``name`` argument of :func:`~metaeval.perturb.perturb`).
    function : callable
        ``function(text, gen, **options) -> str``; raises :class:`Skip`.
    degrades : str
        The quality the perturbation is meant to lower.
    source : str
        Where the perturbation comes from.
    defaults : dict
        The options and their default values.
    random : bool
        Whether the output depends on the random generator.
    """

    name: str
    function: Callable
    degrades: str
    source: str
    defaults: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict, repr=False)
    random: bool = True

    @property
    def description(self) -> str:
        """The first line of the transform's docstring."""
        return (self.function.__doc__ or "").strip().splitlines()[0]

    def options(self, given: dict) -> dict:
        """``given`` merged into the defaults and validated."""
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            allowed = ", ".join(self.defaults) or "none"
            raise ParameterError(
                f"perturbation {self.name!r} has no option(s) {', '.join(unknown)}; "
                f"its options: {allowed}"
            )
        out = dict(self.defaults)
        for k, v in given.items():
            out[k] = self.checks[k](k, v)
        return out


_SAI = "Sai et al. (2021), Perturbation CheckLists; seed paper 001 section 3.4"

PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation("sentence_reorder", sentence_reorder, "coherence", _SAI),
        Perturbation(
            "subject_verb_disagreement",
            subject_verb_disagreement,
            "fluency (grammaticality)",
            _SAI,
            {"n_edits": 1},
            {"n_edits": _positive_int},
        ),
        Perturbation(
            "drop_words",
            drop_words,
            "adequacy and fluency (content and words missing)",
            "seed paper 004 section 4.2 (20% of the words, rounded)",
            {"fraction": 0.2, "rounding": "half_up"},
            {"fraction": _fraction, "rounding": _choice(ROUNDINGS)},
        ),
        Perturbation(
            "word_swap",
            word_swap,
            "fluency (word order)",
            "Sai et al. (2021) word-order perturbations",
            {"n_swaps": 1},
            {"n_swaps": _positive_int},
        ),
        Perturbation(
            "negation_removal",
            negation_removal,
            "consistency (faithfulness to the source: the meaning is inverted)",
            "Sai et al. (2021) negation perturbations",
            random=False,
        ),
        Perturbation(
            "repetition",
            repetition,
            "fluency (non-redundancy)",
            "Sai et al. (2021) repetition perturbations",
            {"unit": "words", "length": 4},
            {"unit": _choice(("words", "sentence")), "length": _positive_int},
        ),
        Perturbation(
            "truncation",
            truncation,
            "relevance and coherence (content cut off, ending incomplete)",
            "Sai et al. (2021) truncation perturbations",
            {"fraction": 0.5, "rounding": "half_up"},
            {"fraction": _fraction, "rounding": _choice(ROUNDINGS)},
            random=False,
        ),
    )
}


def get_perturbation(name: str) -> Perturbation:
    """Look up ``name`` in the registry, with an error listing the choices."""
    try:
        return PERTURBATIONS[name]
    except (KeyError, TypeError):
        raise ParameterError(
            f"perturbation {name!r} is not registered; choose one of {', '.join(PERTURBATIONS)}"
        ) from None


def describe(name: str | None = None) -> Any:
    """A table of the registry: name, degrades, options, random, source, description."""
    import pandas as pd

    rows = [
        {
            "name": p.name,
            "degrades": p.degrades,
            "options": ", ".join(f"{k}={v!r}" for k, v in p.defaults.items()),
            "random": p.random,
            "source": p.source,
            "description": p.description,
        }
        for p in PERTURBATIONS.values()
        if name is None or p.name == name
    ]
    return pd.DataFrame(rows)
