"""A long id or a bad time in a SQLite store costs its own row, never a query (X-1, L-4).

An id over the record limit that a query sorts, groups or tests its rows by (an OpenCode
part's or message's id in ``ORDER BY``, a LangGraph subgraph's ``checkpoint_ns`` in ``WHERE``
and ``GROUP BY``) made SQLite refuse the whole query: the session (or every thread's listing)
was an error. Now that row alone is skipped, with a warning naming the table, the row and the
limit, and the rest reads. A time that is no time (a message's, a checkpoint's ``ts``) is left
out with a warning naming its record, which is still shown.

The stores are copies of the committed databases the real tools wrote (OpenCode 1.18.33's,
LangGraph's ``SqliteSaver`` of a real run, see tests/fixtures/SOURCES.md), one row changed with
sqlite3 (a checkpoint's ``ts`` rewritten by LangGraph's own serializer).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest

import turnfold
from tests.formats.oversized import LIMIT, lower_limit, shown
from turnfold.formats import databases
from turnfold.formats.frameworks import langgraph_checkpoints

FIXTURES = Path(__file__).parent / "fixtures"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
SESSION = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
CHECKPOINTS = (
    FIXTURES / "frameworks" / "langchain" / "langgraph_v1.2.24_sqlitesaver_checkpoints.sqlite"
)
LONG = 2 * LIMIT


def _over(table: str, rowid: int, column: str, key: str = "") -> str:
    where = f"{table} row {rowid}" + (f" ({key})" if key else "")
    return (f"{where}: its {column} of {LONG:,} bytes, over the limit of {LIMIT:,} "
            "(TURNFOLD_MAX_RECORD_BYTES)")  # fmt: skip


def _copy(source: Path, tmp_path: Path, sql: str, params: tuple[object, ...] = ()) -> Path:
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.executescript(sql) if not params else db.execute(sql, params)
    return path


def _rowid(path: Path, table: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0])


# --- the shared rule ------------------------------------------------------------------------


def test_X1_rows_ordered_by_a_value_over_the_limit_lose_that_row_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ORDER BY name`` of a table one row's name of which is over the limit: SQLite refused
    the query (``the rows of item are chosen or ordered by a value over the limit``); now the
    others come in order, that one a stand-in saying why."""
    lower_limit(monkeypatch)
    path = tmp_path / "items.db"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE item (name TEXT, data TEXT)")
        db.executemany("INSERT INTO item VALUES (?, ?)",
                       [("c", "3"), ("a", "1"), ("x" * LONG, "2"), ("b", "4")])  # fmt: skip
    with contextlib.closing(databases.connect(path)) as db:
        found = list(databases.rows(db, "item", "data", "ORDER BY name"))
    assert found[:3] == [("1",), ("4",), ("3",)]
    (stand_in,) = found[3:]
    assert isinstance(stand_in, databases.OversizedRow)
    assert stand_in.reason == f"{_over('item', 3, 'name')}; skipped unread"


# --- OpenCode -------------------------------------------------------------------------------


def test_X1_an_opencode_part_whose_id_is_over_the_limit_costs_that_part_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's parts are read ``ORDER BY id``: a part (a copy of its first text part)
    with an id over the limit made the session an error (``the rows of part are chosen or
    ordered by...``)."""
    whole = turnfold.load(OPENCODE, sample=SESSION)
    path = _copy(OPENCODE, tmp_path, "INSERT INTO part (id, message_id, session_id, time_created, "
                 "time_updated, data) SELECT printf('%.*c', ?, 'x'), message_id, session_id, "
                 "time_created, time_updated, data FROM part WHERE session_id = ? AND "
                 "data LIKE '%\"type\":\"text\"%' ORDER BY rowid LIMIT 1",
                 (LONG, SESSION))  # fmt: skip
    lower_limit(monkeypatch)
    transcript = turnfold.load(path, sample=SESSION)
    assert shown(transcript.entries) == shown(whole.entries)
    (warning,) = transcript.warnings
    assert warning.reason == f"{_over('part', _rowid(path, 'part'), 'id')}; skipped unread"
    assert warning.source == str(path)


def test_X1_an_opencode_message_whose_id_is_over_the_limit_costs_that_message_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenCode 1.2's first schema indexed messages by session alone (``message_session_idx``,
    migration ``20260127222353_familiar_lady_ursula``; ``20260312043431_session_message_cursor``
    replaced it by the index the fixture has): SQLite sorts a session's messages by
    ``time_created, id`` itself, and a message with an id over the limit made the session an
    error. The copy of a message with such an id is skipped; the session reads whole."""
    whole = turnfold.load(OPENCODE, sample=SESSION)
    path = _copy(OPENCODE, tmp_path, f"""
        DROP INDEX message_session_time_created_id_idx;
        CREATE INDEX message_session_idx ON message (session_id);
        INSERT INTO message (id, session_id, time_created, time_updated, data)
        SELECT printf('%.*c', {LONG}, 'x'), session_id, time_created, time_updated, data
        FROM message WHERE session_id = '{SESSION}' ORDER BY rowid LIMIT 1;
    """)  # fmt: skip
    lower_limit(monkeypatch)
    transcript = turnfold.load(path, sample=SESSION)
    assert shown(transcript.entries) == shown(whole.entries)
    assert [w.reason for w in transcript.warnings] == [
        f"{_over('message', _rowid(path, 'message'), 'id')}; skipped unread"
    ]


def test_L4_an_opencode_message_whose_time_column_is_over_the_limit_is_still_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same schema, a message's ``time_created`` over the limit: the sort refused the
    session; now the message is read with its time column left out (its own time is its
    ``data``'s), after the others, said."""
    whole = turnfold.load(OPENCODE, sample=SESSION)
    path = _copy(OPENCODE, tmp_path, f"""
        DROP INDEX message_session_time_created_id_idx;
        CREATE INDEX message_session_idx ON message (session_id);
        UPDATE message SET time_created = printf('%.*c', {LONG}, 't') WHERE rowid = (SELECT
            max(rowid) FROM message WHERE session_id = '{SESSION}');
    """)  # fmt: skip
    with contextlib.closing(sqlite3.connect(path)) as db:
        rowid, message = db.execute("SELECT rowid, id FROM message WHERE length(time_created) > "
                                    "1000").fetchone()  # fmt: skip
    lower_limit(monkeypatch)
    transcript = turnfold.load(path, sample=SESSION)
    assert shown(transcript.entries) == shown(whole.entries)  # the newest message, still last
    assert [w.reason for w in transcript.warnings] == [
        f"{_over('message', rowid, 'time_created', f'id {message}')}; left out; the row read "
        "after the others"
    ]


@pytest.mark.parametrize("bad", ["yesterday", 1e300, -5])
def test_L4_an_opencode_message_whose_time_is_no_time_is_shown_without_it(
    bad: object, tmp_path: Path
) -> None:
    """A message's ``time.created`` that is no number of milliseconds since the epoch (text,
    past the calendar, before the epoch) was dropped without a word: the message is shown
    undated, and a warning names it."""
    whole = turnfold.load(OPENCODE, sample=SESSION)
    with contextlib.closing(sqlite3.connect(OPENCODE)) as db:
        message = db.execute("SELECT id FROM message WHERE session_id = ? AND data LIKE "
                             "'%\"role\":\"user\"%' ORDER BY rowid LIMIT 1",
                             (SESSION,)).fetchone()[0]  # fmt: skip
    path = _copy(OPENCODE, tmp_path, "UPDATE message SET data = json_set(data, '$.time.created', "
                 "json(?)) WHERE id = ?", (f'"{bad}"' if isinstance(bad, str) else str(bad),
                                            message))  # fmt: skip
    transcript = turnfold.load(path, sample=SESSION)
    assert [w.reason for w in transcript.warnings] == [
        f"message {message}: its time {bad!r} is no time (ms since the epoch); left out"
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    (prompt,) = [e for e in transcript.entries if e.meta.get("message_id") == message]
    assert prompt.timestamp is None
    assert next(e for e in whole.entries if e.meta.get("message_id") == message).timestamp


# --- LangGraph ------------------------------------------------------------------------------


def _subgraph_copy(tmp_path: Path, thread: str, size: int) -> Path:
    """The checkpoints of ``thread``'s subgraph (its ``tools:<task id>`` namespace) given a
    copy of its newest checkpoint under a namespace ``size`` bytes long."""
    return _copy(CHECKPOINTS, tmp_path, "INSERT INTO checkpoints SELECT thread_id, "
                 "printf('%.*c', ?, 'x'), checkpoint_id, parent_checkpoint_id, type, checkpoint, "
                 "metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns != '' "
                 "ORDER BY checkpoint_id DESC LIMIT 1", (size, thread))  # fmt: skip


def test_X1_a_langgraph_namespace_over_the_limit_costs_that_checkpoint_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The threads' listing tests every checkpoint's ``checkpoint_ns = ''`` and a thread's
    subgraphs are grouped by namespace: one namespace over the limit made the listing of every
    thread, and the load of its own, an error. Now every thread is listed, its thread reads
    whole (its sub-agent nested as before), the checkpoint of that namespace warned of."""
    threads = [thread for thread, _ in langgraph_checkpoints.sessions(CHECKPOINTS)]
    whole = turnfold.load(CHECKPOINTS, sample="agent-tool")
    path = _subgraph_copy(tmp_path, "agent-tool", LONG)
    lower_limit(monkeypatch)
    assert [thread for thread, _ in langgraph_checkpoints.sessions(path)] == threads
    transcript = turnfold.load(path, sample="agent-tool")
    assert shown(transcript.entries) == shown(whole.entries)
    (call,) = [e for e in transcript.tool_calls() if e.subagent is not None]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert [w.reason for w in transcript.warnings] == [
        *[w.reason for w in whole.warnings],
        f"thread agent-tool: a subgraph's "
        f"{_over('checkpoints', _rowid(path, 'checkpoints'), 'checkpoint_ns')}; skipped unread",
    ]
    for thread in threads:  # every other thread as it was
        if thread != "agent-tool":
            loaded, before = (
                turnfold.load(path, sample=thread),
                turnfold.load(CHECKPOINTS, sample=thread),
            )
            assert shown(loaded.entries) == shown(before.entries), thread
            assert len(loaded.warnings) == len(before.warnings), thread


def test_L4_a_langgraph_checkpoint_whose_ts_is_no_time_is_read_without_it(
    tmp_path: Path,
) -> None:
    """The newest checkpoint's ``ts`` rewritten (by LangGraph's own serializer) to text that
    is no time: the thread's ``updated_at`` held that text, unsaid; now the thread reads as
    before without it, and a warning names the checkpoint."""
    serde = pytest.importorskip("langgraph.checkpoint.serde.jsonplus").JsonPlusSerializer()
    whole = turnfold.load(CHECKPOINTS, sample="tool-error")
    path = tmp_path / CHECKPOINTS.name
    shutil.copyfile(CHECKPOINTS, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        rowid, checkpoint_id, kind, blob = db.execute(
            "SELECT rowid, checkpoint_id, type, checkpoint FROM checkpoints WHERE thread_id = "
            "'tool-error' AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()
        checkpoint = serde.loads_typed((kind, blob))
        checkpoint["ts"] = "not a time"
        db.execute("UPDATE checkpoints SET type = ?, checkpoint = ? WHERE rowid = ?",
                   (*serde.dumps_typed(checkpoint), rowid))  # fmt: skip
    transcript = turnfold.load(path, sample="tool-error")
    assert [w.reason for w in transcript.warnings] == [
        f"thread tool-error: checkpoint {checkpoint_id}: its ts 'not a time' is no time; left out"
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    assert "updated_at" in whole.metadata
    assert "updated_at" not in transcript.metadata
    assert transcript.metadata["started_at"] == whole.metadata["started_at"]
