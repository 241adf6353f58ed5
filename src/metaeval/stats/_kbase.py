"""Building blocks shared by the numba kernel families (private).

The pool split of the parallel kernels (``_n_workers``, ``_chunk``), small
sorts and tie counts of sorted runs, and the inversion count of Knight's
algorithm.  The families are :mod:`._kendall`, :mod:`._pearson`,
:mod:`._tiecal`, :mod:`._swap`, :mod:`._boot` and :mod:`._exactsum`; each
holds its numba kernels (declared with :func:`._jit.kernel`, compiled on first
use) and, below them, their NumPy twins.

Conventions
-----------
``x`` is the metric and ``y`` the human score.  Batched inputs have shape
``(B, G, n)``: ``B`` resamples, ``G`` groups, ``n`` items per group.  A pair
of items ``(i, j)`` is used only if both ``x`` and ``y`` are finite at ``i``
and at ``j`` (pairwise deletion).  Every kernel takes plain arrays and returns
plain arrays; random numbers are drawn outside.
"""

from __future__ import annotations

from ._jit import kernel

# The size of numba's thread pool (NUMBA_NUM_THREADS), set when the family is
# compiled (_jit.compile_family); the compiled kernels freeze it (see _n_workers).
_POOL = 1


@kernel
def _n_distinct_sorted(a):
    if a.size == 0:
        return 0
    k = 1
    for i in range(1, a.size):
        if a[i] != a[i - 1]:
            k += 1
    return k


@kernel
def _tie_pairs_sorted(a):
    """Number of tied pairs in a sorted 1-D array."""
    s = 0
    c = 1
    for i in range(1, a.size):
        if a[i] == a[i - 1]:
            c += 1
        else:
            s += c * (c - 1) // 2
            c = 1
    return s + c * (c - 1) // 2


@kernel
def _count_inversions(y, tmp):
    """Strict inversions of ``y`` (pairs i < j with y[i] > y[j]); sorts ``y``."""
    n = y.size
    inv = 0
    w = 1
    while w < n:
        lo = 0
        while lo < n - w:
            mid = lo + w
            hi = min(lo + 2 * w, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if y[j] < y[i]:
                    tmp[k] = y[j]
                    j += 1
                    inv += mid - i
                else:
                    tmp[k] = y[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = y[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = y[j]
                j += 1
                k += 1
            for t in range(lo, hi):
                y[t] = tmp[t]
            lo += 2 * w
        w *= 2
    return inv


@kernel
def _n_workers(N):
    """Workers of a parallel kernel over ``N`` tasks: one per thread, at most
    ``N``, at least 1.  Worker ``w`` takes tasks ``_chunk(N, T, w)`` (static
    contiguous chunks, as numba's own prange schedule) and works in row ``w``
    of a workspace allocated before the parallel region, so no prange body
    allocates (issue 14.1: a failed allocation inside a parallel region is
    not raised and left uninitialised memory in the result).

    The thread count is the size of numba's pool (``NUMBA_NUM_THREADS``),
    frozen at compile time: ``nb.get_num_threads()`` would stop the kernels
    from being cached.  The kernels are cached in a folder per pool size
    (``_jit.begin_pool_cache``): a cache compiled for another pool would
    split the tasks for that pool (never changing a result or a memory
    access, but leaving cores idle)."""
    return max(1, min(_POOL, N))


@kernel
def _chunk(N, T, w):
    return (w * N) // T, ((w + 1) * N) // T


@kernel
def _lexsort2(a, b, ta, tb, m):
    """Sort ``a[:m]`` ascending, ties by ``b[:m]``, moving ``b`` along
    (stable; insertion sort on runs of 16, then bottom-up merges through
    ``ta``, ``tb`` (length >= m)).  Allocates nothing."""
    run = 16
    for lo in range(0, m, run):
        hi = min(lo + run, m)
        for i in range(lo + 1, hi):
            va = a[i]
            vb = b[i]
            j = i - 1
            while j >= lo and (a[j] > va or (a[j] == va and b[j] > vb)):
                a[j + 1] = a[j]
                b[j + 1] = b[j]
                j -= 1
            a[j + 1] = va
            b[j + 1] = vb
    w = run
    while w < m:
        lo = 0
        while lo < m - w:
            mid = lo + w
            hi = min(lo + 2 * w, m)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if a[j] < a[i] or (a[j] == a[i] and b[j] < b[i]):
                    ta[k] = a[j]
                    tb[k] = b[j]
                    j += 1
                else:
                    ta[k] = a[i]
                    tb[k] = b[i]
                    i += 1
                k += 1
            while i < mid:
                ta[k] = a[i]
                tb[k] = b[i]
                i += 1
                k += 1
            while j < hi:
                ta[k] = a[j]
                tb[k] = b[j]
                j += 1
                k += 1
            for t in range(lo, hi):
                a[t] = ta[t]
                b[t] = tb[t]
            lo += 2 * w
        w *= 2
