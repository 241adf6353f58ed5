"""`metaeval report`: structure of the report, and its numbers against results.json and the library.

Two reports are rendered: the bundled SummEval data in quick mode on a metric subset (through
the CLI), and a small generated dataset with raters, runs, texts and a context (through the
Python API, every section applies).  For both: the sections are present (or skipped with the
expected reason), every table is non-empty and exported as CSV and LaTeX, every figure exists
as PNG and SVG, and every cell of every HTML table carries the exact value of results.json and
shows it formatted by the report's one formatter.  Selected tables are checked against the
library functions called directly with the same options.
"""

import atexit
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from html import escape
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval.cli import main
from metaeval.report import ReportConfig, build, pairwise_subset, write
from metaeval.stats.coefficients import DEFAULT_METHOD
from metaeval.report._model import fmt
from metaeval.report._readings import RULES

SUBSET = ["G.EVAL.4.COH", "G.EVAL.3.5.COH", "ROUGE.1", "BLEU", "BertScore_f1", "SummaQA"]
SECTIONS = ["recommendation", "data", "correlations", "clusters", "measures", "reliability", "validity",
            "diagnostics", "text", "local", "preferences"]


class _Tables(HTMLParser):
    """Every <table data-table=ID>: its header (key, kind) and its cells (data-v, text)."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self.links, self.sections = {}, [], [], []
        self.figure_src = {}
        self._t = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "data-table" in a:
            self._t = self.tables.setdefault(a["data-table"], {"head": [], "rows": []})
        elif tag == "th" and self._t is not None:
            self._t["head"].append((a["data-key"], a["data-kind"]))
        elif tag == "tr" and self._t is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = [a["data-v"], ""]
        elif tag == "img":
            self.images.append(a["src"])
            self.figure_src[a.get("data-figure")] = a["src"]
        elif tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag == "section" and "data-section" in a:
            self.sections.append((a["data-section"], a.get("data-status")))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self._t["rows"].append(self._row)
            self._row = None
        elif tag == "table":
            self._t = None


def _parse(out):
    p = _Tables()
    p.feed((out / "report.html").read_text(encoding="utf8"))
    return p


def check_structure(out, doc):
    """The checks shared by both reports; returns the parsed HTML."""
    assert json.loads((out / "results.json").read_text()) == doc
    html = _parse(out)
    json_tables = {t["id"]: t for s in doc["sections"] for t in s["tables"]}
    assert set(html.tables) == set(json_tables)
    for tid, t in json_tables.items():
        assert t["rows"], f"table {tid} is empty"
        assert t["title"]
        h = html.tables[tid]
        assert h["head"] == [(c["key"], c["kind"]) for c in t["columns"]], tid
        assert len(h["rows"]) == len(t["rows"]), tid
        for jrow, hrow in zip(t["rows"], h["rows"]):
            assert len(hrow) == len(jrow)
            for v, (dv, text), c in zip(jrow, hrow, t["columns"]):
                assert json.loads(dv) == v, (tid, c["key"])            # the exact number of results.json
                assert text == fmt(v, c["kind"]), (tid, c["key"], text)  # shown by the one formatter
        csv = pd.read_csv(out / t["files"]["csv"], keep_default_na=False, na_values=[""])
        assert len(csv) == len(t["rows"])
        tex = (out / t["files"]["latex"]).read_text()
        assert ("tabular" in tex or "longtable" in tex) and f"tab:{t['anchor']}" in tex
        for c in t["columns"]:
            if c["kind"] == "num":  # CSV keeps the raw values
                vals = [r[t["columns"].index(c)] for r in t["rows"]]
                got = csv[c["key"]].to_numpy(float)
                want = np.array([np.nan if v is None else float(v) for v in vals])
                np.testing.assert_array_equal(got, want)
    figures = [f for s in doc["sections"] for f in s["figures"]]
    assert figures
    for f in figures:
        for kind in ("png", "svg"):
            path = out / f["files"][kind]
            assert path.stat().st_size > 1000, path
        assert (out / f["files"]["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f["files"]["svg"]).read_text()[:200].lstrip().startswith(("<?xml", "<svg"))
        assert f["files"]["png"] not in html.images  # embedded, not referenced
    embedded = [src for src in html.images if src.startswith("data:image/png;base64,")]
    assert len(embedded) == len(html.images) == len(figures)
    import base64

    for f in figures:  # the embedded image is the PNG written beside the report
        src = html.figure_src[f["id"]]
        assert base64.b64decode(src.split(",", 1)[1]) == (out / f["files"]["png"]).read_bytes()
    for link in html.links:  # every relative link resolves (files) or is an anchor on the page
        if link.startswith("#"):
            continue
        assert (out / link).exists(), link
    anchors = set(json_tables) | {f["id"] for f in figures}
    for s in doc["sections"]:
        for r in s["readings"]:
            assert r["rule"] in RULES and r["text"]
            assert all(e in anchors for e in r["evidence"]), r
    assert [k for k, _ in html.sections][: len(doc["sections"])] == [s["id"] for s in doc["sections"]]
    assert {m["function"] for m in doc["methods"]} == {fn for s in doc["sections"] for fn in s["functions"]}
    assert all(m["summary"] and m["summary"] != "(no docstring)" for m in doc["methods"])
    return html


def _table(doc, tid):
    for s in doc["sections"]:
        for t in s["tables"]:
            if t["id"] == tid:
                return t
    raise KeyError(tid)


def _section(doc, sid):
    return next(s for s in doc["sections"] if s["id"] == sid)


# ----------------------------------------------------------------------------- bundled data


_CLI_OUTPUT = {}


@pytest.fixture(scope="module")
def summeval_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("summeval-report")
    res = CliRunner().invoke(main, ["report", "--quick", "--metrics", ",".join(SUBSET), "--seed", "0",
                                    "--n-resamples", "50", "--splits", "30", "--pairwise-metrics", "4",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    _CLI_OUTPUT["summeval"] = res.output
    return out, json.loads((out / "results.json").read_text())


def test_bundled_report_structure(summeval_report):
    out, doc = summeval_report
    check_structure(out, doc)
    assert [s["id"] for s in doc["sections"]] == SECTIONS
    status = {s["id"]: s["status"] for s in doc["sections"]}
    assert status["text"] == "skipped" and status["local"] == "skipped"
    assert all(status[k] == "done" for k in SECTIONS if k not in ("text", "local"))
    reasons = " ".join(k["reason"] for k in doc["skipped"])
    assert "--quick: text diagnostics" in reasons and "no context column named (--context)" in reasons
    assert doc["seed"] == 0 and doc["mode"] == "quick"
    assert doc["config"]["human"] == ["coherence"] and doc["config"]["metrics"] == SUBSET
    assert doc["config"]["n_resamples"] == 50 and doc["config"]["splits"] == 30
    assert doc["config"]["pairwise"] == 4 and doc["config"]["sample_resamples"] == 20  # --quick's default
    # every table caption carries signatures, and they are the report's list
    sigs = {sig for s in doc["sections"] for t in s["tables"] for sig in t["signatures"]}
    assert sigs == set(doc["signatures"]) and all(sig.endswith(f"metaeval:{metaeval.__version__}") for sig in sigs)


@pytest.mark.filterwarnings("ignore::metaeval.InsufficientResamplesWarning")
def test_bundled_numbers_equal_library(summeval_report):
    out, doc = summeval_report
    ds = metaeval.load_dataset("summeval")
    levels = ["system", "input", "item", "global"]
    res = metaeval.correlate(ds, "coherence", metrics=SUBSET, level=levels, method=DEFAULT_METHOD,
                             ci="boot-both", n_resamples=50, rng=0)
    t = _table(doc, "corr-coherence")
    keys = [c["key"] for c in t["columns"]]
    for row in t["rows"]:
        for lv in levels:
            r = res.get(row[0], level=lv)
            assert row[keys.index(lv)] == r.statistic
            assert row[keys.index(f"{lv}_ci")] == [r.ci_low, r.ci_high]
    subset = pairwise_subset(res.to_frame(), levels, 4)
    c = metaeval.compare_all(ds, "coherence", metrics=subset, level="input", method=DEFAULT_METHOD,
                             n_resamples=50, rng=0, cluster_correction="holm")
    t = _table(doc, "clusters-coherence")
    got = {r[0]: r[[c_["key"] for c_ in t["columns"]].index("input_cluster")] for r in t["rows"]}
    assert got == dict(zip(c.metrics, c.clusters.tolist()))
    assert sorted(got) == sorted(subset)
    dp = metaeval.discriminative_power(ds, "coherence", metrics=subset, n_resamples=50, rng=0)
    t = _table(doc, "measures-coherence")
    assert [r[2] for r in t["rows"]] == dp.dp.tolist()
    html = (out / "report.html").read_text()
    assert c.signature in html and dp.signature in html


def test_bundled_readings_follow_the_numbers(summeval_report):
    _, doc = summeval_report
    corr = _table(doc, "corr-coherence")
    keys = [c["key"] for c in corr["columns"]]
    readings = [r["text"] for r in _section(doc, "correlations")["readings"] if r["rule"] == "corr-top"]
    for lv in ("system", "input", "item", "global"):
        best = max(corr["rows"], key=lambda r: r[keys.index(lv)])
        text = next(t for t in readings if t.startswith(f"coherence, {lv} level"))
        assert f"is {best[0]} ({fmt(best[keys.index(lv)])}" in text
    clusters = _table(doc, "clusters-coherence")
    ck = [c["key"] for c in clusters["columns"]]
    top = {lv: [r[0] for r in clusters["rows"] if r[ck.index(f"{lv}_cluster")] == 1]
           for lv in ("system", "input", "item", "global")}
    trust = _table(doc, "rec-trust")
    for row in trust["rows"]:
        # 4 metrics, 6 pairs, 50 resamples: Holm cannot reach .05 (6/51 > .05), so no level is concluded
        assert row[2].startswith("no conclusion: too few resamples (50)"), row
    rec = " ".join(r["text"] for r in _section(doc, "recommendation")["readings"])
    assert "no metric can be recommended from this run" in rec and "1/(50+1)" in rec
    assert "Trusted at every level" not in rec


def test_report_html_is_self_contained(summeval_report):
    out, _ = summeval_report
    html = (out / "report.html").read_text()
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert "<style>" in html


# ----------------------------------------------------------------------------- generated data


def tiny_dataset(seed=1):
    """8 systems x 24 inputs; two traits rated 1-5 by 3 raters; 4 metrics (one with 2 runs); texts."""
    rng = np.random.default_rng(seed)
    N, M = 8, 24
    q = np.linspace(-1, 1, N)[:, None] + 0.6 * rng.standard_normal((N, M))
    f = 0.5 * q + 0.8 * rng.standard_normal((N, M))

    def rate(x):
        return np.clip(np.rint(3 + 1.2 * x[None] + 0.5 * rng.standard_normal((3, N, M))), 1, 5)

    scores = {
        "quality": rate(q), "fluency": rate(f),
        "good": q + 0.3 * rng.standard_normal((N, M)),
        "fair": q + 1.0 * rng.standard_normal((N, M)),
        "poor": rng.standard_normal((N, M)),
        "judge": np.stack([q + 0.5 * rng.standard_normal((N, M)) for _ in range(2)]),
    }
    systems = [f"sys{i}" for i in range(N)]
    inputs = [f"doc{j}" for j in range(M)]
    words = ["the", "cat", "dog", "bird", "sat", "ran", "here", "there", "today", "late"]
    rows = []
    for i, s in enumerate(systems):
        for j, d in enumerate(inputs):
            w = rng.choice(words, 6)
            rows.append({"system": s, "input": d,
                         "hypothesis": f"The {w[0]} is {w[1]} . It was {w[2]} {w[3]} .",
                         "references": (f"The {w[0]} is {w[4]} . It was {w[2]} {w[5]} .",)})
    return metaeval.Dataset.from_arrays(scores, human=["quality", "fluency"], systems=systems, inputs=inputs,
                                        texts=pd.DataFrame(rows), name="tiny")


TINY = dict(quick=True, seed=3, context="system", human=("quality",), pairwise="all", ks_low=3, ks_high=4,
            n_resamples=50, splits=30)


@functools.lru_cache(maxsize=None)
def rendered_tiny():
    """The generated dataset's report, rendered once per test session (also used by
    test_report_browser.py); every section applies."""
    out = pathlib.Path(tempfile.mkdtemp(prefix="metaeval-report-test-"))
    atexit.register(shutil.rmtree, out, True)
    ds = tiny_dataset()
    rep = build(ds, ReportConfig(text=True, text_metrics=("bleu",), **TINY))
    doc = write(rep, str(out))
    return out, doc, ds


@pytest.fixture(scope="module")
def tiny_report():
    pytest.importorskip("sacrebleu")
    return rendered_tiny()


def test_generated_report_every_section(tiny_report):
    out, doc, ds = tiny_report
    check_structure(out, doc)
    status = {s["id"]: s["status"] for s in doc["sections"]}
    assert list(status) == SECTIONS
    assert all(v == "done" for v in status.values()), (status, doc["skipped"])
    assert doc["skipped"] == []
    assert {f["id"] for s in doc["sections"] for f in s["figures"]} >= {
        "fig-corr-quality", "fig-clusters-quality", "fig-pvalues-quality", "fig-measures-quality",
        "fig-reliability", "fig-alpha-curve", "fig-mtmm", "fig-ks", "fig-meta", "fig-design", "fig-detection",
        "fig-local-accuracy", "fig-local-tau"}
    # the run axis of 'judge' gives its stability
    stab = _table(doc, "rel-stability")
    assert [r[0] for r in stab["rows"]] == ["judge"]
    assert stab["rows"][0][2] == metaeval.stability(ds, ["judge"])[0].statistic


def test_generated_numbers_equal_library(tiny_report):
    out, doc, ds = tiny_report
    ag = metaeval.agreement(ds, ["quality", "fluency"],
                            method=("krippendorff_interval", "krippendorff_ordinal", "icc2", "icc2k"))
    t = _table(doc, "rel-agreement")
    assert [r[2] for r in t["rows"]] == ag.to_frame().statistic.tolist()
    # the p-value column (report QA: the table lacked it): the F test of ICC > 0, recomputed with scipy
    # from the F statistic and degrees of freedom (McGraw & Wong 1996); Krippendorff's alpha has none
    from scipy.stats import f as f_dist

    for row, r in zip(t["rows"], ag):
        if r.method.startswith("icc"):
            assert row[4] == pytest.approx(f_dist.sf(r.f_statistic, r.df1, r.df2), rel=1e-9)
        else:
            assert row[4] is None or row[4] != row[4]
    fa = metaeval.cfa(ds)
    t = _table(doc, "val-cfa-corr")
    assert [r[1:] for r in t["rows"]] == fa.correlation_matrix().values.tolist()
    rc = metaeval.ranking_consistency(ds, "quality", metrics=list(ds.metrics), n_splits=30, rng=3)
    t = _table(doc, "measures-quality")
    assert [r[4] for r in t["rows"]] == rc.rc.tolist()
    from metaeval import local as lc

    pairs = lc.local_pairs(ds, context="system", human="quality", metrics=list(ds.metrics))
    acc = lc.local_accuracy(pairs)
    t = _table(doc, "local-accuracy")
    overall = acc.overall_frame().set_index("metric").statistic
    assert {r[0]: r[1] for r in t["rows"]} == overall.to_dict()


def test_same_seed_same_numbers(tiny_report):
    out, doc, ds = tiny_report
    rep = build(ds, ReportConfig(text=False, **TINY))  # the same analyses again (no text rescoring): identical tables
    tables = {t["id"]: t["rows"] for s in doc["sections"] if s["id"] != "text" for t in s["tables"]}
    tables2 = {t.id: json.loads(json.dumps(t.rows)) for s in rep.sections if s.id != "text" for t in s.tables}
    assert tables == tables2
    assert rep.section("text").status == "skipped"


# ----------------------------------------------------------------------------- modes, skips and errors


def test_modes():
    full, quick = ReportConfig(), ReportConfig(quick=True)
    assert (full.value("n_resamples"), full.value("splits"), full.value("pairwise")) == (1000, 1000, 10)
    assert (quick.value("n_resamples"), quick.value("splits"), quick.value("pairwise")) == (100, 100, 5)
    assert full.value("text") and not quick.value("text")
    assert ReportConfig(quick=True, n_resamples=7).value("n_resamples") == 7
    d = quick.to_dict()
    assert d["mode"] == "quick" and d["n_resamples"] == 100 and d["tau_resamples"] == 99


def test_pairwise_subset_round_robin():
    f = pd.DataFrame({"metric": list("abcd") * 2, "level": ["system"] * 4 + ["input"] * 4,
                      "statistic": [0.9, 0.8, 0.1, np.nan, 0.1, 0.2, 0.7, 0.6]})
    # 1st at system (a), 1st at input (c), 2nd at system (b), 2nd at input (d)
    assert pairwise_subset(f, ["system", "input"], 3) == ["a", "c", "b"]
    assert pairwise_subset(f, ["system", "input"], 10) == ["a", "c", "b", "d"]


def test_skips_say_why(tmp_path):
    rng = np.random.default_rng(0)
    ds = metaeval.Dataset.from_arrays(
        {"h": rng.integers(1, 6, (5, 30)).astype(float), "a": rng.standard_normal((5, 30)),
         "b": rng.standard_normal((5, 30)), "c": rng.standard_normal((5, 30))}, human=["h"])
    doc = write(build(ds, ReportConfig(quick=True, seed=0, n_resamples=30, splits=20)), str(tmp_path))
    reasons = {k["section"]: k["reason"] for k in doc["skipped"]}
    assert "one rater per item" in " ".join(k["reason"] for k in doc["skipped"] if k["section"] == "reliability")
    assert "no metric has repeated runs" in " ".join(k["reason"] for k in doc["skipped"])
    assert "at least 2 human columns" in reasons["validity"]
    assert "no texts" in reasons["text"]
    assert "no context column named" in reasons["local"]
    assert "KS score skipped" in reasons["diagnostics"]
    assert "no human column of the report has 2+ individual raters" in reasons["preferences"]
    html = (tmp_path / "report.html").read_text()
    for r in reasons.values():
        assert escape(r) in html


@pytest.mark.parametrize("args, message", [
    (["--human", "nope"], "unknown human column(s): nope"),
    (["--human", "coherence", "--metrics", "BLEU,nope"], "unknown metric column(s): nope"),
    (["--human", "ROUGE.1"], "ROUGE.1 is a metric column"),
    (["--levels", "sys"], "--level 'sys' is ambiguous"),
    (["--pairwise-metrics", "1"], "at least 2 metrics"),
    (["--context", "speaker", "--metrics", "BLEU,ROUGE.1"], "'speaker' is not a context"),
])
def test_bad_input_clear_error(args, message, tmp_path):
    res = CliRunner().invoke(main, ["report", "--quick", "--out", str(tmp_path), *args])
    assert res.exit_code == 2
    assert message in res.output


def test_file_needs_human(tmp_path):
    p = tmp_path / "d.csv"
    pd.DataFrame({"system": ["a", "b"], "input": ["x", "x"], "h": [1, 2], "m": [0.1, 0.2]}).to_csv(p, index=False)
    res = CliRunner().invoke(main, ["report", str(p), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "needs --human" in res.output


def test_import_stays_light():
    code = ("import sys, metaeval, metaeval.report; "
            "print(sorted(m for m in ('jinja2', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_template_is_package_data():
    import metaeval.report as rp

    assert os.path.exists(os.path.join(os.path.dirname(rp.__file__), "templates", "report.html.j2"))
    import tomllib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        cfg = tomllib.load(f)
    assert "report/templates/*" in cfg["tool"]["setuptools"]["package-data"]["metaeval"]
    deps = " ".join(cfg["project"]["dependencies"])
    assert "jinja2" in deps and "matplotlib" in deps


# ----------------------------------------------------------------------------- files (issue 18.6)

LONG = "m/" + "x" * 260  # a metric name with a slash, longer than a file name may be


def small_dataset(human="h", metrics=("a", "b", "c"), seed=0, n_systems=5):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_systems, 30))
    scores = {human: np.clip(np.rint(3 + q), 1, 5)}
    for k, m in enumerate(metrics):
        scores[m] = q + (0.5 + k) * rng.standard_normal((n_systems, 30))
    return metaeval.Dataset.from_arrays(scores, human=[human])


SMALL = dict(quick=True, seed=0, n_resamples=30, splits=20, levels=("system", "global"))


def test_report_with_slash_and_long_column_names_writes_everything(tmp_path):
    human = "quality/overall (1-5)"
    ds = small_dataset(human=human, metrics=("a", LONG, "Ünïcode metric"))
    out = tmp_path / "out"
    doc = write(build(ds, ReportConfig(**SMALL)), str(out))
    files = [p for p in out.rglob("*") if p.is_file()]
    assert all(len(p.name) <= 80 and p.resolve().is_relative_to(out.resolve()) for p in files)
    assert all(p.name.isascii() for p in files)
    t = _table(doc, f"corr-{human}")  # tables and JSON keep the real names
    assert {r[0] for r in t["rows"]} == {"a", LONG, "Ünïcode metric"}
    assert (out / t["files"]["csv"]).exists() and "/" not in t["files"]["csv"].split("/", 1)[1]
    stems = {pathlib.Path(f["files"]["png"]).stem for s in doc["sections"] for f in s["figures"]}
    assert len(stems) == len([f for s in doc["sections"] for f in s["figures"]])  # no two figures share a file
    html = (out / "report.html").read_text(encoding="utf8")
    assert escape(human) in html and escape(LONG) in html
    check_structure(out, doc)


def test_slug_is_safe_short_and_distinct():
    from metaeval.report._model import slug

    assert slug("corr-coherence") == "corr-coherence"  # safe ids are kept
    names = ["a/b", "a_b", "a b", "a\\b", "..", "", LONG, LONG + "y", "é", "e"]
    slugs = [slug(n) for n in names]
    assert len(set(slugs)) == len(names)
    for s_ in slugs:
        assert s_ and len(s_) <= 64 and s_.isascii() and "/" not in s_ and "\\" not in s_
        assert not s_.startswith((".", "-"))


def test_failing_section_is_recorded_and_the_rest_is_written(tmp_path, monkeypatch):
    import metaeval.reliability as rl

    def boom(*a, **k):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(rl, "consistency", boom)
    ds = small_dataset()
    doc = write(build(ds, ReportConfig(**SMALL)), str(tmp_path))
    rel = _section(doc, "reliability")
    assert rel["status"] in ("skipped", "partial")
    assert any("reliability failed (RuntimeError: simulated failure)" in r for r in rel["skipped"])
    assert doc["failures"] == [{"step": "reliability", "section": "reliability", "error": "RuntimeError",
                                "message": "simulated failure"}]
    assert _section(doc, "diagnostics")["status"] != "skipped" and _table(doc, "corr-h")["rows"]
    assert "simulated failure" in (tmp_path / "report.html").read_text()


def test_finished_sections_are_on_disk_before_a_later_crash(tmp_path, monkeypatch):
    import metaeval.diagnostics as dg
    from metaeval.report import Writer

    def crash(*a, **k):
        raise KeyboardInterrupt  # not an analysis error: the run stops here

    monkeypatch.setattr(dg, "ks_score", crash)
    with pytest.raises(KeyboardInterrupt):
        build(small_dataset(), ReportConfig(**SMALL), writer=Writer(str(tmp_path)))
    assert (tmp_path / "tables" / "corr-h.csv").exists() and (tmp_path / "figures" / "fig-corr-h.png").exists()
    assert (tmp_path / "tables" / "rel-consistency.csv").exists()


def test_an_unknown_text_metric_is_refused_before_any_section_regression(tmp_path):
    # review: `report --quick --text-metrics nosuch` ran to the end with the name unused (quick
    # skips the text section), and without --quick the name was read as a missing extra
    from metaeval.errors import ParameterError
    from metaeval.report import Writer

    for quick in (True, False):
        with pytest.raises(ParameterError, match=r"text_metrics: unknown text metric\(s\) 'nosuch'; choose from bleu"):
            build(small_dataset(), ReportConfig(**{**SMALL, "quick": quick, "text_metrics": ("bleu", "nosuch")}),
                  writer=Writer(str(tmp_path / str(quick))))
        assert not list((tmp_path / str(quick)).glob("tables/*.csv"))  # no section ran


def test_planted_results_json_and_symlinks_never_touch_files_outside_out(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {name: f"keep {name}" for name in ("victim.csv", "victim.png", "victim.html", "victim.json")}
    for name, text in victims.items():
        (outside / name).write_text(text)
    out = tmp_path / "out"
    (out / "tables").mkdir(parents=True)
    (out / "figures").mkdir()
    (out / "results.json").write_text(json.dumps({"sections": [{
        "tables": [{"files": {"csv": "../outside/victim.csv", "latex": str(outside / "victim.json")}}],
        "figures": [{"files": {"png": "../outside/victim.png", "svg": "figures/../../outside/victim.png"}}]}]}))
    (out / "tables" / "corr-h.csv").symlink_to(outside / "victim.csv")     # a file the report writes
    (out / "figures" / "fig-corr-h.png").symlink_to(outside / "victim.png")
    (out / "report.html").symlink_to(outside / "victim.html")
    (out / "mine.txt").write_text("the user's own file")
    write(build(small_dataset(), ReportConfig(**SMALL)), str(out))
    for name, text in victims.items():  # nothing outside --out was written or deleted
        assert (outside / name).read_text() == text
    assert (out / "mine.txt").read_text() == "the user's own file"  # nor any file the run did not create
    assert not (out / "report.html").is_symlink() and "<html" in (out / "report.html").read_text()
    assert not (out / "tables" / "corr-h.csv").is_symlink()


def test_linked_output_subfolder_is_a_clear_error(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").symlink_to(outside, target_is_directory=True)
    res = CliRunner().invoke(main, ["report", "--quick", "--metrics", "BLEU,ROUGE.1", "--out", str(out)])
    assert res.exit_code == 2 and "--out" in res.output and "link" in res.output
    assert list(outside.iterdir()) == []


# ----------------------------------------------------------------------------- CFA convergence (issue 14.2)


class _NotConverged:
    """A CFA result as validity.cfa returns it when the optimiser stopped early (converged=False)."""

    converged = False

    def __init__(self, res):
        self._res = res

    def __getattr__(self, name):
        return getattr(self._res, name)


def test_cfa_that_did_not_converge_is_not_interpretable_and_drives_nothing(monkeypatch, tmp_path):
    import metaeval.validity as vd

    real = vd.cfa
    monkeypatch.setattr(vd, "cfa", lambda *a, **k: _NotConverged(real(*a, **k)))
    ds = tiny_dataset()
    doc = write(build(ds, ReportConfig(**{**TINY, "n_resamples": 20, "splits": 10}, text=False)), str(tmp_path))
    val = _section(doc, "validity")
    assert val["status"] == "partial"
    assert any("concurrent validity not computed: the CFA did not converge" in r for r in val["skipped"])
    assert "val-concurrent" not in {t["id"] for t in val["tables"]}
    assert "metaeval.concurrent_validity" not in val["functions"]
    assert "NOT INTERPRETABLE" in _table(doc, "val-cfa-fit")["title"]
    cfa_readings = [r["text"] for r in val["readings"] if r["rule"] == "val-cfa"]
    assert cfa_readings and all(t.startswith("Not interpretable: the CFA did not converge") for t in cfa_readings)
    assert not any("Hu and Bentler" in t or "meets" in t for t in cfa_readings)
    summary = [r["text"] for r in _section(doc, "recommendation")["readings"] if r["rule"] == "rec-validity"]
    assert summary and "not interpretable" in summary[0]


# ----------------------------------------------------------------------------- corrected evidence (14.4)


def test_summary_does_not_trust_uncorrected_clusters_when_holm_cannot_reach_alpha(tmp_path):
    # 3 metrics = 3 pairs; 30 resamples: the smallest p is 1/31 and Holm's smallest is 3/31 > .05
    doc = write(build(small_dataset(), ReportConfig(**SMALL)), str(tmp_path))
    clu = " ".join(r["text"] for r in _section(doc, "clusters")["readings"])
    assert "1/(30+1)" in clu and "--n-resamples 60 or more" in clu
    assert not any(r["rule"] == "clu-top" for r in _section(doc, "clusters")["readings"])
    rec = [r for r in _section(doc, "recommendation")["readings"] if r["rule"] == "rec-trust"]
    assert rec and all("no metric can be recommended from this run" in r["text"] for r in rec)
    assert all(row[2].startswith("no conclusion") for row in _table(doc, "rec-trust")["rows"])
    assert all("clusters:holm" in sig for sig in _table(doc, "clusters-h")["signatures"])


def test_clusters_agree_with_holm_pvalues(tmp_path):
    ds = small_dataset(metrics=("a", "b", "c", "d"), n_systems=8)
    doc = write(build(ds, ReportConfig(**{**SMALL, "n_resamples": 199})), str(tmp_path))
    c = metaeval.compare_all(ds, "h", metrics=["a", "b", "c", "d"], level="global", method=DEFAULT_METHOD,
                             n_resamples=199, rng=0, cluster_correction="holm")
    t = _table(doc, "clusters-h")
    k = [c_["key"] for c_ in t["columns"]].index("global_cluster")
    assert {r[0]: r[k] for r in t["rows"]} == dict(zip(c.metrics, c.clusters.tolist()))
    # greedy rule on the Holm-adjusted one-sided p-values: a metric leaves the top cluster only when a
    # top-cluster metric is better with adjusted p <= alpha
    top = [m for m, cl in zip(c.metrics, c.clusters) if cl == 1]
    from metaeval.stats.multitest import adjust_pvalues

    iu = np.triu_indices(len(c.metrics), 1)
    holm = np.full_like(c.better, np.nan)
    holm[iu] = adjust_pvalues(c.better[iu], method="holm")
    for j, (m, cl) in enumerate(zip(c.metrics, c.clusters)):
        if cl == 2:  # the first metric outside the top cluster is beaten by a top-cluster metric
            assert any(holm[i, j] <= 0.05 for i in range(j) if c.metrics[i] in top), m
            break
    pairs = _table(doc, "pairs-h")
    pk = [c_["key"] for c_ in pairs["columns"]]
    for r in pairs["rows"]:  # the pair table shows the Holm p-values the clusters use
        if r[0] == "global":
            i, j = c.metrics.index(r[1]), c.metrics.index(r[2])
            assert r[pk.index("p_greater_holm")] == pytest.approx(holm[i, j], rel=1e-12)
    for i, a in enumerate(top):  # and no top-cluster metric beats another one after Holm
        for b in top[i + 1:]:
            assert not holm[c.metrics.index(a), c.metrics.index(b)] <= 0.05
    # issue 23 item 3: the table shows, per metric, the Holm p that placed it (the smallest over the
    # members of its current cluster), <= alpha exactly where a new cluster opens
    kp = [c_["key"] for c_ in t["columns"]].index("global_p_cluster")
    shown = {r[0]: r[kp] for r in t["rows"]}
    members = [0]
    for j in range(1, len(c.metrics)):
        p = min(holm[i, j] for i in members)
        assert shown[c.metrics[j]] == pytest.approx(p, rel=1e-12)
        assert (p <= 0.05) == (c.clusters[j] != c.clusters[j - 1])
        members = [j] if p <= 0.05 else members + [j]
    assert shown[c.metrics[0]] is None


def test_few_systems_give_no_system_level_conclusion(tmp_path):
    ds = small_dataset(n_systems=4)
    doc = write(build(ds, ReportConfig(**{**SMALL, "n_resamples": 99})), str(tmp_path))
    rows = {r[1]: r[2] for r in _table(doc, "rec-trust")["rows"]}
    assert rows["system"] == "no conclusion: only 4 systems" and not rows["global"].startswith("no conclusion")
    corr = [r["text"] for r in _section(doc, "correlations")["readings"] if r["rule"] == "few-systems"]
    assert corr and "only 4 systems" in corr[0]
    rec = " ".join(r["text"] for r in _section(doc, "recommendation")["readings"])
    assert "Trusted at every level" not in rec and "system level: no conclusion: only 4 systems" in rec


def test_global_analytic_pvalue_is_flagged_beside_the_resampling_interval(tmp_path):
    ds = small_dataset(n_systems=6)
    doc = write(build(ds, ReportConfig(**{**SMALL, "n_resamples": 99})), str(tmp_path))
    t = _table(doc, "diag-design")
    labels = {c["key"]: c["label"] for c in t["columns"]}
    assert "ANALYTIC, assumes independent cells" in labels["global_p"] and "boot-both" in labels["global_ci"]
    assert "overstates significance" in t["note"]
    corr = _table(doc, "corr-h")
    ck = [c["key"] for c in corr["columns"]]
    boot = {r[0]: r[ck.index("global_ci")] for r in corr["rows"]}
    gk = [c["key"] for c in t["columns"]]
    for r in t["rows"]:  # the interval beside the analytic p is the correlation table's boot-both interval
        assert r[gk.index("global_ci")] == boot[r[1]]
        same = corr["rows"][[x[0] for x in corr["rows"]].index(r[1])][ck.index("global")]
        assert r[gk.index("global")] == pytest.approx(same, rel=1e-12)  # same coefficient (scipy vs the kernel)
    text = " ".join(r["text"] for r in _section(doc, "diagnostics")["readings"] if r["rule"] == "diag-design")
    assert "assumes independent cells" in text and "boot-both 95% interval" in text


# ----------------------------------------------------------------------------- figures with many metrics (14.8)


def layout_problems(fig):
    """What a reader would see as broken in a drawn figure: text outside the figure (clipped), a title
    over a plot, overlapping axes (a colorbar inside a plot), overlapping tick labels."""
    import matplotlib.text

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    W = fig.bbox
    probs = []
    undrawn = set()  # tick labels of ticks outside the view limits exist but are not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    undrawn |= {id(tick.label1), id(tick.label2)}
    for t in fig.findobj(matplotlib.text.Text):
        if not (t.get_visible() and t.get_text().strip()) or id(t) in undrawn:
            continue
        b = t.get_window_extent(r)
        if b.x0 < W.x0 - 1 or b.x1 > W.x1 + 1 or b.y0 < W.y0 - 1 or b.y1 > W.y1 + 1:
            probs.append(f"clipped text {t.get_text()[:40]!r}")
    boxes = [ax.get_window_extent(r).shrunk(0.999, 0.999) for ax in fig.axes]
    titles = [fig._suptitle] + [ax.title for ax in fig.axes]
    for t in titles:
        if t is not None and t.get_visible() and t.get_text():
            b = t.get_window_extent(r).shrunk(0.98, 0.9)
            if any(b.overlaps(x) for x in boxes):
                probs.append(f"title over a plot: {t.get_text()[:40]!r}")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a.overlaps(b):
                probs.append("axes overlap (a colorbar or panel inside another)")
    for ax in fig.axes:
        for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            bbs = [lb.get_window_extent(r).shrunk(0.95, 0.9) for lb in labels
                   if lb.get_visible() and lb.get_text() and id(lb) not in undrawn]
            if any(p.overlaps(q) for p, q in zip(bbs, bbs[1:])):
                probs.append(f"tick labels overlap in {ax.get_title()[:30]!r}")
    return probs


def wide_dataset(n_metrics=42, seed=0):
    """6 systems x 40 inputs, one human column, many metrics with long names (one with a slash)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((6, 40))
    scores = {"overall quality (expert mean, 1-5)": np.clip(np.rint(3 + q), 1, 5)}
    names = [f"metric {k:02d} / a rather long descriptive name with settings v{k}" for k in range(n_metrics)]
    for k, m in enumerate(names):
        scores[m] = q + (0.3 + 0.05 * k) * rng.standard_normal((6, 40))
    return metaeval.Dataset.from_arrays(scores, human=["overall quality (expert mean, 1-5)"]), names


@pytest.fixture(scope="module")
def wide():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    return wide_dataset()


def _close(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_figures_with_many_long_metric_names_are_readable(wide):
    from metaeval import diagnostics as dg
    from metaeval.report import figures as fg

    ds, names = wide
    h = ds.human[0]
    rng = np.random.default_rng(1)
    stat = rng.uniform(-0.2, 0.8, (len(names), 4))
    frame = pd.DataFrame([{"metric": m, "level": lv, "statistic": stat[i, j], "ci_low": stat[i, j] - 0.2,
                           "ci_high": stat[i, j] + 0.2}
                          for i, m in enumerate(names) for j, lv in enumerate(["system", "input", "item", "global"])])
    figs = {
        "correlation intervals": fg.correlation_intervals(frame, title=f"{DEFAULT_METHOD} with {h}"),
        "KS": dg.plot_ks(dg.ks_score(ds, [h], low=3, high=4)),
        "meta-correlation": dg.plot_meta_correlation(dg.meta_correlation(ds, [h])),
        "reliability": fg.reliability_bars(None, metaeval.consistency(ds, [h, *names])),
        "design": dg.plot_correlation_design(dg.correlation_design(ds, columns=[h, *names[:12]])),
    }
    problems = {}
    for name, fig in figs.items():
        problems[name] = layout_problems(fig)
        _close(fig)
    assert problems == {k: [] for k in figs}


def test_layout_check_catches_a_clipped_title_and_an_inner_colorbar():
    """The check above can fail: the old KS figure (tight_layout, colorbar, long title) is caught."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 3))
    im = ax.imshow(np.random.default_rng(0).random((10, 1)), aspect="auto")
    ax.set_yticks(range(10), [f"metric {k} with a long name" for k in range(10)])
    ax.set_title("KS score: low- vs high-quality texts, a long title")
    cax = fig.add_axes([0.5, 0.3, 0.1, 0.4])  # a colorbar inside the plot
    fig.colorbar(im, cax=cax)
    probs = layout_problems(fig)
    _close(fig)
    assert any(p.startswith("clipped text") for p in probs)
    assert any(p.startswith("axes overlap") for p in probs)


# ----------------------------------------------------------------------------- what readers see (14.8)


def test_report_prose_has_citations_references_and_no_raw_markup(tiny_report):
    out, doc, _ = tiny_report
    html = (out / "report.html").read_text(encoding="utf8")
    visible = html[html.index("<body>"):]
    for raw in (".. math::", "**", ":math:", ":func:", "``", "\\frac", "\\alpha", "\\sum", "seed paper"):
        assert raw not in visible, raw
    assert "(Xiao et al., 2023)" in visible and "(Gao et al., 2025" in visible  # author-year citations
    refs = _parse(out)
    assert [k for k, _ in refs.sections][-2:] == ["references", "cite"]
    assert [r["key"] for r in doc["references"]] == ["000", "001", "002", "003", "004"]
    for r in doc["references"]:
        assert f'id="ref-{r["key"]}"' in html and escape(r["full"]) in html
    assert "Mingqi Gao, Xinyu Hu, Li Lin, and Xiaojun Wan. 2025" in doc["references"][0]["full"]
    assert "@software{metaeval," in html and f"version = {{{metaeval.__version__}}}" in doc["bibtex"]
    methods = visible[visible.index('id="sec-methods"'):visible.index('id="sec-references"')]
    assert "^{" not in methods and "_{" not in methods  # no TeX braces left in the formulas
    # the ICC formulas of the agreement docstring arrive complete, as a table
    agreement = next(m for m in doc["methods"] if m["function"] == "metaeval.agreement")
    tables = [b for it in agreement["blocks"] if it["kind"] == "dl" for d in it["items"] for b in d["blocks"]
              if b["kind"] == "table"]
    assert [r[0] for r in tables[0]["rows"]] == ["icc1", "icc2", "icc3", "icc1k", "icc2k", "icc3k"]
    # Cronbach's alpha formula (a .. math:: block) is rendered as text
    cons = next(m for m in doc["methods"] if m["function"] == "metaeval.consistency")
    assert any(b["kind"] == "math" and b["text"].startswith("α = M/(M - 1)") for b in cons["blocks"])


def test_many_signatures_are_collapsed(tiny_report):
    out, doc, _ = tiny_report
    html = (out / "report.html").read_text(encoding="utf8")
    from metaeval.report._render import split_signatures

    multi = [t for s in doc["sections"] for t in s["tables"] if len(t["signatures"]) > 1]
    assert multi
    for t in multi:
        block = html[html.index(f'data-table="{t["id"]}"') - 3000:html.index(f'data-table="{t["id"]}"')]
        block = block[block.rindex("<figcaption>"):]
        common = split_signatures(t["signatures"])["common"]
        assert block.count('class="sig" data-common="1"') == 1 and escape(common) in block
        assert '<details class="sigs">' in block and all(escape(s_) in block for s_ in t["signatures"])
    assert split_signatures(["a:1|b:2|v:0", "a:1|b:3|v:0"]) == {"common": "a:1|v:0", "differ": ["b"]}


def test_latex_formulas_become_text():
    from metaeval.report._refs import cite, latex_text

    assert latex_text(r"\tilde p \le \alpha") == "p\u0303 \u2264 \u03b1"
    assert latex_text(r"\frac{a + b}{c}") == "(a + b)/c"
    assert latex_text(r"\sigma^2_{Y_j}") == "\u03c3\u00b2_(Y\u2c7c)"
    assert latex_text(r"\sqrt{x}") == "\u221ax"
    from metaeval.report._methods import _plain

    assert _plain("tr(S Sigma^{-1}) and sum_{i<j} p_ij") == "tr(S Sigma\u207b\u00b9) and sum_(i<j) p_ij"
    assert cite("as in seed paper 000, Algorithm 2") == "as in Gao et al. (2025), Algorithm 2"
    assert cite("(seed papers 001 and 003)") == "(Sheng et al., 2024; Shimorina, 2018)"
    assert cite("Seed paper 003 (Shimorina 2018), Figure 1") == "Shimorina (2018), Figure 1"


# ----------------------------------------------------------------------------- cost (14.8)


def test_cost_is_said_before_the_run(summeval_report):
    out, doc = summeval_report
    text = _CLI_OUTPUT["summeval"]
    line = next(ln for ln in text.splitlines() if ln.startswith("metaeval: estimated cost: "))
    assert text.index(line) < text.index("report: ")  # before the run's own output
    assert "1 human column(s) x 6 metrics x 4 levels on 17 systems x 100 inputs, 50 resamples" in line
    assert doc["estimate"]["text"] in line and doc["estimate"]["seconds"] > 0
    assert escape(doc["estimate"]["text"]) in (out / "report.html").read_text()


def test_header_times_the_figures_and_tables_regression_26_3(summeval_report):
    """Regression (26.3): the header said "+ 0 s (figures, tables)" because the
    figures are drawn while the analyses run (the writer flushes each finished
    section) and only the last, empty flush was timed.  Every flush is timed
    now, and the analyses' time leaves it out."""
    out, doc = summeval_report
    n_figures = len(list((out / "figures").glob("*.png")))
    assert n_figures >= 3
    # at least 5 ms per figure (PNG and SVG through matplotlib), never the 0 it was
    assert doc["seconds_views"] > 0.005 * n_figures
    assert doc["seconds_analyses"] > 0
    html = (out / "report.html").read_text()
    shown = re.search(r"in ([0-9,]+) s \(analyses\) \+ ([0-9,]+) s \(figures, tables\)", html)
    assert shown and int(shown.group(2).replace(",", "")) == round(doc["seconds_views"])


def test_estimate_adds_compilation_when_no_cache_has_the_kernels_26_3():
    from metaeval.report import estimate

    cfg = ReportConfig(quick=True)
    warm = estimate(17, 100, 1, 43, cfg, compiled=True)
    cold = estimate(17, 100, 1, 43, cfg, compiled=False)
    assert "compiling the kernels" not in warm["parts"]
    assert cold["seconds"] - warm["seconds"] == pytest.approx(cold["parts"]["compiling the kernels"])
    assert "kernels not compiled yet" in cold["text"] and "of CPU" in warm["text"]


def test_estimate_follows_the_sizes():
    from metaeval.report import estimate

    quick, full = ReportConfig(quick=True), ReportConfig()
    a = estimate(16, 100, 6, 212, full)["parts"]
    b = estimate(16, 100, 6, 106, full)["parts"]
    c = estimate(32, 100, 6, 212, full)["parts"]
    z = estimate(0, 100, 6, 212, full)["parts"]  # no cells: the fixed parts alone
    assert a["correlation intervals"] == pytest.approx(2 * b["correlation intervals"])  # linear in metrics
    # affine in the cells: a fixed part per interval, the replicates in proportion to the cells
    assert c["correlation intervals"] - a["correlation intervals"] == pytest.approx(
        a["correlation intervals"] - z["correlation intervals"])
    assert c["correlation intervals"] > a["correlation intervals"] > z["correlation intervals"] > 0
    assert a["significance clusters"] == b["significance clusters"]  # the pairwise set is fixed (10)
    q = estimate(16, 100, 6, 212, quick)
    # --quick: intervals for 20 metrics, 100 instead of 1000 resamples: per interval, the same fixed
    # part and a tenth of the replicates
    per_a, per_q = a["correlation intervals"] / (6 * 212 * 4), q["parts"]["correlation intervals"] / (6 * 20 * 4)
    per_z = z["correlation intervals"] / (6 * 212 * 4)
    assert per_q - per_z == pytest.approx((per_a - per_z) * 101 / 1001)
    assert "--quick rule: bootstrap intervals for the first 20 of 212 metrics" in q["text"]
    # the wide file of issue 14.8 (6 humans x 212 metrics), quick: 175 CPU-s measured (issue 26.3, a
    # generated 16 x 100 file, load 8); the estimate must be within 2x of it
    assert 175 / 2 < q["seconds"] < 175 * 2


def test_quick_rule_caps_bootstrap_intervals(tmp_path):
    ds, names = wide_dataset(n_metrics=26)
    doc = write(build(ds, ReportConfig(quick=True, seed=0, n_resamples=20, splits=10, levels=("system", "global"))),
                str(tmp_path))
    t = _table(doc, f"corr-{ds.human[0]}")
    k = [c["key"] for c in t["columns"]].index("global_ci")
    with_ci = [r[0] for r in t["rows"] if r[k] is not None and r[k][0] is not None]
    assert len(t["rows"]) == 26 and len(with_ci) == 20
    assert "--quick rule: bootstrap intervals for 20 of 26 metrics" in t["note"]
    subset = _table(doc, f"clusters-{ds.human[0]}")["rows"]
    assert {r[0] for r in subset} <= set(with_ci)
    assert any(r["rule"] == "corr-quick" for r in _section(doc, "correlations")["readings"])
    c = metaeval.correlate(ds, ds.human[0], metrics=names, level=["system", "global"], method=DEFAULT_METHOD, ci="none")
    stat = {r[0]: r[[c_["key"] for c_ in t["columns"]].index("global")] for r in t["rows"]}
    assert stat == {m: c.get(m, level="global").statistic for m in names}  # every statistic is still there


def test_quick_clusters_decisions_do_not_sit_at_the_resolution_limit(tmp_path):
    # 6 metrics = 15 pairs: 100 resamples give at best 15/101 > .05 after Holm.  Issue 23 item 6: with
    # just enough for Holm to reach alpha (ceil(15 / .05) = 300: 15/301 = 0.0498) every significant
    # pair read "p (Holm) = 0.050".  Without an explicit --n-resamples the cluster tests now run
    # n = ceil(10 * 15 / .05) - 1 = 2999 resamples: the smallest Holm p, 15/3000 = 0.005, is alpha/10.
    ds = small_dataset(metrics=("a", "b", "c", "d", "e", "f"), n_systems=6)
    doc = write(build(ds, ReportConfig(quick=True, seed=0, splits=10, pairwise="all", levels=("system", "global"))),
                str(tmp_path))
    t = _table(doc, "clusters-h")
    assert all("|n:2999|" in sig for sig in t["signatures"]) and "Permutation resamples: 2999 (not 100)" in t["note"]
    assert 15 / (2999 + 1) <= 0.05 / 10 < 15 / 2999
    pairs = _table(doc, "pairs-h")
    keys = [c["key"] for c in pairs["columns"]]
    holm = [r[keys.index("p_greater_holm")] for r in pairs["rows"] if r[keys.index("p_greater_holm")] is not None]
    assert holm and min(holm) >= 15 / 3000 - 1e-15
    assert not any(r["rule"] == "clu-resolution" for r in _section(doc, "clusters")["readings"])
    rows = _table(doc, "rec-trust")["rows"]
    assert not any(r[2].startswith("no conclusion: too few resamples") for r in rows)


def _holm_reference(p):
    """Holm (1979) step-down adjustment, written out: sort, multiply by m - k, running maximum, cap at 1."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    out = np.empty_like(p)
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - k) * p[i]))
        out[i] = running
    return out


def test_meta_correlation_reading_uses_holm_corrected_pvalues(tiny_report):
    _, doc, _ = tiny_report
    t = _table(doc, "diag-meta")
    k = [c["key"] for c in t["columns"]]
    p = np.array([r[k.index("pvalue")] for r in t["rows"]], float)
    got = np.array([r[k.index("pvalue_holm")] for r in t["rows"]], float)
    np.testing.assert_allclose(got, _holm_reference(p), rtol=1e-12)
    text = next(r["text"] for r in _section(doc, "diagnostics")["readings"] if r["rule"] == "diag-meta")
    sig = [r for r in t["rows"] if r[k.index("pvalue_holm")] < 0.05 and r[k.index("statistic")] < 0]
    if sig:
        assert all(f"{r[0]} with {r[1]}" in text for r in sig)
    else:
        assert text.startswith("No metric has a negative meta-correlation with Holm-corrected p < .05")
    uncorrected_only = [r for r in t["rows"] if r[k.index("pvalue")] < 0.05 <= r[k.index("pvalue_holm")]]
    assert not any(f"{r[0]} with {r[1]} (" in text for r in uncorrected_only)


def test_every_report_figure_is_readable_with_42_long_metric_names(wide):
    ds, names = wide
    rep = build(ds, ReportConfig(quick=True, seed=0, n_resamples=20, splits=10, ks_low=3, ks_high=4))
    figures = [f for s in rep.sections for f in s.figures]
    assert {f.id for f in figures} >= {f"fig-corr-{ds.human[0]}", "fig-ks", "fig-meta", "fig-design",
                                       "fig-reliability", "fig-alpha-curve", f"fig-clusters-{ds.human[0]}"}
    problems = {}
    for f in figures:
        fig = f.make()
        problems[f.id] = layout_problems(fig)
        if f.id == "fig-reliability":  # alpha's bootstrap bounds over 6 systems reach far below -1
            low = min(x for r in rep.results["reliability"]["consistency"]["results"] for x in [r["ci_low"]]
                      if x is not None)
            assert low < -1 and fig.axes[0].get_ylim()[0] >= -1.0  # the axis stays readable
            assert "cut at the axis" in fig.axes[0].get_title(loc="left")
        _close(fig)
    assert problems == {f.id: [] for f in figures}


def test_report_files_get_the_usual_mode_not_private(tmp_path):
    # Regression: files written through a temporary file (mkstemp, mode 0600) and a rename
    # came out readable by their owner only, so a report copied to a shared folder or served
    # by a web server could not be read. They get 0666 & ~umask, as open() gives.
    from metaeval.report._render import Writer

    old = os.umask(0o022)
    try:
        w = Writer(str(tmp_path / "out"))
        w.put("report.html", "<html></html>")
    finally:
        os.umask(old)
    assert (tmp_path / "out" / "report.html").stat().st_mode & 0o777 == 0o644


# ----------------------------------------------------------------------------- pairwise preferences (issue 17.1)


@pytest.mark.filterwarnings("ignore::metaeval.InsufficientResamplesWarning")
def test_preferences_section_equals_library(summeval_report):
    """The section's numbers are metaeval.preference_agreement and bradley_terry called directly on the
    same data (the pairwise set of 4 metrics, the 3 raters of coherence) with the same seed; the ceiling
    row is the human-human row, the metrics are ordered by acc_eq."""
    from metaeval import preferences as pf

    out, doc = summeval_report
    s = _section(doc, "preferences")
    assert s["status"] == "done" and s["title"] == "Pairwise preferences"
    assert {"metaeval.preference_agreement", "metaeval.bradley_terry"} <= set(s["functions"])
    ds = metaeval.load_dataset("summeval")
    levels = ["system", "input", "item", "global"]
    corr = metaeval.correlate(ds, "coherence", metrics=SUBSET, level=levels, method=DEFAULT_METHOD,
                              ci="boot-both", n_resamples=50, rng=0)
    subset = pairwise_subset(corr.to_frame(), levels, 4)
    data = pf.PreferenceData.from_dataset(ds, "coherence", metrics=subset, lengths=False)
    pa = pf.preference_agreement(data, n_resamples=50, rng=0)
    bt = pf.bradley_terry(data)
    t = _table(doc, "pref-coherence")
    keys = [c["key"] for c in t["columns"]]
    assert [r[0] for r in t["rows"]][0] == "human-human ceiling"
    assert sorted(r[0] for r in t["rows"][1:]) == sorted(subset)
    for row in t["rows"]:
        judge = "human" if row[0] == "human-human ceiling" else row[0]
        for m in ("acc_23", "acc_eq", "kappa_majority"):
            r = pa.get(judge, measure=m)
            assert row[keys.index(m)] == r.statistic, (judge, m)
            assert row[keys.index(f"{m}_ci")] == [r.ci_low, r.ci_high], (judge, m)
        assert row[keys.index("pairs")] == 17 * 16 // 2 * 100
        tau = row[keys.index("bt_tau_b")]
        assert tau is None if judge == "human" else tau == bt.get(judge).tau_b
    acc = [r[keys.index("acc_eq")] for r in t["rows"][1:]]
    assert acc == sorted(acc, reverse=True)
    # the ceiling is the raters among themselves: acc_eq == acc_23 (human ties are used as given)
    assert t["rows"][0][keys.index("acc_eq")] == t["rows"][0][keys.index("acc_23")]
    assert t["rows"][0][keys.index("epsilon")] is None  # nothing calibrated for the raters
    assert [r[keys.index("epsilon")] for r in t["rows"][1:]] == [pa.get(r[0], measure="acc_eq").epsilon
                                                                  for r in t["rows"][1:]]
    assert doc["results"]["preferences"]["coherence"]["judges"] == subset
    assert "fig-pref-coherence" in {f["id"] for f in s["figures"]}


def test_preferences_readings_follow_the_numbers(summeval_report):
    _, doc = summeval_report
    t = _table(doc, "pref-coherence")
    keys = [c["key"] for c in t["columns"]]
    ceil, rows = t["rows"][0], t["rows"][1:]
    texts = {r["text"].split(":")[0]: r for r in _section(doc, "preferences")["readings"]}
    for m, label in (("acc_eq", "acc_eq"), ("kappa_majority", "kappa vs majority")):
        best = max(rows, key=lambda r: r[keys.index(m)])
        r = next(v for k, v in texts.items() if k == f"coherence, {label}")
        assert r["rule"] == "pref-ceiling" and r["evidence"] == ["pref-coherence"]
        assert f"ceiling is {fmt(ceil[keys.index(m)])}" in r["text"]
        assert f"closest metric is {best[0]} ({fmt(best[keys.index(m)])}" in r["text"]
        lo, hi = best[keys.index(f"{m}_ci")]
        clo, chi = ceil[keys.index(f"{m}_ci")]
        overlap = hi >= clo and chi >= lo
        assert ("overlaps the ceiling's" in r["text"]) == overlap
        assert ("does not overlap the ceiling's" in r["text"]) == (not overlap)
        others = [x[0] for x in rows if x is not best and x[keys.index(f"{m}_ci")][1] >= lo
                  and hi >= x[keys.index(f"{m}_ci")][0]]
        assert all(o in r["text"] for o in others)
        assert "No difference was tested." in r["text"] and "significan" not in r["text"]
    bt = max(rows, key=lambda r: r[keys.index("bt_tau_b")])
    r = next(v for v in _section(doc, "preferences")["readings"] if v["rule"] == "pref-bt")
    assert f"closest to the raters' is {bt[0]}'s (tau_b {fmt(bt[keys.index('bt_tau_b')])}" in r["text"]


def test_preferences_reading_flags_overlap_with_the_ceiling_and_a_calibrated_advantage():
    """The reading rule on a hand-made frame: a metric whose interval overlaps the ceiling's, above it on
    acc_eq (calibrated threshold), and a second metric overlapping it."""
    from metaeval.report._readings import preference_readings

    rows = []
    for j, (a, k) in {"human": (0.60, 0.40), "m1": (0.62, 0.29), "m2": (0.55, 0.28), "m3": (0.30, 0.01)}.items():
        for m, v in (("acc_eq", a), ("kappa_majority", k)):
            rows.append({"judge": j, "measure": m, "statistic": v, "ci_low": v - 0.05, "ci_high": v + 0.05})
    out = preference_readings(pd.DataFrame(rows), {"human": np.nan, "m1": 0.5, "m2": 0.7, "m3": np.nan}, "q",
                              "pref-q", n_systems=8)
    acc, kap, bt = (r.text for r in out)
    assert "closest metric is m1 (0.620" in acc and "0.020 above the ceiling" in acc
    assert "overlaps the ceiling's" in acc and "acc_eq favours the metric" in acc
    assert "the intervals of 1 other metric(s) overlap m1's (m2)" in acc
    assert "closest metric is m1 (0.290" in kap and "0.110 below" in kap and "does not overlap the ceiling's" in kap
    assert "favours" not in kap and "(m2)" in kap
    assert bt == "q: the Bradley-Terry system ranking closest to the raters' is m2's (tau_b 0.700; over the 2 " \
                 "metrics 0.500 to 0.700; 8 systems ranked)."


def test_preferences_skipped_with_reason_when_no_column_has_raters(tmp_path):
    ds = small_dataset()  # one human column, one rater per cell
    doc = write(build(ds, ReportConfig(**SMALL)), str(tmp_path))
    s = _section(doc, "preferences")
    assert s["status"] == "skipped" and not s["tables"]
    reason = next(k["reason"] for k in doc["skipped"] if k["section"] == "preferences")
    assert "no human column of the report has 2+ individual raters" in reason
    assert escape(reason) in (tmp_path / "report.html").read_text()
    assert "preferences" not in doc["results"]


def test_preferences_skip_names_a_rated_column_left_out_of_the_report(tmp_path):
    ds = tiny_dataset()  # quality and fluency have 3 raters each
    scores = {"single": ds.scores("quality"), **{m: ds.ratings(m) for m in ("good", "poor")}}
    ds2 = metaeval.Dataset.from_arrays({**scores, "fluency": ds.ratings("fluency")}, human=["single", "fluency"],
                                       systems=list(ds.systems), inputs=list(ds.inputs))
    rep = build(ds2, ReportConfig(human=("single",), **SMALL))
    s = rep.section("preferences")
    assert s.status == "skipped" and "fluency has raters (--human)" in s.reasons[0]


def test_estimate_counts_the_preferences_of_rated_columns_only():
    from metaeval.report import estimate

    def part(n_rated=1, k=5, n=100, systems=17):
        cfg = ReportConfig(quick=True, n_resamples=n, pairwise=k)
        return estimate(systems, 100, 2, 43, cfg, n_rated=n_rated)["parts"]["pairwise preferences"]

    assert part(n_rated=0) == 0  # no rated column: the section is skipped
    assert part(n_rated=2) == pytest.approx(2 * part())
    assert part(k=11) == pytest.approx(2 * part(k=5))  # the pairwise set plus the ceiling: 6 -> 12 annotators
    assert part(systems=33) == pytest.approx(part() * (33 * 32) / (17 * 16))  # pairs of systems per input
    # affine in the resamples, with a fixed part (labels, calibration, point estimates)
    assert part(n=1000) - part(n=100) == pytest.approx(9 * (part(n=200) - part(n=100)))
    assert part(n=0) > 0
    assert part() < 5  # --quick on SummEval stays a few seconds


def test_preferences_with_a_constant_and_an_empty_metric_flag_nan_and_keep_the_section():
    """Adversarial judges in the pairwise set: a constant metric (every pair a tie: kappa 0, no
    Bradley-Terry ranking) and a metric with one score (no usable pair): the section is done, the
    undefined cells are empty (NaN), the typed warnings are listed, and the readings skip them."""
    ds = tiny_dataset()
    N, M = len(ds.systems), len(ds.inputs)
    empty = np.full((N, M), np.nan)
    empty[0, 0] = 1.0
    scores = {**{c: ds.ratings(c) for c in ds.columns}, "flat": np.ones((N, M)), "empty": empty}
    d2 = metaeval.Dataset.from_arrays(scores, human=["quality", "fluency"], systems=list(ds.systems),
                                      inputs=list(ds.inputs))
    rep = build(d2, ReportConfig(human=("quality",), pairwise=("good", "flat", "empty"), **SMALL))
    s = rep.section("preferences")
    assert s.status == "done"
    rows = {r[0]: r for r in s.tables[0].rows}
    keys = [c.key for c in s.tables[0].columns]
    assert rows["flat"][keys.index("kappa_majority")] == 0.0  # constant labels: p_o == p_e
    assert rows["flat"][keys.index("bt_tau_b")] is None  # equal strengths: tau-b undefined (NaN, stored as None)
    assert all(rows["empty"][keys.index(k)] is None for k in ("acc_23", "acc_eq", "kappa_majority", "epsilon"))
    assert rows["empty"][keys.index("pairs")] == 0
    warned = " ".join(w["warning"] for w in s.warnings)
    assert "UndefinedStatisticWarning" in warned and "empty:acc_eq" in warned
    text = " ".join(r.text for r in s.readings)
    assert "closest metric is good" in text and "empty" not in text


def test_preference_figure_with_many_long_metric_names_is_readable(wide):
    from metaeval.report import figures as fg

    _, names = wide
    rng = np.random.default_rng(2)
    rows = []
    for j in ["human", *names]:
        for m in ("acc_eq", "kappa_majority"):
            v = rng.uniform(0.2, 0.7)
            rows.append({"judge": j, "measure": m, "statistic": v, "ci_low": v - 0.05, "ci_high": v + 0.05})
    fig = fg.preference_intervals(pd.DataFrame(rows), title="agreement with the raters of a long human column")
    assert layout_problems(fig) == []
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][-1].startswith("metric 00")  # top row first
    _close(fig)


def test_failure_codes_are_in_the_report():
    """Regression (this session's review): the OutOfScaleWarning given when the data was read
    (-1 failure codes in a 1-5 judge column) was printed on the terminal but missing from
    report.html and results.json; the Data section now records it."""
    rng = np.random.default_rng(1)
    h = rng.integers(1, 6, size=(6, 30)).astype(float)
    judge = np.clip(h + rng.integers(-1, 2, size=h.shape), 1, 5)
    judge[0, :3] = -1  # 3 failure codes of 180 cells
    ds = metaeval.Dataset.from_arrays({"quality": h, "judge": judge, "bleu": h + rng.normal(size=h.shape)},
                                      human=["quality"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = build(ds, ReportConfig(quick=True, seed=1, human=("quality",), n_resamples=20, splits=10,
                                     text=False))
    data = next(s for s in rep.sections if s.id == "data").to_dict()
    hits = [w["warning"] for w in data["warnings"] if "OutOfScaleWarning" in w["warning"]]
    assert len(hits) == 1 and "'judge'" in hits[0] and "-1 (x3)" in hits[0], data["warnings"]


def test_local_chi2_permutations_resolve_holm_over_the_metrics():
    """QA pass: quick mode ran H1's permutation tests with 999 draws whatever the number of metrics, so
    under Holm over M metrics the smallest attainable p-value, M / (n + 1), could not go below alpha / 10
    (M = 60: 0.06, above alpha itself). The report now draws the fewest n >= 999 with M / (n + 1) <=
    alpha / 10 in quick mode (as for the clusters); the local section is run alone."""
    from metaeval.report._build import _Builder

    g = np.random.default_rng(0)
    N, M_in, M = 4, 12, 60
    q = g.normal(size=(N, M_in))
    scores = {"quality": q, **{f"m{k}": q + g.normal(size=(N, M_in)) for k in range(M)}}
    ds = metaeval.Dataset.from_arrays(scores, human=["quality"], systems=[f"s{i}" for i in range(N)],
                                      inputs=[f"d{j}" for j in range(M_in)])
    b = _Builder(ds, ReportConfig(quick=True, seed=1, context="system", human=("quality",)), None, None)
    b.local()
    rows = b.results["local"]["chi2"]["results"]
    (n,) = {r["n_resamples"] for r in rows}
    assert M / (n + 1) <= 0.05 / 10 < M / n  # the fewest such n: 10 * 60 / 0.05 - 1 = 11999
    assert n == 11999


def test_header_rerun_hint_names_an_option_report_shows(tiny_report):
    """Review before stop: the header said 'rerun with --seed S', the spelling issue 25 hid as an
    alias of --rng; the hint names the option `metaeval report --help` lists."""
    from click.testing import CliRunner

    from metaeval.cli import main

    out, doc, _ = tiny_report
    html = (out / "report.html").read_text()
    assert f"rerun with <code>--rng {doc['seed']}</code>" in html
    shown = CliRunner().invoke(main, ["report", "--help"], terminal_width=200).output
    assert "--rng " in shown and "--seed" not in shown
