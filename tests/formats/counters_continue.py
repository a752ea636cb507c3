"""An independent tool-call counter for Continue's session files
(``~/.continue/sessions/<sessionId>.json``), written from Continue's own types
(``core/index.d.ts``: ``Session.history`` of ``ChatHistoryItem``) apart from the loader: a call is
a distinct id among an assistant message's ``toolCalls`` and its item's ``toolCallStates``.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def session(path: Path) -> int:
    ids: set[str] = set()
    for item in json.loads(path.read_text(encoding="utf-8"))["history"]:
        if item["message"]["role"] != "assistant":
            continue
        ids.update(call["id"] for call in item["message"].get("toolCalls") or [])
        ids.update(state["toolCallId"] for state in item.get("toolCallStates") or [])
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"continue": session}
