"""Gemini CLI chat recordings: legacy JSON and JSONL (spec L-1 … L-4, L-2.4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import turnfold
from turnfold import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptFormatError,
    UserMessage,
)
from turnfold.formats import gemini
from turnfold.formats.gemini_parts import usage_from
from turnfold.formats.source import open_source
from turnfold.session import session_facts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LEGACY = FIXTURES / "gemini-cli_legacy-json_file-ops.json"
CLAUDE = FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl"
HEADER = {
    "sessionId": "s-1",
    "projectHash": "abc123",
    "startTime": "2026-05-01T10:00:00.000Z",
    "lastUpdated": "2026-05-01T10:00:00.000Z",
    "kind": "main",
}
T0 = "2026-05-01T10:00:0{}.000Z"


def jsonl(*records: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def user(mid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": T0.format(1), "type": "user", "content": text, **extra}


def model(mid: str, text: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": T0.format(2), "type": "gemini", "content": text, **extra}


def call(cid: str, name: str = "read_file", status: str | None = "success", **extra: Any) -> Any:
    record: dict[str, Any] = {
        "id": cid,
        "name": name,
        "args": {"file_path": f"/repo/{cid}.py"},
        "result": [{"functionResponse": {"id": cid, "name": name, "response": {"output": "ok"}}}],
        "timestamp": T0.format(3),
        **extra,
    }
    if status is not None:
        record["status"] = status
    return record


def load_lines(*records: Any) -> Transcript:
    return turnfold.load(jsonl(HEADER, *records))


def of(transcript: Transcript, cls: type[Any]) -> list[Any]:
    return [e for e in transcript.entries if isinstance(e, cls)]


# --- the real fixture: counts computed from the raw file ------------------------------------------


def raw_counts(document: dict[str, Any]) -> dict[str, int]:
    messages = document["messages"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    return {
        "user prompts": sum(m["type"] == "user" for m in messages),
        "tool calls": len(calls),
        "errors": sum(c.get("status") == "error" for c in calls)
        + sum(m["type"] == "error" for m in messages),
        "cancellations": sum(c.get("status") == "cancelled" for c in calls)
        + sum(m["type"] == "info" and m["content"] == "Request cancelled." for m in messages),
        "thoughts": sum(len(m.get("thoughts") or []) for m in messages),
        "sub-agents": sum(c["name"] == "delegate_to_agent" or "agentId" in c for c in calls),
        "texts": sum(m["type"] == "gemini" and bool(m["content"]) for m in messages),
    }


def loaded_counts(transcript: Transcript) -> dict[str, int]:
    calls = transcript.tool_calls()
    return {
        "user prompts": len(of(transcript, UserMessage)),
        "tool calls": len(calls),
        "errors": sum(c.status == "error" for c in calls) + len(of(transcript, AssistantError)),
        "cancellations": sum(c.status == "cancelled" for c in calls)
        + len(of(transcript, AbortMarker)),
        "thoughts": len(of(transcript, Thinking)),
        "sub-agents": sum(c.subagent is not None for c in calls),
        "texts": len(of(transcript, AssistantText)),
    }


def test_L2_gemini_fixture_loads_detected_and_explicit() -> None:
    detected = turnfold.load(LEGACY)
    explicit = turnfold.load(LEGACY, format="gemini")
    assert detected == explicit
    assert detected.metadata["source_format"] == "gemini"
    assert detected.metadata["session_id"] == "37b7abef-713d-4522-85f0-8ff15a4e6d17"
    assert detected.metadata["model"] == "gemini-3-pro"
    assert detected.warnings == []


def test_L2_gemini_fixture_counts_match_the_raw_file() -> None:
    document = json.loads(LEGACY.read_text(encoding="utf-8"))
    assert loaded_counts(turnfold.load(LEGACY)) == raw_counts(document)


def test_L2_gemini_fixture_round_trips_through_the_native_format() -> None:
    transcript = turnfold.load(LEGACY)
    assert turnfold.load(transcript.dump()) == transcript
    assert turnfold.load(transcript.dump(layout="json")) == transcript


def test_L1_gemini_fixture_calls_keep_ids_status_and_batches() -> None:
    document = json.loads(LEGACY.read_text(encoding="utf-8"))
    raw = [c for m in document["messages"] for c in m.get("toolCalls") or []]
    calls = turnfold.load(LEGACY).tool_calls()
    assert [c.call_id for c in calls] == [c["id"] for c in raw]
    assert [c.status for c in calls] == [c["status"] for c in raw]
    assert [c.started_at for c in calls] == [c["timestamp"] for c in raw]
    # One gemini message holds three model responses' calls; each response's share a timestamp.
    message_id = document["messages"][3]["id"]
    assert [c.batch_id for c in calls[:9]] == [message_id] * 2 + [f"{message_id}#2"] * 4 + [
        f"{message_id}#3"
    ] * 3
    assert calls[3].description == "SECURITY.md"
    assert calls[0].result is not None
    assert calls[0].result.kind == "todo"
    assert calls[0].result.structured == raw[0]["args"]["todos"]


def test_L1_gemini_fixture_delegate_to_agent_is_a_subagent() -> None:
    delegate = turnfold.load(LEGACY).tool_calls()[1]
    assert delegate.name == "delegate_to_agent"
    assert delegate.subagent is not None
    assert delegate.subagent.name == "codebase_investigator"
    assert delegate.subagent.task is not None
    assert delegate.subagent.task.startswith("Explore")
    assert delegate.subagent.reason == "GOAL"
    assert delegate.result is not None
    assert delegate.result.kind == "subagent"


def test_L1_gemini_usage_on_the_text_or_on_the_first_call_without_text() -> None:
    transcript = turnfold.load(LEGACY)
    first_answer = of(transcript, AssistantText)[0]
    assert first_answer.usage is not None
    # output 292 plus 240 thoughts: Gemini counts them apart, turnfold's output holds them
    assert (first_answer.usage.input_tokens, first_answer.usage.output_tokens) == (4749, 532)
    assert first_answer.usage.reasoning_tokens == 240
    assert first_answer.usage.cache_read_tokens == 0
    tools_only = transcript.tool_calls()[0]
    assert tools_only.usage.output_tokens == 269 + 1627  # its thoughts in


def test_L2_gemini_legacy_document_as_python_objects() -> None:
    document = {**HEADER, "messages": [user("u1", "hi"), model("m1", "hello")]}
    transcript = turnfold.load(document)
    assert [type(e) for e in transcript.entries] == [UserMessage, AssistantText]
    assert document["messages"][0]["content"] == "hi"  # nothing the caller passed is modified


def test_L2_ibm_bob_shell_s_chat_recording_is_read_as_gemini_cli_s() -> None:
    # Hand-made in the shape of a real Bob Shell session (tests/fixtures/SOURCES.md): the fork
    # types the model's messages "bob-shell", records its thoughts again as they stream, and
    # ends a task with attempt_completion.
    def snapshot(text: str, at: int) -> dict[str, Any]:
        return {"subject": "", "description": text, "timestamp": T0.format(at)}

    completion = call("tool-8", "attempt_completion", args={"result": "All five routes are fine."})
    completion["result"][0]["functionResponse"]["response"] = {
        "output": "All five routes are fine."
    }
    document = {**HEADER, "messages": [
        user("u1", "Review the API routes."),
        model("b1", "I'll list them.", type="bob-shell", model="premium",
              thoughts=[snapshot("The", 1), snapshot("The user", 2), snapshot("The user wants", 3)],
              toolCalls=[call("tool-1", "list_files")],
              tokens={"input": 100, "output": 10, "cached": 0, "thoughts": 0, "tool": 0,
                      "total": 110}),
        model("b2", "", type="bob-shell", model="premium", toolCalls=[completion]),
    ]}  # fmt: skip
    transcript = turnfold.load(document)
    assert transcript.warnings == []
    assert (transcript.metadata["agent"], transcript.metadata["model"]) == ("bob-shell", "premium")
    assert transcript.accounting is not None
    assert transcript.accounting.counts["gemini"] == {"mapped": 2}
    (thought,) = of(transcript, Thinking)
    assert thought.text == "The user wants"  # the streamed snapshots are one thought
    assert [c.name for c in transcript.tool_calls()] == ["list_files", "attempt_completion"]
    answer = of(transcript, AssistantText)[-1]
    assert (answer.text, transcript.entries[-1]) == ("All five routes are fine.", answer)
    assert session_facts(transcript).agent == "IBM Bob Shell"  # the header names the fork


# --- JSONL layout ---------------------------------------------------------------------------------


def test_L2_gemini_jsonl_is_detected_from_its_header_line() -> None:
    transcript = turnfold.load(jsonl(HEADER, user("u1", "hi"), model("m1", "hello")))
    assert transcript.metadata["source_format"] == "gemini"
    assert [e.text for e in of(transcript, UserMessage)] == ["hi"]


def test_L2_gemini_jsonl_last_record_per_id_wins_in_its_first_position() -> None:
    transcript = load_lines(
        user("u1", "first"),
        model("m1", "", toolCalls=[call("c1", status="executing", result=None)]),
        {"$set": {"lastUpdated": T0.format(5)}},
        model("m1", "", toolCalls=[call("c1")], tokens={"input": 10, "output": 2}),
        user("u2", "second"),
    )
    (only,) = transcript.tool_calls()
    assert only.status == "success"
    assert only.result is not None
    assert only.result.text == "ok"
    assert [type(e) for e in transcript.entries] == [UserMessage, ToolCall, UserMessage]


def test_L2_gemini_set_updates_metadata() -> None:
    transcript = load_lines(
        user("u1", "hi"), {"$set": {"summary": "Say hi", "lastUpdated": T0.format(9)}}
    )
    assert transcript.metadata["title"] == "Say hi"
    assert transcript.metadata["last_updated"] == T0.format(9)
    assert transcript.warnings == []


def test_L2_gemini_rewind_drops_the_message_and_everything_after() -> None:
    transcript = load_lines(
        user("u1", "keep"),
        model("m1", "kept answer"),
        user("u2", "undone"),
        model("m2", "undone answer"),
        {"$rewindTo": "u2"},
        user("u3", "again"),
    )
    assert [e.text for e in transcript.entries] == ["keep", "kept answer", "again"]


def test_L4_gemini_rewind_to_an_unknown_id_clears_history_with_a_warning() -> None:
    transcript = load_lines(user("u1", "gone"), {"$rewindTo": "nope"}, user("u2", "after"))
    assert [e.text for e in transcript.entries] == ["after"]
    assert any("nope" in w.reason for w in transcript.warnings)


def test_L2_gemini_set_messages_that_drops_history_is_a_compaction() -> None:
    transcript = load_lines(
        user("u1", "old question"),
        model("m1", "old answer"),
        user("u2", "recent question"),
        model("m2", "recent answer"),
        {
            "$set": {
                "messages": [
                    user("s1", "<state_snapshot>the summary</state_snapshot>"),
                    model("s2", "Got it."),
                    user("u2", "recent question"),
                    model("m2", "recent answer, masked"),
                ]
            }
        },
        user("u3", "next"),
    )
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage",
        "AssistantText",
        "UserMessage",
        "AssistantText",
        "CompactionBoundary",
        "UserMessage",
    ]
    boundary = of(transcript, CompactionBoundary)[0]
    assert boundary.summary == "<state_snapshot>the summary</state_snapshot>\n\nGot it."
    assert of(transcript, AssistantText)[1].text == "recent answer, masked"


def test_L2_gemini_set_messages_that_drops_nothing_updates_in_place() -> None:
    transcript = load_lines(
        user("u1", "q"),
        model("m1", "a"),
        {"$set": {"messages": [user("u1", "q"), model("m1", "a, updated")]}},
    )
    assert [e.text for e in transcript.entries] == ["q", "a, updated"]


def test_L2_gemini_compression_notice_is_a_compaction_boundary() -> None:
    notice = (
        "IMPORTANT: This conversation approached the input token limit for gemini-2.5-pro. "
        "A compressed context will be sent for future messages (compressed from: 190000 to "
        "12345 tokens)."
    )
    transcript = load_lines(user("u1", "q"), {"id": "i1", "type": "info", "content": notice})
    (boundary,) = of(transcript, CompactionBoundary)
    assert (boundary.pre_tokens, boundary.trigger) == (190000, "auto")
    assert boundary.meta["post_tokens"] == 12345


def test_L2_gemini_compression_notice_of_the_window_s_share_is_a_compaction_boundary() -> None:
    # Gemini CLI since 0.2x says the share of the model's window (handleChatCompressionEvent).
    notice = "Context compressed from 68% to 3%."
    transcript = load_lines(user("u1", "q"), {"id": "i1", "type": "info", "content": notice})
    (boundary,) = of(transcript, CompactionBoundary)
    assert (boundary.pre_tokens, boundary.trigger) == (None, "auto")
    assert (boundary.meta["pre_percent"], boundary.meta["post_percent"]) == (68, 3)
    assert of(transcript, SystemNotice) == []


def test_L2_gemini_a_response_the_model_stopped_short_is_a_warning() -> None:
    # handleFinishedEvent's notice of the finish reason, recorded as info.
    text = "\N{WARNING SIGN}\N{VARIATION SELECTOR-16}  Response stopped due to malformed function "
    text += "call."
    transcript = load_lines(user("u1", "q"), {"id": "i1", "type": "info", "content": text})
    (notice,) = of(transcript, SystemNotice)
    assert (notice.text, notice.level, notice.subtype) == (text, "warning", "finish_reason")


# --- message types and tool outcomes --------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"type": "error", "content": "Quota exceeded"}, AssistantError(message="Quota exceeded")),
        (
            {"type": "warning", "content": "Slow"},
            SystemNotice(text="Slow", level="warning", subtype="warning"),
        ),
        ({"type": "info", "content": "Hi"}, SystemNotice(text="Hi", level="info", subtype="info")),
        (
            {"type": "info", "content": "Request cancelled."},
            AbortMarker(reason="Request cancelled."),
        ),
    ],
)
def test_L1_gemini_message_types(record: dict[str, Any], expected: Any) -> None:
    (entry,) = load_lines({"id": "x", **record}).entries
    entry.id, entry.meta, entry.timestamp = expected.id, expected.meta, expected.timestamp
    assert entry == expected


@pytest.mark.parametrize(
    ("status", "response", "expected_status", "expected_text"),
    [
        ("success", {"output": "fine"}, "success", "fine"),
        ("error", {"error": "No such file"}, "error", "No such file"),
        ("cancelled", {"error": "User cancelled"}, "cancelled", "User cancelled"),
        (None, {"output": "fine"}, "unknown", "fine"),
        ("executing", None, "unknown", None),
    ],
)
def test_L3_gemini_tool_status_only_as_recorded(
    status: str | None, response: Any, expected_status: str, expected_text: str | None
) -> None:
    result = (
        None if response is None else [{"functionResponse": {"id": "c1", "response": response}}]
    )
    (tool,) = load_lines(model("m1", toolCalls=[call("c1", status=status, result=result)]))
    tool_call = tool if isinstance(tool, ToolCall) else None
    assert tool_call is not None
    assert tool_call.status == expected_status
    assert (tool_call.result.text if tool_call.result else None) == expected_text
    assert tool_call.ended_at is None
    assert tool_call.recorded_duration_ms is None


def test_L3_gemini_request_cancelled_cancels_unfinished_calls_only() -> None:
    transcript = load_lines(
        user("u1", "go"),
        model("m1", toolCalls=[call("done"), call("cut", status="executing", result=None)]),
        {"id": "i1", "type": "info", "content": "Request cancelled."},
    )
    done, cut = transcript.tool_calls()
    assert (done.status, cut.status) == ("success", "cancelled")
    assert isinstance(transcript.entries[-1], AbortMarker)


def test_L1_gemini_thoughts_are_summaries() -> None:
    thoughts = [
        {"subject": "Planning", "description": "I will read.", "timestamp": T0.format(1)},
        {"subject": "", "description": "Only text", "timestamp": "[placeholder]"},
    ]
    transcript = load_lines(model("m1", "done", thoughts=thoughts))
    first, second = of(transcript, Thinking)
    assert (first.text, first.form, first.timestamp) == (
        "**Planning**\n\nI will read.",
        "summary",
        T0.format(1),
    )
    assert (second.text, second.timestamp) == ("Only text", T0.format(2))


def test_L1_gemini_diff_display_todo_and_memory_tools() -> None:
    diff = {
        "fileDiff": "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n",
        "fileName": "a.py",
        "originalContent": "x\n",
        "newContent": "y\n",
    }
    transcript = load_lines(
        model(
            "m1",
            toolCalls=[
                call("e1", name="replace", resultDisplay=diff),
                call("e2", name="save_memory", args={"fact": "likes tea"}),
                call(
                    "e3",
                    name="write_todos",
                    resultDisplay={"todos": [{"description": "x", "status": "pending"}]},
                ),
            ],
        )
    )
    edit, memory, todo = transcript.tool_calls()
    assert edit.result is not None
    assert edit.result.kind == "diff"
    assert edit.result.text == diff["fileDiff"]
    assert edit.result.structured == {"fileName": "a.py"}
    assert memory.memory == "write"
    assert todo.result is not None
    assert todo.result.kind == "todo"
    assert todo.result.structured == [{"description": "x", "status": "pending"}]


def test_L1_gemini_user_display_content_is_what_was_typed() -> None:
    expanded = [{"text": "explain @a.py"}, {"text": "--- Content from referenced files ---"}]
    transcript = load_lines(user("u1", expanded, displayContent="explain @a.py"))
    assert [e.text for e in transcript.entries] == ["explain @a.py"]


def test_L1_gemini_synced_function_responses_fill_calls_without_results() -> None:
    parts = [{"functionCall": {"id": "c9", "name": "glob", "args": {"pattern": "*.py"}}}]
    response = {"functionResponse": {"id": "c9", "name": "glob", "response": {"output": "a.py"}}}
    transcript = load_lines(model("m1", parts), user("u1", [response]))
    (tool,) = transcript.tool_calls()
    assert tool.result is not None
    assert tool.result.text == "a.py"
    assert tool.status == "unknown"
    assert of(transcript, UserMessage) == []


def test_Q1_gemini_ten_megabyte_tool_result_loads() -> None:
    big = "x" * (10 * 1024 * 1024)
    result = [{"functionResponse": {"id": "c1", "response": {"output": big}}}]
    (tool,) = load_lines(model("m1", toolCalls=[call("c1", result=result)])).tool_calls()
    assert tool.result is not None
    assert tool.result.text == big


# --- bad input (L-4) ------------------------------------------------------------------------------


def test_L4_gemini_truncated_last_line_and_unknown_records_warn() -> None:
    text = jsonl(HEADER, user("u1", "hi"), {"what": 1}, {"id": "z", "type": "mystery"})
    transcript = turnfold.load(text + '{"id": "m1", "type": "gemi')
    assert [e.text for e in transcript.entries] == ["hi"]
    assert [w.line for w in transcript.warnings] == [3, 4, 5]


def test_L4_gemini_glued_lines_in_a_file_are_split(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    glued = json.dumps(user("u1", "one")) + json.dumps(model("m1", "two"))
    path.write_text(jsonl(HEADER) + glued + "\n" + jsonl(user("u2", "three")), encoding="utf-8")
    transcript = turnfold.load(path)
    assert [e.text for e in transcript.entries] == ["one", "two", "three"]
    assert transcript.warnings == []


def test_L4_gemini_empty_source_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(TranscriptFormatError):
        turnfold.load(path, format="gemini")
    with pytest.raises(TranscriptFormatError):
        turnfold.load(path)


def test_L4_gemini_a_claude_code_file_is_a_clear_format_error() -> None:
    with pytest.raises(TranscriptFormatError, match="no Gemini CLI chat record") as caught:
        turnfold.load(CLAUDE, format="gemini")
    assert caught.value.tried == ("gemini",)
    assert caught.value.line == 1
    source, stream = open_source(CLAUDE)
    try:
        assert not gemini.detect(source).fits
    finally:
        assert stream is not None
        stream.close()


# --- sub-agent sessions ---------------------------------------------------------------------------


def write_session(tmp_path: Path) -> Path:
    chats = tmp_path / "chats"
    (chats / "s-1").mkdir(parents=True)
    delegate = call(
        "d1",
        name="delegate_to_agent",
        args={"agent_name": "codebase_investigator", "objective": "Map the repo"},
        agentId="child-1",
    )
    parent = chats / "session-2026-05-01T10-00-s-1.jsonl"
    parent.write_text(jsonl(HEADER, user("u1", "explore"), model("m1", toolCalls=[delegate])))
    child_header = {**HEADER, "sessionId": "child-1", "kind": "subagent"}
    child_header["lastUpdated"] = "2026-05-01T10:00:30.000Z"
    child = jsonl(
        child_header,
        user("cu", "Map the repo"),
        model("cm", "found it", toolCalls=[call("k1"), call("k2")], tokens={"output": 7}),
    )
    (chats / "s-1" / "child-1.jsonl").write_text(child)
    (chats / "s-1" / "orphan.jsonl").write_text(jsonl({**child_header, "sessionId": "orphan"}))
    return parent


def test_L1_gemini_subagent_session_nests_under_its_call(tmp_path: Path) -> None:
    transcript = turnfold.load(write_session(tmp_path))
    (delegate,) = transcript.tool_calls()
    agent = delegate.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert (agent.name, agent.task, agent.agent_id) == (
        "codebase_investigator",
        "Map the repo",
        "child-1",
    )
    assert (agent.tool_count, agent.output_tokens, agent.duration_ms) == (2, 7, 30_000.0)
    assert agent.transcript.metadata["kind"] == "subagent"
    assert [w.reason for w in transcript.warnings] == [
        "1 sub-agent session(s) in s-1/ not linked to a tool call"
    ]
    assert turnfold.load(transcript.dump()) == transcript


def test_L1_gemini_subagent_file_loads_on_its_own(tmp_path: Path) -> None:
    write_session(tmp_path)
    child = turnfold.load(tmp_path / "chats" / "s-1" / "child-1.jsonl")
    assert child.metadata["kind"] == "subagent"
    assert len(child.tool_calls()) == 2


# --- any input: entries or warnings, never a crash (L-4) ------------------------------------------

KEYS = [
    "id", "type", "content", "displayContent", "toolCalls", "thoughts", "tokens", "model",
    "status", "result", "resultDisplay", "args", "name", "agentId", "timestamp", "functionCall",
    "functionResponse", "response", "output", "error", "text", "thought", "subject",
    "description", "fileDiff", "todos", "inlineData", "$set", "$rewindTo", "messages",
    "sessionId", "projectHash", "summary",
]  # fmt: skip
LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=4)
    | st.sampled_from(
        ["a", "b", "user", "gemini", "info", "success", "error", "Request cancelled.", T0.format(1)]
    )
)
JSON = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=12,
)
RECORD = st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6) | st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b", "c"]), "type": st.sampled_from(["user", "gemini", "info"])},
    optional=dict.fromkeys(("content", "toolCalls", "thoughts", "tokens", "displayContent"), JSON),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(RECORD | JSON, max_size=8))
def test_L4_gemini_any_records_load_or_raise_a_format_error(records: list[Any]) -> None:
    try:
        transcript = turnfold.load(jsonl(HEADER, *records), format="gemini")
    except TranscriptFormatError:
        return
    assert turnfold.load(transcript.dump()) == transcript


# --- long sessions (their speed is measured by benchmarks/, never asserted in tests) --------------


def big_session(turns: int) -> str:
    """A JSONL session whose model messages are re-written as their tools finish."""
    records: list[Any] = [HEADER]
    for i in range(turns):
        outputs = [f"line {k}\n" * (40 + 90 * k) for k in range(3)]
        calls = [
            call(f"c{i}-{k}", result=[{"functionResponse": {"response": {"output": output}}}])
            for k, output in enumerate(outputs)
        ]
        pending = [{**c, "status": "executing", "result": None} for c in calls]
        thoughts = [{"subject": "Plan", "description": "read the files " * 8}]
        records += [
            user(f"u{i}", f"step {i}"),
            model(f"m{i}", toolCalls=pending, thoughts=thoughts),
            model(f"m{i}", toolCalls=calls, thoughts=thoughts, tokens={"input": 9, "output": 1}),
            {"$set": {"lastUpdated": T0.format(4)}},
            model(f"a{i}", f"Done with step {i}. " * 5),
        ]
    return jsonl(*records)


def test_gemini_a_long_session_loads_completely() -> None:
    transcript = turnfold.load(big_session(200))
    assert len(transcript.tool_calls()) == 600
    assert all(c.status == "success" for c in transcript.tool_calls())
    assert sum(isinstance(e, UserMessage) for e in transcript) == 200


def test_L4_gemini_a_qwen_file_is_a_clear_format_error() -> None:
    with pytest.raises(TranscriptFormatError, match="no Gemini CLI chat record"):
        turnfold.load(FIXTURES / "qwen-code_chatrecord.jsonl", format="gemini")


# --- accounting, failures stated in the output, resume, drift, real CLI files (issues 11, 21, 23)

OWN = FIXTURES / "gemini"
RESUME = OWN / "gemini-cli_v0.61_resume-api-form.jsonl"
THREE_TURNS = OWN / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
CONTENT_OBJECTS = OWN / "gemini-cli_resume-content-objects.jsonl"
MODEL_PARTS = OWN / "gemini-cli_legacy-json_model-parts.json"
SUBAGENT = OWN / "subagent" / "session-2026-12-01T21-33-66666666.jsonl"


def statuses(transcript: Transcript) -> list[tuple[str, str]]:
    """(command or tool name, status) of each call."""
    rows = []
    for call in transcript.tool_calls():
        args = call.args if isinstance(call.args, dict) else {}
        rows.append((args.get("command", call.name), call.status))
    return rows


def test_X2_gemini_every_line_and_message_type_is_accounted_for() -> None:
    transcript = load_lines(
        user("u1", "hi"),
        {"$set": {"lastUpdated": T0.format(5)}},
        model("g1", "hello"),
        {"id": "i1", "type": "info", "content": "Request cancelled."},
        {"id": "x1", "type": "mystery", "content": "?"},
        {"$rewindTo": "i1"},
        {"$set": {"messages": [user("u1", "hi"), model("g1", "hello")]}},
    )
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts == {
        "metadata": {"mapped": 1},
        "user": {"mapped": 1},
        "$set": {"mapped": 1},
        "gemini": {"mapped": 1},
        "info": {"mapped": 1},
        "mystery": {"warned": 1},
        "$rewindTo": {"mapped": 1},
        "$set/messages": {"mapped": 1},
    }
    assert accounting.types("mapped") <= set(gemini.RECORDS.mapped)


def test_X2_gemini_legacy_messages_are_accounted_for_one_by_one() -> None:
    document = {**HEADER, "messages": [user("u1", "hi"), model("g1", "yo"), {"no": "id"}]}
    accounting = turnfold.load(document).accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts == {
        "session": {"mapped": 1},
        "user": {"mapped": 1},
        "gemini": {"mapped": 1},
        "(message without id)": {"warned": 1},
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<untrusted_context>\nOutput: ls: no such\nExit Code: 2\n</untrusted_context>", "error"),
        ("Command: ls\nDirectory: (root)\nOutput: x\nError: (none)\nExit Code: 0", "success"),
        ("Output: (empty)\nExit Code: 1\nProcess Group PGID: 7", "error"),
        ("Command exited with code 127", "error"),
        ("Error: file not found: /repo/a.py", "error"),
        ("error: pathspec 'x' did not match", "error"),
        ("Command timed out after 120000 ms", "error"),
        ("Tool call was rejected by the user.", "error"),
        # What a tool returned, holding the words: no failure it states (the output of a call
        # recorded as a success, a read file's first line).
        ('{"status":"success","labels":["Approved","Rejected"]}', None),
        ("Why the request timed out last week: the proxy dropped it.", None),
        ("Output: hi\nProcess Group PGID: 1", None),
        ("Successfully updated the todo list.", None),
        ("# Notes\nAn error: here is only in the body", None),
        ("Error: (none)\nOutput: fine", None),
        ("", None),
        (None, None),
    ],
)
def test_L3_21_11_a_result_whose_text_states_a_failure_is_an_error(
    text: str | None, expected: str | None
) -> None:
    from turnfold.formats.gemini_parts import stated_outcome

    assert stated_outcome(text) == expected


def test_L3_21_11_gemini_success_whose_output_only_mentions_a_rejection_stays_a_success() -> None:
    labels = call("c1", "get_labels")
    labels["result"][0]["functionResponse"]["response"] = {
        "output": '{"status":"success","labels":["Approved","Rejected"]}'
    }
    read = call("c2", "read_file")
    read["result"][0]["functionResponse"]["response"] = {
        "output": "Why the request timed out last week: the proxy dropped it."
    }
    transcript = load_lines(user("u1", "go"), model("g1", toolCalls=[labels, read]))
    assert [c.status for c in transcript.tool_calls()] == ["success", "success"]


def test_L3_21_11_gemini_success_whose_output_says_exit_code_1_is_an_error() -> None:
    failing = call("c1", "run_shell_command", command="false")
    failing["result"][0]["functionResponse"]["response"] = {"output": "Output: \nExit Code: 1"}
    transcript = load_lines(user("u1", "go"), model("g1", toolCalls=[failing, call("c2")]))
    assert [c.status for c in transcript.tool_calls()] == ["error", "success"]
    cancelled = call("c3", status="cancelled")
    cancelled["result"][0]["functionResponse"]["response"] = {"output": "Exit Code: 130"}
    assert load_lines(model("g2", toolCalls=[cancelled])).tool_calls()[0].status == "cancelled"


def test_L3_23_real_gemini_failed_command_recorded_as_success_is_an_error() -> None:
    transcript = turnfold.load(RESUME)
    assert statuses(transcript) == [("echo hi", "success"), ("ls /nonexistent", "error")]


def test_L2_23_gemini_resume_sync_keeps_recorded_calls_and_makes_no_compaction() -> None:
    transcript = turnfold.load(RESUME)
    assert of(transcript, CompactionBoundary) == []
    assert [m.text for m in of(transcript, UserMessage)] == [
        "FIRST-PROMPT: run echo hi",
        "SECOND-PROMPT: anything else?",
    ]
    assert len(of(transcript, Thinking)) == 1  # not repeated from the API-form copy
    assert transcript.warnings == []
    # The CLI's environment briefing is the CLI speaking, not a prompt.
    notices = of(transcript, SystemNotice)
    assert [n.subtype for n in notices] == ["session_context"]


def test_L2_23_gemini_two_resumes_keep_every_turn_and_status() -> None:
    transcript = turnfold.load(THREE_TURNS)
    assert of(transcript, CompactionBoundary) == []
    assert statuses(transcript) == [
        ("echo hi", "success"),
        ("ls /nonexistent", "error"),
        ("false", "error"),
        ("echo two", "success"),
    ]
    assert len(of(transcript, UserMessage)) == 3
    assert len(of(transcript, Thinking)) == 1


def test_L2_23_gemini_resume_as_content_objects_restates_and_fills_results() -> None:
    transcript = turnfold.load(CONTENT_OBJECTS)
    assert of(transcript, CompactionBoundary) == []
    assert transcript.warnings == []
    prompts = [m.text for m in of(transcript, UserMessage)]
    assert prompts == ["Run the tests.", "Fix them and rerun."]
    assert [m.text for m in of(transcript, AssistantText)] == [
        "Two tests fail.",
        "All tests pass now.",
    ]
    first, second = transcript.tool_calls()
    assert (first.call_id, first.status) == ("c1", "error")  # success recorded, Exit Code: 1
    # The second prompt's call is recorded only in API form: its result is the functionResponse.
    assert (second.call_id, second.status) == ("c2", "success")
    assert second.result is not None
    assert "14 passing" in (second.result.text or "")


def test_L2_23_gemini_a_checkpoint_with_new_messages_is_still_a_compaction() -> None:
    summary = {"role": "user", "parts": [{"text": "Summary: the user asked for a file."}]}
    transcript = load_lines(
        user("u1", "make a file"),
        model("g1", "done"),
        {"$set": {"messages": [summary, {"role": "model", "parts": [{"text": "Got it."}]}]}},
        user("u2", "next"),
    )
    (boundary,) = of(transcript, CompactionBoundary)
    assert boundary.summary is not None
    assert "Summary: the user asked" in boundary.summary
    assert [m.text for m in of(transcript, UserMessage)] == ["make a file", "next"]


def test_L2_21_5_gemini_legacy_model_messages_with_parts_are_assistant_messages() -> None:
    source, _ = open_source(MODEL_PARTS)
    assert gemini.detect(source).fits
    transcript = turnfold.load(MODEL_PARTS)
    assert transcript.metadata["source_format"] == "gemini"
    assert [m.text for m in of(transcript, AssistantText)] == ["2+2 is 4.", "3+3 is 6."]
    assert transcript.warnings == []


def test_L1_gemini_real_invoke_agent_nests_its_child_session() -> None:
    transcript = turnfold.load(SUBAGENT)
    agent = next(c for c in transcript.tool_calls() if c.name == "invoke_agent")
    assert agent.status == "success"
    assert agent.subagent is not None
    assert agent.subagent.transcript is not None
    assert (agent.subagent.name, agent.subagent.reason) == ("generalist", "GOAL")
    child = agent.subagent.transcript
    assert [(c.name, c.status) for c in child.tool_calls()] == [
        ("run_shell_command", "success"),
        ("complete_task", "success"),
    ]
    assert agent.subagent.tool_count == 2
    assert of(transcript, CompactionBoundary) == []
    # The child's records are accounted for in the parent's load too.
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["gemini"]["mapped"] > len(of(transcript, AssistantText))


@pytest.mark.parametrize(
    ("tokens", "output"),
    [
        # Gemini CLI's: thoughts apart from the output, the total adding both.
        ({"input": 100, "output": 20, "thoughts": 5, "total": 125}, 25),
        ({"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 5}, 25),
        # Qwen Code's through an OpenAI-compatible API: the total says the candidates hold them.
        (
            {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 5,
                "totalTokenCount": 120,
            },
            20,
        ),
    ],
)
def test_U1_gemini_usage_counts_thoughts_in_the_output_once(
    tokens: dict[str, int], output: int
) -> None:
    usage = usage_from(tokens)
    assert usage is not None
    assert (usage.output_tokens, usage.reasoning_tokens) == (output, 5)


# --- as a user sees a resumed session with a sub-agent (the real CLI's file) -----------------

SUBAGENT_SESSION = FIXTURES / "gemini" / "subagent" / "session-2026-12-01T21-33-66666666.jsonl"


def test_L1_gemini_resume_sync_keeps_each_message_s_first_recorded_time() -> None:
    # Gemini CLI 0.61's resume restates the history stamped with the resume's moment
    # (21:33:38.475); the first prompt was sent at 21:33:31.684, before its response.
    transcript = turnfold.load(SUBAGENT_SESSION)
    prompts = of(transcript, UserMessage)
    assert [(p.text, p.timestamp) for p in prompts] == [
        ("FIRST-PROMPT: run echo hi", "2026-12-01T21:33:31.684Z"),
        ("SECOND-PROMPT: anything else?", "2026-12-01T21:33:38.491Z"),
    ]
    notice = of(transcript, SystemNotice)[0]
    assert notice.subtype == "session_context"
    assert notice.timestamp == "2026-12-01T21:33:31.655Z"
    facts = session_facts(transcript)
    assert facts.started is not None
    assert facts.started.isoformat().startswith("2026-12-01T21:33:31.655")


def test_L1_gemini_subagent_lasts_until_its_last_entry_past_a_stale_last_update() -> None:
    # The child file's lastUpdated (21:33:32.723) stops at its first prompt; its calls ran on
    # until 21:33:33.003. The run started at 21:33:32.704.
    transcript = turnfold.load(SUBAGENT_SESSION)
    agent = next(c for c in of(transcript, ToolCall) if c.name == "invoke_agent")
    assert agent.subagent is not None
    assert agent.subagent.duration_ms == pytest.approx(299.0)
