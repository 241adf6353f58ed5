"""Pairwise accuracy of system rankings (WMT22's system-level statistic) on arrays.

For systems i < j with both human scores, a metric agrees when
``sign(h_i - h_j) == sign(m_i - m_j)`` (ties agree only with ties; mt-metrics-eval stats.py
``Agreement``).  :func:`metaeval.wmt.global_pairwise_accuracy` pools the agreements and pairs
of several datasets (blocks of one merged system vector, ``bounds``) and tests two metrics by
Perm-Both on the merged vectors (:func:`pooled_swap_accuracy`).
"""

from __future__ import annotations

import numpy as np


def pair_agreement(h, m):
    """(agreements, pairs) over system pairs (i < j) with both human scores:
    ``sign(h_i - h_j) == sign(m_i - m_j)``; ``m`` may carry leading batch axes."""
    iu = np.triu_indices(h.shape[-1], 1)
    hs = np.sign(h[..., iu[0]] - h[..., iu[1]])
    ms = np.sign(m[..., iu[0]] - m[..., iu[1]])
    ok = np.isfinite(hs)
    return ((hs == ms) & ok).sum(-1), ok.sum(-1)


def pooled_swap_accuracy(za, zb, hs, bounds, masks):
    """Pooled accuracy of both Perm-Both halves for (D, n) swap masks of the merged system
    vectors ``za``, ``zb`` (``hs`` the merged human scores, ``bounds`` each dataset's
    ``(start, end)``): ``(D, 2)``, column 0 the swapped A, column 1 the swapped B."""
    a = np.where(masks, zb, za)
    b = np.where(masks, za, zb)
    acc = np.zeros((masks.shape[0], 2))
    pairs = 0
    for s, e in bounds:
        ga, p = pair_agreement(hs[s:e], a[:, s:e])
        gb, _ = pair_agreement(hs[s:e], b[:, s:e])
        acc[:, 0] += ga
        acc[:, 1] += gb
        pairs += int(np.max(p)) if np.size(p) else 0
    return acc / pairs


__all__ = ["pair_agreement", "pooled_swap_accuracy"]
