"""The files the agents keep their secrets in beside their sessions (spec C-1, C-7).

A scan of a home walks the agents' folders (``~/.codex``, ``~/.gemini``…); each reader names,
as its module's ``CREDENTIALS``, the files its tool keeps keys and tokens in there. A scan
passes each over by its name and its folder's, never opening it (not even to learn it holds no
session), and counts none as a skipped file: they are no input of anyone's.
"""

from __future__ import annotations

from collections.abc import Iterable
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
