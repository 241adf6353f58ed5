"""Slow pure-Python statistics of one bootstrap replicate, from the definitions.

A bootstrap replicate is given by its row and column indices into the
original N x M matrices.  Every item of a group keeps the label of the
original it was drawn from (a system at ``input`` and ``system`` level, an
input at ``item`` level, a cell at ``global`` level).  The pair statistics
enumerate all pairs ``i < j`` of valid items *except those whose two items
come from the same original* (the population statistic is over pairs of
distinct units; metaeval.stats.levels explains why).  Correlations
(``pearson``, ``spearman``, ``kendall_c``) use all items, duplicates
included.  ``kendall_b`` is computed here by pair enumeration *skipping*
same-original pairs, so a test comparing it with the engine (which keeps
them) checks that tau-b is unaffected by joint ties.

Nothing is vectorised: loops over items and pairs, exact fractions for
accuracies, :func:`math.fsum` for the system means.
"""

from __future__ import annotations

import math
from fractions import Fraction

from scipy import stats

NAN = float("nan")


def _ok(v):
    return v is not None and math.isfinite(float(v))


def groups_of_replicate(x, y, rows, cols, level):
    """Groups as lists of (x, y, origin) items of the replicate (rows, cols)."""
    rows = [int(r) for r in rows]
    cols = [int(c) for c in cols]
    if level == "input":
        return [[(x[r][c], y[r][c], r) for r in rows] for c in cols]
    if level == "item":
        return [[(x[r][c], y[r][c], c) for c in cols] for r in rows]
    if level == "global":
        return [[(x[r][c], y[r][c], (r, c)) for r in rows for c in cols]]
    if level == "system":
        items = []
        for r in rows:
            pairs = [(x[r][c], y[r][c]) for c in cols if _ok(x[r][c]) and _ok(y[r][c])]
            if pairs:
                items.append((math.fsum(a for a, _ in pairs) / len(pairs),
                              math.fsum(b for _, b in pairs) / len(pairs), r))
            else:
                items.append((NAN, NAN, r))
        return [items]
    raise ValueError(level)


def pair_counts(items, eps=0.0):
    """(C, D, Tx, Ty, Txy) over valid pairs of distinct originals;
    a metric tie is |x_j - x_i| <= eps."""
    v = [(a, b, o) for a, b, o in items if _ok(a) and _ok(b)]
    c = d = tx = ty = txy = 0
    for i in range(len(v)):
        for j in range(i + 1, len(v)):
            if v[i][2] == v[j][2]:
                continue  # the same original drawn twice: not a pair
            dx = v[j][0] - v[i][0]
            dy = v[j][1] - v[i][1]
            xt = abs(dx) <= eps
            yt = dy == 0
            if xt and yt:
                txy += 1
            elif xt:
                tx += 1
            elif yt:
                ty += 1
            elif (dx > 0) == (dy > 0):
                c += 1
            else:
                d += 1
    return c, d, tx, ty, txy


def _pair_stat(items, method, eps=0.0):
    c, d, tx, ty, txy = pair_counts(items, eps)
    n = c + d + tx + ty + txy
    if n == 0:
        return NAN
    if method in ("acc_23", "pairwise_accuracy"):
        return (c + txy) / n
    if method == "kendall_23":
        return (c + txy - d - tx - ty) / n
    if method == "kendall_b":
        den = (n - tx - txy) * (n - ty - txy)
        return (c - d) / math.sqrt(den) if den > 0 else NAN
    raise ValueError(method)


def _correlation(items, method):
    v = [(a, b) for a, b, _ in items if _ok(a) and _ok(b)]
    if len(v) < 2:
        return NAN
    a = [p[0] for p in v]
    b = [p[1] for p in v]
    if len(set(a)) < 2 or len(set(b)) < 2:
        return NAN
    if method == "pearson":
        return float(stats.pearsonr(a, b)[0])
    if method == "spearman":
        return float(stats.spearmanr(a, b)[0])
    if method == "kendall_c":
        return float(stats.kendalltau(a, b, variant="c")[0])
    raise ValueError(method)


def _n_pairs(items):
    v = [(a, b, o) for a, b, o in items if _ok(a) and _ok(b)]
    return sum(1 for i in range(len(v)) for j in range(i + 1, len(v)) if v[i][2] != v[j][2])


def _acc_eq(groups, average):
    """Tie calibration over the non-duplicate pairs: the smallest threshold
    maximising the (exact) averaged acc_23; returns (epsilon, value)."""
    npairs = [_n_pairs(g) for g in groups]
    used = [k for k, n in enumerate(npairs) if n > 0]
    if not used:
        return NAN, NAN
    cands = {0.0}
    for k in used:
        v = [(a, b, o) for a, b, o in groups[k] if _ok(a) and _ok(b)]
        for i in range(len(v)):
            for j in range(i + 1, len(v)):
                if v[i][2] != v[j][2]:
                    cands.add(abs(v[j][0] - v[i][0]))
    total = sum(npairs[k] for k in used)
    best = None
    for eps in sorted(cands):
        acc = Fraction(0)
        for k in used:
            c, d, tx, ty, txy = pair_counts(groups[k], eps)
            a = Fraction(c + txy, npairs[k])
            w = Fraction(1, len(used)) if average == "macro" else Fraction(npairs[k], total)
            acc += w * a
        if best is None or acc > best[1]:
            best = (eps, acc)
    return best[0], float(best[1])


def replicate_groups(x, y, rows, cols, level, method, average="macro"):
    """Per group of the replicate: (value, weight) (value NaN when undefined)."""
    groups = groups_of_replicate(x, y, rows, cols, level)
    pair = method in ("acc_23", "kendall_23", "pairwise_accuracy", "kendall_b")
    out = []
    for g in groups:
        v = _pair_stat(g, method) if pair else _correlation(g, method)
        nv = sum(1 for a, b, _ in g if _ok(a) and _ok(b))
        if average == "macro":
            w = 1.0
        elif method in ("acc_23", "kendall_23", "pairwise_accuracy"):
            w = float(_n_pairs(g))
        else:
            w = float(nv)
        out.append((v, w))
    return out


def average_groups(groups, keep=None):
    """Weighted mean of the defined group values (``keep``: a mask of the
    groups allowed to take part)."""
    num, den = [], []
    for k, (v, w) in enumerate(groups):
        if math.isnan(v) or (keep is not None and not keep[k]):
            continue
        num.append(v * w)
        den.append(w)
    if not den or math.fsum(den) == 0:
        return NAN
    return math.fsum(num) / math.fsum(den)


def replicate_statistic(x, y, rows, cols, level, method, average="macro"):
    """The statistic of ``method`` at ``level`` on the replicate (rows, cols)."""
    if method == "acc_eq":
        return _acc_eq(groups_of_replicate(x, y, rows, cols, level), average)[1]
    return average_groups(replicate_groups(x, y, rows, cols, level, method, average))


def replicate_pair(xa, xb, z, rows, cols, level, method, average="macro"):
    """Both metrics' statistics on the replicate, averaged over the groups
    where both are defined (metaeval.compare's rule)."""
    if method == "acc_eq":
        return (replicate_statistic(xa, z, rows, cols, level, method, average),
                replicate_statistic(xb, z, rows, cols, level, method, average))
    ga = replicate_groups(xa, z, rows, cols, level, method, average)
    gb = replicate_groups(xb, z, rows, cols, level, method, average)
    keep = [not (math.isnan(a[0]) or math.isnan(b[0])) for a, b in zip(ga, gb)]
    return average_groups(ga, keep), average_groups(gb, keep)


def assert_as_materialised(got, ref, level, method, msg=""):
    """A replicate computed from the draws (stats/cellboot.py) against the
    materialised one: bit for bit, except Pearson/Spearman outside the system
    level, whose sums run over the weighted sorted cells: to rounding (1e-12),
    with the same undefined (NaN) replicates."""
    import numpy as np

    if level != "system" and method in ("pearson", "spearman"):
        assert np.array_equal(np.isnan(got), np.isnan(ref)), msg
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12, err_msg=msg)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=msg)
