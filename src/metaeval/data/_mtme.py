"""Reader for mt-metrics-eval's data layout (WMT metrics shared task data).

mt-metrics-eval (github.com/google-research/mt-metrics-eval, README section
"File organization and naming convention") stores one directory per test set
with, for each language pair ``LP``::

    <root>/<testset>/sources/LP.txt                      one source segment per line
    <root>/<testset>/references/LP.REF.txt               one reference per line
    <root>/<testset>/system-outputs/LP/SYS.txt           one output per line
    <root>/<testset>/documents/LP.docs                   "DOMAIN DOCNAME" per segment
    <root>/<testset>/domains/LP.domains                  (older layout) one domain per segment
    <root>/<testset>/human-scores/LP.NAME.LEVEL.score    "SYS SCORE" lines, None = unrated
    <root>/<testset>/metric-scores/LP/METRIC-REF.LEVEL.score

``LEVEL`` is ``sys`` (one line per system), ``doc`` (a block of one line per
document for each system) or ``seg`` (a block of one line per segment for
each system).  ``REF`` is a reference name, several joined by ``.``, ``src``
(no reference) or ``all``.  A system whose name is also a reference name is a
human translation.

:func:`read_mtme` turns one (test set, language pair) into a
:class:`~metaeval.data.Dataset`; :func:`mtme_info` lists what a directory
holds (systems, references, human scores, metric variants, primary flags).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval.errors import DataError, MtmeWarning, ParameterError

from ._dataset import Dataset
from ._validate import fmt_items

#: mt-metrics-eval's marker of a missing translation in a text file
#: (data.py, ``NO_TRANSLATION``); read as a missing text.
NO_TRANSLATION = "[No translation supplied]"

MTME_LEVELS = ("sys", "doc", "seg")
SEGMENTS = ("all", "rated")
_CLI_HINT = "metaeval read-mtme"


@dataclass(frozen=True)
class MtmeMetric:
    """One metric variant: ``name`` is ``basename-refs`` as in mt-metrics-eval."""

    name: str
    basename: str
    refs: tuple[str, ...]  # () for a source-based metric ("src")
    levels: tuple[str, ...]
    primary: bool | None  # None: no primary list given


@dataclass(frozen=True)
class MtmeInfo:
    """What one mt-metrics-eval (test set, language pair) directory holds.

    Attributes
    ----------
    testset, lp : str
    systems : tuple of str
        Every system with an output file (human translations included).
    human_systems : tuple of str
        Systems whose name is a reference name (human translations).
    references : tuple of str
        Reference names.
    human_scores : dict of str to tuple of str
        Human score name -> levels available.
    metrics : tuple of MtmeMetric
        Metric variants, sorted by name.
    n_segments : int
    """

    testset: str
    lp: str
    systems: tuple[str, ...]
    human_systems: tuple[str, ...]
    references: tuple[str, ...]
    human_scores: dict = field(default_factory=dict)
    metrics: tuple[MtmeMetric, ...] = ()
    n_segments: int = 0

    def metric_frame(self) -> pd.DataFrame:
        """One row per metric variant: ``metric, basename, refs, levels, primary``."""
        return pd.DataFrame(
            {
                "metric": [m.name for m in self.metrics],
                "basename": [m.basename for m in self.metrics],
                "refs": [".".join(m.refs) if m.refs else "src" for m in self.metrics],
                "levels": [",".join(m.levels) for m in self.metrics],
                "primary": [m.primary for m in self.metrics],
            }
        )


def _utf8(path: Path):
    """The file's lines as ``open(path, encoding="utf-8")`` gives them (universal newlines);
    bytes that are not UTF-8 are a :class:`DataError` naming the file and the line, not a
    bare ``UnicodeDecodeError``."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}, line {line}: not UTF-8 text (byte 0x{raw[exc.start:exc.end].hex()}); "
                        "re-save the file as UTF-8") from None
    return contextlib.nullcontext(io.StringIO(text, newline=None))


def _read_lines(path: Path) -> list[str | None]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\n").rstrip("\r") for line in f]
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc})") from exc
    return [None if line.strip() == NO_TRANSLATION else line for line in lines]


def _read_jsonl_field(path: Path, key: str) -> list[str | None]:
    out = []
    with _utf8(path) as f:
        for k, line in enumerate(f, 1):
            try:
                out.append(json.loads(line)[key])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise DataError(f"{path}, line {k}: expected a JSON object with {key!r} ({exc})") from exc
    return out


def _read_text(path: Path, key: str) -> list[str | None]:
    return _read_jsonl_field(path, key) if path.suffix == ".jsonl" else _read_lines(path)


def _parse_score(token: str, path: Path, lineno: int, *, allow_none: bool) -> float:
    if token == "None":
        if not allow_none:
            raise DataError(
                f"{path}, line {lineno}: metric score is 'None'; metric files must score every "
                "segment (only human score files may hold None)"
            )
        return math.nan
    try:
        value = float(token)
    except ValueError:
        raise DataError(f"{path}, line {lineno}: score {token!r} is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{path}, line {lineno}: score {token!r} is not finite")
    return value


def read_score_file(path, *, allow_none: bool, domain_column: bool = False) -> dict[str, list[float]]:
    """Read a ``SYS SCORE`` file into ``{system: [scores in file order]}``.

    ``None`` scores become NaN when ``allow_none`` (human scores), else they
    are an error.  Every error names the file and the line.
    """
    path = Path(path)
    scores: dict[str, list[float]] = {}
    with _utf8(path) as f:
        for lineno, line in enumerate(f, 1):
            toks = line.split()
            if not toks:
                raise DataError(f"{path}, line {lineno}: empty line; expected 'SYSTEM SCORE'")
            want = 3 if domain_column else 2
            if len(toks) != want:
                raise DataError(
                    f"{path}, line {lineno}: expected {want} whitespace-separated fields "
                    f"({'DOMAIN ' if domain_column else ''}SYSTEM SCORE), got {len(toks)}: {line.strip()!r}"
                )
            sysname, token = toks[-2], toks[-1]
            scores.setdefault(sysname, []).append(_parse_score(token, path, lineno, allow_none=allow_none))
    return scores


#: mt-metrics-eval's default MQM weights (converters/score_mqm.py, flag
#: ``weights``): the most specific ``severity[/category[/subcategory]]`` match
#: applies; no match weighs 0.
MQM_WEIGHTS = {
    "major": 5.0,
    "minor": 1.0,
    "neutral": 0.0,
    "major/non-translation!": 25.0,
    "minor/fluency/punctuation": 0.1,
}


def mqm_error_weight(severity, category, weights=MQM_WEIGHTS) -> float:
    """Weight of one error span: the most specific of ``severity/category/...``
    in ``weights`` (keys compared in lower case), else 0."""
    items = [str(severity or "").lower()] + [c.lower() for c in str(category or "").split("/") if c]
    while items:
        key = "/".join(items)
        if key in weights:
            return float(weights[key])
        items = items[:-1]
    return 0.0


def read_rating_file(path, *, weights=None) -> tuple[dict[str, list[float]], dict[str, list]]:
    """MQM scores from an mt-metrics-eval ``.rating`` file of error spans.

    Each line is ``SYSTEM<TAB>RATING[<TAB>RATER]`` where ``RATING`` is ``None``
    (not rated) or the JSON of mt-metrics-eval's ``ratings.Rating``
    (``{"errors": [{"start", "end", "category", "severity", ...}]}``).  A
    rated segment's score is minus the sum of its errors' weights
    (``weights``, default :data:`MQM_WEIGHTS`), as mt-metrics-eval's
    ``converters/score_mqm.py`` scores MQM annotations (one rater per line).

    Returns
    -------
    (scores, raters) : ({system: [score or NaN]}, {system: [rater id or None]})
    """
    path = Path(path)
    w = MQM_WEIGHTS if weights is None else {str(k).lower(): float(v) for k, v in dict(weights).items()}
    scores: dict[str, list[float]] = {}
    raters: dict[str, list] = {}
    with _utf8(path) as f:
        for lineno, line in enumerate(f, 1):
            cols = line.rstrip("\n").rstrip("\r").split("\t")
            if len(cols) not in (2, 3):
                raise DataError(
                    f"{path}, line {lineno}: expected 2 or 3 tab-separated fields "
                    f"(SYSTEM, RATING JSON or None, [RATER]), got {len(cols)}"
                )
            sysname, rating = cols[0], cols[1]
            if rating == "None":
                scores.setdefault(sysname, []).append(math.nan)
                raters.setdefault(sysname, []).append(None)
                continue
            try:
                errors = json.loads(rating)["errors"]
                total = sum(mqm_error_weight(e.get("severity"), e.get("category"), w) for e in errors)
            except RecursionError:
                raise DataError(f"{path}, line {lineno}: the rating's JSON is nested too deeply "
                                "to read (an mt-metrics-eval rating is a flat list of error "
                                "spans)") from None
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise DataError(
                    f"{path}, line {lineno}: rating is not None nor a JSON object with a list "
                    f"'errors' of error spans ({type(exc).__name__}: {exc})"
                ) from exc
            scores.setdefault(sysname, []).append(-total + 0.0)
            raters.setdefault(sysname, []).append(cols[2] if len(cols) == 3 else None)
    return scores, raters


#: Columns of an error-span table (:func:`read_error_spans`, :func:`read_rating_spans`).
SPAN_COLUMNS = ("system", "input", "rater", "start", "end", "severity", "category", "is_source_error")


def _offset(v) -> int:
    """A span offset of a ``.rating`` file: a JSON integer (``3``, ``3.0``) or its digits as a
    string; ``true`` and ``1.5`` are not offsets (``int()`` read them as 1), as the TSV reader
    refuses ``0.5``."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise TypeError(f"offset {json.dumps(v)} is not an integer")
    if isinstance(v, float) and not v.is_integer():
        raise ValueError(f"offset {v!r} is not an integer")
    return int(v)


def read_rating_spans(path, *, rater: str | None = None) -> pd.DataFrame:
    """The error spans of an mt-metrics-eval ``.rating`` file as a long table.

    Parameters
    ----------
    path : path-like
        ``SYSTEM<TAB>RATING[<TAB>RATER]`` per segment (mt-metrics-eval
        ``ratings.ReadRatingFile``); segment ``k`` of a system is its ``k``-th line
        (input label ``str(k)``, as :func:`read_mtme` names segments).
    rater : str, optional
        Rater id of lines without a third column (mt-metrics-eval's
        ``default_rater``, the rating name such as ``"mqm.rater1"``); default: the
        file name without ``.seg.rating`` and the language pair.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SPAN_COLUMNS`, one row per error span; a rated segment
        without errors is one row with ``start`` and ``end`` NaN (so that it counts
        as rated); ``None`` lines (not rated) give no row.
    """
    path = Path(path)
    if rater is None:
        name = path.name.removesuffix(".rating").removesuffix(".seg")
        rater = name.split(".", 1)[1] if "." in name else name
    rows, counter = [], {}
    with _utf8(path) as f:
        for lineno, line in enumerate(f, 1):
            cols = line.rstrip("\n").rstrip("\r").split("\t")
            if len(cols) not in (2, 3):
                raise DataError(
                    f"{path}, line {lineno}: expected 2 or 3 tab-separated fields "
                    f"(SYSTEM, RATING JSON or None, [RATER]), got {len(cols)}"
                )
            sysname, rating = cols[0], cols[1]
            seg = counter.get(sysname, 0)
            counter[sysname] = seg + 1
            if rating == "None":
                continue
            who = cols[2] if len(cols) == 3 and cols[2] not in ("", "None") else rater
            try:
                errors = json.loads(rating)["errors"]
                spans = [(_offset(e["start"]), _offset(e["end"]), e.get("severity"),
                          e.get("category"), bool(e.get("is_source_error", False)))
                         for e in errors]
            except RecursionError:
                raise DataError(f"{path}, line {lineno}: the rating's JSON is nested too deeply "
                                "to read (an mt-metrics-eval rating is a flat list of error "
                                "spans)") from None
            except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
                raise DataError(
                    f"{path}, line {lineno}: rating is not None nor a JSON object with a list "
                    f"'errors' of error spans with integer 'start' and 'end' ({type(exc).__name__}: {exc})"
                ) from exc
            if not spans:
                rows.append((sysname, str(seg), who, math.nan, math.nan, None, None, False))
            for a, b, sev, cat, src in spans:
                if a < 0 or b < a:
                    raise DataError(f"{path}, line {lineno}: error span start={a}, end={b} "
                                    "needs 0 <= start <= end")
                rows.append((sysname, str(seg), who, a, b, sev, cat, src))
    return pd.DataFrame(rows, columns=list(SPAN_COLUMNS))


def read_error_spans(path) -> pd.DataFrame:
    """A TSV of error spans as the long table of :func:`read_rating_spans`.

    The file has a header with the columns ``system``, ``input`` (or ``segment``),
    ``rater``, ``start``, ``end``, ``severity``, ``category`` and optionally
    ``is_source_error`` (true/false/1/0); one row per error span, ``start`` and
    ``end`` character offsets (``end`` exclusive).  A row with empty ``start`` and
    ``end`` marks a segment that the rater rated without finding an error.
    """
    from ._io import _read_tsv

    path = Path(path)
    # the project's checked TSV reader (named errors for short rows, bad bytes, truncated files);
    # every span column read as text with only the empty field missing
    df = _read_tsv(path, [*SPAN_COLUMNS, "segment"])
    if "input" not in df.columns and "segment" in df.columns:
        df = df.rename(columns={"segment": "input"})
    missing = [c for c in SPAN_COLUMNS[:7] if c not in df.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}; an error-span TSV has "
                        f"columns {', '.join(SPAN_COLUMNS[:7])} [, is_source_error]")
    out = df[list(SPAN_COLUMNS[:7])].copy()
    for c in ("system", "input", "rater"):
        bad = out[c].isna()
        if bad.any():
            raise DataError(f"{path}, line {int(np.flatnonzero(bad)[0]) + 2}: empty {c!r}")
    for c in ("start", "end"):
        num = pd.to_numeric(out[c], errors="coerce")
        bad = out[c].notna() & ~(num.notna() & (num == np.floor(num)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"{path}, line {i + 2}: {c} {out[c].iloc[i]!r} is not an integer offset")
        out[c] = num.astype(float)
    one = out["start"].isna() != out["end"].isna()
    wrong = (out["start"] < 0) | (out["end"] < out["start"])
    if one.any() or wrong.any():
        i = int(np.flatnonzero(one | wrong)[0])
        raise DataError(f"{path}, line {i + 2}: start={out['start'].iloc[i]}, end={out['end'].iloc[i]}: "
                        "need 0 <= start <= end, or both empty (a segment rated without errors)")
    if "is_source_error" in df.columns:
        m = {"true": True, "1": True, "false": False, "0": False}
        v = df["is_source_error"].fillna("false").str.lower()
        bad = ~v.isin(list(m))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"{path}, line {i + 2}: is_source_error {df['is_source_error'].iloc[i]!r} "
                            "is not true/false/1/0")
        out["is_source_error"] = v.map(m).astype(bool)
    else:
        out["is_source_error"] = False
    return out


def _parse_metric_filename(path: Path) -> tuple[str, str, str, tuple[str, ...]]:
    """``METRIC-REF.LEVEL.score`` -> (name, level, basename, refs)."""
    parts = path.name.rsplit(".", 2)
    if len(parts) != 3 or parts[2] != "score" or "-" not in parts[0]:
        raise DataError(
            f"{path}: metric file name is not NAME-REF.LEVEL.score (mt-metrics-eval README, "
            "'metric scores')"
        )
    name, level = parts[0], parts[1]
    basename, refs = name.rsplit("-", 1)
    return name, level, basename, tuple(refs.split("."))


class _Layout:
    """Paths and parsed structure of one (testset, lp)."""

    def __init__(self, root, testset: str, lp: str):
        for what, value in (("testset", testset), ("lp", lp)):
            if not isinstance(value, str) or not value:
                raise ParameterError(f"{what}={value!r} must be a non-empty string")
        self.root = Path(root)
        self.dir = self.root / testset
        self.testset, self.lp = testset, lp
        if not self.dir.is_dir():
            raise DataError(
                f"{self.dir} is not a directory: ROOT must hold one folder per test set "
                f"(mt-metrics-eval layout), e.g. ROOT/{testset}/human-scores"
            )
        hs = self.dir / "human-scores"
        if not hs.is_dir():
            raise DataError(f"{hs} is missing: a test set needs human-scores/{lp}.NAME.LEVEL.score files")
        # human scores: name -> {level: path}
        self.human: dict[str, dict[str, Path]] = {}
        for p in sorted(hs.glob(f"{lp}.*.score")):
            toks = p.name.split(".")
            if len(toks) < 4:
                raise DataError(f"{p}: human score file name is not LP.NAME.LEVEL.score")
            name, level = ".".join(toks[1:-2]), toks[-2]
            self.human.setdefault(name, {})[level] = p
        if not self.human:
            raise DataError(f"{hs} has no {lp}.NAME.LEVEL.score file: wrong language pair {lp!r}?")
        # references
        self.refs: dict[str, Path] = {}
        rd = self.dir / "references"
        for p in sorted(rd.glob(f"{lp}.*.*")) if rd.is_dir() else []:
            if p.suffix not in (".txt", ".jsonl"):
                continue
            ref = p.name[len(lp) + 1 : -len(p.suffix)]
            if "-" in ref or "." in ref or ref in ("all", "src"):
                raise DataError(
                    f"{p}: reference name {ref!r} must not contain '-' or '.' nor be 'all' or 'src'"
                )
            if ref in self.refs:
                raise DataError(f"{p}: duplicate reference name {ref!r} ({self.refs[ref].name})")
            self.refs[ref] = p
        # system outputs
        self.outputs: dict[str, Path] = {}
        od = self.dir / "system-outputs" / lp
        for p in sorted(od.glob("*.*")) if od.is_dir() else []:
            if p.suffix in (".txt", ".jsonl"):
                self.outputs[p.name[: -len(p.suffix)]] = p
        # metrics: name -> (basename, refs, {level: path})
        self.metrics: dict[str, tuple[str, tuple[str, ...], dict[str, Path]]] = {}
        md = self.dir / "metric-scores" / lp
        for p in sorted(md.glob("*.score")) if md.is_dir() else []:
            name, level, basename, refs = _parse_metric_filename(p)
            if level not in ("sys", "domain", "doc", "seg"):
                raise DataError(f"{p}: level {level!r} is not one of sys, domain, doc, seg")
            entry = self.metrics.setdefault(name, (basename, refs, {}))
            entry[2][level] = p
        for name, (_, refs, levels) in self.metrics.items():
            bad = [r for r in refs if r not in ("src", "all") and r not in self.refs]
            if bad:
                raise DataError(
                    f"{next(iter(levels.values()))}: metric {name!r} names unknown reference(s) "
                    f"{fmt_items(bad)}; known: {fmt_items(sorted(self.refs))}"
                )

    def metric_refs(self, name: str) -> tuple[str, ...]:
        refs = self.metrics[name][1]
        if refs == ("src",):
            return ()
        if refs == ("all",):
            return tuple(sorted(self.refs))
        return refs

    def documents(self) -> tuple[list[str] | None, list[str | None] | None]:
        """(doc per segment, domain per segment), None where absent."""
        docs = domains = None
        p = self.dir / "documents" / f"{self.lp}.docs"
        if p.is_file():
            docs, domains = [], []
            for k, line in enumerate(_read_lines(p), 1):
                toks = (line or "").split()
                if len(toks) == 2:
                    domains.append(toks[0])
                    docs.append(toks[1])
                elif len(toks) == 1:
                    domains.append(None)
                    docs.append(toks[0])
                else:
                    raise DataError(f"{p}, line {k}: expected 'DOMAIN DOCNAME', got {line!r}")
            seen, prev = set(), None
            for k, d in enumerate(docs, 1):
                if d != prev and d in seen:
                    raise DataError(
                        f"{p}, line {k}: document {d!r} is not one contiguous block of segments"
                    )
                seen.add(d)
                prev = d
        q = self.dir / "domains" / f"{self.lp}.domains"
        if q.is_file():
            dom = [(line or "").strip() or None for line in _read_lines(q)]
            if docs is not None and len(dom) != len(docs):
                raise DataError(f"{q}: {len(dom)} lines but {p} has {len(docs)}")
            domains = dom
        if domains is not None and all(d is None for d in domains):
            domains = None
        return docs, domains


def mtme_info(root, testset: str, lp: str, *, primary: Iterable[str] | None = None) -> MtmeInfo:
    """List what an mt-metrics-eval (test set, language pair) directory holds.

    Parameters
    ----------
    root : path
        The folder holding one folder per test set (mt-metrics-eval's
        ``mt-metrics-eval-v2``).
    testset, lp : str
        E.g. ``"wmt22"`` and ``"en-de"``.
    primary : iterable of str, optional
        Base names of the primary metrics (mt-metrics-eval keeps these in
        ``meta_info.py``, not in the data folder); sets each metric's
        ``primary`` flag.

    Returns
    -------
    MtmeInfo
    """
    lay = _Layout(root, testset, lp)
    prim = None if primary is None else set(_names(primary, "primary"))
    src = lay.dir / "sources" / f"{lp}.txt"
    n_seg = len(_read_lines(src)) if src.is_file() else 0
    metrics = tuple(
        MtmeMetric(
            name=n,
            basename=b,
            refs=lay.metric_refs(n),
            levels=tuple(lv for lv in ("sys", "domain", "doc", "seg") if lv in paths),
            primary=None if prim is None else b in prim,
        )
        for n, (b, _, paths) in sorted(lay.metrics.items())
    )
    return MtmeInfo(
        testset=testset,
        lp=lp,
        systems=tuple(lay.outputs),
        human_systems=tuple(s for s in lay.outputs if s in lay.refs),
        references=tuple(lay.refs),
        human_scores={k: tuple(v) for k, v in lay.human.items()},
        metrics=metrics,
        n_segments=n_seg,
    )


def _names(value, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    try:
        out = list(value)
    except TypeError:
        raise ParameterError(f"{what} must be a string or a sequence of strings, got {value!r}") from None
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        raise ParameterError(f"{what} must hold strings; got {bad[0]!r}")
    return out


def _blocks(scores: dict[str, list[float]], per_sys: int, path: Path, systems_known) -> dict:
    """Check that every system has ``per_sys`` scores and is a known system."""
    for s, v in scores.items():
        if systems_known is not None and s not in systems_known:
            raise DataError(
                f"{path}: system {s!r} has no output file in system-outputs/ (known: "
                f"{fmt_items(sorted(systems_known))})"
            )
        if len(v) != per_sys:
            raise DataError(f"{path}: system {s!r} has {len(v)} scores; expected {per_sys} (one per item)")
    return scores


def read_mtme(
    root,
    testset: str,
    lp: str,
    *,
    human: str = "mqm",
    level: str = "seg",
    refs: str | Iterable[str] | None = None,
    include_human: bool = False,
    exclude_systems: Iterable[str] = (),
    metrics: Iterable[str] | None = None,
    primary: Iterable[str] | None = None,
    primary_only: bool = False,
    segments: str = "all",
    texts: bool = True,
    ratings: str | None = None,
    mqm_weights=None,
    names: str = "full",
    system_scores: bool = True,
    system_human: str | None = None,
) -> Dataset:
    """Read one mt-metrics-eval (test set, language pair) into a Dataset.

    Parameters
    ----------
    root : path
        The folder holding one folder per test set (mt-metrics-eval's
        ``mt-metrics-eval-v2``; see the module docstring for the layout).
    testset, lp : str
        E.g. ``"wmt22"`` and ``"en-de"``.
    human : str
        The human score name (``human-scores/LP.<human>.LEVEL.score``):
        ``"mqm"``, ``"wmt-z"``, ``"da-sqm"``, ...  It becomes the human column.
    level : {"seg", "doc", "sys"}
        Which score files to read: segments, documents or system-level scores
        (mt-metrics-eval's file level, not a grouping level of the analyses).
        ``seg``: inputs are the segments (labels
        ``"0"``, ``"1"``, ...); ``doc``: inputs are the documents; ``sys``:
        one input named ``"sys"`` holding the system-level scores, so
        metaeval's ``system`` level correlates exactly the scores in the
        files, as mt-metrics-eval's system-level correlations do.
    refs : str or sequence of str, optional
        The references in use (mt-metrics-eval's ``main_refs``, usually the
        standard reference, e.g. ``"refA"``).  Metric variants that use a
        reference outside this set are dropped, and human translations named
        in it are never systems.  Default: keep every metric variant.
    include_human : bool
        Keep human translations (systems named like a reference, other than
        those in ``refs``) as systems.  Default False, as in mt-metrics-eval
        tasks.  A metric has no score for the reference it uses: that row is
        NaN.
    exclude_systems : sequence of str
        Systems to drop (e.g. mt-metrics-eval's outlier systems).
    metrics : sequence of str, optional
        Metric column names (``basename-refs``) or base names to keep.
    primary : sequence of str, optional
        Base names of the primary metrics (kept in mt-metrics-eval's
        ``meta_info.py``, not in the data).  Listed in the provenance text.
    primary_only : bool
        Keep only the metrics whose base name is in ``primary``.
    segments : {"all", "rated"}
        Which segments a system-level metric score averages: every segment
        (``"all"``) or the ones the human score rates (``"rated"``; mt-metrics-eval
        issues #3 and #4).  ``"all"`` (mt-metrics-eval's default): with
        ``level="sys"``, the metric's own ``.sys.score`` file, i.e. the mean
        over every segment, while the human score covers only the rated
        ones.  ``"rated"``: the mean of the metric's segment scores over the
        segments the human score rates for that system (the ``.true``
        convention of the WMT21 MQM tables; the human system score is still
        read from its ``.sys.score`` file).  At ``seg`` and ``doc`` level
        the two are the same: metric cells of unrated items are dropped (set
        to NaN), as mt-metrics-eval's ``Correlation`` drops gold ``None``
        entries; metaeval's ``system`` level on such a dataset is then the
        ``rated`` convention.
    ratings : str, optional
        Name of an error-span rating file
        (``human-scores/LP.<ratings>.seg.rating``, e.g. ``"mqm.merged"``):
        adds a second human column of that name with MQM scores computed
        from the error spans (:func:`read_rating_file`; at seg level only).
    mqm_weights : mapping, optional
        ``severity[/category[/subcategory]]`` -> weight for ``ratings``
        (default mt-metrics-eval's: Major 5, Minor 1, Neutral 0,
        Major/Non-translation! 25, Minor/Fluency/Punctuation 0.1).
    names : {"full", "display"}
        Metric column names: ``"full"`` (``BLEU-refA``, ``COMETKiwi-src``)
        or ``"display"``, mt-metrics-eval's display names, which match across
        language pairs whose standard references differ (task sets, global
        accuracy).  Display names are ``EvalSet.DisplayName``'s
        ``'spreadsheet'`` format: the base name, ``[noref]`` appended for a
        source-based metric and ``*`` prepended for a metric not in
        ``primary`` when ``primary`` is given.  Two variants with the same
        display name are an error: pass ``refs``.
    texts : bool
        Attach sources, references (``reference`` for the single reference
        in ``refs``, and ``reference:<name>`` for each) and system outputs
        (``hypothesis``) as texts, when the files are there.
    system_scores : bool
        At ``seg`` and ``doc`` level, attach the ``.sys.score`` files as the
        dataset's given system-level scores (:attr:`Dataset.system_scores`):
        the human score's (always, when the file is there) and, with
        ``segments="all"``, each metric's (corpus BLEU, chrF, TER are corpus
        statistics, not means of segment scores).  metaeval's ``system`` level
        then correlates the numbers of the files, as mt-metrics-eval's
        system-level correlations do, and says so in the signature
        (``sys:given:...``); ``correlate(..., system_scores="mean")`` uses the
        means of the cells instead.  With ``segments="rated"`` metric system
        scores are the means of the rated cells, so no metric file is
        attached.  Default True; False reads only the cells (the system level
        is then the mean of the rated cells, as before).
    system_human : str, optional
        The human score whose ``.sys.score`` file gives the human column's
        system-level scores, e.g. ``"wmt-z"`` beside ``human="wmt-raw"``
        (default: ``human``).  WMT20 and WMT21 rate
        segments with one score and rank systems with another
        (mt-metrics-eval ``meta_info.py``: ``wmt-raw`` at ``seg``, ``wmt-z``
        at ``sys``): ``human="wmt-raw", system_human="wmt-z"``.

    Returns
    -------
    Dataset
        Human column ``human``; one metric column per metric variant, named
        as in mt-metrics-eval (``BLEU-refA``, ``COMETKiwi-src``); systems
        with at least one human score (others are dropped, as in
        mt-metrics-eval's ``GetCorrelations``); contexts ``domain`` and
        ``doc`` per segment at ``seg`` level and ``domain`` per document at
        ``doc`` level, when the documents file is there.

    Raises
    ------
    DataError
        A file is missing or malformed: the message names the file (and
        line).
    ParameterError
        An option is invalid (unknown human score, level, reference ...).
    """
    lay = _Layout(root, testset, lp)
    if level not in MTME_LEVELS:
        raise ParameterError(
            f"level={level!r}: choose one of {', '.join(MTME_LEVELS)} (mt-metrics-eval file "
            "granularities; the correlation level is chosen later, in correlate())"
        )
    if segments not in SEGMENTS:
        raise ParameterError(f"segments={segments!r}: choose 'all' or 'rated' (option --segments)")
    if names not in ("full", "display"):
        raise ParameterError(f"names={names!r}: choose 'full' or 'display' (option --names)")
    if human not in lay.human:
        raise ParameterError(
            f"human={human!r}: no human-scores/{lp}.{human}.*.score file; available: "
            f"{fmt_items(sorted(lay.human))} (option --human)"
        )
    if level not in lay.human[human]:
        raise ParameterError(
            f"human={human!r} has no {level!r} file (human-scores/{lp}.{human}.{level}.score); "
            f"levels available: {fmt_items(sorted(lay.human[human]))} (option --score-level)"
        )
    main_refs = None if refs is None else _names(refs, "refs")
    if main_refs is not None:
        unknown = [r for r in main_refs if r not in lay.refs]
        if unknown:
            raise ParameterError(
                f"refs: unknown reference(s) {fmt_items(unknown)}; available: "
                f"{fmt_items(sorted(lay.refs))} (option --refs)"
            )
    excl = set(_names(exclude_systems, "exclude_systems"))
    prim = None if primary is None else set(_names(primary, "primary"))
    if primary_only and prim is None:
        raise ParameterError("primary_only=True needs primary= (the primary base names) (option --primary)")

    # ---- segments, documents, texts -------------------------------------
    src_path = lay.dir / "sources" / f"{lp}.txt"
    src_jsonl = lay.dir / "sources" / f"{lp}.jsonl"
    source = None
    if src_path.is_file():
        source = _read_lines(src_path)
    elif src_jsonl.is_file():
        source = _read_jsonl_field(src_jsonl, "source")
    docs, domains = lay.documents()
    n_seg = len(source) if source is not None else (len(docs) if docs is not None else None)
    if docs is not None and n_seg != len(docs):
        raise DataError(
            f"{lay.dir / 'documents' / (lp + '.docs')}: {len(docs)} lines but the source has {n_seg} segments"
        )
    doc_names = list(dict.fromkeys(docs)) if docs is not None else None
    if level == "doc" and doc_names is None:
        raise DataError(f"level='doc' needs {lay.dir / 'documents' / (lp + '.docs')}")

    known = set(lay.outputs) if lay.outputs else None
    hpath = lay.human[human][level]
    hscores = read_score_file(hpath, allow_none=True)
    if n_seg is None and level == "seg":
        n_seg = len(next(iter(hscores.values())))
    per_sys = {"sys": 1, "doc": len(doc_names or []), "seg": n_seg}[level]
    _blocks(hscores, per_sys, hpath, known)

    # ---- systems ----------------------------------------------------------
    all_systems = list(lay.outputs) if lay.outputs else sorted(hscores)
    human_sys = {s for s in all_systems if s in lay.refs}
    systems = [s for s in all_systems if s not in excl]
    if main_refs is not None:
        systems = [s for s in systems if s not in main_refs]
    if not include_human:
        systems = [s for s in systems if s not in human_sys]
    rated = [s for s in systems if s in hscores and not np.isnan(hscores[s]).all()]
    if not rated:
        raise DataError(f"{hpath}: no system left with a human score (check --exclude-systems/--include-human)")
    systems = rated

    # human seg scores for the "rated" system-level convention
    hseg = None
    if level == "sys" and segments == "rated":
        if "seg" not in lay.human[human]:
            raise ParameterError(
                f"segments='rated' needs the segment-level human scores "
                f"human-scores/{lp}.{human}.seg.score, which is missing (option --segments)"
            )
        hp = lay.human[human]["seg"]
        hseg = read_score_file(hp, allow_none=True)
        n_seg_h = n_seg if n_seg is not None else len(next(iter(hseg.values())))
        _blocks(hseg, n_seg_h, hp, known)

    # ---- metrics ----------------------------------------------------------
    wanted = None if metrics is None else _names(metrics, "metrics")
    if wanted is not None:
        avail = set(lay.metrics) | {b for b, _, _ in lay.metrics.values()}
        unknown = [m for m in wanted if m not in avail]
        if unknown:
            raise ParameterError(
                f"metrics: unknown metric(s) {fmt_items(unknown)}; available: "
                f"{fmt_items(sorted(lay.metrics))} (option --metrics)"
            )
    file_level = "seg" if (level == "sys" and segments == "rated") else level
    shape = (len(systems), per_sys)
    H = np.array([hscores.get(s, [math.nan] * per_sys) for s in systems], dtype=float).reshape(shape)
    columns: dict[str, np.ndarray] = {human: H}
    human_cols = [human]
    if ratings is not None:
        if level != "seg":
            raise ParameterError(f"ratings={ratings!r} are segment-level: use level='seg' (option --score-level)")
        rp = lay.dir / "human-scores" / f"{lp}.{ratings}.seg.rating"
        if not rp.is_file():
            avail = sorted(q.name for q in (lay.dir / "human-scores").glob(f"{lp}.*.rating"))
            raise ParameterError(
                f"ratings={ratings!r}: no file {rp}; available: {fmt_items(avail)} (option --ratings)"
            )
        if ratings == human:
            raise ParameterError(f"ratings={ratings!r} has the same name as human={human!r}")
        rs, _ = read_rating_file(rp, weights=mqm_weights)
        _blocks(rs, per_sys, rp, known)
        columns[ratings] = np.array([rs.get(s, [math.nan] * per_sys) for s in systems], dtype=float)
        human_cols.append(ratings)
    skipped = []
    attach_sys = bool(system_scores) and level in ("seg", "doc")
    given_sys: dict[str, dict[str, list[float]]] = {}
    sys_h = human if system_human is None else system_human
    if system_human is not None and "sys" not in lay.human.get(system_human, {}):
        raise ParameterError(
            f"system_human={system_human!r}: no human-scores/{lp}.{system_human}.sys.score file; "
            f"human scores with a sys file: "
            f"{fmt_items(sorted(h for h, lv in lay.human.items() if 'sys' in lv))}"
        )
    if attach_sys and "sys" in lay.human[sys_h]:
        hp_sys = lay.human[sys_h]["sys"]
        given_sys[human] = _blocks(read_score_file(hp_sys, allow_none=True), 1, hp_sys, known)
    for name, (basename, _, paths) in sorted(lay.metrics.items()):
        if wanted is not None and name not in wanted and basename not in wanted:
            continue
        if primary_only and basename not in prim:
            continue
        mrefs = lay.metric_refs(name)
        if main_refs is not None and not set(mrefs) <= set(main_refs):
            continue
        if name in columns:
            raise DataError(f"{paths[next(iter(paths))]}: metric name {name!r} collides with another column")
        if file_level not in paths:
            skipped.append(name)
            continue
        mp = paths[file_level]
        ms = _blocks(read_score_file(mp, allow_none=False), n_seg if file_level == "seg" else per_sys, mp, known)
        missing = [s for s in systems if s not in ms and s not in mrefs]
        if missing:
            warnings.warn(
                f"{mp}: no scores for system(s) {fmt_items(missing)}; their cells are missing (NaN)",
                MtmeWarning,
                stacklevel=2,
            )
        if file_level == "seg" and level == "sys":
            vals = []
            for s in systems:
                if s not in ms:
                    vals.append([math.nan])
                    continue
                g = np.asarray(hseg.get(s, [math.nan] * n_seg), float)
                ok = ~np.isnan(g)
                m = np.asarray(ms[s], float)
                vals.append([float(m[ok].mean()) if ok.any() else math.nan])
            X = np.array(vals, dtype=float)
        else:
            X = np.array([ms.get(s, [math.nan] * per_sys) for s in systems], dtype=float).reshape(shape)
            X[np.isnan(H)] = np.nan  # unrated items are dropped, as in mt-metrics-eval
        columns[name] = X
        if attach_sys and segments == "all" and "sys" in paths:
            sp = paths["sys"]
            given_sys[name] = _blocks(read_score_file(sp, allow_none=False), 1, sp, known)
    if skipped:
        warnings.warn(
            f"metric(s) {fmt_items(skipped)} have no {file_level}-level file in "
            f"{lay.dir / 'metric-scores' / lp}; left out",
            MtmeWarning,
            stacklevel=2,
        )
    if len(columns) == len(human_cols) and lay.metrics:
        # A release without metric scores (human scores and texts only, e.g. the copy in
        # JUDGE-BENCH) reads as a human-only dataset; an empty result of filters is an error.
        raise DataError(
            f"no metric left for {testset}/{lp} at level {level!r} (check --refs, --metrics, --primary-only)"
        )

    # ---- labels, contexts, texts ------------------------------------------
    if level == "seg":
        inputs = [str(j) for j in range(n_seg)]
    elif level == "doc":
        inputs = list(doc_names)
    else:
        inputs = ["sys"]
    # inputs that no system rated would make metric cells without human scores
    keep_inp = ~np.isnan(H).all(axis=0)
    contexts = None
    if level == "seg" and docs is not None:
        ctx = {"input": inputs, "doc": docs}
        if domains is not None:
            ctx["domain"] = domains
        contexts = pd.DataFrame(ctx)
    elif level == "doc" and domains is not None:
        first = {}
        for d, dm in zip(docs, domains):
            first.setdefault(d, dm)
        contexts = pd.DataFrame({"input": inputs, "domain": [first[d] for d in inputs]})
    text_frame = None
    if texts and level == "seg":
        rows = {"system": np.repeat(systems, n_seg), "input": np.tile(inputs, len(systems))}
        have = False
        if source is not None:
            rows["source"] = np.tile(np.array(source, dtype=object), len(systems))
            have = True
        ref_list = sorted(lay.refs)
        for r in ref_list:
            rt = _read_text(lay.refs[r], "target")
            if len(rt) != n_seg:
                raise DataError(f"{lay.refs[r]}: {len(rt)} lines but the source has {n_seg} segments")
            rows[f"reference:{r}"] = np.tile(np.array(rt, dtype=object), len(systems))
            have = True
        single = main_refs[0] if main_refs is not None and len(main_refs) == 1 else (
            ref_list[0] if len(ref_list) == 1 else None)
        if single is not None:
            rows["reference"] = rows[f"reference:{single}"]
        if lay.outputs:
            hyp = []
            for s in systems:
                t = _read_text(lay.outputs[s], "hypothesis")
                if len(t) != n_seg:
                    raise DataError(f"{lay.outputs[s]}: {len(t)} lines but the source has {n_seg} segments")
                hyp.extend(t)
            rows["hypothesis"] = np.array(hyp, dtype=object)
            have = True
        if have:
            text_frame = pd.DataFrame(rows)
    display = {c: c for c in columns}
    if names == "display":
        renamed: dict[str, np.ndarray] = {}
        for c, v in columns.items():
            if c in human_cols:
                renamed[c] = v
                continue
            base = lay.metrics[c][0]
            disp = base if prim is None or base in prim else "*" + base
            if not lay.metric_refs(c):
                disp += "[noref]"
            if disp in renamed:
                raise ParameterError(
                    f"names='display': metric variants {c!r} and another both display as {disp!r}; "
                    "choose one reference with refs= (option --refs)"
                )
            renamed[disp] = v
            display[c] = disp
        columns = renamed
    sel_inputs = [inputs[j] for j in np.flatnonzero(keep_inp)]
    prov = [
        f"mt-metrics-eval layout: {lay.dir} lp={lp} human={human} level={level} segments={segments}",
        f"refs={','.join(main_refs) if main_refs else 'any'} include_human={include_human}",
    ]
    if given_sys:
        prov.append(
            "system-level scores from .sys.score files: "
            + ", ".join(display[c] for c in given_sys if c in display)
        )
    if prim is not None:
        flagged = sorted(c for c in columns if c not in human_cols and not c.startswith("*"))
        if names == "full":
            flagged = [c for c in flagged if c.rsplit("-", 1)[0] in prim]
        prov.append(f"primary metrics: {', '.join(flagged) if flagged else '(none)'}")
    ds = Dataset.from_arrays(
        columns,
        human=human_cols,
        systems=systems,
        inputs=inputs,
        name=f"{testset}:{lp}",
        texts=text_frame,
        provenance="\n".join(prov),
        contexts=contexts,
    )
    if len(sel_inputs) < len(inputs):
        ds = ds.subset(inputs=sel_inputs)
    if given_sys:
        table = {}
        for c, per_sys in given_sys.items():
            vals = [per_sys[s][0] if s in per_sys else math.nan for s in ds.systems]
            if any(not math.isnan(v) for v in vals):
                table[display[c]] = vals
        if table:
            ds = ds.with_system_scores(table)
    return ds


__all__ = [
    "read_mtme",
    "mtme_info",
    "MtmeInfo",
    "MtmeMetric",
    "read_score_file",
    "read_rating_file",
    "read_rating_spans",
    "read_error_spans",
    "SPAN_COLUMNS",
    "mqm_error_weight",
    "MQM_WEIGHTS",
    "NO_TRANSLATION",
]
