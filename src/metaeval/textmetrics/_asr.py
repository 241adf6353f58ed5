"""Score speech-recognition transcripts into a metric-only :class:`~metaeval.Dataset`.

:func:`read_transcripts` reads a transcript table with
:func:`metaeval.data.read_transcript_table` (the layouts are described in
:mod:`metaeval.data._asr`: CEASR-style tables, or Kaldi/sclite files through
:func:`metaeval.data.read_kaldi_transcripts`) and scores it with the ASR adapters
(WER, MER, WIL, WIP, CER over jiwer) or any other text metric.  It lives with the text
metrics because it scores texts; ``metaeval.data.read_transcripts`` still names it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data import Dataset, read_transcript_table
from ..data import fmt_items
from ..errors import ParameterError
from ._jiwer import ASR_METRICS, NORMALIZATIONS, EmptyReferenceWarning, normalize_transcript
from ._registry import get_metric
from ._score import score_texts

#: The metrics :func:`read_transcripts` computes by default.
ASR_DEFAULT_METRICS = ("wer", "mer", "wil", "wip", "cer")


def read_transcripts(
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
    metrics: Sequence[Any] = ASR_DEFAULT_METRICS,
    normalize: str = "lower-punct",
    format: str | None = None,
    name: str | None = None,
    provenance: str | None = None,
    cache_dir=None,
    n_jobs: int = 1,
) -> Dataset:
    """Read ASR transcripts (one row per system x utterance) and score them.

    Parameters
    ----------
    source : path or DataFrame
        A CSV, TSV, JSONL or Parquet file (``.gz`` allowed for the first
        three; the format comes from the extension unless ``format=`` is
        given), or a DataFrame, e.g. from :func:`read_kaldi_transcripts`.
    system, utterance, reference, hypothesis : str
        Column names.  Defaults follow the CEASR release (``utt_id``).
    corpus : str, optional
        Column naming the corpus (test set) of each row.  Default: the
        column ``"corpus"`` if there is one.  Utterance ids are only unique
        within a corpus: an id that occurs in two corpora is an error unless
        ``prefix_corpus=True``.
    speaker : str, optional
        Column of speaker ids.  Default: ``"speaker_id"`` or ``"speaker"``
        if present.  A speaker id found in two corpora is an error unless
        ``prefix_corpus=True`` (two corpora's speaker ``"121"`` are
        different people).
    contexts : sequence of str, optional
        Label columns kept as contexts (see :meth:`Dataset.context`).
        Default: every column other than the four above (so the corpus,
        speaker, gender, accent ... columns); ``[]`` keeps none.  Empty
        labels are unknown (``None``).
    prefix_corpus : bool
        Make input labels ``"<corpus>/<utterance>"`` and speaker labels
        ``"<corpus>/<speaker>"``.  Required when ids repeat across corpora.
    metrics : sequence
        Text metrics to score with: registry names or adapters.  The ASR
        names (``"wer"``, ``"mer"``, ``"wil"``, ``"wip"``, ``"cer"``, the
        default) are built with ``normalize``.  At least one is needed,
        because a dataset holds scores.
    normalize : {"lower-punct", "lower", "none"}
        Text normalisation of the ASR metrics (see
        :data:`metaeval.textmetrics.NORMALIZATIONS`); it enters each
        column's signature.
    format : {"csv", "tsv", "jsonl", "parquet"}, optional
        Overrides the extension.
    name : str, optional
        Dataset name; default the file name without its extension.
    provenance : str, optional
        Citation and license text to keep with the data.
    cache_dir, n_jobs
        As in :func:`metaeval.textmetrics.score`: scores found in the cache
        are not computed again.

    Returns
    -------
    Dataset
        Systems x utterances, ``human=()``, one metric column per metric,
        ``texts`` with ``system``, ``input``, ``reference`` and
        ``hypothesis``, and the label columns as contexts.  A cell without a
        row, or whose hypothesis is missing (null in JSONL, NaN in a
        DataFrame), is NaN.

    Raises
    ------
    DataError
        Missing columns, empty labels, non-text transcripts, a missing
        reference, duplicate (corpus, system, utterance) rows, ids repeated
        across corpora; messages name the file, line (row) and column.
    ParameterError
        Unknown format, metric or option.

    Warns
    -----
    EmptyReferenceWarning
        When references are empty after normalisation (their cells are NaN).

    Notes
    -----
    In CSV and TSV files every field is text: an empty hypothesis field is an
    *empty transcript* (the system output nothing; WER 1), not a missing
    one.  Use JSONL ``null`` or a DataFrame NaN for a missing output.

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.textmetrics import read_transcripts
    >>> df = pd.DataFrame({
    ...     "corpus": ["clean", "clean", "clean", "clean"],
    ...     "system": ["k", "k", "d", "d"], "utt_id": ["u1", "u2", "u1", "u2"],
    ...     "speaker_id": ["s7", "s9", "s7", "s9"],
    ...     "reference": ["the cat sat", "hello world"] * 2,
    ...     "hypothesis": ["THE CAT SAT", "HELLO WORD", "the cat", "hello, world!"]})
    >>> ds = read_transcripts(df, metrics=["wer", "cer"])
    >>> ds
    Dataset(name=None, 2 systems x 2 inputs, 0 human, 2 metrics)
    >>> ds.scores("wer")
    array([[0.        , 0.5       ],
           [0.33333333, 0.        ]])
    >>> ds.context_names
    ('system', 'input', 'corpus', 'speaker_id')
    """
    if normalize not in NORMALIZATIONS:
        raise ParameterError(f"normalize={normalize!r}; choose one of {fmt_items(NORMALIZATIONS)}")
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        raise ParameterError(
            "metrics=[]: a Dataset holds scores, so name at least one metric (default: wer, mer, "
            "wil, wip, cer)"
        )
    adapters = [
        get_metric(m, normalize=normalize) if isinstance(m, str) and m in ASR_METRICS
        else get_metric(m)
        for m in metrics
    ]
    table = read_transcript_table(
        source, system=system, utterance=utterance, reference=reference, hypothesis=hypothesis,
        corpus=corpus, speaker=speaker, contexts=contexts, prefix_corpus=prefix_corpus,
        format=format,
    )
    n, m = len(table.systems), len(table.inputs)
    hyps, refs = list(table.texts["hypothesis"]), list(table.texts["reference"])
    empty = [k for k, (h, r) in enumerate(zip(hyps, refs))
             if h is not None and not normalize_transcript(r, normalize).split()]
    ratings: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyReferenceWarning)  # reported once, below
        for adapter in adapters:
            out = score_texts(adapter, hyps, references=refs, cache_dir=cache_dir, n_jobs=n_jobs)
            for col, values in out.items():
                if col in ratings:
                    raise ParameterError(
                        f"two metrics write the column {col!r}; give one of them another name="
                    )
                grid = np.full((n, m), np.nan)
                grid[table.rows, table.cols] = values
                ratings[col] = grid
    if empty and any(isinstance(a, tuple(ASR_METRICS.values())) for a in adapters):
        inputs = table.texts["input"]
        shown = ", ".join(f"{inputs[k]!r} ({table.locations[k]})" for k in empty[:3])
        warnings.warn(
            f"{len(empty)} reference(s) are empty after normalize={normalize!r}, e.g. {shown}; "
            "their ASR scores are NaN",
            EmptyReferenceWarning,
            stacklevel=2,
        )
    return Dataset(
        ratings, human=[], systems=table.systems, inputs=table.inputs,
        name=name if name is not None else table.stem, texts=table.texts,
        provenance=provenance, contexts=table.contexts,
    )
