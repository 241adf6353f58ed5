"""Read speech-recognition transcripts (the reading half; scoring is
:func:`metaeval.textmetrics.read_transcripts`).

Two layouts are read:

* **A table** (CSV, TSV, JSONL, Parquet, or a DataFrame) with one row per
  system x utterance: system, utterance id, reference, hypothesis and any
  number of label columns (corpus, speaker, gender, accent ...).  This is the
  layout of the CEASR corpus release (Ulasik et al., LREC 2020).
* **Kaldi ``text`` files** (``<utt-id> <transcript>`` per line; Kaldi's
  ``data/<set>/text`` and the hypothesis files its scoring scripts write,
  read by ``compute-wer``), or sclite ``trn`` files (``<transcript>
  (<utt-id>)`` per line): one reference file and one hypothesis file per
  system, optionally with Kaldi's ``utt2spk`` and ``spk2gender`` files.
  :func:`read_kaldi_transcripts` turns them into the table above.

:func:`read_transcript_table` reads and checks the table;
:func:`metaeval.textmetrics.read_transcripts` scores it with the ASR adapters (WER, MER,
WIL, WIP, CER over jiwer) and returns a dataset with those metric columns, no human
column, the texts and the labels as contexts.  This module imports no text metric.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from metaeval.errors import DataError, ParameterError

from ._validate import RESERVED_NAMES, fmt_items

_TABLE_FORMATS = {
    "csv": (".csv", ".csv.gz"),
    "tsv": (".tsv", ".tsv.gz", ".tab"),
    "jsonl": (".jsonl", ".jsonl.gz", ".ndjson"),
    "parquet": (".parquet", ".pq"),
}

_MISSING_HYP = ("nan", "empty", "error")


# ----------------------------------------------------------------------------- low-level file access


def open_text(path: Path):
    """Open a UTF-8 text file, gzip-compressed or not (detected from its first bytes)."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _check_path(path, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"{what}={path!r} must be a file path (str or Path)")
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"{what}: no such file: {str(p)!r}")
    return p


# ----------------------------------------------------------------------------- reading tables


def _table_format(path: Path, format: str | None) -> str:
    if format is not None:
        if format not in _TABLE_FORMATS:
            raise ParameterError(
                f"format={format!r}; choose one of {fmt_items(_TABLE_FORMATS)}"
            )
        return format
    lower = path.name.lower()
    hits = [(f, s) for f, sufs in _TABLE_FORMATS.items() for s in sufs if lower.endswith(s)]
    if not hits:
        raise ParameterError(
            f"cannot tell the format of {path.name!r} from its extension; pass format= (one of "
            f"{fmt_items(_TABLE_FORMATS)}); Kaldi text files are read by read_kaldi_transcripts"
        )
    return max(hits, key=lambda h: len(h[1]))[0]


def _read_delimited(path: Path, sep: str) -> tuple[list[str], list[dict], list[str]]:
    """Header, rows (dicts of str) and a location string per row ("file line N")."""
    rows, where = [], []
    with open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        try:
            header = next(reader)
        except StopIteration:
            raise DataError(f"{path.name} is empty (not even a header line)") from None
        except csv.Error as exc:
            raise DataError(f"{path.name} line 1: cannot parse the header ({exc})") from None
        dup = sorted({c for c in header if header.count(c) > 1})
        if dup:
            raise DataError(f"{path.name} line 1: repeated column name(s) {fmt_items(dup)}")
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise DataError(
                    f"{path.name} line {reader.line_num}: malformed {('CSV', 'TSV')[sep == chr(9)]} "
                    f"({exc}); check the quoting of that line"
                ) from None
            if not fields:  # blank line
                continue
            if len(fields) != len(header):
                raise DataError(
                    f"{path.name} line {reader.line_num}: {len(fields)} field(s) but the header "
                    f"has {len(header)} ({', '.join(header)}); quote fields that contain the "
                    "delimiter"
                )
            rows.append(dict(zip(header, fields)))
            where.append(f"{path.name} line {reader.line_num}")
    return header, rows, where


def _read_jsonl(path: Path) -> tuple[list[str], list[dict], list[str]]:
    rows, where, header = [], [], {}
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path.name} line {lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise DataError(
                    f"{path.name} line {lineno}: a JSON {type(rec).__name__}, expected an object "
                    "(one row per line, keys are columns)"
                )
            header.update(dict.fromkeys(rec))
            rows.append(rec)
            where.append(f"{path.name} line {lineno}")
    return list(header), rows, where


def _read_table(source, format: str | None):
    """Columns, row dicts, row locations, a default dataset name and the source's name."""
    if isinstance(source, pd.DataFrame):
        cols = [str(c) for c in source.columns]
        frame = source.rename(columns=str).reset_index(drop=True)
        rows = frame.to_dict(orient="records")
        return cols, rows, [f"row {k}" for k in range(len(rows))], None, "the table"
    path = _check_path(source, "source")
    fmt = _table_format(path, format)
    stem = path.name
    for s in sorted(_TABLE_FORMATS[fmt], key=len, reverse=True):
        if stem.lower().endswith(s):
            stem = stem[: len(stem) - len(s)]
            break
    if fmt in ("csv", "tsv"):
        cols, rows, where = _read_delimited(path, "," if fmt == "csv" else "\t")
    elif fmt == "jsonl":
        cols, rows, where = _read_jsonl(path)
    else:
        frame = pd.read_parquet(path)
        if not isinstance(frame.index, pd.RangeIndex):
            frame = frame.reset_index()
        cols, rows, _, _, _ = _read_table(frame, None)
        where = [f"{path.name} row {k}" for k in range(len(rows))]
    if not rows:
        raise DataError(f"{path.name} has no rows: a transcript table needs one row per "
                        "system x utterance")
    return cols, rows, where, stem, path.name


# ----------------------------------------------------------------------------- values


def _is_missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))


def _label(v, column: str, where: str, *, required: bool) -> str | None:
    if _is_missing(v) or (isinstance(v, str) and not v.strip()):
        if required:
            raise DataError(f"{where}, column {column!r}: empty label; every row needs one")
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (str, int, np.integer, float,
                                                            np.floating)):
        raise DataError(
            f"{where}, column {column!r}: {v!r} is a {type(v).__name__}, not a label (str or int)"
        )
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() else str(float(v))
    return str(v).strip()


def _text(v, column: str, where: str) -> str | None:
    if _is_missing(v):
        return None
    if not isinstance(v, str):
        raise DataError(
            f"{where}, column {column!r}: {v!r} is a {type(v).__name__}, not a transcript "
            "(a str; an empty string is an empty transcript)"
        )
    return v


# ----------------------------------------------------------------------------- the reader


@dataclass(frozen=True)
class TranscriptTable:
    """A transcript table read and checked by :func:`read_transcript_table`: labels,
    texts and contexts of a systems x utterances dataset, before any scoring."""

    systems: list
    inputs: list
    texts: pd.DataFrame
    contexts: pd.DataFrame | None
    rows: np.ndarray  # system position of each transcript (intp)
    cols: np.ndarray  # input position of each transcript (intp)
    locations: list  # "file, line n" of each transcript, for messages
    stem: str | None  # the file name without its extension (the default dataset name)


def read_transcript_table(
    source: str | os.PathLike | pd.DataFrame,
    *,
    system: str = "system",
    utterance: str = "utt_id",
    reference: str = "reference",
    hypothesis: str = "hypothesis",
    corpus: str | None = None,
    speaker: str | None = None,
    contexts: Sequence[str] | None = None,
    prefix_corpus: bool = False,
    format: str | None = None,
) -> TranscriptTable:
    """Read and check a transcript table (one row per system x utterance) without scoring it.

    The reading half of :func:`metaeval.textmetrics.read_transcripts`, which documents the
    parameters and the errors; scoring is the text metrics' job, so a reader of this layer
    imports none of them.
    """
    if not isinstance(prefix_corpus, bool):
        raise ParameterError(f"prefix_corpus={prefix_corpus!r} must be True or False")
    cols, rows, where, stem, src_name = _read_table(source, format)
    if corpus is None:
        corpus = "corpus" if "corpus" in cols else None
    if speaker is None:
        speaker = next((c for c in ("speaker_id", "speaker") if c in cols), None)
    needed = [system, utterance, reference, hypothesis] + [c for c in (corpus, speaker) if c]
    for opt, col in zip(("system", "utterance", "reference", "hypothesis", "corpus", "speaker"),
                        [system, utterance, reference, hypothesis, corpus, speaker]):
        if col is not None and not isinstance(col, str):
            raise ParameterError(f"{opt}={col!r} must be a column name (str)")
    absent = [c for c in needed if c not in cols]
    if absent:
        raise DataError(
            f"{src_name} has no column(s) {fmt_items(absent)}; its columns are "
            f"{fmt_items(cols, limit=30)} (choose with system=, utterance=, reference=, "
            "hypothesis=, corpus=, speaker=)"
        )
    core = {system, utterance, reference, hypothesis}
    if contexts is None:
        ctx_cols = [c for c in cols if c not in core]
    else:
        ctx_cols = [contexts] if isinstance(contexts, str) else list(contexts)
        bad = [c for c in ctx_cols if c not in cols or c in core]
        if bad:
            raise DataError(
                f"contexts: {fmt_items(bad)} are not label columns of {src_name}; its other "
                f"columns are {fmt_items([c for c in cols if c not in core], limit=30)}"
            )
    reserved = [c for c in ctx_cols if c in RESERVED_NAMES]
    if reserved:
        raise DataError(
            f"{src_name}: context column(s) {fmt_items(reserved)} clash with the dataset's own "
            "'system'/'input' labels; rename them or leave them out of contexts="
        )

    # -- parse rows
    recs = []
    seen: dict[tuple, str] = {}
    for row, loc in zip(rows, where):
        s = _label(row.get(system), system, loc, required=True)
        u = _label(row.get(utterance), utterance, loc, required=True)
        c = _label(row.get(corpus), corpus, loc, required=True) if corpus else None
        key = (c, s, u)
        if key in seen:
            what = f"corpus {c!r}, " if corpus else ""
            raise DataError(
                f"{loc}: duplicate row for {what}system {s!r}, utterance {u!r} (first at "
                f"{seen[key]}); keep one transcript per system and utterance"
            )
        seen[key] = loc
        ref = _text(row.get(reference), reference, loc)
        if ref is None:
            raise DataError(
                f"{loc}, column {reference!r}: the reference is missing; every utterance needs "
                "one (an empty string is an empty reference)"
            )
        hyp = _text(row.get(hypothesis), hypothesis, loc)
        labels = {k: _label(row.get(k), k, loc, required=False) for k in ctx_cols}
        spk = _label(row.get(speaker), speaker, loc, required=False) if speaker else None
        recs.append((c, s, u, ref, hyp, spk, labels, loc))

    # -- ids across corpora
    if corpus:
        for col, pos in ((utterance, 2), (speaker, 5)):
            if col is None:
                continue
            owners: dict[str, dict[str, str]] = {}
            for r in recs:
                if r[pos] is not None:
                    owners.setdefault(r[pos], {}).setdefault(r[0], r[7])
            shared = {k: v for k, v in owners.items() if len(v) > 1}
            if shared and not prefix_corpus:
                ex = [f"{k!r} in {' and '.join(f'{c!r} ({loc})' for c, loc in v.items())}"
                      for k, v in list(shared.items())[:3]]
                raise DataError(
                    f"{src_name}: {len(shared)} {col} value(s) occur in more than one corpus, "
                    f"e.g. {'; '.join(ex)}; ids are only unique within a corpus: pass "
                    "prefix_corpus=True to label them '<corpus>/<id>'"
                )

    def qualify(c, x):
        return x if (x is None or not prefix_corpus or c is None) else f"{c}/{x}"

    systems = list(dict.fromkeys(r[1] for r in recs))
    inputs = list(dict.fromkeys(qualify(r[0], r[2]) for r in recs))
    s_pos = {s: k for k, s in enumerate(systems)}
    i_pos = {i: k for k, i in enumerate(inputs)}

    tx = {"system": [], "input": [], "reference": [], "hypothesis": []}
    ctx = {"system": [], "input": [], **{k: [] for k in ctx_cols}}
    cells = []
    for c, s, u, ref, hyp, spk, labels, loc in recs:
        inp = qualify(c, u)
        tx["system"].append(s), tx["input"].append(inp)
        tx["reference"].append(ref), tx["hypothesis"].append(hyp)
        ctx["system"].append(s), ctx["input"].append(inp)
        for k in ctx_cols:
            v = labels[k]
            ctx[k].append(qualify(c, v) if k == speaker else v)
        cells.append((s_pos[s], i_pos[inp]))

    return TranscriptTable(
        systems=systems, inputs=inputs, texts=pd.DataFrame(tx),
        contexts=pd.DataFrame(ctx) if ctx_cols else None,
        rows=np.array([p[0] for p in cells], dtype=np.intp),
        cols=np.array([p[1] for p in cells], dtype=np.intp),
        locations=[r[7] for r in recs], stem=stem,
    )


# ----------------------------------------------------------------------------- Kaldi / sclite files

_TRN = re.compile(r"^(.*?)\s*\(([^()\s]+)\)\s*$")


def read_kaldi_text(path, *, format: str = "kaldi") -> dict[str, tuple[str, str]]:
    """Read one Kaldi ``text`` file (or sclite ``trn`` file).

    Parameters
    ----------
    path : str or Path
        UTF-8 text, gzip-compressed or not.
    format : {"kaldi", "trn"}
        ``"kaldi"``: ``<utt-id> <words...>`` per line (split at the first
        run of whitespace; a line with only the id is an empty transcript).
        ``"trn"``: ``<words...> (<utt-id>)`` per line (sclite).

    Returns
    -------
    dict
        Utterance id -> ``(transcript, "file line N")``, in file order.

    Raises
    ------
    DataError
        A line without an id, or a repeated id (both lines are named).
    """
    p = _check_path(path, "path")
    if format not in ("kaldi", "trn"):
        raise ParameterError(f"format={format!r}; choose 'kaldi' or 'trn'")
    out: dict[str, tuple[str, str]] = {}
    with open_text(p) as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if format == "kaldi":
                parts = line.strip().split(maxsplit=1)
                utt, text = parts[0], (parts[1] if len(parts) > 1 else "")
            else:
                match = _TRN.match(line)
                if match is None:
                    raise DataError(
                        f"{p.name} line {lineno}: no '(utterance-id)' at the end of the line; "
                        "trn lines are '<transcript> (<utt-id>)' (use format='kaldi' for "
                        "'<utt-id> <transcript>' lines)"
                    )
                text, utt = match.group(1).strip(), match.group(2)
            loc = f"{p.name} line {lineno}"
            if utt in out:
                raise DataError(
                    f"{loc}: utterance id {utt!r} repeats (first at {out[utt][1]}); keep one "
                    "transcript per utterance"
                )
            out[utt] = (text, loc)
    if not out:
        raise DataError(f"{p.name} has no transcript lines")
    return out


def _read_two_columns(path, what: str) -> dict[str, str]:
    p = _check_path(path, what)
    out: dict[str, tuple[str, int]] = {}
    with open_text(p) as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2:
                raise DataError(
                    f"{p.name} line {lineno}: {len(parts)} field(s); {what} lines are "
                    "'<key> <value>'"
                )
            if parts[0] in out:
                raise DataError(
                    f"{p.name} line {lineno}: {parts[0]!r} repeats (first at line "
                    f"{out[parts[0]][1]})"
                )
            out[parts[0]] = (parts[1], lineno)
    return {k: v for k, (v, _) in out.items()}


def read_kaldi_transcripts(
    reference,
    hypotheses: Mapping[str, Any],
    *,
    utt2spk=None,
    spk2gender=None,
    corpus: str | None = None,
    format: str = "kaldi",
    missing: str = "nan",
) -> pd.DataFrame:
    """Kaldi (or sclite ``trn``) transcript files as a table for
    :func:`metaeval.textmetrics.read_transcripts`.

    Parameters
    ----------
    reference : path
        The reference transcripts (Kaldi ``data/<set>/text``).
    hypotheses : mapping of str to path
        System name -> its hypothesis file (same format).
    utt2spk, spk2gender : path, optional
        Kaldi's ``utt2spk`` (``<utt-id> <speaker>``) and ``spk2gender``
        (``<speaker> m|f``) files: add ``speaker_id`` and ``gender``
        columns.
    corpus : str, optional
        A corpus label for every row (a ``corpus`` column), so that tables of
        several test sets can be concatenated and read together.
    format : {"kaldi", "trn"}
        See :func:`read_kaldi_text`.
    missing : {"nan", "empty", "error"}
        A reference utterance absent from a hypothesis file: a missing output
        (``"nan"``: the cell is NaN), an empty transcript (``"empty"``, as
        Kaldi's ``compute-wer --mode=all``), or an error (``"error"``, as
        ``--mode=strict``).

    Returns
    -------
    DataFrame
        Columns ``[corpus,] system, utt_id, [speaker_id, gender,] reference,
        hypothesis``, one row per system x reference utterance, in reference
        file order.

    Raises
    ------
    DataError
        Malformed lines, repeated ids, a hypothesis utterance that the
        reference lacks, a missing hypothesis with ``missing="error"``, an
        utterance missing from ``utt2spk``; messages name file and line.
    """
    if missing not in _MISSING_HYP:
        raise ParameterError(f"missing={missing!r}; choose one of {fmt_items(_MISSING_HYP)}")
    if not isinstance(hypotheses, Mapping) or not hypotheses:
        raise ParameterError(
            "hypotheses must be a non-empty mapping of system name to hypothesis file"
        )
    refs = read_kaldi_text(reference, format=format)
    spk = _read_two_columns(utt2spk, "utt2spk") if utt2spk is not None else None
    gen = _read_two_columns(spk2gender, "spk2gender") if spk2gender is not None else None
    if gen is not None and spk is None:
        raise ParameterError("spk2gender needs utt2spk (genders are per speaker)")
    if spk is not None:
        lacking = [u for u in refs if u not in spk]
        if lacking:
            raise DataError(
                f"utt2spk has no speaker for {len(lacking)} reference utterance(s), e.g. "
                f"{fmt_items(lacking, limit=3)} (reference {refs[lacking[0]][1]})"
            )
    rows = []
    for system, path in hypotheses.items():
        hyps = read_kaldi_text(path, format=format)
        extra = [u for u in hyps if u not in refs]
        if extra:
            raise DataError(
                f"{hyps[extra[0]][1]}: utterance {extra[0]!r} of system {system!r} is not in the "
                f"reference file ({len(extra)} such id(s)); check that both files are of the "
                "same test set"
            )
        absent = [u for u in refs if u not in hyps]
        if absent and missing == "error":
            raise DataError(
                f"system {system!r} has no hypothesis for {len(absent)} reference utterance(s), "
                f"e.g. {fmt_items(absent, limit=3)}; pass missing='nan' or 'empty'"
            )
        for utt, (ref, _) in refs.items():
            hyp = hyps[utt][0] if utt in hyps else (None if missing == "nan" else "")
            row = {"corpus": corpus} if corpus is not None else {}
            row.update({"system": str(system), "utt_id": utt})
            if spk is not None:
                row["speaker_id"] = spk[utt]
                if gen is not None:
                    g = gen.get(spk[utt])
                    row["gender"] = {"m": "male", "f": "female"}.get(g, g)
            row.update({"reference": ref, "hypothesis": hyp})
            rows.append(row)
    return pd.DataFrame(rows, dtype=object)
