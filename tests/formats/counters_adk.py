"""An independent tool-call counter for saved Google ADK sessions and events (issue 22),
written from ``google/adk/events/event.py`` and genai's ``Part`` apart from the loader: a call
is a ``function_call`` part (``functionCall`` when saved ``by_alias``) or an ``executable_code``
part of an event that is not ``partial`` (a streamed chunk the final event repeats), in
``session["events"]``, a list of events, or one event.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

_CALL_KEYS = ("function_call", "functionCall", "executable_code", "executableCode")


def _events(document: Any) -> list[Any]:
    if isinstance(document, dict) and isinstance(document.get("events"), list):
        return list(document["events"])
    if isinstance(document, list):
        return document
    return [document]


def adk(path: Path) -> int:
    calls = 0
    for event in _events(json.loads(path.read_text(encoding="utf-8"))):
        if not isinstance(event, dict) or event.get("partial") is True:
            continue
        parts = (event.get("content") or {}).get("parts") or []
        for part in parts:
            if isinstance(part, dict) and any(part.get(k) for k in _CALL_KEYS):
                calls += 1
    return calls


COUNTERS: dict[str, Callable[[Path], int]] = {"adk": adk}
