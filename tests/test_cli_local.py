"""The `metaeval local` command against metaeval.local (which test_local.py checks against
scipy, exact enumeration and slow references) and metaeval.perturb.score_perturbed."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval import local as lc
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def human_file(tmp_path):
    rng = np.random.default_rng(7)
    rows = []
    for s in range(4):
        for i in range(12):
            h = float(rng.integers(1, 6))
            rows.append({"system": f"s{s}", "input": f"i{i}", "human": h,
                         "m1": h + rng.normal(0, 1), "m2": h + rng.normal(0, 2), "m3": rng.normal(),
                         "domain": "news" if i < 6 else "chat"})
    path = tmp_path / "d.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_local_human_pairs_match_the_library(human_file, tmp_path):
    out = tmp_path / "out"
    res = run("local", human_file, "--human", "human", "--metrics", "m1,m2,m3", "--contexts", "domain",
              "--context", "domain", "--seed", 3, "--tau-resamples", 99, "--chi2-resamples", 199,
              "--format", "csv", "--out", out)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.stdout))
    ds = metaeval.read_dataset(human_file, human="human", metrics=["m1", "m2", "m3"], contexts=["domain"])
    pairs = lc.local_pairs(ds, context="domain", human="human")
    acc = lc.local_accuracy(pairs).to_frame()
    with pytest.warns(metaeval.SmallExpectedCountWarning):  # the CLI's default test="auto"
        chi = lc.context_chi2(pairs, n_resamples=199, rng=3).to_frame()
    tau = lc.context_tau(pairs, n_resamples=99, rng=3).to_frame()
    np.testing.assert_allclose(got[got.analysis == "accuracy"].statistic, acc.statistic, rtol=1e-12)
    np.testing.assert_allclose(got[got.analysis == "chi2"].pvalue, chi.pvalue, rtol=1e-12)
    np.testing.assert_allclose(got[got.analysis == "tau"].pvalue, tau.pvalue, rtol=1e-12)
    for f in ("local_accuracy.csv", "chi2.csv", "tau.csv", "clusters.csv", "local.json",
              "accuracy.png", "tau.png"):
        assert (out / f).exists(), f
    doc = json.loads((out / "local.json").read_text())
    assert set(doc) == {"accuracy", "chi2", "tau"}


def test_local_perturbation_pairs_match_score_perturbed(tmp_path):
    pytest.importorskip("sacrebleu")
    refs = {"i0": "the cat sat on the mat near the door today",
            "i1": "a quick brown fox jumps over the lazy dog again",
            "i2": "we will meet at the station before noon on monday"}
    rows, texts = [], []
    for s, noise in (("A", 0), ("B", 2)):
        for i, r in refs.items():
            words = r.split()
            hyp = " ".join(words[noise:] + words[:noise])
            rows.append({"system": s, "input": i, "human": 5.0 - noise})
            texts.append({"system": s, "input": i, "hypothesis": hyp, "references": [r]})
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(t) for t in texts) + "\n")
    res = run("local", tmp_path / "d.csv", "--texts", tmp_path / "t.jsonl", "--human", "human",
              "--perturbation", "drop_words", "--option", "fraction=0.3", "--metrics", "bleu,chrf,ter",
              "--context", "system", "--seed", 2, "--tau-resamples", 19, "--chi2-resamples", 99,
              "--format", "json")
    assert res.exit_code == 0, res.output
    got = pd.DataFrame(json.loads(res.stdout)["accuracy"])
    from metaeval.perturb import score_perturbed

    ds = metaeval.read_dataset(tmp_path / "d.csv", human="human", metrics=[],
                               texts=pd.read_json(tmp_path / "t.jsonl", lines=True))
    ps = score_perturbed(ds, "drop_words", ["bleu", "chrf", "ter"], rng=2, options={"fraction": 0.3})
    want = lc.local_accuracy(lc.local_pairs(ps, context="system")).to_frame()
    np.testing.assert_allclose(got.statistic, want.statistic, rtol=1e-12)
    # TER is lower-is-better: dropping words from an output raises its TER, so it is correct here
    assert got[got.metric == "ter"].statistic.min() > 0.5


def test_local_errors(human_file):
    res = run("local", human_file, "--context", "system")
    assert res.exit_code == 2 and "give --perturbation" in res.output
    # a column of the file is a context without --contexts (blind run 2); a name that is no column
    # of the file is an error listing its columns
    res = run("local", human_file, "--human", "human", "--context", "domian")
    assert res.exit_code == 2 and "'domian'" in res.output and "'domain'" in res.output
    res = run("local", human_file, "--human", "human", "--metrics", "m1", "--context", "system",
              "--option", "fraction=0.1")
    assert res.exit_code == 2 and "--option needs --perturbation" in res.output
    res = run("local", human_file, "--perturbation", "drop_words", "--metrics", "bleu",
              "--context", "system")
    assert res.exit_code == 2 and "needs --texts" in res.output


def test_local_human_pairs_with_a_lower_is_better_column(tmp_path):
    """Regression (review): a WER column was read as higher-is-better (accuracy 0 everywhere).
    Expected: WER = 5 - human orders every pair like the human scores, so its accuracy is 1."""
    rows = []
    for s in range(3):
        for i in range(6):
            h = float((s * 7 + i * 3) % 5 + 1)
            rows.append({"system": f"s{s}", "input": f"i{i}", "human": h, "wer": 5.0 - h,
                         "m2": h, "domain": "a" if i < 3 else "b"})
    path = tmp_path / "h.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    args = ("local", path, "--human", "human", "--metrics", "wer,m2", "--contexts", "domain",
            "--context", "domain", "--seed", 0, "--tau-resamples", 9, "--chi2-resamples", 9,
            "--format", "json")
    res = run(*args)  # named like the text metric: taken as lower-is-better, and said
    assert res.exit_code == 0, res.output
    assert "taking wer as lower-is-better" in res.stderr
    acc = pd.DataFrame(json.loads(res.stdout)["accuracy"])
    assert (acc[acc.metric == "wer"].statistic == 1.0).all()
    assert "lower:wer" in acc.signature[0]
    res = run(*args, "--lower-is-better", "none")  # explicit: no column is lower-is-better
    acc = pd.DataFrame(json.loads(res.stdout)["accuracy"])
    assert (acc[acc.metric == "wer"].statistic == 0.0).all()


def test_local_checks_before_scoring(human_file):
    res = run("local", human_file, "--human", "human", "--metrics", "m1", "--contexts", "domain",
              "--context", "domain")
    assert res.exit_code == 2 and "at least 2 metrics" in res.output
    res = run("local", human_file, "--perturbation", "drop_words", "--metrics", "bleu",
              "--context", "system", "--pair-context", "within")
    assert res.exit_code == 2 and "--pair-context applies to human pairs" in res.output
    one = pd.read_csv(human_file).assign(domain="news")
    one.to_csv(human_file, index=False)
    res = run("local", human_file, "--human", "human", "--contexts", "domain", "--context", "domain")
    assert res.exit_code == 2 and "has 1 label(s)" in res.output


def test_average_takes_macro_micro_and_their_earlier_names(human_file):
    """--average micro|macro (the correlations' names); pair|input give the same output."""
    base = ("local", human_file, "--human", "human", "--metrics", "m1,m2,m3", "--contexts", "domain",
            "--context", "domain", "--seed", 3, "--tau-resamples", 9, "--chi2-test", "asymptotic",
            "--format", "csv")
    out = {}
    for avg in ("micro", "pair", "macro", "input"):
        res = run(*base, "--average", avg)
        assert res.exit_code == 0, res.output
        out[avg] = res.stdout
    assert out["micro"] == out["pair"] and out["macro"] == out["input"] and out["micro"] != out["macro"]
    got = pd.read_csv(io.StringIO(out["micro"]))
    assert "avg:micro|" in got[got.analysis == "accuracy"].signature.iloc[0]
    bad = run(*base, "--average", "inputs")
    assert bad.exit_code == 2 and "'inputs' is not one of 'macro', 'micro'" in bad.stderr


class _Stop(Exception):
    pass


def test_local_options_reach_the_analyses(human_file, monkeypatch):
    """Issue 25.3: every generated option of `local` sets its keyword (the old spellings --seed and
    --jobs too), and an absent one is not passed (the analysis' default applies)."""
    seen = {}

    def recording(name):
        real = getattr(lc, name)

        def call(*a, **kw):
            seen[name] = kw
            return real(*a, **kw)
        monkeypatch.setattr(lc, name, call)

    for name in ("local_pairs", "local_accuracy", "context_chi2", "context_tau"):
        recording(name)
    base = ("local", human_file, "--human", "human", "--metrics", "m1,m2,m3", "--contexts", "domain",
            "--context", "domain", "--chi2-test", "asymptotic", "--tau-resamples", 9, "--format", "json")
    res = run(*base, "--pair-context", "within", "--lower-is-better", "m3", "--atol", "0.5", "--human-atol", "1",
              "--ci", "clopper-pearson", "--confidence-level", "0.9", "--n-clusters", 1, "--seed", 4, "--jobs", 1,
              "--correction", "bh")
    assert res.exit_code == 0, res.output
    assert {k: seen["local_pairs"][k] for k in ("pair_context", "lower_is_better", "atol", "human_atol")} == {
        "pair_context": "within", "lower_is_better": ("m3",), "atol": 0.5, "human_atol": 1.0}
    assert seen["local_accuracy"] == {"ci": "clopper-pearson", "confidence_level": 0.9}
    assert seen["context_chi2"] == {"correction": "bh", "test": "asymptotic", "rng": 4}
    assert seen["context_tau"] == {"correction": "bh", "n_clusters": 1, "n_resamples": 9, "rng": 4, "n_jobs": 1}
    res = run(*base, "--lower-is-better", "none", "--rng", 4)
    assert res.exit_code == 0, res.output
    assert seen["local_pairs"]["lower_is_better"] == ()
    assert set(seen["local_pairs"]) == {"context", "human", "metrics", "lower_is_better"}
    assert seen["local_accuracy"] == {} and set(seen["context_tau"]) == {"n_resamples", "rng"}


def test_local_perturbation_options_reach_score_perturbed(monkeypatch):
    import metaeval.perturb as mod

    seen = {}

    def record(*a, **kw):
        seen.update(kw)
        raise _Stop

    monkeypatch.setattr(mod, "score_perturbed", record)
    base = ("local", "summeval", "--perturbation", "drop_words", "--metrics", "bleu,chrf", "--context", "system")
    res = run(*base, "--multi-ref", "mean", "--n-jobs", 2, "--rng", 5)
    assert isinstance(res.exception, _Stop), res.output
    assert seen["multi_ref"] == "mean" and seen["n_jobs"] == 2 and seen["rng"] == 5
    seen.clear()
    res = run(*base, "--rng", 5)
    assert isinstance(res.exception, _Stop), res.output
    assert "multi_ref" not in seen and "n_jobs" not in seen


def test_local_refuses_options_of_the_other_kind_of_pairs(human_file):
    res = run("local", "summeval", "--perturbation", "drop_words", "--metrics", "bleu,chrf", "--context",
              "system", "--human-atol", "1")
    assert res.exit_code == 2 and "--human-atol applies to human pairs" in res.output
    res = run("local", human_file, "--human", "human", "--metrics", "m1,m2", "--contexts", "domain",
              "--context", "domain", "--multi-ref", "mean")
    assert res.exit_code == 2 and "--multi-ref applies to perturbation pairs" in res.output
