"""The statistical simulation of correlation measures, and parameter estimation.

Seed paper 000 (section 4, Algorithm 1) asks how the correlation measures
(level x coefficient) behave when the metric's agreement with humans is
controlled at the system level (``rho_sys``) and within systems
(``mu_rho_item``), and when scores are discretized to a given scale size
(``c_m``, ``c_h``).  :func:`simulate` runs Algorithm 1 on a grid of
parameters; :data:`PAPER_GRIDS` and :func:`simulate_paper_grid` hold the
paper's grids (section 4.2); :func:`estimate_parameters` estimates the
model's parameters from a dataset (the paper's appendix Tables 5 and 6) and
:func:`simulate_dataset` runs the simulation at those estimates, so users see
how the measures behave at their scale size, N and M.

The model (paper section 4.1), for N systems and M inputs::

    (mu_i^m, mu_i^h) ~ BVN(mu^m, mu^h, sigma^m, sigma^h, rho_sys)      i = 1..N
    rho_i            ~ Normal(mu_rho_item, sigma_rho_item) truncated to [-1, 1]
    (x_ij, z_ij)     ~ BVN(mu_i^m, mu_i^h, sigma_i^m, sigma_i^h, rho_i) j = 1..M

x is the metric, z the human score.  Discretization (paper section 4.1,
after Onoshima et al. 2019): C^m - 1 thresholds ~ U(mu^m - sigma^m,
mu^m + sigma^m) and C^h - 1 thresholds ~ U(mu^h - sigma^h, mu^h + sigma^h)
(the paper's U(-sigma, sigma), centred on its mu = 0); every value is
replaced by its category index, the number of thresholds at or below it
(:func:`discretize`).

The model's arrays-in, arrays-out building blocks (the draws, the model, the
truncated-normal quantile, discretization) are :mod:`metaeval.stats.generative`;
:func:`discretize` and :func:`truncated_normal_ppf` are re-exported here.

See ``docs/simulation.md`` for the design, the grids, the reproduction of
the paper's Table 5 and a comparison with its Figures 1 and 2.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from ._parallel import Checkpoint, check_n_jobs, run_units
from ._results import _Collection, _Result, _Table
from ._signature import make_signature
from ._stacklevel import user_stacklevel
from .data import sysscores as _sys
from .data import accepts_frames, fmt_items
from ._vocab import (
    check_choice,
    check_int,
    human_column,
    metric_columns,
)
from .stats.coefficients import check_method_levels
from .errors import ConstantInputWarning, DataError, ParameterError
from .stats import resampling as _rs
from .stats.codes import (
    arranged_measures,
    code_measures,
    generic_measures,
    kendall_stats_from_codes,
    ranks_from_codes,
)
from .stats.generative import (
    PARAMETER_CHECKS as _CHECKS,
    discretize,
    draw_scores,  # noqa: F401  (public here: the scores of one iteration of simulate)
    draw_standard,
    draw_threshold_uniforms,
    model_scores,
    thresholds_from_uniforms,
    truncated_normal_ppf,
    with_item_sigmas,
)
from .stats.levels import LEVELS, check_average, check_level

# --------------------------------------------------------------------------
# vocabulary

#: Parameters of the continuous model (one grid point = one value of each).
MODEL_PARAMETERS = (
    "n_systems",
    "n_inputs",
    "rho_sys",
    "mu_rho_item",
    "sigma_rho_item",
    "mu_m",
    "mu_h",
    "sigma_m",
    "sigma_h",
    "sigma_item_m",
    "sigma_item_h",
)
#: Scale sizes (``None``: continuous, no discretization).
SCALE_PARAMETERS = ("c_m", "c_h")
#: Columns describing a grid point in :meth:`Simulation.to_frame`.
POINT_COLUMNS = MODEL_PARAMETERS + SCALE_PARAMETERS + ("n_iterations", "n_discretizations")

#: Restrictions of the (c_m, c_h) grid.
SCALE_RESTRICTIONS = ("all", "equal", "metric_ge_human")
#: ``engine="auto"`` uses the counting fast path on discretized data;
#: ``"generic"`` calls :func:`metaeval.stats.levels.level_values` for every
#: measure (its slow twin).
ENGINES = ("auto", "generic")

DEFAULT_METHODS = ("pearson", "spearman", "kendall_b")

# Section 4.2 of paper 000.
_PAPER_RHOS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
PAPER_SIZES = ((15, 200), (5, 100))

#: The paper's grids (section 4.2), as keyword arguments of :func:`simulate`.
#: ``levels``: Figure 1 (and 3); ``scale-equal``: Figure 2 (and 4);
#: ``scale-ge``: Figures 5 and 6.  The other parameters are the section 4.2
#: defaults of :func:`simulate`.
PAPER_GRIDS = {
    "levels": {
        "rho_sys": _PAPER_RHOS,
        "mu_rho_item": _PAPER_RHOS,
        "c_m": None,
        "c_h": None,
        "n_iterations": 1000,
        "sizes": PAPER_SIZES,
    },
    "scale-equal": {
        "rho_sys": 0.8,
        "mu_rho_item": 0.4,
        "c_m": (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20),
        "c_h": (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20),
        "scale": "equal",
        "n_iterations": 100,
        "n_discretizations": 100,
        "sizes": PAPER_SIZES,
    },
    "scale-ge": {
        "rho_sys": 0.8,
        "mu_rho_item": 0.4,
        "c_m": (3, 5, 10, 50, 100),
        "c_h": (3, 5, 10, 50, 100),
        "scale": "metric_ge_human",
        "n_iterations": 100,
        "n_discretizations": 100,
        "sizes": PAPER_SIZES,
    },
}

# Iterations per work unit (continuous points are batched over iterations;
# discretized ones over the T2 threshold draws of an iteration), and grid
# points per work unit.  Scheduling only: results do not depend on them.
_BLOCK_CONTINUOUS = 100
_BLOCK_DISCRETIZED = 10
_POINTS_PER_UNIT = 16
# Batch size of the measure computations inside a unit: small batches keep
# temporaries small (fresh large arrays cost page faults).
_SUB_BATCH = 25



# --------------------------------------------------------------------------
# validation and the grid


def _is_axis(v):
    return isinstance(v, (list, tuple, range, np.ndarray))


def _axis(v, name):
    vals = list(v) if _is_axis(v) else [v]
    if not vals:
        raise ParameterError(f"{name} is an empty list; give a value or a non-empty list")
    return list(dict.fromkeys(vals))


def _measures(level, method):
    levels = [check_level(v) for v in _axis(level, "level")]
    methods = _axis(method, "method")
    out = []
    for m in methods:
        check_method_levels(m, levels)
    for lv in levels:
        for m in methods:
            out.append((lv, m))
    return tuple(dict.fromkeys(out))


def _scale_ok(cm, ch, scale):
    if scale == "all":
        return True
    inf = math.inf
    cm = inf if cm is None else cm
    ch = inf if ch is None else ch
    return cm == ch if scale == "equal" else cm >= ch


def _expand_grid(params: dict, sizes, scale, n_iterations, n_discretizations, labels=None):
    """The list of grid points (dicts) in a fixed order: sizes, then the
    parameters in the order of ``MODEL_PARAMETERS`` and ``c_m``, ``c_h``."""
    check_choice(scale, "scale", SCALE_RESTRICTIONS)
    axes = {}
    for name in MODEL_PARAMETERS[2:] + SCALE_PARAMETERS:
        axes[name] = [_CHECKS[name](v) for v in _axis(params[name], name)]
    if sizes is not None:
        if params.get("n_systems") is not None or params.get("n_inputs") is not None:
            raise ParameterError("give either sizes=[(N, M), ...] or n_systems/n_inputs, not both")
        pairs = sizes
        if isinstance(sizes, tuple) and len(sizes) == 2 and not any(map(_is_axis, sizes)):
            pairs = [sizes]  # one (N, M) pair
        size_list = []
        for pair in _axis(pairs, "sizes"):
            if not _is_axis(pair) or len(pair) != 2:
                raise ParameterError(f"sizes: {pair!r} is not an (n_systems, n_inputs) pair")
            # the pair is named: sizes=[(1, 200)] is where n_systems=1 came from
            where = f"sizes {tuple(pair)!r}: "
            try:
                size_list.append(
                    (check_int(pair[0], "n_systems", 2, option="--sizes NxM"),
                     check_int(pair[1], "n_inputs", 2, option="--sizes NxM"))
                )
            except ParameterError as exc:
                raise ParameterError(where + str(exc)) from None
        size_list = list(dict.fromkeys(size_list))
    else:
        ns = [
            check_int(v, "n_systems", 2)
            for v in _axis(_default(params.get("n_systems"), 15), "n_systems")
        ]
        ni = [
            check_int(v, "n_inputs", 2)
            for v in _axis(_default(params.get("n_inputs"), 200), "n_inputs")
        ]
        size_list = list(itertools.product(ns, ni))
    T1 = check_int(n_iterations, "n_iterations", 1)
    T2 = check_int(n_discretizations, "n_discretizations", 1)
    points = []
    names = list(axes)
    for (N, M), combo in itertools.product(size_list, itertools.product(*axes.values())):
        p = dict(zip(names, combo))
        if not _scale_ok(p["c_m"], p["c_h"], scale):
            continue
        p["n_systems"], p["n_inputs"] = N, M
        with_item_sigmas(p)
        p["n_iterations"] = T1
        discrete = p["c_m"] is not None or p["c_h"] is not None
        p["n_discretizations"] = T2 if discrete else 1
        point = {k: p[k] for k in POINT_COLUMNS}
        if labels:
            point = {**labels, **point}
        points.append(point)
    if not points:
        raise ParameterError(
            f"the grid is empty: no (c_m, c_h) combination satisfies scale={scale!r} "
            f"(c_m={axes['c_m']}, c_h={axes['c_h']}"
            f"{'; None is a continuous scale, the finest' if None in axes['c_m'] + axes['c_h'] else ''})"
        )
    # duplicates (e.g. sigma_item None next to an explicit equal value)
    seen = {}
    for pt in points:
        seen.setdefault(tuple(pt.items()), pt)
    return list(seen.values())


def _default(v, d):
    return d if v is None else v


# --------------------------------------------------------------------------
# work units


@dataclass(frozen=True)
class _Config:
    ss: np.random.SeedSequence
    measures: tuple
    average: str
    engine: str


def _model_key(p):
    return tuple(p[k] for k in MODEL_PARAMETERS)


@contextlib.contextmanager
def _sequential_kernels():
    """Run the numba kernels on one thread inside a work unit (restored
    after): parallelism comes from ``n_jobs`` worker processes.  Threads
    inside many small kernel calls lose more to synchronisation than they
    gain, badly so on a shared machine."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)


def _unit_work(cfg: _Config, unit):
    """One work unit: iterations ``t0 <= t < t1`` of the grid points
    ``points`` (all of size (N, M)).  A pure function of the seed, the
    points and the iteration range; returns ``{index: (values, dropped)}``
    with values (K, t1 - t0, T2) and dropped groups summed (K,)."""
    N, M, t0, t1, points = unit
    K = len(cfg.measures)
    out = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"), _sequential_kernels():
        warnings.simplefilter("ignore", RuntimeWarning)
        draws = [draw_standard(cfg.ss, N, M, t) for t in range(t0, t1)]
        cont = [(i, p) for i, p in points if p["c_m"] is None and p["c_h"] is None]
        disc = [(i, p) for i, p in points if not (p["c_m"] is None and p["c_h"] is None)]
        for i, p in cont:
            vals = np.empty((K, t1 - t0, 1))
            drop = np.zeros(K, np.int64)
            # batches of iterations (small batches keep temporaries small)
            for s0 in range(0, t1 - t0, _SUB_BATCH):
                part = draws[s0 : s0 + _SUB_BATCH]
                x, z = model_scores(p, *(np.stack([d[j] for d in part]) for j in range(3)))
                if cfg.engine == "generic":
                    v, dr = generic_measures(x, z, cfg.measures, cfg.average)
                else:
                    v, dr = arranged_measures(x, z, cfg.measures, cfg.average)
                vals[:, s0 : s0 + len(part), 0] = v
                drop += dr.sum(-1)
            out[i] = (vals, drop)
        for i, p in disc:
            T2 = p["n_discretizations"]
            vals = np.empty((K, t1 - t0, T2))
            drop = np.zeros(K, np.int64)
            for r, t in enumerate(range(t0, t1)):
                x, z = model_scores(p, *draws[r])
                v, dr = _discretized_iteration(cfg, p, x, z, t)
                vals[:, r, :] = v
                drop += dr.sum(-1)
            out[i] = (vals, drop)
    return out


def _discretized_iteration(cfg, p, x, z, t):
    """The T2 discretizations of one iteration, in batches of _SUB_BATCH."""
    T2 = p["n_discretizations"]
    cm, ch = p["c_m"], p["c_h"]
    um = draw_threshold_uniforms(cfg.ss, "metric", cm, t, T2) if cm is not None else None
    uh = draw_threshold_uniforms(cfg.ss, "human", ch, t, T2) if ch is not None else None
    K = len(cfg.measures)
    vals = np.empty((K, T2))
    drop = np.empty((K, T2), np.int64)
    for s0 in range(0, T2, _SUB_BATCH):
        s1 = min(T2, s0 + _SUB_BATCH)
        xc = zc = None
        if cm is not None:
            xc = discretize(x, thresholds_from_uniforms(um[s0:s1], p["mu_m"], p["sigma_m"]))
        if ch is not None:
            zc = discretize(z, thresholds_from_uniforms(uh[s0:s1], p["mu_h"], p["sigma_h"]))
        if cfg.engine == "auto" and xc is not None and zc is not None:
            v, dr = code_measures(xc, zc, cm, ch, cfg.measures, cfg.average)
        else:
            shape = (s1 - s0,) + x.shape
            xf = xc.astype(float) if xc is not None else np.broadcast_to(x, shape)
            zf = zc.astype(float) if zc is not None else np.broadcast_to(z, shape)
            if cfg.engine == "generic":
                v, dr = generic_measures(xf, zf, cfg.measures, cfg.average)
            else:
                v, dr = arranged_measures(
                    np.ascontiguousarray(xf), np.ascontiguousarray(zf), cfg.measures, cfg.average
                )
        vals[:, s0:s1] = v
        drop[:, s0:s1] = dr
    return vals, drop


def _units(points):
    """Group points by size and kind, chunk them and their iterations."""
    groups = {}
    for i, p in enumerate(points):
        discrete = p["c_m"] is not None or p["c_h"] is not None
        key = (p["n_systems"], p["n_inputs"], discrete, p["n_iterations"])
        groups.setdefault(key, []).append((i, p))
    units = []
    for (N, M, discrete, T1), items in groups.items():
        if discrete:  # points sharing the continuous model together
            items = sorted(items, key=lambda ip: (_model_key(ip[1]), ip[0]))
        block = _BLOCK_DISCRETIZED if discrete else _BLOCK_CONTINUOUS
        for c0 in range(0, len(items), _POINTS_PER_UNIT):
            chunk = tuple(items[c0 : c0 + _POINTS_PER_UNIT])
            for t0 in range(0, T1, block):
                units.append((N, M, t0, min(T1, t0 + block), chunk))
    return units


# --------------------------------------------------------------------------
# results


def _summary(vals):
    """statistic, std, se, n_values, n_nan of (T1, T2) values.

    ``statistic`` is the mean of the finite values (Algorithm 1's AVG(R));
    ``std`` their standard deviation (ddof=1); ``se`` the standard error of
    the statistic with iterations as the independent units (the T2 values of
    one iteration share X and Z): with S_t, n_t the sum and count of finite
    values in iteration t and T the iterations with n_t > 0,
    ``se = sqrt(T / (T - 1) * sum_t (S_t - n_t * statistic)^2) / sum_t n_t``,
    which is ``std / sqrt(T1)`` without discretization and the standard
    error of the T1 iteration means when nothing is NaN.
    """
    ok = np.isfinite(vals)
    n_t = ok.sum(-1)
    n = int(n_t.sum())
    n_nan = int(vals.size - n)
    if n == 0:
        return np.nan, np.nan, np.nan, 0, n_nan
    v = np.where(ok, vals, 0.0)
    s_t = v.sum(-1)
    mean = float(s_t.sum() / n)
    std = float(np.sqrt(((v - mean) ** 2 * ok).sum() / (n - 1))) if n > 1 else np.nan
    T = int((n_t > 0).sum())
    if T > 1:
        se = float(np.sqrt(T / (T - 1) * ((s_t - n_t * mean) ** 2).sum()) / n)
    else:
        se = np.nan
    return mean, std, se, n, n_nan


def _fmt_param(v):
    if v is None:
        return "cont"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _row_signature(point, level, method, average, seed):
    return make_signature(
        human=point.get("human"),
        level=level,
        method=method,
        avg=average if level in ("input", "item") else None,
        nan="finite-mean",
        seed=seed,
        sim="alg1",
        N=point["n_systems"],
        M=point["n_inputs"],
        rho_sys=_fmt_param(point["rho_sys"]),
        mu_rho_item=_fmt_param(point["mu_rho_item"]),
        sigma_rho_item=_fmt_param(point["sigma_rho_item"]),
        mu=(_fmt_param(point["mu_m"]), _fmt_param(point["mu_h"])),
        sigma=(_fmt_param(point["sigma_m"]), _fmt_param(point["sigma_h"])),
        sigma_item=(_fmt_param(point["sigma_item_m"]), _fmt_param(point["sigma_item_h"])),
        C=(_fmt_param(point["c_m"]), _fmt_param(point["c_h"])),
        disc="unif-mu-sigma" if point["c_m"] is not None or point["c_h"] is not None else None,
        T=(point["n_iterations"], point["n_discretizations"]),
        metric=point.get("metric"),
    )


@dataclass(frozen=True, eq=False)
class Simulation(_Table):
    """The results of :func:`simulate`: P grid points x K measures.

    Attributes
    ----------
    points : tuple of dict
        The parameters of each grid point (keys :data:`POINT_COLUMNS`,
        plus ``human`` and ``metric`` from :func:`simulate_dataset`);
        ``c_m``/``c_h`` are None for continuous scores.
    measures : tuple of (level, method)
    statistic : ndarray (P, K)
        Mean over the iterations' finite values (Algorithm 1's AVG(R)).
    std : ndarray (P, K)
        Standard deviation (ddof=1) of the finite values.
    se : ndarray (P, K)
        Standard error of ``statistic``, iterations as the independent
        units (see ``docs/simulation.md``).
    n_values, n_nan : ndarray of int (P, K)
        Finite values used; undefined (NaN) values left out (constant
        discretized scores at system or global level, or every group
        constant at input or item level).
    n_groups_dropped : ndarray of int (P, K)
        Groups (systems at ``item``, inputs at ``input``) left out of the
        averages because their coefficient was undefined, summed over all
        values; at ``system``/``global`` level the undefined values.
    average : str
        Averaging at the ``input`` and ``item`` levels.
    seed : str
        Seed entropy (from :func:`metaeval.stats.resampling.seed_sequence`).
    signature : str
        One line for the whole run.
    values : tuple of ndarray or None
        With ``keep_values=True``: per point, (K, T1, T2) raw values.
    """

    points: tuple
    measures: tuple
    statistic: np.ndarray = field(repr=False)
    std: np.ndarray = field(repr=False)
    se: np.ndarray = field(repr=False)
    n_values: np.ndarray = field(repr=False)
    n_nan: np.ndarray = field(repr=False)
    n_groups_dropped: np.ndarray = field(repr=False)
    average: str
    seed: str
    signature: str
    values: tuple | None = field(default=None, repr=False, compare=False)

    def __repr__(self):
        return (
            f"Simulation({len(self.points)} grid points x {len(self.measures)} measures, "
            f"seed={self.seed!r}, signature={self.signature!r})"
        )

    def to_frame(self) -> pd.DataFrame:
        """Tidy long table, one row per grid point x measure.

        Columns: ``human``, ``metric`` (only from :func:`simulate_dataset`),
        ``n_systems, n_inputs, rho_sys, mu_rho_item, sigma_rho_item, mu_m,
        mu_h, sigma_m, sigma_h, sigma_item_m, sigma_item_h, c_m, c_h``
        (nullable integers, <NA> = continuous), ``n_iterations,
        n_discretizations`` (1 when continuous), ``level, method,
        statistic, std, se, n_values, n_nan, n_groups_dropped,
        signature``.
        """
        rows = []
        for p, point in enumerate(self.points):
            for k, (level, method) in enumerate(self.measures):
                row = dict(point)
                row.update(
                    level=level,
                    method=method,
                    statistic=float(self.statistic[p, k]),
                    std=float(self.std[p, k]),
                    se=float(self.se[p, k]),
                    n_values=int(self.n_values[p, k]),
                    n_nan=int(self.n_nan[p, k]),
                    n_groups_dropped=int(self.n_groups_dropped[p, k]),
                    signature=_row_signature(point, level, method, self.average, self.seed),
                )
                rows.append(row)
        df = pd.DataFrame(rows)
        for c in SCALE_PARAMETERS:
            df[c] = pd.array([None if pd.isna(v) else int(v) for v in df[c]], dtype="Int64")
        return df

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict: ``signature``, ``seed``, ``average``, ``measures``,
        ``points`` and the frame's ``rows`` (and raw ``values`` as nested
        lists with ``arrays=True``)."""
        df = self.to_frame()
        rows = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        d = {
            "signature": self.signature,
            "seed": self.seed,
            "average": self.average,
            "measures": [list(m) for m in self.measures],
            "points": [dict(p) for p in self.points],
            "rows": rows,
        }
        if arrays:
            d["values"] = None if self.values is None else [v.tolist() for v in self.values]
        return d

    def get(self, level: str, method: str, **params) -> dict:
        """The single frame row of (level, method) at the grid point
        matching ``params`` (e.g. ``c_m=5``), as a dict."""
        df = self.to_frame()
        mask = (df["level"] == level) & (df["method"] == method)
        for k, v in params.items():
            if k not in df.columns:
                raise ParameterError(
                    f"unknown grid parameter {k!r}; known: {', '.join(POINT_COLUMNS)}"
                )
            mask &= df[k].isna() if v is None else (df[k] == v)
        hits = df[mask]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} rows match level={level!r}, method={method!r}, {params}")
        return hits.iloc[0].to_dict()


def _signature(points, average, seed):
    return make_signature(
        avg=average,
        nan="finite-mean",
        seed=seed,
        sim="alg1",
        streams="crn",
        disc="unif-mu-sigma",
        points=len(points),
    )


def _warn_nan(res: Simulation):
    total_nan = int(res.n_nan.sum())
    if total_nan:
        worst = np.unravel_index(np.argmax(res.n_nan), res.n_nan.shape)
        lv, me = res.measures[worst[1]]
        p = res.points[worst[0]]
        warnings.warn(
            f"{total_nan} of {int(res.n_nan.sum() + res.n_values.sum())} simulated values were "
            "undefined (NaN: constant discretized scores); each statistic is the mean over "
            f"the finite values (counted in n_nan); most at level={lv!r}, method={me!r}, "
            f"c_m={p['c_m']}, c_h={p['c_h']}, N={p['n_systems']}, M={p['n_inputs']} "
            f"({int(res.n_nan[worst])} values)",
            ConstantInputWarning,
            stacklevel=user_stacklevel(),
        )
    grouped = np.array([lv in ("input", "item") for lv, _ in res.measures])
    total_drop = int(res.n_groups_dropped[:, grouped].sum()) if grouped.any() else 0
    if total_drop:
        warnings.warn(
            f"{total_drop} groups at level input/item had constant discretized scores; they "
            "were left out of their averages (counted in n_groups_dropped)",
            ConstantInputWarning,
            stacklevel=user_stacklevel(),
        )


def _unit_name(unit):
    N, M, t0, t1, chunk = unit
    return f"N={N}|M={M}|t={t0}-{t1}|points={','.join(str(i) for i, _ in chunk)}"


def _run(
    points, *, measures, average, engine, keep_values, rng, n_jobs, dask, checkpoint, progress
):
    check_choice(engine, "engine", ENGINES)
    ss, tag = _rs.seed_sequence(rng)
    cfg = _Config(ss, measures, average, engine)
    units = _units(points)
    if n_jobs is None:
        # all local cores when there is enough work to pay for the workers
        n_jobs = -1 if len(units) > 2 else 1
    check_n_jobs(n_jobs)
    if checkpoint is not None and rng is None:
        raise ParameterError(
            "checkpoint= needs an explicit seed (rng=...): a resumed run must draw the same "
            "random numbers as the interrupted one"
        )
    if checkpoint is not None:
        key = {
            "analysis": "simulate",
            "signature": _signature(points, average, tag),
            "engine": engine,
            "measures": [list(m) for m in measures],
            "points": [dict(p) for p in points],
        }
        checkpoint = (
            checkpoint.for_run(key)
            if isinstance(checkpoint, Checkpoint)
            else Checkpoint(checkpoint, key)
        )
    parts = run_units(
        functools.partial(_unit_work, cfg),
        units,
        n_jobs=n_jobs,
        progress=progress,
        names=[_unit_name(u) for u in units],
        checkpoint=checkpoint,
        dask=dask,
    )
    K = len(measures)
    collected = {i: [] for i in range(len(points))}
    for unit, part in zip(units, parts):
        t0 = unit[2]
        for i, (v, dr) in part.items():
            collected[i].append((t0, v, dr))
    P = len(points)
    stat = np.full((P, K), np.nan)
    std = np.full((P, K), np.nan)
    se = np.full((P, K), np.nan)
    n_values = np.zeros((P, K), np.int64)
    n_nan = np.zeros((P, K), np.int64)
    n_drop = np.zeros((P, K), np.int64)
    values = []
    for i in range(P):
        blocks = sorted(collected[i], key=lambda b: b[0])
        v = np.concatenate([b[1] for b in blocks], axis=1)  # (K, T1, T2)
        n_drop[i] = np.sum([b[2] for b in blocks], axis=0)
        for k in range(K):
            stat[i, k], std[i, k], se[i, k], n_values[i, k], n_nan[i, k] = _summary(v[k])
        if keep_values:
            values.append(v)
    res = Simulation(
        points=tuple(points),
        measures=measures,
        statistic=stat,
        std=std,
        se=se,
        n_values=n_values,
        n_nan=n_nan,
        n_groups_dropped=n_drop,
        average=average,
        seed=tag,
        signature=_signature(points, average, tag),
        values=tuple(values) if keep_values else None,
    )
    _warn_nan(res)
    return res


def simulate(
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
    n_systems=None,
    n_inputs=None,
    sizes=None,
    c_m=None,
    c_h=None,
    scale: str = "all",
    n_iterations: int = 100,
    n_discretizations: int = 100,
    level=LEVELS,
    method=DEFAULT_METHODS,
    average: str = "macro",
    engine: str = "auto",
    keep_values: bool = False,
    rng=None,
    n_jobs: int | None = None,
    dask=None,
    checkpoint=None,
    progress=None,
) -> Simulation:
    """Run the statistical simulation of seed paper 000 (Algorithm 1) on a grid.

    For each of ``n_iterations`` (T1) iterations, scores of N systems on M
    inputs are drawn from the two-level model (paper section 4.1)::

        (mu_i^m, mu_i^h) ~ BVN(mu_m, mu_h, sigma_m, sigma_h, rho_sys)
        rho_i ~ Normal(mu_rho_item, sigma_rho_item) truncated to [-1, 1]
        (x_ij, z_ij) ~ BVN(mu_i^m, mu_i^h, sigma_item_m, sigma_item_h, rho_i)

    (BVN(m1, m2, s1, s2, r): bivariate normal with means m, standard
    deviations s and correlation r).  Without discretization every measure
    is computed once per iteration.  With discretization (``c_m`` and/or
    ``c_h`` set) it is computed ``n_discretizations`` (T2) times per
    iteration, each time on X and Z discretized with freshly drawn
    thresholds: ``c_m - 1`` from U(mu_m - sigma_m, mu_m + sigma_m) for the
    metric, ``c_h - 1`` from U(mu_h - sigma_h, mu_h + sigma_h) for the
    human scores (the paper's U(-sigma, sigma), which assumes mu = 0), each
    value replaced by the number of thresholds at or below it (0..C-1;
    :func:`discretize`).  A measure's result is the mean of its T1 (x T2)
    values (Algorithm 1's AVG(R)), over the finite ones.

    Every model parameter accepts a value or a list; the grid is the
    Cartesian product (N and M also as ``sizes`` pairs).

    Parameters
    ----------
    rho_sys : float or list
        Correlation of the system means, in [-1, 1].
    mu_rho_item : float or list
        Mean of the within-system correlations rho_i, in [-1, 1].  It is the
        mean before truncation to [-1, 1]; rho_i is drawn by inverse CDF
        (:func:`truncated_normal_ppf`).
    sigma_rho_item : float or list
        Standard deviation of the within-system correlations rho_i, >= 0 (0
        makes every rho_i equal mu_rho_item).  It is the spread before
        truncation to [-1, 1].
    mu_m : float or list
        Mean of the metric's system means (paper 000 section 4.2: 0).
    mu_h : float or list
        Mean of the human system means (section 4.2: 0).
    sigma_m : float or list
        Standard deviation (> 0) of the metric's system means (section 4.2: 0.15).
    sigma_h : float or list
        Standard deviation (> 0) of the human system means (section 4.2: 0.10).
    sigma_item_m : float or list, optional
        Within-system standard deviation of the metric scores, the same for every system
        (default: equal to ``sigma_m``, section 4.2).
    sigma_item_h : float or list, optional
        Within-system standard deviation of the human scores, the same for every system
        (default: equal to ``sigma_h``, section 4.2).
    n_systems, n_inputs : int or list, optional
        N >= 2 and M >= 2 (default 15 and 200), crossed.
    sizes : list of (N, M) pairs, optional
        The (N, M) pairs to run, instead of crossing ``n_systems`` and
        ``n_inputs``; the paper's settings are ``[(15, 200), (5, 100)]``.
    c_m : int, None or list
        Scale size of the metric scores: a number of categories >= 2, or
        None (continuous scores, no discretization).
    c_h : int, None or list
        Scale size of the human scores: a number of categories >= 2, or
        None (continuous scores, no discretization).
    scale : {"all", "equal", "metric_ge_human"}
        Keep all (c_m, c_h) combinations, only c_m == c_h, or only
        c_m >= c_h (None counts as infinitely fine).
    n_iterations : int
        Iterations T1 of Algorithm 1, >= 1 (the paper uses 1000 without
        discretization, 100 with it).
    n_discretizations : int
        Threshold draws T2 per iteration, >= 1 (the paper's 100); ignored
        for continuous grid points (T2 = 1 there).
    level, method : str or list
        The measures: every level x every method (default the 4 levels x
        pearson, spearman, kendall_b, the paper's 12).  Any coefficient of
        :data:`metaeval.METHODS` (validated as in :func:`metaeval.correlate`).
    average : {"macro", "micro"}
        Averaging over groups at ``input``/``item`` (the paper: macro).
    engine : {"auto", "generic"}
        ``auto``: discretized data go through a counting fast path (ranks
        and Kendall statistics from per-group counts of the codes), equal to
        the generic path; ``generic``: every measure through
        :func:`metaeval.stats.levels.level_values`.
    keep_values : bool
        Keep the raw values (``Simulation.values``).
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts.  Draws are common
        random numbers: the standard normals and uniforms of iteration t
        depend only on the seed, N, M and t (thresholds: on the seed, the
        side, C and t), so grid points differ only through their parameters,
        and a point's numbers do not depend on the rest of the grid,
        ``n_jobs`` or scheduling.
    n_jobs : int, optional
        Worker processes (joblib, :func:`metaeval._parallel.run_units`; the
        numba kernels run single-threaded inside a unit, so parallelism
        comes from ``n_jobs``).  The default ``None`` uses every local core
        when the grid has more than two work units, and runs in-process
        otherwise.  Work units are blocks of iterations of up to 16 grid
        points of the same N and M.
    dask : optional
        A Dask client or scheduler address: run the work units on that
        cluster.
    checkpoint : optional
        A folder (or :class:`~metaeval._parallel.Checkpoint`) keeping
        finished units, so that an interrupted run continues where it stopped
        (with the same arguments and seed; the result equals an
        uninterrupted run's).
    progress : callable, optional
        Called with 1 after each work unit.

    Returns
    -------
    Simulation

    Warns
    -----
    ConstantInputWarning
        When values were undefined (constant discretized scores) or groups
        were dropped from averages; both are counted in the result.

    References
    ----------
    Seed paper 000, section 4.1 (model), Algorithm 1, section 4.2 (settings).

    Examples
    --------
    >>> import metaeval.simulation as sim
    >>> res = sim.simulate(rho_sys=0.8, mu_rho_item=[0.2, 0.6], n_systems=5, n_inputs=20,
    ...                    level="item", method="pearson", n_iterations=50, rng=0)
    >>> df = res.to_frame()
    >>> [round(v, 2) for v in df["statistic"]]  # tracks E[rho_i], about mu_rho_item
    [0.21, 0.61]
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
    measures = _measures(level, method)
    average = check_average(average)
    points = _expand_grid(params, sizes, scale, n_iterations, n_discretizations)
    return _run(
        points,
        measures=measures,
        average=average,
        engine=engine,
        keep_values=keep_values,
        rng=rng,
        n_jobs=n_jobs,
        dask=dask,
        checkpoint=checkpoint,
        progress=progress,
    )


def paper_grid(name: str, **overrides) -> dict:
    """The keyword arguments of the paper's grid ``name`` (a copy of
    :data:`PAPER_GRIDS` entry), updated with ``overrides``."""
    if name not in PAPER_GRIDS:
        raise ParameterError(
            f"grid preset {name!r} is unknown; choose one of {', '.join(PAPER_GRIDS)}"
        )
    kw = dict(PAPER_GRIDS[name])
    if "n_systems" in overrides or "n_inputs" in overrides:
        kw.pop("sizes", None)
    kw.update(overrides)
    return kw


def simulate_paper_grid(name: str, **overrides) -> Simulation:
    """Run one of the paper's grids (:data:`PAPER_GRIDS`: ``levels``,
    ``scale-equal``, ``scale-ge``) with :func:`simulate`; keyword
    ``overrides`` replace the preset's values (e.g. ``sizes=[(15, 200)]``,
    ``n_iterations=100``, ``rng=0``, ``n_jobs=2``).

    Examples
    --------
    >>> sorted(PAPER_GRIDS)
    ['levels', 'scale-equal', 'scale-ge']
    >>> simulate_paper_grid("figure-9")
    Traceback (most recent call last):
    ...
    metaeval.errors.ParameterError: grid preset 'figure-9' is unknown; choose one of levels, scale-equal, scale-ge
    """
    return simulate(**paper_grid(name, **overrides))


# --------------------------------------------------------------------------
# parameter estimation (paper 000, appendix Tables 5 and 6)


@dataclass(frozen=True)
class ColumnEstimate(_Result):
    """Estimated simulation parameters of one score column.

    Attributes
    ----------
    column : str
    role : {"human", "metric"}
    human : str or None
        The human column the correlations refer to (metric rows).
    n_systems, n_inputs, n_cells : int
        N, M, and the finite cells.
    min, max : float
        The observed range of the raw scores.
    scale_low, scale_high : float
        The bounds of the normalization ``(x - scale_low) / (scale_high -
        scale_low)``: the rating scale's bounds when declared (``bounds``
        argument of :func:`estimate_parameters`), else the observed range.
    bounds : {"declared", "observed"}
        Which of the two: with ``"observed"``, a scale whose extreme values
        never occur is stretched to [0, 1], so ``mu`` and ``sigma`` are not
        comparable with the paper's tables (declare the bounds).
    mu : float
        Mean of the normalized cells (Table 5/6 mu-hat).
    sigma : float
        Standard deviation (ddof=1) of the N system means of the normalized
        scores (Table 5/6 sigma-hat; the model's sigma^m / sigma^h).
    sigma_item : float
        Pooled within-system standard deviation, sqrt of the mean over
        systems of the within-system variances (ddof=1): the model's
        sigma_i (not in the paper's tables).
    n_unique : int
        Distinct raw values over all cells.
    tie_ratio : float
        Share of tied pairs among all pairs of cells:
        ``sum_v k_v (k_v - 1) / 2 / (n (n - 1) / 2)``, k_v the count of value v.
    rho_sys : float
        System-level Pearson with the human column (metric rows).
    mu_rho_item, sigma_rho_item : float
        Mean and standard deviation (ddof=1) of the per-system Pearson
        correlations (the item level; defined systems only).
    r_input, r_global : float
        Input-level and global Pearson: the paper's Table 6 r_N-bar
        (correlation over the N systems averaged over inputs) and r_NxM.
    n_item_dropped : int
        Systems whose item-level Pearson is undefined (constant scores).
    signature : str
    """

    column: str
    role: str
    human: str | None
    n_systems: int
    n_inputs: int
    n_cells: int
    min: float
    max: float
    scale_low: float
    scale_high: float
    bounds: str
    mu: float
    sigma: float
    sigma_item: float
    n_unique: int
    tie_ratio: float
    rho_sys: float
    mu_rho_item: float
    sigma_rho_item: float
    r_input: float
    r_global: float
    n_item_dropped: int
    signature: str


@dataclass(frozen=True)
class ParameterEstimates(_Collection):
    """The results of :func:`estimate_parameters`: one :class:`ColumnEstimate`
    per human column and per (metric, human) pair.

    ``to_frame()`` has one row per estimate with the columns of
    :class:`ColumnEstimate`: ``column, role, human, n_systems, n_inputs,
    n_cells, min, max, mu, sigma, sigma_item, n_unique, tie_ratio, rho_sys,
    mu_rho_item, sigma_rho_item, r_input, r_global, n_item_dropped,
    signature`` (correlation columns NaN on human rows).
    """

    results: tuple

    _item: ClassVar[type] = ColumnEstimate
    _key: ClassVar[str] = "column"

    def get(self, column: str, *, human: str | None = None) -> ColumnEstimate:
        """The estimate of ``column`` (for a metric: against ``human``)."""
        hits = [r for r in self.results if r.column == column]
        if human is not None:
            hits = [r for r in hits if r.human == human]
        elif len(hits) > 1:
            hits = [r for r in hits if r.human is None] or hits
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} estimates match column={column!r}, human={human!r}")
        return hits[0]

    @property
    def signature(self) -> str:
        return self.results[0].signature if self.results else _EST_SIGNATURE()

    def to_dict(self, *, arrays: bool = False) -> dict:
        return {"signature": self.signature, "results": self.to_records(arrays=arrays)}


def _EST_SIGNATURE(declared=False):
    return make_signature(
        nan="pairwise",
        norm="scale-bounds" if declared else "minmax",
        mu="cells",
        sigma="sysmeans:ddof1",
        ties="cell-pairs",
        corr="pearson",
    )


# the estimators of one column's and one pair's parameters are in stats.generative, beside
# the model they estimate
from .stats.generative import column_stats as _column_stats  # noqa: E402
from .stats.generative import correlation_stats as _corr_stats  # noqa: E402


def _check_bounds(bounds, columns):
    """``bounds`` as {column: (low, high) or None}: a pair applies to every column."""
    if bounds is None:
        return {c: None for c in columns}
    if isinstance(bounds, dict):
        unknown = [c for c in bounds if c not in columns]
        if unknown:
            raise ParameterError(f"bounds: unknown column(s) {', '.join(map(repr, unknown))}; "
                                 f"columns estimated: {', '.join(map(repr, columns))}")
        pairs = {c: bounds.get(c) for c in columns}
    else:
        pairs = {c: bounds for c in columns}
    out = {}
    for c, b in pairs.items():
        if b is None:
            out[c] = None
            continue
        try:
            lo, hi = (float(v) for v in b)
        except (TypeError, ValueError):
            raise ParameterError(f"bounds of {c!r}: give (low, high) numbers, got {b!r}") from None
        if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
            raise ParameterError(f"bounds of {c!r}: need finite low < high, got ({lo}, {hi})")
        out[c] = (lo, hi)
    return out


@accepts_frames(human="human")
def estimate_parameters(dataset, human, *, metrics=None, bounds=None) -> ParameterEstimates:
    """Estimate the simulation's parameters from a dataset (paper 000,
    appendix Tables 5 and 6).

    Every column is normalized to [0, 1] (section 4.2: "all human scores and
    metric outputs are normalized to the 0-1 scale"), by the bounds of its
    rating scale when they are declared (``bounds``; the paper's rule, e.g.
    (x - 1) / 4 for a 1-5 scale), else by the observed range of its finite
    cells (which coincides with the scale's bounds only when both extreme
    values occur, as in SummEval; each estimate records which was used),
    then:

    * ``mu`` = mean of the normalized cells;
    * ``sigma`` = standard deviation (ddof=1) of the N system means;
    * ``n_unique`` = number of distinct values; ``tie_ratio`` = share of
      tied pairs among all pairs of cells;

    and, for a metric against a human column (Pearson, pairwise deletion):
    ``rho_sys`` (system level), ``mu_rho_item`` and ``sigma_rho_item``
    (mean and ddof=1 standard deviation of the per-system correlations:
    the item level and its spread), ``r_input`` (input level, Table 6's
    r_N-bar) and ``r_global`` (Table 6's r_NxM).  These definitions of mu,
    sigma and the tie ratio reproduce the paper's Table 5 for SummEval to
    its two decimals (with the paper's 16 systems; see
    ``docs/simulation.md``).  ``sigma_item`` (pooled within-system standard
    deviation) is added for :func:`simulate_dataset`.

    Parameters
    ----------
    dataset : Dataset
    human : str or list of str
        Human score column(s) (averaged over raters).
    metrics : str or list of str, optional
        Metric columns (default: all; ``[]`` for the human columns only).
    bounds : (low, high) or dict, optional
        The rating scale's bounds: one pair for every column, or a dict
        column -> (low, high) (columns left out use their observed range).
        Values outside declared bounds are an error (failure codes such as
        -1 in a 1-5 judge column).  The paper applies 1-5 bounds even to
        aspects rated 1-3 or 0-1 (its Table 5 gives USR "Understandable"
        mu = -0.01, only possible with a lower bound of 1 on a 0-1 scale):
        declare the bounds the raters actually used; see
        ``docs/simulation.md``.

    Returns
    -------
    ParameterEstimates
        Human rows first, then one row per metric x human column.

    Examples
    --------
    >>> import metaeval
    >>> ds = metaeval.load_dataset("summeval")
    >>> est = estimate_parameters(ds, "coherence", metrics=["ROUGE.1"])
    >>> h = est.get("coherence")
    >>> round(h.mu, 2), round(h.sigma, 2), h.n_unique, round(h.tie_ratio, 2)
    (0.61, 0.15, 13, 0.1)
    """
    humans = [human] if isinstance(human, str) else list(_axis(human, "human"))
    for h in humans:
        human_column(dataset, h)
    if metrics is None:
        metric_cols = list(dataset.metrics)
    elif _is_axis(metrics) and len(metrics) == 0:
        metric_cols = []
    else:
        metric_cols = metric_columns(dataset, metrics)
    _sys.note_ignored(dataset, "estimate_parameters")
    N, M = len(dataset.systems), len(dataset.inputs)
    scale = _check_bounds(bounds, list(dict.fromkeys(humans + metric_cols)))
    sig = _EST_SIGNATURE(any(v is not None for v in scale.values()))
    out = []
    col_cache = {}

    def stats_of(col):
        if col not in col_cache:
            try:
                col_cache[col] = _column_stats(np.asarray(dataset.scores(col), float), scale[col])
            except DataError as exc:
                raise DataError(f"column {col!r}: {exc}") from None
            if not np.isfinite(col_cache[col]["mu"]):
                warnings.warn(
                    f"column {col!r} is constant; mu and sigma are NaN",
                    ConstantInputWarning,
                    stacklevel=user_stacklevel(),
                )
        return col_cache[col]

    nan_corr = dict(
        rho_sys=np.nan,
        mu_rho_item=np.nan,
        sigma_rho_item=np.nan,
        r_input=np.nan,
        r_global=np.nan,
        n_item_dropped=0,
    )
    for h in humans:
        out.append(
            ColumnEstimate(
                column=h,
                role="human",
                human=None,
                n_systems=N,
                n_inputs=M,
                **stats_of(h),
                **nan_corr,
                signature=sig,
            )
        )
    for h in humans:
        z = dataset.scores(h)
        for m in metric_cols:
            corr = _corr_stats(dataset.scores(m), z)
            if corr["n_item_dropped"]:
                warnings.warn(
                    f"metric {m!r} vs {h!r}: {corr['n_item_dropped']} of {N} systems have constant "
                    "scores; their item-level Pearson is undefined and left out of mu_rho_item "
                    "and sigma_rho_item (counted in n_item_dropped)",
                    ConstantInputWarning,
                    stacklevel=user_stacklevel(),
                )
            role = "human" if m in dataset.human else "metric"
            out.append(
                ColumnEstimate(
                    column=m,
                    role=role,
                    human=h,
                    n_systems=N,
                    n_inputs=M,
                    **stats_of(m),
                    **corr,
                    signature=sig,
                )
            )
    return ParameterEstimates(tuple(out))


def _scale_from_unique(n_unique, max_unique, what):
    if n_unique < 2:
        raise DataError(f"{what} has {n_unique} distinct value(s); it cannot be simulated")
    return None if n_unique > max_unique else int(n_unique)


def _check_systems(dataset):
    """The model draws one mean per system: their spread (``sigma_m``, ``sigma_h``) and correlation
    (``rho_sys``) are estimated across systems, which takes at least 2."""
    n = len(dataset.systems)
    if n < 2:
        raise DataError(
            f"the data has {n} system ({fmt_items(dataset.systems)}): the simulation draws one mean per "
            "system, and the spread and correlation of the system means (sigma_m, sigma_h, rho_sys) "
            "are estimated across systems, so it needs at least 2 systems"
        )


def dataset_parameters(dataset, human, metric, *, max_unique: int = 100, bounds=None) -> dict:
    """The :func:`simulate` keyword arguments estimated for one (metric,
    human) pair: ``n_systems``, ``n_inputs``, ``mu_m``, ``mu_h``,
    ``sigma_m``, ``sigma_h`` (sd of system means), ``sigma_item_m``,
    ``sigma_item_h`` (pooled within-system sd), ``rho_sys``,
    ``mu_rho_item``, ``sigma_rho_item``, and ``c_m``, ``c_h`` = the numbers
    of distinct values, or None (continuous) above ``max_unique``.
    ``bounds``: rating-scale bounds, as in :func:`estimate_parameters`.
    """
    human_column(dataset, human)
    if not isinstance(metric, str):
        raise ParameterError(f"metric={metric!r} must be one column name")
    _check_systems(dataset)
    max_unique = check_int(max_unique, "max_unique", 2)
    if isinstance(bounds, dict):
        bounds = {c: b for c, b in bounds.items() if c in (human, metric)}
    est = estimate_parameters(dataset, human, metrics=[metric], bounds=bounds)
    h = est.get(human)
    m = est.get(metric, human=human)
    for name in ("mu", "sigma", "sigma_item"):
        for e in (h, m):
            if not (np.isfinite(getattr(e, name)) and (name == "mu" or getattr(e, name) > 0)):
                raise DataError(
                    f"column {e.column!r}: estimated {name}={getattr(e, name)!r} cannot be "
                    "simulated (constant scores, or fewer than 2 systems)"
                )
    for name in ("rho_sys", "mu_rho_item", "sigma_rho_item"):
        if not np.isfinite(getattr(m, name)):
            raise DataError(
                f"metric {metric!r} vs {human!r}: {name} is undefined (constant scores); "
                "it cannot be simulated"
            )
    return dict(
        n_systems=m.n_systems,
        n_inputs=m.n_inputs,
        rho_sys=float(np.clip(m.rho_sys, -1.0, 1.0)),
        mu_rho_item=float(np.clip(m.mu_rho_item, -1.0, 1.0)),
        sigma_rho_item=float(m.sigma_rho_item),
        mu_m=m.mu,
        mu_h=h.mu,
        sigma_m=m.sigma,
        sigma_h=h.sigma,
        sigma_item_m=m.sigma_item,
        sigma_item_h=h.sigma_item,
        c_m=_scale_from_unique(m.n_unique, max_unique, f"metric {metric!r}"),
        c_h=_scale_from_unique(h.n_unique, max_unique, f"human column {human!r}"),
    )


@accepts_frames(human="human")
def simulate_dataset(
    dataset,
    human,
    metric,
    *,
    max_unique: int = 100,
    overrides: dict | None = None,
    bounds=None,
    scale: str = "all",
    n_iterations: int = 100,
    n_discretizations: int = 100,
    level=LEVELS,
    method=DEFAULT_METHODS,
    average: str = "macro",
    engine: str = "auto",
    keep_values: bool = False,
    rng=None,
    n_jobs: int | None = None,
    dask=None,
    checkpoint=None,
    progress=None,
) -> Simulation:
    """Simulate the correlation measures at the parameters of your dataset.

    For each metric, the parameters are estimated against ``human`` with
    :func:`dataset_parameters` (N, M, means, system-level and within-system
    standard deviations, rho_sys, mu_rho_item, sigma_rho_item, and scale sizes
    from the numbers of distinct values; columns with more than
    ``max_unique`` distinct values are simulated as continuous), and
    :func:`simulate` runs at those values.  The simulated data are complete
    (N x M cells) even where the dataset has missing cells.

    Parameters
    ----------
    dataset : Dataset
    human : str
        The human column.
    metric : str or list of str
        One grid point per metric (rows carry ``human`` and ``metric``).
    overrides : dict, optional
        Replace estimated parameters, with values or lists (a grid around
        your dataset), e.g. ``{"c_h": [5, 13, None]}`` to see how a finer
        or coarser human scale would change the measures.
    max_unique : int
        Columns with more distinct values are simulated as continuous.
    bounds : (low, high) or dict, optional
        Rating-scale bounds for the normalization, as in
        :func:`estimate_parameters`.
    scale, n_iterations, n_discretizations, level, method, average, engine, keep_values
        As in :func:`simulate`.
    rng, n_jobs, dask, checkpoint, progress
        As in :func:`simulate`.

    Returns
    -------
    Simulation
    """
    metrics = [metric] if isinstance(metric, str) else _axis(metric, "metric")
    _check_systems(dataset)
    overrides = dict(overrides or {})
    unknown = [k for k in overrides if k not in MODEL_PARAMETERS + SCALE_PARAMETERS]
    if unknown:
        raise ParameterError(
            f"overrides: unknown parameter(s) {', '.join(map(str, unknown))}; "
            f"choose from {', '.join(MODEL_PARAMETERS + SCALE_PARAMETERS)}"
        )
    measures = _measures(level, method)
    average = check_average(average)
    points = []
    for m in metrics:
        params = dataset_parameters(dataset, human, m, max_unique=max_unique, bounds=bounds)
        params.update(overrides)
        points.extend(
            _expand_grid(
                params,
                None,
                scale,
                n_iterations,
                n_discretizations,
                labels={"human": human, "metric": m},
            )
        )
    return _run(
        points,
        measures=measures,
        average=average,
        engine=engine,
        keep_values=keep_values,
        rng=rng,
        n_jobs=n_jobs,
        dask=dask,
        checkpoint=checkpoint,
        progress=progress,
    )


__all__ = [
    "simulate",
    "simulate_paper_grid",
    "paper_grid",
    "simulate_dataset",
    "dataset_parameters",
    "estimate_parameters",
    "draw_scores",
    "discretize",
    "truncated_normal_ppf",
    "ranks_from_codes",
    "kendall_stats_from_codes",
    "Simulation",
    "ParameterEstimates",
    "ColumnEstimate",
    "PAPER_GRIDS",
    "PAPER_SIZES",
    "MODEL_PARAMETERS",
    "POINT_COLUMNS",
    "SCALE_RESTRICTIONS",
]
