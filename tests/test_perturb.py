"""Tests of :mod:`metaeval.perturb`: the sentence splitter, each perturbation on
crafted texts with exact expected outputs, determinism, skip reasons, option
validation, and :func:`perturb_dataset` on the bundled SummEval texts.

Where a random perturbation has a single possible output (two distinct
sentences to reorder, one agreement candidate, one pair of adjacent words),
the expected text is derived by hand in the comment.  Where several outputs
are possible, the expected one is re-derived from the documented stream
(``named_generator(SeedSequence(seed), "perturb", name, id)``) with plain
Python on the drawn numbers, so the test pins the seeding contract.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
import pytest

import metaeval
from metaeval import DataError, ParameterError
from metaeval.perturb import (
    MISSING,
    PERTURBATIONS,
    describe,
    get_perturbation,
    perturb,
    perturb_dataset,
    round_count,
    sentences,
)


def _stream(seed, name, text_id):
    """The documented per-text generator, rebuilt from numpy primitives."""
    key = zlib.crc32("\x1f".join(["perturb", name, text_id]).encode())
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))


def one(text, name, **kw):
    """The single output (or None) of perturbing one text."""
    kw.setdefault("rng", 0)
    res = perturb([text], name, **kw)
    return res.perturbed[0], res.reason[0]


# --------------------------------------------------------------------------
# sentence splitting


@pytest.mark.parametrize(
    "text, expected",
    [
        # tokenized SummEval style: " . " ends a sentence before a capital
        ("Paul merson was here . Andros scored .", ["Paul merson was here .", "Andros scored ."]),
        # abbreviation and initial do not end a sentence
        (
            "Mr. Smith met J. K. Rowling . She smiled .",
            ["Mr. Smith met J. K. Rowling .", "She smiled ."],
        ),
        # lowercase after a period: no boundary (st. louis)
        ("He lives in st. louis now .", ["He lives in st. louis now ."]),
        # runs of ! stay together; closing quote kept with its sentence
        (
            "Wanted ! ! ! Girlfriend now . 'Yes !' He said .",
            ["Wanted ! ! !", "Girlfriend now .", "'Yes !'", "He said ."],
        ),
        # attached punctuation, question mark, digits after a boundary
        (
            "Is it? 2015 was good. U.S. troops left.",
            ["Is it?", "2015 was good.", "U.S. troops left."],
        ),
        ("", []),
    ],
)
def test_sentences(text, expected):
    assert [" ".join(s) for s in sentences(text)] == expected


def test_round_count_half_up_and_half_even():
    # 0.5 * 5 = 2.5: half up -> 3, half to even -> 2
    assert round_count(0.5, 5, "half_up") == 3
    assert round_count(0.5, 5, "half_even") == 2
    # 0.1 * 5 = 0.5 exactly on the decimal value: half up -> 1, half even -> 0
    assert round_count(0.1, 5, "half_up") == 1
    assert round_count(0.1, 5, "half_even") == 0
    # seed paper 004's 20%: n/5 never ends in .5, so both rules agree
    for n in range(101):
        assert round_count(0.2, n, "half_up") == round_count(0.2, n, "half_even") == round(n / 5)
    with pytest.raises(ParameterError, match="rounding='up'; choose one of half_up, half_even"):
        round_count(0.2, 5, "up")


# --------------------------------------------------------------------------
# each perturbation on crafted text


def test_sentence_reorder_two_sentences_has_one_answer():
    # two distinct sentences: the only different order is the swap, for any seed
    for seed in range(5):
        out, reason = one("It rains . The match is off .", "sentence_reorder", rng=seed)
        assert (out, reason) == ("The match is off . It rains .", "")


def test_sentence_reorder_three_sentences_is_a_permutation():
    text = "A one . B two . C three ."
    out = perturb([text], "sentence_reorder", rng=3).perturbed[0]
    assert out != text
    assert sorted(" ".join(s) for s in sentences(out)) == ["A one .", "B two .", "C three ."]
    # re-derived: the first permutation drawn from the text's stream that is not the identity
    gen = _stream(3, "sentence_reorder", "0")
    sents = ["A one .", "B two .", "C three ."]
    while True:
        perm = [int(i) for i in gen.permutation(3)]
        if perm != [0, 1, 2]:
            break
    assert out == " ".join(sents[i] for i in perm)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("Only one sentence here .", "fewer than 2 sentences"),
        ("Same . Same .", "all sentences identical"),
        ("no capitals . so one sentence .", "fewer than 2 sentences"),
    ],
)
def test_sentence_reorder_skips(text, reason):
    assert one(text, "sentence_reorder") == (None, reason)


@pytest.mark.parametrize(
    "text, expected",
    [
        # auxiliary table (one candidate each), capitalisation kept
        ("The cat is hungry .", "The cat are hungry ."),
        ("They were late .", "They was late ."),
        ("Has she left ?", "Have she left ?"),
        ("She does n't know .", "She do n't know ."),
        ("He doesn't care .", "He don't care ."),
        ("IS it true ?", "ARE it true ?"),
        # 3rd person -s after he/she/it: says -> say, tries -> try, watches -> watch, goes -> go
        ("He says so .", "He say so ."),
        ("She tries hard .", "She try hard ."),
        ("It watches us .", "It watch us ."),
        ("He goes home .", "He go home ."),
        # base form after they/we/I gets -s: run -> runs, try -> tries, pass -> passes, go -> goes
        ("They run fast .", "They runs fast ."),
        ("We try again .", "We tries again ."),
        ("I pass the ball .", "I passes the ball ."),
        ("They go home .", "They goes home ."),
    ],
)
def test_subject_verb_disagreement_single_candidate(text, expected):
    assert one(text, "subject_verb_disagreement") == (expected, "")


@pytest.mark.parametrize(
    "text",
    [
        "The cat sat on the mat .",  # no auxiliary, no pronoun subject
        "He walked home .",  # past tense: -ed after he is not a candidate
        "They will win .",  # modal after they (NOT_VERBS)
        "He also left .",  # adverb after he
        "It thus ends .",  # -us after it
        "They said so .",  # irregular past in NOT_VERBS
        "",
    ],
)
def test_subject_verb_disagreement_skips(text):
    assert one(text, "subject_verb_disagreement") == (None, "no verb form to change")


def test_subject_verb_disagreement_n_edits():
    text = "He is here and they are there ."  # candidates: is (2), are (6)
    out, _ = one(text, "subject_verb_disagreement", n_edits=2)
    assert out == "He are here and they is there ."
    out, _ = one(text, "subject_verb_disagreement", n_edits=5)  # capped at the 2 candidates
    assert out == "He are here and they is there ."
    # n_edits=1 changes exactly one, the one drawn from the stream: choice(2, size=1)
    out, _ = one(text, "subject_verb_disagreement", rng=7)
    k = int(_stream(7, "subject_verb_disagreement", "0").choice(2, size=1, replace=False)[0])
    assert out == ["He are here and they are there .", "He is here and they is there ."][k]


def test_drop_words_counts_and_stream():
    # 10 words + 1 punctuation token: round(0.2 * 10) = 2 words dropped, "." kept
    text = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ."
    out, reason = one(text, "drop_words", rng=11)
    assert reason == ""
    toks = out.split()
    assert len(toks) == 9 and toks[-1] == "."
    # re-derived: choice(10, size=2, replace=False) on the text's stream picks the dropped words
    drop = {int(i) for i in _stream(11, "drop_words", "0").choice(10, size=2, replace=False)}
    assert out == " ".join([f"w{i}" for i in range(10) if i not in drop] + ["."])
    # 30%: round(3.0) = 3 words
    out, _ = one(text, "drop_words", fraction=0.3)
    assert len(out.split()) == 8


@pytest.mark.parametrize(
    "text, kw, reason",
    [
        ("a b", {}, "rounds to 0 words"),  # 0.2 * 2 = 0.4 -> 0
        (". , !", {}, "no words"),
        ("one", {"fraction": 0.9}, "would drop every word"),  # 0.9 * 1 -> 1 = all
        ("a b c d e", {"fraction": 0.1, "rounding": "half_even"}, "rounds to 0 words"),  # 0.5 -> 0
    ],
)
def test_drop_words_skips(text, kw, reason):
    assert one(text, "drop_words", **kw) == (None, reason)


def test_drop_words_half_up_drops_one_where_half_even_drops_none():
    # 0.1 * 5 = 0.5: half up -> 1 word
    out, _ = one("a b c d e", "drop_words", fraction=0.1)
    assert len(out.split()) == 4


def test_word_swap():
    # one candidate pair (Hello, world); "." is not a word
    assert one("Hello world .", "word_swap") == ("world Hello .", "")
    # identical neighbours are not candidates
    assert one("a a .", "word_swap") == (None, "no adjacent different words")
    assert one("solo .", "word_swap") == (None, "no adjacent different words")
    # n_swaps larger than the candidates: all applied left to right: (a b c) -> (b a c) -> (b c a)
    assert one("a b c", "word_swap", n_swaps=3) == ("b c a", "")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("He does not know .", "He does know ."),
        ("He does n't know .", "He does know ."),
        ("It ca n't be .", "It can be ."),
        ("He wo n't go .", "He will go ."),
        ("I don't care .", "I do care ."),
        ("I can't and won't .", "I can and will ."),
        ("She cannot swim .", "She can swim ."),
        ("They have never won .", "They have won ."),
        ("Not all came . Never again .", "All came . Again ."),
        ("He isn’t here .", "He is here ."),  # typographic apostrophe
        ("DON'T GO", "DO GO"),
    ],
)
def test_negation_removal(text, expected):
    assert one(text, "negation_removal") == (expected, "")


def test_negation_removal_skips_and_leaves_no_alone():
    assert one("There is no doubt .", "negation_removal") == (None, "no negation")
    assert one("not never", "negation_removal") == (None, "only negation words")


def test_repetition():
    # length equal to the token count: one possible span
    assert one("a b c", "repetition", length=3) == ("a b c a b c", "")
    assert one("a b", "repetition", length=3) == (None, "fewer tokens than length")
    # one sentence: it is repeated
    assert one("Hi there .", "repetition", unit="sentence") == ("Hi there . Hi there .", "")
    # re-derived span start: integers(n - length + 1) on the text's stream
    text = "t0 t1 t2 t3 t4 t5"
    out, _ = one(text, "repetition", rng=5, length=2)
    s = int(_stream(5, "repetition", "0").integers(5))
    toks = text.split()
    assert out == " ".join(toks[: s + 2] + toks[s : s + 2] + toks[s + 2 :])


def test_truncation():
    # 4 words, fraction .5: drop the last 2 words (and the punctuation after the 2nd word)
    assert one("One two , three four .", "truncation") == ("One two", "")
    assert one("a b c d e", "truncation", fraction=0.2) == ("a b c d", "")  # round(1.0) = 1
    assert one("a", "truncation") == (None, "would drop every word")  # round_half_up(.5) = 1
    assert one("a b", "truncation", fraction=0.2) == (None, "rounds to 0 words")


# --------------------------------------------------------------------------
# the API: determinism, ids, missing texts, validation, signatures


def test_same_seed_same_output_and_order_independence():
    texts = ["A b c d e f g h i j .", "K l m n o p q r s t .", "U v w x y z . Q r s t ."]
    for name in ("drop_words", "word_swap", "repetition", "sentence_reorder"):
        a = perturb(texts, name, rng=123)
        b = perturb(texts, name, rng=123)
        assert a.perturbed == b.perturbed
        # a text's output depends on its id, not its position or the other texts
        c = perturb(texts[::-1], name, rng=123, ids=["2", "1", "0"])
        assert c.perturbed[::-1] == a.perturbed
        d = perturb(texts[:1], name, rng=123)
        assert d.perturbed[0] == a.perturbed[0]
    # a Generator argument: the same state gives the same outputs
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert (
        perturb(texts, "drop_words", rng=g1).perturbed
        == perturb(texts, "drop_words", rng=g2).perturbed
    )
    # seed 0 is a seed, not "no seed"
    assert perturb(texts, "drop_words", rng=0).signature.startswith("perturb:drop_words|seed:0|")


def test_different_seeds_differ_somewhere():
    texts = [" ".join(f"w{i}" for i in range(30))] * 1
    outs = {perturb(texts, "drop_words", rng=s).perturbed[0] for s in range(10)}
    assert len(outs) > 1


def test_result_views_and_counts():
    res = perturb(["It rains . It pours .", None, float("nan"), "One ."], "sentence_reorder", rng=1)
    assert res.applied == (True, False, False, False)
    assert res.reason == ("", MISSING, MISSING, "fewer than 2 sentences")
    assert res.perturbed[1:] == (None, None, None)
    assert (res.n, res.n_applied, res.n_skipped) == (4, 1, 3)
    assert res.skipped == {"missing text": 2, "fewer than 2 sentences": 1}
    f = res.to_frame()
    assert list(f.columns) == ["id", "original", "perturbed", "applied", "reason"]
    assert f.perturbed.isna().sum() == 3
    d = res.to_dict()
    assert d["n_skipped"] == 3 and d["options"] == {}
    assert "original" in res.to_dict(texts=True)
    assert res.signature == "perturb:sentence_reorder|seed:1|metaeval:" + metaeval.__version__
    # deterministic perturbations carry no seed
    sig = perturb(["He is not ."], "truncation", rng=5).signature
    assert (
        sig == "perturb:truncation|fraction:0.5|rounding:half_up|metaeval:" + metaeval.__version__
    )
    # a single string is one text
    assert perturb("It rains . It pours .", "sentence_reorder", rng=1).n == 1


def test_validation_messages():
    with pytest.raises(
        ParameterError,
        match="perturbation 'shuffle' is not registered; choose one of sentence_reorder",
    ):
        perturb(["a"], "shuffle")
    with pytest.raises(ParameterError, match="perturbation 'drop_words' has no option"):
        perturb(["a"], "drop_words", n_swaps=2)
    with pytest.raises(ParameterError, match="has no option.*its options: none"):
        perturb(["a"], "negation_removal", fraction=0.2)
    with pytest.raises(
        ParameterError, match=r"fraction=1.5 must be a number strictly between 0 and 1"
    ):
        perturb(["a"], "drop_words", fraction=1.5)
    with pytest.raises(ParameterError, match="n_edits=0 must be a positive int"):
        perturb(["a"], "subject_verb_disagreement", n_edits=0)
    with pytest.raises(ParameterError, match="unit='para'; choose one of words, sentence"):
        perturb(["a"], "repetition", unit="para")
    with pytest.raises(ParameterError, match=r"texts\[1\] is a int, not a str"):
        perturb(["a", 3], "drop_words")
    with pytest.raises(ParameterError, match="ids has 1 entries but there are 2 texts"):
        perturb(["a", "b"], "drop_words", ids=["x"])
    with pytest.raises(ParameterError, match="ids must be unique; repeated: x"):
        perturb(["a", "b"], "drop_words", ids=["x", "x"])
    with pytest.raises(ParameterError, match="not usable as a seed"):
        perturb(["a"], "drop_words", rng="seed")


def test_registry_documents_each_perturbation():
    table = describe()
    assert list(table.name) == list(PERTURBATIONS)
    assert set(PERTURBATIONS) == {
        "sentence_reorder", "subject_verb_disagreement", "drop_words", "word_swap",
        "negation_removal", "repetition", "truncation",
    }  # fmt: skip
    assert table.degrades.str.len().min() > 5 and table.description.str.len().min() > 10
    assert get_perturbation("drop_words").defaults == {"fraction": 0.2, "rounding": "half_up"}
    assert not get_perturbation("negation_removal").random


# --------------------------------------------------------------------------
# perturb_dataset on SummEval


@pytest.fixture(scope="module")
def summeval():
    return metaeval.load_dataset("summeval")


def test_perturb_dataset_summeval(summeval):
    res = perturb_dataset(summeval, "drop_words", rng=0)
    # 17 systems x 100 inputs; M23_dynamicmix has no hypotheses (PROVENANCE.md)
    assert res.n == 1700
    assert res.skipped == {"missing text": 100}
    assert all(s == "M23_dynamicmix" for s, r in zip(res.system, res.reason) if r)
    f = res.to_frame()
    assert list(f.columns[:2]) == ["system", "input"]
    # every applied text lost round(n_words / 5) words
    from metaeval.perturb._text import is_word

    for o, p in zip(f.original[f.applied].head(50), f.perturbed[f.applied].head(50)):
        n = sum(is_word(t) for t in o.split())
        assert sum(is_word(t) for t in p.split()) == n - round(n / 5)
    # the same text perturbed through perturb() with the same id parts gives the same output
    row = f[f.applied].iloc[0]
    gen_name = ("perturb", "drop_words", row.system, row.input)
    key = zlib.crc32("\x1f".join(gen_name).encode())
    words = [k for k, t in enumerate(row.original.split()) if is_word(t)]
    gen = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(key,)))
    drop = {
        words[int(i)] for i in gen.choice(len(words), size=round(len(words) / 5), replace=False)
    }
    assert row.perturbed == " ".join(t for k, t in enumerate(row.original.split()) if k not in drop)
    # to_matrix lines values up with dataset.scores
    lengths = np.array([len(t.split()) if t else np.nan for t in res.perturbed])
    mat = res.to_matrix(lengths, summeval)
    i, j = summeval.systems.index(row.system), summeval.inputs.index(row.input)
    assert mat[i, j] == len(row.perturbed.split())
    assert np.isnan(mat[summeval.systems.index("M23_dynamicmix")]).all()


def test_perturb_dataset_errors(summeval):
    with pytest.raises(
        DataError, match="column='summary' is not a text column.*source, references, hypothesis"
    ):
        perturb_dataset(summeval, "drop_words", column="summary")
    with pytest.raises(DataError, match="'references' of row .* is a tuple, not a str"):
        perturb_dataset(summeval, "drop_words", column="references")
    ds = metaeval.Dataset.from_arrays({"h": np.ones((2, 2))}, human="h")
    with pytest.raises(DataError, match="has no texts"):
        perturb_dataset(ds, "drop_words")
    texts = pd.DataFrame(
        {"system": ["s0", "s1"], "input": ["i0", "i0"], "hypothesis": ["A b .", "C d ."]}
    )
    ds = metaeval.Dataset.from_arrays({"h": np.ones((2, 2))}, human="h", texts=texts)
    res = perturb_dataset(ds, "word_swap", rng=0)
    assert res.perturbed == ("b A .", "d C .")
    mat = res.to_matrix([1.0, 2.0], ds)
    np.testing.assert_array_equal(mat, [[1.0, np.nan], [2.0, np.nan]])
    with pytest.raises(ParameterError, match=r"values has shape \(3,\); expected \(2,\)"):
        res.to_matrix([1.0, 2.0, 3.0], ds)
    with pytest.raises(ParameterError, match="to_matrix needs a result of perturb_dataset"):
        perturb(["a b"], "word_swap").to_matrix([1.0], ds)


# --------------------------------------------------------------------------
# scoring perturbed texts (score_perturbed)


def _toy_texts():
    """Two systems x three inputs of short sentences; the hypotheses equal the references
    except (B, i2), which has no hypothesis; input i1 is a one-word output drop_words skips."""
    refs = {
        "i0": "the cat sat on the mat near the door today",
        "i1": "rain",
        "i2": "a quick brown fox jumps over the lazy dog again",
    }
    rows = []
    for s in ("A", "B"):
        for i, r in refs.items():
            hyp = None if (s, i) == ("B", "i2") else r
            rows.append({"system": s, "input": i, "hypothesis": hyp, "references": (r,)})
    texts = pd.DataFrame(rows)
    human = np.array([[5.0, 4.0, 3.0], [2.0, 4.0, np.nan]])
    ctx = pd.DataFrame({"input": ["i0", "i1", "i2"], "domain": ["pets", "weather", "pets"]})
    return metaeval.Dataset.from_arrays(
        {"h": human}, human="h", systems=["A", "B"], inputs=["i0", "i1", "i2"], texts=texts,
        contexts=ctx,
    )


def test_score_perturbed_pairs_equal_sacrebleu_on_each_text(tmp_path):
    sacrebleu = pytest.importorskip("sacrebleu")
    from metaeval.perturb import score_perturbed

    ds = _toy_texts()
    ps = score_perturbed(ds, "drop_words", ["bleu", "ter"], rng=3, cache_dir=tmp_path)
    assert ps.metrics == ("bleu", "ter") and ps.lower_is_better == ("ter",)
    # one-word "rain" (A and B): 20% of 1 word rounds to 0; (B, i2) has no text
    assert ps.perturbation.skipped == {"rounds to 0 words": 2, "missing text": 1}
    # oracle: sacreBLEU called directly on each (hypothesis, reference) and (perturbed, reference)
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    texts = ds.texts
    for row, pert in zip(texts.itertuples(), ps.perturbation.perturbed):
        i, j = ds.systems.index(row.system), ds.inputs.index(row.input)
        if not isinstance(row.hypothesis, str):
            assert np.isnan(ps.original.scores("bleu")[i, j])
        else:
            want = bleu.sentence_score(row.hypothesis, list(row.references)).score
            assert ps.original.scores("bleu")[i, j] == pytest.approx(want, abs=1e-9)
        if pert is None:  # skipped: never scored as if it were perturbed
            assert np.isnan(ps.perturbed.scores("bleu")[i, j])
        else:
            want = bleu.sentence_score(pert, list(row.references)).score
            assert ps.perturbed.scores("bleu")[i, j] == pytest.approx(want, abs=1e-9)
    # the datasets keep what they should: human and contexts on the original, contexts only on
    # the perturbed side (perturbed texts have no human scores)
    assert ps.original.human == ("h",) and ps.original.metrics == ("bleu", "ter")
    assert ps.perturbed.human == () and ps.perturbed.metrics == ("bleu", "ter")
    np.testing.assert_array_equal(ps.perturbed.context("domain"), ds.context("domain"))
    shown = [None if pd.isna(t) else t for t in ps.perturbed.texts["hypothesis"]]
    assert shown == list(ps.perturbation.perturbed)
    # a re-run takes every score from the cache
    again = score_perturbed(ds, "drop_words", ["bleu", "ter"], rng=3, cache_dir=tmp_path)
    assert again.n_computed == 0 and again.n_cached == ps.n_cached + ps.n_computed
    np.testing.assert_array_equal(again.perturbed.scores("ter"), ps.perturbed.scores("ter"))


def test_score_perturbed_detection_knows_the_direction():
    pytest.importorskip("sacrebleu")
    from metaeval.perturb import score_perturbed

    ds = _toy_texts()
    ps = score_perturbed(ds, "drop_words", ["bleu", "ter"], rng=3)
    # Hypotheses equal their reference, so dropping words lowers BLEU (100 -> less) and raises
    # TER (0 -> more) on every perturbed pair: both detect all of them once TER's direction
    # is known; read as higher-is-better, TER would detect none.
    n_pairs = ps.perturbation.n_applied
    det = ps.detection().to_frame().set_index("metric")
    assert det.loc["bleu", "statistic"] == 1.0 and det.loc["bleu", "n"] == n_pairs
    assert det.loc["ter", "statistic"] == 1.0 and det.loc["ter", "n_greater"] == n_pairs
    assert "better:lower" in det.loc["ter", "signature"]
    naive = metaeval.perturbation_detection(
        ps.original, {"ter": ps.perturbed.scores("ter")}
    ).to_frame()
    assert naive.statistic[0] == 0.0 and naive.less_share[0] == 1.0
    # min_human keeps originals rated >= 4: (A, i0) 5, (A, i1) 4, (B, i1) 4 -> only the
    # applied ones among them count
    kept = ps.detection(human="h", min_human=4).to_frame().set_index("metric")
    applied = dict(zip(zip(ps.perturbation.system, ps.perturbation.input),
                       ps.perturbation.applied))
    want = sum(applied[c] for c in [("A", "i0"), ("A", "i1"), ("B", "i1")])
    assert kept.loc["bleu", "n"] == want


def test_score_perturbed_errors():
    from metaeval.perturb import score_perturbed

    ds = _toy_texts()
    with pytest.raises(ParameterError, match="perturbation .shuffle_everything. is not registered"):
        score_perturbed(ds, "shuffle_everything", ["bleu"])
    with pytest.raises(ParameterError, match="options must be a dict"):
        score_perturbed(ds, "drop_words", ["bleu"], options=0.2)
    with pytest.raises(DataError, match="has no texts"):
        score_perturbed(metaeval.Dataset.from_arrays({"h": np.ones((1, 1))}, human="h"),
                        "drop_words", ["bleu"])
    with pytest.raises(ParameterError, match="lower_is_better names 'wer'"):
        metaeval.perturbation_detection({"bleu": [1.0]}, {"bleu": [0.5]}, lower_is_better="wer")


def test_score_perturbed_metric_only_dataset():
    """A dataset without human scores (ASR, ranking: human=[]) is perturbed and scored too."""
    pytest.importorskip("sacrebleu")
    from metaeval.perturb import score_perturbed

    ds = _toy_texts()
    bare = metaeval.Dataset.from_arrays({"x": np.zeros(ds.shape)}, human=[], systems=ds.systems,
                                        inputs=ds.inputs, texts=ds.texts, contexts=ds.contexts)
    ps = score_perturbed(bare, "drop_words", ["chrf"], rng=3)
    assert ps.original.columns == ("chrf",) and ps.original.human == ()
    full = score_perturbed(ds, "drop_words", ["chrf"], rng=3)
    np.testing.assert_array_equal(ps.original.scores("chrf"), full.original.scores("chrf"))
    np.testing.assert_array_equal(ps.perturbed.scores("chrf"), full.perturbed.scores("chrf"))
