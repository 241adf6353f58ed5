"""The report's document model: sections of tables, figures and readings.

Everything here holds raw values (no rounding); :func:`fmt` is the one place
where numbers are rounded, used by the HTML, the LaTeX export and the
readings alike, so that a number reads the same everywhere.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field


# one JSON-ready conversion for the report and the command line
from .._export import plain  # noqa: F401  (re-exported: the report's modules import it from here)

#: column kinds and how :func:`fmt` shows them
KINDS = ("text", "num", "p", "int", "ci", "bool")
DIGITS = 3
#: decimals of a p-value: enough to tell 0.0498 from 0.0500 (issue 23 item 6)
P_DIGITS = 4


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def fmt(value, kind="num", digits=DIGITS):
    """A value as the report shows it (the renderers' only rounding).

    ``num``: ``digits`` decimals; ``p``: at least :data:`P_DIGITS` decimals
    (``<0.0001`` below that), so that 0.0498 does not show as 0.050; ``int``: an integer (``inf`` kept); ``ci``: a pair
    ``[low, high]``; ``bool``: ``yes``/``no``; ``text``: as is.  Missing
    values (None, NaN) show as an en dash.
    """
    if kind == "ci":
        if value is None:
            return "\u2013"
        lo, hi = value
        if _missing(lo) and _missing(hi):
            return "\u2013"
        return f"[{fmt(lo, 'num', digits)}, {fmt(hi, 'num', digits)}]"
    if _missing(value):
        return "\u2013"
    if kind == "text":
        return str(value)
    if kind == "bool":
        return "yes" if value else "no"
    v = float(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if kind == "int":
        return str(int(round(v)))
    if kind == "p":
        digits = max(digits, P_DIGITS)
    if kind == "p" and v < 10 ** (-digits):
        return f"<{10 ** (-digits):.{digits}f}"
    s = f"{v:.{digits}f}"
    if s.startswith("-") and float(s) == 0:
        s = s[1:]
    return s


_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def slug(name):
    """A file-name-safe form of ``name`` (a table or figure id, which may hold
    a raw column name with ``/``, spaces, non-ASCII or hundreds of characters).

    Names of up to 64 ASCII letters, digits, ``.``, ``_`` and ``-`` (not
    starting with a dot or a dash) are kept as they are; any other name
    becomes an ASCII stem of at most 40 characters plus ``-`` and the first
    10 hex digits of the SHA-1 of the full name, so two different names
    never share a file.  Display names (tables, JSON) keep the real name.
    """
    name = str(name)
    if _SAFE.fullmatch(name) and not name.endswith("."):
        return name
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name.encode("ascii", "ignore").decode()).strip("._-")[:40]
    digest = hashlib.sha1(name.encode("utf8")).hexdigest()[:10]
    return f"{stem}-{digest}" if stem else f"x-{digest}"





@dataclass
class Column:
    key: str
    label: str
    kind: str = "num"

    def to_dict(self):
        return {"key": self.key, "label": self.label, "kind": self.kind}


@dataclass
class Table:
    """A table of the report: rows of raw values, one per row of ``columns``.

    ``signatures`` are the computing results' signatures (the caption);
    ``group`` is the human column (or other heading) it belongs to.
    """

    id: str
    title: str
    columns: list
    rows: list
    signatures: list
    note: str = ""
    group: str | None = None

    def __post_init__(self):
        for c in self.columns:
            if c.kind not in KINDS:
                raise ValueError(f"column {c.key!r}: kind {c.kind!r} not in {KINDS}")
        self.rows = [plain(list(r)) for r in self.rows]
        for r in self.rows:
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.id!r}: a row has {len(r)} values for {len(self.columns)} columns")
        self.signatures = sorted({s for s in self.signatures if s})

    def frame(self):
        """The table as a DataFrame (CI columns split into ``_low``/``_high``)."""
        import pandas as pd

        data = {}
        for k, c in enumerate(self.columns):
            vals = [r[k] for r in self.rows]
            if c.kind == "ci":
                data[f"{c.key}_low"] = [None if v is None else v[0] for v in vals]
                data[f"{c.key}_high"] = [None if v is None else v[1] for v in vals]
            else:
                data[c.key] = vals
        return pd.DataFrame(data)

    def to_dict(self):
        return {
            "id": self.id,
            "title": self.title,
            "group": self.group,
            "note": self.note,
            "signatures": list(self.signatures),
            "columns": [c.to_dict() for c in self.columns],
            "rows": self.rows,
            "anchor": slug(self.id),
            "files": {"csv": f"tables/{slug(self.id)}.csv", "latex": f"tables/{slug(self.id)}.tex"},
        }


@dataclass
class Figure:
    """A figure: ``make()`` draws it (matplotlib) from results when written."""

    id: str
    title: str
    make: object = field(repr=False)
    alt: str = ""
    group: str | None = None

    def to_dict(self):
        return {"id": self.id, "anchor": slug(self.id), "title": self.title, "alt": self.alt or self.title,
                "group": self.group,
                "files": {"png": f"figures/{slug(self.id)}.png", "svg": f"figures/{slug(self.id)}.svg"}}


@dataclass
class Reading:
    """One sentence generated from the numbers by the rule ``rule``
    (:data:`metaeval.report._readings.RULES`), citing ``evidence`` (table or
    figure ids)."""

    text: str
    rule: str
    evidence: list = field(default_factory=list)
    group: str | None = None

    def to_dict(self):
        return {"text": self.text, "rule": self.rule, "evidence": list(self.evidence), "group": self.group}


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    status: str = "done"          # done | partial | skipped
    reasons: list = field(default_factory=list)   # why (parts) were skipped
    tables: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    readings: list = field(default_factory=list)
    functions: list = field(default_factory=list)  # analysis functions used (methods appendix)
    warnings: list = field(default_factory=list)   # typed warnings raised by the analyses, counted
    seconds: float = 0.0

    def skip(self, reason, *, part=False):
        """Record a skipped part (``part=True``) or the whole section."""
        self.reasons.append(reason)
        if not part:
            self.status = "skipped"
        elif self.status == "done":
            self.status = "partial"

    def to_dict(self):
        return {
            "id": self.id,
            "title": self.title,
            "intro": self.intro,
            "status": self.status,
            "skipped": list(self.reasons),
            "seconds": self.seconds,
            "warnings": list(self.warnings),
            "functions": list(self.functions),
            "tables": [t.to_dict() for t in self.tables],
            "figures": [f.to_dict() for f in self.figures],
            "readings": [r.to_dict() for r in self.readings],
        }
