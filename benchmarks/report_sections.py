"""CPU time of each section of one ``metaeval report`` run beside the estimate's part for it: the data
to calibrate ``COST`` in ``metaeval/report/_build.py`` (issue 26.3).

usage: python benchmarks/report_sections.py [REPORT ARGS ...]
       e.g. python benchmarks/report_sections.py --quick
            python benchmarks/report_sections.py FILE.csv --human h1,h2,h3,h4 --rater-col rater --quick

Runs ``metaeval report ARGS --out TMP --seed 0`` in this process (this checkout's ``src`` first on
``sys.path``) with each step of the report wrapped in ``time.process_time`` (all threads of the
process), and the writer's flushes (tables and figures) timed the same way; prints the CPU seconds
per section, the views, the rest (interpreter, imports, data loading: the process's CPU time at the
end minus the sections and views), the estimate's parts, and the load before and after.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from metaeval.report import _build, _render  # noqa: E402

CPU: dict = {}


def _wrap_steps():
    steps = _build._Builder.steps

    def timed_steps(self):
        out = []
        for label, units, fn, sid in steps(self):
            def run(bar, fn=fn, sid=sid):
                t = time.process_time()
                try:
                    return fn(bar)
                finally:
                    CPU[sid] = CPU.get(sid, 0.0) + time.process_time() - t
            out.append((label, units, run, sid))
        return out

    _build._Builder.steps = timed_steps
    flush = _render.Writer.flush

    def timed_flush(self, s):
        t = time.process_time()
        try:
            return flush(self, s)
        finally:
            CPU["(views)"] = CPU.get("(views)", 0.0) + time.process_time() - t

    _render.Writer.flush = timed_flush
    est = _build.estimate

    def kept_estimate(*a, **k):
        e = est(*a, **k)
        CPU["_estimate"] = e
        return e

    _build.estimate = kept_estimate


def main():
    args = sys.argv[1:]
    _wrap_steps()
    from metaeval.cli import main as cli

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        try:
            cli(["report", *args, "--out", d, "--seed", "0"], standalone_mode=False)
        except SystemExit as e:
            if e.code not in (0, None):
                raise
    total = time.process_time()
    est = CPU.pop("_estimate")
    views = CPU.pop("(views)", 0.0)
    sections = sum(CPU.values())  # the writer flushes after each step, outside the step's time
    print(f"metaeval report {' '.join(args)}: {total:.1f} CPU-s in all; load {load0[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"  estimate {est['seconds']:.1f} s: {est['text']}")
    for sid, sec in CPU.items():
        print(f"  {sid:<16} {sec:8.2f} CPU-s")
    print(f"  {'(views)':<16} {views:8.2f} CPU-s (tables and figures)")
    print(f"  {'(rest)':<16} {total - sections - views:8.2f} CPU-s (interpreter, imports, data)")
    print("  estimate parts: " + ", ".join(f"{k} {v:.1f}" for k, v in est["parts"].items()))
    out = os.path.join(HERE, "results", "report_sections.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    prev = json.load(open(out)) if os.path.exists(out) else {}
    prev[" ".join(args)] = {"total": total, "sections": CPU, "views": views, "estimate": est["seconds"],
                            "parts": est["parts"], "load": [load0[0], os.getloadavg()[0]]}
    with open(out, "w") as fh:
        json.dump(prev, fh, indent=1)


if __name__ == "__main__":
    main()
