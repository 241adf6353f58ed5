#!/usr/bin/env python
"""Kernel-level timings and a headroom probe for the Perm-Both hot paths.

Usage (from the repository root)::

    python benchmarks/kernels.py        # 10-40 s; writes benchmarks/results/kernels.json

Not a benchmark of the public API (that is ``benchmarks/run.py``): it times
the numba kernels of ``metaeval.stats._kernels`` on the exact batch shapes a
``compare(..., test="perm-both", n_resamples=1000)`` between ROUGE.1 and
BertScore_f1 on SummEval produces (B = 1000 resamples; input level
(1000, 100, 17), item (1000, 17, 100), global (1000, 1, 1700)), and one probe
whose code lives here only (nothing in ``src/`` is modified):

* a branch-free O(n^2) Kendall loop for small groups (finite values only,
  sum of sign products), against ``kendall_stats`` at the input (n = 17, the
  compare_all target) and item (n = 100) group sizes.  It returns only the
  tau-b ingredients (S = C - D and the non-tied pair counts, checked equal
  to the library's), so it is a lower bound for what a rewrite that keeps the
  NaN handling and the 8 sufficient statistics could reach.

History: an earlier version also probed ``levels.arrange`` without
broadcasting the human scores (the broadcast defeated the single-human fast
paths inside ``compare``); that was fixed upstream in e64d237.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

import metaeval  # noqa: E402
from metaeval.stats import _kernels as K  # noqa: E402
from metaeval.stats import coefficients as Co  # noqa: E402
from metaeval.stats import levels as L  # noqa: E402
from metaeval.stats.pairtest import zscore  # noqa: E402
HUMAN, A, B = "coherence", "ROUGE.1", "BertScore_f1"


def best(fn, *args, repeats=3):
    fn(*args)
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t)
    return min(ts)


@nb.njit(parallel=True, cache=False)
def kendall_b_branchless(x, y):
    """(B, G, n) finite x, y -> (B, G, 3): S = C - D, n0 - n1, n0 - n2."""
    Bn, G, n = x.shape
    out = np.empty((Bn, G, 3))
    for t in nb.prange(Bn * G):
        b = t // G
        g = t % G
        xs = x[b, g]
        ys = y[b, g]
        s = 0.0
        ax = 0.0
        ay = 0.0
        for i in range(1, n):
            xi = xs[i]
            yi = ys[i]
            for j in range(i):
                sx = np.sign(xi - xs[j])
                sy = np.sign(yi - ys[j])
                s += sx * sy
                ax += sx * sx
                ay += sy * sy
        out[b, g, 0] = s
        out[b, g, 1] = ax
        out[b, g, 2] = ay
    return out


def main():
    warnings.simplefilter("ignore")
    ds = metaeval.load_dataset("summeval")
    za, zb = zscore(ds.scores(A)), zscore(ds.scores(B))
    z = ds.scores(HUMAN)
    w = np.random.default_rng(0).random((1000,) + z.shape) < 0.5
    pa = np.where(w, zb, za)
    out = {"numba_threads": nb.get_num_threads(), "kernels": []}

    print("kernel timings on one permuted batch (B = 1000), best of 3:")
    for lv in ("input", "item", "global"):
        xg = np.ascontiguousarray(L.arrange(pa, z, lv)[0])
        y1 = np.ascontiguousarray(L.arrange(z, z, lv)[1])  # (1, G, n)
        yb = np.ascontiguousarray(np.broadcast_to(y1, xg.shape))
        yr, k = Co.dense_ranks(y1[0])
        flat = np.ascontiguousarray(xg.reshape(-1, xg.shape[-1]))
        row = {
            "level": lv, "shape": list(xg.shape),
            "kendall_stats_s": best(K.kendall_stats, xg, yb, 0.0),
            "kendall_stats_ranked_y_s": best(K.kendall_stats_ranked_y, xg, yr, k),
            "average_ranks_s": best(K.average_ranks, flat),
        }
        if hasattr(K, "pearson_rows"):
            row["pearson_rows_s"] = best(K.pearson_rows, xg, y1)
        if xg.shape[-1] <= 128:
            row["branchless_probe_s"] = best(kendall_b_branchless, xg, yb)
            s_ref = K.kendall_stats(xg[:50], yb[:50], 0.0)
            s_new = kendall_b_branchless(xg[:50], yb[:50])
            row["branchless_matches"] = bool(np.allclose(s_ref[..., K.C] - s_ref[..., K.D], s_new[..., 0]))
        out["kernels"].append(row)
        print(f"  {lv:6s} {tuple(xg.shape)!s:16s} kendall_stats {row['kendall_stats_s']:.3f} s  "
              f"ranked_y {row['kendall_stats_ranked_y_s']:.3f} s  average_ranks {row['average_ranks_s']:.3f} s"
              + (f"  pearson_rows {row['pearson_rows_s']:.3f} s" if "pearson_rows_s" in row else "")
              + (f"  branchless probe {row['branchless_probe_s']:.3f} s (S matches: {row['branchless_matches']})"
                 if "branchless_probe_s" in row else ""))

    res = REPO / "benchmarks" / "results"
    res.mkdir(parents=True, exist_ok=True)
    (res / "kernels.json").write_text(json.dumps(out, indent=1))
    print(f"\nwrote {res / 'kernels.json'}")


if __name__ == "__main__":
    main()
