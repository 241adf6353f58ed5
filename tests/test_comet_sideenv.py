"""COMET and BLEURT scores through metaeval equal the libraries' own, on tiny random models.

Runs in the side environment that .ci/run builds with the recipe of docs/textmetrics.md
("Installing COMET and BLEURT": transformers<5, unbabel-comet and bleurt-pytorch with
--no-deps); in the main environment (transformers 5) every test here skips, saying why.
The models are built offline by tests/tiny_models.py (no download).

Oracles, called directly on the same model files:

* COMET: ``comet.load_from_checkpoint(ckpt).predict(samples)`` (unbabel-comet's Python
  API, fp32), and the same on ``model.half()`` for the ``comet-score`` path, because
  ``comet/cli/score.py`` casts the model with ``model.half()`` before ``predict``;
* BLEURT: bleurt-pytorch's documented procedure (its README):
  ``tokenizer(references, candidates, padding="longest", return_tensors="pt")`` then
  ``model(**inputs).logits.flatten()`` under ``torch.no_grad()``.

The oracles get the texts written here in the form comet-score reads them (one line,
stripped); the dataset has a hypothesis with a line break to check metaeval does the same.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval.textmetrics as tm
from metaeval import Dataset
from metaeval.errors import ParameterError
from metaeval.textmetrics import _bleurt, _comet_model

COMET_PROBLEM = _comet_model.python_backend_problem()
BLEURT_PROBLEM = _bleurt.bleurt_problem()
SIDE = ("needs the side environment of .ci/run (docs/textmetrics.md, 'Installing COMET and "
        "BLEURT'): ")
needs_comet = pytest.mark.skipif(COMET_PROBLEM is not None, reason=SIDE + str(COMET_PROBLEM))
needs_bleurt = pytest.mark.skipif(BLEURT_PROBLEM is not None, reason=SIDE + str(BLEURT_PROBLEM))

TOL = 1e-6

# system x input texts; (B, y) has no hypothesis, (C, z) no source; x and z have 2 references
SOURCES = {"x": "der Hund lief im Park", "y": "die Katze sass auf der Matte",
           "z": None, "w": "das Wetter ist heute schoen"}
REFS = {"x": ["a dog ran in the park", "the dog ran in a park"],
        "y": ["the cat sat on the mat"],
        "z": ["a red car drove fast", "the car was red"],
        "w": ["the weather is nice today"]}
HYPS = {("A", "x"): "a dog ran in the park", ("A", "y"): "the cat sat\non the mat",
        ("A", "z"): "a red car", ("A", "w"): "the weather is nice",
        ("B", "x"): "the dog in the park", ("B", "y"): None,
        ("B", "z"): "a car drove", ("B", "w"): "nice weather today",
        ("C", "x"): "dog park", ("C", "y"): "a cat on a mat",
        ("C", "z"): "red car fast", ("C", "w"): "the weather today is nice"}
# the form comet-score reads: one line per segment, stripped
AS_READ = {("A", "y"): "the cat sat on the mat"}


def dataset():
    rows = [{"system": s, "input": i, "hypothesis": h, "source": SOURCES[i],
             "references": tuple(REFS[i])} for (s, i), h in HYPS.items()]
    human = np.arange(12, dtype=float).reshape(3, 4)
    return Dataset.from_arrays({"mqm": human}, human="mqm", systems=["A", "B", "C"],
                               inputs=["x", "y", "z", "w"], texts=pd.DataFrame(rows))


def triples():
    """(cell, reference index, sample) for every scorable (hypothesis, source, reference)."""
    out = []
    for (s, i), h in HYPS.items():
        if h is None or SOURCES[i] is None:
            continue
        for r, ref in enumerate(REFS[i]):
            out.append(((s, i), r, {"src": SOURCES[i], "mt": AS_READ.get((s, i), h), "ref": ref}))
    return out


def check_cells(res_matrix, ds, per_cell):
    """Every cell equals its oracle value to TOL; cells without one are NaN."""
    for si, s in enumerate(ds.systems):
        for ii, i in enumerate(ds.inputs):
            got = res_matrix[si, ii]
            if (s, i) not in per_cell:
                assert math.isnan(got), (s, i)
            else:
                assert abs(got - per_cell[(s, i)]) <= TOL, ((s, i), got, per_cell[(s, i)])


@pytest.fixture(scope="module")
def comet_ckpt(tmp_path_factory):
    if COMET_PROBLEM is not None:
        pytest.skip(SIDE + COMET_PROBLEM)
    from tiny_models import build_comet

    return build_comet(tmp_path_factory.mktemp("comet") / "tiny-comet", seed=7)


def comet_oracle(ckpt, samples, *, half=False, batch_size=16):
    from comet import load_from_checkpoint

    with _comet_model.quiet_lightning():
        model = load_from_checkpoint(str(ckpt))
        if half:
            model.half()
        return np.asarray(model.predict(samples, batch_size=batch_size, gpus=0,
                                        progress_bar=False).scores, dtype=float)


def oracle_means(ckpt, **kw):
    items = triples()
    scores = comet_oracle(ckpt, [t[2] for t in items], **kw)
    cells: dict = {}
    for (cell, _, _), v in zip(items, scores):
        cells.setdefault(cell, []).append(v)
    return {c: float(np.mean(v)) for c, v in cells.items()}


@needs_comet
def test_comet_in_process_equals_comets_predict(comet_ckpt, tmp_path):
    ds = dataset()
    m = tm.COMET(comet_ckpt.parents[1], batch_size=4, device="cpu")
    assert (m.backend, m.precision) == ("python", "fp32")
    res = tm.score(ds, m, multi_ref="mean", cache_dir=tmp_path)
    check_cells(res["comet"], ds, oracle_means(comet_ckpt))
    assert res.n_items == len(triples()) and res.n_missing["comet"] == 4
    sig = res.signatures["comet"]
    assert sig.startswith("metric:comet|model:tiny-comet@") and "|prec:fp32|ctx:source+ref|" in sig
    assert "|unbabel-comet:2.2.7|" in sig
    again = tm.score(ds, m, multi_ref="max", cache_dir=tmp_path)
    assert again.n_computed == 0 and again.n_cached == res.n_items
    np.testing.assert_array_equal(again.reference_scores["comet"], res.reference_scores["comet"])


@needs_comet
def test_comet_through_comet_score_equals_predict_in_half_precision(comet_ckpt):
    exe = shutil.which("comet-score", path=os.path.dirname(sys.executable))
    assert exe is not None, "the side environment has no comet-score"
    ds = dataset()
    m = tm.COMET(comet_ckpt, backend="comet-score", executable=exe, batch_size=4, device="cpu")
    assert (m.backend, m.precision) == ("comet-score", "fp16")
    res = tm.score(ds, m, multi_ref="mean")
    check_cells(res["comet"], ds, oracle_means(comet_ckpt, half=True, batch_size=4))
    sig = res.signatures["comet"]
    assert "|prec:fp16|" in sig and "|unbabel-comet:2.2.7|" in sig  # read in comet-score's env
    # in process with precision="fp16" is what comet-score computes
    inproc = tm.score(ds, tm.COMET(comet_ckpt, precision="fp16", batch_size=4, device="cpu"),
                      multi_ref="mean")
    np.testing.assert_allclose(inproc["comet"], res["comet"], atol=TOL, rtol=0)
    assert inproc.signatures["comet"] == sig


@needs_comet
def test_comet_reference_free_model_reads_the_source(tmp_path):
    from tiny_models import build_comet

    ckpt = build_comet(tmp_path / "tiny-kiwi", seed=3, referenceless=True)
    m = tm.COMET(ckpt, device="cpu")
    assert m.uses == "source"
    hyps = ["a dog ran in the park", "the cat sat", "nice weather"]
    srcs = ["der Hund lief im Park", "die Katze", "das Wetter ist heute schoen"]
    got = tm.score_texts(m, hyps, sources=srcs)["comet"]
    want = comet_oracle(ckpt, [{"src": s, "mt": h} for s, h in zip(srcs, hyps)])
    np.testing.assert_allclose(got, want, atol=TOL, rtol=0)
    with pytest.raises(ParameterError, match="reference_free=True"):
        tm.score_texts(tm.COMET(ckpt, reference_free=False, device="cpu"), hyps,
                       references=[["r"]] * 3, sources=srcs)


@needs_comet
def test_cli_score_comet_and_bleu(comet_ckpt, tmp_path):
    ds = dataset()
    data = tmp_path / "d.csv"
    ds.to_frame().to_csv(data, index=False)
    texts = tmp_path / "t.jsonl"
    rows = [{"system": s, "input": i, "hypothesis": h, "source": SOURCES[i], "references": REFS[i]}
            for (s, i), h in HYPS.items()]
    texts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scores.csv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "metaeval", "score", str(data), "--texts",
                           str(texts), "--human", "mqm", "--metrics", "comet,bleu", "--model",
                           str(comet_ckpt), "--multi-ref", "mean", "--out", str(out),
                           "--format", "csv"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    got = pd.read_csv(out, dtype={"input": str})
    comet = got[got.metric == "comet"].set_index(["system", "input"])["score"]
    want = oracle_means(comet_ckpt)
    for cell, value in want.items():
        assert abs(comet[cell] - value) <= TOL
    assert set(got.metric) == {"comet", "bleu"}


@pytest.fixture(scope="module")
def bleurt_dir(tmp_path_factory):
    if BLEURT_PROBLEM is not None:
        pytest.skip(SIDE + BLEURT_PROBLEM)
    from tiny_models import build_bleurt

    return build_bleurt(tmp_path_factory.mktemp("bleurt") / "tiny-bleurt", seed=5)


@needs_bleurt
def test_bleurt_equals_the_documented_procedure(bleurt_dir):
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    ds = dataset()
    res = tm.score(ds, tm.BLEURT(bleurt_dir, batch_size=3, device="cpu"), multi_ref="max")
    pairs = [((s, i), ref, h) for (s, i), h in HYPS.items() if h is not None for ref in REFS[i]]
    tok = BleurtTokenizer.from_pretrained(str(bleurt_dir))
    model = BleurtForSequenceClassification.from_pretrained(str(bleurt_dir)).eval()
    with torch.no_grad():
        inputs = tok([p[1] for p in pairs], [p[2] for p in pairs], padding="longest",
                     return_tensors="pt")
        scores = model(**inputs).logits.flatten().tolist()
    cells: dict = {}
    for (cell, _, _), v in zip(pairs, scores):
        cells[cell] = max(cells.get(cell, -np.inf), v)
    check_cells(res["bleurt"], ds, cells)
    sig = res.signatures["bleurt"]
    assert sig.startswith("metric:bleurt|model:tiny-bleurt@") and "|bleurt-pytorch:0.0.1|" in sig


@needs_comet
def test_docs_example_runs_from_a_folder_to_the_table(comet_ckpt, capsys):
    """examples/comet_mqm.py (docs/textmetrics.md): synthetic folder -> COMET + BLEU -> table."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "comet_mqm.py"
    spec = importlib.util.spec_from_file_location("comet_mqm", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    table = example.main(["--model", str(comet_ckpt), "--n-resamples", "200"])
    assert sorted(zip(table.level, table.metric)) == sorted(
        (lv, m) for lv in ("system", "global", "input") for m in ("comet", "bleu"))
    assert table[["statistic", "ci_low", "ci_high"]].notna().all().all()
    assert (table.ci_low <= table.statistic).all() and (table.statistic <= table.ci_high).all()
    out = capsys.readouterr().out
    assert "metric:comet|model:tiny-comet@" in out and "metric:bleu|" in out
