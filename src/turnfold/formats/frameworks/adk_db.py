"""Google ADK's SQLite session store: the database ``DatabaseSessionService`` writes on a
SQLite URL (``DatabaseSessionService(db_url="sqlite+aiosqlite:///./sessions.db")``,
``google/adk/sessions/database_session_service.py``) and ``SqliteSessionService`` writes
(``sqlite_session_service.py``), any name the user picks, read only, never written here.

The ADK's layout (``sessions/schemas/v1.py``): a ``sessions`` table (``app_name``,
``user_id``, ``id``, ``state`` JSON, ``create_time``, ``update_time``) and an ``events`` table
(``id``, ``app_name``, ``user_id``, ``session_id``, ``invocation_id``, ``timestamp``,
``event_data``: the event's ``model_dump(mode="json")``), with ``app_states``,
``user_states`` and ``adk_internal_metadata``. ADK 1.19–1.21 (``schemas/v0.py``, which later
releases still write into a database of that layout) kept an event's fields in columns of
their own (``author``, ``content``, ``usage_metadata``, ``error_code``…) and its ``actions``
pickled: those columns are read as the event; the pickled ``actions`` is never unpickled (a
file's pickle can run any code), so it is left out with a warning: the state changes, the
transfers' own record and escalations it held are not shown (a transfer's call and response
still are). The tables are told by their columns.

A session's events, in the order ADK's ``get_session`` gives them (``timestamp``, then ``id``),
make the session document :mod:`~turnfold.formats.frameworks.adk` reads (its id, app, user and
state, its ``update_time``), by the same rules. An ``event_data`` that is no JSON object is a
warning naming the event; the other events are read.

``sample=`` names a session by its id (``<app>/<user>/<id>`` where one id is several
sessions'); a database of one session needs none.
Detection: the SQLite header, then a table with the ADK's event columns (:func:`detect_path`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from turnfold import codec
from turnfold.formats import databases
from turnfold.formats.catalog import Records
from turnfold.formats.common import as_text, epoch_iso, warned_timestamp
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import (
    MalformedLine,
    SampleSelectionError,
    TranscriptFormatError,
    how_to_pick,
    unselected,
)
from turnfold.formats.frameworks import adk
from turnfold.formats.source import Source
from turnfold.model import Transcript

NAME = "adk-db"
#: A database holds many sessions: ``sample=`` names one.
HAS_SAMPLES = True

RECORDS = Records(
    mapped={
        **adk.RECORDS.mapped,
        "session": "a row of the sessions table: its events (the events table's rows, by "
        "timestamp) read as above; its id, app, user, state and update_time → metadata",
    },
    ignored={
        **adk.RECORDS.ignored,
        "actions (pickled)": "ADK 1.19–1.21's pickled event actions: never unpickled (a warning "
        "says so)",
    },
)

#: The columns that make a table the ADK's sessions table.
_SESSION_COLUMNS = frozenset({"app_name", "user_id", "id", "state", "create_time",
                              "update_time"})  # fmt: skip
#: The columns every layout's events table has.
_EVENT_COLUMNS = frozenset({"id", "app_name", "user_id", "session_id", "invocation_id",
                            "timestamp"})  # fmt: skip
#: The event fields the v0 layout keeps in columns of their own, JSON ones apart.
_V0_FIELDS = ("author", "branch", "partial", "turn_complete", "error_code", "error_message",
              "interrupted")  # fmt: skip
_V0_JSON = ("content", "grounding_metadata", "custom_metadata", "usage_metadata",
            "citation_metadata", "input_transcription", "output_transcription")  # fmt: skip
_V0_BOOLEANS = frozenset({"partial", "turn_complete", "interrupted"})


@dataclass(frozen=True)
class _Store:
    """The sessions table and the events table of one layout."""

    sessions: str
    events: str
    #: The v1 layout (``event_data``); else v0's columns.
    json: bool
    #: The v0 columns the events table has.
    columns: frozenset[str] = frozenset()


def _stores(db: sqlite3.Connection) -> list[_Store]:
    """The ADK's tables of ``db``: each events table with the sessions table it names."""
    columns = databases.table_columns(db)
    sessions = [t for t, c in columns.items() if c >= _SESSION_COLUMNS]
    stores = []
    for table, held in sorted(columns.items()):
        v1, v0 = "event_data" in held, {"author", "content"} <= held
        if not held >= _EVENT_COLUMNS or not (v1 or v0):
            continue
        named = [row[2] for row in db.execute(f"PRAGMA foreign_key_list({databases.quoted(table)})")
                 if row[2] in sessions]  # fmt: skip
        named = named or (["sessions"] if "sessions" in sessions else sessions[:1])
        if named:
            kept = frozenset(
                held & {*_V0_FIELDS, *_V0_JSON, "actions", "long_running_tool_ids_json"}
            )
            stores.append(_Store(named[0], table, v1, kept))
    return stores


def _layout(path: Path) -> list[_Store] | None:
    """The stores of the SQLite file at ``path``; None when it is no readable SQLite file."""
    return databases.layout(path, _stores)


# --- detection --------------------------------------------------------------------------------


def detect_path(path: Path) -> Evidence | None:
    """The ADK's session database: a SQLite file with its sessions and events tables."""
    return Evidence(share=1.0, marks=1) if _layout(path) else None


def detect(source: Source) -> Evidence:
    """JSON records are never this format's: its sessions are a database (:func:`detect_path`);
    a session saved as JSON is :mod:`~turnfold.formats.frameworks.adk`'s."""
    return Evidence.none("no ADK session database (SQLite, read from its file)")


# --- reading ----------------------------------------------------------------------------------


def _epoch(value: Any) -> float | None:
    """A time column as epoch seconds: ``SqliteSessionService``'s are already; SQLAlchemy's
    ``DateTime`` writes ``YYYY-MM-DD HH:MM:SS.ffffff`` of the UTC time the ADK gave it. None
    for a value that is neither, or a time the ADK reader cannot date (before the epoch, past
    the calendar)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif (text := as_text(value)) is None:
        return None
    else:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        seconds = moment.timestamp()
    return seconds if epoch_iso(seconds) is not None else None


def _json(value: Any) -> Any:
    return codec.loads(value) if isinstance(value, (str, bytes)) else value


#: The ids and times of the sessions' and events' rows, read no longer than an id may be
#: (``databases.KEY_BYTES``): a hostile one costs its row, never the database.
_KEYS = ("app_name", "user_id", "id", "session_id", "invocation_id", "create_time",
         "update_time", "timestamp")  # fmt: skip
#: Of those, the times: one too long to be a time is left out of its row, the row still read.
_TIMES = ("create_time", "update_time", "timestamp")


@dataclass(frozen=True)
class _Key:
    app_name: str
    user_id: str
    id: str


class _Database:
    """The sessions of the ADK's database, read on demand."""

    def __init__(self, db: sqlite3.Connection, source: Source) -> None:
        db.row_factory = sqlite3.Row
        self.db = db
        self.source = source
        self.stores = _stores(db)

    def keyed(self) -> list[tuple[str, str, _Store, _Key]]:
        """Every session (sample, title, store, key), oldest first; the sample is its id,
        ``<app>/<user>/<id>`` when one id is several sessions'."""
        rows = []
        for store in self.stores:
            for row in databases.rows(self.db, store.sessions, "app_name, user_id, id",
                                      "ORDER BY create_time, rowid", key="id",
                                      bounded=_KEYS):  # fmt: skip
                if isinstance(row, databases.OversizedRow):  # its load says why, alone
                    unread = databases.stand_in(row)
                    rows.append((store, _Key(unread, unread, unread)))
                    continue
                rows.append((store, _Key(*(str(v) for v in row))))
        ids = [key.id for _, key in rows]
        found = []
        for store, key in rows:
            sample = key.id if ids.count(key.id) == 1 else f"{key.app_name}/{key.user_id}/{key.id}"
            found.append((sample, f"{key.app_name}, user {key.user_id}", store, key))
        return found

    def session(self, store: _Store, key: _Key) -> dict[str, Any]:
        """The session document ``adk.read`` reads: as the ADK's ``Session.model_dump``."""
        row, clipped = databases.row(
            self.db, store.sessions, "*", "WHERE app_name = ? AND user_id = ? AND id = ?",
            (key.app_name, key.user_id, key.id), key="id", bounded=_KEYS,
        )  # fmt: skip
        for reason in clipped:
            self.source.warn(reason, record_type="session")
        document: dict[str, Any] = {"id": key.id, "app_name": key.app_name,
                                    "user_id": key.user_id}  # fmt: skip
        try:
            state = _json(row["state"])
        except (ValueError, UnicodeDecodeError) as exc:
            self.source.warn(f"session {key.id}: its state is no JSON ({exc})")
            state = None
        if isinstance(state, dict):
            document["state"] = state
        updated = self._epoch(row["update_time"], f"session {key.id}", "update_time", "session")
        if updated is not None:
            document["last_update_time"] = updated
        document["events"] = self._events(store, key)
        return document

    def _events(self, store: _Store, key: _Key) -> list[Any]:
        """The session's events in ``get_session``'s order; an unreadable one a
        :class:`MalformedLine` naming it."""
        events: list[Any] = []
        pickled = 0
        for row in databases.rows(
            self.db, store.events, "*",
            "WHERE app_name = ? AND user_id = ? AND session_id = ? ORDER BY timestamp, id",
            (key.app_name, key.user_id, key.id), key="id", bounded=_KEYS, times=_TIMES,
            warn=lambda reason: self.source.warn(reason, record_type="event row"),
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                # The ADK reader says it skipped it.
                events.append(MalformedLine(row.said, record_type="event row"))
                continue
            try:
                event = self._event(store, row)
            except (ValueError, UnicodeDecodeError) as exc:
                events.append(MalformedLine(f"event {row['id']}: no JSON ({exc})",
                                            record_type="event row"))  # fmt: skip
                continue
            if event is None:
                events.append(MalformedLine(f"event {row['id']}: its event_data is no JSON "
                                            "object", record_type="event row"))  # fmt: skip
                continue
            if not store.json and "actions" in store.columns and row["actions"] is not None:
                pickled += 1
            events.append(event)
        if pickled:
            self.source.warn(
                f"session {key.id}: the actions of its {pickled} events are pickled (the layout "
                "of ADK 1.19–1.21) and never unpickled here: their state changes, transfers' "
                "records and escalations are not shown"
            )
            self.source.note("actions (pickled)", "ignored")
        return events

    def _event(self, store: _Store, row: sqlite3.Row) -> dict[str, Any] | None:
        """One event as ``StorageEvent.to_event`` rebuilds it (the pickled actions left out)."""
        if store.json:
            data = _json(row["event_data"]) if row["event_data"] is not None else {}
            if not isinstance(data, dict):
                return None
            event = dict(data)
        else:
            event = {f: row[f] for f in _V0_FIELDS if f in store.columns and row[f] is not None}
            for field in _V0_BOOLEANS & event.keys():
                event[field] = bool(event[field])
            for field in _V0_JSON:
                if field in store.columns and row[field] is not None:
                    event[field] = _json(row[field])
            if "long_running_tool_ids_json" in store.columns and row["long_running_tool_ids_json"]:
                event["long_running_tool_ids"] = _json(row["long_running_tool_ids_json"])
        event["id"] = row["id"]
        event["invocation_id"] = row["invocation_id"]
        # The ADK dates an event by its event_data's timestamp, else by its column's (to_event).
        own = event.get("timestamp")
        event["timestamp"] = self._epoch(
            row["timestamp"] if own is None else own, f"event {row['id']}",
            "timestamp" if own is None else "event_data's timestamp", "event row",
        )  # fmt: skip
        return event

    def _epoch(self, value: Any, what: str, name: str, record_type: str) -> float | None:
        """A time column as epoch seconds (:func:`_epoch`); one that is no time is left out
        with a warning naming its row, which is still read."""
        return warned_timestamp(value, _epoch, lambda reason: self.source.warn(
            reason, record_type=record_type), what, name=name)  # fmt: skip


def _chosen(store: _Database, path: Path, sample: Any) -> tuple[_Store, _Key]:
    """The session ``sample`` names; with none, the database's only session."""
    keyed = store.keyed()
    ids = [found for found, _, _, _ in keyed]
    if sample is None:
        if len(keyed) != 1:
            raise unselected(path, ids, None, "ADK session", "<session id>")
        return keyed[0][2], keyed[0][3]
    named = [(s, k) for found, _, s, k in keyed if str(sample) in (found, k.id)]
    if len(named) == 1:
        return named[0]
    if named:
        full = [f"{k.app_name}/{k.user_id}/{k.id}" for _, k in named]
        raise SampleSelectionError(f"{path} holds {len(named)} ADK sessions {sample!r}: "
                                   + how_to_pick(full, "<app>/<user>/<id>"))  # fmt: skip
    raise unselected(path, ids, sample, "ADK session", "<session id>")


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session ``sample`` names of the ADK's database at ``path``; with none, its only
    session."""
    if epoch is not None:
        raise ValueError(f"{path} is an ADK session database: its sessions have no epochs")
    db = databases.opened(path, NAME)
    warnings = Source(str(path), iter(()), path=path)
    with contextlib.closing(db):
        try:
            store = _Database(db, warnings)
            if not store.stores:
                raise TranscriptFormatError(str(path), [NAME], None, "no ADK events table")
            session = store.session(*_chosen(store, path, sample))
        except sqlite3.Error as exc:
            raise databases.unreadable(path, NAME, exc) from None
    # The session document read by the ADK reader's own rules, its accounting and warnings
    # this load's: the database's warnings first.
    source = Source(str(path), iter(()), path=path, document=session,
                    warnings=warnings.warnings, accounting=warnings.accounting)  # fmt: skip
    transcript = adk.read(source)
    transcript.metadata["source_format"] = NAME
    return source.hand_over(transcript)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The database at ``source.path`` (``load(path, format="adk-db")`` of an open file)."""
    return databases.read_at_path(
        source, NAME, "the ADK's session store", read_path, sample=sample, epoch=epoch
    )


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The sessions (sample, title) of the ADK's database at ``path``, oldest first."""
    with contextlib.closing(databases.connect(path)) as db:
        for sample, title, _, _ in _Database(db, Source(str(path), iter(()))).keyed():
            yield sample, title
