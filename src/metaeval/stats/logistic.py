"""Maximum-likelihood logistic regression with one predictor, its Wald interval and p-value.

Arrays in, arrays out; :func:`metaeval.preferences.length_bias` reads it (re-exported there as
``logistic_fit``).
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st


def logistic_fit(x, y, *, confidence_level: float = 0.95, max_iter: int = 100, tol: float = 1e-10):
    r"""Maximum-likelihood logistic regression of binary ``y`` on ``x`` with an intercept.

    Newton-Raphson (equivalently IRLS) on :math:`\mathrm{logit}\,P(y=1) = b_0 + b_1 x`;
    the Wald interval of :math:`b_1` is :math:`b_1 \pm z\,\mathrm{se}(b_1)` with
    :math:`\mathrm{se}` from the inverse observed information :math:`(X^T V X)^{-1}`,
    and the Wald p-value is :math:`2\,\Phi(-|b_1/\mathrm{se}|)`.

    Returns ``(b0, b1, se1, ci_low, ci_high, pvalue, converged)``; NaN (and
    ``converged=False``) under complete separation or a constant ``x``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    nan7 = (np.nan,) * 6 + (False,)
    if x.size < 3 or np.ptp(x) == 0 or y.min() == y.max():
        return nan7
    # With one predictor the MLE exists iff the classes are not (quasi-)separated by a
    # threshold on x (Albert & Anderson 1984): decided from the data, not from the size of
    # the coefficients, which depends on the unit of x.
    x0, x1 = x[y == 0], x[y == 1]
    if x0.max() <= x1.min() or x1.max() <= x0.min():
        return nan7
    # Newton-Raphson on the standardized predictor (well scaled whatever the unit of x),
    # transformed back to x's scale at the end.
    mu, sd = float(x.mean()), float(x.std())
    X = np.column_stack([np.ones_like(x), (x - mu) / sd])
    beta = np.zeros(2)
    converged = False
    for _ in range(max_iter):
        eta = X @ beta
        p = 1.0 / (1.0 + np.exp(-eta))
        w = p * (1 - p)
        info = X.T @ (X * w[:, None])
        grad = X.T @ (y - p)
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            return nan7
        beta = beta + step
        if np.max(np.abs(step)) < tol * (1 + np.max(np.abs(beta))):
            converged = True
            break
    if not converged:
        return nan7
    p = 1.0 / (1.0 + np.exp(-(X @ beta)))
    info = X.T @ (X * (p * (1 - p))[:, None])
    cov = np.linalg.inv(info)
    z = _st.norm.ppf((1 + confidence_level) / 2)
    b1 = float(beta[1] / sd)
    se = float(np.sqrt(cov[1, 1]) / sd)
    b0 = float(beta[0] - beta[1] * mu / sd)
    pv = float(2 * _st.norm.sf(abs(b1 / se)))
    return b0, b1, se, b1 - z * se, b1 + z * se, pv, True


__all__ = ["logistic_fit"]
