"""An independent tool-call counter for AutoGen AgentChat's saved messages (issue 22), written
from ``autogen_agentchat/messages.py`` apart from the loader: a call is a ``FunctionCall`` of a
``ToolCallRequestEvent``'s ``content`` or of a ``ToolCallSummaryMessage``'s ``tool_calls``
(one per ``id``), a ``CodeGenerationEvent`` with code blocks (``CodeExecutorAgent`` runs
them), or a ``MemoryQueryEvent`` (the agent queried its memory). An agent used as a tool
streams its own messages into the same list, so its calls are counted where they stand;
:func:`calls_by_agent` counts them by the message's ``source`` (the agent that made them,
whose run a handoff or an agent tool nests them in).

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


def _calls(path: Path) -> dict[str, str]:
    """Each call's id and the ``source`` of the message that made it."""
    text = path.read_text(encoding="utf-8")
    try:
        messages = _messages(json.loads(text))
    except json.JSONDecodeError:  # JSON lines: one message dump a line
        messages = [json.loads(line) for line in text.splitlines() if line.strip()]
    ids: dict[str, str] = {}
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
        for call in calls:
            if isinstance(call, dict) and "id" in call:
                ids.setdefault(str(call["id"]), str(message.get("source")))
    return ids


def autogen(path: Path) -> int:
    return len(_calls(path))


def calls_by_agent(path: Path) -> dict[str, int]:
    """How many calls each agent made (the ``source`` of the messages holding them)."""
    counts: dict[str, int] = {}
    for source in _calls(path).values():
        counts[source] = counts.get(source, 0) + 1
    return counts


def autogen_state(path: Path) -> int:
    """A saved AgentChat state: a team's calls are its manager's ``message_thread``'s (message
    dumps, counted as above); an agent's, the ``FunctionCall`` entries of its model context's
    ``AssistantMessage`` records (``autogen_core.models``)."""
    state = json.loads(path.read_text(encoding="utf-8"))
    if state.get("type") == "TeamState":
        threads = [s["message_thread"] for s in state["agent_states"].values()
                   if "message_thread" in s]  # fmt: skip
        requests = [m for m in threads[0] if m.get("type") == "ToolCallRequestEvent"]
        return len({call["id"] for m in requests for call in m.get("content") or []})
    messages = state["llm_context"]["messages"]
    return len({call["id"] for m in messages if m.get("type") == "AssistantMessage"
                and isinstance(m.get("content"), list) for call in m["content"]})  # fmt: skip


COUNTERS: dict[str, Callable[[Path], int]] = {"autogen": autogen, "autogen-state": autogen_state}
