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

import contextlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import Source
from turnfold.model import Transcript

#: Keys a wrapper (or a dataset's row) keeps its message list under, most common first.
MESSAGE_KEYS = (
    "messages", "conversations", "traj", "trajectory", "history", "conversation", "chat",
    "transcript", "items",
)  # fmt: skip


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
    wins over a wrapper key of the same name. A numeric ``reward`` (an RL rollout's) is also
    the ``score`` of the run (H-6), which its header and its corpus row show, unless the
    wrapper names a score of its own."""
    metadata = transcript.metadata
    for key, value in metadata_names(rest).items():
        metadata.setdefault(key, value)
    reward = metadata.get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        metadata.setdefault("score", reward)


def _message_list(value: Any) -> bool:
    """A non-empty list of dicts, as a dataset's row keeps its run's messages."""
    return (
        isinstance(value, list) and bool(value) and all(isinstance(m, Mapping) for m in value[:5])
    )


def runs_key(source: Source) -> str | None:
    """The key under which the records of ``source`` keep their runs' messages, when they are
    the rows of a dataset (JSON lines or a JSON array: at least two, most of them objects
    holding such a list, or most of them preference pairs); None otherwise. For pairs it is
    :func:`pair_key`'s: ``chosen_messages``, or ``chosen`` for alpaca rows, whose chosen reply
    is text, not messages. A file no session format reads may be one: each record is then a
    run of its own, not a message of one session."""
    if source.is_document and not isinstance(source.document, list):
        return None  # one JSON object: one run at most, which load() reads
    rows = [value for value in source.head_values() if isinstance(value, Mapping)]
    if len(rows) < 2 or len(rows) * 2 < len(source.head):
        return None
    first = rows[0]
    named = [key for key in MESSAGE_KEYS if _message_list(first.get(key))]
    lists = [key for key, value in first.items() if _message_list(value)]
    key = named[0] if named else (lists[0] if len(lists) == 1 else None)
    if key is None:
        key = pair_key(first)
        if key is None or sum(pair_key(row) == key for row in rows) * 2 < len(rows):
            return None
        return key
    if sum(_message_list(row.get(key)) for row in rows) * 2 < len(rows):
        return None
    return key


def pair_key(row: Any) -> str | None:
    """The key of a preference pair's chosen reply, when ``row`` is one as LLaMA-Factory's
    ranking datasets hold them: two lists of messages (``chosen_messages`` and
    ``rejected_messages``, its v1 form), or an instruction and two replies as text (``chosen``
    and ``rejected``, its alpaca form); None otherwise. A pair is one run, the rejected reply
    shown beside the chosen one."""
    if not isinstance(row, Mapping):
        return None
    if _message_list(row.get("chosen_messages")) and _message_list(row.get("rejected_messages")):
        return "chosen_messages"
    if all(isinstance(row.get(k), str) for k in ("instruction", "chosen", "rejected")):
        return "chosen"
    return None


#: :class:`OneFormat` has not read a run yet: the dataset's format is not known.
UNKNOWN = "(not known yet)"


class OneFormat:
    """Reads the runs of one dataset (the records of a file of runs, the rows of a table) with
    ``read(value, format)``. They are of one format, which is detection's answer for the
    dataset's first run: it is given for every run after it (detection costs as much as the
    read of a short run), and a run it does not fit is detected on its own. A format the user
    named (``format``) is given to every run, as ``load(value, format)`` would.

    ``guess`` is the dataset's format when it is known already (:data:`UNKNOWN`: the first run
    read is the dataset's first; None: that run could not be read, so each run is detected on
    its own). A part of a dataset is given its first run's format, so that a run reads the
    same whatever part it is read in, and as ``load(path, sample=n)`` reads it."""

    def __init__(
        self,
        read: Callable[[Any, str | None], Transcript],
        format: str | None = None,
        guess: str | None = UNKNOWN,
    ) -> None:
        self._read = read
        self._named = format
        self.guess = guess

    def __call__(self, value: Any) -> Transcript:
        if self._named is not None:
            return self._read(value, self._named)
        if self.guess == UNKNOWN:
            self.guess = None  # should the first run not read, each is detected on its own
            transcript = self._read(value, None)
            found = transcript.metadata.get("source_format")
            self.guess = found if isinstance(found, str) else None
            return transcript
        if self.guess is not None:
            with contextlib.suppress(TranscriptFormatError):
                return self._read(value, self.guess)
        return self._read(value, None)

    @property
    def found(self) -> str | None:
        """The dataset's format; None while no run is read, or when its first did not read."""
        return None if self.guess == UNKNOWN else self.guess

    def learn(self, value: Any) -> None:
        """Read ``value``, the dataset's first run, for its format alone (a run that does not
        read leaves each run to be detected on its own)."""
        with contextlib.suppress(Exception):
            self(value)


def run_place(sample: Any) -> int | None:
    """The place (from 0) ``sample`` names in a file of runs, as a scan keys a run
    ``path#n``; None for anything but a place."""
    return int(sample) if type(sample) is int or str(sample).isdigit() else None


def no_such_run(name: str, count: int, place: int) -> ValueError:
    """The error of a place past the runs a file of ``count`` runs holds."""
    return ValueError(f"{name} holds {count} runs: no sample={place} (they are 0 to {count - 1})")
