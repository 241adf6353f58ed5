"""Numba kernels of the statistics engine (private): every family compiled.

The kernels live in one module per family, each beside its NumPy twins
(:data:`metaeval.stats._jit.KERNEL_MODULES`):

=================  ==========================================================
``_kbase``         pool split, small sorts, inversion count (shared helpers)
``_kendall``       Kendall sufficient statistics (``kendall_stats``,
                   ``kendall_stats_ranked_y``)
``_pearson``       ``pearson_rows``, ``average_ranks``
``_tiecal``        tie calibration (``tie_calibration``,
                   ``tie_calibration_best``)
``_exactsum``      correctly rounded means (``exact_means``,
                   ``exact_col_means``) and their exact accumulators
``_swap``          Perm-Both halves (``swap_group_stats``, ``swap_pair_values``,
                   ``swap_group_means``)
``_boot``          bootstrap replicates as cell weights (``boot_kendall_stats``,
                   ``boot_pearson``, ``boot_row_means``)
=================  ==========================================================

Importing this module compiles (or loads from numba's cache) every family
and holds their numba dispatchers and constants under the names they have in
their family, so ``metaeval.stats._kernels.kendall_stats`` is numba's
dispatcher; :mod:`metaeval.stats._numpy_kernels` holds the twins under the
same names.  :func:`metaeval.stats.coefficients.kernels` chooses between the
two.
"""

from __future__ import annotations

import types

from . import _jit
from ._columns import KX, KY, N_STATS, NVALID, OFF_GRID, TX, TXY, TY, C, D  # noqa: F401

# Every family's dispatchers, helpers and constants (names are unique across
# families; tests/test_shipped_cache.py lists them through this namespace).
globals().update(_jit.compiled_kernels())

#: The same namespace with every parallel kernel replaced by its serial build
#: (same results; for calls too small to pay for a parallel region:
#: :func:`metaeval.stats.coefficients.kernels`).
SERIAL = types.SimpleNamespace(**{
    k: v for k, v in globals().items() if not k.startswith("__") and k != "SERIAL"
})
for _name in list(vars(SERIAL)):
    if _name.endswith(_jit.SERIAL_SUFFIX):
        setattr(SERIAL, _name[: -len(_jit.SERIAL_SUFFIX)], getattr(SERIAL, _name))
del _name
