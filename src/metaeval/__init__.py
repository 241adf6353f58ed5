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
from .compare import Comparison, Comparisons, compare, compare_all
from .correlation import Correlation, Correlations, correlate
from .data import Dataset, list_datasets, load_dataset, read_dataset, read_mtme, mtme_info
from .measures import (
    DiscriminativePower,
    RankingConsistency,
    discriminative_power,
    ranking_consistency,
)
from .diagnostics import (
    correlation_design,
    ks_score,
    meta_correlation,
    perturbation_detection,
    reference_sensitivity,
    sample_size,
)
from .local import (
    ContextChi2,
    ContextTau,
    LocalAccuracy,
    LocalPairs,
    context_chi2,
    context_tau,
    local_accuracy,
    local_pairs,
    weighted_tau,
)
from .simulation import (
    ParameterEstimates,
    Simulation,
    estimate_parameters,
    simulate,
    simulate_dataset,
    simulate_paper_grid,
)
from .reliability import (
    agreement,
    consistency,
    consistency_curve,
    rater_correlations,
    stability,
)
from .validity import (
    MTMM,
    ConcurrentValidity,
    FactorAnalysis,
    ResidualPCA,
    cfa,
    concurrent_validity,
    mtmm,
    residual_pca,
)
from .wmt import compare_spa, global_pairwise_accuracy, run_tasks, soft_pairwise_accuracy
from .errors import (
    ConstantInputWarning,
    HeywoodCaseWarning,
    NonConvergenceWarning,
    MissingCellsWarning,
    DataError,
    DegenerateGroupWarning,
    InsufficientResamplesWarning,
    MetaevalError,
    MetaevalWarning,
    ParameterError,
    SmallExpectedCountWarning,
    TooFewPairsWarning,
    UndefinedStatisticWarning,
)
from .stats.coefficients import METHODS
from .stats.levels import LEVELS

__all__ = [
    "__version__",
    "Dataset",
    "load_dataset",
    "list_datasets",
    "read_dataset",
    "read_mtme",
    "mtme_info",
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
    "soft_pairwise_accuracy",
    "compare_spa",
    "run_tasks",
    "global_pairwise_accuracy",
    "LEVELS",
    "METHODS",
    "MetaevalError",
    "DataError",
    "ParameterError",
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
]
