"""The findings a blind run of the command line on generated data left open (issue 25/26 stop note).

Each test generates its own data (rotating raters, raters in columns, sparse cells, 2-3 systems),
is named after the problem it pins, and fails without its fix. Expected numbers come from scipy
on the generated cells.
"""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import metaeval
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _rotating(tmp_path, n_systems=3, n_inputs=8, seed=0):
    """A long file: each cell rated by 3 of 7 raters in rotation, metric values repeated on each
    rater row; returns the path and the cells (rater means) as a frame."""
    g = np.random.default_rng(seed)
    rows = []
    for s in range(n_systems):
        q = g.normal()
        for i in range(n_inputs):
            bleu = float(1 / (1 + np.exp(-(q + g.normal()))))
            chrf = float(1 / (1 + np.exp(-(q + g.normal()))))
            for r in range(3):
                rows.append({"system": f"s{s}", "input": f"i{i}", "rater": f"w{(s + i + r) % 7}",
                             "quality": float(np.clip(np.round(3 + q + g.normal()), 1, 5)), "bleu": bleu,
                             "chrf": chrf})
    df = pd.DataFrame(rows)
    path = tmp_path / "rotating.csv"
    df.to_csv(path, index=False)
    cells = df.groupby(["system", "input"], as_index=False).agg(
        quality=("quality", "mean"), bleu=("bleu", "first"), chrf=("chrf", "first"))
    return path, cells


# --------------------------------------------------------------------------- finding 1


def test_level_item_printed_by_the_outputs_was_refused_by_level(tmp_path):
    """correlate's table, CSV, JSON and signature print the level `item`, which `--level item`
    refused (it asked for group-by-system): what an output prints can be typed back, with the
    same numbers, and typing `item` says which grouping it is (not mt-metrics-eval's)."""
    path, cells = _rotating(tmp_path)
    base = ["correlate", path, "--human", "quality", "--rater", "rater", "--metrics", "bleu",
            "--ci", "none", "--pvalue", "none"]
    res = run(*base, "--level", "group-by-system", "--format", "csv")
    assert res.exit_code == 0, res.output
    first = pd.read_csv(io.StringIO(res.stdout))
    printed = first.level[0]
    assert printed == "item" and "|level:item|" in first.signature[0]
    table = run(*base, "--level", "group-by-system")
    assert table.exit_code == 0 and " item " in table.stdout
    back = run(*base, "--level", printed, "--format", "json")
    assert back.exit_code == 0, back.output
    rec = json.loads(back.stdout)[0]
    assert rec["level"] == "item" and rec["statistic"] == first.statistic[0]
    # item level: per system, Pearson across its inputs, macro-averaged (scipy)
    want = np.mean([stats.pearsonr(g.bleu, g.quality).statistic for _, g in cells.groupby("system")])
    assert rec["statistic"] == pytest.approx(want, abs=1e-12)
    assert "mt-metrics-eval's 'item' grouping" in back.stderr and "is level 'input'" in back.stderr
    # the default (all four levels) says nothing about item; --quiet hides the note
    assert "mt-metrics-eval" not in run(*base, "--level", "system,group-by-system").stderr
    assert "mt-metrics-eval" not in run(*base, "--level", "item", "--quiet").stderr
    # measures prints item:... measure rows, which --measures takes back
    meas = run("measures", path, "--human", "quality", "--rater", "rater", "--level", "group-by-system",
               "--method", "pearson", "--n-resamples", 20, "--n-splits", 0, "--rng", 0, "--format", "csv")
    assert meas.exit_code == 0, meas.output
    lv = pd.read_csv(io.StringIO(meas.stdout)).level[0]
    assert lv == "item"
    again = run("measures", path, "--human", "quality", "--rater", "rater", "--measures", f"{lv}:pearson",
                "--n-resamples", 20, "--n-splits", 0, "--rng", 0, "--format", "csv")
    assert again.exit_code == 0, again.output
    assert again.stdout == meas.stdout
