"""A SQLite store's row over the record limit (X-1), on every Python. A session's own row (its
``directory``, its ``todos``) over the limit refused the whole session ("not readable: a value
over the limit"); it is read with that value clipped to its first bytes and a warning naming
the row, its column and size, the session shown as before. Python 3.10 cannot set SQLite's
length limit, and every value was read whole there: without it (``databases.LIMITED`` off,
as on 3.10), each value is measured in the query and a message's row over the limit skipped
with the same warning as with it."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

import turnfold
from tests.formats.oversized import LIMIT, PADDING, lower_limit, peak_kib, shown, skipped
from turnfold.formats import databases

FIXTURES = Path(__file__).parents[1] / "fixtures"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
CRUSH = FIXTURES / "crush" / "cisco-auto" / "crush.db"


@pytest.fixture(params=[True, False], ids=["limited", "unlimited"])
def limited(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test with SQLite's length limit (Python 3.11 and later) and without (3.10)."""
    if request.param and sys.version_info < (3, 11):
        pytest.skip("SQLite's limit is set from Python 3.11")
    monkeypatch.setattr(databases, "LIMITED", request.param)
    lower_limit(monkeypatch)
    return bool(request.param)


def _padded(source: Path, tmp_path: Path, table: str, column: str) -> tuple[Path, int, str, str]:
    """A copy of the database ``source`` whose first row of ``table`` has ``column`` padded
    past the limit: the copy, the row, its key and the value before."""
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        query = f"SELECT rowid, id, {column} FROM {table} ORDER BY rowid LIMIT 1"
        rowid, key, before = db.execute(query).fetchone()
        db.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?",
                   ((before or "") + PADDING, rowid))  # fmt: skip
    return path, rowid, key, before or ""


def _clipped(path: Path, table: str, rowid: int, key: str, column: str) -> str:
    with contextlib.closing(sqlite3.connect(path)) as db:
        query = f"SELECT length(CAST({column} AS BLOB)) FROM {table} WHERE rowid = ?"
        (length,) = db.execute(query, (rowid,)).fetchone()
    return (f"{table} row {rowid} (id {key}): its {column} of {length:,} bytes, over the limit "
            f"of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); clipped to its first "
            f"{databases.CLIPPED_BYTES:,} bytes")  # fmt: skip


def test_X1_an_opencode_session_whose_own_row_is_too_long_is_shown_clipped(
    tmp_path: Path, limited: bool
) -> None:
    whole = turnfold.load(OPENCODE)
    path, rowid, key, directory = _padded(OPENCODE, tmp_path, "session", "directory")
    transcript = turnfold.load(path)
    assert [w.reason for w in transcript.warnings] == [
        _clipped(path, "session", rowid, key, "directory")]  # fmt: skip
    assert shown(transcript.entries) == shown(whole.entries)
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        (c.name, c.status) for c in whole.tool_calls()]  # fmt: skip
    assert transcript.metadata["title"] == whole.metadata["title"]
    cwd = transcript.metadata["cwd"]
    assert cwd.startswith(directory)
    assert len(cwd) == databases.CLIPPED_BYTES  # of the padding


def test_X1_a_crush_session_whose_own_row_is_too_long_is_shown_clipped(
    tmp_path: Path, limited: bool
) -> None:
    whole = turnfold.load(CRUSH)
    path, rowid, key, _ = _padded(CRUSH, tmp_path, "sessions", "todos")
    transcript = turnfold.load(path)
    said = [w.reason for w in transcript.warnings]
    assert _clipped(path, "sessions", rowid, key, "todos") in said
    assert shown(transcript.entries) == shown(whole.entries)
    assert transcript.metadata["title"] == whole.metadata["title"]


def test_X1_a_message_row_too_long_is_skipped_as_with_the_limit(
    tmp_path: Path, limited: bool
) -> None:
    """OpenCode's thinking part over the limit: left out, its row named, the rest read."""
    whole = turnfold.load(OPENCODE)
    path = tmp_path / "opencode.db"
    shutil.copyfile(OPENCODE, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        [(rowid, part_id)] = db.execute(
            "SELECT rowid, id FROM part WHERE data LIKE '%TF-THINK%'").fetchall()  # fmt: skip
        db.execute("UPDATE part SET data = data || ? WHERE id = ?", (PADDING, part_id))
    transcript = turnfold.load(path)
    assert [w.reason for w in transcript.warnings] == [skipped(path, "part", rowid, "data", "id")]
    assert len(transcript.entries) == len(whole.entries) - 1
    assert [c.name for c in transcript.tool_calls()] == [c.name for c in whole.tool_calls()]


def test_X1_rows_without_the_limit_measure_each_value_in_their_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without SQLite's limit (3.10), the query's order, each row once, long text and blob
    each an OversizedRow; columns named by an alias, a literal, or ``*``."""
    monkeypatch.setattr(databases, "LIMITED", False)
    lower_limit(monkeypatch)
    path = tmp_path / "items.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE item (name TEXT, at INTEGER, data)")
        db.executemany("INSERT INTO item VALUES (?, ?, ?)", [
            ("n0", 2, "b"), ("n1", 1, PADDING), ("n2", 1, "a, (b)"), ("n3", 3, b"\0" * (LIMIT + 1)),
            ("n4", 2, None)])  # fmt: skip
    with contextlib.closing(databases.connect(path)) as db:
        # No limit: a plain query reads the long value whole.
        assert len(db.execute("SELECT data FROM item WHERE name = 'n1'").fetchone()[0]) == 2 * LIMIT
        found = list(databases.rows(db, "item", "i.name, 'x, y', i.data",
                                    "WHERE i.at > ? ORDER BY i.at, i.name", (0,), alias="i",
                                    key="name"))  # fmt: skip
        assert [r if isinstance(r, tuple) else r.reason for r in found] == [
            f"item row 2 (name n1): its data of {2 * LIMIT:,} bytes, over the limit of "
            f"{LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); skipped unread",
            ("n2", "x, y", "a, (b)"), ("n0", "x, y", "b"), ("n4", "x, y", None),
            f"item row 4 (name n3): its data of {LIMIT + 1:,} bytes, over the limit of "
            f"{LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); skipped unread",
        ]  # fmt: skip
        db.row_factory = sqlite3.Row
        read = list(databases.rows(db, "item", "*", "ORDER BY rowid"))
        assert [dict(r) for r in read if not isinstance(r, databases.OversizedRow)] == [
            {"name": "n0", "at": 2, "data": "b"}, {"name": "n2", "at": 1, "data": "a, (b)"},
            {"name": "n4", "at": 2, "data": None}]  # fmt: skip
        row, said = databases.row(db, "item", "*", "WHERE name = ?", ("n3",), key="name")
        assert (row["name"], row["at"], row["data"]) == ("n3", 3, bytes(databases.CLIPPED_BYTES))
        assert said == [f"item row 4 (name n3): its data of {LIMIT + 1:,} bytes, over the limit "
                        f"of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); clipped to its first "
                        f"{databases.CLIPPED_BYTES:,} bytes"]  # fmt: skip
        assert databases.row(db, "item", "*", "WHERE name = ?", ("n9",)) == (None, [])
        row, said = databases.row(db, "item", "name, data", "WHERE name = ?", ("n0",))
        assert (tuple(row), said) == (("n0", "b"), [])


def test_X1_an_adk_session_whose_own_row_is_too_long_is_shown_clipped(
    tmp_path: Path, limited: bool
) -> None:
    """The ADK's ``DatabaseSessionService`` (google-adk 2.13.0): its ``state`` padded past the
    limit (whitespace: clipped, it is the same JSON)."""
    adk = FIXTURES / "frameworks" / "adk" / "adk_v2.13.0_databasesessionservice.db"
    whole = turnfold.load(adk, sample="two-turns")
    path = tmp_path / adk.name
    shutil.copyfile(adk, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        (rowid,) = db.execute("SELECT rowid FROM sessions WHERE id = 'two-turns'").fetchone()
        db.execute("UPDATE sessions SET state = state || ? WHERE rowid = ?", (PADDING, rowid))
    transcript = turnfold.load(path, sample="two-turns")
    assert [w.reason for w in transcript.warnings] == [
        _clipped(path, "sessions", rowid, "two-turns", "state")]  # fmt: skip
    assert shown(transcript.entries) == shown(whole.entries)
    assert transcript.metadata == whole.metadata


_LOAD = """
import sys, turnfold
from turnfold.formats import databases
databases.LIMITED = False  # as on Python 3.10
transcript = turnfold.load(sys.argv[1])
print(len(transcript.entries), len(transcript.warnings))
"""


def test_X1_without_the_limit_a_row_of_many_megabytes_is_never_read_into_python(
    tmp_path: Path,
) -> None:
    """An OpenCode part of 64 MB, without SQLite's limit: SQLite reads it to measure it (its
    length, twice in the query), Python never holds it; read whole (a limit above it), it
    cost eight times its size."""
    hostile = tmp_path / "opencode.db"
    shutil.copyfile(OPENCODE, hostile)
    size = 64 * 1024 * 1024
    with contextlib.closing(sqlite3.connect(hostile)) as db, db:
        db.execute("UPDATE part SET data = data || printf('%.*c', ?, ' ') WHERE rowid = "
                   "(SELECT rowid FROM part WHERE data LIKE '%TF-THINK%')", (size,))  # fmt: skip
    entries, warnings, peak = peak_kib(OPENCODE, 1024 * 1024, _LOAD)
    held_entries, held_warnings, held = peak_kib(hostile, 1024 * 1024, _LOAD)
    assert (held_entries, held_warnings) == (entries - 1, warnings + 1)  # the thinking, said
    assert held - peak < 2.5 * size // 1024
    _, read_warnings, read_whole = peak_kib(hostile, 2 * size, _LOAD)
    assert read_warnings == warnings
    assert read_whole - peak > 4 * size // 1024
