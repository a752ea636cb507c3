"""Agno's SQLite session store (``agno`` 3.x ``SqliteDb`` / ``AsyncSqliteDb``): the database
file its agents and teams keep their sessions in (``Agent(db=SqliteDb(db_file="tmp/agents.db"))``,
any name the user picks), read only, never written here.

Agno's layout (``agno/db/sqlite/schemas.py``, ``sqlite.py``): a sessions table (by default
``agno_sessions``: ``session_id``, ``session_type`` agent / team / workflow, ``agent_id``,
``team_id``, ``user_id``, ``session_data``, ``agent_data``, ``team_data``, ``created_at`` in
epoch seconds…) and a runs table (by default ``agno_runs``: ``run_id``, ``session_id`` (a
foreign key to the sessions table), ``parent_run_id``, ``status``, ``run_index``, the run's
``to_dict()`` as ``run_data`` JSON). Agno 2.x kept a session's runs in the session's row
instead (a ``runs`` JSON column), which 3.x leaves in place until it is cleaned up: the two are
merged as Agno's ``get_session`` merges them (``merge_runs_table_with_legacy_blob``: the
column's runs in their order, the table's copy of a run winning, the table's other runs after
them). Both tables may have other names (``session_table=``, ``runs_table=``): they are told by
their columns, a runs table paired with the sessions table its foreign key names.

A session's runs, in ``run_index`` order, are read as :mod:`~turnfold.formats.frameworks.agno`
reads a session (``AgentSession`` / ``TeamSession.to_dict()``), by its builder: each run's
messages, calls and outcomes, members' runs (stored as runs of the session of their own, their
``parent_run_id`` the team's run) nested under the delegation calls that ran them. A
``run_data`` that is no JSON object is a warning naming the run; the other runs are read.

``sample=`` names a session by its id; a database of one session needs none. A workflow's
session (its runs hold steps, not messages) is not read: loading one says so.
Detection: the SQLite header, then a table with Agno's session columns (:func:`detect_path`).
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
from turnfold.formats.common import as_text
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError, unselected
from turnfold.formats.frameworks import agno
from turnfold.formats.source import Source
from turnfold.model import Transcript

NAME = "agno-db"
#: A database holds many sessions: ``sample=`` names one by its id.
HAS_SAMPLES = True

RECORDS = Records(
    mapped={
        **agno.RECORDS.mapped,
        "session": "a row of the sessions table: its runs (the runs table's rows, and a 2.x "
        "row's runs column) in order; its id, agent or team and user → metadata",
        "run": "a row of the runs table: its run_data read as a run",
    },
    ignored=agno.RECORDS.ignored,
)

#: The columns that make a table Agno's sessions table (``SESSION_TABLE_SCHEMA``).
_SESSION_COLUMNS = frozenset({"session_id", "session_type", "session_data", "agent_data",
                              "team_data", "created_at"})  # fmt: skip
#: The columns that make a table Agno's runs table (``_get_run_table_schema``).
_RUN_COLUMNS = frozenset({"run_id", "session_id", "run_type", "run_data"})
#: Agno's default names, which pair the two tables when no foreign key does.
_DEFAULTS = ("agno_sessions", "agno_runs")
#: A session's runs in the order ``get_session`` reads them, of the columns the table has.
_RUN_ORDER = ("run_index", "created_at", "run_id", "rowid")
#: The ids and times of the sessions' and runs' rows, read no longer than an id may be
#: (``databases.KEY_BYTES``): a hostile one costs its row, never the database.
_KEYS = ("session_id", "run_id", "parent_run_id", "agent_id", "team_id", "workflow_id",
         "user_id", "created_at", "updated_at")  # fmt: skip
#: Of those, the times: one too long to be a time is left out of its row, the row still read.
_TIMES = ("created_at", "updated_at")


@dataclass(frozen=True)
class _Store:
    """One sessions table, and the runs table that holds its runs (None: a 2.x layout, the
    runs in the sessions' own ``runs`` column)."""

    sessions: str
    runs: str | None
    #: The sessions table has the 2.x ``runs`` column.
    legacy: bool
    #: The runs table's ordering columns, those of :data:`_RUN_ORDER` it has.
    order: tuple[str, ...] = ()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _stores(db: sqlite3.Connection) -> list[_Store]:
    """Agno's sessions tables of ``db`` (the default one first), each with its runs table."""
    columns: dict[str, set[str]] = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns[table] = {row[1] for row in db.execute(f"PRAGMA table_info({_quoted(table)})")}
    sessions = sorted((t for t, c in columns.items() if c >= _SESSION_COLUMNS),
                      key=lambda t: (t != _DEFAULTS[0], t))  # fmt: skip
    runs = [t for t, c in columns.items() if c >= _RUN_COLUMNS]
    named = {
        table: {row[2] for row in db.execute(f"PRAGMA foreign_key_list({_quoted(table)})")
                if row[3] == "session_id"}
        for table in runs
    }  # fmt: skip
    stores = []
    for table in sessions:
        paired = [r for r in runs if table in named[r]]
        if not paired and len(sessions) == len(runs) == 1:
            paired = runs
        elif not paired and table == _DEFAULTS[0] and _DEFAULTS[1] in runs:
            paired = [_DEFAULTS[1]]
        chosen = paired[0] if paired else None
        order = tuple(c for c in _RUN_ORDER if chosen and (c == "rowid" or c in columns[chosen]))
        stores.append(_Store(table, chosen, "runs" in columns[table], order))
    return stores


def _layout(path: Path) -> list[_Store] | None:
    """The stores of the SQLite file at ``path``; None when it is no readable SQLite file."""
    return databases.layout(path, _stores)


# --- detection --------------------------------------------------------------------------------


def detect_path(path: Path) -> Evidence | None:
    """Agno's database: a SQLite file with a table of Agno's session columns."""
    return Evidence(share=1.0, marks=1) if _layout(path) else None


def detect(source: Source) -> Evidence:
    """JSON records are never this format's: its sessions are a database (:func:`detect_path`);
    a session saved as JSON is :mod:`~turnfold.formats.frameworks.agno`'s."""
    return Evidence.none("no Agno session database (SQLite, read from its file)")


# --- reading ----------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    """A JSON column's value (SQLAlchemy's ``JSON`` type writes text)."""
    return codec.loads(value) if isinstance(value, (str, bytes)) else value


def _title(row: sqlite3.Row) -> str:
    """What a listing calls a session: its type, its agent's or team's name, its name."""
    kind = as_text(row["session_type"]) or "session"
    said = [kind]
    columns = row.keys()  # a Row's ``in`` asks its values
    with contextlib.suppress(ValueError, TypeError):
        owner = _json(row[f"{kind}_data"]) if f"{kind}_data" in columns else None
        if isinstance(owner, Mapping) and as_text(owner.get("name")):
            said.append(str(owner["name"]))
        data = _json(row["session_data"])
        if isinstance(data, Mapping) and as_text(data.get("session_name")):
            said.append(f"“{data['session_name']}”")
    return " ".join(said)


class _Database:
    """The sessions of an Agno database, read on demand."""

    def __init__(self, db: sqlite3.Connection, source: Source) -> None:
        db.row_factory = sqlite3.Row
        self.db = db
        self.source = source
        self.stores = _stores(db)

    def roots(self) -> list[tuple[str, str]]:
        """Every session (id, title), oldest first, of each sessions table."""
        found = []
        for store in self.stores:
            for row in databases.rows(self.db, store.sessions, "*", "ORDER BY created_at, rowid",
                                      key="session_id", bounded=_KEYS):  # fmt: skip
                if isinstance(row, databases.OversizedRow):  # read clipped, with a warning
                    found.append((databases.listed(row), "session"))
                    continue
                found.append((str(row["session_id"]), _title(row)))
        return found

    def session(self, session_id: str) -> dict[str, Any] | None:
        """The session as Agno's ``get_session`` returns it (``to_dict()``'s keys read here):
        its row's ids and its runs."""
        for store in self.stores:
            row, clipped = databases.row(self.db, store.sessions, "*", "WHERE session_id = ?",
                                         (session_id,), key="session_id",
                                         bounded=_KEYS)  # fmt: skip
            if row is not None:
                for reason in clipped:
                    self.source.warn(reason, record_type="session")
                return self._session(store, row)
        return None

    def _session(self, store: _Store, row: sqlite3.Row) -> dict[str, Any]:
        session_id = str(row["session_id"])
        if row["session_type"] == "workflow":
            raise ValueError(
                f"{self.source.name}: session {session_id} is an Agno workflow's, whose runs "
                "hold its steps, not messages: turnfold reads agent and team sessions"
            )
        session: dict[str, Any] = {"session_id": session_id}
        for key in ("agent_id", "team_id", "user_id"):
            if as_text(row[key]) is not None:
                session[key] = row[key]
        table = self._runs(store, session_id)
        legacy = self._legacy(row, session_id) if store.legacy else None
        session["runs"] = _merged(table, legacy)
        with contextlib.suppress(ValueError, TypeError):
            data = _json(row["session_data"])
            if isinstance(data, Mapping) and as_text(data.get("session_name")):
                session["session_name"] = data["session_name"]
        return session

    def _runs(self, store: _Store, session_id: str) -> list[dict[str, Any]]:
        """The session's rows of the runs table, in order; a ``run_data`` that is no JSON
        object is a warning naming its run, not a run."""
        if store.runs is None:
            return []
        order = ", ".join(store.order)
        found = []
        for row in databases.rows(
            self.db, store.runs, "run_id, run_data", f"WHERE session_id = ? ORDER BY {order}",
            (session_id,), key="run_id", bounded=_KEYS, times=_TIMES,
            warn=lambda reason: self.source.warn(reason, record_type="run"),
        ):  # fmt: skip
            if isinstance(row, databases.OversizedRow):
                self.source.warn(row.reason, record_type="run")
                continue
            run_id, data = row
            try:
                run = _json(data)
            except (ValueError, UnicodeDecodeError) as exc:
                self.source.warn(f"run {run_id}: its run_data is no JSON ({exc})",
                                 record_type="run")  # fmt: skip
                continue
            if not isinstance(run, dict):
                self.source.warn(f"run {run_id}: its run_data is no JSON object",
                                 record_type="run")  # fmt: skip
                continue
            run.setdefault("run_id", run_id)
            found.append(run)
        return found

    def _legacy(self, row: sqlite3.Row, session_id: str) -> list[Any] | None:
        """A 2.x session's ``runs`` column; unreadable, a warning (its runs are lost)."""
        try:
            runs = _json(row["runs"])
        except (ValueError, UnicodeDecodeError) as exc:
            self.source.warn(f"session {session_id}: its runs column is no JSON ({exc}): the "
                             "runs kept only there are not shown")  # fmt: skip
            return None
        return runs if isinstance(runs, list) else None


def _merged(table: list[dict[str, Any]], legacy: list[Any] | None) -> list[dict[str, Any]]:
    """The runs table's runs merged with a 2.x ``runs`` column, as Agno merges them
    (``merge_runs_table_with_legacy_blob``, ``agno/db/utils.py``)."""
    if not legacy:
        return table
    by_id = {run.get("run_id"): run for run in table if run.get("run_id") is not None}
    merged, known = [], set()
    for run in legacy:
        if isinstance(run, dict) and run.get("run_id") is not None:
            known.add(run["run_id"])
            merged.append(by_id.get(run["run_id"], run))
    merged += [run for run in table if run.get("run_id") not in known]
    return merged


def _chosen(store: _Database, path: Path, sample: Any) -> dict[str, Any]:
    """The session ``sample`` names; with none, the database's only session."""
    if sample is None:
        roots = store.roots()
        if len(roots) != 1:
            raise unselected(path, [i for i, _ in roots], None, "Agno session", "<session id>")
        sample = roots[0][0]
    session = store.session(str(sample))
    if session is None:
        ids = [i for i, _ in store.roots()]
        raise unselected(path, ids, sample, "Agno session", "<session id>")
    return session


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The session ``sample`` names (by its id) of Agno's database at ``path``; with none, its
    only session."""
    if epoch is not None:
        raise ValueError(f"{path} is an Agno database: its sessions have no epochs")
    source = Source(str(path), iter(()), path=path)
    db = databases.opened(path, NAME)
    with contextlib.closing(db):
        try:
            store = _Database(db, source)
            if not store.stores:
                raise TranscriptFormatError(str(path), [NAME], None, "no Agno sessions table")
            session = _chosen(store, path, sample)
        except sqlite3.Error as exc:
            raise databases.unreadable(path, NAME, exc) from None
    transcript = Transcript(metadata={"source_format": NAME})
    agno.AgnoBuilder(transcript, str(path), source=source).read_session(session)
    if "session_name" in session:
        transcript.metadata["title"] = session["session_name"]
    return source.hand_over(transcript)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The database at ``source.path`` (``load(path, format="agno-db")`` of an open file)."""
    return databases.read_at_path(
        source, NAME, "Agno's session store", read_path, sample=sample, epoch=epoch
    )


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The sessions (id, title) of Agno's database at ``path``, oldest first."""
    with contextlib.closing(databases.connect(path)) as db:
        yield from _Database(db, Source(str(path), iter(()))).roots()
