"""QA pass: in the report's DP-vs-RC figure (report.figures.measure_map) measures with close DP and RC
had their labels printed over each other.  The check uses matplotlib's own rendered text extents
(Text.get_window_extent), independent of the placement's estimate of a label's box."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")


def _table(points):
    levels = ["system", "input", "item", "global"]
    methods = ["pearson", "spearman", "kendall_b"]
    rows = [{"level": lv, "method": m, "dp": dp, "rc": rc, "rc_se": 0.01}
            for (lv, m), (dp, rc) in zip(itertools.product(levels, methods), points)]
    return pd.DataFrame(rows)


def _overlaps(fig):
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [t.get_window_extent(r) for t in ax.texts]
    return [(ax.texts[i].get_text(), ax.texts[j].get_text()) for i, j in itertools.combinations(range(len(boxes)), 2)
            if boxes[i].overlaps(boxes[j])]


@pytest.mark.parametrize("seed", range(4))
def test_measure_map_labels_do_not_overlap(seed):
    from metaeval.report import figures as fg

    g = np.random.default_rng(seed)
    # 12 measures, several of them within a label's height of each other (as SummEval's system-level ones)
    base = np.array([[0.2, 0.8], [0.21, 0.81], [0.205, 0.79], [0.4, 0.6], [0.41, 0.605], [0.6, 0.3],
                     [0.15, 0.9], [0.16, 0.9], [0.5, 0.5], [0.52, 0.49], [0.3, 0.7], [0.31, 0.7]])
    pts = base + 0.004 * g.standard_normal(base.shape)
    fig = fg.measure_map(_table(pts))
    assert len(fig.axes[0].texts) == 12
    assert _overlaps(fig) == []
    r = fig.canvas.get_renderer()
    frame = fig.axes[0].get_window_extent(r)
    for t in fig.axes[0].texts:  # every label inside the axes (none cut at the figure's edge)
        b = t.get_window_extent(r)
        assert frame.x0 - 0.5 <= b.x0 and b.x1 <= frame.x1 + 0.5 and frame.y0 - 0.5 <= b.y0 and b.y1 <= frame.y1 + 0.5, t


def test_the_old_fixed_offset_overlapped():
    """The check can fail: labels at one fixed offset (the former placement) overlap on these points."""
    import matplotlib.pyplot as plt

    pts = np.array([[0.2, 0.8], [0.21, 0.81], [0.205, 0.79]] + [[0.1 * k, 0.1 * k] for k in range(9)])
    tab = _table(pts)
    fig, ax = plt.subplots(figsize=(6.2, 4.2))
    for r in tab.itertuples():
        ax.plot(r.dp, r.rc, "o")
        ax.annotate(f"{r.level} {r.method}", (r.dp, r.rc), fontsize=6, xytext=(3, 3), textcoords="offset points")
    fig.tight_layout()
    assert _overlaps(fig)
    plt.close(fig)
