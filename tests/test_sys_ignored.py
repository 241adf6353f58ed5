"""Analyses that do not take given system-level scores say so (SystemScoresWarning) when the
dataset carries some, instead of silently using the means of the cells.  Regression (this
session's review): discriminative_power, soft_pairwise_accuracy, ... used cell means with no
warning and no sys: key."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import metaeval
from metaeval.errors import SystemScoresWarning
from metaeval.measures import discriminative_power, ranking_consistency
from metaeval.simulation import estimate_parameters
from metaeval.wmt import soft_pairwise_accuracy


def _ds(given=True):
    rng = np.random.default_rng(2)
    h = rng.integers(1, 6, size=(5, 8)).astype(float)
    cols = {"h": h, "a": h + rng.normal(size=h.shape), "b": h + rng.normal(size=h.shape),
            "c": h + rng.normal(size=h.shape)}
    ds = metaeval.Dataset.from_arrays(cols, human=["h"])
    if given:
        ds = ds.with_system_scores({"a": np.arange(5.0)})
    return ds


CALLS = {
    "discriminative_power": lambda ds: discriminative_power(
        ds, "h", levels="system", methods="pearson", n_resamples=9, rng=0),
    "ranking_consistency": lambda ds: ranking_consistency(
        ds, "h", levels="system", methods="pearson", n_splits=3, rng=0),
    "estimate_parameters": lambda ds: estimate_parameters(ds, "h"),
    "soft_pairwise_accuracy": lambda ds: soft_pairwise_accuracy(ds, "h", n_permutations=9, rng=0),
    # found by review2: concurrent_validity's system level took the cell means of 'a' silently
    # (correlate uses its given scores: another number for the same metric, level and method)
    "concurrent_validity": lambda ds: metaeval.concurrent_validity(ds, criteria=["h"], metrics=["a", "b"]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_warns_when_given_scores_are_not_used(name):
    with pytest.warns(SystemScoresWarning, match="not used by it"):
        CALLS[name](_ds(given=True))


@pytest.mark.parametrize("name", list(CALLS))
def test_silent_without_given_scores(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SystemScoresWarning)
        CALLS[name](_ds(given=False))


def test_read_system_scores_names_an_infinite_value_as_the_file_reads_it(tmp_path):
    """The error for a non-finite score shows the value (inf), not numpy's repr
    np.float64(inf) (found by review2)."""
    from metaeval.data.sysscores import read_system_scores
    from metaeval.errors import DataError

    p = tmp_path / "s.csv"
    p.write_text("system,m\nA,1e400\nB,2\n")
    with pytest.raises(DataError) as exc:
        read_system_scores(p, ["A", "B"], ["m"])
    msg = str(exc.value)
    assert "line 2" in msg and "finite number: inf " in msg and "np.float64" not in msg, msg
