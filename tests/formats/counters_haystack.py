"""An independent tool-call counter for Haystack ``ChatMessage.to_dict()`` lists, written from
``haystack/dataclasses/chat_message.py`` (``_serialize_content_part``) apart from the loader: a
call is a ``tool_call`` part of an assistant message's ``content``; an agent used as a tool
(``ComponentTool`` wrapping an ``Agent``) returns the JSON of the inner agent's result, whose
messages' calls are counted too.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _calls(messages: list[Any]) -> int:
    count = 0
    for message in messages:
        for part in message.get("content") or []:
            if "tool_call" in part:
                count += 1
            result = part.get("tool_call_result", {}).get("result")
            if isinstance(result, str) and result.startswith('{"messages"'):
                count += _calls(json.loads(result)["messages"])
    return count


def haystack(path: Path) -> int:
    document: Any = json.loads(path.read_text(encoding="utf-8"))
    return _calls(document if isinstance(document, list) else document["messages"])


COUNTERS: dict[str, Callable[[Path], int]] = {"haystack": haystack}
