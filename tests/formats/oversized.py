"""What the tests of the SQLite-backed readers share to make a row too long to read (X-1): a
limit far below the real one (the test of a row of many megabytes is the limit's own, in
``test_database_oversized_rows.py``), padding that leaves a value as readable as it was, and the
warning a reader gives of the row it skipped."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turnfold.formats import databases, source

#: The record limit of these tests, in bytes: above every value of the committed databases.
LIMIT = 100_000
#: Whitespace, which JSON ignores: a value padded by it reads as before, were it read at all.
PADDING = " " * (2 * LIMIT)


def lower_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loads in the test refuse a value over :data:`LIMIT` bytes, as over the real limit."""
    monkeypatch.setattr(source, "MAX_RECORD_BYTES", LIMIT)


def skipped(path: Path, table: str, rowid: int, column: str, key: str | None = None) -> str:
    """The warning of the row ``rowid`` of ``table`` in the database at ``path`` skipped for
    its long ``column``, named by its ``key`` column when given."""
    table_name = databases.quoted(table)
    with contextlib.closing(sqlite3.connect(path)) as db:
        query = f"SELECT length(CAST({column} AS BLOB)) FROM {table_name} WHERE rowid = ?"
        (size,) = db.execute(query, (rowid,)).fetchone()
        where = f"{table} row {rowid}"
        if key is not None:
            query = f"SELECT {key} FROM {table_name} WHERE rowid = ?"
            where += f" ({key} {db.execute(query, (rowid,)).fetchone()[0]})"
    return (f"{where}: its {column} of {size:,} bytes, over the limit of {LIMIT:,} "
            "(TURNFOLD_MAX_RECORD_BYTES); skipped unread")  # fmt: skip


def shown(entries: list[Any]) -> list[tuple[Any, ...]]:
    """What each entry shows (its kind, text, call, outcome and result), not its position's
    id: a transcript with one row left out against the whole one."""
    return [
        (
            type(e).__name__,
            getattr(e, "text", None),
            getattr(e, "call_id", None),
            getattr(e, "status", None),
            getattr(getattr(e, "result", None), "text", None),
        )
        for e in entries
    ]


#: A load in a fresh interpreter, which prints its entries and warnings.
LOAD = """
import sys, turnfold
transcript = turnfold.load(sys.argv[1])
print(len(transcript.entries), len(transcript.warnings))
"""
#: The load's interpreter is started by a small one that reads its peak: a child's peak RSS
#: counts what the process it was forked from held, here pytest's hundreds of megabytes.
_PEAK = """
import resource, subprocess, sys
loaded = subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], check=True,
                        capture_output=True, text=True).stdout.split()
print(*loaded, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_kib(path: Path, limit: int, load: str = LOAD) -> tuple[int, int, int]:
    """Entries, warnings and peak RSS (KiB) of a fresh interpreter running ``load`` on
    ``path`` under the record limit ``limit``."""
    env = {**os.environ, "TURNFOLD_MAX_RECORD_BYTES": str(limit)}
    out = subprocess.run([sys.executable, "-c", _PEAK, load, str(path)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()  # fmt: skip
    entries, warnings, peak = (int(v) for v in out[-3:])
    return entries, warnings, peak
