"""Issue 14.1: no allocation inside a parallel kernel's prange body.

A failed allocation inside a numba parallel region is not raised: the
original acc_eq bug returned 9.13e+169 (uninitialised memory).  The
parallel kernels of :mod:`metaeval.stats._kernels` now allocate their result
and one workspace row per worker before the parallel region, where a
failure is an ordinary MemoryError that :mod:`metaeval.stats.coefficients`
turns into :class:`metaeval.errors.ResourceError`.  These tests force an
address-space limit (RLIMIT_AS) in a subprocess and check the outcome is
either that clear error or exactly the unlimited value, never another
number; and they check the reworked kernels (own merge sort, per-worker
workspace) against their NumPy twins and scipy on adversarial inputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as st

from metaeval.stats import _kernels, _numpy_kernels
from metaeval.stats import coefficients as co

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")

_LIMITED = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from metaeval.errors import ResourceError
    from metaeval.stats import coefficients as co
    kind, B, G, n, margin = sys.argv[1], *map(int, sys.argv[2:])
    rng = np.random.default_rng(0)
    x = rng.normal(size=(B, G, n))
    y = rng.integers(0, 5, size=(B, G, n)).astype(float)
    if kind == "kendall":
        run = lambda a, b: co.kendall_stats(a, b, 0.0)
    else:
        run = lambda a, b: co.rank_batch(a, np.isfinite(a))
    run(x[:2, :2, :500], y[:2, :2, :500])  # compile and start the threads first
    with open("/proc/self/status") as f:
        vm = next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + margin, vm + margin))
    try:
        out = run(x, y)
    except ResourceError as exc:
        print("ERROR", exc)
    else:
        np.save(sys.stdout.buffer, out)
""")


def _run_limited(kind, B, G, n, margin):
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", _LIMITED, kind, str(B), str(G), str(n), str(margin)],
                          capture_output=True, env=env, timeout=600)


def _inputs(B, G, n):
    rng = np.random.default_rng(0)
    return rng.normal(size=(B, G, n)), rng.integers(0, 5, size=(B, G, n)).astype(float)


@LINUX
@pytest.mark.parametrize("kind, margin_mb", [("kendall", 40), ("ranks", 330)])
def test_kernel_out_of_memory_is_a_clear_error_never_a_number_regression_14_1(kind, margin_mb):
    # a (1, 4, 4e6) batch (128 MB per copy).  kendall: no copy is made and
    # the workspace (4 rows of 32 MB per worker) exceeds the 40 MB margin.
    # ranks: the masked copy (128 MB), the mask (16 MB) and the result
    # (128 MB) fit in 330 MB, the workspace (2 x 64 MB per worker) does not.
    # Before, the working arrays were allocated per group inside the prange
    # body, where a failure is not raised, and there was no ResourceError
    r = _run_limited(kind, 1, 4, 4_000_000, margin_mb * 2**20)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    out = r.stdout.decode(errors="replace").strip()
    assert out.startswith("ERROR"), out[:200]
    assert "--n-resamples" in out and "--level" in out and "metrics" in out
    assert "\n" not in out


@LINUX
@pytest.mark.parametrize("kind", ["kendall", "ranks"])
def test_kernel_within_a_memory_limit_gives_the_unlimited_value_regression_14_1(kind):
    # 16 groups of 20,000 cells (Knight path and merge-sort ranking) under a
    # 60 MB margin: fits, and equals the value computed without a limit
    import io

    B, G, n = 4, 4, 20_000
    r = _run_limited(kind, B, G, n, 60 * 2**20)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert not r.stdout.startswith(b"ERROR"), r.stdout[:300]
    got = np.load(io.BytesIO(r.stdout))
    x, y = _inputs(B, G, n)
    want = co.kendall_stats(x, y, 0.0) if kind == "kendall" else co.rank_batch(x, np.isfinite(x))
    np.testing.assert_array_equal(got, want)


def _adversarial(rng, B, G, n):
    x = rng.integers(0, 4, size=(B, G, n)).astype(float)  # heavy ties
    y = rng.integers(0, 3, size=(B, G, n)).astype(float)
    x[:, 0] = 1.5  # constant group
    x[:, -1, 1:] = np.nan  # one-item group
    x[rng.random(x.shape) < 0.1] = np.nan
    y[rng.random(y.shape) < 0.1] = np.inf
    x[..., ::7] = -0.0  # signed zeros compare equal
    x[..., 3::11] = 0.0
    return x, y


@pytest.mark.parametrize("n", [5, _kernels.KNIGHT_MIN_N + 37, 1500])
@pytest.mark.parametrize("seed", [0, 1])
def test_kendall_kernels_equal_numpy_twin_on_adversarial_groups(n, seed):
    # the Knight path now sorts with _lexsort2 in a per-worker workspace;
    # reference: the NumPy twin (pairwise sign counts, an independent code)
    rng = np.random.default_rng(seed)
    x, y = _adversarial(rng, 3, 5, n)
    want = _numpy_kernels.kendall_stats(x, y, 0.0)
    np.testing.assert_array_equal(_kernels.kendall_stats(x, y, 0.0), want)
    y1 = y[:1]
    yr, k = co.dense_ranks(y1[0])
    np.testing.assert_array_equal(_kernels.kendall_stats_ranked_y(x, yr, k),
                                  _numpy_kernels.kendall_stats(x, np.broadcast_to(y1, x.shape), 0.0))


@pytest.mark.parametrize("n", [1, 24, 25, 700])
def test_average_ranks_equals_scipy_on_adversarial_rows(n):
    rng = np.random.default_rng(n)
    x, _ = _adversarial(rng, 2, 6, n)
    flat = np.ascontiguousarray(x.reshape(-1, n))
    got = _kernels.average_ranks(flat)
    want = st.rankdata(flat, axis=1, method="average", nan_policy="omit")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, _numpy_kernels.average_ranks(flat))


def test_lexsort2_sorts_like_numpy_lexsort():
    # the merge sort replacing np.argsort inside the kernels; reference:
    # numpy.lexsort (keys: last is primary)
    rng = np.random.default_rng(3)
    for m in (0, 1, 15, 16, 17, 33, 1000, 4097):
        a = rng.integers(0, 9, size=m).astype(float)
        b = rng.integers(0, 9, size=m)
        order = np.lexsort((b, a))
        wa, wb = a.copy(), b.copy()
        _kernels._lexsort2(wa, wb, np.empty(m), np.empty(m, np.int64), m)
        np.testing.assert_array_equal(wa, a[order])
        np.testing.assert_array_equal(wb, b[order])


def test_results_do_not_depend_on_the_worker_split():
    # workers take contiguous chunks of the (b, g) tasks; the same tasks in
    # a batch of another size (other chunk boundaries) give the same rows
    rng = np.random.default_rng(5)
    x, y = _adversarial(rng, 7, 3, _kernels.KNIGHT_MIN_N + 1)
    full = _kernels.kendall_stats(x, y, 0.0)
    for b in range(7):
        np.testing.assert_array_equal(_kernels.kendall_stats(x[b:b + 1], y[b:b + 1], 0.0), full[b:b + 1])


_IR_CHECK = textwrap.dedent(r"""
    import re
    import numpy as np
    from metaeval.stats import _kernels as K, coefficients as co
    from metaeval.stats.permboth import PairLayout
    x = np.random.default_rng(0).normal(size=(3, 2, 500))
    y = np.round(x, 1)
    K.kendall_stats(x, y, 0.0)
    yr, k = co.dense_ranks(y[0])
    K.kendall_stats_ranked_y(x, yr, k)
    K.average_ranks(x[0])
    K.pearson_rows(x, y)
    z = np.random.default_rng(1).normal(size=(4, 6))
    lay = PairLayout(z, z + 1, np.round(z), "item")
    bits = np.zeros(3, np.uint8)
    lay.group_stats(bits, 1)
    lay.group_means(bits, 1)
    for m in ("pearson", "spearman", "kendall_b"):
        lay.pair_values(bits, 1, m)
    K.tie_calibration_best(x, y, np.ones((3, 2)))
    from metaeval.stats.exact import means, nanmean
    means(z)
    nanmean(z, axis=0)
    from metaeval.stats.cellboot import CellBootstrap
    rows = np.random.default_rng(2).integers(0, 4, size=(3, 4))
    cols = np.random.default_rng(3).integers(0, 6, size=(3, 6))
    for level, method in (("global", "spearman"), ("input", "pearson"), ("item", "kendall_b"),
                          ("system", "pearson")):
        CellBootstrap(z, np.round(z), level, method).values(rows, cols)
    alloc = re.compile(r"call[^\n]*(NRT_MemInfo_alloc|NRT_Allocate|NRT_MemInfo_new)")
    for f in (K.kendall_stats, K.kendall_stats_ranked_y, K.average_ranks, K.pearson_rows,
              K.swap_group_stats, K.swap_group_means, K._tie_calibration_best_all,
              K.boot_kendall_stats, K.boot_pearson, K.boot_row_means, K.swap_pair_values,
              K.exact_means, K.exact_col_means):
        own = f"{len(f.__name__)}{f.__name__}B"  # the kernel's own (mangled) function
        for ir in f.inspect_llvm().values():
            for body in ir.split("\ndefine ")[1:]:
                name = re.search(r'@"?([^"(\s]+)', body).group(1)
                if alloc.search(body) and own not in name:
                    print("ALLOCATES", f.__name__, name)
        print("CHECKED", f.__name__)
""")


@pytest.mark.skipif(os.environ.get("METAEVAL_DISABLE_NUMBA", "") not in ("", "0"), reason="numba disabled")
def test_prange_bodies_allocate_nothing_regression_14_1(tmp_path):
    # reads the LLVM IR numba generates (a fresh compile: an empty
    # NUMBA_CACHE_DIR, since cached code cannot be inspected): the only
    # function allocating memory is each parallel kernel's own body outside
    # the prange loop; the parfor gufunc and every helper it calls allocate
    # nothing.  Before the fix _kendall_group, _kendall_small, _rank_row,
    # _kendall_group_ranked_y, numba's argsort and the swap kernels' gufuncs
    # allocated.
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", _IR_CHECK], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ALLOCATES" not in r.stdout, r.stdout
    assert r.stdout.count("CHECKED") == 13, r.stdout
