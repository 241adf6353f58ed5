"""Problems the second blind user run of the command line found (each test fails without its fix)."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from metaeval.cli import main


def _run(*args):
    res = CliRunner().invoke(main, list(args), terminal_width=200)
    return res.exit_code, res.output  # stdout and stderr, as the terminal shows them


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


def test_score_llm_judge_points_to_the_judge_command_in_one_line(tmp_path):
    """`score --metrics llm_judge` printed the judge's whole signature, prompt templates and all,
    over dozens of lines, instead of saying that `metaeval judge` configures it."""
    path = _texts_file(tmp_path)
    code, out = _run("score", str(path), "--metrics", "llm_judge", "--text-cols", "hypothesis=hypothesis")
    assert code == 2
    assert len(out.strip().splitlines()) == 1 and "metaeval judge" in out and "--metrics" in out


def test_unknown_text_metric_names_the_option_not_the_python_function(tmp_path):
    """An unknown text metric said '(see metaeval.textmetrics.list_metrics())', not the option."""
    path = _texts_file(tmp_path)
    code, out = _run("score", str(path), "--metrics", "bleu,chrfff", "--text-cols", "hypothesis=hypothesis")
    assert code == 2 and "--metrics" in out and "list_metrics" not in out and "'chrfff'" in out


def test_text_metric_option_error_is_one_line_in_the_api():
    """get_metric's bad-option message showed each option with its default: the judge's prompt
    templates made it a multi-line error."""
    import pytest

    from metaeval.errors import ParameterError
    from metaeval.textmetrics import get_metric

    with pytest.raises(ParameterError) as info:
        get_metric("llm_judge")
    assert "\n" not in str(info.value) and "aspect (required)" in str(info.value)


def test_bench_metric_help_names_no_missing_score_list_option():
    """bench --metric's help and docs/bench.md sent users to `metaeval score --list`, which does not exist."""
    from pathlib import Path

    code, out = _run("bench", "--help")
    assert code == 0 and "score --list" not in out and "score --help" in " ".join(out.split())
    assert "score --list" not in (Path(__file__).parents[1] / "docs" / "bench.md").read_text()
    code, out = _run("score", "--list")
    assert code == 2  # the option really does not exist


def _failure_code_file(tmp_path):
    """4 systems x 6 inputs, human 1-5 and a judge column with -1 (a failure code) on one cell."""
    rows = [dict(system=f"s{s}", input=f"d{i}", coherence=1 + (s + 2 * i) % 5,
                 judge=-1 if (s, i) == (0, 0) else 1 + (2 * s + i) % 5, bleu=0.1 * s + 0.03 * i)
            for s in range(4) for i in range(6)]
    path = tmp_path / "fc.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


_SIM = ["simulate", "--n-iterations", "2", "--n-discretizations", "2", "--level", "system", "--rng", "0", "-q"]


def test_simulate_failure_code_warning_names_the_bounds_option_and_bounds_silences_it(tmp_path):
    """simulate --from-data printed 'declare the scale: bounds={'judge': (-1, 5)}' (the Python
    keyword), and declaring it with --bounds judge=-1:5 did not silence the warning: simulate's
    --bounds never reached the reader."""
    path = _failure_code_file(tmp_path)
    code, out = _run(*_SIM, "--from-data", str(path), "--human", "coherence")
    assert code == 0, out
    assert "--bounds judge=-1:5" in out and "bounds={" not in out
    code, out = _run(*_SIM, "--from-data", str(path), "--human", "coherence", "--bounds", "judge=-1:5")
    assert code == 0, out
    assert "FailureCodeWarning" not in out


def test_simulate_data_options_without_from_data_are_an_error():
    """simulate --human/--metrics/--rater without --from-data were silently ignored (only --bounds
    was refused)."""
    for args in (["--human", "coherence"], ["--metrics", "bleu"], ["--rater", "r"]):
        code, out = _run(*_SIM, *args)
        assert code == 2 and args[0] in out and "--from-data" in out, (args, out)


def _context_file(tmp_path):
    """3 systems x 8 inputs, a 'domain' column (news/chat by input), a human and two metrics."""
    rows = [dict(system=f"s{s}", input=f"d{i}", domain="news" if i < 4 else "chat",
                 coherence=float((s * 3 + i * 5) % 7), m1=float((s * 2 + i * 3) % 5), m2=float((s + i * 7) % 6))
            for s in range(3) for i in range(8)]
    path = tmp_path / "ctx.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_local_context_column_of_a_file_needs_no_second_contexts_option(tmp_path):
    """`local FILE --context domain` stopped with "'domain' is not a context of the data; available:
    system, input" although the file has a domain column: it had to be declared again with
    --contexts domain, which the message did not say."""
    path = _context_file(tmp_path)
    code, out = _run("local", str(path), "--context", "domain", "--human", "coherence", "--metrics", "m1,m2",
                     "--rng", "0", "--tau-resamples", "9", "--chi2-resamples", "9", "-q")
    assert code == 0, out
    assert "news" in out and "chat" in out


def test_report_context_column_of_a_file_needs_no_second_contexts_option(tmp_path):
    """`report FILE --context domain` stopped after the cost estimate: "context 'domain' is not a
    context of the data; available: system, input" (the same double declaration as local)."""
    import json

    path = _context_file(tmp_path)
    code, out = _run("report", str(path), "--human", "coherence", "--metrics", "m1,m2", "--quick", "--no-text",
                     "--rng", "0", "--context", "domain", "--out", str(tmp_path / "rep"), "-q")
    assert code == 0, out
    assert "skipped (local)" not in out
    res = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert "domain" in json.dumps(res.get("local", res))


def test_bench_scores_file_with_other_dataset_labels_says_which_labels_it_has(tmp_path):
    """`bench --scores` whose dataset column says 'SummEval' stopped with "summeval: no scores for
    dataset 'summeval' in FILE", not saying what the file's labels are nor which option reads it."""
    path = tmp_path / "s.csv"
    pd.DataFrame({"dataset": ["SummEval"] * 2, "system": ["M11", "M11"], "input": ["a", "b"],
                  "score": [0.1, 0.2]}).to_csv(path, index=False)
    code, out = _run("bench", "--scores", str(path), "--datasets", "summeval", "--n-resamples", "10",
                     "--level", "system", "--rng", "0", "-q")
    assert code == 2 and len(out.strip().splitlines()) == 1, out
    assert "'SummEval'" in out and "--scores" in out


def test_bench_ranking_says_avg_corr_is_rescaled():
    """bench's ranking printed 'avg corr 0.757' beside task statistics 0.35-0.64 (their mean 0.514):
    the (c + 1) / 2 rescaling of mt-metrics-eval was said in docs/bench.md only."""
    from types import SimpleNamespace

    from metaeval.report.tables import bench_ranking_table

    ranking = pd.DataFrame({"metric": ["m"], "avg_corr": [(0.514 + 1) / 2], "avg_rank": [1.0]})
    task = SimpleNamespace(task=SimpleNamespace(data="d"))
    res = SimpleNamespace(ranking=lambda: ranking, tasks=SimpleNamespace(results=[task]), weighting="data,human",
                          signature="bench|sig")
    table = bench_ranking_table(res)
    assert "(statistic + 1) / 2" in table.caption and table.caption.endswith("bench|sig")


def test_diagnose_level_without_reference_metrics_blames_level(tmp_path):
    """`diagnose --level item` said "Invalid value for --reference-metrics: --level set the
    reference-sensitivity study": it blamed an option the user had not given, in broken grammar,
    and did not say that --level only sets that study."""
    path = _context_file(tmp_path)
    code, out = _run("diagnose", str(path), "--human", "coherence", "--metrics", "m1,m2", "--level", "item")
    assert code == 2 and len(out.strip().splitlines()) == 1, out
    assert "Invalid value for --level" in out and "--level sets the reference-sensitivity study only" in out


def test_judge_option_of_the_other_backend_in_correct_grammar(tmp_path):
    """`judge --device cuda:0` (a local-backend option) with the openai backend said "--device apply
    to --backend local, not openai", without saying what to do."""
    path = _texts_file(tmp_path)
    code, out = _run("judge", str(path), "--text-cols", "hypothesis=hypothesis", "--aspect", "coherence",
                     "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--device", "cuda:0")
    assert code == 2 and "--device applies to --backend local, not openai" in out
    assert "give --backend local or leave it out" in out


def test_report_pairwise_metric_typo_names_the_option_and_the_metrics(tmp_path):
    """`report --pairwise-metrics bleu,rogue` said "pairwise metric(s) not in the report's metrics:
    rogue": neither the option nor the metrics it could name."""
    path = _context_file(tmp_path)
    code, out = _run("report", str(path), "--human", "coherence", "--metrics", "m1,m2", "--quick", "--no-text",
                     "--rng", "0", "--pairwise-metrics", "m1,m3", "--out", str(tmp_path / "rep"), "-q")
    assert code == 2 and len(out.strip().splitlines()) == 1, out
    assert "--pairwise-metrics" in out and "'m3'" in out and "'m1', 'm2'" in out


def test_score_model_with_metrics_that_take_none_is_an_error(tmp_path):
    """`score --metrics bleu,rouge1 --model foo` ran and ignored --model without a word."""
    path = _texts_file(tmp_path)
    code, out = _run("score", str(path), "--metrics", "bleu,rouge1", "--model", "foo", "--text-cols",
                     "hypothesis=hypothesis,reference=reference")
    assert code == 2 and "Invalid value for --model" in out and "bleu,rouge1 take none" in out


def test_simulate_sizes_with_one_system_names_the_pair_and_sizes():
    """`simulate --sizes 15x200,1x200` said "n_systems=1 must be >= 2": a keyword the command line
    does not have, and not which of the pairs."""
    code, out = _run("simulate", "--sizes", "15x200,1x200", "--n-iterations", "2")
    assert code == 2 and "sizes (1, 200)" in out and "--sizes" in out


def test_bench_baseline_typo_is_an_error_with_the_close_names(tmp_path):
    """`bench --baselines ROUGE.LL` ran to the end with a column of '-' and a 'skipped' line: a typo
    in a baseline name looked like a dataset lacking it."""
    path = tmp_path / "s.csv"
    import metaeval

    frame = metaeval.load_dataset("summeval").to_frame()[["system", "input", "ROUGE.1"]]
    frame.rename(columns={"ROUGE.1": "score"}).assign(dataset="summeval").to_csv(path, index=False)
    code, out = _run("bench", "--scores", str(path), "--baselines", "ROUGE.LL", "--datasets", "summeval",
                     "--n-resamples", "10", "--level", "system", "--rng", "0", "-q")
    assert code == 2 and len(out.strip().splitlines()) == 1, out
    assert "'ROUGE.LL'" in out and "'ROUGE.L'" in out and "--baselines" in out


def test_bench_name_default_says_command_for_a_command():
    """bench --name said [default: the function, command or file name], but a --command metric is
    named 'command' whatever the command (`--command ./mymetric.sh` gave a column 'command')."""
    from metaeval.bench import Command

    assert Command("./mymetric.sh").name == "command"  # what the help must say
    code, out = _run("bench", "--help")
    assert "'command' for --command" in " ".join(out.split())


def _report(tmp_path, path, *extra):
    import json

    out = tmp_path / "rep"
    code, text = _run("report", str(path), "--human", "coherence", "--quick", "--no-text", "--rng", "0",
                      "--out", str(out), "-q", *extra)
    assert code == 0, text
    return text, json.loads((out / "results.json").read_text())


def test_report_on_one_system_leaves_out_the_system_and_input_levels(tmp_path):
    """A one-system file: the correlations section failed whole ("level='system' correlates across
    systems but the dataset has 1 system"), then clusters (KeyError: 'coherence'), measures ("fewer
    than 2 metrics" with 2 metrics) and preferences (KeyError: 'acc_eq') failed after it."""
    rows = [dict(system="s0", input=f"d{i}", r1=1 + i % 5, r2=1 + (i * 3) % 5, m1=float(i % 7), m2=float((i * 5) % 9))
            for i in range(30)]
    path = tmp_path / "one.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    text, res = _report(tmp_path, path, "--raters", "coherence=r1,r2", "--metrics", "m1,m2")
    assert "failed" not in text and "KeyError" not in text
    assert "level system left out: the data has 1 system only" in text
    levels = {r["level"] for r in res["results"]["correlations"]["coherence"]["results"]}
    assert levels == {"item", "global"}
    assert "clusters" in res["results"] and "preferences" not in res["results"]


def test_report_sample_size_fits_the_fewest_scored_texts_of_a_metric(tmp_path):
    """Sparse data (a metric scored on 80 of 120 cells): the sample-size sizes were chosen from the
    number of cells (100 < 120), sample_size refused 100 > 80 texts, and the whole diagnostics
    section failed ("diagnostics failed (ParameterError: sizes [100] exceed the 80 texts ...)")."""
    rows = []
    for s in range(6):
        for i in range(20):
            k = s * 20 + i
            rows.append(dict(system=f"s{s}", input=f"d{i}", coherence=float((s * 3 + i * 7) % 5),
                             m1=float("nan") if k % 3 == 0 else float((s + i * 3) % 7), m2=float((s * 2 + i) % 6)))
    path = tmp_path / "sparse.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    text, res = _report(tmp_path, path, "--metrics", "m1,m2")
    assert "diagnostics failed" not in text, text
    rows = res["results"]["diagnostics"]["sample_size"]["results"]
    assert {r["metric"] for r in rows} == {"m1", "m2"}
    assert all(max(r["sizes"]) <= 50 for r in rows)  # m1 has 80 scored texts: no size 100


def test_judge_aspect_file_that_is_not_there_is_an_error(tmp_path):
    """`judge --aspect ./criterion.txt` with a misspelt path sent the text './criterion.txt' to the
    model as the evaluation criterion."""
    path = _texts_file(tmp_path)
    code, out = _run("judge", str(path), "--text-cols", "hypothesis=hypothesis", "--aspect",
                     str(tmp_path / "criterion.txt"), "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and "--aspect" in out and "no such file" in out


def test_score_without_human_warns_nothing_about_columns_it_does_not_read(tmp_path):
    """`score FILE` without --human kept the file's numeric columns (a Dataset needs one) and warned
    about a -1 failure code in one of them, a column the command never reads."""
    rows = [dict(system=f"s{s}", input=f"d{i}", hypothesis=f"the cat sat {s} {i}", reference=f"the cat sat {i}",
                 judge=-1 if i in (0, 5) else 1 + (s + i) % 5) for s in range(2) for i in range(10)]
    path = tmp_path / "fc.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    args = ["--text-cols", "hypothesis=hypothesis,reference=reference", "--format", "csv"]
    from metaeval.errors import FailureCodeWarning
    import metaeval
    import pytest

    with pytest.warns(FailureCodeWarning):  # the file does have a failure code in a score column
        metaeval.read_dataset(path, human=[], texts=["hypothesis", "reference"])
    code, out = _run("score", str(path), "--metrics", "bleu", *args)
    assert code == 0 and "FailureCodeWarning" not in out, out


def test_local_perturbation_pairs_on_a_file_need_no_human_column(tmp_path):
    """`local FILE --context domain --perturbation drop_words --metrics bleu,chrf` (the README's
    perturbation form, no --human) stopped with "empty data: no score columns; give at least one
    human column": the file's score columns were dropped and no human column was named."""
    rows = [dict(system=f"s{s}", input=f"d{i}", domain="news" if i < 4 else "chat", judge=float(i % 5),
                 hypothesis=f"the cat number {i} sat on the mat with {s} dogs", reference=f"the cat {i} sat on a mat")
            for s in range(3) for i in range(8)]
    path = tmp_path / "t.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    code, out = _run("local", str(path), "--context", "domain", "--perturbation", "drop_words", "--metrics",
                     "bleu,chrf", "--text-cols", "hypothesis=hypothesis,reference=reference", "--rng", "0",
                     "--tau-resamples", "9", "--chi2-resamples", "9", "-q", "--format", "csv")
    assert code == 0, out
    assert "bleu" in out and "chrf" in out


def test_simulate_restart_without_rng_continues_a_run_started_with_rng(tmp_path):
    """`simulate --rng 0 --out DIR`, then the same command without --rng (the README: run it again
    and it continues) stopped with "holds a run with other arguments (differing: signature)": the
    given seed was not recorded, and the message did not say that the seed differed."""
    out = tmp_path / "sim"
    args = ["simulate", "--rho-sys", "0.3,0.9", "--n-iterations", "2", "--n-discretizations", "2", "--level",
            "system", "--out", str(out), "-q", "--format", "csv"]
    code, first = _run(*args, "--rng", "0")
    assert code == 0, first
    code, again = _run(*args)
    assert code == 0 and again == first, again
    code, other = _run(*args, "--rng", "1")
    assert code == 2 and "seed:0 in the folder, seed:1 now" in other, other


def test_readme_says_judge_seed_is_not_the_old_rng():
    """The README listed --seed as the old spelling of --rng everywhere, but `judge --seed` is the
    base of the per-request seeds sent to the model and `judge --rng` seeds the retry waits."""
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    assert "In `judge`, `--seed` is not an old `--rng`" in readme
    code, out = _run("judge", "--help")
    flat = " ".join(out.split())
    assert "--seed INTEGER Base of the per-request seeds" in flat and "--rng" in flat


def test_raters_and_missing_values_syntax_errors_show_their_own_syntax(tmp_path):
    """`--raters coh_r1,coh_r2` (no HUMAN=) and `--missing-values -1` got --where's message:
    "expected COLUMN=VALUE[,VALUE], plain equality (no expression such as dataset == 'x' ...)"."""
    path = _texts_file(tmp_path)
    code, out = _run("correlate", str(path), "--raters", "coh_r1,coh_r2", "--human", "coherence")
    assert code == 2 and "HUMAN=COL,COL" in out and "dataset == " not in out
    code, out = _run("correlate", str(path), "--human", "coh_r1", "--missing-values", "-1")
    assert code == 2 and "COL=CODE" in out and "dataset == " not in out
    code, out = _run("correlate", str(path), "--human", "coh_r1", "--where", "system==s0")
    assert code == 2 and "plain equality" in out  # --where keeps its own


def test_correlate_compare_measures_say_they_take_one_human_column(tmp_path):
    """`correlate --human coherence,fluency` said "unknown human column(s): 'coherence,fluency'":
    the list was looked up as one column name."""
    path = _texts_file(tmp_path)
    for cmd in ("correlate", "compare", "measures"):
        code, out = _run(cmd, str(path), "--human", "coh_r1,coh_r2", "--level", "system")
        assert code == 2 and "takes one human column (got 2: coh_r1, coh_r2)" in out, (cmd, out)


def test_texts_file_that_is_not_jsonl_names_the_texts_option(tmp_path):
    """`score data.csv --texts data.csv` said "data.csv: data.csv: line 1 is not valid JSON": the
    DATA file named first, and not which option reads a JSONL."""
    path = _texts_file(tmp_path)
    code, out = _run("score", str(path), "--texts", str(path), "--metrics", "bleu")
    assert code == 2 and len(out.strip().splitlines()) == 1, out
    assert out.startswith("metaeval: error: --texts t.csv: line 1 is not valid JSON") and "JSONL" in out


def test_diagnose_default_sizes_fit_small_data(tmp_path):
    """`diagnose` on 2 systems x 20 inputs (40 texts), no --sizes given, stopped with "Invalid value
    for --sizes: sizes [50, 100] exceed the 40 texts": the default sizes, not the user's."""
    rows = [dict(system=f"s{s}", input=f"d{i}", coherence=float(1 + (s * 3 + i * 7) % 5),
                 m1=float((s + i * 3) % 7), m2=float((s * 2 + i) % 6)) for s in range(2) for i in range(20)]
    path = tmp_path / "two.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    code, out = _run("diagnose", str(path), "--human", "coherence", "--metrics", "m1,m2", "--low", "2",
                     "--high", "4", "--rng", "0")
    assert code == 0, out
    assert "default size(s) 50, 100 left out, since only 40 texts" in out
    assert "meta-correlation and correlation design skipped: two.csv has 2 system(s)" in out


def test_diagnose_ks_thresholds_error_names_low_and_high(tmp_path):
    """`diagnose FILE` without --low/--high said "give the group thresholds low= and high=": the
    Python keywords, not the options."""
    path = _context_file(tmp_path)
    code, out = _run("diagnose", str(path), "--human", "coherence", "--metrics", "m1,m2")
    assert code == 2 and "--low L --high H" in out
