"""The shuffle perturbation of ranked lists (seed paper 004, section 4.2)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._signature import make_signature
from ..errors import ParameterError
from ..stats import resampling as _rs
from ._trec import Run

#: Skip reason of a query whose list (or top ``depth``) has fewer than two documents.
TOO_SHORT = "fewer than 2 documents to shuffle"


def _check_depth(depth):
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 2:
        raise ParameterError(f"depth={depth!r} must be None (the whole list) or an int >= 2")
    return int(depth)


def _shuffle(run: Run, ss: np.random.SeedSequence, depth: int | None, signature: str) -> Run:
    rankings, skipped = {}, {}
    for q, (docs, _) in run.rankings.items():
        k = len(docs) if depth is None else min(depth, len(docs))
        if k < 2:
            skipped[q] = TOO_SHORT
            continue
        gen = _rs.named_generator(ss, "shuffle", run.name, q)
        identity = np.arange(k)
        for _ in range(100):
            perm = gen.permutation(k)
            if not np.array_equal(perm, identity):
                break
        else:  # pragma: no cover - probability (1/k!)**100 <= 2**-100
            perm = np.roll(identity, 1)
        new = tuple(docs[int(j)] for j in perm) + tuple(docs[k:])
        # strictly decreasing rank-based scores: the evaluation order is exactly `new`
        rankings[q] = (new, np.arange(len(new), 0, -1, dtype=np.float64))
    return Run(run.name, rankings, perturbation=signature, skipped=skipped, source=run.source,
               tags=run.tags)


def shuffle_runs(runs, *, rng=None, depth: int | None = None) -> dict[str, Run]:
    """Shuffle every query's ranked list of every run (a seeded perturbation).

    Parameters
    ----------
    runs : Run, or a list or mapping of them
        Original runs (not already perturbed).
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts, or a Generator (one
        128-bit draw); ``None`` draws fresh entropy, recorded in the
        signature.  Each (run, query) gets its own stream derived from the
        seed, the run's name and the query id
        (:func:`metaeval.stats.resampling.named_generator`), so a list's
        shuffle does not depend on the other runs or queries, their order,
        or the number of workers.
    depth : int, optional
        Shuffle only the top ``depth`` documents (the rest keep their
        places); default the whole list, as seed paper 004 (Section 4.2:
        "shuffling the rankings within the top-100 items").

    Returns
    -------
    dict
        Run name -> perturbed :class:`Run` (same name), whose
        ``perturbation`` is the signature
        ``perturb:shuffle|seed:<entropy>|depth:<k or all>|metaeval:<version>``.

    Notes
    -----
    The permutation of the top ``k`` documents (``k`` = ``depth`` or the list
    length) is uniformly random among the ``k! - 1`` that change the list
    (drawn until it differs from the identity).  A query with fewer than two
    documents to shuffle is *skipped* (``run.skipped``; its perturbed scores
    are NaN).  The perturbed run's scores are ``n, n-1, ..., 1`` in the new
    order (the original scores are dropped), so evaluators rank exactly the
    shuffled order.

    What it degrades: the *order* of the retrieved documents, i.e. how early
    the relevant ones appear (AP, RR, nDCG, P@k and R@k for k < depth,
    IPrec).  The *set* within the shuffled depth is unchanged, so measures
    that only count relevant documents in it are blind to it: P@k and R@k
    for k >= the list length (a LastFM top-20 list shuffled whole keeps its
    P@20, P@30, R@20 and R@30), and R-precision when R >= the list length.
    For a system no better than random the shuffle does not degrade quality
    in expectation; for a good system it does with high probability.

    Examples
    --------
    >>> from metaeval.ranking import Run, shuffle_runs
    >>> run = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"z": 1.0}}, name="A")
    >>> out = shuffle_runs([run], rng=0)["A"]
    >>> out.rankings["q1"][0], dict(out.skipped)
    (('c', 'b', 'a'), {'q2': 'fewer than 2 documents to shuffle'})
    >>> print(out.perturbation)
    perturb:shuffle|seed:0|depth:all|metaeval:0.1.0
    """
    depth = _check_depth(depth)
    if isinstance(runs, Run):
        runs = [runs]
    items = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    bad = [type(r).__name__ for r in items if not isinstance(r, Run)]
    if bad:
        raise ParameterError(f"runs holds {bad[0]} objects; give Run objects (read_run)")
    already = [r.name for r in items if r.perturbation is not None]
    if already:
        raise ParameterError(
            f"run(s) {', '.join(already)} are already perturbed; shuffle the original runs"
        )
    ss, tag = _rs.seed_sequence(rng)
    signature = make_signature(perturb="shuffle", depth=depth or "all", seed=tag)
    out = {}
    for r in items:
        if r.name in out:
            raise ParameterError(f"two runs are called {r.name!r}")
        out[r.name] = _shuffle(r, ss, depth, signature)
    return out


def shuffle_run(run: Run, *, rng=None, depth: int | None = None) -> Run:
    """Shuffle one run (see :func:`shuffle_runs`; same streams, so the same result)."""
    if not isinstance(run, Run):
        raise ParameterError(f"run is a {type(run).__name__}; give a Run (read_run)")
    return shuffle_runs([run], rng=rng, depth=depth)[run.name]
