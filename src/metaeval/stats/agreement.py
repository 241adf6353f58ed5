"""Rater agreement on arrays: the rating design of an R x units table.

Arrays in, arrays out; :mod:`metaeval.reliability` (``agreement``, ``stability``) and
:mod:`metaeval.validity` (``mtmm``, ``cfa``, which take each rater as one method) call it.
"""

from __future__ import annotations

import numpy as np


def rater_design(data, raters="same"):
    """The rating design of an ``(R, units)`` table with NaN for a missing rating.

    ``"slots"`` when ``raters == "slots"`` (declared: rater1..raterK are different people
    in different cells); otherwise ``"rotating"`` when fewer than two units are rated by all
    R raters while at least two units have two or more ratings (each unit rated by its own
    subset of the raters), else ``"same"``.
    """
    if raters == "slots":
        return "slots"
    present = np.isfinite(data)
    if int(present.all(0).sum()) < 2 and int((present.sum(0) >= 2).sum()) >= 2:
        return "rotating"
    return "same"
