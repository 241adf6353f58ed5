"""NumPy twins of the numba kernels, under the kernels' names (private).

Each twin lives beside its kernel in the family's module (``*_numpy``; see
:mod:`metaeval.stats._kernels` for the map).  Same signatures and results;
used when numba is disabled (``METAEVAL_DISABLE_NUMBA=1``), on small batches
(:func:`metaeval.stats.inference.use_kernels`) and as the fast path's
cross-check in tests.  They favour clarity over speed (they vectorise over
pairs, chunking the batch axis to bound memory).  Importing them imports no
numba.
"""

from __future__ import annotations

from ._boot import boot_kendall_stats_numpy as boot_kendall_stats
from ._boot import boot_pearson_numpy as boot_pearson
from ._boot import boot_row_means_numpy as boot_row_means
from ._columns import KX, KY, N_STATS, NVALID, OFF_GRID, TX, TXY, TY, C, D  # noqa: F401
from ._exactsum import exact_col_means_numpy as exact_col_means
from ._exactsum import exact_means_numpy as exact_means
from ._kendall import kendall_stats_numpy as kendall_stats
from ._kendall import kendall_stats_ranked_y_numpy as kendall_stats_ranked_y
from ._pearson import average_ranks_numpy as average_ranks
from ._pearson import pearson_rows_numpy as pearson_rows
from ._swap import swap_group_means_numpy as swap_group_means
from ._swap import swap_group_stats_numpy as swap_group_stats
from ._swap import swap_pair_values_numpy as swap_pair_values
from ._tiecal import TIE_TOL  # noqa: F401
from ._tiecal import tie_calibration_best_numpy as tie_calibration_best
from ._tiecal import tie_calibration_numpy as tie_calibration

__all__ = [
    "average_ranks",
    "boot_kendall_stats",
    "boot_pearson",
    "boot_row_means",
    "exact_col_means",
    "exact_means",
    "kendall_stats",
    "kendall_stats_ranked_y",
    "pearson_rows",
    "swap_group_means",
    "swap_group_stats",
    "swap_pair_values",
    "tie_calibration",
    "tie_calibration_best",
]
