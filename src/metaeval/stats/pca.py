"""Principal components of regression residuals: the numerics of
:func:`metaeval.validity.residual_pca` (seed paper 002, Appendix A.6), arrays in, arrays out.

Each column of ``Y`` (a metric's cell scores) is regressed by ordinary least squares on an
intercept and the columns of ``F`` (factor scores); the residuals' correlation (or
covariance) matrix is eigen-decomposed (``loadings``: eigenvectors scaled by
sqrt(eigenvalue)), and the residuals transposed, centred per cell and decomposed by SVD give
MetricEval's Figure 7 coordinates (``prcomp(t(resid))$x``).  Signs are fixed so that each
component's largest entry is positive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ["ResidualComponents", "residual_components"]


@dataclass(frozen=True)
class ResidualComponents:
    """What :func:`residual_components` returns (arrays over the metrics / components)."""

    n_obs: int
    r_squared: np.ndarray
    explained_variance: np.ndarray
    explained_variance_ratio: np.ndarray
    loadings: np.ndarray
    metric_coordinates: np.ndarray


def orient_columns(A):
    """``A`` with each column's sign flipped so that its largest-magnitude entry is positive."""
    i = np.argmax(np.abs(A), axis=0)
    s = np.sign(A[i, np.arange(A.shape[1])])
    return A * np.where(s == 0, 1.0, s)


def residual_components(Y, F, *, n_components, standardize=True) -> ResidualComponents:
    """PCA of the OLS residuals of ``Y`` (cells x metrics) on an intercept and ``F`` (cells x
    factors), over the rows where every value is finite (module docstring).

    Raises
    ------
    DataError
        Too few complete rows (at most k + 2 for k factors), or a column of ``Y`` explained
        exactly by ``F`` when ``standardize`` (a zero residual has no correlation).
    """
    Y = np.asarray(Y, float)
    F = np.asarray(F, float)
    ok = np.isfinite(Y).all(1) & np.isfinite(F).all(1)
    Y, F = Y[ok], F[ok]
    n = Y.shape[0]
    if n <= F.shape[1] + 2:
        raise DataError(f"residual_pca: only {n} complete cells")
    Xd = np.column_stack([np.ones(n), F])
    beta, *_ = np.linalg.lstsq(Xd, Y, rcond=None)
    E = Y - Xd @ beta
    with np.errstate(all="ignore"):
        r2 = 1.0 - E.var(0) / Y.var(0)
        C = np.cov(E.T)
        if standardize:
            sd = np.sqrt(np.diag(C))
            if np.any(sd == 0):
                raise DataError(
                    "a metric is explained exactly by the factor scores (zero residual)"
                )
            C = C / np.outer(sd, sd)
    vals, vecs = np.linalg.eigh(C)
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    c = n_components
    load = orient_columns(vecs[:, :c] * np.sqrt(np.clip(vals[:c], 0, None)))
    Et = E.T - E.T.mean(0)  # metrics x cells, centred per cell (prcomp(t(resid)))
    U, S, _ = np.linalg.svd(Et, full_matrices=False)
    coords = orient_columns(U[:, :c] * S[:c])
    return ResidualComponents(
        n_obs=int(n), r_squared=r2, explained_variance=vals[:c],
        explained_variance_ratio=vals[:c] / vals.sum(), loadings=load, metric_coordinates=coords,
    )
