"""Scale benchmark: correlate on a generated 1,000,000-cell dataset.

100 systems x 10,000 inputs; the human score is the mean of 3 raters on a
discrete 1-5 scale; 5 continuous metrics of varying quality.  Runs
:func:`metaeval.correlate` with a ``boot-both`` interval at the given levels
and methods and prints the wall time and the peak RSS of the process.

Run standalone (peak memory is best read with GNU time)::

    PYTHONPATH=src /usr/bin/time -v python benchmarks/scale.py --n-resamples 20
    METAEVAL_MEMORY_BUDGET=256MB PYTHONPATH=src python benchmarks/scale.py --level global

Resampling memory is O(cells + chunk): the resampled cell arrays are
processed in chunks sized from ``METAEVAL_MEMORY_BUDGET`` (default 1 GiB), so
the peak RSS does not grow with ``--n-resamples``; the time grows linearly,
so a run with few resamples extrapolates to 1000.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def generate(n_systems=100, n_inputs=10_000, n_metrics=5, seed=0):
    """The benchmark dataset (a :class:`metaeval.Dataset`)."""
    from metaeval import Dataset

    g = np.random.default_rng(seed)
    quality = g.normal(0, 0.5, size=(n_systems, 1))
    difficulty = g.normal(0, 0.5, size=(1, n_inputs))
    latent = quality + difficulty + g.normal(0, 1, size=(n_systems, n_inputs))
    raters = [np.clip(np.round(3 + latent + g.normal(0, 0.7, latent.shape)), 1, 5)
              for _ in range(3)]
    human = np.mean(raters, axis=0)
    cols = {"human": human}
    for k in range(n_metrics):
        noise = 0.5 + 0.5 * k
        cols[f"metric{k + 1}"] = latent + g.normal(0, noise, latent.shape)
    return Dataset.from_arrays(cols, human="human")


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-resamples", type=int, default=20)
    ap.add_argument("--level", action="append", help="global, input, ... (repeatable)")
    ap.add_argument("--method", action="append", help="default: spearman and kendall_b")
    ap.add_argument("--n-metrics", type=int, default=5)
    ap.add_argument("--n-systems", type=int, default=100)
    ap.add_argument("--n-inputs", type=int, default=10_000)
    args = ap.parse_args(argv)
    levels = args.level or ["global", "input"]
    methods = args.method or ["spearman", "kendall_b"]

    import metaeval

    t0 = time.perf_counter()
    ds = generate(args.n_systems, args.n_inputs, args.n_metrics)
    t_gen = time.perf_counter() - t0
    print(f"metaeval {metaeval.__file__}")
    print(f"dataset: {args.n_systems} x {args.n_inputs} cells, {args.n_metrics} metrics, "
          f"generated in {t_gen:.1f} s, peak RSS {peak_rss_mb():.0f} MB")
    # compile the kernels on a tiny problem first, so timings are of the work
    metaeval.correlate(generate(5, 20, 1), "human", level=levels, method=methods,
                       n_resamples=2, rng=0)
    for level in levels:
        for method in methods:
            t0 = time.perf_counter()
            res = metaeval.correlate(ds, "human", level=level, method=method, ci="boot-both",
                                     n_resamples=args.n_resamples, rng=0)
            dt = time.perf_counter() - t0
            per = dt / args.n_resamples
            print(f"{level:7s} {method:10s} B={args.n_resamples:5d}  {dt:8.1f} s  "
                  f"({per:.3f} s/resample for {args.n_metrics} metrics; x1000: "
                  f"{per * 1000 / 60:.1f} min)  peak RSS so far {peak_rss_mb():.0f} MB  "
                  f"stat[0]={res[0].statistic:.4f} ci=[{res[0].ci_low:.4f}, {res[0].ci_high:.4f}]")


if __name__ == "__main__":
    main()
