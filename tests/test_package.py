"""The package's front door: lazy imports keep every public name what it is."""

import subprocess
import sys


def test_compare_stays_the_function_after_its_module_is_imported():
    # Regression: with lazy imports, the first `import metaeval.compare` (done by measures,
    # the report, ...) rebound `metaeval.compare` to the submodule: "'module' object is not
    # callable". A fresh interpreter, since this process has imported everything already.
    code = ("import metaeval, metaeval.measures; assert callable(metaeval.compare), metaeval.compare; "
            "from metaeval.compare import TESTS; assert 'perm-both' in TESTS")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_python_dash_m_metaeval():
    out = subprocess.run([sys.executable, "-m", "metaeval", "--version"], check=True, capture_output=True,
                         text=True).stdout
    assert out.startswith("metaeval, version ")
