"""COMET and BLEURT adapters: what the main environment can check without the libraries.

unbabel-comet and bleurt-pytorch need transformers<5, which the main environment does
not have (it has transformers 5); .ci/run builds a side environment with the recipe of
docs/textmetrics.md and runs tests/test_comet_sideenv.py there, which checks the scores
against COMET's own ``predict`` and bleurt-pytorch's documented procedure.  Here:

* the one-line errors when neither COMET nor a ``comet-score`` is available (and for
  BLEURT), from the API and from ``metaeval score``;
* model validation (folders, checkpoints, names);
* the engine's ``source+references`` work items (COMET reads the source with each
  reference), against a per-cell loop written here;
* the ``comet-score`` path's plumbing (files, arguments, reading back, text cleaning,
  errors) with a stand-in ``comet-score`` written by the test: a script that computes a
  known function of each (src, mt, ref) line and writes COMET's ``--to_json`` layout
  (``comet/cli/score.py`` of unbabel-comet 2.2.7: ``{file: [{"src", "mt", "ref",
  "COMET"}]}``).  The real ``comet-score`` runs in the side environment.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval.textmetrics as tm
from metaeval import Dataset
from metaeval.cli import main
from metaeval.errors import BackendUnavailableError, ExternalCommandError, ParameterError
from metaeval.textmetrics import _comet_model

COMET_HERE = _comet_model.python_backend_problem() is None


@pytest.fixture
def no_comet_score(tmp_path, monkeypatch):
    """No comet-score on the PATH and no $METAEVAL_COMET_SCORE."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(_comet_model.EXECUTABLE_ENV, raising=False)


def fake_model(folder, class_identifier="regression_metric"):
    """A folder in COMET's layout (hparams.yaml, checkpoints/model.ckpt); never loaded here."""
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "hparams.yaml").write_text(f"class_identifier: {class_identifier}\n")
    (folder / "checkpoints" / "model.ckpt").write_bytes(b"not a real checkpoint")
    return folder


# A stand-in for comet-score: the score of a line triple is a function of the texts that the
# test recomputes independently; argv is logged so the test sees what metaeval passed.
FAKE = textwrap.dedent('''\
    #!{python}
    import json, sys
    args = sys.argv[1:]
    with open({log!r}, "a") as f:
        f.write(json.dumps(args) + "\\n")
    if {fail!r}:
        sys.stderr.write("Traceback (most recent call last):\\nRuntimeError: the model exploded\\n")
        sys.exit(3)
    opt = {{}}
    i = 0
    while i < len(args):
        if args[i] in ("--quiet",):
            i += 1
        else:
            opt[args[i]] = args[i + 1]
            i += 2
    read = lambda p: [ln.strip() for ln in open(p, encoding="utf-8").readlines()]
    src, mt = read(opt["-s"]), read(opt["-t"])
    ref = read(opt["-r"]) if "-r" in opt else [""] * len(mt)
    recs = [dict(src=s, mt=m, ref=r, COMET=len(s) + 1e-3 * len(m) + 1e-6 * len(r) + 1 / 3)
            for s, m, r in zip(src, mt, ref)]
    json.dump({{opt["-t"]: recs}}, open(opt["--to_json"], "w"))
    print("done")
''')


def fake_score(src, mt, ref):
    return len(src) + 1e-3 * len(mt) + 1e-6 * len(ref) + 1 / 3


def write_fake(folder, *, fail=False):
    script = folder / "comet-score"
    log = folder / "argv.log"
    script.write_text(FAKE.format(python=sys.executable, log=str(log), fail=fail))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


@pytest.fixture
def texts_ds():
    texts = pd.DataFrame({
        "system": ["A", "A", "B", "B"],
        "input": ["x", "y", "x", "y"],
        "hypothesis": ["The cat sat.", "A dog\nran.", "cat  sat ", None],
        "references": [("The cat is sitting.", "A cat sat."), ("A dog was running.",),
                       ("The cat is sitting.", "A cat sat."), ("A dog was running.",)],
        "source": ["Die Katze sass.", None, "Die Katze sass.", "Ein Hund lief.\r\n"],
    })
    return Dataset.from_arrays({"human": np.array([[4.0, 3.0], [2.0, 1.0]])}, human="human",
                               systems=["A", "B"], inputs=["x", "y"], texts=texts)


# ----------------------------------------------------------------------------- unavailable


@pytest.mark.skipif(COMET_HERE, reason="unbabel-comet runs here; the error needs its absence")
def test_comet_unavailable_is_one_line_naming_the_recipe(tmp_path, no_comet_score):
    with pytest.raises(BackendUnavailableError) as info:
        tm.get_metric("comet", model="Unbabel/wmt22-comet-da")
    msg = str(info.value)
    assert "\n" not in msg
    assert "comet-score" in msg and "METAEVAL_COMET_SCORE" in msg
    assert 'docs/textmetrics.md, "Installing COMET and BLEURT"' in msg
    assert "--no-deps unbabel-comet==2.2.7" in msg
    assert isinstance(info.value, ImportError)
    with pytest.raises(BackendUnavailableError, match="cannot run in this process"):
        tm.COMET(fake_model(tmp_path / "m"), backend="python")
    with pytest.raises(BackendUnavailableError, match=r"no comet-score executable \(/nowhere/x "):
        tm.COMET("Unbabel/wmt22-comet-da", backend="comet-score", executable="/nowhere/x")


@pytest.mark.skipif(COMET_HERE, reason="unbabel-comet runs here; the error needs its absence")
def test_cli_score_comet_unavailable_fails_with_one_line(tmp_path, no_comet_score):
    data = tmp_path / "d.csv"
    pd.DataFrame({"system": ["a"], "input": ["1"], "human": [1.0]}).to_csv(data, index=False)
    texts = tmp_path / "t.jsonl"
    texts.write_text(json.dumps({"system": "a", "input": "1", "hypothesis": "h", "source": "s",
                                 "references": ["r"]}) + "\n")
    res = CliRunner().invoke(main, ["score", str(data), "--texts", str(texts), "--human", "human",
                                    "--metrics", "comet", "--model", "Unbabel/wmt22-comet-da"])
    assert res.exit_code != 0
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Installing COMET and BLEURT" in lines[0], res.output
    res = CliRunner().invoke(main, ["score", str(data), "--texts", str(texts), "--human", "human",
                                    "--metrics", "comet"])
    assert res.exit_code == 2 and "comet needs --model (a local COMET model or a model name)" in \
        " ".join(res.output.split())


@pytest.mark.skipif(tm._bleurt.bleurt_problem() is None, reason="bleurt-pytorch runs here")
def test_bleurt_unavailable_is_one_line_naming_the_recipe():
    with pytest.raises(BackendUnavailableError) as info:
        tm.get_metric("bleurt", model="lucadiliello/BLEURT-20")
    msg = str(info.value)
    assert "\n" not in msg and "--no-deps bleurt-pytorch==0.0.1" in msg
    assert "Installing COMET and BLEURT" in msg


# ----------------------------------------------------------------------------- models


def test_comet_model_validation(tmp_path, no_comet_score):
    script, _ = write_fake(tmp_path)
    kw = {"backend": "comet-score", "executable": script}
    with pytest.raises(ParameterError, match=r"'\./nowhere' does not exist"):
        tm.COMET("./nowhere", **kw)
    with pytest.raises(ParameterError, match="must be a COMET model name"):
        tm.COMET(3, **kw)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParameterError, match="without checkpoints/model.ckpt"):
        tm.COMET(tmp_path / "empty", **kw)
    bare = tmp_path / "bare" / "checkpoints"
    bare.mkdir(parents=True)
    (bare / "model.ckpt").write_bytes(b"x")
    with pytest.raises(ParameterError, match="hparams.yaml is missing"):
        tm.COMET(bare / "model.ckpt", **kw)
    with pytest.raises(ParameterError, match="device='gpu'"):
        tm.COMET("Unbabel/wmt22-comet-da", device="gpu", **kw)
    with pytest.raises(ParameterError, match="precision='fp32' cannot be had through comet-score"):
        tm.COMET("Unbabel/wmt22-comet-da", precision="fp32", **kw)
    with pytest.raises(ParameterError, match="backend='gpu' is not allowed"):
        tm.COMET("Unbabel/wmt22-comet-da", backend="gpu")
    # a folder and its checkpoint are the same model: one label, the content hash of the folder
    m = fake_model(tmp_path / "wmt-tiny")
    a, b = tm.COMET(m, **kw), tm.COMET(m / "checkpoints" / "model.ckpt", **kw)
    assert a.options() == b.options() and a.options()["model"].startswith("wmt-tiny@")
    assert a.uses == "source+references"
    kiwi = tm.COMET(fake_model(tmp_path / "kiwi", "referenceless_regression_metric"), **kw)
    assert kiwi.uses == "source"
    named = tm.COMET("Unbabel/wmt22-cometkiwi-da", reference_free=True, **kw)
    assert named.options() == {"model": "Unbabel/wmt22-cometkiwi-da", "prec": "fp16"}
    assert named.uses == "source"


# ----------------------------------------------------------------------------- the engine


class SrcRef(tm.TextMetric):
    """A known function of (source, reference, hypothesis), read as COMET reads them."""

    kind = "srcref_probe"
    library = "metaeval"

    @property
    def uses(self):
        return "source+references"

    def score_batch(self, hypotheses, contexts):
        return np.array([[len(s) + 1e-3 * len(h) + 1e-6 * len(r)]
                         for h, (s, r) in zip(hypotheses, contexts)])


def test_source_plus_references_items_match_a_per_cell_loop(texts_ds, tmp_path):
    res = tm.score(texts_ds, SrcRef(), multi_ref="mean", cache_dir=tmp_path)
    tx = texts_ds.texts.set_index(["system", "input"])
    for si, s in enumerate(texts_ds.systems):
        for ii, i in enumerate(texts_ds.inputs):
            row = tx.loc[(s, i)]
            h, src, refs = row["hypothesis"], row["source"], row["references"]
            if not isinstance(h, str) or not isinstance(src, str):
                assert math.isnan(res["srcref_probe"][si, ii])  # no hypothesis, or no source
                continue
            want = np.mean([len(src) + 1e-3 * len(h) + 1e-6 * len(r) for r in refs])
            assert res["srcref_probe"][si, ii] == pytest.approx(want, rel=1e-15)
    assert res.n_missing["srcref_probe"] == 2
    sig = res.signatures["srcref_probe"]
    assert "|ctx:source+ref|refs:2|multi:mean|" in sig  # (A,y), with 1 reference, has no source
    # the items: (A,x) x 2 refs, (B,x) x 2 refs; (A,y) has no source, (B,y) no hypothesis
    assert res.n_items == 4 and res.n_computed == 4
    again = tm.score(texts_ds, SrcRef(), multi_ref="max", cache_dir=tmp_path)
    assert again.n_cached == 4 and again.n_computed == 0
    with pytest.raises(ParameterError, match="multi_ref='native' is not available"):
        tm.score(texts_ds, SrcRef(), multi_ref="native")


# ----------------------------------------------------------------------------- comet-score


def test_comet_score_path_writes_aligned_files_and_reads_the_json(texts_ds, tmp_path,
                                                                  no_comet_score):
    script, log = write_fake(tmp_path)
    model = fake_model(tmp_path / "tiny")
    m = tm.COMET(model, backend="comet-score", executable=script, batch_size=7, device="cpu")
    assert (m.backend, m.precision, m.chunk_size) == ("comet-score", "fp16", 2048)
    res = tm.score(texts_ds, m, multi_ref="max")
    # one run; the arguments comet-score documents; the model as the .ckpt it accepts
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 1
    argv = calls[0]
    assert argv[argv.index("--model") + 1] == str((model / "checkpoints" / "model.ckpt").resolve())
    assert argv[argv.index("--batch_size") + 1] == "7" and argv[argv.index("--gpus") + 1] == "0"
    assert "--quiet" in argv and "-r" in argv
    tx = texts_ds.texts.set_index(["system", "input"])
    for si, s in enumerate(texts_ds.systems):
        for ii, i in enumerate(texts_ds.inputs):
            row = tx.loc[(s, i)]
            h, src, refs = row["hypothesis"], row["source"], row["references"]
            if not isinstance(h, str) or not isinstance(src, str):
                assert math.isnan(res["comet"][si, ii])
                continue
            # comet-score reads one segment per line, stripped: the texts go in that form
            clean = [" ".join(t.replace("\r\n", "\n").split("\n")).strip() for t in (src, h)]
            want = max(fake_score(clean[0], clean[1], r.strip()) for r in refs)
            assert res["comet"][si, ii] == want  # the JSON keeps every digit
    sig = res.signatures["comet"]
    assert sig.startswith("metric:comet|model:tiny@") and "|prec:fp16|ctx:source+ref|" in sig
    # the stand-in's interpreter has no unbabel-comet: its version is unknown, and says so
    assert "|unbabel-comet:unknown|" in sig


def test_comet_score_texts_with_line_breaks_keep_the_files_aligned(tmp_path, no_comet_score):
    script, _ = write_fake(tmp_path)
    m = tm.COMET("Unbabel/wmt22-comet-da", backend="comet-score", executable=script)
    hyps = ["one\ntwo", "  three  ", "four\r\nfive\rsix"]
    srcs = ["s1\n", "s\n2", "s3"]
    refs = [["r1"], ["r\r2"], ["r3\n\n"]]
    out = tm.score_texts(m, hyps, references=refs, sources=srcs)["comet"]
    want = [fake_score("s1", "one two", "r1"), fake_score("s 2", "three", "r 2"),
            fake_score("s3", "four five six", "r3")]
    assert out.tolist() == want


def test_comet_score_failure_is_one_line_with_its_last_stderr_line(tmp_path, no_comet_score):
    script, _ = write_fake(tmp_path, fail=True)
    m = tm.COMET("Unbabel/wmt22-comet-da", backend="comet-score", executable=script)
    with pytest.raises(ExternalCommandError) as info:
        tm.score_texts(m, ["h"], references=[["r"]], sources=["s"])
    msg = str(info.value)
    assert "\n" not in msg and msg.endswith("exit status 3: RuntimeError: the model exploded")
    assert info.value.returncode == 3 and "Traceback" in info.value.stderr


def test_comet_score_found_through_the_environment_variable(tmp_path, monkeypatch,
                                                            no_comet_score):
    script, _ = write_fake(tmp_path)
    monkeypatch.setenv(_comet_model.EXECUTABLE_ENV, str(script))
    m = tm.get_metric("comet", model="Unbabel/wmt22-comet-da")
    if not COMET_HERE:
        assert m.backend == "comet-score" and m.executable == str(script.resolve())
    out = tm.score_texts(tm.COMET("Unbabel/wmt22-comet-da", backend="comet-score"), ["h"],
                         references=[["r"]], sources=["s"])["comet"]
    assert out.tolist() == [fake_score("s", "h", "r")]


def test_comet_score_reference_free_model_reads_only_the_source(tmp_path, no_comet_score):
    script, log = write_fake(tmp_path)
    kiwi = fake_model(tmp_path / "kiwi", "referenceless_regression_metric")
    m = tm.COMET(kiwi, backend="comet-score", executable=script)
    out = tm.score_texts(m, ["a b", "c"], sources=["x", "yy"])["comet"]
    assert out.tolist() == [fake_score("x", "a b", ""), fake_score("yy", "c", "")]
    assert "-r" not in json.loads(log.read_text().splitlines()[0])
    assert "|ctx:source|" in m.signature()


def test_adapters_pickle_without_models(tmp_path, no_comet_score):
    import pickle

    script, _ = write_fake(tmp_path)
    m = tm.COMET(fake_model(tmp_path / "m"), backend="comet-score", executable=script)
    back = pickle.loads(pickle.dumps(m))
    assert back.cache_signature() == m.cache_signature()
    assert os.path.basename(back.executable) == "comet-score"
