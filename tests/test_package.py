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


def test_closed_pipe_ends_quietly():
    # Regression (CLI sweep): `metaeval ... | head` exited 2 with
    # "metaeval: error: [Errno 32] Broken pipe" once the reader had gone.
    proc = subprocess.Popen(
        [sys.executable, "-m", "metaeval", "correlate", "summeval", "--human", "coherence", "--ci", "none",
         "--pvalue", "none", "--level", "system,input,group-by-system,global",
         "--method", "pearson,spearman,kendall_b"],  # a rich table: rich's write raised BrokenPipeError
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away before the table is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert "error" not in err and "Traceback" not in err, err


def test_every_result_class_of_a_public_function_is_exported():
    # Issue 13: result classes returned by public functions were not exported (e.g.
    # metaeval.stability returned a Stabilities that `metaeval` did not name).
    import inspect
    import typing

    import metaeval

    missing = []
    for name in metaeval.__all__:
        obj = getattr(metaeval, name)
        func = getattr(obj, "__wrapped__", obj)
        if not inspect.isfunction(func):
            continue
        ret = typing.get_type_hints(func).get("return")
        if isinstance(ret, type) and ret.__module__.startswith("metaeval"):
            if ret.__name__ not in metaeval.__all__ or getattr(metaeval, ret.__name__) is not ret:
                missing.append(f"{name} -> {ret.__name__}")
    assert not missing, missing
