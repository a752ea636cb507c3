"""An independent tool-call counter for GitHub Copilot CLI's session events (``events.jsonl``
and the ``--output-format json`` stream), written from the CLI's own event schema
(``schemas/session-events.schema.json`` of ``@github/copilot``) apart from the loader: a call is
a distinct ``toolCallId`` of an ``assistant.message``'s ``toolRequests``, a
``tool.user_requested`` or a ``tool.execution_start``, sub-agents' events (``agentId``) included.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def events(path: Path) -> int:
    ids: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        data = event.get("data") or {}
        if event.get("type") == "assistant.message":
            ids.update(request["toolCallId"] for request in data.get("toolRequests") or [])
        elif event.get("type") in ("tool.user_requested", "tool.execution_start"):
            ids.add(data["toolCallId"])
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"copilot": events}
