"""An independent tool-call counter for the Claude Agent SDK's messages saved with
``dataclasses.asdict`` (issue 22), written from ``claude_agent_sdk/types.py`` apart from the
loader: a call is a ``ToolUseBlock`` or ``ServerToolUseBlock`` (fields ``id``, ``name``,
``input``) in the ``content`` of an ``AssistantMessage`` (fields ``model`` and
``message_id``), sub-agents' messages (a ``parent_tool_use_id``) included, one per ``id``.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _messages(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        document = json.loads(text)
        return document if isinstance(document, list) else []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def claude_agent_sdk(path: Path) -> int:
    ids = set()
    for message in _messages(path):
        if not isinstance(message, dict) or not {"model", "message_id"} <= message.keys():
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and {"id", "name", "input"} <= block.keys():
                ids.add(block["id"])
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"claude-agent-sdk": claude_agent_sdk}
