# --jobs 1 vs 2 for correlate (boot-both) and compare_all (perm-both) on SummEval; prints JSON.
# usage: PYTHONPATH=src python benchmarks/jobs_speedup.py
import os, sys, time, json, warnings
warnings.simplefilter("ignore")
import numpy as np, metaeval
ds = metaeval.load_dataset("summeval")
mets = ["ROUGE.1","ROUGE.2","ROUGE.L","BLEU","BertScore_f1","METEOR","chrF","CIDEr"]
mets = [m for m in mets if m in ds.metrics][:8]
def corr(n_jobs):
    return metaeval.correlate(ds, "coherence", metrics=mets, level=["system","input","item","global"],
                              method=["pearson","kendall_b"], ci="boot-both", n_resamples=1000, rng=0, n_jobs=n_jobs)
def comp(n_jobs):
    return metaeval.compare_all(ds, "coherence", metrics=mets[:6], level="input", method="kendall_b",
                                test="perm-both", n_resamples=1000, rng=0, n_jobs=n_jobs)
out = {"metrics": mets, "load_before": os.getloadavg()}
corr(1); comp(1)  # warm (compile/cache load)
for name, f in (("correlate", corr), ("compare_all", comp)):
    for nj in (1, 2, 1, 2):
        t = time.perf_counter(); c = time.process_time(); r = f(nj)
        out.setdefault(name, []).append((nj, round(time.perf_counter() - t, 2), round(time.process_time() - c, 2)))
        out.setdefault(name + "_frames", {})[nj] = r.to_frame().select_dtypes("number").to_numpy().tobytes().hex()[:64]
out["same_numbers"] = {k: len(set(out[k + "_frames"].values())) == 1 for k in ("correlate", "compare_all")}
for k in ("correlate", "compare_all"): del out[k + "_frames"]
out["load_after"] = os.getloadavg()
print(json.dumps(out))
