"""Independent tool-call counter for MLflow traces (written from MLflow's trace schema apart
from the loader, as ``counters.py`` says): the ``TOOL`` spans of every trace the file holds, or
the distinct tool-call ids the model spans' responses asked for where more (tools not traced).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from counters import records


def _spans(record: dict[str, Any]) -> list[dict[str, Any]]:
    if "data" in record:
        return list(record["data"]["spans"])
    return list(record.get("spans", []))


def mlflow(path: Path) -> int:
    tools = 0
    asked: set[str] = set()
    for record in records(path):
        for span in _spans(record):
            attributes = span["attributes"]
            kind = json.loads(attributes.get("mlflow.spanType", '"UNKNOWN"'))
            tools += kind == "TOOL"
            if kind in ("CHAT_MODEL", "LLM") and "mlflow.spanOutputs" in attributes:
                outputs = json.loads(attributes["mlflow.spanOutputs"])
                for choice in outputs.get("choices", []) if isinstance(outputs, dict) else []:
                    asked |= {c["id"] for c in choice["message"].get("tool_calls") or []}
    return max(tools, len(asked))


COUNTERS: dict[str, Callable[[Path], int]] = {"mlflow": mlflow}
