"""The streaming tie calibration of acc_eq (issue 15.2) and its memory errors
(issue 14.1).

Oracles:

* ``brute_acc_eq`` below: pure Python over every pair, exact rational
  arithmetic (fractions.Fraction), with the duplicate-pair rule;
* the full-sweep kernel ``_kernels.tie_calibration`` (every threshold listed),
  the implementation the streaming one replaces, on small data;
* mt-metrics-eval's ``tau_optimization.tau_optimization`` (mt-metrics-eval
  tau_optimization.py, commit 68a481a), when its source is present beside the
  checkout (``../shared/anchors/mt-metrics-eval``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval.stats import _kernels, _numpy_kernels
from metaeval.stats._kernels import TIE_TOL
from metaeval.stats.levels import grouped_values, level_values

KERNELS = {"numba": _kernels, "numpy": _numpy_kernels}
HYP = settings(max_examples=60, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

from _shared import SHARED  # noqa: E402  (../shared beside the checkout, or $METAEVAL_SHARED)
MTME = SHARED / "anchors" / "mt-metrics-eval"


def brute_acc_eq(x, y, weights, dup=None):
    """(epsilon, acc_eq) by enumerating every pair at every candidate threshold.

    Group g's accuracy at threshold t is (correct pairs - dup_g) / (pairs -
    dup_g), a pair being correct when |dx| <= t and dy == 0, or |dx| > t and
    sign(dx) == sign(dy) != 0; duplicate pairs are tied in both, hence
    correct at every t.  The average weighs groups by ``weights`` (exact
    rationals of the floats).  Epsilon is the smallest threshold reaching the
    exact maximum.
    """
    G = len(x)
    dup = [0] * G if dup is None else [Fraction(float(d)) for d in dup]
    groups = []
    cands = {0.0}
    for g in range(G):
        items = [(a, b) for a, b in zip(x[g], y[g]) if np.isfinite(a) and np.isfinite(b)]
        pairs = [(abs(p[0] - q[0]), p[0] - q[0], p[1] - q[1]) for p, q in combinations(items, 2)]
        n = len(pairs) - dup[g]
        if n > 0:
            groups.append((g, pairs, n))
            cands.update(ad for ad, _, _ in pairs if ad > 0)
    if not groups:
        return 0.0, Fraction(0)
    best = None
    for t in sorted(cands):
        acc = Fraction(0)
        for g, pairs, n in groups:
            ok = sum(1 for ad, dx, dy in pairs
                     if (ad <= t and dy == 0) or (ad > t and dy != 0 and (dx > 0) == (dy > 0)))
            acc += Fraction(float(weights[g])) * (ok - dup[g]) / n
        if best is None or acc > best[1]:
            best = (t, acc)
    return best


def macro_weights(x, y, dup=None):
    nv = (np.isfinite(x) & np.isfinite(y)).sum(-1)
    npairs = nv * (nv - 1) / 2 - (0 if dup is None else dup)
    has = npairs > 0
    return has / max(has.sum(), 1)


@st.composite
def tied_groups(draw, max_g=4, max_n=9):
    """Small (G, n) groups from few levels: ties in both scores, NaN, constant
    groups, one-item groups."""
    G = draw(st.integers(1, max_g))
    n = draw(st.integers(0, max_n))
    lv = draw(st.sampled_from([2, 3, 5, 40]))
    vals = st.one_of(st.integers(0, lv).map(float), st.just(np.nan))
    x = np.array(draw(st.lists(vals, min_size=G * n, max_size=G * n)), float).reshape(G, n)
    y = np.array(draw(st.lists(vals, min_size=G * n, max_size=G * n)), float).reshape(G, n)
    if G > 1 and n and draw(st.booleans()):
        y[0] = 1.0  # a constant human group
    if G > 1 and n > 1 and draw(st.booleans()):
        x[1, 1:] = np.nan  # a one-item group
    scale = draw(st.sampled_from([1.0, 0.1, 1e-3]))
    return x * scale, y


@HYP
@given(tied_groups())
def test_streaming_tie_calibration_equals_brute_force(xy):
    x, y = xy
    w = macro_weights(x, y)
    reps, rval = brute_acc_eq(x, y, w)
    for name, k in KERNELS.items():
        eps, val = k.tie_calibration_best(x[None], y[None], w[None])[0]
        assert eps == reps, name
        assert val == pytest.approx(float(rval), abs=1e-13), name


@HYP
@given(tied_groups(max_g=3, max_n=8))
def test_streaming_tie_calibration_equals_the_full_sweep(xy):
    # the full sweep (every threshold materialised) with the same choice rule
    x, y = xy
    w = macro_weights(x, y)
    thr, val = _kernels.tie_calibration(x, y, w)
    best = 0
    for k in range(1, val.size):
        if val[k] > val[best] + TIE_TOL:
            best = k
    got = _kernels.tie_calibration_best(x[None], y[None], w[None])[0]
    assert got[0] == thr[best]
    assert got[1] == pytest.approx(val[best], abs=1e-14)


def test_streaming_tie_calibration_on_larger_continuous_and_tied_data():
    # one level of heavy human ties (MQM-like integers) and a continuous
    # metric with some metric ties; batch of 3, groups of unequal sizes
    rng = np.random.default_rng(152)
    B, G, n = 3, 4, 40
    y = -rng.poisson(1.0, size=(B, G, n)).astype(float)
    x = np.round(y + rng.normal(scale=1.5, size=(B, G, n)), 1)
    x[:, 2, 25:] = np.nan
    w = np.stack([macro_weights(x[b], y[b]) for b in range(B)])
    got = _kernels.tie_calibration_best(x, y, w)
    twin = _numpy_kernels.tie_calibration_best(x, y, w)
    np.testing.assert_array_equal(got[:, 0], twin[:, 0])
    np.testing.assert_allclose(got[:, 1], twin[:, 1], rtol=0, atol=1e-13)
    for b in range(B):
        reps, rval = brute_acc_eq(x[b], y[b], w[b])
        assert got[b, 0] == reps
        assert got[b, 1] == pytest.approx(float(rval), abs=1e-13)


def test_shared_human_batch_of_one():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, size=(1, 2, 12)).astype(float)
    x = rng.normal(size=(5, 2, 12))
    w = np.full((5, 2), 0.5)
    np.testing.assert_array_equal(_kernels.tie_calibration_best(x, y, w),
                                  _kernels.tie_calibration_best(x, np.repeat(y, 5, 0), w))


# ---------------------------------------------------------------------------
# duplicate pairs (bootstrap resamples drawing a cell more than once)


def _resample(rng, x, y):
    """A bootstrap resample of each group's cells, and its duplicate pairs:
    sum over valid original cells of C(multiplicity, 2)."""
    G, n = x.shape
    idx = rng.integers(0, n, size=(G, n))
    xr = np.take_along_axis(x, idx, 1)
    yr = np.take_along_axis(y, idx, 1)
    dup = np.zeros(G)
    for g in range(G):
        valid = np.isfinite(x[g]) & np.isfinite(y[g])
        counts = np.bincount(idx[g][valid[idx[g]]], minlength=n)
        dup[g] = (counts * (counts - 1) // 2).sum()
    return xr, yr, dup


@HYP
@given(tied_groups(max_g=3, max_n=7), st.integers(0, 2**32 - 1))
def test_dup_pairs_are_left_out_like_brute_force(xy, seed):
    x, y = xy
    if x.shape[1] == 0:
        return
    xr, yr, dup = _resample(np.random.default_rng(seed), x, y)
    w = macro_weights(xr, yr, dup)
    reps, rval = brute_acc_eq(xr, yr, w, dup)
    for name, k in KERNELS.items():
        eps, val = k.tie_calibration_best(xr[None], yr[None], w[None], dup[None])[0]
        assert eps == reps, name
        assert val == pytest.approx(float(rval), abs=1e-13), name


@pytest.mark.parametrize("fast", [True, False], ids=["numba", "numpy"])
@pytest.mark.parametrize("average", ["macro", "micro"])
def test_duplicated_single_cell_with_dup_pairs_equals_no_duplicate(fast, average):
    # a group whose one valid cell is drawn twice has one pair, a duplicate:
    # with dup_pairs=1 it has no pair, exactly as without the duplicate
    rng = np.random.default_rng(7)
    x = rng.normal(size=(1, 3, 6))
    y = rng.integers(0, 3, size=(1, 3, 6)).astype(float)
    x[0, 2, 1:] = np.nan  # group 2: one valid cell
    base = grouped_values(x, y, "acc_eq", average=average, fast=fast)
    xd = np.concatenate([x, np.full((1, 3, 1), np.nan)], -1)
    yd = np.concatenate([y, np.full((1, 3, 1), np.nan)], -1)
    xd[0, 2, -1], yd[0, 2, -1] = x[0, 2, 0], y[0, 2, 0]  # the duplicate
    dup = np.array([[0.0, 0.0, 1.0]])
    got = grouped_values(xd, yd, "acc_eq", average=average, fast=fast, dup_pairs=dup)
    assert got.value[0] == base.value[0]
    assert got.epsilon[0] == base.epsilon[0]
    np.testing.assert_array_equal(got.group, base.group)
    # without dup_pairs the duplicate counts as a correct tied pair
    plain = grouped_values(xd, yd, "acc_eq", average=average, fast=fast)
    assert plain.value[0] != base.value[0]


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_grouped_values_dup_pairs_and_group_detail_match_brute_force(average):
    rng = np.random.default_rng(11)
    x = np.round(rng.normal(size=(3, 8)), 1)
    y = rng.integers(0, 3, size=(3, 8)).astype(float)
    xr, yr, dup = _resample(rng, x, y)
    nv = (np.isfinite(xr) & np.isfinite(yr)).sum(-1)
    npairs = nv * (nv - 1) / 2 - dup
    w = (npairs > 0) / (npairs > 0).sum() if average == "macro" else npairs / npairs.sum()
    reps, rval = brute_acc_eq(xr, yr, w, dup)
    got = grouped_values(xr[None], yr[None], "acc_eq", average=average, dup_pairs=dup[None])
    assert got.epsilon[0] == reps
    assert got.value[0] == pytest.approx(float(rval), abs=1e-13)
    # each group's acc_23 at epsilon, duplicates left out: the brute force of
    # that group alone evaluated at epsilon (one candidate threshold only)
    for g in range(3):
        pairs = [(p, q) for p, q in combinations(range(8), 2)]
        ok = sum(1 for p, q in pairs
                 if (abs(xr[g, p] - xr[g, q]) <= reps and yr[g, p] == yr[g, q])
                 or (abs(xr[g, p] - xr[g, q]) > reps and yr[g, p] != yr[g, q]
                     and (xr[g, p] > xr[g, q]) == (yr[g, p] > yr[g, q])))
        assert got.group[0, g] == pytest.approx((ok - dup[g]) / npairs[g], abs=1e-15)


# ---------------------------------------------------------------------------
# mt-metrics-eval


def _mtme():
    if not (MTME / "mt_metrics_eval" / "tau_optimization.py").exists():
        pytest.skip(f"mt-metrics-eval source not found at {MTME} (../shared/anchors/"
                    "mt-metrics-eval beside the checkout, or $METAEVAL_SHARED/anchors/mt-metrics-eval)")
    sys.path.insert(0, str(MTME))
    try:
        from mt_metrics_eval import tau_optimization
    finally:
        sys.path.remove(str(MTME))
    return tau_optimization


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", ["input", "item", "global"])
def test_acc_eq_matches_mtme_tau_optimization(seed, level):
    # mt-metrics-eval tau_optimization.py, commit 68a481a: rows are groups,
    # None marks a missing cell, the accuracy is averaged over rows with a
    # pair (our macro average); our 'input' is its item grouping, our
    # 'global' its 'none' (one row)
    tau_optimization = _mtme()
    rng = np.random.default_rng(seed)
    N, M = 5, 7
    human = -rng.poisson(1.0, size=(N, M)).astype(float)
    metric = np.round(human + rng.normal(scale=1.0, size=(N, M)), 1)
    metric[rng.random((N, M)) < 0.1] = np.nan
    got = level_values(metric, human, level, "acc_eq")
    rows = {"item": (metric, human), "input": (metric.T, human.T),
            "global": (metric.reshape(1, -1), human.reshape(1, -1))}[level]
    as_obj = [[None if np.isnan(v) else float(v) for v in r] for r in rows[0]]
    res = tau_optimization.tau_optimization(
        as_obj, [[float(v) for v in r] for r in rows[1]],
        tau_optimization.TauSufficientStats.acc_23)
    top = max(res.taus)
    assert got.value[0] == pytest.approx(top, abs=1e-12)
    # epsilon: the smallest threshold whose accuracy is (within float noise)
    # the maximum; MTME takes the first exact float maximum
    first = next(t for t, v in zip(res.thresholds, res.taus) if v >= top - 1e-12)
    assert got.epsilon[0] == first


# ---------------------------------------------------------------------------
# memory (issue 14.1): never a number when memory runs out


_LIMITED = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from metaeval.errors import ResourceError
    from metaeval.stats.levels import grouped_values
    rng = np.random.default_rng(0)
    n = int(sys.argv[1])
    x = rng.normal(size=(1, 1, n))
    y = rng.integers(0, 5, size=(1, 1, n)).astype(float)
    grouped_values(x[:, :, :50], y[:, :, :50], "acc_eq", detail=False)  # compile first
    # address-space limit: what is mapped now plus a margin far below the
    # working memory the calibration of n cells needs
    with open("/proc/self/status") as f:
        vm = next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024
    margin = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (vm + margin, vm + margin))
    try:
        lv = grouped_values(x, y, "acc_eq", detail=False)
    except ResourceError as exc:
        print("ERROR", exc)
    else:
        print("VALUE", lv.value[0], lv.epsilon[0])
""")


def _run_limited(n, margin):
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _LIMITED, str(n), str(margin)],
                       capture_output=True, text=True, env=env, timeout=600)
    return r


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_acc_eq_out_of_memory_is_a_clear_error_never_a_number_regression_14_1():
    # issue 14.1: under a memory limit acc_eq returned 9.13e+169 (uninitialised
    # memory from a failed allocation in a parallel kernel) or a raw numba
    # MemoryError; now the working memory is allocated before the parallel
    # region and a failure is a ResourceError naming the options to change
    n = 3_000_000  # the workspace needs ~80 bytes per cell per thread: >= 240 MB
    r = _run_limited(n, 120 * 2**20)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout.strip()
    assert out.startswith("ERROR"), out
    assert "acc_eq" in out and "--n-resamples" in out and "--level" in out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_acc_eq_global_within_a_memory_limit_gives_the_right_number_regression_14_1():
    # 6,000 cells (1.8e7 pairs; the old kernel materialised them with their
    # sort order: ~430 MB) under a limit of 150 MB more than the process
    # maps: the streaming kernel fits and gives the value computed without a
    # limit
    n = 6_000
    r = _run_limited(n, 150 * 2**20)
    assert r.returncode == 0, r.stderr[-2000:]
    kind, val, eps = r.stdout.split()
    assert kind == "VALUE"
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 1, n))
    y = rng.integers(0, 5, size=(1, 1, n)).astype(float)
    want = grouped_values(x, y, "acc_eq", detail=False)
    assert float(val) == want.value[0] and float(eps) == want.epsilon[0]
    assert 0.0 <= float(val) <= 1.0
