"""Tests of :mod:`metaeval.ranking`: TREC readers, scoring with ir-measures, the shuffle
perturbation, the cache and binned contexts.

Oracles, each named where it is used:

* ir-measures 0.4.3 called directly (``ir_measures.iter_calc`` /
  ``calc_aggregate`` on the files read by ``ir_measures.read_trec_run`` /
  ``read_trec_qrels``, default provider pipeline);
* hand computations on a crafted two-system, four-query case (written out
  below);
* the real runs in ``../shared/data/ranking``: LastFM recommenders (Zanon et
  al. 2022; HetRec 2011 Last.fm data) and DL-HARD retrieval runs (Mackie et
  al., SIGIR 2021), read through the library's own readers, on a subset of
  queries so the tests stay fast.
"""

from __future__ import annotations

import gzip
import math
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import DataError, ParameterError
from metaeval import ranking as rk
from metaeval.ranking import MissingQueriesWarning, Qrels, Run

ir_measures = pytest.importorskip("ir_measures")

from _shared import SHARED, need  # noqa: E402  (tests/_shared.py: ../shared beside the checkout)

DATA = SHARED / "data" / "ranking"
LASTFM, DLHARD = DATA / "lastfm", DATA / "dl_hard"

# ----------------------------------------------------------------------------- the crafted case
#
# qrels: q1 {d1: 1, d2: 0, d3: 2, d4: 1}; q2 {c: 1, b: 1, a: 0}; q3 {z: 1}
# run A: q1 d1 3.0, d2 2.0, d3 1.0, d5 0.5 (d5 unjudged); q2 c 2.0, a 1.0, b 1.0 (a tie);
#        q4 x 1.0 (unjudged query); no q3.
# run B: as A plus q3 z 1.0.
#
# q1: relevant (rel >= 1) d1, d3, d4 (R = 3); ranking d1 R, d2 N, d3 R, d5 N
#     AP = (1/1 + 2/3) / 3 = 5/9; RR = 1; P@2 = 1/2; Rprec = P@3 = 2/3; R@3 = 2/3
#     nDCG@3: DCG = 1/log2(2) + 0/log2(3) + 2/log2(4) = 2;
#             IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2.5 + 1/log2(3)
#     IPrec@0.0 = 1 (rank 1), IPrec@0.4 = 2/3 (recall 2/3 first reached at rank 3)
# q2: tie a/b at 1.0 broken by doc id descending (trec_eval): c R, b R, a N
#     AP = (1 + 1) / 2 = 1; RR = 1; P@2 = 1; Rprec = P@2 = 1; R@3 = 1; nDCG@3 = 1; IPrec = 1
#     (ascending tie-breaking would give c, a, b: AP 5/6, P@2 1/2)
# q3: A lacks it -> 0 with missing_queries="zero", NaN with "nan"; B ranks z (R = 1) first and
#     alone: all 1 except P@2 = 1/2 (one document retrieved of the cutoff 2).
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2, "d4": 1}, "q2": {"c": 1, "b": 1, "a": 0},
         "q3": {"z": 1}}
RUN_A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d5": 0.5}, "q2": {"c": 2.0, "a": 1.0, "b": 1.0},
         "q4": {"x": 1.0}}
RUN_B = {**RUN_A, "q3": {"z": 1.0}}
NDCG3_Q1 = 2 / (2.5 + 1 / math.log2(3))
HAND = {  # per query q1, q2, q3 for run A (zero rule); B has 1.0 at q3
    "AP": [5 / 9, 1.0, 0.0], "RR": [1.0, 1.0, 0.0], "P@2": [0.5, 1.0, 0.0],
    "Rprec": [2 / 3, 1.0, 0.0], "R@3": [2 / 3, 1.0, 0.0], "nDCG@3": [NDCG3_Q1, 1.0, 0.0],
    "IPrec@0.0": [1.0, 1.0, 0.0], "IPrec@0.4": [2 / 3, 1.0, 0.0],
}


def _crafted():
    return [Run.from_dict(RUN_A, name="A"), Run.from_dict(RUN_B, name="B")], Qrels.from_dict(QRELS)


def _write(path, text, *, gz=False):
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        Path(path).write_text(text)
    return path


def _trec_files(tmp_path):
    """The crafted case as TREC files (run A gzip-compressed under a plain name)."""
    lines_a = [f"{q} Q0 {d} {k + 1} {s} tagA" for q, docs in RUN_A.items()
               for k, (d, s) in enumerate(docs.items())]
    lines_b = [f"{q} Q0 {d} {k + 1} {s} tagB" for q, docs in RUN_B.items()
               for k, (d, s) in enumerate(docs.items())]
    qrels = [f"{q} 0 {d} {r}" for q, docs in QRELS.items() for d, r in docs.items()]
    return (_write(tmp_path / "A.run", "\n".join(lines_a) + "\n", gz=True),
            _write(tmp_path / "B.txt", "\n".join(lines_b) + "\n"),
            _write(tmp_path / "qrels.txt", "\n".join(qrels) + "\n"))


def test_crafted_case_matches_hand_computation(tmp_path):
    path_a, path_b, path_q = _trec_files(tmp_path)
    runs = rk.read_runs([path_a, path_b])
    assert list(runs) == ["A", "B"] and runs["A"].rankings["q2"][0] == ("c", "b", "a")
    with pytest.warns(MissingQueriesWarning, match=r"A: 1 judged queries missing \(scored 0\), "
                                                   r"1 unjudged queries not evaluated"):
        ds = rk.score_runs(runs, rk.read_qrels(path_q), list(HAND))
    assert ds.systems == ("A", "B") and ds.inputs == ("q1", "q2", "q3") and ds.human == ()
    for m, values in HAND.items():
        b_q3 = 0.5 if m == "P@2" else 1.0
        np.testing.assert_allclose(ds.scores(m), [values, values[:2] + [b_q3]], rtol=0,
                                   atol=1e-15, err_msg=m)
    with pytest.warns(MissingQueriesWarning, match=r"scored NaN"):
        nan = rk.score_runs(runs, rk.read_qrels(path_q), ["AP"], missing_queries="nan")
    np.testing.assert_allclose(nan.scores("AP"), [[5 / 9, 1, np.nan], [5 / 9, 1, 1]])
    cov = rk.coverage(runs, rk.read_qrels(path_q))
    assert cov[["run", "n_queries", "n_evaluated", "n_missing", "n_unjudged"]].values.tolist() \
        == [["A", 3, 2, 1, 1], ["B", 4, 3, 0, 1]]


def test_crafted_case_matches_ir_measures_called_directly(tmp_path):
    path_a, path_b, path_q = _trec_files(tmp_path)
    qrels = list(ir_measures.read_trec_qrels(str(path_q)))
    measures = [ir_measures.parse_measure(m) for m in rk.DEFAULT_MEASURES]
    with pytest.warns(MissingQueriesWarning):
        ds = rk.score_runs([path_a, path_b], path_q)
    for k, run in enumerate([RUN_A, RUN_B]):  # ir-measures reads gzip by suffix: give the dicts
        agg = ir_measures.calc_aggregate(measures, qrels, run)
        for m in measures:  # the mean over judged queries is ir-measures' aggregate
            assert ds.scores(str(m))[k].mean() == pytest.approx(agg[m], abs=1e-12), (k, m)


# ----------------------------------------------------------------------------- real data

def _subset_qrels(qrels, n):
    keep = list(qrels.queries)[:n]
    return Qrels.from_dict({q: dict(qrels.judgments[q]) for q in keep}), keep


def _restrict(runs, keep):
    """The runs cut to some queries (the same ranked lists), to keep tests fast."""
    return {n: Run(n, {q: r.rankings[q] for q in keep if q in r.rankings}, source=r.source)
            for n, r in runs.items()}


@pytest.fixture(scope="module")
def dlhard():
    need(DLHARD, "DL-HARD data")
    runs = rk.read_runs(DLHARD / "runs")
    qrels = rk.read_qrels(DLHARD / "qrels.txt")
    return runs, qrels


@pytest.fixture(scope="module")
def lastfm():
    need(LASTFM, "LastFM data")
    runs = rk.read_runs(sorted(LASTFM.glob("*.run.gz")))
    qrels = rk.read_qrels(LASTFM / "qrels.txt")
    return runs, qrels


def _per_query_oracle(measures, qrels: Qrels, path):
    """ir-measures called directly on the raw run file, per (measure, query)."""
    run = list(ir_measures.read_trec_run(str(path)))
    return {(str(m.measure), m.query_id): m.value
            for m in ir_measures.iter_calc(measures, qrels.to_dict(), run)}


def test_real_data_facts(dlhard, lastfm):
    runs, qrels = dlhard
    assert len(runs) == 14 and len(qrels) == 50
    assert sum(len(d) for d in qrels.judgments.values()) == 8544
    cov = rk.coverage(runs, qrels)
    assert (cov["n_evaluated"] == 50).all() and (cov["n_missing"] == 0).all()
    # re-ranker scores tie a lot: trec_eval's order differs from the files' rank column
    assert cov.set_index("run")["n_reordered"].to_dict()["bm25+rm3"] == 0
    assert (cov["n_reordered"] > 40).sum() == 12
    runs, qrels = lastfm
    assert list(runs) == ["bprmf", "ease", "mostpop", "ncf", "userknn", "wikidata_page_rank8020"]
    assert len(qrels) == 1845
    cov = rk.coverage(runs, qrels).set_index("run")
    assert cov["n_unjudged"].to_dict() == {"bprmf": 30, "ease": 0, "mostpop": 30, "ncf": 0,
                                           "userknn": 30, "wikidata_page_rank8020": 0}
    assert (cov["n_missing"] == 0).all()
    assert {len(d) for r in runs.values() for d, _ in r.rankings.values()} == {20}


def test_dlhard_per_query_values_equal_ir_measures(dlhard):
    runs, qrels = dlhard
    sub, keep = _subset_qrels(qrels, 6)
    measures = [ir_measures.parse_measure(m) for m in rk.DEFAULT_MEASURES]
    with pytest.warns(MissingQueriesWarning, match="44 unjudged queries not evaluated"):
        ds = rk.score_runs(runs, sub)
    assert ds.shape == (14, 6) and ds.metrics == rk.DEFAULT_MEASURES
    for k, name in enumerate(ds.systems):
        oracle = _per_query_oracle(measures, sub, runs[name].source)
        for m in measures:
            want = [oracle[str(m), q] for q in keep]
            np.testing.assert_allclose(ds.scores(str(m))[k], want, rtol=0, atol=1e-12,
                                       err_msg=f"{name} {m}")


def test_lastfm_per_query_values_equal_ir_measures(lastfm):
    runs, qrels = lastfm
    runs = {n: runs[n] for n in ("bprmf", "mostpop", "userknn")}  # mostpop: ties everywhere
    sub, keep = _subset_qrels(qrels, 60)
    measures = [ir_measures.parse_measure(m) for m in ("AP", "RR", "P@5", "R@10", "nDCG@20",
                                                         "IPrec@0.2", "Rprec")]
    with pytest.warns(MissingQueriesWarning):
        ds = rk.score_runs(runs, sub, [str(m) for m in measures])
    for k, name in enumerate(ds.systems):
        oracle = _per_query_oracle(measures, sub, runs[name].source)
        for m in measures:
            np.testing.assert_allclose(ds.scores(str(m))[k], [oracle[str(m), q] for q in keep],
                                       rtol=0, atol=1e-12, err_msg=f"{name} {m}")


def test_relevance_threshold_applies_to_binary_measures_only(dlhard):
    runs, qrels = dlhard
    sub, keep = _subset_qrels(qrels, 5)
    some = {n: runs[n] for n in ("bm25", "bm25+rm3+t5-mp(zs)")}
    names = ["AP", "P@10", "R@10", "RR", "IPrec@0.1", "nDCG@10"]
    with pytest.warns(MissingQueriesWarning):
        ds = rk.score_runs(some, sub, names, rel=2)
    assert ds.metrics == ("AP(rel=2)", "P(rel=2)@10", "R(rel=2)@10", "RR(rel=2)",
                          "IPrec(rel=2)@0.1", "nDCG@10")
    measures = [ir_measures.parse_measure(m) for m in ds.metrics]
    for k, name in enumerate(ds.systems):
        oracle = _per_query_oracle(measures, sub, some[name].source)
        for m in measures:
            np.testing.assert_allclose(ds.scores(str(m))[k], [oracle[str(m), q] for q in keep],
                                       atol=1e-12)
    with pytest.raises(ParameterError, match=r"measure 'nDGC@10' is not an ir-measures measure"):
        rk.score_runs(some, sub, ["nDGC@10"])


def test_tie_order_is_trec_evals(tmp_path):
    # all scores tie: trec_eval ranks by doc id descending ("9" > "10" > "1" as strings)
    path = _write(tmp_path / "t.run", "q 0 1 1 0.5 t\nq 0 10 2 0.5 t\nq 0 9 3 0.5 t\n")
    run = rk.read_run(path)
    assert run.rankings["q"][0] == ("9", "10", "1") and run.n_reordered == 1
    for rel_doc, rr in (("9", 1.0), ("10", 0.5), ("1", 1 / 3)):
        qrels = {"q": {rel_doc: 1}}
        ds = rk.score_runs([run], qrels, ["RR"])
        direct = ir_measures.calc_aggregate([ir_measures.RR], qrels,
                                            list(ir_measures.read_trec_run(str(path))))
        assert ds.scores("RR")[0, 0] == rr == direct[ir_measures.RR]


# ----------------------------------------------------------------------------- cache


class _CountingProvider:
    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def evaluator(self, measures, qrels):
        self.calls += 1
        return self.inner.evaluator(measures, qrels)

    def supports(self, measure):
        return self.inner.supports(measure)


def test_rerun_and_repeated_perturbation_reuse_cached_scores(lastfm, tmp_path, monkeypatch):
    runs, qrels = lastfm
    sub, keep = _subset_qrels(qrels, 40)
    runs = _restrict({n: runs[n] for n in ("ease", "ncf")}, keep)
    real = rk._score._provider
    counter = {}

    def counting(name):
        counter["p"] = _CountingProvider(real(name))
        return counter["p"]

    monkeypatch.setattr(rk._score, "_provider", counting)
    measures = ["AP", "nDCG@10", "P@5"]
    first = rk.score_runs(runs, sub, measures, cache_dir=tmp_path)
    assert counter["p"].calls == 2  # one evaluator per run
    again = rk.score_runs(runs, sub, measures, cache_dir=tmp_path)
    assert counter["p"].calls == 0
    for m in measures:
        np.testing.assert_array_equal(first.scores(m), again.scores(m))
    # a new measure computes only that measure
    more = rk.score_runs(runs, sub, measures + ["RR"], cache_dir=tmp_path)
    assert counter["p"].calls == 2 and more.metrics[-1] == "RR"
    # the perturbed runs: seeded, so a rerun with the same seed is cached; another seed is not
    shuffled = rk.score_runs(rk.shuffle_runs(runs, rng=7), sub, measures, cache_dir=tmp_path)
    assert counter["p"].calls == 2
    same = rk.score_runs(rk.shuffle_runs(runs, rng=7), sub, measures, cache_dir=tmp_path)
    assert counter["p"].calls == 0
    np.testing.assert_array_equal(shuffled.scores("AP"), same.scores("AP"))
    rk.score_runs(rk.shuffle_runs(runs, rng=8), sub, measures, cache_dir=tmp_path)
    assert counter["p"].calls == 2
    # cached values equal a fresh computation without cache
    fresh = rk.score_runs(rk.shuffle_runs(runs, rng=7), sub, measures)
    np.testing.assert_array_equal(fresh.scores("nDCG@10"), same.scores("nDCG@10"))


# ----------------------------------------------------------------------------- shuffle


def test_shuffle_is_seeded_per_run_and_query_and_never_the_identity(lastfm):
    runs, qrels = lastfm
    runs = _restrict({n: runs[n] for n in ("ease", "mostpop", "ncf")}, list(qrels.queries)[:300])
    a = rk.shuffle_runs(runs, rng=3)
    b = rk.shuffle_runs(dict(reversed(list(runs.items()))), rng=3)  # other order
    c = rk.shuffle_run(runs["ncf"], rng=3)
    assert a["ncf"].rankings["2"][0] == b["ncf"].rankings["2"][0] == c.rankings["2"][0]
    assert all(a[n].rankings[q][0] == b[n].rankings[q][0] for n in runs for q in runs[n].queries)
    d = rk.shuffle_runs(runs, rng=4)
    changed = sum(a[n].rankings[q][0] != d[n].rankings[q][0] for n in runs for q in runs[n].queries)
    assert changed > 0.99 * sum(len(r) for r in runs.values())
    for n, r in runs.items():
        for q, (docs, _) in r.rankings.items():
            new, scores = a[n].rankings[q]
            assert new != docs and sorted(new) == sorted(docs)
            assert np.all(np.diff(scores) < 0)  # rank-based scores: the order is exact
    assert a["ncf"].perturbation == "perturb:shuffle|seed:3|depth:all|metaeval:" + \
        a["ncf"].perturbation.rsplit(":", 1)[1]
    with pytest.raises(ParameterError, match="already perturbed"):
        rk.shuffle_runs(a, rng=0)
    with pytest.raises(ParameterError, match="depth=1 must be None"):
        rk.shuffle_runs(runs, rng=0, depth=1)


def test_shuffle_depth_keeps_the_tail_and_the_top_set(dlhard):
    runs, qrels = dlhard
    run = runs["bm25"]
    out = rk.shuffle_run(run, rng=0, depth=10)
    for q, (docs, _) in run.rankings.items():
        new = out.rankings[q][0]
        assert new[10:] == docs[10:] and set(new[:10]) == set(docs[:10]) and new != docs
    sub, _ = _subset_qrels(qrels, 10)
    with pytest.warns(MissingQueriesWarning):
        orig = rk.score_runs([run], sub, ["P@5", "P@10", "R@10", "AP"])
    with pytest.warns(MissingQueriesWarning):
        pert = rk.score_runs([out], sub, ["P@5", "P@10", "R@10", "AP"])
    # set-based measures at the shuffle depth are blind to it; order-based ones are not
    np.testing.assert_array_equal(orig.scores("P@10"), pert.scores("P@10"))
    np.testing.assert_array_equal(orig.scores("R@10"), pert.scores("R@10"))
    assert (orig.scores("AP") != pert.scores("AP")).any()
    assert "perturbation: perturb:shuffle|seed:0|depth:10" in pert.provenance


def test_whole_list_shuffle_leaves_measures_at_the_list_length_unchanged(lastfm):
    runs, qrels = lastfm
    sub, keep = _subset_qrels(qrels, 80)
    runs = _restrict(runs, keep)
    names = ["P@20", "R@30", "AP", "nDCG@10"]
    orig = rk.score_runs(runs, sub, names)
    pert = rk.score_runs(rk.shuffle_runs(runs, rng=1), sub, names)
    # LastFM lists have 20 items: a whole-list shuffle cannot change P@20 or R@30
    np.testing.assert_array_equal(orig.scores("P@20"), pert.scores("P@20"))
    np.testing.assert_array_equal(orig.scores("R@30"), pert.scores("R@30"))
    o, p = orig.scores("AP"), pert.scores("AP")
    assert (o > p).mean() > 0.3 and (o != p).mean() > 0.4


def test_perturbed_cells_without_a_list_are_nan():
    runs, qrels = _crafted()
    short = Run.from_dict({"q1": {"d1": 1.0}, "q2": {"c": 2.0, "b": 1.0}}, name="S")
    out = rk.shuffle_runs([short], rng=0)["S"]
    assert dict(out.skipped) == {"q1": rk.TOO_SHORT}
    assert out.rankings["q2"][0] == ("b", "c")  # the only other order of two
    with pytest.warns(MissingQueriesWarning, match=r"S: 1 judged queries missing \(scored NaN\)"):
        ds = rk.score_runs([out], qrels, ["AP"])
    # q1 skipped, q3 absent: NaN (nothing was perturbed); q2: b R, c R -> AP 1
    np.testing.assert_array_equal(ds.scores("AP"), [[np.nan, 1.0, np.nan]])
    cov = rk.coverage([out], qrels)
    assert cov["n_skipped"].tolist() == [1]
    with pytest.raises(ParameterError, match="mix perturbations"):
        rk.score_runs([runs[0], rk.shuffle_run(runs[1], rng=0)], qrels)


# ----------------------------------------------------------------------------- contexts


def test_contexts_from_query_annotations_and_activity_bands(dlhard, lastfm):
    runs, qrels = dlhard
    ann = pd.read_csv(DLHARD / "query_annotations.tsv", sep="\t", dtype=str)
    assert len(ann) == 400  # annotations of every TREC DL topic: unjudged ones are dropped
    ctx = ann.rename(columns={"topic_id": "input"})[["input", "query_type", "domain"]]
    ds = rk.score_runs({"bm25": runs["bm25"]}, qrels, ["AP"], contexts=ctx)
    assert ds.context_names == ("system", "input", "query_type", "domain")
    want = ann.set_index("topic_id").loc[list(ds.inputs), "query_type"].tolist()
    assert ds.context("query_type")[0].tolist() == want
    assert pd.Series(want).value_counts().to_dict() == {
        "description": 20, "list": 17, "reason": 4, "entity": 3, "quantity": 3,
        "verification": 2, "attribute": 1}

    runs, qrels = lastfm
    stats = pd.read_csv(LASTFM / "user_stats.csv", dtype={"user": str})
    bands = rk.quantile_bands(stats.set_index("user")["n_train"], 3, name="activity")
    assert len(bands) == 1875
    sub, keep = _subset_qrels(qrels, 50)
    with pytest.warns(MissingQueriesWarning):
        ds = rk.score_runs(runs, sub, ["AP"], contexts=bands)
    labels = bands.set_index("input").loc[keep, "activity"].tolist()
    assert ds.context("activity")[3].tolist() == labels


def test_quantile_bands_by_hand():
    # tertile edges of 1..6 (linear interpolation): 1 + 5/3 = 2.667 and 1 + 10/3 = 4.333
    out = rk.quantile_bands(pd.Series([6, 1, 2, 3, 4, 5], index=list("fabcde")), 3)
    assert out.columns.tolist() == ["input", "band"]
    assert dict(zip(out["input"], out["band"])) == {
        "a": "1: [1, 2.67]", "b": "1: [1, 2.67]", "c": "2: (2.67, 4.33]",
        "d": "2: (2.67, 4.33]", "e": "3: (4.33, 6]", "f": "3: (4.33, 6]"}
    # ties never straddle an edge: quartile edges of 1, 5, 5, 5, 5 are 1, 5, 5, 5, 5, so the
    # repeated edges merge into one band
    tied = rk.quantile_bands({"u1": 1, "u2": 5, "u3": 5, "u4": 5, "u5": 5}, 4)
    assert tied["band"].tolist() == ["1: [1, 5]"] * 5
    with pytest.raises(DataError, match="not finite numbers"):
        rk.quantile_bands({"a": 1, "b": float("nan"), "c": 3})
    with pytest.raises(ParameterError, match="n_bands=1 must be an int >= 2"):
        rk.quantile_bands({"a": 1, "b": 2}, 1)


# ----------------------------------------------------------------------------- readers


@pytest.mark.parametrize("text, message", [
    ("q1 Q0 d1 1 0.5\n", r"x\.run line 1: 5 field\(s\); a TREC run line has 6"),
    ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 one 0.4 t\n",
     r"x\.run line 2, field 4 \(rank\): 'one' is not an integer"),
    ("q1 Q0 d1 1 high t\n", r"x\.run line 1, field 5 \(score\): 'high' is not a number"),
    ("q1 Q0 d1 1 nan t\n", r"x\.run line 1, field 5 \(score\): 'nan' is not finite"),
    ("q1 Q0 d1 1 0.5 t\n\nq1 Q0 d1 2 0.4 t\n",
     (r"x\.run line 3, field 3 \(document id\): 'd1' is listed twice for query 'q1' \(first "
      r"at line 1\)")),
    ("\n\n", r"x\.run has no run lines"),
])
def test_run_reader_errors_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        rk.read_run(_write(tmp_path / "x.run", text))


@pytest.mark.parametrize("text, message", [
    ("q1 0 d1\n", r"q\.txt line 1: 3 field\(s\); a TREC qrels line has 4"),
    ("q1 Q0 d1 1 0.5 t\n", r"looks like a run line"),
    ("q1 0 d1 1\nq1 0 d2 yes\n", r"q\.txt line 2, field 4 \(relevance\): 'yes' is not an integer"),
    ("q1 0 d1 1\nq1 0 d1 2\n",
     (r"q\.txt line 2, field 3 \(document id\): 'd1' is judged twice for query 'q1' \(first "
      r"at line 1\)")),
])
def test_qrels_reader_errors_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        rk.read_qrels(_write(tmp_path / "q.txt", text))


def test_gzip_is_detected_from_content_and_names_from_files(tmp_path):
    path = _write(tmp_path / "plain_name.run", "q1 Q0 d1 1 0.5 t\n", gz=True)
    run = rk.read_run(path)
    assert run.name == "plain_name" and run.queries == ("q1",) and run.tags == ("t",)
    assert rk.read_run(path, name="other").name == "other"
    frame = run.to_frame()
    assert frame.columns.tolist() == ["query_id", "doc_id", "rank", "score"]
    again = Run.from_frame(frame, name="again")
    assert again.rankings["q1"][0] == run.rankings["q1"][0]
    assert again.fingerprint() == run.fingerprint()
    with pytest.raises(DataError, match=r"two runs are called 'plain_name'"):
        rk.read_runs([path, path])


def test_runs_and_qrels_pickle_for_parallel_work():
    runs, qrels = _crafted()
    pert = rk.shuffle_run(runs[0], rng=0)
    for obj in (runs[0], pert, qrels):
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is type(obj) and repr(back) == repr(obj)
    back = pickle.loads(pickle.dumps(pert))
    assert back.rankings["q1"][0] == pert.rankings["q1"][0] and back.skipped == pert.skipped
    assert not back.rankings["q1"][1].flags.writeable
    assert pickle.loads(pickle.dumps(qrels)).to_dict() == QRELS


def test_context_ids_read_as_numbers_still_match():
    """Regression (review): query ids read as floats (101.0) were dropped silently, leaving
    every context label unknown; now integer-valued floats match, and no match at all is an
    error."""
    import pandas as pd

    run = rk.Run.from_dict({"101": {"d1": 2.0, "d2": 1.0}, "102": {"d1": 1.0, "d3": 0.5}}, name="r")
    qrels = rk.Qrels.from_dict({"101": {"d1": 1}, "102": {"d3": 1}})
    ctx = pd.DataFrame({"query_id": [101.0, 102.0], "qtype": ["a", "b"]})
    ds = rk.score_runs([run], qrels, ["AP"], contexts=ctx)
    assert ds.context("qtype").tolist() == [["a", "b"]]
    with pytest.raises(DataError, match="no row of contexts matches"):
        rk.score_runs([run], qrels, ["AP"], contexts=ctx.assign(query_id=[7.5, 8.5]))


def test_unsupported_measure_is_a_clear_error():
    run = rk.Run.from_dict({"101": {"d1": 2.0}}, name="r")
    qrels = rk.Qrels.from_dict({"101": {"d1": 1}})
    with pytest.raises(ParameterError, match=r"provider 'pytrec_eval' cannot compute Judged@2"):
        rk.score_runs([run], qrels, ["AP", "Judged@2"])
