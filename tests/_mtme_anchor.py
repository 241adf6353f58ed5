"""Locate mt-metrics-eval (WMT's toolkit) for tests that use it as an oracle.

mt-metrics-eval (github.com/google-research/mt-metrics-eval, commit 68a481a)
is kept in ``../shared/anchors/mt-metrics-eval`` beside the checkout (located
by tests/_shared.py: ``$METAEVAL_SHARED``, ../shared, or one level further up
for a worktree in ``wt/<name>``).  Tests that need it skip,
saying why, when it is absent.  Only stats.py and pce.py are imported
(data.py and tasks.py import apache_beam).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from _shared import SHARED  # noqa: E402

CANDIDATES = [SHARED / "anchors" / "mt-metrics-eval"]


def anchor_dir() -> Path | None:
    for c in CANDIDATES:
        if (c / "mt_metrics_eval" / "stats.py").is_file():
            return c
    return None


def mtme(module: str = "stats"):
    """Import ``mt_metrics_eval.<module>`` or skip the test."""
    d = anchor_dir()
    if d is None:
        pytest.skip(f"mt-metrics-eval oracle not found in {', '.join(map(str, CANDIDATES))} "
                    "(../shared beside the checkout is absent; or set METAEVAL_SHARED)")
    if str(d) not in sys.path:
        sys.path.insert(0, str(d))
    import importlib

    return importlib.import_module(f"mt_metrics_eval.{module}")


def mtme_function(module: str, name: str, namespace: dict | None = None):
    """One top-level function of ``mt_metrics_eval/<module>.py`` run as the oracle,
    without importing the module (data.py and tasks.py import apache_beam).

    The function's source is taken from the file with :mod:`ast` and executed
    in ``namespace`` (default: ``np`` = numpy); it is not copied into the
    project.  Skips when the anchor is absent.
    """
    import ast

    import numpy as np

    d = anchor_dir()
    if d is None:
        pytest.skip(f"mt-metrics-eval oracle not found in {', '.join(map(str, CANDIDATES))} "
                    "(../shared beside the checkout is absent; or set METAEVAL_SHARED)")
    path = d / "mt_metrics_eval" / f"{module}.py"
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            ns = {"np": np} if namespace is None else dict(namespace)
            exec(compile(ast.Module([node], []), str(path), "exec"), ns)
            return ns[name]
    raise LookupError(f"{name} not found in {path}")
