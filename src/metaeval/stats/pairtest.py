"""The test of metric A against metric B on the same human scores.

The engine of :func:`metaeval.compare`, :func:`metaeval.compare_all` and
:func:`metaeval.discriminative_power` (the tests are described in
:mod:`metaeval.compare`).  It works on three (N, M) score matrices restricted
to their common cells (:func:`common_cells`) and returns plain numbers
(:class:`PairTest`); the analyses turn them into results with signatures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._vocab import ALTERNATIVES, check_choice
from ..errors import ParameterError
from . import resampling as _rs
from .cellboot import KENDALL_VARIANTS, CellBootstrap
from .coefficients import get_coefficient, kendall_from_stats, pow2_scaled
from .inference import exceeds, percentile_interval, resampling_pvalue, statistic
from .levels import DUP_VARIANTS, _aggregate, _weights, arrange, grouped_values
from .permboth import PAIR_METHODS, PairLayout, human_system_means
from .sequential import sequential_pvalues
from .williams import williams_test

#: ``test``: how metric A is tested against metric B.
TESTS = (
    "perm-both",
    "perm-systems",
    "perm-inputs",
    "perm-both-rowcol",
    "williams",
    "boot-systems",
    "boot-inputs",
    "boot-both",
)
#: The swap scheme of each permutation test (:func:`metaeval.stats.resampling.swap_mask_chunks`).
PERM_SCHEME = {
    "perm-both": "both",
    "perm-systems": "systems",
    "perm-inputs": "inputs",
    "perm-both-rowcol": "both-rowcol",
}
#: The coefficients Williams' test is defined for.
WILLIAMS_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")


@dataclass(frozen=True)
class PairOptions:
    """How to test one pair: the statistic (``level``, ``method``, ``average``)
    and the test (``test``, ``n_resamples``, ``confidence_level`` of the
    bootstrap interval, ``budget`` of one chunk of resamples, ``sequential``:
    Besag-Clifford's h or None)."""

    level: str
    method: str
    test: str
    average: str
    n_resamples: int
    confidence_level: float = 0.95
    budget: int | None = None
    sequential: int | None = None


@dataclass(frozen=True)
class PairTest:
    """The numbers of one test of A against B (``pvalues`` for every alternative)."""

    statistic_a: float
    statistic_b: float
    statistic: float
    pvalues: dict
    ci_low: float
    ci_high: float
    t: float
    n: int
    null_distribution: np.ndarray | None
    n_resamples_nan: int
    stopped_early: bool
    defined_a: np.ndarray
    defined_b: np.ndarray


def check_test(test, method):
    """``test`` if it is a test of :data:`TESTS` that is defined for ``method``."""
    check_choice(test, "test", TESTS)
    if test == "williams" and method not in WILLIAMS_METHODS:
        raise ParameterError(
            f"test='williams' compares correlations; method={method!r} is not one "
            f"(use {', '.join(WILLIAMS_METHODS)}, or a permutation test)"
        )
    return test


def zscore(a):
    """``a`` standardized over its finite cells (centred only when constant); scaled first
    (:func:`pow2_scaled`), so any finite magnitude gives the same z-scores."""
    a = pow2_scaled(a)
    m = np.nanmean(a)
    s = np.nanstd(a)
    return (a - m) / s if s > 0 else a - m


def common_cells(x, y, z):
    """Restrict the three matrices to the cells where all are finite; and their count."""
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    return np.where(ok, x, np.nan), np.where(ok, y, np.nan), np.where(ok, z, np.nan), int(ok.sum())


def pair_generator(ss, a, b):
    """The pair's stream: a function of the seed and the *unordered* pair of
    names, so compare(A, B) and compare(B, A) use the same draws (their null
    distributions are exact mirrors) and agree with compare_all."""
    return _rs.named_generator(ss, *sorted((a, b)))


def _values(x, z, opt, dup=None):
    xg, zg = arrange(x, z, opt.level)
    return grouped_values(xg, zg, opt.method, average=opt.average, detail=False, dup_pairs=dup)


def pair_values(xa, xb, z, opt, dup=None):
    """Both metrics' statistics (B,) averaged over the groups where both are
    defined, and the per-group definedness (B, G) of each."""
    la = _values(xa, z, opt, dup)
    lb = _values(xb, z, opt, dup)
    if la.weight is None:  # acc_eq: a group is defined by its pairs, the same for both
        da = db = la.n_valid >= 2
        return la.value, lb.value, da, db
    da, db = np.isfinite(la.group), np.isfinite(lb.group)
    both = da & db
    va = _aggregate(la.group, np.where(both, la.weight, 0.0))
    vb = _aggregate(lb.group, np.where(both, lb.weight, 0.0))
    return va, vb, da, db


def pair_delta(xa, xb, z, opt, dup=None):
    """statistic_a - statistic_b (B,) on the groups where both are defined."""
    va, vb, _, _ = pair_values(xa, xb, z, opt, dup)
    return va - vb


def williams(xa, xb, z, opt):
    """Williams' test: ``(s_a, s_b, t, p_two_sided, p_greater, p_less, n)``."""
    va, vb, _, _ = pair_values(xa, xb, z, opt)
    sa, sb = float(va[0]), float(vb[0])
    sab = float(statistic(xa, xb, opt.level, opt.method, opt.average)[0])
    ag, _ = arrange(xa, z, opt.level)
    nv = np.isfinite(ag[0]).sum(-1)
    n = int(nv.max()) if nv.size else 0
    t, p2 = williams_test(sa, sb, sab, n, alternative="two-sided")
    _, pg = williams_test(sa, sb, sab, n, alternative="greater")
    _, pl = williams_test(sa, sb, sab, n, alternative="less")
    return sa, sb, float(t), float(p2), float(pg), float(pl), n


def _both_defined(ga, wa, gb, wb):
    """Both statistics (B,) over the groups where both are defined (the rule
    of :func:`pair_values`)."""
    both = np.isfinite(ga) & np.isfinite(gb)
    return _aggregate(ga, np.where(both, wa, 0.0)), _aggregate(gb, np.where(both, wb, 0.0))


def fast_perm_both(opt: PairOptions) -> bool:
    """Whether :func:`perm_both_null` computes the test (bit-identical to
    the generic path, which builds both halves of every resample)."""
    return opt.test == "perm-both" and opt.sequential is None and opt.method in PAIR_METHODS


def perm_both_null(gen, xa, xb, z, opt: PairOptions):
    """The Perm-Both null distribution (B,) of statistic_a - statistic_b.

    The coins are those of :func:`metaeval.stats.resampling.swap_mask_chunks`
    (one :class:`~metaeval.stats.resampling.CoinStream`); the halves are never
    built: each group's values are sorted once (:class:`PairLayout`) and every
    resample's statistics come from :meth:`PairLayout.pair_values`
    (``system``: the halves' matched row means, :meth:`PairLayout.group_means`,
    then the coefficient on N means).  Bit-identical to building the halves
    with ``np.where`` and :func:`pair_delta` (tested), for any budget.
    """
    N, M = z.shape
    B = opt.n_resamples
    coef = get_coefficient(opt.method)
    za, zb = zscore(xa), zscore(xb)
    system = opt.level == "system"
    lay = PairLayout(za, zb, z, "item" if system else opt.level)
    G = lay.gptr.size - 1
    zm = human_system_means(za, z) if system else None
    # per resample: its packed coins and their unpacked copy when a chunk
    # does not start on a byte (2 bytes per cell), and per group the (2, 8)
    # statistics and the temporaries of the coefficients and weights (48
    # floats)
    per = 2.0 * N * M + 48.0 * 8 * G
    coins = _rs.CoinStream(gen, B, N * M)
    null = np.empty(B)
    nv = lay.n_valid
    for sl in _rs.resample_chunks(B, N * M, opt.budget, bytes_per_cell=per / max(1, N * M)):
        b = sl.stop - sl.start
        bits = coins.packed(sl)
        if system:
            means = lay.group_means(bits, b)
            la, lb = (
                grouped_values(np.ascontiguousarray(means[:, None, :, h]), zm, opt.method,
                               average=opt.average, detail=False)
                for h in (0, 1)
            )
            va, vb = _both_defined(la.group, la.weight, lb.group, lb.weight)
        else:
            out = lay.pair_values(bits, b, opt.method)
            if opt.method in KENDALL_VARIANTS:
                v = KENDALL_VARIANTS[opt.method]
                # both halves in one call on the contiguous (B, G, 2, 8) (no strided copies)
                gab = kendall_from_stats(out, v)
                ga, gb = gab[..., 0], gab[..., 1]
            else:
                ga, gb = out[..., 0], out[..., 1]
            nvb = np.broadcast_to(nv, ga.shape)
            wa = _weights(ga, nvb, coef.pair_weighted, opt.average)
            wb = _weights(gb, nvb, coef.pair_weighted, opt.average)
            va, vb = _both_defined(ga, wa, gb, wb)
        null[sl] = va - vb
    return null


def boot_null(gen, xa, xb, z, opt: PairOptions):
    """The paired bootstrap replicates (B,) of statistic_a - statistic_b:
    from the draws (:class:`~metaeval.stats.cellboot.CellBootstrap`) where it
    applies, else on the materialised replicates; the same numbers either
    way (tested; Pearson and Spearman up to rounding)."""
    N, M = z.shape
    B = opt.n_resamples
    valid = np.isfinite(z)
    dup_needed = opt.method in DUP_VARIANTS or opt.method == "acc_eq"
    cells = None
    bpc = None
    if CellBootstrap.supports(opt.level, opt.method, z.shape):
        cells = [CellBootstrap(x, z, opt.level, opt.method, opt.average) for x in (xa, xb)]
        bpc = CellBootstrap.bytes_per_resample(N, M) / max(1, N * M)
    out = np.empty(B)
    for sl, rows, cols in _rs.bootstrap_chunks(gen, B, N, M, opt.test[5:], opt.budget, bpc):
        dup = _rs.duplicate_pairs(rows, cols, valid, opt.level) if dup_needed else None
        if cells is None:
            out[sl] = pair_delta(
                _rs.take_cells(xa, rows, cols),
                _rs.take_cells(xb, rows, cols),
                _rs.take_cells(z, rows, cols),
                opt,
                dup,
            )
            continue
        (ga, wa), (gb, wb) = (c.group_weights(rows, cols, dup) for c in cells)
        if wa is None:  # system level: one statistic per replicate
            out[sl] = ga[:, 0] - gb[:, 0]
        else:
            va, vb = _both_defined(ga, wa, gb, wb)
            out[sl] = va - vb
    return out


def _sequential_null(gen, xa, xb, z, opt, delta):
    """Perm test with Besag-Clifford early stopping on the three p-values.

    The swap masks are those of the fixed-size test (same stream, same
    order); each mask chunk is evaluated in growing blocks (2h, 4h, ...
    draws, at least 16) so that few draws past the stopping point are
    computed.  Returns ``(null, {alternative: pvalue}, stopped)``.
    """
    N, M = z.shape
    h = opt.sequential
    za, zb = zscore(xa), zscore(xb)

    def blocks():
        size = max(16, 2 * h)
        for _, w in _rs.swap_mask_chunks(gen, opt.n_resamples, N, M, PERM_SCHEME[opt.test], opt.budget):
            s = 0
            while s < w.shape[0]:
                e = min(s + size, w.shape[0])
                ws = w[s:e]
                yield pair_delta(np.where(ws, zb, za), np.where(ws, za, zb), z, opt)
                s, size = e, size * 2

    if not np.isfinite(delta):
        return np.empty(0), {alt: np.nan for alt in ALTERNATIVES}, False
    r = sequential_pvalues(
        blocks(),
        lambda b: np.stack([exceeds(b, delta, alt, False) for alt in ALTERNATIVES]),
        h=h,
        n=opt.n_resamples + 1,
    )
    pv = {alt: float(p) for alt, p in zip(ALTERNATIVES, r.pvalues)}
    return r.null, pv, bool(r.stopped.all())


def pair_test(xa, xb, z, opt: PairOptions, gen, n_cells) -> PairTest:
    """Test A (``xa``) against B (``xb``) on human scores ``z`` (common cells only).

    ``gen`` is the pair's generator (:func:`pair_generator`), ``n_cells`` the
    number of common cells (reported as ``n`` except by Williams' test).
    """
    t = np.nan
    ci = (np.nan, np.nan)
    null = None
    n_nan = 0
    stopped = False
    if opt.test == "williams":
        sa, sb, t, p2, pg, pl, n = williams(xa, xb, z, opt)
        delta = sa - sb
        pv = {"two-sided": p2, "greater": pg, "less": pl}
        _, _, da, db = pair_values(xa, xb, z, opt)
    else:
        va, vb, da, db = pair_values(xa, xb, z, opt)
        sa, sb = float(va[0]), float(vb[0])
        delta = sa - sb
        N, M = z.shape
        B = opt.n_resamples
        null = np.empty(B)
        if opt.sequential is not None:
            null, pv, stopped = _sequential_null(gen, xa, xb, z, opt, delta)
        elif fast_perm_both(opt):
            null = perm_both_null(gen, xa, xb, z, opt)
        elif opt.test.startswith("perm-"):
            za, zb = zscore(xa), zscore(xb)
            for sl, w in _rs.swap_mask_chunks(gen, B, N, M, PERM_SCHEME[opt.test], opt.budget):
                null[sl] = pair_delta(np.where(w, zb, za), np.where(w, za, zb), z, opt)
        else:
            boot = boot_null(gen, xa, xb, z, opt)
            if np.isfinite(delta):
                ci = percentile_interval(boot, opt.confidence_level)
            null = boot - delta
        n_nan = int((~np.isfinite(null)).sum())
        if opt.sequential is None:
            pv = {alt: resampling_pvalue(null, delta, alt) for alt in ALTERNATIVES}
        n = n_cells
    return PairTest(
        statistic_a=sa,
        statistic_b=sb,
        statistic=float(delta),
        pvalues={alt: float(pv[alt]) for alt in ALTERNATIVES},
        ci_low=float(ci[0]),
        ci_high=float(ci[1]),
        t=float(t),
        n=int(n),
        null_distribution=null,
        n_resamples_nan=n_nan,
        stopped_early=stopped,
        defined_a=da,
        defined_b=db,
    )


__all__ = [
    "PERM_SCHEME",
    "TESTS",
    "WILLIAMS_METHODS",
    "PairOptions",
    "PairTest",
    "boot_null",
    "check_test",
    "common_cells",
    "fast_perm_both",
    "pair_delta",
    "pair_generator",
    "pair_test",
    "pair_values",
    "perm_both_null",
    "williams",
    "zscore",
]
