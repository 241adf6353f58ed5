"""Scoring real texts and the correlation design of seed paper 003 on WMT23 en-de and WebNLG 2020.

Run from the repository root (the data are in ../shared/data, see its README for provenance):

    python examples/text_case_studies.py [--cache DIR] [--figures docs/figures]

It scores the outputs with sacreBLEU (BLEU, chrF, chrF++; TER on WebNLG only: WMT23 segments
are up to 464 words, where TER's shift search is too slow) and NLTK METEOR (WebNLG only: WordNet
is English), prints the correlation-design tables (system vs sentence level, Spearman,
Bonferroni) as Markdown, and saves the heatmaps (seed paper 003, Figure 1) that
docs/textmetrics.md shows. Scores are cached (default .cache/textmetrics), so a re-run is fast.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import metaeval
from metaeval import diagnostics as dg
from metaeval import textmetrics as tm

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CRITERIA = ["Correctness", "DataCoverage", "Fluency", "Relevance", "TextStructure"]


def wmt23() -> metaeval.Dataset:
    """WMT23 en-de (Kocmi et al. 2023, via JUDGE-BENCH, Apache-2.0): DA+SQM per segment.

    Segments that no system has a human score for are dropped: metric scores there would
    have no human counterpart (Dataset refuses metrics on inputs no human column covers)."""
    ds = metaeval.read_dataset(DATA / "wmt23" / "en-de.csv", input="segment_id", human="human",
                               metrics=[], texts=["source", "reference", "hypothesis"],
                               name="wmt23-en-de")
    rated = ~np.isnan(ds.scores("human")).all(axis=0)
    print(f"WMT23: {int((~rated).sum())} of {ds.shape[1]} segments have no human score; dropped")
    return ds.subset(inputs=[i for i, r in zip(ds.inputs, rated) if r])


def webnlg() -> metaeval.Dataset:
    """WebNLG 2020 English (Castro Ferreira et al. 2020, CC BY-NC-SA 4.0): crowd ratings 0-100."""
    ratings = pd.read_csv(DATA / "webnlg2020" / "ratings.csv", dtype={"sample_id": str})
    rows = []
    with open(DATA / "webnlg2020" / "texts.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            for system, hyp in d["hypotheses"].items():
                rows.append({"system": system, "sample_id": str(d["sample_id"]), "hypothesis": hyp,
                             "references": tuple(d["references"]), "source": " ; ".join(d["triples"])})
    texts = pd.DataFrame(rows)
    texts = texts[texts.sample_id.isin(set(ratings.sample_id))]
    return metaeval.Dataset.from_frame(ratings, input="sample_id", rater="worker", human=CRITERIA,
                                       metrics=[], texts=texts, name="webnlg2020")


def study(ds, metrics, humans, cache, figure, title):
    t0 = time.perf_counter()
    res = tm.score(ds, metrics, cache_dir=cache)
    t_score = time.perf_counter() - t0
    scored = res.attach(ds)
    cd = dg.correlation_design(scored, columns=[*humans, *res.columns], method="spearman")
    f = cd.to_frame()
    human_metric = f[(f.kind_1 == "human") & (f.kind_2 == "metric")]
    print(f"\n### {title}: {ds.shape[0]} systems x {ds.shape[1]} inputs; scoring "
          f"{res.n_computed} computed + {res.n_cached} cached pairs in {t_score:.1f} s\n")
    wide = human_metric.pivot_table(index=["column_1", "column_2"], columns="level",
                                    values=["statistic", "significant"], aggfunc="first")
    print("| human | metric | system rho | sig. | sentence rho | sig. |")
    print("|---|---|---|---|---|---|")
    for (h, m), r in wide.iterrows():
        print(f"| {h} | {m} | {r[('statistic', 'system')]:.2f} | "
              f"{'yes' if r[('significant', 'system')] else 'no'} | "
              f"{r[('statistic', 'global')]:.2f} | {'yes' if r[('significant', 'global')] else 'no'} |")
    mm = f[(f.kind_1 == "metric") & (f.kind_2 == "metric")]
    for lv in ("system", "global"):
        s = mm[mm.level == lv].statistic
        print(f"\nmetric-metric {lv}: rho from {s.min():.2f} to {s.max():.2f}")
    print("\n" + "\n".join(sorted(set(f.signature))))
    if figure:
        fig = dg.plot_correlation_design(cd, title=title)
        fig.savefig(figure, dpi=110)
        print(f"figure: {figure}")
    return cd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=".cache/textmetrics")
    ap.add_argument("--figures", default="docs/figures")
    a = ap.parse_args()
    os.makedirs(a.figures, exist_ok=True)
    study(wmt23(), ["bleu", "chrf", "chrf++"], ["human"], a.cache,
          os.path.join(a.figures, "wmt23_correlation_design.png"), "WMT23 en-de")
    study(webnlg(), ["bleu", "chrf++", "ter", "meteor"], CRITERIA, a.cache,
          os.path.join(a.figures, "webnlg2020_correlation_design.png"), "WebNLG 2020")


if __name__ == "__main__":
    main()
