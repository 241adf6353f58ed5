"""numba's OpenMP threads wait passively unless the user chose a policy (stats/_jit.passive_openmp).

Spin-waiting threads tripled the CPU time of compare_all beside one busy process (BENCHMARKS.md,
"OpenMP threads that wait"); speed is measured there, not here: these tests check that the policy
is set before the threading layer loads, and that a user's own setting wins.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = r"""
import os, numpy as np
from metaeval.stats import coefficients as co
x = np.random.default_rng(0).normal(size=(4, 64, 512))
co.kendall_stats(x, x[:1])  # a parallel kernel: numba's threading layer is loaded now
print(os.environ.get("OMP_WAIT_POLICY"))
"""


def _run(env_policy):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "METAEVAL_DISABLE_NUMBA")}
    if env_policy is not None:
        env["OMP_WAIT_POLICY"] = env_policy
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.parametrize("given, seen", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE"), ("passive", "passive")])
def test_openmp_threads_wait_passively_unless_the_user_chose(given, seen):
    assert _run(given)[0] == seen


def test_the_policy_is_set_before_numba_loads():
    # the variable must be in the environment before libgomp is loaded (it reads it once)
    code = ("import os, sys\nfrom metaeval.stats import _jit\n_jit.setup_cache()\n"
            "print(os.environ.get('OMP_WAIT_POLICY'), 'numba.np.ufunc.omppool' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.stdout.split() == ["PASSIVE", "False"], out.stderr
