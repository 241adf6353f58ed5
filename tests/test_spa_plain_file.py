"""Soft pairwise accuracy and its comparison on a plain file (issue 25 item 1).

SPA was reached only through `metaeval wmt --preset wmt24` on an mt-metrics-eval folder; the
API functions must take any dataset: a CSV read with metaeval.read_dataset (rows in any order,
a missing cell), a long DataFrame as correlate takes it, with `precision`.  Oracle:
mt-metrics-eval pce.py (compute_pairwise_p_values, compute_one_minus_pce; commit 68a481a,
../shared/anchors), on the matrices the test writes to the file; for precision="float64", also
pce.py's computation in exact integer arithmetic, written in the test (the scores have 3 decimals).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.errors import MissingCellsWarning
from metaeval.wmt import compare_spa, soft_pairwise_accuracy

from _mtme_anchor import mtme

N, M = 5, 30


def _file(tmp_path, missing=False):
    g = np.random.default_rng(7)
    H = np.round(g.normal(size=(N, M)) + np.arange(N)[:, None] * 0.3, 2)
    A = np.round(H + g.normal(size=(N, M)), 3)
    B = np.round(g.normal(size=(N, M)), 3)
    rows = [{"system": f"sys{s}", "input": f"seg{j:02d}", "human": H[s, j], "A": A[s, j], "B": B[s, j]}
            for s in range(N) for j in range(M)]
    df = pd.DataFrame(rows).sample(frac=1.0, random_state=3)  # rows in any order
    if missing:
        df.loc[(df["system"] == "sys2") & (df["input"] == "seg04"), "B"] = np.nan
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    return path, df, H, A, B


def _in_order(ds, *mats):
    """The matrices in the dataset's system and input order (a file's order of first appearance:
    pce.py's sign draws are by position, so the order is part of the computation)."""
    r = [int(x[3:]) for x in ds.systems]
    c = [int(x[3:]) for x in ds.inputs]
    return [X[np.ix_(r, c)] for X in mats]


def _pce_spa(pce, H, X):
    # pce.py's float32 sums depend on memory order (docs/mt.md section 4): both orders
    out = []
    for order in (np.ascontiguousarray, np.asfortranarray):
        ph = pce.compute_pairwise_p_values(order(H), num_permutations=1000, seed=4)
        pm = pce.compute_pairwise_p_values(order(X), num_permutations=1000, seed=4)
        out.append(pce.compute_one_minus_pce(ph, pm))
    return out


def _exact_p(X, n_permutations=1000, seed=4):
    """pce.py's compute_pairwise_p_values in exact arithmetic: the same sign draws (a float32
    uniform rounded to 0/1, as pce.py draws them), the scores (3 decimals) as integers."""
    g = np.random.default_rng(seed)
    s = g.random(size=(n_permutations, X.shape[1]), dtype=np.float32)
    signs = 2 * np.rint(s).astype(np.int64) - 1
    Xi = np.rint(X * 1000).astype(np.int64)
    assert np.array_equal(Xi / 1000, X)  # the scores have 3 decimals: exact as integers
    part, tot = signs @ Xi.T, Xi.sum(axis=1)
    n = X.shape[0]
    return {(i, j): np.mean(part[:, i] - part[:, j] >= tot[i] - tot[j]) for i in range(n) for j in range(i + 1, n)}


def _exact_spa(H, X):
    ph, pm = _exact_p(H), _exact_p(X)
    return 1 - sum(abs(ph[k] - pm[k]) for k in ph) / len(ph)


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_spa_on_a_csv_file_and_a_frame_equals_pce(tmp_path, precision):
    pce = mtme("pce")
    path, df, H, A, B = _file(tmp_path)
    ds = metaeval.read_dataset(path, human="human")
    H, A, B = _in_order(ds, H, A, B)
    res = soft_pairwise_accuracy(ds, "human", rng=4, precision=precision)
    for m, X in (("A", A), ("B", B)):
        refs = _pce_spa(pce, H, X)
        got = res.get(m).statistic
        if precision == "float32":
            assert got in refs
        else:
            # float64: the exact value (integer arithmetic on the file's 3-decimal scores, written
            # below), and on this file pce.py's float32 sums decide every pair as exact arithmetic does
            assert got == pytest.approx(_exact_spa(H, X), abs=1e-12)
            assert min(abs(got - r) for r in refs) <= 1e-12
    assert f"precision:{precision}" in res[0].signature
    # a long DataFrame, as correlate takes it: the same numbers
    fr = soft_pairwise_accuracy(df, "human", rng=4, precision=precision)
    assert fr.statistics == res.statistics
    c = compare_spa(df, "human", "A", "B", n_resamples=20, n_permutations=200, rng=1, precision=precision)
    d = compare_spa(ds, "human", "A", "B", n_resamples=20, n_permutations=200, rng=1, precision=precision)
    assert (c.statistic, c.pvalue) == (d.statistic, d.pvalue)
    assert c.statistic_a > c.statistic_b  # A follows the human scores, B is noise


def test_spa_on_a_file_with_a_missing_cell_uses_the_complete_inputs(tmp_path):
    pce = mtme("pce")
    path, _, H, A, B = _file(tmp_path, missing=True)
    ds = metaeval.read_dataset(path, human="human")
    H, A, B = _in_order(ds, H, A, B)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = soft_pairwise_accuracy(ds, "human", rng=4, precision="float32")
    assert any(issubclass(x.category, MissingCellsWarning) for x in w)
    keep = [j for j, x in enumerate(ds.inputs) if x != "seg04"]
    assert res.get("B").statistic in _pce_spa(pce, H[:, keep], B[:, keep])
    assert res[0].n_inputs == M - 1
