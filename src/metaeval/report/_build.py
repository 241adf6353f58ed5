"""Orchestration of the report: which analyses apply, running them, their views.

:func:`build` takes a :class:`~metaeval.Dataset` and a :class:`ReportConfig`,
decides which analyses apply to the data (and records why the others are
skipped), runs each through the public API, and returns a :class:`Report`:
sections of tables (raw values), figures (drawn later from the same result
objects) and readings (:mod:`._readings`).  Nothing here computes a
statistic; every number comes from an analysis function's result.
"""

from __future__ import annotations

import math
import time
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from .._choices import DEFAULT_METHOD, MEASURE_METHODS, REPORT_METHODS, VALIDITY_METHOD
from .._version import __version__
from ..errors import DataError, MetaevalError, ParameterError
from . import _readings as rd
from . import figures as fg
from ._model import Column, Figure, Section, Table, plain

LEVELS = ("system", "input", "item", "global")
# MEASURE_METHODS: the coefficients of seed paper 000's 12 measures (the report adds its method)

#: the two modes; every value is recorded in results.json and in the signatures
MODES = {
    "full": {
        "n_resamples": 1000,      # bootstrap CIs, permutation tests (clusters, DP), alpha CIs
        "n_splits": 1000,         # ranking consistency
        "pairwise": 10,           # metrics in the pairwise sections (clusters, DP, RC) per human column
        "dp_test": "perm-both",
        "sample_resamples": 100,  # pre-assessment sample-size study (seed paper 001 uses 100)
        "curve_subsets": 200,     # alpha-versus-size curve (MetricEval uses 200)
        "tau_resamples": 999,     # local accuracy, H2 permutations
        "chi2_resamples": 9999,   # local accuracy, H1 permutations (small counts)
        "text": True,             # text diagnostics (rescoring perturbed texts)
        "ci_metrics": None,       # bootstrap intervals for every metric
        "resolution": 2,          # cluster tests: smallest Holm p <= alpha / 2 (cluster_resamples)
    },
    "quick": {
        "n_resamples": 100,
        "n_splits": 100,
        "pairwise": 5,
        "dp_test": "perm-both",
        "sample_resamples": 20,
        "curve_subsets": 50,
        "tau_resamples": 99,
        "chi2_resamples": 999,
        "text": False,
        # --quick rule: bootstrap intervals (the bulk of a wide run's time) for at most 20 metrics per
        # human column, chosen as the pairwise set is (round-robin over the levels by the statistic); the
        # other metrics get their statistic without an interval, and the report says so
        "ci_metrics": 20,
        "resolution": 10,         # cluster tests: smallest Holm p <= alpha / 10 (cluster_resamples)
    },
}

#: CPU seconds per unit of work (issue 26.3), calibrated on the 2-core machine of BENCHMARKS.md with the
#: CPU time of every section (``time.process_time`` around each step and around the writer's flushes:
#: ``benchmarks/report_sections.py``) of three runs at load 3.6-7.2: ``report --quick`` on SummEval (1 human
#: column x 43 metrics, 17 x 100; 27.7 CPU-s), ``report --quick`` on the generated 11 x 96 file of
#: ``benchmarks/rated_file.py`` (4 human columns with 3 raters x 12 metrics; 59.6 CPU-s) and the full
#: ``report`` on SummEval (348 CPU-s; BENCHMARKS.md, "First run, start-up, estimates ... second turn").
#: "corr" one bootstrap replicate of one interval on 1600 cells and "corr_fixed" the interval's fixed
#: part (its groups sorted once, the statistic): an interval costs corr_fixed + (n + 1) corr (cells / 1600);
#: "stat" one statistic (human x metric x level); "pair" one permutation resample of a metric pair at one
#: level on 1600 cells and "pair_fixed" the pair's fixed part at that level; "dp" one DP resample of a
#: pair for one coefficient and "dp_fixed" that pair's set-up; "measures_fixed" + "rc_split" x splits the
#: ranking consistency and the rest of the section per human column; "views" + "views_per_column" x
#: human columns the tables and figures (PNG + SVG per figure); "base" the interpreter, imports, data,
#: reliability and validity; "per_column" + "per_column_sample" x the sample-size study's resamples, per
#: human column x metric, mostly the diagnostics.  "compile": compiling the kernels the report uses when
#: neither the shipped nor the user's numba cache has them (a cold report --quick without any cache
#: against a warm one: 28 CPU-s in the first turn, 53 in the second, more kernels since: coldwarm.py).  The first calibration (first turn) made the intervals' cost
#: proportional to the resamples; the full SummEval run measured 30 CPU-s for them where that estimated
#: 256 (and 167 for DP and RC where it estimated 134): an interval's fixed part dominates at 100 and at
#: 1000 resamples.  Third calibration (issue 26.5's kernels and passive OpenMP waiting): the quick
#: SummEval report measured 14.3 CPU-s idle (benchmarks/report_sections.py --quick: correlations 1.0,
#: clusters 1.9, measures 1.2, preferences 0.9, views 6.4, the rest 3.1) where these estimated 27.9;
#: each part was scaled to about 1.3x its measured share, so that a loaded machine stays within 2x.
COST = {"corr": 5.0e-6, "corr_fixed": 0.0125, "stat": 0.0023, "pair": 1.0e-5, "pair_fixed": 0.038,
        "dp": 2.0e-5, "dp_fixed": 0.0052, "measures_fixed": 0.4, "rc_split": 0.004,
        "views": 5.0, "views_per_column": 1.8, "base": 2.5, "per_column": 0.02, "per_column_sample": 0.0005,
        "compile": 45.0,
        # pairwise preferences, per annotator (a metric of the pairwise set or the human ceiling) and pair of
        # outputs: one bootstrap resample, and the fixed part (labels, tie calibration, point estimates);
        # the section's CPU time in the quick and full SummEval runs above (1.1 and 28.2 CPU-s)
        "pref": 3.8e-8, "pref_fixed": 9.5e-6}


#: the clusters' resolution: without an explicit --n-resamples the permutation tests draw enough
#: resamples that the smallest attainable Holm-corrected p-value, m / (n + 1) over m pairs, is at most
#: alpha / resolution (MODES: 10 in the quick mode, where the draws are a small part of the run; 2 in
#: the full mode, whose 45 pairs would need 9000 draws per pair and level for 10), so that a significant
#: pair never reads "p (Holm) = 0.050" (issue 23 item 6: with m / (n + 1) = alpha every significant pair
#: of a quick run sat at the limit, 10/201).
RESOLUTION = MODES["quick"]["resolution"]


def cluster_resamples(n_resamples, n_pairs, alpha, resolution=RESOLUTION):
    """Resamples of the clusters' tests: ``n_resamples``, or more so that ``n_pairs / (n + 1) <=
    alpha / resolution`` (the smallest Holm-corrected p-value over ``n_pairs`` pairs)."""
    return max(int(n_resamples), math.ceil(resolution * n_pairs / alpha) - 1)


def estimate(n_systems, n_inputs, n_humans, n_metrics, cfg, *, n_rated=None, compiled=None):
    """What a run will cost in CPU seconds, from the sizes alone (before any work): ``{"seconds",
    "parts", "text"}``.

    ``n_rated`` is the number of the report's human columns with 2+ individual raters (the pairwise
    preferences section runs for those; default: every human column).  ``compiled=False`` adds the
    compilation of the kernels (no shipped or user numba cache); ``None`` (the default) asks
    :func:`metaeval.stats._jit.kernels_compiled`.

    The bootstrap intervals of the correlation table (humans x metrics x levels x resamples), the
    pairwise tests of the clusters (humans x levels x pairs x resamples) and discriminative power
    (humans x levels x 3 coefficients x pairs x resamples) grow with the resamples; each count is
    multiplied by a cost per unit (:data:`COST`) scaled by the number of cells, plus fixed parts per
    interval, per pair, per human column (figures, ranking consistency) and for the run.  Calibrated to
    within 1.1x of the CPU time of the runs :data:`COST` names (wall time is longer on a loaded machine,
    shorter with idle cores); the text diagnostics, which rescore texts, are not included (17 CPU-s of
    the full SummEval run's 348).
    """
    if compiled is None:
        from ..stats import kernels_compiled

        compiled = kernels_compiled()
    levels = len(cfg.levels)
    n = cfg.value("n_resamples")
    cap = cfg.value("ci_metrics")
    k_ci = n_metrics if cap is None else min(cap, n_metrics)
    k = cfg.value("pairwise")
    p = n_metrics if k == "all" else len(k) if isinstance(k, (tuple, list)) else min(int(k), n_metrics)
    pairs = p * (p - 1) // 2
    n_c = n if cfg.n_resamples is not None or not pairs else cluster_resamples(n, pairs, cfg.alpha,
                                                                                cfg.value("resolution"))
    scale = n_systems * n_inputs / 1600
    parts = {
        "correlation intervals": n_humans * k_ci * levels * (COST["corr_fixed"] + (n + 1) * COST["corr"] * scale),
        "correlation statistics": n_humans * n_metrics * levels * COST["stat"],
        "significance clusters": n_humans * levels * pairs * (COST["pair_fixed"] + n_c * COST["pair"] * scale),
        "discriminative power": n_humans * levels * 3 * pairs * (COST["dp_fixed"] + n * COST["dp"] * scale)
        + n_humans * (COST["measures_fixed"] + COST["rc_split"] * cfg.value("n_splits")),
        # pairwise set + the human ceiling, bootstrapped over the output pairs of every input
        "pairwise preferences": (n_humans if n_rated is None else n_rated) * (p + 1)
        * (n_systems * (n_systems - 1) // 2) * n_inputs * (n * COST["pref"] + COST["pref_fixed"]),
        "figures and tables": COST["views"] + n_humans * COST["views_per_column"],
    }
    if not compiled:
        parts["compiling the kernels"] = COST["compile"]
    per_column = COST["per_column"] + COST["per_column_sample"] * cfg.value("sample_resamples")
    seconds = sum(parts.values()) + COST["base"] + per_column * n_humans * n_metrics
    cap_txt = (f"; --quick rule: bootstrap intervals for the first {k_ci} of {n_metrics} metrics per human column"
               if cap is not None and n_metrics > cap else "")
    cold = "; kernels not compiled yet (no numba cache)" if not compiled else ""
    text = (f"{n_humans} human column(s) x {n_metrics} metrics x {levels} levels on {n_systems} systems x "
            f"{n_inputs} inputs, {n} resamples, pairwise set of {p}{cap_txt}{cold}: about "
            f"{_duration(seconds)} of CPU (rough; mostly {max(parts, key=parts.get)})")
    return {"seconds": seconds, "parts": parts, "text": text}


def _duration(sec):
    if sec < 90:
        return f"{max(5, round(sec / 5) * 5):.0f} s"
    if sec < 5400:
        return f"{sec / 60:.0f} min"
    return f"{sec / 3600:.1f} h"

#: thresholds used by the readings (see :mod:`._readings`)
ALPHA_GOOD, ALPHA_OK = 0.9, 0.7


#: section titles (for a section whose step failed before it was created)
_TITLES = {"data": "Data", "correlations": "Correlations with the human scores",
           "clusters": "Significance clusters",
           "measures": "Which correlation measure to trust: discriminative power and ranking consistency",
           "reliability": "Reliability of metrics and human ratings",
           "validity": "Validity: multitrait-multimethod table and factor analysis",
           "diagnostics": "Diagnostics beyond one correlation", "text": "Text diagnostics: perturbation detection",
           "local": "Local metric accuracy across contexts", "preferences": "Pairwise preferences",
           "recommendation": "Summary and recommendation"}


#: Earlier keywords of :class:`ReportConfig`, still accepted (and recorded in results.json beside
#: the new names): the vocabulary's ``rng`` and ``n_splits``, and ``low``/``high`` as in
#: :func:`metaeval.ks_score`.  Their command-line spellings were renamed with them (``--seed`` ->
#: ``--rng``, ``--splits`` -> ``--n-splits``, ``--ks-low`` -> ``--low``, ``--ks-high`` -> ``--high``).
RENAMED = {"seed": "rng", "splits": "n_splits", "ks_low": "low", "ks_high": "high"}


def _accepts_renamed(cls):
    """``cls(seed=0)`` as ``cls(rng=0)`` (:data:`RENAMED`), and ``obj.seed`` as ``obj.rng``."""
    import functools

    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kw):
        for old, new in RENAMED.items():
            if old in kw:
                if new in kw:
                    raise TypeError(f"ReportConfig: {old}= is the earlier name of {new}=; give {new}= only")
                kw[new] = kw.pop(old)
        init(self, *args, **kw)

    cls.__init__ = __init__
    for old, new in RENAMED.items():
        setattr(cls, old, property(lambda self, new=new: getattr(self, new), doc=f"The earlier name of ``{new}``."))
    return cls


@_accepts_renamed
@dataclass(frozen=True)
class ReportConfig:
    """What the report runs: the keywords of ``metaeval report``'s options.

    ``None`` means the mode's default (:data:`MODES`: the full mode's, or with ``quick`` the quick
    mode's).  The earlier keywords ``seed``, ``splits``, ``ks_low`` and ``ks_high`` (:data:`RENAMED`)
    are still accepted.

    Parameters
    ----------
    human : tuple of str, optional
        The human columns (default: those with 2 or more raters, else all).
    metrics : tuple of str, optional
        The metric columns (default: all).
    method : str
        Coefficient of the correlation tables, clusters and correlation design (validity keeps
        Kendall's tau-b, as seed paper 002).
    levels : tuple of str
        The grouping levels of the correlation sections.
    quick : bool
        The quick mode: fewer resamples (100), a pairwise set of 5 metrics, no text rescoring
        (about a minute on SummEval).
    rng : int, optional
        Random seed, a non-negative integer (not set: fresh entropy, recorded in results.json).
    n_resamples : int, optional
        Bootstrap and permutation resamples (default 1000; quick: 100).
    n_splits : int, optional
        Random half-splits of ranking consistency (default 1000; quick: 100).
    dp_test : str, optional
        The test of discriminative power (default perm-both).
    pairwise : int, "all" or tuple of str, optional
        Metrics of the pairwise sections (clusters, discriminative power, ranking consistency) per
        human column: a number K, ``"all"``, or metric names (default 10; quick: 5).
    context : str, optional
        Context for local metric accuracy: system, input or a context column (default: none, the
        section is skipped).
    text : bool, optional
        Run the text diagnostics, which rescore perturbed texts (default: yes; quick: no).
    text_metrics : tuple of str
        Text metrics of the perturbation-detection test.
    perturbations : tuple of str
        Perturbations of the perturbation-detection test.
    low : float, optional
        KS: low-quality texts have a human score below this.  Not set: seed paper 001's
        thresholds for a known dataset (else the KS score is skipped).
    high : float, optional
        KS: high-quality texts have a human score at or above this.  Not set: as ``low``.
    alpha : float
        Significance level of the clusters.
    cache_dir : str, optional
        Folder of the text-metric score cache (default: none, a temporary folder per run).
    n_jobs : int
        Worker processes, a positive integer (-1: one per core).
    system_scores : str, optional
        The analyses' ``system_scores=`` (default: given system-level scores when the data has
        them).
    """

    human: tuple | None = None
    metrics: tuple | None = None
    method: str = DEFAULT_METHOD  # the correlation tables; validity keeps VALIDITY_METHOD (paper 002)
    levels: tuple = LEVELS
    quick: bool = False
    rng: int | None = None
    n_resamples: int | None = None
    n_splits: int | None = None
    dp_test: str | None = None
    pairwise: object = None
    context: str | None = None
    text: bool | None = None
    text_metrics: tuple = ("bleu", "rouge1")
    perturbations: tuple = ("sentence_reorder", "subject_verb_disagreement")
    low: float | None = None
    high: float | None = None
    alpha: float = 0.05
    cache_dir: str | None = None
    n_jobs: int = 1
    system_scores: str | None = None  # the analyses' system_scores= (None: given when the data has them)

    @property
    def mode(self):
        return "quick" if self.quick else "full"

    def value(self, name):
        name = RENAMED.get(name, name)
        v = getattr(self, name, None) if name in self.__dataclass_fields__ else None
        return MODES[self.mode][name] if v is None else v

    def to_dict(self):
        d = asdict(self)
        for k in MODES["full"]:
            d[k] = self.value(k)
        d["mode"] = self.mode
        for old, new in RENAMED.items():  # the earlier names too, for readers of earlier files
            d[old] = d[new]
        return plain(d)


@dataclass
class Report:
    """The report's content: sections, and the document that results.json holds."""

    sections: list
    meta: dict
    results: dict = field(default_factory=dict)

    def section(self, sid):
        for s in self.sections:
            if s.id == sid:
                return s
        raise KeyError(sid)

    def to_dict(self):
        return {
            **self.meta,
            "sections": [s.to_dict() for s in self.sections],
            "skipped": [{"section": s.id, "title": s.title, "status": s.status, "reason": r}
                        for s in self.sections for r in s.reasons],
            "signatures": sorted({sig for s in self.sections for t in s.tables for sig in t.signatures}),
            "results": plain(self.results),
        }


class Progress:
    """Progress of the whole run (no output); the CLI passes a rich one.

    ``start(n)`` announces n steps; ``step(label, total)`` is a context for
    one step and yields ``bar(k)`` (advance k units) or None.
    """

    def start(self, n_steps):
        pass

    @contextmanager
    def step(self, label, total=None):
        yield None


# ----------------------------------------------------------------------------- helpers


def cfa_problem(fa):
    """Why a CFA result is not interpretable ("" when it is): it did not converge, or its solution
    is not admissible (a negative residual variance or a factor correlation beyond 1).  Read with
    ``getattr`` so results without the flags count as converged and admissible."""
    bad = []
    if not getattr(fa, "converged", True):
        bad.append("the CFA did not converge")
    if not getattr(fa, "admissible", True):
        bad.append("the CFA solution is not admissible (Heywood case)")
    return " and ".join(bad)


def cfa_interpretable(fa):
    return not cfa_problem(fa)



def rated_columns(ds, cols):
    return [c for c in cols if ds.ratings(c).shape[0] >= 2]


def _sigs(frame):
    return sorted(set(frame["signature"])) if "signature" in frame else []


def _per_cell(R):
    """The most common number of scores per scored cell of a (raters|runs, systems, inputs) array."""
    n = np.isfinite(np.asarray(R, dtype=float)).reshape(R.shape[0], -1).sum(axis=0)
    n = n[n > 0]
    if not len(n):
        return 0
    counts = np.bincount(n)
    return int(np.argmax(counts))


def _agreement_note(f):
    """The note under the rater-agreement table: what its p-value column is, and the rows whose
    one-sided ICC p-value disagrees with their two-sided interval (their notes say why)."""
    note = ("p: the F test of ICC > 0 (one-sided; Krippendorff's alpha has none, an en dash). ")
    noted = f[f["notes"].fillna("") != ""] if "notes" in f else f.iloc[:0]
    if len(noted):
        note += (f"{len(noted)} row(s) have a p-value that disagrees with the interval: "
                 + "; ".join(f"{r.column} {r.method}: {r.notes}" for r in noted.itertuples()) + ".")
    return note


def _warning_text(w):
    return f"{w.category.__name__}: {str(w.message).splitlines()[0]}"


@contextmanager
def _record(section):
    """Collect the analyses' warnings into the section (shown in the report)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    seen = getattr(section, "_warnings", None)
    if seen is None:
        seen = section._warnings = {}
    for w in caught:
        if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)):
            continue
        key = _warning_text(w)
        seen[key] = seen.get(key, 0) + 1


def select_humans(ds, human, *, quick=False):
    """The human columns of the report: as given (validated), else those
    with 2+ raters (the averaged dimensions), else every human column; with
    ``quick`` and none given, only the first of these."""
    if human:
        unknown = [h for h in human if h not in ds.human]
        if unknown:
            hint = [h for h in unknown if h in ds.metrics]
            extra = f" ({', '.join(hint)} is a metric column)" if hint else ""
            raise DataError(f"unknown human column(s): {', '.join(unknown)}{extra}; "
                            f"available: {', '.join(ds.human) or 'none'}")
        return list(dict.fromkeys(human))
    if not ds.human:
        raise DataError("the dataset has no human score column: the report needs one (--human)")
    default = rated_columns(ds, ds.human) or list(ds.human)
    return default[:1] if quick else default


def select_metrics(ds, metrics):
    if metrics:
        unknown = [m for m in metrics if m not in ds.metrics]
        if unknown:
            raise DataError(f"unknown metric column(s): {', '.join(unknown)}; "
                            f"available: {', '.join(ds.metrics)}")
        return list(dict.fromkeys(metrics))
    if not ds.metrics:
        raise DataError("the dataset has no metric column: the report needs at least one")
    return list(ds.metrics)


def pairwise_subset(corr_frame, levels, k):
    """The K metrics of the pairwise sections, round-robin over the levels:
    the metric ranked 1st at each level (in level order), then 2nd, ...,
    until K distinct metrics are chosen (ranks by the correlation's
    statistic, descending; undefined statistics last; ties by name)."""
    ranked = {}
    for lv in levels:
        f = corr_frame[corr_frame.level == lv]
        stat = f.statistic.to_numpy(float)
        key = sorted(range(len(f)), key=lambda i: (not np.isfinite(stat[i]), -stat[i] if np.isfinite(stat[i]) else 0,
                                                   f.metric.iloc[i]))
        ranked[lv] = [f.metric.iloc[i] for i in key]
    out = []
    depth = max(len(v) for v in ranked.values()) if ranked else 0
    for r in range(depth):
        for lv in levels:
            if r < len(ranked[lv]) and ranked[lv][r] not in out:
                out.append(ranked[lv][r])
                if len(out) >= k:
                    return out
    return out


# ----------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, ds, cfg, ds_runs, progress):
        self.ds, self.cfg, self.progress = ds, cfg, progress or Progress()
        self.ds_runs = ds_runs if ds_runs is not None else ds
        self.humans = select_humans(ds, cfg.human, quick=cfg.quick)
        self.metrics = select_metrics(ds, cfg.metrics)
        if cfg.method not in REPORT_METHODS:
            raise ParameterError(f"method={cfg.method!r}: the report offers {', '.join(REPORT_METHODS)}")
        bad = [lv for lv in cfg.levels if lv not in LEVELS]
        if bad or not cfg.levels:
            raise ParameterError(f"levels {bad or '(none)'}: choose among {', '.join(LEVELS)}")
        self.levels = [lv for lv in LEVELS if lv in cfg.levels]
        from ..textmetrics import METRICS as _TEXT_METRICS  # the registry, user-registered names too

        unknown = [m for m in cfg.text_metrics if m not in _TEXT_METRICS]
        if unknown:
            # checked here, not where the text section runs: --quick skips that section, and a
            # misspelt name was unused there and read as a missing extra otherwise
            raise ParameterError(f"text_metrics: unknown text metric(s) {', '.join(map(repr, unknown))}; "
                                 f"choose from {', '.join(_TEXT_METRICS)}")
        # levels the design cannot have: one system has no system or input level (both correlate
        # across systems), one input no item level (per system, across its inputs); they are left
        # out with a note instead of failing every pairwise section
        n_sys, n_inp = len(ds.systems), len(ds.inputs)
        why = {"system": n_sys < 2 and f"{n_sys} system", "input": n_sys < 2 and f"{n_sys} system",
               "item": n_inp < 2 and f"{n_inp} input"}
        self.dropped_levels = [(lv, why[lv]) for lv in self.levels if why.get(lv)]
        self.levels = [lv for lv in self.levels if not why.get(lv)]
        if not self.levels:
            lv, n = self.dropped_levels[0]
            raise DataError(f"levels {', '.join(lv for lv, _ in self.dropped_levels)}: the data has {n} only, "
                            "so none of them can be computed; add the global level (command line: --level global)")
        if cfg.context is not None and cfg.context not in ds.context_names:
            raise DataError(f"context {cfg.context!r} is not a context of the data; available: "
                            f"{', '.join(ds.context_names)}")
        k = cfg.value("pairwise")
        if isinstance(k, (tuple, list)):
            missing = [m for m in k if m not in self.metrics]
            if missing:
                shown = ", ".join(map(repr, self.metrics[:20])) + (" ..." if len(self.metrics) > 20 else "")
                raise DataError(f"pairwise names {', '.join(map(repr, missing))}, not among the report's metrics "
                                f"({shown}); check the names (command line: --pairwise-metrics)")
            if len(set(k)) < 2:
                raise ParameterError("the pairwise set needs at least 2 metrics")
        elif k != "all" and (not isinstance(k, int) or k < 2):
            raise ParameterError(f"pairwise={k!r}: give a number of metrics >= 2, 'all', or metric names")
        self.seed = cfg.rng if cfg.rng is not None else int(np.random.SeedSequence().entropy)
        self.n = cfg.value("n_resamples")
        self.results = {}
        self.state = {"corr": {}, "clusters": {}, "dp": {}, "rc": {}, "subset": {}}
        self.sections = {}
        self.failures = []

    # -- infrastructure
    def sec(self, sid, title, intro=""):
        if sid not in self.sections:
            self.sections[sid] = Section(sid, title, intro)
        return self.sections[sid]

    def steps(self):
        """The run as (label, units, function, section id) steps, in order."""
        out = [("data overview", None, self.overview, "data")]
        for h in self.humans:
            out.append((f"correlations with {h}", len(self.metrics) * len(self.levels),
                        lambda bar, h=h: self.correlations(h, bar), "correlations"))
        for h in self.humans:
            out.append((f"significance clusters for {h}", None, lambda bar, h=h: self.clusters(h, bar), "clusters"))
        for h in self.humans:
            out.append((f"correlation measures (DP, RC) for {h}", None, lambda bar, h=h: self.measures(h, bar),
                        "measures"))
        out += [("reliability", None, self.reliability, "reliability"),
                ("validity", None, self.validity, "validity"),
                ("diagnostics", None, self.diagnostics, "diagnostics"),
                ("text diagnostics", None, self.text_diagnostics, "text"),
                ("local accuracy", None, self.local, "local"),
                ("pairwise preferences", None, self.preferences, "preferences"),
                ("recommendation", None, self.recommendation, "recommendation")]
        return out

    def run(self, writer=None):
        """Run the steps; a step that fails is recorded (its section skipped, or partial when it had
        finished tables) and the others run.  After every step the finished tables and figures are
        written by ``writer`` (a :class:`._render.Writer`), so nothing computed is lost."""
        steps = self.steps()
        self.progress.start(len(steps))
        for label, units, fn, sid in steps:
            with self.progress.step(label, units) as bar:
                try:
                    fn(bar)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as exc:  # one failing analysis must not lose the others
                    s = self.sections.get(sid) or self.sec(sid, _TITLES.get(sid, label))
                    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    s.skip(f"{label} failed ({type(exc).__name__}: {msg}); the rest of the report is complete",
                           part=bool(s.tables or s.figures))
                    self.failures.append({"step": label, "section": sid, "error": type(exc).__name__,
                                          "message": msg})
                if writer is not None:
                    for s in self.sections.values():
                        writer.flush(s)
        order = ["data", "correlations", "clusters", "measures", "reliability", "validity", "diagnostics",
                 "text", "local", "preferences", "recommendation"]
        sections = [self.sections[k] for k in order if k in self.sections]
        for s in sections:
            seen = getattr(s, "_warnings", {})
            s.warnings = [*s.warnings, *({"warning": k, "count": v} for k, v in seen.items())]
        return sections

    def _timed(self, section, fn):
        t = time.perf_counter()
        with _record(section):
            out = fn()
        section.seconds += time.perf_counter() - t
        return out

    # -- sections
    def overview(self, bar=None):
        ds = self.ds
        s = self.sec("data", "Data", rd.intro("data"))
        t0 = time.perf_counter()
        texts = ds.texts
        has_runs = [m for m in self.metrics if self.ds_runs.ratings(m).shape[0] >= 2]
        rows = []
        for c in ds.columns:
            kind = "human" if c in ds.human else "metric"
            sc = ds.scores(c)
            R = self.ds_runs.ratings(c) if kind == "metric" else ds.ratings(c)
            used = c in self.humans or c in self.metrics
            rows.append([c, kind, int(R.shape[0]), _per_cell(R), int(np.isnan(sc).sum()), bool(used)])
        s.tables.append(Table("data-columns", "Score columns", [
            Column("column", "column", "text"), Column("kind", "kind", "text"),
            Column("raters_or_runs", "raters / runs", "int"), Column("per_cell", "per cell", "int"),
            Column("missing", "missing cells", "int"), Column("used", "in this report", "bool")], rows, [],
            note="The data as loaded: the number of raters (human columns) or runs (metrics) in the file, how many "
                 "of them score a cell (the most common count over the scored cells: fewer than in the file when "
                 "raters rotate over the cells), and the cells without a score."))
        self.data_info = {
            "name": ds.name, "n_systems": len(ds.systems), "n_inputs": len(ds.inputs),
            "human": list(ds.human), "metrics": list(ds.metrics),
            "report_human": list(self.humans), "report_metrics": list(self.metrics),
            "raters": {h: list(ds.rater_labels(h)) for h in ds.human if ds.ratings(h).shape[0] >= 2},
            "metrics_with_runs": has_runs,
            "texts": texts is not None, "text_columns": [] if texts is None else
            [c for c in texts.columns if c not in ("system", "input")],
            "contexts": list(ds.context_names),
            "quick_first_human": bool(self.cfg.quick and not self.cfg.human and len(select_humans(ds, None)) > 1),
            "rated_human": rated_columns(ds, ds.human),
        }
        s.readings += rd.data_readings(self.data_info)
        # the data layer's note on failure codes (-1 on a 1-5 scale, ...) was given when the file was
        # read; the report shows it too, since such codes enter every correlation as scores
        from ..data import warn_undeclared

        with _record(s):
            declared = ds.bounds
            warn_undeclared({c: np.asarray(ds.ratings(c), float) for c in ds.columns},
                            [c for c in ds.columns if c not in declared])
        s.seconds += time.perf_counter() - t0

    def correlations(self, h, bar):
        from ..correlation import correlate

        s = self.sec("correlations", "Correlations with the human scores", rd.intro("correlations"))
        if "metaeval.correlate" not in s.functions:
            s.functions.append("metaeval.correlate")
            for lv, n in self.dropped_levels:
                s.skip(f"level {lv} left out: the data has {n} only, and the {lv} level correlates across "
                       f"{'inputs' if lv == 'item' else 'systems'}", part=True)
        cap = self.cfg.value("ci_metrics")
        ci_set = list(self.metrics)
        if cap is not None and len(self.metrics) > cap:  # the --quick rule (MODES): intervals for `cap` metrics
            import pandas as pd

            point = self._timed(s, lambda: correlate(
                self.ds, h, metrics=self.metrics, level=self.levels, method=self.cfg.method, ci="none",
                system_scores=self.cfg.system_scores))
            pf = point.to_frame()
            ci_set = pairwise_subset(pf, self.levels, cap)
            res = self._timed(s, lambda: correlate(
                self.ds, h, metrics=ci_set, level=self.levels, method=self.cfg.method, ci="boot-both",
                n_resamples=self.n, rng=self.seed, n_jobs=self.cfg.n_jobs, progress=bar,
                system_scores=self.cfg.system_scores))
            f = pd.concat([res.to_frame(), pf[~pf.metric.isin(ci_set)]], ignore_index=True)
            self.results.setdefault("correlations", {})[h] = {
                "statistics": point.to_dict(), "intervals": res.to_dict(), "interval_metrics": ci_set}
        else:
            res = self._timed(s, lambda: correlate(
                self.ds, h, metrics=self.metrics, level=self.levels, method=self.cfg.method, ci="boot-both",
                n_resamples=self.n, rng=self.seed, n_jobs=self.cfg.n_jobs, progress=bar,
                system_scores=self.cfg.system_scores))
            f = res.to_frame()
            self.results.setdefault("correlations", {})[h] = res.to_dict()
        self.state["corr"][h] = f
        self.state.setdefault("ci_metrics", {})[h] = ci_set
        first = f[f.level == self.levels[0]].set_index("metric").statistic
        order = sorted(self.metrics, key=lambda m: (not np.isfinite(first[m]), -first[m] if np.isfinite(first[m]) else 0, m))
        cols = [Column("metric", "metric", "text")]
        for lv in self.levels:
            cols += [Column(f"{lv}", f"{lv}", "num"), Column(f"{lv}_ci", f"{lv} 95% CI", "ci")]
        idx = f.set_index(["metric", "level"])
        rows = []
        for m in order:
            row = [m]
            for lv in self.levels:
                r = idx.loc[(m, lv)]
                row += [r.statistic, [r.ci_low, r.ci_high]]
            rows.append(row)
        dropped = f[f.n_groups_dropped > 0]
        note = ""
        if len(ci_set) < len(self.metrics):
            note = (f"--quick rule: bootstrap intervals for {len(ci_set)} of {len(self.metrics)} metrics (chosen "
                    f"round-robin over the levels by their statistic, as the pairwise set); the others have their "
                    f"statistic only (an en dash for the interval). Run without --quick for every interval. ")
        if len(dropped):
            note += (f"{len(dropped)} metric x level entries dropped undefined groups (constant scores or too "
                    f"few pairs); the counts are in results.json (n_groups_dropped).")
        noted = f[f["notes"].fillna("") != ""] if "notes" in f else f.iloc[:0]
        if len(noted):  # one story per row: the p-values are in results.json, and say when they disagree
            note += (f" {len(noted)} metric x level entries have an analytic p-value (results.json, pvalue) that "
                     f"disagrees with their interval (below alpha beside an interval containing 0, or the reverse): "
                     f"the p-value treats the cells as independent, the interval resamples systems and inputs; read "
                     f"the interval (each such entry's notes field says why: "
                     f"{', '.join(f'{m} ({lv})' for m, lv in zip(noted.metric[:5], noted.level[:5]))}"
                     f"{', ...' if len(noted) > 5 else ''}).")
        tid = f"corr-{h}"
        s.tables.append(Table(tid, f"{h}: {self.cfg.method} at each level with 95% bootstrap intervals "
                              f"(rows ordered by the {self.levels[0]}-level value)", cols, rows, _sigs(f),
                              note=note, group=h))
        from . import figures as fg

        s.figures.append(Figure(f"fig-corr-{h}", f"{h}: correlations with intervals",
                                lambda f=f, h=h: fg.correlation_intervals(f, levels=self.levels, order=order,
                                                                          title=f"{self.cfg.method} with {h}"),
                                alt=f"Dot plot of each metric's {self.cfg.method} with {h} at each level, "
                                    f"with 95% intervals", group=h))
        s.readings += rd.correlation_readings(f, h, self.levels, self.cfg.method, tid,
                                              n_systems=len(self.ds.systems),
                                              n_intervals=len(ci_set) if len(ci_set) < len(self.metrics) else None)

    def clusters(self, h, bar):
        from ..compare import compare_all

        s = self.sec("clusters", "Significance clusters", rd.intro("clusters"))
        if "metaeval.compare_all" not in s.functions:
            s.functions.append("metaeval.compare_all")
        if len(self.metrics) < 2:
            if not s.reasons:
                s.skip("one metric: significance clusters need at least 2 metrics")
            return
        k = self.cfg.value("pairwise")
        if isinstance(k, (tuple, list)):
            subset = list(dict.fromkeys(k))
        elif k == "all":
            subset = list(self.metrics)
        else:
            subset = pairwise_subset(self.state["corr"][h], self.levels, int(k))
        self.state["subset"][h] = subset
        n_pairs = len(subset) * (len(subset) - 1) // 2
        if bar is not None and hasattr(bar, "set_total"):
            bar.set_total(n_pairs * len(self.levels))
        # without an explicit --n-resamples, the clusters' permutation tests get enough resamples that no
        # decision sits at the resolution limit (cluster_resamples)
        n_test = self.n
        if self.cfg.n_resamples is None and n_pairs:
            n_test = cluster_resamples(self.n, n_pairs, self.cfg.alpha, self.cfg.value("resolution"))
        per_level = {}
        for lv in self.levels:
            per_level[lv] = self._timed(s, lambda lv=lv: compare_all(
                self.ds, h, metrics=subset, level=lv, method=self.cfg.method, test="perm-both",
                n_resamples=n_test, correction="holm", cluster_correction="holm", alpha=self.cfg.alpha,
                rng=self.seed, n_jobs=self.cfg.n_jobs, progress=bar, system_scores=self.cfg.system_scores))
        self.state["clusters"][h] = per_level
        self.state.setdefault("cluster_resamples", {})[h] = n_test
        self.results.setdefault("clusters", {})[h] = {lv: c.to_dict() for lv, c in per_level.items()}
        first = per_level[self.levels[0]]
        order = list(first.metrics)
        cols = [Column("metric", "metric", "text")]
        for lv in self.levels:
            cols += [Column(lv, f"{lv}", "num"), Column(f"{lv}_cluster", f"{lv} cluster", "int"),
                     Column(f"{lv}_p_cluster", f"{lv} p vs its cluster (Holm)", "p")]
        separating = {lv: per_level[lv].separating()[0] for lv in self.levels}
        rows = []
        for m in order:
            row = [m]
            for lv in self.levels:
                c = per_level[lv]
                i = c.metrics.index(m)
                row += [c.statistics[i], int(c.clusters[i]), separating[lv][i]]
            rows.append(row)
        tid = f"clusters-{h}"
        excluded = [m for m in self.metrics if m not in subset]
        note = rd.subset_note(k, subset, excluded, self.levels)
        note += (" 'p vs its cluster': the Holm-corrected one-sided p-value that placed the metric, the smallest "
                 "over the members of the cluster above it when it was visited (<= alpha opens a new cluster, "
                 "above alpha keeps it there; metaeval.Comparisons.separating).")
        if n_test != self.n:
            note += (f" Permutation resamples: {n_test} (not {self.n}) so that the smallest Holm-corrected p-value "
                     f"over {n_pairs} pairs, {n_pairs}/({n_test}+1) = {n_pairs / (n_test + 1):.4f}, is at most "
                     f"alpha/{self.cfg.value('resolution')} and no decision sits at the resolution limit.")
        s.tables.append(Table(tid, f"{h}: {self.cfg.method} and significance cluster (1 = top) at each level",
                              cols, rows, [c.signature for c in per_level.values()], note=note, group=h))
        from ..stats.multitest import adjust_pvalues

        prow = []
        for lv in self.levels:
            c = per_level[lv]
            iu = np.triu_indices(len(c.metrics), 1)  # the clusters' family: "row metric better", Holm
            holm_better = dict(zip(zip(*iu), adjust_pvalues(c.better[iu], method="holm")))
            for p in c.to_frame().itertuples():
                i, j = c.metrics.index(p.metric_a), c.metrics.index(p.metric_b)
                hb = holm_better.get((i, j)) if i < j else None
                prow.append([lv, p.metric_a, p.metric_b, p.statistic, p.pvalue, p.pvalue_greater, p.pvalue_adjusted,
                             hb])
        s.tables.append(Table(f"pairs-{h}", f"{h}: every tested pair (delta = A - B)", [
            Column("level", "level", "text"), Column("metric_a", "metric A", "text"),
            Column("metric_b", "metric B", "text"), Column("delta", "delta", "num"),
            Column("p", "p (two-sided)", "p"), Column("p_greater", "p (A better)", "p"),
            Column("p_holm", "p (two-sided, Holm)", "p"),
            Column("p_greater_holm", "p (A better, Holm): the clusters' test", "p")], prow,
            [c.signature for c in per_level.values()], group=h,
            note="The clusters separate A from B when 'p (A better, Holm)' <= alpha: the one-sided p-values of "
                 "the pairs, Holm-corrected as one family. The two-sided Holm p-value answers 'do A and B "
                 "differ?' and is about twice as large."))
        from . import figures as fg

        s.figures.append(Figure(f"fig-clusters-{h}", f"{h}: significance clusters",
                                lambda per_level=per_level, order=order, h=h: fg.cluster_map(
                                    per_level, order=order, title=f"significance clusters, {h}"),
                                alt=f"Grid of metrics by level showing the cluster rank for {h}", group=h))
        s.readings += rd.cluster_readings(per_level, h, self.levels, tid, n_resamples=n_test,
                                          n_systems=len(self.ds.systems))

    def measures(self, h, bar):
        from ..measures import discriminative_power, measure_table, ranking_consistency

        s = self.sec("measures", "Which correlation measure to trust: discriminative power and ranking "
                     "consistency", rd.intro("measures"))
        subset = self.state["subset"].get(h, [])
        if len(subset) < 2:
            if not s.reasons:
                s.skip("fewer than 2 metrics: discriminative power and ranking consistency need a set of metrics")
            return
        for fn in ("metaeval.discriminative_power", "metaeval.ranking_consistency"):
            if fn not in s.functions:
                s.functions.append(fn)
        methods = list(dict.fromkeys([*MEASURE_METHODS, self.cfg.method]))
        sel = dict(levels=self.levels, methods=methods)
        dp = self._timed(s, lambda: discriminative_power(
            self.ds, h, metrics=subset, test=self.cfg.value("dp_test"), n_resamples=self.n, rng=self.seed,
            n_jobs=self.cfg.n_jobs, progress=bar, **sel))
        rc = None
        if len(subset) < 3:
            s.skip(f"{h}: ranking consistency needs at least 3 metrics (the pairwise set has {len(subset)})",
                   part=True)
        elif len(self.ds.inputs) < 4:
            s.skip(f"ranking consistency splits the inputs in halves; the data has {len(self.ds.inputs)} "
                   f"input(s), at least 4 are needed", part=True)
        else:
            rc = self._timed(s, lambda: ranking_consistency(
                self.ds, h, metrics=subset, n_splits=self.cfg.value("n_splits"), rng=self.seed,
                n_jobs=self.cfg.n_jobs, progress=bar, **sel))
        self.state["dp"][h], self.state["rc"][h] = dp, rc
        self.results.setdefault("measures", {})[h] = {
            "discriminative_power": dp.to_dict(), "ranking_consistency": None if rc is None else rc.to_dict()}
        tab = measure_table(dp, rc)
        cols = [Column("level", "level", "text"), Column("method", "method", "text"),
                Column("dp", "DP (lower is better)", "num"), Column("dp_rank", "DP rank", "int")]
        keys = ["level", "method", "dp", "dp_rank"]
        if rc is not None:
            cols += [Column("rc", "RC (higher is better)", "num"), Column("rc_se", "RC s.e.", "num"),
                     Column("rc_rank", "RC rank", "int")]
            keys += ["rc", "rc_se", "rc_rank"]
        tid = f"measures-{h}"
        sigs = [dp.signature] + ([rc.signature] if rc is not None else [])
        s.tables.append(Table(tid, f"{h}: discriminative power and ranking consistency of the "
                              f"{len(tab)} measures over {len(subset)} metrics", cols,
                              tab[keys].values.tolist(), sigs,
                              note=f"Metrics: {', '.join(subset)}.", group=h))
        from . import figures as fg

        s.figures.append(Figure(f"fig-pvalues-{h}", f"{h}: p-value curves (discriminative power)",
                                lambda dp=dp: fg.pvalue_curves(dp), alt="p-value curve of each measure",
                                group=h))
        if rc is not None:
            s.figures.append(Figure(f"fig-measures-{h}", f"{h}: DP against RC",
                                    lambda tab=tab, h=h: fg.measure_map(tab, title=f"correlation measures, {h}"),
                                    alt="Scatter of each measure's DP against its RC", group=h))
        s.readings += rd.measure_readings(tab, h, tid)

    def reliability(self, bar=None):
        from .. import reliability as rl
        from ..stats.agreement import rater_design

        s = self.sec("reliability", "Reliability of metrics and human ratings", rd.intro("reliability"))
        ds = self.ds
        rated = rated_columns(ds, ds.human)  # the rating design: every human column with raters
        results = {}
        if rated:
            s.functions.append("metaeval.agreement")
            methods = ("krippendorff_interval", "krippendorff_ordinal", "icc2", "icc2k")
            if any(rater_design(np.asarray(ds.ratings(c), dtype=float).reshape(ds.ratings(c).shape[0], -1),
                                    "same") == "rotating" for c in rated):
                # raters nested in the cells: ICC(2) is NaN, the one-way forms apply (as `metaeval reliability`)
                methods += ("icc1", "icc1k")
            results["agreement"] = self._timed(s, lambda: rl.agreement(ds, rated, method=methods))
        else:
            s.skip("one rater per item: reliability of human ratings (rater agreement) skipped", part=True)
        runs = [m for m in self.metrics if self.ds_runs.ratings(m).shape[0] >= 2]
        if runs:
            s.functions.append("metaeval.stability")
            results["stability"] = self._timed(s, lambda: rl.stability(self.ds_runs, runs))
        else:
            s.skip("no metric has repeated runs: test-retest stability skipped", part=True)
        cols = [*self.humans, *self.metrics]
        if len(ds.systems) < 2 or len(ds.inputs) < 2:
            s.skip("Cronbach's alpha needs at least 2 systems and 2 inputs", part=True)
        else:
            s.functions += ["metaeval.consistency", "metaeval.consistency_curve"]
            results["consistency"] = self._timed(s, lambda: rl.consistency(
                ds, cols, ci="boot-systems", n_resamples=self.n, rng=self.seed))
            cf = results["consistency"].to_frame()
            worst = (cf[cf.column.isin(self.metrics)].sort_values("statistic").column.head(4).tolist())
            curve_cols = [*self.humans, *worst]
            sizes = None if len(ds.inputs) >= 10 else list(range(2, len(ds.inputs) + 1))
            results["consistency_curve"] = self._timed(s, lambda: rl.consistency_curve(
                ds, curve_cols, sizes=sizes, n_subsets=self.cfg.value("curve_subsets"), rng=self.seed))
        self.state["reliability"] = results
        self.results["reliability"] = {k: v.to_dict() for k, v in results.items()}
        from . import figures as fg

        if "agreement" in results:
            f = results["agreement"].to_frame()
            s.tables.append(Table("rel-agreement", "Agreement between raters (units: system x input cells)", [
                Column("column", "human column", "text"), Column("method", "method", "text"),
                Column("statistic", "value", "num"), Column("ci", "95% CI", "ci"),
                Column("pvalue", "p (ICC > 0, F test)", "p"),
                Column("n_raters", "raters", "int"), Column("n_units", "units", "int")],
                [[r.column, r.method, r.statistic, [r.ci_low, r.ci_high], r.pvalue, r.n_raters, r.n_units]
                 for r in f.itertuples()], _sigs(f), note=_agreement_note(f)))
        if "stability" in results:
            f = results["stability"].to_frame()
            s.tables.append(Table("rel-stability", "Test-retest stability of metrics with repeated runs", [
                Column("column", "metric", "text"), Column("method", "estimator", "text"),
                Column("statistic", "stability", "num"), Column("runs_needed", "runs for .9", "int"),
                Column("sem", "SEM", "num"), Column("n_runs", "runs", "int")],
                [[r.column, r.method, r.statistic, r.runs_needed, r.sem, r.n_runs] for r in f.itertuples()],
                _sigs(f)))
        if "consistency" in results:
            f = results["consistency"].to_frame()
            kinds = {c: ("human" if c in ds.human else "metric") for c in f.column}
            s.tables.append(Table("rel-consistency", "Consistency: Cronbach's alpha over inputs (systems as "
                                  "examinees)", [
                Column("column", "column", "text"), Column("kind", "kind", "text"),
                Column("statistic", "alpha", "num"), Column("ci", "95% CI", "ci"), Column("sem", "SEM", "num"),
                Column("inputs_needed", "inputs for .9", "int")],
                [[r.column, kinds[r.column], r.statistic, [r.ci_low, r.ci_high], r.sem, r.inputs_needed]
                 for r in f.itertuples()], _sigs(f)))
            s.figures.append(Figure("fig-reliability", "Stability and consistency per column",
                                    lambda: fg.reliability_bars(results.get("stability"), results["consistency"]),
                                    alt="Bars of stability and Cronbach's alpha per column"))
            s.figures.append(Figure("fig-alpha-curve", "Cronbach's alpha against the number of inputs",
                                    lambda: fg.alpha_curve(results["consistency_curve"]),
                                    alt="alpha of random input subsets and the Spearman-Brown prophecy"))
        s.readings += rd.reliability_readings(results, self.humans, self.metrics)

    def validity(self, bar=None):
        from .. import validity as vd

        s = self.sec("validity", "Validity: multitrait-multimethod table and factor analysis", rd.intro("validity"))
        ds = self.ds
        traits = rated_columns(ds, ds.human)  # the rating design: every human column with raters
        if len(traits) < 2:
            s.skip("MTMM and CFA need at least 2 human columns (traits) with 2+ raters each; "
                   f"the data has {len(traits)}: validity skipped")
            return
        from . import figures as fg

        results = {}
        try:
            results["mtmm"] = self._timed(s, lambda: vd.mtmm(ds, traits, level="system", method=VALIDITY_METHOD))
            s.functions.append("metaeval.mtmm")
        except (ValueError, ArithmeticError) as exc:  # MetaevalError is a ValueError
            s.skip(f"MTMM skipped: {type(exc).__name__}: {str(exc).splitlines()[0]}", part=True)
        model = {t: [f"{t}@{r}" for r in ds.rater_labels(t)] for t in traits}
        try:
            results["cfa"] = self._timed(s, lambda: vd.cfa(ds, model))
            s.functions.append("metaeval.cfa")
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:  # MetaevalError is a ValueError
            s.skip(f"CFA skipped: {type(exc).__name__}: {str(exc).splitlines()[0]}", part=True)
        cfa_ok = "cfa" in results and cfa_interpretable(results["cfa"])
        if "cfa" in results and not cfa_ok:
            s.skip(f"concurrent validity not computed: {cfa_problem(results['cfa'])}, so its factor scores are "
                   "not interpretable and drive no further analysis", part=True)
        if cfa_ok:
            try:
                results["concurrent_validity"] = self._timed(s, lambda: vd.concurrent_validity(
                    ds, results["cfa"], metrics=self.metrics, level="system", method=VALIDITY_METHOD))
                s.functions.append("metaeval.concurrent_validity")
            except MetaevalError as exc:
                s.skip(f"concurrent validity skipped: {str(exc).splitlines()[0]}", part=True)
        if not results:
            s.status = "skipped"
            return
        self.state["validity"] = results
        self.results["validity"] = {k: v.to_dict() for k, v in results.items()}
        if "mtmm" in results:
            m = results["mtmm"]
            f = m.to_frame()
            s.tables.append(Table("val-mtmm", f"MTMM entries ({VALIDITY_METHOD} between system means, as seed paper 002; "
                                  "diagonal: Cronbach's alpha)", [
                Column("trait_a", "trait A", "text"), Column("method_a", "rater A", "text"),
                Column("trait_b", "trait B", "text"), Column("method_b", "rater B", "text"),
                Column("block", "block", "text"), Column("statistic", "value", "num")],
                [[r.trait_a, r.method_a, r.trait_b, r.method_b, r.block, r.statistic] for r in f.itertuples()],
                [m.signature]))
            cf = m.campbell_fiske()
            s.tables.append(Table("val-campbell-fiske", "Campbell-Fiske comparisons: each convergent value "
                                  "against the heterotrait values of its row and column", [
                Column("trait", "trait", "text"), Column("method_a", "rater A", "text"),
                Column("method_b", "rater B", "text"), Column("convergent", "convergent", "num"),
                Column("hthm", "> HTHM", "text"), Column("htmm", "> HTMM", "text")],
                [[r.trait, r.method_a, r.method_b, r.convergent, f"{r.n_hthm_exceeded}/{r.n_hthm}",
                  f"{r.n_htmm_exceeded}/{r.n_htmm}"] for r in cf.itertuples()], [m.signature]))
            s.figures.append(Figure("fig-mtmm", "MTMM table", lambda: fg.mtmm_heatmap(m),
                                    alt="Heatmap of the multitrait-multimethod correlations"))
        if "cfa" in results:
            fa = results["cfa"]
            ff = fa.fit_frame()
            keep = ["chi2", "df", "pvalue", "chi2_scaled", "cfi", "tli", "rmsea", "rmsea_ci_low", "rmsea_ci_high",
                    "srmr", "cfi_scaled", "tli_scaled", "rmsea_scaled"]
            ff = ff[ff.measure.isin(keep)]
            flag = "" if cfa_ok else f" [NOT INTERPRETABLE: {cfa_problem(fa)}]"
            s.tables.append(Table("val-cfa-fit", f"CFA fit ({fa.estimator}; one factor per trait, its raters "
                                  f"as indicators){flag}", [
                Column("measure", "measure", "text"), Column("lavaan", "lavaan name", "text"),
                Column("value", "value", "num")], ff[["measure", "lavaan", "value"]].values.tolist(),
                [fa.signature]))
            fc = fa.correlation_matrix()
            s.tables.append(Table("val-cfa-corr", f"CFA factor correlations{flag}", [
                Column("factor", "factor", "text"), *[Column(c, c, "num") for c in fc.columns]],
                [[i, *row] for i, row in zip(fc.index, fc.values.tolist())], [fa.signature]))
        if "concurrent_validity" in results:
            cv = results["concurrent_validity"]
            mat = cv.matrix()
            s.tables.append(Table("val-concurrent", f"Concurrent validity: {VALIDITY_METHOD} at system level (seed paper 002) "
                                  "against the CFA factor scores", [
                Column("metric", "metric", "text"), *[Column(str(c), str(c), "num") for c in mat.columns]],
                [[str(i), *row] for i, row in zip(mat.index, mat.values.tolist())], _sigs(cv.to_frame())))
        s.readings += rd.validity_readings(results)

    def diagnostics(self, bar=None):
        from .. import diagnostics as dg

        s = self.sec("diagnostics", "Diagnostics beyond one correlation", rd.intro("diagnostics"))
        ds, humans, mets = self.ds, self.humans, self.metrics
        results = {}
        low, high = self.cfg.low, self.cfg.high
        try:
            results["ks"] = self._timed(s, lambda: dg.ks_score(ds, humans, metrics=mets, low=low, high=high))
            s.functions.append("metaeval.ks_score")
        except MetaevalError as exc:
            s.skip(f"KS score skipped: {str(exc).splitlines()[0]} (--low/--high)", part=True)
        if len(ds.inputs) >= 3 and len(ds.systems) >= 3:
            results["meta_correlation"] = self._timed(s, lambda: dg.meta_correlation(ds, humans, metrics=mets))
            s.functions.append("metaeval.meta_correlation")
        else:
            s.skip("meta-correlation needs at least 3 systems and 3 inputs", part=True)
        # the sizes must fit the fewest texts any (human, metric) pair has scores on: on sparse data
        # a size below the number of cells but above one metric's scored texts failed the section
        n_cells = min((int(np.sum(np.isfinite(ds.scores(h)) & np.isfinite(ds.scores(m))))
                       for h in humans for m in mets), default=len(ds.systems) * len(ds.inputs))
        sizes = [k for k in (20, 50, 100) if k < n_cells]
        if sizes:
            results["sample_size"] = self._timed(s, lambda: dg.sample_size(
                ds, humans, metrics=mets, sizes=sizes, n_resamples=self.cfg.value("sample_resamples"),
                rng=self.seed))
            s.functions.append("metaeval.sample_size")
        else:
            s.skip(f"sample-size study skipped: {n_cells} texts with both a human and a metric score, not more "
                   "than the smallest size (20)", part=True)
        focus = [m for m in mets if any(m in sub for sub in self.state["subset"].values())] or mets
        if len(ds.systems) >= 3:
            results["correlation_design"] = self._timed(s, lambda: dg.correlation_design(
                ds, columns=[*humans, *focus], method=self.cfg.method, system_scores=self.cfg.system_scores))
            s.functions.append("metaeval.correlation_design")
        else:
            s.skip("correlation design needs at least 3 systems", part=True)
        self.state["diagnostics"] = results
        self.results["diagnostics"] = {k: v.to_dict() for k, v in results.items()}
        from . import figures as fg

        if "ks" in results:
            f = results["ks"].to_frame()
            s.tables.append(Table("diag-ks", "Kolmogorov-Smirnov score between low- and high-quality texts", [
                Column("metric", "metric", "text"), Column("human", "human", "text"),
                Column("statistic", "KS", "num"), Column("direction", "direction", "int"),
                Column("pvalue", "p (analytic, assumes independent texts)", "p"), Column("n_low", "low texts", "int"),
                Column("n_high", "high texts", "int")],
                [[r.metric, r.human, r.statistic, r.direction, r.pvalue, r.n_low, r.n_high] for r in f.itertuples()],
                _sigs(f), note="The p-value is the two-sample KS test, which treats the texts as independent; "
                               "texts of one system or one input are not, so it overstates significance. No "
                               "reading uses it."))
            s.figures.append(Figure("fig-ks", "KS scores", lambda: fg.plot_ks(results["ks"]),
                                    alt="Heatmap of KS scores, metrics by human column"))
        if "meta_correlation" in results:
            f = rd.with_holm(results["meta_correlation"].to_frame())
            s.tables.append(Table("diag-meta", "Meta-correlation: per-system agreement against system quality", [
                Column("metric", "metric", "text"), Column("human", "human", "text"),
                Column("statistic", "meta-correlation", "num"), Column("pvalue", "p", "p"),
                Column("pvalue_holm", "p (Holm over the table)", "p"),
                Column("sample_correlation", "sample-level correlation", "num"),
                Column("n_systems", "systems", "int")],
                [[r.metric, r.human, r.statistic, r.pvalue, r.pvalue_holm, r.sample_correlation, r.n_systems]
                 for r in f.itertuples()], _sigs(f),
                note="Each p-value tests one metric's meta-correlation over the systems; the readings use the "
                     "Holm-corrected p-values (one family: every metric x human column of the table)."))
            s.figures.append(Figure("fig-meta", "Meta-correlations",
                                    lambda: fg.plot_meta_correlation(results["meta_correlation"]),
                                    alt="Bars of meta-correlation per metric and human column"))
        if "sample_size" in results:
            f = results["sample_size"].to_frame()
            wide = f.pivot_table(index=["human", "metric"], columns="size", values="std", sort=False)
            allc = f.groupby(["human", "metric"], sort=False).statistic.first()
            cols = [Column("human", "human", "text"), Column("metric", "metric", "text"),
                    Column("all", "all texts", "num")] + [Column(f"sd_{k}", f"sd at n={k}", "num") for k in sizes]
            s.tables.append(Table("diag-sample-size", "Pre-assessment sample size: spread of the sample-level "
                                  "correlation on random subsets of n texts", cols,
                                  [[hm, m, allc[(hm, m)], *[wide.loc[(hm, m), k] for k in sizes]]
                                   for hm, m in wide.index], _sigs(f)))
        if "correlation_design" in results:
            cd = results["correlation_design"]
            f = cd.to_frame()
            hm = f[(f.kind_1 == "human") & (f.kind_2 == "metric")]
            piv = {lv: hm[hm.level == lv].set_index(["column_1", "column_2"]) for lv in ("system", "global")}
            rows = []
            boot = {}
            for hh, cf in self.state["corr"].items():
                g = cf[cf.level == "global"]
                boot.update({(hh, r.metric): [r.ci_low, r.ci_high] for r in g.itertuples()})
            for (a, b) in piv["system"].index:
                rs, rg = piv["system"].loc[(a, b)], piv["global"].loc[(a, b)]
                rows.append([a, b, rs.statistic, rs.pvalue_adjusted, bool(rs.significant), rg.statistic,
                             rg.pvalue_adjusted, bool(rg.significant), boot.get((a, b))])
            s.tables.append(Table("diag-design", "Correlation design: system- vs sentence-level (global) "
                                  "correlation of each human column with each metric", [
                Column("human", "human", "text"), Column("metric", "metric", "text"),
                Column("system", "system r", "num"), Column("system_p", "system p (adj.)", "p"),
                Column("system_sig", "system significant", "bool"), Column("global", "global r", "num"),
                Column("global_p", "global p (adj.; ANALYTIC, assumes independent cells)", "p"),
                Column("global_sig", "global significant (analytic)", "bool"),
                Column("global_ci", "global 95% CI (boot-both, resampling)", "ci")],
                rows, _sigs(f), note=(
                    f"The global-level p-value is the analytic test of Shimorina (2018), which treats the "
                    f"{len(ds.systems) * len(ds.inputs)} cells as independent although they are clustered by "
                    f"system and by input, so it overstates significance; prefer the boot-both interval (it "
                    f"resamples systems and inputs; from the correlation table, rule diag-design). "
                    + (f"Columns: the human columns and the {len(focus)} metrics of the pairwise sets "
                       f"({', '.join(focus)}); each level's {len(focus) + len(humans)} columns give one family of "
                       f"tests." if len(focus) < len(mets) else ""))))
            s.figures.append(Figure("fig-design", "Correlation design",
                                    lambda: fg.plot_correlation_design(cd),
                                    alt="Heatmaps of system- and sentence-level correlations"))
        s.readings += rd.diagnostic_readings(results, self.state["corr"])

    def text_diagnostics(self, bar=None):
        s = self.sec("text", "Text diagnostics: perturbation detection", rd.intro("text"))
        if not self.data_info["texts"]:
            s.skip("no texts: text diagnostics skipped")
            return
        if not self.cfg.value("text"):
            s.skip("--quick: text diagnostics (which rescore every text and its perturbed copy) skipped; "
                   "run without --quick")
            return
        texts = self.ds.texts
        if "hypothesis" not in texts.columns or not ({"references", "reference", "source"} & set(texts.columns)):
            s.skip("the texts have no hypothesis with references or source: text diagnostics skipped")
            return
        try:
            from .. import textmetrics as tm

            adapters = [tm.get_metric(n) for n in self.cfg.text_metrics]
        except (MetaevalError, ImportError) as exc:
            s.skip(f"text metrics unavailable ({str(exc).splitlines()[0]}): text diagnostics skipped; "
                   "pip install 'metaeval[text]'")
            return
        from ..perturb import score_perturbed

        results, scored = {}, {}
        import tempfile

        try:
            with tempfile.TemporaryDirectory(prefix="metaeval-report-") as tmp:
                cache = self.cfg.cache_dir or tmp  # originals are scored once for all perturbations
                for name in self.cfg.perturbations:
                    def run(name=name):
                        return score_perturbed(self.ds, name, adapters, rng=self.seed, cache_dir=cache,
                                               n_jobs=self.cfg.n_jobs,
                                               progress=(lambda d, t: bar.update(d, t)) if bar is not None and
                                               hasattr(bar, "update") else None)
                    ps = self._timed(s, run)
                    scored[name] = ps
                    results[name] = self._timed(s, lambda ps=ps: ps.detection())
        except (ImportError, MetaevalError) as exc:
            s.skip(f"text metrics unavailable ({type(exc).__name__}: {str(exc).splitlines()[0]}): text "
                   "diagnostics skipped; pip install 'metaeval[text]'")
            return
        s.functions += ["metaeval.perturb.score_perturbed", "metaeval.perturbation_detection"]
        self.state["text"] = results
        self.results["text"] = {n: {"detection": r.to_dict(), "perturbation": scored[n].perturbation.to_dict()}
                                for n, r in results.items()}
        rows, sigs = [], []
        for n, det in results.items():
            pr = scored[n].perturbation
            sigs += [pr.signature, *[r.signature for r in det]]
            for r in det:
                rows.append([n, r.metric, r.statistic, r.tie_share, r.less_share, [r.ci_low, r.ci_high], r.n,
                             r.n_missing, r.pvalue])
        s.tables.append(Table("text-detection", "Perturbation detection: share of (original, perturbed) pairs "
                              "where the metric prefers the original", [
            Column("perturbation", "perturbation", "text"), Column("metric", "metric", "text"),
            Column("accuracy", "accuracy", "num"), Column("ties", "ties", "num"),
            Column("prefers_perturbed", "prefers perturbed", "num"), Column("ci", "95% CI", "ci"),
            Column("n", "pairs", "int"), Column("missing", "skipped texts", "int"),
            Column("p", "p (sign test; assumes independent pairs)", "p")],
            rows, sigs, note="The sign test treats the (original, perturbed) pairs as independent; pairs of one "
                             "system or one input are not, so its p-value overstates significance. No reading "
                             "uses it."))
        s.figures.append(Figure("fig-detection", "Perturbation detection", lambda: fg.plot_detection(results),
                                alt="Bars of detection accuracy per metric and perturbation"))
        s.readings += rd.text_readings(results)

    def local(self, bar=None):
        s = self.sec("local", "Local metric accuracy across contexts", rd.intro("local"))
        ctx = self.cfg.context
        if ctx is None:
            s.skip("no context column named (--context): local accuracy skipped")
            return
        from .. import local as lc

        h = self.humans[0]
        s.functions += ["metaeval.local_pairs", "metaeval.local_accuracy", "metaeval.context_chi2",
                        "metaeval.context_tau"]
        pairs = self._timed(s, lambda: lc.local_pairs(self.ds, context=ctx, human=h, metrics=self.metrics))
        acc = self._timed(s, lambda: lc.local_accuracy(pairs))
        # enough permutations that the smallest Holm-corrected p over the metrics reaches alpha / resolution
        # (QA pass: quick mode's 999 left no resolution under Holm over tens of metrics), as the clusters
        n_chi = cluster_resamples(self.cfg.value("chi2_resamples"), len(self.metrics), self.cfg.alpha,
                                  self.cfg.value("resolution"))
        chi = self._timed(s, lambda: lc.context_chi2(pairs, n_resamples=n_chi, rng=self.seed))
        tau = self._timed(s, lambda: lc.context_tau(pairs, n_resamples=self.cfg.value("tau_resamples"),
                                                    rng=self.seed, n_jobs=self.cfg.n_jobs))
        results = {"accuracy": acc, "chi2": chi, "tau": tau}
        self.state["local"] = results
        self.results["local"] = {k: v.to_dict() for k, v in results.items()}
        mat = acc.matrix("statistic")
        overall = acc.overall_frame().set_index("metric")["statistic"]
        s.tables.append(Table("local-accuracy", f"Local accuracy by {ctx} (human-ordered pairs of {h})", [
            Column("metric", "metric", "text"), Column("all", "all pairs", "num"),
            *[Column(f"ctx_{k}", str(c), "num") for k, c in enumerate(mat.columns)]],
            [[str(m), overall[m], *row] for m, row in zip(mat.index, mat.values.tolist())], [acc.signature],
            group=h))
        cf = chi.to_frame()
        s.tables.append(Table("local-chi2", f"H1: does accuracy change with {ctx}? (chi-square per metric)", [
            Column("metric", "metric", "text"), Column("statistic", "chi2", "num"), Column("df", "df", "int"),
            Column("pvalue", "p", "p"), Column("pvalue_adjusted", "p (Holm)", "p"), Column("test", "test", "text"),
            Column("cramers_v", "Cramer's V", "num")],
            [[r.metric, r.statistic, r.df, r.pvalue, r.pvalue_adjusted, r.test, r.cramers_v]
             for r in cf.itertuples()], _sigs(cf), group=h))
        tm_ = tau.matrix("tau", ordered=True)
        s.tables.append(Table("local-tau", f"H2: weighted Kendall tau between the metric rankings of the {ctx} "
                              f"contexts", [Column(ctx, ctx, "text"),
                                            *[Column(f"ctx_{k}", str(c), "num") for k, c in enumerate(tm_.columns)]],
                              [[str(i), *row] for i, row in zip(tm_.index, tm_.values.tolist())], [tau.signature],
                              group=h))
        s.figures.append(Figure("fig-local-accuracy", f"Local accuracy by {ctx}",
                                lambda: fg.plot_local_accuracy(acc), alt="Local accuracy per metric and context"))
        s.figures.append(Figure("fig-local-tau", f"Weighted tau between {ctx} contexts",
                                lambda: fg.plot_context_tau(tau), alt="Heatmap of weighted tau between contexts"))
        s.readings += rd.local_readings(results, ctx)

    def _pairwise_set(self, h):
        """The pairwise set of human column ``h`` (as the clusters chose it; recomputed the same way
        when the clusters did not run)."""
        if h in self.state["subset"]:
            return list(self.state["subset"][h])
        k = self.cfg.value("pairwise")
        if isinstance(k, (tuple, list)):
            return list(dict.fromkeys(k))
        if k == "all" or h not in self.state["corr"]:
            return list(self.metrics) if k == "all" else list(self.metrics)[: int(k)]
        return pairwise_subset(self.state["corr"][h], self.levels, int(k))

    def preferences(self, bar=None):
        s = self.sec("preferences", "Pairwise preferences", rd.intro("preferences"))
        rated = rated_columns(self.ds, self.humans)
        if not rated:
            others = [h for h in rated_columns(self.ds, self.ds.human) if h not in self.humans]
            s.skip("no human column of the report has 2+ individual raters: pairwise preferences need the "
                   "scores of the individual raters (the preference of each rater between two outputs of an input)"
                   + (f"; {', '.join(others)} {'has' if len(others) == 1 else 'have'} raters (--human)"
                      if others else ""))
            return
        if len(self.ds.systems) < 2:
            s.skip(f"pairwise preferences compare the outputs of two systems on an input; the data has "
                   f"{len(self.ds.systems)} system")
            return
        from .. import preferences as pf

        s.functions += ["metaeval.preference_agreement", "metaeval.bradley_terry"]
        for h in rated:
            judges = self._pairwise_set(h)
            data = self._timed(s, lambda h=h, judges=judges: pf.PreferenceData.from_dataset(
                self.ds, h, metrics=judges, lengths=False))
            pa = self._timed(s, lambda data=data: pf.preference_agreement(
                data, n_resamples=self.n, rng=self.seed))
            bt = self._timed(s, lambda data=data: pf.bradley_terry(data))
            self.state.setdefault("preferences", {})[h] = {"agreement": pa, "bradley_terry": bt, "judges": judges}
            self.results.setdefault("preferences", {})[h] = {
                "judges": judges, "n_pairs": len(data.pairs), "raters": list(data.raters),
                "agreement": pa.to_dict(), "bradley_terry": bt.to_dict()}
            f = pa.to_frame().set_index(["judge", "measure"])
            taus = {r.judge: r.tau_b for r in bt}
            order = ["human"] + sorted(judges, key=lambda j: (not np.isfinite(f.loc[(j, "acc_eq")].statistic),
                                                                -np.nan_to_num(f.loc[(j, "acc_eq")].statistic),
                                                                j))
            rows = []
            for j in order:
                row = ["human-human ceiling" if j == "human" else j]
                for m in ("acc_23", "acc_eq", "kappa_majority"):
                    r = f.loc[(j, m)]
                    row += [r.statistic, [r.ci_low, r.ci_high]]
                # no threshold for the raters (their ties are as given) nor for a metric without usable pairs
                used = int(f.loc[(j, "acc_eq")].n) and j != "human"
                row += [f.loc[(j, "acc_eq")].epsilon if used else None, taus.get(j, math.nan) if j != "human" else None,
                        int(f.loc[(j, "acc_eq")].n)]
                above = [r.measure for r in pa if r.judge == j and r.above_ceiling]
                row.append(", ".join(above) if above else None)
                rows.append(row)
            tid = f"pref-{h}"
            n_pairs, n_r = len(data.pairs), len(data.raters)
            excluded = [m for m in self.metrics if m not in judges]
            s.tables.append(Table(tid, f"{h}: agreement of each metric with the {n_r} raters' preferences, "
                                  f"with 95% bootstrap intervals over inputs, and the human-human ceiling", [
                Column("judge", "annotator", "text"),
                Column("acc_23", "acc_23", "num"), Column("acc_23_ci", "acc_23 95% CI", "ci"),
                Column("acc_eq", "acc_eq", "num"), Column("acc_eq_ci", "acc_eq 95% CI", "ci"),
                Column("kappa_majority", "kappa (majority)", "num"),
                Column("kappa_majority_ci", "kappa 95% CI", "ci"),
                Column("epsilon", "acc_eq tie threshold", "num"),
                Column("bt_tau_b", "BT tau_b", "num"),
                Column("pairs", "pairs", "int"),
                Column("above_ceiling", "above the human ceiling on", "text")], rows,
                sorted({r.signature for r in pa} | {r.signature for r in bt}), group=h,
                note=(f"Every unordered pair of systems on every input is a pair ({n_pairs} pairs); each rater "
                      f"prefers the output it scored higher (equal scores: a tie), a metric the output with the "
                      f"higher score (acc_23: a tie only on equal scores; acc_eq: a tie when the difference is "
                      f"within the threshold calibrated on these data, which favours the metric). kappa "
                      f"(majority): Cohen's kappa of the metric's labels against the majority of the raters other "
                      f"than the one compared. The ceiling row puts each rater in the metric's place; its acc_eq is "
                      f"its acc_23. BT tau_b: Kendall tau-b "
                      f"between the system ranking of the metric's preferences and that of the raters'. "
                      + (f"Metrics: the pairwise set ({len(judges)} of {len(self.metrics)}); "
                         f"{len(excluded)} other metrics are not shown. " if excluded else "")
                      + "All measures (Cohen's kappa vs each rater, Fleiss' kappa, Krippendorff's alpha) and "
                        "the Bradley-Terry strengths are in results.json. 'above the human ceiling on' lists the "
                        "measures on which a metric agrees with the raters more than they agree with one another "
                        "(the readings say what that implies; results.json has each one's notes).")))
            from . import figures as fg

            s.figures.append(Figure(f"fig-pref-{h}", f"{h}: agreement with the raters' preferences",
                                    lambda pa=pa, order=order, h=h: fg.preference_intervals(
                                        pa.to_frame(), order=order, title=f"agreement with the raters of {h}"),
                                    alt=f"Dot plot of each metric's acc_eq and kappa vs majority with 95% "
                                        f"intervals, beside the human-human ceiling of {h}", group=h))
            s.readings += rd.preference_readings(pa.to_frame(), {r.judge: r.tau_b for r in bt}, h, tid,
                                                 n_systems=len(data.systems))

    def recommendation(self, bar=None):
        s = self.sec("recommendation", "Summary and recommendation", rd.intro("recommendation"))
        self.state.update(n_resamples=self.n, n_systems=len(self.ds.systems), alpha=self.cfg.alpha)
        rec = rd.recommend(self.state, self.humans, self.levels, self.metrics)
        s.tables += rec["tables"]
        s.readings += rec["readings"]
        if not rec["tables"]:
            s.skip("no pairwise analyses ran (fewer than 2 metrics): no recommendation")
        self.results["recommendation"] = rec["data"]


def build(ds, cfg: ReportConfig, *, ds_runs=None, progress=None, command=None, writer=None) -> Report:
    """Run every analysis that applies to ``ds`` and collect the report.

    ``ds_runs`` is the same data with the metrics' repeated runs (for
    stability; default ``ds``); ``progress`` a :class:`Progress`;
    ``writer`` a :class:`metaeval.report._render.Writer` that writes each
    section's tables and figures as soon as they are finished (pass the
    same writer to :func:`~metaeval.report.write`).  An analysis that fails
    is recorded as a skipped (or partial) section with the error, and the
    others run.
    """
    t0 = time.perf_counter()
    b = _Builder(ds, cfg, ds_runs, progress)
    est = estimate(len(ds.systems), len(ds.inputs), len(b.humans), len(b.metrics), cfg,
                   n_rated=len(rated_columns(ds, b.humans)))
    sections = b.run(writer)
    # the analyses alone: the tables and figures the writer drew meanwhile are the header's "figures, tables"
    seconds = time.perf_counter() - t0 - (writer.view_seconds if writer is not None else 0.0)
    meta = {
        "metaeval": __version__,
        "title": f"Meta-evaluation report: {ds.name or 'data'}",
        "command": command,
        "mode": cfg.mode,
        "seed": b.seed,
        "config": {**cfg.to_dict(), "rng": b.seed, "seed": b.seed, "human": list(b.humans), "metrics": list(b.metrics),
                   "levels": list(b.levels)},
        "data": b.data_info,
        "seconds_analyses": seconds,
        "estimate": {"seconds": est["seconds"], "text": est["text"]},
        "failures": b.failures,
        "rules": rd.rules_table(),
    }
    return Report(sections=sections, meta=meta, results=b.results)
