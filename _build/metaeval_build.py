"""metaeval's build backend: setuptools, plus the shipped numba cache.

``pip install .``, ``pip install -e .`` and ``pip wheel .`` call this module
(pyproject.toml, ``[build-system]``).  Before setuptools builds the wheel or
the editable install, it compiles metaeval's numba kernels for a portable CPU
(``NUMBA_CPU_NAME=generic``) into ``src/metaeval/stats/_numba_cache/<key>/``,
where ``key`` hashes the kernels' source, metaeval's, numba's, llvmlite's and
Python's versions and the platform (``metaeval.stats._jit.build``).  A wheel
carries the folder as package data; an editable install finds it in the
source tree.  A first run then loads the kernels instead of compiling them
(issue 26.1; docs/scale.md, "The first run").

``METAEVAL_NUMBA_CACHE=0`` skips the step; ``METAEVAL_NUMBA_POOLS=1,2,4``
chooses the thread-pool sizes of the parallel kernels (default: 1 and the
building machine's cores).  When the step fails (no numba in the build
environment, say), the build goes on and the kernels compile on first use.
"""

import os
import subprocess
import sys

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 - the other hooks unchanged

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _shipped_numba_cache():
    if os.environ.get("METAEVAL_NUMBA_CACHE", "1").strip() in ("0", ""):
        print("metaeval: METAEVAL_NUMBA_CACHE=0: no shipped numba cache", file=sys.stderr)
        return
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(_ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-m", "metaeval.stats._jit", "build"], env=env, cwd=_ROOT,
        capture_output=True, text=True,
    )
    msg = (out.stdout + out.stderr).strip().splitlines()
    if out.returncode == 0:
        print(msg[-1] if msg else "metaeval: shipped numba cache built", file=sys.stderr)
    else:
        print(
            "metaeval: the shipped numba cache was not built, so the kernels will compile on "
            f"first use ({msg[-1] if msg else 'exit code ' + str(out.returncode)})",
            file=sys.stderr,
        )


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _shipped_numba_cache()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _shipped_numba_cache()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
