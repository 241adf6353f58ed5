"""ROUGE adapter (Lin 2004) over Google's ``rouge-score`` package."""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ._base import TextMetric, check_bool, require

_TYPES = ("rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rouge6", "rouge7", "rouge8",
          "rouge9", "rougeL", "rougeLsum")
_OUTPUTS = {"fmeasure": "f", "precision": "p", "recall": "r"}


class ROUGE(TextMetric):
    """ROUGE-N, ROUGE-L and ROUGE-Lsum from ``rouge_score.rouge_scorer.RougeScorer``.

    One adapter computes several ROUGE types in one pass (each text is
    tokenized and stemmed once per batch), one output column per type and
    output.

    Parameters
    ----------
    types : sequence of str
        ``"rouge1"`` ... ``"rouge9"`` (n-gram overlap), ``"rougeL"`` (longest
        common subsequence over the whole text) and ``"rougeLsum"`` (summary-
        level LCS over the lines of the text: put one sentence per line).
        Default ``("rouge1", "rouge2", "rougeL")``.
    use_stemmer : bool
        Porter-stem tokens longer than 3 characters (rouge-score's
        ``use_stemmer``).  **No default**: pass it.  The registry names
        (``"rouge1"``, ``"rouge"``...) use True, as the ROUGE-1.5.5 ``-m``
        option of most summarization papers; rouge-score's own default is
        False.
    output : str or sequence of str
        ``"fmeasure"`` (default), ``"precision"``, ``"recall"``.
    name : str, optional
        Column name with one type and output; a column prefix otherwise.

    Notes
    -----
    rouge-score lowercases, replaces non-alphanumeric characters by spaces,
    and splits on whitespace (``DefaultTokenizer``).  Scores are in [0, 1].
    Columns are ``<type>`` for the F-measure and ``<type>_p`` / ``<type>_r``
    for precision and recall (prefixed by ``<name>_`` when ``name`` is given
    with several columns).

    With several references, ``multi_ref="native"`` is ``score_multi``: for
    each type, the reference with the highest F-measure gives all three of
    precision, recall and F-measure; the other aggregations take the max,
    min or mean of each column independently (the same as native for the
    F-measure with ``"max"``).
    """

    kind = "rouge"
    library = "rouge-score"
    native_multi_ref = True
    batch_size = 500
    column_only = ("types",)

    def __init__(self, *, types=("rouge1", "rouge2", "rougeL"), use_stemmer: bool,
                 output="fmeasure", name: str | None = None, batch_size: int | None = None):
        super().__init__(name=name, batch_size=batch_size)
        require("rouge_score.rouge_scorer", "rouge-score")
        types = (types,) if isinstance(types, str) else tuple(types)
        bad = [t for t in types if t not in _TYPES]
        if not types or bad:
            raise ParameterError(
                f"types={types!r}: unknown ROUGE type(s) {bad}; choose from {', '.join(_TYPES)}"
            )
        if len(set(types)) != len(types):
            raise ParameterError(f"types={types!r} repeats a type")
        outputs = (output,) if isinstance(output, str) else tuple(output)
        bad = [o for o in outputs if o not in _OUTPUTS]
        if not outputs or bad or len(set(outputs)) != len(outputs):
            raise ParameterError(
                f"output={output!r}; choose one or more of {', '.join(_OUTPUTS)} (no repeats)"
            )
        self.types = types
        self.use_stemmer = check_bool(use_stemmer, "use_stemmer")
        self.outputs = outputs
        self._cols = {}
        for t in types:
            for o in outputs:
                base = t if o == "fmeasure" else f"{t}_{_OUTPUTS[o]}"
                if name is not None:
                    col = name if len(types) * len(outputs) == 1 else f"{name}_{base}"
                else:
                    col = base
                self._cols[col] = (t, o)

    @property
    def name(self) -> str:
        return self._name or (self.types[0] if len(self.types) == 1 else "rouge")

    @property
    def columns(self):
        return tuple(self._cols)

    def column_fields(self, column):
        t, o = self._cols[column]
        return {"type": t, "score": _OUTPUTS[o]}

    def options(self):
        return {"types": "+".join(self.types), "stem": self.use_stemmer, "tok": "default"}

    def _scorer(self):
        from rouge_score import rouge_scorer, tokenizers

        class _MemoTokenizer(tokenizers.Tokenizer):
            """rouge-score's DefaultTokenizer, each distinct text tokenized once."""

            def __init__(self, inner):
                self.inner, self.memo = inner, {}

            def tokenize(self, text):
                hit = self.memo.get(text)
                if hit is None:
                    hit = self.memo[text] = self.inner.tokenize(text)
                return hit

        tok = _MemoTokenizer(tokenizers.DefaultTokenizer(use_stemmer=self.use_stemmer))
        return rouge_scorer.RougeScorer(list(self.types), tokenizer=tok)

    def score_batch(self, hypotheses, contexts):
        scorer = self._scorer()  # one memo per batch: memory stays bounded
        cols = list(self._cols.values())
        out = np.empty((len(hypotheses), len(cols)))
        for j, (hyp, ctx) in enumerate(zip(hypotheses, contexts)):
            if isinstance(ctx, str):
                res = scorer.score(ctx, hyp)  # rouge-score's order: target, prediction
            else:
                res = scorer.score_multi(list(ctx), hyp)
            out[j] = [getattr(res[t], o) for t, o in cols]
        return out
