"""The one execution layer (joblib) for independent work units.

Work is split into units whose random streams are derived from the seed and
the unit's names (:func:`metaeval.stats.resampling.named_generator`), so the
numbers do not depend on ``n_jobs``.  ``n_jobs=1`` runs in-process with no joblib overhead;
other values follow joblib (``-1``: all cores).  A Dask cluster can be used
through ``joblib.parallel_config(backend="dask")`` around the call.
"""

from __future__ import annotations

from typing import Callable, Iterable

from .errors import ParameterError


def check_n_jobs(n_jobs) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ParameterError(f"n_jobs={n_jobs!r} must be a non-zero int (-1 for all cores)")
    return n_jobs


def run_units(fn: Callable, units: Iterable, *, n_jobs: int = 1, progress=None) -> list:
    """Apply ``fn`` to every unit, in order; ``progress(k)`` is called as units finish."""
    units = list(units)
    check_n_jobs(n_jobs)
    if n_jobs == 1 or len(units) <= 1:
        out = []
        for u in units:
            out.append(fn(u))
            if progress is not None:
                progress(1)
        return out
    from joblib import Parallel, delayed

    out = []
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(fn)(u) for u in units)
    for r in gen:
        out.append(r)
        if progress is not None:
            progress(1)
    return out
