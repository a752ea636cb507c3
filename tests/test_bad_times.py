"""A time that is no time costs its entry the time alone, with a warning (L-4).

Five readers dropped such a time without a word: the entry was shown undated (or dated by its
message, or given a duration from it) and nothing said why. Now each says once of each bad
value which record holds it and what the value is (its first 80 characters), and the entry is
shown as before without that time; one rule (``common.warned_timestamp``) for all of them.

The stores are copies of the committed databases the real tools wrote (Crush's, OpenCode
1.18.33's, and the ADK's, Agno's and the Agents SDK's own SQLite stores, see
tests/fixtures/SOURCES.md), one or two values changed with sqlite3 (SQLite's JSON functions for
a value inside a row's JSON).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import turnfold
from tests.formats.oversized import shown
from turnfold.model import AbortMarker, ToolCall

FIXTURES = Path(__file__).parent / "fixtures"
CRUSH = FIXTURES / "crush" / "cisco-auto" / "crush.db"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
OPENCODE_SESSION = "ses_db99c7f12ffeyED9d42Z0bD2ZW"
ADK = FIXTURES / "frameworks" / "adk" / "adk_v2.13.0_databasesessionservice.db"
AGNO = FIXTURES / "frameworks" / "agno" / "agno_v3.1.10_sqlitedb.db"
AGENTS_SDK = FIXTURES / "frameworks" / "openai-agents" / "openai-agents_v0.24.0_sqlitesession.db"


def _copy(source: Path, tmp_path: Path, *changes: tuple[str, tuple[object, ...]]) -> Path:
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for sql, params in changes:
            assert db.execute(sql, params).rowcount == 1, sql
    return path


def _one(path: Path, sql: str, params: tuple[object, ...] = ()) -> tuple[object, ...]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        found = db.execute(sql, params).fetchall()
    assert len(found) == 1, sql
    return tuple(found[0])


def _reasons(transcript: turnfold.Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


def _calls(
    whole: turnfold.Transcript, changed: turnfold.Transcript, call_id: object
) -> list[ToolCall]:
    """The call ``call_id`` as the whole store shows it, and as the changed one does."""
    found = [[e for e in t.tool_calls() if e.call_id == call_id] for t in (whole, changed)]
    assert [len(calls) for calls in found] == [1, 1]
    return [calls[0] for calls in found]


def test_L4_a_crush_message_and_finish_time_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The last message's ``created_at`` as text, and the cancelled response's ``finish``
    time as text: the call its message answers had no end, the stop its time of the message
    instead of its own, both unsaid."""
    last, answered = _one(CRUSH, "SELECT id, json_extract(parts, '$[0].data.tool_call_id') "
                          "FROM messages ORDER BY created_at DESC, rowid DESC LIMIT 1")  # fmt: skip
    (cancelled,) = _one(CRUSH, "SELECT id FROM messages WHERE parts LIKE '%\"canceled\"%'")
    path = _copy(
        CRUSH, tmp_path,
        ("UPDATE messages SET created_at = 'yesterday' WHERE id = ?", (last,)),
        ("UPDATE messages SET parts = json_set(parts, '$[#-1].data.time', 'soon') WHERE id = ?",
         (cancelled,)),
    )  # fmt: skip
    whole, transcript = turnfold.load(CRUSH), turnfold.load(path)
    unit = "(seconds since the epoch); left out"
    assert _reasons(transcript) == [
        f"message {cancelled}: its finish time 'soon' is no time {unit}",
        f"message {last}: its created_at 'yesterday' is no time {unit}",
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    before, call = _calls(whole, transcript, answered)
    assert (before.ended_at is None, call.ended_at) == (False, None)
    assert call.started_at == before.started_at
    stop_before, stop = (
        [e for e in t.entries if isinstance(e, AbortMarker)] for t in (whole, transcript)
    )
    assert stop_before[0].timestamp != stop[0].timestamp == call.timestamp  # its message's time


def test_L4_opencode_part_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A tool part's ``state.time.start`` as text, another's ``end`` before the epoch, a text
    part's ``time.start`` past the calendar: the call had no start (or end) and a duration of
    nothing, the text its message's time, all unsaid; now the call has no duration either."""

    def part(tool: str) -> tuple[object, ...]:
        return _one(OPENCODE, "SELECT id, json_extract(data, '$.callID') FROM part WHERE "
                    "session_id = ? AND json_extract(data, '$.tool') = ? ORDER BY id LIMIT 1",
                    (OPENCODE_SESSION, tool))  # fmt: skip

    (read, read_call), (glob, glob_call) = part("read"), part("glob")
    (text,) = _one(OPENCODE, "SELECT id FROM part WHERE session_id = ? AND json_extract(data, "
                   "'$.type') = 'text' AND json_extract(data, '$.time.start') IS NOT NULL "
                   "ORDER BY id LIMIT 1", (OPENCODE_SESSION,))  # fmt: skip
    change = "UPDATE part SET data = json_set(data, ?, json(?)) WHERE id = ?"
    path = _copy(OPENCODE, tmp_path, (change, ("$.state.time.start", '"yesterday"', read)),
                 (change, ("$.state.time.end", "-5", glob)),
                 (change, ("$.time.start", "1e300", text)))  # fmt: skip
    whole = turnfold.load(OPENCODE, sample=OPENCODE_SESSION)
    transcript = turnfold.load(path, sample=OPENCODE_SESSION)
    unit = "(ms since the epoch); left out"
    assert _reasons(transcript) == [
        f"part {read}: its time.start 'yesterday' is no time {unit}",
        f"part {glob}: its time.end -5 is no time {unit}",
        f"part {text}: its time.start 1e+300 is no time {unit}",
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    before, call = _calls(whole, transcript, read_call)
    assert (call.started_at, call.duration_ms, before.duration_ms is None) == (None, None, False)
    assert call.ended_at == before.ended_at is not None
    assert call.timestamp != before.timestamp  # its message's, as a part's of no time
    before, call = _calls(whole, transcript, glob_call)
    assert (call.ended_at, call.duration_ms) == (None, None)
    assert call.started_at == before.started_at is not None
    redated = [type(e).__name__ for e, b in zip(transcript.entries, whole.entries, strict=True)
               if e.timestamp != b.timestamp]  # fmt: skip
    assert redated == ["ToolCall", "AssistantText"]


def test_L4_an_adk_session_and_event_time_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The session's ``update_time`` as text and an event's ``event_data`` timestamp past the
    calendar: the session had no update time, the event's entry no time, unsaid."""
    event, when = _one(ADK, "SELECT id, timestamp FROM events WHERE session_id = 'two-turns' AND "
                       "json_extract(event_data, '$.content.parts[0].text') = ?",
                       ("1+2=3; explode failed.",))  # fmt: skip
    path = _copy(
        ADK, tmp_path,
        ("UPDATE sessions SET update_time = 'not a time' WHERE id = 'two-turns'", ()),
        ("UPDATE events SET event_data = json_set(event_data, '$.timestamp', 1e300) "
         "WHERE id = ?", (event,)),
    )  # fmt: skip
    whole, transcript = (turnfold.load(p, sample="two-turns") for p in (ADK, path))
    assert _reasons(transcript) == [
        "session two-turns: its update_time 'not a time' is no time; left out",
        f"event {event}: its event_data's timestamp 1e+300 is no time; left out",
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    undated = [i for i, e in enumerate(transcript.entries) if e.timestamp is None]
    assert [whole.entries[i].timestamp for i in undated] == [f"{str(when).replace(' ', 'T')}Z"]
    assert ("updated_at" in whole.metadata, "updated_at" in transcript.metadata) == (True, False)


def test_L4_an_agno_message_time_that_is_no_time_is_said_in_80_characters(
    tmp_path: Path,
) -> None:
    """A prompt's ``created_at`` (in its run's ``run_data``) ten thousand characters of text:
    the prompt was shown undated, unsaid; now the warning shows the value's first 80."""
    run, message = _one(AGNO, "SELECT run_id, json_extract(run_data, '$.messages[1].id') "
                        "FROM agno_runs WHERE session_id = 'solo-session' ORDER BY rowid "
                        "LIMIT 1")  # fmt: skip
    path = _copy(AGNO, tmp_path, ("UPDATE agno_runs SET run_data = json_set(run_data, "
                                  "'$.messages[1].created_at', printf('%.*c', 10000, 'x')) "
                                  "WHERE run_id = ?", (run,)))  # fmt: skip
    whole, transcript = (turnfold.load(p, sample="solo-session") for p in (AGNO, path))
    value = "'" + "x" * 78 + "…"
    unit = "(seconds since the epoch); left out"
    assert _reasons(transcript) == [f"message {message}: its created_at {value} is no time {unit}"]
    assert shown(transcript.entries) == shown(whole.entries)
    undated = [i for i, e in enumerate(transcript.entries) if e.timestamp is None]
    assert [type(whole.entries[i]).__name__ for i in undated] == ["UserMessage"]
    assert whole.entries[undated[0]].timestamp is not None


def test_L4_an_agents_sdk_session_and_message_time_that_are_no_time_are_said(
    tmp_path: Path,
) -> None:
    """The session's ``updated_at`` a number and a message row's ``created_at`` text that is
    no ``CURRENT_TIMESTAMP``: the session had no update time, the item's entry no time, unsaid."""
    (row,) = _one(AGENTS_SDK, "SELECT id FROM agent_messages WHERE session_id = 'user_123' "
                  "ORDER BY id LIMIT 1")  # fmt: skip
    path = _copy(
        AGENTS_SDK, tmp_path,
        ("UPDATE agent_sessions SET updated_at = 42 WHERE session_id = 'user_123'", ()),
        ("UPDATE agent_messages SET created_at = 'yesterday' WHERE id = ?", (row,)),
    )  # fmt: skip
    whole, transcript = (turnfold.load(p, sample="user_123") for p in (AGENTS_SDK, path))
    unit = "(SQLite's YYYY-MM-DD HH:MM:SS); left out"
    assert _reasons(transcript) == [
        f"session user_123: its updated_at 42 is no time {unit}",
        f"message {row}: its created_at 'yesterday' is no time {unit}",
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    assert ("updated_at" in whole.metadata, "updated_at" in transcript.metadata) == (True, False)
    assert transcript.metadata["created_at"] == whole.metadata["created_at"]
    assert transcript.entries[0].timestamp is None is not whole.entries[0].timestamp
