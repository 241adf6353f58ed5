"""Issue 14 (a): one default coefficient.

The correlation tables (``correlate``, ``compare``, ``compare_all``, the
``correlate``/``compare``/``report`` commands and the report's correlation and
comparison sections) default to Pearson's r, defined once
(:data:`metaeval._choices.DEFAULT_METHOD`); validity (MTMM, concurrent
validity, the ``validity`` command, the report's validity section) keeps
Kendall's tau-b, which seed paper 002 prescribes (Sec. 4.1-4.2, Tables 1-2 and
Figures 4 and 8: "Values are based on Kendall's tau").

Expected values are the library's public functions called with the coefficient
spelled out: the report must be a view of them."""

import inspect

import pytest

import metaeval
from metaeval import _choices
from metaeval import validity as vd
from metaeval.cli import main
from metaeval.report import ReportConfig


def _default(fn, name="method"):
    return inspect.signature(fn).parameters[name].default


def test_one_default_in_one_place():
    from metaeval.stats import coefficients as co

    assert _choices.DEFAULT_METHOD == "pearson" and _choices.VALIDITY_METHOD == "kendall_b"
    assert co.DEFAULT_METHOD is _choices.DEFAULT_METHOD and co.VALIDITY_METHOD is _choices.VALIDITY_METHOD
    for fn in (metaeval.correlate, metaeval.compare, metaeval.compare_all):
        assert _default(fn) == _choices.DEFAULT_METHOD, fn.__name__
    for fn in (vd.mtmm, vd.concurrent_validity):
        assert _default(fn) == _choices.VALIDITY_METHOD, fn.__name__
        assert "paper 002" in fn.__doc__ and '``"kendall_b"``' in fn.__doc__, fn.__name__
    assert ReportConfig().method == _choices.DEFAULT_METHOD


def _cli_default(command, option="--method"):
    """The option (its ``default``: the one the command uses; an option generated from the
    analysis' signature, issue 25.3, is not given by default and shows the signature's)."""
    cmd = main.commands[command]
    p = next(p for p in cmd.params if option in p.opts)
    if getattr(p, "api_target", None):
        import types

        return types.SimpleNamespace(default=p.api_default, help=p.help, opts=p.opts)
    return p


@pytest.mark.parametrize("command", ["correlate", "compare", "report"])
def test_cli_correlation_tables_default_to_the_one_default(command):
    assert _cli_default(command).default == _choices.DEFAULT_METHOD


def test_cli_validity_says_why_it_uses_kendall():
    p = _cli_default("validity")
    assert p.default == _choices.VALIDITY_METHOD == "kendall_b"
    assert "paper 002" in p.help and "Kendall" in p.help


def test_report_correlations_use_pearson_and_validity_kendall_b():
    """The report's numbers are the public functions with the coefficient spelled out."""
    pytest.importorskip("sacrebleu")
    from test_report import _table, rendered_tiny

    _, doc, ds = rendered_tiny()
    corr = _table(doc, "corr-quality")
    keys = [c["key"] for c in corr["columns"]]
    res = metaeval.correlate(ds, "quality", metrics=[r[0] for r in corr["rows"]], level="system",
                             method="pearson", ci="none")
    for row in corr["rows"]:
        assert row[keys.index("system")] == res.get(row[0], level="system").statistic
    assert all("method:pearson" in s for s in corr["signatures"])
    t = _table(doc, "val-mtmm")
    assert "kendall_b" in t["title"] and "Xiao et al., 2023" in t["title"]  # the report cites paper 002 so
    named = {r[0] for r in t["rows"]} | {r[2] for r in t["rows"]}
    traits = [h for h in ds.human if h in named]  # the report's order: the dataset's
    ref = vd.mtmm(ds, traits, level="system", method="kendall_b").to_frame()
    want = {(r.trait_a, r.method_a, r.trait_b, r.method_b): r.statistic for r in ref.itertuples()}
    keys = [c["key"] for c in t["columns"]]
    got = {tuple(r[:4]): r[keys.index("statistic")] for r in t["rows"]}
    assert got.keys() == want.keys()
    assert all(got[k] == want[k] or (got[k] is None and want[k] != want[k]) for k in want)
