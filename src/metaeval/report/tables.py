"""Tables of results for the terminal (rich) and for HTML: views that read result objects only.

The command line prints every result through these views: a function here
takes result objects and returns :class:`TextTable` objects (strings, rounded
here and only here), which :func:`render` prints with ``rich``.  ``rich`` is
imported when a table is printed; the module imports neither numpy nor pandas,
so the command line loads it without cost.
"""

from __future__ import annotations

import html
import math
import sys
from dataclasses import dataclass, field

from .._escape import literal  # noqa: F401  (re-exported: the views' escaping function)

# ----------------------------------------------------------------------------- Jupyter view of results


def _signatures(obj, frame) -> list:
    sig = getattr(obj, "signature", None)
    if isinstance(sig, str):
        return [sig]
    if "signature" in frame.columns:
        import pandas as pd

        return [str(s) for s in pd.unique(frame["signature"].dropna())]
    return []


def result_html(obj) -> str:
    """A result's Jupyter view (``_repr_html_`` of every result): ``to_frame()`` as an HTML
    table, with the signature(s) below it.  Long tables are cut as pandas cuts its own HTML
    view (``display.max_rows``)."""
    import pandas as pd

    frame = obj.to_frame()
    sigs = _signatures(obj, frame)
    shown = frame.drop(columns="signature") if len(sigs) == 1 and "signature" in frame else frame
    table = shown.to_html(index=False, na_rep="NaN", border=0,
                          max_rows=pd.get_option("display.max_rows"))
    caption = "".join(
        f"<div><code>{html.escape(s)}</code></div>" for s in sigs
    )
    return f"<div class=\"metaeval-result\">{table}{caption}</div>"


# ----------------------------------------------------------------------------- terminal tables


def num(v, digits=4):
    """A number as the tables show it: ``-`` for missing, scientific below ``10**-digits``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        if v != 0 and abs(v) < 10 ** (-digits):
            return f"{v:.1e}"
        return f"{v:.{digits}f}"
    return str(v)


#: decimals of every p-value a table prints: enough to tell 0.0498 from 0.0500 (issue 23 item 6)
P_DIGITS = 4


def pval(v):
    """A p-value as the tables show it: :data:`P_DIGITS` decimals, scientific below ``10**-P_DIGITS``."""
    return num(v, P_DIGITS)


def _is_p(column):
    """Whether a result column holds p-values (``pvalue``, ``pvalue_adjusted``, ``p_...``)."""
    c = str(column)
    return c.startswith(("pvalue", "p_")) or c == "p"


def integer(v):
    """A count: ``-`` for missing, ``inf`` for an infinite need (e.g. inputs needed when alpha <= 0)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(int(v))


def interval(lo, hi, digits=3):
    """``[lo, hi]``, or ``-`` when the interval is missing."""
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return "-"
    return f"[{num(lo, digits)}, {num(hi, digits)}]"


#: columns printed left-aligned (names); every other column is right-aligned (numbers)
_LEFT = ("metric", "metric_a", "metric_b", "level", "method", "name", "column", "measure", "factor", "trait",
         "methods")


@dataclass
class TextTable:
    """A table as the terminal shows it: a title, column names, rows of strings and a caption
    (the signatures, printed as plain lines after the table)."""

    title: str
    columns: list
    rows: list = field(default_factory=list)
    caption: str | None = None


def render(table: TextTable, echo=print):
    """Print ``table`` with rich (names literal, no markup), then its caption lines through ``echo``."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = Table(title=Text(literal(table.title)), show_lines=False)
    for c in table.columns:
        left = c in _LEFT
        t.add_column(Text(literal(c)), justify="left" if left else "right", no_wrap=left)
    for r in table.rows:
        t.add_row(*(Text(literal(v)) for v in r))
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(t)
    if table.caption:
        for line in table.caption.splitlines():
            echo(literal(line))

def render_rich(renderable):
    """Print a rich renderable (e.g. :func:`mtmm_table`) as the tables are printed."""
    from rich.console import Console

    Console(width=None if sys.stdout.isatty() else 200).print(renderable)


# ----------------------------------------------------------------------------- MTMM (seed paper 002)


def mtmm_html(result, *, order="method", digits=2):
    """An HTML table of an :class:`~metaeval.validity.MTMM` result with the blocks marked (plain string; no dependency).

    Cells carry a CSS class per block (``mtmm-reliability``,
    ``mtmm-convergent``, ``mtmm-htmm``, ``mtmm-hthm``); a ``<style>``
    element before the table renders reliabilities grey, convergent
    values bold and heterotrait-monomethod values italic (the paper's
    conventions).  Values are rounded to ``digits`` here only.
    """
    m = result.matrix(order=order)
    idx = result._order(order)
    cls = {"reliability": "mtmm-reliability", "convergent": "mtmm-convergent",
           "heterotrait_monomethod": "mtmm-htmm", "heterotrait_heteromethod": "mtmm-hthm"}
    e = html.escape
    out = [
        (
            "<style>.mtmm td{text-align:right;padding:2px 6px}"
            ".mtmm .mtmm-reliability{color:#555;background:#eee}"
            ".mtmm .mtmm-convergent{font-weight:bold;background:#e6f0ff}"
            ".mtmm .mtmm-htmm{font-style:italic;background:#fff4e0}</style>"
        ),
        "<table class=\"mtmm\">",
        (
            f"<caption>MTMM ({e(result.method)}, level {e(result.level)}; diagonal: "
            f"{e(result.reliability)})</caption>"
        ),
        (
            "<thead><tr><th></th><th></th>"
            + "".join(f"<th>{e(str(a))}</th>" for a, _ in m.columns)
            + "</tr>"
        ),
        (
            "<tr><th></th><th></th>"
            + "".join(f"<th>{e(str(b))}</th>" for _, b in m.columns)
            + "</tr></thead><tbody>"
        ),
    ]
    for r, (a, b) in enumerate(m.index):
        cells = []
        for c in range(len(idx)):
            if c < r:
                cells.append("<td></td>")
                continue
            blk = result._block(idx[r], idx[c])
            val = m.iat[r, c]
            txt = "" if not math.isfinite(val) else f"{val:.{digits}f}"
            cells.append(f"<td class=\"{cls[blk]}\">{txt}</td>")
        out.append(f"<tr><th>{e(str(a))}</th><th>{e(str(b))}</th>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


_MTMM_MARK = {
    "reliability": "({})",
    "convergent": "[{}]",
    "heterotrait_monomethod": "{}*",
    "heterotrait_heteromethod": "{}",
}


def mtmm_table(result, *, order="method", digits=2):
    """A rich (terminal) table of an :class:`~metaeval.validity.MTMM` result.

    The blocks are marked so that they read without colour too:
    reliabilities in parentheses and dim, convergent values in brackets and
    bold, heterotrait-monomethod values with an asterisk and italic (the
    paper's convention), heterotrait-heteromethod values plain.  ``rich`` is
    imported here.
    """
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    m = result.matrix(order=order)
    idx = result._order(order)
    t = Table(title=f"MTMM ({result.method}, level {result.level}; diagonal: "
                    f"{result.reliability})",
              caption=escape("(reliability)  [convergent]  heterotrait-monomethod*  "
                             "heterotrait-heteromethod"))
    t.add_column(Text(literal(m.index.names[0])))
    t.add_column(Text(literal(m.index.names[1])))
    for a, b in m.columns:  # names as text: literal, never read as rich markup
        t.add_column(Text(f"{literal(a)}\n{literal(b)}"), justify="right")
    style = {"reliability": "dim", "convergent": "bold", "heterotrait_monomethod": "italic",
             "heterotrait_heteromethod": ""}
    for r, (a, b) in enumerate(m.index):
        cells = []
        for c in range(len(idx)):
            val = m.iat[r, c]
            if c < r or not math.isfinite(val):
                cells.append("")
                continue
            block = result._block(idx[r], idx[c])
            s = style[block]
            txt = escape(_MTMM_MARK[block].format(f"{val:.{digits}f}"))
            cells.append(f"[{s}]{txt}[/{s}]" if s else txt)
        t.add_row(Text(literal(a)), Text(literal(b)), *cells)
    return t


# ----------------------------------------------------------------------------- command-line views
# One function per result: it takes the result objects (and the few labels the command chose) and
# returns the TextTable(s) the command prints.


def _sigs(signatures):
    return "\n".join(sorted(set(signatures)))


def _noted(rows, notes, cols):
    """Rows with a ``note`` column (``*1``, ``*2``, ...) when some row has a note, and the note lines
    for the caption (one story per row: a p-value that disagrees with its interval says why)."""
    if not any(notes):
        return cols, rows, []
    lines, marks = [], []
    for note in notes:
        if note:
            lines.append(note)
            marks.append(f"*{len(lines)}")
        else:
            marks.append("")
    return cols + ["note"], [row + [m] for row, m in zip(rows, marks)], [f"*{k}: {t}" for k, t in
                                                                            enumerate(lines, 1)]


def correlations_table(res, human):
    """:class:`~metaeval.Correlations` as one table; a column equal on every row moves to the title.
    Rows whose p-value and interval disagree get a mark in ``note``, explained under the table."""
    cols = ["metric", "level", "method", "statistic", "CI", "p", "n", "dropped"]
    rows = []
    for r in res:
        stat = num(r.statistic)
        if r.method == "acc_eq":
            stat += f" (eps={num(r.epsilon, 3)})"
        rows.append([r.metric, r.level, r.method, stat, interval(r.ci_low, r.ci_high), pval(r.pvalue),
                     str(r.n), f"{r.n_groups_dropped}/{r.n_groups}"])
    title = f"correlation with {human}"
    for name in ("method", "level"):
        k = cols.index(name)
        values = {row[k] for row in rows}
        if len(values) == 1:
            title += f", {name} {values.pop()}"
            cols.pop(k)
            rows = [row[:k] + row[k + 1:] for row in rows]
    cols, rows, lines = _noted(rows, [r.notes for r in res], cols)
    return TextTable(title, cols, rows, "\n".join([*lines, _sigs(r.signature for r in res)]))


def comparison_table(c, human):
    """One :class:`~metaeval.Comparison` (two metrics), with its note when p and interval disagree."""
    cols, rows, lines = _noted(
        [[c.metric_a, c.metric_b, num(c.statistic_a), num(c.statistic_b), num(c.statistic),
          interval(c.ci_low, c.ci_high), pval(c.pvalue), str(c.n)]], [c.notes],
        ["metric_a", "metric_b", "stat A", "stat B", "delta", "CI", "p", "n"])
    return TextTable(f"{c.metric_a} vs {c.metric_b} ({human})", cols, rows, "\n".join([*lines, c.signature]))


def clusters_table(res, human, *, level, method, test, cluster_correction):
    """The significance clusters of :func:`~metaeval.compare_all`, with the adjusted one-sided
    p-value that placed each metric (<= alpha: it opens a cluster; above: it stays in the one above)."""
    p, against = res.separating()
    rows = [[m, num(s), str(c), pval(q), a or "-"]
            for m, s, c, q, a in zip(res.metrics, res.statistics, res.clusters, p, against)]
    return TextTable(f"{method} at {level} level vs {human}: significance clusters ({test}, clusters: "
                     f"{cluster_correction}, alpha {res.alpha:g})",
                     ["metric", "statistic", "cluster", f"p vs its cluster ({cluster_correction})", "vs"],
                     rows, res.signature)


def measures_table(table, dp, rc, human, n_metrics):
    """Discriminative power and ranking consistency (:func:`~metaeval.measures.measure_table`)."""
    cols = ["level", "method", "DP (rank)"] + (["RC ± se (rank)"] if rc is not None else [])
    rows = []
    for r in table.itertuples():
        row = [r.level, r.method, f"{num(r.dp, 3)} ({num(r.dp_rank, 0)})"]
        if rc is not None:
            row.append(f"{num(r.rc, 3)} ± {num(r.rc_se, 3)} ({num(r.rc_rank, 0)})")
        rows.append(row)
    caption = dp.signature + ("\n" + rc.signature if rc is not None else "")
    return TextTable(f"correlation measures on {human}: {n_metrics} metrics, {len(dp.pairs)} pairs, "
                     f"DP lower is better, RC higher is better", cols, rows, caption)


def reliability_tables(results, target):
    """Stability, consistency and rater agreement (the ``reliability`` command)."""
    out = []
    if "stability" in results:
        f = results["stability"].to_frame()
        out.append(TextTable(f"stability (test-retest over {int(f.n_runs.max())} runs, system means)",
                             ["metric", "method", "statistic", "runs needed", "SEM"],
                             [[r.column, r.method, num(r.statistic), integer(r.runs_needed), num(r.sem)]
                              for r in f.itertuples()], _sigs(f.signature)))
    if "consistency" in results:
        f = results["consistency"].to_frame()
        out.append(TextTable("consistency (Cronbach's alpha: systems x inputs)",
                             ["metric", "alpha", "CI", "SEM", f"inputs for {target}"],
                             [[r.column, num(r.statistic), f"[{num(r.ci_low, 3)}, {num(r.ci_high, 3)}]",
                               num(r.sem), integer(r.inputs_needed)] for r in f.itertuples()],
                             _sigs(f.signature)))
    if "consistency_curve" in results:
        f = results["consistency_curve"].to_frame()
        out.append(TextTable("alpha vs number of inputs (random input subsets; prophecy: Spearman-Brown "
                             "from all inputs)",
                             ["metric", "inputs", "alpha (mean)", "sd", "interval", "prophecy", "subsets"],
                             [[r.column, str(int(r.size)), num(r.alpha_mean), num(r.alpha_sd),
                               interval(r.ci_low, r.ci_high), num(r.prophecy), str(int(r.n_subsets))]
                              for r in f.itertuples()], _sigs(f.signature)))
    if "agreement" in results:
        f = results["agreement"].to_frame()
        cols, rows, lines = _noted([[r.column, r.method, num(r.statistic), interval(r.ci_low, r.ci_high),
                                     pval(r.pvalue), str(r.n_raters), str(r.n_units)] for r in f.itertuples()],
                                   [r.notes if isinstance(r.notes, str) else "" for r in f.itertuples()],
                                   ["column", "method", "statistic", "CI", "p", "raters", "units"])
        out.append(TextTable("rater agreement", cols, rows, "\n".join(lines) or None))
    return out


def campbell_fiske_table(res_mtmm):
    """The Campbell-Fiske comparisons of an :class:`~metaeval.validity.MTMM` result."""
    cf = res_mtmm.campbell_fiske()
    return TextTable(
        "Campbell-Fiske: convergent (same trait, two raters) vs heterotrait blocks",
        ["trait", "methods", "convergent", "> HTHM", "> HTMM"],
        [[r.trait, f"{r.method_a}/{r.method_b}", num(r.convergent, 3), f"{r.n_hthm_exceeded}/{r.n_hthm}",
          f"{r.n_htmm_exceeded}/{r.n_htmm}"] for r in cf.itertuples()],
        f"mean convergent {num(res_mtmm.mean_convergent, 3)}, heterotrait-monomethod "
        f"{num(res_mtmm.mean_htmm, 3)}, heterotrait-heteromethod {num(res_mtmm.mean_hthm, 3)}; "
        f"convergent above HTHM in {num(100 * res_mtmm.share_convergent_above_hthm, 0)}% "
        f"and above HTMM in {num(100 * res_mtmm.share_convergent_above_htmm, 0)}% of comparisons")


#: the CFA fit measures the terminal shows, in this order
CFA_FIT_MEASURES = ("chi2", "df", "chi2_scaled", "cfi", "tli", "rmsea", "rmsea_ci_low", "rmsea_ci_high",
                    "cfi_scaled", "tli_scaled", "rmsea_scaled", "srmr")


def cfa_tables(fa):
    """An interpretable :class:`~metaeval.validity.FactorAnalysis`: its fit and factor correlations.
    A fit that is not interpretable gets no table (:func:`cfa_withheld` says why)."""
    if not fa.interpretable:
        return []
    fit = fa.fit_frame().set_index("measure")["value"]
    fc = fa.correlation_matrix()
    return [TextTable("confirmatory factor analysis: fit", ["measure", "value"],
                      [[k, num(float(fit[k]), 4)] for k in CFA_FIT_MEASURES if k in fit.index]),
            TextTable("factor correlations", ["factor", *fc.columns],
                      [[i, *[num(float(v), 3) for v in row]] for i, row in zip(fc.index, fc.values)],
                      fa.signature)]


def cfa_withheld(fa):
    """The lines printed instead of the estimates of a CFA that is not interpretable."""
    return [f"confirmatory factor analysis: NOT INTERPRETABLE: {fa.problem} "
            "(its fit measures and factor correlations are withheld; the CSV/JSON carry them "
            "with converged/admissible flags)", fa.signature]


def concurrent_validity_table(cv, *, method, level, criterion):
    """A :class:`~metaeval.validity.ConcurrentValidity` as a metric x criterion table."""
    mat = cv.matrix()
    return TextTable(f"concurrent validity ({method}, {level} level, criterion: {criterion})",
                     ["metric", *map(str, mat.columns)],
                     [[str(i), *[num(float(v), 3) for v in row]] for i, row in zip(mat.index, mat.values)])


def frame_table(name, res):
    """Any result with ``to_frame()``: every column but the signature, numbers to 3 decimals
    (p-values to :data:`P_DIGITS`)."""
    f = res.to_frame()
    cols = [c for c in f.columns if c != "signature"]
    rows = [[(pval(v) if _is_p(c) else num(v, 3)) if isinstance(v, float) else str(v)
             for c, v in zip(cols, r)] for r in f[cols].itertuples(index=False)]
    caption = _sigs(f["signature"]) if "signature" in f else None
    return TextTable(name.replace("_", " "), cols, rows, caption)


def score_table(res, frame):
    """Text-metric scores (``metaeval.textmetrics.score``): per metric, scored, missing, mean and sd."""
    import numpy as np

    rows = []
    for col, grp in frame.groupby("metric", sort=False):
        v = grp["score"].to_numpy(float)
        ok = v[~np.isnan(v)]
        rows.append([col, str(ok.size), str(v.size - ok.size), num(float(ok.mean()) if ok.size else float("nan")),
                     num(float(ok.std()) if ok.size else float("nan"))])
    return TextTable(f"text metric scores ({res.n_computed} computed, {res.n_cached} from the cache)",
                     ["metric", "scored", "missing", "mean", "sd"], rows, _sigs(frame.signature))


def detection_table(name, det, perturbation):
    """Perturbation detection (:class:`~metaeval.diagnostics.Detections`) of one perturbation."""
    pr = perturbation
    skipped = ", ".join(f"{k}: {v}" for k, v in pr.skipped.items()) or "none"
    return TextTable(
        f"perturbation detection: {name} ({pr.n_applied} of {pr.n} texts perturbed; skipped: {skipped})",
        ["metric", "accuracy", "ties", "prefers perturbed", "CI", "n", "missing", "excluded", "p (sign)"],
        [[r.metric, num(r.statistic, 3), num(r.tie_share, 3), num(r.less_share, 3),
          f"[{num(r.ci_low, 3)}, {num(r.ci_high, 3)}]", str(r.n), str(r.n_missing), str(r.n_excluded),
          pval(r.pvalue)] for r in det],
        f"{pr.signature}\n" + _sigs(r.signature for r in det))


#: How the local tables name the averages (paper 004's Eq. 2 is the macro average over inputs).
_LOCAL_AVERAGE_WORDS = {"macro": "macro average over inputs (Eq. 2)", "micro": "micro average (pooled pairs)"}


def local_tables(acc, chi, tau, *, context, source, average, ties):
    """Local accuracy by context, the H1 chi-square tests and the H2 weighted-tau matrix (paper 004)."""
    mat = acc.matrix("statistic")
    overall = acc.overall_frame().set_index("metric")["statistic"]
    cf = chi.to_frame()
    tm_ = tau.matrix("tau", ordered=True)
    return [
        TextTable(f"local accuracy by {context} ({source} pairs; {_LOCAL_AVERAGE_WORDS.get(average, average)}, "
                  f"ties {ties})",
                  ["metric", "all", *map(str, mat.columns)],
                  [[str(m), num(float(overall[m]), 3), *[num(float(v), 3) for v in row]]
                   for m, row in zip(mat.index, mat.values)], acc.signature),
        TextTable(f"H1: does accuracy change with {context}? (chi-square per metric)",
                  ["metric", "chi2", "df", "p", "p adj.", "test", "Cramer's V", "n"],
                  [[r.metric, num(r.statistic, 2), str(r.df), pval(r.pvalue), pval(r.pvalue_adjusted),
                    r.test, num(r.cramers_v, 3), str(r.n)] for r in cf.itertuples()], _sigs(cf.signature)),
        TextTable(f"H2: weighted Kendall tau between the metric rankings of {context} contexts "
                  f"(mean {num(tau.statistic, 3)}, p = {pval(tau.pvalue)}; {tau.n_clusters} cluster(s))",
                  [context, *map(str, tm_.columns)],
                  [[str(i), *[num(float(v), 2) for v in row]] for i, row in zip(tm_.index, tm_.values)],
                  tau.signature),
    ]


def preference_tables(results, *, length_unit, length_per):
    """The ``preferences`` command's results: agreement with the raters (with the human-human
    ceiling), the paired comparison, position consistency, length bias and Bradley-Terry."""
    from ..preferences import MEASURES

    out = []
    ag = results["agreement"]
    f = ag.to_frame()
    rows = []
    for w in dict.fromkeys(f["judge"]):
        row = [w]
        for m in MEASURES:
            r = ag.get(w, measure=m)
            row.append(f"{num(r.statistic, 3)} [{num(r.ci_low, 3)}, {num(r.ci_high, 3)}]"
                       if not math.isnan(r.ci_low) else num(r.statistic, 3))
        row.append(num(ag.get(w, measure="acc_eq").epsilon, 3))
        row.append(str(ag.get(w, measure="acc_23").n))
        rows.append(row)
    notes = []  # a judge above the human-human ceiling: the measures and the reading that implies
    for w in dict.fromkeys(f["judge"]):
        above = [r for r in ag if r.judge == w and r.above_ceiling]
        notes.append("" if not above else f"{w} above the ceiling on {', '.join(r.measure for r in above)}: "
                     + " | ".join(f"{r.measure}: {r.notes}" for r in above))
    cols, rows, lines = _noted(rows, notes, ["judge", *MEASURES, "epsilon", "pairs"])
    out.append(TextTable("agreement with the human raters (human = the human-human ceiling, leave-one-rater-out)",
                         cols, rows, "\n".join([*lines, *dict.fromkeys(f["signature"])])))
    if "compare" in results:
        c = results["compare"]
        cols, rows, lines = _noted([[c.measure, num(c.statistic, 4), f"[{num(c.ci_low, 4)}, {num(c.ci_high, 4)}]",
                                     pval(c.pvalue), str(c.n)]], [c.notes],
                                   ["measure", "difference", "CI", "p", "pairs"])
        out.append(TextTable(f"paired comparison: {c.judge_a} - {c.judge_b}", cols, rows,
                             "\n".join([*lines, c.signature])))
    if "position" in results and len(results["position"]):
        pc = results["position"]
        out.append(TextTable("position-swap consistency (A/B vs B/A)",
                             ["judge", "pairs", "consistent", "CI", "first won both", "second won both"],
                             [[r.judge, str(r.n), num(r.consistency, 3), f"[{num(r.ci_low, 3)}, {num(r.ci_high, 3)}]",
                               num(r.first_position, 3), num(r.second_position, 3)] for r in pc],
                             pc[0].signature))
    if "length" in results:
        lb = results["length"]
        unit = "words" if length_unit == "words" else "length units"
        out.append(TextTable(
            f"length bias: log-odds of preferring A per {length_per:g} {unit} of length difference (A - B)",
            ["judge", "labels", "slope", "CI (Wald)", "odds ratio", "p"],
            [[r.judge, str(r.n), num(r.slope, 3), f"[{num(r.ci_low, 3)}, {num(r.ci_high, 3)}]",
              num(r.odds_ratio, 3), pval(r.pvalue)] for r in lb], lb[0].signature))
    bt = results["bradley_terry"]
    rk = bt.ranking()
    out.append(TextTable("Bradley-Terry log-strengths (MM; ties as half wins); tau_b vs human in the last row",
                         ["system", *map(str, rk.columns)],
                         [[str(s), *[num(float(v), 3) for v in row]] for s, row in zip(rk.index, rk.values)]
                         + [["tau_b", *[num(r.tau_b, 3) for r in bt]]], bt[0].signature))
    return out


def span_agreement_table(res, *, match, severity):
    """Span-level rater agreement (:func:`~metaeval.span_agreement`): one row per rater pair."""
    rows = [[r.rater_a, r.rater_b, str(r.n_segments), num(r.precision), num(r.recall), num(r.f1)] for r in res]
    return TextTable(f"span agreement ({match}{', severity' if severity else ''}): mean F1 {num(res.mean_f1)}",
                     ["rater_a", "rater_b", "segments", "precision", "recall", "F1"], rows,
                     res[0].signature if len(res) else "")


def estimates_table(estimates, human):
    """Simulation parameters estimated from data (:func:`~metaeval.simulation.estimate_parameters`)."""
    ef = estimates.to_frame()
    return TextTable(f"parameters estimated from the data (normalized to [0, 1]; human {human})",
                     ["column", "mu", "sigma", "unique", "tie ratio", "rho_sys", "mu_rho_item", "sigma_rho_item"],
                     [[r.column, num(r.mu, 3), num(r.sigma, 3), str(r.n_unique), num(r.tie_ratio, 3),
                       num(r.rho_sys, 3), num(r.mu_rho_item, 3), num(r.sigma_rho_item, 3)]
                      for r in ef.itertuples()])


def simulation_table(frame, signature, *, from_data):
    """Simulated values of the measures (mean over iterations): one row per grid point (or per
    metric with parameters estimated from data), one column per level x coefficient."""
    import pandas as pd

    varying = ("metric",) if from_data else (
        "n_systems", "n_inputs", "rho_sys", "mu_rho_item", "sigma_rho_item", "c_m", "c_h")
    params = [c for c in varying if c in frame and frame[c].astype(str).nunique() > 1]
    measures = list(dict.fromkeys(zip(frame.level, frame.method)))
    short = {"pearson": "r", "spearman": "rho", "kendall_b": "tau_b"}
    label = {f"{lv}:{m}": f"{lv[:3]} {short.get(m, m)}" for lv, m in measures}
    keyed = frame.assign(_m=frame.level + ":" + frame.method)
    cols = [*params, *label.values()]
    rows = []
    if not params:
        vals = dict(zip(keyed._m, keyed.statistic))
        rows.append([num(vals[k], 3) for k in label])
    else:
        # grid order (as run), one row per grid point
        for idx, grp in keyed.groupby(params, sort=False, dropna=False):
            idx = idx if isinstance(idx, tuple) else (idx,)
            vals = dict(zip(grp._m, grp.statistic))
            shown = ["-" if pd.isna(v) else num(v, 3) if isinstance(v, float) else str(v) for v in idx]
            rows.append(shown + [num(float(vals[k]), 3) for k in label])
    return TextTable("simulated values of the measures (mean over iterations)", cols, rows, signature)


def judge_tables(res):
    """An LLM judge's scores (:func:`~metaeval.textmetrics.judge`) and its request counts."""
    import numpy as np

    v = res.scores[~np.isnan(res.scores)]
    s_count, n, m = res.samples.shape
    c = res.counts
    return [
        TextTable(f"LLM judge scores ({n} systems x {m} inputs x {s_count} samples)",
                  ["metric", "cells", "scored", "NaN", "mean", "sd"],
                  [[res.name, str(n * m), str(v.size), str(res.n_nan_cells),
                    num(float(v.mean()) if v.size else float("nan")),
                    num(float(v.std()) if v.size else float("nan"))]]),
        TextTable("requests and answers",
                  ["requests", "cached", "requested", "failed", "retries", "unparseable", "out of scale",
                   "no logprobs", "filled", "no texts"],
                  [[str(c[k]) for k in ("n_requests", "n_cached", "n_requested", "n_failed", "n_retries",
                                        "n_unparseable", "n_out_of_scale", "n_no_logprobs", "n_filled",
                                        "n_missing")]], res.signature),
    ]


def datasets_table(records):
    """The bundled datasets (:func:`~metaeval.list_datasets` records)."""
    cols = list(records[0].keys()) if records else ["name"]
    return TextTable("datasets (bundled, then downloadable: metaeval datasets --fetch NAME)", cols,
                     [[str(d[c]) for c in cols] for d in records])


def judge_pairs_table(frame):
    """The long table of pairwise LLM judgments (:func:`~metaeval.textmetrics.judge_pairs`): its counts."""
    counts = frame.attrs["counts"]
    return TextTable(f"pairwise judgments ({frame['input'].nunique()} inputs x "
                     f"{len(frame[['system_a', 'system_b']].drop_duplicates())} pairs x 2 orders)",
                     ["rows", "requests", "cached", "requested", "failed", "retries", "unparseable", "no texts"],
                     [[str(len(frame))] + [str(counts[k]) for k in (
                         "n_requests", "n_cached", "n_requested", "n_failed", "n_retries", "n_unparseable",
                         "n_missing")]], frame.attrs["signature"])


#: LaTeX's special characters, as text
_LATEX = {"\\": "\\textbackslash{}", "_": "\\_", "%": "\\%", "&": "\\&", "#": "\\#", "$": "\\$",
          "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}


def wmt_table(res, weights=None, *, fmt="text", digits=3):
    """A :class:`~metaeval.wmt.TaskSetResults` as the WMT-style table: text, CSV or LaTeX (booktabs).

    Rows: metrics by decreasing average correlation; columns: average
    correlation, average rank, then ``rank statistic`` per task, with the
    task attributes (lp, level, method) as header rows.
    """
    fr = res.table_frame(weights)
    if fmt == "csv":
        from .._export import to_csv

        return to_csv(fr)  # spreadsheet-formula safe (metaeval._export)
    # every name through literal(): a metric named from a file name can hold an escape
    # sequence (it would reach the terminal) or a newline (it would forge a row)
    heads = [
        ["", "", ""] + [literal(r.task.attr("lp")) for r in res.results],
        ["", "", ""] + [literal(r.task.level) for r in res.results],
        ["metric", "avg corr", "avg rank"] + [literal(r.task.method) for r in res.results],
    ]
    body = []
    labels = res.labels()
    for _, row in fr.iterrows():
        cells = [literal(row["metric"]), f"{row['avg_corr']:.{digits}f}", f"{row['avg_rank']:.2f}"]
        for lab in labels:
            cells.append(f"{int(row[f'{lab}_rank'])} {row[lab]:.{digits}f}")
        body.append(cells)
    if fmt == "latex":
        def esc(x):
            return "".join(_LATEX.get(c, c) for c in x)
        lines = ["\\begin{tabular}{l" + "r" * (len(heads[0]) - 1) + "}", "\\toprule"]
        for h in heads:
            lines.append(" & ".join(esc(c) for c in h) + " \\\\")
        lines.append("\\midrule")
        for c in body:
            lines.append(" & ".join(esc(x) for x in c) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"
    widths = [max(len(r[k]) for r in heads + body) for k in range(len(heads[0]))]
    out = []
    for r in heads + [None] + body:
        if r is None:
            out.append("  ".join("-" * w for w in widths))
            continue
        out.append("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))))
    rules = sorted({p.split(":", 1)[1] for r in res.results for p in r.signature.split("|")
                    if p.startswith("clusters:")})
    if rules:  # the one clustering rule of the run, as the signatures record it
        out.append(f"ranks: significance clusters, clusters:{', '.join(rules)} (holm: one-sided (count+1)/(n+1) "
                   "p-values, Holm-corrected over each task's pairs; mtme, none:mtme: mt-metrics-eval's exact "
                   "rule, count/n uncorrected; none, metaeval: (count+1)/(n+1) uncorrected)")
    return "\n".join(out) + "\n"


def bench_ranking_table(res, digits=3):
    """A :class:`~metaeval.bench.BenchResult`'s ranking over datasets (weighted average correlation
    rescaled to [0, 1], weighted average significance-cluster rank, tasks counted)."""
    fr = res.ranking()
    rows = [[str(r["metric"]), f"{r['avg_corr']:.{digits}f}", f"{r['avg_rank']:.2f}"] for r in fr.to_dict("records")]
    n_ds = len({r.task.data for r in res.tasks.results})
    # avg corr is on mt-metrics-eval's [0, 1] scale, not the statistics' own: said under the table,
    # or 0.757 beside task statistics of 0.35-0.64 reads as a wrong mean
    note = ("avg corr: weighted mean over the tasks of (statistic + 1) / 2 (mt-metrics-eval's AverageCorrs; "
            "0.5 = no correlation); avg rank: weighted mean significance-cluster rank")
    return TextTable(f"ranking over {n_ds} dataset(s), {len(res.tasks.results)} tasks (weights: {res.weighting})",
                     ["metric", "avg corr", "avg rank"], rows, f"{note}\n{res.signature}")


def bench_tasks_table(res, digits=3):
    """Per dataset x human dimension x level: each metric's statistic, its CI and cluster rank."""
    c = res.correlations.set_index(["dataset", "human", "level", "metric"])
    metrics = [res.metric, *res.baselines]
    rows = []
    for r in res.tasks.results:
        cells = [r.task.data, r.task.human, r.task.level]
        for m in metrics:
            key = (r.task.data, r.task.human, r.task.level, m)
            if m not in r.metrics or key not in c.index:
                cells.append("-")
                continue
            row = c.loc[key]
            cells.append(f"{row['statistic']:.{digits}f} [{row['ci_low']:.{digits}f}, {row['ci_high']:.{digits}f}] "
                         f"#{r.rank(m)}")
        rows.append(cells)
    skipped = "\n".join(literal(f"skipped {d}: {w}") for d, w in res.skipped)  # a line each, whatever the names
    return TextTable("statistic [CI] #cluster per dataset, human dimension and level",
                     ["dataset", "human", "level", *metrics], rows, skipped or None)
