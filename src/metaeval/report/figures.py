"""Figures of seed paper 000 (matplotlib, imported only when a figure is drawn).

* :func:`pvalue_curves` -- the p-value curves of discriminative power
  (paper Figures 7-36): per measure, the pairs' p-values in descending order.
* :func:`simulation_curves` -- simulated values of the measures against one
  swept parameter (paper Figures 1-6).

Each function returns a :class:`matplotlib.figure.Figure` and never shows it;
``save(fig, path)`` writes PNG, SVG or PDF by the file extension.
"""

from __future__ import annotations

from ..errors import ParameterError

_LEVEL_STYLE = {"system": "-", "input": "--", "item": ":", "global": "-."}
_METHOD_COLOR = {"pearson": "C0", "spearman": "C1", "kendall_b": "C2"}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ParameterError("figures need matplotlib: pip install 'metaeval[plot]'") from None
    return plt


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
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, (lv, m) in enumerate(dp.measures):
        d = cf[(cf.level == lv) & (cf.method == m)]
        ax.plot(d.position, d.pvalue, label=f"{lv} {m}: DP {dp.dp[k]:.3f} ({dp.rank[k]:.0f})",
                **_style(lv, m, k))
    ax.set_xlabel("metric pairs (sorted by p-value)")
    ax.set_ylabel(f"p-value ({dp.test})")
    if log:
        ax.set_yscale("log")
    ax.set_title(title or f"p-value curves, {dp.human} ({len(dp.metrics)} metrics)")
    ax.legend(fontsize=7, ncol=2)
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
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
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
    axes[0][0].legend(fontsize=7, ncol=2)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def save(fig, path):
    """Write ``fig`` to ``path`` (format from the extension) and close it."""
    plt = _pyplot()
    fig.savefig(path, dpi=150)
    plt.close(fig)
