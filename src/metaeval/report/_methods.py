"""The methods appendix, generated from the docstrings of the functions used.

For each analysis function the report called: the first paragraph of its
docstring and the description after it (up to three paragraphs, stopping at
a numpydoc section or an example), with reStructuredText roles and literals reduced to
plain text, and
the references it cites, found in the whole docstring: the seed papers
(``seed paper 000`` ... ``004``, cited by author and year, :mod:`._refs`)
and author-year citations (``Williams 1959``, ``Deutsch et al. 2021``,
``Shrout and Fleiss 1979``).  reST markup (roles, emphasis, ``.. math::``
blocks, lists, simple tables, definition lists) is turned into blocks of
plain text the template renders as HTML; formulas become Unicode text.
"""

from __future__ import annotations

import importlib
import inspect
import re

from ._refs import PAPERS, cite, cited_papers, latex_text

#: the seed papers as the methods appendix names them (author-year, title)
SEED_PAPERS = {k: f"{short}: {full.split('. ', 2)[2].split('. ')[0]}" for k, (short, full) in PAPERS.items()}

_SEED = re.compile(r"\b(?:seed )?paper (00[0-4])\b", re.IGNORECASE)
_NAME = r"[A-Z][a-z]*[A-Z]?[a-z]+(?:-[A-Z][a-z]+)?"
_AUTHOR_YEAR = re.compile(
    rf"\b({_NAME}(?: et al\.?| and {_NAME}| & {_NAME})?)(?:'s|')?(?:,| \(| )((?:19|20)\d\d)[a-z]?\b")
_NOT_NAMES = {"Table", "Tables", "Figure", "Figures", "Section", "Sections", "Eq", "Equation", "Algorithm",
              "Appendix", "App", "Chapter", "Step", "Version", "The", "In", "See", "And", "Since", "From",
              "Until", "After", "Before", "Python", "Returns", "Default", "Note", "Example", "Examples"}


#: docstrings read for references besides the function's own (the tests of
#: compare_all are described in its module's docstring)
ALSO_READ = {"metaeval.compare_all": ["metaeval.compare"], "metaeval.compare": ["metaeval.compare"]}


def _module_doc(name):
    try:
        return importlib.import_module(name).__doc__ or ""
    except ImportError:
        return ""


_SECTION = re.compile(r"\s*(Parameters|Returns|Raises|Examples|Notes|References|See Also|Attributes|Yields|"
                      r"Warns|Other Parameters)\s*\n\s*-{3,}")


def _plain(text):
    """One paragraph of reST as plain text: roles and literals unwrapped, ``:math:`` as Unicode
    text, emphasis markers removed, seed-paper mentions as author-year citations."""
    text = re.sub(r":math:`([^`]+)`", lambda m: latex_text(m.group(1)), text)
    text = re.sub(r":(?:func|class|data|meth|mod|attr|obj|ref|doc|exc|py:\w+):`~?([^`]+)`", r"\1", text)
    text = text.replace("``", "")
    text = re.sub(r"(?<![\w*])\*\*(\S(?:.*?\S)?)\*\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"\1", text)
    text = re.sub(r"`([^`]+)`_?", r"\1", text)
    text = _braces(text)
    text = re.sub(r"\s+", " ", text).strip()
    if text.endswith("::"):
        text = text[:-1]
    return cite(text)


def _braces(text):
    """Plain-text formulas of docstrings (``Sigma^{-1}``, ``sum_{i<j}``) without TeX braces:
    Unicode super/subscripts where every character has one, else ``^(...)`` / ``_(...)``."""
    from ._refs import _SUB, _SUP

    def sub(m):
        table = _SUP if m.group(1) == "^" else _SUB
        body = m.group(2)
        if body and all(c in table for c in body):
            return "".join(table[c] for c in body)
        return f"{m.group(1)}({body})"

    return re.sub(r"([\^_])\{([^{}]*)\}", sub, text)


def _indent(line):
    return len(line) - len(line.lstrip())


_BORDER = re.compile(r"^=+(\s+=+)+\s*$")
_BULLET = re.compile(r"^[*-]\s+")


def _table_rows(lines):
    border = next(ln for ln in lines if _BORDER.match(ln.strip()))
    base = _indent(border)
    spans = [(m.start() + base, m.end() + base) for m in re.finditer(r"=+", border.strip())]
    rows = []
    for ln in lines:
        if _BORDER.match(ln.strip()):
            continue
        cells = []
        for k, (a, _) in enumerate(spans):
            b = spans[k + 1][0] if k + 1 < len(spans) else len(ln)
            cells.append(_plain(ln[a:b]))
        rows.append(cells)
    return rows


def blocks(lines):
    """The reST of a docstring's description (lines, dedented) as blocks for the HTML:
    ``{"kind": "p", "text"}``, ``{"kind": "math", "text"}`` (a ``.. math::`` formula as Unicode
    text), ``{"kind": "list", "items": [blocks]}``, ``{"kind": "table", "rows"}`` (a reST simple
    table, complete) and ``{"kind": "dl", "items": [{"term", "blocks"}]}`` (definition lists)."""
    out, i, n = [], 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        ind, stripped = _indent(line), line.strip()
        m = re.match(r"\.\. math::\s*(.*)$", stripped)
        if m:
            body, j = [m.group(1)], i + 1
            while j < n and (not lines[j].strip() or _indent(lines[j]) > ind):
                body.append(lines[j].strip())
                j += 1
            out.append({"kind": "math", "text": latex_text(" ".join(b for b in body if b))})
            i = j
            continue
        if re.match(r"\.\. [\w-]+::", stripped):  # another directive: its content is read as text
            rest = stripped.split("::", 1)[1].strip()
            lines = lines[:i] + ([" " * ind + rest] if rest else []) + lines[i + 1:]
            n = len(lines)
            continue
        if _BORDER.match(stripped):
            j = i
            while j < n and lines[j].strip():
                j += 1
            out.append({"kind": "table", "rows": _table_rows(lines[i:j])})
            i = j
            continue
        if _BULLET.match(stripped):
            items = []
            while i < n and lines[i].strip() and _indent(lines[i]) == ind and _BULLET.match(lines[i].strip()):
                first = _BULLET.sub("", lines[i].strip())
                j, body = i + 1, [first]
                while j < n and lines[j].strip() and _indent(lines[j]) > ind:
                    body.append(lines[j].strip())
                    j += 1
                items.append([{"kind": "p", "text": _plain(" ".join(body))}])
                i = j
                while i < n and not lines[i].strip() and i + 1 < n and _BULLET.match(lines[i + 1].strip() or "x") \
                        and _indent(lines[i + 1]) == ind:
                    i += 1
            out.append({"kind": "list", "items": items})
            continue
        j, para = i, []
        while j < n and lines[j].strip() and _indent(lines[j]) == ind:
            para.append(lines[j].strip())
            j += 1
        if j < n and lines[j].strip() and _indent(lines[j]) > ind:  # a definition (term, then indented body)
            k, body = j, []
            while k < n and (not lines[k].strip() or _indent(lines[k]) > ind):
                body.append(lines[k][ind + 1:] if lines[k].strip() else "")
                k += 1
            while body and not body[-1].strip():
                body.pop()
            sub = [ln[min(_indent(x) for x in body if x.strip()):] if ln.strip() else "" for ln in body]
            item = {"term": _plain(" ".join(para)), "blocks": blocks(sub)}
            if out and out[-1]["kind"] == "dl":
                out[-1]["items"].append(item)
            else:
                out.append({"kind": "dl", "items": [item]})
            i = k
            continue
        out.append({"kind": "p", "text": _plain(" ".join(para))})
        i = j
    return out


def _text_of(bs):
    """The blocks as one plain-text string (results.json's ``detail``)."""
    parts = []
    for b in bs:
        if b["kind"] in ("p", "math"):
            parts.append(b["text"])
        elif b["kind"] == "list":
            parts += [_text_of(it) for it in b["items"]]
        elif b["kind"] == "table":
            parts += ["; ".join(" ".join(c for c in r if c) for r in b["rows"])]
        elif b["kind"] == "dl":
            parts += [f"{it['term']}: {_text_of(it['blocks'])}" for it in b["items"]]
    return " ".join(p for p in parts if p)


def resolve(name):
    """``metaeval.correlate`` or ``metaeval.perturb.score_perturbed`` to the function."""
    mod, _, attr = name.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError):
        return None


def references(doc):
    """The references a docstring cites, in order of first mention: the seed papers' short
    citations (``Gao et al., 2025``), then other author-year citations (``Williams 1959``)."""
    out = [PAPERS[k][0] for k in cited_papers(doc)]
    for name, year in _AUTHOR_YEAR.findall(doc):
        first = name.split()[0]
        if first in _NOT_NAMES:
            continue
        ref = f"{name} {year}"
        short = {PAPERS[k][0].replace(",", "") for k in PAPERS}
        if ref in short or ref.replace(" and ", " & ") in short:  # a seed paper cited by name
            continue
        out.append(ref)
    return list(dict.fromkeys(out))


def _description(doc):
    """The docstring's description lines: after the summary, up to a numpydoc section or an example."""
    lines = doc.splitlines()
    k = 0
    while k < len(lines) and lines[k].strip():  # the summary paragraph
        k += 1
    out = []
    for j in range(k, len(lines)):
        ln = lines[j]
        if ln.lstrip().startswith(">>>"):
            break
        if j + 1 < len(lines) and ln.strip() and re.match(r"^\s*-{3,}\s*$", lines[j + 1]) and \
                _SECTION.match(ln + "\n" + lines[j + 1]):
            break
        out.append(ln)
    return out


def describe(names):
    """One entry per function: ``function, summary, detail, blocks, references``.

    ``blocks`` is the whole description (:func:`blocks`: formulas as text,
    tables complete, no reST or LaTeX markup); ``detail`` the same as one
    plain-text string.
    """
    rows = []
    for name in dict.fromkeys(names):
        f = resolve(name)
        doc = inspect.getdoc(f) or "" if f is not None else ""
        paras = [p for p in doc.split("\n\n") if p.strip()] if doc else ["(no docstring)"]
        bs = blocks(_description(doc)) if doc else []
        more = "\n".join(_module_doc(m) for m in ALSO_READ.get(name, []))
        rows.append({"function": name, "summary": _plain(paras[0]), "detail": _text_of(bs), "blocks": bs,
                     "references": references(doc + "\n" + more)})
    return rows
