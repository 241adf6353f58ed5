# --jobs 1 vs 2 for discriminative power and ranking consistency on SummEval (issue 15.5); prints JSON.
# usage: PYTHONPATH=src python benchmarks/jobs_speedup_measures.py
# Same protocol as jobs_speedup.py: one warm-up call, then n_jobs 1, 2, 1, 2 (the first n_jobs=2
# call starts the loky workers; the second reuses them); wall and CPU seconds of this process.
import json
import os
import time
import warnings

import metaeval

warnings.simplefilter("ignore")
ds = metaeval.load_dataset("summeval")
mets = ["ROUGE.1", "ROUGE.2", "ROUGE.L", "BLEU", "BertScore_f1", "METEOR"]
mets = [m for m in mets if m in ds.metrics]


def dp(n_jobs):
    return metaeval.discriminative_power(ds, "coherence", metrics=mets, n_resamples=1000, rng=0,
                                         n_jobs=n_jobs)


def rc(n_jobs):
    return metaeval.ranking_consistency(ds, "coherence", metrics=mets, n_splits=1000, rng=0,
                                        n_jobs=n_jobs)


out = {"metrics": mets, "load_before": os.getloadavg()}
dp(1), rc(1)  # warm (compile / cache load)
for name, f in (("discriminative_power", dp), ("ranking_consistency", rc)):
    frames = {}
    for nj in (1, 2, 1, 2):
        t, c = time.perf_counter(), time.process_time()
        r = f(nj)
        out.setdefault(name, []).append((nj, round(time.perf_counter() - t, 2), round(time.process_time() - c, 2)))
        frames.setdefault(nj, r.to_frame().select_dtypes("number").to_numpy().tobytes())
    out[name + "_same_numbers"] = len(set(frames.values())) == 1
out["load_after"] = os.getloadavg()
print(json.dumps(out))
