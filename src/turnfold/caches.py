"""Where turnfold keeps what it can compute again: the corpus index, the kept prices."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_dir"]

#: Set it to a folder to keep the caches elsewhere (the tests point it at a temporary folder).
CACHE_ENV = "TURNFOLD_CACHE_DIR"


def cache_dir() -> Path:
    """``$TURNFOLD_CACHE_DIR``, else the user's cache directory for turnfold."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    import platformdirs  # only here: it imports tempfile and shutil, which a load never needs

    return Path(platformdirs.user_cache_dir("turnfold"))
