"""Google ADK's SQLite session store (``adk-db``): the file ``DatabaseSessionService`` keeps
sessions and their events in on a SQLite URL, loaded one session at a time and scanned a row a
session.

The committed database was written by the real google-adk 2.13.0 ``DatabaseSessionService``
through a ``Runner`` on the scripted model of ``adk_runs``
(``tests/fixtures/frameworks/adk/adk_db_recipe.py``): ``two-turns``, the ``calc`` agent's two
turns (``add`` succeeds and ``explode`` raises in the first, ``add`` in the second);
``one-turn``, the ``greeter``'s turn without a tool. The service's own ``get_session`` reads
each back, to load the same ``Session`` object.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

import turnfold
from tests.formats import adk_runs
from tests.formats.counters_adk import adk_db as count_calls
from tests.formats.loops import run_async
from tests.formats.oversized import PADDING, lower_limit, shown, skipped
from tests.formats.recipes import recipe as load_recipe
from tests.formats.stores import writable
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import adk_db
from turnfold.model import AssistantText, Transcript, UserMessage

recipe = load_recipe(adk_runs.FIXTURES / "adk_db_recipe.py")

DB = recipe.FIXTURE
TWO, ONE = recipe.TWO_TURNS, recipe.ONE_TURN
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", "boom: y"),
    ("call_3", "add", {"a": 3, "b": 4}, "success", "7"),
]
TEXTS = ["Add 1 and 2, then try explode.", "1+2=3; explode failed.", "And 3 and 4?", "3+4=7."]
KINDS = ["UserMessage", "Thinking", "ToolCall", "ToolCall", "AssistantText",
         "UserMessage", "ToolCall", "AssistantText"]  # fmt: skip


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    shutil.copyfile(DB, path)
    return path


def adk_session(path: Path, session_id: str) -> Any:
    """The ``Session`` the ADK's own ``DatabaseSessionService.get_session`` rebuilds."""
    from google.adk.sessions import DatabaseSessionService

    async def main() -> Any:
        service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")
        try:
            return await service.get_session(
                app_name=recipe.APP, user_id=recipe.USER, session_id=session_id
            )
        finally:
            await service.close()

    return run_async(main())


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def texts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, (UserMessage, AssistantText))]


def usages(transcript: Transcript) -> list[tuple[Any, Any]]:
    found = [getattr(e, "usage", None) for e in transcript.entries]
    return [(u.input_tokens, u.output_tokens) for u in found if u is not None]


# --- load ---------------------------------------------------------------------------------------


def test_a_session_reads_as_the_adk_s_own_get_session_gives_it(copy: Path) -> None:
    transcript = turnfold.load(DB, sample=TWO)
    meta = transcript.metadata
    assert meta["source_format"] == "adk-db"
    assert (meta["session_id"], meta["app_name"], meta["user_id"]) == (TWO, "demo", "u")
    assert [type(e).__name__ for e in transcript.entries] == KINDS
    assert calls_of(transcript) == CALLS  # explode: the error callback's {"error": ...}
    assert texts(transcript) == TEXTS
    assert usages(transcript) == [(10, 8), (10, 5), (10, 5), (10, 5)]
    assert transcript.warnings == []
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    for disposition in ("mapped", "ignored"):  # every record type noted is documented
        assert all(adk_db.RECORDS.disposition(t) == disposition
                   for t in accounting.types(disposition))  # fmt: skip

    session = adk_session(copy, TWO)
    assert type(session).__name__ == "Session"
    from_object = turnfold.load(session)
    assert from_object.metadata["source_format"] == "adk"
    assert from_object.entries == transcript.entries  # calls, statuses, texts, usage, times
    assert from_object.metadata["updated_at"] == meta["updated_at"]


def test_sample_picks_a_session_and_a_database_of_many_names_them_without_one() -> None:
    assert list(adk_db.sessions(DB)) == [(TWO, "demo, user u"), (ONE, "demo, user u")]
    assert texts(turnfold.load(DB, sample=ONE)) == ["Say hi.", "Hi."]
    with pytest.raises(ValueError, match=r"holds 2 ADK sessions: pick one with sample=") as err:
        turnfold.load(DB)
    assert TWO in str(err.value)
    assert ONE in str(err.value)
    with pytest.raises(ValueError, match="holds no ADK session 'nope'"):
        turnfold.load(DB, sample="nope")
    with pytest.raises(ValueError, match="no epochs"):
        turnfold.load(DB, sample=TWO, epoch=1)


def test_one_id_of_two_users_is_named_by_app_user_and_id(copy: Path) -> None:
    """A session's key is its app, user and id: two users' sessions of one id are told apart
    by ``<app>/<user>/<id>``."""
    with writable(copy) as db:
        db.execute("UPDATE sessions SET id = ?, user_id = 'v' WHERE id = ?", (TWO, ONE))
        db.execute("UPDATE events SET session_id = ?, user_id = 'v' WHERE session_id = ?",
                   (TWO, ONE))  # fmt: skip
    assert [s for s, _ in adk_db.sessions(copy)] == [f"demo/u/{TWO}", f"demo/v/{TWO}"]
    with pytest.raises(ValueError, match="pick one with sample=<app>/<user>/<id>"):
        turnfold.load(copy, sample=TWO)
    assert calls_of(turnfold.load(copy, sample=f"demo/u/{TWO}")) == CALLS
    assert texts(turnfold.load(copy, sample=f"demo/v/{TWO}")) == ["Say hi.", "Hi."]


def test_a_database_of_one_session_needs_no_sample(copy: Path) -> None:
    with writable(copy) as db:
        db.execute("DELETE FROM events WHERE session_id = ?", (ONE,))
        db.execute("DELETE FROM sessions WHERE id = ?", (ONE,))
    assert calls_of(turnfold.load(copy)) == CALLS


def test_the_layout_of_adk_1_19_reads_its_columns_and_never_unpickles_actions(
    tmp_path: Path,
) -> None:
    """ADK 2.13 writes into a database of the v0 layout (1.19–1.21) as it stands: an event's
    fields in columns, its ``actions`` pickled. The columns read as the event; the pickle is
    left out, said once."""
    path = tmp_path / "old.sqlite"
    recipe.write(path, schema="0")
    with contextlib.closing(sqlite3.connect(path)) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
        (pickled,) = db.execute("SELECT actions FROM events LIMIT 1").fetchone()
    assert {"actions", "content", "author"} <= columns
    assert "event_data" not in columns
    assert isinstance(pickled, bytes)
    assert pickled.startswith(b"\x80")  # a pickle, which no read here opens
    transcript = turnfold.load(path, sample=TWO)
    assert calls_of(transcript) == CALLS
    assert texts(transcript) == TEXTS
    assert usages(transcript) == [(10, 8), (10, 5), (10, 5), (10, 5)]
    (warning,) = transcript.warnings
    assert "pickled" in warning.reason
    assert "never unpickled" in warning.reason
    assert transcript.accounting is not None
    assert transcript.accounting.counts["actions (pickled)"] == {"ignored": 1}
    assert count_calls(path) == 3


def test_a_damaged_event_is_a_warning_naming_it_and_the_others_are_shown(copy: Path) -> None:
    with writable(copy) as db:
        query = "SELECT id FROM events WHERE session_id = ? ORDER BY timestamp, id"
        ids = [i for (i,) in db.execute(query, (TWO,))]
        db.execute("UPDATE events SET event_data = '{\"content\": ' WHERE id = ?", (ids[-1],))
        db.execute("UPDATE events SET event_data = '[1]' WHERE id = ?", (ids[-2],))
    transcript = turnfold.load(copy, sample=TWO)
    assert texts(transcript) == TEXTS[:-1]
    (*kept, last) = calls_of(transcript)
    assert kept == CALLS[:2]
    assert last[:3] == CALLS[2][:3]  # its response's event is lost: no outcome recorded
    reasons = [w.reason for w in transcript.warnings]
    assert any(r.startswith(f"event {ids[-1]}: no JSON") for r in reasons)
    assert any(r.startswith(f"event {ids[-2]}: its event_data is no JSON object") for r in reasons)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["event row"] == {"warned": 2}


def test_other_files_are_not_the_adk_s() -> None:
    assert adk_db.detect_path(DB) is not None
    agno = Path(__file__).parents[1] / "fixtures/frameworks/agno/agno_v3.1.10_sqlitedb.db"
    assert adk_db.detect_path(agno) is None
    assert adk_db.detect_path(adk_runs.FIXTURES / "adk_v2.13.0_session_subagents.json") is None
    with pytest.raises(TranscriptFormatError, match="pass its path"):
        turnfold.load(json.dumps({"x": 1}), format="adk-db")


# --- scan ---------------------------------------------------------------------------------------


def test_a_scan_is_a_row_per_session(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    shutil.copyfile(DB, path)
    with writable(tmp_path / "app.sqlite3") as other:  # a database of no agent's
        other.execute("CREATE TABLE events (id TEXT, session_id TEXT, timestamp REAL)")
    before = {p.name for p in tmp_path.iterdir()}
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    frame = corpus.to_pandas().set_index("key")
    assert sorted(frame.index) == sorted([f"{path}#{TWO}", f"{path}#{ONE}"])
    assert set(frame["format"]) == {"adk-db"}
    assert corpus.errors == 0
    assert corpus.skipped == 1
    assert frame.loc[f"{path}#{TWO}", ["tool_calls", "failed_tools"]].tolist() == [3, 1]
    assert frame.loc[f"{path}#{ONE}", "tool_calls"] == 0
    assert corpus[f"{path}#{TWO}"].entries == turnfold.load(DB, sample=TWO).entries
    assert count_calls(DB) == 3
    assert {p.name for p in tmp_path.iterdir()} == before  # read only: nothing written beside


def test_X1_an_event_too_long_to_read_is_warned_of_by_its_row_and_the_rest_is_read(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row over the record limit is never read whole (SQLite refuses it): the event is left
    out with a warning naming its row and id, every other event read as before."""
    lower_limit(monkeypatch)
    with writable(copy) as db:
        (rowid,) = db.execute(
            "SELECT rowid FROM events WHERE event_data LIKE '%explode failed%'"
        ).fetchone()
        db.execute("UPDATE events SET event_data = event_data || ? WHERE rowid = ?",
                   (PADDING, rowid))  # fmt: skip
    assert adk_db.detect_path(copy) is not None
    transcript = turnfold.load(copy, sample=TWO)
    [warning] = transcript.warnings
    assert warning.source == str(copy)
    assert warning.reason == skipped(copy, "events", rowid, "event_data", "id").replace(
        "skipped unread", "skipped"
    )
    assert texts(transcript) == [t for t in TEXTS if t != "1+2=3; explode failed."]
    assert calls_of(transcript) == CALLS
    whole = turnfold.load(DB, sample=TWO)
    assert shown(transcript.entries) == shown(
        [e for e in whole.entries if getattr(e, "text", None) != "1+2=3; explode failed."]
    )
    assert transcript.accounting is not None
    assert transcript.accounting.counts["event row"] == {"warned": 1}
