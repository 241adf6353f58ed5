"""Speech-recognition error rates over ``jiwer``: WER, MER, WIL, WIP and CER.

Each adapter scores one (hypothesis, reference) pair at a time with
``jiwer.process_words`` (WER, MER, WIL, WIP) or ``jiwer.process_characters``
(CER), so every (system, input) cell gets a *sentence-level* rate.  This is
not what ``jiwer.wer(list_of_references, list_of_hypotheses)`` returns: given
lists, jiwer pools the edit counts of all sentences before dividing (the
corpus rate, ``sum(S + D + I) / sum(N)``), which weights long utterances
more; :meth:`_JiwerMetric.corpus_score` computes that number.

Definitions (Morris et al. 2004, as implemented by jiwer), with H hits, S
substitutions, D deletions, I insertions of a minimum-edit alignment,
N = H + S + D reference words and P = H + S + I hypothesis words:

* WER = (S + D + I) / N (can exceed 1),
* MER = (S + D + I) / (N + I),
* WIP = (H / N) (H / P), WIL = 1 - WIP,
* CER = WER over characters (spaces included, as jiwer's default).

Text normalisation is explicit (:data:`NORMALIZATIONS`) and part of the
signature: ASR outputs differ in case and punctuation conventions (Kaldi
LibriSpeech models output upper case), which are not recognition errors.
"""

from __future__ import annotations

import functools
import unicodedata
import warnings

import numpy as np

from ..errors import EmptyReferenceWarning
from ._base import TextMetric, check_choice, require

#: ``normalize=`` choices of the ASR adapters (applied to both sides before jiwer).
NORMALIZATIONS = {
    "none": "no change: jiwer's own default transform only (strip, collapse runs of spaces, "
            "split on whitespace; case and punctuation count as errors)",
    "lower": "lowercase (str.lower), then jiwer's default transform",
    "lower-punct": "lowercase; delete apostrophes (' and U+2019); replace every other Unicode "
                   "punctuation character (categories Pc, Pd, Pe, Pf, Pi, Po, Ps) by a space; "
                   "collapse whitespace; then jiwer's default transform",
}


class _PunctuationTable(dict):
    """``str.translate`` table of "lower-punct": apostrophes deleted, other punctuation to space.

    Filled lazily (one ``unicodedata`` lookup per distinct character).
    """

    def __missing__(self, code: int):
        ch = chr(code)
        if ch in ("'", "\u2019"):
            value = None
        elif unicodedata.category(ch).startswith("P"):
            value = " "
        else:
            value = code
        self[code] = value
        return value


_PUNCT = _PunctuationTable()



def normalize_transcript(text: str, normalize: str) -> str:
    """Apply one of the :data:`NORMALIZATIONS` to a transcript.

    Parameters
    ----------
    text : str
        A reference or hypothesis.
    normalize : {"none", "lower", "lower-punct"}
        The normalisation.

    Returns
    -------
    str
        ``"none"`` returns ``text`` unchanged; ``"lower-punct"`` returns
        single-spaced words without leading or trailing space.

    Examples
    --------
    >>> from metaeval.textmetrics import normalize_transcript
    >>> normalize_transcript("DIDN'T the Super-Imposition  work?", "lower-punct")
    'didnt the super imposition work'
    >>> normalize_transcript("B._C. <UNK>", "lower-punct")
    'b c <unk>'
    """
    if normalize == "none":
        return text
    if normalize == "lower":
        return text.lower()
    if normalize == "lower-punct":
        return _lower_punct(text)
    check_choice(normalize, "normalize", tuple(NORMALIZATIONS))
    raise AssertionError("unreachable")  # pragma: no cover


@functools.lru_cache(maxsize=1 << 17)
def _lower_punct(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCT).split())


@functools.lru_cache(maxsize=1 << 16)
def _word_measures(reference: str, hypothesis: str) -> tuple[float, float, float, float]:
    """``(wer, mer, wil, wip)`` of one pair from ``jiwer.process_words`` (NaN: empty reference).

    Memoised, so the four word measures of a pair cost one alignment.
    """
    import jiwer

    out = jiwer.process_words(reference, hypothesis)
    if out.hits + out.substitutions + out.deletions == 0:  # no reference word
        return (np.nan, np.nan, np.nan, np.nan)
    return (float(out.wer), float(out.mer), float(out.wil), float(out.wip))


def _char_error_rate(reference: str, hypothesis: str) -> float:
    import jiwer

    out = jiwer.process_characters(reference, hypothesis)
    if out.hits + out.substitutions + out.deletions == 0:  # no reference character
        return np.nan
    return float(out.cer)


class _JiwerMetric(TextMetric):
    """Shared part of the jiwer adapters (one output column each)."""

    library = "jiwer"
    higher_is_better = False
    native_multi_ref = False
    batch_size = 2000
    _measure = ""  # "wer", "mer", "wil", "wip" or "cer"

    def __init__(self, *, normalize: str, name: str | None = None,
                 batch_size: int | None = None):
        super().__init__(name=name, batch_size=batch_size)
        require("jiwer", "jiwer")
        self.normalize = check_choice(normalize, "normalize", tuple(NORMALIZATIONS))

    def options(self) -> dict:
        return {"norm": self.normalize}

    def _pair(self, reference: str, hypothesis: str) -> float:
        ref = normalize_transcript(reference, self.normalize)
        hyp = normalize_transcript(hypothesis, self.normalize)
        if self._measure == "cer":
            return _char_error_rate(ref, hyp)
        k = ("wer", "mer", "wil", "wip").index(self._measure)
        return _word_measures(ref, hyp)[k]

    def score_batch(self, hypotheses, contexts):
        out = np.empty((len(hypotheses), 1))
        for j, (hyp, ref) in enumerate(zip(hypotheses, contexts)):
            out[j, 0] = self._pair(ref, hyp)
        n_empty = int(np.isnan(out).sum())
        if n_empty:
            warnings.warn(
                f"{self.kind}: {n_empty} reference(s) are empty after normalize="
                f"{self.normalize!r}; their scores are NaN (an error rate over zero reference "
                "words is undefined)",
                EmptyReferenceWarning,
                stacklevel=2,
            )
        return out

    def corpus_score(self, hypotheses: list[str], references: list) -> float:
        """jiwer's pooled (corpus) rate over several pairs.

        ``jiwer.process_words(references, hypotheses)`` (or
        ``process_characters``) on the lists: edit and word counts are summed
        over the pairs before dividing, so this is *not* the mean of the
        sentence scores.  ``references[j]`` is a str (or a one-element
        sequence).  The same normalisation as the sentence scores is applied.
        Pairs whose reference is empty after normalisation are left out.

        Examples
        --------
        >>> from metaeval.textmetrics import WER
        >>> wer = WER(normalize="lower-punct")
        >>> refs = ["the cat sat on the mat", "hello world"]
        >>> hyps = ["the cat sit on the mat", "hello big world"]
        >>> wer.corpus_score(hyps, refs), float(wer(hyps, refs).mean())
        (0.25, 0.3333333333333333)
        """
        import jiwer

        pairs = []
        for hyp, ref in zip(hypotheses, references, strict=True):
            if not isinstance(ref, str):
                refs = list(ref)
                if len(refs) != 1:
                    raise ValueError(
                        f"corpus_score takes one reference per hypothesis, got {len(refs)}"
                    )
                ref = refs[0]
            r = normalize_transcript(ref, self.normalize)
            if r.split():
                pairs.append((normalize_transcript(hyp, self.normalize), r))
        if not pairs:
            return float("nan")
        hyps, refs = [p[0] for p in pairs], [p[1] for p in pairs]
        if self._measure == "cer":
            return float(jiwer.process_characters(refs, hyps).cer)
        return float(getattr(jiwer.process_words(refs, hyps), self._measure))

    def corpus_options(self) -> dict:
        """The options of :meth:`corpus_score`, for its signature."""
        return self.options()


_DOC = """{title} of one hypothesis against one reference, from jiwer.

    {formula}  {direction}

    Parameters
    ----------
    normalize : {{"none", "lower", "lower-punct"}}
        Text normalisation of both sides before jiwer (see
        :data:`NORMALIZATIONS`).  **No default** on the class: pass it.  The
        registry name (``"{kind}"``) uses ``"lower-punct"``.
    name : str, optional
        Column name (default ``"{kind}"``).
    batch_size : int, optional
        Pairs per work unit (2000).

    Notes
    -----
    A reference that is empty after normalisation gives NaN with an
    :class:`EmptyReferenceWarning` (jiwer itself returns the number of
    inserted words for WER/CER, and 0/1 conventions for the others).  An
    empty hypothesis against a non-empty reference is defined: every
    reference word is deleted (WER = MER = WIL = CER = 1, WIP = 0).
    ASR has one reference per utterance; with several, the engine's
    ``multi_ref`` rules apply (``"best"`` is the {best} over references).
"""


class WER(_JiwerMetric):
    kind = "wer"
    _measure = "wer"
    __doc__ = _DOC.format(title="Word error rate", kind="wer", best="minimum",
                          formula="WER = (S + D + I) / N, in [0, inf).",
                          direction="Lower is better.")


class MER(_JiwerMetric):
    kind = "mer"
    _measure = "mer"
    __doc__ = _DOC.format(title="Match error rate", kind="mer", best="minimum",
                          formula="MER = (S + D + I) / (H + S + D + I), in [0, 1].",
                          direction="Lower is better.")


class WIL(_JiwerMetric):
    kind = "wil"
    _measure = "wil"
    __doc__ = _DOC.format(title="Word information lost", kind="wil", best="minimum",
                          formula="WIL = 1 - (H / N) (H / P), in [0, 1].",
                          direction="Lower is better.")


class WIP(_JiwerMetric):
    kind = "wip"
    _measure = "wip"
    higher_is_better = True
    __doc__ = _DOC.format(title="Word information preserved", kind="wip", best="maximum",
                          formula="WIP = (H / N) (H / P), in [0, 1].",
                          direction="**Higher** is better (the only one of the five).")


class CER(_JiwerMetric):
    kind = "cer"
    _measure = "cer"
    __doc__ = _DOC.format(title="Character error rate", kind="cer", best="minimum",
                          formula="CER = (S + D + I) / N over characters, spaces included "
                                  "(jiwer's ``cer_default``), in [0, inf).",
                          direction="Lower is better.")


#: The ASR adapters by registry name.
ASR_METRICS = {"wer": WER, "mer": MER, "wil": WIL, "wip": WIP, "cer": CER}
