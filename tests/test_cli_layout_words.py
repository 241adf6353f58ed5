"""Issue 25.4-5: the same layout options on every command that reads data, a way to declare no
metrics and one unnamed system, --bounds meaning what Dataset(bounds=) means, --quiet, and
soft pairwise accuracy on any file (``metaeval spa``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval.cli import COMMANDS, main
from metaeval.data import Dataset


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def one_system(tmp_path_factory):
    """One system's outputs (no system column) with an id column and three raters in columns."""
    rng = np.random.default_rng(0)
    rows = [{"id": k, "input": f"i{k}", "r1": int(rng.integers(1, 6)), "r2": int(rng.integers(1, 6)),
             "r3": int(rng.integers(1, 6)), "m": float(rng.normal())} for k in range(12)]
    path = tmp_path_factory.mktemp("one") / "one.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, pd.DataFrame(rows)


def test_from_frame_system_none_is_one_system(one_system):
    _, df = one_system
    ds = Dataset.from_frame(df.drop(columns=["id"]), system=None, human=["r1"], metrics=["m"])
    assert ds.systems == ("system",) and ds.inputs == tuple(df["input"])
    np.testing.assert_array_equal(ds.scores("m")[0], df["m"].to_numpy())


def test_from_frame_system_none_refuses_a_system_column():
    df = pd.DataFrame({"system": ["a", "b"], "input": ["x", "x"], "h": [1, 2], "m": [0.1, 0.2]})
    with pytest.raises(metaeval.ParameterError, match="system='system'"):
        Dataset.from_frame(df, system=None, human="h")


def test_system_none_and_metrics_none_on_a_rater_file(one_system):
    path, df = one_system
    res = run("reliability", path, "--system", "none", "--raters", "q=r1,r2,r3", "--human", "q",
              "--metrics", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out) == {"agreement"}  # no metric: no consistency of the id column
    # without --metrics none the id column is taken for a metric (flagged as an id)
    res = run("reliability", path, "--system", "none", "--raters", "q=r1,r2,r3", "--human", "q")
    assert "'id'" in res.stderr


def test_metrics_none_in_every_data_option_help():
    for name in ("correlate", "compare", "measures", "diagnose", "spa"):
        text = run(name, "--help").output
        assert "none: no metric column" in " ".join(text.split()), name


def test_every_command_that_reads_a_data_file_has_the_layout_options():
    readers = ["correlate", "compare", "measures", "reliability", "validity", "diagnose", "score", "perturb",
               "local", "judge", "report", "simulate", "spa"]
    for name in readers:
        opts = {o for p in main.commands[name].params for o in getattr(p, "opts", [])}
        for flag in ("--system", "--input", "--systems", "--exclude-systems", "--where", "--raters",
                     "--bounds", "--missing-values"):
            assert flag in opts, (name, flag)


def test_simulate_from_data_reads_the_label_columns(tmp_path):
    ds = metaeval.load_dataset("summeval")
    frame = ds.to_frame().rename(columns={"system": "model", "input": "doc"})
    path = tmp_path / "renamed.csv"
    frame[["model", "doc", "coherence", "ROUGE.1"]].to_csv(path, index=False)
    args = ["--human", "coherence", "--metrics", "ROUGE.1", "--n-iterations", 2, "--n-discretizations", 2,
            "--level", "system", "--method", "pearson", "--rng", 0, "--format", "json"]
    res = run("simulate", "--from-data", path, "--system", "model", "--input", "doc", *args)
    assert res.exit_code == 0, res.output
    ref = run("simulate", "--from-data", "summeval", *args)
    assert json.loads(res.stdout)[0]["statistic"] == json.loads(ref.stdout)[0]["statistic"]


def test_simulate_bounds_pair_is_the_human_scale_as_in_dataset_bounds():
    """Dataset(bounds=(1, 5)) declares the scale of every human column; simulate --bounds 1:5 the
    same (it once applied to the metrics too, normalizing ROUGE by 1..5)."""
    from metaeval import simulation as sim

    ds = metaeval.load_dataset("summeval")
    res = run("simulate", "--from-data", "summeval", "--human", "coherence", "--metrics", "ROUGE.1",
              "--bounds", "1:5", "--n-iterations", 2, "--n-discretizations", 2, "--level", "system",
              "--method", "pearson", "--rng", 0, "--format", "json")
    assert res.exit_code == 0, res.output
    want = sim.simulate_dataset(ds, "coherence", "ROUGE.1", bounds={"coherence": (1.0, 5.0)}, n_iterations=2,
                                n_discretizations=2, level="system", method="pearson", rng=0).to_frame()
    assert json.loads(res.stdout)[0]["statistic"] == want.statistic[0]


def test_quiet_prints_no_note_or_estimate_but_the_warnings(one_system):
    # --quiet once hid the warnings too, among them the ones that say why a value is NaN
    # (tests/test_cli_blind_run_open.py); it hides notes, progress and estimates
    path, _ = one_system
    args = ["reliability", path, "--system", "none", "--raters", "q=r1,r2,r3", "--human", "q"]
    loud = run(*args).stderr
    assert "note:" in loud and "warning (UndefinedStatisticWarning)" in loud  # alpha of 1 system: NaN
    res = run(*args, "--quiet")
    assert res.exit_code == 0
    assert res.stderr.splitlines() == [ln for ln in loud.splitlines() if "warning (" in ln]


def test_every_command_has_quiet():
    for name in COMMANDS:
        assert any("--quiet" in p.opts for p in main.commands[name].params), name


def test_spa_command_is_the_api(tmp_path):
    from metaeval.wmt import compare_spa, soft_pairwise_accuracy

    ds = metaeval.load_dataset("summeval")
    res = run("spa", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,BLEU", "--n-permutations", 50,
              "--precision", "float32", "--rng", 1, "--format", "json")
    assert res.exit_code == 0, res.output
    want = soft_pairwise_accuracy(ds, "coherence", metrics=["ROUGE.1", "BLEU"], n_permutations=50,
                                  precision="float32", rng=1).to_frame()
    assert [r["statistic"] for r in json.loads(res.stdout)] == list(want.statistic)
    res = run("spa", "summeval", "--human", "coherence", "--compare", "ROUGE.1,BLEU", "--n-permutations", 50,
              "--n-resamples", 40, "--rng", 1, "--format", "json")
    assert res.exit_code == 0, res.output
    c = compare_spa(ds, "coherence", "ROUGE.1", "BLEU", n_permutations=50, n_resamples=40, rng=1)
    got = json.loads(res.stdout)
    assert got["statistic"] == c.statistic and got["pvalue"] == c.pvalue
    bad = run("spa", "summeval", "--human", "coherence", "--compare", "ROUGE.1,BLEU", "--ci", "boot-inputs")
    assert bad.exit_code == 2 and "--ci" in bad.stderr
