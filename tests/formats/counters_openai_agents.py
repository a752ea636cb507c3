"""An independent tool-call counter for the OpenAI Agents SDK's saved run items (issue 13,
issue 22), written from ``agents/run_state.py`` (``RunState.to_json``, ``_serialize_item``)
apart from the loader: a call is a ``tool_call_item`` or a ``handoff_call_item`` of
``generated_items`` (or ``new_items``, or a bare list of run items), one per ``call_id``.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

_CALL_ITEMS = {"tool_call_item", "handoff_call_item"}


def openai_agents(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(document, dict):
        items = document.get("generated_items", document.get("new_items")) or []
    else:
        items = document
    ids = set()
    for item in items:
        if isinstance(item, dict) and item.get("type") in _CALL_ITEMS:
            raw = item.get("raw_item") or {}
            ids.add(raw.get("call_id") or raw.get("id"))
    return len(ids)


COUNTERS: dict[str, Callable[[Path], int]] = {"openai-agents": openai_agents}
