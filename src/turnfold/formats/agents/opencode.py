"""OpenCode sessions (``opencode-ai``, sst/opencode): its database, ``opencode export``, and the
files of its storage before 1.2; Kilo Code's CLI (``@kilocode/cli``, a fork) writes the same
database as ``~/.local/share/kilo/kilo.db``, a channel build's as ``kilo-<channel>.db`` (told by
its name or its own ``kilo_…`` tables: its sessions' ``metadata["agent"]`` is ``kilo-code``).

Inputs:

- the database OpenCode keeps its sessions in since 1.2, ``~/.local/share/opencode/opencode.db``
  (SQLite, written by ``packages/opencode/src/storage/db.ts``; read only, never written). A
  session is a row of ``session`` (its id, ``parent_id`` for a sub-agent's, ``directory``,
  ``title``, ``version``, the session's ``tokens_*`` and ``cost``), its messages rows of
  ``message`` and their parts rows of ``part``, each row's ``data`` a JSON document of the
  message's or the part's fields (``MessageV2.Info``/``MessageV2.Part`` of
  ``src/session/message-v2.ts``) but the ids, which are columns. ``sample=`` names the session
  (its ``ses_…`` id); a database of one session (sub-agents' aside) needs none. OpenCode
  deletes a session's messages and parts with its row (``session.sql.ts``: ``ON DELETE
  CASCADE``, its foreign keys on); rows left of a session with no row (deleted with them off,
  as the ``sqlite3`` shell does; a database copied in part) are a session of their own, titled
  by its id, and parts whose message has no row are read as the storage's parts whose
  message's file is missing are, each said;
- what ``opencode export <session>`` prints: ``{"info": <session>, "messages": [{"info":
  <message>, "parts": [<part>…]}]}``, the same documents with their ids;
- the files OpenCode wrote before 1.2 (``src/storage/storage.ts`` of 1.1), under
  ``~/.local/share/opencode/storage/``: ``session/<projectID>/<ses_…>.json`` (a session's info),
  ``message/<ses_…>/<msg_…>.json`` (a message's) and ``part/<msg_…>/<prt_…>.json`` (a part's),
  the same documents with their ids, one a file. Each is keyed by its file's name (a message's
  session and a part's message by their folders'), as OpenCode finds them and as 1.2 takes
  their ids when it copies them into its database on its first run (it leaves them); an id
  inside that differs is warned of, and the files filed under it are read too (C-7). An id a
  document names (a sub-agent's ``parentID``, a ``task`` call's ``sessionId``) finds the file of
  that name, else the file holding that id (:mod:`~turnfold.formats.agents.opencode_filing`),
  so a sub-agent nests in its lead whatever the lead's file is named. A part whose message's
  file is missing (a reverted message's, whose file OpenCode deletes and whose parts it leaves;
  a message deleted half-way) is read with the session its ``sessionID`` names, as a message of
  its own where its id places it, its role told by its parts, and warned of. Any file of a
  session reads that session; the ``storage/`` folder (or the data folder holding it) is read
  as the database is (``sample=`` names the session; its sessions are those with no lead
  there). Of the sessions' files, only those of the session read (and its sub-agents') are
  opened; and, to learn where they belong, the parts whose message's file is missing, and
  every session's file when an id names none by its name.

Each message's parts, in order (``part.id`` ascends in time):

- a user message's ``text`` parts are its :class:`~turnfold.model.UserMessage`; a ``synthetic``
  one (the text OpenCode adds itself: a file's content read for the prompt, a resumed task) a
  :class:`~turnfold.model.SystemNotice`; ``file`` parts its images (a ``data:`` URL) or a
  notice naming the file; ``agent`` (an ``@agent`` mention) and ``subtask`` (a command run as a
  sub-agent) notices; ``compaction`` a :class:`~turnfold.model.CompactionBoundary`;
- an assistant message is one or more model steps, each between ``step-start`` and
  ``step-finish``: ``reasoning`` a :class:`~turnfold.model.Thinking`, ``text`` an
  :class:`~turnfold.model.AssistantText` (the message's ``modelID``), ``tool`` a
  :class:`~turnfold.model.ToolCall` (described by what it acted on, a path relative to the
  session's ``directory``) whose ``state`` is its input, outcome and times:
  ``completed`` → ``success`` (a command's non-zero ``metadata.exit`` → ``error``), ``error``
  → ``error`` (``Tool execution aborted``, ``metadata.interrupted``, → ``cancelled``, its result
  what the command had printed, ``metadata.output``, then the error; a call the user denied
  permission to, ``The user rejected permission…``, ``cancelled``), ``pending``/``running`` → no
  recorded outcome (``unknown``: the process was stopped; the output so far is its result).
  ``step-finish`` holds the step's tokens (``input`` without the cached reads and writes,
  ``output`` without the reasoning, :mod:`turnfold.usage` adds them back) and ``cost``, put on
  the step's entries (:func:`~turnfold.usage.attach_usage`). ``patch`` (the files a step
  changed) and ``retry`` (a provider error retried) are notices; the message's ``error`` an
  :class:`~turnfold.model.AssistantError` (an abort an :class:`~turnfold.model.AbortMarker`);
  a message with no ``error``, no ``time.completed`` and no ``finish`` was cut off with its
  process (killed, never aborted): an :class:`~turnfold.model.AbortMarker` too, its turn
  stopped;
- a ``task`` call's sub-agent is a session of its own (``metadata.sessionId``, whose
  ``parent_id`` is this one): read from the database and nested under the call
  (:class:`~turnfold.model.SubAgent`). An export holds its own session only: the call then
  shows the sub-agent's answer, its steps missing. A sub-agent of the session that no call
  names (its call's part lost, a version recording the link otherwise) is shown under a call
  of its own where its start places it, with a warning naming it; one whose lead is not there
  (a row or a file deleted, a ``parent_id`` too long to read) is a session of its own, with a
  warning. Sessions naming each other as lead round a circle (none of them a top-level
  session) are shown from the oldest of them, a session of its own, the others under it, with
  a warning naming the circle. A session of its own is shown there once: a ``task`` call that
  names it says so, its steps not nested under the call too. Sub-agents' own sub-agents nest
  in turn, up to :data:`~turnfold.nesting.MAX_DEPTH` deep; one deeper is named in a warning
  (``sample=`` its id loads it), its steps not shown under its call.

No file of ``storage/`` is read past :func:`~turnfold.formats.source.record_limit`: a larger
one is warned of, and one that was not opened to learn where files belong is said by the load
that needed it (:mod:`~turnfold.formats.agents.opencode_filing`).

Detection: the database by its SQLite header and its ``session``/``message``/``part`` tables
(:func:`detect_path`); the export by its envelope, ``info.id`` a ``ses_`` id and messages of
``info`` and ``parts``; a file of ``storage/`` by its document (a session's, a message's or a
part's ids and fields), read where it lies (:func:`legacy_kind`), the folder by its layout.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from glob import escape
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from turnfold import codec
from turnfold.formats import databases
from turnfold.formats.agents import opencode_filing
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    as_int,
    as_list,
    as_text,
    counted_usage,
    describe_args,
    epoch_iso,
    partial_output,
    stringify,
    text_result,
    warned_timestamp,
)
from turnfold.formats.credentials import Credentials
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError, unselected
from turnfold.formats.source import (
    NotListed,
    Source,
    TooLarge,
    Unlisted,
    folder_not_listed,
    found_file,
    once_a_folder,
    read_bounded,
    read_file,
    record_limit,
    sibling_files,
)
from turnfold.formats.wording import notice, stop
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    UserMessage,
)
from turnfold.nesting import MAX_DEPTH, too_deep
from turnfold.usage import attach_usage, counts_of, usage_carrier

T = TypeVar("T")

NAME = "opencode"
#: A database holds many sessions: ``sample=`` names one by its id.
HAS_SAMPLES = True

RECORDS = Records(
    mapped={
        "session": "the session's id, title, directory, version and totals → metadata "
        "(``session_usage``, ``cost_usd``)",
        "message/user": "a user message: its parts are the prompt",
        "message/assistant": "a model response of one or more steps; its ``error`` an error "
        "entry (an abort an abort marker)",
        "part/text": "a user message's prompt (a synthetic one a notice), an assistant text",
        "part/reasoning": "thinking",
        "part/tool": "a tool call with its input, outcome, result and times; a ``task`` call "
        "nests its sub-agent's session",
        "part/step-finish": "the step's token usage and cost, on its entries",
        "part/file": "an image of the prompt, or a notice naming the attached file",
        "part/agent": "a notice: the agent the prompt mentions",
        "part/subtask": "a notice: the command the prompt runs as a sub-agent",
        "part/compaction": "a compaction boundary",
        "part/patch": "a notice: the files the step changed",
        "part/retry": "a warning notice: the provider error that was retried",
    },
    ignored={
        "part/step-start": "bounds a model step (its snapshot is OpenCode's undo point); the "
        "step's usage is its step-finish's",
        "part/snapshot": "a snapshot hash of the work tree, OpenCode's undo point",
    },
)

#: The database's name (``~/.local/share/opencode/opencode.db``), by which a scan finds it.
DATABASE = "opencode.db"
#: The same database of Kilo Code's CLI (``@kilocode/cli``, a fork of OpenCode):
#: ``~/.local/share/kilo/kilo.db``, OpenCode's tables and its own.
KILO_DATABASE = "kilo.db"
DATABASES = (DATABASE, KILO_DATABASE)
#: The database of a build of another channel than ``latest``, ``beta`` or ``prod`` (a local
#: or preview build: ``kilo-local.db``), named after the channel, its characters other than
#: ``[a-zA-Z0-9._-]`` made ``-``: Kilo Code's ``kilo-<channel>.db``, or the
#: ``opencode-<channel>.db`` beside it that it keeps where only that one is there (the
#: ``kilo`` binary of ``@kilocode/cli-linux-x64`` 7.7.9; ``KILO_DISABLE_CHANNEL_DB`` keeps
#: ``kilo.db``), and OpenCode's own ``opencode-<channel>.db`` (``opencode-ai`` 1.18.33).
_CHANNEL_DATABASE = re.compile(r"(kilo|opencode)-[A-Za-z0-9._-]+\.db")


def is_database_name(name: str) -> bool:
    """Whether ``name`` is one OpenCode or Kilo Code gives its database of sessions: one of
    :data:`DATABASES`, or a channel build's."""
    return name in DATABASES or _CHANNEL_DATABASE.fullmatch(name) is not None


def is_kilo_database_name(name: str) -> bool:
    """Whether ``name`` is Kilo Code's database's: ``kilo.db`` or ``kilo-<channel>.db``."""
    channel = _CHANNEL_DATABASE.fullmatch(name)
    return name == KILO_DATABASE or (channel is not None and channel.group(1) == "kilo")


def databases_in(folder: Path, not_listed: NotListed | None = None) -> list[Path]:
    """The databases of sessions in ``folder`` by their names (:func:`is_database_name`):
    ``opencode.db`` and ``kilo.db`` first, then the channel builds', by name. A folder that
    cannot be listed is told to ``not_listed`` (without one, it holds none: the command
    line's guess at a first key, after a load that said why); ``opencode.db`` and ``kilo.db``
    are still found in it by their names, as a folder one may search but not list holds them."""
    told = not_listed if not_listed is not None else _said_by_the_load
    found = [folder / name for name in DATABASES if found_file(folder / name, told)]
    found += [path for path in sibling_files(folder, "*.db", told)
              if path.name not in DATABASES and is_database_name(path.name)]  # fmt: skip
    return found


def _said_by_the_load(folder: Path, error: OSError) -> None:
    """Nothing: a folder :func:`databases_in` could not list for a caller whose load said so."""


#: The data folders' names (``Global.Path.data``: ``$XDG_DATA_HOME/opencode``; Kilo Code's
#: ``kilo``).
DATA_FOLDERS = ("opencode", "kilo")
#: What OpenCode keeps in its data folder beside its sessions that is credentials, never a
#: session: the providers' keys and tokens (``auth.json``, ``src/auth/index.ts``) and the MCP
#: servers' OAuth tokens (``mcp-auth.json``, ``src/mcp/auth.ts``); in a data folder named as
#: one of :data:`DATA_FOLDERS`, or one holding its database (a channel build's too) or
#: ``storage/``.
CREDENTIALS = Credentials(
    folders=frozenset(DATA_FOLDERS),
    files=frozenset({"auth.json", "mcp-auth.json"}),
    marks=frozenset({*DATABASES, "kilo-*.db", "opencode-*.db", "storage"}),
)
#: ``metadata["agent"]`` of a session of Kilo Code's database (OpenCode's is the format's own).
KILO_AGENT = "kilo-code"
_TABLES = frozenset({"session", "message", "part"})
#: The ids and times of the sessions', messages' and parts' rows, read no longer than an id
#: may be (``databases.KEY_BYTES``): a hostile one costs its row, never the database.
_KEYS = ("id", "session_id", "message_id", "parent_id", "project_id", "workspace_id",
         "time_created", "time_updated")  # fmt: skip
#: Of those, the times: one too long to be a time is left out of its row, the row still read
#: (a message's own time is in its ``data``).
_TIMES = ("time_created", "time_updated")
#: The folder of the data folder OpenCode kept its sessions in before 1.2, and its folders of
#: sessions, messages and parts, each file's name the id its prefix starts.
STORAGE = "storage"
_LEGACY = {"session": "ses_", "message": "msg_", "part": "prt_"}
#: What a folder of a legacy file is named after: a session's project, a message's session, a
#: part's message.
_LEGACY_FOLDER = {"session": "", "message": "ses_", "part": "msg_"}
#: A key that may name a file of ``storage/``: one name, no separator (a ``sample=`` or a
#: sub-agent's id from a document names no other file); as long as a file's name may be.
_NAME = re.compile(r"^[^/\\\x00]{1,250}$")
# Sub-agents' sessions nest down to turnfold.nesting.MAX_DEPTH, every reader's bound (a cycle of
# ids ends sooner: a session is never nested in itself). A session deeper is named by a warning
# (it loads as a session of its own, ``sample=`` its id), never dropped unsaid; in ``storage/``
# it is a row of its own (:meth:`_Storage.top`).
#: A session of the database that is a row of its own: with no lead, its own lead (a hostile
#: id), or whose lead's row is not there (:meth:`_Database.roots`).
_NO_LEAD = ('(parent_id IS NULL OR parent_id = id OR NOT EXISTS (SELECT 1 FROM main."session" '
            'AS lead WHERE lead.id = "session".parent_id))')  # fmt: skip
#: A sub-agent's session's title as OpenCode's ``task`` tool writes it (:func:`_task_of`).
_SUBAGENT_TITLE = re.compile(r"^(.*) \(@([^()\s]+) subagent\)$", re.DOTALL)
#: The parts only an assistant's message holds (its steps and what they did): a message whose
#: file is missing is read as the assistant's when one of its parts is of these.
_STEP_PARTS = frozenset({"step-start", "step-finish", "reasoning", "tool", "patch", "snapshot",
                         "retry"})  # fmt: skip
_ABORTED = "Tool execution aborted"
#: What a call's error begins with when the user denied it permission (its
#: ``PermissionRejectedError``, and ``PermissionCorrectedError`` adding the user's feedback):
#: the call never ran.
_DENIED = "The user rejected permission to use this specific tool call"
#: The ``name`` of a message's (or a stream's) error when the user aborted it.
ABORTED_ERROR = "MessageAbortedError"
#: The stop of a response OpenCode recorded no end of (its process was killed).
UNFINISHED = "the response never finished (its process was stopped)"


# --- detection ------------------------------------------------------------------------------------


def legacy_kind(path: Path) -> str | None:
    """``session``, ``message`` or ``part``: what a file of OpenCode's ``storage/`` (before 1.2)
    is, told by its place (``<storage>/session/<projectID>/<ses_…>.json``,
    ``<storage>/message/<ses_…>/<msg_…>.json``, ``<storage>/part/<msg_…>/<prt_…>.json``);
    None for any other path. OpenCode names each file after its id, but reads every
    ``session/*/*.json``, ``message/*/*.json`` and ``part/*/*.json`` whatever its name
    (``src/storage/json-migration.ts``): a file of another name is one where its folders are
    those of a ``storage/`` folder (:func:`storage_of`)."""
    if path.suffix != ".json" or len(path.parts) < 4:
        return None
    kind = path.parent.parent.name
    prefix = _LEGACY.get(kind)
    if prefix is None:
        return None
    if path.name.startswith(prefix) and path.parent.name.startswith(_LEGACY_FOLDER[kind]):
        return kind
    try:
        return kind if storage_of(path.parents[2]) == path.parents[2] else None
    except OSError:  # a folder that cannot be looked in holds no file read here
        return None


def storage_of(folder: Path) -> Path | None:
    """The ``storage/`` folder ``folder`` is, or the data folder holds; None for another."""
    for storage in (folder, folder / STORAGE):
        if (storage / "session").is_dir() and (storage / "message").is_dir():
            return storage
    return None


def _storage_told(folder: Path, not_listed: NotListed) -> Path | None:
    """:func:`storage_of`, a folder it could not look into told to ``not_listed``."""
    try:
        return storage_of(folder)
    except OSError as error:  # the folder its ``session/`` is looked for in cannot be searched
        not_listed(Path(error.filename).parent if error.filename else folder, error)
        return None


def walked_folders(folder: Path, files: list[str], dirs: list[str]) -> list[str] | None:
    """The subfolders a scan walks of OpenCode's data folder (``~/.local/share/opencode``) or of
    its ``storage/``; None when ``folder`` is neither. Of ``storage/``, the folders of sessions,
    messages and parts (not ``project/``, ``session_diff/``…); of the data folder, ``storage/``,
    or nothing when the database is beside it (1.2 copied the files into it: a session read
    twice would be two rows). The rest holds no session: ``snapshot/`` (the git objects of the
    undo points), ``log/``, ``tool-output/`` (long outputs kept whole), ``bin/``."""
    database = any(is_database_name(name) for name in files)
    if STORAGE in dirs and (database or storage_of(folder / STORAGE) is not None):
        return [] if database else [STORAGE]
    if "session" in dirs and "message" in dirs:
        return [name for name in dirs if name in _LEGACY]
    return None


def legacy_document(value: Any) -> str | None:
    """``session``, ``message`` or ``part``: what a document of OpenCode's ``storage/`` is, by
    its id and the fields that place it (a session's project, a message's session and role, a
    part's message and type); None for any other value."""
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str):
        return None
    given, session = value["id"], value.get("sessionID")
    if (
        given.startswith("ses_")
        and isinstance(value.get("projectID"), str)
        and "directory" in value
    ):
        return "session"
    if not (isinstance(session, str) and session.startswith("ses_")):
        return None
    if given.startswith("msg_") and value.get("role") in ("user", "assistant"):
        return "message"
    message = value.get("messageID")
    if given.startswith("prt_") and isinstance(message, str) and isinstance(value.get("type"), str):
        return "part" if message.startswith("msg_") else None
    return None


def detect_path(path: Path) -> Evidence | None:
    """OpenCode's database: a SQLite file with its session, message and part tables; before
    1.2, its ``storage/`` folder (or the data folder holding it). A data folder holding its
    database (Kilo Code's ``kilo.db``, a channel build's) is claimed by that database, the one
    :func:`read_path` reads of it. A file of ``storage/`` is told by its document
    (:func:`detect`), as a scan tells a sub-agent's by it."""
    try:
        folder = path.is_dir()
    except OSError:  # a path that cannot be looked at: opening it says why
        return None
    if folder:
        # A folder that cannot be listed, or looked into, is no sign it is not OpenCode's.
        unlisted = Unlisted()
        held = databases_in(path, unlisted)
        if held:
            return detect_path(held[0])
        if _storage_told(path, unlisted) is not None:
            return Evidence(share=1.0, marks=1)
        unlisted.not_mine(path)
        return None
    found = databases.tables(path)
    return Evidence(share=1.0, marks=1) if found is not None and found >= _TABLES else None


def _is_export(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    info, messages = value.get("info"), value.get("messages")
    return (
        isinstance(info, Mapping)
        and isinstance(info.get("id"), str)
        and info["id"].startswith("ses_")
        and isinstance(messages, list)
        and all(isinstance(m, Mapping) and "info" in m and "parts" in m for m in messages[:5])
    )


def detect(source: Source) -> Evidence:
    """An export: one JSON object with the session's ``info`` and its ``messages``; or a file of
    ``storage/``: a session's, a message's or a part's document, or any JSON object in the
    place of one (:func:`legacy_kind`), whatever ids it holds (OpenCode reads it by its
    name)."""
    if not source.is_document:
        return Evidence.none("no OpenCode export (info, messages of info and parts)")
    placed = source.path is not None and legacy_kind(source.path) is not None
    return Evidence.of(
        [source.document],
        lambda v: (
            DISTINCTIVE
            if _is_export(v) or legacy_document(v) or (placed and isinstance(v, Mapping))
            else NOT_MINE
        ),
        "no OpenCode export (info, messages of info and parts)",
    )


# --- reading --------------------------------------------------------------------------------------


@dataclass
class Message:
    info: Mapping[str, Any]
    parts: list[Any] = field(default_factory=list)
    #: False for a message whose file is missing, read from its parts alone: no record of it
    #: to account for.
    recorded: bool = True


@dataclass
class Session:
    info: Mapping[str, Any]
    messages: list[Message]
    #: The session's file, for one of ``storage/``: where its sub-agents' ``parentID`` leads.
    file: Path | None = None


#: A store's sub-agents of a session that no ``task`` call of it names: given the session and
#: the ids already nested or named (its calls', its leads'), the others' sessions, read.
Unclaimed = Callable[[Session, frozenset[str]], list[Session]]


def _loaded(text: Any, what: str, warn: Callable[[str], None]) -> Any:
    """A row's ``data`` document; None, with a warning, when it is no JSON object."""
    try:
        value = codec.loads(text)
    except (TypeError, ValueError) as exc:
        warn(f"{what}: unreadable JSON ({exc})")
        return None
    if not isinstance(value, dict):
        warn(f"{what}: not a JSON object")
        return None
    return value


class _Database:
    """The sessions of an OpenCode database, read on demand."""

    def __init__(self, db: sqlite3.Connection, source: Source) -> None:
        self.db = db
        self.source = source

    def warn(self, reason: str, record_type: str) -> None:
        self.source.warn(reason, record_type=record_type)

    def roots(self) -> list[tuple[str, str]]:
        """The sessions that are rows of their own: those with no lead, and the sub-agents'
        whose lead's row is not there (deleted, or a database copied in part), oldest first;
        then one of each circle of leads, its oldest (:meth:`_circles`); then the sessions
        with no row that messages or parts name (:meth:`_unrecorded`), titled by their ids.
        None is left out unlisted (reading one says why it is a row: :meth:`session`)."""
        found = []
        # An id too long to load is too long to sort by: then rowid breaks a tie of times. The
        # lead is looked up in the table itself (main.), not in the stand-in for it that
        # databases.rows reads a range of rows by when SQLite refuses a long value.
        for row in databases.rows(self.db, "session", "id, title",
                                  f"WHERE {_NO_LEAD} ORDER BY time_created, id",
                                  key="id", bounded=_KEYS, times=_TIMES,
                                  warn=lambda reason: self.warn(reason, "session"),
                                  unordered=f"WHERE {_NO_LEAD} ORDER BY time_created, rowid",
                                  ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                found.append((databases.listed(row), "session"))  # its title clipped when read
                continue
            found.append((str(row[0]), str(row[1])))
        found += [(circle[0], self._title(circle[0])) for circle in self._circles()]
        found += [(session, session) for session in self._unrecorded()]
        return found

    def _title(self, session_id: str) -> str:
        """The title of the session row ``session_id`` (a long one clipped, as reading it does)."""
        row, _ = databases.row(self.db, "session", "title", "WHERE id = ?", (session_id,),
                               key="id", bounded=_KEYS)  # fmt: skip
        return str(row[0]) if row is not None else session_id

    def _circles(self) -> list[list[str]]:
        """Each circle of leads: sessions whose ``parent_id`` leads from one to the next and
        back, so that none is a row of :data:`_NO_LEAD` and no lead's row holds them; each
        from its oldest (:meth:`_oldest`), which the listing shows, the others nested in it;
        the circles in the order of their oldest. OpenCode never writes one (a sub-agent's
        session is created by its lead's call), a changed or hostile database may. The leads
        are read whole, as ids: a database holds a few thousand sessions."""
        leads: dict[str, Any] = {}
        for row in databases.rows(self.db, "session", "id, parent_id", key="id", bounded=_KEYS):
            # A row whose id or parent_id is too long to read names no lead: a row of its own.
            if not isinstance(row, databases.OversizedRow):
                leads[str(row[0])] = row[1]
        circles: list[list[str]] = []
        walked: dict[str, bool] = {}  # True while on the walk under way
        for start in leads:
            path: list[str] = []
            node: str | None = start
            while node is not None and node not in walked:
                walked[node] = True
                path.append(node)
                lead = leads[node]
                node = lead if isinstance(lead, str) and lead in leads and lead != node else None
            if node is not None and walked[node]:  # the walk came round to itself
                circles.append(self._oldest(path[path.index(node) :]))
            walked.update(dict.fromkeys(path, False))
        return sorted(circles, key=lambda circle: self._age(circle[0]))

    def circle(self, session_id: str) -> list[str] | None:
        """The circle of leads the session ``session_id`` is in (:meth:`_circles`), from its
        oldest; None when its leads end (at a session with no lead there)."""
        chain, at = [session_id], {session_id: 0}
        while True:
            lead = self._lead(chain[-1])
            if lead is None:
                return None
            if lead in at:
                return self._oldest(chain[at[lead] :]) if at[lead] == 0 else None
            at[lead] = len(chain)
            chain.append(lead)

    def _lead(self, session_id: str) -> str | None:
        """The lead of ``session_id`` (its ``parent_id``) where a row of it is there and it
        is another session; else None."""
        row = next(databases.rows(self.db, "session", "parent_id", "WHERE id = ? LIMIT 1",
                                  (session_id,), key="id", bounded=_KEYS), None)  # fmt: skip
        if row is None or isinstance(row, databases.OversizedRow):
            return None
        lead = row[0]
        if isinstance(lead, str) and lead and lead != session_id and self._exists(lead):
            return lead
        return None

    def _oldest(self, circle: list[str]) -> list[str]:
        """``circle`` turned to start at its oldest session, as the listing orders them."""
        first = min(range(len(circle)), key=lambda i: self._age(circle[i]))
        return circle[first:] + circle[:first]

    def _age(self, session_id: str) -> tuple[Any, ...]:
        """Where the session falls in the listing's order (``time_created``, then id; SQLite
        sorts no value before numbers, numbers before text)."""
        row = next(databases.rows(self.db, "session", "time_created", "WHERE id = ? LIMIT 1",
                                  (session_id,), key="id", bounded=_KEYS), None)  # fmt: skip
        created = None if row is None or isinstance(row, databases.OversizedRow) else row[0]
        if isinstance(created, (int, float)) and not isinstance(created, bool):
            return (1, created, "", session_id)
        return (0, 0, "", session_id) if created is None else (2, 0, str(created), session_id)

    def _unrecorded(self) -> list[str]:
        """The sessions that message or part rows name (``session_id``) with no row of their
        own in ``session``: those whose row was deleted with the database's foreign keys off
        (OpenCode deletes a session's messages with it, ``ON DELETE CASCADE``), or of a
        database copied in part. The messages' first, each by its first row's time; found by
        the tables' ``session_id`` indexes, a look at each id, never at a row's data.

        A ``session_id`` too long to read is listed by a stand-in (:func:`databases.listed`),
        whose load says why: one for each such id, however many rows name it
        (:meth:`_long_ids`), and none for one a session's row holds (SQLite refuses to compare
        an id over the record limit, so its rows come back unsorted, ungrouped and unchecked)."""
        found: dict[str | int, None] = {}  # an int: the first row of a long id (by its index)
        long: list[databases.OversizedRow] = []
        for table in ("message", "part"):
            lacking = (f'WHERE NOT EXISTS (SELECT 1 FROM main."session" AS own '
                       f"WHERE own.id = {databases.quoted(table)}.session_id)")  # fmt: skip
            for row in databases.rows(self.db, table, "session_id",
                                      f"{lacking} GROUP BY session_id "
                                      "ORDER BY MIN(time_created), session_id",
                                      key="session_id", bounded=_KEYS,
                                      unordered=f"{lacking} ORDER BY rowid"):  # fmt: skip
                if isinstance(row, databases.OversizedRow) and row.key is None:
                    found.setdefault(len(long))
                    long.append(row)
                elif isinstance(row, databases.OversizedRow):
                    found.setdefault(databases.listed(row))
                else:
                    found.setdefault(str(row[0]))
        listed = self._long_ids(long)
        return [item if isinstance(item, str) else listed[item] for item in found
                if isinstance(item, str) or item in listed]  # fmt: skip

    def _long_ids(self, rows: list[databases.OversizedRow]) -> dict[int, str]:
        """The stand-ins of the sessions ``rows`` (of message and part, each naming a session
        by an id too long to read) name, by the index of the first row of each: that row's
        (:func:`databases.stand_in`), one a session; none for a session that has its own row
        (its listing names it). Ids are told apart without reading one whole
        (:func:`databases.first_of_each`)."""
        if not rows:
            return {}
        held = [row for row in databases.rows(self.db, "session", "id", key="id", bounded=_KEYS)
                if isinstance(row, databases.OversizedRow)]  # fmt: skip
        cells = [(row.table, "session_id", row.rowid) for row in rows]
        known = [("session", "id", row.rowid) for row in held]
        firsts = databases.first_of_each(self.db, cells, known)
        return {index: databases.stand_in(rows[index]) for index in sorted(firsts)}

    def session(self, session_id: str) -> Session | None:
        """The session ``session_id``; one with no row whose messages or parts are there read
        from them alone (:meth:`_unrecorded`), said; None when nothing names it."""
        self.db.row_factory = sqlite3.Row
        try:
            row, clipped = databases.row(self.db, "session", "*", "WHERE id = ?", (session_id,),
                                         key="id", bounded=_KEYS)  # fmt: skip
            if row is None:
                return self._unrecorded_session(session_id)
            for reason in clipped:
                self.warn(reason, "session")
            info = self._info(row)
            self.source.mapped("session")
            parent = info.get("parentID")
            if isinstance(parent, str) and parent and not self._exists(parent):
                self.source.warn(_leadless(session_id, parent, "this database"))
            messages, _ = self._messages(session_id)
            return Session(info, messages)
        finally:
            self.db.row_factory = None

    def _unrecorded_session(self, session_id: str) -> Session | None:
        """The session whose row is not there, read from the messages and parts that name it
        (:meth:`_unrecorded`): a session of its own titled by its id, said."""
        messages, (message_rows, part_rows) = self._messages(session_id)
        if not message_rows and not part_rows:
            return None
        self.source.warn(f"session {session_id}: no row of it in the session table (deleted, or "
                         f"the database copied in part), but {message_rows} message(s) and "
                         f"{part_rows} part(s) name it: shown as a session of its own, titled "
                         "by its id")  # fmt: skip
        return Session({"id": session_id, "title": session_id}, messages)

    def _messages(self, session_id: str) -> tuple[list[Message], tuple[int, int]]:
        """The messages of the session ``session_id`` with their parts (with the row factory
        of :class:`sqlite3.Row`), and how many message and part rows name it, read or not."""
        counts = [0, 0]
        messages: dict[str, Message] = {}
        #: The parts whose message has no row (deleted with the foreign keys off), by its id.
        loose: dict[str, list[dict[str, Any]]] = {}
        for message in databases.rows(
            self.db, "message", "id, data", "WHERE session_id = ? ORDER BY time_created, id",
            (session_id,), key="id", bounded=_KEYS, times=_TIMES,
            warn=lambda reason: self.warn(reason, "message"),
        ):  # fmt: skip
            counts[0] += 1
            if isinstance(message, databases.OversizedRow):
                self.warn(message.reason, "message")
                continue
            data = _loaded(
                message["data"], f"message {message['id']}",
                lambda reason: self.warn(reason, "message"),
            )  # fmt: skip
            if data is not None:
                messages[message["id"]] = Message({**data, "id": message["id"]})
        for part in databases.rows(
            self.db, "part", "id, message_id, data", "WHERE session_id = ? ORDER BY id",
            (session_id,), key="id", bounded=_KEYS, times=_TIMES,
            warn=lambda reason: self.warn(reason, "part"),
        ):  # fmt: skip
            counts[1] += 1
            if isinstance(part, databases.OversizedRow):
                self.warn(part.reason, "part")
                continue
            data = _loaded(
                part["data"], f"part {part['id']}", lambda reason: self.warn(reason, "part")
            )
            if data is None:
                continue
            owner = messages.get(part["message_id"])
            if owner is None:
                loose.setdefault(str(part["message_id"]), []).append({**data, "id": part["id"]})
                continue
            owner.parts.append({**data, "id": part["id"]})
        read = list(messages.values())
        if loose:
            told = _place_loose(read, loose, session_id)
            first = min(loose)
            self.source.warn(f"{sum(len(p) for p in loose.values())} part(s) of session "
                             f"{session_id} name a message with no row in the message table "
                             f"(first: part {loose[first][0]['id']} of message {first}): read "
                             f"where their ids place them, as {told} message(s), told by their "
                             "parts")  # fmt: skip
        return read, (counts[0], counts[1])

    def child(self, session_id: str) -> Session | None:
        """The session a ``task`` call names as its sub-agent's, to nest under the call; None,
        said, when it is a row of its own in the listing (:meth:`roots`: :meth:`_apart`), which
        shows it there once, never also under the call."""
        why = self._apart(session_id)
        if why is not None:
            self.source.warn(_shown_apart(session_id, why))
            return None
        return self.session(session_id)

    def _apart(self, session_id: str) -> str | None:
        """Why the session ``session_id`` is a row of its own in the listing (:meth:`roots`),
        as a warning says it; None for one that nests under its lead."""
        row = next(databases.rows(self.db, "session", "parent_id", "WHERE id = ? LIMIT 1",
                                  (session_id,), key="id", bounded=_KEYS), None)  # fmt: skip
        if row is None:
            named = databases.rows(self.db, "message", "id", "WHERE session_id = ? LIMIT 1",
                                   (session_id,), key="id", bounded=_KEYS)  # fmt: skip
            parts = databases.rows(self.db, "part", "id", "WHERE session_id = ? LIMIT 1",
                                   (session_id,), key="id", bounded=_KEYS)  # fmt: skip
            if next(named, None) is None and next(parts, None) is None:
                return None  # nothing of it here: the call's steps are missing
            return "it has no row in the session table"
        if isinstance(row, databases.OversizedRow):
            return "its parent_id is too long to read"
        parent = row[0]
        if not isinstance(parent, str) or not parent:
            return "it names no lead (parent_id)"
        if parent == session_id:
            return "it names itself as its lead (parent_id)"
        if not self._exists(parent):
            return f"its lead, session {_clipped(parent)} (its parent_id), is not in this database"
        circle = self.circle(session_id)
        if circle is not None and circle[0] == session_id:
            return "it is the oldest of a circle of sessions naming each other as lead"
        return None

    def circled(self, session: Session) -> str | None:
        """What a warning says of the circle of leads ``session`` is in; None when it is in
        none."""
        session_id = session.info.get("id")
        circle = self.circle(session_id) if isinstance(session_id, str) else None
        return _circled(circle, "parent_id") if circle is not None else None

    def _exists(self, session_id: str) -> bool:
        """Whether the database holds a session of the id ``session_id`` (a row whose long
        values cannot be read holds it too)."""
        found = databases.rows(self.db, "session", "id", "WHERE id = ? LIMIT 1", (session_id,),
                               key="id", bounded=_KEYS)  # fmt: skip
        return next(found, None) is not None

    def unclaimed(self, lead: Session, named: frozenset[str]) -> list[Session]:
        """The sessions whose ``parent_id`` is ``lead``'s and whose id is not ``named``, read,
        oldest first (:data:`Unclaimed`). A lead with no row has none: those naming it are
        rows of their own (:data:`_NO_LEAD`)."""
        lead_id = lead.info.get("id")
        if not isinstance(lead_id, str) or not self._exists(lead_id):
            return []
        ids: list[str] = []
        for row in databases.rows(self.db, "session", "id",
                                  "WHERE parent_id = ? ORDER BY time_created, id", (lead_id,),
                                  key="id", bounded=_KEYS, times=_TIMES,
                                  warn=lambda reason: self.warn(reason, "session"),
                                  unordered="WHERE parent_id = ? ORDER BY time_created, rowid",
                                  ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                if row.key is None:  # no id to read it by: said, not passed over
                    self.source.warn(f"a sub-agent's session of {lead_id}: {row.reason}")
                    continue
                ids.append(str(row.key))  # its long values clipped when it is read
                continue
            ids.append(str(row[0]))
        read = [self.session(i) for i in ids if i not in named]
        return [session for session in read if session is not None]

    @staticmethod
    def _info(row: sqlite3.Row) -> dict[str, Any]:
        """The session row as the export's ``info`` names its fields."""
        keys = row.keys()

        def get(key: str) -> Any:
            return row[key] if key in keys else None

        return {
            "id": get("id"),
            "parentID": get("parent_id"),
            "title": get("title"),
            "directory": get("directory"),
            "version": get("version"),
            "agent": get("agent"),
            "cost": get("cost"),
            "tokens": {
                "input": get("tokens_input"),
                "output": get("tokens_output"),
                "reasoning": get("tokens_reasoning"),
                "cache": {"read": get("tokens_cache_read"), "write": get("tokens_cache_write")},
            },
            "time": {"created": get("time_created"), "updated": get("time_updated")},
        }


class _Walked(NamedTuple):
    """Where the walk up a ``storage/`` session's leads ended (:meth:`_Storage._walk`): the
    file whose row holds it (``top``); the circle of leads it came round, from its oldest; or
    ``deep``, its leads deeper than a sub-agent nests (the file itself its top then)."""

    top: Path
    circle: list[Path] | None = None
    deep: bool = False


class _Storage:
    """The sessions of OpenCode's ``storage/`` folder (before 1.2), read on demand: of its
    sessions' files, only those of the sessions asked for are opened (and those no name leads
    to: :mod:`~turnfold.formats.agents.opencode_filing`)."""

    def __init__(self, root: Path, source: Source) -> None:
        self.root = root
        self.source = source
        #: The files the filings asked while reading did not open for their size, with their
        #: sizes: what they hold may belong here (:meth:`tell_over`).
        self.over: dict[Path, int] = {}
        #: The files too large to read that a warning of their own named already.
        self.said_over: set[Path] = set()
        #: The folders said not to be listed: each once, though several lookups list it.
        self._said_once = once_a_folder(self._say_not_listed)

    def warn(self, reason: str, record_type: str | None) -> None:
        self.source.warn(reason, record_type=record_type)

    def not_listed(self, folder: Path, error: OSError) -> None:
        """A folder of ``storage/`` that could not be listed: the files it holds may be this
        session's, so it is said (once), never passed over as an empty one."""
        self._said_once(folder, error)

    def _say_not_listed(self, folder: Path, error: OSError) -> None:
        self.warn(folder_not_listed(folder, error, "files (*.json)"), None)

    def document(self, path: Path, record_type: str) -> dict[str, Any] | None:
        """The JSON object of one file, read no further than the record limit
        (:func:`~turnfold.formats.source.read_bounded`); None, with a warning
        naming the file, when it has none or is larger."""
        try:
            text = read_bounded(path)
        except TooLarge as exc:
            self.warn(exc.reason, record_type)
            self.said_over.add(path)
            return None
        except OSError as exc:
            self.warn(f"{path}: not readable ({exc.strerror or exc})", record_type)
            return None
        value: dict[str, Any] | None = _loaded(
            text, str(path), lambda reason: self.warn(reason, record_type)
        )
        return value

    def session_file(self, session_id: str) -> Path | None:
        """The file of a session, in whichever project's folder it is."""
        if _NAME.match(session_id) is None or session_id in (".", ".."):
            return None
        folder = self.root / "session"
        try:  # a look for one file in each project's folder: not a listing of each
            projects = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        except OSError as error:
            self.not_listed(folder, error)
            # The file this load was given is still found: the one place known without a look.
            given = self.source.path
            if given is None or given.name != f"{session_id}.json":
                return None
            return given if given.parent.parent == folder else None
        for project in projects:
            if found_file(project / f"{session_id}.json", self.not_listed):
                return project / f"{session_id}.json"
        return None

    def referenced(self, session_id: str) -> Path | None:
        """The file of the session a document names by its id (a sub-agent's ``parentID``, a
        ``task`` call's ``sessionId``, a part's ``sessionID``, a message's folder): the file of
        that name, as OpenCode finds it; else the file holding that id, named otherwise since
        the id was written."""
        found = self.session_file(session_id)
        if found is not None:
            return found
        filed = opencode_filing.holders(self.root)
        held = filed.found.get(session_id)
        if held is None:  # a file too large to open, or in a folder not listed, may hold it
            self.over.update(filed.over)
            self._tell_not_listed(filed)
        return held

    def _filed(self, filed: opencode_filing.Filed[T]) -> T:
        """What a filing found, the files it did not open for their size noted (they may hold
        what it looked for: :meth:`tell_over`), and the folders it could not list said."""
        self.over.update(filed.over)
        self._tell_not_listed(filed)
        return filed.found

    def _tell_not_listed(self, filed: opencode_filing.Filed[Any]) -> None:
        for folder, error in filed.not_listed:
            self.not_listed(folder, error)

    def tell_over(self) -> None:
        """Says the files the filings asked did not open for their size, once a load: a
        sub-agent's session, a session named otherwise or parts of a missing message's they
        may hold are not shown."""
        over = {path: size for path, size in self.over.items() if path not in self.said_over}
        if not over:
            return
        first = min(over)
        self.warn(f"{len(over)} file(s) of {self.root} over the limit of {record_limit():,} "
                  f"bytes (TURNFOLD_MAX_RECORD_BYTES) not opened to learn which session they "
                  f"belong to (first: {first}, {over[first]:,} bytes): what they hold is "
                  "not shown here", None)  # fmt: skip

    def top(self, path: Path, info: Mapping[str, Any]) -> Path:
        """The session's file whose row holds the session of ``path`` (``info`` its document):
        its top-level lead's, each sub-agent's lead found by its ``parentID``
        (:meth:`referenced`), so a sub-agent is never a row of its own beside its lead's,
        whatever the lead's title or file name. The file itself where it names no lead, where
        its lead's file is not there or cannot be read (it is a session of its own then, never
        dropped), and where its leads go deeper than a sub-agent nests. Where they go round in
        a circle (none is the top), the circle's oldest (:meth:`_walk`): its row holds them
        all, as the database's listing shows one of a circle."""
        return self._walk(path, info).top

    def _walk(self, path: Path, info: Mapping[str, Any]) -> _Walked:
        """:meth:`top`, with the circle of leads the walk up from ``path`` came round (from its
        oldest: :meth:`_oldest`), and whether its leads go deeper than a sub-agent nests
        (:data:`~turnfold.nesting.MAX_DEPTH`)."""
        seen = [path]
        documents: dict[Path, Mapping[str, Any]] = {path: info}
        current, document = path, info
        # Up to MAX_DEPTH leads: a session that many sub-agents deep still nests in its top.
        while len(seen) <= MAX_DEPTH + 1:
            parent = document.get("parentID")
            if not isinstance(parent, str) or not parent:
                return _Walked(current)
            lead = self.referenced(parent)
            if lead is None or lead == current:  # naming itself, it names no lead (_NO_LEAD)
                return _Walked(current)
            if lead in seen:
                circle = self._oldest(seen[seen.index(lead) :], documents)
                return _Walked(circle[0], circle=circle)
            lead_info = opencode_filing.document(lead)
            if not lead_info:
                return _Walked(current)
            seen.append(lead)
            documents[lead] = lead_info
            current, document = lead, lead_info
        return _Walked(path, deep=True)

    @staticmethod
    def _oldest(circle: list[Path], documents: Mapping[Path, Mapping[str, Any]]) -> list[Path]:
        """``circle`` turned to start at its oldest session (``time.created``, then the file's
        name), as :meth:`roots` orders them."""

        def age(path: Path) -> tuple[int, str]:
            return as_int(_mapping(documents[path].get("time")).get("created")) or 0, path.stem

        first = min(range(len(circle)), key=lambda i: age(circle[i]))
        return circle[first:] + circle[:first]

    def circled(self, session: Session) -> str | None:
        """What a warning says of the circle of leads ``session`` is in; None when it is in
        none."""
        if session.file is None:
            return None
        circle = self._walk(session.file, session.info).circle
        if circle is None or session.file not in circle:
            return None
        return _circled([path.stem for path in circle], "parentID")

    def roots(self) -> list[tuple[str, str]]:
        """The sessions that are rows of their own (:meth:`top`), oldest first."""
        found = []
        # Every file of session/<projectID>/, as OpenCode reads them: keyed by its name.
        for path in sibling_files(self.root / "session", "*/*.json", self.not_listed):
            info = self.document(path, "session")
            if info is not None and self.top(path, info) == path:
                created = as_int(_mapping(info.get("time")).get("created")) or 0
                found.append((created, path.stem, stringify(info.get("title", ""))))
        return [(i, t) for _, i, t in sorted(found)]

    def holding(self, held: str) -> str | None:
        """Where the id ``held`` is a session's file's name it is not (a ``sample=`` taken from
        inside a file named otherwise): said, with the name it is read by."""
        path = opencode_filing.holders(self.root).found.get(held)
        if path is None:
            return None
        return (f"{path} holds that id, but OpenCode keys a session by its file's name: "
                f"sample={path.stem!r}")  # fmt: skip

    def filed(self, kind: str, key: str, document: Mapping[str, Any], path: Path) -> list[Path]:
        """The files of what ``key`` (a session's or a message's file name) owns: its messages'
        (``message/<key>/``) or its parts' (``part/<key>/``). A document whose ``id`` is not its
        file's name is read by the name, as OpenCode reads it (its 1.2 migration: "Derive all
        IDs from directory/file paths, not JSON content"), with a warning; what was filed
        under the id it holds instead is read with it too, never left out unsaid (C-7)."""
        record_type = "session" if kind == "message" else "message"
        files = sibling_files(self.root / kind / key, "*.json", self.not_listed)
        held = document.get("id")
        if not isinstance(held, str) or held == key:
            return files
        self.warn(f"{path}: holds the id {held!r}, not its file's name: read as {key} (OpenCode "
                  "keys a file by its name)", record_type)  # fmt: skip
        if _NAME.match(held) is None or held in (".", ".."):
            return files
        more = sibling_files(self.root / kind / held, "*.json", self.not_listed)
        if more:
            self.warn(f"{self.root / kind / held}: {len(more)} file(s) filed under the id "
                      f"{held!r} that {path.name} holds, not under its name: read with it",
                      record_type)  # fmt: skip
        return files + more

    def session(self, session_id: str) -> Session | None:
        """The session whose file is named ``session_id`` (a ``sample=``, or the session a file
        of it was named by)."""
        path = self.session_file(session_id)
        return self._read(path) if path is not None else None

    def child(self, session_id: str) -> Session | None:
        """The session a ``task`` call names by its id (:meth:`referenced`), to nest under the
        call; None, said, when it is a row of its own (its file its own :meth:`top`: it names
        no lead here, or is the oldest of a circle), which shows it there once, never also
        under the call."""
        path = self.referenced(session_id)
        if path is None:
            return None
        info = opencode_filing.document(path)
        if info:
            walked = self._walk(path, info)
            if walked.top == path:
                if walked.circle:
                    why = "it is the oldest of a circle of sessions naming each other as lead"
                elif walked.deep:
                    why = f"its leads go deeper than the {MAX_DEPTH} sub-agents that nest"
                else:
                    why = "its parentID leads to no session here"
                self.source.warn(_shown_apart(session_id, why))
                return None
        return self._read(path)

    def _read(self, path: Path) -> Session | None:
        info = self.document(path, "session")
        if info is None:
            return None
        key = path.stem
        self.source.mapped("session")
        parent = info.get("parentID")
        if isinstance(parent, str) and parent and self._lead(parent) is None:
            self.source.warn(_leadless(key, parent, f"{self.root}"))
        messages: list[tuple[Any, str, Path, dict[str, Any]]] = []
        for file in self.filed("message", key, info, path):
            data = self.document(file, "message")
            if data is not None:
                created = as_int(_mapping(data.get("time")).get("created")) or 0
                messages.append((created, file.stem, file, data))
        messages.sort(key=lambda m: m[:2])  # as the database orders them: by time, then id
        read = []
        # The folders of parts read with their messages (under a message's name or the id
        # it holds): a part there is no loose one, whatever its message's file is named.
        taken: set[str] = set()
        for _, message_id, file, data in messages:
            message = Message({**data, "id": message_id})
            parts = self.filed("part", message_id, data, file)
            taken.update(part.parent.name for part in parts)
            taken.add(message_id)
            for part in sorted(parts, key=lambda f: f.stem):  # by id, as OpenCode orders them
                found = self.document(part, "part")
                if found is not None:
                    message.parts.append({**found, "id": part.stem})
            read.append(message)
        self._loose(key, info.get("id"), taken, read)
        return Session({**info, "id": key}, read, file=path)

    def _lead(self, parent: str) -> Path | None:
        """The readable file of the lead a ``parentID`` names (:meth:`referenced`), as
        :meth:`top` finds it; None when there is none."""
        lead = self.referenced(parent)
        return lead if lead is not None and opencode_filing.document(lead) else None

    def unclaimed(self, lead: Session, named: frozenset[str]) -> list[Session]:
        """The sessions whose ``parentID`` leads to ``lead``'s file (:meth:`referenced`, as
        :meth:`top` follows it: the sub-agents no row of their own shows) and that no id of
        ``named`` names (by its file's name or the id it holds), read, oldest first
        (:data:`Unclaimed`)."""
        path = lead.file
        if path is None:
            return []
        held = opencode_filing.document(path).get("id")
        ids = {path.stem} | ({held} if isinstance(held, str) and held else set())
        children = self._filed(opencode_filing.sub_agents(self.root))
        found: list[tuple[Any, str, Session]] = []
        for parent in sorted(ids):
            for file in children.get(parent, ()):
                document = opencode_filing.document(file)
                own = document.get("id")
                if (
                    file == path
                    or document.get("parentID") != parent  # changed since it was learned
                    or file.stem in named
                    or (isinstance(own, str) and own in named)
                    or self.referenced(parent) != path
                ):
                    continue
                session = self._read(file)
                if session is not None:
                    created = as_int(_mapping(session.info.get("time")).get("created")) or 0
                    found.append((created, file.stem, session))
        return [session for _, _, session in sorted(found, key=lambda f: f[:2])]

    def _loose(self, key: str, held: Any, taken: set[str], read: list[Message]) -> None:
        """The parts that name this session (by its name, or the id its file holds) and lie in
        ``part/`` with no message's file of theirs, put in ``read``: a message of each folder,
        where its id places it among the others (OpenCode's ids ascend in time), as the
        assistant's where a part is of a step, else as the user's; said in one warning (the
        count, the first file), never left out unsaid. Most are a reverted message's, whose
        file OpenCode deleted: the warning says they may be steps undone."""
        filing = self._filed(opencode_filing.loose_parts(self.root))
        found = list(filing.get(key, ()))
        if isinstance(held, str) and held != key:
            found += filing.get(held, ())
        found = [part for part in found if part.parent.name not in taken]
        if not found:
            return
        by_message: dict[str, list[Path]] = {}
        for part in sorted(found):
            by_message.setdefault(part.parent.name, []).append(part)
        loose = {
            message_id: [
                {**document, "id": file.stem}
                for file in sorted(files, key=lambda f: f.stem)
                if (document := self.document(file, "part")) is not None
            ]
            for message_id, files in by_message.items()
        }
        told = _place_loose(read, loose, key)
        self.warn(f"{len(found)} part file(s) of session {key} lie in storage/part/ with no file "
                  f"of their message (first: {sorted(found)[0]}): read where their ids place "
                  f"them, as {told} message(s), told by their parts; OpenCode deletes a "
                  "reverted message's file and leaves its parts, so they may be steps undone",
                  None)  # fmt: skip


def _place_loose(read: list[Message], loose: Mapping[str, list[Any]], session_id: str) -> str:
    """Puts in ``read`` a message of each id of ``loose`` (the parts of a message whose own
    record is missing, by its id) where its id places it among the others (OpenCode's ids
    ascend in time), as the assistant's where a part is of a step, else as the user's; what
    they were read as (``1 assistant and 2 user``), for the warning that says them."""
    roles: dict[str, int] = {}
    for message_id in sorted(loose):
        parts = loose[message_id]
        kinds = {part.get("type") for part in parts if isinstance(part, Mapping)}
        role = "assistant" if kinds & _STEP_PARTS else "user"
        roles[role] = roles.get(role, 0) + 1
        info = {"id": message_id, "sessionID": session_id, "role": role}
        at = max((i + 1 for i, m in enumerate(read) if str(m.info["id"]) < message_id),
                 default=0)  # fmt: skip
        read.insert(at, Message(info, parts, recorded=False))
    return " and ".join(f"{count} {role}" for role, count in sorted(roles.items()))


def _chosen(store: _Database | _Storage, where: Path, sample: Any) -> Session:
    """The session ``sample`` names of a store; with none, its only top-level session."""
    if sample is None:
        roots = store.roots()
        if len(roots) != 1:
            ids = [i for i, _ in roots]
            raise unselected(where, ids, None, "OpenCode session", "<session id>")
        sample = roots[0][0]
    session = store.session(str(sample))
    if session is None:
        said = store.source.warnings[-1].reason if store.source.warnings else None
        if said is None and isinstance(store, _Storage):
            said = store.holding(str(sample))
        ids = [i for i, _ in store.roots()]
        raise unselected(where, ids, sample, "OpenCode session", "<session id>", because=said)
    circled = store.circled(session)
    if circled is not None:
        store.source.warn(circled)
    return session


def _read_storage(
    root: Path,
    source: Source,
    sample: Any,
    session_id: str | None,
    store: _Storage | None = None,
) -> Transcript:
    """A session of a ``storage/`` folder: ``session_id`` (a file of it was named), or the one
    ``sample`` names; ``store``, the folder's as the lookup of the file's session read it (what
    it said is not said again)."""
    if session_id is not None:
        if sample is not None and sample != session_id:
            raise ValueError(f"{source.name} is a file of OpenCode session {session_id}, "
                             f"not {sample}")  # fmt: skip
        sample = session_id
    store = store if store is not None else _Storage(root, source)
    reader = SessionReader(source, store.child, unclaimed=store.unclaimed)
    transcript = reader.read(_chosen(store, root, sample))
    store.tell_over()
    return transcript


def _owner(path: Path, kind: str, document: Mapping[str, Any], not_listed: NotListed) -> str | None:
    """The session a file of ``storage/`` is part of, by its place as OpenCode keys it: a
    session's file's name, a message's folder's, a part's message's folder's (the part's own
    ``sessionID`` when its message's file is not there); None when none tells. A folder of
    messages looked in that cannot be listed is told to ``not_listed``."""
    if kind == "session":
        return path.stem
    if kind == "message":
        return path.parent.name
    messages = path.parents[2] / "message"
    held = document.get("sessionID")
    if (
        isinstance(held, str)
        and _NAME.match(held)
        and held not in (".", "..")
        and found_file(messages / held / f"{path.parent.name}.json", not_listed)
    ):
        return held  # as OpenCode writes it: one look, never a walk of every session's folder
    for file in sibling_files(messages, f"*/{escape(path.parent.name)}.json", not_listed):
        return file.parent.name
    return held if isinstance(held, str) else None


def _leadless(session_id: str, parent: str, where: str) -> str:
    """What a warning says of a sub-agent's session whose lead is not where it is read: it is a
    row of its own (:meth:`_Database.roots`, :meth:`_Storage.top`), its lead's calls unseen."""
    return (f"session {session_id} is a sub-agent's: its lead, session {_clipped(parent)} (its "
            f"parentID), is not in {where}: shown as a session of its own")  # fmt: skip


def _clipped(session_id: str) -> str:
    """An id as a warning names it: a hostile one no longer than a line."""
    return session_id if len(session_id) <= 80 else f"{session_id[:80]}…"


def _shown_apart(session_id: str, why: str) -> str:
    """What a warning says of a sub-agent's session a ``task`` call names that is a session of
    its own (a row of the listing): shown there, once, not under the call too."""
    return (f"session {_clipped(session_id)}, the sub-agent a task call names, is a session of "
            f"its own ({why}): shown there, not under the call")  # fmt: skip


def _circled(circle: list[str], field: str) -> str:
    """What a warning says of a circle of sessions naming each other as lead (``field``), from
    its oldest, which is shown as a session of its own, the others under it."""
    ids = [_clipped(session_id) for session_id in circle]
    return (f"sessions {' → '.join([*ids, ids[0]])} name each other as lead ({field}), round in "
            f"a circle: none is a top-level session, so the oldest, {ids[0]}, is shown as one, "
            "the others under it")  # fmt: skip


def _task_of(title: str | None) -> tuple[str | None, str | None]:
    """The task and the agent of a sub-agent's session by its title, which OpenCode's ``task``
    tool writes as ``<description> (@<agent> subagent)`` (``src/tool/task.ts``: 1.1.65's
    sessions in ``fixtures/opencode/v1.1``, and the 1.18.33 binary's ``title:
    m.description+` (@${b.name} subagent)```); a title of another shape is the task."""
    found = _SUBAGENT_TITLE.match(title or "")
    if found is None:
        return title, None
    return found[1], found[2]


def _unread(kind: str, session_id: str | None) -> str:
    """Why no session of its ``storage/`` folder reads a message's or a part's file."""
    if session_id is None:
        return (f"an OpenCode {kind} file (before 1.2) whose message's file is not in its "
                "storage/ folder, and that names no session: no session reads it")  # fmt: skip
    return (f"an OpenCode {kind} file (before 1.2) of session {session_id}, whose file is not "
            "in its storage/ folder (deleted, its files left behind): no session reads "
            "it")  # fmt: skip


def legacy_session_file(path: Path) -> Path | None:
    """The file of the session whose row holds a file of ``storage/``: of a message's or a
    part's session (:func:`_owner`), or of a session, its top-level lead's
    (:meth:`_Storage.top`); None when no session there reads the file (a message or a part
    whose session's file is missing: its leftovers, which a scan says)."""
    kind = legacy_kind(path)
    if kind is None:
        return None
    store = _Storage(path.parents[2], Source(str(path), iter(())))
    found: Path | None = path
    if kind != "session":
        document = opencode_filing.document(path) if kind == "part" else {}
        owner = _owner(path, kind, document, store.not_listed)
        found = store.referenced(owner) if owner is not None else None
    if found is None:
        return None
    info = opencode_filing.document(found)
    return store.top(found, info) if info else found


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session ``sample`` names (by its id) of the database at ``path``; with none, its
    only session (sub-agents' aside). Before 1.2: the session a file of ``storage/`` is part
    of, or the one ``sample`` names of the ``storage/`` folder (or the data folder)."""
    if epoch is not None:
        raise ValueError(f"{path} is OpenCode's: its sessions have no epochs")
    if path.is_dir():
        unlisted = Unlisted()
        held = databases_in(path, unlisted)
        if held:  # 1.2 and later: the files were copied into it
            return read_path(held[0], sample=sample)
        storage = _storage_told(path, unlisted)
        if storage is None:
            unlisted.not_mine(path)
            raise ValueError(f"{path} is no OpenCode storage folder (session/, message/, part/)")
        source = Source(str(path), iter(()), path=path)
        for folder, error in unlisted.folders:  # a channel build's database may be there
            source.warn(folder_not_listed(folder, error, "databases of sessions (*.db)"))
        return source.hand_over(_read_storage(storage, source, sample, None))
    if not databases.is_database(path):  # an export or a file of storage/, as load(path) names it
        return read_file(path, lambda source: read(source, sample=sample, epoch=epoch))
    source = Source(str(path), iter(()), path=path)
    try:
        db = databases.connect(path)
    except sqlite3.Error as exc:
        raise databases.unreadable(path, NAME, exc) from None
    with contextlib.closing(db):
        try:
            store = _Database(db, source)
            reader = SessionReader(source, store.child, unclaimed=store.unclaimed)
            transcript = reader.read(_chosen(store, path, sample))
            if _is_kilo(db, path):
                transcript.metadata["agent"] = KILO_AGENT
        except sqlite3.Error as exc:
            raise databases.unreadable(path, NAME, exc) from None
    return source.hand_over(transcript)


def _is_kilo(db: sqlite3.Connection, path: Path) -> bool:
    """Whether the database is Kilo Code's: named ``kilo.db`` (``kilo-<channel>.db``), or holding
    a table of Kilo's own beside OpenCode's (``kilo_board``…), as a copy of another name still
    does."""
    if is_kilo_database_name(path.name):
        return True
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name LIKE 'kilo\\_%' ESCAPE '\\'"
    )
    return found.fetchone() is not None


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session of an export (``sample``, if given, must name it)."""
    if epoch is not None:
        raise ValueError(f"{source.name} is an OpenCode export: its session has no epochs")
    placed = legacy_kind(source.path) if source.path is not None else None
    for line, record in source.records():
        if placed is not None and source.path is not None and isinstance(record, Mapping):
            # Keyed by its file's name and place, as OpenCode keys it: the ids inside may
            # differ (said when it is read).
            root = source.path.parents[2]
            store = _Storage(root, source)
            owner = _owner(source.path, placed, record, store.not_listed)
            found = store.referenced(owner) if owner is not None else None
            if found is None:
                raise TranscriptFormatError(source.name, [NAME], line, _unread(placed, owner))
            return _read_storage(root, source, sample, found.stem, store)
        kind = legacy_document(record)
        if kind is not None:
            raise TranscriptFormatError(source.name, [NAME], line, f"an OpenCode {kind} file "
                                        "(before 1.2) is read in its storage/ folder, by its "
                                        "path")  # fmt: skip
        if isinstance(record, MalformedLine) or not _is_export(record):
            reason = record.reason if isinstance(record, MalformedLine) else "no OpenCode export"
            raise TranscriptFormatError(source.name, [NAME], line, reason)
        source.mapped("session")
        if sample is not None and sample != record["info"]["id"]:
            raise ValueError(f"{source.name} is the export of {record['info']['id']}, not {sample}")
        messages = []
        for index, raw in enumerate(record["messages"]):
            info = raw.get("info") if isinstance(raw, Mapping) else None
            parts = raw.get("parts") if isinstance(raw, Mapping) else None
            if not isinstance(info, Mapping) or not isinstance(parts, list):
                source.warn(f"message #{index}: no info and parts", line, record_type="message")
                continue
            messages.append(Message(info, parts))
        return SessionReader(source, None, line=line).read(Session(record["info"], messages))
    raise TranscriptFormatError(source.name, [NAME], None, "the source is empty")


# --- one session ----------------------------------------------------------------------------------


def _unfinished(info: Mapping[str, Any]) -> bool:
    """Whether a stored assistant message was cut off with its process: OpenCode records a
    response's end (``time.completed``, its ``finish`` reason) or why it stopped (``error``),
    and a message it created (``time.created``) with none of them never ended, though no abort
    was recorded; its turn was stopped, not completed (P-7). A ``run --format json`` stream's
    message (:mod:`~turnfold.formats.agents.opencode_json`) has no times of its own to tell."""
    times = _mapping(info.get("time"))
    return bool(times.get("created")) and not times.get("completed") and not info.get("finish")


def iso_time(ms: Any) -> str | None:
    """An OpenCode time (ms since the epoch) as ISO 8601."""
    return epoch_iso(ms, per_second=1000, timespec="milliseconds")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _cost(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return float(value)


def step_usage(tokens: Any) -> Any:
    """OpenCode's ``tokens`` (input without the cache, output without the reasoning) as a
    :class:`~turnfold.model.Usage` in turnfold's convention; None when it counts nothing."""
    tokens = _mapping(tokens)
    cache = _mapping(tokens.get("cache"))
    counts = [as_int(tokens.get(k)) for k in ("input", "output", "reasoning")]
    read, write = as_int(cache.get("read")), as_int(cache.get("write"))
    given, output, reasoning = counts
    if not any((given, output, reasoning, read, write)):
        return None  # an unfinished message's zeros: nothing was counted
    full_input = None if given is None else given + (read or 0) + (write or 0)
    full_output = None if output is None else output + (reasoning or 0)
    # Before OpenCode took the reasoning out of ``output`` (1.1.65 had not, 1.18 has), output
    # held it: the provider's ``total`` is then the other counts without the reasoning.
    total = as_int(tokens.get("total"))
    if reasoning and full_input is not None and total == full_input + (output or 0):
        full_output = output
    return counted_usage(full_input, full_output, read, write, reasoning)


def _image(part: Mapping[str, Any]) -> ImageData | None:
    url, mime = part.get("url"), part.get("mime")
    if not (isinstance(url, str) and isinstance(mime, str) and mime.startswith("image/")):
        return None
    if url.startswith("data:") and ";base64," in url:
        return ImageData(media_type=mime, data=url.split(";base64,", 1)[1])
    return None


class SessionReader:
    """Builds one session's transcript, its sub-agents' sessions nested (``child``: a session
    by id, None for an export, which holds none)."""

    def __init__(
        self,
        source: Source,
        child: Callable[[str], Session | None] | None,
        *,
        line: int | None = None,
        depth: int = 0,
        seen: frozenset[str] = frozenset(),
        accounts: bool = True,
        unclaimed: Unclaimed | None = None,
    ) -> None:
        self.source = source
        #: The store's sub-agents no call of a session names (:data:`Unclaimed`); None for an
        #: export or a stream, which hold none.
        self.unclaimed = unclaimed
        #: The sub-agents' ids this session's ``task`` calls name, found or not.
        self.claimed: set[str] = set()
        #: Whether the parts are the source's records (False: the records are events that
        #: carry them, accounted for by their reader, ``opencode-json``).
        self.accounts = accounts
        self.child = child
        self.line = line
        self.depth = depth
        #: The sessions on the way down from the top to this one, this one's id included.
        self.seen = seen
        self.session_id: Any = None
        self.transcript = Transcript()
        self.model: str | None = None
        self.provider: str | None = None
        self.costs: list[float] = []
        self.open: list[ToolCall] = []
        #: The session's working folder, that its calls' paths are shown relative to.
        self.cwd: str | None = None

    def warn(self, reason: str, record_type: str) -> None:
        self.source.warn(reason, self.line, record_type=record_type if self.accounts else None)

    def note(self, record_type: str, disposition: str = "mapped") -> None:
        if self.accounts:
            self.source.note(record_type, disposition)  # type: ignore[arg-type]

    def add(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def read(self, session: Session) -> Transcript:
        info = session.info
        self.session_id = info.get("id")
        self.seen = self.seen | {str(self.session_id)}
        self.cwd = as_text(info.get("directory"))
        for message in session.messages:
            role = message.info.get("role")
            if role in ("user", "assistant") and message.recorded:
                self.note(f"message/{role}")
            if role == "user":
                self._user(message)
            elif role == "assistant":
                self._assistant(message)
            else:
                self.warn(f"message {message.info.get('id')}: unknown role {role!r}", "message")
        self._unclaimed(session)
        for call in self.open:  # still pending or running: the process was stopped (L-3)
            if call.status in ("pending", "executing"):
                self.transcript.update(call, status="unknown")
        self._metadata(info)
        return self.transcript

    def _unclaimed(self, session: Session) -> None:
        """The sub-agents whose ``parentID`` names this session and that none of its ``task``
        calls names (its call's part lost, a version recording the link otherwise), each under
        a call of its own whose outcome is unknown, and said in a warning naming it, as Claude
        Code's reader shows an agent file no call claims. They are no row of their own (their
        lead is here), so left out they would be dropped unsaid. Each is placed where its
        session's start places it among the lead's entries (in the turn that ran it, not the
        last), at the end when it has none."""
        if self.unclaimed is None:
            return
        lead = session.info.get("id")
        found = self.unclaimed(session, frozenset(self.claimed | self.seen))
        if self.depth >= MAX_DEPTH:
            for sub in found:
                self._too_deep(sub.info.get("id"))
            return
        for sub in found:
            sub_id = str(sub.info.get("id"))
            self.source.warn(f"sub-agent session {sub_id} names session {lead} as its lead "
                             "(parentID), but no task call of it names the sub-agent: shown "
                             "where its start places it", self.line)  # fmt: skip
            task, agent = _task_of(as_text(sub.info.get("title")))
            subagent = SubAgent(name=as_text(sub.info.get("agent")) or agent, task=task,
                                agent_id=sub_id)  # fmt: skip
            self._nest(subagent, sub)
            assert subagent.transcript is not None
            started = subagent.transcript.metadata.get("started_at")
            self.add(ToolCall(
                call_id=f"task:{sub_id}", name="task",
                args={"description": task} if task else {}, description=task,
                status="unknown", started_at=started, timestamp=started, subagent=subagent,
                meta={"synthetic": "unclaimed sub-agent session"},
            ))  # fmt: skip
            entries = self.transcript.entries
            if isinstance(started, str):
                # Every time of this reader is iso_time's, one fixed-width form in UTC: they
                # order as text. No view observes a transcript being read: moved in place.
                at = next((i for i, e in enumerate(entries[:-1])
                           if isinstance(e.timestamp, str) and e.timestamp > started),
                          len(entries) - 1)  # fmt: skip
                entries.insert(at, entries.pop())

    def _metadata(self, info: Mapping[str, Any]) -> None:
        meta = self.transcript.metadata
        meta["source_format"] = NAME
        for key, value in (
            ("session_id", info.get("id")),
            ("title", info.get("title")),
            ("cwd", info.get("directory")),
            ("version", info.get("version")),
            ("parent_session_id", info.get("parentID")),
            ("model", self.model),
            ("model_provider", self.provider),
        ):
            if as_text(value) is not None:
                meta[key] = value
        started = self._created(info, f"session {info.get('id')}", "session")
        if started is not None:
            meta["started_at"] = started
        total = step_usage(info.get("tokens"))
        if total is not None:  # the session's own responses, its sub-agents' sessions apart
            meta["session_usage"] = counts_of(total)
        # A model without prices in OpenCode's catalogue costs 0: no cost was recorded.
        cost = _cost(info.get("cost")) or sum(self.costs)
        if cost > 0:
            meta["cost_usd"] = round(cost, 6)

    def _created(self, info: Mapping[str, Any], what: str, record_type: str) -> str | None:
        """The ``time.created`` of a session or a message as ISO 8601 (:meth:`_time`)."""
        return self._time(_mapping(info.get("time")).get("created"), what, record_type)

    def _time(self, value: Any, what: str, record_type: str, name: str = "time") -> str | None:
        """An OpenCode time as ISO 8601; one that is no time (no number, before the epoch or
        past the calendar) is left out with a warning naming its record, which is still read."""
        return warned_timestamp(value, iso_time, lambda reason: self.warn(reason, record_type),
                                what, name=name, unit="ms since the epoch")  # fmt: skip

    def _part_time(self, part: Mapping[str, Any], times: Any, key: str) -> str | None:
        """A part's ``time.start`` or ``time.end`` (a tool part's are its ``state``'s)."""
        return self._time(_mapping(times).get(key), f"part {part.get('id')}",
                          f"part/{part.get('type')}", f"time.{key}")  # fmt: skip

    def _not_read(self, part: Any, exc: Exception) -> None:
        """A part of a shape no version seen here wrote tripped the reader: that part is warned
        of, and the rest of the session is read (L-4)."""
        if isinstance(exc, (TranscriptFormatError, MemoryError)):
            raise exc
        kind = part.get("type") if isinstance(part, Mapping) else None
        who = part.get("id") if isinstance(part, Mapping) else None
        self.warn(f"part {who}: not read: {type(exc).__name__}: {exc}", f"part/{kind}")

    # --- user -------------------------------------------------------------------------------

    def _user(self, message: Message) -> None:
        stamp = self._created(message.info, f"message {message.info.get('id')}", "message/user")
        texts: list[str] = []
        images: list[ImageData] = []
        after: list[Entry] = []
        for part in message.parts:
            kind = part.get("type") if isinstance(part, Mapping) else None
            try:
                if kind == "text" and not (part.get("synthetic") or part.get("ignored")):
                    self.note("part/text")
                    texts.append(stringify(part.get("text", "")))
                elif kind == "file" and (image := _image(part)) is not None:
                    self.note("part/file")
                    images.append(image)
                else:
                    after.extend(self._other(part))
            except Exception as exc:
                self._not_read(part, exc)
        if texts or images:
            user = UserMessage(text="\n\n".join(texts), images=images, timestamp=stamp)
            user.meta["message_id"] = message.info.get("id")
            self.add(user)
        for entry in after:
            if entry.timestamp is None:
                entry.timestamp = stamp
            self.add(entry)

    def _other(self, part: Any) -> list[Entry]:
        """A part of a kind that is neither the prompt nor a step's: notices and boundaries."""
        if not isinstance(part, Mapping):
            self.warn(f"a part that is no object: {type(part).__name__}", "part")
            return []
        kind = part.get("type")
        record_type = f"part/{kind}"
        if kind == "text":  # synthetic: what OpenCode added to the prompt itself
            self.note(record_type)
            return [SystemNotice(text=stringify(part.get("text", "")), subtype="synthetic")]
        if kind == "file":
            self.note(record_type)
            name = as_text(part.get("filename")) or as_text(part.get("url"))
            params = {"name": name, "mime": part.get("mime")}
            return [notice("reader.attached" if name else "reader.attached.file", params,
                           subtype="file")]  # fmt: skip
        if kind == "agent":
            self.note(record_type)
            return [SystemNotice(text=f"@{part.get('name')}", subtype="agent")]
        if kind == "subtask":
            self.note(record_type)
            what = as_text(part.get("description")) or as_text(part.get("prompt")) or ""
            params = {"agent": part.get("agent"), "what": what}
            return [notice("reader.subtask", params, subtype="subtask")]
        if kind == "compaction":
            self.note(record_type)
            trigger = "auto" if part.get("auto") else "manual"
            return [CompactionBoundary(trigger=trigger)]
        if kind == "patch":
            self.note(record_type)
            files = [f for f in part.get("files") or [] if isinstance(f, str)]
            return [notice("reader.files_changed", {"files": ", ".join(files)}, subtype="patch")]
        if kind == "retry":
            self.note(record_type)
            error = _mapping(part.get("error"))
            said = as_text(_mapping(error.get("data")).get("message")) or as_text(error.get("name"))
            key = "reader.retry_attempt.said" if said else "reader.retry_attempt"
            when = self._part_time(part, part.get("time"), "created")  # the retry's own moment
            return [notice(key, {"attempt": part.get("attempt"), "said": said}, level="warning",
                           subtype="retry", timestamp=when)]  # fmt: skip
        if kind in ("step-start", "snapshot"):
            self.note(record_type, "ignored")
            return []
        self.warn(f"part {part.get('id')}: unknown type {kind!r}", record_type)
        return []

    # --- assistant --------------------------------------------------------------------------

    def _assistant(self, message: Message) -> None:
        info = message.info
        model = as_text(info.get("modelID"))
        self.model = model or self.model
        self.provider = as_text(info.get("providerID")) or self.provider
        stamp = self._created(info, f"message {info.get('id')}", "message/assistant")
        begin = step = len(self.transcript.entries)
        stepped = False
        for part in message.parts:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "step-finish":
                self.note("part/step-finish")
                stepped = True
                self._usage(self.transcript.entries[step:], part.get("tokens"), part.get("cost"),
                            model)  # fmt: skip
                step = len(self.transcript.entries)
                continue
            if kind == "step-start":
                step = len(self.transcript.entries)
            try:
                made = self._part(part, model)
            except Exception as exc:
                self._not_read(part, exc)
                continue
            for entry in made:
                if entry.timestamp is None:
                    entry.timestamp = stamp
                self.add(entry)
        if not stepped:  # no step recorded its tokens (an older version, a step cut off)
            self._usage(self.transcript.entries[begin:], info.get("tokens"), info.get("cost"),
                        model)  # fmt: skip
        if info.get("summary") is True:  # the summary a compaction wrote
            for entry in self.transcript.entries[begin:]:
                entry.meta["compaction_summary"] = True
        error = _mapping(info.get("error"))
        if error:
            said = as_text(_mapping(error.get("data")).get("message")) or stringify(error)
            if error.get("name") == ABORTED_ERROR:
                self.add(AbortMarker(reason=said, timestamp=stamp))
            else:
                self.add(AssistantError(message=said, timestamp=stamp))
        elif _unfinished(info):
            self.add(stop("reader.response_unfinished", timestamp=stamp))  # UNFINISHED

    def _usage(self, entries: list[Entry], tokens: Any, cost: Any, model: str | None) -> None:
        usage = step_usage(tokens)
        if usage is not None:
            attach_usage(entries, usage, model=model)
        spent = _cost(cost)
        carrier = usage_carrier(entries)
        if spent is not None and carrier is not None:
            if spent:
                carrier.meta["cost_usd"] = spent
            self.costs.append(spent)

    def _part(self, part: Any, model: str | None) -> list[Entry]:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            self.note("part/text")
            if part.get("synthetic"):
                return self._other(part)
            start = self._part_time(part, part.get("time"), "start")
            return [AssistantText(text=stringify(part.get("text", "")), model=model,
                                  timestamp=start)]  # fmt: skip
        if kind == "reasoning":
            self.note("part/reasoning")
            text = stringify(part.get("text", ""))
            start = self._part_time(part, part.get("time"), "start") if text else None
            return [Thinking(text=text, timestamp=start)] if text else []
        if kind == "tool":
            self.note("part/tool")
            return [self._call(part)]
        return self._other(part)

    def _call(self, part: Mapping[str, Any]) -> ToolCall:
        state = _mapping(part.get("state"))
        name = stringify(part.get("tool", ""))
        args = state.get("input")
        metadata = _mapping(state.get("metadata"))
        times = _mapping(state.get("time"))
        start, end = times.get("start"), times.get("end")
        started = self._part_time(part, times, "start")
        ended = self._part_time(part, times, "end")
        status, result = self._outcome(state, metadata)
        call = ToolCall(
            call_id=stringify(part.get("callID") or part.get("id") or ""),
            name=name,
            args=args,
            description=describe_args(name, args, self.cwd) or as_text(state.get("title")),
            status=status,
            result=result,
            started_at=started,
            ended_at=ended,
            timestamp=started,
        )
        if (
            started is not None  # a time left out is no end of a duration either
            and ended is not None
            and isinstance(start, (int, float))
            and isinstance(end, (int, float))
            and end >= start
        ):
            call.duration_ms = float(end - start)
        exit_code = as_int(metadata.get("exit"))
        if exit_code is not None:
            call.meta["exit_code"] = exit_code
        if name == "task":
            call.subagent = self._subagent(args, metadata)
        if status in ("pending", "executing"):
            self.open.append(call)
        return call

    @staticmethod
    def _outcome(
        state: Mapping[str, Any], metadata: Mapping[str, Any]
    ) -> tuple[ToolStatus, ToolResult | None]:
        status = state.get("status")
        if status == "completed":
            images = [i for a in as_list(state.get("attachments")) if (i := _image(_mapping(a)))]
            done = text_result(stringify(state.get("output", "")), images=images)
            # OpenCode keeps a command that exited non-zero "completed", its code in metadata.
            return ("error" if as_int(metadata.get("exit")) else "success"), done
        if status == "error":
            error = stringify(state.get("error", ""))
            if metadata.get("interrupted") is True or error == _ABORTED:
                # Stopped by the user's abort: OpenCode keeps what the command had printed in
                # metadata.output (and sends it the model as the call's output).
                shown = partial_output(metadata.get("output"), error) or error
                return "cancelled", text_result(shown)
            return ("cancelled" if error.startswith(_DENIED) else "error"), text_result(error)
        partial = metadata.get("output")
        so_far = text_result(partial) if isinstance(partial, str) and partial else None
        return ("executing" if status == "running" else "pending"), so_far

    def _subagent(self, args: Any, metadata: Mapping[str, Any]) -> SubAgent:
        args = _mapping(args)
        child_id = as_text(metadata.get("sessionId"))
        sub = SubAgent(
            name=as_text(args.get("subagent_type")),
            task=as_text(args.get("prompt")) or as_text(args.get("description")),
            agent_id=child_id,
        )
        session = None
        if child_id is not None:
            self.claimed.add(child_id)
        # A session already on the way down from the top is not nested in itself again.
        if self.child is not None and child_id is not None and child_id not in self.seen:
            session = self.child(child_id)
        if session is not None and self.depth >= MAX_DEPTH:
            # Read to know it is there: never named if it is not. Its steps are recorded (the
            # warning says where), so the call does not say they are missing.
            self._too_deep(child_id)
            return sub
        if session is None:
            sub.steps_missing = True
            return sub
        self._nest(sub, session)
        return sub

    def _too_deep(self, session_id: Any) -> None:
        """Says the sub-agent's session ``session_id`` of this one is not nested: it is one
        level deeper than sub-agents nest (:data:`~turnfold.nesting.MAX_DEPTH`). It loads as a
        session of its own, its own sub-agents nested in it."""
        shown = _clipped(str(session_id))
        what = f"sub-agent session {shown} of session {_clipped(str(self.session_id))}"
        apart = f"sample={shown!r} loads it as a session of its own"
        self.source.warn(too_deep(what, self.depth + 1, apart), self.line)

    def _nest(self, sub: SubAgent, session: Session) -> None:
        """``session`` read as ``sub``'s, a level deeper: its own sub-agents nested in it."""
        nested = SessionReader(self.source, self.child, line=self.line, depth=self.depth + 1,
                               seen=self.seen, unclaimed=self.unclaimed)  # fmt: skip
        sub.transcript = nested.read(session)
        sub.tool_count = sum(isinstance(e, ToolCall) for e in sub.transcript.entries)


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The sessions (id, title) of the database at ``path`` that are rows of their own (with no
    lead there, the oldest of a circle of leads, or with no row: :meth:`_Database.roots`)."""
    with contextlib.closing(databases.connect(path)) as db:
        yield from _Database(db, Source(str(path), iter(()))).roots()
