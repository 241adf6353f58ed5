"""Tiny randomly initialised COMET and BLEURT models, built offline (no download).

Used by tests/test_comet_sideenv.py (and the COMET example of docs/textmetrics.md) in
the side environment that has unbabel-comet and bleurt-pytorch (.ci/run).  The scores
of these models are meaningless; they exercise the real loading and scoring code.

**COMET.** ``comet.load_from_checkpoint(ckpt)`` reads ``hparams.yaml`` two folders
above the checkpoint, builds the model class named by ``class_identifier`` with
``load_pretrained_weights=False`` (so the encoder is ``XLMRobertaModel(config)``, the
config read with ``XLMRobertaConfig.from_pretrained(pretrained_model)`` and the
tokenizer with ``XLMRobertaTokenizerFast.from_pretrained(pretrained_model)``:
``comet/encoders/xlmr.py``), then loads the checkpoint's ``state_dict``
(``comet/models/__init__.py``, unbabel-comet 2.2.7).  So ``pretrained_model`` here is a
local folder holding a 2-layer XLM-R config and a fast tokenizer built with
``tokenizers`` from a fixed Unigram vocabulary (no training: deterministic), and the
checkpoint is the Lightning layout (``state_dict``, ``hyper_parameters``,
``pytorch-lightning_version``) written with ``torch.save``.

**BLEURT.** A 2-layer ``BleurtForSequenceClassification`` with a WordPiece vocabulary
(``BleurtTokenizerFast``, a ``BertTokenizerFast``), saved with ``save_pretrained``.
"""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "the cat sat on the mat", "a dog ran in the park", "der Hund lief im Park",
    "die Katze sass auf der Matte", "the weather is nice today", "das Wetter ist heute schoen",
    "a red car drove fast", "ein rotes Auto fuhr schnell",
]


def _vocabulary(sentences):
    chars = sorted({c for s in sentences for c in s.replace(" ", "")})
    words = sorted({w for s in sentences for w in s.split()})
    return chars, words


def build_xlmr_encoder(folder, sentences=SENTENCES) -> Path:
    """A 2-layer XLM-R config and a fast XLM-R tokenizer in ``folder`` (save_pretrained)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import XLMRobertaConfig, XLMRobertaTokenizerFast

    folder = Path(folder)
    chars, words = _vocabulary(sentences)
    # XLM-R's special ids: <s>=0, <pad>=1, </s>=2, <unk>=3; <mask> last
    pieces = ([("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
              + [(c, -5.0) for c in chars] + [("\u2581" + w, -1.0) for w in words]
              + [("<mask>", 0.0)])
    tok = Tokenizer(models.Unigram(pieces, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)])
    fast = XLMRobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   sep_token="</s>", cls_token="<s>", unk_token="<unk>",
                                   pad_token="<pad>", mask_token="<mask>")
    fast.save_pretrained(folder)
    XLMRobertaConfig(vocab_size=len(pieces), hidden_size=16, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=66,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2).save_pretrained(folder)
    return folder


def build_comet(folder, *, seed=0, referenceless=False) -> Path:
    """A random COMET model in COMET's layout: ``folder/hparams.yaml`` and
    ``folder/checkpoints/model.ckpt``.  Returns the checkpoint path."""
    import pytorch_lightning as pl
    import torch
    import yaml
    from comet.models import ReferencelessRegression, RegressionMetric

    folder = Path(folder).resolve()
    encoder = build_xlmr_encoder(folder.parent / f"{folder.name}-encoder")
    torch.manual_seed(seed)
    cls = ReferencelessRegression if referenceless else RegressionMetric
    model = cls(pretrained_model=str(encoder), load_pretrained_weights=False, hidden_sizes=[8],
                layer_transformation="softmax", nr_frozen_epochs=0.0)
    hparams = dict(model.hparams)
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    (folder / "hparams.yaml").write_text(yaml.safe_dump(hparams))
    ckpt = folder / "checkpoints" / "model.ckpt"
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams,
                "pytorch-lightning_version": pl.__version__}, ckpt)
    return ckpt


def build_bleurt(folder, *, seed=0, sentences=SENTENCES) -> Path:
    """A random 2-layer BLEURT model and its WordPiece tokenizer, saved in ``folder``."""
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification
    from bleurt_pytorch.bleurt.tokenization_bleurt_fast import BleurtTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    chars, words = _vocabulary([s.lower() for s in sentences])
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + chars + [f"##{c}" for c in chars]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BleurtTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
    torch.manual_seed(seed)
    config = BleurtConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    BleurtForSequenceClassification(config).eval().save_pretrained(folder)
    return folder
