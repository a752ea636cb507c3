"""Anthropic Messages API message lists (spec L-2.6).

Input shapes:

- a list of ``{role: "user" | "assistant", content: str | [blocks]}`` messages, as dicts or SDK
  objects (``load`` turns SDK objects into dicts first), or the same as JSON lines;
- a request ``{"messages": [...], "system": ...}`` (the system prompt goes to
  ``metadata["system"]``);
- one response object ``{"id": "msg_…", "type": "message", "role": "assistant", ...}``;
- a logged API call (:func:`~turnfold.formats.wrappers.exchange`: ``{"request": {...},
  "response": {...}}``, or a request with the ``response`` beside its messages): the request's
  messages, then the response's;
- a streamed response's raw events (``create(stream=True)``, each ``event.model_dump()`` a
  line, or a JSON array of them; :class:`StreamedMessage`): the events from ``message_start``
  to ``message_stop`` put together by the SDK's own rules (``accumulate_event``) into the
  message they stand for, read as a response; several responses follow each other, and a
  request written before its events (``{"model", "messages", ...}``) gives the messages not
  read yet (a request repeats the conversation so far). A stream without its
  ``message_stop`` is read as far as it goes and warned about (at the end of the file it is
  a run cut off, :func:`~turnfold.formats.common.stream_cut_off`); an ``error`` event is an
  :class:`AssistantError`; ``ping`` is ignored.

Mapping (blocks as in :mod:`turnfold.formats.anthropic_blocks`):

- a user message's text is a :class:`UserMessage`; a user message holding only ``tool_result``
  blocks is the agent loop reporting results, not a prompt. Pasted images (base64) are the
  message's ``images``; files the user attached (``document``, ``file``, ``container_upload``,
  an image by URL) are attachment lines in its text (name, media type, size; issue 11.8); both
  are counted in ``meta`` (``images``, ``documents``, ``files``); a ``search_result`` (a
  source given to cite) is a ``[search result: title — source]`` line and its text;
- an assistant message's blocks become entries in order; its calls form one batch whose id is the
  message's own ``id``, else ``msg-<line>``; ``usage`` goes on its last :class:`AssistantText`;
- ``tool_result`` pairs with its call by ``tool_use_id`` (``is_error`` → ``error``, otherwise
  ``success``); server tools (``server_tool_use`` + ``web_search_tool_result`` …) pair the same
  way inside the assistant message;
- ``stop_reason`` ``refusal`` → :class:`AssistantError`; ``max_tokens`` and
  ``model_context_window_exceeded`` → a warning :class:`SystemNotice` (the answer was cut off),
  ``pause_turn`` → one saying the API paused the turn (the model had not finished);
- the format records no timestamps, so times and durations stay ``None``; a call whose result
  never arrives stays ``unknown`` (spec L-3).

Detection is strict (spec L-2): a list of user/assistant messages is Anthropic only when a block
is typed the way only Anthropic types blocks (``tool_use``, ``tool_result``, ``thinking``, an
``image`` with a ``source``…), and no message carries OpenAI's marks (``tool_calls``,
``tool_call_id``, roles ``system`` / ``developer`` / ``tool``, parts such as ``input_text`` or
``image_url``). Plain ``{role, content: str}`` lists read the same in both APIs and are left to
``openai``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from turnfold.formats import anthropic_blocks as blocks
from turnfold.formats.catalog import Records
from turnfold.formats.common import MessageBuilder, NameSet, parse_arguments, stream_cut_off
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.source import Source, type_of_record
from turnfold.formats.wording import failure, notice
from turnfold.formats.wrappers import (
    Exchange,
    exchange,
    find_messages,
    keep_wrapper_keys,
    sample,
)
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    ImageData,
    ToolCall,
    ToolStatus,
    Transcript,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "anthropic"

#: The raw events of a streamed response that build its message (``RawMessageStreamEvent``).
_BUILDING = NameSet(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
     "message_delta", "message_stop"}
)  # fmt: skip
_PING, _ERROR = "ping", "error"
#: The events ``client.messages.stream()`` adds to the raw ones, each repeating a delta with
#: the snapshot so far (its ``content_block_stop`` and ``message_stop`` carry the whole block
#: and message too): nothing the raw events do not already hold.
_HELPER_EVENTS = NameSet({"text", "thinking", "input_json", "citation", "signature"})
_STREAM_END = "message_stop"

#: A message is one record, named by its role; a JSONL line that is not a message is warned.
RECORDS = Records(
    mapped={
        "user": "a prompt (UserMessage, attachments counted), or the results of earlier calls",
        "assistant": "text, thinking and tool calls in order; usage and stop reason",
        "request": "a request's messages not read yet (a request repeats the conversation so "
        'far), its system prompt as metadata["system"]',
        **dict.fromkeys(
            sorted(_BUILDING),
            "a streamed response's event: the events from message_start to "
            "message_stop are put together into the message they stand for, read as above",
        ),
        _ERROR: "an error the API streamed (overloaded, …): an AssistantError of its words",
    },
    ignored={
        _PING: "a keep-alive the API streams, no content",
        **dict.fromkeys(
            sorted(_HELPER_EVENTS),
            "client.messages.stream()'s repeat of a delta with the snapshot so "
            "far (its raw event is read)",
        ),
    },
)

#: Stop reasons that cut a response off, and the limit each names.
_CUT_OFF = {
    "max_tokens": "reader.cut_off_max_tokens",
    "model_context_window_exceeded": "reader.cut_off_context_window",
}
# Message keys only OpenAI's Chat Completions uses (an SDK dump writes them even when null).
_OPENAI_KEYS = ("tool_calls", "tool_call_id", "function_call", "refusal", "audio", "name")
_OPENAI_PART_TYPES = NameSet(
    {"input_text", "output_text", "image_url", "input_image", "input_file", "input_audio",
     "refusal", "file", "function_call", "function_call_output", "reasoning"}
)  # fmt: skip
_ROLES = ("user", "assistant")
#: The ``meta`` count an attached block adds to (``file`` and ``container_upload``: ``files``).
_COUNTED = {"image": "images", "document": "documents"}


class AnthropicBuilder(MessageBuilder):
    """Builds a transcript from Anthropic messages fed one at a time (static or live).

    ``feed`` appends the entries of a new message and settles earlier calls through
    :meth:`Transcript.update`, so observers of a displayed transcript see each change (spec
    L-5). With ``live=True`` a new call is ``executing`` until its result arrives; in a static
    load (``live=False``) a call without a result is ``unknown``. The builder only reads the
    messages it is given; it keeps references to tool inputs, never modifies them.
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
        self._unknown_blocks: set[str] = set()
        self._stream: StreamedMessage | None = None  # the streamed response being fed
        # The conversation read so far, each message's role and (a user's) content: a
        # request repeats it, and only what follows it is new.
        self._said: list[tuple[Any, Any]] = []

    # --- feeding ----------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        """Add one message; ``line`` is its position, used in warnings and default batch ids.
        A streamed response's events and a request are fed here too."""
        if not isinstance(message, Mapping):
            self.warn("not a message object", line)
            return
        if is_stream_event(message):
            self._event(message, line)
            return
        if self._stream is not None and "role" not in message and "type" in message:
            self._unknown_event(message, line)
            return
        self.end_stream()
        if "role" not in message and isinstance(message.get("messages"), list):
            self._request(message, line)
            return
        role = message.get("role")
        content = message.get("content")
        if role not in _ROLES or not isinstance(content, (str, list)):
            self.warn(f"not an Anthropic message (role {role!r})", line)
            return
        self._said.append((role, content if role == "user" else None))
        if role == "user":
            self._feed_user(content, line)
        else:
            self._feed_assistant(message, content, line)

    def _request(self, request: Mapping[str, Any], line: int) -> None:
        """A request written before its response (a log of calls): its system prompt, and its
        messages past the conversation read so far, which it repeats."""
        system = _system_text(request.get("system"))
        if system:
            self.transcript.metadata.setdefault("system", system)
        messages = request["messages"]
        said, self._said = self._said, []
        if not _repeats(messages, said):
            said = []  # another conversation: read whole
        self._said = list(said)
        for message in messages[len(said) :]:
            self.feed(message, line)

    # --- a streamed response ----------------------------------------------------------------

    def _event(self, event: Mapping[str, Any], line: int) -> None:
        kind = event["type"]
        if kind == "message_start":
            self.end_stream()
            self._stream = StreamedMessage(event, line)
        elif kind == _ERROR:
            # The API ends the stream with it (overloaded, …): what came before stays shown.
            self.end_stream(warn=False)
            self._append(AssistantError(message=_error_text(event)))
        elif kind == _PING or kind in _HELPER_EVENTS:
            return
        elif self._stream is None:
            self.warn(f"a {kind} event before any message_start skipped", line)
        else:
            problem = self._stream.add(event)
            if problem:
                self.warn(problem, line)
            if kind == _STREAM_END:
                self.end_stream()

    def _unknown_event(self, event: Mapping[str, Any], line: int) -> None:
        kind = str(event.get("type"))
        if kind not in self._unknown_blocks:  # one warning per event type, not per event
            self._unknown_blocks.add(kind)
            self.warn(f"unknown stream event type {kind!r} skipped", line)

    def end_stream(self, *, warn: bool = True) -> StreamedMessage | None:
        """The streamed response fed last, read as the message it stands for; it is whole once
        its ``message_stop``, another response's ``message_start``, a message or the end of the
        source follows. Returned when it ended before its ``message_stop`` (cut off), which
        ``warn`` says here; the end of the source says it its own way (:func:`read`)."""
        stream, self._stream = self._stream, None
        if stream is None:
            return None
        message = stream.message()
        if isinstance(message.get("model"), str):  # the model that answered: named once
            self.transcript.metadata["model"] = message["model"]
        self.feed(message, stream.line)
        if stream.stopped:
            return None
        if warn:
            reason = f"the streamed message begun on line {stream.line} ends without {_STREAM_END}"
            self.warn(f"{reason}: it may be cut off", stream.line)
        return stream

    def _feed_user(self, content: str | list[Any], line: int) -> None:
        if isinstance(content, str):
            if content:
                self._append(UserMessage(text=content))
            return
        texts: list[str] = []
        images: list[ImageData] = []
        counts = {"images": 0, "documents": 0, "files": 0}
        for block in content:
            kind = block.get("type") if isinstance(block, Mapping) else None
            if isinstance(block, str):
                texts.append(block)
            elif not isinstance(block, Mapping):
                self._unknown(block, line)
            elif blocks.is_result_block(block):
                self._settle(block, line)
            elif kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "image" and (image := blocks.image_of(block)) is not None:
                images.append(image)
                counts["images"] += 1
            elif kind == "image" or kind in blocks.ATTACHMENT_TYPES:
                # The user attached it (issue 11.8): an attachment line, never dropped.
                texts.append(blocks.attachment_line(block))
                counts[_COUNTED.get(str(kind), "files")] += 1
            elif kind == "search_result":
                # Sources the application gave the model to cite: where each is from, its text.
                body, _ = blocks.content_of(block.get("content"))
                texts.append(f"[search result: {blocks.search_line(block)}]\n{body or ''}".strip())
            else:
                self._unknown(block, line)
        meta = {key: n for key, n in counts.items() if n}
        text = "\n\n".join(t for t in texts if t)
        if text or images:
            self._append(UserMessage(text=text, images=images, meta=meta))

    def _feed_assistant(
        self, message: Mapping[str, Any], content: str | list[Any], line: int
    ) -> None:
        own_id = message.get("id")
        batch_id = own_id if isinstance(own_id, str) and own_id else f"msg-{line}"
        model = self._model_of(message)
        written = len(self.transcript.entries)
        for block in [content] if isinstance(content, str) else content:
            self._assistant_entry(block, batch_id, model, line)
        # The stop reason first: a refusal with no text carries the usage on its error.
        self._stop_reason(message.get("stop_reason"))
        usage = blocks.usage_of(message.get("usage"))
        if usage is not None:
            usage.response_id = own_id if isinstance(own_id, str) and own_id else None
            attach_usage(self.transcript.entries[written:], usage, self.transcript, model=model)

    def _model_of(self, message: Mapping[str, Any]) -> str | None:
        """The model that wrote an assistant message: its ``model``. A format that names it
        elsewhere (Cline's ``modelInfo``) says where here."""
        model = message.get("model")
        return model if isinstance(model, str) else None

    def _assistant_entry(
        self, block: Any, batch_id: str, model: str | None, line: int
    ) -> Entry | None:
        if isinstance(block, str):
            return self._append(AssistantText(text=block, model=model)) if block else None
        if not isinstance(block, Mapping):
            self._unknown(block, line)  # never dropped without a word (issue 11.8)
            return None
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                return self._append(AssistantText(text=text, model=model))
            return None
        if kind in ("thinking", "redacted_thinking"):
            thinking = blocks.thinking_of(block)
            return self._append(thinking) if thinking is not None else None
        if kind in blocks.CALL_TYPES:
            return self._start_call(block, batch_id, line)
        if blocks.is_result_block(block):  # a server tool's result sits in the same message
            self._settle(block, line)
            return None
        self._unknown(block, line)
        return None

    def _start_call(self, block: Mapping[str, Any], batch_id: str, line: int) -> ToolCall | None:
        status: ToolStatus = self.open_status
        call = blocks.call_of(block, cwd=self.cwd, batch_id=batch_id, status=status)
        if not call.call_id:
            self.warn(f"{block.get('type')} block without an id", line)
        elif call.call_id in self._calls:
            # A second call under one id could not be told apart when its result comes back.
            self.warn(f"duplicate tool call id {call.call_id!r} skipped", line)
            return None
        else:
            self._calls[call.call_id] = call
        self._append(call)
        return call

    def _settle(self, block: Mapping[str, Any], line: int) -> None:
        call_id = block.get("tool_use_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            self.warn(f"{block.get('type')} for an unknown tool_use_id {call_id!r}", line)
            return
        status, result = blocks.result_of(block)
        self.transcript.update(call, status=status, result=result)

    def _stop_reason(self, reason: Any) -> None:
        if not isinstance(reason, str):  # a value of another shape stops nothing it can name
            return
        if reason == "refusal":
            self._append(failure("reader.declined_refusal"))
        elif reason in _CUT_OFF:
            self._append(notice(_CUT_OFF[reason], level="warning", subtype=reason))
        elif reason == "pause_turn":
            # The API stopped a long server-tool turn midway; what precedes is not an answer.
            self._append(notice("reader.paused_turn", level="warning", subtype=reason))

    # --- helpers ----------------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def _unknown(self, block: Any, line: int) -> None:
        kind = str(block.get("type")) if isinstance(block, Mapping) else type(block).__name__
        if kind not in self._unknown_blocks:  # one warning per block type, not per block
            self._unknown_blocks.add(kind)
            self.warn(f"unknown content block type {kind!r} skipped", line)


# --- a streamed response's events --------------------------------------------------------------

#: The usage counts a ``message_delta`` may give: cumulative, so each overwrites the one before
#: (the SDK's ``accumulate_event``); one left out (null) keeps ``message_start``'s.
_RUNNING_COUNTS = (
    "output_tokens", "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
    "server_tool_use", "output_tokens_details",
)  # fmt: skip
#: What each delta type adds to, in its block: text is appended, a signature replaced.
_APPENDED = {"text_delta": "text", "thinking_delta": "thinking"}


class StreamedMessage:
    """The raw events of one streamed response put together into the Message they stand for,
    by the rules of the SDK's own ``accumulate_event``: each block started by
    ``content_block_start`` at its ``index``; ``text_delta`` and ``thinking_delta`` appended to
    its text, ``signature_delta`` its signature, ``citations_delta`` one more citation;
    ``input_json_delta`` pieces of a call's input joined, then parsed (a cut-off input stays
    its text, shown as it came); ``message_delta`` the stop reason and the usage so far.

    A stream cut before its ``message_delta`` has only ``message_start``'s usage, whose output
    count is a placeholder (1), not the response's: its output is not recorded (the input
    alone, a lower bound: :func:`~turnfold.usage.output_not_recorded`), rather than read as 1.
    """

    def __init__(self, start: Mapping[str, Any], line: int) -> None:
        head = start.get("message")
        head = head if isinstance(head, Mapping) else {}
        usage = head.get("usage")
        self.head = {**head, "usage": dict(usage) if isinstance(usage, Mapping) else None}
        self.line = line
        self.blocks: dict[int, dict[str, Any]] = {}
        self.inputs: dict[int, list[str]] = {}
        self.stopped = False
        self.counted = False  # a message_delta gave the response's output count

    def add(self, event: Mapping[str, Any]) -> str | None:
        """Add one event; what is wrong with it, if anything (it is then skipped)."""
        kind = event["type"]
        if kind == _STREAM_END:
            self.stopped = True
            return None
        if kind == "message_delta":
            return self._delta_of_message(event)
        index = event.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            return f"a {kind} event without a block index skipped"
        if kind == "content_block_start":
            block = event.get("content_block")
            if not isinstance(block, Mapping):
                return "a content_block_start without its block skipped"
            self.blocks[index] = dict(block)
            return None
        block = self.blocks.get(index)
        if block is None:
            return f"a {kind} event for block {index}, never started, skipped"
        if kind == "content_block_delta":
            return self._delta(block, index, event.get("delta"))
        return None  # content_block_stop: the block is whole

    def _delta(self, block: dict[str, Any], index: int, delta: Any) -> str | None:
        kind = delta.get("type") if isinstance(delta, Mapping) else None
        if kind in _APPENDED:
            key = _APPENDED[kind]
            piece = delta.get(key)
            if isinstance(piece, str):
                block[key] = str(block.get(key) or "") + piece
                return None
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.inputs.setdefault(index, []).append(delta["partial_json"])
            return None
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")
            return None
        elif kind == "citations_delta":
            block["citations"] = [*(block.get("citations") or []), delta.get("citation")]
            return None
        return f"a content_block_delta of unknown type {kind!r} skipped"

    def _delta_of_message(self, event: Mapping[str, Any]) -> str | None:
        delta, usage = event.get("delta"), event.get("usage")
        if isinstance(delta, Mapping):
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    self.head[key] = delta[key]
        if isinstance(usage, Mapping):
            running = self.head["usage"] if self.head["usage"] is not None else {}
            running.update({k: usage[k] for k in _RUNNING_COUNTS if usage.get(k) is not None})
            self.head["usage"] = running
            self.counted = self.counted or usage.get("output_tokens") is not None
        return None

    def message(self) -> dict[str, Any]:
        """The Message the events so far stand for (``response.model_dump()``'s shape)."""
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            pieces = "".join(self.inputs.get(index, ()))
            if pieces:  # the SDK leaves content_block_start's input ({}) when none came
                block = {**block, "input": parse_arguments(pieces)}
            content.append(block)
        usage = self.head["usage"]
        if isinstance(usage, Mapping) and not self.counted:
            usage = {k: v for k, v in usage.items() if k != "output_tokens"}
        return {**self.head, "usage": usage, "content": content}


def is_stream_event(value: Any) -> bool:
    """One of a streamed response's raw events (``RawMessageStreamEvent``), a ``ping`` or an
    ``error`` event (``{"type": "error", "error": {...}}``), or one ``messages.stream()`` adds
    (with its ``snapshot``)."""
    if not isinstance(value, Mapping) or "role" in value:
        return False
    kind = value.get("type")
    if kind in _BUILDING or kind == _PING:
        return True
    if kind == _ERROR:
        return isinstance(value.get("error"), Mapping)
    return kind in _HELPER_EVENTS and "snapshot" in value


def _error_text(event: Mapping[str, Any]) -> str:
    """An ``error`` event in the API's words: ``overloaded_error: Overloaded``."""
    error = event["error"]
    kind, message = error.get("type"), error.get("message")
    text = str(message) if message else "an error with no message"
    return f"{kind}: {text}" if isinstance(kind, str) and kind else text


def _repeats(messages: list[Any], said: list[tuple[Any, Any]]) -> bool:
    """Whether a request's ``messages`` begin with the conversation ``said`` so far: the same
    roles, the user's words the same (an assistant's message, as the request repeats it, has
    lost what its response held beside its content)."""
    if not said or len(messages) < len(said):
        return False
    for message, (role, content) in zip(messages, said, strict=False):
        if not isinstance(message, Mapping) or message.get("role") != role:
            return False
        if role == "user" and message.get("content") != content:
            return False
    return True


# --- detection and reading ------------------------------------------------------------------------


def _messages_of(value: Any) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """The messages of a document, the metadata its envelope carries and the wrapper's other
    keys (issue 11: an SDK's saved session, an eval trajectory)."""
    meta: dict[str, Any] = {}
    if isinstance(value, Mapping) and _is_response(value):
        if isinstance(value.get("model"), str):
            meta["model"] = value["model"]
        return [value], meta, {}
    answer = _logged_answer(value)
    if answer is not None:
        messages, meta, rest = _messages_of(answer.request)
        if isinstance(answer.response.get("model"), str):  # the model that answered, not the
            meta["model"] = answer.response["model"]  # alias asked for: named once
        return [*messages, answer.response], meta, rest
    found = find_messages(value)
    if found is None:
        return [value], {}, {}  # fed as it is, so what it is not gets its warning
    if isinstance(value, Mapping):
        system = _system_text(value.get("system"))
        if system:
            meta["system"] = system
        if isinstance(value.get("model"), str):
            meta["model"] = value["model"]
    rest = {k: v for k, v in found.rest.items() if k != "system"}  # kept as text in meta
    if found.rejected:  # a preference pair: its rejected reply is the openai format's to read
        rest["rejected"] = found.rejected
    return found.messages, meta, rest


def _logged_answer(document: Any) -> Exchange | None:
    """A logged call (:func:`~turnfold.formats.wrappers.exchange`) whose response is a
    Messages API response: the request's messages, then the response's."""
    call = exchange(document)
    return call if call is not None and _is_response(call.response) else None


def _system_text(system: Any) -> str | None:
    if isinstance(system, str):
        return system or None
    if isinstance(system, list):
        parts = [b.get("text") for b in system if isinstance(b, Mapping)]
        return "\n\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def _is_response(value: Mapping[str, Any]) -> bool:
    """A Messages API response object (the Responses API's items have no ``stop_reason``)."""
    return (
        value.get("type") == "message"
        and value.get("role") == "assistant"
        and isinstance(value.get("content"), list)
        and "stop_reason" in value
    )


def _verdict(message: Any) -> bool | None:
    """True: Anthropic-specific; False: not Anthropic; None: reads the same in both APIs."""
    if not isinstance(message, Mapping) or message.get("role") not in _ROLES:
        return False
    if any(key in message for key in _OPENAI_KEYS):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return False
    # A response object saved among the messages (``response.model_dump()``) is Anthropic's
    # by its ``stop_reason``, whatever its blocks: the Responses API's items have none.
    specific = _is_response(message)
    for block in content:
        if isinstance(block, Mapping) and block.get("type") in _OPENAI_PART_TYPES:
            return False
        specific = specific or blocks.is_specific_block(block)
    return True if specific else None


def looks_like_messages(messages: Iterable[Any]) -> bool:
    """Whether ``messages`` is an Anthropic list: no OpenAI mark and one Anthropic-only block."""
    found = False
    for message in messages:
        verdict = _verdict(message)
        if verdict is False:
            return False
        found = found or bool(verdict)
    return found


def _classify(message: Any) -> int:
    if is_stream_event(message):
        # A ping or an error event is a shape other APIs' logs may share.
        return DISTINCTIVE if message["type"] in _BUILDING else READABLE
    verdict = _verdict(message)
    return DISTINCTIVE if verdict else NOT_MINE if verdict is False else READABLE


_LACKS = "no tool_use, tool_result or thinking block"


def detect(source: Source) -> Evidence:
    """An Anthropic message list, request or response, bare or inside a wrapper object."""
    if not source.is_document:
        return Evidence.of(source.head_values(), _classify, _LACKS)
    document = source.document
    if isinstance(document, Mapping) and _is_response(document):
        return Evidence.of([document], _classify, _LACKS)
    answer = _logged_answer(document)
    document = document if answer is None else answer.request
    found = find_messages(document)
    if found is None:
        return Evidence.none("no message list")
    tail = [] if answer is None else [answer.response]
    evidence = Evidence.of(sample(found.messages) + tail, _classify, _LACKS)
    if (
        isinstance(document, Mapping)
        and _system_text(document.get("system"))
        and isinstance(document.get(found.key or ""), list)
    ):
        # A top-level system prompt beside the messages is the Anthropic request shape (OpenAI
        # puts it in a message); a dataset row whose run is made of its text (ms-swift's
        # query and response) is no request.
        return Evidence(share=evidence.share, marks=evidence.marks + 1)
    return evidence


def read(source: Source) -> Transcript:
    """Every message of ``source`` fed to an :class:`AnthropicBuilder` (static: ``live=False``),
    each accounted for by its role (:data:`RECORDS`)."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = AnthropicBuilder(transcript, source.name)
    if source.is_document and not isinstance(source.document, list):
        messages, meta, rest = _messages_of(source.document)
        transcript.metadata.update(meta)
        for line, message in enumerate(messages, start=1):
            builder.feed_noted(source, message, line, role_of(message))
        keep_wrapper_keys(transcript, rest)
        return transcript
    builder.feed_records(source, role_of, ignored=RECORDS.ignored)
    cut = builder.end_stream(warn=False)
    if cut is not None:
        stream_cut_off(source, transcript, cut.line, _STREAM_END)
    return transcript


def role_of(message: Any) -> str:
    """A message by its role (a response object is ``{"type": "message", "role": ...}``); a
    streamed response's event by its type, a request as ``request``."""
    role = message.get("role") if isinstance(message, Mapping) else None
    if isinstance(role, str) and role:
        return role
    if isinstance(message, Mapping) and "type" not in message and "messages" in message:
        return "request"
    return type_of_record(message)
