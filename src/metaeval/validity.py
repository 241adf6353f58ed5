"""Validity of metrics and of human ratings (seed paper 002, MetricEval, sec. 3.2).

Reliability (:mod:`metaeval.reliability`) asks how much of a score is noise;
validity asks whether the score measures what it should.  Seed paper 002
(Xiao et al. 2023) operationalizes it with four tools, all here:

:func:`concurrent_validity`
    the correlation of each metric with a validated reference criterion, raw
    human means or factor scores (section 3.2.1; section 4.2 and Figure 4 use
    Kendall's tau between system means and expert factor scores).
:func:`mtmm`
    the multitrait-multimethod table (Campbell and Fiske 1959; section 3.2.2,
    Tables 1 and 2): convergent (same trait, different method), discriminant
    (different traits, same method: heterotrait-monomethod) and
    heterotrait-heteromethod correlations, with reliabilities on the
    diagonal and the Campbell-Fiske comparisons.
:func:`cfa`
    confirmatory factor analysis (section 3.2.2, Appendix A.4): continuous
    indicators by maximum likelihood, ordinal ones (expert Likert ratings) by
    diagonally weighted least squares on polychoric correlations with robust
    standard errors and the mean-and-variance adjusted test (lavaan's
    ``WLSMV``), fit indices, factor correlations, residual correlations and
    factor scores.  The reference is R lavaan 0.6 (tests pin its numbers).
:func:`residual_pca`
    principal components of the metrics' residuals after regressing them on
    the factor scores (Appendix A.6, Figure 7), with
    :func:`plot_residual_pca`.

Every result is a frozen dataclass of raw floats with ``to_frame()`` (a tidy
table whose columns its docstring lists), ``to_dict()`` and a ``signature``.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as _st

from ._signature import make_signature
from ._stacklevel import user_stacklevel
from .data import sysscores as _sys
from .data import accepts_frames
from .errors import (
    ConstantInputWarning,
    HeywoodCaseWarning,
    NonConvergenceWarning,
    DataError,
    MissingCellsWarning,
    ParameterError,
)
from ._results import _ARR, _Collection, _Result
from ._vocab import as_list, check_choice, check_dataset, check_int
from .stats.cfafit import (
    MAX_CATEGORIES,
    check_identified as _check_identified,
    fit_continuous as _fit_continuous,
    fit_ordinal as _fit_ordinal,
    is_ordinal_like as _is_ordinal_like,
    ordinal_codes as _ordinal_codes,
    model_spec as _spec,
)
from .stats.cfamodel import CFAModel, parse_model
from .stats.pca import residual_components
from .stats.coefficients import check_method_levels
from .stats import exact as _exact
from .stats.agreement import rater_design
from .stats.alpha import alpha_batch, listwise_complete
from .stats.coefficients import VALIDITY_METHOD, pow2_exponent
from .stats.inference import analytic_pvalue
from .stats.levels import arrange, check_average, check_level, level_values



#: Estimators of :func:`cfa` (chosen from the indicators' type).
ESTIMATORS = {
    "ML": "continuous indicators: maximum likelihood on the covariance matrix (divisor N), "
    "standard errors from the expected information; lavaan cfa(estimator = 'ML')",
    "DWLS": "ordinal indicators: two-step thresholds and polychoric correlations, diagonally "
    "weighted least squares, robust standard errors and the scaled-shifted test; lavaan "
    "cfa(ordered = ...), i.e. estimator = 'WLSMV'",
}

#: Factor-score methods of :func:`cfa`.
SCORE_METHODS = {
    "ebm": "lavPredict(method = 'EBM'): regression scores for continuous indicators, "
    "empirical Bayes modal (posterior mode) for ordinal ones",
    "none": "no factor scores",
}

#: Blocks of an MTMM table.
MTMM_BLOCKS = {
    "reliability": "diagonal: reliability of the measure (Cronbach's alpha)",
    "convergent": "same trait, different methods (the validity diagonal)",
    "heterotrait_monomethod": "different traits, same method (discriminant / divergent validity)",
    "heterotrait_heteromethod": "different traits, different methods",
}

_SEP = "@"  # "column@rater" picks one rater (or run) of a column


# =============================================================================
# shared input handling


def _source_matrix(dataset, ref):
    """(N, M) scores of an indicator reference: a column, 'column@rater' or an array."""
    if isinstance(ref, np.ndarray) or (not isinstance(ref, str) and hasattr(ref, "__array__")):
        a = np.asarray(ref, dtype=float)
        if a.shape != (len(dataset.systems), len(dataset.inputs)):
            raise DataError(
                f"an array given as a score source has shape {a.shape}; expected (N, M) = "
                f"({len(dataset.systems)}, {len(dataset.inputs)})"
            )
        return a
    if not isinstance(ref, str):
        raise ParameterError(
            f"score source {ref!r} must be a column name, 'column{_SEP}rater' or an (N, M) array"
        )
    if ref in dataset.columns:
        return np.asarray(dataset.scores(ref), dtype=float)
    if _SEP in ref:
        col, rater = ref.rsplit(_SEP, 1)
        if col in dataset.columns:
            labels = dataset.rater_labels(col)
            if rater not in labels:
                raise DataError(
                    f"{ref!r}: column {col!r} has no rater or run {rater!r}; its labels: "
                    f"{', '.join(map(repr, labels))}"
                )
            return np.asarray(dataset.ratings(col)[labels.index(rater)], dtype=float)
    dataset.ratings(ref)  # raises the dataset's DataError listing the columns
    raise DataError(f"unknown score column {ref!r}")  # pragma: no cover


def _rated_columns(dataset):
    return [c for c in dataset.human if dataset.ratings(c).shape[0] >= 2]


# The domain rules of MTMM and CFA on raters (the command line only passes them on): each
# rater of a human column is one method (an MTMM method, a CFA indicator), so the raters must be
# the same people in every cell: raters rotating over cells are refused here (a DataError from the
# ratings themselves).  Rater slots (different people in different cells under one rater name)
# cannot be told from the data, so mtmm and cfa take no rating-design parameter: the refusal of
# slots belongs where slots are declared, the command line's --rater-slots.


def _rated_traits(dataset, columns):
    """The human columns whose raters are methods: ``columns``, or every human column with 2+
    raters when None; each with 2+ raters, the same raters in every cell."""
    if columns is None:
        columns = _rated_columns(dataset)
        if not columns:
            raise DataError("no human column has individual raters: MTMM and CFA need 2+ raters "
                            "(long files: --rater-col; raters in columns: --rater-cols)")
    columns = as_list(columns, "design")
    for c in columns:
        if c not in dataset.columns:
            dataset.ratings(c)  # raises the dataset's DataError listing the columns
    single = [c for c in columns if dataset.ratings(c).shape[0] < 2]
    if single:
        raise DataError(
            f"{', '.join(map(repr, single))}: one rating per cell (a single rater); MTMM and CFA take "
            "human columns with 2+ raters as traits and their raters as methods (--human; long files: "
            "--rater-col), or a {method: {trait: column}} design"
        )
    _check_same_raters(dataset, columns)
    return columns


def _check_same_raters(dataset, columns):
    """A DataError when the raters of a column rotate over cells (no two cells rated by all)."""
    for c in dict.fromkeys(columns):
        r = np.asarray(dataset.ratings(c), dtype=float)
        if r.shape[0] >= 2 and rater_design(r.reshape(r.shape[0], -1)) == "rotating":
            raise DataError(
                f"the raters of {c!r} rotate over cells (fewer than two cells rated by all "
                f"{r.shape[0]}): MTMM and CFA treat each rater as one method and need the same "
                "raters in every cell; run `metaeval reliability` for the one-way ICC(1)/ICC(1,k) "
                "and Krippendorff's alpha, which apply"
            )


def _rater_sources(dataset, refs):
    """The columns named by ``"column@rater"`` references among ``refs``."""
    out = []
    for ref in refs:
        if isinstance(ref, str) and ref not in dataset.columns and _SEP in ref:
            col = ref.rsplit(_SEP, 1)[0]
            if col in dataset.columns:
                out.append(col)
    return out


# =============================================================================
# CFA model specification


def _default_model(dataset):
    cols = _rated_columns(dataset)
    if not cols:
        raise DataError(
            "no model given and no human column of the dataset has two or more raters; pass "
            "model={'factor': ['indicator', ...], ...} or lavaan syntax 'F =~ a + b + c'"
        )
    cols = _rated_traits(dataset, cols)
    return CFAModel(
        tuple(cols),
        tuple((c, tuple(f"{c}{_SEP}{r}" for r in dataset.rater_labels(c))) for c in cols),
    )


# =============================================================================
# CFA result


@dataclass(frozen=True)
class FactorAnalysis(_Result):
    """A fitted confirmatory factor model (see :func:`cfa`).

    Attributes
    ----------
    factors, indicators : tuple of str
    estimator : str
        ``DWLS`` (ordinal indicators; lavaan's WLSMV) or ``ML``.
    test : str
        ``scaled.shifted`` (DWLS) or ``standard`` (ML).
    n_obs : int
        Units (system x input cells) used.
    n_cells_dropped : int
        Cells with a missing indicator (listwise deletion).
    n_parameters : int
        Free parameters (thresholds included for DWLS, as lavaan counts).
    df : int
        Degrees of freedom of the test.
    chi2, pvalue : float
        The standard test statistic: (N - 1) F_DWLS for DWLS (lavaan's
        convention with categorical data), N F_ML for ML; p-value of
        chi2(df).
    chi2_scaled, pvalue_scaled, scaling_factor, shift_parameter : float
        The mean-and-variance adjusted statistic a chi2 + b (lavaan's
        ``scaled.shifted``; ``scaling_factor`` = 1/a) and its p-value.
        NaN for ML.
    chi2_baseline, df_baseline, chi2_baseline_scaled : float
        The independence model (all correlations 0; thresholds or variances
        free).
    cfi, tli : float
        1 - max(chi2 - df, 0) / max(chi2 - df, chi2_b - df_b, 0) and
        (chi2_b/df_b - chi2/df) / (chi2_b/df_b - 1), on the standard
        statistics (the values the paper reports).
    rmsea, rmsea_ci_low, rmsea_ci_high, rmsea_pvalue : float
        sqrt(max(chi2/df - 1, 0) / N'), its 90% interval from the noncentral
        chi-square and the test of close fit (RMSEA <= .05); N' = N - 1 for
        DWLS and N for ML (lavaan).
    cfi_scaled, tli_scaled, rmsea_scaled, rmsea_scaled_ci_low, rmsea_scaled_ci_high : float
        The same on the scaled statistics (lavaan's ``*.scaled``; NaN for ML).
    srmr : float
        Standardized root mean square residual, sqrt of the mean squared
        residual correlation over the p(p+1)/2 entries of the lower triangle
        with the diagonal (lavaan's ``srmr``: Bentler's, without means).
    converged : bool
        The estimator met its convergence criterion.
    admissible : bool
        No Heywood case: every standardized residual variance is >= 0 and
        every factor correlation is within [-1, 1].
    problem : str
        Empty when the fit is interpretable; otherwise why it is not and what
        to try.  A fit that did not converge or is inadmissible is not
        interpretable (:attr:`interpretable` is False): its tables carry the
        flags, and :func:`concurrent_validity` and :func:`residual_pca` refuse
        its factor scores.
    orthogonal : bool
    score_method : str
    model_syntax : str
        The model in lavaan syntax.
    signature : str
        ``method:dwls|nan:listwise|test:scaled.shifted|n:1700|units:cells|
        model:<first 8 hex digits of the SHA-1 of model_syntax>|orth:no|
        scores:ebm|metaeval:<version>``.
    loadings : ndarray (p, k)
        Standardized loadings (``std.all``; 0 where not free).
    loadings_se : ndarray (p, k)
        Standard errors of the loadings as estimated (DWLS: the standardized
        ones; ML: the unstandardized ones, ``loadings_raw``); NaN where fixed.
    loadings_raw : ndarray (p, k)
        Estimates on the indicators' scale (equal to ``loadings`` for DWLS).
    factor_correlations, factor_correlations_se : ndarray (k, k)
    residual_variances : ndarray (p,)
        Standardized residual variances 1 - communality.
    residual_variances_se : ndarray (p,)
        Standard errors of the unstandardized residual variances (ML; NaN for
        DWLS, where they are not free parameters).
    thresholds, thresholds_se : tuple of ndarray
        Per indicator (DWLS; empty for ML).
    categories : tuple of ndarray
        The observed category values of each ordinal indicator.
    sample_correlations, implied_correlations, residual_correlations : ndarray (p, p)
        Polychoric (DWLS) or Pearson (ML) correlations, the model's, and
        their difference.
    factor_scores : ndarray (k, N, M) or None
        Factor scores of every (system, input) cell, NaN for dropped cells.
    """

    factors: tuple = field(metadata={"nofr": True})
    indicators: tuple = field(metadata={"nofr": True})
    estimator: str
    test: str
    n_obs: int
    n_cells_dropped: int
    n_parameters: int
    df: int
    chi2: float
    pvalue: float
    chi2_scaled: float
    pvalue_scaled: float
    scaling_factor: float
    shift_parameter: float
    chi2_baseline: float
    df_baseline: int
    chi2_baseline_scaled: float
    cfi: float
    tli: float
    rmsea: float
    rmsea_ci_low: float
    rmsea_ci_high: float
    rmsea_pvalue: float
    cfi_scaled: float
    tli_scaled: float
    rmsea_scaled: float
    rmsea_scaled_ci_low: float
    rmsea_scaled_ci_high: float
    srmr: float
    converged: bool
    admissible: bool
    problem: str
    orthogonal: bool
    score_method: str
    model_syntax: str
    signature: str
    loadings: np.ndarray | None = field(**_ARR)
    loadings_se: np.ndarray | None = field(**_ARR)
    loadings_raw: np.ndarray | None = field(**_ARR)
    factor_correlations: np.ndarray | None = field(**_ARR)
    factor_correlations_se: np.ndarray | None = field(**_ARR)
    residual_variances: np.ndarray | None = field(**_ARR)
    residual_variances_se: np.ndarray | None = field(**_ARR)
    thresholds: tuple | None = field(**_ARR)
    thresholds_se: tuple | None = field(**_ARR)
    categories: tuple | None = field(**_ARR)
    sample_correlations: np.ndarray | None = field(**_ARR)
    implied_correlations: np.ndarray | None = field(**_ARR)
    residual_correlations: np.ndarray | None = field(**_ARR)
    factor_scores: np.ndarray | None = field(**_ARR)
    _FIT = (
        ("chi2", "chisq"), ("df", "df"), ("pvalue", "pvalue"),
        ("chi2_scaled", "chisq.scaled"), ("pvalue_scaled", "pvalue.scaled"),
        ("scaling_factor", "chisq.scaling.factor"), ("shift_parameter", "chisq.shift.parameters"),
        ("chi2_baseline", "baseline.chisq"), ("df_baseline", "baseline.df"),
        ("chi2_baseline_scaled", "baseline.chisq.scaled"),
        ("cfi", "cfi"), ("tli", "tli"), ("rmsea", "rmsea"),
        ("rmsea_ci_low", "rmsea.ci.lower"), ("rmsea_ci_high", "rmsea.ci.upper"),
        ("rmsea_pvalue", "rmsea.pvalue"), ("cfi_scaled", "cfi.scaled"),
        ("tli_scaled", "tli.scaled"), ("rmsea_scaled", "rmsea.scaled"),
        ("rmsea_scaled_ci_low", "rmsea.ci.lower.scaled"),
        ("rmsea_scaled_ci_high", "rmsea.ci.upper.scaled"), ("srmr", "srmr"),
    )

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Scalars (and, with ``arrays``, every array as nested lists)."""
        d = super().to_dict(arrays=False)
        if arrays:
            for name in ("loadings", "loadings_se", "loadings_raw", "factor_correlations",
                         "factor_correlations_se", "residual_variances", "residual_variances_se",
                         "sample_correlations",
                         "implied_correlations", "residual_correlations", "factor_scores"):
                v = getattr(self, name)
                d[name] = None if v is None else np.asarray(v).tolist()
            for name in ("thresholds", "thresholds_se", "categories"):
                d[name] = [np.asarray(v).tolist() for v in getattr(self, name)]
        return d

    def to_frame(self) -> pd.DataFrame:
        """The parameter table, one row per estimate (lavaan's ``parameterEstimates``).

        Columns: ``kind`` (``loading``, ``factor_correlation``, ``threshold``,
        ``residual_variance``), ``lhs``, ``op`` (``=~``, ``~~``, ``|``),
        ``rhs``, ``estimate`` (on the indicators' scale for ML, standardized
        for DWLS), ``se``, ``z``, ``pvalue`` (two-sided normal), ``std_all``
        (completely standardized), ``converged``, ``admissible`` (the fit's
        flags, on every row: see :attr:`problem`), ``signature``.
        """
        rows = []

        def add(kind, lhs, op, rhs, est, se, std):
            z = est / se if se and np.isfinite(se) and se > 0 else np.nan
            p = float(2 * _st.norm.sf(abs(z))) if np.isfinite(z) else np.nan
            rows.append(dict(kind=kind, lhs=lhs, op=op, rhs=rhs, estimate=float(est),
                             se=float(se), z=float(z), pvalue=p, std_all=float(std)))

        for a, f in enumerate(self.factors):
            for i, ind in enumerate(self.indicators):
                if np.isfinite(self.loadings_se[i, a]) or self.loadings_raw[i, a] != 0:
                    add("loading", f, "=~", ind, self.loadings_raw[i, a], self.loadings_se[i, a],
                        self.loadings[i, a])
        k = len(self.factors)
        for b in range(k):
            for a in range(b + 1, k):
                add("factor_correlation", self.factors[b], "~~", self.factors[a],
                    self.factor_correlations[a, b], self.factor_correlations_se[a, b],
                    self.factor_correlations[a, b])
        for i, ind in enumerate(self.indicators):
            for t, (v, s) in enumerate(zip(self.thresholds[i], self.thresholds_se[i])):
                add("threshold", ind, "|", f"t{t + 1}", v, s, v)
        sd = self._indicator_sd()
        for i, ind in enumerate(self.indicators):
            add("residual_variance", ind, "~~", ind, self.residual_variances[i] * sd[i] ** 2,
                self.residual_variances_se[i], self.residual_variances[i])
        out = pd.DataFrame(rows, columns=["kind", "lhs", "op", "rhs", "estimate", "se", "z",
                                          "pvalue", "std_all"])
        out["converged"], out["admissible"] = self.converged, self.admissible
        out["signature"] = self.signature
        return out

    def _indicator_sd(self):
        with np.errstate(all="ignore"):
            ratio = np.where(self.loadings != 0, self.loadings_raw / self.loadings, np.nan)
        sd = np.nanmax(np.abs(ratio), axis=1)
        return np.where(np.isfinite(sd), sd, 1.0)

    @property
    def interpretable(self) -> bool:
        """True when the fit converged and is admissible (no Heywood case)."""
        return bool(self.converged and self.admissible)

    def check_interpretable(self, purpose: str) -> None:
        """Raise :class:`~metaeval.errors.ParameterError` naming :attr:`problem`
        when the fit is not interpretable (``purpose``: what needed it)."""
        if not self.interpretable:
            raise ParameterError(f"{purpose} needs an interpretable CFA, and this one is not: {self.problem}")

    def fit_frame(self) -> pd.DataFrame:
        """Fit measures as a tidy table: ``measure``, ``lavaan`` (fitMeasures name), ``value``,
        and the flags ``converged``, ``admissible`` (the same on every row: a fit that is not
        both is not interpretable, see :attr:`problem`)."""
        rows = [(ours, lav, float(getattr(self, ours))) for ours, lav in self._FIT]
        out = pd.DataFrame(rows, columns=["measure", "lavaan", "value"])
        out["converged"], out["admissible"] = self.converged, self.admissible
        return out

    def residual_frame(self) -> pd.DataFrame:
        """Residual correlations, one row per indicator pair (i < j).

        Columns: ``indicator_a``, ``indicator_b``, ``sample``, ``implied``,
        ``residual``.
        """
        rows = []
        p = len(self.indicators)
        for i in range(p):
            for j in range(i + 1, p):
                rows.append((self.indicators[i], self.indicators[j],
                             float(self.sample_correlations[i, j]),
                             float(self.implied_correlations[i, j]),
                             float(self.residual_correlations[i, j])))
        return pd.DataFrame(rows, columns=["indicator_a", "indicator_b", "sample", "implied",
                                           "residual"])

    def correlation_matrix(self) -> pd.DataFrame:
        """The k x k factor correlations as a labelled DataFrame."""
        return pd.DataFrame(self.factor_correlations, index=list(self.factors),
                            columns=list(self.factors))

    def score_matrix(self, factor: str) -> np.ndarray:
        """The (N, M) factor scores of one factor (NaN for dropped cells)."""
        if self.factor_scores is None:
            raise ParameterError("factor scores were not computed (score_method='none')")
        if factor not in self.factors:
            raise KeyError(f"unknown factor {factor!r}; factors: {', '.join(self.factors)}")
        return self.factor_scores[self.factors.index(factor)]


@accepts_frames()
def cfa(
    dataset,
    model=None,
    *,
    ordered="auto",
    orthogonal=False,
    scores="ebm",
) -> FactorAnalysis:
    """Confirmatory factor analysis (seed paper 002, sec. 3.2.2 and Appendix A.4).

    Units are the (system, input) cells of the dataset (1700 on SummEval, as
    in the paper's analysis); cells with a missing indicator are dropped
    (listwise, counted in ``n_cells_dropped``, with a
    :class:`~metaeval.errors.MissingCellsWarning`).  Factor variances are 1
    (lavaan's ``std.lv = TRUE``); factor correlations are free unless fixed.

    **Continuous indicators** (``estimator="ML"``): maximum likelihood on the
    covariance matrix S (divisor N), F = log|Sigma| - log|S| + tr(S
    Sigma^{-1}) - p, chi2 = N F, standard errors from the expected
    information; lavaan ``cfa(model, data, std.lv = TRUE)``.

    **Ordinal indicators** (``estimator="DWLS"``, lavaan's default
    ``WLSMV`` for ``ordered`` variables; Muthen 1984):

    1. thresholds tau_jc = Phi^{-1}(P(Y_j <= c)) from the marginals;
    2. polychoric correlation of each pair by ML with the thresholds fixed;
    3. their asymptotic covariance Gamma from case-wise scores (Muthen 1984);
    4. DWLS: minimize F = sum_k w_k (r_k - rho_k(theta))^2, w = 1/diag(Gamma),
       with rho(theta) = offdiag(Lambda Phi Lambda') (delta parameterization:
       latent responses of unit variance);
    5. robust standard errors E^{-1} Delta' W Gamma W Delta E^{-1} / (N - 1),
       E = Delta' W Delta, and the scaled-shifted test a T + b with
       a = sqrt(df / tr((U Gamma)^2)), b = df - a tr(U Gamma),
       U = W - W Delta E^{-1} Delta' W (Asparouhov and Muthen 2010);
       T = (N - 1) F (lavaan's convention for categorical data).

    Fit indices (CFI, TLI, RMSEA with 90% interval, SRMR) follow lavaan's
    ``fitMeasures`` exactly (see :class:`FactorAnalysis`).

    **Factor scores** (``scores="ebm"``, lavaan's default ``lavPredict``
    method ``"EBM"``): for continuous indicators the regression scores
    Phi Lambda' Sigma^{-1} (y - ybar); for ordinal ones the posterior mode of
    the factors given the cell's response pattern (empirical Bayes modal),
    computed exactly by Newton's method.  lavaan floors category
    probabilities at machine epsilon and stops early for response patterns
    of near-deterministic indicators (on SummEval: consistency); there the
    scores here are the true posterior modes and differ from lavaan's (see
    the docs).

    Parameters
    ----------
    dataset : Dataset
    model : dict, str or CFAModel, optional
        Factor -> indicators (see :func:`parse_model`).  Indicators are
        score columns or ``"column@rater"`` (one rater of a column with
        raters).  Default: one factor per human column with two or more
        raters, its raters as indicators (on SummEval: the paper's 4-factor
        model of the 12 expert ratings).
    ordered : "auto", bool or list of str
        Which indicators are ordinal.  ``"auto"``: all of them when every
        indicator has integer values with at most :data:`MAX_CATEGORIES`
        categories, none otherwise.  Mixed models are not supported.
    orthogonal : bool
        Fix every factor correlation to 0 (lavaan's ``orthogonal = TRUE``;
        MetricEval's factor scores for concurrent validity come from this
        model).
    scores : {"ebm", "none"}
        Factor scores (see :data:`SCORE_METHODS`).

    Returns
    -------
    FactorAnalysis

    Raises
    ------
    ParameterError
        A model that is not identified (a factor with one indicator; two
        indicators and no correlation; more free parameters than moments; a
        rank-deficient Jacobian), bad syntax, mixed ordinal and continuous
        indicators.
    DataError
        Unknown columns; an indicator declared ordinal with non-integer values
        or more than :data:`MAX_CATEGORIES` categories (the message names
        it); a constant indicator; fewer complete cells than indicators;
        rater indicators of a column whose raters rotate over cells.

    Examples
    --------
    >>> import numpy as np
    >>> import metaeval
    >>> from metaeval.validity import cfa
    >>> rng = np.random.default_rng(1)
    >>> f = rng.normal(size=(2, 50, 20))                 # two latent traits, 50 x 20 cells
    >>> cols = {f"{t}{i}": 0.8 * f[k] + 0.6 * rng.normal(size=(50, 20))
    ...         for k, t in enumerate("ab") for i in range(3)}
    >>> ds = metaeval.Dataset({"h": f[0], **cols}, human="h",
    ...                       systems=[f"s{i}" for i in range(50)],
    ...                       inputs=[f"x{j}" for j in range(20)])
    >>> fit = cfa(ds, "A =~ a0 + a1 + a2\\nB =~ b0 + b1 + b2")
    >>> fit.estimator, fit.df, round(fit.cfi, 3), fit.loadings.round(1)[:, 0].tolist()
    ('ML', 8, 0.999, [0.8, 0.8, 0.8, 0.0, 0.0, 0.0])
    """
    check_dataset(dataset)
    check_choice(scores, "scores", SCORE_METHODS)
    if not isinstance(orthogonal, bool):
        raise ParameterError(f"orthogonal={orthogonal!r} must be True or False")
    model = _default_model(dataset) if model is None else parse_model(model)
    spec = _spec(model, orthogonal)
    names = spec.indicators
    _check_same_raters(dataset, _rater_sources(dataset, names))
    mats = np.stack([_source_matrix(dataset, i) for i in names])  # (p, N, M)
    p, N, M = mats.shape
    X = mats.reshape(p, -1).T
    complete = np.isfinite(X).all(1)
    n_drop = int((~complete).sum())
    X = X[complete]
    n = X.shape[0]
    if n_drop:
        warnings.warn(
            f"cfa: {n_drop} of {N * M} cells miss an indicator and were dropped (listwise; "
            "counted in n_cells_dropped)",
            MissingCellsWarning,
            stacklevel=user_stacklevel(),
        )
    if n <= p:
        raise DataError(f"cfa needs more complete cells than indicators: {n} cells, {p} indicators")
    # ordinal or continuous
    if isinstance(ordered, str):
        if ordered != "auto":
            raise ParameterError(f"ordered={ordered!r}; choose 'auto', True, False or a list")
        ordinal = all(_is_ordinal_like(X[:, j]) for j in range(p))
        declared = False
    elif isinstance(ordered, bool):
        ordinal, declared = ordered, True
    else:
        lst = as_list(ordered, "ordered")
        unknown = [o for o in lst if o not in names]
        if unknown:
            raise ParameterError(
                f"ordered lists {unknown}, which are not indicators of the model: "
                f"{', '.join(names)}"
            )
        if set(lst) != set(names):
            raise ParameterError(
                "mixing ordinal and continuous indicators is not supported; declare all "
                "indicators ordinal (ordered=True) or none (ordered=False)"
            )
        ordinal, declared = True, True
    if ordinal:
        codes, cats = _ordinal_codes(X, names, declared)
        n_mom = sum(c.size - 1 for c in cats) + p * (p - 1) // 2
    else:
        # each indicator scaled by a power of two (exact) where its covariances would over- or
        # underflow (values beyond ~1e154 stopped the solver on NaN, below ~1e-154 read as
        # constant); ML is invariant to rescaling the indicators, and the estimates in the
        # data's unit are scaled back below
        unit = np.array([pow2_exponent(X[:, j]) for j in range(p)], dtype=int)
        if unit.any():
            X = np.ldexp(X, -unit[None, :])
        sd = X.std(0)
        if np.any(sd == 0):
            raise DataError(f"indicator {names[int(np.argmin(sd))]!r} is constant over the cells")
        n_mom = p * (p + 1) // 2
    _check_identified(spec, model, not ordinal, n_mom)
    fit = (_fit_ordinal if ordinal else _fit_continuous)(spec, X, codes if ordinal else None,
                                                        cats if ordinal else None, scores)
    if not ordinal and unit.any():  # raw loadings and their SEs in the indicator's unit
        fit["loadings_raw"] = np.ldexp(fit["loadings_raw"], unit[:, None])
        fit["loadings_se"] = np.ldexp(fit["loadings_se"], unit[:, None])
        with np.errstate(over="ignore"):
            fit["residual_variances_se"] = np.ldexp(fit["residual_variances_se"], 2 * unit)
    admissible = not (np.any(~np.isfinite(fit["residual_variances"])) or np.any(fit["residual_variances"] < 0)
                      or np.any(~np.isfinite(fit["Phi"])) or np.any(np.abs(fit["Phi"]) > 1 + 1e-12))
    problems = []
    if not fit["converged"]:
        problems.append("the estimator did not converge")
    if not admissible:
        problems.append("Heywood case (a residual variance below 0 or a factor correlation beyond "
                        "+-1)")
    problem = ""
    if problems:
        problem = (
            " and ".join(problems) + ", so its estimates, fit measures and factor scores are not "
            "interpretable; try fewer factors (merge strongly related traits), more raters per trait "
            "or more rated cells, and check that each rater column is the same person in every cell "
            "(rotating rater slots are not methods)"
        )
    if not fit["converged"]:
        warnings.warn(f"cfa: {problem}", NonConvergenceWarning, stacklevel=user_stacklevel())
    elif not admissible:
        warnings.warn(f"cfa: {problem}", HeywoodCaseWarning, stacklevel=user_stacklevel())
    fs = None
    if fit["scores"] is not None:
        fs = np.full((spec.k, N * M), np.nan)
        fs[:, complete] = fit["scores"].T
        fs = fs.reshape(spec.k, N, M)
    syntax = model.to_lavaan() + ("\n# orthogonal = TRUE" if orthogonal else "")
    h = hashlib.sha1(syntax.encode()).hexdigest()[:8]
    sig = make_signature(
        method=fit["estimator"].lower(),
        test=fit["test"],
        n=n,
        nan="listwise",
        units="cells",
        model=h,
        orth=orthogonal,
        scores=scores,
    )
    return FactorAnalysis(
        factors=spec.factors,
        indicators=names,
        n_obs=n,
        n_cells_dropped=n_drop,
        orthogonal=orthogonal,
        score_method=scores,
        model_syntax=syntax,
        signature=sig,
        factor_scores=fs,
        admissible=bool(admissible),
        problem=problem,
        **{k: v for k, v in fit.items() if k not in ("scores", "Phi")},
    )


# =============================================================================
# concurrent validity


@dataclass(frozen=True)
class ValidityCoefficient(_Result):
    """One metric's correlation with one criterion (see :func:`concurrent_validity`).

    Attributes
    ----------
    metric, criterion : str
    criterion_kind : str
        ``human`` (a score column: raw means over raters), ``factor_score``
        (from a :class:`FactorAnalysis`) or ``array``.
    level, method, average : str
    statistic : float
    pvalue : float
        Analytic p-value of a single correlation (``system`` and ``global``
        levels, as :func:`metaeval.correlate` with ``pvalue="auto"``); NaN
        otherwise.
    n : int
        Valid pairs used (systems at ``system`` level, cells otherwise).
    n_groups, n_groups_dropped : int
    signature : str
    """

    metric: str
    criterion: str
    criterion_kind: str
    level: str
    method: str
    average: str
    statistic: float
    pvalue: float
    n: int
    n_groups: int
    n_groups_dropped: int
    signature: str


@dataclass(frozen=True)
class ConcurrentValidity(_Collection):
    """The results of :func:`concurrent_validity`, one per metric and criterion.

    ``to_frame()`` has one row per (metric, criterion) with the columns
    ``metric, criterion, criterion_kind, level, method, average, statistic,
    pvalue, n, n_groups, n_groups_dropped, signature``.
    """

    _item = ValidityCoefficient
    _key = "metric"

    def get(self, metric: str, criterion: str | None = None):
        """The single result for ``metric`` (and ``criterion`` if several)."""
        hits = [r for r in self.results
                if r.metric == metric and (criterion is None or r.criterion == criterion)]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} results match metric={metric!r}, criterion={criterion!r}")
        return hits[0]

    def matrix(self) -> pd.DataFrame:
        """Metrics x criteria table of the statistic (the paper's Figure 4/8 layout)."""
        f = self.to_frame()
        m = f.pivot(index="metric", columns="criterion", values="statistic")
        return m.loc[list(dict.fromkeys(f["metric"])), list(dict.fromkeys(f["criterion"]))]


def _criteria(dataset, criteria):
    """[(name, kind, (N, M) array)] from the ``criteria`` argument."""
    if criteria is None:
        cols = _rated_columns(dataset) or list(dataset.human)
        return [(c, "human", np.asarray(dataset.scores(c), float)) for c in cols]
    if isinstance(criteria, FactorAnalysis):
        criteria.check_interpretable("concurrent validity against factor scores")
        if criteria.factor_scores is None:
            raise ParameterError("the FactorAnalysis has no factor scores (scores='none')")
        if criteria.factor_scores.shape[1:] != (len(dataset.systems), len(dataset.inputs)):
            raise DataError("the FactorAnalysis was fitted on a dataset of another shape")
        return [(f, "factor_score", criteria.factor_scores[a])
                for a, f in enumerate(criteria.factors)]
    if isinstance(criteria, dict):
        out = []
        for name, v in criteria.items():
            kind = "array" if not isinstance(v, str) else "human"
            out.append((str(name), kind, _source_matrix(dataset, v)))
        if not out:
            raise ParameterError("criteria is empty")
        return out
    return [(c, "human", _source_matrix(dataset, c)) for c in as_list(criteria, "criteria")]


def _single_pvalue(coef, x, y, level):
    """The analytic two-sided p-value at ``system`` or ``global`` (NaN elsewhere)."""
    if level not in ("system", "global") or coef.pvalue is None:
        return np.nan
    return analytic_pvalue(coef, *arrange(x, y, level), "two-sided")


def _level_stat(x, y, level, method, average):
    """(statistic, n, n_groups, n_dropped) arrays for batches x, y of shape (B, N, M)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        lv = level_values(x, y, level, method, average=average)
    dropped = ~np.isfinite(lv.group)
    n = np.where(dropped, 0, lv.n_valid).sum(-1)
    return lv.value, n, lv.group.shape[-1], dropped.sum(-1)


def _check_level_method(level, method, average):
    level = check_level(level)
    coef = check_method_levels(method, [level])
    return level, coef, check_average(average)


@accepts_frames(human="criteria")
def concurrent_validity(
    dataset,
    criteria=None,
    *,
    metrics=None,
    level="system",
    method=VALIDITY_METHOD,
    average="macro",
) -> ConcurrentValidity:
    """Concurrent validity: each metric's correlation with a reference criterion.

    Seed paper 002, section 3.2.1: a metric X is a valid proxy of a validated
    criterion Y (expert ratings) when their correlation rho_XY, the
    *validity coefficient*, is high; measurement error attenuates it, so
    rho_XY <= sqrt(rel_X rel_Y).  The criterion can be the raw human means
    (as Fabbri et al. 2021) or factor scores from :func:`cfa` (section 4.2,
    Figure 4: "Kendall's tau between each model's metric scores and the
    factor scores"; MetricEval averages the cell factor scores per system).

    The coefficient is computed exactly as :func:`metaeval.correlate` does
    (:func:`metaeval.stats.levels.level_values`): at ``system`` level the
    correlation of the N system means over the cells both scores have
    (pairwise deletion); ``input``, ``item`` and ``global`` as documented
    there.

    Parameters
    ----------
    dataset : Dataset
    criteria : None, FactorAnalysis, str, list or dict
        ``None``: every human column with raters (their means), or every
        human column.  A :class:`FactorAnalysis` fitted on ``dataset``: its
        factor scores.  Column names (or ``"column@rater"``); a dict name ->
        column or (N, M) array.
    metrics : str or list of str, optional
        Default every metric of the dataset.
    level : str
        Default ``"system"`` (the paper's).
    method : str
        A coefficient of :data:`metaeval.METHODS`; default ``"kendall_b"``
        (:data:`metaeval.stats.coefficients.VALIDITY_METHOD`): paper 002's
        Kendall's tau (Sec. 4.2, Figures 4 and 8; R's
        ``cor(method = "kendall")``), not correlate's Pearson.
    average : {"macro", "micro"}

    Returns
    -------
    ConcurrentValidity

    Examples
    --------
    >>> import metaeval
    >>> from metaeval.validity import concurrent_validity
    >>> ds = metaeval.load_dataset("summeval")
    >>> cv = concurrent_validity(ds, ["coherence", "relevance"], metrics=["G.EVAL.4.COH"])
    >>> cv.matrix().round(3)    # doctest: +NORMALIZE_WHITESPACE
    criterion     coherence  relevance
    metric
    G.EVAL.4.COH      0.647       0.75
    """
    check_dataset(dataset)
    level, coef, average = _check_level_method(level, method, average)
    if level == "system":
        _sys.note_ignored(dataset, "concurrent_validity")
    crit = _criteria(dataset, criteria)
    if metrics is None:
        metrics = list(dataset.metrics)
        if not metrics:
            raise DataError("the dataset has no metric columns; pass metrics=[...]")
    else:
        metrics = as_list(metrics, "metrics")
    out = []
    X = np.stack([_source_matrix(dataset, m) for m in metrics])
    for name, kind, y in crit:
        stat, n, ng, nd = _level_stat(X, y[None], level, method, average)
        for b, m in enumerate(metrics):
            pv = _single_pvalue(coef, X[b], y, level)
            sig = make_signature(
                human=name, level=level, method=method,
                avg=average if level in ("input", "item") else None, nan="pairwise",
                criterion=kind,
            )
            out.append(ValidityCoefficient(
                metric=str(m), criterion=name, criterion_kind=kind, level=level, method=method,
                average=average, statistic=float(stat[b]), pvalue=pv, n=int(n[b]), n_groups=int(ng),
                n_groups_dropped=int(nd[b]), signature=sig,
            ))
            if nd[b]:
                warnings.warn(
                    f"{method} of {m!r} vs {name!r}: {int(nd[b])} of {ng} group(s) at level "
                    f"{level!r} are constant or too small (NaN, left out)",
                    ConstantInputWarning, stacklevel=user_stacklevel(),
                )
    order = {m: i for i, m in enumerate(metrics)}
    out.sort(key=lambda r: order[r.metric])
    return ConcurrentValidity(tuple(out))


# =============================================================================
# MTMM


def _design(dataset, design):
    """{method: {trait: source}} and ordered traits, methods."""
    if design is None:
        design = _rated_traits(dataset, None)
    if isinstance(design, dict):
        if not design:
            raise ParameterError("design is empty")
        methods = list(design)
        traits = []
        out = {}
        for meth, tr in design.items():
            if not isinstance(tr, dict) or not tr:
                raise ParameterError(
                    f"design[{meth!r}] must be a non-empty dict trait -> column, e.g. "
                    "{'coherence': 'expert1_coherence', ...}"
                )
            out[str(meth)] = {str(t): v for t, v in tr.items()}
            traits += [str(t) for t in tr if str(t) not in traits]
        methods = [str(m) for m in methods]
        _check_same_raters(dataset, _rater_sources(dataset, [v for tr in out.values() for v in tr.values()]))
    else:
        cols = _rated_traits(dataset, design)
        labels = dataset.rater_labels(cols[0])
        for c in cols[1:]:
            if dataset.rater_labels(c) != labels:
                raise DataError(
                    f"columns {cols[0]!r} and {c!r} have different raters; a list design needs "
                    "the same raters (methods) for every trait (raters in columns: give them the same "
                    "labels, raters={'coherence': {'r1': 'coherence_r1', ...}, ...}, on the command "
                    "line --raters coherence=r1:coherence_r1,r2:coherence_r2)"
                )
        traits, methods = list(cols), list(labels)
        out = {r: {c: f"{c}{_SEP}{r}" for c in cols} for r in labels}
    if len(traits) < 2 or len(methods) < 2:
        raise ParameterError(
            f"an MTMM table needs at least 2 traits and 2 methods; got traits {traits} and "
            f"methods {methods}" + ("" if isinstance(design, dict) else
                                    " (--human: 2+ human columns with 2+ raters each)")
        )
    return out, traits, methods


@dataclass(frozen=True)
class MTMM(_Result):
    """A multitrait-multimethod table (see :func:`mtmm`).

    Attributes
    ----------
    traits, methods : tuple of str
    level, method, average : str
        How the correlations were computed (``method`` is the coefficient).
    reliability : str
        What the diagonal holds (``alpha``: Cronbach's alpha with systems as
        examinees and inputs as items, :func:`metaeval.consistency`; or
        ``none``).
    sources : tuple of str
        A label of each measure's source, in ``variables`` order.
    n_convergent, n_hthm_comparisons, n_htmm_comparisons : int
        Counts of the Campbell-Fiske comparisons.
    share_convergent_above_hthm : float
        Share of the comparisons (convergent value vs each
        heterotrait-heteromethod value in its row and column of the same
        heteromethod block) won by the convergent value (strictly larger).
    share_convergent_above_htmm : float
        Share won against the heterotrait-monomethod values that share a
        measure with the convergent pair.
    mean_convergent, mean_htmm, mean_hthm : float
        Means of the three off-diagonal blocks.
    signature : str
    values : ndarray (T M, T M)
        The symmetric matrix of coefficients in ``variables`` order, the
        diagonal holding the reliabilities.
    """

    traits: tuple = field(metadata={"nofr": True})
    methods: tuple = field(metadata={"nofr": True})
    level: str
    method: str
    average: str
    reliability: str
    sources: tuple = field(metadata={"nofr": True})
    n_convergent: int
    n_hthm_comparisons: int
    n_htmm_comparisons: int
    share_convergent_above_hthm: float
    share_convergent_above_htmm: float
    mean_convergent: float
    mean_htmm: float
    mean_hthm: float
    signature: str
    values: np.ndarray | None = field(**_ARR)

    @property
    def variables(self):
        """(method, trait) of each row/column of ``values`` (method-major order)."""
        return [(m, t) for m in self.methods for t in self.traits]

    def _block(self, a, b):
        (ma, ta), (mb, tb) = self.variables[a], self.variables[b]
        if a == b:
            return "reliability"
        if ta == tb:
            return "convergent"
        if ma == mb:
            return "heterotrait_monomethod"
        return "heterotrait_heteromethod"

    def _order(self, order):
        check_choice(order, "order", ("method", "trait"))
        v = self.variables
        if order == "method":
            return list(range(len(v)))
        return sorted(range(len(v)), key=lambda i: (self.traits.index(v[i][1]),
                                                    self.methods.index(v[i][0])))

    def to_frame(self) -> pd.DataFrame:
        """Tidy table, one row per pair of measures (upper triangle and diagonal).

        Columns: ``trait_a``, ``method_a``, ``trait_b``, ``method_b``,
        ``block`` (a key of :data:`MTMM_BLOCKS`), ``statistic``, ``level``,
        ``method``, ``signature``.  Rows follow the method-major order.
        """
        rows = []
        v = self.variables
        for a in range(len(v)):
            for b in range(a, len(v)):
                rows.append(dict(trait_a=v[a][1], method_a=v[a][0], trait_b=v[b][1],
                                 method_b=v[b][0], block=self._block(a, b),
                                 statistic=float(self.values[a, b]), level=self.level,
                                 method=self.method, signature=self.signature))
        return pd.DataFrame(rows, columns=["trait_a", "method_a", "trait_b", "method_b", "block",
                                           "statistic", "level", "method", "signature"])

    def matrix(self, *, order: str = "method", triangle: str = "upper") -> pd.DataFrame:
        """The table as a DataFrame with (method, trait) MultiIndex rows and columns.

        ``order="method"`` groups by method (Campbell and Fiske's layout, the
        paper's Table 2); ``"trait"`` groups by trait (the paper's Table 1).
        ``triangle``: ``"upper"`` (NaN below the diagonal, as the paper),
        ``"lower"`` or ``"full"``.
        """
        check_choice(triangle, "triangle", ("upper", "lower", "full"))
        idx = self._order(order)
        vals = self.values[np.ix_(idx, idx)].copy()
        n = len(idx)
        if triangle == "upper":
            vals[np.tril_indices(n, -1)] = np.nan
        elif triangle == "lower":
            vals[np.triu_indices(n, 1)] = np.nan
        v = self.variables
        names = ["method", "trait"] if order == "method" else ["trait", "method"]
        tuples = [v[i] if order == "method" else (v[i][1], v[i][0]) for i in idx]
        mi = pd.MultiIndex.from_tuples(tuples, names=names)
        return pd.DataFrame(vals, index=mi, columns=mi)

    def blocks(self, *, order: str = "method") -> pd.DataFrame:
        """Same layout as :meth:`matrix` with the block label of every cell."""
        idx = self._order(order)
        m = self.matrix(order=order, triangle="full")
        lab = [[self._block(a, b) for b in idx] for a in idx]
        return pd.DataFrame(lab, index=m.index, columns=m.columns)

    def campbell_fiske(self) -> pd.DataFrame:
        """Campbell-Fiske comparisons, one row per convergent value.

        Columns: ``trait``, ``method_a``, ``method_b``, ``convergent``,
        ``n_hthm``, ``n_hthm_exceeded`` (heterotrait-heteromethod values in
        the convergent value's row and column of its block that it exceeds),
        ``n_htmm``, ``n_htmm_exceeded`` (heterotrait-monomethod values of
        the two measures), ``max_hthm``, ``max_htmm``.
        """
        return pd.DataFrame(_cf_rows(self), columns=[
            "trait", "method_a", "method_b", "convergent", "n_hthm", "n_hthm_exceeded",
            "n_htmm", "n_htmm_exceeded", "max_hthm", "max_htmm"])

    def to_html(self, *, order: str = "method", digits: int = 2) -> str:
        """An HTML table with the blocks marked (plain string; no dependency).

        A view: :func:`metaeval.report.tables.mtmm_html` (cells carry a CSS
        class per block; values are rounded to ``digits`` there only).
        """
        from .report.tables import mtmm_html

        return mtmm_html(self, order=order, digits=digits)

    def to_rich(self, *, order: str = "method", digits: int = 2):
        """A :class:`rich.table.Table` with the blocks styled (see :func:`mtmm_table`)."""
        return mtmm_table(self, order=order, digits=digits)


def _cf_rows(res):
    v = res.variables
    pos = {x: i for i, x in enumerate(v)}
    R = res.values
    rows = []
    for i, ma in enumerate(res.methods):
        for mb in res.methods[i + 1:]:
            for t in res.traits:
                a, b = pos[(ma, t)], pos[(mb, t)]
                c = R[a, b]
                others = [u for u in res.traits if u != t]
                hthm = [R[a, pos[(mb, u)]] for u in others] + [R[pos[(ma, u)], b] for u in others]
                htmm = [R[a, pos[(ma, u)]] for u in others] + [R[b, pos[(mb, u)]] for u in others]
                hthm = [x for x in hthm if np.isfinite(x)]
                htmm = [x for x in htmm if np.isfinite(x)]
                rows.append((t, ma, mb, float(c), len(hthm), int(sum(c > x for x in hthm)),
                             len(htmm), int(sum(c > x for x in htmm)),
                             float(max(hthm)) if hthm else np.nan,
                             float(max(htmm)) if htmm else np.nan))
    return rows


def mtmm_table(result: MTMM, *, order: str = "method", digits: int = 2):
    """A rich (terminal) table of an :class:`MTMM` result (a view: drawn by
    :func:`metaeval.report.tables.mtmm_table`; ``rich`` is imported there)."""
    from .report.tables import mtmm_table as _table

    return _table(result, order=order, digits=digits)


@accepts_frames(human="design")
def mtmm(
    dataset,
    design=None,
    *,
    level="system",
    method=VALIDITY_METHOD,
    average="macro",
    reliability="alpha",
) -> MTMM:
    """Multitrait-multimethod table (Campbell and Fiske 1959; seed paper 002 sec. 3.2.2).

    Every measure (a trait measured by a method) is correlated with every
    other at ``level`` with ``method``, exactly as :func:`metaeval.correlate`
    (pairwise deletion).  The blocks (see :data:`MTMM_BLOCKS`):

    * **convergent** (same trait, different methods; the validity diagonal):
      should be high (convergent validity);
    * **heterotrait-monomethod** (different traits, same method): should be
      lower than the convergent values (discriminant, "divergent",
      validity); high values indicate method bias or conflated traits;
    * **heterotrait-heteromethod**: the baseline;
    * the diagonal holds the reliability of each measure, Cronbach's alpha
      over inputs with systems as examinees (MetricEval fills it with the
      metric consistency of section 3.1.2; listwise deletion of inputs with a
      missing cell).

    The Campbell-Fiske summary counts how often a convergent value exceeds
    the heterotrait-heteromethod values in its row and column of the same
    heteromethod block, and the heterotrait-monomethod values of its two
    measures (:meth:`MTMM.campbell_fiske`).

    MetricEval's Tables 1 and 2 use Kendall's tau between system means
    (``level="system", method="kendall_b"``, the defaults).

    Parameters
    ----------
    dataset : Dataset
    design : dict or list of str, optional
        ``{method: {trait: source}}`` where a source is a column, a
        ``"column@rater"`` or an (N, M) array (e.g. factor scores,
        :meth:`FactorAnalysis.score_matrix`).  Or a list of human columns
        with raters: traits are the columns and methods their raters
        (``["coherence", "consistency", "fluency", "relevance"]`` on
        SummEval gives the paper's Table 1 design).  Every method must
        measure every trait (a missing one is NaN in the table).  Default:
        every human column with two or more raters (``metaeval validity``
        without ``--human``).
    level, method, average : str
        As in :func:`metaeval.correlate`, but ``method`` defaults to
        ``"kendall_b"`` (:data:`metaeval.stats.coefficients.VALIDITY_METHOD`),
        Kendall's tau-b as paper 002 prescribes (Sec. 4.1, Tables 1-2), not
        correlate's Pearson.
    reliability : {"alpha", "none"}

    Returns
    -------
    MTMM

    Examples
    --------
    >>> import metaeval
    >>> from metaeval.validity import mtmm
    >>> ds = metaeval.load_dataset("summeval")
    >>> t = mtmm(ds, ["coherence", "relevance"])
    >>> t.matrix(order="trait").round(2).iloc[:, :3]    # doctest: +NORMALIZE_WHITESPACE
    trait                coherence
    method                 expert1 expert2 expert3
    trait     method
    coherence expert1         0.96    0.74    0.65
              expert2          NaN    0.99    0.79
              expert3          NaN     NaN    0.96
    relevance expert1          NaN     NaN     NaN
              expert2          NaN     NaN     NaN
              expert3          NaN     NaN     NaN
    """
    check_dataset(dataset)
    level, _, average = _check_level_method(level, method, average)
    check_choice(reliability, "reliability", ("alpha", "none"))
    spec, traits, methods = _design(dataset, design)
    variables = [(m, t) for m in methods for t in traits]
    mats, sources = [], []
    NM = (len(dataset.systems), len(dataset.inputs))
    for m, t in variables:
        src = spec[m].get(t)
        if src is None:
            mats.append(np.full(NM, np.nan))
            sources.append("missing")
        else:
            mats.append(_source_matrix(dataset, src))
            sources.append(src if isinstance(src, str) else "array")
    n = len(variables)
    R = np.full((n, n), np.nan)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)
             if sources[a] != "missing" and sources[b] != "missing"]
    if pairs:
        A = np.stack([mats[a] for a, _ in pairs])
        B = np.stack([mats[b] for _, b in pairs])
        stat = _level_stat(A, B, level, method, average)[0]
        for (a, b), v in zip(pairs, stat):
            R[a, b] = R[b, a] = v
    if reliability == "alpha":
        for a in range(n):
            if sources[a] != "missing":
                y, _, _ = listwise_complete(mats[a])
                R[a, a] = float(alpha_batch(y[None])[0])
    res = MTMM(
        traits=tuple(traits), methods=tuple(methods), level=level, method=method,
        average=average, reliability=reliability, sources=tuple(sources), n_convergent=0,
        n_hthm_comparisons=0, n_htmm_comparisons=0, share_convergent_above_hthm=np.nan,
        share_convergent_above_htmm=np.nan, mean_convergent=np.nan, mean_htmm=np.nan,
        mean_hthm=np.nan, signature="", values=R,
    )
    rows = _cf_rows(res)
    nh = sum(r[4] for r in rows)
    nm = sum(r[6] for r in rows)
    blk = {k: [] for k in MTMM_BLOCKS}
    for a in range(n):
        for b in range(a + 1, n):
            if np.isfinite(R[a, b]):
                blk[res._block(a, b)].append(R[a, b])
    sig = make_signature(
        level=level, method=method, avg=average if level in ("input", "item") else None,
        nan="pairwise", rel=reliability, traits=len(traits), methods=len(methods),
    )

    def mean(x):  # correctly rounded (stats.exact): equal exact block means compare equal
        return float(_exact.nanmean(np.asarray(x, float))) if x else np.nan

    return MTMM(
        traits=res.traits, methods=res.methods, level=level, method=method, average=average,
        reliability=reliability, sources=res.sources, n_convergent=len(rows),
        n_hthm_comparisons=int(nh), n_htmm_comparisons=int(nm),
        share_convergent_above_hthm=float(sum(r[5] for r in rows) / nh) if nh else np.nan,
        share_convergent_above_htmm=float(sum(r[7] for r in rows) / nm) if nm else np.nan,
        mean_convergent=mean(blk["convergent"]), mean_htmm=mean(blk["heterotrait_monomethod"]),
        mean_hthm=mean(blk["heterotrait_heteromethod"]), signature=sig, values=R,
    )


# =============================================================================
# residual PCA (Appendix A.6)


@dataclass(frozen=True)
class ResidualPCA(_Result):
    """PCA of metric residuals after regression on factor scores (see :func:`residual_pca`).

    Attributes
    ----------
    metrics, factors : tuple of str
    n_obs : int
        Cells used (every metric and factor score present).
    n_components : int
    standardize : bool
        PCA of the residual correlation (True) or covariance matrix.
    signature : str
    r_squared : ndarray (J,)
        Share of each metric's variance explained by the factor scores.
    explained_variance, explained_variance_ratio : ndarray (n_components,)
        Eigenvalues of the residual correlation (covariance) matrix and their
        shares of its trace.
    loadings : ndarray (J, n_components)
        Eigenvectors scaled by sqrt(eigenvalue): each metric's correlation
        with the component when ``standardize`` (metrics as variables).
    metric_coordinates : ndarray (J, n_components)
        The paper's Figure 7 coordinates: ``prcomp(t(resid))$x`` (metrics as
        observations, cells as variables, centred per cell).
    """

    metrics: tuple = field(metadata={"nofr": True})
    factors: tuple = field(metadata={"nofr": True})
    n_obs: int
    n_components: int
    standardize: bool
    signature: str
    r_squared: np.ndarray | None = field(**_ARR)
    explained_variance: np.ndarray | None = field(**_ARR)
    explained_variance_ratio: np.ndarray | None = field(**_ARR)
    loadings: np.ndarray | None = field(**_ARR)
    metric_coordinates: np.ndarray | None = field(**_ARR)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: ``metric``, ``r_squared``, ``PC1`` ... (loadings),
        ``coord1`` ... (the paper's coordinates), ``signature``."""
        d = {"metric": list(self.metrics), "r_squared": self.r_squared}
        for c in range(self.n_components):
            d[f"PC{c + 1}"] = self.loadings[:, c]
        for c in range(self.n_components):
            d[f"coord{c + 1}"] = self.metric_coordinates[:, c]
        out = pd.DataFrame(d)
        out["signature"] = self.signature
        return out


@accepts_frames()
def residual_pca(
    dataset, factors, *, metrics=None, n_components=2, standardize=True
) -> ResidualPCA:
    """Principal components of the metrics' residuals (seed paper 002, Appendix A.6).

    Each metric's cell scores y_j are regressed by ordinary least squares on
    an intercept and the factor scores F (N M x k), y_j = b_0 + F b + e_j
    (MetricEval fits the same linear model by maximizing its normal
    likelihood); the residuals e_j are "the unexplained variance by the
    dimensions' factor scores".  Their principal components then show
    metrics that share an additional dimension:

    * ``loadings``: eigen-decomposition of the residuals' correlation
      (``standardize``) or covariance matrix over cells, eigenvectors scaled
      by sqrt(eigenvalue), signs fixed so the largest entry is positive;
    * ``metric_coordinates``: MetricEval's Figure 7, ``prcomp(t(resid))$x``:
      metrics as observations and cells as variables.

    Parameters
    ----------
    dataset : Dataset
    factors : FactorAnalysis or dict
        Factor scores: a :class:`FactorAnalysis` (MetricEval uses the
        orthogonal model, ``cfa(ds, orthogonal=True)``) or a dict name ->
        (N, M) array.
    metrics : list of str, optional
        Default every metric.
    n_components : int
    standardize : bool

    Returns
    -------
    ResidualPCA
    """
    check_dataset(dataset)
    n_components = check_int(n_components, "n_components")
    crit = _criteria(dataset, factors) if isinstance(factors, (FactorAnalysis, dict)) else None
    if crit is None:
        raise ParameterError("factors must be a FactorAnalysis or a dict name -> (N, M) array")
    metrics = list(dataset.metrics) if metrics is None else as_list(metrics, "metrics")
    if len(metrics) < 2:
        raise ParameterError("residual_pca needs at least 2 metrics")
    if n_components > len(metrics):
        raise ParameterError(f"n_components={n_components} exceeds the {len(metrics)} metrics")
    Y = np.stack([_source_matrix(dataset, m).ravel() for m in metrics], 1)
    F = np.stack([c[2].ravel() for c in crit], 1)
    pc = residual_components(Y, F, n_components=n_components, standardize=standardize)
    n, c = pc.n_obs, n_components
    sig = make_signature(method="ols+pca", n=n, nan="listwise", units="cells",
                         std=standardize, factors=len(crit))
    return ResidualPCA(
        metrics=tuple(metrics), factors=tuple(x[0] for x in crit), n_obs=int(n),
        n_components=c, standardize=bool(standardize), signature=sig, r_squared=pc.r_squared,
        explained_variance=pc.explained_variance,
        explained_variance_ratio=pc.explained_variance_ratio,
        loadings=pc.loadings, metric_coordinates=pc.metric_coordinates,
    )


def plot_residual_pca(result, *, kind="loadings", components=(1, 2), ax=None):
    """Scatter of the metrics on two components; returns a matplotlib Figure (a view: drawn by :func:`metaeval.report.figures.plot_residual_pca`)."""
    from .report.figures import plot_residual_pca as _draw

    return _draw(result, kind=kind, components=components, ax=ax)

__all__ = [
    "ESTIMATORS",
    "MAX_CATEGORIES",
    "MTMM",
    "MTMM_BLOCKS",
    "SCORE_METHODS",
    "CFAModel",
    "ConcurrentValidity",
    "FactorAnalysis",
    "HeywoodCaseWarning",
    "NonConvergenceWarning",
    "ResidualPCA",
    "ValidityCoefficient",
    "cfa",
    "concurrent_validity",
    "mtmm",
    "mtmm_table",
    "parse_model",
    "plot_residual_pca",
    "residual_pca",
]
