"""Readers for released layouts: SummEval's annotation JSONL, Hugging Face datasets.

* :func:`read_summeval`: ``model_annotations.aligned.jsonl`` of SummEval
  (Fabbri et al. 2021, https://github.com/Yale-LILY/SummEval), one record per
  (document ``id``, ``model_id``) with ``expert_annotations`` and
  ``turker_annotations`` lists of ``{coherence, consistency, fluency,
  relevance}`` ratings, the summary ``decoded``, ``references`` and
  ``filepath`` (plus the source ``text`` in the ``aligned.paired`` file that
  the release's ``data_processing/pair_data.py`` writes).  The same records
  as Parquet (nested lists of structs, as ``datasets`` and pyarrow write
  them) or as a DataFrame are read too.
* :func:`from_hf`: a Hugging Face ``datasets.Dataset`` (or anything with
  ``to_pandas()``) in long form, or in the SummEval layout.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from metaeval.errors import DataError, InputTypeError, ParameterError

from ._dataset import Dataset
from ._validate import fmt_items

#: The four SummEval dimensions, in the release's order.
SUMMEVAL_DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
#: Values of ``annotators``.
SUMMEVAL_ANNOTATORS = ("expert", "turker", "both")
_KEYS = ("id", "model_id")


def _summeval_records(source: Any) -> list[dict]:
    """The records of a SummEval file (JSONL, JSONL.gz, Parquet), DataFrame or iterable."""
    if isinstance(source, pd.DataFrame):
        return source.to_dict("records")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        lower = path.name.lower()
        if lower.endswith((".parquet", ".pq")):
            return pd.read_parquet(path).to_dict("records")
        if not lower.endswith((".jsonl", ".jsonl.gz", ".json", ".ndjson")):
            raise ParameterError(
                f"read_summeval reads .jsonl (optionally .gz) or .parquet files, got "
                f"{path.name!r}"
            )
        opener = gzip.open if lower.endswith(".gz") else open
        records = []
        with opener(path, "rt", encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path.name}: line {lineno} is not JSON ({exc.msg})") from None
                if not isinstance(rec, dict):
                    raise DataError(f"{path.name}: line {lineno} is not a JSON object")
                records.append(rec)
        return records
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes, Mapping)):
        records = list(source)
        bad = [type(r).__name__ for r in records if not isinstance(r, Mapping)]
        if bad:
            raise InputTypeError(f"read_summeval: records must be dicts, got {bad[0]}")
        return [dict(r) for r in records]
    raise InputTypeError(
        "read_summeval takes a path (.jsonl, .jsonl.gz, .parquet), a DataFrame or an iterable of "
        f"records; got {type(source).__name__}"
    )


def _rating(value: Any, *, where: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DataError(f"{where}: rating {value!r} is not a number")
    value = float(value)
    if math.isinf(value):
        raise DataError(f"{where}: rating {value!r} is not finite")
    return value


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, float) and math.isnan(value):
        return []
    if isinstance(value, np.ndarray):
        return list(value)
    return list(value)


def read_summeval(
    source: Any,
    *,
    annotators: str = "expert",
    dimensions: Iterable[str] = SUMMEVAL_DIMENSIONS,
    texts: bool = True,
    name: str | None = "summeval",
) -> Dataset:
    """Read SummEval's released annotations into a :class:`Dataset` with raters.

    Parameters
    ----------
    source : path, DataFrame or iterable of dict
        ``model_annotations.aligned.jsonl`` (or ``.aligned.paired.jsonl``,
        optionally gzip-compressed), the same records as Parquet, a
        DataFrame, or the records themselves.
    annotators : {"expert", "turker", "both"}
        Whose ratings: the 3 experts (raters ``expert1`` ... ``expert3``), the
        5 crowd workers (``turker1`` ... ``turker5``), or both, as separate
        columns ``expert_<dimension>`` and ``turker_<dimension>``.
    dimensions : iterable of str
        Which dimensions to read (default the four).
    texts : bool
        Attach the texts (``hypothesis`` = ``decoded``, ``references``, and
        ``source`` = ``text`` when the records have it).
    name : str, optional

    Returns
    -------
    Dataset
        Systems are the ``model_id`` values, inputs the document ``id``
        values (first-appearance order); one human column per dimension
        with a rater axis (``ratings(column)`` is ``(R, N, M)``; the score
        is the mean over raters); no metrics.

    Raises
    ------
    ParameterError
        Unknown ``annotators`` or dimension.
    DataError
        A record without ``id``/``model_id``, an annotation list that is not
        a list of objects, a non-numeric rating, a repeated (id, model_id).

    Notes
    -----
    Raters are positions in the release's lists: ``expert2`` is the second
    entry of ``expert_annotations`` in every record.  The release does not
    say that a position is the same person in every record (for the crowd
    workers it certainly is not), so read per-rater analyses (CFA, MTMM)
    with that in mind.  A record with fewer annotations than the others
    has NaN for the missing positions.  The layout is the one read by
    sacrerouge (``sacrerouge/datasets/fabbri2020/setup.py``) and written by
    SummEval's ``data_processing/pair_data.py``.

    Examples
    --------
    >>> rec = {"id": "dm-test-1", "model_id": "M11", "decoded": "a summary",
    ...        "references": ["ref"], "filepath": "cnndm/dailymail/stories/1.story",
    ...        "expert_annotations": [{"coherence": 2, "consistency": 5, "fluency": 4,
    ...                                "relevance": 3}] * 3,
    ...        "turker_annotations": [{"coherence": 3, "consistency": 4, "fluency": 5,
    ...                                "relevance": 2}] * 5}
    >>> ds = read_summeval([rec])
    >>> ds.human, ds.ratings("coherence").shape
    (('coherence', 'consistency', 'fluency', 'relevance'), (3, 1, 1))
    """
    if annotators not in SUMMEVAL_ANNOTATORS:
        raise ParameterError(
            f"annotators={annotators!r}; choose one of {', '.join(SUMMEVAL_ANNOTATORS)}"
        )
    dims = [dimensions] if isinstance(dimensions, str) else list(dimensions)
    unknown = [d for d in dims if d not in SUMMEVAL_DIMENSIONS]
    if unknown or not dims:
        raise ParameterError(
            f"dimensions: unknown {fmt_items(unknown) if unknown else '(none given)'}; "
            f"SummEval has {', '.join(SUMMEVAL_DIMENSIONS)}"
        )
    records = _summeval_records(source)
    if not records:
        raise DataError("read_summeval: no records")
    kinds = ["expert", "turker"] if annotators == "both" else [annotators]
    width = {k: 0 for k in kinds}
    rows = []
    for i, rec in enumerate(records, 1):
        missing = [k for k in _KEYS if rec.get(k) is None]
        if missing:
            raise DataError(
                f"SummEval record {i} lacks {', '.join(missing)}; each record needs id (the "
                "document) and model_id (the system)"
            )
        row: dict[str, Any] = {"system": str(rec["model_id"]), "input": str(rec["id"])}
        for kind in kinds:
            anns = _as_list(rec.get(f"{kind}_annotations"))
            width[kind] = max(width[kind], len(anns))
            for r, ann in enumerate(anns, 1):
                if not isinstance(ann, Mapping):
                    raise DataError(
                        f"SummEval record {i} ({rec['id']}, {rec['model_id']}): "
                        f"{kind}_annotations[{r - 1}] is {type(ann).__name__}, expected an "
                        "object of dimension: rating"
                    )
                for d in dims:
                    row[f"{kind}{r}_{d}"] = _rating(
                        ann.get(d),
                        where=f"SummEval record {i} ({rec['id']}, {rec['model_id']}) "
                        f"{kind}_annotations[{r - 1}].{d}",
                    )
        rows.append(row)
    empty = [k for k in kinds if width[k] == 0]
    if empty:
        raise DataError(
            f"no {' or '.join(empty)}_annotations in the records; choose annotators= among "
            "those the file has"
        )
    frame = pd.DataFrame(rows)
    raters: dict[str, dict[str, str]] = {}
    for kind in kinds:
        for d in dims:
            column = d if len(kinds) == 1 else f"{kind}_{d}"
            raters[column] = {}
            for r in range(1, width[kind] + 1):
                source_column = f"{kind}{r}_{d}"
                if source_column not in frame:
                    frame[source_column] = math.nan
                raters[column][f"{kind}{r}"] = source_column
    text_frame = None
    if texts:
        text_frame = pd.DataFrame(
            {
                "system": frame["system"],
                "input": frame["input"],
                "hypothesis": [rec.get("decoded") for rec in records],
                "references": [tuple(_as_list(rec.get("references"))) for rec in records],
            }
        )
        if any(rec.get("text") is not None for rec in records):
            text_frame["source"] = [rec.get("text") for rec in records]
    return Dataset.from_frame(
        frame,
        raters=raters,
        human=[],
        metrics=[],
        name=name,
        texts=text_frame,
        provenance=(
            "SummEval (Fabbri et al. 2021, TACL 9), model_annotations.aligned.jsonl; "
            "MIT license"
        ),
    )


def from_hf(data: Any, *, layout: str = "long", **kwargs: Any) -> Dataset:
    """A Hugging Face ``datasets.Dataset`` (or anything with ``to_pandas()``) as a Dataset.

    Parameters
    ----------
    data : datasets.Dataset or object with ``to_pandas()``
        One split (``ds["test"]``, not the ``DatasetDict``).
    layout : {"long", "summeval"}
        ``"long"``: one row per system x input [x rater | x run], read by
        :meth:`Dataset.from_frame` with ``kwargs``.  ``"summeval"``: the
        SummEval annotation records, read by :func:`read_summeval` with
        ``kwargs``.
    **kwargs
        Passed on.

    Returns
    -------
    Dataset

    Raises
    ------
    InputTypeError
        ``data`` has no ``to_pandas()`` (a ``DatasetDict``: pick a split; an
        ``IterableDataset``: load it without streaming).
    ParameterError
        Unknown ``layout``.

    Notes
    -----
    ``datasets`` is not needed to call this: only ``to_pandas()`` is used.
    """
    if layout not in ("long", "summeval"):
        raise ParameterError(f"layout={layout!r}; choose 'long' or 'summeval'")
    to_pandas = getattr(data, "to_pandas", None)
    if not callable(to_pandas):
        keys = getattr(data, "keys", None)
        hint = ""
        if callable(keys) and isinstance(data, Mapping):
            hint = f" (a DatasetDict? pick a split: one of {', '.join(map(str, keys()))})"
        raise InputTypeError(
            f"from_hf takes a datasets.Dataset or an object with to_pandas(), got "
            f"{type(data).__name__}{hint}"
        )
    frame = to_pandas()
    if not isinstance(frame, pd.DataFrame):
        # datasets' to_pandas(batched=True) gives an iterator; the default is one frame
        raise InputTypeError(
            f"from_hf: {type(data).__name__}.to_pandas() returned {type(frame).__name__}, "
            "expected a pandas DataFrame"
        )
    if layout == "summeval":
        return read_summeval(frame, **kwargs)
    return Dataset.from_frame(frame, **kwargs)
