"""Cronbach's alpha on batches of complete score matrices (Cronbach 1951).

The engine of :func:`metaeval.consistency`, :func:`metaeval.consistency_curve`
and the reliabilities on the diagonal of :func:`metaeval.mtmm`.
"""

from __future__ import annotations

import numpy as np

from .coefficients import _SAFE_EXP

#: Cells per block of a batch (bounds the temporary arrays of one step).
BLOCK_CELLS = 4_000_000


def alpha_batch(y):
    """Cronbach's alpha of each (N, M) matrix of a complete (B, N, M) batch.

    alpha = M / (M - 1) * (1 - sum_j var(Y_j) / var(sum_j Y_j)), variances
    over systems with ddof=1 (the ratio does not depend on ddof); NaN where
    the total score is constant over systems.  Totals are constant when
    they differ by no more than the rounding of their sums can explain
    (2 M eps max_i sum_j |Y_ij|, the bound of recursive summation; Higham
    2002, section 4.2): 0.1 + 0.2 and 0.3 + 0.0 are one total, and their
    variance of 1e-33 would otherwise give alpha = -2.6e31.

    >>> alpha_batch(np.array([[[0.1, 0.2], [0.2, 0.1], [0.3, 0.0]]]))
    array([nan])
    """
    y = np.asarray(y, dtype=float)
    B, N, M = y.shape
    out = np.full(B, np.nan)
    if N < 2 or M < 2:
        return out
    step = max(1, BLOCK_CELLS // max(N * M, 1))
    with np.errstate(all="ignore"):
        for s in range(0, B, step):
            blk = y[s : s + step]
            # scaled by a power of two where the magnitudes would over- or underflow
            # when squared (alpha is scale-free; exact, so unchanged in the safe range)
            # the largest row sum of |Y| (needed for the noise bound anyway) bounds every
            # |Y_ij| from above, and from below within a factor M
            size = np.abs(blk).sum(-1).max(-1)
            e = np.frexp(size)[1]
            big = np.isinf(size)  # a row sum beyond the float range: from the largest value
            if big.any():
                e[big] = np.frexp(np.abs(blk[big]).max(axis=(1, 2)))[1]
            e = np.where((e >= -_SAFE_EXP) & (e <= _SAFE_EXP), 0, e)
            if e.any():
                blk = np.ldexp(blk, -e[:, None, None])
                size = np.abs(blk).sum(-1).max(-1)
            item = blk.var(axis=1, ddof=1).sum(-1)
            sums = blk.sum(-1)
            total = sums.var(axis=-1, ddof=1)
            a = M / (M - 1.0) * (1.0 - item / total)
            noise = 2.0 * M * np.finfo(float).eps * size
            out[s : s + step] = np.where((total > 0) & (np.ptp(sums, axis=-1) > noise), a, np.nan)
    return out


def listwise_complete(y):
    """Listwise deletion: drop systems with no score, then inputs with a missing cell.

    Returns ``(y, n_systems_dropped, n_inputs_dropped)``.
    """
    ok = np.isfinite(y)
    sys_keep = ok.any(1)
    y = y[sys_keep]
    inp_keep = np.isfinite(y).all(0)
    return y[:, inp_keep], int((~sys_keep).sum()), int((~inp_keep).sum())


def feldt_interval(alpha, n_systems, n_inputs, confidence_level):
    """Feldt's (1965) F-distribution interval of Cronbach's alpha with N examinees (systems)
    and M items (inputs): ``1 - (1 - alpha) F_{1-g/2}`` and ``1 - (1 - alpha) F_{g/2}`` with
    ``F`` on (N - 1, (N - 1)(M - 1)) degrees of freedom, g = 1 - confidence_level (as
    pingouin.cronbach_alpha and psych::alpha)."""
    from scipy import stats as _st

    g = 1.0 - confidence_level
    df1, df2 = n_systems - 1, (n_systems - 1) * (n_inputs - 1)
    lo = float(1.0 - (1.0 - alpha) * _st.f.isf(g / 2, df1, df2))
    hi = float(1.0 - (1.0 - alpha) * _st.f.isf(1 - g / 2, df1, df2))
    return lo, hi


__all__ = ["BLOCK_CELLS", "alpha_batch", "listwise_complete", "feldt_interval"]
