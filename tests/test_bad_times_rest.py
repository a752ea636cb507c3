"""A time that is no time costs its entry the time alone, with a warning (L-4): the readers
``tests/test_bad_times.py`` and ``tests/test_bad_times_more.py`` left, through the same rule
(``common.warned_timestamp``); a record warned of past the thousandth warning is still counted
warned (X-1); and an OpenTelemetry span whose start is no time keeps its place among its
siblings.

Each file is a copy of a committed fixture the real tool wrote (see tests/fixtures/SOURCES.md),
one or two values changed with ``json`` as the test says; the Strands messages are the ones
its ``FileSessionManager`` wrote, one a line as a reader of ``SessionMessage`` dicts takes them.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.changed_copies import document_copy, lines_copy
from tests.formats.oversized import shown

FIXTURES = Path(__file__).parent / "fixtures"
AUTOGEN = FIXTURES / "frameworks" / "autogen" / "autogen_v0.7.5_messages_agent-tool.json"
SEMANTIC_KERNEL = (
    FIXTURES / "frameworks" / "semantic-kernel" / "semantic-kernel_v1.45.0_agent-stream_calc.jsonl"
)
GEMINI = FIXTURES / "gemini" / "subagent"
GEMINI_SESSION = "session-2026-12-01T21-33-66666666.jsonl"
OTLP = FIXTURES / "traces" / "otlp" / "genai_openai_weather-agent.jsonl"


def _said(transcript: turnfold.Transcript) -> list[tuple[int | None, str]]:
    return [(w.line, w.reason) for w in transcript.warnings]


def _redated(whole: turnfold.Transcript, changed: turnfold.Transcript) -> list[str]:
    """The kinds of the entries whose time changed (the changed file shows every entry)."""
    assert shown(changed.entries) == shown(whole.entries)
    return [
        type(e).__name__
        for e, b in zip(changed.entries, whole.entries, strict=True)
        if (e.timestamp, getattr(e, "started_at", None), getattr(e, "ended_at", None))
        != (b.timestamp, getattr(b, "started_at", None), getattr(b, "ended_at", None))
    ]


# --- past the thousandth warning a record that warned is still counted warned ------------


def _autogen_orphans(tmp_path: Path) -> tuple[Path, str]:
    """AgentChat messages and 1,200 more tool results, each for a call no message made."""

    def change(messages: list[Any]) -> None:
        result = next(m for m in messages if m["type"] == "ToolCallExecutionEvent")
        for n in range(1200):
            orphan = copy.deepcopy(result)
            orphan["id"], orphan["content"][0]["call_id"] = f"orphan-{n}", f"nowhere-{n}"
            messages.append(orphan)

    return document_copy(AUTOGEN, tmp_path, change), "ToolCallExecutionEvent"


def _semantic_kernel_orphans(tmp_path: Path) -> tuple[Path, str]:
    """A streamed agent run and 1,200 more tool chunks, each the result of a call never made."""

    def change(chunks: list[Any]) -> None:
        result = next(c for c in chunks if c.get("role") == "tool")
        for n in range(1200):
            orphan = copy.deepcopy(result)
            orphan["items"][0]["id"] = f"nowhere-{n}"
            chunks.append(orphan)

    return lines_copy(SEMANTIC_KERNEL, tmp_path, change), "chunk/tool"


@pytest.mark.parametrize(
    "orphans", [_autogen_orphans, _semantic_kernel_orphans], ids=["autogen", "semantic-kernel"]
)
def test_X1_every_record_that_warned_is_counted_warned_past_a_thousand_warnings(
    tmp_path: Path, orphans: Callable[[Path], tuple[Path, str]]
) -> None:
    """The readers told a record that warned by the warnings list growing, which stops at the
    thousandth warning: the last 200 were counted mapped, though each was warned of (and
    counted in the last warning); now every one is counted warned."""
    path, kind = orphans(tmp_path)
    transcript = turnfold.load(path)
    assert len(transcript.warnings) == 1001
    assert transcript.warnings[-1].reason.startswith("200 more problem(s)")
    whole = turnfold.load(AUTOGEN if kind == "ToolCallExecutionEvent" else SEMANTIC_KERNEL)
    assert transcript.accounting.counts[kind] == {**whole.accounting.counts[kind], "warned": 1200}


# --- Gemini CLI, Qwen Code, OpenHands, Inspect, Cursor, Copilot --------------------------------


def test_L4_gemini_message_thought_and_call_times_that_are_no_time_are_said(
    tmp_path: Path,
) -> None:
    """A prompt's ``timestamp`` as text, a thought's a number, a tool call's a word: the
    prompt and the call had no time, unsaid (the thought took its message's time). The prompt
    is restated by later checkpoints, which keep its first time: said on its own line."""
    folder = tmp_path / "chats"
    shutil.copytree(GEMINI, folder)
    source = folder / GEMINI_SESSION
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    prompt, model = records[2]["id"], records[5]["id"]
    call = records[5]["toolCalls"][0]["id"]

    def change(records: list[Any]) -> None:
        records[2]["timestamp"] = "yesterday"
        records[5]["thoughts"][0]["timestamp"] = 12
        records[5]["toolCalls"][0]["timestamp"] = "soon"

    transcript = turnfold.load(lines_copy(source, folder, change))
    assert _said(transcript) == [
        (3, f"message {prompt}: its timestamp 'yesterday' is no time; left out"),
        (6, f"a thought of message {model}: its timestamp 12 is no time; left out"),
        (6, f"tool call {call}: its timestamp 'soon' is no time; left out"),
    ]
    assert _redated(turnfold.load(GEMINI / GEMINI_SESSION), transcript) == [
        "UserMessage", "ToolCall"
    ]  # fmt: skip


def test_L4_qwen_record_time_that_is_no_time_is_said(tmp_path: Path) -> None:
    """The prompt's ``timestamp`` a date that is none: the prompt had no time, unsaid; said on
    its line, the record counted once."""
    source = FIXTURES / "qwen" / "qwen-code_v0.24.4_interrupted-command.jsonl"
    uuid = json.loads(source.read_text(encoding="utf-8").splitlines()[0])["uuid"]

    def change(records: list[Any]) -> None:
        records[0]["timestamp"] = "2026-12-05T25:25:07.793Z"

    whole, transcript = turnfold.load(source), turnfold.load(lines_copy(source, tmp_path, change))
    assert _said(transcript) == [
        (1, f"record {uuid}: its timestamp '2026-12-05T25:25:07.793Z' is no time; left out")
    ]
    assert _redated(whole, transcript) == ["UserMessage"]
    assert transcript.accounting.counts == whole.accounting.counts


def test_L4_openhands_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A trajectory: the prompt's ``timestamp`` as text, a command's observation a time that
    is none, an edit's ``""`` (no time: quiet): the prompt had no time, the command no end,
    unsaid; each event counted once."""
    source = FIXTURES / "harnesses" / "openhands" / "openhands_trajectory_basic-gui-mode.json"

    def change(events: Any) -> None:
        events[4]["timestamp"] = "yesterday"
        events[8]["timestamp"] = "2025-01-20T25:29:35"
        events[9]["timestamp"] = ""

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    assert _said(transcript) == [
        (1, "event 4: its timestamp 'yesterday' is no time; left out"),
        (1, "event 8: its timestamp '2025-01-20T25:29:35' is no time; left out"),
    ]
    assert _redated(whole, transcript)[:2] == ["UserMessage", "ToolCall"]
    assert transcript.accounting.counts == whole.accounting.counts


def test_L4_inspect_event_times_that_are_no_time_are_said_once(tmp_path: Path) -> None:
    """A sample's events: a model event's ``timestamp`` as text, a tool event's ``completed``
    a time that is none, the limit event's a number: the call had no end, the stop no time,
    unsaid; each said once, though the limit's time is read twice."""
    source = FIXTURES / "harnesses" / "inspect" / "react_four-samples_one-epoch.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    events = document["samples"][0]["events"]
    model, tool, limit = (events[i]["uuid"] for i in (6, 8, 14))

    def change(document: Any) -> None:
        events = document["samples"][0]["events"]
        events[6]["timestamp"] = "yesterday"
        events[8]["completed"] = "2026-12-06T25:13:29"
        events[14]["timestamp"] = 17

    sample = document["samples"][0]["id"]
    whole = turnfold.load(source, sample=sample)
    transcript = turnfold.load(document_copy(source, tmp_path, change), sample=sample)
    assert _said(transcript) == [
        (None, f"model event {model}: its timestamp 'yesterday' is no time; left out"),
        (None, f"tool event {tool}: its completed '2026-12-06T25:13:29' is no time; left out"),
        (None, f"sample_limit event {limit}: its timestamp 17 is no time; left out"),
    ]
    assert _redated(whole, transcript) == ["ToolCall", "AbortMarker"]


def test_L4_a_cursor_prompt_timestamp_that_is_no_time_is_said(tmp_path: Path) -> None:
    """A prompt's ``<timestamp>`` that reads as no time was kept as its text, unsaid; now a
    warning says so on its line, and the line is counted warned."""
    folder = tmp_path / "session"
    shutil.copytree(FIXTURES / "cursor" / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13", folder)
    path = folder / "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13.jsonl"
    text = path.read_text(encoding="utf-8")
    said = "Sunday, Aug 2, 2026, 4:05 AM (UTC-7)"
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if said in row)
    path.write_text(text.replace(said, "Someday soon"), encoding="utf-8")
    transcript = turnfold.load(path)
    assert _said(transcript) == [
        (line, "the prompt: its <timestamp> 'Someday soon' is no time; left out")
    ]
    assert transcript.accounting.counts["user"]["warned"] == 1
    prompt = [e for e in transcript.entries if e.meta.get("timestamp_text") == "Someday soon"]
    assert [e.timestamp for e in prompt] == [None]


def test_L4_copilot_event_time_that_is_no_time_is_said(tmp_path: Path) -> None:
    """An assistant message's ``timestamp`` as text: its entries had no time, unsaid; said on
    its line, the event counted once."""
    source = (
        FIXTURES / "copilot" / "session-state" / "5522b163-29bf-4e3e-82c6-062172639e01"
        / "events.jsonl"
    )  # fmt: skip
    event = json.loads(source.read_text(encoding="utf-8").splitlines()[6])["id"]
    folder = tmp_path / source.parent.name
    shutil.copytree(source.parent, folder)

    def change(events: list[Any]) -> None:
        events[6]["timestamp"] = "soon"

    whole = turnfold.load(source)
    transcript = turnfold.load(lines_copy(source, folder, change))
    assert _said(transcript) == [(7, f"event {event}: its timestamp 'soon' is no time; left out")]
    assert _redated(whole, transcript)
    assert transcript.accounting.counts == whole.accounting.counts


# --- Cline: the panel (the CLI's --json output) and the panel beside the history ----------------


def test_L4_cline_panel_times_that_are_no_time_are_said_once(tmp_path: Path) -> None:
    """The CLI 2.x's ``--json`` output: the task's ``ts`` past the calendar, a text's before
    the epoch: the prompt and the answer had no time, unsaid; said on their lines, each
    message counted once."""
    source = FIXTURES / "cline" / "cline-cli-2.18.0_json" / "edits.jsonl"

    def change(messages: list[Any]) -> None:
        messages[1]["ts"] = 1e300
        messages[4]["ts"] = -3

    whole, transcript = turnfold.load(source), turnfold.load(lines_copy(source, tmp_path, change))
    unit = "(ms since the epoch); left out"
    assert _said(transcript)[1:] == [
        (2, f"message 2: its ts 1e+300 is no time {unit}"),
        (5, f"message 5: its ts -3 is no time {unit}"),
    ]
    assert _redated(whole, transcript) == ["UserMessage", "AssistantText"]
    assert transcript.accounting.counts == whole.accounting.counts
    assert not transcript.accounting.unaccounted


def test_L4_cline_panel_times_beside_the_history_that_are_no_time_are_said(
    tmp_path: Path,
) -> None:
    """A task folder: ``ui_messages.json``'s task ``ts`` before the epoch (the prompt's time)
    and its first request's past the calendar (the answer's, its own ``ts`` text): the prompt
    took the history's time, the answer none, unsaid."""
    folder = tmp_path / "ask"
    shutil.copytree(FIXTURES / "cline" / "cline-cli-2.18.0_tasks" / "ask", folder)
    ui = json.loads((folder / "ui_messages.json").read_text(encoding="utf-8"))
    ui[0]["ts"], ui[1]["ts"] = -1, 1e300
    (folder / "ui_messages.json").write_text(json.dumps(ui), encoding="utf-8")
    history = folder / "api_conversation_history.json"
    messages = json.loads(history.read_text(encoding="utf-8"))
    messages[1]["ts"] = "soon"
    history.write_text(json.dumps(messages), encoding="utf-8")

    whole = turnfold.load(FIXTURES / "cline" / "cline-cli-2.18.0_tasks" / "ask" / history.name)
    transcript = turnfold.load(history)
    unit = "(ms since the epoch); left out"
    assert _said(transcript) == [
        (None, f"ui_messages.json message 1: its ts -1 is no time {unit}"),
        (2, f"message 2: its ts 'soon' is no time {unit}"),
        (None, f"ui_messages.json message 2: its ts 1e+300 is no time {unit}"),
    ]
    assert _redated(whole, transcript) == ["UserMessage", "AssistantText", "ToolCall"]
    assert transcript.entries[0].timestamp is not None  # the history's own time
    assert transcript.accounting.counts == whole.accounting.counts


# --- AutoGen's and Strands' messages ---------------------------------------------------------


def test_L4_autogen_message_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """AgentChat messages: the prompt's ``created_at`` as text, a tool result's past the
    calendar: the prompt had no time, the call no end, unsaid; each counted warned."""
    messages = json.loads(AUTOGEN.read_text(encoding="utf-8"))
    prompt, result = messages[0]["id"], messages[3]["id"]

    def change(messages: Any) -> None:
        messages[0]["created_at"] = "yesterday"
        messages[3]["created_at"] = "9999-99-99"

    whole, transcript = (
        turnfold.load(AUTOGEN),
        turnfold.load(document_copy(AUTOGEN, tmp_path, change)),
    )
    assert [w.reason for w in transcript.warnings] == [
        f"message {prompt}: its created_at 'yesterday' is no time; left out",
        f"message {result}: its created_at '9999-99-99' is no time; left out",
    ]
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall"]
    counts = transcript.accounting.counts
    assert (counts["TextMessage"]["warned"], counts["ToolCallExecutionEvent"]["warned"]) == (1, 1)


def test_L4_a_strands_session_message_time_that_is_no_time_is_said(tmp_path: Path) -> None:
    """The messages a Strands ``FileSessionManager`` stored, one a line: a call's message's
    ``created_at`` as text: the call had no time, unsaid."""
    folder = (
        FIXTURES / "frameworks" / "strands" / "strands_v1.62.0_file-sessions" / "session_solo"
        / "agents" / "agent_calc" / "messages"
    )  # fmt: skip
    stored = [json.loads((folder / f"message_{n}.json").read_text()) for n in range(8)]
    whole_path, path = tmp_path / "messages.jsonl", tmp_path / "changed.jsonl"
    whole_path.write_text("".join(json.dumps(m) + "\n" for m in stored), encoding="utf-8")
    stored[1]["created_at"] = "yesterday"
    path.write_text("".join(json.dumps(m) + "\n" for m in stored), encoding="utf-8")

    whole, transcript = turnfold.load(whole_path), turnfold.load(path)
    assert _said(transcript) == [(2, "message 1: its created_at 'yesterday' is no time; left out")]
    assert _redated(whole, transcript) == ["ToolCall"]
    assert transcript.accounting.counts == {"session_message": {"mapped": 7, "warned": 1}}


# --- OTLP: a span whose start is no time keeps its place -------------------------------------


def _otlp_spans(records: list[Any]) -> Iterator[dict[str, Any]]:
    for record in records:
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                yield from scope["spans"]


@pytest.mark.parametrize(
    "span", ["a7e881721b509063", "4a09f5cac9cbc702", "35fecae8db56f523", "8adf956b4bd93db3"]
)
def test_L4_an_otlp_span_whose_start_is_no_time_keeps_its_place(tmp_path: Path, span: str) -> None:
    """A tool span's (or the expert agent's under one) ``startTimeUnixNano`` as text: it was
    placed at time 0, first of its siblings, before the model call that asked for it, so its
    call was shown twice and out of turn; now it is placed by its end, and the calls read as
    the whole trace's."""

    def change(records: list[Any]) -> None:
        spans = {s["spanId"]: s for s in _otlp_spans(records)}
        spans[span]["startTimeUnixNano"] = "yesterday"

    whole, transcript = turnfold.load(OTLP), turnfold.load(lines_copy(OTLP, tmp_path, change))
    assert [w.reason for w in transcript.warnings] == [
        f"span {span}: its startTimeUnixNano 'yesterday' is no time (ns since the epoch); left out"
    ]
    assert shown(transcript.entries) == shown(whole.entries)
    assert [c.call_id for c in transcript.tool_calls()] == [c.call_id for c in whole.tool_calls()]
