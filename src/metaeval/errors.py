"""Errors and typed warnings raised by metaeval.

Errors subclass :class:`ValueError` or :class:`TypeError` so that generic
handlers keep working; their messages name the parameter, the allowed values
and the offending labels.  Warnings form one hierarchy under
:class:`MetaevalWarning`, so ``warnings.simplefilter("ignore", MetaevalWarning)``
silences all of them; every result also *counts* the degenerate cases that
produced a warning, so nothing is lost when warnings are silenced.
"""

from __future__ import annotations


class MetaevalError(Exception):
    """Base class of every error metaeval raises on purpose."""


class DataError(MetaevalError, ValueError):
    """The data given to a :class:`~metaeval.Dataset` is malformed.

    Raised at construction: duplicate keys, non-numeric scores, unknown
    columns, metrics covering systems or inputs the human scores lack, empty
    data.
    """


class ParameterError(MetaevalError, ValueError):
    """An option has a value outside its allowed set or range."""


class ResourceError(MetaevalError, MemoryError):
    """A computation needs more memory than the machine (or its limit) gives.

    Raised instead of a number when a kernel's working memory cannot be
    allocated; the message names the computation, the size it needed and the
    options that shrink it (fewer resamples, smaller groups).  It subclasses
    :class:`MemoryError`, so generic handlers keep working.
    """


class JudgeRequestError(MetaevalError, RuntimeError):
    """An LLM-judge request failed for good.

    Raised for an HTTP error that is not retried (400, 401, 404, 408, ...), a
    refused redirect or an oversized response, or when every attempt of a
    request failed (HTTP 429/5xx, time-outs, dropped connections) after the
    backend's ``max_retries``.  Responses
    received before the error are already in the judge's cache, so running
    again resumes.  The message never contains the API key.

    Attributes
    ----------
    status : int or None
        The last HTTP status, None for a network error or time-out.
    attempts : int
        Attempts made for the request.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class BackendUnavailableError(MetaevalError, ImportError):
    """A text metric's library is not usable here, nor any fallback it has.

    Raised by the COMET and BLEURT adapters when their package does not import
    (or cannot work: ``transformers>=5``) and, for COMET, no ``comet-score``
    executable is found either.  The message names the install recipe
    (docs/textmetrics.md, "Installing COMET and BLEURT").  An
    :class:`ImportError`, so ``except ImportError`` handlers keep working.
    """


class ExternalCommandError(MetaevalError, RuntimeError):
    """An external program that metaeval ran (COMET's ``comet-score``) failed.

    Attributes
    ----------
    returncode : int or None
        The program's exit status (None when it ran but its output was wrong).
    stderr : str
        What it wrote to its standard error (its log and traceback).
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class InputTypeError(MetaevalError, TypeError):
    """The data given to an analysis is of a type it does not take.

    The message names the accepted types (a :class:`~metaeval.Dataset`, a
    pandas DataFrame in long form, and whatever else the analysis takes).
    """


class MetaevalWarning(UserWarning):
    """Base class of every warning metaeval emits."""


class DegenerateGroupWarning(MetaevalWarning):
    """A group (system, input, or the whole table) gave no defined statistic.

    The group had fewer than two valid pairs, or one of its score vectors was
    constant, so its coefficient is NaN.  The group is counted in the result's
    ``n_groups_dropped`` and excluded from averages.
    """


class ConstantInputWarning(DegenerateGroupWarning):
    """A score vector in a group is constant, so the coefficient is undefined."""


class TooFewPairsWarning(DegenerateGroupWarning):
    """A group has fewer than two valid (non-NaN) pairs."""


class UndefinedStatisticWarning(MetaevalWarning):
    """A p-value or confidence interval is undefined (for example ``n <= 3``
    for a Fisher interval, or a bootstrap with too few finite replicates)."""


class InsufficientResamplesWarning(MetaevalWarning):
    """Too few resamples for the requested resolution: for example, no
    resampling p-value can fall below alpha after a multiple-testing
    correction."""


class NonPositiveReliabilityWarning(MetaevalWarning):
    """A reliability coefficient (Cronbach's alpha, a stability coefficient) is
    zero or negative: the parts do not measure one thing in the same direction,
    and no number of inputs or runs reaches a positive target (the
    Spearman-Brown ``*_needed`` fields are ``inf``; tables show ``inf``, JSON
    the string ``"inf"``)."""


class SmallSampleWarning(MetaevalWarning):
    """An interval or test rests on very few resampling units (for example a
    bootstrap over fewer than 10 systems): the percentile interval can be far
    off its nominal coverage; read it as a rough range."""


class TwoPointWarning(SmallSampleWarning):
    """A correlation rests on two points: a level that correlates across only 2
    systems (or inputs) in the whole dataset, or groups (inputs at ``input``
    level, systems at ``item`` level) left with 2 valid pairs by missing
    cells.  A coefficient of two points takes only its extreme values (+1 or
    -1 for the correlations) or is undefined, whatever the scores; such groups
    are counted in the result (``n_two_points``) and kept in the average."""


class MissingCellsWarning(MetaevalWarning):
    """Cells with missing scores were left out of a reliability statistic.

    Each function says which cells it drops (inputs with a missing cell for
    :func:`metaeval.reliability.consistency`, cells missing in some run for
    :func:`~metaeval.reliability.stability`, units with a missing rating for
    the ICCs); the counts are in the result.
    """


class RaterDesignWarning(MetaevalWarning):
    """An agreement form or a per-rater statistic that does not fit the rating design.

    ICC(2), ICC(3) (and their k forms) and per-rater correlations treat a
    rater as the same person in every cell; with rotating raters (a few of
    many raters per cell) or rater *slots* (``rater1..raterK`` columns that
    are different people in different cells) only the one-way forms ICC(1)
    and ICC(1,k) and Krippendorff's alpha apply, so the others are NaN (the
    command line leaves them out) and this warning says so.
    """


class SmallExpectedCountWarning(MetaevalWarning):
    """A chi-square table has expected counts below the usual minimum (5), so
    the asymptotic chi-square p-value may be inaccurate; the permutation
    version of the test does not rely on the approximation."""


class EmptyReferenceWarning(MetaevalWarning):
    """A reference is empty after normalisation, so its error rates are undefined.

    WER and CER divide by the number of reference words (characters); with
    none, jiwer returns the *count* of inserted words instead of a rate.
    metaeval gives NaN for every ASR measure of such a cell (it is missing,
    not perfect and not zero) and counts the cells in the warning.
    """


class MissingQueriesWarning(MetaevalWarning):
    """Runs and qrels do not cover the same queries.

    A judged query absent from a run scores 0 (``missing_queries="zero"``)
    or NaN (``"nan"``); a run's query without judgments is not evaluated
    (trec_eval and ir-measures ignore it).  The warning counts both per run.
    """


class NonConvergenceWarning(MetaevalWarning):
    """An iterative estimator stopped before its convergence criterion was met."""


class HeywoodCaseWarning(MetaevalWarning):
    """A residual variance estimate is negative (or a factor correlation exceeds 1)."""


class ParseFailureWarning(MetaevalWarning):
    """LLM-judge answers without a usable rating.

    An answer with no rating the parser can read, or a rating outside the
    scale, is NaN (never filled unless the documented ``on_failure="random"``
    policy is chosen); the counts are in the result (``n_unparseable``,
    ``n_out_of_scale``) and the raw answers in its ``failures()``.
    """


class MissingLogprobsWarning(MetaevalWarning):
    """The G-Eval probability-weighted score of some answers could not be computed.

    The answer had a rating but no token log-probabilities for it (the
    endpoint returned none, the rating spans several tokens, or no
    alternative token is a value of the scale); those samples are NaN and
    counted in ``n_no_logprobs``.
    """


class MtmeWarning(MetaevalWarning):
    """mt-metrics-eval data that is read with a gap: a metric without scores for
    some systems (their cells are NaN) or without a file at the requested
    level (left out).  The message names the file."""


class SystemScoresWarning(MetaevalWarning):
    """System-level scores given with a dataset (corpus BLEU, ``.sys.score``
    files) are used instead of the means of the cells (the default's note),
    or cannot serve a computation: resampling inputs of a corpus-level score
    needs its per-segment sufficient statistics, so such an interval is NaN.
    The message names the columns and the ``system_scores`` option."""


class OutOfScaleWarning(MetaevalWarning):
    """A score column looks like a rating scale (integers in a small range)
    plus a few values far outside it, such as ``-1`` failure codes on a 1-5
    scale or ``999`` for "missing".  Nothing is changed: the message names the
    column, the values and their counts, and how to declare the scale
    (``bounds=``, ``--scale-bounds``) or drop the codes (``missing_values=``,
    ``--missing-values``)."""


class FailureCodeWarning(OutOfScaleWarning):
    """A score column holds a repeated failure code outside its other values,
    more often than the few codes :class:`OutOfScaleWarning` reports: a
    negative integer (``-1``, ``-99``) in a column otherwise non-negative
    (``-1`` on 20% of a 1-5 scale, on 10% of a BLEU column in [0, 1]), or
    ``999`` far above it.  The codes are used as scores as they are; the
    message names the column, the codes and their share, and how to make them
    missing (``missing_values=``, ``--missing-values``) or, if they are
    scores, to declare the scale (``bounds=``, ``--bounds``)."""


class AssumedDirectionWarning(MetaevalWarning):
    """A metric's direction was not given and was taken from its name: a
    column named like a lower-is-better text metric (TER, WER, ...) is taken
    as lower-is-better (:mod:`metaeval.direction`).  The message names the
    columns and the option that chooses."""


__all__ = [
    "AssumedDirectionWarning",
    "SystemScoresWarning",
    "OutOfScaleWarning",
    "FailureCodeWarning",
    "TwoPointWarning",
    "MtmeWarning",
    "JudgeRequestError",
    "BackendUnavailableError",
    "ExternalCommandError",
    "InputTypeError",
    "ParseFailureWarning",
    "MissingLogprobsWarning",
    "NonConvergenceWarning",
    "HeywoodCaseWarning",
    "MissingCellsWarning",
    "RaterDesignWarning",
    "NonPositiveReliabilityWarning",
    "SmallSampleWarning",
    "SmallExpectedCountWarning",
    "EmptyReferenceWarning",
    "MissingQueriesWarning",
    "MetaevalError",
    "DataError",
    "ParameterError",
    "ResourceError",
    "MetaevalWarning",
    "DegenerateGroupWarning",
    "ConstantInputWarning",
    "TooFewPairsWarning",
    "UndefinedStatisticWarning",
    "InsufficientResamplesWarning",
]
