"""The glue around the kernels (issue 26.5), before/after in one run: compare_all on SummEval at
system and input level, acc_eq at input/item grouping against its global per-pair cost, and the
bootstrap's time inside and outside its kernels.

usage: python benchmarks/glue.py --baseline-src DIR [--metrics 16] [--n-resamples 1000]
                                 [--repeats 1] [--cases A,B,...] [--out FILE.json]

With ``--repeats`` above 1 each case ends with the medians (before, after, the ratio of the
medians and the median of the per-repeat ratios) and the largest peak RSS of either tree.

``DIR`` is another checkout's ``src`` (e.g. ``git archive <commit> src | tar -x -C /tmp/base``).
Every case is a fresh ``python`` process under ``/usr/bin/time -v`` (peak RSS of the whole
process) with ``PYTHONPATH`` at one ``src``; the baseline and this checkout alternate, case by
case, so both see the same load (``os.getloadavg`` is printed with every figure).  Inside a
process the kernels are compiled or loaded by a warm-up call first; the figure is the CPU time
(``time.process_time``: user + system of all threads) of the timed call.

* ``compare-<level>-<method>``: ``compare_all(summeval, "coherence", metrics=<first K>,
  level=..., method=..., test="perm-both", n_resamples=...)``; the "kernel" column is the CPU
  time inside the Perm-Both kernel calls (``PairLayout.pair_values`` / ``group_means``), i.e.
  what the run would cost with no glue at all (the physical-limit column for these kernels);
* ``acc_eq-<level>``: ``level_values(metric, human, level, "acc_eq")`` on MQM-like data
  (benchmarks/acc_eq.py: 16 x 2000; input = 2000 groups of 16, item = 16 groups of 2000), in
  ns per pair; its bound is the per-pair cost of the same sweep on one group of 8000 cells
  (global level, measured in the same process);
* ``boot-input-kendall_b``: ``compare_all(..., level="input", method="kendall_b",
  test="boot-both")``; "kernel" is the CPU time inside ``boot_kendall_stats``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

CHILD = r'''
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
warnings.simplefilter("ignore")
import numpy as np
import metaeval
case, K, B = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
out = {"case": case}
kern = [0.0]

def timed(obj, name):
    real = getattr(obj, name)
    def f(*a, **k):
        t = time.process_time()
        try:
            return real(*a, **k)
        finally:
            kern[0] += time.process_time() - t
    setattr(obj, name, f)

if case.startswith("compare") or case.startswith("boot"):
    ds = metaeval.load_dataset("summeval")
    mets = list(ds.metrics)[:K]
    if case.startswith("compare"):
        _, level, method = case.split("-", 2)
        test = "perm-both"
    else:
        _, level, method = case.split("-", 2)
        test = "boot-both"
    kw = dict(metrics=mets, level=level, method=method, test=test, rng=0)
    metaeval.compare_all(ds, "coherence", n_resamples=20, **kw)  # compile / load the kernels
    if test == "perm-both":
        from metaeval.stats import permboth
        timed(permboth.PairLayout, "pair_values")
        timed(permboth.PairLayout, "group_means")
    else:
        from metaeval.stats import coefficients
        real_kernels = coefficients.kernels
        class Spy:
            def __init__(self, ns): self.ns = ns
            def __getattr__(self, name):
                v = getattr(self.ns, name)
                if name.startswith("boot_"):
                    def f(*a):
                        t = time.process_time()
                        try:
                            return v(*a)
                        finally:
                            kern[0] += time.process_time() - t
                    return f
                return v
        def spy(*a, **k):
            return Spy(real_kernels(*a, **k))
        import metaeval.stats.cellboot as cb
        cb.kernels = spy
    t, c = time.perf_counter(), time.process_time()
    r = metaeval.compare_all(ds, "coherence", n_resamples=B, **kw)
    out.update(cpu=time.process_time() - c, wall=time.perf_counter() - t, kernel=kern[0],
               pairs=len(r.pairs), check=float(np.nansum([p.pvalue for p in r.pairs])))
else:
    from acc_eq import mqm_like
    from metaeval.stats.levels import level_values
    level = case.split("-")[1]
    rng = np.random.default_rng(20231)
    metric, human = mqm_like(rng, 16, 2000)
    level_values(metric[:, :40], human[:, :40], level, "acc_eq", detail=False)
    reps = 10 if level == "input" else 2
    c = time.process_time()
    for _ in range(reps):
        lv = level_values(metric, human, level, "acc_eq", detail=False)
    dt = (time.process_time() - c) / reps
    pairs = 2000 * 16 * 15 / 2 if level == "input" else 16 * 2000 * 1999 / 2
    m1, h1 = metric.reshape(1, -1)[:, :8000], human.reshape(1, -1)[:, :8000]
    c = time.process_time()
    level_values(m1, h1, "global", "acc_eq", detail=False)
    dg = time.process_time() - c
    out.update(cpu=dt, ns_per_pair=dt / pairs * 1e9, bound_ns_per_pair=dg / (8000 * 7999 / 2) * 1e9,
               check=float(lv.value[0]))
print(json.dumps(out))
'''


def run(src, case, K, B):
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name, sys.executable, "-c", CHILD, src,
                            HERE, case, str(K), str(B)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": src})
        v = tf.read()
    if p.returncode:
        raise SystemExit(f"{case} [{src}] failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["rss_mb"] = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", v).group(1)) / 1024
    out["load"] = os.getloadavg()[0]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-src", required=True)
    ap.add_argument("--metrics", type=int, default=16)
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cases", default="compare-system-pearson,compare-input-pearson,"
                    "compare-input-kendall_b,acc_eq-input,acc_eq-item,boot-input-kendall_b")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    rows = []
    for case in a.cases.split(","):
        for rep in range(a.repeats):
            order = [("before", a.baseline_src), ("after", SRC)]
            if rep % 2:
                order.reverse()
            got = {tag: run(src, case, a.metrics, a.n_resamples) for tag, src in order}
            b, n = got["before"], got["after"]
            if b["check"] != n["check"]:
                print(f"  !! {case}: the numbers differ ({b['check']!r} vs {n['check']!r})")
            line = (f"{case:<26} before {b['cpu']:8.3f} CPU-s {b['rss_mb']:5.0f} MB (load {b['load']:.1f})"
                    f" | after {n['cpu']:8.3f} CPU-s {n['rss_mb']:5.0f} MB (load {n['load']:.1f})"
                    f" | {b['cpu'] / n['cpu']:.2f}x")
            if "kernel" in n:
                line += (f" | kernel {b['kernel']:.3f} -> {n['kernel']:.3f} CPU-s, after/kernel "
                         f"{n['cpu'] / max(n['kernel'], 1e-9):.2f}x")
            if "ns_per_pair" in n:
                line += (f" | {b['ns_per_pair']:.0f} -> {n['ns_per_pair']:.0f} ns/pair, bound "
                         f"{n['bound_ns_per_pair']:.0f} ns/pair ({n['ns_per_pair'] / n['bound_ns_per_pair']:.1f}x)")
            print(line, flush=True)
            rows.append({"case": case, "before": b, "after": n})
        if a.repeats > 1:
            got = [r for r in rows if r["case"] == case]
            bs = [r["before"]["cpu"] for r in got]
            ns = [r["after"]["cpu"] for r in got]
            rs = [x / y for x, y in zip(bs, ns)]
            rss_b = max(r["before"]["rss_mb"] for r in got)
            rss_n = max(r["after"]["rss_mb"] for r in got)
            print(f"{case:<26} median of {len(got)}: before {statistics.median(bs):.3f} | after "
                  f"{statistics.median(ns):.3f} CPU-s | ratio of medians "
                  f"{statistics.median(bs) / statistics.median(ns):.2f}x, median ratio "
                  f"{statistics.median(rs):.2f}x (min {min(rs):.2f}, max {max(rs):.2f}) | peak RSS "
                  f"{rss_b:.0f} / {rss_n:.0f} MB", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
