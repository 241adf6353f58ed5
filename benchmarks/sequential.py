"""Saving of Besag-Clifford early stopping in compare_all (issue 16.4).

``python benchmarks/sequential.py [--metrics 12] [--h 10]``: the T2 setting of BENCHMARKS.md
(SummEval, coherence, level input, kendall_b, Perm-Both, 1000 resamples, seed 0) on the first
``--metrics`` metrics, timed with ``sequential=None`` and ``sequential=h`` (warm: one small run
first compiles the kernels), with the draws made, the pairs that stopped early, and whether the
clusters and the p-values of the pairs that did not stop are unchanged.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import metaeval


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--metrics", type=int, default=12)
    ap.add_argument("--h", type=int, nargs="+", default=[10, 51])
    ap.add_argument("--n-resamples", type=int, default=1000)
    a = ap.parse_args()
    ds = metaeval.load_dataset("summeval")
    mets = list(ds.metrics[: a.metrics])
    kw = dict(metrics=mets, level="input", method="kendall_b", test="perm-both",
              n_resamples=a.n_resamples, rng=0)
    warnings.simplefilter("ignore", metaeval.errors.InsufficientResamplesWarning)
    metaeval.compare_all(ds, "coherence", **dict(kw, metrics=mets[:2], n_resamples=10))  # warm-up
    t, c = time.perf_counter(), time.process_time()
    full = metaeval.compare_all(ds, "coherence", **kw)
    t0, c0 = time.perf_counter() - t, time.process_time() - c
    print(f"{len(mets)} metrics, {len(full.pairs)} pairs, n_resamples={a.n_resamples}")
    print(f"fixed: {t0:.1f} s wall, {c0:.1f} s CPU, {sum(c.n_resamples for c in full.pairs)} draws")
    off = np.triu(np.ones_like(full.better, dtype=bool), 1) | np.tril(np.ones_like(full.better, dtype=bool), -1)
    for h in a.h:
        t, c = time.perf_counter(), time.process_time()
        seq = metaeval.compare_all(ds, "coherence", sequential=h, **kw)
        t1, c1 = time.perf_counter() - t, time.process_time() - c
        draws = sum(c.n_resamples for c in seq.pairs)
        stopped = sum(c.stopped_early for c in seq.pairs)
        flips = int(((full.better <= 0.05) != (seq.better <= 0.05))[off].sum())
        print(f"sequential h={h}: {t1:.1f} s wall, {c1:.1f} s CPU ({c0 / c1:.2f}x), {draws} draws, {stopped} pairs stopped early; "
              f"speed-up {t0 / t1:.2f}x; one-sided decisions at 0.05 that differ: {flips}; "
              f"clusters equal: {np.array_equal(full.clusters, seq.clusters)}")


if __name__ == "__main__":
    main()
