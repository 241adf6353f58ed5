"""Issue 13 item 4: one lower-is-better rule (metaeval.direction) for the API and the CLI.

Before, only the ``local`` command guessed TER/WER-like columns as
lower-is-better; ``metaeval.local.local_pairs`` took every column as
higher-is-better, so the two formed different pairs from one file.  Expected
values are hand counts on constructed data: WER = 5 - human orders every pair
exactly as the human scores (accuracy 1 when read as lower-is-better, 0 when
read the other way)."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import metaeval
from metaeval import local as lc
from metaeval.cli import main
from metaeval.direction import lower_is_better_names, resolve_lower_is_better
from metaeval.errors import AssumedDirectionWarning, DataError


def _frame():
    rows = []
    for s in range(3):
        for i in range(6):
            h = float((s * 7 + i * 3) % 5 + 1)
            rows.append({"system": f"s{s}", "input": f"i{i}", "human": h, "WER": 5.0 - h, "m2": h,
                         "domain": "a" if i < 3 else "b"})
    return pd.DataFrame(rows)


def test_names_are_the_registry_lower_is_better_text_metrics():
    from metaeval.textmetrics import METRICS

    want = {n.lower() for n, e in METRICS.items() if not e.factory.higher_is_better}
    assert lower_is_better_names() == want and {"ter", "wer", "cer"} <= want


def test_rule_explicit_wins_none_infers_and_warns():
    assert resolve_lower_is_better(["bleu", "TER"], ()) == ()
    assert resolve_lower_is_better(["bleu", "TER"], "none") == ()
    assert resolve_lower_is_better(["bleu", "TER", "m"], ["m"]) == ("m",)
    with pytest.warns(AssumedDirectionWarning, match="taking TER as lower-is-better"):
        assert resolve_lower_is_better(["bleu", "TER"]) == ("TER",)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_lower_is_better(["bleu", "chrf"]) == ()  # nothing inferred: silent
    with pytest.raises(DataError, match="lower_is_better names 'x'"):
        resolve_lower_is_better(["bleu"], ["x"])


def test_api_and_cli_form_the_same_pairs(tmp_path):
    frame = _frame()
    path = tmp_path / "h.csv"
    frame.to_csv(path, index=False)
    ds = metaeval.Dataset.from_frame(frame, human=["human"], metrics=["WER", "m2"], contexts=["domain"])
    with pytest.warns(AssumedDirectionWarning, match="WER"):
        pairs = lc.local_pairs(ds, context="domain", human="human")
    assert pairs.lower_is_better == ("WER",)
    api = lc.local_accuracy(pairs).to_frame()
    assert (api[api.metric == "WER"].statistic == 1.0).all()  # hand count: every pair correct
    res = CliRunner().invoke(main, ["local", str(path), "--human", "human", "--metrics", "WER,m2",
                                    "--contexts", "domain", "--context", "domain", "--seed", "0",
                                    "--tau-resamples", "9", "--chi2-resamples", "9", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert "taking WER as lower-is-better" in res.stderr
    cli = pd.DataFrame(json.loads(res.stdout)["accuracy"])
    merged = api.merge(cli, on=["metric", "context"], suffixes=("_api", "_cli"))
    assert len(merged) == len(api) == len(cli)
    np.testing.assert_array_equal(merged.statistic_api, merged.statistic_cli)
    assert all("lower:WER" in s for s in cli.signature)
    # explicit none: both read WER as higher-is-better (every pair wrong)
    none = lc.local_accuracy(lc.local_pairs(ds, context="domain", human="human", lower_is_better=())).to_frame()
    assert (none[none.metric == "WER"].statistic == 0.0).all()
