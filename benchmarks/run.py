#!/usr/bin/env python
"""metaeval performance benchmarks: one command for every target.

Usage (from the repository root)::

    python benchmarks/run.py            # default run, about 2.5 minutes on 2 cores
    python benchmarks/run.py --quick    # smoke run, under 1 minute
    python benchmarks/run.py --full     # no extrapolation anywhere (about 10 minutes; 4.5 with --no-nlpstats --no-compile --no-cli)

It prints one table per target and writes ``benchmarks/results/latest.json``
(git-ignored).  The code measured is always this checkout's ``src/`` (it is put
first on ``sys.path`` and on ``PYTHONPATH`` for the subprocesses), whatever
``pip install -e`` points at; the JSON records the file actually imported.

Targets (the project's core issue):

T1  ``compare(ds, "coherence", "ROUGE.1", "BertScore_f1", level, method,
    test="perm-both", n_resamples=1000, rng=0)`` for the 4 levels x
    {pearson, spearman, kendall_b}: warm time < 0.5 s per measure.  Warm means
    the numba kernels are already compiled and loaded; the first call of the
    process (which loads the on-disk numba cache) is reported separately, and
    the one-off compilation cost is measured in a subprocess with an empty
    ``NUMBA_CACHE_DIR`` (so the repository's cache is neither used nor touched).
T2  ``compare_all(ds, "coherence", level="input", method="kendall_b",
    test="perm-both", n_resamples=1000, rng=0, n_jobs=1|2)`` over all 43
    metrics (903 pairs): < 120 s.  By default a spread subset of metrics is
    run and the time is extrapolated linearly in the number of pairs (every
    pair does the same work); ``--full`` runs all 43.  For ``n_jobs=2`` the
    joblib worker pool is started (and timed) before the measurement, and that
    one-off start-up is added once to the projection.
T3  nlpstats 0.0.1 ``permutation_test(X, Y, Z, level, coefficient,
    permutation_method="both", n_resamples=...)`` for its levels
    (system, input, global) x (pearson, spearman, kendall), against metaeval's
    ``perm-both-rowcol`` (the same rows-then-columns scheme) and ``perm-both``
    (per-cell).  nlpstats is a Python loop over scipy calls, linear in the
    number of resamples: it is run with fewer resamples where slow and scaled
    to 1000 (the JSON says which).  nlpstats has no item level.
T4  ``correlate(ds, "coherence", level=[4 levels], method=[pearson, spearman,
    kendall_b], ci="boot-both", n_resamples=1000, rng=0)`` over all 43 metrics
    (subset + linear extrapolation by default, all with ``--full``), and the
    CLI ``metaeval correlate summeval --human coherence --level
    system,input,item,global --method kendall_b --seed 0`` as a cold
    subprocess (interpreter start, imports, numba cache load, work, output).

Times are wall-clock (``time.perf_counter``).  Repeated measures report the
minimum and the median; pass/fail uses the median ("borderline" when only the
minimum passes).  The machine may be shared: the load average before and
after is recorded, and a warning is printed if ``src/`` changed during the run
(joblib workers import the code afresh, so a mid-run edit mixes versions).
Every measure that misses its target is profiled with cProfile
(``--no-profile`` to skip; ``--profile-all`` also profiles the three slowest
T1 measures and one T2 pair when they pass).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
sys.path.insert(0, str(SRC))
RESULTS = REPO / "benchmarks" / "results"

HUMAN = "coherence"
METRIC_A, METRIC_B = "ROUGE.1", "BertScore_f1"  # the dataset spells BertScore this way
LEVELS = ("system", "input", "item", "global")
METHODS = ("pearson", "spearman", "kendall_b")
NLP_LEVELS = ("system", "input", "global")
NLP_COEF = {"pearson": "pearson", "spearman": "spearman", "kendall_b": "kendall"}
N_RES = 1000

T1_TARGET_S = 0.5
T2_TARGET_S = 120.0

CLI_ARGS = [
    "correlate", "summeval", "--human", "coherence",
    "--level", "system,input,item,global", "--method", "kendall_b", "--seed", "0",
]

# ---------------------------------------------------------------- helpers


def _env_for_children(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def _loadavg():
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


def _timed(fn, repeats):
    """Run ``fn`` ``repeats`` times; return (times, last result)."""
    times = []
    res = None
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t)
    return times, res


def _summary(times):
    return {"min_s": min(times), "median_s": statistics.median(times), "times_s": times}


def _status(min_s, median_s, target):
    if median_s < target:
        return "pass"
    if min_s < target:
        return "borderline"
    return "FAIL"


def _profile(fn, top=12):
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    st = pstats.Stats(pr)
    total = st.total_tt
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _) in st.stats.items():
        rows.append((tt, ct, nc, f"{_short(file)}:{line}({func})"))
    rows.sort(reverse=True)
    return {
        "total_s": total,
        "top_tottime": [
            {"tottime_s": round(tt, 4), "cumtime_s": round(ct, 4), "ncalls": nc, "function": name}
            for tt, ct, nc, name in rows[:top]
        ],
    }


def _short(path):
    p = str(path)
    for root in (str(SRC) + os.sep, sys.prefix + os.sep):
        if p.startswith(root):
            return p[len(root):]
    return p


def _print_table(title, header, rows):
    print()
    print(title)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    print(fmt.format(*header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(fmt.format(*[str(x) for x in r]))


def _f(v, d=3):
    return "-" if v is None else f"{v:.{d}f}"


def _spread(items, k):
    """k items spread evenly over ``items`` (deterministic)."""
    items = list(items)
    if k >= len(items):
        return items
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


# ---------------------------------------------------------------- machine


def machine_info():
    import numba
    import numpy
    import scipy

    info = {
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.get_num_threads(),
    }
    try:
        import joblib

        info["joblib"] = joblib.__version__
    except ImportError:  # pragma: no cover
        pass
    try:
        from importlib.metadata import version

        info["nlpstats"] = version("nlpstats")
    except Exception:  # pragma: no cover
        info["nlpstats"] = None
    try:
        cpu = Path("/proc/cpuinfo").read_text()
        models = [ln.split(":", 1)[1].strip() for ln in cpu.splitlines() if ln.startswith("model name")]
        info["cpu_model"] = models[0] if models else None
        mhz = [ln.split(":", 1)[1].strip() for ln in cpu.splitlines() if ln.startswith("cpu MHz")]
        info["cpu_mhz"] = mhz[0] if mhz else None
    except OSError:  # pragma: no cover
        info["cpu_model"] = None
    try:
        mem = Path("/proc/meminfo").read_text().splitlines()[0]
        info["ram_gib"] = round(int(mem.split()[1]) / 1024**2, 1)
    except OSError:  # pragma: no cover
        info["ram_gib"] = None
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        info["src_dirty"] = bool(dirty)
    except OSError:  # pragma: no cover
        info["git_commit"] = None
    return info


# ---------------------------------------------------------------- compile cost (child)


def compile_child():
    """Runs in a subprocess with an empty NUMBA_CACHE_DIR; prints JSON."""
    t0 = time.perf_counter()
    import metaeval

    t_import = time.perf_counter() - t0
    ds = metaeval.load_dataset("summeval")
    out = {"import_s": t_import, "metaeval_file": metaeval.__file__, "measures": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lv in LEVELS:
            for m in METHODS:
                def call(lv=lv, m=m):
                    return metaeval.compare(ds, HUMAN, METRIC_A, METRIC_B, level=lv, method=m,
                                            test="perm-both", n_resamples=20, rng=0)
                t = time.perf_counter()
                call()
                first = time.perf_counter() - t
                t = time.perf_counter()
                call()
                second = time.perf_counter() - t
                out["measures"].append({"level": lv, "method": m, "first_s": first, "second_s": second,
                                        "compile_s": max(first - second, 0.0)})
    out["compile_total_s"] = sum(r["compile_s"] for r in out["measures"])
    print(json.dumps(out))


def bench_compile():
    with tempfile.TemporaryDirectory(prefix="metaeval-numba-cache-") as d:
        t = time.perf_counter()
        p = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--_compile-child"],
            env=_env_for_children({"NUMBA_CACHE_DIR": d}), capture_output=True, text=True,
        )
        wall = time.perf_counter() - t
    if p.returncode != 0:
        return {"error": p.stderr[-2000:]}
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["child_wall_s"] = wall
    return res


# ---------------------------------------------------------------- T1


def bench_t1(metaeval, ds, repeats, test="perm-both", levels=LEVELS, methods=METHODS, warm=True):
    rows = []
    for lv in levels:
        for m in methods:
            def call(lv=lv, m=m):
                return metaeval.compare(ds, HUMAN, METRIC_A, METRIC_B, level=lv, method=m,
                                        test=test, n_resamples=N_RES, rng=0)
            first = None
            if warm:
                t = time.perf_counter()
                call()
                first = time.perf_counter() - t
            times, c = _timed(call, repeats)
            s = _summary(times)
            rows.append({
                "level": lv, "method": m, "test": test, "first_call_s": first, **s,
                "status": _status(s["min_s"], s["median_s"], T1_TARGET_S),
                "statistic": c.statistic, "pvalue": c.pvalue,
            })
    return rows


# ---------------------------------------------------------------- T2


def bench_t2(metaeval, ds, n_metrics, n_jobs_list):
    all_metrics = list(ds.metrics)
    metrics = _spread(all_metrics, n_metrics) if n_metrics else all_metrics
    k_all = len(all_metrics)
    pairs_all = k_all * (k_all - 1) // 2
    pairs = len(metrics) * (len(metrics) - 1) // 2
    out = {"metrics_total": k_all, "pairs_total": pairs_all, "metrics_run": len(metrics),
           "pairs_run": pairs, "extrapolated": pairs != pairs_all, "runs": []}
    kw = dict(level="input", method="kendall_b", test="perm-both", n_resamples=N_RES, rng=0)
    for nj in n_jobs_list:
        startup = 0.0
        if nj != 1:
            # start the joblib worker pool (and load metaeval + numba cache in
            # the workers) on a tiny job, so the timed run sees warm workers
            t = time.perf_counter()
            metaeval.compare_all(ds, HUMAN, metrics=all_metrics[:3], n_jobs=nj,
                                 **dict(kw, n_resamples=10))
            startup = time.perf_counter() - t
        gc.collect()
        t = time.perf_counter()
        res = metaeval.compare_all(ds, HUMAN, metrics=metrics, n_jobs=nj, **kw)
        wall = time.perf_counter() - t
        per_pair = wall / pairs
        projected = startup + per_pair * pairs_all if pairs != pairs_all else wall + startup
        out["runs"].append({
            "n_jobs": nj, "wall_s": wall, "pool_startup_s": startup, "per_pair_s": per_pair,
            "projected_all_s": projected,
            "status": "pass" if projected < T2_TARGET_S else "FAIL",
            "n_pairs_checked": len(res.pairs),
        })
    return out


# ---------------------------------------------------------------- T3


def bench_t3(metaeval, ds, repeats, nlp_res, me_rows_both):
    import numpy as np

    try:
        from nlpstats.correlations.permutation import permutation_test
    except ImportError:
        return {"error": "nlpstats not installed"}
    X, Y, Z = ds.scores(METRIC_A), ds.scores(METRIC_B), ds.scores(HUMAN)
    rowcol = bench_t1(metaeval, ds, repeats, test="perm-both-rowcol", levels=NLP_LEVELS, warm=False)
    both = {(r["level"], r["method"]): r for r in me_rows_both}
    rows = []
    for r in rowcol:
        lv, m = r["level"], r["method"]
        n = nlp_res[lv]
        np.random.seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            res = permutation_test(X, Y, Z, lv, NLP_COEF[m], permutation_method="both", n_resamples=n)
            wall = time.perf_counter() - t
        per1000 = wall * N_RES / n
        b = both[(lv, m)]
        rows.append({
            "level": lv, "method": m, "nlpstats_coefficient": NLP_COEF[m],
            "nlpstats_resamples": n, "nlpstats_wall_s": wall, "nlpstats_per_1000_s": per1000,
            "nlpstats_scaled": n != N_RES, "nlpstats_pvalue": res.pvalue,
            "metaeval_rowcol_median_s": r["median_s"], "metaeval_rowcol_min_s": r["min_s"],
            "metaeval_rowcol_pvalue": r["pvalue"],
            "metaeval_both_median_s": b["median_s"], "metaeval_both_pvalue": b["pvalue"],
            "ratio_vs_rowcol": per1000 / r["median_s"],
            "ratio_vs_both": per1000 / b["median_s"],
        })
    return {"rows": rows, "note": "nlpstats has no item level; its 'kendall' is scipy kendalltau "
            "(tau-b); its p-value is count/n (metaeval: (count+1)/(n+1)) and it z-scores X, Y "
            "and Z (metaeval: X, Y only; Pearson/Spearman/Kendall are invariant to that)."}


# ---------------------------------------------------------------- T4


def bench_t4(metaeval, ds, n_metrics):
    all_metrics = list(ds.metrics)
    metrics = _spread(all_metrics, n_metrics) if n_metrics else all_metrics
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        res = metaeval.correlate(ds, HUMAN, metrics=metrics, level=list(LEVELS), method=list(METHODS),
                                 ci="boot-both", n_resamples=N_RES, rng=0)
        wall = time.perf_counter() - t
    per_metric = wall / len(metrics)
    return {"metrics_run": len(metrics), "metrics_total": len(all_metrics),
            "units_run": len(res), "wall_s": wall, "per_metric_s": per_metric,
            "projected_all_s": per_metric * len(all_metrics),
            "extrapolated": len(metrics) != len(all_metrics)}


def bench_t4_breakdown(metaeval, ds, metrics):
    """Seconds per metric for each (level, method) unit of correlate (boot-both)."""
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in METHODS:
            for lv in LEVELS:
                t = time.perf_counter()
                metaeval.correlate(ds, HUMAN, metrics=metrics, level=lv, method=m,
                                   ci="boot-both", n_resamples=N_RES, rng=0)
                rows.append({"level": lv, "method": m,
                             "per_metric_s": (time.perf_counter() - t) / len(metrics)})
    return rows


def _cli_command():
    exe = Path(sys.executable).with_name("metaeval")
    if exe.exists():
        return [str(exe)], str(exe)
    code = "import sys; from metaeval.cli import main; sys.argv[0] = 'metaeval'; sys.exit(main())"
    return [sys.executable, "-c", code], "python -c 'from metaeval.cli import main; main()'"


def bench_cli(metrics=None, startup=True, repeats=1):
    """Wall time of the CLI command as a fresh subprocess (``repeats`` times)."""
    cmd, how = _cli_command()
    args = list(CLI_ARGS) + (["--metrics", ",".join(metrics)] if metrics else [])
    out = {"command": "metaeval " + " ".join(args), "launcher": how, "startup_wall_s": None}
    runs = [("startup", ["datasets"])] if startup else []
    runs += [("correlate", args)] * repeats
    times = []
    for key, a in runs:
        t = time.perf_counter()
        p = subprocess.run(cmd + a, env=_env_for_children(), capture_output=True, text=True)
        dt = time.perf_counter() - t
        if key == "correlate":
            times.append(dt)
        else:
            out["startup_wall_s"] = dt
        out[f"{key}_returncode"] = p.returncode
        if p.returncode != 0:
            out[f"{key}_stderr"] = p.stderr[-2000:]
    out["correlate_times_s"] = times
    out["correlate_wall_s"] = min(times)
    out["correlate_median_s"] = statistics.median(times)
    out["subset"] = bool(metrics)
    return out


# ---------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run (< 1 min): fewer repeats, subsets")
    ap.add_argument("--full", action="store_true",
                    help="no extrapolation: all 43 metrics for compare_all and correlate (slow)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per measure (default 3, quick 1)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile of missed targets")
    ap.add_argument("--profile-all", action="store_true",
                    help="also profile the 3 slowest T1 measures and a T2 pair when they pass")
    ap.add_argument("--no-compile", action="store_true", help="skip the numba compile-cost subprocess")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI subprocess")
    ap.add_argument("--no-nlpstats", action="store_true", help="skip the nlpstats comparison")
    ap.add_argument("--out", default=str(RESULTS / "latest.json"))
    ap.add_argument("--_compile-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a._compile_child:
        compile_child()
        return 0
    if a.quick and a.full:
        ap.error("--quick and --full are exclusive")
    mode = "quick" if a.quick else "full" if a.full else "default"
    repeats = a.repeats or (1 if a.quick else 3)
    t2_metrics = {"quick": 5, "default": 12, "full": None}[mode]
    t4_metrics = {"quick": 2, "default": 8, "full": None}[mode]
    nlp_res = {"quick": {"system": 100, "input": 5, "global": 100},
               "default": {"system": 1000, "input": 50, "global": 1000},
               "full": {"system": 1000, "input": 1000, "global": 1000}}[mode]
    do_compile = not a.no_compile and not a.quick

    t_start = time.perf_counter()
    load_before = _loadavg()
    t = time.perf_counter()
    import metaeval
    import_s = time.perf_counter() - t
    ds = metaeval.load_dataset("summeval")
    info = machine_info()
    info["metaeval_file"] = metaeval.__file__
    info["metaeval_version"] = getattr(metaeval, "__version__", None)
    print(f"metaeval benchmarks ({mode}; {repeats} timed repeat(s) per measure) -- {metaeval.__file__}")
    print(f"machine: {info['nproc']} cpu ({info.get('cpu_model')}), {info.get('ram_gib')} GiB, "
          f"Python {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}, numba {info['numba']} "
          f"({info['numba_threads']} threads); load avg {load_before}")
    print(f"commit {info.get('git_commit')}{' (src has uncommitted changes)' if info.get('src_dirty') else ''}")
    print(f"SummEval: {len(ds.systems)} systems x {len(ds.inputs)} inputs, {len(ds.metrics)} metrics; "
          f"in-process import of metaeval {import_s:.2f} s")

    result = {"mode": mode, "repeats": repeats, "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
              "machine": info, "import_s": import_s, "load_avg_before": load_before}
    warnings.simplefilter("ignore")

    # compile cost ------------------------------------------------------
    if do_compile:
        comp = bench_compile()
        result["compile"] = comp
        if "error" in comp:
            print("\ncompile-cost subprocess failed:\n" + comp["error"])
        else:
            _print_table(
                "numba compile cost (fresh process, empty NUMBA_CACHE_DIR; first call - second call, "
                "20 resamples)",
                ["level", "method", "first call s", "compile s"],
                [[r["level"], r["method"], _f(r["first_s"]), _f(r["compile_s"])] for r in comp["measures"]],
            )
            print(f"total compile {comp['compile_total_s']:.1f} s; cold import {comp['import_s']:.2f} s")

    # T1 ----------------------------------------------------------------
    t1 = bench_t1(metaeval, ds, repeats)
    result["t1"] = t1
    _print_table(
        f"T1  compare(..., test='perm-both', n_resamples=1000) {METRIC_A} vs {METRIC_B}; "
        f"target < {T1_TARGET_S} s warm",
        ["level", "method", "1st call s", "min s", "median s", "status", "delta", "p"],
        [[r["level"], r["method"], _f(r["first_call_s"]), _f(r["min_s"]), _f(r["median_s"]),
          r["status"], _f(r["statistic"], 4), _f(r["pvalue"], 4)] for r in t1],
    )
    n_pass = sum(r["status"] == "pass" for r in t1)
    print(f"T1: {n_pass}/12 pass; total warm (median) {sum(r['median_s'] for r in t1):.2f} s")

    # T3 ----------------------------------------------------------------
    if not a.no_nlpstats:
        t3 = bench_t3(metaeval, ds, repeats, nlp_res, t1)
        result["t3"] = t3
        if "error" in t3:
            print("\nT3 skipped: " + t3["error"])
        else:
            _print_table(
                "T3  nlpstats permutation_test(permutation_method='both') vs metaeval, per 1000 resamples",
                ["level", "method", "nlpstats s/1000", "(ran n)", "metaeval rowcol s", "ratio",
                 "metaeval both s", "ratio", "p nlp", "p rowcol", "p both"],
                [[r["level"], r["method"], _f(r["nlpstats_per_1000_s"], 2), r["nlpstats_resamples"],
                  _f(r["metaeval_rowcol_median_s"]), f"{r['ratio_vs_rowcol']:.0f}x",
                  _f(r["metaeval_both_median_s"]), f"{r['ratio_vs_both']:.0f}x",
                  _f(r["nlpstats_pvalue"], 3), _f(r["metaeval_rowcol_pvalue"], 3),
                  _f(r["metaeval_both_pvalue"], 3)] for r in t3["rows"]],
            )
            print("nlpstats runs with fewer resamples are scaled linearly to 1000; item level: not in nlpstats")

    # T2 ----------------------------------------------------------------
    t2 = bench_t2(metaeval, ds, t2_metrics, (1, 2))
    result["t2"] = t2
    how = (f"{t2['metrics_run']} of {t2['metrics_total']} metrics ({t2['pairs_run']} pairs), "
           f"projected to {t2['pairs_total']} pairs" if t2["extrapolated"] else f"all {t2['pairs_total']} pairs")
    _print_table(
        f"T2  compare_all(level='input', method='kendall_b', perm-both, 1000): {how}; target < {T2_TARGET_S:.0f} s",
        ["n_jobs", "wall s (run)", "pool start s", "s / pair", "all 903 pairs s", "status"],
        [[r["n_jobs"], _f(r["wall_s"], 1), _f(r["pool_startup_s"], 1), _f(r["per_pair_s"]),
          _f(r["projected_all_s"], 1), r["status"]] for r in t2["runs"]],
    )

    # T4 ----------------------------------------------------------------
    t4 = bench_t4(metaeval, ds, t4_metrics)
    result["t4_correlate"] = t4
    how = (f"{t4['metrics_run']} of {t4['metrics_total']} metrics, projected" if t4["extrapolated"]
           else f"all {t4['metrics_total']} metrics")
    _print_table(
        f"T4  correlate(4 levels x [pearson, spearman, kendall_b], ci='boot-both', 1000): {how}",
        ["units run", "wall s (run)", "s / metric", "all 43 metrics s"],
        [[t4["units_run"], _f(t4["wall_s"], 1), _f(t4["per_metric_s"]), _f(t4["projected_all_s"], 1)]],
    )
    if not a.quick:
        bd = bench_t4_breakdown(metaeval, ds, _spread(ds.metrics, 3))
        result["t4_breakdown"] = bd
        _print_table("T4  per-unit cost (s per metric, 3 metrics, boot-both 1000)",
                     ["method"] + list(LEVELS),
                     [[m] + [_f(next(r["per_metric_s"] for r in bd if r["level"] == lv and r["method"] == m))
                             for lv in LEVELS] for m in METHODS])

    if not a.no_cli:
        cli = bench_cli(_spread(ds.metrics, 3) if a.quick else None, startup=not a.quick,
                        repeats=1 if a.quick else 2)
        result["t4_cli"] = cli
        print(f"\nT4  CLI (cold subprocess): `{cli['command']}`"
              + (" [quick: 3-metric subset, NOT the target command]" if cli["subset"] else ""))
        print(f"    wall {', '.join(f'{v:.1f}' for v in cli['correlate_times_s'])} s "
              f"(min {cli['correlate_wall_s']:.1f} s; exit {cli['correlate_returncode']})"
              + (f"; `metaeval datasets` (start-up only) {cli['startup_wall_s']:.2f} s"
                 if cli["startup_wall_s"] is not None else ""))

    # profiles of misses -------------------------------------------------
    if not a.no_profile:
        profiles = {}
        slowest = sorted(t1, key=lambda r: -r["median_s"])[:3] if a.profile_all else []
        for r in t1:
            if r["status"] != "pass" or r in slowest:
                key = f"compare/{r['level']}/{r['method']}"
                profiles[key] = _profile(lambda r=r: metaeval.compare(
                    ds, HUMAN, METRIC_A, METRIC_B, level=r["level"], method=r["method"],
                    test="perm-both", n_resamples=N_RES, rng=0))
        if a.profile_all or any(r["status"] != "pass" for r in t2["runs"]):
            # one compare_all pair = one compare at input/kendall_b
            profiles["compare_all/pair(input/kendall_b)"] = _profile(lambda: metaeval.compare(
                ds, HUMAN, METRIC_A, METRIC_B, level="input", method="kendall_b",
                test="perm-both", n_resamples=N_RES, rng=0))
        if profiles:
            result["profiles"] = profiles
            print("\ncProfile (misses" + (", and the slowest passes" if a.profile_all else "")
                  + "; top functions by own time):")
            for key, prof in profiles.items():
                print(f"  {key}: {prof['total_s']:.3f} s")
                for row in prof["top_tottime"][:5]:
                    print(f"      {row['tottime_s']:7.3f} s own  {row['cumtime_s']:7.3f} s cum  "
                          f"x{row['ncalls']:<4} {row['function']}")

    result["load_avg_after"] = _loadavg()
    after = machine_info()
    result["git_commit_after"] = after.get("git_commit")
    result["src_dirty_after"] = after.get("src_dirty")
    if (after.get("git_commit"), after.get("src_dirty")) != (info.get("git_commit"), info.get("src_dirty")):
        print("WARNING: src/ changed during the run (commit or working tree); figures may mix versions")
    result["total_wall_s"] = time.perf_counter() - t_start
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=float))
    print(f"\ntotal {result['total_wall_s']:.0f} s; load avg after {result['load_avg_after']}; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
