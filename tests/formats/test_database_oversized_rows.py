"""A SQLite database's row too long to read (X-1): SQLite refuses any value over the record
limit (``source.MAX_RECORD_BYTES``, the JSON lines' own) rather than allocate it, and
``databases.rows`` skips the row holding it, in its place an ``OversizedRow`` naming it, the
rows after it still read. Each reader's own test shows its warning and the rest of its load
(``test_X1_*`` of ``test_opencode.py``, ``test_crush.py``, ``test_adk_db.py``,
``test_agno_db.py``, ``test_langgraph_checkpoints.py``, ``test_openai_agents_db.py``,
``test_mlflow.py``)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.formats.oversized import LIMIT, PADDING, lower_limit, peak_kib
from turnfold.formats import databases

OPENCODE = Path(__file__).parents[1] / "fixtures" / "opencode" / "work" / "opencode.db"


def _table(path: Path, values: list[tuple[int, object]]) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE item (name TEXT, at INTEGER, data)")
        db.executemany("INSERT INTO item VALUES (?, ?, ?)",
                       [(f"n{i}", at, data) for i, (at, data) in enumerate(values)])  # fmt: skip


def test_X1_rows_past_an_oversized_one_are_read_in_the_query_s_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query's order, ties in it too, each row once; a long text and a long blob each an
    OversizedRow naming the row, its key and the long column's size."""
    lower_limit(monkeypatch)
    path = tmp_path / "items.db"
    _table(path, [(2, "b"), (1, PADDING), (1, "a"), (3, b"\0" * (LIMIT + 1)), (2, "c")])
    with contextlib.closing(databases.connect(path)) as db:
        db.row_factory = sqlite3.Row
        found = list(databases.rows(db, "item", "name, data", "WHERE at > ? ORDER BY at",
                                    (0,), key="name"))  # fmt: skip
    oversized = [(r.table, r.rowid, r.reason) for r in found
                 if isinstance(r, databases.OversizedRow)]  # fmt: skip
    assert oversized == [
        ("item", 2, f"item row 2 (name n1): its data of {len(PADDING):,} bytes, over the limit "
                    f"of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); skipped unread"),
        ("item", 4, f"item row 4 (name n3): its data of {LIMIT + 1:,} bytes, over the limit "
                    f"of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); skipped unread"),
    ]  # fmt: skip
    read = [dict(r) for r in found if not isinstance(r, databases.OversizedRow)]
    assert sorted(r["name"] for r in read) == ["n0", "n2", "n4"]
    assert [r["name"] for r in read][:1] == ["n2"]  # at 1 before at 2, whatever the ties
    assert len(found) == 5


def test_X1_a_database_of_no_long_value_reads_exactly_as_a_plain_query(tmp_path: Path) -> None:
    path = tmp_path / "items.db"
    _table(path, [(2, "b"), (1, "x" * 1000), (1, b"\x01\x02"), (3, None)])
    query = ("name, at, data", "WHERE at < ? ORDER BY at DESC, name", (3,))
    with contextlib.closing(databases.connect(path)) as db:
        plain = db.execute(f"SELECT {query[0]} FROM item {query[1]}", query[2]).fetchall()
        assert list(databases.rows(db, "item", *query)) == plain
        db.row_factory = sqlite3.Row
        rows = list(databases.rows(db, "item", "*", "ORDER BY rowid"))
        assert [tuple(r) for r in rows] == [tuple(r) for r in db.execute("SELECT * FROM item")]
        assert rows[1].keys() == ["name", "at", "data"]
        assert rows[1]["data"] == "x" * 1000


def test_X1_rows_ordered_by_a_value_over_the_limit_are_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``MAX_REFUSED`` such rows (each row alone is skipped below it:
    tests/test_sqlite_long_values.py)."""
    lower_limit(monkeypatch)
    monkeypatch.setattr(databases, "MAX_REFUSED", 0)
    path = tmp_path / "items.db"
    _table(path, [(1, "a"), (2, "b")])
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE item SET name = ? WHERE at = 2", (PADDING,))
    said = r"rows of item are chosen or ordered by a value over the limit of 100,000 bytes"
    db = databases.connect(path)
    with contextlib.closing(db), pytest.raises(sqlite3.DataError, match=said):
        list(databases.rows(db, "item", "data", "ORDER BY name"))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="SQLite's limit is set from Python 3.11")
def test_X1_a_row_of_many_megabytes_is_never_held(tmp_path: Path) -> None:
    """The memory of a load of an OpenCode database one part of which is 64 MB: the row is
    never read (the same load without the limit reads it whole, twice over: SQLite's copy
    and Python's)."""
    hostile = tmp_path / "opencode.db"
    shutil.copyfile(OPENCODE, hostile)
    size = 64 * 1024 * 1024
    with contextlib.closing(sqlite3.connect(hostile)) as db, db:
        db.execute("UPDATE part SET data = data || printf('%.*c', ?, ' ') WHERE rowid = "
                   "(SELECT rowid FROM part WHERE data LIKE '%TF-THINK%')", (size,))  # fmt: skip
    entries, warnings, peak = peak_kib(OPENCODE, 1024 * 1024)
    held_entries, held_warnings, held = peak_kib(hostile, 1024 * 1024)
    assert (held_entries, held_warnings) == (entries - 1, warnings + 1)  # the thinking, said
    assert held - peak < size // 1024 // 4
    _, read_warnings, read_whole = peak_kib(hostile, 2 * size)
    assert read_warnings == warnings
    assert read_whole - peak > size // 1024
