"""An independent tool-call counter for saved Google ADK sessions and events (issue 22),
written from ``google/adk/events/event.py`` and genai's ``Part`` apart from the loader: a call
is a ``function_call`` part (``functionCall`` when saved ``by_alias``) or an ``executable_code``
part of an event that is not ``partial`` (a streamed chunk the final event repeats), in
``session["events"]``, a list of events, or one event.

The ADK's SQLite session store (``adk-db``): the events of its ``events`` table
(:func:`adk_db`).

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
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


def adk_by_agent(path: Path) -> dict[str, int]:
    """The calls of each agent (the event's ``author``): a handoff's receiving agent authors
    its own events, so this is what each nested handoff must hold."""
    counts: dict[str, int] = {}
    for event in _events(json.loads(path.read_text(encoding="utf-8"))):
        if not isinstance(event, dict) or event.get("partial") is True:
            continue
        for part in (event.get("content") or {}).get("parts") or []:
            if isinstance(part, dict) and any(part.get(k) for k in _CALL_KEYS):
                counts[event["author"]] = counts.get(event["author"], 0) + 1
    return counts


def adk_db(path: Path) -> int:
    """The ADK's ``DatabaseSessionService`` file (``sessions/schemas/v1.py``, ``v0.py``): the
    calls of every event of its ``events`` table, as :func:`adk` counts them: the event's
    ``event_data`` (v1), or its ``content`` column (v0)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info('events')")}
        if "event_data" in columns:
            events = [json.loads(d) for (d,) in db.execute("SELECT event_data FROM events")]
        else:
            events = [
                {"partial": bool(partial), "content": json.loads(content) if content else None}
                for content, partial in db.execute("SELECT content, partial FROM events")
            ]
    calls = 0
    for event in events:
        if event.get("partial") is True:
            continue
        for part in (event.get("content") or {}).get("parts") or []:
            if isinstance(part, dict) and any(part.get(k) for k in _CALL_KEYS):
                calls += 1
    return calls


COUNTERS: dict[str, Callable[[Path], int]] = {"adk": adk, "adk-db": adk_db}
