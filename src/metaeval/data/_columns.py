"""Which columns of a data file became metrics, and which of them do not look like metric scores.

When a file is read without an explicit metric list, every numeric column that is not a label,
a declared human column, a rater or a run column becomes a metric (``read_dataset``).  On real
files that sweeps in other human dimensions (``Engagement``), averaged-rater columns,
bookkeeping columns (``DA_raw``, ``DA_n``, segment ids, ``N.ALL``, ``occurrence``).  A
meta-evaluation that then ranks them as "metrics" is wrong without an error, so the command
line announces the inferred metric set and flags the suspicious columns with the reason.  The
rules are heuristics on the column's name and values; they never change the data, they only
say what to check.
"""

from __future__ import annotations

import re

import numpy as np

# names of bookkeeping columns: ids, counts, raw copies, indices
_ID = re.compile(r"(^|[_.\s-])(id|ids|idx|index|key|seg|segment|doc|line|row|no)$|^(id|idx|index)([_.\s-]|$)",
                 re.IGNORECASE)
_COUNT = re.compile(r"(^|[_.\s-])(n|num|count|counts|cnt|occurrences?|freq|frequency|total)$|"
                    r"^(n|num|count|cnt)([_.\s-]|$)|^n\.", re.IGNORECASE)
_RAW = re.compile(r"(^|[_.\s-])(raw|orig|original)$", re.IGNORECASE)
_HUMAN = re.compile(r"(human|rating|rater|annot|judg|expert|turker|mturk|score_h|likert|^z$|z[_-]?score|"
                    r"mqm|esa|^da$|^da[_.]|[_.]da$|coherence|consistency|fluency|relevance|engag|"
                    r"interest|naturalness|overall|quality|adequacy)", re.IGNORECASE)


def column_notes(dataset, metrics) -> dict:
    """Reasons why some of ``metrics`` may not be metric scores.

    Parameters
    ----------
    dataset : Dataset
    metrics : sequence of str
        The metric columns to check (e.g. the ones inferred from a file).

    Returns
    -------
    dict
        column -> reason (only the suspicious columns, in ``metrics`` order).

    Examples
    --------
    >>> import numpy as np, metaeval
    >>> g = np.random.default_rng(0)
    >>> ds = metaeval.Dataset.from_arrays(
    ...     {"h": g.normal(size=(4, 6)), "bleu": g.random((4, 6)), "seg_id": np.arange(24.).reshape(4, 6),
    ...      "Engagement": g.integers(1, 6, (4, 6)).astype(float)}, human="h")
    >>> column_notes(ds, ["bleu", "seg_id", "Engagement"])  # doctest: +NORMALIZE_WHITESPACE
    {'seg_id': 'an id (its name; every cell has its own integer)',
     'Engagement': 'integer ratings 1-5 and a human-sounding name: a human dimension? (declare it as human)'}
    """
    out = {}
    for c in metrics:
        a = np.asarray(dataset.scores(c), float)
        v = a[np.isfinite(a)]
        reasons = []
        integer = v.size > 0 and bool(np.all(v == np.round(v)))
        distinct = np.unique(v)
        if _ID.search(c):
            reasons.append("its name")
        if integer and v.size > 1 and distinct.size == v.size and distinct.size >= 10:
            reasons.append("every cell has its own integer")
        if reasons:
            out[c] = f"an id ({'; '.join(reasons)})"
            continue
        if _COUNT.search(c):
            out[c] = "a count (its name)" + ("" if integer or v.size == 0 else "; its values are not integers, check")
            continue
        if _RAW.search(c):
            out[c] = "a raw copy of another column (its name)"
            continue
        small_int_scale = integer and distinct.size >= 2 and distinct.size <= 11 and v.min() >= -1 and v.max() <= 10
        # "1-5", but "-1 to 5" (not "-1-5") when the range starts below zero
        span = f"{distinct.min():g}{' to ' if distinct.min() < 0 else '-'}{distinct.max():g}"
        if small_int_scale and _HUMAN.search(c):
            out[c] = (f"integer ratings {span} and a human-sounding name: a human "
                      "dimension? (declare it as human)")
        elif small_int_scale:
            out[c] = (f"integer values {span} only: a rating or a category "
                      "rather than a metric score?")
        elif _HUMAN.search(c):
            out[c] = "a human-sounding name: a human dimension or averaged ratings? (declare it as human)"
    return out
