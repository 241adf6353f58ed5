"""Regression tests from the review of the merged issue-13 (one vocabulary, one
result base) and issue-16/14(c) (given system scores, out-of-scale codes) work.
Each test failed before its fix."""

from __future__ import annotations

import html

import numpy as np
import pytest

import metaeval
from metaeval.data import Dataset


def _toy(seed=0, n=5, m=12):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, m))
    return Dataset.from_arrays(
        {"h": h, "a": h + rng.normal(size=(n, m)), "b": rng.normal(size=(n, m)),
         "c": h + 2 * rng.normal(size=(n, m))},
        human="h",
    )


def test_comparisons_has_the_result_views():
    """docs/architecture.md: every result has a Jupyter HTML view with its signature;
    compare_all's Comparisons had none (AttributeError)."""
    res = metaeval.compare_all(_toy(), "h", n_resamples=100, rng=0)
    page = res._repr_html_()
    assert html.escape(res.signature) in page
    # one table row per pair, as to_frame()
    assert page.count("<tr") == len(res.to_frame()) + 1  # and the header
