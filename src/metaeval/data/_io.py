"""Read datasets from CSV, TSV, JSONL and Parquet files."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import re
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from metaeval.errors import DataError, ParameterError

from ._dataset import Dataset
from ._frames import WIDE_SCORE_COLUMN
from ._validate import MAX_SHOWN, fmt_items, option

#: Strings read as missing in score columns of CSV/TSV files (the pandas
#: defaults).  Label columns treat only the empty field as missing, so a
#: system called "NA" or "None" keeps its name.
CSV_NA_VALUES = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when its name ends in ``.gz``.

    A truncated or corrupt gzip stream is a :class:`DataError` naming the
    file (not an ``EOFError``, which the command line would take for Ctrl-D).
    """
    if not path.name.lower().endswith(".gz"):
        return path.read_bytes()
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read()
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataError(
            f"{path.name}: the gzip stream is truncated or corrupt ({exc}); the file was cut "
            "(interrupted download or copy?): get a complete copy, or check it with `gzip -t`"
        ) from None


def decode(path: Path, raw: bytes) -> str:
    """UTF-8 text of ``raw`` (a leading byte-order mark is dropped).

    A byte sequence that is not UTF-8 is a :class:`DataError` naming the
    file, line and column, so a latin-1 or cp1252 file is found at once.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = raw[exc.start : exc.end]
        raise DataError(
            f"{path.name}: line {line}, byte {column} is not UTF-8 (0x{bad.hex()}): metaeval "
            "reads UTF-8 text; re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)"
        ) from None


def check_delimited(text: str, *, sep: str, name: str) -> list[str]:
    """Reject a CSV/TSV text that pandas would read with changed values.

    pandas renames a repeated header (``bleu`` -> ``bleu.1``), pads short
    rows with NaN, uses the first field of long rows as an index, and treats
    a bare carriage return as the end of a row; a file cut in the middle of
    its last line then loads with a shortened last number.  This check reads
    the text with :mod:`csv` (same quoting rules) and raises instead.

    Parameters
    ----------
    text : str
        The decoded file.
    sep : str
        The field separator (``","`` or ``"\\t"``).
    name : str
        The file name, for messages.

    Returns
    -------
    list of str
        The column names of the header.

    Raises
    ------
    DataError
        A repeated or empty header name; a row (after the header) whose field
        count differs from the header's, naming the line and both counts
        (a short last line without a final newline is reported as a truncated
        file); a carriage return outside a quoted field; a quoted field left
        open at the end of the file.
    """
    text = text.replace("\r\n", "\n")
    header = _header_if_regular(text, sep)
    if header is not None:
        _check_header(header[0], line=header[1], name=name)
        return header[0]
    return _check_delimited_slow(text, sep=sep, name=name)


def _header_if_regular(text: str, sep: str) -> tuple[list[str], int] | None:
    """Fast path of :func:`check_delimited` for text without quotes or carriage
    returns (``\\r\\n`` already made ``\\n``): count separators per line with NumPy.

    Returns the header fields and line number when every non-blank line has the
    header's field count, else None (the slow path then finds and names the problem).
    """
    if '"' in text or "\r" in text or not text:
        return None
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    newlines = np.flatnonzero(raw == 10)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [raw.size]))
    keep = ends > starts  # blank lines are skipped, as pandas does
    if not keep.any():
        return None
    starts, ends = starts[keep], ends[keep]
    line_numbers = np.flatnonzero(keep) + 1
    seps = np.flatnonzero(raw == ord(sep))
    fields = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
    if (fields != fields[0]).any():
        return None
    first = raw[starts[0] : ends[0]].tobytes().decode("utf-8")
    return first.split(sep), int(line_numbers[0])


def _check_delimited_slow(text: str, *, sep: str, name: str) -> list[str]:
    """:func:`check_delimited` with :mod:`csv` (quotes, carriage returns, errors)."""
    ends_with_newline = text.endswith("\n")
    n_lines = text.count("\n") + (0 if ends_with_newline else 1)
    # newline="\n": only \n ends a line, so the reader sees a bare \r (and rejects it
    # outside quotes) instead of a row break.
    feed = io.StringIO(text, newline="\n")
    what = "tab" if sep == "\t" else "comma"
    limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)
    try:
        reader = csv.reader(feed, delimiter=sep, quotechar='"', doublequote=True, strict=False)
        header: list[str] | None = None
        header_line = 0
        start = 1
        for record in reader:
            if not record:  # a blank line: pandas skips it too
                start = reader.line_num + 1
                continue
            if header is None:
                header, header_line = record, start
                _check_header(header, line=header_line, name=name)
            elif len(record) != len(header):
                last = reader.line_num >= n_lines
                if last and not ends_with_newline and len(record) < len(header):
                    raise DataError(
                        f"{name}: the last line ({start}) has {len(record)} fields where the "
                        f"header (line {header_line}) has {len(header)}, and no final newline: "
                        "the file looks truncated (cut mid-line); get a complete copy"
                    )
                raise DataError(
                    f"{name}: line {start} has {len(record)} {what}-separated fields, the header "
                    f"(line {header_line}) has {len(header)}: every row needs one field per "
                    "column (quote fields that contain the separator or a line break)"
                )
            start = reader.line_num + 1
    except csv.Error as exc:
        line = reader.line_num
        if "new-line character seen in unquoted field" in str(exc):
            raise DataError(
                f"{name}: line {line} has a carriage return (\\r) outside a quoted field, which "
                "would split the row: quote that field or remove the character (for a file "
                "with old Mac line endings, convert them to \\n)"
            ) from None
        raise DataError(f"{name}: line {line} cannot be parsed as {what}-separated values "
                        f"({exc})") from None
    finally:
        csv.field_size_limit(limit)
    if header is None:
        raise DataError(f"empty data: {name} is empty (not even a header line)")
    return header


def _check_header(header: list[str], *, line: int, name: str) -> None:
    empty = [k + 1 for k, h in enumerate(header) if h == ""]
    if empty:
        raise DataError(
            f"{name}: header (line {line}) field(s) {fmt_items(empty)} have no column name "
            "(a file written with its index?): name those columns or drop them"
        )
    positions: dict[str, list[int]] = {}
    for k, h in enumerate(header):
        positions.setdefault(h, []).append(k + 1)
    repeated = {h: ks for h, ks in positions.items() if len(ks) > 1}
    if repeated:
        shown = "; ".join(f"{h!r} in fields {', '.join(map(str, ks))}" for h, ks in
                          list(repeated.items())[:MAX_SHOWN])
        raise DataError(
            f"{name}: the header (line {line}) repeats column name(s): {shown}; column names "
            "must be unique: rename or drop the repeats"
        )


#: pandas 2 parses floats with a fast parser that can be one ulp off; its
#: ``round_trip`` parser is exact (pandas 3 is exact by default and deprecates
#: the option).
_EXACT_FLOATS = (
    {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
)


def read_delimited(path: Path, label_columns: list[str], *, sep: str) -> pd.DataFrame:
    text = decode(path, read_bytes(path))
    header = check_delimited(text, sep=sep, name=path.name)
    na_values = {c: ([""] if c in label_columns else list(CSV_NA_VALUES)) for c in header}
    try:
        return pd.read_csv(
            io.StringIO(text),
            sep=sep,
            keep_default_na=False,
            na_values=na_values,
            dtype={c: str for c in label_columns if c in header},
            **_EXACT_FLOATS,
        )
    except pd.errors.ParserError as exc:
        raise DataError(f"{path.name}: {str(exc).strip().splitlines()[0]}") from None


def _read_csv(path: Path, label_columns: list[str]) -> pd.DataFrame:
    return read_delimited(path, label_columns, sep=",")


def _read_tsv(path: Path, label_columns: list[str]) -> pd.DataFrame:
    return read_delimited(path, label_columns, sep="\t")


class _BadJSONValue(Exception):
    """A JSON value that cannot be read faithfully (message without the line)."""


def _parse_int(text: str) -> int:
    # Python refuses int() of 4300+ digits; anything above the float range
    # could not become a score anyway.
    if len(text) > 320 or abs(value := int(text)) > sys.float_info.max:
        shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"
        raise _BadJSONValue(
            f"the integer {shown} is beyond the float range (about 1.8e308): scores must be "
            "finite numbers; fix that value"
        )
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _BadJSONValue(
            f"the number {text[:40]} is beyond the float range (about 1.8e308): scores must be "
            "finite numbers; fix that value"
        )
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _BadJSONValue(
                f"the key {key!r} appears twice in one object (JSON readers keep only the last "
                "value): keep one"
            )
        out[key] = value
    return out


#: A JSON escape of a UTF-16 surrogate (``\\ud800``-``\\udfff``): a pair of them is one
#: character, a lone one is no character at all.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_surrogates(record: dict, path: Path, lineno: int) -> None:
    """A DataError naming the file, line and field when a string of ``record`` (keys and
    values, nested lists and objects included) holds a lone surrogate: it cannot be written
    as UTF-8, so it failed later, far from its line."""
    def lone(o):
        if isinstance(o, str):
            return next((c for c in o if "\ud800" <= c <= "\udfff"), None)
        if isinstance(o, dict):
            return next((c for kv in o.items() for x in kv if (c := lone(x))), None)
        if isinstance(o, list):
            return next((c for x in o if (c := lone(x))), None)
        return None

    for key, value in record.items():
        bad = lone(key) or lone(value)
        if bad:
            def shown(t):
                return t.encode("utf-8", "backslashreplace").decode()

            raise DataError(
                f"{path.name}: line {lineno}: field {shown(key)!r} holds a lone surrogate "
                f"({shown(bad)}), which is not a character: write the character itself or "
                "both halves of its pair")


def read_jsonl(path: Path, label_columns: list[str]) -> pd.DataFrame:
    text = decode(path, read_bytes(path))
    records = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(
                line,
                parse_int=_parse_int,
                parse_float=_parse_float,
                object_pairs_hook=_unique_keys,
            )
        except json.JSONDecodeError as exc:
            raise DataError(f"{path.name}: line {lineno} is not valid JSON ({exc.msg})") from None
        except _BadJSONValue as exc:
            raise DataError(f"{path.name}: line {lineno}: {exc}") from None
        except RecursionError:
            raise DataError(
                f"{path.name}: line {lineno} nests JSON arrays or objects too deeply to read; "
                "a row is one flat object of column: value"
            ) from None
        if not isinstance(record, dict):
            raise DataError(
                f"{path.name}: line {lineno} is a JSON {type(record).__name__}, expected an "
                "object (one row per line, keys are columns)"
            )
        if _SURROGATE_ESCAPE.search(line):
            _check_surrogates(record, path, lineno)
        records.append(record)
    if not records:
        raise DataError(f"empty data: {path.name} has no JSON lines")
    return pd.DataFrame.from_records(records)


def _read_parquet(path: Path, label_columns: list[str]) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise
    except (OSError, ValueError, EOFError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        other = f" or pass the right {option('format')}" if option("format") else ""
        raise DataError(
            f"{path.name}: cannot be read as Parquet ({detail}); the file is truncated, "
            f"corrupt or not Parquet: get a complete copy{other}"
        ) from None
    if not isinstance(frame.index, pd.RangeIndex):
        # A frame written with its (named) index: bring the labels back as columns.
        frame = frame.reset_index()
    return frame


@dataclass(frozen=True)
class _Format:
    suffixes: tuple[str, ...]
    reader: Callable[[Path, list[str]], pd.DataFrame]


#: Registry of file formats: name -> recognized suffixes and reader.
FORMATS: dict[str, _Format] = {
    "csv": _Format((".csv", ".csv.gz"), _read_csv),
    "tsv": _Format((".tsv", ".tsv.gz", ".tab"), _read_tsv),
    "jsonl": _Format((".jsonl", ".jsonl.gz", ".ndjson"), read_jsonl),
    "parquet": _Format((".parquet", ".pq"), _read_parquet),
}


def _suffix_list() -> str:
    return ", ".join(s for f in FORMATS.values() for s in f.suffixes)


def infer_format(path: Path) -> tuple[str, str]:
    lower = path.name.lower()
    matches = [
        (fmt, suffix)
        for fmt, spec in FORMATS.items()
        for suffix in spec.suffixes
        if lower.endswith(suffix)
    ]
    if not matches:
        raise ParameterError(
            f"cannot tell the format of {path.name!r} from its extension; pass `format=` "
            f"(one of {fmt_items(FORMATS)}) or use one of the extensions {_suffix_list()}"
        )
    return max(matches, key=lambda match: len(match[1]))


def read_dataset(
    path: str | os.PathLike[str], *, format: str | None = None, **from_frame_kwargs: Any
) -> Dataset:
    """Read a dataset from a CSV, TSV, JSONL or Parquet file.

    Parameters
    ----------
    path : str or path-like
        The file.  The format is taken from the extension: ``.csv``,
        ``.tsv``/``.tab``, ``.jsonl``/``.ndjson`` (each optionally ``.gz``
        compressed, except ``.ndjson`` and ``.tab``), ``.parquet``/``.pq``.
    format : {"csv", "tsv", "jsonl", "parquet"}, optional
        Overrides the extension.
    **from_frame_kwargs
        Passed to :meth:`Dataset.from_frame` (``human``, ``metrics``,
        ``system``, ``input``, ``rater``, ``run``, ``raters``, ``form``,
        ``texts``, ``provenance``, ``name``).  ``name`` defaults to the file
        name without its extension.

    Returns
    -------
    Dataset

    Raises
    ------
    ParameterError
        If ``format`` is not a known format, or the extension is not
        recognized and ``format`` is not given.
    DataError
        If the file's contents fail validation (see
        :meth:`Dataset.from_frame`) or a JSONL line is not a JSON object.

    Notes
    -----
    Label columns (system, input, rater, run, and the ``score`` column of the
    wide form) are read as text, so ``"007"`` stays ``"007"``.  In CSV and TSV
    files the pandas default missing-value markers (``""``, ``"NA"``,
    ``"n/a"``, ``"null"``, ``"NaN"``, ...) mean a missing score; in label
    columns only an empty field is missing (and is an error).  JSONL is read
    with :mod:`json` (``null`` is missing; a label ``1`` becomes ``"1"``).

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> from metaeval.data import read_dataset
    >>> df = pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"],
    ...                    "human": [1.0, 2.0], "bleu": [0.5, 0.7]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "scores.csv")
    ...     df.to_csv(path, index=False)
    ...     read_dataset(path, human="human")
    Dataset(name='scores', 2 systems x 1 inputs, 1 human, 1 metric)
    """
    path = Path(path)
    if format is None:
        fmt, suffix = infer_format(path)
    elif format in FORMATS:
        fmt = format
        lower = path.name.lower()
        suffix = next(
            (s for s in sorted(FORMATS[fmt].suffixes, key=len, reverse=True) if lower.endswith(s)),
            path.suffix,
        )
    else:
        raise ParameterError(f"`format` must be one of {fmt_items(FORMATS)}, got {format!r}")
    form = from_frame_kwargs.get("form", "long")
    label_columns = [
        from_frame_kwargs.get("system", "system"),
        from_frame_kwargs.get("rater"),
        from_frame_kwargs.get("run"),
    ]
    label_columns.append(
        WIDE_SCORE_COLUMN if form == "wide" else from_frame_kwargs.get("input", "input")
    )
    label_columns = [c for c in label_columns if isinstance(c, str)]
    frame = FORMATS[fmt].reader(path, label_columns)
    from_frame_kwargs.setdefault("name", path.name[: len(path.name) - len(suffix)] or path.name)
    return Dataset.from_frame(frame, **from_frame_kwargs)
