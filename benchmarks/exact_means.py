"""The paths that form system means and cell means, timed (issue 23, item 1).

Runs on any tree through the public API only, so the same script times the
code before and after the correctly rounded means (``stats/exact.py``):

    PYTHONPATH=<tree>/src NUMBA_NUM_THREADS=1 python benchmarks/exact_means.py [--quick]

Cases (CPU seconds of the process, ``time.process_time``, best of
``--repeats`` after one warm-up call that compiles):

* ``boot-system``: ``correlate`` at ``system`` level, ``ci="boot-both"``,
  Pearson and Kendall, on the 100 x 10,000 benchmark data of
  ``benchmarks/scale.py`` (human = mean of 3 raters: on the grid; metric
  continuous): the bootstrap row means (``cellboot``);
* ``perm-both-system``: ``compare`` Perm-Both at ``system`` level on the same
  data (the halves' group means, ``PairLayout.group_means``);
* ``perm-inputs-system``: ``compare`` with ``perm-inputs`` at ``system``
  level (materialised halves, the generic level code's means);
* ``dp-system``: ``discriminative_power`` at ``system`` level on SummEval
  (Perm-Both means of every metric pair);
* ``rater-means``: ``Dataset.scores`` of a (3, 100, 10,000) rater array in
  tenths (the data layer's averaging).

Prints one JSON line per case.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _best(fn, repeats):
    fn()  # compile / warm
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller data (20 x 2,000)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-resamples", type=int, default=200)
    a = ap.parse_args(argv)

    import warnings

    import metaeval as me
    from scale import generate

    warnings.simplefilter("ignore")
    N, M = (20, 2_000) if a.quick else (100, 10_000)
    ds = generate(N, M, 2)
    B = a.n_resamples
    summ = me.load_dataset("summeval")
    rng = np.random.default_rng(0)
    tenths = rng.integers(0, 11, size=(3, N, M)) / 10.0
    cases = {
        "boot-system": lambda: me.correlate(
            ds, "human", metrics=["metric1"], level="system", method=["pearson", "kendall_b"],
            ci="boot-both", pvalue="none", n_resamples=B, rng=0),
        "perm-both-system": lambda: me.compare(
            ds, "human", "metric1", "metric2", level="system", method="kendall_b",
            test="perm-both", n_resamples=B, rng=0),
        "perm-inputs-system": lambda: me.compare(
            ds, "human", "metric1", "metric2", level="system", method="kendall_b",
            test="perm-inputs", n_resamples=max(B // 4, 10), rng=0),
        "dp-system": lambda: me.discriminative_power(
            summ, "coherence", levels=["system"], methods=["pearson", "kendall_b"],
            n_resamples=B, rng=0),
        "rater-means": lambda: me.Dataset.from_arrays(
            {"human": tenths, "metric": tenths[0]}, human=["human"]).scores("human"),
    }
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(json.dumps({"tree": me.__file__, "cells": N * M, "n_resamples": B,
                      "threads": os.environ.get("NUMBA_NUM_THREADS", "default"),
                      "load_before": load}), flush=True)
    for name, fn in cases.items():
        t = _best(fn, a.repeats)
        print(json.dumps({"case": name, "cpu_s": round(t, 4)}), flush=True)
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(json.dumps({"load_after": load}), flush=True)


if __name__ == "__main__":
    main()
