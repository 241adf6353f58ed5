"""METEOR adapter (Banerjee and Lavie 2005) over NLTK's ``meteor_score``."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ._base import TextMetric, check_bool, check_choice, check_number, require
from ._wordnet import wordnet_version

_TOKENIZERS = {
    "whitespace": "str.split()",
    "wordpunct": r"runs of \w and of [^\w\s] (NLTK's wordpunct_tokenize, which needs no data)",
}
_WORDPUNCT = re.compile(r"\w+|[^\w\s]+")

# One loaded WordNet per corpus folder and process (loading takes seconds).
_READERS: dict[str, object] = {}


def _corpus_folder(wordnet):
    """(corpus folder or NLTK path pointer, NLTK data root or None) of ``wordnet=``."""
    if wordnet is None:
        nltk = require("nltk", "nltk")
        try:
            found = nltk.data.find("corpora/wordnet")
        except LookupError:
            raise ParameterError(
                "METEOR needs WordNet, and NLTK finds none in its data path "
                f"({', '.join(map(str, nltk.data.path))}): install it from Debian with "
                "apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index && "
                "python -m metaeval.textmetrics.wordnet (see docs/textmetrics.md), or pass "
                "METEOR(wordnet=<an NLTK data folder holding corpora/wordnet>)"
            ) from None
        return found, None
    root = Path(wordnet).expanduser().resolve()
    folder = root / "corpora" / "wordnet"
    if not (folder / "data.noun").is_file() or not (folder / "lexnames").is_file():
        raise ParameterError(
            f"wordnet={str(wordnet)!r} must be an NLTK data folder holding corpora/wordnet "
            "(data.noun, lexnames, ...); create one with "
            "metaeval.textmetrics.wordnet.install_wordnet(folder)"
        )
    return str(folder), root


def load_wordnet(wordnet=None):
    """NLTK's WordNet corpus reader for ``METEOR(wordnet=...)``, loaded once per process.

    The reader skips NLTK's WordNet-version mapping for the Open Multilingual
    WordNet (``map_wn``), which METEOR does not use and which reads the
    206 000-line ``index.sense`` twice.  A custom folder is added to the front
    of ``nltk.data.path``: NLTK reads corpora only under its data path.
    """
    nltk = require("nltk", "nltk")
    folder, root = _corpus_folder(wordnet)
    if root is not None and str(root) not in map(str, nltk.data.path):
        nltk.data.path.insert(0, str(root))
    reader = _READERS.get(str(folder))
    if reader is None:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        class _WordNetForMETEOR(WordNetCorpusReader):
            def map_wn(self, version="wordnet"):
                return None  # only the multilingual (OMW) functions use the mapping

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The multilingual functions")
            reader = _READERS[str(folder)] = _WordNetForMETEOR(folder, None)
    return reader


class METEOR(TextMetric):
    """METEOR as computed by ``nltk.translate.meteor_score.meteor_score``.

    Exact, Porter-stem and WordNet-synonym matching, with NLTK's
    parameterisation ``Fmean = P R / (alpha P + (1 - alpha) R)`` and the
    fragmentation penalty ``gamma (chunks / matches) ** beta``.  Scores are in
    [0, 1].

    Parameters
    ----------
    alpha, beta, gamma : float
        NLTK's defaults 0.9, 3.0, 0.5.
    tokenize : {"whitespace", "wordpunct"}
        How texts are split into the token lists NLTK expects (NLTK's
        ``word_tokenize`` is not offered: it needs the punkt model).
    lowercase : bool
        NLTK's default ``preprocess=str.lower`` (True) or no preprocessing.
    wordnet : str or Path, optional
        An NLTK data folder holding ``corpora/wordnet`` (as written by
        :func:`metaeval.textmetrics.wordnet.install_wordnet`).  Default: the
        WordNet NLTK finds in its data path.

    Notes
    -----
    NLTK's multi-reference METEOR is the maximum over the references, so
    ``multi_ref="native"`` and ``"max"`` agree.  The signature records the
    WordNet version read from the database header.
    """

    kind = "meteor"
    library = "nltk"
    native_multi_ref = True
    batch_size = 200

    def __init__(self, *, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5,
                 tokenize: str = "whitespace", lowercase: bool = True, wordnet=None,
                 name: str | None = None, batch_size: int | None = None):
        super().__init__(name=name, batch_size=batch_size)
        require("nltk", "nltk")
        self.alpha = check_number(alpha, "alpha")
        self.beta = check_number(beta, "beta")
        self.gamma = check_number(gamma, "gamma")
        self.tokenize = check_choice(tokenize, "tokenize", tuple(_TOKENIZERS))
        self.lowercase = check_bool(lowercase, "lowercase")
        folder, _ = _corpus_folder(wordnet)
        self.wordnet = None if wordnet is None else str(Path(wordnet).expanduser().resolve())
        try:
            self._wn_version = wordnet_version(str(folder))
        except OSError:  # a zipped corpus: NLTK reads it, the header check does not
            self._wn_version = "unknown"

    def options(self):
        out = {"tok": self.tokenize, "case": "lc" if self.lowercase else "mixed",
               "stem": "porter", "wn": self._wn_version}
        if (self.alpha, self.beta, self.gamma) != (0.9, 3.0, 0.5):
            out["params"] = f"{self.alpha:g}:{self.beta:g}:{self.gamma:g}"
        return out

    def _tokens(self, text: str) -> list[str]:
        return text.split() if self.tokenize == "whitespace" else _WORDPUNCT.findall(text)

    def score_batch(self, hypotheses, contexts):
        from nltk.translate.meteor_score import meteor_score

        wn = load_wordnet(self.wordnet)
        pre = str.lower if self.lowercase else (lambda s: s)
        out = np.empty((len(hypotheses), 1))
        for j, (hyp, ctx) in enumerate(zip(hypotheses, contexts)):
            refs = [ctx] if isinstance(ctx, str) else list(ctx)
            out[j, 0] = meteor_score(
                [self._tokens(r) for r in refs], self._tokens(hyp), preprocess=pre,
                wordnet=wn, alpha=self.alpha, beta=self.beta, gamma=self.gamma,
            )
        return out
