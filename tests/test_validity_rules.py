"""The rules of what data MTMM and CFA accept live in the analyses (issue 25 item 1).

`metaeval validity` refused rater slots, raters rotating over cells and human columns with one
rating per cell before calling the analyses; `metaeval.mtmm` and `metaeval.cfa` accepted them (the
CFA then failed on 0 complete cells, the MTMM mixed raters).  Each rule is checked here through
the API, on data built so that the rule's condition holds by construction: which rater rated which
cell is chosen in the test, so whether the raters rotate is known without the code under test.
"""

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval.errors import DataError, ParameterError
from metaeval.validity import cfa, mtmm


def _raters_frame(rotating: bool, seed=14):
    """4 named raters; each cell rated by all 4 (same) or by 3 of them, in turn (rotating)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(5):
        for i in range(12):
            true = rng.normal() + 0.4 * s
            who = [r for r in range(4) if r != (s * 12 + i) % 4] if rotating else range(4)
            for r in who:
                rows.append({"system": f"S{s}", "input": f"d{i}", "rater": f"ann{r}",
                             "quality": float(np.round(true + rng.normal(), 1)),
                             "fluency": float(np.round(true + rng.normal(), 1)), "bleu": true})
    return pd.DataFrame(rows)


def _dataset(rotating):
    return metaeval.Dataset.from_frame(_raters_frame(rotating), human=["quality", "fluency"],
                                       metrics=["bleu"], rater="rater")


def test_rotating_raters_refused_by_mtmm_and_cfa():
    ds = _dataset(rotating=True)
    # by construction no cell is rated by all 4 raters; every cell by 3
    r = ds.ratings("quality").reshape(4, -1)
    assert np.isfinite(r).all(0).sum() == 0 and (np.isfinite(r).sum(0) == 3).all()
    for call in (lambda: mtmm(ds), lambda: mtmm(ds, ["quality", "fluency"]),
                 lambda: mtmm(ds, {"ann0": {"q": "quality@ann0", "f": "fluency@ann0"},
                                   "ann1": {"q": "quality@ann1", "f": "fluency@ann1"}}),
                 lambda: cfa(ds), lambda: cfa(ds, "Q =~ quality@ann0 + quality@ann1 + quality@ann2")):
        with pytest.raises(DataError) as exc:
            call()
        msg = str(exc.value)
        assert "the raters of 'quality' rotate over cells" in msg and "same raters in every cell" in msg
        assert "metaeval reliability" in msg and "\n" not in msg


def test_same_raters_accepted_and_a_mean_column_is_not_checked():
    ds = _dataset(rotating=False)
    t = mtmm(ds)  # the default design: every human column with 2+ raters
    assert t.traits == ("quality", "fluency") and t.methods == ("ann0", "ann1", "ann2", "ann3")
    assert t.values.shape == (8, 8) and mtmm(ds, ["quality", "fluency"]).values.tolist() == t.values.tolist()
    # a rotating column used as a whole (its cell means) is no rater design: accepted
    rot = _dataset(rotating=True)
    m = mtmm(rot, {"a": {"q": "quality", "b": "bleu"}, "b": {"q": "fluency", "b": "bleu"}})
    assert m.traits == ("q", "b")


def test_mtmm_and_cfa_took_a_raters_parameter_that_could_only_fail():
    """mtmm/cfa had raters={"same", "slots"}, whose "slots" always raised: a parameter that could
    only fail.  Rater slots cannot be told from the ratings (the same rater names in every cell),
    so the analyses take no such parameter; the refusal stays where slots are declared (the
    command line's --rater-slots), and rotating raters, which the ratings show, are refused."""
    import inspect

    for f in (mtmm, cfa):
        assert "raters" not in inspect.signature(f).parameters
        with pytest.raises(TypeError, match="raters"):
            f(_dataset(rotating=False), raters="same")


def test_single_rater_columns_named_with_the_option():
    df = _raters_frame(False)
    one = df[df["rater"] == "ann0"].drop(columns="rater")
    ds = metaeval.Dataset.from_frame(one, human=["quality", "fluency"], metrics=["bleu"])
    with pytest.raises(DataError) as exc:
        mtmm(ds, ["quality", "fluency"])
    msg = str(exc.value)
    assert msg.startswith("'quality', 'fluency': one rating per cell (a single rater)")
    assert "--human" in msg and "--rater-col" in msg and "design=" not in msg
    with pytest.raises(DataError, match="no human column has individual raters: MTMM and CFA need 2"):
        mtmm(ds)


def test_one_trait_names_the_human_option():
    ds = _dataset(rotating=False)
    with pytest.raises(ParameterError, match=r"at least 2 traits and 2 methods; .*\(--human: 2\+ human"):
        mtmm(ds, ["quality"])
