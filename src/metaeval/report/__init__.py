"""Views of results: figures (matplotlib, imported lazily), tables, and the HTML report.

Nothing here computes statistics; every function reads result objects.
:func:`build` runs every analysis that applies to a dataset and collects the
report's sections; :func:`write` writes ``report.html``, ``results.json``,
the figures and the tables.  jinja2 and matplotlib are imported only when a
report is written.
"""

from ._build import MODES, Progress, Report, ReportConfig, build, estimate, pairwise_subset
from ._render import Writer, render_html, write

__all__ = ["MODES", "Progress", "Report", "ReportConfig", "build", "estimate", "pairwise_subset", "render_html",
           "write", "Writer"]
