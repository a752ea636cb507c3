"""Anthropic Messages API message lists (spec L-2.6).

Input shapes:

- a list of ``{role: "user" | "assistant", content: str | [blocks]}`` messages, as dicts or SDK
  objects (``load`` turns SDK objects into dicts first), or the same as JSON lines;
- a request ``{"messages": [...], "system": ...}`` (the system prompt goes to
  ``metadata["system"]``);
- one response object ``{"id": "msg_…", "type": "message", "role": "assistant", ...}``;
- a logged API call (:func:`~turnfold.formats.wrappers.exchange`: ``{"request": {...},
  "response": {...}}``, or a request with the ``response`` beside its messages): the request's
  messages, then the response's.

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
from turnfold.formats.common import MessageBuilder, NameSet
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.source import Source, type_of_record
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
    SystemNotice,
    ToolCall,
    ToolStatus,
    Transcript,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "anthropic"

#: A message is one record, named by its role; a JSONL line that is not a message is warned.
RECORDS = Records(
    mapped={
        "user": "a prompt (UserMessage, attachments counted), or the results of earlier calls",
        "assistant": "text, thinking and tool calls in order; usage and stop reason",
    },
)

#: Stop reasons that cut a response off, and the limit each names.
_CUT_OFF = {
    "max_tokens": "the max_tokens limit",
    "model_context_window_exceeded": "the model's context window limit",
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

    # --- feeding ----------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        """Add one message; ``line`` is its position, used in warnings and default batch ids."""
        if not isinstance(message, Mapping):
            self.warn("not a message object", line)
            return
        role = message.get("role")
        content = message.get("content")
        if role not in _ROLES or not isinstance(content, (str, list)):
            self.warn(f"not an Anthropic message (role {role!r})", line)
            return
        if role == "user":
            self._feed_user(content, line)
        else:
            self._feed_assistant(message, content, line)

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
            self._append(AssistantError(message="The model declined to respond (refusal)."))
        elif reason in _CUT_OFF:
            text = f"The response was cut off at {_CUT_OFF[reason]}."
            self._append(SystemNotice(text=text, level="warning", subtype=reason))
        elif reason == "pause_turn":
            # The API stopped a long server-tool turn midway; what precedes is not an answer.
            text = "The API paused the turn before the model finished (pause_turn)."
            self._append(SystemNotice(text=text, level="warning", subtype=reason))

    # --- helpers ----------------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def _unknown(self, block: Any, line: int) -> None:
        kind = str(block.get("type")) if isinstance(block, Mapping) else type(block).__name__
        if kind not in self._unknown_blocks:  # one warning per block type, not per block
            self._unknown_blocks.add(kind)
            self.warn(f"unknown content block type {kind!r} skipped", line)


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
    builder.feed_records(source, role_of)
    return transcript


def role_of(message: Any) -> str:
    """A message by its role (a response object is ``{"type": "message", "role": ...}``)."""
    role = message.get("role") if isinstance(message, Mapping) else None
    return role if isinstance(role, str) and role else type_of_record(message)
