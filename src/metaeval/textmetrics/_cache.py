"""The on-disk score cache: one SQLite file in a user-given folder.

A cached value is the score vector of one work item (a hypothesis with one
reference, with all its references, or with its source) under one adapter
configuration.  Keys are ``(signature, item hash)``: the signature is
:meth:`TextMetric.cache_signature` (metric, options, library version,
adapter version) and the item hash a 128-bit BLAKE2b digest of the texts.
Values are stored as raw float64 bytes, so they come back bit for bit.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from ..errors import ParameterError

FILENAME = "textmetrics.sqlite"
_CHUNK = 500  # keys per SELECT (SQLite's default variable limit is 32766; stay small)


def item_key(mode: str, hypothesis: str, context) -> bytes:
    """Hash of one work item; ``mode`` tags how the context is read."""
    h = hashlib.blake2b(digest_size=16)
    parts = [mode, hypothesis, *((context,) if isinstance(context, str) else context)]
    for part in parts:
        data = part.encode("utf8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


class ScoreCache:
    """Scores kept on disk, keyed by metric signature and text hash.

    Parameters
    ----------
    folder : str or Path
        Created if needed; the cache is ``folder/textmetrics.sqlite``.  Several
        processes may share it (SQLite locking; writes are short
        transactions).

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from metaeval.textmetrics import ScoreCache
    >>> cache = ScoreCache(tempfile.mkdtemp())
    >>> cache.put("sig", {b"k": np.array([1.5])})
    >>> cache.get("sig", [b"k", b"other"])
    {b'k': array([1.5])}
    >>> len(cache)
    1
    """

    def __init__(self, folder):
        if not isinstance(folder, (str, Path)):
            raise ParameterError(f"cache_dir={folder!r} must be a folder path (str or Path)")
        self.folder = Path(folder).expanduser()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ParameterError(f"cache_dir={str(folder)!r} cannot be created: {exc}") from None
        self.path = self.folder / FILENAME
        with self._connect() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS signatures (id INTEGER PRIMARY KEY, "
                "signature TEXT UNIQUE NOT NULL)"
            )
            con.execute(
                "CREATE TABLE IF NOT EXISTS scores (sig INTEGER NOT NULL, key BLOB NOT NULL, "
                "value BLOB NOT NULL, PRIMARY KEY (sig, key)) WITHOUT ROWID"
            )

    def _connect(self):
        con = sqlite3.connect(self.path, timeout=60)
        con.execute("PRAGMA journal_mode=WAL")
        return con

    def _sig_id(self, con, signature: str, create: bool) -> int | None:
        row = con.execute("SELECT id FROM signatures WHERE signature = ?", (signature,)).fetchone()
        if row is None:
            if not create:
                return None
            cur = con.execute("INSERT INTO signatures (signature) VALUES (?)", (signature,))
            row = (cur.lastrowid,)
        return row[0]

    def get(self, signature: str, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The cached values among ``keys`` (missing keys are left out)."""
        keys = list(keys)
        out: dict[bytes, np.ndarray] = {}
        con = self._connect()
        try:
            sig = self._sig_id(con, signature, create=False)
            if sig is None:
                return out
            for i in range(0, len(keys), _CHUNK):
                part = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = con.execute(
                    f"SELECT key, value FROM scores WHERE sig = ? AND key IN ({marks})",
                    (sig, *part),
                )
                for key, value in rows:
                    out[bytes(key)] = np.frombuffer(value, dtype=np.float64).copy()
        finally:
            con.close()
        return out

    def put(self, signature: str, values: Mapping[bytes, np.ndarray]) -> None:
        """Store ``values`` (one float64 vector per key) in one transaction."""
        con = self._connect()
        try:
            with con:
                sig = self._sig_id(con, signature, create=True)
                con.executemany(
                    "INSERT OR REPLACE INTO scores (sig, key, value) VALUES (?, ?, ?)",
                    [(sig, k, np.ascontiguousarray(v, dtype=np.float64).tobytes())
                     for k, v in values.items()],
                )
        finally:
            con.close()

    def signatures(self) -> dict[str, int]:
        """Cached signatures and how many values each has."""
        con = self._connect()
        try:
            rows = con.execute(
                "SELECT s.signature, COUNT(v.key) FROM signatures s LEFT JOIN scores v "
                "ON v.sig = s.id GROUP BY s.id ORDER BY s.id"
            ).fetchall()
        finally:
            con.close()
        return dict(rows)

    def clear(self, signature: str | None = None) -> None:
        """Delete every value, or those of one signature."""
        con = self._connect()
        try:
            with con:
                if signature is None:
                    con.execute("DELETE FROM scores")
                    con.execute("DELETE FROM signatures")
                else:
                    con.execute(
                        "DELETE FROM scores WHERE sig IN (SELECT id FROM signatures "
                        "WHERE signature = ?)", (signature,))
                    con.execute("DELETE FROM signatures WHERE signature = ?", (signature,))
        finally:
            con.close()

    def __len__(self) -> int:
        con = self._connect()
        try:
            return con.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
        finally:
            con.close()

    def __repr__(self) -> str:
        return f"ScoreCache({str(self.folder)!r})"
