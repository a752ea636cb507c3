"""Where the files of OpenCode's ``storage/`` (before 1.2) belong when their names do not say
it; :mod:`turnfold.formats.agents.opencode` reads them.

OpenCode files each session, message and part under its id (``session/<projectID>/<ses>.json``,
``message/<ses>/<msg>.json``, ``part/<msg>/<prt>.json``) and finds each by that name. Two kinds
of file no name leads to:

- a session's file named otherwise than the id it holds (renamed, or moved by an older
  migration that left its JSON as it was): a sub-agent's ``parentID``, a ``task`` call's
  ``sessionId`` and a part's ``sessionID`` name it by the id it holds (:func:`holders`);
- a part whose message's file is missing. ``SessionRevert.cleanup`` (``src/session/revert.ts``
  before 1.2) deletes the files of the messages after a revert's point and leaves their parts;
  ``Session.remove`` (``src/session/index.ts``) deletes each message's parts, then the message,
  then the session's file, so an OpenCode stopped half-way leaves parts, or a session's
  messages and parts, behind. Each part still names its message and its session
  (``messageID``, ``sessionID``): it is read with that session, where its message's id places
  it (:func:`loose_parts`); 1.2 copies none of them into its database.

A third is learned the same way: the sub-agents' sessions of a lead (:func:`sub_agents`). A lead's
``task`` call names its sub-agent (``metadata.sessionId``), but one whose call's part file is gone,
or that a version recorded otherwise, is named by no call: only its own ``parentID`` leads to it,
and only opening every session's file finds it.

All are learned by opening files that no session's own names lead to. A scan asks for them at
every file of a folder of thousands of sessions, so each is kept per ``storage/`` folder while
the files and folders it was learned from are unchanged (their modification times and sizes).

No file is read past :func:`~turnfold.formats.source.record_limit`
(:func:`~turnfold.formats.source.read_bounded`): a larger one, which no version of OpenCode
writes, is not opened to learn where it belongs, and
each filing names those it passed over (:attr:`Filed.over`), for the reader to say; so it does
the folders it could not list (:attr:`Filed.not_listed`), whose files may be what it looked for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from turnfold import codec
from turnfold.formats.source import TooLarge, read_bounded

T = TypeVar("T")

#: The ``storage/`` folders whose filing is kept, the least recently learned forgotten first.
KEPT_FOLDERS = 8

_kept: dict[tuple[str, Path], tuple[Any, Any]] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Filed(Generic[T]):
    """What a filing learned of a ``storage/`` folder (``found``), and the files it did not
    open for their size (``over``: each path with its size, by path), which may hold what it
    looked for."""

    found: T
    over: tuple[tuple[Path, int], ...]
    #: The folders that could not be listed, each with its error (no traceback kept).
    not_listed: tuple[tuple[Path, OSError], ...] = ()


def holders(root: Path) -> Filed[Mapping[str, Path]]:
    """The session files of ``root`` (a ``storage/`` folder) that hold an id other than their
    name, by that id: where several hold one, the first by path. A file that cannot be read is
    in none (loading it says why); one too large to read is in :attr:`Filed.over`."""
    unlisted: list[tuple[Path, OSError]] = []
    files = _files(root / "session", nested=True, unlisted=unlisted)
    stamps = tuple((str(path), _stamp(path)) for path in files)
    found: Filed[Mapping[str, Path]] = _learned(
        "holders", root, stamps, lambda: _held(files, unlisted)
    )
    return found


def sub_agents(root: Path) -> Filed[Mapping[str, tuple[Path, ...]]]:
    """The session files of ``root`` (a ``storage/`` folder) that name a lead (``parentID``),
    by that id, each id's in order of path. A file that cannot be read is under none (loading
    it says why); one too large to read is in :attr:`Filed.over`.

    Kept while the folders of ``session/`` are unchanged (a session's file added, deleted or
    renamed changes its folder's time), not each file: OpenCode writes a session's
    ``parentID`` when it creates the session and no update changes it, and stamping every
    file would cost a scan of N sessions N looks at each of N files. The reader checks each
    file found still names the lead."""
    folder = root / "session"
    stamps = (_stamp(folder), tuple((path.name, _stamp(path)) for path in _folders(folder)))
    unlisted: list[tuple[Path, OSError]] = []
    found: Filed[Mapping[str, tuple[Path, ...]]] = _learned(
        "sub_agents",
        root,
        stamps,
        lambda: _parents(_files(folder, nested=True, unlisted=unlisted), unlisted),
    )
    return found


def loose_parts(root: Path) -> Filed[Mapping[str, tuple[Path, ...]]]:
    """The part files of ``root`` (a ``storage/`` folder) in a folder named after no message's
    file (``part/<msg>/`` with no ``message/*/<msg>.json``), by the session each names
    (``sessionID``), in order of path. A part that names no session, or cannot be read, is
    under none: no session can read it (one too large to read is in :attr:`Filed.over`)."""
    messages = root / "message"
    parts = root / "part"
    # A message's file added or deleted changes its folder's time, a folder of parts added or
    # deleted the time of part/; a part added to a loose folder is checked below.
    stamps = (_stamp(messages), _stamp(parts),
              tuple((path.name, _stamp(path)) for path in _folders(messages)))  # fmt: skip
    found: tuple[tuple[tuple[str, Any], ...], Filed[Mapping[str, tuple[Path, ...]]]] = _learned(
        "loose", root, stamps, lambda: _loose(messages, parts), still=_unchanged(parts)
    )
    return found[1]


def _learned(
    what: str,
    root: Path,
    stamps: Any,
    learn: Callable[[], Any],
    still: Callable[[Any], bool] = lambda value: True,
) -> Any:
    """What ``learn`` finds of ``root``, learned again when ``stamps`` changed since (or
    ``still`` says the value no longer holds)."""
    key = (what, root)
    with _lock:
        kept = _kept.get(key)
    if kept is not None and kept[0] == stamps and still(kept[1]):
        return kept[1]
    value = learn()
    filed = value[1] if isinstance(value, tuple) else value
    if filed.not_listed:
        return value  # a folder not listed now may be listed next time: learned again then
    with _lock:
        _kept.pop(key, None)
        _kept[key] = (stamps, value)
        while len(_kept) > 3 * KEPT_FOLDERS:  # three things learned of each folder
            del _kept[next(iter(_kept))]
    return value


def _unchanged(parts: Path) -> Callable[[Any], bool]:
    """Whether the loose folders learned are as they were (a part added to one, or deleted)."""
    return lambda value: all(_stamp(parts / name) == stamp for name, stamp in value[0])


def _held(files: list[Path], unlisted: list[tuple[Path, OSError]]) -> Filed[Mapping[str, Path]]:
    found: dict[str, Path] = {}
    over: list[tuple[Path, int]] = []
    for path in files:
        held = _opened(path, over).get("id")
        if isinstance(held, str) and held != path.stem:
            found.setdefault(held, path)
    return Filed(found, tuple(over), tuple(unlisted))


def _parents(
    files: list[Path], unlisted: list[tuple[Path, OSError]]
) -> Filed[Mapping[str, tuple[Path, ...]]]:
    found: dict[str, list[Path]] = {}
    over: list[tuple[Path, int]] = []
    for path in files:
        parent = _opened(path, over).get("parentID")
        if isinstance(parent, str) and parent:
            found.setdefault(parent, []).append(path)
    found_by = {parent: tuple(paths) for parent, paths in found.items()}
    return Filed(found_by, tuple(over), tuple(unlisted))


def _loose(
    messages: Path, parts: Path
) -> tuple[tuple[tuple[str, Any], ...], Filed[Mapping[str, tuple[Path, ...]]]]:
    unlisted: list[tuple[Path, OSError]] = []
    named = {path.stem for folder in _folders(messages, unlisted)
             for path in _files(folder, nested=False, unlisted=unlisted)}  # fmt: skip
    folders = [folder for folder in _folders(parts, unlisted) if folder.name not in named]
    by_session: dict[str, list[Path]] = {}
    over: list[tuple[Path, int]] = []
    for folder in folders:
        for path in _files(folder, nested=False, unlisted=unlisted):
            session = _opened(path, over).get("sessionID")
            if isinstance(session, str) and session:
                by_session.setdefault(session, []).append(path)
    stamps = tuple((folder.name, _stamp(folder)) for folder in folders)
    found = {session: tuple(paths) for session, paths in sorted(by_session.items())}
    return stamps, Filed(found, tuple(over), tuple(unlisted))


def _opened(path: Path, over: list[tuple[Path, int]]) -> Mapping[str, Any]:
    """:func:`document` of a file a filing opens, a file too large to read noted in ``over``."""
    try:
        return _document(path)
    except TooLarge as exc:
        over.append((path, exc.size))
        return {}


def document(path: Path) -> Mapping[str, Any]:
    """The JSON object of a file opened to learn where a file belongs; empty when it has none,
    or is too large to read (:func:`~turnfold.formats.source.read_bounded`): reading that file
    itself says what is wrong with it."""
    try:
        return _document(path)
    except TooLarge:
        return {}


def _document(path: Path) -> Mapping[str, Any]:
    """:func:`document`, but :class:`TooLarge` for a file over the bound."""
    try:
        value = codec.loads(read_bounded(path))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _folders(folder: Path, unlisted: list[tuple[Path, OSError]] | None = None) -> list[Path]:
    """The folders in ``folder``, by name; none when it cannot be listed (put in ``unlisted``,
    for the reader to say; a folder not there is an empty ``storage/``'s, not put)."""
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir())
    except OSError as error:
        _put(folder, error, unlisted)
        return []


def _files(
    folder: Path, *, nested: bool, unlisted: list[tuple[Path, OSError]] | None = None
) -> list[Path]:
    """The regular ``.json`` files in ``folder`` (``nested``: in its folders), by path: a named
    pipe among them is passed over, never waited on. A folder that cannot be listed is put in
    ``unlisted``."""
    found: list[Path] = []
    for inner in _folders(folder, unlisted) if nested else [folder]:
        try:
            with os.scandir(inner) as entries:
                found += (Path(e.path) for e in entries if e.name.endswith(".json") and e.is_file())
        except OSError as error:
            _put(inner, error, unlisted)
            continue
    return sorted(found)


def _put(folder: Path, error: OSError, unlisted: list[tuple[Path, OSError]] | None) -> None:
    """``folder`` and why it was not listed into ``unlisted``: a copy of the error without its
    traceback, as a filing is kept (its frames are not); one not there held nothing."""
    if unlisted is not None and not isinstance(error, FileNotFoundError):
        unlisted.append((folder, OSError(error.errno, error.strerror, error.filename)))
