#!/usr/bin/env python
"""Benchmark of text-metric scoring on the bundled SummEval texts: one command.

Usage (from the repository root)::

    python benchmarks/textmetrics.py             # the full target (~1 min on 2 cores)
    python benchmarks/textmetrics.py --quick     # 2 systems, projected (~10 s; pessimistic:
                                                 # the worker start-up is projected too)
    python benchmarks/textmetrics.py --jobs 1    # serial, for comparison

Target (issue 5): score the full SummEval texts (1600 outputs with a
hypothesis, 11 references each: 17 600 pairs per metric) with sentence BLEU,
chrF and ROUGE-1/2/L (one rouge-score pass) in under 2 minutes, with a cold
cache.  A second call with the same cache folder must compute nothing; its
time is reported too.

Also measured (not part of the target): the same texts with
``multi_ref="native"`` (one sacreBLEU / rouge-score call per output with all
11 references), and METEOR when WordNet is installed (``--meteor``).  TER is
not benchmarked on SummEval: sacreBLEU's tercom shift search takes about
0.5 s per (summary, reference) pair of this length (about 2.5 hours for the
17 600 pairs); it is meant for sentence-length MT segments.

Results go to ``benchmarks/results/textmetrics.json`` with the machine and
load averages.  The code measured is this checkout's ``src/``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

RESULTS = REPO / "benchmarks" / "results"
TARGET_S = 120.0


def _load():
    return tuple(round(v, 2) for v in os.getloadavg())


def _time(label, fn):
    t0, l0 = time.perf_counter(), _load()
    out = fn()
    dt = time.perf_counter() - t0
    print(f"{label:<58s} {dt:8.2f} s   load {l0} -> {_load()}", flush=True)
    return dt, out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 systems, projected to 16")
    p.add_argument("--jobs", type=int, default=-1, help="n_jobs (default -1: every core)")
    p.add_argument("--meteor", action="store_true", help="also time METEOR (needs WordNet)")
    p.add_argument("--no-native", action="store_true", help="skip the multi_ref='native' run")
    args = p.parse_args(argv)

    import metaeval
    from metaeval import textmetrics as tm

    ds = metaeval.load_dataset("summeval")
    if args.quick:
        ds = ds.subset(systems=list(ds.systems[:2]))
    tx = ds.texts
    n_out = int(tx["hypothesis"].notna().sum())
    n_pairs = int(sum(len(r) for h, r in zip(tx["hypothesis"], tx["references"]) if isinstance(h, str)))
    full_pairs = 17600
    scale = full_pairs / n_pairs
    print(f"SummEval: {n_out} outputs with a hypothesis, {n_pairs} (hypothesis, reference) pairs; "
          f"n_jobs={args.jobs}; {os.cpu_count()} cores")
    record = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "outputs": n_out, "pairs_per_metric": n_pairs, "n_jobs": args.jobs,
        "quick": args.quick, "target_s": TARGET_S, "timings": {},
    }
    metrics = ["bleu", "chrf", "rouge"]
    with tempfile.TemporaryDirectory() as cache:
        dt, res = _time("T1 bleu+chrf+rouge, multi_ref=max, cold cache",
                        lambda: tm.score(ds, metrics, cache_dir=cache, n_jobs=args.jobs))
        assert res.n_computed == res.n_items and res.n_cached == 0, (res.n_computed, res.n_items)
        print(f"   {res.n_items} distinct pairs over the 3 metrics (identical pairs are scored once)")
        record["timings"]["T1_cold"] = dt
        dt2, res2 = _time("T1 again with the same cache (nothing computed)",
                          lambda: tm.score(ds, metrics, cache_dir=cache, n_jobs=args.jobs))
        assert res2.n_computed == 0 and res2.n_cached == res.n_items
        record["timings"]["T1_cached"] = dt2
        for metric in metrics:
            d, _ = _time(f"   {metric} alone, serial, no cache",
                         lambda metric=metric: tm.score(ds, [metric], n_jobs=1))
            record["timings"][f"{metric}_serial"] = d
    if not args.no_native:
        d, _ = _time("T2 bleu+chrf+rouge, multi_ref=native, no cache",
                     lambda: tm.score(ds, metrics, multi_ref="native", n_jobs=args.jobs))
        record["timings"]["T2_native"] = d
    if args.meteor:
        d, _ = _time("T3 meteor, multi_ref=max, no cache",
                     lambda: tm.score(ds, ["meteor"], n_jobs=args.jobs))
        record["timings"]["T3_meteor"] = d
    if args.quick:
        proj = {k: v * scale for k, v in record["timings"].items()}
        record["projected_full"] = proj
        print("projected to the full 17 600 pairs:",
              ", ".join(f"{k} {v:.1f} s" for k, v in proj.items()))
    full = record["timings"]["T1_cold"] * (scale if args.quick else 1.0)
    record["target_met"] = full < TARGET_S
    print(f"target: T1 {full:.1f} s {'<' if full < TARGET_S else '>='} {TARGET_S:.0f} s")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "textmetrics.json").write_text(json.dumps(record, indent=1))
    return 0 if record["target_met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
