"""Warnings attributed to the reader's own line (a cell, a script), not to turnfold's code.

A warning points at the frame that made it, or at a caller a fixed number of frames up, but
turnfold reaches the same check through many call chains (a scan walking a folder or taking a
list, a setting set directly or through ``traitlets.link``): the frame shown is found instead,
the first one outside the modules that are not the reader's.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

__all__ = ["is_library", "warn_at_caller"]


def is_library(module: str) -> bool:
    """Whether ``module`` is turnfold's, or a widget library's that calls into it."""
    return module.partition(".")[0] in ("turnfold", "traitlets", "ipywidgets")


def warn_at_caller(
    message: str,
    category: type[Warning] = UserWarning,
    internal: Callable[[str], bool] = is_library,
) -> None:
    """Warn, attributed to the first frame (past the one calling this) whose module is not
    ``internal``."""
    from turnfold.model import printable_lines

    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and internal(frame.f_globals.get("__name__", "")):
        level, frame = level + 1, frame.f_back
    # The paths and names a warning holds are anyone's (a downloaded folder's file names): a
    # terminal shows their escape sequences and bidi overrides, never obeys them (spec X-1).
    warnings.warn(printable_lines(message), category, stacklevel=level)
