"""Pairwise-preference data: :class:`PreferenceData` (pairs of outputs of one input, the
preference of every human rater and the output of every judge, validated once) and
:func:`read_preferences` (plain CSV/JSONL, MT-Bench human judgments JSONL, AlpacaEval
annotation JSON).  The statistics that read them are :mod:`metaeval.preferences`, which
re-exports both names and documents the conventions (preferences, margins, labels).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval._vocab import check_choice
from metaeval.errors import DataError

#: Formats of :func:`read_preferences`.
FORMATS = ("csv", "jsonl", "mt-bench", "alpacaeval")
#: The annotator name of the human rows (the human-human ceiling).
HUMAN = "human"
#: MT-Bench ``winner`` values -> preference for A.
MT_BENCH_WINNERS = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}

_KEY = ["input", "system_a", "system_b"]


def fmt_labels(labels, k=5):
    """Up to ``k`` labels, comma-separated, with the count of all when there are more."""
    labels = list(labels)
    s = ", ".join(map(str, labels[:k]))
    return s + (f", ... ({len(labels)} in all)" if len(labels) > k else "")


def _str_col(df, col, what):
    v = df[col]
    bad = v.isna() | (v.astype(str).str.strip() == "")
    if bad.any():
        raise DataError(f"{what}: column {col!r} is empty in rows {fmt_labels(np.flatnonzero(bad.to_numpy()))}")
    return v.astype(str).to_numpy()


def _text(series):
    """Strings with NaN/None as "" (without a fill value of the wrong dtype)."""
    return series.astype(object).where(series.notna(), "").astype(str)


def _numeric(df, col, what):
    raw = df[col]
    num = pd.to_numeric(raw, errors="coerce")
    bad = num.isna() & raw.notna()
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())
        raise DataError(
            f"{what}: column {col!r} has non-numeric values {fmt_labels(raw[bad].astype(str).unique())} "
            f"(rows {fmt_labels(rows)})"
        )
    return num.to_numpy(dtype=float)


# --------------------------------------------------------------------------
# the data


class PreferenceData:
    """Pairwise preferences of human raters and of judges, validated at construction.

    Build it with :meth:`from_frames`, :meth:`from_dataset` or :func:`read_preferences`.

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per pair: ``input``, ``system_a``, ``system_b`` (P rows, in order of first
        appearance).  A pair given as (B, A) elsewhere is flipped to the first orientation.
    raters : tuple of str
        Human rater labels (R).
    human : numpy.ndarray
        Read-only (R, P) array of preferences (1.0, 0.5, 0.0) with NaN where a rater did
        not rate a pair.
    judges : tuple of str
        Judge names.
    judge_rows : pandas.DataFrame
        Every judge output: ``pair`` (row of ``pairs``), ``judge``, ``order`` ("ab", "ba"
        or "" when not given), ``margin`` (NaN = failed).
    lengths : numpy.ndarray or None
        (P, 2) lengths of outputs A and B (words of ``output_a``/``output_b`` or the given
        ``length_a``/``length_b``), None when unknown.
    length_unit : str
        ``"words"`` (counted from texts) or ``"given"`` (``length_a``/``length_b``).
    """

    def __init__(self, pairs, raters, human, judge_rows, lengths=None, name="preferences",
                 length_unit="words"):
        self.pairs = pairs.reset_index(drop=True)
        self.raters = tuple(raters)
        h = np.array(human, dtype=float)
        h.setflags(write=False)
        self.human = h
        self.judge_rows = judge_rows.reset_index(drop=True)
        self.judges = tuple(dict.fromkeys(self.judge_rows["judge"]))
        if lengths is not None:
            lengths = np.array(lengths, dtype=float)
            lengths.setflags(write=False)
        self.lengths = lengths
        self.length_unit = length_unit
        self.name = name
        codes, uniq = pd.factorize(self.pairs["input"], sort=False)
        self.inputs = tuple(uniq)
        self.pair_input = codes.astype(np.intp)
        self._margins = {}

    def __repr__(self):
        return (f"PreferenceData(name={self.name!r}, {len(self.pairs)} pairs of {len(self.inputs)} inputs, "
                f"{len(self.raters)} rater{'s' * (len(self.raters) != 1)}, "
                f"{len(self.judges)} judge{'s' * (len(self.judges) != 1)})")

    @property
    def systems(self) -> tuple:
        """System labels, in order of first appearance."""
        return tuple(dict.fromkeys(np.concatenate([self.pairs["system_a"], self.pairs["system_b"]])))

    def margin(self, judge: str) -> np.ndarray:
        """The judge's margin per pair: the mean over its samples and orders (NaN if none)."""
        if judge not in self.judges:
            raise DataError(f"judge {judge!r} is unknown; judges: {fmt_labels(self.judges, 20)} (CLI: --judges)")
        if judge not in self._margins:
            r = self.judge_rows[(self.judge_rows["judge"] == judge) & self.judge_rows["margin"].notna()]
            P = len(self.pairs)
            s = np.bincount(r["pair"].to_numpy(), weights=r["margin"].to_numpy(), minlength=P)
            c = np.bincount(r["pair"].to_numpy(), minlength=P)
            with np.errstate(invalid="ignore", divide="ignore"):
                m = np.where(c > 0, s / np.maximum(c, 1), np.nan)
            m.setflags(write=False)
            self._margins[judge] = m
        return self._margins[judge]

    # ---------------------------------------------------------------- builders

    @classmethod
    def from_frames(cls, human: pd.DataFrame, judges: pd.DataFrame | None = None, *,
                    name: str = "preferences") -> "PreferenceData":
        """Build from long tables.

        Parameters
        ----------
        human : pandas.DataFrame
            One row per (pair, rater): ``input``, ``system_a``, ``system_b``, ``rater``,
            ``preference`` (1.0 A better, 0.5 tie, 0.0 B better, NaN missing); optional
            ``output_a``, ``output_b`` (texts) or ``length_a``, ``length_b``.
        judges : pandas.DataFrame, optional
            One row per judge output: ``input``, ``system_a``, ``system_b``, ``judge`` and
            either ``preference`` (in [0, 1], NaN = failed) or ``margin`` (any real, positive
            = A better); optional ``order`` ("ab"/"ba"), other columns (``raw``, ...) are
            ignored.  This is the layout of the pairwise LLM-judge prompt.  Several rows
            of one (pair, judge, order) are samples and are averaged.

        Raises
        ------
        DataError
            Missing columns, empty labels, system_a == system_b, preferences outside
            {0, 0.5, 1} (human) or [0, 1] (judge), a rater rating a pair twice, bad
            ``order`` values; the message names the culprits.  Pairs that only judges
            rated are kept (no human label: agreement statistics skip them, Bradley-Terry
            uses them).
        """
        if not isinstance(human, pd.DataFrame):
            raise DataError(f"human must be a pandas DataFrame, got {type(human).__name__}")
        need = _KEY + ["rater", "preference"]
        miss = [c for c in need if c not in human.columns]
        if miss:
            raise DataError(f"human preferences lack columns {miss}; they need {need} "
                            f"(CLI: --input-format, or rename the columns)")
        if len(human) == 0:
            raise DataError("human preferences are empty")
        h = human.reset_index(drop=True)
        inp, sa, sb = (_str_col(h, c, "human preferences") for c in _KEY)
        rater = _str_col(h, "rater", "human preferences")
        pref = _numeric(h, "preference", "human preferences")
        same = sa == sb
        if same.any():
            raise DataError(f"human preferences: system_a equals system_b in rows {fmt_labels(np.flatnonzero(same))}")
        ok = np.isnan(pref) | np.isin(pref, (0.0, 0.5, 1.0))
        if not ok.all():
            raise DataError(
                f"human preferences must be 1.0 (A better), 0.5 (tie) or 0.0 (B better); got "
                f"{fmt_labels(np.unique(pref[~ok]))} in rows {fmt_labels(np.flatnonzero(~ok))}"
            )
        # canonical orientation: the first one seen
        canon = {}
        flip = np.zeros(len(h), dtype=bool)
        pair_idx = np.empty(len(h), dtype=np.intp)
        for k, (i, a, b) in enumerate(zip(inp, sa, sb)):
            key = (i, a, b)
            if key in canon:
                pair_idx[k] = canon[key]
            elif (i, b, a) in canon:
                pair_idx[k] = canon[(i, b, a)]
                flip[k] = True
            else:
                canon[key] = len(canon)
                pair_idx[k] = canon[key]
        pref = np.where(flip, 1.0 - pref, pref)
        raters = tuple(dict.fromkeys(rater))
        r_idx = pd.Index(raters).get_indexer(rater)
        dup = pd.Series(list(zip(pair_idx, r_idx))).duplicated(keep=False).to_numpy()
        if dup.any():
            rows = np.flatnonzero(dup)
            ex = [f"({inp[k]}, {sa[k]}, {sb[k]}, rater {rater[k]})" for k in rows[:3]]
            raise DataError(f"human preferences: a rater rates a pair more than once: {', '.join(ex)} "
                            f"(rows {fmt_labels(rows)})")
        jr = _judge_rows(judges, canon)  # may add pairs that only judges rated
        pairs = pd.DataFrame(list(canon), columns=_KEY)
        H = np.full((len(raters), len(pairs)), np.nan)
        H[r_idx, pair_idx] = pref
        lengths = _lengths(h, pair_idx, flip, len(pairs))
        unit = "given" if {"length_a", "length_b"} <= set(h.columns) else "words"
        return cls(pairs, raters, H, jr, lengths=lengths, name=name, length_unit=unit)

    @classmethod
    def from_dataset(cls, dataset, human: str, *, metrics: Sequence[str] | None = None,
                     judges: pd.DataFrame | None = None, lengths: bool = True) -> "PreferenceData":
        """Pairs of system outputs of a :class:`~metaeval.Dataset`, metrics as judges.

        Every unordered pair of systems (A before B in the dataset's system order) of every
        input is a pair.  Rater r prefers A when its ``human`` score of A is higher (1.0),
        B when lower (0.0), and ties on equal scores (0.5); a missing score gives NaN.  A
        metric is a judge with margin s_A - s_B.  Lengths are the words (whitespace
        split) of the hypotheses when the dataset has texts.

        Parameters
        ----------
        dataset : Dataset
        human : str
            A human column (its raters give the preferences).
        metrics : sequence of str, optional
            Metric columns to use as judges (default: all; ``[]`` for none).
        judges : pandas.DataFrame, optional
            Judge outputs in the layout of :meth:`from_frames` (e.g. the pairwise LLM
            judge's long table: ``input, system_a, system_b, judge, order, preference,
            raw``) on this dataset's inputs and systems.
        lengths : bool
            Word lengths of the hypotheses, when the dataset has texts.

        Raises
        ------
        DataError
            Unknown human or metric columns; judge rows naming inputs or systems the
            dataset lacks.
        """
        if human not in dataset.human:
            raise DataError(f"human={human!r} is not a human column of {dataset.name}; "
                            f"choose one of {fmt_labels(dataset.human, 20)} (CLI: --human)")
        metrics = list(dataset.metrics if metrics is None else metrics)
        unknown = [m for m in metrics if m not in dataset.metrics]
        if unknown:
            raise DataError(f"metrics {unknown} are not metric columns of {dataset.name} (CLI: --judges)")
        R = dataset.ratings(human)  # (R, N, M)
        N, M = R.shape[1:]
        a, b = np.triu_indices(N, 1)
        A = R[:, a, :]  # (R, K, M)
        B = R[:, b, :]
        with np.errstate(invalid="ignore"):
            H = np.where(np.isnan(A) | np.isnan(B), np.nan, 0.5 + 0.5 * np.sign(A - B))
        # pair order: input-major
        H = H.transpose(0, 2, 1).reshape(R.shape[0], -1)
        systems, inputs = dataset.systems, dataset.inputs
        pairs = pd.DataFrame({
            "input": np.repeat(np.asarray(inputs, dtype=object), len(a)),
            "system_a": np.tile(np.asarray(systems, dtype=object)[a], M),
            "system_b": np.tile(np.asarray(systems, dtype=object)[b], M),
        })
        P = len(pairs)
        rows = []
        for m in metrics:
            S = dataset.scores(m)
            d = (S[a, :] - S[b, :]).T.reshape(-1)
            rows.append(pd.DataFrame({"pair": np.arange(P), "judge": m, "order": "", "margin": d}))
        if judges is not None:
            canon = {(str(i), str(x), str(y)): k for k, (i, x, y) in enumerate(pairs.itertuples(index=False))}
            extra = _judge_rows(judges, canon)
            if len(canon) > P:
                new = list(canon)[P:]
                raise DataError(f"judge outputs name pairs that are not pairs of {dataset.name}'s systems on "
                                f"its inputs: {fmt_labels(new, 3)}")
            clash = set(extra["judge"]) & set(metrics)
            if clash:
                raise DataError(f"judge names {sorted(clash)} are also metric columns; rename the judges")
            rows.append(extra)
        jr = pd.concat(rows, ignore_index=True) if rows else _empty_judge_rows()
        L = None
        if lengths:
            try:
                t = dataset.texts
            except Exception:  # noqa: BLE001 - no texts: no lengths
                t = None
            if t is not None and "hypothesis" in getattr(t, "columns", ()):
                words = _text(t["hypothesis"]).str.split().str.len().to_numpy(float)
                W = pd.Series(words, index=pd.MultiIndex.from_arrays([t["system"], t["input"]]))
                W = W[~W.index.duplicated()]
                grid = W.reindex(pd.MultiIndex.from_product([systems, inputs])).to_numpy().reshape(N, M)
                L = np.stack([grid[a, :].T.reshape(-1), grid[b, :].T.reshape(-1)], axis=1)
        raters = [f"{r}" for r in dataset.rater_labels(human)] if R.shape[0] > 1 else [human]
        return cls(pairs, raters, H, jr, lengths=L, name=f"{dataset.name}:{human}")


def _empty_judge_rows():
    return pd.DataFrame({"pair": np.array([], dtype=np.intp), "judge": np.array([], dtype=object),
                         "order": np.array([], dtype=object), "margin": np.array([], dtype=float)})


def _lengths(h, pair_idx, flip, P):
    if {"length_a", "length_b"} <= set(h.columns):
        la = _numeric(h, "length_a", "human preferences")
        lb = _numeric(h, "length_b", "human preferences")
    elif {"output_a", "output_b"} <= set(h.columns):
        la = _text(h["output_a"]).str.split().str.len().to_numpy(float)
        lb = _text(h["output_b"]).str.split().str.len().to_numpy(float)
    else:
        return None
    la, lb = np.where(flip, lb, la), np.where(flip, la, lb)
    L = np.full((P, 2), np.nan)
    L[pair_idx, 0] = la
    L[pair_idx, 1] = lb
    return L


def _judge_rows(judges, canon):
    if judges is None:
        return _empty_judge_rows()
    if not isinstance(judges, pd.DataFrame):
        raise DataError(f"judges must be a pandas DataFrame, got {type(judges).__name__}")
    j = judges.reset_index(drop=True)
    need = _KEY + ["judge"]
    miss = [c for c in need if c not in j.columns]
    has_p, has_m = "preference" in j.columns, "margin" in j.columns
    if miss or has_p == has_m:
        raise DataError(f"judge outputs need columns {need} and exactly one of 'preference', 'margin'; "
                        f"missing {miss or ['preference or margin']}" if not (has_p and has_m)
                        else "judge outputs have both 'preference' and 'margin'; keep one")
    if len(j) == 0:
        return _empty_judge_rows()
    inp, sa, sb = (_str_col(j, c, "judge outputs") for c in _KEY)
    same = sa == sb
    if same.any():  # as for human preferences: a pair is two different systems
        raise DataError(f"judge outputs: system_a equals system_b in rows {fmt_labels(np.flatnonzero(same))}")
    judge = _str_col(j, "judge", "judge outputs")
    if has_p:
        p = _numeric(j, "preference", "judge outputs")
        bad = ~np.isnan(p) & ((p < 0) | (p > 1))
        if bad.any():
            raise DataError(f"judge preferences must lie in [0, 1] (1.0 A better, 0.5 tie, 0.0 B better); got "
                            f"{fmt_labels(np.unique(p[bad]))} in rows {fmt_labels(np.flatnonzero(bad))}; "
                            f"give a 'margin' column for unbounded scores")
        margin = p - 0.5
    else:
        margin = _numeric(j, "margin", "judge outputs")
        bad = np.isinf(margin)
        if bad.any():
            raise DataError(f"judge margins are infinite in rows {fmt_labels(np.flatnonzero(bad))}")
    if "order" in j.columns:
        order = _text(j["order"]).str.strip().str.lower().to_numpy()
        bad = ~np.isin(order, ("ab", "ba", ""))
        if bad.any():
            raise DataError(f"judge outputs: order must be 'ab' or 'ba'; got {fmt_labels(np.unique(order[bad]))} "
                            f"in rows {fmt_labels(np.flatnonzero(bad))}")
    else:
        order = np.full(len(j), "", dtype=object)
    pair = np.empty(len(j), dtype=np.intp)
    for k, (i, a, b) in enumerate(zip(inp, sa, sb)):
        if (i, a, b) in canon:
            pair[k] = canon[(i, a, b)]
        elif (i, b, a) in canon:
            pair[k] = canon[(i, b, a)]
            margin[k] = -margin[k]
            order[k] = {"ab": "ba", "ba": "ab"}.get(order[k], "")
        else:  # a pair only judges rated: kept (Bradley-Terry uses it), no human label
            canon[(i, a, b)] = len(canon)
            pair[k] = canon[(i, a, b)]
    return pd.DataFrame({"pair": pair, "judge": judge, "order": order, "margin": margin})


# --------------------------------------------------------------------------
# readers


def _read_records(path):
    """JSON records of a JSONL file or a JSON array, read like a data file: a
    truncated .gz, non-UTF-8 bytes, invalid or too deeply nested JSON and records
    that are not objects are :class:`DataError` naming the file (and line)."""
    from pathlib import Path

    from ._io import decode, read_bytes

    p = Path(path)
    text = decode(p, read_bytes(p))
    s = text.lstrip()
    try:
        if s.startswith("["):
            try:
                recs = json.loads(s)
            except json.JSONDecodeError as exc:
                raise DataError(f"{p.name}: line {exc.lineno} is not JSON ({exc.msg})") from None
            where = [f"record {n}" for n in range(1, len(recs) + 1)]
        else:
            recs, where = [], []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise DataError(f"{p.name}: line {n} is not JSON ({exc.msg})") from None
                    where.append(f"line {n}")
    except RecursionError:
        raise DataError(f"{p.name}: JSON nested too deeply to read; a record is one flat object") from None
    for rec, at in zip(recs, where):
        if not isinstance(rec, dict):
            raise DataError(f"{p.name}: {at} is a JSON {type(rec).__name__}, expected an object "
                            "(one record per line, keys are fields)")
    return recs


def _conversation_text(conv):
    if isinstance(conv, list):
        return "\n".join(str(t.get("content", "")) for t in conv
                         if isinstance(t, dict) and t.get("role") in ("assistant", "gpt"))
    return "" if conv is None else str(conv)


def _text_id(text):
    """A short content id of an output text (systems of AlpacaEval records without
    generator names)."""
    import hashlib

    return "output:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _annotator(v):
    if isinstance(v, (list, tuple)):
        return "/".join(map(str, v))
    return str(v)


def _split_judges(df, judges, who):
    """Rows whose annotator is in ``judges`` become judge rows; the others rater rows."""
    judges = set(judges or ())
    unknown = judges - set(df[who])
    if unknown:
        raise DataError(f"judges {sorted(unknown)} do not occur in the file's {who!r} column "
                        f"(it has {fmt_labels(sorted(set(df[who])), 10)}) (CLI: --judges)")
    is_j = df[who].isin(judges).to_numpy()
    h = df[~is_j].rename(columns={who: "rater"})
    j = df[is_j].rename(columns={who: "judge"})
    return h, (j if len(j) else None)


def read_preferences(path, *, format: str = "auto", judges: Sequence[str] | None = None,
                     name: str | None = None) -> PreferenceData:
    """Read pairwise preferences from a file.

    Parameters
    ----------
    path : str or path-like
    format : {"auto", "csv", "jsonl", "mt-bench", "alpacaeval"}
        ``csv`` / ``jsonl``: the long layout of :meth:`PreferenceData.from_frames` in one
        table: rows with a non-empty ``rater`` are human, rows with a non-empty ``judge``
        are judge outputs (``preference`` or ``margin``, optional ``order``).
        ``mt-bench``: the ``lmsys/mt_bench_human_judgments`` JSONL (``question_id``,
        ``model_a``, ``model_b``, ``winner`` in {model_a, model_b, tie, tie (bothbad)},
        ``judge``, ``turn``, ``conversation_a``/``conversation_b``); the input is
        ``question_id:turn``; annotators named in ``judges`` (e.g. the ``gpt4_pair``
        split's judge, a list joined with "/") are judges, the others raters.
        ``alpacaeval``: AlpacaEval annotation JSON (a list of records with
        ``instruction``, ``output_1``, ``output_2``, ``preference`` in [1, 2]: 1 =
        output_1 better, 2 = output_2 better, 1.5 = tie, and ``annotator`` or
        ``annotator_index``); systems are ``generator_1``/``generator_2`` when present,
        else a content id of each output text ("output:<sha1 prefix>", so that different
        outputs of one instruction are different pairs and swapped records flip); the
        input is the instruction (plus ``input`` when present); A = output_1 and the
        preference for A is 2 - preference.
        ``auto`` picks from the extension and the fields.
    judges : sequence of str, optional
        ``mt-bench`` and ``alpacaeval``: annotators to treat as judges.

    Raises
    ------
    DataError
        Unknown format, missing fields, values outside the format's set (named).
    """
    path = os.fspath(path)
    check_choice(format, "format", ("auto",) + FORMATS, option="--input-format")
    name = name or os.path.basename(path)
    if format == "auto":
        if path.lower().endswith((".csv", ".tsv")):
            format = "csv"
        else:
            recs = _read_records(path)
            first = recs[0] if recs else {}
            if "winner" in first and "model_a" in first:
                format = "mt-bench"
            elif "output_1" in first and "instruction" in first:
                format = "alpacaeval"
            else:
                format = "jsonl"
    if format == "csv":
        sep = "\t" if path.lower().endswith(".tsv") else ","
        from pathlib import Path

        from ._io import read_delimited

        # the data-file reader: named errors for truncated .gz, non-UTF-8 bytes, ragged rows
        return _from_long(read_delimited(Path(path), ["input", "rater", "judge"], sep=sep), name)
    recs = _read_records(path)
    if not recs:
        raise DataError(f"{path} has no records")
    df = pd.DataFrame.from_records(recs)
    if format == "jsonl":
        return _from_long(df, name)
    if format == "mt-bench":
        need = ["question_id", "model_a", "model_b", "winner", "judge"]
        miss = [c for c in need if c not in df.columns]
        if miss:
            raise DataError(f"{path}: MT-Bench judgments lack fields {miss} (CLI: --input-format)")
        w = df["winner"].astype(str).str.strip()
        bad = ~w.isin(list(MT_BENCH_WINNERS))
        if bad.any():
            raise DataError(f"{path}: winner must be one of {list(MT_BENCH_WINNERS)}; got "
                            f"{fmt_labels(w[bad].unique())} in records {fmt_labels(np.flatnonzero(bad.to_numpy()))}")
        same = (df["model_a"].astype(str) == df["model_b"].astype(str)).to_numpy()
        if same.any():
            raise DataError(f"{path}: MT-Bench judgments compare a model with itself (model_a equals "
                            f"model_b) in records {fmt_labels(np.flatnonzero(same))}")
        turn = df["turn"].astype(str) if "turn" in df.columns else "1"
        out = pd.DataFrame({
            "input": df["question_id"].astype(str) + ":" + turn,
            "system_a": df["model_a"].astype(str), "system_b": df["model_b"].astype(str),
            "annotator": df["judge"].map(_annotator), "preference": w.map(MT_BENCH_WINNERS).astype(float),
        })
        if "conversation_a" in df.columns and "conversation_b" in df.columns:
            out["output_a"] = df["conversation_a"].map(_conversation_text)
            out["output_b"] = df["conversation_b"].map(_conversation_text)
        h, j = _split_judges(out, judges, "annotator")
        if j is not None:
            j = j.drop(columns=[c for c in ("output_a", "output_b") if c in j.columns])
        return PreferenceData.from_frames(h, j, name=name)
    # alpacaeval
    need = ["instruction", "output_1", "output_2", "preference"]
    miss = [c for c in need if c not in df.columns]
    if miss:
        raise DataError(f"{path}: AlpacaEval annotations lack fields {miss} (CLI: --input-format)")
    p = pd.to_numeric(df["preference"], errors="coerce").to_numpy(float)
    bad = (~np.isnan(p) & ((p < 1) | (p > 2))) | (np.isnan(p) & df["preference"].notna().to_numpy())
    if bad.any():
        raise DataError(f"{path}: AlpacaEval preference must lie in [1, 2] (1 = output_1 better, 2 = output_2, "
                        f"1.5 = tie); got {fmt_labels(df['preference'][bad].astype(str).unique())} "
                        f"in records {fmt_labels(np.flatnonzero(bad))}")
    instr = df["instruction"].astype(str)
    if "input" in df.columns:
        extra = _text(df["input"])
        instr = instr.where(extra == "", instr + "\n\n" + extra)
    if "generator_1" in df.columns and "generator_2" in df.columns:
        g1, g2 = df["generator_1"].astype(str), df["generator_2"].astype(str)
    else:  # no system names: each distinct output text is its own "system"
        g1, g2 = _text(df["output_1"]).map(_text_id), _text(df["output_2"]).map(_text_id)
    if "annotator" in df.columns:
        ann = df["annotator"].map(_annotator)
    elif "annotator_index" in df.columns:
        ann = df["annotator_index"].map(_annotator)
    else:
        ann = "annotator"
    out = pd.DataFrame({"input": instr, "system_a": g1, "system_b": g2, "annotator": ann,
                        "preference": 2.0 - p, "output_a": df["output_1"].astype(str),
                        "output_b": df["output_2"].astype(str)})
    h, j = _split_judges(out, judges, "annotator")
    if j is not None:
        j = j.drop(columns=["output_a", "output_b"])
    return PreferenceData.from_frames(h, j, name=name)


def _from_long(df, name):
    for c in ("rater", "judge"):
        if c not in df.columns:
            df[c] = np.nan
    r = _text(df["rater"]).str.strip()
    j = _text(df["judge"]).str.strip()
    both = (r != "") & (j != "")
    neither = (r == "") & (j == "")
    if both.any() or neither.any():
        rows = np.flatnonzero((both | neither).to_numpy())
        raise DataError(f"{name}: each row needs exactly one of 'rater' (human) and 'judge'; rows {fmt_labels(rows)}")
    if not (r != "").any():  # only judges: nothing to meta-evaluate against
        raise DataError(f"{name}: no row has a human rater (a row with a value in the 'rater' column is a "
                        f"human preference, one with a value in 'judge' a judge's): add the raters' rows, "
                        f"or give the file's format with --input-format")
    h = df[(r != "").to_numpy()].drop(columns=["judge"])
    jd = df[(j != "").to_numpy()].drop(columns=["rater"])
    for c in ("output_a", "output_b", "length_a", "length_b"):
        if c in jd.columns:
            jd = jd.drop(columns=[c])
    if "margin" in jd.columns and "preference" in jd.columns:
        has_m = jd["margin"].notna()
        has_p = jd["preference"].notna()
        if (has_m & has_p).any():
            raise DataError(f"{name}: judge rows give both 'preference' and 'margin'; keep one per judge")
        if has_m.any() and has_p.any():
            raise DataError(f"{name}: mixing 'preference' and 'margin' judge rows is not supported; "
                            "convert preferences to margins (preference - 0.5)")
        jd = jd.drop(columns=["preference"] if has_m.any() else ["margin"])
    if "margin" in h.columns:
        h = h.drop(columns=["margin"])
    try:
        return PreferenceData.from_frames(h, jd if len(jd) else None, name=name)
    except DataError as exc:  # name the file the rows came from
        if name in str(exc):
            raise
        raise DataError(f"{exc} (in {name})") from None
