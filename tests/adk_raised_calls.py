"""The real ADK run in which the ``explode`` tool raised
(``tests/fixtures/frameworks/adk/adk_v2.13.0_events_tool-raises.json``), its model's one call made
several, for the tests of how the run's end names the tools the exception may have come from
(spec P-11; tests/test_i18n_notices.py, tests/test_zh_more.py, tests/test_zh_notices_rest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RAISES = Path(__file__).parent / "fixtures/frameworks/adk/adk_v2.13.0_events_tool-raises.json"


def raised_among(names: list[str | None]) -> list[dict[str, Any]]:
    """The run's events, its ``explode`` call replaced by one call a name of ``names`` (None: a
    call with no name), each with an id of its own."""
    events: list[dict[str, Any]] = json.loads(RAISES.read_text(encoding="utf-8"))
    (calling, call) = next(
        (e, p["function_call"])
        for e in events
        for p in (e.get("content") or {}).get("parts") or []
        if (p.get("function_call") or {}).get("name") == "explode"
    )
    calling["content"]["parts"] = [
        {"function_call": {**call, "id": f"{call['id']}-{index}", "name": name}}
        for index, name in enumerate(names)
    ]
    return events
