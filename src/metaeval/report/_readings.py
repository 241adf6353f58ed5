"""Plain-language readings generated from the numbers, by explicit rules.

Every sentence of the report's readings comes from one rule of
:data:`RULES` applied to the analyses' results; the rule's id is kept with
the sentence (in ``results.json`` and as a tooltip in the HTML) and the
rules are listed in the methods appendix.  The rules only restate what the
numbers show (which metric is highest, whose intervals overlap, which
cluster a metric is in, which threshold a value passes, under a named
convention); they never test anything the analyses did not test.
Numbers are shown with :func:`._model.fmt`, as in the tables.
"""

from __future__ import annotations

import math

import numpy as np

from ._model import Column, Reading, Table, fmt

#: conventional thresholds used by the rules, with their source
ALPHA_HIGH = 0.9          # Cronbach's alpha / stability: seed paper 002's conventional threshold
ALPHA_ACCEPTABLE = 0.7    # Cronbach's alpha: Nunnally (1978)
KRIPP_RELIABLE, KRIPP_TENTATIVE = 0.8, 0.667   # Krippendorff (2004)
ICC_BANDS = ((0.9, "excellent"), (0.75, "good"), (0.5, "moderate"), (-math.inf, "poor"))  # Koo and Li (2016)
FIT = {"cfi": (">=", 0.95), "tli": (">=", 0.95), "rmsea": ("<=", 0.06), "srmr": ("<=", 0.08)}  # Hu and Bentler (1999)
FACTOR_CORR_HIGH = 0.85   # Brown (2015): factors correlating above .85 lack discriminant validity
P_LEVEL = 0.05
MIN_SYSTEMS = 5           # below this many systems, system-level correlations and tests support no conclusion
# reliability of the human scores a level correlates, below which the level recommends no metric (Nunnally
# 1978's .7, as ALPHA_ACCEPTABLE): Cronbach's alpha over inputs of the system means at system level, ICC(2,k)
# of the raters' mean over the cells at the input, item and global levels (Shrout and Fleiss 1979; ICC(1,k)
# when the raters rotate over the cells)
HUMAN_RELIABILITY_MIN = 0.7


def holm_floor(n_resamples, n_pairs):
    """The smallest Holm-adjusted resampling p-value possible: the smallest resampling p-value is
    1 / (n + 1), and Holm multiplies the smallest of m p-values by m."""
    return n_pairs / (n_resamples + 1)


def resolution_text(n_resamples, n_pairs, alpha):
    """The sentence saying that no pair can be significant after Holm (or "" when some can)."""
    if n_pairs < 1 or holm_floor(n_resamples, n_pairs) <= alpha:
        return ""
    need = math.ceil(n_pairs / alpha)
    return (f"with {n_resamples} resamples the smallest permutation p-value is 1/({n_resamples}+1) = "
            f"{1 / (n_resamples + 1):.2g}, and after Holm's correction over {n_pairs} pairs at least "
            f"{holm_floor(n_resamples, n_pairs):.2g} > alpha = {alpha:g}: this run cannot show any difference "
            f"significant, so the clusters separate nothing (rerun with --n-resamples {need} or more)")

RULES = {
    "data": "The data's size, the human columns used (with their raters), the number of metrics, and "
            "whether texts, repeated runs and contexts exist (they decide which sections run).",
    "corr-top": "For each level: the metric with the highest statistic, its 95% bootstrap interval, and "
                "the other metrics whose interval overlaps it (their upper bound >= its lower bound). "
                "Overlapping intervals mean the correlations alone do not separate those metrics; the "
                "significance clusters test the differences.",
    "corr-quick": "In --quick mode with more than 20 metrics: the bootstrap intervals are computed for 20 "
                  "metrics per human column (chosen round-robin over the levels by their statistic), and the "
                  "report says so; the interval readings cover those metrics only.",
    "corr-zero": "For each level: the metrics whose 95% interval contains 0 (no evidence of association at "
                 "that level) and those whose interval lies below 0.",
    "corr-levels": "Whether the same metric has the highest statistic at every level, or which metric tops "
                   "each level.",
    "clu-top": "For each level: the metrics in the top significance cluster (cluster 1: no metric of the "
               "cluster is significantly better than another, one-sided permutation p <= alpha after Holm's "
               "correction over the pairs, mt-metrics-eval's greedy rule), so the clusters agree with the Holm "
               "p-values of the pair table. Nothing is read from the clusters when the resamples are too few "
               "for any corrected p-value to reach alpha (rule clu-resolution) or, at system level, with fewer "
               "than 5 systems (rule few-systems).",
    "clu-resolution": "With n resamples the smallest permutation p-value is 1/(n+1); when Holm's correction over "
                      "the m pairs lifts it above alpha (m/(n+1) > alpha), no difference can be significant: the "
                      "report says so and draws no conclusion from the clusters.",
    "few-systems": "With fewer than 5 systems the system-level correlation rests on fewer than 5 points: the "
                   "report says the data cannot support a system-level conclusion.",
    "clu-diff": "For each metric in the top cluster at some but not every level: the levels where it is and "
                "where it is not (with its cluster there); and the metrics in the top cluster at every level.",
    "dp-best": "The measure(s) with the lowest discriminative power value (most discriminative) and the "
               "highest (least).",
    "rc-best": "The measure with the highest ranking consistency, and the measures whose RC is within two "
               "Monte Carlo standard errors of it (|RC_best - RC| <= 2 sqrt(se_best^2 + se^2)): this run "
               "does not separate them.",
    "measure-agree": "Whether the most discriminative and the most consistent measure are the same.",
    "rel-agreement": "Rater agreement of each human column: Krippendorff's interval alpha against "
                     "Krippendorff's (2004) convention (>= .800 reliable, .667-.800 tentative, < .667 not "
                     "reliable) and ICC(2,k), the reliability of the raters' mean, in Koo and Li's (2016) "
                     "bands (< .5 poor, .5-.75 moderate, .75-.9 good, >= .9 excellent).",
    "rel-stability": "Metrics whose test-retest stability is below .9 (seed paper 002's conventional "
                     "threshold), with the runs needed to reach it; or that all are at or above it.",
    "rel-alpha": "Columns whose Cronbach's alpha is below .7 (Nunnally 1978: too low to rank systems) or "
                 "between .7 and .9 (below seed paper 002's .9), by name; the count at or above .9.",
    "val-mtmm": "The shares of Campbell-Fiske comparisons where a convergent value (same trait, two raters) "
                "exceeds the heterotrait-heteromethod and the heterotrait-monomethod values.",
    "val-cfa": "A CFA that did not converge or is not admissible is marked not interpretable (nothing else is "
               "read from it); otherwise its fit against Hu and Bentler's (1999) cut-offs (CFI >= .95, TLI >= .95, "
               "RMSEA <= .06, SRMR <= .08), and factor correlations above .85 (Brown 2015: traits not empirically "
               "distinct).",
    "rec-validity": "A warning in the summary when the CFA did not converge or is not admissible: the factor "
                    "analysis supports no conclusion.",
    "val-concurrent": "For each factor: the metric with the highest validity coefficient against its "
                      "factor scores.",
    "diag-ks": "For each human column: the metric with the highest KS score, and metrics whose gap has the "
               "reversed direction (low-quality texts scoring higher).",
    "diag-meta": "Metrics with a negative meta-correlation significant at Holm-corrected p < .05 (analytic over "
                 "the systems; one family: every metric x human column): they agree less with the humans on "
                 "better systems. With fewer than 5 systems no conclusion is read.",
    "diag-sample": "For each human column: the range over metrics of the standard deviation of the "
                   "sample-level correlation at the smallest and the largest subset size.",
    "diag-design": "For each human column: how many metrics correlate significantly (after the design's "
                   "correction) at system level, and at sentence (global) level by the analytic test, flagged as "
                   "assuming independent cells, beside how many have a boot-both 95% interval (resampling "
                   "systems and inputs) excluding 0: the resampling evidence is the one to use.",
    "text-detect": "For each perturbation: the metric that most often prefers the original and the metrics that "
                   "prefer it in less than half of the pairs (ties count against them), or, when none reaches "
                   "one half, every metric's share with its ties.",
    "local-h1": "The metrics whose local accuracy changes significantly with the context (chi-square, Holm "
                "adjusted p <= .05).",
    "local-h2": "The mean weighted tau between the contexts' metric rankings and its permutation p-value.",
    "pref-ceiling": "For each human column with raters, and for acc_eq and kappa vs majority: the human-human "
                    "ceiling with its 95% bootstrap interval, the metric closest to it (the highest value), its "
                    "gap to the ceiling, whether its interval overlaps the ceiling's, and the other metrics whose "
                    "interval overlaps the closest metric's (their upper bound >= its lower bound). Overlap or "
                    "not, no difference is tested (metaeval.compare_judges tests a pair of judges); a metric "
                    "above the ceiling on acc_eq is flagged, since its tie threshold is calibrated on these data "
                    "and the raters' is not. Every metric above the ceiling on any measure (acc_23, acc_eq, "
                    "kappa, Fleiss, alpha) gets a sentence with the reading that implies "
                    "(metaeval.preferences.ceiling_note): it tracks what the raters share rather than any one "
                    "rater, which is reaching the raters' pooled agreement, not being better than a human.",
    "pref-bt": "For each human column with raters: the metric whose Bradley-Terry system ranking is closest to "
               "the raters' (highest Kendall tau-b), and the range of tau_b over the metrics, with the number "
               "of systems ranked.",
    "rec-measure": "Per human column: the most discriminative measure (DP rank 1), the most consistent (RC "
                   "rank 1), and the best by the sum of the two ranks (ties: lower DP); over several human "
                   "columns, the measure with the lowest mean of that sum.",
    "rec-trust": "Per human column and level: the metrics to trust are those in the top significance cluster "
                 "(Holm-corrected) whose 95% interval lies above 0; a metric is flagged when its Cronbach's alpha "
                 "is below .7 or its stability below .9. Only the metrics of the pairwise set were tested. A level "
                 "gets no conclusion when the resamples are too few for any corrected p-value to reach alpha, "
                 "or (system level) with fewer than 5 systems, and no trusted metric when the reliability of "
                 "the human scores at that level is below .7 (Cronbach's alpha over inputs at system level, "
                 "ICC(2,k) of the raters' mean at the input, item and global levels; shown beside each "
                 "recommendation, 'not computed' without raters); 'trusted at every level' needs a conclusion "
                 "at every level.",
    "rec-humans": "A warning when a human column's raters agree poorly (Krippendorff's interval alpha "
                  "< .667): every correlation with it is bounded by its unreliability.",
}


def rules_table():
    return [{"rule": k, "description": v} for k, v in RULES.items()]


_INTROS = {
    "data": "What the report was computed on; the columns used are marked.",
    "correlations": "How well each metric agrees with the human scores at every grouping level (system: the "
                    "systems' mean scores; input: across systems for each input, averaged; item: across "
                    "inputs for each system, averaged; global: all cells), with percentile bootstrap "
                    "intervals resampling systems and inputs.",
    "clusters": "Is metric A really better than metric B? Every pair of the pairwise set is tested with the "
                "paired permutation test Perm-Both (Deutsch et al. 2021); metrics not significantly worse "
                "than the best of their group (one-sided p-values, Holm-corrected over the pairs) share a cluster "
                "(mt-metrics-eval's greedy rule).",
    "measures": "Which of the 12 correlation measures (level x coefficient) to use on this data (seed paper "
                "000): discriminative power DP (mean p-value over the metric pairs; lower separates metrics "
                "better) and ranking consistency RC (Kendall tau-b between the metric rankings on random "
                "halves of the inputs; higher is more stable).",
    "reliability": "How much of a score is noise (seed paper 002): agreement between the human raters, "
                   "test-retest stability of metrics with repeated runs, and Cronbach's alpha over inputs.",
    "validity": "Do the human traits measure distinct qualities (seed paper 002)? The multitrait-multimethod "
                "table of traits x raters and a confirmatory factor analysis with one factor per trait.",
    "diagnostics": "Behaviour beyond one correlation (seed papers 001 and 003): separation of low- and "
                   "high-quality texts (KS), agreement on better vs worse systems (meta-correlation), how many "
                   "texts a pre-assessment needs, and system- vs sentence-level significance.",
    "text": "Does each text metric score an output above its deliberately degraded copy (seed paper 001, "
            "section 2.3.2)?",
    "local": "How often each metric orders two outputs of the same input as the humans do, in each context "
             "(seed paper 004), and whether the context changes the accuracy (H1) or the metrics' order (H2).",
    "preferences": "Do the metrics order two outputs of the same input as the individual raters do (the "
                   "pairwise-preference view of LLM-judge validation: Zheng et al. 2023, Dubois et al. 2023)? "
                   "Each metric of the pairwise set is a judge of every pair of systems on every input, scored "
                   "against each rater's preference by accuracy with ties (acc_23, and acc_eq with a calibrated "
                   "tie threshold, Deutsch et al. 2023) and Cohen's kappa against the other raters' majority, "
                   "next to the same numbers for the raters among themselves (the human-human ceiling), with "
                   "bootstrap intervals over inputs; and the Bradley-Terry system ranking of each metric's "
                   "preferences against the raters'.",
    "recommendation": "Which correlation measure and which metrics to trust on this data, derived by the rules "
                      "below from the sections above (follow the links for the evidence).",
}


def intro(section):
    return _INTROS[section]


def _names(xs, limit=None):
    xs = list(xs)
    if limit is not None and len(xs) > limit:
        return ", ".join(xs[:limit]) + f" and {len(xs) - limit} more"
    if len(xs) <= 1:
        return "".join(xs)
    return ", ".join(xs[:-1]) + " and " + xs[-1]


def _finite(v):
    return v is not None and not (isinstance(v, float) and math.isnan(v))


# ----------------------------------------------------------------------------- sections


def data_readings(info):
    raters = info["raters"]
    hs = [f"{h} ({len(raters[h])} raters)" if h in raters else h for h in info["report_human"]]
    parts = [f"{info['n_systems']} systems x {info['n_inputs']} inputs; human columns used: {_names(hs)}; "
             f"{len(info['report_metrics'])} metrics."]
    parts.append("Texts: " + ("yes (" + ", ".join(info["text_columns"]) + ")" if info["texts"] else "no") + ". "
                 "Metrics with repeated runs: " + (str(len(info["metrics_with_runs"])) if info["metrics_with_runs"]
                                                   else "none") + ". "
                 "Contexts: " + ", ".join(info["contexts"]) + ".")
    if info.get("quick_first_human"):
        parts.append("--quick without --human: the first human column only (pass --human to choose).")
    if info.get("rated_human") and info["rated_human"] != info["report_human"]:
        parts.append("Rater agreement and validity cover every human column with raters ("
                     + ", ".join(info["rated_human"]) + "): they assess the rating design as a whole.")
    return [Reading(" ".join(parts), "data", ["data-columns"])]


def correlation_readings(f, h, levels, method, tid, n_systems=None, n_intervals=None):
    out = []
    if n_intervals is not None:
        out.append(Reading(f"{h}: --quick computed bootstrap intervals for {n_intervals} of "
                           f"{f.metric.nunique()} metrics (the highest at each level, round-robin); the readings "
                           "on intervals below cover those metrics only.", "corr-quick", [tid], h))
    if n_systems is not None and n_systems < MIN_SYSTEMS and "system" in levels:
        out.append(Reading(f"{h}, system level: only {n_systems} systems, too few for a system-level conclusion "
                           f"(the correlation of {n_systems} means; at least {MIN_SYSTEMS} are needed): the "
                           "system-level values are shown but not read.", "few-systems", [tid], h))
    tops = {}
    for lv in levels:
        d = f[f.level == lv]
        d = d[np.isfinite(d.statistic.to_numpy(float))]
        if d.empty:
            out.append(Reading(f"{h}, {lv} level: no metric has a defined {method}.", "corr-top", [tid], h))
            continue
        best = d.loc[d.statistic.idxmax()]
        tops[lv] = best.metric
        others = d[(d.metric != best.metric) & (d.ci_high >= best.ci_low)]
        txt = (f"{h}, {lv} level: the highest {method} is {best.metric} ({fmt(best.statistic)}, 95% CI "
               f"{fmt([best.ci_low, best.ci_high], 'ci')})")
        if _finite(best.ci_low) and len(others):
            txt += (f"; the intervals of {len(others)} other metric(s) overlap it ("
                    f"{_names(others.sort_values('statistic', ascending=False).metric, 5)}), so the "
                    f"correlations alone do not separate them.")
        elif _finite(best.ci_low):
            txt += "; no other metric's interval overlaps it."
        else:
            txt += "."
        out.append(Reading(txt, "corr-top", [tid], h))
        zero = d[(d.ci_low <= 0) & (d.ci_high >= 0)]
        neg = d[d.ci_high < 0]
        d = d[np.isfinite(d.ci_low.to_numpy(float)) | np.isfinite(d.ci_high.to_numpy(float))]
        if len(zero) or len(neg):
            txt = f"{h}, {lv} level: "
            bits = []
            if len(zero):
                bits.append(f"{len(zero)} of {len(d)} metrics have an interval containing 0 "
                            f"({_names(zero.metric, 6)}): no evidence of association at this level")
            if len(neg):
                bits.append(f"{len(neg)} have an interval below 0 ({_names(neg.metric, 6)})")
            out.append(Reading(txt + "; ".join(bits) + ".", "corr-zero", [tid], h))
    if len(tops) > 1:
        if len(set(tops.values())) == 1:
            out.append(Reading(f"{h}: {next(iter(tops.values()))} has the highest {method} at every level.",
                               "corr-levels", [tid], h))
        else:
            out.append(Reading(f"{h}: the top metric depends on the level: "
                               + "; ".join(f"{lv} {m}" for lv, m in tops.items()) + ".", "corr-levels", [tid], h))
    return out


def subset_note(k, subset, excluded, levels):
    if not excluded:
        return f"All {len(subset)} metrics were tested pairwise."
    rule = ("chosen round-robin over the levels by rank of the correlation (the 1st at each level, then the "
            "2nd, ...)" if not isinstance(k, (list, tuple)) else "as given (--pairwise-metrics)")
    return (f"Pairwise set: {len(subset)} metrics, {rule}: {', '.join(subset)}. Not tested: "
            f"{len(excluded)} metrics; a metric outside the set may be statistically indistinguishable from "
            f"the top cluster.")


def cluster_readings(per_level, h, levels, tid, n_resamples=None, n_systems=None):
    out = []
    top = {}
    first = per_level[levels[0]]
    n_pairs = len(first.metrics) * (len(first.metrics) - 1) // 2
    limit = resolution_text(n_resamples, n_pairs, first.alpha) if n_resamples else ""
    if limit:
        out.append(Reading(f"{h}: {limit}.", "clu-resolution", [tid, f"pairs-{h}"], h))
        return out
    for lv in levels:
        c = per_level[lv]
        members = [m for m, k in zip(c.metrics, c.clusters) if k == 1]
        top[lv] = members
        if lv == "system" and n_systems is not None and n_systems < MIN_SYSTEMS:
            out.append(Reading(f"{h}, system level: only {n_systems} systems: the clusters are shown but support "
                               "no conclusion.", "few-systems", [tid], h))
            levels = [x for x in levels if x != "system"]
            continue
        if len(members) == len(c.metrics):
            txt = (f"{h}, {lv} level: all {len(members)} tested metrics are in the top cluster: no tested metric "
                   f"is significantly worse than the best at alpha = {fmt(c.alpha)} after Holm's correction.")
        else:
            txt = (f"{h}, {lv} level: top cluster ({len(members)} of {len(c.metrics)}; Holm-corrected): "
                   f"{_names(members)} ({c.metrics[0]} highest, {fmt(c.statistics[0])}); "
                   f"{int(np.max(c.clusters))} clusters in all.")
        out.append(Reading(txt, "clu-top", [tid], h))
    if len(levels) > 1:
        every = [m for m in per_level[levels[0]].metrics if all(m in top[lv] for lv in levels)]
        some = [m for m in per_level[levels[0]].metrics if any(m in top[lv] for lv in levels) and m not in every]
        for m in some:
            inn = [lv for lv in levels if m in top[lv]]
            out_ = [f"{lv} (cluster {int(per_level[lv].clusters[per_level[lv].metrics.index(m)])})"
                    for lv in levels if m not in top[lv]]
            out.append(Reading(f"{h}: {m} is in the top cluster at {_names([f'{x} level' for x in inn])} but not "
                               f"at {_names(out_)}.", "clu-diff", [tid], h))
        which = "every level" if len(levels) == len(per_level) else f"every level read ({_names(levels)})"
        if every:
            out.append(Reading(f"{h}: in the top cluster at {which}: {_names(every)}.", "clu-diff", [tid], h))
        else:
            out.append(Reading(f"{h}: no metric is in the top cluster at {which}.", "clu-diff", [tid], h))
    return out


def _label(r):
    return f"{r.level} {r.method}"


def measure_readings(tab, h, tid):
    out = []
    d = tab[np.isfinite(tab.dp.to_numpy(float))]
    if len(d):
        lo = d[d.dp == d.dp.min()]
        hi = d.loc[d.dp.idxmax()]
        out.append(Reading(f"{h}: the most discriminative measure is {_names(_label(r) for r in lo.itertuples())} "
                           f"(DP {fmt(lo.dp.iloc[0])}); the least is {_label(hi)} (DP {fmt(hi.dp)}).",
                           "dp-best", [tid], h))
    if "rc" in tab and np.isfinite(tab.rc.to_numpy(float)).any():
        r = tab[np.isfinite(tab.rc.to_numpy(float))]
        best = r.loc[r.rc.idxmax()]
        close = r[(r.index != best.name) &
                  ((best.rc - r.rc).abs() <= 2 * np.sqrt(best.rc_se ** 2 + r.rc_se ** 2))]
        txt = (f"{h}: the most consistent measure is {_label(best)} (RC {fmt(best.rc)} +/- {fmt(best.rc_se)})")
        if len(close):
            txt += (f"; within two Monte Carlo standard errors of it: "
                    f"{_names([_label(x) for x in close.itertuples()], 6)}.")
        else:
            txt += "; no other measure is within two Monte Carlo standard errors."
        out.append(Reading(txt, "rc-best", [tid], h))
        if len(d):
            same = _label(best) in [_label(x) for x in lo.itertuples()]
            out.append(Reading(f"{h}: " + ("the same measure is the most discriminative and the most consistent."
                                            if same else "the most discriminative and the most consistent "
                                                         "measures differ."), "measure-agree", [tid], h))
    return out


def _band(v):
    for cut, name in ICC_BANDS:
        if v >= cut:
            return name
    return "poor"


def reliability_readings(results, humans, metrics):
    out = []
    if "agreement" in results:
        f = results["agreement"].to_frame().set_index(["column", "method"])
        for h in dict.fromkeys(f.index.get_level_values(0)):
            ka = f.loc[(h, "krippendorff_interval"), "statistic"]
            k2 = f.loc[(h, "icc2k"), "statistic"]
            n_r = int(f.loc[(h, "icc2k"), "n_raters"])
            if not _finite(ka):
                continue
            verdict = ("reliable" if ka >= KRIPP_RELIABLE else "tentative" if ka >= KRIPP_TENTATIVE
                       else "not reliable")
            txt = (f"{h}: Krippendorff's interval alpha between single raters is {fmt(ka)} ({verdict} by "
                   f"Krippendorff's convention)")
            k1 = f.loc[(h, "icc1k"), "statistic"] if (h, "icc1k") in f.index else math.nan
            if _finite(k2):
                txt += f"; the mean of the {n_r} raters has ICC(2,k) {fmt(k2)} ({_band(k2)}, Koo and Li)."
            elif _finite(k1):  # rotating raters: ICC(2,k) is undefined, the one-way form applies
                n_1 = int(f.loc[(h, "icc1k"), "n_raters"])
                txt += (f"; the raters differ between cells (rotating), so ICC(2,k) is undefined and the "
                        f"one-way ICC(1,k) of the mean of the {n_1} ratings per cell applies: {fmt(k1)} "
                        f"({_band(k1)}, Koo and Li).")
            else:
                txt += "."
            out.append(Reading(txt, "rel-agreement", ["rel-agreement"]))
    if "stability" in results:
        f = results["stability"].to_frame()
        low = f[f.statistic < ALPHA_HIGH]
        if len(low):
            out.append(Reading("Stability below .9: " + "; ".join(
                f"{r.column} {fmt(r.statistic)} ({fmt(r.runs_needed, 'int')} runs averaged reach .9)"
                for r in low.itertuples()) + f"; the other {len(f) - len(low)} metric(s) with runs are at or "
                "above .9.", "rel-stability", ["rel-stability"]))
        else:
            out.append(Reading(f"All {len(f)} metrics with repeated runs have a stability at or above .9.",
                               "rel-stability", ["rel-stability"]))
    if "consistency" in results:
        f = results["consistency"].to_frame()
        f = f[np.isfinite(f.statistic.to_numpy(float))]
        bad = f[f.statistic < ALPHA_ACCEPTABLE]
        mid = f[(f.statistic >= ALPHA_ACCEPTABLE) & (f.statistic < ALPHA_HIGH)]
        good = f[f.statistic >= ALPHA_HIGH]
        txt = f"Cronbach's alpha: {len(good)} of {len(f)} columns at or above .9"
        if len(mid):
            txt += "; between .7 and .9: " + _names([f"{r.column} ({fmt(r.statistic)})" for r in mid.itertuples()], 8)
        if len(bad):
            txt += "; below .7: " + _names([f"{r.column} ({fmt(r.statistic)})" for r in bad.itertuples()], 8)
        out.append(Reading(txt + ".", "rel-alpha", ["rel-consistency"]))
    return out


def _cfa_problem(fa):
    from ._build import cfa_problem

    return cfa_problem(fa)


def validity_readings(results):
    out = []
    if "mtmm" in results:
        m = results["mtmm"]
        out.append(Reading(
            f"Convergent values (same trait, two raters) exceed the heterotrait-heteromethod values in "
            f"{fmt(100 * m.share_convergent_above_hthm, 'int')}% and the heterotrait-monomethod values in "
            f"{fmt(100 * m.share_convergent_above_htmm, 'int')}% of the Campbell-Fiske comparisons (mean "
            f"convergent {fmt(m.mean_convergent)}, heterotrait-monomethod {fmt(m.mean_htmm)}, "
            f"heterotrait-heteromethod {fmt(m.mean_hthm)}).", "val-mtmm", ["val-campbell-fiske", "val-mtmm"]))
    if "cfa" in results and _cfa_problem(results["cfa"]):
        detail = getattr(results["cfa"], "problem", "") or ""  # validity's own diagnosis and advice, when given
        out.append(Reading(f"Not interpretable: {_cfa_problem(results['cfa'])}; its fit indices, loadings and "
                           "factor correlations are shown for diagnosis only and no reading, recommendation or "
                           "further analysis uses them." + (f" ({detail}.)" if detail else ""), "val-cfa",
                           ["val-cfa-fit", "val-cfa-corr"]))
    elif "cfa" in results:
        fa = results["cfa"]
        fit = fa.fit_frame().set_index("measure")["value"]
        ok, bad = [], []
        for k, (op, cut) in FIT.items():
            if k not in fit.index or not _finite(float(fit[k])):
                continue
            v = float(fit[k])
            good = v >= cut if op == ">=" else v <= cut
            (ok if good else bad).append(f"{k.upper()} {fmt(v)}")
        txt = "CFA fit (Hu and Bentler's cut-offs): "
        txt += ("meets " + _names(ok) if ok else "") + ("; " if ok and bad else "") + \
               ("misses " + _names(bad) if bad else "") + "."
        fc = fa.correlation_matrix()
        high = [(a, b, fc.loc[a, b]) for i, a in enumerate(fc.index) for b in fc.columns[i + 1:]
                if abs(fc.loc[a, b]) > FACTOR_CORR_HIGH]
        if high:
            txt += " Factor correlations above .85 (not empirically distinct, Brown 2015): " + \
                   _names([f"{a}-{b} {fmt(v)}" for a, b, v in high]) + "."
        else:
            txt += " No factor correlation exceeds .85."
        out.append(Reading(txt, "val-cfa", ["val-cfa-fit", "val-cfa-corr"]))
    if "concurrent_validity" in results:
        mat = results["concurrent_validity"].matrix()
        bits = []
        for c in mat.columns:
            col = mat[c].astype(float)
            if col.notna().any():
                bits.append(f"{c}: {col.idxmax()} ({fmt(col.max())})")
        if bits:
            out.append(Reading("Highest validity coefficient against each factor's scores: " + "; ".join(bits) + ".",
                               "val-concurrent", ["val-concurrent"]))
    return out


def with_holm(frame, col="pvalue"):
    """``frame`` with ``pvalue_holm``: Holm's correction over its finite p-values as one family."""
    from ..stats.multitest import adjust_pvalues

    f = frame.copy()
    p = f[col].to_numpy(float)
    out = np.full(len(p), np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = adjust_pvalues(p[ok], method="holm")
    f["pvalue_holm"] = out
    return f


def diagnostic_readings(results, corr=None):
    out = []
    if "ks" in results:
        f = results["ks"].to_frame()
        for h, d in f.groupby("human", sort=False):
            d = d[np.isfinite(d.statistic.to_numpy(float))]
            if d.empty:
                continue
            b = d.loc[d.statistic.idxmax()]
            rev = d[d.direction < 0]
            txt = f"{h}: {b.metric} separates low- from high-quality texts best (KS {fmt(b.statistic)})"
            txt += ("; reversed direction (low-quality texts score higher): " + _names(rev.metric, 6) + "."
                    if len(rev) else "; every gap has the expected direction.")
            out.append(Reading(txt, "diag-ks", ["diag-ks"], h))
    if "meta_correlation" in results:
        f = with_holm(results["meta_correlation"].to_frame())
        sig = f[(f.pvalue_holm < P_LEVEL) & (f.statistic < 0)]
        n_sys = int(f.n_systems.max()) if len(f) else 0
        if n_sys < MIN_SYSTEMS:
            out.append(Reading(f"Meta-correlations over {n_sys} systems: too few for a conclusion (at least "
                               f"{MIN_SYSTEMS} are needed).", "diag-meta", ["diag-meta"]))
        elif len(sig):
            out.append(Reading("Negative meta-correlation with Holm-corrected p < .05 (agreement with humans falls "
                               "on better systems): " + _names([f"{r.metric} with {r.human} ({fmt(r.statistic)})"
                                                                for r in sig.itertuples()], 10) + ".",
                               "diag-meta", ["diag-meta"]))
        else:
            out.append(Reading(f"No metric has a negative meta-correlation with Holm-corrected p < .05 (over the "
                               f"{len(f)} tests of the table).", "diag-meta", ["diag-meta"]))
    if "sample_size" in results:
        f = results["sample_size"].to_frame()
        sizes = sorted(f["size"].unique())
        for h, d in f.groupby("human", sort=False):
            lo, hi = d[d["size"] == sizes[0]]["std"], d[d["size"] == sizes[-1]]["std"]
            txt = (f"{h}: the sample-level correlation on {sizes[0]} random texts has a standard deviation of "
                   f"{fmt(lo.min())} to {fmt(lo.max())} across metrics")
            if len(sizes) > 1:
                txt += f"; on {sizes[-1]} texts, {fmt(hi.min())} to {fmt(hi.max())}"
            out.append(Reading(txt + ".", "diag-sample", ["diag-sample-size"], h))
    if "correlation_design" in results:
        f = results["correlation_design"].to_frame()
        hm = f[(f.kind_1 == "human") & (f.kind_2 == "metric")]
        for h, d in hm.groupby("column_1", sort=False):
            s_ = d[d.level == "system"]
            g_ = d[d.level == "global"]
            txt = (f"{h}: {int(s_.significant.sum())} of {len(s_)} metrics correlate significantly at system level "
                   f"(after the correction of the level's family); at sentence (global) level "
                   f"{int(g_.significant.sum())} of {len(g_)} do by the analytic test, which assumes independent "
                   f"cells although the cells are clustered by system and input, so it overstates significance")
            cf = (corr or {}).get(h)
            if cf is not None:
                g = cf[(cf.level == "global") & cf.metric.isin(list(g_.column_2))]
                excl = int(((g.ci_low > 0) | (g.ci_high < 0)).sum())
                txt += (f"; the resampling evidence (boot-both 95% interval, resampling systems and inputs) "
                        f"excludes 0 for {excl} of {len(g)}")
            out.append(Reading(txt + ".", "diag-design", ["diag-design"], h))
    return out


def text_readings(results):
    out = []
    for name, det in results.items():
        f = det.to_frame()
        f = f[np.isfinite(f.statistic.to_numpy(float))]
        if f.empty:
            continue
        b = f.loc[f.statistic.idxmax()]
        low = f[f.statistic < 0.5]
        if len(low) == len(f):
            txt = (f"{name}: no metric prefers the original in half of the pairs (ties count as misses): " +
                   _names([f"{r.metric} {fmt(r.statistic)} (ties {fmt(r.tie_share)})"
                           for r in f.sort_values("statistic", ascending=False).itertuples()]) + ".")
        else:
            txt = f"{name}: {b.metric} prefers the original most often ({fmt(b.statistic)}, ties {fmt(b.tie_share)})"
            if len(low):
                txt += ("; below one half (ties count as misses): " +
                        _names([f"{r.metric} {fmt(r.statistic)}" for r in low.itertuples()]) + ".")
            else:
                txt += "; every metric prefers the original in at least half of the pairs."
        out.append(Reading(txt, "text-detect", ["text-detection"]))
    return out


def local_readings(results, ctx):
    out = []
    cf = results["chi2"].to_frame()
    sig = cf[cf.pvalue_adjusted <= P_LEVEL]
    out.append(Reading(f"H1 ({ctx}): local accuracy changes significantly with the context for {len(sig)} of "
                       f"{len(cf)} metrics" + (f" ({_names(sig.metric, 8)})" if len(sig) else "") + ".",
                       "local-h1", ["local-chi2"]))
    tau = results["tau"]
    out.append(Reading(f"H2 ({ctx}): mean weighted tau between the contexts' metric rankings {fmt(tau.statistic)} "
                       f"(permutation p {fmt(tau.pvalue, 'p')}).", "local-h2", ["local-tau"]))
    return out


_PREF_LABEL = {"acc_eq": "acc_eq", "kappa_majority": "kappa vs majority"}


def _overlaps(lo1, hi1, lo2, hi2):
    return _finite(lo1) and _finite(hi1) and _finite(lo2) and _finite(hi2) and hi1 >= lo2 and hi2 >= lo1


def preference_readings(frame, taus, h, tid, n_systems=None):
    """Readings of the pairwise-preference table of human column ``h``: ``frame`` is a
    :func:`metaeval.preference_agreement` frame (with the ``human`` ceiling rows), ``taus`` the
    Bradley-Terry tau_b of each judge (NaN for ``human``)."""
    out = []
    for m, label in _PREF_LABEL.items():
        d = frame[frame.measure == m].set_index("judge")
        ceil = d.loc["human"] if "human" in d.index else None
        j = d.drop(index="human", errors="ignore")
        j = j[np.isfinite(j.statistic.to_numpy(float))]
        if j.empty:
            out.append(Reading(f"{h}, {label}: no metric has a defined value.", "pref-ceiling", [tid], h))
            continue
        best = j.statistic.idxmax()
        b = j.loc[best]
        txt = f"{h}, {label}: "
        if ceil is not None and _finite(ceil.statistic):
            txt += (f"the human-human ceiling is {fmt(ceil.statistic)} (95% CI {fmt([ceil.ci_low, ceil.ci_high], 'ci')}); "
                    f"the closest metric is {best} ({fmt(b.statistic)}, 95% CI {fmt([b.ci_low, b.ci_high], 'ci')}), "
                    f"{fmt(abs(ceil.statistic - b.statistic))} {'below' if b.statistic <= ceil.statistic else 'above'} "
                    f"the ceiling")
            if _overlaps(b.ci_low, b.ci_high, ceil.ci_low, ceil.ci_high):
                txt += "; its interval overlaps the ceiling's"
            elif _finite(b.ci_low) and _finite(ceil.ci_low):
                txt += "; its interval does not overlap the ceiling's"
            if m == "acc_eq" and b.statistic > ceil.statistic:
                txt += (" (its tie threshold is calibrated on these data, the raters' ties are not: acc_eq "
                        "favours the metric)")
        else:
            txt += f"the highest value is {best}'s ({fmt(b.statistic)}, 95% CI {fmt([b.ci_low, b.ci_high], 'ci')})"
        others = [k for k, r in j.iterrows() if k != best and _overlaps(r.ci_low, r.ci_high, b.ci_low, b.ci_high)]
        if others:
            txt += (f"; the intervals of {len(others)} other metric(s) overlap {best}'s ({_names(others, 5)}), so "
                    f"these data do not separate them")
        elif len(j) > 1 and _finite(b.ci_low):
            txt += f"; no other metric's interval overlaps {best}'s"
        out.append(Reading(txt + ". No difference was tested.", "pref-ceiling", [tid], h))
    if "above_ceiling" in frame:  # every judge above the human-human ceiling, with the reading it implies
        up = frame[frame.above_ceiling.astype(bool) & (frame.judge != "human")]
        for judge, g in up.groupby("judge", sort=True):
            first = g.iloc[0]
            out.append(Reading(
                f"{h}: {judge} is above the human-human ceiling on {', '.join(g.measure)} "
                f"({first.measure} {fmt(first.statistic)}): {first.notes}.", "pref-ceiling", [tid], h))
    t = {k: v for k, v in taus.items() if k != "human" and _finite(v)}
    if t:
        best = max(t, key=lambda k: (t[k], k))
        lo, hi = min(t.values()), max(t.values())
        out.append(Reading(f"{h}: the Bradley-Terry system ranking closest to the raters' is {best}'s (tau_b "
                           f"{fmt(t[best])}; over the {len(t)} metrics {fmt(lo)} to {fmt(hi)}"
                           + (f"; {n_systems} systems ranked" if n_systems else "") + ")." if len(t) > 1 else
                           f"{h}: Bradley-Terry tau_b of {best}'s system ranking with the raters': {fmt(t[best])}.",
                           "pref-bt", [tid], h))
    return out


# ----------------------------------------------------------------------------- recommendation


def _reliability_flags(state):
    rel = state.get("reliability", {})
    flags = {}
    if "consistency" in rel:
        for r in rel["consistency"].to_frame().itertuples():
            if _finite(r.statistic) and r.statistic < ALPHA_ACCEPTABLE:
                flags.setdefault(r.column, []).append(f"alpha {fmt(r.statistic)}")
    if "stability" in rel:
        for r in rel["stability"].to_frame().itertuples():
            if _finite(r.statistic) and r.statistic < ALPHA_HIGH:
                flags.setdefault(r.column, []).append(f"stability {fmt(r.statistic)}")
    return flags


def human_reliability(state, h, level):
    """``(value, text)``: the reliability of human column ``h``'s scores as level ``level`` correlates
    them, from the report's reliability section (``value`` NaN when it could not be computed, ``text``
    saying which coefficient or why not).

    ``system``: Cronbach's alpha over inputs with the systems as examinees (``consistency``), the
    reliability of the system means.  ``input``, ``item``, ``global``: ICC(2,k) of the raters' mean
    over the system x input cells (``agreement``), the reliability of the cell scores these levels
    correlate, shown with Krippendorff's interval alpha (the agreement of single raters)."""
    rel = state.get("reliability", {})
    if level == "system":
        c = rel.get("consistency")
        f = c.to_frame() if c is not None else None
        if f is None or h not in set(f.column):
            return math.nan, "not computed (Cronbach's alpha over inputs needs 2+ systems and inputs)"
        v = float(f[f.column == h].statistic.iloc[0])
        return v, f"Cronbach's alpha over inputs {fmt(v)}"
    a = rel.get("agreement")
    f = a.to_frame() if a is not None else None
    if f is None or h not in set(f.column):
        return math.nan, "not computed (one rating per cell: no rater agreement)"
    f = f[f.column == h].set_index("method")
    v = float(f.statistic.get("icc2k", math.nan))
    kr = f.statistic.get("krippendorff_interval", math.nan)
    design = next((p.split(":", 1)[1] for p in str(f.signature.get("icc2k", "")).split("|")
                   if p.startswith("raters:")), None)
    v1 = float(f.statistic.get("icc1k", math.nan))
    if not _finite(v) and design in ("rotating", "slots") and _finite(v1):
        # raters nested in the cells: the one-way ICC(1,k) is the reliability of each cell's raters' mean
        # (Shrout and Fleiss 1979, case 1), as `metaeval reliability` reports it
        how = "rotate over the cells" if design == "rotating" else "are slots"
        return v1, (f"ICC(1,k) of the raters' mean {fmt(v1)} (the raters {how}: the one-way form; "
                    f"Krippendorff's alpha {fmt(kr)})")
    if not _finite(v) and design in ("rotating", "slots"):
        # reliability.agreement: ICC(2,k) needs the same raters in every cell; rotating raters or
        # rater slots nest the raters in the cells, so it is NaN and no reliability gate applies
        how = "rotate over the cells" if design == "rotating" else "are slots"
        return v, (f"ICC(2,k) not defined: the raters {how} "
                   f"(it needs the same raters in every cell), so the {HUMAN_RELIABILITY_MIN:g} gate is not applied "
                   f"(Krippendorff's alpha {fmt(kr)})")
    return v, f"ICC(2,k) of the raters' mean {fmt(v)} (Krippendorff's alpha {fmt(kr)})"


def recommend(state, humans, levels, metrics):
    """The recommendation tables and readings (rules ``rec-*``)."""
    from ..measures import measure_table

    tables, readings, data = [], [], {"measures": {}, "trust": {}}
    rows, sigs = [], []
    combined = {}
    for h in humans:
        dp, rc = state["dp"].get(h), state["rc"].get(h)
        if dp is None:
            continue
        tab = measure_table(dp, rc)
        sigs += [dp.signature] + ([rc.signature] if rc is not None else [])
        ok = tab[np.isfinite(tab.dp.to_numpy(float))]
        if ok.empty:
            continue
        best_dp = ok.sort_values(["dp", "level", "method"]).iloc[0]
        row = [h, _label(best_dp), best_dp.dp]
        if rc is not None and np.isfinite(tab.rc.to_numpy(float)).any():
            r_ok = tab[np.isfinite(tab.rc.to_numpy(float))]
            best_rc = r_ok.sort_values(["rc"], ascending=False).iloc[0]
            score = (tab.dp_rank + tab.rc_rank).to_numpy(float)
            order = sorted(range(len(tab)), key=lambda i: (score[i] if np.isfinite(score[i]) else np.inf,
                                                           tab.dp.iloc[i]))
            comb = tab.iloc[order[0]]
            for i in range(len(tab)):
                if np.isfinite(score[i]):
                    combined.setdefault(_label(tab.iloc[i]), []).append(score[i])
            row += [_label(best_rc), best_rc.rc, _label(comb), float(score[order[0]])]
            readings.append(Reading(
                f"{h}: most discriminative {_label(best_dp)} (DP {fmt(best_dp.dp)}), most consistent "
                f"{_label(best_rc)} (RC {fmt(best_rc.rc)}); best by the sum of ranks: {_label(comb)} "
                f"(DP rank {fmt(comb.dp_rank, 'int')} + RC rank {fmt(comb.rc_rank, 'int')}).",
                "rec-measure", [f"measures-{h}"], h))
            data["measures"][h] = {"most_discriminative": _label(best_dp), "most_consistent": _label(best_rc),
                                   "best_combined": _label(comb)}
        else:
            row += [None, None, None, None]
            readings.append(Reading(f"{h}: most discriminative {_label(best_dp)} (DP {fmt(best_dp.dp)}); no "
                                    "ranking consistency was computed.", "rec-measure", [f"measures-{h}"], h))
            data["measures"][h] = {"most_discriminative": _label(best_dp)}
        rows.append(row)
    if rows:
        tables.append(Table("rec-measures", "Correlation measures: the best per human column", [
            Column("human", "human", "text"), Column("best_dp", "most discriminative", "text"),
            Column("dp", "its DP", "num"), Column("best_rc", "most consistent", "text"),
            Column("rc", "its RC", "num"), Column("best_combined", "best by rank sum", "text"),
            Column("rank_sum", "rank sum", "int")], rows, sigs,
            note="From the tables measures-<human column> (rule rec-measure)."))
    if len(combined) and len(data["measures"]) > 1:
        mean = {k: float(np.mean(v)) for k, v in combined.items() if len(v) == len(data["measures"])}
        if mean:
            best = min(mean, key=lambda k: (mean[k], k))
            readings.append(Reading(f"Over the {len(data['measures'])} human columns, {best} ranks best on "
                                    f"average: its DP rank plus its RC rank, averaged over the columns, is "
                                    f"{fmt(mean[best], digits=2)}, the lowest of the measures (lower is better). It "
                                    f"is the measure to prefer on this data.",
                                    "rec-measure", ["rec-measures"]))
            data["overall_measure"] = best
    flags = _reliability_flags(state)
    trows = []
    n_sys = state.get("n_systems")
    for h in humans:
        n_res = state.get("cluster_resamples", {}).get(h, state.get("n_resamples"))
        per_level = state["clusters"].get(h)
        corr = state["corr"].get(h)
        if per_level is None or corr is None:
            continue
        ci = corr.set_index(["metric", "level"])
        first = per_level[levels[0]]
        n_pairs = len(first.metrics) * (len(first.metrics) - 1) // 2
        limit = resolution_text(n_res, n_pairs, first.alpha) if n_res else ""
        why = {}
        cell = {}  # the table's short form of a reason (the reading gives it whole)
        hrel = {lv: human_reliability(state, h, lv) for lv in levels}
        for lv in levels:
            if limit:
                why[lv] = f"no conclusion: too few resamples ({n_res}) for any Holm-corrected p-value to reach alpha"
            elif lv == "system" and n_sys is not None and n_sys < MIN_SYSTEMS:
                why[lv] = f"no conclusion: only {n_sys} systems"
            elif _finite(hrel[lv][0]) and hrel[lv][0] < HUMAN_RELIABILITY_MIN:
                why[lv] = (f"no trusted metric: the human scores are unreliable at this level "
                           f"({hrel[lv][1]} < {HUMAN_RELIABILITY_MIN:g}), so no agreement with them can be trusted")
                cell[lv] = f"no trusted metric: human scores unreliable (< {HUMAN_RELIABILITY_MIN:g})"
        for lv in levels:
            c = per_level[lv]
            top = [m for m, k in zip(c.metrics, c.clusters) if k == 1]
            trust = [m for m in top if _finite(ci.loc[(m, lv), "ci_low"]) and ci.loc[(m, lv), "ci_low"] > 0]
            weak = [m for m in top if m not in trust]
            if lv in why:
                trust, weak = [], []
            caution = [f"{m} ({', '.join(flags[m])})" for m in trust if m in flags]
            trows.append([h, lv, cell.get(lv) or why.get(lv) or ", ".join(trust) or "none", hrel[lv][1],
                          ", ".join(weak) or "-",
                          "; ".join(caution) or "-"])
            data["trust"].setdefault(h, {})[lv] = {"trust": trust, "top_cluster_ci_includes_0": weak,
                                                   "flagged": [m for m in trust if m in flags],
                                                   "no_conclusion": why.get(lv),
                                                   "human_reliability": hrel[lv][0],
                                                   "human_reliability_text": hrel[lv][1]}
        if limit:
            readings.append(Reading(f"{h}: no metric can be recommended from this run: {limit}.", "rec-trust",
                                    [f"clusters-{h}", f"pairs-{h}"], h))
            continue
        read = [lv for lv in levels if lv not in why]
        lv_trust = {lv: data["trust"][h][lv]["trust"] for lv in read}
        txt = f"{h}: " + "; ".join(f"at {lv} level trust {_names(ms, 6) or 'no tested metric'}"
                                  for lv, ms in lv_trust.items())
        if why:
            txt += ("; " if read else "") + "; ".join(f"{lv} level: {w}" for lv, w in why.items())
        if len(levels) > 1 and not why:
            everywhere = [m for m in lv_trust[levels[0]] if all(m in lv_trust[lv] for lv in levels)]
            txt += (f". Trusted at every level (Holm-corrected clusters, intervals above 0): {_names(everywhere)}."
                    if everywhere else ". No metric is trusted at every level.")
        elif why:
            txt += ". No metric can be called trusted at every level: " + _names(list(why)) + \
                   (" has" if len(why) == 1 else " have") + " no conclusion."
        readings.append(Reading(txt, "rec-trust", [f"clusters-{h}", f"corr-{h}"], h))
    if trows:
        tables.append(Table("rec-trust", "Metrics to trust at each level (top Holm-corrected significance "
                            "cluster, interval above 0)", [
            Column("human", "human", "text"), Column("level", "level", "text"),
            Column("trust", "trust", "text"),
            Column("human_reliability", "reliability of the human scores", "text"),
            Column("weak", "top cluster, interval includes 0", "text"),
            Column("caution", "trusted but unreliable (alpha < .7 or stability < .9)", "text")], trows, [],
            note="From the tables clusters-<human column> and corr-<human column>, whose captions carry the "
                 "signatures, and rel-consistency / rel-stability for the flags (rule rec-trust). The "
                 "reliability of the human scores is that of what each level correlates: Cronbach's alpha over "
                 "inputs of the system means (system level; rel-consistency), ICC(2,k) of the raters' mean "
                 "over the cells (input, item and global levels; ICC(1,k) when the raters rotate over the "
                 "cells; rel-agreement, with Krippendorff's alpha of "
                 f"single raters). Below {HUMAN_RELIABILITY_MIN:g} a level recommends no metric: agreement with "
                 "noisy human scores cannot single one out (any correlation is bounded by the square root of "
                 "that reliability)."))
    fa = state.get("validity", {}).get("cfa")
    if fa is not None and _cfa_problem(fa):
        readings.append(Reading(f"Validity: {_cfa_problem(fa)}; the factor analysis is not interpretable and "
                                "supports no conclusion about the human traits (no concurrent validity was "
                                "computed from it).", "rec-validity", ["val-cfa-fit"]))
    rel = state.get("reliability", {})
    if "agreement" in rel:
        f = rel["agreement"].to_frame()
        k = f[(f.method == "krippendorff_interval") & f.column.isin(humans)]
        poor = k[k.statistic < KRIPP_TENTATIVE]
        if len(poor):
            readings.append(Reading(
                "Human ratings with poor single-rater agreement (Krippendorff's interval alpha < .667): " +
                _names([f"{r.column} ({fmt(r.statistic)})" for r in poor.itertuples()]) +
                "; correlations with these columns are attenuated by their unreliability.",
                "rec-humans", ["rel-agreement"]))
    return {"tables": tables, "readings": readings, "data": data}
