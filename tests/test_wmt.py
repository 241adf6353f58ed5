"""metaeval.wmt: soft pairwise accuracy, WMT task sets and aggregation.

Oracles: mt-metrics-eval (github.com/google-research/mt-metrics-eval, commit
68a481a) pce.py (compute_pairwise_p_values, compute_one_minus_pce), stats.py
(Correlation.PairwiseConfidenceError, PermutationSigDiff), read from
``../shared/anchors``; slow references written here; exact enumeration.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import metaeval
from metaeval.errors import DataError, MissingCellsWarning, ParameterError
from metaeval.stats.spa import pairwise_pvalues, sign_draws, spa_from_pvalues, swapped_spa
from metaeval.wmt import compare_spa, soft_pairwise_accuracy

from _mtme_anchor import mtme


def _datasets(seed=0):
    """Random and adversarial (ties, constant and identical systems, N=2) data."""
    rng = np.random.default_rng(seed)
    out = []
    N, M = 6, 40
    h = rng.standard_normal((N, M))
    out.append((h, [h + rng.standard_normal((N, M)), rng.standard_normal((N, M))]))
    hi = rng.integers(0, 3, (N, M)).astype(float)  # heavy ties
    xi = rng.integers(0, 2, (N, M)).astype(float)
    xi[2] = xi[1]  # identical systems
    xi[4] = 1.0  # constant system
    out.append((hi, [xi, -hi]))
    out.append((rng.standard_normal((2, 7)), [rng.standard_normal((2, 7))]))  # N = 2
    return out


def _ds(h, xs):
    cols = {"h": h, **{f"m{k}": x for k, x in enumerate(xs)}}
    return metaeval.Dataset.from_arrays(cols, human="h")


# ---- SPA against pce.py ------------------------------------------------------


@pytest.mark.parametrize("case", range(3))
def test_pvalues_float32_equal_pce(case):
    """Same draws and float32 arithmetic as mt-metrics-eval pce.py,
    compute_pairwise_p_values (commit 68a481a): identical p-values."""
    pce = mtme("pce")
    h, xs = _datasets()[case]
    for S in [h, *xs]:
        for seed in (4, 11):
            exp = pce.compute_pairwise_p_values(S, num_permutations=300, seed=seed)
            signs = sign_draws(np.random.default_rng(seed), 300, S.shape[1])
            got = pairwise_pvalues(S[None], signs, precision="float32")[0]
            np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("case", range(3))
def test_spa_equals_compute_one_minus_pce(case):
    """soft_pairwise_accuracy(rng=4, precision='float32') = mt-metrics-eval
    pce.py compute_one_minus_pce on pce's p-values (commit 68a481a)."""
    pce = mtme("pce")
    h, xs = _datasets()[case]
    res = soft_pairwise_accuracy(_ds(h, xs), "h", rng=4, precision="float32")
    ph = pce.compute_pairwise_p_values(h, num_permutations=1000, seed=4)
    for k, x in enumerate(xs):
        pm = pce.compute_pairwise_p_values(x, num_permutations=1000, seed=4)
        assert res.get(f"m{k}").statistic == pce.compute_one_minus_pce(ph, pm)
        # exactly equal given the p-values
        assert spa_from_pvalues(ph, pm) == pce.compute_one_minus_pce(ph, pm)


def test_float32_spa_is_pce_up_to_memory_order_on_mqm_like_files():
    """docs/mt.md section 4 (issue 23 item 8): on 13 x 147 MQM-like matrices pce.py's float32
    p-values move with the array's memory order; precision='float32' equals pce.py's SPA on one of
    the two orders and lies within 1e-3 of both (mt-metrics-eval pce.py, commit 68a481a)."""
    pce = mtme("pce")
    moved = 0
    for seed in range(4):
        g = np.random.default_rng(seed)
        H = -np.round(g.poisson(0.8, (13, 147)) + 5.0 * g.poisson(0.25, (13, 147))
                      + 0.1 * g.poisson(0.3, (13, 147)), 1)
        X = H + g.normal(0, 2, (13, 147))
        refs = []
        for order in (np.ascontiguousarray, np.asfortranarray):
            ph = pce.compute_pairwise_p_values(order(H), num_permutations=1000, seed=4)
            pm = pce.compute_pairwise_p_values(order(X), num_permutations=1000, seed=4)
            refs.append(pce.compute_one_minus_pce(ph, pm))
        moved += refs[0] != refs[1]
        got = soft_pairwise_accuracy(_ds(H, [X]), "h", rng=4, precision="float32").get("m0").statistic
        assert got in refs
        assert max(abs(got - r) for r in refs) <= 1e-3
    assert moved  # pce.py itself is not bit-reproducible across memory orders on this shape


def test_spa_stats_case_7():
    """mt-metrics-eval stats_test.py: Correlation(2, [1,2,3,2,3,4], [2,2,4,1,3,5])
    .PairwiseConfidenceError() = 0.872 (seed 4, 1000 permutations)."""
    ds = metaeval.Dataset.from_arrays(
        {"h": np.array([[1, 2, 3], [2, 3, 4.0]]), "m": np.array([[2, 2, 4], [1, 3, 5.0]])}, human="h"
    )
    assert soft_pairwise_accuracy(ds, "h", rng=4, precision="float32").get("m").statistic == pytest.approx(0.872, abs=1e-12)
    stats = mtme("stats")
    exp = stats.Correlation(2, [1, 2, 3, 2, 3, 4], [2, 2, 4, 1, 3, 5]).PairwiseConfidenceError()[0]
    assert soft_pairwise_accuracy(ds, "h", rng=4, precision="float32").get("m").statistic == exp


def _slow_pvalues(S, signs):
    """Reference: loop over pairs and draws (float64)."""
    N = S.shape[0]
    p = np.full((N, N), np.nan)
    for i in range(N):
        for j in range(i + 1, N):
            d = S[i] - S[j]
            obs = d.sum()
            p[i, j] = np.mean([float(np.dot(s, d)) >= obs for s in signs])
    return p


@pytest.mark.parametrize("case", range(3))
def test_float64_fast_equals_slow_reference(case):
    h, xs = _datasets(1)[case]
    signs = sign_draws(np.random.default_rng(0), 200, h.shape[1]).astype(float)
    S = np.stack([h, *xs])
    fast = pairwise_pvalues(S, signs)
    for k in range(len(S)):
        slow = _slow_pvalues(S[k], signs)
        # float64: the batched matmul and the dot can differ in the last bit only on exact ties
        assert np.nanmax(np.abs(fast[k] - slow)) <= 1 / 200 + 1e-12
        np.testing.assert_allclose(fast[k], slow, atol=1 / 200 + 1e-12)


def test_equal_in_the_limit_to_exact_enumeration():
    """With all 2^M sign vectors the p-value is the exact permutation p-value;
    Monte Carlo draws converge to it (binomial error bound)."""
    rng = np.random.default_rng(3)
    M = 10
    S = rng.standard_normal((3, M))
    allsigns = np.array(list(itertools.product([-1.0, 1.0], repeat=M)))
    exact = pairwise_pvalues(S[None], allsigns)[0]
    mc = pairwise_pvalues(S[None], sign_draws(np.random.default_rng(1), 40000, M))[0]
    iu = np.triu_indices(3, 1)
    assert np.all(np.abs(mc[iu] - exact[iu]) < 5 * np.sqrt(0.25 / 40000))


def _exact_pvalues(S, signs):
    """p[i, j] = #{s : s . d >= 1 . d} / P with d = S[i] - S[j], in exact rational arithmetic
    (fractions.Fraction of the floats' exact binary values)."""
    from fractions import Fraction

    N = S.shape[0]
    p = np.full((N, N), np.nan)
    for i in range(N):
        for j in range(i + 1, N):
            d = [Fraction(float(a)) - Fraction(float(b)) for a, b in zip(S[i], S[j])]
            obs = sum(d)
            p[i, j] = sum(sum(int(si) * di for si, di in zip(s, d)) >= obs for s in signs) / len(signs)
    return p


def test_exactly_tied_draws_count_whatever_the_rounding():
    # Regression (review of the SPA code): the observed sum (np.sum) and the null sums (matmul)
    # round differently, so draws that equal the observed difference exactly - the identity
    # draw, flips of segments the two systems score alike - were counted or not by rounding
    # noise: 0.734375 where exact enumeration of the 64 sign vectors gives 0.75. Scaling the
    # scores by 10 changed SPA.
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=6)))
    S = np.array([[0.4, 0.5, 0.7, 0.9, 0.0, 0.1], [0.8, 0.9, 0.2, 0.3, 0.8, 0.4]])
    assert pairwise_pvalues(S[None], signs)[0, 0, 1] == _exact_pvalues(S, signs)[0, 1] == 0.75
    rng = np.random.default_rng(5)
    mqm = -rng.choice([0.0, 0.1, 1.0, 5.0, 5.1, 10.0], size=(5, 8))
    mqm[:, :3] = mqm[0, :3]  # segments every system scores alike
    signs8 = np.array(list(itertools.product([-1.0, 1.0], repeat=8)))
    exact = _exact_pvalues(mqm, signs8)
    for scale in (1.0, 10.0, 0.1, 1 / 3):
        np.testing.assert_array_equal(pairwise_pvalues((mqm * scale)[None], signs8)[0], exact)


def test_spa_properties_and_determinism():
    h, xs = _datasets()[0]
    ds = _ds(h, xs + [h])
    a = soft_pairwise_accuracy(ds, "h", rng=7)
    b = soft_pairwise_accuracy(ds, "h", rng=7)
    assert a.statistics == b.statistics
    assert a.get("m2").statistic == 1.0  # the human scores themselves
    assert all(0 <= r.statistic <= 1 for r in a)
    # invariant to a positive affine map of a metric (same draws)
    ds2 = _ds(h, [3 * xs[0] + 5])
    assert soft_pairwise_accuracy(ds2, "h", rng=7).get("m0").statistic == a.get("m0").statistic
    assert "method:spa" in a[0].signature and "seed:7" in a[0].signature


def test_spa_bootstrap_ci_and_missing_cells():
    h, xs = _datasets()[0]
    xs = [x.copy() for x in xs]
    xs[0][1, 3] = np.nan
    ds = _ds(h, xs)
    with pytest.warns(MissingCellsWarning, match="1 input"):
        r = soft_pairwise_accuracy(ds, "h", rng=1, ci="boot-inputs", n_resamples=50, n_permutations=200)
    for x in r:
        assert x.ci_low <= x.statistic <= x.ci_high or np.isclose(x.ci_low, x.statistic)
        assert x.bootstrap_distribution.shape == (50,) and x.n_inputs == h.shape[1] - 1
    with pytest.raises(ParameterError, match="precision"):
        soft_pairwise_accuracy(ds, "h", precision="half")
    with pytest.raises(ParameterError, match="n_permutations"):
        soft_pairwise_accuracy(ds, "h", n_permutations=0)
    hh = h.copy()
    hh[0, :] = np.nan
    hh[0, 0] = 1.0
    hh[1, 0] = np.nan
    with pytest.raises(DataError, match="no input has scores of every system"):
        soft_pairwise_accuracy(_ds(hh, [np.where(np.isnan(hh), np.nan, xs[1])]), "h")


# ---- Perm-Both comparison of two SPAs -----------------------------------------


def test_compare_spa_matches_mtme_permutation_sig_diff():
    """swapped_spa on mt-metrics-eval's own swap draws gives the p-value of
    mt-metrics-eval stats.py PermutationSigDiff with PairwiseConfidenceError
    (as data.py CompareMetricsWithPairwiseConfidenceError calls it; commit
    68a481a): same draws, same count / k."""
    stats = mtme("stats")
    import functools

    rng = np.random.default_rng(2)
    N, M, k = 4, 12, 40
    h = rng.standard_normal((N, M))
    x1 = h + rng.standard_normal((N, M))
    x2 = h + 2 * rng.standard_normal((N, M))
    gold = list(h.ravel())
    c1 = stats.Correlation(N, gold, list(x1.ravel()))
    c2 = stats.Correlation(N, gold, list(x2.ravel()))
    wrap = functools.partial(stats.PairwiseConfidenceError, num_sys=N, filter_nones=False)
    np.random.seed(123)
    p, delta, used, draws = stats.PermutationSigDiff(c2, c1, wrap, "none", k)  # "x1 better"
    np.random.seed(123)
    w1 = np.array([np.random.binomial(1, 0.5, N * M) for _ in range(k)]).reshape(k, N, M)
    import scipy.stats

    za = scipy.stats.zscore(x1.ravel()).reshape(N, M)
    zb = scipy.stats.zscore(x2.ravel()).reshape(N, M)
    signs = sign_draws(np.random.default_rng(4), 1000, M)
    ph = pairwise_pvalues(h[None], signs, precision="float32")[0]
    halves = swapped_spa(za, zb, ph, signs, w1 == 0, precision="float32")
    np.testing.assert_array_equal(halves, np.array(draws))
    from metaeval.stats.clusters import mtme_pvalue

    assert mtme_pvalue(halves[:, 0] - halves[:, 1], delta) == p


def test_compare_spa_slow_reference_and_api():
    rng = np.random.default_rng(4)
    N, M = 5, 30
    h = rng.standard_normal((N, M))
    ds = _ds(h, [h + 0.3 * rng.standard_normal((N, M)), h + 3 * rng.standard_normal((N, M))])
    r = compare_spa(ds, "h", "m0", "m1", n_resamples=60, n_permutations=300, rng=9)
    # slow reference: rebuild each half and call soft_pairwise_accuracy's kernels one by one
    ss, _ = metaeval.stats.resampling.seed_sequence(9)
    signs = sign_draws(np.random.default_rng(ss), 300, M)
    masks = metaeval.stats.resampling.named_generator(ss, "spa-perm-both").random((60, N, M)) < 0.5
    za = (ds.scores("m0") - ds.scores("m0").mean()) / ds.scores("m0").std()
    zb = (ds.scores("m1") - ds.scores("m1").mean()) / ds.scores("m1").std()
    ph = _slow_pvalues(h, signs.astype(float))
    null = []
    for w in masks:
        pa = _slow_pvalues(np.where(w, zb, za), signs.astype(float))
        pb = _slow_pvalues(np.where(w, za, zb), signs.astype(float))
        null.append(spa_from_pvalues(ph, pa) - spa_from_pvalues(ph, pb))
    np.testing.assert_allclose(r.null_distribution, null, atol=2 / 300)
    assert r.statistic == pytest.approx(r.statistic_a - r.statistic_b)
    c = np.count_nonzero(r.null_distribution >= r.statistic)
    assert r.pvalue_mtme == c / 60
    assert r.pvalue >= r.pvalue_mtme
    assert r.statistic > 0 and r.pvalue < 0.05
    with pytest.raises(ParameterError, match="two different metrics"):
        compare_spa(ds, "h", "m0", "m0")


# ---- task sets and aggregation ------------------------------------------------

from metaeval.wmt import Task, TaskSetResults, global_pairwise_accuracy, run_tasks  # noqa: E402
from metaeval.stats.clusters import significance_clusters  # noqa: E402


def _wmt_like(seed=0, lps=("en-de", "zh-en"), N=6, M=30, n_metrics=4):
    rng = np.random.default_rng(seed)
    out = {}
    for lp in lps:
        h = rng.standard_normal((N, 1)) + 0.5 * rng.standard_normal((N, M))
        cols = {"mqm": h}
        for k in range(n_metrics):
            cols[f"M{k}"] = h + (0.3 + 0.5 * k) * rng.standard_normal((N, M))
        out[f"{lp}:seg"] = metaeval.Dataset.from_arrays(cols, human="mqm")
    return out


def _tasks(lps=("en-de", "zh-en")):
    ts = []
    for lp in lps:
        ts.append(Task(f"{lp}:seg", "mqm", level="system", method="pearson", refs="refA"))
        ts.append(Task(f"{lp}:seg", "mqm", level="global", method="kendall_b", refs="refA"))
        ts.append(Task(f"{lp}:seg", "mqm", level="input", method="acc_eq", refs="refA"))
    return ts


def test_run_tasks_matches_compare_all_and_correlate():
    ds = _wmt_like()
    res = run_tasks(_tasks(), ds, n_resamples=50, rng=3)
    assert len(res) == 6
    for r in res:
        fr = metaeval.correlate(ds[r.task.data], "mqm", level=r.task.level, method=r.task.method,
                                ci="none", pvalue="none").to_frame().set_index("metric")
        for m in r.metrics:
            assert r.stat(m) == pytest.approx(fr.loc[m, "statistic"], rel=1e-12)
        assert list(r.statistics) == sorted(r.statistics, reverse=True)
        np.testing.assert_array_equal(r.ranks, significance_clusters(r.statistics, r.better, names=list(r.metrics)))
    # each task has its own named stream: a task's numbers do not depend on the others
    alone = run_tasks(_tasks()[1:2], ds, n_resamples=50, rng=3)
    np.testing.assert_array_equal(alone[0].better, res[1].better)
    # no test: ranks are positions (mt-metrics-eval k=0)
    r0 = run_tasks(_tasks()[:1], ds, n_resamples=0)
    np.testing.assert_array_equal(r0[0].ranks, np.arange(1, 5))


def _as_mtme_results(res):
    """Our TaskResults as mt-metrics-eval TaskResults (tasks.py, commit 68a481a)."""
    from _mtme_anchor import mtme_function

    TaskResults = mtme_function("tasks", "TaskResults")
    corr_fcn = {"pearson": "pearson", "kendall_b": "kendall", "acc_eq": "KendallWithTiesOpt", "spa": "pce"}
    out = []
    for r in res:
        t = TaskResults()
        t.name = (f"lang={r.task.attr('lp')} level={r.task.level} corr_fcn={corr_fcn[r.task.method]} "
                  f"corr_fcn_args={{}}")
        t.pval = 0.05
        t.corr_ranks = {m: [float(s), int(k)] for m, s, k in zip(r.metrics, r.statistics, r.ranks)}
        out.append(t)
    return out


def test_aggregation_equals_mtme_tasksetresults():
    """assign_weights, average_ranks and average_corrs equal mt-metrics-eval
    tasks.py TaskSetResults.AssignWeights/AverageRanks/AverageCorrs (commit
    68a481a, run from its source on the same per-task results)."""
    from _mtme_anchor import mtme_function

    TaskResults = mtme_function("tasks", "TaskResults")
    TSR = mtme_function("tasks", "TaskSetResults", {"np": np, "TaskResults": TaskResults})
    ds = _wmt_like(1, lps=("en-de", "zh-en", "en-ru"), n_metrics=5)
    ts = _tasks(("en-de", "zh-en", "en-ru"))
    ts.append(Task("en-de:seg", "mqm", level="system", method="spa"))
    # drop one metric from one task: averages keep metrics present in all tasks
    res = run_tasks(ts, ds, n_resamples=30, n_permutations=200, rng=5)
    mt = _as_mtme_results(res)
    theirs = TSR(mt)
    for ours_attrs, their_attrs in (([], []), (["lp"], ["lang"]), (["lp", "method"], ["lang", "corr_fcn"]),
                                    (["method"], ["corr_fcn"])):
        w = res.assign_weights(ours_attrs)
        np.testing.assert_allclose(w, theirs.AssignWeights(their_attrs), rtol=1e-15)
        ar, tr = res.average_ranks(w), theirs.AverageRanks(w)
        assert set(ar) == set(tr)
        for m in ar:
            assert ar[m] == pytest.approx(tr[m], rel=1e-12)
        ac, tc = res.average_corrs(w), theirs.AverageCorrs(w)
        assert list(ac) == list(tc)
        for m in ac:
            assert ac[m] == pytest.approx(tc[m], rel=1e-12)


def test_average_keeps_metrics_in_all_tasks_and_tables():
    ds = _wmt_like(2)
    res = run_tasks(_tasks()[:2], ds, metrics=["M0", "M1", "M2"], n_resamples=20, rng=1)
    # a task on another metric set
    extra = run_tasks(_tasks()[2:3], ds, metrics=["M0", "M1"], n_resamples=0)
    both = TaskSetResults(res.results + extra.results)
    assert set(both.average_ranks()) == {"M0", "M1"}
    # hand computation: weights 1/3 each, ranks/corrs rescaled by each task's range
    m = "M0"
    exp = sum((r.stat(m) - r.task.range[0]) / (r.task.range[1] - r.task.range[0]) for r in both) / 3
    assert both.average_corrs()[m] == pytest.approx(exp, rel=1e-12)
    txt = res.table()
    assert "avg corr" in txt and "en-de" in txt and "pearson" in txt
    csv = res.table(fmt="csv")
    # columns named by task (lp:level:method), not task1..taskK (issue 25 item 1)
    assert csv.splitlines()[0] == ("metric,avg_corr,avg_rank,en-de:system:pearson,en-de:system:pearson_rank,"
                                   "en-de:global:kendall_b,en-de:global:kendall_b_rank")
    tex = res.table(fmt="latex")
    assert tex.startswith("\\begin{tabular}") and "\\toprule" in tex and "kendall\\_b" in tex
    fr = res.to_frame()
    assert list(fr.columns) == ["task", "lp", "level", "method", "human", "metric", "statistic", "rank"]
    with pytest.raises(ParameterError, match="datasets lacks 'xx:seg'"):
        run_tasks([Task("xx:seg", "mqm")], ds)
    with pytest.raises(ParameterError, match="duplicate task"):
        run_tasks([_tasks()[0], _tasks()[0]], ds)
    with pytest.raises(ParameterError, match="weights has 1 entries"):
        res.average_ranks([1.0])


# ---- WMT22 pooled global accuracy ----------------------------------------------


def _sys_sets(seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for lp, N in (("en-de", 7), ("zh-en", 5), ("en-ru", 6)):
        h = np.round(rng.standard_normal((N, 1)), 1)  # ties in human scores
        cols = {"mqm": h}
        for k in range(4):
            cols[f"M{k}"] = np.round(h + (0.2 + 0.4 * k) * rng.standard_normal((N, 1)), 1)
        if lp == "zh-en":
            cols["only-zh"] = rng.standard_normal((N, 1))
        out[lp] = metaeval.Dataset.from_arrays(cols, human="mqm")
    return out


def _mtme_pooled(stats, sizes):
    """The pooled accuracy of mt-metrics-eval data.py
    CompareMetricsWithGlobalAccuracy (its inner _Accuracy: stats.Agreement summed
    over eval sets), written out here since data.py cannot be imported."""
    def acc(g, m):
        a = p = b = 0
        for n in sizes:
            x, y = stats.Agreement(g[b:b + n], m[b:b + n])
            a += x
            p += y
            b += n
        return a / p, p
    return acc


def test_global_accuracy_equals_mtme():
    stats = mtme("stats")
    sets = _sys_sets()
    res = global_pairwise_accuracy(sets, "mqm", n_resamples=0)
    assert "only-zh" not in res.metrics and len(res.metrics) == 4
    sizes = [ds.shape[0] for ds in sets.values()]
    acc = _mtme_pooled(stats, sizes)
    g = [float(v) for ds in sets.values() for v in ds.scores("mqm")[:, 0]]
    for m, s in zip(res.metrics, res.statistics):
        mv = [float(v) for ds in sets.values() for v in ds.scores(m)[:, 0]]
        a, p = acc(g, mv)
        assert s == a and res.n_pairs == p == 21 + 10 + 15


def test_global_accuracy_null_equals_mtme_permutation_sig_diff():
    """Perm-Both on the merged system vectors = mt-metrics-eval stats.py
    PermutationSigDiff(..., average_by='none') with the pooled accuracy, on its
    own draws (commit 68a481a)."""
    stats = mtme("stats")
    import scipy.stats

    from metaeval.stats.pairacc import pooled_swap_accuracy as _pooled_null  # moved from wmt (issue 25)

    sets = _sys_sets(1)
    sizes = [ds.shape[0] for ds in sets.values()]
    acc = _mtme_pooled(stats, sizes)
    H = np.concatenate([ds.scores("mqm")[:, 0] for ds in sets.values()])
    x1 = np.concatenate([ds.scores("M0")[:, 0] for ds in sets.values()])
    x2 = np.concatenate([ds.scores("M2")[:, 0] for ds in sets.values()])
    c1 = stats.Correlation(len(H), list(H), list(x1))
    c2 = stats.Correlation(len(H), list(H), list(x2))
    k = 60
    np.random.seed(8)
    p, delta, used, draws = stats.PermutationSigDiff(c2, c1, acc, "none", k)  # "M0 better"
    np.random.seed(8)
    w1 = np.array([np.random.binomial(1, 0.5, len(H)) for _ in range(k)])
    bounds, s = [], 0
    for n in sizes:
        bounds.append((s, s + n))
        s += n
    halves = _pooled_null(scipy.stats.zscore(x1), scipy.stats.zscore(x2), H, bounds, w1 == 0)
    np.testing.assert_allclose(halves, np.array(draws), rtol=0, atol=1e-15)
    from metaeval.stats.clusters import mtme_pvalue

    assert mtme_pvalue(halves[:, 0] - halves[:, 1], delta) == p
    res = global_pairwise_accuracy(sets, "mqm", n_resamples=100, rng=2)
    assert res.ranks[0] == 1 and "method:pairwise_accuracy" in res.signature


def test_task_results_to_dict_is_json():
    import json

    ds = _wmt_like(3)
    res = run_tasks(_tasks()[:2], ds, n_resamples=10, rng=0)
    d = json.loads(json.dumps(res.to_dict(arrays=False)))
    assert d["results"][0]["task"] == res[0].task.name and d["results"][0]["ranks"] == res[0].ranks.tolist()


# ---- Besag-Clifford sequential p-values (issue 16.4) --------------------------------

from metaeval.correlation import resampling_pvalue  # noqa: E402
from metaeval.stats.sequential import besag_clifford  # noqa: E402


def _slow_bc(null, obs, h, n):
    """Reference: Besag and Clifford (1991), the rule as stated, one draw at a time;
    NaN draws dropped (neither a draw of L nor an exceedance) as resampling_pvalue drops
    them, but counted among the n - 1 draws made at most."""
    g = F = 0
    for T, v in enumerate(null[: n - 1], 1):
        if np.isnan(v):
            continue
        F += 1
        g += v >= obs
        if g == h:
            return h / F, T
    return ((g + 1) / (F + 1) if F else np.nan), min(len(null), n - 1)


def _same(a, b):
    return a == b or (np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("seed", range(5))
def test_besag_clifford_equals_slow_rule(seed):
    """The chunked rule equals the rule applied one draw at a time (_slow_bc, an
    independent loop), for chunks of 1, 7 and all draws; without early stop it is the
    fixed-size resampling_pvalue of the first n - 1 draws."""
    rng = np.random.default_rng(seed)
    null = rng.standard_normal(300)
    null[rng.random(300) < 0.05] = np.nan  # NaN draws are dropped
    if seed == 4:
        null[:3] = np.nan  # adversarial: the first draws undefined
    for obs in (-1.0, 0.0, 0.5, 1.5, 3.0, null[5]):
        for h in (1, 3, 10, 400):
            for n in (2, 50, 301):
                for chunk in (1, 7, 300):
                    blocks = (null[s:s + chunk] for s in range(0, 300, chunk))
                    r = besag_clifford(blocks, obs, h=h, n=n)
                    p, T = _slow_bc(null, obs, h, n)
                    assert _same(r.pvalue, p) and r.n_draws == T == r.null.size
                    if not r.stopped and np.isfinite(obs):
                        fin = null[: n - 1][np.isfinite(null[: n - 1])]
                        exp = (np.count_nonzero(fin >= obs) + 1) / (fin.size + 1) if fin.size else np.nan
                        assert _same(r.pvalue, exp)


def test_regression_besag_clifford_counted_nan_draws_as_non_exceeding():
    """A NaN null draw lowered the sequential p-value (it counted as a draw that does not
    exceed) while the fixed-size resampling_pvalue drops it: 4 draws, 2 NaN, 1 of the 2
    finite ones exceeds -> (1 + 1) / (2 + 1), not (1 + 1) / (4 + 1)."""
    null = np.array([np.nan, 2.0, np.nan, 0.0])
    r = besag_clifford([null], 1.0, h=10, n=5)
    assert r.pvalue == pytest.approx(2 / 3, abs=1e-15) and r.n_draws == 4 and r.n_nan == 2
    assert r.pvalue == resampling_pvalue(null, 1.0, "greater")
    # stopped: L counts the finite draws only -> h / L = 1 / 1
    assert besag_clifford([null], 1.0, h=1, n=5).pvalue == 1.0
    assert np.isnan(besag_clifford([np.full(4, np.nan)], 1.0, h=1, n=5).pvalue)


def test_besag_clifford_is_valid_under_the_null():
    """Under the null (observed exchangeable with the draws) P(p <= a) <= a:
    checked at a = 0.05, 0.2, 0.5 over 4000 seeded repetitions (binomial bound)."""
    rng = np.random.default_rng(0)
    ps = []
    for _ in range(4000):
        x = rng.random(200)
        ps.append(besag_clifford([x[1:]], x[0], h=5, n=200).pvalue)
    ps = np.array(ps)
    for a in (0.05, 0.2, 0.5):
        assert np.mean(ps <= a) <= a + 3 * np.sqrt(a * (1 - a) / 4000)


def test_compare_spa_sequential():
    rng = np.random.default_rng(6)
    N, M = 5, 30
    h = rng.standard_normal((N, M))
    ds = _ds(h, [h + 2 * rng.standard_normal((N, M)), h + 0.3 * rng.standard_normal((N, M))])
    full = compare_spa(ds, "h", "m0", "m1", n_resamples=200, n_permutations=200, rng=3)
    seq = compare_spa(ds, "h", "m0", "m1", n_resamples=200, n_permutations=200, rng=3, sequential=5)
    # m0 is the worse metric: the sequential test stops early on the same first draws
    assert seq.stopped_early and seq.n_resamples < 200
    np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[: seq.n_resamples])
    assert seq.pvalue == 5 / seq.n_resamples and "besag-clifford:5" in seq.signature
    never = compare_spa(ds, "h", "m0", "m1", n_resamples=200, n_permutations=200, rng=3, sequential=10**6)
    assert never.pvalue == full.pvalue and not never.stopped_early
    with pytest.raises(ParameterError, match="sequential"):
        compare_spa(ds, "h", "m0", "m1", sequential=0)


# ---- presets: from an mt-metrics-eval folder to the table ------------------------

from metaeval.wmt import run_wmt, wmt_tasks  # noqa: E402


def test_wmt_presets_weights():
    """mt-metrics-eval tasks.py WMT23/WMT24 (commit 68a481a): WMT23 = pooled accuracy
    (weight = number of lps) + 3 tasks per lp (weight 1), WMT24 = 2 tasks per lp,
    uniform; normalised (hand-computed from those definitions)."""
    t, w = wmt_tasks("wmt23", ["zh-en", "en-de"])
    assert [x.method for x in t] == ["pairwise_accuracy", "pearson", "pearson", "acc_eq"] * 1 + [
        "pearson", "pearson", "acc_eq"]
    np.testing.assert_allclose(w, np.array([2, 1, 1, 1, 1, 1, 1]) / 8)
    t, w = wmt_tasks("wmt24", ["en-de", "ja-zh", "en-es"])
    assert [x.attr("lp") for x in t] == ["en-de", "en-de", "en-es", "en-es", "ja-zh", "ja-zh"]
    assert [x.method for x in t] == ["spa", "acc_eq"] * 3 and w == [1 / 6] * 6
    with pytest.raises(ParameterError, match="preset"):
        wmt_tasks("wmt19", ["en-de"])


def test_run_wmt_and_cli(tmp_path):
    from click.testing import CliRunner

    from metaeval.cli import main
    from test_mtme import make_data, write_layout

    for k, lp in enumerate(("en-de", "zh-en")):
        h, m = make_data(k)
        write_layout(tmp_path, h, m, lp=lp)
    res, w = run_wmt(tmp_path, "wmt99", ["en-de", "zh-en"], preset="wmt23", refs="refA",
                     n_resamples=20, n_permutations=100, rng=0)
    assert len(res) == 7 and res[0].task.method == "pairwise_accuracy"
    sets = {lp: metaeval.read_mtme(tmp_path, "wmt99", lp, level="sys", refs="refA", names="display")
            for lp in ("en-de", "zh-en")}
    ga = global_pairwise_accuracy(sets, "mqm", n_resamples=20, rng=0)
    np.testing.assert_array_equal(res[0].statistics, ga.statistics)
    assert set(res.average_ranks(w)) == {"BLEU", "COMET", "KIWI[noref]"}
    r = CliRunner().invoke(main, ["wmt", str(tmp_path), "wmt99", "--lps", "en-de,zh-en", "--refs", "refA",
                                  "--preset", "wmt23", "--n-resamples", "10", "--n-permutations", "100",
                                  "--seed", "1", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert any(line.startswith('metric,avg_corr,avg_rank,"en-de,zh-en:system:pairwise_accuracy",'
                               '"en-de,zh-en:system:pairwise_accuracy_rank",en-de:system:pearson,')
               for line in r.output.splitlines())
    r = CliRunner().invoke(main, ["wmt", str(tmp_path), "wmt99", "--lps", "en-de", "--refs", "en-de:refA"])
    assert r.exit_code == 2 and "metaeval: error:" in r.output


# ---- span-level rater agreement (issue 16.5) ---------------------------------------


def _span_reference(df, match, severity):
    """Slow pure-Python twin of span_agreement: explicit sets of spans or of
    characters (one element per character position), counted per segment."""
    import math

    units = {}
    for r in df.to_dict("records"):
        seg = (str(r["system"]), str(r["input"]))
        cell = units.setdefault(str(r["rater"]), {}).setdefault(seg, set())
        if r["start"] is None or (isinstance(r["start"], float) and math.isnan(r["start"])):
            continue
        sev = str(r.get("severity")).lower() if severity else ""
        side = bool(r.get("is_source_error", False))
        if match == "exact":
            cell.add((side, int(r["start"]), int(r["end"]), sev))
        else:
            for c in range(int(r["start"]), int(r["end"])):
                cell.add((side, c, sev))
    out = {}
    for ra, rb in itertools.combinations(sorted(units), 2):
        common = set(units[ra]) & set(units[rb])
        if not common:
            continue
        na = sum(len(units[ra][s]) for s in common)
        nb = sum(len(units[rb][s]) for s in common)
        nm = sum(len(units[ra][s] & units[rb][s]) for s in common)
        out[(ra, rb)] = (len(common), na, nb, nm)
    return out


def _random_spans(rng, n_raters=4, n_seg=6, length=30, max_spans=4):
    import pandas as pd

    rows = []
    for r in range(n_raters):
        for s in range(n_seg):
            if rng.random() < 0.3:  # not rated by this rater
                continue
            k = int(rng.integers(0, max_spans + 1))
            if k == 0:
                rows.append(("sys", str(s), f"r{r}", np.nan, np.nan, None, None, False))
            for _ in range(k):
                a = int(rng.integers(0, length))
                b = a + int(rng.integers(0, 8))  # zero-length spans included
                if rng.random() < 0.3:  # adversarial: duplicate a span of the same rater
                    rows.append(("sys", str(s), f"r{r}", a, b, "Minor", "x", False))
                rows.append(("sys", str(s), f"r{r}", a, b, str(rng.choice(["Major", "minor", "MINOR"])),
                             "x", bool(rng.random() < 0.2)))
    return pd.DataFrame(rows, columns=["system", "input", "rater", "start", "end", "severity",
                                       "category", "is_source_error"])


@pytest.mark.parametrize("match", ["exact", "char"])
@pytest.mark.parametrize("severity", [False, True])
def test_span_agreement_equals_slow_reference(match, severity):
    import warnings as _w

    from metaeval.wmt import span_agreement

    rng = np.random.default_rng(16)
    for _ in range(25):
        df = _random_spans(rng)
        ref = _span_reference(df, match, severity)
        with _w.catch_warnings():
            _w.simplefilter("ignore")
            res = span_agreement(df, match=match, severity=severity)
        got = {(p.rater_a, p.rater_b): (p.n_segments, p.n_a, p.n_b, p.n_match) for p in res}
        assert got == ref
        for p in res:
            n_seg, na, nb, nm = ref[(p.rater_a, p.rater_b)]
            if na + nb:
                assert p.f1 == pytest.approx(2 * nm / (na + nb), abs=1e-15)
        f1s = [2 * v[3] / (v[1] + v[2]) for v in ref.values() if v[1] + v[2]]
        if f1s:
            assert res.mean_f1 == pytest.approx(float(np.mean(f1s)), abs=1e-15)


def test_span_agreement_hand_computed():
    """Two raters, two common segments (hand-computed).
    seg 0: r1 [0,4) major, [10,12) minor; r2 [2,6) major, [10,12) major.
    seg 1: r1 no error; r2 [0,3) minor.  seg 2: only r1 (not common).
    exact: r1 spans {(0,4),(10,12)}, r2 {(2,6),(10,12),(0,3)}: 1 match -> P 1/3, R 1/2, F1 2/5;
    with severity (10,12) differs -> 0 matches.
    char: r1 chars {0..3, 10, 11} (6), r2 {2..5, 10, 11} + seg1 {0,1,2} (9); overlap {2,3,10,11} = 4:
    P 4/9, R 4/6, F1 8/15; with severity: major overlap {2,3} = 2 -> F1 4/15."""
    import pandas as pd

    from metaeval.wmt import span_agreement

    nan = np.nan
    t = pd.DataFrame(
        [("s", "0", "r1", 0, 4, "Major"), ("s", "0", "r1", 10, 12, "Minor"),
         ("s", "0", "r2", 2, 6, "major"), ("s", "0", "r2", 10, 12, "Major"),
         ("s", "1", "r1", nan, nan, None), ("s", "1", "r2", 0, 3, "Minor"),
         ("s", "2", "r1", 5, 9, "Minor")],
        columns=["system", "input", "rater", "start", "end", "severity"])
    e = span_agreement(t, match="exact")[0]
    assert (e.n_segments, e.n_a, e.n_b, e.n_match) == (2, 2, 3, 1)
    assert (e.precision, e.recall, e.f1) == pytest.approx((1 / 3, 1 / 2, 2 / 5), abs=1e-15)
    assert span_agreement(t, match="exact", severity=True)[0].f1 == 0.0
    c = span_agreement(t, match="char")[0]
    assert (c.n_a, c.n_b, c.n_match) == (6, 9, 4)
    assert (c.precision, c.recall, c.f1) == pytest.approx((4 / 9, 4 / 6, 8 / 15), abs=1e-15)
    assert span_agreement(t, match="char", severity=True)[0].f1 == pytest.approx(4 / 15, abs=1e-15)
    assert "match:char|severity:no" in c.signature
    assert list(span_agreement(t).to_frame().columns) == [
        "rater_a", "rater_b", "match", "severity", "n_segments", "n_a", "n_b", "n_match",
        "precision", "recall", "f1", "signature"]


def test_span_agreement_no_errors_is_nan_with_warning_and_no_common_segments_no_pair():
    import pandas as pd

    from metaeval.errors import UndefinedStatisticWarning
    from metaeval.wmt import span_agreement

    t = pd.DataFrame([("s", "0", "r1", None, None), ("s", "0", "r2", None, None),
                      ("s", "1", "r3", 0, 2)], columns=["system", "input", "rater", "start", "end"])
    with pytest.warns(UndefinedStatisticWarning, match="'r1' and 'r2' marked no error"):
        res = span_agreement(t)
    assert len(res) == 1 and np.isnan(res[0].f1) and np.isnan(res.mean_f1)


def test_span_agreement_bad_input():
    import pandas as pd

    from metaeval.errors import InputTypeError
    from metaeval.wmt import span_agreement

    t = pd.DataFrame([("s", "0", "r1", 4, 2)], columns=["system", "input", "rater", "start", "end"])
    with pytest.raises(DataError, match="spans row 0: start=4, end=2"):
        span_agreement(t)
    with pytest.raises(DataError, match="missing column"):
        span_agreement(t.drop(columns="rater"))
    with pytest.raises(ParameterError, match="match='span'; choose one of exact, char"):
        span_agreement(t, match="span")
    with pytest.raises(InputTypeError, match="spans must be a DataFrame"):
        span_agreement([1, 2])


def test_span_agreement_from_tsv(tmp_path):
    """The hand-computed case of test_span_agreement_hand_computed, from a TSV file."""
    from metaeval.wmt import read_error_spans, span_agreement

    p = tmp_path / "spans.tsv"
    p.write_text("system\tsegment\trater\tstart\tend\tseverity\tcategory\n"
                 "s\t0\tr1\t0\t4\tMajor\tAccuracy\ns\t0\tr1\t10\t12\tMinor\tFluency\n"
                 "s\t0\tr2\t2\t6\tmajor\tAccuracy\ns\t0\tr2\t10\t12\tMajor\tFluency\n"
                 "s\t1\tr1\t\t\t\t\ns\t1\tr2\t0\t3\tMinor\tStyle\n")
    c = span_agreement(p, match="char")[0]
    assert (c.n_a, c.n_b, c.n_match) == (6, 9, 4)
    assert read_error_spans(p)["input"].tolist() == ["0", "0", "0", "0", "1", "1"]
    p.write_text("system\tinput\trater\tstart\tend\tseverity\tcategory\ns\t0\tr1\t1.5\t4\tMajor\tx\n")
    with pytest.raises(DataError, match=r"spans\.tsv, line 2: start '1\.5' is not an integer"):
        read_error_spans(p)
    p.write_text("system\tinput\tstart\tend\n")
    with pytest.raises(DataError, match=r"missing column\(s\) rater, severity, category"):
        read_error_spans(p)


def test_span_agreement_cli(tmp_path):
    """The hand-computed TSV case of test_span_agreement_from_tsv through the command."""
    import json

    from click.testing import CliRunner

    from metaeval.cli import main

    p = tmp_path / "spans.tsv"
    p.write_text("system\tinput\trater\tstart\tend\tseverity\tcategory\n"
                 "s\t0\tr1\t0\t4\tMajor\tAccuracy\ns\t0\tr1\t10\t12\tMinor\tFluency\n"
                 "s\t0\tr2\t2\t6\tmajor\tAccuracy\ns\t0\tr2\t10\t12\tMajor\tFluency\n"
                 "s\t1\tr1\t\t\t\t\ns\t1\tr2\t0\t3\tMinor\tStyle\n")
    r = CliRunner().invoke(main, ["span-agreement", str(p), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["mean_f1"] == pytest.approx(8 / 15, abs=1e-12) and d["pairs"][0]["n_match"] == 4
    r = CliRunner().invoke(main, ["span-agreement", str(p), "--match", "exact", "--severity"])
    assert r.exit_code == 0 and "mean F1 0" in r.output
    bad = tmp_path / "bad.tsv"
    bad.write_text("system\tinput\trater\tstart\tend\tseverity\tcategory\ns\t0\tr1\t5\t2\tMajor\tx\n")
    r = CliRunner().invoke(main, ["span-agreement", str(bad)])
    assert r.exit_code == 2 and "metaeval: error:" in r.output and "bad.tsv, line 2" in r.output


def test_span_readers_name_the_file_on_bad_bytes_and_short_rows(tmp_path):
    # Regression (review): read_rating_spans opened its file with a plain open() (a latin-1
    # byte gave a bare UnicodeDecodeError) and read_error_spans used pd.read_csv directly (a
    # short row was padded with NaN); both now go through the data layer's checked readers.
    from metaeval.wmt import read_error_spans, read_rating_spans

    rating = tmp_path / "en-de.mqm.seg.rating"
    rating.write_bytes(b"sysA\tNone\nsys\xe9B\tNone\n")
    with pytest.raises(DataError, match=r"en-de\.mqm\.seg\.rating, line 2: not UTF-8"):
        read_rating_spans(rating)
    tsv = tmp_path / "spans.tsv"
    tsv.write_text("system\tinput\trater\tstart\tend\tseverity\tcategory\n"
                   "A\t0\tr1\t0\t3\tmajor\tAccuracy\nA\t1\tr1\t2\n")
    with pytest.raises(DataError, match=r"spans\.tsv.*line 3"):
        read_error_spans(tsv)
