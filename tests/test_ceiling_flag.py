"""Issue 23 item 5: a judge above the human-human ceiling is flagged, with the reading it implies,
in every view of `preferences` (table, CSV, JSON) and in the report.

Data: three noisy raters (a true quality q plus large noise per rater) and an "oracle" judge
whose margin is q itself, so the judge agrees with each rater more than the raters agree with
one another.  The reference for acc_23 is written out here: the share of equal labels over
(pair, rater) cells for a judge, over ordered pairs of distinct raters on a pair for the ceiling
(docs/preferences.md, "The human-human ceiling")."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.preferences import PreferenceData, ceiling_note, preference_agreement


def _rows(seed=0, n_inputs=30, n_systems=5, n_raters=3):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_inputs):
        q = rng.normal(size=n_systems)
        for a, b in itertools.combinations(range(n_systems), 2):
            for r in range(n_raters):
                z = q[a] - q[b] + rng.normal(scale=2.0)
                rows.append({"input": f"i{i}", "system_a": f"s{a}", "system_b": f"s{b}", "rater": f"r{r}",
                             "preference": 1.0 if z > 0.3 else (0.0 if z < -0.3 else 0.5)})
            d = q[a] - q[b]
            rows.append({"input": f"i{i}", "system_a": f"s{a}", "system_b": f"s{b}", "judge": "oracle",
                         "preference": 1.0 if d > 0 else (0.0 if d < 0 else 0.5)})
            rows.append({"input": f"i{i}", "system_a": f"s{a}", "system_b": f"s{b}", "judge": "coin",
                         "preference": float(rng.choice([0.0, 0.5, 1.0]))})
    return pd.DataFrame(rows)


def _acc23_reference(df):
    """acc_23 of each judge and of the ceiling, by brute force over the labels."""
    h = df[df.rater.notna()]
    key = ["input", "system_a", "system_b"]
    by_pair = {k: g.set_index("rater").preference.to_dict() for k, g in h.groupby(key)}
    out = {}
    for judge, g in df[df.judge.notna()].groupby("judge"):
        eq = tot = 0
        for r in g.itertuples():
            for lab in by_pair[(r.input, r.system_a, r.system_b)].values():
                eq += lab == r.preference
                tot += 1
        out[judge] = eq / tot
    eq = tot = 0
    for labs in by_pair.values():
        for x, y in itertools.permutations(labs.values(), 2):
            eq += x == y
            tot += 1
    out["human"] = eq / tot
    return out


@pytest.fixture(scope="module")
def frame():
    df = _rows()
    h = df[df.rater.notna()].drop(columns=["judge"])
    j = df[df.judge.notna()].drop(columns=["rater"])
    return df, PreferenceData.from_frames(h, j)


def test_oracle_above_the_ceiling_is_flagged_with_its_reading(frame):
    df, data = frame
    ref = _acc23_reference(df)
    assert ref["oracle"] > ref["human"] > ref["coin"]  # the data do what they are built for
    res = preference_agreement(data, n_resamples=50, rng=0)
    for who in ("oracle", "coin", "human"):
        assert res.get(who, measure="acc_23").statistic == pytest.approx(ref[who], abs=1e-12)
    o = res.get("oracle", measure="acc_23")
    assert o.above_ceiling and o.notes.startswith("above the human-human ceiling")
    assert "not as better than a human" in o.notes
    assert not res.get("coin", measure="acc_23").above_ceiling and res.get("coin", measure="acc_23").notes == ""
    assert not any(r.above_ceiling for r in res if r.judge == "human")
    for r in res:  # the flag is exactly "statistic above the ceiling's, same measure"
        c = res.get("human", measure=r.measure).statistic
        if r.judge != "human":
            assert r.above_ceiling == bool(np.isfinite(r.statistic) and np.isfinite(c) and r.statistic > c)
    eq = res.get("oracle", measure="acc_eq")
    if eq.above_ceiling:
        assert "tie threshold" in eq.notes


def test_ceiling_note_reads_the_intervals():
    assert ceiling_note("kappa_majority", 0.4, 0.3) != "" and ceiling_note("alpha", 0.3, 0.3) == ""
    assert "do not separate" in ceiling_note("acc_23", 0.44, 0.31, (0.25, 0.45), (0.40, 0.48))
    assert "do not overlap" in ceiling_note("acc_23", 0.44, 0.31, (0.25, 0.35), (0.40, 0.48))
    assert ceiling_note("acc_23", float("nan"), 0.31) == ""


def test_every_preferences_view_flags_the_judge(tmp_path, frame):
    df, _ = frame
    path = tmp_path / "prefs.csv"
    df.to_csv(path, index=False)
    args = ["preferences", str(path), "--n-resamples", "30", "--seed", "0"]
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0, table.output
    line = next(ln for ln in table.output.splitlines() if " oracle " in ln)
    assert "*1" in line
    assert any(ln.startswith("*1: oracle above the ceiling on ") and "acc_23" in ln
               for ln in table.output.splitlines())
    assert not any("coin above" in ln for ln in table.output.splitlines())
    js = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).output)
    ag = {(r["judge"], r["measure"]): r for r in js["agreement"]}
    assert ag[("oracle", "acc_23")]["above_ceiling"] is True and "ceiling" in ag[("oracle", "acc_23")]["notes"]
    assert ag[("coin", "acc_23")]["above_ceiling"] is False
    csv = CliRunner().invoke(main, args + ["--format", "csv"]).output
    assert "above_ceiling" in csv.splitlines()[0] or "above_ceiling" in csv
    lines = [ln for ln in csv.splitlines() if ln.startswith("agreement,oracle,acc_23") or ",oracle,acc_23," in ln]
    assert lines and "True" in lines[0] and "above the human-human ceiling" in lines[0]


def test_report_reads_a_metric_above_the_ceiling(frame):
    from metaeval.report._readings import preference_readings

    res = preference_agreement(frame[1], n_resamples=20, rng=0)
    reads = preference_readings(res.to_frame(), {}, "h", "pref-h")
    txt = [r.text for r in reads if "oracle is above the human-human ceiling" in r.text]
    assert txt and "pooled agreement" in txt[0]
    assert not any("coin is above" in r.text for r in reads)
