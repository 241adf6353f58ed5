#!/usr/bin/env python
"""WMT-size correlation table: metaeval beside mt-metrics-eval, same matrices, same run.

Usage (from the repository root)::

    python benchmarks/wmt_table.py                 # 16 systems x 2000 segments, 8 metrics
    python benchmarks/wmt_table.py --segments 200  # a quick look

Generated data (seeded): an MQM-like human matrix (16 systems x 2000
segments) of integer penalty sums (minor -1, major -5, non-translation -25;
about half the cells are 0, so ties are heavy) and 8 metrics (a latent
quality plus noise of increasing size; metrics 7 and 8 are rounded to one
decimal so they have ties of their own).

For every level (system, input, item, global) and every method (pearson,
spearman, kendall_b, kendall_c, kendall_23, acc_23, acc_eq, and
pairwise_accuracy at system level) the script computes the statistic of the 8
metrics with ``metaeval.correlate(..., ci="none", pvalue="none")`` and with
mt-metrics-eval (``../shared/anchors/mt-metrics-eval``, github.com/google-research/
mt-metrics-eval commit 68a481a; only stats.py and tau_optimization.py are
imported): ``stats.Correlation(...).Pearson / Spearman / Kendall(variant='b' or
'c')`` (scipy per group), ``KendallVariants(variant='23' / 'acc23')``,
``KendallWithTiesOpt(variant='acc23', sample_rate=1)`` (exact tie calibration)
and ``stats.Agreement`` on the system means.  Level mapping: mt-metrics-eval
``average_by='sys'`` = our ``item``, ``'item'`` = our ``input``, ``'none'`` =
our ``global``; our ``system`` level = ``average_by='none'`` on the system
means.

Every number is asserted equal within ``--tol`` (absolute, default 1e-9) and
the time ratio is printed per (method, level) and per method.  metaeval is
timed warm (numba compiled on a small problem first; the compilation is
reported apart), best of ``--repeats``, with 1 numba thread and with the default
number (``numba.set_num_threads``; the ratio uses the faster); mt-metrics-eval
once.  System level: both tools get the same system means (numpy's
``mean(axis=1)``); the script also counts the metrics whose system-level
acc_23 changes when metaeval averages the cells itself (a different summation
order can break or make an exact tie between two systems' means).

mt-metrics-eval's exact tie calibration (``tau_optimization``) builds a Python
object per pair: at ``item`` level that is 16 x 2000 x 1999 / 2 = 32 million
pairs, at ``global`` 5.1e8, far beyond this machine's memory and time.  For
those two cells both tools run on the first ``--acc-eq-segments`` segments
(default 50; numbers compared there) and the table says so; the full-size
mt-metrics-eval time is then projected linearly in the number of pairs
(its sweep is a sort plus one Python step per pair; the projection is marked).

Writes ``benchmarks/results/wmt_table.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import numpy as np  # noqa: E402

import metaeval  # noqa: E402

LEVELS = ["system", "input", "item", "global"]
METHODS = ["pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23", "acc_eq",
           "pairwise_accuracy"]
AVERAGE_BY = {"input": "item", "item": "sys", "global": "none"}


def find_anchor():
    """../shared/anchors/mt-metrics-eval, or under $METAEVAL_SHARED (as the tests look)."""
    env = os.environ.get("METAEVAL_SHARED")
    shared = ([Path(env)] if env else []) + [p / "shared" for p in (REPO.parents[0], REPO.parents[1])]
    for s in shared:
        d = s / "anchors" / "mt-metrics-eval"
        if (d / "mt_metrics_eval" / "stats.py").is_file():
            return d
    sys.exit("mt-metrics-eval not found in ../shared/anchors (needed as the peer)")


def make_data(n_sys=16, n_seg=2000, n_metrics=8, seed=0):
    """MQM-like integer human penalties and ``n_metrics`` metrics (dict of N x M arrays)."""
    g = np.random.default_rng(seed)
    quality = g.normal(0.0, 0.4, size=(n_sys, 1))        # system effect (log error rate)
    difficulty = g.normal(0.0, 0.6, size=(1, n_seg))     # segment effect
    rate = 0.7 * np.exp(-quality + difficulty)           # expected errors per segment
    n_minor = g.poisson(rate * 0.7)
    n_major = g.poisson(rate * 0.25)
    n_nontr = g.binomial(1, 0.004, size=rate.shape)
    human = -(n_minor + 5 * n_major + 25 * n_nontr).astype(float)
    latent = -np.log1p(-human) - 0.3 * (quality - difficulty)
    cols = {"mqm": human}
    for k in range(n_metrics):
        m = latent + (0.4 + 0.25 * k) * g.standard_normal(human.shape)
        if k >= n_metrics - 2:
            m = np.round(m, 1)
        cols[f"metric{k + 1}"] = m
    return cols


def mtme_value(stats, human, metric, level, method):
    """One statistic with mt-metrics-eval, from N x M matrices."""
    if level == "system":
        h, m = human.mean(axis=1), metric.mean(axis=1)
        n_sys, avg = 1, "none"
    else:
        h, m = human, metric
        n_sys, avg = human.shape[0], AVERAGE_BY[level]
    c = stats.Correlation(n_sys, h.ravel().tolist(), m.ravel().tolist())
    if method == "pearson":
        return c.Pearson(avg)[0]
    if method == "spearman":
        return c.Spearman(avg)[0]
    if method == "kendall_b":
        return c.Kendall(avg, variant="b")[0]
    if method == "kendall_c":
        return c.Kendall(avg, variant="c")[0]
    if method == "kendall_23":
        return c.KendallVariants(avg, variant="23")[0]
    if method == "acc_23":
        return c.KendallVariants(avg, variant="acc23")[0]
    if method == "acc_eq":
        return c.KendallWithTiesOpt(avg, variant="acc23", sample_rate=1.0)[0]
    if method == "pairwise_accuracy":
        agree, n = stats.Agreement(h.tolist(), m.tolist())
        return agree / n
    raise ValueError(method)


def pairs_of(level, n_sys, n_seg):
    return {"input": n_seg * n_sys * (n_sys - 1) // 2, "item": n_sys * n_seg * (n_seg - 1) // 2,
            "global": (n_sys * n_seg) * (n_sys * n_seg - 1) // 2, "system": n_sys * (n_sys - 1) // 2}[level]


def machine():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:  # pragma: no cover
            return ""
    return {"uptime": sh("uptime"), "nproc": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "commit": sh(f"git -C {REPO} rev-parse --short HEAD"),
            "dirty": bool(sh(f"git -C {REPO} status --porcelain -- src"))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--segments", type=int, default=2000)
    ap.add_argument("--metrics", type=int, default=8)
    ap.add_argument("--acc-eq-segments", type=int, default=50,
                    help="segments for acc_eq at item and global level (mt-metrics-eval lists every pair)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "wmt_table.json"))
    args = ap.parse_args(argv)

    d = find_anchor()
    sys.path.insert(0, str(d))
    from mt_metrics_eval import stats  # noqa: E402

    info = {"before": machine()}
    print("machine:", info["before"]["uptime"])
    cols = make_data(args.systems, args.segments, args.metrics)
    names = [c for c in cols if c != "mqm"]
    human = cols["mqm"]
    vals, cnt = np.unique(human, return_counts=True)
    top = sorted(zip(cnt, vals), reverse=True)[:6]
    print("human values (most frequent):", ", ".join(f"{v:g} ({c / human.size:.0%})" for c, v in top))
    ds = metaeval.Dataset.from_arrays(cols, human="mqm")
    warnings.simplefilter("ignore")

    # warm-up: numba compilation on a small problem, every method and level
    small = metaeval.Dataset.from_arrays({k: v[:, :50] for k, v in cols.items()}, human="mqm")
    t0 = time.perf_counter()
    for method in METHODS:
        lv = ["system"] if method == "pairwise_accuracy" else LEVELS
        metaeval.correlate(small, "mqm", level=lv, method=method, ci="none", pvalue="none")
    compile_s = time.perf_counter() - t0
    print(f"warm-up (numba compilation and imports): {compile_s:.1f} s")

    import numba

    threads = sorted({1, numba.get_num_threads()})
    sys_cols = {k: v.mean(axis=1, keepdims=True) for k, v in cols.items()}
    sys_ds = metaeval.Dataset.from_arrays(sys_cols, human="mqm")
    rows = []
    for method in METHODS:
        levels = ["system"] if method == "pairwise_accuracy" else LEVELS
        for level in levels:
            sub = level in ("item", "global") and method == "acc_eq"
            n_seg = min(args.acc_eq_segments, args.segments) if sub else args.segments
            mats = {k: v[:, :n_seg] for k, v in cols.items()}
            # system level: both tools get the same system means (numpy's mean, as
            # mt-metrics-eval users compute them), see "system means" below
            dsl = sys_ds if level == "system" else (metaeval.Dataset.from_arrays(mats, human="mqm") if sub else ds)
            times = {}
            for nt in threads:
                numba.set_num_threads(nt)
                best = np.inf
                for _ in range(args.repeats):
                    t = time.perf_counter()
                    res = metaeval.correlate(dsl, "mqm", level=level, method=method, ci="none", pvalue="none")
                    best = min(best, time.perf_counter() - t)
                times[nt] = best
            numba.set_num_threads(threads[-1])
            best = min(times.values())
            ours = {m: res.get(m, level=level, method=method).statistic for m in names}
            t = time.perf_counter()
            theirs = {m: mtme_value(stats, mats["mqm"], mats[m], level, method) for m in names}
            t_mt = time.perf_counter() - t
            diff = max(abs(ours[m] - theirs[m]) for m in names)
            nan_mismatch = [m for m in names if np.isnan(ours[m]) != np.isnan(theirs[m])]
            ok = not nan_mismatch and (np.isnan(diff) or diff <= args.tol)
            row = {"method": method, "level": level, "segments": n_seg, "metaeval_s": best,
                   "metaeval_s_by_threads": {str(k): v for k, v in times.items()}, "mtme_s": t_mt,
                   "ratio": t_mt / best, "max_abs_diff": float(np.nan_to_num(diff)), "equal": bool(ok),
                   "values": {m: [float(ours[m]), float(theirs[m])] for m in names}}
            if sub:
                full = pairs_of(level, args.systems, args.segments) / pairs_of(level, args.systems, n_seg)
                row["mtme_projected_full_s"] = t_mt * full
            rows.append(row)
            flag = "" if ok else "  <-- MISMATCH"
            note = f"  (first {n_seg} segments)" if sub else ""
            tt = "  ".join(f"{k}t {v * 1e3:8.1f}" for k, v in times.items())
            print(f"{method:18s} {level:7s} metaeval ms {tt}  mt-metrics-eval {t_mt * 1e3:10.1f} ms"
                  f"  ratio {t_mt / best:8.1f}x  max|diff| {diff:.1e}{note}{flag}")

    # system means: metaeval averages the matched cells itself (sorted left-to-right
    # sums); mt-metrics-eval users average with numpy (pairwise sums).  The two can
    # round differently, which decides exact ties between system means of decimal
    # metrics; count the metrics whose system-level acc_23 then differs.
    own = metaeval.correlate(ds, "mqm", level="system", method="acc_23", ci="none", pvalue="none")
    on_np = metaeval.correlate(sys_ds, "mqm", level="system", method="acc_23", ci="none", pvalue="none")
    tie_diff = [m for m in names if own.get(m, level="system", method="acc_23").statistic
                != on_np.get(m, level="system", method="acc_23").statistic]
    print(f"system means: metaeval's own means vs numpy's change system-level acc_23 for {len(tie_diff)} "
          f"of {len(names)} metrics {tie_diff}")

    print("\nper method (sum over levels at full size; acc_eq item/global excluded, see its rows):")
    summary = {}
    for method in METHODS:
        r = [x for x in rows if x["method"] == method and x["segments"] == args.segments]
        me, mt = sum(x["metaeval_s"] for x in r), sum(x["mtme_s"] for x in r)
        summary[method] = {"metaeval_s": me, "mtme_s": mt, "ratio": mt / me, "levels": [x["level"] for x in r]}
        print(f"  {method:18s} metaeval {me:7.3f} s  mt-metrics-eval {mt:8.2f} s  ratio {mt / me:7.1f}x")
    me = sum(x["metaeval_s"] for x in rows if x["segments"] == args.segments)
    mt = sum(x["mtme_s"] for x in rows if x["segments"] == args.segments)
    print(f"  {'all (full size)':18s} metaeval {me:7.3f} s  mt-metrics-eval {mt:8.2f} s  ratio {mt / me:7.1f}x")
    info["after"] = machine()
    print("machine:", info["after"]["uptime"])
    bad = [f"{x['method']}/{x['level']}" for x in rows if not x["equal"]]
    out = {"args": vars(args), "machine": info, "compile_s": compile_s, "rows": rows, "summary": summary,
           "total": {"metaeval_s": me, "mtme_s": mt, "ratio": mt / me}, "mismatches": bad,
           "system_mean_tie_differences": tie_diff}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    if bad:
        sys.exit(f"numbers differ beyond {args.tol}: {', '.join(bad)}")
    print(f"all {len(rows)} (method, level) cells x {len(names)} metrics equal within {args.tol:g}")


if __name__ == "__main__":
    main()
