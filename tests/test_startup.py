"""Start-up cost (issue 15.3): `import metaeval` and `metaeval --help` (and
every subcommand's --help) import none of the heavy libraries; the public
names are still reachable from the package (imported on first use).

Each check runs in a fresh interpreter, since this test session has already
imported everything."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("numba", "scipy.stats", "pandas", "matplotlib", "torch", "transformers", "sklearn")


def _python(code):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_metaeval_imports_nothing_heavy():
    got = _python(
        "import sys, metaeval\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert got.strip() == "[]"


def test_help_imports_no_numba_scipy_stats_matplotlib():
    """Regression (15.3): `metaeval --help` imported pandas, scipy.stats and
    numba (through `import metaeval`) and took seconds."""
    code = f"""
import io, json, sys, contextlib
from metaeval.cli import main
names = sorted(main.commands)
seen = {{}}
for args in [["--help"]] + [[c, "--help"] for c in names]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main(args)
        except SystemExit as e:
            assert e.code == 0, (args, e.code)
    assert "Usage:" in buf.getvalue(), args
    seen[" ".join(args)] = sorted(m for m in {HEAVY!r} if m in sys.modules)
print(json.dumps(seen))
"""
    seen = json.loads(_python(code).strip().splitlines()[-1])
    assert len(seen) > 10  # the group and every subcommand
    assert seen == {k: [] for k in seen}


def test_public_names_resolve_lazily():
    code = """
import sys, metaeval
missing = [n for n in metaeval.__all__ if not hasattr(metaeval, n)]
from metaeval.correlation import correlate
from metaeval.stats.levels import LEVELS
from metaeval.stats.coefficients import METHODS
assert metaeval.correlate is correlate and metaeval.LEVELS is LEVELS and metaeval.METHODS is METHODS
assert set(metaeval.__all__) <= set(dir(metaeval))
assert metaeval.textmetrics.__name__ == "metaeval.textmetrics"
try:
    metaeval.no_such_name
except AttributeError as e:
    assert "no_such_name" in str(e)
else:
    raise SystemExit("no AttributeError")
print(missing)
"""
    assert _python(code).strip().splitlines()[-1] == "[]"


def test_from_import_of_every_public_name():
    import metaeval

    for name in metaeval.__all__:
        exec(f"from metaeval import {name}", {})


def test_kernels_compiled_once_whatever_the_layout_regression_15_3():
    """Regression (15.3): `kendall_stats` was compiled 4 times (C, read-only C,
    strided, mixed) and `pearson_rows` 3 times in one report, ~14 s of its
    first-run compilation.  Inputs of every layout now reach the kernels as
    one C-contiguous writeable float64 specialisation.  Expected values: the
    NumPy twins (``fast=False``) of the same functions."""
    code = """
import numpy as np
from metaeval.stats import _kernels, coefficients as co
g = np.random.default_rng(0)
base = g.normal(size=(3, 4, 12))
base[0, 1, 3] = np.nan
base[1, 2, :] = 1.0  # a constant group
ro = base.copy(); ro.flags.writeable = False
strided = np.repeat(base, 2, axis=2)[:, :, ::2]
fortran = np.asfortranarray(base)
shared = g.normal(size=(1, 4, 12))
for x in (base, ro, strided, fortran):
    for y in (base[::-1].copy(), ro[::-1], np.broadcast_to(shared, base.shape), shared):
        for fast_fn, ref in ((lambda a, b: co.kendall_stats(a, b), lambda a, b: co.kendall_stats(a, b, fast=False)),
                             (lambda a, b: co.pearson_batch(a, b), lambda a, b: co.pearson_batch(a, b, fast=False))):
            np.testing.assert_allclose(fast_fn(x, y), ref(x, y), rtol=1e-12, atol=1e-12, equal_nan=True)
# small calls run the kernels' serial builds (issue 26.5): one specialisation each, none of the
# parallel builds
k, p = _kernels.SERIAL.kendall_stats, _kernels.SERIAL.pearson_rows
assert len(_kernels.kendall_stats.signatures) + len(_kernels.pearson_rows.signatures) == 0
print(len(k.signatures), len(p.signatures))
"""
    got = _python(code).strip().splitlines()[-1]
    assert got == "1 1"


def test_modules_of_the_engine_import_no_numba_nor_scipy_stats_regression_26_2():
    """Regression (26.2): importing the analyses loaded scipy.stats (through the
    coefficient registry) and numba (through ``metaeval.stats``' cache set-up
    and the Kendall column names), about 0.8 CPU-s before any work.  Both are
    now imported by the work that needs them."""
    code = f"""
import sys
import metaeval.correlation, metaeval.compare, metaeval.stats.coefficients
import metaeval.stats.levels, metaeval.stats.cellboot, metaeval.stats.inference
print(sorted(m for m in {HEAVY!r} if m in sys.modules and m != "pandas"))
"""
    assert _python(code).strip().splitlines()[-1] == "[]"


def test_trivial_correlate_imports_no_scipy_stats_regression_26_2():
    """A one-level correlation without interval or p-value (the start-up
    benchmark of issue 26.2) computes its coefficient with no scipy.stats,
    numba (its small batches go to stats._small, the kernels' bits:
    tests/test_small.py), matplotlib or the other heavy libraries; the
    numbers are the ones the test below checks against scipy in the same
    interpreter afterwards."""
    code = f"""
import contextlib, io, json, sys
from metaeval.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        main(["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1",
              "--level", "system", "--ci", "none", "--pvalue", "none", "--format", "json"])
    except SystemExit as e:
        assert e.code in (0, None), e.code
heavy = sorted(m for m in {HEAVY!r} if m in sys.modules and m != "pandas")
import metaeval, numpy as np, scipy.stats
ds = metaeval.load_dataset("summeval")
h = np.nanmean(ds.scores("coherence"), axis=1)
m = np.nanmean(ds.scores("ROUGE.1"), axis=1)
print(json.dumps([heavy, buf.getvalue(), scipy.stats.pearsonr(m, h).statistic]))
"""
    heavy, out, want = json.loads(_python(code).strip().splitlines()[-1])
    assert heavy == []
    assert json.loads(out)[0]["statistic"] == pytest.approx(want, abs=1e-12)
