"""The one escaping function of every view (terminal tables, messages, CSV, the WMT table,
the judge's output): names read from files are shown, never obeyed.  It sits at the bottom
layer and imports nothing, so the command line's start-up loads it for free.
"""

from __future__ import annotations

__all__ = ["literal"]


def literal(text, *, newlines=False):
    """``text`` safe to print on a terminal: control and format characters (ESC, BEL, CR,
    bidi overrides such as U+202E, line and paragraph separators, ...) as Python escapes, so
    ``"\\x1b[31m"`` shows as ``\\x1b[31m``.

    The one escaping function of every view (terminal tables, messages, CSV, the WMT table).
    ``newlines=True`` keeps ``\\n`` (CSV, whose writer quotes a field holding one); every other
    character that is not printable is escaped, tabs included.
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or (newlines and c == "\n")
                   else c.encode("unicode_escape").decode("ascii") for c in text)
