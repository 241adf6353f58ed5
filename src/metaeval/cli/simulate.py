"""`metaeval simulate`: the statistical simulation of seed paper 000."""

from __future__ import annotations

import os

import click

from .. import _choices
from ..errors import DataError
from ..report import tables as _tables
from ._api import ApiOption, Registry, api_option, api_options, command, given
from ._data import (
    FORMAT_HELP,
    _ALL_LEVELS,
    _LEVELS_HELP,
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
    """``given``: the keywords of :func:`metaeval.simulation.simulate` given on the command line;
    with --from-data the model's are overrides of the estimates."""
    estimates = None
    if from_data:
        if not human:
            raise click.BadParameter("--from-data needs --human", param_hint="--human")
        if "sizes" in given:
            raise click.BadParameter("--sizes cannot be combined with --from-data (N and M come from the data)",
                                     param_hint="--sizes")
        ctx = click.get_current_context(silent=True)
        if bounds and ctx is not None and os.path.isfile(from_data):
            # a file's declared scales are the reader's too: a failure-code warning that says
            # "declare the scale: --bounds judge=-1:5" is silenced by doing so (a bundled
            # dataset's scales are known; --bounds then only sets the 0-1 normalization)
            ctx.meta.setdefault("metaeval.layout", {})["scale_bounds"] = bounds
        ds = _load(from_data, labels[0], labels[1], [human], _metrics(metrics), None)
        mets = _metrics(metrics) or list(ds.metrics)
        overrides = {k: given.pop(k) for k in _MODEL if k in given}
        try:
            estimates = sim.estimate_parameters(ds, human, metrics=mets, bounds=_bounds(bounds, human))
            res = sim.simulate_dataset(ds, human, mets, overrides=overrides or None, bounds=_bounds(bounds, human),
                                       **given, **common)
        except DataError as exc:
            # name the file, and the options that fix what the message names
            if len(ds.systems) < 2:
                system = labels[0]
                fix = ("--system none reads the file as one system; name its system column with --system COL"
                       if str(system).strip().lower() == "none" else f"the system column is --system {system}")
            else:
                fix = "choose the columns with --human and --metrics" + (", their bounds with --bounds" if bounds else "")
            raise DataError(f"--from-data {os.path.basename(from_data)}: {exc} ({fix})") from None
    elif grid:
        res = sim.simulate_paper_grid(grid, **given, **common)
    else:
        res = sim.simulate(**given, **common)
    return res, estimates


_SIM = "simulation:simulate"
_SIM_DATA = "simulation:simulate_dataset"
#: Keywords of the model (grid axes; with --from-data: overrides of the estimates).
_MODEL = ("rho_sys", "mu_rho_item", "sigma_rho_item", "mu_m", "mu_h", "sigma_m", "sigma_h", "sigma_item_m",
          "sigma_item_h", "c_m", "c_h")


def _axis_option(name):
    """Click callback of a model parameter: comma-separated values (a grid axis)."""
    return lambda ctx, param, value: _floats(value, name)


@command(epilog="Example: metaeval simulate --from-data summeval --human coherence --metrics ROUGE.1 "
                "--bounds 1:5 --n-iterations 5 --n-discretizations 5 --level system --rng 0")
@_layout_options(texts=False, rater_col=True, run_col=True, bounds=False)
@click.option("--system", "--system-col", "system", cls=ApiOption, aliases=("--system-col",), default="system",
              show_default=True, help="With --from-data: the system column (files; none: one system).")
@click.option("--input", "--input-col", "input_", cls=ApiOption, aliases=("--input-col",), default="input",
              show_default=True, help="With --from-data: the input column (files).")
@click.option("--grid", default=None, type=Registry(_choices.PAPER_GRIDS),
              help="A paper grid: " + "|".join(_choices.PAPER_GRIDS) + " (its own values, e.g. "
                   "--n-iterations 1000 for levels; the options given override them).")
@api_options(_SIM, *_MODEL, **{k: dict(type=list, callback=_axis_option(k), metavar="V[,V]",
                                        **({"when_absent": f"--sigma-{k[-1]}"} if k.startswith("sigma_item") else {}))
                                 for k in _MODEL})
@api_option(_SIM, "scale", strict_choices=_choices.SCALE_RESTRICTIONS)
@api_option(_SIM, "sizes", type=list, callback=lambda ctx, param, value: _sizes(value), metavar="NxM[,NxM]",
            help="Systems x inputs, comma-separated for several (the paper's: 15x200,5x100).",
            when_absent="15x200")
@api_options(_SIM, "n_iterations", "n_discretizations", "average", average=dict(strict_choices=_choices.AVERAGES))
@click.option("--level", "--levels", "levels", cls=ApiOption, aliases=("--levels",), default=_ALL_LEVELS,
              show_default=True, callback=_levels_option, type=Registry(_choices.LEVELS, many=True),
              help="Comma-separated: " + _LEVELS_HELP + ".")
@click.option("--method", "--methods", "methods", cls=ApiOption, aliases=("--methods",),
              default=",".join(_choices.MEASURE_METHODS), show_default=True, type=Registry(_choices.METHODS, many=True),
              help="Comma-separated coefficients: " + ", ".join(_choices.METHODS) + ".")
@click.option("--from-data", "from_data", default=None,
              help="Simulate at the parameters estimated from this dataset (file or bundled name); the model "
                   "options given replace the estimates.")
@click.option("--human", default=None, help="With --from-data: the human column.")
@click.option("--metrics", default=None, help="With --from-data: comma-separated metrics (default: all).")
@click.option("--bounds", "--scale-bounds", "bounds", cls=ApiOption, aliases=("--scale-bounds",), multiple=True,
              metavar="[COL=]LOW:HIGH",
              help="With --from-data: the rating scales for the 0-1 normalization, LOW:HIGH for the --human "
                   "column (e.g. 1:5) or COL=LOW:HIGH for one column (e.g. ROUGE.1=0:1), comma-separated or "
                   "repeated (not given: each column's observed range).")
@api_options(_SIM, "rng", "n_jobs", "dask",
             n_jobs=dict(when_absent="every core when the grid has more than two work units, else one"),
             dask=dict(help="Dask scheduler address: run the work units on that cluster."))
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder: tidy CSV, JSON, figures and checkpoints (a restarted run resumes).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True, help=FORMAT_HELP)
def simulate(grid, levels, methods, from_data, human, metrics, bounds, out, fmt, system, input_, **api):
    """Statistical simulation of the correlation measures (seed paper 000, Algorithm 1).

    Each model option (--rho-sys, --mu-rho-item, --sigma-rho-item, --mu-m, --sigma-m, ..., --c-m,
    --c-h) takes one value
    or comma-separated values, a grid axis: the grid is every combination.  With --from-data the
    model's parameters, N and M are estimated from the data, and the model options given replace
    the estimates.
    """
    from .. import simulation as sim

    api = given(api)
    api["rng"] = _run_seed(api.get("rng"), out)
    common = dict(level=_split(levels), method=_split(methods),
                  checkpoint=os.path.join(out, "checkpoints", "sim") if out else None,
                  **{k: api.pop(k) for k in ("rng", "n_jobs", "dask") if k in api})
    with _progress(None, "simulating (work units)") as prog:
        common["progress"] = prog
        if not from_data:
            # the data options describe the --from-data file: without it they would be ignored
            layout = click.get_current_context().meta.get("metaeval.layout") or {}
            stray = [flag for flag, v in (("--human", human), ("--metrics", metrics), ("--bounds", bounds)) if v]
            stray += [flag for key, flag in (("sel_systems", "--systems"), ("sel_exclude", "--exclude-systems"),
                                             ("sel_where", "--where"), ("rater_cols", "--raters"),
                                             ("missing_values", "--missing-values"), ("layout_rater", "--rater"),
                                             ("layout_run", "--run")) if layout.get(key)]
            if stray:
                raise click.BadParameter(
                    f"{', '.join(stray)} appl{'ies' if len(stray) == 1 else 'y'} to --from-data only (the data "
                    "the model's parameters are estimated from); give --from-data DATA or leave "
                    f"{'it' if len(stray) == 1 else 'them'} out", param_hint=stray[0])
        res, estimates = _simulate_run(sim, from_data, human, metrics, grid, api, common, bounds,
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
