"""The files the agents keep their secrets in beside their sessions (spec C-1, C-7).

A scan of a home walks the agents' folders (``~/.codex``, ``~/.gemini``…); each reader names,
as its module's ``CREDENTIALS``, the files its tool keeps keys and tokens in there. A scan
passes each over by its name and its folder's, never opening it (not even to learn it holds no
session), and counts none as a skipped file: they are no input of anyone's. One the user names
(``scan("~/.codex/auth.json")``, ``load(...)``) is not opened either, and the scan warns, the
load raises, saying so (:func:`keeper_of`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path, PurePath

#: The readers whose tools keep secrets beside their sessions, each naming them as its
#: module's ``CREDENTIALS``: imported when a file may be one (:func:`keeper_of`).
READERS: tuple[str, ...] = (
    "turnfold.formats.claude_code", "turnfold.formats.codex", "turnfold.formats.gemini",
    "turnfold.formats.qwen", "turnfold.formats.agents.copilot", "turnfold.formats.agents.cline",
    "turnfold.formats.agents.kimi", "turnfold.formats.agents.opencode",
    "turnfold.formats.agents.crush", "turnfold.formats.harnesses.openhands",
    "turnfold.formats.cursor", "turnfold.formats.agents.continue_",
)  # fmt: skip
#: The last names of every reader's credential files, and the folders whose every file is one
#: (:func:`named_like` of them all; a test keeps them equal): a load of a file of any other
#: name imports none of :data:`READERS` to learn it is no credentials (issue 19).
LIKELY_NAMES = frozenset({
    ".claude.json", ".config.json", ".continuerc.json", ".credentials.json", ".env",
    ".jwt_secret", ".mcp.json", "a2a-oauth-tokens.json", "agent_settings.json", "api_key.txt",
    "auth.json", "cline_mcp_settings.json", "config.js", "config.json", "config.toml",
    "config.ts", "config.yaml", "connectors.db", "crush.json", "extension-secrets-v1.json",
    "gemini-credentials.json", "globalContext.json", "globalState.json", "google_accounts.json",
    "lsp-config.json", "mcp-auth.json", "mcp-config", "mcp-config.json",
    "mcp-oauth-tokens-v2.json", "mcp-oauth-tokens.json", "mcp.json", "oauth_creds.json",
    "providers.json", "secrets.json", "settings.json", "settings.json.migrated",
    "settings.local.json", "state.vscdb", "state.vscdb.backup",
})  # fmt: skip
LIKELY_FOLDERS = frozenset({
    "agents", "assistants", "backups", "configs", "context", "credentials", "data", "hooks",
    "mcp-oauth-config", "mcp-secrets", "mcpServers", "models",
})  # fmt: skip


@dataclass(frozen=True)
class Credentials:
    """Where a tool keeps its secrets: ``files`` (each a path inside the tool's folder,
    ``/``-separated, a ``*`` matching any one name: ``credentials/*``) in a folder named one of
    ``folders``, or in the folder one of the environment's ``variables`` names (the tool's
    folder moved, ``$CONTINUE_GLOBAL_DIR``, under any name); or, for a file right in its
    folder, in any folder that holds one of ``marks`` (the tool's database, which names the
    folder the tool's whatever it is called); or, named one of ``anywhere``, in any folder at
    all (a project's ``.mcp.json``, whose place no folder's name or variable tells)."""

    folders: frozenset[str]
    files: frozenset[str]
    marks: frozenset[str] = frozenset()
    variables: frozenset[str] = frozenset()
    anywhere: frozenset[str] = frozenset()

    def holds(self, path: PurePath) -> bool:
        """Whether ``path`` is one of these files, told by names alone (but for
        :attr:`marks`, looked up beside it): never by opening it."""
        if path.name in self.anywhere:
            return True
        for pattern in self.files:
            inner = pattern.split("/")
            if len(path.parts) <= len(inner):
                continue
            tail = path.parts[-len(inner) :]
            if not all(fnmatchcase(name, part) for name, part in zip(tail, inner, strict=True)):
                continue
            folder = path.parents[len(inner) - 1]
            if folder.name in self.folders or _named_by(folder, self.variables):
                return True
            if len(inner) == 1 and self.marks and _marked(folder, self.marks):
                return True
        return False


def _marked(folder: PurePath, marks: frozenset[str]) -> bool:
    return any(Path(folder, mark).exists() for mark in marks)


def _named_by(folder: PurePath, variables: frozenset[str]) -> bool:
    """Whether one of ``variables`` names ``folder`` now: read at each call, as the tool reads
    it when it starts, so a scan in a changed environment goes by the changed value. A relative
    value is taken from the working folder, as Continue takes it (``path.resolve``)."""
    for variable in variables:
        value = os.environ.get(variable)
        if value and os.path.realpath(os.path.expanduser(value)) == os.path.realpath(folder):
            return True
    return False


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
        names.update(keeper.anywhere)
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


@cache
def keepers() -> tuple[tuple[str, Credentials], ...]:
    """Every reader's credentials (:data:`READERS`), with the name of its format."""
    found = []
    for name in READERS:
        __import__(name)
        module = sys.modules[name]
        found.append((str(module.NAME), module.CREDENTIALS))
    return tuple(found)


def keeper_of(path: str | os.PathLike[str]) -> str | None:
    """The format whose tool keeps its secrets in the file at ``path`` (``codex`` for
    ``~/.codex/auth.json``, ``~`` expanded), told without opening it; None for any other
    file."""
    where = Path(os.path.abspath(path))
    if where.name not in LIKELY_NAMES and where.parent.name not in LIKELY_FOLDERS:
        return None
    return next((name for name, keeper in keepers() if keeper.holds(where)), None)


def never_opened(keeper: str) -> str:
    """Why a credential file the user named is not read, as a scan's warning and a load's
    error say it (after the file's name)."""
    return f"{keeper}'s credentials (keys, tokens), never opened"
