"""TREC run and qrels files: :class:`Run`, :class:`Qrels` and their readers.

Formats (as read by ``trec_eval``):

* **run**: ``qid Q0 docid rank score tag``, six whitespace-separated fields
  per line.  The second field is ignored (``Q0`` by convention); ``rank``
  must be an integer but is *not* used to order documents.
* **qrels**: ``qid iteration docid relevance``, four fields per line; the
  iteration field is ignored, ``relevance`` is an integer (graded relevance
  allowed; values <= 0 are not relevant).

Ordering (trec_eval's): within a query, documents are ranked by decreasing
score, and documents with equal scores by *decreasing* document id (byte-wise
string comparison, so ``"D9"`` comes before ``"D10"``).  The ``rank`` column
of the file is ignored, as trec_eval ignores it.  A :class:`Run` stores each
query's documents already in this order.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..data import open_text
from ..errors import DataError, ParameterError

_RUN_FIELDS = ("query id", "Q0", "document id", "rank", "score", "run tag")
_QRELS_FIELDS = ("query id", "iteration", "document id", "relevance")
_RUN_SUFFIXES = (".run.gz", ".run", ".trec.gz", ".trec", ".txt.gz", ".txt", ".res.gz", ".res",
                 ".gz")


def _path(path, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"{what}={path!r} must be a file path (str or Path)")
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{what}: no such file: {str(p)!r}")
    return p


def run_name_from_path(path: Path) -> str:
    """The file name without a run suffix (``bm25.run.gz`` -> ``bm25``)."""
    name = path.name
    for suffix in _RUN_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: len(name) - len(suffix)]
    return name


def trec_order(docs: list[str], scores: list[float]) -> tuple[tuple[str, ...], np.ndarray]:
    """Documents sorted as trec_eval ranks them: score descending, then doc id descending."""
    order = sorted(range(len(docs)), key=lambda k: (scores[k], docs[k]), reverse=True)
    return tuple(docs[k] for k in order), np.array([scores[k] for k in order], dtype=np.float64)


def _hash(parts: Iterable[str]) -> bytes:
    """128-bit BLAKE2b digest of a sequence of ids (NUL-separated, count first)."""
    parts = list(parts)
    data = f"{len(parts)}\x00" + "\x00".join(parts)
    return hashlib.blake2b(data.encode("utf8"), digest_size=16).digest()


# ----------------------------------------------------------------------------- Run


@dataclass(frozen=True, eq=False)
class Run:
    """One system's ranked lists, one per query, in trec_eval's order.

    Attributes
    ----------
    name : str
        The system (run) name: a dataset's system label.
    rankings : mapping
        Query id -> ``(doc_ids, scores)``: a tuple of document ids in
        evaluation order and a read-only float64 array of their scores
        (decreasing).  Queries are in file order.
    perturbation : str or None
        Signature of the perturbation that produced this run (see
        :func:`shuffle_run`); ``None`` for a run as read.
    skipped : mapping
        Query id -> reason, for queries a perturbation could not change
        (their perturbed scores are NaN).
    source : str or None
        The file the run was read from.
    n_reordered : int
        Queries whose evaluation order differs from the order of the file's
        ``rank`` column (score ties or ranks that contradict scores):
        trec_eval, and so metaeval, evaluate the score order.
    tags : tuple of str
        The run tags of the file (last field), in order of appearance.

    Examples
    --------
    >>> from metaeval.ranking import Run
    >>> run = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}, name="toy")
    >>> run.rankings["q1"][0]          # score descending, ties by doc id descending
    ('d2', 'd3', 'd1')
    """

    name: str
    rankings: Mapping[str, tuple[tuple[str, ...], np.ndarray]]
    perturbation: str | None = None
    skipped: Mapping[str, str] = field(default_factory=dict)
    source: str | None = None
    n_reordered: int = 0
    tags: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ParameterError(f"a run needs a non-empty str name, got {self.name!r}")
        for _, scores in self.rankings.values():
            scores.flags.writeable = False
        object.__setattr__(self, "rankings", MappingProxyType(dict(self.rankings)))
        object.__setattr__(self, "skipped", MappingProxyType(dict(self.skipped)))

    def __getstate__(self):  # mappingproxy does not pickle: send plain dicts
        return {**self.__dict__, "rankings": dict(self.rankings), "skipped": dict(self.skipped)}

    def __setstate__(self, state):
        for key, value in state.items():
            object.__setattr__(self, key, value)
        for _, scores in self.rankings.values():
            scores.flags.writeable = False
        object.__setattr__(self, "rankings", MappingProxyType(self.rankings))
        object.__setattr__(self, "skipped", MappingProxyType(self.skipped))

    @property
    def queries(self) -> tuple[str, ...]:
        """Query ids, in file order."""
        return tuple(self.rankings)

    def __len__(self) -> int:
        return len(self.rankings)

    def __repr__(self) -> str:
        n_docs = sum(len(d) for d, _ in self.rankings.values())
        pert = "" if self.perturbation is None else f", perturbation={self.perturbation!r}"
        return f"Run({self.name!r}, {len(self)} queries, {n_docs} documents{pert})"

    def ranking_key(self, query: str) -> bytes:
        """128-bit hash of one query's ranked list (the ordered document ids)."""
        docs, _ = self.rankings[query]
        return _hash(("ranking", query, *docs))

    def fingerprint(self) -> str:
        """Content hash (12 hex digits) of the ranked lists (ids and order; not the scores)."""
        h = hashlib.blake2b(digest_size=16)
        for q in self.rankings:
            h.update(self.ranking_key(q))
        return h.hexdigest()[:12]

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query: {doc: score}}`` (the pytrec_eval / ir-measures run format)."""
        return {q: dict(zip(docs, scores.tolist())) for q, (docs, scores) in self.rankings.items()}

    def to_frame(self) -> pd.DataFrame:
        """Columns ``query_id``, ``doc_id``, ``rank`` (1-based, evaluation order), ``score``."""
        rows = [(q, d, k + 1, float(s)) for q, (docs, scores) in self.rankings.items()
                for k, (d, s) in enumerate(zip(docs, scores))]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], *, name: str) -> Run:
        """A run from ``{query: {doc: score}}`` (ids converted to ``str``)."""
        if not isinstance(run, Mapping):
            raise ParameterError(f"run must be a mapping query -> {{doc: score}}, got "
                                 f"{type(run).__name__}")
        rankings = {}
        for q, docs in run.items():
            if not isinstance(docs, Mapping) or not docs:
                raise DataError(f"run {name!r}, query {q!r}: give a non-empty mapping doc -> score")
            ids = [str(d) for d in docs]
            scores = []
            for d, s in docs.items():
                s = _score_value(s, f"run {name!r}, query {q!r}, document {d!r}")
                scores.append(s)
            if len(set(ids)) != len(ids):
                raise DataError(f"run {name!r}, query {q!r}: document ids repeat after str()")
            rankings[str(q)] = trec_order(ids, scores)
        if not rankings:
            raise DataError(f"run {name!r} has no queries")
        return cls(name, rankings)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, name: str) -> Run:
        """A run from a DataFrame with ``query_id``, ``doc_id``, ``score`` columns."""
        missing = [c for c in ("query_id", "doc_id", "score") if c not in frame.columns]
        if missing:
            raise DataError(f"run frame lacks column(s) {missing}; it needs query_id, doc_id, "
                            "score (the ir-measures names)")
        run: dict[str, dict[str, float]] = {}
        for k, (q, d, s) in enumerate(zip(frame["query_id"], frame["doc_id"], frame["score"])):
            docs = run.setdefault(str(q), {})
            if str(d) in docs:
                raise DataError(f"run frame row {k}: document {str(d)!r} repeats for query "
                                f"{str(q)!r}")
            docs[str(d)] = s
        return cls.from_dict(run, name=name)


def _score_value(s, where: str) -> float:
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)):
        raise DataError(f"{where}: score {s!r} is not a number")
    s = float(s)
    if not math.isfinite(s):
        raise DataError(f"{where}: score {s!r} is not finite")
    return s


def read_run(path, *, name: str | None = None) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``; gzip detected).

    Parameters
    ----------
    path : str or Path
        The run file, plain or gzip-compressed (detected from its first
        bytes, whatever its name).
    name : str, optional
        The run's name; default the file name without ``.run``, ``.txt``,
        ``.trec``, ``.res`` and ``.gz`` suffixes.

    Returns
    -------
    Run
        Documents of each query in trec_eval's order: score descending, ties
        by document id descending (the ``rank`` field is ignored).

    Raises
    ------
    DataError
        A line without six fields, a rank that is not an integer, a score
        that is not a finite number, a document listed twice for a query, or
        an empty file; messages name the file, line and field.

    Examples
    --------
    >>> import os, tempfile
    >>> from metaeval.ranking import read_run
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "bm25.run")
    >>> with open(path, "w") as f:
    ...     _ = f.write("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 2.5 bm25\\nq1 Q0 d3 3 1.0 bm25\\n")
    >>> run = read_run(path)
    >>> run, run.rankings["q1"][0], run.n_reordered
    (Run('bm25', 1 queries, 3 documents), ('d2', 'd1', 'd3'), 1)
    """
    p = _path(path, "path")
    name = run_name_from_path(p) if name is None else name
    if not isinstance(name, str) or not name:
        raise ParameterError(f"name={name!r} must be a non-empty str")
    per_query: dict[str, tuple[list, list, list]] = {}
    seen: dict[tuple[str, str], int] = {}
    tags: dict[str, None] = {}
    fname = p.name
    with open_text(p) as fh:
        for lineno, line in enumerate(fh, start=1):
            fields = line.split()
            if len(fields) == 6:  # the fast path; a bad line falls through to the diagnosis
                q, _, d, rank, score, tag = fields
                try:
                    r, s = int(rank), float(score)
                except ValueError:
                    r = s = None
                if s is not None and math.isfinite(s) and (q, d) not in seen:
                    seen[(q, d)] = lineno
                    docs, scores, ranks = per_query.setdefault(q, ([], [], []))
                    docs.append(d), scores.append(s), ranks.append(r)
                    tags[tag] = None
                    continue
            if not fields:
                continue
            where = f"{fname} line {lineno}"
            if len(fields) != 6:
                raise DataError(
                    f"{where}: {len(fields)} field(s); a TREC run line has 6: "
                    f"{' '.join(_RUN_FIELDS)} (whitespace-separated; document ids and tags "
                    "cannot contain spaces)"
                )
            q, _, d, rank, score, tag = fields
            try:
                r = int(rank)
            except ValueError:
                raise DataError(f"{where}, field 4 (rank): {rank!r} is not an integer") from None
            try:
                s = float(score)
            except ValueError:
                raise DataError(f"{where}, field 5 (score): {score!r} is not a number") from None
            if not math.isfinite(s):
                raise DataError(f"{where}, field 5 (score): {score!r} is not finite")
            first = seen.get((q, d))
            if first is not None:
                raise DataError(
                    f"{where}, field 3 (document id): {d!r} is listed twice for query {q!r} "
                    f"(first at line {first}); trec_eval refuses duplicate documents"
                )
    if not per_query:
        raise DataError(f"{p.name} has no run lines")
    rankings = {}
    n_reordered = 0
    for q, (docs, scores, ranks) in per_query.items():
        ordered = trec_order(docs, scores)
        by_rank = [docs[k] for k in sorted(range(len(docs)), key=lambda k: (ranks[k], k))]
        n_reordered += tuple(by_rank) != ordered[0]
        rankings[q] = ordered
    return Run(name, rankings, source=str(p), n_reordered=n_reordered, tags=tuple(tags))


def read_runs(paths, *, names: Iterable[str] | None = None) -> dict[str, Run]:
    """Read several run files: a folder (every file in it, sorted) or a list of paths.

    Returns
    -------
    dict
        Run name -> :class:`Run`, in path order.  Two runs with one name are
        an error (pass ``names=``).
    """
    if isinstance(paths, (str, os.PathLike)) and Path(paths).is_dir():
        files = sorted(p for p in Path(paths).iterdir() if p.is_file() and not
                       p.name.startswith("."))
        if not files:
            raise ParameterError(f"paths: the folder {str(paths)!r} has no files")
    elif isinstance(paths, (str, os.PathLike)):
        files = [Path(paths)]
    else:
        files = [Path(p) for p in paths]
    names = [None] * len(files) if names is None else list(names)
    if len(names) != len(files):
        raise ParameterError(f"names has {len(names)} entries for {len(files)} files")
    out: dict[str, Run] = {}
    for f, n in zip(files, names):
        run = read_run(f, name=n)
        if run.name in out:
            raise DataError(
                f"two runs are called {run.name!r} ({out[run.name].source} and {f}); pass names="
            )
        out[run.name] = run
    return out


# ----------------------------------------------------------------------------- Qrels


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: query id -> {document id: relevance (int)}.

    Attributes
    ----------
    judgments : mapping
        Query id -> read-only mapping document id -> int relevance, queries in
        file order.
    source : str or None
        The file it was read from.
    """

    judgments: Mapping[str, Mapping[str, int]]
    source: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "judgments", MappingProxyType(
            {q: MappingProxyType(dict(d)) for q, d in self.judgments.items()}))

    def __getstate__(self):  # mappingproxy does not pickle: send plain dicts
        return {"judgments": self.to_dict(), "source": self.source}

    def __setstate__(self, state):
        object.__setattr__(self, "source", state["source"])
        object.__setattr__(self, "judgments", state["judgments"])
        self.__post_init__()

    @property
    def queries(self) -> tuple[str, ...]:
        return tuple(self.judgments)

    def __len__(self) -> int:
        return len(self.judgments)

    def __repr__(self) -> str:
        n = sum(len(d) for d in self.judgments.values())
        return f"Qrels({len(self)} queries, {n} judgments)"

    def n_relevant(self, query: str, rel: int = 1) -> int:
        """Documents of ``query`` judged with relevance >= ``rel``."""
        return sum(v >= rel for v in self.judgments.get(query, {}).values())

    def query_key(self, query: str) -> bytes:
        """128-bit hash of one query's judgments."""
        items = sorted(self.judgments[query].items())
        return _hash(("qrels", query, *(f"{d}\x1f{r}" for d, r in items)))

    def fingerprint(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        for q in self.judgments:
            h.update(self.query_key(q))
        return h.hexdigest()[:12]

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {q: dict(d) for q, d in self.judgments.items()}

    def to_frame(self) -> pd.DataFrame:
        """Columns ``query_id``, ``doc_id``, ``relevance``."""
        rows = [(q, d, r) for q, docs in self.judgments.items() for d, r in docs.items()]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        out = {}
        for q, docs in qrels.items():
            row = {}
            for d, r in docs.items():
                if isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer)):
                    raise DataError(f"qrels query {q!r}, document {d!r}: relevance {r!r} is not "
                                    "an int")
                row[str(d)] = int(r)
            out[str(q)] = row
        if not out:
            raise DataError("qrels has no queries")
        return cls(out)


def read_qrels(path) -> Qrels:
    """Read a TREC qrels file (``qid iteration docid relevance``; gzip detected).

    Raises
    ------
    DataError
        A line without four fields, a relevance that is not an integer, a
        document judged twice for a query, or an empty file; messages name
        the file, line and field.

    Examples
    --------
    >>> import os, tempfile
    >>> from metaeval.ranking import read_qrels
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("q1 0 d1 2\\nq1 0 d3 0\\nq2 0 d9 1\\n")
    >>> qrels = read_qrels(path)
    >>> qrels, qrels.n_relevant("q1"), qrels.n_relevant("q1", rel=3)
    (Qrels(2 queries, 3 judgments), 1, 0)
    """
    p = _path(path, "path")
    judgments: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    with open_text(p) as fh:
        for lineno, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                continue
            where = f"{p.name} line {lineno}"
            if len(fields) != 4:
                raise DataError(
                    f"{where}: {len(fields)} field(s); a TREC qrels line has 4: "
                    f"{' '.join(_QRELS_FIELDS)}"
                    + (" (this looks like a run line: read it with read_run)"
                       if len(fields) == 6 else "")
                )
            q, _, d, rel = fields
            try:
                r = int(rel)
            except ValueError:
                raise DataError(
                    f"{where}, field 4 (relevance): {rel!r} is not an integer"
                ) from None
            first = lines.get((q, d))
            if first is not None:
                raise DataError(
                    f"{where}, field 3 (document id): {d!r} is judged twice for query {q!r} "
                    f"(first at line {first}); keep one judgment"
                )
            lines[(q, d)] = lineno
            judgments.setdefault(q, {})[d] = r
    if not judgments:
        raise DataError(f"{p.name} has no qrels lines")
    return Qrels(judgments, source=str(p))
