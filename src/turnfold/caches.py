"""Where turnfold keeps what it can compute again: the corpus index, the kept prices."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

__all__ = ["CACHE_ENV", "INDEX_NAME", "cache_dir", "code_version"]

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


@cache
def code_version() -> str:
    """What a cached result was computed by: turnfold's version, and for a development version
    (``.dev``: a checkout, or an install from the repository between releases) a digest of its
    modules' sizes and times too, so a reader changed since a row was kept reads it again.

    A release's modules never change under one version; a development version's do at every
    commit, and a corpus index keyed by the version alone kept the rows the old readers made.
    """
    from turnfold import __version__

    if ".dev" not in __version__:
        return __version__
    package = os.path.dirname(__file__)
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(package):  # a millisecond or two: paid once a process
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                info = os.stat(path)
                named = os.path.relpath(path, package)
                digest.update(f"{named}:{info.st_size}:{info.st_mtime_ns};".encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"
