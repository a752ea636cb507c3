"""Independent tool-call counters (issue 11): each counts a source file's own tool-call records.

Written apart from the loaders, from the formats' documentation, in a few lines each, so that a
loader that drops calls (a new record type, a sub-agent file it did not find) disagrees with
them. A counter counts what the source holds, sub-agents included: a call recorded twice (in a
sub-agent file and in the parent's progress records) is one call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _records(path: Path) -> Iterator[Any]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        document = json.loads(text)
    except ValueError:
        for line in text.splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue
        return
    yield from document if isinstance(document, list) else [document]


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def claude_code(path: Path) -> int:
    """Distinct ``tool_use`` ids in the session, its inline sidechains, its progress records and
    its sub-agent files, plus ``!`` shell commands (``<bash-input>`` prompts).

    A sub-agent's step in a progress record is ``data.message``: a user/assistant record whose
    ``message`` holds the blocks, or (some writers) the bare message itself. A background
    task's notification is a user record too, but never a shell command.
    """
    files = [path, *sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))]
    files += sorted(p for p in path.parent.glob("agent-*.jsonl") if p != path)
    ids: set[str] = set()
    shells = 0
    for file in files:
        for record in _records(file):
            if not isinstance(record, dict):
                continue
            messages = [record.get("message")]
            data = record.get("data")
            if record.get("type") == "progress" and isinstance(data, dict):
                step = data.get("message") or {}
                messages.append(step.get("message") if "message" in step else step)
            for message in messages:
                for block in _blocks(message):
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        ids.add(str(block.get("id")))
            content = (record.get("message") or {}).get("content")
            shell = isinstance(content, str) and "<bash-input>" in content
            notified = (record.get("origin") or {}).get("kind") == "task-notification"
            shells += record.get("type") == "user" and shell and not notified
    return len(ids) + shells


#: Codex response items that are tool calls, and those that are their outputs.
_CODEX_CALLS = {
    "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
    "image_generation_call", "tool_search_call",
}  # fmt: skip
_CODEX_OUTPUTS = {"function_call_output", "custom_tool_call_output", "tool_search_output"}
#: End events of calls a code-mode script made: no response item holds them.
_CODEX_INNER_ENDS = {"mcp_tool_call_end", "patch_apply_end", "exec_command_end"}


def _codex_header(path: Path) -> dict[str, Any]:
    first = next(_records(path), None)
    payload = first.get("payload") if isinstance(first, dict) else None
    return payload if isinstance(payload, dict) and first.get("type") == "session_meta" else {}


def codex(path: Path, _depth: int = 0) -> int:
    """Per rollout: its tool-call response items; outputs whose call the file does not hold
    (the call ran before the file's start); inter-agent mail items (one row each); end events
    of code-mode calls (``call_id`` held by no response item); and, recursively, the rollouts
    beside it whose ``session_meta`` names this thread as their parent."""
    records = [r for r in _records(path) if isinstance(r, dict)]
    items = [r["payload"] for r in records if r.get("type") == "response_item"]
    item_ids = {p.get("call_id") for p in items if isinstance(p, dict)}
    count, calls = 0, set()
    for payload in items:
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind in _CODEX_CALLS:
            count += 1
            calls.add(payload.get("call_id"))
        else:
            orphan = kind in _CODEX_OUTPUTS and payload.get("call_id") not in calls
            count += orphan or kind == "agent_message"
    inner = {
        p.get("call_id")
        for r in records
        if r.get("type") == "event_msg"
        and isinstance(p := r.get("payload"), dict)
        and p.get("type") in _CODEX_INNER_ENDS
        and str(p.get("call_id")).startswith("exec-")
        and p.get("call_id") not in item_ids
    }
    count += len(inner)
    thread = _codex_header(path).get("id")
    if thread and _depth < 4:
        for other in sorted(path.parent.glob("*.jsonl")):
            source = (_codex_header(other).get("source") or {}) if other != path else {}
            spawn = (source.get("subagent") or {}) if isinstance(source, dict) else {}
            spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
            if isinstance(spawn, dict) and spawn.get("parent_thread_id") == thread:
                count += codex(other, _depth + 1)
    return count


def gemini(path: Path) -> int:
    """Distinct ``toolCalls[].id`` of the chat's messages (JSONL rewrites a message by id)."""
    ids: set[str] = set()
    for record in _records(path):
        if not isinstance(record, dict):
            continue
        for message in record.get("messages") or [record]:
            for call in message.get("toolCalls") or [] if isinstance(message, dict) else []:
                if isinstance(call, dict):
                    ids.add(str(call.get("id")))
    return len(ids)


def qwen(path: Path) -> int:
    """Distinct ``functionCall`` part ids of the assistant records."""
    ids: set[str] = set()
    for record in _records(path):
        parts = (record.get("message") or {}).get("parts") if isinstance(record, dict) else None
        for part in parts if isinstance(parts, list) else []:
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict):
                ids.add(str(call.get("id")))
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {
    "claude-code": claude_code,
    "codex": codex,
    "gemini": gemini,
    "qwen": qwen,
}
