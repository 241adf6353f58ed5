"""The names the command line offers, and the defaults shared by API, CLI and report.

Kept apart from the registries that hold them (which import numpy, scipy or
numba) so that ``metaeval <command> --help`` can list every choice without
importing the statistics, as :mod:`metaeval._agreement_registry` does for the
agreement coefficients.  Each tuple here names the keys of one registry, in
its order; ``tests/test_cli_registries.py`` checks every one against its
registry and every CLI option against these, so the help texts cannot drift.
"""

from __future__ import annotations

#: The one default coefficient of the correlation tables: :func:`metaeval.correlate`,
#: :func:`metaeval.compare`, :func:`metaeval.compare_all`, the ``correlate``,
#: ``compare`` and ``report`` commands and the report's correlation, comparison and
#: correlation-design sections.  Pearson's r, as seed paper 000 and mt-metrics-eval
#: (re-exported as :data:`metaeval.stats.coefficients.DEFAULT_METHOD`).
DEFAULT_METHOD = "pearson"

#: The coefficient of validity (MTMM tables and concurrent validity): Kendall's
#: tau-b, as seed paper 002 (MetricEval) prescribes: its Tables 1-2 and Figures 4
#: and 8 are "based on Kendall's tau" (Sec. 4.1, 4.2).  Used by
#: :func:`metaeval.validity.mtmm`, :func:`metaeval.validity.concurrent_validity`,
#: the ``validity`` command and the report's validity section (re-exported as
#: :data:`metaeval.stats.coefficients.VALIDITY_METHOD`).
VALIDITY_METHOD = "kendall_b"

#: Seed paper 000's coefficients: with the four levels, its 12 correlation measures (the
#: default measure set of ``measures`` and ``simulate``, :data:`metaeval.simulation.DEFAULT_METHODS`).
MEASURE_METHODS = ("pearson", "spearman", "kendall_b")

#: The coefficients offered for the report's correlation tables and clusters.
REPORT_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")

#: The coefficients of the text-level diagnostics (:data:`metaeval.diagnostics.CORRELATIONS`)
#: and their default, Spearman's rho, as seed paper 001 (Table 2, Fig. 4).
DIAGNOSTIC_METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
DIAGNOSTIC_METHOD = "spearman"
#: :data:`metaeval.diagnostics.KS_PVALUES` (the methods of ``scipy.stats.ks_2samp``).
KS_PVALUES = ("auto", "exact", "asymp")

# ----------------------------------------------------------------------------- registries' names

#: :data:`metaeval.stats.coefficients.COEFFICIENTS` (``metaeval.METHODS``).
METHODS = ("pearson", "spearman", "kendall_b", "kendall_c", "kendall_23", "acc_23", "acc_eq",
           "pairwise_accuracy")

#: The grouping levels (:data:`metaeval.stats.levels.LEVELS`, seed paper 000 Sec. 2) and averages.
LEVELS = ("system", "input", "item", "global")
AVERAGES = ("macro", "micro")

#: The ``system_scores`` option of the analyses (:data:`metaeval.data.sysscores.SYSTEM_SCORE_MODES`,
#: the CLI's ``--system-level``): given system-level scores, or the means of the cells.
SYSTEM_SCORE_MODES = ("given", "mean")

#: The one table of level names other tools use, shared by the API
#: (:func:`metaeval.stats.levels.check_level`) and the command line: unambiguous
#: spellings map to ours.
LEVEL_ALIASES = {
    "system-level": "system",
    "summary": "input",
    "summary-level": "input",
    "group-by-item": "input",  # mt-metrics-eval's 'item' grouping, WMT's "segment-level group-by-item"
    "group-by-system": "item",  # mt-metrics-eval's average_by='sys', WMT22's "group-by-system"
    "per-system": "item",
    "none": "global",
    "no-grouping": "global",
}
#: Spellings refused everywhere, with the reason.
AMBIGUOUS_LEVELS = {
    "segment": "'segment' is used both for input-grouped and ungrouped correlations",
    "seg": "'seg' is used both for input-grouped and ungrouped correlations",
    "sys": "mt-metrics-eval's average_by='sys' groups by system (our 'item'), while "
    "'sys' elsewhere means system level (our 'system')",
    "sample": "ExplainaBoard's group_by='sample' is our 'input', while 'sample-level' "
    "elsewhere means no grouping (our 'global')",
}
#: :data:`metaeval.correlation.CI_METHODS` and :data:`metaeval.correlation.PVALUE_METHODS`.
CI_METHODS = ("none", "fisher", "boot-systems", "boot-inputs", "boot-both")
PVALUE_METHODS = ("auto", "permutation", "none")
#: :data:`metaeval.correlation.ALTERNATIVES`.
ALTERNATIVES = ("two-sided", "greater", "less")
#: :data:`metaeval.compare.TESTS`.
TESTS = ("perm-both", "perm-systems", "perm-inputs", "perm-both-rowcol", "williams", "boot-systems",
         "boot-inputs", "boot-both")
#: :data:`metaeval.stats.multitest.ADJUSTMENTS` (p-value corrections).
CORRECTIONS = ("bonferroni", "holm", "bh", "none")
#: :data:`metaeval.diagnostics.BINOMIAL_CIS`.
BINOMIAL_CIS = ("wilson", "clopper-pearson")

#: :data:`metaeval.textmetrics.METRICS` (registry order), those that need a model
#: (``--model``: a local folder; COMET and BLEURT also take a model name), and the lower-is-better ones (:mod:`metaeval.direction`).
TEXT_METRICS = ("bleu", "chrf", "chrf++", "ter", "rouge", "rouge1", "rouge2", "rougeL", "rougeLsum", "meteor",
                "bertscore", "gptscore", "bartscore", "wer", "mer", "wil", "wip", "cer", "comet", "bleurt",
                "metricx", "llm_judge")
MODEL_METRICS = ("bertscore", "gptscore", "bartscore", "comet", "bleurt", "metricx")
LOWER_IS_BETTER = ("ter", "wer", "mer", "wil", "cer", "metricx")
#: How a text metric combines several references (:data:`metaeval.textmetrics.MULTI_REF`).
MULTI_REF = ("best", "max", "min", "mean", "native")

#: :data:`metaeval.perturb.PERTURBATIONS`.
PERTURBATIONS = ("sentence_reorder", "subject_verb_disagreement", "drop_words", "word_swap", "negation_removal",
                 "repetition", "truncation")

#: :data:`metaeval.reliability.NORMALIZATIONS` and :data:`metaeval.reliability.CONSISTENCY_CI`.
NORMALIZATIONS = ("none", "blom", "tukey", "rankit", "van_der_waerden", "metriceval")
CONSISTENCY_CI = ("boot-systems", "boot-inputs", "boot-both", "feldt", "none")

#: :data:`metaeval.simulation.PAPER_GRIDS` and :data:`metaeval.simulation.SCALE_RESTRICTIONS`.
PAPER_GRIDS = ("levels", "scale-equal", "scale-ge")
SCALE_RESTRICTIONS = ("all", "equal", "metric_ge_human")

#: :mod:`metaeval.local`: ``PAIR_CONTEXTS``, ``TIES``, ``CHI2_TESTS``, ``WTAU_VARIANTS`` (its
#: ``AVERAGES`` are :data:`AVERAGES`).
PAIR_CONTEXTS = ("better", "worse", "within")
#: ``average`` of the local analyses takes :data:`AVERAGES`; these are its earlier names.
LOCAL_AVERAGE_ALIASES = {"input": "macro", "pair": "micro"}
LOCAL_TIES = ("incorrect", "exclude")
CHI2_TESTS = ("auto", "asymptotic", "permutation")
WTAU_VARIANTS = ("vigna", "shieh")

#: The LLM judge's registries (:mod:`metaeval.textmetrics`): aggregates, backends, decodings,
#: what fills the prompt's {source}, and what to do with answers without a rating or failed requests.
JUDGE_AGGREGATES = ("mean", "median", "geval")
JUDGE_BACKENDS = ("openai", "local")
JUDGE_DECODINGS = ("generate", "rating")
JUDGE_CONTEXTS = ("source", "references")
JUDGE_ON_FAILURE = ("nan", "random")
JUDGE_ON_ERROR = ("raise", "nan")

#: :data:`metaeval.preferences.FORMATS` and the statistics of ``compare_judges``.
PREFERENCE_FORMATS = ("csv", "jsonl", "mt-bench", "alpacaeval")
PREFERENCE_COMPARE_MEASURES = ("acc_23", "acc_eq", "kappa_raters", "kappa_majority")

#: :data:`metaeval.wmt.PRESETS` and :data:`metaeval.wmt.CLUSTER_RULES` (``holm``, the default: the
#: one clustering rule of compare, compare_all and the report; ``mtme``: mt-metrics-eval's exact rule).
WMT_PRESETS = ("wmt20", "wmt23", "wmt24")
WMT_CLUSTER_RULES = ("holm", "mtme", "metaeval")

#: :func:`metaeval.bench.bench`: the task weightings over datasets (``weighting``) and the texts a
#: metric can read (``needs``).
BENCH_WEIGHTINGS = ("data,human", "data", "equal")
BENCH_TEXTS = ("hypothesis", "source", "references")

#: :data:`metaeval.compare.CLUSTER_RULES`: the p-values of ``compare_all``'s clusters.
CLUSTER_RULES = ("metaeval", "mtme")
