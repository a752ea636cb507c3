"""An independent tool-call counter for the Microsoft Agent Framework's saved JSON (issue 22),
written from ``agent_framework/_types.py`` (``Message``, ``Content``) apart from the loader: a
call is a ``function_call`` content of an assistant message's ``contents``, one per ``call_id``,
in an ``AgentResponse.to_dict()``'s ``messages`` or an ``AgentSession.to_dict()``'s history
(``state[<provider>]["messages"]``).

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
    if not isinstance(document, dict):
        return []
    if document.get("type") == "session":
        state = document.get("state") or {}
        return [m for v in state.values() if isinstance(v, dict) for m in v.get("messages") or []]
    return list(document.get("messages") or [])


def agent_framework(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    ids = set()
    for message in _messages(document):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for content in message.get("contents") or []:
            if isinstance(content, dict) and content.get("type") == "function_call":
                ids.add(content.get("call_id"))
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"agent-framework": agent_framework}
