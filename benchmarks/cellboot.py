"""Per-replicate cost of correlate's bootstrap: materialised vs from the draws.

For each level x method, one bootstrap replicate (boot-both) of the
benchmark dataset of ``benchmarks/scale.py`` (100 x 10,000 cells, human =
mean of 3 raters on 1-5) is computed two ways, on the same draws:

* materialised (the code before issue 15 item 1): ``take_cells`` builds the
  (B, N, M) replicate arrays and ``levels.level_values`` sorts/ranks them;
* from the draws (``stats.cellboot.CellBootstrap``, what ``correlate`` runs
  now): the original groups sorted once, then per replicate a weighted walk.

Prints CPU milliseconds per replicate (``time.process_time``; run with
``NUMBA_NUM_THREADS=1`` for one core's cost), whether both give the same
values bit for bit (expected for Kendall and the system level) and their
largest difference (Pearson and Spearman elsewhere: rounding).

    NUMBA_NUM_THREADS=1 PYTHONPATH=src python benchmarks/cellboot.py [--n-inputs 10000] [--b 4]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-systems", type=int, default=100)
    ap.add_argument("--n-inputs", type=int, default=10_000)
    ap.add_argument("--b", type=int, default=4, help="replicates timed per case")
    args = ap.parse_args(argv)

    from scale import generate

    from metaeval.stats import resampling as rs
    from metaeval.stats.cellboot import CellBootstrap
    from metaeval.stats.levels import level_values

    ds = generate(args.n_systems, args.n_inputs, 1)
    x, y = ds.scores("metric1"), ds.scores("human")
    N, M = x.shape
    rows, cols = rs.bootstrap_indices(np.random.default_rng(0), args.b + 1, N, M, "both")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"{N} x {M} cells, {args.b} replicates per case, NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}, load before {load}")
    rows_out = []
    for level in ("system", "input", "item", "global"):
        for method in ("pearson", "spearman", "kendall_b"):
            cb = CellBootstrap(x, y, level, method)

            def old(r, c):
                return level_values(rs.take_cells(x, r, c), rs.take_cells(y, r, c), level, method,
                                    detail=False).value

            old(rows[:1], cols[:1])  # compile
            cb.values(rows[:1], cols[:1])
            r, c = rows[1:], cols[1:]
            t = time.process_time()
            v_old = old(r, c)
            t_old = (time.process_time() - t) / args.b
            t = time.process_time()
            v_new = cb.values(r, c)
            t_new = (time.process_time() - t) / args.b
            same = bool(np.array_equal(v_old, v_new, equal_nan=True))
            gap = float(np.nanmax(np.abs(v_old - v_new)))
            rows_out.append({"level": level, "method": method, "old_ms": 1e3 * t_old,
                             "new_ms": 1e3 * t_new, "identical": same, "max_abs_diff": gap})
            print(f"{level:7s} {method:10s} materialised {1e3 * t_old:8.1f} ms  from draws "
                  f"{1e3 * t_new:7.1f} ms  ({t_old / t_new:5.1f}x)  identical={same} "
                  f"max|diff|={gap:.1e}", flush=True)
    tot_old = sum(r["old_ms"] for r in rows_out)
    tot_new = sum(r["new_ms"] for r in rows_out)
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"all 12: {tot_old:.0f} ms vs {tot_new:.0f} ms CPU per replicate and metric "
          f"({tot_old / tot_new:.1f}x); load after {load}")
    print("RESULT " + json.dumps(rows_out))


if __name__ == "__main__":
    main()
