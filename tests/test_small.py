"""The small-batch path without numba (metaeval.stats._small, issue 26.2) gives
the numba kernels' bits.

Reference: the numba kernels themselves (metaeval.stats._kernels), an
independent implementation (compiled loops; exact means in 32-bit limbs), and
for the means also exact rational arithmetic (fractions.Fraction, rounded by
Python's correctly rounded int/int division).  Every comparison is bit for bit
(the float64 patterns, NaN included), on random and adversarial batches:
ties, constant and one-item groups, NaN and infinite values, signed zeros,
values on and off the rational grid, magnitudes near the float limits.
"""

import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from metaeval.stats import _kernels, _small
from metaeval.stats.exact import GRID, GRID_TOL, _kmax

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _bits(a):
    a = np.ascontiguousarray(np.asarray(a, float))
    b = a.view(np.uint64).copy()
    b[np.isnan(a)] = 0x7FF8000000000000  # one NaN pattern
    return b


def _assert_bits(got, want, what):
    bad = np.flatnonzero(_bits(got).ravel() != _bits(want).ravel())
    assert bad.size == 0, f"{what}: {bad.size} differ, first {np.ravel(got)[bad[:3]]} vs {np.ravel(want)[bad[:3]]}"


def _adversarial_row(g, n):
    """One row of a kind drawn at random."""
    kind = g.integers(12)
    if kind == 0:  # Likert-like ties
        v = g.integers(1, 6, n).astype(float)
    elif kind == 1:  # means of 3 ratings (the grid's thirds)
        v = g.integers(3, 16, n) / 3.0
    elif kind == 2:  # huge magnitudes (scaled by a power of two in the kernel)
        v = g.normal(size=n) * 10.0 ** g.integers(150, 308)
    elif kind == 3:  # tiny and subnormal magnitudes
        v = g.normal(size=n) * 10.0 ** -g.integers(150, 320)
    elif kind == 4:  # a large mean against a small spread
        v = 1e9 + g.normal(size=n) * 1e-3
    elif kind == 5:  # constant
        v = np.full(n, g.normal())
    elif kind == 6:  # signed zeros and a few values
        v = g.choice([0.0, -0.0, 1.0, -1.0], n)
    elif kind == 7 and n:  # one huge outlier among small values
        v = g.normal(size=n)
        v[g.integers(n)] = 1e300
    elif kind == 8:  # near the largest float
        v = np.nextafter(np.finfo(float).max, 0) * g.choice([-1.0, 1.0, 0.5], n)
    else:
        v = g.normal(size=n)
    v = v.astype(float)
    holes = g.random(n) < g.choice([0.0, 0.1, 0.5])
    v[holes] = g.choice([np.nan, np.inf, -np.inf], holes.sum())
    return v


def test_pearson_rows_same_bits_as_the_kernel():
    g = np.random.default_rng(20261128)
    cases = 0
    for _ in range(2000):
        B, G, n = int(g.integers(1, 4)), int(g.integers(1, 5)), int(g.integers(0, 40))
        x = np.array([[_adversarial_row(g, n) for _ in range(G)] for _ in range(B)]).reshape(B, G, n)
        shared = g.random() < 0.5
        yb = 1 if shared else B
        y = np.array([[_adversarial_row(g, n) for _ in range(G)] for _ in range(yb)]).reshape(yb, G, n)
        with np.errstate(all="ignore"):
            if g.random() < 0.2:  # the metric a copy or an affine image of the human score
                x = np.ascontiguousarray(np.broadcast_to(y, x.shape) * g.choice([1.0, -2.0, 1e-300]) + 0.0)
            want = _kernels.pearson_rows(np.ascontiguousarray(x), np.ascontiguousarray(y))
            got = _small.pearson_rows(x, y)
        _assert_bits(got, want, f"pearson {B}x{G}x{n}")
        cases += B * G
    assert cases > 8000


def test_pearson_rows_same_bits_on_plain_random_data():
    """The command-line case: small groups of ordinary floats, thousands of them."""
    g = np.random.default_rng(7)
    for n in (2, 3, 5, 17, 100, 1700):
        G = max(1, 4000 // n)
        x = g.normal(size=(1, G, n)) * g.lognormal(size=(1, G, 1)) + g.normal(size=(1, G, 1)) * 10
        y = g.integers(1, 6, size=(1, G, n)) / 3.0
        _assert_bits(_small.pearson_rows(x, y), _kernels.pearson_rows(x, y), f"n={n}")


def _fraction_mean(values):
    values = [v for v in values if np.isfinite(v)]
    if not values:
        return np.nan
    s = sum(Fraction(v) for v in values) / len(values)
    return s.numerator / s.denominator  # correctly rounded (CPython int/int)


def test_exact_means_same_bits_as_the_kernel():
    g = np.random.default_rng(3)
    for _ in range(400):
        rows_per_unit = int(g.integers(1, 4))
        R, L = rows_per_unit * int(g.integers(1, 4)), int(g.integers(1, 30))
        vals = np.array([_adversarial_row(g, L) for _ in range(R)]).reshape(R, L)
        valid = np.isfinite(vals) & (g.random((R, L)) < 0.9)
        args = (rows_per_unit, float(GRID), _kmax(L), GRID_TOL)
        want = _kernels.exact_means(vals, valid, *args)
        _assert_bits(_small.exact_means(vals, valid, *args), want, f"exact_means {R}x{L}")


def test_exact_means_off_the_grid_are_the_rational_means():
    """Off the grid the mean is the exact mean of the floats, rounded once."""
    g = np.random.default_rng(5)
    for _ in range(300):
        L = int(g.integers(1, 25))
        vals = np.array([_adversarial_row(g, L) for _ in range(3)])
        vals[0, 0] = 0.1234567  # off the grid: the exact sums for the unit
        valid = np.isfinite(vals)
        got = _small.exact_means(vals, valid, 3, float(GRID), _kmax(L), GRID_TOL)
        want = [_fraction_mean(r) for r in vals]
        _assert_bits(got, want, "fraction")


def test_exact_col_means_same_bits_as_the_kernel():
    g = np.random.default_rng(11)
    for _ in range(300):
        R, K = int(g.integers(1, 6)), int(g.integers(1, 60))
        vals = np.array([_adversarial_row(g, K) for _ in range(R)]).reshape(R, K)
        if g.random() < 0.5:  # ratings: the whole array on the grid
            vals = np.where(np.isfinite(vals), g.integers(1, 6, (R, K)), vals).astype(float)
        args = (float(GRID), _kmax(R), GRID_TOL)
        _assert_bits(_small.exact_col_means(vals, *args), _kernels.exact_col_means(vals, *args),
                     f"exact_col_means {R}x{K}")


def test_the_dispatch_uses_the_small_path_only_without_numba():
    assert not _small.suits(_small.SMALL_MAX)  # numba is loaded in this process
    code = ("import sys; from metaeval.stats import _small; "
            "print(_small.suits(17), _small.suits(_small.SMALL_MAX + 1), 'numba' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["True", "False", "False"], out.stderr


@pytest.mark.parametrize("level", ["system", "input", "global"])
def test_small_correlation_without_numba_equals_the_kernel_path_regression_26_2(level):
    """Regression (26.2): a system-level correlation of 17 means loaded numba
    (0.6-0.8 CPU-s) for its three kernels (rater means, system means, Pearson).
    Run in a fresh process it now loads no numba; its numbers are the kernels'
    bits, computed here (numba loaded) by the kernels."""
    import metaeval

    code = f"""
import json, sys, metaeval
ds = metaeval.load_dataset("summeval")
r = metaeval.correlate(ds, "coherence", metrics=["ROUGE.1", "BLEU", "BertScore_f1"], level="{level}",
                       ci="none", pvalue="none")
print(json.dumps(["numba" in sys.modules, [x.statistic.hex() for x in r]]))
"""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    import json

    numba_loaded, stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert numba_loaded is False
    ds = metaeval.load_dataset("summeval")
    here = metaeval.correlate(ds, "coherence", metrics=["ROUGE.1", "BLEU", "BertScore_f1"], level=level,
                              ci="none", pvalue="none")
    assert "numba" in sys.modules
    assert stats == [x.statistic.hex() for x in here]
