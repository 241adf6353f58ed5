"""The `metaeval preferences` command against metaeval.preferences (which
test_preferences.py checks against sklearn, statsmodels, krippendorff, scipy and slow loops)."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import preferences as pf
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def pref_file(tmp_path):
    rng = np.random.default_rng(1)
    rows = []
    for i in range(15):
        for a, b in (("s0", "s1"), ("s0", "s2"), ("s1", "s2")):
            for r in ("r1", "r2", "r3"):
                rows.append(dict(input=f"q{i}", system_a=a, system_b=b, rater=r, judge="",
                                 preference=[0.0, 0.5, 1.0][rng.integers(3)], order="",
                                 length_a=rng.integers(10, 90), length_b=rng.integers(10, 90)))
            for o in ("ab", "ba"):
                rows.append(dict(input=f"q{i}", system_a=a, system_b=b, rater="", judge="llm",
                                 preference=[0.0, 0.5, 1.0][rng.integers(3)], order=o))
    path = tmp_path / "prefs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_preferences_csv_matches_the_library(pref_file):
    res = run("preferences", pref_file, "--seed", 4, "--n-resamples", 99, "--format", "csv")
    assert res.exit_code == 0, res.output
    out = pd.read_csv(io.StringIO(res.output))
    assert set(out["analysis"]) == {"agreement", "position", "length", "bradley_terry"}
    data = pf.read_preferences(pref_file)
    lib = pf.preference_agreement(data, n_resamples=99, rng=4).to_frame()
    got = out[out["analysis"] == "agreement"].reset_index(drop=True)
    np.testing.assert_allclose(got["statistic"].to_numpy(float), lib["statistic"].to_numpy(float), equal_nan=True)
    np.testing.assert_allclose(got["ci_low"].to_numpy(float), lib["ci_low"].to_numpy(float), equal_nan=True)
    pos = pf.position_consistency(data, n_resamples=99, rng=4).get("llm")
    row = out[out["analysis"] == "position"].iloc[0]
    assert float(row["consistency"]) == pytest.approx(pos.consistency)


def test_preferences_table_and_json(pref_file):
    res = run("preferences", pref_file, "--seed", 1, "--n-resamples", 20, "--compare", "llm,llm2")
    assert res.exit_code == 2 and "metaeval: error:" in res.output and "llm2" in res.output
    res = run("preferences", pref_file, "--seed", 1, "--n-resamples", 20)
    assert res.exit_code == 0, res.output
    assert "agreement with the human raters" in res.output and "Bradley-Terry" in res.output
    res = run("preferences", pref_file, "--seed", 1, "--n-resamples", 20, "--format", "json")
    doc = json.loads(res.output)
    assert {"agreement", "position", "length", "bradley_terry", "ranking"} <= set(doc)


def test_preferences_bundled_summeval_and_errors(tmp_path):
    res = run("preferences", "summeval", "--human", "coherence", "--judges", "ROUGE.L,BertScore_f1",
              "--compare", "ROUGE.L,BertScore_f1", "--measure", "acc_23", "--seed", 0, "--n-resamples", 20,
              "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["compare"][0]["judge_a"] == "ROUGE.L"
    assert {r["judge"] for r in doc["agreement"]} == {"human", "ROUGE.L", "BertScore_f1"}
    res = run("preferences", "summeval")
    assert res.exit_code == 2 and "--human" in res.output
    res = run("preferences", "summeval", "--human", "coherence", "--judges", "NOPE")
    assert res.exit_code == 2 and "NOPE" in res.output
    bad = tmp_path / "bad.csv"
    bad.write_text("input,system_a,system_b,rater,preference\nq,A,B,r,2\n")
    res = run("preferences", bad)
    assert res.exit_code == 2 and res.output.startswith("metaeval: error: human preferences must be")


def test_preferences_unknown_judge_is_an_error(pref_file):
    res = run("preferences", pref_file, "--judges", "lllm", "--n-resamples", 0)
    assert res.exit_code == 2 and "judge 'lllm' is unknown" in res.output and "--judges" in res.output


def test_preferences_bundled_with_pairwise_judge_outputs(tmp_path):
    """A pairwise judge table (the 'metaeval judge --pairwise' layout) on SummEval's pairs."""
    import metaeval

    ds = metaeval.load_dataset("summeval")
    a, b = ds.systems[0], ds.systems[1]
    rng = np.random.default_rng(0)
    rows = [dict(input=i, system_a=a, system_b=b, judge="pairjudge", order=o,
                 preference=[0.0, 0.5, 1.0][rng.integers(3)], raw="x") for i in ds.inputs for o in ("ab", "ba")]
    path = tmp_path / "pairwise.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    res = run("preferences", "summeval", "--human", "coherence", "--judge-outputs", path, "--seed", 0,
              "--n-resamples", 20, "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    # the judge compares two systems only: no Bradley-Terry MLE for it, said on stderr
    assert "NonConvergenceWarning" in res.stderr
    assert {r["judge"] for r in doc["agreement"]} == {"human", "pairjudge"}
    data = pf.PreferenceData.from_dataset(ds, "coherence", metrics=[], judges=pd.read_csv(path))
    pos = pf.position_consistency(data, n_resamples=20, rng=0).get("pairjudge")
    assert doc["position"][0]["consistency"] == pytest.approx(pos.consistency)
    assert doc["position"][0]["n"] == 100
