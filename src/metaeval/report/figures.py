"""Figures of seed paper 000 (matplotlib, imported only when a figure is drawn).

* :func:`pvalue_curves` -- the p-value curves of discriminative power
  (paper Figures 7-36): per measure, the pairs' p-values in descending order.
* :func:`simulation_curves` -- simulated values of the measures against one
  swept parameter (paper Figures 1-6).

Each function returns a :class:`matplotlib.figure.Figure` and never shows it;
``save(fig, path)`` writes PNG, SVG or PDF by the file extension.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._escape import literal
from ..errors import DataError, ParameterError

_LEVEL_STYLE = {"system": "-", "input": "--", "item": ":", "global": "-."}
_METHOD_COLOR = {"pearson": "C0", "spearman": "C1", "kendall_b": "C2"}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ParameterError("figures need matplotlib: pip install matplotlib (a dependency of metaeval: reinstall it)") from None
    return plt


def _short(label, n=40):
    """A tick label of at most ``n`` characters (long column names end with an ellipsis)."""
    s = str(label)
    return s if len(s) <= n else s[: n - 1] + "\u2026"


def _label_inches(labels, fontsize=7):
    """A generous width, in inches, of the longest (shortened) label at ``fontsize`` points."""
    return max((len(_short(x)) for x in labels), default=0) * fontsize * 0.6 / 72


def _style(level, method, k):
    return dict(
        linestyle=_LEVEL_STYLE.get(level, "-"),
        color=_METHOD_COLOR.get(method, f"C{3 + k % 7}"),
    )


def pvalue_curves(dp, *, title=None, log=False):
    """P-value curves of a :class:`~metaeval.measures.DiscriminativePower`.

    x: metric pairs sorted by descending p-value (as the paper), y: p-value;
    the closer a curve hugs the axes, the more discriminative the measure.
    The legend gives each measure's DP value and rank.
    """
    plt = _pyplot()
    cf = dp.curve_frame()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for k, (lv, m) in enumerate(dp.measures):
        d = cf[(cf.level == lv) & (cf.method == m)]
        ax.plot(d.position, d.pvalue, label=f"{lv} {m}: DP {dp.dp[k]:.3f} ({dp.rank[k]:.0f})",
                **_style(lv, m, k))
    ax.set_xlabel("metric pairs (sorted by p-value)")
    ax.set_ylabel(f"p-value ({dp.test})")
    if log:
        ax.set_yscale("log")
    ax.set_title(title or f"p-value curves, {dp.human} ({len(dp.metrics)} metrics)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


def simulation_curves(frame, x, *, hue=("level", "method"), title=None, facet=None):
    """Simulated measure values against the swept parameter ``x``.

    ``frame`` is a tidy simulation frame (one row per grid point and
    measure, with ``statistic`` and optionally ``se``); one line per
    (level, method), error bars of 2 standard errors when ``se`` is present.
    ``facet`` names a column to split into side-by-side panels (e.g.
    ``"rho_sys"``).
    """
    plt = _pyplot()
    if x not in frame.columns:
        raise ParameterError(f"x={x!r} is not a column of the frame ({', '.join(frame.columns)})")
    panels = [None] if facet is None else sorted(frame[facet].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels) + 2, 4), squeeze=False)
    for ax, pv in zip(axes[0], panels):
        d0 = frame if pv is None else frame[frame[facet] == pv]
        for k, (key, d) in enumerate(d0.groupby(list(hue), sort=False)):
            d = d.sort_values(x)
            lv, m = key if len(hue) == 2 else (key, "")
            err = 2 * d["se"] if "se" in d else None
            ax.errorbar(d[x], d["statistic"], yerr=err, label=f"{lv} {m}", capsize=2,
                        **_style(lv, m, k))
        ax.set_xlabel(x)
        ax.set_ylabel("simulated value")
        if pv is not None:
            ax.set_title(f"{facet} = {pv}")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def literal_texts(fig):
    """``fig`` with the names it shows made safe, before it is written: every text (titles, axis
    labels, legend entries, annotations) and every tick label through
    :func:`metaeval._escape.literal`, the views' one escaping function (newlines kept: they lay
    labels out).  Else a name's ESC or BEL is written raw into the SVG, which no XML parser then
    reads (neither is an XML character), and a bidi override reorders the text around it.
    Returns ``fig``."""
    from matplotlib.text import Text
    from matplotlib.ticker import Formatter

    class _Literal(Formatter):
        """A tick formatter whose labels go through ``literal`` (tick labels are set at draw time)."""

        escapes_names = True

        def __init__(self, inner):
            self.inner = inner

        def __call__(self, x, pos=None):
            return literal(self.inner(x, pos), newlines=True)

        def format_ticks(self, values):
            return [literal(t, newlines=True) for t in self.inner.format_ticks(values)]

        def get_offset(self):
            return literal(self.inner.get_offset(), newlines=True)

        def set_locs(self, locs):
            self.inner.set_locs(locs)

        def format_data_short(self, value):
            return self.inner.format_data_short(value)

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, put in ((axis.get_major_formatter, axis.set_major_formatter),
                             (axis.get_minor_formatter, axis.set_minor_formatter)):
                inner = get()
                if not getattr(inner, "escapes_names", False):  # not wrapped by an earlier call
                    put(_Literal(inner))
    for t in fig.findobj(Text):
        text = t.get_text()
        safe = literal(text, newlines=True)
        if safe != text:
            t.set_text(safe)
    return fig


def save(fig, path):
    """Write ``fig`` to ``path`` (format from the extension) and close it."""
    plt = _pyplot()
    literal_texts(fig)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def reliability_bars(stability=None, consistency=None, *, title=None):
    """Stability and consistency per metric as bars (seed paper 002, Figure 2).

    ``stability``: a :func:`metaeval.stability` result; ``consistency``: a
    :func:`metaeval.consistency` result (bars with their interval).  Either or
    both; one panel each.
    """
    import numpy as np

    plt = _pyplot()
    panels = [(n, r) for n, r in (("stability", stability), ("consistency (alpha)", consistency)) if r is not None]
    if not panels:
        raise ParameterError("reliability_bars needs stability=, consistency= or both")
    n = max(len(r.to_frame()) for _, r in panels)
    labels = [c for _, r in panels for c in r.to_frame()["column"]]
    size = (max(6, 1.2 + 0.16 * n), (2.4 + _label_inches(labels)) * len(panels))
    fig, axes = plt.subplots(len(panels), 1, figsize=size, squeeze=False, layout="constrained")
    for ax, (name, res) in zip(axes[:, 0], panels):
        f = res.to_frame()
        x = range(len(f))
        yerr = None
        if "ci_low" in f and f["ci_low"].notna().any():
            yerr = [f["statistic"] - f["ci_low"], f["ci_high"] - f["statistic"]]
        ax.bar(x, f["statistic"], yerr=yerr, color="C0", capsize=2)
        if "target" in f:
            ax.axhline(float(f["target"].iloc[0]), color="C3", linestyle="--", linewidth=1)
        ax.set_xticks(list(x), [_short(c) for c in f["column"]], rotation=90, fontsize=7)
        ax.set_xlim(-0.7, len(f) - 0.3)
        # a bootstrap interval of alpha over few systems can reach -700: keep the axis readable at [-1, 1]
        low = np.nanmin(np.r_[f["statistic"].to_numpy(float), f["ci_low"].to_numpy(float) if "ci_low" in f else []])
        if np.isfinite(low):
            ax.set_ylim(max(-1.0, min(0.0, low) - 0.05), 1.05)
            if low < -1.0:
                ax.set_title("values and intervals below -1 are cut at the axis", fontsize=7, loc="left",
                             color="0.3")
        ax.set_ylabel(name)
    if title:
        fig.suptitle(title)
    return fig


def alpha_curve(curves, *, title=None):
    """Cronbach's alpha against the number of inputs (seed paper 002, Figure 3):
    resampled subsets (mean with the percentile band) and the Spearman-Brown
    prophecy from the full alpha, per column of a
    :func:`metaeval.consistency_curve` result."""
    plt = _pyplot()
    f = curves.to_frame()
    fig, ax = plt.subplots(figsize=(6.5 + _label_inches(f["column"]), 4), layout="constrained")
    for k, (col, d) in enumerate(f.groupby("column", sort=False)):
        c = f"C{k % 10}"
        ax.plot(d["size"], d["alpha_mean"], color=c, label=f"{_short(col)} (subsets)")
        ax.fill_between(d["size"], d["ci_low"], d["ci_high"], color=c, alpha=0.15)
        ax.plot(d["size"], d["prophecy"], color=c, linestyle="--", label=f"{_short(col)} (Spearman-Brown)")
    ax.set_xlabel("number of inputs")
    ax.set_ylabel("Cronbach's alpha")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(title or "alpha versus dataset size")
    return fig


def save_both(fig, stem, *, dpi=110):
    """Write ``fig`` as ``stem.png`` and ``stem.svg`` (the report's figures) and close it."""
    plt = _pyplot()
    try:
        literal_texts(fig)
        fig.savefig(f"{stem}.png", dpi=dpi)
        fig.savefig(f"{stem}.svg")
    finally:
        plt.close(fig)


def correlation_intervals(frame, *, levels=None, order=None, title=None):
    """Each metric's statistic with its interval, one panel per level.

    ``frame`` is a :func:`metaeval.correlate` frame (``metric, level,
    statistic, ci_low, ci_high``); ``order`` the metrics top to bottom
    (default: as they first appear).
    """
    plt = _pyplot()
    levels = list(levels or dict.fromkeys(frame.level))
    order = list(order or dict.fromkeys(frame.metric))
    n = len(order)
    # constrained layout: the title stays above the panels and the labels inside the figure, whatever n
    fig, axes = plt.subplots(1, len(levels), figsize=(2.6 * len(levels) + 0.6 + _label_inches(order), 1.3 + 0.19 * n),
                             sharey=True, squeeze=False, layout="constrained")
    pos = {m: n - 1 - k for k, m in enumerate(order)}
    for ax, lv in zip(axes[0], levels):
        d = frame[frame.level == lv]
        y = [pos[m] for m in d.metric]
        ax.hlines(y, d.ci_low, d.ci_high, color="0.6", linewidth=1)
        ax.plot(d.statistic, y, "o", markersize=3, color="C0")
        ax.axvline(0, color="0.3", linewidth=0.8)
        ax.set_title(f"{lv}", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", color="0.9")
    axes[0][0].set_yticks(range(n), [_short(m) for m in order[::-1]], fontsize=7)
    axes[0][0].set_ylim(-0.7, n - 0.3)
    if title:
        fig.suptitle(_short(title, 80), fontsize=10)
    return fig


def preference_intervals(frame, *, measures=("acc_eq", "kappa_majority"), order=None, title=None):
    """Each annotator's agreement with the raters' preferences, with its interval, one panel per measure.

    ``frame`` is a :func:`metaeval.preference_agreement` frame (``judge, measure, statistic,
    ci_low, ci_high``); the ``human`` rows (the human-human ceiling) are drawn as a shaded band
    (its interval) with a line (its value) across each panel; ``order`` the annotators top to
    bottom (default: as they first appear; ``human`` is left out of the rows).
    """
    plt = _pyplot()
    order = [j for j in (order or dict.fromkeys(frame.judge)) if j != "human"]
    n = max(len(order), 1)
    labels = {"acc_eq": "acc_eq", "acc_23": "acc_23", "kappa_majority": "kappa vs majority",
              "kappa_raters": "kappa vs raters", "fleiss_kappa": "Fleiss' kappa", "alpha": "Krippendorff's alpha"}
    fig, axes = plt.subplots(1, len(measures), figsize=(2.8 * len(measures) + 0.6 + _label_inches(order),
                                                          1.5 + 0.22 * n), sharey=True, squeeze=False,
                             layout="constrained")
    pos = {m: n - 1 - k for k, m in enumerate(order)}
    for ax, ms in zip(axes[0], measures):
        d = frame[frame.measure == ms]
        c = d[d.judge == "human"]
        if len(c):
            r = c.iloc[0]
            ax.axvspan(r.ci_low, r.ci_high, color="C1", alpha=0.2, linewidth=0)
            ax.axvline(r.statistic, color="C1", linewidth=1.2, label="human-human ceiling")
        d = d[d.judge.isin(order)]
        y = [pos[m] for m in d.judge]
        ax.hlines(y, d.ci_low, d.ci_high, color="0.6", linewidth=1)
        ax.plot(d.statistic, y, "o", markersize=3, color="C0")
        ax.set_title(labels.get(ms, ms), fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", color="0.9")
    axes[0][0].set_yticks(range(n), [_short(m) for m in order[::-1]], fontsize=7)
    axes[0][0].set_ylim(-0.7, n - 0.3)
    if any(len(a.get_legend_handles_labels()[0]) for a in axes[0]):
        fig.legend(*axes[0][-1].get_legend_handles_labels(), loc="outside lower center", fontsize=7, frameon=False)
    if title:
        fig.suptitle(_short(title, 80), fontsize=10)
    return fig


def cluster_map(per_level, *, order=None, title=None):
    """Significance clusters per level: ``per_level`` maps a level to a
    :func:`metaeval.compare_all` result; cells show the cluster (1 = top,
    dark) and the statistic."""
    import numpy as np

    plt = _pyplot()
    levels = list(per_level)
    order = list(order or per_level[levels[0]].metrics)
    K, L = len(order), len(levels)
    rank = np.full((K, L), np.nan)
    stat = np.full((K, L), np.nan)
    for j, lv in enumerate(levels):
        c = per_level[lv]
        for i, m in enumerate(order):
            k = c.metrics.index(m)
            rank[i, j], stat[i, j] = c.clusters[k], c.statistics[k]
    fig, ax = plt.subplots(figsize=(1.3 * L + 1.2 + _label_inches(order), 1.2 + 0.3 * K), layout="constrained")
    top = np.nanmax(rank) if np.isfinite(rank).any() else 1
    ax.imshow(rank, cmap="Blues_r", vmin=1, vmax=max(top + 1, 2), aspect="auto")
    for i in range(K):
        for j in range(L):
            if np.isfinite(rank[i, j]):
                dark = rank[i, j] <= (top + 1) / 2
                ax.text(j, i, f"{int(rank[i, j])}  ({stat[i, j]:.2f})", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
    ax.set_xticks(range(L), levels, fontsize=8)
    ax.set_yticks(range(K), [_short(m) for m in order], fontsize=7)
    ax.set_title(_short(title or "significance clusters (1 = top)", 70), fontsize=9)
    return fig


def measure_map(table, *, title=None):
    """Discriminative power (x, lower is better) against ranking consistency
    (y, higher is better) of each measure: a :func:`metaeval.measures.measure_table`."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.2, 4.2))
    points = []
    for k, r in enumerate(table.itertuples()):
        ax.errorbar(r.dp, r.rc, yerr=2 * r.rc_se, fmt="o", markersize=4, capsize=2,
                    **_style(r.level, r.method, k) | {"linestyle": "none"})
        points.append((r.dp, r.rc, f"{r.level} {r.method}"))
    ax.set_xlabel("discriminative power DP (lower is better)")
    ax.set_ylabel("ranking consistency RC (higher is better; bars: 2 s.e.)")
    ax.invert_xaxis()
    ax.set_title(title or "correlation measures", fontsize=9)
    ax.grid(color="0.92")
    fig.tight_layout()
    _place_labels(ax, points, fontsize=6)
    return fig


def _place_labels(ax, points, *, fontsize=6):
    """Annotate each ``(x, y, text)`` point at the first of a few offsets whose box overlaps no label
    placed before and stays inside the axes (QA pass: measures with close DP and RC had their labels
    printed over each other).

    Boxes are estimated in display points (0.6 em per character); a label with no free offset gets the
    least-overlapping one."""
    import numpy as np

    ax.autoscale_view()
    to_points = 72.0 / ax.figure.dpi
    h = fontsize + 1.0
    placed = []

    def overlap(box):
        x0, y0, x1, y1 = box
        return sum(max(0.0, min(x1, b[2]) - max(x0, b[0])) * max(0.0, min(y1, b[3]) - max(y0, b[1]))
                   for b in placed)

    frame = ax.get_window_extent().extents * to_points  # the axes' box, in points

    def outside(box):  # the part of a box beyond the axes (a label cut at the figure's edge)
        w, hh = box[2] - box[0], box[3] - box[1]
        inner_w = max(0.0, min(box[2], frame[2]) - max(box[0], frame[0]))
        inner_h = max(0.0, min(box[3], frame[3]) - max(box[1], frame[1]))
        return w * hh - inner_w * inner_h

    pts = [(ax.transData.transform((x, y)) * to_points, t) for x, y, t in points
           if np.isfinite(x) and np.isfinite(y)]
    for (px, py), text in sorted(pts, key=lambda p: -p[0][1]):
        w = 0.6 * fontsize * len(text)
        offsets = [(3, 3), (3, -h - 1), (-w - 3, 3), (-w - 3, -h - 1), (3, h + 3), (3, -2 * h - 3),
                   (-w - 3, h + 3), (-w - 3, -2 * h - 3), (3, 2 * h + 5), (3, -3 * h - 5)]
        boxes = [(px + dx, py + dy, px + dx + w, py + dy + h) for dx, dy in offsets]
        costs = [overlap(b) + 1e3 * outside(b) for b in boxes]
        best = next((i for i, c in enumerate(costs) if c == 0), int(np.argmin(costs)))
        placed.append(boxes[best])
        data_xy = ax.transData.inverted().transform((px / to_points, py / to_points))
        ax.annotate(text, tuple(data_xy), fontsize=fontsize, xytext=offsets[best], textcoords="offset points",
                    arrowprops=None if best < 2 else dict(arrowstyle="-", color="0.7", lw=0.4))


def mtmm_heatmap(res, *, title=None):
    """The multitrait-multimethod matrix of a :func:`metaeval.mtmm` result
    (lower triangle shown, reliabilities on the diagonal)."""
    import numpy as np

    plt = _pyplot()
    mat = res.matrix()
    v = mat.to_numpy(float)
    v = np.where(np.isnan(v), v.T, v)  # symmetric view
    labels = [_short(f"{t} / {m}") for m, t in mat.index]
    n = len(labels)
    lab = _label_inches(labels)
    fig, ax = plt.subplots(figsize=(0.45 * n + 2.0 + lab, 0.45 * n + 1.2 + lab), layout="constrained")
    show = np.where(np.tril(np.ones_like(v, dtype=bool)), v, np.nan)
    im = ax.imshow(show, cmap="RdBu_r", vmin=-1, vmax=1)
    for i in range(n):
        for j in range(i + 1):
            if np.isfinite(show[i, j]):
                ax.text(j, i, f"{show[i, j]:.2f}", ha="center", va="center", fontsize=6)
    ax.set_xticks(range(n), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(n), labels, fontsize=7)
    fig.colorbar(im, ax=ax, shrink=0.7)
    ax.set_title(title or f"MTMM ({res.method}, {res.level} level)", fontsize=9)
    return fig


# ----------------------------------------------------------------------------- analysis figures
# The figures of the text-level diagnostics (seed papers 001, 003), local accuracy (004) and
# residual PCA (002).  They lived beside the analyses; the analysis modules keep thin aliases
# (metaeval.diagnostics.plot_ks, ...) that import these on first use.


def _names(v, name):
    """A str or a sequence of str as a list (figure options ``metrics=``, ``contexts=``)."""
    from .._vocab import as_list

    return as_list(v, name)


def _heatmap(ax, values, rows, cols, *, vmin, vmax, cmap, fmt="{:.2f}", crosses=None):
    im = ax.imshow(values, vmin=vmin, vmax=vmax, cmap=cmap, aspect="auto")
    ax.set_xticks(range(len(cols)), labels=[_short(c) for c in cols], rotation=90, fontsize=7)
    ax.set_yticks(range(len(rows)), labels=[_short(r) for r in rows], fontsize=7)
    if len(rows) * len(cols) <= 400:
        for i in range(len(rows)):
            for j in range(len(cols)):
                v = values[i, j]
                if np.isfinite(v):
                    dark = cmap == "viridis" and (v - vmin) / (vmax - vmin) < 0.55
                    ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6,
                            color="white" if dark else "black")  # fmt: skip
    if crosses is not None:
        ii, jj = np.nonzero(crosses)
        ax.scatter(jj, ii, marker="x", color="dimgrey", alpha=0.7, s=60, linewidths=1)
    return im



def plot_ks(ks, *, title=None):
    """Heatmap of KS scores, metrics x human dimensions (seed paper 001, Figure 2).

    The image data (``fig.axes[0].images[0].get_array()``) is
    ``ks.matrix().to_numpy()``.
    """
    plt = _pyplot()
    mat = ks.matrix()
    # constrained layout keeps the title and the colorbar outside the cells, the size follows the labels
    width = max(4.8, 1.6 + _label_inches(mat.index) + 0.7 * mat.shape[1])
    height = 1.4 + _label_inches(mat.columns) + 0.2 * mat.shape[0]
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    im = _heatmap(ax, mat.to_numpy(float), mat.index, mat.columns, vmin=0, vmax=1, cmap="viridis")
    fig.colorbar(im, ax=ax, label="KS score", shrink=min(1.0, 4.0 / height) if height > 4 else 1.0)
    ax.set_title(title or "KS score: low- vs high-quality texts", fontsize=9)
    return fig


def plot_detection(detections, *, title=None):
    """Bars of perturbation-detection accuracy per metric (seed paper 001, Figure 3).

    ``detections`` is a :class:`Detections` or a mapping of label (e.g. the
    perturbation) to :class:`Detections`, drawn as grouped bars with their
    confidence intervals; the dashed line is the 50% of a coin flip.  Bar
    heights are the ``statistic`` values, in metric order, group by group.
    """
    plt = _pyplot()
    groups = dict(detections) if isinstance(detections, Mapping) else {"": detections}
    metrics = list(dict.fromkeys(r.metric for d in groups.values() for r in d))
    fig, ax = plt.subplots(figsize=(1.5 + 0.45 * len(metrics) * len(groups), 4))
    width = 0.8 / len(groups)
    x = np.arange(len(metrics))
    for g, (label, det) in enumerate(groups.items()):
        by = {r.metric: r for r in det}
        h = np.array([by[m].statistic if m in by else np.nan for m in metrics])
        lo = np.array([by[m].ci_low if m in by else np.nan for m in metrics])
        hi = np.array([by[m].ci_high if m in by else np.nan for m in metrics])
        yerr = np.vstack([h - lo, hi - h])
        ax.bar(x + (g - (len(groups) - 1) / 2) * width, h, width, yerr=yerr, capsize=2,
               label=label or None)  # fmt: skip
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks(x, labels=metrics, rotation=90, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (share of pairs: original scored better)")
    if len(groups) > 1:
        ax.legend(fontsize=7)
    ax.set_title(title or "perturbation detection")
    fig.tight_layout()
    return fig


def plot_meta_correlation(mc, *, title=None):
    """Bars of meta-correlation per metric, one panel per human dimension (001, Figure 4).

    Red markers show each metric's sample-level correlation (the paper's red
    line).  Bar heights are the ``statistic`` values in metric order.  With
    more than 24 metrics the bars are horizontal (one labelled row per
    metric; bar widths are the statistics, top to bottom); labels longer
    than 40 characters end with an ellipsis.
    """
    plt = _pyplot()
    f = mc.to_frame()
    humans = list(dict.fromkeys(f.human))
    n = f.metric.nunique()
    label = f"meta-correlation ({f.meta_method.iloc[0]})"
    if n > 24:  # many metrics: horizontal bars, one readable row per metric, panels side by side
        fig, axes = plt.subplots(
            1, len(humans), figsize=(1.0 + _label_inches(f.metric) + 2.6 * len(humans), 1.6 + 0.17 * n),
            squeeze=False, sharey=True, layout="constrained",
        )  # fmt: skip
        for k, (ax, hname) in enumerate(zip(axes[0], humans)):
            d = f[f.human == hname]
            y = np.arange(len(d))[::-1]
            ax.barh(y, d.statistic.to_numpy(float), color="C0")
            ax.scatter(d.sample_correlation.to_numpy(float), y, color="red", marker="|", s=60, zorder=3)
            ax.axvline(0, color="black", linewidth=0.8)
            if k == 0:
                ax.set_yticks(y, labels=[_short(m) for m in d.metric], fontsize=7)
            ax.set_ylim(-0.7, len(d) - 0.3)
            ax.set_xlim(-1, 1)
            ax.set_xlabel(label, fontsize=8)
            ax.set_title(_short(hname), fontsize=9)
        fig.suptitle(title or "meta-correlation (bars) and sample-level correlation (red)", fontsize=10)
        return fig
    fig, axes = plt.subplots(
        1, len(humans), figsize=(max(5.0, 1.5 + (0.4 * n + 0.6) * len(humans)), 2.6 + _label_inches(f.metric)),
        squeeze=False, layout="constrained",
    )  # fmt: skip
    for ax, hname in zip(axes[0], humans):
        d = f[f.human == hname]
        x = np.arange(len(d))
        ax.bar(x, d.statistic.to_numpy(float), color="C0")
        ax.scatter(
            x, d.sample_correlation.to_numpy(float), color="red", marker="_", s=200, zorder=3
        )
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, labels=[_short(m) for m in d.metric], rotation=90, fontsize=7)
        ax.set_ylim(-1, 1)
        ax.set_title(_short(hname), fontsize=9)
    axes[0][0].set_ylabel(label)
    fig.suptitle(title or "meta-correlation (bars) and sample-level correlation (red)", fontsize=10)
    return fig


def plot_reference_sensitivity(rs, *, bins: int = 30, title=None):
    """Histograms of the correlation over random reference draws (001, Figure 5).

    One histogram per result, overlaid; the histogram counts are
    ``numpy.histogram(distribution, bins)`` on a shared bin grid.
    """
    plt = _pyplot()
    fin = [r.distribution[np.isfinite(r.distribution)] for r in rs]
    allv = np.concatenate(fin) if fin else np.array([])
    edges = np.histogram_bin_edges(allv, bins=bins) if allv.size else bins
    fig, ax = plt.subplots(figsize=(6, 4))
    for r, d in zip(rs, fin):
        ax.hist(d, bins=edges, alpha=0.6, label=f"{r.metric} ({r.human})")
    ax.set_xlabel(f"{rs[0].method} correlation at level {rs[0].level}" if len(rs) else "")
    ax.set_ylabel("draws")
    ax.legend(fontsize=7)
    ax.set_title(title or "correlation with one random reference per input")
    fig.tight_layout()
    return fig


def plot_correlation_design(cd, *, title=None):
    """Correlation matrices, one heatmap per level, crosses where not significant (003, Fig. 1).

    Image data: ``cd.matrix(level).to_numpy()``; crosses mark the pairs with
    an adjusted p-value above alpha (the diagonal is never crossed).
    """
    plt = _pyplot()
    k = len(cd.columns)
    lab = _label_inches(cd.columns)
    fig, axes = plt.subplots(
        1, len(cd.levels), figsize=(1.5 + lab + max(0.3 * k + 1.0, 2.6) * len(cd.levels), 1.8 + lab + 0.3 * k),
        squeeze=False, layout="constrained",
    )  # fmt: skip
    for n_ax, (ax, lv) in enumerate(zip(axes[0], cd.levels)):
        S = cd.statistic[lv]
        crosses = ~(cd.pvalue_adjusted[lv] <= cd.alpha[lv])
        np.fill_diagonal(crosses, False)
        im = _heatmap(ax, S, cd.columns, cd.columns, vmin=-1, vmax=1, cmap="RdBu_r",
                      crosses=crosses)  # fmt: skip
        if n_ax:
            ax.tick_params(labelleft=False)
        name = "sentence level (global)" if lv == "global" else "system level"
        ax.set_title(f"{name}\nalpha {cd.alpha[lv]:g} ({cd.correction})", fontsize=8)
    fig.colorbar(im, ax=list(axes[0]), label=cd.method)
    if title:
        fig.suptitle(title)
    return fig


def plot_local_accuracy(
    acc,
    *,
    metrics=None,
    contexts=None,
    groups=None,
    ci=False,
    title=None,
):
    """Line plot of local accuracy per metric across contexts (paper 004, Figures 1a-3a).

    One line per metric over the contexts (x axis, in ``contexts`` order,
    default the result's), y = ``acc.statistic``; ``ci=True`` adds the
    confidence bands.  ``groups`` maps contexts to a group label (e.g.
    speaker -> CLEAN/OTHER, Figure 2a): contexts are then sorted by group
    (stable) and grey lines separate the groups.  The y data of line i is
    ``fig.axes[0].lines[i].get_ydata()``.
    """
    plt = _pyplot()
    mets = list(acc.metrics) if metrics is None else _names(metrics, "metrics")
    unknown = [m for m in mets if m not in acc.metrics]
    if unknown:
        raise DataError(
            f"metrics {unknown} not in the result; it has {list(acc.metrics)}"
        )
    ctx = list(acc.contexts) if contexts is None else _names(contexts, "contexts")
    unknown = [c for c in ctx if c not in acc.contexts]
    if unknown:
        raise DataError(f"contexts {unknown[:10]} not in the result")
    if groups is not None:
        missing = [c for c in ctx if c not in groups]
        if missing:
            raise DataError(f"groups has no group for context(s) {missing[:10]}")
        gorder = list(dict.fromkeys(groups[c] for c in ctx))
        ctx = sorted(ctx, key=lambda c: gorder.index(groups[c]))
    ci_idx = [acc.contexts.index(c) for c in ctx]
    x = np.arange(len(ctx))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.0 + 0.35 * len(ctx)), 4.5))
    for m in mets:
        k = acc.metrics.index(m)
        (line,) = ax.plot(
            x, acc.statistic[k, ci_idx], marker="o", markersize=3, label=m
        )
        if ci:
            ax.fill_between(x, acc.ci_low[k, ci_idx], acc.ci_high[k, ci_idx],
                            color=line.get_color(), alpha=0.15, linewidth=0)  # fmt: skip
    if groups is not None:
        labels = [groups[c] for c in ctx]
        for i in range(1, len(ctx)):
            if labels[i] != labels[i - 1]:
                ax.axvline(i - 0.5, color="grey", linewidth=1.5)
    ax.set_xticks(x, labels=ctx, rotation=90, fontsize=7)
    ax.set_xlabel(acc.category)
    ax.set_ylabel("local accuracy" + (" (Eq. 2)" if acc.average == "macro" else ""))
    ax.legend(fontsize=7, ncol=max(1, len(mets) // 12 + 1), loc="best")
    ax.set_title(title or f"local metric accuracy across {acc.category} contexts")
    fig.tight_layout()
    return fig


def plot_context_tau(
    tau, *, ordered=True, title=None
):
    """Heatmap of the weighted tau between contexts (paper 004, Figures 1b-3b).

    ``ordered=True`` (default) shows the contexts in dendrogram order with
    lines between clusters.  The image data
    (``fig.axes[0].images[0].get_array()``) is
    ``tau.matrix("tau", ordered=ordered).to_numpy()``.
    """
    plt = _pyplot()
    mat = tau.matrix("tau", ordered=ordered)
    n = mat.shape[0]
    side = min(14.0, 0.3 * n)  # many contexts (speakers): a capped image, labels thinned
    fig, ax = plt.subplots(figsize=(max(5.5, 2.0 + side), max(4.5, 1.5 + side)))
    im = _heatmap(ax, mat.to_numpy(float), mat.index, mat.columns, vmin=-1, vmax=1,
                  cmap="viridis")  # fmt: skip
    if ordered:
        cl = tau.clusters[tau.order]
        for i in range(1, n):
            if cl[i] != cl[i - 1]:
                ax.axhline(i - 0.5, color="white", linewidth=1.5)
                ax.axvline(i - 0.5, color="white", linewidth=1.5)
    if n > 60:
        step = int(np.ceil(n / 60))
        ax.set_xticks(range(0, n, step), labels=list(mat.columns[::step]), rotation=90, fontsize=5)
        ax.set_yticks(range(0, n, step), labels=list(mat.index[::step]), fontsize=5)
    fig.colorbar(im, ax=ax, label=f"weighted tau ({tau.variant})")
    ax.set_title(title or f"weighted Kendall tau of metric rankings ({tau.category})", fontsize=9)
    fig.tight_layout()
    return fig


def plot_residual_pca(
    result, *, kind="loadings", components=(1, 2), ax=None
):
    """Scatter of the metrics on two components; returns a matplotlib Figure.

    ``kind="loadings"`` plots :attr:`ResidualPCA.loadings`;
    ``kind="coordinates"`` the paper's Figure 7 coordinates.  matplotlib is
    imported here (a dependency of metaeval).
    """
    from .._vocab import check_choice

    check_choice(kind, "kind", ("loadings", "coordinates"))
    try:
        a, b = (int(c) - 1 for c in components)
    except (TypeError, ValueError):
        raise ParameterError(f"components={components!r} must be two 1-based indices") from None
    if not (0 <= a < result.n_components and 0 <= b < result.n_components):
        raise ParameterError(
            f"components={components!r}: the result has {result.n_components} components"
        )
    plt = _pyplot()
    A = result.loadings if kind == "loadings" else result.metric_coordinates
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 5))
    else:
        fig = ax.figure
    ax.scatter(A[:, a], A[:, b], color="tab:red", s=14)
    for i, m in enumerate(result.metrics):
        ax.annotate(m, (A[i, a], A[i, b]), fontsize=7, xytext=(3, 2), textcoords="offset points")
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    lab = "PC" if kind == "loadings" else "coordinate "
    ev = result.explained_variance_ratio
    ax.set_xlabel(f"{lab}{a + 1}" + (f" ({ev[a]:.0%})" if kind == "loadings" else ""))
    ax.set_ylabel(f"{lab}{b + 1}" + (f" ({ev[b]:.0%})" if kind == "loadings" else ""))
    ax.set_title("Residual PCA of metrics after the factor scores")
    return fig
