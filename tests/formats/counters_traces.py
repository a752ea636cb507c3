"""Independent tool-call counters for the trace and agent-output formats (issue 13).

Written from the formats' documentation apart from the loaders (see ``counters.py``): each
counts the tool calls the file records, sub-agents' included.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from counters import records


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values()), None) for a in span.get("attributes", [])}


_AGENTS = ("invoke_agent", "AGENT")
_TOOLS = ("execute_tool", "TOOL")


def otlp(path: Path) -> int:
    """Tool executions: the ``execute_tool`` / ``TOOL`` spans, or the distinct tool-call ids the
    model spans' outputs asked for where more (content captured, tools not traced), plus agent
    spans run by another agent with no tool span between them (a sub-agent with no tool span
    of its own: smolagents' managed agents run inside the manager's ``CHAIN`` step)."""
    spans = [
        span
        for request in records(path)
        for resource in request.get("resourceSpans", [])
        for scope in resource.get("scopeSpans", [])
        for span in scope.get("spans", [])
    ]
    kinds = {}
    parents = {}
    asked: set[str] = set()
    for span in spans:
        a = _attributes(span)
        kinds[span["spanId"]] = a.get("gen_ai.operation.name") or a.get("openinference.span.kind")
        parents[span["spanId"]] = span.get("parentSpanId")
        for message in json.loads(a.get("gen_ai.output.messages") or "[]"):
            asked |= {p["id"] for p in message.get("parts", []) if p.get("type") == "tool_call"}
        asked |= {v for k, v in a.items() if k.startswith("llm.output_messages.")
                  and k.endswith(".tool_call.id")}  # fmt: skip

    def runner(span_id: str) -> str | None:
        """The kind of the nearest agent or tool span above ``span_id``."""
        parent = parents.get(span_id)
        for _ in spans:
            if parent is None or kinds.get(parent) in _AGENTS + _TOOLS:
                break
            parent = parents.get(parent)
        return kinds.get(parent) if parent is not None else None

    tools = sum(1 for kind in kinds.values() if kind in _TOOLS)
    direct = sum(
        1 for span in spans
        if kinds[span["spanId"]] in _AGENTS and runner(span["spanId"]) in _AGENTS
    )  # fmt: skip
    return max(tools, len(asked)) + direct


def claude_stream_json(path: Path) -> int:
    """Distinct ``tool_use`` block ids of the ``assistant`` events, sub-agents' (events with a
    ``parent_tool_use_id``) included."""
    ids = set()
    for event in records(path):
        if isinstance(event, dict) and event.get("type") == "assistant":
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    ids.add(block.get("id"))
    return len(ids)


#: Thread items that are tool calls (codex-rs/exec/src/exec_events.rs, ThreadItemDetails).
_CODEX_CALL_ITEMS = {
    "command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search",
    "todo_list",
}  # fmt: skip


def codex_exec_json(path: Path) -> int:
    """Distinct ids of call items in ``item.started`` / ``item.updated`` / ``item.completed``."""
    ids = set()
    for event in records(path):
        item = event.get("item") if isinstance(event, dict) else None
        if isinstance(item, dict) and item.get("type") in _CODEX_CALL_ITEMS:
            ids.add(item.get("id"))
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {
    "otlp": otlp,
    "claude-stream-json": claude_stream_json,
    "codex-exec-json": codex_exec_json,
}
