"""System-level scores that are not means of segment scores (issue 16 item 6).

BLEU, chrF and TER at system level are corpus statistics (sufficient
statistics summed over a system's segments, then one score), and WMT ships
them as ``.sys.score`` files.  A Dataset carries them (``system_scores=``,
``read_mtme``, ``with_system_scores`` from ``textmetrics.corpus_scores``) and
the ``system`` level uses them.

Oracles: mt-metrics-eval's ``stats.Correlation(...).Kendall()`` /
``.Pearson()`` (stats.py, class Correlation, commit 68a481a) on the numbers of
the generated ``.sys.score`` files; scipy.stats (kendalltau, pearsonr,
spearmanr) on the given vectors; sacrebleu's ``corpus_bleu`` called directly.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from _spearman import spearman_test
from scipy import stats as st

import metaeval
from metaeval.data import Dataset
from metaeval.errors import DataError, ParameterError, SystemScoresWarning

from _mtme_anchor import mtme
from _shared import SHARED, need
from test_mtme import SYSTEMS, M, make_data, write_layout, fmt


# ----------------------------------------------------------------------------- fixtures

def _corpus_layout(root, seed=0):
    """The test_mtme layout plus a TER-like metric whose .sys.score is the corpus
    statistic (sum of edits / sum of reference lengths over all segments), not the
    mean of its segment scores, and a second human score 'wmt-z' with a sys file
    only (system scores that are not means of 'mqm' cells)."""
    human, metrics = make_data(seed)
    rng = np.random.default_rng(100 + seed)
    n = len(SYSTEMS)
    lengths = rng.integers(3, 40, size=(n, M)).astype(float)
    quality = np.nan_to_num(human, nan=-3.0)  # MQM-like: 0 best
    edits = rng.poisson(np.clip(lengths * (0.15 - 0.03 * quality), 0.1, None)).astype(float)
    metrics["TER-refA"] = edits / lengths
    write_layout(root, human, metrics)
    corpus = edits.sum(axis=1) / lengths.sum(axis=1)
    md = root / "wmt99" / "metric-scores" / "en-de"
    with open(md / "TER-refA.sys.score", "w") as f:
        for i, s in enumerate(SYSTEMS):
            f.write(f"{s}\t{fmt(corpus[i])}\n")
    z = rng.normal(size=n)
    with open(root / "wmt99" / "human-scores" / "en-de.wmt-z.sys.score", "w") as f:
        for i, s in enumerate(SYSTEMS):
            f.write(f"{s}\t{fmt(z[i])}\n")
    return human, metrics, corpus, z


@pytest.fixture()
def corpus_layout(tmp_path):
    human, metrics, corpus, z = _corpus_layout(tmp_path)
    return tmp_path, human, metrics, corpus, z


def _sys_file(path):
    """An independent parser of a 'SYSTEM SCORE' file (None -> NaN)."""
    out = {}
    for line in open(path, encoding="utf-8"):
        s, v = line.split()
        out[s] = math.nan if v == "None" else float(v)
    return out


# ----------------------------------------------------------------------------- reader

def test_read_mtme_attaches_sys_files(corpus_layout):
    root, human, metrics, corpus, _ = corpus_layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    assert set(ds.system_score_columns) == {"mqm", *ds.metrics}
    keep = [SYSTEMS.index(s) for s in ds.systems]
    np.testing.assert_array_equal(ds.system_score("TER-refA"), corpus[keep])
    # the human's sys file: the mean of its rated segments, as written
    np.testing.assert_array_equal(ds.system_score("mqm"),
                                  [human[i][~np.isnan(human[i])].mean() for i in keep])
    assert "system-level scores from .sys.score files" in ds.provenance
    # segments='rated': metric system scores are the means of the rated cells (no file)
    rated = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", segments="rated")
    assert rated.system_score_columns == ("mqm",)
    # system_scores=False reads the cells only, as before
    off = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", system_scores=False)
    assert off.system_scores is None
    # level='sys' datasets are the files themselves: nothing to attach
    assert metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", level="sys").system_scores is None
    # display names carry over
    disp = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", names="display")
    np.testing.assert_array_equal(disp.system_score("TER"), corpus[keep])


def test_read_mtme_system_human(corpus_layout):
    root, _, _, _, z = corpus_layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", system_human="wmt-z")
    keep = [SYSTEMS.index(s) for s in ds.systems]
    np.testing.assert_array_equal(ds.system_score("mqm"), z[keep])
    with pytest.raises(ParameterError, match="system_human='nope'"):
        metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", system_human="nope")


@pytest.mark.parametrize("method", ["kendall_b", "pearson", "spearman"])
def test_system_level_from_corpus_scores_equals_mtme(corpus_layout, method):
    """The system level of a segment dataset with .sys.score files is mt-metrics-eval's
    system-level correlation on those files (stats.Correlation, commit 68a481a); with
    system_scores='mean' it is the correlation of the rated-cell means, which differs."""
    stats = mtme("stats")
    root, human, metrics, corpus, _ = corpus_layout
    ds = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    d = root / "wmt99"
    gold = _sys_file(d / "human-scores" / "en-de.mqm.sys.score")
    systems = list(ds.systems)
    fcn = {"kendall_b": "Kendall", "pearson": "Pearson", "spearman": "Spearman"}[method]
    for metric in ds.metrics:
        msys = _sys_file(d / "metric-scores" / "en-de" / f"{metric}.sys.score")
        corr = stats.Correlation(len(systems), [gold[s] for s in systems],
                                 [msys[s] for s in systems])
        exp = getattr(corr, fcn)()[0]
        res = metaeval.correlate(ds, "mqm", metrics=metric, level="system", method=method,
                                 ci="none", system_scores="given")[0]
        assert res.statistic == pytest.approx(exp, rel=1e-12, abs=1e-15)
        assert res.signature.endswith("|sys:given:metric+human|metaeval:" + metaeval.__version__)
    # the TER corpus statistic is not the mean of its segment scores: 'mean' differs
    keep = [SYSTEMS.index(s) for s in systems]
    X = metrics["TER-refA"][keep]
    H = human[keep]
    means = np.array([X[k][~np.isnan(H[k])].mean() for k in range(len(keep))])
    hmeans = np.array([np.nanmean(H[k]) for k in range(len(keep))])
    exp_mean = getattr(stats.Correlation(len(keep), list(hmeans), list(means)), fcn)()[0]
    res_mean = metaeval.correlate(ds, "mqm", metrics="TER-refA", level="system", method=method,
                                  ci="none", system_scores="mean")[0]
    assert res_mean.statistic == pytest.approx(exp_mean, rel=1e-12, abs=1e-15)
    assert "|sys:mean|" in res_mean.signature
    exp_given = getattr(stats.Correlation(len(keep), list(hmeans), list(corpus[keep])), fcn)()[0]
    assert np.abs(corpus[keep] - means).max() > 1e-3  # the vectors differ
    if method == "pearson":  # (4 systems: the rank statistics may coincide)
        assert not math.isclose(exp_given, exp_mean, rel_tol=1e-6)


def test_segment_dataset_equals_sys_dataset(corpus_layout):
    """correlate / compare on a seg dataset with given system scores = the same on the
    level='sys' dataset of the same files (same statistic, same seeded draws)."""
    root = corpus_layout[0]
    seg = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    sys_ = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA", level="sys")
    kw = dict(level="system", method="pearson", ci="boot-systems", n_resamples=200, rng=5,
              pvalue="permutation")
    a = metaeval.correlate(seg, "mqm", system_scores="given", **kw).to_frame()
    b = metaeval.correlate(sys_, "mqm", **kw).to_frame()
    cols = ["statistic", "pvalue", "ci_low", "ci_high", "n"]
    np.testing.assert_allclose(a[cols].to_numpy(float), b[cols].to_numpy(float), rtol=1e-12)
    # compare: perm-both swaps whole systems' scores, as mt-metrics-eval does on sys files
    ca = metaeval.compare(seg, "mqm", "TER-refA", "BLEU-refA", n_resamples=300, rng=2,
                          system_scores="given")
    cb = metaeval.compare(sys_, "mqm", "TER-refA", "BLEU-refA", n_resamples=300, rng=2)
    np.testing.assert_array_equal(ca.null_distribution, cb.null_distribution)
    assert ca.pvalue == cb.pvalue and ca.statistic == pytest.approx(cb.statistic, rel=1e-12)
    assert "|sys:given:a+b+human|" in ca.signature and "sys:" not in cb.signature
    alla = metaeval.compare_all(seg, "mqm", n_resamples=200, rng=1, system_scores="given")
    allb = metaeval.compare_all(sys_, "mqm", n_resamples=200, rng=1)
    assert alla.metrics == allb.metrics
    np.testing.assert_allclose(alla.pvalues, allb.pvalues, rtol=1e-12)
    assert "|sys:given:metric+human|" in alla.signature


def test_input_resampling_of_given_scores(corpus_layout):
    root = corpus_layout[0]
    seg = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    with pytest.warns(SystemScoresWarning, match="sufficient statistics"):
        res = metaeval.correlate(seg, "mqm", level=["system", "global"], ci="boot-both",
                                 n_resamples=50, rng=0, system_scores="given")
    for r in res:
        if r.level == "system":
            assert math.isnan(r.ci_low) and math.isnan(r.ci_high) and np.isfinite(r.statistic)
        else:
            assert np.isfinite(r.ci_low)
    for test in ("boot-both", "boot-inputs", "perm-inputs", "perm-both-rowcol"):
        with pytest.raises(ParameterError, match="sufficient statistics"):
            metaeval.compare(seg, "mqm", "TER-refA", "BLEU-refA", test=test, n_resamples=20,
                             rng=0, system_scores="given")
    # with the means of the cells, input resampling is defined again
    c = metaeval.compare(seg, "mqm", "TER-refA", "BLEU-refA", test="boot-both",
                         n_resamples=20, rng=0, system_scores="mean")
    assert "|sys:mean|" in c.signature


def test_default_note_and_modes(corpus_layout):
    root = corpus_layout[0]
    seg = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA")
    with pytest.warns(SystemScoresWarning, match="TER-refA"):
        a = metaeval.correlate(seg, "mqm", level="system", ci="none")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SystemScoresWarning)
        b = metaeval.correlate(seg, "mqm", level="system", ci="none", system_scores="given")
        metaeval.correlate(seg, "mqm", level="system", ci="none", system_scores="mean")
        # no note at levels other than system
        metaeval.correlate(seg, "mqm", level="global", ci="none")
    np.testing.assert_array_equal(a.to_frame()["statistic"], b.to_frame()["statistic"])
    with pytest.raises(ParameterError, match="system_scores='corpus'"):
        metaeval.correlate(seg, "mqm", level="system", system_scores="corpus")


def test_correlation_design_uses_given(corpus_layout):
    """Seed paper 003's design at the system level: the given vectors (scipy
    spearmanr), a pair of a given and a mean column uses the mean's own cells."""
    from metaeval.diagnostics import correlation_design

    root = corpus_layout[0]
    seg = metaeval.read_mtme(root, "wmt99", "en-de", refs="refA").subset(
        metrics=["TER-refA", "BLEU-refA"])
    res = correlation_design(seg, system_scores="given")
    fr = res.to_frame()
    sysrow = fr[(fr.level == "system") & (fr.column_1 == "mqm") & (fr.column_2 == "TER-refA")].iloc[0]
    exp = spearman_test(seg.system_score("mqm"), seg.system_score("TER-refA"))  # exact, n <= 9
    assert sysrow.statistic == pytest.approx(exp.statistic, rel=1e-12)
    assert sysrow.pvalue == pytest.approx(exp.pvalue, rel=1e-12)
    assert "|sys:given|" in sysrow.signature
    # mixed pair: TER given vs a column without given scores (means of its own cells)
    mixed = seg.with_system_scores({"mqm": seg.system_score("mqm")}, replace=True)
    fr2 = correlation_design(mixed, system_scores="given").to_frame()
    bleu = fr2[(fr2.level == "system") & (fr2.column_1 == "mqm") & (fr2.column_2 == "BLEU-refA")].iloc[0]
    exp2 = st.spearmanr(mixed.system_score("mqm"),
                        np.nanmean(np.asarray(mixed.scores("BLEU-refA")), axis=1))
    assert bleu.statistic == pytest.approx(exp2.statistic, rel=1e-12)
    mean = correlation_design(seg, system_scores="mean").to_frame()
    assert all("|sys:mean|" in s for s in mean[mean.level == "system"].signature)
    assert all("sys:" not in s for s in mean[mean.level == "global"].signature)


# ----------------------------------------------------------------------------- Dataset API

def _small(**kw):
    rs = np.random.default_rng(0)
    h = rs.normal(size=(4, 6))
    return Dataset.from_arrays({"h": h, "bleu": h + rs.normal(size=(4, 6)),
                                "ter": rs.normal(size=(4, 6))}, human="h",
                               systems=["A", "B", "C", "D"], **kw)


def test_dataset_system_scores_forms():
    vals = [30.0, 20.0, 25.0, 10.0]
    frame = pd.DataFrame({"bleu": vals}, index=["A", "B", "C", "D"])
    a = _small(system_scores=frame)
    b = _small(system_scores=frame.reset_index().rename(columns={"index": "system"}))
    c = _small(system_scores={"bleu": dict(zip("ABCD", vals))})
    d = _small(system_scores={"bleu": vals})
    long = pd.DataFrame({"system": list("ABCD"), "metric": "bleu", "score": vals,
                         "n_segments": 6, "signature": "x"})
    e = _small().with_system_scores(long)
    for ds in (a, b, c, d, e):
        np.testing.assert_array_equal(ds.system_score("bleu"), vals)
        assert ds.system_score("ter") is None
        assert ds.system_score_columns == ("bleu",)
    part = _small(system_scores={"bleu": pd.Series({"C": 1.0, "A": 2.0})})
    np.testing.assert_array_equal(part.system_score("bleu"), [2.0, np.nan, 1.0, np.nan])
    assert _small().system_scores is None
    fr = a.system_scores
    assert list(fr.index) == ["A", "B", "C", "D"] and fr.index.name == "system"
    fr.loc["A", "bleu"] = -1  # a copy
    assert a.system_score("bleu")[0] == 30.0
    with pytest.raises(ValueError):
        a.system_score("bleu")[0] = 1.0  # read-only


@pytest.mark.parametrize("bad, match", [
    ({"nope": [1, 2, 3, 4]}, "not score columns"),
    ({"bleu": {"A": 1.0, "Z": 2.0}}, "'Z'"),
    ({"bleu": [1.0, 2.0]}, "has 2 values but the dataset has 4"),
    ({"bleu": {"A": "x"}}, "not a number"),
    ({"bleu": {"A": float("inf")}}, "finite"),
    ({"bleu": {"A": np.nan}}, "no value for any system"),
    ({"bleu": {"A": True}}, "boolean"),
])
def test_dataset_system_scores_errors(bad, match):
    with pytest.raises(DataError, match=match):
        _small(system_scores=bad)


def test_dataset_system_scores_propagation():
    ds = _small(system_scores={"bleu": [1.0, 2.0, 3.0, 4.0], "h": [4.0, 3.0, 2.0, 1.0]})
    sub = ds.subset(systems=["D", "B"])
    np.testing.assert_array_equal(sub.system_score("bleu"), [4.0, 2.0])
    assert ds.subset(metrics=["ter"]).system_score_columns == ("h",)
    # same inputs in another order: kept
    assert ds.subset(inputs=list(reversed(ds.inputs))).system_score_columns == ("h", "bleu")
    with pytest.warns(SystemScoresWarning, match="describe all inputs"):
        assert ds.subset(inputs=ds.inputs[:3]).system_scores is None
    back = pickle.loads(pickle.dumps(ds))
    np.testing.assert_array_equal(back.system_score("bleu"), ds.system_score("bleu"))
    assert not back.system_score("bleu").flags.writeable
    # from_frame passes them through
    df = ds.to_frame()
    ff = Dataset.from_frame(df, human="h", system_scores={"ter": {"A": 0.5}})
    assert ff.system_score("ter")[0] == 0.5
    # with_system_scores: merge or replace
    m = ds.with_system_scores({"ter": [0.1, 0.2, 0.3, 0.4]})
    assert set(m.system_score_columns) == {"h", "bleu", "ter"}
    r = ds.with_system_scores({"ter": [0.1, 0.2, 0.3, 0.4]}, replace=True)
    assert r.system_score_columns == ("ter",)


def test_signatures_unchanged_without_given_scores():
    ds = _small()
    res = metaeval.correlate(ds, "h", level="system", ci="none")
    assert all("sys:" not in r.signature for r in res)
    c = metaeval.compare(ds, "h", "bleu", "ter", n_resamples=20, rng=0)
    assert "sys:" not in c.signature
    # a dataset with given scores: the unit without them says sys:mean
    g = _small(system_scores={"bleu": [1.0, 2.0, 3.0, 4.0]})
    r = metaeval.correlate(g, "h", metrics=["ter"], level="system", ci="none")[0]
    assert "|sys:mean|" in r.signature
    assert r.statistic == metaeval.correlate(ds, "h", metrics=["ter"], level="system",
                                             ci="none")[0].statistic


def test_given_human_with_mean_metric_against_scipy():
    """Human given, metric mean: the metric's mean over its own present cells."""
    g = _small(system_scores={"h": [0.3, -1.0, 2.0, 0.1]})
    r = metaeval.correlate(g, "h", metrics=["ter"], level="system", method="kendall_b",
                           ci="none", system_scores="given")[0]
    exp = st.kendalltau([0.3, -1.0, 2.0, 0.1], np.asarray(g.scores("ter")).mean(axis=1))
    assert r.statistic == pytest.approx(exp.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(exp.pvalue, rel=1e-12)
    assert "|sys:given:human|" in r.signature


def test_corpus_bleu_from_texts_against_sacrebleu():
    """Text adapters' corpus scores as given system scores: the system level then
    correlates sacrebleu.corpus_bleu per system (called directly here)."""
    sacrebleu = pytest.importorskip("sacrebleu")
    from metaeval.textmetrics import add_scores, corpus_scores

    rs = np.random.default_rng(3)
    words = "the a cat dog sat on mat house red blue big small ran fast slow".split()
    systems, inputs = [f"s{k}" for k in range(5)], [f"i{j}" for j in range(8)]
    refs = [" ".join(rs.choice(words, size=rs.integers(4, 12))) for _ in inputs]
    rows = []
    for k, s in enumerate(systems):
        for j, i in enumerate(inputs):
            toks = refs[j].split()
            keep = [t if rs.random() > 0.15 * k else str(rs.choice(words)) for t in toks]
            rows.append({"system": s, "input": i, "reference": refs[j],
                         "hypothesis": " ".join(keep), "human": -k + rs.normal()})
    df = pd.DataFrame(rows)
    ds = Dataset.from_frame(df, human="human", texts=["reference", "hypothesis"])
    ds = add_scores(ds, ["bleu", "chrf", "ter"])  # sentence scores per cell
    given = ds
    for name in ("bleu", "chrf", "ter"):
        given = given.with_system_scores(corpus_scores(ds, name))
    assert set(given.system_score_columns) == {"bleu", "chrf", "ter"}
    hyp = {s: list(df[df.system == s].hypothesis) for s in systems}
    ref = {s: [list(df[df.system == s].reference)] for s in systems}
    exp_sys = [sacrebleu.corpus_bleu(hyp[s], ref[s]).score for s in systems]
    np.testing.assert_allclose(given.system_score("bleu"), exp_sys, rtol=1e-12)
    np.testing.assert_allclose(given.system_score("chrf"),
                               [sacrebleu.corpus_chrf(hyp[s], ref[s]).score for s in systems],
                               rtol=1e-12)
    np.testing.assert_allclose(given.system_score("ter"),
                               [sacrebleu.corpus_ter(hyp[s], ref[s]).score for s in systems],
                               rtol=1e-12)
    # a corpus score is not the mean of the sentence scores
    assert np.abs(given.system_score("bleu") - np.asarray(ds.scores("bleu")).mean(axis=1)).max() > 0.1
    hum = df.groupby("system", sort=False)["human"].mean().to_numpy()
    r = metaeval.correlate(given, "human", metrics="bleu", level="system", method="pearson",
                           ci="none", system_scores="given")[0]
    assert r.statistic == pytest.approx(st.pearsonr(exp_sys, hum).statistic, rel=1e-12)


# ----------------------------------------------------------------------------- WMT20, real data

def test_wmt20_system_kendall_from_corpus_scores():
    """WMT20 en-de (mt-metrics-eval-v2 layout): the system-level Kendall of chrF and TER
    read from a *segment* dataset with its .sys.score files equals mt-metrics-eval's
    stats.Correlation(...).Kendall() on the files (wmt-z system gold, mt-metrics-eval
    meta_info.WMT20; human translations and outlier systems excluded), and differs from the
    Kendall of the segment means."""
    stats = mtme("stats")
    root = need(SHARED / "data" / "mt-metrics-eval-v2", "WMT20 data in mt-metrics-eval layout")
    need(root / "wmt20" / "metric-scores" / "en-de", "WMT20 en-de metric scores")
    outliers = ["zlabs-nlp.179", "WMTBiomedBaseline.388", "Online-G.1556"]  # meta_info.py
    ds = metaeval.read_mtme(root, "wmt20", "en-de", human="wmt-raw", system_human="wmt-z",
                            refs="ref", exclude_systems=outliers, texts=False,
                            metrics=["chrF", "TER"])  # BLEU has no seg file in WMT20
    assert {m.rsplit("-", 1)[0] for m in ds.metrics} == {"chrF", "TER"}
    gold = _sys_file(root / "wmt20" / "human-scores" / "en-de.wmt-z.sys.score")
    systems = [s for s in ds.systems if np.isfinite(gold.get(s, np.nan))]
    for metric in ds.metrics:
        msys = _sys_file(root / "wmt20" / "metric-scores" / "en-de" / f"{metric}.sys.score")
        ok = [s for s in systems if s in msys]
        exp = stats.Correlation(len(ok), [gold[s] for s in ok], [msys[s] for s in ok]).Kendall()[0]
        got = metaeval.correlate(ds.subset(systems=ok), ds.human[0], metrics=metric,
                                 level="system", method="kendall_b", ci="none",
                                 system_scores="given")[0].statistic
        assert got == pytest.approx(exp, rel=1e-12)


# ----------------------------------------------------------------------------- random shapes

def _slow_system_vectors(cells, given):
    """Reference for one unit, written with plain loops: given columns as they are; the
    others' means over the cells where every non-given column of the unit has a value."""
    n, m = cells[0].shape
    mean_cols = [k for k, g in enumerate(given) if g is None]
    out = []
    for k, (a, g) in enumerate(zip(cells, given)):
        if g is not None:
            out.append([float(v) for v in g])
            continue
        vec = []
        for i in range(n):
            vals = [a[i, j] for j in range(m)
                    if all(not math.isnan(cells[c][i, j]) for c in mean_cols)]
            vec.append(sum(vals) / len(vals) if vals else math.nan)
        out.append(vec)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_random_units_against_loops_and_scipy(seed):
    """Random shapes, NaN cells, NaN given scores, ties: correlate and compare at system
    level equal scipy on vectors built by plain loops (pairwise deletion of systems)."""
    rs = np.random.default_rng(seed)
    n, m = int(rs.integers(3, 9)), int(rs.integers(1, 6))
    h = np.round(rs.normal(size=(n, m)), 1)
    a = np.round(h + rs.normal(size=(n, m)), 0)  # ties
    b = rs.normal(size=(n, m))
    for x in (h, a, b):
        x[rs.random((n, m)) < 0.2] = np.nan
    h[:, 0] = np.where(np.isnan(h[:, 0]), 0.5, h[:, 0])  # every system keeps a human cell
    given = {}
    for c in ("h", "a", "b"):
        if rs.random() < 0.6:
            g = rs.normal(size=n)
            g[rs.random(n) < 0.15] = np.nan
            g[0] = 1.0
            given[c] = g
    ds = Dataset.from_arrays({"h": h, "a": a, "b": b}, human="h", system_scores=given or None)
    cells = {"h": h, "a": a, "b": b}
    for metric in ("a", "b"):
        xs, ys = _slow_system_vectors([cells[metric], h], [given.get(metric), given.get("h")])
        ok = [i for i in range(n) if not (math.isnan(xs[i]) or math.isnan(ys[i]))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = metaeval.correlate(ds, "h", metrics=metric, level="system", method="pearson",
                                   ci="none", system_scores="given")[0]
            exp = (st.pearsonr([xs[i] for i in ok], [ys[i] for i in ok]).statistic
                   if len(ok) >= 2 else math.nan)
        assert r.n == len(ok)
        if math.isnan(exp):
            assert math.isnan(r.statistic)
        else:
            assert r.statistic == pytest.approx(exp, rel=1e-9, abs=1e-12)
    # compare: both statistics on the systems where a, b and h all have a value
    xa, xb, yh = _slow_system_vectors([a, b, h], [given.get("a"), given.get("b"), given.get("h")])
    ok = [i for i in range(n) if not any(math.isnan(v[i]) for v in (xa, xb, yh))]
    if len(ok) >= 3:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = metaeval.compare(ds, "h", "a", "b", method="spearman", n_resamples=20, rng=0,
                                 system_scores="given")
            ra = st.spearmanr([xa[i] for i in ok], [yh[i] for i in ok]).statistic
            rb = st.spearmanr([xb[i] for i in ok], [yh[i] for i in ok]).statistic
        if np.isfinite(ra) and np.isfinite(rb):
            assert c.statistic == pytest.approx(ra - rb, rel=1e-9, abs=1e-12)
