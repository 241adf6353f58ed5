"""Intraclass correlations of a complete targets x raters table (Shrout and Fleiss 1979;
McGraw and Wong 1996): the six forms with their F tests and confidence intervals.

Arrays in, arrays out; :func:`metaeval.reliability.agreement` and
:func:`metaeval.reliability.stability` read it.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from .._agreement_registry import ICC_FORMS
from .coefficients import pow2_exponent
from .prophecy import spearman_brown


def icc_table(x, confidence_level):
    """The six ICCs of a complete (n targets, k raters) table.

    Mean squares of the two-way ANOVA without replication: MSR (targets),
    MSC (raters), MSE (residual), MSW (within targets, = (SSC + SSE) /
    (n (k - 1))).  F tests of ICC = 0 and confidence intervals follow McGraw
    and Wong (1996, Tables 7-8; the same formulas as pingouin and
    psych::ICC).  Returns ``{form: (icc, F, df1, df2, p, lo, hi)}`` and the
    mean squares.
    """
    x = np.asarray(x, dtype=float)
    n, k = x.shape
    nan7 = (np.nan,) * 7
    if n < 2 or k < 2:
        return dict.fromkeys(ICC_FORMS, nan7), {}
    # the ICCs, F and intervals are scale-free: sums of squares of values scaled by a power
    # of two (exact) where they would over- or underflow; the mean squares scaled back
    e = pow2_exponent(x)
    x = np.ldexp(x, -e) if e else x
    g = 1.0 - confidence_level
    with np.errstate(all="ignore"):
        grand = x.mean()
        rm = x.mean(1)
        cm = x.mean(0)
        ssr = k * ((rm - grand) ** 2).sum()
        ssc = n * ((cm - grand) ** 2).sum()
        sse = ((x - rm[:, None] - cm[None, :] + grand) ** 2).sum()
        msr = ssr / (n - 1)
        msc = ssc / (k - 1)
        mse = sse / ((n - 1) * (k - 1))
        msw = (ssc + sse) / (n * (k - 1))
        df1, dfw, dfe = n - 1, n * (k - 1), (n - 1) * (k - 1)
        icc1 = (msr - msw) / (msr + (k - 1) * msw)
        icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        icc3 = (msr - mse) / (msr + (k - 1) * mse)
        icc1k = (msr - msw) / msr
        icc2k = (msr - mse) / (msr + (msc - mse) / n)
        icc3k = (msr - mse) / msr
        f1 = msr / msw
        f3 = msr / mse
        p1 = float(_st.f.sf(f1, df1, dfw))
        p3 = float(_st.f.sf(f3, df1, dfe))
        # one-way and consistency forms: exact F intervals
        f1l = f1 / _st.f.ppf(1 - g / 2, df1, dfw)
        f1u = f1 * _st.f.ppf(1 - g / 2, dfw, df1)
        f3l = f3 / _st.f.ppf(1 - g / 2, df1, dfe)
        f3u = f3 * _st.f.ppf(1 - g / 2, dfe, df1)
        # absolute agreement: Satterthwaite degrees of freedom (McGraw and Wong 1996, Table 8)
        a_ = k * icc2 / (n * (1 - icc2))
        b_ = 1 + k * icc2 * (n - 1) / (n * (1 - icc2))
        v = (a_ * msc + b_ * mse) ** 2 / ((a_ * msc) ** 2 / (k - 1) + (b_ * mse) ** 2 / dfe)
        fs = _st.f.ppf(1 - g / 2, n - 1, v)
        fss = _st.f.ppf(1 - g / 2, v, n - 1)
        den = k * msc + (k * n - k - n) * mse
        l2 = n * (msr - fs * mse) / (fs * den + n * msr)
        u2 = n * (fss * msr - mse) / (den + n * fss * msr)
        # ICC(A,k) bounds: McGraw and Wong's n (MSR - F MSE) / (F (MSC - MSE) + n MSR) is
        # algebraically the Spearman-Brown step-up of the ICC(A,1) bounds to k raters
        res = {
            "icc1": (icc1, f1, df1, dfw, p1, (f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)),
            "icc2": (icc2, f3, df1, dfe, p3, l2, u2),
            "icc3": (icc3, f3, df1, dfe, p3, (f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
            "icc1k": (icc1k, f1, df1, dfw, p1, 1 - 1 / f1l, 1 - 1 / f1u),
            "icc2k": (icc2k, f3, df1, dfe, p3, spearman_brown(l2, k), spearman_brown(u2, k)),
            "icc3k": (icc3k, f3, df1, dfe, p3, 1 - 1 / f3l, 1 - 1 / f3u),
        }
    if not (msr > 0 or mse > 0 or msw > 0):  # every value equal: nothing is defined
        res = dict.fromkeys(ICC_FORMS, nan7)
    res = {key: tuple(float(v) for v in val) for key, val in res.items()}
    for key, val in res.items():
        # no error variance (F = inf): the interval degenerates to the estimate 1
        if val[0] == 1.0 and np.isnan(val[5]) and np.isnan(val[6]):
            res[key] = (*val[:5], 1.0, 1.0)
    with np.errstate(over="ignore"):  # a mean square beyond the float range is inf
        return res, {k_: float(np.ldexp(v, 2 * e)) for k_, v in
                     (("msr", msr), ("msc", msc), ("mse", mse), ("msw", msw))}


__all__ = ["icc_table"]
