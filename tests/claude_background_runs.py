"""What the tests of Claude Code's background agents and tasks share (spec F-7, X-2;
tests/test_claude_background.py, tests/formats/test_claude_2_1_337_route_and_report.py,
tests/formats/test_claude_stream_background_outcome.py): a real run's JSON Lines file (a session
file, or ``claude -p --output-format stream-json``'s stdout) read as its events and written back
once a test has changed one, and the run's one call that ran an agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from turnfold.model import ToolCall, Transcript


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events of the JSON Lines file at ``path``, in order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_events(events: list[dict[str, Any]], path: Path) -> Path:
    """``events`` written to ``path`` as JSON Lines, one event a line; returns ``path``."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def agent_call(transcript: Transcript) -> ToolCall:
    """The one call of ``transcript`` that ran a sub-agent."""
    (call,) = [c for c in transcript.tool_calls() if c.subagent is not None]
    return call
