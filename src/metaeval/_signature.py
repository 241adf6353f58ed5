"""Reproducibility signatures: one line that pins down how a number was made.

Keys appear in the fixed order of ``_ORDER`` (unknown keys after them, in
the order given) and the library version is always last, e.g.
``human:coherence|level:input|method:kendall_b|avg:macro|nan:pairwise|ci:boot-both:1000:0.95|seed:42|metaeval:0.1.0``.
"""

from __future__ import annotations

from ._escape import literal
from ._version import __version__

_ORDER = (
    "human",
    "level",
    "method",
    "avg",
    "nan",
    "common",
    "test",
    "alt",
    "n",
    "ci",
    "pvalue",
    "perturb",
    "seed",
)


def _fmt(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (tuple, list)):
        return ":".join(_fmt(x) for x in v)
    # names (a human column, a metric) shown, never obeyed: a signature stays one printable line
    return literal(str(v))


def fmt_number(v: float) -> str:
    """A number as a signature shows it: ``3`` for 3.0, else its shortest repr."""
    return repr(int(v)) if float(v).is_integer() else repr(float(v))


def make_signature(**fields) -> str:
    """Build a signature line from keyword fields; ``None`` fields are left out
    (a key that does not apply, such as ``avg`` at system level).  Values are written through
    :func:`metaeval._escape.literal`: a name holding a newline or ESC stays one printable line."""
    fields = {k: v for k, v in fields.items() if v is not None}
    keys = [k for k in _ORDER if k in fields] + [k for k in fields if k not in _ORDER]
    parts = [f"{k}:{_fmt(fields[k])}" for k in keys]
    parts.append(f"metaeval:{__version__}")
    return "|".join(parts)
