"""Views of results: figures (matplotlib, imported lazily), tables, and the HTML report.

Nothing here computes statistics; every function reads result objects.
:func:`build` runs every analysis that applies to a dataset and collects the
report's sections; :func:`write` writes ``report.html``, ``results.json``,
the figures and the tables.  :mod:`.figures` draws every figure of the
library (the analysis modules' ``plot_*`` names are aliases of these),
:mod:`.tables` renders results as terminal tables (the command line's
output) and HTML tables.  jinja2 and matplotlib are imported only when a
report is written or a figure drawn; the names below are imported on first
use, so that the command line can load :mod:`.tables` without pandas.
"""

import importlib

_NAMES = {"MODES": "_build", "Progress": "_build", "Report": "_build", "ReportConfig": "_build",
          "build": "_build", "estimate": "_build", "pairwise_subset": "_build",
          "rated_columns": "_build", "bench_section": "_bench", "bench_report": "_bench", "select_humans": "_build", "select_metrics": "_build",
          "render_html": "_render", "write": "_render", "Writer": "_render"}

__all__ = ["MODES", "Progress", "Report", "ReportConfig", "build", "estimate", "pairwise_subset", "render_html",
           "write", "Writer", "bench_section", "bench_report", "rated_columns", "select_humans", "select_metrics"]


def __getattr__(name):
    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
