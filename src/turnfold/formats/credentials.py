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
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache, cached_property
from pathlib import Path, PurePath

#: The readers whose tools keep secrets beside their sessions, each naming them as its
#: module's ``CREDENTIALS``: imported when a file may be one (:func:`keeper_of`).
READERS: tuple[str, ...] = (
    "turnfold.formats.claude_code", "turnfold.formats.codex", "turnfold.formats.gemini",
    "turnfold.formats.qwen", "turnfold.formats.agents.copilot", "turnfold.formats.agents.cline",
    "turnfold.formats.agents.kimi", "turnfold.formats.agents.kimi_cli",
    "turnfold.formats.agents.opencode",
    "turnfold.formats.agents.crush", "turnfold.formats.harnesses.openhands",
    "turnfold.formats.cursor", "turnfold.formats.agents.continue_",
)  # fmt: skip
#: The last names of every reader's credential files, and the folders whose every file is one
#: (:func:`named_like` of them all; a test keeps them equal): a load of a file of any other
#: name imports none of :data:`READERS` to learn it is no credentials (issue 19).
LIKELY_NAMES = frozenset({
    ".claude.json", ".config.json", ".continuerc.json", ".credentials.json", ".env",
    ".jwt_secret", ".mcp.json", "a2a-oauth-tokens.json", "agent_settings.json", "api_key.txt",
    "auth.json", "cline_mcp_settings.json", "config", "config.js", "config.json",
    "config.json.bak", "config.migrated-from-kimi-cli.toml", "config.toml", "config.ts",
    "config.yaml", "connectors.db", "crush.json", "extension-secrets-v1.json",
    "gemini-credentials.json", "globalContext.json", "globalState.json", "google_accounts.json",
    "gui.toml", "lsp-config", "lsp-config.json", "managed-mcp.json", "managed-settings.json",
    "managed_config.toml", "mcp-auth.json", "mcp-config", "mcp-config.json",
    "mcp-oauth-tokens-v2.json", "mcp-oauth-tokens.json", "mcp.json",
    "mcp.migrated-from-kimi-cli.json", "oauth_creds.json", "permissions-config",
    "permissions-config.json", "pipe.key", "providers.json", "secrets.json", "server.token",
    "settings.json", "settings.json.migrated", "settings.local.json", "state.vscdb",
    "state.vscdb.backup",
})  # fmt: skip
LIKELY_FOLDERS = frozenset({
    ".configs", "agents", "assistants", "backups", "configs", "context", "credentials", "data",
    "hooks", "ide", "managed-settings.d", "mcp-oauth", "mcp-oauth-config", "mcp-secrets",
    "mcpServers", "models", "plugins",
})  # fmt: skip
#: How the names of every reader's :attr:`Credentials.endings` end (a test keeps them equal):
#: a load's file whose name ends so is looked at as one of :data:`LIKELY_NAMES` is.
LIKELY_ENDINGS = frozenset({".continuerc.json"})
_LIKELY_ENDINGS = tuple(sorted(LIKELY_ENDINGS))  # ``str.endswith`` takes a tuple


#: The environment's variables that name one credential file each, by its path, whatever its
#: name (every reader's :attr:`Credentials.file_variables`; a test keeps them equal), looked up
#: when a load's file has none of :data:`LIKELY_NAMES`.
LIKELY_FILE_VARIABLES = frozenset({
    "CLINE_CONNECTORS_DB_PATH", "CLINE_CONNECTOR_SETTINGS_PATH", "CLINE_MCP_SETTINGS_PATH",
    "CLINE_PROVIDER_SETTINGS_PATH",
})  # fmt: skip
#: The folders whose files at any depth are credentials (``models/**``): a test keeps them
#: equal to the readers' patterns.
LIKELY_DEEP_FOLDERS = frozenset({
    ".configs", "agents", "assistants", "configs", "context", "credentials", "data",
    "mcp-oauth", "mcpServers", "models", "plugins",
})  # fmt: skip
#: Whether the tools run on Windows here, where Node's ``homedir()`` is ``%USERPROFILE%``
#: (:func:`home_folder`); a module constant so the Windows logic is tested anywhere.
WINDOWS = sys.platform == "win32"

_Pattern = tuple[str, ...]


@dataclass(frozen=True)
class Credentials:
    """Where a tool keeps its secrets: ``files`` (each a path inside the tool's folder,
    ``/``-separated, a ``*`` matching any one name: ``credentials/*``; a last ``**`` any file
    at any depth under the folder before it, ``models/**``) in a folder named one of
    ``folders`` (where the tool puts it, ``parents``, when any project's folder may have its
    name), or in the folder one of the environment's ``variables`` names (the tool's
    folder moved, ``$CONTINUE_GLOBAL_DIR``, under any name); or, for a file right in its
    folder, in any folder that holds one of ``marks`` (a name, or a pattern of names: the
    tool's database, which names the folder the tool's whatever it is called); or, its path
    ending as one of ``anywhere`` (a
    name, or ``/``-separated last names, ``*`` any one), in any folder at all (a project's
    ``.mcp.json``, whose place no folder's name or variable tells; ``etc/codex/config.toml``;
    a name alone with a wildcard, ``gemini-client-error-*.json``, by its name);
    or, its name ending as one of ``endings``, in any folder too (Continue reads every
    ``<name>.continuerc.json`` of a workspace by the end of its name); or one of ``homes``
    right in the user's home folder as the tool sees it (:func:`home_folder`); or the file one
    of ``file_variables`` names, whatever its name. The copy an interrupted atomic write left of
    any of these (``config.toml.tmp.<pid>.<hex>``: :func:`replaced_names`) is one of these too:
    it holds what the file holds."""

    folders: frozenset[str]
    files: frozenset[str]
    marks: frozenset[str] = frozenset()
    variables: frozenset[str] = frozenset()
    anywhere: frozenset[str] = frozenset()
    homes: frozenset[str] = frozenset()
    file_variables: frozenset[str] = frozenset()
    endings: frozenset[str] = frozenset()
    #: Whether an atomic write's copy (:func:`replaced_names`) of any file at any depth in the
    #: tool's folder is one of these, whatever file it replaces, and every file of a folder
    #: written whole and moved into place there (:func:`is_temporary_folder`): the tool's own,
    #: as the folder holds it. A copy of one of :attr:`files` is one of these anyway, in any
    #: keeper.
    temporaries: bool = False
    #: Whether a copy that names no file (Rust's ``tempfile``: ``.tmp`` and six random
    #: characters), right in the tool's folder, is one of these: the tool writes its secrets
    #: there through such copies, and which file one was to replace no name tells.
    nameless_copies: bool = False
    #: Where a folder named one of :attr:`folders` must lie to be the tool's, when any
    #: project's folder may have that name (``opencode``, ``kilo``): right in a folder whose
    #: path ends with one of these (``/``-separated, ``.local/share``), or right in the folder
    #: one of :attr:`parent_variables` names, set to an absolute path (``$XDG_DATA_HOME``).
    #: Neither given: a folder of that name anywhere is the tool's.
    parents: frozenset[str] = frozenset()
    parent_variables: frozenset[str] = frozenset()

    @cached_property
    def _index(self) -> _Index:
        return _Index.of(self)

    @cached_property
    def _parent_tails(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(parent.split("/")) for parent in sorted(self.parents))

    def holds(self, path: PurePath) -> bool:
        """Whether ``path`` is one of these files, told by names alone (but for
        :attr:`marks`, looked up beside it, and the variables' folders, resolved): never by
        opening it. Only the patterns that can match ``path``'s last two names are tried, and
        the deep ones of a folder among its parents (a scan asks it of every file of a
        ``data/`` folder). An atomic write's copy is one of these when the file it replaces
        is, or, of a keeper of :attr:`temporaries`, when it lies in the tool's folder, as is
        each file of a folder moved whole there (:func:`is_temporary_folder`)."""
        if self._holds(path):
            return True
        replaced = replaced_names(path.name)
        if any(self._holds(path.with_name(name)) for name in replaced):
            return True
        nameless = self.nameless_copies and _RUST_TEMPORARY.fullmatch(path.name) is not None
        if nameless and self.is_folder(path.parent):
            return True
        return self.temporaries and self._in_copy(path)

    def is_folder(self, folder: PurePath) -> bool:
        """Whether ``folder`` is the tool's: named one of :attr:`folders` where the tool puts
        it (:attr:`parents`), or the folder one of :attr:`variables` names."""
        if folder.name in self.folders and self._placed(folder):
            return True
        return _named_by(folder, self.variables)

    def _placed(self, folder: PurePath) -> bool:
        """Whether ``folder`` lies where the tool puts its folder (:attr:`parents`)."""
        if not self.parents and not self.parent_variables:
            return True
        parent = PurePath(os.path.abspath(folder)).parent
        if any(parent.parts[-len(tail) :] == tail for tail in self._parent_tails):
            return True
        return any(
            os.path.isabs(os.environ.get(variable, ""))
            and os.path.realpath(os.environ[variable]) == os.path.realpath(parent)
            for variable in self.parent_variables
        )

    def _in_copy(self, path: PurePath) -> bool:
        """Whether ``path`` is an atomic write's copy (:func:`is_temporary`), or lies in a
        folder written whole and moved into place (:func:`is_temporary_folder`), at any depth
        in the tool's folder."""
        copy = is_temporary(path.name)
        for folder in path.parents:
            if copy and self.is_folder(folder):
                return True
            copy = copy or is_temporary_folder(folder.name)
        return False

    def _holds(self, path: PurePath) -> bool:
        index, parts = self._index, path.parts
        if len(parts) < 2:
            return False
        name, parent = parts[-1], parts[-2]
        if any(_ends_as(parts, tail) for tail in index.anywhere(name, parent)):
            return True
        if name.endswith(index.endings):
            return True
        for inner in index.files(name, parent):
            if not _ends_as(parts, inner):
                continue
            folder = path.parents[len(inner) - 1]
            if self.is_folder(folder):
                return True
            if len(inner) == 1 and self.marks and _marked(folder, self.marks):
                return True
        for at in index.deep(parts):  # ``parts[at]`` is a deep pattern's folder
            folder = path.parents[len(parts) - 1 - at]  # the tool's folder, holding it
            if self.is_folder(folder):
                return True
        if name in self.homes and _is_home(path.parent):
            return True
        return bool(self.file_variables) and _named_file(path, self.file_variables)

    def covers(self, folder: PurePath) -> bool:
        """Whether every file under ``folder``, at any depth, is one of these: ``folder`` is the
        folder of a deep pattern (``models`` of ``models/**``) in the tool's folder, as
        :meth:`holds` tells of each file beneath it. A walk need not enter it, which matters
        where it holds many files (a plugin's bundle, an npm install of the tool)."""
        parts = folder.parts
        for heads in self._index.deep_by_first.values():
            for head in heads:
                size = len(head)
                if len(parts) <= size or not all(
                    fnmatchcase(name, part) for name, part in zip(parts[-size:], head, strict=True)
                ):
                    continue
                tool = folder.parents[size - 1]
                if self.is_folder(tool):
                    return True
        # A folder written whole and moved into place (OpenCode's ``<skill>.tmp-<uuid>/``),
        # in the tool's folder: every file of it is a copy, as :meth:`holds` tells of each.
        return (
            self.temporaries
            and is_temporary_folder(folder.name)
            and any(map(self.is_folder, folder.parents))
        )


@dataclass(frozen=True)
class _Index:
    """A keeper's patterns by the last name (or the folder of a wildcard's last name) they
    can match, so a file is tried against those alone."""

    by_name: dict[str, tuple[_Pattern, ...]]
    by_folder: dict[str, tuple[_Pattern, ...]]
    loose: tuple[_Pattern, ...]  # a wildcard right in the tool's folder: any file
    anywhere_by_name: dict[str, tuple[_Pattern, ...]]
    anywhere_by_folder: dict[str, tuple[_Pattern, ...]]
    deep_by_first: dict[str, tuple[_Pattern, ...]]  # ``models/**`` by ``models``
    endings: tuple[str, ...]
    #: ``anywhere`` names alone with a wildcard (``gemini-client-error-*.json``): any folder.
    anywhere_loose: tuple[_Pattern, ...] = ()

    @staticmethod
    def of(keeper: Credentials) -> _Index:
        by_name: dict[str, list[_Pattern]] = {}
        by_folder: dict[str, list[_Pattern]] = {}
        loose: list[_Pattern] = []
        deep: dict[str, list[_Pattern]] = {}
        for pattern in sorted(keeper.files):
            inner = tuple(pattern.split("/"))
            if inner[-1] == "**":
                deep.setdefault(inner[0], []).append(inner[:-1])
            elif not _is_wild(inner[-1]):
                by_name.setdefault(inner[-1], []).append(inner)
            elif len(inner) > 1 and not _is_wild(inner[-2]):
                by_folder.setdefault(inner[-2], []).append(inner)
            else:  # right in the tool's folder, or in folders a wildcard names (``tmp/*/*.x``)
                loose.append(inner)
        anywhere_by_name: dict[str, list[_Pattern]] = {}
        anywhere_by_folder: dict[str, list[_Pattern]] = {}
        anywhere_loose: list[_Pattern] = []
        for tail in sorted(keeper.anywhere):
            parts = tuple(tail.split("/"))
            if len(parts) == 1 and _is_wild(parts[0]):  # a name alone: tried on every file
                anywhere_loose.append(parts)
            elif _is_wild(parts[-1]):
                anywhere_by_folder.setdefault(parts[-2], []).append(parts)
            else:
                anywhere_by_name.setdefault(parts[-1], []).append(parts)
        frozen = {k: tuple(v) for k, v in by_name.items()}
        return _Index(
            frozen,
            {k: tuple(v) for k, v in by_folder.items()},
            tuple(loose),
            {k: tuple(v) for k, v in anywhere_by_name.items()},
            {k: tuple(v) for k, v in anywhere_by_folder.items()},
            {k: tuple(v) for k, v in deep.items()},
            tuple(sorted(keeper.endings)),
            anywhere_loose=tuple(anywhere_loose),
        )

    def files(self, name: str, parent: str) -> tuple[_Pattern, ...]:
        return self.by_name.get(name, ()) + self.by_folder.get(parent, ()) + self.loose

    def anywhere(self, name: str, parent: str) -> tuple[_Pattern, ...]:
        return (
            self.anywhere_by_name.get(name, ())
            + self.anywhere_by_folder.get(parent, ())
            + self.anywhere_loose
        )

    def deep(self, parts: tuple[str, ...]) -> Iterator[int]:
        """The index in ``parts`` of each parent where a deep pattern's folders begin (its
        ``models`` of ``models/**``), the file somewhere under them."""
        if not self.deep_by_first:
            return
        last = len(parts) - 1
        for at in range(1, last):  # a parent's index; its own parent is the tool's folder
            for head in self.deep_by_first.get(parts[at], ()):
                inner = parts[at : at + len(head)]
                if at + len(head) <= last and all(
                    fnmatchcase(name, part) for name, part in zip(inner, head, strict=True)
                ):
                    yield at


#: The word that marks an atomic write's copy, ``.tmp``, followed by nothing or by the copy's
#: random tail (``.``- or ``-``-separated).
_TMP = re.compile(r"\.tmp(?=$|[.-])")
#: A word of such a tail, as the tools make them: a process id, a time, a counter (digits), a
#: UUID's or ``randomBytes``' hex, ``Math.random().toString(36)``. Never an extension a session
#: file ends in (``json``, ``jsonl``, ``gz``), so no session's name is taken for a copy.
_RANDOM = re.compile(r"\w*\d\w*|[0-9a-f]{4,}|[0-9a-z]{10,}")
#: The copy Rust's ``tempfile`` makes (``NamedTempFile::new_in``, the Codex CLI's
#: ``write_atomically``): ``.tmp`` and six random letters or digits, no name of the file.
_RUST_TEMPORARY = re.compile(r"\.tmp[0-9A-Za-z]{6}")


def replaced_names(name: str) -> tuple[str, ...]:
    r"""The names the file an atomic write's copy named ``name`` replaces may have, longest
    first; none for any other name. The agents write a file whole by writing a copy beside it
    and renaming it over the file; a write interrupted leaves the copy, holding what the file
    holds. Each names its copy after the file, a ``.tmp`` word and random words around it
    (the bundles of tests/agents): Kimi Code 2.1.0's ``<name>.tmp.<pid>.<hex>``,
    ``<name>.<pid>.<base36>.tmp``, ``<name>.<pid>.<ms>.tmp``, ``<name>.tmp-<pid>-<n>``,
    ``<name>.tmp``; Claude Code 2.1.332's ``<name>.tmp.<hex>``, ``<name>.tmp.<pid>.<hex>``,
    ``<name>.tmp.<pid>.<ms>`` (its clean-up's ``/\.tmp\.(?:[0-9a-f]{8}|\d+\.[0-9a-f]{12})$/``);
    Gemini CLI 0.61.0's ``<name>.tmp.<uuid>``, ``<name>.tmp-<pid>``, ``<name>.tmp``; Qwen Code
    0.24.4's ``<name>.tmp.<pid>.<uuid>``, ``<name>.<pid>.tmp``; the Cline CLI's and OpenCode's
    alike; a hidden ``.<name>.<pid>.<ms>.<hex>.tmp`` too. The random words between the name and
    ``.tmp`` are not told from the name's own dots, so each shorter name is one it may have."""
    if ".tmp" not in name:  # the test a walk asks of every file: one substring search
        return ()
    for found in reversed(list(_TMP.finditer(name))):
        tail = name[found.end() + 1 :]
        if found.start() == 0 or (
            tail and not all(map(_RANDOM.fullmatch, re.split(r"[.-]", tail)))
        ):
            continue
        head = name[: found.start()]
        names: list[str] = []
        for stem in (head, head[1:]) if head.startswith(".") else (head,):
            at = len(stem)
            while at > 0:
                if stem[:at] not in names:
                    names.append(stem[:at])
                at = stem.rfind(".", 0, at)
        return tuple(names)
    return ()


def is_temporary(name: str) -> bool:
    """Whether ``name`` is an atomic write's copy's (:func:`replaced_names`), Rust's
    ``tempfile``'s too, which names no file."""
    return bool(replaced_names(name)) or _RUST_TEMPORARY.fullmatch(name) is not None


#: A folder an atomic move of a whole folder leaves when cut short: OpenCode 1.18.33 writes a
#: remote skill's new version into ``<skill>.tmp-<uuid>/`` and moves the old one aside to
#: ``<skill>.old-<uuid>/`` before renaming the new one into place (``crypto.randomUUID()``;
#: anomalyco/opencode ``packages/opencode/src/skill/discovery.ts``, ``Discovery.pull``). The
#: whole lowercase UUID and nothing after it: a folder of the user's is named so by no chance
#: (Kimi Code's ``wd_<project>_<hash>`` of a project called ``site.tmp-2`` is not).
_TEMPORARY_FOLDER = re.compile(
    r".+\.(?:tmp|old)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def is_temporary_folder(name: str) -> bool:
    """Whether ``name`` is a folder's that an atomic move of a whole folder left
    (:data:`_TEMPORARY_FOLDER`): every file under it is a copy, its tool's own."""
    return (".tmp-" in name or ".old-" in name) and _TEMPORARY_FOLDER.fullmatch(name) is not None


def _is_wild(name: str) -> bool:
    return "*" in name or "?" in name or "[" in name


def _in_named_folders(pattern: str) -> bool:
    """Whether ``pattern`` names files of any name in folders of any name under its first
    folder (``tmp/*/*.output``): no one folder's name tells them, the first folder's does."""
    parts = pattern.split("/")
    return len(parts) > 2 and _is_wild(parts[-1]) and _is_wild(parts[-2])


def _ends_as(parts: tuple[str, ...], tail: _Pattern) -> bool:
    """Whether ``parts`` end with names matching ``tail``'s (each a :func:`fnmatchcase`
    pattern), with at least one name before them (the folder they are in)."""
    if len(parts) <= len(tail):
        return False
    return all(
        fnmatchcase(name, part) for name, part in zip(parts[-len(tail) :], tail, strict=True)
    )


def _marked(folder: PurePath, marks: frozenset[str]) -> bool:
    """Whether ``folder`` holds one of ``marks``: a name, or a pattern of names (a channel
    build's database, ``kilo-*.db``) matched against the folder's listing."""
    if any(Path(folder, mark).exists() for mark in marks if not _is_wild(mark)):
        return True
    wild = [mark for mark in marks if _is_wild(mark)]
    if not wild:
        return False
    try:
        names = os.listdir(folder)
    except FileNotFoundError:  # no folder: nothing in it marks it
        return False
    except OSError:
        # A folder that can be searched but not listed (mode 711) may hold the mark unseen:
        # its file of a keeper's name is taken for the keeper's, never opened (fails closed).
        return True
    return any(fnmatchcase(name, mark) for name in names for mark in wild)


def _named_by(folder: PurePath, variables: frozenset[str]) -> bool:
    """Whether one of ``variables`` names ``folder`` now: read at each call, as the tool reads
    it when it starts, so a scan in a changed environment goes by the changed value. A relative
    value is taken from the working folder, as Continue takes it (``path.resolve``)."""
    for variable in variables:
        value = os.environ.get(variable)
        if value and os.path.realpath(os.path.expanduser(value)) == os.path.realpath(folder):
            return True
    return False


def _named_file(path: PurePath, variables: Iterable[str]) -> bool:
    """Whether one of ``variables`` names the file ``path`` now (Cline's
    ``$CLINE_PROVIDER_SETTINGS_PATH``), as :func:`_named_by` names a folder."""
    for variable in variables:
        value = os.environ.get(variable)
        if (
            value
            and os.path.basename(value) == path.name
            and os.path.realpath(os.path.expanduser(value)) == os.path.realpath(path)
        ):
            return True
    return False


def home_variable(windows: bool) -> str:
    """The variable that names the user's home folder as Node's ``os.homedir()`` reads it, the
    agents' home: ``USERPROFILE`` on Windows, ``HOME`` elsewhere (libuv's ``uv_os_homedir``;
    Python's :func:`os.path.expanduser` reads the same, so a scan's home is the agents')."""
    return "USERPROFILE" if windows else "HOME"


def home_folder(environ: Mapping[str, str], windows: bool) -> str:
    """The user's home folder in ``environ`` as the agents see it (:func:`home_variable`),
    else as the system's account says (:func:`os.path.expanduser`, as libuv falls back)."""
    return environ.get(home_variable(windows)) or os.path.expanduser("~")


def _is_home(folder: PurePath) -> bool:
    home = home_folder(os.environ, WINDOWS)
    return os.path.realpath(home) == os.path.realpath(folder)


def is_credentials(path: PurePath, keepers: Iterable[Credentials]) -> bool:
    """Whether ``path`` is a file any of ``keepers`` keeps secrets in."""
    return any(keeper.holds(path) for keeper in keepers)


def named_like(keepers: Iterable[Credentials]) -> Callable[[str], bool]:
    """A test of a path's names that is False for every file none of ``keepers`` can hold in
    the environment of now, and True for the few that :func:`is_credentials` must then look
    at: a scan makes one when it starts and asks it of every file it walks, so it is a few set
    lookups, never a pattern match per keeper nor a read of the environment per file."""
    names: set[str] = set()
    folders: set[str] = set()  # the folders a file of any name is kept in (``credentials/*``)
    endings: set[str] = set()
    prefixes: set[str] = set()  # how ``anywhere`` names alone with a wildcard start
    # What a path holds when a file at any depth under a tool's folder of a deep pattern is
    # (``/.continue/models/`` of ``models/**``): the folder's name, or only the pattern's
    # folder's when a variable moves the tool's folder (a link may name it otherwise).
    markers: set[str] = set()
    temporaries = False  # whether a copy of any file of a tool's folder is one (its own files)
    nameless = False  # whether a copy naming no file is one (:attr:`Credentials.nameless_copies`)
    for keeper in keepers:
        temporaries = temporaries or keeper.temporaries
        nameless = nameless or keeper.nameless_copies
        moved = any(os.environ.get(variable) for variable in keeper.variables)
        for pattern in keeper.files:
            head = pattern.split("/")[0]
            if pattern.endswith("/**") or _in_named_folders(pattern):
                markers.update(f"{os.sep}{folder}{os.sep}{head}{os.sep}"
                               for folder in keeper.folders)  # fmt: skip
                if moved:
                    markers.add(f"{os.sep}{head}{os.sep}")
        names.update(keeper.homes)
        endings.update(keeper.endings)
        for variable in keeper.file_variables:
            value = os.environ.get(variable)
            if value:
                names.add(os.path.basename(value))
        for pattern in (*keeper.files, *keeper.anywhere):
            *inner, last = pattern.split("/")
            if pattern in keeper.anywhere and not inner and _is_wild(last):
                # A name alone, in any folder: told by what its name starts with.
                prefixes.add(re.split(r"[*?\[]", last, maxsplit=1)[0])
                continue
            if last == "**" or (pattern in keeper.files and _in_named_folders(pattern)):
                continue  # told by the markers above
            if _is_wild(last):
                folders.add(inner[-1] if inner else "")
            else:
                names.add(last)
    if "" in folders or "" in prefixes:  # a wildcard right in a tool's folder: any name may be one
        return lambda path: True
    frozen_names, frozen_folders = frozenset(names), frozenset(folders)
    frozen_markers = tuple(sorted(markers))
    frozen_endings = tuple(sorted(endings))
    frozen_prefixes = tuple(sorted(prefixes))

    def named(name: str) -> bool:
        return (
            name in frozen_names
            or name.endswith(frozen_endings)
            or name.startswith(frozen_prefixes)
        )

    def test(path: str) -> bool:
        head, name = os.path.split(path)
        if (
            named(name)
            or os.path.basename(head) in frozen_folders
            or any(marker in path for marker in frozen_markers)
        ):
            return True
        # An atomic write's copy, told by the file it replaces (one search of ``.tmp`` in the
        # name of any other file), or by its folder's when copies of any file are kept, as is
        # a file of a folder moved whole (one search of each word in the rest of its path).
        if nameless and _RUST_TEMPORARY.fullmatch(name) is not None:
            return True
        if any(map(named, replaced_names(name))):
            return True
        return temporaries and (
            is_temporary(name)
            or ((".tmp-" in head or ".old-" in head)
                and any(map(is_temporary_folder, head.split(os.sep))))
        )  # fmt: skip

    return test


def covered_like(keepers: Iterable[Credentials]) -> Callable[[str], bool]:
    """A test of a folder's name that is False for every folder none of ``keepers`` can
    :meth:`~Credentials.covers`, and True for the few it must then be asked of: the last names
    of their deep patterns' folders (``plugins`` of ``plugins/**``, ``plans`` of
    ``tmp/*/*/plans/**``). A walk makes one when it starts and asks it of every folder."""
    names: set[str] = set()
    temporaries = False  # whether a folder moved whole (:func:`is_temporary_folder`) may be one
    for keeper in keepers:
        temporaries = temporaries or keeper.temporaries
        for pattern in keeper.files:
            if not pattern.endswith("/**"):
                continue
            last = pattern.split("/")[-2]
            if _is_wild(last):  # a folder of any name may be one
                return lambda name: True
            names.add(last)
    frozen = frozenset(names)
    if not temporaries:
        return frozen.__contains__
    return lambda name: name in frozen or is_temporary_folder(name)


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
    ``~/.codex/auth.json``, ``~`` expanded, or the copy an interrupted write left of it), told
    without opening it; None for any other file."""
    where = Path(os.path.abspath(path))
    names = (where.name, *replaced_names(where.name))  # an atomic write's copy: its file's too
    if (
        all(name not in LIKELY_NAMES and not name.endswith(_LIKELY_ENDINGS) for name in names)
        and _RUST_TEMPORARY.fullmatch(where.name) is None  # a copy naming no file: looked at
        and where.parent.name not in LIKELY_FOLDERS
        and LIKELY_DEEP_FOLDERS.isdisjoint(where.parts[:-1])
        and not any(_named_file(where.with_name(name), LIKELY_FILE_VARIABLES) for name in names)
    ):
        return None
    return next((name for name, keeper in keepers() if keeper.holds(where)), None)


def never_opened(keeper: str) -> str:
    """Why a credential file the user named is not read, as a scan's warning and a load's
    error say it (after the file's name)."""
    return f"{keeper}'s credentials (keys, tokens), never opened"
