"""Bradley-Terry strengths by Hunter's (2004) MM algorithm.

Arrays in, arrays out; :func:`metaeval.preferences.bradley_terry` reads it (re-exported there as
``bt_mm``).
"""

from __future__ import annotations

import numpy as np


def bt_mm(wins, *, max_iter: int = 10000, tol: float = 1e-10):
    r"""Bradley-Terry strengths by the MM algorithm of Hunter (2004), Eq. (3).

    ``wins[i, j]`` is the (possibly fractional: ties count half a win to each side)
    number of times i beat j.  With :math:`W_i = \sum_j w_{ij}` and
    :math:`n_{ij} = w_{ij} + w_{ji}`, the update is
    :math:`\pi_i \leftarrow W_i / \sum_{j \ne i} n_{ij} / (\pi_i + \pi_j)`, renormalised so
    that :math:`\sum_i \log \pi_i = 0`.  The MLE exists iff the directed graph with an
    edge i -> j whenever :math:`w_{ij} > 0` is strongly connected (Hunter 2004,
    Assumption 1; Zermelo 1929); otherwise NaN.

    Returns ``(log_strengths, iterations, converged)``.

    Examples
    --------
    Two players, 2 wins to 1: the MLE odds are 2, so the log-strengths are +-log(2)/2.

    >>> ls, it, ok = bt_mm([[0, 2], [1, 0]])
    >>> bool(ok), [round(float(v), 6) for v in ls]
    (True, [0.346574, -0.346574])
    """
    from scipy.sparse.csgraph import connected_components

    w = np.asarray(wins, dtype=float)
    K = w.shape[0]
    nan = np.full(K, np.nan)
    if K < 2:
        return nan, 0, False
    ncomp, _ = connected_components(w > 0, directed=True, connection="strong")
    if ncomp != 1:
        return nan, 0, False
    n = w + w.T
    Wi = w.sum(1)
    p = np.ones(K)
    for it in range(1, max_iter + 1):
        denom = (n / (p[:, None] + p[None, :])).sum(1)
        new = Wi / denom
        new = new / np.exp(np.mean(np.log(new)))
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            return np.log(p), it, True
        p = new
    return np.log(p), max_iter, False


def win_matrix(sa, sb, pref, systems):
    """(K, K) wins of each system over each other from pairs (system ``sa``, system ``sb``,
    preference for A in [0, 1]): ``pref`` to A over B and ``1 - pref`` to B over A."""
    idx = {s: k for k, s in enumerate(systems)}
    K = len(systems)
    w = np.zeros((K, K))
    ia = np.array([idx[s] for s in sa], dtype=np.intp)
    ib = np.array([idx[s] for s in sb], dtype=np.intp)
    np.add.at(w, (ia, ib), pref)
    np.add.at(w, (ib, ia), 1.0 - pref)
    return w


__all__ = ["bt_mm", "win_matrix"]
