"""The resampling kernels against their floors (issue 26.5), one thread, in one process.

usage: python benchmarks/kernel_limits.py [--baseline-src DIR] [--repeats 7]

For one SummEval pair (ROUGE.1 vs BertScore_f1, coherence, 1000 resamples) the arguments of
the kernels are captured from a ``compare`` call, and each kernel's serial build is timed
(median of ``--repeats``, ``time.process_time``) against a floor: a numba loop written here
that does only the memory traffic the kernel cannot avoid.

* Perm-Both Pearson (``swap_pair_values``, which 0) per cell and resample, against the coin
  gather alone (read the coin, select both halves' values, store them) and against the gather
  plus the Pearson passes' chains of dependent additions (two halves: the sums, then the
  centred sums: 2 x n additions of 4 cycles per half and pass, measured by a loop of the same
  additions);
* Perm-Both Kendall (``swap_pair_values``, which 2: the counts of both halves) per cell and
  resample, beside the Pearson figures (no floor of its own);
* the bootstrap's Kendall statistics (``boot_kendall_stats``) per slot and replicate, against
  the gathers of the two drawn weights per slot plus the block bookkeeping (ties in the metric
  and in both), which every exact count needs;
* acc_eq (``tie_calibration_best``) per pair at input level (2,000 groups of 16, MQM-like)
  against the same sweep on one group of 8,000 cells (global level).

With ``--baseline-src`` the same kernels of another tree (e.g. ``git archive 13bd29e src``) are
timed in a second process on the same captured arguments, alternating with this tree.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

CHILD = r'''
import json, statistics, sys, time, warnings
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
warnings.simplefilter("ignore")
import numpy as np
import numba as nb
import metaeval
from metaeval.stats import coefficients, permboth
import metaeval.stats.cellboot as cb
reps = int(sys.argv[3])
ds = metaeval.load_dataset("summeval")
out = {}

def med(f, *a):
    f(*a)
    ts = []
    for _ in range(reps):
        t = time.process_time(); f(*a); ts.append(time.process_time() - t)
    return statistics.median(ts)

# Perm-Both Pearson: the arguments of pair_values
cap = {}
real = permboth.PairLayout.pair_values
def spy(self, bits, n, method, fast=True):
    cap["pv"] = (self, bits.copy(), n)
    return real(self, bits, n, method, fast=fast)
permboth.PairLayout.pair_values = spy
metaeval.compare(ds, "coherence", "ROUGE.1", "BertScore_f1", level="input", method="pearson",
                 test="perm-both", n_resamples=1000, rng=0)
lay, bits, B = cap["pv"]
if lay.ecell is None:
    lay.pair_values(bits, 4, "pearson")
K = coefficients.kernels(True, 1)  # the serial builds
a = (bits, B, lay.ncell, lay.za, lay.zb, lay.gptr, lay.cell, lay.hval, lay.eptr, lay.ecell,
     lay.ecode, lay.eslot, lay.esrc, lay.enew, lay.gk, lay.hn2, 0)
cells = B * int(lay.gptr[-1])
out["perm_pearson_ns_per_cell"] = med(K.swap_pair_values, *a) / cells * 1e9
out["perm_kendall_ns_per_cell"] = med(K.swap_pair_values, *(a[:-1] + (2,))) / cells * 1e9

@nb.njit
def gather(bits, B, ncell, za, zb, gptr, cell, chains):
    G = gptr.size - 1
    nmax = 1
    for g in range(G):
        nmax = max(nmax, gptr[g + 1] - gptr[g])
    xa = np.empty(nmax); xb = np.empty(nmax)
    acc = 0.0
    for b in range(B):
        base = b * ncell
        for g in range(G):
            s0 = gptr[g]; n = gptr[g + 1] - s0
            for t in range(n):
                c = cell[s0 + t]
                i = base + c
                sw = (bits[i >> 3] >> (7 - (i & 7))) & 1
                va = za[c]; vb = zb[c]
                xa[t] = vb if sw else va
                xb[t] = va if sw else vb
            if chains:
                # the dependent additions of the two passes of both halves
                sa = 0.0; sb = 0.0
                for t in range(n):
                    sa += xa[t]; sb += xb[t]
                ma = sa / n; mb = sb / n
                ca = 0.0; cb_ = 0.0
                for t in range(n):
                    ca += xa[t] - ma; cb_ += xb[t] - mb
                acc += ca + cb_
            else:
                acc += xa[0] + xb[n - 1]
    return acc

out["perm_gather_floor_ns_per_cell"] = med(gather, bits, B, lay.ncell, lay.za, lay.zb, lay.gptr,
                                           lay.cell, False) / cells * 1e9
out["perm_gather_chains_floor_ns_per_cell"] = med(gather, bits, B, lay.ncell, lay.za, lay.zb,
                                                  lay.gptr, lay.cell, True) / cells * 1e9

# bootstrap Kendall: the arguments of boot_kendall_stats
real_k = coefficients.kernels
class Spy:
    def __init__(self, ns): self.ns = ns
    def __getattr__(self, name):
        v = getattr(self.ns, name)
        if name == "boot_kendall_stats":
            def f(*a):
                cap.setdefault("bk", tuple(np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in a))
                return v(*a)
            return f
        return v
cb.kernels = lambda *a, **k: Spy(real_k(*a, **k))
for level in ("input", "global"):
    cap.pop("bk", None)
    metaeval.compare(ds, "coherence", "ROUGE.1", "BertScore_f1", level=level, method="kendall_b",
                     test="boot-both", n_resamples=1000, rng=0)
    args = cap["bk"]
    slots = args[0].shape[0] * int(args[5][-1])
    out[f"boot_kendall_{level}_ns_per_slot"] = med(K.boot_kendall_stats, *args) / slots * 1e9

    @nb.njit
    def floor(wa, ia, wb, ib, gmult, gptr, ycode, xnew, xynew, gk):
        B = wa.shape[0]; G = gptr.size - 1
        res = np.zeros((B, G, 2))
        for b in range(B):
            for g in range(G):
                if gmult[b, g] == 0:
                    continue
                n = 0; tx = 0; txy = 0; kx = 0; wx = 0; wxy = 0; d = 0
                for s in range(gptr[g], gptr[g + 1]):
                    if xnew[s]:
                        tx += wx * (wx - 1) // 2
                        if wx > 0:
                            kx += 1
                        wx = 0
                    if xynew[s]:
                        txy += wxy * (wxy - 1) // 2
                        wxy = 0
                    w = wa[b, ia[s]] * wb[b, ib[s]]
                    n += w; wx += w; wxy += w
                    d += w * ycode[s]
                res[b, g, 0] = n; res[b, g, 1] = tx + txy + kx + d
        return res
    out[f"boot_kendall_{level}_floor_ns_per_slot"] = med(floor, *args) / slots * 1e9

# acc_eq at input level against the global sweep
sys.path.insert(0, sys.argv[2])
from acc_eq import mqm_like
from metaeval.stats.levels import arrange
rng = np.random.default_rng(20231)
metric, human = mqm_like(rng, 16, 2000)
xg, yg = (np.ascontiguousarray(v) for v in arrange(metric, human, "input"))
G, n = xg.shape[-2:]
w = np.full((1, G), 1.0 / G)
out["acc_eq_input_ns_per_pair"] = med(K.tie_calibration_best, xg, yg, w) / (G * n * (n - 1) / 2) * 1e9
x1 = np.ascontiguousarray(metric.reshape(1, 1, -1)[:, :, :8000])
y1 = np.ascontiguousarray(human.reshape(1, 1, -1)[:, :, :8000])
out["acc_eq_global_ns_per_pair"] = med(K.tie_calibration_best, x1, y1, np.ones((1, 1))) / (8000 * 7999 / 2) * 1e9
print("RESULT " + json.dumps(out))
'''


def run(src, repeats):
    env = {**os.environ, "PYTHONPATH": src, "NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS", "2")}
    p = subprocess.run([sys.executable, "-c", CHILD, src, HERE, str(repeats)], capture_output=True,
                       text=True, env=env)
    if p.returncode:
        raise SystemExit(f"[{src}] failed:\n{p.stderr[-3000:]}")
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[7:])


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    repeats = int(args[args.index("--repeats") + 1]) if "--repeats" in args else 7
    base = args[args.index("--baseline-src") + 1] if "--baseline-src" in args else None
    print(f"load {os.getloadavg()}")
    mine = run(SRC, repeats)
    other = run(base, repeats) if base else None
    for k, v in mine.items():
        line = f"{k:<42} {v:8.2f}"
        if other and k in other:
            line += f"   baseline {other[k]:8.2f}   ({other[k] / v:.2f}x)"
        print(line)
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
