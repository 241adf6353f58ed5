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
import io
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .errors import ParameterError


def check_n_jobs(n_jobs) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ParameterError(f"n_jobs={n_jobs!r} must be a non-zero int (-1 for all cores)")
    return n_jobs


_UNIT_FORMAT = "metaeval-checkpoint-unit/1"


def _run_id(key: dict) -> str:
    """A digest of a run's key (stored in every unit and checked on load)."""
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _encode(obj, arrays: list):
    """``obj`` as a JSON-able tree; NumPy arrays and scalars go to ``arrays``.

    Plain data only: NumPy arrays (not of object dtype) and scalars, Python
    ``None``/bool/int/float/str, and tuples, lists and dicts of these.  Python
    floats are kept by JSON with their ``repr``, which round-trips exactly.
    """
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError("checkpoint units cannot hold object arrays (they would need pickle)")
        arrays.append(obj)
        return {"t": "array", "i": len(arrays) - 1, "s": list(obj.shape), "d": obj.dtype.str}
    if isinstance(obj, np.generic):  # before float: np.float64 is a float
        if obj.dtype.hasobject:  # pragma: no cover - np.object_ scalars are not created
            raise TypeError("checkpoint units cannot hold object scalars")
        arrays.append(np.asarray(obj))
        return {"t": "scalar", "i": len(arrays) - 1, "s": [], "d": obj.dtype.str}
    if obj is None or type(obj) in (bool, int, float, str):
        return {"t": "py", "v": obj}
    if isinstance(obj, (tuple, list)):
        return {"t": type(obj).__name__, "v": [_encode(o, arrays) for o in obj]}
    if type(obj) is dict:
        return {"t": "dict", "v": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    raise TypeError(f"checkpoint units hold plain data; cannot store a {type(obj).__name__}")


def _array(tree, arrays):
    """The stored array of node ``tree``, checked against the shape and dtype its header
    recorded (units written before they were recorded are not checked)."""
    a = arrays[f"a{tree['i']}"]
    if "s" in tree and (list(a.shape) != list(tree["s"]) or a.dtype.str != tree.get("d")):
        raise ValueError(
            f"array a{tree['i']} has shape {tuple(a.shape)} and dtype {a.dtype.str}, where the "
            f"unit recorded {tuple(tree['s'])} and {tree.get('d')}")
    return a


def _decode(tree, arrays):
    t = tree["t"]
    if t == "array":
        return _array(tree, arrays)
    if t == "scalar":
        return _array(tree, arrays)[()]
    if t == "py":
        return tree["v"]
    if t in ("tuple", "list"):
        items = [_decode(o, arrays) for o in tree["v"]]
        return tuple(items) if t == "tuple" else items
    if t == "dict":
        return {_decode(k, arrays): _decode(v, arrays) for k, v in tree["v"]}
    raise ValueError(f"unknown node type {t!r}")


class Checkpoint:
    """A folder holding the finished units of one run.

    Parameters
    ----------
    folder : str or Path
        Created if needed.  ``run.json`` records ``key``; each finished unit
        is one ``.npz`` file written atomically (write, then rename), so a
        run killed mid-write leaves no partial unit.
    key : dict
        JSON-serialisable description of everything that determines the
        units' results (analysis, data fingerprint, options, seed).  A folder
        whose ``run.json`` holds another key is refused, so a changed
        argument can never be mixed with stale results.

    Notes
    -----
    Units are plain data, never pickles: a NumPy ``.npz`` archive (read with
    ``allow_pickle=False``) of the unit's arrays plus a JSON header with the
    unit's name and a digest of the run's key; Python floats in the header
    keep their ``repr``, so a resumed result is bit-identical to an
    uninterrupted one.  Loading a unit therefore never runs code.

    A unit whose header names another run (for example a folder whose
    ``run.json`` was deleted, then reused with other arguments) is ignored:
    it is recomputed and overwritten, never mixed in.  A unit that cannot be
    read at all (truncated, corrupt, not written by metaeval) is an error
    naming the file; delete it and run again to recompute it.  Units of
    older metaeval versions (``.pkl``) are never opened: they are
    recomputed.
    """

    def __init__(self, folder, key: dict):
        self.folder = Path(folder)
        self.key = json.loads(json.dumps(key, sort_keys=True))
        self.run_id = _run_id(self.key)
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

    def _refuse_other(self, old, new: dict) -> None:
        if old != new:
            if not isinstance(old, dict):
                old = {}
            diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            shown = []
            for k in diff:
                a, b = old.get(k), new.get(k)
                if isinstance(a, str) and isinstance(b, str) and "|" in a + b:
                    # a signature: name the fields that differ (e.g. the seed), not the whole string
                    pa, pb = a.split("|"), b.split("|")
                    was = [x for x in pa if x not in pb]
                    now = [x for x in pb if x not in pa]
                    shown.append(f"{k}: {'|'.join(was) or '-'} in the folder, {'|'.join(now) or '-'} now")
                else:
                    shown.append(k)
            raise ParameterError(
                f"checkpoint folder {self.folder} holds a run with other arguments "
                f"(differing: {'; '.join(shown)}); use another output folder, or delete "
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
        return self.folder / (hashlib.sha1(name.encode()).hexdigest()[:20] + ".npz")

    def load(self, name: str):
        """``(True, result)`` for a finished unit of this run, else ``(False, None)``.

        Raises
        ------
        ParameterError
            The unit's file cannot be read as a metaeval unit (truncated,
            corrupt, or planted); the message names the file.
        """
        p = self._path(name)
        if not p.exists():
            return False, None
        try:
            with np.load(p, allow_pickle=False) as z:
                header = json.loads(bytes(z["__unit__"]).decode())
                if not isinstance(header, dict) or header.get("format") != _UNIT_FORMAT:
                    raise ValueError("not a metaeval checkpoint unit")
                if header.get("run") != self.run_id or header.get("name") != name:
                    return False, None  # another run's unit: recomputed and overwritten
                result = _decode(header["tree"], z)
        except Exception as exc:  # noqa: BLE001 - any failure means an unreadable file
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ParameterError(
                f"checkpoint unit {p} ({name}) is unreadable ({type(exc).__name__}: {reason}); "
                "it is truncated, corrupt or not written by metaeval: delete this file and run "
                "again to recompute it"
            ) from None
        return True, result

    def save(self, name: str, result) -> None:
        arrays: list = []
        tree = _encode(result, arrays)
        header = {"format": _UNIT_FORMAT, "run": self.run_id, "name": name, "tree": tree}
        entries = {f"a{i}": a for i, a in enumerate(arrays)}
        entries["__unit__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez(buf, **entries)
        self._write(self._path(name), buf.getvalue())

    def n_done(self) -> int:
        return sum(1 for _ in self.folder.glob("*.npz"))


_WATCHED: dict = {}


def _set_pdeathsig() -> bool:
    """Linux: have the kernel send SIGKILL to this process when its parent
    (strictly: the parent's thread that started it) ends."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError, ValueError):  # pragma: no cover - no usable libc
        return False


def _pid_exists(pid: int) -> bool:
    """Whether a live process ``pid`` exists: signal 0 checks without sending anything, and on
    Linux a zombie (dead, not yet reaped by its own parent) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")


def _watch_parent(parent_pid: int, interval: float = 0.5, pdeathsig: bool = True) -> bool:
    """In a worker process: exit as soon as ``parent_pid`` dies.

    Runs in every worker: as the loky executor's initializer, and again
    (idempotently) before each unit through :class:`_Unit`.  Without it,
    loky workers outlived a ``kill -9`` of their parent for many minutes,
    each holding a core.  Two mechanisms:

    * on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the
      worker when the thread that started it ends (loky starts workers from
      the calling thread, or from its manager thread, which lives as long
      as the executor); it works even while the worker is inside a long
      numba kernel that holds the GIL;
    * everywhere, a daemon thread polling ``os.getppid()`` every
      ``interval`` seconds: an orphan is re-parented, so its parent pid
      changes, and it exits with :func:`os._exit` (no clean-up: the process
      that would collect its results is gone).  It needs the GIL, so a
      worker inside one long kernel call exits when that call returns.

    A process that is not a direct child of ``parent_pid`` (a Dask worker, a
    thread backend) is not watched.

    Returns
    -------
    bool
        Whether this process is watched.
    """
    if os.getpid() == parent_pid:
        return False
    if os.getppid() != parent_pid:
        if not _pid_exists(parent_pid):
            # the parent died before this worker got here (a kill during its start-up, which
            # a loaded machine makes seconds long): it is an orphan already
            os._exit(70)
        return False  # a live process that is not our parent: not a worker of it (Dask, threads)
    if _WATCHED.get("parent") == parent_pid:
        return True
    _WATCHED["parent"] = parent_pid
    if pdeathsig and _set_pdeathsig() and os.getppid() != parent_pid:
        os._exit(70)  # the parent died before the signal was armed

    def watch():
        while True:
            time.sleep(interval)
            if os.getppid() != parent_pid:
                os._exit(70)  # EX_SOFTWARE: orphaned worker

    threading.Thread(target=watch, name="metaeval-parent-watchdog", daemon=True).start()
    return True


class _Unit:
    """``fn`` for worker processes: starts the parent watchdog before the
    first unit a worker runs (covers backends without the initializer)."""

    def __init__(self, fn, parent_pid):
        self.fn, self.parent_pid = fn, parent_pid

    def __call__(self, unit):
        _watch_parent(self.parent_pid)
        return self.fn(unit)


def _worker_config():
    """joblib settings for local worker processes: loky, as by default, with
    the parent watchdog as the workers' initializer; a backend the caller
    configured (``joblib.parallel_config``) is kept as it is."""
    import contextlib

    from joblib import parallel_config
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    configured = (
        type(backend).__name__ != "LokyBackend"
        or getattr(backend, "backend_kwargs", None)
        or getattr(backend, "inner_max_num_threads", None) is not None
    )
    if configured:
        return contextlib.nullcontext()
    return parallel_config(backend="loky", initializer=_watch_parent, initargs=(os.getpid(),))


def _handshake(address: str, seconds: float) -> None:
    """Open one comm to ``address`` and read the scheduler's handshake, all within ``seconds``.

    ``Client(address, timeout=...)`` bounds the TCP connection but not the handshake
    read: a listener that accepts and sends nothing held it forever.  This probe runs the
    connection and the handshake under one ``asyncio.wait_for``, in a thread of its own (so
    it works where an event loop already runs, e.g. Jupyter)."""
    import asyncio

    from distributed.comm import connect

    async def probe():
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds)
        await comm.close()

    failure: list[BaseException] = []

    def run():
        try:
            asyncio.run(probe())
        except BaseException as exc:  # noqa: BLE001 - reported to the caller below
            failure.append(exc)

    worker = threading.Thread(target=run, name="metaeval-dask-probe", daemon=True)
    worker.start()
    worker.join(seconds + 5.0)  # the probe's own deadline ends it; this is a backstop
    if worker.is_alive():
        raise TimeoutError(f"no handshake within {seconds:g} s")
    if failure:
        raise failure[0]


def _connect(Client, address: str):
    """A Client of the scheduler at ``address``, or one ParameterError naming the address and
    the cause ("cannot connect to the Dask scheduler at ADDR: <cause>"), within dask's
    connect timeout (``distributed.comm.timeouts.connect``, 30 s by default; set
    ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT`` to change it)."""
    import asyncio

    import dask.config
    from dask.utils import parse_timedelta

    seconds = float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s"))
    try:
        _handshake(address, seconds)
        return Client(address, timeout=seconds)
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the address's
        cause = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            if "within" not in cause:
                cause = f"no handshake within {seconds:g} s"
        elif not isinstance(exc, OSError):  # it answered, but not as a Dask scheduler does
            cause = f"its answer is not a Dask handshake ({type(exc).__name__}: {cause})"
        if len(cause) > 200:
            cause = cause[:200] + "..."
        raise ParameterError(
            f"cannot connect to the Dask scheduler at {address}: {cause} (dask={address!r} must "
            "be the address of a running scheduler, e.g. tcp://127.0.0.1:8786)"
        ) from None


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
        return _connect(Client, dask), True
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
        work = _Unit(fn, os.getpid())
        with _worker_config():
            gen = Parallel(n_jobs=n_jobs, return_as="generator")(
                delayed(work)(units[i]) for i in todo
            )
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
