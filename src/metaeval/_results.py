"""The plumbing every analysis result shares: views of frozen dataclasses.

A result is a frozen dataclass mixing in :class:`_Result`; a collection of
results (one per metric, column or pair) is a :class:`_Collection`.  Fields
whose metadata has ``array`` are kept out of ``to_dict()`` (unless
``arrays=True``) and of frames; ``nofr`` keeps a field in ``to_dict()`` but
out of frames (tuples of labels that a tidy row cannot hold).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
import pandas as pd

#: Field metadata of an array field: left out of to_dict() (unless arrays=True) and frames.
_ARRAY = {"array": True}
#: ``field(**_ARR)``: an optional array field, not shown in repr, not compared.
_ARR = {"default": None, "repr": False, "compare": False, "metadata": _ARRAY}


def _plain(v):
    """numpy scalars as Python scalars, tuples as lists (recursively)."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def frame_row(frame: pd.DataFrame, **match) -> dict:
    """The single row of ``frame`` whose columns equal ``match`` (``None`` matches any),
    as a dict: the ``get`` of results that are tables (one row per measure or grid
    point) rather than collections of result objects.  ``KeyError`` unless exactly one."""
    mask = np.ones(len(frame), dtype=bool)
    for k, v in match.items():
        if v is not None:
            mask &= (frame[k] == v).to_numpy()
    if mask.sum() != 1:
        shown = ", ".join(f"{k}={v!r}" for k, v in match.items())
        raise KeyError(f"{int(mask.sum())} rows match {shown}")
    return frame[mask].iloc[0].to_dict()


class _HtmlView:
    """The Jupyter view of anything with ``to_frame()`` (results, and inputs such as
    :class:`metaeval.local.LocalPairs`): the one upward arrow of the lower layers, imported
    inside the method so that importing a result loads no view
    (``tests/test_architecture.py``, ``VIEW_HOOKS``)."""

    def _repr_html_(self) -> str:
        """Jupyter view: :meth:`to_frame` as an HTML table and the signature(s)
        (the view is :func:`metaeval.report.tables.result_html`)."""
        from .report.tables import result_html

        return result_html(self)


class _Result(_HtmlView):
    """Common views (a mixin of frozen dataclasses)."""

    def to_dict(self, *, arrays: bool = False) -> dict:
        """Plain dict of the scalar fields (and the arrays as lists if ``arrays``)."""
        d = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.metadata.get("array"):
                if arrays:
                    d[f.name] = None if v is None else np.asarray(v).tolist()
                continue
            d[f.name] = _plain(v)
        return d

    @classmethod
    def frame_columns(cls) -> list[str]:
        """The columns of ``to_frame()``."""
        return [f.name for f in fields(cls)
                if not (f.metadata.get("array") or f.metadata.get("nofr"))]

    def _rows(self) -> list[dict]:
        d = self.to_dict()
        return [{c: d[c] for c in self.frame_columns()}]

    def to_frame(self) -> pd.DataFrame:
        """This result as a tidy table (the columns of its collection's ``to_frame``)."""
        return pd.DataFrame(self._rows(), columns=self.frame_columns())


class _Table(_Result):
    """A result that is one table (a row per measure, grid point, metric x context...)
    rather than a sequence of result objects: subclasses write ``to_frame()`` and
    ``to_dict(arrays=)``; ``get(*key, **match)`` is the single frame row as a dict,
    the positional ``key`` naming the columns of ``_get_keys``."""

    _get_keys: ClassVar[tuple] = ()

    def get(self, *key, **match) -> dict:
        if len(key) > len(self._get_keys):
            raise TypeError(f"get takes at most {len(self._get_keys)} positional keys "
                            f"({', '.join(self._get_keys)})")
        return frame_row(self.to_frame(), **dict(zip(self._get_keys, key)), **match)


@dataclass(frozen=True)
class _Collection(_HtmlView):
    """A sequence of results with tidy views.

    Subclasses set ``_item`` (the result class, whose ``frame_columns`` are
    the frame's) and, when results are keyed by another field than
    ``metric``, ``_key`` (e.g. ``"column"``).
    """

    results: tuple

    _item: ClassVar[type] = _Result
    _key: ClassVar[str] = "metric"

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)

    def __getitem__(self, key):
        return self.results[key]

    def get(self, name: str, **match):
        """The single result for ``name`` (its ``metric``, or the collection's key field)
        and any other field given (e.g. ``human=``, ``level=``; ``None`` matches any).
        A ``KeyError`` unless exactly one result matches."""
        match = {k: v for k, v in match.items() if v is not None}
        hits = [
            r
            for r in self.results
            if getattr(r, self._key) == name and all(getattr(r, k) == v for k, v in match.items())
        ]
        if len(hits) != 1:
            shown = ", ".join(f"{k}={v!r}" for k, v in {self._key: name, **match}.items())
            raise KeyError(f"{len(hits)} results match {shown}")
        return hits[0]

    def to_records(self, *, arrays: bool = False) -> list[dict]:
        """One dict per result (see the result class's ``to_dict``)."""
        return [r.to_dict(arrays=arrays) for r in self.results]

    def to_dict(self, *, arrays: bool = False) -> dict:
        """``{"results": [...]}``: the records of :meth:`to_records`."""
        return {"results": self.to_records(arrays=arrays)}

    def to_frame(self) -> pd.DataFrame:
        """Tidy table; its columns are listed in the class docstring."""
        rows = [row for r in self.results for row in r._rows()]
        return pd.DataFrame(rows, columns=self._item.frame_columns())
