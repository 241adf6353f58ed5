"""`metaeval simulate`: the statistical simulation of seed paper 000."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..errors import DataError
from ..report import tables as _tables
from ._api import SEED, ApiOption
from ._data import (
    FORMAT_HELP,
    _ALL_LEVELS,
    _LEVELS_HELP,
    BOUNDS_HELP,
    FORMATS,
    _layout_options,
    _levels_option,
    _load,
    _metrics,
    _split,
    parse_bounds,
)
from ._output import (
    _clean,
    _emit_csv,
    _emit_json,
    _progress,
    _run_seed,
    _save_figure,
    _show,
    _write_csv,
    _write_json,
)


def _floats(v, name):
    if v is None:
        return None
    out = []
    for t in _split(v):
        if t.lower() in ("none", "continuous"):
            out.append(None)
            continue
        try:
            out.append(float(t) if name not in ("c_m", "c_h") else int(t))
        except ValueError:
            raise click.BadParameter(f"{t!r} is not a number", param_hint=f"--{name.replace('_', '-')}")
    # one value is a scalar, except 'none' (continuous), kept as a one-point axis so that it
    # overrides a --grid preset instead of being read as "not given"
    return out[0] if len(out) == 1 and out[0] is not None else out


def _sizes(v):
    if v is None:
        return None
    out = []
    for t in _split(v):
        try:
            n, m = t.lower().split("x")
            out.append((int(n), int(m)))
        except ValueError:
            raise click.BadParameter(f"{t!r}: write sizes as NxM, e.g. 15x200,5x100",
                                     param_hint="--sizes")
    return out


def _bounds(v, human):
    """--bounds as the other commands read it (:func:`._data.parse_bounds`), LOW:HIGH being the
    scale of the --human column here -> {col: (low, high)}."""
    out = parse_bounds(v or ())
    return {human: out} if isinstance(out, tuple) else out


def _simulate_run(sim, from_data, human, metrics, grid, given, common, bounds=None, labels=("system", "input")):
    estimates = None
    if from_data:
        if not human:
            raise click.BadParameter("--from-data needs --human", param_hint="--human")
        ds = _load(from_data, labels[0], labels[1], [human], _metrics(metrics), None)
        mets = _metrics(metrics) or list(ds.metrics)
        try:
            estimates = sim.estimate_parameters(ds, human, metrics=mets, bounds=_bounds(bounds, human))
            overrides = {k: v for k, v in given.items()
                         if k in ("rho_sys", "mu_rho_item", "sigma_rho_item", "c_m", "c_h", "sizes")}
            if "sizes" in overrides:
                raise click.BadParameter("--sizes cannot be combined with --from-data (N, M come from the data)")
            kw = {k: given[k] for k in ("scale", "n_iterations", "n_discretizations") if k in given}
            res = sim.simulate_dataset(ds, human, mets, overrides=overrides or None, bounds=_bounds(bounds, human),
                                       **kw, **common)
        except DataError as exc:
            # name the file and the options that choose its columns
            raise DataError(f"--from-data {os.path.basename(from_data)}: {exc} (choose the columns with "
                            "--human and --metrics)") from None
    elif grid:
        res = sim.simulate_paper_grid(grid, **given, **common)
    else:
        res = sim.simulate(**given, **common)
    return res, estimates


@click.command(epilog="Example: metaeval simulate --from-data summeval --human coherence --metrics ROUGE.1 "
                      "--bounds 1:5 --n-iterations 5 --n-discretizations 5 --level system --rng 0")
@_layout_options(texts=False, rater_col=True, run_col=True, bounds=False)
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system",
              show_default=True, help="With --from-data: the system column (files; none: one system).")
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input",
              show_default=True, help="With --from-data: the input column (files).")
@click.option("--grid", default=None, help="A paper grid: " + "|".join(_choices.PAPER_GRIDS) + " (options override it).")
@click.option("--rho-sys", default=None, help="Comma-separated values (a grid axis).")
@click.option("--mu-rho-item", default=None, help="Mean of the item-level correlations: comma-separated values (a grid axis).")
@click.option("--sigma-rho-item", default=None, help="Spread of the item-level correlations: comma-separated values (a grid axis).")
@click.option("--c-m", default=None, help="Metric scale sizes (comma-separated; 'none' = continuous).")
@click.option("--c-h", default=None, help="Human scale sizes (comma-separated; 'none' = continuous).")
@click.option("--scale", type=click.Choice(_choices.SCALE_RESTRICTIONS), default=None,
              help="Which (c_m, c_h) combinations to run.")
@click.option("--sizes", default=None, help="Comma-separated NxM (systems x inputs), e.g. 15x200,5x100.")
@click.option("--n-iterations", type=int, default=None, help="T1 iterations (not set: 100; the levels grid: 1000). [default: not set]")
@click.option("--n-discretizations", type=int, default=None, help="T2 (default 100).")
@click.option("--level", "--levels", "levels", cls=ApiOption, aliases=("--levels",), default=_ALL_LEVELS, show_default=True, callback=_levels_option,
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--method", "--methods", "methods", cls=ApiOption, aliases=("--methods",), default=",".join(_choices.MEASURE_METHODS), show_default=True,
              help="Comma-separated coefficients.")
@click.option("--from-data", "from_data", default=None,
              help="Simulate at the parameters estimated from this dataset (file or bundled name).")
@click.option("--human", default=None, help="With --from-data: the human column.")
@click.option("--metrics", default=None, help="With --from-data: comma-separated metrics (default: all).")
@click.option("--bounds", "--scale-bounds", "bounds", cls=ApiOption, aliases=("--scale-bounds",), multiple=True,
              metavar="[COL=]LOW:HIGH",
              help="With --from-data: the rating scales for the 0-1 normalization (not given: each column's "
                   "observed range). " + BOUNDS_HELP.split(". ")[0] + ".")
@click.option("--rng", "--seed", "seed", cls=ApiOption, aliases=("--seed",), type=SEED, default=None, help="Random seed, a non-negative integer (not set: fresh entropy, recorded in --out). "
                                                                                               "[default: fresh entropy]")
@click.option("--n-jobs", "--jobs", "jobs", cls=ApiOption, aliases=("--jobs",), type=int, default=None, help="Worker processes, a positive integer (not set: every core when the grid has more than two work units, else one). [default: not set]")
@click.option("--dask", default=None, help="Dask scheduler address.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: tidy CSV, JSON, figures and checkpoints (a restarted run resumes).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def simulate(grid, rho_sys, mu_rho_item, sigma_rho_item, c_m, c_h, scale, sizes, n_iterations,
             n_discretizations, levels, methods, from_data, human, metrics, bounds, seed, jobs, dask, out,
             fmt, system, input_):
    """Statistical simulation of the correlation measures (seed paper 000, Algorithm 1)."""
    from .. import simulation as sim

    seed = _run_seed(seed, out)
    opts = dict(rho_sys=_floats(rho_sys, "rho_sys"), mu_rho_item=_floats(mu_rho_item, "mu_rho_item"),
                sigma_rho_item=_floats(sigma_rho_item, "sigma_rho_item"), c_m=_floats(c_m, "c_m"),
                c_h=_floats(c_h, "c_h"), scale=scale, sizes=_sizes(sizes),
                n_iterations=n_iterations, n_discretizations=n_discretizations)
    given = {k: v for k, v in opts.items() if v is not None}
    common = dict(level=_split(levels), method=_split(methods), rng=seed, n_jobs=jobs, dask=dask,
                  checkpoint=os.path.join(out, "checkpoints", "sim") if out else None)
    with _progress(None, "simulating (work units)") as prog:
        common["progress"] = prog
        if bounds and not from_data:
            raise click.BadParameter("--bounds applies to --from-data only", param_hint="--bounds")
        res, estimates = _simulate_run(sim, from_data, human, metrics, grid, given, common, bounds,
                                       labels=(system, input_))
    frame = res.to_frame()
    if out:
        os.makedirs(out, exist_ok=True)
        _write_csv(frame, os.path.join(out, "simulation.csv"))
        _write_json(res.to_dict(), os.path.join(out, "simulation.json"))
        if estimates is not None:
            _write_csv(estimates.to_frame(), os.path.join(out, "estimates.csv"))
        swept = [c for c in ("c_m", "rho_sys", "mu_rho_item", "sigma_rho_item", "c_h")
                 if frame[c].nunique(dropna=False) > 1]
        if swept:
            from ..report.figures import simulation_curves

            x = swept[0]
            facet = None
            if frame["n_systems"].nunique() > 1:
                facet = "n_systems"
            elif len(swept) > 1 and frame[swept[1]].nunique() <= 6:
                facet = swept[1]
            plot = frame.dropna(subset=[x]) if x in ("c_m", "c_h") else frame
            _save_figure(lambda: simulation_curves(plot.astype({x: float}), x, facet=facet),
                         os.path.join(out, "simulation.png"))
    if fmt == "json":
        _emit_json(_clean(frame.drop(columns=["signature"]).to_dict(orient="records")))
        return
    if fmt == "csv":
        _emit_csv(frame)
        return
    if estimates is not None:
        _show(_tables.estimates_table(estimates, human))
    _show(_tables.simulation_table(frame, res.signature, from_data=estimates is not None))



# ----------------------------------------------------------------------------- judge (LLM judges)
