"""Columns of the Kendall sufficient-statistics array (``kendall_stats``; the
names are in :mod:`metaeval.stats._kernels`).  A module of its own, importing
nothing, so that the coefficient registry and the grouping levels can name
the columns without loading numba (issue 26.2)."""

C, D, TX, TY, TXY, NVALID, KX, KY = range(8)
N_STATS = 8
