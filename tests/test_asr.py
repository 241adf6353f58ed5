"""Tests of the ASR adapters (``metaeval.textmetrics`` WER, MER, WIL, WIP, CER)
and of the transcript readers (``metaeval.data.read_transcripts``,
``read_kaldi_transcripts``).

Oracles, each named where it is used:

* jiwer 4 called directly, one sentence at a time (``jiwer.process_words``,
  ``jiwer.process_characters``, ``jiwer.cer``), on the same (normalised)
  strings;
* hand computations on crafted sentences (H hits, S substitutions, D
  deletions, I insertions written out in the comments);
* the real CEASR rows in ``../shared/data/asr/ceasr_en.csv.gz`` (Ulasik et
  al., LREC 2020, CC BY 4.0), read through the library's own reader.
"""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from metaeval import DataError, ParameterError
from metaeval import textmetrics as tm
from metaeval.data import read_kaldi_text, read_kaldi_transcripts, read_transcripts
from metaeval.textmetrics import EmptyReferenceWarning, normalize_transcript

jiwer = pytest.importorskip("jiwer")

from _shared import SHARED, need  # noqa: E402  (tests/_shared.py: ../shared beside the checkout)

CEASR = SHARED / "data" / "asr" / "ceasr_en.csv.gz"
ASR = ("wer", "mer", "wil", "wip", "cer")


def _jiwer_sentence(measure, ref, hyp):
    """jiwer called directly on one pair (the oracle)."""
    if measure == "cer":
        return jiwer.process_characters(ref, hyp).cer
    return getattr(jiwer.process_words(ref, hyp), measure)


# ----------------------------------------------------------------------------- import, registry


def test_import_metaeval_does_not_load_jiwer_or_ir_measures():
    code = ("import sys, metaeval, metaeval.data, metaeval.textmetrics as t, metaeval.ranking; "
            "t.list_metrics(); print(sorted(m for m in ('jiwer', 'ir_measures', 'pytrec_eval', "
            "'rapidfuzz', 'torch', 'sacrebleu') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_registry_directions_and_explicit_normalisation():
    names = tm.list_metrics()["name"].tolist()
    assert [n for n in names if n in ASR] == list(ASR)
    assert [tm.get_metric(m).higher_is_better for m in ASR] == [False, False, False, True, False]
    assert all(tm.get_metric(m).normalize == "lower-punct" for m in ASR)
    with pytest.raises(TypeError, match="normalize"):
        tm.WER()  # the class has no default: the choice is explicit
    with pytest.raises(ParameterError, match="normalize='upper' is not allowed; choose one of "
                                             "'none', 'lower', 'lower-punct'"):
        tm.get_metric("wer", normalize="upper")
    sig = tm.get_metric("wip", normalize="lower").signature(multi_ref="max", nrefs=1)
    assert sig.startswith("metric:wip|norm:lower|refs:1|multi:max|jiwer:")
    # the normalisation is part of the cache key
    assert (tm.get_metric("wer").cache_signature()
            != tm.get_metric("wer", normalize="none").cache_signature())


# ----------------------------------------------------------------------------- crafted values

REFS2 = ["the cat sat on the mat", "hello world"]
HYPS2 = ["the cat sit on the mat", "hello big world"]
# Sentence 1: N = 6 words, H = 5, S = 1 (sat -> sit), P = 6 hypothesis words:
#   WER = MER = 1/6, WIP = (5/6)(5/6) = 25/36, WIL = 11/36;
#   CER: 22 characters, 1 substituted (a -> i): 1/22.
# Sentence 2: N = 2, H = 2, I = 1 (big), P = 3:
#   WER = 1/2, MER = 1/3, WIP = (2/2)(2/3) = 2/3, WIL = 1/3;
#   CER: 11 characters, 4 inserted ("big "): 4/11.
HAND_SENTENCE = {
    "wer": [1 / 6, 1 / 2], "mer": [1 / 6, 1 / 3], "wil": [11 / 36, 1 / 3],
    "wip": [25 / 36, 2 / 3], "cer": [1 / 22, 4 / 11],
}
# Pooled over both (jiwer on lists): N = 8, H = 7, S = 1, I = 1, P = 9, 33 characters, 5 edits:
#   WER = 2/8, MER = 2/9, WIP = (7/8)(7/9) = 49/72, WIL = 23/72, CER = 5/33.
HAND_CORPUS = {"wer": 2 / 8, "mer": 2 / 9, "wil": 23 / 72, "wip": 49 / 72, "cer": 5 / 33}


@pytest.mark.parametrize("measure", ASR)
def test_crafted_sentences_match_hand_computation_and_jiwer(measure):
    got = tm.score_texts(measure, HYPS2, references=REFS2)[measure]
    np.testing.assert_allclose(got, HAND_SENTENCE[measure], rtol=0, atol=1e-15)
    direct = [_jiwer_sentence(measure, r, h) for r, h in zip(REFS2, HYPS2)]
    np.testing.assert_allclose(got, direct, rtol=0, atol=0)


@pytest.mark.parametrize("measure", ASR)
def test_corpus_score_pools_edits_like_jiwer_on_lists(measure):
    metric = tm.get_metric(measure)
    assert metric.corpus_score(HYPS2, REFS2) == pytest.approx(HAND_CORPUS[measure], abs=1e-15)
    pooled = (jiwer.cer(REFS2, HYPS2) if measure == "cer"
              else getattr(jiwer.process_words(REFS2, HYPS2), measure))
    assert metric.corpus_score(HYPS2, REFS2) == pytest.approx(pooled, abs=1e-15)
    # ... which is not the mean of the sentence scores (for WIL and WIP it happens to be here:
    # 23/72 = (22/72 + 24/72) / 2)
    if measure in ("wer", "mer", "cer"):
        assert metric.corpus_score(HYPS2, REFS2) != pytest.approx(np.mean(HAND_SENTENCE[measure]))


def test_normalisation_rules_by_hand():
    # apostrophes deleted, other punctuation (Unicode category P) -> space, lowercased
    assert normalize_transcript("DIDN'T the Super-Imposition  work?", "lower-punct") == \
        "didnt the super imposition work"
    assert normalize_transcript("B._C. said \u201cno\u201d \u2014 it\u2019s <UNK>",
                                "lower-punct") == "b c said no its <unk>"
    assert normalize_transcript("  Mixed CASE, kept.  ", "lower") == "  mixed case, kept.  "
    assert normalize_transcript("  Mixed CASE, kept.  ", "none") == "  Mixed CASE, kept.  "
    # upper-case Kaldi output against a lower-case reference: only the normalisation removes the
    # case "errors"
    ref, hyp = "but was that all her reward", "BUT WAS THAT ALL HER REWARD"
    assert tm.score_texts("wer", [hyp], references=[ref])["wer"][0] == 0.0
    none = tm.score_texts(tm.WER(normalize="none"), [hyp], references=[ref])["wer"][0]
    assert none == 1.0 == jiwer.process_words(ref, hyp).wer  # six substitutions / six words


def test_empty_hypothesis_is_all_deletions():
    # N = 3, H = 0, D = 3, P = 0: WER = MER = WIL = 1, WIP = 0; CER: 11 deletions / 11 = 1
    expected = {"wer": 1.0, "mer": 1.0, "wil": 1.0, "wip": 0.0, "cer": 1.0}
    for m in ASR:
        got = tm.score_texts(m, ["", "   "], references=["one two six"] * 2)[m]
        assert got.tolist() == [expected[m]] * 2, m
        assert _jiwer_sentence(m, "one two six", "") == expected[m]


def test_empty_reference_is_nan_with_a_typed_warning_not_jiwers_count():
    # jiwer returns the number of inserted words as the "WER" of an empty reference ...
    assert jiwer.process_words("", "a b").wer == 2
    assert jiwer.process_words("", "").wer == 0
    # ... metaeval returns NaN (an error rate over zero words is undefined), whether the
    # reference was empty or became empty after normalisation ("..." -> "")
    for m in ASR:
        with pytest.warns(EmptyReferenceWarning, match=r"2 reference\(s\) are empty"):
            got = tm.score_texts(m, ["a b", "", "x"], references=["", "...", "x"])[m]
        assert np.isnan(got[:2]).all() and not np.isnan(got[2]), m


def test_multi_reference_best_is_min_error_and_max_wip():
    refs = [("the cat sat on the mat", "a cat sat on a mat today")]
    hyp = ["a cat sat on the mat"]
    for m in ASR:
        per_ref = [_jiwer_sentence(m, r, hyp[0]) for r in refs[0]]
        best = max(per_ref) if m == "wip" else min(per_ref)
        assert per_ref[0] != per_ref[1]
        assert tm.score_texts(m, hyp, references=refs)[m][0] == best
        assert tm.score_texts(m, hyp, references=refs, multi_ref="mean")[m][0] == \
            pytest.approx(np.mean(per_ref), abs=1e-15)
    with pytest.raises(ParameterError, match="multi_ref='native' is not available for 'wer'"):
        tm.score_texts("wer", hyp, references=refs, multi_ref="native")


# ----------------------------------------------------------------------------- real CEASR rows


@pytest.fixture(scope="module")
def ceasr_subset(tmp_path_factory):
    """Real CEASR rows: 60 utterances per corpus x all 4 systems, plus every row whose
    hypothesis is empty or holds <UNK> / hyphens / dots, written back as CSV.gz in the
    release's own layout."""
    need(CEASR, "CEASR data")
    df = pd.read_csv(CEASR, dtype=str, keep_default_na=False)
    first = df.groupby("corpus")["utt_id"].apply(lambda s: list(dict.fromkeys(s))[:60])
    keep = {u for lst in first for u in lst}
    odd = df["hypothesis"].str.strip().eq("") | df["hypothesis"].str.contains(r"<|-|\.")
    keep |= set(df.loc[odd, "utt_id"])
    sub = df[df["utt_id"].isin(keep)].reset_index(drop=True)
    path = tmp_path_factory.mktemp("ceasr") / "ceasr_subset.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8", newline="") as fh:
        sub.to_csv(fh, index=False)
    return path, sub


def test_reader_on_real_ceasr_rows_matches_jiwer_per_sentence(ceasr_subset):
    path, sub = ceasr_subset
    ds = read_transcripts(path)
    n_utt = sub["utt_id"].nunique()
    assert ds.shape == (4, n_utt) and ds.human == () and ds.metrics == ASR
    assert ds.name == "ceasr_subset"
    assert set(ds.systems) == {"D1", "kaldi_aspire", "kaldi_librispeech",
                               "mozilla_deepspeech__am_generic_mm__lm_generic"}
    assert ds.context_names == ("system", "input", "corpus", "speaker_id", "gender", "accent")
    assert sub["hypothesis"].str.strip().eq("").sum() == 38  # the release's empty outputs
    s_pos = {s: k for k, s in enumerate(ds.systems)}
    i_pos = {u: k for k, u in enumerate(ds.inputs)}
    for m in ASR:
        got = ds.scores(m)
        oracle = [_jiwer_sentence(m, normalize_transcript(r, "lower-punct"),
                                  normalize_transcript(h, "lower-punct"))
                  for r, h in zip(sub["reference"], sub["hypothesis"])]
        cells = got[[s_pos[s] for s in sub["system"]], [i_pos[u] for u in sub["utt_id"]]]
        np.testing.assert_array_equal(cells, oracle)
    # contexts are the file's labels, cell by cell ("" -> None)
    for col in ("corpus", "speaker_id", "gender", "accent"):
        lab = ds.context(col)[[s_pos[s] for s in sub["system"]], [i_pos[u] for u in sub["utt_id"]]]
        assert lab.tolist() == [v or None for v in sub[col]]
    tx = ds.texts
    assert list(tx.columns) == ["system", "input", "reference", "hypothesis"]
    assert tx["hypothesis"].tolist() == sub["hypothesis"].tolist()


def test_raw_ceasr_rows_without_normalisation_equal_jiwer_defaults(ceasr_subset):
    _, sub = ceasr_subset
    rows = sub[sub["system"] == "kaldi_librispeech"].head(80)  # upper-case outputs
    refs, hyps = rows["reference"].tolist(), rows["hypothesis"].tolist()
    for m in ASR:
        got = tm.score_texts(tm.get_metric(m, normalize="none"), hyps, references=refs)[m]
        if m == "cer":
            direct = [jiwer.cer(r, h) for r, h in zip(refs, hyps)]
        else:
            direct = [getattr(jiwer.process_words(r, h), m) for r, h in zip(refs, hyps)]
        np.testing.assert_array_equal(got, direct)
    # without normalisation every upper-case word is an error
    assert (tm.score_texts(tm.WER(normalize="none"), hyps, references=refs)["wer"] >= 1).all()


def test_scores_are_cached_and_reused(ceasr_subset, tmp_path):
    path, _ = ceasr_subset
    first = read_transcripts(path, metrics=["wer", "cer"], cache_dir=tmp_path)
    cache = tm.ScoreCache(tmp_path)
    counts = sorted(cache.signatures().values())
    assert counts and all(c > 0 for c in counts)

    calls = []
    orig = tm.WER.score_batch

    def spy(self, hypotheses, contexts):
        calls.append(len(hypotheses))
        return orig(self, hypotheses, contexts)

    tm.WER.score_batch = spy
    try:
        again = read_transcripts(path, metrics=["wer", "cer"], cache_dir=tmp_path)
    finally:
        tm.WER.score_batch = orig
    assert calls == []  # nothing recomputed
    for m in ("wer", "cer"):
        np.testing.assert_array_equal(first.scores(m), again.scores(m))


# ----------------------------------------------------------------------------- reader rules

def _write_csv(path, rows, header=("corpus", "system", "utt_id", "speaker_id", "reference",
                                   "hypothesis")):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_reader_errors_name_file_line_and_column(tmp_path):
    with pytest.raises(DataError, match=r"t\.csv has no column\(s\) 'hypothesis'; its columns "
                                        r"are 'system', 'utt_id', 'reference'"):
        read_transcripts(_write_csv(tmp_path / "t.csv", [["A", "u", "x"]],
                                    header=("system", "utt_id", "reference")))
    rows = [["c", "A", "u1", "s", "a b", "a b"], ["c", "A", "u2", "s", "a", "a"],
            ["c", "A", "u1", "s", "a b", "a"]]
    with pytest.raises(DataError, match=r"d\.csv line 4: duplicate row for corpus 'c', system "
                                        r"'A', utterance 'u1' \(first at d\.csv line 2\)"):
        read_transcripts(_write_csv(tmp_path / "d.csv", rows))
    with pytest.raises(DataError, match=r"e\.csv line 3, column 'system': empty label"):
        read_transcripts(_write_csv(tmp_path / "e.csv", [rows[0], ["c", "", "u2", "s", "a", "a"]]))
    bad = tmp_path / "f.csv"
    bad.write_text("system,utt_id,reference,hypothesis\nA,u1,a b,a b\nA,u2,a,b,c\n")
    with pytest.raises(DataError, match=r"f\.csv line 3: 5 field\(s\) but the header has 4"):
        read_transcripts(bad)
    with pytest.raises(ParameterError, match="cannot tell the format of 'x.txt'"):
        (tmp_path / "x.txt").write_text("a")
        read_transcripts(tmp_path / "x.txt")
    with pytest.raises(ParameterError, match=r"metrics=\[\]: a Dataset holds scores"):
        read_transcripts(tmp_path / "d.csv", metrics=[])


def test_utterance_and_speaker_ids_repeated_across_corpora(tmp_path):
    rows = [["clean", "A", "u1", "121", "a b", "a b"], ["other", "A", "u1", "121", "c d", "c"],
            ["clean", "B", "u1", "121", "a b", "a"], ["other", "B", "u1", "121", "c d", "c d"]]
    path = _write_csv(tmp_path / "t.csv", rows)
    with pytest.raises(DataError, match=r"1 utt_id value\(s\) occur in more than one corpus, e\.g\. "
                                        r"'u1' in 'clean' \(t\.csv line 2\) and 'other' "
                                        r"\(t\.csv line 3\).*prefix_corpus=True"):
        read_transcripts(path)
    ds = read_transcripts(path, prefix_corpus=True, metrics=["wer"])
    assert ds.inputs == ("clean/u1", "other/u1")
    assert ds.context("speaker_id").tolist() == [["clean/121", "other/121"]] * 2
    # hand: A on other/u1 deletes one of two words, B on clean/u1 deletes one of two
    np.testing.assert_array_equal(ds.scores("wer"), [[0.0, 0.5], [0.5, 0.0]])
    # same utterance ids in different corpora but distinct speakers: the speaker check alone
    rows2 = [["clean", "A", "u1", "7", "a", "a"], ["other", "A", "u2", "7", "b", "b"]]
    with pytest.raises(DataError, match=r"1 speaker_id value\(s\) occur in more than one corpus"):
        read_transcripts(_write_csv(tmp_path / "s.csv", rows2))


def test_jsonl_null_hypothesis_is_missing_and_non_text_is_an_error(tmp_path):
    path = tmp_path / "t.jsonl"
    recs = [{"system": "A", "utt_id": "u1", "reference": "a b", "hypothesis": "a", "gender": "f"},
            {"system": "A", "utt_id": "u2", "reference": "c d", "hypothesis": None},
            {"system": "B", "utt_id": "u1", "reference": "a b", "hypothesis": ""}]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    ds = read_transcripts(path, metrics=["wer", "wip"])
    # hand: A/u1 one deletion of two words; A/u2 missing; B/u1 empty output (all deleted);
    # B/u2 has no row at all
    np.testing.assert_array_equal(ds.scores("wer"), [[0.5, np.nan], [1.0, np.nan]])
    np.testing.assert_array_equal(ds.scores("wip"), [[0.5, np.nan], [0.0, np.nan]])
    assert ds.context("gender").tolist() == [["f", None], [None, None]]
    recs[0]["hypothesis"] = 5
    path.write_text("\n".join(json.dumps(r) for r in recs))
    with pytest.raises(DataError, match=r"t\.jsonl line 1, column 'hypothesis': 5 is a int, "
                                        r"not a transcript"):
        read_transcripts(path)


def test_empty_reference_in_a_file_warns_once_and_gives_nan(tmp_path):
    rows = [["c", "A", "u1", "s", "...", "uh"], ["c", "A", "u2", "s", "a", "a"]]
    path = _write_csv(tmp_path / "t.csv", rows)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ds = read_transcripts(path)
    w = [r for r in rec if issubclass(r.category, EmptyReferenceWarning)]
    assert len(w) == 1 and "1 reference(s) are empty after normalize='lower-punct'" in \
        str(w[0].message) and "t.csv line 2" in str(w[0].message)
    for m in ASR:
        assert np.isnan(ds.scores(m)[0, 0]) and ds.scores(m)[0, 1] in (0.0, 1.0)


# ----------------------------------------------------------------------------- Kaldi / trn files


def test_kaldi_text_files_with_utt2spk_and_spk2gender(tmp_path):
    (tmp_path / "text").write_text("spk1-u1 THE CAT SAT\nspk1-u2 HELLO WORLD\nspk2-u3 GOOD DAY\n")
    (tmp_path / "hyp_a").write_text("spk1-u1 the cat sat\nspk1-u2 hello word\nspk2-u3\n")
    (tmp_path / "hyp_b").write_text("spk1-u2 hello world\nspk1-u1 the cat\n")
    (tmp_path / "utt2spk").write_text("spk1-u1 spk1\nspk1-u2 spk1\nspk2-u3 spk2\n")
    (tmp_path / "spk2gender").write_text("spk1 f\nspk2 m\n")
    frame = read_kaldi_transcripts(
        tmp_path / "text", {"A": tmp_path / "hyp_a", "B": tmp_path / "hyp_b"},
        utt2spk=tmp_path / "utt2spk", spk2gender=tmp_path / "spk2gender", corpus="dev")
    assert list(frame.columns) == ["corpus", "system", "utt_id", "speaker_id", "gender",
                                   "reference", "hypothesis"]
    assert frame["hypothesis"].tolist() == ["the cat sat", "hello word", "", "the cat",
                                            "hello world", None]
    ds = read_transcripts(frame, metrics=["wer"])
    # hand: A: 0, 1 sub of 2, empty output (2 deletions of 2); B: 1 deletion of 3, 0, missing
    np.testing.assert_allclose(ds.scores("wer"), [[0, 0.5, 1], [1 / 3, 0, np.nan]])
    assert ds.context("gender").tolist() == [["female", "female", "male"]] * 2
    empty = read_kaldi_transcripts(tmp_path / "text", {"B": tmp_path / "hyp_b"}, missing="empty")
    assert empty["hypothesis"].tolist()[-1] == ""
    with pytest.raises(DataError, match=r"system 'B' has no hypothesis for 1 reference "
                                        r"utterance\(s\), e\.g\. 'spk2-u3'"):
        read_kaldi_transcripts(tmp_path / "text", {"B": tmp_path / "hyp_b"}, missing="error")
    (tmp_path / "hyp_c").write_text("spk1-u1 a\nspk9-u9 b\n")
    with pytest.raises(DataError, match=r"hyp_c line 2: utterance 'spk9-u9' of system 'C' is "
                                        r"not in the reference file"):
        read_kaldi_transcripts(tmp_path / "text", {"C": tmp_path / "hyp_c"})
    (tmp_path / "dup").write_text("u1 a\nu2 b\nu1 c\n")
    with pytest.raises(DataError, match=r"dup line 3: utterance id 'u1' repeats \(first at dup "
                                        r"line 1\)"):
        read_kaldi_text(tmp_path / "dup")


def test_sclite_trn_and_gzip_are_read(tmp_path):
    with gzip.open(tmp_path / "ref.trn", "wt") as fh:  # gzip detected from the bytes, not the name
        fh.write("the cat sat (spk1-u1)\nhello world (spk1-u2)\n")
    (tmp_path / "hyp.trn").write_text("the cat (spk1-u1)\n(spk1-u2)\n")
    assert read_kaldi_text(tmp_path / "hyp.trn", format="trn") == {
        "spk1-u1": ("the cat", "hyp.trn line 1"), "spk1-u2": ("", "hyp.trn line 2")}
    frame = read_kaldi_transcripts(tmp_path / "ref.trn", {"A": tmp_path / "hyp.trn"},
                                   format="trn")
    ds = read_transcripts(frame, metrics=["wer"])
    np.testing.assert_allclose(ds.scores("wer"), [[1 / 3, 1.0]])  # 1 of 3 deleted; all deleted
    (tmp_path / "bad.trn").write_text("no id here\n")
    with pytest.raises(DataError, match=r"bad\.trn line 1: no '\(utterance-id\)' at the end"):
        read_kaldi_text(tmp_path / "bad.trn", format="trn")
