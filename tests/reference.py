"""Slow, obviously-correct pure-Python references for the statistics engine.

Everything here is written from the definitions (mt-metrics-eval stats.py
``_Reshape``, ``AverageCorrelation`` and ``KendallVariants``, commit 68a481a;
nlpstats correlations.py; Deutsch et al. 2023, "Ties Matter", EMNLP; the module
docstrings of ``metaeval.stats.coefficients`` and ``metaeval.stats.levels``)
with plain loops over items and pairs, no NumPy.  Nothing is vectorised,
nothing is clever; speed is irrelevant.  Tests compare the engine's kernels
(numba and NumPy twin) against these functions.

Conventions (the engine's):

* ``x`` is the metric, ``y`` the human score.
* A value is *missing* when it is ``None`` or not finite (NaN, +-inf).  Every
  function uses pairwise deletion: an item is used only when both its ``x``
  and ``y`` are present.
* Pearson's r is computed exactly with :class:`fractions.Fraction` (floats
  convert to fractions exactly), so it is immune to overflow, underflow and
  cancellation; only the final square root rounds.
* Pair statistics (C, D, ties) loop over all ``i < j`` pairs and use the
  difference ``x[j] - x[i]`` as the definition of a metric tie
  ``|dx| <= eps``, so candidate thresholds are the very same floats the
  engine compares against.
* Averages of accuracies (tie calibration) are exact fractions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

NAN = float("nan")

LEVELS = ("system", "input", "item", "global")
CORRELATIONS = ("pearson", "spearman", "kendall_b", "kendall_c")
PAIR_STATS = ("kendall_23", "acc_23", "acc_eq", "pairwise_accuracy")
METHODS = CORRELATIONS + PAIR_STATS


# ---------------------------------------------------------------------------
# helpers


def present(v) -> bool:
    """True when ``v`` is a usable score (not None, not NaN, not +-inf)."""
    return v is not None and math.isfinite(float(v))


def valid_pairs(x, y) -> list[tuple[float, float]]:
    """The (x_i, y_i) observations where both are present (pairwise deletion)."""
    if len(x) != len(y):
        raise ValueError("x and y differ in length")
    return [(float(a), float(b)) for a, b in zip(x, y) if present(a) and present(b)]


def isnan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def as_rows(a):
    """A 2-D array-like as a list of lists of floats (None -> NaN)."""
    if hasattr(a, "tolist"):
        a = a.tolist()
    return [[NAN if v is None else float(v) for v in row] for row in a]


# ---------------------------------------------------------------------------
# correlations


def pearson(x, y) -> float:
    """Pearson's r, exactly; NaN with < 2 valid items or a constant side."""
    p = valid_pairs(x, y)
    n = len(p)
    if n < 2:
        return NAN
    xs = [Fraction(a) for a, _ in p]
    ys = [Fraction(b) for _, b in p]
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return NAN
    mx = sum(xs) / n
    my = sum(ys) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys))
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    if sxy == 0:
        return 0.0
    r2 = sxy * sxy / (sxx * syy)
    return math.copysign(math.sqrt(float(r2)), sxy)


def average_ranks(v) -> list[float]:
    """1-based ranks; tied values get the mean of the ranks they span."""
    out = []
    for a in v:
        less = sum(1 for b in v if b < a)
        equal = sum(1 for b in v if b == a)  # includes a itself
        out.append(1 + less + (equal - 1) / 2)
    return out


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's r of the average ranks of the valid items."""
    p = valid_pairs(x, y)
    return pearson(average_ranks([a for a, _ in p]), average_ranks([b for _, b in p]))


# ---------------------------------------------------------------------------
# Kendall family


@dataclass(frozen=True)
class KendallStats:
    """Sufficient statistics, named as in MTME stats.py KendallVariants / Deutsch et al. 2023."""

    c: int  # concordant
    d: int  # discordant
    tx: int  # tied in the metric only
    ty: int  # tied in the human score only
    txy: int  # tied in both
    n: int  # valid items
    kx: int  # distinct metric values among valid items
    ky: int  # distinct human values among valid items

    @property
    def pairs(self) -> int:
        return self.c + self.d + self.tx + self.ty + self.txy

    def as_tuple(self):
        # the engine's column order: C, D, Tx, Ty, Txy, n, kx, ky
        return (self.c, self.d, self.tx, self.ty, self.txy, self.n, self.kx, self.ky)


def kendall_stats(x, y, eps: float = 0.0) -> KendallStats:
    """Count every valid pair; a metric tie is ``|x_j - x_i| <= eps``."""
    p = valid_pairs(x, y)
    c = d = tx = ty = txy = 0
    for i, j in combinations(range(len(p)), 2):
        dx = p[j][0] - p[i][0]
        dy = p[j][1] - p[i][1]
        xtie = abs(dx) <= eps
        ytie = dy == 0
        if xtie and ytie:
            txy += 1
        elif xtie:
            tx += 1
        elif ytie:
            ty += 1
        elif (dx > 0) == (dy > 0):
            c += 1
        else:
            d += 1
    kx = len({a for a, _ in p})
    ky = len({b for _, b in p})
    return KendallStats(c, d, tx, ty, txy, len(p), kx, ky)


def tau_b_from(s: KendallStats) -> float:
    """(C - D) / sqrt((N - Tx - Txy)(N - Ty - Txy)); NaN if a factor is 0."""
    n0 = s.pairs
    a = n0 - s.tx - s.txy
    b = n0 - s.ty - s.txy
    if n0 == 0 or a == 0 or b == 0:
        return NAN
    return (s.c - s.d) / math.sqrt(a * b)


def tau_c_from(s: KendallStats) -> float:
    """2 (C - D) / (n^2 (k - 1) / k), k = min(kx, ky); NaN if k < 2."""
    k = min(s.kx, s.ky)
    if s.pairs == 0 or k < 2:
        return NAN
    return 2 * (s.c - s.d) / (s.n * s.n * (k - 1) / k)


def tau_23_from(s: KendallStats) -> float:
    """(C + Txy - D - Tx - Ty) / N; NaN without pairs."""
    if s.pairs == 0:
        return NAN
    return (s.c + s.txy - s.d - s.tx - s.ty) / s.pairs


def acc_23_from(s: KendallStats) -> float:
    """(C + Txy) / N; NaN without pairs."""
    if s.pairs == 0:
        return NAN
    return (s.c + s.txy) / s.pairs


def kendall_b(x, y) -> float:
    return tau_b_from(kendall_stats(x, y))


def kendall_c(x, y) -> float:
    return tau_c_from(kendall_stats(x, y))


def kendall_23(x, y, eps: float = 0.0) -> float:
    return tau_23_from(kendall_stats(x, y, eps))


def acc_23(x, y, eps: float = 0.0) -> float:
    return acc_23_from(kendall_stats(x, y, eps))


COEFFICIENTS = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall_b": kendall_b,
    "kendall_c": kendall_c,
    "kendall_23": kendall_23,
    "acc_23": acc_23,
    "pairwise_accuracy": acc_23,
}


# ---------------------------------------------------------------------------
# tie calibration (acc_eq), by brute force over every candidate threshold


def candidate_thresholds(groups) -> list[float]:
    """0 and every distinct positive |dx| of a valid within-group pair, ascending."""
    cands = {0.0}
    for x, y in groups:
        p = valid_pairs(x, y)
        for i, j in combinations(range(len(p)), 2):
            cands.add(abs(p[j][0] - p[i][0]))
    return sorted(cands)


def _exact_acc(x, y, eps) -> tuple[Fraction, int] | None:
    s = kendall_stats(x, y, eps)
    if s.pairs == 0:
        return None
    return Fraction(s.c + s.txy, s.pairs), s.pairs


def averaged_acc(groups, eps, *, average="macro", weights=None) -> Fraction:
    """acc_23 at ``eps`` averaged over the groups that have >= 1 valid pair.

    ``macro``: plain mean; ``micro``: weighted by the groups' pair counts
    (the pooled share of correct pairs); explicit ``weights`` (one per group)
    replace both.
    """
    accs = [_exact_acc(x, y, eps) for x, y in groups]
    if weights is not None:
        return sum(
            (Fraction(float(w)) * a[0] for w, a in zip(weights, accs) if a is not None),
            Fraction(0),
        )
    used = [a for a in accs if a is not None]
    if not used:
        return Fraction(0)
    if average == "macro":
        return sum(a for a, _ in used) / len(used)
    return sum(a * n for a, n in used) / sum(n for _, n in used)


def tie_calibration(groups, *, average="macro", weights=None):
    """(thresholds, exact averaged accuracies) over every candidate threshold."""
    thr = candidate_thresholds(groups)
    vals = [averaged_acc(groups, t, average=average, weights=weights) for t in thr]
    return thr, vals


def acc_eq(groups, *, average="macro", weights=None) -> tuple[float, float]:
    """(epsilon, acc_eq): the smallest threshold reaching the exact maximum.

    NaN accuracy (and epsilon NaN) when no group has a valid pair.
    """
    if not any(len(valid_pairs(x, y)) >= 2 for x, y in groups):
        return NAN, NAN
    thr, vals = tie_calibration(groups, average=average, weights=weights)
    best = max(vals)
    k = vals.index(best)  # first, i.e. smallest threshold among exact maxima
    return thr[k], float(best)


# ---------------------------------------------------------------------------
# grouping levels


def arrange(x, y, level):
    """The groups (list of (x_vector, y_vector)) of two N x M matrices at ``level``.

    ``system``: one group of per-system means over the *matched* cells (both
    present); a system with no matched cell has a missing mean.  Means use
    :func:`math.fsum` (correctly rounded, so independent of cell order).
    ``input``: one group per column; ``item``: one group per row;
    ``global``: one group of all cells, system-major.
    """
    X = as_rows(x)
    Y = as_rows(y)
    n_sys = len(X)
    n_inp = len(X[0]) if n_sys else 0
    if level == "system":
        mx, my = [], []
        for i in range(n_sys):
            p = valid_pairs(X[i], Y[i])
            if p:
                mx.append(math.fsum(a for a, _ in p) / len(p))
                my.append(math.fsum(b for _, b in p) / len(p))
            else:
                mx.append(NAN)
                my.append(NAN)
        return [(mx, my)]
    if level == "item":
        return [(X[i], Y[i]) for i in range(n_sys)]
    if level == "input":
        return [([X[i][j] for i in range(n_sys)], [Y[i][j] for i in range(n_sys)])
                for j in range(n_inp)]
    if level == "global":
        return [([v for row in X for v in row], [v for row in Y for v in row])]
    raise ValueError(level)


@dataclass
class LevelResult:
    value: float
    group: list[float]
    n_valid: list[int]
    epsilon: float | None = None


def level(x, y, level, method, average="macro") -> LevelResult:
    """The statistic of ``method`` at ``level`` for N x M metric ``x`` and human ``y``.

    Per group: the coefficient on the valid items; a group is dropped (NaN)
    when it has fewer than 2 valid items, and, for the correlations, when
    either side is constant over its valid items.  ``macro``: mean of the
    defined group values; ``micro``: weighted by valid items (correlations)
    or valid pairs (kendall_23, acc_23, acc_eq).  No defined group -> NaN.

    ``acc_eq`` calibrates one epsilon shared by all groups (the smallest
    maximiser of the averaged acc_23) and reports each group's acc_23 at it.
    """
    if method == "pairwise_accuracy" and level != "system":
        raise ValueError("pairwise_accuracy is a system-level statistic")
    groups = arrange(x, y, level)
    nv = [len(valid_pairs(gx, gy)) for gx, gy in groups]
    pair_weighted = method in PAIR_STATS
    if method == "acc_eq":
        eps, value = acc_eq(groups, average=average)
        if isnan(eps):
            return LevelResult(NAN, [NAN] * len(groups), nv, eps)
        gv = [acc_23(gx, gy, eps) for gx, gy in groups]
        return LevelResult(value, gv, nv, eps)
    fn = COEFFICIENTS[method]
    gv = [fn(gx, gy) for gx, gy in groups]
    num = 0.0
    den = 0.0
    for v, n in zip(gv, nv):
        if isnan(v):
            continue
        w = 1.0 if average == "macro" else (n * (n - 1) / 2 if pair_weighted else n)
        num += w * v
        den += w
    value = num / den if den > 0 else NAN
    return LevelResult(value, gv, nv)


# --------------------------------------------------------------------------
# seed paper 000: Perm-Both p-values, discriminative power, ranking consistency


def zscore(a):
    """(a - mean) / population std over the present cells (missing stay missing)."""
    rows = as_rows(a)
    vals = [v for row in rows for v in row if present(v)]
    m = math.fsum(vals) / len(vals)
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in vals) / len(vals))
    sd = sd if sd > 0 else 1.0
    return [[(v - m) / sd if present(v) else NAN for v in row] for row in rows]


def perm_both_pvalue(xa, xb, z, lvl, method, coins, average="macro", tol=1e-12):
    """Two-sided Perm-Both p-value (Deutsch et al. 2021) with explicit coins.

    ``coins[b][i][j]`` true swaps cell (i, j) in resample b.  Only cells
    where all three are present are used; the observed difference uses the
    raw scores, the resamples the z-scored ones; p = (count + 1) / (B + 1)
    with count = #{|null| >= |delta| - tol * max(1, |delta|)}.
    """
    A, Bm, Z = as_rows(xa), as_rows(xb), as_rows(z)
    keep = [[present(A[i][j]) and present(Bm[i][j]) and present(Z[i][j])
             for j in range(len(Z[0]))] for i in range(len(Z))]
    A = [[A[i][j] if keep[i][j] else NAN for j in range(len(Z[0]))] for i in range(len(Z))]
    Bm = [[Bm[i][j] if keep[i][j] else NAN for j in range(len(Z[0]))] for i in range(len(Z))]
    Z = [[Z[i][j] if keep[i][j] else NAN for j in range(len(Z[0]))] for i in range(len(Z))]
    delta = level(A, Z, lvl, method, average).value - level(Bm, Z, lvl, method, average).value
    za, zb = zscore(A), zscore(Bm)
    null = []
    for w in coins:
        pa = [[zb[i][j] if w[i][j] else za[i][j] for j in range(len(Z[0]))] for i in range(len(Z))]
        pb = [[za[i][j] if w[i][j] else zb[i][j] for j in range(len(Z[0]))] for i in range(len(Z))]
        null.append(level(pa, Z, lvl, method, average).value - level(pb, Z, lvl, method, average).value)
    null = [v for v in null if not isnan(v)]
    if isnan(delta) or not null:
        return NAN
    t = tol * max(1.0, abs(delta))
    count = sum(1 for v in null if abs(v) >= abs(delta) - t)
    return (count + 1) / (len(null) + 1)


def ranking_consistency(metrics, z, lvl, method, splits, decimals=None):
    """Algorithm 3 of seed paper 000 with given splits [(D1, D2), ...]: the
    per-split tau-b between the metrics' statistics on the two halves
    (rounded to ``decimals`` first when given)."""
    Z = as_rows(z)
    taus = []
    for d1, d2 in splits:
        r1, r2 = [], []
        for x in metrics:
            X = as_rows(x)
            r1.append(level([[row[j] for j in d1] for row in X], [[row[j] for j in d1] for row in Z], lvl, method).value)
            r2.append(level([[row[j] for j in d2] for row in X], [[row[j] for j in d2] for row in Z], lvl, method).value)
        if decimals is not None:
            r1 = [v if isnan(v) else round(v, decimals) for v in r1]
            r2 = [v if isnan(v) else round(v, decimals) for v in r2]
        taus.append(kendall_b(r1, r2))
    return taus
