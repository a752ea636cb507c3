"""LLaMA-Factory v1 messages datasets: ``{"messages": [{role, content: [{type, value}]}]}``.

LLaMA-Factory's v1 trainer reads one data format, the "messages format" every other dataset
format is converted into (hiyouga/LLaMA-Factory ``src/llamafactory/v1/utils/types.py``:
``SFTSample``, ``Message``, ``Content``; its converters in
``src/llamafactory/v1/plugins/data_plugins/converter.py``). A dataset is JSON lines (or a JSON
array) of rows, one run each: ``data/v1_sft_demo.jsonl``, ``data/reason_tool_use_demo_50.jsonl``.
turnfold reads such a file as a file of runs (:mod:`turnfold.corpus.runs`: ``turnfold.scan``
makes a row of each, ``turnfold.load(path, sample=n)`` reads the n-th); this format reads one
row, or its messages.

A row is ``{messages, tools?, extra_info?, _dataset_name?}``; ``tools`` is the tools' JSON
schemas as one JSON string (``metadata["tools"]``, parsed), its other keys are metadata. A
message is ``{role: "system" | "user" | "assistant" | "tool", content: [parts], loss_weight?}``,
each part ``{type, value}`` with ``type`` one of ``text``, ``reasoning``, ``tool_call``,
``image_url``, ``video_url``, ``audio_url``. Each message becomes the Chat Completions message it
stands for and is read by the ``openai`` format's builder
(:class:`~turnfold.formats.openai_chat.OpenAIChatBuilder`), as the trainer renders it for a chat
template (``_to_hf_messages``, ``src/llamafactory/v1/core/rendering/format.py``: text parts
concatenated, ``reasoning`` parts as ``reasoning_content``, ``tool_call`` parts as
``tool_calls``):

- ``system`` → ``metadata["system"]``;
- ``user`` → a prompt: its text parts, and each media part as a line naming its file
  (``[image: a.jpg]``) where the converter put it, in place of the ``<image>`` tag
  (``_to_content_blocks``);
- ``assistant`` → :class:`Thinking` (its ``reasoning`` parts), its text, and a call per
  ``tool_call`` part, whose value is the JSON of ``{"name", "arguments"}``; the calls of one
  message are one batch. The format records no call ids: each call gets ``call-<n>``, its place
  in the row. A value that is no such JSON is kept as a call named ``tool_call`` holding the
  text, with a warning;
- ``tool`` → its text parts are the results of the calls still waiting, oldest first (the
  ``sharegpt`` converter writes a ``tool`` message per ``observation``). Some datasets answer
  the calls of a message in one text part, a JSON list of ``{tool_call_id?, name, content}``,
  one per call in order (``reason_tool_use_demo_50.jsonl``): when the list holds as many
  results as calls wait, naming the same tools in order, each call gets its ``content``. A
  result no call waits for is kept as a call of its own, with a warning. No error flag is
  recorded: a call with its result is ``unknown`` (L-3).

``loss_weight`` (whether the trainer learns from the message) is each of its entries'
``meta["loss_weight"]``. No timestamps, usage or model are recorded.

Preference (ranking) rows, for reward modelling and DPO, hold two replies to one conversation:
the chosen one, read after the conversation (its answer), and the rejected one, read before it
with its entries marked ``meta["rejected"]`` (as a response mini-swe-agent rejected is), so that
it is shown but is neither the answer nor a turn of its own; a call it makes is answered by
nothing that follows. Two shapes are read:

- v1's ``{chosen_messages, rejected_messages, tools?}`` (``DPOSample``; ``data/v1_dpo_demo.jsonl``):
  two lists of messages, each the whole conversation with its reply. The messages both start
  with are the conversation, read once; the rest of each is its reply. When the rejected ones
  part from the chosen before their reply (another prompt), only their reply is read after the
  chosen's last prompt, with a warning;
- the ``alpaca`` formatting's ``{instruction, input?, chosen, rejected, system?, history?}``
  (``data/README.md``; the ultrafeedback dataset): the prompt is ``instruction`` and ``input``
  on two lines, after the ``system`` prompt and ``history``'s ``[prompt, response]`` pairs, as
  LLaMA-Factory's converter aligns it (``src/llamafactory/data/converter.py``); the replies are
  text. Each is read as the message it becomes.

(A preference row of the ``sharegpt`` formatting is :mod:`~turnfold.formats.sharegpt`'s.)

Detection: a row (or a list, or JSON lines) of messages whose content parts are ``{type,
value}`` objects: the ``value`` key is the mark (Chat Completions parts hold ``text``); an
alpaca row whose ``instruction``, ``chosen`` and ``rejected`` are text.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import mark_rejected, stringify
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_chat import OpenAIChatBuilder
from turnfold.formats.protocol import not_read
from turnfold.formats.sharegpt import chat_calls
from turnfold.formats.source import Source, type_of_record, warning_count
from turnfold.formats.wrappers import keep_wrapper_keys, pair_key, sample
from turnfold.model import Transcript

NAME = "llama-factory"

#: Each message is one record, named by its role.
RECORDS = Records(
    mapped={
        "system": 'its text: metadata["system"]',
        "user": "a prompt: its text parts, and its media parts (image_url, video_url, "
        "audio_url) as lines naming their files",
        "assistant": "reasoning parts as Thinking, text parts, tool_call parts as one batch of "
        "calls",
        "tool": "its text parts: the results of the calls still waiting, oldest first",
        "rejected": "a preference row's rejected reply (rejected_messages past the conversation; "
        "an alpaca row's rejected text): read before the chosen reply (the answer), its "
        'entries marked meta["rejected"]',
    },
    ignored={
        "rejected/conversation": "the conversation rejected_messages repeat: read once, from "
        "chosen_messages",
    },
)

_ROLES = ("system", "user", "assistant", "tool")
#: ``Content.type`` (``src/llamafactory/v1/utils/types.py``), media by the word a line shows.
_MEDIA = {"image_url": "image", "video_url": "video", "audio_url": "audio"}
_TEXT, _REASONING, _CALL = "text", "reasoning", "tool_call"
#: The roles of a reply: what follows a conversation's last prompt.
_REPLY_ROLES = ("assistant", "tool")
#: A v1 preference row's lists (``DPOSample``).
_CHOSEN_MESSAGES, _REJECTED_MESSAGES = "chosen_messages", "rejected_messages"
#: ``wrappers.pair_key`` of an ``alpaca`` formatting's preference row: its prompt and both
#: replies as text.
_ALPACA_CHOSEN = "chosen"
_REJECTED, _REJECTED_CONVERSATION = "rejected", "rejected/conversation"
#: A numbered message: its line (its place in the row), the message.
_Numbered = tuple[int, Any]


def _classify(message: Any) -> int:
    if not isinstance(message, Mapping) or message.get("role") not in _ROLES:
        return NOT_MINE
    content = message.get("content")
    if not isinstance(content, list):
        return NOT_MINE
    if not all(isinstance(p, Mapping) and isinstance(p.get("type"), str) and "value" in p
               for p in content):  # fmt: skip
        return NOT_MINE
    return DISTINCTIVE if content or "loss_weight" in message else READABLE


_LACKS = "no {type, value} content parts"


def detect(source: Source) -> Evidence:
    """A row of messages, a list of them or JSON lines of them, with ``{type, value}`` parts;
    an alpaca preference row."""
    if not source.is_document:
        return Evidence.of(source.head_values(), _classify, _LACKS)
    document = source.document
    pair = pair_key(document)
    if pair == _ALPACA_CHOSEN:
        return Evidence(share=1.0, marks=1)
    messages = document.get("messages") if isinstance(document, Mapping) else document
    if messages is None and pair == _CHOSEN_MESSAGES:  # as _row reads it: both lists, or none
        messages = document[_CHOSEN_MESSAGES]
    if not isinstance(messages, list) or not messages:
        return Evidence.none("no messages list")
    return Evidence.of(sample(messages), _classify, _LACKS)


def _record_of(message: Any) -> str:
    """The record type a message is accounted for as: its role."""
    role = message.get("role") if isinstance(message, Mapping) else None
    return role if isinstance(role, str) and role else type_of_record(message)


def _value(part: Mapping[str, Any]) -> str:
    value = part.get("value")
    return value if isinstance(value, str) else stringify(value)


def _split_results(text: str, names: list[str]) -> list[str] | None:
    """One text part that answers every waiting call: a JSON list of ``{name, content}``, one
    per call, naming the calls' tools in order; None when it is not that (a tool's own output
    that is a JSON list is a result as it is)."""
    try:
        results = json.loads(text)
    except ValueError:
        return None
    if not isinstance(results, list) or len(results) != len(names):
        return None
    split = []
    for result, name in zip(results, names, strict=True):
        if not isinstance(result, Mapping) or "content" not in result:
            return None
        if result.get("name") != name:
            return None
        content = result["content"]
        split.append(
            content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        )
    return split


class _Reader:
    """v1 messages as Chat Completions messages, fed to the ``openai`` format's builder."""

    def __init__(self, source: Source, transcript: Transcript) -> None:
        self.source = source
        self.builder = OpenAIChatBuilder(transcript, source.name)
        self.waiting: deque[tuple[str, str]] = deque()  # (id, tool name) of calls without results
        self.calls = 0

    def feed(self, message: Any, line: int, record: str | None = None) -> None:
        """Read one message, accounted for as ``record`` (else by its role)."""
        role = message.get("role") if isinstance(message, Mapping) else None
        record = record or _record_of(message)
        if isinstance(message, MalformedLine):
            self.source.warn(message.reason, line, record_type=record)
            return
        content = message.get("content") if isinstance(message, Mapping) else None
        if role not in _ROLES or not isinstance(content, list):
            self.source.warn("not a LLaMA-Factory message (role and a list of parts)", line,
                             record_type=record)  # fmt: skip
            return
        transcript = self.builder.transcript
        warnings, before = warning_count(transcript.warnings), len(transcript.entries)
        for chat in self._chat(str(role), content, line):
            self.builder.feed(chat, line)
        weight = message.get("loss_weight")
        if isinstance(weight, (int, float)) and not isinstance(weight, bool):
            for entry in transcript.entries[before:]:
                transcript.update(entry, meta={**entry.meta, "loss_weight": weight})
        warned = warning_count(transcript.warnings) > warnings
        self.source.note(record, "warned" if warned else "mapped")

    def _parts(self, content: list[Any], line: int) -> dict[str, list[str]]:
        """The values of a message's parts by type; media parts as lines, in the text."""
        found: dict[str, list[str]] = {_TEXT: [], _REASONING: [], _CALL: []}
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if isinstance(part, Mapping) and kind in found:
                found[str(kind)].append(_value(part))
            elif isinstance(part, Mapping) and kind in _MEDIA:
                found[_TEXT].append(f"[{_MEDIA[str(kind)]}: {_value(part)}]")
            else:
                self.builder.warn(f"a content part of type {kind!r} not read", line)
        return found

    def _chat(self, role: str, content: list[Any], line: int) -> list[dict[str, Any]]:
        """The Chat Completions messages a v1 message stands for."""
        parts = self._parts(content, line)
        # Text parts are concatenated, as the trainer renders them (``text += value``).
        text = "".join(parts[_TEXT])
        if role in ("system", "user"):
            return [{"role": role, "content": text}]
        if role == "tool":
            return self._results(parts[_TEXT], line)
        chat: dict[str, Any] = {"role": "assistant", "content": text}
        if parts[_REASONING]:
            chat["reasoning_content"] = "".join(parts[_REASONING])
        if parts[_CALL]:
            chat["tool_calls"] = self._calls(parts[_CALL], line)
        return [chat]

    def _calls(self, values: list[str], line: int) -> list[dict[str, Any]]:
        """The calls of a message's ``tool_call`` parts, each waiting for its result."""
        calls: list[dict[str, Any]] = []
        for value in values:
            made = chat_calls(value, _CALL, self.calls, lambda why: self.builder.warn(why, line))
            self.calls += len(made)
            self.waiting.extend((call["id"], call["function"]["name"]) for call in made)
            calls += made
        return calls

    def _results(self, texts: list[str], line: int) -> list[dict[str, Any]]:
        """A ``tool`` message's text parts as the results of the calls waiting, in order."""
        if not texts:
            self.builder.warn("a tool message with no text", line)
            return []
        if len(texts) == 1 and self.waiting:
            texts = _split_results(texts[0], [name for _, name in self.waiting]) or texts
        results = []
        for place, text in enumerate(texts):
            call_id = self.waiting.popleft()[0] if self.waiting else f"result-{line}.{place}"
            results.append({"role": "tool", "tool_call_id": call_id, "content": text})
        return results


def _replies(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") in _REPLY_ROLES


def _reply_start(messages: list[Any]) -> int:
    """Where the reply after the last prompt (or system message) of ``messages`` starts."""
    return next((at + 1 for at in range(len(messages) - 1, -1, -1)
                 if not _replies(messages[at])), 0)  # fmt: skip


def _pair(
    row: dict[str, Any], source: Source
) -> tuple[list[_Numbered], list[_Numbered], list[_Numbered]]:
    """A v1 preference row's conversation, its rejected reply and its chosen one (taken out of
    ``row``); the conversation the rejected messages repeat is accounted for here. A message
    is numbered by its place in ``chosen_messages``, or after them in ``rejected_messages``."""
    chosen, rejected = row.pop(_CHOSEN_MESSAGES), row.pop(_REJECTED_MESSAGES)
    shared = next(
        (at for at, (one, other) in enumerate(zip(chosen, rejected, strict=False)) if one != other),
        min(len(chosen), len(rejected)),
    )
    cut, rejected_cut = shared, shared
    if all(_replies(message) for message in rejected[shared:]):
        for _ in range(shared):
            source.note(_REJECTED_CONVERSATION, "ignored")
    else:  # another prompt: the rejected reply is read after the chosen conversation's
        cut, rejected_cut = _reply_start(chosen), _reply_start(rejected)
        source.warn(
            "rejected_messages hold another conversation than chosen_messages: only their "
            "reply is read", len(chosen) + 1, record_type=_REJECTED_CONVERSATION,
        )  # fmt: skip
        for _ in range(rejected_cut - 1):
            source.note(_REJECTED_CONVERSATION, "warned")
    numbered = list(enumerate(chosen, start=1))
    replied = list(enumerate(rejected, start=len(chosen) + 1))[rejected_cut:]
    return numbered[:cut], replied, numbered[cut:]


def _alpaca(row: dict[str, Any]) -> tuple[list[_Numbered], list[_Numbered], list[_Numbered]]:
    """An alpaca preference row as v1 messages, numbered in their order (its keys taken out of
    ``row``): the conversation, the rejected reply, the chosen one."""

    def text(role: str, value: str) -> dict[str, Any]:
        return {"role": role, "content": [{"type": _TEXT, "value": value}]}

    messages = []
    if isinstance(row.get("system"), str):
        messages.append(text("system", row.pop("system")))
    history = row.get("history")
    if isinstance(history, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, str) for t in pair)
        for pair in history
    ):
        del row["history"]
        for prompt, response in history:
            messages += [text("user", prompt), text("assistant", response)]
    query = row.pop("input") if isinstance(row.get("input"), str) else ""
    # "prompt\nquery", as the converter joins them (an empty one left out).
    messages.append(text("user", "\n".join(t for t in (row.pop("instruction"), query) if t)))
    after = len(messages)
    return (
        list(enumerate(messages, start=1)),
        [(after + 1, text("assistant", row.pop("rejected")))],
        [(after + 2, text("assistant", row.pop("chosen")))],
    )


def _row(
    document: Any, source: Source
) -> tuple[list[_Numbered], list[_Numbered], list[_Numbered], dict[str, Any]]:
    """A document's conversation, its rejected and chosen replies (none but for a preference
    row), and the row's other keys."""
    if isinstance(document, list):
        return list(enumerate(document, start=1)), [], [], {}
    row = dict(document) if isinstance(document, Mapping) else {}
    pair = pair_key(row)
    if pair == _ALPACA_CHOSEN:
        return (*_alpaca(row), row)
    messages = row.pop("messages", None)
    if messages is None and pair == _CHOSEN_MESSAGES:
        return (*_pair(row, source), row)
    if not isinstance(messages, list):
        raise TranscriptFormatError(source.name, [NAME], 1, "no messages list")
    return list(enumerate(messages, start=1)), [], [], row


def _feed(
    reader: _Reader, source: Source, numbered: Iterable[_Numbered], record: str | None = None
) -> None:
    for line, message in numbered:
        try:
            reader.feed(message, line, record)
        except Exception as exc:
            not_read(source, line, exc)
            if source.is_document:  # a line of JSON lines is noted by its warning
                source.note(record or _record_of(message), "warned")


def read(source: Source) -> Transcript:
    """Every message of a row (or a list of messages, or JSON lines of them), each accounted for
    by its role (:data:`RECORDS`), a preference row's rejected reply as ``rejected``; the row's
    other keys (``tools``, ``extra_info``) kept in ``metadata``."""
    transcript = Transcript(metadata={"source_format": NAME})
    reader = _Reader(source, transcript)
    conversation: Iterable[_Numbered]
    if source.is_document:
        conversation, rejected, chosen, rest = _row(source.document, source)
    else:
        conversation, rejected, chosen, rest = source.records(), [], [], {}
    _feed(reader, source, conversation)
    # The rejected reply's calls never ran: no result of the chosen reply answers them.
    since, waiting = len(transcript.entries), reader.waiting.copy()
    _feed(reader, source, rejected, _REJECTED)
    reader.waiting = waiting
    mark_rejected(transcript, since)
    _feed(reader, source, chosen)
    if reader.builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], 1, "no LLaMA-Factory messages")
    keep_wrapper_keys(transcript, rest)
    return transcript
