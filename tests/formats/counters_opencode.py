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
    """An export's calls; a session file of the storage before 1.2 (``storage/session/<project>/
    <ses>.json``): the tool parts of its messages (``storage/message/<ses>/*.json``, their parts
    in ``storage/part/<msg>/``), and those of the sessions whose ``parentID`` is it (its
    ``task`` calls' sub-agents, nested by the loader)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if "messages" in document:
        return sum(
            part.get("type") == "tool"
            for message in document["messages"]
            for part in message["parts"]
        )
    return _stored_calls(path.parents[2], document["id"])


def _stored_calls(storage: Path, session: str) -> int:
    total = 0
    for message in (storage / "message" / session).glob("*.json"):
        for part in (storage / "part" / message.stem).glob("*.json"):
            total += json.loads(part.read_text(encoding="utf-8")).get("type") == "tool"
    for child in (storage / "session").glob("*/*.json"):
        if json.loads(child.read_text(encoding="utf-8")).get("parentID") == session:
            total += _stored_calls(storage, child.stem)
    return total


def run_events(path: Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum(json.loads(line).get("type") == "tool_use" for line in lines if line.strip())


COUNTERS: dict[str, Callable[[Path], int]] = {"opencode": export, "opencode-json": run_events}
