"""Where a warning should point: the first frame outside metaeval.

Analyses warn about the user's call (``SmallSampleWarning`` for a call on 7
systems, ...).  A fixed ``stacklevel`` breaks as soon as a decorator (such as
:func:`metaeval.data.accepts_frames`) or a helper adds a frame, and
the warning then names a metaeval file.  :func:`user_stacklevel` counts the
frames from its caller up to the first one whose file is outside the
metaeval package (pandas' ``find_stack_level`` does the same for pandas).
"""

from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn` that points at the first non-metaeval frame.

    Call it in the ``warnings.warn(...)`` call itself:
    ``warnings.warn(msg, Category, stacklevel=user_stacklevel())``.

    Returns
    -------
    int
        At least 1 (the caller of ``warnings.warn`` when the whole stack is metaeval's).
    """
    frame = sys._getframe(1)  # the function calling warnings.warn
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1
