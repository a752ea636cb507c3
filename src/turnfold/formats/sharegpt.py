"""ShareGPT conversations: ``{"from": ..., "value": ...}`` messages (spec L-2).

Datasets of chat and agent trajectories on the Hugging Face hub are often in this shape (the
ShareGPT dumps; LLaMA-Factory's ``sharegpt`` formatting, in which function-calling data such as
glaive's is published): a row holds ``conversations``, a list of messages each naming its
speaker in ``from`` and its text in ``value``, with the row's ``system`` prompt and ``tools``
(their JSON schemas, as one JSON string) beside it. (LLaMA-Factory's v1 trainer converts such
rows into its own messages format, read by :mod:`~turnfold.formats.llama_factory`.)

Mapping: each message becomes the Chat Completions message it stands for and is read by the
``openai`` format's builder (:class:`~turnfold.formats.openai_chat.OpenAIChatBuilder`), so the
rules of that format hold here too:

- ``human`` / ``user`` → a prompt; ``gpt`` / ``assistant`` (and the older dumps' ``chatgpt``,
  ``bard``, ``bing``, ``model``) → the assistant's text; ``system`` → ``metadata["system"]``;
- ``function_call`` → a tool call: its value is the JSON of ``{"name", "arguments"}`` (or a list
  of them: calls made together, one batch). The format records no call ids: each call gets
  ``call-<n>``, its place in the conversation;
- ``observation`` (and ``tool``, ``function``) → the result of the oldest call still waiting for
  one. The format records no error flag, so a call with its result is ``unknown`` (L-3); a
  result no call waits for is kept as a call of its own, with a warning;
- calls written in the text in the Hermes template (NousResearch's hermes-function-calling-v1:
  ``gpt`` values with ``<tool_call>`` tags, ``tool`` values of ``<tool_response>`` blocks) are
  read as the ``openai`` format reads them: calls, and their results in order; so are
  ToolACE's (``user``, ``assistant`` and ``tool`` values, the tools declared in the row's
  ``system`` prompt): an assistant value that is wholly a Python list of calls to them,
  ``[GetCompetitions(), Get Scores(date="2023-07-04")]``, and the JSON list of ``{"name",
  "results"}`` that answers them.

A ``function_call`` whose value is not such JSON is kept as a call named ``function_call``
holding the text, with a warning. No timestamps, usage or model are recorded.

A preference (ranking) row, as LLaMA-Factory's ``sharegpt`` formatting writes it for reward
modelling and DPO (``data/dpo_en_demo.json``), ends its ``conversations`` on a prompt and holds
the two replies to it beside them, each one message: ``chosen``, the better, is read after the
conversation, its answer; ``rejected`` is read before it, its entries marked
``meta["rejected"]`` (as a response mini-swe-agent rejected is), so that it is shown but is
neither the answer nor a turn of its own. A reply that is no assistant's message (no
``gpt``, no ``function_call``) stays in the metadata, as LLaMA-Factory takes no other.

Detection: a list (or a row holding one) whose every message has ``from`` and ``value`` and no
``role``; ``from`` values no other format writes (``human``, ``gpt``, ``function_call``,
``observation``) are its marks.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import mark_rejected
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_chat import MediaFiles, OpenAIChatBuilder
from turnfold.formats.source import Source, type_of_record, warning_count
from turnfold.formats.wrappers import keep_wrapper_keys, sample
from turnfold.model import Transcript

NAME = "sharegpt"

#: Each message is one record, named by its ``from``.
RECORDS = Records(
    mapped={
        "human": "a prompt",
        "user": "a prompt",
        "gpt": "the assistant's text",
        "assistant": "the assistant's text",
        "chatgpt": "the assistant's text (older ShareGPT dumps)",
        "bard": "the assistant's text (older ShareGPT dumps)",
        "bing": "the assistant's text (older ShareGPT dumps)",
        "model": "the assistant's text",
        "system": 'instructions: metadata["system"]',
        "function_call": "tool calls: {name, arguments} JSON, or a list of them (one batch)",
        "observation": "the result of the oldest call still waiting for one",
        "tool": "the result of the oldest call still waiting for one",
        "function": "the result of the oldest call still waiting for one",
        "rejected": "a preference row's rejected reply: read before the chosen one (the answer), "
        'its entries marked meta["rejected"]',
    },
)

_ROLES: dict[str, str] = {
    **dict.fromkeys(("human", "user"), "user"),
    **dict.fromkeys(("gpt", "assistant", "chatgpt", "bard", "bing", "model"), "assistant"),
    "system": "system",
}
_CALL = "function_call"
_RESULTS = ("observation", "tool", "function")
#: Speakers only this format names so (``user``, ``assistant`` and ``system`` are everyone's).
_MARKS = frozenset({"human", "gpt", "chatgpt", "bard", "bing", _CALL, "observation"})
#: Keys a row keeps its conversation under (LLaMA-Factory's ``conversations`` first).
_LIST_KEYS = ("conversations", "conversation", "messages", "items")
#: A preference row's replies, each one message (LLaMA-Factory's ``columns``: ``chosen``,
#: ``rejected``).
_CHOSEN, _REJECTED = "chosen", "rejected"


def _classify(message: Any) -> int:
    if not isinstance(message, Mapping) or "role" in message or "from" not in message:
        return NOT_MINE
    if "value" not in message:
        return NOT_MINE
    speaker = message.get("from")
    if not isinstance(speaker, str):
        return NOT_MINE
    return DISTINCTIVE if speaker in _MARKS else READABLE


def _is_reply(message: Any) -> bool:
    """Whether ``message`` is the assistant's: a preference row's reply (LLaMA-Factory takes
    no other)."""
    if _classify(message) == NOT_MINE:
        return False
    return message["from"] == _CALL or _ROLES.get(message["from"]) == "assistant"


def _conversation(document: Any) -> tuple[list[Any], dict[str, Any]] | None:
    """A document's messages and the row's other keys (None when it holds no conversation)."""
    if isinstance(document, list):
        return document, {}
    if not isinstance(document, Mapping):
        return None
    for key in _LIST_KEYS:
        messages = document.get(key)
        if isinstance(messages, list) and messages and _classify(messages[0]) != NOT_MINE:
            return messages, {k: v for k, v in document.items() if k != key}
    return None


def detect(source: Source) -> Evidence:
    """A list of ``from``/``value`` messages, bare, in a row, or as JSON lines."""
    if not source.is_document:
        return Evidence.of(source.head_values(), _classify, "no ShareGPT speaker")
    found = _conversation(source.document)
    if found is None:
        return Evidence.none("no conversation of from/value messages")
    return Evidence.of(sample(found[0]), _classify, "no ShareGPT speaker")


class _Reader:
    """ShareGPT messages as Chat Completions messages, fed to the ``openai`` format's builder."""

    def __init__(self, source: Source, transcript: Transcript) -> None:
        self.source = source
        self.builder = OpenAIChatBuilder(transcript, source.name)
        self.waiting: deque[str] = deque()  # the ids of the calls still without a result
        self.calls = 0

    def feed(self, message: Any, line: int, record: str | None = None) -> None:
        """Read one message, accounted for as ``record`` (else by its speaker)."""
        speaker = message.get("from") if isinstance(message, Mapping) else None
        if record is None:
            record = speaker if isinstance(speaker, str) else type_of_record(message)
        if isinstance(message, MalformedLine):
            self.source.warn(message.reason, line, record_type=record)
            return
        if not isinstance(message, Mapping) or not isinstance(speaker, str):
            self.source.warn("not a ShareGPT message (no 'from')", line, record_type=record)
            return
        warnings = self.builder.transcript.warnings
        before = warning_count(warnings)
        chat = self._chat(speaker, message.get("value"), line)
        if chat is None:
            self.source.warn(f"message from {speaker!r} skipped", line, record_type=record)
            return
        self.builder.feed(chat, line)
        # As the builder's feed_noted says it, a call's own warning included, and counted:
        # past the listed ones a warning adds nothing to the list.
        self.source.note(record, "warned" if warning_count(warnings) > before else "mapped")

    def _chat(self, speaker: str, value: Any, line: int) -> dict[str, Any] | None:
        """The Chat Completions message a ShareGPT one stands for (None: an unknown speaker)."""
        # A value that is no text (a list of parts, a number) is shown as its JSON; none at all
        # is no text.
        if isinstance(value, str) or value is None:
            text = value or ""
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
        role = _ROLES.get(speaker)
        if role is not None:
            return {"role": role, "content": text}
        if speaker == _CALL:
            calls = chat_calls(value, _CALL, self.calls, lambda why: self.builder.warn(why, line))
            self.calls += len(calls)
            self.waiting.extend(call["id"] for call in calls)
            return {"role": "assistant", "content": None, "tool_calls": calls}
        if speaker in _RESULTS:
            if not self.waiting:  # Hermes' calls, written in the text: the builder's to pair
                return {"role": "tool", "content": text}
            return {"role": "tool", "tool_call_id": self.waiting.popleft(), "content": text}
        return None

    def rejected(self, message: Any, line: int) -> None:
        """A preference row's rejected reply, marked so."""
        since = len(self.builder.transcript.entries)
        self.feed(message, line, _REJECTED)
        mark_rejected(self.builder.transcript, since)


def chat_calls(
    value: Any, kind: str, first: int, warn: Callable[[str], object]
) -> list[dict[str, Any]]:
    """The Chat Completions tool calls a ``kind`` value (``function_call``, a v1 ``tool_call``
    part) makes: its JSON is one ``{"name", "arguments"}`` (``parameters`` in some datasets) or
    a list of them, one batch. The format records no call ids: each is ``call-<n>``, its place,
    counted on from the ``first`` calls before it. One that is no such JSON is kept as a call
    named ``kind`` holding the value, and ``warn`` is told."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
    made = parsed if isinstance(parsed, list) else [parsed]
    calls = []
    for place, each in enumerate(made, start=first + 1):
        if isinstance(each, Mapping) and isinstance(each.get("name"), str) and each["name"]:
            name, arguments = each["name"], each.get("arguments", each.get("parameters"))
        else:
            warn(f"a {kind} that is no {{name, arguments}} JSON")
            name, arguments = kind, {"text": value}
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        calls.append(
            {"id": f"call-{place}", "type": "function",
             "function": {"name": name, "arguments": arguments}}
        )  # fmt: skip
    return calls


def read(source: Source) -> Transcript:
    """Every message of ``source`` (a conversation, a row holding one, or JSON lines of
    messages), each accounted for by its speaker (:data:`RECORDS`), a preference row's replies
    after them; a row's other keys (``system``, ``tools``, an id) kept in ``metadata``."""
    transcript = Transcript(metadata={"source_format": NAME})
    reader = _Reader(source, transcript)
    found = _conversation(source.document) if source.is_document else None
    if found is not None:
        messages, rest = found
        system = rest.pop("system", None)
        if isinstance(system, str) and system:
            transcript.metadata["system"] = system
        reader.builder.tools = rest.get("tools")  # calls written as Python name them
        reader.builder.media = MediaFiles(rest)  # the files its <image> tags stand for
        for line, message in enumerate(messages, start=1):
            reader.feed(message, line)
        # A reply that is no assistant's message stays in the metadata, as any key of the row.
        line = len(messages)
        if _is_reply(rest.get(_REJECTED)):
            line += 1
            reader.rejected(rest.pop(_REJECTED), line)
        if _is_reply(rest.get(_CHOSEN)):
            reader.feed(rest.pop(_CHOSEN), line + 1)
        keep_wrapper_keys(transcript, rest)
    else:
        for line, record in source.records():
            reader.feed(record, line)
    if reader.builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], 1, "no ShareGPT messages")
    return transcript
