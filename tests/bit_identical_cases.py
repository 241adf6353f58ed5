"""Every public analysis function on the bundled SummEval, flattened to arrays.

Used by ``tests/test_bit_identical.py`` (compare against the fixture) and to
write the fixture from the original code (see that test's docstring):

    PYTHONPATH=<checkout of the original commit>/src python tests/bit_identical_cases.py OUT.npz

Each case runs one public function with fixed seeds and small resample
counts; :func:`flatten` walks the result (dataclass fields, collections,
dicts, arrays, frames) into ``{path: array}`` (numbers) and ``{path: str}``
(labels, signatures), so a comparison is bit for bit on every number.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import sys
import warnings

import numpy as np
import pandas as pd

METRICS = ["BLEU", "ROUGE.L", "BertScore_f1", "G.EVAL.4.COH"]


def flatten(obj, path="", out=None, seen=None):
    """``({path: float array}, {path: str})`` of every number and label in ``obj``."""
    if out is None:
        out = ({}, {})
    if seen is None:
        seen = set()
    nums, strs = out
    if obj is None:
        strs[path] = "None"
    elif isinstance(obj, (bool, np.bool_)):
        nums[path] = np.asarray(float(obj))
    elif isinstance(obj, (int, float, np.integer, np.floating)):
        nums[path] = np.asarray(obj, dtype=float)
    elif isinstance(obj, str):
        strs[path] = obj
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf":
            nums[path] = np.asarray(obj, dtype=float)
        elif all(isinstance(v, str) for v in obj.ravel().tolist()):
            strs[path] = "\x1f".join(obj.ravel().tolist())
        else:
            for i, v in enumerate(obj.ravel().tolist()):
                flatten(v, f"{path}[{i}]", out, seen)
    elif isinstance(obj, pd.DataFrame):
        flatten([str(c) for c in obj.columns], f"{path}.columns", out, seen)
        flatten([str(c) for c in obj.index], f"{path}.index", out, seen)
        for c in obj.columns:
            flatten(obj[c].to_numpy(), f"{path}[{c}]", out, seen)
    elif isinstance(obj, pd.Series):
        flatten([str(c) for c in obj.index], f"{path}.index", out, seen)
        flatten(obj.to_numpy(), f"{path}.values", out, seen)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{path}{{{k}}}", out, seen)
    elif isinstance(obj, (list, tuple)) and obj and all(isinstance(v, str) for v in obj):
        strs[path] = "\x1f".join(obj)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, f"{path}[{i}]", out, seen)
    elif callable(obj) and not dataclasses.is_dataclass(obj):
        strs[path] = getattr(obj, "__name__", type(obj).__name__)
    else:
        if id(obj) in seen:
            return out
        seen.add(id(obj))
        if dataclasses.is_dataclass(obj):
            items = [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
        elif hasattr(obj, "__dict__"):
            items = sorted(vars(obj).items())
        elif hasattr(obj, "__slots__"):
            items = [(s, getattr(obj, s)) for s in obj.__slots__ if hasattr(obj, s)]
        else:
            strs[path] = repr(obj)
            return out
        strs[f"{path}.__class__"] = type(obj).__name__
        for k, v in items:
            if k.startswith("_"):
                continue
            flatten(v, f"{path}.{k}", out, seen)
        to_frame = getattr(obj, "to_frame", None)
        if callable(to_frame):
            flatten(to_frame(), f"{path}.to_frame()", out, seen)
    return out


def _preferences(ds):
    from metaeval import preferences as pf

    systems = ds.systems
    rows_h, rows_j = [], []
    for j, inp in enumerate(ds.inputs[:40]):
        a, b = j % len(systems), (j + 5) % len(systems)
        for r in ("expert1", "expert2", "expert3"):
            s = ds.scores(f"{r}_coherence")
            d = s[a, j] - s[b, j]
            rows_h.append((inp, systems[a], systems[b], r, 1.0 if d > 0 else 0.0 if d < 0 else 0.5))
        for m in ("BLEU", "ROUGE.L"):
            s = ds.scores(m)
            d = s[a, j] - s[b, j]
            p = 1.0 if d > 0 else 0.0 if d < 0 else 0.5
            rows_j.append((inp, systems[a], systems[b], m, "ab", p))
            rows_j.append((inp, systems[a], systems[b], m, "ba", 1.0 - p if j % 7 else p))
    human = pd.DataFrame(rows_h, columns=["input", "system_a", "system_b", "rater", "preference"])
    judge = pd.DataFrame(rows_j, columns=["input", "system_a", "system_b", "judge", "order",
                                          "preference"])
    return pf.PreferenceData.from_frames(human, judge)


def cases():
    """``{name: thunk}``: one call of each public analysis function."""
    import metaeval as me
    from metaeval import diagnostics as dg
    from metaeval import local as lc
    from metaeval import preferences as pf
    from metaeval import wmt

    ds = me.load_dataset("summeval")
    small = ds.subset(systems=list(ds.systems[:8]), inputs=list(ds.inputs[:30]))
    half_a = ds.subset(inputs=list(ds.inputs[:50]))
    half_b = ds.subset(inputs=list(ds.inputs[50:]))
    h = "coherence"
    c = {}
    for level in ("system", "input", "item", "global"):
        for method in ("pearson", "spearman", "kendall_b"):
            c[f"correlate/{level}/{method}"] = (
                lambda level=level, method=method: me.correlate(
                    ds, h, metrics=METRICS, level=level, method=method, n_resamples=40, rng=0))
    c["correlate/micro"] = lambda: me.correlate(ds, h, metrics=METRICS, level="input",
                                                method="pearson", average="micro",
                                                n_resamples=40, rng=1)
    c["correlate/perm"] = lambda: me.correlate(ds, h, metrics=METRICS, level="system",
                                               method="kendall_b", pvalue="permutation", ci="none",
                                               n_resamples=40, rng=2, alternative="greater")
    c["correlate/fisher"] = lambda: me.correlate(ds, h, metrics=METRICS, level="system",
                                                 ci="fisher", pvalue="auto")
    for test in ("perm-both", "perm-systems", "perm-inputs", "boot-both", "williams"):
        for level in ("system", "input"):
            c[f"compare/{test}/{level}"] = (
                lambda test=test, level=level: me.compare(
                    ds, h, "BLEU", "G.EVAL.4.COH", level=level, test=test, n_resamples=40, rng=3))
    c["compare/sequential"] = lambda: me.compare(ds, h, "BLEU", "ROUGE.L", sequential=5,
                                                 n_resamples=60, rng=4)
    # the fixture's code clustered on uncorrected p-values by default (now Holm: issue 23 item 3)
    c["compare_all"] = lambda: me.compare_all(ds, h, metrics=METRICS, n_resamples=40, rng=5,
                                              cluster_correction="none")
    c["compare_all/mtme"] = lambda: me.compare_all(ds, h, metrics=METRICS, n_resamples=40,
                                                   rng=5, clusters="mtme", correction="bh",
                                                   cluster_correction="holm", level="input",
                                                   method="spearman")
    c["discriminative_power"] = lambda: me.discriminative_power(
        small, h, metrics=METRICS[:3], levels=["system", "input"], methods=["pearson", "kendall_b"],
        n_resamples=20, rng=6)
    c["discriminative_power/williams"] = lambda: me.discriminative_power(
        small, h, metrics=METRICS[:3], levels=["system"], methods=["pearson"], test="williams",
        n_resamples=20, rng=6)
    c["ranking_consistency"] = lambda: me.ranking_consistency(
        small, h, metrics=METRICS, levels=["system", "global"], methods=["spearman"],
        n_splits=20, rng=7)
    c["simulate"] = lambda: me.simulate(n_systems=6, n_inputs=20, n_iterations=3,
                                        n_discretizations=3, rng=8, n_jobs=1)
    c["simulate/keep"] = lambda: me.simulate(n_systems=5, n_inputs=12, n_iterations=2,
                                             n_discretizations=2, rng=8, n_jobs=1,
                                             keep_values=True, engine="generic",
                                             method=("kendall_b",), average="micro")
    c["simulate_dataset"] = lambda: me.simulate_dataset(small, h, "BLEU", n_iterations=2,
                                                        n_discretizations=2, rng=9, n_jobs=1)
    c["estimate_parameters"] = lambda: me.estimate_parameters(ds, h, metrics=METRICS)
    c["stability"] = lambda: me.stability(me.load_dataset("summeval", runs=True),
                                          metrics=METRICS)
    c["consistency"] = lambda: me.consistency(ds, ["expert1_coherence", "expert2_coherence",
                                                   "expert3_coherence"], n_resamples=30, rng=10)
    c["consistency_curve"] = lambda: me.consistency_curve(
        ds, ["expert1_coherence", "expert2_coherence", "expert3_coherence"], n_subsets=10,
        sizes=[5, 10], rng=11)
    c["agreement"] = lambda: me.agreement(ds, ["coherence", "relevance"])
    c["rater_correlations"] = lambda: me.rater_correlations(
        ds, ["coherence", "relevance"], level="input")
    ds16 = ds.subset(systems=[s for s in ds.systems if s != "M23_dynamicmix"])
    c["ks_score"] = lambda: me.ks_score(ds16, ["coherence", "fluency"], metrics=METRICS)
    c["meta_correlation"] = lambda: me.meta_correlation(ds16, ["coherence", "fluency"],
                                                        metrics=METRICS)
    c["sample_size"] = lambda: me.sample_size(ds16, h, metrics=METRICS, sizes=(20, 50),
                                              n_resamples=10, rng=12)
    refs = np.random.default_rng(13).normal(size=(ds16.shape[0], ds16.shape[1], 4))
    c["reference_sensitivity"] = lambda: me.reference_sensitivity(
        ds16, [h, "relevance"], scores={"toy": refs}, n_resamples=20, rng=13)
    cols = ["coherence", "consistency", "fluency", "relevance"] + METRICS
    c["correlation_design"] = lambda: me.correlation_design(ds16, columns=cols)
    c["correlation_design/pearson"] = lambda: me.correlation_design(
        ds16, columns=cols, method="pearson", levels=("system", "global"),
        correction="holm")
    pert = {m: small.scores(m) + np.random.default_rng(14).normal(scale=0.5, size=small.shape)
            for m in METRICS}
    orig = {m: small.scores(m) for m in METRICS}
    c["perturbation_detection"] = lambda: me.perturbation_detection(orig, pert)
    ctx = np.tile(np.repeat(["A", "B", "C"], 10), (small.shape[0], 1))
    pairs = lambda: lc.local_pairs(orig, pert, context=ctx)  # noqa: E731
    hpairs = lambda: lc.local_pairs(small, human=h, metrics=METRICS,  # noqa: E731
                                    context=ctx)
    c["local_pairs"] = pairs
    c["local_pairs/human"] = hpairs
    c["local_accuracy"] = lambda: lc.local_accuracy(pairs())
    c["local_accuracy/pair"] = lambda: lc.local_accuracy(hpairs(), average="pair")
    c["context_chi2"] = lambda: lc.context_chi2(pairs(), n_resamples=30, rng=15)
    c["context_chi2/perm"] = lambda: lc.context_chi2(hpairs(), test="permutation",
                                                     n_resamples=30, rng=15)
    c["context_tau"] = lambda: lc.context_tau(pairs(), n_resamples=20, rng=16)
    c["weighted_tau"] = lambda: lc.weighted_tau(ds.scores("BLEU")[:, 0], ds.scores(h)[:, 0])
    c["mtmm"] = lambda: me.mtmm(ds, ["coherence", "consistency", "fluency", "relevance"])
    c["concurrent_validity"] = lambda: me.concurrent_validity(ds, ["coherence", "relevance"],
                                                              metrics=METRICS)
    c["cfa"] = lambda: me.cfa(ds, {"COH": ["expert1_coherence", "expert2_coherence",
                                           "expert3_coherence"],
                                   "REL": ["expert1_relevance", "expert2_relevance",
                                           "expert3_relevance"]}, ordered=False)
    c["residual_pca"] = lambda: me.residual_pca(ds, me.cfa(
        ds, {"COH": ["expert1_coherence", "expert2_coherence", "expert3_coherence"]},
        ordered=False), metrics=METRICS)
    prefs = lambda: _preferences(ds)  # noqa: E731
    c["preference_agreement"] = lambda: pf.preference_agreement(prefs(), n_resamples=20, rng=17)
    c["compare_judges"] = lambda: pf.compare_judges(prefs(), "BLEU", "ROUGE.L", n_resamples=20,
                                                    rng=18)
    c["position_consistency"] = lambda: pf.position_consistency(prefs(), n_resamples=20, rng=19)
    c["bradley_terry"] = lambda: pf.bradley_terry(prefs())
    c["soft_pairwise_accuracy"] = lambda: wmt.soft_pairwise_accuracy(
        ds, h, metrics=METRICS, n_permutations=30, rng=20, ci="boot-inputs", n_resamples=20)
    c["compare_spa"] = lambda: wmt.compare_spa(ds, h, "BLEU", "ROUGE.L", n_resamples=30,
                                               n_permutations=30, rng=21)
    c["global_pairwise_accuracy"] = lambda: wmt.global_pairwise_accuracy(
        {"a": half_a, "b": half_b}, h, metrics=METRICS, n_resamples=30, rng=22,
        clusters="mtme")  # the fixture's default (now holm: issue 23 item 3)
    c["run_tasks"] = lambda: wmt.run_tasks(
        [wmt.Task("a", h, level="system", method="pearson"),
         wmt.Task("a", h, level="input", method="kendall_b"),
         wmt.Task("b", h, level="system", method="spa")],
        {"a": half_a, "b": half_b}, metrics=METRICS, n_resamples=20, n_permutations=20, rng=23,
        clusters="mtme")  # the fixture's default (now holm: issue 23 item 3)
    return c


def _short(s: str) -> str:
    """Long labels (whole label columns) as their SHA-256, to keep the fixture small."""
    if len(s) <= 200:
        return s
    import hashlib

    return "sha256:" + hashlib.sha256(s.encode()).hexdigest()


def run_all(only=None):
    """``(nums, strs, errors)`` over every case (a case that raises records its error)."""
    nums, strs, errors = {}, {}, {}
    for name, thunk in cases().items():
        if only is not None and name not in only:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = thunk()
            except Exception as exc:  # recorded: the same error must come back
                errors[name] = f"{type(exc).__name__}: {exc}"
                continue
        n, s = flatten(res, name)
        nums.update(n)
        strs.update({k: _short(v) for k, v in s.items()})
    return nums, strs, errors


def save(path_npz: str, nums, strs, errors) -> None:
    """One float64 vector (``values``) in ``path_npz``; keys, shapes, labels in the .json.gz twin."""
    keys = sorted(nums)
    values = np.concatenate([np.ravel(nums[k]) for k in keys]) if keys else np.zeros(0)
    np.savez_compressed(path_npz, values=values)
    index = [[k, list(np.shape(nums[k]))] for k in keys]
    with gzip.open(path_npz[: -len(".npz")] + ".json.gz", "wt") as fh:
        json.dump({"index": index, "strings": strs, "errors": errors}, fh, indent=0,
                  sort_keys=True)


def load(path_npz: str):
    """``(nums, strs, errors)`` as written by :func:`save`."""
    values = np.load(path_npz)["values"]
    with gzip.open(path_npz[: -len(".npz")] + ".json.gz", "rt") as fh:
        meta = json.load(fh)
    nums, at = {}, 0
    for k, shape in meta["index"]:
        size = int(np.prod(shape)) if shape else 1
        nums[k] = values[at: at + size].reshape(shape)
        at += size
    return nums, meta["strings"], meta["errors"]


if __name__ == "__main__":
    nums, strs, errors = run_all()
    save(sys.argv[1], nums, strs, errors)
    print(len(nums), "arrays,", len(strs), "strings,", len(errors), "errors:", errors)
