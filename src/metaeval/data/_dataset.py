"""The :class:`Dataset`: the one in-memory form every analysis takes."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from metaeval.errors import DataError

from ._scale import (
    apply_missing_values,
    check_bounds,
    check_declared,
    check_missing_values,
    warn_undeclared,
)
from .sysscores import check_system_scores
from ._validate import (
    MAX_SHOWN,
    RESERVED_NAMES,
    as_name_list,
    check_duplicate_keys,
    check_unknown,
    fmt_items,
    fmt_key,
    labels_to_str,
    to_float,
)

#: Rater/run label of a column without a rater or run axis.
NO_AXIS_LABEL = ""

#: Default of :meth:`Dataset._with`'s ``texts``: keep the dataset's texts.
_KEEP = object()


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _nanmean0(array: np.ndarray) -> np.ndarray:
    """Mean over axis 0 ignoring NaN; NaN (without a warning) where all are NaN.

    Correctly rounded (:func:`metaeval.stats.exact.nanmean`): a cell's mean
    does not depend on the order of its raters or runs, and cells whose
    ratings have equal exact means get equal floats (for ratings on a
    rational grid, e.g. tenths, equal rational means), so averaging never
    breaks a tie between cells.  A cell holding an infinite value keeps the
    plain sum's result (inf, or NaN for +inf and -inf).
    """
    if array.shape[0] == 1:
        return array[0].copy()
    from metaeval.stats.exact import nanmean

    out = nanmean(array, axis=0)
    inf = np.isinf(array).any(axis=0)
    if inf.any():
        present = ~np.isnan(array)
        with np.errstate(invalid="ignore"):
            out[inf] = np.where(present, array, 0.0).sum(axis=0)[inf]
    return out


def _array_to_float(value: Any, *, column: str) -> np.ndarray:
    """Convert one array-like of scores to float64, rejecting non-numbers."""
    array = np.asarray(value)
    if array.ndim not in (2, 3):
        raise DataError(
            f"score array {column!r} has shape {array.shape}: expected (N, M) "
            "systems x inputs or (R, N, M) raters/runs x systems x inputs"
        )
    if array.dtype.kind in "iuf":
        return np.array(array, dtype=np.float64, copy=True)
    # Booleans, strings, objects: reuse the column validator so messages name cells.
    grid = np.indices(array.shape).reshape(array.ndim, -1)
    names = ("system", "input") if array.ndim == 2 else ("rater/run", "system", "input")
    if array.dtype.kind == "b":
        series = pd.Series(array.ravel(), dtype=bool)
    else:
        series = pd.Series(array.ravel().tolist(), dtype=object)
    flat = to_float(
        series,
        column=column,
        key_arrays=[list(map(str, g)) for g in grid],
        key_names=names,
    )
    return flat.reshape(array.shape)


def check_texts(
    texts: Any, systems: Sequence[str], inputs: Sequence[str], *, what: str = "texts"
) -> pd.DataFrame:
    """Validate an optional texts table against the dataset's labels.

    Parameters
    ----------
    texts : DataFrame
        Columns ``system`` and/or ``input`` (at least one) plus any text
        columns, one row per key.
    systems, inputs : sequence of str
        The dataset's labels.
    what : str
        The table's name in error messages.

    Returns
    -------
    DataFrame
        A copy with ``system``/``input`` labels converted to ``str``.

    Raises
    ------
    TypeError
        If ``texts`` is not a DataFrame.
    DataError
        If it has neither key column, has unknown labels or duplicate keys.
    """
    if not isinstance(texts, pd.DataFrame):
        raise TypeError(
            f"`{what}` must be a pandas DataFrame or None, got {type(texts).__name__}"
        )
    keys = [k for k in ("system", "input") if k in texts.columns]
    if not keys:
        raise DataError(
            f"`{what}` needs a 'system' and/or an 'input' column to align its rows with the "
            f"scores; its columns are {fmt_items(list(texts.columns), limit=20)}"
        )
    out = texts.reset_index(drop=True)
    known = {"system": set(systems), "input": set(inputs)}
    for key in keys:
        labels = labels_to_str(out[key], what=f"{what} column {key!r}")
        unknown = list(dict.fromkeys(lab for lab in labels if lab not in known[key]))
        if unknown:
            raise DataError(
                f"`{what}` has {key} label(s) the scores lack: {fmt_items(unknown)}; drop "
                "those rows or add scores for them"
            )
        out[key] = pd.Series(labels, dtype=object).astype(str)
    check_duplicate_keys(
        [out[k].to_numpy(dtype=object) for k in keys],
        keys,
        hint=f"`{what}` needs one row per key",
    )
    return out


def check_contexts(
    contexts: Any, systems: Sequence[str], inputs: Sequence[str]
) -> pd.DataFrame:
    """Validate an optional contexts table against the dataset's labels.

    Parameters
    ----------
    contexts : DataFrame
        Columns ``system`` and/or ``input`` (at least one) plus one column
        per context (a categorical label: speaker, domain, quality band ...),
        one row per key.  A table keyed by ``system`` only gives every input
        of a system the same label; one keyed by ``input`` only gives every
        system's output for an input the same label.
    systems, inputs : sequence of str
        The dataset's labels.

    Returns
    -------
    DataFrame
        A copy with keys and labels converted to ``str``; a missing label
        (None, NaN, empty) becomes ``None``.

    Raises
    ------
    TypeError
        If ``contexts`` is not a DataFrame.
    DataError
        If it has neither key column, no context column, unknown key labels,
        duplicate keys, or a context value that is not a scalar label.
    """
    if not isinstance(contexts, pd.DataFrame):
        raise TypeError(
            f"`contexts` must be a pandas DataFrame or None, got {type(contexts).__name__}"
        )
    out = check_texts(contexts, systems, inputs, what="contexts").rename(columns=str)
    names = [c for c in out.columns if c not in RESERVED_NAMES]
    if not names:
        raise DataError(
            "`contexts` has no context column: next to its 'system'/'input' key(s) give one "
            "column per context (e.g. 'speaker', 'domain')"
        )
    for name in names:
        values = out[name].tolist()
        labels = []
        for k, v in enumerate(values):
            if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v == "":
                labels.append(None)
            elif isinstance(v, (str, int, np.integer, np.str_, bool, np.bool_)):
                labels.append(str(v))
            elif isinstance(v, (float, np.floating)):
                labels.append(str(int(v)) if float(v).is_integer() else str(float(v)))
            else:
                keys = [k2 for k2 in ("system", "input") if k2 in out.columns]
                where = ", ".join(f"{k2} {out[k2].iat[k]!r}" for k2 in keys)
                raise DataError(
                    f"context {name!r} at {where} is a {type(v).__name__}, not a label: context "
                    "columns hold categorical labels (str or int); bin numbers first (e.g. with "
                    "pandas.cut)"
                )
        out[name] = pd.Series(labels, dtype=object)
    return out


def _filter_texts(
    loader: Callable[[], pd.DataFrame | None],
    systems: tuple[str, ...],
    inputs: tuple[str, ...],
) -> pd.DataFrame | None:
    """Load texts with ``loader`` and keep rows of the given labels."""
    texts = loader()
    return None if texts is None else _subset_texts(texts, systems, inputs)


def _subset_texts(
    texts: pd.DataFrame, systems: Sequence[str], inputs: Sequence[str]
) -> pd.DataFrame:
    """Keep the rows of the given labels, ordered like them (system, then input)."""
    sort_keys = []
    keep = np.ones(len(texts), dtype=bool)
    for column, labels in (("system", systems), ("input", inputs)):
        if column in texts.columns:
            position = pd.Index(list(labels), dtype=object).get_indexer(
                texts[column].to_numpy(dtype=object)
            )
            keep &= position >= 0
            sort_keys.append(position)
    order = np.lexsort(sort_keys[::-1])  # stable; the first key is the primary one
    order = order[keep[order]]
    return texts.iloc[order].reset_index(drop=True)


class Dataset:
    """Human and metric scores of N systems on M inputs, validated once.

    Every score column (a human dimension or a metric) is an array of shape
    ``(R, N, M)``: ``R`` raters (human columns) or runs (stochastic metrics),
    ``N`` systems, ``M`` inputs, with NaN for missing cells; ``R == 1`` when
    the column has no rater or run axis.  :meth:`scores` averages over that
    axis.  A Dataset is immutable: its arrays are read-only and its
    attributes cannot be reassigned.

    Build one with :meth:`from_frame` (long or wide tables),
    :meth:`from_arrays`, :func:`~metaeval.data.read_dataset` (files) or
    :func:`~metaeval.data.load_dataset` (bundled data).  The constructor
    itself takes arrays already shaped ``(N, M)`` or ``(R, N, M)``.

    Parameters
    ----------
    ratings : mapping of str to array_like
        One array per score column, shaped ``(N, M)`` or ``(R, N, M)``.
        Columns not listed in ``human`` are metrics, in mapping order.
    human : str or sequence of str
        The human score columns.  ``[]`` makes a dataset of metric scores
        only (for analyses that need no human scores, such as perturbation
        tests and local metric accuracy); analyses that need human scores
        then say so.
    systems, inputs : sequence
        The ``N`` system and ``M`` input labels (converted to ``str``,
        unique).
    rater_labels : mapping of str to sequence of str, optional
        Rater (human) or run (metric) labels per column, length ``R``.
        Default: ``("",)`` when ``R == 1``, else ``("r0", "r1", ...)``.
    name : str, optional
        A short name shown in :func:`repr` and reports.
    texts : DataFrame, optional
        Texts with a ``system`` and/or ``input`` column (see
        :attr:`texts`).
    provenance : str, optional
        Citation, provenance and license text.
    contexts : DataFrame, optional
        Categorical context labels with a ``system`` and/or ``input`` column
        (see :attr:`contexts` and :meth:`context`).
    system_scores : DataFrame or mapping, optional
        System-level scores that are not means of the cells (corpus BLEU,
        chrF, TER; WMT ``.sys.score`` files; human system scores computed
        otherwise): a table indexed by system (or with a ``system`` column)
        with one column per score column, the long table of
        :func:`metaeval.textmetrics.corpus_scores`, or a mapping of column
        to scores by system.  The ``system`` level of the analyses uses them
        (see :attr:`system_scores` and docs/data.md, "System-level scores").
    bounds : mapping of str to (low, high), or (low, high), optional
        Declared rating scales (a pair: every human column).  A value
        outside its column's scale is a :class:`DataError`; undeclared
        columns are checked for failure codes instead (see Warns).
    missing_values : mapping of str to numbers, or a sequence or number, optional
        Codes that mean "no score" (``{"judge": [-1, 0]}``, ``{"judge": -1}``;
        a sequence or a number: every column): those cells become missing (NaN).

    Warns
    -----
    OutOfScaleWarning
        When an undeclared column looks like an integer rating scale plus a
        few codes outside it (``-1`` or ``0`` on a 1-5 scale, ``999``); the
        values are kept (docs/data.md, "Rating scales and failure codes").
    FailureCodeWarning
        When an undeclared column holds a repeated failure code beyond those
        few (``-1`` on more than 5% of a 1-5 scale, or in a metric in [0, 1];
        ``999``); the values are kept.

    Raises
    ------
    DataError
        If the data are empty, labels are missing or duplicated, a score is
        not a finite number (booleans are rejected), a column name is
        unknown, reserved or both human and metric, array shapes disagree, or
        a metric scores systems or inputs that every human column lacks.

    Examples
    --------
    >>> import numpy as np
    >>> from metaeval.data import Dataset
    >>> ds = Dataset.from_arrays(
    ...     {"human": np.array([[1.0, 2.0], [3.0, np.nan]]),
    ...      "bleu": np.array([[0.1, 0.2], [0.3, 0.4]])},
    ...     human="human", systems=["A", "B"], inputs=["x", "y"])
    >>> ds
    Dataset(name=None, 2 systems x 2 inputs, 1 human, 1 metric)
    >>> ds.scores("human")
    array([[ 1.,  2.],
           [ 3., nan]])
    """

    __slots__ = (
        "_name",
        "_systems",
        "_inputs",
        "_human",
        "_metrics",
        "_ratings",
        "_rater_labels",
        "_provenance",
        "_texts",
        "_texts_loader",
        "_contexts",
        "_system_scores",
        "_bounds",
        "_scores_cache",
        "__weakref__",
    )

    def __init__(
        self,
        ratings: Mapping[str, Any],
        *,
        human: str | Sequence[str],
        systems: Sequence[Any],
        inputs: Sequence[Any],
        rater_labels: Mapping[str, Sequence[str]] | None = None,
        name: str | None = None,
        texts: pd.DataFrame | None = None,
        provenance: str | None = None,
        contexts: pd.DataFrame | None = None,
        system_scores: Any = None,
        bounds: Any = None,
        missing_values: Any = None,
        _check_scale: bool | Sequence[str] = True,
    ) -> None:
        set_ = functools.partial(object.__setattr__, self)
        if not isinstance(ratings, Mapping):
            raise TypeError(
                f"`ratings` must be a mapping of column name to array, got {type(ratings).__name__}"
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be a str or None, got {type(name).__name__}")
        if provenance is not None and not isinstance(provenance, str):
            raise TypeError(f"`provenance` must be a str or None, got {type(provenance).__name__}")
        human_names = as_name_list(human, parameter="human")
        systems_t = tuple(labels_to_str(list(systems), what="`systems`"))
        inputs_t = tuple(labels_to_str(list(inputs), what="`inputs`"))
        if not systems_t or not inputs_t:
            raise DataError(
                f"empty data: {len(systems_t)} systems x {len(inputs_t)} inputs; a dataset "
                "needs at least one system and one input"
            )
        for what, labels in (("system", systems_t), ("input", inputs_t)):
            check_duplicate_keys(
                [np.array(labels, dtype=object)], [what], hint=f"{what} labels must be unique"
            )
        if not ratings:
            raise DataError("empty data: no score columns; give at least one human column")
        if human is None:
            raise DataError(
                "no human columns: name at least one with `human=` (or pass `human=[]` for "
                "metric scores only, e.g. for perturbation analyses); the available columns "
                f"are {fmt_items(list(ratings), limit=60)}"
            )
        bad_names = [c for c in ratings if not isinstance(c, str)]
        if bad_names:
            raise DataError(f"score column names must be str, got {fmt_items(bad_names)}")
        reserved = [c for c in ratings if c in RESERVED_NAMES]
        if reserved:
            raise DataError(
                f"score column name(s) {fmt_items(reserved)} are reserved for the labels "
                "(see Dataset.to_frame); rename those columns"
            )
        check_unknown(human_names, list(ratings), what="human column(s)")
        metrics = tuple(c for c in ratings if c not in set(human_names))
        n, m = len(systems_t), len(inputs_t)

        arrays: dict[str, np.ndarray] = {}
        labels_out: dict[str, tuple[str, ...]] = {}
        rater_labels = dict(rater_labels or {})
        check_unknown(rater_labels, list(ratings), what="column(s) in `rater_labels`")
        bounds_d = check_bounds(bounds, list(ratings), human_names)
        missing_d = check_missing_values(missing_values, list(ratings))
        for column, value in ratings.items():
            array = _array_to_float(value, column=column)
            apply_missing_values(array, missing_d.get(column, ()))
            if array.ndim == 2:
                array = array[np.newaxis]
            if array.shape[1:] != (n, m) or array.shape[0] < 1:
                raise DataError(
                    f"score array {column!r} has shape {array.shape}: expected (N, M) = "
                    f"({n}, {m}) or (R, {n}, {m}) with R >= 1 for {n} systems and {m} inputs"
                )
            r = array.shape[0]
            if column in rater_labels:
                labs = tuple(
                    labels_to_str(
                        list(rater_labels[column]),
                        what=f"rater_labels[{column!r}]",
                        allow_empty=r == 1,
                    )
                )
                if len(labs) != r:
                    raise DataError(
                        f"rater_labels[{column!r}] has {len(labs)} labels but the column has "
                        f"R = {r} raters/runs"
                    )
                check_duplicate_keys(
                    [np.array(labs, dtype=object)],
                    [f"rater of {column!r}"],
                    hint="rater/run labels must be unique",
                )
            else:
                labs = (NO_AXIS_LABEL,) if r == 1 else tuple(f"r{i}" for i in range(r))
            _check_finite(array, column, systems_t, inputs_t, labs)
            arrays[column] = _readonly(array)
            labels_out[column] = labs

        check_declared(arrays, bounds_d)
        if _check_scale:
            scan = arrays if _check_scale is True else [c for c in _check_scale if c in arrays]
            warn_undeclared(arrays, [c for c in scan if c not in bounds_d])
        if human_names:
            _check_human_present(arrays, human_names)
            _check_coverage(arrays, human_names, metrics, systems_t, inputs_t)

        set_("_name", name)
        set_("_systems", systems_t)
        set_("_inputs", inputs_t)
        set_("_human", tuple(human_names))
        set_("_metrics", metrics)
        set_("_ratings", {c: arrays[c] for c in (*human_names, *metrics)})
        set_("_rater_labels", {c: labels_out[c] for c in (*human_names, *metrics)})
        set_("_provenance", provenance)
        set_("_texts", None if texts is None else check_texts(texts, systems_t, inputs_t))
        set_("_texts_loader", None)
        set_(
            "_contexts",
            None if contexts is None else check_contexts(contexts, systems_t, inputs_t),
        )
        set_(
            "_system_scores",
            check_system_scores(system_scores, systems_t, (*human_names, *metrics)),
        )
        set_("_bounds", {c: bounds_d[c] for c in (*human_names, *metrics) if c in bounds_d})
        set_("_scores_cache", {})

    # ------------------------------------------------------------------ immutability
    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(
            f"Dataset is immutable: cannot set {key!r}; build a new Dataset instead"
        )

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"Dataset is immutable: cannot delete {key!r}")

    def __getstate__(self) -> dict[str, Any]:
        state = {
            k: getattr(self, k) for k in self.__slots__ if k not in ("_scores_cache", "__weakref__")
        }
        state["_scores_cache"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        # Unpickled arrays come back writeable: freeze them again.
        for array in self._ratings.values():
            array.flags.writeable = False
        if not hasattr(self, "_system_scores"):  # pickled before system scores existed
            object.__setattr__(self, "_system_scores", {})
        if not hasattr(self, "_bounds"):
            object.__setattr__(self, "_bounds", {})
        for array in self._system_scores.values():
            array.flags.writeable = False

    def _attach_texts_loader(self, loader: Callable[[], pd.DataFrame | None]) -> Dataset:
        """Attach a picklable zero-argument callable that loads texts lazily."""
        object.__setattr__(self, "_texts", None)
        object.__setattr__(self, "_texts_loader", loader)
        return self

    # ------------------------------------------------------------------ attributes
    @property
    def name(self) -> str | None:
        """Short name of the dataset (``None`` if not given)."""
        return self._name

    @property
    def systems(self) -> tuple[str, ...]:
        """The ``N`` system labels, in order of first appearance."""
        return self._systems

    @property
    def inputs(self) -> tuple[str, ...]:
        """The ``M`` input labels, in order of first appearance."""
        return self._inputs

    @property
    def human(self) -> tuple[str, ...]:
        """Names of the human score columns."""
        return self._human

    @property
    def metrics(self) -> tuple[str, ...]:
        """Names of the metric score columns."""
        return self._metrics

    @property
    def columns(self) -> tuple[str, ...]:
        """All score columns: :attr:`human` then :attr:`metrics`."""
        return self._human + self._metrics

    @property
    def shape(self) -> tuple[int, int]:
        """``(N, M)``: number of systems and of inputs."""
        return (len(self._systems), len(self._inputs))

    @property
    def provenance(self) -> str | None:
        """Citation, provenance and license text (set for bundled data)."""
        return self._provenance

    @property
    def texts(self) -> pd.DataFrame | None:
        """Optional texts, one row per system x input (or per input).

        Columns ``system`` and/or ``input`` (``str`` labels of this dataset)
        plus text columns such as ``source``, ``reference``/``references``
        and ``hypothesis``.  Bundled texts are loaded on first access.  A
        new frame (a deep copy) is returned on every access, so changing it
        does not change the dataset, under any pandas copy semantics.
        """
        if self._texts is None and self._texts_loader is not None:
            loaded = self._texts_loader()
            checked = None if loaded is None else check_texts(loaded, self._systems, self._inputs)
            object.__setattr__(self, "_texts", checked)
            object.__setattr__(self, "_texts_loader", None)
        return None if self._texts is None else self._texts.copy(deep=True)

    @property
    def contexts(self) -> pd.DataFrame | None:
        """Optional context labels (``None`` if none were given).

        Columns ``system`` and/or ``input`` (``str`` labels of this dataset)
        plus one column per context, holding ``str`` labels or ``None``
        (unknown).  A new frame (a deep copy) is returned on every access.  The system and
        input labels themselves are always contexts too: see
        :attr:`context_names` and :meth:`context`.
        """
        return None if self._contexts is None else self._contexts.copy(deep=True)

    @property
    def context_names(self) -> tuple[str, ...]:
        """Names accepted by :meth:`context`: ``"system"``, ``"input"``, then the context columns."""
        extra = () if self._contexts is None else tuple(
            c for c in self._contexts.columns if c not in RESERVED_NAMES
        )
        return ("system", "input", *extra)

    def context(self, name: str) -> np.ndarray:
        """The context label of every cell, as an ``(N, M)`` array.

        Parameters
        ----------
        name : str
            ``"system"``, ``"input"`` or a column of :attr:`contexts`.

        Returns
        -------
        numpy.ndarray
            Object array of shape ``(N, M)``: the ``str`` label of each
            system x input cell, ``None`` where the contexts table gives none
            (or has no row for the cell).  A table keyed by system (input)
            only is broadcast over the inputs (systems).

        Raises
        ------
        DataError
            If ``name`` is not a context (the message lists them).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from metaeval.data import Dataset
        >>> ds = Dataset.from_arrays(
        ...     {"wer": np.array([[0.1, 0.2], [0.3, 0.4]])}, human=[],
        ...     systems=["A", "B"], inputs=["u1", "u2"],
        ...     contexts=pd.DataFrame({"input": ["u1", "u2"], "speaker": ["s7", "s9"]}))
        >>> ds.context("speaker")
        array([['s7', 's9'],
               ['s7', 's9']], dtype=object)
        """
        n, m = self.shape
        if name == "system":
            return np.repeat(np.array(self._systems, dtype=object)[:, None], m, axis=1)
        if name == "input":
            return np.repeat(np.array(self._inputs, dtype=object)[None, :], n, axis=0)
        if not isinstance(name, str) or name not in self.context_names:
            raise DataError(
                f"unknown context {name!r}; available: {fmt_items(self.context_names, limit=60)}"
                " (add context columns with the `contexts` table)"
            )
        table = self._contexts
        out = np.full((n, m), None, dtype=object)
        values = table[name].to_numpy(dtype=object)
        s_pos = (
            pd.Index(self._systems).get_indexer(table["system"].to_numpy(dtype=object))
            if "system" in table.columns
            else None
        )
        i_pos = (
            pd.Index(self._inputs).get_indexer(table["input"].to_numpy(dtype=object))
            if "input" in table.columns
            else None
        )
        if s_pos is not None and i_pos is not None:
            out[s_pos, i_pos] = values
        elif s_pos is not None:
            out[s_pos, :] = values[:, None]
        else:
            out[:, i_pos] = values[None, :]
        return out

    @property
    def bounds(self) -> dict[str, tuple[float, float]]:
        """Declared rating scales, ``{column: (low, high)}`` (a copy; empty if none)."""
        return dict(self._bounds)

    # ------------------------------------------------------------------ system scores
    @property
    def system_score_columns(self) -> tuple[str, ...]:
        """Columns with given system-level scores (see :attr:`system_scores`)."""
        return tuple(self._system_scores)

    @property
    def system_scores(self) -> pd.DataFrame | None:
        """Given system-level scores, or ``None`` if the dataset has none.

        A frame indexed by system (all :attr:`systems`, index name
        ``system``) with one float column per score column that has given
        scores, NaN for a system without one.  These are the numbers the
        ``system`` level uses by default instead of the means of the cells
        (``system_scores="given"|"mean"`` in :func:`metaeval.correlate`,
        :func:`metaeval.compare`, :func:`metaeval.compare_all` and
        :func:`metaeval.diagnostics.correlation_design`).  A new frame on
        every access.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from metaeval.data import Dataset
        >>> ds = Dataset.from_arrays(
        ...     {"human": np.array([[1.0, 2.0], [3.0, 4.0]]),
        ...      "bleu": np.array([[10.0, 20.0], [30.0, 40.0]])},
        ...     human="human", systems=["A", "B"],
        ...     system_scores=pd.DataFrame({"bleu": [12.5, 36.0]}, index=["A", "B"]))
        >>> ds.system_scores  # doctest: +NORMALIZE_WHITESPACE
                bleu
        system
        A       12.5
        B       36.0
        >>> ds.scores("bleu").mean(axis=1)  # the means of the cells differ
        array([15., 35.])
        """
        if not self._system_scores:
            return None
        frame = pd.DataFrame(
            {c: np.array(v) for c, v in self._system_scores.items()},
            index=pd.Index(list(self._systems), name="system", dtype=object),
        )
        return frame

    def system_score(self, column: str) -> np.ndarray | None:
        """The given system-level scores of one column, or ``None``.

        Returns
        -------
        numpy.ndarray or None
            Read-only float64 array of shape ``(N,)`` in :attr:`systems`
            order (NaN for a system without a given score); ``None`` when the
            column's system level is the mean of its cells.

        Raises
        ------
        DataError
            If ``column`` is unknown.
        """
        self._column(column)
        return self._system_scores.get(column)

    def with_system_scores(self, system_scores: Any, *, replace: bool = False) -> Dataset:
        """A new dataset that also carries given system-level scores.

        Parameters
        ----------
        system_scores : DataFrame or mapping
            As the constructor's ``system_scores``, e.g. the output of
            :func:`metaeval.textmetrics.corpus_scores` (``system, metric,
            score``; the metric names must be columns of the dataset).
        replace : bool
            Drop the given scores the dataset already has (default: keep
            them, the new ones taking precedence column by column).

        Examples
        --------
        >>> import numpy as np
        >>> from metaeval.data import Dataset
        >>> ds = Dataset.from_arrays({"h": np.eye(3), "ter": np.ones((3, 3))}, human="h")
        >>> ds.with_system_scores({"ter": [0.5, 0.25, 0.75]}).system_score("ter")
        array([0.5 , 0.25, 0.75])
        """
        new = check_system_scores(system_scores, self._systems, self.columns)
        merged = {} if replace else dict(self._system_scores)
        merged.update(new)
        return self._with(system_scores=merged)

    # ------------------------------------------------------------------ scores
    def _column(self, column: str) -> np.ndarray:
        try:
            return self._ratings[column]
        except (KeyError, TypeError):
            raise DataError(
                f"unknown score column {column!r}; available: human "
                f"{fmt_items(self._human, limit=60)}; metrics {fmt_items(self._metrics, limit=60)}"
            ) from None

    def scores(self, column: str) -> np.ndarray:
        """Scores of one column averaged over raters or runs.

        Parameters
        ----------
        column : str
            A human or metric column name.

        Returns
        -------
        numpy.ndarray
            Read-only float64 array of shape ``(N, M)``: the mean over the
            rater/run axis ignoring NaN (as :func:`numpy.nanmean`), NaN where
            no rater or run has a value.

        Raises
        ------
        DataError
            If ``column`` is unknown (the message lists the columns).
        """
        cached = self._scores_cache.get(column)
        if cached is None:
            cached = _readonly(_nanmean0(self._column(column)))
            self._scores_cache[column] = cached
        return cached

    def ratings(self, column: str) -> np.ndarray:
        """Individual ratings (human) or runs (metric) of one column.

        Parameters
        ----------
        column : str
            A human or metric column name.

        Returns
        -------
        numpy.ndarray
            Read-only float64 array of shape ``(R, N, M)``; ``R == 1`` when
            the column has no rater or run axis.  NaN where missing.

        Raises
        ------
        DataError
            If ``column`` is unknown.
        """
        return self._column(column)

    def rater_labels(self, column: str) -> tuple[str, ...]:
        """The ``R`` rater (human) or run (metric) labels of one column.

        Parameters
        ----------
        column : str
            A human or metric column name.

        Returns
        -------
        tuple of str
            Length ``R``; ``("",)`` for a column without a rater or run axis.

        Raises
        ------
        DataError
            If ``column`` is unknown.
        """
        self._column(column)
        return self._rater_labels[column]

    # ------------------------------------------------------------------ derived datasets
    def subset(
        self,
        *,
        systems: Sequence[str] | None = None,
        inputs: Sequence[str] | None = None,
        human: Sequence[str] | None = None,
        metrics: Sequence[str] | None = None,
    ) -> Dataset:
        """A new dataset restricted to some systems, inputs and columns.

        Parameters
        ----------
        systems, inputs : sequence of str, optional
            Labels to keep, in the order given (``None`` keeps all).
        human, metrics : str or sequence of str, optional
            Columns to keep, in the order given (``None`` keeps all; ``[]``
            drops all metrics, or all human columns).

        Returns
        -------
        Dataset
            Validated like any new dataset (so dropping human columns can
            expose a metric that scores systems no remaining human column
            covers).  Texts and contexts are filtered to the kept labels.

        Raises
        ------
        DataError
            If a label or column is unknown or repeated.
        """

        def pick(value: Any, available: tuple[str, ...], what: str) -> list[str]:
            if value is None:
                return list(available)
            names = as_name_list(value, parameter=what)
            names = [n if isinstance(n, str) else str(n) for n in names]
            unknown = [n for n in names if n not in set(available)]
            if unknown:
                raise DataError(
                    f"subset: unknown {what}: {fmt_items(unknown, limit=20)}; available: "
                    f"{fmt_items(available, limit=60)}"
                )
            return names

        sys_keep = pick(systems, self._systems, "systems")
        inp_keep = pick(inputs, self._inputs, "inputs")
        hum_keep = pick(human, self._human, "human")
        met_keep = pick(metrics, self._metrics, "metrics")
        s_idx = np.array([self._systems.index(s) for s in sys_keep], dtype=np.intp)
        i_idx = np.array([self._inputs.index(i) for i in inp_keep], dtype=np.intp)
        ratings = {c: self._ratings[c][:, s_idx][:, :, i_idx] for c in (*hum_keep, *met_keep)}
        texts = None if self._texts is None else _subset_texts(self._texts, sys_keep, inp_keep)
        contexts = (
            None if self._contexts is None else _subset_texts(self._contexts, sys_keep, inp_keep)
        )
        sys_given = self._subset_system_scores(sys_keep, inp_keep, ratings)
        out = Dataset(
            ratings,
            human=hum_keep,
            systems=sys_keep,
            inputs=inp_keep,
            rater_labels={c: self._rater_labels[c] for c in ratings},
            name=self._name,
            texts=texts,
            provenance=self._provenance,
            contexts=contexts,
            system_scores=sys_given,
            bounds={c: b for c, b in self._bounds.items() if c in ratings} or None,
            _check_scale=False,
        )
        if self._texts is None and self._texts_loader is not None:
            out._attach_texts_loader(
                functools.partial(
                    _filter_texts, self._texts_loader, tuple(sys_keep), tuple(inp_keep)
                )
            )
        return out

    def _subset_system_scores(self, sys_keep, inp_keep, ratings) -> dict | None:
        """Given system scores for a subset: kept for the kept systems and
        columns; dropped (with a warning) when inputs are dropped, since a
        corpus-level score of all inputs does not describe a subset of them."""
        if not self._system_scores:
            return None
        keep_cols = [c for c in self._system_scores if c in ratings]
        if set(inp_keep) != set(self._inputs) and keep_cols:
            import warnings

            from metaeval.errors import SystemScoresWarning

            warnings.warn(
                f"subset drops {len(self._inputs) - len(set(inp_keep))} of {len(self._inputs)} "
                f"inputs: the given system-level scores of {fmt_items(keep_cols)} describe all "
                "inputs, so they are dropped and the system level of these columns is the mean "
                "of the kept cells; recompute them on the kept inputs (e.g. "
                "metaeval.textmetrics.corpus_scores) and add them with with_system_scores",
                SystemScoresWarning,
                stacklevel=3,
            )
            return None
        pos = [self._systems.index(s) for s in sys_keep]
        out = {}
        for c in keep_cols:
            v = self._system_scores[c][pos]
            if np.isfinite(v).any():
                out[c] = pd.Series(v, index=list(sys_keep))
        return out or None

    def _with(
        self,
        ratings: Mapping[str, Any] | None = None,
        *,
        human: Sequence[str] | None = None,
        texts: Any = _KEEP,
        rater_labels: Mapping[str, Sequence[str]] | None = None,
        system_scores: Any = _KEEP,
    ) -> Dataset:
        """A new dataset with the same labels, name, provenance and contexts.

        ``ratings`` replaces the score columns (default: keep them all); a column
        passed as its own array (``self.ratings(c)``) keeps its rater/run labels
        unless ``rater_labels`` gives others.
        ``human`` defaults to this dataset's human columns, ``texts`` to its
        texts (a lazy loader stays lazy).  Validated like any new dataset.
        """
        if ratings is None:
            ratings = {c: self._ratings[c] for c in self.columns}
        # a column kept as is (the same array) keeps its labels; a new array is a new column
        labels = {c: self._rater_labels[c] for c, a in ratings.items()
                  if c in self._ratings and a is self._ratings[c]}
        labels.update(rater_labels or {})
        keep_texts = texts is _KEEP
        if system_scores is _KEEP:
            # given system scores stay with the columns kept as the same arrays
            system_scores = {c: v for c, v in self._system_scores.items()
                             if c in ratings and ratings[c] is self._ratings.get(c)}
        out = Dataset(
            ratings,
            human=list(self._human) if human is None else human,
            systems=self._systems,
            inputs=self._inputs,
            rater_labels=labels,
            name=self._name,
            texts=self._texts if keep_texts else texts,
            provenance=self._provenance,
            contexts=self._contexts,
            system_scores=system_scores or None,
            bounds={c: b for c, b in self._bounds.items() if c in ratings} or None,
            _check_scale=[c for c in ratings if ratings[c] is not self._ratings.get(c)],
        )
        if keep_texts and self._texts is None and self._texts_loader is not None:
            out._attach_texts_loader(self._texts_loader)
        return out

    def to_frame(self) -> pd.DataFrame:
        """Long table of averaged scores, one row per system x input.

        Returns
        -------
        DataFrame
            ``N * M`` rows in system-major order; columns ``system``,
            ``input`` (``str``), then every score column (human first) as
            float64 from :meth:`scores`.  Feeding it back to
            :meth:`from_frame` with ``human=ds.human`` gives the same scores
            (rater and run axes are averaged away).
        """
        n, m = self.shape
        data: dict[str, Any] = {
            "system": pd.Series(np.repeat(np.array(self._systems, dtype=object), m), dtype=str),
            "input": pd.Series(np.tile(np.array(self._inputs, dtype=object), n), dtype=str),
        }
        for column in self.columns:
            data[column] = self.scores(column).reshape(-1).copy()
        return pd.DataFrame(data)

    def __repr__(self) -> str:
        n, m = self.shape
        n_metrics = len(self._metrics)
        return (
            f"Dataset(name={self._name!r}, {n} systems x {m} inputs, {len(self._human)} human, "
            f"{n_metrics} metric{'' if n_metrics == 1 else 's'})"
        )

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls,
        scores: Mapping[str, Any],
        *,
        human: str | Sequence[str],
        systems: Sequence[Any] | None = None,
        inputs: Sequence[Any] | None = None,
        name: str | None = None,
        texts: pd.DataFrame | None = None,
        provenance: str | None = None,
        contexts: pd.DataFrame | None = None,
        system_scores: Any = None,
        bounds: Any = None,
        missing_values: Any = None,
    ) -> Dataset:
        """Build a dataset from score matrices.

        Parameters
        ----------
        scores : mapping of str to array_like
            One array per score column, shaped ``(N, M)`` (systems x inputs,
            the nlpstats / mt-metrics-eval matrix convention) or
            ``(R, N, M)`` with a leading rater (human) or run (metric) axis.
            NaN marks missing cells.  Columns not in ``human`` are metrics.
        human : str or sequence of str
            The human score columns (``[]``: metric scores only).
        systems, inputs : sequence, optional
            Labels (converted to ``str``); default ``"s0", "s1", ...`` and
            ``"i0", "i1", ...``.
        name : str, optional
            Dataset name.
        texts : DataFrame, optional
            Texts with ``system`` and/or ``input`` columns.
        provenance : str, optional
            Citation, provenance and license text.
        contexts : DataFrame, optional
            Context labels with ``system`` and/or ``input`` columns.
        system_scores : DataFrame or mapping, optional
            Given system-level scores (see :class:`Dataset`).
        bounds, missing_values : optional
            Declared rating scales and missing-value codes (see
            :class:`Dataset`).

        Returns
        -------
        Dataset
            Rater/run labels are ``("",)`` for ``R == 1`` and
            ``("r0", "r1", ...)`` otherwise.

        Raises
        ------
        DataError
            See :class:`Dataset`.
        """
        if not isinstance(scores, Mapping):
            raise TypeError(
                f"`scores` must be a mapping of column name to array, got {type(scores).__name__}"
            )
        if not scores:
            raise DataError("empty data: `scores` has no columns; give at least one human column")
        first = np.shape(next(iter(scores.values())))
        if len(first) not in (2, 3):
            col = next(iter(scores))
            raise DataError(f"score array {col!r} has shape {first}: expected (N, M) or (R, N, M)")
        n, m = first[-2:]
        if systems is None:
            systems = [f"s{i}" for i in range(n)]
        if inputs is None:
            inputs = [f"i{j}" for j in range(m)]
        for what, labels, size in (("systems", systems, n), ("inputs", inputs, m)):
            if len(labels) != size:
                raise DataError(
                    f"`{what}` has {len(labels)} labels but the score arrays have {size} {what}"
                )
        return cls(
            scores,
            human=human,
            systems=systems,
            inputs=inputs,
            name=name,
            texts=texts,
            provenance=provenance,
            contexts=contexts,
            system_scores=system_scores,
            bounds=bounds,
            missing_values=missing_values,
        )

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame | Mapping[str, pd.DataFrame],
        *,
        system: str | None = "system",
        input: str = "input",
        human: str | Sequence[str] | None = None,
        metrics: str | Sequence[str] | None = None,
        rater: str | None = None,
        run: str | None = None,
        raters: Mapping[str, Sequence[str] | Mapping[str, str]] | None = None,
        form: str = "long",
        name: str | None = None,
        texts: pd.DataFrame | str | Sequence[str] | None = None,
        provenance: str | None = None,
        contexts: pd.DataFrame | str | Sequence[str] | None = None,
        system_scores: Any = None,
        bounds: Any = None,
        missing_values: Any = None,
    ) -> Dataset:
        """Build a dataset from a long or wide table.

        Parameters
        ----------
        df : DataFrame, or mapping of str to DataFrame (wide form only)
            The scores.  Long form (``form="long"``): one row per system x
            input [x rater | x run], one column per score.  Wide form
            (``form="wide"``): one row per system x score [x rater | x run],
            a ``score`` column naming the score column of the row, and one
            column per input; or a mapping of score name to a systems x
            inputs matrix (systems as the index or a ``system`` column).
        system, input : str
            Names of the system and input label columns (long form; in the
            wide form ``input`` is unused because inputs are the columns).
            ``system=None``: the long frame holds one system and has no
            system column; the system is labeled ``"system"`` (command line:
            ``--system none``).
        human : str or sequence of str
            Human score columns.  Required unless ``raters`` is given (its
            keys are human columns); ``[]`` reads metric scores only.  Columns listed in ``raters`` may be
            listed here too, to keep them as single-rater human columns.
        metrics : str or sequence of str, optional
            Metric columns.  Default: every other numeric column (long form;
            see Notes) or every other score (wide form).
        rater : str, optional
            Column of rater labels: rows are (system, input, rater) and
            human columns get a rater axis (``ratings()`` is ``(R, N, M)``).
            Metric values must agree across the raters of a cell (see
            Notes).
        run : str, optional
            Column of run labels: rows are (system, input, run) and metric
            columns get a run axis (stochastic metrics).  Human values must
            agree across the runs of a cell.  ``rater`` and ``run`` cannot
            both be given.
        raters : mapping, optional
            Raters in columns (the SummEval layout): maps a new human column
            to the columns holding its raters, as a list (rater labels are
            the column names) or a ``{rater_label: column}`` mapping.  E.g.
            ``{"coherence": {"e1": "e1_coherence", "e2": "e2_coherence"}}``.
            The source columns are not kept unless listed in ``human``.
        form : {"long", "wide"}
            Layout of ``df``.
        name : str, optional
            Dataset name.
        texts : DataFrame, or str or sequence of str, optional
            Texts keyed by the ``system`` and/or ``input`` column (same
            names as in ``df``), or the names of text columns of ``df``
            (long form), e.g. ``texts=["source", "reference", "hypothesis"]``
            (one value per system x input; never taken for metrics).
        provenance : str, optional
            Citation, provenance and license text.
        contexts : DataFrame, or str or sequence of str, optional
            Context labels: a table keyed by the ``system`` and/or ``input``
            column (as ``texts``), or the names of label columns of ``df``
            (long form), e.g. ``contexts=["speaker", "gender"]``; such a
            column must have one value per system x input.  Context columns
            are never taken for metrics.
        system_scores : DataFrame or mapping, optional
            Given system-level scores (corpus BLEU, ``.sys.score`` files), a
            second table indexed by system with one column per score column
            (see :class:`Dataset`).
        bounds : mapping of str to (low, high), or (low, high), optional
            Declared rating scales (a pair: every human column); values
            outside are an error.  Undeclared integer scales with a few codes
            outside them (``-1``, ``0`` on 1-5, ``999``) give an
            :class:`~metaeval.errors.OutOfScaleWarning`.
        missing_values : mapping of str to sequence, or a sequence, optional
            Codes that mean "no score" in a column (``{"judge": [-1]}``), made
            missing (NaN).

        Returns
        -------
        Dataset

        Raises
        ------
        ParameterError
            If ``form`` is not ``"long"`` or ``"wide"``, if both ``rater`` and
            ``run`` (or ``rater`` and ``raters``) are given, or if ``human``
            is missing.
        DataError
            Empty frame, duplicate keys, non-numeric or infinite scores,
            unknown or conflicting columns, metric values differing across
            raters of a cell, metrics scoring systems or inputs that every
            human column lacks.

        Notes
        -----
        Labels are converted to ``str`` and kept in order of first
        appearance.  A system x input combination absent from the table, or
        a NaN value, is a missing (NaN) cell.

        The default metric columns (long form) are the remaining columns of
        numeric dtype, plus any text column whose present values mostly
        (at least half) parse as numbers: such a column is taken for a score
        column with typos, so its stray strings are reported instead of the
        column silently vanishing.  Boolean columns are not picked by
        default.  Pass ``metrics=`` explicitly to choose.

        With ``rater=``, a metric must have, for each cell, one value shared
        by every rater row that has a value: repeat it on every rater row,
        or give it on one row and leave NaN on the others.  With ``run=``,
        the same rule applies to human columns.

        Examples
        --------
        >>> import pandas as pd
        >>> from metaeval.data import Dataset
        >>> df = pd.DataFrame({"system": ["A", "A", "B", "B"],
        ...                    "input": ["x", "y", "x", "y"],
        ...                    "human": [1, 2, 3, 4],
        ...                    "bleu": [0.1, 0.2, 0.3, 0.4]})
        >>> Dataset.from_frame(df, human="human").scores("bleu")
        array([[0.1, 0.2],
               [0.3, 0.4]])
        """
        from ._frames import dataset_from_frame

        if system is None:  # one unnamed system: every row is one input (x rater | run) of it
            df, system = _one_system(df), "system"
        return dataset_from_frame(
            cls,
            df,
            system=system,
            input=input,
            human=human,
            metrics=metrics,
            rater=rater,
            run=run,
            raters=raters,
            form=form,
            name=name,
            texts=texts,
            provenance=provenance,
            contexts=contexts,
            system_scores=system_scores,
            bounds=bounds,
            missing_values=missing_values,
        )


    @classmethod
    def from_hf(cls, data: Any, *, layout: str = "long", **kwargs: Any) -> Dataset:
        """Build a dataset from a Hugging Face ``datasets.Dataset`` (one split).

        ``data.to_pandas()`` is read by :meth:`from_frame` (``layout="long"``,
        ``kwargs`` are its keyword arguments) or by
        :func:`metaeval.data.read_summeval` (``layout="summeval"``); any
        object with ``to_pandas()`` works, ``datasets`` is not imported.
        See :func:`metaeval.data._readers_ext.from_hf`.

        Examples
        --------
        >>> import pandas as pd
        >>> class Split:  # what datasets.Dataset offers
        ...     def to_pandas(self):
        ...         return pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"],
        ...                              "human": [1.0, 2.0], "bleu": [0.5, 0.7]})
        >>> Dataset.from_hf(Split(), human="human")
        Dataset(name=None, 2 systems x 1 inputs, 1 human, 1 metric)
        """
        from ._readers_ext import from_hf

        return from_hf(data, layout=layout, **kwargs)

def _check_finite(
    array: np.ndarray,
    column: str,
    systems: tuple[str, ...],
    inputs: tuple[str, ...],
    labels: tuple[str, ...],
) -> None:
    bad = np.argwhere(np.isinf(array))
    if bad.size == 0:
        return
    names = ("system", "input", "rater/run")
    cells = [
        f"{float(array[r, s, i])!r} at {fmt_key(names, (systems[s], inputs[i], labels[r]))}"
        for r, s, i in bad[:MAX_SHOWN]
    ]
    rest = len(bad) - MAX_SHOWN
    raise DataError(
        f"score column {column!r} has {len(bad)} infinite value(s): {', '.join(cells)}"
        f"{f' and {rest} more' if rest > 0 else ''}; scores must be finite: replace them "
        "with a finite value or NaN (missing)"
    )


def _check_human_present(arrays: Mapping[str, np.ndarray], human: Sequence[str]) -> None:
    if all(np.isnan(arrays[c]).all() for c in human):
        raise DataError(
            f"the human column(s) {fmt_items(human)} have no values (all missing): a dataset "
            "needs human scores; check the column names and the missing-value markers"
        )


def _check_coverage(
    arrays: Mapping[str, np.ndarray],
    human: Sequence[str],
    metrics: Sequence[str],
    systems: tuple[str, ...],
    inputs: tuple[str, ...],
) -> None:
    """Raise if a metric has values for a system or input no human column has."""
    if not metrics:
        return
    human_present = np.zeros((len(systems), len(inputs)), dtype=bool)
    for column in human:
        human_present |= ~np.isnan(arrays[column]).all(axis=0)
    human_sys = human_present.any(axis=1)
    human_inp = human_present.any(axis=0)
    problems = []
    for column in metrics:
        present = ~np.isnan(arrays[column]).all(axis=0)
        extra_sys = [systems[k] for k in np.flatnonzero(present.any(axis=1) & ~human_sys)]
        extra_inp = [inputs[k] for k in np.flatnonzero(present.any(axis=0) & ~human_inp)]
        parts = []
        if extra_sys:
            parts.append(f"system(s) {fmt_items(extra_sys)}")
        if extra_inp:
            parts.append(f"input(s) {fmt_items(extra_inp)}")
        if parts:
            problems.append(f"metric {column!r} scores {' and '.join(parts)}")
    if problems:
        shown = "; ".join(problems[:MAX_SHOWN])
        rest = len(problems) - MAX_SHOWN
        raise DataError(
            f"{shown}{f'; and {rest} more metric(s)' if rest > 0 else ''}, which no human column "
            "scores at all: add the human scores, or drop those systems/inputs (e.g. with "
            "Dataset.subset or by filtering the table)"
        )


def _one_system(df):
    """``df`` with a ``system`` column holding one label, ``"system"`` (``from_frame(system=None)``)."""
    import pandas as pd

    from ..errors import ParameterError

    if not isinstance(df, pd.DataFrame):
        raise ParameterError("system=None (one system) takes a long DataFrame, not a mapping of frames")
    if "system" in df.columns:
        raise ParameterError("system=None declares one unnamed system, but the frame has a 'system' column; "
                             "pass system='system' to use it (command line: drop --system none, or give "
                             "--system system)")
    return df.assign(system="system")
