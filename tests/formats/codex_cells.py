"""What the tests of Codex's code mode look at in a loaded rollout: the commands a cell ran, and
the tool rows a view draws (tests/formats/test_codex_cell_failed_before_yield.py,
test_codex_notify.py)."""

from __future__ import annotations

from typing import Any

from turnfold.model import ToolCall


def nested(call: ToolCall) -> list[tuple[str | None, str, int | None]]:
    """The commands ``call`` (a cell) ran: each one's description, status and exit code."""
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    inner = call.subagent.transcript.tool_calls()
    return [(c.description, c.status, c.meta.get("exit_code")) for c in inner]


def rows(node: Any) -> list[dict[str, Any]]:
    """Every tool row under ``node`` (a view model), in order, nested rows too."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("kind") == "batch":
            found += node["rows"]
        for value in node.values():
            found += rows(value)
    elif isinstance(node, list):
        for value in node:
            found += rows(value)
    return found
