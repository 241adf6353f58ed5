"""Reading Unbabel COMET's ``comet-score`` output (issue 17.3).

The files are written here with the exact format strings of
``comet/cli/score.py`` in Unbabel/COMET:

* COMET >= 2.0 (commit da61b810ea06f67bbd5d96031f55082167a16e80):
  ``"{}\\tSegment {}\\tscore: {:.4f}".format(file, i, score)`` per segment,
  ``"{}\\tscore: {:.4f}".format(file, system_score)`` per file,
  ``"Predictions saved in: {}."`` after ``--to_json``, whose file is
  ``json.dump({file: [{"src", "mt", "ref", "COMET"}, ...]}, indent=4)``;
* COMET 1.x (commit c67f8be9f8b9d28f73d107e7eb0d71e2e63fee33):
  ``"Segment {}\\tscore: {:.3f}"`` (``"\\tvariance: {:.3f}"`` with
  ``--mc_dropout``) and ``"System score: {:.3f}"``; ``--to_json`` writes a
  list of records.

Expected values are the generated scores (JSON) or their formatted strings
parsed back by ``float`` (stdout), computed in the tests.  COMET itself is not
installed (see docs/textmetrics.md).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval.data import Dataset
from metaeval.errors import DataError, ParameterError
from metaeval.textmetrics import read_comet

FILES = ("outputs/sysA.de", "outputs/sysB.de")


def _scores(seed=0, n=7):
    g = np.random.default_rng(seed)
    return {f: g.uniform(0.2, 0.95, size=n).tolist() for f in FILES}


def _stdout_v2(scores, *, only_system=False, to_json=None):
    lines = []
    n = len(next(iter(scores.values())))
    for i in range(n):
        for f in scores:
            if not only_system:
                lines.append("{}\tSegment {}\tscore: {:.4f}".format(f, i, scores[f][i]))
    for f in scores:
        lines.append("{}\tscore: {:.4f}".format(f, sum(scores[f]) / n))
    if to_json:
        lines.append("Predictions saved in: {}.".format(to_json))
    return "\n".join(lines) + "\n"


def _stdout_v1(values, variances=None):
    lines = []
    for i, v in enumerate(values):
        if variances is None:
            lines.append("Segment {}\tscore: {:.3f}".format(i, v))
        else:
            lines.append("Segment {}\tscore: {:.3f}\tvariance: {:.3f}".format(i, v, variances[i]))
    lines.append("System score: {:.3f}".format(sum(values) / len(values)))
    return "\n".join(lines) + "\n"


def test_stdout_v2_two_systems(tmp_path):
    sc = _scores()
    p = tmp_path / "comet.out"
    p.write_text(_stdout_v2(sc, to_json="comet.json"))
    inputs = [f"seg{i}" for i in range(7)]
    got = read_comet(p, system={FILES[0]: "A", FILES[1]: "B"}, inputs=inputs)
    assert list(got.columns) == ["system", "input", "COMET"]
    want = [float("{:.4f}".format(sc[f][i])) for f in FILES for i in range(7)]
    assert got["COMET"].tolist() == want
    assert got["system"].tolist() == ["A"] * 7 + ["B"] * 7
    assert got["input"].tolist() == inputs * 2
    assert got.attrs["decimals"] == 4
    assert got.attrs["system_scores"]["B"] == float("{:.4f}".format(sum(sc[FILES[1]]) / 7))
    # default labels: the file names and the segment indices
    plain = read_comet(p)
    assert plain["system"].unique().tolist() == list(FILES)
    assert plain["input"].tolist()[:3] == ["0", "1", "2"]


def test_json_v2_full_precision_and_agrees_with_stdout(tmp_path):
    sc = _scores(seed=1)
    data = {f: [{"src": f"s{i}", "mt": f"m{i}", "ref": f"r{i}", "COMET": sc[f][i]}
                for i in range(7)] for f in FILES}
    pj = tmp_path / "comet.json"
    pj.write_text(json.dumps(data, ensure_ascii=False, indent=4))
    got = read_comet(pj, column="comet22")
    assert got["comet22"].tolist() == [sc[f][i] for f in FILES for i in range(7)]
    assert got.attrs["decimals"] is None
    po = tmp_path / "comet.out"
    po.write_text(_stdout_v2(sc))
    rounded = read_comet(po, column="comet22")
    np.testing.assert_allclose(rounded["comet22"], got["comet22"], atol=0.5e-4 + 1e-12)


def test_stdout_v1_and_variance(tmp_path):
    g = np.random.default_rng(2)
    vals, var = g.uniform(size=5).tolist(), g.uniform(0, 0.1, size=5).tolist()
    p = tmp_path / "old.out"
    p.write_text(_stdout_v1(vals, var))
    got = read_comet(p, system="A")
    assert got["COMET"].tolist() == [float("{:.3f}".format(v)) for v in vals]
    assert got["COMET_variance"].tolist() == [float("{:.3f}".format(v)) for v in var]
    assert got.attrs["decimals"] == 3
    with pytest.raises(ParameterError, match="does not name its system: pass system="):
        read_comet(p)


def test_json_v1_list(tmp_path):
    vals = [0.5, 0.25, 0.125]
    p = tmp_path / "old.json"
    p.write_text(json.dumps([{"src": "s", "mt": "m", "ref": "r", "COMET": v} for v in vals]))
    assert read_comet(p, system="A")["COMET"].tolist() == vals


def test_into_a_metric_column(tmp_path):
    sc = _scores(seed=3, n=4)
    p = tmp_path / "comet.out"
    p.write_text(_stdout_v2(sc))
    inputs = ["a", "b", "c", "d"]
    comet = read_comet(p, system={FILES[0]: "A", FILES[1]: "B"}, inputs=inputs)
    human = pd.DataFrame({"system": ["A"] * 4 + ["B"] * 4, "input": inputs * 2,
                          "mqm": np.arange(8.0)})
    ds = Dataset.from_frame(human.merge(comet, on=["system", "input"]), human="mqm")
    assert ds.metrics == ("COMET",)
    np.testing.assert_array_equal(
        ds.scores("COMET"),
        [[float("{:.4f}".format(sc[f][i])) for i in range(4)] for f in FILES],
    )


def test_errors(tmp_path):
    sc = _scores(seed=4, n=3)
    good = _stdout_v2(sc)
    p = tmp_path / "x.out"
    p.write_text("Global seed set to 1\n" + good)
    with pytest.raises(DataError, match="line 1 is not comet-score output: 'Global seed"):
        read_comet(p)
    # a missing segment (truncated file)
    p.write_text("\n".join(l for l in good.splitlines() if "Segment 1\t" not in l) + "\n")
    with pytest.raises(DataError, match=r"segments of outputs/sysA.de are not 0..1; missing \[1\]"):
        read_comet(p)
    # a system score that is not the mean of the segments
    lines = good.splitlines()
    lines[-1] = lines[-1].rsplit(" ", 1)[0] + " 9.9999"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="is not the mean of its 3 segment scores"):
        read_comet(p)
    p.write_text(_stdout_v2(sc, only_system=True))
    with pytest.raises(DataError, match="without --only_system"):
        read_comet(p)
    p.write_text(good)
    with pytest.raises(ParameterError, match="does not map 'outputs/sysB.de'"):
        read_comet(p, system={FILES[0]: "A"})
    with pytest.raises(ParameterError, match="names one system, and the output has 2"):
        read_comet(p, system="A")
    with pytest.raises(DataError, match="inputs= has 2 labels and the output 3 segments"):
        read_comet(p, inputs=["a", "b"])
    p.write_text(good + _stdout_v1([0.1, 0.2]))
    with pytest.raises(DataError, match="mixes the COMET 1.x and 2.x"):
        read_comet(p)
    pj = tmp_path / "x.json"
    pj.write_text(json.dumps({FILES[0]: [{"mt": "m"}]}))
    with pytest.raises(DataError, match="record 0 has no 'COMET' score"):
        read_comet(pj)
    pj.write_text(json.dumps([{"COMET": float("nan")}]))  # json writes NaN
    with pytest.raises(DataError, match="not a finite number"):
        read_comet(pj, system="A")
    with pytest.raises(ParameterError, match="format='csv'"):
        read_comet(pj, format="csv")
