"""A time that is no time costs its entry the time alone, with a warning (L-4): Claude Code's
stream-json, Semantic Kernel, ATIF, Haystack, DSPy, CrewAI and the Microsoft Agent Framework
dropped such a time without a word (the entry shown undated, a call without its duration, a
log entry's text kept as its time). Now each says of each bad value which record holds it
and what the value is, through the one rule (``common.warned_timestamp``); and a stream-json
record that warned past the thousandth warning is still counted warned (X-1).

Each input is what the tool itself wrote: a copy of a committed fixture (see
tests/fixtures/SOURCES.md) with one or two values changed with ``json`` as the test says, or,
for Haystack and DSPy, a run of the real framework (``haystack_runs``, ``dspy_runs``: scripted
models, offline) with one value of its messages or LM history changed.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.changed_copies import document_copy, lines_copy
from tests.formats.oversized import shown
from turnfold.formats.agents.claude_stream import StreamReader
from turnfold.formats.source import MAX_LISTED_WARNINGS, Source
from turnfold.model import Transcript

FIXTURES = Path(__file__).parents[1] / "fixtures"
STREAM = FIXTURES / "agents" / "claude-stream-json"
STREAM_SUBAGENT = STREAM / "claude-code_v2.1.332_stream-json_subagent.jsonl"
STREAM_BACKGROUND = STREAM / "claude-code_v2.1.337_stream-json_background-agent-stopped.jsonl"
SEMANTIC_KERNEL = FIXTURES / "frameworks" / "semantic-kernel"
ATIF = FIXTURES / "harnesses" / "atif" / "claude-code_v2.1.332_harbor-0.26.0.trajectory.json"
AGENT_FRAMEWORK = (
    FIXTURES / "frameworks" / "agent-framework" / "agent-framework_v1.23.0_response_calc.json"
)
CREWAI = FIXTURES / "crewai"
SECONDS = "(seconds since the epoch); left out"
MILLISECONDS = "(ms since the epoch); left out"


def _said(transcript: Transcript) -> list[tuple[int | None, str]]:
    return [(w.line, w.reason) for w in transcript.warnings]


def _redated(whole: Transcript, changed: Transcript) -> list[str]:
    """The kinds of the entries whose time changed; the changed input shows every entry."""
    assert shown(changed.entries) == shown(whole.entries)
    return [
        type(e).__name__
        for e, b in zip(changed.entries, whole.entries, strict=True)
        if (e.timestamp, getattr(e, "duration_ms", None))
        != (b.timestamp, getattr(b, "duration_ms", None))
    ]


def _warned(transcript: Transcript) -> dict[str, int]:
    """How many records of each type were counted warned."""
    assert transcript.accounting is not None
    counts = transcript.accounting.counts
    return {kind: per["warned"] for kind, per in counts.items() if "warned" in per}


# --- Claude Code's stream-json ----------------------------------------------------------------


def test_L4_claude_stream_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A tool result's ``timestamp`` as text, an assistant event's an object, a task's
    ``patch.end_time`` as text: the call had no time, unsaid; now each is said on its line,
    and each event is counted warned."""
    records = [json.loads(line) for line in STREAM_SUBAGENT.read_text().splitlines()]
    result, call, task = records[5], records[9], records[20]
    assert (result["type"], call["type"], task["subtype"]) == ("user", "assistant", "task_updated")

    def change(records: list[Any]) -> None:
        records[5]["timestamp"] = "yesterday"
        records[9]["timestamp"] = {"at": 1}
        records[20]["patch"]["end_time"] = "soon"

    whole = turnfold.load(STREAM_SUBAGENT)
    transcript = turnfold.load(lines_copy(STREAM_SUBAGENT, tmp_path, change))
    assert _said(transcript) == [
        (6, f"user event {result['uuid']}: its timestamp 'yesterday' is no time; left out"),
        (10, f"assistant event {call['uuid']}: its timestamp {{'at': 1}} is no time; left out"),
        (21, f"task_updated of task {task['task_id']}: its patch.end_time 'soon' is no time "
             f"{MILLISECONDS}"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["ToolCall"]
    undated = [sum(e.timestamp is None for e in t.entries) for t in (whole, transcript)]
    assert undated[1] == undated[0] + 1  # the others still read
    assert _warned(transcript) == {"user": 1, "assistant": 1, "system/task_updated": 1}
    # The sub-agent's own duration (its call's result's) is its end's no more.
    agent = transcript.tool_calls()[-1]
    assert agent.duration_ms == whole.tool_calls()[-1].duration_ms == 1128


def _background(records: list[Any]) -> tuple[str, int]:
    """The background agent's task id and its end (``patch.end_time``)."""
    (updated,) = [r for r in records if r.get("subtype") == "task_updated"]
    return updated["task_id"], updated["patch"]["end_time"]


def test_L4_claude_stream_task_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A background agent's duration is its end less its start (the task list's
    ``start_time``, else ``task_started``'s ``written_at``). A start that is no time gave the
    call the next start, or none and no duration, unsaid; a good one is still read."""
    records = [json.loads(line) for line in STREAM_BACKGROUND.read_text().splitlines()]
    task, end = _background(records)
    written = records[3]["written_at"]
    assert records[2]["tasks"][0]["task_id"] == records[3]["task_id"] == task

    def later(records: list[Any]) -> None:
        records[2]["tasks"][0]["start_time"] = "later"

    whole = turnfold.load(STREAM_BACKGROUND)
    transcript = turnfold.load(lines_copy(STREAM_BACKGROUND, tmp_path, later))
    start_said = (3, f"background_tasks_changed of task {task}: its start_time 'later' is no "
                     f"time {MILLISECONDS}")  # fmt: skip
    assert _said(transcript) == [start_said]
    started = datetime.fromisoformat(written).timestamp() * 1000
    call = transcript.tool_calls()[0]
    assert call.duration_ms == pytest.approx(end - started) != whole.tool_calls()[0].duration_ms

    def none(records: list[Any]) -> None:
        later(records)
        records[3]["written_at"] = 1e300
        records[8]["patch"]["end_time"] = -5

    folder = tmp_path / "none"
    folder.mkdir()
    transcript = turnfold.load(lines_copy(STREAM_BACKGROUND, folder, none))
    assert _said(transcript) == [
        start_said,
        (4, f"task_started of task {task}: its written_at 1e+300 is no time; left out"),
        (9, f"task_updated of task {task}: its patch.end_time -5 is no time {MILLISECONDS}"),
    ]
    assert _redated(whole, transcript) == ["ToolCall"]
    assert transcript.tool_calls()[0].duration_ms is None
    assert transcript.tool_calls()[0].status == whole.tool_calls()[0].status == "cancelled"


@pytest.mark.parametrize("problem", ["time", "orphan result"])
def test_X1_a_stream_json_event_that_warned_past_a_thousand_warnings_is_counted_warned(
    problem: str,
) -> None:
    """Followed live (the Claude Agent SDK's follower: the source's warnings are the
    transcript's), a message event told whether it warned by the list's length, which stops at
    the thousandth warning: an event that warned after 1,200 others was counted mapped. Now
    it is counted warned, and the warning counted once."""
    records = [json.loads(line) for line in STREAM_SUBAGENT.read_text().splitlines()]
    if problem == "time":
        kind, records[9]["timestamp"] = "assistant", "soon"
    else:  # a tool result for a call never made (warned before the time was)
        kind, records[5]["message"]["content"][0]["tool_use_id"] = "user", "toolu_nowhere"
    transcript = Transcript()
    source = Source("<stream>", iter(()), warnings=transcript.warnings)
    reader = StreamReader(source, live=True, transcript=transcript)
    earlier = 1200
    for line in range(1, earlier + 1):
        reader.feed({"type": "later_event", "session_id": "s"}, line)
    for line, record in enumerate(records, start=earlier + 1):
        reader.feed(record, line)
    reader.finish()
    assert len(transcript.warnings) == MAX_LISTED_WARNINGS + 1
    assert transcript.warnings[-1].reason.startswith(f"{earlier - MAX_LISTED_WARNINGS + 1} more")
    whole = turnfold.load(STREAM_SUBAGENT)
    assert whole.accounting is not None
    mapped = whole.accounting.counts[kind]["mapped"]
    assert source.accounting.counts[kind] == {"mapped": mapped - 1, "warned": 1}


# --- Semantic Kernel --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "changes", "kind", "redated"),
    [
        ("semantic-kernel_v1.45.0_chat-history_two-turns.json",
         {3: "soon", 8: -1}, "message/assistant", ["ToolCall", "ToolCall", "ToolCall"]),
        ("semantic-kernel_v1.45.0_agent-stream_calc.jsonl",
         {6: [1e300]}, "chunk/assistant", ["AssistantText"]),
    ],
    ids=["history", "stream"],
)  # fmt: skip
def test_L4_semantic_kernel_response_times_that_are_no_time_are_said(
    tmp_path: Path, name: str, changes: dict[int, Any], kind: str, redated: list[str]
) -> None:
    """A response's ``metadata.created`` as text, before the epoch, a list (each message's
    line, a history's messages by place): its entries (the calls, a streamed text) had no
    time, unsaid; now said of the response, the message counted warned."""
    source = SEMANTIC_KERNEL / name

    def messages(document: Any) -> Any:
        return document["messages"] if isinstance(document, dict) else document

    def change(document: Any) -> None:
        for line, value in changes.items():
            messages(document)[line - 1]["metadata"]["created"] = value

    if source.suffix == ".jsonl":
        records = [json.loads(line) for line in source.read_text().splitlines()]
        path = lines_copy(source, tmp_path, change)
    else:
        records = messages(json.loads(source.read_text()))
        path = document_copy(source, tmp_path, change)
    whole, transcript = turnfold.load(source), turnfold.load(path)
    assert _said(transcript) == [
        (line, f"response {records[line - 1]['metadata']['id']}: its metadata.created "
               f"{value!r} is no time {SECONDS}")
        for line, value in changes.items()
    ]  # fmt: skip
    assert _redated(whole, transcript) == redated
    assert _warned(transcript) == {kind: len(changes)}
    assert any(e.timestamp is not None for e in transcript.entries)  # the others still read


# --- ATIF ---------------------------------------------------------------------------------------


def test_L4_atif_step_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """Harbor's trajectory of a Claude Code session: the prompt step's ``timestamp`` as text,
    the sub-agent's step of a call (flattened into its parent's steps) a number: the prompt
    and the sub-agent's call had no time, unsaid; each step is now counted warned."""
    document = json.loads(ATIF.read_text())
    step = document["steps"][8]
    assert (step["extra"]["is_sidechain"], step["source"]) == (True, "agent")

    def change(document: Any) -> None:
        document["steps"][0]["timestamp"] = "yesterday"
        document["steps"][8]["timestamp"] = 17

    whole, transcript = turnfold.load(ATIF), turnfold.load(document_copy(ATIF, tmp_path, change))
    assert _said(transcript) == [
        (None, "step 1: its timestamp 'yesterday' is no time; left out"),
        (None, "step 9: its timestamp 17 is no time; left out"),
    ]
    assert _redated(whole, transcript) == ["UserMessage"]
    (agent,) = [c.subagent for c in transcript.tool_calls() if c.subagent is not None]
    (whole_agent,) = [c.subagent for c in whole.tool_calls() if c.subagent is not None]
    assert agent.transcript is not None
    assert whole_agent.transcript is not None
    assert _redated(whole_agent.transcript, agent.transcript) == ["ToolCall"]
    assert whole_agent.transcript.tool_calls()[0].timestamp == step["timestamp"]
    assert transcript.entries[1].timestamp == whole.entries[1].timestamp is not None
    assert _warned(transcript) == {"user": 1, "agent": 1}


# --- Haystack -----------------------------------------------------------------------------------


def test_L4_haystack_reply_times_that_are_no_time_are_said() -> None:
    """The real Haystack ``Agent``'s messages, its replies streamed (so each has
    ``meta.completion_start_time``), saved with ``to_dict()``: a reply's time as text, another's
    past the calendar: their entries had no time, unsaid."""
    haystack_runs = pytest.importorskip("tests.formats.haystack_runs")
    pytest.importorskip("haystack")
    result = haystack_runs.run("solo", streaming_callback=lambda chunk: None)
    messages = [m.to_dict() for m in result["messages"]]
    replies = [n for n, m in enumerate(messages, start=1) if m["role"] == "assistant"]
    assert all(messages[n - 1]["meta"]["completion_start_time"] for n in replies)
    whole = turnfold.load(messages)
    changed = json.loads(json.dumps(messages))
    changed[replies[0] - 1]["meta"]["completion_start_time"] = "soon"
    changed[replies[1] - 1]["meta"]["completion_start_time"] = 1e300
    transcript = turnfold.load(changed)
    name = "meta.completion_start_time"
    last = messages[replies[2] - 1]["meta"]["completion_start_time"]
    assert _said(transcript) == [
        (replies[0], f"message {replies[0]}: its {name} 'soon' is no time; left out"),
        (replies[1], f"message {replies[1]}: its {name} 1e+300 is no time; left out"),
    ]
    assert _redated(whole, transcript) == ["Thinking", "ToolCall", "ToolCall"]
    assert transcript.entries[-1].timestamp == last  # the last reply's, still read
    assert _warned(transcript) == {"assistant": 2}


# --- DSPy ---------------------------------------------------------------------------------------


def test_L4_dspy_lm_call_times_that_are_no_time_are_said() -> None:
    """The real DSPy ``ReAct`` on ``DummyLM``, loaded with its LM (``agent=lm``): the first
    step's LM call's ``timestamp`` as text, the answer's an object: the step's thought and the
    answer's reasoning had no time, unsaid; the other steps' still read."""
    dspy_runs = pytest.importorskip("tests.formats.dspy_runs")
    pytest.importorskip("dspy")
    _, prediction, lm = dspy_runs.run("solo")
    whole = turnfold.load(prediction, agent=lm)
    lm.history[0]["timestamp"] = "soon"
    lm.history[-1]["timestamp"] = {"nested": 1}
    transcript = turnfold.load(prediction, agent=lm)
    assert _said(transcript) == [
        (1, "the LM call of step 0: its timestamp 'soon' is no time; left out"),
        (1, "the answer's LM call: its timestamp {'nested': 1} is no time; left out"),
    ]
    assert _redated(whole, transcript) == ["Thinking", "Thinking"]
    kept = [e.timestamp for e in transcript.entries if e.timestamp is not None]
    assert len(kept) == 2
    assert kept == [e.timestamp for e in whole.entries if e.timestamp is not None][1:3]


# --- CrewAI -------------------------------------------------------------------------------------


def test_L4_crewai_log_entry_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The crew's ``output_log_file`` as JSON: an entry's ``timestamp`` as text was kept as its
    ``logged_at``, unsaid; the text log: an entry's date of a month 13 likewise. Now each is
    left out and said; the others are still kept."""
    source = CREWAI / "crewai_v1.15.30_output-log.json"
    log = json.loads(source.read_text())

    def change(entries: Any) -> None:
        entries[1]["timestamp"] = "soon"

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    task = log[1]["task_name"]
    assert _said(transcript) == [
        (2, f"the log's completed entry of task {task!r}: its timestamp 'soon' is no time; "
            "left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == []
    logged = [[e.meta.get("logged_at") for e in t.entries] for t in (whole, transcript)]
    assert all(changed in (None, kept) for changed, kept in zip(*logged[::-1], strict=True))
    assert 0 < sum(map(bool, logged[1])) < sum(map(bool, logged[0]))  # the others still kept

    text = (CREWAI / "crewai_v1.15.30_logs.txt").read_text()
    first = text.splitlines()[0]
    changed = tmp_path / "logs.txt"
    changed.write_text(text.replace(first, "2026-13-06" + first[10:], 1))
    whole, transcript = turnfold.load(CREWAI / "crewai_v1.15.30_logs.txt"), turnfold.load(changed)
    said = first[: first.index(": task_name")].replace("2026-12-06", "2026-13-06")
    assert _said(transcript) == [
        (1, f"the log's started entry of task 'research': its timestamp {said!r} is no time; "
            "left out"),
    ]  # fmt: skip
    assert shown(transcript.entries) == shown(whole.entries)
    assert transcript.entries[0].meta.get("logged_at") is None
    assert whole.entries[0].meta["logged_at"] == first[:19]


def test_L4_crewai_frame_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The crew's ``StreamFrame`` s: a task's start frame's ``timestamp`` as text, a finished
    tool's ``data.started_at`` an hour 25: the prompt had no time and the call no duration,
    unsaid; now said of the frame on its line."""
    source = CREWAI / "crewai_v1.15.30_stream-frames.jsonl"
    frames = [json.loads(line) for line in source.read_text().splitlines()]
    task, tool = frames[1], frames[8]
    assert (task["type"], tool["type"]) == ("task_started", "tool_usage_finished")
    late = "2026-12-06T25:06:58"

    def change(frames: list[Any]) -> None:
        frames[1]["timestamp"] = "yesterday"
        frames[8]["data"]["started_at"] = late

    whole, transcript = turnfold.load(source), turnfold.load(lines_copy(source, tmp_path, change))
    assert _said(transcript) == [
        (2, f"task_started frame {task['id']}: its timestamp 'yesterday' is no time; left out"),
        (9, f"tool_usage_finished frame {tool['id']}: its data.started_at {late!r} is no time; "
            "left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall"]
    before, call = whole.tool_calls()[0], transcript.tool_calls()[0]
    assert (call.duration_ms, before.duration_ms is None) == (None, False)
    assert call.timestamp == before.timestamp is not None  # its start frame's, still read


# --- Microsoft Agent Framework ------------------------------------------------------------------


def test_L4_agent_framework_response_time_that_is_no_time_is_said(tmp_path: Path) -> None:
    """An ``AgentResponse``'s ``created_at`` a day that is none (June 31st): its last
    message's entries had no time, unsaid; now said of the response, counted warned."""
    response = json.loads(AGENT_FRAMEWORK.read_text())

    def change(document: Any) -> None:
        document["created_at"] = "2025-06-31T12:00:03Z"

    whole = turnfold.load(AGENT_FRAMEWORK)
    transcript = turnfold.load(document_copy(AGENT_FRAMEWORK, tmp_path, change))
    assert _said(transcript) == [
        (1, f"response {response['response_id']}: its created_at '2025-06-31T12:00:03Z' is no "
            "time; left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["AssistantText"]
    assert whole.entries[-1].timestamp == response["created_at"]
    assert _warned(transcript) == {"agent_response": 1}
