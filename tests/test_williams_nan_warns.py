"""Williams' test over 3 units has n - 3 = 0 degrees of freedom: its p-value is NaN, and
compare now says so with an UndefinedStatisticWarning.  Regression (this session's review):
the NaN p-value came without any warning."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import metaeval
from metaeval.errors import UndefinedStatisticWarning


def _ds(n_sys):
    rng = np.random.default_rng(7)
    h = rng.normal(size=(n_sys, 6))
    return metaeval.Dataset.from_arrays(
        {"h": h, "a": h + rng.normal(size=h.shape), "b": h + rng.normal(size=h.shape)}, human=["h"])


def test_three_systems_warn():
    with pytest.warns(UndefinedStatisticWarning, match="n - 3 degrees of freedom"):
        c = metaeval.compare(_ds(3), "h", "a", "b", level="system", test="williams")
    assert math.isnan(c.pvalue)


def test_enough_systems_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedStatisticWarning)
        c = metaeval.compare(_ds(8), "h", "a", "b", level="system", test="williams")
    assert 0 < c.pvalue <= 1
