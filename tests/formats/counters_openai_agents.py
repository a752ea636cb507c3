"""An independent tool-call counter for the OpenAI Agents SDK's saved run items (issue 13,
issue 22), written from ``agents/run_state.py`` (``RunState.to_json``, ``_serialize_item``)
apart from the loader: a call is a ``tool_call_item`` or a ``handoff_call_item`` of
``generated_items`` (or ``new_items``, or a bare list of run items), one per ``call_id``;
:func:`calls_by_agent` counts them by the agent each item names (``agent.name``), which is
the sub-agent a handoff nests them under. The SDK's SQLite session store
(``openai-agents-db``): the calls among its stored input items (:func:`openai_agents_db`).

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

_CALL_ITEMS = {"tool_call_item", "handoff_call_item"}


def _call_items(path: Path) -> dict[Any, dict[str, Any]]:
    """The call items of the saved run, by call id."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(document, dict):
        items = document.get("generated_items", document.get("new_items")) or []
    else:
        items = document
    calls = {}
    for item in items:
        if isinstance(item, dict) and item.get("type") in _CALL_ITEMS:
            raw = item.get("raw_item") or {}
            calls.setdefault(raw.get("call_id") or raw.get("id"), item)
    return calls


def openai_agents(path: Path) -> int:
    return len(_call_items(path))


def calls_by_agent(path: Path) -> dict[str, int]:
    """How many calls each agent made (``agent.name`` of its call items)."""
    counts: dict[str, int] = {}
    for item in _call_items(path).values():
        name = str((item.get("agent") or {}).get("name"))
        counts[name] = counts.get(name, 0) + 1
    return counts


def openai_agents_db(path: Path) -> int:
    """The SDK's ``SQLiteSession`` file (``agents/memory/sqlite_session.py``): every
    ``message_data`` row of any table holding that column, each a Responses input item; a
    call is an item whose ``type`` ends in ``_call`` (``function_call``, the hosted tools')."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        tables = [
            name
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if "message_data" in {row[1] for row in db.execute(f"PRAGMA table_info('{name}')")}
        ]
        items = [
            json.loads(data)
            for table in tables
            for (data,) in db.execute(f"SELECT message_data FROM '{table}'")
        ]
    return sum(1 for item in items if str(item.get("type", "")).endswith("_call"))


COUNTERS: dict[str, Callable[[Path], int]] = {
    "openai-agents": openai_agents,
    "openai-agents-db": openai_agents_db,
}
