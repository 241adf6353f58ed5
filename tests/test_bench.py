"""``metaeval bench``: equal to correlate, compare_all and the WMT task-set aggregation run by hand.

The reference is the public API called step by step on the same scores: the metric's
scores computed in the test from the bundled SummEval texts, attached with
:class:`metaeval.textmetrics.TextScores`, then :func:`metaeval.correlate`,
:func:`metaeval.compare_all` (with the stream :func:`metaeval.wmt.run_tasks` documents:
one named after each task) and :class:`metaeval.wmt.TaskSetResults`' weights and
averages (mt-metrics-eval's ``AssignWeights``/``AverageCorrs``/``AverageRanks``).
"""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from test_registry import entries, newsroom, server  # noqa: F401  (loopback fixtures of the registry tests)

import metaeval
from metaeval.bench import Command, ScoresFile, bench
from metaeval.errors import ParameterError

N_RES = 40
LEVELS = ("system", "global")
BASELINES = ["ROUGE.L", "BLEU"]


def words(records):
    """The toy metric: hypothesis length in words (a plain function of the texts)."""
    return [float(len(r["hypothesis"].split())) for r in records]


@pytest.fixture
def metric_module(tmp_path, monkeypatch):
    (tmp_path / "bench_metric_mod.py").write_text(textwrap.dedent("""
        CALLS = []

        def words(records):
            CALLS.append(len(records))
            return [float(len(r["hypothesis"].split())) for r in records]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("bench_metric_mod", None)
    import bench_metric_mod

    yield bench_metric_mod
    sys.modules.pop("bench_metric_mod", None)


def _by_hand_dataset():
    """SummEval with the toy metric's (N, M) scores, computed from the texts in this test."""
    from metaeval.textmetrics import TextScores

    ds = metaeval.load_dataset("summeval")
    tx = ds.texts
    X = np.full(ds.shape, np.nan)
    for row in tx.itertuples(index=False):
        if isinstance(row.hypothesis, str):
            X[ds.systems.index(row.system), ds.inputs.index(row.input)] = len(row.hypothesis.split())
    ts = TextScores(systems=ds.systems, inputs=ds.inputs, scores={"words": X}, signatures={"words": ""},
                    multi_ref={"words": None}, reference_scores={"words": None}, n_items=0, n_cached=0,
                    n_computed=0, n_missing={"words": 0})
    return ts.attach(ds.subset(metrics=BASELINES))


def test_bench_equals_correlate_compare_all_and_task_sets_by_hand(metric_module, tmp_path):
    from metaeval.stats import resampling as rs
    from metaeval.stats.clusters import adjust_better
    from metaeval.wmt import Task, run_tasks

    res = bench("bench_metric_mod:words", baselines=BASELINES, datasets=["summeval"], levels=LEVELS,
                n_resamples=N_RES, rng=0, cache_dir=tmp_path / "c")
    assert res.metric == "words" and res.baselines == tuple(BASELINES)
    ds = _by_hand_dataset()
    metrics = ["words", *BASELINES]
    dims = ["coherence", "consistency", "fluency", "relevance"]
    # correlations with intervals, every level
    for h in dims:
        want = metaeval.correlate(ds, h, metrics=metrics, level=list(LEVELS), n_resamples=N_RES, rng=0).to_frame()
        got = res.correlations[res.correlations["human"] == h].drop(columns="dataset").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want)
    # the tasks, by hand
    tasks = [Task(data="summeval", human=h, level=lv, method="pearson", lp=f"summeval/{h}")
             for h in dims for lv in LEVELS]
    ref = run_tasks(tasks, {"summeval": ds}, metrics=metrics, n_resamples=N_RES, clusters="holm", rng=0)
    w = ref.assign_weights(["data", "human"])
    assert list(res.weights) == w == [1 / 8] * 8
    assert res.tasks.average_corrs(list(res.weights)) == ref.average_corrs(w)
    assert res.tasks.average_ranks(list(res.weights)) == ref.average_ranks(w)
    pd.testing.assert_frame_equal(res.ranking(), ref.table_frame(w))
    assert res.table(fmt="csv") == ref.table(w, fmt="csv")
    # each task's paired tests are compare_all's, drawn from the stream named after the task
    ss, _ = rs.seed_sequence(0)
    for t, r in zip(tasks, res.tasks.results):
        child = np.random.SeedSequence(rs.named_generator(ss, t.name).integers(0, 2**32, size=4).tolist())
        # bench's default rule is compare_all's: Holm-corrected p-values over the task's pairs
        cmp = metaeval.compare_all(ds, t.human, metrics=metrics, level=t.level, n_resamples=N_RES,
                                   correction="none", rng=child, clusters="metaeval",
                                   cluster_correction="holm")
        holm = adjust_better(cmp.better, "holm")
        assert r.metrics == cmp.metrics
        np.testing.assert_array_equal(r.statistics, cmp.statistics)
        np.testing.assert_array_equal(r.ranks, cmp.clusters)
        for b in BASELINES:
            i, j = sorted((cmp.metrics.index("words"), cmp.metrics.index(b)))
            row = res.tests[(res.tests["human"] == t.human) & (res.tests["level"] == t.level)
                            & (res.tests["baseline"] == b)]
            assert len(row) == 1
            assert row["pvalue"].iloc[0] == holm[i, j]
            assert row["ahead"].iloc[0] == cmp.metrics[i]


def test_command_and_scores_file_equal_the_function(metric_module, tmp_path):
    kw = dict(datasets=["summeval"], levels=["system"], n_resamples=10, rng=1, cache_dir=False)
    ref = bench("bench_metric_mod:words", **kw)
    script = tmp_path / "score.py"
    script.write_text("import json, sys\n"
                      "for line in sys.stdin:\n"
                      "    print(float(len(json.loads(line)['hypothesis'].split())))\n")
    got = bench(Command(f"{sys.executable} {script}", name="words"), **kw)
    pd.testing.assert_frame_equal(got.correlations, ref.correlations)
    # scores written elsewhere, one row per cell, read back
    ds = metaeval.load_dataset("summeval")
    rows = [{"dataset": "summeval", "system": r.system, "input": r.input,
             "score": float(len(r.hypothesis.split()))}
            for r in ds.texts.itertuples(index=False) if isinstance(r.hypothesis, str)]
    p = tmp_path / "words.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    got = bench(ScoresFile(str(p)), **kw)
    pd.testing.assert_frame_equal(got.correlations, ref.correlations)


def test_scores_are_cached_and_resume(metric_module, tmp_path, monkeypatch):
    kw = dict(datasets=["summeval"], levels=["system"], n_resamples=10, rng=0, cache_dir=tmp_path / "c")
    real = metric_module.words
    calls = []

    def flaky(records):  # dies on its third chunk, as an interrupted run would
        calls.append(len(records))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(records)

    monkeypatch.setattr(metric_module, "words", flaky)
    with pytest.raises(KeyboardInterrupt):
        bench("bench_metric_mod:words", **kw)
    monkeypatch.setattr(metric_module, "words", real)
    metric_module.CALLS.clear()
    first = bench("bench_metric_mod:words", **kw)
    n_records = sum(isinstance(h, str) for h in metaeval.load_dataset("summeval").texts["hypothesis"])
    assert sum(metric_module.CALLS) == n_records - 2 * 256  # the two finished chunks came from the cache
    metric_module.CALLS.clear()
    again = bench("bench_metric_mod:words", **kw)
    assert metric_module.CALLS == []  # everything cached
    pd.testing.assert_frame_equal(again.correlations, first.correlations)


def test_two_lambdas_do_not_share_cached_scores(tmp_path):
    # both are named '<lambda>': neither is cached, so the second never reads the first's scores
    kw = dict(datasets=["summeval"], levels=["system"], n_resamples=10, rng=0, cache_dir=tmp_path / "c")
    a = bench(lambda recs: [1.0 * len(r["hypothesis"]) for r in recs], name="m", **kw)
    b = bench(lambda recs: [-1.0 * len(r["hypothesis"]) for r in recs], name="m", **kw)
    np.testing.assert_allclose(b.correlations["statistic"], -a.correlations["statistic"], rtol=1e-12)


def test_registry_datasets_levels_and_aggregation(metric_module, entries, tmp_path):  # noqa: F811
    res = bench("bench_metric_mod:words", datasets=["t-point", "t-pair"], n_resamples=20, rng=0,
                cache_dir=tmp_path / "c", data_dir=tmp_path / "d", base_url=entries["base"], quiet=True)
    lv = {(r.task.data, r.task.human): r.task.level for r in res.tasks.results}
    # one system: global only; a pairwise release (2 systems per input): input only
    assert lv == {("t-point", "Overall Quality"): "global", ("t-point", "Missing Steps"): "global",
                  ("t-pair", "preference"): "input"}
    # each dataset weighs 1/2, split over its dimensions
    w = dict(zip([(r.task.data, r.task.human) for r in res.tasks.results], res.weights))
    assert w == {("t-point", "Overall Quality"): 0.25, ("t-point", "Missing Steps"): 0.25,
                 ("t-pair", "preference"): 0.5}
    # the pairwise statistic at input level with 2 systems: each input's correlation is +-1, so the
    # macro average is 2 * (share of pairs ordered as the human preference) - 1 over untied pairs
    pw = entries["pair"]["instances"]
    agree = []
    for x in pw:
        a, b = len(x["instance"]["output_a"].split()), len(x["instance"]["output_b"].split())
        if a != b:
            pref_a = x["annotations"]["quality_single_turn"]["majority_human"] == "model_a"
            agree.append((a > b) == pref_a)
    stat = res.correlations.query("dataset == 't-pair' and metric == 'words'")["statistic"].iloc[0]
    assert len(agree) >= 5  # the fixture's outputs differ in length
    assert stat == pytest.approx(2 * np.mean(agree) - 1)
    # its interval resamples the pairs (inputs), never one of the two outputs twice
    row = res.correlations.query("dataset == 't-pair' and metric == 'words'").iloc[0]
    assert row["ci_method"] == "boot-inputs" and row["n_resamples_nan"] == 0
    assert res.correlations.query("dataset == 't-point'")["ci_method"].eq("boot-both").all()


def test_anonymous_systems_give_input_and_global_levels_only(metric_module, newsroom, tmp_path):  # noqa: F811
    base, _ = newsroom
    res = bench("bench_metric_mod:words", datasets=["t-news"], n_resamples=10, rng=0, cache_dir=False,
                data_dir=tmp_path / "d", base_url=base, quiet=True)
    assert sorted({r.task.level for r in res.tasks.results}) == ["global", "input"]


def test_datasets_lacking_a_needed_text_are_skipped(metric_module, entries, tmp_path):  # noqa: F811
    res = bench("bench_metric_mod:words", datasets=["summeval", "t-point"], needs=["hypothesis", "references"],
                levels=["system"], n_resamples=10, rng=0, cache_dir=False, data_dir=tmp_path / "d",
                base_url=entries["base"], quiet=True)
    assert {r.task.data for r in res.tasks.results} == {"summeval"}
    assert res.skipped and res.skipped[0][0] == "t-point" and "references" in res.skipped[0][1]


@pytest.mark.slow
def test_jobs_do_not_change_numbers(metric_module, entries, tmp_path):  # noqa: F811
    kw = dict(datasets=["t-point", "t-pair"], n_resamples=20, rng=3, cache_dir=False, data_dir=tmp_path / "d",
              base_url=entries["base"], quiet=True)
    one = bench(words, **kw)
    two = bench(words, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(one.correlations, two.correlations)
    pd.testing.assert_frame_equal(one.ranking(), two.ranking())


def test_dask_runs_the_datasets_with_the_same_numbers(metric_module, entries, tmp_path):  # noqa: F811
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    kw = dict(datasets=["summeval", "t-point"], baselines=["ROUGE.L"], n_resamples=20, rng=5, cache_dir=False,
              data_dir=tmp_path / "d", base_url=entries["base"], quiet=True)
    ref = bench(words, **kw)
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        got = bench(words, dask=client, **kw)
    pd.testing.assert_frame_equal(got.correlations, ref.correlations)
    pd.testing.assert_frame_equal(got.tests, ref.tests)
    pd.testing.assert_frame_equal(got.ranking(), ref.ranking())


def test_lower_is_better_negates_the_scores(metric_module):
    kw = dict(datasets=["summeval"], levels=["system"], n_resamples=10, rng=0, cache_dir=False)
    up = bench("bench_metric_mod:words", **kw)
    down = bench("bench_metric_mod:words", lower_is_better=["words"], **kw)
    a, b = up.correlations["statistic"].to_numpy(), down.correlations["statistic"].to_numpy()
    np.testing.assert_allclose(b, -a, rtol=1e-12, atol=1e-15)  # Pearson of -x is minus Pearson of x
    assert "negated:words" in down.signature and "negated:none" in up.signature
    with pytest.raises(ParameterError, match=r"'BLEU'.*option --lower-is-better"):
        bench("bench_metric_mod:words", lower_is_better=["BLEU"], **kw)


def test_errors_name_the_option(metric_module):
    with pytest.raises(ParameterError, match="option --metric"):
        bench(None)
    with pytest.raises(ParameterError, match=r"cannot import 'nope'.*option --metric"):
        bench("bench_metric_mod:nope", datasets=["summeval"])
    with pytest.raises(ParameterError, match=r"unknown dataset\(s\) 'nosuch'.*option --datasets"):
        bench("bench_metric_mod:words", datasets=["nosuch"])
    with pytest.raises(ParameterError, match="option --needs"):
        bench("bench_metric_mod:words", datasets=["summeval"], needs=["image"])


def test_bad_metric_outputs_are_one_line_errors(tmp_path):
    from metaeval.errors import DataError

    kw = dict(datasets=["summeval"], levels=["system"], n_resamples=5, cache_dir=False)
    with pytest.raises(DataError, match=r"metric 'short' returned 3 scores for 256 records"):
        bench(lambda recs: [1.0, 2.0, 3.0], name="short", **kw)
    with pytest.raises(DataError, match=r"metric 'bad'.*a score is not a number"):
        bench(lambda recs: ["x"] * len(recs), name="bad", **kw)
    with pytest.raises(DataError, match=r"exited with status 3: boom"):
        bench(Command(f"{sys.executable} -c \"import sys; sys.stderr.write('boom'); sys.exit(3)\""), **kw)
    p = tmp_path / "s.csv"
    pd.DataFrame({"dataset": ["summeval"], "system": ["M99"], "input": ["x"], "score": [1.0]}).to_csv(p, index=False)
    with pytest.raises(DataError, match=r"has no system/input 'M99'.*option --scores"):
        bench(ScoresFile(str(p)), **kw)
    pd.DataFrame({"dataset": ["summeval"], "system": ["M9"], "input": ["x"], "score": ["high"]}).to_csv(p, index=False)
    with pytest.raises(DataError, match=r"scores file .*a score is not a number.*option --scores"):
        bench(ScoresFile(str(p)), **kw)
    pd.DataFrame({"dataset": ["summeval"], "system": ["M9"]}).to_csv(p, index=False)
    with pytest.raises(DataError, match=r"no column\(s\) input, score.*option --scores"):
        bench(ScoresFile(str(p)), **kw)


def test_scores_files_are_read_like_every_data_file(tmp_path):
    # the scores file was read with pandas directly: a latin-1 file, an unknown extension or a
    # cut .gz gave pandas' own errors; it now goes through the package's readers (issue 25.1:
    # readers live in data/), each failure a one-line DataError naming the file and --scores
    import gzip

    from metaeval.data import read_scores_table
    from metaeval.errors import DataError

    rows = pd.DataFrame({"dataset": ["summeval", "summeval"], "system": ["M9", "007"],
                         "input": ["a", "b"], "score": [0.5, 1.25]})
    gz = tmp_path / "s.csv.gz"
    gz.write_bytes(gzip.compress(rows.to_csv(index=False).encode()))
    got = read_scores_table(gz)
    assert list(got.system) == ["M9", "007"] and list(got.score) == [0.5, 1.25]  # labels kept as text
    tsv = tmp_path / "s.tsv"
    rows.to_csv(tsv, sep="\t", index=False)
    assert read_scores_table(tsv).equals(got)
    latin = tmp_path / "l.csv"
    latin.write_bytes("dataset,system,input,score\nsummeval,Syst\xe8me,a,1\n".encode("latin-1"))
    cut = tmp_path / "c.csv.gz"
    cut.write_bytes(gz.read_bytes()[:-9])
    odd = tmp_path / "s.scores"
    odd.write_text("x")
    for bad, why in ((latin, "UTF-8"), (cut, "truncated"), (odd, "extension")):
        with pytest.raises(DataError, match=rf"scores file .*{why}.*option --scores") as e:
            read_scores_table(bad)
        assert "\n" not in str(e.value)


def test_cli_bench_csv_and_report(metric_module, tmp_path):
    from click.testing import CliRunner

    from metaeval.cli import main

    args = ["bench", "--metric", "bench_metric_mod:words", "--baselines", "ROUGE.L", "--datasets", "summeval",
            "--level", "system", "--n-resamples", "10", "--no-cache", "--rng", "0"]
    r = CliRunner().invoke(main, [*args, "--format", "csv", "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    ref = bench("bench_metric_mod:words", baselines=["ROUGE.L"], datasets=["summeval"], levels=["system"],
                n_resamples=10, rng=0, cache_dir=False)
    assert r.stdout == ref.table(fmt="csv")
    doc = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert [s["id"] for s in doc["sections"]] == ["bench"]
    assert (tmp_path / "rep" / "report.html").is_file() and (tmp_path / "rep" / "tables" / "bench-ranking.tex").is_file()
    r = CliRunner().invoke(main, ["bench", "--datasets", "summeval"])
    assert r.exit_code == 2 and "exactly one of --metric, --command, --scores" in r.output
