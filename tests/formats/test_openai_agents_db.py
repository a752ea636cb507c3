"""The OpenAI Agents SDK's SQLite session store (``openai-agents-db``): the file
``SQLiteSession(session_id, "conversations.db")`` keeps a session's input items in, loaded one
session at a time and scanned a row a session.

The committed database was written by the real openai-agents 0.24.0 ``SQLiteSession`` through
``Runner.run`` on the SDK's scripted model
(``tests/fixtures/frameworks/openai-agents/openai_agents_db_recipe.py``): ``user_123``, two
turns (``add`` succeeds and ``explode`` raises in the first, ``add`` in the second);
``user_456``, one turn without a tool. The SDK's own ``get_items`` reads each back.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import turnfold
from tests.formats import openai_agents_runs
from tests.formats.counters_openai_agents import openai_agents_db as count_calls
from tests.formats.loops import run_async
from tests.formats.oversized import PADDING, lower_limit, skipped
from tests.formats.recipes import recipe as load_recipe
from tests.formats.stores import writable
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import openai_agents_db
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.session import session_facts

recipe = load_recipe(openai_agents_runs.FIXTURES / "openai_agents_db_recipe.py")

DB = recipe.FIXTURE
TWO, ONE = recipe.TWO_TURNS, recipe.ONE_TURN
ERROR_TEXT = "An error occurred while running the tool. Please try again."
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "unknown", "3"),  # the SDK records no success flag
    ("call_2", "explode", {"x": "y"}, "error", ERROR_TEXT),  # its default tool-error text
    ("call_3", "add", {"a": 3, "b": 4}, "unknown", "7"),
]
TEXTS = [
    "Add 1 and 2, then try the exploding tool.", "Adding, then the risky tool.",
    "1+2=3; explode failed.", "And 3 and 4?", "3+4=7.",
]  # fmt: skip


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.db"
    shutil.copyfile(DB, path)
    return path


def sdk_items(path: Path, session_id: str, **tables: str) -> list[Any]:
    """The session's items as the SDK's own ``SQLiteSession.get_items`` gives them."""
    from agents import SQLiteSession

    session = SQLiteSession(session_id, path, **tables)
    try:
        return run_async(session.get_items())
    finally:
        session.close()


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def texts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, (UserMessage, AssistantText))]


# --- load ---------------------------------------------------------------------------------------


def test_a_session_reads_its_items_as_the_sdk_s_get_items_gives_them(copy: Path) -> None:
    transcript = turnfold.load(DB, sample=TWO)
    assert transcript.metadata["source_format"] == "openai-agents-db"
    assert transcript.metadata["session_id"] == TWO
    assert transcript.metadata["created_at"].endswith("Z")
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["UserMessage", "AssistantText", "ToolCall", "ToolCall", "AssistantText",
                     "UserMessage", "ToolCall", "AssistantText"]  # fmt: skip
    assert calls_of(transcript) == CALLS
    assert texts(transcript) == TEXTS
    assert transcript.warnings == []
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["function_call"] == {"mapped": 3}
    for disposition in ("mapped", "ignored"):  # every record type noted is documented
        assert all(openai_agents_db.RECORDS.disposition(t) == disposition
                   for t in accounting.types(disposition))  # fmt: skip

    # The SDK's own read of the session: the same items, read as Responses items, the SDK's
    # tool-error text a failure there too (it is the one sign of it in the items).
    items = sdk_items(copy, TWO)
    assert len(items) == 11
    from_items = turnfold.load(items)
    assert from_items.metadata["source_format"] == "openai-responses"
    assert texts(from_items) == texts(transcript)
    assert calls_of(from_items) == CALLS


def test_statuses_equal_the_runs_own_results(tmp_path: Path) -> None:
    """A database written live: the second turn's own ``RunResult`` (its input the session's
    history, as the SDK prepared it) loads (``openai-agents``) with the same calls, statuses
    and texts; its usage, which the session does not keep, is not shown here (L-3)."""
    path = tmp_path / "live.db"
    _, second, _ = recipe.write(path)
    loaded = turnfold.load(path, sample=TWO)
    from_run = turnfold.load(second)
    assert from_run.metadata["source_format"] == "openai-agents"
    assert calls_of(loaded) == calls_of(from_run) == CALLS
    assert texts(loaded) == texts(from_run) == TEXTS
    assert any(getattr(e, "usage", None) is not None for e in from_run.entries)
    assert all(getattr(e, "usage", None) is None for e in loaded.entries)


def test_sample_picks_a_session_and_a_database_of_many_names_them_without_one() -> None:
    assert list(openai_agents_db.sessions(DB)) == [
        (TWO, "Add 1 and 2, then try the exploding tool."), (ONE, "Say hi."),
    ]  # fmt: skip
    assert texts(turnfold.load(DB, sample=ONE)) == ["Say hi.", "Hi."]
    with pytest.raises(ValueError, match=r"holds 2 Agents SDK sessions: pick one") as err:
        turnfold.load(DB)
    assert TWO in str(err.value)
    assert ONE in str(err.value)
    with pytest.raises(ValueError, match="holds no Agents SDK session 'nope'"):
        turnfold.load(DB, sample="nope")
    with pytest.raises(ValueError, match="no epochs"):
        turnfold.load(DB, sample=TWO, epoch=1)


def test_a_database_of_one_session_needs_no_sample(copy: Path) -> None:
    with writable(copy) as db:
        db.execute("DELETE FROM agent_messages WHERE session_id = ?", (ONE,))
        db.execute("DELETE FROM agent_sessions WHERE session_id = ?", (ONE,))
    assert calls_of(turnfold.load(copy)) == CALLS


def test_custom_table_names_are_told_by_their_columns(tmp_path: Path) -> None:
    """``SQLiteSession(sessions_table=, messages_table=)``, live: the tables are found by their
    columns (paired by the messages table's foreign key), the file read as the SDK left it."""
    path = tmp_path / "chat.sqlite"
    tables = {"sessions_table": "chats", "messages_table": "chat_items"}
    recipe.write(path, **tables)
    names = {n for (n,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert {"chats", "chat_items"} <= names
    assert "agent_messages" not in names
    assert [i for i, _ in openai_agents_db.sessions(path)] == [TWO, ONE]
    transcript = turnfold.load(path, sample=TWO)
    assert calls_of(transcript) == CALLS
    assert texts(turnfold.load(sdk_items(path, TWO, **tables))) == texts(transcript)


def test_a_damaged_row_is_a_warning_naming_it_and_the_other_items_are_shown(copy: Path) -> None:
    with writable(copy) as db:
        db.execute("UPDATE agent_messages SET message_data = '{\"call_id\": ' WHERE id = 3")
        db.execute("UPDATE agent_messages SET message_data = '[1]' WHERE id = 11")
    transcript = turnfold.load(copy, sample=TWO)
    # The output whose call's row is lost still shows, as the Responses rules show an output
    # without its call.
    assert [(c[0], c[4]) for c in calls_of(transcript)] == [
        ("call_2", ERROR_TEXT), ("call_1", "3"), ("call_3", "7"),
    ]  # fmt: skip
    assert texts(transcript) == TEXTS[:-1]
    reasons = [w.reason for w in transcript.warnings]
    assert any(r.startswith("message 3: its message_data is no JSON") for r in reasons)
    assert any(r.startswith("message 11: its message_data is no JSON object") for r in reasons)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["message row"] == {"warned": 2}
    assert len(sdk_items(copy, TWO)) == 10  # the SDK's own read drops the first without a word


def test_each_item_is_dated_by_its_row_and_the_header_and_scan_row_by_them(copy: Path) -> None:
    # The items hold no time; the SDK's rows do (created_at, to the second): the second turn,
    # saved a minute later here, is dated so, the session spans both.
    with writable(copy) as db:
        db.execute("UPDATE agent_messages SET created_at = '2026-12-05 16:29:04' WHERE id >= 8")
    transcript = turnfold.load(copy, sample=TWO)
    stamps = [(type(e).__name__, e.timestamp) for e in transcript.entries]
    assert stamps == [
        ("UserMessage", "2026-12-05T16:28:04Z"),
        ("AssistantText", "2026-12-05T16:28:04Z"), ("ToolCall", "2026-12-05T16:28:04Z"),
        ("ToolCall", "2026-12-05T16:28:04Z"), ("AssistantText", "2026-12-05T16:28:04Z"),
        ("UserMessage", "2026-12-05T16:29:04Z"), ("ToolCall", "2026-12-05T16:29:04Z"),
        ("AssistantText", "2026-12-05T16:29:04Z"),
    ]  # fmt: skip
    facts = session_facts(transcript)
    assert (facts.started, facts.duration_s) == (datetime(2026, 12, 5, 16, 28, 4, tzinfo=UTC), 60)
    row = next(r for r in turnfold.scan([copy], cache=False).rows if r["sample"] == TWO)
    assert row["started"] == datetime(2026, 12, 5, 16, 28, 4, tzinfo=UTC)
    assert row["duration_s"] == 60


def test_other_files_are_not_the_sdk_s() -> None:
    assert openai_agents_db.detect_path(DB) is not None
    agno = Path(__file__).parents[1] / "fixtures/frameworks/agno/agno_v3.1.10_sqlitedb.db"
    assert openai_agents_db.detect_path(agno) is None
    assert openai_agents_db.detect_path(openai_agents_runs.FIXTURES / "x.json") is None
    with pytest.raises(TranscriptFormatError, match="pass its path"):
        turnfold.load(json.dumps({"x": 1}), format="openai-agents-db")


def branched(path: Path) -> tuple[list[Any], list[Any]]:
    """An ``AdvancedSQLiteSession`` (``agents.extensions.memory``) file at ``path``, written by
    the real SDK: session ``conv`` asks 1+2 (``add``, an answer), then says hello; a branch
    ``retry`` made from its second turn says goodbye instead. The SDK's own ``get_items`` of
    each branch: ``main``'s, ``retry``'s."""
    from agents.extensions.memory import AdvancedSQLiteSession
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    script = [
        ModelStep(output=[function_call("add", {"a": 1, "b": 2}, call_id="call_1")]),
        ModelStep(output=[assistant_message("3.", item_id="msg_2")]),
        ModelStep(output=[assistant_message("Hello.", item_id="msg_3")]),
        ModelStep(output=[assistant_message("Goodbye instead.", item_id="msg_4")]),
    ]
    agent = Agent(name="calc", tools=[add], model=ScriptedModel(script))

    async def write() -> tuple[list[Any], list[Any]]:
        session = AdvancedSQLiteSession(session_id="conv", db_path=path, create_tables=True)
        try:
            await Runner.run(agent, "What is 1+2?", session=session)
            await Runner.run(agent, "Say hello.", session=session)
            await session.create_branch_from_turn(2, "retry")
            await Runner.run(agent, "Say goodbye.", session=session)
            return (await session.get_items(branch_id="main"),
                    await session.get_items(branch_id="retry"))  # fmt: skip
        finally:
            session.close()

    return run_async(write())


def test_L4_a_branched_session_reads_one_branch_and_names_the_others(tmp_path: Path) -> None:
    """``AdvancedSQLiteSession`` keeps every branch's items in the one messages table: a
    session reads as one branch, as the SDK's ``get_items`` gives it (the one written last
    unless ``sample`` names another), never the branches run together as one conversation."""
    path = tmp_path / "advanced.db"
    main, retry = branched(path)
    first = ["What is 1+2?", "3."]
    loaded = turnfold.load(path)
    assert (
        texts(loaded) == texts(turnfold.load(retry)) == [*first, "Say goodbye.", "Goodbye instead."]
    )
    assert loaded.metadata["branch_id"] == "retry"
    assert [w.reason for w in loaded.warnings] == [
        "session conv has 2 branches: branch retry is shown; the others (main) with "
        'sample="conv/<branch id>"'
    ]
    assert calls_of(loaded) == [("call_1", "add", {"a": 1, "b": 2}, "unknown", "3")]
    on_main = turnfold.load(path, sample="conv/main")
    assert texts(on_main) == texts(turnfold.load(main)) == [*first, "Say hello.", "Hello."]
    assert on_main.metadata["branch_id"] == "main"
    with pytest.raises(ValueError, match=r"no branch 'nope' \(its branches: main, retry\)"):
        turnfold.load(path, sample="conv/nope")
    frame = turnfold.scan(path, cache=False, workers=1).to_pandas()
    assert frame[["key", "turns", "warnings"]].values.tolist() == [[f"{path}#conv", 2, 1]]


# --- scan ---------------------------------------------------------------------------------------


def test_a_scan_is_a_row_per_session(tmp_path: Path) -> None:
    path = tmp_path / "conversations.db"
    shutil.copyfile(DB, path)
    with writable(tmp_path / "app.sqlite3") as other:  # a database of no agent's
        other.execute("CREATE TABLE messages (id INTEGER, session_id TEXT, body TEXT)")
    before = {p.name for p in tmp_path.iterdir()}
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    frame = corpus.to_pandas().set_index("key")
    assert sorted(frame.index) == sorted([f"{path}#{TWO}", f"{path}#{ONE}"])
    assert set(frame["format"]) == {"openai-agents-db"}
    assert corpus.errors == 0
    assert corpus.skipped == 1
    assert frame.loc[f"{path}#{TWO}", ["tool_calls", "failed_tools"]].tolist() == [3, 1]
    assert frame.loc[f"{path}#{ONE}", "tool_calls"] == 0
    assert corpus[f"{path}#{TWO}"].entries == turnfold.load(DB, sample=TWO).entries
    assert count_calls(DB) == 3
    assert {p.name for p in tmp_path.iterdir()} == before  # read only: nothing written beside


def test_X1_an_item_too_long_to_read_is_warned_of_by_its_row_and_the_others_are_shown(
    tmp_path: Path, copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row over the record limit is never read whole (SQLite refuses it): the item is left
    out with a warning naming its row, the session read as it reads without that row."""
    lower_limit(monkeypatch)
    without = tmp_path / "without.db"
    shutil.copyfile(copy, without)
    with writable(without) as db:
        db.execute("DELETE FROM agent_messages WHERE id = 3")
    with writable(copy) as db:
        db.execute("UPDATE agent_messages SET message_data = message_data || ? WHERE id = 3",
                   (PADDING,))  # fmt: skip
    assert openai_agents_db.detect_path(copy) is not None
    transcript = turnfold.load(copy, sample=TWO)
    read_without = turnfold.load(without, sample=TWO)
    warning, *consequences = transcript.warnings
    assert (warning.source, warning.line) == (str(copy), 3)
    assert warning.reason == skipped(copy, "agent_messages", 3, "message_data")
    assert [w.reason for w in consequences] == [w.reason for w in read_without.warnings]
    assert [(c[0], c[4]) for c in calls_of(transcript)] == [
        ("call_2", ERROR_TEXT), ("call_1", "3"), ("call_3", "7"),
    ]  # fmt: skip
    assert texts(transcript) == TEXTS
    assert transcript.entries == read_without.entries
    assert transcript.accounting is not None
    assert transcript.accounting.counts["message row"] == {"warned": 1}


def test_X1_a_first_item_too_long_to_read_leaves_its_session_listed_untitled(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's title is its first prompt: that row over the record limit, the session
    is still listed (titled ``session``), and reading it says which row is left out."""
    lower_limit(monkeypatch)
    titles = dict(openai_agents_db.sessions(copy))
    with writable(copy) as db:
        (first,) = db.execute(
            "SELECT MIN(id) FROM agent_messages WHERE session_id = ?", (TWO,)
        ).fetchone()
        db.execute("UPDATE agent_messages SET message_data = message_data || ? WHERE id = ?",
                   (PADDING, first))  # fmt: skip
    assert dict(openai_agents_db.sessions(copy)) == {**titles, TWO: "session"}
    transcript = turnfold.load(copy, sample=TWO)
    assert transcript.warnings[0].reason == skipped(copy, "agent_messages", first, "message_data")
    assert texts(transcript) == TEXTS[1:]
