"""Ordinal sample statistics: thresholds, polychoric correlations and their
asymptotic covariance matrix (private numerics of :mod:`metaeval.validity`).

The estimators are the two-step ones of Olsson (1979) and Muthen (1984), as
implemented in R lavaan 0.6 (``lav_samplestats_step1``/``step2`` and
``muthen1984``) and ``polycor::polychor(ML=FALSE)``:

1. **Thresholds** of each ordinal variable from its marginal proportions,
   tau_k = Phi^{-1}(P(Y <= k)), k = 1 .. K - 1 (the univariate probit ML
   estimate without covariates).
2. **Polychoric correlation** of each pair, with the thresholds fixed: the rho
   that maximizes sum_{a,b} n_ab log pi_ab(rho), pi_ab the bivariate normal
   probability of the rectangle (tau_{a-1}, tau_a] x (tau'_{b-1}, tau'_b].
3. **Asymptotic covariance** Gamma of sqrt(N) (tau_hat, rho_hat) by the
   sandwich of the case-wise scores (Muthen 1984; lavaan's ``NACOV``):
   Gamma = N A^{-1} B A^{-T}, B = sum_i s_i s_i', where s_i stacks the
   case's univariate threshold scores and bivariate rho scores, and A is the
   block lower-triangular matrix with the outer-product estimates of the
   information blocks: A11 (thresholds, per variable), A22 (diagonal, rho)
   and A21 (rho x the thresholds of the two variables of the pair).

Category probabilities below sqrt(machine epsilon) are floored as lavaan
does; with the default ``zero.add = c(0.5, 0)`` lavaan only corrects 2 x 2
tables with one empty cell, which is not done here (binary pairs with an
empty cell are refused by :func:`ordinal_statistics`).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize as _opt
from scipy import special as _sp

_SQRT_EPS = float(np.sqrt(np.finfo(float).eps))
_BIG = 1e10  # stands for +-inf thresholds in the bivariate CDF

# Gauss-Legendre half-nodes and weights (Genz 2004, bvnl.m)
_GL = {
    6: (
        np.array([0.1713244923791705, 0.3607615730481384, 0.4679139345726904]),
        np.array([0.9324695142031522, 0.6612093864662647, 0.2386191860831970]),
    ),
    12: (
        np.array(
            [
                0.04717533638651177,
                0.1069393259953183,
                0.1600783285433464,
                0.2031674267230659,
                0.2334925365383547,
                0.2491470458134029,
            ]
        ),
        np.array(
            [
                0.9815606342467191,
                0.9041172563704750,
                0.7699026741943050,
                0.5873179542866171,
                0.3678314989981802,
                0.1252334085114692,
            ]
        ),
    ),
    20: (
        np.array(
            [
                0.01761400713915212,
                0.04060142980038694,
                0.06267204833410906,
                0.08327674157670475,
                0.1019301198172404,
                0.1181945319615184,
                0.1316886384491766,
                0.1420961093183821,
                0.1491729864726037,
                0.1527533871307259,
            ]
        ),
        np.array(
            [
                0.9931285991850949,
                0.9639719272779138,
                0.9122344282513259,
                0.8391169718222188,
                0.7463319064601508,
                0.6360536807265150,
                0.5108670019508271,
                0.3737060887154196,
                0.2277858511416451,
                0.07652652113349733,
            ]
        ),
    ),
}


def _phid(x):
    return _sp.ndtr(x)


def _bvnu_scalar_r(h, k, r):
    """P(X > h, Y > k) for standard bivariate normal with correlation r (scalar).

    Genz (2004), "Numerical computation of rectangular bivariate and
    trivariate normal and t probabilities", Statistics and Computing 14,
    algorithm of Drezner and Wesolowsky (1990) with Genz's refinements;
    absolute error below 5e-16.  ``h`` and ``k`` are arrays.
    """
    h = np.asarray(h, float)
    k = np.asarray(k, float)
    if r == 0.0:
        return _phid(-h) * _phid(-k)
    ar = abs(r)
    n = 6 if ar < 0.3 else 12 if ar < 0.75 else 20
    w, x = _GL[n]
    w = np.concatenate([w, w])
    x = np.concatenate([1.0 - x, 1.0 + x])
    tp = 2.0 * np.pi
    hk = h * k
    if ar < 0.925:
        hs = (h * h + k * k) / 2.0
        asr = np.arcsin(r) / 2.0
        sn = np.sin(asr * x)  # (n,)
        e = np.exp((sn[None, :] * hk.reshape(-1, 1) - hs.reshape(-1, 1))
                   / (1.0 - sn * sn)[None, :])
        bvn = (e @ w).reshape(h.shape) * asr / tp + _phid(-h) * _phid(-k)
        return bvn
    kk = -k if r < 0 else k
    hk = -hk if r < 0 else hk
    bvn = np.zeros(np.broadcast(h, kk).shape)
    if ar < 1.0:
        as_ = (1.0 - r) * (1.0 + r)
        a = np.sqrt(as_)
        bs = (h - kk) ** 2
        asr = -(bs / as_ + hk) / 2.0
        c = (4.0 - hk) / 8.0
        d = (12.0 - hk) / 80.0
        with np.errstate(under="ignore", over="ignore"):
            t1 = np.where(
                asr > -100.0,
                a * np.exp(asr) * (1.0 - c * (bs - as_) * (1.0 - d * bs) / 3.0 + c * d * as_ * as_),
                0.0,
            )
            b = np.sqrt(bs)
            sp = np.sqrt(tp) * _phid(-b / a)
            t2 = np.where(hk > -100.0,
                          np.exp(-hk / 2.0) * sp * b * (1.0 - c * bs * (1.0 - d * bs) / 3.0), 0.0)
            bvn = t1 - t2
            a2 = a / 2.0
            xs = (a2 * x) ** 2  # (n,)
            asr2 = -(bs.reshape(-1, 1) / xs[None, :] + hk.reshape(-1, 1)) / 2.0
            hk2 = hk.reshape(-1, 1)
            c2 = c.reshape(-1, 1)
            d2 = d.reshape(-1, 1)
            sp2 = 1.0 + c2 * xs[None, :] * (1.0 + 5.0 * d2 * xs[None, :])
            rs = np.sqrt(1.0 - xs)[None, :]
            ep = np.exp(-(hk2 / 2.0) * xs[None, :] / (1.0 + rs) ** 2) / rs
            term = np.where(asr2 > -100.0, np.exp(np.maximum(asr2, -745.0)) * (sp2 - ep), 0.0)
            bvn = (a2 * (term @ w).reshape(bvn.shape) - bvn) / tp
    if r > 0:
        return bvn + _phid(-np.maximum(h, kk))
    neg = -bvn
    lower = np.where(h < 0, _phid(kk) - _phid(h), _phid(-h) - _phid(-kk))
    return np.where(h >= kk, neg, lower - bvn)


def bvn_cdf(h, k, r):
    """Standard bivariate normal lower-orthant probability P(X <= h, Y <= k).

    ``h`` and ``k`` are arrays (broadcast), ``r`` a scalar correlation in
    (-1, 1).  Infinite limits are allowed.  Genz's (2004) algorithm, accurate
    to about 1e-15 (the algorithm of R's ``pbivnorm``, which lavaan uses).
    """
    h, k = np.broadcast_arrays(np.asarray(h, float), np.asarray(k, float))
    out = np.empty(h.shape)
    hh = np.clip(h, -_BIG, _BIG)
    kk = np.clip(k, -_BIG, _BIG)
    lo_h = h == -np.inf
    lo_k = k == -np.inf
    hi_h = h == np.inf
    hi_k = k == np.inf
    core = ~(lo_h | lo_k | hi_h | hi_k)
    if core.any():
        val = _bvnu_scalar_r(-hh[core], -kk[core], float(r))
        out[core] = np.clip(val, 0.0, 1.0)
    out[lo_h | lo_k] = 0.0
    only_h = hi_k & ~(lo_h | lo_k)
    out[only_h] = _phid(h[only_h])
    only_k = hi_h & ~hi_k & ~(lo_h | lo_k)
    out[only_k] = _phid(k[only_k])
    return out


def bvn_pdf(h, k, r):
    """Standard bivariate normal density at (h, k) with correlation r (0 at infinity)."""
    h = np.asarray(h, float)
    k = np.asarray(k, float)
    s = 1.0 - r * r
    with np.errstate(invalid="ignore", over="ignore"):
        q = (h * h - 2.0 * r * h * k + k * k) / s
        out = np.exp(-0.5 * q) / (2.0 * np.pi * np.sqrt(s))
    return np.where(np.isfinite(h) & np.isfinite(k), out, 0.0)


# --------------------------------------------------------------------------
# univariate step


def categories(y):
    """Integer codes 0..K-1 of the sorted distinct values of ``y`` and the values."""
    vals, codes = np.unique(y, return_inverse=True)
    return codes.astype(np.intp), vals


def thresholds_from_codes(codes, K):
    """tau_k = Phi^{-1}(P(Y <= k)), k = 0 .. K - 2 (``codes`` in 0..K-1)."""
    counts = np.bincount(codes, minlength=K).astype(float)
    cum = np.cumsum(counts)[:-1] / counts.sum()
    return _sp.ndtri(cum)


# --------------------------------------------------------------------------
# bivariate step


def _cell_probs(t1, t2, rho):
    """K1 x K2 rectangle probabilities for thresholds t1 (K1-1,), t2 (K2-1,)."""
    K1, K2 = t1.size + 1, t2.size + 1
    F = np.zeros((K1 + 1, K2 + 1))
    T1 = np.repeat(t1, t2.size)
    T2 = np.tile(t2, t1.size)
    F[1:K1, 1:K2] = np.clip(_bvnu_scalar_r(-T1, -T2, float(rho)), 0.0, 1.0).reshape(
        t1.size, t2.size)
    F[K1, 1:K2] = _sp.ndtr(t2)
    F[1:K1, K2] = _sp.ndtr(t1)
    F[K1, K2] = 1.0
    return F[1:, 1:] - F[:-1, 1:] - F[1:, :-1] + F[:-1, :-1]


def _cell_dprob(t1, t2, rho):
    """d pi_ab / d rho: the bivariate density at the rectangle's corners (signed)."""
    u1 = np.concatenate([[-np.inf], t1, [np.inf]])
    u2 = np.concatenate([[-np.inf], t2, [np.inf]])
    f = bvn_pdf(u1[:, None], u2[None, :], rho)
    return f[1:, 1:] - f[:-1, 1:] - f[1:, :-1] + f[:-1, :-1]


def polychoric_pair(table, t1, t2, *, tol=1e-12):
    """Two-step ML polychoric correlation of one contingency table.

    Maximizes l(rho) = sum n_ab log max(pi_ab(rho), sqrt(eps)) over
    rho in [-0.999, 0.999] (lavaan's bounds and probability floor) with the
    thresholds fixed: a bounded Brent search on -l, then Newton steps on the
    analytic score l'(rho) = sum n_ab pi'_ab / pi_ab (pi'_ab: the bivariate
    density at the rectangle's corners), kept inside the bracket.
    """
    n = np.asarray(table, float)
    lo, hi = -0.999, 0.999
    nz = n > 0

    def negll(r):
        P = np.maximum(_cell_probs(t1, t2, r), _SQRT_EPS)
        return -float((n[nz] * np.log(P[nz])).sum())

    def score(r):
        P = np.maximum(_cell_probs(t1, t2, r), _SQRT_EPS)
        dP = _cell_dprob(t1, t2, r)
        return float((n[nz] * dP[nz] / P[nz]).sum())

    res = _opt.minimize_scalar(negll, bounds=(lo, hi), method="bounded",
                               options={"xatol": 1e-10, "maxiter": 500})
    r = float(res.x)
    if r - lo < 1e-8 or hi - r < 1e-8:
        return float(np.clip(r, lo, hi))
    # polish: Newton on the score with a numerical derivative
    a_, b_ = max(lo, r - 1e-4), min(hi, r + 1e-4)
    for _ in range(30):
        s = score(r)
        h = 1e-7
        ds = (score(r + h) - score(r - h)) / (2 * h)
        if not (np.isfinite(ds) and ds < 0):
            break
        r_new = r - s / ds
        if not (a_ < r_new < b_):
            break
        done = abs(r_new - r) < tol
        r = r_new
        if done:
            break
    return float(r)


# --------------------------------------------------------------------------
# all pairs and the asymptotic covariance (Muthen 1984)


def ordinal_statistics(codes, n_categories, *, gamma=True):
    """Thresholds, polychoric matrix and NACOV of an (N, p) array of codes.

    Parameters
    ----------
    codes : (N, p) int array
        Category codes 0..K_j - 1 of every case (no missing values).
    n_categories : sequence of int
        K_j per variable (every category occurs at least once).
    gamma : bool
        Compute the asymptotic covariance matrix.

    Returns
    -------
    dict with ``thresholds`` (list of arrays), ``R`` (p x p), ``stats``
    (thresholds then the lower-triangle correlations in column-major order,
    lavaan's ``WLS.obs``), ``gamma`` (NACOV, len(stats) square, or None),
    ``pairs`` (list of (i, j), i > j, in the order of the correlations),
    ``th_index`` (variable of each threshold).
    """
    codes = np.asarray(codes)
    p = codes.shape[1]
    K = [int(k) for k in n_categories]
    th = [thresholds_from_codes(codes[:, j], K[j]) for j in range(p)]
    # pairs in lavaan's vech order: for column j, rows i = j+1..p-1
    pairs = [(i, j) for j in range(p - 1) for i in range(j + 1, p)]
    R = np.eye(p)
    tables = {}
    for i, j in pairs:
        tab = np.zeros((K[j], K[i]))
        np.add.at(tab, (codes[:, j], codes[:, i]), 1.0)
        tables[i, j] = tab
        R[i, j] = R[j, i] = polychoric_pair(tab, th[j], th[i])
    th_index = np.concatenate([np.full(K[j] - 1, j) for j in range(p)])
    stats = np.concatenate([*th, np.array([R[i, j] for i, j in pairs])])
    out = {"thresholds": th, "R": R, "stats": stats, "pairs": pairs, "th_index": th_index,
           "gamma": None, "tables": tables}
    if gamma:
        out["gamma"] = _nacov(codes, K, th, R, pairs)
    return out


def _nacov(codes, K, th, R, pairs):
    N, p = codes.shape
    nth = [k - 1 for k in K]
    start = np.concatenate([[0], np.cumsum(nth)]).astype(int)
    T = int(start[-1])
    P = len(pairs)
    # univariate scores (N, T)
    SC_TH = np.zeros((N, T))
    for j in range(p):
        u = np.concatenate([[-np.inf], th[j], [np.inf]])
        pr = np.diff(_sp.ndtr(u))
        dens = np.concatenate([[0.0], np.exp(-0.5 * th[j] ** 2) / np.sqrt(2 * np.pi), [0.0]])
        y = codes[:, j]
        rows = np.arange(N)
        up = y < nth[j]
        SC_TH[rows[up], start[j] + y[up]] += dens[y[up] + 1] / pr[y[up]]
        dn = y > 0
        SC_TH[rows[dn], start[j] + y[dn] - 1] -= dens[y[dn]] / pr[y[dn]]
    SC_COR = np.zeros((N, P))
    A21 = np.zeros((P, T))
    for q, (i, j) in enumerate(pairs):
        # y1 = variable i (rows of the cell tables below), y2 = variable j
        rho = R[i, j]
        Rr = np.sqrt(1.0 - rho * rho)
        t1, t2 = th[i], th[j]
        Pc = np.maximum(_cell_probs(t1, t2, rho), _SQRT_EPS)
        dP = _cell_dprob(t1, t2, rho)
        u1 = np.concatenate([[-np.inf], t1, [np.inf]])
        u2 = np.concatenate([[-np.inf], t2, [np.inf]])
        # d pi_ab / d tau1_a (upper threshold of row a) for each cell: phi(tau1_a) *
        # [Phi((tau2_b - rho tau1_a)/R) - Phi((tau2_{b-1} - rho tau1_a)/R)]
        def corner(ua, ub_hi, ub_lo, rho=rho, Rr=Rr):
            with np.errstate(invalid="ignore"):
                d = np.where(np.isfinite(ua), np.exp(-0.5 * ua**2) / np.sqrt(2 * np.pi), 0.0)
                ua_f = np.where(np.isfinite(ua), ua, 0.0)
                return d * (_sp.ndtr((ub_hi - rho * ua_f) / Rr)
                            - _sp.ndtr((ub_lo - rho * ua_f) / Rr))
        # rows a = 0..K1-1: upper u1[a+1], lower u1[a]; columns b: upper u2[b+1], lower u2[b]
        Z1 = corner(u1[1:, None], u2[None, 1:], u2[None, :-1])  # upper threshold of row a
        Z2 = corner(u1[:-1, None], u2[None, 1:], u2[None, :-1])  # lower threshold of row a
        W1 = corner(u2[None, 1:], u1[1:, None], u1[:-1, None])  # upper threshold of column b
        W2 = corner(u2[None, :-1], u1[1:, None], u1[:-1, None])  # lower threshold of column b
        a = codes[:, i]
        b = codes[:, j]
        lik = Pc[a, b]
        bad = lik <= _SQRT_EPS
        with np.errstate(divide="ignore", invalid="ignore"):
            sc_rho = np.where(bad, 0.0, dP[a, b] / lik)
            z1 = np.where(bad, 0.0, Z1[a, b] / lik)
            z2 = np.where(bad, 0.0, Z2[a, b] / lik)
            w1 = np.where(bad, 0.0, W1[a, b] / lik)
            w2 = np.where(bad, 0.0, W2[a, b] / lik)
        SC_COR[:, q] = sc_rho
        # threshold scores of the bivariate likelihood, crossed with the rho score
        for tvec, tidx, sgn in ((z1, a, 0), (z2, a - 1, 1)):
            ok = (tidx >= 0) & (tidx < nth[i])
            val = tvec * sc_rho * (1.0 if sgn == 0 else -1.0)
            A21[q] += np.bincount(start[i] + tidx[ok], weights=val[ok], minlength=T)
        for tvec, tidx, sgn in ((w1, b, 0), (w2, b - 1, 1)):
            ok = (tidx >= 0) & (tidx < nth[j])
            val = tvec * sc_rho * (1.0 if sgn == 0 else -1.0)
            A21[q] += np.bincount(start[j] + tidx[ok], weights=val[ok], minlength=T)
    SC = np.concatenate([SC_TH, SC_COR], axis=1)
    INNER = SC.T @ SC
    A11 = np.zeros((T, T))
    for j in range(p):
        s = slice(start[j], start[j + 1])
        A11[s, s] = INNER[s, s]
    A22d = (SC_COR**2).sum(0)
    A11_inv = np.linalg.inv(A11)
    A22_inv = np.diag(1.0 / A22d)
    A21_inv = -A22_inv @ A21 @ A11_inv
    B_inv = np.block([[A11_inv, np.zeros((T, P))], [A21_inv, A22_inv]])
    W = B_inv @ INNER @ B_inv.T
    G = W * N
    return 0.5 * (G + G.T)
