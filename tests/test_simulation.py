"""Tests of the statistical simulation (``metaeval.simulation``): seed paper
000, section 4, Algorithm 1, and the parameter estimation of its appendix
Tables 5 and 6.

Every numeric expectation states its source: a closed form (with the
tolerance derived from the standard error of the simulated mean), a slow
reference (plain Python or the generic engine path), scipy, or the paper's
published table.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval import simulation as sim
from metaeval.stats import codes
from metaeval.errors import ConstantInputWarning, DataError, ParameterError
from metaeval.stats.coefficients import kendall_stats, rank_batch
from metaeval.stats.levels import LEVELS, level_values

ALL_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23", "acc_eq")


def quiet(**kw):
    """simulate() with its constant-group warnings silenced (they are
    counted in the result and tested separately)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        return sim.simulate(**kw)


def row(res, level, method, **params):
    return res.get(level, method, **params)


# --------------------------------------------------------------------------
# building blocks


@pytest.mark.parametrize(
    "mu, sigma",
    [(0.0, 0.15), (0.4, 0.15), (0.99, 0.15), (1.0, 0.15), (-1.0, 0.15), (0.5, 0.01), (0.9, 2.0)],
)
def test_truncated_normal_ppf_equals_scipy(mu, sigma):
    # source: scipy.stats.truncnorm.ppf, the definition of the truncated normal quantile
    u = np.linspace(0.0, 1.0, 2001)
    a, b = (-1 - mu) / sigma, (1 - mu) / sigma
    expected = stats.truncnorm.ppf(u, a, b, loc=mu, scale=sigma)
    np.testing.assert_allclose(sim.truncated_normal_ppf(u, mu, sigma), expected, rtol=0, atol=1e-12)


def test_truncated_normal_draws_in_bounds_with_scipy_mean():
    # source: scipy.stats.truncnorm.mean / .std; tolerance 4 standard errors of
    # the mean of n independent draws (std / sqrt(n))
    mu, sigma, n = 0.9, 0.15, 200_000
    u = np.random.default_rng(7).random(n)
    r = sim.truncated_normal_ppf(u, mu, sigma)
    assert r.min() >= -1.0 and r.max() <= 1.0
    a, b = (-1 - mu) / sigma, (1 - mu) / sigma
    mean = stats.truncnorm.mean(a, b, loc=mu, scale=sigma)
    se = stats.truncnorm.std(a, b, loc=mu, scale=sigma) / math.sqrt(n)
    assert abs(r.mean() - mean) < 4 * se
    assert mean < mu - 0.05  # the truncation matters at this mu


def test_truncated_normal_sigma_zero_is_constant():
    assert np.all(sim.truncated_normal_ppf([0.1, 0.9], 0.3, 0.0) == 0.3)


def _slow_discretize(values, thresholds):
    """Reference: the category index of v is the number of thresholds <= v."""
    v = np.asarray(values, float)
    out = np.empty((len(thresholds),) + v.shape, np.int64)
    for b, ts in enumerate(thresholds):
        for idx, x in np.ndenumerate(v):
            out[(b,) + idx] = sum(1 for t in ts if t <= x)
    return out


def test_discretize_equals_slow_reference_with_ties_at_thresholds():
    rng = np.random.default_rng(3)
    values = rng.normal(0, 0.2, size=(4, 6))
    thresholds = rng.uniform(-0.15, 0.15, size=(5, 4))
    # ties: some values equal to a threshold, a duplicated threshold, a value
    # equal to a duplicated threshold
    values[0, 0] = thresholds[0, 1]
    values[1, 2] = thresholds[2, 3]
    thresholds[3, 2] = thresholds[3, 0]
    values[2, 2] = thresholds[3, 0]
    values[3, :] = values[3, 0]  # tied values
    got = sim.discretize(values, thresholds)
    np.testing.assert_array_equal(got, _slow_discretize(values, thresholds))
    # np.digitize on sorted thresholds is the same rule (right=False)
    for b in range(5):
        np.testing.assert_array_equal(got[b], np.digitize(values, np.sort(thresholds[b])))
    assert got.min() >= 0 and got.max() <= thresholds.shape[1]


def test_discretize_one_threshold_gives_two_categories():
    got = sim.discretize([-1.0, 0.0, 1.0], [[0.0]])
    np.testing.assert_array_equal(got, [[0, 1, 1]])  # a value on the threshold goes up


def test_discretize_rejects_nan():
    with pytest.raises(ParameterError, match="finite"):
        sim.discretize([0.0, np.nan], [[0.0]])


def test_ranks_from_codes_equal_rank_batch():
    # source: the engine's average ranks (metaeval.stats.coefficients.rank_batch)
    rng = np.random.default_rng(5)
    for C, n in [(2, 3), (3, 15), (7, 200), (20, 10)]:
        c = rng.integers(0, C, size=(4, 3, n))
        c[0, 0] = 1 % C  # a constant row
        expected = rank_batch(c.astype(float), np.ones(c.shape, bool))
        np.testing.assert_array_equal(sim.ranks_from_codes(c, C), expected)


@pytest.mark.parametrize("cx, cz, n", [(2, 2, 4), (3, 5, 15), (10, 10, 200), (4, 2, 70)])
def test_kendall_stats_from_codes_equal_engine(cx, cz, n):
    # source: the engine's Kendall sufficient statistics (numba kernel)
    rng = np.random.default_rng(cx * 100 + n)
    x = rng.integers(0, cx, size=(3, 4, n))
    z = rng.integers(0, cz, size=(3, 4, n))
    x[0, 0] = 0  # constant metric group
    z[1, 1] = cz - 1  # constant human group
    x[2, 2] = z[2, 2] % cx  # strongly tied together
    got = sim.kendall_stats_from_codes(x, z, cx, cz)
    np.testing.assert_array_equal(got, kendall_stats(x.astype(float), z.astype(float)))


# --------------------------------------------------------------------------
# the fast path against its slow twin (the generic level_values path)


def _adversarial_codes(rng, B, N, M, cx, cz):
    x = rng.integers(0, cx, size=(B, N, M))
    z = rng.integers(0, cz, size=(B, N, M))
    x[0] = 0  # a whole batch item constant (every level undefined)
    z[1, 0, :] = 0  # a constant system (item level: dropped group)
    x[1, :, 0] = 1 % cx  # a constant input (input level: dropped group)
    z[2] = np.minimum(x[2], cz - 1)  # heavy ties shared by both sides
    return x, z


@pytest.mark.parametrize(
    "cx, cz, average",
    [(2, 2, "macro"), (3, 2, "micro"), (5, 5, "macro"), (13, 4, "micro"), (30, 30, "macro")],
)
def test_fast_measures_equal_generic(cx, cz, average):
    # slow twin: metaeval.stats.levels.level_values on the float codes; exact equality
    rng = np.random.default_rng(cx * 31 + cz)
    x, z = _adversarial_codes(rng, 4, 6, 70, cx, cz)
    measures = tuple((lv, m) for lv in LEVELS for m in ALL_METHODS)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = codes.generic_measures(x.astype(float), z.astype(float), measures, average)
        for factor in (None, 0, 1e9):  # default rule, never tables, always tables
            got = codes.code_measures(x, z, cx, cz, measures, average, table_factor=factor)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])
    assert np.isnan(expected[0][:, 0]).any()  # the constant batch item is NaN somewhere


def test_simulate_engines_agree_exactly():
    # slow twin: engine="generic" calls level_values for every measure
    kw = dict(
        c_m=[2, 4, None],
        c_h=[3, None],
        n_systems=4,
        n_inputs=70,
        n_iterations=3,
        n_discretizations=5,
        method=ALL_METHODS,
        keep_values=True,
        rng=11,
    )
    fast = quiet(engine="auto", **kw)
    slow = quiet(engine="generic", **kw)
    for a, b in zip(fast.values, slow.values):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fast.n_groups_dropped, slow.n_groups_dropped)


def test_draw_scores_reproduce_the_simulated_values():
    # the documented contract: draw_scores(iteration=t) are the scores of iteration t
    kw = dict(rho_sys=0.5, mu_rho_item=0.3, n_systems=5, n_inputs=30, c_m=4, c_h=3)
    res = quiet(n_iterations=3, n_discretizations=4, keep_values=True, rng=2, **kw)
    for t in range(3):
        x, z = sim.draw_scores(iteration=t, n_discretizations=4, rng=2, **kw)
        for k, (lv, m) in enumerate(res.measures):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                expected = level_values(x, z, lv, m).value
            np.testing.assert_array_equal(res.values[0][k, t], expected)


# --------------------------------------------------------------------------
# closed forms


def test_system_pearson_tracks_rho_sys():
    # Closed form: the system means (xbar_i, zbar_i) are bivariate normal-like
    # with correlation rho_pop = (rho_sys s_m s_h + E[rho_i] si_m si_h / M) /
    # sqrt((s_m^2 + si_m^2 / M)(s_h^2 + si_h^2 / M)); the sample correlation of N
    # pairs has E[r] = rho (1 - (1 - rho^2) / (2 N)) + O(N^-2) (Fisher 1915;
    # Olkin and Pratt 1958).  Tolerance: 4 standard errors of the mean of T1
    # values plus the O(N^-2) remainder, bounded by 1 / N^2.
    N, M, T1 = 300, 40, 200
    rho_sys, mu_ri, s_ri = 0.6, 0.3, 0.15
    res = quiet(
        rho_sys=rho_sys,
        mu_rho_item=mu_ri,
        sigma_rho_item=s_ri,
        n_systems=N,
        n_inputs=M,
        level="system",
        method="pearson",
        n_iterations=T1,
        rng=1,
    )
    a, b = (-1 - mu_ri) / s_ri, (1 - mu_ri) / s_ri
    e_rho_i = stats.truncnorm.mean(a, b, loc=mu_ri, scale=s_ri)
    sm, sh = 0.15, 0.10
    rho_pop = (rho_sys * sm * sh + e_rho_i * sm * sh / M) / math.sqrt(
        (sm**2 + sm**2 / M) * (sh**2 + sh**2 / M)
    )
    expected = rho_pop * (1 - (1 - rho_pop**2) / (2 * N))
    r = row(res, "system", "pearson")
    assert r["n_values"] == T1 and r["n_nan"] == 0
    assert r["se"] == pytest.approx(r["std"] / math.sqrt(T1), rel=1e-12)  # se without T2
    assert abs(r["statistic"] - expected) < 4 * r["se"] + 1 / N**2


def test_item_pearson_tracks_the_truncated_mean_of_rho_i():
    # Closed form: item level = mean over systems of r_i, with
    # E[r_i | rho_i] = rho_i (1 - (1 - rho_i^2) / (2 M)) + O(M^-2), so
    # E[item] = E[rho_i] - E[rho_i (1 - rho_i^2)] / (2 M), expectations under the
    # truncated normal (scipy.stats.truncnorm.mean / .expect).  With
    # mu_rho_item = 0.9 the truncation moves the mean far from 0.9.
    # Tolerance: 4 standard errors plus 1 / M^2.
    N, M, T1 = 20, 400, 100
    mu_ri, s_ri = 0.9, 0.15
    res = quiet(
        rho_sys=0.3,
        mu_rho_item=mu_ri,
        sigma_rho_item=s_ri,
        n_systems=N,
        n_inputs=M,
        level="item",
        method="pearson",
        n_iterations=T1,
        rng=2,
    )
    a, b = (-1 - mu_ri) / s_ri, (1 - mu_ri) / s_ri
    tn = stats.truncnorm(a, b, loc=mu_ri, scale=s_ri)
    expected = tn.mean() - tn.expect(lambda r: r * (1 - r * r)) / (2 * M)
    r = row(res, "item", "pearson")
    assert abs(r["statistic"] - expected) < 4 * r["se"] + 1 / M**2
    assert abs(r["statistic"] - mu_ri) > 10 * r["se"]  # truncation is visible


def test_se_uses_iterations_as_units():
    # source: the documented formula; without NaN it is the standard error of
    # the T1 per-iteration means (the T2 values of an iteration share X, Z)
    res = quiet(
        c_m=3,
        c_h=3,
        n_systems=4,
        n_inputs=20,
        level="global",
        method="pearson",
        n_iterations=6,
        n_discretizations=5,
        keep_values=True,
        rng=3,
    )
    v = res.values[0][0]
    assert np.isfinite(v).all()
    means = v.mean(axis=1)
    assert res.se[0, 0] == pytest.approx(means.std(ddof=1) / math.sqrt(6), rel=1e-12)
    assert res.statistic[0, 0] == pytest.approx(v.mean(), rel=1e-12)
    assert res.std[0, 0] == pytest.approx(v.std(ddof=1), rel=1e-12)


# --------------------------------------------------------------------------
# the paper's qualitative takeaways (sections 4.3 and 4.4) on reduced grids


def _diff_ok(res, lv, m, lo, hi):
    """hi - lo exceeds 4 standard errors of the difference.  The two grid
    points share their draws (common random numbers), so the difference is
    paired: per iteration t, d_t = mean_t(hi) - mean_t(lo), and the standard
    error is sd(d_t) / sqrt(T1) (needs ``keep_values=True``)."""
    k = res.measures.index((lv, m))

    def values(params):
        (i,) = [i for i, p in enumerate(res.points) if all(p[a] == v for a, v in params.items())]
        return res.values[i][k]

    d = np.nanmean(values(hi), axis=1) - np.nanmean(values(lo), axis=1)
    return d.mean() > 4 * d.std(ddof=1) / math.sqrt(d.size)


def test_input_and_global_rise_with_rho_sys_and_mu_rho_item():
    # paper 000 section 4.3 / Figure 1: input- and global-level correlations
    # increase with rho_sys and with mu_rho_item
    res = quiet(
        rho_sys=[0.0, 0.5, 0.9],
        mu_rho_item=[0.0, 0.5, 0.9],
        n_systems=15,
        n_inputs=50,
        level=["input", "global"],
        method=["pearson", "kendall_b"],
        n_iterations=30,
        keep_values=True,
        rng=4,
    )
    for lv in ("input", "global"):
        for m in ("pearson", "kendall_b"):
            for mu in (0.0, 0.5, 0.9):
                assert _diff_ok(
                    res,
                    lv,
                    m,
                    {"rho_sys": 0.0, "mu_rho_item": mu},
                    {"rho_sys": 0.5, "mu_rho_item": mu},
                )
                assert _diff_ok(
                    res,
                    lv,
                    m,
                    {"rho_sys": 0.5, "mu_rho_item": mu},
                    {"rho_sys": 0.9, "mu_rho_item": mu},
                )
            for rs in (0.0, 0.5, 0.9):
                assert _diff_ok(
                    res,
                    lv,
                    m,
                    {"rho_sys": rs, "mu_rho_item": 0.0},
                    {"rho_sys": rs, "mu_rho_item": 0.5},
                )
                assert _diff_ok(
                    res,
                    lv,
                    m,
                    {"rho_sys": rs, "mu_rho_item": 0.5},
                    {"rho_sys": rs, "mu_rho_item": 0.9},
                )


@pytest.fixture(scope="module")
def scale_grid():
    # reduced version of the paper's scale-equal grid (section 4.2):
    # rho_sys = 0.8, mu_rho_item = 0.4, C^m = C^h, N = 15, M = 200
    return quiet(
        rho_sys=0.8,
        mu_rho_item=0.4,
        c_m=[2, 5, 10],
        c_h=[2, 5, 10],
        scale="equal",
        n_systems=15,
        n_inputs=200,
        n_iterations=20,
        n_discretizations=10,
        keep_values=True,
        rng=5,
    )


def test_system_rank_correlations_nearly_flat_in_scale_size(scale_grid):
    # paper 000 section 4.4, takeaway 1 (Figure 2): system-level Spearman and
    # Kendall are "almost unaffected by scale size".  Measured at full size
    # (docs/simulation.md: T1 = T2 = 100) their range over C = 2..20 is below
    # 0.01 while input/global/item Pearson rise by more than 0.1 from C = 2 to
    # C = 10.  Tolerance here: the change from C = 2 to 10 is under a quarter
    # of the rise of input-level Pearson, and within 0.02 + 4 standard errors.
    rise = (
        row(scale_grid, "input", "pearson", c_m=10)["statistic"]
        - row(scale_grid, "input", "pearson", c_m=2)["statistic"]
    )
    assert rise > 0.1
    for m in ("spearman", "kendall_b"):
        a = row(scale_grid, "system", m, c_m=2)
        b = row(scale_grid, "system", m, c_m=10)
        change = abs(b["statistic"] - a["statistic"])
        assert change < rise / 4
        assert change < 0.02 + 4 * math.hypot(a["se"], b["se"])


def test_other_measures_rise_from_scale_2_to_10(scale_grid):
    # paper 000 section 4.4, takeaway 3 (Figure 2): "increasing the scale size
    # initially increases the values of most correlation measures"
    for lv in ("input", "item", "global"):
        for m in ("pearson", "spearman", "kendall_b"):
            assert _diff_ok(scale_grid, lv, m, {"c_m": 2}, {"c_m": 5}), (lv, m)
            assert _diff_ok(scale_grid, lv, m, {"c_m": 2}, {"c_m": 10}), (lv, m)


# --------------------------------------------------------------------------
# determinism, grid independence, resumability


def test_same_seed_same_numbers_for_one_and_two_jobs():
    # two units (continuous and discretized points), one kernel (Pearson) so
    # the worker processes start quickly
    kw = dict(
        rho_sys=[0.2, 0.7],
        c_m=[None, 3],
        c_h=[None, 3],
        scale="equal",
        n_systems=5,
        n_inputs=20,
        n_iterations=8,
        n_discretizations=4,
        level="global",
        method="pearson",
        rng=123,
        keep_values=True,
    )
    a = quiet(n_jobs=1, **kw)
    b = quiet(n_jobs=2, **kw)
    for va, vb in zip(a.values, b.values):
        np.testing.assert_array_equal(va, vb)
    assert a.signature == b.signature and "seed:123" in a.signature


def test_grid_point_does_not_depend_on_the_rest_of_the_grid():
    kw = dict(
        n_systems=5, n_inputs=20, n_iterations=110, n_discretizations=3, rng=9, keep_values=True
    )
    big = quiet(rho_sys=[0.1, 0.5, 0.9], c_m=[None, 4], c_h=[None, 4], scale="equal", **kw)
    one = quiet(rho_sys=0.5, c_m=4, c_h=4, **kw)
    i = next(i for i, p in enumerate(big.points) if p["rho_sys"] == 0.5 and p["c_m"] == 4)
    np.testing.assert_array_equal(big.values[i], one.values[0])
    cont = quiet(rho_sys=0.9, **kw)
    j = next(i for i, p in enumerate(big.points) if p["rho_sys"] == 0.9 and p["c_m"] is None)
    np.testing.assert_array_equal(big.values[j], cont.values[0])


def test_fewer_iterations_are_a_prefix():
    # per-iteration streams: T1 = 5 gives the first 5 iterations of T1 = 12
    kw = dict(n_systems=4, n_inputs=10, c_m=3, c_h=3, n_discretizations=2, rng=1, keep_values=True)
    a = quiet(n_iterations=5, **kw)
    b = quiet(n_iterations=12, **kw)
    np.testing.assert_array_equal(a.values[0], b.values[0][:, :5])


def test_checkpoint_resume_equals_uninterrupted(tmp_path):
    kw = dict(
        rho_sys=[0.3, 0.6], n_systems=4, n_inputs=10, n_iterations=250, rng=5, keep_values=True
    )
    full = quiet(**kw)
    folder = tmp_path / "ckpt"
    quiet(checkpoint=folder, **kw)
    files = sorted(folder.glob("*.npz"))
    assert len(files) == 3  # 250 iterations in blocks of 100
    files[1].unlink()  # an interrupted run: one unit missing
    calls = []
    resumed = quiet(checkpoint=folder, progress=calls.append, **kw)
    assert len(calls) == 3
    for a, b in zip(full.values, resumed.values):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ParameterError, match="other arguments"):
        quiet(checkpoint=folder, **{**kw, "rng": 6})


# --------------------------------------------------------------------------
# results, NaN counting and warnings


def test_frame_columns_and_dict():
    res = quiet(
        rho_sys=[0.2, 0.4],
        c_m=[None, 3],
        c_h=3,
        n_systems=4,
        n_inputs=8,
        n_iterations=3,
        n_discretizations=2,
        rng=0,
    )
    df = res.to_frame()
    assert list(df.columns) == [
        *sim.POINT_COLUMNS,
        "level",
        "method",
        "statistic",
        "std",
        "se",
        "n_values",
        "n_nan",
        "n_groups_dropped",
        "signature",
    ]
    assert len(df) == 4 * 12
    assert str(df["c_m"].dtype) == "Int64" and df["c_m"].isna().sum() == 24
    assert set(df.loc[df["c_m"].isna(), "n_discretizations"]) == {2}  # c_h = 3 discretizes
    assert df["signature"].str.contains("seed:0").all()
    assert df["signature"].str.endswith(f"metaeval:{metaeval.__version__}").all()
    d = res.to_dict()
    assert d["signature"] == res.signature and len(d["rows"]) == 48
    assert d["rows"][0]["c_m"] is None or isinstance(d["rows"][0]["c_m"], int)


def test_nan_values_are_counted_and_warned():
    # N = 3 systems, M = 2 inputs, C = 2: constant discretized scores are common
    with pytest.warns(ConstantInputWarning, match="undefined"):
        res = sim.simulate(
            c_m=2,
            c_h=2,
            n_systems=3,
            n_inputs=2,
            level=["system", "global"],
            method="pearson",
            n_iterations=20,
            n_discretizations=10,
            keep_values=True,
            rng=0,
        )
    v = res.values[0]
    nan = np.isnan(v).sum(axis=(1, 2))
    assert (nan > 0).all()
    np.testing.assert_array_equal(res.n_nan[0], nan)
    np.testing.assert_array_equal(res.n_values[0], v[0].size - nan)
    np.testing.assert_allclose(res.statistic[0], np.nanmean(v, axis=(1, 2)), rtol=1e-12)


def test_dropped_groups_are_counted_and_warned():
    with pytest.warns(ConstantInputWarning, match="n_groups_dropped"):
        res = sim.simulate(
            c_m=2,
            c_h=2,
            n_systems=3,
            n_inputs=30,
            level="input",
            method="pearson",
            n_iterations=5,
            n_discretizations=5,
            rng=0,
        )
    assert res.n_groups_dropped[0, 0] > 0


def test_paper_grids_presets():
    # paper 000 section 4.2
    lv = sim.paper_grid("levels")
    assert len(lv["rho_sys"]) == 12 and lv["n_iterations"] == 1000
    assert lv["rho_sys"][-2:] == (0.95, 0.99)
    pts = sim._expand_grid(
        {**_defaults(), **{k: lv[k] for k in ("rho_sys", "mu_rho_item")}},
        lv["sizes"],
        "all",
        1000,
        1,
    )
    assert len(pts) == 2 * 144
    se = sim.paper_grid("scale-equal")
    pts = sim._expand_grid(
        {**_defaults(), "c_m": se["c_m"], "c_h": se["c_h"]}, se["sizes"], se["scale"], 100, 100
    )
    assert len(pts) == 2 * 12 and all(p["c_m"] == p["c_h"] for p in pts)
    ge = sim.paper_grid("scale-ge")
    pts = sim._expand_grid(
        {**_defaults(), "c_m": ge["c_m"], "c_h": ge["c_h"]}, ge["sizes"], ge["scale"], 100, 100
    )
    assert len(pts) == 2 * 15 and all(p["c_m"] >= p["c_h"] for p in pts)
    assert sim.paper_grid("levels", n_systems=5, n_inputs=100).get("sizes") is None


def _defaults():
    return dict(
        rho_sys=0.8,
        mu_rho_item=0.4,
        sigma_rho_item=0.15,
        mu_m=0.0,
        mu_h=0.0,
        sigma_m=0.15,
        sigma_h=0.1,
        sigma_item_m=None,
        sigma_item_h=None,
        n_systems=None,
        n_inputs=None,
        c_m=None,
        c_h=None,
    )


# --------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"c_m": 1}, "c_m=1: a scale needs at least 2"),
        ({"c_h": [3, 1]}, "c_h=1"),
        ({"c_m": 2.5}, "c_m=2.5 must be an int"),
        ({"rho_sys": 1.2}, r"rho_sys=1.2 must be in \[-1, 1\]"),
        ({"mu_rho_item": -1.5}, "mu_rho_item"),
        ({"sigma_m": 0.0}, "sigma_m=0.0 must be > 0"),
        ({"sigma_item_h": -0.1}, "sigma_item_h"),
        ({"sigma_rho_item": -0.1}, "sigma_rho_item=-0.1 must be >= 0"),
        ({"n_systems": 1}, "n_systems=1 must be >= 2"),
        ({"n_inputs": 1}, "n_inputs=1 must be >= 2"),
        ({"sizes": [(15, 1)]}, "n_inputs=1"),
        ({"sizes": [(15,)]}, "not an"),
        ({"sizes": [(15, 200)], "n_systems": 5}, "either sizes"),
        ({"n_iterations": 0}, "n_iterations=0 must be >= 1"),
        ({"n_discretizations": 0}, "n_discretizations=0"),
        ({"level": "segment"}, "ambiguous"),
        ({"level": "sentence"}, "not a grouping level"),
        ({"method": "kendall"}, "ambiguous"),
        ({"method": "pairwise_accuracy"}, "only at level system"),
        ({"average": "weighted"}, "average"),
        ({"scale": "ge"}, "scale='ge'"),
        ({"engine": "numba"}, "engine"),
        ({"c_m": [2, 3], "c_h": 5, "scale": "metric_ge_human"}, "grid is empty"),
        ({"rho_sys": []}, "rho_sys is an empty list"),
        ({"rho_sys": True}, "finite number"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"rng": "seed"}, "rng"),
    ],
)
def test_bad_parameters_raise_named_errors(kw, match):
    kw.setdefault("n_iterations", 1)
    with pytest.raises(ParameterError, match=match):
        sim.simulate(**kw)


def test_unknown_preset():
    with pytest.raises(ParameterError, match="grid preset 'fig2' is unknown; choose one of levels"):
        sim.simulate_paper_grid("fig2")


def test_draw_scores_takes_single_values():
    with pytest.raises(ParameterError, match="rho_sys must be a single value"):
        sim.draw_scores(rho_sys=[0.1, 0.2])


# --------------------------------------------------------------------------
# parameter estimation (Tables 5 and 6) and simulating a dataset


@pytest.fixture(scope="module")
def summeval():
    return metaeval.load_dataset("summeval")


# Paper 000, appendix Table 5, SummEval rows D1-D4: mu-hat, sigma-hat, #unique, tie ratio
TABLE5 = {
    "coherence": (0.60, 0.15, 13, 0.10),
    "consistency": (0.92, 0.14, 12, 0.67),
    "fluency": (0.92, 0.09, 13, 0.53),
    "relevance": (0.69, 0.09, 13, 0.13),
}


def _sixteen(ds):
    # the paper's 16 systems: the bundled data add M23_dynamicmix, which has no
    # texts in the BARTScore release (PROVENANCE.md)
    return ds.subset(systems=[s for s in ds.systems if s != "M23_dynamicmix"])


def test_table5_reproduced_to_two_decimals(summeval):
    # source: paper 000 Table 5; our definitions reproduce all 16 numbers
    est = sim.estimate_parameters(_sixteen(summeval), list(TABLE5), metrics=[])
    for h, (mu, sigma, uniq, tie) in TABLE5.items():
        e = est.get(h)
        assert (round(e.mu, 2), round(e.sigma, 2), e.n_unique, round(e.tie_ratio, 2)) == (
            mu,
            sigma,
            uniq,
            tie,
        ), h


def test_table5_reproduced_with_the_papers_scale_bounds(summeval):
    # source: paper 000 Table 5 and section 4.2 (scores normalized to 0-1 by the scale,
    # (x - 1) / 4 for SummEval's 1-5 expert scale): the same 16 numbers with declared bounds
    est = sim.estimate_parameters(_sixteen(summeval), list(TABLE5), metrics=[], bounds=(1, 5))
    for h, (mu, sigma, uniq, tie) in TABLE5.items():
        e = est.get(h)
        assert (e.scale_low, e.scale_high, e.bounds) == (1.0, 5.0, "declared")
        assert (round(e.mu, 2), round(e.sigma, 2), e.n_unique, round(e.tie_ratio, 2)) == (mu, sigma, uniq, tie), h
    assert "norm:scale-bounds" in est.signature


def test_declared_bounds_differ_from_the_observed_range_when_extremes_are_missing():
    # Regression (held-out data): a 1-5 scale on which nobody gave 1 or 5 was stretched to
    # [0, 1] over the observed 2-4 range. Reference: (x - low) / (high - low) by hand (numpy).
    g = np.random.default_rng(0)
    h = g.integers(2, 5, size=(6, 30)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": h}, human="h")
    obs = sim.estimate_parameters(ds, "h", metrics=[]).get("h")
    dec = sim.estimate_parameters(ds, "h", metrics=[], bounds={"h": (1, 5)}).get("h")
    for e, lo, hi in ((obs, 2.0, 4.0), (dec, 1.0, 5.0)):
        v = (h - lo) / (hi - lo)
        np.testing.assert_allclose(e.mu, v.mean(), rtol=1e-13)
        np.testing.assert_allclose(e.sigma, v.mean(axis=1).std(ddof=1), rtol=1e-13)
        assert (e.min, e.max) == (2.0, 4.0)
    assert obs.bounds == "observed" and dec.bounds == "declared"


def test_values_outside_declared_bounds_are_an_error():
    # e.g. -1 failure codes in a 1-5 judge column must not be normalized as scores
    h = np.array([[1.0, 2.0, 5.0], [3.0, -1.0, 4.0]])
    ds = metaeval.Dataset.from_arrays({"h": h}, human="h")
    with pytest.raises(metaeval.DataError, match=r"outside the declared scale \[1, 5\].*-1"):
        sim.estimate_parameters(ds, "h", metrics=[], bounds=(1, 5))
    with pytest.raises(metaeval.ParameterError, match="unknown column"):
        sim.estimate_parameters(ds, "h", metrics=[], bounds={"x": (1, 5)})
    with pytest.raises(metaeval.ParameterError, match="low < high"):
        sim.estimate_parameters(ds, "h", metrics=[], bounds=(5, 1))


def test_paper_bounds_on_usr_scales_accepted_or_refused():
    # docs/simulation.md (issue 23 item 8): seed paper 000 Table 5 normalizes USR's 1-3 aspects as
    # 1-5 (mu ~ 0.3-0.4) and its 0-1 aspects too (mu < 0 for D18, D19, D24, D25), against its own
    # Section 4.2 ("normalized to the 0-1 scale").  1-5 bounds on 1-3 ratings: accepted, and
    # (x - 1) / 4 by hand; on 0-1 ratings: refused (values below the declared low bound).
    g = np.random.default_rng(0)
    three = g.integers(1, 4, (6, 40)).astype(float)
    ds = metaeval.Dataset.from_arrays({"h": three}, human="h")
    e = sim.estimate_parameters(ds, "h", metrics=[], bounds=(1, 5)).get("h")
    assert (e.scale_low, e.scale_high, e.bounds) == (1.0, 5.0, "declared")
    ref = sim.estimate_parameters(metaeval.Dataset.from_arrays({"h": (three - 1) / 4}, human="h"), "h",
                                  metrics=[], bounds=(0, 1)).get("h")
    assert e.mu == pytest.approx(ref.mu, abs=1e-12) and e.sigma == pytest.approx(ref.sigma, abs=1e-12)
    binary = g.integers(0, 2, (6, 40)).astype(float)
    with pytest.raises(metaeval.DataError, match=r"outside the declared scale \[1, 5\]"):
        sim.estimate_parameters(metaeval.Dataset.from_arrays({"h": binary}, human="h"), "h", metrics=[],
                                bounds=(1, 5))
    ok = sim.estimate_parameters(metaeval.Dataset.from_arrays({"h": binary}, human="h"), "h", metrics=[],
                                 bounds=(0, 1)).get("h")
    assert 0 <= ok.mu <= 1


def test_table5_alternative_definitions_do_not_match(summeval):
    # why these definitions: the other candidates miss Table 5 (docs/simulation.md)
    ds = _sixteen(summeval)
    misses = {"sd_cells": 0, "sd_within": 0, "sd_means_ddof0": 0, "tie_within_input": 0}
    for h, (mu, sigma, uniq, tie) in TABLE5.items():
        a = np.asarray(ds.scores(h))
        v = (a - a.min()) / (a.max() - a.min())
        misses["sd_cells"] += round(v.std(ddof=1), 2) != sigma
        misses["sd_within"] += round(v.std(axis=1, ddof=1).mean(), 2) != sigma
        misses["sd_means_ddof0"] += round(v.mean(axis=1).std(ddof=0), 2) != sigma
        tied = pairs = 0
        for j in range(v.shape[1]):
            _, c = np.unique(v[:, j], return_counts=True)
            tied += (c * (c - 1) / 2).sum()
            pairs += v.shape[0] * (v.shape[0] - 1) / 2
        misses["tie_within_input"] += round(tied / pairs, 2) != tie
    assert all(m >= 1 for m in misses.values()), misses


def test_estimates_on_seventeen_systems_are_close(summeval):
    # bundled data (17 systems) vs Table 5 (16 systems): within 0.015
    est = sim.estimate_parameters(summeval, list(TABLE5), metrics=[])
    for h, (mu, sigma, uniq, tie) in TABLE5.items():
        e = est.get(h)
        assert abs(e.mu - mu) < 0.015 and abs(e.sigma - sigma) < 0.015
        assert abs(e.tie_ratio - tie) < 0.015 and e.n_unique == uniq


def test_metric_estimates_are_the_core_correlations(summeval):
    # source: metaeval.correlate (Pearson) at each level; item spread from the
    # per-system correlations (ddof=1)
    est = sim.estimate_parameters(summeval, "coherence", metrics=["ROUGE.1", "G.EVAL.4.COH"])
    e = est.get("G.EVAL.4.COH", human="coherence")
    assert e.role == "metric" and e.n_unique == 220
    for attr, level in (
        ("rho_sys", "system"),
        ("mu_rho_item", "item"),
        ("r_input", "input"),
        ("r_global", "global"),
    ):
        c = metaeval.correlate(
            summeval,
            "coherence",
            metrics=["G.EVAL.4.COH"],
            level=level,
            method="pearson",
            ci="none",
            pvalue="none",
        )
        assert getattr(e, attr) == pytest.approx(c[0].statistic, abs=1e-12)
    per_sys = [
        stats.pearsonr(summeval.scores("G.EVAL.4.COH")[i], summeval.scores("coherence")[i])[0]
        for i in range(17)
    ]
    assert e.sigma_rho_item == pytest.approx(np.std(per_sys, ddof=1), abs=1e-12)
    df = est.to_frame()
    assert list(df["column"]) == ["coherence", "ROUGE.1", "G.EVAL.4.COH"]
    assert np.isnan(df.loc[0, "rho_sys"]) and df.loc[0, "role"] == "human"


def test_tie_ratio_and_unique_on_a_small_example():
    # by hand: cells 1, 1, 2, 3 -> 6 pairs, 1 tied; 3 distinct values;
    # normalized 0, 0, .5, 1 -> mu = 0.375; system means (0, 0.75) -> sd = 0.5303
    ds = metaeval.Dataset.from_arrays({"h": np.array([[1.0, 1.0], [2.0, 3.0]])}, human="h")
    e = sim.estimate_parameters(ds, "h", metrics=[]).get("h")
    assert e.n_unique == 3 and e.tie_ratio == pytest.approx(1 / 6)
    assert e.mu == pytest.approx(0.375) and e.sigma == pytest.approx(0.75 / math.sqrt(2))


def test_estimate_recovers_simulated_parameters():
    # data drawn from the model itself (continuous, M = 500): mu_rho_item-hat
    # estimates E[rho_i] (truncated normal mean) with standard error about
    # sigma_rho_item / sqrt(N) = 0.019 (tolerance 0.03, 1.5 SE: the seed is
    # fixed); rho_sys-hat has sd about (1 - 0.7^2) / sqrt(60) = 0.066
    # (tolerance 0.2, 3 sd); sigma_rho_item-hat within 0.05 of 0.15 (its sd is
    # about 0.15 / sqrt(2 (N - 1)) = 0.014, plus the O(1/M) sampling noise of r_i).
    x, z = sim.draw_scores(rho_sys=0.7, mu_rho_item=0.5, n_systems=60, n_inputs=500, rng=4)
    ds = metaeval.Dataset.from_arrays({"h": z, "m": x}, human="h")
    e = sim.estimate_parameters(ds, "h").get("m", human="h")
    assert abs(e.mu_rho_item - stats.truncnorm.mean(-10, 10 / 3, loc=0.5, scale=0.15)) < 0.03
    assert abs(e.rho_sys - 0.7) < 0.2
    assert e.sigma_rho_item == pytest.approx(0.15, abs=0.05)


def test_item_dropped_systems_counted_and_warned():
    h = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [1.0, 3.0, 2.0]])
    m = np.array([[0.1, 0.3, 0.2], [0.5, 0.1, 0.2], [0.3, 0.1, 0.2]])
    ds = metaeval.Dataset.from_arrays({"h": h, "m": m}, human="h")
    with pytest.warns(ConstantInputWarning, match="1 of 3 systems"):
        e = sim.estimate_parameters(ds, "h").get("m", human="h")
    assert e.n_item_dropped == 1


def test_estimate_bad_columns(summeval):
    with pytest.raises(DataError, match="not a human score column"):
        sim.estimate_parameters(summeval, "ROUGE.1")
    with pytest.raises(DataError, match="unknown metric column"):
        sim.estimate_parameters(summeval, "coherence", metrics=["nope"])


def test_simulate_dataset_uses_the_estimates(summeval):
    ds = summeval.subset(systems=list(summeval.systems[:5]), inputs=list(summeval.inputs[:20]))
    params = sim.dataset_parameters(ds, "coherence", "G.EVAL.4.COH", max_unique=100)
    est = sim.estimate_parameters(ds, "coherence", metrics=["G.EVAL.4.COH"])
    h, m = est.get("coherence"), est.get("G.EVAL.4.COH", human="coherence")
    assert params["c_h"] == h.n_unique and params["n_systems"] == 5 and params["n_inputs"] == 20
    assert params["c_m"] == m.n_unique <= 100
    assert params["rho_sys"] == m.rho_sys and params["sigma_item_h"] == h.sigma_item
    res = quiet_dataset(
        ds,
        "coherence",
        ["G.EVAL.4.COH", "BertScore_f1"],
        max_unique=60,
        overrides={"c_h": [5, None]},
        level="global",
        method="kendall_b",
        n_iterations=3,
        n_discretizations=2,
        rng=0,
    )
    df = res.to_frame()
    assert list(df.columns[:2]) == ["human", "metric"]
    assert len(df) == 4 and set(df["metric"]) == {"G.EVAL.4.COH", "BertScore_f1"}
    n_bert = (
        sim.estimate_parameters(ds, "coherence", metrics=["BertScore_f1"])
        .get("BertScore_f1", human="coherence")
        .n_unique
    )
    assert n_bert > 60
    assert df.loc[df["metric"] == "BertScore_f1", "c_m"].isna().all()  # continuous
    assert list(df["c_h"].astype(object).where(df["c_h"].notna(), None)) == [5, None, 5, None]
    assert df["signature"].str.contains("metric:BertScore_f1").sum() == 2
    with pytest.raises(ParameterError, match="overrides: unknown"):
        sim.simulate_dataset(ds, "coherence", "ROUGE.1", overrides={"rho": 0.5})


def quiet_dataset(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        return sim.simulate_dataset(*args, **kw)
