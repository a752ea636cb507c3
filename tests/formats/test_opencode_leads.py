"""OpenCode sessions whose leads no listing reached, and files no filing may read whole (spec
C-1, C-7, X-1: each session shown once, nothing dropped unsaid, no file read past the limit).

A session is a row of its own when it names no lead there (``parent_id``, ``parentID``), else it
nests under its lead. Four gaps, each on a copy of what OpenCode wrote (1.18.33's database,
``fixtures/opencode/work``; 1.1.65's ``storage/``, ``fixtures/opencode/v1.1``) changed as a
hostile or half-deleted store leaves it:

- sessions naming each other as lead, round in a circle, were neither rows nor nested: a
  listing and a scan showed none of them. Now the oldest of the circle is a row, the others
  nested under it, and a warning names the circle;
- message and part rows whose session has no row (deleted with the foreign keys off, as
  ``sqlite3`` leaves them by default; a database copied in part) were read by no session. Now
  they are a session of their own, titled by its id, said;
- a sub-agent whose ``parent_id`` is too long to read (over ``databases.KEY_BYTES``) was a row of
  its own and nested under the call that ran it too. Now it is its own row only, and the call
  says where it is (``test_opencode_unclaimed_sub_agents.py``); so is a session that names
  itself as its lead;
- a session's file of ``storage/`` was read whole to learn the id it holds, whatever its size,
  at every scan. Now no file is read past the record limit, and a load says what it passed over.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

import turnfold
from tests.formats.opencode_storage import LEAD, STORAGE, SUB, copy_storage, session_file
from tests.formats.oversized import LIMIT, PADDING, lower_limit
from turnfold.formats import source
from turnfold.formats.agents import opencode, opencode_filing
from turnfold.model import ToolCall, Transcript

pytestmark = pytest.mark.usefixtures("cache_dir")

DATABASE = Path(__file__).parents[1] / "fixtures" / "opencode" / "work" / "opencode.db"
DB_LEAD = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
DB_SUB = "ses_db99c7864ffeCvby45SXJ73ZRj"
#: A third session made of the sub-agent's rows under other ids (:func:`_third_session`).
DB_THIRD = "ses_db99c7864ffeTHIRDTHIRDTHIRD"


def _database(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "opencode.db"
    path.parent.mkdir()
    shutil.copyfile(DATABASE, path)
    return path


def _change(path: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    """Runs ``statements`` on the database at ``path`` as the ``sqlite3`` shell would: its
    foreign keys off (SQLite's default), so that a deleted row takes none of its rows with it."""
    db = sqlite3.connect(path)
    with db:
        for sql, params in statements:
            db.execute(sql, params)
    db.close()


def _scan(folder: Path) -> turnfold.Corpus:
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return turnfold.scan(folder, workers=1)


def _task(transcript: Transcript) -> ToolCall:
    """The lead's ``task`` call (its ninth call)."""
    [task] = [c for c in transcript.tool_calls() if c.name == "task"]
    return task


def _circle(*ids: str, field: str) -> str:
    return (f"sessions {' → '.join([*ids, ids[0]])} name each other as lead ({field}), round in "
            f"a circle: none is a top-level session, so the oldest, {ids[0]}, is shown as one, "
            "the others under it")  # fmt: skip


def _apart(session: str, why: str) -> str:
    return (f"session {session}, the sub-agent a task call names, is a session of its own "
            f"({why}): shown there, not under the call")  # fmt: skip


def _third_session(path: Path, parent: str) -> None:
    """A copy of the sub-agent's session (its row, messages and parts) as :data:`DB_THIRD`,
    whose lead is ``parent``, started after the others."""
    columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(session)")]
    picked = ", ".join("?" if c == "id" else "? + 1" if c == "time_created" else "?"
                       if c == "parent_id" else c for c in columns)  # fmt: skip
    started = sqlite3.connect(path).execute("SELECT max(time_created) FROM session").fetchone()[0]
    _change(
        path,
        (f"INSERT INTO session ({', '.join(columns)}) SELECT {picked} FROM session WHERE id = ?",
         (DB_THIRD, parent, started, DB_SUB)),
        ("INSERT INTO message SELECT id || '_3', ?, time_created, time_updated, data FROM message "
         "WHERE session_id = ?", (DB_THIRD, DB_SUB)),
        ("INSERT INTO part SELECT id || '_3', message_id || '_3', ?, time_created, time_updated, "
         "data FROM part WHERE session_id = ?", (DB_THIRD, DB_SUB)),
    )  # fmt: skip


# --- a circle of leads ----------------------------------------------------------------------------


def test_C1_database_sessions_naming_each_other_as_lead_are_one_row_from_the_oldest(
    tmp_path: Path,
) -> None:
    original = turnfold.load(DATABASE)
    path = _database(tmp_path)
    _change(path, ("UPDATE session SET parent_id = ? WHERE id = ?", (DB_SUB, DB_LEAD)))
    # The lead (the older) is the row; its call nests the sub-agent as before.
    assert list(opencode.sessions(path)) == [(DB_LEAD, "ok")]
    transcript = turnfold.load(path)
    assert transcript.entries == original.entries
    assert [w.reason for w in transcript.warnings] == [_circle(DB_LEAD, DB_SUB, field="parent_id")]
    corpus = _scan(path.parent)
    assert corpus.keys == [f"{path}#{DB_LEAD}"]
    [row] = corpus.rows
    assert (row["tool_calls"], row["subagents"], row["warnings"], row["error"]) == (10, 1, 1, None)
    # Asked for, the other of the circle says the circle too.
    sub = turnfold.load(path, sample=DB_SUB)
    assert sub.warnings[0].reason == _circle(DB_LEAD, DB_SUB, field="parent_id")


def test_C1_each_session_of_a_circle_of_three_is_shown_once(tmp_path: Path) -> None:
    """LEAD → THIRD → SUB → LEAD (each's parent_id the next): the lead's call nests SUB, SUB
    nests THIRD (named by no call of it: where its start places it, said), and LEAD, which
    names THIRD as its lead, is the row they are read from, not read again under THIRD."""
    path = _database(tmp_path)
    _third_session(path, DB_SUB)
    _change(path, ("UPDATE session SET parent_id = ? WHERE id = ?", (DB_THIRD, DB_LEAD)))
    assert [session for session, _ in opencode.sessions(path)] == [DB_LEAD]
    transcript = turnfold.load(path)
    nested = _task(transcript).subagent
    assert nested is not None
    assert nested.transcript is not None
    assert nested.agent_id == DB_SUB
    [third] = [c.subagent for c in nested.transcript.tool_calls() if c.subagent is not None]
    assert third is not None
    assert third.transcript is not None
    assert third.agent_id == DB_THIRD
    assert [c.name for c in third.transcript.tool_calls()] == ["bash"]  # SUB's rows, copied
    assert not [c for c in third.transcript.tool_calls() if c.subagent is not None]
    assert [w.reason for w in transcript.warnings] == [
        _circle(DB_LEAD, DB_THIRD, DB_SUB, field="parent_id"),
        f"sub-agent session {DB_THIRD} names session {DB_SUB} as its lead (parentID), but no "
        "task call of it names the sub-agent: shown where its start places it",
    ]
    assert _scan(path.parent).keys == [f"{path}#{DB_LEAD}"]


def test_C1_storage_sessions_naming_each_other_as_lead_are_one_row_from_the_oldest(
    tmp_path: Path,
) -> None:
    original = turnfold.load(session_file(STORAGE, LEAD))
    storage = copy_storage(tmp_path)
    lead = session_file(storage, LEAD)
    lead.write_text(json.dumps({**json.loads(lead.read_text()), "parentID": SUB}, indent=2))
    corpus = _scan(storage.parent)
    assert corpus.keys == [str(lead)]
    [row] = corpus.rows
    assert (row["tool_calls"], row["subagents"], row["warnings"], row["error"]) == (10, 1, 1, None)
    transcript = turnfold.load(lead)
    assert transcript.entries == original.entries
    assert [w.reason for w in transcript.warnings] == [_circle(LEAD, SUB, field="parentID")]
    assert turnfold.load(storage).entries == original.entries  # the folder's one session
    # The sub-agent's file is its row's: a change to it reads that row again.
    from turnfold.corpus.discover import session_of

    assert session_of(session_file(storage, SUB), None, []) == str(lead)
    named = turnfold.scan(storage.parent, format="opencode", cache=False, workers=1)
    assert named.keys == [str(lead)]


# --- rows with no session row ---------------------------------------------------------------------


def test_C7_messages_and_parts_whose_session_row_is_gone_are_a_session_of_their_own(
    tmp_path: Path,
) -> None:
    """The lead's row deleted as the sqlite3 shell deletes it (foreign keys off): its messages
    and parts stay. They are the session titled by its id; its sub-agent, whose lead's row is
    gone, its own row, shown once: the call says where."""
    original = turnfold.load(DATABASE)
    path = _database(tmp_path)
    _change(path, ("DELETE FROM session WHERE id = ?", (DB_LEAD,)))
    with sqlite3.connect(path) as db:
        (messages,) = db.execute("SELECT count(*) FROM message WHERE session_id = ?",
                                 (DB_LEAD,)).fetchone()  # fmt: skip
        (parts,) = db.execute("SELECT count(*) FROM part WHERE session_id = ?",
                              (DB_LEAD,)).fetchone()  # fmt: skip
    db.close()
    assert list(opencode.sessions(path)) == [
        (DB_SUB, "scripted sub-agent (@general subagent)"),
        (DB_LEAD, DB_LEAD),
    ]
    transcript = turnfold.load(path, sample=DB_LEAD)
    assert transcript.metadata["title"] == DB_LEAD
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        (c.name, c.status) for c in original.tool_calls()
    ]
    task = _task(transcript)
    assert task.subagent is not None
    assert task.subagent.steps_missing
    assert [w.reason for w in transcript.warnings] == [
        f"session {DB_LEAD}: no row of it in the session table (deleted, or the database "
        f"copied in part), but {messages} message(s) and {parts} part(s) name it: shown as a "
        "session of its own, titled by its id",
        _apart(DB_SUB, f"its lead, session {DB_LEAD} (its parent_id), is not in this database"),
    ]
    corpus = _scan(path.parent)
    assert corpus.keys == [f"{path}#{DB_SUB}", f"{path}#{DB_LEAD}"]
    assert [(r["tool_calls"], r["warnings"], r["error"]) for r in corpus.rows] == [
        (1, 1, None),
        (10, 2, None),
    ]


def test_C7_parts_left_of_a_session_with_no_row_nor_messages_are_shown_and_said(
    tmp_path: Path,
) -> None:
    """The sub-agent's row and messages deleted (foreign keys off), its parts left: a session
    of its own, each message read from its parts where its id places it (its role told by
    them), as the storage reader reads parts whose message's file is missing; said."""
    original = turnfold.load(DATABASE)
    path = _database(tmp_path)
    with sqlite3.connect(path) as db:
        parts = db.execute("SELECT id, message_id FROM part WHERE session_id = ? ORDER BY "
                           "message_id, id", (DB_SUB,)).fetchall()  # fmt: skip
    db.close()
    _change(
        path,
        ("DELETE FROM session WHERE id = ?", (DB_SUB,)),
        ("DELETE FROM message WHERE session_id = ?", (DB_SUB,)),
    )
    assert [session for session, _ in opencode.sessions(path)] == [DB_LEAD, DB_SUB]
    leftover = turnfold.load(path, sample=DB_SUB)
    nested = _task(original).subagent
    assert nested is not None
    assert nested.transcript is not None
    assert [type(e) for e in leftover.entries] == [type(e) for e in nested.transcript.entries]
    assert [(c.name, c.status) for c in leftover.tool_calls()] == [("bash", "success")]
    assert [w.reason for w in leftover.warnings] == [
        f"{len(parts)} part(s) of session {DB_SUB} name a message with no row in the message "
        f"table (first: part {parts[0][0]} of message {parts[0][1]}): read where their ids "
        "place them, as 2 assistant and 1 user message(s), told by their parts",
        f"session {DB_SUB}: no row of it in the session table (deleted, or the database copied "
        f"in part), but 0 message(s) and {len(parts)} part(s) name it: shown as a session of "
        "its own, titled by its id",
    ]
    # The lead's call says its sub-agent is that session.
    lead = turnfold.load(path, sample=DB_LEAD)
    assert _task(lead).subagent is not None
    said = _apart(DB_SUB, "it has no row in the session table")
    assert [w.reason for w in lead.warnings] == [said]


# --- storage/ files too large to learn from -------------------------------------------------------


def _padded(path: Path) -> int:
    """Rewrites the session's file with whitespace after its document (JSON reads it as it was)
    past :data:`LIMIT`; its size."""
    path.write_text(json.dumps(json.loads(path.read_text()), indent=2) + PADDING)
    return path.stat().st_size


def test_X1_a_session_file_over_the_limit_is_not_read_to_learn_the_ids_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file no sub-agent or id names (a copy of the sub-agent's under another name, padded):
    the filings pass over it unread, and a load of the lead says so, once."""
    storage = copy_storage(tmp_path)
    big = session_file(storage, "ses_big")
    shutil.copyfile(session_file(storage, SUB), big)
    size = _padded(big)
    lower_limit(monkeypatch)
    with pytest.raises(source.TooLarge) as refused:
        source.read_bounded(big)
    assert refused.value.size == size
    assert opencode_filing.document(big) == {}
    filed = opencode_filing.sub_agents(storage)
    assert filed.over == ((big, size),)
    assert list(filed.found) == [LEAD]  # the sub-agent's own file, read
    transcript = turnfold.load(session_file(storage, LEAD))
    assert [w.reason for w in transcript.warnings] == [
        f"1 file(s) of {storage} over the limit of {LIMIT:,} bytes (TURNFOLD_MAX_RECORD_BYTES) "
        f"not opened to learn which session they belong to (first: {big}, {size:,} bytes): "
        "what they hold is not shown here"
    ]
    task = _task(transcript)
    assert task.subagent is not None
    assert not task.subagent.steps_missing
    # A scan: the big file is a row saying it is over the limit; the lead's row says the rest.
    corpus = _scan(storage.parent)
    rows = {r["key"]: r for r in corpus.rows}
    assert set(rows) == {str(session_file(storage, LEAD)), str(big)}
    assert "over the limit" in rows[str(big)]["error"]
    assert rows[str(session_file(storage, LEAD))]["warnings"] == 1


def test_X1_a_sub_agent_s_file_over_the_limit_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = copy_storage(tmp_path)
    sub = session_file(storage, SUB)
    size = _padded(sub)
    lower_limit(monkeypatch)
    transcript = turnfold.load(session_file(storage, LEAD))
    task = _task(transcript)
    assert task.subagent is not None
    assert task.subagent.steps_missing
    assert [w.reason for w in transcript.warnings] == [
        f"{sub}: {size:,} bytes, over the limit of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); not read"
    ]
