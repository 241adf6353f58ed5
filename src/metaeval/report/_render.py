"""Writing the report: results.json first, then every view rendered from it.

:func:`write` draws the figures (PNG and SVG) from the result objects,
exports every table as CSV (raw values) and LaTeX (rounded as displayed),
writes ``results.json`` (NaN as null), and renders ``report.html`` from the
JSON document it has just written, so the HTML shows exactly the numbers
of results.json, rounded only by :func:`._model.fmt`.  The HTML is one
file with inline CSS and no script; figures and tables are files next to
it, referenced by relative paths (it opens offline, from disk).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time

from .._export import to_csv
from ._model import fmt, plain

_ORDER = ["recommendation", "data", "correlations", "clusters", "measures", "reliability", "validity",
          "diagnostics", "text", "local"]


def _tex_escape(s):
    s = str(s).replace("\u2013", "--")
    out = []
    for ch in s:
        out.append({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                    "<": r"$<$", ">": r"$>$"}.get(ch, ch))
    return "".join(out)


def table_latex(table):
    """A table as LaTeX (values as the report shows them; caption with the signatures)."""
    import pandas as pd

    cells = [[_tex_escape(fmt(v, c.kind)) for v, c in zip(r, table.columns)] for r in table.rows]
    df = pd.DataFrame(cells, columns=[_tex_escape(c.label) for c in table.columns])
    short = _tex_escape(table.title)
    caption = short
    if table.signatures:  # the full caption carries the signatures; the list of tables only the title
        caption += ". Signatures: " + "; ".join(r"\texttt{" + _tex_escape(s).replace("|", r"|\allowbreak{}") + "}"
                                                for s in table.signatures)
    align = "".join("l" if c.kind in ("text", "bool") else "r" for c in table.columns)
    return df.to_latex(index=False, escape=False, caption=(caption, short), label=f"tab:{table.id}",
                       longtable=len(table.rows) > 40, column_format=align)


def _draw_figures(report, out, progress):
    from .figures import save_both

    figs = [(s, f) for s in report.sections for f in s.figures]
    with progress.step("figures (PNG and SVG)", len(figs)) as bar:
        for s, f in figs:
            t = time.perf_counter()
            try:
                save_both(f.make(), os.path.join(out, "figures", f.id))
            except Exception as exc:  # a view failing must not lose the computed report
                s.figures.remove(f)
                s.warnings.append({"warning": f"figure {f.id!r} not drawn: {type(exc).__name__}: {exc}",
                                   "count": 1})
            s.seconds += time.perf_counter() - t
            if bar is not None:
                bar(1)


def document(report, methods):
    """The results.json document (JSON-ready: NaN is None)."""
    doc = report.to_dict()
    order = {k: i for i, k in enumerate(_ORDER)}
    doc["sections"] = sorted(doc["sections"], key=lambda s: order.get(s["id"], len(order)))
    doc["methods"] = methods
    doc["created"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return plain(doc)


def render_html(doc):
    """The HTML page of a results.json document (jinja2, autoescaped)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("metaeval.report", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = fmt
    env.filters["jsonv"] = lambda v: json.dumps(v, allow_nan=False)
    env.globals["fmt"] = fmt
    return env.get_template("report.html.j2").render(doc=doc)


def _remove_previous(out):
    """Delete the files a previous report wrote in ``out`` (listed in its results.json), so that
    no stale table or figure is left beside the new report; nothing else is touched."""
    path = os.path.join(out, "results.json")
    try:
        with open(path, encoding="utf8") as f:
            old = json.load(f)
        files = [v for s in old.get("sections", []) for x in s.get("tables", []) + s.get("figures", [])
                 for v in x.get("files", {}).values()]
    except (OSError, ValueError, AttributeError, TypeError):
        return
    for rel in files:
        p = os.path.normpath(os.path.join(out, rel))
        if os.path.dirname(os.path.dirname(p)) == os.path.normpath(out) and os.path.isfile(p):
            os.remove(p)


def write(report, out, *, progress=None):
    """Write ``report`` to the folder ``out``; returns the results.json document.

    Files: ``report.html``, ``results.json``, ``figures/<id>.png`` and
    ``.svg``, ``tables/<id>.csv`` and ``.tex``.
    """
    from ._build import Progress
    from ._methods import describe

    progress = progress or Progress()
    progress.start(2)  # two more steps for the whole run's progress: figures; tables, JSON and HTML
    t0 = time.perf_counter()
    _remove_previous(out)
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    os.makedirs(os.path.join(out, "tables"), exist_ok=True)
    _draw_figures(report, out, progress)
    with progress.step("tables, results.json and HTML", None):
        for s in report.sections:
            for t in s.tables:
                to_csv(t.frame(), os.path.join(out, "tables", f"{t.id}.csv"))  # formula-safe
                with open(os.path.join(out, "tables", f"{t.id}.tex"), "w", encoding="utf8") as f:
                    f.write(table_latex(t))
        functions = [fn for s in report.sections for fn in s.functions]
        report.meta["seconds_views"] = time.perf_counter() - t0
        doc = document(report, describe(functions))
        path = os.path.join(out, "results.json")
        with open(path, "w", encoding="utf8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
        with open(path, encoding="utf8") as f:
            written = json.load(f)  # the HTML is rendered from exactly what results.json holds
        with open(os.path.join(out, "report.html"), "w", encoding="utf8") as f:
            f.write(render_html(written))
    return written
