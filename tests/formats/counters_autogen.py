"""An independent tool-call counter for AutoGen AgentChat's saved messages (issue 22), written
from ``autogen_agentchat/messages.py`` apart from the loader: a call is a ``FunctionCall`` of a
``ToolCallRequestEvent``'s ``content`` or of a ``ToolCallSummaryMessage``'s ``tool_calls``
(one per ``id``), a ``CodeGenerationEvent`` with code blocks (``CodeExecutorAgent`` runs
them), or a ``MemoryQueryEvent`` (the agent queried its memory). An agent used as a tool
streams its own messages into the same list, so its calls are counted where they stand.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _messages(document: Any) -> list[Any]:
    if isinstance(document, dict):
        messages = document.get("messages", [document] if "type" in document else [])
        return messages if isinstance(messages, list) else []
    return document if isinstance(document, list) else []


def autogen(path: Path) -> int:
    text = path.read_text(encoding="utf-8")
    try:
        messages = _messages(json.loads(text))
    except json.JSONDecodeError:  # JSON lines: one message dump a line
        messages = [json.loads(line) for line in text.splitlines() if line.strip()]
    ids: set[str] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        kind = message.get("type")
        if kind == "ToolCallRequestEvent":
            calls = message.get("content") or []
        elif kind == "ToolCallSummaryMessage":
            calls = message.get("tool_calls") or []
        elif kind == "MemoryQueryEvent" or (
            kind == "CodeGenerationEvent" and message.get("code_blocks")
        ):
            calls = [{"id": message.get("id")}]
        else:
            continue
        ids.update(str(c["id"]) for c in calls if isinstance(c, dict) and "id" in c)
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"autogen": autogen}
