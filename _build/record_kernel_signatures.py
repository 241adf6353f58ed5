"""Add the kernel signatures a metaeval command compiles to the shipped cache's list.

usage: PYTHONPATH=src python _build/record_kernel_signatures.py <metaeval arguments>
e.g.   PYTHONPATH=src python _build/record_kernel_signatures.py compare summeval --human coherence \\
           --metrics ROUGE.1,ROUGE.2 --level global --method kendall_b --test boot-both

Runs the command in this process (its output discarded) and adds every kernel signature compiled
or loaded meanwhile to src/metaeval/stats/_kernel_signatures.txt, which the build
(python -m metaeval.stats._jit build, run by pip through _build/metaeval_build.py) compiles for the
portable CPU.  Run it when a kernel gains an argument or a new kernel is called from Python;
tests/test_shipped_cache.py checks that every listed line names a kernel with that many arguments.
"""

import contextlib
import io
import sys

from metaeval.cli import main
from metaeval.stats import _jit

if __name__ == "__main__":
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(sys.argv[1:])
        except SystemExit:
            pass
    n = _jit.add_signatures(_jit.compiled_signatures())
    print(f"{n} new signature(s) in {_jit.SIGNATURES_FILE}")
