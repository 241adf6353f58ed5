"""The scores file of ``metaeval bench`` (:class:`metaeval.bench.ScoresFile`): scores computed
elsewhere, one row per ``dataset, system, input`` with its ``score``.  It is read with the
package's table readers (size-capped, UTF-8 checked, CSV/TSV/JSONL/Parquet, ``.gz``), so a
scores file gets the messages every data file gets."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import DataError, ParameterError
from ._io import FORMATS, infer_format

#: The columns of a scores file: the labels, then the score.
SCORES_COLUMNS = ("dataset", "system", "input", "score")


def read_scores_table(path) -> pd.DataFrame:
    """The scores file at ``path`` as a frame with str ``dataset, system, input`` and a float
    ``score``; a :class:`DataError` naming the file and the ``--scores`` option when it cannot be
    read, lacks a column, repeats a (dataset, system, input) or holds a score that is not a number."""
    p = Path(path)
    labels = list(SCORES_COLUMNS[:3])
    try:
        fmt, _ = infer_format(p)
        df = FORMATS[fmt].reader(p, labels)
    except ParameterError as exc:
        raise DataError(f"scores file {p}: {exc} (option --scores)") from None
    except DataError as exc:
        raise DataError(f"scores file {p}: {exc} (option --scores)") from None
    except OSError as exc:
        raise DataError(f"scores file {p}: cannot read it ({exc}) (option --scores)") from None
    missing = [c for c in SCORES_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(f"scores file {p}: no column(s) {', '.join(missing)}; it needs dataset, system, "
                        "input, score (option --scores)")
    for c in labels:
        df[c] = df[c].astype(str)
    dup = df.duplicated(labels)
    if dup.any():
        r = df[dup].iloc[0]
        raise DataError(f"scores file {p}: duplicate row for dataset {r['dataset']!r}, system "
                        f"{r['system']!r}, input {r['input']!r} (option --scores)")
    try:
        df["score"] = pd.to_numeric(df["score"], errors="raise")
    except (TypeError, ValueError) as exc:
        raise DataError(f"scores file {p}: a score is not a number ({exc}) (option --scores)") from None
    return df
