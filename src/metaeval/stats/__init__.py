"""The statistics engine (private): batched coefficient kernels, grouping
levels, resampling and the tests built from them.  The public API is in
:mod:`metaeval.correlation` and :mod:`metaeval.compare`."""

from ._jit import setup_cache as _setup_cache

_setup_cache()  # before any kernel is decorated: a writable numba cache (read-only installs)
