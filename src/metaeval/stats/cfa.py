"""Confirmatory factor analysis numerics (private; see :mod:`metaeval.validity`).

The model is lavaan's ``cfa(..., std.lv = TRUE)``: K factors with variances
fixed to 1 and correlations Phi (free, or fixed to a value), p indicators
with loadings Lambda (a fixed pattern of free entries),

* continuous indicators: Sigma = Lambda Phi Lambda' + Psi, Psi diagonal
  (free residual variances), fitted by maximum likelihood to the biased
  sample covariance S (divisor N):
  F_ML = log|Sigma| - log|S| + tr(S Sigma^{-1}) - p, test statistic T = N F_ML.
* ordinal indicators (Muthen 1984; lavaan's "delta" parameterization):
  the latent responses have unit variance, so the polychoric correlations
  are fitted by rho(theta) = offdiag(Lambda Phi Lambda') and
  Theta = I - diag(Lambda Phi Lambda'); the thresholds are free (saturated).
  Diagonally weighted least squares: F = (s - sigma)' W (s - sigma),
  s = (thresholds, polychorics), W = diag(Gamma)^{-1}, Gamma the asymptotic
  covariance of sqrt(N) s; T = N F.  Robust ("sandwich") standard errors and
  the mean-and-variance adjusted ("scaled.shifted", Asparouhov and Muthen
  2010) statistic use Delta = d sigma / d theta', E = Delta' W Delta and
  U Gamma = (I - Delta E^{-1} Delta' W) Gamma W:
  acov(theta) = E^{-1} Delta' W Gamma W Delta E^{-1} / N,
  a = sqrt(df / tr((U Gamma)^2)), b = df - a tr(U Gamma), T_ss = a T + b.

Parameters are packed as [free loadings (row-major over the pattern), free
factor correlations (lower triangle, row-major), residual variances
(continuous only)]; thresholds are handled separately.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize as _opt
from scipy import special as _sp
from scipy import stats as _st


@dataclass(frozen=True)
class Spec:
    """A CFA model: loading pattern and factor-correlation constraints."""

    factors: tuple
    indicators: tuple
    pattern: np.ndarray  # (p, k) bool: free loadings
    fixed_corr: dict  # {(a, b): value} a > b, fixed factor correlations

    @property
    def p(self):
        return len(self.indicators)

    @property
    def k(self):
        return len(self.factors)

    @property
    def free_corr(self):
        return [(a, b) for b in range(self.k) for a in range(b + 1, self.k)
                if (a, b) not in self.fixed_corr]

    def n_free(self, continuous):
        return int(self.pattern.sum()) + len(self.free_corr) + (self.p if continuous else 0)


def unpack(spec, theta, continuous):
    L = np.zeros((spec.p, spec.k))
    nl = int(spec.pattern.sum())
    L[spec.pattern] = theta[:nl]
    Phi = np.eye(spec.k)
    for (a, b), v in spec.fixed_corr.items():
        Phi[a, b] = Phi[b, a] = v
    fc = spec.free_corr
    for t, (a, b) in enumerate(fc):
        Phi[a, b] = Phi[b, a] = theta[nl + t]
    psi = theta[nl + len(fc):] if continuous else None
    return L, Phi, psi


def _dcommon(spec, L, Phi):
    """d (Lambda Phi Lambda') / d theta for loadings and correlations: (q, p, p)."""
    p = spec.p
    LP = L @ Phi  # (p, k)
    mats = []
    for i, a in zip(*np.nonzero(spec.pattern)):
        D = np.zeros((p, p))
        D[i, :] += LP[:, a]
        D[:, i] += LP[:, a]
        mats.append(D)
    for a, b in spec.free_corr:
        D = np.outer(L[:, a], L[:, b])
        mats.append(D + D.T)
    return np.array(mats).reshape(-1, p, p)


def pair_index(p):
    """Lower-triangle (i > j) pairs in lavaan's column-major vech order."""
    return [(i, j) for j in range(p - 1) for i in range(j + 1, p)]


# ----------------------------------------------------------------- ordinal (DWLS)


def implied_cor(spec, theta):
    L, Phi, _ = unpack(spec, theta, False)
    C = L @ Phi @ L.T
    pairs = pair_index(spec.p)
    return np.array([C[i, j] for i, j in pairs]), L, Phi


def jac_cor(spec, theta):
    L, Phi, _ = unpack(spec, theta, False)
    D = _dcommon(spec, L, Phi)
    pairs = pair_index(spec.p)
    ii = np.array([i for i, _ in pairs], dtype=int)
    jj = np.array([j for _, j in pairs], dtype=int)
    return D[:, ii, jj].T  # (n_pairs, q)


def start_values(spec, R):
    """Loadings sqrt of the mean absolute correlation among a factor's indicators."""
    th = []
    for i, a in zip(*np.nonzero(spec.pattern)):
        others = [j for j in np.nonzero(spec.pattern[:, a])[0] if j != i]
        v = np.mean(np.abs(R[i, others])) if others else 0.5
        th.append(float(np.clip(np.sqrt(max(v, 0.09)), 0.3, 0.95)))
    th += [0.3] * len(spec.free_corr)
    return np.array(th)


def fit_dwls(spec, r, w, start):
    """Minimize sum w (r - rho(theta))^2 (the threshold part is saturated)."""
    sw = np.sqrt(w)

    def fun(t):
        return sw * (implied_cor(spec, t)[0] - r)

    def jac(t):
        return sw[:, None] * jac_cor(spec, t)

    res = _opt.least_squares(fun, start, jac=jac, method="lm", xtol=1e-15, ftol=1e-15,
                             gtol=1e-15, max_nfev=10000)
    return res.x, bool(res.success)


# ----------------------------------------------------------------- continuous (ML)


def implied_cov(spec, theta):
    L, Phi, psi = unpack(spec, theta, True)
    return L @ Phi @ L.T + np.diag(psi), L, Phi


def dsigma_cov(spec, theta):
    """d Sigma / d theta as (q, p, p)."""
    L, Phi, _ = unpack(spec, theta, True)
    D = _dcommon(spec, L, Phi)
    Dp = np.zeros((spec.p, spec.p, spec.p))
    Dp[np.arange(spec.p), np.arange(spec.p), np.arange(spec.p)] = 1.0
    return np.concatenate([D, Dp], axis=0)


def f_ml(S, Sigma):
    sign, logdet = np.linalg.slogdet(Sigma)
    if sign <= 0:
        return np.inf
    p = S.shape[0]
    return float(logdet - np.linalg.slogdet(S)[1] + np.trace(np.linalg.solve(Sigma, S)) - p)


def expected_info_ml(spec, theta):
    """Unit expected information 0.5 tr(Sigma^-1 dS_t Sigma^-1 dS_u)."""
    Sigma, _, _ = implied_cov(spec, theta)
    Si = np.linalg.inv(Sigma)
    M = np.einsum("ij,qjk->qik", Si, dsigma_cov(spec, theta))
    return 0.5 * np.einsum("qij,rji->qr", M, M)


def fit_ml(spec, S, start, *, max_iter=500, tol=1e-9):
    """Fisher scoring with step halving on F_ML; returns (theta, converged)."""
    theta = np.array(start, float)
    Sigma, _, _ = implied_cov(spec, theta)
    f = f_ml(S, Sigma)
    grad = np.full(theta.shape, np.inf)
    for _ in range(max_iter):
        Si = np.linalg.inv(Sigma)
        G = Si @ (S - Sigma) @ Si
        dS = dsigma_cov(spec, theta)
        grad = -np.einsum("ij,qij->q", G, dS)
        if np.max(np.abs(grad)) < tol:
            return theta, True
        M = np.einsum("ij,qjk->qik", Si, dS)
        E = 0.5 * np.einsum("qij,rji->qr", M, M)
        try:
            step = np.linalg.solve(2.0 * E, -grad)
        except np.linalg.LinAlgError:
            step = -grad
        t = 1.0
        while t > 1e-12:
            cand = theta + t * step
            Sc, _, _ = implied_cov(spec, cand)
            fc = f_ml(S, Sc)
            if np.isfinite(fc) and fc <= f:
                break
            t /= 2.0
        else:
            break  # no decrease possible at machine precision
        small = np.max(np.abs(t * step)) < 1e-13
        theta, Sigma, f = cand, Sc, fc
        if small:
            break
    return theta, bool(np.max(np.abs(grad)) < 1e-6)


def start_values_ml(spec, S):
    sd = np.sqrt(np.diag(S))
    R = S / np.outer(sd, sd)
    lam = start_values(spec, R)
    rows = np.nonzero(spec.pattern)[0]
    nl = int(spec.pattern.sum())
    lam[:nl] = lam[:nl] * sd[rows]
    psi = 0.5 * np.diag(S)
    return np.concatenate([lam, psi])


# ----------------------------------------------------------------- fit indices


def cfi(T, df, Tb, dfb):
    t1 = max(T - df, 0.0)
    t2 = max(T - df, Tb - dfb, 0.0)
    if np.isclose(t1, 0.0, atol=1.5e-8) and np.isclose(t2, 0.0, atol=1.5e-8):
        return 1.0
    return 1.0 - t1 / t2


def tli(T, df, Tb, dfb):
    t1 = (T - df) * dfb
    t2 = (Tb - dfb) * df
    if df > 0 and abs(t2) > 0:
        return 1.0 - t1 / t2
    return 1.0


def rmsea(T, df, N):
    if df <= 0:
        return 0.0
    return float(np.sqrt(max(T / N / df - 1.0 / N, 0.0)))


def rmsea_ci(T, df, N, level=0.90):
    """lavaan's interval: the noncentrality lambda with P(chi2_df(lambda) <= T) = 0.95, 0.05."""
    up, lo = 1.0 - (1.0 - level) / 2.0, (1.0 - level) / 2.0

    def cdf(lam):
        return _st.ncx2.cdf(T, df, lam) if lam > 0 else _st.chi2.cdf(T, df)

    if df < 1 or cdf(0.0) - up < 0:
        low = 0.0
    else:
        lam = _opt.brentq(lambda x: cdf(x) - up, 0.0, T, xtol=1e-10, rtol=1e-14)
        low = float(np.sqrt(lam / (N * df)))
    nmax = max(N, 4.0 * T)
    if df < 1 or cdf(nmax) - lo > 0 or cdf(0.0) - lo < 0:
        high = 0.0
    else:
        lam = _opt.brentq(lambda x: cdf(x) - lo, 0.0, nmax, xtol=1e-10, rtol=1e-14)
        high = float(np.sqrt(lam / (N * df)))
    return low, high


def rmsea_pvalue(T, df, N, h0=0.05):
    if df <= 0:
        return np.nan
    return float(_st.ncx2.sf(T, df, N * df * h0 * h0))


def scaled_shifted(UG, T, df):
    """(a, b, T_ss) from U Gamma (lavaan's scaled.shifted test)."""
    tr1 = float(np.trace(UG))
    tr2 = float(np.sum(UG * UG.T))
    a = np.sqrt(df / tr2)
    b = df - a * tr1
    return float(a), float(b), float(a * T + b)


def ugamma(Delta, W, Gamma):
    """U Gamma = Gamma V - Delta E^{-1} Delta' V Gamma V, V = diag(W)."""
    GV = Gamma * W[None, :]
    E = Delta.T @ (W[:, None] * Delta)
    VGV = W[:, None] * GV
    return GV - Delta @ np.linalg.solve(E, Delta.T @ VGV)


# ----------------------------------------------------------------- factor scores


def ebm_scores(codes, thresholds, L, Phi, *, tol=1e-10, max_iter=200):
    """Empirical Bayes modal factor scores for ordinal indicators.

    For each distinct response pattern y, eta maximizes
    log phi_K(eta; 0, Phi) + sum_j log P(y_j | eta) with
    P(y_j = c | eta) = Phi((tau_c - lambda_j' eta) / s_j) -
    Phi((tau_{c-1} - lambda_j' eta) / s_j), s_j^2 = 1 - lambda_j' Phi lambda_j
    (lavaan's ``lavPredict(method = "EBM")``).  The objective is strictly
    convex (log-concave probit likelihood, Gaussian prior), so damped Newton
    iterations from eta = 0 find the exact mode; category probabilities are
    evaluated in log space, so even near-deterministic indicators (residual
    SD s_j of a few hundredths) keep a gradient.  lavaan instead floors
    P at machine epsilon and runs BFGS with numerical gradients, which stalls
    when all of a factor's indicators are floored at the start (it then
    returns about 0 for that factor).
    """
    codes = np.asarray(codes)
    p = codes.shape[1]
    k = Phi.shape[0]
    s = np.sqrt(1.0 - np.einsum("ia,ab,ib->i", L, Phi, L))
    Pinv = np.linalg.inv(Phi)
    pats, inv = np.unique(codes, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    U = np.empty(pats.shape)
    Lo = np.empty(pats.shape)
    for j in range(p):
        u = np.concatenate([[-np.inf], thresholds[j], [np.inf]])
        U[:, j] = u[pats[:, j] + 1]
        Lo[:, j] = u[pats[:, j]]

    def parts(eta, rows):
        m = eta @ L.T  # (n, p)
        zu = (U[rows] - m) / s
        zl = (Lo[rows] - m) / s
        # log P computed stably in the tail that matters
        logP = _log_diff_ndtr(zu, zl)
        lpu = _log_phi(zu)
        lpl = _log_phi(zl)
        ru = np.exp(lpu - logP)  # phi(zu) / P
        rl = np.exp(lpl - logP)
        zu_f = np.where(np.isfinite(zu), zu, 0.0)
        zl_f = np.where(np.isfinite(zl), zl, 0.0)
        # d logP / d m = -(phi_u - phi_l) / (s P)
        g = -(ru - rl) / s
        # -d^2 logP / d m^2 = (zu phi_u - zl phi_l) / (s^2 P) + ((phi_u - phi_l) / (s P))^2
        c = (zu_f * ru - zl_f * rl) / s**2 + g * g
        return logP, g, c

    def objective(eta, rows):
        logP, _, _ = parts(eta, rows)
        return 0.5 * np.einsum("na,ab,nb->n", eta, Pinv, eta) - logP.sum(1)

    eta = np.zeros((pats.shape[0], k))
    f = objective(eta, np.arange(eta.shape[0]))
    active = np.ones(pats.shape[0], bool)
    for _ in range(max_iter):
        if not active.any():
            break
        idx = np.nonzero(active)[0]
        e = eta[idx]
        _, g, c = parts(e, idx)
        grad = e @ Pinv - g @ L  # (n, k)
        H = Pinv[None] + np.einsum("nj,ja,jb->nab", c, L, L)
        step = -np.linalg.solve(H, grad[..., None])[..., 0]
        t = np.ones(e.shape[0])
        f0 = f[active]
        new = e + step
        fn = objective(new, idx)
        for _ in range(60):
            bad = ~(fn <= f0 + 1e-12 * np.maximum(1.0, np.abs(f0)))
            if not bad.any():
                break
            t[bad] /= 2.0
            new[bad] = e[bad] + t[bad, None] * step[bad]
            fn[bad] = objective(new[bad], idx[bad])
        done = (np.max(np.abs(t[:, None] * step), axis=1) < tol) | (t < 1e-15)
        eta[idx] = new
        f[idx] = fn
        active[idx[done]] = False
    return eta[inv]


def _log_phi(z):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(z), -0.5 * z * z - 0.5 * np.log(2 * np.pi), -np.inf)


def _log_diff_ndtr(zu, zl):
    """log(Phi(zu) - Phi(zl)) for zu > zl, accurate in both tails."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # upper tail: Phi(-zl) - Phi(-zu); lower tail: Phi(zu) - Phi(zl)
        up = zl > 0
        a = np.where(up, -zl, zu)  # the larger of the two log-cdfs' argument
        b = np.where(up, -zu, zl)
        la = _sp.log_ndtr(a)
        lb = _sp.log_ndtr(b)
        out = la + np.log1p(-np.exp(lb - la))
    return out


def regression_scores(Y, mean, Sigma, L, Phi):
    """lavPredict's regression (= EBM) scores for continuous indicators."""
    A = Phi @ L.T @ np.linalg.inv(Sigma)
    return (Y - mean) @ A.T
