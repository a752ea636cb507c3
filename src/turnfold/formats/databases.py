"""Agents and frameworks that keep their sessions in a SQLite database (OpenCode, Kilo Code,
Crush, MLflow; Agno, LangGraph, the Agents SDK, ADK, in files of any name): opening one read
only, and telling one from its header and tables without reading it.

A database is opened read only (``mode=ro``): a session its agent is writing is read as it
stands, and nothing of it is ever changed.

Detection asks every SQLite-backed reader whether a file is its store; each tells by the
tables (:func:`tables`, :func:`columns`, or :func:`layout` with :func:`table_columns`). Within
:func:`one_look` they share one connection and one reading of ``sqlite_master`` (and of each
table's columns), so a file is opened once per detection, not once per reader.

No value longer than :func:`~turnfold.formats.source.record_limit` is ever read: SQLite refuses
it (:func:`connect`), and :func:`rows` skips the row holding it, which a reader warns of.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from turnfold.formats.source import record_limit

if TYPE_CHECKING:
    from turnfold.formats.errors import TranscriptFormatError
    from turnfold.formats.source import Source
    from turnfold.model import Transcript

T = TypeVar("T")

#: The first bytes of every SQLite database file.
HEADER = b"SQLite format 3\x00"


def connect(path: Path) -> sqlite3.Connection:
    """The database at ``path``, opened read only, refusing to read any value longer than
    :func:`~turnfold.formats.source.record_limit` (an error, which :func:`rows` turns into a
    skipped row)."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    # SQLite checks a value's length before it allocates it: a message of 600 MB read whole
    # held 1.75 GB of the kernel. Python 3.10 cannot set the limit.
    if sys.version_info >= (3, 11):
        db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, record_limit())
    return db


def is_database(path: Path) -> bool:
    """Whether ``path`` is a SQLite file, by its header; an unreadable file is taken for one,
    so that opening it says why it cannot be read."""
    try:
        with path.open("rb") as stream:
            return stream.read(len(HEADER)) == HEADER
    except OSError:
        return True


class _Look:
    """One look at the database at ``path`` for every reader's detection: opened (read only,
    its header first) when a reader first asks, its tables' names read once, each table's
    columns once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: sqlite3.Connection | None = None
        self.tried = False
        self.names: list[str] | None = None
        self.columns: dict[str, set[str]] = {}

    def connection(self) -> sqlite3.Connection | None:
        """The open database; None when it is no readable SQLite file (asked once)."""
        if not self.tried:
            self.tried = True
            try:
                if self.path.is_file() and is_database(self.path):
                    self.db = connect(self.path)
            except (OSError, sqlite3.Error):
                self.db = None
        return self.db

    def table_names(self, db: sqlite3.Connection) -> list[str]:
        if self.names is None:
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            self.names = [row[0] for row in db.execute(query).fetchall()]
        return self.names

    def columns_of(self, db: sqlite3.Connection, table: str) -> set[str]:
        if table not in self.columns:
            rows = db.execute(f"PRAGMA table_info({quoted(table)})").fetchall()
            self.columns[table] = {row[1] for row in rows}
        return self.columns[table]

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


_LOOK: ContextVar[_Look | None] = ContextVar("turnfold_database_look", default=None)


@contextlib.contextmanager
def one_look(path: Path) -> Iterator[None]:
    """Within it, every reader's look at the database at ``path`` (:func:`tables`,
    :func:`columns`, :func:`layout`, :func:`table_columns`) shares one read-only connection
    and one reading of its tables: detection opens the file once, whatever the number of
    SQLite-backed readers asked. Closed on leaving; a file that is no database is not opened."""
    look = _Look(path)
    token = _LOOK.set(look)
    try:
        yield
    finally:
        _LOOK.reset(token)
        look.close()


def _look_at(path: Path) -> _Look | None:
    look = _LOOK.get()
    return look if look is not None and look.path == path else None


def _look_of(db: sqlite3.Connection) -> _Look | None:
    look = _LOOK.get()
    return look if look is not None and look.db is db else None


def tables(path: Path) -> set[str] | None:
    """The tables of the database at ``path``; None when it is no readable SQLite file."""
    return layout(path, _table_names)


def _table_names(db: sqlite3.Connection) -> set[str]:
    look = _look_of(db)
    if look is not None:
        return set(look.table_names(db))
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def layout(path: Path, read: Callable[[sqlite3.Connection], T]) -> T | None:
    """What ``read`` makes of the database at ``path`` (its tables, say), opened read only and
    told by its header first (or as :func:`one_look` opened it); None when it is no readable
    SQLite file."""
    look = _look_at(path)
    try:
        if look is not None:
            db = look.connection()
            return read(db) if db is not None else None
        if not path.is_file() or not is_database(path):
            return None
        with contextlib.closing(connect(path)) as db:
            return read(db)
    except (OSError, sqlite3.Error):
        return None


def opened(path: Path, format: str) -> sqlite3.Connection:
    """The database at ``path`` opened read only for the reader of ``format``; a format error
    naming the file when it is no SQLite file or cannot be opened."""
    from turnfold.formats.errors import TranscriptFormatError

    try:
        if not is_database(path):
            raise TranscriptFormatError(str(path), [format], None, "not a SQLite database")
        return connect(path)
    except (OSError, sqlite3.Error) as exc:
        raise TranscriptFormatError(str(path), [format], None, f"not readable: {exc}") from None


def unreadable(path: Path, format: str, error: Exception) -> TranscriptFormatError:
    """The format error naming the file when reading the database at ``path`` failed with
    ``error``: a value over the record limit where no row could be skipped for it (a
    session's own row, the rows a listing or an order reads) said as such."""
    from turnfold.formats.errors import TranscriptFormatError

    too_long = isinstance(error, sqlite3.DataError) and _too_long(error)
    said = (f"a value over the limit of {record_limit():,} bytes (TURNFOLD_MAX_RECORD_BYTES)"
            if too_long else str(error))  # fmt: skip
    return TranscriptFormatError(str(path), [format], None, f"not readable: {said}")


def read_at_path(
    source: Source, format: str, store: str, read_path: Callable[..., Transcript], **pick: Any
) -> Transcript:
    """What ``read_path`` reads of the database ``source`` was opened from (``load(path,
    format=...)`` of a database is read by its path, never as JSON records); a format error
    saying that ``store`` is a SQLite database when ``source`` is no file."""
    from turnfold.formats.errors import TranscriptFormatError

    if source.path is not None and source.path.is_file():
        return read_path(source.path, **pick)
    reason = f"{store} is a SQLite database: pass its path"
    raise TranscriptFormatError(source.name, [format], None, reason)


def quoted(name: str) -> str:
    """A table's name quoted for SQL (a store's tables may have any name its user gives)."""
    return '"' + name.replace('"', '""') + '"'


def table_columns(db: sqlite3.Connection) -> dict[str, set[str]]:
    """Every table of the open database ``db`` with its columns' names: a store of no fixed
    table names is told by its tables' columns."""
    look = _look_of(db)
    if look is not None:
        return {table: set(look.columns_of(db, table)) for table in look.table_names(db)}
    found: dict[str, set[str]] = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        found[table] = {row[1] for row in db.execute(f"PRAGMA table_info({quoted(table)})")}
    return found


def columns(path: Path, table: str) -> set[str]:
    """The columns of ``table`` in the database at ``path`` (none when unreadable)."""
    look = _look_at(path)
    try:
        if look is not None:
            db = look.connection()
            return set(look.columns_of(db, table)) if db is not None else set()
        with contextlib.closing(connect(path)) as db:
            return {row[1] for row in db.execute(f"PRAGMA table_info({quoted(table)})")}
    except sqlite3.Error:
        return set()


@dataclass(frozen=True)
class OversizedRow:
    """Stands in for a row of :func:`rows` holding a value longer than
    :func:`~turnfold.formats.source.record_limit`, which was skipped unread: ``said`` names
    the table, the row (its ``rowid`` and ``key``, its key column's value when it could be
    read) and the value's column and size."""

    table: str
    rowid: int
    key: Any
    said: str

    @property
    def reason(self) -> str:
        """What a warning of the skipped row says."""
        return f"{self.said}; skipped unread"


def rows(
    db: sqlite3.Connection,
    table: str,
    columns: str,
    rest: str = "",
    params: Sequence[Any] = (),
    *,
    alias: str = "",
    key: str | None = None,
) -> Iterator[Any]:
    """The rows of ``SELECT {columns} FROM {table} {alias} {rest}`` (``rest``: its joins,
    ``WHERE`` and ``ORDER BY``), as ``db`` makes rows; a row holding a value longer than
    :func:`~turnfold.formats.source.record_limit` is an :class:`OversizedRow` in its place
    (named by its ``key`` column), and the rows after it are still read. ``columns`` are
    ``table``'s own (a row is read again alone by its rowid).

    SQLite's refusal of the long value ends the whole query, and an ``ORDER BY`` sorts whole
    rows: so the query is read as it is, each row's rowid noted, until it is refused; then the
    rows' rowids alone are read in the query's order, and every row not yet read is read alone,
    the oversized one told apart. A database with no long value is read by the one query.
    """
    named = f"{quoted(table)} {alias}".rstrip()
    own = alias or quoted(table)
    made = db.row_factory
    shape = db.execute(f"SELECT {columns} FROM {named} LIMIT 0")  # the rows' column names
    cursor = db.cursor()
    cursor.row_factory = None
    read: set[int] = set()
    try:
        for rowid, *values in cursor.execute(f"SELECT {own}.rowid, {columns} FROM {named} {rest}",
                                             params):  # fmt: skip
            read.add(rowid)
            yield made(shape, tuple(values)) if made is not None else tuple(values)
        return
    except sqlite3.DataError as exc:
        if not _too_long(exc):
            raise
    try:
        order = [rowid for (rowid,) in cursor.execute(f"SELECT {own}.rowid FROM {named} {rest}",
                                                      params)]  # fmt: skip
    except sqlite3.DataError as exc:
        if not _too_long(exc):
            raise
        raise sqlite3.DataError(f"the rows of {table} are chosen or ordered by a value over the "
                                f"limit of {record_limit():,} bytes (TURNFOLD_MAX_RECORD_BYTES)"
                                ) from None  # fmt: skip
    alone = f"SELECT {columns} FROM {named} WHERE {own}.rowid = ?"
    for rowid in order:
        if rowid in read:
            continue
        try:
            row = db.execute(alone, (rowid,)).fetchone()
        except sqlite3.DataError as exc:
            if not _too_long(exc):
                raise
            yield _oversized(db, table, rowid, key)
            continue
        if row is not None:
            yield row


def _too_long(error: sqlite3.DataError) -> bool:
    """Whether SQLite refused a value over its length limit (:func:`connect`)."""
    return getattr(error, "sqlite_errorname", None) == "SQLITE_TOOBIG"


def _oversized(db: sqlite3.Connection, table: str, rowid: int, key: str | None) -> OversizedRow:
    """The stand-in of a row of ``table`` that holds a value over the limit: the row,
    by its rowid and ``key``, and each long value's column and size (read without reading the
    value, by a blob handle), as a long JSON line's warning says it."""
    limit = record_limit()
    where, named = f"{table} row {rowid}", None
    if key is not None:
        with contextlib.suppress(sqlite3.DataError):  # the key itself too long: the rowid
            found = db.execute(f"SELECT {key} FROM {quoted(table)} WHERE rowid = ?", (rowid,))
            named = found.fetchone()[0]
            where += f" ({key} {str(named)[:80]})"
    long: list[str] = []
    if sys.version_info >= (3, 11):
        for column in [row[1] for row in db.execute(f"PRAGMA table_info({quoted(table)})")]:
            # A number or NULL has no blob handle.
            with (
                contextlib.suppress(sqlite3.Error),
                db.blobopen(table, column, rowid, readonly=True) as blob,
            ):
                if len(blob) > limit:
                    long.append(f"its {column} of {len(blob):,} bytes")
    held = ", ".join(long) or "a value"
    said = f"{where}: {held}, over the limit of {limit:,} (TURNFOLD_MAX_RECORD_BYTES)"
    return OversizedRow(table, rowid, named, said)
