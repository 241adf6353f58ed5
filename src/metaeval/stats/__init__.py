"""The statistics engine (private): batched coefficient kernels, grouping
levels, resampling and the tests built from them.  The public API is in
:mod:`metaeval.correlation` and :mod:`metaeval.compare`.

Importing it loads no numba: the modules that define numba kernels
(``_kernels``, ``wtau``) call :func:`._jit.setup_cache` before decorating
them (a writable numba cache for read-only installs), so a command whose work
needs no kernel does not pay for numba (issue 26.2).
"""

from ._jit import kernels_compiled  # noqa: E402,F401  (for the report's estimate: is a compile due?)
