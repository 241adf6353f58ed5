#!/usr/bin/env python
"""Benchmark of `metaeval report` on the bundled SummEval data: one command.

Usage (from the repository root)::

    python benchmarks/report.py            # quick, then full (~12 min on 2 cores)
    python benchmarks/report.py --quick    # the quick mode only (~40 s)
    python benchmarks/report.py --full     # the full default run only

Targets (issue 7, "The report"):

R1  ``metaeval report --quick --out DIR --seed 0`` (the README's main command, plus a
    seed): under 1 minute, wall clock of the whole command (process start to exit).
R2  ``metaeval report --out DIR --seed 0`` (the full default run): under 15 minutes.

Each command runs in a fresh process, as a user runs it, measured like ``time``
(wall clock of the subprocess); the numba kernels' on-disk cache is warm (run any
metaeval command once before, e.g. the test suite).  The report's own per-section
timings (``results.json``: ``seconds`` of each section, ``seconds_analyses``,
``seconds_views``) are recorded beside it, with the machine and the load average
before and after.  Results go to ``benchmarks/results/report.json`` (git-ignored).
The code measured is this checkout's ``src/`` (put first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
RESULTS = REPO / "benchmarks" / "results"
TARGETS = {"quick": 60.0, "full": 900.0}


def _load():
    return [round(v, 2) for v in os.getloadavg()]


def machine():
    info = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    try:
        cpu = Path("/proc/cpuinfo").read_text().splitlines()
        info["cpu_model"] = next((ln.split(":", 1)[1].strip() for ln in cpu if ln.startswith("model name")), None)
        mem = Path("/proc/meminfo").read_text().splitlines()[0]
        info["ram_gib"] = round(int(mem.split()[1]) / 1024 ** 2, 1)
    except OSError:  # pragma: no cover
        pass
    try:
        info["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                            text=True).stdout.strip()
        info["src_dirty"] = bool(subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=REPO,
                                                capture_output=True, text=True).stdout.strip())
    except OSError:  # pragma: no cover
        info["git_commit"] = None
    return info


def run(mode, out):
    args = [sys.executable, "-m", "metaeval.cli", "report", "--out", str(out), "--seed", "0"]
    if mode == "quick":
        args.insert(4, "--quick")
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = _load()
    t = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{mode}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    doc = json.loads((Path(out) / "results.json").read_text())
    return {
        "target": f"R{1 if mode == 'quick' else 2}: metaeval report {'--quick ' if mode == 'quick' else ''}"
                  f"(bundled SummEval, seed 0)",
        "command": " ".join(["metaeval", *args[3:]]),
        "wall_s": wall, "target_s": TARGETS[mode], "status": "pass" if wall < TARGETS[mode] else "FAIL",
        "seconds_analyses": doc["seconds_analyses"], "seconds_views": doc["seconds_views"],
        "sections": {s["id"]: round(s["seconds"], 2) for s in doc["sections"]},
        "config": {k: doc["config"][k] for k in ("n_resamples", "splits", "pairwise", "dp_test", "text")},
        "human": doc["config"]["human"], "n_metrics": len(doc["config"]["metrics"]),
        "skipped": [k["reason"] for k in doc["skipped"]],
        "load_before": before, "load_after": _load(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the quick mode only")
    g.add_argument("--full", action="store_true", help="the full default run only")
    ap.add_argument("--out", default=str(RESULTS / "report.json"))
    a = ap.parse_args()
    modes = ["quick"] if a.quick else ["full"] if a.full else ["quick", "full"]
    result = {"machine": machine(), "runs": {}}
    print(f"machine: {result['machine'].get('cpu_model')}, {result['machine']['nproc']} CPUs; load {_load()}")
    with tempfile.TemporaryDirectory(prefix="metaeval-bench-report-") as tmp:
        for mode in modes:
            r = run(mode, Path(tmp) / mode)
            result["runs"][mode] = r
            print(f"{r['target']}: {r['wall_s']:.1f} s (target < {r['target_s']:.0f} s: {r['status']}); "
                  f"analyses {r['seconds_analyses']:.1f} s, figures/tables {r['seconds_views']:.1f} s; "
                  f"load {r['load_before']} -> {r['load_after']}")
            print("   sections: " + ", ".join(f"{k} {v:.1f}" for k, v in r["sections"].items()))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1))
    print(f"written: {a.out}")
    return 0 if all(r["status"] == "pass" for r in result["runs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
