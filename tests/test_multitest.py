"""Multiple-testing adjustment (metaeval.stats.multitest)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.stats.multitest import ADJUSTMENTS, adjust_pairwise_matrix, adjust_pvalues

P5 = [0.001, 0.01, 0.03, 0.04, 0.2]


def test_holm_statsmodels_value():
    # statsmodels 0.15.0 statsmodels.stats.multitest.multipletests(
    # [.001,.01,.03,.04,.2], method='holm')[1] -> [0.005, 0.04, 0.09, 0.09, 0.2];
    # by hand (Holm 1979): p_(i) * (5,4,3,2,1) = .005,.04,.09,.08,.2, running max
    np.testing.assert_allclose(adjust_pvalues(P5, method="holm"), [0.005, 0.04, 0.09, 0.09, 0.2], rtol=1e-12)


def test_bh_statsmodels_value():
    # statsmodels 0.15.0 multipletests(..., method='fdr_bh')[1] and scipy
    # stats.false_discovery_control(P5) -> [0.005, 0.025, 0.05, 0.05, 0.2]
    np.testing.assert_allclose(adjust_pvalues(P5, method="bh"), [0.005, 0.025, 0.05, 0.05, 0.2], rtol=1e-12)


def test_holm_is_the_default_and_none_is_identity():
    np.testing.assert_array_equal(adjust_pvalues(P5), adjust_pvalues(P5, method="holm"))
    np.testing.assert_array_equal(adjust_pvalues(P5, method="none"), P5)


def test_bh_matches_scipy_false_discovery_control():
    # oracle: scipy.stats.false_discovery_control(method='bh'), run live
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = rng.integers(1, 60)
        p = rng.uniform(size=m) ** rng.uniform(0.3, 4)  # skewed towards 0 or 1
        if rng.uniform() < 0.3:  # with ties
            p = np.round(p, 1)
        np.testing.assert_allclose(
            adjust_pvalues(p, method="bh"), stats.false_discovery_control(p, method="bh"), rtol=1e-12, atol=1e-15
        )


def _holm_slow(p):
    """Holm (1979), written out plainly: the j-th smallest of m finite
    p-values gets max over i <= j of min(1, (m - i + 1) * p_(i)); NaN stays
    NaN and is not counted in m."""
    p = list(p)
    finite = [k for k in range(len(p)) if not np.isnan(p[k])]
    finite.sort(key=lambda k: p[k])
    m = len(finite)
    out = [float("nan")] * len(p)
    running = 0.0
    for rank, k in enumerate(finite, start=1):
        running = max(running, min(1.0, (m - rank + 1) * p[k]))
        out[k] = running
    # equal p-values must get equal adjusted values: the largest of the group
    for k in finite:
        for k2 in finite:
            if p[k2] == p[k]:
                out[k] = max(out[k], out[k2])
    return out


def test_holm_matches_slow_reference_with_nans():
    rng = np.random.default_rng(1)
    for _ in range(100):
        m = rng.integers(1, 40)
        p = rng.uniform(size=m) ** rng.uniform(0.3, 4)
        if rng.uniform() < 0.3:
            p = np.round(p, 1)
        p[rng.uniform(size=m) < 0.25] = np.nan
        np.testing.assert_allclose(adjust_pvalues(p, method="holm"), _holm_slow(p), rtol=1e-12, atol=0)


@pytest.mark.parametrize("method", sorted(ADJUSTMENTS))
def test_nans_kept_and_not_counted(method):
    p = np.array([0.01, np.nan, 0.04, np.nan])
    out = adjust_pvalues(p, method=method)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(p))
    # m = 2, not 4
    np.testing.assert_allclose(out[[0, 2]], adjust_pvalues([0.01, 0.04], method=method))
    assert np.isnan(adjust_pvalues([np.nan, np.nan], method=method)).all()
    assert adjust_pvalues([], method=method).shape == (0,)


@pytest.mark.parametrize("method", sorted(ADJUSTMENTS))
def test_any_shape_one_family(method):
    rng = np.random.default_rng(2)
    p = rng.uniform(size=(3, 4, 5)) ** 2
    p[0, 1, 2] = np.nan
    out = adjust_pvalues(p, method=method)
    assert out.shape == p.shape
    np.testing.assert_array_equal(out.ravel(), adjust_pvalues(p.ravel(), method=method))
    assert adjust_pvalues(0.3, method=method).shape == ()


@pytest.mark.parametrize("method", sorted(ADJUSTMENTS))
def test_monotone_capped_and_not_below_raw(method):
    rng = np.random.default_rng(3)
    for _ in range(50):
        p = rng.uniform(size=rng.integers(1, 30)) ** 3
        out = adjust_pvalues(p, method=method)
        order = np.argsort(p)
        assert (np.diff(out[order]) >= 0).all()
        assert (out <= 1).all() and (out >= p - 1e-15).all()


def test_input_not_modified():
    p = np.array([0.04, 0.01, np.nan])
    before = p.copy()
    adjust_pvalues(p, method="bh")
    np.testing.assert_array_equal(p, before)


def test_pairwise_matrix_symmetric_one_family():
    rng = np.random.default_rng(4)
    k = 6
    upper = rng.uniform(size=(k, k)) ** 3
    P = np.triu(upper, 1) + np.triu(upper, 1).T
    P[1, 4] = P[4, 1] = np.nan  # a missing test
    np.fill_diagonal(P, 0.0)  # the diagonal is ignored
    for method in ADJUSTMENTS:
        out = adjust_pairwise_matrix(P, method=method)
        np.testing.assert_array_equal(out, out.T)
        assert np.isnan(np.diag(out)).all() and np.isnan(out[1, 4])
        iu = np.triu_indices(k, 1)
        # the 15 pairs (14 non-NaN) adjusted once as one family
        np.testing.assert_array_equal(out[iu], adjust_pvalues(P[iu], method=method))


def test_pairwise_matrix_example():
    # Holm on the 3 pairs, by hand: sorted .01, .03, .04 -> 3 x .01 = .03,
    # 2 x .03 = .06, max(.06, 1 x .04) = .06
    P = [[0, 0.01, 0.04], [0.01, 0, 0.03], [0.04, 0.03, 0]]
    out = adjust_pairwise_matrix(P, method="holm")
    np.testing.assert_allclose(out[0, 1:], [0.03, 0.06])
    np.testing.assert_allclose(out[1, 2], 0.06)


def test_pairwise_matrix_validation():
    with pytest.raises(ParameterError, match=r"square \(k, k\)"):
        adjust_pairwise_matrix(np.zeros((2, 3)))
    with pytest.raises(ParameterError, match=r"symmetric.*P\[0, 1\] = 0.1 and P\[1, 0\] = 0.9.*adjust_pvalues"):
        adjust_pairwise_matrix([[0, 0.1], [0.9, 0]])


def test_validation_messages():
    with pytest.raises(ParameterError, match=r"method='fdr_bh'.*choose one of 'bonferroni'.*'holm'.*'bh'.*'none'"):
        adjust_pvalues(P5, method="fdr_bh")
    with pytest.raises(ParameterError, match=r"must lie in \[0, 1\].*1 value\(s\).*1.5"):
        adjust_pvalues([0.1, 1.5])
    with pytest.raises(ParameterError, match=r"must lie in \[0, 1\]"):
        adjust_pvalues([0.1, np.inf])
    with pytest.raises(ParameterError, match=r"must lie in \[0, 1\]"):
        adjust_pvalues([-0.1])
    with pytest.raises(TypeError):  # method is keyword-only
        adjust_pvalues(P5, "bh")


def test_bonferroni_is_m_times_p_capped_at_one():
    # Bonferroni by definition: p * m, capped at 1 (statsmodels multipletests(method="bonferroni"));
    # NaN entries are not tests and do not count in m (here m = 3).
    out = adjust_pvalues([0.01, np.nan, 0.2, 0.5], method="bonferroni")
    np.testing.assert_array_equal(out, [0.03, np.nan, 0.6000000000000001, 1.0])
