"""An independent tool-call counter for LangChain's saved messages (issue 22), written from
``langchain_core.messages`` (``messages_to_dict`` writes ``{"type", "data"}``; ``dumpd`` writes
``{"lc": 1, "type": "constructor", "id": [..., class name], "kwargs"}``) apart from the loader:
a call is an id of an AI message's ``tool_calls`` or ``invalid_tool_calls``, of a provider's
own tool call in its content (``langchain_core.messages.content.ServerToolCall``'s
``server_tool_call``, or Anthropic's ``server_tool_use`` / ``mcp_tool_use`` blocks, which
langchain-anthropic keeps out of ``tool_calls``), or the ``tool_call_id`` of a tool message
answering none of them. The messages are found anywhere in the file: a saved LangGraph
stream's events hold them in updates, states and chunks, a message more than once.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Content blocks of a call a provider ran itself.
SERVER_CALLS = ("server_tool_call", "server_tool_use", "mcp_tool_use")


#: LangChain.js's message classes, by the name that ends a serialized message's ``id``.
JS_TYPES = {"AIMessage": "ai", "AIMessageChunk": "ai", "ToolMessage": "tool"}


def _fields(record: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(record, dict):
        return "", {}
    if record.get("lc") == 1:
        kwargs = record.get("kwargs") or {}
        # LangChain.js writes no type in kwargs: the class name ends the id.
        names = record.get("id") or [""]
        kind = kwargs.get("type") or JS_TYPES.get(str(names[-1]), "")
        return str(kind), kwargs
    data = record.get("data")
    if not isinstance(data, dict) and "content" in record:
        data = record  # a message's model_dump(): its fields themselves
    return str(record.get("type", "")), data if isinstance(data, dict) else {}


#: The message types (and chunk types) a saved record may have.
KINDS = ("ai", "AIMessageChunk", "tool", "ToolMessageChunk", "human", "system")


def _messages(value: Any) -> list[Any]:
    """Every message record of a saved value, however nested: a message list, a state's
    ``messages``, or a saved stream's events (``[mode, chunk]`` lists, states, updates,
    ``[message, metadata]`` pairs)."""
    if isinstance(value, list):
        return [m for item in value for m in _messages(item)]
    if isinstance(value, dict):
        if _fields(value)[0] in KINDS:
            return [value]
        return [m for item in value.values() for m in _messages(item)]
    return []


def langchain(path: Path) -> int:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        document: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        document = json.loads(text)
    ids: set[str] = set()
    for record in _messages(document):
        kind, data = _fields(record)
        if kind in ("ai", "AIMessageChunk"):
            for call in (data.get("tool_calls") or []) + (data.get("invalid_tool_calls") or []):
                ids.add(str(call.get("id")))
            content = data.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") in SERVER_CALLS:
                    ids.add(str(block.get("id")))
        elif kind in ("tool", "ToolMessageChunk"):
            ids.add(str(data.get("tool_call_id")))
    return len(ids)


def langchain_by_agent(path: Path) -> dict[str, int]:
    """The calls of each agent: an AI message's ``name`` (``create_agent(name=...)``) and the
    ids of its ``tool_calls``, what each agent's handoff must hold once nested."""
    document = json.loads(path.read_text(encoding="utf-8"))
    records = document.get("messages", []) if isinstance(document, dict) else document
    counts: dict[str, int] = {}
    for record in records:
        kind, data = _fields(record)
        if kind in ("ai", "AIMessageChunk"):
            name = str(data.get("name"))
            counts[name] = counts.get(name, 0) + len(data.get("tool_calls") or [])
    return counts


COUNTERS: dict[str, Callable[[Path], int]] = {"langchain": langchain}
