"""End-to-end runs of the ``metaeval`` command on the layouts of issue 14.6.

Each test writes GENERATED data of one real layout (human ratings only;
raters rotating over cells; rater slots; raters in wide columns; texts in the
CSV; a reference system and several sub-datasets in one file) and checks the
command's numbers against an independent computation on the same frame:
scipy, ``pingouin.intraclass_corr`` (0.7.0), the ``krippendorff`` package
(0.9.0), ``sacrebleu.sentence_bleu``, or pandas arithmetic written here.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from metaeval.cli import main

pg = pytest.importorskip("pingouin")
krippendorff = pytest.importorskip("krippendorff")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def ok(result):
    assert result.exit_code == 0, result.output
    return result


def out_json(result):
    """The JSON document of a successful run (notes go to stderr, after it)."""
    ok(result)
    return json.loads(result.stdout)


def error_line(result):
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("metaeval: error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def records(doc, key, **where):
    return [r for r in doc[key] if all(r[k] == v for k, v in where.items())]


# ----------------------------------------------------------------- generated layouts


@pytest.fixture(scope="module")
def rotating_csv(tmp_path_factory):
    """Dialogue-style: 4 named raters, each cell rated by 3 of them (long form)."""
    rng = np.random.default_rng(14)
    rows = []
    for s in range(5):
        for i in range(12):
            true = rng.normal() + 0.4 * s
            for who in rng.choice(4, 3, replace=False):
                rows.append({"system": f"S{s}", "input": f"d{i}", "rater": f"ann{who}",
                             "quality": float(np.round(true + rng.normal(), 1)),
                             "bleu": true + rng.normal()})
    df = pd.DataFrame(rows)
    # the metric scores the cell, not the rater: one value per cell
    df["bleu"] = df.groupby(["system", "input"])["bleu"].transform("first")
    path = tmp_path_factory.mktemp("rot") / "rotating.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.fixture(scope="module")
def slots_csv(tmp_path_factory):
    """Story-style: rater1..rater3 columns, different people in different cells (wide raters)."""
    rng = np.random.default_rng(3)
    n_sys, n_inp = 4, 10
    df = pd.DataFrame({"system": np.repeat([f"S{s}" for s in range(n_sys)], n_inp),
                       "input": np.tile([f"p{i}" for i in range(n_inp)], n_sys)})
    true = rng.normal(size=len(df))
    for j in range(1, 4):
        df[f"rater{j}"] = np.round(true + rng.normal(size=len(df)), 2)
    df["metric_a"] = true + rng.normal(size=len(df))
    path = tmp_path_factory.mktemp("slots") / "slots.csv"
    df.to_csv(path, index=False)
    return path, df


def _icc_ref(table, form):
    """pingouin on an (n units, k raters) table; pingouin 0.7 labels ICC(1,1), ICC(1,k), ..."""
    n, k = table.shape
    long = pd.DataFrame({"u": np.repeat(np.arange(n), k), "r": np.tile(np.arange(k), n),
                         "y": table.ravel()})
    return pg.intraclass_corr(long, targets="u", raters="r", ratings="y").set_index("Type").loc[form, "ICC"]


# ----------------------------------------------------------------- 1. human ratings only


def test_validity_on_human_ratings_only_runs_mtmm_without_concurrent_validity(tmp_path):
    """Regression: a file without metric columns ran the CFA, then failed "no metric columns"."""
    rng = np.random.default_rng(0)
    rows = []
    for s in range(6):
        for i in range(8):
            t = rng.normal(size=2) + 0.3 * s
            for r in range(3):
                rows.append({"system": f"S{s}", "input": f"i{i}", "rater": f"R{r}",
                             "coherence": t[0] + rng.normal(), "fluency": t[1] + rng.normal()})
    df = pd.DataFrame(rows)
    path = tmp_path / "human_only.csv"
    df.to_csv(path, index=False)
    res = run("validity", path, "--rater-col", "rater", "--human", "coherence,fluency", "--no-cfa",
              "--format", "json")
    doc = out_json(res)
    assert doc["concurrent_validity"] == []
    assert "concurrent validity skipped" in res.stderr
    # a convergent entry: Kendall's tau-b between two raters' system means (scipy)
    means = df.pivot_table(index="system", columns="rater", values="coherence", aggfunc="mean")
    (entry,) = records(doc, "mtmm", trait_a="coherence", method_a="R0", trait_b="coherence", method_b="R1")
    assert entry["statistic"] == pytest.approx(stats.kendalltau(means["R0"], means["R1"]).statistic, abs=1e-12)
    # reliability on the same file: Krippendorff's interval alpha (the krippendorff package)
    doc = out_json(run("reliability", path, "--rater-col", "rater", "--human", "coherence,fluency",
                       "--agreement", "krippendorff_interval", "--format", "json"))
    wide = df.pivot_table(index=["system", "input"], columns="rater", values="coherence")
    want = krippendorff.alpha(reliability_data=wide.to_numpy().T, level_of_measurement="interval")
    (got,) = records(doc, "agreement", column="coherence")
    assert got["statistic"] == pytest.approx(want, rel=1e-9)


def test_validity_criterion_factors_without_metrics_fails_fast(tmp_path):
    df = pd.DataFrame({"system": np.repeat(["A", "B"], 4), "input": np.tile(["x", "y"], 4),
                       "rater": np.tile(["r1", "r1", "r2", "r2"], 2), "q": np.arange(8.0)})
    df.to_csv(tmp_path / "h.csv", index=False)
    line = error_line(run("validity", tmp_path / "h.csv", "--rater-col", "rater", "--human", "q",
                          "--criterion", "factors"))
    assert "no metric column" in line and "--metrics" in line


# ----------------------------------------------------------------- 2. rotating raters


def test_reliability_rotating_raters_gives_icc1_as_pingouin(rotating_csv):
    """Regression: raters rotating over cells (3 of 4) gave NaN for every ICC."""
    path, df = rotating_csv
    res = run("reliability", path, "--rater-col", "rater", "--human", "quality", "--metrics", "bleu",
              "--ci", "none", "--format", "json")
    doc = out_json(res)
    got = {r["method"]: r for r in doc["agreement"]}
    assert not {"icc2", "icc3", "icc2k", "icc3k"} & set(got)
    assert "raters rotate over cells" in res.stderr and "same raters in every cell" in res.stderr
    # each cell's own three ratings, in rater order, as pingouin's units x slots table
    table = np.array([g.sort_values("rater")["quality"].to_numpy()
                      for _, g in df.groupby(["system", "input"], sort=False)])
    assert got["icc1"]["statistic"] == pytest.approx(_icc_ref(table, "ICC(1,1)"), rel=1e-10)
    assert got["icc1k"]["statistic"] == pytest.approx(_icc_ref(table, "ICC(1,k)"), rel=1e-10)
    wide = df.pivot_table(index=["system", "input"], columns="rater", values="quality")
    want = krippendorff.alpha(reliability_data=wide.to_numpy().T, level_of_measurement="ordinal")
    assert got["krippendorff_ordinal"]["statistic"] == pytest.approx(want, rel=1e-9)


# ----------------------------------------------------------------- 3. rater slots, raters in columns


def test_reliability_rater_slots_from_wide_columns(slots_csv):
    path, df = slots_csv
    res = run("reliability", path, "--rater-cols", "quality=rater1,rater2,rater3", "--rater-slots",
              "--metrics", "metric_a", "--ci", "none", "--format", "json")
    doc = out_json(res)
    got = {r["method"]: r for r in doc["agreement"]}
    assert set(got) == {"krippendorff_interval", "krippendorff_ordinal", "icc1", "icc1k"}
    assert "--rater-slots" in res.stderr
    table = df[["rater1", "rater2", "rater3"]].to_numpy()
    assert got["icc1"]["statistic"] == pytest.approx(_icc_ref(table, "ICC(1,1)"), rel=1e-10)
    assert got["icc1k"]["statistic"] == pytest.approx(_icc_ref(table, "ICC(1,k)"), rel=1e-10)
    # metric_a is still a metric (Cronbach's alpha computed for it), not a rater
    assert [r["column"] for r in doc["consistency"]] == ["metric_a"]


def test_validity_refuses_rater_slots(slots_csv):
    path, _ = slots_csv
    line = error_line(run("validity", path, "--rater-cols", "quality=rater1,rater2,rater3", "--rater-slots"))
    assert "--rater-slots" in line and "reliability --rater-slots" in line


def test_binary_raters_in_columns_by_pattern_with_a_chosen_coefficient(tmp_path):
    """Stories with 7 binary raters in columns rater0..rater6: nominal alpha (krippendorff package)."""
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"system": np.repeat(["A", "B", "C"], 15), "input": np.tile([f"s{i}" for i in range(15)], 3)})
    p = rng.uniform(0.2, 0.8, len(df))
    for j in range(7):
        df[f"rater{j}"] = (rng.uniform(size=len(df)) < p).astype(float)
    df.loc[3, "rater2"] = np.nan  # a missing rating
    df.to_csv(tmp_path / "binary.csv", index=False)
    doc = out_json(run("reliability", tmp_path / "binary.csv", "--rater-cols", "interesting=rater*",
                       "--metrics", "", "--agreement", "krippendorff_nominal,icc1", "--format", "json"))
    got = {r["method"]: r for r in doc["agreement"]}
    assert list(got) == ["krippendorff_nominal", "icc1"]
    cols = [f"rater{j}" for j in range(7)]
    want = krippendorff.alpha(reliability_data=df[cols].to_numpy().T, level_of_measurement="nominal")
    assert got["krippendorff_nominal"]["statistic"] == pytest.approx(want, rel=1e-9)
    assert got["krippendorff_nominal"]["n_raters"] == 7
    complete = df[cols].dropna().to_numpy()
    assert got["icc1"]["statistic"] == pytest.approx(_icc_ref(complete, "ICC(1,1)"), rel=1e-10)


def test_agreement_option_rejects_unknown_coefficients_and_lists_the_registry(rotating_csv):
    path, _ = rotating_csv
    line = error_line(run("reliability", path, "--rater-col", "rater", "--human", "quality",
                          "--agreement", "fleiss_kappa"))
    assert "--agreement" in line and "'fleiss_kappa'" in line and "krippendorff_nominal" in line
    from metaeval.reliability import AGREEMENT_METHODS

    help_text = " ".join(ok(run("reliability", "--help")).output.split())
    assert all(name in help_text for name in AGREEMENT_METHODS)


def test_rater_cols_errors_name_the_option(slots_csv):
    path, _ = slots_csv
    line = error_line(run("reliability", path, "--rater-cols", "quality=rater1"))
    assert "--raters" in line
    line = error_line(run("reliability", path, "--rater-cols", "quality=rater1,rater9"))
    assert "--raters" in line and "'rater9'" in line
    line = error_line(run("reliability", path, "--rater-cols", "quality=judge*"))
    assert "--raters" in line and "'judge*'" in line and "matches 0 column" in line


# ----------------------------------------------------------------- 4. texts in the CSV


def test_score_takes_texts_from_columns(tmp_path):
    sacrebleu = pytest.importorskip("sacrebleu")
    df = pd.DataFrame({"system": ["A", "A", "B", "B"], "input": ["x", "y", "x", "y"],
                       "output": ["the cat sat on the mat", "a dog runs", "cat on mat", "the dog runs fast"],
                       "ref": ["the cat sat on the mat", "the dog runs", "the cat sat on the mat", "the dog runs"],
                       "src": ["s1", "s2", "s1", "s2"], "human": [4.0, 3.0, 2.0, 3.5]})
    df.to_csv(tmp_path / "texts.csv", index=False)
    res = ok(run("score", tmp_path / "texts.csv", "--metrics", "bleu", "--human", "human",
                 "--text-cols", "hypothesis=output,reference=ref,source=src", "--format", "csv"))
    got = pd.read_csv(pd.io.common.StringIO(res.stdout))
    for row in df.itertuples():
        (score,) = got[(got.system == row.system) & (got.input == row.input)].score
        assert score == pytest.approx(sacrebleu.sentence_bleu(row.output, [row.ref]).score, rel=1e-12)
    line = error_line(run("score", tmp_path / "texts.csv", "--metrics", "bleu", "--human", "human",
                          "--text-cols", "hypothesis=outptu,reference=ref"))
    assert "--text-cols" in line and "'outptu'" in line
    line = error_line(run("score", tmp_path / "texts.csv", "--metrics", "bleu", "--human", "human",
                          "--text-cols", "hyp=output"))
    assert "--text-cols" in line and "hypothesis, reference, source" in line


# ----------------------------------------------------------------- 5. systems and row filters


@pytest.fixture(scope="module")
def d2t_csv(tmp_path_factory):
    """Data-to-text: three sub-datasets in one file and a human reference system."""
    rng = np.random.default_rng(21)
    rows = []
    for ds in ["SFHOT", "SFRES", "BAGEL"]:
        for s in ["A", "B", "C", "D", "Human"]:
            for i in range(10):
                q = rng.normal() + (2.0 if s == "Human" else 0.0)
                rows.append({"dataset": ds, "system": s, "input": f"{ds}-{i}", "informativeness": q + rng.normal(),
                             "naturalness": q + rng.normal(), "bleu": q + rng.normal(), "ter": rng.normal()})
    df = pd.DataFrame(rows)
    path = tmp_path_factory.mktemp("d2t") / "d2t.csv"
    df.to_csv(path, index=False)
    return path, df


def test_correlate_excludes_systems_and_filters_rows(d2t_csv):
    path, df = d2t_csv
    doc = out_json(run("correlate", path, "--human", "informativeness", "--metrics", "bleu",
                       "--exclude-systems", "Human", "--where", "dataset=SFHOT,SFRES", "--ci", "none",
                       "--format", "json"))
    sub = df[(df.system != "Human") & df.dataset.isin(["SFHOT", "SFRES"])]
    means = sub.groupby("system")[["informativeness", "bleu"]].mean()
    (got,) = doc if isinstance(doc, list) else doc["results"]
    assert got["statistic"] == pytest.approx(stats.pearsonr(means.informativeness, means.bleu).statistic, rel=1e-12)
    assert got["n"] == 4


def test_systems_option_and_filter_errors(d2t_csv):
    path, df = d2t_csv
    doc = out_json(run("correlate", path, "--human", "naturalness", "--metrics", "bleu", "--systems", "A,B,C",
                       "--level", "global", "--method", "spearman", "--ci", "none", "--format", "json"))
    (got,) = doc if isinstance(doc, list) else doc["results"]
    sub = df[df.system.isin(["A", "B", "C"])]
    assert got["statistic"] == pytest.approx(stats.spearmanr(sub.naturalness, sub.bleu).statistic, rel=1e-12)
    line = error_line(run("correlate", path, "--human", "naturalness", "--exclude-systems", "human"))
    assert "--exclude-systems" in line and "'human'" in line and "'Human'" in line
    line = error_line(run("correlate", path, "--human", "naturalness", "--where", "dataset == 'SFHOT'"))
    assert "--where" in line and "COLUMN=VALUE" in line
    line = error_line(run("correlate", path, "--human", "naturalness", "--where", "datset=SFHOT"))
    assert "--where" in line and "'datset'" in line
    line = error_line(run("correlate", "summeval", "--human", "coherence", "--where", "x=1"))
    assert "--where" in line and "bundled dataset" in line


# ----------------------------------------------------------------- 6. diagnose with several human columns


def test_diagnose_accepts_several_human_columns(d2t_csv):
    """Regression (issue 14.9): `--human COL,COL` (as the README shows) was read as one column name."""
    path, df = d2t_csv
    doc = out_json(run("diagnose", path, "--human", "informativeness,naturalness", "--metrics", "bleu",
                       "--low", "0", "--high", "1", "--sizes", "10", "--n-resamples", "5", "--seed", "0",
                       "--format", "json"))
    for human in ("informativeness", "naturalness"):
        (got,) = records(doc, "ks", human=human, metric="bleu")
        low = df.loc[df[human] < 0, "bleu"]
        high = df.loc[df[human] >= 1, "bleu"]
        assert got["statistic"] == pytest.approx(stats.ks_2samp(low, high).statistic, abs=1e-12)


def test_validity_refuses_rotating_raters_before_the_cfa(rotating_csv):
    """Regression: rotating raters reached the CFA, which failed on 0 complete cells."""
    path, _ = rotating_csv
    line = error_line(run("validity", path, "--rater-col", "rater", "--human", "quality"))
    assert "rotate over cells" in line and "same raters in every cell" in line and "reliability" in line


# ----------------------------------------------------------------- 7. --rater-col / --run-col where they apply


def test_correlate_takes_a_run_column(tmp_path):
    """An LLM judge scored 3 times per cell: --run-col averages the runs (pandas mean, then scipy)."""
    rng = np.random.default_rng(2)
    rows = []
    for s in range(6):
        for i in range(8):
            h = rng.normal() + 0.2 * s
            rows += [{"system": f"S{s}", "input": f"i{i}", "run": f"seed{r}", "human": h, "judge": h + rng.normal()}
                     for r in range(3)]
    df = pd.DataFrame(rows)
    df.to_csv(tmp_path / "runs.csv", index=False)
    doc = out_json(run("correlate", tmp_path / "runs.csv", "--human", "human", "--run-col", "run",
                       "--level", "global", "--ci", "none", "--format", "json"))
    (got,) = doc
    cells = df.groupby(["system", "input"])[["human", "judge"]].mean()
    assert got["statistic"] == pytest.approx(stats.pearsonr(cells.human, cells.judge).statistic, rel=1e-12)
    for command in ("correlate", "compare", "measures", "diagnose", "reliability", "report"):
        assert "--run TEXT" in ok(run(command, "--help")).output, command
    for command in ("correlate", "compare", "measures", "diagnose", "reliability", "validity", "score",
                    "perturb", "local", "judge", "report"):
        assert "--rater TEXT" in ok(run(command, "--help")).output, command


def test_perturb_takes_texts_from_columns_of_the_filtered_rows(d2t_csv, tmp_path):
    path, df = d2t_csv
    df = df.assign(output=[f"the system output number {k} is here" for k in range(len(df))],
                   ref=[f"the reference text number {k} is here" for k in range(len(df))])
    df.to_csv(tmp_path / "d2t_texts.csv", index=False)
    doc = out_json(run("perturb", tmp_path / "d2t_texts.csv", "--human", "informativeness", "--perturbation",
                       "truncation", "--metrics", "bleu", "--text-cols", "hypothesis=output,reference=ref",
                       "--where", "dataset=BAGEL", "--exclude-systems", "Human", "--seed", "0", "--format", "json"))
    (got,) = doc if isinstance(doc, list) else doc["detection"]
    kept = df[(df.dataset == "BAGEL") & (df.system != "Human")]
    assert got["n"] + got["n_missing"] + got["n_excluded"] == len(kept) == 40


def test_score_takes_several_reference_columns(tmp_path):
    sacrebleu = pytest.importorskip("sacrebleu")
    df = pd.DataFrame({"system": ["A", "A", "B"], "input": ["x", "y", "x"],
                       "output": ["the cat sat on the mat", "a dog runs", "cat on mat"],
                       "ref1": ["the cat sat on the mat", "the dog runs", "the cat sat on the mat"],
                       "ref2": ["a cat was on the mat", None, "a cat was on the mat"],
                       "human": [4.0, 3.0, 2.0]})
    df.to_csv(tmp_path / "refs.csv", index=False)
    res = ok(run("score", tmp_path / "refs.csv", "--metrics", "bleu", "--human", "human", "--multi-ref", "native",
                 "--text-cols", "hypothesis=output,reference=ref1,reference=ref2", "--format", "csv"))
    got = pd.read_csv(pd.io.common.StringIO(res.stdout))
    for row in df.itertuples():
        refs = [r for r in (row.ref1, row.ref2) if isinstance(r, str)]  # a missing reference is left out
        (score,) = got[(got.system == row.system) & (got.input == row.input)].score
        assert score == pytest.approx(sacrebleu.sentence_bleu(row.output, refs).score, rel=1e-12)


def test_numeric_where_column_is_not_taken_for_a_metric(tmp_path):
    """A filter column (`year`) is numeric, but it selects rows; it must not become a metric."""
    df = pd.DataFrame({"system": list("ABCABC"), "input": list("xxxyyy"), "year": [2020] * 3 + [2021] * 3,
                       "human": [1.0, 2.0, 3.0, 2.0, 1.0, 3.0], "bleu": [0.1, 0.3, 0.2, 0.2, 0.1, 0.4]})
    df.to_csv(tmp_path / "years.csv", index=False)
    doc = out_json(run("correlate", tmp_path / "years.csv", "--human", "human", "--where", "year=2020",
                       "--level", "global", "--ci", "none", "--format", "json"))
    assert [r["metric"] for r in doc] == ["bleu"]
    sub = df[df.year == 2020]
    assert doc[0]["statistic"] == pytest.approx(stats.pearsonr(sub.human, sub.bleu).statistic, rel=1e-12)
