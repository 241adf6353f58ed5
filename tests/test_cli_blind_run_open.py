"""The findings a blind run of the command line on generated data left open (issue 25/26 stop note).

Each test generates its own data (rotating raters, raters in columns, sparse cells, 2-3 systems),
is named after the problem it pins, and fails without its fix. Expected numbers come from scipy
on the generated cells.
"""

from __future__ import annotations

import io
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import metaeval
from metaeval.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _rotating(tmp_path, n_systems=3, n_inputs=8, seed=0):
    """A long file: each cell rated by 3 of 7 raters in rotation, metric values repeated on each
    rater row; returns the path and the cells (rater means) as a frame."""
    g = np.random.default_rng(seed)
    rows = []
    for s in range(n_systems):
        q = g.normal()
        for i in range(n_inputs):
            bleu = float(1 / (1 + np.exp(-(q + g.normal()))))
            chrf = float(1 / (1 + np.exp(-(q + g.normal()))))
            for r in range(3):
                rows.append({"system": f"s{s}", "input": f"i{i}", "rater": f"w{(s + i + r) % 7}",
                             "quality": float(np.clip(np.round(3 + q + g.normal()), 1, 5)), "bleu": bleu,
                             "chrf": chrf})
    df = pd.DataFrame(rows)
    path = tmp_path / "rotating.csv"
    df.to_csv(path, index=False)
    cells = df.groupby(["system", "input"], as_index=False).agg(
        quality=("quality", "mean"), bleu=("bleu", "first"), chrf=("chrf", "first"))
    return path, cells


# --------------------------------------------------------------------------- finding 1


def test_level_item_printed_by_the_outputs_was_refused_by_level(tmp_path):
    """correlate's table, CSV, JSON and signature print the level `item`, which `--level item`
    refused (it asked for group-by-system): what an output prints can be typed back, with the
    same numbers, and typing `item` says which grouping it is (not mt-metrics-eval's)."""
    path, cells = _rotating(tmp_path)
    base = ["correlate", path, "--human", "quality", "--rater", "rater", "--metrics", "bleu",
            "--ci", "none", "--pvalue", "none"]
    res = run(*base, "--level", "group-by-system", "--format", "csv")
    assert res.exit_code == 0, res.output
    first = pd.read_csv(io.StringIO(res.stdout))
    printed = first.level[0]
    assert printed == "item" and "|level:item|" in first.signature[0]
    table = run(*base, "--level", "group-by-system")
    assert table.exit_code == 0 and " item " in table.stdout
    back = run(*base, "--level", printed, "--format", "json")
    assert back.exit_code == 0, back.output
    rec = json.loads(back.stdout)[0]
    assert rec["level"] == "item" and rec["statistic"] == first.statistic[0]
    # item level: per system, Pearson across its inputs, macro-averaged (scipy)
    want = np.mean([stats.pearsonr(g.bleu, g.quality).statistic for _, g in cells.groupby("system")])
    assert rec["statistic"] == pytest.approx(want, abs=1e-12)
    assert "mt-metrics-eval's 'item' grouping" in back.stderr and "is level 'input'" in back.stderr
    # the default (all four levels) says nothing about item; --quiet hides the note
    assert "mt-metrics-eval" not in run(*base, "--level", "system,group-by-system").stderr
    assert "mt-metrics-eval" not in run(*base, "--level", "item", "--quiet").stderr
    # measures prints item:... measure rows, which --measures takes back
    meas = run("measures", path, "--human", "quality", "--rater", "rater", "--level", "group-by-system",
               "--method", "pearson", "--n-resamples", 20, "--n-splits", 0, "--rng", 0, "--format", "csv")
    assert meas.exit_code == 0, meas.output
    lv = pd.read_csv(io.StringIO(meas.stdout)).level[0]
    assert lv == "item"
    again = run("measures", path, "--human", "quality", "--rater", "rater", "--measures", f"{lv}:pearson",
                "--n-resamples", 20, "--n-splits", 0, "--rng", 0, "--format", "csv")
    assert again.exit_code == 0, again.output
    assert again.stdout == meas.stdout


# --------------------------------------------------------------------------- finding 2


def _wide_with_codes(tmp_path, share=0.15, seed=1):
    """Raters in columns (coh_r1..3, a 1-5 scale) and a metric in [0, 1], each with the failure
    code -1 on about ``share`` of its cells (well above the 5% the few-codes rule allows)."""
    g = np.random.default_rng(seed)
    rows = []
    for s in range(3):
        q = g.normal()
        for i in range(30):
            row = {"system": f"s{s}", "input": f"i{i}", "bleu": float(1 / (1 + np.exp(-(q + g.normal()))))}
            for r in range(3):
                row[f"coh_r{r + 1}"] = float(np.clip(np.round(3 + q + g.normal()), 1, 5))
            rows.append(row)
    df = pd.DataFrame(rows)
    df.loc[g.random(len(df)) < 3 * share, "coh_r1"] = -1  # 1 rater of 3: ~share of the ratings
    df.loc[g.random(len(df)) < share, "bleu"] = -1
    path = tmp_path / "codes.csv"
    df.to_csv(path, index=False)
    return path, df


def test_failure_codes_on_more_than_5_percent_were_used_as_scores_without_a_warning(tmp_path):
    """A 1-5 human column (raters in columns) and a metric in [0, 1] holding -1 on 10-20% of their
    values were used as scores in silence (the few-codes rule stops at 5%, and looks at integer
    scales only). Now a FailureCodeWarning (an OutOfScaleWarning) names each column, the code, its
    share and how to make it missing: the keyword in the API, the option on the command line."""
    from metaeval.data._scale import scale_codes, sentinel_codes
    from metaeval.errors import FailureCodeWarning, OutOfScaleWarning

    path, df = _wide_with_codes(tmp_path)
    ratings = df[["coh_r1", "coh_r2", "coh_r3"]].to_numpy()
    share_h = (ratings == -1).mean()
    share_m = (df.bleu == -1).mean()
    assert share_h > 0.05 and share_m > 0.05
    assert scale_codes(ratings) is None  # beyond the few-codes rule
    assert sentinel_codes(ratings)[2] == {-1.0: int((ratings == -1).sum())}
    # the API
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metaeval.read_dataset(path, human="coherence", raters={"coherence": ["coh_r1", "coh_r2", "coh_r3"]})
    hits = [w for w in caught if issubclass(w.category, OutOfScaleWarning)]
    assert [w.category for w in hits] == [FailureCodeWarning]
    msg = str(hits[0].message)
    assert "'coherence' has -1" in msg and "'bleu' has -1" in msg
    assert f"on {100 * share_m:.3g}% of its values" in msg
    assert "missing_values={'coherence': [-1]}" in msg and "missing_values={'bleu': [-1]}" in msg
    # the command line: the same warning with the options, counted once
    base = ["correlate", path, "--raters", "coherence=coh_r*", "--human", "coherence", "--metrics", "bleu",
            "--level", "global", "--ci", "none", "--format", "csv"]
    res = run(*base)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if "FailureCodeWarning" in ln]
    assert len(lines) == 1 and not re.search(r"\(x\d+(, first shown)?\)$", lines[0]), res.stderr
    assert "'coherence' has -1 on" in lines[0] and "'bleu' has -1 on" in lines[0]
    assert "--missing-values coherence=-1" in lines[0] and "--missing-values bleu=-1" in lines[0]
    # the fix it names: the codes become missing, no warning, and the correlation is scipy's on
    # the cells without codes (human: mean of the raters left)
    res = run(*base, "--missing-values", "coherence=-1", "--missing-values", "bleu=-1")
    assert res.exit_code == 0 and "Warning" not in res.stderr, res.stderr
    got = pd.read_csv(io.StringIO(res.stdout)).statistic[0]
    h = df[["coh_r1", "coh_r2", "coh_r3"]].where(lambda d: d != -1).mean(axis=1)
    m = df.bleu.where(df.bleu != -1)
    keep = h.notna() & m.notna()
    assert got == pytest.approx(stats.pearsonr(m[keep], h[keep]).statistic, abs=1e-12)


def test_sentinel_rule_flags_inserted_codes_and_no_clean_scale():
    """Random integer scales (bottom 0 or 1, 2-11 points) and [0, 1] metrics are never flagged;
    -1/-99/999 inserted on 6-40% of the values are reported with their exact counts, except -1 on
    a 0-1 or 0-2 scale; scales that run through 0 (-1..1, -2..2) are scales, not codes."""
    from metaeval.data._scale import sentinel_codes

    rng = np.random.default_rng(11)
    for _ in range(200):
        lo = int(rng.integers(0, 2))
        hi = lo + int(rng.integers(1, 11))
        x = rng.integers(lo, hi + 1, size=int(rng.integers(100, 400))).astype(float)
        continuous = rng.random() < 0.3
        if continuous:
            x = rng.random(x.size)
        assert sentinel_codes(x) is None
        code = float(rng.choice([-1.0, -99.0, 999.0]))
        y = x.copy()
        pos = rng.choice(y.size, size=int(rng.uniform(0.06, 0.4) * y.size), replace=False)
        y[pos] = code
        got = sentinel_codes(y)
        if code == -1 and not continuous and lo == 0 and hi <= 2:
            assert got is None  # -1 on 0-1 or 0-2 reads as a -1..1 or -1..2 scale: left alone
        else:
            assert got is not None and got[2] == {code: pos.size}
    for k in (1, 2):
        assert sentinel_codes(np.tile(np.arange(-k, k + 1.0), 20)) is None


# --------------------------------------------------------------------------- finding 3


def _sparse_three_systems(tmp_path, seed=3):
    """3 systems x 30 inputs, raters in columns; bleu missing on ~35% of the cells, so that many
    inputs are left with 2 systems."""
    g = np.random.default_rng(seed)
    rows = []
    for s in range(3):
        q = g.normal()
        for i in range(30):
            row = {"system": f"s{s}", "input": f"i{i}",
                   "bleu": float(1 / (1 + np.exp(-(q + g.normal())))) if g.random() > 0.35 else np.nan}
            for r in range(3):
                row[f"coh_r{r + 1}"] = float(np.clip(np.round(3 + q + g.normal()), 1, 5))
            rows.append(row)
    df = pd.DataFrame(rows)
    path = tmp_path / "sparse3.csv"
    df.to_csv(path, index=False)
    df["coherence"] = df[["coh_r1", "coh_r2", "coh_r3"]].mean(axis=1)
    return path, df


def test_input_groups_of_two_systems_got_no_small_design_warning(tmp_path):
    """On a 3-system file with sparse cells, inputs scored for only 2 systems gave Pearson +-1
    each, averaged in without a word (only a dataset of 2 systems was warned about). Now a
    TwoPointWarning counts them, and the result has n_two_points."""
    from metaeval.errors import SmallSampleWarning, TwoPointWarning

    path, df = _sparse_three_systems(tmp_path)
    # the groups of two valid pairs with distinct scores on both sides (pandas)
    valid = df.dropna(subset=["bleu"])
    per = valid.groupby("input").agg(n=("bleu", "size"), nb=("bleu", "nunique"), nh=("coherence", "nunique"))
    two = per[(per.n == 2) & (per.nb == 2) & (per.nh == 2)].index
    assert 3 <= len(two) < 30
    ds = metaeval.read_dataset(path, human="coherence", raters={"coherence": ["coh_r1", "coh_r2", "coh_r3"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = metaeval.correlate(ds, "coherence", metrics=["bleu"], level="input", ci="none")
    r = res[0]
    assert r.n_two_points == len(two)
    hits = [str(w.message) for w in caught if w.category is TwoPointWarning]
    assert len(hits) == 1 and f"{len(two)} of 30 input groups have scores of only 2 systems" in hits[0]
    assert issubclass(TwoPointWarning, SmallSampleWarning)
    # those groups' statistics are +-1 (the closed form of two points)
    g = pd.Series(r.group_statistics, index=list(ds.inputs))
    assert np.allclose(np.abs(g[two]), 1.0, atol=1e-12)
    # the command line: the warning, and the count in the CSV/JSON
    res = run("correlate", path, "--raters", "coherence=coh_r*", "--human", "coherence", "--metrics", "bleu",
              "--level", "input", "--ci", "none", "--format", "csv")
    assert res.exit_code == 0, res.output
    assert "TwoPointWarning" in res.stderr and "counted in n_two_points" in res.stderr
    assert pd.read_csv(io.StringIO(res.stdout)).n_two_points[0] == len(two)
    # a dataset of 2 systems: the one warning for the level, not a second one for its groups
    two_sys = tmp_path / "two.csv"
    df[df.system != "s2"].drop(columns="coherence").to_csv(two_sys, index=False)
    ds2 = metaeval.read_dataset(two_sys, human="coherence", raters={"coherence": ["coh_r1", "coh_r2", "coh_r3"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metaeval.correlate(ds2, "coherence", metrics=["bleu"], level="input", ci="none")
    hits = [str(w.message) for w in caught if w.category is TwoPointWarning]
    assert len(hits) == 1 and "correlates across 2 systems only" in hits[0]


# --------------------------------------------------------------------------- finding 4


def test_undefined_resamples_were_counted_of_twice_the_resamples_asked_for(tmp_path):
    """With a bootstrap interval and a permutation p-value, the warning said "111 of 400 resampled
    values" after --n-resamples 200: it pooled the two draws. Each count is now stated against
    the 200 asked for, with how many each of the interval and the p-value uses."""
    path, cells = _rotating(tmp_path, n_systems=2, n_inputs=20, seed=4)
    base = ["correlate", path, "--human", "quality", "--rater", "rater", "--metrics", "bleu", "--level", "input",
            "--n-resamples", 200, "--rng", 0, "--format", "json"]
    res = run(*base, "--pvalue", "permutation")
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)[0]
    line = next(ln for ln in res.stderr.splitlines() if "UndefinedStatisticWarning" in ln)
    assert "of 400" not in line
    # the same run through the API: the two counts from the kept replicates
    ds = metaeval.read_dataset(path, human="quality", rater="rater")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = metaeval.correlate(ds, "quality", metrics=["bleu"], level="input", pvalue="permutation",
                               n_resamples=200, rng=0)[0]
    kb, kp = int(np.isnan(r.distribution).sum()), int(np.isnan(r.null_distribution).sum())
    assert kb > 10 and r.n_resamples_nan == kb + kp == rec["n_resamples_nan"]
    assert (f"in {kb} of the 200 bootstrap resamples and {kp} of the 200 permutations" in line
            and f"the interval uses the {200 - kb} defined bootstrap resamples" in line
            and f"the p-value uses the {200 - kp} defined permutations" in line), line
    # the interval is the percentile interval of the defined replicates (numpy, independently)
    finite = r.distribution[np.isfinite(r.distribution)]
    assert finite.size == 200 - kb
    assert rec["ci_low"] == pytest.approx(np.percentile(finite, 2.5), abs=1e-12)
    # one draw only: its count against the 200 asked for
    res = run(*base)
    line = next(ln for ln in res.stderr.splitlines() if "UndefinedStatisticWarning" in ln)
    kb1 = json.loads(res.stdout)[0]["n_resamples_nan"]
    assert f"in {kb1} of the 200 bootstrap resamples;" in line and "counted in n_resamples_nan" in line


# --------------------------------------------------------------------------- finding 5


def test_quiet_hid_the_warning_that_explains_a_row_of_dashes(tmp_path):
    """`--quiet` dropped every warning, so a row of dashes (a metric constant in every input group:
    its coefficient is NaN) came with no reason. --quiet now hides progress, notes and estimates;
    the warnings stay."""
    path, cells = _rotating(tmp_path, n_systems=3, n_inputs=8, seed=5)
    df = pd.read_csv(path)
    df["flat"] = df.input.str[1:].astype(float) / 10  # one value per input: constant in each input group
    df.to_csv(path, index=False)
    base = ["correlate", path, "--human", "quality", "--rater", "rater", "--level", "input", "--ci", "none"]
    res = run(*base, "--quiet")  # no --metrics: the note that names the metric columns is hidden
    assert res.exit_code == 0, res.output
    row = next(ln for ln in res.stdout.splitlines() if ln.startswith("│ flat "))
    cols = [c.strip() for c in row.strip("│").split("│")]
    assert cols[1] == "-"  # the statistic is NaN
    assert "note:" not in res.stderr
    line = next(ln for ln in res.stderr.splitlines() if "ConstantInputWarning" in ln)
    assert "'flat'" in line and "8 of 8 input groups have constant scores" in line
    # the API says the same: every group constant (pandas: one value of flat per input)
    assert (df.groupby("input").flat.nunique() == 1).all()
    ds = metaeval.read_dataset(path, human="quality", rater="rater")
    with pytest.warns(metaeval.ConstantInputWarning, match="'flat'"):
        r = metaeval.correlate(ds, "quality", metrics=["flat"], level="input", ci="none")[0]
    assert np.isnan(r.statistic) and r.n_constant == 8
    # the --help says what --quiet hides and what it keeps
    help_text = " ".join(run("correlate", "--help").output.split())
    assert "No progress bars, notes or cost estimates. Warnings are still printed" in help_text


# --------------------------------------------------------------------------- seen on the way


def test_measures_split_messages_named_the_old_splits_spelling(tmp_path):
    """`measures --n-splits 5` with 2 metrics answered "Invalid value for --splits: ... pass --splits 0",
    the hidden old spelling of the option the user typed."""
    path, _ = _rotating(tmp_path)
    res = run("measures", path, "--human", "quality", "--rater", "rater", "--n-resamples", 10, "--n-splits", 5)
    assert res.exit_code == 2
    assert "Invalid value for --n-splits" in res.output and "pass --n-splits 0" in res.output, res.output
    assert "--splits" not in res.output.replace("--n-splits", ""), res.output
