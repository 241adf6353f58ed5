"""Tests of :mod:`metaeval.diagnostics` (seed paper 001 sections 2.3.2-2.3.3,
Appendices B-C; seed paper 003 Figure 1).

Oracles, each named where it is used:

* slow plain-Python references in this file (loops over pairs and texts,
  ``tests/reference.py`` for Pearson/Spearman/Kendall), re-creating the
  random draws from the documented streams where there are any;
* scipy: ``stats.ks_2samp`` (KS statistic, p-value, sign, location),
  ``stats.binomtest(...).proportion_ci`` (Wilson and Clopper-Pearson) and
  ``binomtest(...).pvalue`` (sign test), ``stats.spearmanr``/``pearsonr``/
  ``kendalltau`` (correlations and their p-values);
* synthetic data with a known answer, derived in the comments (a metric equal
  to the human score detects every perturbation that lowers it; identical
  distributions have KS 0, separated ones KS 1; ...).
"""

from __future__ import annotations

import math
import statistics
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest
from _spearman import spearman_test
from scipy import stats

import metaeval
from metaeval import (
    ConstantInputWarning,
    DataError,
    Dataset,
    ParameterError,
    UndefinedStatisticWarning,
)
from metaeval import diagnostics as dg
from metaeval.stats.multitest import adjust_pvalues

try:  # tests/ as a package or as a rootdir on sys.path
    from . import reference as ref
except ImportError:  # pragma: no cover
    import reference as ref


def _stream(seed, *names):
    """The documented unit stream named_generator(SeedSequence(seed), *names), from primitives."""
    key = zlib.crc32("\x1f".join(names).encode())
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))


def _finite(v):
    return v is not None and math.isfinite(v)


# --------------------------------------------------------------------------
# perturbation detection


def ref_detection(orig, pert, human=None, min_human=None, atol=0.0):
    """(n_greater, n_ties, n_less, n_missing, n_excluded) by a loop over pairs."""
    g = t = lt = miss = excl = 0
    for k in range(len(orig)):
        s, sh = orig[k], pert[k]
        if not (_finite(s) and _finite(sh)):
            miss += 1
            continue
        if min_human is not None and not (_finite(human[k]) and human[k] >= min_human):
            excl += 1
            continue
        d = s - sh
        if d > atol:
            g += 1
        elif d < -atol:
            lt += 1
        else:
            t += 1
    return g, t, lt, miss, excl


def test_detection_metric_equal_to_human_detects_every_lowering_perturbation():
    # known answer: the perturbation lowers the human score of every text by 0.5..2;
    # a metric equal to the human score ranks every original above its perturbed
    # version: accuracy 1, no ties
    rs = np.random.default_rng(1)
    h = rs.integers(1, 6, size=200).astype(float)
    h_pert = h - rs.uniform(0.5, 2, size=200)
    r = dg.perturbation_detection({"oracle": h}, {"oracle": h_pert})[0]
    assert (r.statistic, r.tie_share, r.less_share, r.n) == (1.0, 0.0, 0.0, 200)
    # sign test of 200 wins out of 200: p = 2 * 0.5**200
    assert r.pvalue == pytest.approx(2 * 0.5**200, rel=1e-12)


def test_detection_against_loop_reference_with_missing_ties_and_threshold():
    rs = np.random.default_rng(2)
    n = 300
    orig = rs.integers(0, 5, size=n).astype(float)
    pert = orig + rs.integers(-2, 3, size=n)  # many exact ties
    pert[rs.random(n) < 0.1] = np.nan  # skipped perturbations
    orig[:3] = np.nan
    human = rs.integers(1, 6, size=n).astype(float)
    human[5:8] = np.nan
    for min_human, atol in [(None, 0.0), (3, 0.0), (3, 1.0), (None, 1.5)]:
        res = dg.perturbation_detection(
            orig, pert, human=human, min_human=min_human, atol=atol, ci="clopper-pearson"
        )[0]
        g, t, lt, miss, excl = ref_detection(orig, pert, human, min_human, atol)
        m = g + t + lt
        assert (res.n_greater, res.n_ties, res.n_less, res.n_missing, res.n_excluded) == (
            g, t, lt, miss, excl,
        )  # fmt: skip
        assert res.n == m
        assert res.statistic == g / m and res.tie_share == t / m and res.less_share == lt / m
        ci = stats.binomtest(g, m).proportion_ci(0.95, method="exact")
        assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-8)
        assert res.pvalue == pytest.approx(stats.binomtest(g, g + lt, 0.5).pvalue, rel=1e-12)


@pytest.mark.parametrize(
    "method, scipy_method", [("wilson", "wilson"), ("clopper-pearson", "exact")]
)
@pytest.mark.parametrize("n", [1, 7, 50, 333])
@pytest.mark.parametrize("cl", [0.8, 0.95, 0.99])
def test_binomial_interval_matches_scipy(method, scipy_method, n, cl):
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        if not 0 <= k <= n:
            continue
        lo, hi = dg.binomial_interval(k, n, confidence_level=cl, method=method)
        ci = stats.binomtest(k, n).proportion_ci(cl, method=scipy_method)
        # scipy finds the Clopper-Pearson bounds by root finding on the binomial
        # tail; ours are the equivalent beta quantiles: they agree to ~1e-9
        rel = 1e-12 if method == "wilson" else 1e-8
        assert (lo, hi) == pytest.approx((ci.low, ci.high), rel=rel, abs=1e-14)


def test_detection_inputs_dataset_and_mapping_and_alternative():
    h = np.array([[4.0, 2.0, 5.0], [3.0, 3.0, 1.0]])
    m = np.array([[0.9, 0.1, 0.5], [0.4, 0.3, 0.2]])
    ds = Dataset.from_arrays({"human": h, "m": m}, human="human")
    pert = {"m": m - np.array([[0.1, 0.0, -0.1], [0.2, 0.1, 0.0]])}
    # pairs: d = .1, 0, -.1, .2, .1, 0 -> 3 greater, 2 ties, 1 less
    r = dg.perturbation_detection(ds, pert)[0]
    assert (r.n_greater, r.n_ties, r.n_less) == (3, 2, 1)
    # human column of the Dataset and the paper's threshold (>= 3): keeps the cells with
    # human 4, 5, 3, 3, i.e. d = .1, -.1, .2, .1 (the two ties had human 2 and 1)
    r = dg.perturbation_detection(ds, pert, human="human", min_human=3)[0]
    assert (r.n, r.n_excluded, r.n_greater, r.n_ties, r.n_less) == (4, 2, 3, 0, 1)
    # one-sided sign test: 3 of 4 untied, P(X >= 3 | 4, 1/2) = 5/16
    r = dg.perturbation_detection(ds, pert, human="human", min_human=3, alternative="greater")[0]
    assert r.pvalue == pytest.approx(5 / 16)
    assert r.signature == (
        "test:detection|alt:greater|ci:wilson:0.95|pvalue:sign|atol:0|min_human:3|metaeval:"
        + metaeval.__version__
    )
    f = dg.perturbation_detection(ds, pert).to_frame()
    assert list(f.columns) == dg.Detection.frame_columns()
    assert f.columns[0] == "metric" and "signature" in f.columns


def test_detection_degenerate_and_errors():
    with pytest.warns(UndefinedStatisticWarning, match="no usable pair"):
        r = dg.perturbation_detection([np.nan, 1.0], [1.0, np.nan])[0]
    assert math.isnan(r.statistic) and r.n == 0 and r.n_missing == 2
    assert math.isnan(r.ci_low) and math.isnan(r.pvalue)
    # all tied: accuracy 0, tie share 1, sign test undefined
    r = dg.perturbation_detection([1.0, 2.0], [1.0, 2.0])[0]
    assert (r.statistic, r.tie_share) == (0.0, 1.0) and math.isnan(r.pvalue)
    with pytest.raises(ParameterError, match="min_human needs the human scores"):
        dg.perturbation_detection([1.0], [0.0], min_human=3)
    with pytest.raises(
        DataError, match="original scores have shape \\(2,\\) but perturbed \\(3,\\)"
    ):
        dg.perturbation_detection([1.0, 2.0], [0.0, 1.0, 2.0])
    with pytest.raises(DataError, match="perturbed has metric\\(s\\) 'b' that original lacks"):
        dg.perturbation_detection({"a": [1.0]}, {"b": [0.0]})
    with pytest.raises(ParameterError, match="ci='normal'; choose one of wilson, clopper-pearson"):
        dg.perturbation_detection([1.0], [0.0], ci="normal")
    with pytest.raises(ParameterError, match=r"confidence_level=1.5 must be a number in \(0, 1\)"):
        dg.perturbation_detection([1.0], [0.0], confidence_level=1.5)
    with pytest.raises(DataError, match="human='coherence' names a column"):
        dg.perturbation_detection([1.0], [0.0], human="coherence")


# --------------------------------------------------------------------------
# Kolmogorov-Smirnov score


def ref_ks(a, b):
    """sup |F_a - F_b| by evaluating both empirical CDFs at every observed value."""
    best = 0.0
    for v in sorted(set(a) | set(b)):
        fa = sum(1 for x in a if x <= v) / len(a)
        fb = sum(1 for x in b if x <= v) / len(b)
        best = max(best, abs(fa - fb))
    return best


def test_ks_against_scipy_and_loop_reference():
    rs = np.random.default_rng(3)
    h = rs.integers(1, 6, size=(6, 40)).astype(float)
    metrics = {
        "good": h + rs.normal(0, 1.0, size=h.shape),
        "coarse": np.round(h + rs.normal(0, 2.0, size=h.shape)),  # ties
        "reversed": -h + rs.normal(0, 1.0, size=h.shape),
    }
    metrics["good"][0, :5] = np.nan
    res = dg.ks_score({"human": h, **metrics}, "human", low=3, high=4)
    for r in res:
        x = metrics[r.metric].ravel()
        hv = h.ravel()
        a = [float(v) for v, q in zip(x, hv) if _finite(v) and q < 3]
        b = [float(v) for v, q in zip(x, hv) if _finite(v) and q >= 4]
        sp = stats.ks_2samp(a, b)
        assert r.statistic == pytest.approx(ref_ks(a, b), abs=1e-15)
        assert r.statistic == pytest.approx(sp.statistic, abs=1e-15)
        assert r.pvalue == pytest.approx(sp.pvalue, rel=1e-12)
        assert r.direction == sp.statistic_sign and r.location == sp.statistic_location
        assert (r.n_low, r.n_high) == (len(a), len(b))
        assert r.n_middle == sum(1 for v, q in zip(x, hv) if _finite(v) and 3 <= q < 4)
        assert r.n_missing == int(np.isnan(x).sum())
    assert res.get("good").direction == 1 and res.get("reversed").direction == -1


def test_ks_known_answers():
    h = np.array([1.0, 2.0, 1.0, 2.0, 4.0, 5.0, 4.0, 5.0])
    # identical distributions in both groups: KS 0, p 1
    same = np.array([0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4])
    # perfectly separated: KS 1
    sep = np.array([0.1, 0.2, 0.3, 0.4, 1.1, 1.2, 1.3, 1.4])
    res = dg.ks_score({"h": h, "same": same, "sep": sep}, "h", low=3, high=4)
    assert (res.get("same").statistic, res.get("same").pvalue) == (0.0, 1.0)
    assert res.get("sep").statistic == 1.0 and res.get("sep").direction == 1
    # exact p of perfect separation of 4 vs 4: 2 / C(8, 4) = 1/35
    assert res.get("sep").pvalue == pytest.approx(2 / 70)


def test_ks_summeval_table3_defaults():
    ds = metaeval.load_dataset("summeval").subset(metrics=["ROUGE.1", "BLEU"])
    res = dg.ks_score(ds, "coherence")
    coh = ds.scores("coherence").ravel()
    r = res.get("ROUGE.1")
    # seed paper 001 Table 3, SummEval: low < 3, high >= 4
    assert (r.low, r.high) == (3.0, 4.0)
    assert (r.n_low, r.n_high) == (int((coh < 3).sum()), int((coh >= 4).sum()))
    assert r.signature == (
        "human:coherence|level:global|test:ks|pvalue:auto|low:3|high:4|metaeval:"
        + metaeval.__version__
    )
    m = res.matrix()
    assert list(m.index) == ["ROUGE.1", "BLEU"] and list(m.columns) == ["coherence"]
    # all four human dimensions by default
    assert len(dg.ks_score(ds)) == 2 * 16


def test_ks_degenerate_and_errors():
    h = np.array([1.0, 2.0, 2.5])
    with pytest.warns(
        UndefinedStatisticWarning, match="high-quality group \\(human >= 4\\) is empty"
    ):
        r = dg.ks_score({"h": h, "m": h}, "h", low=3, high=4)[0]
    assert math.isnan(r.statistic) and r.n_high == 0 and r.direction == 0
    with pytest.raises(ParameterError, match="give the group thresholds low= and high=.*summeval"):
        dg.ks_score({"h": h, "m": h}, "h")
    with pytest.raises(ParameterError, match="give both low= and high="):
        dg.ks_score({"h": h, "m": h}, "h", low=3)
    with pytest.raises(ParameterError, match="high=2 is below low=3"):
        dg.ks_score({"h": h, "m": h}, "h", low=3, high=2)
    with pytest.raises(DataError, match="unknown metric column\\(s\\): x"):
        dg.ks_score({"h": h, "m": h}, "h", low=1, high=2, metrics="x")
    with pytest.raises(
        DataError, match="human='m' is not a human score column.*\\(it is a metric column\\)"
    ):
        dg.ks_score(
            Dataset.from_arrays({"h": h[None], "m": h[None]}, human="h"), "m", low=1, high=2
        )
    with pytest.raises(ParameterError, match="with a mapping of score arrays, name the human"):
        dg.ks_score({"h": h, "m": h})


# --------------------------------------------------------------------------
# meta-correlation


def ref_meta(x, y, method="spearman", meta="spearman"):
    """(Q, P, M) by loops: Eq. 5 row means, Eq. 6 row correlations, Eq. 7."""
    f = {"spearman": ref.spearman, "pearson": ref.pearson, "kendall_b": ref.kendall_b}
    Q, P = [], []
    for i in range(len(y)):
        hv = [v for v in y[i] if _finite(v)]
        Q.append(sum(hv) / len(hv) if hv else math.nan)
        P.append(f[method](list(x[i]), list(y[i])))
    keep = [k for k in range(len(Q)) if _finite(Q[k]) and _finite(P[k])]
    M = f[meta]([P[k] for k in keep], [Q[k] for k in keep])
    return Q, P, M


@pytest.mark.parametrize(
    "method, meta", [("spearman", None), ("pearson", "kendall_b"), ("kendall_b", None)]
)
def test_meta_correlation_against_loop_reference(method, meta):
    rs = np.random.default_rng(4)
    N, M = 8, 25
    h = rs.integers(1, 6, size=(N, M)).astype(float) + rs.normal(0, 0.3, size=(N, 1))
    x = h + rs.normal(0, 1 + np.arange(N)[:, None] / 3, size=(N, M))
    x[2, :4] = np.nan
    h[5, 3] = np.nan
    res = dg.meta_correlation({"human": h, "m": x}, "human", method=method, meta_method=meta)[0]
    Q, P, Mref = ref_meta(x.tolist(), h.tolist(), method, meta or method)
    np.testing.assert_allclose(res.quality, Q, rtol=1e-12)
    np.testing.assert_allclose(res.system_correlation, P, rtol=1e-10, atol=1e-12)
    assert res.statistic == pytest.approx(Mref, rel=1e-10, abs=1e-12)
    scipy_fn = {"spearman": stats.spearmanr, "pearson": stats.pearsonr}.get(meta or method)
    if scipy_fn is None:
        p = stats.kendalltau(P, Q).pvalue
    elif scipy_fn is stats.spearmanr:
        p = spearman_test(P, Q).pvalue  # exact up to 9 pairs (tests/_spearman.py)
    else:
        p = scipy_fn(P, Q).pvalue
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    # the sample-level correlation (Eq. 3) is the global-level one
    ok = np.isfinite(x.ravel()) & np.isfinite(h.ravel())
    glob = {"spearman": ref.spearman, "pearson": ref.pearson, "kendall_b": ref.kendall_b}[method]
    assert res.sample_correlation == pytest.approx(
        glob(list(x.ravel()[ok]), list(h.ravel()[ok])), rel=1e-10
    )


def test_meta_correlation_known_answer_and_dropped_system():
    # Q = 2.5, 3.5, 4.5, 5.5; within-system agreement falls as quality rises:
    # P = 1 (exact copy), 0.8 (one adjacent swap of 4 ranks: 1 - 6*2/60), 0, -1 -> M = -1
    base = np.array([1.0, 2.0, 3.0, 4.0])
    h = np.vstack([base + k for k in range(4)])
    x = np.vstack([base, [1, 2, 4, 3], [3, 1, 4, 2], base[::-1]])
    r = dg.meta_correlation({"human": h, "m": x}, "human")[0]
    np.testing.assert_allclose(r.system_correlation, [1.0, 0.8, 0.0, -1.0], atol=1e-12)
    assert r.statistic == pytest.approx(-1.0) and r.n_systems == 4
    # a system with a constant metric: P is NaN, warned, counted, and left out
    x2 = x.copy()
    x2[3] = 7.0
    with pytest.warns(ConstantInputWarning, match="1 of 4 systems have constant scores"):
        r = dg.meta_correlation({"human": h, "m": x2}, "human")[0]
    assert (r.n_systems, r.n_systems_dropped, r.n_constant, r.n_too_few) == (3, 1, 1, 0)
    assert r.statistic == pytest.approx(-1.0)
    sf = dg.MetaCorrelations((r,)).systems_frame()
    assert list(sf.columns) == ["metric", "human", "system", "quality", "correlation", "n"]
    assert sf.quality.tolist() == [2.5, 3.5, 4.5, 5.5]
    with pytest.raises(DataError, match="at least 3 are needed"):
        dg.meta_correlation({"human": h[:2], "m": x[:2]}, "human")
    with pytest.raises(ParameterError, match="method='acc_23' is not offered here"):
        dg.meta_correlation({"human": h, "m": x}, "human", method="acc_23")
    with pytest.raises(ParameterError, match="method='tau' is not a known coefficient"):
        dg.meta_correlation({"human": h, "m": x}, "human", method="tau")


# --------------------------------------------------------------------------
# pre-assessment sample size (Appendix C)


def test_sample_size_against_recreated_draws():
    rs = np.random.default_rng(5)
    h = rs.integers(1, 6, size=(4, 30)).astype(float)
    x = h + rs.normal(0, 2, size=h.shape)
    x[0, 0] = np.nan  # 119 valid texts
    sizes, B = (10, 25), 40
    res = dg.sample_size(
        {"human": h, "m": x}, "human", sizes=sizes, n_resamples=B, rng=42, threshold=0.2
    )[0]
    ok = np.isfinite(x.ravel())
    xv, hv = x.ravel()[ok], h.ravel()[ok]
    assert res.n_valid == 119
    for k, n in enumerate(sizes):
        gen = _stream(42, "sample_size", "human", "m", str(n))
        idx = np.argsort(gen.random((B, 119)), axis=1)[:, :n]
        rhos = [stats.spearmanr(xv[row], hv[row]).statistic for row in idx]
        assert res.mean[k] == pytest.approx(statistics.fmean(rhos), rel=1e-10)
        assert res.std[k] == pytest.approx(statistics.stdev(rhos), rel=1e-9)
        np.testing.assert_allclose(res.distribution[k], rhos, rtol=1e-10)
    assert res.statistic == pytest.approx(stats.spearmanr(xv, hv).statistic, rel=1e-12)
    # smallest size with std < 0.2
    expect = next((n for n, s in zip(sizes, res.std) if s < 0.2), None)
    assert res.recommended == expect
    f = dg.SampleSizes((res,)).to_frame()
    assert f["size"].tolist() == list(sizes) and len(f) == 2
    assert f.columns.tolist() == dg.SampleSize.frame_columns()


def test_sample_size_known_answer_determinism_and_errors():
    h = np.arange(60.0)
    data = {"human": h, "m": np.exp(h / 10)}  # monotone: every subset has rho = 1
    r = dg.sample_size(data, "human", sizes=[5, 20, 50], rng=0, threshold=0.01)[0]
    np.testing.assert_allclose(r.mean, 1.0)
    np.testing.assert_allclose(r.std, 0.0, atol=1e-12)
    assert r.recommended == 5
    a = dg.sample_size(data, "human", sizes=[5], rng=7)[0].distribution
    b = dg.sample_size(data, "human", sizes=[5], rng=7)[0].distribution
    np.testing.assert_array_equal(a, b)
    # no threshold: no recommendation
    assert dg.sample_size(data, "human", sizes=[5], rng=0)[0].recommended is None
    # constant subsets are undefined: warned and counted
    data2 = {"human": h, "m": np.r_[np.zeros(55), np.arange(5.0)]}
    with pytest.warns(UndefinedStatisticWarning, match="subsets have an undefined correlation"):
        r = dg.sample_size(data2, "human", sizes=[3], n_resamples=200, rng=0)[0]
    assert r.n_nan[0] > 0 and np.isnan(r.distribution[0]).sum() == r.n_nan[0]
    with pytest.raises(ParameterError, match="sizes \\[100\\] exceed the 60 texts"):
        dg.sample_size(data, "human", sizes=[20, 100])
    with pytest.raises(ParameterError, match="sizes must be >= 3"):
        dg.sample_size(data, "human", sizes=[2])
    with pytest.raises(ParameterError, match="n_resamples=0 must be >= 1"):
        dg.sample_size(data, "human", n_resamples=0, sizes=[5])


# --------------------------------------------------------------------------
# reference sensitivity (Appendix B)


def ref_reference_draws(S, h, B, seed, human, metric):
    """The correlation (global Spearman, reference.py) for each re-created draw."""
    N, M, R = S.shape
    avail = [[k for k in range(R) if any(_finite(S[i, j, k]) for i in range(N))] for j in range(M)]
    u = _stream(seed, "reference_sensitivity", human, metric).random((B, M))
    out = []
    for b in range(B):
        xs, ys = [], []
        for j in range(M):
            if not avail[j]:
                continue
            k = avail[j][min(int(u[b, j] * len(avail[j])), len(avail[j]) - 1)]
            for i in range(N):
                xs.append(S[i, j, k])
                ys.append(h[i, j])
        out.append(ref.spearman(xs, ys))
    return out


def test_reference_sensitivity_against_recreated_draws():
    rs = np.random.default_rng(6)
    N, M, R = 4, 7, 3
    h = rs.integers(1, 6, size=(N, M)).astype(float)
    S = h[:, :, None] + rs.normal(0, 1.5, size=(N, M, R))
    S[:, 2, 1] = np.nan  # input 2 lacks reference 1
    S[:, 5, 2] = np.nan
    ds = Dataset.from_arrays({"human": h}, human="human")
    res = dg.reference_sensitivity(ds, "human", scores={"m": S}, n_resamples=25, rng=3)[0]
    expect = ref_reference_draws(S, h, 25, 3, "human", "m")
    np.testing.assert_allclose(res.distribution, expect, rtol=1e-10)
    assert res.statistic == pytest.approx(statistics.fmean(expect), rel=1e-10)
    assert res.std == pytest.approx(statistics.stdev(expect), rel=1e-9)
    assert (res.min, res.max) == pytest.approx((min(expect), max(expect)), rel=1e-12)
    assert res.n_references == 3 and res.n_nan == 0
    # per fixed reference: reference 1 is missing for input 2 (those cells are left out)
    for k in range(R):
        ok = np.isfinite(S[:, :, k].ravel())
        assert res.reference_statistics[k] == pytest.approx(
            ref.spearman(list(S[:, :, k].ravel()[ok]), list(h.ravel()[ok])), rel=1e-10
        )


def test_reference_sensitivity_known_answer_identical_references():
    # every reference gives the same scores: every draw has the same correlation
    rs = np.random.default_rng(7)
    h = rs.normal(size=(3, 10))
    x = h + rs.normal(size=(3, 10))
    S = np.repeat(x[:, :, None], 5, axis=2)
    ds = Dataset.from_arrays({"human": h}, human="human")
    r = dg.reference_sensitivity(
        ds, scores=S, n_resamples=50, rng=0, level="system", method="pearson"
    )[0]
    expect = stats.pearsonr(x.mean(1), h.mean(1)).statistic
    np.testing.assert_allclose(r.distribution, expect, rtol=1e-12)
    assert r.std == pytest.approx(0.0, abs=1e-12) and r.metric == "metric"


def test_reference_sensitivity_callable_equals_precomputed():
    systems, inputs = ["a", "b", "c"], ["x", "y", "z", "w"]
    words = "the cat sat on a mat dog ran far away".split()
    rs = np.random.default_rng(8)
    rows = []
    for s in systems:
        for i in inputs:
            rows.append(
                {
                    "system": s,
                    "input": i,
                    "hypothesis": " ".join(rs.choice(words, 6)),
                    # input w has 2 references, the others 3
                    "references": tuple(
                        " ".join(rs.choice(words, 5)) for _ in range(2 if i == "w" else 3)
                    ),
                }
            )
    texts = pd.DataFrame(rows)
    h = rs.integers(1, 6, size=(3, 4)).astype(float)
    ds = Dataset.from_arrays(
        {"human": h}, human="human", systems=systems, inputs=inputs, texts=texts
    )

    calls = []

    def overlap(hyps, refs):
        calls.append(len(hyps))
        return [len(set(a.split()) & set(b.split())) for a, b in zip(hyps, refs)]

    # the (N, M, R) array by hand
    S = np.full((3, 4, 3), np.nan)
    for row in rows:
        for k, r in enumerate(row["references"]):
            S[systems.index(row["system"]), inputs.index(row["input"]), k] = len(
                set(row["hypothesis"].split()) & set(r.split())
            )
    a = dg.reference_sensitivity(ds, score={"overlap": overlap}, n_resamples=30, rng=1)[0]
    b = dg.reference_sensitivity(ds, scores={"overlap": S}, n_resamples=30, rng=1)[0]
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert calls == [12, 12, 9]  # one call per reference index; input w lacks the third
    np.testing.assert_allclose(a.distribution, ref_reference_draws(S, h, 30, 1, "human", "overlap"))


def test_reference_sensitivity_errors():
    h = np.ones((2, 3))
    h[0, 0] = 2.0
    ds = Dataset.from_arrays({"human": h}, human="human")
    with pytest.raises(ParameterError, match="give exactly one of scores= .* and score="):
        dg.reference_sensitivity(ds)
    with pytest.raises(DataError, match="expected \\(N, M, R\\) = \\(2, 3, R\\)"):
        dg.reference_sensitivity(ds, scores=np.ones((2, 3)))
    with pytest.raises(DataError, match="needs the dataset's texts"):
        dg.reference_sensitivity(ds, score=lambda h, r: [0.0] * len(h))
    # issue 17.2: a wrong data type is a TypeError naming the accepted types
    with pytest.raises(TypeError, match="must be a metaeval Dataset or a pandas DataFrame"):
        dg.reference_sensitivity({"human": h}, "human", scores=np.ones((2, 3, 2)))


# --------------------------------------------------------------------------
# correlation design (seed paper 003)


def ref_design(arrays, level, method="spearman", alternative="two-sided"):
    """{(i, j): (statistic, pvalue, n)} by scipy on each pair (matched system means)."""
    fn = {
        "spearman": lambda a, b: spearman_test(a, b, alternative=alternative),
        "pearson": lambda a, b: stats.pearsonr(a, b, alternative=alternative),
        "kendall_b": lambda a, b: stats.kendalltau(a, b, alternative=alternative),
    }[method]
    out = {}
    k = len(arrays)
    for i in range(k):
        for j in range(i + 1, k):
            A, B = arrays[i], arrays[j]
            if level == "global":
                xs = [a for a, b in zip(A.ravel(), B.ravel()) if _finite(a) and _finite(b)]
                ys = [b for a, b in zip(A.ravel(), B.ravel()) if _finite(a) and _finite(b)]
            else:
                xs, ys = [], []
                for r in range(A.shape[0]):
                    cells = [(a, b) for a, b in zip(A[r], B[r]) if _finite(a) and _finite(b)]
                    if cells:
                        xs.append(sum(c[0] for c in cells) / len(cells))
                        ys.append(sum(c[1] for c in cells) / len(cells))
            if len(set(xs)) < 2 or len(set(ys)) < 2:
                out[i, j] = (math.nan, math.nan, len(xs))
            else:
                res = fn(xs, ys)
                out[i, j] = (res.statistic, res.pvalue, len(xs))
    return out


@pytest.mark.parametrize("method", ["spearman", "pearson", "kendall_b"])
@pytest.mark.parametrize("with_nan", [False, True])
def test_correlation_design_against_pairwise_scipy(method, with_nan):
    rs = np.random.default_rng(9)
    N, M = 7, 20
    q = rs.normal(size=(N, 1))
    cols = {
        "adequacy": q + rs.normal(size=(N, M)),
        "fluency": q + rs.normal(size=(N, M)),
        "bleu": q + rs.normal(scale=2, size=(N, M)),
        "meteor": q + rs.normal(scale=0.5, size=(N, M)),
        "ter": -q + rs.normal(size=(N, M)),
    }
    if with_nan:
        cols["bleu"][1, :3] = np.nan
        cols["fluency"][4, 7] = np.nan
    res = dg.correlation_design(
        cols, human=["adequacy", "fluency"], method=method, alpha={"system": 0.05, "global": 0.001}
    )
    arrays = list(cols.values())
    assert res.columns == tuple(cols) and res.kinds == (
        "human",
        "human",
        "metric",
        "metric",
        "metric",
    )
    frame = res.to_frame()
    for lv in ("system", "global"):
        refd = ref_design(arrays, lv, method)
        m = sum(1 for v in refd.values() if _finite(v[1]))
        for (i, j), (s, p, n) in refd.items():
            assert res.statistic[lv][i, j] == pytest.approx(s, rel=1e-9, abs=1e-12)
            assert res.statistic[lv][j, i] == res.statistic[lv][i, j]
            assert res.pvalue[lv][i, j] == pytest.approx(p, rel=1e-8, abs=1e-300)
            assert res.n[lv][i, j] == n
            # Bonferroni: min(1, m p), m = 10 pairs per level
            assert res.pvalue_adjusted[lv][i, j] == pytest.approx(
                min(1.0, m * p), rel=1e-8, abs=1e-300
            )
            row = frame[
                (frame.level == lv)
                & (frame.column_1 == res.columns[i])
                & (frame.column_2 == res.columns[j])
            ]
            assert bool(row.significant.iloc[0]) == (min(1.0, m * p) <= res.alpha[lv])
        assert m == 10
    assert len(frame) == 2 * 10
    assert res.alpha == {"system": 0.05, "global": 0.001}
    assert frame.signature.iloc[0].startswith("level:system|method:" + method)
    assert "alpha:0.001" in frame.signature.iloc[-1]


def test_correlation_design_corrections_constant_column_and_matrix():
    rs = np.random.default_rng(10)
    h = rs.normal(size=(5, 12))
    cols = {
        "h": h,
        "m1": h + rs.normal(size=h.shape),
        "m2": rs.normal(size=h.shape),
        "const": np.ones_like(h),
    }
    with pytest.warns(ConstantInputWarning, match="3 of 6 pairs have an undefined correlation"):
        res = dg.correlation_design(cols, human="h", levels="global", correction="holm")
    assert res.n_undefined == {"global": 3} and res.levels == ("global",)
    iu = np.triu_indices(4, 1)
    np.testing.assert_allclose(
        res.pvalue_adjusted["global"][iu], adjust_pvalues(res.pvalue["global"][iu], method="holm")
    )
    mat = res.matrix("global")
    assert list(mat.index) == ["h", "m1", "m2", "const"] and mat.loc["h", "h"] == 1.0
    assert res.matrix("global", "significant").loc["h", "m1"] in (True, False)
    with pytest.raises(ParameterError, match="level='system' was not computed"):
        res.matrix("system")
    with pytest.raises(
        ParameterError, match="levels input: the correlation design compares single correlations"
    ):
        dg.correlation_design(cols, human="h", levels=["system", "input"])
    with pytest.raises(
        ParameterError, match="correction='sidak'; choose one of bonferroni, holm, bh, none"
    ):
        dg.correlation_design(cols, human="h", correction="sidak")
    with pytest.raises(ParameterError, match="alpha has no value for level\\(s\\) global"):
        dg.correlation_design(cols, human="h", alpha={"system": 0.05})
    with pytest.raises(DataError, match="unknown column\\(s\\): bleu"):
        dg.correlation_design(cols, human="h", columns=["h", "bleu"])


def test_correlation_design_summeval_subset():
    ds = metaeval.load_dataset("summeval").subset(metrics=["ROUGE.1", "BLEU", "BARTScore"])
    res = dg.correlation_design(
        ds, columns=["coherence", "fluency", "ROUGE.1", "BLEU", "BARTScore"]
    )
    # spot check: system level = Spearman of the 17 system means (no missing cells)
    a, b = ds.scores("coherence").mean(1), ds.scores("ROUGE.1").mean(1)
    assert res.statistic["system"][0, 2] == pytest.approx(
        stats.spearmanr(a, b).statistic, rel=1e-12
    )
    assert res.n["system"][0, 2] == 17 and res.n["global"][0, 2] == 1700


# --------------------------------------------------------------------------
# plots: the figures' data, not their pixels


@pytest.fixture
def plt():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_plots_carry_the_results(plt):
    rs = np.random.default_rng(11)
    h = rs.integers(1, 6, size=(5, 30)).astype(float)
    data = {"h": h, "g": h + rs.normal(size=h.shape), "b": rs.normal(size=h.shape)}
    ks = dg.ks_score(data, "h", low=3, high=4)
    fig = dg.plot_ks(ks)
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), ks.matrix().to_numpy())

    det = dg.perturbation_detection(
        {"g": h.ravel(), "b": h.ravel()}, {"g": h.ravel() - 1, "b": h.ravel() + rs.normal(size=150)}
    )
    fig = dg.plot_detection({"p1": det, "p2": det})
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == [r.statistic for r in det] * 2

    mc = dg.meta_correlation(data, "h")
    fig = dg.plot_meta_correlation(mc)
    assert [p.get_height() for p in fig.axes[0].patches] == [r.statistic for r in mc]
    red = fig.axes[0].collections[0].get_offsets()[:, 1]
    np.testing.assert_allclose(red, [r.sample_correlation for r in mc])

    S = h[:, :, None] + rs.normal(size=(5, 30, 4))
    rsens = dg.reference_sensitivity(
        Dataset.from_arrays({"h": h}, human="h"), scores={"m": S}, n_resamples=60, rng=0
    )
    fig = dg.plot_reference_sensitivity(rsens, bins=10)
    counts = [p.get_height() for p in fig.axes[0].patches]
    edges = np.histogram_bin_edges(rsens[0].distribution, bins=10)
    np.testing.assert_array_equal(counts, np.histogram(rsens[0].distribution, bins=edges)[0])

    cd = dg.correlation_design(data, human="h")
    fig = dg.plot_correlation_design(cd)
    for ax, lv in zip(fig.axes[:2], cd.levels):
        np.testing.assert_array_equal(ax.images[0].get_array(), cd.matrix(lv).to_numpy())
        crosses = (
            {tuple(map(int, o)) for o in ax.collections[0].get_offsets()}
            if ax.collections
            else set()
        )
        expect = {
            (j, i)
            for i in range(3)
            for j in range(3)
            if i != j and not cd.pvalue_adjusted[lv][i, j] <= cd.alpha[lv]
        }
        assert crosses == expect


def test_plotting_library_is_imported_only_inside_plot_functions():
    # module-level imports of diagnostics and perturb (import metaeval stays light)
    import ast
    import inspect

    import metaeval.perturb._api
    import metaeval.perturb._text
    import metaeval.perturb._transforms

    for mod in (dg, metaeval.perturb._api, metaeval.perturb._text, metaeval.perturb._transforms):
        tree = ast.parse(inspect.getsource(mod))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [a.name for n in top for a in n.names] + [
            n.module or "" for n in top if isinstance(n, ast.ImportFrom)
        ]
        assert not any(x.startswith("matplotlib") for x in names), mod.__name__


def test_results_to_dict_round_trip():
    h = np.arange(12.0).reshape(3, 4)
    data = {"h": h, "m": h**2 + np.array([[0, 0, 5, 0], [0, 9, 0, 0], [0, 0, 0, 0]])}
    for res in (
        dg.ks_score(data, "h", low=3, high=8),
        dg.meta_correlation(data, "h"),
        dg.sample_size(data, "h", sizes=[5], rng=0),
    ):
        d = res.to_dict()
        assert len(d["results"]) == len(res) and "signature" in d["results"][0]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res.to_frame()
    cd = dg.correlation_design(data, human="h")
    d = cd.to_dict(arrays=True)
    assert d["statistic"]["global"][0][1] == pytest.approx(float(cd.statistic["global"][0, 1]))
    assert d["columns"] == ["h", "m"] and d["level_signatures"]["system"].startswith("level:system")
