"""An independent tool-call counter for pydantic-ai's saved message history (issue 22),
written from ``pydantic_ai/messages.py`` (``ModelResponse.parts``, ``ToolCallPart``,
``NativeToolCallPart``) apart from the loader: a call is a ``tool-call`` or
``builtin-tool-call`` part of a message of kind ``response``, one per ``tool_call_id``, in a
list of messages (``all_messages_json()``) or the ``messages`` of a saved ``AgentRunResult``.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

_CALL_PARTS = {"tool-call", "builtin-tool-call"}


def pydantic_ai(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    messages = document.get("messages", []) if isinstance(document, dict) else document
    ids = set()
    for message in messages:
        if not isinstance(message, dict) or message.get("kind") != "response":
            continue
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("part_kind") in _CALL_PARTS:
                ids.add(part.get("tool_call_id"))
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"pydantic-ai": pydantic_ai}
