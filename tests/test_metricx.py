"""MetricX through transformers' MT5ForConditionalGeneration, against a slow reference.

MetricX's public code (github.com/google-research/metricx, commit fc4978e):
``metricx24/models.py`` ``MT5ForRegression.forward`` runs the mT5 decoder for one step
from token 0 and returns ``lm_logits[:, 0, 250089]`` clipped to [0, 25];
``metricx24/predict.py`` / ``metricx23/predict.py`` ``get_dataset`` build the input
strings, tokenize with ``truncation=True`` at ``max_input_length`` and drop the last
token (EOS).  The reference below does that per item, unpadded (MetricX's README runs
``--batch_size 1``), calling the encoder and the decoder separately and projecting with
the ``lm_head`` weights read from the checkpoint file itself (safetensors), so that a
tied or rescaled head would be caught.  The checkpoint is a tiny random model with
MetricX's layout (``architectures: [MT5ForRegression]``, ``tie_word_embeddings: false``,
a ``lm_head`` distinct from the embeddings, mT5's 250 100-token output).

Runs in the main environment (transformers 5) and in the COMET side environment
(transformers 4.57, .ci/run), so both versions are checked.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import metaeval.textmetrics as tm  # noqa: E402
from metaeval import Dataset  # noqa: E402
from metaeval.errors import ParameterError  # noqa: E402

V, D = 250100, 8
SCALE = 3.0
WORDS = ("source: candidate: reference: the a dog cat ran sat in on park mat der Hund "
         "lief im Park die Katze sass auf Matte red car drove fast").split()


@pytest.fixture(scope="module")
def metricx(tmp_path_factory):
    from safetensors.torch import save_file
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    root = tmp_path_factory.mktemp("metricx")
    # the tokenizer: mT5's special ids (<pad>=0, </s>=1, <unk>=2), "$A </s>"
    chars = sorted({c for w in WORDS for c in w})
    pieces = ([("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
              + [(c, -5.0) for c in chars] + [("\u2581" + w, -1.0) for w in WORDS])
    tok = Tokenizer(models.Unigram(pieces, unk_id=2, byte_fallback=False))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.TemplateProcessing(single="$A </s>",
                                                       special_tokens=[("</s>", 1)])
    fast = transformers.T5TokenizerFast(tokenizer_object=tok, pad_token="<pad>",
                                        eos_token="</s>", unk_token="<unk>", extra_ids=0)
    tok_dir = root / "tokenizer"
    fast.save_pretrained(tok_dir)
    # the model: MetricX's parameter set, lm_head distinct from shared
    cfg = dict(vocab_size=V, d_model=D, d_kv=4, d_ff=16, num_layers=2, num_decoder_layers=2,
               num_heads=2, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
               decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    torch.manual_seed(11)
    base = transformers.MT5ForConditionalGeneration(transformers.MT5Config(**cfg))
    sd = {k: v.detach().clone().contiguous() for k, v in base.state_dict().items()
          if k not in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")}
    head = torch.randn(V, D) * 0.02
    head[250089] = torch.randn(D) * SCALE  # spread the scores over the inside of [0, 25]
    sd["lm_head.weight"] = head
    model_dir = root / "metricx-tiny"
    model_dir.mkdir()
    save_file(sd, str(model_dir / "model.safetensors"), metadata={"format": "pt"})
    (model_dir / "config.json").write_text(json.dumps(
        {**cfg, "model_type": "mt5", "architectures": ["MT5ForRegression"]}))
    return model_dir, tok_dir


def reference_score(model_dir, tok_dir, text, max_length):
    """One item as MetricX scores it, batch 1 (see the module docstring)."""
    from safetensors.torch import load_file

    tok = transformers.AutoTokenizer.from_pretrained(str(tok_dir))
    ids = tok(text, max_length=max_length, truncation=True)["input_ids"][:-1]
    model = transformers.MT5ForConditionalGeneration.from_pretrained(str(model_dir)).eval()
    head = load_file(str(model_dir / "model.safetensors"))["lm_head.weight"]
    x = torch.tensor([ids])
    ones = torch.ones_like(x)
    with torch.no_grad():
        enc = model.encoder(input_ids=x, attention_mask=ones).last_hidden_state
        dec = model.decoder(input_ids=torch.zeros((1, 1), dtype=torch.long),
                            encoder_hidden_states=enc, encoder_attention_mask=ones)
        h = dec.last_hidden_state[0, 0]
    return float(min(max(float(h @ head[250089]), 0.0), 25.0))


SOURCES = {"x": "der Hund lief im Park", "y": "die Katze sass auf der Matte", "z": None}
REFS = {"x": ["a dog ran in the park", "the dog ran"], "y": ["the cat sat on the mat"],
        "z": ["a red car drove fast"]}
HYPS = {("A", "x"): "a dog ran in the park", ("A", "y"): "the cat sat on a mat",
        ("A", "z"): "a car drove", ("B", "x"): "the dog in park", ("B", "y"): None,
        ("B", "z"): "red car fast", ("C", "x"): "dog park park park", ("C", "y"): "a cat",
        ("C", "z"): "a red car"}


def dataset():
    import pandas as pd

    rows = [{"system": s, "input": i, "hypothesis": h, "source": SOURCES[i],
             "references": tuple(REFS[i])} for (s, i), h in HYPS.items()]
    return Dataset.from_arrays({"mqm": np.zeros((3, 3))}, human="mqm", systems=["A", "B", "C"],
                               inputs=["x", "y", "z"], texts=pd.DataFrame(rows))


@pytest.mark.parametrize("version,qe", [("24", False), ("24", True), ("23", False), ("23", True)])
def test_metricx_equals_metricx_forward_per_item(metricx, version, qe):
    model_dir, tok_dir = metricx
    ds = dataset()
    m = tm.MetricX(model_dir, tokenizer=tok_dir, version=version, reference_free=qe,
                   batch_size=3, device="cpu", max_length=24)
    res = tm.score(ds, m, multi_ref="best")
    values = []
    for si, s in enumerate(ds.systems):
        for ii, i in enumerate(ds.inputs):
            h, src = HYPS[(s, i)], SOURCES[i]
            needs_src = version == "24" or qe
            if h is None or (needs_src and src is None):
                assert math.isnan(res["metricx"][si, ii])
                continue
            if version == "24":
                texts = ([f"source: {src} candidate: {h}"] if qe else
                         [f"source: {src} candidate: {h} reference: {r}" for r in REFS[i]])
            else:
                texts = ([f"candidate: {h} source: {src}"] if qe else
                         [f"candidate: {h} reference: {r}" for r in REFS[i]])
            # lower is better: "best" is the minimum over the references
            want = min(reference_score(model_dir, tok_dir, t, 24) for t in texts)
            assert abs(res["metricx"][si, ii] - want) <= 1e-5, (s, i, res["metricx"][si, ii], want)
            values.append(want)
    # the head spreads the scores: some clipped at 0 or 25, some inside (else the test is weak)
    assert any(0 < v < 25 for v in values)
    sig = res.signatures["metricx"]
    assert sig.startswith("metric:metricx|model:metricx-tiny@") and f"|v:{version}|" in sig
    assert f"|qe:{'yes' if qe else 'no'}|maxlen:24|dtype:auto|" in sig


def test_metricx_is_lower_is_better_and_validates(metricx, tmp_path):
    model_dir, tok_dir = metricx
    assert tm.MetricX.higher_is_better is False
    from metaeval.direction import lower_is_better_names

    assert "metricx" in lower_is_better_names()
    with pytest.raises(ParameterError, match="version='25' is not allowed"):
        tm.MetricX(model_dir, tokenizer=tok_dir, version="25")
    with pytest.raises(ParameterError, match="does not exist"):
        tm.MetricX(tmp_path / "nowhere", tokenizer=tok_dir)
    small = tmp_path / "small"
    transformers.MT5ForConditionalGeneration(transformers.MT5Config(
        vocab_size=100, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2)).save_pretrained(small)
    with pytest.raises(ParameterError, match="reads token 250089"):
        tm.score_texts(tm.MetricX(small, tokenizer=tok_dir, device="cpu"), ["a"],
                       references=[["b"]], sources=["c"])
