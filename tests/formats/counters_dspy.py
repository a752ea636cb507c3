"""An independent tool-call counter for saved DSPy predictions (issue 22), written from
``dspy/predict/react.py`` apart from the loader: a call is a ``tool_name_<i>`` of a trajectory
other than ``finish``, counted in nested runs too (an observation that is a saved
``Prediction`` with a trajectory of its own).

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _count(trajectory: dict[str, Any]) -> int:
    total = 0
    for key, value in trajectory.items():
        if key.startswith("tool_name_") and value != "finish":
            total += 1
        if key.startswith("observation_") and isinstance(value, dict):
            nested = value.get("trajectory")
            if isinstance(nested, dict):
                total += _count(nested)
    return total


def dspy(path: Path) -> int:
    document: Any = json.loads(path.read_text(encoding="utf-8"))
    trajectory = document.get("trajectory", document)
    return _count(trajectory)


COUNTERS: dict[str, Callable[[Path], int]] = {"dspy": dspy}
