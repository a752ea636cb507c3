"""What the tests of Codex's code mode look at in a loaded rollout: its calls by id, the commands
a cell ran, and the tool rows a view draws, with their status and result texts
(tests/formats/test_codex_cell_failed_before_yield.py, test_codex_notify.py,
tests/test_codex_notification_order.py)."""

from __future__ import annotations

from typing import Any

from turnfold.model import ToolCall, Transcript
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings


def calls_by_id(transcript: Transcript) -> dict[str, ToolCall]:
    """Every call of ``transcript`` by its call id."""
    return {c.call_id: c for c in transcript.tool_calls()}


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


def english_rows(transcript: Transcript) -> list[dict[str, Any]]:
    """The tool rows an English view of ``transcript`` draws, in order."""
    return rows(build_view_model(transcript, DisplaySettings(locale="en"))["nodes"])


def status_texts(transcript: Transcript) -> dict[str, str]:
    """Each tool row's status as an English view says it, by its call id."""
    return {r["call_id"]: r["status_text"] for r in english_rows(transcript)}


def results_shown(transcript: Transcript) -> list[str]:
    """The result text of each tool row that shows one, in an English view."""
    return [r["result"]["text"] for r in english_rows(transcript) if r.get("result")]
