"""Random streams and resampling index/mask generators.

Every stochastic function of metaeval takes ``rng`` (anything
:func:`numpy.random.default_rng` accepts, or ``None`` for fresh entropy).
It is turned into one :class:`numpy.random.SeedSequence`, whose entropy goes
into the result's signature (so even ``rng=None`` runs are reproducible), and
independent work units (metrics, metric pairs, blocks of resamples) get
child streams spawned from it by *unit index*, never by worker, so results do
not depend on the number of workers.

All index and mask matrices are drawn in one step per unit (so a seed gives
the same draws however the work is split);
the (B, N, M) cell arrays built from them are processed in chunks of
resamples sized from a memory budget (:func:`memory_budget`,
:func:`resample_chunks`), so peak memory does not grow with ``n_resamples``.
Draws never depend on the chunk size: numpy's ``Generator`` gives the same
numbers whether an array is drawn at once or in consecutive pieces (bounded
integers and doubles draw element by element; random bytes in pieces of a
multiple of 4 bytes), which the tests check.

Duplicated originals
--------------------
A bootstrap replicate that draws the same system (input, cell) twice creates
pairs of identical items.  For the pair statistics (``acc_23``,
``kendall_23``, ``pairwise_accuracy``, ``acc_eq``) such a pair is tied in both
the metric and the human score and would count as a correctly predicted tie,
biasing the bootstrap upward.  :func:`duplicate_pairs` counts them: with
multiplicities c_k of the valid originals k in a group there are
sum_k C(c_k, 2) of them, which the level code subtracts from the tied-both
count Txy and from the number of pairs (see :mod:`metaeval.stats.levels`).
"""

from __future__ import annotations

import os
import re
import zlib

import numpy as np

from ..errors import ParameterError

BOOTSTRAP_UNITS = ("systems", "inputs", "both")
MEMORY_BUDGET_ENV = "METAEVAL_MEMORY_BUDGET"
DEFAULT_MEMORY_BUDGET = 1 << 30  # 1 GiB
# Bytes per resampled cell that a chunk may use: the metric and human cell
# arrays, their arranged copies, ranks and the kernels' work arrays (about a
# dozen float64 values per cell).
BYTES_PER_CELL = 96
_BYTE_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}
PERMUTATION_SCHEMES = ("both", "systems", "inputs", "both-rowcol")


def seed_sequence(rng) -> tuple[np.random.SeedSequence, str]:
    """A SeedSequence for ``rng`` and the string recorded in signatures.

    ``None`` draws fresh entropy (recorded); an int, a sequence of ints or a
    SeedSequence are used as given; a Generator or BitGenerator contributes a
    128-bit draw (so the same generator state gives the same numbers).
    """
    if isinstance(rng, np.random.SeedSequence):
        ss = rng
    elif rng is None:
        ss = np.random.SeedSequence()
    elif isinstance(rng, (np.random.Generator, np.random.BitGenerator)):
        gen = rng if isinstance(rng, np.random.Generator) else np.random.Generator(rng)
        ss = np.random.SeedSequence([int(v) for v in gen.integers(0, 2**32, size=4)])
    else:
        try:
            ss = np.random.SeedSequence(rng)
        except (TypeError, ValueError) as exc:
            raise ParameterError(
                f"rng={rng!r} is not usable as a seed: pass None, a non-negative int, "
                "a sequence of ints, a SeedSequence or a numpy Generator"
            ) from exc
    ent = ss.entropy
    if isinstance(ent, (list, tuple, np.ndarray)):
        ent = "-".join(str(int(v)) for v in ent)
    tag = str(ent) if not ss.spawn_key else f"{ent}/{'.'.join(map(str, ss.spawn_key))}"
    return ss, tag


def named_generator(ss: np.random.SeedSequence, *names: str) -> np.random.Generator:
    """The generator of the work unit named ``names``: a function of the seed
    and the names only (a CRC-32 of the joined names extends the spawn key),
    so a unit's numbers do not depend on which other units run or where."""
    key = zlib.crc32("\x1f".join(names).encode())
    return np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (key,)))


def check_n_resamples(n_resamples) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ParameterError(f"n_resamples={n_resamples!r} must be a positive int")
    if n_resamples < 1:
        raise ParameterError(f"n_resamples={n_resamples} must be >= 1")
    return int(n_resamples)


def bootstrap_indices(gen, n_resamples, n_systems, n_inputs, unit):
    """Row and column index matrices for a bootstrap over ``unit``.

    Returns ``(rows, cols)`` of shapes (B, N) and (B, M); the axis that is not
    resampled gets the identity.
    """
    if unit not in BOOTSTRAP_UNITS:
        raise ParameterError(f"bootstrap unit {unit!r}; choose one of {', '.join(BOOTSTRAP_UNITS)}")
    B = n_resamples
    rows = np.broadcast_to(np.arange(n_systems), (B, n_systems))
    cols = np.broadcast_to(np.arange(n_inputs), (B, n_inputs))
    if unit in ("systems", "both"):
        rows = gen.integers(0, n_systems, size=(B, n_systems))
    if unit in ("inputs", "both"):
        cols = gen.integers(0, n_inputs, size=(B, n_inputs))
    return rows, cols


def take_cells(a, rows, cols):
    """``a`` (N, M) resampled to (B, N, M) with row and column indices."""
    return a[rows[:, :, None], cols[:, None, :]]


def fair_bytes(gen, size):
    """``size`` independent fair coins packed 8 per byte (``numpy.unpackbits``
    order): uniform random bytes, so each coin is an exact Bernoulli(1/2)."""
    return gen.integers(0, 256, size=(int(size) + 7) // 8, dtype=np.uint8)


def _fair_bits(gen, shape):
    """Independent fair coins (exact Bernoulli(1/2)) from uniform random bytes."""
    size = int(np.prod(shape))
    return np.unpackbits(fair_bytes(gen, size))[:size].reshape(shape).astype(bool)


def swap_masks(gen, n_resamples, n_systems, n_inputs, scheme):
    """Boolean swap masks (B, N, M) for a paired permutation test.

    ``True`` means the two metrics' values are exchanged in that cell.

    ``both``
        Perm-Both of Deutsch et al. (2021, section 4.2): an independent fair
        coin per (system, input) cell (SacreROUGE ``permute_both``).
    ``systems``
        Perm-Systems: one coin per system, swapping whole rows.
    ``inputs``
        Perm-Inputs: one coin per input, swapping whole columns.
    ``both-rowcol``
        nlpstats' ``"both"``: swap rows, then columns, so cell (i, j) is
        swapped iff row_i XOR col_j.
    """
    B, N, M = n_resamples, n_systems, n_inputs
    if scheme == "both":
        return _fair_bits(gen, (B, N, M))
    if scheme == "systems":
        return np.broadcast_to(gen.random((B, N, 1)) < 0.5, (B, N, M))
    if scheme == "inputs":
        return np.broadcast_to(gen.random((B, 1, M)) < 0.5, (B, N, M))
    if scheme == "both-rowcol":
        r = gen.random((B, N, 1)) < 0.5
        c = gen.random((B, 1, M)) < 0.5
        return r ^ c
    raise ParameterError(
        f"permutation scheme {scheme!r}; choose one of {', '.join(PERMUTATION_SCHEMES)}"
    )


def swap_mask_chunks(gen, n_resamples, n_systems, n_inputs, scheme, budget=None):
    """:func:`swap_masks` in chunks of resamples: yields ``(slice, mask)``
    with the chunk's (b, N, M) boolean masks, equal to the corresponding
    rows of one :func:`swap_masks` draw whatever the chunk size."""
    B, N, M = n_resamples, n_systems, n_inputs
    chunks = resample_chunks(B, N * M, budget)
    if scheme == "both":
        coins = CoinStream(gen, B, N * M)
        for sl in chunks:
            yield sl, coins.bits(sl).reshape(-1, N, M)
        return
    if scheme not in PERMUTATION_SCHEMES:
        raise ParameterError(
            f"permutation scheme {scheme!r}; choose one of {', '.join(PERMUTATION_SCHEMES)}"
        )
    # one coin per row and/or column: drawn in full (B x (N + M) values)
    r = gen.random((B, N, 1)) < 0.5 if scheme in ("systems", "both-rowcol") else None
    c = gen.random((B, 1, M)) < 0.5 if scheme in ("inputs", "both-rowcol") else None
    for sl in chunks:
        if r is not None and c is not None:
            w = r[sl] ^ c[sl]
        else:
            w = r[sl] if r is not None else c[sl]
        yield sl, np.broadcast_to(w, (sl.stop - sl.start, N, M))


def shuffle_within_groups(gen, xg, yg, n_resamples):
    """Permute the metric among each group's valid pairs, ``n_resamples`` times.

    ``xg``, ``yg``: (G, n) arranged scores.  Returns (B, G, n) metric and
    human arrays in which each group's valid pairs are packed to the left and
    the metric values are randomly permuted among them (a null of no
    association within groups); invalid positions are NaN.  Equal to
    consecutive :meth:`WithinGroupShuffle.draw` calls of any sizes summing
    to ``n_resamples``.
    """
    return WithinGroupShuffle(xg, yg).draw(gen, n_resamples)


class WithinGroupShuffle:
    """The groups of :func:`shuffle_within_groups`, packed once; each
    :meth:`draw` permutes a chunk of resamples."""

    def __init__(self, xg, yg):
        G, n = xg.shape
        valid = np.isfinite(xg) & np.isfinite(yg)
        # pack valid pairs left, keeping their order
        order = np.argsort(~valid, axis=-1, kind="stable")
        self.xs = np.take_along_axis(np.where(valid, xg, np.nan), order, -1)
        self.ys = np.take_along_axis(np.where(valid, yg, np.nan), order, -1)
        self.nv = valid.sum(-1)
        self.shape = (G, n)

    def draw(self, gen, n_resamples):
        G, n = self.shape
        keys = gen.random((n_resamples, G, n))
        keys = np.where(np.arange(n) < self.nv[:, None], keys, 1.0 + np.arange(n))
        perm = np.argsort(keys, axis=-1)
        return np.take_along_axis(np.broadcast_to(self.xs, perm.shape), perm, -1), np.broadcast_to(
            self.ys, perm.shape
        )


def bootstrap_chunks(gen, n_resamples, n_systems, n_inputs, unit, budget=None,
                     bytes_per_cell=None, block=None):
    """:func:`bootstrap_indices` in chunks of resamples: yields
    ``(slice, rows, cols)`` with the chunk's index matrices.

    The draws equal one :func:`bootstrap_indices` call whatever the chunk
    size: the (B, N) row indices are drawn first (as there), then the column
    indices chunk by chunk (bounded integers are drawn element by element).
    The chunks' cell arrays (``n_systems * n_inputs`` cells per resample,
    ``bytes_per_cell`` bytes each, default :data:`BYTES_PER_CELL`) fit in
    :func:`memory_budget`.

    ``block`` (a slice of ``range(n_resamples)``) yields only those
    resamples, with the same draws: the row indices of all resamples are
    drawn (as always) and the column indices of the resamples before the
    block are drawn and discarded.  A run split into blocks (one task each,
    :func:`metaeval.correlate` on several workers) thus gives the numbers of
    the unsplit run; the slices yielded are absolute.
    """
    if unit not in BOOTSTRAP_UNITS:
        raise ParameterError(f"bootstrap unit {unit!r}; choose one of {', '.join(BOOTSTRAP_UNITS)}")
    B, N, M = n_resamples, n_systems, n_inputs
    lo, hi = (0, B) if block is None else (block.start, block.stop)
    rows_all = None
    if unit in ("systems", "both"):
        rows_all = gen.integers(0, N, size=(B, N))
    if unit in ("inputs", "both"):
        skip_integers(gen, M, lo * M)
    bpc = BYTES_PER_CELL if bytes_per_cell is None else bytes_per_cell
    for sl in resample_chunks(hi - lo, N * M, budget, bytes_per_cell=bpc):
        sl = slice(lo + sl.start, lo + sl.stop)
        b = sl.stop - sl.start
        rows = np.broadcast_to(np.arange(N), (b, N)) if rows_all is None else rows_all[sl]
        if unit in ("inputs", "both"):
            cols = gen.integers(0, M, size=(b, M))
        else:
            cols = np.broadcast_to(np.arange(M), (b, M))
        yield sl, rows, cols


def skip_integers(gen, high, count, piece=1 << 20):
    """Advance ``gen`` past ``count`` draws of ``gen.integers(0, high)``
    (drawn and discarded in pieces of at most ``piece``: bounded integers
    are drawn element by element, so the stream continues as if they had
    been used)."""
    while count > 0:
        k = min(count, piece)
        gen.integers(0, high, size=k)
        count -= k


# --------------------------------------------------------------------------
# memory budget and chunks of resamples


def parse_bytes(value, *, name="memory_budget") -> int:
    """Bytes from an int or a string such as ``"512MB"``, ``"2GiB"``, ``"1e9"``."""
    if isinstance(value, bool):
        raise ParameterError(f"{name}={value!r} must be a number of bytes or a string like '512MB'")
    if isinstance(value, (int, np.integer)):
        n = int(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", str(value))
        unit = m.group(2).lower() if m else None
        if m is None or unit not in _BYTE_UNITS:
            raise ParameterError(
                f"{name}={value!r} is not a size; use bytes or a number with a unit "
                "(B, KB, MB, GB, KiB, MiB, GiB), e.g. '512MB'"
            )
        n = int(float(m.group(1)) * _BYTE_UNITS[unit])
    if n < 1:
        raise ParameterError(f"{name}={value!r} must be positive")
    return n


def memory_budget(budget=None) -> int:
    """The memory budget in bytes for the cell arrays of one resampling loop.

    ``budget`` (bytes or a string like ``"512MB"``) if given, else the
    environment variable ``METAEVAL_MEMORY_BUDGET``, else 1 GiB.  It sets
    how many resamples are processed at once; the numbers never depend on it.
    """
    if budget is not None:
        return parse_bytes(budget)
    env = os.environ.get(MEMORY_BUDGET_ENV, "").strip()
    if env:
        return parse_bytes(env, name=MEMORY_BUDGET_ENV)
    return DEFAULT_MEMORY_BUDGET


def resample_chunks(n_resamples, n_cells, budget=None, *, bytes_per_cell=BYTES_PER_CELL):
    """Consecutive slices of ``range(n_resamples)`` whose resampled cell
    arrays (``n_cells`` cells each, ``bytes_per_cell`` bytes per cell) fit in
    :func:`memory_budget` (at least one resample per chunk)."""
    per = max(1, int(n_cells)) * bytes_per_cell
    size = max(1, int(memory_budget(budget) // per))
    return [slice(b, min(b + size, n_resamples)) for b in range(0, n_resamples, size)]


class CoinStream:
    """The packed Perm-Both coins of ``n_resamples * n_cells`` cells
    (:func:`fair_bytes`), drawn piece by piece as consecutive chunks of
    resamples ask for them: the coins are the same as one
    ``fair_bytes(gen, n_resamples * n_cells)`` draw (bytes are drawn in
    multiples of 8 except the last piece), but only one chunk is held."""

    def __init__(self, gen, n_resamples, n_cells):
        self.gen = gen
        self.n_cells = int(n_cells)
        self.total = (int(n_resamples) * self.n_cells + 7) // 8
        self.drawn = 0  # bytes drawn so far
        self.buf = np.zeros(0, np.uint8)  # bytes [drawn - buf.size, drawn)
        self.next = 0  # next resample expected

    def bits(self, sl: slice) -> np.ndarray:
        """Boolean coins (b1 - b0, n_cells) of resamples ``sl`` (consecutive calls)."""
        b0, b1 = sl.start, sl.stop
        if b0 != self.next:
            raise ValueError("CoinStream chunks must be consecutive")  # pragma: no cover
        self.next = b1
        lo, hi = b0 * self.n_cells, b1 * self.n_cells
        need = (hi + 7) // 8
        self._draw(need)
        start = self.drawn - self.buf.size  # byte index of buf[0]
        byte0 = lo // 8
        bits = np.unpackbits(self.buf[byte0 - start : need - start])
        off = lo - 8 * byte0
        out = bits[off : off + hi - lo].reshape(b1 - b0, self.n_cells).astype(bool)
        self.buf = self.buf[hi // 8 - start :]
        return out

    def packed(self, sl: slice) -> np.ndarray:
        """The coins of resamples ``sl`` packed again from their first bit
        (the layout the Perm-Both kernels take).  A chunk that starts on a
        byte is sliced from the drawn bytes, without unpacking (the bits past
        its last coin are cleared, as ``numpy.packbits`` pads)."""
        lo, hi = sl.start * self.n_cells, sl.stop * self.n_cells
        if lo % 8 or sl.start != self.next:
            return np.packbits(self.bits(sl).ravel())
        self.next = sl.stop
        need = (hi + 7) // 8
        self._draw(need)
        start = self.drawn - self.buf.size
        out = self.buf[lo // 8 - start : need - start].copy()
        if hi % 8 and out.size:
            out[-1] &= np.uint8((0xFF << (8 - hi % 8)) & 0xFF)
        self.buf = self.buf[hi // 8 - start :]
        return out

    def _draw(self, need):
        """Draw bytes up to byte ``need`` (in multiples of 8 but the last)."""
        if need > self.drawn:
            k = need - self.drawn
            if need < self.total:
                k = min(-(-k // 8) * 8, self.total - self.drawn)
            else:
                k = self.total - self.drawn
            self.buf = np.concatenate((self.buf, fair_bytes(self.gen, 8 * k)))
            self.drawn += k


def duplicate_pairs(rows, cols, valid, level):
    """Pairs formed by the same original drawn twice, per replicate and group.

    Parameters
    ----------
    rows, cols : ndarray (B, N), (B, M)
        Bootstrap indices (:func:`bootstrap_indices`).
    valid : ndarray (N, M) of bool
        Original cells where the metric and the human score are present.
    level : str

    Returns
    -------
    ndarray (B, G) of float (exact integers)
        With c_k the multiplicity of original k among a group's items,
        sum_k C(c_k, 2) over the valid originals: systems within an input
        (``input``), inputs within a system (``item``), system means
        (``system``: a system counts when it has a valid resampled cell) and
        cells (``global``: a cell's multiplicity is the product of its row's
        and its column's).
    """
    rows = np.asarray(rows)
    cols = np.asarray(cols)
    B, N = rows.shape
    M = cols.shape[1]
    V = np.asarray(valid, float)
    cr = _multiplicities(rows, N)  # (B, N)
    cc = _multiplicities(cols, M)  # (B, M)
    if level == "input":
        per_col = (cr * (cr - 1) / 2.0) @ V  # (B, M): by original column
        return np.take_along_axis(per_col, cols, axis=1)
    if level == "item":
        per_row = (cc * (cc - 1) / 2.0) @ V.T  # (B, N): by original row
        return np.take_along_axis(per_row, rows, axis=1)
    if level == "system":
        has = (cc @ V.T) > 0  # (B, N): the system has a valid resampled cell
        return ((cr * (cr - 1) / 2.0) * has).sum(-1, keepdims=True)
    if level == "global":
        # sum_ij V_ij p(p - 1)/2 with p = cr_i cc_j
        sq = (((cr * cr) @ V) * (cc * cc)).sum(-1)
        lin = ((cr @ V) * cc).sum(-1)
        return ((sq - lin) / 2.0)[:, None]
    raise ParameterError(f"level={level!r}")  # pragma: no cover - validated


def _multiplicities(idx, n):
    """(B, n) counts of each original in each row of ``idx`` (B, k), as floats."""
    return multiplicities(idx, n).astype(float)


# --------------------------------------------------------------------------
# The draws every analysis shares (issue 25 item 1): each kind written once, here.  Each
# function makes exactly the generator calls its callers made before, so their numbers are
# unchanged (tests/test_bit_identical.py).


def child_seed(ss: np.random.SeedSequence, *names: str) -> np.random.SeedSequence:
    """A SeedSequence for the work unit named ``names``, seeded by four 32-bit words of
    :func:`named_generator` (``ss``, ``names``): a task of a task set (``wmt.run_tasks``) hands
    it to an analysis as its ``rng``, so the task's numbers depend on its name only."""
    return np.random.SeedSequence(named_generator(ss, *names).integers(0, 2**32, size=4).tolist())


def resample_indices(gen, n_resamples, n):
    """(B, n) indices drawn uniformly with replacement from 0..n-1: one bootstrap resample of
    n units per row (``gen.integers(0, n, size=(B, n))``)."""
    return gen.integers(0, n, size=(n_resamples, n))


def multiplicities(idx, n):
    """(B, n) int64 counts of 0..n-1 in each row of ``idx`` (B, k): how often each original
    unit is drawn in each resample."""
    idx = np.asarray(idx)
    B = idx.shape[0]
    flat = (idx + n * np.arange(B)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(np.int64, copy=False)


def bootstrap_counts(gen, n_resamples, n):
    """(B, n) float counts of each unit in B bootstrap resamples of n units (the resample's
    weights): :func:`multiplicities` of :func:`resample_indices`."""
    return multiplicities(resample_indices(gen, n_resamples, n), n).astype(float)


def random_orders(gen, n_draws, n):
    """(D, n) uniformly random orders of 0..n-1: the ranks of D x n uniforms
    (``argsort(gen.random((D, n)))``)."""
    return np.argsort(gen.random((n_draws, n)), axis=1)


def subsets(gen, n_draws, n, k):
    """(D, k) subsets of k of 0..n-1 drawn without replacement, each in random order: the
    first k of :func:`random_orders`."""
    return random_orders(gen, n_draws, n)[:, :k]


def coin_masks(gen, shape):
    """Boolean masks of fair coins, one uniform per coin (``gen.random(shape) < 0.5``): the
    swap masks of SPA's and the preference tests' Perm-Both (:func:`swap_masks` packs 8 coins
    per random byte instead)."""
    return gen.random(shape) < 0.5


def uniform_choices(gen, n_draws, counts):
    """(D, len(counts)) draws of one of ``counts[j]`` options for each j, uniformly (a
    position below ``counts[j]``; 0 where ``counts[j]`` is 0), from one uniform each."""
    counts = np.asarray(counts)
    u = gen.random((n_draws, counts.size))
    return np.minimum((u * counts).astype(int), np.maximum(counts - 1, 0))


def permuted_copies(gen, n_draws, values):
    """(D, n) random permutations of ``values`` (n,), one ``gen.permutation`` per row: the
    relabellings of a label-permutation test."""
    return np.stack([gen.permutation(values) for _ in range(n_draws)])


def half_splits(gen, n_splits, n_inputs):
    """Algorithm 3's splits: D1 = floor(M/2) inputs drawn without replacement,
    D2 = the rest; returns two sorted index arrays (T, M1) and (T, M2)."""
    m1 = n_inputs // 2
    perm = random_orders(gen, n_splits, n_inputs)
    return np.sort(perm[:, :m1], axis=1), np.sort(perm[:, m1:], axis=1)
