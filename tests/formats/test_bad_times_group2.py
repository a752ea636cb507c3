"""A time that is no time costs its entry the time alone, with a warning (L-4): the headless
streams of cursor-agent, Gemini CLI and the Cline CLI, Continue's sessions, the Cline SDK's
messages files and both Kimi CLIs, through the one rule of ``tests/test_bad_times.py``
(``common.warned_timestamp``).

Each reader dropped such a time without a word: the entry was shown undated (or dated by the
next event, or a call left without its end) and nothing said why. Now each says on the
record's line which record holds it and the value (its first 80 characters), every entry is
shown as before, the good times are read as before, and each record is counted once.

Each file is a copy of a committed fixture the real tool wrote (see tests/fixtures/SOURCES.md),
one to three values changed with ``json`` as the test says; Continue's CLI writes no
``reasoning``, so its items get the extension's (``{active, text, startAt, endAt}``, epoch ms,
as continuedev/continue's ``sessionSlice`` stamps it), one with a time and one without.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import turnfold
from tests.changed_copies import document_copy, lines_copy
from tests.formats.oversized import shown

FIXTURES = Path(__file__).parents[1] / "fixtures"
CURSOR = (
    FIXTURES / "agents" / "cursor-stream-json"
    / "cursor-agent_2026-02_stream-json_parallel-shell-calls.jsonl"
)  # fmt: skip
GEMINI = (
    FIXTURES / "agents" / "gemini-stream-json"
    / "gemini-cli_v0.61.0_stream-json_tools-subagent.jsonl"
)  # fmt: skip
CLINE_JSON = FIXTURES / "cline" / "cline-cli-3.0.65_json" / "work.jsonl"
CLINE_SESSION = FIXTURES / "cline" / "cline-cli-3.0.65_team-session" / "1796443893972_gleub"
CONTINUE = FIXTURES / "continue" / "work" / "sessions" / "4b888bc9-986f-432a-9fe4-8f6b4db60a07.json"
KIMI_SESSION = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
KIMI_CLI_SESSION = FIXTURES / "kimi" / "legacy" / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"

MS = "(ms since the epoch); left out"


def _said(transcript: turnfold.Transcript) -> list[tuple[int | None, str]]:
    return [(w.line, w.reason) for w in transcript.warnings]


def _redated(whole: turnfold.Transcript, changed: turnfold.Transcript) -> list[str]:
    """The kinds of the entries whose time changed; the changed file shows every entry, with
    the same text, call, outcome and result."""
    assert shown(changed.entries) == shown(whole.entries)
    return [
        type(e).__name__
        for e, b in zip(changed.entries, whole.entries, strict=True)
        if (e.timestamp, getattr(e, "started_at", None), getattr(e, "ended_at", None))
        != (b.timestamp, getattr(b, "started_at", None), getattr(b, "ended_at", None))
    ]


def _counts(transcript: turnfold.Transcript) -> dict[str, dict[str, int]]:
    """How many records of each type were mapped, ignored or warned of."""
    assert transcript.accounting is not None
    return transcript.accounting.counts


def _lines(source: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]


def test_L4_cursor_agent_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The first text's ``timestamp_ms`` as text, a call's start NaN, the other call's end past
    the calendar: the text and the call had no time, the call no end, all unsaid."""
    records = _lines(CURSOR)
    started, completed = records[3]["call_id"], records[5]["call_id"]
    assert (records[3]["subtype"], records[5]["subtype"]) == ("started", "completed")
    assert started != completed

    def change(records: list[Any]) -> None:
        records[2]["timestamp_ms"] = "yesterday"
        records[3]["timestamp_ms"] = float("nan")
        records[5]["timestamp_ms"] = 10**30

    whole, transcript = turnfold.load(CURSOR), turnfold.load(lines_copy(CURSOR, tmp_path, change))
    assert _said(transcript) == [
        (3, f"the assistant event: its timestamp_ms 'yesterday' is no time {MS}"),
        (4, f"the tool_call/started event of call {started[:80]!r}: its timestamp_ms nan is no "
            f"time {MS}"),
        (6, f"the tool_call/completed event of call {completed[:80]!r}: its timestamp_ms "
            f"1000000000000000000000000000000 is no time {MS}"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["AssistantText", "ToolCall", "ToolCall"]
    calls = {c.call_id: c for c in transcript.tool_calls()}
    before = {c.call_id: c for c in whole.tool_calls()}
    assert (calls[started].started_at, calls[started].ended_at) == (
        None, before[started].ended_at
    )  # fmt: skip
    assert (calls[completed].started_at, calls[completed].ended_at) == (
        before[completed].started_at, None
    )  # fmt: skip
    assert before[started].ended_at is not None
    assert before[completed].started_at is not None
    # Each event counted once, as this reader counts an event it warned of: warned.
    warned = ("assistant", "tool_call/started", "tool_call/completed")
    assert [_counts(whole)[kind] for kind in warned] == [{"mapped": 2}] * 3
    assert _counts(transcript) == {
        **_counts(whole), **{kind: {"mapped": 1, "warned": 1} for kind in warned}
    }  # fmt: skip


def test_L4_gemini_cli_stream_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The prompt's ``timestamp`` a word, the first text's an object, a failed call's result an
    hour past 23: the prompt and the text had no time, the call no end, all unsaid; each said on
    its line, each event counted once."""
    records = _lines(GEMINI)
    assert (records[10]["type"], records[10]["status"]) == ("tool_result", "error")
    call = records[10]["tool_id"]

    def change(records: list[Any]) -> None:
        records[1]["timestamp"] = "yesterday"
        records[2]["timestamp"] = {"$date": records[2]["timestamp"]}
        records[10]["timestamp"] = "2026-12-05T25:04:20.263Z"

    whole, transcript = turnfold.load(GEMINI), turnfold.load(lines_copy(GEMINI, tmp_path, change))
    assert _said(transcript) == [
        (2, "the message/user event: its timestamp 'yesterday' is no time; left out"),
        (3, "the message/assistant event: its timestamp {'$date': '2026-12-05T02:04:20.156Z'} "
            "is no time; left out"),
        (11, f"the tool_result event of call {call!r}: its timestamp '2026-12-05T25:04:20.263Z' "
             "is no time; left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["UserMessage", "AssistantText", "ToolCall"]
    failed = next(c for c in transcript.tool_calls() if c.call_id == call)
    before = next(c for c in whole.tool_calls() if c.call_id == call)
    assert (failed.status, failed.ended_at, failed.started_at) == (
        "error", None, before.started_at
    )  # fmt: skip
    assert before.ended_at is not None
    assert failed.started_at is not None
    assert _counts(transcript) == _counts(whole)


def test_L4_cline_cli_json_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The Cline CLI's ``--json`` events (the SDK's, not Cline 3's panel): the reasoning's start
    a word, a call's start an object, the run's result an hour past 23: the thought took its
    end's time, the call had no start, the run no end, all unsaid."""
    records = _lines(CLINE_JSON)
    assert records[2]["event"]["type"] == "content_start"
    assert records[11]["event"]["contentType"] == "tool"
    assert records[92]["type"] == "run_result"
    call = records[11]["event"]["toolCallId"]

    def change(records: list[Any]) -> None:
        records[2]["ts"] = "yesterday"
        records[11]["ts"] = {"$date": records[11]["ts"]}
        records[92]["ts"] = "2026-12-05T25:13:43.039Z"

    whole = turnfold.load(CLINE_JSON)
    transcript = turnfold.load(lines_copy(CLINE_JSON, tmp_path, change))
    assert _said(transcript) == [
        (3, "the agent_event/content_start event: its ts 'yesterday' is no time; left out"),
        (12, f"the agent_event/content_start event of call {call!r}: its ts "
             "{'$date': '2026-12-05T10:13:41.877Z'} is no time; left out"),
        (93, "the run_result event: its ts '2026-12-05T25:13:43.039Z' is no time; left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["Thinking", "ToolCall"]
    [thought] = [e for e in transcript.entries if type(e).__name__ == "Thinking"]
    assert thought.timestamp == "2026-12-05T10:13:41.863Z"  # its end's
    searched = next(c for c in transcript.tool_calls() if c.call_id == call)
    before = next(c for c in whole.tool_calls() if c.call_id == call)
    assert (searched.started_at, searched.ended_at) == (None, before.ended_at)
    meta = transcript.metadata
    assert meta["started_at"] == whole.metadata["started_at"] == "2026-12-05T10:13:41.770Z"
    assert ("ended_at" in whole.metadata, "ended_at" in meta) == (True, False)
    assert _counts(transcript) == _counts(whole)


def test_L4_cline_messages_and_manifest_times_that_are_no_time_are_said(
    tmp_path: Path,
) -> None:
    """A Cline SDK session folder: the prompt's ``ts`` a word, a tool result's past the
    calendar, the answer's NaN, the manifest's ``started_at`` a word: the prompt and the answer
    had no time, the call no end, and the session's start (kept as it was) dated nothing, all
    unsaid."""
    folder = tmp_path / CLINE_SESSION.name
    shutil.copytree(CLINE_SESSION, folder)
    messages = folder / f"{CLINE_SESSION.name}.messages.json"
    manifest = folder / f"{CLINE_SESSION.name}.json"
    document = json.loads(messages.read_text(encoding="utf-8"))
    assert [document["messages"][i]["role"] for i in (0, 2, 17)] == ["user", "user", "assistant"]
    document["messages"][0]["ts"] = "yesterday"
    document["messages"][2]["ts"] = 1e300
    document["messages"][17]["ts"] = float("nan")
    messages.write_text(json.dumps(document), encoding="utf-8")
    facts = json.loads(manifest.read_text(encoding="utf-8"))
    facts["started_at"] = "yesterday"
    manifest.write_text(json.dumps(facts), encoding="utf-8")

    whole = turnfold.load(CLINE_SESSION / messages.name)
    transcript = turnfold.load(messages)
    assert _said(transcript) == [
        (None, "the session's manifest: its started_at 'yesterday' is no time; left out"),
        (1, f"message 1: its ts 'yesterday' is no time {MS}"),
        (3, f"message 3: its ts 1e+300 is no time {MS}"),
        (18, f"message 18: its ts nan is no time {MS}"),
    ]
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    assert transcript.entries[0].timestamp is None
    meta = transcript.metadata
    assert ("started_at" in whole.metadata, "started_at" in meta) == (True, False)
    assert meta["ended_at"] == whole.metadata["ended_at"] == "2026-12-05T04:11:39.806Z"
    assert _counts(transcript) == _counts(whole)


def _with_reasoning(session: dict[str, Any], start: Any) -> None:
    """The extension's ``reasoning`` on two of the CLI's answers: one started at ``start``, the
    other at a time."""
    history = session["history"]
    assert [history[i]["message"]["role"] for i in (4, 6)] == ["assistant", "assistant"]
    history[4]["reasoning"] = {"active": False, "text": "Edit the notes, then add the file.",
                               "startAt": start, "endAt": 1796478905000}  # fmt: skip
    history[6]["reasoning"] = {"active": False, "text": "Everything checks out.",
                               "startAt": 1796478906000, "endAt": 1796478906400}  # fmt: skip


def test_L4_a_continue_reasoning_time_that_is_no_time_is_said(tmp_path: Path) -> None:
    """A thought's ``reasoning.startAt`` as text: the thought had no time, unsaid; the other
    thought keeps its time, and the session is counted as before."""
    (tmp_path / "whole").mkdir()
    whole_path = document_copy(CONTINUE, tmp_path / "whole", lambda s: _with_reasoning(s, 1))
    path = document_copy(CONTINUE, tmp_path, lambda s: _with_reasoning(s, "yesterday"))
    whole, transcript = turnfold.load(whole_path), turnfold.load(path)
    assert _said(transcript) == [
        (1, f"history[4]: its reasoning.startAt 'yesterday' is no time {MS}")
    ]
    assert _redated(whole, transcript) == ["Thinking"]
    thoughts = [e for e in transcript.entries if type(e).__name__ == "Thinking"]
    assert [t.text for t in thoughts] == ["Edit the notes, then add the file.",
                                          "Everything checks out."]  # fmt: skip
    assert [t.timestamp for t in thoughts] == [None, "2026-12-05T13:55:06Z"]
    assert _counts(transcript) == _counts(whole)


def test_L4_kimi_code_record_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The journal's ``created_at`` before the epoch, the first prompt's ``time`` a word, a
    call's past the calendar: the session had no start, the prompt and the call no time, all
    unsaid; the sub-agent's journal beside it is read as before."""
    folder = tmp_path / KIMI_SESSION.name
    shutil.copytree(KIMI_SESSION, folder)
    main = KIMI_SESSION / "agents" / "main" / "wire.jsonl"
    records = _lines(main)
    assert [records[i]["type"] for i in (0, 4)] == ["metadata", "turn.prompt"]
    assert records[17]["event"]["type"] == "tool.call"

    def change(records: list[Any]) -> None:
        records[0]["created_at"] = -1
        records[4]["time"] = "soon"
        records[17]["time"] = 10**30

    whole = turnfold.load(main)
    transcript = turnfold.load(lines_copy(main, folder / "agents" / "main", change))
    assert _said(transcript) == [
        (1, f"the metadata record: its created_at -1 is no time {MS}"),
        (5, f"the turn.prompt record: its time 'soon' is no time {MS}"),
        (18, "the context.append_loop_event record: its time 1000000000000000000000000000000 "
             f"is no time {MS}"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall"]
    assert ("started_at" in whole.metadata, "started_at" in transcript.metadata) == (True, False)
    assert _counts(transcript) == _counts(whole)


def test_L4_kimi_cli_wire_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The older Kimi CLI's wire: the prompt's ``timestamp`` a word, a call's an object, a
    result's NaN: the prompt and the call had no time, the call no end, all unsaid."""
    folder = tmp_path / KIMI_CLI_SESSION.name
    shutil.copytree(KIMI_CLI_SESSION, folder)
    wire = KIMI_CLI_SESSION / "wire.jsonl"
    records = _lines(wire)
    kinds = [records[i]["message"]["type"] for i in (1, 4, 8)]
    assert kinds == ["TurnBegin", "ToolCall", "ToolResult"]

    def change(records: list[Any]) -> None:
        records[1]["timestamp"] = "yesterday"
        records[4]["timestamp"] = {"seconds": int(records[4]["timestamp"])}
        records[8]["timestamp"] = float("nan")

    whole = turnfold.load(wire)
    transcript = turnfold.load(lines_copy(wire, folder, change))
    unit = "(seconds since the epoch); left out"
    assert _said(transcript) == [
        (2, f"the TurnBegin wire event: its timestamp 'yesterday' is no time {unit}"),
        (5, f"the ToolCall wire event: its timestamp {{'seconds': 1796480467}} is no time {unit}"),
        (9, f"the ToolResult wire event: its timestamp nan is no time {unit}"),
    ]
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall", "ToolCall"]
    assert _counts(transcript) == _counts(whole)
