"""Where the tests find the data and oracles kept outside the repository.

Real-data files (SummEval's raw release, CEASR, the ranking runs, ...) and
the mt-metrics-eval source used as an oracle live in a folder ``shared``
beside the checkout (``../shared``, as CI lays it out), not in the
repository.  ``$METAEVAL_SHARED`` overrides the location.  A git worktree
kept in ``wt/<name>`` beside the main checkout also finds ``../../shared``.

Tests that need one of these files call :func:`need` (or use
:func:`needs`), so they skip with a reason naming the missing path instead
of failing, and never silently look in a machine-specific absolute path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve()


def _locate() -> Path:
    env = os.environ.get("METAEVAL_SHARED")
    if env:
        return Path(env)
    beside = _HERE.parents[1].parent / "shared"  # ../shared beside the checkout
    worktree = _HERE.parents[1].parent.parent / "shared"  # a worktree in wt/<name>
    for cand in (beside, worktree):
        if cand.is_dir():
            return cand
    return beside


#: The shared folder (may not exist: tests then skip).
SHARED = _locate()


def need(path: Path, what: str = "") -> Path:
    """Return ``path`` or skip the calling test, naming the missing path."""
    if not Path(path).exists():
        label = f"{what} " if what else ""
        pytest.skip(f"{label}not found at {path} (../shared beside the checkout, "
                    "or set METAEVAL_SHARED)")
    return Path(path)


def needs(path: Path, what: str = ""):
    """A ``skipif`` mark for tests that need ``path``."""
    label = f"{what} " if what else ""
    return pytest.mark.skipif(not Path(path).exists(),
                              reason=f"{label}not found at {path} (../shared beside the "
                                     "checkout, or set METAEVAL_SHARED)")
