"""Columns of the Kendall sufficient-statistics array (``kendall_stats``; the
names are in :mod:`metaeval.stats._kernels`).  A module of its own, importing
nothing, so that the coefficient registry and the grouping levels can name
the columns without loading numba (issue 26.2)."""

C, D, TX, TY, TXY, NVALID, KX, KY = range(8)
N_STATS = 8

#: Code of a value that is not on the rational grid of :mod:`metaeval.stats.exact` (the
#: smallest int64; the kernels and the NumPy twins share it without loading numba).
OFF_GRID = -(2**63)
