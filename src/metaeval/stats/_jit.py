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
``_kernels``): it asks numba to locate a cache for a
probe function in this folder, exactly as it will for the kernels, and when
that fails it points numba's cache folder (``numba.config.CACHE_DIR``) at a
private per-user folder in the temporary directory
(``<tempfile.gettempdir()>/metaeval-numba-<uid>``, mode 0700).  Numba's
cache index is read with pickle, so a folder of that name that is not a
directory owned by this user and closed to others is not used; a fresh
private folder is made instead (no reuse between runs, but safe).  Nothing
changes when numba's own locations work.

The parallel kernels of :mod:`metaeval.stats._kernels` freeze the size of
numba's thread pool (``NUMBA_NUM_THREADS``) into their compiled code, and
numba's cache index does not record it: a cache written by a run with one
thread made every later run split its work for one thread (one core busy,
whatever the pool).  :func:`begin_pool_cache` therefore gives those kernels
a cache folder per pool size, ``numba-threads-<n>`` inside the folder numba
would use, while they are decorated (:func:`end_pool_cache` restores
numba's setting, so other packages' caches are not moved).
"""

from __future__ import annotations

import os
import stat
import tempfile

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


def end_pool_cache() -> None:
    from numba.core import config

    if "saved" in _state:
        config.CACHE_DIR = _state.pop("saved")
