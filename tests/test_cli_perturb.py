"""The `metaeval perturb` command: perturbation detection from the command line.

Expected values come from the library pieces tested elsewhere against their oracles: the
perturbed texts from `metaeval.perturb.perturb_dataset` (crafted-sentence tests) and the scores
from sacreBLEU called directly on each original and perturbed text.
"""

import io
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.cli import main

sacrebleu = pytest.importorskip("sacrebleu")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    hyps = {("a", "1"): "The cat sat on the mat near the door . It was warm .",
            ("a", "2"): "A dog barked loudly at the postman this morning . He ran .",
            ("b", "1"): "The cat is on the mat by the door . It is warm there .",
            ("b", "2"): "The dog is barking loud at a man today . Then it slept ."}
    refs = {"1": ["The cat sat on the mat near the door . It was warm ."],
            "2": ["A dog barked loudly at the postman this morning . He ran away ."]}
    rows, texts = [], []
    for (s, i), h in hyps.items():
        rows.append({"system": s, "input": i, "human": 4.0 if s == "a" else 2.0})
        texts.append({"system": s, "input": i, "hypothesis": h, "references": refs[i]})
    data = tmp_path / "d.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    tpath = tmp_path / "t.jsonl"
    tpath.write_text("\n".join(json.dumps(t) for t in texts) + "\n")
    return data, tpath, hyps, refs


def _bleu(h, refs):
    return sacrebleu.metrics.BLEU(effective_order=True).sentence_score(h, refs).score


def test_perturb_detection_matches_sacrebleu_on_the_written_texts(files, tmp_path):
    data, tpath, hyps, refs = files
    out = tmp_path / "out"
    res = run("perturb", data, "--texts", tpath, "--human", "human", "--perturbation",
              "drop_words,sentence_reorder", "--option", "fraction=0.3", "--metrics", "bleu",
              "--seed", 5, "--out", out, "--format", "csv", "--cache", tmp_path / "cache")
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.stdout))
    assert got.perturbation.tolist() == ["drop_words", "sentence_reorder"]
    for name in ("drop_words", "sentence_reorder"):
        pert = pd.read_json(out / f"perturbed_{name}.jsonl", lines=True, dtype={"input": str})
        assert pert.applied.all()
        if name == "drop_words":  # --option reached the perturbation: 30% of the 12 words,
            row = pert.iloc[0]    # round(3.6) = 4, are dropped (punctuation is not a word)
            assert len(row.original.split()) - len(row.perturbed.split()) == 4
        # the accuracy recomputed from the written texts with sacreBLEU directly
        greater = ties = less = 0
        for r in pert.itertuples():
            if not r.applied:
                continue
            s, s_hat = _bleu(r.original, refs[r.input]), _bleu(r.perturbed, refs[r.input])
            greater += s > s_hat
            ties += s == s_hat
            less += s < s_hat
        row = got[got.perturbation == name].iloc[0]
        n = greater + ties + less
        assert (row.n, row.n_greater, row.n_ties, row.n_less) == (n, greater, ties, less)
        assert row.statistic == pytest.approx(greater / n, abs=1e-12)
    assert (out / "detection.png").stat().st_size > 0
    doc = json.loads((out / "detection.json").read_text())
    assert doc["drop_words"]["scoring"]["perturbation"]["options"]["fraction"] == 0.3


def test_perturb_min_human_and_cache(files, tmp_path):
    data, tpath, _, _ = files
    args = ("perturb", data, "--texts", tpath, "--human", "human", "--perturbation",
            "drop_words", "--metrics", "bleu,chrf", "--seed", 1, "--format", "json",
            "--cache", tmp_path / "cache")
    full = json.loads(run(*args).stdout)
    kept = run(*args, "--min-human", 3)
    assert kept.exit_code == 0, kept.output
    kept = json.loads(kept.stdout)
    # system a is rated 4, system b 2: --min-human 3 keeps a's two outputs only
    assert [r["n"] for r in full] == [4, 4] and [r["n"] for r in kept] == [2, 2]
    assert [r["n_excluded"] for r in kept] == [2, 2]
    # the third run (same texts, metrics and seed) takes every score from the cache
    again = run(*args, "--out", tmp_path / "again")
    assert again.exit_code == 0, again.output
    scoring = json.loads((tmp_path / "again" / "detection.json").read_text())["drop_words"]["scoring"]
    assert scoring["n_computed"] == 0 and scoring["n_cached"] > 0


def test_perturb_errors(files):
    data, tpath, _, _ = files
    base = ("perturb", data, "--texts", tpath, "--human", "human", "--metrics", "bleu")
    res = run(*base, "--perturbation", "drop_words", "--option", "fraction")
    assert res.exit_code == 2 and "write KEY=VALUE" in res.output
    res = run(*base, "--perturbation", "sentence_reorder", "--option", "fraction=0.3")
    assert res.exit_code == 2 and "no chosen perturbation has an option 'fraction'" in res.output
    res = run(*base, "--perturbation", "drop_words", "--option", "fraction=lots")
    assert res.exit_code == 2 and "fraction of drop_words takes a float" in res.output
    res = run(*base, "--perturbation", "scramble")
    assert res.exit_code == 2 and "is not registered" in res.output
    res = run("perturb", data, "--texts", tpath, "--metrics", "bleu", "--perturbation",
              "drop_words", "--min-human", 3)
    assert res.exit_code == 2 and "--min-human needs --human" in res.output
    res = run("perturb", data, "--human", "human", "--metrics", "bleu", "--perturbation",
              "drop_words")
    assert res.exit_code == 2 and "--texts" in res.output
