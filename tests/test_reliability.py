"""Tests of :mod:`metaeval.reliability`: stability, consistency (Cronbach's
alpha, SEM, Spearman-Brown, alpha-vs-size curve), rater agreement
(Krippendorff's alpha, ICCs, pairwise rater correlations) and rank
normalization.

Oracles, each named where it is used:

* closed forms worked out by hand in the comments;
* R 4.2.2 psych 2.2.9 (Debian ``r-cran-psych``): ``ICC`` and ``alpha``,
  output pasted below (R is not needed to run the tests);
* Shrout and Fleiss (1979) Table 4 and Krippendorff (2011, "Computing
  Krippendorff's alpha-reliability", the 4 coders x 12 units example):
  published values;
* ``pingouin`` 0.7.0 (``cronbach_alpha``, ``intraclass_corr``) and
  ``krippendorff`` 0.9.0 (``alpha``) run live;
* scipy (``norm.ppf``, ``rankdata``, ``kendalltau``, ``pearsonr``);
* seed paper 002 (MetricEval, Xiao et al. 2023): section 4.1.1 (METEOR SEM
  example, stability and ROUGE consistency claims), Table 2 (G-Eval alphas).
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

import metaeval
from metaeval import (
    ConstantInputWarning,
    DataError,
    Dataset,
    ParameterError,
    UndefinedStatisticWarning,
)
from metaeval.reliability import (
    AGREEMENT_METHODS,
    ICC_FORMS,
    KRIPPENDORFF_METRICS,
    MissingCellsWarning,
    agreement,
    consistency,
    consistency_curve,
    rank_normal,
    rater_correlations,
    spearman_brown,
    spearman_brown_factor,
    stability,
)

NAN = np.nan

# pingouin 0.7.0 calls DataFrame.dropna(inplace=True), deprecated in pandas 3.1
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning:pingouin")


def _ds(columns, *, human, n=None, m=None):
    """A Dataset from {name: (N, M) or (R, N, M) array}."""
    first = np.asarray(next(iter(columns.values())))
    n = first.shape[-2] if n is None else n
    m = first.shape[-1] if m is None else m
    return Dataset(
        columns,
        human=human,
        systems=[f"s{i}" for i in range(n)],
        inputs=[f"i{j}" for j in range(m)],
    )


@pytest.fixture(scope="module")
def summeval():
    return metaeval.load_dataset("summeval", runs=True)


# Shrout and Fleiss (1979), Table 2: 6 targets x 4 judges.
SF = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)

# R 4.2.2, psych 2.2.9:
#   library(psych); options(digits=15, width=250)
#   sf <- matrix(c(9,2,5,8, 6,1,3,2, 8,4,6,8, 7,1,2,6, 10,5,6,9, 6,2,4,7), ncol=4, byrow=TRUE)
#   ICC(sf, lmer=FALSE)$results[, c("type","ICC","F","df1","df2","p","lower bound","upper bound")]
#                          type               ICC                 F df1 df2                    p         lower bound       upper bound
# Single_raters_absolute   ICC1 0.165741768405476  1.79467849223947   5  18 0.164768808344639611 -0.1329323248747509 0.722560062328121
# Single_random_raters     ICC2 0.289763779527559 11.02724795640327   5  15 0.000134566516484337  0.0187865133747120 0.761084369648953
# Single_fixed_raters      ICC3 0.714840714840715 11.02724795640327   5  15 0.000134566516484337  0.3424647650339254 0.945858259955360
# Average_raters_absolute ICC1k 0.442797133679269  1.79467849223947   5  18 0.164768808344639611 -0.8844421552381190 0.912415420340776
# Average_random_raters   ICC2k 0.620050547598989 11.02724795640327   5  15 0.000134566516484337  0.0711368153025035 0.927232040167722
# Average_fixed_raters    ICC3k 0.909315542377069 11.02724795640327   5  15 0.000134566516484337  0.6756747138163047 0.985891678169062
#   psych::alpha(sf, warnings=FALSE)$total$raw_alpha
# [1] 0.909315542377069
PSYCH_ICC_SF = {
    "icc1": (0.165741768405476, 1.79467849223947, 5, 18, 0.164768808344639611, -0.1329323248747509, 0.722560062328121),
    "icc2": (0.289763779527559, 11.02724795640327, 5, 15, 0.000134566516484337, 0.0187865133747120, 0.761084369648953),
    "icc3": (0.714840714840715, 11.02724795640327, 5, 15, 0.000134566516484337, 0.3424647650339254, 0.945858259955360),
    "icc1k": (0.442797133679269, 1.79467849223947, 5, 18, 0.164768808344639611, -0.8844421552381190, 0.912415420340776),
    "icc2k": (0.620050547598989, 11.02724795640327, 5, 15, 0.000134566516484337, 0.0711368153025035, 0.927232040167722),
    "icc3k": (0.909315542377069, 11.02724795640327, 5, 15, 0.000134566516484337, 0.6756747138163047, 0.985891678169062),
}  # fmt: skip
PSYCH_ALPHA_SF = 0.909315542377069

# Krippendorff (2011), section C (4 coders x 12 units, missing values);
# published: nominal .743, ordinal .815, interval .849, ratio .797.
KRIPP_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)


def _raters_ds(data):
    """A Dataset whose human column 'q' has the (R, U) data as R raters of 1 x U cells."""
    data = np.asarray(data, float)
    return _ds({"q": data[:, None, :]}, human="q")


# --------------------------------------------------------------------------
# rank normalization and Spearman-Brown


def test_rank_normal_blom_with_ties_vs_norm_ppf():
    # finite values 3, 1, 2, 2, 5: average ranks 4, 1, 2.5, 2.5, 5 (n = 5);
    # Blom: Phi^-1((r - 3/8) / (n + 1/4))
    x = np.array([3.0, 1.0, 2.0, 2.0, NAN, 5.0])
    r = np.array([4.0, 1.0, 2.5, 2.5, 5.0])
    want = stats.norm.ppf((r - 0.375) / 5.25)
    got = rank_normal(x)
    np.testing.assert_allclose(got[[0, 1, 2, 3, 5]], want, rtol=0, atol=1e-15)
    assert np.isnan(got[4])
    assert got[2] == got[3]  # ties get one score


@pytest.mark.parametrize(
    "method, c", [("blom", 3 / 8), ("tukey", 1 / 3), ("rankit", 1 / 2), ("van_der_waerden", 0.0)]
)
def test_rank_normal_offsets(method, c):
    # Phi^-1((r - c) / (n - 2c + 1)) with scipy's average ranks, 2-D input ranked as a whole
    x = np.array([[0.5, 2.0, 2.0], [7.0, 0.5, 3.0]])
    r = stats.rankdata(x.ravel(), method="average").reshape(x.shape)
    want = stats.norm.ppf((r - c) / (6 - 2 * c + 1))
    np.testing.assert_allclose(rank_normal(x, method=method), want, rtol=0, atol=1e-15)


def test_rank_normal_metriceval_hand_case():
    # Seed paper 002 App. A.2 as MetricEval's normalize2: F = #{x_i <= x} / n for
    # x = 1, 2, 2, 3 is .25, .75, .75, 1; z = Phi^-1(.001 + .998 F), standardized (ddof=1)
    f = np.array([0.25, 0.75, 0.75, 1.0])
    z = stats.norm.ppf(0.001 + 0.998 * f)
    want = (z - z.mean()) / z.std(ddof=1)
    got = rank_normal([1.0, 2.0, 2.0, 3.0], method="metriceval")
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_bundled_summeval_metrics_are_metriceval_normalized(summeval):
    # The bundled metric columns are MetricEval's normalize2 output (provenance: the
    # released scores), so re-applying the transform changes nothing (to rounding).
    for col in ("METEOR", "G.EVAL.4.COH", "ROUGE.4"):
        run = summeval.ratings(col)[0]
        np.testing.assert_allclose(rank_normal(run, method="metriceval"), run, atol=1e-12)


def test_rank_normal_bad_method():
    with pytest.raises(ParameterError, match="method='blum'.*blom"):
        rank_normal([1.0, 2.0], method="blum")


def test_spearman_brown_closed_forms():
    # rho_n = n rho / (1 + (n - 1) rho): .5 doubled -> 2/3; tripled -> .75
    assert spearman_brown(0.5, 2) == pytest.approx(2 / 3, abs=1e-15)
    assert spearman_brown(0.5, 3) == pytest.approx(0.75, abs=1e-15)
    # n = rho* (1 - rho) / (rho (1 - rho*)): .5 -> .9 needs 9 times the length
    assert spearman_brown_factor(0.5, 0.9) == pytest.approx(9.0, abs=1e-12)
    r = np.array([0.2, 0.55, 0.88])
    np.testing.assert_allclose(spearman_brown(r, spearman_brown_factor(r, 0.9)), 0.9, atol=1e-12)
    assert spearman_brown_factor(0.0, 0.9) == np.inf
    assert spearman_brown_factor(-0.3, 0.9) == np.inf
    assert np.isnan(spearman_brown_factor(NAN, 0.9))


# --------------------------------------------------------------------------
# Cronbach's alpha, SEM, intervals


def test_alpha_and_sem_hand_case():
    # Items (columns) variances (ddof=1): 5/3, 2/3, 2; totals 5, 8, 13, 8 -> variance 11;
    # alpha = 3/2 (1 - (13/3) / 11) = 10/11.  System means 5/3, 8/3, 13/3, 8/3 -> sd
    # sqrt(11)/3, so SEM = sd sqrt(1 - 10/11) = 1/3 exactly.
    y = np.array([[1.0, 2, 2], [2, 3, 3], [4, 4, 5], [3, 3, 2]])
    res = consistency(_ds({"h": y}, human="h"), ci="none")[0]
    assert res.statistic == pytest.approx(10 / 11, abs=1e-14)
    assert res.sd == pytest.approx(np.sqrt(11) / 3, abs=1e-14)
    assert res.sem == pytest.approx(1 / 3, abs=1e-14)
    # inputs for alpha .9 ... already above: 3 * .9 (1/11) / (10/11 * .1) = 2.7 -> 3
    assert res.inputs_needed_exact == pytest.approx(2.7, abs=1e-12)
    assert res.inputs_needed == 3.0


def test_alpha_vs_psych_and_pingouin():
    # R psych::alpha(sf)$total$raw_alpha (pasted above); pingouin.cronbach_alpha live
    res = consistency(_ds({"h": SF}, human="h"), ci="feldt")[0]
    assert res.statistic == pytest.approx(PSYCH_ALPHA_SF, abs=1e-13)
    rng = np.random.default_rng(7)
    y = rng.normal(size=(15, 6)) + rng.normal(size=(15, 1))
    res = consistency(_ds({"h": y}, human="h"), ci="feldt", confidence_level=0.9)[0]
    a, ci = pg.cronbach_alpha(pd.DataFrame(y), ci=0.9)
    assert res.statistic == pytest.approx(a, abs=1e-13)
    # pingouin rounds its Feldt interval to 3 decimals
    assert [res.ci_low, res.ci_high] == pytest.approx(list(ci), abs=5e-4 + 1e-12)
    # Feldt closed form: 1 - (1 - alpha) F_{upper/lower}(N - 1, (N - 1)(M - 1))
    lo = 1 - (1 - a) * stats.f.isf(0.05, 14, 70)
    hi = 1 - (1 - a) * stats.f.isf(0.95, 14, 70)
    assert (res.ci_low, res.ci_high) == pytest.approx((lo, hi), abs=1e-13)


def test_alpha_listwise_deletion_of_inputs_warns_and_counts():
    rng = np.random.default_rng(3)
    y = rng.normal(size=(6, 8)) + np.arange(6.0)[:, None]
    y[1, 2] = NAN
    y[4, 5] = NAN
    y[5, :] = NAN  # a system without any score is dropped first
    ds = _ds({"h": y}, human="h")
    with pytest.warns(MissingCellsWarning, match=r"'h'.*1 system.*2 input"):
        res = consistency(ds, ci="none")[0]
    want = pg.cronbach_alpha(pd.DataFrame(np.delete(y[:5], [2, 5], axis=1)))[0]
    assert res.statistic == pytest.approx(want, abs=1e-13)
    assert (res.n_systems, res.n_inputs) == (5, 6)
    assert (res.n_systems_dropped, res.n_inputs_dropped) == (1, 2)


def test_alpha_constant_data_is_nan_with_warning():
    ds = _ds({"h": np.full((4, 3), 2.0)}, human="h")
    with pytest.warns(ConstantInputWarning, match="'h'.*constant"):
        res = consistency(ds, ci="boot-systems", n_resamples=20, rng=0)[0]
    assert np.isnan(res.statistic) and np.isnan(res.sem) and np.isnan(res.ci_low)
    with pytest.warns(UndefinedStatisticWarning, match="at least 2 systems"):
        res = consistency(_ds({"h": np.ones((1, 3))}, human="h"), ci="none")[0]
    assert np.isnan(res.statistic)


def test_alpha_bootstrap_is_deterministic_and_percentile():
    rng = np.random.default_rng(11)
    y = rng.normal(size=(10, 12)) + rng.normal(size=(10, 1))
    z = rng.normal(size=(10, 12))
    ds = _ds({"h": y, "m": z}, human="h")
    for ci in ("boot-systems", "boot-inputs", "boot-both"):
        a = consistency(ds, "h", ci=ci, n_resamples=300, rng=5)[0]
        b = consistency(ds, ["m", "h"], ci=ci, n_resamples=300, rng=5).get("h")
        np.testing.assert_array_equal(a.distribution, b.distribution)  # seed + column only
        assert a.signature == b.signature and "seed:5" in a.signature
        lo, hi = np.percentile(a.distribution, [2.5, 97.5])
        assert (a.ci_low, a.ci_high) == pytest.approx((lo, hi), abs=1e-13)
        assert a.se == pytest.approx(a.distribution.std(ddof=1), abs=1e-15)
    c = consistency(ds, "h", n_resamples=300, rng=6)[0]
    assert not np.array_equal(a.distribution, c.distribution)


def test_alpha_bootstrap_systems_replicates_by_hand():
    # Re-create the documented stream and recompute one replicate with pingouin
    from metaeval.stats import resampling

    rng = np.random.default_rng(2)
    y = rng.normal(size=(7, 5)) + rng.normal(size=(7, 1))
    res = consistency(_ds({"h": y}, human="h"), ci="boot-systems", n_resamples=50, rng=9)[0]
    gen = resampling.named_generator(np.random.SeedSequence(9), "consistency", "h", "boot-systems")
    rows, _ = resampling.bootstrap_indices(gen, 50, 7, 5, "systems")
    for b in (0, 17, 49):
        sample = y[rows[b]]
        if np.ptp(sample.sum(1)) > 0:
            want = pg.cronbach_alpha(pd.DataFrame(sample))[0]
            assert res.distribution[b] == pytest.approx(want, abs=1e-12)


# --------------------------------------------------------------------------
# alpha vs benchmark size


def test_consistency_curve_prophecy_determinism_and_full_size():
    rng = np.random.default_rng(4)
    y = np.arange(8.0)[:, None] + rng.normal(0, 2, size=(8, 30))
    ds = _ds({"h": y, "m": rng.normal(size=(8, 30))}, human="h")
    a = consistency_curve(ds, "h", sizes=[5, 15, 30], n_subsets=40, rng=1)[0]
    b = consistency_curve(ds, ["m", "h"], sizes=[5, 15, 30], n_subsets=40, rng=1).get("h")
    for f in ("mean", "sd", "ci_low", "ci_high"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    full = pg.cronbach_alpha(pd.DataFrame(y))[0]
    assert a.alpha_full == pytest.approx(full, abs=1e-13)
    # Spearman-Brown prophecy from the full alpha: (m/M) a / (1 + (m/M - 1) a)
    f = np.array([5, 15, 30]) / 30
    np.testing.assert_allclose(a.prophecy, f * full / (1 + (f - 1) * full), atol=1e-14)
    # every subset of size M is the whole benchmark
    assert a.mean[-1] == pytest.approx(full, abs=1e-12) and a.sd[-1] == pytest.approx(0, abs=1e-12)
    frame = consistency_curve(ds, sizes=[5, 30], n_subsets=10, rng=1).to_frame()
    assert list(frame.columns[:8]) == [
        "column", "size", "alpha_mean", "alpha_sd", "ci_low", "ci_high", "prophecy", "n_nan",
    ]  # fmt: skip
    assert len(frame) == 4 and set(frame["column"]) == {"h", "m"}


def test_consistency_curve_subset_by_hand():
    # the documented draw: argsort of uniform keys, first m columns
    from metaeval.stats import resampling

    rng = np.random.default_rng(8)
    y = rng.normal(size=(6, 10)) + np.arange(6.0)[:, None]
    cur = consistency_curve(_ds({"h": y}, human="h"), sizes=[4], n_subsets=5, rng=3)[0]
    gen = resampling.named_generator(np.random.SeedSequence(3), "consistency_curve", "h", "4")
    pick = np.argsort(gen.random((5, 10)), axis=1)[:, :4]
    want = [pg.cronbach_alpha(pd.DataFrame(y[:, p]))[0] for p in pick]
    assert cur.mean[0] == pytest.approx(np.mean(want), abs=1e-13)


def test_consistency_curve_bad_sizes():
    ds = _ds({"h": np.arange(12.0).reshape(3, 4)}, human="h")
    with pytest.raises(ParameterError, match=r"exceed the 4 complete inputs of column 'h'"):
        consistency_curve(ds, sizes=[2, 5])
    with pytest.raises(ParameterError, match="sizes=1"):
        consistency_curve(ds, sizes=[1])


# --------------------------------------------------------------------------
# stability


def test_stability_two_runs_hand_case():
    # system means run 1: 1.5, 2.5, 4; run 2: 1.75, 2.5, 3.5 -> Pearson r (scipy)
    runs = np.array(
        [[[1.0, 2.0], [2.0, 3.0], [4.0, 4.0]], [[1.5, 2.0], [2.5, 2.5], [4.0, 3.0]]]
    )
    ds = _ds({"h": np.zeros((3, 2)), "llm": runs}, human="h")
    res = stability(ds)[0]
    r = stats.pearsonr([1.5, 2.5, 4.0], [1.75, 2.5, 3.5])[0]
    assert res.method == "pearson"
    assert res.statistic == pytest.approx(r, abs=1e-14)
    # Spearman-Brown: reliability of the 2-run mean and runs for target .9
    assert res.reliability_of_mean == pytest.approx(2 * r / (1 + r), abs=1e-14)
    assert res.runs_needed_exact == pytest.approx(0.9 * (1 - r) / (r * 0.1), abs=1e-12)
    assert res.runs_needed == 1.0
    # SEM: pooled sd of one run's system means times sqrt(1 - r)
    sd = np.sqrt((np.var([1.5, 2.5, 4.0], ddof=1) + np.var([1.75, 2.5, 3.5], ddof=1)) / 2)
    assert res.sem == pytest.approx(sd * np.sqrt(1 - r), abs=1e-14)
    np.testing.assert_allclose(res.system_means, [[1.5, 1.75], [2.5, 2.5], [4.0, 3.5]])
    assert res.signature == (
        f"method:pearson|nan:common-cells|runs:2|norm:none|target:0.9|metaeval:{metaeval.__version__}"
    )


def test_stability_icc_forms_vs_pingouin_three_runs():
    rng = np.random.default_rng(5)
    true = rng.normal(size=(1, 9, 1)) * 2  # system effect shared by the runs
    shift = np.array([0.0, 0.3, -0.2])[:, None, None]  # run-level shifts
    runs = true + rng.normal(size=(3, 9, 6)) + shift  # (3 runs, 9 systems, 6 inputs)
    ds = _ds({"h": np.zeros((9, 6)), "llm": runs}, human="h")
    res = stability(ds, target=0.95)[0]
    assert res.method == "icc_c1"  # auto with 3 runs
    means = runs.mean(-1).T  # (systems, runs)
    df = pd.DataFrame(
        {"t": np.repeat(np.arange(9), 3), "r": np.tile(np.arange(3), 9), "y": means.ravel()}
    )
    icc = pg.intraclass_corr(df, "t", "r", "y").set_index("Type")["ICC"]
    assert res.icc_c1 == pytest.approx(icc["ICC(C,1)"], abs=1e-12)
    assert res.icc_a1 == pytest.approx(icc["ICC(A,1)"], abs=1e-12)
    assert res.icc_ck == pytest.approx(icc["ICC(C,k)"], abs=1e-12)
    assert res.icc_ak == pytest.approx(icc["ICC(A,k)"], abs=1e-12)
    assert res.statistic == res.icc_c1
    # ICC(C,k) is the Spearman-Brown step-up of ICC(C,1) to k runs
    assert res.reliability_of_mean == pytest.approx(res.icc_ck, abs=1e-12)
    rs = [stats.pearsonr(means[:, a], means[:, b])[0] for a, b in ((0, 1), (0, 2), (1, 2))]
    assert res.pearson == pytest.approx(np.mean(rs), abs=1e-14)
    a1 = stability(ds, method="icc_a1")[0]
    assert a1.statistic == a1.icc_a1 and a1.method == "icc_a1"


def test_stability_common_cells_and_warning():
    runs = np.array(
        [[[1.0, 2.0, 9.0], [2.0, 3.0, 1.0], [4.0, 4.0, 2.0]],
         [[1.5, 2.0, NAN], [2.5, 2.5, 0.0], [4.0, 3.0, 5.0]]]
    )  # fmt: skip
    ds = _ds({"h": np.zeros((3, 3)), "llm": runs}, human="h")
    with pytest.warns(MissingCellsWarning, match="'llm'.*1 .*cell"):
        res = stability(ds)[0]
    # system s0 uses inputs 0 and 1 only, in both runs
    np.testing.assert_allclose(res.system_means[0], [1.5, 1.75])
    np.testing.assert_allclose(res.system_means[1], [2.0, 5.0 / 3])
    assert res.n_cells_dropped == 1


def test_stability_single_run_is_an_error_naming_the_column(summeval):
    ds = metaeval.load_dataset("summeval")
    with pytest.raises(DataError, match=r"metric 'G\.EVAL\.4\.COH' has a single run.*runs=True"):
        stability(ds, "G.EVAL.4.COH")
    with pytest.raises(DataError, match="no metric column .* two or more runs"):
        stability(ds)
    with pytest.raises(DataError, match="'coherence' is a human column"):
        stability(summeval, "coherence")
    with pytest.raises(DataError, match="unknown score column 'G-EVAL-4'"):
        stability(summeval, "G-EVAL-4")
    with pytest.raises(ParameterError, match="method='kappa'"):
        stability(summeval, "BLEU", method="kappa")
    with pytest.raises(ParameterError, match="target=1.2"):
        stability(summeval, "BLEU", target=1.2)


def test_stability_constant_runs_nan_and_warning():
    runs = np.stack([np.ones((3, 2)), np.ones((3, 2))])
    ds = _ds({"h": np.zeros((3, 2)), "llm": runs}, human="h")
    with pytest.warns(ConstantInputWarning, match="'llm'.*constant"):
        res = stability(ds)[0]
    assert np.isnan(res.statistic) and np.isnan(res.runs_needed) and np.isnan(res.sem)


# --------------------------------------------------------------------------
# agreement: ICC and Krippendorff


def test_icc_vs_psych_golden_and_shrout_fleiss():
    # SF as 6 systems x 1 input... units are cells: put the 6 targets on one system's inputs
    ds = _raters_ds(SF.T)
    res = agreement(ds, method=list(ICC_FORMS))
    for r in res:
        icc, F, d1, d2, p, lo, hi = PSYCH_ICC_SF[r.method]
        got = (r.statistic, r.f_statistic, r.df1, r.df2, r.pvalue, r.ci_low, r.ci_high)
        assert got == pytest.approx((icc, F, d1, d2, p, lo, hi), rel=1e-12, abs=1e-13), r.method
        assert (r.n_units, r.n_raters, r.n_values) == (6, 4, 24)
    # Shrout and Fleiss (1979) Table 4, two decimals: .17 .29 .71 .44 .62 .91
    published = {"icc1": 0.17, "icc2": 0.29, "icc3": 0.71, "icc1k": 0.44, "icc2k": 0.62, "icc3k": 0.91}
    for r in res:
        assert round(r.statistic, 2) == published[r.method]
    assert res.get("q", method="icc3k").statistic == pytest.approx(PSYCH_ALPHA_SF, abs=1e-13)


def test_icc_vs_pingouin_with_missing_units():
    rng = np.random.default_rng(12)
    r = rng.normal(size=(1, 4, 10)) * 1.5 + rng.normal(size=(3, 4, 10)) + np.array([0, 0.4, 0.9])[:, None, None]
    r[1, 2, 3] = NAN
    ds = _ds({"q": r}, human="q")
    with pytest.warns(MissingCellsWarning, match="'q'.*1 of 40 cells"):
        res = agreement(ds, method=list(ICC_FORMS), confidence_level=0.9)
    long = pd.DataFrame(
        {"unit": np.tile(np.arange(40), 3), "rater": np.repeat(np.arange(3), 40), "y": r.reshape(3, -1).ravel()}
    )
    want = pg.intraclass_corr(long, "unit", "rater", "y", nan_policy="omit")
    names = dict(zip(["icc1", "icc2", "icc3", "icc1k", "icc2k", "icc3k"], want["Type"]))
    want = want.set_index("Type")
    for a in res:
        row = want.loc[names[a.method]]
        assert a.statistic == pytest.approx(row["ICC"], abs=1e-12)
        assert a.f_statistic == pytest.approx(row["F"], rel=1e-12)
        assert a.pvalue == pytest.approx(row["pval"], rel=1e-9, abs=1e-300)
        assert a.n_units == 39 and a.n_units_dropped == 1


def test_perfect_agreement_gives_one_with_point_intervals():
    # identical raters / runs: no error variance, so every ICC is 1 and its F = inf
    # interval degenerates to [1, 1] (not NaN); stability is 1 and needs 1 run
    x = np.arange(12.0).reshape(3, 4) ** 1.5
    ds = _ds({"h": np.stack([x, x]), "m": np.stack([x, x])}, human="h")
    for a in agreement(ds, method=list(AGREEMENT_METHODS)):
        assert a.statistic == 1.0, a.method
        if a.method in ICC_FORMS:
            assert (a.ci_low, a.ci_high, a.pvalue) == (1.0, 1.0, 0.0)
    s = stability(ds)[0]
    assert (s.statistic, s.icc_c1, s.runs_needed, s.sem) == (1.0, 1.0, 1.0, 0.0)


def test_krippendorff_published_example():
    # Krippendorff (2011), 4 coders x 12 units: nominal .743, ordinal .815, interval .849, ratio .797
    res = agreement(_raters_ds(KRIPP_2011), method=[m for m in AGREEMENT_METHODS if "kripp" in m])
    got = {r.method.split("_")[1]: round(r.statistic, 3) for r in res}
    assert got == {"interval": 0.849, "ordinal": 0.815, "nominal": 0.743, "ratio": 0.797}
    assert {(r.n_units, r.n_values, r.n_units_dropped) for r in res} == {(11, 40, 1)}
    # D_o and D_e of the interval metric (Krippendorff 2011: alpha = 1 - D_o / D_e)
    i = res.get("q", method="krippendorff_interval")
    assert i.statistic == pytest.approx(1 - i.observed_disagreement / i.expected_disagreement)


@pytest.mark.parametrize("level", ["interval", "ordinal", "nominal", "ratio"])
def test_krippendorff_vs_package_random_with_nan_and_ties(level):
    rng = np.random.default_rng({"interval": 1, "ordinal": 2, "nominal": 3, "ratio": 4}[level])
    for _ in range(4):
        d = rng.integers(1, 6, size=(4, 40)).astype(float)  # Likert: many ties
        d[rng.random(d.shape) < 0.25] = NAN
        got = agreement(_raters_ds(d), method=f"krippendorff_{level}")[0].statistic
        want = krippendorff.alpha(reliability_data=d, level_of_measurement=level)
        assert got == pytest.approx(want, abs=1e-12)
    # continuous scores (rounded: some ties), 3 raters
    d = np.abs(rng.normal(size=(3, 60))).round(1)
    d[rng.random(d.shape) < 0.2] = NAN
    got = agreement(_raters_ds(d), method=f"krippendorff_{level}")[0].statistic
    assert got == pytest.approx(krippendorff.alpha(reliability_data=d, level_of_measurement=level), abs=1e-12)


def test_krippendorff_large_value_domain_paths(monkeypatch):
    # the blockwise/closed-form expected disagreement equals the dense one
    import metaeval.stats.agreement as rel  # the estimators moved from reliability (issue 25)

    rng = np.random.default_rng(6)
    d = np.abs(rng.normal(size=(3, 300))) + 0.1
    d[rng.random(d.shape) < 0.1] = NAN
    dense = {m: rel.krippendorff(d, m)[0] for m in KRIPPENDORFF_METRICS}
    monkeypatch.setattr(rel, "DENSE_VALUES", 10)
    monkeypatch.setattr(rel, "BLOCK_CELLS", 5000)
    for m, v in dense.items():
        assert rel.krippendorff(d, m)[0] == pytest.approx(v, abs=1e-12)


def _coincidences_by_rater_pairs(idx, present, w):
    """The double loop over every ordered pair of raters that _krippendorff used
    before issue 26.4 (quadratic in raters): the slow twin of
    stats.agreement.coincidence_pairs (reliability._coincidence_pairs before issue 25)."""
    rows, cols, wts = [], [], []
    R = present.shape[0]
    for a in range(R):
        for b in range(R):
            if a != b:
                both = present[a] & present[b]
                rows.append(idx[a, both])
                cols.append(idx[b, both])
                wts.append(w[both])
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(wts)


@pytest.mark.parametrize("shape", [(4, 40), (30, 25), (2, 1), (12, 7)])
def test_krippendorff_linear_in_raters_regression_26_4(shape):
    """Regression (26.4): the coincidences looped over every pair of raters, so
    1,200 job-specific rater labels (crowd exports) took 84 CPU-s and 1 GB.
    The pairs are now listed per unit, in the old (a, b, unit) order: the
    same arrays as the double loop (slow twin above), so alpha is the same
    float; sparse raters, rows of one rating, no ratings and ties included."""
    import metaeval.stats.agreement as rel  # the estimators moved from reliability (issue 25)

    rng = np.random.default_rng(sum(shape))
    for density in (0.1, 0.5, 1.0):
        d = rng.integers(1, 5, size=shape).astype(float)
        d[rng.random(d.shape) >= density] = NAN
        present = np.isfinite(d)
        idx = np.where(present, rng.integers(0, 9, size=shape), -1)
        w = rng.random(shape[1])
        got = rel.coincidence_pairs(idx, present, w)
        want = _coincidences_by_rater_pairs(idx, present, w)
        for g, x in zip(got, want):
            np.testing.assert_array_equal(g, x)
    # crowd-style: every rating its own rater (R = units x 3), against the package
    d = np.full((90, 30), NAN)
    for u in range(30):
        d[3 * u : 3 * u + 3, u] = rng.integers(1, 6, size=3)
    got = agreement(_raters_ds(d), method="krippendorff_interval")[0].statistic
    want = krippendorff.alpha(reliability_data=d, level_of_measurement="interval")
    assert got == pytest.approx(want, abs=1e-12)


def test_agreement_degenerate_and_errors(summeval):
    with pytest.warns(ConstantInputWarning, match="krippendorff_interval of 'q'.*equal"):
        k = agreement(_raters_ds(np.full((2, 5), 3.0)), method="krippendorff_interval")[0]
    assert np.isnan(k.statistic)
    with pytest.warns(ConstantInputWarning, match="ICCs of 'q'"):
        i = agreement(_raters_ds(np.full((2, 5), 3.0)), method="icc2")[0]
    assert np.isnan(i.statistic)
    with pytest.raises(DataError, match="column 'expert1_coherence' has a single rater"):
        agreement(summeval, "expert1_coherence")
    with pytest.raises(DataError, match="column 'expert1_coherence' has a single rater"):
        rater_correlations(summeval, "expert1_coherence")
    with pytest.raises(DataError, match="unknown score column 'coherance'"):
        agreement(summeval, "coherance")
    with pytest.raises(DataError, match="no human column .* two or more raters"):
        agreement(_ds({"h": np.ones((2, 2))}, human="h"))
    with pytest.raises(ParameterError, match="method='icc4'.*krippendorff_interval"):
        agreement(summeval, method="icc4")
    with pytest.raises(ParameterError, match="level='sys' is ambiguous"):
        rater_correlations(summeval, level="sys")


# --------------------------------------------------------------------------
# pairwise rater correlations


def test_rater_correlations_vs_scipy_and_matrix(summeval):
    res = rater_correlations(summeval, "coherence")  # system level, tau-b
    r = summeval.ratings("coherence")
    means = r.mean(-1)  # no missing cells in SummEval
    for x in res:
        a = summeval.rater_labels("coherence").index(x.rater_a)
        b = summeval.rater_labels("coherence").index(x.rater_b)
        assert x.statistic == pytest.approx(stats.kendalltau(means[a], means[b])[0], abs=1e-12)
        assert x.n == 17
    m = res.matrix("coherence")
    assert m.shape == (3, 3) and np.allclose(m.to_numpy(), m.to_numpy().T)
    g = rater_correlations(summeval, "fluency", level="global", method="pearson")
    fl = summeval.ratings("fluency").reshape(3, -1)
    assert g[0].statistic == pytest.approx(stats.pearsonr(fl[0], fl[1])[0], abs=1e-12)
    assert g[0].signature.startswith("level:global|method:pearson|nan:pairwise|")


# --------------------------------------------------------------------------
# views


def test_frames_and_dicts(summeval):
    st = stability(summeval, ["BLEU", "G.EVAL.4.COH"])
    f = st.to_frame()
    assert list(f.columns) == [
        "column", "method", "statistic", "pearson", "icc_c1", "icc_a1", "icc_ck", "icc_ak",
        "reliability_of_mean", "target", "runs_needed", "runs_needed_exact", "sd", "sem",
        "n_systems", "n_runs", "n_cells_dropped", "n_systems_dropped", "normalize", "signature",
    ]  # fmt: skip
    assert len(f) == 2 and st[0].to_frame().shape == (1, 20)
    d = st[0].to_dict()
    assert d["runs"] == ["original", "rerun"] and "system_means" not in d
    assert np.array(st[0].to_dict(arrays=True)["system_means"]).shape == (17, 2)
    co = consistency(summeval, ["ROUGE.1"], ci="none")
    assert list(co.to_frame().columns) == [
        "column", "statistic", "ci_low", "ci_high", "se", "confidence_level", "ci_method",
        "n_resamples", "n_resamples_nan", "sd", "sem", "target", "inputs_needed",
        "inputs_needed_exact", "n_systems", "n_inputs", "n_systems_dropped", "n_inputs_dropped",
        "run", "normalize", "signature",
    ]  # fmt: skip
    assert co[0].signature.startswith("method:cronbach_alpha|nan:listwise-inputs|ci:none|")
    ag = agreement(summeval, "fluency")
    assert list(ag.to_frame()["method"]) == [
        "krippendorff_interval", "krippendorff_ordinal", "icc1", "icc2", "icc3", "icc1k",
        "icc2k", "icc3k",
    ]  # fmt: skip
    assert ag.to_dict()["results"][0]["column"] == "fluency"
    rc = rater_correlations(summeval, ["fluency", "relevance"])
    assert rc.to_frame().shape == (6, 11)
    assert ag.get("fluency", method="icc1").method == "icc1"
    with pytest.raises(KeyError, match="8 results match column='fluency'"):
        ag.get("fluency")


# --------------------------------------------------------------------------
# the SummEval case study (seed paper 002, section 4.1.1)

G_EVAL = [f"G.EVAL.{v}.{d}" for v in ("3.5", "4") for d in ("COH", "CON", "FLU", "REL")]


def test_summeval_geval_stability(summeval):
    res = stability(summeval, G_EVAL)
    got = {r.column: r.statistic for r in res}
    # Regression values (this library, bundled runs 'original' and 'rerun'); the paper's
    # Figure 2 has no numbers in the text.  Its claims: LLM metrics have lower stability,
    # "some below the conventional threshold of .9", GPT-4 more stable than GPT-3.5.
    want = {
        "G.EVAL.3.5.COH": 0.9743, "G.EVAL.3.5.CON": 0.8798, "G.EVAL.3.5.FLU": 0.9768,
        "G.EVAL.3.5.REL": 0.9710, "G.EVAL.4.COH": 0.9948, "G.EVAL.4.CON": 0.9870,
        "G.EVAL.4.FLU": 0.9895, "G.EVAL.4.REL": 0.9719,
    }  # fmt: skip
    assert {k: round(v, 4) for k, v in got.items()} == want
    assert [c for c, v in got.items() if v < 0.9] == ["G.EVAL.3.5.CON"]
    for d in ("COH", "CON", "FLU", "REL"):
        assert got[f"G.EVAL.4.{d}"] > got[f"G.EVAL.3.5.{d}"]
    # two runs of G-EVAL-3.5-CON reach .9 by Spearman-Brown
    assert res.get("G.EVAL.3.5.CON").runs_needed == 2.0
    # deterministic metrics: the runs differ only by the release's rounding (< 1e-9)
    assert stability(summeval, "ROUGE.1")[0].statistic == pytest.approx(1.0, abs=1e-12)
    # normalizing as the paper does changes nothing: the bundled columns are normalized
    n = stability(summeval, "G.EVAL.3.5.CON", normalize="metriceval")[0]
    assert n.statistic == pytest.approx(got["G.EVAL.3.5.CON"], abs=1e-8)


def test_summeval_rouge_consistency_and_meteor_sem(summeval):
    co = consistency(summeval, ["ROUGE.1", "ROUGE.2", "ROUGE.3", "ROUGE.4", "METEOR"], ci="none")
    a = [co.get(f"ROUGE.{n}").statistic for n in (1, 2, 3, 4)]
    # paper section 4.1.1: "a longer n-gram makes the metric less reliable"
    assert a == sorted(a, reverse=True)
    assert [round(v, 4) for v in a] == [0.9588, 0.9456, 0.9202, 0.8957]
    # paper section 4.1.1: METEOR "sample standard deviation .38", "consistency .966",
    # SEM ".38 x sqrt(1 - .966) ~ .07"
    m = co.get("METEOR")
    assert (round(m.sd, 2), round(m.statistic, 3), round(m.sem, 2)) == (0.38, 0.966, 0.07)


def test_summeval_geval_alpha_matches_paper_table2(summeval):
    # Paper Table 2 diagonal (reliability coefficients = alpha, per MetricEval's MTMM code):
    # G-EVAL-3.5 .96 .90 .95 .95; G-EVAL-4 .98 .96 .97 .96 -- reproduced from run 'original'
    co = consistency(summeval, G_EVAL, run="original", ci="none")
    got = [round(r.statistic, 2) for r in co]
    assert got == [0.96, 0.90, 0.95, 0.95, 0.98, 0.96, 0.97, 0.96]
    with pytest.raises(DataError, match="column 'G.EVAL.4.COH' has no run or rater 'run2'"):
        consistency(summeval, "G.EVAL.4.COH", run="run2")


def test_summeval_geval_curve_increases(summeval):
    # Figure 3: consistency of G-EVAL grows with the number of test examples
    cur = consistency_curve(summeval, ["G.EVAL.3.5.CON"], run="original", n_subsets=50, rng=0)[0]
    assert cur.sizes.tolist() == list(range(10, 101, 10))
    assert np.all(np.diff(cur.mean) > 0)
    assert cur.mean[-1] == pytest.approx(0.8994, abs=5e-5)


def test_summeval_expert_agreement_vs_krippendorff_package(summeval):
    d = summeval.ratings("coherence").reshape(3, -1)
    res = agreement(summeval, "coherence", method=["krippendorff_interval", "krippendorff_ordinal"])
    for r, lvl in zip(res, ("interval", "ordinal")):
        assert r.statistic == pytest.approx(
            krippendorff.alpha(reliability_data=d, level_of_measurement=lvl), abs=1e-12
        )
        assert (r.n_units, r.n_raters) == (1700, 3)
