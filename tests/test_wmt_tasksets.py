"""WMT task sets: system and outlier exclusion, the WMT20 preset, columns named by task
(issue 25 item 1: `wmt` had no --exclude-systems, no WMT20 preset, and task1..task7).

Oracles: mt-metrics-eval (github.com/google-research/mt-metrics-eval, commit
68a481aea1a787392d55af8f76ac8ef40c5f4664, see ../shared/anchors/README.md) ``meta_info.py``
(``DATA[testset][lp].outlier_systems``, ``WMT20.std_gold``; imported from ../shared/anchors, the
tests skip without it) and ``tasks.py`` (``Task.use_outliers = False``: outliers left out by default;
no WMT20 task set, so the preset is system-level Pearson against ``std_gold['sys']``);
scipy.stats.pearsonr on the system scores written to the folder by the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import metaeval
from metaeval.errors import DataError, ParameterError
from metaeval.wmt import Task, run_tasks, run_wmt, wmt_tasks

from _mtme_anchor import mtme

SYSTEMS = ["sysA", "sysB", "sysC", "sysD", "zlabs-nlp.1164", "Online-B.1"]  # an outlier of wmt20 ru-en


def _write_wmt20(root, lp="ru-en", seed=0):
    """A system-level mt-metrics-eval folder: wmt-z human scores, two metrics."""
    rng = np.random.default_rng(seed)
    d = root / "wmt20"
    for sub in ("sources", "references", f"system-outputs/{lp}", "human-scores", f"metric-scores/{lp}"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources" / f"{lp}.txt").write_text("a\nb\n")
    (d / "references" / f"{lp}.ref.txt").write_text("ra\nrb\n")
    for s in SYSTEMS:
        (d / "system-outputs" / lp / f"{s}.txt").write_text(f"{s} a\n{s} b\n")
    h = np.round(rng.normal(size=len(SYSTEMS)), 3)
    h[SYSTEMS.index("zlabs-nlp.1164")] = -3.0  # the outlier: far below the rest
    scores = {"BLEU-ref": np.round(20 + 5 * h + rng.normal(size=len(SYSTEMS)), 2),
              "COMET-ref": np.round(0.5 + 0.1 * h + 0.2 * rng.normal(size=len(SYSTEMS)), 4)}
    (d / "human-scores" / f"{lp}.wmt-z.sys.score").write_text(
        "".join(f"{s}\t{float(v)!r}\n" for s, v in zip(SYSTEMS, h)))
    for name, x in scores.items():
        (d / "metric-scores" / lp / f"{name}.sys.score").write_text(
            "".join(f"{s}\t{float(v)!r}\n" for s, v in zip(SYSTEMS, x)))
    return h, scores


def _pearson(h, x, drop=()):
    keep = [k for k, s in enumerate(SYSTEMS) if s not in drop]
    return stats.pearsonr(h[keep], x[keep]).statistic


def test_outlier_systems_are_mt_metrics_eval_meta_info():
    meta_info = mtme("meta_info")
    from metaeval.data.mtme_meta import OUTLIER_SYSTEMS, WMT20_LPS, WMT20_STD_GOLD, WMT20_STD_REF

    want = {(ts, lp): set(info.outlier_systems) for ts, d in meta_info.DATA.items()
            for lp, info in d.items() if info.outlier_systems}
    got = {(ts, lp): set(v) for ts, d in OUTLIER_SYSTEMS.items() for lp, v in d.items()}
    assert got == want
    assert WMT20_LPS == tuple(sorted(meta_info.DATA["wmt20"]))
    assert {(i.std_ref, tuple(sorted(i.std_gold.items()))) for i in meta_info.DATA["wmt20"].values()} == \
        {(WMT20_STD_REF, tuple(sorted(WMT20_STD_GOLD.items())))}


def test_wmt20_preset_is_system_pearson_on_the_standard_gold():
    meta_info = mtme("meta_info")
    tasks, w = wmt_tasks("wmt20", ["ru-en", "cs-en"])
    assert [(t.data, t.level, t.method, t.human) for t in tasks] == [
        ("cs-en:sys", "system", "pearson", meta_info.WMT20.std_gold["sys"]),
        ("ru-en:sys", "system", "pearson", meta_info.WMT20.std_gold["sys"])]
    assert w == [0.5, 0.5]
    assert metaeval.wmt.PRESETS == metaeval._choices.WMT_PRESETS


def test_run_wmt20_leaves_outliers_out_as_mt_metrics_eval(tmp_path):
    h, scores = _write_wmt20(tmp_path)
    res, w = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0)
    r = res[0]
    assert w == [1.0] and r.task.human == "wmt-z" and len(res) == 1
    for m, name in (("BLEU", "BLEU-ref"), ("COMET", "COMET-ref")):
        assert r.stat(m) == pytest.approx(_pearson(h, scores[name], drop={"zlabs-nlp.1164"}), abs=1e-12)
    full, _ = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, include_outliers=True)
    assert full[0].stat("BLEU") == pytest.approx(_pearson(h, scores["BLEU-ref"]), abs=1e-12)
    assert full[0].stat("BLEU") != pytest.approx(r.stat("BLEU"), abs=1e-6)
    # further systems, as a list or per language pair
    for ex in (["sysB"], {"ru-en": ["sysB"]}):
        got, _ = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, exclude_systems=ex)
        assert got[0].stat("COMET") == pytest.approx(
            _pearson(h, scores["COMET-ref"], drop={"zlabs-nlp.1164", "sysB"}), abs=1e-12)
    with pytest.raises(DataError, match=r"exclude_systems: unknown system\(s\) 'sysZ' \(option --exclude-systems\)"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, exclude_systems=["sysZ"])
    with pytest.raises(ParameterError, match="exclude_systems names unknown language pair"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, exclude_systems={"de-en": ["x"]})
    with pytest.raises(ParameterError, match="include_outliers=1 must be True or False"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", include_outliers=1)


def _sets(seed=0):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(5, 8))
    cols = {"mqm": h, "da": h + rng.normal(size=(5, 8)), "A": h + rng.normal(size=(5, 8)),
            "B": rng.normal(size=(5, 8))}
    return {"x": metaeval.Dataset.from_arrays(cols, human=["mqm", "da"])}, cols


def test_run_tasks_exclude_systems_equals_scipy_on_the_rest():
    sets, cols = _sets()
    ds = sets["x"]
    drop = str(ds.systems[1])
    res = run_tasks([Task("x", "mqm", level="system", method="pearson")], sets, n_resamples=0,
                    exclude_systems=[drop])
    keep = [k for k in range(5) if k != 1]
    for m in ("A", "B"):
        want = stats.pearsonr(cols["mqm"][keep].mean(1), cols[m][keep].mean(1)).statistic
        assert res[0].stat(m) == pytest.approx(want, abs=1e-12)
    with pytest.raises(DataError, match="leaves 1 system"):
        run_tasks([Task("x", "mqm")], sets, n_resamples=0, exclude_systems=[str(s) for s in ds.systems[1:]])


def test_table_columns_are_named_by_task():
    sets, _ = _sets()
    tasks = [Task("x", "mqm", level="system", method="pearson", lp="en-de"),
             Task("x", "mqm", level="input", method="kendall_b", lp="en-de"),
             Task("x", "da", level="input", method="kendall_b", lp="en-de")]
    res = run_tasks(tasks, sets, metrics=["B"], n_resamples=0)
    assert res.labels() == ["en-de:system:pearson", "en-de:input:kendall_b:mqm", "en-de:input:kendall_b:da"]
    fr = res.table_frame()
    assert list(fr.columns) == ["metric", "avg_corr", "avg_rank",
                                "en-de:system:pearson", "en-de:system:pearson_rank",
                                "en-de:input:kendall_b:mqm", "en-de:input:kendall_b:mqm_rank",
                                "en-de:input:kendall_b:da", "en-de:input:kendall_b:da_rank"]
    assert fr["en-de:system:pearson"].iloc[0] == res[0].stat("B")
    assert res.table(fmt="csv").splitlines()[0] == ",".join(fr.columns)


def test_exclude_systems_naming_an_outlier_said_unknown_system(tmp_path):
    """Naming an outlier in exclude_systems raised "unknown system(s) 'zlabs-nlp.1164'": the
    outliers were dropped when reading, before the names were checked.  Any system of the folder
    can be named (an outlier: the same numbers as without naming it), and the list of systems an
    unknown name gets is the folder's (the outlier in it)."""
    h, scores = _write_wmt20(tmp_path)
    for ex in (["zlabs-nlp.1164"], {"ru-en": ["zlabs-nlp.1164", "sysB"]}):
        got, _ = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, exclude_systems=ex)
        drop = {"zlabs-nlp.1164"} | (set(ex["ru-en"]) if isinstance(ex, dict) else set())
        for m, name in (("BLEU", "BLEU-ref"), ("COMET", "COMET-ref")):
            assert got[0].stat(m) == pytest.approx(_pearson(h, scores[name], drop=drop), abs=1e-12)
    # with include_outliers=True, naming the outlier leaves it out as any other system
    got, _ = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, include_outliers=True,
                     exclude_systems=["zlabs-nlp.1164"])
    assert got[0].stat("BLEU") == pytest.approx(_pearson(h, scores["BLEU-ref"], drop={"zlabs-nlp.1164"}),
                                                abs=1e-12)
    with pytest.raises(DataError, match=r"unknown system\(s\) 'sysZ' .*the systems: ru-en: Online-B\.1, sysA, "
                                        r"sysB, sysC, sysD, zlabs-nlp\.1164$"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, exclude_systems=["sysZ"])
    with pytest.raises(DataError, match=r"leaves 1 system\(s\) in 'ru-en'"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0,
                exclude_systems=["sysA", "sysB", "sysC", "sysD"])


@pytest.mark.parametrize("bad, shown", [(5, "exclude_systems: 5 is"), ({"x": 5}, r"exclude_systems\['x'\]: 5 is"),
                                        (["sysA", 2.5], "exclude_systems: 2.5 is"), ({"x": None}, "None is")])
def test_exclude_systems_not_names_gave_a_bare_typeerror(tmp_path, bad, shown):
    """exclude_systems=5 or {'x': 5} raised TypeError ('int' object is not iterable): a one-line
    ParameterError names exclude_systems and its option, in run_tasks and in run_wmt."""
    sets, _ = _sets()
    with pytest.raises(ParameterError, match=shown + r" not a system name; .*\(option --exclude-systems\)$"):
        run_tasks([Task("x", "mqm")], sets, n_resamples=0, exclude_systems=bad)
    _write_wmt20(tmp_path)
    if isinstance(bad, dict):
        bad = {"ru-en": bad["x"]}
        shown = shown.replace("'x'", "'ru-en'")
    with pytest.raises(ParameterError, match=shown + r" not a system name; .*\(option --exclude-systems\)$"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, exclude_systems=bad)


def _write_wmt20_two_refs(root, lp="ru-en", seed=1, n_seg=6):
    """A WMT20-style folder as mt-metrics-eval ships it: the standard reference ``ref`` and a
    second one ``refb`` whose human translation is also a system output (``refb.txt``), rated by
    ``wmt-z`` like the MT systems; segment- and system-level metric files for both references
    (a system's ``.sys.score`` is the mean of its segment scores, written here)."""
    rng = np.random.default_rng(seed)
    d = root / "wmt20"
    for sub in ("sources", "references", f"system-outputs/{lp}", "human-scores", f"metric-scores/{lp}"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources" / f"{lp}.txt").write_text("".join(f"s{i}\n" for i in range(n_seg)))
    for r in ("ref", "refb"):
        (d / "references" / f"{lp}.{r}.txt").write_text("".join(f"{r}{i}\n" for i in range(n_seg)))
    systems = SYSTEMS + ["refb"]
    for s in systems + ["ref"]:
        (d / "system-outputs" / lp / f"{s}.txt").write_text("".join(f"{s} {i}\n" for i in range(n_seg)))
    h = {s: round(float(v), 3) for s, v in zip(systems, rng.normal(size=len(systems)))}
    h["refb"] = 1.5  # the human translation: rated best
    (d / "human-scores" / f"{lp}.wmt-z.sys.score").write_text("".join(f"{s}\t{v!r}\n" for s, v in h.items()))
    seg = {}
    for name in ("BLEU-ref", "BLEU-refb", "COMET-ref", "COMET-refb"):
        scored = [s for s in systems + ["ref"] if s != name.split("-")[1]]  # no score for its own ref
        seg[name] = {s: np.round(h.get(s, 2.0) + rng.normal(size=n_seg), 3) for s in scored}
        (d / "metric-scores" / lp / f"{name}.seg.score").write_text(
            "".join(f"{s}\t{float(x)!r}\n" for s, v in seg[name].items() for x in v))
        (d / "metric-scores" / lp / f"{name}.sys.score").write_text(
            "".join(f"{s}\t{float(np.mean(v))!r}\n" for s, v in seg[name].items()))
    return h, seg


def test_wmt20_preset_failed_on_a_second_reference(tmp_path):
    """The wmt20 preset read every metric variant, so a WMT20 folder with a second reference
    (``refb``) stopped with 'metric variants ... both display as BLEU', and it left the human
    translations out.  mt-metrics-eval's WMT20 system-level task, ``Task(test_set='wmt20',
    level='sys')`` (tasks.py class ``Task``, lines 266-335 at commit 68a481a: ``human=True``,
    ``refs={std_ref}``; data.py ``GetCorrelations`` lines 842-847 and 865-870: systems minus the
    standard reference, human translations kept, metrics on the standard reference only, outliers
    left out) correlates, per metric on ``ref``, the system scores of the MT systems and of
    ``refb``.  Oracle: scipy.stats.pearsonr on the system means of the segment scores written by
    the test."""
    meta_info = mtme("meta_info")
    h, seg = _write_wmt20_two_refs(tmp_path)
    assert meta_info.DATA["wmt20"]["ru-en"].std_ref == "ref"
    res, w = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0)
    r = res[0]
    assert r.task.human == meta_info.WMT20.std_gold["sys"] and w == [1.0]
    kept = [s for s in SYSTEMS + ["refb"] if s not in meta_info.DATA["wmt20"]["ru-en"].outlier_systems]
    assert "refb" in kept and len(kept) == 6
    assert sorted(r.metrics) == ["BLEU", "COMET"]
    for m in ("BLEU", "COMET"):
        want = stats.pearsonr([h[s] for s in kept], [np.mean(seg[f"{m}-ref"][s]) for s in kept]).statistic
        assert r.stat(m) == pytest.approx(want, abs=1e-12)
    # human translations left out on request: the MT systems only
    mt, _ = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, include_human=False)
    only = [s for s in kept if s != "refb"]
    want = stats.pearsonr([h[s] for s in only], [np.mean(seg["BLEU-ref"][s]) for s in only]).statistic
    assert mt[0].stat("BLEU") == pytest.approx(want, abs=1e-12)
    # the other reference on request: refb's metrics; ref, a human translation then, has no
    # wmt-z score, so the systems are the MT systems
    alt, _ = run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", n_resamples=0, refs="refb")
    want = stats.pearsonr([h[s] for s in only], [np.mean(seg["BLEU-refb"][s]) for s in only]).statistic
    assert alt[0].stat("BLEU") == pytest.approx(want, abs=1e-12)
    with pytest.raises(ParameterError, match="include_human=1 must be True or False"):
        run_wmt(tmp_path, "wmt20", ["ru-en"], preset="wmt20", include_human=1)


def test_preset_refs_and_human_translations_are_mt_metrics_eval_tasks():
    """Each preset's defaults against mt-metrics-eval (commit 68a481a): the standard reference
    (meta_info.py ``DATA[testset][lp].std_ref``), the WMT20 standard human score
    (``WMT20.std_gold['sys']``) and the pairs whose human translations the WMT23/WMT24 task sets
    keep (tasks.py ``WMT23``/``WMT24``: ``Task(human=lp in lps_with_multiple_refs)``, read from
    the tasks it builds, tasks.py lines 805-935; tasks.py imports data.py, which needs
    apache_beam, so the check reads the file's text when the import fails)."""
    meta_info = mtme("meta_info")
    from metaeval.data.mtme_meta import STD_REF
    from metaeval.wmt import PRESET_HUMAN, PRESET_HUMAN_TRANSLATIONS

    for ts, lps in STD_REF.items():
        assert lps == {lp: info.std_ref for lp, info in meta_info.DATA[ts].items()}
    assert PRESET_HUMAN["wmt20"] == meta_info.WMT20.std_gold["sys"]
    assert {PRESET_HUMAN["wmt23"], PRESET_HUMAN["wmt24"]} == {
        meta_info.DATA[ts][lp].std_gold["sys"] for ts, lps in (("wmt23", ("en-de", "he-en", "zh-en")),
                                                               ("wmt24", ("en-de", "en-es", "ja-zh")))
        for lp in lps}
    import ast
    from pathlib import Path

    tree = ast.parse((Path(meta_info.__file__).parent / "tasks.py").read_text())
    multi = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in ("WMT23", "WMT24"):
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "lps_with_multiple_refs":
                    multi[fn.name.lower()] = frozenset(ast.literal_eval(node.value))
    assert multi == {"wmt23": PRESET_HUMAN_TRANSLATIONS["wmt23"], "wmt24": PRESET_HUMAN_TRANSLATIONS["wmt24"]}


def test_wmt24_keeps_a_metric_whose_sys_file_lacks_a_system(tmp_path):
    """run_wmt(preset='wmt24') reads only the level its tasks use (segments: SPA and acc_eq
    are computed from segment scores, as mt-metrics-eval's pce task reads 'seg' only, tasks.py
    ``Task.Run`` lines 368-376 at commit 68a481a).  A metric whose ``.sys.score`` file lacks a
    system is therefore kept, with the numbers of a folder whose file is complete; before, the
    system-level files were read too and such a metric was dropped with an MtmeWarning."""
    import shutil
    import warnings

    from test_mtme import make_data, write_layout

    from metaeval.errors import MtmeWarning

    full = tmp_path / "full"
    for k, lp in enumerate(("en-de", "zh-en")):
        hm, m = make_data(k)
        write_layout(full, hm, m, lp=lp)
    gap = tmp_path / "gap"
    shutil.copytree(full, gap)
    f = gap / "wmt99" / "metric-scores" / "en-de" / "BLEU-refA.sys.score"
    f.write_text("".join(ln for ln in f.read_text().splitlines(True) if not ln.startswith("sysB\t")))
    kw = dict(preset="wmt24", refs="refA", n_resamples=20, n_permutations=50, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MtmeWarning)
        got, w = run_wmt(gap, "wmt99", ["en-de", "zh-en"], **kw)
    want, _ = run_wmt(full, "wmt99", ["en-de", "zh-en"], **kw)
    assert "BLEU" in got.average_ranks(w)
    assert [r.task.name for r in got] == [r.task.name for r in want]
    for a, b in zip(got, want):
        assert "BLEU" in a.metrics and a.metrics == b.metrics
        np.testing.assert_array_equal(a.statistics, b.statistics)


def _write_seg_folder(root, testset, lp, rated, outputs, metrics, n_seg=8, seed=2):
    """A segment-level mt-metrics-eval folder: references refA and refB, ``outputs`` systems with
    an output file, ``rated`` of them with MQM scores, one seg and sys file per metric variant
    (every output but the variant's own reference scored)."""
    rng = np.random.default_rng(seed)
    d = root / testset
    for sub in ("sources", "references", f"system-outputs/{lp}", "human-scores", f"metric-scores/{lp}"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources" / f"{lp}.txt").write_text("".join(f"s{i}\n" for i in range(n_seg)))
    for r in ("refA", "refB"):
        (d / "references" / f"{lp}.{r}.txt").write_text("".join(f"{r} {i}\n" for i in range(n_seg)))
    for s in outputs:
        (d / "system-outputs" / lp / f"{s}.txt").write_text("".join(f"{s} {i}\n" for i in range(n_seg)))
    quality = {s: rng.normal() for s in outputs}
    h = {s: np.round(-np.abs(quality[s] + rng.normal(size=n_seg)), 2) for s in rated}
    (d / "human-scores" / f"{lp}.mqm.seg.score").write_text(
        "".join(f"{s}\t{float(x)!r}\n" for s, v in h.items() for x in v))
    (d / "human-scores" / f"{lp}.mqm.sys.score").write_text(
        "".join(f"{s}\t{float(np.mean(v))!r}\n" for s, v in h.items()))
    for name in metrics:
        own = name.rsplit("-", 1)[1]
        seg = {s: np.round(quality[s] + rng.normal(size=n_seg), 3) for s in outputs if s != own}
        (d / "metric-scores" / lp / f"{name}.seg.score").write_text(
            "".join(f"{s}\t{float(x)!r}\n" for s, v in seg.items() for x in v))
        (d / "metric-scores" / lp / f"{name}.sys.score").write_text(
            "".join(f"{s}\t{float(np.mean(v))!r}\n" for s, v in seg.items()))


def test_wmt24_preset_defaults_are_mt_metrics_eval_tasks(tmp_path):
    """The wmt24 preset read every metric variant (two references: 'both display as BLEU') and
    left human translations out.  Now its defaults are tasks.py WMT24's (commit 68a481a): WMT24
    en-de's standard reference refB (meta_info.py) and its human translation refA kept as a
    system (``lps_with_multiple_refs = {'en-de'}``); MSLC, an outlier of WMT24 en-de, left out.
    The default run equals the run with those settings given explicitly."""
    meta_info = mtme("meta_info")
    info = meta_info.DATA["wmt24"]["en-de"]
    assert info.std_ref == "refB" and "MSLC" in info.outlier_systems
    outputs = ["sysA", "sysB", "sysC", "sysD", "MSLC", "refA", "refB"]
    _write_seg_folder(tmp_path, "wmt24", "en-de", rated=["sysA", "sysB", "sysC", "sysD", "MSLC", "refA"],
                      outputs=outputs, metrics=["BLEU-refA", "BLEU-refB", "KIWI-src"])
    kw = dict(preset="wmt24", n_resamples=10, n_permutations=50, rng=2)
    got, _ = run_wmt(tmp_path, "wmt24", ["en-de"], **kw)
    explicit, _ = run_wmt(tmp_path, "wmt24", ["en-de"], refs="refB", include_human=True,
                          include_outliers=False, **kw)
    assert sorted(got[0].metrics) == ["BLEU", "KIWI[noref]"]
    for a, b in zip(got, explicit):
        assert a.metrics == b.metrics
        np.testing.assert_array_equal(a.statistics, b.statistics)
    mt_only, _ = run_wmt(tmp_path, "wmt24", ["en-de"], include_human=False, **kw)
    assert not np.array_equal(mt_only[1].statistics, got[1].statistics)  # refA's segments count
    # a test set meta_info.py does not list has no standard reference: every variant, as before
    import shutil

    shutil.copytree(tmp_path / "wmt24", tmp_path / "wmt99")
    with pytest.raises(ParameterError, match="both display as 'BLEU'"):
        run_wmt(tmp_path, "wmt99", ["en-de"], **kw)


def test_cli_wmt20_preset_used_the_mqm_default_and_could_not_exclude(tmp_path):
    """Review of the merge: `metaeval wmt ROOT wmt20 --preset wmt20` passed the CLI's literal
    `--human mqm` default and failed ('no human-scores/ru-en.mqm...'), and the command had no
    --exclude-systems / --include-outliers. The command now leaves unset options to run_wmt's
    defaults (the preset's standard score) and reaches both; values from scipy.stats.pearsonr."""
    import csv
    import io

    from click.testing import CliRunner

    from metaeval.cli import main

    h, scores = _write_wmt20(tmp_path)

    def bleu(*args):
        r = CliRunner().invoke(main, ["wmt", str(tmp_path), "wmt20", "--lps", "ru-en", "--preset", "wmt20",
                                      "--n-resamples", "0", "--format", "csv", *args])
        assert r.exit_code == 0, r.output
        rows = list(csv.DictReader(io.StringIO(r.output)))
        col = next(c for c in rows[0] if c.startswith("ru-en:") and not c.endswith("_rank"))
        return float(next(row for row in rows if row["metric"] == "BLEU")[col])

    assert bleu() == pytest.approx(_pearson(h, scores["BLEU-ref"], drop={"zlabs-nlp.1164"}), abs=1e-6)
    assert bleu("--include-outliers") == pytest.approx(_pearson(h, scores["BLEU-ref"]), abs=1e-6)
    assert bleu("--exclude-systems", "sysB,sysC") == pytest.approx(
        _pearson(h, scores["BLEU-ref"], drop={"zlabs-nlp.1164", "sysB", "sysC"}), abs=1e-6)
