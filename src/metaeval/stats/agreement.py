"""Rater agreement on arrays: the rating design of an R x units table, the units x k table of a
nested design, and Krippendorff's alpha from the coincidence matrix.

Arrays in, arrays out; :mod:`metaeval.reliability` (``agreement``, ``rater_correlations``) and
:mod:`metaeval.validity` (``mtmm``, ``cfa``, which take each rater as one method) call it.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse as _sparse

from .alpha import BLOCK_CELLS
from .coefficients import pow2_exponent

#: Above this many distinct values, Krippendorff's expected disagreement uses closed forms
#: (interval, ordinal, nominal) or row blocks (ratio).
DENSE_VALUES = 2048


def rater_design(data, raters="same"):
    """The rating design of an ``(R, units)`` table with NaN for a missing rating.

    ``"slots"`` when ``raters == "slots"`` (declared: rater1..raterK are different people
    in different cells); otherwise ``"rotating"`` when fewer than two units are rated by all
    R raters while at least two units have two or more ratings (each unit rated by its own
    subset of the raters), else ``"same"``.
    """
    if raters == "slots":
        return "slots"
    present = np.isfinite(data)
    if int(present.all(0).sum()) < 2 and int((present.sum(0) >= 2).sum()) >= 2:
        return "rotating"
    return "same"


def nested_table(data):
    """The units x k table of a design where each unit has its own raters.

    ``data`` is (R, U) with NaN where rater r did not rate unit u.  k is the
    most common number of ratings among units with two or more (ties: the
    larger); the units with exactly k ratings give one row each, their
    ratings in rater order.  Returns ``(table, used_mask, k)``.
    """
    present = np.isfinite(data)
    counts = present.sum(0)
    rated = counts >= 2
    if not rated.any():
        return np.empty((0, 0)), np.zeros(counts.shape, dtype=bool), 0
    values, freq = np.unique(counts[rated], return_counts=True)
    k = int(values[freq == freq.max()].max())
    use = counts == k
    table = data[:, use].T[present[:, use].T].reshape(-1, k)
    return table, use, k


def ordinal_positions(counts):
    """Mid-positions t_c = sum_{g < c} n_g + n_c / 2 of sorted distinct values.

    Krippendorff's ordinal difference delta(c, k) = sum_{g=c..k} n_g -
    (n_c + n_k) / 2 equals |t_c - t_k|, so ordinal alpha is the interval
    formula on these positions.
    """
    return np.cumsum(counts) - counts / 2.0


def coincidence_pairs(idx, present, w):
    """The ordered pairs (a, b), a != b, of raters who both rated a unit:
    ``(value index of a, value index of b, w[unit])`` per pair, in the order
    (a, b, unit).  ``idx`` and ``present`` are (raters, units).

    The pairs are listed unit by unit (sum_u m_u (m_u - 1) of them, linear in
    the ratings for a bounded number of ratings per unit), not by looping over
    every pair of raters (R^2 boolean passes over the units: 1,200 job-specific
    rater labels took 80 CPU-s); then sorted into the (a, b, unit) order of
    that double loop, so the sparse coincidence matrix adds its duplicates in
    the same order and alpha is the same float.
    """
    unit, rater = np.nonzero(present.T)  # unit-major: the ratings of each unit together
    m = np.bincount(unit, minlength=present.shape[1])
    start = np.concatenate(([0], np.cumsum(m)[:-1]))
    reps = m[unit]  # each rating meets every rating of its unit (itself included)
    first = np.repeat(np.arange(unit.size), reps)
    offset = np.arange(first.size) - np.repeat(np.cumsum(reps) - reps, reps)
    second = start[unit[first]] + offset
    keep = first != second
    first, second = first[keep], second[keep]
    u = unit[first]
    ra, rb = rater[first], rater[second]
    order = np.lexsort((u, rb, ra))
    ra, rb, u = ra[order], rb[order], u[order]
    return idx[ra, u], idx[rb, u], w[u]


def krippendorff(data, metric):
    """Krippendorff's alpha of a (raters, units) array with NaN for missing.

    The coincidence-matrix formulation (Krippendorff 2011, "Computing
    Krippendorff's alpha-reliability"): only pairable values count (units
    with at least two values); o_ck = sum_u (number of ordered pairs (c, k)
    of distinct raters in u) / (m_u - 1); n_c = sum_k o_ck; n = sum_c n_c;

        alpha = 1 - (n - 1) sum_{c,k} o_ck delta^2_ck / sum_{c,k} n_c n_k delta^2_ck

    o is built as a sparse matrix over the distinct values, so continuous
    scores do not need a dense V x V table.  Returns ``(alpha, D_o, D_e,
    n_pairable_values, n_pairable_units)`` with D_o = sum o delta^2 / n and
    D_e = sum n_c n_k delta^2 / (n (n - 1)).
    """
    data = np.asarray(data, dtype=float)
    # interval differences are squared: values scaled by a power of two (exact: equal values
    # stay equal, the order is kept, alpha is scale-free) where the squares would over- or
    # underflow; the interval disagreements D_o, D_e scaled back
    e = pow2_exponent(data) if metric.removeprefix("krippendorff_") == "interval" else 0
    data = np.ldexp(data, -e) if e else data
    present = np.isfinite(data)
    m_u = present.sum(0)
    pairable = m_u >= 2
    d = data[:, pairable]
    p = present[:, pairable]
    m = m_u[pairable].astype(float)
    n_units = int(pairable.sum())
    n = int(p.sum())
    if n_units == 0:
        return np.nan, np.nan, np.nan, n, n_units
    vals, inv = np.unique(d[p], return_inverse=True)
    V = vals.size
    idx = np.full(d.shape, -1, dtype=np.intp)
    idx[p] = inv
    counts = np.bincount(inv, minlength=V).astype(float)
    # coincidences: every ordered pair of distinct raters within a unit, weight 1/(m_u - 1)
    rows, cols, wts = coincidence_pairs(idx, p, 1.0 / (m - 1.0))
    o = _sparse.coo_matrix((wts, (rows, cols)), shape=(V, V)).tocsr()
    o.sum_duplicates()
    oc = o.tocoo()
    kind = metric.removeprefix("krippendorff_")
    if kind == "ordinal":
        pos = ordinal_positions(counts)
    else:
        pos = vals

    def delta2(c_idx, k_idx):
        if kind == "nominal":
            return (c_idx != k_idx).astype(float)
        if kind == "ratio":
            c, kk = vals[c_idx], vals[k_idx]
            s = c + kk
            with np.errstate(all="ignore"):
                r = np.where(s != 0, (c - kk) / s, 0.0)
            return r * r
        diff = pos[c_idx] - pos[k_idx]
        return diff * diff

    observed = float((oc.data * delta2(oc.row, oc.col)).sum())
    # expected: sum_{c,k} n_c n_k delta^2_ck
    if kind in ("interval", "ordinal"):
        mean = (counts * pos).sum() / n
        expected = 2.0 * n * float((counts * (pos - mean) ** 2).sum())
    elif kind == "nominal":
        expected = float(n * n - (counts**2).sum())
    elif V <= DENSE_VALUES:
        ci, ki = np.meshgrid(np.arange(V), np.arange(V), indexing="ij")
        expected = float((counts[:, None] * counts[None, :] * delta2(ci, ki)).sum())
    else:
        expected = 0.0
        step = max(1, BLOCK_CELLS // V)
        allk = np.arange(V)
        for s in range(0, V, step):
            blk = np.arange(s, min(s + step, V))
            dd = delta2(blk[:, None], allk[None, :])
            expected += float((counts[blk, None] * counts[None, :] * dd).sum())
    def unit(v):  # a disagreement in the data's (squared) unit; beyond the float range: inf
        with np.errstate(over="ignore"):
            return float(np.ldexp(v, 2 * e))

    if n < 2 or expected <= 0:
        return np.nan, unit(observed / n) if n else np.nan, np.nan, n, n_units
    alpha = 1.0 - (n - 1.0) * observed / expected
    return float(alpha), unit(observed / n), unit(expected / (n * (n - 1.0))), n, n_units


__all__ = [
    "DENSE_VALUES",
    "rater_design",
    "nested_table",
    "ordinal_positions",
    "coincidence_pairs",
    "krippendorff",
]
