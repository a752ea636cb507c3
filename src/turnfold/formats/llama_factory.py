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

Detection: a row (or a list, or JSON lines) of messages whose content parts are ``{type,
value}`` objects: the ``value`` key is the mark (Chat Completions parts hold ``text``).
"""

from __future__ import annotations

import contextlib
import json
from collections import deque
from collections.abc import Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import stringify
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.openai_chat import OpenAIChatBuilder
from turnfold.formats.protocol import not_read
from turnfold.formats.source import Source, type_of_record
from turnfold.formats.wrappers import keep_wrapper_keys, sample
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
    },
)

_ROLES = ("system", "user", "assistant", "tool")
#: ``Content.type`` (``src/llamafactory/v1/utils/types.py``), media by the word a line shows.
_MEDIA = {"image_url": "image", "video_url": "video", "audio_url": "audio"}
_TEXT, _REASONING, _CALL = "text", "reasoning", "tool_call"


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
    """A row of messages, a list of them or JSON lines of them, with ``{type, value}`` parts."""
    if not source.is_document:
        return Evidence.of(source.head_values(), _classify, _LACKS)
    document = source.document
    messages = document.get("messages") if isinstance(document, Mapping) else document
    if not isinstance(messages, list) or not messages:
        return Evidence.none("no messages list")
    return Evidence.of(sample(messages), _classify, _LACKS)


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

    def feed(self, message: Any, line: int) -> None:
        role = message.get("role") if isinstance(message, Mapping) else None
        record = role if isinstance(role, str) and role else type_of_record(message)
        if isinstance(message, MalformedLine):
            self.source.warn(message.reason, line, record_type=record)
            return
        content = message.get("content") if isinstance(message, Mapping) else None
        if role not in _ROLES or not isinstance(content, list):
            self.source.warn("not a LLaMA-Factory message (role and a list of parts)", line,
                             record_type=record)  # fmt: skip
            return
        transcript = self.builder.transcript
        warnings, before = len(transcript.warnings), len(transcript.entries)
        for chat in self._chat(str(role), content, line):
            self.builder.feed(chat, line)
        weight = message.get("loss_weight")
        if isinstance(weight, (int, float)) and not isinstance(weight, bool):
            for entry in transcript.entries[before:]:
                transcript.update(entry, meta={**entry.meta, "loss_weight": weight})
        self.source.note(record, "warned" if len(transcript.warnings) > warnings else "mapped")

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
            chat["tool_calls"] = [self._call(value, line) for value in parts[_CALL]]
        return [chat]

    def _call(self, value: str, line: int) -> dict[str, Any]:
        """A ``tool_call`` part's call, given the id of its place."""
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping) and isinstance(parsed.get("name"), str) and parsed["name"]:
            name, arguments = parsed["name"], parsed.get("arguments")
        else:
            self.builder.warn("a tool_call that is no {name, arguments} JSON", line)
            name, arguments = _CALL, {"text": value}
        self.calls += 1
        call_id = f"call-{self.calls}"
        self.waiting.append((call_id, name))
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        return {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": arguments}}  # fmt: skip

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


def read(source: Source) -> Transcript:
    """Every message of a row (or a list of messages, or JSON lines of them), each accounted for
    by its role (:data:`RECORDS`); the row's other keys (``tools``, ``extra_info``) kept in
    ``metadata``."""
    transcript = Transcript(metadata={"source_format": NAME})
    reader = _Reader(source, transcript)
    rest: dict[str, Any] = {}
    if source.is_document:
        document = source.document
        messages = document.get("messages") if isinstance(document, Mapping) else document
        if not isinstance(messages, list):
            raise TranscriptFormatError(source.name, [NAME], 1, "no messages list")
        if isinstance(document, Mapping):
            rest = {k: v for k, v in document.items() if k != "messages"}
        records: Any = enumerate(messages, start=1)
    else:
        records = source.records()
    for line, message in records:
        try:
            reader.feed(message, line)
        except Exception as exc:
            not_read(source, line, exc)
            if source.is_document:  # a line of JSON lines is noted by its warning
                role = message.get("role") if isinstance(message, Mapping) else None
                source.note(role if isinstance(role, str) and role else type_of_record(message),
                            "warned")  # fmt: skip
    if reader.builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], 1, "no LLaMA-Factory messages")
    if isinstance(rest.get("tools"), str):  # the schemas as one JSON string: as a list
        with contextlib.suppress(ValueError):  # else kept as the text it is
            rest["tools"] = json.loads(rest["tools"])
    keep_wrapper_keys(transcript, rest)
    return transcript
