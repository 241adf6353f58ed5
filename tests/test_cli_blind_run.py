"""Problems a blind user run of the command line found (each test fails without its fix)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from metaeval.cli import COMMANDS, main
from metaeval.cli._api import ApiOption


def _help(*cmd):
    res = CliRunner().invoke(main, [*cmd, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def _option_help(cmd, flag):
    """The help of one option as --help shows it (its visible names, then its text)."""
    import click

    command = main.commands[cmd]
    ctx = click.Context(command)
    for p in command.params:
        if flag in getattr(p, "opts", ()):
            names, text = p.get_help_record(ctx)
            return " ".join(f"{names} {text}".split())
    raise AssertionError((cmd, flag))


def test_cluster_correction_help_says_holm_runs_when_absent():
    """compare --cluster-correction showed [default: none] while leaving it out runs holm."""
    text = _option_help("compare", "--cluster-correction")
    assert "[default: none]" not in text
    assert "[default: holm; none with --clusters mtme" in text


def test_preferences_ceiling_default_says_what_absent_does():
    text = _option_help("preferences", "--ceiling")
    assert "[default: none]" not in text and "[default: when the data has 2+ raters]" in text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_number_options_do_not_show_the_word_none_they_refuse(name):
    """--rng, --sequential, diagnose --low/--high, --threshold showed [default: none] but reject none."""
    import click

    bad = []
    for p in main.commands[name].params:
        if isinstance(p, click.Option) and isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)) \
                and p.help and ("[default: none]" in p.help or "(none: " in p.help):
            bad.append((p.opts[0], p.help))
    assert bad == []


def test_rng_default_is_fresh_entropy():
    assert "[default: fresh entropy]" in _option_help("compare", "--rng")
    assert "[default: not set]" in _option_help("diagnose", "--low")


def _codes3(tmp_path):
    """A 1-5 human column with a failure code -1 (as the blind run's codes3.csv)."""
    rows = ["system,input,coh,judge"]
    for s in range(3):
        for i in range(4):
            rows.append(f"s{s},d{i},{-1 if (s, i) == (0, 0) else 1 + (s + i) % 5},{(s * i) % 5 + 1}")
    path = tmp_path / "codes3.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("spelling", ["1:5", "coh=1:5"])
def test_bounds_takes_low_high_for_every_human_column(tmp_path, spelling):
    """correlate --bounds 1:5 got --where's message (expected COLUMN=VALUE...): LOW:HIGH is the
    scale of every human column (docs/data.md, simulate), COL=LOW:HIGH of one column."""
    res = CliRunner().invoke(main, ["correlate", _codes3(tmp_path), "--human", "coh", "--metrics", "judge",
                                    "--bounds", spelling])
    assert res.exit_code != 0
    assert "COLUMN=VALUE" not in res.output
    assert "outside its declared scale [1, 5]" in res.output and "--missing-values coh=-1" in res.output


def test_bad_bounds_message_names_bounds_and_its_syntax(tmp_path):
    res = CliRunner().invoke(main, ["correlate", _codes3(tmp_path), "--human", "coh", "--bounds", "1-5"])
    assert res.exit_code != 0 and "COLUMN=VALUE" not in res.output
    assert "--bounds '1-5'" in res.output and "LOW:HIGH" in res.output and "COL=LOW:HIGH" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_bounds_parses_as_dataset_bounds():
    from metaeval.cli._data import parse_bounds
    from metaeval.errors import ParameterError

    assert parse_bounds(()) is None
    assert parse_bounds(("1:5",)) == (1.0, 5.0)
    assert parse_bounds(("a=1:5,b=0:10",)) == {"a": (1.0, 5.0), "b": (0.0, 10.0)}
    assert parse_bounds(("a=1:5", "b=0:10")) == {"a": (1.0, 5.0), "b": (0.0, 10.0)}
    with pytest.raises(ParameterError, match="several scales"):
        parse_bounds(("1:5,a=1:5",))


def test_simulate_keeps_the_old_scale_bounds_spelling():
    """README: old spellings such as --scale-bounds still work; simulate refused it."""
    cmd = main.commands["simulate"]
    opt = next(p for p in cmd.params if "--bounds" in p.opts)
    assert "--scale-bounds" in opt.opts and "--scale-bounds" in opt.aliases
    assert "--scale-bounds" not in _help("simulate")


@pytest.mark.parametrize("cmd", ["correlate", "spa"])
def test_metrics_none_is_a_message_naming_metrics(cmd):
    """correlate/spa --metrics none gave a bare 'error: metrics is empty'."""
    res = CliRunner().invoke(main, [cmd, "summeval", "--human", "coherence", "--metrics", "none"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--metrics" in lines[0] and "at least one metric" in lines[0], res.output


@pytest.mark.parametrize("args,new,old", [
    (["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1", "--seed", "0", "--rng", "1"],
     "--rng", "--seed"),
    (["diagnose", "summeval", "--human", "coherence", "--metrics", "ROUGE.1", "--low", "3", "--ks-low=2"],
     "--low", "--ks-low"),
])
def test_old_and_new_spelling_together_is_an_error(args, new, old):
    """--seed 0 --rng 1 and --low 3 --ks-low 2 resolved silently to the last one."""
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and new in lines[0] and old in lines[0], res.output
    assert f"{args[0]} --help" in lines[0]


def test_an_old_spelling_alone_still_works():
    from metaeval.cli._api import check_spellings

    check_spellings(main.commands["correlate"], ["--seed", "0", "--", "--rng"])  # after --: not options


def _visible_options(name):
    import click

    cmd = main.commands[name]
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_visible_option_has_a_help_text(name):
    """--system/--input, --n-jobs, --alpha and --format had no help on several commands."""
    bare = [p.opts[0] for p in _visible_options(name)
            if not (p.help or "").strip() or (p.help or "").strip().startswith("[default")]
    assert bare == []


@pytest.mark.parametrize("name", ["measures", "simulate", "report", "correlate"])
def test_old_level_and_method_spellings_are_hidden(name):
    text = _help(name)
    assert "--levels" not in text and "--methods" not in text
    assert "--level" in text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_defaults_are_written_as_default_brackets(name):
    """--rng/--n-jobs/--n-iterations wrote '(default: ...)' as free text."""
    bad = [p.opts[0] for p in _visible_options(name)
           if p.opts[0] in ("--rng", "--n-jobs", "--n-iterations") and "(default:" in (p.help or "")]
    assert bad == []


def test_system_help_is_shared_and_names_none():
    for name in ("reliability", "validity", "report", "local", "perturb", "score", "judge", "correlate"):
        assert "none: one unnamed system" in _option_help(name, "--system"), name


def test_confidence_level_help_names_the_difference_only_on_compare():
    assert "interval of the difference" in _option_help("compare", "--confidence-level")
    for name in ("correlate", "spa", "preferences"):
        assert "difference" not in _option_help(name, "--confidence-level"), name


def test_correlate_method_lists_its_choices_once():
    from metaeval import _choices

    text = _option_help("correlate", "--method").split("[default:")[0]
    for m in _choices.METHODS:
        assert len(re.findall(rf"(?<![\w-]){re.escape(m)}(?![\w-])", text)) == 1, (m, text)


def test_diagnose_human_takes_several_columns():
    assert "COL[,COL]" in _option_help("diagnose", "--human")


def test_spa_n_resamples_says_what_it_sets_with_compare():
    text = _option_help("spa", "--n-resamples")
    assert "--compare" in text and "Perm-Both" in text and "one-sided" in text


def test_measures_n_jobs_help_names_no_private_module_or_dask_client():
    text = _option_help("measures", "--n-jobs")
    assert "_parallel" not in text and "Dask client" not in text


def test_report_spells_splits_and_ks_thresholds_as_measures_and_diagnose():
    """report had --splits and --ks-low/--ks-high where measures/diagnose have --n-splits, --low/--high."""
    text = _help("report")
    for new in ("--n-splits", "--low", "--high"):
        assert re.search(rf"{new}\b", text), new
    assert "--ks-low" not in text and "--ks-high" not in text and not re.search(r"--splits\b", text)
    cmd = main.commands["report"]
    for new, old in (("--n-splits", "--splits"), ("--low", "--ks-low"), ("--high", "--ks-high")):
        assert any(new in p.opts and old in getattr(p, "aliases", ()) for p in cmd.params), (new, old)
    for new in ("--n-splits", "--low", "--high"):
        assert new in {o for p in main.commands["measures" if new == "--n-splits" else "diagnose"].params
                       for o in getattr(p, "opts", ())}


def _long_raters(tmp_path):
    """Three systems x six inputs x two raters, long (as the blind run's long_rot.csv)."""
    rows = ["system,input,rater,coherence,bleu,rouge"]
    for s in range(3):
        for i in range(6):
            for r in range(2):
                rows.append(f"s{s},d{i},R{r},{1 + (s + i + r) % 5},{(s * 7 + i * 3) % 11 / 10},"
                            f"{(s * 5 + i * 2) % 13 / 10}")
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_reliability_header_names_the_default_target(tmp_path):
    """reliability's header read 'inputs for None' without --target (0.9 is used)."""
    res = CliRunner().invoke(main, ["reliability", _long_raters(tmp_path), "--human", "coherence",
                                    "--rater", "rater", "--rng", "0"], terminal_width=250)
    assert res.exit_code == 0, res.output
    import inspect

    from metaeval.reliability import consistency

    want = inspect.signature(consistency).parameters["target"].default
    assert f"inputs for {want}" in res.output and "inputs for None" not in res.output


def test_diagnose_sample_size_prints_a_dash_with_a_footnote(tmp_path):
    """diagnose's sample-size table printed a literal None in 'recommended'."""
    res = CliRunner().invoke(main, ["diagnose", _long_raters(tmp_path), "--human", "coherence", "--rater", "rater",
                                    "--metrics", "bleu,rouge", "--low", "3", "--high", "4", "--rng", "0",
                                    "--n-resamples", "5", "--sizes", "5,10"], terminal_width=300)
    assert res.exit_code == 0, res.output
    block = res.output.split("recommended", 1)[1].split("correlation design")[0]
    assert "None" not in block and "recommended -: no --threshold given" in res.output


@pytest.mark.parametrize("cmd", [["correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1"],
                                 ["report", "summeval", "--human", "coherence"]])
def test_a_negative_rng_says_non_negative_integer(cmd):
    """--rng -3 listed Python types (None, a SeedSequence, a numpy Generator)."""
    res = CliRunner().invoke(main, [*cmd, "--rng", "-3"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "non-negative integer" in lines[0] and "'--rng'" in lines[0], res.output
    assert "SeedSequence" not in lines[0] and "--seed" not in lines[0]


def test_system_none_on_a_file_with_a_system_column_names_the_options(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("system,input,coh,m\n" + "".join(f"s{i % 2},d{i},{i % 5 + 1},{i / 7}\n" for i in range(8)))
    res = CliRunner().invoke(main, ["correlate", str(path), "--human", "coh", "--system", "none"])
    assert res.exit_code != 0
    assert "drop --system none" in res.output and "--system system" in res.output


def test_spa_on_sparse_data_names_the_selection_options():
    import numpy as np

    from metaeval import Dataset
    from metaeval.errors import DataError
    from metaeval.wmt import soft_pairwise_accuracy

    h = np.arange(9, dtype=float).reshape(3, 3)
    m = h.copy()
    for s in range(3):
        h[s, s] = np.nan  # no input scored by every system
    ds = Dataset({"coh": h, "m": m}, human=["coh"], systems=["a", "b", "c"], inputs=["d0", "d1", "d2"])
    with pytest.raises(DataError, match="--exclude-systems or --where"):
        soft_pairwise_accuracy(ds, "coh", metrics=["m"])


@pytest.mark.parametrize("name", ["validity", "judge", "local", "perturb", "score"])
def test_run_column_option_on_every_file_command(name):
    """--run was missing on validity, judge, local, perturb, score (issue 25 item 3: the same layout
    options everywhere); it is correlate's option (the shared layout reader)."""
    ref = next(p for p in main.commands["correlate"].params if "--run" in getattr(p, "opts", ()))
    opt = [p for p in main.commands[name].params if "--run" in getattr(p, "opts", ())]
    assert len(opt) == 1 and opt[0].name == ref.name and opt[0].help == ref.help
    assert "--run-col" in opt[0].aliases and re.search(r"--run\b", _help(name))


@pytest.mark.parametrize("cmd", ["compare", "measures"])
def test_metrics_none_on_a_bundled_dataset_is_not_every_metric(cmd):
    """compare/measures --metrics none on summeval ran all 43 metrics (none fell back to the default)."""
    res = CliRunner().invoke(main, [cmd, "summeval", "--human", "coherence", "--metrics", "none"])
    assert res.exit_code == 2, res.output[-300:]
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--metrics" in lines[0] and "gives 0" in lines[0], res.output[-300:]


def test_validity_read_no_wide_file_of_several_traits(tmp_path):
    """validity refused the usual wide multi-trait file (coherence_r1..r3, fluency_r1..r3): each
    trait's raters were labelled by their column names, so the traits had 'different raters', and
    the command line had no way to label them. --raters HUMAN=LABEL:COLUMN,... names them; the
    system-level Kendall tau-b of concurrent validity is checked against scipy.stats.kendalltau on
    the system means of the raters' mean (the seed paper's design: traits x raters)."""
    import csv
    import io

    import numpy as np
    from scipy import stats

    g = np.random.default_rng(5)
    N, M = 6, 8
    q = np.linspace(-1, 1, N)[:, None] + 0.3 * g.standard_normal((N, M))
    rows, coh, flu, bleu = [], {}, {}, {}
    for i in range(N):
        for j in range(M):
            c = [float(np.clip(np.rint(3 + q[i, j] + 0.7 * g.standard_normal()), 1, 5)) for _ in range(3)]
            f = [float(np.clip(np.rint(3 + q[i, j] + 0.7 * g.standard_normal()), 1, 5)) for _ in range(3)]
            b = float(np.round(q[i, j] + 0.5 * g.standard_normal(), 3))
            coh[i, j], flu[i, j], bleu[i, j] = np.mean(c), np.mean(f), b
            rows.append([f"s{i}", f"d{j}", b, *c, *f])
    path = tmp_path / "two_traits.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["system", "input", "bleu", "coherence_r1", "coherence_r2", "coherence_r3",
                    "fluency_r1", "fluency_r2", "fluency_r3"])
        w.writerows(rows)
    base = ["validity", str(path), "--metrics", "bleu", "--no-cfa", "--format", "csv"]
    unlabelled = CliRunner().invoke(main, [*base, "--raters", "coherence=coherence_r*", "--raters",
                                           "fluency=fluency_r*"])
    assert unlabelled.exit_code == 2 and "--raters coherence=r1:coherence_r1" in unlabelled.output
    res = CliRunner().invoke(main, [*base, "--raters", "coherence=r1:coherence_r1,r2:coherence_r2,r3:coherence_r3",
                                    "--raters", "fluency=r1:fluency_r1,r2:fluency_r2,r3:fluency_r3"])
    assert res.exit_code == 0, res.output
    got = {r["criterion"]: float(r["statistic"]) for r in csv.DictReader(io.StringIO(res.output))}
    sys_mean = lambda d: [np.mean([d[i, j] for j in range(M)]) for i in range(N)]  # noqa: E731
    for trait, d in (("coherence", coh), ("fluency", flu)):
        want = stats.kendalltau(sys_mean(bleu), sys_mean(d)).statistic
        assert got[trait] == pytest.approx(want, abs=1e-12), trait
    bad = CliRunner().invoke(main, [*base, "--raters", "coherence=r1:coherence_r1,coherence_r2",
                                    "--raters", "fluency=fluency_r*"])
    assert bad.exit_code == 2 and "LABEL:COLUMN" in bad.output
