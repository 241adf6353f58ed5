"""Discriminative power and ranking consistency (seed paper 000, Algorithms 2-3).

Expected values come from: the slow pure-Python references in
tests/reference.py (Perm-Both p-values from explicit coins, Algorithm 3 with
given splits), metaeval.compare (itself tested against references and
nlpstats) and known answers (identical metrics give p = 1; a metric equal to
the human scores against noise gives the smallest possible p-value)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import Dataset
from metaeval.stats.pairtest import pair_generator as _pair_generator
from metaeval.errors import DataError, ParameterError, UndefinedStatisticWarning
from metaeval.measures import PAPER_MEASURES, check_measures, half_splits
from metaeval.stats import resampling as rs

import reference as ref


def _dataset(seed=0, N=5, M=8, K=3, nan=False, ties=False):
    g = np.random.default_rng(seed)
    z = g.normal(size=(N, M))
    metrics = {f"m{k}": z * (k % 2) + g.normal(size=(N, M)) * (k + 1) for k in range(K)}
    if ties:
        z = np.round(z)
        metrics = {k: np.round(v) for k, v in metrics.items()}
    if nan:
        metrics["m0"][1, 2] = np.nan
        z[0, 3] = np.nan
    return Dataset.from_arrays({"human": z, **metrics}, human=["human"])


def _coins(seed, a, b, B, N, M):
    ss, _ = rs.seed_sequence(seed)
    raw = rs.fair_bytes(_pair_generator(ss, a, b), B * N * M)
    return np.unpackbits(raw)[: B * N * M].reshape(B, N, M).astype(bool).tolist()


@pytest.mark.parametrize("nan,ties", [(False, False), (True, False), (False, True)])
def test_dp_pvalues_match_slow_reference(nan, ties):
    ds = _dataset(nan=nan, ties=ties)
    B = 40
    measures = [(lv, m) for lv in ("system", "input", "item", "global") for m in ("pearson", "spearman", "kendall_b")]
    dp = metaeval.discriminative_power(ds, "human", measures=measures, n_resamples=B, rng=11)
    z = ds.scores("human")
    for p, (a, b) in enumerate(dp.pairs):
        coins = _coins(11, a, b, B, *z.shape)
        for k, (lv, m) in enumerate(measures):
            want = ref.perm_both_pvalue(ds.scores(a), ds.scores(b), z, lv, m, coins)
            assert dp.pvalues[k, p] == pytest.approx(want, abs=1e-12), (a, b, lv, m)
    # DP is the mean over the K(K-1)/2 distinct pairs (no self-pairs)
    assert dp.pvalues.shape == (12, 3)
    np.testing.assert_allclose(dp.dp, dp.pvalues.mean(axis=1))


def test_dp_equals_compare_for_every_measure_and_test():
    ds = metaeval.load_dataset("summeval")
    metrics = ["ROUGE.1", "BertScore_f1", "BLEU"]
    for test in ("perm-both", "williams", "perm-inputs"):
        measures = [("system", "pearson"), ("input", "kendall_b"), ("global", "spearman")]
        dp = metaeval.discriminative_power(
            ds, "coherence", metrics=metrics, measures=measures, test=test, n_resamples=99, rng=3
        )
        for k, (lv, m) in enumerate(measures):
            for p, (a, b) in enumerate(dp.pairs):
                c = metaeval.compare(
                    ds, "coherence", a, b, level=lv, method=m, test=test, n_resamples=99, rng=3
                )
                assert dp.pvalues[k, p] == c.pvalue
                assert dp.delta[k, p] == pytest.approx(c.statistic, abs=1e-15)


def test_dp_known_answers():
    g = np.random.default_rng(4)
    z = g.normal(size=(6, 30))
    metrics = {"copy": z.copy(), "copy2": z.copy(), "noise": g.normal(size=(6, 30))}
    ds = Dataset.from_arrays({"h": z, **metrics}, human=["h"])
    dp = metaeval.discriminative_power(ds, "h", measures=["global:pearson", "item:kendall_b"], n_resamples=199, rng=0)
    pairs = list(dp.pairs)
    # identical metrics: delta 0 and every resample 0 -> p = 1 exactly
    assert dp.pvalues[:, pairs.index(("copy", "copy2"))].tolist() == [1.0, 1.0]
    # perfect metric against noise: no resample reaches the difference -> 1/(B+1)
    assert dp.pvalues[:, pairs.index(("copy", "noise"))].tolist() == [1 / 200, 1 / 200]
    np.testing.assert_allclose(dp.dp, (1 + 2 / 200) / 3)


def test_dp_frames_and_ranks():
    ds = _dataset(K=4)
    dp = metaeval.discriminative_power(ds, "human", n_resamples=20, rng=0)
    f = dp.to_frame()
    assert list(f.columns) == ["level", "method", "dp", "rank", "n_pairs", "n_nan", "signature"]
    assert len(f) == 12 and (f.n_pairs == 6).all()
    assert [tuple(x) for x in f[["level", "method"]].values] == list(PAPER_MEASURES)
    # rank 1 = lowest DP; ties share the smaller rank
    for i in range(12):
        assert f["rank"][i] == 1 + (f.dp < f.dp[i]).sum()
    assert "level:input|method:spearman" in f.signature[4]
    pf = dp.pvalue_frame()
    assert len(pf) == 12 * 6
    cf = dp.curve_frame()
    for (lv, m), grp in cf.groupby(["level", "method"], sort=False):
        assert (np.diff(grp.pvalue.to_numpy()) <= 0).all()  # descending
        assert grp.fraction.iloc[-1] == 1.0
    d = dp.to_dict()
    assert d["measures"][0] == "system:pearson" and len(d["pvalues"]) == 12


def test_dp_seed_determinism_across_workers_and_checkpoint(tmp_path):
    ds = _dataset(K=4, M=10)
    kw = dict(measures=["input:spearman", "global:kendall_b"], n_resamples=30, rng=5)
    one = metaeval.discriminative_power(ds, "human", **kw)
    two = metaeval.discriminative_power(ds, "human", n_jobs=2, **kw)
    np.testing.assert_array_equal(one.pvalues, two.pvalues)
    # a subset of metrics gives the same p-values for the shared pairs
    sub = metaeval.discriminative_power(ds, "human", metrics=["m1", "m3"], **kw)
    np.testing.assert_array_equal(sub.pvalues[:, 0], one.pvalues[:, list(one.pairs).index(("m1", "m3"))])

    # interrupted run: the progress callback raises after 2 pairs
    calls = []

    def boom(k):
        calls.append(k)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        metaeval.discriminative_power(ds, "human", checkpoint=tmp_path / "ck", progress=boom, **kw)
    done = len(list((tmp_path / "ck").glob("*.npz")))
    assert done == 2
    resumed = metaeval.discriminative_power(ds, "human", checkpoint=tmp_path / "ck", **kw)
    np.testing.assert_array_equal(resumed.pvalues, one.pvalues)
    # without a seed a resumed run could not reproduce the draws
    with pytest.raises(ParameterError, match="explicit seed"):
        metaeval.discriminative_power(ds, "human", checkpoint=tmp_path / "ck2", **{**kw, "rng": None})
    # other arguments in the same folder are refused
    with pytest.raises(ParameterError, match="other arguments"):
        metaeval.discriminative_power(
            ds, "human", checkpoint=tmp_path / "ck", **{**kw, "n_resamples": 31}
        )


def test_dp_on_dask_equals_local():
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster

    ds = _dataset(K=3)
    kw = dict(measures=["item:pearson", "system:kendall_b"], n_resamples=20, rng=2)
    local = metaeval.discriminative_power(ds, "human", **kw)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl, Client(cl) as client:
        remote = metaeval.discriminative_power(ds, "human", dask=client, **kw)
    np.testing.assert_array_equal(local.pvalues, remote.pvalues)


def test_dp_validation():
    ds = _dataset()
    with pytest.raises(ParameterError, match="at least 2 metrics"):
        metaeval.discriminative_power(ds, "human", metrics=["m0"])
    with pytest.raises(ParameterError, match="level:method"):
        metaeval.discriminative_power(ds, "human", measures=["input-pearson"])
    with pytest.raises(ParameterError, match="system-level only"):
        metaeval.discriminative_power(ds, "human", measures=["input:pairwise_accuracy"])
    with pytest.raises(ParameterError, match="williams"):
        metaeval.discriminative_power(ds, "human", measures=["input:acc_23"], test="williams")
    with pytest.raises(ParameterError, match="test="):
        metaeval.discriminative_power(ds, "human", test="perm")
    with pytest.raises(ParameterError, match="either measures"):
        metaeval.discriminative_power(ds, "human", measures=["input:pearson"], levels=["input"])
    with pytest.raises(ParameterError, match="duplicates"):
        check_measures(["input:pearson", ("input", "pearson")])
    with pytest.raises(ParameterError, match="sys"):
        check_measures(["sys:pearson"])
    with pytest.raises(DataError, match="human"):
        metaeval.discriminative_power(ds, "m0")


def test_dp_undefined_pairs_are_counted_and_warned():
    g = np.random.default_rng(0)
    z = g.normal(size=(4, 6))
    ds = Dataset.from_arrays({"h": z, "const": np.ones((4, 6)), "a": g.normal(size=(4, 6)), "b": g.normal(size=(4, 6))}, human=["h"])
    with pytest.warns(UndefinedStatisticWarning, match="global:pearson \\(2\\)"):
        dp = metaeval.discriminative_power(ds, "h", measures=["global:pearson"], n_resamples=10, rng=0)
    assert dp.n_nan.tolist() == [2]
    assert dp.dp[0] == dp.pvalues[0, list(dp.pairs).index(("a", "b"))]


# --------------------------------------------------------------------------
# ranking consistency


def test_half_splits_are_partitions():
    d1, d2 = half_splits(np.random.default_rng(0), 50, 9)
    assert d1.shape == (50, 4) and d2.shape == (50, 5)
    for a, b in zip(d1, d2):
        assert sorted([*a, *b]) == list(range(9))


@pytest.mark.parametrize("nan", [False, True])
def test_rc_matches_slow_reference(nan):
    ds = _dataset(seed=2, N=5, M=9, K=4, nan=nan)
    T = 12
    measures = [("system", "pearson"), ("input", "spearman"), ("item", "kendall_b"), ("global", "pearson")]
    rc = metaeval.ranking_consistency(ds, "human", measures=measures, n_splits=T, rng=8)
    ss, _ = rs.seed_sequence(8)
    d1, d2 = half_splits(rs.named_generator(ss, "ranking-consistency", "splits"), T, 9)
    splits = [(list(a), list(b)) for a, b in zip(d1, d2)]
    ms = [ds.scores(m) for m in ds.metrics]
    for k, (lv, m) in enumerate(measures):
        # the engine's convention: statistics equal to 12 decimals are ties
        want = ref.ranking_consistency(ms, ds.scores("human"), lv, m, splits, decimals=12)
        np.testing.assert_allclose(rc.taus[k], want, atol=1e-12, equal_nan=True)
        w = np.array(want)
        w = w[np.isfinite(w)]
        assert rc.rc[k] == pytest.approx(w.mean(), abs=1e-12)
        assert rc.se[k] == pytest.approx(w.std(ddof=1) / np.sqrt(w.size), abs=1e-12)


def test_rc_known_answers():
    g = np.random.default_rng(1)
    z = g.normal(size=(8, 60))
    # correlations far apart: the same order on every half -> tau = 1
    stable = {f"s{k}": z + s * g.normal(size=z.shape) for k, s in enumerate((0.01, 0.5, 3.0, 30.0))}
    ds = Dataset.from_arrays({"h": z, **stable}, human=["h"])
    rc = metaeval.ranking_consistency(ds, "h", measures=["global:pearson", "item:pearson"], n_splits=100, rng=0)
    assert rc.rc.tolist() == [1.0, 1.0]
    # identical metrics: the rankings are all ties, tau-b is undefined on
    # every split; counted and warned, RC NaN
    same = {f"c{k}": z.copy() for k in range(3)}
    ds = Dataset.from_arrays({"h": z, **same}, human=["h"])
    with pytest.warns(UndefinedStatisticWarning, match="global:pearson \\(10\\)"):
        rc = metaeval.ranking_consistency(ds, "h", measures=["global:pearson"], n_splits=10, rng=0)
    assert rc.n_nan.tolist() == [10] and np.isnan(rc.rc[0])


def test_rc_determinism_and_checkpoint(tmp_path):
    ds = _dataset(K=4, M=10)
    kw = dict(measures=["input:pearson", "system:spearman"], n_splits=20, rng=4)
    one = metaeval.ranking_consistency(ds, "human", **kw)
    two = metaeval.ranking_consistency(ds, "human", n_jobs=2, **kw)
    np.testing.assert_array_equal(one.taus, two.taus)
    calls = []

    def boom(k):
        calls.append(k)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        metaeval.ranking_consistency(ds, "human", checkpoint=tmp_path, progress=boom, **kw)
    again = metaeval.ranking_consistency(ds, "human", checkpoint=tmp_path, **kw)
    np.testing.assert_array_equal(again.taus, one.taus)
    f = one.to_frame()
    assert list(f.columns) == ["level", "method", "rc", "se", "rank", "n_splits", "n_nan", "signature"]
    assert "splits:20" in f.signature[0]


def test_rc_validation():
    ds = _dataset(K=3)
    with pytest.raises(ParameterError, match="at least 3 metrics"):
        metaeval.ranking_consistency(ds, "human", metrics=["m0", "m1"])
    with pytest.raises(ParameterError, match="n_splits"):
        metaeval.ranking_consistency(ds, "human", n_splits=0)
    small = Dataset.from_arrays({"h": np.ones((3, 3)), **{f"m{k}": np.ones((3, 3)) for k in range(3)}}, human=["h"])
    with pytest.raises(ParameterError, match="at least 4"):
        metaeval.ranking_consistency(small, "h")


def test_dp_system_level_equals_compare_with_discrete_metrics():
    # regression: with Likert-like metrics, near-tied system means must be
    # summed in the same order by the Perm-Both kernel and the generic level
    # code (a left-to-right sum of the sorted row), or system-level Spearman
    # and Kendall p-values drift from compare()'s
    g = np.random.default_rng(3)
    z = g.integers(1, 6, (6, 20)).astype(float)
    ms = {f"m{k}": np.clip(z + g.integers(-2, 3, z.shape), 1, 5) for k in range(3)}
    ds = Dataset.from_arrays({"h": z, **ms}, human=["h"])
    measures = ["system:spearman", "system:kendall_b", "system:pearson"]
    dp = metaeval.discriminative_power(ds, "h", measures=measures, n_resamples=300, rng=3)
    for k, m in enumerate(measures):
        lv, meth = m.split(":")
        for p, (a, b) in enumerate(dp.pairs):
            c = metaeval.compare(ds, "h", a, b, level=lv, method=meth, n_resamples=300, rng=3)
            np.testing.assert_array_equal(dp.pvalues[k, p], c.pvalue)


def test_checkpoint_object_for_other_arguments_is_refused(tmp_path):
    from metaeval._parallel import Checkpoint

    ds = _dataset(K=3)
    ck = Checkpoint(tmp_path, {"anything": 1})
    with pytest.raises(ParameterError, match="other arguments"):
        metaeval.discriminative_power(ds, "human", measures=["global:pearson"], n_resamples=10,
                                      rng=1, checkpoint=ck)


def test_dp_perm_both_uses_the_groups_where_both_are_defined_like_compare():
    # issue 18.3 in discriminative power: metric a is constant on half the
    # inputs; DP's Perm-Both p-value and delta must equal compare()'s (which
    # averages both metrics over the common groups, checked against a slow
    # reference in tests/test_compare.py), for the fast kernels (pearson,
    # spearman, kendall_b) and the generic path (kendall_c)
    g = np.random.default_rng(0)
    N, M = 6, 8
    h = g.normal(size=(N, M))
    a = h + 0.3 * g.normal(size=(N, M))
    a[:, M // 2:] = 1.0
    b = g.normal(size=(N, M))
    b[:, M // 2:] = h[:, M // 2:] + 0.3 * g.normal(size=(N, M // 2))
    c = h + g.normal(size=(N, M))
    ds = Dataset.from_arrays({"human": h, "a": a, "b": b, "c": c}, human="human")
    measures = [("input", m) for m in ("pearson", "spearman", "kendall_b", "kendall_c")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp = metaeval.discriminative_power(ds, "human", measures=measures, n_resamples=99,
                                           rng=4)
        for k, (lv, m) in enumerate(measures):
            for p, (x, y) in enumerate(dp.pairs):
                cmp = metaeval.compare(ds, "human", x, y, level=lv, method=m, n_resamples=99,
                                       rng=4)
                assert dp.pvalues[k, p] == cmp.pvalue, (m, x, y)
                assert dp.delta[k, p] == pytest.approx(cmp.statistic, abs=1e-15)
