"""The one execution layer (joblib) for independent work units.

Work is split into units whose random streams are derived from the seed and
the unit's names (:func:`metaeval.stats.resampling.named_generator`), so the
numbers do not depend on ``n_jobs`` or on where a unit runs.

* ``n_jobs=1`` runs in-process with no joblib overhead (the numba kernels
  still use every core through their own threads); other values follow
  joblib (``-1``: one worker process per core).
* ``dask=`` (a ``dask.distributed.Client`` or a scheduler address such as
  ``"tcp://10.0.0.5:8786"``) runs the units on a Dask cluster through
  joblib's dask backend (install the ``dist`` extra).  A Dask cluster can
  equally be used with ``joblib.parallel_config(backend="dask")`` around any
  call.
* ``checkpoint=`` (a :class:`Checkpoint`) saves each finished unit in a
  folder; a run restarted with the same arguments and folder loads the
  finished units and computes only the others.  Since a unit's numbers
  depend only on the seed and its names, the final result equals that of an
  uninterrupted run.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Callable, Iterable

from .errors import ParameterError


def check_n_jobs(n_jobs) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ParameterError(f"n_jobs={n_jobs!r} must be a non-zero int (-1 for all cores)")
    return n_jobs


class Checkpoint:
    """A folder holding the finished units of one run.

    Parameters
    ----------
    folder : str or Path
        Created if needed.  ``run.json`` records ``key``; one pickle per
        finished unit is written atomically (write, then rename), so a run
        killed mid-write leaves no partial unit.
    key : dict
        JSON-serialisable description of everything that determines the
        units' results (analysis, data fingerprint, options, seed).  A folder
        holding a run with another key is refused, so a changed argument can
        never be mixed with stale results.

    Only load checkpoints you wrote: units are stored with :mod:`pickle`.
    """

    def __init__(self, folder, key: dict):
        self.folder = Path(folder)
        self.key = json.loads(json.dumps(key, sort_keys=True))
        self.folder.mkdir(parents=True, exist_ok=True)
        manifest = self.folder / "run.json"
        if manifest.exists():
            try:
                old = json.loads(manifest.read_text())
            except (OSError, ValueError) as exc:
                raise ParameterError(
                    f"checkpoint folder {self.folder} has an unreadable run.json ({exc}); "
                    "delete the folder or choose another one"
                ) from None
            self._refuse_other(old, self.key)
        else:
            self._write(manifest, json.dumps(self.key, sort_keys=True, indent=1).encode())

    def _refuse_other(self, old: dict, new: dict) -> None:
        if old != new:
            diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            raise ParameterError(
                f"checkpoint folder {self.folder} holds a run with other arguments "
                f"(differing: {', '.join(diff)}); use another output folder, or delete "
                "this one to start over"
            )

    def for_run(self, key: dict) -> "Checkpoint":
        """This checkpoint, after checking that it was made for ``key`` (the
        analysis' own description of the run); a checkpoint built for other
        arguments is refused, so stale units can never be reused."""
        self._refuse_other(self.key, json.loads(json.dumps(key, sort_keys=True)))
        return self

    @staticmethod
    def _write(path: Path, data: bytes):
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def _path(self, name: str) -> Path:
        return self.folder / (hashlib.sha1(name.encode()).hexdigest()[:20] + ".pkl")

    def load(self, name: str):
        """``(True, result)`` for a finished unit, else ``(False, None)``."""
        p = self._path(name)
        if not p.exists():
            return False, None
        with open(p, "rb") as f:
            stored_name, result = pickle.load(f)
        if stored_name != name:  # pragma: no cover - hash collision
            return False, None
        return True, result

    def save(self, name: str, result) -> None:
        self._write(self._path(name), pickle.dumps((name, result), protocol=4))

    def n_done(self) -> int:
        return sum(1 for _ in self.folder.glob("*.pkl"))


def _dask_client(dask):
    try:
        from dask.distributed import Client
    except ImportError:  # pragma: no cover - depends on the environment
        raise ParameterError(
            "dask= needs dask.distributed: pip install 'metaeval[dist]'"
        ) from None
    if isinstance(dask, Client):
        return dask, False
    if isinstance(dask, str):
        return Client(dask), True
    raise ParameterError(
        f"dask={dask!r} must be a dask.distributed.Client or a scheduler address string"
    )


def run_units(
    fn: Callable,
    units: Iterable,
    *,
    n_jobs: int = 1,
    progress=None,
    names=None,
    checkpoint: Checkpoint | None = None,
    dask=None,
) -> list:
    """Apply ``fn`` to every unit; results in the order of ``units``.

    ``progress(k)`` is called as units finish (also for units loaded from
    the checkpoint).  ``names`` (one string per unit) are required with a
    checkpoint.
    """
    units = list(units)
    check_n_jobs(n_jobs)
    out = [None] * len(units)
    todo = list(range(len(units)))
    if checkpoint is not None:
        if names is None or len(names) != len(units):
            raise ParameterError("run_units: a checkpoint needs one name per unit")
        todo = []
        for i, nm in enumerate(names):
            found, res = checkpoint.load(nm)
            if found:
                out[i] = res
                if progress is not None:
                    progress(1)
            else:
                todo.append(i)

    def finish(i, res):
        out[i] = res
        if checkpoint is not None:
            checkpoint.save(names[i], res)
        if progress is not None:
            progress(1)

    if dask is None and (n_jobs == 1 or len(todo) <= 1):
        for i in todo:
            finish(i, fn(units[i]))
        return out

    from joblib import Parallel, delayed, parallel_config

    if dask is None:
        gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(fn)(units[i]) for i in todo)
        for i, r in zip(todo, gen):
            finish(i, r)
        return out
    client, own = _dask_client(dask)
    try:
        with parallel_config(backend="dask"):
            gen = Parallel(n_jobs=-1, return_as="generator")(delayed(fn)(units[i]) for i in todo)
            for i, r in zip(todo, gen):
                finish(i, r)
    finally:
        if own:
            client.close()
    return out
