"""sacreBLEU adapters: sentence BLEU, chrF, chrF++ and TER (Post 2018).

Every adapter calls ``sentence_score(hypothesis, references)`` of the
sacreBLEU metric object, so each (system, input) cell gets a *sentence-level*
score on sacreBLEU's 0-100 scale.  This is not sacreBLEU's corpus score:
``corpus_score`` sums the sufficient statistics (n-gram matches, lengths,
edits) of every segment before computing one number, so a corpus BLEU is not
the mean of sentence BLEUs.  :func:`metaeval.textmetrics.corpus_scores` gives
the corpus score per system when that is the number wanted.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ._base import TextMetric, check_bool, check_choice, check_positive_int, require

# Tokenizers that fetch a model from the network on first use.
_DOWNLOADING_TOKENIZERS = ("flores101", "flores200", "spm", "spBLEU-1K")


class _SacreBLEUMetric(TextMetric):
    library = "sacrebleu"
    native_multi_ref = True
    batch_size = 500
    _transient = ("_metric",)

    def _make(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _metric_object(self):
        if self._metric is None:
            self._metric = self._make()
        return self._metric

    def score_batch(self, hypotheses, contexts):
        metric = self._metric_object()
        out = np.empty((len(hypotheses), 1))
        for j, (hyp, ctx) in enumerate(zip(hypotheses, contexts)):
            refs = [ctx] if isinstance(ctx, str) else list(ctx)
            out[j, 0] = metric.sentence_score(hyp, refs).score
        return out

    def corpus_score(self, hypotheses: list[str], references: list[tuple[str, ...]]) -> float:
        """sacreBLEU's corpus score of one system (statistics summed over segments).

        ``references[j]`` holds the references of segment ``j``; sacreBLEU
        wants reference *streams*, so segment lists are transposed and a
        segment with fewer references is padded with ``None`` (sacreBLEU skips
        those).
        """
        k = max(len(r) for r in references)
        streams = [[r[i] if i < len(r) else None for r in references] for i in range(k)]
        return float(self._make_corpus().corpus_score(list(hypotheses), streams).score)

    def _make_corpus(self):
        return self._make()

    def corpus_options(self) -> dict:
        """The options of :meth:`corpus_score`, for its signature."""
        return self.options()


class BLEU(_SacreBLEUMetric):
    """Sentence BLEU (Papineni et al. 2002) as computed by sacreBLEU.

    Parameters
    ----------
    tokenize : str
        sacreBLEU tokenizer: ``"13a"`` (default, the WMT standard), ``"intl"``,
        ``"char"``, ``"zh"``, ``"none"``...  ``"flores101"``, ``"flores200"``
        and ``"spm"`` are refused because they download a model.
    lowercase : bool
        Lowercase both sides (``case:lc`` in the signature).
    smooth_method : {"exp", "floor", "add-k", "none"}
        sacreBLEU smoothing; ``"exp"`` (default) is Chen and Cherry's (2014)
        method 3, sacreBLEU's default.
    smooth_value : float, optional
        For ``"floor"`` (default 0.1) and ``"add-k"`` (default 1).
    max_ngram_order : int
        Highest n-gram order (4).
    effective_order : bool
        Ignore n-gram orders with no possible match (True, as sacreBLEU's
        ``sentence_bleu`` and its recommendation for sentence-level BLEU);
        False reproduces ``BLEU().sentence_score``, which sacreBLEU warns about.

    Notes
    -----
    ``multi_ref="native"`` is sacreBLEU's multi-reference sentence BLEU: n-gram
    counts are clipped by their maximum count in any reference and the
    brevity penalty uses the reference length closest to the hypothesis, so
    it is usually higher than the best single-reference BLEU (``"max"``).
    """

    kind = "bleu"

    def __init__(self, *, tokenize: str = "13a", lowercase: bool = False,
                 smooth_method: str = "exp", smooth_value: float | None = None,
                 max_ngram_order: int = 4, effective_order: bool = True,
                 name: str | None = None, batch_size: int | None = None):
        super().__init__(name=name, batch_size=batch_size)
        require("sacrebleu", "sacrebleu")
        from sacrebleu.metrics.bleu import BLEU as _B

        allowed = tuple(t for t in _B.TOKENIZERS if t not in _DOWNLOADING_TOKENIZERS)
        if tokenize in _DOWNLOADING_TOKENIZERS:
            raise ParameterError(
                f"tokenize={tokenize!r} downloads a SentencePiece model at first use, which "
                f"metaeval does not do; choose one of {', '.join(map(repr, allowed))}"
            )
        self.tokenize = check_choice(tokenize, "tokenize", allowed)
        self.lowercase = check_bool(lowercase, "lowercase")
        self.smooth_method = check_choice(smooth_method, "smooth_method", tuple(_B.SMOOTH_DEFAULTS))
        if smooth_value is not None and (isinstance(smooth_value, bool) or not isinstance(smooth_value, (int, float))):
            raise ParameterError(f"smooth_value={smooth_value!r} must be a number or None")
        self.smooth_value = smooth_value
        self.max_ngram_order = check_positive_int(max_ngram_order, "max_ngram_order")
        self.effective_order = check_bool(effective_order, "effective_order")

    def options(self):
        smooth = self.smooth_method
        if self.smooth_value is not None:
            smooth = f"{smooth}[{self.smooth_value:.2f}]"
        out = {
            "case": "lc" if self.lowercase else "mixed",
            "eff": self.effective_order,
            "tok": self.tokenize,
            "smooth": smooth,
        }
        if self.max_ngram_order != 4:
            out["order"] = self.max_ngram_order
        return out

    def _make(self):
        from sacrebleu.metrics import BLEU as _B

        return _B(lowercase=self.lowercase, tokenize=self.tokenize,
                  smooth_method=self.smooth_method, smooth_value=self.smooth_value,
                  max_ngram_order=self.max_ngram_order, effective_order=self.effective_order)

    def _make_corpus(self):
        # sacreBLEU's corpus BLEU (its command line and corpus_bleu) uses no effective order.
        from sacrebleu.metrics import BLEU as _B

        return _B(lowercase=self.lowercase, tokenize=self.tokenize,
                  smooth_method=self.smooth_method, smooth_value=self.smooth_value,
                  max_ngram_order=self.max_ngram_order, effective_order=False)

    def corpus_options(self):
        return {**self.options(), "eff": False}

    def score_batch(self, hypotheses, contexts):
        if self.effective_order:
            return super().score_batch(hypotheses, contexts)
        import logging

        logger = logging.getLogger("sacrebleu")
        level = logger.level
        logger.setLevel(logging.ERROR)  # the recommendation is documented; do not repeat it
        try:
            return super().score_batch(hypotheses, contexts)
        finally:
            logger.setLevel(level)


class CHRF(_SacreBLEUMetric):
    """chrF (Popović 2015) and chrF++ (Popović 2017) as computed by sacreBLEU.

    Parameters
    ----------
    char_order : int
        Character n-gram order (6).
    word_order : int
        Word n-gram order: 0 for chrF (default), 2 for chrF++ (registry name
        ``"chrf++"``).
    beta : int
        Recall weight of the F-score (2).
    lowercase, whitespace : bool
        Lowercase; keep whitespace in character n-grams (both False).
    eps_smoothing : bool
        sacreBLEU's epsilon smoothing of the official chrF++.py (False: the
        effective-order behaviour of sacreBLEU >= 2.0).

    Notes
    -----
    With several references (``multi_ref="native"``) sacreBLEU keeps the
    statistics of the reference with the best F-score, so ``"native"`` and
    ``"max"`` give the same sentence score.
    """

    kind = "chrf"

    def __init__(self, *, char_order: int = 6, word_order: int = 0, beta: int = 2,
                 lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False, name: str | None = None,
                 batch_size: int | None = None):
        super().__init__(name=name, batch_size=batch_size)
        require("sacrebleu", "sacrebleu")
        self.char_order = check_positive_int(char_order, "char_order")
        if isinstance(word_order, bool) or not isinstance(word_order, int) or word_order < 0:
            raise ParameterError(f"word_order={word_order!r} must be an int >= 0 (2 for chrF++)")
        self.word_order = word_order
        self.beta = check_positive_int(beta, "beta")
        self.lowercase = check_bool(lowercase, "lowercase")
        self.whitespace = check_bool(whitespace, "whitespace")
        self.eps_smoothing = check_bool(eps_smoothing, "eps_smoothing")

    @property
    def kind_label(self) -> str:
        return "chrf++" if self.word_order == 2 else "chrf"

    @property
    def name(self) -> str:
        return self._name or self.kind_label

    def options(self):
        out = {
            "case": "lc" if self.lowercase else "mixed",
            "eff": not self.eps_smoothing,
            "nc": self.char_order,
            "nw": self.word_order,
            "space": self.whitespace,
        }
        if self.beta != 2:
            out["beta"] = self.beta
        return out

    def _make(self):
        from sacrebleu.metrics import CHRF as _C

        return _C(char_order=self.char_order, word_order=self.word_order, beta=self.beta,
                  lowercase=self.lowercase, whitespace=self.whitespace,
                  eps_smoothing=self.eps_smoothing)


class TER(_SacreBLEUMetric):
    """Translation Edit Rate (Snover et al. 2006) as computed by sacreBLEU.

    Lower is better, so ``multi_ref="best"`` takes the minimum over the
    references.  Scores are edits per 100 reference words and can exceed 100.

    Parameters
    ----------
    case_sensitive : bool
        False (default, sacreBLEU's) lowercases both sides (``case:lc``).
    normalized, no_punct, asian_support : bool
        sacreBLEU's tercom options (all False).

    Notes
    -----
    With several references (``multi_ref="native"``) sacreBLEU divides the
    fewest edits over the references by the *average* reference length, which
    differs from the best single-reference TER (``"min"``).
    """

    kind = "ter"
    higher_is_better = False
    batch_size = 200

    def __init__(self, *, case_sensitive: bool = False, normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False,
                 name: str | None = None, batch_size: int | None = None):
        super().__init__(name=name, batch_size=batch_size)
        require("sacrebleu", "sacrebleu")
        self.case_sensitive = check_bool(case_sensitive, "case_sensitive")
        self.normalized = check_bool(normalized, "normalized")
        self.no_punct = check_bool(no_punct, "no_punct")
        self.asian_support = check_bool(asian_support, "asian_support")

    def options(self):
        return {
            "case": "mixed" if self.case_sensitive else "lc",
            "tok": "tercom",
            "norm": self.normalized,
            "punct": not self.no_punct,
            "asian": self.asian_support,
        }

    def _make(self):
        from sacrebleu.metrics import TER as _T

        return _T(normalized=self.normalized, no_punct=self.no_punct,
                  asian_support=self.asian_support, case_sensitive=self.case_sensitive)
