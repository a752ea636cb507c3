"""OpenAI Chat Completions message lists (spec L-2.5).

Input shapes: a list of ``{role, content, ...}`` messages as dicts, SDK objects (anything with
``model_dump``) or JSON lines; a request ``{"messages": [...]}``; a ChatCompletion response
``{"object": "chat.completion", "choices": [{"message": ...}]}`` (or a JSONL of them).

Mapping (:class:`OpenAIChatBuilder`):

- ``system`` / ``developer`` messages configure the model and are not prompts: their text goes
  to ``metadata["system"]`` (as the Anthropic and Responses loaders do with theirs);
- ``user`` → :class:`UserMessage`: a string, or the ``text`` parts of a content list; images,
  audio and files are counted in ``meta`` (a message of nothing but them reads ``[image]``);
- ``assistant`` → in this order: non-standard ``reasoning_content`` / ``reasoning`` (DeepSeek,
  vLLM, Qwen, OpenRouter) as :class:`Thinking` ``form="text"`` (OpenRouter's
  ``reasoning_details`` also give ``summary`` and ``encrypted``); ``content`` as
  :class:`AssistantText`; ``refusal`` as an AssistantText with ``meta["refusal"]``; each of
  ``tool_calls`` (``function`` with JSON-string ``arguments``, or ``custom`` with ``input``) as a
  :class:`ToolCall`. The calls of one message are one batch: the completion's ``id``, the
  message's ``id``, else ``msg-<line>``. The deprecated ``function_call`` is a call too;
- ``tool`` (by ``tool_call_id``) and the deprecated ``function`` (by ``name``) messages are the
  result of the matching call. Chat Completions has no error flag, so the call's status is
  ``unknown`` once its result arrives (spec L-3: success is never invented); a call without a
  result is ``executing`` in a live feed and ``unknown`` in a static load. A result for an
  unknown id is kept as a call of its own, with a warning;
- a ChatCompletion: its first choice's message as above, ``usage`` on the message's last
  AssistantText, ``created`` as the timestamp of its entries, ``finish_reason`` ``length`` → a
  warning :class:`SystemNotice` (the answer was cut off), ``content_filter`` →
  :class:`AssistantError`.

The format records no per-message timestamps, so times and durations stay ``None``.

Detection: a list (or request) whose every message has a Chat role and no ``type`` (Responses
items and Anthropic responses are typed), with string contents or Chat content parts. Lists
with Anthropic-only blocks never get here: the ``anthropic`` format is tried first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import MessageBuilder, NameSet, as_list
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.openai_responses import (
    attachment_counts,
    data_url_image,
    describe_call,
    openai_usage,
    output_content,
    parsed_arguments,
    part_image_url,
    parts_text,
    prompt_text,
    refusal_text,
    tool_result,
    unix_timestamp,
)
from turnfold.formats.source import Source, from_object, type_of_record
from turnfold.formats.wrappers import find_messages, keep_wrapper_keys, sample
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    ImageData,
    SystemNotice,
    Thinking,
    ThinkingForm,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "openai"

#: A message is one record, named by its role; a ChatCompletion is one record too.
RECORDS = Records(
    mapped={
        "system": 'instructions: metadata["system"]',
        "developer": 'instructions: metadata["system"]',
        "user": "a prompt (UserMessage; images, audio and files counted)",
        "assistant": "reasoning, text, refusal and tool calls, in order",
        "tool": "the result of the call with its tool_call_id",
        "function": "the result of a deprecated function_call, by name",
        "chat.completion": "its first choice's message, usage and finish reason",
        "request": "a request's messages, each read as above",
    },
)

_ROLES = NameSet({"system", "developer", "user", "assistant", "tool", "function"})
#: Keys and roles only Chat Completions messages have (Anthropic's messages have neither).
_CHAT_KEYS = ("tool_calls", "tool_call_id", "function_call", "reasoning_content", "refusal")
_CHAT_PARTS = NameSet({"text", "image_url", "input_audio", "file", "refusal"})
_TEXT = NameSet({"text"})


def _unread_parts(content: Any) -> list[str]:
    """The parts of a message's content list no Chat reader reads (their types): a part of
    another schema (``{"type": "text", "value": …}``), of an unknown type, or no object. A
    reader that passed over them lost them, and said nothing (spec X-2)."""
    if not isinstance(content, list):
        return []
    unread = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind in _CHAT_PARTS and kind != "text":
            continue
        unread.append(repr(kind) if isinstance(kind, str) else "no type")
    return unread


def _prompt_images(content: Any) -> list[ImageData]:
    """The inline images of a prompt's content list (``image_url`` parts holding a ``data:``
    URL); a remote image is counted, never fetched (X-1)."""
    if not isinstance(content, list):
        return []
    found = (
        data_url_image(part_image_url(part))
        for part in content
        if isinstance(part, Mapping) and part.get("type") == "image_url"
    )
    return [image for image in found if image is not None]


_REASONING_DETAILS: dict[str, tuple[str, ThinkingForm]] = {
    "reasoning.text": ("text", "text"),
    "reasoning.summary": ("summary", "summary"),
}


class OpenAIChatBuilder(MessageBuilder):
    """Builds a transcript from Chat Completions messages fed one at a time (static or live).

    ``feed`` appends the entries of a new message and settles earlier calls through
    :meth:`Transcript.update`, so observers of a displayed transcript see each change (spec
    L-5). With ``live=True`` a new call is ``executing`` until its result arrives; in a static
    load a call without a result is ``unknown``. The input is never modified: arguments are
    parsed or copied, never shared.
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<messages>",
        *,
        cwd: str | None = None,
        live: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, cwd=cwd, live=live)
        #: How many records were recognised as Chat messages (a source with none is not one).
        self.recognized = 0
        self._by_name: dict[str, ToolCall] = {}  # deprecated function_call → function result

    # --- feeding ---------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        """Add one message (or every message of a request, or a ChatCompletion's answer)."""
        if not isinstance(message, Mapping) and hasattr(message, "model_dump"):
            message = from_object(message).document  # an SDK object, as plain JSON values
        if not isinstance(message, Mapping):
            self.warn("not a message object", line)
        elif is_completion(message):
            self.feed_completion(message, line)
        elif "role" not in message and isinstance(message.get("messages"), list):
            for inner in message["messages"]:
                self.feed(inner, line)
        else:
            self._message(message, line)

    def feed_completion(self, completion: Mapping[str, Any], line: int) -> None:
        """A ChatCompletion response: its first choice is the assistant's answer."""
        choice = next(
            (c for c in completion["choices"] if isinstance(c, Mapping) and "message" in c), None
        )
        if choice is None or not isinstance(choice.get("message"), Mapping):
            self.warn("chat completion without a message", line)
            return
        own_id = completion.get("id")
        model = completion.get("model")
        if isinstance(model, str) and model:
            self.transcript.metadata.setdefault("model", model)
        self._assistant(
            choice["message"],
            line,
            timestamp=unix_timestamp(completion.get("created")),
            batch_id=own_id if isinstance(own_id, str) and own_id else None,
            model=model if isinstance(model, str) else None,
            usage=chat_usage(completion.get("usage")),
        )
        self._finish_reason(choice.get("finish_reason"), unix_timestamp(completion.get("created")))

    def _message(self, message: Mapping[str, Any], line: int) -> None:
        role = message.get("role")
        unread = _unread_parts(message.get("content"))
        if unread and role in _ROLES:
            shown = ", ".join(unread[:3]) + (", …" if len(unread) > 3 else "")
            self.warn(f"{len(unread)} content part(s) of a {role} message not read ({shown})", line)
        if role == "user":
            self._user(message)
        elif role == "assistant":
            self._assistant(message, line)
        elif role == "tool":
            self._tool_result(message, line)
        elif role == "function":
            self._function_result(message, line)
        elif role in ("system", "developer"):
            self.recognized += 1
            text = parts_text(message.get("content"), _TEXT, "\n\n")
            if text:
                previous = self.transcript.metadata.get("system")
                self.transcript.metadata["system"] = f"{previous}\n\n{text}" if previous else text
        else:
            self.warn(f"message with unknown role {role!r} skipped", line)

    def _user(self, message: Mapping[str, Any]) -> None:
        self.recognized += 1
        content = message.get("content")
        counts = attachment_counts(content)
        images = _prompt_images(content)
        text = parts_text(content, _TEXT, "\n\n")
        text = text if text or images else prompt_text(text, counts)
        meta: dict[str, Any] = dict(counts)
        if isinstance(message.get("name"), str):
            meta["name"] = message["name"]
        if text or images:
            self._append(UserMessage(text=text, images=images, meta=meta))

    def _assistant(
        self,
        message: Mapping[str, Any],
        line: int,
        *,
        timestamp: str | None = None,
        batch_id: str | None = None,
        model: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.recognized += 1
        own_id = message.get("id")
        batch = batch_id or (own_id if isinstance(own_id, str) and own_id else f"msg-{line}")
        written = len(self.transcript.entries)
        thinking = reasoning_of(message)
        if thinking is not None:
            thinking.timestamp = timestamp
            self._append(thinking)
        text = parts_text(message.get("content"), _TEXT, "\n\n")
        if text:
            self._text(text, model, timestamp, {})
        refusal = message.get("refusal") or refusal_text(message.get("content"))
        if isinstance(refusal, str) and refusal:
            self._text(refusal, model, timestamp, {"refusal": True})
        for index, call in enumerate(as_list(message.get("tool_calls"))):
            if isinstance(call, Mapping):
                self._start_call(call, f"{line}.{index}", line, batch, timestamp)
        legacy = message.get("function_call")
        if isinstance(legacy, Mapping):
            self._start_legacy_call(legacy, line, batch, timestamp)
        attach_usage(self.transcript.entries[written:], usage, self.transcript)

    def _text(
        self, text: str, model: str | None, timestamp: str | None, meta: dict[str, Any]
    ) -> AssistantText:
        entry = AssistantText(text=text, model=model, timestamp=timestamp, meta=meta)
        self._append(entry)
        return entry

    def _start_call(
        self, call: Mapping[str, Any], where: str, line: int, batch: str, timestamp: str | None
    ) -> None:
        spec = call.get("function") or call.get("custom")
        spec = spec if isinstance(spec, Mapping) else {}
        name = _name(spec.get("name"))
        raw = spec.get("arguments") if "arguments" in spec else spec.get("input")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.warn("tool call without an id", line)
            call_id = f"call@{where}"
        entry = self._new_call(call_id, name, raw, batch, timestamp, line)
        self._calls[call_id] = entry

    def _start_legacy_call(
        self, spec: Mapping[str, Any], line: int, batch: str, timestamp: str | None
    ) -> None:
        name = _name(spec.get("name"))
        entry = self._new_call(
            f"function_call@{line}", name, spec.get("arguments"), batch, timestamp, line
        )
        self._by_name[name] = entry

    def _new_call(
        self, call_id: str, name: str, raw: Any, batch: str | None, timestamp: str | None, line: int
    ) -> ToolCall:
        previous = self._calls.get(call_id)
        if previous is not None and previous.result is None:
            self.warn(f"tool call id {call_id!r} reused before its result arrived", line)
        args = parsed_arguments(raw)
        status: ToolStatus = self.open_status
        entry = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_call(name, args, self.cwd),
            status=status,
            batch_id=batch,
            started_at=timestamp,
            timestamp=timestamp,
        )
        self._append(entry)
        return entry

    def _tool_result(self, message: Mapping[str, Any], line: int) -> None:
        self.recognized += 1
        call_id = message.get("tool_call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"tool result for an unknown tool_call_id {call_id!r}", line)
            own_id = call_id if isinstance(call_id, str) and call_id else f"tool@{line}"
            call = self._new_call(own_id, "", None, None, None, line)
            self._calls[own_id] = call
        self._settle(call, message.get("content"))

    def _function_result(self, message: Mapping[str, Any], line: int) -> None:
        self.recognized += 1
        name = _name(message.get("name"))
        call = self._by_name.pop(name, None)
        if call is None:
            self.warn(f"function result for an unknown call of {name!r}", line)
            call = self._new_call(f"function@{line}", name, None, None, None, line)
        self._settle(call, message.get("content"))

    def _settle(self, call: ToolCall, content: Any) -> None:
        # No error flag in this format: a result makes the call finished, outcome unknown (L-3).
        text, images = output_content(content)
        result = tool_result(call, text, images, "unknown")
        self.transcript.update(call, status="unknown", result=result, ended_at=None)

    def _finish_reason(self, reason: Any, timestamp: str | None) -> None:
        if reason == "length":
            text = "The response was cut off at the token limit."
            self._append(
                SystemNotice(text=text, level="warning", subtype="length", timestamp=timestamp)
            )
        elif reason == "content_filter":
            text = "The response was withheld by the content filter."
            self._append(AssistantError(message=text, timestamp=timestamp))

    # --- helpers ---------------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)


def _name(value: Any) -> str:
    return value if isinstance(value, str) else ""


def reasoning_of(message: Mapping[str, Any]) -> Thinking | None:
    """The non-standard reasoning of an assistant message, or None."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value.strip():
            return Thinking(text=value, form="text")
    details = message.get("reasoning_details")
    if not isinstance(details, list):
        return None
    for detail in details:
        if not isinstance(detail, Mapping):
            continue
        key_form = _REASONING_DETAILS.get(str(detail.get("type")))
        if key_form is not None and isinstance(detail.get(key_form[0]), str):
            return Thinking(text=detail[key_form[0]], form=key_form[1])
        if detail.get("type") == "reasoning.encrypted" and isinstance(detail.get("data"), str):
            return Thinking(form="encrypted", data=detail["data"])
    return None


def chat_usage(usage: Any) -> Usage | None:
    """A ChatCompletion ``usage`` (``prompt_tokens``, ``completion_tokens`` and details)."""
    return openai_usage(usage, "prompt_tokens", "completion_tokens")


def is_completion(value: Any) -> bool:
    """A ChatCompletion response: ``choices`` holding messages."""
    if not isinstance(value, Mapping) or not isinstance(value.get("choices"), list):
        return False
    return value.get("object") == "chat.completion" or any(
        isinstance(c, Mapping) and isinstance(c.get("message"), Mapping) for c in value["choices"]
    )


def _fits(message: Any) -> bool:
    """Whether ``message`` reads as a Chat Completions message (or a whole completion)."""
    if is_completion(message):
        return True
    if not isinstance(message, Mapping) or message.get("role") not in _ROLES or "type" in message:
        return False
    content = message.get("content")
    if content is None:
        # Only a call or a refusal stands without content; a record whose text sits elsewhere
        # (Cursor's ``message.content``) is not a Chat message.
        return any(key in message for key in ("tool_calls", "function_call", "refusal"))
    if isinstance(content, str):
        return True
    if not isinstance(content, list):
        return False
    return all(isinstance(p, Mapping) and p.get("type") in _CHAT_PARTS for p in content)


def looks_like_messages(messages: list[Any]) -> bool:
    """Every message fits Chat Completions (and there is one)."""
    return bool(messages) and all(_fits(m) for m in messages)


_CHAT_MARKS = ("tool_calls", "tool_call_id", "function_call")
_CHAT_ROLES = NameSet({"tool", "function", "developer"})  # roles no other message API has


def _classify(message: Any) -> int:
    if is_completion(message):
        return DISTINCTIVE
    if not _fits(message):
        return NOT_MINE
    if any(key in message for key in _CHAT_MARKS) or message.get("role") in _CHAT_ROLES:
        return DISTINCTIVE
    return READABLE


_LACKS = "no tool_calls or tool message"


def detect(source: Source) -> Evidence:
    """A Chat Completions message list, request or completion, bare or inside a wrapper."""
    document = source.document if source.is_document else None
    if document is None:
        return Evidence.of(source.head_values(), _classify, _LACKS)
    if isinstance(document, Mapping) and is_completion(document):
        return Evidence(share=1.0, marks=1)
    found = find_messages(document)
    if found is None:
        return Evidence.none("no message list")
    return Evidence.of(sample(found.messages), _classify, _LACKS)


def read(source: Source) -> Transcript:
    """Every message of ``source`` fed to an :class:`OpenAIChatBuilder` (static), each accounted
    for by its role (:data:`RECORDS`); a list inside a wrapper object is found by
    :func:`~turnfold.formats.wrappers.find_messages` and the wrapper's other keys kept."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = OpenAIChatBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    found = (
        find_messages(document)
        if isinstance(document, Mapping) and not is_completion(document)
        else None
    )
    if found is not None and isinstance(document, Mapping):
        _request_metadata(document, transcript)
        for line, message in enumerate(found.messages, start=1):
            builder.feed_noted(source, message, line, _record_type(message))
        keep_wrapper_keys(transcript, found.rest)
        first_line: int | None = 1
    else:
        first_line = builder.feed_records(source, _record_type)
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first_line, "no Chat Completions messages")
    return transcript


def _record_type(record: Any) -> str:
    """A message by its role; a ChatCompletion is ``chat.completion``; a request ``request``."""
    if is_completion(record):
        return "chat.completion"
    if isinstance(record, Mapping):
        role = record.get("role")
        if isinstance(role, str) and role:
            return role
        if isinstance(record.get("messages"), list):
            return "request"
    return type_of_record(record)


def _request_metadata(request: Mapping[str, Any], transcript: Transcript) -> None:
    if isinstance(request.get("model"), str):
        transcript.metadata["model"] = request["model"]
    system = request.get("system")  # not Chat's own shape, but cheap to keep when present
    if isinstance(system, str) and system:
        transcript.metadata["system"] = system
