#!/usr/bin/env python
"""SPA and a WMT-size task set, metaeval beside mt-metrics-eval, in one run.

Usage (from the repository root)::

    python benchmarks/wmt.py                      # 16 systems x 2000 segments, 20 metrics
    python benchmarks/wmt.py --metrics 6 --k 50   # a quick look

Generated data (seeded): an MQM-like human matrix (16 x 2000) and 20 metrics
(human + noise of increasing size).  Timed, each side by side with
mt-metrics-eval (``../shared/anchors/mt-metrics-eval``, commit 68a481a; only
stats.py and pce.py are imported, data.py's ``AssignRanks`` is run from its
source because data.py imports apache_beam):

1. SPA of every metric: ``metaeval.soft_pairwise_accuracy`` (one sign matrix
   and one matmul for the human and all metrics) vs mt-metrics-eval
   ``Correlation.PairwiseConfidenceError`` per metric (pce.py draws the sign
   matrix again for every call).  Values are checked equal (float32 mode).
2. Perm-Both comparison of two metrics' SPA with ``--k-spa`` draws:
   ``metaeval.compare_spa`` vs ``stats.PermutationSigDiff`` with
   ``PairwiseConfidenceError``.
3. A task set of 20 metrics: system-level Pearson on system scores and
   segment-level Pearson without grouping, every metric pair tested with
   ``--k`` Perm-Both draws and ranked into clusters: ``metaeval.wmt.run_tasks``
   vs ``stats.PermutationSigDiff`` for every pair + ``AssignRanks`` (what
   mt-metrics-eval's ``data.CompareMetrics`` does).

Writes ``benchmarks/results/wmt.json`` with the seconds and the ratios.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import numpy as np  # noqa: E402
import scipy.stats  # noqa: E402

import metaeval  # noqa: E402
from metaeval.wmt import Task, compare_spa, run_tasks, soft_pairwise_accuracy  # noqa: E402


def find_anchor():
    for p in (REPO.parents[0], REPO.parents[1]):
        d = p / "shared" / "anchors" / "mt-metrics-eval"
        if (d / "mt_metrics_eval" / "stats.py").is_file():
            return d
    sys.exit("mt-metrics-eval not found in ../shared/anchors (needed as the peer)")


def load_mtme():
    d = find_anchor()
    sys.path.insert(0, str(d))
    from mt_metrics_eval import stats

    src = (d / "mt_metrics_eval" / "data.py").read_text()
    node = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "AssignRanks")
    ns = {"np": np}
    exec(compile(ast.Module([node], []), "data.py", "exec"), ns)
    return stats, ns["AssignRanks"]


def make_data(n_sys, n_seg, n_metrics, seed=0):
    rng = np.random.default_rng(seed)
    quality = rng.standard_normal((n_sys, 1))
    human = np.round(-np.abs(quality + rng.standard_normal((n_sys, n_seg)) * 3), 1)
    cols = {"mqm": human}
    for k in range(n_metrics):
        cols[f"metric{k:02d}"] = human + (0.5 + 0.2 * k) * rng.standard_normal((n_sys, n_seg))
    seg = metaeval.Dataset.from_arrays(cols, human="mqm")
    sys_ = metaeval.Dataset.from_arrays({c: v.mean(axis=1, keepdims=True) for c, v in cols.items()}, human="mqm")
    return cols, seg, sys_


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--segments", type=int, default=2000)
    ap.add_argument("--metrics", type=int, default=20)
    ap.add_argument("--k", type=int, default=100, help="Perm-Both draws per pair in the task set")
    ap.add_argument("--k-spa", type=int, default=20, help="Perm-Both draws of the SPA comparison")
    args = ap.parse_args()
    stats, AssignRanks = load_mtme()
    cols, seg, sys_ = make_data(args.systems, args.segments, args.metrics)
    names = [c for c in cols if c != "mqm"]
    N = args.systems
    out = {"systems": N, "segments": args.segments, "metrics": len(names), "k": args.k, "k_spa": args.k_spa}
    warnings.simplefilter("ignore")

    # warm-up (numba compilation, imports) outside the timings
    soft_pairwise_accuracy(seg.subset(metrics=names[:1]), "mqm", n_permutations=10, rng=0)
    small = seg.subset(metrics=names[:2], inputs=list(seg.inputs[:50]))
    run_tasks([Task("s", "mqm", level="system"), Task("g", "mqm", level="global")],
              {"s": sys_.subset(metrics=names[:2]), "g": small}, n_resamples=5)
    compare_spa(small, "mqm", names[0], names[1], n_resamples=2, n_permutations=10)

    # 1. SPA of every metric
    t_me, spa = timed(lambda: soft_pairwise_accuracy(seg, "mqm", rng=4, precision="float32"))
    gold = list(cols["mqm"].ravel())

    def mtme_spa():
        return {m: stats.Correlation(N, gold, list(cols[m].ravel())).PairwiseConfidenceError()[0] for m in names}

    t_mt, ref = timed(mtme_spa)
    # float32 sums are not bit-reproducible even between two pce.py calls (numpy's
    # float32 summation depends on the memory layout), so a few tied draws can flip
    diff = max(abs(spa.get(m).statistic - ref[m]) for m in names)
    assert diff < 0.01, f"SPA differs from pce.py by {diff}"
    out["spa"] = {"metaeval_s": t_me, "mtme_s": t_mt, "ratio": t_mt / t_me, "max_abs_diff": diff}
    print(f"SPA, {len(names)} metrics: metaeval {t_me:.2f} s, mt-metrics-eval {t_mt:.2f} s, ratio "
          f"{t_mt / t_me:.1f}x (max |SPA difference| {diff:.2g})")

    # 2. SPA Perm-Both comparison of two metrics
    a, b = names[0], names[1]
    t_me, _ = timed(lambda: compare_spa(seg, "mqm", a, b, n_resamples=args.k_spa, rng=1, precision="float32"))
    wrap = functools.partial(stats.PairwiseConfidenceError, num_sys=N, filter_nones=False)
    ca = stats.Correlation(N, gold, list(cols[a].ravel()))
    cb = stats.Correlation(N, gold, list(cols[b].ravel()))
    t_mt, _ = timed(lambda: stats.PermutationSigDiff(cb, ca, wrap, "none", args.k_spa))
    out["spa_compare"] = {"metaeval_s": t_me, "mtme_s": t_mt, "ratio": t_mt / t_me}
    print(f"SPA Perm-Both, k={args.k_spa}: metaeval {t_me:.2f} s, mt-metrics-eval {t_mt:.2f} s, "
          f"ratio {t_mt / t_me:.1f}x")

    # 3. task set: system Pearson + segment Pearson (no grouping), all pairs, clusters
    tasks = [Task("sys", "mqm", level="system", method="pearson"),
             Task("seg", "mqm", level="global", method="pearson")]
    t_me, res = timed(lambda: run_tasks(tasks, {"sys": sys_, "seg": seg}, n_resamples=args.k, rng=0))

    def mtme_tasks():
        ranks = []
        for level_vectors in ("sys", "seg"):
            if level_vectors == "sys":
                g = list(cols["mqm"].mean(axis=1))
                corrs = {m: stats.Correlation(N, g, list(cols[m].mean(axis=1))) for m in names}
            else:
                corrs = {m: stats.Correlation(N, gold, list(cols[m].ravel())) for m in names}
            cf = stats.AverageCorrelation(scipy.stats.pearsonr, N, "none", filter_nones=False)
            cr = {m: cf(c.gold_scores, c.metric_scores)[0] for m, c in corrs.items()}
            order = sorted(cr, key=lambda m: (-cr[m], m))
            K = len(order)
            sig = np.zeros((K, K))
            for i in range(K):
                for j in range(i + 1, K):
                    sig[i, j] = stats.PermutationSigDiff(corrs[order[j]], corrs[order[i]],
                                                         scipy.stats.pearsonr, "none", args.k)[0]
            ranks.append(AssignRanks(sig, 0.05))
        return ranks

    t_mt, _ = timed(mtme_tasks)
    out["task_set"] = {"metaeval_s": t_me, "mtme_s": t_mt, "ratio": t_mt / t_me,
                       "clusters_metaeval": [int(r.ranks.max()) for r in res]}
    print(f"task set (2 tasks x {len(names) * (len(names) - 1) // 2} pairs, k={args.k}): metaeval "
          f"{t_me:.2f} s, mt-metrics-eval {t_mt:.2f} s, ratio {t_mt / t_me:.1f}x")
    path = REPO / "benchmarks" / "results"
    path.mkdir(parents=True, exist_ok=True)
    (path / "wmt.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
