"""A time that is no time costs its entry the time alone, with a warning (L-4, X-2): the rest
of the readers, through the one rule of ``tests/test_bad_times.py`` (``warned_timestamp``).

Each reader dropped such a time without a word: the entry was shown undated and nothing said
why. Now each says once of each bad value which record holds it (its line, and the span,
event or message it names) and the value (its first 80 characters), and every entry is shown
as before; a placeholder (an unset ``0``) stays quiet.

Each file is a copy of a committed fixture the real tool wrote (see tests/fixtures/SOURCES.md),
one or two values changed with ``json`` as the test says.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import turnfold
from tests.changed_copies import document_copy, lines_copy
from tests.formats.oversized import shown
from turnfold.model import ToolCall

FIXTURES = Path(__file__).parent / "fixtures"
OTLP = FIXTURES / "traces" / "otlp"
MLFLOW = FIXTURES / "traces" / "mlflow"
PYDANTIC_AI = (
    FIXTURES / "frameworks" / "pydantic-ai" / "pydantic-ai_v2.68.0_all-messages_retry-failed.json"
)
MINI_SWE_AGENT = (
    FIXTURES
    / "harnesses"
    / "mini-swe-agent"
    / "mini-swe-agent_v2.4.6_textbased_submitted.traj.json"
)


def _reasons(transcript: turnfold.Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


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


def _calls(transcript: turnfold.Transcript) -> dict[str, ToolCall]:
    return {c.call_id: c for c in transcript.tool_calls()}


# --- OpenTelemetry spans: OTLP JSON, the console exporter's dump, Jaeger, MLflow --------------


def _otlp_spans(records: list[Any]) -> Iterator[dict[str, Any]]:
    for record in records:
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                yield from scope["spans"]


def test_L4_otlp_span_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The agent span's ``startTimeUnixNano`` as text, a tool span's end before the epoch, a
    chat span's end past the calendar, a later chat span's unset start written ``"0"`` (a
    placeholder): the prompt had no time, the call no end, the answer no time, all unsaid."""
    source = OTLP / "genai_openai_weather-agent.jsonl"

    def change(records: list[Any]) -> None:
        spans = {s["spanId"]: s for s in _otlp_spans(records)}
        spans["3a81983b1b7c3ed3"]["startTimeUnixNano"] = "yesterday"
        spans["4a09f5cac9cbc702"]["endTimeUnixNano"] = "-5"
        spans["62b84db4f90867dd"]["endTimeUnixNano"] = "9" * 40
        spans["5c45e31ba8112a5f"]["startTimeUnixNano"] = "0"

    whole, transcript = turnfold.load(source), turnfold.load(lines_copy(source, tmp_path, change))
    unit = "(ns since the epoch); left out"
    assert _said(transcript) == [
        (1, f"span 62b84db4f90867dd: its endTimeUnixNano '{'9' * 40}' is no time {unit}"),
        (1, f"span 4a09f5cac9cbc702: its endTimeUnixNano '-5' is no time {unit}"),
        (1, f"span 3a81983b1b7c3ed3: its startTimeUnixNano 'yesterday' is no time {unit}"),
    ]
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    assert transcript.entries[0].timestamp is None


def test_L4_console_span_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """What ``ConsoleSpanExporter`` prints: the agent span's ``start_time`` a date that is
    none, a chat span's ``end_time`` a number: its answer and the call it asked for had no
    time, unsaid (the agent's start dates nothing shown: said all the same)."""
    source = OTLP / "console-span-exporter_pydantic-ai_calc-agent.jsonl"

    def change(records: list[Any]) -> None:
        records[10]["start_time"] = "2026-13-45T07:33:08Z"
        records[3]["end_time"] = 1796455988

    whole, transcript = turnfold.load(source), turnfold.load(lines_copy(source, tmp_path, change))
    unit = "(ISO 8601); left out"
    assert _said(transcript) == [
        (4, f"span 62b4ae27d7379cf6: its end_time 1796455988 is no time {unit}"),
        (11, f"span 1e223071ebf184f0: its start_time '2026-13-45T07:33:08Z' is no time {unit}"),
    ]
    assert _redated(whole, transcript) == ["AssistantText", "ToolCall"]


def test_L4_jaeger_span_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A Jaeger export: the first model span's ``startTime`` as text, the last one's
    ``duration``: the prompt and the call it asked for had no time (the span's end, its start
    and duration, was 1970 plus its duration), the answer none, unsaid."""
    source = OTLP / "jaeger_openllmetry-langchain_a2a-supervisor_trimmed.json"

    def change(document: Any) -> None:
        spans = {s["spanID"]: s for s in document["data"][0]["spans"]}
        spans["b33911a87194bf22"]["startTime"] = "soon"
        spans["8c7cedce9613157e"]["duration"] = "long"

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    assert _said(transcript) == [
        (1, "span b33911a87194bf22: its startTime 'soon' is no time (µs since the epoch); "
            "left out"),
        (1, "span 8c7cedce9613157e: its duration 'long' is no time (µs after its startTime); "
            "left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    assert [e.timestamp for e in transcript.entries[:2]] == [None, None]


def test_L4_mlflow_span_and_trace_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """An MLflow trace: a model span's ``end_time_unix_nano`` as text: the answer had no time,
    unsaid; a trace whose spans are lost, its ``request_time`` a date that is none: its turn
    had no time, unsaid."""
    source = MLFLOW / "weather-agent_trace.json"

    def change(document: Any) -> None:
        spans = {s["span_id"]: s for s in document["data"]["spans"]}
        spans["gaJIbYIzGoA="]["end_time_unix_nano"] = "later"

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    assert _said(transcript) == [
        (1, f"span {base64.b64decode('gaJIbYIzGoA=').hex()}: its end_time_unix_nano 'later' is "
            "no time (ns since the epoch); left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript) == ["AssistantText"]

    spanless = MLFLOW / "crash-agent_no-spans_trace.json"

    def unstamped(document: Any) -> None:
        document["info"]["request_time"] = "2026-12-06T25:22:22.973Z"

    whole = turnfold.load(spanless)
    transcript = turnfold.load(document_copy(spanless, tmp_path, unstamped))
    trace = whole.metadata["session_id"]
    assert _reasons(transcript) == [
        f"trace {trace}: its request_time '2026-12-06T25:22:22.973Z' is no time (ISO 8601); "
        "left out",
        *_reasons(whole),
    ]
    assert _redated(whole, transcript) == ["UserMessage", "AssistantError"]


# --- Google ADK's session JSON, OpenAI's Chat Completions and Responses -----------------------


def test_L4_adk_session_and_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """An ADK ``Session`` dumped to JSON: its ``last_update_time`` as text, an event's
    ``timestamp`` past the calendar, another's ``0.0`` (the unset float: a placeholder): the
    session had no update time, the event's entries no time, unsaid."""
    source = FIXTURES / "frameworks" / "adk" / "adk_v2.13.0_session_handoff-chain.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    session, event = document["id"], document["events"][1]["id"]

    def change(document: Any) -> None:
        document["last_update_time"] = "not a time"
        document["events"][1]["timestamp"] = 1e300
        document["events"][2]["timestamp"] = 0.0

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    unit = "(seconds since the epoch); left out"
    assert _reasons(transcript) == [
        f"session {session}: its last_update_time 'not a time' is no time {unit}",
        f"event {event}: its timestamp 1e+300 is no time {unit}",
    ]
    assert ("updated_at" in whole.metadata, "updated_at" in transcript.metadata) == (True, False)
    assert "ToolCall" in _redated(whole, transcript)


def test_L4_openai_chat_and_responses_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A logged Chat Completions call, its response's ``created`` as text, and a logged
    Responses call, its ``created_at`` before the epoch: the answers had no time, unsaid."""
    chat = FIXTURES / "messages" / "openai-3.57.0_chat_logged-call.json"
    responses = FIXTURES / "messages" / "openai-3.57.0_responses_logged-call.json"

    def change(value: Any) -> Callable[[Any], None]:
        def changed(document: Any) -> None:
            document["response"]["created" if "choices" in document["response"] else
                                 "created_at"] = value  # fmt: skip

        return changed

    whole = turnfold.load(chat)
    transcript = turnfold.load(document_copy(chat, tmp_path, change("yesterday")))
    completion = json.loads(chat.read_text(encoding="utf-8"))["response"]["id"]
    assert _reasons(transcript) == [
        f"chat completion {completion}: its created 'yesterday' is no time (seconds since the "
        "epoch); left out"
    ]
    assert _redated(whole, transcript) == ["AssistantText"]

    whole = turnfold.load(responses)
    transcript = turnfold.load(document_copy(responses, tmp_path, change(-1.5)))
    response = json.loads(responses.read_text(encoding="utf-8"))["response"]["id"]
    assert _reasons(transcript) == [
        f"response {response}: its created_at -1.5 is no time (seconds since the epoch); left out"
    ]
    assert _redated(whole, transcript)
    assert all(e.timestamp is None for e in transcript.entries)


# --- pydantic-ai's messages, the OpenHands SDK's events -------------------------------------


def test_L4_pydantic_ai_message_and_part_times_that_are_no_time_are_said(
    tmp_path: Path,
) -> None:
    """``all_messages()`` dumped: a response's ``timestamp`` as text, a tool return's a day
    that is none, the prompt's ``None`` (no time: quiet): the response's entries had no
    time, the call no end, unsaid."""
    source = PYDANTIC_AI

    def change(messages: Any) -> None:
        messages[0]["parts"][1]["timestamp"] = None
        messages[1]["timestamp"] = "yesterday"
        messages[2]["parts"][0]["timestamp"] = "2026-02-30T03:32:17.936408Z"

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    assert _reasons(transcript) == [
        "response 1: its timestamp 'yesterday' is no time; left out",
        "the return of call call_1: its timestamp '2026-02-30T03:32:17.936408Z' is no time; "
        "left out",
    ]
    assert _redated(whole, transcript) == [
        "UserMessage", "Thinking", "AssistantText", "ToolCall", "ToolCall"
    ]  # fmt: skip
    call = _calls(transcript)["call_1"]
    assert (call.started_at, call.ended_at) == (None, None)


def test_L4_openhands_sdk_event_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """The SDK's events: the prompt's ``timestamp`` as text, an observation's a time that is
    none, an action's ``""`` (no time: quiet): the prompt had no time, the call no end,
    unsaid; each warning on its event's line, the event counted once."""
    source = FIXTURES / "harnesses" / "openhands-sdk" / "openhands-sdk_v1.58.2_events.jsonl"
    events = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]

    def change(records: list[Any]) -> None:
        records[1]["timestamp"] = "yesterday"
        records[3]["timestamp"] = "2026-12-05T25:04:52.872743"
        records[4]["timestamp"] = ""

    whole, transcript = turnfold.load(source), turnfold.load(lines_copy(source, tmp_path, change))
    assert _said(transcript) == [
        (2, f"event {events[1]['id']}: its timestamp 'yesterday' is no time; left out"),
        (4, f"event {events[3]['id']}: its timestamp '2026-12-05T25:04:52.872743' is no time; "
            "left out"),
    ]  # fmt: skip
    assert _redated(whole, transcript)[:3] == ["UserMessage", "ToolCall", "ToolCall"]
    assert transcript.accounting.counts["MessageEvent"] == whole.accounting.counts["MessageEvent"]


# --- smolagents, mini-swe-agent, Cline --------------------------------------------------------


def test_L4_smolagents_step_and_run_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A ``RunResult`` dumped: an action step's ``timing.start_time`` as text, another's
    ``end_time`` past the calendar, the run's ``timing.end_time`` infinite: the step's
    entries had no time, the answer its step's start, the run no end, all unsaid."""
    source = (
        FIXTURES / "frameworks" / "smolagents" / "smolagents_v1.26.0_run-result_code-agent.json"
    )

    def change(document: Any) -> None:
        document["steps"][1]["timing"]["start_time"] = "soon"
        document["steps"][3]["timing"]["end_time"] = 1e300
        document["timing"]["end_time"] = float("inf")

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    unit = "(seconds since the epoch); left out"
    assert _reasons(transcript) == [
        f"the run: its timing.end_time inf is no time {unit}",
        f"step 1: its start_time 'soon' is no time {unit}",
        f"step 3: its end_time 1e+300 is no time {unit}",
    ]
    assert ("ended_at" in whole.metadata, "ended_at" in transcript.metadata) == (True, False)
    assert _redated(whole, transcript)


def test_L4_mini_swe_agent_message_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A trajectory: a step's ``extra.timestamp`` as text, a command output's (a user
    message) a list: the step's entries had no time, the command no end, unsaid; said once
    of the output, which is both a message and its call's end."""
    source = MINI_SWE_AGENT

    def change(document: Any) -> None:
        document["messages"][2]["extra"]["timestamp"] = "soon"
        document["messages"][5]["extra"]["timestamp"] = [1796163015, 3729756]

    whole = turnfold.load(source)
    transcript = turnfold.load(document_copy(source, tmp_path, change))
    unit = "(seconds since the epoch); left out"
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (3, f"step 1: its extra.timestamp 'soon' is no time {unit}"),
        (6, f"a user message: its extra.timestamp [1796163015, 3729756] is no time {unit}"),
    ]  # fmt: skip
    assert _redated(whole, transcript)


def test_L4_cline_history_times_that_are_no_time_are_said(tmp_path: Path) -> None:
    """A Cline task folder: a prompt's ``ts`` in its ``api_conversation_history.json`` as
    text: the prompt had no time, unsaid (an answer's ``ts`` before the epoch is said too,
    and the answer keeps the time its request in ``ui_messages.json`` gives it)."""
    task = FIXTURES / "cline" / "cline-cli-2.18.0_tasks" / "ask"
    folder = tmp_path / "ask"
    shutil.copytree(task, folder)
    history = folder / "api_conversation_history.json"
    messages = json.loads(history.read_text(encoding="utf-8"))
    messages[2]["ts"] = "soon"
    messages[3]["ts"] = -1
    history.write_text(json.dumps(messages), encoding="utf-8")

    whole, transcript = turnfold.load(task / history.name), turnfold.load(history)
    unit = "(ms since the epoch); left out"
    assert _said(transcript) == [
        (3, f"message 3: its ts 'soon' is no time {unit}"),
        (4, f"message 4: its ts -1 is no time {unit}"),
    ]
    assert _redated(whole, transcript) == ["SystemNotice", "UserMessage", "Thinking", "ToolCall"]
    assert [e.timestamp for e in transcript.entries[3:5]] == [None, None]


def test_X1_a_builders_warnings_are_listed_to_a_thousand_then_counted(tmp_path: Path) -> None:
    """A builder fed messages (``MessageBuilder``: pydantic-ai's, Agno's…) listed every
    warning: 1,200 responses each of a time that is no time held 1,200 of them; now, as a
    source's, the first thousand are listed and one more counts the rest, every entry shown."""
    source = PYDANTIC_AI

    def change(messages: Any) -> None:
        last = messages.pop()
        messages += [{**last, "timestamp": f"later {n}"} for n in range(1200)]

    transcript = turnfold.load(document_copy(source, tmp_path, change))
    assert len(transcript.warnings) == 1001
    assert transcript.warnings[999].reason == (
        "response 1003: its timestamp 'later 999' is no time; left out"
    )
    assert transcript.warnings[-1].reason == (
        "200 more problem(s) like those above, not listed one by one"
    )
    assert len(transcript.entries) == len(turnfold.load(source).entries) + 1199
