"""Issue 23 item 3: one clustering rule by default (Holm-corrected, unless mt-metrics-eval's exact
rule is asked for) in compare_all, `metaeval compare`, the report and wmt, with the signature saying
what was done and the adjusted p-values that separate the clusters in every view.

Independent references: Holm's adjustment from statsmodels (``multipletests(method="holm")``),
and a slow re-statement of mt-metrics-eval's greedy ``AssignRanks`` walk written here.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval.cli import main
from metaeval.stats.clusters import separating_pvalues, significance_clusters

multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests

METRICS = ["G.EVAL.4.COH", "BARTScore", "BLEU", "CHRF", "ROUGE.1", "BertScore_f1", "METEOR"]


def holm_upper(better):
    """statsmodels' Holm over the upper triangle (the clusters' family)."""
    k = better.shape[0]
    iu = np.triu_indices(k, 1)
    out = np.full_like(better, np.nan)
    out[iu] = multipletests(better[iu], method="holm")[1]
    return out


def slow_walk(P, alpha):
    """mt-metrics-eval AssignRanks walk on metrics already in ranking order, returning the
    ranks and, per metric, the smallest p-value read against the current cluster."""
    k = P.shape[0]
    ranks, reads = [1], [np.nan]
    members = [0]
    for j in range(1, k):
        read = min(P[c, j] for c in members)
        reads.append(read)
        if read <= alpha:
            ranks.append(ranks[-1] + 1)
            members = [j]
        else:
            ranks.append(ranks[-1])
            members.append(j)
    return np.array(ranks), np.array(reads)


@pytest.fixture(scope="module")
def summeval():
    return metaeval.load_dataset("summeval")


@pytest.fixture(scope="module")
def default_all(summeval):
    return metaeval.compare_all(summeval, "coherence", metrics=METRICS, level="system",
                                n_resamples=999, rng=0)


def test_compare_all_default_clusters_on_holm_corrected_pvalues(default_all):
    res = default_all
    assert res.cluster_correction == "holm"
    assert "|clusters:holm|" in res.signature
    ranks, reads = slow_walk(holm_upper(np.asarray(res.better)), res.alpha)
    np.testing.assert_array_equal(res.clusters, ranks)
    p, _ = res.separating()
    np.testing.assert_allclose(p, reads, rtol=0, atol=1e-15, equal_nan=True)


def test_mtme_rule_is_uncorrected_by_default(summeval):
    res = metaeval.compare_all(summeval, "coherence", metrics=METRICS, level="system",
                               n_resamples=999, rng=0, clusters="mtme")
    assert res.cluster_correction == "none"
    assert "|clusters:none:mtme|" in res.signature
    ranks, _ = slow_walk(np.asarray(res.better), res.alpha)
    np.testing.assert_array_equal(res.clusters, ranks)


def test_separating_pvalues_decide_the_clusters_on_random_matrices():
    rng = np.random.default_rng(3)
    for _ in range(300):
        k = int(rng.integers(2, 9))
        P = rng.random((k, k)) * rng.choice([0.1, 1.0])
        P[rng.random((k, k)) < 0.1] = np.nan
        stats = -np.arange(k, dtype=float)  # already in ranking order
        alpha = float(rng.choice([0.01, 0.05, 0.2]))
        ranks = significance_clusters(stats, P, alpha=alpha)
        p, against = separating_pvalues(stats, P, alpha=alpha)
        # the slow walk, NaN read as not significant
        Q = np.where(np.isnan(P), np.inf, P)
        slow_ranks, reads = slow_walk(Q, alpha)
        np.testing.assert_array_equal(ranks, slow_ranks)
        reads = np.where(np.isinf(reads), np.nan, reads)
        np.testing.assert_array_equal(p, reads)
        for j in range(1, k):
            if np.isfinite(p[j]):
                assert (p[j] <= alpha) == (ranks[j] != ranks[j - 1])
                assert P[against[j], j] == p[j]


def test_compare_views_show_the_adjusted_separating_pvalues(summeval, default_all):
    args = ["compare", "summeval", "--human", "coherence", "--metrics", ",".join(METRICS),
            "--level", "system", "--n-resamples", "999", "--seed", "0"]
    ref = holm_upper(np.asarray(default_all.better))
    idx = {m: i for i, m in enumerate(default_all.metrics)}
    _, reads = slow_walk(ref, default_all.alpha)
    # table: the column and each metric's separating p-value, printed to 4 decimals
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    assert "p vs its cluster (holm)" in out.output and "clusters: holm" in out.output
    for m, q in zip(default_all.metrics, reads):
        line = next(ln for ln in out.output.splitlines() if f" {m} " in ln)
        if np.isfinite(q):
            assert f"{q:.4f}" in line, (m, line)
    # CSV: pvalue_cluster of every pair = statsmodels' Holm of the one-sided p-values
    csv = CliRunner().invoke(main, args + ["--format", "csv"])
    fr = pd.read_csv(io.StringIO(csv.output))
    for r in fr.itertuples():
        assert r.pvalue_cluster == pytest.approx(ref[idx[r.metric_a], idx[r.metric_b]], abs=1e-15)
    # JSON: the ranking carries p_separating and separated_from
    js = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).output)
    assert "clusters:holm" in js["signature"]
    got = [r["p_separating"] for r in js["ranking"]]
    np.testing.assert_allclose(np.array(got, dtype=float), reads, atol=1e-15, equal_nan=True)
    assert js["ranking"][0]["separated_from"] is None
    assert {r["metric"] for r in js["ranking"]} == set(METRICS)
    # the mtme rule on request, uncorrected, and the signature says so
    mt = CliRunner().invoke(main, args + ["--clusters", "mtme"])
    assert "clusters: none" in mt.output and "clusters:none:mtme" in mt.output


def test_wmt_tasks_default_to_holm_and_say_so(tmp_path):
    from test_mtme import make_data, write_layout

    from metaeval.report.tables import wmt_table
    from metaeval.wmt import Task, run_tasks

    human, mets = make_data(0)
    write_layout(tmp_path, human, mets)
    seg = metaeval.read_mtme(tmp_path, "wmt99", "en-de", level="seg", refs="refA", names="display")
    tasks = [Task("seg", "mqm", level="system", method="pearson"),
             Task("seg", "mqm", level="system", method="spa")]
    res = run_tasks(tasks, {"seg": seg}, n_resamples=99, n_permutations=49, rng=1)
    raw = run_tasks(tasks, {"seg": seg}, n_resamples=99, n_permutations=49, rng=1, clusters="metaeval")
    for r, u in zip(res.results, raw.results):
        assert "clusters:holm" in r.signature
        iu = np.triu_indices(len(r.metrics), 1)  # the clusters read the upper triangle
        np.testing.assert_allclose(r.better[iu], holm_upper(np.asarray(u.better))[iu], atol=1e-15)
        ranks, _ = slow_walk(np.asarray(r.better), 0.05)
        np.testing.assert_array_equal(r.ranks, ranks)
    assert "clusters:holm" in wmt_table(res).splitlines()[-1]
    mt = run_tasks(tasks, {"seg": seg}, n_resamples=99, n_permutations=49, rng=1, clusters="mtme")
    assert "clusters:none:mtme" in mt.results[0].signature and "clusters:mtme" in mt.results[1].signature
