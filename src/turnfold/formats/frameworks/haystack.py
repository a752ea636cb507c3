"""Haystack agents (``haystack.components.agents.Agent``, haystack-ai 2.x–3.x) after the run and
live (spec A-1, A-2, A-3).

An ``Agent``'s run returns a dict whose ``"messages"`` is the whole conversation, a list of
``haystack.dataclasses.ChatMessage`` (roles ``system``, ``user``, ``assistant``, ``tool``), with
``last_message``, ``step_count``, ``token_usage``, ``tool_call_counts`` and ``exit_reason``; a
``Pipeline`` holding an agent returns ``{component_name: {"messages": [...], ...}}``. Users save
``[m.to_dict() for m in messages]``: ``{"role", "meta", "name", "content": [parts]}``, each part
one key (``text`` flat, ``{"reasoning": {...}}``, ``{"tool_call": {...}}``,
``{"tool_call_result": {...}}``, ``{"image": {...}}``, ``{"file": {...}}``).

Input shapes (every form ``ChatMessage.from_dict`` accepts):

- a list of message dicts, as a JSON document or one a line: the current form; the 2.9–2.11 form
  (``_role``, ``_content``, ``_name``, ``_meta``); the pre-2.9 form (``content`` a string);
  pydantic's flat parts (``{"tool_name", "arguments"}``, ``{"result", "origin"}``,
  ``{"reasoning_text"}``, ``{"base64_image"}``, ``{"base64_data"}``);
- an agent's result dict (``{"messages": [...], "exit_reason"?, ...}``), saved or live;
- objects, by their type (:func:`plain`): ``ChatMessage`` lists, an agent's result, a pipeline's
  result. A ``ChatMessage`` is read by attribute into the dict ``to_dict()`` makes (the same
  keys and values, made without ``dataclasses.asdict``'s deep copies), never modified.

Mapping:

- ``system`` → ``metadata["system"]``; ``user`` → :class:`UserMessage` (text parts, images;
  files as attachment lines);
- ``assistant`` parts in order: ``reasoning`` → :class:`Thinking`, ``text`` →
  :class:`AssistantText`, ``tool_call`` → :class:`ToolCall` (``id`` verbatim, ``arguments`` as
  its args); the calls of one message form one batch, ``msg-<position>``. ``meta["usage"]``
  (``prompt_tokens`` / ``completion_tokens`` with their details, as the OpenAI generators
  write it, or ``input_tokens`` / ``output_tokens``) is the message's :class:`Usage`,
  ``meta["model"]`` its model (and ``metadata["model"]``), ``meta["completion_start_time"]``
  (written by streamed generators) the timestamp of its entries; ``finish_reason`` ``length``
  is a warning notice, ``content_filter`` an :class:`AssistantError`;
- ``tool``: each ``tool_call_result`` settles the call of its ``origin.id`` (or, for a call
  with no id, as some generators make them, the first open call of the same name and
  arguments): ``error`` true → ``error`` (the ``ToolInvoker``'s own signal: a raising tool, an
  unknown tool), else ``success``; a string result is its text, a list its texts and images;
- an agent's ``exit_reason`` ``max_agent_steps`` is a warning notice (the run stopped before an
  answer); a hook's own stop reason is a notice naming it.

Agents used as tools (``ComponentTool`` wrapping an ``Agent``): the tool's result is, by
default, the JSON of the inner agent's whole result (``{"messages": [...], "last_message",
...}``; with ``outputs_to_string={"source": "messages"}`` the JSON list of its messages), so
such a call is a :class:`SubAgent` whose transcript is those messages, its result the inner
agent's last text. A tool whose result holds only text (another ``outputs_to_string``, a
function that runs an agent itself) is a plain call: its result text is all the run records.

What the messages do not record: no timestamps but a streamed reply's
``completion_start_time`` (no tool durations at all), no ids of their own (a call's ``id`` is
the provider's and may be None), no agent name (a pipeline's component name is
``metadata["agent"]``), and a tool message carries no text of its own beyond its result.

Live (A-2): Haystack streams only through a ``streaming_callback``, called with each
``StreamingChunk``. :class:`Live` is that callback: pass it as ``streaming_callback`` (or
``live.acallback`` to ``run_async``), and it follows the chunks into a transcript shown in the
cell; ``live.end(result)`` ends the run. The chunks carry no prompt and no system prompt, so
``Live(messages, agent=agent)`` takes them from the messages the run is given and the agent.
Reasoning and text grow as they arrive (``reasoning``, ``content``), a call appears with its
first ``tool_calls`` delta and its arguments grow; a reply ends at the next reply or tool
result (its ``finish_reason`` and ``usage`` come in its last chunks), and is then settled in
place as a load reads it; each ``tool_call_result`` settles its call. At the end the
transcript equals ``load(result)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    MessageBuilder,
    NameSet,
    as_list,
    checked_timestamp,
    counted_usage,
    describe_args,
    parse_arguments,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.protocol import not_read
from turnfold.formats.source import Source, plain_each, plain_value, type_of_record
from turnfold.formats.wording import failure, notice
from turnfold.formats.wrappers import listed_evidence
from turnfold.model import (
    AssistantText,
    Entry,
    ImageData,
    SubAgent,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
    maker,
)
from turnfold.usage import attach_usage

NAME = "haystack"

#: The document key of :func:`plain`'s run description (an agent's or a pipeline's result).
RUN_KEY = "haystack_run"
_ROLES = NameSet({"system", "user", "assistant", "tool"})
#: The keys of ``ChatMessage.to_dict()``'s content parts (``_serialize_content_part``).
PART_KEYS = NameSet({"text", "reasoning", "tool_call", "tool_call_result", "image", "file"})
#: The keys of an agent's result besides its messages (``Agent.run``), with what they hold.
_RESULT_KEYS = NameSet({"last_message", "step_count", "token_usage", "tool_call_counts"})


# --- detection --------------------------------------------------------------------------------


def _part_verdict(part: Any) -> int:
    if not isinstance(part, MAPPINGS) or "type" in part:
        return NOT_MINE
    if "tool_call" in part or "tool_call_result" in part or "reasoning" in part:
        return DISTINCTIVE
    if any(key in part for key in PART_KEYS):
        return READABLE
    if ("tool_name" in part and "arguments" in part) or ("result" in part and "origin" in part):
        return DISTINCTIVE
    return READABLE if "reasoning_text" in part or "base64_image" in part else NOT_MINE


def _classify(message: Any) -> int:
    """A ``ChatMessage.to_dict()`` (``meta`` and ``name`` beside ``role`` and ``content`` are
    Haystack's own mark: Converse messages have blocks like its text parts), its 2.9–2.11 form
    (``_role``, ``_content``), or its pre-2.9 form (``content`` a string beside ``meta``)."""
    if not isinstance(message, MAPPINGS):
        return NOT_MINE
    if "_role" in message:
        content = message.get("_content")
        if message["_role"] not in _ROLES or not isinstance(content, list):
            return NOT_MINE
        return DISTINCTIVE if all(_part_verdict(p) for p in content) else NOT_MINE
    if message.get("role") not in _ROLES:
        return NOT_MINE
    content = message.get("content")
    owned = "meta" in message and "name" in message
    if isinstance(content, list):
        verdicts = [_part_verdict(p) for p in content]
        if not all(verdicts):
            return NOT_MINE
        return DISTINCTIVE if owned or DISTINCTIVE in verdicts else READABLE
    if isinstance(content, str) and owned and isinstance(message["meta"], MAPPINGS):
        return READABLE
    return NOT_MINE


_LACKS = "no ChatMessage (role, meta, content parts)"


def detect(source: Source) -> Evidence:
    """``ChatMessage`` dicts (a list, one a line, or an agent result's ``messages``)."""
    listed = listed_evidence(source, _classify, _LACKS)
    if listed is not None:
        return listed
    document = source.document
    if not isinstance(document, MAPPINGS):
        return Evidence.none("no ChatMessage")
    messages = document.get("messages")
    if isinstance(messages, list) and messages:
        evidence = Evidence.of(messages[:8], _classify, _LACKS)
        marked = RUN_KEY in document or "last_message" in document
        return Evidence(share=evidence.share, marks=evidence.marks + marked, lacks=evidence.lacks)
    return Evidence.of([document], _classify, _LACKS)


# --- reading messages -------------------------------------------------------------------------

_new_call = maker(ToolCall, "call_id", "name", "args", "description", "status", "batch_id")
_new_text = maker(AssistantText, "text")
_new_thinking = maker(Thinking, "text")


def _usage(usage: Any) -> Usage | None:
    """A message's ``meta["usage"]``: OpenAI's counts (cached input and reasoning in their
    details; the prompt count includes the cached tokens already), or ``input_tokens`` /
    ``output_tokens`` as other generators write them."""
    if not isinstance(usage, MAPPINGS):
        return None
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        prompt = usage.get("prompt_tokens_details")
        completion = usage.get("completion_tokens_details")
        cached = prompt.get("cached_tokens") if isinstance(prompt, MAPPINGS) else None
        reasoning = completion.get("reasoning_tokens") if isinstance(completion, MAPPINGS) else None
        return counted_usage(
            usage.get("prompt_tokens"), usage.get("completion_tokens"), cached, None, reasoning
        )
    return counted_usage(usage.get("input_tokens"), usage.get("output_tokens"))


def _part(part: Any) -> tuple[str | None, Any]:
    """A content part as (its key, its value): ``{"text": t}`` is ``("text", t)``,
    ``{"tool_call": {...}}`` is ``("tool_call", {...})``, and pydantic's flat parts by their
    fields; (None, part) for anything else."""
    if not isinstance(part, MAPPINGS):
        return None, part
    if "text" in part:
        return "text", part["text"]
    for key in ("tool_call", "tool_call_result", "reasoning", "image", "file"):
        if key in part:
            return key, part[key]
    if "tool_name" in part and "arguments" in part:
        return "tool_call", part
    if "result" in part and "origin" in part:
        return "tool_call_result", part
    if "reasoning_text" in part:
        return "reasoning", part
    if "base64_image" in part:
        return "image", part
    if "base64_data" in part:
        return "file", part
    return None, part


def _image(value: Any) -> ImageData | None:
    data = value.get("base64_image") if isinstance(value, MAPPINGS) else None
    if not isinstance(data, str) or not data:
        return None
    media = value.get("mime_type")
    return ImageData(media_type=media if isinstance(media, str) and media else "image", data=data)


def _file_line(value: Any) -> str:
    value = value if isinstance(value, MAPPINGS) else {}
    parts = ["file"] + [
        str(value[key]) for key in ("filename", "mime_type") if isinstance(value.get(key), str)
    ]
    return f"[attachment: {' · '.join(parts)}]"


def _texts_and_images(content: list[Any]) -> tuple[list[str], list[ImageData]]:
    texts: list[str] = []
    images: list[ImageData] = []
    for part in content:
        key, value = _part(part)
        if key == "text" and isinstance(value, str):
            texts.append(value)
        elif key == "image":
            image = _image(value)
            if image is not None:
                images.append(image)
        elif key == "file":
            texts.append(_file_line(value))
    return texts, images


def message_fields(message: Mapping[str, Any]) -> tuple[Any, list[Any], Mapping[str, Any]]:
    """A message dict's role, content parts and meta, in any form ``from_dict`` reads."""
    if "content" in message or "role" in message:
        role, content, meta = message.get("role"), message.get("content"), message.get("meta")
    else:  # 2.9–2.11: the dataclass's own field names
        role, content, meta = message.get("_role"), message.get("_content"), message.get("_meta")
    if isinstance(content, str):  # before 2.9: one text
        content = [{"text": content}]
    return role, as_list(content), meta if isinstance(meta, MAPPINGS) else {}


def _sub_run(result: str) -> tuple[list[Any], str | None] | None:
    """The messages of an agent used as a tool, from its result (the JSON of the inner
    agent's result, or of its messages), and its last text; None for any other result."""
    if not (result.startswith('{"messages": [') or result.startswith('[{"role": ')):
        return None
    try:
        value = codec.loads(result)
    except ValueError:
        return None
    messages = value.get("messages") if isinstance(value, dict) else value
    if not isinstance(messages, list) or not messages or not all(map(_classify, messages)):
        return None
    answer = None
    for message in reversed(messages):
        role, content, _ = message_fields(message)
        texts, _ = _texts_and_images(content) if role == "assistant" else ([], [])
        if texts:
            answer = "\n".join(texts)
            break
    return messages, answer


#: The fields of each kind of entry but its ``id``: what a streamed entry is written over with.
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind) if f.name != "id")
    return names


class HaystackBuilder(MessageBuilder):
    """Builds a transcript from ``ChatMessage`` dicts fed one at a time (static or live)."""

    def __init__(
        self, transcript: Transcript | None = None, source_name: str = "<messages>", *,
        live: bool = False,
    ) -> None:  # fmt: skip
        super().__init__(transcript, source_name, live=live)
        self.recognized = 0
        #: Calls made without an id, still open (a result finds its call by name and arguments).
        self._unnamed: list[tuple[ToolCall, Any]] = []

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        self.feed_message(message, line)

    def feed_message(self, message: Any, line: int, *, reuse: list[Entry] | None = None) -> None:
        """Add one message. ``reuse`` are entries a live view shows for it already (streamed
        reasoning, text and calls), written over in place rather than appended again."""
        if not isinstance(message, MAPPINGS):
            reason = message.reason if isinstance(message, MalformedLine) else "not a message"
            self.warn(reason, line)
            return
        role, content, meta = message_fields(message)
        if role not in _ROLES:
            self.warn(f"not a ChatMessage (role {role!r})", line)
            return
        self.recognized += 1
        if role == "assistant":
            self._assistant(content, meta, line, reuse or [])
        elif role == "tool":
            for part in content:
                key, value = _part(part)
                if key == "tool_call_result" and isinstance(value, MAPPINGS):
                    self._settle(value, line)
                else:
                    self.warn_once(f"content part {key or 'unknown'!r} in a tool message", line)
        else:
            texts, images = _texts_and_images(content)
            if role == "system":
                if texts:
                    self.transcript.metadata["system"] = "\n".join(texts)
            elif texts or images:
                self.transcript.append(UserMessage(text="\n".join(texts), images=images))

    def _assistant(
        self, content: list[Any], meta: Mapping[str, Any], line: int, reuse: list[Entry]
    ) -> None:
        model = meta.get("model")
        model = model if isinstance(model, str) and model else None
        stamp = warned_timestamp(meta.get("completion_start_time"), checked_timestamp,
                                 lambda reason: self.warn(reason, line), f"message {line}",
                                 name="meta.completion_start_time")  # fmt: skip
        batch = f"msg-{line}"
        entries: list[Entry] = []
        for part in content:
            key, value = _part(part)
            entry: Entry | None = None
            if key == "text" and isinstance(value, str) and value:
                entry = _new_text(value)
                entry.model = model
            elif key == "reasoning" and isinstance(value, MAPPINGS):
                text = value.get("reasoning_text")
                entry = _new_thinking(text) if isinstance(text, str) and text else None
            elif key == "tool_call" and isinstance(value, MAPPINGS):
                entry = self._call(value, batch, line)
            elif key == "image" or key == "file":
                texts, _ = _texts_and_images([part])
                entry = _new_text(texts[0] if texts else "[image]")
            else:
                self.warn_once(f"content part {key or 'unknown'!r} not shown", line)
            if entry is not None:
                entry.timestamp = stamp
                entries.append(self._place(entry, reuse))
        attach_usage(entries, _usage(meta.get("usage")), self.transcript, model=model)
        if model is not None:
            self.transcript.metadata["model"] = model
        finish = meta.get("finish_reason")
        if finish == "length":
            said = notice("reader.cut_off_length", level="warning", subtype="length")
            self.transcript.append(said)
        elif finish == "content_filter":
            self.transcript.append(
                failure("reader.blocked", {"reason": "finish_reason content_filter"})
            )

    def _call(self, value: Mapping[str, Any], batch: str, line: int) -> ToolCall | None:
        call_id, name, args = value.get("id"), value.get("tool_name"), value.get("arguments")
        call_id = call_id if isinstance(call_id, str) else ""
        if call_id and call_id in self._calls:
            self.warn(f"duplicate tool call id {call_id!r} skipped", line)
            return None
        name = name if isinstance(name, str) and name else "tool"
        args = parse_arguments(args) if isinstance(args, str) else plain_value(args)
        call = _new_call(call_id, name, args, describe_args(name, args), self.open_status, batch)
        if call_id:
            self._calls[call_id] = call
        else:  # no id (Ollama and other generators): found by name and arguments
            self._unnamed.append((call, args))
        return call

    def _place(self, entry: Entry, reuse: list[Entry]) -> Entry:
        """``entry`` appended, or written over the streamed entry of its kind that showed it."""
        if reuse and type(reuse[0]) is type(entry):
            target = reuse.pop(0)
            changes = {name: getattr(entry, name) for name in _fields_of(type(entry))}
            if isinstance(entry, ToolCall) and isinstance(target, ToolCall):
                # The streamed call is the one its result settles from now on.
                if self._calls.get(entry.call_id) is entry:
                    self._calls[entry.call_id] = target
                self._unnamed = [(target if c is entry else c, a) for c, a in self._unnamed]
            self.update(target, **changes)
            return target
        return self.transcript.append(entry)

    def _find(self, origin: Any) -> ToolCall | None:
        origin = origin if isinstance(origin, MAPPINGS) else {}
        call_id = origin.get("id")
        if isinstance(call_id, str) and call_id:
            return self._calls.get(call_id)
        for index, (call, args) in enumerate(self._unnamed):
            if call.name == origin.get("tool_name") and args == origin.get("arguments"):
                del self._unnamed[index]
                return call
        return None

    def _settle(self, value: Mapping[str, Any], line: int) -> None:
        call = self._find(value.get("origin"))
        if call is None:
            origin = value.get("origin")
            named = origin.get("id") if isinstance(origin, MAPPINGS) else None
            self.warn(f"tool result for an unknown tool call {named!r}", line)
            return
        result = value.get("result")
        status = "error" if value.get("error") is True else "success"
        if isinstance(result, str):
            sub = _sub_run(result) if status == "success" else None
            if sub is not None:
                self._nest(call, *sub)
                return
            outcome = text_result(result)
        else:
            texts, images = _texts_and_images(as_list(result))
            outcome = text_result("\n".join(texts) if texts else None, images=images)
        self.update(call, status=status, result=outcome)

    def _nest(self, call: ToolCall, messages: list[Any], answer: str | None) -> None:
        """An agent used as a tool: its messages are the call's :class:`SubAgent`."""
        child = HaystackBuilder(Transcript(), self.source_name)
        for line, message in enumerate(messages, start=1):
            child.feed_message(message, line)
        child.settle_open(child._calls.values())
        transcript = child.transcript
        first = next((e for e in transcript.entries if isinstance(e, UserMessage)), None)
        sub = SubAgent(
            name=call.name, task=first.text if first is not None else None,
            transcript=transcript, tool_count=len(transcript.tool_calls()),
        )  # fmt: skip
        self.update(call, status="success", result=text_result(answer), subagent=sub)

    def finish(self, run: Mapping[str, Any] | None = None) -> None:
        """The run ended (``run``: what its result says of how): calls still open have no
        outcome; an exit by the step budget, or by a hook, is said."""
        reason = run.get("exit_reason") if run is not None else None
        if isinstance(reason, str):
            self.transcript.metadata["exit_reason"] = reason
        if reason == "max_agent_steps":
            said = notice("reader.step_budget", level="warning", subtype="max_steps")
            self.transcript.append(said)
        elif (
            isinstance(reason, str)
            and reason not in ("text", "length", "content_filter")
            and reason not in {call.name for call in self._calls.values()}  # an exit tool
        ):
            # a hook's stop_run reason
            self.transcript.append(
                notice("reader.run_stopped", {"reason": reason}, subtype="stopped")
            )
        self.settle_open([*self._calls.values(), *(c for c, _ in self._unnamed)])


# --- reading ----------------------------------------------------------------------------------


def _record_type(record: Any) -> str:
    if isinstance(record, MAPPINGS):
        role, _, _ = message_fields(record)
        if isinstance(role, str) and role:
            return role
    return type_of_record(record)


def read(source: Source) -> Transcript:
    """The ``ChatMessage`` dicts of ``source`` (or of an agent's result), each accounted for."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = HaystackBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    run: Mapping[str, Any] | None = None
    if isinstance(document, MAPPINGS) and isinstance(document.get("messages"), list):
        described = document.get(RUN_KEY)
        run = described if isinstance(described, MAPPINGS) else document
        agent = run.get("component")
        if isinstance(agent, str) and agent:
            transcript.metadata["agent"] = agent
        for other in as_list(run.get("other_components")):
            builder.warn(
                f"pipeline component {other!r} also holds messages: load result[{other!r}]", None
            )
        _read_messages(source, builder, document["messages"])
        for key in document:
            if key == "messages":
                continue
            if key in (RUN_KEY, "exit_reason"):
                source.mapped(key)
            else:
                source.ignored(key if key in _RESULT_KEYS else "other key")
    elif isinstance(document, list):
        _read_messages(source, builder, document)
    else:
        builder.feed_records(source, _record_type)
    builder.finish(run)
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], None, "no ChatMessage (role, content)")
    return transcript


def _read_messages(source: Source, builder: HaystackBuilder, messages: list[Any]) -> None:
    for line, message in enumerate(messages, start=1):
        try:
            builder.feed_noted(source, message, line, _record_type(message))
        except Exception as exc:  # a shape never seen: that message is lost, not the run
            not_read(source, line, exc)


# --- objects (spec A-1) -----------------------------------------------------------------------


def _call_record(call: Any) -> dict[str, Any]:
    return {"tool_name": call.tool_name, "arguments": call.arguments, "id": call.id,
            "extra": call.extra}  # fmt: skip


def _part_record(part: Any) -> dict[str, Any]:
    """A content part as ``_serialize_content_part`` writes it, read by attribute: the
    part's own values, not ``asdict``'s deep copies (the reader copies what it keeps)."""
    kind = type(part).__name__
    if kind == "TextContent":
        return {"text": part.text}
    if kind == "ToolCall":
        return {"tool_call": _call_record(part)}
    if kind == "ToolCallResult":
        result = part.result
        if not isinstance(result, str):
            result = [_part_record(p) for p in result]
        origin = _call_record(part.origin)
        return {"tool_call_result": {"result": result, "origin": origin, "error": part.error}}
    if kind == "ReasoningContent":
        return {"reasoning": {"reasoning_text": part.reasoning_text, "extra": part.extra}}
    if kind == "ImageContent":
        return {"image": {"base64_image": part.base64_image, "mime_type": part.mime_type,
                          "detail": part.detail, "meta": part.meta}}  # fmt: skip
    if kind == "FileContent":
        return {"file": {"base64_data": part.base64_data, "mime_type": part.mime_type,
                         "filename": part.filename, "extra": part.extra}}  # fmt: skip
    to_dict = getattr(part, "to_dict", None)
    return {type(part).__name__: to_dict() if callable(to_dict) else repr(part)}


def message_record(message: Any) -> Any:
    """A ``ChatMessage`` as the dict its ``to_dict()`` makes (see :func:`_part_record`);
    anything else as it is."""
    if type(message).__name__ != "ChatMessage" or not hasattr(message, "_content"):
        return plain_value(message) if isinstance(message, MAPPINGS) else message
    role = message._role
    return {"role": getattr(role, "value", role), "meta": message._meta, "name": message._name,
            "content": [_part_record(p) for p in message._content]}  # fmt: skip


def _result_record(result: Mapping[str, Any], component: str | None = None) -> dict[str, Any]:
    run: dict[str, Any] = {}
    for key in ("exit_reason", "step_count", "token_usage", "tool_call_counts"):
        if key in result:
            run[key] = plain_value(result[key])
    if component is not None:
        run["component"] = component
    return {"messages": plain_each(result["messages"], message_record), RUN_KEY: run}


def _holds_messages(value: Any) -> bool:
    return isinstance(value, MAPPINGS) and isinstance(value.get("messages"), (list, tuple))


def plain(value: Any) -> Any:
    """A Haystack run object as the records :func:`read` reads (see the module's doc)."""
    if isinstance(value, (list, tuple)):
        return plain_each(value, message_record)
    if type(value).__name__ == "ChatMessage":
        return [message_record(value)]
    if _holds_messages(value):
        return _result_record(value)
    if isinstance(value, MAPPINGS):  # a pipeline's result: {component: {"messages": ...}}
        holders = [name for name, output in value.items() if _holds_messages(output)]
        if holders:
            record = _result_record(value[holders[0]], str(holders[0]))
            if len(holders) > 1:
                record[RUN_KEY]["other_components"] = [str(name) for name in holders[1:]]
            return record
        return plain_value(value)
    if type(value).__name__ == "Agent":
        raise TypeError(
            "a Haystack Agent keeps no run: load the dict its run() returns (or its messages)"
        )
    return {"(object)": type(value).__qualname__}


# --- live (spec A-2) --------------------------------------------------------------------------


@dataclasses.dataclass
class _Begin:
    """The messages a followed run begins with, and its agent (:class:`Live`)."""

    messages: list[Any]
    agent: Any = None


@dataclasses.dataclass
class _End:
    """The followed run's result (:meth:`Live.end`)."""

    result: Any


class _Reply:
    """A reply being streamed: its parts so far, and what its chunks' meta said of it."""

    def __init__(self) -> None:
        self.reasoning: list[str] = []
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.order: list[tuple[str, Any]] = []  # (kind, key) in the order the parts began
        self.meta: dict[str, Any] = {}
        self.finished = False

    def record(self) -> dict[str, Any]:
        """The reply as Haystack joins its chunks (``_convert_streaming_chunks_to_chat_message``:
        the reasoning, the text, then the calls by index)."""
        content: list[Any] = []
        if self.reasoning:
            content.append({"reasoning": {"reasoning_text": "".join(self.reasoning), "extra": {}}})
        if self.text:
            content.append({"text": "".join(self.text)})
        for index in sorted(self.calls):
            call = self.calls[index]
            args = parse_arguments(call["arguments"]) if call["arguments"] else {}
            content.append({"tool_call": {"tool_name": call["name"], "arguments": args,
                                          "id": call["id"], "extra": None}})  # fmt: skip
        return {"role": "assistant", "meta": self.meta, "name": None, "content": content}


class Follower:
    """Maps a run's ``StreamingChunk``s (through :class:`Live`) into ``transcript`` (A-2)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        transcript.metadata.setdefault("source_format", NAME)
        self.builder = HaystackBuilder(transcript, "<stream>", live=True)
        self._line = 0
        self._reply: _Reply | None = None
        self._shown: list[Entry] = []
        self._growing: dict[Any, Entry] = {}  # the entry each part of the reply shows
        self._run: Mapping[str, Any] | None = None
        #: The calls of the last reply, running until the step's tool results end.
        self._running: list[ToolCall] = []
        #: An agent used as a tool streaming into the same callback, and the call it runs in.
        self._child: Follower | None = None
        self._host: ToolCall | None = None

    def feed(self, event: Any) -> None:
        if isinstance(event, _Begin):
            self._begin(event)
        elif isinstance(event, _End):
            self._end_reply()
            result = event.result
            if _holds_messages(result):
                self._run = result
        elif type(event).__name__ == "StreamingChunk":
            self._chunk(event)
        else:
            self.builder.warn_once(f"event {type(event).__name__} not shown", self._line or None)

    def close(self) -> None:
        self._end_reply()
        self.builder.finish(self._run)

    def _next(self, message: Any, reuse: list[Entry] | None = None) -> None:
        self._line += 1
        self.builder.feed_message(message, self._line, reuse=reuse)

    def _begin(self, begin: _Begin) -> None:
        system = getattr(begin.agent, "system_prompt", None)
        if isinstance(system, str) and system:
            self.transcript.metadata["system"] = system
            self._line += 1  # the agent puts its system message first
        for message in begin.messages:
            self._next(message_record(message))

    def _chunk(self, chunk: Any) -> None:
        meta = chunk.meta if isinstance(chunk.meta, Mapping) else {}
        reply = self._reply
        carries = bool(chunk.content or chunk.reasoning or chunk.tool_calls)
        if reply is not None and (
            chunk.tool_call_result is not None
            or (reply.finished and (carries or meta.get("usage") is None))
        ):
            self._end_reply()  # a tool result, or a new reply, begins
            reply = None
        if self._running and self._nested(chunk):
            return
        if chunk.tool_call_result is not None:
            self._next({"role": "tool", "meta": {}, "name": None,
                        "content": [_part_record(chunk.tool_call_result)]})  # fmt: skip
            return
        if chunk.finish_reason == "tool_call_results":
            self._running = []  # the end of a step's tool results
            return
        if reply is None:
            reply = self._reply = _Reply()
            started = meta.get("received_at")
            reply.meta = {"model": meta.get("model"), "index": 0, "finish_reason": None,
                          "completion_start_time": started, "usage": None}  # fmt: skip
        if meta.get("model") is not None:
            reply.meta["model"] = meta["model"]
        if meta.get("usage") is not None:
            reply.meta["usage"] = meta["usage"]
        if chunk.finish_reason:
            reply.meta["finish_reason"] = chunk.finish_reason
            reply.finished = True
        if chunk.reasoning is not None:
            self._grow(reply.reasoning, "reasoning", chunk.reasoning.reasoning_text)
        if chunk.content:
            self._grow(reply.text, "text", chunk.content)
        for delta in chunk.tool_calls or ():
            self._delta(reply, delta)

    def _grow(self, parts: list[str], kind: str, piece: str) -> None:
        parts.append(piece)
        text = "".join(parts)
        entry = self._growing.get(kind)
        if entry is None:
            made: Entry = (
                Thinking(text=text, streaming=True)
                if kind == "reasoning"
                else (AssistantText(text=text))
            )
            self._growing[kind] = self.transcript.append(made)
            self._shown.append(made)
        else:
            self.builder.update(entry, text=text)

    def _delta(self, reply: _Reply, delta: Any) -> None:
        call = reply.calls.get(delta.index)
        if call is None:
            call = reply.calls[delta.index] = {"id": "", "name": "", "arguments": ""}
        if delta.id is not None:
            call["id"] = delta.id
        if delta.tool_name is not None:
            call["name"] += delta.tool_name
        if delta.arguments is not None:
            call["arguments"] += delta.arguments
        key = ("call", delta.index)
        entry = self._growing.get(key)
        if entry is None:
            made = ToolCall(call_id=call["id"], name=call["name"] or "tool", status="pending",
                            args=call["arguments"], batch_id=f"msg-{self._line + 1}")  # fmt: skip
            self._growing[key] = self.transcript.append(made)
            self._shown.append(made)
        else:
            self.builder.update(entry, name=call["name"] or "tool", args=call["arguments"])

    def _nested(self, chunk: Any) -> bool:
        """While the last reply's calls run, the model's chunks are those of an agent used as
        a tool (``tool_streaming_callback_passthrough``: the agent calls no model until its
        tools are done): followed into the running call's :class:`SubAgent`, which its
        result replaces with the run it records, as a load nests it. False for the chunks of
        this run (its tool results, the end of the step)."""
        result = chunk.tool_call_result
        if result is not None and any(call.call_id == result.origin.id for call in self._running):
            self._child = self._host = None
            return False
        if chunk.finish_reason == "tool_call_results" and self._child is None:
            return False
        if self._child is None:
            self._host = next((c for c in self._running if c.status == "executing"), None)
            if self._host is None:
                return False
            self._child = Follower(Transcript())
            sub = SubAgent(name=self._host.name, transcript=self._child.transcript)
            self.builder.update(self._host, subagent=sub)
        self._child.feed(chunk)
        if chunk.finish_reason == "tool_call_results":
            return True
        host = self._host
        if host is not None and host.subagent is not None:  # tell the view the child grew
            count = len(self._child.transcript.tool_calls())
            self.builder.update(host, subagent=dataclasses.replace(host.subagent, tool_count=count))
        return True

    def _end_reply(self) -> None:
        """The reply streamed so far is whole: read as a load reads it, over what it showed
        (its reasoning, text and calls in the order a message holds them)."""
        reply, self._reply = self._reply, None
        if reply is None:
            return
        order = {Thinking: 0, AssistantText: 1, ToolCall: 2}
        shown = sorted(self._shown, key=lambda e: order.get(type(e), 3))
        self._shown, self._growing = [], {}
        self._running = [e for e in shown if isinstance(e, ToolCall)]
        streamed = list(shown)  # the reply takes its entries from ``shown``
        self._next(reply.record(), reuse=shown)
        for left in streamed:  # streamed but not in the reply: no longer being written
            if isinstance(left, Thinking) and left.streaming:
                self.builder.update(left, streaming=False)


class Live:
    """A Haystack run followed live: pass it as the run's ``streaming_callback``.

    >>> live = Live(messages, agent=agent)  # doctest: +SKIP
    >>> result = agent.run(messages=messages, streaming_callback=live)  # doctest: +SKIP
    >>> live.end(result)  # doctest: +SKIP

    ``messages`` are those the run is given (the prompt, which no chunk carries) and ``agent``
    the agent (its system prompt). Each chunk is followed (:meth:`turnfold.following.Follow.see`:
    it never raises into the run) and passed on to ``then`` (another callback, such as
    Haystack's ``print_streaming_chunk``) unchanged. ``acallback`` is the same for
    ``run_async``. :attr:`transcript` and :attr:`widget` are the followed run's, shown in the
    cell from the start when ``display`` is on; :meth:`end` ends the run, with its result.
    """

    def __init__(
        self,
        messages: Any = (),
        *,
        agent: Any = None,
        then: Callable[[Any], Any] | None = None,
        display: bool = True,
    ) -> None:
        from turnfold.following import Follow

        self.follow = Follow((), format=NAME, display=display)
        self.then = then
        self.follow.see(_Begin(list(messages or ()), agent))

    @property
    def transcript(self) -> Transcript:
        return self.follow.transcript

    @property
    def widget(self) -> Any:
        return self.follow.widget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.follow._repr_mimebundle_(**kwargs)

    def __call__(self, chunk: Any) -> None:
        self.follow.see(chunk)
        if self.then is not None:
            self.then(chunk)

    async def acallback(self, chunk: Any) -> None:
        """The callback for ``run_async`` (Haystack awaits an async one)."""
        self.follow.see(chunk)
        if self.then is not None:
            done = self.then(chunk)
            if hasattr(done, "__await__"):
                await done

    def end(self, result: Any = None) -> Transcript:
        """The run ended (``result``: what ``run`` returned, for how it stopped); calls still
        running are settled as a load leaves them. The transcript, which now equals
        ``turnfold.load(result)``."""
        if result is not None:
            self.follow.see(_End(result))
        self.follow.end()
        return self.follow.transcript


RECORDS = Records(
    mapped={
        "system": 'the system prompt: metadata["system"]',
        "user": "a UserMessage (text parts, images; files as attachment lines)",
        "assistant": "reasoning, text and tool_call parts in order (one batch); meta.usage as "
        "its usage, meta.model its model, meta.completion_start_time its timestamp; "
        "finish_reason length a warning notice, content_filter an AssistantError",
        "tool": "each tool_call_result settles the call of its origin.id (error flag → error, "
        "else success); an agent used as a tool (its result the JSON of the inner agent's "
        "result or messages) is a SubAgent holding those messages",
        "exit_reason": "max_agent_steps a warning notice; a hook's stop reason a notice",
        RUN_KEY: "an agent's or pipeline's result: its exit reason, the component's name "
        'as metadata["agent"]; other components holding messages are warned of',
    },
    ignored={
        "last_message": "the last of the messages, read with them",
        "step_count": "a count of the run's steps",
        "token_usage": "the sum of the replies' usage, each read on its reply",
        "tool_call_counts": "counts of the calls, each read",
        "other key": "other keys of a saved result (the agent's state_schema outputs)",
    },
)
