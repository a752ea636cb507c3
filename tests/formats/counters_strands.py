"""An independent tool-call counter for Strands Agents / Bedrock Converse messages (issue 22),
written from ``strands/types/content.py`` and ``strands/types/tools.py`` (``ContentBlock``,
``ToolUse``) apart from the loader: a call is a ``toolUse`` block of an assistant message's
``content``, one per ``toolUseId``, in a saved ``agent.messages`` list, a Converse request's
``messages`` or a Converse response's ``output.message``; in a ``FileSessionManager``
session, of every agent's stored messages.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _messages(document: Any) -> list[Any]:
    if isinstance(document, list):
        return document
    if isinstance(document, dict):
        if isinstance(document.get("messages"), list):
            return list(document["messages"])
        if isinstance(document.get("message"), dict) and "message_id" in document:
            return [document.get("redact_message") or document["message"]]  # a SessionMessage
        output = document.get("output")
        if isinstance(output, dict) and isinstance(output.get("message"), dict):
            return [output["message"]]
    return []


def strands(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    ids = set()
    for message in _messages(document):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for block in message.get("content") or []:
            tool_use = block.get("toolUse") if isinstance(block, dict) else None
            if isinstance(tool_use, dict):
                ids.add(tool_use.get("toolUseId"))
    return len(ids)


def strands_session(path: Path) -> int:
    """A ``FileSessionManager`` session (``session_<id>/``, from any file of it): the toolUse
    blocks of every agent's ``messages/message_<n>.json`` (``SessionMessage.to_dict()``)."""
    session = next(p for p in (path, *path.parents) if p.name.startswith("session_"))
    ids = set()
    for file in sorted(session.glob("agents/agent_*/messages/message_*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        message = record.get("redact_message") or record.get("message") or {}
        if message.get("role") == "assistant":
            ids |= {
                (file.parent.parent.name, block["toolUse"].get("toolUseId"))
                for block in message.get("content") or []
                if isinstance(block, dict) and isinstance(block.get("toolUse"), dict)
            }
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {
    "strands": strands,
    "strands-session": strands_session,
}
