#!/usr/bin/env python
"""Time (and, under ``/usr/bin/time -v``, peak memory of) acc_eq's tie calibration.

Usage (from the repository root; one case per process so that the peak RSS
belongs to it)::

    /usr/bin/time -v python benchmarks/acc_eq.py global --cells 29000
    /usr/bin/time -v python benchmarks/acc_eq.py item            # 16 x 2000
    /usr/bin/time -v python benchmarks/acc_eq.py input-boot      # 16 x 2000, 200 resamples
    # before/after: the same case against another checkout's src/
    /usr/bin/time -v python benchmarks/acc_eq.py item --src /tmp/old/src

Data are MQM-like (issue 15.2): human scores are minus a weighted error
count (0 for most segments, so heavy human ties), the metric is the human
score plus noise rounded to 3 decimals (some metric ties).  ``global`` is one
group of N x M cells (N = 29 systems); ``item`` is 16 groups of 2000;
``input-boot`` is a percentile bootstrap (boot-both, 200 resamples) of acc_eq
at input level (2000 groups of 16) through :func:`metaeval.correlate`.
The first call compiles the kernels; it is timed separately (``compile_s``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def mqm_like(rng, n_sys, n_inp):
    import numpy as np

    minor = rng.poisson(0.6, size=(n_sys, n_inp))
    major = rng.poisson(0.15, size=(n_sys, n_inp))
    human = -(minor + 5.0 * major)
    metric = np.round(0.1 * human + rng.normal(scale=0.4, size=human.shape), 3)
    return metric, human.astype(float)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=["global", "item", "input-boot"])
    ap.add_argument("--cells", type=int, default=29000, help="global: number of cells")
    ap.add_argument("--n-resamples", type=int, default=200)
    ap.add_argument("--src", default=str(REPO / "src"), help="the src/ directory to import")
    a = ap.parse_args(argv)
    sys.path.insert(0, a.src)
    import numpy as np

    import metaeval
    from metaeval.stats.levels import level_values

    rng = np.random.default_rng(20231)
    if a.case == "global":
        n_sys = 29
        metric, human = mqm_like(rng, n_sys, -(-a.cells // n_sys))
        metric, human = metric.reshape(-1)[: a.cells][None], human.reshape(-1)[: a.cells][None]
    else:
        metric, human = mqm_like(rng, 16, 2000)
    t = time.perf_counter()
    level_values(metric[:, :40], human[:, :40], "item", "acc_eq")  # compile
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    if a.case == "input-boot":
        ds = metaeval.Dataset.from_arrays({"mqm": human, "m": metric}, human="mqm")
        res = metaeval.correlate(ds, "mqm", level="input", method="acc_eq", ci="boot-both",
                                 n_resamples=a.n_resamples, rng=0)
        row = res.to_frame().iloc[0]
        out = {"statistic": float(row["statistic"]), "ci_low": float(row["ci_low"]),
               "ci_high": float(row["ci_high"])}
    else:
        lv = level_values(metric, human, "global" if a.case == "global" else "item", "acc_eq",
                          detail=False)
        out = {"statistic": float(lv.value[0]), "epsilon": float(lv.epsilon[0])}
    out.update(case=a.case, shape=list(metric.shape), src=a.src, compile_s=round(compile_s, 2),
               seconds=round(time.perf_counter() - t, 2))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
