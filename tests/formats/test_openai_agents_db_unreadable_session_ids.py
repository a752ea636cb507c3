"""An OpenAI Agents SDK session database whose rows name a session by an id too long to read
(spec X-1, C-7): one stand-in for each such session, not one for each row.

A session's messages are listed by ``GROUP BY session_id``; an id over the record limit, which
SQLite refuses to group, sort or compare, sent that listing back row by row, and each message
row was listed as a session of its own: a scan gave an error row for every item of one session
(and, there being one such id, for every item of a session whose id is only over an id's bound),
and a session whose own row holds such an id was listed beside its rows too. Now those ids are
told apart by their size and digest, read a piece at a time, never whole
(``databases.identities``, which the OpenCode reader shares).

The sessions are written by the real openai-agents 0.24.0 ``SQLiteSession`` through
``Runner.run`` (the fixture's recipe, ``openai_agents_db_recipe.py``), on a copy of the
committed database. A session with no row of its own is one whose row was deleted with
SQLite's foreign keys off (its default; the SDK never turns them on, so its ``ON DELETE
CASCADE`` leaves the messages).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents")

import turnfold
from tests.formats import openai_agents_runs
from tests.formats.loops import on_thread
from tests.formats.oversized import LIMIT, lower_limit
from tests.formats.recipes import recipe as load_recipe
from turnfold.formats import databases
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import openai_agents_db

pytestmark = pytest.mark.usefixtures("cache_dir")

recipe = load_recipe(openai_agents_runs.FIXTURES / "openai_agents_db_recipe.py")

TWO, ONE = recipe.TWO_TURNS, recipe.ONE_TURN
#: An id over the record limit of these tests (which SQLite refuses), and one over an id's
#: bound only.
OVER_THE_LIMIT, OVER_AN_ID = 2 * LIMIT, 2_000
#: Two ids over the limit of one length, told apart only by what they hold: the last byte.
SAME_SIZE = ("a" * OVER_THE_LIMIT, "a" * (OVER_THE_LIMIT - 1) + "b")


@pytest.fixture(params=[True, False], ids=["limited", "unlimited"])
def limited(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test with SQLite's length limit (Python 3.11 and later), whose connection refuses
    a long value and reads it by a blob handle, and without (3.10), where SQL measures it."""
    if request.param and sys.version_info < (3, 11):
        pytest.skip("SQLite's limit is set from Python 3.11")
    monkeypatch.setattr(databases, "LIMITED", request.param)
    return bool(request.param)


def _database(tmp_path: Path, *session_ids: str, unrecorded: bool) -> Path:
    """A copy of the committed database and, after its two sessions, a session of two runs
    (four items: two prompts and two answers) for each of ``session_ids``, written by the SDK;
    their sessions' rows deleted when ``unrecorded``."""
    from agents import Runner, SQLiteSession

    path = tmp_path / "conversations.db"
    shutil.copyfile(recipe.FIXTURE, path)
    for session_id in session_ids:
        session = SQLiteSession(session_id, path)
        for prompt in ("Hello.", "Again."):
            on_thread(lambda p=prompt, s=session: Runner.run_sync(recipe.greeter(), p, session=s))
        session.close()
    recipe.compact(path)  # no -wal file beside it, as the committed one
    if unrecorded:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute("DELETE FROM agent_sessions WHERE session_id NOT IN (?, ?)", (TWO, ONE))
    return path


def _rowids(path: Path, table: str, session_id: str) -> list[int]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        query = f"SELECT rowid FROM {table} WHERE session_id = ? ORDER BY rowid"
        return [rowid for (rowid,) in db.execute(query, (session_id,))]


def _stand_in(table: str, rowid: int, size: int, limited: bool) -> str:
    """What the listing names a session by, by the first row naming it: an id over the limit
    is said to be where SQLite refuses it; where SQL measures it, it is over an id's bound."""
    if size > LIMIT and limited:
        why = f"over the limit of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES)"
    else:
        why = f"over the {databases.KEY_BYTES:,} bytes an id or a time may hold"
    return f"{databases.UNREADABLE_ID}{table} row {rowid}: its session_id of {size:,} bytes, {why}>"


def _listed(path: Path) -> list[str]:
    return [session_id for session_id, _ in openai_agents_db.sessions(path)]


def test_X1_sessions_with_no_row_named_by_long_ids_are_listed_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """Four items each of two sessions whose ids are over the limit and of one length, and of
    one whose id is over an id's bound, none with a row of its own: one stand-in each, its
    first message's, whose load says why; the other sessions load as before, and a scan
    gives an error row for each stand-in alone."""
    long, other = SAME_SIZE
    short = "c" * OVER_AN_ID
    path = _database(tmp_path, long, other, short, unrecorded=True)
    rows = {s: _rowids(path, "agent_messages", s) for s in (long, other, short)}
    assert [len(found) for found in rows.values()] == [4, 4, 4]
    lower_limit(monkeypatch)
    listed = _listed(path)
    assert listed == [
        TWO,
        ONE,
        _stand_in("agent_messages", rows[long][0], OVER_THE_LIMIT, limited),
        _stand_in("agent_messages", rows[other][0], OVER_THE_LIMIT, limited),
        _stand_in("agent_messages", rows[short][0], OVER_AN_ID, limited),
    ]
    for stand_in in listed[2:]:
        reason = re.escape(stand_in[len(databases.UNREADABLE_ID) : -1])
        with pytest.raises(TranscriptFormatError, match=rf"{re.escape(str(path))}.*{reason}"):
            turnfold.load(path, sample=stand_in)
    assert turnfold.load(path, sample=TWO).warnings == []
    corpus = turnfold.scan(tmp_path, workers=1)
    assert corpus.keys == [f"{path}#{session}" for session in listed]
    assert [row["error"] is None for row in corpus.rows] == [True, True, False, False, False]


def test_X1_a_session_whose_row_holds_a_long_id_is_listed_by_its_row_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """The SDK writes a session's row before its items: its items' rows name the id the row
    holds, over the limit or over an id's bound, and list no session beside the row's."""
    long, short = "x" * OVER_THE_LIMIT, "y" * OVER_AN_ID
    path = _database(tmp_path, long, short, unrecorded=False)
    (long_row,) = _rowids(path, "agent_sessions", long)
    (short_row,) = _rowids(path, "agent_sessions", short)
    lower_limit(monkeypatch)
    assert _listed(path) == [
        TWO,
        ONE,
        _stand_in("agent_sessions", long_row, OVER_THE_LIMIT, limited),
        _stand_in("agent_sessions", short_row, OVER_AN_ID, limited),
    ]


def test_ids_a_blob_handle_cannot_open_are_told_apart_by_sql(tmp_path: Path, limited: bool) -> None:
    """A hostile row's id may be a null or a number, which no blob handle opens: told apart by
    SQL's reading of it instead of failing the listing."""
    with contextlib.closing(sqlite3.connect(tmp_path / "ids.db")) as db:
        db.execute("CREATE TABLE t (session_id)")
        values = [None, 7, None, "abc", 8]
        db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
        cells = [("t", "session_id", rowid) for rowid in range(1, len(values) + 1)]
        null, seven, second_null, text, eight = databases.identities(db, cells)
    assert null == second_null
    assert len({null, seven, text, eight}) == 4
    assert (seven[0], text[0]) == (1, 3)  # the bytes of each, as SQLite writes it
