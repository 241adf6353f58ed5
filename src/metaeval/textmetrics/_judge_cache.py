"""The on-disk response cache of the LLM judge: one SQLite file in a folder.

Every response of a judge's backend is stored *raw* (the response body, as
text) under a 128-bit key, as soon as it arrives and before it is parsed, so
an interrupted run resumes without repeating a request, a re-run costs
nothing, and a changed parser (``pattern=``, ``scale=``, ``aggregate=``)
re-reads the stored responses instead of asking again.  The key is a BLAKE2b
hash of the request description (:func:`request_key`): backend, model,
messages (the prompt), sampling parameters and sample index.  The API key is
never part of a request description, so it is never stored.

The file, ``judge.sqlite``, sits next to the text-metric score cache
(``textmetrics.sqlite``) when both use the same folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from ..errors import ParameterError

FILENAME = "judge.sqlite"
_CHUNK = 500  # keys per SELECT


def canonical_json(obj) -> str:
    """The JSON text hashed into a key: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(description: dict) -> bytes:
    """128-bit BLAKE2b digest of a request description (:func:`canonical_json`)."""
    return hashlib.blake2b(canonical_json(description).encode("utf8"), digest_size=16).digest()


def default_cache_dir() -> Path:
    """Where responses are cached when no folder is given.

    ``$METAEVAL_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/metaeval``, else
    ``~/.cache/metaeval``.
    """
    env = os.environ.get("METAEVAL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "metaeval"


def _cache_error(path: Path, action: str, exc: BaseException) -> ParameterError:
    """One line naming the cache file, what failed and how to choose another folder."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return ParameterError(
        f"judge cache {path}: cannot {action} ({reason}); free space or fix the permissions, or "
        "choose another folder with --cache DIR (cache_dir=) or run without one (--no-cache, "
        "cache_dir=False)"
    )


class ResponseCache:
    """Raw judge responses kept on disk, keyed by a hash of the request.

    Parameters
    ----------
    folder : str or Path
        Created if needed; the cache is ``folder/judge.sqlite``.  Several
        threads and processes may share it (SQLite WAL locking; each write is
        one short transaction).

    Raises
    ------
    ParameterError
        When the folder or the database cannot be created, read or written
        (a full disk, a read-only folder, a corrupt file): one line naming
        the file, the reason and the options to choose another folder.

    Examples
    --------
    >>> import tempfile
    >>> from metaeval.textmetrics import ResponseCache
    >>> cache = ResponseCache(tempfile.mkdtemp())
    >>> key = b"0123456789abcdef"
    >>> cache.put(key, '{"sample": 0}', '{"choices": []}')
    >>> cache.get([key, b"other"])
    {b'0123456789abcdef': '{"choices": []}'}
    >>> len(cache)
    1
    """

    def __init__(self, folder):
        if not isinstance(folder, (str, os.PathLike)):
            raise ParameterError(f"cache_dir={folder!r} must be a folder path (str or Path)")
        self.folder = Path(folder).expanduser()
        self.path = self.folder / FILENAME
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _cache_error(self.folder, "create the folder", exc) from None
        self._lock = threading.Lock()
        with self._guard("open or create the database"):
            con = self._connect()
            try:
                with con:
                    con.execute(
                        "CREATE TABLE IF NOT EXISTS responses (key BLOB PRIMARY KEY, "
                        "request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL) "
                        "WITHOUT ROWID"
                    )
            finally:
                con.close()

    def __getstate__(self):  # picklable (sent to worker processes): the lock is recreated
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _guard(self, action: str):
        """SQLite and OS errors (disk full, read-only folder, corrupt file) as one clear error."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise _cache_error(self.path, action, exc) from None

    def _connect(self):
        con = sqlite3.connect(self.path, timeout=60)
        con.execute("PRAGMA journal_mode=WAL")
        return con

    def get(self, keys: Iterable[bytes]) -> dict[bytes, str]:
        """The cached responses among ``keys`` (missing keys are left out)."""
        keys = list(keys)
        out: dict[bytes, str] = {}
        with self._guard("read"):
            con = self._connect()
            try:
                for i in range(0, len(keys), _CHUNK):
                    part = keys[i : i + _CHUNK]
                    marks = ",".join("?" * len(part))
                    for key, value in con.execute(
                        f"SELECT key, response FROM responses WHERE key IN ({marks})", part
                    ):
                        out[bytes(key)] = value
            finally:
                con.close()
        return out

    def put(self, key: bytes, request: str, response: str) -> None:
        """Store one response (one transaction; safe from several threads)."""
        with self._lock, self._guard("write a response"):
            con = self._connect()
            try:
                with con:
                    con.execute(
                        "INSERT OR REPLACE INTO responses (key, request, response, created) "
                        "VALUES (?, ?, ?, ?)",
                        (key, request, response, time.time()),
                    )
            finally:
                con.close()

    def entries(self) -> list[tuple[bytes, dict, str]]:
        """Every ``(key, request description, raw response)``, oldest first."""
        with self._guard("read"):
            con = self._connect()
            try:
                rows = con.execute(
                    "SELECT key, request, response FROM responses ORDER BY created"
                ).fetchall()
            finally:
                con.close()
        return [(bytes(k), json.loads(r), v) for k, r, v in rows]

    def clear(self) -> None:
        """Delete every stored response."""
        with self._guard("clear"):
            con = self._connect()
            try:
                with con:
                    con.execute("DELETE FROM responses")
            finally:
                con.close()

    def __len__(self) -> int:
        with self._guard("read"):
            con = self._connect()
            try:
                return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            finally:
                con.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.folder)!r})"
