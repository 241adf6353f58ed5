"""Problems the second blind user run of the command line found (each test fails without its fix)."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from metaeval.cli import main


def _run(*args):
    res = CliRunner().invoke(main, list(args), terminal_width=200)
    return res.exit_code, res.output + (res.stderr if res.stderr_bytes is not None else "")


def _texts_file(tmp_path, name="t.csv"):
    """2 systems x 3 inputs with texts, a metric column with a -1 failure code and 3 rater columns."""
    rows = [dict(system=f"s{s}", input=f"d{i}", hypothesis=f"the cat sat {s} {i}", reference=f"the cat sat {i}",
                 judge=-1 if (s, i) == (0, 0) else 3, coh_r1=1 + (s + i) % 5, coh_r2=1 + (s * i) % 5)
            for s in range(2) for i in range(3)]
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_score_needs_no_human_column(tmp_path):
    """`metaeval score` stopped with '--human is required' (its help does not mark it required, and
    scoring texts reads no human column)."""
    path = _texts_file(tmp_path)
    code, out = _run("score", str(path), "--metrics", "bleu", "--text-cols",
                     "hypothesis=hypothesis,reference=reference", "--format", "csv")
    assert code == 0, out
    assert "is required" not in out
    assert len([ln for ln in out.splitlines() if ln.startswith("bleu,")]) == 6


def test_text_scoring_commands_do_not_flag_the_file_metric_columns(tmp_path):
    """score/perturb with --human printed '3 metric column(s) taken from ... (choose with --metrics)'
    and a failure-code warning about a metric column they never read; for them --metrics names text
    metrics, and judge has no --metrics at all."""
    path = _texts_file(tmp_path)
    code, out = _run("score", str(path), "--human", "coh_r1", "--metrics", "bleu", "--text-cols",
                     "hypothesis=hypothesis,reference=reference", "--format", "csv")
    assert code == 0, out
    assert "taken from" not in out and "FailureCodeWarning" not in out
