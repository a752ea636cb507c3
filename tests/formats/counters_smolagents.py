"""An independent tool-call counter for smolagents' saved steps (issue 22), written from
``smolagents/memory.py`` (``ActionStep.dict()``, ``AgentMemory.get_full_steps()``) and
``smolagents/agents.py`` (``RunResult.dict()``) apart from the loader.

A call is an entry of an action step's ``tool_calls``, or, when that is empty (a failed step,
whose ``tool_calls`` smolagents leaves unset), of its ``model_output_message.tool_calls``;
a ``ToolCallingAgent``'s ``final_answer`` call is the answer, not a call. ``COUNTERS`` maps
the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def count_steps(steps: list[Any]) -> int:
    count = 0
    for step in steps:
        if not isinstance(step, dict) or not ("step_number" in step or "step" in step):
            continue
        calls = step.get("tool_calls") or (step.get("model_output_message") or {}).get("tool_calls")
        for call in calls or []:
            name = (call.get("function") or {}).get("name")
            if name == "final_answer" and step.get("code_action") is None:
                continue
            count += 1
    return count


def smolagents(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    steps = document.get("steps", []) if isinstance(document, dict) else document
    return count_steps(steps)


COUNTERS: dict[str, Callable[[Path], int]] = {"smolagents": smolagents}
