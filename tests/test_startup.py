"""Start-up cost (issue 15.3): `import metaeval` and `metaeval --help` (and
every subcommand's --help) import none of the heavy libraries; the public
names are still reachable from the package (imported on first use).

Each check runs in a fresh interpreter, since this test session has already
imported everything."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("numba", "scipy.stats", "pandas", "matplotlib", "torch", "transformers", "sklearn")


def _python(code):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_metaeval_imports_nothing_heavy():
    got = _python(
        "import sys, metaeval\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert got.strip() == "[]"


def test_help_imports_no_numba_scipy_stats_matplotlib():
    """Regression (15.3): `metaeval --help` imported pandas, scipy.stats and
    numba (through `import metaeval`) and took seconds."""
    code = f"""
import io, json, sys, contextlib
from metaeval.cli import main
names = sorted(main.commands)
seen = {{}}
for args in [["--help"]] + [[c, "--help"] for c in names]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main(args)
        except SystemExit as e:
            assert e.code == 0, (args, e.code)
    assert "Usage:" in buf.getvalue(), args
    seen[" ".join(args)] = sorted(m for m in {HEAVY!r} if m in sys.modules)
print(json.dumps(seen))
"""
    seen = json.loads(_python(code).strip().splitlines()[-1])
    assert len(seen) > 10  # the group and every subcommand
    assert seen == {k: [] for k in seen}


def test_public_names_resolve_lazily():
    code = """
import sys, metaeval
missing = [n for n in metaeval.__all__ if not hasattr(metaeval, n)]
from metaeval.correlation import correlate
from metaeval.stats.levels import LEVELS
from metaeval.stats.coefficients import METHODS
assert metaeval.correlate is correlate and metaeval.LEVELS is LEVELS and metaeval.METHODS is METHODS
assert set(metaeval.__all__) <= set(dir(metaeval))
assert metaeval.textmetrics.__name__ == "metaeval.textmetrics"
try:
    metaeval.no_such_name
except AttributeError as e:
    assert "no_such_name" in str(e)
else:
    raise SystemExit("no AttributeError")
print(missing)
"""
    assert _python(code).strip().splitlines()[-1] == "[]"


def test_from_import_of_every_public_name():
    import metaeval

    for name in metaeval.__all__:
        exec(f"from metaeval import {name}", {})
