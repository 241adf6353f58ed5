"""BLEURT (Sellam et al. 2020; BLEURT-20: Pu et al. 2021) through ``bleurt-pytorch``.

``bleurt-pytorch`` (Luca Di Liello's PyTorch port of Google's BLEURT checkpoints)
is the only BLEURT on PyPI.  It works with ``transformers<5`` only (it imports
helpers that transformers 5 removed); install recipe: docs/textmetrics.md,
"Installing COMET and BLEURT".  Scoring is the package's documented procedure:
``tokenizer(references, candidates, padding="longest", return_tensors="pt")``,
then ``model(**inputs).logits.flatten()``, in batches and without gradients.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from pathlib import Path

import numpy as np

from ..errors import BackendUnavailableError, ParameterError
from ._base import TextMetric, check_positive_int, folder_fingerprint
from ._comet_model import transformers4_problem

RECIPE = ('the recipe in docs/textmetrics.md, "Installing COMET and BLEURT" (pip install '
          '"metaeval[comet]" && pip install --no-deps bleurt-pytorch==0.0.1)')

# One (tokenizer, model) per model, fingerprint and device, per process.
_MODELS: dict[tuple, tuple] = {}

_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def bleurt_problem() -> str | None:
    """None when bleurt-pytorch can score in this process, else why not (one clause)."""
    return transformers4_problem("bleurt_pytorch", "bleurt-pytorch")


class BLEURT(TextMetric):
    """BLEURT scores of (reference, candidate) pairs from a ``bleurt-pytorch`` model.

    Parameters
    ----------
    model : str or Path
        A local folder written by ``save_pretrained`` (``config.json``, tokenizer
        files, weights) or a model name such as ``"lucadiliello/BLEURT-20"``, which
        transformers resolves through the Hugging Face cache (downloading it when
        absent, unless ``HF_HUB_OFFLINE=1``).
    batch_size : int
        Pairs per forward pass and per work unit (32).
    device : str, optional
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; default: a GPU when torch sees one, else
        the CPU.
    max_length : int, optional
        Longest input in tokens; longer pairs are truncated, the longer text first
        (the tokenizer's ``truncation="longest_first"``).  Default: the model's
        ``max_position_embeddings`` (512 for BLEURT-20), the limit of the checkpoint.
    name : str, optional
        Column name (default ``"bleurt"``).

    Notes
    -----
    BLEURT has no multi-reference score: each reference is scored and
    ``multi_ref`` aggregates.  The score is the regression head's output (BLEURT-20:
    roughly 0-1, higher is better); it is not symmetric in its two texts.
    """

    kind = "bleurt"
    library = "bleurt-pytorch"
    batch_size = 32
    version = 1

    def __init__(self, model, *, batch_size: int | None = None, device: str | None = None,
                 max_length: int | None = None, name: str | None = None):
        super().__init__(name=name, batch_size=batch_size)
        if not isinstance(model, (str, os.PathLike)) or not str(model):
            raise ParameterError(f"model={model!r} must be a local BLEURT folder or a model name "
                                 "such as 'lucadiliello/BLEURT-20'")
        text = str(model)
        path = Path(text).expanduser()
        if path.exists():
            if not (path.is_dir() and (path / "config.json").is_file()):
                raise ParameterError(f"model={text!r} is not a folder with config.json; pass a "
                                     "folder written by save_pretrained()")
            folder = path.resolve()
            self.model = str(folder)
            self._label = f"{folder.name}@{folder_fingerprint(folder)}"
        elif text.startswith(("/", ".", "~")) or not _HUB_NAME.fullmatch(text):
            raise ParameterError(f"model={text!r} does not exist; give an existing model folder "
                                 "or a model name such as 'lucadiliello/BLEURT-20'")
        else:
            self.model = text
            self._label = text
        if device is not None and (not isinstance(device, str)
                                   or not re.fullmatch(r"cpu|cuda(:\d+)?", device)):
            raise ParameterError(f"device={device!r}; give 'cpu', 'cuda' or 'cuda:N' (or None: "
                                 "a GPU when torch sees one)")
        self.device = device
        self.max_length = None if max_length is None else check_positive_int(max_length,
                                                                            "max_length")
        problem = bleurt_problem()
        if problem is not None:
            raise BackendUnavailableError(f"BLEURT is not available: {problem}; install it with "
                                          f"{RECIPE}")

    def options(self):
        out = {"model": self._label}
        if self.max_length is not None:
            out["maxlen"] = self.max_length
        return out

    def _device(self) -> str:
        if self.device is not None:
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def load(self):
        """``(tokenizer, model)``, loaded once per process, in eval mode."""
        device = self._device()
        key = (self.model, self._label, device)
        hit = _MODELS.get(key)
        if hit is None:
            problem = bleurt_problem()
            if problem is not None:
                raise BackendUnavailableError(f"BLEURT is not available: {problem}; install it "
                                              f"with {RECIPE}")
            bleurt = importlib.import_module("bleurt_pytorch")
            tok = bleurt.BleurtTokenizer.from_pretrained(self.model)
            model = bleurt.BleurtForSequenceClassification.from_pretrained(self.model)
            hit = _MODELS[key] = (tok, model.to(device).eval())
        return hit

    def score_batch(self, hypotheses, contexts):
        import torch

        tok, model = self.load()
        limit = self.max_length or model.config.max_position_embeddings
        device = next(model.parameters()).device
        out = []
        for start in range(0, len(hypotheses), self.batch_size):
            refs = list(contexts[start:start + self.batch_size])
            cands = list(hypotheses[start:start + self.batch_size])
            inputs = tok(refs, cands, padding="longest", truncation="longest_first",
                         max_length=limit, return_tensors="pt")
            with torch.no_grad():
                logits = model(**{k: v.to(device) for k, v in inputs.items()}).logits
            out.append(logits.flatten().double().cpu().numpy())
        return np.concatenate(out).reshape(-1, 1)
