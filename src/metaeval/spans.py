"""Rater agreement on error spans: precision, recall and F1 between raters' MQM/ESA error
annotations (issue 16.5), :func:`span_agreement`.

Re-exported by :mod:`metaeval.wmt`, where it was first documented; the readers of the span
files are :func:`metaeval.data.read_error_spans` and :func:`metaeval.data.read_rating_spans`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._results import _Collection, _Result
from ._signature import make_signature
from ._vocab import check_choice
from .errors import DataError, InputTypeError, ParameterError, UndefinedStatisticWarning

SPAN_MATCHES = ("exact", "char")


@dataclass(frozen=True)
class SpanAgreementPair(_Result):
    """Span-level agreement of two raters on the segments both rated.

    Attributes
    ----------
    rater_a, rater_b : str
        ``rater_a < rater_b`` (sorted as strings).
    match : str
        ``"exact"`` or ``"char"``.
    severity : bool
        Whether a match needs the same severity.
    n_segments : int
        Segments (system x input) rated by both raters.
    n_a, n_b : int
        Error spans (``exact``) or error characters (``char``) of each rater on
        those segments.
    n_match : int
        Matched spans or characters.
    precision, recall, f1 : float
        ``n_match / n_b``, ``n_match / n_a`` (rater ``a`` taken as reference) and
        ``2 n_match / (n_a + n_b)`` (symmetric); NaN when the denominator is 0.
    signature : str
    """

    rater_a: str
    rater_b: str
    match: str
    severity: bool
    n_segments: int
    n_a: int
    n_b: int
    n_match: int
    precision: float
    recall: float
    f1: float
    signature: str


@dataclass(frozen=True)
class SpanAgreement(_Collection):
    """Pairwise span agreement (:func:`span_agreement`); ``to_frame()`` columns:
    ``rater_a, rater_b, match, severity, n_segments, n_a, n_b, n_match,
    precision, recall, f1, signature``.  ``get("r1", rater_b="r2")`` picks a pair."""

    _item = SpanAgreementPair
    _key = "rater_a"

    @property
    def mean_f1(self) -> float:
        """Unweighted mean of ``f1`` over the rater pairs (NaN pairs left out;
        NaN without pairs)."""
        return _nanmean([r.f1 for r in self.results])

    @property
    def mean_precision(self) -> float:
        """Mean ``precision`` over the pairs (depends on which rater is ``a``)."""
        return _nanmean([r.precision for r in self.results])

    @property
    def mean_recall(self) -> float:
        """Mean ``recall`` over the pairs (depends on which rater is ``a``)."""
        return _nanmean([r.recall for r in self.results])


def _nanmean(v) -> float:
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def _union(intervals):
    """Sorted disjoint union of half-open intervals ``[start, end)`` (empty ones dropped)."""
    out = []
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return out


def _overlap(u, v) -> int:
    """Length of the intersection of two sorted disjoint interval lists."""
    i = j = total = 0
    while i < len(u) and j < len(v):
        lo, hi = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        if hi > lo:
            total += hi - lo
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return total


def _span_table(spans):
    from .data import SPAN_COLUMNS, read_error_spans

    if isinstance(spans, (str, bytes)) or hasattr(spans, "__fspath__"):
        return read_error_spans(spans)
    if not isinstance(spans, pd.DataFrame):
        raise InputTypeError(
            f"spans must be a DataFrame or the path of an error-span TSV, not {type(spans).__name__}"
        )
    missing = [c for c in SPAN_COLUMNS[:5] if c not in spans.columns]
    if missing:
        raise DataError(f"spans: missing column(s) {', '.join(missing)}; an error-span table has "
                        f"columns {', '.join(SPAN_COLUMNS)} (severity, category, is_source_error optional)")
    df = spans.copy()
    for c in ("severity", "category"):
        if c not in df.columns:
            df[c] = None
    if "is_source_error" not in df.columns:
        df["is_source_error"] = False
    st = pd.to_numeric(df["start"], errors="coerce").to_numpy(float)
    en = pd.to_numeric(df["end"], errors="coerce").to_numpy(float)
    raw_na = df["start"].isna().to_numpy() | df["end"].isna().to_numpy()
    bad = (np.isnan(st) | np.isnan(en)) & ~raw_na
    bad |= ~raw_na & ((st != np.floor(st)) | (en != np.floor(en)) | (st < 0) | (en < st))
    bad |= df["start"].isna().to_numpy() != df["end"].isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"spans row {i}: start={df['start'].iloc[i]}, end={df['end'].iloc[i]}: need "
                        "integers 0 <= start <= end, or both missing (a segment rated without errors)")
    df["start"], df["end"] = st, en
    return df[list(SPAN_COLUMNS)]


def span_agreement(spans, *, match: str = "char", severity: bool = False) -> SpanAgreement:
    """Span-level agreement between every pair of raters who rated the same segments.

    For raters ``a`` and ``b``, let ``S`` be the segments (system x input) both
    rated (a segment rated without errors counts).  With ``A_s`` and ``B_s``
    the error units of each rater on segment ``s``:

    * ``match="exact"``: units are spans ``(side, start, end[, severity])``
      (duplicates counted once); a span of ``b`` matches when ``a`` has the
      same one;
    * ``match="char"``: units are the characters ``(side, position[, severity])``
      covered by at least one error span (the union of the rater's spans);
      overlapping spans of one rater count each character once.

    ``side`` is source or translation (``is_source_error``).  With
    ``severity=True`` a unit matches only with the same severity label
    (compared in lower case); a character marked by a rater with two severities
    is two units.  Counts are micro-averaged over ``S``:
    ``n_match = sum_s |A_s & B_s|``, ``precision = n_match / sum_s |B_s|``,
    ``recall = n_match / sum_s |A_s|`` and
    ``F1 = 2 n_match / (sum_s |A_s| + sum_s |B_s|)`` (symmetric in ``a`` and
    ``b``); :attr:`SpanAgreement.mean_f1` averages F1 over the pairs with
    common segments, unweighted.

    This is span F1 as used for MQM and ESA inter-annotator agreement (Freitag
    et al. 2021, "Experts, Errors, and Context", TACL, compare raters' error
    annotations; word- and character-level F1 over tagged errors is the measure
    of the WMT quality-estimation error-span tasks).  Those papers do not all
    state one exact formula; this function implements the definition above and
    nothing more, so compare numbers from other tools only after checking their
    definition (micro vs macro averaging, span union, severity).

    Parameters
    ----------
    spans : DataFrame or path
        Long table with columns ``system, input, rater, start, end`` and optionally
        ``severity, category, is_source_error`` (one row per error span; a row
        with ``start`` and ``end`` missing marks a segment rated without errors),
        as returned by :func:`metaeval.data.read_rating_spans` (an
        mt-metrics-eval ``.rating`` file; concatenate the files of several raters)
        or the path of a TSV read by :func:`metaeval.data.read_error_spans`.
    match : {"exact", "char"}
    severity : bool
        Severity-aware matching.

    Returns
    -------
    SpanAgreement
        One :class:`SpanAgreementPair` per pair of raters with at least one
        common segment; F1 is NaN with an ``UndefinedStatisticWarning`` when
        neither rater marked an error on their common segments.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["s"] * 3, "input": ["0"] * 3, "rater": ["r1", "r2", "r2"],
    ...                   "start": [0, 0, 6], "end": [4, 2, 8], "severity": ["major"] * 3})
    >>> res = span_agreement(t, match="char")
    >>> p = res[0]
    >>> (p.n_a, p.n_b, p.n_match, round(p.f1, 4))
    (4, 4, 2, 0.5)
    >>> span_agreement(t, match="exact")[0].f1
    0.0
    """
    check_choice(match, "match", SPAN_MATCHES)
    if not isinstance(severity, (bool, np.bool_)):
        raise ParameterError(f"severity={severity!r} must be True or False")
    severity = bool(severity)
    df = _span_table(spans)
    units: dict = {}  # rater -> {(system, input): exact set | {(side, sev): intervals}}
    for row in df.itertuples(index=False):
        seg = (str(row.system), str(row.input))
        per = units.setdefault(str(row.rater), {})
        cell = per.setdefault(seg, set() if match == "exact" else {})
        if not np.isfinite(row.start):
            continue
        sev = str(row.severity).strip().lower() if severity and not pd.isna(row.severity) else ""
        side = bool(row.is_source_error)
        a, b = int(row.start), int(row.end)
        if match == "exact":
            cell.add((side, a, b, sev))
        else:
            cell.setdefault((side, sev), []).append((a, b))
    if match == "char":
        for per in units.values():
            for seg, cell in per.items():
                per[seg] = {k: _union(v) for k, v in cell.items()}
    sig = make_signature(match=match, severity="yes" if severity else "no")
    out = []
    raters = sorted(units)
    if len(raters) < 2:
        who = f"one rater, {raters[0]!r}" if raters else "no rater"
        raise DataError(
            f"span agreement compares raters, and the spans have {who}; give the spans of 2+ "
            "raters (one .rating file per rater, or a TSV whose rater column names several)")
    for i, ra in enumerate(raters):
        for rb in raters[i + 1:]:
            common = sorted(set(units[ra]) & set(units[rb]))
            if not common:
                continue
            na = nb = nm = 0
            for seg in common:
                ua, ub = units[ra][seg], units[rb][seg]
                if match == "exact":
                    na, nb, nm = na + len(ua), nb + len(ub), nm + len(ua & ub)
                else:
                    na += sum(e - s for v in ua.values() for s, e in v)
                    nb += sum(e - s for v in ub.values() for s, e in v)
                    nm += sum(_overlap(v, ub[k]) for k, v in ua.items() if k in ub)
            if na + nb == 0:
                warnings.warn(
                    f"raters {ra!r} and {rb!r} marked no error on their {len(common)} common "
                    "segment(s): span F1 is undefined (NaN)",
                    UndefinedStatisticWarning,
                    stacklevel=2,
                )
            out.append(SpanAgreementPair(
                rater_a=ra, rater_b=rb, match=match, severity=severity, n_segments=len(common),
                n_a=na, n_b=nb, n_match=nm,
                precision=nm / nb if nb else float("nan"),
                recall=nm / na if na else float("nan"),
                f1=2 * nm / (na + nb) if na + nb else float("nan"),
                signature=sig,
            ))
    if not out:
        warnings.warn(
            f"no two of the {len(raters)} raters rated a common segment: there is no pair "
            "to compare (the result is empty)", UndefinedStatisticWarning, stacklevel=2)
    return SpanAgreement(tuple(out))


__all__ = ["span_agreement", "SpanAgreement", "SpanAgreementPair", "SPAN_MATCHES"]
