"""numba's OpenMP threads spinning against sleeping (BENCHMARKS.md, "OpenMP threads that wait").

usage: python benchmarks/openmp_wait.py [--level system|input] [--metrics 16] [--repeats 5] [--busy]

Runs ``compare_all(summeval, "coherence", <first K metrics>, level, test="perm-both",
n_resamples=1000)`` after a warm-up call in fresh processes, alternating metaeval's policy (no
``OMP_WAIT_POLICY`` set: metaeval sets PASSIVE) with ``OMP_WAIT_POLICY=ACTIVE`` (libgomp's default,
metaeval before), and prints the medians of the CPU time (user + sys of all threads), the wall
time and the peak RSS (``/usr/bin/time``).  ``--busy`` runs one CPU-bound process beside them,
as on a shared machine.  The numbers of both runs are the same: the policy decides only how idle
threads wait.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

CHILD = r"""
import sys, time, warnings
warnings.simplefilter("ignore")
import metaeval
from metaeval.compare import compare_all
level, K = sys.argv[1], int(sys.argv[2])
ds = metaeval.load_dataset("summeval")
mets = list(ds.metrics)[:K]
compare_all(ds, "coherence", metrics=mets[:3], level=level, test="perm-both", n_resamples=50, rng=0)
t, w = time.process_time(), time.perf_counter()
compare_all(ds, "coherence", metrics=mets, level=level, test="perm-both", n_resamples=1000, rng=0)
print(time.process_time() - t, time.perf_counter() - w)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="system")
    ap.add_argument("--metrics", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--busy", action="store_true")
    a = ap.parse_args()
    hog = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if a.busy else None
    runs = {"metaeval (PASSIVE unless set)": None, "OMP_WAIT_POLICY=ACTIVE": "ACTIVE"}
    out = {k: [] for k in runs}
    try:
        for _ in range(a.repeats):
            for name, policy in runs.items():
                env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
                if policy:
                    env["OMP_WAIT_POLICY"] = policy
                r = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-c", CHILD, a.level,
                                    str(a.metrics)], env=env, capture_output=True, text=True, check=True)
                cpu, wall = map(float, r.stdout.split())
                out[name].append((cpu, wall, os.getloadavg()[0], int(r.stderr.strip().splitlines()[-1])))
    finally:
        if hog is not None:
            hog.kill()
    for name, v in out.items():
        print(f"{name}: CPU {statistics.median(x[0] for x in v):.2f} s, wall {statistics.median(x[1] for x in v):.2f} s "
              f"(median of {len(v)}), load {min(x[2] for x in v):.1f}-{max(x[2] for x in v):.1f}, "
              f"peak RSS {max(x[3] for x in v) / 1024:.0f} MB")


if __name__ == "__main__":
    main()
