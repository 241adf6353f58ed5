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

#: Names of known metric families (WMT metrics-task names, summarization and NLG metrics, LLM
#: judges): a column named after one is a metric, never a "human-sounding" column, whatever
#: else its name contains (``COMET-MQM``, ``xCOMET-QE``, ``MetricX-23-QE``, ``BLEURT-20``,
#: ``G.EVAL.4.COH``, ``UniEval-fluency``).
METRIC_FAMILIES = ("bleu", "sacrebleu", "sentbleu", "chrf", "ter", "comet", "cometkiwi", "kiwi", "xcomet",
                   "bleurt", "metricx", "prism", "yisi", "bertscore", "bartscore", "moverscore", "rouge",
                   "meteor", "cider", "spice", "nist", "wer", "cer", "gemba", "g.eval", "g-eval", "geval",
                   "unieval", "summaqa", "supert", "blanc", "questeval", "qafacteval", "factcc", "summac",
                   "mauve", "perplexity", "sescore", "mee", "matese", "cometoid", "calibri", "embed_llama",
                   "damonmonli", "tokengram", "partokengram", "bertscore", "bleurt", "laser", "labse",
                   "mbr", "gpt", "llm", "s3.", "sentinel", "xlsim", "f200spbleu", "ebleu")
_FAMILY = re.compile(r"(^|[^a-z])(" + "|".join(re.escape(f) for f in sorted(set(METRIC_FAMILIES), key=len,
                                                                                reverse=True))
                     + r")", re.IGNORECASE)


#: Whole-word names of metric families (an LLM ``judge`` column is a metric; ``human_judgement`` is not).
METRIC_WORDS = ("judge", "llm_judge", "llm-judge")
_WORD = re.compile(r"(^|[^a-z])(" + "|".join(re.escape(f) for f in METRIC_WORDS) + r")([^a-z]|$)", re.IGNORECASE)


def metric_family(name) -> str | None:
    """The known metric family a column name belongs to (:data:`METRIC_FAMILIES`, or one of
    the whole words :data:`METRIC_WORDS`), or None.

    >>> metric_family("COMET-MQM_2021"), metric_family("BLEURT-20"), metric_family("fluency")
    ('comet', 'bleurt', None)
    >>> metric_family("gpt4_judge"), metric_family("human_judgement")
    ('gpt', None)
    """
    m = _FAMILY.search(str(name)) or _WORD.search(str(name))
    return m.group(2).lower() if m else None


def rating_like(values, *, max_raters: int = 10) -> bool:
    """Whether finite ``values`` look like human ratings or their means: on a bounded
    scale (within [0, 10], or [0, 100] for integer scales such as DA) and every value a
    multiple of 1/k for one k <= ``max_raters`` (the mean of at most k integer ratings)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0 or v.min() < 0:
        return False
    integer = bool(np.all(v == np.round(v)))
    if integer:
        return v.max() <= 100 and np.unique(v).size >= 2
    if v.max() > 10:
        return False
    for k in range(2, max_raters + 1):
        if np.allclose(v * k, np.round(v * k), rtol=0, atol=1e-9):
            return True
    return False


def human_dimensions(dataset, metrics):
    """Split inferred metric columns into ``(metrics, human, unclear)``.

    For a file read without an explicit metric list (docs/data.md, "Which columns are
    metrics"): a column named after a known metric family (:func:`metric_family`) is a
    metric; one with a human-sounding name whose values look like ratings or their means
    (:func:`rating_like`: ``fluency`` as means of 3 raters on 1-5) is a human dimension,
    not a metric; one with a human-sounding name and other values (a continuous
    ``overall_quality``) cannot be told apart and is ``unclear`` (the command line then
    refuses and asks for ``--metrics``).  Every other column stays a metric.

    Returns
    -------
    (list, dict, dict)
        The metric columns, ``{column: reason}`` of the human dimensions taken out, and
        ``{column: reason}`` of the unclear ones.
    """
    keep, human, unclear = [], {}, {}
    for c in metrics:
        bookkeeping = _ID.search(c) or _COUNT.search(c) or _RAW.search(c)  # flagged by column_notes
        if metric_family(c) is not None or not _HUMAN.search(c) or bookkeeping:
            keep.append(c)
            continue
        v = np.asarray(dataset.scores(c), float)
        if rating_like(v):
            fin = v[np.isfinite(v)]
            human[c] = (f"a human-sounding name and ratings {fin.min():g}-{fin.max():g}"
                        + ("" if np.all(fin == np.round(fin)) else " (means of ratings)"))
        else:
            unclear[c] = "a human-sounding name but scores that are not ratings or their means"
    return keep, human, unclear


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
        if metric_family(c) is not None:
            continue  # a known metric family: its name says what it is (COMET-MQM is not human)
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
