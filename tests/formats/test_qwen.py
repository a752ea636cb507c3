"""Qwen Code chat records: the uuid/parentUuid tree and Gemini-style parts (spec L-1 … L-4)."""

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
    Transcript,
    TranscriptFormatError,
    UserMessage,
)
from turnfold.formats import qwen, which_format
from turnfold.formats.source import open_source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE = FIXTURES / "qwen-code_chatrecord.jsonl"
CLAUDE_FILES = sorted(FIXTURES.glob("claude-code_*.jsonl"))
T = "2026-08-01T10:00:{:02d}.000Z"


def jsonl(*records: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def rec(uuid: str, parent: str | None, kind: str, second: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "q-1",
        "timestamp": T.format(second),
        "type": kind,
        "cwd": "/repo",
        "version": "0.9.0",
        **extra,
    }


def user(uuid: str, parent: str | None, text: str, **extra: Any) -> dict[str, Any]:
    return rec(uuid, parent, "user", message={"role": "user", "parts": [{"text": text}]}, **extra)


def assistant(uuid: str, parent: str | None, *parts: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": "model", "parts": list(parts)}
    return rec(uuid, parent, "assistant", model="qwen3-coder", message=message, **extra)


def fcall(cid: str, name: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"functionCall": {"id": cid, "name": name, "args": args or {"path": "/repo/a.py"}}}


def result(
    uuid: str,
    parent: str,
    cid: str,
    response: Any = None,
    status: str | None = "success",
    **extra: Any,
) -> dict[str, Any]:
    response = {"output": "ok"} if response is None else response
    part = {"functionResponse": {"id": cid, "name": "read_file", "response": response}}
    outcome = {"callId": cid, **({"status": status} if status else {}), **extra}
    message = {"role": "user", "parts": [part]}
    return rec(uuid, parent, "tool_result", message=message, toolCallResult=outcome)


def system(uuid: str, parent: str | None, subtype: str, payload: Any) -> dict[str, Any]:
    return rec(uuid, parent, "system", subtype=subtype, systemPayload=payload)


def load(*records: Any) -> Transcript:
    return turnfold.load(jsonl(*records))


def texts(transcript: Transcript) -> list[str]:
    return [getattr(e, "text", type(e).__name__) for e in transcript.entries]


def of(transcript: Transcript, cls: type[Any]) -> list[Any]:
    return [e for e in transcript.entries if isinstance(e, cls)]


# --- the fixture: counts computed from the raw file -----------------------------------------------


def raw_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    parts = [p for r in records for p in (r.get("message") or {}).get("parts") or []]
    outcomes = [r.get("toolCallResult") or {} for r in records]
    return {
        "user prompts": sum(r["type"] == "user" and "subtype" not in r for r in records),
        "tool calls": sum("functionCall" in p for p in parts),
        "errors": sum(o.get("status") == "error" for o in outcomes),
        "cancellations": sum(o.get("status") == "cancelled" for o in outcomes),
        "thoughts": sum(p.get("thought") is True for p in parts),
        "notices": sum(r.get("subtype") == "notification" for r in records),
        "sub-agents": len({r["agentId"] for r in records if r.get("isSidechain")}),
    }


def loaded_counts(transcript: Transcript) -> dict[str, int]:
    calls = transcript.tool_calls()
    return {
        "user prompts": len(of(transcript, UserMessage)),
        "tool calls": len(calls),
        "errors": sum(c.status == "error" for c in calls),
        "cancellations": sum(c.status == "cancelled" for c in calls),
        "thoughts": len(of(transcript, Thinking)),
        "notices": len(of(transcript, SystemNotice)),
        "sub-agents": sum(c.subagent is not None for c in calls),
    }


def test_L2_qwen_fixture_loads_detected_and_explicit() -> None:
    detected = turnfold.load(FIXTURE)
    assert detected == turnfold.load(FIXTURE, format="qwen")
    assert detected.metadata == {
        "source_format": "qwen",
        "session_id": "019f0000-0000-7000-8000-000000000001",
        "cwd": "/tmp/as-qwen-fixture/project",
        "git_branch": "fixture-branch",
        "version": "0.21.13",
        "model": "synthetic-model",
    }
    assert detected.warnings == []


def test_L2_qwen_fixture_counts_match_the_raw_file() -> None:
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert loaded_counts(turnfold.load(FIXTURE)) == raw_counts(records)


def test_L2_qwen_fixture_round_trips_through_the_native_format() -> None:
    transcript = turnfold.load(FIXTURE)
    assert turnfold.load(transcript.dump()) == transcript


def test_L1_qwen_fixture_prompt_tool_and_answer() -> None:
    transcript = turnfold.load(FIXTURE)
    prompt = of(transcript, UserMessage)[0]
    assert prompt.text == "Inspect the synthetic fixture."  # displayText, not the hook context
    (read,) = transcript.tool_calls()
    assert (read.call_id, read.status, read.description) == (
        "synthetic-call-1",
        "success",
        "README.md",
    )
    assert read.batch_id == "019f0000-0000-7000-8000-000000000012"
    assert (read.started_at, read.ended_at) == (
        "2026-08-17T12:00:01.000Z",
        "2026-08-17T12:00:02.000Z",
    )
    assert read.result is not None
    assert read.result.text == "Synthetic file contents."


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: p.name)
def test_L2_qwen_does_not_claim_claude_code_records(path: Path) -> None:
    source, stream = open_source(path)
    try:
        assert which_format(source) != qwen.NAME
    finally:
        assert stream is not None
        stream.close()


# --- the tree -------------------------------------------------------------------------------------


def test_L2_qwen_two_children_of_one_parent_keep_only_the_active_branch() -> None:
    transcript = load(
        user("u1", None, "question"),
        assistant("a1", "u1", {"text": "first try"}),
        user("u2", "a1", "abandoned follow-up"),
        assistant("a2", "u2", {"text": "abandoned answer"}),
        system("rw", "a1", "rewind", {"truncatedCount": 2}),
        user("u3", "a1", "new follow-up"),
        assistant("a3", "u3", {"text": "new answer"}),
    )
    assert texts(transcript) == ["question", "first try", "new follow-up", "new answer"]
    assert transcript.warnings == []


def test_L2_qwen_the_last_record_per_uuid_wins() -> None:
    transcript = load(
        user("u1", None, "q"),
        assistant("a1", "u1", {"text": "streaming…", "thought": True}),
        assistant("a1", "u1", {"text": "thinking done", "thought": True}, {"text": "answer"}),
    )
    assert texts(transcript) == ["q", "thinking done", "answer"]


def test_L4_qwen_dangling_parent_is_a_root_with_a_warning_and_keeps_earlier_entries() -> None:
    transcript = load(
        user("u1", None, "before"),
        assistant("a1", "u1", {"text": "answer"}),
        user("u2", "lost-record", "after"),
        assistant("a2", "u2", {"text": "second answer"}),
    )
    assert texts(transcript) == ["before", "answer", "after", "second answer"]
    assert [(w.line, "lost-record" in w.reason) for w in transcript.warnings] == [(3, True)]


def test_L4_qwen_dangling_parent_on_the_first_record() -> None:
    transcript = load(
        user("u1", "from-another-session", "hi"), assistant("a1", "u1", {"text": "yo"})
    )
    assert texts(transcript) == ["hi", "yo"]
    assert len(transcript.warnings) == 1


@pytest.mark.parametrize("as_file", [True, False], ids=["file", "text"])
def test_L4_qwen_glued_records_are_split(tmp_path: Path, as_file: bool) -> None:
    glued = json.dumps(assistant("a1", "u1", {"text": "one"})) + json.dumps(user("u2", "a1", "two"))
    text = jsonl(user("u1", None, "zero")) + glued + "\n"
    text += jsonl(assistant("a2", "u2", {"text": "three"}))
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    transcript = turnfold.load(path if as_file else text)
    assert texts(transcript) == ["zero", "one", "two", "three"]
    assert transcript.warnings == []


def test_L4_qwen_a_lost_line_keeps_the_records_on_both_sides() -> None:
    text = jsonl(user("u1", None, "zero")) + '{"uuid": "a1", "parentUuid": "u1", "type": "assi\n'
    text += jsonl(user("u2", "a1", "two"), assistant("a2", "u2", {"text": "three"}))
    transcript = turnfold.load(text)
    assert texts(transcript) == ["zero", "two", "three"]
    assert [w.line for w in transcript.warnings] == [2, 3]  # the broken line; the lost parent


def test_L4_qwen_truncated_last_line_unknown_types_and_orphan_results_warn() -> None:
    text = jsonl(
        user("u1", None, "q"),
        rec("x1", "u1", "mystery"),
        result("r1", "x1", "no-such-call"),
        system("t1", "r1", "ui_telemetry", {"uiEvent": {"big": "x" * 1000}}),
        system("t2", "t1", "attribution_snapshot", {"snapshot": {}}),
        assistant("a1", "t2", {"text": "a"}),
    )
    transcript = turnfold.load(text + '{"uuid": "a2", "parentUuid": "a1", "ty')
    assert texts(transcript) == ["q", "ToolCall", "a"]  # the orphan result: its own call
    assert sorted(w.line or 0 for w in transcript.warnings) == [2, 3, 7]


def test_L4_qwen_a_result_whose_call_the_file_lost_is_a_call_of_its_own() -> None:
    # A real Qwen Code 0.12.6 file began mid-turn (its first lines lost): tool results of
    # calls it does not hold, then the model's next response. Their output is shown.
    transcript = load(
        result("r1", "gone", "call_bdd5", {"output": "Command: du -sh .\nOutput: 12G ."}),
        result("r2", "r1", "call_76f1", {"error": "rm: cannot remove"}, status="error"),
        assistant("a1", "r2", {"text": "The disk is still full."}),
    )
    first, second = transcript.tool_calls()
    assert (first.call_id, first.name, first.args, first.status) == (
        "call_bdd5", "read_file", None, "success",
    )  # fmt: skip
    assert first.result is not None
    assert first.result.text == "Command: du -sh .\nOutput: 12G ."
    assert first.meta["call_missing"] is True
    assert second.status == "error"
    assert [w.reason for w in transcript.warnings][1:] == [
        f"tool result for call id {cid!r}, whose call is not in the file, shown as a call of "
        "its own"
        for cid in ("call_bdd5", "call_76f1")
    ]
    assert texts(transcript)[-1] == "The disk is still full."


def test_L4_qwen_empty_source_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(TranscriptFormatError):
        turnfold.load(path, format="qwen")


def test_L4_qwen_a_claude_code_file_is_a_clear_format_error() -> None:
    with pytest.raises(TranscriptFormatError, match="no Qwen Code chat record") as caught:
        turnfold.load(CLAUDE_FILES[0], format="qwen")
    assert caught.value.tried == ("qwen",)


# --- records --------------------------------------------------------------------------------------


def test_L1_qwen_thought_parts_text_and_usage() -> None:
    usage = {"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 5}
    transcript = load(
        user("u1", None, "q"),
        assistant(
            "a1",
            "u1",
            {"text": "Let me ", "thought": True},
            {"text": "think.", "thought": True},
            {"text": "The answer", "thoughtSignature": "opaque"},
            {"text": " is 4."},
            usageMetadata=usage,
        ),
    )
    thinking, answer = transcript.entries[1:]
    assert thinking == Thinking(
        id=thinking.id, timestamp=T.format(0), text="Let me think.", form="text"
    )
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.model) == ("The answer is 4.", "qwen3-coder")
    assert answer.usage is not None
    assert (
        answer.usage.input_tokens,
        answer.usage.output_tokens,
        answer.usage.reasoning_tokens,
    ) == (100, 25, 5)  # output 20 plus 5 thoughts, which Gemini's counts keep apart


@pytest.mark.parametrize(
    ("response", "status", "expected_status", "expected_text"),
    [
        ({"output": "fine"}, "success", "success", "fine"),
        ({"error": "boom"}, "error", "error", "boom"),
        ({"output": "partial"}, "cancelled", "cancelled", "partial"),
        ({"output": "fine"}, None, "unknown", "fine"),
        ({"error": "boom"}, None, "error", "boom"),
    ],
)
def test_L3_qwen_tool_result_pairs_by_id_with_the_recorded_status(
    response: Any, status: str | None, expected_status: str, expected_text: str
) -> None:
    transcript = load(
        user("u1", None, "q"),
        assistant("a1", "u1", fcall("c1"), fcall("c2")),
        result("r1", "a1", "c1", response, status),
    )
    first, second = transcript.tool_calls()
    assert first.status == expected_status
    assert first.result is not None
    assert first.result.text == expected_text
    assert (second.status, second.result) == ("unknown", None)
    assert first.batch_id == second.batch_id == "a1"


def test_L1_qwen_result_displays_decide_the_kind() -> None:
    diff = {
        "fileDiff": "@@ -1 +1 @@\n-a\n+b\n",
        "fileName": "a.py",
        "originalContent": "a",
        "newContent": "b",
    }
    todos = {"type": "todo_list", "todos": [{"id": "1", "content": "x", "status": "pending"}]}
    plan = {"type": "plan_summary", "message": "Plan approved", "plan": "1. do it"}
    transcript = load(
        user("u1", None, "q"),
        assistant(
            "a1", "u1", fcall("e", "edit"), fcall("t", "todo_write"), fcall("p", "exit_plan_mode")
        ),
        result("r1", "a1", "e", resultDisplay=diff),
        result("r2", "r1", "t", resultDisplay=todos),
        result("r3", "r2", "p", resultDisplay=plan),
    )
    edit, todo, plan_call = transcript.tool_calls()
    assert edit.result is not None
    assert (edit.result.kind, edit.result.text) == ("diff", diff["fileDiff"])
    assert todo.result is not None
    assert (todo.result.kind, todo.result.structured) == ("todo", todos["todos"])
    assert plan_call.result is not None
    assert (plan_call.result.kind, plan_call.result.text) == ("plan", "1. do it")


def test_L1_qwen_system_records() -> None:
    compression = {
        "info": {"originalTokenCount": 9000, "newTokenCount": 800, "compressionStatus": 1},
        "compressedHistory": [{"role": "user", "parts": [{"text": "summary of it all"}]}],
    }
    transcript = load(
        system("s0", None, "custom_title", {"customTitle": "Fix the build"}),
        system("s1", "s0", "slash_command", {"phase": "invocation", "rawCommand": "/compress now"}),
        user("u1", "s1", "/compress now"),
        system("s2", "u1", "chat_compression", compression),
        system(
            "s3",
            "s2",
            "slash_command",
            {
                "phase": "result",
                "rawCommand": "/compress",
                "outputHistoryItems": [{"type": "info", "text": "Compressed."}],
            },
        ),
        user("u2", "s3", "next question"),
        system("s4", "u2", "turn_result", {"promptId": "p", "state": "cancelled", "endedAt": 1}),
        user("u3", "s4", "again", subtype="mid_turn_user_message"),
        system(
            "s5",
            "u3",
            "turn_result",
            {"promptId": "p", "state": "error", "endedAt": 2, "error": {"message": "429"}},
        ),
        system("s6", "s5", "notification", {"displayText": "Background task finished"}),
    )
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage",
        "CompactionBoundary",
        "SystemNotice",
        "UserMessage",
        "AbortMarker",
        "UserMessage",
        "AssistantError",
        "SystemNotice",
    ]
    command = of(transcript, UserMessage)[0]
    assert (command.text, command.command) == ("now", "/compress")  # shown "/compress now"
    boundary = of(transcript, CompactionBoundary)[0]
    assert (boundary.summary, boundary.pre_tokens) == ("summary of it all", 9000)
    assert of(transcript, AbortMarker)[0].reason is None
    assert of(transcript, AssistantError)[0].message == "429"
    assert transcript.metadata["title"] == "Fix the build"
    assert transcript.warnings == []


def test_P7_qwen_a_turn_ending_on_a_cancelled_call_is_stopped() -> None:
    """Qwen Code 0.24.4 ``-p``, SIGINT while a command ran (tests/agents' interrupt scenario):
    the cancelled result is the file's last record, no ``turn_result``. The turn stopped; it
    read as completed, without an answer."""
    from turnfold.process import Turn, project

    transcript = turnfold.load(FIXTURES / "qwen" / "qwen-code_v0.24.4_interrupted-command.jsonl")
    [call] = transcript.tool_calls()
    assert (call.args["command"], call.status) == ("echo TF-SLOW-START; sleep 45", "cancelled")
    assert isinstance(transcript.entries[-1], AbortMarker)
    assert transcript.entries[-1].timestamp == call.ended_at
    [turn] = [node for node in project(transcript) if isinstance(node, Turn)]
    assert turn.header.status == "stopped"
    assert transcript.warnings == []
    # What it printed before the cancel (its resultDisplay; the model was told its output was
    # discarded) is kept, before the cancel's text (F-10).
    assert call.result is not None
    assert call.result.text.startswith("TF-SLOW-START\n\n[Operation Cancelled]")


def test_P7_qwen_a_cancelled_call_and_its_turn_result_are_one_stop() -> None:
    # Interactive mode writes turn_result after the cancelled call: one marker, its own.
    transcript = load(
        user("u1", None, "run it"),
        assistant("a1", "u1", fcall("c1", "run_shell_command", command="sleep 9")),
        result("r1", "a1", "c1", {"error": "cancelled"}, status="cancelled"),
        system("s1", "r1", "turn_result", {"promptId": "p", "state": "cancelled", "endedAt": 1}),
        user("u2", "s1", "never mind"),
        assistant("a2", "u2", fcall("c2", "run_shell_command", command="sleep 9")),
        result("r2", "a2", "c2", {"error": "cancelled"}, status="cancelled"),
        user("u3", "r2", "stop"),
    )
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage", "ToolCall", "AbortMarker",
        "UserMessage", "ToolCall", "AbortMarker",
        "UserMessage",
    ]  # fmt: skip
    assert [m.reason for m in of(transcript, AbortMarker)] == [None, "cancelled"]


def test_Q1_qwen_ten_megabyte_tool_result_loads() -> None:
    big = "y" * (10 * 1024 * 1024)
    transcript = load(
        user("u1", None, "q"),
        assistant("a1", "u1", fcall("c1")),
        result("r1", "a1", "c1", {"output": big}),
    )
    (call,) = transcript.tool_calls()
    assert call.result is not None
    assert call.result.text == big


# --- sidechains (sub-agents) ----------------------------------------------------------------------


def side(record: dict[str, Any], agent: str = "explore-1", name: str = "Explore") -> dict[str, Any]:
    return {**record, "isSidechain": True, "agentId": agent, "agentName": name}


def agent_display(name: str, tools: int) -> dict[str, Any]:
    return {
        "type": "task_execution",
        "subagentName": name,
        "taskDescription": "Explore the repo",
        "taskPrompt": "long prompt",
        "status": "completed",
        "terminateReason": "GOAL",
        "result": "found it",
        "executionSummary": {"totalToolCalls": tools, "totalDurationMs": 1500, "outputTokens": 42},
        "toolCalls": [{"callId": "k1", "name": "read_file", "status": "success"}],
    }


def test_L1_qwen_sidechain_nests_under_the_task_call() -> None:
    task = fcall("t1", "task", description="Explore the repo", prompt="go", subagent_type="Explore")
    transcript = load(
        user("u1", None, "explore"),
        assistant("a1", "u1", task),
        side(user("s1", None, "go")),
        side(assistant("s2", "s1", fcall("k1"))),
        side(result("s3", "s2", "k1")),
        side(assistant("s4", "s3", {"text": "found it"})),
        result("r1", "a1", "t1", {"output": "found it"}, resultDisplay=agent_display("Explore", 1)),
        assistant("a2", "r1", {"text": "Done."}),
    )
    assert texts(transcript)[0] == "explore"
    assert texts(transcript)[-1] == "Done."
    (call,) = transcript.tool_calls()
    agent = call.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert (agent.name, agent.task, agent.agent_id, agent.reason) == (
        "Explore",
        "Explore the repo",
        "explore-1",
        "GOAL",
    )
    assert (agent.tool_count, agent.duration_ms, agent.output_tokens) == (1, 1500.0, 42)
    assert texts(agent.transcript)[0] == "go"
    assert agent.transcript.tool_calls()[0].status == "success"
    assert call.result is not None
    assert call.result.kind == "subagent"
    assert "toolCalls" not in call.result.structured
    assert transcript.warnings == []
    assert turnfold.load(transcript.dump()) == transcript


def test_L1_qwen_parallel_sidechains_link_by_agent_name() -> None:
    transcript = load(
        user("u1", None, "two agents"),
        assistant(
            "a1",
            "u1",
            fcall("t1", "task", description="review", subagent_type="Reviewer"),
            fcall("t2", "task", description="explore", subagent_type="Explore"),
        ),
        side(user("e1", None, "explore it"), "explore-1", "Explore"),
        side(user("v1", None, "review it"), "review-1", "Reviewer"),
    )
    reviewer, explorer = transcript.tool_calls()
    assert reviewer.subagent is not None
    assert reviewer.subagent.transcript is not None
    assert texts(reviewer.subagent.transcript) == ["review it"]
    assert explorer.subagent is not None
    assert explorer.subagent.transcript is not None
    assert texts(explorer.subagent.transcript) == ["explore it"]
    assert (explorer.subagent.tool_count, explorer.subagent.output_tokens) == (0, None)


def test_L4_qwen_unlinked_sidechain_is_kept_with_a_warning() -> None:
    transcript = load(
        user("u1", None, "q"),
        side(user("s1", None, "orphan work")),
        assistant("a1", "u1", {"text": "a"}),
    )
    assert texts(transcript)[:2] == ["q", "a"]
    synthetic = transcript.tool_calls()[-1]
    assert synthetic.meta == {"synthetic": "unlinked sidechain"}
    assert synthetic.subagent is not None
    assert synthetic.subagent.transcript is not None
    assert texts(synthetic.subagent.transcript) == ["orphan work"]
    assert len(transcript.warnings) == 1


# --- any input: entries or warnings, never a crash (L-4) ------------------------------------------

KEYS = [
    "uuid", "parentUuid", "type", "subtype", "message", "role", "parts", "text", "thought",
    "functionCall", "functionResponse", "id", "name", "args", "response", "output", "error",
    "toolCallResult", "callId", "status", "resultDisplay", "systemPayload", "displayText",
    "isSidechain", "agentId", "agentName", "usageMetadata", "model", "timestamp", "inlineData",
    "phase", "rawCommand", "info", "compressedHistory", "state",
]  # fmt: skip
LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=4)
    | st.sampled_from(
        [
            "a",
            "b",
            "c",
            "user",
            "assistant",
            "tool_result",
            "system",
            "success",
            "cancelled",
            "task",
        ]
    )
)
JSON = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=12,
)
RECORD = st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6) | st.fixed_dictionaries(
    {
        "uuid": st.sampled_from(["a", "b", "c", "d"]),
        "parentUuid": st.sampled_from([None, "a", "b", "c", "gone"]),
        "type": st.sampled_from(["user", "assistant", "tool_result", "system"]),
    },
    optional=dict.fromkeys(
        ("message", "toolCallResult", "systemPayload", "subtype", "isSidechain"), JSON
    ),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(RECORD | JSON, max_size=8))
def test_L4_qwen_any_records_load_or_raise_a_format_error(records: list[Any]) -> None:
    try:
        transcript = turnfold.load(jsonl(user("u0", None, "hi"), *records), format="qwen")
    except TranscriptFormatError:
        return
    assert turnfold.load(transcript.dump()) == transcript


# --- long sessions (their speed is measured by benchmarks/, never asserted in tests) --------------


def big_session(turns: int) -> str:
    records: list[Any] = []
    parent: str | None = None

    def add(record: dict[str, Any]) -> None:
        nonlocal parent
        records.append(record)
        parent = record["uuid"]

    for i in range(turns):
        add(user(f"u{i}", parent, f"step {i}", systemPayload={"displayText": f"step {i}"}))
        calls = [fcall(f"c{i}-{k}", path=f"/repo/f{k}.py") for k in range(3)]
        add(assistant(f"a{i}", parent, {"text": "thinking " * 20, "thought": True}, *calls))
        for k in range(3):
            output = f"line {k}\n" * (40 + 90 * k)
            add(result(f"r{i}-{k}", str(parent), f"c{i}-{k}", {"output": output}))
        add(system(f"t{i}", parent, "ui_telemetry", {"uiEvent": {"x": "z" * 1500}}))
        add(assistant(f"b{i}", parent, {"text": f"Done with step {i}."}))
    return jsonl(*records)


def test_qwen_a_long_session_loads_completely() -> None:
    transcript = turnfold.load(big_session(200))
    assert len(transcript.tool_calls()) == 600
    assert all(c.status == "success" for c in transcript.tool_calls())
    assert sum(isinstance(e, UserMessage) for e in transcript) == 200


def test_L1_qwen_nested_sidechain_nests_under_the_sub_agents_own_call() -> None:
    transcript = load(
        user("u1", None, "go deep"),
        assistant("a1", "u1", fcall("t1", "task", subagent_type="Planner")),
        side(user("p1", None, "plan it"), "planner-1", "Planner"),
        side(
            assistant("p2", "p1", fcall("t2", "task", subagent_type="Explore")),
            "planner-1",
            "Planner",
        ),
        side(user("e1", None, "explore for the planner"), "explore-1", "Explore"),
    )
    (outer,) = transcript.tool_calls()
    assert outer.subagent is not None
    assert outer.subagent.transcript is not None
    (inner,) = outer.subagent.transcript.tool_calls()
    assert inner.subagent is not None
    assert inner.subagent.transcript is not None
    assert texts(inner.subagent.transcript) == ["explore for the planner"]
    assert transcript.warnings == []
    assert turnfold.load(transcript.dump()) == transcript


def test_L4_qwen_a_gemini_file_is_a_clear_format_error() -> None:
    with pytest.raises(TranscriptFormatError, match="no Qwen Code chat record"):
        turnfold.load(FIXTURES / "gemini-cli_legacy-json_file-ops.json", format="qwen")


# --- accounting, parent links, failures stated in the output, real CLI files (issues 11, 23) ----

OWN = FIXTURES / "qwen"
NO_PARENTS = OWN / "qwen-code_no-parent-links.jsonl"
FAILED_AS_SUCCESS = OWN / "qwen-code_v0.15_failed-shell-recorded-as-success.jsonl"
BACKGROUND = OWN / "background-agent" / "chats" / "62c225bc-6b43-451c-baad-3eaede03a4f2.jsonl"


def test_L2_11_4_qwen_records_without_parent_links_are_kept_in_file_order() -> None:
    transcript = turnfold.load(NO_PARENTS)
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage",
        "Thinking",
        "ToolCall",
        "AssistantText",
    ]
    assert transcript.tool_calls()[0].status == "success"
    assert transcript.warnings == []


def test_L2_11_4_qwen_a_record_without_a_parent_link_follows_the_one_before_it() -> None:
    linked = user("u1", None, "first")
    unlinked = assistant("a1", None, {"text": "reply"})
    del unlinked["parentUuid"]
    transcript = load(linked, unlinked, assistant("a2", "a1", {"text": "more"}))
    assert texts(transcript) == ["first", "reply", "more"]
    # An explicit null is still a root: the branch before it is not walked.
    assert texts(load(user("u1", None, "old"), user("u2", None, "new"))) == ["new"]


@pytest.mark.parametrize(
    ("output", "recorded", "expected"),
    [
        ("Command: ls x\nOutput: ls: x: missing\nError: (none)\nExit Code: 2", "success", "error"),
        ("Command: echo hi\nOutput: hi\nError: (none)\nExit Code: 0", "success", "success"),
        ("Command: echo hi\nOutput: hi\nError: (none)\nExit Code: 0", None, "success"),
        ("Command timed out after 120s", "success", "error"),
        ("ok", None, "unknown"),
        ("Exit Code: 1", "cancelled", "cancelled"),
    ],
)
def test_L3_23_qwen_a_result_whose_text_states_a_failure_is_an_error(
    output: str, recorded: str | None, expected: str
) -> None:
    transcript = load(
        assistant("a1", None, fcall("c1", "run_shell_command", command="ls x")),
        result("r1", "a1", "c1", {"output": output}, status=recorded),
    )
    assert transcript.tool_calls()[0].status == expected


def test_L3_23_qwen_shell_result_display_states_its_exit_code() -> None:
    display = {"type": "shell_result", "exitCode": 2, "outcome": "failed", "output": "boom"}
    transcript = load(
        assistant("a1", None, fcall("c1", "run_shell_command", command="x")),
        rec("r1", "a1", "tool_result", toolCallResult={"callId": "c1", "resultDisplay": display}),
    )
    assert transcript.tool_calls()[0].status == "error"


def test_L3_23_qwen_failed_shell_recorded_as_success_is_an_error() -> None:
    transcript = turnfold.load(FAILED_AS_SUCCESS)
    assert [c.status for c in transcript.tool_calls()] == ["success", "error"]


def test_L1_qwen_real_background_agent_file_nests_under_its_call() -> None:
    transcript = turnfold.load(BACKGROUND)
    shell_ok, shell_failed, agent = transcript.tool_calls()
    assert (shell_ok.status, shell_failed.status, agent.status) == ("success", "error", "success")
    assert agent.subagent is not None
    assert agent.subagent.transcript is not None
    assert agent.subagent.name == "general-purpose"
    child = agent.subagent.transcript
    assert [(c.name, c.status) for c in child.tool_calls()] == [("run_shell_command", "success")]
    assert [e.text for e in of(child, AssistantText)] == ["subagent done: from-subagent"]
    assert transcript.warnings == []
    # The injected reminder before the second prompt is not what the user typed.
    assert of(transcript, UserMessage)[-1].text == "SECOND-PROMPT: anything else?"
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["tool_result"] == {"mapped": 4}  # 3 of the session, 1 of the agent


def test_X2_qwen_every_record_type_is_mapped_ignored_or_warned() -> None:
    transcript = load(
        user("u1", None, "hi"),
        system("s1", "u1", "ui_telemetry", {"uiEvent": {}}),
        system("s2", "s1", "custom_title", {"customTitle": "T"}),
        system("s3", "s2", "brand_new_subtype", {}),
        rec("x1", "s3", "mystery"),
        assistant("a1", "x1", {"text": "yo"}),
    )
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts == {
        "user": {"mapped": 1},
        "system/ui_telemetry": {"ignored": 1},
        "system/custom_title": {"mapped": 1},
        "system/brand_new_subtype": {"warned": 1},
        "mystery": {"warned": 1},
        "assistant": {"mapped": 1},
    }
    assert any("brand_new_subtype" in w.reason for w in transcript.warnings)
    assert accounting.types("ignored") <= set(qwen.RECORDS.ignored)


# --- records whose uuid is no id: trimmed, missing, a shared placeholder (L-4) ----------------


def _session(**uuids: str | None) -> list[dict[str, Any]]:
    """A prompt, a call, its result and an answer, linked by uuid; ``uuids`` replaces ids."""
    records = [
        user("u1", None, "read a.py"),
        assistant("a1", "u1", fcall("c1")),
        result("r1", "a1", "c1"),
        assistant("a2", "r1", {"text": "a.py is empty."}),
    ]
    for record in records:
        if record["uuid"] in uuids:
            replacement = uuids[record["uuid"]]
            if replacement is None:
                del record["uuid"]
            else:
                record["uuid"] = replacement
    return records


def _shown(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


@pytest.mark.parametrize(
    "uuids",
    [
        pytest.param({"u1": None, "a1": None, "r1": None, "a2": None}, id="missing"),
        pytest.param({"u1": "", "a1": "", "r1": "", "a2": ""}, id="empty"),
        # Trimmed to one placeholder: every record would fold into the last one.
        pytest.param(dict.fromkeys(("u1", "a1", "r1", "a2"), "[trimmed]"), id="placeholder"),
    ],
)
def test_L4_qwen_records_without_usable_uuids_are_read_in_file_order(
    tmp_path: Path, uuids: dict[str, str | None]
) -> None:
    path = tmp_path / "chat.jsonl"
    records = _session(**uuids)
    if uuids["u1"] == "[trimmed]":
        for record in records[1:]:
            record["parentUuid"] = "[trimmed]"
    path.write_text(jsonl(*records), encoding="utf-8")
    transcript = turnfold.load(path)  # detected, not only read when asked for
    assert transcript.metadata["source_format"] == "qwen"
    assert _shown(transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    assert transcript.tool_calls()[0].status == "success"
    # One warning that says what is wrong, naming the file and the first line.
    [warning] = transcript.warnings
    assert (warning.source, warning.line) == (str(path), 1 if uuids["u1"] != "[trimmed]" else 2)
    assert "no usable uuid" in warning.reason
    assert "read in file order" in warning.reason
    assert "nothing to show" not in str(warning)


def test_L4_qwen_some_records_without_a_uuid_keep_their_place() -> None:
    transcript = load(*_session(a1=None, r1=None))
    assert _shown(transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    assert [w.line for w in transcript.warnings] == [2, 4]  # the two id-less; a2's lost parent


def test_L2_qwen_a_record_rewritten_under_its_uuid_still_replaces_it() -> None:
    """The rule the placeholder test must not break: a streamed record re-written whole."""
    first = assistant("a1", "u1", {"text": "partial", "thought": True})
    final = assistant("a1", "u1", {"text": "whole thought", "thought": True}, {"text": "Hi."})
    transcript = load(user("u1", None, "hello"), first, final)
    assert texts(transcript) == ["hello", "whole thought", "Hi."]
    assert transcript.warnings == []


def test_L4_qwen_the_user_s_records_are_not_modified() -> None:
    records = _session(u1=None, a1="")
    before = json.dumps(records)
    turnfold.load(records, format="qwen")
    assert json.dumps(records) == before
