"""The scan's on-disk index (spec C-4): what each session file summarised to, last time.

An entry is one file's: valid while the file's path, size, modification time and inode change
time (nanoseconds: a rewrite that keeps the size and sets the modification time back, as
``cp -p`` or ``rsync -t`` do, still moves the change time, which the same ``stat`` gives) and
turnfold's version are what they were when it was written, and the scan asked for the same
``format``; then the file's rows (one for a session, one per sample and epoch of an eval log),
their tool-call and turn rows, or the verdict that the file is not a session (skipped, a
sub-agent's file, part of another file's session) come from here and the file is not opened.

A file that changed is read again, alone; so is the session of a sub-agent's file that changed
or went (the sub-agent's entry keeps its session's pattern for that). A file that grew (a live
agent's) is read on from its last complete line where its format allows
(:mod:`turnfold.formats.resume`): a row's counts come from the whole transcript, and a later
line can change what an earlier one made (a result settles a call, a message id seen again
replaces its message), so what is kept is the reader's whole state at that line, a *checkpoint*,
about as large as the transcript. It is kept only for a file seen growing: the first growth a
scan sees is read whole and checkpointed, the next ones are read on from the checkpoint, and a
scan that finds the file unchanged (the agent stopped) forgets it.

The rows are kept as Arrow record batches in IPC form, the form the corpus's tables are made of:
a rescan reads them back without building one Python object per row (decoding rows kept as JSON
text, and building the tables from them, was most of what an unchanged rescan cost).

The index is one SQLite database in WAL mode under ``platformdirs.user_cache_dir("turnfold")``
(``TURNFOLD_CACHE_DIR`` overrides it), so two kernels scanning at once never see a torn index:
each write is a transaction, readers never block the writer, and a busy database is waited for.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnfold.caches import CACHE_ENV as CACHE_ENV  # where the tests point the index
from turnfold.caches import INDEX_NAME as INDEX_NAME
from turnfold.caches import cache_dir
from turnfold.corpus.discover import Item
from turnfold.userwarn import warn_at_caller

if TYPE_CHECKING:
    import pyarrow as pa

#: The layout of the ``files`` table and of the batches in it; an index of another layout is
#: emptied when opened (a cache: it fills again on the next scan).
SCHEMA_VERSION = 5
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER,
    version TEXT NOT NULL,
    format TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    rows BLOB,
    tool_calls BLOB,
    turns BLOB,
    session TEXT
)""",
    """
CREATE TABLE IF NOT EXISTS checkpoints (
    path TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    checkpoint BLOB NOT NULL
)""",
)
#: Paths looked up per query (SQLite's limit on parameters is far above it).
LOOKUP_CHUNK = 500


def _version() -> str:
    from turnfold.caches import code_version

    return code_version()


@dataclass
class Stored:
    """What the index holds for one file: its kind and, for ``rows``, its rows, tool-call rows
    and turn rows as record batches, the last two perhaps still in IPC form (decoded when the
    corpus's ``tool_calls()`` or ``turns()`` is first asked for); for a file seen growing,
    the checkpoint to read it on from (a pickled :class:`~turnfold.formats.resume.Checkpoint`);
    for a sub-agent's file, its session."""

    kind: str
    rows: pa.RecordBatch | None = None
    tool_calls: pa.RecordBatch | bytes | None = None
    turns: pa.RecordBatch | bytes | None = None
    checkpoint: bytes | None = None
    #: A sub-agent's file (``child``): the pattern of its session's path, when it was told
    #: (:func:`~turnfold.corpus.discover.session_of`), so that its deletion reads that
    #: session again.
    session: str | None = None


def _blob(part: pa.RecordBatch | bytes | None) -> bytes | None:
    from turnfold.corpus.tables import encode

    return part if part is None or isinstance(part, bytes) else encode(part)


def _rekey(batch: pa.RecordBatch, stored: str, item: Item, path: bool) -> pa.RecordBatch:
    """A file's batch stored under another spelling of its path (a relative one, say): keys are
    the item's key plus what followed the stored key (``#id/epoch``)."""
    import pyarrow as pa

    if not batch.num_rows:
        return batch
    keys = [item.key + str(k)[len(stored) :] for k in batch.column("key").to_pylist()]
    batch = batch.set_column(0, "key", pa.array(keys, pa.string()))
    if path:
        at = batch.schema.get_field_index("path")
        batch = batch.set_column(at, "path", pa.array([item.path] * batch.num_rows, pa.string()))
    return batch


def _restored(
    item: Item, kind: str, key: str, rows: bytes, tool_calls: bytes, turns: bytes,
    decoded: bool = False,
) -> Stored:  # fmt: skip
    """An entry as :class:`Stored`, its keys the item's (:func:`_rekey`); its tool-call and
    turn rows left in IPC form unless ``decoded`` or rekeyed."""
    from turnfold.corpus.tables import decode, row_schema, tool_call_schema, turn_schema

    if kind != "rows":
        return Stored(kind)
    if key == item.key:
        if not decoded:
            return Stored(kind, decode(rows, row_schema()), tool_calls, turns)
        return Stored(kind, decode(rows, row_schema()), decode(tool_calls, tool_call_schema()),
                      decode(turns, turn_schema()))  # fmt: skip
    return Stored(
        kind,
        _rekey(decode(rows, row_schema()), key, item, True),
        _rekey(decode(tool_calls, tool_call_schema()), key, item, False),
        _rekey(decode(turns, turn_schema()), key, item, False),
    )


#: How long a scan waits for another process that holds the index's lock.
_BUSY_TIMEOUT_S = 60.0


def _write_ahead(db: sqlite3.Connection) -> None:
    """Put the index in WAL mode, waiting for the other processes that open it at the same time.

    Switching the journal mode needs the database alone, and SQLite reports "database is
    locked" at once rather than through the busy timeout when another connection is opening a
    new index, so several scans started together would fail (seen in CI); retry until the
    timeout instead. Once the file is in WAL mode the pragma no longer needs the lock.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    pause = 0.01
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(0.5, pause * 2)


class Index:
    """The index of one cache directory; a context manager that closes its connection."""

    def __init__(self, directory: Path | None = None) -> None:
        folder = directory or cache_dir()
        self.path = folder / INDEX_NAME
        self.version = _version()
        # A cache never stops a scan (C-4, C-7): an index that is no database (a crash, a full
        # disk, a file copied over it) is made again, and a cache folder that cannot be used (a
        # file of that name, no permission, a read-only disk) leaves the scan without one,
        # each said. Before, either raised out of every scan until the user found the file.
        try:
            try:
                self._open(str(self.path), folder)
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError):
                    raise  # locked past the timeout, or the folder unusable: below
                warn_at_caller(f"{self.path}: the scan's index is unreadable ({exc}); "
                               "it is made again (a cache: the next scans fill it)")  # fmt: skip
                self._discard()
                self._open(str(self.path), folder)
        except (OSError, sqlite3.Error) as exc:
            warn_at_caller(f"{self.path}: the scan's index cannot be used ({exc}); this "
                           f"scan reads every file (set {CACHE_ENV} to a folder it may write "
                           "in)")  # fmt: skip
            self._open(":memory:", None)

    def _open(self, where: str, folder: Path | None) -> None:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit, so a batch of writes is atomic.
        self._db = sqlite3.connect(where, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            _write_ahead(self._db)
            self._db.execute("PRAGMA synchronous=NORMAL")
            (layout,) = self._db.execute("PRAGMA user_version").fetchone()
            if layout != SCHEMA_VERSION:
                self._migrate()
        except BaseException:
            self._db.close()
            raise

    def _discard(self) -> None:
        """Remove the unreadable index and its write-ahead files."""
        for suffix in ("", "-wal", "-shm"):
            with suppress(FileNotFoundError):
                os.remove(f"{self.path}{suffix}")

    def _migrate(self) -> None:
        """Empty an index of another layout (or none), once, whoever else opens it now."""
        with self._transaction():
            (layout,) = self._db.execute("PRAGMA user_version").fetchone()
            if layout != SCHEMA_VERSION:  # another kernel may have done it while we waited
                self._db.execute("DROP TABLE IF EXISTS entries")  # the JSON rows of layout 1
                self._db.execute("DROP TABLE IF EXISTS files")
                self._db.execute("DROP TABLE IF EXISTS checkpoints")
                for table in _SCHEMA:
                    self._db.execute(table)
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: the database held for writing from its start (another
        kernel's writes wait for it, or it for them), all of it committed or none."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:  # the work, or the commit itself, failed: undo all of it
            self._db.execute("ROLLBACK")
            raise

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _where(item: Item) -> str:
        assert item.path is not None
        return os.path.abspath(item.path)

    def _entries(
        self, items: list[Item], positions: Iterable[int], columns: str, join: str = ""
    ) -> Iterator[tuple[int, Item, tuple[Any, ...]]]:
        """``(position, item, its entry's columns)`` of the items at ``positions`` the index
        holds, asked for :data:`LOOKUP_CHUNK` paths at a time."""
        wanted = [(i, items[i], self._where(items[i])) for i in positions
                  if items[i].path and items[i].size is not None]  # fmt: skip
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start : start + LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            cursor = self._db.execute(
                f"SELECT f.path, {columns} FROM files f {join} WHERE f.path IN ({marks})",
                [where for _, _, where in chunk],
            )
            stored = {r[0]: r[1:] for r in cursor}
            for position, item, where in chunk:
                if where in stored:
                    yield position, item, stored[where]

    def lookup(self, items: list[Item]) -> dict[int, Stored]:
        """What the index holds, still valid, for ``items``, by position in ``items``."""
        found: dict[int, Stored] = {}
        columns = "size, mtime_ns, ctime_ns, version, format, kind, key, rows, tool_calls, turns"
        for position, item, entry in self._entries(items, range(len(items)), columns):
            size, mtime_ns, ctime_ns, version, format, kind, key, rows, tool_calls, turns = entry
            if (size, mtime_ns, ctime_ns, version, format) != (
                item.size, item.mtime_ns, item.ctime_ns, self.version, item.asked(),
            ):  # fmt: skip
                continue
            found[position] = _restored(item, kind, key, rows, tool_calls, turns)
        return found

    def previous(self, items: list[Item], positions: Iterable[int]) -> dict[int, Stored]:
        """The rows the index holds for the files at ``positions``, which changed since: a
        file of runs that grew keeps those of its records before its mark (C-4)."""
        found: dict[int, Stored] = {}
        columns = "version, format, kind, key, rows, tool_calls, turns"
        for position, item, entry in self._entries(items, positions, columns):
            version, format, kind, key, rows, tool_calls, turns = entry
            if (version, format, kind) == (self.version, item.asked(), "rows"):
                found[position] = _restored(item, kind, key, rows, tool_calls, turns, decoded=True)
        return found

    def growth(self, items: list[Item], positions: Iterable[int]) -> dict[int, bytes | None]:
        """Of the files at ``positions`` (changed since the index saw them), those that grew,
        with the checkpoint to read each on from (None: the first growth seen)."""
        grown: dict[int, bytes | None] = {}
        columns = "f.size, f.version, f.format, f.kind, c.version, c.checkpoint"
        join = "LEFT JOIN checkpoints c ON c.path = f.path"
        for position, item, entry in self._entries(items, positions, columns, join):
            size, version, format, kind, kept_version, checkpoint = entry
            assert item.size is not None
            if kind == "rows" and size < item.size and (version, format) == (
                self.version, item.asked(),
            ):  # fmt: skip
                grown[position] = checkpoint if kept_version == self.version else None
        return grown

    def store(self, entries: Iterable[tuple[Item, Stored]]) -> None:
        """Remember what these file items hold, in one transaction; a file's checkpoint is
        kept when it came with one, forgotten otherwise."""
        values: list[tuple[Any, ...]] = []
        kept: list[tuple[str, str, bytes]] = []
        forgotten: list[tuple[str]] = []
        for item, stored in entries:
            if not item.path or item.size is None or item.mtime_ns is None:
                continue
            where = self._where(item)
            blobs = (_blob(stored.rows), _blob(stored.tool_calls), _blob(stored.turns))
            stamp = (item.size, item.mtime_ns, item.ctime_ns)
            values.append((where, *stamp, self.version, item.asked(), stored.kind, item.key,
                           *blobs, stored.session))  # fmt: skip
            if stored.checkpoint is not None:
                kept.append((where, self.version, stored.checkpoint))
            else:
                forgotten.append((where,))
        if not values:
            return
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                                 values)  # fmt: skip
            self._db.executemany("INSERT OR REPLACE INTO checkpoints VALUES (?,?,?)", kept)
            self._db.executemany("DELETE FROM checkpoints WHERE path = ?", forgotten)

    def stopped_growing(self, items: Iterable[Item]) -> None:
        """Forget the checkpoints of these files, found unchanged (their agent stopped)."""
        paths = [(self._where(item),) for item in items if item.path]
        if not paths or not self._db.execute("SELECT 1 FROM checkpoints LIMIT 1").fetchone():
            return
        with self._transaction():
            self._db.executemany("DELETE FROM checkpoints WHERE path = ?", paths)

    def missing(self, roots: Iterable[str], present: Iterable[str]) -> dict[str, str | None]:
        """The entries of files under ``roots`` that are gone: each path, with its session's
        pattern when it was a sub-agent's file (that session is read again: C-4)."""
        keep = {os.path.abspath(p) for p in present}
        gone: dict[str, str | None] = {}
        for root in roots:
            prefix = os.path.join(os.path.abspath(root), "")
            cursor = self._db.execute(
                "SELECT path, session FROM files WHERE substr(path, 1, ?) = ?",
                (len(prefix), prefix),
            )
            gone.update((p, session) for p, session in cursor if p not in keep)
        return gone

    def forget(self, paths: Iterable[str]) -> None:
        """Drop the entries of these files (gone: :meth:`missing`)."""
        rows = [(p,) for p in paths]
        if not rows:
            return
        with self._transaction():
            self._db.executemany("DELETE FROM files WHERE path = ?", rows)
            self._db.executemany("DELETE FROM checkpoints WHERE path = ?", rows)

    def stats(self) -> Mapping[str, int]:
        """How many entries the index holds (for tests and the curious)."""
        (count,) = self._db.execute("SELECT count(*) FROM files").fetchone()
        return {"entries": int(count)}
