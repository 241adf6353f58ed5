"""Ranking (retrieval and recommendation) data: TREC runs, qrels, measures, shuffles.

* :func:`read_run`, :func:`read_runs`, :func:`read_qrels`: TREC run files
  (``qid Q0 docid rank score tag``) and qrels (``qid 0 docid rel``), plain or
  gzip, strictly validated; documents ordered as trec_eval orders them.
* :func:`score_runs`: every query of every run scored with ir-measures (via
  trec_eval's code in pytrec-eval-terrier) into a metric-only
  :class:`~metaeval.Dataset` (systems = runs, inputs = judged queries),
  with contexts and an on-disk cache; :data:`DEFAULT_MEASURES` are seed
  paper 004's.
* :func:`shuffle_runs`, :func:`shuffle_run`: the seeded shuffle perturbation.
* :func:`quantile_bands`: binned contexts such as user-activity bands.

ir-measures (the ``ranking`` extra) is imported only when scoring.
"""

from ._bands import quantile_bands
from ._score import (
    DEFAULT_MEASURES,
    MISSING_QUERIES,
    MissingQueriesWarning,
    coverage,
    measure_signature,
    parse_measures,
    score_runs,
)
from ._shuffle import TOO_SHORT, shuffle_run, shuffle_runs
from ._trec import Qrels, Run, read_qrels, read_run, read_runs

__all__ = [
    "DEFAULT_MEASURES",
    "MISSING_QUERIES",
    "TOO_SHORT",
    "MissingQueriesWarning",
    "Qrels",
    "Run",
    "coverage",
    "measure_signature",
    "parse_measures",
    "quantile_bands",
    "read_qrels",
    "read_run",
    "read_runs",
    "score_runs",
    "shuffle_run",
    "shuffle_runs",
]
