"""Independent tool-call counter for MLflow traces (written from MLflow's trace schema apart
from the loader, as ``counters.py`` says): the ``TOOL`` spans of every trace the file holds, or
the distinct tool-call ids the model spans' responses asked for where more (tools not traced):
a Chat Completions response's ``tool_calls``, and those of every LangChain AI message a span
holds (``mlflow.langchain.autolog()``; ``langchain_core.messages``: ``tool_calls``,
``invalid_tool_calls``, and the call blocks of its content, a provider's own tools' too).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.formats.counters import records


def _spans(record: dict[str, Any]) -> list[dict[str, Any]]:
    if "data" in record:
        return list(record["data"]["spans"])
    return list(record.get("spans", []))


def mlflow(path: Path) -> int:
    tools = 0
    asked: set[str] = set()
    for record in records(path):
        for span in _spans(record):
            attributes = span["attributes"]
            kind = json.loads(attributes.get("mlflow.spanType", '"UNKNOWN"'))
            tools += kind == "TOOL"
            for key in ("mlflow.spanInputs", "mlflow.spanOutputs"):
                if key in attributes:
                    asked |= _langchain_calls(json.loads(attributes[key]))
            if kind in ("CHAT_MODEL", "LLM") and "mlflow.spanOutputs" in attributes:
                outputs = json.loads(attributes["mlflow.spanOutputs"])
                for choice in outputs.get("choices", []) if isinstance(outputs, dict) else []:
                    asked |= {c["id"] for c in choice["message"].get("tool_calls") or []}
    return max(tools, len(asked))


#: Content blocks of a call (``langchain_core.messages.content``'s ``tool_call`` and
#: ``server_tool_call``, Anthropic's ``tool_use`` / ``server_tool_use`` / ``mcp_tool_use``).
_CALL_BLOCKS = ("tool_call", "server_tool_call", "tool_use", "server_tool_use", "mcp_tool_use")


def _langchain_calls(value: Any) -> set[str]:
    """The call ids of the LangChain AI messages (``"type": "ai"``) anywhere in ``value``."""
    if isinstance(value, list):
        return {i for item in value for i in _langchain_calls(item)}
    if not isinstance(value, dict):
        return set()
    if value.get("type") != "ai":
        return {i for item in value.values() for i in _langchain_calls(item)}
    content = value.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    calls = [*(value.get("tool_calls") or []), *(value.get("invalid_tool_calls") or []),
             *(b for b in blocks if b.get("type") in _CALL_BLOCKS)]  # fmt: skip
    return {c["id"] for c in calls if isinstance(c.get("id"), str)}


COUNTERS: dict[str, Callable[[Path], int]] = {"mlflow": mlflow}
