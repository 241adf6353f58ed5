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


#: The layer map (docs/architecture.md): every module of the package, by the longest
#: prefix of its dotted name below ``metaeval``, has a layer; an import may point down or
#: sideways (same layer), never up, at any depth (inside functions too).
LAYERS = {
    # plumbing that imports only errors/_version: names, warnings, signatures, export, execution
    "errors": 0, "_choices": 0, "_stacklevel": 0, "_version": 0, "_signature": 0,
    "_escape": 0, "_export": 0, "_agreement_registry": 0, "_parallel": 0,
    "_vocab": 1,  # the vocabulary and its checks (names from _choices)
    "_results": 1,  # the result base
    "stats": 2,  # the engine: arrays in, arrays out
    "data": 3,  # Dataset, readers, bundled data
    "textmetrics": 4, "ranking": 4,  # scores from texts and ranked lists
    "direction": 5,  # lower-is-better rule shared by analyses (reads the text-metric registry)
    # analyses f(dataset) -> Result, and perturbations scored and detected
    "correlation": 6, "compare": 6, "measures": 6, "simulation": 6, "reliability": 6,
    "validity": 6, "diagnostics": 6, "local": 6, "wmt": 6, "preferences": 6, "perturb": 6,
    "bench": 6, "spans": 6,
    "report": 7,  # views
    # the command line (cli/: the group, _api, _data, _output, _messages, one module per group of
    # commands); the package's front door (re-exports)
    "cli": 8, "__main__": 9, "": 9,
}

#: The upward imports allowed, each inside a function (lazy) and each a view hook: a
#: result's or an analysis' view that lives in report/ (views live only there) and is
#: reached from the object users hold.  (importing module, imported module): why.
VIEW_HOOKS = {
    ("_results", "report.tables"): "every result's Jupyter view (_HtmlView._repr_html_)",
    ("diagnostics", "report.figures"): "the documented diagnostics.plot_* aliases",
    ("local", "report.figures"): "the documented local.plot_* aliases",
    ("validity", "report.figures"): "the documented validity.plot_residual_pca alias",
    ("validity", "report.tables"): "MTMM.table() and MTMM._repr_html_, the MTMM table view",
    ("wmt", "report.tables"): "TaskResults.table(), the WMT table view",
    ("bench", "report"): "BenchResult.report_section() and .report(), the bench's HTML view",
}

#: Public names that moved up a layer and stay importable where users import them today
#: (a lazy module ``__getattr__``): (importing module, imported module): why.
KEPT_NAMES = {
    ("data", "textmetrics"): "metaeval.data.read_transcripts (documented there) scores texts, "
                             "so it lives in textmetrics",
}


def _module_name(path: pathlib.Path) -> str:
    """Dotted name below ``metaeval`` (``""`` for the package itself)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(name: str) -> int | None:
    """The declared layer of a module (dotted name below ``metaeval``), by longest prefix."""
    parts = name.split(".") if name else [""]
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in LAYERS:
            return LAYERS[key]
    return None


def imports(name: str, source: str, *, is_package: bool = False):
    """``(target, imported name or None, line, lazy)`` for every import of a metaeval module
    in ``source`` (module ``name`` below ``metaeval``), at any depth.  ``from X import y``
    where ``y`` is a submodule yields ``X.y``."""
    tree = ast.parse(source)
    lazy = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lazy |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    pkg = ["metaeval", *(name.split(".") if name else [])]
    if not is_package:
        pkg = pkg[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod != "metaeval" and not mod.startswith("metaeval."):
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                is_mod = (SRC.parent / sub.replace(".", "/")).with_suffix(".py").exists() or (
                    SRC.parent / sub.replace(".", "/") / "__init__.py").exists()
                target = sub if is_mod else mod
                yield target.removeprefix("metaeval").lstrip("."), (None if is_mod else a.name), \
                    node.lineno, id(node) in lazy
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "metaeval" or a.name.startswith("metaeval."):
                    yield a.name.removeprefix("metaeval").lstrip("."), None, node.lineno, \
                        id(node) in lazy


_SUBPACKAGES = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}


def _allowed(table, name, target):
    """Is the (importer, imported) pair declared in ``table`` (the importer exactly)?"""
    return any(name == a and (target == b or target.startswith(b + ".")) for a, b in table)


def layer_violations(name: str, source: str, *, is_package: bool = False) -> list[str]:
    """Upward imports and private names crossing into a subpackage, in one module."""
    bad = []
    mine = layer_of(name)
    for target, imported, line, lazy in imports(name, source, is_package=is_package):
        theirs = layer_of(target)
        if theirs is None:
            bad.append(f"{name}:{line} imports {target or 'metaeval'}, which has no layer")
        elif theirs > mine and not (lazy and (_allowed(VIEW_HOOKS, name, target)
                                              or _allowed(KEPT_NAMES, name, target))):
            bad.append(f"{name}:{line} imports {target} (layer {theirs}) from layer {mine}")
        # a private name crossing into a subpackage the importer is not in
        parts = target.split(".") if target else []
        if parts and parts[0] in _SUBPACKAGES and name.split(".")[0] != parts[0]:
            below = parts[1:] + ([imported] if imported else [])
            private = [p for p in below if p.startswith("_") and not p.startswith("__")]
            if private:
                bad.append(f"{name}:{line} enters {parts[0]}/ through the private name "
                           f"{private[0]} ({'.'.join(['metaeval', *parts])})")
    return bad


def test_every_module_has_a_layer_and_no_import_runs_up_or_enters_a_package_privately():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        if layer_of(name) is None:
            bad.append(f"{name}: no layer in LAYERS (declare it)")
            continue
        bad += layer_violations(name, path.read_text(encoding="utf-8"),
                                is_package=path.name == "__init__.py")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "name, source, n",
    [
        # a planted upward lazy import: the engine reaching for an analysis inside a function
        ("stats.levels", "def f():\n    from ..correlation import correlate\n", 1),
        ("stats.levels", "def f():\n    import metaeval.report.tables\n", 1),
        ("data._io", "def f():\n    from metaeval.textmetrics import score\n", 1),
        ("_vocab", "from .stats.coefficients import get_coefficient\n", 1),
        # a view hook is allowed only where it is declared, and only lazily
        ("_results", "def f():\n    from .report.tables import result_html\n", 0),
        ("_results", "from .report.tables import result_html\n", 1),
        ("compare", "def f():\n    from .report.tables import result_html\n", 1),
        # private names crossing into a subpackage, however spelled
        ("compare", "from .data._accept import accepts_frames\n", 1),
        ("compare", "from .data import _sysscores\n", 1),
        ("compare", "def f():\n    from .data._io import decode\n", 1),
        ("compare", "from .stats._kernels import C\n", 1),
        # within one subpackage, or down through public names: fine
        ("data.sysscores", "from ._io import decode\n", 0),
        ("compare", "from .data import accepts_frames\nfrom .stats import levels\n", 0),
        ("wmt", "from .correlation import correlate\n", 0),  # sideways, public
        ("data._io", "from metaeval import _choices\n", 0),  # the root's shared modules
    ],
)
def test_the_layer_check_sees_every_spelling(name, source, n):
    assert len(layer_violations(name, source)) == n, layer_violations(name, source)


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


# The stats modules of issue 25 item 1's rooms, and those that gained a function there.
ROOM_STATS = ("agreement", "icc", "prophecy", "ranknormal", "prefagree", "logistic", "bradley_terry",
              "pairacc", "cfafit", "localacc", "metameasures", "spa", "alpha", "generative", "replicates")


@pytest.mark.parametrize("name", ROOM_STATS)
def test_room_stats_modules_list_their_public_names(name):
    """spa.zscore_flat and alpha.feldt_interval were left out of their module's __all__ and the
    new stats modules had none: each lists every public top-level function, class and constant."""
    tree = ast.parse((SRC / "stats" / f"{name}.py").read_text(encoding="utf-8"))
    public, listed = set(), None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            public.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name) and t.id == "__all__":
                    listed = ast.literal_eval(node.value)
                elif isinstance(t, ast.Name) and t.id.isupper() and not t.id.startswith("_"):
                    public.add(t.id)
    assert listed is not None, f"stats/{name}.py has no __all__"
    assert public - set(listed) == set(), f"stats/{name}.py: public names missing from __all__"


#: The topic modules: each holds analyses ``f(dataset) -> Result`` and their results.
TOPICS = ANALYSIS + ("bench", "spans")
#: Public classes of topic modules that are not results, each the analysis' own parameter
#: object (what a caller builds to say what to run), with why it stays beside its analysis.
PARAMETER_TYPES = {
    ("wmt", "Task"): "one WMT task (data key, level, method, clusters): run_tasks' argument",
    ("bench", "Command"): "the metric to benchmark, as a shell command: bench's first argument",
    ("bench", "ScoresFile"): "the metric to benchmark, as scores computed elsewhere: bench's first argument",
    ("bench", "BenchResult"): "bench's result, with a view of its own (report_section, report)",
}


def _public_classes(module):
    tree = ast.parse((SRC / f"{module}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            yield node.name, bases


def topic_types(module):
    """Public classes of a topic module that are neither results (a subclass of the result
    base) nor a declared parameter object: a data type, which belongs in data/."""
    results = {"_Result", "_Collection", "_Table"}
    return [name for name, bases in _public_classes(module)
            if not (bases & results) and (module, name) not in PARAMETER_TYPES]


@pytest.mark.parametrize("module", TOPICS)
def test_topic_modules_hold_no_data_type(module):
    """Issue 25.1: input types live in data/ (PreferenceData, LocalPairs), not beside the analyses."""
    assert topic_types(module) == []


def test_the_data_type_check_sees_an_input_type(tmp_path, monkeypatch):
    """A planted input type in a topic module fails the check (LocalPairs where it was)."""
    src = tmp_path / "src"
    (src).mkdir()
    (src / "local.py").write_text("class LocalPairs(_HtmlView):\n    pass\n"
                                  "class LocalAccuracy(_Table):\n    pass\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", src)
    assert topic_types("local") == ["LocalPairs"]
