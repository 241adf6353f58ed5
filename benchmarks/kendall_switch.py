#!/usr/bin/env python
"""Where Knight's O(n log n) Kendall path beats the direct O(n^2) loop (issue 15).

Usage (from the repository root)::

    python benchmarks/kendall_switch.py      # ~1 min

Times, per group, ``kendall_stats`` with eps = 0 on groups of n >= KNIGHT_MIN_N
(Knight's path) against eps = 5e-324 (the direct loop: the same counts on
data whose differences are never subnormal), and the ranked-human kernel
(``kendall_stats_ranked_y``, a batch of 10 metric resamples against one
human score) against the direct loop, on continuous and Likert (1..5) data.
The switch points ``KNIGHT_MIN_N`` and ``RANKED_Y_MIN_N`` in
``metaeval.stats._kernels`` are set from these crossovers.  Run it with
``KNIGHT_MIN_N`` temporarily at its minimum to time Knight below the switch.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

from metaeval.stats import _kernels as K  # noqa: E402
from metaeval.stats.coefficients import dense_ranks  # noqa: E402


def best(f, repeats=5):
    t = []
    for _ in range(repeats):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t)


def main():
    rng = np.random.default_rng(0)
    print(f"KNIGHT_MIN_N = {K.KNIGHT_MIN_N}, RANKED_Y_MIN_N = {K.RANKED_Y_MIN_N}")
    for n in (64, 100, 200, 400, 800, 1600):
        G = max(1, 200_000 // n)
        for kind in ("continuous", "likert"):
            if kind == "continuous":
                x, y = rng.normal(size=(1, G, n)), rng.normal(size=(1, G, n))
            else:
                x = rng.integers(1, 6, (1, G, n)).astype(float)
                y = rng.integers(1, 6, (1, G, n)).astype(float)
            K.kendall_stats(x[:, :2], y[:, :2], 0.0)
            K.kendall_stats(x[:, :2], y[:, :2], 5e-324)
            tk = best(lambda: K.kendall_stats(x, y, 0.0)) / G * 1e6
            td = best(lambda: K.kendall_stats(x, y, 5e-324)) / G * 1e6
            path = "knight" if n >= K.KNIGHT_MIN_N else "direct"
            print(f"n={n:5d} {kind:10s} eps=0 ({path}) {tk:8.2f} us/group   direct {td:8.2f} us/group")
        B, G = 10, max(1, 20_000 // n)
        x = rng.normal(size=(B, G, n))
        y = rng.integers(1, 6, (1, G, n)).astype(float)
        yr, k = dense_ranks(y[0])
        yb = np.ascontiguousarray(np.broadcast_to(y, (B, G, n)))
        K.kendall_stats_ranked_y(x[:, :1], yr[:1], k[:1])
        tr = best(lambda: K.kendall_stats_ranked_y(x, yr, k)) / (B * G) * 1e6
        td = best(lambda: K.kendall_stats(x, yb, 5e-324)) / (B * G) * 1e6
        print(f"n={n:5d} ranked-human {tr:8.2f} us/group   direct {td:8.2f} us/group")


if __name__ == "__main__":
    main()
