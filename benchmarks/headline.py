"""The headline rows of BENCHMARKS.md's older sections, each as a ratio against a baseline measured
in the same run (issue 26, item 6).

usage: python benchmarks/headline.py --baseline-src DIR [--report-baseline-src DIR] [--repeats 2]
                                     [--only T1,T2,T4,CLI,report,T3] [--no-nlpstats] [--out FILE.json]

Every figure is a fresh ``python`` process per source tree (``PYTHONPATH`` at this checkout's ``src``,
or at ``--baseline-src``: e.g. ``git archive e7e52a6 src | tar -x -C /tmp/base``, the commit of the
T1-T4 sections), the trees alternated, each with its own ``NUMBA_CACHE_DIR`` warmed by an untimed run
first (the old commits have no shipped kernel cache; compilation is excluded, as the sections say).
Timed: the work's CPU time inside the process (``time.process_time``, imports and data loading
excluded) and, by ``/usr/bin/time -v``, the process's CPU and peak RSS.  The load average is printed
before and after each figure.

* T1: the 12 Perm-Both measures of ``compare(ds, "coherence", "ROUGE.1", "BertScore_f1", level, method,
  test="perm-both", n_resamples=1000, rng=0)``, each once after one warm-up call;
* T2: ``compare_all`` at input level, kendall_b, the first 12 metrics (66 pairs), 1000 resamples, n_jobs=1;
* T4: ``correlate`` of the first 8 metrics at 4 levels x 3 methods, boot-both, 1000 resamples;
* T3 (with nlpstats installed): nlpstats' ``permutation_test(..., "both")`` on the same pair against this
  tree's ``perm-both-rowcol`` (the same scheme) and ``perm-both``: system and global 1000 resamples,
  input 50 resamples scaled to 1000 (linear: a Python loop per resample);
* the CLI: ``metaeval correlate summeval --human coherence --level system,input,global --method
  kendall_b --seed 0`` (T4's command without the item level, which the command line spells
  ``group-by-system`` since issue 21 and the old trees ``item``) and ``metaeval report --quick`` (the report against ``--report-baseline-src``,
  default the baseline; pass a tree that has the report).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
LEVELS = ["system", "input", "item", "global"]
METHODS = ["pearson", "spearman", "kendall_b"]

_PRE = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import metaeval
ds = metaeval.load_dataset("summeval")
out = {}
"""

T1 = _PRE + """
for level in %(levels)r:
    for method in %(methods)r:
        kw = dict(level=level, method=method, test=%(test)r, n_resamples=1000, rng=0)
        metaeval.compare(ds, "coherence", "ROUGE.1", "BertScore_f1", **kw)
        t = time.process_time(); w = time.perf_counter()
        r = metaeval.compare(ds, "coherence", "ROUGE.1", "BertScore_f1", **kw)
        out[level + "/" + method] = [time.process_time() - t, time.perf_counter() - w, float(r.pvalue)]
print("RESULT " + json.dumps(out))
"""

T2 = _PRE + """
mets = list(ds.metrics)[:12]
metaeval.compare_all(ds, "coherence", metrics=mets[:3], level="input", method="kendall_b", test="perm-both",
                     n_resamples=20, rng=0, n_jobs=1)
t = time.process_time(); w = time.perf_counter()
metaeval.compare_all(ds, "coherence", metrics=mets, level="input", method="kendall_b", test="perm-both",
                     n_resamples=1000, rng=0, n_jobs=1)
out["compare_all"] = [time.process_time() - t, time.perf_counter() - w]
print("RESULT " + json.dumps(out))
"""

T4 = _PRE + """
mets = list(ds.metrics)[:8]
kw = dict(level=%(levels)r, method=%(methods)r, ci="boot-both", rng=0)
metaeval.correlate(ds, "coherence", metrics=mets[:1], n_resamples=20, **kw)
t = time.process_time(); w = time.perf_counter()
metaeval.correlate(ds, "coherence", metrics=mets, n_resamples=1000, **kw)
out["correlate"] = [time.process_time() - t, time.perf_counter() - w]
print("RESULT " + json.dumps(out))
""" % {"levels": LEVELS, "methods": METHODS}

NLPSTATS = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import metaeval
from nlpstats.correlations import permutation_test
ds = metaeval.load_dataset("summeval")
X, Y, Z = ds.scores("ROUGE.1"), ds.scores("BertScore_f1"), ds.scores("coherence")
out = {}
for level, n in (("system", 1000), ("input", 50), ("global", 1000)):
    for coef in ("pearson", "spearman", "kendall"):
        np.random.seed(0)
        t = time.process_time(); w = time.perf_counter()
        r = permutation_test(X, Y, Z, level, coef, permutation_method="both", n_resamples=n)
        out[level + "/" + coef] = [(time.process_time() - t) * 1000 / n, (time.perf_counter() - w) * 1000 / n,
                                   float(r.pvalue), n]
print("RESULT " + json.dumps(out))
"""


def _load():
    return round(os.getloadavg()[0], 1)


def run(argv, src, cache, *, python_code=None):
    env = {**os.environ, "PYTHONPATH": src, "NUMBA_CACHE_DIR": cache}
    # old trees have no metaeval/__main__.py: their command line is the module metaeval.cli
    entry = "metaeval" if os.path.exists(os.path.join(src, "metaeval", "__main__.py")) else "metaeval.cli"
    cmd = [sys.executable, "-c", python_code] if python_code is not None else [sys.executable, "-m", entry, *argv]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t = time.perf_counter()
        load0 = _load()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name, *cmd], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        v = tf.read()
    if p.returncode != 0:
        raise SystemExit(f"{src}: {' '.join(cmd)[:200]} failed:\n{p.stderr[-3000:]}")
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", v).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", v).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", v).group(1)) / 1024
    m = re.search(r"^RESULT (.*)$", p.stdout, re.M)
    return {"wall": wall, "cpu": user + sys_, "rss_mb": rss, "load": [load0, _load()],
            "result": json.loads(m.group(1)) if m else None}


def main():
    args = sys.argv[1:]
    base = args[args.index("--baseline-src") + 1]
    rbase = args[args.index("--report-baseline-src") + 1] if "--report-baseline-src" in args else base
    repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else 2
    out = args[args.index("--out") + 1] if "--out" in args else os.path.join(HERE, "results", "headline.json")
    trees = {"this": SRC, "baseline": base}
    res = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "load_before": os.getloadavg(),
           "trees": {**trees, "report_baseline": rbase}, "figures": {}}
    print(f"{res['date']}: this = {SRC}, baseline = {base}, report baseline = {rbase}; load {res['load_before']}")
    caches = {name: tempfile.mkdtemp(prefix=f"headline-{name}-") for name in ("this", "baseline", "report_baseline")}
    only = args[args.index("--only") + 1].split(",") if "--only" in args else None
    # warm each tree's cache (compiles what the old trees lack); untimed
    for name, src in (trees.items() if only is None or {"T1", "T2", "T4", "CLI"} & set(only) else ()):
        t = time.perf_counter()
        run(None, src, caches[name], python_code=(T1 % {"levels": LEVELS, "methods": METHODS, "test": "perm-both"})
            .replace("n_resamples=1000", "n_resamples=20"))
        run(None, src, caches[name], python_code=T2.replace("n_resamples=1000", "n_resamples=20"))
        run(None, src, caches[name], python_code=T4.replace("n_resamples=1000", "n_resamples=20"))
        print(f"  warmed {name} in {time.perf_counter() - t:.0f} s")
    figures = {
        "T1 perm-both": ("code", T1 % {"levels": LEVELS, "methods": METHODS, "test": "perm-both"}),
        "T1 perm-both-rowcol": ("code", T1 % {"levels": ["system", "input", "global"], "methods": METHODS,
                                              "test": "perm-both-rowcol"}),
        "T2 compare_all 66 pairs": ("code", T2),
        "T4 correlate 8 metrics": ("code", T4),
        "CLI correlate": ("cli", ["correlate", "summeval", "--human", "coherence", "--level",
                                  "system,input,global", "--method", "kendall_b", "--seed", "0"]),
    }

    def wanted(label):
        return only is None or label.split()[0] in only

    for label, (kind, what) in figures.items():
        if not wanted(label):
            continue
        rows = {"this": [], "baseline": []}
        for _ in range(repeats):
            for name in ("this", "baseline"):
                rows[name].append(run(what if kind == "cli" else None, trees[name], caches[name],
                                      python_code=what if kind == "code" else None))
        res["figures"][label] = rows
        _print(label, rows)
    if wanted("report"):
        with tempfile.TemporaryDirectory() as d:
            rows = {"this": [], "baseline": []}
            rtrees = {"this": (SRC, caches["this"]), "baseline": (rbase, caches["report_baseline"])}
            for name, (src, cache) in rtrees.items():  # untimed: the report's kernels into the caches
                run(["report", "--quick", "--out", os.path.join(d, name), "--seed", "0"], src, cache)
            for _ in range(repeats):
                for name, (src, cache) in rtrees.items():
                    rows[name].append(run(["report", "--quick", "--out", os.path.join(d, name), "--seed", "0"],
                                          src, cache))
            res["figures"]["report --quick"] = rows
            _print("report --quick", rows)
    if "--no-nlpstats" not in args and wanted("T3"):
        mine = {}
        for label in ("T1 perm-both", "T1 perm-both-rowcol"):  # this tree's side, in this run
            if label in res["figures"]:
                runs = res["figures"][label]["this"]
            else:
                runs = [run(None, SRC, caches["this"], python_code=figures[label][1]) for _ in range(repeats)]
            mine[label] = {k: min(x["result"][k][0] for x in runs) for k in runs[0]["result"]}
        r = run(None, SRC, caches["this"], python_code=NLPSTATS)
        res["figures"]["T3 nlpstats"] = {"nlpstats": r, "metaeval": mine}
        print(f"T3 nlpstats (peak RSS {r['rss_mb']:.0f} MB, load {r['load']}): CPU-s per 1000 resamples, ratio to "
              f"this tree's perm-both-rowcol / perm-both (CPU)")
        for k, (cpu, wall, p, n) in r["result"].items():
            key = k.replace("kendall", "kendall_b")
            rc, pb = mine["T1 perm-both-rowcol"][key], mine["T1 perm-both"][key]
            print(f"  {k:<18} {cpu:8.2f} ({n} run)  rowcol {rc:.3f} s: {cpu / rc:7.0f}x   "
                  f"perm-both {pb:.3f} s: {cpu / pb:7.0f}x")
    res["load_after"] = os.getloadavg()
    print(f"load after {res['load_after']}")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1)


def _print(label, rows):
    def work(r):
        if r["result"] is None:
            return r["cpu"]
        return sum(v[0] for v in r["result"].values())

    this = min(work(r) for r in rows["this"])
    base = min(work(r) for r in rows["baseline"])
    rss = max(r["rss_mb"] for r in rows["this"]), max(r["rss_mb"] for r in rows["baseline"])
    loads = [x for r in rows["this"] + rows["baseline"] for x in r["load"]]
    print(f"{label}: this {this:.2f} CPU-s, baseline {base:.2f} CPU-s (min of {len(rows['this'])}) => "
          f"this / baseline {this / base:.2f}x; peak RSS {rss[0]:.0f} / {rss[1]:.0f} MB; load {min(loads)}-{max(loads)}")
    if rows["this"][0]["result"] and len(rows["this"][0]["result"]) > 1:
        for k in rows["this"][0]["result"]:
            a = min(r["result"][k][0] for r in rows["this"])
            b = min(r["result"][k][0] for r in rows["baseline"])
            print(f"    {k:<20} {a:.3f} / {b:.3f} CPU-s = {a / b:.2f}x")


if __name__ == "__main__":
    main()
