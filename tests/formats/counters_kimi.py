"""An independent tool-call counter for Kimi Code CLI's journals (``agents/<id>/wire.jsonl``),
written from the CLI's wire manifest (``packages/agent-core-v2/docs/wire-manifest.d.ts``) apart
from the loader: a call is a distinct ``toolCallId`` of a ``tool.call`` loop event or of an
``assistant`` context message's ``toolCalls``; the lead agent's journal counts its sub-agents'
journals beside it (``agents/*/wire.jsonl``) too, and a session's ``state.json`` all of them.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def _ids(path: Path) -> set[str]:
    ids: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        event = record.get("event") or {}
        message = record.get("message") or {}
        if record.get("type") == "context.append_loop_event" and event.get("type") == "tool.call":
            ids.add(event["toolCallId"])
        elif record.get("type") == "context.append_message" and message.get("role") == "assistant":
            ids.update(call["id"] for call in message.get("toolCalls") or [])
    return ids


def journals(path: Path) -> int:
    files = [path]
    if path.name == "state.json":  # a session's state: its journals
        files = sorted(path.parent.glob("agents/*/wire.jsonl"))
    elif path.parent.name == "main" and path.parent.parent.name == "agents":
        files = sorted(path.parent.parent.glob(f"*/{path.name}"))
    return len(set().union(*(_ids(f) for f in files)))


def _legacy_ids(path: Path) -> set[str]:
    """The older Python Kimi CLI: a ``ToolCall`` event's id in its ``wire.jsonl``, a sub-agent's
    (``SubagentEvent``) included; a ``context.jsonl`` counts the wire beside it, else its own
    ``assistant`` messages' ``tool_calls``."""
    ids: set[str] = set()
    wire = path.with_name("wire.jsonl")
    if path.name == "context.jsonl" and not (
        wire.is_file() and len(wire.read_text().splitlines()) > 1
    ):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("role") == "assistant":
                ids.update(call["id"] for call in record.get("tool_calls") or [])
        return ids
    for line in wire.read_text(encoding="utf-8").splitlines():
        message = json.loads(line).get("message") if line.strip() else None
        while message and message.get("type") == "SubagentEvent":
            message = message["payload"]["event"]
        if message and message.get("type") == "ToolCall":
            ids.add(message["payload"]["id"])
    return ids


COUNTERS: dict[str, Callable[[Path], int]] = {
    "kimi": journals,
    "kimi-cli": lambda path: len(_legacy_ids(path)),
}
