"""Issue 23 item 7: without --metrics, a file with several human dimensions does not have them
taken for metrics; a known metric family name is never flagged as human-sounding; where the
columns cannot be told apart the command refuses and asks for --metrics.  Layouts from
docs/data.md: long form (one row per system x input), raters in rows (--rater-col)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.data._columns import metric_family, rating_like

#: metric names as they appear in mt-metrics-eval's WMT22-24 score files (google-research/
#: mt-metrics-eval, metric-scores/*/*.seg.score names) and in SummEval/NLG tables
KNOWN = ["COMET-MQM_2021", "COMET-22", "XCOMET-XL", "xCOMET-QE", "MetricX-23", "MetricX-23-QE", "BLEURT-20",
         "CometKiwi", "GEMBA-MQM", "prismRef", "YiSi-1", "chrF", "BERTScore", "sentinel-cand-mqm",
         "docWMT22CometDA", "KG-BERTScore", "f200spBLEU", "MaTESe", "BLEU", "ROUGE.L", "BARTScore",
         "G.EVAL.4.COH", "UniEval-fluency", "gpt4_judge", "llm_judge_overall"]


@pytest.mark.parametrize("name", KNOWN)
def test_known_metric_families_are_recognised(name):
    assert metric_family(name) is not None


@pytest.mark.parametrize("name", ["fluency", "overall", "coherence_mean", "human_judgement", "Engagement",
                                  "mqm", "da_z", "adequacy"])
def test_human_dimensions_are_not_metric_families(name):
    assert metric_family(name) is None


def test_rating_like_values():
    g = np.random.default_rng(0)
    thirds = g.integers(3, 16, 50) / 3  # means of 3 ratings on 1-5
    assert rating_like(thirds) and rating_like(g.integers(1, 6, 50)) and rating_like(g.integers(0, 101, 50))
    assert rating_like(g.integers(7, 36, 50) / 7)  # sevenths
    assert not rating_like(g.normal(size=50)) and not rating_like(g.random(50))


def _six_dims(tmp_path, continuous=None):
    """Long form: 5 systems x 12 inputs, six human dimensions as means of 3 raters on 1-5, metrics
    named as their families, one of them with 'MQM' in its name."""
    g = np.random.default_rng(1)
    rows = []
    for s in range(5):
        for i in range(12):
            q = g.normal()
            r = {"system": f"s{s}", "input": f"i{i}"}
            for dim in ("overall", "fluency", "coherence", "relevance", "consistency", "engagingness"):
                r[dim] = float(np.clip(np.rint(3 + q + g.normal(size=3)), 1, 5).mean())
            r.update({"BLEU": g.random(), "COMET-MQM_2021": q + g.normal(), "BLEURT-20": q + g.normal(),
                      "ROUGE.L": g.random()})
            if continuous:
                r[continuous] = q + g.normal()
            rows.append(r)
    p = tmp_path / "six.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_other_human_dimensions_are_not_taken_for_metrics(tmp_path):
    path = _six_dims(tmp_path)
    res = CliRunner().invoke(main, ["correlate", str(path), "--human", "overall", "--ci", "none",
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    got = {r["metric"] for r in json.loads(res.stdout)}
    assert got == {"BLEU", "COMET-MQM_2021", "BLEURT-20", "ROUGE.L"}
    err = res.stderr
    assert "not taken as metrics, they look like human dimensions" in err
    for dim in ("fluency", "coherence", "relevance", "consistency", "engagingness"):
        assert f"{dim}: a human-sounding name and ratings" in err
    assert "COMET-MQM_2021:" not in err  # never flagged as human-sounding


def test_a_named_metric_list_is_taken_as_given(tmp_path):
    path = _six_dims(tmp_path)
    res = CliRunner().invoke(main, ["correlate", str(path), "--human", "overall", "--metrics", "fluency,BLEU",
                                    "--ci", "none", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert [r["metric"] for r in json.loads(res.stdout)] == ["fluency", "BLEU"]


def test_a_column_that_cannot_be_told_apart_is_refused(tmp_path):
    path = _six_dims(tmp_path, continuous="quality_estimate")
    res = CliRunner().invoke(main, ["correlate", str(path), "--human", "overall", "--ci", "none"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "quality_estimate" in lines[0] and "--metrics" in lines[0]
    ok = CliRunner().invoke(main, ["correlate", str(path), "--human", "overall", "--metrics",
                                   "BLEU,quality_estimate", "--ci", "none", "--format", "json"])
    assert ok.exit_code == 0, ok.output


def test_raters_in_rows_layout(tmp_path):
    """--rater-col: each human dimension is an integer 1-5 per rater; the others are not metrics."""
    g = np.random.default_rng(2)
    rows = []
    for s in range(4):
        for i in range(10):
            q = g.normal()
            m = {"chrF": q + g.normal(), "BERTScore": g.random()}
            for r in range(3):
                rows.append({"system": f"s{s}", "input": f"i{i}", "rater": f"r{r}",
                             "overall": int(np.clip(np.rint(3 + q + g.normal()), 1, 5)),
                             "fluency": int(np.clip(np.rint(3 + q + g.normal()), 1, 5)), **m})
    p = tmp_path / "raters.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    res = CliRunner().invoke(main, ["correlate", str(p), "--human", "overall", "--rater-col", "rater",
                                    "--ci", "none", "--format", "json"])
    # fluency varies by rater: the data layer refuses it as a metric, in one line naming --human
    # the data layer names the keyword human=, spelled --human on the command line (issue 25.3)
    assert res.exit_code == 2 and "'fluency'" in res.output and "human=" in res.output
    res = CliRunner().invoke(main, ["correlate", str(p), "--human", "overall", "--metrics", "chrF,BERTScore",
                                    "--rater-col", "rater", "--ci", "none", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert {r["metric"] for r in json.loads(res.stdout)} == {"chrF", "BERTScore"}
