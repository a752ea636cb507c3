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
    its sub-agent files, plus ``!`` shell commands (``<bash-input>`` prompts)."""
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
                messages.append((data.get("message") or {}).get("message"))
            for message in messages:
                for block in _blocks(message):
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        ids.add(str(block.get("id")))
            content = (record.get("message") or {}).get("content")
            shell = isinstance(content, str) and "<bash-input>" in content
            shells += record.get("type") == "user" and shell
    return len(ids) + shells


#: Codex response items that are tool calls.
_CODEX_CALLS = {
    "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
    "image_generation_call", "tool_search_call",
}  # fmt: skip


def codex(path: Path) -> int:
    """Tool-call response items of the rollout."""
    count = 0
    for record in _records(path):
        payload = record.get("payload") if isinstance(record, dict) else None
        if record.get("type") == "response_item" and isinstance(payload, dict):
            count += payload.get("type") in _CODEX_CALLS
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
