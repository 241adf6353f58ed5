"""MetricX-23 and MetricX-24 (Juraska et al. 2023, 2024) over transformers' mT5 classes.

MetricX has no PyPI package; its public code (github.com/google-research/metricx,
commit fc4978e) defines ``MT5ForRegression`` (``metricx24/models.py``,
``metricx23/models.py``): the parameters of an mT5 encoder-decoder (``shared``,
``encoder``, ``decoder``, ``lm_head``) and a forward pass that runs the decoder for
one step from token 0 and reads the logit of token 250089 (``<extra_id_10>``),
clipped to [0, 25].  Those are the parameter names of transformers'
``MT5ForConditionalGeneration``, so a MetricX checkpoint loads into that class, and
the score is ``logits[:, 0, 250089].clamp(0, 25)`` of one decoder step with
``decoder_input_ids = 0``.  Checked under transformers 4.57 (the checkpoint's
``tie_word_embeddings: false`` keeps ``lm_head`` apart and leaves the decoder output
unscaled) and 5.24 (which ties mT5's ``lm_head`` to the embeddings by default but
keeps a checkpoint's distinct ``lm_head``, and never scales): the two give the same
scores to 1e-7 on a checkpoint with MetricX's layout.

The input text is MetricX's (``metricx24/predict.py``, ``metricx23/predict.py``):
MetricX-24 ``"source: {src} candidate: {hyp} reference: {ref}"`` (without the
reference for QE), MetricX-23 ``"candidate: {hyp} reference: {ref}"`` (QE:
``"candidate: {hyp} source: {src}"``), tokenized with the mT5 tokenizer, truncated to
``max_length`` tokens, with the final EOS token removed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ._base import (
    TextMetric,
    check_bool,
    check_choice,
    check_positive_int,
    folder_fingerprint,
    require,
)

#: The vocabulary index MetricX reads its score from (``<extra_id_10>``).
SCORE_TOKEN = 250089
#: MetricX's own ``--max_input_length`` in its README commands.
MAX_LENGTH = {"24": 1536, "23": 1024}

_MODELS: dict[tuple, tuple] = {}
_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def _model_ref(value, what):
    """``(argument for from_pretrained, signature label)`` of a local folder or a name."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise ParameterError(f"{what}={value!r} must be a local folder or a model name")
    text = str(value)
    path = Path(text).expanduser()
    if path.exists():
        if not (path.is_dir() and (path / "config.json").is_file()
                or what == "tokenizer" and path.is_dir()):
            raise ParameterError(f"{what}={text!r} is not a folder written by save_pretrained()")
        folder = path.resolve()
        return str(folder), f"{folder.name}@{folder_fingerprint(folder)}"
    if text.startswith(("/", ".", "~")) or not _HUB_NAME.fullmatch(text):
        raise ParameterError(f"{what}={text!r} does not exist; give an existing folder or a model "
                             "name such as 'google/metricx-24-hybrid-large-v2p6'")
    return text, text


class MetricX(TextMetric):
    """MetricX-24 or MetricX-23 error scores (0-25, **lower is better**).

    Parameters
    ----------
    model : str or Path
        A MetricX checkpoint: a local folder (``config.json`` and weights) or a name
        such as ``"google/metricx-24-hybrid-large-v2p6"`` (resolved by transformers
        through the Hugging Face cache, downloading it when absent unless
        ``HF_HUB_OFFLINE=1``).
    tokenizer : str or Path, optional
        The mT5 tokenizer of the model's size, as MetricX's ``--tokenizer``
        (``"google/mt5-large"``, ``"google/mt5-xl"``, ``"google/mt5-xxl"``) or a local
        folder.  Default: the model's own folder or name (MetricX's published checkpoints
        ship no tokenizer: give it, or save it beside the weights).
    version : {"24", "23"}
        The input format (MetricX-24: source, candidate and reference in one input;
        MetricX-23: candidate and reference, or candidate and source for QE).
    reference_free : bool
        Score without the reference (MetricX-24-Hybrid in QE mode, or a MetricX-23-QE
        checkpoint).
    max_length : int, optional
        Input tokens kept (default 1536 for MetricX-24, 1024 for MetricX-23, MetricX's own).
    batch_size : int
        Inputs per forward pass (8; padded on the right and masked, which gives MetricX's
        batch-1 scores to rounding).
    device : str, optional
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; default a GPU when torch sees one.
    dtype : {"auto", "float32", "bfloat16"}
        Weights' dtype; ``"auto"`` (MetricX's ``torch_dtype="auto"``) keeps the
        checkpoint's (bfloat16 for the ``-bfloat16`` checkpoints).
    name : str, optional
        Column name (default ``"metricx"``).
    """

    kind = "metricx"
    library = "transformers"
    higher_is_better = False
    batch_size = 8
    version = 1

    def __init__(self, model, *, tokenizer=None, version: str = "24", reference_free: bool = False,
                 max_length: int | None = None, batch_size: int | None = None,
                 device: str | None = None, dtype: str = "auto", name: str | None = None):
        super().__init__(name=name, batch_size=batch_size)
        self.model, self._label = _model_ref(model, "model")
        if tokenizer is None:
            self.tokenizer, self._tok_label = self.model, "model"
        else:
            self.tokenizer, self._tok_label = _model_ref(tokenizer, "tokenizer")
        self.metricx_version = check_choice(str(version), "version", tuple(MAX_LENGTH))
        self.reference_free = check_bool(reference_free, "reference_free")
        self.max_length = (MAX_LENGTH[self.metricx_version] if max_length is None
                           else check_positive_int(max_length, "max_length"))
        if device is not None and (not isinstance(device, str)
                                   or not re.fullmatch(r"cpu|cuda(:\d+)?", device)):
            raise ParameterError(f"device={device!r}; give 'cpu', 'cuda' or 'cuda:N' (or None: "
                                 "a GPU when torch sees one)")
        self.device = device
        self.dtype = check_choice(dtype, "dtype", ("auto", "float32", "bfloat16"))

    @property
    def uses(self) -> str:
        if self.reference_free:
            return "source"
        return "source+references" if self.metricx_version == "24" else "references"

    def options(self):
        return {"model": self._label, "tok": self._tok_label, "v": self.metricx_version,
                "qe": "yes" if self.reference_free else "no", "maxlen": self.max_length,
                "dtype": self.dtype}

    def input_text(self, hypothesis: str, context) -> str:
        """MetricX's input string for one item (``metricx2x/predict.py``, ``_make_input``)."""
        if self.metricx_version == "24":
            if self.reference_free:
                return f"source: {context} candidate: {hypothesis}"
            source, reference = context
            return f"source: {source} candidate: {hypothesis} reference: {reference}"
        if self.reference_free:
            return f"candidate: {hypothesis} source: {context}"
        return f"candidate: {hypothesis} reference: {context}"

    def load(self):
        """``(tokenizer, model)``, once per process, in eval mode."""
        torch = require("torch", "torch")
        transformers = require("transformers", "transformers")
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        key = (self.model, self._label, self.tokenizer, self._tok_label, self.dtype, device)
        hit = _MODELS.get(key)
        if hit is None:
            dtype = {"auto": "auto", "float32": torch.float32, "bfloat16": torch.bfloat16}[self.dtype]
            major = int(transformers.__version__.split(".")[0])
            kw = {"dtype": dtype} if major >= 5 else {"torch_dtype": dtype}
            verbosity = transformers.logging.get_verbosity()
            transformers.logging.set_verbosity_error()  # transformers 5's note on the untied lm_head
            try:
                tok = transformers.AutoTokenizer.from_pretrained(self.tokenizer)
                model = transformers.MT5ForConditionalGeneration.from_pretrained(self.model, **kw)
            finally:
                transformers.logging.set_verbosity(verbosity)
            if model.config.vocab_size <= SCORE_TOKEN:
                raise ParameterError(
                    f"model={self.model!r} has {model.config.vocab_size} output tokens; a MetricX "
                    f"checkpoint reads token {SCORE_TOKEN} (mT5's vocabulary)")
            hit = _MODELS[key] = (tok, model.to(device).eval())
        return hit

    def score_batch(self, hypotheses, contexts):
        import torch

        tok, model = self.load()
        device = next(model.parameters()).device
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        out = []
        for start in range(0, len(hypotheses), self.batch_size):
            texts = [self.input_text(h, c) for h, c in
                     zip(hypotheses[start:start + self.batch_size],
                         contexts[start:start + self.batch_size])]
            # MetricX: tokenize with truncation, then drop the final EOS token
            ids = [row[:-1] for row in tok(texts, max_length=self.max_length,
                                           truncation=True)["input_ids"]]
            width = max(len(r) for r in ids)
            input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
            mask = torch.zeros((len(ids), width), dtype=torch.long)
            for j, row in enumerate(ids):
                input_ids[j, :len(row)] = torch.tensor(row, dtype=torch.long)
                mask[j, :len(row)] = 1
            start_ids = torch.zeros((len(ids), 1), dtype=torch.long, device=device)
            with torch.no_grad():
                logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device),
                               decoder_input_ids=start_ids).logits
            out.append(logits[:, 0, SCORE_TOKEN].clamp(0, 25).double().cpu().numpy())
        return np.concatenate(out).reshape(-1, 1)
