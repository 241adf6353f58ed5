"""metaeval: meta-evaluation of NLG evaluation metrics.

The front door: :class:`Dataset` and the bundled datasets, :func:`correlate`
(how well each metric agrees with humans, at every level, with every usual
coefficient), :func:`compare` and :func:`compare_all` (is metric A really
better than metric B; significance clusters), :func:`discriminative_power`
and :func:`ranking_consistency` (which correlation measure to trust),
:func:`stability`, :func:`consistency`, :func:`agreement` (reliability of
metrics and human ratings), :func:`mtmm`, :func:`cfa`,
:func:`concurrent_validity` (validity), and the text-level diagnostics
(:func:`ks_score`, :func:`meta_correlation`, ...), and local metric accuracy
across contexts (:func:`local_pairs`, :func:`local_accuracy`,
:func:`context_chi2`, :func:`context_tau`).  Importing metaeval stays
light: no plotting or deep-learning library is imported.
"""

from ._version import __version__
from .errors import (
    ConstantInputWarning,
    HeywoodCaseWarning,
    NonConvergenceWarning,
    MissingCellsWarning,
    DataError,
    DegenerateGroupWarning,
    InputTypeError,
    InsufficientResamplesWarning,
    MetaevalError,
    MetaevalWarning,
    ParameterError,
    SmallExpectedCountWarning,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
)

# The public names live in submodules that need pandas, scipy.stats and numba;
# they are imported on first use (PEP 562), so `import metaeval` and
# `metaeval --help` stay fast.  `from metaeval import correlate` works as usual.
_LAZY = {
    ".wmt": (
        "compare_spa",
        "global_pairwise_accuracy",
        "run_tasks",
        "soft_pairwise_accuracy",
        "SoftPairwiseAccuracies",
        "SPAComparison",
        "TaskSetResults",
        "GlobalAccuracy",
    ),
    ".preferences": (
        "PreferenceData",
        "bradley_terry",
        "compare_judges",
        "length_bias",
        "position_consistency",
        "preference_agreement",
        "read_preferences",
        "PreferenceAgreements",
        "JudgeComparison",
        "PositionConsistencies",
        "LengthBiases",
        "BradleyTerry",
    ),
    ".compare": (
        "Comparison",
        "Comparisons",
        "compare",
        "compare_all",
    ),
    ".correlation": (
        "Correlation",
        "Correlations",
        "correlate",
    ),
    ".data": (
        "Dataset",
        "list_datasets",
        "load_dataset",
        "read_dataset",
        "read_mtme",
        "mtme_info",
        "read_summeval",
        "MtmeInfo",
    ),
    ".measures": (
        "DiscriminativePower",
        "RankingConsistency",
        "discriminative_power",
        "ranking_consistency",
    ),
    ".diagnostics": (
        "correlation_design",
        "ks_score",
        "meta_correlation",
        "perturbation_detection",
        "reference_sensitivity",
        "sample_size",
        "Detections",
        "KSScores",
        "MetaCorrelations",
        "SampleSizes",
        "ReferenceSensitivities",
        "CorrelationDesign",
    ),
    ".local": (
        "ContextChi2",
        "ContextTau",
        "LocalAccuracy",
        "LocalPairs",
        "context_chi2",
        "context_tau",
        "local_accuracy",
        "local_pairs",
        "weighted_tau",
    ),
    ".simulation": (
        "ParameterEstimates",
        "Simulation",
        "estimate_parameters",
        "simulate",
        "simulate_dataset",
        "simulate_paper_grid",
    ),
    ".reliability": (
        "agreement",
        "consistency",
        "consistency_curve",
        "rater_correlations",
        "stability",
        "Stabilities",
        "Consistencies",
        "ConsistencyCurves",
        "Agreements",
        "RaterCorrelations",
    ),
    ".validity": (
        "MTMM",
        "ConcurrentValidity",
        "FactorAnalysis",
        "ResidualPCA",
        "cfa",
        "concurrent_validity",
        "mtmm",
        "residual_pca",
    ),
    ".stats.coefficients": ("METHODS",),
    ".stats.levels": ("LEVELS",),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}


class _Package(__import__("types").ModuleType):
    """The package module.  A public function named like its submodule
    (``compare`` in ``metaeval/compare.py``) stays the function: the import
    system sets ``metaeval.compare`` to the submodule when it is first imported
    (by any module), which would otherwise shadow the function."""

    def __setattr__(self, name, value):
        if _WHERE.get(name) == f".{name}" and getattr(value, "__name__", "") == f"{__name__}.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


__import__("sys").modules[__name__].__class__ = _Package


def __getattr__(name):
    import importlib

    module = _WHERE.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if not name.startswith("__"):
        # a submodule (metaeval.data, metaeval.textmetrics, ...) on first access
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "__version__",
    "Dataset",
    "load_dataset",
    "list_datasets",
    "read_dataset",
    "read_mtme",
    "mtme_info",
    "read_summeval",
    "correlate",
    "Correlation",
    "Correlations",
    "compare",
    "compare_all",
    "Comparison",
    "Comparisons",
    "discriminative_power",
    "DiscriminativePower",
    "ranking_consistency",
    "RankingConsistency",
    "simulate",
    "simulate_paper_grid",
    "simulate_dataset",
    "estimate_parameters",
    "Simulation",
    "ParameterEstimates",
    "stability",
    "consistency",
    "consistency_curve",
    "agreement",
    "rater_correlations",
    "perturbation_detection",
    "ks_score",
    "meta_correlation",
    "sample_size",
    "reference_sensitivity",
    "correlation_design",
    "local_pairs",
    "local_accuracy",
    "context_chi2",
    "context_tau",
    "weighted_tau",
    "LocalPairs",
    "LocalAccuracy",
    "ContextChi2",
    "ContextTau",
    "cfa",
    "FactorAnalysis",
    "mtmm",
    "MTMM",
    "concurrent_validity",
    "ConcurrentValidity",
    "residual_pca",
    "ResidualPCA",
    "PreferenceData",
    "read_preferences",
    "preference_agreement",
    "compare_judges",
    "position_consistency",
    "length_bias",
    "bradley_terry",
    "soft_pairwise_accuracy",
    "compare_spa",
    "run_tasks",
    "global_pairwise_accuracy",
    "LEVELS",
    "METHODS",
    "MetaevalError",
    "DataError",
    "ParameterError",
    "InputTypeError",
    "MetaevalWarning",
    "DegenerateGroupWarning",
    "ConstantInputWarning",
    "TooFewPairsWarning",
    "UndefinedStatisticWarning",
    "InsufficientResamplesWarning",
    "MissingCellsWarning",
    "NonConvergenceWarning",
    "HeywoodCaseWarning",
    "SmallExpectedCountWarning",
    # result classes returned by the public functions
    "MtmeInfo",
    "Stabilities",
    "Consistencies",
    "ConsistencyCurves",
    "Agreements",
    "RaterCorrelations",
    "Detections",
    "KSScores",
    "MetaCorrelations",
    "SampleSizes",
    "ReferenceSensitivities",
    "CorrelationDesign",
    "PreferenceAgreements",
    "JudgeComparison",
    "PositionConsistencies",
    "LengthBiases",
    "BradleyTerry",
    "SoftPairwiseAccuracies",
    "SPAComparison",
    "TaskSetResults",
    "GlobalAccuracy",
]
