"""Layouts researchers' data come in (issue 14.6), in the Python API.

Row filters (``select_rows``), raters in wide columns given by a pattern, and
the agreement of rotating raters and rater slots.  Expected values come from
``pingouin.intraclass_corr`` (0.7.0) and the ``krippendorff`` package (0.9.0)
run on the same ratings, and from the one-way ANOVA closed form written out
here (Shrout and Fleiss 1979, case 1: ICC(1) = (BMS - WMS) / (BMS + (k - 1)
WMS), ICC(1,k) = (BMS - WMS) / BMS).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.data._frames import select_rows
from metaeval.errors import (
    ConstantInputWarning,
    DataError,
    MissingCellsWarning,
    ParameterError,
    RaterDesignWarning,
)
from metaeval.reliability import SAME_RATER_FORMS, agreement, rater_correlations

pg = pytest.importorskip("pingouin")
krippendorff = pytest.importorskip("krippendorff")


# ----------------------------------------------------------------- helpers (independent references)


def rotating(rng, n_sys, n_inp, n_raters, k, *, integer=False):
    """(R, N, M) ratings where each cell is rated by k of R raters drawn at random."""
    true = rng.normal(size=(n_sys, n_inp))
    r = np.full((n_raters, n_sys, n_inp), np.nan)
    for s in range(n_sys):
        for i in range(n_inp):
            who = rng.choice(n_raters, k, replace=False)
            vals = true[s, i] + rng.normal(size=k)
            r[who, s, i] = np.round(vals * 2) if integer else vals
    return r


def dataset(r):
    _, n, m = r.shape
    return metaeval.Dataset(
        {"q": r}, human="q", systems=[f"s{j}" for j in range(n)], inputs=[f"i{j}" for j in range(m)]
    )


def one_way(units):
    """ICC(1), ICC(1,k) by the one-way ANOVA closed form, a loop over units (lists of k ratings)."""
    k = len(units[0])
    n = len(units)
    grand = sum(sum(u) for u in units) / (n * k)
    bss = sum(k * (sum(u) / k - grand) ** 2 for u in units)
    wss = sum(sum((x - sum(u) / k) ** 2 for x in u) for u in units)
    bms, wms = bss / (n - 1), wss / (n * (k - 1))
    return (bms - wms) / (bms + (k - 1) * wms), (bms - wms) / bms


def pingouin_nested(r, k):
    """pingouin's ICC table of the cells with exactly k ratings, raters as slots 0..k-1
    (pingouin 0.7 labels: ICC(1,1), ICC(A,1), ICC(C,1), ICC(1,k), ...; interval column CI95)."""
    rows = []
    for s in range(r.shape[1]):
        for i in range(r.shape[2]):
            vals = r[:, s, i][np.isfinite(r[:, s, i])]
            if vals.size == k:
                rows += [{"u": f"{s}-{i}", "slot": j, "y": v} for j, v in enumerate(vals)]
    out = pg.intraclass_corr(pd.DataFrame(rows), targets="u", raters="slot", ratings="y")
    return out.set_index("Type")


def by_method(res):
    return {a.method: a for a in res}


# ----------------------------------------------------------------- row filters


FRAME = pd.DataFrame(
    {
        "system": ["A", "B", "Human", "A", "B", "Human"],
        "input": ["x", "x", "x", "y", "y", "y"],
        "dataset": ["SFHOT", "SFHOT", "SFHOT", "SFRES", "SFRES", "SFRES"],
        "year": [2020, 2020, 2020, 2021, 2021, 2021],
        "q": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    }
)


def test_select_rows_matches_plain_python_filter():
    got = select_rows(FRAME, exclude_systems=["Human"], where={"dataset": ["SFHOT"]})
    want = [row for row in FRAME.to_dict("records") if row["system"] != "Human" and row["dataset"] == "SFHOT"]
    assert got.to_dict("records") == want
    got = select_rows(FRAME, systems=["A", "Human"], where={"year": ["2021"]})
    assert got.q.tolist() == [4.0, 6.0]  # numeric column matched by the text "2021"


def test_select_rows_errors_name_the_culprit():
    with pytest.raises(DataError, match=r"exclude_systems.*unknown system\(s\) 'Humn'.*'Human'"):
        select_rows(FRAME, exclude_systems=["Humn"])
    with pytest.raises(DataError, match=r"where.*unknown column 'datset'"):
        select_rows(FRAME, where={"datset": ["SFHOT"]})
    with pytest.raises(DataError, match=r"no row has 'dataset' in 'WEB'.*'SFHOT', 'SFRES'"):
        select_rows(FRAME, where={"dataset": ["WEB"]})
    with pytest.raises(DataError, match="no row is left"):
        select_rows(FRAME, systems=["A"], where={"input": ["x"]}, exclude_systems=["A"])


def test_select_rows_never_evaluates_user_text():
    """A value that would be code for pandas.query is compared as plain text."""
    frame = FRAME.assign(dataset=["__import__('os')"] + ["SFHOT"] * 5)
    got = select_rows(frame, where={"dataset": ["__import__('os')"]})
    assert got.system.tolist() == ["A"]


# ----------------------------------------------------------------- raters in wide columns


def test_rater_column_pattern_equals_the_explicit_list():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"system": np.repeat(["A", "B", "C"], 4), "input": np.tile(list("wxyz"), 3)})
    for j in range(1, 4):
        df[f"coherence_r{j}"] = rng.integers(1, 6, len(df)).astype(float)
    df["bleu"] = rng.normal(size=len(df))
    by_pattern = metaeval.Dataset.from_frame(df, raters={"coherence": "coherence_r*"})
    listed = metaeval.Dataset.from_frame(df, raters={"coherence": ["coherence_r1", "coherence_r2", "coherence_r3"]})
    assert by_pattern.rater_labels("coherence") == ("coherence_r1", "coherence_r2", "coherence_r3")
    np.testing.assert_array_equal(by_pattern.ratings("coherence"), listed.ratings("coherence"))
    # the raw columns, cell by cell
    for j in range(3):
        want = df.pivot(index="system", columns="input", values=f"coherence_r{j + 1}").to_numpy()
        np.testing.assert_array_equal(by_pattern.ratings("coherence")[j], want)
    assert by_pattern.metrics == ("bleu",)


def test_rater_column_pattern_matching_too_few_columns_is_an_error():
    df = pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"], "c_r1": [1.0, 2.0]})
    with pytest.raises(DataError, match=r"pattern 'c_r\*' for 'c' matches 1 column"):
        metaeval.Dataset.from_frame(df, raters={"c": "c_r*"})


# ----------------------------------------------------------------- rotating raters


@pytest.mark.parametrize("n_raters,k", [(4, 3), (10, 3)])
def test_rotating_raters_icc1_matches_pingouin_and_closed_form(n_raters, k):
    """Regression: raters rotating over cells gave NaN for every ICC (no complete cell)."""
    rng = np.random.default_rng(n_raters)
    r = rotating(rng, 4, 15, n_raters, k)
    with pytest.warns(RaterDesignWarning, match=r"icc2, icc3, icc2k, icc3k not defined \(NaN\).*rotate"):
        res = by_method(agreement(dataset(r)))
    for form in SAME_RATER_FORMS:  # flagged NaN, never a two-way number for nested raters
        assert np.isnan(res[form].statistic) and res[form].n_units == 0
        assert "raters:rotating" in res[form].signature
    ref = pingouin_nested(r, k)
    assert res["icc1"].statistic == pytest.approx(ref.loc["ICC(1,1)", "ICC"], rel=1e-10)
    assert res["icc1k"].statistic == pytest.approx(ref.loc["ICC(1,k)", "ICC"], rel=1e-10)
    assert res["icc1"].pvalue == pytest.approx(ref.loc["ICC(1,1)", "pval"], rel=1e-8)
    assert res["icc1"].df2 == ref.loc["ICC(1,1)", "df2"]
    lo, hi = ref.loc["ICC(1,1)", "CI95"]  # pingouin rounds its interval to 2 decimals
    assert res["icc1"].ci_low == pytest.approx(lo, abs=0.006)
    assert res["icc1"].ci_high == pytest.approx(hi, abs=0.006)
    units = [list(r[:, s, i][np.isfinite(r[:, s, i])]) for s in range(4) for i in range(15)]
    icc1, icc1k = one_way(units)
    assert res["icc1"].statistic == pytest.approx(icc1, rel=1e-10)
    assert res["icc1k"].statistic == pytest.approx(icc1k, rel=1e-10)
    assert res["icc1"].n_raters == k and res["icc1"].n_units == 60
    assert "raters:rotating" in res["icc1"].signature
    # Krippendorff's alpha needs no fixed raters: the krippendorff package on the R x cells table
    want = krippendorff.alpha(reliability_data=r.reshape(n_raters, -1), level_of_measurement="interval")
    assert res["krippendorff_interval"].statistic == pytest.approx(want, rel=1e-9)


def test_rotating_raters_with_uneven_counts_use_the_most_common_count():
    rng = np.random.default_rng(7)
    r = rotating(rng, 3, 12, 5, 3)
    r[:, 0, :3] = np.nan  # three cells rated by 2 raters only
    r[0, 0, :3] = r[1, 0, :3] = 1.0 + np.arange(3)
    with pytest.warns(MissingCellsWarning, match="3 of 36 cells do not have exactly 3 ratings"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RaterDesignWarning)
            res = by_method(agreement(dataset(r), method=["icc1", "icc1k"]))
    ref = pingouin_nested(r, 3)
    assert res["icc1"].statistic == pytest.approx(ref.loc["ICC(1,1)", "ICC"], rel=1e-10)
    assert (res["icc1"].n_units, res["icc1"].n_units_dropped) == (33, 3)


def test_rotating_raters_all_equal_is_nan_with_a_warning():
    r = rotating(np.random.default_rng(0), 2, 5, 4, 3)
    r[np.isfinite(r)] = 3.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = by_method(agreement(dataset(r), method=["icc1"]))
    assert np.isnan(res["icc1"].statistic)
    assert any(issubclass(w.category, ConstantInputWarning) for w in caught)


def test_complete_raters_keep_their_numbers():
    """The same raters in every cell: all six forms, as pingouin (unchanged by the design check)."""
    rng = np.random.default_rng(11)
    r = rng.normal(size=(3, 1, 1)) + rng.normal(size=(1, 4, 6)) + rng.normal(size=(3, 4, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RaterDesignWarning)
        res = by_method(agreement(dataset(r)))
    rows = [{"u": c, "rater": j, "y": r[j].ravel()[c]} for j in range(3) for c in range(24)]
    ref = pg.intraclass_corr(pd.DataFrame(rows), targets="u", raters="rater", ratings="y").set_index("Type")
    for form, key in [("icc1", "ICC(1,1)"), ("icc2", "ICC(A,1)"), ("icc3", "ICC(C,1)"), ("icc3k", "ICC(C,k)")]:
        assert res[form].statistic == pytest.approx(ref.loc[key, "ICC"], rel=1e-10)
    assert "raters:" not in res["icc2"].signature


# ----------------------------------------------------------------- rater slots


def test_rater_slots_report_only_the_one_way_forms():
    rng = np.random.default_rng(5)
    r = rng.normal(size=(1, 4, 8)) + rng.normal(size=(3, 4, 8))
    with pytest.warns(RaterDesignWarning, match="declared slots"):
        res = by_method(agreement(dataset(r), raters="slots"))
    assert [m for m, a in res.items() if np.isfinite(a.statistic)] == [
        "krippendorff_interval", "krippendorff_ordinal", "icc1", "icc1k"]
    ref = pingouin_nested(r, 3)
    assert res["icc1"].statistic == pytest.approx(ref.loc["ICC(1,1)", "ICC"], rel=1e-10)
    assert res["icc1k"].statistic == pytest.approx(ref.loc["ICC(1,k)", "ICC"], rel=1e-10)
    assert "raters:slots" in res["icc1"].signature
    with pytest.raises(ParameterError, match="raters='rotating'; choose one of same, slots"):
        agreement(dataset(r), raters="rotating")


def test_rater_correlations_refuse_slots_and_flag_rotating_raters():
    r = rotating(np.random.default_rng(2), 5, 6, 4, 3)
    with pytest.raises(ParameterError, match="same raters in every cell"):
        rater_correlations(dataset(r), raters="slots")
    with pytest.warns(RaterDesignWarning, match="rotate over cells"):
        rater_correlations(dataset(r), level="global", method="pearson")


@pytest.mark.parametrize("seed", range(12))
def test_one_way_icc_against_a_slow_loop_on_adversarial_designs(seed):
    """Random rotating designs with ties (integer ratings), cells with 0-5 ratings, one-rating
    cells, and a constant cell; the slow twin picks the most common count with a Counter."""
    from collections import Counter

    rng = np.random.default_rng(100 + seed)
    R, n, m = 6, 3, 7
    r = np.full((R, n, m), np.nan)
    for s in range(n):
        for i in range(m):
            k = int(rng.choice([0, 1, 2, 3, 3, 3, 4]))
            who = rng.choice(R, k, replace=False)
            r[who, s, i] = rng.integers(1, 4, k).astype(float)  # ties on a 1-3 scale
    r[:, 0, 0] = np.nan
    r[:3, 0, 0] = 2.0  # a constant cell
    cells = [r[:, s, i][np.isfinite(r[:, s, i])].tolist() for s in range(n) for i in range(m)]
    counts = Counter(len(c) for c in cells if len(c) >= 2)
    top = max(counts.values())
    k = max(c for c, f in counts.items() if f == top)
    units = [c for c in cells if len(c) == k]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = by_method(agreement(dataset(r), method=["icc1", "icc1k"], raters="slots"))
    bms_wms = one_way(units) if len(units) >= 2 else (np.nan, np.nan)
    for form, want in zip(("icc1", "icc1k"), bms_wms):
        got = res[form].statistic
        if np.isfinite(want):
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        else:
            assert np.isnan(got)
    assert res["icc1"].n_units == len(units) and res["icc1"].n_raters == k
