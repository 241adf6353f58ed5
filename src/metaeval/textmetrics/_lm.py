"""Reference-free (and reference-based) scores from language-model likelihoods.

:class:`GPTScore` (Fu et al. 2023) and :class:`BARTScore` (Yuan et al. 2021)
score a hypothesis by its log-likelihood under a pretrained model, conditioned
on the source (reference-free) or on a reference.  Both are model-agnostic
re-implementations over ``transformers``: they take any causal LM
(``AutoModelForCausalLM``) or sequence-to-sequence LM
(``AutoModelForSeq2SeqLM``) saved in a local folder, and never download one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ._base import (
    TextMetric,
    check_choice,
    check_positive_int,
    folder_fingerprint,
    local_model_dir,
    require,
    texts_fingerprint,
)

# One (tokenizer, model) per folder, class and device, per process.
_MODELS: dict[tuple, tuple] = {}


def load_model(folder: str, kind: str, device: str):
    """``(tokenizer, model)`` from a local folder, in eval mode, cached per process."""
    key = (folder, folder_fingerprint(Path(folder)), kind, device)
    hit = _MODELS.get(key)
    if hit is None:
        require("torch", "torch")
        transformers = require("transformers", "transformers")
        auto = {"causal": transformers.AutoModelForCausalLM,
                "seq2seq": transformers.AutoModelForSeq2SeqLM}[kind]
        tok = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = auto.from_pretrained(folder, local_files_only=True).to(device).eval()
        hit = _MODELS[key] = (tok, model)
    return hit


def _max_positions(tok, model, given):
    if given is not None:
        return given
    cfg = model.config
    for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
        value = getattr(cfg, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    value = getattr(tok, "model_max_length", None)
    return value if isinstance(value, int) and 0 < value < 1_000_000 else 1024


def _token_logprobs(logits, targets, mask):
    """Per-sequence sum and count of ``log p(target)`` where ``mask``."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    safe = targets.clamp(min=0)
    picked = logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    picked = torch.where(mask, picked, torch.zeros_like(picked))
    return picked.sum(dim=1).double().cpu().numpy(), mask.sum(dim=1).cpu().numpy()


class _LMScore(TextMetric):
    library = "transformers"
    batch_size = 8
    _transient = ()

    def _common_init(self, model, device, max_length, reduction):
        self.model = str(local_model_dir(model))
        self._fingerprint = folder_fingerprint(Path(self.model))
        if not isinstance(device, str):
            raise ParameterError(f"device={device!r} must be a str such as 'cpu' or 'cuda:0'")
        self.device = device
        self.max_length = None if max_length is None else check_positive_int(max_length, "max_length")
        self.reduction = check_choice(reduction, "reduction", ("mean", "sum"))

    def _model_options(self):
        out = {"model": f"{Path(self.model).name}@{self._fingerprint}", "red": self.reduction}
        if self.max_length is not None:
            out["maxlen"] = self.max_length
        return out

    def _reduce(self, total, count):
        with np.errstate(invalid="ignore", divide="ignore"):
            value = total / count if self.reduction == "mean" else total
        return np.where(count > 0, value, np.nan)


class GPTScore(_LMScore):
    """GPTScore-style conditional log-likelihood under a causal language model.

    ``score(h | c) = 1/|h| sum_t log p(h_t | T(c), h_<t)`` (Fu et al. 2023,
    Eq. 3 with uniform token weights; ``reduction="sum"`` drops the 1/|h|),
    where ``T(c)`` is ``template`` filled with the context ``c`` (the source,
    or a reference) and the hypothesis tokens follow the prompt tokens.

    Parameters
    ----------
    model : str or Path
        A local folder holding a causal LM (``AutoModelForCausalLM``) and its
        tokenizer.
    condition : {"source", "reference"}
        What the hypothesis is conditioned on: the source (reference-free,
        default) or each reference (aggregated with ``multi_ref``).
    template : str
        The prompt; ``{context}`` is replaced by the context.  Default
        ``"{context}\\n"``.  GPTScore's instruction prompts (e.g.
        ``"Generate a fluent summary for the following text: {context}\\nTl;dr "``)
        go here.
    reduction : {"mean", "sum"}
        Mean (default) or sum of the hypothesis token log-probabilities.
    max_length : int, optional
        Longest input in tokens (default: the model's position limit).  The
        prompt is cut from the left so that the hypothesis is kept whole; a
        hypothesis longer than the limit is cut from the right.
    batch_size : int
        Sequences per forward pass and per work unit (8).
    device : str
        Torch device (``"cpu"``).

    Notes
    -----
    The prompt is tokenized with the tokenizer's special tokens (a BOS for
    tokenizers that add one) and the hypothesis without; when the prompt has
    no token at all the first hypothesis token is conditioned on the BOS (or
    EOS) token.  An empty hypothesis scores NaN.  Scores are log-probabilities
    (<= 0, higher is better).
    """

    kind = "gptscore"

    def __init__(self, model, *, condition: str = "source", template: str = "{context}\n",
                 reduction: str = "mean", max_length: int | None = None,
                 batch_size: int | None = None, device: str = "cpu", name: str | None = None):
        super().__init__(name=name, batch_size=batch_size)
        self._common_init(model, device, max_length, reduction)
        self.condition = check_choice(condition, "condition", ("source", "reference"))
        if not isinstance(template, str):
            raise ParameterError(f"template={template!r} must be a str with a {{context}} field")
        try:
            template.format(context="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ParameterError(
                f"template={template!r} is not a valid format string with the one field "
                f"{{context}} ({type(exc).__name__}: {exc}); double literal braces"
            ) from None
        self.template = template

    @property
    def uses(self):
        return "source" if self.condition == "source" else "references"

    def options(self):
        return {"cond": self.condition, "prompt": texts_fingerprint([self.template]),
                **self._model_options()}

    def score_batch(self, hypotheses, contexts):
        import torch

        tok, model = load_model(self.model, "causal", self.device)
        limit = _max_positions(tok, model, self.max_length)
        start_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        seqs, starts = [], []
        for hyp, ctx in zip(hypotheses, contexts):
            p_ids = list(tok(self.template.format(context=ctx), add_special_tokens=True)["input_ids"])
            h_ids = list(tok(hyp, add_special_tokens=False)["input_ids"])[: limit - 1]
            if not p_ids:
                if start_id is None:
                    raise ParameterError(
                        "the prompt is empty and the tokenizer has no BOS or EOS token to "
                        "condition the first hypothesis token on; use a non-empty template"
                    )
                p_ids = [start_id]
            p_ids = p_ids[len(p_ids) - (limit - len(h_ids)):] if len(p_ids) + len(h_ids) > limit else p_ids
            seqs.append(p_ids + h_ids)
            starts.append(len(p_ids))
        width = max(len(s) for s in seqs)
        pad = tok.pad_token_id if tok.pad_token_id is not None else (start_id or 0)
        ids = torch.full((len(seqs), width), pad, dtype=torch.long)
        attn = torch.zeros((len(seqs), width), dtype=torch.long)
        target_mask = torch.zeros((len(seqs), width - 1), dtype=torch.bool)
        for j, (s, st) in enumerate(zip(seqs, starts)):
            ids[j, : len(s)] = torch.tensor(s)
            attn[j, : len(s)] = 1
            target_mask[j, st - 1 : len(s) - 1] = True  # logits at t-1 predict token t
        with torch.inference_mode():
            logits = model(input_ids=ids.to(self.device), attention_mask=attn.to(self.device)).logits
        total, count = _token_logprobs(logits[:, :-1], ids[:, 1:].to(logits.device),
                                       target_mask.to(logits.device))
        return self._reduce(total, count)[:, None]


_DIRECTIONS = {
    "src->hyp": "log p(hypothesis | source): faithfulness, reference-free (default)",
    "ref->hyp": "log p(hypothesis | reference): precision",
    "hyp->ref": "log p(reference | hypothesis): recall",
    "avg-f": "mean of the ref->hyp and hyp->ref scores: BARTScore's F score",
}


class BARTScore(_LMScore):
    """BARTScore-style log-likelihood under a sequence-to-sequence model.

    ``BARTScore(x -> y) = 1/|y| sum_t log p(y_t | y_<t, x)`` (Yuan et al.
    2021, Eq. 2 with uniform weights; their code averages over the target
    tokens, special tokens included, which is what this computes), with the
    direction choosing ``x`` and ``y``.

    Parameters
    ----------
    model : str or Path
        A local folder holding an encoder-decoder model
        (``AutoModelForSeq2SeqLM``: BART, T5, ...) and its tokenizer, e.g. a
        downloaded ``facebook/bart-large-cnn`` as in the paper.
    direction : {"src->hyp", "ref->hyp", "hyp->ref", "avg-f"}
        ``"src->hyp"`` (default) conditions the hypothesis on the source
        (reference-free); the others use each reference, aggregated with
        ``multi_ref`` as in the original code's ``multi_ref`` scoring
        (``"avg-f"`` is the mean of precision and recall).
    reduction : {"mean", "sum"}
        Mean (default, BARTScore) or sum of target token log-probabilities.
    max_length : int
        Source and target are truncated to this many tokens (1024, as the
        original).
    batch_size : int
        Pairs per forward pass and per work unit (8).
    device : str
        Torch device (``"cpu"``).

    Notes
    -----
    Targets are tokenized with the tokenizer's special tokens and padded
    positions are excluded; decoder inputs are the model's own right shift of
    the labels.  Scores are log-probabilities (<= 0, higher is better).
    """

    kind = "bartscore"

    def __init__(self, model, *, direction: str = "src->hyp", reduction: str = "mean",
                 max_length: int = 1024, batch_size: int | None = None, device: str = "cpu",
                 name: str | None = None):
        super().__init__(name=name, batch_size=batch_size)
        self._common_init(model, device, max_length, reduction)
        self.direction = check_choice(direction, "direction", tuple(_DIRECTIONS))

    @property
    def uses(self):
        return "source" if self.direction == "src->hyp" else "references"

    def options(self):
        return {"dir": self.direction, **self._model_options()}

    def _loglik(self, tok, model, xs, ys):
        import torch

        enc = tok(list(xs), max_length=self.max_length, truncation=True, padding=True,
                  return_tensors="pt")
        tgt = tok(list(ys), max_length=self.max_length, truncation=True, padding=True,
                  return_tensors="pt")
        labels = tgt["input_ids"].masked_fill(tgt["attention_mask"] == 0, -100)
        with torch.inference_mode():
            logits = model(input_ids=enc["input_ids"].to(self.device),
                           attention_mask=enc["attention_mask"].to(self.device),
                           labels=labels.to(self.device)).logits
        total, count = _token_logprobs(logits, labels.to(logits.device),
                                       (labels != -100).to(logits.device))
        return self._reduce(total, count)

    def score_batch(self, hypotheses, contexts):
        tok, model = load_model(self.model, "seq2seq", self.device)
        empty = np.array([not h for h in hypotheses])
        if self.direction in ("src->hyp", "ref->hyp"):
            out = self._loglik(tok, model, contexts, hypotheses)
        elif self.direction == "hyp->ref":
            out = self._loglik(tok, model, hypotheses, contexts)
        else:
            out = 0.5 * (self._loglik(tok, model, contexts, hypotheses)
                         + self._loglik(tok, model, hypotheses, contexts))
        out = np.where(empty, np.nan, out)
        return out[:, None]

