"""Tests of the public :func:`metaeval.correlate` (statistic, counts, warnings,
p-values, confidence intervals, reproducibility, input validation).

Oracles, each named where it is used:

* ``tests/reference.py`` (``ref``): slow pure-Python levels and coefficients;
* scipy (``pearsonr``, ``spearmanr``, ``kendalltau``) on system means / cells
  computed here with NumPy from the raw matrices;
* nlpstats 0.0.1 ``fisher`` (run live) and its tests' values
  (tests/correlations/fisher_test.py::test_fisher_regression);
* slow references in this file that re-create the random draws from the
  documented stream (``_unit_generator(SeedSequence(rng), metric, level,
  method)``, then ``shuffle_within_groups`` / ``bootstrap_indices``) and
  recompute every replicate with scipy / ``ref`` in Python loops.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from _spearman import spearman_test
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nlpstats.correlations import fisher as nlp_fisher
from scipy import stats

from metaeval import (
    ConstantInputWarning,
    DataError,
    Dataset,
    MetaevalError,
    MetaevalWarning,
    ParameterError,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
    correlate,
)
from metaeval.correlation import _unit_generator
from metaeval.stats import resampling

try:  # tests/ as a package or as a rootdir on sys.path
    from . import boot_reference as br
    from . import reference as ref
except ImportError:  # pragma: no cover - depends on how pytest imports tests
    import boot_reference as br
    import reference as ref

NAN = np.nan
LEVELS = ("system", "input", "item", "global")
CORRELATIONS = ("pearson", "spearman", "kendall_b", "kendall_c")
PAIR_STATS = ("kendall_23", "acc_23", "acc_eq")
ALL_METHODS = CORRELATIONS + PAIR_STATS  # pairwise_accuracy: system level only
TOL = 1e-12  # metaeval.correlation.RESAMPLING_TOL, as documented in compare.py

HYP = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------
# data

# A hand-made 5 systems x 6 inputs table with every degenerate case:
#   * human row 1 is constant (item level: constant human group);
#   * metric row 3 is constant (item level: constant metric group);
#   * metric row 2 has one cell matched with the human (item: too few pairs);
#   * human column 0 is constant over its matched cells (input: constant);
#   * metric column 5 has one matched cell (input: too few pairs);
#   * NaN cells in both, at different places (pairwise deletion).
H_MESSY = np.array(
    [
        [3, 2, 3, 4, 5, 2],
        [3, 3, 3, 3, 3, 3],
        [3, NAN, 4, 1, 5, 3],
        [3, 4, NAN, 2, 1, 4],
        [3, 1, 2, NAN, 4, NAN],
    ]
)
M_MESSY = np.array(
    [
        [0.1, 0.5, 0.3, 0.9, 0.7, NAN],
        [0.4, 0.2, 0.8, 0.6, 0.1, 0.3],
        [NAN, 0.6, NAN, NAN, 0.9, NAN],
        [0.5, 0.5, 0.5, 0.5, 0.5, NAN],
        [0.2, 0.3, 0.9, 0.4, 0.8, 0.6],
    ]
)
# An integer metric with many ties, and one constant everywhere.
T_MESSY = np.array(
    [
        [3, 2, 2, 4, 4, 1],
        [2, 2, 3, 3, 1, 3],
        [2, 1, 4, NAN, 4, 3],
        [4, 4, 1, 2, 1, 4],
        [3, 1, 2, 2, 4, 2],
    ]
)
FLAT_MESSY = np.ones((5, 6))


def messy():
    return Dataset.from_arrays(
        {"h": H_MESSY, "m": M_MESSY, "t": T_MESSY, "flat": FLAT_MESSY}, human="h"
    )


def random_ds(seed, n_sys=6, n_inp=8, signal=1.0, nan_frac=0.0):
    """Human h; metrics good (h + noise), noise (independent), coarse (rounded)."""
    g = np.random.default_rng(seed)
    h = g.normal(size=(n_sys, n_inp))
    good = signal * h + g.normal(size=h.shape)
    noise = g.normal(size=h.shape)
    coarse = np.round(h + g.normal(size=h.shape))
    if nan_frac:
        good = np.where(g.random(h.shape) < nan_frac, NAN, good)
        h2 = np.where(g.random(h.shape) < nan_frac, NAN, h)
        h2[:, 0] = h[:, 0]
        h2[0, :] = h[0, :]  # every system and input keeps a human score
        h = h2
    return Dataset.from_arrays({"h": h, "good": good, "noise": noise, "coarse": coarse}, human="h")


# --------------------------------------------------------------------------
# independent helpers


def finite_pairs(a, b):
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    return a[ok], b[ok]


def matched_means(x, y):
    """Per-system means over the cells where both are present (NaN if none)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    cnt = ok.sum(1)
    mx = np.array([math.fsum(x[i][ok[i]]) / cnt[i] if cnt[i] else NAN for i in range(len(x))])
    my = np.array([math.fsum(y[i][ok[i]]) / cnt[i] if cnt[i] else NAN for i in range(len(y))])
    return mx, my


def scipy_coefficient(a, b, method):
    """One group's coefficient: scipy for the correlations, ref for the rest."""
    a, b = finite_pairs(a, b)
    if a.size < 2:
        return NAN
    if method in CORRELATIONS and (np.ptp(a) == 0 or np.ptp(b) == 0):
        return NAN
    if method == "pearson":
        return float(stats.pearsonr(a, b).statistic)
    if method == "spearman":
        return float(stats.spearmanr(a, b).statistic)
    if method == "kendall_b":
        return float(stats.kendalltau(a, b, variant="b").statistic)
    if method == "kendall_c":
        return float(stats.kendalltau(a, b, variant="c").statistic)
    if method == "kendall_23":
        return ref.kendall_23(a.tolist(), b.tolist())
    if method in ("acc_23", "pairwise_accuracy"):
        return ref.acc_23(a.tolist(), b.tolist())
    raise ValueError(method)


def macro(values):
    v = [x for x in values if not math.isnan(x)]
    return sum(v) / len(v) if v else NAN


def scipy_level(x, y, level, method):
    """Level statistic (macro) with scipy per group; groups from ``ref.arrange``."""
    groups = ref.arrange(np.asarray(x, float), np.asarray(y, float), level)
    return macro([scipy_coefficient(gx, gy, method) for gx, gy in groups])


def expected_counts(x, y, level, method):
    """n, n_groups, n_groups_dropped, n_constant, n_too_few, counted from ref.arrange."""
    groups = ref.arrange(x, y, level)
    n = too_few = const = 0
    for gx, gy in groups:
        p = ref.valid_pairs(gx, gy)
        if len(p) < 2:
            too_few += 1
            continue
        constant = len({a for a, _ in p}) < 2 or len({b for _, b in p}) < 2
        if method in CORRELATIONS and constant:
            const += 1
            continue
        n += len(p)
    return {"n": n, "n_groups": len(groups), "n_groups_dropped": too_few + const,
                "n_constant": const, "n_too_few": too_few}


def resampling_p(null, obs, alternative, centred):
    """(count + 1) / (n + 1) over the finite null values, count with a relative
    tie tolerance of 1e-12 (correlate's docstring; Phipson & Smyth 2010 for +1)."""
    null = [v for v in null if math.isfinite(v)]
    tol = TOL * max(1.0, abs(obs))
    if alternative == "greater":
        count = sum(v >= obs - tol for v in null)
    elif alternative == "less":
        count = sum(v <= obs + tol for v in null)
    else:
        c = sum(null) / len(null) if centred else 0.0
        count = sum(abs(v - c) >= abs(obs - c) - tol for v in null)
    return (count + 1) / (len(null) + 1)


def seed_of(signature):
    m = re.search(r"\|seed:(\d+)\|", signature)
    assert m, signature
    return int(m.group(1))


def record(fn, *a, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*a, **kw)
    return out, [x.category for x in w]


# --------------------------------------------------------------------------
# statistic and counts vs tests/reference.py


def test_messy_dataset_exercises_every_degenerate_case():
    # guard: the hand-made data must contain what the tests below rely on
    c_item = expected_counts(M_MESSY, H_MESSY, "item", "pearson")
    c_inp = expected_counts(M_MESSY, H_MESSY, "input", "pearson")
    assert c_item["n_constant"] == 2 and c_item["n_too_few"] == 1
    assert c_inp["n_constant"] >= 1 and c_inp["n_too_few"] == 1


@pytest.mark.parametrize("average", ["macro", "micro"])
@pytest.mark.parametrize("level", LEVELS)
def test_statistic_and_counts_match_reference(level, average):
    ds = messy()
    methods = list(ALL_METHODS) + (["pairwise_accuracy"] if level == "system" else [])
    res, cats = record(correlate, ds, "h", level=level, method=methods, average=average,
                       ci="none", pvalue="none", rng=0)
    assert len(res) == 3 * len(methods)  # metrics x methods, nothing else
    seen = set()
    for r in res:
        x = ds.scores(r.metric)
        meth = "acc_23" if r.method == "pairwise_accuracy" else r.method
        expected = ref.level(x, H_MESSY, level, meth, average=average)  # slow reference
        np.testing.assert_allclose(r.statistic, expected.value, rtol=1e-12, atol=1e-14,
                                   equal_nan=True, err_msg=f"{r.metric} {r.method}")
        np.testing.assert_allclose(r.group_statistics, expected.group, rtol=1e-12,
                                   atol=1e-14, equal_nan=True)
        if r.method == "acc_eq":  # the calibrated threshold itself
            assert r.epsilon == expected.epsilon
        else:
            assert math.isnan(r.epsilon)
        cnt = expected_counts(x, H_MESSY, level, r.method)
        got = {k: getattr(r, k) for k in cnt}
        assert got == cnt, (r.metric, r.method)
        seen.add((r.n_constant > 0, r.n_too_few > 0))
        assert r.level == level and r.average == average and r.human == "h"
    # every dropped group is announced with its typed warning
    want = set()
    if any(r.n_constant for r in res):
        want.add(ConstantInputWarning)
    if any(r.n_too_few for r in res):
        want.add(TooFewPairsWarning)
    assert set(cats) == want
    if level == "item":
        assert (True, True) in seen  # constant and too-few groups in one result


@pytest.mark.filterwarnings("ignore::metaeval.DegenerateGroupWarning")  # the other kind
@pytest.mark.parametrize(
    "metric, level, method, warning",
    [
        ("m", "item", "pearson", ConstantInputWarning),
        ("m", "item", "kendall_b", TooFewPairsWarning),
        ("m", "input", "spearman", TooFewPairsWarning),
        ("flat", "system", "pearson", ConstantInputWarning),
        ("flat", "global", "kendall_c", ConstantInputWarning),
    ],
)
def test_degenerate_groups_warn_with_a_typed_warning(metric, level, method, warning):
    with pytest.warns(warning, match=rf"{method} of metric '{metric}' vs 'h'"):
        r = correlate(messy(), "h", metrics=metric, level=level, method=method, ci="none")[0]
    assert r.n_groups_dropped == r.n_constant + r.n_too_few > 0


def test_constant_metric_is_defined_for_accuracy_statistics_without_warning():
    # acc_23 of a constant metric: every pair is a metric tie, (C + Txy) / N
    # counts only the human ties (ref.acc_23); no group is dropped.
    res, cats = record(correlate, messy(), "h", metrics="flat", level="global",
                       method=["acc_23", "kendall_23"], ci="none")
    assert cats == []
    for r in res:
        assert r.n_groups_dropped == 0 and math.isfinite(r.statistic)
        fn = ref.acc_23 if r.method == "acc_23" else ref.kendall_23
        assert r.statistic == pytest.approx(fn(FLAT_MESSY.ravel().tolist(),
                                               H_MESSY.ravel().tolist()), abs=1e-15)


@pytest.mark.filterwarnings("ignore::metaeval.DegenerateGroupWarning")
def test_level_aliases_resolve_to_the_canonical_level():
    ds = messy()
    for alias, canonical in [("summary", "input"), ("none", "global"), ("system-level", "system")]:
        r = correlate(ds, "h", metrics="m", level=alias, ci="none")[0]
        assert r.level == canonical
        # ref.level on the canonical level
        assert r.statistic == pytest.approx(ref.level(M_MESSY, H_MESSY, canonical, "pearson").value,
                                            abs=1e-13)


@pytest.mark.filterwarnings("ignore::metaeval.DegenerateGroupWarning")
def test_results_container_views():
    res = correlate(messy(), "h", metrics=["m", "t"], level=["system", "item"],
                    method="kendall_b", ci="none", pvalue="none")
    df = res.to_frame()
    assert list(df[["metric", "level"]].itertuples(index=False, name=None)) == [
        ("m", "system"), ("m", "item"), ("t", "system"), ("t", "item")]
    for col in ("statistic", "pvalue", "ci_low", "ci_high", "n", "signature"):
        assert col in df.columns
    assert res.get("t", level="item").statistic == pytest.approx(
        ref.level(T_MESSY, H_MESSY, "item", "kendall_b").value, abs=1e-13)  # ref
    with pytest.raises(KeyError, match="2 results match"):
        res.get("t")
    rec = res.to_records(arrays=True)[0]
    assert isinstance(rec["group_statistics"], list)
    # the columns documented in the Correlations docstring, in that order
    assert list(df.columns) == [
        "metric", "human", "level", "method", "statistic", "pvalue", "ci_low", "ci_high", "n",
        "n_groups", "n_groups_dropped", "n_constant", "n_too_few", "n_two_points", "epsilon", "average",
        "alternative", "confidence_level", "ci_method", "pvalue_method", "n_resamples_nan",
        "signature", "notes"]


# --------------------------------------------------------------------------
# analytic p-values


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("method", CORRELATIONS)
def test_analytic_pvalue_is_scipy_on_system_means_and_on_cells(method, alternative):
    ds = messy()
    fn = {
        "pearson": lambda a, b: stats.pearsonr(a, b, alternative=alternative).pvalue,
        # exact up to 9 pairs (tests/_spearman.py)
        "spearman": lambda a, b: spearman_test(a, b, alternative=alternative).pvalue,
        "kendall_b": lambda a, b: stats.kendalltau(a, b, alternative=alternative).pvalue,
        "kendall_c": lambda a, b: stats.kendalltau(a, b, variant="c",
                                                   alternative=alternative).pvalue,
    }[method]
    for metric in ("m", "t"):
        x = ds.scores(metric)
        res = correlate(ds, "h", metrics=metric, level=["system", "global"], method=method,
                        alternative=alternative, ci="none")
        sys_r, glob_r = res
        mx, my = matched_means(x, H_MESSY)  # NumPy on the raw matrices
        assert sys_r.pvalue_method == "analytic"
        assert sys_r.pvalue == pytest.approx(fn(*finite_pairs(mx, my)), rel=1e-10)  # scipy
        assert glob_r.pvalue == pytest.approx(fn(*finite_pairs(x, H_MESSY)), rel=1e-10)  # scipy
        assert "pvalue:analytic" in sys_r.signature


@pytest.mark.filterwarnings("ignore::metaeval.DegenerateGroupWarning")
def test_auto_pvalue_is_nan_for_averaged_levels_and_pair_statistics():
    res = correlate(messy(), "h", metrics="t", level=LEVELS, method=["pearson", "acc_23"],
                    ci="none")
    for r in res:
        single = r.level in ("system", "global") and r.method == "pearson"
        assert math.isnan(r.pvalue) != single, (r.level, r.method)
        assert r.pvalue_method == ("analytic" if single else "none")
        assert f"pvalue:{r.pvalue_method}" in r.signature
    res = correlate(messy(), "h", metrics="t", method="pearson", ci="none", pvalue="none")
    assert math.isnan(res[0].pvalue)


# --------------------------------------------------------------------------
# permutation p-values: re-create the draws, recompute with scipy / ref


def permutation_reference(ds, metric, level, method, rng, B, alternative):
    """Null distribution and p-value of correlate(pvalue="permutation").

    The draws come from the documented stream; the arranging, the statistic
    and the counting are done here (ref.arrange, scipy/ref per group, loops).
    """
    gen = _unit_generator(np.random.SeedSequence(rng), metric, level, method)
    groups = ref.arrange(ds.scores(metric), ds.scores("h"), level)
    xg = np.array([g[0] for g in groups], float)
    yg = np.array([g[1] for g in groups], float)
    xs, ys = resampling.shuffle_within_groups(gen, xg, yg, B)
    null = []
    for b in range(B):
        vals = []
        for g, (gx, gy) in enumerate(groups):
            # each resample permutes exactly the group's valid metric values and
            # keeps its valid human values
            vx, vy = finite_pairs(gx, gy)
            sx, sy = finite_pairs(xs[b, g], ys[b, g])
            assert sorted(sx) == sorted(vx) and sorted(sy) == sorted(vy)
            vals.append(scipy_coefficient(sx, sy, method))
        null.append(macro(vals))
    obs = scipy_level(ds.scores(metric), ds.scores("h"), level, method)
    centred = method not in CORRELATIONS
    return np.array(null), resampling_p(null, obs, alternative, centred)


@pytest.mark.parametrize(
    "metric, level, method, alternative",
    [
        ("good", "system", "pearson", "two-sided"),
        ("good", "global", "spearman", "greater"),
        ("coarse", "input", "kendall_b", "two-sided"),
        ("noise", "item", "pearson", "less"),
        ("coarse", "item", "acc_23", "two-sided"),  # centred at the null mean
        ("good", "input", "kendall_23", "greater"),
    ],
)
def test_permutation_pvalue_matches_slow_reference(metric, level, method, alternative):
    ds = random_ds(7, nan_frac=0.15)
    B = 99
    r = correlate(ds, "h", metrics=metric, level=level, method=method, pvalue="permutation",
                  ci="none", n_resamples=B, alternative=alternative, rng=11)[0]
    null, p = permutation_reference(ds, metric, level, method, 11, B, alternative)
    np.testing.assert_allclose(r.null_distribution, null, rtol=1e-10, atol=1e-12)
    assert r.pvalue == pytest.approx(p, abs=1e-15)
    k = round(p * (B + 1)) - 1  # p = (count + 1) / (n + 1): never 0
    assert r.pvalue == (k + 1) / (B + 1) and r.pvalue >= 1 / (B + 1)
    assert r.pvalue_method == "permutation"
    assert f"pvalue:permutation:{B}" in r.signature and "seed:11" in r.signature


def test_permutation_pvalue_is_uniform_under_the_null():
    # independent human and metric: over 40 seeds, the share of p < 0.05 is small
    # and the p-values spread over (0, 1]
    ps = []
    for s in range(40):
        g = np.random.default_rng(5000 + s)
        ds = Dataset.from_arrays({"h": g.normal(size=(6, 8)), "m": g.normal(size=(6, 8))},
                                 human="h")
        r = correlate(ds, "h", level="input", method="pearson", pvalue="permutation",
                      ci="none", n_resamples=199, rng=s)[0]
        ps.append(r.pvalue)
    ps = np.array(ps)
    assert 0 <= (ps < 0.05).mean() <= 0.2
    assert 0.25 <= (ps < 0.5).mean() <= 0.75
    assert 0.3 <= ps.mean() <= 0.7
    # and the test has power: a strong association is detected
    ds = random_ds(1, signal=3.0)
    r = correlate(ds, "h", metrics="good", level="input", pvalue="permutation", ci="none",
                  n_resamples=199, rng=0)[0]
    assert r.pvalue == 1 / 200  # nothing in the null reaches it: (0 + 1) / (199 + 1)


# --------------------------------------------------------------------------
# Fisher interval


@pytest.mark.parametrize("confidence_level", [0.95, 0.9])
@pytest.mark.parametrize("level", ["system", "global"])
@pytest.mark.parametrize("method, nlp_name", [("pearson", "pearson"), ("spearman", "spearman"),
                                              ("kendall_b", "kendall")])
def test_fisher_interval_equals_nlpstats(method, nlp_name, level, confidence_level):
    g = np.random.default_rng(4)
    Z = g.normal(size=(9, 6))
    X = Z + g.normal(size=Z.shape)  # no NaN: nlpstats' plain means = our matched means
    ds = Dataset.from_arrays({"z": Z, "x": X}, human="z")
    r = correlate(ds, "z", level=level, method=method, ci="fisher",
                  confidence_level=confidence_level)[0]
    lo, hi = nlp_fisher(X, Z, level, nlp_name, confidence_level)  # nlpstats 0.0.1
    assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), rel=1e-12, abs=1e-14)
    assert f"ci:fisher:{confidence_level}" in r.signature


# nlpstats tests/correlations/fisher_test.py::test_fisher_regression (commit 796d764;
# SacreROUGE sacrerouge/tests/stats_test.py has the same numbers): np.random.seed(12);
# X, Z = np.random.rand(5, 7) twice.
ANCHOR_FISHER = {
    ("global", "pearson"): (-0.0276374, 0.5818846),
    ("system", "pearson"): (-0.6445648, 0.9644395),
    ("global", "spearman"): (-0.0673347, 0.5640759),
    ("system", "spearman"): (-0.6708734, 0.9756771),
    ("global", "kendall_b"): (-0.0299647, 0.4098565),
    ("system", "kendall_b"): (-0.7023911, 0.9377790),
}


@pytest.mark.parametrize("level, method", sorted(ANCHOR_FISHER))
def test_fisher_interval_anchor_c4(level, method):
    rs = np.random.RandomState(12)
    X = rs.rand(5, 7)
    Z = rs.rand(5, 7)
    ds = Dataset.from_arrays({"z": Z, "x": X}, human="z")
    r = correlate(ds, "z", level=level, method=method, ci="fisher")[0]
    assert (r.ci_low, r.ci_high) == pytest.approx(ANCHOR_FISHER[level, method], abs=1e-7)


def test_fisher_interval_closed_form_with_missing_systems():
    # n is the number of systems with a matched mean; Bonett & Wright (2000) form with
    # Pearson's (b, c) = (3, 1)
    ds = messy()
    r = correlate(ds, "h", metrics="m", ci="fisher", confidence_level=0.9)[0]
    mx, my = matched_means(M_MESSY, H_MESSY)
    rr = stats.pearsonr(*finite_pairs(mx, my)).statistic  # scipy
    half = stats.norm.ppf(0.95) / math.sqrt(r.n - 3)
    assert r.n == 5
    assert (r.ci_low, r.ci_high) == pytest.approx(
        (math.tanh(math.atanh(rr) - half), math.tanh(math.atanh(rr) + half)), rel=1e-12)


@pytest.mark.parametrize("level, method", [("input", "pearson"), ("item", "spearman"),
                                           ("system", "kendall_c"), ("global", "acc_23")])
def test_fisher_interval_refused_where_undefined(level, method):
    with pytest.raises(ParameterError, match=r"ci='fisher' applies to single correlations "
                       r"\(levels system, global\).*" + f"{level}/{method}.*boot-both"):
        correlate(messy(), "h", metrics="m", level=level, method=method, ci="fisher")


def test_fisher_interval_with_too_few_systems_is_nan():
    # kendall_b: b = 4; with 4 systems n - b = 0, so the interval is undefined
    g = np.random.default_rng(3)
    h = g.normal(size=(4, 5))
    ds = Dataset.from_arrays({"h": h, "m": h + g.normal(size=h.shape)}, human="h")
    with pytest.warns(UndefinedStatisticWarning):
        r = correlate(ds, "h", method="kendall_b", ci="fisher")[0]
    assert r.n == 4 and math.isnan(r.ci_low) and math.isnan(r.ci_high)


def test_fisher_interval_with_too_few_systems_warns():
    g = np.random.default_rng(3)
    h = g.normal(size=(4, 5))
    ds = Dataset.from_arrays({"h": h, "m": h + g.normal(size=h.shape)}, human="h")
    with pytest.warns(UndefinedStatisticWarning):
        correlate(ds, "h", method="kendall_b", ci="fisher")


# --------------------------------------------------------------------------
# bootstrap interval: re-create the indices, recompute with scipy


def bootstrap_reference(ds, metric, level, method, rng, B, unit, confidence_level=0.95,
                        after_permutation=0):
    gen = _unit_generator(np.random.SeedSequence(rng), metric, level, method)
    x, y = ds.scores(metric), ds.scores("h")
    N, M = x.shape
    if after_permutation:  # the permutation draws come first from the same stream
        groups = ref.arrange(x, y, level)
        xg = np.array([g[0] for g in groups], float)
        yg = np.array([g[1] for g in groups], float)
        resampling.shuffle_within_groups(gen, xg, yg, after_permutation)
    rows, cols = resampling.bootstrap_indices(gen, B, N, M, unit)
    # the unit not resampled keeps the identity
    if unit == "inputs":
        assert (rows == np.arange(N)).all()
    if unit == "systems":
        assert (cols == np.arange(M)).all()
    dist = []
    for b in range(B):
        # from the definitions (tests/boot_reference.py): pair statistics skip
        # the pairs formed by one original drawn twice
        dist.append(br.replicate_statistic(x.tolist(), y.tolist(), rows[b], cols[b], level,
                                           method))
    dist = np.array(dist)
    fin = dist[np.isfinite(dist)]
    a = (1 - confidence_level) / 2
    return dist, tuple(np.percentile(fin, [100 * a, 100 * (1 - a)]))


@pytest.mark.parametrize(
    "metric, level, method, unit",
    [
        ("good", "system", "pearson", "systems"),
        ("good", "global", "kendall_b", "both"),
        ("coarse", "input", "spearman", "inputs"),
        ("coarse", "item", "acc_23", "both"),
        ("noise", "input", "kendall_c", "systems"),
    ],
)
def test_bootstrap_interval_matches_slow_reference(metric, level, method, unit):
    ds = random_ds(3, nan_frac=0.1)
    B = 99
    r, cats = record(correlate, ds, "h", metrics=metric, level=level, method=method,
                     ci=f"boot-{unit}", n_resamples=B, confidence_level=0.9, rng=21)
    r = r[0]
    dist, (lo, hi) = bootstrap_reference(ds, metric, level, method, 21, B, unit, 0.9)
    assert r.distribution.shape == (B,)
    np.testing.assert_allclose(r.distribution, dist, rtol=1e-10, atol=1e-12, equal_nan=True)
    assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), rel=1e-10, abs=1e-12)
    n_nan = int(np.isnan(dist).sum())
    assert r.n_resamples_nan == n_nan
    assert (UndefinedStatisticWarning in cats) == (n_nan > 0.05 * B)
    assert f"ci:boot-{unit}:{B}:0.9" in r.signature


@pytest.mark.parametrize("unit", ["systems", "inputs", "both"])
def test_bootstrap_indices_are_uniform_draws_with_replacement(unit):
    # the reference above re-uses the draws, so check the draws themselves:
    # every position is uniform over its axis (chi-square, scipy), the other
    # axis is the identity
    B, N, M = 3000, 4, 5
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(1), B, N, M, unit)
    assert rows.shape == (B, N) and cols.shape == (B, M)
    for idx, size, resampled in ((rows, N, unit != "inputs"), (cols, M, unit != "systems")):
        if not resampled:
            assert (idx == np.arange(size)).all()
            continue
        for pos in range(size):
            counts = np.bincount(idx[:, pos], minlength=size)
            assert stats.chisquare(counts).pvalue > 1e-4
        # with replacement: some replicates repeat an index
        assert (np.array([len(set(r)) for r in idx]) < size).mean() > 0.5


def test_within_group_shuffles_are_uniform_permutations():
    # group 0: 4 valid values (one NaN pair); group 1: 2 valid
    xg = np.array([[10.0, 20.0, NAN, 30.0, 40.0], [1.0, NAN, 2.0, NAN, NAN]])
    yg = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, NAN, 4.0]])
    xs, ys = resampling.shuffle_within_groups(np.random.default_rng(2), xg, yg, 4000)
    first = xs[:, 0, 0]  # the first valid position takes each value 1/4 of the time
    counts = np.array([(first == v).sum() for v in (10.0, 20.0, 30.0, 40.0)])
    assert counts.sum() == 4000 and stats.chisquare(counts).pvalue > 1e-4
    assert 0.4 < (xs[:, 1, 0] == 1.0).mean() < 0.6
    # pairs stay pairs of valid cells: the human values are the valid ones, in order
    assert ys[0, 0, :4].tolist() == [1.0, 2.0, 4.0, 5.0] and np.isnan(ys[0, 0, 4])
    assert ys[0, 1, :2].tolist() == [1.0, 3.0] and np.isnan(xs[:, 1, 2:]).all()


def test_bootstrap_counts_undefined_replicates_and_warns():
    # 3 systems, bootstrap over systems: a replicate drawing one system three
    # times has constant means, so Pearson is NaN there (P = 3/27 per replicate)
    g = np.random.default_rng(8)
    h = g.normal(size=(3, 4))
    ds = Dataset.from_arrays({"h": h, "m": h + g.normal(size=h.shape)}, human="h")
    B = 199
    with pytest.warns(UndefinedStatisticWarning, match=r"of the 199 bootstrap resamples"):
        r = correlate(ds, "h", level="system", ci="boot-systems", n_resamples=B, rng=2)[0]
    dist, (lo, hi) = bootstrap_reference(ds, "m", "system", "pearson", 2, B, "systems")
    n_nan = int(np.isnan(dist).sum())
    assert n_nan > 0.05 * B
    assert r.n_resamples_nan == n_nan == int(np.isnan(r.distribution).sum())
    assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), rel=1e-10)


def test_bootstrap_and_permutation_draw_from_one_stream_in_order():
    ds = random_ds(5)
    B = 99
    r = correlate(ds, "h", metrics="good", level="item", method="spearman",
                  pvalue="permutation", ci="boot-both", n_resamples=B, rng=4)[0]
    _, p = permutation_reference(ds, "good", "item", "spearman", 4, B, "two-sided")
    dist, (lo, hi) = bootstrap_reference(ds, "good", "item", "spearman", 4, B, "both",
                                         after_permutation=B)
    assert r.pvalue == pytest.approx(p, abs=1e-15)
    np.testing.assert_allclose(r.distribution, dist, rtol=1e-10, atol=1e-12)
    assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), rel=1e-10)


# --------------------------------------------------------------------------
# reproducibility invariants


def _as_dicts(res):
    return [r.to_dict(arrays=True) for r in res]


def test_results_do_not_depend_on_n_jobs():
    ds = random_ds(2, nan_frac=0.1)
    kw = {"level": ["system", "input"], "method": ["pearson", "kendall_b"], "ci": "boot-both",
              "pvalue": "permutation", "n_resamples": 49, "rng": 123}
    one = correlate(ds, "h", n_jobs=1, **kw)
    two = correlate(ds, "h", n_jobs=2, **kw)
    np.testing.assert_equal(_as_dicts(one), _as_dicts(two))


def test_fresh_entropy_is_recorded_and_reproducible():
    ds = random_ds(2)
    kw = {"metrics": ["good", "coarse"], "level": "input", "method": "kendall_b",
              "ci": "boot-inputs", "pvalue": "permutation", "n_resamples": 49}
    first = correlate(ds, "h", rng=None, **kw)
    seed = seed_of(first[0].signature)
    assert all(seed_of(r.signature) == seed for r in first)
    again = correlate(ds, "h", rng=seed, **kw)
    np.testing.assert_equal(_as_dicts(first), _as_dicts(again))
    other = correlate(ds, "h", rng=None, **kw)
    assert seed_of(other[0].signature) != seed  # fresh entropy each time


def test_seed_zero_and_generators_are_honoured():
    ds = random_ds(2)
    kw = {"metrics": "good", "ci": "boot-both", "n_resamples": 49}
    a = correlate(ds, "h", rng=0, **kw)[0]
    b = correlate(ds, "h", rng=0, **kw)[0]
    c = correlate(ds, "h", rng=1, **kw)[0]
    assert "|seed:0|" in a.signature
    np.testing.assert_equal(a.distribution, b.distribution)
    assert not np.array_equal(a.distribution, c.distribution)
    g1 = correlate(ds, "h", rng=np.random.default_rng(9), **kw)[0]
    g2 = correlate(ds, "h", rng=np.random.default_rng(9), **kw)[0]
    np.testing.assert_equal(g1.distribution, g2.distribution)


def test_per_metric_numbers_do_not_depend_on_the_other_metrics_or_their_order():
    ds = random_ds(6, nan_frac=0.1)
    kw = {"level": ["system", "item"], "method": ["spearman", "acc_23"], "ci": "boot-both",
              "pvalue": "permutation", "n_resamples": 49, "rng": 77}
    ab = correlate(ds, "h", metrics=["good", "noise", "coarse"], **kw)
    ba = correlate(ds, "h", metrics=["coarse", "good"], **kw)
    only = correlate(ds, "h", metrics="good", **kw)
    for r in ba:
        for other in (ab, only) if r.metric == "good" else (ab,):
            twin = other.get(r.metric, level=r.level, method=r.method)
            np.testing.assert_equal(r.to_dict(arrays=True), twin.to_dict(arrays=True))
    lm = correlate(ds, "h", metrics="good", level=["item", "system"],
                   method=["acc_23", "spearman"], **{k: v for k, v in kw.items()
                                                     if k not in ("level", "method")})
    for r in lm:
        np.testing.assert_equal(r.to_dict(arrays=True),
                                only.get("good", level=r.level, method=r.method)
                                .to_dict(arrays=True))


@pytest.mark.filterwarnings("ignore::metaeval.DegenerateGroupWarning")
def test_progress_is_called_once_per_unit():
    calls = []
    correlate(messy(), "h", level=["system", "item"], method="pearson", ci="none",
              progress=calls.append)
    assert calls == [1] * 6  # 3 metrics x 2 levels x 1 method


# --------------------------------------------------------------------------
# input validation


def one_system():
    return Dataset.from_arrays({"h": [[1.0, 2.0, 3.0]], "m": [[1.0, 3.0, 2.0]]}, human="h")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"human": "nope"}, DataError, r"human='nope' is not a human score column.*available: h"),
        ({"human": "m"}, DataError,
         r"human='m' is not a human score column of this dataset \(it is a metric column\)"),
        ({"metrics": ["m", "zz"]}, DataError,
         r"unknown metric column\(s\): zz; available metrics: m, t, flat"),
        ({"metrics": []}, ParameterError, "metrics is empty"),
        ({"level": "sys"}, ParameterError, r"level='sys' is ambiguous.*our 'item'.*our 'system'"),
        ({"level": "sample"}, ParameterError, r"level='sample' is ambiguous.*ExplainaBoard"),
        ({"level": "segment"}, ParameterError, r"level='segment' is ambiguous"),
        ({"level": "seg"}, ParameterError, r"level='seg' is ambiguous"),
        ({"level": "bogus"}, ParameterError,
         r"level='bogus' is not a grouping level; choose one of system, input, item, global"),
        ({"level": ["system", "items"]}, ParameterError, r"level='items'"),
        ({"method": "kendall"}, ParameterError,
         r"'kendall' is ambiguous: choose kendall_b, kendall_c or kendall_23"),
        ({"method": "tau"}, ParameterError, r"kendall_b, kendall_c or kendall_23"),
        ({"method": "cosine"}, ParameterError,
         r"method='cosine' is not a known coefficient; choose one of pearson, spearman"),
        ({"method": "pairwise_accuracy", "level": "input"}, ParameterError,
         r"method='pairwise_accuracy' is defined only at level system; not at input"),
        ({"method": "pairwise_accuracy", "level": ["system", "global"]}, ParameterError,
         r"not at global"),
        ({"average": "weighted"}, ParameterError, r"average='weighted'; choose one of macro"),
        ({"ci": "bootstrap"}, ParameterError, r"ci='bootstrap'; choose one of none, fisher"),
        ({"pvalue": "exact"}, ParameterError, r"pvalue='exact'; choose one of auto"),
        ({"alternative": "two_sided"}, ParameterError, r"alternative='two_sided'; choose one"),
        ({"confidence_level": 0}, ParameterError,
         r"confidence_level=0 must be a number in \(0, 1\)"),
        ({"confidence_level": 1}, ParameterError, r"confidence_level=1 must be"),
        ({"confidence_level": 1.5}, ParameterError, r"confidence_level=1.5 must be"),
        ({"confidence_level": -0.1}, ParameterError, r"confidence_level=-0.1 must be"),
        ({"confidence_level": True}, ParameterError, r"confidence_level=True must be"),
        ({"confidence_level": "0.9"}, ParameterError, r"confidence_level='0.9' must be"),
        ({"n_resamples": 0}, ParameterError, r"n_resamples=0 must be >= 1"),
        ({"n_resamples": -5}, ParameterError, r"n_resamples=-5 must be >= 1"),
        ({"n_resamples": True}, ParameterError, r"n_resamples=True must be a positive int"),
        ({"n_resamples": 10.0}, ParameterError, r"n_resamples=10.0 must be a positive int"),
        ({"n_jobs": 0}, ParameterError, r"n_jobs=0 must be a non-zero int"),
        ({"rng": -1}, ParameterError, r"rng=-1 is not usable as a seed"),
        ({"rng": "abc"}, ParameterError, r"rng='abc' is not usable as a seed"),
    ],
)
def test_bad_arguments_raise_teaching_errors(kwargs, error, match):
    kw = {"human": "h", "metrics": "m", "level": "system", "method": "pearson", "ci": "none"}
    kw.update(kwargs)
    with pytest.raises(error, match=match):
        correlate(messy(), **kw)


@pytest.mark.parametrize("level", ["system", "input"])
def test_one_system_dataset_refused_at_levels_across_systems(level):
    with pytest.raises(DataError, match=rf"level='{level}' correlates across systems but the "
                       r"dataset has 1 system\(s\) \(s0\); use level='item' or 'global'"):
        correlate(one_system(), "h", level=level, ci="none")


def test_one_input_dataset_refused_at_item_level():
    ds = Dataset.from_arrays({"h": [[1.0], [2.0], [4.0]], "m": [[1.0], [3.0], [2.0]]}, human="h")
    with pytest.raises(DataError, match=r"level='item' correlates across inputs but the dataset "
                       r"has 1 input\(s\)"):
        correlate(ds, "h", level="item", ci="none")
    # system level works on 3 systems x 1 input: scipy on the three values
    r = correlate(ds, "h", level="system", ci="none")[0]
    assert r.statistic == pytest.approx(stats.pearsonr([1, 3, 2], [1, 2, 4]).statistic, rel=1e-13)


def test_one_system_dataset_works_at_item_and_global():
    res = correlate(one_system(), "h", level=["item", "global"], method="spearman", ci="none")
    for r in res:  # scipy: spearman([1, 3, 2], [1, 2, 3]) = 0.5
        assert r.statistic == pytest.approx(stats.spearmanr([1, 3, 2], [1, 2, 3]).statistic)


# --------------------------------------------------------------------------
# property tests: clear metaeval errors or results consistent with the reference


CELL = st.sampled_from([0.0, 1.0, 2.0, 3.0, NAN, 0.0, 1.0, 2.0, 3.0])  # ties, NaN
# Huge or tiny magnitudes: the tables are small integers times a power of two.
# Scaling by a positive power of two is exact and leaves every statistic
# unchanged, so the reference runs on the unscaled integers (its exact Pearson
# converts sxy to float, which overflows beyond ~1e308).  2**1000 keeps the
# sums of a row below the float maximum (see test_system_level_with_scores_near_float_max at the end for
# scores closer to it).
SCALES = st.sampled_from([1.0, 2.0 ** 1000, 2.0 ** -1000, 2.0 ** 600, 2.0 ** -600])


@st.composite
def tables(draw):
    N = draw(st.integers(1, 4))
    M = draw(st.integers(1, 5))
    h0 = np.array(draw(st.lists(CELL, min_size=N * M, max_size=N * M)), float).reshape(N, M)
    x0 = np.array(draw(st.lists(CELL, min_size=N * M, max_size=N * M)), float).reshape(N, M)
    h, x = h0 * draw(SCALES), x0 * draw(SCALES)
    if draw(st.booleans()) and draw(st.booleans()):
        i, j = draw(st.integers(0, N - 1)), draw(st.integers(0, M - 1))
        (h if draw(st.booleans()) else x)[i, j] = draw(st.sampled_from([np.inf, -np.inf]))
    return h0, x0, h, x


def size_error_expected(level, N, M):
    return (level in ("system", "input") and N < 2) or (level == "item" and M < 2) or \
        (level == "global" and N * M < 2)


@HYP
@given(
    data=tables(),
    level=st.sampled_from(LEVELS),
    method=st.sampled_from(ALL_METHODS + ("pairwise_accuracy",)),
    ci=st.sampled_from(["none", "boot-both", "boot-systems", "fisher"]),
    pvalue=st.sampled_from(["auto", "permutation"]),
)
def test_property_correlate_errors_cleanly_or_matches_reference(data, level, method, ci, pvalue):
    h0, x0, h, x = data
    N, M = h.shape
    has_inf = bool(np.isinf(h).any() or np.isinf(x).any())
    try:
        ds = Dataset.from_arrays({"h": h, "m": x}, human="h")
    except MetaevalError as e:
        assert isinstance(e, DataError)
        if has_inf:
            assert "infinite value" in str(e)
        return
    assert not has_inf, "Dataset accepted an infinite score"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            res = correlate(ds, "h", level=level, method=method, ci=ci, pvalue=pvalue,
                            n_resamples=9, rng=0)
        except MetaevalError as e:
            assert isinstance(e, (DataError, ParameterError))
            assert (size_error_expected(level, N, M)
                    or (method == "pairwise_accuracy" and level != "system")
                    or (ci == "fisher" and (level in ("input", "item")
                                            or method not in ("pearson", "spearman",
                                                              "kendall_b")))), str(e)
            return
    assert not size_error_expected(level, N, M)
    for warning in w:  # only typed metaeval warnings, never a numpy RuntimeWarning
        assert issubclass(warning.category, MetaevalWarning), str(warning.message)
    r = res[0]
    meth = "acc_23" if method == "pairwise_accuracy" else method
    expected = ref.level(x0, h0, level, meth)  # reference on the unscaled integers
    np.testing.assert_allclose(r.statistic, expected.value, rtol=1e-9, atol=1e-12,
                               equal_nan=True)
    cnt = expected_counts(x0, h0, level, method)
    assert {k: getattr(r, k) for k in cnt} == cnt
    for v in (r.statistic, r.pvalue, r.ci_low, r.ci_high):
        assert math.isnan(v) or math.isfinite(v)
    assert math.isnan(r.pvalue) or 0 <= r.pvalue <= 1  # analytic p is 0 when |r| = 1
    if pvalue == "permutation" and not math.isnan(r.pvalue):
        assert r.pvalue >= 1 / 10  # (count + 1) / (n + 1) with n = 9
    if not math.isnan(r.ci_low):
        assert r.ci_low <= r.ci_high
    if not math.isnan(r.statistic):
        lo = 0.0 if meth in ("acc_23", "acc_eq") else -1.0
        assert lo - 1e-12 <= r.statistic <= 1 + 1e-12


def test_from_frame_rejects_infinities_and_strings():
    base = pd.DataFrame({"system": ["A", "A", "B", "B"], "input": ["x", "y", "x", "y"],
                         "h": [1.0, 2.0, 3.0, 4.0], "m": [0.1, 0.2, 0.3, 0.4]})
    bad = base.assign(m=[0.1, np.inf, 0.3, 0.4])
    with pytest.raises(DataError, match=r"score column 'm' has 1 infinite value"):
        Dataset.from_frame(bad, human="h")
    bad = base.assign(h=[1.0, 2.0, -np.inf, 4.0])
    with pytest.raises(DataError, match=r"infinite"):
        Dataset.from_frame(bad, human="h")
    bad = base.assign(m=[0.1, "0.2x", 0.3, 0.4])
    with pytest.raises(DataError, match=r"0\.2x"):
        Dataset.from_frame(bad, human="h", metrics=["m"])
    # the clean frame works and gives ref's value
    r = correlate(Dataset.from_frame(base, human="h"), "h", level="global", ci="none")[0]
    assert r.statistic == pytest.approx(ref.pearson([0.1, 0.2, 0.3, 0.4], [1, 2, 3, 4]))


@pytest.mark.filterwarnings("ignore::metaeval.DegenerateGroupWarning")
def test_system_level_with_scores_near_float_max():
    h = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    m = np.array([[1.5e308, 1.5e308], [1e308, 1e308], [1e307, 1e307]])
    ds = Dataset.from_arrays({"h": h, "m": m}, human="h")
    r = correlate(ds, "h", level="system", ci="none")[0]
    # exact means: 1.5e308, 1e308, 1e307 (each system's two cells are equal);
    # Pearson's r is scale invariant, so it equals ref.pearson of 15, 10, 1
    # (the means / 1e307; ref.pearson itself overflows on the raw magnitudes)
    # against the human means 1.5, 3.5, 6
    assert r.n == 3 and r.n_too_few == 0
    assert r.statistic == pytest.approx(ref.pearson([15.0, 10.0, 1.0], [1.5, 3.5, 6.0]),
                                        rel=1e-12)
