"""Issue 13 item 4: the command line takes its choices from the registries.

The CLI's help texts and ``click.Choice`` lists come from
:mod:`metaeval._choices` (light, so that ``--help`` imports no statistics).
Here each of its name lists is checked against the registry that holds the
objects, and each CLI option against the name list, so neither can drift
(``metaeval score --help`` once listed 12 text metrics of a registry of 19).
A failure names the list to update."""

import re

import click
import pytest

from metaeval import _choices
from metaeval.cli import _CLI_LEVELS, _levels_option, _one_level_option, main
from metaeval.errors import ParameterError


def _registries():
    from metaeval import compare as _cmp  # noqa: F401  (the module, for TESTS/CORRECTIONS)
    from metaeval import correlation, diagnostics, local, preferences, reliability, simulation, wmt
    from metaeval.textmetrics import _judge, _judge_backends
    from metaeval.perturb import PERTURBATIONS
    from metaeval.report._build import REPORT_METHODS
    from metaeval.stats import coefficients, levels, multitest
    from metaeval.textmetrics import METRICS, MULTI_REF
    import sys

    compare_mod = sys.modules["metaeval.compare"]
    return {
        "METHODS": tuple(coefficients.COEFFICIENTS),
        "LEVELS": levels.LEVELS,
        "AVERAGES": levels.AVERAGES,
        "LEVEL_ALIASES": levels._ALIASES,
        "AMBIGUOUS_LEVELS": levels._AMBIGUOUS,
        "CI_METHODS": correlation.CI_METHODS,
        "PVALUE_METHODS": correlation.PVALUE_METHODS,
        "ALTERNATIVES": correlation.ALTERNATIVES,
        "TESTS": compare_mod.TESTS,
        "CORRECTIONS": tuple(multitest.ADJUSTMENTS),
        "BINOMIAL_CIS": diagnostics.BINOMIAL_CIS,
        "DIAGNOSTIC_METHODS": diagnostics.CORRELATIONS,
        "KS_PVALUES": diagnostics.KS_PVALUES,
        "TEXT_METRICS": tuple(METRICS),
        "MODEL_METRICS": tuple(n for n, e in METRICS.items() if e.extra in ("neural", "comet")),
        "LOWER_IS_BETTER": tuple(n for n, e in METRICS.items()
                                 if not getattr(e.factory, "higher_is_better", True)),
        "MULTI_REF": tuple(MULTI_REF),
        "PERTURBATIONS": tuple(PERTURBATIONS),
        "NORMALIZATIONS": tuple(reliability.NORMALIZATIONS),
        "CONSISTENCY_CI": tuple(reliability.CONSISTENCY_CI),
        "REPORT_METHODS": REPORT_METHODS,
        "MEASURE_METHODS": simulation.DEFAULT_METHODS,
        "PAPER_GRIDS": tuple(simulation.PAPER_GRIDS),
        "SCALE_RESTRICTIONS": simulation.SCALE_RESTRICTIONS,
        "PAIR_CONTEXTS": local.PAIR_CONTEXTS,
        "local.AVERAGES": local.AVERAGES,  # one name, one meaning: the correlations' averages
        "LOCAL_TIES": local.TIES,
        "CHI2_TESTS": local.CHI2_TESTS,
        "WTAU_VARIANTS": tuple(local.WTAU_VARIANTS),
        "JUDGE_AGGREGATES": tuple(_judge.AGGREGATES),
        "JUDGE_BACKENDS": tuple(_judge_backends.BACKENDS),
        "JUDGE_DECODINGS": tuple(_judge_backends.DECODINGS),
        "JUDGE_CONTEXTS": tuple(_judge.CONTEXTS),
        "JUDGE_ON_FAILURE": tuple(_judge.ON_FAILURE),
        "JUDGE_ON_ERROR": tuple(_judge.ON_ERROR),
        "PREFERENCE_FORMATS": preferences.FORMATS,
        "PREFERENCE_COMPARE_MEASURES": preferences._CMP_MEASURES,
        "WMT_PRESETS": wmt.PRESETS,
        "WMT_CLUSTER_RULES": wmt.CLUSTER_RULES,
        "CLUSTER_RULES": compare_mod.CLUSTER_RULES,
        # the analysis modules' own copies of the corrections must be the registry's too
        "compare.CORRECTIONS": compare_mod.CORRECTIONS,
        "local.CORRECTIONS": local.CORRECTIONS,
    }


@pytest.mark.parametrize("name", sorted(_registries().keys()))
def test_choice_list_equals_its_registry(name):
    registry = _registries()[name]
    attr = name.split(".")[-1]
    mine = getattr(_choices, attr)
    assert mine == registry, f"metaeval._choices.{attr} must list the registry's names: {registry!r}"


def test_defaults_and_subsets_are_registry_names():
    assert _choices.DEFAULT_METHOD in _choices.METHODS and _choices.VALIDITY_METHOD in _choices.METHODS
    assert set(_choices.REPORT_METHODS) <= set(_choices.METHODS)
    assert _choices.DIAGNOSTIC_METHOD in _choices.DIAGNOSTIC_METHODS


def _option(command, flag):
    return next(p for p in main.commands[command].params if flag in p.opts)


def _listed(help_text, names):
    """The names of a registry as the help lists them (a|b|c or a, b, c), in order."""
    found = [n for n in re.split(r"[|,():.;\s]+", help_text) if n]
    return list(dict.fromkeys(n for n in found if n in names))


# (command, option, the _choices list it offers)
HELP_LISTS = [
    ("correlate", "--method", "METHODS"),
    ("compare", "--method", "METHODS"),
    ("correlate", "--ci", "CI_METHODS"),
    ("correlate", "--pvalue", "PVALUE_METHODS"),
    ("correlate", "--alternative", "ALTERNATIVES"),
    ("compare", "--alternative", "ALTERNATIVES"),
    ("compare", "--test", "TESTS"),
    ("compare", "--correction", "CORRECTIONS"),
    ("compare", "--cluster-correction", "CORRECTIONS"),
    ("local", "--correction", "CORRECTIONS"),
    ("reliability", "--ci", "CONSISTENCY_CI"),
    ("reliability", "--normalize", "NORMALIZATIONS"),
    ("score", "--metrics", "TEXT_METRICS"),
    ("score", "--multi-ref", "MULTI_REF"),
    ("perturb", "--multi-ref", "MULTI_REF"),
    ("local", "--multi-ref", "MULTI_REF"),
    ("perturb", "--ci", "BINOMIAL_CIS"),
    ("perturb", "--perturbation", "PERTURBATIONS"),
    ("local", "--perturbation", "PERTURBATIONS"),
    ("local", "--lower-is-better", "LOWER_IS_BETTER"),
    ("simulate", "--grid", "PAPER_GRIDS"),
    ("preferences", "--input-format", "PREFERENCE_FORMATS"),
    ("preferences", "--measure", "PREFERENCE_COMPARE_MEASURES"),
    ("local", "--average", "AVERAGES"),
    ("bench", "--needs", "BENCH_TEXTS"),
]


@pytest.mark.parametrize("command,flag,name", HELP_LISTS)
def test_cli_help_lists_the_whole_registry(command, flag, name):
    names = getattr(_choices, name)
    assert _listed(_option(command, flag).help, names) == list(names), (command, flag)


CHOICES = [
    ("correlate", "--average", "AVERAGES"),
    ("compare", "--average", "AVERAGES"),
    ("measures", "--average", "AVERAGES"),
    ("report", "--method", "REPORT_METHODS"),
    ("diagnose", "--method", "DIAGNOSTIC_METHODS"),
    ("diagnose", "--meta-method", "DIAGNOSTIC_METHODS"),
    ("diagnose", "--pvalue", "KS_PVALUES"),
    ("diagnose", "--alternative", "ALTERNATIVES"),
    ("simulate", "--scale", "SCALE_RESTRICTIONS"),
    ("judge", "--aggregate", "JUDGE_AGGREGATES"),
    ("judge", "--backend", "JUDGE_BACKENDS"),
    ("judge", "--decoding", "JUDGE_DECODINGS"),
    ("judge", "--context", "JUDGE_CONTEXTS"),
    ("judge", "--on-failure", "JUDGE_ON_FAILURE"),
    ("judge", "--on-error", "JUDGE_ON_ERROR"),
    ("wmt", "--preset", "WMT_PRESETS"),
    ("wmt", "--clusters", "WMT_CLUSTER_RULES"),
    ("bench", "--clusters", "WMT_CLUSTER_RULES"),
    ("bench", "--weighting", "BENCH_WEIGHTINGS"),
    ("compare", "--clusters", "CLUSTER_RULES"),
    ("local", "--pair-context", "PAIR_CONTEXTS"),
    ("local", "--ties", "LOCAL_TIES"),
    ("local", "--chi2-test", "CHI2_TESTS"),
    ("local", "--tau-variant", "WTAU_VARIANTS"),
    ("correlate", "--system-level", "SYSTEM_SCORE_MODES"),
    ("compare", "--system-level", "SYSTEM_SCORE_MODES"),
    ("diagnose", "--system-level", "SYSTEM_SCORE_MODES"),
    ("report", "--system-level", "SYSTEM_SCORE_MODES"),
]


def test_system_score_modes_are_the_ones_the_analyses_accept():
    from metaeval.data.sysscores import check_mode
    from metaeval.errors import ParameterError

    for mode in _choices.SYSTEM_SCORE_MODES:
        assert check_mode(mode) == mode
    with pytest.raises(ParameterError, match="choose 'given'.*'mean'"):
        check_mode("corpus")


@pytest.mark.parametrize("command", ["measures", "simulate"])
def test_measure_set_default_is_seed_paper_000s(command):
    assert _option(command, "--method").default == ",".join(_choices.MEASURE_METHODS)


@pytest.mark.parametrize("command,flag,name", CHOICES)
def test_cli_choice_is_the_registry(command, flag, name):
    t = _option(command, flag).type
    assert isinstance(t, click.Choice) and tuple(t.choices) == getattr(_choices, name)


def test_every_level_option_lists_the_levels_as_the_cli_spells_them():
    spelled = list(_choices.LEVELS)
    seen = 0
    for name, cmd in main.commands.items():
        for p in cmd.params:
            # read-mtme's --score-level sets read_mtme(level=), mt-metrics-eval's file level (seg|doc|sys)
            if getattr(p, "callback", None) in (_levels_option, _one_level_option) or \
                    getattr(p, "api_keyword", None) in ("level", "levels") and p.api_target != "data:read_mtme":
                seen += 1
                assert [n for n in spelled if n in p.help] == spelled, (name, p.opts)
    assert seen >= 5


def test_cli_levels_are_one_table_with_the_api():
    from metaeval.stats.levels import check_level

    for spelling, level in _CLI_LEVELS.items():  # every CLI spelling the API reads the same way
        assert check_level(spelling) == level
        assert _levels_option(None, None, spelling) == level
    for spelling in _choices.AMBIGUOUS_LEVELS:  # refused on both sides
        with pytest.raises(ParameterError, match="ambiguous"):
            check_level(spelling)
        with pytest.raises(ParameterError, match="ambiguous"):
            _levels_option(None, None, spelling)
    for level in _choices.LEVELS:  # every level under the name the results print (item included)
        assert _levels_option(None, None, level) == level
