"""Pairwise-preference meta-evaluation (metaeval.preferences).

References: scikit-learn's ``cohen_kappa_score``, statsmodels' ``fleiss_kappa`` and
``Logit``, the ``krippendorff`` package, scipy.optimize (Bradley-Terry likelihood),
scipy.stats.kendalltau, and slow pure-Python loops written here.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from metaeval.errors import DataError, NonConvergenceWarning, ParameterError, UndefinedStatisticWarning
from metaeval.preferences import (
    HUMAN,
    PreferenceData,
    bradley_terry,
    bt_mm,
    compare_judges,
    labels,
    length_bias,
    logistic_fit,
    position_consistency,
    preference_agreement,
    read_preferences,
)

LAB = (0.0, 0.5, 1.0)


def _random_data(seed, n_inputs=12, n_systems=4, n_raters=3, p_missing=0.15, n_judges=2, orders=False,
                 lengths=True):
    """Random preferences with ties, missing ratings, a discrete and a continuous judge."""
    rng = np.random.default_rng(seed)
    hrows, jrows = [], []
    for i in range(n_inputs):
        q = rng.normal(size=n_systems)
        for a, b in itertools.combinations(range(n_systems), 2):
            la, lb = rng.integers(5, 300, size=2)
            for r in range(n_raters):
                if rng.random() < p_missing:
                    continue
                z = q[a] - q[b] + rng.normal(scale=0.8)
                p = 1.0 if z > 0.4 else (0.0 if z < -0.4 else 0.5)
                hrows.append(dict(input=f"i{i}", system_a=f"s{a}", system_b=f"s{b}", rater=f"r{r}",
                                  preference=p, length_a=la, length_b=lb))
            z = q[a] - q[b] + rng.normal(scale=1.0)
            for o in (("ab", "ba") if orders else ("",)):
                pj = 1.0 if z + rng.normal(scale=0.5) > 0.3 else (0.0 if z < -0.3 else 0.5)
                if rng.random() < 0.05:
                    pj = np.nan
                jrows.append(dict(input=f"i{i}", system_a=f"s{a}", system_b=f"s{b}", judge="disc",
                                  order=o, preference=pj))
            if n_judges > 1:
                jrows.append(dict(input=f"i{i}", system_a=f"s{a}", system_b=f"s{b}", judge="cont", order="",
                                  preference=float(1 / (1 + np.exp(-(z + rng.normal()))))))
    return PreferenceData.from_frames(pd.DataFrame(hrows), pd.DataFrame(jrows))


def _cells(data, judge, eps):
    """Slow: (judge label, rater label) for every (pair, rater) cell."""
    d = data.margin(judge)
    out = []
    for i in range(len(data.pairs)):
        if np.isnan(d[i]):
            continue
        jl = 1.0 if d[i] > eps else (0.0 if d[i] < -eps else 0.5)
        for r in range(len(data.raters)):
            h = data.human[r, i]
            if not np.isnan(h):
                out.append((jl, h))
    return out


def _slow_acc(data, judge, eps):
    c = _cells(data, judge, eps)
    return sum(a == b for a, b in c) / len(c)


def _slow_majority(others):
    vals, cnt = np.unique(others, return_counts=True)
    top = vals[cnt == cnt.max()]
    return 0.5 if len(top) > 1 else float(top[0])


# ---------------------------------------------------------------- construction and readers


def test_from_frames_flips_reversed_pairs_and_averages_samples():
    h = pd.DataFrame(dict(input=["x", "x"], system_a=["A", "B"], system_b=["B", "A"], rater=["r1", "r2"],
                          preference=[1.0, 1.0]))
    j = pd.DataFrame(dict(input=["x", "x"], system_a=["B", "A"], system_b=["A", "B"], judge=["J", "J"],
                          order=["ab", "ab"], preference=[1.0, 0.5]))
    d = PreferenceData.from_frames(h, j)
    assert len(d.pairs) == 1 and d.pairs.iloc[0].tolist() == ["x", "A", "B"]
    # r2 said B (as A of the reversed pair) is better: 0.0 for the canonical A
    assert d.human[:, 0].tolist() == [1.0, 0.0]
    # judge: reversed row says B better (margin -0.5 on the canonical pair), second row tie: mean -0.25
    assert d.margin("J")[0] == pytest.approx(-0.25)
    assert sorted(d.judge_rows["order"]) == ["ab", "ba"]


@pytest.mark.parametrize("change, match", [
    (dict(preference=[0.7]), "human preferences must be 1.0"),
    (dict(system_b=["A"]), "system_a equals system_b"),
    (dict(rater=[""]), "column 'rater' is empty"),
    (dict(preference=["good"]), "non-numeric"),
])
def test_human_validation_names_culprit(change, match):
    row = dict(input=["x"], system_a=["A"], system_b=["B"], rater=["r1"], preference=[1.0])
    row.update(change)
    with pytest.raises(DataError, match=match):
        PreferenceData.from_frames(pd.DataFrame(row))


def test_duplicate_rating_is_an_error_judge_only_pair_kept():
    h = pd.DataFrame(dict(input=["x", "x"], system_a=["A", "B"], system_b=["B", "A"], rater=["r1", "r1"],
                          preference=[1.0, 0.0]))
    with pytest.raises(DataError, match=r"more than once: \(x, A, B, rater r1\)"):
        PreferenceData.from_frames(h)
    h = h.iloc[:1]
    j = pd.DataFrame(dict(input=["y"], system_a=["A"], system_b=["B"], judge=["J"], preference=[1.0]))
    d = PreferenceData.from_frames(h, j)  # a judge-only pair is kept without human labels
    assert len(d.pairs) == 2 and np.isnan(d.human[:, 1]).all() and d.margin("J")[1] == 0.5
    j = pd.DataFrame(dict(input=["x"], system_a=["A"], system_b=["B"], judge=["J"], preference=[1.5]))
    with pytest.raises(DataError, match="must lie in"):
        PreferenceData.from_frames(h, j)
    j = pd.DataFrame(dict(input=["x"], system_a=["A"], system_b=["B"], judge=["J"], preference=[1.0],
                          order=["left"]))
    with pytest.raises(DataError, match="order must be 'ab' or 'ba'"):
        PreferenceData.from_frames(h, j)


def test_read_mt_bench_jsonl(tmp_path):
    def rec(q, a, b, winner, judge, turn=1):
        conv = lambda m: [{"content": f"question {q}", "role": "user"},  # noqa: E731
                          {"content": f"answer by {m} " * (3 if m == "gpt-4" else 1), "role": "assistant"}]
        return dict(question_id=q, model_a=a, model_b=b, winner=winner, judge=judge,
                    conversation_a=conv(a), conversation_b=conv(b), turn=turn)

    recs = [rec(81, "gpt-4", "llama-13b", "model_a", "expert_0"),
            rec(81, "gpt-4", "llama-13b", "tie", "expert_1"),
            rec(81, "llama-13b", "gpt-4", "model_a", "author_2"),  # reversed: llama better
            rec(81, "gpt-4", "llama-13b", "tie (bothbad)", "expert_0", turn=2),
            rec(81, "gpt-4", "llama-13b", "model_a", ["gpt-4", "pair-v2"]),
            rec(82, "gpt-3.5-turbo", "llama-13b", "model_b", "expert_1")]
    p = tmp_path / "human.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    d = read_preferences(p, judges=["gpt-4/pair-v2"])
    assert d.raters == ("expert_0", "expert_1", "author_2")
    assert d.judges == ("gpt-4/pair-v2",)
    assert d.pairs["input"].tolist() == ["81:1", "81:2", "82:1"]
    np.testing.assert_array_equal(d.human[:, 0], [1.0, 0.5, 0.0])
    assert d.human[0, 1] == 0.5 and d.human[1, 2] == 0.0
    assert d.margin("gpt-4/pair-v2")[0] == 0.5
    # lengths: words of the assistant turns (3 x "answer by gpt-4" vs 1 x "answer by llama-13b")
    assert d.lengths[0].tolist() == [9.0, 3.0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rec(1, "a", "b", "model_c", "x")) + "\n")
    with pytest.raises(DataError, match="winner must be one of"):
        read_preferences(bad)
    with pytest.raises(DataError, match="do not occur"):
        read_preferences(p, judges=["gpt-5"])


def test_read_alpacaeval_json(tmp_path):
    recs = [dict(instruction="Say hi", output_1="hi", output_2="hello there friend", preference=2,
                 annotator="human_0", generator_1="m1", generator_2="m2"),
            dict(instruction="Say hi", output_1="hi", output_2="hello there friend", preference=1.5,
                 annotator="human_1", generator_1="m1", generator_2="m2"),
            dict(instruction="Say hi", output_1="hi", output_2="hello there friend", preference=1.2,
                 annotator="gpt4", generator_1="m1", generator_2="m2"),
            dict(instruction="Add", input="2+2", output_1="4", output_2="5", preference=1,
                 annotator="human_0", generator_1="m1", generator_2="m2")]
    p = tmp_path / "annotations.json"
    p.write_text(json.dumps(recs))
    d = read_preferences(p, judges=["gpt4"])
    assert d.raters == ("human_0", "human_1") and d.judges == ("gpt4",)
    assert d.pairs["input"].tolist() == ["Say hi", "Add\n\n2+2"]
    np.testing.assert_array_equal(d.human[:, 0], [0.0, 0.5])
    assert d.human[0, 1] == 1.0
    assert d.margin("gpt4")[0] == pytest.approx(0.8 - 0.5)
    assert d.lengths[0].tolist() == [1.0, 3.0]
    recs[0]["preference"] = 3
    p.write_text(json.dumps(recs))
    with pytest.raises(DataError, match=r"must lie in \[1, 2\]"):
        read_preferences(p, judges=["gpt4"])


def test_read_plain_csv(tmp_path):
    p = tmp_path / "prefs.csv"
    p.write_text("input,system_a,system_b,rater,judge,order,preference\n"
                 "d1,A,B,ann1,,,1\n"
                 "d1,A,B,ann2,,,0.5\n"
                 "d1,A,B,,llm,ab,1\n"
                 "d1,A,B,,llm,ba,0\n"
                 "d2,B,C,ann1,,,0\n")
    d = read_preferences(p)
    assert d.raters == ("ann1", "ann2") and d.judges == ("llm",)
    assert d.margin("llm")[0] == 0.0  # A in one order, B in the other: a tie
    assert np.isnan(d.margin("llm")[1])
    p.write_text("input,system_a,system_b,rater,judge,preference\nd1,A,B,ann1,llm,1\n")
    with pytest.raises(DataError, match="exactly one of 'rater'"):
        read_preferences(p)


def test_judge_layout_of_the_pairwise_prompt():
    """The pairwise LLM-judge output: input, system_a, system_b, judge, order, preference, raw."""
    h = pd.DataFrame(dict(input=["x"] * 2, system_a=["A"] * 2, system_b=["B"] * 2, rater=["r1", "r2"],
                          preference=[1.0, 0.5]))
    j = pd.DataFrame(dict(input=["x"] * 3, system_a=["A"] * 3, system_b=["B"] * 3, judge=["g"] * 3,
                          order=["ab", "ba", "ab"], preference=[1.0, 1.0, np.nan],
                          raw=["[[A]]", "[[B]]", "garbage"]))
    d = PreferenceData.from_frames(h, j)
    assert d.margin("g")[0] == 0.5
    assert d.judge_rows["margin"].isna().sum() == 1


# ---------------------------------------------------------------- agreement


def test_labels_threshold():
    np.testing.assert_array_equal(labels([0.3, -0.3, 0.1, 0.0, np.nan], 0.1), [2, 0, 1, 1, -1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_acc_23_and_acc_eq_against_slow_sweep(seed):
    data = _random_data(seed)
    res = preference_agreement(data, n_resamples=0)
    for j in data.judges:
        assert res.get(j, measure="acc_23").statistic == pytest.approx(_slow_acc(data, j, 0.0), abs=1e-12)
        d = data.margin(j)
        cands = sorted({0.0} | set(np.abs(d[~np.isnan(d)]).tolist()))
        accs = [_slow_acc(data, j, e) for e in cands]
        best = max(accs)
        eps_star = cands[int(np.argmax(np.array(accs) >= best - 1e-12))]
        r = res.get(j, measure="acc_eq")
        assert r.statistic == pytest.approx(best, abs=1e-12)
        assert r.epsilon == pytest.approx(eps_star)


def test_acc_eq_hand_computed():
    # one rater; margins 0.1 (rater tie), 0.3 (rater A), -0.2 (rater tie), 0.05 (rater B)
    h = pd.DataFrame(dict(input=list("abcd"), system_a=["A"] * 4, system_b=["B"] * 4, rater=["r"] * 4,
                          preference=[0.5, 1.0, 0.5, 0.0]))
    j = pd.DataFrame(dict(input=list("abcd"), system_a=["A"] * 4, system_b=["B"] * 4, judge=["m"] * 4,
                          margin=[0.1, 0.3, -0.2, 0.05]))
    with pytest.warns(UndefinedStatisticWarning, match="m:kappa_majority"):  # one rater
        res = preference_agreement(PreferenceData.from_frames(h, j), ceiling=False, n_resamples=0)
    # eps=0: only pair b right (1/4); eps=0.05: d tie (wrong) -> 1/4; eps=0.1: a,d tie -> a right: 2/4;
    # eps=0.2: a, c right, b right -> 3/4; eps=0.3: all ties -> a, c right: 2/4.  Best 3/4 at eps 0.2.
    assert res.get("m", measure="acc_23").statistic == 0.25
    assert res.get("m", measure="acc_eq").statistic == 0.75
    assert res.get("m", measure="acc_eq").epsilon == pytest.approx(0.2)


@pytest.mark.parametrize("seed", [3, 4])
def test_kappas_against_sklearn(seed):
    from sklearn.metrics import cohen_kappa_score

    data = _random_data(seed)
    res = preference_agreement(data, n_resamples=0)
    for j in data.judges:
        eps = res.get(j, measure="acc_eq").epsilon
        c = np.array(_cells(data, j, eps))
        ref = cohen_kappa_score(c[:, 0].astype(str), c[:, 1].astype(str))
        assert res.get(j, measure="kappa_raters").statistic == pytest.approx(ref, abs=1e-12)
        # leave-one-rater-out majority, slow
        d = data.margin(j)
        jl, mj = [], []
        for i in range(len(data.pairs)):
            if np.isnan(d[i]):
                continue
            lab = 1.0 if d[i] > eps else (0.0 if d[i] < -eps else 0.5)
            col = data.human[:, i]
            for r in range(len(data.raters)):
                others = np.delete(col, r)
                others = others[~np.isnan(others)]
                if np.isnan(col[r]) or others.size == 0:
                    continue
                jl.append(lab)
                mj.append(_slow_majority(others))
        ref = cohen_kappa_score(np.array(jl).astype(str), np.array(mj).astype(str))
        assert res.get(j, measure="kappa_majority").statistic == pytest.approx(ref, abs=1e-12)


def test_human_ceiling_against_slow_loops():
    from sklearn.metrics import cohen_kappa_score

    data = _random_data(5)
    res = preference_agreement(data, n_resamples=0)
    a, b, m1, m2 = [], [], [], []
    for i in range(len(data.pairs)):
        col = data.human[:, i]
        for r, s in itertools.permutations(range(len(data.raters)), 2):
            if not (np.isnan(col[r]) or np.isnan(col[s])):
                a.append(col[r])
                b.append(col[s])
        for r in range(len(data.raters)):
            others = np.delete(col, r)
            others = others[~np.isnan(others)]
            if not np.isnan(col[r]) and others.size:
                m1.append(col[r])
                m2.append(_slow_majority(others))
    a, b = np.array(a), np.array(b)
    assert res.get(HUMAN, measure="acc_23").statistic == pytest.approx(np.mean(a == b), abs=1e-12)
    assert res.get(HUMAN, measure="kappa_raters").statistic == pytest.approx(
        cohen_kappa_score(a.astype(str), b.astype(str)), abs=1e-12)
    assert res.get(HUMAN, measure="kappa_majority").statistic == pytest.approx(
        cohen_kappa_score(np.array(m1).astype(str), np.array(m2).astype(str)), abs=1e-12)


@pytest.mark.parametrize("seed", [6, 7])
def test_alpha_against_krippendorff_and_fleiss_against_statsmodels(seed):
    import krippendorff
    from statsmodels.stats.inter_rater import fleiss_kappa

    data = _random_data(seed)
    res = preference_agreement(data, n_resamples=0)
    H = data.human
    ref = krippendorff.alpha(reliability_data=H * 2, level_of_measurement="nominal")
    assert res.get(HUMAN, measure="alpha").statistic == pytest.approx(ref, abs=1e-10)
    complete = ~np.isnan(H).any(0)
    table = np.stack([(H[:, complete] == v).sum(0) for v in LAB], axis=1)
    assert res.get(HUMAN, measure="fleiss_kappa").statistic == pytest.approx(fleiss_kappa(table), abs=1e-10)
    for j in data.judges:
        eps = res.get(j, measure="acc_eq").epsilon
        jl = labels(data.margin(j), eps).astype(float) / 2
        jl[labels(data.margin(j)) < 0] = np.nan
        # alpha over pairs the judge labelled, judge as one more rater
        has = ~np.isnan(jl)
        rel = np.vstack([H[:, has], jl[None, has]]) * 2
        ref = krippendorff.alpha(reliability_data=rel, level_of_measurement="nominal")
        assert res.get(j, measure="alpha").statistic == pytest.approx(ref, abs=1e-10)
        ok = complete & has
        allr = np.vstack([H[:, ok], jl[None, ok]])
        table = np.stack([(allr == v).sum(0) for v in LAB], axis=1)
        assert res.get(j, measure="fleiss_kappa").statistic == pytest.approx(fleiss_kappa(table), abs=1e-10)


def test_constant_labels_give_nan_and_warning():
    h = pd.DataFrame(dict(input=["x", "y"], system_a=["A", "A"], system_b=["B", "B"], rater=["r", "r"],
                          preference=[1.0, 1.0]))
    j = pd.DataFrame(dict(input=["x", "y"], system_a=["A", "A"], system_b=["B", "B"], judge=["J", "J"],
                          preference=[1.0, 1.0]))
    with pytest.warns(UndefinedStatisticWarning, match="J:kappa_raters"):
        res = preference_agreement(PreferenceData.from_frames(h, j), ceiling=False, n_resamples=0)
    assert np.isnan(res.get("J", measure="kappa_raters").statistic)
    assert res.get("J", measure="acc_23").statistic == 1.0


def test_same_seed_same_numbers_and_parameter_errors():
    data = _random_data(8)
    a = preference_agreement(data, n_resamples=300, rng=11).to_frame()
    b = preference_agreement(data, n_resamples=300, rng=11).to_frame()
    pd.testing.assert_frame_equal(a, b)
    assert "seed:11" in a["signature"][0]
    with pytest.raises(ParameterError, match="confidence_level"):
        preference_agreement(data, confidence_level=95)
    with pytest.raises(ParameterError, match="epsilon"):
        preference_agreement(data, epsilon=-1)
    with pytest.raises(DataError, match="judge 'nope' is unknown"):
        preference_agreement(data, judges=["nope"])


def _sim(rng, n_inputs, q):
    """One rater; the judge equals the rater with probability q, else a uniform other label."""
    hrows, jrows = [], []
    for i in range(n_inputs):
        for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
            h = LAB[rng.integers(3)]
            jl = h if rng.random() < q else LAB[(LAB.index(h) + rng.integers(1, 3)) % 3]
            hrows.append(dict(input=i, system_a=a, system_b=b, rater="r", preference=h))
            jrows.append(dict(input=i, system_a=a, system_b=b, judge="J", preference=jl))
    return PreferenceData.from_frames(pd.DataFrame(hrows), pd.DataFrame(jrows))


@pytest.mark.filterwarnings("ignore::metaeval.errors.UndefinedStatisticWarning")  # one rater: no majority
def test_bootstrap_ci_coverage_of_acc_23():
    """Known truth: accuracy q = 0.7; 95% percentile intervals over inputs cover it ~95% of the time."""
    rng = np.random.default_rng(2026)
    # labels uniform for rater and judge: p_e = 1/3, so Cohen's kappa = (0.7 - 1/3) / (2/3) = 0.55
    truth = {"acc_23": 0.7, "kappa_raters": 0.55}
    hits, n = dict.fromkeys(truth, 0), 150
    for k in range(n):
        r = preference_agreement(_sim(rng, 60, 0.7), ceiling=False, n_resamples=300, rng=k)
        for m, t in truth.items():
            row = r.get("J", measure=m)
            hits[m] += row.ci_low <= t <= row.ci_high
    # binomial(150, 0.95): 99.9% of draws lie in [134, 148]; percentile intervals with 60
    # clusters run a little short, so allow down to 130 (86.7%)
    for m in truth:
        assert 130 <= hits[m] <= 150, (m, hits[m])


def test_position_consistency_ci_coverage():
    """Known truth: each pair is judged consistently with probability 0.8."""
    rng = np.random.default_rng(7)
    hits, n = 0, 120
    for k in range(n):
        hrows, jrows = [], []
        for i in range(50):
            for a, b in (("A", "B"), ("A", "C")):
                hrows.append(dict(input=i, system_a=a, system_b=b, rater="r", preference=1.0))
                v = LAB[rng.integers(3)]
                w = v if rng.random() < 0.8 else LAB[(LAB.index(v) + rng.integers(1, 3)) % 3]
                jrows += [dict(input=i, system_a=a, system_b=b, judge="J", order="ab", preference=v),
                          dict(input=i, system_a=a, system_b=b, judge="J", order="ba", preference=w)]
        d = PreferenceData.from_frames(pd.DataFrame(hrows), pd.DataFrame(jrows))
        r = position_consistency(d, n_resamples=300, rng=k).get("J")
        hits += r.ci_low <= 0.8 <= r.ci_high
    assert 103 <= hits <= 120  # binomial(120, 0.95): 99.9% of draws >= 107; percentile slack


# ---------------------------------------------------------------- paired comparison


def test_compare_judges_statistic_and_exact_permutation_pvalue():
    data = _random_data(9, n_inputs=3, n_systems=3, n_raters=2, p_missing=0.0)
    res = compare_judges(data, "disc", "cont", measure="acc_23", n_resamples=4000, rng=1)
    ag = preference_agreement(data, n_resamples=0)
    used = ~np.isnan(data.margin("disc"))
    assert res.n == used.sum()
    # exact permutation distribution by enumerating every swap pattern (slow reference)
    la = [(labels(data.margin(j)) / 2)[used] for j in ("disc", "cont")]
    H = data.human[:, used]

    def acc(lab):
        ok = ~np.isnan(H)
        return (H == lab[None, :])[ok].sum() / ok.sum()

    obs = acc(la[0]) - acc(la[1])
    if used.all():
        assert obs == pytest.approx(ag.get("disc", measure="acc_23").statistic
                                    - ag.get("cont", measure="acc_23").statistic)
    assert res.statistic == pytest.approx(obs, abs=1e-12)
    null = []
    for mask in itertools.product([False, True], repeat=int(used.sum())):
        m = np.array(mask)
        null.append(acc(np.where(m, la[1], la[0])) - acc(np.where(m, la[0], la[1])))
    exact = np.mean(np.abs(null) >= abs(obs) - 1e-12)
    assert res.pvalue == pytest.approx(exact, abs=0.03)
    assert res.ci_low <= res.statistic <= res.ci_high


def _sim_two(rng, n_inputs, q_j, q_k):
    """One rater; judges J and K independently equal the rater with probabilities q_j, q_k."""
    hrows, jrows = [], []
    for i in range(n_inputs):
        for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
            h = LAB[rng.integers(3)]
            hrows.append(dict(input=i, system_a=a, system_b=b, rater="r", preference=h))
            for name, q in (("J", q_j), ("K", q_k)):
                jl = h if rng.random() < q else LAB[(LAB.index(h) + rng.integers(1, 3)) % 3]
                jrows.append(dict(input=i, system_a=a, system_b=b, judge=name, preference=jl))
    return PreferenceData.from_frames(pd.DataFrame(hrows), pd.DataFrame(jrows))


def test_compare_judges_permutation_level_under_the_null():
    """Exchangeable judges (same accuracy 0.6): p <= 0.05 in about 5% of the data sets."""
    rng = np.random.default_rng(12)
    n = 200
    p = np.array([compare_judges(_sim_two(rng, 30, 0.6, 0.6), "J", "K", measure="acc_23", n_resamples=199,
                                 rng=k).pvalue for k in range(n)])
    # binomial(200, 0.05): 99.9% of draws lie in [2, 21]
    assert 1 <= (p <= 0.05).sum() <= 21
    assert np.all((p > 0) & (p <= 1))


def test_compare_judges_detects_a_better_judge():
    rng = np.random.default_rng(3)
    good, bad = _sim(rng, 80, 0.9), None
    jr = good.judge_rows.copy()
    noisy = jr.copy()
    noisy["judge"] = "K"
    noisy["margin"] = rng.choice([-0.5, 0.0, 0.5], size=len(noisy))
    bad = PreferenceData(good.pairs, good.raters, good.human, pd.concat([jr, noisy], ignore_index=True))
    r = compare_judges(bad, "J", "K", measure="kappa_raters", n_resamples=500, rng=0)
    assert r.statistic > 0.5 and r.ci_low > 0 and r.pvalue == pytest.approx(1 / 501)
    with pytest.raises(ParameterError, match="measure="):
        compare_judges(bad, "J", "K", measure="alpha")


# ---------------------------------------------------------------- position consistency


def test_position_consistency_hand_computed():
    rows = []
    # pair p0: A both orders (consistent); p1: ab A, ba B (first position won both);
    # p2: ab B, ba A (second); p3: only ab (not counted); p4: ab tie, ba tie (consistent)
    spec = {"p0": (1.0, 1.0), "p1": (1.0, 0.0), "p2": (0.0, 1.0), "p3": (1.0, None), "p4": (0.5, 0.5)}
    h = pd.DataFrame(dict(input=list(spec), system_a="A", system_b="B", rater="r", preference=1.0))
    for k, (ab, ba) in spec.items():
        rows.append(dict(input=k, system_a="A", system_b="B", judge="J", order="ab", preference=ab))
        if ba is not None:
            rows.append(dict(input=k, system_a="A", system_b="B", judge="J", order="ba", preference=ba))
    d = PreferenceData.from_frames(h, pd.DataFrame(rows))
    r = position_consistency(d, n_resamples=200, rng=0).get("J")
    assert (r.n, r.consistency, r.first_position, r.second_position) == (4, 0.5, 0.25, 0.25)
    assert 0 <= r.ci_low <= r.consistency <= r.ci_high <= 1
    d2 = _random_data(1, n_judges=2, orders=True)
    with pytest.warns(UndefinedStatisticWarning, match="cont"):
        res = position_consistency(d2, n_resamples=0)
    assert np.isnan(res.get("cont").consistency)


# ---------------------------------------------------------------- length bias


@pytest.mark.parametrize("seed", [0, 1])
def test_logistic_fit_against_statsmodels(seed):
    import statsmodels.api as sm

    rng = np.random.default_rng(seed)
    x = rng.normal(size=300)
    y = (rng.random(300) < 1 / (1 + np.exp(-(0.3 + 0.8 * x)))).astype(float)
    b0, b1, se, lo, hi, p, conv = logistic_fit(x, y, confidence_level=0.9)
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    ci = ref.conf_int(alpha=0.1)
    assert conv
    np.testing.assert_allclose([b0, b1], ref.params, rtol=1e-8)
    np.testing.assert_allclose([se, lo, hi, p], [ref.bse[1], ci[1, 0], ci[1, 1], ref.pvalues[1]], rtol=1e-6)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 100.0, 1e4])
def test_logistic_fit_does_not_call_a_large_slope_separation(scale):
    # Regression (review): a finite MLE with a slope above 50 (a large `per`, or small length
    # units) came back NaN as "separation"; the fit now decides separation from the data and
    # works on the standardized predictor. Reference: statsmodels Logit on the same data.
    import statsmodels.api as sm

    rng = np.random.default_rng(4)
    d = rng.normal(0, 60, size=400)
    y = (rng.random(400) < 1 / (1 + np.exp(-0.02 * d))).astype(float)
    c = scale / 5000
    x = d * c  # slope about 100 / scale per unit of x
    b0, b1, se, lo, hi, p, conv = logistic_fit(x, y)
    # the MLE is equivariant: fit statsmodels on the well-scaled d, then b1(x) = b1(d) / c
    ref = sm.Logit(y, sm.add_constant(d)).fit(disp=0)
    assert conv
    np.testing.assert_allclose([b0, b1, se], [ref.params[0], ref.params[1] / c, ref.bse[1] / c], rtol=1e-6)
    # quasi-complete separation (a tie at the threshold) still has no finite MLE
    assert np.isnan(logistic_fit([-2.0, 0.0, 0.0, 2.0], [0.0, 0.0, 1.0, 1.0])[1])


def test_length_bias_against_statsmodels_and_separation():
    import statsmodels.api as sm

    data = _random_data(2)
    res = length_bias(data)
    H = data.human
    dl = (data.lengths[:, 0] - data.lengths[:, 1]) / 100
    x = np.broadcast_to(dl, H.shape)
    ok = np.isin(H, (0.0, 1.0))
    ref = sm.Logit(H[ok], sm.add_constant(x[ok])).fit(disp=0)
    r = res.get(HUMAN)
    assert r.n == ok.sum()
    np.testing.assert_allclose([r.intercept, r.slope, r.se], [ref.params[0], ref.params[1], ref.bse[1]], rtol=1e-6)
    assert r.odds_ratio == pytest.approx(np.exp(r.slope))
    # separation: the longer output always wins
    assert np.isnan(logistic_fit([-2.0, -1.0, 1.0, 2.0], [0.0, 0.0, 1.0, 1.0])[1])
    h = pd.DataFrame(dict(input=list("abcd"), system_a="A", system_b="B", rater="r",
                          preference=[0.0, 0.0, 1.0, 1.0], length_a=[1, 2, 9, 8], length_b=[5, 5, 5, 5]))
    with pytest.warns(NonConvergenceWarning, match="human"):
        res = length_bias(PreferenceData.from_frames(h))
    assert np.isnan(res.get(HUMAN).slope)


# ---------------------------------------------------------------- Bradley-Terry


def _bt_slow(w):
    """Direct maximisation of the Bradley-Terry log-likelihood (scipy.optimize, BFGS)."""
    K = w.shape[0]

    def nll(t):
        theta = np.r_[0.0, t]
        diff = theta[:, None] - theta[None, :]
        return -(w * (diff - np.logaddexp(0, diff))).sum()

    r = optimize.minimize(nll, np.zeros(K - 1), method="BFGS", options={"gtol": 1e-10})
    theta = np.r_[0.0, r.x]
    return theta - theta.mean()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bt_mm_against_direct_likelihood(seed):
    rng = np.random.default_rng(seed)
    K = 5
    w = rng.integers(0, 6, size=(K, K)).astype(float) + 0.5 * rng.integers(0, 3, size=(K, K))
    np.fill_diagonal(w, 0)
    ls, it, conv = bt_mm(w)
    assert conv
    np.testing.assert_allclose(ls, _bt_slow(w), atol=1e-5)


def test_bradley_terry_half_wins_and_tau():
    data = _random_data(4, n_systems=5)
    bt = bradley_terry(data)
    H = data.human
    systems = data.systems
    idx = {s: k for k, s in enumerate(systems)}
    w = np.zeros((5, 5))
    for i, (_, a, b) in enumerate(data.pairs.itertuples(index=False)):
        for r in range(H.shape[0]):
            if not np.isnan(H[r, i]):
                w[idx[a], idx[b]] += H[r, i]
                w[idx[b], idx[a]] += 1 - H[r, i]
    np.testing.assert_allclose(bt.get(HUMAN).log_strength, _bt_slow(w), atol=1e-5)
    j = bt.get("disc")
    ref = stats.kendalltau(bt.get(HUMAN).log_strength, j.log_strength, variant="b")
    assert j.tau_b == pytest.approx(ref.statistic) and j.tau_pvalue == pytest.approx(ref.pvalue)
    assert list(bt.ranking().columns) == [HUMAN, "disc", "cont"]


def test_bradley_terry_without_mle_is_nan_with_warning():
    # s0 beats everyone every time: no finite MLE
    h = pd.DataFrame(dict(input=["x", "x", "x"], system_a=["s0", "s0", "s1"], system_b=["s1", "s2", "s2"],
                          rater="r", preference=[1.0, 1.0, 0.5]))
    with pytest.warns(NonConvergenceWarning, match="strongly connected"):
        bt = bradley_terry(PreferenceData.from_frames(h))
    assert np.isnan(bt.get(HUMAN).log_strength).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_acc_eq_sweep_equals_slow_sweep_on_replicated_pairs(seed):
    """The bootstrap fast path (pair weights) against the slow sweep on the resampled data
    (each pair repeated as often as its input is drawn), with ties in |d| and a zero margin."""
    from metaeval.stats.prefagree import acc_eq_sweep as _acc_eq_sweep  # moved from preferences (issue 25)
    from metaeval.stats.prefagree import human_counts as _human_counts
    from metaeval.stats.resampling import bootstrap_counts as _boot_weights

    data = _random_data(seed, n_inputs=6)
    d = np.array(data.margin("disc"))
    d[0] = 0.0
    has = ~np.isnan(d)
    Hc = _human_counts(data.human)
    W = _boot_weights(np.random.default_rng(seed), 5, len(data.inputs))
    acc, eps = _acc_eq_sweep(np.where(has, d, 0.0), Hc, W[:, data.pair_input] * has)
    for b in range(5):
        reps = W[b, data.pair_input].astype(int) * has
        cells = []
        for i in np.flatnonzero(reps):
            cells += [(i, r) for r in range(len(data.raters)) if not np.isnan(data.human[r, i])] * reps[i]
        cands = sorted({0.0} | set(np.abs(d[reps > 0]).tolist()))

        def acc_at(e):
            return np.mean([(1.0 if d[i] > e else 0.0 if d[i] < -e else 0.5) == data.human[r, i] for i, r in cells])

        vals = [acc_at(e) for e in cands]
        assert acc[b] == pytest.approx(max(vals), abs=1e-12)
        assert acc_at(eps[b]) == pytest.approx(max(vals), abs=1e-12)


def test_numbers_do_not_depend_on_the_block_size(monkeypatch):
    import metaeval.preferences as pfm

    data = _random_data(10, orders=True)
    runs = []
    for block in (128, 7):
        monkeypatch.setattr(pfm, "_BLOCK", block)
        a = preference_agreement(data, n_resamples=50, rng=3).to_frame()
        c = compare_judges(data, "disc", "cont", n_resamples=50, rng=3)
        p = position_consistency(data, "disc", n_resamples=50, rng=3).to_frame()
        runs.append((a, c, p))
    pd.testing.assert_frame_equal(runs[0][0], runs[1][0])
    pd.testing.assert_frame_equal(runs[0][2], runs[1][2])
    assert (runs[0][1].ci_low, runs[0][1].pvalue) == (runs[1][1].ci_low, runs[1][1].pvalue)


def test_ceiling_is_automatic_with_one_rater():
    data = _sim(np.random.default_rng(0), 10, 0.7)
    with pytest.warns(UndefinedStatisticWarning):
        res = preference_agreement(data, n_resamples=0)
    assert {r.judge for r in res} == {"J"}
    with pytest.raises(ParameterError, match="at least two raters"):
        preference_agreement(data, ceiling=True, n_resamples=0)


def test_alpacaeval_without_generators_keys_pairs_by_output_text(tmp_path):
    """Records of one instruction with different outputs are different pairs; a record with
    the outputs swapped is the same pair, flipped."""
    recs = [dict(instruction="Q", output_1="x", output_2="y", preference=1, annotator_index=0),
            dict(instruction="Q", output_1="y", output_2="x", preference=1, annotator_index=1),
            dict(instruction="Q", output_1="x", output_2="z", preference=2, annotator_index=0)]
    p = tmp_path / "cross.json"
    p.write_text(json.dumps(recs))
    d = read_preferences(p, format="alpacaeval")
    assert len(d.pairs) == 2 and d.raters == ("0", "1")
    np.testing.assert_array_equal(d.human[:, 0], [1.0, 0.0])  # annotator 1 preferred y over x
    assert d.human[0, 1] == 0.0 and np.isnan(d.human[1, 1])


def test_from_dataset_against_slow_loops_with_a_pairwise_judge_frame():
    """SummEval-like dataset: preferences from ratings, metric margins, and the pairwise
    LLM-judge long table (input, system_a, system_b, judge, order, preference, raw)."""
    import metaeval

    rng = np.random.default_rng(0)
    systems, inputs = ["s0", "s1", "s2"], ["d0", "d1"]
    rows = []
    for s in systems:
        for i in inputs:
            m = rng.normal()
            for r in ("e1", "e2"):
                rows.append(dict(system=s, input=i, rater=r, coh=float(rng.integers(1, 4)), m=m))
    f = pd.DataFrame(rows)
    ds = metaeval.Dataset.from_frame(f, human=["coh"], metrics=["m"], rater="rater")
    frame = pd.DataFrame([dict(input=i, system_a=b, system_b=a, judge="llm", order=o, preference=1.0, raw="B")
                          for i in inputs for a, b in (("s0", "s1"),) for o in ("ab", "ba")])
    d = PreferenceData.from_dataset(ds, "coh", judges=frame)
    assert d.judges == ("m", "llm") and len(d.pairs) == 6
    R = ds.ratings("coh")
    M = ds.scores("m")
    for k, (i, a, b) in enumerate(d.pairs.itertuples(index=False)):
        ia, ib, j = systems.index(a), systems.index(b), inputs.index(i)
        for r in range(2):
            x, y = R[r, ia, j], R[r, ib, j]
            assert d.human[r, k] == (1.0 if x > y else 0.0 if x < y else 0.5)
        assert d.margin("m")[k] == pytest.approx(M[ia, j] - M[ib, j])
        if (a, b) == ("s0", "s1"):
            # the frame gave (s1, s0) with s1 preferred: on the canonical (s0, s1) pair, B better
            assert d.margin("llm")[k] == -0.5
        else:
            assert np.isnan(d.margin("llm")[k])
    bad = frame.assign(system_a="s9")
    with pytest.raises(DataError, match="not pairs of"):
        PreferenceData.from_dataset(ds, "coh", judges=bad)


def test_one_percentile_interval_for_preferences_and_the_rest():
    """stats.prefagree.percentile_ci (at least half the replicates finite) and
    stats.inference.percentile_interval (at least 2) were two functions; now one, the
    preferences' rule its min_finite_fraction=0.5.  Oracle: numpy.quantile at (1 -/+ cl) / 2 on
    the finite replicates, the NaN rule written here."""
    from metaeval.stats.inference import percentile_interval

    rng = np.random.default_rng(5)
    for n_finite in range(0, 11):
        d = rng.normal(size=10)
        d[n_finite:] = np.nan
        rng.shuffle(d)
        ok = d[np.isfinite(d)]
        for frac, need in ((0.0, 2), (0.5, 5)):
            for cl in (0.9, 0.95, 0.68):
                got = percentile_interval(d, cl, min_finite_fraction=frac)
                if ok.size < need:
                    assert np.isnan(got).all()
                else:
                    want = np.quantile(ok, [(1 - cl) / 2, (1 + cl) / 2])
                    assert got == pytest.approx(tuple(want), rel=1e-14, abs=1e-15)


def test_a_file_of_judges_only_said_human_preferences_are_empty(tmp_path):
    """Blind run: a preferences CSV without rater rows (no 'rater' column) stopped with 'human
    preferences are empty', naming neither the column nor the option; now one line says both."""
    p = tmp_path / "prefs.csv"
    p.write_text("input,system_a,system_b,judge,order,preference\n"
                 "d1,A,B,llm,ab,1\n"
                 "d1,A,B,llm,ba,0\n")
    with pytest.raises(DataError, match=r"prefs.csv: no row has a human rater \(a row with a value in the "
                                        r"'rater' column .*--input-format"):
        read_preferences(p)
