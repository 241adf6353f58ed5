"""The model of a confirmatory factor analysis: which indicators load on which factor, and
its lavaan-like syntax (``F =~ a + b + c``, ``F1 ~~ 0*F2``), parsed and validated.
:func:`metaeval.validity.cfa` fits it (numerics in :mod:`metaeval.stats.cfa`);
``metaeval.validity`` re-exports :class:`CFAModel` and :func:`parse_model`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ParameterError

__all__ = ["CFAModel", "parse_model"]


@dataclass(frozen=True)
class CFAModel:
    """A confirmatory factor model: which indicators load on which factor.

    Attributes
    ----------
    factors : tuple of str
    loadings : tuple of (str, tuple of str)
        Each factor with its indicators (an indicator may load on several
        factors: a cross-loading).
    fixed_correlations : tuple of (str, str, float)
        Factor correlations fixed to a value (``F1 ~~ 0*F2``); the others are
        free.  Factor variances are fixed to 1 (lavaan's ``std.lv = TRUE``).
    """

    factors: tuple
    loadings: tuple
    fixed_correlations: tuple = ()

    @property
    def indicators(self):
        """Indicators in order of first appearance."""
        return tuple(dict.fromkeys(i for _, ind in self.loadings for i in ind))

    def to_lavaan(self) -> str:
        """The model in lavaan syntax (indicators named as given)."""
        lines = [f"{f} =~ {' + '.join(ind)}" for f, ind in self.loadings]
        lines += [f"{a} ~~ {v!r}*{b}" for a, b, v in self.fixed_correlations]
        return "\n".join(lines)


_LINE_OPS = ("=~", "~~")


def parse_model(model) -> CFAModel:
    """Parse a CFA model from a dict or lavaan-like syntax.

    Accepted forms:

    * ``{"coherence": ["expert1_coherence", "expert2_coherence", ...], ...}``
      (factor -> indicators; a string value ``"a + b + c"`` also works);
    * a string with one statement per line (or separated by ``;``):
      ``F =~ a + b + c`` (loadings) and ``F1 ~~ 0*F2`` (a fixed factor
      correlation; ``F1 ~~ F2`` is free anyway).  ``#`` starts a comment.
      Other lavaan operators (regressions, equality labels, fixed loadings)
      are not supported and raise :class:`~metaeval.errors.ParameterError`.

    Examples
    --------
    >>> from metaeval.validity import parse_model
    >>> m = parse_model("F =~ a + b + c\\nG =~ d + e + f\\nF ~~ 0*G")
    >>> m.factors, m.indicators, m.fixed_correlations
    (('F', 'G'), ('a', 'b', 'c', 'd', 'e', 'f'), (('F', 'G', 0.0),))
    """
    if isinstance(model, CFAModel):
        return model
    loads: dict[str, list[str]] = {}
    fixed: list[tuple[str, str, float]] = []
    if isinstance(model, dict):
        if not model:
            raise ParameterError("model is empty: give at least one factor with indicators")
        for f, ind in model.items():
            if not isinstance(f, str) or not f:
                raise ParameterError(f"factor names must be non-empty strings, got {f!r}")
            if isinstance(ind, str):
                ind = [t.strip() for t in ind.split("+")]
            try:
                ind = list(ind)
            except TypeError:
                raise ParameterError(
                    f"model[{f!r}] must be a list of indicator names, got {ind!r}"
                ) from None
            if not ind or not all(isinstance(i, str) and i for i in ind):
                raise ParameterError(f"model[{f!r}] must list indicator names (strings)")
            loads[f] = ind
    elif isinstance(model, str):
        stmts = [s.split("#", 1)[0].strip() for s in re.split(r"[;\n]", model)]
        for s in stmts:
            if not s:
                continue
            op = next((o for o in _LINE_OPS if o in s), None)
            if op is None or s.count(op) != 1:
                raise ParameterError(
                    f"cannot parse model statement {s!r}: supported are 'F =~ a + b + c' "
                    "(loadings) and 'F1 ~~ 0*F2' (fixed factor correlation)"
                )
            lhs, rhs = (t.strip() for t in s.split(op))
            if op == "=~":
                terms = [t.strip() for t in rhs.split("+")]
                if not lhs or not all(terms) or any("*" in t for t in terms):
                    raise ParameterError(
                        f"cannot parse {s!r}: loadings are 'F =~ a + b + c' with plain "
                        "indicator names (fixed or labelled loadings are not supported)"
                    )
                loads.setdefault(lhs, []).extend(terms)
            else:
                for term in (t.strip() for t in rhs.split("+")):
                    m = re.fullmatch(r"(?:([-+0-9.eE]+)\s*\*\s*)?([^\s*]+)", term)
                    if not lhs or m is None:
                        raise ParameterError(f"cannot parse {s!r}: use 'F1 ~~ 0*F2 + 0*F3'")
                    if m.group(1) is not None:
                        try:
                            v = float(m.group(1))
                        except ValueError:
                            raise ParameterError(f"cannot parse the value in {s!r}") from None
                        fixed.append((lhs, m.group(2), v))
                    elif lhs == m.group(2):
                        raise ParameterError(
                            f"{s!r}: factor variances are fixed to 1 (std.lv = TRUE) and "
                            "residual variances are free; variance statements are not supported"
                        )
    else:
        raise ParameterError(
            "model must be a dict {factor: [indicators]} or lavaan-like syntax "
            f"('F =~ a + b + c'), got {type(model).__name__}"
        )
    if not loads:
        raise ParameterError("model has no '=~' statement: no factor is defined")
    for f, ind in loads.items():
        dup = sorted({i for i in ind if ind.count(i) > 1})
        if dup:
            raise ParameterError(f"factor {f!r} lists indicator(s) {dup} more than once")
    factors = tuple(loads)
    clash = sorted(set(factors) & {i for ind in loads.values() for i in ind})
    if clash:
        raise ParameterError(
            f"{clash} are used both as factors and as indicators; higher-order factors are "
            "not supported"
        )
    seen = set()
    fixed_out = []
    for a, b, v in fixed:
        for x in (a, b):
            if x not in loads:
                raise ParameterError(
                    f"'{a} ~~ {v}*{b}': {x!r} is not a factor of the model; factors: "
                    f"{', '.join(factors)} (only factor correlations can be fixed)"
                )
        if a == b:
            raise ParameterError(f"'{a} ~~ {v}*{b}': factor variances are fixed to 1")
        if not -1.0 <= v <= 1.0:
            raise ParameterError(f"'{a} ~~ {v}*{b}': a factor correlation must be in [-1, 1]")
        key = frozenset((a, b))
        if key in seen:
            raise ParameterError(f"the correlation of {a!r} and {b!r} is fixed twice")
        seen.add(key)
        fixed_out.append((a, b, float(v)))
    return CFAModel(factors, tuple((f, tuple(i)) for f, i in loads.items()), tuple(fixed_out))
