"""Message lists inside wrapper objects (issue 11): eval trajectories, saved chats, SDK sessions.

Tools that save a conversation rarely save the bare list: ``{"traj": [...], "reward": 1}``,
``{"version", "sessionId", "messages": [...]}``, ``{"history": [...], "info": {...}}``. The
message-list formats look for the list under the usual keys, or take the one list of
message-shaped objects the wrapper holds; the wrapper's other keys are kept as metadata.

>>> found = find_messages({"traj": [{"role": "user", "content": "hi"}], "reward": 1.0})
>>> found.key, len(found.messages), found.rest
('traj', 1, {'reward': 1.0})
>>> metadata_names({"sessionId": "s1", "updated_at": "2025-01-01", "agent": "sdk"})
{'session_id': 's1', 'updated_at': '2025-01-01', 'agent': 'sdk'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from turnfold.model import Transcript

#: Keys a wrapper keeps its message list under, most common first.
MESSAGE_KEYS = ("messages", "traj", "trajectory", "history", "conversation", "chat", "items")


@dataclass(frozen=True)
class FoundMessages:
    """The message list of a document, the key it sat under and the wrapper's other keys."""

    messages: list[Any]
    key: str | None = None
    rest: dict[str, Any] = field(default_factory=dict)


def _message_shaped(value: Any) -> bool:
    return isinstance(value, Mapping) and ("role" in value or "type" in value)


def _mostly_messages(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    sample = value[:50]
    return sum(1 for v in sample if _message_shaped(v)) * 2 > len(sample)


def find_messages(document: Any) -> FoundMessages | None:
    """The message list of ``document`` (itself when it is a list), or None."""
    if isinstance(document, list):
        return FoundMessages(document)
    if not isinstance(document, Mapping):
        return None
    key = next((k for k in MESSAGE_KEYS if _mostly_messages(document.get(k))), None)
    if key is None:
        lists = [k for k, v in document.items() if _mostly_messages(v)]
        if len(lists) != 1:
            return None
        key = lists[0]
    rest = {k: v for k, v in document.items() if k != key}
    return FoundMessages(list(document[key]), key, rest)


def sample(messages: list[Any], size: int = 60) -> list[Any]:
    """The messages detection looks at: the first ones and the last few, where a tool's own
    trailing record (``{"role": "session_meta"}``) tends to sit."""
    if len(messages) <= size:
        return messages
    return messages[: size - 10] + messages[-10:]


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def metadata_names(rest: Mapping[str, Any]) -> dict[str, Any]:
    """A wrapper's other keys under the names turnfold's metadata uses: ``sessionId`` is
    ``session_id`` (as every loader names it), ``updatedAt`` is ``updated_at``."""
    return {_CAMEL.sub(r"_\1", str(key)).lower(): value for key, value in rest.items()}


def keep_wrapper_keys(transcript: Transcript, rest: Mapping[str, Any]) -> None:
    """The wrapper's other keys as ``transcript.metadata`` (issue 11): a reward, a session id, the
    saving agent's name. What the loader already set (``source_format``, ``system``, ``model``)
    wins over a wrapper key of the same name."""
    for key, value in metadata_names(rest).items():
        transcript.metadata.setdefault(key, value)
