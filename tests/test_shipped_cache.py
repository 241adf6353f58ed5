"""The shipped numba cache (issue 26.1): kernels compiled for a portable CPU
when the package is built, found by a content key whatever NUMBA_CACHE_DIR
says, never stale.

The round trip compiles one kernel for ``NUMBA_CPU_NAME=generic`` into a
temporary shipped folder in one process and loads it in another whose own
cache folder is empty; the expected values are the NumPy twin's
(``fast=False``), an independent implementation of the same definition."""

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(code, env_extra, *args):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


BUILD = """
import sys
from metaeval.stats import _jit
_jit.SHIPPED_DIR = sys.argv[1]
from metaeval.stats import _kernels
from numba.core import types
a = types.Array(types.float64, 3, "C")
_kernels.pearson_rows.compile((a, a))
_kernels.pearson_rows_serial.compile((a, a))  # the serial build small calls use
print("ok")
"""

LOAD = """
import json, sys
import numpy as np
from numba.core import event
from metaeval.stats import _jit
_jit.SHIPPED_DIR = sys.argv[1]
compiled = []
class L(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev): pass
event.register("numba:compile", L())
from metaeval.stats import coefficients as co
g = np.random.default_rng(0)
x = g.normal(size=(3, 4, 25)); y = g.normal(size=(1, 4, 25)); x[0, 0, 3] = np.nan
got = co.pearson_batch(x, y)
want = co.pearson_batch(x, y, fast=False)
print(json.dumps({"compiled": compiled, "hits": _jit._state.get("shipped_hits", 0),
                  "gap": float(np.nanmax(np.abs(got - want)))}))
"""


def test_shipped_kernel_found_with_an_empty_numba_cache_dir(tmp_path):
    shipped = tmp_path / "shipped"
    build_env = {"NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": "",
                 "NUMBA_CACHE_DIR": str(tmp_path / "build-user"),
                 "METAEVAL_BUILD_NUMBA_CACHE": "1"}
    assert _run(BUILD, build_env, str(shipped)) == "ok"
    folders = sorted(p.name for p in shipped.iterdir())
    assert any(f.startswith("pool") for f in folders), folders
    # a user whose own cache is empty (NUMBA_CACHE_DIR at an empty folder): no compilation
    empty = tmp_path / "user"
    empty.mkdir()
    got = json.loads(_run(LOAD, {"NUMBA_CACHE_DIR": str(empty)}, str(shipped)))
    assert got["compiled"] == [] and got["hits"] == 1, got
    assert got["gap"] < 1e-12
    # without the shipped folder the same process compiles (the test can fail)
    got = json.loads(_run(LOAD, {"NUMBA_CACHE_DIR": str(empty)}, str(tmp_path / "none")))
    assert {"pearson_rows", "pearson_rows_serial"} & set(got["compiled"]) and got["hits"] == 0


def test_content_key_changes_with_every_input(monkeypatch, tmp_path):
    from metaeval.stats import _jit

    base = _jit.content_key(None)
    assert base.startswith("serial-") and _jit.content_key(2).startswith("pool2-")
    assert _jit.content_key(1) != _jit.content_key(2)
    assert _jit.content_key(None) == base  # no file time, no randomness

    import numba

    monkeypatch.setattr(numba, "__version__", numba.__version__ + ".other")
    assert _jit.content_key(None) != base
    monkeypatch.undo()
    # the kernels' source: a copy of the package folder with one byte changed
    fake = tmp_path / "stats"
    fake.mkdir()
    here = Path(_jit.__file__).parent
    for name in _jit._SOURCES:
        (fake / name).write_bytes((here / name).read_bytes())
    monkeypatch.setattr(_jit, "__file__", str(fake / "_jit.py"))
    assert _jit.content_key(None) == base
    # every kernel family counts (the kernels live in one module per family)
    assert {"_kendall.py", "_boot.py", "_columns.py"} <= set(_jit._SOURCES)
    for name in _jit._SOURCES:
        (fake / name).write_bytes((here / name).read_bytes() + b"\n")
        assert _jit.content_key(None) != base, name
        (fake / name).write_bytes((here / name).read_bytes())
    assert _jit.content_key(None) == base


def test_listed_signatures_name_existing_kernels_and_parse():
    """A renamed kernel or argument type must be re-recorded
    (``python _build/record_kernel_signatures.py ...``), else the build skips it."""
    from numba.core.registry import CPUDispatcher

    from metaeval.stats import _jit, _kernels

    rows = _jit.read_signatures()
    assert len(rows) >= 10
    for name, text in rows:
        assert isinstance(getattr(_kernels, name, None), CPUDispatcher), name
        sig = _jit._parse_signature(text)
        assert str(sig) == text
        params = inspect.signature(getattr(_kernels, name).py_func).parameters
        assert len(sig) == len(params), (name, "arguments changed: record the signature again")


def test_pool_dependent_kernels():
    from metaeval.stats import _jit, _kernels

    dep = _jit._pool_dependent(vars(_kernels))
    assert {"kendall_stats", "boot_pearson", "_n_workers"} <= dep
    assert "_pearson_row" not in dep and "tie_calibration" not in dep


def test_kernels_compiled_sees_the_shipped_folder_and_the_user_cache(tmp_path):
    """What the report's estimate asks before adding the compilation (26.3)."""
    code = """
import os, sys
from metaeval.stats import _jit
from numba.core import config
_jit.SHIPPED_DIR = sys.argv[1]
if sys.argv[2] == "ship":
    os.makedirs(os.path.join(sys.argv[1], _jit.content_key(int(config.NUMBA_NUM_THREADS))))
print(_jit.kernels_compiled())
"""
    user = tmp_path / "user"
    user.mkdir()
    env = {"NUMBA_CACHE_DIR": str(user)}
    assert _run(code, env, str(tmp_path / "a"), "none") == "False"
    assert _run(code, env, str(tmp_path / "b"), "ship") == "True"
    # a user cache of the kernels, newer than their source, counts too
    pool = next(user.glob("numba-threads-*"))
    for k in range(5):
        (pool / f"_kendall.k{k}-1.py311.nbi").write_bytes(b"")
    assert _run(code, env, str(tmp_path / "c"), "none") == "True"
