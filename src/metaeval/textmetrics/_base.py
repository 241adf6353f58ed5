"""The adapter base class and helpers shared by the adapters.

An adapter is a :class:`TextMetric`: a thin, picklable wrapper over an
established library that scores a batch of (hypothesis, context) pairs, the
context being one reference, one source, or (``multi_ref="native"``) the
tuple of all references of a hypothesis.  Everything else (pairing texts,
caching, chunking, parallel work, multi-reference aggregation) is done once,
by the engine in :mod:`metaeval.textmetrics._engine`.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._signature import make_signature
from ..errors import ParameterError

#: ``multi_ref=`` choices (see :func:`metaeval.textmetrics.score`).
MULTI_REF = {
    "best": "the best reference for the metric: max (min for TER, where lower is better)",
    "max": "maximum over the per-reference scores",
    "min": "minimum over the per-reference scores",
    "mean": "mean over the per-reference scores",
    "native": "the library's own multi-reference score (one call with every reference)",
}

#: Pip extra named in missing-dependency messages.
_EXTRAS = {
    "sacrebleu": "text",
    "rouge-score": "text",
    "nltk": "text",
    "bert-score": "neural",
    "transformers": "neural",
    "torch": "neural",
    "unbabel-comet": "comet",
    "bleurt-pytorch": "comet",
}


def require(module: str, dist: str):
    """Import an optional dependency, or raise an ImportError that says how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = _EXTRAS.get(dist, "text")
        raise ImportError(
            f"this text metric needs the {dist!r} package ({exc}); install it with "
            f"pip install 'metaeval[{extra}]'"
        ) from exc


def library_version(dist: str) -> str:
    """Installed version of a distribution (``"unknown"`` if it has no metadata)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def check_choice(value, name: str, allowed) -> Any:
    if value not in allowed:
        raise ParameterError(
            f"{name}={value!r} is not allowed; choose one of {', '.join(map(repr, allowed))}"
        )
    return value


def check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name}={value!r} must be True or False")
    return bool(value)


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name}={value!r} must be a positive int")
    return int(value)


def check_number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ParameterError(f"{name}={value!r} must be a number")
    return float(value)


# ----------------------------------------------------------------------------- model folders

_FINGERPRINTS: dict[tuple, str] = {}


def local_model_dir(path, name: str = "model") -> Path:
    """Check that ``path`` is an existing local folder (metaeval never downloads weights)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(
            f"{name}={path!r} must be the path of a local model folder (str or Path)"
        )
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ParameterError(
            f"{name}={str(path)!r} is not a local folder; text metrics load models only from "
            "local folders (a save_pretrained() directory with config.json and the weights) "
            "and never download them: download the model once and pass its folder"
        )
    if not (folder / "config.json").is_file():
        raise ParameterError(
            f"{name}={str(path)!r} has no config.json; pass a folder written by "
            "save_pretrained() (config.json, tokenizer files and weights)"
        )
    return folder.resolve()


def folder_fingerprint(folder: Path) -> str:
    """Content hash (12 hex digits) of every file under ``folder``.

    Memoised per process on the files' paths, sizes and modification times, so
    a 1 GB model is hashed once per process.
    """
    files = sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts)
    stamp = tuple((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(folder), stamp)
    hit = _FINGERPRINTS.get(key)
    if hit is None:
        h = hashlib.blake2b(digest_size=16)
        for p in files:
            h.update(str(p.relative_to(folder)).encode() + b"\0")
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        hit = _FINGERPRINTS[key] = h.hexdigest()[:12]
    return hit


def texts_fingerprint(texts: Sequence[str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for t in texts:
        h.update(str(t).encode() + b"\x1e")
    return h.hexdigest()[:12]


# ----------------------------------------------------------------------------- the base class


class TextMetric:
    """Base class of the text-metric adapters.

    Subclasses set the class attributes, implement :meth:`options` (the
    options that change a score, for the signature and the cache key) and
    :meth:`score_batch`, and keep library objects out of their pickled state
    (see :meth:`__getstate__`), so that an adapter can be sent to worker
    processes and load its model there.

    Attributes
    ----------
    kind : str
        The registry name of the adapter class (``"bleu"``, ``"rouge"``...).
    library : str
        The distribution whose version enters the signature.
    higher_is_better : bool
        Direction of the score; ``multi_ref="best"`` takes the max when
        True, else the min.
    native_multi_ref : bool
        Whether the library scores a hypothesis against several references
        in one call (``multi_ref="native"``).
    batch_size : int
        Pairs per work unit (a chunk scored in one :meth:`score_batch` call,
        cached as soon as it finishes).
    version : int
        Bumped when metaeval changes how the adapter computes its scores; it
        is part of the cache key, so old cached scores are not reused.
    """

    kind: ClassVar[str] = ""
    library: ClassVar[str] = ""
    higher_is_better: ClassVar[bool] = True
    native_multi_ref: ClassVar[bool] = False
    #: Whether the engine keeps this metric's scores in the :class:`ScoreCache`.  An adapter
    #: with its own cache of raw results (the LLM judge caches every response, and must not
    #: cache a failed request as a score) sets it to False.
    cacheable: ClassVar[bool] = True
    version: ClassVar[int] = 1
    #: Instance attributes that hold library objects: dropped when pickled.
    _transient: ClassVar[tuple[str, ...]] = ()
    #: Options left out of a column's signature (they concern other columns).
    column_only: ClassVar[tuple[str, ...]] = ()

    batch_size: int = 256

    def __init__(self, *, name: str | None = None, batch_size: int | None = None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ParameterError(f"name={name!r} must be a non-empty str")
        self._name = name
        if batch_size is not None:
            self.batch_size = check_positive_int(batch_size, "batch_size")
        for attr in self._transient:
            setattr(self, attr, None)

    # -------------------------------------------------------------- what it reads and writes
    @property
    def name(self) -> str:
        """Column name (one output) or column prefix (several)."""
        return self._name or self.kind

    @property
    def uses(self) -> str:
        """What a hypothesis is scored against: ``"references"``, ``"source"``, or
        ``"source+references"`` (each reference together with the source, as COMET: the
        context of a work item is then the pair ``(source, reference)``)."""
        return "references"

    @property
    def chunk_size(self) -> int:
        """Pairs per work unit: one :meth:`score_batch` call, cached as soon as it
        finishes (default :attr:`batch_size`; adapters whose every call costs a model
        load or a subprocess use larger units)."""
        return self.batch_size

    def library_version(self) -> str:
        """The version of :attr:`library` that scores (in the signature and the cache key);
        an adapter that runs its library elsewhere (COMET's ``comet-score``) asks there."""
        return library_version(self.library)

    @property
    def columns(self) -> tuple[str, ...]:
        """The score columns this adapter adds, in order."""
        return (self.name,)

    def column_fields(self, column: str) -> dict:
        """Extra signature fields of one output column (e.g. the ROUGE type)."""
        return {}

    # -------------------------------------------------------------- signature and cache key
    def options(self) -> dict:
        """Options that change the score, in signature order (subclasses)."""
        return {}

    def cache_signature(self) -> str:
        """What the cached values depend on: kind, options, library version, adapter version.

        The metaeval version and the multi-reference aggregation are left out,
        so that upgrading metaeval or changing ``multi_ref`` reuses the
        cached per-reference scores.
        """
        fields = {"metric": self.kind, **self.options()}
        fields[self.library] = self.library_version()
        fields["adapter"] = self.version
        return make_signature(**fields).rsplit("|metaeval:", 1)[0]

    def signature(self, column: str | None = None, *, multi_ref: str | None = None,
                  nrefs=None) -> str:
        """The reproducibility line of one output column."""
        column = self.columns[0] if column is None else column
        fields = {"metric": self.kind}
        extra = self.column_fields(column)
        if len(self.columns) > 1 and not extra:
            fields["out"] = column
        fields.update(extra)
        fields.update({k: v for k, v in self.options().items() if k not in self.column_only})
        if self.uses in ("references", "source+references"):
            if self.uses == "source+references":
                fields["ctx"] = "source+ref"
            fields["refs"] = nrefs
            fields["multi"] = multi_ref
        else:
            fields["ctx"] = "source"
        fields[self.library] = self.library_version()
        return make_signature(**fields)

    def resolve_multi_ref(self, multi_ref: str) -> str:
        check_choice(multi_ref, "multi_ref", tuple(MULTI_REF))
        if multi_ref == "best":
            return "max" if self.higher_is_better else "min"
        if multi_ref == "native" and not self.native_multi_ref:
            raise ParameterError(
                f"multi_ref='native' is not available for {self.kind!r}: its library has no "
                "multi-reference score; use 'max', 'min', 'mean' or 'best'"
            )
        return multi_ref

    # -------------------------------------------------------------- scoring
    def score_batch(self, hypotheses: list[str], contexts: list) -> np.ndarray:
        """Scores of ``len(hypotheses)`` pairs, shape ``(n, len(columns))``.

        ``contexts[j]`` is a str (one reference, or the source) or, with
        ``multi_ref="native"``, a tuple of references.
        """
        raise NotImplementedError

    def __call__(self, hypotheses: list[str], contexts: list) -> np.ndarray:
        out = np.asarray(self.score_batch(list(hypotheses), list(contexts)), dtype=np.float64)
        if out.shape != (len(hypotheses), len(self.columns)):
            raise RuntimeError(  # a bug in an adapter, not a user error
                f"adapter {self.kind!r} returned shape {out.shape}, expected "
                f"({len(hypotheses)}, {len(self.columns)})"
            )
        return out

    def __getstate__(self):
        state = self.__dict__.copy()
        for attr in self._transient:
            state[attr] = None
        return state

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({opts})"
