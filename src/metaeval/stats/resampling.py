"""Random streams and resampling index/mask generators.

Every stochastic function of metaeval takes ``rng`` (anything
:func:`numpy.random.default_rng` accepts, or ``None`` for fresh entropy).
It is turned into one :class:`numpy.random.SeedSequence`, whose entropy goes
into the result's signature (so even ``rng=None`` runs are reproducible), and
independent work units (metrics, metric pairs, blocks of resamples) get
child streams spawned from it by *unit index*, never by worker, so results do
not depend on the number of workers.

All index and mask matrices are drawn in one step per unit (STYLE.md 2).
"""

from __future__ import annotations

import zlib

import numpy as np

from ..errors import ParameterError

BOOTSTRAP_UNITS = ("systems", "inputs", "both")
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


def shuffle_within_groups(gen, xg, yg, n_resamples):
    """Permute the metric among each group's valid pairs, ``n_resamples`` times.

    ``xg``, ``yg``: (G, n) arranged scores.  Returns (B, G, n) metric and
    human arrays in which each group's valid pairs are packed to the left and
    the metric values are randomly permuted among them (a null of no
    association within groups); invalid positions are NaN.
    """
    G, n = xg.shape
    valid = np.isfinite(xg) & np.isfinite(yg)
    # pack valid pairs left, keeping their order
    order = np.argsort(~valid, axis=-1, kind="stable")
    xs = np.take_along_axis(np.where(valid, xg, np.nan), order, -1)
    ys = np.take_along_axis(np.where(valid, yg, np.nan), order, -1)
    nv = valid.sum(-1)
    keys = gen.random((n_resamples, G, n))
    keys = np.where(np.arange(n) < nv[:, None], keys, 1.0 + np.arange(n))
    perm = np.argsort(keys, axis=-1)
    return np.take_along_axis(np.broadcast_to(xs, perm.shape), perm, -1), np.broadcast_to(
        ys, perm.shape
    )
