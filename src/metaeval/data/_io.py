"""Read datasets from CSV, TSV, JSONL and Parquet files."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from metaeval.errors import DataError, ParameterError

from ._dataset import Dataset
from ._frames import WIDE_SCORE_COLUMN
from ._validate import fmt_items

#: Strings read as missing in score columns of CSV/TSV files (the pandas
#: defaults).  Label columns treat only the empty field as missing, so a
#: system called "NA" or "None" keeps its name.
CSV_NA_VALUES = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip


def _read_delimited(path: Path, label_columns: list[str], *, sep: str) -> pd.DataFrame:
    try:
        header = pd.read_csv(path, sep=sep, nrows=0).columns
    except pd.errors.EmptyDataError:
        raise DataError(f"empty data: {path.name} is empty (not even a header line)") from None
    na_values = {c: ([""] if c in label_columns else list(CSV_NA_VALUES)) for c in header}
    return pd.read_csv(
        path,
        sep=sep,
        keep_default_na=False,
        na_values=na_values,
        dtype={c: str for c in label_columns if c in header},
    )


def _read_csv(path: Path, label_columns: list[str]) -> pd.DataFrame:
    return _read_delimited(path, label_columns, sep=",")


def _read_tsv(path: Path, label_columns: list[str]) -> pd.DataFrame:
    return _read_delimited(path, label_columns, sep="\t")


def _read_jsonl(path: Path, label_columns: list[str]) -> pd.DataFrame:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    records = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path.name}: line {lineno} is not valid JSON ({exc.msg})"
                ) from None
            if not isinstance(record, dict):
                raise DataError(
                    f"{path.name}: line {lineno} is a JSON {type(record).__name__}, expected an "
                    "object (one row per line, keys are columns)"
                )
            records.append(record)
    if not records:
        raise DataError(f"empty data: {path.name} has no JSON lines")
    return pd.DataFrame.from_records(records)


def _read_parquet(path: Path, label_columns: list[str]) -> pd.DataFrame:
    frame = pd.read_parquet(path)
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
    "jsonl": _Format((".jsonl", ".jsonl.gz", ".ndjson"), _read_jsonl),
    "parquet": _Format((".parquet", ".pq"), _read_parquet),
}


def _suffix_list() -> str:
    return ", ".join(s for f in FORMATS.values() for s in f.suffixes)


def _infer_format(path: Path) -> tuple[str, str]:
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
        fmt, suffix = _infer_format(path)
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
