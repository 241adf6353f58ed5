"""Cold versus warm first runs, start-up, estimates and the rater-heavy case (issue 26), each
figure as a ratio against a baseline measured in the same run.

usage: python benchmarks/coldwarm.py [--baseline-src DIR] [--skip-report] [--out FILE.json]
       python benchmarks/coldwarm.py --estimates [--cases summeval-quick,rated-quick,rated-full,summeval-full]
                                     [--out FILE.json]

Every command is a fresh process of ``python -m metaeval`` with ``PYTHONPATH`` at this checkout's
``src`` (or at ``--baseline-src``, e.g. a ``git archive`` of the previous commit), timed by
``/usr/bin/time -v``: wall, CPU (user + sys) and peak RSS.

* cold: ``NUMBA_CACHE_DIR`` at a new empty folder (what a new environment has; anything shipped with
  the package is still found), then warm: the same folder twice more;
* "no shipped cache": the cold run with ``METAEVAL_IGNORE_SHIPPED_NUMBA_CACHE=1`` (the kernels compile,
  as before issue 26), a baseline measured in the same run;
* start-up: the trivial one-level correlation (5 warm runs), against ``python -c "import numpy,
  pandas"`` in the same run;
* the report's own estimate against its measured CPU time;
* ``reliability`` on 1,200 rows with 1,200 job-specific rater labels (against the baseline source).

With ``--estimates`` (issue 26.3): ``report`` in its quick and full modes on SummEval and on the
generated 11 x 96 rated file (``benchmarks/rated_file.py``: 4 human columns x 3 raters x 12 metrics),
each cold (empty ``NUMBA_CACHE_DIR``, the shipped cache present: a new user) then warm (the same
folder again): the estimate the command prints before any work against its measured CPU time, and
the header's measured figure-and-table time (``results.json`` ``meta.seconds_views``).

Prints the load (``os.getloadavg``) before and after every figure.  CI does not run this (it times).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
CORRELATE = ["correlate", "summeval", "--human", "coherence", "--seed", "0"]
TRIVIAL = ["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1", "--level", "system",
           "--ci", "none", "--pvalue", "none"]


def timed(argv, src, cache, extra_env=None):
    env = {**os.environ, "PYTHONPATH": src, "NUMBA_CACHE_DIR": cache, **(extra_env or {})}
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name, *argv], env=env, capture_output=True,
                             text=True)
        wall = time.perf_counter() - t
        v = tf.read()
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{out.stderr[-2000:]}")
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", v).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", v).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", v).group(1)) / 1024
    return {"wall": wall, "cpu": user + sys_, "rss_mb": rss, "load": os.getloadavg()[0], "stderr": out.stderr}


def show(label, r):
    print(f"  {label:<34} {r['wall']:7.1f} s wall {r['cpu']:7.2f} CPU-s {r['rss_mb']:6.0f} MB (load {r['load']:.1f})")


def cold_warm(name, argv, src, results):
    print(f"{name}: {' '.join(argv)}  [{src}]")
    with tempfile.TemporaryDirectory() as cache:
        cold = timed([sys.executable, "-m", "metaeval", *argv], src, cache)
        show("cold (empty NUMBA_CACHE_DIR)", cold)
        warm = [timed([sys.executable, "-m", "metaeval", *argv], src, cache) for _ in range(2)]
        for w in warm:
            show("warm", w)
    with tempfile.TemporaryDirectory() as cache:
        compiling = timed([sys.executable, "-m", "metaeval", *argv], src, cache,
                          {"METAEVAL_IGNORE_SHIPPED_NUMBA_CACHE": "1"})
        show("cold, no shipped cache (baseline)", compiling)
    w = min(x["cpu"] for x in warm)
    print(f"  => cold / warm CPU {cold['cpu'] / w:.2f}x; without the shipped cache {compiling['cpu'] / w:.2f}x")
    results[name] = {"cold": cold, "warm": warm, "no_shipped": compiling}
    return cold, warm, compiling


def estimate_ratio(run):
    m = re.search(r"estimated cost: .*about ([\d.]+) (s|min|h)", run["stderr"])
    if not m:
        return None
    sec = float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]
    return sec, sec / run["cpu"]


def crowd_file(path):
    import numpy as np

    g = np.random.default_rng(0)
    with open(path, "w") as f:
        f.write("system,input,rater,quality,metric\n")
        k = 0
        for s in range(40):
            for i in range(10):
                m = float(g.normal())
                for _ in range(3):
                    f.write(f"sys{s},in{i},job{k}_w{g.integers(1000)},{g.integers(1, 6)},{m}\n")
                    k += 1


ESTIMATE_CASES = {
    "summeval-quick": (["report", "--quick"], None),
    "summeval-full": (["report"], None),
    "rated-quick": (["report", "{rated}", "--human", "h1,h2,h3,h4", "--rater-col", "rater", "--quick"], "rated"),
    "rated-full": (["report", "{rated}", "--human", "h1,h2,h3,h4", "--rater-col", "rater"], "rated"),
}


def estimates(cases, results):
    """The report's estimate against its CPU time, cold then warm, per case (module docstring)."""
    sys.path.insert(0, HERE)
    from rated_file import generate

    with tempfile.TemporaryDirectory() as d:
        rated = os.path.join(d, "rated.csv")
        generate(rated)
        for name in cases:
            argv, _ = ESTIMATE_CASES[name]
            argv = [a.format(rated=rated) for a in argv]
            print(f"{name}: metaeval {' '.join(argv)}")
            with tempfile.TemporaryDirectory() as cache:
                runs = {}
                for label in ("cold", "warm"):
                    out = os.path.join(d, f"{name}-{label}")
                    r = timed([sys.executable, "-m", "metaeval", *argv, "--out", out, "--seed", "0"], SRC, cache)
                    with open(os.path.join(out, "results.json")) as fh:
                        meta = json.load(fh)  # the report's meta, the numbers are beside it
                    e = estimate_ratio(r)
                    r.update(estimate=e[0] if e else None, ratio=e[1] if e else None,
                             seconds_views=meta.get("seconds_views"), seconds_analyses=meta.get("seconds_analyses"))
                    show(label, r)
                    print(f"    estimate about {r['estimate']:.0f} s of CPU / measured {r['cpu']:.1f} CPU-s = "
                          f"{r['ratio']:.2f}; header: {r['seconds_analyses']:.0f} s (analyses) + "
                          f"{r['seconds_views']:.0f} s (figures, tables)")
                    r.pop("stderr")
                    runs[label] = r
            results.setdefault("estimates", {})[name] = runs


def main():
    args = sys.argv[1:]
    base = args[args.index("--baseline-src") + 1] if "--baseline-src" in args else None
    out = args[args.index("--out") + 1] if "--out" in args else os.path.join(HERE, "results", "coldwarm.json")
    results = {"load_before": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    print(f"{results['date']}, load {results['load_before']}")

    if "--estimates" in args:
        cases = (args[args.index("--cases") + 1].split(",") if "--cases" in args
                 else ["summeval-quick", "rated-quick", "rated-full", "summeval-full"])
        estimates(cases, results)
        results["load_after"] = os.getloadavg()
        print(f"load after {results['load_after']}")
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as fh:
            json.dump(results, fh, indent=1, default=str)
        return

    cold_warm("correlate", CORRELATE, SRC, results)
    if "--skip-report" not in args:
        with tempfile.TemporaryDirectory() as d:
            cold, warm, compiling = cold_warm("report --quick", ["report", "--quick", "--out", d, "--seed", "0"],
                                              SRC, results)
        for label, r in (("cold", cold), ("warm", warm[-1]), ("cold, no shipped cache", compiling)):
            e = estimate_ratio(r)
            if e:
                print(f"  estimate ({label}): about {e[0]:.0f} s of CPU, measured {r['cpu']:.1f}: "
                      f"estimate / measured {e[1]:.2f}")

    print("start-up (warm): " + " ".join(TRIVIAL))
    with tempfile.TemporaryDirectory() as cache:
        timed([sys.executable, "-m", "metaeval", *TRIVIAL], SRC, cache)  # fill the cache
        runs = [timed([sys.executable, "-m", "metaeval", *TRIVIAL], SRC, cache) for _ in range(5)]
        floor = [timed([sys.executable, "-c", "import numpy, pandas"], SRC, cache) for _ in range(5)]
        for r in runs:
            show("trivial correlate", r)
        for r in floor:
            show("python -c 'import numpy, pandas'", r)
        med = sorted(r["cpu"] for r in runs)[2]
        fl = sorted(r["cpu"] for r in floor)[2]
        print(f"  => median {med:.2f} CPU-s; / import numpy, pandas {med / fl:.2f}x")
        results["startup"] = {"runs": runs, "floor": floor}
        if base:
            b = [timed([sys.executable, "-m", "metaeval", *TRIVIAL], base, cache) for _ in range(6)][1:]
            bm = sorted(r["cpu"] for r in b)[2]
            print(f"  baseline {base}: median {bm:.2f} CPU-s => this / baseline {med / bm:.2f}x")
            results["startup"]["baseline"] = b

    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "crowd.csv")
        crowd_file(f)
        argv = [sys.executable, "-m", "metaeval", "reliability", f, "--human", "quality", "--rater-col", "rater",
                "--ci", "none"]
        print("reliability, 1,200 rows x 1,200 rater labels:")
        with tempfile.TemporaryDirectory() as cache:
            r = timed(argv, SRC, cache)
            show("this checkout", r)
            results["reliability"] = {"this": r}
            if base:
                b = timed(argv, base, cache)
                show("baseline", b)
                print(f"  => this / baseline CPU {r['cpu'] / b['cpu']:.3f}x, peak RSS {r['rss_mb'] / b['rss_mb']:.2f}x")
                results["reliability"]["baseline"] = b
    results["load_after"] = os.getloadavg()
    print(f"load after {results['load_after']}")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    for v in results.values():
        if isinstance(v, dict):
            for x in v.values():
                for y in (x if isinstance(x, list) else [x]):
                    if isinstance(y, dict):
                        y.pop("stderr", None)
    with open(out, "w") as fh:
        json.dump(results, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
