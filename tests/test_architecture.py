"""The arrows of docs/architecture.md, checked on the source.

Analysis modules lean on the engine (``metaeval.stats``), the vocabulary
(``metaeval._vocab``) and the result base (``metaeval._results``), never
sideways on each other's internals: no analysis module may use a private name
(``_x``) of another, however it is spelled:

* ``from .correlation import _x`` / ``from metaeval.correlation import _x``,
  at module level or inside a function;
* ``from . import correlation`` / ``import metaeval.correlation as c``, then
  ``correlation._x`` / ``c._x``.

Public names of another analysis module may be used (``wmt.run_tasks`` calls
``correlate`` and ``compare_all``), which keeps the arrow visible in the code.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "metaeval"

ANALYSIS = (
    "correlation",
    "compare",
    "measures",
    "simulation",
    "reliability",
    "validity",
    "diagnostics",
    "local",
    "wmt",
    "preferences",
)

#: Plotting helpers that helper "views" moves into report/ (issue 13 item 4); remove each
#: entry when its import goes.  Only view helpers may stand here.
PENDING_VIEWS: set = set()  # views moved to report/ (issue 13 item 4): nothing pending


def _target(node: ast.ImportFrom, module: str) -> str | None:
    """The analysis module an ``ImportFrom`` in ``metaeval/<module>.py`` names, if any."""
    if node.level == 0:
        parts = (node.module or "").split(".")
        if len(parts) == 2 and parts[0] == "metaeval" and parts[1] in ANALYSIS:
            return parts[1]
        return None
    if node.level == 1 and node.module in ANALYSIS:
        return node.module
    return None


def violations(module: str, source: str) -> list[tuple[str, str, str, int]]:
    """``(module, other, private name, line)`` for every private use of another analysis module."""
    tree = ast.parse(source)
    found = []
    aliases = {}  # local name bound to another analysis module -> that module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            other = _target(node, module)
            if other is not None and other != module:
                for a in node.names:
                    if a.name.startswith("_") or a.name == "*":
                        found.append((module, other, a.name, node.lineno))
            # `from . import correlation` / `from metaeval import correlation as c`
            if (node.level == 1 and node.module is None) or (
                node.level == 0 and node.module == "metaeval"
            ):
                for a in node.names:
                    if a.name in ANALYSIS and a.name != module:
                        aliases[a.asname or a.name] = a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if len(parts) == 2 and parts[0] == "metaeval" and parts[1] in ANALYSIS \
                        and parts[1] != module:
                    if a.asname:
                        aliases[a.asname] = parts[1]
                    else:
                        aliases[a.name] = parts[1]  # used as metaeval.<module>._x
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__"):
            base = ast.unparse(node.value)
            if base in aliases:
                found.append((module, aliases[base], node.attr, node.lineno))
    return found


def _all_violations():
    out = []
    for module in ANALYSIS:
        path = SRC / f"{module}.py"
        out += violations(module, path.read_text(encoding="utf-8"))
    return out


def test_no_private_name_crosses_analysis_modules():
    bad = [v for v in _all_violations() if v[:3] not in PENDING_VIEWS]
    assert not bad, "\n".join(
        f"metaeval/{m}.py:{line} uses {other}.{name}: move it to metaeval._vocab, "
        f"metaeval.stats or metaeval._results (see docs/architecture.md)"
        for m, other, name, line in bad
    )


def test_no_view_import_is_pending():
    assert not PENDING_VIEWS


#: The layers below the analysis modules: they must not import upwards.
LOWER = ["_vocab.py", "_choices.py", "_results.py", "_signature.py", "errors.py"] + [
    f"stats/{p.name}" for p in sorted((SRC / "stats").glob("*.py"))
]


def _imported_modules(path: pathlib.Path):
    """``(module, line)`` of every metaeval module imported by ``path`` (any depth)."""
    rel = path.relative_to(SRC).with_suffix("").parts  # e.g. ("stats", "levels")
    pkg = ["metaeval", *rel[:-1]]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                mods = [".".join(base + ([node.module] if node.module else []))]
                if node.module is None:  # from . import x
                    mods = [".".join(base + [a.name]) for a in node.names]
            else:
                mods = [node.module or ""]
            for m in mods:
                yield m, node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno


#: The one upward import a lower layer may make: the result base's Jupyter view
#: (``_repr_html_``) renders through its view in report/ (views live only there), imported
#: inside the method, so that importing the base loads no view.  (file, module) pairs.
VIEW_HOOKS = {("_results.py", "metaeval.report.tables")}


def _lazy_imports(path: pathlib.Path) -> set:
    """Line numbers of the imports made inside a function of ``path``."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines |= {n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return lines


def test_lower_layers_do_not_import_analysis_modules_or_views():
    upward = {f"metaeval.{m}" for m in ANALYSIS} | {"metaeval.cli", "metaeval.report"}
    bad = []
    for name in LOWER:
        lazy = _lazy_imports(SRC / name)
        for mod, line in _imported_modules(SRC / name):
            if (name, mod) in VIEW_HOOKS and line in lazy:
                continue
            if any(mod == u or mod.startswith(u + ".") for u in upward):
                bad.append(f"metaeval/{name}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


def test_the_result_base_loads_no_view():
    """The result base's view hook is lazy: importing metaeval loads neither report nor cli."""
    code = ("import sys, metaeval\n"
            "print(sorted(m for m in sys.modules if m.startswith(('metaeval.report', 'metaeval.cli'))))")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "source, n",
    [
        ("from .correlation import _as_list\n", 1),
        ("def f():\n    from .compare import _Opt, TESTS\n", 1),
        ("from metaeval.reliability import _alpha_batch as a\n", 1),
        ("from . import diagnostics\nx = diagnostics._number(1)\n", 1),
        ("from . import diagnostics as dg\nx = dg._number(1)\n", 1),
        ("import metaeval.local as L\nL._fast(3)\n", 1),
        ("import metaeval.local\nmetaeval.local._fast(3)\n", 1),
        ("from .compare import *\n", 1),
        ("from .correlation import correlate, Correlations\n", 0),
        ("from ._vocab import as_list\nfrom .stats.inference import resampling_pvalue\n", 0),
        ("from .measures import _own\n", 0),  # the module itself
        ("from . import diagnostics\nx = diagnostics.ks_score\n", 0),
    ],
)
def test_the_check_sees_every_spelling(source, n):
    assert len(violations("measures", source)) == n


@pytest.mark.slow
def test_correlation_design_gives_correlate_numbers_bit_for_bit():
    """Regression (issue 13): correlation_design recomputed Pearson/Spearman and the system
    means outside the engine and differed from correlate in the last bits (76 of 86 SummEval
    values); both now take the engine's statistic and analytic p-value."""
    import numpy as np

    import metaeval

    ds = metaeval.load_dataset("summeval")
    humans, metrics = ["coherence", "relevance"], ["BLEU", "ROUGE.L", "BertScore_f1", "CHRF"]
    for method in ("pearson", "spearman", "kendall_b"):
        cd = metaeval.correlation_design(ds, columns=humans + metrics, method=method,
                                         levels=("system", "global"))
        for level in ("system", "global"):
            S, P = cd.matrix(level), cd.matrix(level, value="pvalue")
            for h in humans:
                cr = metaeval.correlate(ds, h, metrics=metrics, level=level, method=method,
                                        ci="none", pvalue="auto")
                for m in metrics:
                    r = cr.get(m)
                    assert S.loc[h, m] == r.statistic, (method, level, h, m)
                    assert P.loc[h, m] == r.pvalue or (np.isnan(P.loc[h, m]) and np.isnan(r.pvalue))


def test_vocabulary_sits_below_the_engine():
    """_vocab and _choices import nothing of metaeval.stats at module level (stats.inference
    and stats.pairtest use _vocab's checks, so the arrow must point one way)."""
    for name in ("_vocab.py", "_choices.py"):
        tree = ast.parse((SRC / name).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                mod = ("." * node.level) + (node.module or "")
                assert not mod.lstrip(".").startswith("stats"), f"{name} imports {mod}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("metaeval.stats") for a in node.names), name
