"""Issue 13 item 4: views only in metaeval.report.

Figures (matplotlib), rich tables and HTML live in ``metaeval.report.figures``
and ``metaeval.report.tables``; the analysis modules keep their documented
names (``metaeval.diagnostics.plot_ks``, ``MTMM.to_html`` ...) as aliases that
import the view on first use, and the command line prints every table through
``metaeval.report.tables``.  Expected values: the result objects themselves
(a view must show their numbers, rounded only as :func:`num` documents)."""

import ast
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import metaeval
from metaeval.report import tables as tb

SRC = pathlib.Path(metaeval.__file__).parent
ANALYSIS = ["correlation", "compare", "measures", "simulation", "reliability", "validity", "diagnostics", "local",
            "wmt", "preferences"]
VIEW_LIBS = ("matplotlib", "rich")


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


@pytest.mark.parametrize("name", ANALYSIS)
def test_analysis_modules_import_no_view_library(name):
    tree = ast.parse((SRC / f"{name}.py").read_text())
    bad = [m for m in _imports(tree) if m.split(".")[0] in VIEW_LIBS]
    assert not bad, f"{name}.py imports {bad}: views belong in metaeval.report"


@pytest.mark.parametrize("path", sorted((SRC / "cli").glob("*.py")), ids=lambda p: p.name)
def test_cli_renders_no_table_itself(path):
    tree = ast.parse(path.read_text())
    assert "rich.table" not in set(_imports(tree))
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert "add_row" not in calls and "add_column" not in calls


ALIASES = [("diagnostics", "plot_ks"), ("diagnostics", "plot_detection"), ("diagnostics", "plot_meta_correlation"),
           ("diagnostics", "plot_reference_sensitivity"), ("diagnostics", "plot_correlation_design"),
           ("local", "plot_local_accuracy"), ("local", "plot_context_tau"), ("validity", "plot_residual_pca"),
           ("validity", "mtmm_table")]


@pytest.mark.parametrize("module,name", ALIASES)
def test_documented_names_delegate_to_report(module, name):
    import importlib

    fn = getattr(importlib.import_module(f"metaeval.{module}"), name)
    src = ast.parse(__import__("inspect").getsource(fn))
    lazy = [n for n in ast.walk(src) if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("report")]
    assert lazy, f"metaeval.{module}.{name} must import its view from metaeval.report"
    target = "metaeval.report.tables" if name == "mtmm_table" else "metaeval.report.figures"
    assert hasattr(importlib.import_module(target), name)


def test_result_methods_delegate_to_report():
    import inspect

    from metaeval.validity import MTMM
    from metaeval.wmt import TaskSetResults

    for meth, view in ((MTMM.to_html, "mtmm_html"), (MTMM.to_rich, "mtmm_table"), (TaskSetResults.table, "wmt_table")):
        src = inspect.getsource(meth)
        assert view in src and len(src.splitlines()) < 15, meth.__qualname__  # a thin alias of the view
        assert hasattr(tb, view)


def test_tables_module_is_light():
    code = ("import sys, metaeval.report.tables\n"
            "print([m for m in ('numpy', 'pandas', 'rich', 'matplotlib', 'metaeval.report._build') "
            "if m in sys.modules])")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.strip().replace("'", '"')) == []


def test_mtmm_to_html_and_to_rich_are_the_report_views():
    from metaeval.validity import mtmm

    ds = metaeval.load_dataset("summeval")
    t = mtmm(ds, ["coherence", "relevance"])
    assert t.to_html() == tb.mtmm_html(t)
    assert t.to_html(order="trait", digits=3) == tb.mtmm_html(t, order="trait", digits=3)
    # the HTML shows the matrix values rounded to 2 digits, nothing else
    m = t.matrix()
    vals = m.to_numpy(float)
    shown = {f"{v:.2f}" for v in vals[np.triu_indices_from(vals)] if np.isfinite(v)}
    assert all(f">{s}</td>" in t.to_html() for s in shown)
    pytest.importorskip("rich")
    r = t.to_rich()
    assert r.row_count == len(m) and len(r.columns) == len(m) + 2


def test_correlations_table_shows_the_result():
    ds = metaeval.load_dataset("summeval")
    res = metaeval.correlate(ds, "coherence", metrics=["BLEU", "ROUGE.1"], level=["system", "input"],
                             ci="none", pvalue="none")
    t = tb.correlations_table(res, "coherence")
    assert t.title == "correlation with coherence, method pearson"  # one method: in the title
    assert t.columns == ["metric", "level", "statistic", "CI", "p", "n", "dropped"]
    for row, r in zip(t.rows, res):
        assert row[:3] == [r.metric, r.level, f"{r.statistic:.4f}"] and row[3] == "-" and row[4] == "-"
    assert t.caption == "\n".join(sorted({r.signature for r in res}))


def test_num_and_interval_formats():
    assert tb.num(float("nan")) == "-" and tb.num(None) == "-"
    assert tb.num(0.123456) == "0.1235" and tb.num(1.2e-5) == "1.2e-05" and tb.num(0.0) == "0.0000"
    assert tb.num(3) == "3" and tb.integer(float("inf")) == "inf" and tb.integer(2.0) == "2"
    assert tb.interval(float("nan"), 1.0) == "-" and tb.interval(0.1, 0.25) == "[0.100, 0.250]"
    assert tb.literal("a\x1b[31mb") == "a\\x1b[31mb"


def test_jupyter_html_of_every_result_is_the_report_view():
    """``_repr_html_`` (one method, ``_results._HtmlView``, inherited by the result base, the
    collections, simulation's and local's tables and ``LocalPairs``: no copy of it) renders
    through report.tables.result_html, and that view shows to_frame() and the signature; no
    module outside report/ builds HTML for it."""
    import inspect

    from metaeval import _results
    from metaeval import local as lc
    from metaeval import simulation as sim

    for cls in (_results._Result, _results._Collection, sim.Simulation, lc.LocalPairs,
                lc.LocalAccuracy, lc.ContextTau):
        assert cls._repr_html_ is _results._HtmlView._repr_html_, cls.__qualname__
    src = inspect.getsource(_results._HtmlView._repr_html_)
    assert "result_html" in src and len(src.splitlines()) < 10
    assert not hasattr(_results, "_html")
    ds = metaeval.load_dataset("summeval")
    res = metaeval.correlate(ds, "coherence", metrics=["BLEU", "ROUGE.1"], level="system", ci="none")
    out = res._repr_html_()
    assert out == tb.result_html(res)
    assert out.startswith('<div class="metaeval-result"><table') and res[0].signature in out
    frame = res.to_frame()
    assert all(f"<th>{c}</th>" in out for c in frame.columns if c != "signature")
    assert all(f"<td>{v}</td>" in out for v in frame.n)
