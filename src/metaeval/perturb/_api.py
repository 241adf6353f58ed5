"""Applying a registered perturbation to texts or to a dataset's texts."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._signature import make_signature
from ..errors import DataError, ParameterError
from ..stats import resampling as _rs
from ._transforms import Skip, get_perturbation

#: Reason recorded for a missing text (None or NaN).
MISSING = "missing text"


@dataclass(frozen=True)
class PerturbationResult:
    """Texts and their perturbed versions (see :func:`perturb`).

    Attributes
    ----------
    name : str
        The perturbation.
    options : dict
        The options used (defaults filled in).
    original : tuple of str or None
        The texts as given.
    perturbed : tuple of str or None
        The perturbed texts; ``None`` where the text was skipped, so a
        skipped text can never pass for a perturbed one.
    applied : tuple of bool
        Whether each text was perturbed.
    reason : tuple of str
        Why a text was skipped (``""`` where applied).
    ids : tuple of str
        Text identifiers (positions ``"0", "1", ...`` unless ``ids`` was
        given; ``"system|input"`` for :func:`perturb_dataset`).
    system, input : tuple of str or None
        The dataset labels of each text (:func:`perturb_dataset` only).
    signature : str
        ``perturb:<name>|<option>:<value>|...|seed:<entropy>|metaeval:<version>``
        (no seed for deterministic perturbations).
    """

    name: str
    options: dict
    original: tuple
    perturbed: tuple
    applied: tuple
    reason: tuple
    ids: tuple
    signature: str
    system: tuple | None = field(default=None, repr=False)
    input: tuple | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """Number of texts."""
        return len(self.original)

    @property
    def n_applied(self) -> int:
        """Number of texts perturbed."""
        return int(sum(self.applied))

    @property
    def n_skipped(self) -> int:
        """Number of texts skipped (``n - n_applied``)."""
        return self.n - self.n_applied

    @property
    def skipped(self) -> dict:
        """Skip reason -> count, most frequent first."""
        return dict(Counter(r for r in self.reason if r).most_common())

    def to_frame(self) -> pd.DataFrame:
        """One row per text.

        Columns: ``system``, ``input`` (:func:`perturb_dataset`) or ``id``,
        then ``original``, ``perturbed`` (None where skipped), ``applied``,
        ``reason`` (``""`` where applied).
        """
        keys = (
            {"system": list(self.system), "input": list(self.input)}
            if self.system is not None
            else {"id": list(self.ids)}
        )
        return pd.DataFrame(
            {
                **keys,
                "original": list(self.original),
                "perturbed": list(self.perturbed),
                "applied": list(self.applied),
                "reason": list(self.reason),
            }
        )

    def to_matrix(self, values, dataset) -> np.ndarray:
        """Per-text ``values`` placed in a (N, M) systems x inputs array of ``dataset``.

        For results of :func:`perturb_dataset`: ``values`` holds one number
        per text in this result's order (e.g. a metric's scores of
        ``perturbed``, NaN for skipped texts); cells without a text are NaN.
        The array lines up with ``dataset.scores(column)``, as
        :func:`metaeval.diagnostics.perturbation_detection` needs.
        """
        if self.system is None:
            raise ParameterError(
                "to_matrix needs a result of perturb_dataset (system/input labels)"
            )
        v = np.asarray(values, dtype=float)
        if v.shape != (self.n,):
            raise ParameterError(f"values has shape {v.shape}; expected ({self.n},), one per text")
        sys_pos = {s: i for i, s in enumerate(dataset.systems)}
        inp_pos = {s: j for j, s in enumerate(dataset.inputs)}
        unknown = sorted({s for s in self.system if s not in sys_pos}) + sorted(
            {s for s in self.input if s not in inp_pos}
        )
        if unknown:
            raise DataError(f"labels not in the dataset: {', '.join(unknown[:5])}")
        out = np.full(dataset.shape, np.nan)
        out[[sys_pos[s] for s in self.system], [inp_pos[s] for s in self.input]] = v
        return out

    def to_dict(self, *, texts: bool = False) -> dict:
        """Summary fields (and the texts, as lists, if ``texts``)."""
        d = {
            "name": self.name,
            "options": dict(self.options),
            "n": self.n,
            "n_applied": self.n_applied,
            "n_skipped": self.n_skipped,
            "skipped": self.skipped,
            "signature": self.signature,
        }
        if texts:
            d.update(self.to_frame().to_dict(orient="list"))
        return d


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _check_text(v, where: str):
    if _missing(v):
        return None
    if not isinstance(v, str):
        raise ParameterError(
            f"{where} is a {type(v).__name__}, not a str: texts must be strings "
            "(None or NaN for a missing text)"
        )
    return v


def _run(name, options, texts, keys, rng):
    p = get_perturbation(name)
    opts = p.options(options)
    ss, tag = _rs.seed_sequence(rng)
    perturbed, applied, reason = [], [], []
    for text, key in zip(texts, keys):
        if text is None:
            perturbed.append(None), applied.append(False), reason.append(MISSING)
            continue
        gen = _rs.named_generator(ss, "perturb", name, *key) if p.random else None
        try:
            out = p.function(text, gen, **opts)
        except Skip as s:
            perturbed.append(None), applied.append(False), reason.append(s.reason)
            continue
        if out == text:  # pragma: no cover - every transform guarantees a change
            raise AssertionError(f"perturbation {name!r} returned its input unchanged")
        perturbed.append(out), applied.append(True), reason.append("")
    sig = make_signature(perturb=name, **opts, seed=tag if p.random else None)
    return opts, tuple(perturbed), tuple(applied), tuple(reason), sig


def perturb(
    texts: str | Sequence[str | None],
    name: str,
    *,
    rng=None,
    ids: Sequence[Any] | None = None,
    **options,
) -> PerturbationResult:
    """Apply the registered perturbation ``name`` to every text.

    Parameters
    ----------
    texts : str or sequence of str
        The texts (a single string is one text).  ``None`` or NaN marks a
        missing text, which is skipped with the reason ``"missing text"``.
    name : str
        A registered perturbation (:data:`PERTURBATIONS`; ``describe()``
        lists them with what they degrade and their options).
    rng : seed, optional
        Anything :func:`numpy.random.default_rng` accepts, or a Generator
        (which contributes one 128-bit draw); ``None`` draws fresh entropy,
        recorded in the signature.  Each text gets its own stream derived
        from the seed, the perturbation name and the text's id, so a text's
        perturbation does not depend on the other texts or their order.
    ids : sequence, optional
        One identifier per text (converted to ``str``; default: positions).
    **options
        The perturbation's options (e.g. ``fraction=0.3`` for
        ``drop_words``); unknown options are an error.

    Returns
    -------
    PerturbationResult

    Raises
    ------
    ParameterError
        For an unknown perturbation or option, an invalid option value, a
        text that is not a string, or ``ids`` of the wrong length or with
        duplicates.

    Examples
    --------
    >>> from metaeval.perturb import perturb
    >>> res = perturb(["It rains . The match is off .", "One sentence only ."],
    ...               "sentence_reorder", rng=0)
    >>> res.perturbed
    ('The match is off . It rains .', None)
    >>> res.skipped
    {'fewer than 2 sentences': 1}
    >>> perturb("He does not know .", "negation_removal").perturbed
    ('He does know .',)
    """
    if isinstance(texts, str):
        texts = [texts]
    elif isinstance(texts, pd.Series):
        texts = texts.tolist()
    try:
        texts = list(texts)
    except TypeError:
        raise ParameterError(
            f"texts must be a string or a sequence of strings, got {type(texts).__name__}"
        ) from None
    texts = [_check_text(v, f"texts[{k}]") for k, v in enumerate(texts)]
    if ids is None:
        ids = [str(k) for k in range(len(texts))]
    else:
        ids = [str(v) for v in ids]
        if len(ids) != len(texts):
            raise ParameterError(f"ids has {len(ids)} entries but there are {len(texts)} texts")
        dup = [k for k, c in Counter(ids).items() if c > 1]
        if dup:
            raise ParameterError(f"ids must be unique; repeated: {', '.join(dup[:5])}")
    opts, pert, applied, reason, sig = _run(name, options, texts, [(i,) for i in ids], rng)
    return PerturbationResult(name, opts, tuple(texts), pert, applied, reason, tuple(ids), sig)


def perturb_dataset(
    dataset, name: str, *, rng=None, column: str = "hypothesis", **options
) -> PerturbationResult:
    """Perturb one text column of a dataset's texts (the hypotheses by default).

    Parameters
    ----------
    dataset : Dataset
        With :attr:`~metaeval.Dataset.texts` (e.g. ``load_dataset("summeval")``).
    name : str
        A registered perturbation.
    rng : seed, optional
        As in :func:`perturb`; each text's stream is derived from the seed,
        the name and its ``system`` and ``input`` labels.
    column : str
        The text column (default ``"hypothesis"``).
    **options
        The perturbation's options.

    Returns
    -------
    PerturbationResult
        In the row order of ``dataset.texts``, with ``system`` and ``input``
        labels; missing hypotheses (a system without texts) are skipped with
        the reason ``"missing text"``.

    Raises
    ------
    DataError
        If the dataset has no texts, or no such column, or the column holds
        something other than strings (e.g. the tuples of ``references``).

    Examples
    --------
    >>> import metaeval
    >>> from metaeval.perturb import perturb_dataset
    >>> ds = metaeval.load_dataset("summeval")
    >>> res = perturb_dataset(ds, "sentence_reorder", rng=0)
    >>> res.n, res.n_applied, res.skipped
    (1700, 1550, {'missing text': 100, 'fewer than 2 sentences': 50})
    """
    texts = dataset.texts
    if texts is None:
        raise DataError(f"dataset {dataset.name!r} has no texts to perturb")
    keys = [k for k in ("system", "input") if k in texts.columns]
    text_cols = [c for c in texts.columns if c not in keys]
    if column not in text_cols:
        raise DataError(
            f"column={column!r} is not a text column of the dataset; available: "
            f"{', '.join(map(str, text_cols))}"
        )
    values = texts[column].tolist()
    labels = [tuple(texts[k].tolist()) for k in keys]
    rows = list(zip(*labels))
    checked = []
    for k, v in enumerate(values):
        try:
            checked.append(_check_text(v, f"{column!r} of row {rows[k]}"))
        except ParameterError as e:
            raise DataError(str(e)) from None
    opts, pert, applied, reason, sig = _run(name, options, checked, rows, rng)
    ids = tuple("|".join(r) for r in rows)
    system = tuple(texts["system"]) if "system" in keys else tuple("" for _ in rows)
    inp = tuple(texts["input"]) if "input" in keys else tuple("" for _ in rows)
    return PerturbationResult(
        name, opts, tuple(checked), pert, applied, reason, ids, sig, system=system, input=inp
    )
