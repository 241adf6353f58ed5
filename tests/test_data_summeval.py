"""The bundled `summeval` dataset, checked against the raw release files.

The raw files in ../shared/data/summeval/ are read with plain pandas and json
(an independent path from the package's parquet copy and from_frame); the
tests are skipped when that folder is absent.
"""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval.data
from metaeval.data import list_datasets, load_dataset
from metaeval.errors import DataError

from _shared import SHARED, needs  # noqa: E402  (tests/_shared.py: ../shared beside the checkout)

RAW = SHARED / "data" / "summeval"
needs_raw = needs(RAW, "raw SummEval release")

DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
EXPERTS = ("expert1", "expert2", "expert3")


@pytest.fixture(scope="module")
def ds():
    return load_dataset("summeval", runs=True)


@pytest.fixture(scope="module")
def raw():
    return pd.read_csv(RAW / "scores.csv")


@pytest.fixture(scope="module")
def raw_rerun():
    return pd.read_csv(RAW / "scores_rerun.csv")


def cell(frame: pd.DataFrame, system: str, doc_id: str) -> pd.Series:
    row = frame[(frame["system"] == system) & (frame["doc_id"] == doc_id)]
    assert len(row) == 1
    return row.iloc[0]


def test_shape_and_columns(ds):
    assert ds.name == "summeval"
    assert ds.shape == (17, 100)
    assert len(ds.human) == 16
    assert ds.human[:4] == DIMENSIONS
    assert set(ds.human[4:]) == {f"{e}_{d}" for e in EXPERTS for d in DIMENSIONS}
    assert len(ds.metrics) == 43
    assert "BLUERT" in ds.metrics and "G.EVAL.4.REL" in ds.metrics
    assert repr(ds) == "Dataset(name='summeval', 17 systems x 100 inputs, 16 human, 43 metrics)"


def test_rater_and_run_axes(ds):
    for dim in DIMENSIONS:
        assert ds.ratings(dim).shape == (3, 17, 100)
        assert ds.rater_labels(dim) == EXPERTS
        assert ds.ratings(f"expert2_{dim}").shape == (1, 17, 100)
        assert ds.rater_labels(f"expert2_{dim}") == ("",)
    for metric in ds.metrics:
        assert ds.ratings(metric).shape == (2, 17, 100)
        assert ds.rater_labels(metric) == ("original", "rerun")


@needs_raw
def test_labels_match_raw(ds, raw):
    assert ds.systems == tuple(raw["system"].drop_duplicates())
    assert ds.inputs == tuple(raw["doc_id"].drop_duplicates())
    assert "M23_dynamicmix" in ds.systems
    metric_cols = [c for c in raw.columns[2:] if not c.startswith("expert")]
    assert ds.metrics == tuple(metric_cols)


@needs_raw
def test_spot_values_against_raw_csv(ds, raw):
    doc = "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    row = cell(raw, "M11", doc)
    s, i = ds.systems.index("M11"), ds.inputs.index(doc)
    # Raw row: expert ratings 2, 1, 1 for coherence (first data line of scores.csv).
    expected = np.mean(
        [row["expert1_coherence"], row["expert2_coherence"], row["expert3_coherence"]]
    )
    assert expected == pytest.approx(4 / 3)
    assert ds.scores("coherence")[s, i] == expected
    assert ds.scores("expert1_fluency")[s, i] == row["expert1_fluency"]
    assert ds.ratings("relevance")[:, s, i].tolist() == [row[f"{e}_relevance"] for e in EXPERTS]
    other = cell(raw, "M23_dynamicmix", ds.inputs[57])
    assert ds.ratings("G.EVAL.4.COH")[0, -1, 57] == other["G.EVAL.4.COH"]


@needs_raw
def test_every_value_against_raw(ds, raw, raw_rerun):
    s_idx = raw["system"].map({s: k for k, s in enumerate(ds.systems)}).to_numpy()
    i_idx = raw["doc_id"].map({d: k for k, d in enumerate(ds.inputs)}).to_numpy()
    for dim in DIMENSIONS:
        for r, expert in enumerate(EXPERTS):
            np.testing.assert_array_equal(
                ds.ratings(dim)[r, s_idx, i_idx], raw[f"{expert}_{dim}"].to_numpy(float)
            )
            np.testing.assert_array_equal(
                ds.scores(f"{expert}_{dim}")[s_idx, i_idx], raw[f"{expert}_{dim}"].to_numpy(float)
            )
    rs = raw_rerun["system"].map({s: k for k, s in enumerate(ds.systems)}).to_numpy()
    ri = raw_rerun["doc_id"].map({d: k for k, d in enumerate(ds.inputs)}).to_numpy()
    for metric in ds.metrics:
        np.testing.assert_array_equal(ds.ratings(metric)[0, s_idx, i_idx], raw[metric].to_numpy())
        np.testing.assert_array_equal(ds.ratings(metric)[1, rs, ri], raw_rerun[metric].to_numpy())


def test_averaged_dimension_is_nanmean_of_experts(ds):
    for dim in DIMENSIONS:
        stacked = np.stack([ds.scores(f"{e}_{dim}") for e in EXPERTS])
        np.testing.assert_array_equal(ds.scores(dim), np.nanmean(stacked, axis=0))
    assert not np.isnan(ds.scores("coherence")).any()


def test_metric_scores_average_both_runs(ds):
    for metric in ("BLEU", "BLANC", "G.EVAL.3.5.COH"):
        np.testing.assert_array_equal(ds.scores(metric), np.nanmean(ds.ratings(metric), axis=0))
    # Deterministic metrics agree across runs up to the rerun file's rounding.
    runs = ds.ratings("ROUGE.1")
    np.testing.assert_allclose(runs[0], runs[1], rtol=0, atol=1e-9)
    runs = ds.ratings("G.EVAL.4.COH")
    assert np.abs(runs[0] - runs[1]).max() > 0.1


@needs_raw
def test_texts(ds):
    texts = ds.texts
    assert list(texts.columns) == ["system", "input", "source", "references", "hypothesis"]
    assert len(texts) == 17 * 100
    assert texts.loc[texts["system"] == "M23_dynamicmix", "hypothesis"].isna().all()
    assert texts["hypothesis"].notna().sum() == 16 * 100
    with open(RAW / "texts.jsonl", encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    row = texts[(texts["system"] == "M11") & (texts["input"] == first["doc_id"])].iloc[0]
    assert row["hypothesis"] == first["hypotheses"]["M11"]
    assert row["source"] == first["source"]
    assert row["references"] == tuple(first["references"])
    assert len(row["references"]) == 11


def test_texts_follow_subset_and_pickle(ds):
    sub = ds.subset(systems=["M0", "M11"], inputs=list(ds.inputs[:3]))
    sub = pickle.loads(pickle.dumps(sub))
    texts = sub.texts
    assert texts[["system", "input"]].apply(tuple, axis=1).tolist() == [
        (s, i) for s in ("M0", "M11") for i in ds.inputs[:3]
    ]


def test_provenance(ds):
    text = ds.provenance
    for needle in (
        "Fabbri et al. 2021",
        "MIT",
        "Xiao et al. 2023",
        "Yuan et al. 2021",
        "Apache-2.0",
        "z-standardized",
    ):
        assert needle in text
    shipped = Path(metaeval.data.__file__).parent / "bundled" / "summeval" / "PROVENANCE.md"
    assert text in shipped.read_text(encoding="utf-8")


def test_list_datasets_matches_loaded(ds):
    (entry,) = [d for d in list_datasets() if d["name"] == "summeval"]
    assert set(entry) == {"name", "description", "shape", "human", "n_metrics", "provenance"}
    assert entry["shape"] == ds.shape
    assert entry["human"] == ds.human
    assert entry["n_metrics"] == len(ds.metrics)
    assert "\n" not in entry["provenance"] and "Fabbri" in entry["provenance"]


def test_unknown_dataset_lists_names():
    with pytest.raises(DataError, match=r"unknown dataset 'sumeval'; bundled datasets: 'summeval'"):
        load_dataset("sumeval")


def test_load_time():
    load_dataset("summeval")  # warm: imports of pyarrow etc.
    start = time.perf_counter()
    load_dataset("summeval")
    assert time.perf_counter() - start < 1.0
