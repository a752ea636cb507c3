"""An independent tool-call counter for Agno runs saved with ``to_dict()`` / ``to_json()``,
written from ``agno/run/agent.py`` and ``agno/run/team.py`` apart from the loader: a call is an
entry of an assistant message's ``tool_calls`` (``from_history`` messages repeat an earlier
run's); a team's member runs (``member_responses``) are counted too. A session counts its runs.
Agno's SQLite store (``agno-db``, ``agno/db/sqlite/schemas.py``): every row of its runs table
(``run_id``, ``run_data``), a member's run a row of its own beside its team's, each counted
once, however many sessions the file holds.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _run_calls(run: dict[str, Any]) -> int:
    count = sum(
        len(message.get("tool_calls") or [])
        for message in run.get("messages") or []
        if message.get("role") == "assistant" and not message.get("from_history")
    )
    return count + sum(_run_calls(member) for member in run.get("member_responses") or [])


def agno(path: Path) -> int:
    document: Any = json.loads(path.read_text(encoding="utf-8"))
    runs = document.get("runs") if "runs" in document else [document]
    return sum(_run_calls(run) for run in runs)


def agno_db(path: Path) -> int:
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        tables = [
            name
            for (name,) in db.execute("SELECT name FROM sqlite_master")
            if {"run_id", "run_data"}
            <= {row[1] for row in db.execute(f"PRAGMA table_info('{name}')")}
        ]
        runs = [
            json.loads(data)
            for table in tables
            for (data,) in db.execute(f"SELECT run_data FROM '{table}'")
        ]
    ids = {run.get("run_id") for run in runs}
    count = 0
    for run in runs:
        members = run.get("member_responses") or []
        stored = {**run, "member_responses": [m for m in members if m.get("run_id") not in ids]}
        count += _run_calls(stored)
    return count


COUNTERS: dict[str, Callable[[Path], int]] = {"agno": agno, "agno-db": agno_db}
