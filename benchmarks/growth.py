#!/usr/bin/env python
"""Growth of time and peak memory with the data size (issue 15, items 2 and 3).

Usage (from the repository root)::

    python benchmarks/growth.py                  # every case at its default sizes (~10 min on a loaded 2-core VM)
    python benchmarks/growth.py --case correlate --sizes 1000000 --max-seconds 900   # the 1e6-cell point
    python benchmarks/growth.py --case perm --sizes 10000,30000
    python benchmarks/growth.py --quick          # two small sizes per case

Each (case, size) runs in its own subprocess under ``/usr/bin/time -v``, so
the peak resident set size ("Maximum resident set size", from the OS) is per
run; the child also reports its RSS after the warm-up (imports and numba
compilation on a 10,000-cell problem, 1,000 for acc_eq, excluded from the timing), so the growth
of the peak can be told apart from the fixed cost of the interpreter and the
compiled kernels.

Data: N = 20 systems x M inputs (cells = 20 M), a human score on a 1-5 scale
(mean of 3 integer raters, so ties are heavy) and 2 continuous metrics.

Cases:

``correlate``
    ``metaeval.correlate(ds, "human", level=[system, input, item, global],
    method=[pearson, spearman, kendall_b], ci="boot-both",
    n_resamples=--n-resamples (100), pvalue="none", rng=0)`` for the 2 metrics.
``perm``
    ``metaeval.compare(ds, "human", "m1", "m2", level=L, method="kendall_b",
    test="perm-both", n_resamples=100, rng=0)`` for L = input and global, timed
    apart.  At input level each resample computes tau-b of both metrics in
    every input group of 20 systems by the direct O(n^2) loop, i.e.
    2 x M x 190 pair comparisons per resample; the script prints the pair
    comparisons per second of wall time and per CPU-second (``time.process_time``,
    all threads: the rate per core; issue 15 item 3).
``acc_eq``
    ``metaeval.correlate(ds, "human", metrics="m1", level="global",
    method="acc_eq", ci="none", pvalue="none")``: the tie calibration visits
    every pair (its candidates are all pairwise differences), so the time is
    O(P log n) with P = n(n-1)/2 pairs: quadratic in the cells by definition;
    its sizes stop lower.

The growth exponent between consecutive sizes, log(t2/t1)/log(n2/n1), is
printed; a case is flagged "SUPER-LINEAR" when the exponent exceeds 1.3 for
a linear or n log n algorithm (1.15 is n log n's exponent from 1e4 to 1e6).
Writes ``benchmarks/results/growth.json`` with the machine's load
(``uptime``) before and after every run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
N_SYSTEMS = 20
DEFAULT_SIZES = {
    "correlate": [10_000, 30_000, 100_000, 300_000, 1_000_000],
    "perm": [10_000, 30_000, 100_000, 300_000, 1_000_000],
    "acc_eq": [3_000, 10_000, 30_000],
}
QUICK_SIZES = {"correlate": [10_000, 30_000], "perm": [10_000, 30_000], "acc_eq": [3_000, 10_000]}
EXPECTED = {"correlate": "n log n", "perm": "n (input), n log n (global)", "acc_eq": "n^2 log n"}


def make_dataset(cells, seed=0):
    import numpy as np

    import metaeval

    m = max(2, cells // N_SYSTEMS)
    g = np.random.default_rng(seed)
    latent = g.normal(0, 0.5, (N_SYSTEMS, 1)) + g.normal(0, 0.5, (1, m)) + g.normal(0, 1, (N_SYSTEMS, m))
    raters = [np.clip(np.round(3 + latent + g.normal(0, 0.7, latent.shape)), 1, 5) for _ in range(3)]
    cols = {"human": np.mean(raters, axis=0),
            "m1": latent + g.normal(0, 0.7, latent.shape),
            "m2": latent + g.normal(0, 1.2, latent.shape)}
    return metaeval.Dataset.from_arrays(cols, human="human")


def rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child(case, cells, n_resamples):
    """Run one (case, size) and print one JSON line."""
    import warnings

    sys.path.insert(0, str(REPO / "src"))
    import metaeval

    warnings.simplefilter("ignore")
    levels = ["system", "input", "item", "global"]
    methods = ["pearson", "spearman", "kendall_b"]
    # warm-up on 20 x 500 cells (every kernel path: Kendall's direct loop and
    # Knight's algorithm, both ranking paths); acc_eq on 1000 cells
    small = make_dataset(1_000 if case == "acc_eq" else 10_000)
    # warm-up: compile what the case uses (excluded from the timing)
    if case == "correlate":
        metaeval.correlate(small, "human", level=levels, method=methods, ci="boot-both", n_resamples=5,
                           pvalue="none", rng=0)
    elif case == "perm":
        for lv in ("input", "global"):
            metaeval.compare(small, "human", "m1", "m2", level=lv, method="kendall_b", n_resamples=5, rng=0)
    else:
        metaeval.correlate(small, "human", metrics="m1", level="global", method="acc_eq", ci="none",
                           pvalue="none")
    base = rss_mb()
    ds = make_dataset(cells)
    data_rss = rss_mb()
    out = {"case": case, "cells": len(ds.systems) * len(ds.inputs), "n_inputs": len(ds.inputs), "rss_after_warmup_mb": base,
           "rss_after_data_mb": data_rss}
    if case == "correlate":
        t, cpu = time.perf_counter(), time.process_time()
        r = metaeval.correlate(ds, "human", level=levels, method=methods, ci="boot-both",
                               n_resamples=n_resamples, pvalue="none", rng=0)
        out["seconds"] = time.perf_counter() - t
        out["cpu_seconds"] = time.process_time() - cpu  # all threads of the process
        out["check"] = float(r.get("m1", level="global", method="kendall_b").statistic)
    elif case == "perm":
        for lv in ("input", "global"):
            t, cpu = time.perf_counter(), time.process_time()
            c = metaeval.compare(ds, "human", "m1", "m2", level=lv, method="kendall_b",
                                 n_resamples=n_resamples, rng=0)
            out[f"seconds_{lv}"] = time.perf_counter() - t
            out[f"cpu_seconds_{lv}"] = time.process_time() - cpu  # all threads of the process
            out[f"pvalue_{lv}"] = float(c.pvalue)
        out["seconds"] = out["seconds_input"] + out["seconds_global"]
        # pair comparisons at input level: both metrics, every input group, every resample
        pairs = 2 * len(ds.inputs) * N_SYSTEMS * (N_SYSTEMS - 1) // 2 * n_resamples
        out["input_pair_comparisons"] = pairs
        out["input_pairs_per_s"] = pairs / out["seconds_input"]
        out["input_pairs_per_cpu_s"] = pairs / out["cpu_seconds_input"]
    else:
        t = time.perf_counter()
        r = metaeval.correlate(ds, "human", metrics="m1", level="global", method="acc_eq", ci="none",
                               pvalue="none")
        out["seconds"] = time.perf_counter() - t
        n = out["cells"]
        out["pairs"] = n * (n - 1) // 2
        out["ns_per_pair"] = out["seconds"] / out["pairs"] * 1e9
        out["check"] = float(r.get("m1", level="global", method="acc_eq").statistic)
    out["rss_end_mb"] = rss_mb()
    print("RESULT " + json.dumps(out), flush=True)


def kernel_rate(batch=100, groups=5000, n=N_SYSTEMS, repeats=3):
    """Pair comparisons per second of the tau-b kernel alone on a (batch, groups, n)
    batch sharing one human score (the shape of input-level Perm-Both halves)."""
    import warnings

    sys.path.insert(0, str(REPO / "src"))
    import numpy as np

    from metaeval.stats.levels import grouped_values

    warnings.simplefilter("ignore")
    g = np.random.default_rng(0)
    x = g.normal(size=(batch, groups, n))
    y = np.round(g.normal(size=(1, groups, n)) * 1.5)  # human with ties
    grouped_values(x[:2, :10], y[:, :10], "kendall_b", detail=False)  # compile
    wall = cpu = float("inf")
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        grouped_values(x, y, "kendall_b", detail=False)
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    pairs = batch * groups * n * (n - 1) // 2
    out = {"pairs": pairs, "wall_s": wall, "cpu_s": cpu, "pairs_per_s": pairs / wall,
           "pairs_per_cpu_s": pairs / cpu, "uptime": uptime()}
    print(f"tau-b kernel alone, ({batch}, {groups}, {n}) batch, {pairs / 1e6:.0f}M pairs: wall {wall:.3f} s "
          f"({pairs / wall / 1e6:.0f}M/s), CPU {cpu:.3f} s ({pairs / cpu / 1e6:.0f}M pairs per CPU-second); "
          f"{out['uptime']}")
    return out


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run_one(case, cells, n_resamples, env_extra):
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(env_extra)
    cmd = ["/usr/bin/time", "-v", sys.executable, str(Path(__file__).resolve()), "--child", case, str(cells),
           "--n-resamples", str(n_resamples)]
    before = uptime()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    if p.returncode != 0 or line is None:
        return {"case": case, "cells": cells, "error": (p.stderr or p.stdout)[-2000:], "uptime_before": before}
    out = json.loads(line[7:])
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    out["peak_rss_mb"] = int(m.group(1)) / 1024.0 if m else float("nan")
    out["process_wall_s"] = wall
    out["uptime_before"] = before
    out["uptime_after"] = uptime()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("CASE", "CELLS"), help=argparse.SUPPRESS)
    ap.add_argument("--case", action="append", choices=sorted(DEFAULT_SIZES),
                    help="correlate, perm, acc_eq (repeatable; default: all)")
    ap.add_argument("--sizes", help="comma-separated cell counts (default: per case)")
    ap.add_argument("--n-resamples", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="two small sizes per case")
    ap.add_argument("--memory-budget", help="sets METAEVAL_MEMORY_BUDGET for the runs (e.g. 256MB)")
    ap.add_argument("--kernel", action="store_true",
                    help="only time the tau-b kernel alone (pairs per CPU-second; use with NUMBA_NUM_THREADS=1)")
    ap.add_argument("--threads", type=int, help="sets NUMBA_NUM_THREADS for the runs (default: numba's, one per core)")
    ap.add_argument("--max-seconds", type=float, default=150.0,
                    help="skip a case's larger sizes once one run took longer than this")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "growth.json"))
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), args.n_resamples)
        return
    if args.kernel:
        out = kernel_rate()
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).with_name("growth_kernel.json").write_text(json.dumps(out, indent=2))
        return
    env = {"METAEVAL_MEMORY_BUDGET": args.memory_budget} if args.memory_budget else {}
    if args.threads:
        env["NUMBA_NUM_THREADS"] = str(args.threads)
    cases = args.case or ["correlate", "perm", "acc_eq"]
    results = []
    for case in cases:
        sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
                 else (QUICK_SIZES if args.quick else DEFAULT_SIZES)[case])
        prev = None
        print(f"\n{case} (expected growth: {EXPECTED[case]}; {args.n_resamples} resamples where resampled)")
        for cells in sizes:
            r = run_one(case, cells, args.n_resamples, env)
            results.append(r)
            if "error" in r:
                print(f"  {cells:>9,d} cells: FAILED\n{r['error'][-600:]}")
                break
            growth = ""
            if prev is not None:
                e = math.log(r["seconds"] / prev["seconds"]) / math.log(r["cells"] / prev["cells"])
                r["exponent"] = e
                flag = "  SUPER-LINEAR" if (case != "acc_eq" and e > 1.3) else ""
                growth = f"  exponent {e:4.2f}{flag}"
            extra = ""
            if case == "correlate":
                extra = f"  (CPU {r['cpu_seconds']:.1f} s)"
            if case == "perm":
                extra = (f"  (CPU input {r['cpu_seconds_input']:.1f} s, global {r['cpu_seconds_global']:.1f} s; "
                         f"input {r['seconds_input']:.2f} s, global {r['seconds_global']:.2f} s; input "
                         f"{r['input_pairs_per_s'] / 1e6:.0f}M pair comparisons/s, "
                         f"{r['input_pairs_per_cpu_s'] / 1e6:.0f}M per CPU-second)")
            if case == "acc_eq":
                extra = f"  ({r['ns_per_pair']:.1f} ns per pair)"
            print(f"  {r['cells']:>9,d} cells: {r['seconds']:8.2f} s, peak RSS {r['peak_rss_mb']:7.0f} MB "
                  f"(after warm-up {r['rss_after_warmup_mb']:.0f} MB){growth}{extra}   [{r['uptime_before'].split('load')[-1].strip()}]")
            prev = r
            if r["seconds"] > args.max_seconds:
                print(f"  (larger sizes skipped: this run took over {args.max_seconds:.0f} s)")
                break
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))


if __name__ == "__main__":
    main()
