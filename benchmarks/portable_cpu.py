"""Run-time cost of the shipped portable kernels (issue 26.1).

The same kernel-heavy work in two kinds of process, alternated, each a fresh
interpreter with 1 numba thread: "host" loads kernels compiled for this CPU
(a user cache filled beforehand), "portable" has an empty user cache, so
every kernel comes from the shipped cache compiled for NUMBA_CPU_NAME=generic.
Prints the CPU seconds of the work (after one untimed call that loads the
kernels) and the ratio portable / host per round.

usage: PYTHONPATH=src python benchmarks/portable_cpu.py [--rounds 3]
(needs the shipped cache: python -m metaeval.stats._jit build)
"""

import json
import os
import subprocess
import sys
import tempfile

WORK = r"""
import json, time, warnings
warnings.simplefilter("ignore")
import metaeval
from metaeval.stats import _jit
ds = metaeval.load_dataset("summeval")
ms = ["ROUGE.1", "ROUGE.2", "BLEU" if "BLEU" in ds.metrics else "METEOR"]
def work():
    metaeval.correlate(ds, "coherence", metrics=ms, level=["system", "input", "item", "global"],
                       method=["pearson", "spearman", "kendall_b"], ci="boot-both",
                       n_resamples=2000, rng=0)
    for level in ("input", "global"):
        metaeval.compare(ds, "coherence", "ROUGE.1", "ROUGE.2", level=level, method="kendall_b",
                         test="perm-both", n_resamples=20000, rng=0)
work()  # load (or compile) every kernel
t = time.process_time(); work(); cpu = time.process_time() - t
print(json.dumps({"cpu": cpu, "shipped_hits": _jit._state.get("shipped_hits", 0)}))
"""


def run(cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "NUMBA_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", WORK], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    print("load before:", os.getloadavg())
    with tempfile.TemporaryDirectory() as host:
        # fill the host cache: METAEVAL_BUILD_NUMBA_CACHE unset, NUMBA_CPU_NAME unset
        env = {**os.environ, "NUMBA_CACHE_DIR": host, "NUMBA_NUM_THREADS": "1",
               "METAEVAL_IGNORE_SHIPPED_NUMBA_CACHE": "1"}
        subprocess.run([sys.executable, "-c", WORK], env=env, check=True, capture_output=True)
        for r in range(rounds):
            with tempfile.TemporaryDirectory() as empty:
                p = run(empty)
            h = run(host)
            assert h["shipped_hits"] == 0 and p["shipped_hits"] > 0, (h, p)
            print(f"round {r + 1}: host {h['cpu']:.2f} CPU-s, portable {p['cpu']:.2f} CPU-s, "
                  f"portable / host {p['cpu'] / h['cpu']:.3f}")
    print("load after:", os.getloadavg())


if __name__ == "__main__":
    main()
