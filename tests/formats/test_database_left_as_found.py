"""Reading an agent's SQLite database leaves its folder as it was: nothing the user passed is
modified (even read only, SQLite creates ``-wal`` and ``-shm`` files beside a database in
write-ahead-log mode), and a database its agent holds open is still read with the rows its log
holds."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import turnfold
from turnfold.formats import databases

FIXTURES = Path(__file__).parent.parent / "fixtures"
#: A real OpenCode 1.18 database (tests/agents, OpenCode against the scripted model).
OPENCODE_DB = FIXTURES / "opencode" / "work" / "opencode.db"


def _in_wal_mode(tmp_path: Path) -> Path:
    """A copy of the OpenCode database in write-ahead-log mode, as OpenCode keeps its own
    (``PRAGMA journal_mode = WAL`` when it opens it), closed: no ``-wal`` file beside it."""
    path = tmp_path / "opencode.db"
    shutil.copyfile(OPENCODE_DB, path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    db.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]
    return path


def test_X1_a_closed_database_in_wal_mode_is_read_and_left_as_it_was(tmp_path: Path) -> None:
    path = _in_wal_mode(tmp_path)
    before = path.read_bytes()

    transcript = turnfold.load(path)
    corpus = turnfold.scan(tmp_path, workers=1, cache=False)

    assert transcript.metadata["title"] == "ok"
    assert transcript.dump() == turnfold.load(OPENCODE_DB).dump()
    assert (len(corpus), corpus.errors, corpus.skipped) == (1, 0, 0)
    # No -wal or -shm file of SQLite's own is left beside it, and its bytes are unchanged.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]
    assert path.read_bytes() == before


def test_X1_a_database_its_agent_holds_open_is_read_with_the_rows_of_its_log(
    tmp_path: Path,
) -> None:
    path = _in_wal_mode(tmp_path)
    agent = sqlite3.connect(path)  # the agent, still running: its last write is in the log
    try:
        agent.execute("PRAGMA wal_autocheckpoint = 0")
        agent.execute("UPDATE session SET title = 'renamed while running' WHERE parent_id IS NULL")
        agent.commit()
        assert (tmp_path / "opencode.db-wal").stat().st_size > 0
        assert databases._how_to_open(path) == "mode=ro"

        assert turnfold.load(path).metadata["title"] == "renamed while running"
    finally:
        agent.close()


def test_only_a_closed_database_in_wal_mode_is_opened_immutable(tmp_path: Path) -> None:
    rollback = tmp_path / "rollback" / "opencode.db"
    rollback.parent.mkdir()
    shutil.copyfile(OPENCODE_DB, rollback)  # as tests/agents left it: in rollback-journal mode
    (tmp_path / "wal").mkdir()
    wal = _in_wal_mode(tmp_path / "wal")

    assert databases._how_to_open(rollback) == "mode=ro"  # which creates nothing
    assert databases._how_to_open(wal) == "mode=ro&immutable=1"
    # A rollback journal beside it (a change being made as it was switched) is left to SQLite's
    # read-only opening, as a log is.
    (tmp_path / "wal" / "opencode.db-journal").write_bytes(b"")
    assert databases._how_to_open(wal) == "mode=ro"
