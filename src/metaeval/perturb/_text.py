"""Light text handling for the perturbations: tokens, words, sentences.

No model, no download: texts are whitespace-separated tokens, and sentences
are found by a regular-expression rule.  Everything here is deterministic.

Tokens
    ``text.split()``: maximal runs of non-whitespace.  Perturbed texts are
    re-joined with single spaces, so their whitespace is normalised (the
    bundled SummEval hypotheses are already tokenized this way, so the parts
    a perturbation does not touch are unchanged byte for byte).
Words
    Tokens that contain at least one letter or digit (``"n't"``, ``"1-0"``,
    ``"Paul"``); pure punctuation tokens (``"."``, ``","``, ``"``"``) are not
    words.  Counts such as "20% of the words" are counts of words.
Sentences
    A sentence ends after a token that ends in ``.``, ``!`` or ``?``
    (optionally followed by closing quotes or brackets) when the next token
    does not start with a lowercase letter or with ``.!?``, unless the token
    is a known abbreviation (``Mr.``, ``Dr.``, ``U.S.``, ``e.g.``, month
    abbreviations, ...; see ``ABBREVIATIONS``) or a single-letter initial
    (``J.``).  So ``"It rained . Then it stopped ."`` has two sentences,
    ``"st. louis"`` and ``"wanted ! ! ! Girlfriend"`` stay whole up to the
    last ``!``, and a text written entirely in lowercase is one sentence.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ..errors import ParameterError

#: Abbreviations (lowercase, without the final period) that do not end a sentence.
ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof st jr sr vs etc inc ltd co corp gen sen rep gov lt col sgt capt
    mt no nos fig figs vol approx dept est rev hon e.g i.e u.s u.k u.n a.m p.m
    jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)

_CLOSERS = "'\"’”)]}"
_END = re.compile(r"[.!?]+[" + re.escape(_CLOSERS) + r"]*$")
_WORD = re.compile(r"[^\W_]")  # a letter or a digit (any script)

ROUNDINGS = ("half_up", "half_even")


def tokens(text: str) -> list[str]:
    """Whitespace tokens of ``text``."""
    return text.split()


def join(toks) -> str:
    """Tokens re-joined with single spaces."""
    return " ".join(toks)


def is_word(token: str) -> bool:
    """True when the token contains a letter or a digit."""
    return _WORD.search(token) is not None


def _ends_sentence(token: str, nxt: str | None) -> bool:
    if nxt is None or not _END.search(token):
        return False
    first = nxt[0]
    if first.islower() or first in ".!?":
        return False
    core = token.rstrip(_CLOSERS)
    if core.endswith(".") and not core.endswith(".."):
        stem = core[:-1].lstrip("'\"‘“([{`").lower()
        if stem in ABBREVIATIONS or (len(stem) == 1 and stem.isalpha()):
            return False
    return True


def sentences(text: str) -> list[list[str]]:
    """The sentences of ``text``, each a list of tokens (see the module docstring).

    >>> [" ".join(s) for s in sentences("It rained . Then Mr. Li left ! ok")]
    ['It rained .', 'Then Mr. Li left ! ok']
    """
    toks = tokens(text)
    out, cur = [], []
    for k, t in enumerate(toks):
        cur.append(t)
        if _ends_sentence(t, toks[k + 1] if k + 1 < len(toks) else None):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def round_count(fraction: float, n: int, rounding: str) -> int:
    """``fraction * n`` rounded to an integer, computed exactly.

    The product is taken on the decimal value of ``fraction`` (``0.1 * 5``
    is exactly 0.5), then rounded half up (``floor(x + 1/2)``, the default)
    or half to even (``round``).  With ``fraction=0.2`` no half arises
    (n / 5 never ends in .5), so both give the same count.
    """
    x = Fraction(str(fraction)) * n
    if rounding == "half_up":
        return math.floor(x + Fraction(1, 2))
    if rounding == "half_even":
        return round(x)
    raise ParameterError(f"rounding={rounding!r}; choose one of {', '.join(ROUNDINGS)}")


def match_case(word: str, model: str) -> str:
    """``word`` with the capitalisation pattern of ``model`` (UPPER, Title, lower)."""
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
