"""Writing the report: results.json first, then every view rendered from it.

:class:`Writer` draws the figures (PNG and SVG) from the result objects
and exports every table as CSV (raw values) and LaTeX (rounded as
displayed) as soon as their section is finished (file names are slugs of
the ids, :func:`._model.slug`); :func:`write` then writes ``results.json``
(NaN as null) and renders ``report.html`` from the JSON document it has
just written, so the HTML shows exactly the numbers of results.json,
rounded only by :func:`._model.fmt`.  The HTML is one self-contained file
(inline CSS, figures embedded as PNG data URIs, no script); the figures and
tables are also files beside it.  Nothing is written outside the output
folder and nothing is deleted.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time

from .._escape import literal
from .._export import to_csv
from ._model import fmt, plain, slug

_ORDER = ["recommendation", "data", "correlations", "clusters", "measures", "reliability", "validity",
          "diagnostics", "text", "local", "preferences"]


def _tex_escape(s):
    # names shown, never obeyed: control and bidi characters as visible escapes (the views' one
    # escaping function), then LaTeX's special characters
    s = literal(str(s).replace("\u2013", "--"))
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
    return df.to_latex(index=False, escape=False, caption=(caption, short), label=f"tab:{slug(table.id)}",
                       longtable=len(table.rows) > 40, column_format=align)


def _umask():
    """The process umask (read by setting it and restoring it at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class Writer:
    """Writes the report's files into ``out`` as they are finished, never outside it.

    :meth:`flush` writes a section's tables (CSV, LaTeX) and figures (PNG,
    SVG) that are not written yet, so the builder calls it after every step
    and a later failure loses nothing; :meth:`finish` writes
    ``results.json`` and ``report.html``.  Every file is written to a
    temporary file in its folder and renamed onto its name, so an existing
    symbolic link is replaced (never followed); ``figures/`` and ``tables/``
    must resolve inside ``out``.  Nothing is ever deleted: files of an earlier
    report that this run does not write are left as they are (results.json
    lists this run's files).
    """

    def __init__(self, out, *, progress=None):
        from ..errors import ParameterError

        self.out = os.path.abspath(out)
        os.makedirs(self.out, exist_ok=True)
        self.real = os.path.realpath(self.out)
        for sub in ("figures", "tables"):
            p = os.path.join(self.out, sub)
            if os.path.islink(p) or (os.path.exists(p) and not self._inside(os.path.realpath(p))):
                raise ParameterError(f"--out: {p} is a link (to {os.path.realpath(p)}); the report writes only "
                                     "inside its folder: remove the link or choose another --out")
            os.makedirs(p, exist_ok=True)
        self.progress = progress
        self.done = set()     # ids of the tables and figures written
        self.images = {}      # figure id -> PNG bytes (embedded in report.html)
        self.files = []       # every file written by this run (relative to out)
        self.view_seconds = 0.0  # time spent writing tables and drawing figures (the header's "figures, tables")

    def _inside(self, real):
        return real == self.real or real.startswith(self.real + os.sep)

    def put(self, rel, data):
        """Write ``data`` (bytes or str) to ``out/rel``, replacing (never following) what is there."""
        import tempfile

        from ..errors import ParameterError

        path = os.path.join(self.out, rel)
        folder = os.path.dirname(path)
        if not self._inside(os.path.realpath(folder)) or os.path.normpath(rel).startswith(".."):
            raise ParameterError(f"--out: {rel} would be written outside {self.out}")
        if isinstance(data, str):
            data = data.encode("utf8")
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".metaeval-")
        try:
            # mkstemp makes the file private (0600): give it the mode a plain open() would
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # renames onto the name: a link there is replaced, not followed
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        self.files.append(rel)

    def _figure(self, s, f):
        import io

        from .figures import _pyplot, literal_texts

        d = f.to_dict()["files"]
        fig = f.make()
        try:
            literal_texts(fig)  # names shown, never obeyed (raw ESC would make the SVG unreadable)
            bufs = {}
            for kind, kw in (("png", {"dpi": 110}), ("svg", {})):
                bufs[kind] = io.BytesIO()
                fig.savefig(bufs[kind], format=kind, **kw)
        finally:
            _pyplot().close(fig)
        for kind, b in bufs.items():
            self.put(d[kind], b.getvalue())
        self.images[f.id] = bufs["png"].getvalue()

    def flush(self, s):
        """Write the tables and figures of section ``s`` not written yet."""
        t_flush = time.perf_counter()
        try:
            self._flush(s)
        finally:
            self.view_seconds += time.perf_counter() - t_flush

    def _flush(self, s):
        for t in s.tables:
            if ("t", t.id) in self.done:
                continue
            self.done.add(("t", t.id))
            files = t.to_dict()["files"]
            try:
                self.put(files["csv"], to_csv(t.frame()))  # formula-safe (metaeval._export)
                self.put(files["latex"], table_latex(t))
            except Exception as exc:  # a view failing must not lose the computed report
                s.warnings.append({"warning": f"table {t.id!r} not exported: {type(exc).__name__}: {exc}",
                                   "count": 1})
        for f in list(s.figures):
            if ("f", f.id) in self.done:
                continue
            self.done.add(("f", f.id))
            t = time.perf_counter()
            try:
                self._figure(s, f)
            except Exception as exc:  # a view failing must not lose the computed report
                s.figures.remove(f)
                s.warnings.append({"warning": f"figure {f.id!r} not drawn: {type(exc).__name__}: {exc}",
                                   "count": 1})
            s.seconds += time.perf_counter() - t

    def finish(self, report, seconds_views=0.0):
        """Write results.json and report.html (rendered from exactly what results.json holds)."""
        from ._methods import describe

        functions = [fn for s in report.sections for fn in s.functions]
        report.meta["seconds_views"] = seconds_views
        doc = document(report, describe(functions))
        self.put("results.json", json.dumps(doc, indent=1, allow_nan=False))
        with open(os.path.join(self.out, "results.json"), encoding="utf8") as f:
            written = json.load(f)
        self.put("report.html", render_html(written, images=self.images))
        return written


_CITED_KEYS = ("intro", "title", "note", "text", "description", "reason")


def _cite_all(x):
    """Seed-paper mentions in the report's prose as author-year citations (data values untouched)."""
    from ._refs import cite

    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k in _CITED_KEYS and isinstance(v, str):
                out[k] = cite(v)
            elif k == "skipped" and isinstance(v, list) and all(isinstance(r, str) for r in v):
                out[k] = [cite(r) for r in v]
            else:
                out[k] = v if k == "rows" else _cite_all(v)
        return out
    if isinstance(x, list):
        return [_cite_all(v) for v in x]
    return x


def split_signatures(sigs):
    """The parts (``key:value``) shared by every signature, shown once, and the keys that differ."""
    parts = [s.split("|") for s in sigs]
    common = [p for p in parts[0] if all(p in q for q in parts[1:])]
    keys = []
    for q in parts:
        for p in q:
            if p not in common:
                k = p.split(":", 1)[0]
                if k not in keys:
                    keys.append(k)
    return {"common": "|".join(common), "differ": keys}


def document(report, methods):
    """The results.json document (JSON-ready: NaN is None)."""
    from ._refs import PAPERS, bibtex, references

    doc = _cite_all(report.to_dict())
    order = {k: i for i, k in enumerate(_ORDER)}
    doc["sections"] = sorted(doc["sections"], key=lambda s: order.get(s["id"], len(order)))
    doc["methods"] = methods
    doc["references"] = references()
    short = {v[0] for v in PAPERS.values()}
    doc["other_references"] = list(dict.fromkeys(r for m in methods for r in m["references"] if r not in short))
    doc["bibtex"] = bibtex()
    doc["created"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return plain(doc)


def render_html(doc, images=None):
    """The HTML page of a results.json document (jinja2, autoescaped).

    ``images`` maps figure ids to PNG bytes, embedded as data URIs so that
    report.html alone is the whole report; without it (or for a figure it
    lacks) the page refers to the PNG file beside it.
    """
    import base64

    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("metaeval.report", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = fmt
    env.filters["anchor"] = slug
    env.filters["jsonv"] = lambda v: json.dumps(v, allow_nan=False)
    env.globals["fmt"] = fmt
    env.globals["sigsplit"] = split_signatures
    env.globals["refkey"] = {r["short"]: r["key"] for r in doc.get("references", [])}
    uris = {k: "data:image/png;base64," + base64.b64encode(v).decode("ascii") for k, v in (images or {}).items()}
    return env.get_template("report.html.j2").render(doc=doc, images=uris)


def write(report, out, *, progress=None, writer=None):
    """Write ``report`` to the folder ``out``; returns the results.json document.

    Files: ``report.html`` (self-contained: figures embedded as PNG),
    ``results.json``, ``figures/<name>.png`` and ``.svg``,
    ``tables/<name>.csv`` and ``.tex`` (``<name>``: the id, or a slug of it,
    :func:`._model.slug`).  ``writer`` is the :class:`Writer` the builder
    already wrote finished sections with (default: a new one).
    """
    from ._build import Progress

    progress = progress or Progress()
    progress.start(2)  # two more steps for the whole run's progress: figures; tables, JSON and HTML
    t0 = time.perf_counter()
    w = writer if writer is not None else Writer(out)
    with progress.step("figures and tables not written yet", None):
        for s in report.sections:
            w.flush(s)
    with progress.step("results.json and HTML", None):
        # every table and figure written, during the build (Writer.flush after each step) and here
        return w.finish(report, w.view_seconds if writer is not None else time.perf_counter() - t0)
