"""The `metaeval diagnose` command against metaeval.diagnostics (tested
against scipy and slow references in test_diagnostics.py)."""

import io

import numpy as np
import pandas as pd
from click.testing import CliRunner

import metaeval
from metaeval import diagnostics as dg
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_diagnose_matches_library(tmp_path):
    res = run("diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU",
              "--n-resamples", 20, "--seed", 0, "--format", "csv", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output))
    ds = metaeval.load_dataset("summeval")
    ks = dg.ks_score(ds, "coherence", metrics=["ROUGE.1", "BLEU"]).to_frame()
    mc = dg.meta_correlation(ds, "coherence", metrics=["ROUGE.1", "BLEU"]).to_frame()
    np.testing.assert_allclose(got[got.analysis == "ks"].statistic, ks.statistic)
    np.testing.assert_allclose(got[got.analysis == "meta_correlation"].statistic, mc.statistic)
    for f in ("ks.csv", "meta_correlation.csv", "sample_size.csv", "correlation_design.csv",
              "diagnostics.json", "ks.png", "meta_correlation.png", "correlation_design.png"):
        assert (tmp_path / f).exists(), f


def test_diagnose_bad_sizes():
    res = run("diagnose", "summeval", "--human", "coherence", "--sizes", "ten")
    assert res.exit_code == 2 and "--sizes" in res.output


def test_diagnose_reference_sensitivity_from_texts(tmp_path):
    """--reference-metrics: the per-reference scores are sacreBLEU's sentence BLEU against each
    reference alone (computed here directly), and the distribution is reference_sensitivity's
    on those scores with the same seed (tested against a slow reference in test_diagnostics)."""
    import json

    import pytest

    sacrebleu = pytest.importorskip("sacrebleu")
    rng = np.random.default_rng(0)
    words = "the cat dog sat ran on a mat park near door today fast slow".split()
    refs = {f"i{j}": [" ".join(rng.choice(words, 8)) for _ in range(3)] for j in range(6)}
    rows, texts = [], []
    for s in ("A", "B", "C"):
        for j, (i, rr) in enumerate(refs.items()):
            hyp = " ".join(rng.choice(words, 7))
            rows.append({"system": s, "input": i, "human": float(rng.integers(1, 6))})
            texts.append({"system": s, "input": i, "hypothesis": hyp, "references": rr})
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(t) for t in texts) + "\n")
    res = run("diagnose", tmp_path / "d.csv", "--human", "human", "--texts", tmp_path / "t.jsonl",
              "--reference-metrics", "bleu", "--reference-draws", 200, "--sizes", "3", "--low", 3,
              "--high", 4,
              "--n-resamples", 5, "--seed", 4, "--format", "csv", "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.stdout))
    got = got[got.analysis == "reference_sensitivity"].iloc[0]
    # per-reference scores straight from sacreBLEU, shaped (N, M, R)
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    per_ref = np.full((3, 6, 3), np.nan)
    for t in texts:
        a, b = "ABC".index(t["system"]), int(t["input"][1:])
        for k, r in enumerate(t["references"]):
            per_ref[a, b, k] = bleu.sentence_score(t["hypothesis"], [r]).score
    ds = metaeval.read_dataset(tmp_path / "d.csv", human="human")
    want = dg.reference_sensitivity(ds, "human", scores={"bleu": per_ref}, method="spearman",
                                    n_resamples=200, rng=4)[0]
    assert got.statistic == pytest.approx(want.statistic, abs=1e-12)
    assert got["std"] == pytest.approx(want.std, abs=1e-12)
    assert (tmp_path / "o" / "reference_sensitivity.png").exists()


class _Stop(Exception):
    pass


def test_diagnose_options_reach_their_analyses(monkeypatch):
    """Issue 25.4: each generated option sets its analysis' keyword; absent, it is not passed."""
    seen = {}

    def recording(name, stop=False):
        real = getattr(dg, name)

        def call(*a, **kw):
            seen[name] = kw
            if stop:
                raise _Stop
            return real(*a, **kw)
        monkeypatch.setattr(dg, name, call)

    for name in ("ks_score", "meta_correlation", "sample_size"):
        recording(name)
    recording("correlation_design", stop=True)
    base = ("diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2", "--sizes", "5",
            "--n-resamples", 3, "--rng", 0)
    res = run(*base, "--pvalue", "asymp", "--meta-method", "kendall_b", "--alternative", "greater",
              "--alpha", "system=0.05,global=0.001", "--correction", "holm")
    assert isinstance(res.exception, _Stop), res.output
    assert seen["ks_score"]["pvalue"] == "asymp"
    assert {k: seen["meta_correlation"][k] for k in ("meta_method", "alternative")} == {
        "meta_method": "kendall_b", "alternative": "greater"}
    assert {k: seen["correlation_design"][k] for k in ("alpha", "correction", "alternative")} == {
        "alpha": {"system": 0.05, "global": 0.001}, "correction": "holm", "alternative": "greater"}
    res = run(*base, "--alpha", "0.01")
    assert isinstance(res.exception, _Stop), res.output
    assert seen["correlation_design"]["alpha"] == 0.01
    passed = set(seen["ks_score"]) | set(seen["meta_correlation"]) | set(seen["correlation_design"])
    assert not {"pvalue", "meta_method", "alternative", "correction"} & passed
    res = run(*base, "--alpha", "five")
    assert res.exit_code == 2 and "--alpha" in res.output and "system=0.05,global=0.001" in res.output


def test_diagnose_reference_options_need_reference_metrics():
    res = run("diagnose", "summeval", "--human", "coherence", "--coverage", "0.9", "--level", "system")
    assert res.exit_code == 2
    assert "--level, --coverage set the reference-sensitivity study only" in res.output
    assert "give --reference-metrics too" in res.output


def test_diagnose_reference_level_and_coverage_reach_reference_sensitivity(monkeypatch):
    pytest = __import__("pytest")
    pytest.importorskip("sacrebleu")
    seen = {}

    def record(*a, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(dg, "reference_sensitivity", record)
    res = run("diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2", "--sizes", "5",
              "--n-resamples", 3, "--rng", 1, "--reference-metrics", "bleu", "--reference-draws", 7,
              "--level", "group-by-system", "--coverage", "0.8")
    assert isinstance(res.exception, _Stop), res.output
    assert {k: seen[k] for k in ("level", "coverage", "n_resamples", "rng")} == {
        "level": "item", "coverage": 0.8, "n_resamples": 7, "rng": 1}


def test_alpha_naming_an_unknown_level_is_named_not_reported_missing():
    """Regression: --alpha sys=0.05 said "alpha has no value for level(s) system, global", as if
    the value had not been given; the misspelt level is named now (by the analysis, so the API
    says the same)."""
    import pytest

    res = run("diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU,ROUGE.2", "--sizes", "5",
              "--n-resamples", 3, "--rng", 0, "--alpha", "sys=0.05,global=0.001")
    assert res.exit_code == 2 and "alpha names 'sys', not a level of the design" in res.output, res.output
    with pytest.raises(metaeval.ParameterError, match="alpha names 'sys'"):
        dg.correlation_design(metaeval.load_dataset("summeval"), alpha={"sys": 0.05, "global": 0.001})
