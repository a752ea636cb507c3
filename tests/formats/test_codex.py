"""Codex CLI rollout loader (spec L-1 … L-4 for ``format="codex"``).

The fixture tests count what the loader should find straight from the raw JSON lines, with
rules written here independently of the loader; the hand-made rollouts cover one rule each.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.codex_cells import nested
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
from turnfold.formats import codex
from turnfold.usage import count_tokens, counts_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODEX_FIXTURES = sorted(FIXTURES.glob("codex_*.jsonl"))
TS = "2026-05-12T10:00:00.000Z"


# --- building rollouts -----------------------------------------------------------------------


def env(kind: str, payload: dict[str, Any], ts: str = TS) -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def meta(**fields: Any) -> dict[str, Any]:
    payload = {"id": "sess-1", "timestamp": TS, "cwd": "/repo", "cli_version": "0.129.0"}
    return env("session_meta", {**payload, **fields})


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return env("event_msg", {"type": kind, **fields})


def item(kind: str, **fields: Any) -> dict[str, Any]:
    return env("response_item", {"type": kind, **fields})


def user_item(text: str, role: str = "user") -> dict[str, Any]:
    return item("message", role=role, content=[{"type": "input_text", "text": text}])


def assistant_item(text: str) -> dict[str, Any]:
    return item("message", role="assistant", content=[{"type": "output_text", "text": text}])


def call(call_id: str, name: str = "shell", **args: Any) -> dict[str, Any]:
    arguments = json.dumps(args or {"command": ["bash", "-lc", "ls"]})
    return item("function_call", name=name, arguments=arguments, call_id=call_id)


def output(call_id: str, value: Any) -> dict[str, Any]:
    return item("function_call_output", call_id=call_id, output=value)


def jsonl(records: list[Any]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def load(*records: Any, with_meta: bool = True) -> Transcript:
    lines = [meta(), *records] if with_meta else list(records)
    return turnfold.load(jsonl(lines), format="codex")


def of(transcript: Transcript, kind: type[Any]) -> list[Any]:
    return [e for e in transcript if isinstance(e, kind)]


def only_call(transcript: Transcript) -> ToolCall:
    calls = transcript.tool_calls()
    assert len(calls) == 1, calls
    return calls[0]


# --- fixtures: counts taken independently from the raw lines ------------------------------------

CALL_ITEMS = {
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "image_generation_call",
    "file_search_call",
    "computer_call",
}
OUTPUT_ITEMS = {
    "function_call_output",
    "custom_tool_call_output",
    "local_shell_call_output",
    "tool_search_output",
    "computer_call_output",
}
EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)", re.MULTILINE)


def _texts(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(
        p.get("text") or "" for p in content if p.get("type") in ("input_text", "output_text")
    )


def _injected(text: str) -> bool:
    return text.lstrip().startswith(("<", "# AGENTS.md"))


def _norm(text: str) -> str:
    return " ".join(text.split())


def _plan_split(text: str) -> tuple[str, list[str]]:
    """A plan-mode reply without its ``<proposed_plan>`` blocks (what Codex's agent_message
    event says), and the plans; an unterminated block runs to the end."""
    said, plans = "", []
    while "<proposed_plan>" in text:
        head, _, rest = text.partition("<proposed_plan>")
        plan, _, text = rest.partition("</proposed_plan>")
        said, plans = said + head, [*plans, plan]
    return said + text, plans


def raw_counts(path: Path) -> dict[str, int]:
    """What a reader of the raw file expects, by the rules of the issue (not the loader's code)."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    events = [r["payload"] for r in records if r.get("type") == "event_msg"]
    items = [r["payload"] for r in records if r.get("type") == "response_item"]
    kinds = [(r.get("type"), (r.get("payload") or {}).get("type")) for r in records]

    event_prompts = Counter(_norm(e["message"]) for e in events if e["type"] == "user_message")
    item_prompts = Counter(
        _norm(_texts(i["content"]))
        for i in items
        if i["type"] == "message" and i["role"] == "user" and not _injected(_texts(i["content"]))
    )
    prompts = sum(event_prompts.values()) + sum((item_prompts - event_prompts).values())

    seen: set[str] = set()
    calls = orphans = success = error = cancelled = 0
    open_calls: set[str] = set()
    for record in records:
        payload = record.get("payload") or {}
        kind = payload.get("type")
        if record.get("type") == "event_msg" and kind == "task_started":
            open_calls = set()
        if record.get("type") == "event_msg" and kind == "turn_aborted":
            cancelled += len(open_calls)
            open_calls = set()
        if record.get("type") != "response_item":
            continue
        if kind in CALL_ITEMS:
            calls += 1
            call_id = payload.get("call_id") or payload.get("id")
            seen.add(call_id)
            if kind in ("web_search_call", "image_generation_call"):
                success += payload.get("status") == "completed"
            else:
                open_calls.add(call_id)
        elif kind == "agent_message":  # inter-agent mail: one delivered row (issue 21.8)
            calls += 1
            success += 1
        elif kind in OUTPUT_ITEMS:
            if payload["call_id"] not in seen:
                orphans += 1
            open_calls.discard(payload["call_id"])
            text = payload.get("output") if isinstance(payload.get("output"), str) else ""
            code = EXIT.search(text[:4096])
            if code:
                success += code.group(1) == "0"
                error += code.group(1) != "0"

    compactions = sum(k == ("compacted", None) or k[1] == "compaction" for k in kinds)
    for index, kind in enumerate(kinds):
        if kind == ("event_msg", "context_compacted"):
            around = kinds[max(index - 1, 0) : index + 2]
            compactions += ("compacted", None) not in around

    summaries = {
        _norm(p["text"]) for i in items if i["type"] == "reasoning" for p in i.get("summary") or []
    }
    thinking = sum(
        bool(i.get("summary") or i.get("content") or i.get("encrypted_content"))
        for i in items
        if i["type"] == "reasoning"
    ) + sum(
        1 for e in events if e["type"] == "agent_reasoning" and _norm(e["text"]) not in summaries
    )
    replies = [
        _plan_split(_texts(i["content"]))
        for i in items
        if i["type"] == "message" and i["role"] == "assistant"
    ]
    answers = Counter(_norm(said) for said, _ in replies)
    agent_messages = Counter(_norm(e["message"]) for e in events if e["type"] == "agent_message")
    texts = sum(answers.values()) + sum((agent_messages - answers).values())
    # A plan-mode Plan item is a text of its own only when no reply carries its plan.
    shown_plans = {_norm(plan) for _, plans in replies for plan in plans}
    plan_items = [
        e["item"].get("text") or ""
        for e in events
        if e["type"] == "item_completed" and (e.get("item") or {}).get("type") == "Plan"
    ]
    texts += sum(1 for plan in plan_items if plan.strip() and _norm(plan) not in shown_plans)
    said = set(answers) | set(agent_messages)
    for e in events:  # a review's answer, unless an assistant text repeats it (issue 21.9)
        review = e.get("review_output") or {} if e["type"] == "exited_review_mode" else {}
        explanation = _norm(review.get("overall_explanation") or "")
        if (explanation or review.get("findings")) and not any(
            explanation and s.startswith(explanation) for s in said
        ):
            texts += 1
    return {
        "prompts": prompts,
        "calls": calls + orphans,
        "success": success,
        "error": error,
        "cancelled": cancelled,
        "aborts": sum(k == ("event_msg", "turn_aborted") for k in kinds),
        "compactions": compactions,
        "thinking": thinking,
        "texts": texts,
    }


def loaded_counts(t: Transcript) -> dict[str, int]:
    statuses = Counter(c.status for c in t.tool_calls())
    return {
        "prompts": len(of(t, UserMessage)),
        "calls": len(t.tool_calls()),
        "success": statuses["success"],
        "error": statuses["error"],
        "cancelled": statuses["cancelled"],
        "aborts": len(of(t, AbortMarker)),
        "compactions": len(of(t, CompactionBoundary)),
        "thinking": len(of(t, Thinking)),
        "texts": len(of(t, AssistantText)),
    }


@pytest.mark.parametrize("path", CODEX_FIXTURES, ids=lambda p: p.name)
def test_L2_codex_fixture_counts_match_the_raw_file(path: Path) -> None:
    detected = turnfold.load(path)
    forced = turnfold.load(path, format="codex")
    assert detected == forced
    assert detected.metadata["source_format"] == "codex"
    assert loaded_counts(detected) == raw_counts(path)


@pytest.mark.parametrize("path", CODEX_FIXTURES, ids=lambda p: p.name)
def test_L2_codex_fixture_round_trips(path: Path) -> None:
    t = turnfold.load(path)
    assert turnfold.load(t.dump()) == t
    assert turnfold.load(t.dump(layout="json")) == t


def test_L2_codex_two_turns_fixture_in_detail() -> None:
    t = turnfold.load(FIXTURES / "codex_rollout_v0.129_two-turns.jsonl")
    assert [e.kind for e in t] == ["user", "thinking", "assistant"] * 2
    first, thinking, answer = t.entries[:3]
    assert first.text == "Hello, Codex! Please explain what you do."
    assert thinking.form == "encrypted"
    assert thinking.data == "gAAAAABtest1234placeholder"
    assert thinking.text == ""
    assert answer.model == "o4-mini"
    assert answer.usage.input_tokens == 1024
    assert answer.usage.cache_read_tokens == 512
    assert answer.usage.reasoning_tokens == 8
    assert answer.meta["turn_duration_ms"] == 3200
    assert t.metadata == {
        "source_format": "codex",
        "session_id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
        "started_at": "2026-05-12T09:59:55.000Z",
        "cwd": "/home/user/project",
        "originator": "codex_exec",
        "model_provider": "openai",
        "version": "0.129.0",
        "cli_version": "0.129.0",
        "source": "exec",
        "git": {
            "commit_hash": "abc123def456abc123def456abc123def456abc1",
            "branch": "main",
            "repository_url": "https://github.com/user/project",
        },
        "model": "o4-mini",
        # Each response's last_token_usage once (1024 + 1100 input): this synthetic file's
        # cumulative total does not grow between its two turns, as Codex's would.
        "usage": {
            "input_tokens": 2124,
            "output_tokens": 32,
            "cache_read_tokens": 1024,
            "reasoning_tokens": 18,
        },
        "duration_ms": 5400,
    }
    assert t.warnings == []


def test_L4_codex_schema_coverage_fixture_warns_quietly() -> None:
    t = turnfold.load(FIXTURES / "codex_rollout_schema-coverage.jsonl")
    reasons = [w.reason for w in t.warnings]
    # Placeholder timestamps are one warning, not one per line.
    assert sum("placeholder" in r for r in reasons) == 1
    assert len(reasons) < 10
    assert all(w.line is not None for w in t.warnings)


# --- L-3: status derived from exit codes, or unknown ------------------------------------------

OUTPUT_CASES = [
    (
        "exit-0-header",
        "Exit code: 0\nWall time: 1.5 seconds\nOutput:\nok\n",
        "success",
        "ok\n",
        1500.0,
    ),
    (
        "exit-2-header",
        "Exit code: 2\nWall time: 0.2 seconds\nOutput:\nboom",
        "error",
        "boom",
        200.0,
    ),
    (
        "unified-exec-0",
        "Chunk ID: ab\nWall time: 0.0000 seconds\nProcess exited with code 0\n"
        "Original token count: 3\nOutput:\nhi",
        "success",
        "hi",
        0.0,
    ),
    (
        "unified-exec-127",
        "Command: x\nProcess exited with code 127\nOutput:\nnope",
        "error",
        "nope",
        None,
    ),
    (
        "json-exit-0",
        json.dumps({"output": "a\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}),
        "success",
        "a\n",
        100.0,
    ),
    ("json-exit-1", json.dumps({"output": "e", "metadata": {"exit_code": 1}}), "error", "e", None),
    ("no-exit-code", "just some text", "unknown", "just some text", None),
    (
        "still-running",
        "Process running with session ID 7\nOutput:\npartial",
        "unknown",
        "partial",
        None,
    ),
    (
        "json-without-metadata",
        json.dumps({"output": "x"}),
        "unknown",
        json.dumps({"output": "x"}),
        None,
    ),
    ("aborted", "aborted", "cancelled", "aborted", None),
    # Codex 0.171 (found by the real-agent harness, tests/agents):
    (
        "apply-patch-through-exec-command",  # the patch tool's header inside unified exec's body
        "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\n"
        "Success. Updated the following files:\nM notes.txt\n",
        "success",
        "Success. Updated the following files:\nM notes.txt\n",
        0.0,
    ),
    (
        "apply-patch-through-exec-command-failed",
        "Wall time: 0.0100 seconds\nOutput:\nExit code: 1\nWall time: 0 seconds\nOutput:\n"
        "Failed to find expected lines in notes.txt",
        "error",
        "Failed to find expected lines in notes.txt",
        10.0,
    ),
    (
        "interrupted-unified-exec",
        "Wall time: 2.0 seconds\naborted by user",
        "cancelled",
        "aborted by user",
        2000.0,
    ),
    (
        "interrupted-after-partial-output",
        "Exit code: 1\nWall time: 0.5 seconds\nOutput:\npartial output\ncommand aborted by user",
        "cancelled",
        "partial output\ncommand aborted by user",
        500.0,
    ),
    (
        "aborted-only-mentioned",
        "Exit code: 0\nOutput:\nthe job was aborted by user request\n",
        "success",
        "the job was aborted by user request\n",
        None,
    ),
    (
        "content-list",
        [{"type": "input_text", "text": "Exit code: 0\nOutput:\nlisted"}],
        "success",
        "listed",
        None,
    ),
    ("payload-success-false", {"content": "denied", "success": False}, "error", "denied", None),
    ("payload-success-true", {"content": "fine", "success": True}, "success", "fine", None),
]


@pytest.mark.parametrize(
    ("value", "status", "text", "duration"),
    [case[1:] for case in OUTPUT_CASES],
    ids=[case[0] for case in OUTPUT_CASES],
)
def test_L3_codex_status_from_the_output(value: Any, status: str, text: str, duration: Any) -> None:
    c = only_call(load(call("c1"), output("c1", value)))
    assert c.status == status
    assert c.result is not None
    assert c.result.text == text
    assert c.duration_ms == duration
    assert c.ended_at == TS


@pytest.mark.parametrize(
    ("end", "status"),
    [
        ({"exit_code": 0, "duration": {"secs": 1, "nanos": 500_000_000}}, "success"),
        ({"exit_code": 1}, "error"),
        ({}, "unknown"),
    ],
    ids=["exit-0", "exit-1", "absent"],
)
def test_L3_codex_exec_command_end_exit_code(end: dict[str, Any], status: str) -> None:
    t = load(
        call("c1"),
        event("exec_command_end", call_id="c1", aggregated_output="out", **end),
        output("c1", "out"),  # no header: the event decides
    )
    c = only_call(t)
    assert c.status == status
    assert c.result.text == "out"
    if "duration" in end:
        assert c.duration_ms == 1500.0


def test_L3_codex_header_beats_the_event() -> None:
    t = load(
        call("c1"),
        event("exec_command_end", call_id="c1", exit_code=0),
        output("c1", "Exit code: 3\nOutput:\n"),
    )
    assert only_call(t).status == "error"


def test_L3_codex_event_for_an_unknown_call_is_ignored() -> None:
    t = load(user_item("go"), event("exec_command_end", call_id="nope", exit_code=1))
    assert t.tool_calls() == []
    assert t.warnings == []


@pytest.mark.parametrize(
    ("result", "status"),
    [
        ({"Ok": {"content": [{"type": "text", "text": "r"}], "isError": False}}, "success"),
        ({"Ok": {"content": [{"type": "text", "text": "r"}], "isError": True}}, "error"),
        ({"Ok": {"content": []}}, "success"),
        ({"Err": "server down"}, "error"),
    ],
    ids=["ok", "is-error", "ok-no-flag", "err"],
)
def test_L3_codex_mcp_tool_call_end(result: dict[str, Any], status: str) -> None:
    t = load(
        call("m1", name="mcp__github__get_issue", number=1),
        event(
            "mcp_tool_call_end",
            call_id="m1",
            result=result,
            duration={"secs": 0, "nanos": 4_000_000},
        ),
        output("m1", "r"),
    )
    c = only_call(t)
    assert c.status == status
    assert c.duration_ms == 4.0


PATCH = "*** Begin Patch\n*** Update File: /repo/src/a.py\n@@\n-old\n+new\n*** End Patch\n"


def patch_call(call_id: str = "p1") -> dict[str, Any]:
    return item(
        "custom_tool_call", call_id=call_id, name="apply_patch", input=PATCH, status="completed"
    )


def patch_output(call_id: str, text: str) -> dict[str, Any]:
    return item("custom_tool_call_output", call_id=call_id, output=text)


def test_issue11_6_codex_apply_patch_shows_its_own_message_once() -> None:
    t = load(patch_call(), patch_output("p1", "Exit code: 0\nOutput:\nSuccess. Updated a.py\n"))
    c = only_call(t)
    assert c.description == "src/a.py"  # relative to the session cwd
    assert c.status == "success"
    assert c.args == PATCH  # the edit's content, shown once
    assert c.result.text == "Success. Updated a.py\n"  # the tool's own message as the result


def test_issue11_6_codex_failed_patch_is_an_error_with_its_message() -> None:
    message = "apply_patch verification failed: Failed to find expected lines in /repo/src/a.py"
    c = only_call(load(patch_call(), patch_output("p1", message)))
    assert c.status == "error"
    assert c.result.text == message
    assert c.result.structured is None


@pytest.mark.parametrize(
    ("success", "status", "kind"), [(True, "success", "diff"), (False, "error", "text")]
)
def test_L3_codex_patch_apply_end(success: bool, status: str, kind: str) -> None:
    changes = {"/repo/src/a.py": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-old\n+new\n"}}
    t = load(
        patch_call(),
        event(
            "patch_apply_end",
            call_id="p1",
            success=success,
            stdout="",
            stderr="failed",
            changes=changes,
        ),
        patch_output("p1", "apply_patch verification failed" if not success else "Done!"),
    )
    c = only_call(t)
    assert c.status == status
    assert c.result.kind == kind
    if success:  # the tool's message, then the unified diff Codex recorded
        # the files named relative to the session's cwd, /repo
        assert c.result.text.startswith("Done!\n--- a/src/a.py\n+++ b/src/a.py\n@@")
    else:
        assert c.result.text == "apply_patch verification failed"


def test_L3_codex_update_plan_is_a_plan() -> None:
    plan = [
        {"step": "Read code", "status": "completed"},
        {"step": "Fix bug", "status": "in_progress"},
    ]
    t = load(call("u1", name="update_plan", plan=plan), output("u1", "Plan updated"))
    c = only_call(t)
    assert c.status == "success"  # "Plan updated" is what update_plan answers when it took it
    assert c.result.kind == "plan"
    assert c.result.text == "- [x] Read code\n- [-] Fix bug"
    assert c.result.structured["plan"] == plan


def test_L3_codex_call_without_output_is_unknown() -> None:
    c = only_call(load(user_item("go"), call("c1")))
    assert c.status == "unknown"
    assert c.result is None
    assert c.ended_at is None


# --- Codex 0.171: item_completed instead of the *_end events (the real-agent harness) -----------

NOTES_PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-old\n+new\n*** End Patch"
PATCH_CMD = f"apply_patch <<'PATCH'\n{NOTES_PATCH}\nPATCH"
NOTES_DIFF = "@@ -1 +1 @@\n-old\n+new\n"
PATCH_OUTPUT = (
    "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\n"
    "Success. Updated the following files:\nM notes.txt\n"
)


def file_change(call_id: str, status: str, **fields: Any) -> dict[str, Any]:
    change = {"/repo/notes.txt": {"type": "update", "unified_diff": NOTES_DIFF, "move_path": None}}
    file_item = {"type": "FileChange", "id": call_id, "changes": change, "status": status}
    return event("item_completed", turn_id="t1", item={**file_item, **fields})


def test_L3_codex_apply_patch_through_exec_command_is_an_edit_with_its_diff() -> None:
    t = load(
        call("p1", "exec_command", cmd=PATCH_CMD),
        file_change("p1", "completed", stdout=PATCH_OUTPUT.rsplit("Output:\n", 1)[1]),
        output("p1", PATCH_OUTPUT),
    )
    c = only_call(t)
    assert c.status == "success"
    assert c.meta["exit_code"] == 0
    assert c.result is not None
    assert c.result.kind == "diff"
    assert c.result.text == (
        "Success. Updated the following files:\nM notes.txt\n"
        "--- a/notes.txt\n+++ b/notes.txt\n" + NOTES_DIFF
    )
    assert t.accounting is not None
    assert t.accounting.counts["event_msg/item_completed"] == {"mapped": 1}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("completed", "success"),
        ("failed", "error"),
        ("declined", "error"),
        ("inProgress", "unknown"),
    ],
)
def test_L3_codex_file_change_status_when_no_output_came(status: str, expected: str) -> None:
    t = load(call("p1", "exec_command", cmd=PATCH_CMD), file_change("p1", status))
    assert only_call(t).status == expected


def test_L3_codex_command_execution_item_gives_the_exit_code() -> None:
    done = {"type": "CommandExecution", "id": "c1", "status": "failed", "exit_code": 2,
            "aggregated_output": "boom\n", "duration": {"secs": 1, "nanos": 0}}  # fmt: skip
    t = load(call("c1", "exec_command", cmd="false"), event("item_completed", item=done))
    c = only_call(t)
    assert (c.status, c.meta["exit_code"], c.duration_ms) == ("error", 2, 1000.0)
    assert c.result is not None
    assert c.result.text == "boom\n"


# Paginated rollouts keep item_completed and drop mcp_tool_call_end (rollout/src/policy.rs):
# the item is the only record of the call's outcome.
MCP_FAILED = {"type": "McpToolCall", "id": "m1", "server": "docs", "tool": "search",
              "arguments": {"q": "x"}, "status": "failed",
              "result": {"content": [{"type": "text", "text": "index unavailable"}],
                         "isError": True},
              "duration": {"secs": 0, "nanos": 500_000_000}}  # fmt: skip
MCP_CASES = [
    ("mcp-failed", MCP_FAILED, "error", "index unavailable", 500.0),
    (
        "mcp-transport-error",
        {**MCP_FAILED, "result": None, "error": {"message": "server down"}},
        "error",
        "server down",
        500.0,
    ),
    (
        "mcp-completed",
        {**MCP_FAILED, "status": "completed",
         "result": {"content": [{"type": "text", "text": "3 pages"}], "isError": False}},
        "success",
        "3 pages",
        500.0,
    ),
    (
        "dynamic-failed",
        {"type": "DynamicToolCall", "id": "m1", "tool": "lookup_ticket", "arguments": {"id": 7},
         "status": "failed", "success": False,
         "content_items": [{"type": "inputText", "text": "ticket 7 does not exist"}],
         "duration": {"secs": 0, "nanos": 100_000_000}},
        "error",
        "ticket 7 does not exist",
        100.0,
    ),
    (
        "dynamic-error-before-answering",
        {"type": "DynamicToolCall", "id": "m1", "tool": "lookup_ticket", "arguments": {},
         "status": "failed", "error": "no client answered"},
        "error",
        "no client answered",
        None,
    ),
    (
        "dynamic-completed",
        {"type": "DynamicToolCall", "id": "m1", "tool": "lookup_ticket", "arguments": {},
         "status": "completed", "content_items": []},
        "success",
        None,
        None,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("done", "status", "text", "duration"),
    [c[1:] for c in MCP_CASES],
    ids=[c[0] for c in MCP_CASES],
)
def test_L3_codex_mcp_and_dynamic_items_settle_their_calls(
    done: dict[str, Any], status: str, text: str | None, duration: float | None
) -> None:
    t = load(
        call("m1", name="search", q="x"),
        event("item_completed", turn_id="t1", item=done),
    )
    c = only_call(t)
    assert (c.status, c.duration_ms) == (status, duration)
    assert (c.result.text if c.result else None) == text
    assert t.warnings == []


def test_L3_codex_paginated_mcp_failure_survives_its_output() -> None:
    """The output the model read (a wall-time header and the text) states no outcome: the
    item's stays, and the result is the output's."""
    plain = [{"type": "input_text", "text": "Wall time: 0.5000 seconds\nOutput:"},
             {"type": "input_text", "text": "index unavailable"}]  # fmt: skip
    t = load(
        meta(history_mode="paginated"),
        item("function_call", name="search", namespace="mcp__docs", arguments="{}", call_id="m1"),
        event("item_completed", turn_id="t1", item=MCP_FAILED),
        output("m1", plain),
        with_meta=False,
    )
    c = only_call(t)
    assert (c.name, c.status, c.duration_ms) == ("mcp__docs__search", "error", 500.0)
    assert c.result is not None
    assert c.result.text == "index unavailable"
    assert t.accounting is not None
    assert t.accounting.counts["event_msg/item_completed"] == {"mapped": 1}


def test_L3_codex_other_completed_items_echo_what_was_read() -> None:
    message = {"type": "AgentMessage", "id": "m1", "content": [{"type": "Text", "text": "hi"}]}
    t = load(assistant_item("hi"), event("item_completed", item=message))
    assert [e.kind for e in t] == ["assistant"]
    assert t.warnings == []


def test_P7_codex_interrupted_exec_command_is_cancelled() -> None:
    cut = {
        "type": "CommandExecution",
        "id": "slow",
        "status": "failed",
        "exit_code": -1,
        "aggregated_output": "started\n",
        "duration": {"secs": 1, "nanos": 831000000},
    }
    t = load(
        event("task_started", turn_id="t1"),
        user_item("run the slow job"),
        call("slow", "exec_command", cmd="sleep 45"),
        output("slow", "Wall time: 2.0 seconds\naborted by user"),
        user_item("<turn_aborted>\nThe user interrupted.\n</turn_aborted>"),
        event("turn_aborted", turn_id="t1", reason="interrupted", duration_ms=2087),
        # After the output: the command's own end keeps what it printed before the interrupt
        # (F-10: a cancelled tool keeps its partial output), its duration and exit code.
        event("item_completed", turn_id="t1", item=cut),
    )
    c = only_call(t)
    assert (c.status, c.duration_ms, c.meta["exit_code"]) == ("cancelled", 1831.0, -1)
    assert c.result is not None
    assert c.result.text == "started\n\naborted by user"
    assert c.meta["output_header"] == "Wall time: 2.0 seconds"


def test_X2_codex_0_171_fixture_statuses() -> None:
    t = turnfold.load(FIXTURES / "codex" / "v0.171_apply-patch-and-interrupt.jsonl")
    assert t.warnings == []
    assert [(c.call_id, c.status) for c in t.tool_calls()] == [
        ("call_patch", "success"),
        ("call_new", "success"),
        ("call_slow", "cancelled"),
    ]


# --- turns: aborts, compaction, durations, usage ----------------------------------------------


def test_P7_codex_turn_aborted_cancels_unfinished_calls() -> None:
    t = load(
        event("task_started", turn_id="t1"),
        event("user_message", message="run both"),
        call("done"),
        call("cut"),
        output("done", "Exit code: 0\nOutput:\n"),
        event("turn_aborted", turn_id="t1", reason="interrupted", duration_ms=900),
        output("cut", "aborted"),
        user_item("<turn_aborted>\nThe user interrupted.\n</turn_aborted>"),
        event("task_started", turn_id="t2"),
        event("user_message", message="again"),
        call("next"),
    )
    done, cut, later = t.tool_calls()
    assert (done.status, cut.status, later.status) == ("success", "cancelled", "unknown")
    assert cut.ended_at == TS
    marker, unfinished = of(t, AbortMarker)
    assert marker.reason == "interrupted"
    assert marker.meta == {"turn_duration_ms": 900}
    # The file ends before "next" is answered: that turn's end is not recorded.
    assert unfinished.wording is not None
    assert unfinished.wording.key == "reader.turn_end_not_recorded"
    assert [m.text for m in of(t, UserMessage)] == ["run both", "again"]


@pytest.mark.parametrize(
    ("records", "boundaries", "summary"),
    [
        ([env("compacted", {"message": "S"}), event("context_compacted")], 1, "S"),
        (
            [
                event("context_compacted"),
                env("compacted", {"message": "S", "replacement_history": []}),
            ],
            1,
            "S",
        ),
        ([env("compacted", {"message": ""})], 1, None),
        ([item("compaction", encrypted_content="x"), event("context_compacted")], 1, None),
        (
            [env("compacted", {"message": "A"}), assistant_item("hi"), event("context_compacted")],
            2,
            "A",
        ),
        ([item("context_compaction", id="cmp_1", encrypted_content="x")], 1, None),
        ([item("context_compaction", encrypted_content="x"), event("context_compacted")], 1, None),
    ],
    ids=[
        "item-then-event",
        "event-then-item",
        "empty-summary",
        "remote",
        "apart",
        "server-side",
        "server-side-then-event",
    ],
)
def test_P1_codex_compaction_boundary(records: list[Any], boundaries: int, summary: Any) -> None:
    t = load(user_item("x"), *records)
    found = of(t, CompactionBoundary)
    assert len(found) == boundaries
    assert found[0].summary == summary
    assert t.warnings == []


def test_P7_codex_turn_duration_goes_to_the_answer_or_the_prompt() -> None:
    t = load(
        event("task_started", turn_id="t1"),
        user_item("q1"),
        assistant_item("a1"),
        event("task_complete", turn_id="t1", duration_ms=3200, time_to_first_token_ms=300),
        event("task_started", turn_id="t2"),
        user_item("q2"),
        call("c1"),
        event("task_complete", turn_id="t2", duration_ms=700),
        event("task_started", turn_id="t3"),
        user_item("q3"),
        event("task_complete", turn_id="t3", duration_ms=0),  # a placeholder, not a recording
    )
    answer = of(t, AssistantText)[0]
    q1, q2, q3 = of(t, UserMessage)
    assert answer.meta["turn_duration_ms"] == 3200
    assert answer.meta["time_to_first_token_ms"] == 300
    assert "turn_duration_ms" not in q1.meta
    assert q2.meta == {"turn_duration_ms": 700}
    assert q3.meta == {}
    assert t.metadata["duration_ms"] == 3900


def test_L2_codex_task_complete_error_is_one_assistant_error() -> None:
    t = load(
        user_item("q"),
        event("error", message="stream disconnected"),
        event("task_complete", error={"message": "stream disconnected"}),
    )
    assert [e.message for e in of(t, AssistantError)] == ["stream disconnected"]


def test_L2_codex_token_count_usage_on_the_response_text() -> None:
    usage = {
        "input_tokens": 10,
        "cached_input_tokens": 4,
        "output_tokens": 3,
        "reasoning_output_tokens": 1,
    }
    total = {name: 2 * value for name, value in usage.items()}  # cumulative: two responses
    t = load(
        user_item("q"),
        event("token_count", info=None, rate_limits={}),
        call("c1"),
        event("token_count", info={"last_token_usage": usage, "total_token_usage": usage}),
        output("c1", "x"),
        assistant_item("done"),
        event("token_count", info={"last_token_usage": usage, "total_token_usage": total}),
        # Codex repeats a token_count with the same totals: no third response.
        event("token_count", info={"last_token_usage": usage, "total_token_usage": total}),
    )
    (text,) = of(t, AssistantText)
    assert text.usage.input_tokens == 10
    assert text.usage.cache_read_tokens == 4
    assert text.usage.output_tokens == 3
    assert text.usage.reasoning_tokens == 1
    # The response of the call alone keeps its usage too (spec U-1): on the call.
    assert t.tool_calls()[0].usage.input_tokens == 10
    assert t.metadata["usage"]["input_tokens"] == 20
    assert count_tokens(t.entries) == counts_of(t.metadata["usage"])


def test_U1_codex_totals_alone_are_counted_by_their_differences() -> None:
    totals = [{"input_tokens": 100, "output_tokens": 5}, {"input_tokens": 250, "output_tokens": 9}]
    t = load(
        user_item("q"),
        call("c1"),
        event("token_count", info={"total_token_usage": totals[0]}),
        output("c1", "x"),
        assistant_item("done"),
        event("token_count", info={"total_token_usage": totals[1]}),
    )
    assert counts_of(t.tool_calls()[0].usage) == totals[0]
    (text,) = of(t, AssistantText)
    assert counts_of(text.usage) == {"input_tokens": 150, "output_tokens": 4}


# --- injected context and duplicates ----------------------------------------------------------

INJECTED = [
    ("environment", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", "user"),
    ("user-instructions", "<user_instructions>\nBe terse.\n</user_instructions>", "user"),
    (
        "agents-md",
        "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
        "user",
    ),
    (
        "permissions",
        "<permissions instructions>\nsandbox\n</permissions instructions>",
        "developer",
    ),
    ("developer", "You are Codex.", "developer"),
    ("system", "You are Codex.", "system"),
    ("turn-aborted-note", "<turn_aborted>\nThe user interrupted.\n</turn_aborted>", "user"),
    ("subagent-notification", "<subagent_notification>{}</subagent_notification>", "user"),
    ("future-snake-case-tag", "<goal_tracker_v2>\nstate\n</goal_tracker_v2>", "user"),
]


@pytest.mark.parametrize(("text", "role"), [c[1:] for c in INJECTED], ids=[c[0] for c in INJECTED])
def test_L2_codex_injected_context_is_not_a_prompt(text: str, role: str) -> None:
    t = load(user_item(text, role=role), user_item("the real prompt"))
    assert [m.text for m in of(t, UserMessage)] == ["the real prompt"]
    assert of(t, SystemNotice) == []


@pytest.mark.parametrize(
    "text", ["<div> is misaligned, fix it", "<b>bold</b> please", "plain words"]
)
def test_L2_codex_prompts_that_look_like_tags_are_kept(text: str) -> None:
    assert [m.text for m in of(load(user_item(text)), UserMessage)] == [text]


@pytest.mark.parametrize("event_first", [True, False], ids=["event-first", "item-first"])
def test_L2_codex_duplicate_user_text_is_one_prompt(event_first: bool) -> None:
    copies = [
        event("user_message", message="List the files", images=[]),
        user_item("List the files"),
    ]
    t = load(
        *(copies if event_first else copies[::-1]), assistant_item("a"), user_item("List the files")
    )
    # The third copy is a new prompt: the model had answered in between.
    assert [m.text for m in of(t, UserMessage)] == ["List the files"] * 2


def test_L2_codex_image_prompt_copies_match() -> None:
    content = [
        {"type": "input_text", "text": "<image name=[Image #1]>"},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
        {"type": "input_text", "text": "</image>"},
        {"type": "input_text", "text": "explain this"},
    ]
    t = load(
        event(
            "user_message", message="[Image #1] explain this", images=["data:image/png;base64,AAAA"]
        ),
        item("message", role="user", content=content),
    )
    (prompt,) = of(t, UserMessage)
    assert prompt.meta == {"images": 1}


def test_L2_codex_ide_prompt_keeps_the_request() -> None:
    text = (
        "# Context from my IDE setup:\n\n## Active file: a.py\n\n## My request for Codex:\nfix it\n"
    )
    (prompt,) = of(load(user_item(text)), UserMessage)
    assert prompt.text == "fix it"
    assert prompt.meta["ide_context"].endswith("## Active file: a.py")


def test_F14_codex_user_shell_command_is_a_user_initiated_call() -> None:
    text = (
        "<user_shell_command>\n<command>\ngit status\n</command>\n<result>\n"
        "Exit code: 1\nDuration: 0.0400 seconds\nOutput:\nfatal: not a repo\n\n</result>\n"
        "</user_shell_command>"
    )
    t = load(user_item(text))
    c = only_call(t)
    assert (c.name, c.description, c.status, c.user_initiated) == (
        "shell",
        "git status",
        "error",
        True,
    )
    assert c.result.text == "fatal: not a repo"
    assert c.duration_ms == 40.0
    assert of(t, UserMessage) == []


@pytest.mark.parametrize("event_first", [True, False], ids=["event-first", "item-first"])
def test_L2_codex_agent_message_echo_is_dropped(event_first: bool) -> None:
    copies = [
        event("agent_message", message="Done.", phase="final_answer"),
        assistant_item("Done."),
    ]
    t = load(user_item("q"), *(copies if event_first else copies[::-1]))
    assert [a.text for a in of(t, AssistantText)] == ["Done."]


def test_L2_codex_agent_message_without_an_item_is_kept() -> None:
    t = load(user_item("q"), event("agent_message", message="Only here."))
    assert [a.text for a in of(t, AssistantText)] == ["Only here."]


def reasoning(
    summary: list[str], encrypted: str | None = "gAAA", content: Any = None
) -> dict[str, Any]:
    parts = [{"type": "summary_text", "text": s} for s in summary]
    return item("reasoning", summary=parts, content=content, encrypted_content=encrypted)


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        (
            [reasoning(["**Plan**\n\nread", "then fix"])],
            [("summary", "**Plan**\n\nread\n\nthen fix", None)],
        ),
        ([reasoning([])], [("encrypted", "", "gAAA")]),
        ([reasoning([], encrypted=None)], []),
        (
            [reasoning([], content=[{"type": "reasoning_text", "text": "raw"}])],
            [("text", "raw", None)],
        ),
        (
            [
                reasoning(["a", "b"]),
                event("agent_reasoning", text="a"),
                event("agent_reasoning", text="b"),
            ],
            [("summary", "a\n\nb", None)],
        ),
        (
            [event("agent_reasoning", text="a"), reasoning(["a"])],
            [("summary", "a", None)],
        ),
        ([event("agent_reasoning", text="only event")], [("summary", "only event", None)]),
    ],
    ids=["summary", "encrypted-only", "empty", "raw", "events-after", "event-before", "event-only"],
)
def test_P9_codex_reasoning(records: list[Any], expected: list[Any]) -> None:
    t = load(user_item("q"), *records)
    assert [(th.form, th.text, th.data) for th in of(t, Thinking)] == expected


# --- batches, metadata, sub-agents ------------------------------------------------------------


def test_F10_codex_batches_group_consecutive_calls() -> None:
    t = load(
        event("task_started"),
        user_item("q"),
        reasoning(["r"]),
        call("a"),
        call("b"),
        output("a", "x"),
        output("b", "y"),
        call("c"),
        output("c", "z"),
        assistant_item("progress"),
        call("d"),
        event("task_started"),
        user_item("q2"),
        call("e"),
    )
    batches = [c.batch_id for c in t.tool_calls()]
    assert batches == ["turn1-batch1"] * 2 + ["turn1-batch2", "turn1-batch3", "turn2-batch1"]


def test_L2_codex_hosted_web_search_and_local_shell() -> None:
    t = load(
        user_item("q"),
        item("web_search_call", status="completed", action={"type": "search", "query": "pytest"}),
        item(
            "local_shell_call",
            call_id="ls1",
            status="completed",
            action={"type": "exec", "command": ["ls", "-la"]},
        ),
        output("ls1", "Exit code: 0\nOutput:\n."),
    )
    search, shell = t.tool_calls()
    assert (search.name, search.description, search.status) == ("web_search", "pytest", "success")
    assert search.call_id.startswith("web_search_call@")  # older items carry no id
    assert (shell.name, shell.description, shell.status) == ("local_shell", "ls -la", "success")


def test_L2_codex_subagent_session_metadata() -> None:
    source = {
        "subagent": {
            "thread_spawn": {
                "parent_thread_id": "p-1",
                "depth": 1,
                "agent_nickname": "Ohm",
                "agent_role": "worker",
            }
        }
    }
    t = turnfold.load(jsonl([meta(source=source), user_item("task")]))
    assert t.metadata["subagent"] == source["subagent"]
    assert t.metadata["parent_session_id"] == "p-1"
    assert (t.metadata["agent_name"], t.metadata["agent_role"]) == ("Ohm", "worker")


def test_F7_codex_spawn_agent_links_the_child_rollout(tmp_path: Path) -> None:
    child_id = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"
    child = [
        meta(
            id=child_id,
            source={
                "subagent": {
                    "thread_spawn": {"parent_thread_id": "sess-1", "agent_nickname": "Ohm"}
                }
            },
        ),
        event("task_started"),
        user_item("count files"),
        call("k1"),
        output("k1", "Exit code: 0\nOutput:\n3"),
        assistant_item("3 files"),
        event("token_count", info={"total_token_usage": {"input_tokens": 5, "output_tokens": 42}}),
        event("task_complete", duration_ms=1500),
    ]
    parent = [
        meta(),
        user_item("delegate"),
        call("s1", name="spawn_agent", message="count files"),
        event(
            "collab_agent_spawn_end", call_id="s1", new_thread_id=child_id, new_agent_nickname="Ohm"
        ),
        output("s1", json.dumps({"agent_id": child_id})),
    ]
    (tmp_path / f"rollout-2026-05-12T10-00-00-{child_id}.jsonl").write_text(jsonl(child))
    path = tmp_path / "rollout-2026-05-12T09-59-00-sess-1.jsonl"
    path.write_text(jsonl(parent))
    spawn = only_call(turnfold.load(path))
    agent = spawn.subagent
    assert (agent.name, agent.task, agent.agent_id) == ("Ohm", "count files", child_id)
    assert agent.transcript is not None
    assert agent.transcript.metadata["agent_name"] == "Ohm"
    assert (agent.tool_count, agent.subagent_count) == (1, 0)
    assert (agent.duration_ms, agent.output_tokens) == (1500, 42)
    assert turnfold.load(turnfold.load(path).dump()) == turnfold.load(path)


def test_F7_codex_spawn_agent_without_a_child_file() -> None:
    t = load(
        user_item("q"), call("s1", name="spawn_agent", message="look around"), output("s1", "{}")
    )
    agent = only_call(t).subagent
    assert agent is not None
    assert agent.task == "look around"
    assert agent.transcript is None


# --- layouts, detection and bad input (L-4) ---------------------------------------------------

LEGACY = [
    {
        "id": "legacy-1",
        "timestamp": "2025-06-01T10:00:00.000Z",
        "instructions": None,
        "git": {"branch": "main"},
    },
    {"record_type": "state"},
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<user_instructions>\nx\n</user_instructions>"}],
    },
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Create a README"}],
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Planning"}],
        "encrypted_content": "e",
    },
    {
        "type": "function_call",
        "name": "shell",
        "arguments": '{"command": ["touch", "README.md"]}',
        "call_id": "call_1",
    },
    {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": '{"output": "", "metadata": {"exit_code": 0, "duration_seconds": 0.2}}',
    },
    {"record_type": "state"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Created."}],
    },
]


def test_L2_codex_legacy_layout() -> None:
    t = turnfold.load(jsonl(LEGACY))
    assert t.metadata == {
        "source_format": "codex",
        "session_id": "legacy-1",
        "started_at": "2025-06-01T10:00:00.000Z",
        "git": {"branch": "main"},
    }
    assert [e.kind for e in t] == ["user", "thinking", "tool_call", "assistant"]
    c = only_call(t)
    assert (c.status, c.duration_ms, c.description, c.batch_id) == (
        "success",
        200.0,
        "touch README.md",
        "turn1-batch1",
    )
    assert t.warnings == []


def test_L2_codex_detection() -> None:
    assert turnfold.load(jsonl([meta(), user_item("hi")])).metadata["source_format"] == "codex"
    # A rollout whose head (and session_meta) was cut off still reads as Codex.
    assert turnfold.load(jsonl([user_item("hi")])).metadata["source_format"] == "codex"
    plain = [{"role": "user", "content": "hi"}]
    assert turnfold.load(plain).metadata["source_format"] != "codex"


def test_L4_codex_truncated_last_line() -> None:
    text = (
        jsonl([meta(), user_item("q"), assistant_item("a")]) + '{"timestamp": "2026-05-12T10:00:0'
    )
    t = turnfold.load(text)
    assert [e.kind for e in t] == ["user", "assistant"]
    (warning,) = t.warnings
    assert warning.line == 4
    assert "invalid JSON" in warning.reason


def test_L4_codex_unknown_types_are_tolerated() -> None:
    t = load(
        user_item("q"),
        env("brand_new_record", {"x": 1}),
        env("brand_new_record", {"x": 2}),
        event("brand_new_event", x=1),
        event("brand_new_event", x=2),
        item("brand_new_item", x=1),
        env("world_state", {"full": True}),
        event("item_completed", item={"type": "AgentMessage"}),
        item("ghost_snapshot", ghost_commit={"id": "abc"}),
        assistant_item("a"),
    )
    assert [e.kind for e in t] == ["user", "assistant"]
    reasons = [(w.line, w.reason) for w in t.warnings]
    assert len(reasons) == 3  # one per unknown record / event type, one per unknown item
    assert [line for line, _ in reasons] == [3, 5, 7]


def test_L4_codex_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "rollout-empty.jsonl"
    path.write_text("")
    for fmt in (None, "codex"):
        with pytest.raises(TranscriptFormatError, match="empty"):
            turnfold.load(path, format=fmt)


def test_L4_codex_claude_code_file_is_a_clear_error() -> None:
    path = FIXTURES / "claude-code_v2.1.x_schema-coverage.jsonl"
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(path, format="codex")
    message = str(caught.value)
    assert str(path) in message
    assert "codex" in message
    assert "line 1" in message


def test_L4_codex_input_records_are_not_modified() -> None:
    records = [
        meta(),
        user_item("q"),
        call("c1"),
        output("c1", "Exit code: 0\nOutput:\nok"),
        assistant_item("a"),
    ]
    before = copy.deepcopy(records)
    t = turnfold.load(records, format="codex")
    assert len(t) == 3
    assert records == before


def test_L4_codex_ten_megabyte_tool_output_loads() -> None:
    big = "x" * (10 * 1024 * 1024)
    t = load(user_item("q"), call("c1"), output("c1", f"Exit code: 0\nOutput:\n{big}"))
    c = only_call(t)
    assert c.status == "success"
    assert len(c.result.text) == len(big)


def _big_rollout(turns: int) -> str:
    """A rollout shaped like real ones: encrypted reasoning, KB-sized outputs, rate limits."""
    two_turns = (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_text().splitlines()
    context = json.loads(two_turns[4])["payload"]
    counts = json.loads(two_turns[11])["payload"]
    records: list[Any] = [meta(base_instructions={"text": "You are Codex. " * 700})]
    for n in range(turns):
        question = f"question {n} " + "words " * 30
        thought = f"**Thinking {n}**\n\n" + "reason " * 40
        records += [
            event("task_started", turn_id=f"t{n}"),
            user_item("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
            env("turn_context", context),
            user_item(question),
            event("user_message", message=question),
            event("token_count", info=None, rate_limits=counts["rate_limits"]),
            reasoning([thought], encrypted="gAAAAB" + f"{n:06d}" * 500),
            event("agent_reasoning", text=thought),
            call(f"c{n}a", command=["bash", "-lc", f"cat file{n}.py"]),
            event(
                "exec_command_end", call_id=f"c{n}a", exit_code=0, duration={"secs": 0, "nanos": 9}
            ),
            output(
                f"c{n}a", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" + "code line\n" * 150
            ),
            reasoning([], encrypted="gAAAAB" + f"{n:06d}" * 300),
            call(f"c{n}b", command=["bash", "-lc", "pytest -q"]),
            output(f"c{n}b", json.dumps({"output": "ok " * 300, "metadata": {"exit_code": 1}})),
            event("token_count", info=counts["info"], rate_limits=counts["rate_limits"]),
            event("agent_message", message=f"answer {n} " + "text " * 60),
            assistant_item(f"answer {n} " + "text " * 60),
            event("token_count", info=counts["info"], rate_limits=counts["rate_limits"]),
            event("task_complete", turn_id=f"t{n}", duration_ms=1000 + n),
        ]
    return jsonl(records)


def test_codex_a_long_realistic_rollout_loads_completely(tmp_path: Path) -> None:
    # Its speed is measured by benchmarks/, not asserted here: timing has no place in tests.
    path = tmp_path / "rollout-big.jsonl"
    path.write_text(_big_rollout(200))
    t = turnfold.load(path)
    assert len(t.tool_calls()) == 400
    assert len(of(t, UserMessage)) == 200


def test_L1_codex_builder_reports_each_change_to_observers() -> None:
    t = Transcript()
    builder = codex.CodexBuilder(t, live=True)
    seen: list[tuple[str, str, tuple[str, ...]]] = []
    t.observe(lambda change: seen.append((change.action, change.entry.kind, change.fields)))
    for line, record in enumerate(
        [meta(), user_item("q"), call("c1"), output("c1", "Exit code: 0\nOutput:\n")], 1
    ):
        builder.feed(record, line)
    assert seen[:2] == [("append", "user", ()), ("append", "tool_call", ())]
    assert seen[2][0:2] == ("update", "tool_call")
    assert "status" in seen[2][2]
    assert t.tool_calls()[0].status == "success"


def test_P7_codex_abort_keeps_an_outcome_already_recorded() -> None:
    t = load(
        event("task_started"),
        user_item("q"),
        call("c1"),
        event("exec_command_end", call_id="c1", exit_code=0),
        event("turn_aborted", reason="interrupted"),
    )
    assert only_call(t).status == "success"


def test_L5_codex_live_turn_end_leaves_running_calls_unknown() -> None:
    t = Transcript()
    builder = codex.CodexBuilder(t, live=True)
    records = [meta(), event("task_started"), user_item("q"), call("a"), call("b")]
    records += [event("exec_command_end", call_id="b", exit_code=1), event("task_complete")]
    for line, record in enumerate(records, 1):
        builder.feed(record, line)
    assert [c.status for c in t.tool_calls()] == ["unknown", "error"]


def test_L2_codex_injected_part_of_a_prompt_message_is_dropped() -> None:
    content = [
        {
            "type": "input_text",
            "text": "<environment_context>\n<cwd>/r</cwd>\n</environment_context>",
        },
        {"type": "input_text", "text": "fix the test"},
    ]
    t = load(item("message", role="user", content=content))
    assert [m.text for m in of(t, UserMessage)] == ["fix the test"]


# --- issues 11 and 21: hand-made rollouts of the newest shapes (tests/fixtures/codex/) -----------

CODEX_DIR = FIXTURES / "codex"
THREADS = CODEX_DIR / "threads"
PARENT = THREADS / "rollout-2026-05-12T10-00-00-019c1a00-0000-7000-8000-0000000000aa.jsonl"
CHILD_1 = "019c1a00-0000-7000-8000-0000000000c1"
CHILD_2 = "019c1a00-0000-7000-8000-0000000000c2"


def calls_by_id(transcript: Transcript) -> dict[str, ToolCall]:
    return {c.call_id: c for c in transcript.tool_calls()}


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        ("failed in sandbox LinuxSeccomp with execution error: exit code: 2, stdout: ", True),
        ("patch rejected by user", True),
        ("exec command rejected by user", True),
        ("apply_patch verification failed: Failed to find expected lines in a.py", True),
        ("command timed out after 1000 milliseconds", True),
        ("collab spawn failed: agent thread limit reached", True),
        ('error: Failed to find expected lines ["x = 1"] in /src/a.py', True),  # Codex 0.3x
        ("tool call error: tool call failed for `memory/add_observations`", True),  # 0.3x MCP
        ("execution error: No such file or directory (os error 2)", True),  # could not run
        ("no error: all 3 checks passed", False),
        ("Process exited with code 0", False),
        ("exit code: 0", False),
        ("a.txt\nb.txt\n", False),
        ("Success. Updated the following files:\nM a.py", False),
        ("all good\nlater: 3 rejected rows were re-queued", False),  # only the first line speaks
    ],
)
def test_issue11_6_codex_failure_stated_in_plain_text(text: str, failed: bool) -> None:
    assert codex.states_failure(text) is failed


def test_issue11_6_codex_040_plain_string_failures_are_errors() -> None:
    t = turnfold.load(CODEX_DIR / "v0.40-0.47_plain-failures.jsonl")
    calls = calls_by_id(t)
    for call_id in ("call_t1", "call_t2", "call_t3", "call_p1", "call_p3"):
        assert calls[call_id].status == "error", call_id
    assert calls["call_ok"].status == "success"
    success, failed = calls["call_p2"], calls["call_p3"]
    assert success.result.text == "Success. Updated the following files:\nM src/app.py\n"
    assert success.args.startswith("*** Begin Patch")  # the patch once: the edit's content
    assert failed.result.text.startswith("apply_patch verification failed: Failed to find")


def test_L3_codex_real_040_plan_update_and_execution_error() -> None:
    """A real Codex 0.40 rollout, trimmed: ``update_plan`` answered ``Plan updated`` (its
    answer when it took the plan) and a ``shell`` call whose ``workdir`` did not exist, which
    Codex answered ``execution error: …`` (the command never ran)."""
    t = turnfold.load(CODEX_DIR / "v0.40_real_plan-updated-and-execution-error.jsonl")
    calls = calls_by_id(t)
    plan = calls["call_TPcnu98j6Rai1J4WNbTDCV5j"]
    assert (plan.status, plan.result.kind) == ("success", "plan")
    shell = calls["call_TbWsObD3QO1QALo1lRMCgMyY"]
    assert shell.status == "error"
    assert shell.result.text == "execution error: No such file or directory (os error 2)"
    assert t.warnings == []


def test_L3_codex_update_plan_says_nothing_of_success_otherwise() -> None:
    t = load(call("u1", name="update_plan", plan=[]), output("u1", "plan noted"))
    assert only_call(t).status == "unknown"


LEGACY_FAILURES = CODEX_DIR / "v0.3x-legacy_hand-made_apply-patch-and-mcp-failures.jsonl"


def test_L3_codex_legacy_rollout_states_its_own_failures() -> None:
    """Codex 0.2x-0.3x wrote no event beside an output: a patch run through ``shell`` that
    does not apply (``error: …``) and a failed MCP call (``tool call error: …``) say so only
    in their text (the shapes of a real rollout of September 2025)."""
    t = turnfold.load(LEGACY_FAILURES)
    status = {c.call_id: c.status for c in t.tool_calls()}
    assert status == {
        "call_01": "unknown",  # an MCP result: content blocks, no success flag
        "call_02": "error",  # tool call error: tool call failed for `memory/add_observations`
        "call_03": "success",
        "call_04": "error",  # error: Failed to find expected lines [...]
        "call_05": "success",
        "call_06": "error",  # failed in sandbox ... exit code: 1
        "call_07": "success",  # update_plan: Plan updated
    }
    assert t.warnings == []


def test_L2_codex_legacy_mcp_result_shows_its_blocks_text_and_images() -> None:
    """Codex of mid-2025 wrote an MCP call's result as its content blocks encoded in the
    output string: shown as escaped JSON (``[{"text":"Line one\\nLine two",…}]``). Its text
    blocks are its text, an image block an image; other output stays as it is."""
    calls = calls_by_id(turnfold.load(LEGACY_FAILURES))
    read_graph = calls["call_01"].result
    assert read_graph is not None
    assert read_graph.text is not None
    assert read_graph.text.startswith("{")  # the block's own text, a JSON document
    assert '"type"' not in read_graph.text
    blocks = [{"type": "text", "text": "Line one\nLine two"},
              {"type": "image", "data": "aGk=", "mimeType": "image/png"}]  # fmt: skip
    output = json.dumps(blocks)
    records = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "name": "web__fetch", "arguments": "{}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": output},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c2"},
        {"type": "function_call_output", "call_id": "c2", "output": output},
    ]
    head = {"id": "s", "timestamp": "2025-09-10T18:58:38.331Z", "instructions": None}
    text = "".join(json.dumps(r) + "\n" for r in [head, *records])
    fetched, shell = turnfold.load(text, format="codex").tool_calls()
    assert fetched.result is not None
    assert fetched.result.text == "Line one\nLine two"
    assert [(i.media_type, i.data) for i in fetched.result.images] == [("image/png", "aGk=")]
    assert shell.result is not None
    assert shell.result.text == output  # not an MCP tool: its output as it printed it


def test_L2_a_shell_command_that_feeds_apply_patch_a_heredoc_is_an_edit_as_codex_runs_it() -> None:
    """``["bash", "-lc", "apply_patch << 'PATCH' …"]``: Codex runs it as its patch tool
    (``extract_apply_patch_from_bash``), so it reads as an edit of the files it names; the
    name it was called by and its command are kept."""
    from turnfold.formats.openai_responses import patch_text
    from turnfold.process import tool_category

    calls = calls_by_id(turnfold.load(LEGACY_FAILURES))
    for call_id in ("call_04", "call_05"):
        call = calls[call_id]
        assert (call.name, call.meta["called_as"], tool_category(call.name)) == (
            "apply_patch", "shell", "edit",
        )  # fmt: skip
        assert call.description == "src/App.tsx"
        assert call.args["command"][:2] == ["bash", "-lc"]
    assert calls["call_05"].result is not None  # the tool's message; the patch is its args
    assert calls["call_05"].result.text.startswith("Success. Updated the following files:")
    assert calls["call_03"].name == "shell"  # a command that is no patch stays one
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    for script, found in [
        (f"apply_patch <<'EOF'\n{patch}\nEOF\n", True),
        (f"cd src && applypatch <<EOF\n{patch}\nEOF", True),
        (f'apply_patch <<"EOF"\n{patch}\nEOF', True),
        (f"apply_patch <<'EOF'\n{patch}\nEOF\nrm -rf build", False),  # more than the patch
        (f"cat <<'EOF'\n{patch}\nEOF", False),
    ]:
        assert (patch_text("shell", {"command": ["bash", "-lc", script]}) == patch) is found


def test_L2_codex_0_171_exec_command_feeding_apply_patch_a_heredoc_is_an_edit() -> None:
    """Codex 0.171's ``exec_command`` takes one script, ``{"cmd": "apply_patch <<'PATCH' …"}``;
    Codex intercepts it as its patch tool and records a ``FileChange`` for it, not a
    ``CommandExecution``: an edit of the file it names (records as the real 0.171 wrote them
    in tests/agents' work scenario, trimmed)."""
    script = (
        "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: notes.txt\n@@\n A file.\n"
        "-TF-NOTE-LINE\n+TF-EDITED\n*** End Patch\nPATCH"
    )
    records = [
        {"timestamp": "2026-12-06T03:18:35.865Z", "type": "session_meta",
         "payload": {"id": "01a2495c-4e55", "cwd": "/w", "originator": "codex_exec"}},
        {"timestamp": "2026-12-06T03:18:36.501Z", "type": "response_item",
         "payload": {"type": "function_call", "status": "completed", "name": "exec_command",
                     "arguments": json.dumps({"cmd": script}), "call_id": "call_3_0"}},
        {"timestamp": "2026-12-06T03:18:36.518Z", "type": "event_msg",
         "payload": {"type": "item_completed", "item": {
             "type": "FileChange", "id": "call_3_0", "status": "completed",
             "changes": {"/w/notes.txt": {"type": "update", "move_path": None,
                                          "unified_diff": "@@ -1,2 +1,2 @@\n A file.\n"
                                          "-TF-NOTE-LINE\n+TF-EDITED\n"}},
             "stdout": "Success. Updated the following files:\nM notes.txt\n", "stderr": ""},
             "started_at_ms": 1796527116516, "completed_at_ms": 1796527116518}},
        {"timestamp": "2026-12-06T03:18:36.520Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "call_3_0",
                     "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\n"
                     "Success. Updated the following files:\nM notes.txt\n"}},
    ]  # fmt: skip
    t = turnfold.load(jsonl(records), format="codex")
    assert not t.warnings
    (call,) = t.tool_calls()
    assert (call.name, call.meta.get("called_as"), call.description, call.status) == (
        "apply_patch",
        "exec_command",
        "notes.txt",
        "success",
    )
    assert call.args == {"cmd": script}  # the command as it was called, kept
    assert call.result is not None
    assert "+TF-EDITED" in (call.result.text or "")
    from turnfold.formats.openai_responses import patch_text

    assert patch_text("exec_command", {"cmd": "apply_patch <<'PATCH'\nx\nPATCH\nls"}) is None


def test_issue11_6_codex_apply_patch_message_is_on_the_page_and_the_patch_once() -> None:
    from turnfold.render.page import render_page

    page = render_page(turnfold.load(CODEX_DIR / "v0.40-0.47_plain-failures.jsonl"))
    assert page.count("Success. Updated the following files:") == 1
    assert "apply_patch verification failed: Failed to find expected lines" in page
    assert page.count("+print(&#x27;hello&#x27;)") == 3  # two apply_patch args, one shell argv


def test_issue21_1_codex_child_threads_linked_by_their_ids_whatever_the_file_names() -> None:
    t = turnfold.load(PARENT)
    calls = calls_by_id(t)
    v1, v2 = calls["call_sp1"].subagent, calls["call_sp2"].subagent
    assert v1 is not None
    assert v1.agent_id == CHILD_1
    assert v1.name == "Kepler"
    assert v2 is not None
    assert v2.agent_id == CHILD_2
    assert v1.transcript is not None
    assert v1.transcript.metadata["session_id"] == CHILD_1
    assert v2.transcript is not None
    assert v2.transcript.metadata["session_id"] == CHILD_2
    assert v1.tool_count == 1
    assert v2.tool_count == 1
    assert t.accounting is not None
    assert t.accounting.unaccounted == []
    # The children's records are part of the load's accounting.
    assert t.accounting.counts["session_meta"]["mapped"] == 3


def _rollout(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonl(records), encoding="utf-8")
    return path


def _child(thread_id: str, parent: str = "sess-1", nickname: str = "Ada") -> list[Any]:
    spawn = {"parent_thread_id": parent, "depth": 1, "agent_nickname": nickname}
    return [
        env("session_meta", {"id": thread_id, "source": {"subagent": {"thread_spawn": spawn}}}),
        user_item("task"),
        call("c1", "exec_command", cmd="ls"),
        output("c1", "Process exited with code 0\nOutput:\na\n"),
    ]


def test_issue21_1_codex_child_thread_found_in_the_sessions_date_tree(tmp_path: Path) -> None:
    sessions = tmp_path / ".codex" / "sessions"
    thread = "019c2b00-0000-7000-8000-000000000001"
    parent = _rollout(
        sessions / "2026" / "05" / "12" / "rollout-2026-05-12T23-59-00-sess-1.jsonl",
        [
            meta(),
            call("sp", "spawn_agent", message="late work"),
            event("collab_agent_spawn_end", call_id="sp", new_thread_id=thread),
            output("sp", json.dumps({"agent_id": thread})),
        ],
    )
    _rollout(sessions / "2026" / "05" / "13" / f"{thread}.jsonl", _child(thread))
    agent = calls_by_id(turnfold.load(parent))["sp"].subagent
    assert agent is not None
    assert agent.transcript is not None
    assert agent.transcript.metadata["session_id"] == thread


def test_issue21_1_codex_child_thread_found_by_its_parent_id(tmp_path: Path) -> None:
    """A spawn that recorded no thread id still finds the file naming this session its parent."""
    parent = _rollout(tmp_path / "sess-1.jsonl", [meta(), call("sp", "spawn_agent", message="x")])
    _rollout(tmp_path / "child-file.jsonl", _child("t-9", nickname="Ada"))
    _rollout(tmp_path / "stranger.jsonl", _child("t-8", parent="someone-else"))
    agent = calls_by_id(turnfold.load(parent))["sp"].subagent
    assert agent is not None
    assert agent.transcript is not None
    assert agent.transcript.metadata["session_id"] == "t-9"
    assert agent.name == "Ada"


def test_issue21_2_codex_code_mode_exec_shows_what_it_ran_with_its_calls_nested() -> None:
    t = turnfold.load(CODEX_DIR / "code-mode_exec.jsonl")
    (exec_call,) = t.tool_calls()
    assert exec_call.name == "exec"
    assert exec_call.description == "npm test"
    assert exec_call.status == "error"  # the script printed exit_code: 1
    assert exec_call.subagent is not None
    assert exec_call.subagent.transcript is not None
    inner = exec_call.subagent.transcript.tool_calls()
    assert [(c.name, c.status) for c in inner] == [
        ("mcp__github__get_pull_request", "success"),
        ("mcp__github__get_issue", "error"),  # isError
        ("mcp__linear__get_issue", "error"),  # transport failure (Err)
        ("apply_patch", "success"),
    ]
    assert inner[2].result.text == "MCP transport closed: connection reset"
    assert inner[3].result.text.startswith("Success. Updated the following files:\nA NOTES.md")
    assert exec_call.subagent.tool_count == 4


@pytest.mark.parametrize(
    ("printed", "status"),
    [("exit_code: 0\n", "success"), ('{"exit_code": 3}', "error"), ("hello\n", "unknown")],
)
def test_issue21_2_codex_code_mode_status_from_what_it_printed(printed: str, status: str) -> None:
    script = 'const r = await tools.exec_command({cmd: "make"}); console.log(r);'
    t = load(
        item("custom_tool_call", call_id="x1", name="exec", input=script, status="completed"),
        item("custom_tool_call_output", call_id="x1", output=printed),
    )
    c = only_call(t)
    assert (c.description, c.status) == ("make", status)


def test_issue21_2_codex_code_mode_cell_passing_its_command_as_a_string_is_described_by_it() -> (
    None
):
    # The real Codex 0.171 (v0.171_code-mode-string-argument_recipe.py): a string handed to
    # tools.exec_command is refused before anything runs; the cell asked for that command all
    # the same, and its answer says it was refused.
    t = turnfold.load(CODEX_DIR / "v0.171_code-mode-string-argument.jsonl")
    assert t.warnings == []
    cells = {c.call_id: c for c in t.tool_calls()}
    assert [(k, c.name, c.description, c.status) for k, c in cells.items()] == [
        ("call_cell1", "exec", "echo TF-STRING-ARG", "error"),  # Script failed
        ("call_cell2", "exec", "echo TF-STRING-CAUGHT; echo TF-OBJECT-ARG", "success"),
    ]
    refused = "tool `exec_command` expects a JSON object for arguments"
    assert all(refused in (c.result.text if c.result else "") for c in cells.values())
    # Only the object form ran: the one command nested under its cell.
    assert cells["call_cell1"].subagent is None
    assert nested(cells["call_cell2"]) == [("echo TF-OBJECT-ARG", "success", 0)]


@pytest.mark.parametrize(
    ("script", "description"),
    [
        ("await tools.exec_command('npm  test');", "npm test"),
        ('await tools.exec_command(`make ${"all"}`);', 'make ${"all"}'),
        ('await tools.exec_command({"cmd": "make", yield_time_ms: 5});', "make"),
        ("await tools.exec_command(command);", "exec_command"),  # no literal: the tool
    ],
)
def test_issue21_2_codex_code_mode_command_in_every_literal_form(
    script: str, description: str
) -> None:
    t = load(
        item("custom_tool_call", call_id="x1", name="exec", input=script, status="completed"),
        item("custom_tool_call_output", call_id="x1", output="Script completed\nOutput:\n"),
    )
    assert only_call(t).description == description


def test_issue21_7_codex_multi_agent_calls_have_outcomes_and_names() -> None:
    calls = calls_by_id(turnfold.load(PARENT))
    for call_id in ("call_sp1", "call_w1", "call_sp2", "call_sm", "call_la", "call_wt"):
        assert calls[call_id].status == "success", call_id
    assert calls["call_sp2"].subagent is not None
    assert calls["call_sp2"].subagent.name == "test_checker"  # task_name / agent_path
    assert calls["call_sp3"].status == "error"  # collab spawn failed: agent thread limit
    assert calls["call_sp4"].status == "error"  # collab_agent_spawn_end status not_found
    assert calls["call_sp4"].subagent is not None
    assert calls["call_sp4"].subagent.transcript is None


def test_issue21_8_codex_mail_is_one_row_inside_the_turn() -> None:
    from turnfold.process import Turn, project

    t = turnfold.load(PARENT)
    mails = [c for c in t.tool_calls() if c.name == "agent_message"]
    assert [m.description for m in mails] == ["/root/test_checker → /root"] * 2
    assert mails[0].result.text == "**2 failing**: `test_greeting`, `test_farewell`."
    assert mails[0].result.kind == "markdown"
    assert mails[0].meta["mail_message_type"] == "task_update"
    assert mails[1].result.text == "*(encrypted)*"
    assert of(t, SystemNotice) == []
    assert sum(isinstance(item, Turn) for item in project(t)) == 1  # one prompt, one turn


def test_issue21_9_codex_review_one_prompt_one_answer_and_what_was_reviewed() -> None:
    t = turnfold.load(CODEX_DIR / "review-mode.jsonl")
    assert len(of(t, UserMessage)) == 1
    (answer,) = of(t, AssistantText)
    assert answer.text.startswith("The change renames the greeting but leaves a stale test.")
    (notice,) = of(t, SystemNotice)
    assert notice.text == "Code review of current changes (uncommitted changes)"


def test_issue21_9_codex_review_answer_kept_when_no_text_repeats_it() -> None:
    review = {"overall_explanation": "Looks fine.", "findings": [{"title": "Nit: naming"}]}
    t = load(
        event("entered_review_mode", target={"type": "baseBranch", "branch": "main"}),
        event("exited_review_mode", review_output=review),
        event("task_complete"),
    )
    assert of(t, SystemNotice)[0].text == "Code review of changes against main"
    assert [a.text for a in of(t, AssistantText)] == ["Looks fine.\n- Nit: naming"]


def test_issue21_12_codex_mcp_namespace_kept_in_the_name() -> None:
    calls = calls_by_id(turnfold.load(PARENT))
    github = calls["call_gh"]
    assert github.name == "mcp__codex_apps__github__fetch_pr"
    assert github.meta["namespace"] == "mcp__codex_apps__github"
    assert github.meta["tool"] == "_fetch_pr"
    assert calls["call_sp2"].name == "spawn_agent"  # other namespaces keep the plain name


def test_issue21_13_codex_model_per_response_with_switches() -> None:
    t = turnfold.load(PARENT)
    calls = calls_by_id(t)
    assert calls["call_sp1"].meta["model"] == "gpt-5.2-codex"  # a response of calls only
    assert calls["call_gh"].meta["model"] == "gpt-5.2-codex-mini"  # thread_settings_applied
    assert [a.model for a in of(t, AssistantText)] == ["gpt-5.2-codex-mini"]
    assert t.metadata["model"] == "gpt-5.2-codex"


def test_issue11_codex_every_record_accounted_for() -> None:
    t = load(
        env("world_state", {"files": []}),
        event("exec_command_begin", call_id="c"),
        event("brand_new_event", x=1),
        event("brand_new_event", x=2),
        item("ghost_snapshot", ghost_commit={"id": "abc"}),
        user_item("hi"),
    )
    accounting = t.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["event_msg/brand_new_event"] == {"warned": 2}
    assert accounting.counts["world_state"] == {"ignored": 1}
    assert accounting.counts["response_item/ghost_snapshot"] == {"ignored": 1}
    assert accounting.counts["event_msg/exec_command_begin"] == {"ignored": 1}
    assert accounting.counts["response_item/message"] == {"mapped": 1}
    assert set(accounting.counts) <= codex.RECORDS.known() | {"event_msg/brand_new_event"}


def test_Q1_codex_works_out_each_call_s_patch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``patch_text`` runs a regex over every shell command: once per call, not once for the
    rename, once for the description and twice more when the output arrives."""
    from turnfold.formats import openai_responses

    seen: list[str] = []
    real = openai_responses.patch_text

    def counting(name: str, args: Any) -> str | None:
        seen.append(name)
        return real(name, args)

    monkeypatch.setattr(openai_responses, "patch_text", counting)
    heredoc = ["bash", "-lc", PATCH_CMD]
    t = load(
        call("c1", "shell", command=["bash", "-lc", "ls"]),
        output("c1", "a.py\n"),
        call("p1", "shell", command=heredoc),
        output("p1", "Success. Updated the following files:\nM notes.txt\n"),
    )
    assert len(seen) == 2
    ls, patch = t.tool_calls()
    assert (ls.name, ls.description) == ("shell", "ls")
    assert ls.result is not None
    assert ls.result.kind != "diff"
    assert (patch.name, patch.meta["called_as"], patch.description) == (
        "apply_patch",
        "shell",
        "notes.txt",
    )
    assert patch.result is not None
    assert patch.result.text == "Success. Updated the following files:\nM notes.txt\n"


# --- plan mode (core/src/session/turn.rs): the reply, its event copy and its Plan item ---------

PLAN_REPLY = (
    "I looked at the repo.\n<proposed_plan>\n1. Add tests\n2. Fix the parser\n</proposed_plan>"
    "\nShall I proceed?"
)
PLAN_SHOWN = (
    "I looked at the repo.\n\n**Proposed plan**\n\n1. Add tests\n2. Fix the parser"
    "\n\n---\n\nShall I proceed?"
)
PLAN_TEXT = "1. Add tests\n2. Fix the parser\n"


def plan_item(text: str = PLAN_TEXT) -> dict[str, Any]:
    return event(
        "item_completed", turn_id="t1", item={"type": "Plan", "id": "t1-plan", "text": text}
    )


def plan_event() -> dict[str, Any]:
    return event("agent_message", message="I looked at the repo.\nShall I proceed?")


PLAN_MODE = env(
    "turn_context",
    {"turn_id": "t1", "cwd": "/repo", "collaboration_mode": {"mode": "plan", "settings": {}}},
)
PLAN_ORDERS = {
    # today's order: the Plan item, the reply's event, then the reply (turn.rs)
    "plan-event-item": [plan_item(), plan_event(), assistant_item(PLAN_REPLY)],
    "item-event-plan": [PLAN_MODE, assistant_item(PLAN_REPLY), plan_event(), plan_item()],
    "task-started-says-plan": [
        event("task_started", turn_id="t1", collaboration_mode_kind="plan"),
        assistant_item(PLAN_REPLY),
        plan_event(),
        plan_item(),
    ],
    "paginated": [
        PLAN_MODE,
        plan_item(),
        assistant_item(PLAN_REPLY),
        event(
            "item_completed",
            turn_id="t1",
            item={
                "type": "AgentMessage",
                "id": "m",
                "content": [{"type": "Text", "text": "I looked at the repo.\nShall I proceed?"}],
            },
        ),
    ],
}


@pytest.mark.parametrize("records", list(PLAN_ORDERS.values()), ids=list(PLAN_ORDERS))
def test_P2_codex_plan_mode_reply_is_one_answer_with_its_plan(records: list[Any]) -> None:
    from turnfold.process import Turn, project

    t = load(user_item("Plan the fix."), *records, event("task_complete", duration_ms=2400))
    (answer,) = of(t, AssistantText)
    assert answer.text == PLAN_SHOWN
    assert answer.meta["proposed_plan"] == "1. Add tests\n2. Fix the parser"
    assert answer.meta["turn_duration_ms"] == 2400
    (turn,) = [x for x in project(t) if isinstance(x, Turn)]
    assert turn.answer is answer  # the plan is in the answer, not folded in the process
    assert t.warnings == []


def test_P2_codex_plan_item_no_reply_carried_is_kept() -> None:
    t = load(
        PLAN_MODE,
        user_item("Plan the fix."),
        plan_item(),
        event("task_complete"),
        user_item("next"),
    )
    (plan,) = of(t, AssistantText)
    assert plan.text == "**Proposed plan**\n\n1. Add tests\n2. Fix the parser"
    assert t.entries.index(plan) < t.entries.index(of(t, UserMessage)[1])  # in its own turn


def test_L2_codex_proposed_plan_tag_outside_plan_mode_is_plain_text() -> None:
    """Codex parses the block in Plan mode only; elsewhere the tag is just text."""
    t = load(user_item("q"), assistant_item(PLAN_REPLY))
    assert [a.text for a in of(t, AssistantText)] == [PLAN_REPLY]


# --- inter-agent mail of June 2026 builds, goals, new bookkeeping records ---------------------


def test_issue21_8_codex_inter_agent_communication_record_is_mail() -> None:
    mail = {"id": "amsg_1", "author": "/root/worker", "recipient": "/root",
            "other_recipients": ["/root/reviewer"], "content": "Tests: 2 FAILED.",
            "trigger_turn": True}  # fmt: skip
    sealed = {**mail, "id": "amsg_2", "content": "", "encrypted_content": "gAAA"}
    t = load(
        user_item("Ask the worker to run the tests."),
        env("inter_agent_communication", mail),
        env("inter_agent_communication", sealed),
        assistant_item("Done."),
    )
    first, second = t.tool_calls()
    assert (first.call_id, first.name, first.status) == ("amsg_1", "agent_message", "success")
    assert first.description == "/root/worker → /root, /root/reviewer"
    assert first.result is not None
    assert first.result.text == "Tests: 2 FAILED."
    assert second.result is not None
    assert second.result.text == "*(encrypted)*"
    assert t.warnings == []
    assert t.accounting is not None
    assert t.accounting.counts["inter_agent_communication"] == {"mapped": 2}


def test_L2_codex_thread_goal_kept_and_noticed_when_it_changes() -> None:
    def goal(status: str, used: int) -> dict[str, Any]:
        return event("thread_goal_updated", threadId="th", turnId="t1",
                     goal={"threadId": "th", "objective": "Ship the parser fix",
                           "status": status, "tokensUsed": used})  # fmt: skip

    t = load(user_item("go"), goal("active", 0), goal("active", 900), goal("budgetLimited", 2000))
    assert [n.text for n in of(t, SystemNotice)] == [
        "Goal: Ship the parser fix",
        "Goal budget limited: Ship the parser fix",
    ]
    assert t.metadata["goal"] == {"objective": "Ship the parser fix", "status": "budgetLimited"}


def test_issue11_codex_security_risk_score_is_bookkeeping() -> None:
    t = load(env("security_risk_score", {"scores": {"prompt_injection": 0.01}}), user_item("hi"))
    assert t.warnings == []
    assert t.accounting is not None
    assert t.accounting.counts["security_risk_score"] == {"ignored": 1}


def test_L3_codex_diff_names_a_file_outside_the_cwd_by_its_absolute_path() -> None:
    changes = {
        "/etc/hosts": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n"},
        "/repo/new.txt": {"type": "add", "content": "x\n"},
        "/tmp/gone.txt": {"type": "delete", "content": "y\n"},
    }
    assert codex.changes_diff(changes, "/repo") == (
        "--- /etc/hosts\n+++ /etc/hosts\n@@ -1 +1 @@\n-a\n+b\n"
        "--- /dev/null\n+++ b/new.txt\n+x\n"
        "--- /tmp/gone.txt\n+++ /dev/null\n-y\n"
    )


def test_L2_codex_an_aborted_turn_s_duration_counts_in_the_session_s() -> None:
    # Codex 0.171 (the real file): a finished turn of 1020 ms, then one stopped after 2087 ms.
    t = turnfold.load(FIXTURES / "codex" / "v0.171_apply-patch-and-interrupt.jsonl")
    assert t.metadata["duration_ms"] == 1020 + 2087
    abort = next(e for e in t if isinstance(e, AbortMarker))
    assert abort.meta["turn_duration_ms"] == 2087
