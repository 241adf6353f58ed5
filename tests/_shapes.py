"""Random dataset shapes and malformed files for the CLI sweep (issues 14 and 18).

``Shape`` describes one long score table: 1-20 systems, 1-50 inputs, 0-5 raters per
cell (0: no rater column; optionally rotating, so that rater labels differ between
cells), 1-3 metrics, 1-2 human dimensions, a missing-cell pattern, a constant column,
ties (scores rounded to a 1-5 scale).  :func:`long_frame` builds it from the shape's
own seed, so a hypothesis example is reproducible from its printed ``Shape``.

:func:`check_run` is the contract every subcommand must keep: exit 0 with bounded
statistics in its JSON/CSV output, or exit 2 with exactly one line
``metaeval: error: ...`` naming a command-line option or the file; never exit 1 and
never a traceback.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from hypothesis import strategies as st

MISSING = ("none", "cells", "system", "input", "metric-system")


@dataclass(frozen=True)
class Shape:
    n_systems: int
    n_inputs: int
    n_raters: int  # 0: one score per cell, no rater column
    rotating: bool  # rater labels rotate over a pool larger than n_raters
    n_metrics: int
    n_humans: int
    missing: str
    constant: str  # "", "human", "metric": that column is constant
    ties: bool
    seed: int

    @property
    def rater_args(self):
        return ["--rater-col", "rater"] if self.n_raters else []

    @property
    def metrics(self):
        return [f"m{k}" for k in range(self.n_metrics)]


@st.composite
def shapes(draw, *, max_systems=20, max_inputs=50, min_systems=1, min_inputs=1):
    """Hypothesis strategy of :class:`Shape`; small sizes are drawn often
    (hypothesis shrinks towards them), so 1-3 systems and one-input tables are
    common."""
    return Shape(
        n_systems=draw(st.integers(min_systems, max_systems)),
        n_inputs=draw(st.integers(min_inputs, max_inputs)),
        n_raters=draw(st.sampled_from([0, 0, 1, 2, 3, 5])),
        rotating=draw(st.booleans()),
        n_metrics=draw(st.integers(1, 3)),
        n_humans=draw(st.integers(1, 2)),
        missing=draw(st.sampled_from(MISSING)),
        constant=draw(st.sampled_from(["", "", "human", "metric"])),
        ties=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )


def long_frame(shape: Shape) -> pd.DataFrame:
    """One row per system x input [x rater]; humans ``human`` (``human2``), metrics
    ``m0``..; metric values agree across the raters of a cell; missing cells are
    NaN (``cells``: 20 % at random; ``system``/``input``: the first one's human
    scores; ``metric-system``: the last system's ``m0``)."""
    rng = np.random.default_rng(shape.seed)
    n, m = shape.n_systems, shape.n_inputs
    quality = rng.normal(size=(n, 1)) + rng.normal(scale=0.7, size=(n, m))
    humans = ["human", "human2"][: shape.n_humans]
    rows = []
    pool = shape.n_raters + 2
    for s in range(n):
        for i in range(m):
            metric = {f"m{k}": quality[s, i] * (k + 1) / 2 + rng.normal() for k in range(shape.n_metrics)}
            raters = range(max(shape.n_raters, 1))
            for j in raters:
                row = {"system": f"S{s}", "input": f"i{i}"}
                if shape.n_raters:
                    row["rater"] = f"r{(s + i + j) % pool}" if shape.rotating else f"r{j}"
                for h in humans:
                    row[h] = quality[s, i] + rng.normal()
                row.update(metric)
                rows.append(row)
    df = pd.DataFrame(rows)
    scores = humans + shape.metrics
    if shape.ties:
        for c in scores:
            df[c] = np.clip(np.round(df[c] + 3), 1, 5)
    if shape.constant == "human":
        df["human"] = 3.0
    elif shape.constant == "metric":
        df["m0"] = 0.5
    if shape.missing == "cells":
        for c in scores:
            df.loc[rng.random(len(df)) < 0.2, c] = np.nan
    elif shape.missing == "system":
        df.loc[df["system"] == "S0", humans] = np.nan
    elif shape.missing == "input":
        df.loc[df["input"] == "i0", humans] = np.nan
    elif shape.missing == "metric-system":
        df.loc[df["system"] == f"S{n - 1}", "m0"] = np.nan
    return df


def preference_frame(shape: Shape) -> pd.DataFrame:
    """Pairwise preferences of the shape's systems: every input, every system pair,
    ``max(n_raters, 1)`` human raters (0 / 0.5 / 1) and one judge per metric
    (preference in [0, 1])."""
    rng = np.random.default_rng(shape.seed)
    rows = []
    n_raters = max(shape.n_raters, 1)
    for i in range(shape.n_inputs):
        for a in range(shape.n_systems):
            for b in range(a + 1, shape.n_systems):
                base = {"input": f"i{i}", "system_a": f"S{a}", "system_b": f"S{b}"}
                for j in range(n_raters):
                    p = rng.choice([0.0, 0.5, 1.0]) if shape.constant != "human" else 1.0
                    rows.append({**base, "rater": f"r{j}", "judge": "", "preference": p,
                                 "length_a": int(rng.integers(1, 200)), "length_b": int(rng.integers(1, 200))})
                for k in range(shape.n_metrics):
                    p = float(rng.random()) if not shape.ties else float(rng.choice([0.0, 0.5, 1.0]))
                    if shape.missing == "cells" and rng.random() < 0.2:
                        p = float("nan")
                    rows.append({**base, "rater": "", "judge": f"J{k}", "preference": p})
    return pd.DataFrame(rows, columns=["input", "system_a", "system_b", "rater", "judge", "preference",
                                       "length_a", "length_b"])


# ----------------------------------------------------------------------------- malformed files
GOOD = "system,input,human,chrf,bleu\n" + "".join(
    f"S{s},i{i},{(s * 7 + i * 3) % 5 + 1 + s},{(s + i * i) % 6},{((s * 5 + i) % 7) / 7:.3f}\n"
    for s in range(4) for i in range(5))


def _rows(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def malformed_files() -> dict[str, tuple[str, bytes]]:
    """Malformed inputs of issue 18.5/18.7: name -> (file name, bytes).  Each is a
    4-system x 5-input table (``human``, ``chrf``, ``bleu``) broken in one way."""
    lines = _rows(GOOD)
    gz = gzip.compress(("system,input,human,bleu\n" + "S0,x,1,0.5\nS1,x,2,0.7\n" * 2000).encode())
    deep = "[" * 50_000 + "]" * 50_000
    jsonl = "".join(json.dumps({"system": f"S{s}", "input": f"i{i}", "human": s + i, "bleu": s * i / 10})
                    + "\n" for s in range(4) for i in range(5))
    long_name = "x" * 250
    files = {
        "repeated-header": ("scores.csv", (lines[0] + "".join(lines[1:11]) + lines[0] + "".join(lines[11:])).encode()),
        "repeated-column": ("scores.csv", GOOD.replace("chrf,bleu", "chrf,chrf", 1).encode()),
        "short-row": ("scores.csv", (GOOD + "S9,i9,3\n").encode()),
        "long-row": ("scores.csv", (GOOD + "S9,i9,3,1,0.5,0.7\n").encode()),
        "cut-mid-line": ("scores.csv", GOOD[: GOOD.rindex("\n", 0, len(GOOD) - 1) + 6].encode()),
        "bare-cr-in-field": ("scores.csv", GOOD.replace("S1,i2,", '"S1\rx",i2,', 1).encode()),
        "bare-cr-lines": ("scores.csv", GOOD.replace("\n", "\r").encode()),
        "truncated-gz": ("scores.csv.gz", gz[: len(gz) // 2]),
        "latin-1": ("scores.csv", GOOD.replace("i3", "caf\xe9").encode("latin-1")),
        "utf8-bom": ("scores.csv", b"\xef\xbb\xbf" + GOOD.encode()),
        "empty": ("scores.csv", b""),
        "header-only": ("scores.csv", lines[0].encode()),
        "nul-byte": ("scores.csv", GOOD.replace("0.143", "0.1\x0043", 1).encode()),
        "text-score": ("scores.csv", GOOD.replace(",0.143\n", ",high\n", 1).encode()),
        "jsonl-1e400": ("scores.jsonl", jsonl.replace('"human": 0,', '"human": 1' + "0" * 400 + ",", 1).encode()),
        "jsonl-1e309-float": ("scores.jsonl", jsonl.replace('"human": 0,', '"human": 1e309,', 1).encode()),
        "jsonl-deep": ("scores.jsonl", jsonl.replace('"human": 0,', f'"human": {deep},', 1).encode()),
        "jsonl-not-object": ("scores.jsonl", (jsonl + "[1, 2]\n").encode()),
        "jsonl-bad-json": ("scores.jsonl", (jsonl + '{"system": "S9", \n').encode()),
        "markup-names": ("scores.csv", GOOD.replace("bleu", "[/bold]").replace("S1,", "[red]S1[/red],")
                         .replace("i2,", "[/]i2,").encode()),
        "escape-names": ("scores.csv", GOOD.replace("bleu", "\x1b[2Jbleu").replace("S2,", "\x1b]0;t\x07S2,")
                         .encode()),
        "formula-names": ("scores.csv", GOOD.replace("bleu", "=cmd()").replace("S3,", "=HYPERLINK(1),")
                          .replace("i4,", "@sum,").encode()),
        "slash-name": ("scores.csv", GOOD.replace("bleu", "a/b/../c").replace("S0,", "S/0,").encode()),
        "long-name": ("scores.csv", GOOD.replace("bleu", long_name).replace("S0,", "S" + "y" * 250 + ",").encode()),
        "duplicate-key": ("scores.csv", (GOOD + lines[1]).encode()),
        "inf-score": ("scores.csv", GOOD.replace(",0.143\n", ",inf\n", 1).encode()),
    }
    return files


# ----------------------------------------------------------------------------- the contract
#: Output fields with a known range, by (command, field); "*" matches every command.
#: A field's range applies wherever it appears in the JSON (nested records too).
UNIT = (0.0, 1.0)
CORR = (-1.0, 1.0)
BOUNDS = {
    ("*", "pvalue"): UNIT, ("*", "pvalue_adjusted"): UNIT, ("*", "confidence_level"): UNIT,
    ("*", "tie_share"): UNIT, ("*", "cramers_v"): UNIT, ("*", "dp"): UNIT, ("*", "rc"): CORR,
    ("*", "tau"): CORR, ("*", "rho_sys"): CORR, ("*", "mu_rho_item"): CORR,
    ("*", "sample_correlation"): CORR,
    ("correlate", "statistic"): CORR, ("correlate", "ci_low"): CORR, ("correlate", "ci_high"): CORR,
    ("compare", "statistic_a"): CORR, ("compare", "statistic_b"): CORR, ("compare", "statistic"): (-2.0, 2.0),
    ("simulate", "statistic"): CORR,
    ("local", "statistic"): UNIT, ("local", "ci_low"): UNIT, ("local", "ci_high"): UNIT,
    ("reliability", "statistic"): (-math.inf, 1.0),
    ("validity", "statistic"): CORR,
    ("preferences", "acc_23"): UNIT, ("preferences", "acc_eq"): UNIT,
}
#: Nested JSON sections whose "statistic" is a correlation (diagnose, compare's ranking).
CORR_SECTIONS = {"meta_correlation", "sample_size", "correlation_design", "ranking", "ks"}


def _numbers(obj, section=""):
    """Yield (section, record, key, value) for every number in parsed JSON."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)):
                yield from _numbers(v, k)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                yield section, obj, k, float(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v, section)


def _reject_constant(name):
    raise AssertionError(f"bare {name} in JSON output (not valid JSON; NaN must be null)")


def check_numbers(command: str, records, where: str) -> int:
    """Assert the ranges of :data:`BOUNDS` and ``ci_low <= ci_high``; no value is
    +-inf except Spearman-Brown ``*_needed`` fields.  Returns how many numbers were
    checked."""
    count = 0
    for section, rec, key, v in _numbers(records):
        count += 1
        if math.isnan(v):
            continue
        if math.isinf(v):
            assert "needed" in key, f"{where}: {section}.{key} = {v}"
            continue
        lo, hi = BOUNDS.get((command, key), BOUNDS.get(("*", key), (-math.inf, math.inf)))
        if key.startswith("pvalue") or key.endswith("_pvalue"):
            lo, hi = UNIT
        if command == "local" and key == "statistic" and section not in ("accuracy", "overall"):
            lo, hi = (0.0, math.inf) if section == "chi2" else (-math.inf, math.inf)
        if command == "validity" and key == "statistic" and rec.get("block") == "reliability":
            lo, hi = -math.inf, 1.0  # the MTMM diagonal is Cronbach's alpha: at most 1, unbounded below
        if key == "statistic" and section in CORR_SECTIONS:
            lo, hi = (0.0, 1.0) if section == "ks" else CORR
        assert lo - 1e-9 <= v <= hi + 1e-9, f"{where}: {section}.{key} = {v!r} outside [{lo}, {hi}] in {rec}"
    for section, rec, key, v in _numbers(records):
        if key == "ci_low" and isinstance(rec.get("ci_high"), (int, float)):
            lo, hi = float(v), float(rec["ci_high"])
            if not (math.isnan(lo) or math.isnan(hi)):
                assert lo <= hi + 1e-12, f"{where}: {section} ci_low {lo} > ci_high {hi} in {rec}"
    return count


_ERROR = re.compile(r"^metaeval: error: .+\n\Z")
_WARNING = re.compile(r"^metaeval: (warning \(\w+\)|note): .+\n\Z")
_OPTION = re.compile(r"--[a-z][a-z0-9-]*|\bDATA\b|\bROOT\b")


def check_run(res, command: str, fmt: str = "json", files=()):
    """The sweep's contract for one CliRunner result (see the module docstring).
    Returns the parsed output (exit 0) or the error line (exit 2)."""
    where = f"`metaeval {command}`"
    assert res.exit_code in (0, 2), (
        f"{where}: exit {res.exit_code}; exception {res.exception!r}\nstderr: {res.stderr[-2000:]}")
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, f"{where}: {res.stderr[-2000:]}"
    if res.exit_code == 2:
        # grouped warnings come first (test_cli_hostile: printed before the error line)
        lines = res.stderr.splitlines(keepends=True)
        assert all(_WARNING.match(line) for line in lines[:-1]), f"{where}: stray stderr lines:\n{res.stderr}"
        err = lines[-1] if lines else ""
        assert _ERROR.match(err), f"{where}: not one `metaeval: error:` line:\n{res.stderr}"
        names = [str(f) for f in files] + [getattr(f, "name", "") for f in files]
        assert _OPTION.search(err) or any(n and n in err for n in names), (
            f"{where}: the error names no option and no file: {err}")
        return err
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout, f"{where}: a terminal escape reached stdout"
    if fmt == "json":
        out = json.loads(res.stdout, parse_constant=_reject_constant)
        check_numbers(command, out, where)
        return out
    if fmt == "csv":
        frame = pd.read_csv(io.StringIO(res.stdout))
        for c in frame.columns:
            bad = frame[c].astype(str).str.match(r"^[=+@]")
            assert not bad.any(), f"{where}: CSV cell can run as a formula: {frame[c][bad].tolist()}"
        nums = frame.select_dtypes("number").to_dict("records")
        check_numbers(command, nums, where)
        return frame
    return res.stdout


# ----------------------------------------------------------------------------- mt-metrics-eval folders
def write_mtme(root, shape: Shape, *, lp="en-de", testset="wmt99"):
    """An mt-metrics-eval folder (layout of github.com/google-research/mt-metrics-eval,
    README "File organization") for the shape: ``shape.n_systems`` systems plus the
    reference ``refA``, ``shape.n_inputs`` segments in 2 documents, MQM segment and
    system scores (NaN -> ``None`` where ``shape.missing`` says), metrics ``m{k}-refA``
    (segment and system files).  Returns the root."""
    from pathlib import Path

    rng = np.random.default_rng(shape.seed)
    d = Path(root) / testset
    n, m = shape.n_systems, shape.n_inputs
    for sub in ("sources", "references", f"system-outputs/{lp}", "human-scores", f"metric-scores/{lp}",
                "documents"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources" / f"{lp}.txt").write_text("".join(f"source {j}\n" for j in range(m)))
    (d / "references" / f"{lp}.refA.txt").write_text("".join(f"ref {j}\n" for j in range(m)))
    systems = [f"S{s}" for s in range(n)] + ["refA"]
    for s in systems:
        (d / "system-outputs" / lp / f"{s}.txt").write_text("".join(f"{s} out {j}\n" for j in range(m)))
    (d / "documents" / f"{lp}.docs").write_text("".join(f"news doc{2 * j // m}\n" for j in range(m)))

    def num(v):
        return "None" if v is None or not np.isfinite(v) else repr(float(v))

    human = -np.round(rng.gamma(1.0, 3.0, size=(len(systems), m)), 0 if shape.ties else 2)
    if shape.constant == "human":
        human[:] = -1.0
    if shape.missing == "cells":
        human[rng.random(human.shape) < 0.25] = np.nan
    elif shape.missing == "system":
        human[0] = np.nan
    elif shape.missing == "input":
        human[:, 0] = np.nan
    hs = d / "human-scores"
    hs.joinpath(f"{lp}.mqm.seg.score").write_text(
        "".join(f"{s}\t{num(human[i, j])}\n" for i, s in enumerate(systems) for j in range(m)))
    hs.joinpath(f"{lp}.mqm.sys.score").write_text(
        "".join(f"{s}\t{num(np.nanmean(human[i]) if np.isfinite(human[i]).any() else None)}\n"
                for i, s in enumerate(systems)))
    md = d / "metric-scores" / lp
    for k in range(shape.n_metrics):
        x = 0.1 * np.nan_to_num(human) + rng.normal(size=human.shape)
        if shape.constant == "metric" and k == 0:
            x[:] = 0.5
        own = [i for i, s in enumerate(systems) if s != "refA"]  # no score for its own reference
        md.joinpath(f"m{k}-refA.seg.score").write_text(
            "".join(f"{systems[i]}\t{num(x[i, j])}\n" for i in own for j in range(m)))
        md.joinpath(f"m{k}-refA.sys.score").write_text(
            "".join(f"{systems[i]}\t{num(x[i].mean())}\n" for i in own))
    return Path(root)
