"""metaeval.read_mtme: mt-metrics-eval's data layout into a Dataset.

The tests write a small directory in the exact layout of the mt-metrics-eval
README ("File organization and naming convention") and compare correlations
of the parsed dataset with mt-metrics-eval's own ``stats.Correlation`` run on
the raw arrays the test generated (mt-metrics-eval stats.py, class
Correlation, commit 68a481a), which it reads from ``../shared/anchors``.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.errors import DataError, MtmeWarning, ParameterError

from _mtme_anchor import mtme



def mtme_stats():
    return mtme("stats")


SYSTEMS = ["sysA", "sysB", "sysC", "sysD", "sysE", "refB"]  # refB: a human translation
DOCS = ["d1"] * 4 + ["d2"] * 5 + ["d3"] * 3
DOMAINS = ["news"] * 9 + ["social"] * 3
M = len(DOCS)


def make_data(seed=0):
    """Raw arrays: human seg (NaN = unrated), metrics seg per system."""
    rng = np.random.default_rng(seed)
    n = len(SYSTEMS)
    human = np.round(-rng.gamma(1.0, 3.0, size=(n, M)), 1)  # MQM-like, ties
    human[rng.random((n, M)) < 0.25] = np.nan
    human[:, 5] = np.nan  # segment 5 rated for no system
    human[SYSTEMS.index("sysE")] = np.nan  # sysE not rated at all
    human[SYSTEMS.index("sysA"), 0] = np.nan
    metrics = {
        "BLEU-refA": np.round(30 + 5 * rng.standard_normal((n, M)), 0),
        "COMET-refA": 0.5 + 0.1 * rng.standard_normal((n, M)) + 0.02 * np.nan_to_num(human),
        "KIWI-src": 0.1 * rng.standard_normal((n, M)) + 0.03 * np.nan_to_num(human),
        "COMET-refB": 0.5 + 0.1 * rng.standard_normal((n, M)),
    }
    return human, metrics


def fmt(v):
    return "None" if (v is None or (isinstance(v, float) and math.isnan(v))) else repr(float(v))


def write_layout(root: Path, human, metrics, *, lp="en-de", testset="wmt99"):
    d = root / testset
    for sub in ("sources", "references", f"system-outputs/{lp}", "human-scores",
                f"metric-scores/{lp}", "documents"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources" / f"{lp}.txt").write_text("".join(f"source {j}\n" for j in range(M)))
    (d / "references" / f"{lp}.refA.txt").write_text("".join(f"refA {j}\n" for j in range(M)))
    (d / "references" / f"{lp}.refB.txt").write_text("".join(f"refB {j}\n" for j in range(M)))
    for i, s in enumerate(SYSTEMS):
        lines = [f"{s} output {j}" for j in range(M)]
        if s == "sysC":
            lines[3] = "[No translation supplied]"
        (d / "system-outputs" / lp / f"{s}.txt").write_text("\n".join(lines) + "\n")
    (d / "documents" / f"{lp}.docs").write_text(
        "".join(f"{dm} {dc}\n" for dm, dc in zip(DOMAINS, DOCS))
    )
    hs = d / "human-scores"
    with open(hs / f"{lp}.mqm.seg.score", "w") as f:
        for i, s in enumerate(SYSTEMS):
            for j in range(M):
                f.write(f"{s}\t{fmt(human[i, j])}\n")
    with open(hs / f"{lp}.mqm.sys.score", "w") as f:
        for i, s in enumerate(SYSTEMS):
            row = human[i][~np.isnan(human[i])]
            f.write(f"{s}\t{fmt(row.mean() if row.size else None)}\n")
    md = d / "metric-scores" / lp
    for name, X in metrics.items():
        refs = name.rsplit("-", 1)[1]
        with open(md / f"{name}.seg.score", "w") as f:
            for i, s in enumerate(SYSTEMS):
                if s == refs:
                    continue  # a metric has no score for its own reference
                for j in range(M):
                    f.write(f"{s}\t{fmt(X[i, j])}\n")
        with open(md / f"{name}.sys.score", "w") as f:
            for i, s in enumerate(SYSTEMS):
                if s != refs:
                    f.write(f"{s}\t{fmt(X[i].mean())}\n")
    return root


@pytest.fixture()
def layout(tmp_path):
    human, metrics = make_data()
    write_layout(tmp_path, human, metrics)
    return tmp_path, human, metrics


def _vec(a):
    return [None if math.isnan(v) else float(v) for v in np.ravel(a)]


def test_reads_layout_labels_texts_contexts(layout):
    root, human, metrics = layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", human="mqm", refs="refA")
    # sysE has no human score (dropped), refB is a human translation (dropped by default)
    assert ds.systems == ("sysA", "sysB", "sysC", "sysD")
    assert ds.human == ("mqm",)
    assert set(ds.metrics) == {"BLEU-refA", "COMET-refA", "KIWI-src"}  # refB variant needs refB
    # segment 5 is rated for no system: not an input
    assert "5" not in ds.inputs and len(ds.inputs) == M - 1
    np.testing.assert_array_equal(ds.scores("mqm"), np.delete(human[:4], 5, axis=1))
    exp = np.delete(metrics["BLEU-refA"][:4], 5, axis=1)
    exp[np.isnan(np.delete(human[:4], 5, axis=1))] = np.nan
    np.testing.assert_array_equal(ds.scores("BLEU-refA"), exp)
    t = ds.texts
    row = t[(t.system == "sysC") & (t.input == "3")].iloc[0]
    assert row["source"] == "source 3" and row["reference"] == "refA 3"
    assert row["reference:refB"] == "refB 3"
    assert pd.isna(row["hypothesis"])  # mt-metrics-eval's NO_TRANSLATION marker
    assert ds.context("doc")[0].tolist()[:4] == ["d1"] * 4
    assert ds.context("domain")[0, -1] == "social"


def test_include_human_keeps_reference_translation(layout):
    root, _, _ = layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", include_human=True)
    assert "refB" in ds.systems
    ds2 = metaeval.read_mtme(root, "wmt99", "en-de", include_human=True)
    # COMET-refB has no score for refB itself (its reference): a NaN row
    i = ds2.systems.index("refB")
    assert np.isnan(ds2.scores("COMET-refB")[i]).all()
    assert not np.isnan(ds2.scores("COMET-refA")[i]).all()


def test_primary_only_and_metric_filter(layout):
    root, _, _ = layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", primary=["COMET", "KIWI"],
                            primary_only=True)
    assert ds.metrics == ("COMET-refA", "KIWI-src")
    assert "primary metrics: COMET-refA, KIWI-src" in ds.provenance
    ds = metaeval.read_mtme(root, "wmt99", "en-de", metrics=["BLEU"])
    assert ds.metrics == ("BLEU-refA",)
    info = metaeval.mtme_info(root, "wmt99", "en-de", primary=["COMET"])
    fr = info.metric_frame().set_index("metric")
    assert fr.loc["COMET-refB", "primary"] and not fr.loc["BLEU-refA", "primary"]
    assert fr.loc["KIWI-src", "refs"] == "src" and fr.loc["BLEU-refA", "levels"] == "sys,seg"
    assert info.human_systems == ("refB",) and info.n_segments == M


@pytest.mark.parametrize("metric", ["BLEU-refA", "COMET-refA", "KIWI-src"])
def test_segment_correlations_equal_mtme(layout, metric):
    """seg Kendall (scipy tau-b) with mt-metrics-eval's 'none'/'item'/'sys'
    grouping = metaeval's global/input/item (mt-metrics-eval stats.py,
    Correlation.Kendall and AverageCorrelation, commit 68a481a)."""
    stats = mtme_stats()
    root, human, metrics = layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    keep = [SYSTEMS.index(s) for s in ds.systems]
    gold, met = human[keep], metrics[metric][keep]
    corr = stats.Correlation(len(keep), _vec(gold), [float(v) for v in met.ravel()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for theirs, ours in (("none", "global"), ("item", "input"), ("sys", "item")):
            exp = corr.Kendall(average_by=theirs)[0]
            got = metaeval.correlate(ds, "mqm", metrics=metric, level=ours, method="kendall_b",
                                     ci="none", pvalue="none").to_frame()["statistic"].iloc[0]
            assert got == pytest.approx(exp, rel=1e-12, abs=1e-12), (theirs, ours)
        exp = corr.Pearson(average_by="none")[0]
        got = metaeval.correlate(ds, "mqm", metrics=metric, level="global", method="pearson",
                                 ci="none", pvalue="none").to_frame()["statistic"].iloc[0]
        assert got == pytest.approx(exp, rel=1e-12)


@pytest.mark.parametrize("segments", ["all", "rated"])
def test_system_pearson_equals_mtme(layout, segments):
    """System-level Pearson on the sys files (segments='all', mt-metrics-eval's
    default) or on rated-segment means (segments='rated', the .true convention of
    mt-metrics-eval issues #3/#4), against stats.Correlation(...).Pearson()."""
    stats = mtme_stats()
    root, human, metrics = layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", level="sys", refs="refA", segments=segments)
    assert ds.inputs == ("sys",)
    keep = [SYSTEMS.index(s) for s in ds.systems]
    hsys = np.array([np.nanmean(human[i]) for i in keep])
    for metric in ds.metrics:
        X = metrics[metric][keep]
        if segments == "all":
            msys = X.mean(axis=1)
        else:
            msys = np.array([X[k][~np.isnan(human[i])].mean() for k, i in enumerate(keep)])
        exp = stats.Correlation(len(keep), list(hsys), list(msys)).Pearson()[0]
        got = metaeval.correlate(ds, "mqm", metrics=metric, level="system", ci="none",
                                 pvalue="none").to_frame()["statistic"].iloc[0]
        assert got == pytest.approx(exp, rel=1e-12)
    # the sys dataset = system level of the segment dataset read with the same
    # convention: 'all' attaches the metrics' .sys.score files as given system scores,
    # 'rated' keeps the means of the rated cells
    seg = metaeval.read_mtme(root, "wmt99", "en-de", level="seg", refs="refA", segments=segments)
    a = metaeval.correlate(seg, "mqm", level="system", ci="none", pvalue="none",
                           system_scores="given").to_frame()
    b = metaeval.correlate(ds, "mqm", level="system", ci="none", pvalue="none").to_frame()
    np.testing.assert_allclose(a["statistic"], b["statistic"], rtol=1e-12)


def test_doc_level(tmp_path):
    human, metrics = make_data(1)
    write_layout(tmp_path, human, metrics)
    d = tmp_path / "wmt99"
    docs = list(dict.fromkeys(DOCS))
    with open(d / "human-scores" / "en-de.mqm.doc.score", "w") as f:
        for s in SYSTEMS:
            for k, _ in enumerate(docs):
                f.write(f"{s}\t{-k - SYSTEMS.index(s) if s != 'sysB' or k else 'None'}\n")
    with open(d / "metric-scores" / "en-de" / "BLEU-refA.doc.score", "w") as f:
        for s in SYSTEMS:
            if s != "refA":
                for k, _ in enumerate(docs):
                    f.write(f"{s}\t{k * 2.5}\n")
    with pytest.warns(MtmeWarning, match="no doc-level file"):
        ds = metaeval.read_mtme(tmp_path, "wmt99", "en-de", level="doc", refs="refA")
    assert ds.inputs == ("d1", "d2", "d3") and ds.metrics == ("BLEU-refA",)
    assert np.isnan(ds.scores("BLEU-refA")[1, 0])  # unrated doc of sysB dropped
    assert ds.context("domain")[0].tolist() == ["news", "news", "social"]


# ---- malformed directories: clear errors naming the file and line ----------


def test_error_bad_score_line(layout):
    root, _, _ = layout
    p = root / "wmt99" / "human-scores" / "en-de.mqm.seg.score"
    lines = p.read_text().splitlines()
    lines[6] = "sysA\tabc"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"en-de\.mqm\.seg\.score, line 7: score 'abc' is not a number"):
        metaeval.read_mtme(root, "wmt99", "en-de")


def test_error_metric_none_and_fields(layout):
    root, _, _ = layout
    p = root / "wmt99" / "metric-scores" / "en-de" / "BLEU-refA.seg.score"
    lines = p.read_text().splitlines()
    lines[2] = "sysA\tNone"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"BLEU-refA\.seg\.score, line 3: metric score is 'None'"):
        metaeval.read_mtme(root, "wmt99", "en-de")
    lines[2] = "sysA 1.0 2.0"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"line 3: expected 2 whitespace-separated fields"):
        metaeval.read_mtme(root, "wmt99", "en-de")


def test_error_wrong_count_and_unknown_system(layout):
    root, _, _ = layout
    p = root / "wmt99" / "metric-scores" / "en-de" / "COMET-refA.seg.score"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(DataError, match=r"COMET-refA\.seg\.score: system 'refB' has 11 scores; expected 12"):
        metaeval.read_mtme(root, "wmt99", "en-de")
    p.write_text("\n".join(lines + ["ghost\t1.0"] * M) + "\n")
    with pytest.raises(DataError, match=r"system 'ghost' has no output file"):
        metaeval.read_mtme(root, "wmt99", "en-de")


def test_error_docs_not_contiguous_and_bad_names(layout):
    root, _, _ = layout
    p = root / "wmt99" / "documents" / "en-de.docs"
    lines = p.read_text().splitlines()
    lines[10] = "social d1"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"en-de\.docs, line 11: document 'd1' is not one contiguous"):
        metaeval.read_mtme(root, "wmt99", "en-de")


def test_error_options(layout):
    root, _, _ = layout
    with pytest.raises(ParameterError, match=r"human='da'.*available: 'mqm'.*--human"):
        metaeval.read_mtme(root, "wmt99", "en-de", human="da")
    with pytest.raises(ParameterError, match=r"refs: unknown reference\(s\) 'refZ'"):
        metaeval.read_mtme(root, "wmt99", "en-de", refs="refZ")
    with pytest.raises(ParameterError, match="level='segment'"):
        metaeval.read_mtme(root, "wmt99", "en-de", level="segment")
    with pytest.raises(ParameterError, match="segments='some'"):
        metaeval.read_mtme(root, "wmt99", "en-de", segments="some")
    with pytest.raises(DataError, match="is not a directory"):
        metaeval.read_mtme(root, "wmt00", "en-de")
    with pytest.raises(DataError, match="wrong language pair 'xx-yy'"):
        metaeval.read_mtme(root, "wmt99", "xx-yy")
    (root / "wmt99" / "metric-scores" / "en-de" / "bad.seg.score").write_text("")
    with pytest.raises(DataError, match=r"bad\.seg\.score: metric file name is not NAME-REF"):
        metaeval.read_mtme(root, "wmt99", "en-de")


# ---- CLI -------------------------------------------------------------------


def test_cli_read_mtme_roundtrip(layout, tmp_path):
    from click.testing import CliRunner

    from metaeval.cli import main

    root, _, _ = layout
    out = tmp_path / "wmt99.csv"
    texts = tmp_path / "texts.jsonl"
    r = CliRunner().invoke(main, ["read-mtme", str(root), "wmt99", "en-de", "--refs", "refA",
                                  "--out", str(out), "--texts-out", str(texts)])
    assert r.exit_code == 0, r.output
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    back = metaeval.read_dataset(out, human="mqm", metrics=list(ds.metrics), contexts=["doc", "domain"])
    for c in ds.columns:
        np.testing.assert_array_equal(back.scores(c), ds.scores(c))
    np.testing.assert_array_equal(back.context("domain"), ds.context("domain"))
    assert pd.read_json(texts, lines=True).shape[0] == len(ds.systems) * (M - 1)
    r = CliRunner().invoke(main, ["correlate", str(out), "--human", "mqm", "--level", "global",
                                  "--method", "kendall_b", "--ci", "none", "--pvalue", "none",
                                  "--format", "csv"])
    assert r.exit_code == 0, r.output


def test_cli_read_mtme_error_exit_2(layout, tmp_path):
    from click.testing import CliRunner

    from metaeval.cli import main

    root, _, _ = layout
    r = CliRunner().invoke(main, ["read-mtme", str(root), "wmt99", "en-de", "--human", "da",
                                  "--out", str(tmp_path / "x.csv")])
    assert r.exit_code == 2
    assert "metaeval: error: human='da'" in r.output and "--human" in r.output


# ---- MQM error-span ratings (issue 16.5) -----------------------------------------


def _rating_json(errors):
    import json

    return json.dumps({"errors": [dict(start=0, end=3, is_source_error=False, score=None, **e) for e in errors]})


ERRS = [
    [],
    [{"severity": "Major", "category": "Accuracy/Mistranslation"}],
    [{"severity": "minor", "category": "Fluency/Punctuation"}, {"severity": "Minor", "category": "Style"}],
    [{"severity": "Major", "category": "Non-translation!"}],
    [{"severity": "Neutral", "category": "Other"}, {"severity": "Critical", "category": "Accuracy"}],
]


def test_mqm_error_weight_equals_score_mqm():
    """Weights of mt-metrics-eval converters/score_mqm.py, function Score, with its
    default weights flag (commit 68a481a; run from its source, the module imports absl)."""
    from _mtme_anchor import mtme_function

    from metaeval.data._mtme import MQM_WEIGHTS, mqm_error_weight

    Score = mtme_function("converters/score_mqm", "Score")
    for errs in ERRS:
        for e in errs:
            exp = Score(MQM_WEIGHTS, [e["severity"]] + e["category"].split("/"))
            assert mqm_error_weight(e["severity"], e["category"]) == exp


def test_read_mtme_ratings_column(layout):
    root, human, _ = layout
    rng = np.random.default_rng(0)
    p = root / "wmt99" / "human-scores" / "en-de.mqm.merged.seg.rating"
    exp = np.full((len(SYSTEMS), M), np.nan)
    with open(p, "w") as f:
        for i, s in enumerate(SYSTEMS):
            for j in range(M):
                if np.isnan(human[i, j]):
                    f.write(f"{s}\tNone\n")
                    continue
                k = int(rng.integers(len(ERRS)))
                # hand-computed: -(sum of weights), Major 5, Minor 1, punctuation 0.1, non-translation 25
                exp[i, j] = -{0: 0.0, 1: 5.0, 2: 1.1, 3: 25.0, 4: 0.0}[k]
                f.write(f"{s}\t{_rating_json(ERRS[k])}\trater{j % 3}\n")
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", ratings="mqm.merged")
    assert ds.human == ("mqm", "mqm.merged")
    keep = [SYSTEMS.index(s) for s in ds.systems]
    cols = [int(c) for c in ds.inputs]
    np.testing.assert_allclose(ds.scores("mqm.merged"), exp[np.ix_(keep, cols)], rtol=0, atol=1e-12)
    custom = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", ratings="mqm.merged",
                                mqm_weights={"major": 1, "minor": 1})
    assert np.nanmin(custom.scores("mqm.merged")) >= -2
    lines = p.read_text().splitlines()
    lines[1] = "sysA\t{not json}\tr1"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"merged\.seg\.rating, line 2: rating is not None nor a JSON"):
        metaeval.read_mtme(root, "wmt99", "en-de", ratings="mqm.merged")
    with pytest.raises(ParameterError, match="no file .*available"):
        metaeval.read_mtme(root, "wmt99", "en-de", ratings="esa")


def test_display_names(layout):
    """mt-metrics-eval data.py EvalSet.DisplayName, 'spreadsheet' format: base name,
    '*' for non-primary, '[noref]' for source-based metrics."""
    root, _, _ = layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", names="display", primary=["COMET"])
    assert ds.metrics == ("*BLEU", "COMET", "*KIWI[noref]")
    full = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    np.testing.assert_array_equal(ds.scores("COMET"), full.scores("COMET-refA"))
    assert metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", names="display").metrics == (
        "BLEU", "COMET", "KIWI[noref]")
    with pytest.raises(ParameterError, match="both display as 'COMET'"):
        metaeval.read_mtme(root, "wmt99", "en-de", names="display")


def test_read_rating_spans_and_agreement(tmp_path):
    """Two raters' .rating files (mt-metrics-eval ratings.py format: SYSTEM, Rating JSON or
    None, optional RATER) read into spans; agreement hand-computed:
    sysA seg 0: rater1 [0,5), rater2 [3,8) -> char overlap 2 of 5 + 5; seg 1: rater1 None
    (not rated), rater2 no error; seg 2: both no error.  char F1 = 4/10, exact F1 = 0."""
    import json

    from metaeval.data._mtme import read_rating_spans
    from metaeval.wmt import span_agreement

    def rating(spans):
        return json.dumps({"errors": [{"start": a, "end": b, "category": "Accuracy",
                                       "severity": "Major", "score": None,
                                       "is_source_error": False} for a, b in spans]})

    p1 = tmp_path / "en-de.mqm.rater1.seg.rating"
    p1.write_text(f"sysA\t{rating([(0, 5)])}\nsysA\tNone\nsysA\t{rating([])}\n")
    p2 = tmp_path / "en-de.mqm.rater2.seg.rating"
    p2.write_text(f"sysA\t{rating([(3, 8)])}\tr2\nsysA\t{rating([])}\tr2\nsysA\t{rating([])}\tr2\n")
    a = read_rating_spans(p1)
    assert a["rater"].unique().tolist() == ["mqm.rater1"]
    assert a["input"].tolist() == ["0", "2"]
    b = read_rating_spans(p2)
    assert b["rater"].unique().tolist() == ["r2"]
    import pandas as pd

    both = pd.concat([a, b])
    c = span_agreement(both, match="char")[0]
    assert (c.rater_a, c.rater_b, c.n_segments, c.n_a, c.n_b, c.n_match) == ("mqm.rater1", "r2", 2, 5, 5, 2)
    assert c.f1 == pytest.approx(0.4, abs=1e-15)
    assert span_agreement(both, match="exact")[0].f1 == 0.0
    p1.write_text('sysA\t{"errors": [{"start": 4, "end": 1}]}\n')
    with pytest.raises(DataError, match=r"rater1\.seg\.rating, line 1: error span start=4, end=1"):
        read_rating_spans(p1)
    p1.write_text('sysA\t{"errors": [{"end": 1}]}\n')
    with pytest.raises(DataError, match=r"line 1: rating is not None nor a JSON"):
        read_rating_spans(p1)


def test_level_errors_name_the_read_mtme_option(layout):
    """read-mtme's file level is --score-level (--level is an analysis' grouping
    level): the errors about the file level name that option (found by review2)."""
    from click.testing import CliRunner

    from metaeval.cli import main

    root, _, _ = layout
    for args in (["--score-level", "sys", "--ratings", "mqm.merged"], ["--score-level", "doc"]):
        res = CliRunner().invoke(main, ["read-mtme", str(root), "wmt99", "en-de", "--refs", "refA", *args,
                                        "--out", str(root / "o.csv")])
        assert res.exit_code == 2, res.output
        assert "(option --score-level)" in res.output and "--level)" not in res.output, res.output
