"""The `metaeval simulate` command against metaeval.simulation (tested
against closed forms and slow references in test_simulation.py)."""

import io
import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

import metaeval
from metaeval import simulation as sim
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_simulate_grid_csv_matches_library(tmp_path):
    args = ["simulate", "--c-m", "2,4", "--c-h", "2,4", "--scale", "equal", "--sizes", "6x20",
            "--n-iterations", 3, "--n-discretizations", 2, "--levels", "system,global",
            "--methods", "pearson,kendall_b", "--seed", 3, "--format", "csv", "--out", tmp_path]
    res = run(*args)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output))
    want = sim.simulate(c_m=[2, 4], c_h=[2, 4], scale="equal", sizes=[(6, 20)], n_iterations=3,
                        n_discretizations=2, level=["system", "global"],
                        method=["pearson", "kendall_b"], rng=3).to_frame()
    np.testing.assert_allclose(got.statistic, want.statistic)
    assert len(got) == 2 * 4
    for f in ("simulation.csv", "simulation.json", "simulation.png"):
        assert (tmp_path / f).exists(), f
    # restarting in the same folder loads the finished units: same numbers
    again = run(*args)
    assert again.output == res.output


def test_simulate_from_data_uses_the_estimates():
    res = run("simulate", "--from-data", "summeval", "--human", "coherence", "--metrics",
              "ROUGE.1", "--n-iterations", 3, "--n-discretizations", 2, "--levels", "system",
              "--methods", "pearson", "--seed", 0, "--format", "json")
    assert res.exit_code == 0, res.output
    rec = json.loads(res.output)[0]
    ds = metaeval.load_dataset("summeval")
    p = sim.dataset_parameters(ds, "coherence", "ROUGE.1")
    assert rec["rho_sys"] == p["rho_sys"] and rec["n_systems"] == 17
    want = sim.simulate_dataset(ds, "coherence", "ROUGE.1", n_iterations=3, n_discretizations=2,
                                level="system", method="pearson", rng=0).to_frame()
    assert rec["statistic"] == want.statistic[0]


def test_simulate_bad_options_are_one_line():
    res = run("simulate", "--sizes", "15by200")
    assert res.exit_code == 2 and "NxM" in res.output
    res = run("simulate", "--grid", "figure-9")
    assert res.exit_code == 2 and "figure-9" in res.output
    res = run("simulate", "--from-data", "summeval")
    assert res.exit_code == 2 and "--human" in res.output
    res = run("simulate", "--c-m", "1", "--c-h", "3", "--n-iterations", 2)
    assert res.exit_code == 2 and "c_m=1" in res.output  # the keyword, spelled --c-m on the command line


def _one_system_file(tmp_path):
    """A file of one unnamed system (no system column): 30 inputs, a 1-5 human column and a metric."""
    rng = np.random.default_rng(0)
    human = rng.integers(1, 6, 30)
    path = tmp_path / "one.csv"
    pd.DataFrame({"input": [f"i{k}" for k in range(30)], "human": human,
                  "metric": human + rng.normal(0, 1, 30)}).to_csv(path, index=False)
    return path


def test_simulate_from_data_one_unnamed_system_names_the_system_option(tmp_path):
    """Blind run: `simulate --from-data FILE --system none` on a file of one system ended with
    "estimated sigma=nan cannot be simulated"; it is a one-line error saying the data has one
    system, why the simulation needs two, and the option that reads the system column."""
    path = _one_system_file(tmp_path)
    res = run("simulate", "--from-data", path, "--system", "none", "--human", "human",
              "--n-iterations", 2, "--n-discretizations", 2, "--rng", 0)
    err = res.output.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1, res.output
    assert "one.csv" in err and "has 1 system" in err and "at least 2 systems" in err, err
    assert "--system none" in err and "--system COL" in err and "nan" not in err, err
    # the rule lives in the analysis: the API says the same (without the option)
    ds = metaeval.Dataset.from_frame(pd.read_csv(path), system=None, human="human")
    for call in (lambda: sim.simulate_dataset(ds, "human", "metric", n_iterations=2),
                 lambda: sim.dataset_parameters(ds, "human", "metric")):
        try:
            call()
        except metaeval.DataError as exc:
            assert "has 1 system" in str(exc) and "--system" not in str(exc), exc
        else:
            raise AssertionError("one system was simulated")


def test_simulate_from_data_bounds_error_names_the_bounds_option():
    """Blind run: values outside `--bounds` ended with "(choose the columns with --human and
    --metrics)", naming every option but the one given; the message names --bounds too."""
    res = run("simulate", "--from-data", "summeval", "--human", "coherence", "--metrics", "ROUGE.1",
              "--bounds", "3:5", "--n-iterations", 2, "--n-discretizations", 2, "--rng", 0)
    err = res.output.strip()
    assert res.exit_code == 2 and len(err.splitlines()) == 1, res.output
    assert "outside the declared scale [3, 5]" in err and "--bounds" in err, err
    # without --bounds, a column's problem names the options that choose the columns only
    res = run("simulate", "--from-data", "summeval", "--human", "coherence", "--metrics", "ROUGE.1",
              "--c-m", "1", "--n-iterations", 2)
    assert res.exit_code == 2 and "c_m=1" in res.output and "--bounds" not in res.output, res.output


def test_simulate_reaches_every_model_parameter_and_average():
    # issue 25.4: mu_m, mu_h, sigma_m, sigma_h, sigma_item_m/h and average were API-only
    res = run("simulate", "--mu-m", "0.5", "--mu-h", -0.2, "--sigma-m", "0.3,0.4", "--sigma-h", 0.2,
              "--sigma-item-h", 0.05, "--average", "micro", "--sizes", "5x20", "--n-iterations", 3,
              "--level", "input", "--method", "pearson", "--rng", 1, "--format", "csv")
    assert res.exit_code == 0, res.output
    got = pd.read_csv(io.StringIO(res.output))
    want = sim.simulate(mu_m=0.5, mu_h=-0.2, sigma_m=[0.3, 0.4], sigma_h=0.2, sigma_item_h=0.05,
                        average="micro", sizes=[(5, 20)], n_iterations=3, level="input",
                        method="pearson", rng=1).to_frame()
    assert list(got.sigma_m) == [0.3, 0.4] and list(got.sigma_item_m) == [0.3, 0.4]  # = sigma_m
    assert set(got.sigma_item_h) == {0.05} and all("avg:micro" in s for s in got.signature)
    np.testing.assert_array_equal(got.statistic, want.statistic)
