"""Where turnfold keeps what it can compute again: the corpus index, the kept prices."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "INDEX_NAME", "cache_dir"]

#: Set it to a folder to keep the caches elsewhere (the tests point it at a temporary folder).
CACHE_ENV = "TURNFOLD_CACHE_DIR"
#: The corpus index's file in the cache folder (:mod:`turnfold.corpus.index`): a SQLite
#: database, which a scan of a folder holding it passes over (it changes with every scan).
INDEX_NAME = "corpus-index.sqlite"


def cache_dir() -> Path:
    """``$TURNFOLD_CACHE_DIR``, else the user's cache directory for turnfold."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    import platformdirs  # only here: it imports tempfile and shutil, which a load never needs

    return Path(platformdirs.user_cache_dir("turnfold"))
