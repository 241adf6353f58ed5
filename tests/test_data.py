"""Tests of metaeval.data: building, validating and reading a Dataset.

The bundled dataset is tested in test_data_summeval.py and the randomized
properties in test_data_properties.py.
"""

from __future__ import annotations

import gzip
import json
import pickle

import numpy as np
import pandas as pd
import pytest

from metaeval.data import Dataset, read_dataset
from metaeval.errors import DataError, ParameterError

NAN = np.nan


def long_frame() -> pd.DataFrame:
    """3 systems x 2 inputs, one missing cell (C, y), one NaN human value."""
    return pd.DataFrame(
        {
            "system": ["A", "A", "B", "B", "C"],
            "input": ["x", "y", "x", "y", "x"],
            "human": [1.0, 2.0, 3.0, NAN, 5.0],
            "bleu": [0.1, 0.2, 0.3, 0.4, 0.5],
            "chrf": [10, 20, 30, 40, 50],
        }
    )


def rater_frame() -> pd.DataFrame:
    """2 systems x 2 inputs x 2 raters; rater r2 did not rate (B, y)."""
    return pd.DataFrame(
        {
            "system": ["A", "A", "A", "A", "B", "B", "B"],
            "input": ["x", "x", "y", "y", "x", "x", "y"],
            "rater": ["r1", "r2", "r1", "r2", "r1", "r2", "r1"],
            "human": [1.0, 3.0, 2.0, 4.0, 5.0, NAN, 6.0],
            "bleu": [0.1, 0.1, 0.2, NAN, 0.3, 0.3, 0.4],
        }
    )


# ---------------------------------------------------------------------------- long form
class TestLongForm:
    def test_scores_labels_and_columns(self):
        ds = Dataset.from_frame(long_frame(), human="human", name="toy")
        assert ds.systems == ("A", "B", "C")
        assert ds.inputs == ("x", "y")
        assert ds.human == ("human",)
        assert ds.metrics == ("bleu", "chrf")
        assert ds.columns == ("human", "bleu", "chrf")
        assert ds.shape == (3, 2)
        assert ds.name == "toy"
        np.testing.assert_array_equal(ds.scores("human"), [[1, 2], [3, NAN], [5, NAN]])
        np.testing.assert_array_equal(ds.scores("chrf"), [[10, 20], [30, 40], [50, NAN]])
        assert ds.scores("chrf").dtype == np.float64
        assert ds.ratings("bleu").shape == (1, 3, 2)
        assert ds.rater_labels("bleu") == ("",)
        assert repr(ds) == "Dataset(name='toy', 3 systems x 2 inputs, 1 human, 2 metrics)"

    def test_missing_cells_are_nan(self):
        ds = Dataset.from_frame(long_frame(), human="human")
        # (C, y) is absent from the table, (B, y) human is NaN.
        assert np.isnan(ds.scores("bleu")[2, 1])
        assert np.isnan(ds.scores("human")[1, 1])
        assert ds.scores("bleu")[1, 1] == 0.4

    def test_labels_in_order_of_first_appearance_and_converted_to_str(self):
        df = pd.DataFrame(
            {"sys": [20, 3, 20, 3], "doc": [2.5, 2.5, 1, 1], "h": [1, 2, 3, 4], "m": [4, 3, 2, 1]}
        )
        ds = Dataset.from_frame(df, system="sys", input="doc", human="h")
        assert ds.systems == ("20", "3")
        assert ds.inputs == ("2.5", "1.0")
        assert all(isinstance(s, str) for s in ds.systems + ds.inputs)
        np.testing.assert_array_equal(ds.scores("h"), [[1, 3], [2, 4]])

    def test_default_metrics_skip_text_and_bool_columns(self):
        df = long_frame().assign(
            hypothesis=["a b", "c", "d e", "f", "g"], flag=[True, False, True, True, False]
        )
        ds = Dataset.from_frame(df, human="human")
        assert ds.metrics == ("bleu", "chrf")

    def test_explicit_metrics_and_human_list(self):
        ds = Dataset.from_frame(long_frame(), human=["human"], metrics="chrf")
        assert ds.metrics == ("chrf",)
        ds = Dataset.from_frame(long_frame(), human="human", metrics=[])
        assert ds.metrics == ()

    def test_numeric_strings_are_parsed(self):
        df = long_frame().astype({"bleu": object})
        df["bleu"] = ["0.1", "0.2", 0.3, None, "5e-1"]
        ds = Dataset.from_frame(df, human="human")
        np.testing.assert_array_equal(ds.scores("bleu"), [[0.1, 0.2], [0.3, NAN], [0.5, NAN]])

    def test_nullable_dtypes(self):
        df = long_frame().astype({"chrf": "Int64", "human": "Float64"})
        df.loc[0, "chrf"] = pd.NA
        ds = Dataset.from_frame(df, human="human")
        assert np.isnan(ds.scores("chrf")[0, 0])
        assert np.isnan(ds.scores("human")[1, 1])

    def test_one_system_is_valid(self):
        df = long_frame().query("system == 'A'")
        ds = Dataset.from_frame(df, human="human")
        assert ds.shape == (1, 2)


class TestRaters:
    def test_rater_column(self):
        ds = Dataset.from_frame(rater_frame(), human="human", rater="rater")
        assert ds.ratings("human").shape == (2, 2, 2)
        assert ds.rater_labels("human") == ("r1", "r2")
        np.testing.assert_array_equal(ds.ratings("human")[1], [[3, 4], [NAN, NAN]])
        np.testing.assert_array_equal(ds.scores("human"), [[2, 3], [5, 6]])
        # Metrics have no rater axis; given on one rater row only is fine.
        assert ds.ratings("bleu").shape == (1, 2, 2)
        np.testing.assert_array_equal(ds.scores("bleu"), [[0.1, 0.2], [0.3, 0.4]])

    def test_metric_differing_across_raters(self):
        df = rater_frame()
        df.loc[1, "bleu"] = 0.9
        with pytest.raises(
            DataError,
            match=r"metric 'bleu' has different values across the raters.*system='A', input='x'.*0\.1 vs 0\.9",
        ):
            Dataset.from_frame(df, human="human", rater="rater")

    def test_duplicate_rater_rows(self):
        df = pd.concat([rater_frame(), rater_frame().iloc[[2]]])
        with pytest.raises(
            DataError,
            match=r"1 duplicated \(system, input, rater\) key.*system='A', input='y', rater='r1'",
        ):
            Dataset.from_frame(df, human="human", rater="rater")

    def test_rater_and_run_together(self):
        df = rater_frame().assign(run="1")
        with pytest.raises(ParameterError, match="give `rater` or `run`, not both"):
            Dataset.from_frame(df, human="human", rater="rater", run="run")

    def test_rater_and_raters_together(self):
        df = rater_frame().assign(h2=1.0)
        with pytest.raises(ParameterError, match="not both"):
            Dataset.from_frame(df, human="human", rater="rater", raters={"hh": ["h2"]})


class TestRuns:
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "system": ["A", "A", "B", "B", "A", "A", "B"],
                "input": ["x", "y", "x", "y", "x", "y", "x"],
                "seed": [0, 0, 0, 0, 1, 1, 1],
                "human": [1.0, 2.0, 3.0, 4.0, NAN, 2.0, NAN],
                "llm": [0.5, 0.6, 0.7, 0.8, 0.55, NAN, 0.75],
            }
        )

    def test_run_axis_on_metrics(self):
        ds = Dataset.from_frame(self.frame(), human="human", run="seed")
        assert ds.ratings("llm").shape == (2, 2, 2)
        assert ds.rater_labels("llm") == ("0", "1")
        np.testing.assert_array_equal(ds.ratings("llm")[1], [[0.55, NAN], [0.75, NAN]])
        np.testing.assert_allclose(ds.scores("llm"), [[0.525, 0.6], [0.725, 0.8]])
        assert ds.ratings("human").shape == (1, 2, 2)
        np.testing.assert_array_equal(ds.scores("human"), [[1, 2], [3, 4]])

    def test_human_differing_across_runs(self):
        df = self.frame()
        df.loc[5, "human"] = 2.5
        with pytest.raises(
            DataError,
            match=r"human column 'human' has different values across the runs.*system='A', input='y'",
        ):
            Dataset.from_frame(df, human="human", run="seed")


class TestRatersInColumns:
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "system": ["A", "A", "B", "B"],
                "input": ["x", "y", "x", "y"],
                "e1_coh": [1, 2, 3, 4],
                "e2_coh": [3, 2, NAN, 5],
                "e1_flu": [5, 5, 4, 4],
                "bleu": [0.1, 0.2, 0.3, 0.4],
            }
        )

    def test_list_of_columns(self):
        ds = Dataset.from_frame(
            self.frame(), raters={"coherence": ["e1_coh", "e2_coh"]}, human="e1_flu"
        )
        assert ds.human == ("e1_flu", "coherence")
        assert ds.metrics == ("bleu",)  # the rater columns are not metrics
        assert ds.rater_labels("coherence") == ("e1_coh", "e2_coh")
        assert ds.ratings("coherence").shape == (2, 2, 2)
        np.testing.assert_array_equal(ds.scores("coherence"), [[2, 2], [3, 4.5]])

    def test_mapping_with_labels_and_kept_sources(self):
        ds = Dataset.from_frame(
            self.frame(),
            human=["coherence", "e1_coh", "e2_coh"],
            raters={"coherence": {"e1": "e1_coh", "e2": "e2_coh"}},
            metrics=["bleu"],
        )
        assert ds.human == ("coherence", "e1_coh", "e2_coh")
        assert ds.rater_labels("coherence") == ("e1", "e2")
        assert ds.rater_labels("e1_coh") == ("",)
        np.testing.assert_array_equal(ds.ratings("coherence")[0], ds.scores("e1_coh"))
        np.testing.assert_array_equal(ds.ratings("coherence")[1], ds.scores("e2_coh"))

    def test_human_is_optional_with_raters(self):
        ds = Dataset.from_frame(self.frame(), raters={"coherence": ["e1_coh", "e2_coh"]})
        assert ds.human == ("coherence",)
        assert ds.metrics == ("e1_flu", "bleu")

    def test_unknown_source_column(self):
        with pytest.raises(
            DataError,
            match=r"unknown column\(s\) in `raters`: 'e3_coh'.*available columns: .*'e1_coh'",
        ):
            Dataset.from_frame(self.frame(), raters={"coherence": ["e1_coh", "e3_coh"]})

    def test_key_clashes_with_a_column(self):
        with pytest.raises(DataError, match=r"`raters` key\(s\) 'bleu' are already columns"):
            Dataset.from_frame(self.frame(), raters={"bleu": ["e1_coh"]})

    def test_source_also_metric(self):
        with pytest.raises(DataError, match=r"'e2_coh' are rater columns in `raters`"):
            Dataset.from_frame(
                self.frame(), raters={"coherence": ["e1_coh", "e2_coh"]}, metrics=["e2_coh"]
            )

    def test_wrong_types(self):
        with pytest.raises(TypeError, match="list of columns"):
            Dataset.from_frame(self.frame(), raters={"coherence": "e1_coh"})
        with pytest.raises(DataError, match="lists no columns"):
            Dataset.from_frame(self.frame(), raters={"coherence": []})


# ---------------------------------------------------------------------------- wide form
class TestWideForm:
    def stacked(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "system": ["A", "B", "A", "B"],
                "score": ["human", "human", "bleu", "bleu"],
                "x": [1.0, 3.0, 0.1, 0.3],
                "y": [2.0, NAN, 0.2, 0.4],
            }
        )

    def test_stacked_table(self):
        ds = Dataset.from_frame(self.stacked(), human="human", form="wide")
        assert ds.systems == ("A", "B")
        assert ds.inputs == ("x", "y")
        assert ds.metrics == ("bleu",)
        np.testing.assert_array_equal(ds.scores("human"), [[1, 2], [3, NAN]])
        np.testing.assert_array_equal(ds.scores("bleu"), [[0.1, 0.2], [0.3, 0.4]])

    def test_equals_long_form(self):
        wide = Dataset.from_frame(self.stacked(), human="human", form="wide")
        long = Dataset.from_frame(wide.to_frame(), human="human")
        for column in wide.columns:
            np.testing.assert_array_equal(wide.scores(column), long.scores(column))

    def test_mapping_of_matrices(self):
        human = pd.DataFrame([[1.0, 2.0], [3.0, NAN]], index=["A", "B"], columns=["x", "y"])
        bleu = pd.DataFrame([[0.3, 0.4], [0.1, 0.2]], index=["B", "A"], columns=["x", "y"])
        ds = Dataset.from_frame({"human": human, "bleu": bleu}, human="human", form="wide")
        assert ds.systems == ("A", "B")
        np.testing.assert_array_equal(ds.scores("bleu"), [[0.1, 0.2], [0.3, 0.4]])

    def test_mapping_with_system_column(self):
        human = pd.DataFrame({"system": ["A", "B"], "x": [1.0, 2.0]})
        bleu = pd.DataFrame({"x": [0.5]}, index=pd.Index(["B"], name="whatever"))
        ds = Dataset.from_frame({"human": human, "bleu": bleu}, human="human", form="wide")
        np.testing.assert_array_equal(ds.scores("bleu"), [[NAN], [0.5]])

    def test_system_row_missing_from_one_score(self):
        df = self.stacked().drop(index=3)  # no bleu row for B
        ds = Dataset.from_frame(df, human="human", form="wide")
        assert np.isnan(ds.scores("bleu")[1]).all()

    def test_wide_with_raters(self):
        df = pd.DataFrame(
            {
                "system": ["A", "A", "B", "A", "B"],
                "score": ["human", "human", "human", "bleu", "bleu"],
                "rater": ["r1", "r2", "r1", "r1", "r1"],
                "x": [1.0, 3.0, 5.0, 0.1, 0.3],
            }
        )
        ds = Dataset.from_frame(df, human="human", form="wide", rater="rater")
        assert ds.ratings("human").shape == (2, 2, 1)
        np.testing.assert_array_equal(ds.scores("human"), [[2], [5]])

    def test_duplicate_rows(self):
        df = pd.concat([self.stacked(), self.stacked().iloc[[0]]])
        with pytest.raises(
            DataError, match=r"1 duplicated \(system, score\) key.*system='A', score='human'"
        ):
            Dataset.from_frame(df, human="human", form="wide")

    def test_non_numeric_value_named_with_its_cell(self):
        df = self.stacked().astype({"y": object})
        df.loc[2, "y"] = "oops"
        with pytest.raises(
            DataError,
            match=r"score column 'bleu' has 1 non-numeric.*'oops' at \(system='A', input='y'\)",
        ):
            Dataset.from_frame(df, human="human", form="wide")

    def test_missing_score_column(self):
        df = self.stacked().rename(columns={"score": "metric"})
        with pytest.raises(DataError, match=r"unknown label column\(s\) of the wide form.*'score'"):
            Dataset.from_frame(df, human="human", form="wide")

    def test_no_input_columns(self):
        df = self.stacked()[["system", "score"]]
        with pytest.raises(DataError, match="no input columns"):
            Dataset.from_frame(df, human="human", form="wide")

    def test_input_columns_colliding_as_str(self):
        df = pd.DataFrame({"system": ["A"], "score": ["human"], 1: [1.0], "1": [2.0]})
        with pytest.raises(DataError, match=r"duplicated \(input\) key.*'1'"):
            Dataset.from_frame(df, human="human", form="wide")


# ---------------------------------------------------------------------------- from_arrays
class TestFromArrays:
    def test_default_labels_and_rater_axis(self):
        h = np.arange(12, dtype=float).reshape(3, 2, 2)
        ds = Dataset.from_arrays({"h": h, "m": np.ones((2, 2))}, human="h")
        assert ds.systems == ("s0", "s1")
        assert ds.inputs == ("i0", "i1")
        assert ds.rater_labels("h") == ("r0", "r1", "r2")
        np.testing.assert_array_equal(ds.scores("h"), h.mean(axis=0))

    def test_input_arrays_are_copied(self):
        h = np.array([[1.0, 2.0]])
        ds = Dataset.from_arrays({"h": h}, human="h")
        h[0, 0] = 99
        assert ds.scores("h")[0, 0] == 1.0

    def test_shape_mismatch(self):
        with pytest.raises(DataError, match=r"score array 'm' has shape \(1, 2, 3\).*\(2, 2\)"):
            Dataset.from_arrays({"h": np.ones((2, 2)), "m": np.ones((2, 3))}, human="h")

    def test_label_count_mismatch(self):
        with pytest.raises(DataError, match="`systems` has 3 labels but the score arrays have 2"):
            Dataset.from_arrays({"h": np.ones((2, 2))}, human="h", systems=["a", "b", "c"])

    def test_duplicate_labels(self):
        with pytest.raises(DataError, match=r"duplicated \(system\) key.*'a'"):
            Dataset.from_arrays({"h": np.ones((2, 2))}, human="h", systems=["a", "a"])

    def test_bool_array(self):
        with pytest.raises(DataError, match="score column 'h' holds booleans"):
            Dataset.from_arrays({"h": np.ones((2, 2), dtype=bool)}, human="h")

    def test_string_array(self):
        arr = np.array([["1", "n/a"], ["2", "3"]], dtype=object)
        with pytest.raises(
            DataError, match=r"'h' has 1 non-numeric value\(s\): 'n/a' at \(system='0', input='1'\)"
        ):
            Dataset.from_arrays({"h": arr}, human="h")

    def test_infinity(self):
        arr = np.array([[1.0, np.inf], [2.0, 3.0]])
        with pytest.raises(
            DataError, match=r"'m' has 1 infinite value\(s\): inf at \(system='s0', input='i1'"
        ):
            Dataset.from_arrays({"h": np.ones((2, 2)), "m": arr}, human="h")

    def test_wrong_ndim(self):
        with pytest.raises(DataError, match=r"shape \(3,\)"):
            Dataset.from_arrays({"h": np.ones(3)}, human="h")


# ---------------------------------------------------------------------------- validation errors
class TestValidation:
    def test_empty_frame(self):
        with pytest.raises(DataError, match="the frame has no rows"):
            Dataset.from_frame(long_frame().iloc[:0], human="human")

    def test_no_score_columns(self):
        df = long_frame()[["system", "input"]]
        with pytest.raises(
            DataError, match=r"unknown human column\(s\): 'human'; available columns: \(none\)"
        ):
            Dataset.from_frame(df, human="human")
        with pytest.raises(DataError, match="empty data: `scores` has no columns"):
            Dataset.from_arrays({}, human=[])

    def test_human_required(self):
        with pytest.raises(ParameterError, match="`human` is required"):
            Dataset.from_frame(long_frame())

    def test_human_all_missing(self):
        df = long_frame().assign(human=NAN)
        with pytest.raises(DataError, match=r"human column\(s\) 'human' have no values"):
            Dataset.from_frame(df, human="human")

    def test_duplicate_keys_named_with_count(self):
        df = pd.concat([long_frame()] + [long_frame().iloc[[0, 1, 2, 3, 4]]] * 2)
        df = pd.concat([df, pd.DataFrame({"system": ["D"], "input": ["x"], "human": [1.0]})])
        with pytest.raises(DataError) as info:
            Dataset.from_frame(df, human="human", metrics=["bleu"])
        msg = str(info.value)
        assert "5 duplicated (system, input) key(s) over 15 rows" in msg
        assert "(system='A', input='x')" in msg and "(system='C', input='x')" in msg
        assert "pass `rater=` or `run=`" in msg

    def test_duplicate_keys_more_than_five(self):
        df = pd.DataFrame({"system": list("abcdefg") * 2, "input": ["x"] * 14, "h": 1.0})
        with pytest.raises(DataError, match=r"7 duplicated.*\(system='e', input='x'\) and more"):
            Dataset.from_frame(df, human="h")

    def test_non_numeric_values_named_with_rows(self):
        df = long_frame().astype({"bleu": object})
        df["bleu"] = ["n/a", 0.2, "-", "x", "y"]
        with pytest.raises(DataError) as info:
            Dataset.from_frame(df, human="human", metrics=["bleu"])
        msg = str(info.value)
        assert "score column 'bleu' has 4 non-numeric value(s)" in msg
        assert "'n/a' at (system='A', input='x')" in msg
        assert "'-' at (system='B', input='x')" in msg
        assert "'y' at (system='C', input='x')" in msg

    def test_non_numeric_limit_of_five(self):
        df = pd.DataFrame({"system": list("abcdefg"), "input": "x", "h": 1.0, "m": list("abcdefg")})
        with pytest.raises(
            DataError, match=r"7 non-numeric.*'e' at \(system='e', input='x'\) and 2 more"
        ):
            Dataset.from_frame(df, human="h", metrics="m")

    def test_default_metric_with_a_typo_is_reported(self):
        df = long_frame().astype({"chrf": object})
        df.loc[3, "chrf"] = "n/a"
        with pytest.raises(
            DataError,
            match=r"'chrf' has 1 non-numeric value\(s\): 'n/a' at \(system='B', input='y'\)",
        ):
            Dataset.from_frame(df, human="human")

    def test_booleans_rejected(self):
        df = long_frame().assign(flag=[True, False, True, True, False])
        with pytest.raises(DataError, match="score column 'flag' holds booleans"):
            Dataset.from_frame(df, human="human", metrics=["flag"])
        df = long_frame().astype({"bleu": object})
        df.loc[2, "bleu"] = True
        with pytest.raises(
            DataError, match=r"'bleu' has 1 non-numeric.*True at \(system='B', input='x'\)"
        ):
            Dataset.from_frame(df, human="human")

    def test_infinities_rejected(self):
        df = long_frame().astype({"chrf": float})
        df.loc[4, "chrf"] = -np.inf
        with pytest.raises(
            DataError,
            match=r"score column 'chrf' has 1 infinite value\(s\): -inf at \(system='C', input='x'\)",
        ):
            Dataset.from_frame(df, human="human")
        df = long_frame().astype({"bleu": object})
        df.loc[0, "bleu"] = "inf"
        with pytest.raises(DataError, match="'bleu' has 1 infinite"):
            Dataset.from_frame(df, human="human")

    def test_complex_and_datetime_rejected(self):
        df = long_frame().assign(c=np.ones(5, dtype=complex))
        with pytest.raises(DataError, match="'c' has dtype complex128"):
            Dataset.from_frame(df, human="human", metrics=["c"])
        df = long_frame().assign(t=pd.Timestamp("2024-01-01"))
        with pytest.raises(DataError, match="'t' has dtype datetime64"):
            Dataset.from_frame(df, human="human", metrics=["t"])

    @pytest.mark.parametrize(
        ("kwargs", "pattern"),
        [
            (
                {"human": "Human"},
                r"unknown human column\(s\): 'Human'; available columns: 'human', 'bleu', 'chrf'",
            ),
            (
                {"human": "human", "metrics": ["bleu", "ter", "cider"]},
                r"unknown metric column\(s\): 'ter', 'cider'; available",
            ),
            (
                {"human": "human", "system": "model"},
                r"unknown label column\(s\).*'model'; available columns: 'system', 'input'",
            ),
            ({"human": "human", "rater": "annotator"}, r"unknown label column\(s\).*'annotator'"),
        ],
    )
    def test_unknown_columns(self, kwargs, pattern):
        with pytest.raises(DataError, match=pattern):
            Dataset.from_frame(long_frame(), **kwargs)

    def test_column_both_human_and_metric(self):
        with pytest.raises(DataError, match=r"'bleu' are listed both as human and as metric"):
            Dataset.from_frame(long_frame(), human=["human", "bleu"], metrics=["bleu"])

    def test_label_column_as_score(self):
        with pytest.raises(DataError, match=r"'system' are label columns"):
            Dataset.from_frame(long_frame(), human=["human", "system"])

    def test_same_label_column_twice(self):
        with pytest.raises(ParameterError, match="the label columns must differ"):
            Dataset.from_frame(long_frame(), human="human", input="system")

    def test_reserved_score_name(self):
        df = long_frame().rename(columns={"system": "model"}).assign(system=1.0)
        with pytest.raises(DataError, match=r"'system' are reserved"):
            Dataset.from_frame(df, system="model", human="human")

    def test_repeated_name_in_option(self):
        with pytest.raises(DataError, match="`human` names a column more than once: 'human'"):
            Dataset.from_frame(long_frame(), human=["human", "human"])

    def test_missing_labels(self):
        df = long_frame()
        df.loc[3, "system"] = None
        with pytest.raises(
            DataError,
            match=r"column 'system' has 1 missing or empty label\(s\), at row position\(s\) 3",
        ):
            Dataset.from_frame(df, human="human")

    def test_repeated_frame_columns(self):
        df = pd.concat([long_frame(), long_frame()[["bleu"]]], axis=1)
        with pytest.raises(DataError, match="repeated column name"):
            Dataset.from_frame(df, human="human")

    def test_metric_scores_a_system_human_lacks(self):
        df = long_frame()
        df.loc[df.system == "C", "human"] = NAN
        with pytest.raises(DataError) as info:
            Dataset.from_frame(df, human="human")
        msg = str(info.value)
        assert "metric 'bleu' scores system(s) 'C'" in msg
        assert "metric 'chrf' scores system(s) 'C'" in msg
        assert "no human column scores at all" in msg

    def test_metric_scores_an_input_human_lacks(self):
        df = pd.concat(
            [long_frame(), pd.DataFrame({"system": ["A"], "input": ["z"], "bleu": [0.9]})]
        )
        with pytest.raises(DataError, match=r"metric 'bleu' scores input\(s\) 'z'"):
            Dataset.from_frame(df, human="human", metrics=["bleu"])

    def test_coverage_uses_any_human_column(self):
        # human2 covers system C although human does not: valid.
        df = long_frame().assign(human2=[NAN, NAN, NAN, NAN, 4.0])
        df.loc[df.system == "C", "human"] = NAN
        ds = Dataset.from_frame(df, human=["human", "human2"], metrics=["bleu"])
        assert np.isnan(ds.scores("human")[2]).all()

    def test_single_missing_human_cells_are_fine(self):
        # (B, y) human is NaN while bleu has a value: a cell, not a whole system/input.
        ds = Dataset.from_frame(long_frame(), human="human")
        assert np.isnan(ds.scores("human")[1, 1]) and ds.scores("bleu")[1, 1] == 0.4

    def test_bad_form(self):
        with pytest.raises(
            ParameterError, match=r"`form` must be one of 'long', 'wide', got 'tall'"
        ):
            Dataset.from_frame(long_frame(), human="human", form="tall")

    def test_not_a_frame(self):
        with pytest.raises(TypeError, match="must be a pandas DataFrame"):
            Dataset.from_frame({"system": ["a"]}, human="h")


# ---------------------------------------------------------------------------- Dataset behaviour
class TestDataset:
    def test_arrays_are_read_only(self):
        ds = Dataset.from_frame(rater_frame(), human="human", rater="rater")
        for array in (ds.scores("human"), ds.ratings("human"), ds.scores("bleu")):
            assert not array.flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                array[0, 0] = 1.0

    def test_attributes_cannot_be_set(self):
        ds = Dataset.from_frame(long_frame(), human="human")
        with pytest.raises(AttributeError, match="immutable"):
            ds.name = "other"
        with pytest.raises(AttributeError, match="immutable"):
            ds._ratings = {}

    def test_unknown_column(self):
        ds = Dataset.from_frame(long_frame(), human="human")
        for method in (ds.scores, ds.ratings, ds.rater_labels):
            with pytest.raises(
                DataError,
                match=r"unknown score column 'ter'; available: human 'human'; metrics 'bleu', 'chrf'",
            ):
                method("ter")

    def test_scores_is_nanmean_of_ratings(self):
        ds = Dataset.from_frame(rater_frame(), human="human", rater="rater")
        # all-NaN cells give NaN without a RuntimeWarning (pytest turns those into errors)
        ratings = np.array(ds.ratings("human"))
        ratings[:, 1, 1] = NAN
        ds2 = Dataset.from_arrays({"h": ratings}, human="h")
        assert np.isnan(ds2.scores("h")[1, 1])
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(
                ds.scores("human"), np.nanmean(ds.ratings("human"), axis=0)
            )

    def test_subset(self):
        ds = Dataset.from_frame(long_frame(), human="human", name="toy")
        sub = ds.subset(systems=["C", "A"], inputs=["x"], metrics=["chrf"])
        assert sub.systems == ("C", "A") and sub.inputs == ("x",)
        assert sub.metrics == ("chrf",) and sub.human == ("human",)
        np.testing.assert_array_equal(sub.scores("chrf"), [[50], [10]])
        assert sub.name == "toy"

    def test_subset_errors(self):
        ds = Dataset.from_frame(long_frame(), human="human")
        with pytest.raises(
            DataError, match=r"subset: unknown systems: 'Z'; available: 'A', 'B', 'C'"
        ):
            ds.subset(systems=["A", "Z"])
        # human=[] keeps the metric scores only (perturbation analyses need no human scores)
        only = ds.subset(human=[])
        assert only.human == () and only.metrics == ds.metrics

    def test_subset_revalidates(self):
        df = long_frame().assign(human2=[NAN, NAN, NAN, NAN, 4.0])
        df.loc[df.system == "C", "human"] = NAN
        ds = Dataset.from_frame(df, human=["human", "human2"], metrics=["bleu"])
        with pytest.raises(DataError, match=r"metric 'bleu' scores system\(s\) 'C'"):
            ds.subset(human=["human"])

    def test_to_frame_round_trip(self):
        ds = Dataset.from_frame(long_frame(), human="human")
        frame = ds.to_frame()
        assert list(frame.columns) == ["system", "input", "human", "bleu", "chrf"]
        assert len(frame) == 6
        assert frame["system"].tolist() == ["A", "A", "B", "B", "C", "C"]
        back = Dataset.from_frame(frame, human=list(ds.human))
        assert back.systems == ds.systems and back.inputs == ds.inputs
        for column in ds.columns:
            np.testing.assert_array_equal(back.scores(column), ds.scores(column))

    def test_pickle_keeps_read_only(self):
        ds = Dataset.from_frame(rater_frame(), human="human", rater="rater")
        back = pickle.loads(pickle.dumps(ds))
        assert back.rater_labels("human") == ("r1", "r2")
        np.testing.assert_array_equal(back.ratings("human"), ds.ratings("human"))
        assert not back.ratings("human").flags.writeable
        assert not back.scores("human").flags.writeable

    def test_constructor_with_rater_labels(self):
        ratings = {"h": np.ones((2, 1, 2)), "m": np.zeros((1, 2))}
        ds = Dataset(
            ratings, human=["h"], systems=["A"], inputs=[1, 2], rater_labels={"h": ["ann", "bob"]}
        )
        assert ds.inputs == ("1", "2")
        assert ds.rater_labels("h") == ("ann", "bob")
        assert ds.rater_labels("m") == ("",)
        with pytest.raises(
            DataError, match=r"rater_labels\['h'\] has 1 labels but the column has R = 2"
        ):
            Dataset(ratings, human="h", systems=["A"], inputs=[1, 2], rater_labels={"h": ["a"]})
        with pytest.raises(DataError, match=r"unknown column\(s\) in `rater_labels`: 'q'"):
            Dataset(ratings, human="h", systems=["A"], inputs=[1, 2], rater_labels={"q": ["a"]})

    def test_weakref(self):
        import weakref

        ds = Dataset.from_frame(long_frame(), human="human")
        assert weakref.ref(ds)() is ds

    def test_provenance(self):
        ds = Dataset.from_frame(long_frame(), human="human", provenance="made up, CC0")
        assert ds.provenance == "made up, CC0"
        assert Dataset.from_frame(long_frame(), human="human").provenance is None


class TestTexts:
    def texts(self) -> pd.DataFrame:
        return pd.DataFrame(
            {"system": ["A", "B"], "input": ["x", "x"], "hypothesis": ["a cat", "the cat"]}
        )

    def test_texts_are_kept_and_subset(self):
        ds = Dataset.from_frame(long_frame(), human="human", texts=self.texts())
        assert ds.texts["hypothesis"].tolist() == ["a cat", "the cat"]
        assert ds.subset(systems=["A"]).texts["system"].tolist() == ["A"]

    def test_subset_orders_texts_like_the_labels(self):
        texts = pd.DataFrame(
            {
                "system": ["A", "A", "B", "B"],
                "input": ["x", "y", "x", "y"],
                "hypothesis": list("abcd"),
            }
        )
        ds = Dataset.from_frame(long_frame(), human="human", texts=texts)
        sub = ds.subset(systems=["B", "A"], inputs=["y", "x"])
        assert sub.texts["hypothesis"].tolist() == ["d", "c", "b", "a"]

    def test_from_arrays_texts(self):
        texts = pd.DataFrame({"input": ["i1"], "source": ["doc"]})
        ds = Dataset.from_arrays({"h": np.ones((2, 2))}, human="h", texts=texts)
        assert ds.texts["source"].tolist() == ["doc"]

    def test_texts_cannot_change_the_dataset(self):
        ds = Dataset.from_frame(long_frame(), human="human", texts=self.texts())
        texts = ds.texts
        texts.loc[0, "hypothesis"] = "changed"
        assert ds.texts.loc[0, "hypothesis"] == "a cat"

    def test_texts_and_contexts_share_no_storage_with_the_dataset(self):
        # Under pandas 2.x without copy-on-write, a shallow copy handed out the dataset's own
        # arrays: writing into them (e.g. ``.to_numpy()[0] = ...``) changed the dataset.
        df = long_frame()
        df["speaker"] = [f"s{i % 2}" for i in range(len(df))]
        ds = Dataset.from_frame(df, human="human", texts=self.texts(), contexts=["speaker"])
        for got, kept in ((ds.texts, ds._texts), (ds.contexts, ds._contexts)):
            for col in got.columns:
                assert not np.shares_memory(got[col].to_numpy(), kept[col].to_numpy()), col

    def test_texts_with_renamed_label_columns(self):
        df = long_frame().rename(columns={"system": "model", "input": "doc"})
        texts = self.texts().rename(columns={"system": "model", "input": "doc"})
        ds = Dataset.from_frame(df, system="model", input="doc", human="human", texts=texts)
        assert list(ds.texts.columns[:2]) == ["system", "input"]

    def test_per_input_texts(self):
        texts = pd.DataFrame({"input": ["x", "y"], "source": ["s1", "s2"]})
        ds = Dataset.from_frame(long_frame(), human="human", texts=texts)
        assert ds.texts.shape == (2, 2)

    def test_texts_from_columns_of_the_long_table(self):
        df = long_frame().assign(hypothesis=["h1", "h2", "h3", "h4", "h5"],
                                 source=["s", "t", "s", "t", "s"])
        ds = Dataset.from_frame(df, human="human", texts=["source", "hypothesis"])
        assert ds.metrics == ("bleu", "chrf")
        assert ds.texts[["system", "input", "hypothesis"]].values.tolist() == [
            ["A", "x", "h1"], ["A", "y", "h2"], ["B", "x", "h3"], ["B", "y", "h4"],
            ["C", "x", "h5"]]
        # several references per cell, as lists (JSONL): kept, as tuples
        refs = df.assign(references=[["r1", "r2"], ["r3"], ["r1", "r2"], ["r3"], ["r1"]])
        ds = Dataset.from_frame(refs, human="human", texts=["hypothesis", "references"])
        assert ds.texts["references"].tolist()[:2] == [("r1", "r2"), ("r3",)]
        with pytest.raises(DataError, match=r"unknown text column\(s\): 'ref'"):
            Dataset.from_frame(df, human="human", texts="ref")
        with pytest.raises(DataError, match=r"listed as contexts or texts and as scores"):
            Dataset.from_frame(df.assign(n=1.0), human="human", metrics=["n"], texts="n")

    def test_texts_errors(self):
        bad = self.texts().assign(system=["A", "Q"])
        with pytest.raises(DataError, match=r"`texts` has system label\(s\) the scores lack: 'Q'"):
            Dataset.from_frame(long_frame(), human="human", texts=bad)
        with pytest.raises(DataError, match="needs a 'system' and/or an 'input' column"):
            Dataset.from_frame(long_frame(), human="human", texts=pd.DataFrame({"a": [1]}))
        dup = pd.concat([self.texts(), self.texts()])
        with pytest.raises(DataError, match=r"2 duplicated \(system, input\) key"):
            Dataset.from_frame(long_frame(), human="human", texts=dup)
        with pytest.raises(TypeError, match="`texts` must be a pandas DataFrame"):
            Dataset.from_frame(long_frame(), human="human", texts=5)
        with pytest.raises(DataError, match=r"unknown text column\(s\): 'a'"):
            Dataset.from_frame(long_frame(), human="human", texts=["a"])


class TestContexts:
    """Context labels (issue 6): per cell, per system or per input, from a table or columns."""

    def frame(self) -> pd.DataFrame:
        return long_frame().assign(
            speaker=["s1", "s2", "s1", "s2", "s1"], band=[1, 2, 1, 2, NAN]
        )

    def test_columns_of_the_long_table(self):
        ds = Dataset.from_frame(self.frame(), human="human", contexts=["speaker", "band"])
        assert ds.metrics == ("bleu", "chrf")  # context columns are never metrics
        assert ds.context_names == ("system", "input", "speaker", "band")
        # hand-written: cells (A,x) (A,y) (B,x) (B,y) (C,x); (C,y) has no row
        expected = np.array([["s1", "s2"], ["s1", "s2"], ["s1", None]], dtype=object)
        np.testing.assert_array_equal(ds.context("speaker"), expected)
        # numbers become labels; NaN is an unknown label
        np.testing.assert_array_equal(
            ds.context("band"), np.array([["1", "2"], ["1", "2"], [None, None]], dtype=object)
        )
        np.testing.assert_array_equal(ds.context("system")[:, 0], ["A", "B", "C"])
        np.testing.assert_array_equal(ds.context("input")[0], ["x", "y"])

    def test_tables_keyed_by_system_or_input_broadcast(self):
        by_input = pd.DataFrame({"input": ["y", "x"], "domain": ["news", "chat"]})
        ds = Dataset.from_frame(long_frame(), human="human", contexts=by_input)
        np.testing.assert_array_equal(ds.context("domain"), [["chat", "news"]] * 3)
        by_system = pd.DataFrame({"system": ["C", "A"], "family": ["rnn", "tf"]})
        ds = Dataset.from_frame(long_frame(), human="human", contexts=by_system)
        np.testing.assert_array_equal(
            ds.context("family"),
            np.array([["tf", "tf"], [None, None], ["rnn", "rnn"]], dtype=object),
        )

    def test_subset_pickle_and_renamed_keys(self):
        df = self.frame().rename(columns={"system": "model"})
        ds = Dataset.from_frame(df, system="model", human="human", contexts="speaker")
        sub = ds.subset(systems=["A"], inputs=["y", "x"])
        np.testing.assert_array_equal(sub.context("speaker"), [["s2", "s1"]])
        again = pickle.loads(pickle.dumps(ds))
        np.testing.assert_array_equal(again.context("speaker"), ds.context("speaker"))
        frame = ds.contexts
        frame.loc[0, "speaker"] = "changed"
        assert ds.contexts.loc[0, "speaker"] == "s1"

    def test_metric_scores_only(self):
        ds = Dataset.from_frame(self.frame(), human=[], metrics=["bleu"], contexts="speaker")
        assert ds.human == () and ds.metrics == ("bleu",)
        ds = Dataset.from_arrays({"wer": np.ones((2, 3))}, human=[])
        assert ds.columns == ("wer",)

    def test_errors(self):
        with pytest.raises(DataError, match=r"unknown context 'gender'; available: 'system', "
                           r"'input', 'speaker'"):
            Dataset.from_frame(self.frame(), human="human", contexts="speaker").context("gender")
        with pytest.raises(DataError, match=r"unknown context"):
            Dataset.from_frame(long_frame(), human="human").context("speaker")
        clash = self.frame().assign(speaker=["s1", "s2", "s1", "s2", "s1"])
        with pytest.raises(DataError, match=r"'speaker' are listed as contexts or texts and as scores"):
            Dataset.from_frame(clash, human="human", metrics=["bleu", "speaker"],
                               contexts="speaker")
        # rater rows of one cell (A, x) disagree on the label
        rows = rater_frame().assign(speaker=["s1", "s9", "s2", "s2", "s3", "s3", "s4"])
        with pytest.raises(DataError, match=r"context column 'speaker' has several values in 1 "
                           r"system x input cell\(s\): \(system 'A', input 'x'\)"):
            Dataset.from_frame(rows, human="human", rater="rater", contexts="speaker")
        ok = Dataset.from_frame(rows.assign(speaker=["s1", "s1", "s2", None, "s3", "s3", "s4"]),
                                human="human", rater="rater", contexts="speaker")
        np.testing.assert_array_equal(ok.context("speaker"), [["s1", "s2"], ["s3", "s4"]])
        with pytest.raises(DataError, match="has no context column"):
            Dataset.from_frame(long_frame(), human="human", contexts=pd.DataFrame({"input": ["x"]}))
        with pytest.raises(DataError, match=r"context 'd' at input 'x' is a list, not a label"):
            Dataset.from_frame(long_frame(), human="human",
                               contexts=pd.DataFrame({"input": ["x"], "d": [[1]]}))
        with pytest.raises(DataError, match=r"unknown context column\(s\): 'nope'"):
            Dataset.from_frame(long_frame(), human="human", contexts=["nope"])
        with pytest.raises(DataError, match=r"`contexts` has input label\(s\) the scores lack"):
            Dataset.from_frame(long_frame(), human="human",
                               contexts=pd.DataFrame({"input": ["q"], "d": ["a"]}))


# ---------------------------------------------------------------------------- files
def _write(frame: pd.DataFrame, path, fmt: str) -> None:
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == "jsonl":
        # json.dumps writes floats with repr (exact); pandas' to_json rounds to 10 digits.
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        text = "".join(json.dumps(record) + "\n" for record in records)
        if str(path).endswith(".gz"):
            with gzip.open(path, "wt", encoding="utf-8") as handle:
                handle.write(text)
        else:
            path.write_text(text, encoding="utf-8")
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)


FILE_CASES = [
    ("csv", "scores.csv"),
    ("csv", "scores.csv.gz"),
    ("tsv", "scores.tsv"),
    ("tsv", "scores.tsv.gz"),
    ("jsonl", "scores.jsonl"),
    ("jsonl", "scores.jsonl.gz"),
    ("parquet", "scores.parquet"),
]


def _assert_same(a: Dataset, b: Dataset) -> None:
    assert a.systems == b.systems and a.inputs == b.inputs
    assert a.human == b.human and a.metrics == b.metrics
    for column in a.columns:
        assert a.rater_labels(column) == b.rater_labels(column)
        np.testing.assert_array_equal(a.ratings(column), b.ratings(column))


class TestReadDataset:
    @pytest.mark.parametrize(("fmt", "filename"), FILE_CASES)
    def test_round_trip_long(self, tmp_path, fmt, filename):
        rng = np.random.default_rng(0)
        frame = long_frame().assign(bleu=rng.normal(size=5), chrf=rng.normal(size=5) * 1e-7)
        expected = Dataset.from_frame(frame, human="human")
        path = tmp_path / filename
        _write(frame, path, fmt)
        ds = read_dataset(path, human="human")
        _assert_same(ds, expected)
        assert ds.name == "scores"

    @pytest.mark.parametrize(("fmt", "filename"), FILE_CASES)
    def test_round_trip_with_raters(self, tmp_path, fmt, filename):
        expected = Dataset.from_frame(rater_frame(), human="human", rater="rater")
        path = tmp_path / filename
        _write(rater_frame(), path, fmt)
        _assert_same(read_dataset(path, human="human", rater="rater"), expected)

    @pytest.mark.parametrize(("fmt", "filename"), FILE_CASES)
    def test_round_trip_wide(self, tmp_path, fmt, filename):
        frame = TestWideForm().stacked()
        expected = Dataset.from_frame(frame, human="human", form="wide")
        path = tmp_path / filename
        _write(frame, path, fmt)
        _assert_same(read_dataset(path, human="human", form="wide"), expected)

    def test_labels_read_as_text(self, tmp_path):
        path = tmp_path / "labels.csv"
        path.write_text("system,input,human,m\nNA,007,1,n/a\nNone,007,2,0.5\n", encoding="utf-8")
        ds = read_dataset(path, human="human")
        assert ds.systems == ("NA", "None")
        assert ds.inputs == ("007",)
        assert np.isnan(ds.scores("m")[0, 0])

    def test_format_override_and_name(self, tmp_path):
        path = tmp_path / "scores.txt"
        long_frame().to_csv(path, index=False, sep="\t")
        ds = read_dataset(path, format="tsv", human="human", name="mine")
        assert ds.name == "mine" and ds.shape == (3, 2)

    def test_bad_format(self, tmp_path):
        path = tmp_path / "scores.csv"
        long_frame().to_csv(path, index=False)
        with pytest.raises(
            ParameterError,
            match=r"`format` must be one of 'csv', 'tsv', 'jsonl', 'parquet', got 'xlsx'",
        ):
            read_dataset(path, format="xlsx", human="human")

    def test_unknown_extension(self, tmp_path):
        path = tmp_path / "scores.xlsx"
        path.write_text("x", encoding="utf-8")
        with pytest.raises(
            ParameterError, match=r"cannot tell the format of 'scores.xlsx'.*\.csv\.gz"
        ):
            read_dataset(path, human="human")

    def test_bad_jsonl_line(self, tmp_path):
        path = tmp_path / "scores.jsonl"
        path.write_text('{"system": "A", "input": "x", "h": 1}\n{oops\n', encoding="utf-8")
        with pytest.raises(DataError, match=r"scores\.jsonl: line 2 is not valid JSON"):
            read_dataset(path, human="h")
        path.write_text("[1, 2]\n", encoding="utf-8")
        with pytest.raises(DataError, match="line 1 is a JSON list"):
            read_dataset(path, human="h")

    def test_empty_files(self, tmp_path):
        for name in ("empty.csv", "empty.jsonl"):
            path = tmp_path / name
            path.write_text("", encoding="utf-8")
            with pytest.raises(DataError, match=f"empty data: {name}"):
                read_dataset(path, human="h")
        path = tmp_path / "header.csv"
        path.write_text("system,input,h\n", encoding="utf-8")
        with pytest.raises(DataError, match="the frame has no rows"):
            read_dataset(path, human="h")

    def test_parquet_with_index(self, tmp_path):
        path = tmp_path / "indexed.parquet"
        long_frame().set_index(["system", "input"]).to_parquet(path)
        _assert_same(
            read_dataset(path, human="human"), Dataset.from_frame(long_frame(), human="human")
        )

    def test_file_validation_error(self, tmp_path):
        path = tmp_path / "scores.csv"
        path.write_text("system,input,human\nA,x,1\nA,x,2\n", encoding="utf-8")
        with pytest.raises(
            DataError, match=r"1 duplicated \(system, input\) key.*system='A', input='x'"
        ):
            read_dataset(path, human="human")
