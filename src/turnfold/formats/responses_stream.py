"""The raw events of a streamed OpenAI Responses API call (``client.responses.create(
stream=True)``, each ``event.model_dump()`` a line), put together into the Response they stand
for; :mod:`~turnfold.formats.openai_responses` reads that Response.

The rules are the SDK's own (``ResponseStreamState.accumulate_event``): ``response.created``
gives the Response's head; ``response.output_item.added`` starts an output item at its
``output_index``, ``response.content_part.added`` a part of a message, and the deltas grow them
(``output_text`` and ``refusal``, a call's ``arguments`` or ``input``, a reasoning item's
summary and text); ``response.output_item.done`` is the item whole. A terminal event
(``response.completed``, ``response.failed``, ``response.incomplete``) holds the whole
Response, which is preferred; its output, when the API leaves it out, is the items as done.
Events that repeat what an item's ``done`` holds (``*.done``, a hosted tool's progress) are
passed over by design (:data:`REPEATED`).

>>> stream = StreamedResponse({"type": "response.created", "response": {"id": "r", "output": []}})
>>> stream.add({"type": "response.output_item.added", "output_index": 0,
...             "item": {"type": "message", "role": "assistant", "content": []}})
>>> stream.add({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
...             "delta": "Hi"})
>>> stream.response()["output"][0]["content"]
[{'type': 'output_text', 'text': 'Hi'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnfold.formats.common import NameSet

#: The events that end a stream, each holding the whole Response.
ENDS = NameSet({"response.completed", "response.failed", "response.incomplete"})
#: The events that start one (the Response's head, ``status`` ``in_progress`` or ``queued``).
_HEADS = NameSet({"response.created", "response.in_progress", "response.queued"})
_ITEM_ADDED, _ITEM_DONE = "response.output_item.added", "response.output_item.done"
_PART_ADDED, _SUMMARY_ADDED = "response.content_part.added", "response.reasoning_summary_part.added"
#: Where a part an event adds goes, and the key of its index.
_PLACES = {_PART_ADDED: ("content", "content_index"), _SUMMARY_ADDED: ("summary", "summary_index")}
#: The deltas that grow an item: where (a message's content part, a reasoning item's summary or
#: content, the item itself) and which of its keys.
_DELTAS: dict[str, tuple[str, str]] = {
    "response.output_text.delta": ("content", "text"),
    "response.refusal.delta": ("content", "refusal"),
    "response.reasoning_text.delta": ("content", "text"),
    "response.reasoning_summary_text.delta": ("summary", "text"),
    "response.function_call_arguments.delta": ("item", "arguments"),
    "response.mcp_call_arguments.delta": ("item", "arguments"),
    "response.custom_tool_call_input.delta": ("item", "input"),
}
#: A stream's ``error`` event (``{"type": "error", "code", "message", "sequence_number"}``).
ERROR = "error"
#: Every event read: a stream's start, its items and their deltas, its end, its error.
READ = NameSet(_HEADS | ENDS | _DELTAS.keys() | {_ITEM_ADDED, _ITEM_DONE, _PART_ADDED,
                                                   _SUMMARY_ADDED, ERROR})  # fmt: skip
#: The events the SDK yields that repeat what an item's ``output_item.done`` (or the
#: Response's terminal event) holds whole: each part or text done, a hosted tool's progress,
#: an annotation of a text, audio.
REPEATED = NameSet(
    {"response.audio.delta", "response.audio.done", "response.audio.transcript.delta",
     "response.audio.transcript.done", "response.code_interpreter_call.completed",
     "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
     "response.code_interpreter_call_code.delta", "response.code_interpreter_call_code.done",
     "response.compaction.compacting", "response.content_part.done",
     "response.custom_tool_call_input.done", "response.file_search_call.completed",
     "response.file_search_call.in_progress", "response.file_search_call.searching",
     "response.function_call_arguments.done", "response.image_generation_call.completed",
     "response.image_generation_call.generating", "response.image_generation_call.in_progress",
     "response.image_generation_call.partial_image", "response.mcp_call.completed",
     "response.mcp_call.failed", "response.mcp_call.in_progress",
     "response.mcp_call_arguments.done", "response.mcp_list_tools.completed",
     "response.mcp_list_tools.failed", "response.mcp_list_tools.in_progress",
     "response.output_text.annotation.added", "response.output_text.done",
     "response.reasoning_summary_part.done", "response.reasoning_summary_text.done",
     "response.reasoning_text.done", "response.refusal.done", "response.shell_call_command.added",
     "response.shell_call_command.delta", "response.shell_call_command.done",
     "response.shell_call_output_content.delta", "response.shell_call_output_content.done",
     "response.web_search_call.completed", "response.web_search_call.in_progress",
     "response.web_search_call.searching"}
)  # fmt: skip
_PREFIX = "response."


def is_stream_event(value: Any) -> bool:
    """An event of a streamed Responses call: typed ``response.…`` and without the ``output``
    of a whole Response, or its ``error`` event (numbered by its ``sequence_number``, as
    every event the API streams is)."""
    if not isinstance(value, Mapping) or "role" in value or "output" in value:
        return False
    kind = value.get("type")
    if kind == ERROR:
        return "sequence_number" in value and "message" in value
    return isinstance(kind, str) and kind.startswith(_PREFIX)


def error_text(event: Mapping[str, Any]) -> str:
    """An ``error`` event in the API's words: ``server_error: The server had an error…``."""
    code, message = event.get("code"), event.get("message")
    text = str(message) if message else "an error with no message"
    return f"{code}: {text}" if isinstance(code, str) and code else text


class StreamedResponse:
    """The events of one streamed Response, from its ``response.created`` on."""

    def __init__(self, start: Mapping[str, Any], line: int = 1) -> None:
        self.line = line
        self.head: dict[str, Any] = {}
        self.items: dict[int, dict[str, Any]] = {}  # as added, grown by the deltas
        self.done: dict[int, Any] = {}  # as output_item.done gives them, whole
        self.final: Mapping[str, Any] | None = None  # the terminal event's Response
        self.add(start)

    @property
    def ended(self) -> bool:
        return self.final is not None

    def add(self, event: Mapping[str, Any]) -> str | None:
        """Add one event (of :data:`READ`); what is wrong with it, if anything (it is then
        skipped)."""
        kind = event.get("type")
        response = event.get("response")
        if kind in _HEADS or kind in ENDS:
            if not isinstance(response, Mapping):
                return f"a {kind} event without its response skipped"
            if kind in ENDS:
                self.final = response
            else:
                self.head = {**response, "output": []}
            return None
        index = event.get("output_index")
        if not isinstance(index, int) or isinstance(index, bool):
            return f"a {kind} event without an output_index skipped"
        if kind in (_ITEM_ADDED, _ITEM_DONE):
            item = event.get("item")
            if not isinstance(item, Mapping):
                return f"a {kind} event without its item skipped"
            if kind == _ITEM_DONE:
                self.done[index] = item
            else:
                self.items[index] = {**item, "content": list(item.get("content") or []),
                                     "summary": list(item.get("summary") or [])}  # fmt: skip
            return None
        item = self.items.get(index)
        if item is None:
            return f"a {kind} event for output item {index}, never added, skipped"
        if kind in (_PART_ADDED, _SUMMARY_ADDED):
            place, index_key = _PLACES[str(kind)]
            part = event.get("part")
            _part(
                item[place], event.get(index_key), dict(part) if isinstance(part, Mapping) else {}
            )
            return None
        where, key = _DELTAS[str(kind)]
        delta = event.get("delta")
        if not isinstance(delta, str):
            return f"a {kind} event without its delta skipped"
        if where == "item":
            item[key] = str(item.get(key) or "") + delta
            return None
        at = event.get("content_index" if where == "content" else "summary_index")
        kind_of_part = "summary_text" if where == "summary" else (
            "reasoning_text" if item.get("type") == "reasoning" else "output_text")  # fmt: skip
        part = _part(item[where], at, {"type": kind_of_part})
        part[key] = str(part.get(key) or "") + delta
        return None

    def response(self) -> dict[str, Any]:
        """The Response the events stand for: the terminal event's, its output filled with the
        items as done when the API left it out; before any such event, the head with every
        item as far as it came (done, or grown by its deltas)."""
        if self.final is not None:
            output = self.final.get("output")
            if isinstance(output, list) and output:
                return dict(self.final)
            return {**self.final, "output": [self.done[i] for i in sorted(self.done)]}
        items = {**{i: _trimmed(item) for i, item in self.items.items()}, **self.done}
        return {**self.head, "output": [items[i] for i in sorted(items)]}


def _part(parts: list[Any], at: Any, part: dict[str, Any]) -> dict[str, Any]:
    """The part at index ``at`` of ``parts`` (a message's content, a reasoning summary),
    ``part`` put there when there is none yet."""
    at = at if isinstance(at, int) and not isinstance(at, bool) and at >= 0 else len(parts)
    while len(parts) <= at:
        parts.append(None)
    if not isinstance(parts[at], dict):
        parts[at] = part
    found: dict[str, Any] = parts[at]
    return found


def _trimmed(item: dict[str, Any]) -> dict[str, Any]:
    """An item as its deltas grew it, without the lists it never had (a call has no content)
    and without the gaps of parts never added."""
    kept = {k: v for k, v in item.items() if k not in ("content", "summary") or v}
    for key in ("content", "summary"):
        if key in kept:
            kept[key] = [p for p in kept[key] if p is not None]
    return kept
