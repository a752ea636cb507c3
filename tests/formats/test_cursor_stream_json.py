"""cursor-agent's ``--output-format stream-json`` (spec H-5, H-6, L-3, X-2): read by the Cursor
loader, with the results its agent transcripts lack. It was "not a transcript" at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import AssistantError, AssistantText, SystemNotice, Thinking, UserMessage
from turnfold.formats import which_format
from turnfold.formats.source import from_object

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "cursor-stream-json"
PARALLEL = FIXTURES / "cursor-agent_2026-02_stream-json_parallel-shell-calls.jsonl"
THINKING = FIXTURES / "cursor-agent_2026-02_stream-json_thinking-deltas.jsonl"
SESSION = "fcc7566c-1234-5678-90ab-cdef12345678"


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def init() -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "apiKeySource": "login",
        "cwd": "/w",
        "session_id": SESSION,
        "model": "Composer 2.5 Fast",
        "permissionMode": "default",
    }


def said(role: str, text: str, **more: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {
        "type": role,
        "message": {"role": role, "content": content},
        "session_id": SESSION,
        **more,
    }


def tool(subtype: str, call_id: str, kind: str, args: Any, result: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"args": args}
    if result is not None:
        body["result"] = result
    return {
        "type": "tool_call",
        "subtype": subtype,
        "call_id": call_id,
        "tool_call": {kind: body},
        "model_call_id": "m-0-x",
        "session_id": SESSION,
        "timestamp_ms": 1770823976204,
    }


def result(**more: Any) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": "success",
        "duration_ms": 2404,
        "is_error": False,
        "result": "done",
        "session_id": SESSION,
        "request_id": "r1",
        **more,
    }


def test_H5_a_real_cursor_agent_stream_is_read_with_its_results() -> None:
    transcript = turnfold.load(PARALLEL)
    meta = transcript.metadata
    assert meta["source_format"] == "cursor-stream-json"
    assert (meta["agent"], meta["model"], meta["cwd"]) == ("cursor", "Auto", "/home/user/project")
    assert meta["session_id"] == "1e273e42-21dd-4b5e-9c2a-1cbbde35ae1c"
    assert (meta["outcome"], meta["duration_ms"]) == ("pass", 13039)
    [prompt] = [e for e in transcript if isinstance(e, UserMessage)]
    assert prompt.text.startswith("Run these two bash commands in parallel")
    calls = transcript.tool_calls()
    assert [(c.name, c.description, c.status) for c in calls] == [
        ("Shell", "sleep 6", "success"),
        ("Shell", "sleep 4", "success"),
    ]
    assert calls[0].call_id.startswith("call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_")  # kept verbatim
    assert calls[0].batch_id == calls[1].batch_id  # one model call's parallel calls
    assert calls[0].started_at is not None
    assert calls[0].ended_at is not None
    assert [e.text for e in transcript if isinstance(e, AssistantText)][-1] == "done"
    assert not [e for e in transcript if isinstance(e, SystemNotice)]  # results are recorded
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "system/init": {"mapped": 1},
        "user": {"mapped": 1},
        "assistant": {"mapped": 2},
        "tool_call/started": {"mapped": 2},
        "tool_call/completed": {"mapped": 2},
        "result": {"mapped": 1},
    }


def test_U3_cursor_agent_texts_and_calls_keep_their_event_times() -> None:
    # The assistant and tool_call events carry timestamp_ms: the session starts at the first
    # text (15:32:56.204Z), and the turn spans it to the last call's end (15:33:02.401Z), not
    # only the 1.9 s between the two calls' ends.
    from turnfold.process import Turn, project
    from turnfold.session import session_facts

    transcript = turnfold.load(PARALLEL)
    texts = [e for e in transcript if isinstance(e, AssistantText)]
    assert texts[0].timestamp == "2026-02-11T15:32:56.204000+00:00"
    assert texts[-1].timestamp is None  # the "done" event has no timestamp_ms
    calls = transcript.tool_calls()
    assert [c.timestamp for c in calls] == [c.started_at for c in calls]
    assert calls[1].timestamp == "2026-02-11T15:32:56.330000+00:00"
    facts = session_facts(transcript)
    assert facts.started is not None
    assert facts.started.isoformat() == texts[0].timestamp
    assert facts.ended is not None
    assert facts.ended.isoformat() == calls[0].ended_at
    [turn] = [node for node in project(transcript) if isinstance(node, Turn)]
    assert turn.header.duration_ms == pytest.approx(6197)


def test_H5_cursor_agent_thinking_deltas_are_one_thought() -> None:
    transcript = turnfold.load(THINKING)
    [thought] = [e for e in transcript if isinstance(e, Thinking)]
    assert thought.text.startswith("**Following developer instructions**\n\nI need to adhere")
    assert thought.timestamp is not None
    kinds = [type(e).__name__ for e in transcript]
    assert kinds[:3] == ["UserMessage", "Thinking", "AssistantText"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["thinking/delta"] == {"mapped": 82}
    assert transcript.accounting.counts["thinking/completed"] == {"ignored": 1}


def test_L3_cursor_agent_call_outcomes() -> None:
    shell = {"command": "false", "workingDirectory": ""}
    failed = {
        "success": {
            "command": "false",
            "exitCode": 1,
            "stdout": "",
            "stderr": "boom",
            "interleavedOutput": "boom\n",
        }
    }
    refused = {
        "rejected": {"command": "rm x", "workingDirectory": "", "reason": "", "isReadonly": False}
    }
    mcp_args = {
        "name": "vortex-tool_search",
        "args": {"query": "cortex"},
        "toolName": "tool_search",
        "providerIdentifier": "vortex",
    }
    mcp_ok = {"success": {"content": [{"text": {"text": "ok"}}], "isError": False}}
    write = {"path": "a.txt", "fileText": "hi", "toolCallId": "c4"}
    written = {"success": {"path": "/w/a.txt", "linesCreated": 1, "fileSize": 2}}
    transcript = turnfold.load(
        jsonl(
            init(),
            said("user", "go"),
            tool("started", "c1", "shellToolCall", shell),
            tool("completed", "c1", "shellToolCall", shell, failed),
            tool("started", "c2", "shellToolCall", {"command": "rm x"}),
            tool("completed", "c2", "shellToolCall", {"command": "rm x"}, refused),
            tool("started", "c3", "mcpToolCall", mcp_args),
            tool("completed", "c3", "mcpToolCall", mcp_args, mcp_ok),
            tool("started", "c4", "writeToolCall", write),
            tool("completed", "c4", "writeToolCall", write, written),
            tool("started", "c5", "globToolCall", {"globPattern": "*.py"}),
            result(),
        )
    )
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("Shell", "error"),  # exit code 1
        ("Shell", "error"),  # refused by the permission rules
        ("tool_search", "success"),
        ("Write", "success"),
        ("Glob", "unknown"),  # never completed
    ]
    texts = [c.result.text if c.result else None for c in calls]
    assert texts[:3] == ["boom\n", "Rejected: the tool did not run.", "ok"]
    assert json.loads(texts[3] or "") == written["success"]
    assert texts[4] is None


def test_H6_cursor_agent_result_error_and_usage() -> None:
    usage = {
        "inputTokens": 14125,
        "outputTokens": 111,
        "cacheReadTokens": 28224,
        "cacheWriteTokens": 0,
    }
    transcript = turnfold.load(
        jsonl(
            init(),
            said("user", "go"),
            said("assistant", "working"),
            result(is_error=True, result="boom", usage=usage),
        )
    )
    meta = transcript.metadata
    assert meta["outcome"] == "error"
    [error] = [e for e in transcript if isinstance(e, AssistantError)]
    assert error.message == "boom"
    # Cursor counts the cached input apart: turnfold's input count holds it.
    assert meta["usage"] == {
        "input_tokens": 42349,
        "output_tokens": 111,
        "cache_read_tokens": 28224,
        "cache_write_tokens": 0,
    }
    [text] = [e for e in transcript if isinstance(e, AssistantText)]
    assert text.usage is not None
    assert text.usage.input_tokens == 42349


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["Hel", "lo", "Hello"], "Hello"),  # partial pieces, then the whole text once more
        (["Hel", "lo"], "Hello"),  # partial pieces only
        (["Hello"], "Hello"),
    ],
)
def test_H5_cursor_agent_partial_output_is_one_text(pieces: list[str], expected: str) -> None:
    events = [said("assistant", p, timestamp_ms=1770823976204) for p in pieces]
    transcript = turnfold.load(jsonl(init(), said("user", "go"), *events, result()))
    assert [e.text for e in transcript if isinstance(e, AssistantText)] == [expected]


def test_L4_cursor_agent_odd_events_are_warned_and_accounted() -> None:
    transcript = turnfold.load(
        jsonl(
            init(),
            said("user", "go"),
            tool("completed", "nope", "readToolCall", {"path": "a"}, {"success": {"content": "x"}}),
            {
                "type": "tool_call",
                "subtype": "progress",
                "call_id": "c9",
                "tool_call": {},
                "session_id": SESSION,
            },
            result(),
        )
    )
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (3, "tool_call completed for an unknown call_id 'nope'"),
        (4, "unknown cursor-agent stream-json event 'tool_call/progress' skipped"),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts["tool_call/progress"] == {"warned": 1}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([init(), said("user", "hi"), said("assistant", "yo"), result()], "cursor-stream-json"),
        (
            [
                {**init(), "tools": ["Bash"], "claude_code_version": "2.1.0", "uuid": "u0"},
                {**said("assistant", "yo"), "parent_tool_use_id": None, "uuid": "u1"},
                {**result(), "total_cost_usd": 0.01, "uuid": "u2"},
            ],
            "claude-stream-json",
        ),
    ],
    ids=["cursor-agent", "claude-code"],
)
def test_L2_cursor_agent_stream_detection(value: list[Any], expected: str) -> None:
    assert which_format(from_object(value)) == expected


def test_L4_an_event_warned_of_is_accounted_for_once_under_its_record_type() -> None:
    unknown = {"type": "tool_call", "subtype": "completed", "call_id": "nope",
               "tool_call": {"shellToolCall": {"args": {}, "result": {}}}}  # fmt: skip
    lines = [init(), unknown, said("assistant", "done"), result()]
    transcript = turnfold.load("\n".join(json.dumps(line) for line in lines).encode())
    assert [w.reason for w in transcript.warnings] == [
        "tool_call completed for an unknown call_id 'nope'"
    ]
    counts = transcript.accounting.counts
    assert counts["tool_call/completed"] == {"warned": 1}
    assert "tool_call" not in counts  # not counted a second time under its type alone
    assert sum(n for per in counts.values() for n in per.values()) == len(lines)


def test_L3_cursor_agent_2026_08_outcomes_other_than_success() -> None:
    # The CLI of 2026.08 settles a call with one of many outcome keys (a protobuf oneof, shapes
    # as ZhengyiLuo/AgentsServer's tests of agent 2026.08.11 record them). They all read
    # "unknown" before: a command that failed (``failure``, exit code 7), a file not found.
    cases: list[tuple[str, Any]] = [
        ("shellToolCall", {"failure": {"command": "false", "exitCode": 7, "stdout": "",
                                       "stderr": "failed"}}),
        ("readToolCall", {"fileNotFound": {"path": "missing.txt"}}),
        ("shellToolCall", {"timeout": {"command": "sleep 10", "timeoutMs": 1000}}),
        ("editToolCall", {"writePermissionDenied": {"path": "ro.txt",
                                                    "error": "Permission denied"}}),
        ("mcpToolCall", {"toolNotFound": {"name": "missing-tool"}}),
        ("awaitToolCall", {"complete": {}}),
        ("recordScreenToolCall", {"saveSuccess": {"path": "/tmp/recording.mp4"}}),
        ("shellToolCall", {"success": {"exitCode": 0, "stdout": "hi\n"}, "pid": 123}),
        ("awaitToolCall", {"stillRunning": {}}),
        ("shellToolCall", {"futureOutcome": {"message": "new"}}),
    ]  # fmt: skip
    events: list[dict[str, Any]] = [init(), said("user", "go")]
    for index, (kind, outcome) in enumerate(cases):
        events += [
            tool("started", f"c{index}", kind, {}),
            tool("completed", f"c{index}", kind, {}, outcome),
        ]
    transcript = turnfold.load(jsonl(*events, result()))
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.status, c.result.text if c.result else None) for c in calls[:7]] == [
        ("error", "failed"),
        ("error", 'fileNotFound: {\n  "path": "missing.txt"\n}'),
        ("error", 'timeout: {\n  "command": "sleep 10",\n  "timeoutMs": 1000\n}'),
        ("error", "writePermissionDenied: Permission denied"),
        ("error", 'toolNotFound: {\n  "name": "missing-tool"\n}'),
        ("success", None),
        ("success", '{\n  "path": "/tmp/recording.mp4"\n}'),
    ]
    assert [(c.status, c.result.text if c.result else None) for c in calls[7:9]] == [
        ("success", "hi\n"),  # the pid beside the outcome is not one
        ("unknown", "stillRunning"),  # not finished when the stream says so
    ]
    assert calls[9].status == "unknown"  # an outcome not known: shown as it is
    assert calls[9].result is not None
    assert "futureOutcome" in calls[9].result.text


def test_L4_cursor_agent_2026_08_runtime_events_are_notices_or_ignored() -> None:
    # Events of the 2026.08 CLI (shapes as ZhengyiLuo/AgentsServer's tests record them): each
    # was "not a cursor-agent stream-json event" before, a warning for every plan-mode run
    # (its interaction_query) and the retry, the reconnection and the task's notice not shown.
    def event(kind: str, subtype: str, **more: Any) -> dict[str, Any]:
        return {"type": kind, "subtype": subtype, "session_id": SESSION, **more}

    transcript = turnfold.load(
        jsonl(
            init(),
            said("user", "go"),
            event(
                "interaction_query", "request", query_type="permission", query={"prompt": "Allow?"}
            ),
            event(
                "interaction_query", "response", query_type="permission", response={"answer": "yes"}
            ),
            event("retry", "starting", attempt=2, is_resume=True),
            event("retry", "resuming", attempt=3, checkpoint_turn_count=11),
            event("connection", "reconnecting", attempt=4),
            event("connection", "reconnected"),
            event(
                "system", "task_notification", task_id="t1", title="Build finished", detail="exit 0"
            ),
            event("system", "background_shell_timeout", aborted_count=2, timeout_ms=60_000),
            said("assistant", "done"),
            result(),
        )
    )
    assert transcript.warnings == []
    notices = [(n.level, n.subtype, n.text) for n in transcript if isinstance(n, SystemNotice)]
    assert notices == [
        ("warning", "retry", "Retrying the request (attempt 2)"),
        ("warning", "retry", "Resuming the run from its checkpoint (attempt 3)"),
        ("warning", "connection", "Connection lost; reconnecting (attempt 4)"),
        ("info", "task_notification", "Build finished\nexit 0"),
        ("warning", "background_shell_timeout", "2 background command(s) aborted after the 60s"
         " timeout"),
    ]  # fmt: skip
    assert [e.text for e in transcript if isinstance(e, AssistantText)] == ["done"]
    counts = transcript.accounting.counts
    assert counts["interaction_query/request"] == {"ignored": 1}
    assert counts["connection/reconnected"] == {"ignored": 1}
    assert counts["retry/starting"] == {"mapped": 1}
    assert transcript.accounting.unaccounted == []
