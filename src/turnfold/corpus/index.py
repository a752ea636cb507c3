"""The scan's on-disk index (spec C-4): what each session file summarised to, last time.

An entry is valid while the file's path, size and modification time (nanoseconds) and
turnfold's version are what they were when it was written, and the scan asked for the same
``format``; then the row, its tool-call and turn rows, or the verdict that the file is not a
session (skipped, or a sub-agent's file) come from here and the file is not opened.

The index is one SQLite database in WAL mode under ``platformdirs.user_cache_dir("turnfold")``
(``TURNFOLD_CACHE_DIR`` overrides it), so two kernels scanning at once never see a torn index:
each write is a transaction, readers never block the writer, and a busy database is waited for.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import DATETIME_COLUMNS, Summary

#: Set it to a folder to keep the index elsewhere (tests point it at a temporary folder).
CACHE_ENV = "TURNFOLD_CACHE_DIR"
INDEX_NAME = "corpus-index.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    version TEXT NOT NULL,
    format TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT
)
"""


def cache_dir() -> Path:
    """Where the index lives: ``$TURNFOLD_CACHE_DIR``, else the user's cache directory."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("turnfold"))


def _version() -> str:
    from turnfold import __version__

    return __version__


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot store {type(value).__name__}")


def _decode_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        for name in DATETIME_COLUMNS:
            if isinstance(row.get(name), str):
                row[name] = datetime.fromisoformat(row[name])
        out.append(row)
    return out


def _dump(summary: Summary) -> str | None:
    if summary.row is None:
        return None
    return json.dumps(
        {"row": summary.row, "tool_calls": summary.tool_calls, "turns": summary.turns},
        default=_encode, ensure_ascii=False, separators=(",", ":"),
    )  # fmt: skip


def _load(kind: str, text: str | None) -> Summary:
    if text is None:
        return Summary(kind)  # type: ignore[arg-type]  # written by _dump from a Summary's kind
    data = json.loads(text)
    (row,) = _decode_rows([data["row"]])
    return Summary("row", row, _decode_rows(data["tool_calls"]), _decode_rows(data["turns"]))


class Index:
    """The index of one cache directory; a context manager that closes its connection."""

    def __init__(self, directory: Path | None = None) -> None:
        folder = directory or cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / INDEX_NAME
        self.version = _version()
        # isolation_level=None: transactions are explicit, so a batch of writes is atomic.
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

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

    def lookup(self, items: list[Item]) -> dict[int, Summary]:
        """The cached summaries of ``items`` still valid, by position in ``items``."""
        found: dict[int, Summary] = {}
        wanted = [(i, item) for i, item in enumerate(items) if item.path and item.size is not None]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            cursor = self._db.execute(
                f"SELECT path, size, mtime_ns, version, format, kind, summary FROM entries "
                f"WHERE path IN ({marks})",
                [self._where(item) for _, item in chunk],
            )
            stored = {r[0]: r[1:] for r in cursor}
            for position, item in chunk:
                entry = stored.get(self._where(item))
                if entry is None:
                    continue
                size, mtime_ns, version, format, kind, text = entry
                if (size, mtime_ns, version, format) == (
                    item.size, item.mtime_ns, self.version, item.format or "",
                ):  # fmt: skip
                    found[position] = _load(kind, text)
        return found

    def store(self, pairs: Iterable[tuple[Item, Summary]]) -> None:
        """Remember the summaries of these file items, in one transaction."""
        values = [
            (
                self._where(item),
                item.size,
                item.mtime_ns,
                self.version,
                item.format or "",
                summary.kind,
                _dump(summary),
            )
            for item, summary in pairs
            if item.path and item.size is not None and item.mtime_ns is not None
        ]
        if not values:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?)", values)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def forget_missing(self, roots: Iterable[str], present: Iterable[str]) -> int:
        """Drop entries of files under ``roots`` that are gone; how many were dropped."""
        keep = {os.path.abspath(p) for p in present}
        gone: list[str] = []
        for root in roots:
            prefix = os.path.join(os.path.abspath(root), "")
            cursor = self._db.execute(
                "SELECT path FROM entries WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
            )
            gone.extend(p for (p,) in cursor if p not in keep)
        if gone:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("DELETE FROM entries WHERE path = ?", [(p,) for p in gone])
            self._db.execute("COMMIT")
        return len(gone)

    def stats(self) -> Mapping[str, int]:
        """How many entries the index holds (for tests and the curious)."""
        (count,) = self._db.execute("SELECT count(*) FROM entries").fetchone()
        return {"entries": int(count)}
