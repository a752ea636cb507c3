"""Agents and frameworks that keep their sessions in a SQLite database (OpenCode, Kilo Code,
Crush, MLflow; Agno, LangGraph, the Agents SDK, ADK, in files of any name): opening one read
only, and telling one from its header and tables without reading it.

A database is opened read only (``mode=ro``): a session its agent is writing is read as it
stands, and nothing of it is ever changed. A database in write-ahead-log mode that no agent has
open (no ``-wal`` file beside it) is opened ``immutable``: SQLite would otherwise leave ``-wal``
and ``-shm`` files of its own beside the user's database (:func:`connect`).

Detection asks every SQLite-backed reader whether a file is its store; each tells by the
tables (:func:`tables`, :func:`columns`, or :func:`layout` with :func:`table_columns`). Within
:func:`one_look` they share one connection and one reading of ``sqlite_master`` (and of each
table's columns), so a file is opened once per detection, not once per reader.

No value longer than :func:`~turnfold.formats.source.record_limit` is ever read: SQLite refuses
it (:func:`connect`), and :func:`rows` skips the row holding it, which a reader warns of; a
row a reader cannot do without (a session's own) is read by :func:`row`, the long value
clipped. Python 3.10 cannot set SQLite's limit: there :func:`rows` asks each value's length in
its query and reads none over the limit (SQLite still loads it to measure it, Python never
holds it).

An id or a time (a session's, a message's, a checkpoint's id; a ``created_at``) is read under
a far smaller bound, :data:`KEY_BYTES`: a reader names it in ``bounded=``, and :func:`rows`
measures it in SQL and skips a row whose one is longer (a warning, or :func:`listed`'s
stand-in in a listing of sessions: that session alone an error), :func:`row` leaves it out. A
time a row can do without (a message's, named in ``times=``) is left out of its row, the row
kept, with a warning.

A query SQLite refuses for a long value it chooses or orders the rows by (an id over the
record limit in an ``ORDER BY``, a namespace in a ``WHERE``) is read without the rows that
hold one (:func:`_refused`): those rows alone are skipped, each warned of. Rows that name a
session by such an id are told to name the same one by :func:`first_of_each` (the id's size,
then its digest read a piece at a time), so that a listing names each session once.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
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
#: Whether a connection refuses a value over the record limit (``Connection.setlimit``, from
#: Python 3.11); without it, :func:`rows` measures each value in its query.
LIMITED = sys.version_info >= (3, 11)
#: What :func:`row` keeps of a value over the record limit: its first bytes.
CLIPPED_BYTES = 64 * 1024
#: The most bytes of an id or a time a reader takes from a row (``bounded=`` of :func:`rows`):
#: the tools' own are tens of bytes, and one of a hostile database, up to the record limit,
#: would be held whole, a copy in every row naming it.
KEY_BYTES = 1024
#: How a listing names a session whose id is too long to read (:func:`listed`): asked for
#: (``sample=``), :func:`rows` refuses it, saying why.
UNREADABLE_ID = "<unreadable id: "
#: What a warning says of an id or a time longer than :data:`KEY_BYTES`.
_OVER_KEY = f"over the {KEY_BYTES:,} bytes an id or a time may hold"
#: How much of an id too long to read is read at a time to tell it from another
#: (:func:`first_of_each`).
_PIECE = 64 * 1024
#: The most rows :func:`_refused` takes out of a query SQLite refuses: each costs a few dozen
#: queries of a range of rows, and a database of more is refused whole, saying why.
MAX_REFUSED = 64
#: Whether SQLite takes ``AS NOT MATERIALIZED`` (3.35): :func:`_refused`'s stand-in for a
#: table, named twice in a query, would else be copied whole, its long values with it.
_HINTED = sqlite3.sqlite_version_info >= (3, 35, 0)


def connect(path: Path) -> sqlite3.Connection:
    """The database at ``path``, opened read only, refusing to read any value longer than
    :func:`~turnfold.formats.source.record_limit` (an error, which :func:`rows` turns into a
    skipped row)."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{_how_to_open(path)}", uri=True)
    # SQLite checks a value's length before it allocates it: a message of 600 MB read whole
    # held 1.75 GB of the kernel. Python 3.10 cannot set the limit (:data:`LIMITED`).
    if LIMITED and sys.version_info >= (3, 11):
        db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, record_limit())
    return db


def _how_to_open(path: Path) -> str:
    """The URI parameters :func:`connect` opens ``path`` with.

    Even read only, SQLite opens a write-ahead-log database's ``-wal`` and ``-shm`` files, and
    creates them when they are missing; a read-only connection cannot remove them on closing, as
    the last writer does. So reading a closed OpenCode or Copilot database would leave two files
    beside it. With no ``-wal`` file (nor a rollback ``-journal``) no connection has it open and
    every committed row is in the file itself: it is opened ``immutable``, which creates nothing.
    A writer that opens it meanwhile writes to a new log, which the reading never sees; only a
    checkpoint during the reading (one per thousand pages of log, by default) could change the
    file under it, and the reading may then fail with SQLite's error. With a ``-wal`` file,
    the agent may be writing, and the log holds rows the file does not yet: read only it is.
    """
    try:
        with path.open("rb") as stream:
            header = stream.read(20)
    except OSError:
        return "mode=ro"
    # Bytes 18 and 19 are the read and write versions: 2 in write-ahead-log mode.
    in_wal_mode = header.startswith(HEADER) and header[18:20] == b"\x02\x02"
    beside = [path.with_name(path.name + suffix) for suffix in ("-wal", "-journal")]
    if in_wal_mode and not any(other.exists() for other in beside):
        return "mode=ro&immutable=1"
    return "mode=ro"


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


def listed(row: OversizedRow) -> str:
    """The id by which a listing of sessions names the session of ``row``, skipped for a long
    value (its title, its metadata), which reading the session clips or leaves out with a
    warning. When the id itself is too long to read, a stand-in saying why
    (:data:`UNREADABLE_ID`): no ``sample=`` could name the session, and asking for the
    stand-in is an error (:func:`rows`), so a scan shows that session as an error row and
    every other as it is."""
    return stand_in(row) if row.key is None else str(row.key)


def stand_in(row: OversizedRow) -> str:
    """What a listing names the session of ``row`` by when its id (or a part of it: the ADK's
    app and user) is too long to read: :data:`UNREADABLE_ID` and why."""
    return f"{UNREADABLE_ID}{row.said}>"


def refuse_unreadable(params: Sequence[Any]) -> None:
    """A query for a session by :func:`listed`'s stand-in is refused with its reason (asked
    by :func:`rows` of its ``params``; by a reader that finds its session otherwise, of its
    ``sample=``)."""
    for param in params:
        if isinstance(param, str) and param.startswith(UNREADABLE_ID) and param.endswith(">"):
            raise sqlite3.DataError(param[len(UNREADABLE_ID) : -1])


def first_of_each(
    db: sqlite3.Connection,
    cells: list[tuple[str, str, int]],
    known: Sequence[tuple[str, str, int]] = (),
) -> set[int]:
    """The index of the first of ``cells`` (each a table, its column and a rowid: ids too long
    to read, which SQLite refuses to group or compare) that holds each value, but for the
    values a cell of ``known`` holds: a listing names each session so, once, however many rows
    name it by an id :func:`rows` could not read, and not at all where its own row (``known``)
    names it. Values are told apart without holding one whole (:func:`identities`)."""
    found = identities(db, [*known, *cells])
    held = set(found[: len(known)])
    first: dict[tuple[int, bytes], int] = {}
    for index, identity in enumerate(found[len(known) :]):
        if identity not in held:
            first.setdefault(identity, index)
    return set(first.values())


def identities(
    db: sqlite3.Connection, cells: list[tuple[str, str, int]]
) -> list[tuple[int, bytes]]:
    """What tells apart the values ``cells`` hold without holding one whole: its size, and
    where another has that size, its SHA-256, read a piece at a time. Two cells hold the same
    value when theirs are equal."""
    sizes = [_cell_size(db, *cell) for cell in cells]
    counts = Counter(sizes)
    return [(size, _cell_digest(db, *cell) if counts[size] > 1 else b"")
            for cell, size in zip(cells, sizes, strict=True)]  # fmt: skip


def _cell_size(db: sqlite3.Connection, table: str, column: str, rowid: int) -> int:
    """The bytes of one value: its blob handle's length where the connection refuses a long
    value whole (:func:`_handle`), else SQLite's ``length`` of its bytes."""
    blob = _handle(db, table, column, rowid)
    if blob is not None:
        with blob:
            return len(blob)
    query = f"SELECT length(CAST({quoted(column)} AS BLOB)) FROM {quoted(table)} WHERE rowid = ?"
    size: int = db.execute(query, (rowid,)).fetchone()[0] or 0
    return size


def _cell_digest(db: sqlite3.Connection, table: str, column: str, rowid: int) -> bytes:
    """The SHA-256 of one value, read :data:`_PIECE` bytes at a time (as :func:`_cell_size`)."""
    digest = hashlib.sha256()
    blob = _handle(db, table, column, rowid)
    if blob is not None:
        with blob:
            while piece := blob.read(_PIECE):
                digest.update(piece)
        return digest.digest()
    query = (f"SELECT substr(CAST({quoted(column)} AS BLOB), ?, ?) "
             f"FROM {quoted(table)} WHERE rowid = ?")  # fmt: skip
    start = 1
    while piece := db.execute(query, (start, _PIECE, rowid)).fetchone()[0]:
        digest.update(piece)
        start += len(piece)
    return digest.digest()


def _handle(db: sqlite3.Connection, table: str, column: str, rowid: int) -> Any:
    """A read-only blob handle on one value where the connection refuses a long value whole
    (:data:`LIMITED`); else None, and SQL reads it. No handle opens a null or a number (a
    hostile row's id may be either): short, SQL reads it too."""
    if not LIMITED:
        return None
    try:
        return db.blobopen(table, column, rowid, readonly=True)  # type: ignore[attr-defined]
    except sqlite3.OperationalError:
        return None


def rows(
    db: sqlite3.Connection,
    table: str,
    columns: str,
    rest: str = "",
    params: Sequence[Any] = (),
    *,
    alias: str = "",
    key: str | None = None,
    bounded: Collection[str] = (),
    times: Collection[str] = (),
    warn: Callable[[str], object] | None = None,
    unordered: str | None = None,
) -> Iterator[Any]:
    """The rows of ``SELECT {columns} FROM {table} {alias} {rest}`` (``rest``: its joins,
    ``WHERE`` and ``ORDER BY``), as ``db`` makes rows; a row holding a value longer than
    :func:`~turnfold.formats.source.record_limit`, or one of its ``bounded`` columns (its ids
    and times) longer than :data:`KEY_BYTES`, is an :class:`OversizedRow` in its place (named
    by its ``key`` column), and the rows after it are still read; one of its ``times`` (read
    no longer either) that long is None in its row, which ``warn`` is told of. ``columns`` are
    ``table``'s own (a row is read again alone by its rowid). A ``params`` value that is
    :func:`listed`'s stand-in for an unreadable id is refused (:class:`sqlite3.DataError`)
    with its reason.

    SQLite's refusal of the long value ends the whole query, and an ``ORDER BY`` sorts whole
    rows: so the query is read as it is, each row's rowid noted, until it is refused; then the
    rows' rowids alone are read in the query's order, and every row not yet read is read alone,
    the oversized one told apart. A database with no long value is read by the one query.
    Where ``rest`` sorts or groups by the long value itself (a session's id in a listing), SQLite
    refuses even the rowids: then the rows are read by ``unordered`` (the same rows in an order
    of no such value: by rowid, say, with no ``GROUP BY``), whose reader keeps each session's
    first row; without it (or once a row was yielded), in the query's order without the rows
    SQLite refuses it for (:func:`_refused`), each of those an :class:`OversizedRow` after them.
    Where SQLite cannot refuse it (:data:`LIMITED`), and for the ``bounded`` columns, the query
    measures each value and reads those within their bound only (:func:`_measured`): SQLite
    loads a long one to measure it, Python never holds it.
    """
    refuse_unreadable(params)
    named = f"{quoted(table)} {alias}".rstrip()
    own = alias or quoted(table)
    made = db.row_factory
    shape = db.execute(f"SELECT {columns} FROM {named} LIMIT 0")  # the rows' column names
    cursor = db.cursor()
    cursor.row_factory = None
    items = _items(db, table, columns, own) if bounded or times or not LIMITED else []
    bounds = [_bound(column, (*bounded, *times)) for _, column in items]
    select = _measured(items, bounds) if items else columns
    measured = [(column or item, bound) for (item, column), bound in zip(items, bounds, strict=True)
                if bound is not None]  # fmt: skip

    def checked(rowid: int, found: Sequence[Any]) -> Any:
        sizes, values = found[: len(measured)], tuple(found[len(measured) :])
        long = [(name, size, bound) for (name, bound), size in zip(measured, sizes, strict=True)
                if size > bound]  # fmt: skip
        # A time too long to be one is none (its value read as null): its row is still read.
        gone = [(name, size) for name, size, _ in long if name in times] if warn else []
        if len(gone) < len(long):
            return _oversized(db, table, rowid, key, long)
        for name, size in gone:
            assert warn is not None
            warn(f"{_where(db, table, rowid, key)}: its {name} of {size:,} bytes, {_OVER_KEY}; "
                 "left out")  # fmt: skip
        return made(shape, values) if made is not None else values

    def spared(rowid: int, chosen: str) -> Any:
        """The row ``rowid`` SQLite refused for a long value: read with its long times null
        (said, if it is one of the rows ``chosen``: ``rest``, or the row alone) when they are
        all its long values, else its :class:`OversizedRow`."""
        long = _long_values(db, table, rowid)
        if not (warn and long and all(column in times for column, _ in long)):
            return _oversized(db, table, rowid, key)
        nulled = _shadow(db, table, f"rowid = {int(rowid)}", {column for column, _ in long})
        found = cursor.execute(f"{nulled}SELECT {own}.rowid, {select} FROM {named} {chosen}",
                               params if chosen == rest else ()).fetchone()  # fmt: skip
        if found is None:  # the row is no row of the query's, its times read as none
            return _oversized(db, table, rowid, key)
        where, limit = _where(db, table, rowid, key), record_limit()
        # A row the query could not order by its long time comes after those it ordered.
        after = "; the row read after the others" if chosen == rest else ""
        for column, size in long:
            warn(f"{where}: its {column} of {size:,} bytes, over the limit of {limit:,} "
                 f"(TURNFOLD_MAX_RECORD_BYTES); left out{after}")  # fmt: skip
        return checked(rowid, found[1:])

    query = f"SELECT {own}.rowid, {select} FROM {named} {rest}"
    if not LIMITED:
        for rowid, *found in cursor.execute(query, params):
            yield checked(rowid, found)
        return
    read: set[int] = set()
    try:
        for rowid, *found in cursor.execute(query, params):
            read.add(rowid)
            yield checked(rowid, found)
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
        if unordered is not None and not read:  # none yielded yet: none yielded twice
            yield from rows(db, table, columns, unordered, params, alias=alias, key=key,
                            bounded=bounded, times=times, warn=warn)  # fmt: skip
            return
        order, refused = _refused(db, table, f"SELECT {own}.rowid FROM {named} {rest}", params)
    else:
        refused = []
    alone = f"SELECT {select} FROM {named} WHERE {own}.rowid = ?"
    for rowid in order:
        if rowid in read:
            continue
        try:
            found = cursor.execute(alone, (rowid,)).fetchone()
        except sqlite3.DataError as exc:
            if not _too_long(exc):
                raise
            yield spared(rowid, f"WHERE {own}.rowid = {int(rowid)}")
            continue
        if found is not None:
            yield checked(rowid, found)
    for rowid in refused:  # not in the order: after it
        if rowid not in read:
            yield spared(rowid, rest)


def _refused(
    db: sqlite3.Connection, table: str, query: str, params: Sequence[Any]
) -> tuple[list[int], list[int]]:
    """The rowids ``query`` (of ``table``'s rows) gives, in its order, save those of the rows
    SQLite refuses it for (a value over the record limit it sorts, groups or tests them by),
    and those rows' rowids. The refused rows are found by halving ranges of rowids, ``table``
    shadowed by the rows of one range (a flattened subquery: only the query's own columns are
    read, and the other rows never); then the query is read without them. More than
    :data:`MAX_REFUSED` of them, or a query refused still, is the error it was."""

    def read(where: str) -> list[int]:
        return [rowid for (rowid,) in db.execute(_shadow(db, table, where) + query, params)]

    refused: list[int] = []
    low, high = db.execute(f"SELECT min(rowid), max(rowid) FROM main.{quoted(table)}").fetchone()
    ranges = [(low, high)] if low is not None else []
    try:
        while ranges:
            first, last = ranges.pop()
            try:
                read(f"rowid BETWEEN {int(first)} AND {int(last)}")
            except sqlite3.DataError as exc:
                if not _too_long(exc) or len(refused) >= MAX_REFUSED:
                    raise
                if first == last:
                    refused.append(first)
                    continue
                middle = (first + last) // 2
                ranges += [(middle + 1, last), (first, middle)]
        kept = read(f"rowid NOT IN ({', '.join(str(int(r)) for r in refused)})")
    except sqlite3.DataError as exc:
        if not _too_long(exc):
            raise
        raise sqlite3.DataError(f"the rows of {table} are chosen or ordered by a value over the "
                                f"limit of {record_limit():,} bytes (TURNFOLD_MAX_RECORD_BYTES)"
                                ) from None  # fmt: skip
    return kept, sorted(refused)


def _shadow(db: sqlite3.Connection, table: str, where: str, nulled: Collection[str] = ()) -> str:
    """The ``WITH`` of a query that reads, for ``table``, its rows ``where`` picks (by rowid),
    each column of ``nulled`` null: a subquery SQLite flattens into the query, so that it reads
    no other row, and no column the query does not."""
    own = quoted(table)
    picked = "*"
    if nulled:
        names = [r[1] for r in db.execute(f"PRAGMA table_info({own})")]
        picked = ", ".join(f"NULL AS {quoted(n)}" if n in nulled else quoted(n) for n in names)
    hint = " NOT MATERIALIZED" if _HINTED else ""
    return f"WITH {own} AS{hint} (SELECT rowid AS rowid, {picked} FROM main.{own} WHERE {where}) "


def row(
    db: sqlite3.Connection,
    table: str,
    columns: str,
    rest: str = "",
    params: Sequence[Any] = (),
    *,
    alias: str = "",
    key: str | None = None,
    bounded: Collection[str] = (),
) -> tuple[Any, list[str]]:
    """The first row of the query :func:`rows` reads (None when there is none), whole: a
    value longer than :func:`~turnfold.formats.source.record_limit` clipped to its first
    :data:`CLIPPED_BYTES` (text decoded, a character cut at the end replaced), one of its
    ``bounded`` columns longer than :data:`KEY_BYTES` left out (None: a time or an id of that
    size is none), with what a warning says of each such value. For the row a reader cannot
    do without, a session's own: its long title or summary clipped, its session still shown."""
    found = next(rows(db, table, columns, rest, params, alias=alias, key=key, bounded=bounded),
                 None)  # fmt: skip
    if not isinstance(found, OversizedRow):
        return found, []
    named, own = f"{quoted(table)} {alias}".rstrip(), alias or quoted(table)
    shape = db.execute(f"SELECT {columns} FROM {named} LIMIT 0")
    limit, where = record_limit(), _where(db, table, found.rowid, key)
    values: list[Any] = []
    said: list[str] = []
    for item, column in _items(db, table, columns, own):
        kind, size = _measure(db, table, named, own, item, column, found.rowid)
        if column is not None and column in bounded and size > KEY_BYTES:
            values.append(None)
            said.append(f"{where}: its {column} of {size:,} bytes, {_OVER_KEY}; left out")
            continue
        if size <= limit:
            alone = f"SELECT {item} FROM {named} WHERE {own}.rowid = ?"
            values.append(db.execute(alone, (found.rowid,)).fetchone()[0])
            continue
        head = _head(db, table, named, own, item, column, found.rowid)
        values.append(head.decode("utf-8", "replace") if kind == "text" else head)
        said.append(f"{where}: its {column or item} of {size:,} bytes, over the limit of "
                    f"{limit:,} (TURNFOLD_MAX_RECORD_BYTES); clipped to its first "
                    f"{len(head):,} bytes")  # fmt: skip
    made = db.row_factory
    return (made(shape, tuple(values)) if made is not None else tuple(values)), said


def _items(
    db: sqlite3.Connection, table: str, columns: str, own: str
) -> list[tuple[str, str | None]]:
    """The expressions of a query's ``columns`` (``*`` the table's, each named by ``own``),
    each with the table's column it is, when it is one (``m.id``: ``id``)."""
    if columns.strip() == "*":
        names = [r[1] for r in db.execute(f"PRAGMA table_info({quoted(table)})")]
        return [(f"{own}.{quoted(name)}", name) for name in names]
    items, depth, start, quote = [], 0, 0, ""
    for at, char in enumerate(columns):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`[":
            quote = "]" if char == "[" else char
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "," and not depth:
            items.append(columns[start:at].strip())
            start = at + 1
    items.append(columns[start:].strip())
    own_columns = {r[1] for r in db.execute(f"PRAGMA table_info({quoted(table)})")}
    named = [item.rsplit(".", 1)[-1].strip('"`[]') for item in items]
    return [(item, name if name in own_columns else None)
            for item, name in zip(items, named, strict=True)]  # fmt: skip


def _bound(column: str | None, bounded: Collection[str]) -> int | None:
    """The most bytes :func:`rows` reads of a query's item that is ``column``: :data:`KEY_BYTES`
    for an id or a time (``bounded``), the record limit where SQLite cannot refuse a longer
    value (:data:`LIMITED`); None where the value is read as it is."""
    if column is not None and column in bounded:
        return min(KEY_BYTES, record_limit())
    return None if LIMITED else record_limit()


def _measured(items: list[tuple[str, str | None]], bounds: list[int | None]) -> str:
    """The columns of a query of ``items`` that measures each one with a bound (``length`` of
    its bytes, which SQLite reads but Python does not) and reads it only within its bound:
    the bounded values' sizes, then every value (a long one null)."""
    sizes, values = [], []
    for (item, _), bound in zip(items, bounds, strict=True):
        if bound is None:
            values.append(item)
            continue
        sizes.append(_size(item))
        values.append(_within(item, bound))
    return ", ".join(sizes + values)


def _size(item: str) -> str:
    """SQL of the bytes of a query's item, which SQLite reads to measure and Python never holds."""
    return f"coalesce(length(CAST({item} AS BLOB)), 0)"


def _within(item: str, bound: int) -> str:
    """SQL of a query's item where it holds at most ``bound`` bytes, else null."""
    return f"CASE WHEN {_size(item)} > {bound} THEN NULL ELSE {item} END"


def _measure(
    db: sqlite3.Connection, table: str, named: str, own: str, item: str, column: str | None,
    rowid: int,
) -> tuple[str, int]:  # fmt: skip
    """The type of the value ``item`` of the row ``rowid`` and its size in bytes, without
    reading it into Python: a blob handle's length where the value is a column of text or
    bytes (and the connection refuses it whole), else SQLite's ``length`` of its bytes."""
    (kind,) = db.execute(f"SELECT typeof({item}) FROM {named} WHERE {own}.rowid = ?",
                         (rowid,)).fetchone()  # fmt: skip
    if kind not in ("text", "blob"):
        return kind, 0
    if LIMITED and column is not None:
        with db.blobopen(table, column, rowid, readonly=True) as blob:  # type: ignore[attr-defined]
            return kind, len(blob)
    query = f"SELECT length(CAST({item} AS BLOB)) FROM {named} WHERE {own}.rowid = ?"
    size: int = db.execute(query, (rowid,)).fetchone()[0]
    return kind, size


def _head(
    db: sqlite3.Connection, table: str, named: str, own: str, item: str, column: str | None,
    rowid: int,
) -> bytes:  # fmt: skip
    """The first :data:`CLIPPED_BYTES` of the long value ``item`` of the row ``rowid``: read
    from its blob handle where the connection refuses it whole, else cut by SQLite."""
    if LIMITED and column is not None:
        with db.blobopen(table, column, rowid, readonly=True) as blob:  # type: ignore[attr-defined]
            head: bytes = blob.read(CLIPPED_BYTES)
            return head
    query = f"SELECT substr(CAST({item} AS BLOB), 1, ?) FROM {named} WHERE {own}.rowid = ?"
    cut: bytes = db.execute(query, (CLIPPED_BYTES, rowid)).fetchone()[0]
    return cut


def _too_long(error: sqlite3.DataError) -> bool:
    """Whether SQLite refused a value over its length limit (:func:`connect`)."""
    return getattr(error, "sqlite_errorname", None) == "SQLITE_TOOBIG"


def _oversized(
    db: sqlite3.Connection, table: str, rowid: int, key: str | None,
    long: list[tuple[str, int, int]] | None = None,
) -> OversizedRow:  # fmt: skip
    """The stand-in of a row of ``table`` that holds a value over the limit: the row,
    by its rowid and ``key``, and each long value's column and size (``long``, as the query
    measured them, with their bound; else read without reading the value, by a blob handle),
    as a long JSON line's warning says it; an id or a time over :data:`KEY_BYTES` said so."""
    limit = record_limit()
    named = _key(db, table, rowid, key)
    if long is None:
        long = [(column, size, limit) for column, size in _long_values(db, table, rowid)]
    keys = [f"its {column} of {size:,} bytes" for column, size, bound in long if bound < limit]
    held = [f"its {column} of {size:,} bytes" for column, size, bound in long if bound >= limit]
    parts = [f"{', '.join(held)}, over the limit of {limit:,} (TURNFOLD_MAX_RECORD_BYTES)"
             ] if held else []  # fmt: skip
    parts += [f"{', '.join(keys)}, {_OVER_KEY}"] if keys else []
    said = f"{_where(db, table, rowid, key, named)}: " + (
        "; ".join(parts) or f"a value, over the limit of {limit:,} (TURNFOLD_MAX_RECORD_BYTES)"
    )
    return OversizedRow(table, rowid, named, said)


def _long_values(db: sqlite3.Connection, table: str, rowid: int) -> list[tuple[str, int]]:
    """Each column of the row ``rowid`` of ``table`` whose value is over the record limit,
    with its size, measured without reading it (:func:`_measure`)."""
    limit, own, long = record_limit(), quoted(table), []
    for _, column in _items(db, table, "*", own):
        assert column is not None
        with contextlib.suppress(sqlite3.Error):
            _, size = _measure(db, table, own, own, f"{own}.{quoted(column)}", column, rowid)
            long += [(column, size)] if size > limit else []
    return long


def _key(db: sqlite3.Connection, table: str, rowid: int, key: str | None) -> Any:
    """The ``key`` column's value of the row ``rowid`` (None when it is longer than an id
    may be, :data:`KEY_BYTES`, or too long to read)."""
    if key is None:
        return None
    bound = min(KEY_BYTES, record_limit())
    query = f"SELECT {_within(key, bound)} FROM {quoted(table)} WHERE rowid = ?"
    with contextlib.suppress(sqlite3.DataError):
        found = db.execute(query, (rowid,))
        return found.fetchone()[0]
    return None


def _where(
    db: sqlite3.Connection, table: str, rowid: int, key: str | None, named: Any = None
) -> str:
    """The row ``rowid`` of ``table`` as a warning names it, by its ``key`` column too."""
    named = _key(db, table, rowid, key) if named is None else named
    where = f"{table} row {rowid}"
    return where + f" ({key} {str(named)[:80]})" if key is not None and named is not None else where
