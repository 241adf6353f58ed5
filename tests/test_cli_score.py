"""The `metaeval score` command against sacreBLEU called directly."""

import io
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    rows, texts = [], []
    hyps = {("a", "1"): "the cat sat on the mat", ("a", "2"): "a dog barked loudly",
            ("b", "1"): "cat on mat", ("b", "2"): "the dog is barking loud"}
    refs = {"1": ["the cat sat on the mat .", "a cat was sitting on the mat"],
            "2": ["the dog barked loudly", "a dog was barking"]}
    for (s, i), h in hyps.items():
        rows.append({"system": s, "input": i, "human": float(len(h))})
        texts.append({"system": s, "input": i, "hypothesis": h, "references": refs[i]})
    data = tmp_path / "d.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    tpath = tmp_path / "t.jsonl"
    tpath.write_text("\n".join(json.dumps(t) for t in texts) + "\n")
    return data, tpath, hyps, refs


def test_score_file_matches_sacrebleu(files, tmp_path):
    sacrebleu = pytest.importorskip("sacrebleu")
    data, tpath, hyps, refs = files
    out = tmp_path / "scores.csv"
    res = run("score", data, "--texts", tpath, "--human", "human", "--metrics", "bleu",
              "--multi-ref", "native", "--format", "csv", "--out", out)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output), dtype={"input": str})
    for r in got.itertuples():
        want = sacrebleu.sentence_bleu(hyps[(r.system, r.input)], refs[r.input]).score
        assert r.score == pytest.approx(want, abs=1e-12)
    assert pd.read_csv(out).shape == got.shape


def test_score_errors(files):
    data, tpath, _, _ = files
    res = run("score", data, "--human", "human", "--metrics", "bleu")
    assert res.exit_code == 2 and "--texts" in res.output
    res = run("score", data, "--texts", tpath, "--human", "human", "--metrics", "bertscore")
    assert res.exit_code == 2 and "--model" in res.output
