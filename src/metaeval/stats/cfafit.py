"""Confirmatory factor analysis end to end on a cells x indicators matrix: the fitting
specification of a model, the identification checks, the category codes of ordinal indicators,
and the two estimators (ML on the covariances; DWLS on polychoric correlations, lavaan's
WLSMV) with their fit measures, standard errors and factor scores.

Arrays in, arrays out (the numerics are in :mod:`metaeval.stats.cfa` and
:mod:`metaeval.stats.polychoric`, the model and its lavaan-like syntax in
:mod:`metaeval.stats.cfamodel`); :func:`metaeval.validity.cfa` reads the dataset, calls these
and builds the result.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats as _st

from .._stacklevel import user_stacklevel
from ..errors import DataError, ParameterError, UndefinedStatisticWarning
from . import cfa as _cfa
from . import polychoric as _poly

#: Largest number of categories accepted for an ordinal indicator.
MAX_CATEGORIES = 10


def model_spec(model, orthogonal):
    """The fitting specification (:class:`metaeval.stats.cfa.Spec`) of a :class:`CFAModel`:
    the loading pattern and the fixed factor correlations (all 0 with ``orthogonal``)."""
    factors = model.factors
    ind = model.indicators
    pat = np.zeros((len(ind), len(factors)), bool)
    for a, (f, items) in enumerate(model.loadings):
        for i in items:
            pat[ind.index(i), a] = True
    fixed = {}
    for x, y, v in model.fixed_correlations:
        a, b = factors.index(x), factors.index(y)
        fixed[(max(a, b), min(a, b))] = v
    if orthogonal:
        for b in range(len(factors)):
            for a in range(b + 1, len(factors)):
                fixed.setdefault((a, b), 0.0)
    return _cfa.Spec(factors, ind, pat, fixed)


def check_identified(spec, model, continuous, n_moments):
    """Raise ParameterError for models that are not identified (counting and local rules)."""
    k = spec.k
    for a, f in enumerate(spec.factors):
        items = [spec.indicators[i] for i in np.nonzero(spec.pattern[:, a])[0]]
        linked = [
            b for b in range(k)
            if b != a and spec.fixed_corr.get((max(a, b), min(a, b)), None) != 0.0
        ]
        if len(items) == 1:
            raise ParameterError(
                f"the model is not identified: factor {f!r} has a single indicator "
                f"({items[0]!r}), so its loading and the indicator's residual variance cannot "
                "be separated (with no constraint to fix one of them); give it at least "
                "two indicators (three if it is uncorrelated with every other factor)"
            )
        if len(items) == 2 and not linked:
            raise ParameterError(
                f"the model is not identified: factor {f!r} has two indicators "
                f"({', '.join(map(repr, items))}) and no free correlation with another factor, "
                "so only the product of its two loadings is determined; give it a third "
                "indicator or let it correlate with another factor"
            )
    q = spec.n_free(continuous)
    if q > n_moments:
        raise ParameterError(
            f"the model is not identified: it has {q} free parameters but the data give only "
            f"{n_moments} moments (df = {n_moments - q} < 0); remove parameters or add "
            "indicators"
        )
    # local identification: the Jacobian of the moments must have full column rank
    rng = np.random.default_rng(12345)
    nl = int(spec.pattern.sum())
    t = np.concatenate([rng.uniform(0.5, 0.8, nl), rng.uniform(0.1, 0.3, len(spec.free_corr))])
    if continuous:
        t = np.concatenate([t, rng.uniform(0.3, 0.6, spec.p)])
        J = _cfa.dsigma_cov(spec, t)
        il = np.tril_indices(spec.p)
        J = J[:, il[0], il[1]].T
    else:
        J = _cfa.jac_cor(spec, t)
    sv = np.linalg.svd(J, compute_uv=False)
    rank = int((sv > sv[0] * 1e-9).sum()) if sv.size else 0
    if rank < q:
        raise ParameterError(
            f"the model is not identified: its {q} free parameters are not all determined by "
            f"the moments (the Jacobian has rank {rank} < {q}); check cross-loadings and "
            "factors with few indicators"
        )


def ordinal_codes(X, names, declared):
    """Category codes of each indicator, validating ordinal values (DataError naming it)."""
    codes, cats = [], []
    for j, name in enumerate(names):
        x = X[:, j]
        if np.any(x != np.round(x)):
            bad = x[x != np.round(x)][0]
            raise DataError(
                f"indicator {name!r} was {'declared' if declared else 'treated as'} ordinal but "
                f"has non-integer values (e.g. {bad:g}); ordinal indicators must be integer "
                "category codes (a mean over raters is not: use 'column@rater' for one "
                "rater's ratings), or pass ordered=False to treat it as continuous"
            )
        c, v = _poly.categories(x)
        if v.size > MAX_CATEGORIES:
            raise DataError(
                f"indicator {name!r} was declared ordinal but has {v.size} distinct values; at "
                f"most {MAX_CATEGORIES} categories are supported (polychoric correlations of "
                "many-category variables are better treated as continuous: ordered=False)"
            )
        if v.size < 2:
            raise DataError(f"indicator {name!r} is constant ({v[0]:g}); it carries no information")
        codes.append(c)
        cats.append(v)
    return np.stack(codes, 1), cats


def is_ordinal_like(x):
    """Integer values with at most :data:`MAX_CATEGORIES` categories."""
    return bool(np.all(x == np.round(x))) and np.unique(x).size <= MAX_CATEGORIES


def _fit_common(spec, T, df, Tb, dfb, N_rmsea):
    """The fit measures shared by both estimators (chi-square, CFI, TLI, RMSEA and its interval)."""
    lo, hi = _cfa.rmsea_ci(T, df, N_rmsea)
    return dict(
        df=int(df), chi2=float(T), pvalue=float(_st.chi2.sf(T, df)) if df > 0 else np.nan,
        chi2_baseline=float(Tb), df_baseline=int(dfb),
        cfi=float(_cfa.cfi(T, df, Tb, dfb)), tli=float(_cfa.tli(T, df, Tb, dfb)),
        rmsea=_cfa.rmsea(T, df, N_rmsea), rmsea_ci_low=lo, rmsea_ci_high=hi,
        rmsea_pvalue=_cfa.rmsea_pvalue(T, df, N_rmsea),
    )


def _se_matrix(spec, se_vec, k):
    nl = int(spec.pattern.sum())
    Lse = np.full(spec.pattern.shape, np.nan)
    Lse[spec.pattern] = se_vec[:nl]
    Pse = np.full((k, k), np.nan)
    for t, (a, b) in enumerate(spec.free_corr):
        Pse[a, b] = Pse[b, a] = se_vec[nl + t]
    return Lse, Pse


def fit_ordinal(spec, X, codes, cats, scores):
    """DWLS on polychoric correlations with robust standard errors and the scaled-shifted test
    (lavaan's WLSMV) of ordinal ``codes`` (cells x indicators); a dict of the estimates."""
    N, p = codes.shape
    K = [c.size for c in cats]
    for i in range(p):
        for j in range(i):
            if K[i] == 2 and K[j] == 2:
                tab = np.bincount(codes[:, i] * 2 + codes[:, j], minlength=4)
                if (tab == 0).any():
                    raise DataError(
                        f"binary indicators {spec.indicators[j]!r} and {spec.indicators[i]!r} "
                        "have an empty cell in their 2 x 2 table; lavaan then adds 0.5 to the "
                        "cells (zero.add), which is not implemented here"
                    )
    st = _poly.ordinal_statistics(codes, K)
    G = st["gamma"]
    W = 1.0 / np.diag(G)
    s = st["stats"]
    T_ = int(sum(k - 1 for k in K))
    r, w = s[T_:], W[T_:]
    theta, ok = _cfa.fit_dwls(spec, r, w, _cfa.start_values(spec, st["R"]))
    rho, L, Phi = _cfa.implied_cor(spec, theta)
    # sign convention: positive sum of loadings per factor
    L, Phi, theta = _orient(spec, L, Phi, theta)
    rho = _cfa.implied_cor(spec, theta)[0]
    F = float((w * (r - rho) ** 2).sum())
    Tn = (N - 1) * F
    J = _cfa.jac_cor(spec, theta)
    q = J.shape[1]
    Delta = np.zeros((s.size, T_ + q))
    Delta[:T_, :T_] = np.eye(T_)
    Delta[T_:, T_:] = J
    E = Delta.T @ (W[:, None] * Delta)
    Ei = np.linalg.inv(E)
    V = Ei @ Delta.T @ (W[:, None] * G * W[None, :]) @ Delta @ Ei / (N - 1)
    se = np.sqrt(np.clip(np.diag(V), 0, None))
    df = s.size - (T_ + q)
    a, b, Tss = _cfa.scaled_shifted(_cfa.ugamma(Delta, W, G), Tn, df) if df > 0 else (
        np.nan, np.nan, np.nan)
    Tb = (N - 1) * float((w * r**2).sum())
    dfb = r.size
    Db = np.zeros((s.size, T_))
    Db[:T_, :T_] = np.eye(T_)
    _, _, Tbss = _cfa.scaled_shifted(_cfa.ugamma(Db, W, G), Tb, dfb)
    out = _fit_common(spec, Tn, df, Tb, dfb, N - 1)
    lo, hi = _cfa.rmsea_ci(Tss, df, N - 1) if df > 0 else (np.nan, np.nan)
    out.update(
        chi2_scaled=float(Tss), pvalue_scaled=float(_st.chi2.sf(Tss, df)) if df > 0 else np.nan,
        scaling_factor=float(1.0 / a), shift_parameter=float(b),
        chi2_baseline_scaled=float(Tbss),
        cfi_scaled=float(_cfa.cfi(Tss, df, Tbss, dfb)),
        tli_scaled=float(_cfa.tli(Tss, df, Tbss, dfb)),
        rmsea_scaled=_cfa.rmsea(Tss, df, N - 1), rmsea_scaled_ci_low=lo, rmsea_scaled_ci_high=hi,
    )
    Rimp = L @ Phi @ L.T
    np.fill_diagonal(Rimp, 1.0)
    res = st["R"] - Rimp
    il = np.tril_indices(p, -1)
    srmr = float(np.sqrt((res[il] ** 2).sum() / (p * (p + 1) / 2)))
    Lse, Pse = _se_matrix(spec, se[T_:], spec.k)
    th_se = np.split(se[:T_], np.cumsum([k - 1 for k in K])[:-1])
    resid_var = 1.0 - np.einsum("ia,ab,ib->i", L, Phi, L)
    fs = None
    if scores == "ebm":
        if np.any(resid_var <= 0):
            warnings.warn("cfa: factor scores are undefined with a non-positive residual "
                          "variance (NaN)", UndefinedStatisticWarning, stacklevel=user_stacklevel())
            fs = np.full((N, spec.k), np.nan)
        else:
            try:
                fs = _cfa.ebm_scores(codes, st["thresholds"], L, Phi)
            except np.linalg.LinAlgError:
                warnings.warn("cfa: factor scores are undefined with a singular factor "
                              "correlation matrix (NaN)", UndefinedStatisticWarning, stacklevel=user_stacklevel())
                fs = np.full((N, spec.k), np.nan)
    out.update(
        estimator="DWLS", test="scaled.shifted", n_parameters=int(T_ + q), srmr=srmr,
        converged=bool(ok), loadings=L, loadings_se=Lse, loadings_raw=L.copy(),
        factor_correlations=Phi, factor_correlations_se=Pse, residual_variances=resid_var,
        residual_variances_se=np.full(p, np.nan), thresholds=tuple(st["thresholds"]),
        thresholds_se=tuple(th_se),
        categories=tuple(cats), sample_correlations=st["R"], implied_correlations=Rimp,
        residual_correlations=res, scores=fs, Phi=Phi,
    )
    return out


def _orient(spec, L, Phi, theta):
    """The sign convention: a positive sum of loadings per factor."""
    sgn = np.where(L.sum(0) < 0, -1.0, 1.0)
    if np.all(sgn > 0):
        return L, Phi, theta
    L = L * sgn
    Phi = Phi * np.outer(sgn, sgn)
    nl = int(spec.pattern.sum())
    theta = theta.copy()
    theta[:nl] = L[spec.pattern]
    for t, (a, b) in enumerate(spec.free_corr):
        theta[nl + t] = Phi[a, b]
    return L, Phi, theta


def fit_continuous(spec, X, codes, cats, scores):
    """Maximum likelihood on the covariance matrix of ``X`` (cells x indicators, divisor N);
    a dict of the estimates, fit measures and (``scores="ebm"``) regression factor scores."""
    N, p = X.shape
    mean = X.mean(0)
    S = np.cov(X.T, bias=True)
    theta, ok = _cfa.fit_ml(spec, S, _cfa.start_values_ml(spec, S))
    Sigma, L, Phi = _cfa.implied_cov(spec, theta)
    _, _, ts = _orient(spec, L, Phi, theta[:-p])
    theta = np.concatenate([ts, theta[-p:]])
    Sigma, L, Phi = _cfa.implied_cov(spec, theta)
    F = _cfa.f_ml(S, Sigma)
    T = N * F
    q = theta.size
    df = p * (p + 1) // 2 - q
    Tb = N * float(np.sum(np.log(np.diag(S))) - np.linalg.slogdet(S)[1])
    dfb = p * (p - 1) // 2
    out = _fit_common(spec, T, df, Tb, dfb, N)
    E = _cfa.expected_info_ml(spec, theta)
    se = np.sqrt(np.clip(np.diag(np.linalg.inv(E)) / N, 0, None))
    sd_imp = np.sqrt(np.diag(Sigma))
    Lstd = L / sd_imp[:, None]
    Lse, Pse = _se_matrix(spec, se, spec.k)
    sdS = np.sqrt(np.diag(S))
    Rs = S / np.outer(sdS, sdS)
    Rimp = Sigma / np.outer(sd_imp, sd_imp)
    res_b = (S - Sigma) / np.outer(sdS, sdS)
    srmr = float(np.sqrt(np.mean(res_b[np.tril_indices(p)] ** 2)))
    nan = np.nan
    out.update(
        chi2_scaled=nan, pvalue_scaled=nan, scaling_factor=nan, shift_parameter=nan,
        chi2_baseline_scaled=nan, cfi_scaled=nan, tli_scaled=nan, rmsea_scaled=nan,
        rmsea_scaled_ci_low=nan, rmsea_scaled_ci_high=nan,
        estimator="ML", test="standard", n_parameters=int(q), srmr=srmr, converged=bool(ok),
        loadings=Lstd, loadings_se=Lse, loadings_raw=L, factor_correlations=Phi,
        factor_correlations_se=Pse, residual_variances=theta[-p:] / np.diag(Sigma),
        residual_variances_se=se[-p:],
        thresholds=tuple(np.empty(0) for _ in range(p)),
        thresholds_se=tuple(np.empty(0) for _ in range(p)), categories=tuple(),
        sample_correlations=Rs, implied_correlations=Rimp, residual_correlations=Rs - Rimp,
        scores=_cfa.regression_scores(X, mean, Sigma, L, Phi) if scores == "ebm" else None,
        Phi=Phi,
    )
    return out


__all__ = [
    "MAX_CATEGORIES",
    "model_spec",
    "check_identified",
    "ordinal_codes",
    "is_ordinal_like",
    "fit_ordinal",
    "fit_continuous",
]
