"""DataFrames at the front door: one mechanism for every analysis.

Every public analysis takes a :class:`~metaeval.Dataset`.  The decorator
:func:`accepts_frames` lets it take a pandas DataFrame in long form too (one
row per system x input [x rater | x run]); the frame is turned into a
Dataset by :meth:`Dataset.from_frame` before the analysis runs, so the
result is the same as with the Dataset built by hand.

How the frame is read
---------------------
* ``frame=``: a keyword every decorated function gains; a dict of
  :meth:`Dataset.from_frame` keyword arguments (``system``, ``input``,
  ``human``, ``metrics``, ``rater``, ``run``, ``raters``, ``form``, ``name``,
  ``texts``, ``contexts``, ``provenance``).  They travel in one dict so
  that they never clash with the analysis's own options (``consistency``
  has its own ``run=``, most analyses their own ``metrics=``).  Default:
  ``{}``, i.e. columns named ``system`` and ``input``.
* Human columns: ``frame["human"]`` when given; otherwise the analysis's own
  human argument (``human=`` of :func:`~metaeval.correlate`,
  :func:`~metaeval.ks_score`, ...; ``columns=`` of
  :func:`~metaeval.agreement`; ``criteria=`` of
  :func:`~metaeval.concurrent_validity`, ...) when it names columns;
  otherwise none (``human=[]``: every numeric column is a metric).
* Anything else than a Dataset, a DataFrame, or a type the analysis accepts
  on its own (a mapping of score arrays, for some) is an
  :class:`~metaeval.errors.InputTypeError` (a ``TypeError``) naming the
  accepted types.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from metaeval._vocab import as_list, human_columns
from metaeval.errors import DataError, InputTypeError, ParameterError

from ._dataset import Dataset

#: The keyword arguments of :meth:`Dataset.from_frame` that ``frame=`` may hold.
FRAME_KEYS = (
    "system",
    "input",
    "human",
    "metrics",
    "rater",
    "run",
    "raters",
    "form",
    "name",
    "texts",
    "contexts",
    "provenance",
    "system_scores",
    "bounds",
    "missing_values",
)

_FRAME_DOC = """\
frame : dict, optional
    Only when a pandas DataFrame is given instead of a Dataset: keyword
    arguments of :meth:`metaeval.Dataset.from_frame` (``system``,
    ``input``, ``human``, ``rater``, ``run``, ``metrics``, ...) used to
    build the Dataset.  Human columns: ``frame["human"]``, else the
    columns this function's human argument names, else none (see
    "DataFrames in" in docs/data.md).
"""


def _is_dataset(obj: Any) -> bool:
    # duck-typed, as the analyses are: subclasses and proxies of Dataset work
    return isinstance(obj, Dataset) or all(
        hasattr(obj, a) for a in ("ratings", "scores", "columns", "human", "metrics")
    )


def _names(value: Any) -> list[str] | None:
    """Column names in an analysis's human argument (``"col@rater"`` -> ``col``), or None."""
    if isinstance(value, str):
        return [value.split("@", 1)[0]]
    if isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
        return list(dict.fromkeys(v.split("@", 1)[0] for v in value))
    return None


def check_frame_options(frame: Any) -> dict:
    """Validate ``frame=`` (a dict of :meth:`Dataset.from_frame` keyword arguments)."""
    if frame is None:
        return {}
    if not isinstance(frame, Mapping):
        raise ParameterError(
            f"frame= must be a dict of Dataset.from_frame keyword arguments, got "
            f"{type(frame).__name__}"
        )
    unknown = [k for k in frame if k not in FRAME_KEYS]
    if unknown:
        raise ParameterError(
            f"frame= has unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
            f"{', '.join(FRAME_KEYS)}"
        )
    return dict(frame)


def as_dataset(
    obj: Any,
    *,
    human: Any = None,
    frame: Mapping | None = None,
    what: str = "dataset",
    accepts: tuple = (),
    accepts_text: str = "",
    present_only: bool = False,
) -> Any:
    """``obj`` as a :class:`Dataset`: a Dataset as is, a DataFrame through ``from_frame``.

    Parameters
    ----------
    obj : Dataset, DataFrame or one of ``accepts``
        The data.  Objects of a type in ``accepts`` are returned unchanged
        (the analysis handles them).
    human : str or list of str, optional
        Human columns of a DataFrame when ``frame`` does not name them
        (``"col@rater"`` names count as ``col``).  Default: none.
    frame : dict, optional
        Keyword arguments of :meth:`Dataset.from_frame`.
    what : str
        The parameter name shown in errors.
    accepts, accepts_text : tuple, str
        Further accepted types (or predicates ``f(obj) -> bool``) and their
        description for the error.
    present_only : bool
        Take only the ``human`` columns the frame has (a second data
        argument such as perturbed scores); otherwise a missing one is the
        :meth:`Dataset.from_frame` error naming it.

    Returns
    -------
    Dataset, or ``obj`` unchanged

    Raises
    ------
    InputTypeError
        ``obj`` is of another type.
    ParameterError
        ``frame`` is not a dict of known keys.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": ["A", "A", "B", "B"], "input": ["x", "y", "x", "y"],
    ...                    "h": [1, 2, 3, 4], "m": [0.1, 0.2, 0.3, 0.4]})
    >>> as_dataset(df, human="h").human
    ('h',)
    """
    if _is_dataset(obj):
        if frame:
            raise ParameterError(
                f"frame= applies to a DataFrame only; `{what}` is already a Dataset"
            )
        return obj
    if isinstance(obj, pd.DataFrame):
        kwargs = check_frame_options(frame)
        if "human" not in kwargs and "raters" not in kwargs:
            names = _names(human) or []
            if present_only:  # a perturbed-scores frame holds metrics only
                names = [h for h in names if h in obj.columns]
            kwargs["human"] = names
        return Dataset.from_frame(obj, **kwargs)
    if any(isinstance(obj, a) if isinstance(a, type) else a(obj) for a in accepts):
        return obj
    allowed = "a metaeval Dataset or a pandas DataFrame in long form (see Dataset.from_frame)"
    if accepts_text:
        allowed = allowed.replace(" or a pandas", ", a pandas") + f", or {accepts_text}"
    raise InputTypeError(f"`{what}` must be {allowed}; got {type(obj).__name__}")


def accepts_frames(
    *params: str,
    human: str | None = None,
    accepts: tuple = (),
    accepts_text: str = "",
):
    """Decorator: let an analysis take DataFrames for its dataset parameter(s).

    Parameters
    ----------
    *params : str
        The dataset parameters (default: the first parameter).
    human : str, optional
        The analysis's parameter whose value names the human columns (when
        it is a column name or a list of them).
    accepts, accepts_text
        Further types (or predicates) the analysis accepts for its data
        (e.g. ``Mapping``) and their description in the error message.

    Notes
    -----
    The wrapped function gains a keyword-only ``frame=`` parameter (see
    :func:`as_dataset`); its signature and docstring say so.  A ``None``
    passed to a dataset parameter that defaults to ``None`` is left alone.
    """

    def decorate(func):
        sig = inspect.signature(func)
        names = params or (next(iter(sig.parameters)),)
        for p in names + ((human,) if human else ()):
            if p not in sig.parameters:
                raise TypeError(f"{func.__name__} has no parameter {p!r}")  # pragma: no cover
        defaults = {p: sig.parameters[p].default for p in names}

        @functools.wraps(func)
        def wrapper(*args, frame=None, **kwargs):
            bound = sig.bind(*args, **kwargs)
            hv = bound.arguments.get(human) if human else None
            given = [p for p in names if p in bound.arguments]
            if frame is not None and not any(
                isinstance(bound.arguments[p], pd.DataFrame) for p in given
            ):
                raise ParameterError(
                    f"frame= applies only when `{names[0]}` is a pandas DataFrame"
                )
            for p in given:
                value = bound.arguments[p]
                if value is None and defaults[p] is None:
                    continue
                bound.arguments[p] = as_dataset(
                    value,
                    human=hv,
                    frame=frame if isinstance(value, pd.DataFrame) else None,
                    what=p,
                    accepts=accepts,
                    accepts_text=accepts_text,
                    present_only=p != names[0],
                )
            return func(*bound.args, **bound.kwargs)

        extra = inspect.Parameter("frame", inspect.Parameter.KEYWORD_ONLY, default=None)
        ps = list(sig.parameters.values())
        at = next((i for i, q in enumerate(ps) if q.kind is inspect.Parameter.VAR_KEYWORD), len(ps))
        wrapper.__signature__ = sig.replace(parameters=ps[:at] + [extra] + ps[at:])
        wrapper.__doc__ = _add_frame_doc(func.__doc__)
        wrapper.accepts_frames = names
        return wrapper

    return decorate


def _add_frame_doc(doc: str | None) -> str | None:
    """Insert the ``frame`` parameter at the end of a numpydoc Parameters section."""
    if not doc or "frame : dict" in doc:
        return doc
    lines = doc.split("\n")
    try:
        start = next(i for i, s in enumerate(lines) if s.strip() == "Parameters")
    except StopIteration:
        return doc
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    end = len(lines)
    for i in range(start + 2, len(lines) - 1):
        nxt = lines[i + 1].strip()
        if lines[i].strip() and nxt and set(nxt) == {"-"} and lines[i].startswith(indent) \
                and not lines[i][len(indent):].startswith(" "):
            end = i
            break
    while end > start and not lines[end - 1].strip():
        end -= 1
    block = [indent + s if s else s for s in _FRAME_DOC.rstrip("\n").split("\n")]
    return "\n".join(lines[:end] + block + lines[end:])


def dataset_from(data, human, *, what: str):
    """``(Dataset, human columns)`` from a Dataset or a mapping of score arrays.

    The text-level diagnostics take plain ``{column: array}`` mappings too
    (a 1-D array is one system); ``human`` then must name the human columns.
    """
    if isinstance(data, Dataset):
        return data, human_columns(data, human, what=what)
    if isinstance(data, Mapping):
        if human is None:
            raise ParameterError(
                f"{what}: with a mapping of score arrays, name the human column(s) with human="
            )
        humans = as_list(human, "human")
        missing = [h for h in humans if h not in data]
        if missing:
            raise DataError(
                f"human column(s) {', '.join(map(repr, missing))} not in the data; "
                f"columns: {', '.join(map(str, data))}"
            )
        arrays = {}
        for k, v in data.items():
            a = np.asarray(v, dtype=float)
            arrays[k] = a[None, :] if a.ndim == 1 else a
        return Dataset.from_arrays(arrays, human=humans), humans
    raise ParameterError(
        f"{what}: data must be a metaeval Dataset or a mapping of column name to score array, "
        f"got {type(data).__name__}"
    )
