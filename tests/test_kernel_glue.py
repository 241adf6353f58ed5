"""The glue around the kernels (issue 26.5): each fast path against its slow twin, bit for bit,
on random and adversarial data (ties, NaN, constant groups, one-item and empty groups).

* a parallel kernel's serial build (``_kernels.SERIAL``, used for small calls) against the
  parallel build, through every public path that chooses between them;
* :class:`PairLayout`'s one sort of all groups' entries (with the human part shared by every
  pair) against sorting each group alone (``np.lexsort`` per group, the previous code);
* ``kendall_values`` (the Kendall statistics assembled in the kernel) against its NumPy twin
  (``kendall_values_numpy``, the previous ``kendall_from_stats``), on the kernel's own
  sufficient statistics and on arbitrary counts;
* ``tie_calibration_best`` run as one parallel region (or the serial build for one item)
  against each item alone and against the full-sweep NumPy twin.
"""

import os

import numpy as np
import pytest

from metaeval.stats import coefficients as co

pytestmark = pytest.mark.skipif(os.environ.get("METAEVAL_DISABLE_NUMBA", "") not in ("", "0"),
                                reason="numba disabled")

KINDS = ("continuous", "ties", "nan", "constant", "small")


def _case(seed, N, M, kind):
    g = np.random.default_rng(seed)
    xa, xb, z = g.normal(size=(3, N, M))
    if kind == "ties":
        xa, xb = g.integers(0, 3, (2, N, M)).astype(float)
        z = g.integers(0, 4, (N, M)).astype(float)
    elif kind == "nan":
        xa[g.random((N, M)) < 0.2] = np.nan
        z[g.random((N, M)) < 0.2] = np.nan
        z[0] = np.nan  # a system without cells
        z[:, 1] = np.nan  # an input without cells
    elif kind == "constant":
        xa = g.integers(0, 2, (N, M)).astype(float)
        xb = xa.copy()
        z[:, 2] = 3.0  # a constant human column
        z[1] = 0.5  # a constant human row
        xa[2] = xb[2] = 7.0  # a row constant in both metrics
    elif kind == "small":  # groups of 0, 1 and 2 valid cells
        z[:, :] = np.nan
        z[0, 0] = 1.0
        z[0, 1] = z[1, 1] = 2.0
        z[2, 2] = 0.0
    ok = np.isfinite(xa) & np.isfinite(xb) & np.isfinite(z)
    return (np.where(ok, xa, np.nan), np.where(ok, xb, np.nan), np.where(ok, z, np.nan))


def _same(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.array_equal(a[~np.isnan(a)].view(np.int64), b[~np.isnan(b)].view(np.int64))


# --------------------------------------------------------------------------
# serial builds


def test_every_parallel_kernel_has_a_serial_build_in_the_small_call_namespace():
    from numba.core.registry import CPUDispatcher

    from metaeval.stats import _kernels as K

    parallel = {k for k, v in vars(K).items()
                if isinstance(v, CPUDispatcher) and v.targetoptions.get("parallel")}
    assert {"pearson_rows", "kendall_stats", "swap_pair_values", "boot_pearson"} <= parallel
    for name in parallel:
        serial = getattr(K.SERIAL, name)
        assert isinstance(serial, CPUDispatcher) and not serial.targetoptions.get("parallel")
        assert serial.py_func.__code__ is getattr(K, name).py_func.__code__, name
        assert serial is getattr(K, name + "_serial")
    assert co.kernels(True, 10) is K.SERIAL and co.kernels(True, 10**7) is K


def _through_public_paths(seed, kind):
    """Every public path that picks a kernel by size: levels, Perm-Both, cell bootstrap."""
    from metaeval.stats.cellboot import CellBootstrap, clear_layouts
    from metaeval.stats.levels import level_values
    from metaeval.stats.permboth import perm_both_values
    from metaeval.stats.resampling import fair_bytes

    xa, xb, z = _case(seed, 6, 9, kind)
    out = []
    for level in ("system", "input", "item", "global"):
        for method in ("pearson", "spearman", "kendall_b", "kendall_c", "acc_eq"):
            lv = level_values(np.stack([xa, xb]), z, level, method, detail=True)
            out += [lv.value, lv.group]
    B = 7
    bits = fair_bytes(np.random.default_rng(seed), B * xa.size)
    measures = [(lv, m) for lv in ("system", "input", "item", "global")
                for m in ("pearson", "spearman", "kendall_b")]
    res = perm_both_values(xa, xb, z, measures, bits, B)
    out += [res[k] for k in measures]
    g = np.random.default_rng(seed + 1)
    rows = g.integers(0, 6, (B, 6))
    cols = g.integers(0, 9, (B, 9))
    for level, method in (("system", "pearson"), ("input", "kendall_b"), ("item", "spearman"),
                          ("global", "pearson")):
        out.append(CellBootstrap(xa, z, level, method).values(rows, cols))
    clear_layouts()
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_serial_builds_give_the_parallel_builds_bits(monkeypatch, kind):
    for seed in range(3):
        monkeypatch.setattr(co, "PARALLEL_MIN_WORK", 0)  # always the parallel build
        par = _through_public_paths(seed, kind)
        monkeypatch.setattr(co, "PARALLEL_MIN_WORK", 10**12)  # always the serial build
        ser = _through_public_paths(seed, kind)
        assert len(par) == len(ser)
        for a, b in zip(par, ser):
            _same(a, b)


# --------------------------------------------------------------------------
# PairLayout: one sort for all groups, the human part shared


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", ("input", "item", "global"))
def test_pair_layout_sorts_entries_as_each_group_alone(kind, level):
    from metaeval.stats.cellboot import clear_layouts
    from metaeval.stats.permboth import PairLayout, _pair_entries_per_group

    for seed in range(5):
        xa, xb, z = _case(seed, 5, 7, kind)
        if seed == 4:
            xb = xa.copy()  # every value tied across the two metrics
        lay = PairLayout(xa, xb, z, level)
        eslot, esrc, enew = _pair_entries_per_group(xa, xb, z, level)
        np.testing.assert_array_equal(lay.eslot, eslot)
        np.testing.assert_array_equal(lay.esrc, esrc)
        np.testing.assert_array_equal(lay.enew, enew)
        assert (lay.eslot.dtype, lay.esrc.dtype, lay.enew.dtype) == (eslot.dtype, esrc.dtype,
                                                                     enew.dtype)
    clear_layouts()


def test_pair_layout_human_part_is_keyed_on_the_human_values():
    """Two pairs on the same human scores share its part; other scores (or another NaN
    pattern) never reuse it."""
    from metaeval.stats.cellboot import clear_layouts
    from metaeval.stats.permboth import PairLayout, _human_layout, human_layout

    xa, xb, z = _case(0, 5, 7, "ties")
    assert human_layout(z, "input") is human_layout(z.copy(), "input")
    z2 = z.copy()
    z2[0, 0] += 1.0
    z3 = z.copy()
    z3[1, 1] = np.nan
    for other in (z2, z3):
        got = human_layout(other, "input")
        want = _human_layout(other, "input")
        for k in ("gptr", "cell", "hcode", "hval", "hc", "hr2", "hss", "hrss", "hn2", "gk"):
            np.testing.assert_array_equal(got[k], want[k])
    # a layout built after another human's is still right
    ok = np.isfinite(z3)
    lay = PairLayout(np.where(ok, xa, np.nan), np.where(ok, xb, np.nan), z3, "input")
    np.testing.assert_array_equal(lay.hval, _human_layout(z3, "input")["hval"])
    clear_layouts()


# --------------------------------------------------------------------------
# the Kendall statistics assembled in the kernel


def _consistent_stats(seed):
    """Sufficient statistics of adversarial groups, from the kernel itself."""
    from metaeval.stats import _kernels as K

    g = np.random.default_rng(seed)
    x = g.integers(0, 3, (200, 30, 6)).astype(float)
    y = g.integers(0, 2, (200, 30, 6)).astype(float)
    x[:, 0] = 1.0  # constant metric
    y[:, 1] = 2.0  # constant human
    x[:, 2, 1:] = np.nan  # one valid item
    y[:, 3] = np.nan  # no valid item
    x[:, 4] = y[:, 4]  # identical
    return K.kendall_stats(x, y, 0.0)


@pytest.mark.parametrize("variant", ("b", "c", "23", "acc23"))
def test_kendall_values_kernel_gives_the_numpy_twins_bits(variant):
    from metaeval.stats import _kendall as Kd
    from metaeval.stats import _kernels as K

    g = np.random.default_rng(7)
    arbitrary = g.integers(0, 5, (3000, 8)).astype(float)
    arbitrary[g.random(3000) < 0.2, :5] = 0.0
    big = g.integers(0, 10**6, (3000, 8)).astype(float)
    for s in (_consistent_stats(0), _consistent_stats(1), arbitrary, big):
        flat = np.ascontiguousarray(s).reshape(-1, 8)
        want = Kd.kendall_values_numpy(s, variant)
        _same(K.kendall_values(flat, Kd.KENDALL_VARIANT_CODES[variant]).reshape(want.shape), want)
        _same(co.kendall_from_stats(s, variant), want)  # the shell, whichever path it takes
    assert co.KENDALL_VALUES_MIN_ROWS <= _consistent_stats(0).size // 8  # the kernel path ran


# --------------------------------------------------------------------------
# tie calibration in one parallel region


@pytest.mark.parametrize("kind", ("ties", "nan", "constant", "small"))
def test_tie_calibration_batch_equals_each_item_alone_and_the_full_sweep(kind):
    from metaeval.stats import _kernels as K
    from metaeval.stats import _numpy_kernels as NK

    g = np.random.default_rng(3)
    B, G, n = 5, 6, 7
    x = g.integers(0, 4, (B, G, n)).astype(float)
    y = g.integers(0, 3, (1, G, n)).astype(float)
    if kind == "nan":
        x[g.random((B, G, n)) < 0.3] = np.nan
    elif kind == "constant":
        y[0, 0] = 1.0
        x[:, 1] = 2.0
    elif kind == "small":
        x[:, :, 1:] = np.nan
        x[:, 0, :2] = 1.0
    w = np.full((B, G), 1.0 / G)
    batch = K.tie_calibration_best(x, y, w)
    for b in range(B):
        _same(K.tie_calibration_best(x[b : b + 1], y, w[b : b + 1])[0], batch[b])  # serial build
    twin = NK.tie_calibration_best(x, y, w)
    np.testing.assert_allclose(batch, twin, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------
# Pearson's r with the human side computed once per group (Perm-Both)


def test_pearson_row_given_y_gives_pearson_rows_bits():
    """The human side of ``_pearson_row`` computed once (``_y_side``) and the metric side per
    resample give the one-pass-per-call kernel's bits, including rows scaled by a power of two
    (huge or tiny magnitudes on either side), constant sides, 0-2 items and a non-finite
    metric value (which falls back to the full kernel)."""
    from metaeval.stats import _kernels as K

    g = np.random.default_rng(11)
    cases = []
    for n in (0, 1, 2, 3, 17, 60):
        for xs, ys in ((1.0, 1.0), (1e200, 1.0), (1.0, 1e-200), (1e-300, 1e300), (1e150, 1e150)):
            x = g.normal(size=n) * xs
            y = g.integers(0, 4, n).astype(float) * ys
            cases.append((x, y))
            cases.append((np.round(x / xs) * xs, y))  # ties in x
            cases.append((np.full(n, 2.0 * xs), y))  # constant metric
            cases.append((x, np.full(n, 3.0 * ys)))  # constant human
    x = g.normal(size=9)
    x[4] = np.nan
    cases.append((x, g.normal(size=9)))
    x = g.normal(size=9)
    x[2] = np.inf
    cases.append((x, g.normal(size=9)))
    for x, y in cases:
        dy = np.zeros(max(1, y.size))
        side = K._y_side(y, dy)
        got = K._pearson_row_given_y(x, y, dy, *side)
        want = K._pearson_row(x, y)
        _same(got, want)


def test_pearson_halves_given_y_gives_pearson_rows_bits_for_each_half():
    """Both Perm-Both halves through each pass together (``_pearson_halves_given_y``) give the
    one-row kernel's bits for each half: halves scaled by a power of two (either one, both, or
    only the human side), one or both halves constant, 0-2 items, ties, and a non-finite value
    in either half (the fallback)."""
    from metaeval.stats import _kernels as K

    g = np.random.default_rng(12)
    scales = (1.0, 1e200, 1e-300, 1e150)
    cases = []
    for n in (0, 1, 2, 3, 17, 60):
        for sa in scales:
            for sb in scales:
                for ys in (1.0, 1e-200):
                    xa = g.normal(size=n) * sa
                    xb = g.normal(size=n) * sb
                    y = g.integers(0, 4, n).astype(float) * ys
                    cases.append((xa, xb, y))
                    cases.append((np.round(xa / sa) * sa, xb, y))  # ties
                    cases.append((np.full(n, 2.0 * sa), xb, y))  # half A constant
                    cases.append((xa, np.full(n, -1.0 * sb), y))  # half B constant
                    cases.append((np.full(n, 2.0), np.full(n, 2.0), y))  # both constant
                    cases.append((xa, xb, np.full(n, 3.0 * ys)))  # constant human
    for bad in (np.nan, np.inf, -np.inf):
        for side in (0, 1):
            xa, xb, y = g.normal(size=(3, 9))
            (xa, xb)[side][3] = bad
            cases.append((xa, xb, y))
    for xa, xb, y in cases:
        dy = np.zeros(max(1, y.size))
        side = K._y_side(y, dy)
        ra, rb = K._pearson_halves_given_y(xa, xb, y, dy, *side)
        _same(ra, K._pearson_row(xa, y))
        _same(rb, K._pearson_row(xb, y))


def test_pow2_exponent_safe_range_check_gives_frexps_exponent():
    """``_pow2_exponent`` decides the safe range by two comparisons before calling ``frexp``:
    against the definition (``math.frexp``'s exponent, 0 inside [-400, 400]) at both edges of
    the range, on either side of them, at 0, subnormals and the largest double."""
    import math

    from metaeval.stats import _kernels as K

    def want(a):
        e = math.frexp(a)[1]
        return 0 if -400 <= e <= 400 else e

    vals = [0.0, 5e-324, 2.0 ** -1022, 1.0, 3.0, 1.7976931348623157e308]
    for e in (2.0 ** 400, 2.0 ** 399, 2.0 ** -400, 2.0 ** -401, 2.0 ** -402):
        vals += [e, float(np.nextafter(e, 0.0)), float(np.nextafter(e, np.inf))]
    g = np.random.default_rng(3)
    vals += [float(v) for v in 2.0 ** g.uniform(-1070, 1023, 300)]  # the whole exponent range
    for v in vals:
        assert K._pow2_exponent(v) == want(v), v


# --------------------------------------------------------------------------
# acc_eq: the sorted-pairs sweep for groups that share one unit


def _tie_case(seed, B, G, n, kind):
    g = np.random.default_rng(seed)
    y = g.integers(0, 3, (B, G, n)).astype(float)
    x = g.normal(size=(B, G, n))
    if kind == "ties":
        x = g.integers(0, 4, (B, G, n)) * 0.1
        y = -g.poisson(0.7, (B, G, n)).astype(float)
    elif kind == "rounded":
        x = np.round(x, 1)
    elif kind == "nan":  # unequal pair counts: unequal units, the heap
        x[g.random((B, G, n)) < 0.2] = np.nan
    elif kind == "constant":
        x[:, 0] = 2.0  # a group without metric differences
        y[:, -1] = 1.0  # a constant human group
    elif kind == "small":  # one-item groups (no unit) beside full ones
        x[:, ::2, 1:] = np.nan
    elif kind == "huge":  # differences that overflow to inf, and tiny ones
        x = g.choice([-1.7e308, -1e-300, 0.0, 1e-300, 1.7e308], (B, G, n))
    return x, y


@pytest.mark.parametrize("kind", ["continuous", "ties", "rounded", "nan", "constant", "small",
                                  "huge"])
def test_sorted_pairs_sweep_gives_the_heaps_threshold_and_bits(kind):
    """``tie_calibration_best`` with the sorted-pairs sweep (every group the same unit: radix
    sort, integer counts) against the heap's sweep (``sort_pairs=False``, compensated sums):
    the same thresholds and the same bits, on random and adversarial data, batches and single
    items (serial build); and against the exact brute force of test_acc_eq_stream."""
    from metaeval.stats import _kernels as K

    for seed, (B, G, n) in enumerate([(1, 1, 2), (1, 3, 5), (4, 7, 9), (3, 40, 16), (2, 5, 33)]):
        x, y = _tie_case(seed, B, G, n, kind)
        w = np.full((B, G), 1.0 / G)
        fast = K.tie_calibration_best(x, y, w)
        heap = K.tie_calibration_best(x, y, w, sort_pairs=False)
        _same(fast, heap)


def test_sorted_pairs_sweep_is_the_correctly_rounded_count_sweep():
    """``_sweep_sorted_pairs`` itself against an independent sweep written here: every pair's
    |dx| and human tie listed, every candidate threshold t evaluated as u * K(t) with K(t) the
    exact integer (human-tied minus concordant pairs with 0 < |dx| <= t), the first threshold
    larger than the best by TIE_TOL kept.  The kernel's S is that one product (correctly
    rounded), whatever the order of equal |dx|."""
    from metaeval.stats import _kernels as K

    g = np.random.default_rng(21)
    for trial in range(40):
        G, n = int(g.integers(1, 6)), int(g.integers(2, 12))
        lv = [2, 3, 10][trial % 3]
        xs_g = [np.sort(g.integers(0, lv, n) * 0.1) for _ in range(G)]
        ys_g = [g.integers(0, 3, n).astype(float) for _ in range(G)]
        xs = np.concatenate(xs_g)
        ys = np.concatenate(ys_g)
        iend = np.repeat(np.arange(1, G + 1) * n, n).astype(np.int64)
        u = 1.0 / (G * n * (n - 1) / 2)
        PW = np.empty((2, G * n * n), np.uint64)
        cnt = np.empty((8, 256), np.int64)
        got = K._sweep_sorted_pairs(xs, ys, iend, G * n, u, PW, cnt)
        pairs = [(xs[j] - xs[i], ys[j] - ys[i]) for i in range(G * n) for j in range(i + 1, iend[i])]
        best_t, best_s = 0.0, 0.0
        for t in sorted({d for d, _ in pairs if d > 0}):
            k = sum((1 if dy == 0 else -1) for d, dy in pairs if 0 < d <= t and dy >= 0)
            if u * k > best_s + K.TIE_TOL:
                best_t, best_s = t, u * k
        assert got == (best_t, best_s), trial


def test_human_system_means_are_keyed_on_the_humans_and_the_metrics_cells():
    """Perm-Both's human system means, computed once per (human scores, metric's finite cells),
    equal ``levels.arrange``'s on every call: the same human scores with another metric's
    missing cells, or other human scores, are not served the cached means."""
    from metaeval.stats.levels import arrange
    from metaeval.stats.permboth import human_system_means

    g = np.random.default_rng(5)
    z = g.integers(1, 6, (6, 9)).astype(float)
    za = g.normal(size=(6, 9))
    zb = za.copy()
    zb[2, 3] = np.nan  # another metric's missing cell
    z2 = z.copy()
    z2[0, 0] += 1.0
    for x, h in ((za, z), (zb, z), (za, z2), (za, z), (za * 3.0, z)):
        _same(human_system_means(x, h), arrange(x, h, "system")[1])
