"""What ``opencode run --format json "<prompt>"`` prints: one JSON object a line, each with
``type``, ``timestamp`` (ms since the epoch) and ``sessionID`` (``src/cli/cmd/run.ts``).

Not the session OpenCode keeps in its database (the ``opencode`` format): these are the run's
live events, each carrying one part of the session's messages (the ``opencode`` format's
parts, with their ``messageID``), printed when it is done:

- ``step_start`` (a ``step-start`` part) and ``step_finish`` (``step-finish``: the step's tokens
  and cost, put on its entries);
- ``text`` (a ``text`` part, when its streaming ended), ``reasoning`` (printed with
  ``--thinking`` only);
- ``tool_use`` (a ``tool`` part whose state is ``completed`` or ``error``: a call is printed
  once it has its outcome, so a run killed mid-call shows the step without it);
- ``error`` (``{error: {name, data: {message}}}``): the session's error, an
  :class:`~turnfold.model.AssistantError` (``MessageAbortedError``, the user's abort, an
  :class:`~turnfold.model.AbortMarker`), at the event's ``timestamp``;
- ``done`` (``{reason: "idle", rejected: [...]}``, which OpenCode's source after its 1.18.33
  release writes once the session went idle, unless ``--attach``): the run's end; the
  permissions it auto-rejected are kept as ``metadata["rejected_permissions"]``.

A run ends with a step whose ``step_finish`` reason is neither ``tool-calls`` nor ``unknown``
(OpenCode's loop goes on after those: ``session/prompt.ts``), or with an ``error`` or ``done``:
OpenCode writes one of them however its run ends. A stream that ends inside a run, inside a
step or between two, was cut off (the process killed, as SIGINT kills ``opencode run``
mid-call): it is read by the rule every agent's headless stream shares
(:func:`~turnfold.formats.common.stream_cut_off`): a warning, the run ``incomplete``, its turn
stopped. A stream of 1.18.33 and before holds no ``done``: its last step tells.

The parts of one message are read as the ``opencode`` format reads an assistant message. The
stream holds no prompt (``run`` does not echo it), no model name and only the run's own session:
a ``task`` call's sub-agent shows its answer, its steps missing.

Detection: ``type`` one of those, ``sessionID`` a ``ses_`` id and a ``part`` (or ``error``):
no other format writes these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnfold.formats.agents.opencode import (
    ABORTED_ERROR,
    Message,
    Session,
    SessionReader,
    iso_time,
)
from turnfold.formats.catalog import Records
from turnfold.formats.common import stream_cut_off
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.protocol import read_events
from turnfold.formats.source import Source
from turnfold.model import AbortMarker, AssistantError, Transcript

NAME = "opencode-json"

RECORDS = Records(
    mapped={
        "text": "an assistant text",
        "reasoning": "thinking",
        "tool_use": "a tool call with its input, outcome, result and times",
        "step_finish": "the step's token usage and cost, on its entries",
        "error": "an error entry: the session's error",
        "done": "the run's end (the session went idle)",
    },
    ignored={
        "step_start": "bounds a model step; its usage is its step_finish's",
    },
)

_PART_EVENTS = frozenset({"step_start", "step_finish", "text", "reasoning", "tool_use"})
#: The reasons a step finishes with after which OpenCode's loop asks the model again.
_STEP_GOES_ON = frozenset({"tool-calls", "unknown"})
#: What ends every run (for :func:`~turnfold.formats.common.stream_cut_off`'s warning).
_RUN_END = "closing step_finish, error or done"


def _classify(value: Any) -> int:
    if not isinstance(value, Mapping):
        return NOT_MINE
    session = value.get("sessionID")
    if not isinstance(session, str) or not session.startswith("ses_"):
        return NOT_MINE
    kind = value.get("type")
    if not isinstance(kind, str):
        return NOT_MINE
    if kind in _PART_EVENTS and isinstance(value.get("part"), Mapping):
        return DISTINCTIVE
    if kind == "error" and isinstance(value.get("error"), Mapping):
        return DISTINCTIVE
    if kind == "done" and isinstance(value.get("reason"), str):
        return DISTINCTIVE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    return Evidence.of_events(source, _classify, "no OpenCode run events (type, sessionID, part)")


class _Reader:
    """The events of one run, gathered into their messages' parts."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.messages: dict[str, Message] = {}
        #: The messages, and the errors (with their events' times) where they came.
        self.order: list[Message | tuple[Mapping[str, Any], Any]] = []
        self.session_id: str | None = None
        #: The line of the event that began the run still going (None once it ended): a
        #: stream that ends with one going was cut off inside it.
        self.open_run: int | None = None
        self.rejected: list[Any] = []

    def event(self, record: Mapping[str, Any], line: int) -> None:
        kind = record.get("type")
        if isinstance(record.get("sessionID"), str):
            self.session_id = self.session_id or record["sessionID"]
        if kind == "done":
            self.open_run = None
            rejected = record.get("rejected")
            self.rejected += rejected if isinstance(rejected, list) else []
            self.source.mapped("done")
            return
        if kind == "error" and isinstance(record.get("error"), Mapping):
            self.open_run = None
            self.order.append((record["error"], record.get("timestamp")))
            self.source.mapped("error")
            return
        part = record.get("part")
        if not isinstance(kind, str) or kind not in _PART_EVENTS or not isinstance(part, Mapping):
            self.source.warn(f"not an OpenCode run event: type {kind!r}", line)
            return
        self.open_run = self.open_run or line
        key = str(part.get("messageID"))
        message = self.messages.get(key)
        if message is None:
            message = self.messages[key] = Message({"role": "assistant", "id": key})
            self.order.append(message)
        message.parts.append(part)
        if kind == "step_finish" and part.get("reason") not in _STEP_GOES_ON:
            self.open_run = None
        self.source.note(kind, "ignored" if kind == "step_start" else "mapped")

    def finish(self) -> Transcript:
        """The run's messages and errors; a stream cut off inside a run says so
        (:func:`~turnfold.formats.common.stream_cut_off`)."""
        held: list[Message] = []
        for item in self.order:
            if isinstance(item, Message):
                # Printed as each part is done (a quick call before a slow one); part ids
                # ascend in the order the parts were made, the order the session holds.
                item.parts.sort(key=lambda part: str(part.get("id", "")))
                held.append(item)
        reader = SessionReader(self.source, None, accounts=False)
        transcript = reader.read(Session({"id": self.session_id}, held))
        for item in self.order:
            if isinstance(item, Message):
                continue
            error, printed = item
            data = error.get("data")
            said = data.get("message") if isinstance(data, Mapping) else None
            text = said if isinstance(said, str) and said else str(error.get("name", "error"))
            # The user's abort is no failure: read as the session's message error is (opencode).
            if error.get("name") == ABORTED_ERROR:
                transcript.append(AbortMarker(reason=text, timestamp=iso_time(printed)))
            else:
                transcript.append(AssistantError(message=text, timestamp=iso_time(printed)))
        transcript.metadata["source_format"] = NAME
        if self.rejected:
            transcript.metadata["rejected_permissions"] = self.rejected
        if self.open_run is not None:
            stream_cut_off(self.source, transcript, self.open_run, _RUN_END)
        return transcript


def read(source: Source) -> Transcript:
    reader = _Reader(source)
    read_events(source, reader.event, "an OpenCode run event")
    return reader.finish()
