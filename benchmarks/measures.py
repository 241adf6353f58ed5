#!/usr/bin/env python
"""Benchmarks of the measure meta-evaluation (seed paper 000): one command.

Usage (from the repository root)::

    python benchmarks/measures.py           # every target, measured in full (~10 min on 2 cores)
    python benchmarks/measures.py --quick   # smoke run: subsets, projected (~1 min)

Targets (issue "Which correlation measure to trust"):

M1  ``discriminative_power(ds, "coherence", rng=0)``: the 12 measures,
    Perm-Both with 1000 resamples, all 43 SummEval metrics (903 pairs):
    < 10 min.  ``--quick`` runs 8 metrics (28 pairs) and projects linearly
    in the number of pairs (every pair does the same work).
M2  ``ranking_consistency(ds, "coherence", rng=0)``: T = 1000 splits, 12
    measures, 43 metrics: < 2 min (``--quick``: 8 metrics, projected
    linearly in the number of metrics).
M3  ``simulate_paper_grid("scale-equal", sizes=[(15, 200)], rng=0,
    n_jobs=1|2)``: C^h = C^m in 12 values, T1 = T2 = 100, N = 15, M = 200,
    the 12 measures: < 5 min (``--quick``: T1 = 10, projected linearly in T1).
M4  The slow reference of the tests (``tests/reference.py``:
    ``perm_both_pvalue``, pure Python, one measure and one pair at a time,
    recomputing every resample from scratch) on a reduced workload: one pair
    of SummEval metrics, the 12 measures, 5 resamples; the time per
    (pair x measure x resample) is compared with M1's.

Results go to ``benchmarks/results/measures.json`` (git-ignored) with the
machine and the load average before and after each target.  The code
measured is this checkout's ``src/``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

RESULTS = REPO / "benchmarks" / "results"


def _load():
    return tuple(round(v, 2) for v in os.getloadavg())


def _spread(items, k):
    """k items spread over the list (deterministic)."""
    if k >= len(items):
        return list(items)
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


def bench_dp(metaeval, ds, quick):
    metrics = list(ds.metrics)
    sub = _spread(metrics, 8) if quick else metrics
    # warm the kernels (loads the numba cache) outside the timing
    metaeval.discriminative_power(ds, "coherence", metrics=sub[:2], n_resamples=10, rng=0)
    before = _load()
    t = time.perf_counter()
    dp = metaeval.discriminative_power(ds, "coherence", metrics=sub, rng=0)
    wall = time.perf_counter() - t
    n_pairs = len(dp.pairs)
    full_pairs = len(metrics) * (len(metrics) - 1) // 2
    projected = wall / n_pairs * full_pairs
    return {
        "target": "M1 discriminative power, 12 measures, Perm-Both 1000, 903 pairs",
        "metrics": len(sub), "pairs": n_pairs, "wall_s": wall, "per_pair_s": wall / n_pairs,
        "full_903_s": projected, "measured_in_full": not quick, "target_s": 600,
        "status": "pass" if projected < 600 else "FAIL", "load_before": before, "load_after": _load(),
        "dp": dict(zip([f"{a}:{b}" for a, b in dp.measures], dp.dp.tolist())),
    }


def bench_rc(metaeval, ds, quick):
    metrics = list(ds.metrics)
    sub = _spread(metrics, 8) if quick else metrics
    metaeval.ranking_consistency(ds, "coherence", metrics=sub[:3], n_splits=10, rng=0)
    before = _load()
    t = time.perf_counter()
    rc = metaeval.ranking_consistency(ds, "coherence", metrics=sub, rng=0)
    wall = time.perf_counter() - t
    projected = wall / len(sub) * len(metrics)
    return {
        "target": "M2 ranking consistency, T=1000, 12 measures, 43 metrics",
        "metrics": len(sub), "wall_s": wall, "full_43_s": projected, "measured_in_full": not quick,
        "target_s": 120, "status": "pass" if projected < 120 else "FAIL",
        "load_before": before, "load_after": _load(),
        "rc": dict(zip([f"{a}:{b}" for a, b in rc.measures], rc.rc.tolist())),
    }


def bench_sim(metaeval, quick, n_jobs):
    from metaeval import simulation

    t1 = 10 if quick else 100
    kw = dict(sizes=[(15, 200)], n_iterations=t1, rng=0, n_jobs=n_jobs)
    # warm the kernels on a tiny grid outside the timing
    simulation.simulate(c_m=3, c_h=3, sizes=[(15, 200)], n_iterations=1, n_discretizations=2, n_jobs=1)
    before = _load()
    t = time.perf_counter()
    res = simulation.simulate_paper_grid("scale-equal", **kw)
    wall = time.perf_counter() - t
    projected = wall * 100 / t1
    return {
        "target": "M3 simulation, scale-equal grid (12 C values), T1=T2=100, N=15, M=200, 12 measures",
        "t1": t1, "n_jobs": n_jobs, "wall_s": wall, "full_s": projected, "measured_in_full": not quick,
        "target_s": 300, "status": "pass" if projected < 300 else "FAIL",
        "rows": len(res.to_frame()), "load_before": before, "load_after": _load(),
    }


def bench_reference(ds, dp_per_pair_s, n_resamples=5):
    import numpy as np

    import reference as ref

    a, b = "ROUGE.1", "BertScore_f1"
    z = ds.scores("coherence")
    coins = (np.random.default_rng(0).random((n_resamples, *z.shape)) < 0.5).tolist()
    measures = [(lv, m) for lv in ("system", "input", "item", "global")
                for m in ("pearson", "spearman", "kendall_b")]
    before = _load()
    per = {}
    for lv, m in measures:
        t = time.perf_counter()
        ref.perm_both_pvalue(ds.scores(a), ds.scores(b), z, lv, m, coins)
        per[f"{lv}:{m}"] = time.perf_counter() - t
    total = sum(per.values())
    # the reference also computes the observed statistic once per measure:
    # count it as one more resample
    per_resample = total / (n_resamples + 1)
    ref_pair_1000 = per_resample * 1000
    return {
        "target": "M4 slow reference (tests/reference.py), 1 pair x 12 measures",
        "n_resamples": n_resamples, "wall_s": total, "per_measure_s": per,
        "projected_pair_1000_resamples_s": ref_pair_1000,
        "metaeval_pair_s": dp_per_pair_s, "speedup": ref_pair_1000 / dp_per_pair_s,
        "load_before": before, "load_after": _load(),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="", help="comma-separated targets to skip: dp,rc,sim,ref")
    ap.add_argument("--out", default=str(RESULTS / "measures.json"))
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    import metaeval
    from run import machine_info

    assert Path(metaeval.__file__).resolve().is_relative_to(SRC), metaeval.__file__
    ds = metaeval.load_dataset("summeval")
    out = {"machine": machine_info(), "quick": args.quick, "results": {}}
    res = out["results"]
    if "dp" not in skip:
        res["dp"] = bench_dp(metaeval, ds, args.quick)
        print(json.dumps({k: v for k, v in res["dp"].items() if k != "dp"}), flush=True)
    if "rc" not in skip:
        res["rc"] = bench_rc(metaeval, ds, args.quick)
        print(json.dumps({k: v for k, v in res["rc"].items() if k != "rc"}), flush=True)
    if "sim" not in skip:
        for n_jobs in (1, 2):
            res[f"sim_jobs{n_jobs}"] = bench_sim(metaeval, args.quick, n_jobs)
            print(json.dumps(res[f"sim_jobs{n_jobs}"]), flush=True)
    if "ref" not in skip:
        per_pair = res["dp"]["per_pair_s"] if "dp" in res else float("nan")
        res["ref"] = bench_reference(ds, per_pair)
        print(json.dumps(res["ref"]), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
