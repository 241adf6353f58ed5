"""Readers of released layouts (issue 17.4): SummEval JSONL, Hugging Face splits, Parquet.

The files are written here in the released layouts:

* SummEval ``model_annotations.aligned.jsonl``: one JSON object per line with
  the keys ``decoded``, ``expert_annotations`` (3 objects of coherence,
  consistency, fluency, relevance), ``turker_annotations`` (5 such objects),
  ``id``, ``model_id``, ``references`` (11 strings), ``filepath``; the
  ``aligned.paired`` file adds ``text``.  The layout is the one read by
  sacrerouge ``sacrerouge/datasets/fabbri2020/setup.py`` (function
  ``load_judgments``) and written by Yale-LILY/SummEval
  ``data_processing/pair_data.py`` (commit 656b574).
* the same records as Parquet with nested ``list<struct>`` columns (what
  ``datasets.Dataset.to_parquet`` and ``pyarrow.Table.from_pylist`` write).

Expected values are computed in the tests from the records (mean over raters,
one rater per list position), independently of the reader.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from metaeval.data import Dataset, read_dataset, read_summeval
from metaeval.errors import DataError, InputTypeError, ParameterError

DIMS = ("coherence", "consistency", "fluency", "relevance")


def _records(seed=0, n_docs=4, systems=("M11", "M13", "M1", "M23_dynamicmix"), text=False):
    g = np.random.default_rng(seed)
    out = []
    for s in systems:
        for d in range(n_docs):
            doc = f"dm-test-{d:040x}"
            rec = {
                "decoded": f"summary of {doc} by {s}",
                "expert_annotations": [
                    {k: int(g.integers(1, 6)) for k in DIMS} for _ in range(3)
                ],
                "turker_annotations": [
                    {k: int(g.integers(1, 6)) for k in DIMS} for _ in range(5)
                ],
                "id": doc,
                "model_id": s,
                "references": [f"reference {r} of {doc}" for r in range(11)],
                "filepath": f"cnndm/dailymail/stories/{d:040x}.story",
            }
            if text:
                rec["text"] = f"article {doc}"
            out.append(rec)
    return out


def _write_jsonl(path, records, *, gz=False):
    opener = gzip.open if gz else open
    with opener(path, "wt", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
    return path


def _check(ds, records, kind, column_of):
    systems = list(dict.fromkeys(r["model_id"] for r in records))
    inputs = list(dict.fromkeys(r["id"] for r in records))
    assert ds.systems == tuple(systems) and ds.inputs == tuple(inputs)
    n_raters = len(records[0][f"{kind}_annotations"])
    for d in DIMS:
        col = column_of(d)
        ratings = ds.ratings(col)
        assert ratings.shape == (n_raters, len(systems), len(inputs))
        assert ds.rater_labels(col) == tuple(f"{kind}{r}" for r in range(1, n_raters + 1))
        for rec in records:
            i, j = systems.index(rec["model_id"]), inputs.index(rec["id"])
            values = [a[d] for a in rec[f"{kind}_annotations"]]
            assert ratings[:, i, j].tolist() == [float(v) for v in values]
            assert ds.scores(col)[i, j] == pytest.approx(sum(values) / len(values), abs=1e-12)


def test_summeval_jsonl_expert_ratings(tmp_path):
    recs = _records()
    ds = read_summeval(_write_jsonl(tmp_path / "model_annotations.aligned.jsonl", recs))
    assert ds.human == DIMS and ds.metrics == ()
    _check(ds, recs, "expert", lambda d: d)
    t = ds.texts.set_index(["system", "input"])
    assert "source" not in t.columns and len(t) == len(recs)
    for rec in recs:
        row = t.loc[(rec["model_id"], rec["id"])]
        assert row.hypothesis == rec["decoded"]
        assert tuple(row.references) == tuple(rec["references"])


def test_summeval_paired_gz_turkers_and_text(tmp_path):
    recs = _records(seed=1, text=True)
    path = _write_jsonl(tmp_path / "model_annotations.aligned.paired.jsonl.gz", recs, gz=True)
    ds = read_summeval(path, annotators="turker")
    _check(ds, recs, "turker", lambda d: d)
    assert set(ds.texts["source"]) == {r["text"] for r in recs}


def test_summeval_both_annotators(tmp_path):
    recs = _records(seed=2)
    ds = read_summeval(_write_jsonl(tmp_path / "a.jsonl", recs), annotators="both")
    assert ds.human == tuple(f"{k}_{d}" for k in ("expert", "turker") for d in DIMS)
    _check(ds, recs, "expert", lambda d: f"expert_{d}")
    _check(ds, recs, "turker", lambda d: f"turker_{d}")


def test_summeval_parquet_nested_layout(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    recs = _records(seed=3, text=True)
    path = tmp_path / "summeval.parquet"
    pq.write_table(pa.Table.from_pylist(recs), path)
    ds = read_summeval(path)
    _check(ds, recs, "expert", lambda d: d)
    want = read_summeval(recs)
    for d in DIMS:
        np.testing.assert_array_equal(ds.ratings(d), want.ratings(d))


def test_summeval_missing_annotation_positions_are_nan(tmp_path):
    recs = _records(seed=4)
    recs[0]["expert_annotations"] = recs[0]["expert_annotations"][:2]
    recs[1]["expert_annotations"][1]["fluency"] = None
    ds = read_summeval(recs)
    r = ds.ratings("coherence")
    assert np.isnan(r[2, 0, 0]) and not np.isnan(r[:2, 0, 0]).any()
    assert np.isnan(ds.ratings("fluency")[1, 0, 1])
    # the score is the mean over the raters present
    vals = [a["coherence"] for a in recs[0]["expert_annotations"]]
    assert ds.scores("coherence")[0, 0] == pytest.approx(sum(vals) / 2)


def test_summeval_errors(tmp_path):
    recs = _records()
    with pytest.raises(ParameterError, match="annotators='crowd'; choose one of expert, turker"):
        read_summeval(recs, annotators="crowd")
    with pytest.raises(ParameterError, match="unknown 'overall'"):
        read_summeval(recs, dimensions=["overall"])
    bad = [dict(recs[0])]
    del bad[0]["model_id"]
    with pytest.raises(DataError, match="record 1 lacks model_id"):
        read_summeval(bad)
    bad = [dict(recs[0], expert_annotations=[{"coherence": "high"}])]
    with pytest.raises(DataError, match=r"expert_annotations\[0\]\.coherence: rating 'high'"):
        read_summeval(bad, dimensions=["coherence"])
    with pytest.raises(DataError, match="duplicate|repeated"):
        read_summeval([recs[0], recs[0]])
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": "a"}\n[1, 2]\n')
    with pytest.raises(DataError, match="line 2 is not a JSON object"):
        read_summeval(p)
    with pytest.raises(InputTypeError, match="takes a path"):
        read_summeval(3)
    no_turk = [{k: v for k, v in r.items() if k != "turker_annotations"} for r in recs]
    with pytest.raises(DataError, match="no turker_annotations in the records"):
        read_summeval(no_turk, annotators="turker")


class _FakeSplit:
    """Mimics ``datasets.Dataset``'s ``to_pandas()`` (``datasets`` is not installed here)."""

    def __init__(self, frame):
        self._frame = frame

    def to_pandas(self):
        return self._frame.copy()


class _FakeDatasetDict(dict):
    pass


def _long_rated(seed=5):
    g = np.random.default_rng(seed)
    rows = []
    for s in ("A", "B", "C"):
        for i in range(4):
            m = float(g.normal())
            for r in ("w1", "w2"):
                rows.append({"system": s, "input": f"x{i}", "worker": r,
                             "quality": int(g.integers(1, 6)), "bleu": m})
    return pd.DataFrame(rows)


def test_from_hf_long_equals_from_frame():
    df = _long_rated()
    got = Dataset.from_hf(_FakeSplit(df), human="quality", rater="worker")
    want = Dataset.from_frame(df, human="quality", rater="worker")
    np.testing.assert_array_equal(got.ratings("quality"), want.ratings("quality"))
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame())


def test_from_hf_summeval_layout():
    recs = _records(seed=6)
    got = Dataset.from_hf(_FakeSplit(pd.DataFrame(recs)), layout="summeval")
    _check(got, recs, "expert", lambda d: d)


def test_from_hf_errors():
    with pytest.raises(InputTypeError, match="pick a split: one of test, train"):
        Dataset.from_hf(_FakeDatasetDict(test=1, train=2))
    with pytest.raises(InputTypeError, match="object with to_pandas"):
        Dataset.from_hf([1, 2])
    with pytest.raises(ParameterError, match="layout='wide'"):
        Dataset.from_hf(_FakeSplit(_long_rated()), layout="wide")


def test_flat_parquet_export_with_hf_metadata(tmp_path):
    """A flat export (one row per system x input x rater) as datasets.Dataset.to_parquet
    writes it: a pyarrow table whose schema carries the ``huggingface`` metadata key."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    df = _long_rated(seed=7)
    df["references"] = [["r1", "r2"]] * len(df)
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = {"info": {"features": {c: {"_type": "Value"} for c in df.columns}}}
    table = table.replace_schema_metadata({b"huggingface": json.dumps(meta).encode()})
    path = tmp_path / "export.parquet"
    pq.write_table(table, path)
    got = read_dataset(path, human="quality", rater="worker", metrics=["bleu"])
    want = Dataset.from_frame(_long_rated(seed=7), human="quality", rater="worker")
    np.testing.assert_array_equal(got.ratings("quality"), want.ratings("quality"))
    np.testing.assert_array_equal(got.scores("bleu"), want.scores("bleu"))
    assert got.name == "export"
