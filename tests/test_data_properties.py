"""Property tests: random long tables give a DataError or a correct Dataset.

The reference is deliberately slow and independent of the package: Python
loops decide whether a table is invalid (duplicate keys, non-numbers,
booleans, infinities, no human values, a metric covering a system or input
that the human column lacks) and ``DataFrame.pivot`` builds the expected
systems x inputs matrices.  No other exception type may escape.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval.data import Dataset
from metaeval.errors import DataError, ParameterError

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SYSTEMS = ["A", "B", "C", 7]
INPUTS = ["x", "y", 2.5]
RATERS = ["r1", "r2"]

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
clean_value = st.one_of(finite, finite, st.integers(-3, 3), st.just(math.nan), st.none())
dirty_value = st.one_of(
    clean_value,
    st.sampled_from([math.inf, -math.inf]),
    st.sampled_from(["n/a", "3.5", "", "abc", "inf"]),
    st.booleans(),
)


def _invalid_value(value: object) -> bool:
    """True if the value is not allowed in a score column (reference rule)."""
    if value is None or isinstance(value, bool):
        return isinstance(value, bool)
    if isinstance(value, str):
        try:
            parsed = float(value)
        except ValueError:
            return True
        return math.isnan(parsed) or math.isinf(parsed)
    return math.isinf(value)


def _as_float(value: object) -> float:
    return math.nan if value is None else float(value)


def _reference(rows: list[tuple]) -> tuple[str | None, dict | None]:
    """(reason, None) when the table is invalid, else (None, expected arrays)."""
    if not rows:
        return "empty", None
    keys = [(str(s), str(i)) for s, i, _, _ in rows]
    if len(set(keys)) != len(keys):
        return "duplicate keys", None
    if any(_invalid_value(v) for _, _, h, m in rows for v in (h, m)):
        return "bad value", None
    frame = pd.DataFrame(
        {
            "system": [k[0] for k in keys],
            "input": [k[1] for k in keys],
            "h": [_as_float(h) for _, _, h, _ in rows],
            "m": [_as_float(m) for _, _, _, m in rows],
        }
    )
    if frame["h"].isna().all():
        return "no human values", None
    for key in ("system", "input"):
        human_has = set(frame.loc[frame["h"].notna(), key])
        metric_has = set(frame.loc[frame["m"].notna(), key])
        if metric_has - human_has:
            return f"metric covers a {key} the human lacks", None
    systems = list(dict.fromkeys(frame["system"]))
    inputs = list(dict.fromkeys(frame["input"]))
    expected = {
        col: frame.pivot(index="system", columns="input", values=col)
        .reindex(index=systems, columns=inputs)
        .to_numpy(dtype=float)
        for col in ("h", "m")
    }
    expected["systems"] = tuple(systems)
    expected["inputs"] = tuple(inputs)
    return None, expected


def _frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system", "input", "h", "m"])


def _key(row: tuple) -> tuple[str, str]:
    return (str(row[0]), str(row[1]))


@st.composite
def rows_strategy(draw: st.DrawFn) -> list[tuple]:
    """Tables with unique keys and clean values, then maybe one duplicate and one bad value.

    Spoiling at most one key and one value keeps the valid tables frequent
    enough for the reference comparison to be exercised.
    """
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(SYSTEMS), st.sampled_from(INPUTS), clean_value, clean_value),
            max_size=12,
            unique_by=_key,
        )
    )
    if rows and draw(st.integers(0, 3)) == 3:
        k = draw(st.integers(0, len(rows) - 1))
        rows.append((rows[k][0], rows[k][1], draw(clean_value), draw(clean_value)))
    if rows and draw(st.booleans()):
        k = draw(st.integers(0, len(rows) - 1))
        row = list(rows[k])
        row[draw(st.sampled_from([2, 3]))] = draw(dirty_value)
        rows[k] = tuple(row)
    return rows


@SETTINGS
@given(rows=rows_strategy())
def test_random_long_frames(rows):
    reason, expected = _reference(rows)
    try:
        ds = Dataset.from_frame(_frame(rows), human="h", metrics=["m"])
    except DataError:
        assert reason is not None, "DataError on a table the reference accepts"
        return
    assert reason is None, f"accepted a table the reference rejects ({reason})"
    assert ds.systems == expected["systems"]
    assert ds.inputs == expected["inputs"]
    for column in ("h", "m"):
        np.testing.assert_array_equal(ds.scores(column), expected[column])
        assert not ds.scores(column).flags.writeable
    back = Dataset.from_frame(ds.to_frame(), human="h")
    np.testing.assert_array_equal(back.scores("m"), ds.scores("m"))


@settings(SETTINGS, max_examples=60)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(SYSTEMS), st.sampled_from(INPUTS), clean_value, clean_value),
        min_size=1,
        max_size=14,
        unique_by=_key,
    )
)
def test_valid_frames_match_reference(rows):
    """Without duplicates or bad values, only the two emptiness/coverage rules can fire."""
    reason, expected = _reference(rows)
    if reason is not None:
        with pytest.raises(DataError):
            Dataset.from_frame(_frame(rows), human="h", metrics=["m"])
        return
    ds = Dataset.from_frame(_frame(rows), human="h", metrics=["m"])
    np.testing.assert_array_equal(ds.scores("h"), expected["h"])
    np.testing.assert_array_equal(ds.scores("m"), expected["m"])


@SETTINGS
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(SYSTEMS),
            st.sampled_from(INPUTS),
            st.sampled_from(RATERS),
            clean_value,
        ),
        min_size=1,
        max_size=16,
    )
)
def test_random_rater_frames(rows):
    frame = pd.DataFrame(rows, columns=["system", "input", "rater", "h"])
    keys = [(str(s), str(i), r) for s, i, r, _ in rows]
    values = [_as_float(v) for *_, v in rows]
    try:
        ds = Dataset.from_frame(frame, human="h", rater="rater")
    except DataError:
        assert len(set(keys)) != len(keys) or all(math.isnan(v) for v in values)
        return
    assert len(set(keys)) == len(keys)
    ref = pd.DataFrame(keys, columns=["system", "input", "rater"]).assign(h=values)
    mean = ref.groupby(["system", "input"], sort=False)["h"].mean()  # skips NaN
    expected = (
        mean.unstack("input").reindex(index=list(ds.systems), columns=list(ds.inputs)).to_numpy()
    )
    np.testing.assert_allclose(ds.scores("h"), expected, rtol=1e-12, atol=1e-9)
    assert ds.rater_labels("h") == tuple(dict.fromkeys(r for _, _, r in keys))
    for r, label in enumerate(ds.rater_labels("h")):
        one = ref[ref["rater"] == label].pivot(index="system", columns="input", values="h")
        one = one.reindex(index=list(ds.systems), columns=list(ds.inputs)).to_numpy(dtype=float)
        np.testing.assert_array_equal(ds.ratings("h")[r], one)


@SETTINGS
@given(
    rows=rows_strategy(),
    extra=st.lists(st.one_of(st.text(max_size=3), st.booleans(), finite, st.none()), max_size=14),
    human=st.sampled_from(["h", "m", ["h", "m"], "nope", []]),
    form=st.sampled_from(["long", "long", "wide", "bad"]),
)
def test_only_documented_exceptions(rows, extra, human, form):
    """Default metric detection and odd options never raise anything but our errors."""
    frame = _frame(rows)
    if len(extra) >= len(frame):
        frame["extra"] = pd.Series(extra[: len(frame)], dtype=object)
    if form == "wide":
        frame = frame.rename(columns={"input": "score"})
    with contextlib.suppress(DataError, ParameterError):
        Dataset.from_frame(frame, human=human, form=form)
