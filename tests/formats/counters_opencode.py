"""An independent tool-call counter for OpenCode's exports and ``run --format json`` streams,
written from ``packages/opencode/src/session/message-v2.ts`` and ``src/cli/cmd/run.ts`` apart
from the loaders: a call is a part of ``type: "tool"``, of a message of the export, or carried
by a stream's ``tool_use`` event. An export holds its own session only, so a ``task`` call's
sub-agent adds no calls.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def export(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    return sum(
        part.get("type") == "tool" for message in document["messages"] for part in message["parts"]
    )


def run_events(path: Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum(json.loads(line).get("type") == "tool_use" for line in lines if line.strip())


COUNTERS: dict[str, Callable[[Path], int]] = {"opencode": export, "opencode-json": run_events}
