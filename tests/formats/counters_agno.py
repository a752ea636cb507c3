"""An independent tool-call counter for Agno runs saved with ``to_dict()`` / ``to_json()``,
written from ``agno/run/agent.py`` and ``agno/run/team.py`` apart from the loader: a call is an
entry of an assistant message's ``tool_calls`` (``from_history`` messages repeat an earlier
run's); a team's member runs (``member_responses``) are counted too. A session counts its runs.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
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


COUNTERS: dict[str, Callable[[Path], int]] = {"agno": agno}
