"""DataFrames in (issue 17.2): every front-door analysis takes a long DataFrame.

The reference for each analysis is the same analysis run on the Dataset that
``Dataset.from_frame`` builds from the same frame with the same keyword
arguments: the two ``to_frame()`` tables must be equal.  Anything that is
neither a Dataset, a DataFrame nor a type the analysis documents is an
``InputTypeError`` (a ``TypeError``) naming the accepted types.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import diagnostics as dg
from metaeval import local as lc
from metaeval import reliability as rl
from metaeval import simulation as sim
from metaeval import validity as vd
from metaeval.data import Dataset
from metaeval.data._accept import FRAME_KEYS, as_dataset
from metaeval.errors import InputTypeError, ParameterError

N_SYS, N_IN, N_RATERS = 5, 12, 3


def _rated_frame(seed=0) -> pd.DataFrame:
    """Long table with a rater column: 2 human dimensions x 3 raters, 3 metrics."""
    g = np.random.default_rng(seed)
    rows = []
    quality = g.normal(size=(N_SYS, N_IN)) + np.arange(N_SYS)[:, None] * 0.5
    fluency = g.normal(size=(N_SYS, N_IN)) + 0.3 * quality
    metrics = {f"m{k}": quality + g.normal(scale=0.5 + k, size=quality.shape) for k in (1, 2, 3)}
    for i in range(N_SYS):
        for j in range(N_IN):
            for r in range(N_RATERS):
                rows.append(
                    {
                        "sys_id": f"S{i}",
                        "doc": f"d{j:02d}",
                        "annotator": f"a{r}",
                        "coh": quality[i, j] + g.normal(scale=0.7),
                        "flu": fluency[i, j] + g.normal(scale=0.6),
                        **{m: v[i, j] for m, v in metrics.items()},
                    }
                )
    return pd.DataFrame(rows)


def _plain_frame(seed=1) -> pd.DataFrame:
    """Long table with the default label columns, one human column, 3 metrics."""
    g = np.random.default_rng(seed)
    q = g.normal(size=(N_SYS, N_IN)) + np.arange(N_SYS)[:, None]
    return pd.DataFrame(
        {
            "system": np.repeat([f"S{i}" for i in range(N_SYS)], N_IN),
            "input": np.tile([f"x{j}" for j in range(N_IN)], N_SYS),
            "human": (q + g.normal(scale=0.5, size=q.shape)).ravel(),
            "bleu": (q + g.normal(scale=1.0, size=q.shape)).ravel(),
            "chrf": (q + g.normal(scale=2.0, size=q.shape)).ravel(),
            "len": np.round(g.uniform(5, 50, size=q.size)),
        }
    )


def _run_frame(seed=2) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    q = g.normal(size=(N_SYS, N_IN))
    rows = []
    for i in range(N_SYS):
        for j in range(N_IN):
            for k in range(4):
                rows.append({"system": f"S{i}", "input": f"x{j}", "run": f"r{k}",
                             "human": q[i, j],
                             "judge": q[i, j] + g.normal(scale=0.3),
                             "judge2": q[i, j] + g.normal(scale=1.0)})
    return pd.DataFrame(rows)


RATED_KW = {"system": "sys_id", "input": "doc", "rater": "annotator", "human": ["coh", "flu"]}
RATED = _rated_frame()
PLAIN = _plain_frame()
RUNS = _run_frame()
RATED_DS = Dataset.from_frame(RATED, **RATED_KW)
PLAIN_DS = Dataset.from_frame(PLAIN, human="human")
RUNS_DS = Dataset.from_frame(RUNS, human="human", run="run")
_REF = np.random.default_rng(3).normal(size=(N_SYS, N_IN, 4))


_FACTORS = {"f1": np.random.default_rng(4).normal(size=(N_SYS, N_IN))}


# (name, call on the Dataset, call on the DataFrame)
CASES = [
    ("stability", lambda: rl.stability(RUNS_DS),
     lambda: rl.stability(RUNS, frame={"run": "run", "human": "human"})),
    ("consistency", lambda: rl.consistency(RATED_DS, ["m1", "m2"], n_resamples=50, rng=0),
     lambda: rl.consistency(RATED, ["m1", "m2"], n_resamples=50, rng=0, frame=RATED_KW)),
    ("consistency_curve",
     lambda: rl.consistency_curve(RATED_DS, ["m1"], sizes=[2, 4], n_subsets=10, rng=0),
     lambda: rl.consistency_curve(RATED, ["m1"], sizes=[2, 4], n_subsets=10, rng=0,
                                  frame=RATED_KW)),
    # human columns taken from the analysis's own argument (columns=)
    ("agreement", lambda: rl.agreement(RATED_DS, ["coh", "flu"]),
     lambda: rl.agreement(RATED, ["coh", "flu"],
                          frame={"system": "sys_id", "input": "doc", "rater": "annotator"})),
    ("rater_correlations", lambda: rl.rater_correlations(RATED_DS, ["coh"]),
     lambda: rl.rater_correlations(RATED, ["coh"], frame=RATED_KW)),
    ("cfa", lambda: vd.cfa(RATED_DS), lambda: vd.cfa(RATED, frame=RATED_KW)),
    ("concurrent_validity", lambda: vd.concurrent_validity(RATED_DS, ["coh", "flu"]),
     lambda: vd.concurrent_validity(
         RATED, ["coh", "flu"], frame={"system": "sys_id", "input": "doc", "rater": "annotator"})),
    ("mtmm", lambda: vd.mtmm(RATED_DS, ["coh", "flu"]),
     lambda: vd.mtmm(RATED, ["coh", "flu"],
                     frame={"system": "sys_id", "input": "doc", "rater": "annotator"})),
    ("residual_pca", lambda: vd.residual_pca(RATED_DS, _FACTORS),
     lambda: vd.residual_pca(RATED, _FACTORS, frame=RATED_KW)),
    # default label columns, human from human=
    ("ks_score", lambda: dg.ks_score(PLAIN_DS, "human", low=0, high=2),
     lambda: dg.ks_score(PLAIN, "human", low=0, high=2)),
    ("meta_correlation", lambda: dg.meta_correlation(PLAIN_DS, "human"),
     lambda: dg.meta_correlation(PLAIN, "human")),
    ("sample_size",
     lambda: dg.sample_size(PLAIN_DS, "human", sizes=(4, 8), n_resamples=20, rng=1),
     lambda: dg.sample_size(PLAIN, "human", sizes=(4, 8), n_resamples=20, rng=1)),
    ("reference_sensitivity",
     lambda: dg.reference_sensitivity(PLAIN_DS, "human", scores={"r": _REF}, n_resamples=30, rng=2),
     lambda: dg.reference_sensitivity(PLAIN, "human", scores={"r": _REF}, n_resamples=30, rng=2)),
    ("correlation_design", lambda: dg.correlation_design(PLAIN_DS, human="human"),
     lambda: dg.correlation_design(PLAIN, human="human")),
    ("perturbation_detection",
     lambda: dg.perturbation_detection(
         PLAIN_DS, Dataset.from_frame(PLAIN.assign(bleu=PLAIN.bleu - 0.5), human="human"),
         human="human"),
     lambda: dg.perturbation_detection(PLAIN, PLAIN.assign(bleu=PLAIN.bleu - 0.5),
                                       human="human")),
    ("local_pairs",
     lambda: lc.local_pairs(PLAIN_DS, human="human", context="system"),
     lambda: lc.local_pairs(PLAIN, human="human", context="system")),
    ("estimate_parameters", lambda: sim.estimate_parameters(PLAIN_DS, "human"),
     lambda: sim.estimate_parameters(PLAIN, "human")),
    ("simulate_dataset",
     lambda: sim.simulate_dataset(PLAIN_DS, "human", "bleu", n_iterations=2,
                                  n_discretizations=2, rng=0),
     lambda: sim.simulate_dataset(PLAIN, "human", "bleu", n_iterations=2,
                                  n_discretizations=2, rng=0)),
]


@pytest.mark.parametrize("name,on_dataset,on_frame", CASES, ids=[c[0] for c in CASES])
def test_frame_result_equals_dataset_result(name, on_dataset, on_frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = on_dataset()
        got = on_frame()
    assert type(got) is type(want)
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame())


DECORATED = [
    rl.stability, rl.consistency, rl.consistency_curve, rl.agreement, rl.rater_correlations,
    vd.cfa, vd.concurrent_validity, vd.mtmm, vd.residual_pca,
    dg.ks_score, dg.meta_correlation, dg.sample_size, dg.reference_sensitivity,
    dg.correlation_design, dg.perturbation_detection, lc.local_pairs,
    sim.estimate_parameters, sim.simulate_dataset,
]


def test_every_covered_analysis_is_in_the_equality_cases():
    assert {f.__name__ for f in DECORATED} == {c[0] for c in CASES}


# the other required arguments of each analysis
_OTHER_ARGS = {
    "correlation_design": ((), {"human": "human"}),
    "local_pairs": ((), {"human": "human", "context": "system"}),
    "simulate_dataset": (("human", "bleu"), {}),
}


@pytest.mark.parametrize("func", DECORATED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", ["data.csv", 3.0, object()], ids=["str", "float", "object"])
def test_wrong_type_is_a_type_error_naming_the_accepted_types(func, bad):
    args, kwargs = _OTHER_ARGS.get(func.__name__, (("human",), {}))
    with pytest.raises(InputTypeError, match=r"must be a metaeval Dataset.*pandas DataFrame.*got"):
        func(bad, *args, **kwargs)


# functions whose data must be a Dataset or a DataFrame (no mapping/array of their own)
STRICT = [f for f in DECORATED if f.__module__ in ("metaeval.reliability", "metaeval.validity",
                                                   "metaeval.simulation")] + [
    dg.reference_sensitivity]


@pytest.mark.parametrize("func", STRICT, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "bad", [[1.0, 2.0], {"human": [1.0, 2.0]}, np.ones((2, 3))], ids=["list", "dict", "ndarray"]
)
def test_containers_are_a_type_error_where_not_accepted(func, bad):
    args, kwargs = _OTHER_ARGS.get(func.__name__, (("human",), {}))
    with pytest.raises(InputTypeError, match=r"`dataset` must be a metaeval Dataset|`data` must be"):
        func(bad, *args, **kwargs)


def test_mapping_still_accepted_where_documented():
    h = PLAIN_DS.scores("human")
    want = dg.ks_score(PLAIN_DS, "human", metrics=["bleu"], low=0, high=2).to_frame()
    got = dg.ks_score({"human": h, "bleu": PLAIN_DS.scores("bleu")}, "human", low=0,
                      high=2).to_frame()
    cols = ["metric", "statistic", "pvalue"]
    pd.testing.assert_frame_equal(got[cols], want[cols])


def test_type_error_is_a_type_error():
    assert issubclass(InputTypeError, TypeError)
    assert issubclass(InputTypeError, metaeval.MetaevalError)


def test_frame_option_unknown_key_and_frame_with_a_dataset():
    with pytest.raises(ParameterError, match=r"frame= has unknown key\(s\) 'metric'.*allowed"):
        dg.ks_score(PLAIN, "human", frame={"metric": "bleu"}, low=0, high=2)
    with pytest.raises(ParameterError, match="frame= applies only when `data` is a pandas"):
        dg.ks_score(PLAIN_DS, "human", frame={"system": "system"}, low=0, high=2)


def test_frame_keys_are_from_frame_keywords():
    import inspect

    params = inspect.signature(Dataset.from_frame).parameters
    assert set(FRAME_KEYS) == set(params) - {"df"}


def test_signature_and_docstring_show_frame():
    import inspect

    for f in DECORATED:
        p = inspect.signature(f).parameters["frame"]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is None
        assert "frame : dict, optional" in f.__doc__, f.__name__
        # the frame entry sits inside Parameters, before Returns
        doc = f.__doc__
        assert doc.index("frame : dict") < doc.index("Returns\n"), f.__name__


def test_without_declared_human_every_numeric_column_is_a_metric():
    ds = as_dataset(PLAIN)
    assert ds.human == () and set(ds.metrics) == {"human", "bleu", "chrf", "len"}


def test_human_from_the_analysis_argument_when_frame_has_none():
    ds = as_dataset(RATED, human=["coh@a0", "flu"],
                    frame={"system": "sys_id", "input": "doc", "rater": "annotator"})
    assert ds.human == ("coh", "flu")
    # frame= wins over the argument
    ds = as_dataset(PLAIN, human="bleu", frame={"human": "human"})
    assert ds.human == ("human",)


def test_repr_html_renders_the_frame_and_signature():
    res = dg.ks_score(PLAIN_DS, "human", low=0, high=2)
    out = res._repr_html_()
    assert out.startswith('<div class="metaeval-result"><table')
    frame = res.to_frame()
    sig = frame["signature"].iloc[0]
    import html

    assert f"<code>{html.escape(sig)}</code>" in out
    for m in frame["metric"]:
        assert f"<td>{m}</td>" in out
    assert "<th>signature</th>" not in out  # shown once, below the table
    one = res[0]._repr_html_()
    assert html.escape(res[0].signature) in one and "<th>statistic</th>" in one


# correlation.py, compare.py and measures.py are decorated by the lead (one line each,
# ``@accepts_frames(human="human")``); this pins that the same line gives equal results there.
LEAD = [
    ("correlate", lambda f, d: f(d, "human", level="system", method="kendall_b", ci="none",
                                 pvalue="none")),
    ("compare", lambda f, d: f(d, "human", "bleu", "chrf", n_resamples=20, rng=0)),
    ("compare_all", lambda f, d: f(d, "human", n_resamples=20, rng=0)),
    ("discriminative_power", lambda f, d: f(d, "human", n_resamples=10, rng=0,
                                            levels=["system"], methods=["pearson"])),
    ("ranking_consistency", lambda f, d: f(d, "human", n_splits=10, rng=0,
                                           levels=["system"], methods=["pearson"])),
]


@pytest.mark.parametrize("name,call", LEAD, ids=[c[0] for c in LEAD])
def test_correlate_compare_and_measures_take_frames(name, call):
    # correlate, compare, compare_all, discriminative_power and ranking_consistency carry
    # @accepts_frames(human="human"): a DataFrame gives the Dataset's result.
    func = getattr(metaeval, name)
    assert hasattr(func, "__wrapped__")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = call(func, PLAIN_DS)
        got = call(func, PLAIN)
    if hasattr(want, "to_frame"):
        pd.testing.assert_frame_equal(got.to_frame(), want.to_frame())
    else:  # Comparison: one pair, no frame of its own
        assert got.to_dict() == want.to_dict()
    with pytest.raises(InputTypeError, match="`dataset` must be a metaeval Dataset"):
        call(func, {"human": [1.0]})


def _html_cases():
    pairs = lc.local_pairs(PLAIN_DS, human="human", context="system")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            pairs,
            lc.local_accuracy(pairs),
            lc.context_tau(pairs, n_resamples=9, rng=0),
            sim.estimate_parameters(PLAIN_DS, "human"),
            sim.simulate_dataset(PLAIN_DS, "human", "bleu", n_iterations=2, n_discretizations=2,
                                 rng=0),
        ]


def test_repr_html_of_results_outside_the_shared_base():
    import html

    for res in _html_cases():
        out = res._repr_html_()
        frame = res.to_frame()
        assert out.startswith('<div class="metaeval-result"><table'), type(res).__name__
        if isinstance(getattr(res, "signature", None), str):
            sigs = [res.signature]
        elif "signature" in frame.columns:
            sigs = list(pd.unique(frame["signature"]))
        else:  # LocalPairs: the pairs themselves, no signature
            sigs = []
        for sig in sigs:
            assert f"<code>{html.escape(sig)}</code>" in out, type(res).__name__
        if len(frame) <= pd.get_option("display.max_rows"):
            assert out.count("<tr") == len(frame) + 1, type(res).__name__  # header + rows
        else:  # cut like pandas' own HTML view
            assert out.count("<tr") < len(frame) and "..." in out, type(res).__name__


def test_misspelt_human_column_of_a_frame_is_named():
    with pytest.raises(metaeval.DataError, match="humna"):
        dg.ks_score(PLAIN, "humna", low=0, high=2)
    with pytest.raises(metaeval.DataError, match="humna"):
        sim.estimate_parameters(PLAIN, "humna")


def test_warnings_point_at_the_callers_line_through_the_frames_decorator():
    # accepts_frames adds a frame; a fixed stacklevel=2 then named metaeval/data/_accept.py
    from metaeval.errors import SmallSampleWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rl.consistency(RATED, ["m1"], n_resamples=20, rng=0, frame=RATED_KW)  # 5 systems
        dg.sample_size(PLAIN.assign(bleu=1.0), "human", metrics=["bleu"], sizes=(4,),
                       n_resamples=5, rng=0)  # constant metric
    small = [w for w in caught if issubclass(w.category, SmallSampleWarning)]
    assert small, [str(w.message) for w in caught]
    mine = [w for w in caught if issubclass(w.category, metaeval.MetaevalWarning)]
    assert {w.filename for w in mine} == {__file__}, {(w.filename, str(w.message)) for w in mine}
