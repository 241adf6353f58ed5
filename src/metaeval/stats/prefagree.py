"""Agreement of three-way preference labels (A better, tie, B better) on arrays: the labels of
margins, per-pair sufficient statistics against human raters, accuracy, Cohen's kappas, Fleiss'
kappa, Krippendorff's alpha, and the tie-calibrated accuracy swept over epsilon
(Deutsch et al. 2023's acc_eq on preference pairs).

Arrays in, arrays out; :func:`metaeval.preferences.preference_agreement`,
:func:`~metaeval.preferences.compare_judges` and
:func:`~metaeval.preferences.position_consistency` read them.
"""

from __future__ import annotations

import numpy as np


def labels(margin, epsilon: float = 0.0) -> np.ndarray:
    """Category codes of margins: 2 = A better (d > eps), 1 = tie (|d| <= eps),
    0 = B better (d < -eps), -1 = missing (NaN).

    Examples
    --------
    >>> labels([0.3, -0.3, 0.1, 0.0, float("nan")], 0.1).tolist()
    [2, 0, 1, 1, -1]
    """
    d = np.asarray(margin, dtype=float)
    out = np.full(d.shape, -1, dtype=np.intp)
    ok = ~np.isnan(d)
    out[ok] = np.where(d[ok] > epsilon, 2, np.where(d[ok] < -epsilon, 0, 1))
    return out


def human_counts(H):
    """(P, 3) numbers of raters with label B, tie, A."""
    c = np.zeros((H.shape[1], 3))
    for k, v in enumerate((0.0, 0.5, 1.0)):
        c[:, k] = (H == v).sum(0)
    return c


def majority_others(Hc):
    """For each pair and each label c of a rater, the majority label of the *other* raters.

    Returns (P, 3) codes (0, 1, 2; -1 when no other rater).  The majority is the most
    frequent label; when several labels share the top count it is a tie (1).
    """
    P = Hc.shape[0]
    out = np.full((P, 3), -1, dtype=np.intp)
    for c in range(3):
        o = Hc.copy()
        o[:, c] -= 1
        valid = (Hc[:, c] > 0) & (o.sum(1) > 0)
        top = o.max(1, keepdims=True)
        n_top = (o == top).sum(1)
        maj = np.where(n_top > 1, 1, o.argmax(1))
        out[:, c] = np.where(valid, maj, -1)
    return out


_EYE = np.eye(3)


def pair_stats(lab, Hc, maj, kmax):
    """Per-pair sufficient statistics (P, 32) of one annotator against the raters.

    ``lab``: (P,) codes of the annotator (-1 missing), or None for the human-human
    statistics.  Columns: 0-8 the pooled (annotator, rater) confusion; 9-17 the
    (annotator, leave-one-out majority) confusion; 18-26 Krippendorff's coincidences with
    the annotator among the raters; 27-31 Fleiss' (count, sum P_i, category sums) on
    pairs with ``kmax`` human labels (and the annotator's).
    """
    P = Hc.shape[0]
    S = np.zeros((P, 32))
    nh = Hc.sum(1)
    if lab is None:
        conf = Hc[:, :, None] * Hc[:, None, :] - Hc[:, :, None] * _EYE[None]
        S[:, 0:9] = conf.reshape(P, 9)
        cm = np.zeros((P, 3, 3))
        for c in range(3):
            ok = maj[:, c] >= 0
            cm[ok, c, maj[ok, c]] += Hc[ok, c]
        S[:, 9:18] = cm.reshape(P, 9)
        v = Hc
        include = nh == kmax
    else:
        present = lab >= 0
        oh = np.zeros((P, 3))
        oh[present, lab[present]] = 1.0
        S[:, 0:9] = (oh[:, :, None] * Hc[:, None, :]).reshape(P, 9)
        cm = np.zeros((P, 3, 3))
        for c in range(3):
            ok = present & (maj[:, c] >= 0)
            np.add.at(cm, (np.flatnonzero(ok), lab[ok], maj[ok, c]), Hc[ok, c])
        S[:, 9:18] = cm.reshape(P, 9)
        v = Hc + oh
        include = present & (nh == kmax)
    m = v.sum(1)
    pairable = m >= 2
    if lab is not None:
        pairable &= present  # the judge's alpha: only pairs it labelled
    with np.errstate(invalid="ignore", divide="ignore"):
        o = (v[:, :, None] * v[:, None, :] - v[:, :, None] * _EYE[None]) / np.where(pairable, m - 1, 1)[:, None, None]
    o[~pairable] = 0.0
    S[:, 18:27] = o.reshape(P, 9)
    n = m
    with np.errstate(invalid="ignore", divide="ignore"):
        Pi = ((v * v).sum(1) - n) / (n * (n - 1))
    inc = include & (n >= 2)
    S[inc, 27] = 1.0
    S[inc, 28] = Pi[inc]
    S[inc, 29:32] = v[inc]
    return S


def kappa(conf):
    """Cohen's kappa of (..., 9) flattened 3x3 confusion counts."""
    c = conf.reshape(conf.shape[:-1] + (3, 3))
    n = c.sum((-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(c, axis1=-2, axis2=-1) / n
        pe = (c.sum(-1) * c.sum(-2)).sum(-1) / (n * n)
        k = (po - pe) / (1 - pe)
    return np.where((n > 0) & (pe < 1), k, np.nan)


def measures(S):
    """Statistics from summed sufficient statistics (..., 32): acc, kappa_raters,
    kappa_majority, fleiss, alpha."""
    conf = S[..., 0:9]
    n = conf.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n > 0, conf[..., [0, 4, 8]].sum(-1) / n, np.nan)
    kr = kappa(conf)
    km = kappa(S[..., 9:18])
    o = S[..., 18:27]
    no = o.sum(-1)
    nc = o.reshape(o.shape[:-1] + (3, 3)).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        de = no * no - (nc * nc).sum(-1)
        alpha = 1 - (no - 1) * (no - o[..., [0, 4, 8]].sum(-1)) / de
    alpha = np.where((no > 1) & (de > 0), alpha, np.nan)
    N = S[..., 27]
    with np.errstate(invalid="ignore", divide="ignore"):
        pbar = S[..., 28] / N
        tot = S[..., 29:32].sum(-1)
        pj = S[..., 29:32] / tot[..., None]
        pe = (pj * pj).sum(-1)
        fk = (pbar - pe) / (1 - pe)
    fk = np.where((N > 0) & (pe < 1), fk, np.nan)
    return {"acc": acc, "kappa_raters": kr, "kappa_majority": km, "fleiss_kappa": fk, "alpha": alpha}


def calibration_order(d):
    """Pairs sorted by |d| and the positions closing each group of equal |d|."""
    a = np.abs(d)
    order = np.argsort(a, kind="stable")
    s = a[order]
    ends = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
    return order, s, ends


def acc_eq_sweep(d, Hc, weights):
    """Tie-calibrated accuracy for each row of ``weights`` (B, P) (pairs with a margin).

    Returns (acc (B,), epsilon (B,)).  acc(eps) = [sum_i w_i g_i(label_i(eps))] / sum_i w_i n_i,
    g_i(c) the raters of pair i with label c; the smallest maximizing eps of {0} U {|d_i|}.
    """
    base_lab = labels(d, 0.0)
    P = d.size
    g_base = Hc[np.arange(P), base_lab]
    delta = Hc[:, 1] - g_base  # gain of turning pair i into a tie
    order, s, ends = calibration_order(d)
    nh = Hc.sum(1)
    W = np.atleast_2d(weights)
    den = W @ nh
    num0 = W @ g_base
    cum = np.cumsum(W[:, order] * delta[order], axis=1)[:, ends]  # (B, G)
    eps_cand = s[ends]
    # eps = 0 is the group with |d| == 0 when present (delta 0 there), else "no pair tied"
    if eps_cand[0] == 0:
        cand = num0[:, None] + cum
        eps_all = eps_cand
    else:
        cand = np.concatenate([num0[:, None], num0[:, None] + cum], axis=1)
        eps_all = np.r_[0.0, eps_cand]
    # the first maximum (smallest eps); values within 1e-12 relative count as equal
    best = cand.max(1, keepdims=True)
    k = np.argmax(cand >= best - 1e-12 * np.maximum(1.0, np.abs(best)), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(den > 0, cand[np.arange(W.shape[0]), k] / den, np.nan)
    return acc, eps_all[k]


def per_input(S, codes, M):
    """(M, k) sums of the per-pair statistics ``S`` (P, k) over the pairs of each input
    (``codes`` the input of each pair)."""
    out = np.zeros((M, S.shape[1]))
    np.add.at(out, codes, S)
    return out


__all__ = [
    "labels",
    "human_counts",
    "majority_others",
    "pair_stats",
    "kappa",
    "measures",
    "calibration_order",
    "acc_eq_sweep",
    "per_input",
]
