"""The files the agents keep their secrets in beside their sessions (spec C-1, C-7).

A scan of a home walks the agents' folders (``~/.codex``, ``~/.gemini``…); each reader names,
as its module's ``CREDENTIALS``, the files its tool keeps keys and tokens in there. A scan
passes each over by its name and its folder's, never opening it (not even to learn it holds no
session), and counts none as a skipped file: they are no input of anyone's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePath


@dataclass(frozen=True)
class Credentials:
    """Where a tool keeps its secrets: ``files`` (each a path inside the tool's folder,
    ``/``-separated, a ``*`` matching any one name: ``credentials/*``) in a folder named one of
    ``folders``; or, for a file right in its folder, in any folder that holds one of ``marks``
    (the tool's database, which names the folder the tool's whatever it is called)."""

    folders: frozenset[str]
    files: frozenset[str]
    marks: frozenset[str] = frozenset()

    def holds(self, path: PurePath) -> bool:
        """Whether ``path`` is one of these files, told by names alone (but for
        :attr:`marks`, looked up beside it): never by opening it."""
        for pattern in self.files:
            inner = pattern.split("/")
            if len(path.parts) <= len(inner):
                continue
            tail = path.parts[-len(inner) :]
            if not all(fnmatchcase(name, part) for name, part in zip(tail, inner, strict=True)):
                continue
            folder = path.parents[len(inner) - 1]
            if folder.name in self.folders:
                return True
            if len(inner) == 1 and self.marks and _marked(folder, self.marks):
                return True
        return False


def _marked(folder: PurePath, marks: frozenset[str]) -> bool:
    return any(Path(folder, mark).exists() for mark in marks)


def is_credentials(path: PurePath, keepers: Iterable[Credentials]) -> bool:
    """Whether ``path`` is a file any of ``keepers`` keeps secrets in."""
    return any(keeper.holds(path) for keeper in keepers)


def named_like(keepers: Iterable[Credentials]) -> Callable[[str], bool]:
    """A test of a path's last two names that is False for every file none of ``keepers`` can
    hold, and True for the few that :func:`is_credentials` must then look at: a scan asks it of
    every file it walks, so it is a set lookup, not a pattern match per keeper."""
    names: set[str] = set()
    folders: set[str] = set()  # the folders a file of any name is kept in (``credentials/*``)
    for keeper in keepers:
        for pattern in keeper.files:
            *inner, last = pattern.split("/")
            if "*" in last or "?" in last or "[" in last:
                folders.add(inner[-1] if inner else "")
            else:
                names.add(last)
    if "" in folders:  # a wildcard right in a tool's folder: any name may be one
        return lambda path: True
    frozen_names, frozen_folders = frozenset(names), frozenset(folders)

    def test(path: str) -> bool:
        head, name = os.path.split(path)
        return name in frozen_names or os.path.basename(head) in frozen_folders

    return test
