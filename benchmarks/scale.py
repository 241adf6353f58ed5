"""Scale benchmark: correlate on a generated 1,000,000-cell dataset.

100 systems x 10,000 inputs; the human score is the mean of 3 raters on a
discrete 1-5 scale; 5 continuous metrics of varying quality.  Runs
:func:`metaeval.correlate` with a ``boot-both`` interval at the given levels
and methods and prints the wall time and the peak RSS of the process.

Run standalone (peak memory is best read with GNU time)::

    PYTHONPATH=src /usr/bin/time -v python benchmarks/scale.py --target   # the issue-15 target
    PYTHONPATH=src /usr/bin/time -v python benchmarks/scale.py --n-resamples 20
    METAEVAL_MEMORY_BUDGET=256MB PYTHONPATH=src python benchmarks/scale.py --level global

``--compare`` is the issue's other target: :func:`metaeval.compare` with
Perm-Both and 1000 resamples between metric1 and metric2 at ``input`` and
``global`` level (target: under 1 minute each), for pearson, spearman and
kendall_b (``--method`` to choose), printing wall and CPU time, the peak RSS
so far and the load average of each call::

    PYTHONPATH=src /usr/bin/time -v python benchmarks/scale.py --compare

``--target`` is the issue's target: one ``correlate`` call at all four levels
x pearson/spearman/kendall_b with 1000 boot-both resamples (target: under 5
minutes and 2 GB peak on a 2-core machine); it prints the wall and CPU time,
the peak RSS and the load average before and after.  ``--dask N`` runs the
same call on a local Dask cluster of N single-threaded worker processes
(``joblib.parallel_config(backend="dask")``, ``n_jobs=-1``); ``--jobs N``
runs it with ``n_jobs=N`` locally.  ``--level``, ``--method`` and
``--n-metrics`` narrow the call: with one interval (``--n-metrics 1 --level
global --method kendall_b``) its resamples run as blocks, one task each, on
the Dask workers or the ``--jobs`` processes.  ``SCALE_TARGET_OUT=FILE``
saves every result row (CSV) to compare two runs.

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
    ap.add_argument("--target", action="store_true",
                    help="all 4 levels x pearson/spearman/kendall_b, 1000 resamples, one call")
    ap.add_argument("--jobs", type=int, default=1, help="n_jobs of the --target call")
    ap.add_argument("--dask", type=int, metavar="WORKERS",
                    help="run on a local Dask cluster of WORKERS single-threaded processes")
    ap.add_argument("--compare", action="store_true",
                    help="compare Perm-Both 1000 at input and global level, one call each")
    args = ap.parse_args(argv)
    if args.target:
        return target(args)
    if args.compare:
        return compare_target(args)
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


def _load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def compare_target(args):
    """The issue-15 compare target: Perm-Both 1000 between two metrics."""
    import os
    import warnings

    import metaeval

    n_res = args.n_resamples if args.n_resamples != 20 else 1000
    levels = args.level or ["input", "global"]
    methods = args.method or ["pearson", "spearman", "kendall_b"]
    ds = generate(args.n_systems, args.n_inputs, args.n_metrics)
    small = generate(5, 20, 2)
    warnings.simplefilter("ignore")
    print(f"metaeval {metaeval.__file__}; {args.n_systems} x {args.n_inputs} cells, "
          f"perm-both, B={n_res}, NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}")
    for level in levels:
        for method in methods:
            kw = dict(level=level, method=method, test="perm-both", rng=0)
            metaeval.compare(small, "human", "metric1", "metric2", n_resamples=2, **kw)  # compile
            load0 = _load()
            t0, c0 = time.perf_counter(), time.process_time()
            c = metaeval.compare(ds, "human", "metric1", "metric2", n_resamples=n_res, **kw)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            print(f"{level:7s} {method:10s} {wall:7.1f} s wall {cpu:7.1f} s CPU  peak RSS so far "
                  f"{peak_rss_mb():.0f} MB  load {load0} -> {_load()}  delta={c.statistic:.5f} "
                  f"p={c.pvalue:.4f}", flush=True)
    return 0


def target(args):
    """The issue-15 target: one correlate call, all levels x 3 methods."""
    import os
    import warnings

    import metaeval

    n_res = args.n_resamples if args.n_resamples != 20 else 1000
    levels = args.level or ["system", "input", "item", "global"]
    methods = args.method or ["pearson", "spearman", "kendall_b"]
    ds = generate(args.n_systems, args.n_inputs, args.n_metrics)
    warnings.simplefilter("ignore")
    kw = dict(level=levels, method=methods, ci="boot-both", n_resamples=n_res, pvalue="none", rng=0)
    metaeval.correlate(generate(5, 20, 1), "human", **{**kw, "n_resamples": 2})  # compile
    print(f"metaeval {metaeval.__file__}; {args.n_systems} x {args.n_inputs} cells, "
          f"{args.n_metrics} metrics, {len(levels)} levels x {len(methods)} methods, B={n_res}, "
          f"jobs={args.jobs}, dask={args.dask}, NUMBA_NUM_THREADS="
          f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}, load before {_load()}")
    t0, c0 = time.perf_counter(), time.process_time()
    if args.dask:
        from dask.distributed import Client, LocalCluster
        from joblib import parallel_config

        # one numba thread per worker process (the parent imported numba
        # already; the workers read this when they start)
        os.environ["NUMBA_NUM_THREADS"] = "1"

        with LocalCluster(n_workers=args.dask, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, \
                Client(cluster), parallel_config(backend="dask"):
            res = metaeval.correlate(ds, "human", n_jobs=-1, **kw)
    else:
        res = metaeval.correlate(ds, "human", n_jobs=args.jobs, **kw)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"correlate: {wall:.1f} s wall, {cpu:.1f} s CPU (this process), peak RSS "
          f"{peak_rss_mb():.0f} MB (this process), load after {_load()}")
    frame = res.to_frame()
    print(frame[["metric", "level", "method", "statistic", "ci_low", "ci_high"]]
          .head(12).to_string(index=False))
    out = os.environ.get("SCALE_TARGET_OUT")
    if out:
        frame.to_csv(out, index=False)
    return 0


if __name__ == "__main__":
    main()
