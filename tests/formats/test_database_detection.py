"""Detecting a SQLite file opens it once (:func:`turnfold.formats.databases.one_look`): every
SQLite-backed reader (OpenCode, Kilo, Crush, MLflow, Agno, LangGraph, the Agents SDK, ADK)
decides from one reading of its tables, where each opened it on its own (seven or more opens
of one file)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import _session_database
from turnfold.formats import databases, path_format

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: A real store of each reader that has a fixture, and the format it must be told as.
STORES = {
    "opencode/work/opencode.db": "opencode",
    "opencode/kilo/work/kilo.db": "opencode",  # Kilo Code's OpenCode
    "crush/cisco-auto/crush.db": "crush",
    "frameworks/adk/adk_v2.13.0_databasesessionservice.db": "adk-db",
    "frameworks/agno/agno_v3.1.10_sqlitedb.db": "agno-db",
    "frameworks/openai-agents/openai-agents_v0.24.0_sqlitesession.db": "openai-agents-db",
    "frameworks/langchain/langgraph_v1.2.24_sqlitesaver_checkpoints.sqlite": (
        "langgraph-checkpoints"
    ),
}


class _Opens:
    def __init__(self) -> None:
        self.count = 0
        self.open: list[sqlite3.Connection] = []


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> _Opens:
    seen = _Opens()
    real = sqlite3.connect

    def counting(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        seen.count += 1
        db = real(*args, **kwargs)
        seen.open.append(db)
        return db

    monkeypatch.setattr(databases.sqlite3, "connect", counting)
    return seen


def _closed(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


def _stray(tmp_path: Path) -> Path:
    """A SQLite file of no reader's: twenty tables none of them reads."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        for table in range(20):
            db.execute(f"CREATE TABLE t{table} (id INTEGER PRIMARY KEY, session_id TEXT)")
    db.close()
    return path


def test_detection_opens_a_database_once(opens: _Opens, tmp_path: Path) -> None:
    told = {}
    for name in STORES:
        path = FIXTURES / name
        path_format(path)  # the readers' modules imported: their imports open nothing
        opens.count = 0
        told[name] = path_format(path)
        assert opens.count == 1, name
    assert told == {name: STORES[name] for name in STORES}
    stray = _stray(tmp_path)
    opens.count = 0
    assert path_format(stray) is None
    assert opens.count == 1
    assert all(_closed(db) for db in opens.open)  # none left open


def test_a_file_that_is_no_database_is_not_opened(opens: _Opens, tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not SQLite")
    assert path_format(path) is None
    assert opens.count == 0


def test_a_scan_tells_a_database_s_reader_with_one_open(opens: _Opens, tmp_path: Path) -> None:
    for name, format in STORES.items():
        opens.count = 0
        database = _session_database(Item(key=name, path=str(FIXTURES / name)))
        assert database is not None, name
        assert (name, database.NAME) == (name, format)
        assert opens.count == 1, name
    stray = _stray(tmp_path)
    opens.count = 0
    assert _session_database(Item(key="x", path=str(stray))) is None
    assert opens.count == 1


def test_outside_one_look_each_call_opens_on_its_own(opens: _Opens) -> None:
    """A reader reading its store (not detecting) is not held to a look it is not in."""
    path = FIXTURES / "opencode" / "work" / "opencode.db"
    assert databases.tables(path) is not None
    assert "parts" not in databases.columns(path, "message")
    assert opens.count == 2
    with databases.one_look(path):
        assert databases.tables(path) == databases.tables(path)
        assert databases.columns(path, "message") == databases.columns(path, "message")
        other = FIXTURES / "crush" / "cisco-auto" / "crush.db"
        assert databases.tables(other) is not None  # another file: opened on its own
    assert opens.count == 4
