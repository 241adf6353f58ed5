"""The generative model of seed paper 000's simulation (section 4.1, Algorithm 1): arrays
in, arrays out.  :mod:`metaeval.simulation` runs it on grids and estimates its parameters;
``simulate``'s common random numbers are the draws of :func:`draw_standard` and
:func:`draw_threshold_uniforms`, named streams of one seed (so a grid point's numbers do
not depend on the other points, the workers or the chunks).

The model, for N systems and M inputs::

    (mu_i^m, mu_i^h) ~ BVN(mu^m, mu^h, sigma^m, sigma^h, rho_sys)      i = 1..N
    rho_i            ~ Normal(mu_rho_item, sigma_rho_item) truncated to [-1, 1]
    (x_ij, z_ij)     ~ BVN(mu_i^m, mu_i^h, sigma_i^m, sigma_i^h, rho_i) j = 1..M

x is the metric, z the human score (:func:`model_scores`); discretization replaces every
value by the number of thresholds at or below it (:func:`discretize`), with C - 1
thresholds ~ U(mu - sigma, mu + sigma) per side (:func:`thresholds_from_uniforms`).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from scipy import special as _sp

from .._vocab import check_int, check_number
from ..errors import DataError, ParameterError
from .levels import level_values
from .resampling import named_generator, seed_sequence

__all__ = [
    "PARAMETER_CHECKS",
    "check_scale_size",
    "column_stats",
    "correlation_stats",
    "discretize",
    "draw_scores",
    "draw_standard",
    "draw_threshold_uniforms",
    "model_scores",
    "thresholds_from_uniforms",
    "truncated_normal_ppf",
    "with_item_sigmas",
]


# --------------------------------------------------------------------------
# the model's parameters


def check_scale_size(v, name):
    """A scale size ``c_m``/``c_h``: an int >= 2 (categories), or None (continuous scores)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ParameterError(
            f"{name}={v!r} must be an int >= 2 (number of categories) or None (continuous)"
        )
    if v < 2:
        raise ParameterError(
            f"{name}={v!r}: a scale needs at least 2 categories (None: continuous scores)"
        )
    return int(v)


_SD = "a standard deviation"
#: The check of each of the model's parameters (one value), as :func:`metaeval.simulate`'s grid
#: and :func:`draw_scores` apply it: the value, or a ParameterError naming the keyword.
PARAMETER_CHECKS = {
    "rho_sys": lambda v: check_number(v, "rho_sys", lo=-1.0, hi=1.0),
    "mu_rho_item": lambda v: check_number(v, "mu_rho_item", lo=-1.0, hi=1.0),
    "sigma_rho_item": lambda v: check_number(v, "sigma_rho_item", lo=0, note=_SD),
    "mu_m": lambda v: check_number(v, "mu_m"),
    "mu_h": lambda v: check_number(v, "mu_h"),
    "sigma_m": lambda v: check_number(v, "sigma_m", lo=0, open_lo=True, note=_SD),
    "sigma_h": lambda v: check_number(v, "sigma_h", lo=0, open_lo=True, note=_SD),
    "sigma_item_m": lambda v: None if v is None else check_number(v, "sigma_item_m", lo=0, open_lo=True, note=_SD),
    "sigma_item_h": lambda v: None if v is None else check_number(v, "sigma_item_h", lo=0, open_lo=True, note=_SD),
    "n_systems": lambda v: check_int(v, "n_systems", 2),
    "n_inputs": lambda v: check_int(v, "n_inputs", 2),
    "c_m": lambda v: check_scale_size(v, "c_m"),
    "c_h": lambda v: check_scale_size(v, "c_h"),
}



def truncated_normal_ppf(u, mu, sigma):
    """Quantile function of Normal(mu, sigma) truncated to [-1, 1].

    ``F^-1(u) = mu + sigma * Phi^-1(Phi(a) + u (Phi(b) - Phi(a)))`` with
    ``a = (-1 - mu) / sigma``, ``b = (1 - mu) / sigma``: an exact
    inverse-CDF draw when ``u ~ U(0, 1)``.  Probabilities above 1/2 are
    inverted through their complement ``1 - Phi(b) + (1 - u)(Phi(b) -
    Phi(a))``, so no precision is lost near the upper bound.
    ``sigma = 0`` gives ``mu``.  Equals ``scipy.stats.truncnorm.ppf(u, a, b,
    loc=mu, scale=sigma)`` (tested to 1e-12).

    Parameters
    ----------
    u : array_like
        Uniform(0, 1) numbers.
    mu, sigma : float
        Location and scale of the untruncated normal.
    """
    u = np.asarray(u, float)
    if sigma == 0:
        return np.full(u.shape, float(mu))
    a = (-1.0 - mu) / sigma
    b = (1.0 - mu) / sigma
    pa = _sp.ndtr(a)
    pb = _sp.ndtr(b)
    width = pb - pa
    p = pa + u * width
    # the upper half through the complement, so no precision is lost near 1
    q = _sp.ndtr(-b) + (1.0 - u) * width
    z = np.where(p < 0.5, _sp.ndtri(np.minimum(p, 0.5)), -_sp.ndtri(np.minimum(q, 0.5)))
    return np.clip(mu + sigma * z, -1.0, 1.0)


def discretize(values, thresholds):
    """Category indices of ``values`` for each set of thresholds.

    The index of a value v is the number of thresholds t with ``t <= v``
    (``np.digitize(v, sorted(t))``): with C - 1 thresholds it is in
    0..C-1, and a value equal to a threshold goes to the upper category.
    Values below every threshold get 0.

    Parameters
    ----------
    values : array_like
        Finite scores of any shape S.
    thresholds : array_like, shape (B, C - 1)
        B sets of thresholds (need not be sorted).

    Returns
    -------
    ndarray of int64, shape (B, *S)

    Notes
    -----
    The values are sorted once; each threshold set then costs
    O(C log n + n) (a cumulative count of the thresholds' insertion points),
    so the B sets cost O(n log n + B (n + C log n)).

    Examples
    --------
    >>> discretize([0.1, 0.5, 0.9, 0.5], [[0.5, 0.2]])
    array([[0, 2, 2, 2]])
    """
    v = np.asarray(values, float)
    t = np.atleast_2d(np.asarray(thresholds, float))
    if not np.isfinite(v).all():
        raise ParameterError("discretize: values must be finite")
    shape = v.shape
    flat = v.ravel()
    n = flat.size
    B = t.shape[0]
    order = np.argsort(flat, kind="stable")
    xs = flat[order]
    # first sorted position with x >= t: values from there on have t <= v
    pos = np.searchsorted(xs, t, side="left")
    cnt = np.bincount((pos + (n + 1) * np.arange(B)[:, None]).ravel(), minlength=B * (n + 1))
    codes_sorted = np.cumsum(cnt.reshape(B, n + 1)[:, :n], axis=1)
    codes = np.empty((B, n), np.int64)
    codes[:, order] = codes_sorted
    return codes.reshape((B,) + shape)


def draw_standard(ss, n_systems, n_inputs, t):
    """The standard draws of iteration ``t`` (common random numbers): two
    standard normals per system, one uniform per system (for rho_i), two
    standard normals per cell.  They depend on the seed, N, M and t only."""
    gen = named_generator(
        ss, "simulation-data", f"n_systems={n_systems}", f"n_inputs={n_inputs}", f"iteration={t}"
    )
    e_sys = gen.standard_normal((n_systems, 2))
    u_rho = gen.random(n_systems)
    e_cell = gen.standard_normal((2, n_systems, n_inputs))
    return e_sys, u_rho, e_cell


def draw_threshold_uniforms(ss, side, c, t, n_discretizations):
    """Uniform(0, 1) numbers (T2, C - 1) for the thresholds of one side
    (``metric``/``human``) at scale size ``c`` in iteration ``t``."""
    gen = named_generator(ss, "simulation-thresholds", side, f"c={c}", f"iteration={t}")
    return gen.random((n_discretizations, c - 1))


def model_scores(p, e_sys, u_rho, e_cell):
    """Metric x and human z scores from standard draws (any leading axes)."""
    a = e_sys[..., 0]
    b = e_sys[..., 1]
    rs = p["rho_sys"]
    mu_i_m = p["mu_m"] + p["sigma_m"] * a
    mu_i_h = p["mu_h"] + p["sigma_h"] * (rs * a + math.sqrt(max(0.0, 1.0 - rs * rs)) * b)
    rho_i = truncated_normal_ppf(u_rho, p["mu_rho_item"], p["sigma_rho_item"])
    e0 = e_cell[..., 0, :, :]
    e1 = e_cell[..., 1, :, :]
    x = mu_i_m[..., None] + p["sigma_item_m"] * e0
    z = mu_i_h[..., None] + p["sigma_item_h"] * (
        rho_i[..., None] * e0 + np.sqrt(np.maximum(0.0, 1.0 - rho_i * rho_i))[..., None] * e1
    )
    return x, z


def thresholds_from_uniforms(u, mu, sigma):
    """Discretization thresholds ~ U(mu - sigma, mu + sigma) from Uniform(0, 1) numbers
    (paper 000, section 4.1, centred on the side's mean)."""
    return mu + sigma * (2.0 * u - 1.0)


# --------------------------------------------------------------------------
# estimating the model's parameters from a score matrix (paper 000, appendix Tables 5-6;
# metaeval.simulation.estimate_parameters)


def column_stats(a, bounds=None, column=""):
    """Normalized summary of one (N, M) score matrix; ``bounds`` = (low, high)
    of the rating scale, or None for the observed range."""
    ok = np.isfinite(a)
    vals = a[ok]
    n = int(vals.size)
    if n < 2:
        raise DataError(f"fewer than 2 finite cells ({n})")
    omin, omax = float(vals.min()), float(vals.max())
    if bounds is None:
        lo, hi, source = omin, omax, "observed"
    else:
        lo, hi = bounds
        source = "declared"
        outside = vals[(vals < lo) | (vals > hi)]
        if outside.size:
            raise DataError(
                f"{outside.size} value(s) outside the declared scale [{lo:g}, {hi:g}], e.g. "
                f"{', '.join(f'{v:g}' for v in np.unique(outside)[:5])} (failure codes such as -1? "
                "remove them, or fix the bounds)"
            )
    _, counts = np.unique(vals, return_counts=True)
    tie = float((counts * (counts - 1) / 2.0).sum() / (n * (n - 1) / 2.0))
    scale = dict(scale_low=lo, scale_high=hi, bounds=source)
    if not hi > lo:
        return dict(
            n_cells=n,
            min=omin,
            max=omax,
            **scale,
            mu=np.nan,
            sigma=np.nan,
            sigma_item=np.nan,
            n_unique=int(counts.size),
            tie_ratio=tie,
        )
    v = np.where(ok, (a - lo) / (hi - lo), np.nan)
    cnt = ok.sum(1)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sys_means = np.nanmean(v, axis=1)[cnt > 0]
        sigma = float(np.std(sys_means, ddof=1)) if sys_means.size > 1 else np.nan
        within = np.nanvar(v, axis=1, ddof=1)[cnt > 1]
        sigma_item = float(np.sqrt(within.mean())) if within.size else np.nan
    return dict(
        n_cells=n,
        min=omin,
        max=omax,
        **scale,
        mu=float(v[ok].mean()),
        sigma=sigma,
        sigma_item=sigma_item,
        n_unique=int(counts.size),
        tie_ratio=tie,
    )


def correlation_stats(x, z):
    """The correlation parameters of a metric (N, M) ``x`` against the human ``z``: Pearson at
    the system, input and global levels, and the mean and sd of the per-system (item) ones."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        out = {}
        for name, level in (("rho_sys", "system"), ("r_input", "input"), ("r_global", "global")):
            out[name] = float(level_values(x, z, level, "pearson").value[0])
        item = level_values(x, z, "item", "pearson").group[0]
        ok = np.isfinite(item)
        out["mu_rho_item"] = float(item[ok].mean()) if ok.any() else np.nan
        out["sigma_rho_item"] = float(np.std(item[ok], ddof=1)) if ok.sum() > 1 else np.nan
        out["n_item_dropped"] = int((~ok).sum())
    return out


def with_item_sigmas(p: dict) -> dict:
    """The point ``p`` with the within-system standard deviations it leaves unset (None) equal to
    those of the system means, ``sigma_m``/``sigma_h`` (paper 000 section 4.2)."""
    if p["sigma_item_m"] is None:
        p["sigma_item_m"] = p["sigma_m"]
    if p["sigma_item_h"] is None:
        p["sigma_item_h"] = p["sigma_h"]
    return p


# --------------------------------------------------------------------------
# the scores of one iteration


def draw_scores(
    *,
    rho_sys=0.8,
    mu_rho_item=0.4,
    sigma_rho_item=0.15,
    mu_m=0.0,
    mu_h=0.0,
    sigma_m=0.15,
    sigma_h=0.10,
    sigma_item_m=None,
    sigma_item_h=None,
    n_systems=15,
    n_inputs=200,
    c_m=None,
    c_h=None,
    n_discretizations=1,
    iteration=0,
    rng=None,
):
    """The scores of one iteration of :func:`metaeval.simulate` (same seed, same
    numbers): metric X and human Z of shape (N, M), or, with ``c_m`` or
    ``c_h``, their (T2, N, M) discretized versions (codes 0..C-1 as float;
    a continuous side is repeated).  Importable as ``metaeval.simulation.draw_scores``.

    Examples
    --------
    >>> x, z = draw_scores(n_systems=3, n_inputs=4, c_m=3, c_h=3, rng=0)
    >>> x.shape, sorted(set(x.ravel().tolist())) <= [0.0, 1.0, 2.0]
    ((1, 3, 4), True)
    """
    params = dict(
        rho_sys=rho_sys,
        mu_rho_item=mu_rho_item,
        sigma_rho_item=sigma_rho_item,
        mu_m=mu_m,
        mu_h=mu_h,
        sigma_m=sigma_m,
        sigma_h=sigma_h,
        sigma_item_m=sigma_item_m,
        sigma_item_h=sigma_item_h,
        n_systems=n_systems,
        n_inputs=n_inputs,
        c_m=c_m,
        c_h=c_h,
    )
    for k, v in params.items():
        if isinstance(v, (list, tuple, range, np.ndarray)):
            raise ParameterError(f"draw_scores: {k} must be a single value, not a list")
    p = with_item_sigmas({k: PARAMETER_CHECKS[k](v) for k, v in params.items()})
    T2 = check_int(n_discretizations, "n_discretizations", 1)
    t = check_int(iteration, "iteration", 0)
    ss, _ = seed_sequence(rng)
    x, z = model_scores(p, *draw_standard(ss, p["n_systems"], p["n_inputs"], t))
    if p["c_m"] is None and p["c_h"] is None:
        return x, z
    if p["c_m"] is not None:
        u = draw_threshold_uniforms(ss, "metric", p["c_m"], t, T2)
        x = discretize(x, thresholds_from_uniforms(u, p["mu_m"], p["sigma_m"])).astype(float)
    else:
        x = np.repeat(x[None], T2, axis=0)
    if p["c_h"] is not None:
        u = draw_threshold_uniforms(ss, "human", p["c_h"], t, T2)
        z = discretize(z, thresholds_from_uniforms(u, p["mu_h"], p["sigma_h"])).astype(float)
    else:
        z = np.repeat(z[None], T2, axis=0)
    return x, z
