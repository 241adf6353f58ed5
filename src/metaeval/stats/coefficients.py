"""The correlation coefficients and agreement statistics, one registry.

Every coefficient is computed for a batch: ``x`` (metric) and ``y`` (human)
of shape ``(B, G, n)`` (``y`` may broadcast), giving one value per resample
``b`` and group ``g``.  Pairs with a non-finite value on either side are
dropped per group (pairwise deletion).

Definitions (C, D: concordant and discordant pairs; Tx, Ty, Txy: pairs tied
in the metric only, in the human score only, in both; N = C+D+Tx+Ty+Txy):

``pearson``
    Pearson's product-moment r.
``spearman``
    Pearson's r of the average ranks (ties get the mean rank), i.e. scipy's
    ``spearmanr``.
``kendall_b``
    tau-b = (C - D) / sqrt((N - Tx - Txy)(N - Ty - Txy)) (Kendall 1945;
    scipy ``kendalltau(variant="b")``).
``kendall_c``
    tau-c = 2 (C - D) / (n^2 (k - 1) / k), k = min(#distinct metric values,
    #distinct human values) (Stuart 1953; scipy ``variant="c"``).
``kendall_23``
    tau_23 = (C + Txy - D - Tx - Ty) / N (Deutsch et al. 2023, Eq. 3): a tie
    predicted correctly counts as concordant, any other tie as discordant.
``acc_23``
    acc_23 = (C + Txy) / N (Deutsch et al. 2023, Eq. 4): the share of pairs
    ordered correctly, ties included.
``acc_eq``
    acc_23 with tie calibration (Deutsch et al. 2023, section 5): metric
    pairs with ``|dx| <= epsilon`` count as ties, and epsilon is the
    smallest threshold maximising the averaged acc_23 over the whole data (one
    epsilon shared by all groups); the result reports epsilon.
``pairwise_accuracy``
    System-level pairwise accuracy (Kocmi et al. 2021; mt-metrics-eval
    ``Agreement``): the share of system pairs whose metric difference has the
    sign of the human difference, a human tie counting as agreement only if
    the metric ties exactly.  Numerically acc_23 at system level; offered only
    at ``level="system"``.

A group is *degenerate* (NaN, :class:`~metaeval.errors.TooFewPairsWarning`)
when it has fewer than two valid pairs; correlations (``pearson``,
``spearman``, ``kendall_b``, ``kendall_c``) are also undefined, with
:class:`~metaeval.errors.ConstantInputWarning`, when the metric or the human
scores are constant over the group's valid pairs.  The accuracy-type
statistics (``kendall_23``, ``acc_23``, ``acc_eq``, ``pairwise_accuracy``)
are defined for constant groups.
"""

from __future__ import annotations

import functools
import itertools
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import _choices
from ..errors import ParameterError, ResourceError
from ._columns import KX, KY, NVALID, TX, TXY, TY, C, D  # noqa: F401 (imported from here by levels, cellboot)

#: Calls of a parallel kernel on fewer values than this run its serial build
#: (:func:`metaeval.stats._jit.kernel`: the same bits, no parallel region to
#: start; benchmarks/glue.py).
PARALLEL_MIN_WORK = 1 << 16


def kernels(fast: bool = True, work: int | None = None):
    """The kernel module: numba (``fast=True``, unless disabled) or NumPy.

    ``work``: the number of values of the call; below
    :data:`PARALLEL_MIN_WORK` the numba namespace's parallel kernels are their
    serial builds (same results).  Imported on first use, so that a command
    whose work needs no kernel (a one-level correlation without resampling,
    say) loads neither numba nor the compiled kernels (issue 26.2)."""
    if fast and os.environ.get("METAEVAL_DISABLE_NUMBA", "") in ("", "0"):
        from . import _kernels

        if work is not None and work < PARALLEL_MIN_WORK:
            return _kernels.SERIAL
        return _kernels
    from . import _numpy_kernels

    return _numpy_kernels


def kernel(name: str, fast: bool = True, size: int | None = None):
    """The kernel ``name``: from :mod:`._small` (the same bits, no numba) for a
    batch of ``size`` values small enough while numba is not loaded
    (:func:`._small.suits`), else from :func:`kernels` (its serial build
    below :data:`PARALLEL_MIN_WORK` values).

    So that a command whose whole work is a few small statistics (a
    system-level correlation without resampling) never imports numba: its
    import, CPU target and cached kernels cost more than 0.5 CPU-s (issue 26.2)."""
    if fast and size is not None and os.environ.get("METAEVAL_DISABLE_NUMBA", "") in ("", "0"):
        from . import _small

        if name in _small.__all__ and _small.suits(size):
            return getattr(_small, name)
    return getattr(kernels(fast, size), name)


def _st():
    """scipy.stats, imported when a p-value or a rank needs it (its import
    alone is about 0.6 CPU-s)."""
    from scipy import stats

    return stats


# --------------------------------------------------------------------------
# batched coefficients: (B, G, n) x (B|1, G, n) -> (B, G)


def _masked(x, y):
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    valid = np.isfinite(x) & np.isfinite(y)
    return x, y, valid


def n_valid(x, y):
    """Number of valid pairs per (b, g)."""
    _, _, valid = _masked(x, y)
    return valid.sum(-1)


def _constant(a, valid):
    lo = np.where(valid, a, np.inf).min(-1, initial=np.inf)
    hi = np.where(valid, a, -np.inf).max(-1, initial=-np.inf)
    return ~(hi > lo)


# Magnitudes in [2**-_SAFE_EXP, 2**_SAFE_EXP] are centred and squared without
# overflow or underflow; other rows are scaled by a power of two (exact).
_SAFE_EXP = 400


def pow2_exponent(a) -> int:
    """``e`` such that ``a * 2**-e`` has its largest finite magnitude in ``[2**-1, 1)``, when
    that magnitude is outside ``[2**-_SAFE_EXP, 2**_SAFE_EXP]``; else 0 (``a`` is safe as it
    is).  Sums of squares of the scaled values neither overflow (values beyond ~1e154 gave an
    infinite variance) nor underflow, and dividing by a power of two is exact, so every
    scale-free statistic (z-scores, correlations, ICC, alpha) is unchanged bit for bit, and
    a statistic in the data's unit is scaled back with ``numpy.ldexp(value, e)``."""
    a = np.asarray(a, dtype=float)
    fin = np.abs(a[np.isfinite(a)])
    if not fin.size or not fin.max() > 0:
        return 0
    e = int(np.frexp(fin.max())[1])
    return 0 if -_SAFE_EXP <= e <= _SAFE_EXP else e


def pow2_scaled(a):
    """``a`` divided by ``2**pow2_exponent(a)`` (exact; ``a`` itself in the safe range)."""
    a = np.asarray(a, dtype=float)
    e = pow2_exponent(a)
    return np.ldexp(a, -e) if e else a


def _centred(a, valid, cnt):
    """Deviations from the mean over valid entries (zero elsewhere) and their
    mean ``dbar`` (the rounding of the computed mean, for the corrected
    two-pass sums).  Rows whose largest magnitude is outside the safe range
    are first scaled by a power of two, which is exact; Pearson's r is
    invariant to the scaling."""
    amax = np.where(valid, np.abs(a), 0.0).max(-1, initial=0.0)
    e = np.frexp(amax)[1]
    e = np.where((e >= -_SAFE_EXP) & (e <= _SAFE_EXP), 0, e)
    a = np.where(valid, np.ldexp(np.where(valid, a, 0.0), -e[..., None]), 0.0)
    c = np.maximum(cnt, 1)
    m = a.sum(-1) / c
    d = np.where(valid, a - m[..., None], 0.0)
    return d, d.sum(-1) / c


def _out_of_memory(what, shape, exc):
    """The ResourceError of a kernel whose memory could not be allocated."""
    dims = " x ".join(str(d) for d in shape)
    return ResourceError(
        f"{what}: not enough memory for a batch of shape {dims} (resamples x groups x cells); "
        f"use fewer resamples (--n-resamples), a level with smaller groups (--level), or fewer "
        f"metrics at once ({type(exc).__name__}: {' '.join(str(exc).split())})"
    )


def _guarded(what):
    """Decorator: a MemoryError of the wrapped batch function (its copies or
    its kernel's result and workspace) becomes a one-line ResourceError
    naming the options that shrink the batch (issue 14.1)."""

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except MemoryError as exc:
                if isinstance(exc, ResourceError):
                    raise
                raise _out_of_memory(what, np.shape(args[0]) if args else (), exc) from exc

        return wrapper

    return deco


@_guarded("pearson")
def pearson_batch(x, y, *, fast=True):
    """Pearson's r per (b, g) with pairwise deletion.

    ``x`` is (B, G, n); ``y`` is (B, G, n) or (1, G, n) (shared by the batch).
    """
    x = _plain(x)
    y = _plain(y)
    if _kernel_shapes(x, y):
        if x.size == 0:
            return np.full(x.shape[:2], np.nan)
        return kernel("pearson_rows", fast, x.size)(x, y)
    return pearson_numpy(x, y)


def pearson_numpy(x, y):
    """Pearson's r per (b, g) with pairwise deletion (NumPy; any broadcastable shapes)."""
    x, y, valid = _masked(x, y)
    cnt = valid.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        # corrected two-pass sums (Chan, Golub and LeVeque 1983): centring
        # first keeps the error near machine epsilon for any mean/sd ratio
        dx, cx = _centred(x, valid, cnt)
        dy, cy = _centred(y, valid, cnt)
        sxy = (dx * dy).sum(-1) - cnt * cx * cy
        sxx = (dx * dx).sum(-1) - cnt * cx * cx
        syy = (dy * dy).sum(-1) - cnt * cy * cy
        r = sxy / (np.sqrt(sxx) * np.sqrt(syy))
    r = np.clip(r, -1.0, 1.0)
    bad = (cnt < 2) | _constant(x, valid) | _constant(y, valid) | ~(sxx > 0) | ~(syy > 0)
    return np.where(bad, np.nan, r)


@_guarded("average ranks")
def rank_batch(a, valid, *, fast=True):
    """Average ranks along the last axis among ``valid`` entries (NaN elsewhere)."""
    a = np.where(valid, a, np.nan)
    shape = a.shape
    if a.size == 0:
        return a
    flat = np.ascontiguousarray(a.reshape(-1, shape[-1]))
    return kernels(fast, flat.size).average_ranks(flat).reshape(shape)


def spearman_batch(x, y, *, fast=True):
    """Spearman's rho per (b, g): Pearson's r of average ranks.

    When the human scores and the validity mask are the same in every batch
    item (the usual case in permutation tests), they are ranked once.
    """
    y0 = np.asarray(y, float)
    x, y, valid = _masked(x, y0)
    rx = rank_batch(x, valid, fast=fast)
    if y0.ndim == x.ndim and y0.shape[0] == 1 and (valid == valid[:1]).all():
        ry = rank_batch(y[:1], valid[:1], fast=fast)
    else:
        ry = rank_batch(y, valid, fast=fast)
    return pearson_batch(rx, ry, fast=fast)


def dense_ranks(y):
    """Dense ranks (0..k-1) of each row of (G, n) ``y``; -1 where not finite.

    Returns ``(ranks, k)`` with ``k`` (G,) the number of distinct values.
    """
    G, n = y.shape
    ranks = np.full((G, n), -1, np.int64)
    k = np.zeros(G, np.int64)
    for g in range(G):
        ok = np.isfinite(y[g])
        if ok.any():
            u, inv = np.unique(y[g][ok], return_inverse=True)
            ranks[g, ok] = inv
            k[g] = u.size
    return ranks, k


@_guarded("kendall statistics")
def kendall_stats(x, y, eps=0.0, *, fast=True):
    """Kendall sufficient statistics (B, G, 8); see :mod:`._kernels`.

    When ``y`` is one human score shared by the whole batch (shape
    (1, G, n)), eps is 0 and groups are large, the human scores are ranked
    once and the ranked-human kernel is used.

    Raises
    ------
    ResourceError
        When the kernel's result or working memory cannot be allocated.
    """
    from ._kendall import RANKED_Y_MIN_N

    x = _plain(x)
    y = _plain(y)
    k = kernels(fast, x.size)
    # C-contiguous float64 only, so each numba kernel compiles one signature
    # (any layout mix compiled a new specialisation, up to 4 per kernel)
    if eps == 0.0 and y.ndim == 3 and y.shape[0] == 1 and x.shape[0] > 1 and x.shape[-1] >= RANKED_Y_MIN_N:
        yr, levels = dense_ranks(y[0])
        return k.kendall_stats_ranked_y(np.ascontiguousarray(x), yr, levels)
    if not _kernel_shapes(x, y):
        x, y = np.broadcast_arrays(x, y)
        x, y = _plain(x), _plain(y)
    return k.kendall_stats(np.ascontiguousarray(x), np.ascontiguousarray(y), float(eps))


def _kernel_shapes(x, y):
    """True if the kernels take (x, y) as they are: x (B, G, n) and y
    (B, G, n) or (1, G, n), a human batch of one being shared."""
    return x.ndim == 3 and y.ndim == 3 and y.shape[0] in (1, x.shape[0]) and x.shape[1:] == y.shape[1:]


def _plain(a):
    """A C-contiguous, writeable float64 array for the kernels (copied only
    when it is not one already: broadcast views, slices, read-only data).

    Numba compiles one specialisation per layout and read-only flag: before,
    ``kendall_stats`` was compiled four times and ``pearson_rows`` three
    times in one ``metaeval report --quick`` (about 14 s of its 31 s of
    first-run compilation, BENCHMARKS.md "Start-up")."""
    a = np.asarray(a, float)
    if not (a.flags.c_contiguous and a.flags.writeable) or (0 in a.strides and a.size > 1):
        return np.array(a, dtype=float, order="C")
    return a


#: From this many rows on, :func:`kendall_from_stats` runs the kernel (the
#: same bits; smaller arrays keep the NumPy twin, which loads no numba).
KENDALL_VALUES_MIN_ROWS = 4096


def kendall_from_stats(s, variant, *, fast=True):
    """A Kendall-family statistic from sufficient statistics ``s`` (..., 8):
    ``variant`` ``"b"``, ``"c"``, ``"23"`` or ``"acc23"``; NaN where
    undefined.  Large arrays (resamples x groups) go through the kernel
    :func:`metaeval.stats._kendall.kendall_values`, small ones through its
    NumPy twin (the same IEEE operations in the same order: the same bits)."""
    from ._kendall import KENDALL_VARIANT_CODES, kendall_values_numpy

    s = np.asarray(s, float)
    rows = s.size // 8 if s.ndim else 0
    if rows < KENDALL_VALUES_MIN_ROWS or variant not in KENDALL_VARIANT_CODES:
        return kendall_values_numpy(s, variant)
    k = kernels(fast, s.size)
    if not hasattr(k, "kendall_values"):  # the NumPy namespace
        return kendall_values_numpy(s, variant)
    flat = np.ascontiguousarray(s).reshape(-1, s.shape[-1])
    return k.kendall_values(flat, KENDALL_VARIANT_CODES[variant]).reshape(s.shape[:-1])


def _kendall(variant):
    def f(x, y, *, fast=True):
        return kendall_from_stats(kendall_stats(x, y, 0.0, fast=fast), variant)

    return f


# --------------------------------------------------------------------------
# analytic p-values for a single correlation (system and global levels)


def _p_pearson(x, y, alternative):
    return _st().pearsonr(x, y, alternative=alternative).pvalue


#: Up to this many pairs the Spearman p-value is exact (all n! pairings enumerated).
SPEARMAN_EXACT_N = 9


@functools.lru_cache(maxsize=SPEARMAN_EXACT_N + 1)
def _pairings(n: int) -> np.ndarray:
    """All n! orderings of range(n), one per row (int8; 9! x 9 = 3.3 MB)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def _p_spearman_exact(x, y, alternative):
    """Exact permutation p-value of Spearman's rho over all n! pairings of ``y``
    with ``x`` (ties allowed: average ranks are kept as they are permuted).

    The statistic compared is the integer sum of doubled ranks
    ``S = sum(2 r_x * 2 r_y)``, which orders the pairings as rho does (the
    rank margins do not change under permutation), so no floating tolerance
    is involved.  ``greater`` is the share of pairings with ``S >= S_obs``,
    ``less`` with ``S <= S_obs`` (the observed pairing counts), and
    ``two-sided`` is twice the smaller one-sided value capped at 1: the
    definition of ``scipy.stats.permutation_test`` with
    ``permutation_type="pairings"``, which enumerates exactly when n! is at
    most ``n_resamples``.  Without ties this is the exact null distribution
    that R's ``cor.test(method = "spearman")`` evaluates for n <= 9
    (algorithm AS 89, Best & Roberts 1975).
    """
    rx = np.rint(2 * _st().rankdata(x)).astype(np.int64)
    ry = np.rint(2 * _st().rankdata(y)).astype(np.int64)
    s_all = ry[_pairings(rx.size)] @ rx
    s_obs = int(rx @ ry)
    greater = np.count_nonzero(s_all >= s_obs) / s_all.size
    less = np.count_nonzero(s_all <= s_obs) / s_all.size
    if alternative == "greater":
        return float(greater)
    if alternative == "less":
        return float(less)
    return float(min(1.0, 2.0 * min(greater, less)))


def _p_spearman(x, y, alternative):
    """scipy's t approximation, except for n <= :data:`SPEARMAN_EXACT_N` pairs,
    where it is far off (rho = 1 over 5 systems: 1e-24 instead of the exact
    2/120) and the exact permutation p-value is used instead."""
    if np.size(x) <= SPEARMAN_EXACT_N:
        return _p_spearman_exact(np.asarray(x, float), np.asarray(y, float), alternative)
    return _st().spearmanr(x, y, alternative=alternative).pvalue


def _p_kendall(variant):
    def f(x, y, alternative):
        return _st().kendalltau(x, y, variant=variant, alternative=alternative).pvalue

    return f


@dataclass(frozen=True)
class Coefficient:
    """A registered coefficient.

    Attributes
    ----------
    name : str
        Registry name (``method=`` value).
    batch : callable or None
        ``batch(x, y, fast=True) -> (B, G)`` values; None for ``acc_eq``,
        whose threshold is shared by all groups (computed by the level code).
    constant_is_degenerate : bool
        Whether a constant group gives NaN.
    pair_weighted : bool
        Micro averaging weights groups by their number of pairs (True) or of
        items (False).
    fisher : tuple or None
        Bonett and Wright (2000) constants ``(b, c(r))`` of the Fisher-z
        interval ``tanh(atanh(r) +- z * c(r) / sqrt(n - b))``.
    pvalue : callable or None
        Analytic p-value ``pvalue(x, y, alternative)`` of one correlation.
    levels : tuple of str or None
        Levels where the method is offered (None: all).
    """

    name: str
    batch: Callable | None
    constant_is_degenerate: bool
    pair_weighted: bool
    fisher: tuple | None
    pvalue: Callable | None
    description: str
    levels: tuple | None = None


COEFFICIENTS: dict[str, Coefficient] = {
    "pearson": Coefficient(
        "pearson",
        lambda x, y, fast=True: pearson_batch(x, y, fast=fast),
        True,
        False,
        (3.0, lambda r: np.ones_like(r)),
        _p_pearson,
        "Pearson's r",
    ),
    "spearman": Coefficient(
        "spearman",
        lambda x, y, fast=True: spearman_batch(x, y, fast=fast),
        True,
        False,
        (3.0, lambda r: np.sqrt(1.0 + r * r / 2.0)),
        _p_spearman,
        "Spearman's rho (average ranks for ties)",
    ),
    "kendall_b": Coefficient(
        "kendall_b",
        _kendall("b"),
        True,
        False,
        (4.0, lambda r: np.full_like(r, np.sqrt(0.437))),
        _p_kendall("b"),
        "Kendall's tau-b",
    ),
    "kendall_c": Coefficient(
        "kendall_c",
        _kendall("c"),
        True,
        False,
        None,
        _p_kendall("c"),
        "Kendall's tau-c (Stuart)",
    ),
    "kendall_23": Coefficient(
        "kendall_23",
        _kendall("23"),
        False,
        True,
        None,
        None,
        "tau_23 of Deutsch et al. 2023 (ties are predictions)",
    ),
    "acc_23": Coefficient(
        "acc_23",
        _kendall("acc23"),
        False,
        True,
        None,
        None,
        "pairwise accuracy acc_23 of Deutsch et al. 2023",
    ),
    "acc_eq": Coefficient(
        "acc_eq",
        None,
        False,
        True,
        None,
        None,
        "acc_23 with tie calibration (optimal metric tie threshold epsilon)",
    ),
    "pairwise_accuracy": Coefficient(
        "pairwise_accuracy",
        _kendall("acc23"),
        False,
        True,
        None,
        None,
        "system-level pairwise accuracy (Kocmi et al. 2021)",
        levels=("system",),
    ),
}

METHODS = tuple(COEFFICIENTS)

# the one default coefficient of the correlation tables and validity's Kendall's tau-b: defined in
# the light module metaeval._choices (the command line reads it without importing numpy)
DEFAULT_METHOD, VALIDITY_METHOD = _choices.DEFAULT_METHOD, _choices.VALIDITY_METHOD


def get_coefficient(method: str) -> Coefficient:
    """Look up ``method`` in the registry, with an error listing the choices."""
    try:
        return COEFFICIENTS[method]
    except (KeyError, TypeError):
        hint = ""
        if isinstance(method, str) and method.lower() in ("kendall", "kendalltau", "tau"):
            hint = " ('kendall' is ambiguous: choose kendall_b, kendall_c or kendall_23)"
        raise ParameterError(
            f"method={method!r} is not a known coefficient{hint}; "
            f"choose one of {', '.join(METHODS)}"
        ) from None


def check_method_levels(method, levels):
    """The coefficient registry's entry for ``method``, if it is defined at every level of
    ``levels`` (unknown names: the registry's own message)."""
    coef = get_coefficient(method)
    bad = [lv for lv in levels if coef.levels is not None and lv not in coef.levels]
    if bad:
        raise ParameterError(
            f"method={method!r} is defined only at level {', '.join(coef.levels)}; "
            f"not at {', '.join(bad)}"
        )
    return coef


def fisher_interval(r, n, method, confidence_level=0.95):
    """Fisher-z confidence interval with the Bonett and Wright (2000) constants.

    ``tanh(atanh(r) -+ z_{1-alpha/2} * c(r) / sqrt(n - b))`` with
    (b, c) = (3, 1) for Pearson, (3, sqrt(1 + r^2 / 2)) for Spearman and
    (4, sqrt(0.437)) for Kendall's tau-b.  NaN when ``n <= b`` or r is NaN.
    """
    coef = get_coefficient(method)
    if coef.fisher is None:
        raise ParameterError(
            f"ci='fisher' is not defined for method={method!r}; it applies to "
            "pearson, spearman and kendall_b (use a bootstrap interval instead)"
        )
    b, cfun = coef.fisher
    r = np.asarray(r, float)
    n = np.asarray(n, float)
    zc = _st().norm.ppf(0.5 + confidence_level / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.arctanh(np.clip(r, -1.0, 1.0))
        half = zc * cfun(r) / np.sqrt(n - b)
        lo = np.tanh(z - half)
        hi = np.tanh(z + half)
    bad = ~np.isfinite(r) | (n <= b)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)
