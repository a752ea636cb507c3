"""Agno's SQLite session store (``agno-db``): the database ``SqliteDb`` / ``AsyncSqliteDb``
keep agents' and teams' sessions in, loaded one session at a time and scanned a row a session.

The committed database was written by the real agno 3.1.10 ``SqliteDb`` with the scripted model
of ``agno_runs`` (``tests/fixtures/frameworks/agno/agno_db_recipe.py``): the ``solo`` agent's
session of two runs (``add`` succeeds, ``explode`` raises), the ``lead`` team's session of one
run delegating to its ``helper`` member (whose run Agno stores as a run of the session of its
own). Agno's own ``get_session`` reads each back, to load the same session object.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agno")

import turnfold
from tests.formats import agno_runs
from tests.formats.counters_agno import agno_db as count_calls
from tests.formats.loops import run_async
from tests.formats.oversized import PADDING, lower_limit, shown, skipped
from tests.formats.recipes import recipe as load_recipe
from tests.formats.stores import writable
from turnfold.formats import databases
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import agno_db
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.session import session_facts

recipe = load_recipe(agno_runs.FIXTURES / "agno_db_recipe.py")

DB = recipe.FIXTURE
SOLO, TEAM = recipe.SOLO, recipe.TEAM
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", "boom: y"),
]
RUN = ["UserMessage", "Thinking", "AssistantText", "ToolCall", "ToolCall", "AssistantText"]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The committed database copied (Agno's ``SqliteDb`` writes to a file it opens)."""
    path = tmp_path / "agents.db"
    shutil.copyfile(DB, path)
    return path


def agno_session(path: Path, session_id: str) -> Any:
    """The session object Agno's own ``get_session`` rebuilds from the database at ``path``."""
    from agno.db.sqlite import SqliteDb

    db = SqliteDb(db_file=str(path))
    try:
        return db.get_session(session_id)
    finally:
        db.db_engine.dispose()


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


def texts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, (UserMessage, AssistantText))]


def usages(transcript: Transcript) -> list[tuple[Any, Any]]:
    found = [getattr(e, "usage", None) for e in transcript.entries]
    return [(u.input_tokens, u.output_tokens) for u in found if u is not None]


# --- load ---------------------------------------------------------------------------------------


def test_an_agent_session_reads_its_runs_in_order_as_agno_s_get_session_gives_them(
    copy: Path,
) -> None:
    transcript = turnfold.load(DB, sample=SOLO)
    assert transcript.metadata["source_format"] == "agno-db"
    assert kinds(transcript) == RUN + RUN
    assert calls_of(transcript) == CALLS + CALLS  # explode failed, by tool_call_error
    assert texts(transcript) == [
        "What is 1+2?", "Let me add.", "1+2=3; explode failed.",
        "And once more?", "Let me add.", "1+2=3; explode failed.",
    ]  # fmt: skip
    assert usages(transcript) == [(10, 5), (20, 6), (10, 5), (20, 6)]
    assert transcript.metadata["session_id"] == SOLO
    assert transcript.metadata["agent_id"] == "solo"
    assert transcript.warnings == []
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["run"] == {"mapped": 2}
    for disposition in ("mapped", "ignored"):  # every record type noted is documented
        assert all(agno_db.RECORDS.disposition(t) == disposition
                   for t in accounting.types(disposition))  # fmt: skip

    session = agno_session(copy, SOLO)
    assert type(session).__name__ == "AgentSession"
    from_object = turnfold.load(session)
    assert from_object.metadata["source_format"] == "agno"
    assert from_object.entries == transcript.entries
    assert calls_of(from_object) == calls_of(transcript)
    assert usages(from_object) == usages(transcript)


def test_a_team_session_nests_its_member_s_run_under_the_delegation_call(copy: Path) -> None:
    transcript = turnfold.load(DB, sample=TEAM)
    assert kinds(transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    (call,) = transcript.tool_calls()
    assert (call.name, call.status, call.args["member_id"]) == (
        "delegate_task_to_member", "success", "helper",
    )  # fmt: skip
    sub = call.subagent
    assert sub is not None
    assert sub.transcript is not None
    assert (sub.name, sub.task, sub.agent_id) == ("helper", "add 2 and 2", "helper")
    assert kinds(sub.transcript) == ["UserMessage", "Thinking", "ToolCall", "AssistantText"]
    assert calls_of(sub.transcript) == [("h_1", "add", {"a": 2, "b": 2}, "success", "4")]
    assert texts(transcript) == ["What is 2+2?", "The helper says 4."]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["member run"] == {"ignored": 1}
    assert len(transcript.tool_calls(nested=True)) == 2

    # Agno's get_session gives the member's run beside the team's (parent_run_id), before it:
    # the session object loads nested alike, not as a run of its own.
    session = agno_session(copy, TEAM)
    assert type(session).__name__ == "TeamSession"
    assert [getattr(r, "parent_run_id", None) is not None for r in session.runs] == [True, False]
    from_object = turnfold.load(session)
    assert from_object.entries == transcript.entries
    assert calls_of(from_object) == calls_of(transcript)


def test_a_session_s_header_counts_every_run_s_tokens_and_its_system_prompt_once() -> None:
    # Each run records its own metrics (30 in, 11 out here): the session's tokens are both
    # runs', not the last run's; each run repeats the agent's system prompt, shown once.
    transcript = turnfold.load(DB, sample=SOLO)
    facts = session_facts(transcript)
    assert facts.tokens == {"input_tokens": 60, "output_tokens": 22}
    assert turnfold.scan([DB], cache=False).rows[0]["input_tokens"] == 60
    assert transcript.metadata["system"] == "Be brief."
    # A run alone keeps its metrics whole.
    assert session_facts(turnfold.load(DB, sample=TEAM)).tokens == {
        "input_tokens": 16 + 7, "output_tokens": 7 + 3,
    }  # fmt: skip


def test_sample_picks_a_session_and_a_database_of_many_names_them_without_one() -> None:
    assert list(agno_db.sessions(DB)) == [(SOLO, "agent solo"), (TEAM, "team lead")]
    assert turnfold.load(DB, sample=TEAM).metadata["team_id"] == "lead"
    with pytest.raises(ValueError, match=r"holds 2 Agno sessions: pick one with sample=") as err:
        turnfold.load(DB)
    assert SOLO in str(err.value)
    assert TEAM in str(err.value)
    with pytest.raises(ValueError, match="holds no Agno session 'nope'"):
        turnfold.load(DB, sample="nope")
    with pytest.raises(ValueError, match="no epochs"):
        turnfold.load(DB, sample=SOLO, epoch=1)


def test_a_database_of_one_session_needs_no_sample(copy: Path) -> None:
    with writable(copy) as db:
        db.execute("DELETE FROM agno_runs WHERE session_id = ?", (TEAM,))
        db.execute("DELETE FROM agno_sessions WHERE session_id = ?", (TEAM,))
    assert calls_of(turnfold.load(copy)) == CALLS + CALLS


def test_custom_table_names_written_by_async_sqlite_db_are_told_by_their_columns(
    tmp_path: Path,
) -> None:
    """``AsyncSqliteDb(session_table=, runs_table=)`` on a live run: the tables are found by
    their columns (and the runs table by its foreign key), the file read as Agno left it (WAL)."""
    from agno.db.sqlite import AsyncSqliteDb

    path = tmp_path / "chat.sqlite"
    db = AsyncSqliteDb(db_file=str(path), session_table="chats", runs_table="chat_turns")

    async def write() -> Any:
        solo = agno_runs.agent(db=db)
        await solo.arun("What is 1+2?", session_id="s1")
        team = agno_runs.team()
        team.db = db
        await team.arun("What is 2+2?", session_id="s2")
        return await db.get_session("s2")

    session = run_async(write())
    tables = {n for (n,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert {"chats", "chat_turns"} <= tables
    assert "agno_sessions" not in tables
    assert [i for i, _ in agno_db.sessions(path)] == ["s1", "s2"]
    assert calls_of(turnfold.load(path, sample="s1")) == CALLS
    team = turnfold.load(path, sample="s2")
    assert team.entries == turnfold.load(session).entries
    assert [c.name for c in team.tool_calls(nested=True)] == ["delegate_task_to_member", "add"]


def test_a_2x_session_s_runs_column_is_merged_as_agno_merges_it(copy: Path) -> None:
    """Agno 2.x kept a session's runs in its row (``runs``); 3.x reads them merged with the
    runs table's (``merge_runs_table_with_legacy_blob``). The first run moved to the column
    reads as before, in its place, and Agno's own get_session reads it alike."""
    with writable(copy) as db:
        (first, data), _ = db.execute(
            "SELECT run_id, run_data FROM agno_runs WHERE session_id = ? ORDER BY run_index",
            (SOLO,),
        ).fetchall()
        db.execute("ALTER TABLE agno_sessions ADD COLUMN runs JSON")
        db.execute("UPDATE agno_sessions SET runs = ? WHERE session_id = ?",
                   (f"[{data}]", SOLO))  # fmt: skip
        db.execute("DELETE FROM agno_runs WHERE run_id = ?", (first,))
    transcript = turnfold.load(copy, sample=SOLO)
    assert texts(transcript)[0] == "What is 1+2?"
    assert calls_of(transcript) == CALLS + CALLS
    assert transcript.entries == turnfold.load(agno_session(copy, SOLO)).entries


def test_a_damaged_run_is_a_warning_naming_it_and_the_other_runs_are_shown(copy: Path) -> None:
    with writable(copy) as db:
        (first,) = db.execute(
            "SELECT run_id FROM agno_runs WHERE session_id = ? ORDER BY run_index", (SOLO,)
        ).fetchone()
        db.execute("UPDATE agno_runs SET run_data = ? WHERE run_id = ?", ('{"run_id": ', first))
    transcript = turnfold.load(copy, sample=SOLO)
    assert kinds(transcript) == RUN
    assert texts(transcript)[0] == "And once more?"
    assert calls_of(transcript) == CALLS
    (warning,) = transcript.warnings
    assert warning.reason.startswith(f"run {first}: its run_data is no JSON")
    assert transcript.accounting is not None
    assert transcript.accounting.counts["run"] == {"warned": 1, "mapped": 1}


def test_a_workflow_s_session_is_refused_by_name(copy: Path) -> None:
    with writable(copy) as db:
        db.execute("UPDATE agno_sessions SET session_type = 'workflow' WHERE session_id = ?",
                   (SOLO,))  # fmt: skip
    with pytest.raises(ValueError, match="workflow's"):
        turnfold.load(copy, sample=SOLO)


def test_other_files_are_not_agno_s() -> None:
    assert agno_db.detect_path(DB) is not None
    assert agno_db.detect_path(agno_runs.FIXTURES / "agno_v3.1.10_run_solo.json") is None
    with pytest.raises(TranscriptFormatError, match="pass its path"):
        turnfold.load(json.dumps({"x": 1}), format="agno-db")


# --- scan ---------------------------------------------------------------------------------------


def test_a_scan_is_a_row_per_session_and_other_databases_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "project" / "tmp"
    folder.mkdir(parents=True)
    path = folder / "agents.db"
    shutil.copyfile(DB, path)
    with writable(folder / "app.sqlite3") as other:  # a database of no agent's
        other.execute("CREATE TABLE sessions (id TEXT, data TEXT)")
        other.execute("INSERT INTO sessions VALUES ('a', '{}')")
    (folder / "notes.db").write_text("not a database\n")
    before = {p.name for p in folder.iterdir()}

    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    frame = corpus.to_pandas().set_index("key")
    assert sorted(frame.index) == [f"{path}#{SOLO}", f"{path}#{TEAM}"]
    assert set(frame["format"]) == {"agno-db"}
    assert corpus.errors == 0
    assert corpus.skipped == 2  # app.sqlite3 and notes.db: counted, not error rows
    nested = 0
    for session in (SOLO, TEAM):
        loaded = turnfold.load(DB, sample=session)
        row = frame.loc[f"{path}#{session}"]
        calls = loaded.tool_calls()
        assert row["tool_calls"] == len(calls)
        assert row["failed_tools"] == sum(c.status == "error" for c in calls)
        assert row["subagents"] == sum(c.subagent is not None for c in calls)
        assert corpus[f"{path}#{session}"].entries == loaded.entries
        nested += len(corpus[f"{path}#{session}"].tool_calls(nested=True))
    assert frame.loc[f"{path}#{SOLO}", ["tool_calls", "failed_tools"]].tolist() == [4, 2]
    assert frame.loc[f"{path}#{TEAM}", ["tool_calls", "subagents"]].tolist() == [1, 1]
    assert nested == count_calls(DB) == 6  # the member's call nested in its team's row
    assert {p.name for p in folder.iterdir()} == before  # read only: nothing written beside


def test_a_folder_of_no_agno_database_has_no_row(tmp_path: Path) -> None:
    with writable(tmp_path / "cache.db") as other:
        other.execute("CREATE TABLE agno_sessions (session_id TEXT)")  # a name, not the columns
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    assert len(corpus) == 0
    assert corpus.skipped == 1


def test_a_rescan_opens_no_database_again_nor_the_index_beside_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery opens no file: a database of no fixed name is a candidate the worker tells
    (Agno's, or skipped), and the index keeps that verdict (C-4); the index itself, a SQLite
    file too, is never a candidate, though it lies in the folder scanned."""
    from turnfold.corpus.index import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    shutil.copyfile(DB, tmp_path / "agents.db")
    with writable(tmp_path / "app.sqlite3") as other:
        other.execute("CREATE TABLE sessions (id TEXT, data TEXT)")
    first = turnfold.scan(tmp_path, workers=1)
    assert (len(first), first.read, first.skipped) == (2, 2, 1)  # app.sqlite3
    opened: list[Path] = []
    real = agno_db.detect_path
    monkeypatch.setattr(agno_db, "detect_path", lambda p: opened.append(p) or real(p))
    again = turnfold.scan(tmp_path, workers=1)
    assert (again.read, again.cached, opened) == (0, 2, [])
    assert again.skipped == 2  # app.sqlite3 again, and the index made by the first scan
    assert again.to_arrow().equals(first.to_arrow())


def test_X1_a_run_too_long_to_read_is_warned_of_by_its_row_and_the_other_runs_are_shown(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row over the record limit is never read whole (SQLite refuses it): the run is left
    out with a warning naming its row and id, the session's other run read as before."""
    lower_limit(monkeypatch)
    with writable(copy) as db:
        rowid, first = db.execute(
            "SELECT rowid, run_id FROM agno_runs WHERE session_id = ? ORDER BY run_index",
            (SOLO,),
        ).fetchone()
        db.execute("UPDATE agno_runs SET run_data = run_data || ? WHERE run_id = ?",
                   (PADDING, first))  # fmt: skip
    assert agno_db.detect_path(copy) is not None
    transcript = turnfold.load(copy, sample=SOLO)
    (warning,) = transcript.warnings
    assert warning.source == str(copy)
    assert warning.reason == skipped(copy, "agno_runs", rowid, "run_data", "run_id")
    assert kinds(transcript) == RUN
    assert texts(transcript)[0] == "And once more?"
    assert calls_of(transcript) == CALLS
    whole = turnfold.load(DB, sample=SOLO)
    assert shown(transcript.entries) == shown(whole.entries[len(RUN) :])
    assert transcript.accounting is not None
    assert transcript.accounting.counts["run"] == {"warned": 1, "mapped": 1}


def test_X1_a_session_row_too_long_to_read_is_listed_and_shown_clipped(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's own row over the record limit (a 2.x session keeps its runs in it) is no
    row to skip: listed by its id, it is read with the long value clipped to its first bytes
    (whitespace here: the same JSON) and a warning naming the row; the other sessions are read
    as before."""
    lower_limit(monkeypatch)
    with writable(copy) as db:
        db.execute("UPDATE agno_sessions SET session_data = session_data || ? "
                   "WHERE session_id = ?", (PADDING, TEAM))  # fmt: skip
        (rowid,) = db.execute("SELECT rowid FROM agno_sessions WHERE session_id = ?",
                              (TEAM,)).fetchone()  # fmt: skip
    assert list(agno_db.sessions(copy)) == [(SOLO, "agent solo"), (TEAM, "session")]
    assert turnfold.load(copy, sample=SOLO).entries == turnfold.load(DB, sample=SOLO).entries
    transcript, whole = turnfold.load(copy, sample=TEAM), turnfold.load(DB, sample=TEAM)
    assert [w.reason for w in transcript.warnings] == [
        skipped(copy, "agno_sessions", rowid, "session_data", "session_id").replace(
            "skipped unread", f"clipped to its first {databases.CLIPPED_BYTES:,} bytes")
    ]  # fmt: skip
    assert transcript.entries == whole.entries
    assert transcript.metadata == whole.metadata
