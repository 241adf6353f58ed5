"""Download a registry dataset's files once into a user cache, checksummed and atomic.

Standard library only (``urllib``): every file of a registry entry is a pinned
URL with a known size and sha256, so what a download library would add (retries,
mirrors, progress bars) is not needed, while the errors must be one line naming
the dataset and the cache path, which this module controls.  A file is
written to ``<name>.part-<pid>`` beside its destination, its size and sha256
are checked, and only then is it renamed into place (``os.replace``, atomic on
one file system): an interrupted or corrupted download never leaves a file
that looks complete.

Where the files go
------------------
``METAEVAL_DATA`` (a folder) if set, else ``$XDG_CACHE_HOME/metaeval/datasets``,
else ``~/.cache/metaeval/datasets``; one sub-folder per dataset, the files under
their registry names.  A folder filled by hand (or copied from another machine)
with the same names is used without any network: that is the offline mode.
``METAEVAL_DATA_URL`` (or ``base_url=``) replaces the scheme and host of every
URL by a mirror (``http://host/path`` or ``file:///folder``) that keeps the URL
paths; the checksums still apply.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from metaeval._escape import literal
from metaeval.errors import DataError

ENV_DIR = "METAEVAL_DATA"
ENV_URL = "METAEVAL_DATA_URL"
_CHUNK = 1 << 16


class DatasetFetchError(DataError):
    """A registry dataset could not be fetched or did not verify (one-line message)."""


@dataclass(frozen=True)
class RemoteFile:
    """One file of a registry entry: where it goes in the dataset's cache folder, its
    pinned URL, and the size and sha256 of the exact bytes at that URL."""

    name: str
    url: str
    sha256: str
    size: int


def cache_root(cache_dir=None) -> Path:
    """The cache folder: ``cache_dir``, else ``$METAEVAL_DATA``, else the user cache."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "metaeval" / "datasets"


def mirrored(url: str, base_url: str | None) -> str:
    """``url`` with its scheme and host replaced by ``base_url`` (path kept)."""
    base = base_url if base_url is not None else os.environ.get(ENV_URL) or None
    if not base:
        return url
    return base.rstrip("/") + urllib.parse.urlsplit(url).path


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _fail(dataset: str, what: str, dest: Path) -> DatasetFetchError:
    return DatasetFetchError(
        f"dataset {dataset!r}: {what}; cache path {dest} (nothing written there; retry, or put the "
        f"verified file there by hand and set {ENV_DIR} for offline use)"
    )


def _download(dataset: str, f: RemoteFile, dest: Path, base_url, timeout: float) -> None:
    url = mirrored(f.url, base_url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f"{dest.name}.part-{os.getpid()}")
    h = hashlib.sha256()
    n = 0
    try:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as out:
                while chunk := resp.read(min(_CHUNK, f.size + 1 - n)):
                    h.update(chunk)
                    out.write(chunk)
                    n += len(chunk)
                    if n > f.size:  # never read more than the pinned size (a server sending forever)
                        break
        except http.client.IncompleteRead as exc:
            got = n + len(exc.partial or b"")
            raise _fail(dataset, f"download of {url} truncated ({got} of {f.size} bytes)", dest) from None
        except urllib.error.HTTPError as exc:
            raise _fail(dataset, f"{url} answered HTTP {exc.code}", dest) from None
        except http.client.HTTPException as exc:  # a garbage status line or header (BadStatusLine, ...)
            said = literal(str(exc).strip())  # the server's bytes: shown, never obeyed
            said = said if len(said) <= 80 else said[:79] + "\u2026"
            raise _fail(dataset, f"{url} sent no valid HTTP answer ({type(exc).__name__}: {said})", dest) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _fail(dataset, f"no network: cannot reach {url} ({reason})", dest) from None
        if n != f.size:
            raise _fail(dataset, f"download of {url} truncated ({n} of {f.size} bytes)"
                        if n < f.size else f"{url} sent more than the expected {f.size} bytes", dest)
        digest = h.hexdigest()
        if digest != f.sha256:
            raise _fail(dataset, f"checksum mismatch for {url}: sha256 {digest}, expected {f.sha256}", dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()


def fetch_files(dataset: str, files, *, cache_dir=None, base_url=None, timeout: float = 60.0,
                download: bool = True) -> tuple[Path, int]:
    """Make every file of ``files`` present and verified under ``<root>/<dataset>/``.

    A file already there is used if its sha256 matches (else it is fetched
    again).  Returns the dataset's folder and the number of files downloaded.
    With ``download=False`` a missing file is an error instead of a download.
    """
    folder = cache_root(cache_dir) / dataset
    fetched = 0
    for f in files:
        dest = folder / f.name
        if dest.is_file() and sha256_of(dest) == f.sha256:
            continue
        if not download:
            raise _fail(dataset, f"{f.name} is not in the cache and downloads are off", dest)
        _download(dataset, f, dest, base_url, timeout)
        fetched += 1
    return folder, fetched
