"""An independent tool-call counter for LlamaIndex ``ChatMessage`` dumps (issue 22), written
from ``llama_index/core/base/llms/types.py`` (``ChatMessage``, ``ToolCallBlock``) apart from
the loader: a call is a ``tool_call`` block of an assistant message's ``blocks`` (or an entry
of its ``additional_kwargs["tool_calls"]``), one per id, in a saved list of messages or a
``SimpleChatStore``'s conversation.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _calls(messages: list[Any]) -> int:
    ids = set()
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for block in message.get("blocks") or []:
            if isinstance(block, dict) and block.get("block_type") == "tool_call":
                ids.add(block.get("tool_call_id"))
        for call in (message.get("additional_kwargs") or {}).get("tool_calls") or []:
            ids.add(call.get("id"))
    return len(ids)


def llamaindex(path: Path) -> int:
    document: Any = json.loads(path.read_text(encoding="utf-8"))
    return _calls(document if isinstance(document, list) else document.get("messages") or [])


def llamaindex_chat_store(path: Path) -> int:
    """A persisted ``SimpleChatStore`` (``{"store": {key: [messages]}}``) read without
    ``sample=``: its first key's messages."""
    store = json.loads(path.read_text(encoding="utf-8"))["store"]
    return _calls(next(iter(store.values()), []))


COUNTERS: dict[str, Callable[[Path], int]] = {
    "llamaindex": llamaindex,
    "llamaindex-chat-store": llamaindex_chat_store,
}
