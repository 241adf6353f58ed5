"""Numba set-up: a writable cache for the compiled kernels.

The kernels are compiled with ``cache=True``.  Numba looks for a cache folder
in this order: ``NUMBA_CACHE_DIR``, a ``__pycache__`` beside the source, a
per-user folder under ``~/.cache``; when none is writable (a read-only
install run by a user without a writable home, e.g. a container started
with ``--user``), decorating a kernel raises ``RuntimeError: cannot cache
function ...: no locator available`` and every command, even ``--help``,
used to fail.

:func:`setup_cache` runs once, before the first kernel is decorated (the
modules that define kernels call it, through :func:`begin_pool_cache` for
the kernel families): it asks numba to locate a cache for a
probe function in this folder, exactly as it will for the kernels, and when
that fails it points numba's cache folder (``numba.config.CACHE_DIR``) at a
private per-user folder in the temporary directory
(``<tempfile.gettempdir()>/metaeval-numba-<uid>``, mode 0700).  Numba's
cache index is read with pickle, so a folder of that name that is not a
directory owned by this user and closed to others is not used; a fresh
private folder is made instead (no reuse between runs, but safe).  Nothing
changes when numba's own locations work.

The kernels live in one module per family (:data:`KERNEL_MODULES`), each
beside its NumPy twins.  A family declares its kernels with :func:`kernel`,
which imports no numba, so the twins (used on small batches) stay importable
without it; :func:`compile_family` turns a family's declarations into numba
dispatchers the first time one of them is used (the families it calls
first), and :mod:`metaeval.stats._kernels` gathers all of them.

The parallel kernels freeze the size of numba's thread pool
(``NUMBA_NUM_THREADS``) into their compiled code, and numba's cache index does
not record it: a cache written by a run with one thread made every later run
split its work for one thread (one core busy, whatever the pool).
:func:`begin_pool_cache` therefore gives the kernels a cache folder per pool
size, ``numba-threads-<n>`` inside the folder numba would use, while they are
decorated (:func:`end_pool_cache` restores numba's setting, so other
packages' caches are not moved).
"""

from __future__ import annotations

import importlib
import os
import stat
import tempfile
import threading

_state: dict = {}


def _private_cache_dir() -> str | None:
    """A per-user cache folder under the temporary directory, or None."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    base = os.path.join(tempfile.gettempdir(), f"metaeval-numba-{uid}")
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(base)
        ours = (
            stat.S_ISDIR(st.st_mode)
            and (not hasattr(os, "getuid") or st.st_uid == uid)
            and not st.st_mode & 0o077
        )
        if ours:
            return base
        return tempfile.mkdtemp(prefix="metaeval-numba-")
    except OSError:
        return None


def _probe(numba) -> bool:
    """Can numba cache a function of this folder?"""

    def probe():  # pragma: no cover - never called, only located
        return 0

    try:
        numba.njit(cache=True)(probe)
    except RuntimeError:
        return False
    return True


#: The OpenMP wait policy set for numba's threads unless the user set one (``OMP_WAIT_POLICY``).
OPENMP_WAIT_POLICY = "PASSIVE"


def passive_openmp() -> None:
    """Let numba's OpenMP threads sleep between parallel regions instead of spinning.

    numba's parallel kernels run on libgomp here, whose idle threads spin-wait by default.  The
    kernels are short (milliseconds: one per metric pair and level), so a waiting thread spins
    through most of the run; on a machine with other work it takes a core from the thread doing
    the arithmetic.  Measured on this 2-core machine (compare_all on SummEval, 16 metrics, system
    level, 1000 Perm-Both resamples; BENCHMARKS.md "OpenMP threads that wait"): idle, passive
    waiting cost 0.93 CPU-s against 1.09 and 0.62 s of wall time against 0.55; beside one busy
    process, 0.88 CPU-s and 0.88 s against 2.91 and 2.65.  Set before numba loads its threading
    layer (libgomp reads the variable when it loads), and only when the user has not chosen a
    policy; child processes (joblib workers) inherit it."""
    os.environ.setdefault("OMP_WAIT_POLICY", OPENMP_WAIT_POLICY)


def setup_cache() -> str | None:
    """Make sure numba can cache this package's kernels (runs once).

    Returns
    -------
    str or None
        The fallback cache folder when one was needed, else None.

    Raises
    ------
    RuntimeError
        Neither numba's locations nor the temporary directory are writable;
        the message says to set ``NUMBA_CACHE_DIR`` or ``TMPDIR``.
    """
    if "dir" in _state:
        return _state["dir"]
    passive_openmp()
    import numba
    from numba.core import config

    fallback = None
    if not _probe(numba):
        fallback = _private_cache_dir()
        if fallback is not None:
            config.CACHE_DIR = fallback
        if fallback is None or not _probe(numba):
            raise RuntimeError(
                "metaeval: numba cannot cache the compiled kernels: the package folder, "
                f"NUMBA_CACHE_DIR ({os.environ.get('NUMBA_CACHE_DIR') or 'unset'}), the home "
                f"folder's cache and the temporary directory ({tempfile.gettempdir()}) are "
                "not writable; set NUMBA_CACHE_DIR or TMPDIR to a writable folder"
            )
    _state["dir"] = fallback
    return fallback


def _writable_dir(path) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def pool_cache_dir(pool: int) -> str:
    """The cache folder of kernels compiled for a thread pool of ``pool``:
    ``numba-threads-<pool>`` inside ``NUMBA_CACHE_DIR`` (or the private
    fallback of :func:`setup_cache`), else inside this package's
    ``__pycache__``, else inside ``~/.cache/metaeval``, else the private
    folder in the temporary directory: the first that is writable."""
    from numba.core import config

    name = f"numba-threads-{int(pool)}"
    bases = []
    if config.CACHE_DIR:
        bases.append(config.CACHE_DIR)
    bases.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__"))
    bases.append(os.path.join(os.path.expanduser("~"), ".cache", "metaeval"))
    for base in bases:
        path = os.path.join(base, name)
        if _writable_dir(path):
            return path
    private = _private_cache_dir()
    if private is None:  # setup_cache() raised already in this case
        raise RuntimeError("metaeval: no writable folder for numba's cache; set NUMBA_CACHE_DIR")
    return os.path.join(private, name)


def begin_pool_cache(pool: int) -> None:
    """Point numba's cache folder at :func:`pool_cache_dir` until
    :func:`end_pool_cache` (while the pool-dependent kernels are decorated:
    numba picks a function's cache folder when it is decorated)."""
    setup_cache()
    from numba.core import config

    _state["saved"] = config.CACHE_DIR
    config.CACHE_DIR = pool_cache_dir(pool)


def end_pool_cache(namespace=None) -> None:
    """Restore numba's cache folder; first back the kernels of ``namespace``
    (a kernel family's globals) by the shipped cache
    (:func:`use_shipped_cache`)."""
    from numba.core import config

    if namespace is not None:
        use_shipped_cache(namespace)
    if "saved" in _state:
        config.CACHE_DIR = _state.pop("saved")


# --------------------------------------------------------------------------
# The shipped cache: kernels compiled for a portable CPU when the package is
# built or installed (issue 26.1)

#: Folder of the shipped cache, beside this file; one subfolder per content key.
SHIPPED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_numba_cache")

#: The signatures the build compiles, one ``kernel<TAB>signature`` a line.
SIGNATURES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernel_signatures.txt")

#: Set (to anything but "" or "0") in the build's process: compiled kernels
#: are written to the shipped cache instead of the user's.
BUILD_ENV = "METAEVAL_BUILD_NUMBA_CACHE"

#: The portable CPU the shipped kernels are compiled for (LLVM's "generic":
#: the baseline instruction set of the architecture, e.g. x86-64 with SSE2).
PORTABLE_CPU = "generic"

#: The modules of the kernel families (``metaeval.stats.<name>``), callees first.
KERNEL_MODULES = ("_kbase", "_exactsum", "_kendall", "_pearson", "_tiecal", "_swap", "_boot")

# Files whose content the compiled kernels depend on: the kernel families and
# the module-level constants they import.
_SOURCES = tuple(f"{m}.py" for m in KERNEL_MODULES) + ("_columns.py",)


#: Set to skip the shipped cache (benchmarks of the host-compiled kernels).
IGNORE_ENV = "METAEVAL_IGNORE_SHIPPED_NUMBA_CACHE"


def _building() -> bool:
    return os.environ.get(BUILD_ENV, "") not in ("", "0")


def _ignored() -> bool:
    return os.environ.get(IGNORE_ENV, "") not in ("", "0")


def content_key(pool: int | None) -> str:
    """The name of a shipped-cache folder: a hash of everything the compiled
    code depends on (metaeval's version, numba's and llvmlite's, the Python
    ABI, the platform, the kernels' source bytes) and, for the kernels that
    split work over numba's thread pool, the pool size; ``serial-<hash>`` or
    ``pool<n>-<hash>``.  The file times are not part of it: a folder is found
    wherever the package is unpacked, and a change of any input gives
    another name, so a cache can never be stale."""
    import hashlib
    import platform
    import sys

    import llvmlite
    import numba

    from .._version import __version__

    h = hashlib.sha256()
    for part in (
        __version__,
        numba.__version__,
        llvmlite.__version__,
        sys.implementation.cache_tag,
        getattr(sys, "abiflags", ""),
        sys.platform,
        platform.machine(),
        PORTABLE_CPU,
    ):
        h.update(str(part).encode() + b"\0")
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _SOURCES:
        with open(os.path.join(here, name), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    kind = "serial" if pool is None else f"pool{int(pool)}"
    return f"{kind}-{h.hexdigest()[:24]}"


def _pool_dependent(namespace) -> set:
    """Names of the dispatchers of ``namespace`` whose compiled code depends on
    the pool size: the parallel ones and whatever reads ``_POOL`` or calls one
    of them (followed through each function's own module's globals, so a
    kernel calling another family's kernel is seen)."""
    from numba.core.registry import CPUDispatcher

    memo: dict = {}

    def dep(disp) -> bool:
        key = id(disp)
        if key not in memo:
            memo[key] = False  # a recursive kernel does not depend on itself
            f = disp.py_func
            names = f.__code__.co_names
            memo[key] = bool(disp.targetoptions.get("parallel")) or "_POOL" in names or any(
                isinstance(f.__globals__.get(n), CPUDispatcher) and dep(f.__globals__[n])
                for n in names
            )
        return memo[key]

    return {k for k, v in namespace.items() if isinstance(v, CPUDispatcher) and dep(v)}


def _shipped_cache_class():
    from numba.core.caching import FunctionCache, IndexDataCacheFile

    class ShippedCache(FunctionCache):
        """numba's per-function cache (the user's folder, as before), backed by
        the shipped folder: a signature missing from the user's cache is
        looked up in the shipped one, under the portable CPU's magic tuple
        (code for the baseline instruction set runs on every CPU of the
        architecture).  In the build's process the compiled kernels are
        written to the shipped folder."""

        def __init__(self, py_func, shipped_path):
            super().__init__(py_func)
            self._shipped_path = shipped_path
            self._shipped = IndexDataCacheFile(
                cache_path=shipped_path,
                filename_base=self._impl.filename_base,
                source_stamp=os.path.basename(shipped_path),
            )

        def _portable_key(self, sig, codegen):
            key = self._index_key(sig, codegen)
            triple = key[1][0]
            return (key[0], (triple, PORTABLE_CPU, ""), key[2])

        def _load_overload(self, sig, target_context):
            if not self._enabled:
                return None
            if not _building():
                data = super()._load_overload(sig, target_context)
                if data is not None:
                    return data
            if _ignored():
                return None
            data = self._shipped.load(self._portable_key(sig, target_context.codegen()))
            if data is not None:
                _state["shipped_hits"] = _state.get("shipped_hits", 0) + 1
                data = self._impl.rebuild(target_context, data)
            return data

        def _save_overload(self, sig, data):
            if not (_building() and data.codegen.magic_tuple()[1] == PORTABLE_CPU):
                return super()._save_overload(sig, data)
            if not self._enabled or not self._impl.check_cachable(data):
                return None
            os.makedirs(self._shipped_path, exist_ok=True)
            key = self._index_key(sig, data.codegen)
            self._shipped.save(key, self._impl.reduce(data))
            return None

    return ShippedCache


def use_shipped_cache(namespace, pool=None) -> None:
    """Back every cached dispatcher that a kernel family defines (``namespace``:
    its globals) by the shipped cache of its content key (runs while the
    pool's cache folder is in force, so the user's part stays where it was).
    ``pool``: numba's pool size (default: the namespace's ``_POOL``)."""
    from numba.core.caching import FunctionCache
    from numba.core.registry import CPUDispatcher

    cls = _shipped_cache_class()
    pool_dep = _pool_dependent(namespace)
    pool = namespace.get("_POOL") if pool is None else pool
    folders = {
        False: os.path.join(SHIPPED_DIR, content_key(None)),
        True: os.path.join(SHIPPED_DIR, content_key(pool)),
    }
    home = namespace.get("__name__")
    for name, disp in namespace.items():
        if (
            isinstance(disp, CPUDispatcher)
            and type(disp._cache) is FunctionCache
            and (home is None or disp.py_func.__module__ == home)
        ):
            disp._cache = cls(disp.py_func, folders[name in pool_dep])


# --------------------------------------------------------------------------
# Kernel families: numba kernels declared without importing numba

_COMPILE_LOCK = threading.RLock()


class Kernel:
    """A numba kernel of a family module, not compiled yet (see :func:`kernel`).

    Calling it, or reading an attribute of numba's dispatcher (``signatures``,
    ``py_func``, ``compile``, ...), compiles its family first
    (:func:`compile_family`); the family's globals then hold the dispatcher
    itself, so kernels calling kernels see numba's objects only."""

    def __init__(self, py_func, options):
        self.py_func = py_func
        self.options = dict(options)
        self.dispatcher = None
        self.__doc__ = py_func.__doc__
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__wrapped__ = py_func

    def compiled(self):
        """numba's dispatcher of this kernel (compiling its family's)."""
        if self.dispatcher is None:
            compile_family(self.py_func.__module__)
        return self.dispatcher

    def __call__(self, *args):
        return self.compiled()(*args)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self):
        return f"<metaeval kernel {self.__module__}.{self.__qualname__} (not compiled yet)>"


def kernel(func=None, *, parallel=False, error_model=None):
    """Declare a numba kernel: ``@kernel`` or ``@kernel(parallel=True)``, as
    ``numba.njit(cache=True)`` and ``numba.njit(parallel=True, cache=True)``
    but without importing numba (a :class:`Kernel`).  A parallel kernel's
    ``prange`` is a global of its module: the builtin ``range`` until the
    family is compiled, ``numba.prange`` then.

    A parallel kernel ``f`` also gets a serial build, ``f_serial`` (the same
    code compiled without ``parallel``: its ``prange`` loop over the workers
    runs them one after the other).  Each worker's share and workspace do not
    depend on how the workers are run, so both builds give the same bits;
    the serial one skips the start of a parallel region, which costs
    10-50 us on an idle machine and milliseconds on a loaded one (the
    region waits for every thread of the pool), for a call whose arithmetic
    takes microseconds (:func:`metaeval.stats.coefficients.kernels`,
    ``work=``)."""
    opts = {"parallel": True} if parallel else {}
    if error_model is not None:  # "numpy": x / 0 gives inf or NaN, as in NumPy
        opts["error_model"] = error_model
    if func is None:
        return lambda f: Kernel(f, opts)
    return Kernel(func, opts)


def compile_family(module) -> dict:
    """Turn the :func:`kernel` declarations of a family module (its dotted name,
    or one of :data:`KERNEL_MODULES`) into numba dispatchers, once: first the
    families whose kernels it imports, then its own, in the pool's cache folder
    and backed by the shipped cache; its ``prange`` and ``_POOL`` are set
    first.  Compilation itself stays lazy (numba compiles a signature on its
    first call or loads it from a cache).  Returns the module's globals."""
    if "." not in module:
        module = f"{__package__}.{module}"
    ns = vars(importlib.import_module(module))
    if ns.get("_compiled"):
        return ns
    with _COMPILE_LOCK:
        if ns.get("_compiled"):
            return ns
        setup_cache()
        import numba

        for name, value in list(ns.items()):
            if isinstance(value, Kernel) and value.py_func.__module__ != module:
                ns[name] = value.compiled()
        pool = int(numba.config.NUMBA_NUM_THREADS)
        if "prange" in ns:
            ns["prange"] = numba.prange
        if "_POOL" in ns:
            ns["_POOL"] = pool
        begin_pool_cache(pool)
        try:
            for name, value in list(ns.items()):
                if isinstance(value, Kernel):
                    value.dispatcher = numba.njit(cache=True, **value.options)(value.py_func)
                    ns[name] = value.dispatcher
                    if value.options.get("parallel"):
                        serial = _serial_copy(value.py_func)
                        opts = {k: v for k, v in value.options.items() if k != "parallel"}
                        ns[serial.__name__] = numba.njit(cache=True, **opts)(serial)
            use_shipped_cache(ns, pool)
        finally:
            end_pool_cache()
        ns["_compiled"] = True
    return ns


#: The suffix of a parallel kernel's serial build (:func:`kernel`).
SERIAL_SUFFIX = "_serial"


def _serial_copy(f):
    """``f`` under the name ``<name>_serial`` (a function object of its own, so
    numba caches its serial build in its own index file: numba's cache index
    does not record ``parallel``)."""
    import types

    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + SERIAL_SUFFIX,
                           f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + SERIAL_SUFFIX
    g.__module__ = f.__module__
    g.__doc__ = f"The serial build of :func:`{f.__name__}` (same results)."
    return g


def serial_build(k):
    """The serial build of the parallel kernel ``k`` (a :class:`Kernel` or its
    dispatcher), compiling its family if needed."""
    f = k.py_func
    return compile_family(f.__module__)[f.__name__ + SERIAL_SUFFIX]


_PLUMBING = {"annotations", "np", "math", "kernel", "prange", "_compiled"}


def compiled_kernels() -> dict:
    """Every family compiled: ``{name: value}`` of their globals (dispatchers,
    Python helpers, NumPy twins and constants; names are unique across
    families), for :mod:`metaeval.stats._kernels`."""
    out: dict = {}
    for m in KERNEL_MODULES:
        for name, value in compile_family(m).items():
            if not name.startswith("__") and name not in _PLUMBING:
                out.setdefault(name, value)
    return out


# --------------------------------------------------------------------------
# Building the shipped cache:  python -m metaeval.stats._jit build [--pools 1,2]


def _kernel_namespace():
    from . import _kernels

    return vars(_kernels)


def _parse_signature(text):
    """A signature line of :data:`SIGNATURES_FILE` as numba types."""
    from numba.core import types

    names = dict(vars(types))
    names["bool"] = types.boolean
    return eval(text, {"__builtins__": {}}, names)  # noqa: S307 - our own file


def read_signatures(path=SIGNATURES_FILE):
    """``[(kernel, signature text), ...]`` of :data:`SIGNATURES_FILE`."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, sig = line.split("\t", 1)
                out.append((name, sig))
    return out


def compiled_signatures(namespace=None):
    """``{(kernel, signature text)}`` compiled in this process (helpers
    included: some private kernels are called from Python; signatures with a
    literal argument are left out, as only a caller's constant gives them)."""
    from numba.core.registry import CPUDispatcher

    namespace = _kernel_namespace() if namespace is None else namespace
    return {
        (k, str(s))
        for k, v in namespace.items()
        if isinstance(v, CPUDispatcher)
        for s in v.signatures
        if "Literal[" not in str(s)
    }


def compile_listed(only_pool_dependent=False) -> tuple[int, int]:
    """Compile every listed signature (in the build's process, the results
    go to the shipped cache).  Returns (compiled, failed)."""
    ns = _kernel_namespace()
    pool_dep = _pool_dependent(ns)
    done = failed = 0
    rows = read_signatures()
    # a parallel kernel's serial build takes the same arguments (small calls use it)
    rows += [(n + SERIAL_SUFFIX, t) for n, t in rows if n + SERIAL_SUFFIX in ns]
    for name, text in dict.fromkeys(rows):
        if only_pool_dependent and name not in pool_dep:
            continue
        disp = ns.get(name)
        try:
            disp.compile(_parse_signature(text))
            done += 1
        except Exception as exc:  # a stale line: that kernel compiles on first use instead
            failed += 1
            print(f"metaeval: shipped cache: {name}{text} not compiled ({type(exc).__name__})")
    return done, failed


def default_pools() -> list[int]:
    """Pool sizes the build compiles the parallel kernels for: numba's default
    (the cores of the building machine) and 1 (``--jobs`` workers on small
    machines); ``METAEVAL_NUMBA_POOLS=1,2,4,...`` chooses others."""
    env = os.environ.get("METAEVAL_NUMBA_POOLS", "").strip()
    if env:
        return sorted({int(p) for p in env.split(",") if p.strip()})
    from numba.core import config

    return sorted({1, int(config.NUMBA_DEFAULT_NUM_THREADS)})


def build(pools=None, *, quiet=False) -> str:
    """Fill the shipped cache for this installation's content key: one
    process per pool size, each with ``NUMBA_CPU_NAME=generic``, a throwaway
    ``NUMBA_CACHE_DIR`` and :data:`BUILD_ENV` set.  Folders of other keys
    are removed.  Returns a one-line summary."""
    import shutil
    import subprocess
    import sys
    import time

    pools = default_pools() if pools is None else sorted(set(pools))
    keep = {content_key(None)} | {content_key(p) for p in pools}
    if os.path.isdir(SHIPPED_DIR):
        for name in os.listdir(SHIPPED_DIR):
            if name not in keep:
                shutil.rmtree(os.path.join(SHIPPED_DIR, name), ignore_errors=True)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    t0 = time.perf_counter()
    lines = []
    with tempfile.TemporaryDirectory(prefix="metaeval-build-cache-") as tmp:
        for i, pool in enumerate(pools):
            env = dict(os.environ)
            env.update(
                NUMBA_CPU_NAME=PORTABLE_CPU,
                NUMBA_CPU_FEATURES="",
                NUMBA_NUM_THREADS=str(pool),
                NUMBA_CACHE_DIR=tmp,
                **{BUILD_ENV: "1"},
            )
            env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
            code = (
                "from metaeval.stats import _jit; "
                f"print(*_jit.compile_listed(only_pool_dependent={i > 0}))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True
            )
            if out.returncode != 0:
                raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
            lines.append(f"pool {pool}: " + " compiled, ".join(out.stdout.split()[-2:]) + " failed")
    took = time.perf_counter() - t0
    summary = f"metaeval: shipped numba cache in {SHIPPED_DIR} ({'; '.join(lines)}; {took:.0f} s)"
    if not quiet:
        print(summary)
    return summary


def add_signatures(found) -> int:
    """Add ``found`` (``{(kernel, signature text)}``, e.g. :func:`compiled_signatures` after a run)
    to :data:`SIGNATURES_FILE`; returns how many were new.  The list is kept up to date with
    ``python _build/record_kernel_signatures.py <metaeval arguments>``."""
    have = set(read_signatures()) if os.path.exists(SIGNATURES_FILE) else set()
    new = set(found) - have
    with open(SIGNATURES_FILE, "w", encoding="utf-8") as f:
        f.write(
            "# Kernel signatures compiled into the shipped numba cache (metaeval.stats._jit.build).\n"
            "# Add lines with: python _build/record_kernel_signatures.py <metaeval arguments>\n"
        )
        for name, sig in sorted(have | new):
            f.write(f"{name}\t{sig}\n")
    return len(new)


def _main(argv) -> int:
    if argv[:1] == ["build"]:
        pools = None
        if argv[1:2] == ["--pools"]:
            pools = [int(p) for p in argv[2].split(",")]
        build(pools)
        return 0
    print("usage: python -m metaeval.stats._jit build [--pools 1,2,...]")
    return 2


if __name__ == "__main__":  # pragma: no cover - a build step
    import sys

    from metaeval.stats import _jit as _module  # the package's module, not __main__

    sys.exit(_module._main(sys.argv[1:]))


def kernels_compiled() -> bool:
    """Whether this process will find the kernels compiled (for the time
    estimates, issue 26.3): the shipped folders of this installation's
    content key, or a user cache of the kernels at least as new as their
    source.  Imports numba (the estimate is printed by commands that use it)."""
    import glob

    from numba.core import config

    pool = int(config.NUMBA_NUM_THREADS)
    if os.path.isdir(os.path.join(SHIPPED_DIR, content_key(pool))) and not _ignored():
        return True
    here = os.path.dirname(os.path.abspath(__file__))
    newest = max(os.path.getmtime(os.path.join(here, n)) for n in _SOURCES)
    try:
        user = pool_cache_dir(pool)
    except RuntimeError:
        return False
    found = [
        f
        for m in KERNEL_MODULES
        for f in glob.glob(os.path.join(user, "**", f"{m}.*.nbi"), recursive=True)
    ]
    return len([f for f in found if os.path.getmtime(f) >= newest]) >= 5
