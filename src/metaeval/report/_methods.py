"""The methods appendix, generated from the docstrings of the functions used.

For each analysis function the report called: the first paragraph of its
docstring and the description after it (up to three paragraphs, stopping at
a numpydoc section or an example), with reStructuredText roles and literals reduced to
plain text, and
the references it cites, found in the whole docstring: the seed papers
(``seed paper 000`` ... ``004``, expanded to their titles from
:data:`SEED_PAPERS`) and author-year citations (``Williams 1959``,
``Deutsch et al. 2021``, ``Shrout and Fleiss 1979``).
"""

from __future__ import annotations

import importlib
import inspect
import re

SEED_PAPERS = {
    "000": "Analyzing and Evaluating Correlation Measures in NLG Meta-Evaluation (seed paper 000)",
    "001": "Sheng et al. 2024, Is Reference Necessary in the Evaluation of NLG Systems? When and Where? "
           "(seed paper 001)",
    "002": "Xiao et al. 2023, Evaluating Evaluation Metrics: A Framework for Analyzing NLG Evaluation Metrics "
           "using Measurement Theory (MetricEval; seed paper 002)",
    "003": "Shimorina 2018, Human vs Automatic Metrics: on the Importance of Correlation Design (seed paper 003)",
    "004": "Contextual Metric Meta-Evaluation by Measuring Local Metric Accuracy (seed paper 004)",
}

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
    text = re.sub(r":(?:func|class|data|meth|mod|attr|obj|math):`~?([^`]+)`", r"\1", text)
    text = text.replace("``", "")
    text = re.sub(r"\s+", " ", text)
    return text.strip()


def resolve(name):
    """``metaeval.correlate`` or ``metaeval.perturb.score_perturbed`` to the function."""
    mod, _, attr = name.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError):
        return None


def references(doc):
    """The references a docstring cites, in order of first mention."""
    out = []
    for k in _SEED.findall(doc):
        out.append(SEED_PAPERS[k])
    for name, year in _AUTHOR_YEAR.findall(doc):
        first = name.split()[0]
        if first in _NOT_NAMES:
            continue
        ref = f"{name} {year}"
        if not any(ref in o for o in out):  # already part of a seed paper's entry
            out.append(ref)
    return list(dict.fromkeys(out))


def describe(names):
    """One entry per function: ``function, summary, references``."""
    rows = []
    for name in dict.fromkeys(names):
        f = resolve(name)
        doc = inspect.getdoc(f) or "" if f is not None else ""
        paras = [p for p in doc.split("\n\n") if p.strip()] if doc else ["(no docstring)"]
        detail = []
        for para in paras[1:4]:  # the description after the summary, up to a section or an example
            if _SECTION.match(para) or para.lstrip().startswith(">>>") or sum(map(len, detail)) > 500:
                break
            detail.append(_plain(para))
        detail = " ".join(detail)
        more = "\n".join(_module_doc(m) for m in ALSO_READ.get(name, []))
        rows.append({"function": name, "summary": _plain(paras[0]), "detail": detail,
                     "references": references(doc + "\n" + more)})
    return rows
