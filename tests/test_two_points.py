"""A correlation across two systems (or two inputs at the item level) is +-1 whatever the
scores: correlate says so with a SmallSampleWarning.  Regression (this session's review):
``correlate`` on a 2-system file printed 1.0000 with n = 2 and no warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import metaeval
from metaeval.errors import SmallSampleWarning


def _ds(n_sys, n_in, seed=0):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n_sys, n_in))
    return metaeval.Dataset.from_arrays({"h": h, "m": h + rng.normal(size=h.shape)}, human=["h"])


@pytest.mark.parametrize("level, shape", [("system", (2, 6)), ("input", (2, 6)), ("item", (6, 2))])
def test_two_points_warn(level, shape):
    with pytest.warns(SmallSampleWarning, match="across 2"):
        r = metaeval.correlate(_ds(*shape), "h", level=level, method="pearson", ci="none")
    assert all(abs(abs(g) - 1) < 1e-12 for g in r[0].group_statistics)  # the closed form: +-1


def test_three_points_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        metaeval.correlate(_ds(3, 3), "h", level=["system", "input", "item"], ci="none")
