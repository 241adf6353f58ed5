"""Tests of :mod:`metaeval.local` (seed paper 004: local metric accuracy, Eq. 1-2,
the chi-square test of section 4.3 and the weighted Kendall tau of Shieh 1998).

Oracles, each named where it is used:

* slow plain-Python references written here from the paper's definitions,
  independently of the implementation: pair building (loops over cells,
  systems and inputs), Eq. 1-2 (dicts of outcome lists), Pearson's X^2, the
  weighted tau (double loops over elements, ranks by explicit counting), the
  exact permutation distribution of X^2 (enumeration of all tables with their
  hypergeometric probabilities) and of the H2 taus (re-creating the documented
  permutation streams);
* scipy: ``stats.chi2_contingency(table, correction=False)`` (X^2, dof,
  p-value, expected counts), ``stats.contingency.association`` (Cramer's V),
  ``stats.weightedtau`` with the explicit hyperbolic weigher (``rank=True,
  additive=True`` for ``"vigna"``; ``rank=None, additive=False`` for
  ``"shieh"``), ``stats.kendalltau`` (tau-b, the weighted tau with a constant
  weigher), ``stats.binomtest(...).proportion_ci`` (Wilson, Clopper-Pearson),
  ``cluster.hierarchy`` (average linkage on 1 - tau);
* hand computations written out in comments (Table 1 of paper 004, a 2 x 2
  table, a three-element weighted tau).
"""

from __future__ import annotations

import itertools
import math
import warnings
import zlib
from fractions import Fraction
from math import comb

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.cluster import hierarchy

from metaeval.stats.localacc import OUTCOME_NAMES

from metaeval import (
    ConstantInputWarning,
    DataError,
    Dataset,
    ParameterError,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
)
from metaeval import local as lc
from metaeval.errors import SmallExpectedCountWarning
from metaeval.stats import wtau as _wtau
from metaeval.stats.multitest import adjust_pvalues

HYP = lambda r: 1.0 / (r + 1.0)


def _stream(seed, *names):
    """The documented unit stream named_generator(SeedSequence(seed), *names), from primitives."""
    key = zlib.crc32("\x1f".join(names).encode())
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))


def _nan(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


# --------------------------------------------------------------------------
# slow references


def ref_outcome(a, b, lower, atol):
    """Outcome of a pair for one metric: a = score of the better output y."""
    if _nan(a) or _nan(b) or math.isnan(a) or math.isnan(b):
        return "missing"
    d = (b - a) if lower else (a - b)
    if d > atol:
        return "correct"
    if d < -atol:
        return "incorrect"
    return "tie"


def ref_perturbation_pairs(orig, pert, labels, lower=(), atol=0.0):
    """[(context, input, system, {metric: outcome})] in row-major cell order."""
    metrics = list(pert)
    N, M = np.shape(orig[metrics[0]])
    out = []
    for i in range(N):
        for j in range(M):
            lab = labels[i][j]
            oc = {
                m: ref_outcome(
                    float(orig[m][i][j]), float(pert[m][i][j]), m in lower, atol
                )
                for m in metrics
            }
            if lab is None or all(v == "missing" for v in oc.values()):
                continue
            out.append((lab, j, i, oc))
    return out


def ref_human_pairs(H, S, labels, pair_context, *, lower=(), atol=0.0, human_atol=0.0):
    """Human-ordered pairs: per input, every two systems with different human scores."""
    N, M = len(H), len(H[0])
    out = []
    for j in range(M):
        for i1 in range(N):
            for i2 in range(i1 + 1, N):
                h1, h2 = H[i1][j], H[i2][j]
                if math.isnan(h1) or math.isnan(h2) or abs(h1 - h2) <= human_atol:
                    continue
                bt, wr = (i1, i2) if h1 > h2 else (i2, i1)
                oc = {
                    m: ref_outcome(
                        float(S[m][bt][j]), float(S[m][wr][j]), m in lower, atol
                    )
                    for m in S
                }
                if all(v == "missing" for v in oc.values()):
                    continue
                lb, lw = labels[bt][j], labels[wr][j]
                if pair_context == "better":
                    lab = lb
                elif pair_context == "worse":
                    lab = lw
                else:
                    lab = lb if (lb is not None and lb == lw) else None
                if lab is None:
                    continue
                out.append((lab, j, bt, wr, oc))
    return out


def ref_accuracy(pairs, metric, context, average, ties):
    """Eq. 2 (average="macro": mean over inputs of Eq. 1) or the pooled share ("micro")."""
    per_input = {}
    for p in pairs:
        if p[0] != context:
            continue
        o = p[-1][metric]
        if o == "missing" or (ties == "exclude" and o == "tie"):
            continue
        per_input.setdefault(p[1], []).append(1.0 if o == "correct" else 0.0)
    if not per_input:
        return math.nan
    # exact rationals, so that equal accuracies are equal floats
    if average == "macro":
        accs = [Fraction(int(sum(v)), len(v)) for v in per_input.values()]
        return float(sum(accs) / len(accs))
    allv = [x for v in per_input.values() for x in v]
    return float(Fraction(int(sum(allv)), len(allv)))


def ref_chi2(table):
    """Pearson's X^2 of a table given as a list of rows."""
    n = sum(sum(r) for r in table)
    rows = [sum(r) for r in table]
    cols = [sum(r[c] for r in table) for c in range(len(table[0]))]
    x2 = 0.0
    for i, r in enumerate(table):
        for c, o in enumerate(r):
            e = rows[i] * cols[c] / n
            x2 += (o - e) ** 2 / e
    return x2


def ref_exact_perm_pvalue(n_c, k_tot):
    """Exact permutation p-value of X^2 for the r x 2 table with row sizes n_c and
    k_tot correct pairs, the observed table being given by ``obs`` (see caller):
    returns a function obs -> p summing the multivariate hypergeometric pmf
    prod C(n_c, k_c) / C(N, K) over all tables with X^2 >= observed."""
    N = sum(n_c)
    tables = []
    for ks in itertools.product(*[range(n + 1) for n in n_c]):
        if sum(ks) != k_tot:
            continue
        prob = math.prod(comb(n, k) for n, k in zip(n_c, ks)) / comb(N, k_tot)
        x2 = ref_chi2([[k, n - k] for k, n in zip(ks, n_c)])
        tables.append((x2, prob))

    def pvalue(obs):
        return sum(p for x2, p in tables if x2 >= obs - 1e-9)

    return pvalue, tables


def ref_wtau_half(x, y, weigher, additive):
    """Weighted tau with the ranks of (x, y): rank = number of elements before an
    element in the decreasing order of (x, y, index)."""
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    n = len(x)
    rank = [
        sum(1 for b in range(n) if (x[b], y[b], b) > (x[a], y[a], a)) for a in range(n)
    ]
    w = [weigher(r) for r in rank]
    num = dx = dy = 0.0
    for a in range(n):
        for b in range(a + 1, n):
            W = w[a] + w[b] if additive else w[a] * w[b]
            sx = (x[a] > x[b]) - (x[a] < x[b])
            sy = (y[a] > y[b]) - (y[a] < y[b])
            num += W * sx * sy
            dx += W * (sx != 0)
            dy += W * (sy != 0)
    if dx == 0 or dy == 0:
        return math.nan
    return max(-1.0, min(1.0, num / math.sqrt(dx) / math.sqrt(dy)))


def ref_wtau(x, y, variant="vigna", weigher=HYP):
    pairs = [(a, b) for a, b in zip(x, y) if not (math.isnan(a) or math.isnan(b))]
    xs = [p[0] for p in pairs]
    ys = [p[1] for p in pairs]
    if variant == "vigna":
        return (
            ref_wtau_half(xs, ys, weigher, True) + ref_wtau_half(ys, xs, weigher, True)
        ) / 2
    return ref_wtau_half(xs, ys, weigher, False)


def ref_shieh(x_rank_order_y):
    """Shieh (1998): tau_w = sum_{a<b} v_a v_b sgn(b - a) sgn(R_b - R_a) / sum v_a v_b
    for a permutation R listed in the order of the reference ranking (a = 0 is
    the reference's top element), v_a = 1 / (a + 1)."""
    R = x_rank_order_y
    n = len(R)
    num = den = 0.0
    for a in range(n):
        for b in range(a + 1, n):
            w = 1.0 / (a + 1) / (b + 1)
            num += w * (1 if (R[b] - R[a]) > 0 else -1)
            den += w
    return num / den


# --------------------------------------------------------------------------
# fixtures


def _random_case(seed, N=4, M=6, K=3, n_ctx=3, p_nan=0.1, levels=3):
    """Integer-valued scores (many ties), NaN cells, labels with a None."""
    rng = np.random.default_rng(seed)
    orig = {f"m{k}": rng.integers(0, levels, (N, M)).astype(float) for k in range(K)}
    pert = {f"m{k}": rng.integers(0, levels, (N, M)).astype(float) for k in range(K)}
    for d in (orig, pert):
        for m in d:
            d[m][rng.random((N, M)) < p_nan] = np.nan
    labels = rng.choice([f"c{i}" for i in range(n_ctx)], size=(N, M)).astype(object)
    labels[0, 0] = None
    return orig, pert, labels


def _table1_pairs():
    """Paper 004 Table 1: metrics A, B, C with accuracies (0.9, 0.9, 0.3),
    (0.7, 0.7, 0.7), (0.3, 0.3, 0.9) in contexts X, Y, Z; 10 single-pair inputs
    per context."""
    acc = {"A": [0.9, 0.9, 0.3], "B": [0.7, 0.7, 0.7], "C": [0.3, 0.3, 0.9]}
    orig = {m: np.ones((1, 30)) for m in acc}
    pert = {
        m: np.concatenate(
            [np.where(np.arange(10) < round(10 * a), 0.0, 2.0) for a in v]
        )[None]
        for m, v in acc.items()
    }
    ctx = np.repeat(["X", "Y", "Z"], 10)[None, :]
    return lc.local_pairs(orig, pert, context=ctx)


# --------------------------------------------------------------------------
# weighted tau


def test_weighted_tau_hand_case():
    # x = (3, 2, 1), y = (3, 1, 2).  Ranks by x: 0, 1, 2 -> weights 1, 1/2, 1/3.
    # Additive pair weights: (0,1) 3/2 concordant, (0,2) 4/3 concordant,
    # (1,2) 5/6 discordant: tau_xy = (3/2 + 4/3 - 5/6) / (11/3) = 6/11.
    # Ranks by y: elements 0, 2, 1 -> weights 1, 1/3, 1/2: (0,1) 4/3 conc,
    # (0,2) 3/2 conc, (1,2) 5/6 disc -> 6/11 as well; vigna = 6/11.
    assert lc.weighted_tau([3, 2, 1], [3, 1, 2]) == pytest.approx(6 / 11, rel=1e-14)
    # Shieh's product weights 1*1/2, 1*1/3, 1/2*1/3: (1/2 + 1/3 - 1/6) / 1 = 2/3.
    assert lc.weighted_tau([3, 2, 1], [3, 1, 2], variant="shieh") == pytest.approx(
        2 / 3, rel=1e-14
    )
    # reversed orders: -1; identical: 1
    assert lc.weighted_tau([0.9, 0.7, 0.3], [0.3, 0.7, 0.9]) == pytest.approx(-1.0)
    assert lc.weighted_tau([0.9, 0.7, 0.3], [0.9, 0.7, 0.3]) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
def test_weighted_tau_equals_scipy_and_slow_reference(seed):
    """Oracle: scipy.stats.weightedtau with the explicit hyperbolic weigher (and
    its default, which is the same) and the slow double loop, on vectors with
    many ties."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(2, 10))
        levels = int(rng.integers(2, 6))
        x = rng.integers(0, levels, n).astype(float)
        y = rng.integers(0, levels, n).astype(float)
        if rng.random() < 0.5:
            x = x + rng.random(n)  # some without ties
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got_v = lc.weighted_tau(x, y)
            got_s = lc.weighted_tau(x, y, variant="shieh")
        sp_v = stats.weightedtau(x, y, rank=True, weigher=HYP, additive=True).statistic
        sp_default = stats.weightedtau(x, y).statistic
        sp_s = stats.weightedtau(x, y, rank=None, weigher=HYP, additive=False).statistic
        for got, want in ((got_v, sp_v), (got_v, sp_default), (got_s, sp_s),
                          (got_v, ref_wtau(x, y)), (got_s, ref_wtau(x, y, "shieh"))):  # fmt: skip
            if math.isnan(want):
                assert math.isnan(got)
            else:
                assert got == pytest.approx(want, rel=1e-11, abs=1e-12)


def test_weighted_tau_shieh_definition_on_permutations():
    """Oracle: Shieh's (1998) formula with product weights over the positions of
    the reference ranking, for rankings without ties."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(2, 9))
        x = rng.permutation(n).astype(float)  # reference scores: higher = better
        y = rng.permutation(n).astype(float)
        order = np.argsort(-x)  # reference ranking, top first
        # R_a: y-rank of the element at reference position a (0 = highest y);
        # -y orders the elements as their y-ranks do
        R = [-y[i] for i in order]
        want = ref_shieh(R)
        assert lc.weighted_tau(x, y, variant="shieh") == pytest.approx(want, rel=1e-12)


def test_weighted_tau_constant_weigher_is_kendall_tau_b():
    """Oracle: scipy.stats.kendalltau (tau-b): equal weights make the weighted
    tau the plain tau-b, with ties."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        x = rng.integers(0, 4, 9).astype(float)
        y = rng.integers(0, 4, 9).astype(float)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        want = stats.kendalltau(x, y).statistic
        assert lc.weighted_tau(x, y, weigher=lambda r: 1.0) == pytest.approx(
            want, rel=1e-12
        )


def test_weighted_tau_nan_and_degenerate():
    # NaN pairs are dropped (scipy would rank NaN lowest instead)
    x = [0.9, np.nan, 0.5, 0.1]
    y = [0.8, 0.1, np.nan, 0.2]
    want = stats.weightedtau([0.9, 0.1], [0.8, 0.2], weigher=HYP).statistic
    assert lc.weighted_tau(x, y) == pytest.approx(want)
    with pytest.warns(ConstantInputWarning):
        assert math.isnan(lc.weighted_tau([1, 1, 1], [1, 2, 3]))
    with pytest.warns(TooFewPairsWarning):
        assert math.isnan(lc.weighted_tau([1, np.nan], [1, 2]))
    with pytest.raises(ParameterError, match="variant='kendall'.*vigna.*shieh"):
        lc.weighted_tau([1, 2], [1, 2], variant="kendall")
    with pytest.raises(ParameterError, match="finite positive"):
        lc.weighted_tau([1, 2, 3], [1, 2, 3], weigher=lambda r: r)
    with pytest.raises(ParameterError, match="1-D of the same length"):
        lc.weighted_tau([1, 2, 3], [1, 2])


# --------------------------------------------------------------------------
# kernels: numba vs NumPy twin vs slow loops


def _kernel_batch(seed, B=5, C=4, K=6):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 4, (B, C, K)).astype(float) / 4
    A[rng.random((B, C, K)) < 0.15] = np.nan
    A[0, 1, :] = 0.5  # a constant row
    A[1, 2, :] = np.nan  # an empty row
    A[1, 3, 1:] = np.nan  # a row with one defined entry
    return A


@pytest.mark.parametrize(
    "symmetric,additive", [(True, True), (False, False), (True, False)]
)
def test_wtau_kernel_twins(symmetric, additive):
    A = _kernel_batch(11)
    B, C, K = A.shape
    I, J = (a.astype(np.int64) for a in np.nonzero(np.ones((C, C), bool)))
    w = np.array([HYP(r) for r in range(K)])
    fast = _wtau.weighted_tau_pairs(A, I, J, w, symmetric, additive)
    slow_np = _wtau.weighted_tau_pairs_numpy(A, I, J, w, symmetric, additive)
    ref = np.empty_like(fast)
    for b in range(B):
        for p in range(I.size):
            x, y = list(A[b, I[p]]), list(A[b, J[p]])
            ok = [not (math.isnan(u) or math.isnan(v)) for u, v in zip(x, y)]
            xs = [u for u, o in zip(x, ok) if o]
            ys = [v for v, o in zip(y, ok) if o]
            t = ref_wtau_half(xs, ys, HYP, additive)
            if symmetric:
                t = (t + ref_wtau_half(ys, xs, HYP, additive)) / 2
            ref[b, p] = t
    np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-14, equal_nan=True)
    np.testing.assert_allclose(slow_np, ref, rtol=1e-12, atol=1e-14, equal_nan=True)
    assert np.isnan(ref).any() and np.isfinite(ref).any()


def test_label_sums_twins():
    rng = np.random.default_rng(5)
    nb, F, C, B = 13, 4, 3, 6
    values = rng.random((nb, F))
    labels = np.stack(
        [rng.permutation(np.repeat(np.arange(C), [5, 1, 7])) for _ in range(B)]
    )
    ref = np.zeros((B, C, F))
    for b in range(B):
        for j in range(nb):
            for f in range(F):
                ref[b, labels[b, j], f] += values[j, f]
    np.testing.assert_allclose(_wtau.label_sums(values, labels, C), ref, rtol=1e-13)
    np.testing.assert_allclose(
        _wtau.label_sums_numpy(values, labels, C), ref, rtol=1e-13
    )


# --------------------------------------------------------------------------
# pairs


def test_perturbation_pairs_hand_case():
    orig = {
        "m": np.array([[3.0, 2.0], [5.0, 1.0]]),
        "wer": np.array([[0.1, 0.2], [0.3, np.nan]]),
    }
    pert = {
        "m": np.array([[1.0, 2.0], [4.0, 2.0]]),
        "wer": np.array([[0.3, 0.2], [0.1, 0.5]]),
    }
    p = lc.local_pairs(
        orig, pert, context=[["a", None], ["b", "b"]], lower_is_better="wer"
    )
    # cell (0, 1) has no label: left out and counted
    assert p.n_unknown_context == 1 and p.n_pairs == 3
    assert p.contexts == ("a", "b")
    # m: 3>1 correct, 5>4 correct, 1<2 incorrect; wer (lower is better):
    # 0.1<0.3 correct, 0.3>0.1 incorrect, NaN missing
    assert p.outcome.tolist() == [[1, 1, -1], [1, -1, -2]]
    assert p.context.tolist() == [0, 1, 1] and p.input.tolist() == [0, 0, 1]
    assert p.lower_is_better == ("wer",)
    f = p.to_frame()
    assert list(f.columns) == [
        "metric",
        "context",
        "input",
        "system",
        "other_system",
        "outcome",
    ]
    assert f.outcome.tolist() == ["correct", "correct", "incorrect", "correct", "incorrect",
                                  "missing"]  # fmt: skip
    # atol turns the small differences into ties
    q = lc.local_pairs(orig, pert, context=[["a", "a"], ["b", "b"]], atol=1.0)
    assert q.outcome[0].tolist() == [1, 0, 0, 0]


@pytest.mark.parametrize("seed", range(3))
def test_perturbation_pairs_match_reference(seed):
    orig, pert, labels = _random_case(seed)
    lower = ("m1",)
    p = lc.local_pairs(orig, pert, context=labels, lower_is_better=lower, atol=0.5)
    ref = ref_perturbation_pairs(orig, pert, labels, lower, 0.5)
    got = [
        (p.contexts[p.context[i]], int(p.input[i]), int(p.system[i]),
         {m: OUTCOME_NAMES[int(p.outcome[k, i])] for k, m in enumerate(p.metrics)})
        for i in range(p.n_pairs)
    ]  # fmt: skip
    assert got == ref


@pytest.mark.parametrize("pair_context", ["better", "worse", "within"])
def test_human_pairs_match_reference(pair_context):
    rng = np.random.default_rng(4)
    N, M = 4, 5
    H = rng.integers(1, 4, (N, M)).astype(float)
    H[1, 2] = np.nan
    S = {"m0": rng.random((N, M)), "ter": rng.integers(0, 3, (N, M)).astype(float)}
    S["m0"][0, 4] = np.nan
    labels = np.array([["q1"] * M, ["q1"] * M, ["q2"] * M, [None] * M], dtype=object)
    data = {"h": H, **S}
    p = lc.local_pairs(data, human="h", context=labels, pair_context=pair_context,
                       lower_is_better=["ter"], human_atol=0.0)  # fmt: skip
    ref = ref_human_pairs(H, S, labels, pair_context, lower=("ter",))
    got = sorted(
        (p.contexts[p.context[i]], int(p.input[i]), int(p.system[i]), int(p.other[i]),
         tuple(OUTCOME_NAMES[int(p.outcome[k, i])] for k in range(2)))
        for i in range(p.n_pairs)
    )  # fmt: skip
    want = sorted((r[0], r[1], r[2], r[3], (r[4]["m0"], r[4]["ter"])) for r in ref)
    assert got == want
    # human ties: pairs on an input with equal human scores, counted
    n_ties = sum(
        1 for j in range(M) for a in range(N) for b in range(a + 1, N)
        if not (np.isnan(H[a, j]) or np.isnan(H[b, j])) and H[a, j] == H[b, j]
    )  # fmt: skip
    assert p.n_human_ties == n_ties > 0
    if pair_context == "within":
        assert p.n_cross_context > 0


def test_human_pairs_system_context_needs_better_or_worse():
    ds = Dataset.from_arrays(
        {
            "h": np.array([[1.0, 2.0], [2.0, 1.0]]),
            "m": np.array([[0.1, 0.9], [0.8, 0.2]]),
        },
        human="h",
    )
    p = lc.local_pairs(ds, human="h", context="system")
    # input 0: s1 (h=2) better, m 0.8 > 0.1 correct, context s1; input 1: s0 better, correct
    assert p.contexts == ("s0", "s1") and p.n_pairs == 2
    assert sorted(zip(p.context.tolist(), p.outcome[0].tolist())) == [(0, 1), (1, 1)]
    with pytest.raises(DataError, match="pair_context='better' or 'worse'"):
        lc.local_pairs(ds, human="h", context="system", pair_context="within")


def test_pairs_from_datasets_with_contexts_table():
    df = pd.DataFrame(
        {
            "system": ["A", "A", "B", "B"],
            "input": ["u1", "u2", "u1", "u2"],
            "speaker": ["s7", "s9", "s7", "s9"],
            "wer": [0.1, 0.2, 0.3, 0.4],
        }
    )
    orig = Dataset.from_frame(df, human=[], contexts=["speaker"])
    pert = Dataset.from_frame(df.assign(wer=[0.2, 0.1, 0.5, 0.4]), human=[])
    p = lc.local_pairs(orig, pert, context="speaker", lower_is_better="wer")
    assert p.category == "speaker" and p.contexts == ("s7", "s9")
    # lower is better: 0.1 < 0.2 correct, 0.2 > 0.1 incorrect, 0.3 < 0.5 correct, tie
    assert p.outcome[0].tolist() == [1, -1, 1, 0]
    assert p.systems == ("A", "B") and p.inputs == ("u1", "u2")


def test_pairs_errors():
    o = {"m": np.ones((2, 2))}
    with pytest.raises(ParameterError, match="perturbed= .* or human="):
        lc.local_pairs(o, context=[["a", "a"], ["b", "b"]])
    with pytest.raises(ParameterError, match="not both"):
        lc.local_pairs(o, o, human="h", context=[["a", "a"], ["b", "b"]])
    with pytest.raises(ParameterError, match="needs original to be a Dataset"):
        lc.local_pairs(o, o, context="speaker")
    with pytest.raises(DataError, match="shape"):
        lc.local_pairs(o, o, context=[["a", "b"]])
    with pytest.raises(DataError, match="lower_is_better names 'wer'"):
        lc.local_pairs(o, o, context=[["a", "a"], ["b", "b"]], lower_is_better="wer")
    with pytest.raises(ParameterError, match="pair_context applies to human-ordered"):
        lc.local_pairs(o, o, context=[["a", "a"], ["b", "b"]], pair_context="within")
    ds = Dataset.from_arrays({"m": np.ones((2, 2))}, human=[])
    with pytest.raises(
        DataError, match="context='speaker' is not a context.*system, input"
    ):
        lc.local_pairs(ds, {"m": np.ones((2, 2))}, context="speaker")
    with pytest.raises(
        DataError, match="human='m' is not a human score column.*metric column"
    ):
        lc.local_pairs(ds, human="m", context="system")
    with pytest.raises(DataError, match="no usable pair"):
        lc.local_pairs(
            o, {"m": np.full((2, 2), np.nan)}, context=[["a", "a"], ["b", "b"]]
        )
    with pytest.raises(DataError, match="perturbed has metric.*'x'"):
        lc.local_pairs(o, {"x": np.ones((2, 2))}, context=[["a", "a"], ["b", "b"]])
    with pytest.raises(ParameterError, match="takes the pairs built by"):
        lc.local_accuracy(o)
    with pytest.raises(DataError, match="no usable pair.*4 of them without a label"):
        lc.local_pairs(o, o, context=[[None, None], [None, None]])
    with pytest.raises(
        DataError, match="no human-ordered pair.*2 had no context label"
    ):
        lc.local_pairs({"h": np.array([[1.0, 2.0], [2.0, 1.0]]), "m": np.ones((2, 2))},
                       human="h", context=[[None, None], [None, None]])  # fmt: skip


# --------------------------------------------------------------------------
# local accuracy


def test_local_accuracy_hand_case():
    # context a: input 0 has pairs (3 vs 1: correct) and (3 vs 4: incorrect) -> 1/2;
    # input 1 has (2 vs 2: tie) and (2 vs 1: correct) -> 1/2.  Eq. 2: 1/2.
    # context b: input 2: (1 vs 0) twice -> 1.
    orig = {"m": np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]])}
    pert = {"m": np.array([[1.0, 2.0, 0.0], [4.0, 1.0, 0.0]])}
    ctx = [["a", "a", "b"], ["a", "a", "b"]]
    p = lc.local_pairs(orig, pert, context=ctx)
    acc = lc.local_accuracy(p)
    assert acc.statistic.tolist() == [[0.5, 1.0]]
    assert acc.n.tolist() == [[4, 2]] and acc.n_ties.tolist() == [[1, 0]]
    # ties excluded: input 0 -> 1/2, input 1 -> 1/1; Eq. 2: 3/4
    assert lc.local_accuracy(p, ties="exclude").statistic.tolist() == [[0.75, 1.0]]
    # pooled over pairs: a 2/4, with ties excluded 2/3
    assert lc.local_accuracy(p, average="micro").statistic.tolist() == [[0.5, 1.0]]
    assert lc.local_accuracy(p, average="micro", ties="exclude").statistic[
        0, 0
    ] == pytest.approx(2 / 3)
    # overall: inputs 0, 1, 2 -> (1/2 + 1/2 + 1) / 3
    assert acc.overall[0] == pytest.approx(2 / 3)
    inp = acc.inputs_frame()
    assert inp.accuracy.tolist() == [0.5, 0.5, 1.0] and inp.n.tolist() == [2, 2, 2]
    assert inp.input.tolist() == ["i0", "i1", "i2"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("average", ["macro", "micro"])
@pytest.mark.parametrize("ties", ["incorrect", "exclude"])
def test_local_accuracy_matches_reference(seed, average, ties):
    orig, pert, labels = _random_case(seed, N=5, M=7, K=3, n_ctx=4)
    # a context with a single pair, and a metric missing in a whole context
    labels[4, 6] = "solo"
    orig["m2"][labels == "c3"] = np.nan
    p = lc.local_pairs(orig, pert, context=labels)
    ref_pairs = ref_perturbation_pairs(orig, pert, labels)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        acc = lc.local_accuracy(p, average=average, ties=ties)
    n_nan = 0
    for k, m in enumerate(p.metrics):
        for c, ctx in enumerate(p.contexts):
            want = ref_accuracy(ref_pairs, m, ctx, average, ties)
            got = acc.statistic[k, c]
            if math.isnan(want):
                n_nan += 1
                assert math.isnan(got)
            else:
                assert got == pytest.approx(want, rel=1e-12)
            oc = [r[-1][m] for r in ref_pairs if r[0] == ctx]
            assert acc.n[k, c] == sum(o != "missing" for o in oc)
            assert acc.n_ties[k, c] == oc.count("tie")
            assert acc.n_correct[k, c] == oc.count("correct")
            assert acc.n_incorrect[k, c] == oc.count("incorrect")
            assert acc.n_missing[k, c] == oc.count("missing")
    assert n_nan > 0 and acc.n_undefined == n_nan
    assert any(issubclass(w.category, UndefinedStatisticWarning) for w in rec)
    # overall = the reference over one context holding every pair
    allp = [("all",) + r[1:] for r in ref_pairs]
    for k, m in enumerate(p.metrics):
        assert acc.overall[k] == pytest.approx(
            ref_accuracy(allp, m, "all", average, ties)
        )


def test_local_accuracy_intervals_equal_scipy_binomtest():
    """Oracle: scipy.stats.binomtest(k, n).proportion_ci (Wilson, exact)."""
    rng = np.random.default_rng(2)
    orig = {"m": np.ones((3, 40))}
    pert = {"m": np.where(rng.random((3, 40)) < 0.7, 0.0, 2.0)}
    ctx = np.repeat(np.array(["a", "b", "c"], object)[:, None], 40, axis=1)
    p = lc.local_pairs(orig, pert, context=ctx)
    for ci, method in (("wilson", "wilson"), ("clopper-pearson", "exact")):
        acc = lc.local_accuracy(p, ci=ci, confidence_level=0.9)
        for c in range(3):
            k, n = int(acc.n_correct[0, c]), int(acc.n[0, c])
            want = stats.binomtest(k, n).proportion_ci(
                confidence_level=0.9, method=method
            )
            assert acc.ci_low[0, c] == pytest.approx(want.low, rel=1e-9)
            assert acc.ci_high[0, c] == pytest.approx(want.high, rel=1e-9)


def test_local_accuracy_frames_and_signature():
    p = _table1_pairs()
    acc = lc.local_accuracy(p)
    f = acc.to_frame()
    assert list(f.columns) == lc.LocalAccuracy.frame_columns()
    assert len(f) == 9
    # Table 1: A 0.9 0.9 0.3, B 0.7 0.7 0.7, C 0.3 0.3 0.9
    np.testing.assert_allclose(acc.matrix().to_numpy(), [[0.9, 0.9, 0.3], [0.7, 0.7, 0.7],
                                                          [0.3, 0.3, 0.9]])  # fmt: skip
    assert acc.rank[:, 0].tolist() == [1.0, 2.0, 3.0] and acc.rank[:, 2].tolist() == [
        3,
        2,
        1,
    ]
    # global column of Table 1: 0.7, 0.7, 0.5
    np.testing.assert_allclose(acc.overall, [0.7, 0.7, 0.5])
    assert acc.overall_frame().context.tolist() == ["(all)"] * 3
    d = acc.to_dict()
    assert d["contexts"] == ["X", "Y", "Z"] and len(d["rows"]) == 9
    assert acc.signature.startswith(
        "avg:macro|test:local-accuracy|ci:wilson:0.95|pairs:"
    )
    assert "context:context" in acc.signature and "ties:incorrect" in acc.signature


# --------------------------------------------------------------------------
# H1: chi-square


def test_chi2_hand_case_and_scipy():
    # 2 x 2 table [[18, 2], [6, 14]]: expected 12/8 per row, X^2 = 2 * 36 / 4.8 = 15
    ctx = np.repeat(["a", "b"], 20)[None, :]
    orig = {"m": np.ones((1, 40))}
    pert = {"m": np.r_[np.zeros(18), 2, 2, np.zeros(6), 2 * np.ones(14)][None, :]}
    r = lc.context_chi2(lc.local_pairs(orig, pert, context=ctx))[0]
    assert r.statistic == pytest.approx(15.0, rel=1e-12) and r.df == 1
    sp = stats.chi2_contingency([[18, 2], [6, 14]], correction=False)
    assert r.pvalue == pytest.approx(sp.pvalue, rel=1e-10)
    np.testing.assert_allclose(r.expected, sp.expected_freq)
    assert r.cramers_v == pytest.approx(
        stats.contingency.association([[18, 2], [6, 14]], method="cramer")
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", ["incorrect", "exclude"])
def test_chi2_matches_scipy_random(seed, ties):
    rng = np.random.default_rng(seed)
    N, M = 6, 60
    orig = {f"m{k}": rng.integers(0, 3, (N, M)).astype(float) for k in range(3)}
    pert = {m: rng.integers(0, 3, (N, M)).astype(float) for m in orig}
    pert["m0"][0, :30] = np.nan  # fewer pairs for one metric
    labels = np.repeat(
        np.array([f"s{i}" for i in range(N)], object)[:, None], M, axis=1
    )
    p = lc.local_pairs(orig, pert, context=labels)
    res = lc.context_chi2(p, ties=ties, test="asymptotic", correction="holm")
    ref_pairs = ref_perturbation_pairs(orig, pert, labels)
    for r in res:
        table = []
        for ctx in p.contexts:
            oc = [q[-1][r.metric] for q in ref_pairs if q[0] == ctx]
            if ties == "exclude":
                oc = [o for o in oc if o != "tie"]
            oc = [o for o in oc if o != "missing"]
            if oc:
                table.append([oc.count("correct"), len(oc) - oc.count("correct")])
        sp = stats.chi2_contingency(table, correction=False)
        assert r.table.tolist() == table
        assert r.statistic == pytest.approx(sp.statistic, rel=1e-10)
        assert r.statistic == pytest.approx(ref_chi2(table), rel=1e-10)
        assert r.df == sp.dof and r.pvalue == pytest.approx(sp.pvalue, rel=1e-9)
    want = adjust_pvalues([r.pvalue for r in res], method="holm")
    np.testing.assert_allclose([r.pvalue_adjusted for r in res], want)
    f = res.to_frame()
    assert list(f.columns) == lc.Chi2Test.frame_columns() and len(f) == 3
    assert len(res.tables_frame()) == 3 * N


def test_chi2_permutation_matches_exact_enumeration():
    """Oracle: the exact permutation distribution of X^2 (all tables with the
    observed margins, multivariate hypergeometric probabilities)."""
    n_c = [4, 5, 3]
    correct = [4, 1, 1]  # observed table [[4,0],[1,4],[1,2]]
    vals = []
    for n, k in zip(n_c, correct):
        vals += [0.0] * k + [2.0] * (n - k)
    ctx = np.repeat(["a", "b", "c"], n_c)[None, :]
    p = lc.local_pairs(
        {"m": np.ones((1, 12))}, {"m": np.array(vals)[None]}, context=ctx
    )
    B = 4000
    with pytest.warns(SmallExpectedCountWarning, match="permutation test is used"):
        r = lc.context_chi2(p, n_resamples=B, rng=12)[0]
    assert r.test == "permutation" and r.n_resamples == B
    pfun, tables = ref_exact_perm_pvalue(n_c, sum(correct))
    exact = pfun(ref_chi2([[k, n - k] for k, n in zip(correct, n_c)]))
    assert 0.005 < exact < 0.5
    se = math.sqrt(exact * (1 - exact) / B)
    assert abs(r.pvalue - exact) < 4.5 * se + 1 / B
    # the null distribution's mean equals the exact mean of X^2 under permutation
    mean_exact = sum(x * pr for x, pr in tables)
    sd_exact = math.sqrt(sum((x - mean_exact) ** 2 * pr for x, pr in tables))
    assert abs(r.null_distribution.mean() - mean_exact) < 4.5 * sd_exact / math.sqrt(B)
    # p-values follow (count + 1) / (n + 1) over the kept null distribution
    count = int((r.null_distribution >= r.statistic - 1e-12 * r.statistic).sum())
    assert r.pvalue == (count + 1) / (B + 1)
    # reproducible from the seed
    with pytest.warns(SmallExpectedCountWarning):
        again = lc.context_chi2(p, n_resamples=B, rng=12)[0]
    assert again.pvalue == r.pvalue
    assert "seed:12" in r.signature and "pvalue:permutation:4000" in r.signature


def test_chi2_permutation_equals_label_shuffling_in_distribution():
    """Slow twin: literally permuting the context labels over the pairs (numpy
    permutations) gives the same p-value within Monte Carlo error as the
    multivariate hypergeometric draws."""
    rng = np.random.default_rng(0)
    n_c = [6, 6, 6]
    outcome = np.r_[
        np.ones(5), np.zeros(1), np.ones(2), np.zeros(4), np.ones(3), np.zeros(3)
    ]
    labels = np.repeat([0, 1, 2], n_c)

    def x2(lab):
        return ref_chi2([[int(outcome[lab == c].sum()), int((lab == c).sum() - outcome[lab == c].sum())]
                         for c in range(3)])  # fmt: skip

    obs = x2(labels)
    B = 3000
    slow = np.array([x2(rng.permutation(labels)) for _ in range(B)])
    p_slow = ((slow >= obs - 1e-9).sum() + 1) / (B + 1)
    ctx = np.array(["a", "b", "c"])[labels][None, :]
    pert = np.where(outcome == 1, 0.0, 2.0)[None, :]
    r = lc.context_chi2(lc.local_pairs({"m": np.ones((1, 18))}, {"m": pert}, context=ctx),
                        test="permutation", n_resamples=B, rng=3)[0]  # fmt: skip
    assert r.statistic == pytest.approx(obs)
    se = math.sqrt(2 * p_slow * (1 - p_slow) / B)
    assert abs(r.pvalue - p_slow) < 4.5 * se


def test_chi2_degenerate_and_auto():
    # every pair correct in both contexts: no variation in the outcome
    ctx = np.repeat(["a", "b"], 10)[None, :]
    orig = {"m": np.ones((1, 20)), "n": np.ones((1, 20))}
    pert = {"m": np.zeros((1, 20)), "n": np.r_[np.zeros(10), 2 * np.ones(10)][None]}
    with pytest.warns(UndefinedStatisticWarning, match="'m'"):
        res = lc.context_chi2(
            lc.local_pairs(orig, pert, context=ctx), test="asymptotic"
        )
    m, n = res.get("m"), res.get("n")
    assert (
        math.isnan(m.statistic)
        and math.isnan(m.pvalue)
        and math.isnan(m.pvalue_adjusted)
    )
    # n: [[10, 0], [0, 10]]: X^2 = 20 (= n for a perfectly separated 2x2 table)
    assert n.statistic == pytest.approx(20.0) and n.cramers_v == pytest.approx(1.0)
    # metric m with pairs in context b only (n has pairs in both)
    pert2 = {
        "m": np.r_[np.full(10, np.nan), np.zeros(5), 2 * np.ones(5)][None],
        "n": pert["n"],
    }
    with pytest.warns(UndefinedStatisticWarning, match="'m'"):
        r = lc.context_chi2(lc.local_pairs(orig, pert2, context=ctx)).get("m")
    assert r.n_contexts == 1 and r.n_empty_contexts == 1 and math.isnan(r.statistic)
    assert r.table.tolist() == [[5, 5]] and r.contexts == ("b",)
    with pytest.raises(DataError, match="at least two"):
        lc.context_chi2(lc.local_pairs(orig, pert2, context=np.full((1, 20), "a")))
    with pytest.raises(ParameterError, match="test='exact'; choose one of auto"):
        lc.context_chi2(lc.local_pairs(orig, pert, context=ctx), test="exact")


# --------------------------------------------------------------------------
# H2: weighted tau between contexts


def test_context_tau_table1_hand_case():
    # Table 1: X and Y rank A > B > C, Z ranks C > B > A: tau(X, Y) = 1,
    # tau(X, Z) = tau(Y, Z) = -1 (complete reversal); average linkage on
    # 1 - tau joins X and Y at distance 0 and Z at distance 2 > 0.5.
    res = lc.context_tau(_table1_pairs(), n_resamples=0)
    np.testing.assert_allclose(
        res.tau, [[1, 1, -1], [1, 1, -1], [-1, -1, 1]], atol=1e-12
    )
    assert res.clusters.tolist() == [1, 1, 2] and res.n_clusters == 2
    assert res.statistic == pytest.approx(-1 / 3)
    assert np.isnan(res.pvalues).all() and math.isnan(res.pvalue)
    assert res.to_frame().columns.tolist()[:4] == [
        "context_a",
        "context_b",
        "tau",
        "n_metrics",
    ]
    assert len(res.to_frame()) == 3
    assert res.clusters_frame().cluster.tolist() == [1, 1, 2]
    # one cluster when the threshold allows tau = -1 to merge
    assert (
        lc.context_tau(_table1_pairs(), n_resamples=0, cluster_threshold=-1).n_clusters
        == 1
    )
    assert lc.context_tau(_table1_pairs(), n_resamples=0, n_clusters=3).n_clusters == 3


def _tau_case(seed, levels=4):
    rng = np.random.default_rng(seed)
    N, M, K = 3, 8, 4
    orig = {f"m{k}": rng.integers(0, levels, (N, M)).astype(float) for k in range(K)}
    pert = {m: rng.integers(0, levels, (N, M)).astype(float) for m in orig}
    orig["m3"][rng.random((N, M)) < 0.2] = np.nan
    labels = rng.choice(["A", "B", "C"], size=(N, M)).astype(object)
    return orig, pert, labels


@pytest.mark.parametrize("variant", ["vigna", "shieh"])
@pytest.mark.parametrize("average", ["macro", "micro"])
def test_context_tau_observed_equals_scipy(variant, average):
    """Oracle: scipy.stats.weightedtau between the rows of the local accuracies
    (reference Eq. 2), with the explicit weigher."""
    orig, pert, labels = _tau_case(1)
    p = lc.local_pairs(orig, pert, context=labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = lc.context_tau(p, average=average, variant=variant, n_resamples=0)
    ref_pairs = ref_perturbation_pairs(orig, pert, labels)
    acc = {c: [ref_accuracy(ref_pairs, m, c, average, "incorrect") for m in p.metrics]
           for c in p.contexts}  # fmt: skip
    kw = (
        {"rank": True, "additive": True}
        if variant == "vigna"
        else {"rank": None, "additive": False}
    )
    for a, ca in enumerate(p.contexts):
        np.testing.assert_allclose(res.accuracy[a], acc[ca], rtol=1e-12)
        for b, cb in enumerate(p.contexts):
            ok = [
                not (math.isnan(u) or math.isnan(v)) for u, v in zip(acc[ca], acc[cb])
            ]
            x = [u for u, o in zip(acc[ca], ok) if o]
            y = [v for v, o in zip(acc[cb], ok) if o]
            want = stats.weightedtau(x, y, weigher=HYP, **kw).statistic
            if math.isnan(want):
                assert math.isnan(res.tau[a, b])
            else:
                assert res.tau[a, b] == pytest.approx(want, rel=1e-11, abs=1e-13)
            assert res.n_metrics[a, b] == sum(ok)
    if variant == "vigna":
        np.testing.assert_allclose(res.tau, res.tau.T, equal_nan=True)


def _ref_block_accuracies(
    ref_pairs, contexts, metrics, block_labels, blocks, average, ties
):
    """Per-context accuracies when block b (the pairs of one (context, input))
    is assigned to context block_labels[b]."""
    where = {blk: i for i, blk in enumerate(blocks)}
    # a block is one input of a context (Q_x); after relabelling two blocks of
    # the same input can share a context, and Eq. 2 averages over the blocks,
    # so the pairs are keyed by block instead of input
    per = []
    for r in ref_pairs:
        b = where[(contexts.index(r[0]), r[1])]
        per.append((contexts[block_labels[b]], b) + r[2:])
    return {
        c: [ref_accuracy(per, m, c, average, ties) for m in metrics] for c in contexts
    }


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_context_tau_permutation_null_matches_slow_reference(average):
    """Oracle: the documented permutation streams re-created from primitives
    (chunk 0 of stream ("local-tau", "0"), one ``permutation`` of the blocks'
    context labels per resample), with per-context accuracies recomputed in
    plain Python and taus from scipy.stats.weightedtau."""
    orig, pert, labels = _tau_case(2)
    p = lc.local_pairs(orig, pert, context=labels)
    B, seed = 60, 9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = lc.context_tau(p, average=average, n_resamples=B, rng=seed)
    ref_pairs = ref_perturbation_pairs(orig, pert, labels)
    contexts = list(p.contexts)
    blocks = sorted({(contexts.index(r[0]), r[1]) for r in ref_pairs})
    lab0 = np.array([c for c, _ in blocks])
    gen = _stream(seed, "local-tau", "0")
    null = np.empty((B, 3))
    for b in range(B):
        lab = gen.permutation(lab0)
        acc = _ref_block_accuracies(ref_pairs, contexts, p.metrics, lab, blocks, average,
                                    "incorrect")  # fmt: skip
        for q, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
            x, y = acc[contexts[i]], acc[contexts[j]]
            ok = [not (math.isnan(u) or math.isnan(v)) for u, v in zip(x, y)]
            xs = [u for u, o in zip(x, ok) if o]
            ys = [v for v, o in zip(y, ok) if o]
            null[b, q] = (
                stats.weightedtau(xs, ys, weigher=HYP).statistic
                if len(xs) > 1
                else np.nan
            )
    np.testing.assert_allclose(
        res.null_distribution, null, rtol=1e-11, atol=1e-13, equal_nan=True
    )
    # p-values: (count + 1) / (n + 1) over the finite permuted taus <= observed
    for q, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        nul = null[:, q][np.isfinite(null[:, q])]
        obs = res.tau[i, j]
        want = (np.sum(nul <= obs + 1e-12 * max(1, abs(obs))) + 1) / (nul.size + 1)
        assert (
            res.pvalues[i, j] == pytest.approx(want)
            and res.pvalues[j, i] == res.pvalues[i, j]
        )
    ms = np.array([np.nanmean(r) if np.isfinite(r).any() else np.nan for r in null])
    np.testing.assert_allclose(res.null_statistic, ms, rtol=1e-11, equal_nan=True)
    want = adjust_pvalues(res.pvalues[[0, 0, 1], [1, 2, 2]], method="holm")
    np.testing.assert_allclose(res.pvalues_adjusted[[0, 0, 1], [1, 2, 2]], want)


def test_context_tau_detects_ordering_change_and_is_reproducible():
    # 5 metrics, 60 single-pair inputs per context with exact accuracies:
    # X and Y rank m0 > m1 > ... > m4, Z reverses the order (tau = -1).
    # Under the permutation null every context sees the pooled accuracies
    # (0.82, 0.78, 0.75, 0.72, 0.68): the same ordering up to noise, so
    # taus near -1 are rare and tau(X, Y) = 1 is typical.
    levels = [0.95, 0.85, 0.75, 0.65, 0.55]
    acc = {f"m{k}": [a, a, levels[4 - k]] for k, a in enumerate(levels)}
    orig = {m: np.ones((1, 180)) for m in acc}
    pert = {m: np.concatenate([np.where(np.arange(60) < round(60 * a), 0.0, 2.0) for a in v])[None]
            for m, v in acc.items()}  # fmt: skip
    ctx = np.repeat(["X", "Y", "Z"], 60)[None, :]
    p = lc.local_pairs(orig, pert, context=ctx)
    res = lc.context_tau(p, n_resamples=299, rng=4)
    assert res.pvalues[0, 2] < 0.01 and res.pvalues[1, 2] < 0.01
    assert res.pvalue < 0.05
    assert res.pvalues[0, 1] > 0.05
    assert (res.pvalues[np.isfinite(res.pvalues)] >= 1 / 300).all()
    assert res.clusters[0] == res.clusters[1] != res.clusters[2]
    # same numbers with two workers (two permutation chunks of 256 and 43)
    res2 = lc.context_tau(p, n_resamples=299, rng=4, n_jobs=2)
    np.testing.assert_array_equal(res.null_distribution, res2.null_distribution)
    np.testing.assert_array_equal(res.pvalues, res2.pvalues)
    assert res.signature == res2.signature and "seed:4" in res.signature
    assert "method:wtau:vigna:hyperbolic" in res.signature


def test_context_tau_clusters_equal_scipy_average_linkage():
    """Oracle: scipy.cluster.hierarchy.linkage(1 - tau, "average") cut at 1 - threshold."""
    rng = np.random.default_rng(6)
    K, C, n = 5, 6, 12
    orig = {f"m{k}": np.ones((1, C * n)) for k in range(K)}
    pert = {m: np.where(rng.random((1, C * n)) < rng.random(), 0.0, 2.0) for m in orig}
    ctx = np.repeat([f"c{i}" for i in range(C)], n)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = lc.context_tau(lc.local_pairs(orig, pert, context=ctx), n_resamples=0,
                             cluster_threshold=0.2)  # fmt: skip
    T = np.where(np.isfinite(res.tau), res.tau, 0.0)
    D = 1 - T
    np.fill_diagonal(D, 0)
    Z = hierarchy.linkage(D[np.triu_indices(C, 1)], method="average")
    raw = hierarchy.fcluster(Z, t=0.8, criterion="distance")
    # same partition (labels renumbered by first appearance)
    same = lambda a: [[a[i] == a[j] for j in range(C)] for i in range(C)]
    assert same(res.clusters) == same(raw)
    np.testing.assert_array_equal(res.order, hierarchy.leaves_list(Z))
    first = []
    for c in res.clusters:
        if c not in first:
            first.append(c)
    assert first == sorted(first)


def test_context_tau_degenerate_contexts():
    # context Q: every metric detects every pair (accuracies all 1): constant
    orig = {m: np.ones((1, 30)) for m in "ABC"}
    pert = {
        "A": np.r_[np.zeros(10), np.zeros(9), 2, np.zeros(5), 2 * np.ones(5)][None],
        "B": np.r_[np.zeros(10), np.zeros(7), 2, 2, 2, np.zeros(7), 2, 2, 2][None],
        "C": np.r_[np.zeros(10), np.zeros(5), 2 * np.ones(5), np.zeros(9), 2][None],
    }
    ctx = np.repeat(["Q", "R", "S"], 10)[None, :]
    p = lc.local_pairs(orig, pert, context=ctx)
    with pytest.warns(ConstantInputWarning, match="all equal in context.*Q"):
        res = lc.context_tau(p, n_resamples=20, rng=0)
    assert np.isnan(res.tau[0]).all() and res.n_undefined == 2
    assert np.isnan(res.pvalues[0, 1]) and np.isfinite(res.tau[1, 2])
    # R ranks A (0.9) > B (0.7) > C (0.5); S ranks C (0.9) > B (0.7) > A (0.5): -1
    assert res.tau[1, 2] == pytest.approx(-1.0)
    assert res.clusters[0] not in (res.clusters[1], res.clusters[2])
    with pytest.raises(DataError, match="at least 2 metrics"):
        lc.context_tau(lc.local_pairs({"A": orig["A"]}, {"A": pert["A"]}, context=ctx))
    with pytest.raises(ParameterError, match="n_resamples=-1"):
        lc.context_tau(p, n_resamples=-1)
    with pytest.raises(ParameterError, match="cluster_threshold"):
        lc.context_tau(p, cluster_threshold=2)


def test_context_tau_metric_missing_in_a_context():
    # metric C has no pair in context Y: the pairs with Y use A and B only
    orig = {m: np.ones((1, 30)) for m in "ABC"}
    pert = {m: np.where(np.random.default_rng(i).random((1, 30)) < 0.3 + 0.2 * i, 0.0, 2.0)
            for i, m in enumerate("ABC")}  # fmt: skip
    pert["C"][0, 10:20] = np.nan
    ctx = np.repeat(["X", "Y", "Z"], 10)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = lc.local_accuracy(lc.local_pairs(orig, pert, context=ctx))
        res = lc.context_tau(lc.local_pairs(orig, pert, context=ctx), n_resamples=0)
    assert np.isnan(acc.statistic[2, 1]) and acc.n_undefined == 1
    assert res.n_metrics[0, 1] == 2 and res.n_metrics[0, 2] == 3
    x, y = acc.statistic[:2, 0], acc.statistic[:2, 1]
    want = stats.weightedtau(x, y, weigher=HYP).statistic
    if math.isnan(want):
        assert math.isnan(res.tau[0, 1])
    else:
        assert res.tau[0, 1] == pytest.approx(want)


# --------------------------------------------------------------------------
# plots


def test_plots():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    p = _table1_pairs()
    acc = lc.local_accuracy(p)
    fig = lc.plot_local_accuracy(acc, groups={"X": "clean", "Y": "other", "Z": "clean"})
    ax = fig.axes[0]
    # contexts sorted by group: X, Z (clean), then Y (other)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["X", "Z", "Y"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.9, 0.3, 0.9])
    assert any(
        line.get_xdata()[0] == 1.5 for line in ax.lines[3:]
    )  # the group separator
    plt.close(fig)
    res = lc.context_tau(p, n_resamples=0)
    fig = lc.plot_context_tau(res)
    np.testing.assert_allclose(
        fig.axes[0].images[0].get_array(), res.matrix("tau", ordered=True).to_numpy()
    )
    plt.close(fig)
    with pytest.raises(DataError, match="groups has no group"):
        lc.plot_local_accuracy(acc, groups={"X": "a"})


def test_equal_accuracies_from_different_float_sums_tie():
    """Regression: Eq. 2 of metric a is (1/10 + 2/10) / 2 = 0.15000000000000002
    in floating point and that of b is (3/10 + 0) / 2 = 0.15; they are equal
    and must tie in the ranking (rank 1.5 each) and in the weighted tau."""

    def pert_for(correct_counts):
        return np.concatenate(
            [np.where(np.arange(10) < k, 0.0, 2.0) for k in correct_counts]
        )

    # context X: inputs x0, x1 (10 pairs each: 10 systems); context Y: inputs y0, y1
    # a: X 1/10 and 2/10, Y 9/10 and 9/10;  b: X 3/10 and 0, Y 5/10 and 5/10;
    # c: X 1/10 and 1/10, Y 1/10 and 1/10
    counts = {"a": [1, 2, 9, 9], "b": [3, 0, 5, 5], "c": [1, 1, 1, 1]}
    orig = {m: np.ones((10, 4)) for m in counts}
    pert = {m: pert_for(v).reshape(4, 10).T for m, v in counts.items()}
    ctx = np.tile(np.array(["X", "X", "Y", "Y"], object), (10, 1))
    p = lc.local_pairs(orig, pert, context=ctx)
    acc = lc.local_accuracy(p)
    assert acc.statistic[0, 0] != acc.statistic[1, 0]  # the floating-point artefact
    assert acc.rank[:, 0].tolist() == [1.5, 1.5, 3.0]
    res = lc.context_tau(p, n_resamples=0)
    # exact accuracies: X (0.15, 0.15, 0.1), Y (0.9, 0.5, 0.1)
    want = stats.weightedtau([0.15, 0.15, 0.1], [0.9, 0.5, 0.1], weigher=HYP).statistic
    assert res.tau[0, 1] == pytest.approx(want, rel=1e-12)
    assert res.accuracy[0, 0] == res.accuracy[0, 1]
    # the naive floats would not tie and give another value
    naive = stats.weightedtau(
        acc.statistic[:, 0], acc.statistic[:, 1], weigher=HYP
    ).statistic
    assert naive != pytest.approx(want)


def test_results_to_dict_are_plain():
    import json

    p = _table1_pairs()
    acc = lc.local_accuracy(p)
    with pytest.warns(SmallExpectedCountWarning):
        chi = lc.context_chi2(p, n_resamples=99, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau = lc.context_tau(p, n_resamples=19, rng=0)
    for d in (acc.to_dict(), chi.to_dict(), tau.to_dict(), tau.to_dict(arrays=True)):
        json.dumps(d)  # only plain types
    assert tau.to_dict()["clusters"] == {"X": 1, "Y": 1, "Z": 2}
    assert tau.to_dict(arrays=True)["null_distribution"].__len__() == 19
    assert repr(p).startswith("LocalPairs(perturbation, category='context', 30 pairs")


def test_pairs_from_perturbed_scores_object_and_category_name():
    """A metaeval.perturb.PerturbedScores-like object (original and perturbed
    datasets plus lower_is_better) is unpacked; category= names array labels."""

    class Scored:  # the attributes local_pairs reads
        def __init__(self, original, perturbed):
            self.original, self.perturbed = original, perturbed
            self.lower_is_better = ("wer",)

    o = Dataset.from_arrays({"h": np.array([[1.0, 5.0]]), "wer": np.array([[0.1, 0.5]])},
                            human="h")  # fmt: skip
    pt = Dataset.from_arrays({"wer": np.array([[0.3, 0.4]])}, human=[])
    bands = np.asarray(pd.cut(o.scores("h").ravel(), [0, 3, 5], labels=["low", "high"]),
                       dtype=object).reshape(1, 2)  # fmt: skip
    p = lc.local_pairs(Scored(o, pt), context=bands, category="quality")
    # wer lower is better: 0.1 < 0.3 correct; 0.5 > 0.4 incorrect
    assert p.outcome.tolist() == [[1, -1]] and p.lower_is_better == ("wer",)
    assert p.category == "quality" and p.contexts == ("low", "high")
    with pytest.raises(ParameterError, match="category= names the context category"):
        lc.local_pairs(Scored(o, pt), context="system", category="quality")


def ref_wilson(p, n, confidence_level):
    """Wilson (1927) score interval, from its formula (bounds 0 and 1 at the ends)."""
    z = stats.norm.ppf(0.5 + confidence_level / 2)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if p == 0 else centre - half), (1.0 if p == 1 else centre + half)


def test_local_accuracy_input_average_interval_uses_effective_sample_size():
    # context u: 5 inputs x 4 systems, correct counts 4, 4, 3, 1, 4:
    # per-input accuracies 1, 1, .75, .25, 1; Eq. 2 = 0.8; sample variance
    # s^2 = sum((a - 0.8)^2) / 4 = (3 * .04 + .0025 + .3025) / 4 = 0.10625;
    # n_eff = 5 * .8 * .2 / .10625 = 7.529..., inside [5 inputs, 20 pairs].
    # context v: 5 inputs with 3 of 4 correct each: s^2 = 0, n_eff = 20 pairs.
    counts = [4, 4, 3, 1, 4, 3, 3, 3, 3, 3]
    pert = np.array([[0.0 if i < k else 2.0 for k in counts] for i in range(4)])
    ctx = np.tile(np.array(["u"] * 5 + ["v"] * 5, object), (4, 1))
    acc = lc.local_accuracy(
        lc.local_pairs({"m": np.ones((4, 10))}, {"m": pert}, context=ctx)
    )
    a = [1, 1, 0.75, 0.25, 1]
    s2 = sum((x - 0.8) ** 2 for x in a) / 4
    assert s2 == pytest.approx(0.10625)
    n_eff = 5 * 0.8 * 0.2 / s2
    lo, hi = ref_wilson(0.8, n_eff, 0.95)
    assert acc.statistic[0, 0] == pytest.approx(0.8)
    assert (acc.ci_low[0, 0], acc.ci_high[0, 0]) == pytest.approx((lo, hi), rel=1e-10)
    lo, hi = ref_wilson(0.75, 20, 0.95)
    assert (acc.ci_low[0, 1], acc.ci_high[0, 1]) == pytest.approx((lo, hi), rel=1e-10)
    # never wider than the conservative interval with n = 5 inputs
    lo5, hi5 = ref_wilson(0.8, 5, 0.95)
    assert lo5 < acc.ci_low[0, 0] and acc.ci_high[0, 0] < hi5


def test_module_imports_no_plotting_library():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(lc))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in top for a in n.names] + [
        n.module or "" for n in top if isinstance(n, ast.ImportFrom)
    ]
    assert not any(x.startswith("matplotlib") for x in names)


# --------------------------------------------------------------------------
# average: the correlations' names (issue 13 item 1)


@pytest.mark.parametrize("old, new", [("input", "macro"), ("pair", "micro")])
def test_earlier_average_names_are_the_same_averages(old, new):
    """``input``/``pair`` (the names before issue 13) give the ``macro``/``micro`` result:
    the same numbers bit for bit, labelled with the canonical name."""
    orig, pert, labels = _random_case(3, N=5, M=7, K=3, n_ctx=3)
    p = lc.local_pairs(orig, pert, context=labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        a, b = lc.local_accuracy(p, average=old), lc.local_accuracy(p, average=new)
    np.testing.assert_array_equal(a.statistic, b.statistic)
    np.testing.assert_array_equal(a.ci_low, b.ci_low)
    np.testing.assert_array_equal(a.overall, b.overall)
    assert a.average == b.average == new and a.signature == b.signature
    assert f"avg:{new}|" in a.signature
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant accuracies in a context: NaN tau, both alike
        ta = lc.context_tau(p, average=old, n_resamples=9, rng=1)
        tb = lc.context_tau(p, average=new, n_resamples=9, rng=1)
    np.testing.assert_array_equal(ta.tau, tb.tau)
    assert ta.average == new and ta.signature == tb.signature
    with pytest.raises(ParameterError, match="average='items'; choose one of macro, micro"):
        lc.local_accuracy(p, average="items")
