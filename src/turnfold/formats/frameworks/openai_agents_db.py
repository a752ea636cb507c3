"""The OpenAI Agents SDK's SQLite session store (``SQLiteSession("user_123",
"conversations.db")``, ``agents/memory/sqlite_session.py``; the ``SQLAlchemySession``
extension on a SQLite URL writes the same tables): the database file a notebook keeps its
agents' conversations in, any name the user picks, read only, never written here.

The SDK's layout: a sessions table (by default ``agent_sessions``: ``session_id``,
``created_at``, ``updated_at``) and a messages table (by default ``agent_messages``: ``id``
autoincrement, ``session_id`` a foreign key to the sessions table, ``message_data``: one input
item of the session as JSON, ``created_at``). Both may have other names
(``SQLiteSession(sessions_table=..., messages_table=...)``): they are told by their columns,
a messages table paired with the sessions table its foreign key names.

A session's items, in ``id`` order (``get_items()``'s), are the Responses items
``RunResult.to_input_list()`` gives, read by
:class:`~turnfold.formats.frameworks.openai_agents.AgentsBuilder` (the Responses rules, and the
SDK's default tool-error text makes a call ``error``). The items name no agent, hold no
handoff item and no usage (the SDK keeps neither in a session): a handoff is its
``transfer_to_<agent>`` call, and no usage is shown (L-3). The items hold no time either: each
is dated by its row's ``created_at`` (when the SDK saved it: a run's prompt as it began, the
items it made as it ended; to the second). A ``message_data`` that is no JSON
object is a warning naming its row; the session's other items are read (the SDK's own
``get_items`` skips such a row without a word).

``AdvancedSQLiteSession`` (``agents.extensions.memory``) writes the same two tables and a
``message_structure`` table beside them: a row per item of each *branch* of a session
(``branch_id``, ``sequence_number``; ``create_branch_from_turn`` copies a branch's first turns
into a new one, which then goes its own way), and the messages table then holds every
branch's items. A branched session is read as one branch, as ``get_items(branch_id=...)`` reads
it, never its branches interleaved: the one written last (where the user last ran, the
current branch the SDK keeps in memory only), or the one ``sample="<session id>/<branch
id>"`` names; a warning names the session's other branches.

``sample=`` names a session by its id; a database of one session needs none.
Detection: the SQLite header, then a table with the SDK's messages columns (:func:`detect_path`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnfold import codec
from turnfold.formats import databases
from turnfold.formats.catalog import Records
from turnfold.formats.common import as_text, checked_timestamp, warned_timestamp
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import (
    MalformedLine,
    SampleSelectionError,
    TranscriptFormatError,
    unselected,
)
from turnfold.formats.frameworks import openai_agents
from turnfold.formats.openai_responses import RECORDS as RESPONSES_RECORDS
from turnfold.formats.openai_responses import SILENT_ITEMS
from turnfold.formats.openai_responses import item_record_type as item_type
from turnfold.formats.source import Source
from turnfold.model import Transcript

NAME = "openai-agents-db"
#: A database holds many sessions: ``sample=`` names one by its id.
HAS_SAMPLES = True

RECORDS = Records(
    mapped={
        **RESPONSES_RECORDS.mapped,
        "function_call_output": "settles the call with its call_id: the SDK's default "
        "tool-error text (a tool that raised) → error, any other output unknown",
        "session": "a row of the sessions table: its items (the messages table's rows, in id "
        "order; an AdvancedSQLiteSession's branched session's: one branch's, in its order, "
        'metadata["branch_id"]) read as above; its id → metadata["session_id"], its times → '
        "created_at, updated_at",
    },
    ignored=RESPONSES_RECORDS.ignored,
)

#: The columns that make a table the SDK's messages table (``_create_schema_for_connection``).
_MESSAGE_COLUMNS = frozenset({"id", "session_id", "message_data"})
#: The columns that make a table the SDK's sessions table.
_SESSION_COLUMNS = frozenset({"session_id", "created_at", "updated_at"})
#: The SDK's default names, which pair the two tables when no foreign key does.
_DEFAULTS = ("agent_sessions", "agent_messages")
#: ``AdvancedSQLiteSession``'s table of each branch's items (its name is fixed) and the
#: columns it is read by.
_STRUCTURE = "message_structure"
_STRUCTURE_COLUMNS = frozenset({"session_id", "message_id", "branch_id", "sequence_number"})
#: The ids and times of the tables' rows, read no longer than an id may be
#: (``databases.KEY_BYTES``): a hostile one costs its row, never the database.
_KEYS = ("session_id", "branch_id", "created_at", "updated_at")
#: Of those, the times: one too long to be a time is left out of its row, the row still read.
_TIMES = ("created_at", "updated_at")


@dataclass(frozen=True)
class _Store:
    """One messages table, and the sessions table it belongs to (None: none found, the
    sessions then known by their messages alone)."""

    messages: str
    sessions: str | None
    #: The messages table has the SDK's ``created_at`` column (each item's time).
    dated: bool = False
    #: ``AdvancedSQLiteSession``'s branches of the messages table's items are recorded.
    branched: bool = False


def _stores(db: sqlite3.Connection) -> list[_Store]:
    """The SDK's messages tables of ``db`` (the default one first), each with its sessions
    table."""
    columns = databases.table_columns(db)
    messages = sorted((t for t, c in columns.items() if c >= _MESSAGE_COLUMNS),
                      key=lambda t: (t != _DEFAULTS[1], t))  # fmt: skip
    sessions = [t for t, c in columns.items() if c >= _SESSION_COLUMNS and t not in messages]
    stores = []
    for table in messages:
        named = [row[2] for row in db.execute(f"PRAGMA foreign_key_list({databases.quoted(table)})")
                 if row[3] == "session_id" and row[2] in sessions]  # fmt: skip
        if not named and table == _DEFAULTS[1] and _DEFAULTS[0] in sessions:
            named = [_DEFAULTS[0]]
        elif not named and len(messages) == len(sessions) == 1:
            named = sessions
        dated = "created_at" in columns[table]
        stores.append(_Store(table, named[0] if named else None, dated, _branches_of(db, table)))
    return stores


def _branches_of(db: sqlite3.Connection, messages: str) -> bool:
    """Whether ``AdvancedSQLiteSession``'s structure table records the branches of the items
    of ``messages``: its ``message_id`` references that table (the SDK's own check of which
    pair owns it), or, with no foreign key, ``messages`` is the default table."""
    columns = databases.table_columns(db).get(_STRUCTURE, set())
    if not columns >= _STRUCTURE_COLUMNS:
        return False
    keys = db.execute(f"PRAGMA foreign_key_list({_STRUCTURE})").fetchall()
    owners = [row[2] for row in keys if row[3] == "message_id"]
    return messages in owners if owners else messages == _DEFAULTS[1]


def _layout(path: Path) -> list[_Store] | None:
    """The stores of the SQLite file at ``path``; None when it is no readable SQLite file."""
    return databases.layout(path, _stores)


# --- detection --------------------------------------------------------------------------------


def detect_path(path: Path) -> Evidence | None:
    """The SDK's session database: a SQLite file with a table of its messages columns."""
    return Evidence(share=1.0, marks=1) if _layout(path) else None


def detect(source: Source) -> Evidence:
    """JSON records are never this format's: its sessions are a database (:func:`detect_path`);
    a session's items saved as JSON are ``openai-responses``'."""
    return Evidence.none("no Agents SDK session database (SQLite, read from its file)")


# --- reading ----------------------------------------------------------------------------------


def _iso(value: Any) -> str | None:
    """A ``CURRENT_TIMESTAMP`` (SQLite's UTC ``YYYY-MM-DD HH:MM:SS``) as ISO 8601."""
    text = as_text(value)
    return checked_timestamp(text.replace(" ", "T") + "Z") if text else None


class _Database:
    """The sessions of the SDK's database, read on demand."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.stores = _stores(db)
        #: What the session's warnings say of its rows' ids and times left out.
        self.said: list[str] = []

    def _iso(self, value: Any, what: str, name: str) -> str | None:
        """A time column as ISO 8601 (:func:`_iso`); one that is no time is left out, which
        the session's warnings say (naming its row, which is still read)."""
        return warned_timestamp(value, _iso, self.said.append, what, name=name,
                                unit="SQLite's YYYY-MM-DD HH:MM:SS")  # fmt: skip

    def roots(self) -> list[tuple[str, str]]:
        """Every session (id, title), oldest first: each sessions table's rows, then the
        sessions its messages name that the table lacks. The title is the session's first
        prompt.

        A session whose id is too long to read is listed by a stand-in
        (:func:`databases.listed`), whose load says why: one for each such id, its first
        row's (the session's row, when it has one), however many rows name it
        (:func:`databases.first_of_each`)."""
        # An int: the index in ``long`` of a row naming its session by an id too long to read.
        found: dict[str | int, str] = {}
        long: list[databases.OversizedRow] = []
        for store in self.stores:
            listed = [] if store.sessions is None else databases.rows(
                self.db, store.sessions, "session_id", "ORDER BY created_at, rowid",
                key="session_id", bounded=_KEYS)  # fmt: skip
            # A session id too long to load cannot be grouped by: then every message's in id
            # order, each session's first the one kept (its place in MIN(id) order).
            grouped = databases.rows(self.db, store.messages, "session_id",
                                     "GROUP BY session_id ORDER BY MIN(id)", key="session_id",
                                     bounded=_KEYS, unordered="ORDER BY id")  # fmt: skip
            for row in [*listed, *grouped]:
                if isinstance(row, databases.OversizedRow) and row.key is None:
                    found[len(long)] = "session"
                    long.append(row)
                elif isinstance(row, databases.OversizedRow):  # its load says why, alone
                    found.setdefault(databases.listed(row), "session")
                elif str(row[0]) not in found:
                    found[str(row[0])] = self._title(store, str(row[0]))
        # SQLite refuses to group or compare an id over the record limit, so the messages
        # naming one come back a row each, and a session's row and its messages' rows name it
        # alike: the first row naming each id is kept.
        kept = databases.first_of_each(
            self.db, [(row.table, "session_id", row.rowid) for row in long]
        )
        return [
            (key if isinstance(key, str) else databases.stand_in(long[key]), title)
            for key, title in found.items()
            if isinstance(key, str) or key in kept
        ]

    def _title(self, store: _Store, session_id: str) -> str:
        first = "WHERE session_id = ? ORDER BY id LIMIT 1"
        row = next(databases.rows(self.db, store.messages, "message_data", first, (session_id,)),
                   None)  # fmt: skip
        if isinstance(row, databases.OversizedRow):  # warned of when the session is read
            row = None
        with contextlib.suppress(ValueError, TypeError, UnicodeDecodeError):
            item = codec.loads(row[0]) if row is not None else None
            if isinstance(item, dict) and item.get("role") == "user":
                text = as_text(item.get("content"))
                if text:
                    return text if len(text) <= 60 else text[:59] + "…"
        return "session"

    def find(self, session_id: str) -> tuple[_Store, dict[str, Any]] | None:
        """The store holding the session, and its row's times (empty without a row)."""
        for store in self.stores:
            times: dict[str, Any] = {}
            if store.sessions is not None:
                row, said = databases.row(self.db, store.sessions, "created_at, updated_at",
                                          "WHERE session_id = ?", (session_id,),
                                          key="session_id", bounded=_KEYS)  # fmt: skip
                self.said += said
                if row is not None:
                    what = f"session {session_id}"
                    times = {"created_at": self._iso(row[0], what, "created_at"),
                             "updated_at": self._iso(row[1], what, "updated_at")}  # fmt: skip
            held = self.db.execute(
                f"SELECT 1 FROM {databases.quoted(store.messages)} WHERE session_id = ? LIMIT 1",
                (session_id,),
            ).fetchone()
            if times or held is not None:
                return store, times
        return None

    def branches(self, store: _Store, session_id: str) -> list[str]:
        """The session's branches (``AdvancedSQLiteSession``'s), the one written last last;
        none for a session of a plain ``SQLiteSession``."""
        if not store.branched:
            return []
        found = []
        for row in databases.rows(self.db, _STRUCTURE, "branch_id",
                                  "WHERE session_id = ? GROUP BY branch_id ORDER BY MAX(id)",
                                  (session_id,), key="branch_id", bounded=_KEYS):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                self.said.append(f"a branch of session {session_id}: {row.reason}")
                continue
            found.append(str(row[0]))
        return found

    def items(
        self, store: _Store, session_id: str, branch: str | None = None
    ) -> tuple[list[tuple[int, Any]], dict[int, str]]:
        """The session's items as ``(row id, item)``, in id order (a ``branch``'s in its own
        order, as ``get_items(branch_id=...)`` gives them), and each row's time by its id; a
        row whose ``message_data`` is no JSON object is a :class:`MalformedLine` naming it."""
        found: list[tuple[int, Any]] = []
        stamps: dict[int, str] = {}
        columns = f"m.id, m.message_data, {'m.created_at' if store.dated else 'NULL'}"
        rest = "WHERE m.session_id = ? ORDER BY m.id"
        arguments: tuple[str, ...] = (session_id,)
        if branch is not None:
            rest = (
                f"JOIN {_STRUCTURE} s ON m.id = s.message_id "
                "WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number, s.id"
            )
            arguments = (session_id, branch)
        for row in databases.rows(self.db, store.messages, columns, rest, arguments, alias="m",
                                  bounded=_KEYS, times=_TIMES,
                                  warn=self.said.append):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                found.append((row.rowid, MalformedLine(row.reason, record_type="message row")))
                continue
            row_id, data, created = row
            stamp = self._iso(created, f"message {row_id}", "created_at")
            if stamp is not None:
                stamps[row_id] = stamp
            try:
                item = codec.loads(data) if isinstance(data, (str, bytes)) else None
            except (ValueError, UnicodeDecodeError) as exc:
                found.append((row_id, MalformedLine(
                    f"message {row_id}: its message_data is no JSON ({exc}); skipped",
                    record_type="message row")))  # fmt: skip
                continue
            if not isinstance(item, dict):
                found.append((row_id, MalformedLine(
                    f"message {row_id}: its message_data is no JSON object; skipped",
                    record_type="message row")))  # fmt: skip
                continue
            found.append((row_id, item))
        return found, stamps


class _DatedBuilder(openai_agents.AgentsBuilder):
    """The SDK's builder, each item dated by its row's time (the items carry none): the
    Responses rules then date its entries, a call's start and its output's end alike."""

    def __init__(self, transcript: Transcript, source_name: str, stamps: dict[int, str]) -> None:
        super().__init__(transcript, source_name)
        self.stamps = stamps

    def feed_item(self, item: Mapping[str, Any], line: int, timestamp: str | None = None) -> bool:
        return super().feed_item(item, line, timestamp or self.stamps.get(line))


def _chosen(
    store: _Database, path: Path, sample: Any
) -> tuple[str, _Store, dict[str, Any], str | None]:
    """The session ``sample`` names, and the branch (``<session id>/<branch id>``; None: its
    last one's, or none recorded); with none, the database's only session."""
    if sample is None:
        roots = store.roots()
        if len(roots) != 1:
            ids = [i for i, _ in roots]
            raise unselected(path, ids, None, "Agents SDK session", "<session id>")
        sample = roots[0][0]
    found = store.find(str(sample))
    if found is not None:
        return str(sample), *found, None
    session_id, slash, branch = str(sample).rpartition("/")
    found = store.find(session_id) if slash else None
    if found is None:
        ids = [i for i, _ in store.roots()]
        raise unselected(path, ids, sample, "Agents SDK session", "<session id>")
    branches = store.branches(found[0], session_id)
    if branch not in branches:
        listed = ", ".join(branches) if branches else "none"
        raise SampleSelectionError(
            f"{path}: Agents SDK session {session_id!r} has no branch {branch!r} "
            f"(its branches: {listed})"
        )
    return session_id, *found, branch


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session ``sample`` names (by its id) of the SDK's database at ``path``; with none,
    its only session."""
    if epoch is not None:
        raise ValueError(f"{path} is an Agents SDK session database: its sessions have no epochs")
    db = databases.opened(path, NAME)
    with contextlib.closing(db):
        try:
            store = _Database(db)
            if not store.stores:
                raise TranscriptFormatError(str(path), [NAME], None, "no Agents SDK messages table")
            session_id, table, times, branch = _chosen(store, path, sample)
            branches = store.branches(table, session_id)
            if branch is None and branches:
                branch = branches[-1]
            items, stamps = store.items(table, session_id, branch)
        except sqlite3.Error as exc:
            raise databases.unreadable(path, NAME, exc) from None
    source = Source(str(path), iter(items), path=path)
    for reason in dict.fromkeys(store.said):  # branches() is asked twice of a branched session
        source.warn(reason, record_type="session")
    transcript = Transcript(metadata={"source_format": NAME, "session_id": session_id})
    transcript.metadata.update({k: v for k, v in times.items() if v is not None})
    if branch is not None:
        transcript.metadata["branch_id"] = branch
    others = [b for b in branches if b != branch]
    if others:
        source.warn(
            f"session {session_id} has {len(branches)} branches: branch {branch} is shown; "
            f'the others ({", ".join(others)}) with sample="{session_id}/<branch id>"'
        )
    builder = _DatedBuilder(transcript, str(path), stamps)
    builder.feed_records(source, item_type, ignored=SILENT_ITEMS)
    builder.end_turn()
    if not items:
        source.warn(f"session {session_id} holds no items")
    return source.hand_over(transcript)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The database at ``source.path`` (``load(path, format="openai-agents-db")`` of an open
    file)."""
    return databases.read_at_path(
        source, NAME, "the Agents SDK's session store", read_path, sample=sample, epoch=epoch
    )


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The sessions (id, title) of the SDK's database at ``path``, oldest first."""
    with contextlib.closing(databases.connect(path)) as db:
        yield from _Database(db).roots()
