"""OpenAI Chat Completions message lists (spec L-2.5).

Input shapes: a list of ``{role, content, ...}`` messages as dicts, SDK objects (anything with
``model_dump``) or JSON lines; a request ``{"messages": [...]}``; a ChatCompletion response
``{"object": "chat.completion", "choices": [{"message": ...}]}`` (or a JSONL of them).

Mapping (:class:`OpenAIChatBuilder`):

- ``system`` / ``developer`` messages configure the model and are not prompts: their text goes
  to ``metadata["system"]`` (as the Anthropic and Responses loaders do with theirs);
- a message that keeps its text under ``text`` instead of ``content`` (saved chats;
  nebius/SWE-agent-trajectories, whose system message keeps it under ``system_prompt`` and
  whose assistant is ``ai``) is read as if it were under ``content``; ``ai`` is ``assistant``;
- ``user`` → :class:`UserMessage`: a string, or the ``text`` parts of a content list; images
  (``data:`` URLs) are its ``images``; a file, an audio clip or an image by URL is a line
  naming it (``[attachment: report.pdf · application/pdf · 6 B]``); all are counted in
  ``meta``. A dataset row's media columns (ms-swift's and LLaMA-Factory's ``images``,
  ``videos``, ``audios``) name the file each ``<image>`` (``<video>``, ``<audio>``) tag of its
  text stands for, in order across the row: the tag reads ``[image: a.jpg]``;
- ``assistant`` → in this order: non-standard ``reasoning_content`` / ``reasoning`` (DeepSeek,
  vLLM, Qwen, OpenRouter) as :class:`Thinking` ``form="text"`` (OpenRouter's
  ``reasoning_details`` also give ``summary`` and ``encrypted``), else the ``<think>`` block
  the text opens with (a rollout's raw text); ``content`` as
  :class:`AssistantText` (a spoken answer, ``content`` null: its ``audio``'s transcript, with
  ``meta["audio"]``); ``refusal`` as an AssistantText with ``meta["refusal"]``; each of
  ``tool_calls`` (``function`` with JSON-string ``arguments``, or ``custom`` with ``input``;
  a call saved as the JSON text of one, as verifiers' ``results.jsonl`` holds them, is read
  as that) as a :class:`ToolCall`. The calls of one message are one batch: the completion's
  ``id``, the message's ``id``, else ``msg-<line>``. The deprecated ``function_call`` is a call
  too;
- ``tool`` (by ``tool_call_id``) and the deprecated ``function`` (by ``name``) messages are the
  result of the matching call. Chat Completions has no error flag, so the call's status is
  ``unknown`` once its result arrives (spec L-3: success is never invented); a call without a
  result is ``executing`` in a live feed and ``unknown`` in a static load. A result for an
  unknown id is kept as a call of its own, with a warning. Datasets that drop the ids (RL
  rollouts saved by verifiers, Hermes-style tool messages) answer the calls in the order they
  were made: a ``tool`` message without ``tool_call_id`` is the result of the oldest call still
  waiting for one (of its ``name``'s tool, when it names one);
- calls written in the text in the Hermes template (NousResearch's function-calling datasets,
  Qwen's chat templates, rollouts saved as raw text): an assistant text without
  ``tool_calls`` whose ``<tool_call>`` tags each hold the JSON (or Python literal) of
  ``{"name", "arguments"}``, or Qwen3-Coder's ``<function=name>`` with ``<parameter=key>``
  tags (values kept as text), makes those calls (ids ``call@<line>.<n>``; the text around them is
  its text); a ``tool`` message without ``tool_call_id`` holding ``<tool_response>`` blocks
  answers a call with each, in order (of the tool its ``{"name", "content"}`` names). A tag
  holding anything else leaves the text as it is;
- calls written as a Python list of calls (Team-ACE's ToolACE, BFCL's prompting format:
  ``[get_weather(city="Paris"), Get Scores(date="2023-07-04")]``): an assistant text that is
  wholly such a list, each call to a tool the run declares (in its ``tools``, or in the
  schemas its system prompt lists; a declared name need not be a Python name) with keyword
  arguments that are literals, makes those calls (ids ``call@<line>.<n>``). The text is parsed
  with :mod:`ast`, never evaluated; any other text (prose, an undeclared name, an expression)
  stays text. A ``tool`` message without ``tool_call_id`` that is a JSON list of ``{"name",
  "results"}`` (ToolACE's), each naming a call waiting, answers each of them with its
  ``results``;
- ms-swift's agent rows write each call as a message of its own: ``tool_call`` (its content the
  JSON of ``{"name", "arguments"}``; consecutive ones are one batch, ids ``call@<line>``) and
  ``tool_response`` (the result of the oldest call waiting, as above). A ``tool_call`` that is
  no such JSON is kept as a call named ``tool_call`` holding the text, with a warning;
- a ChatCompletion: its first choice's message as above (more choices, ``n`` > 1, are
  warned about), ``usage`` on the message's last
  AssistantText, ``created`` as the timestamp of its entries, ``finish_reason`` ``length`` → a
  warning :class:`SystemNotice` (the answer was cut off), ``content_filter`` →
  :class:`AssistantError`;
- a streamed completion (``stream=True``) as a log keeps it, one ``chat.completion.chunk`` a
  line: the chunks of one ``id`` are put together into the ChatCompletion they stand for (the
  deltas of its first choice's content, reasoning and refusal joined; each tool call's id,
  name and arguments joined by its ``index``; its finish reason; the usage of its last chunk)
  and read as above, once a chunk of another completion, a message or the end follows; a
  stream without its finish reason is warned about (it may be cut off);
- a logged API call (:func:`~turnfold.formats.wrappers.exchange`: ``{"request": {...},
  "response": {...}}``, or a request with the ``response`` beside its messages): the request's
  messages, then the ChatCompletion's answer as above;
- a line of an OpenAI Batch API file (:func:`~turnfold.formats.wrappers.batch_line`; such a
  file is a file of runs, each named by its ``custom_id``): an input line's request (its
  ``body``) as a request, the line's ``custom_id``, ``method`` and ``url`` kept as metadata;
  an output line's ChatCompletion as above after a prompt not recorded (the output file holds
  no request); a failed line (its ``error``, or an HTTP status of 400 or more and the error
  its body holds) an :class:`AssistantError` of the API's words after that prompt. A line of
  the legacy ``/v1/completions`` is a prompt and its answer: an input line's ``body.prompt``
  the user's, an output line's first ``choices[].text`` the assistant's (its usage and finish
  reason as a ChatCompletion's); a prompt of several texts or of token ids is refused, saying
  so. A line of another endpoint (``/v1/embeddings``) is refused as no transcript run, not
  read as nothing;
- a preference row in TRL's conversational shape (``chosen`` and ``rejected`` lists, with or
  without a ``prompt`` list; :func:`~turnfold.formats.wrappers.find_messages`): the
  conversation, the rejected reply with its entries marked ``meta["rejected"]`` (as the
  ``llama-factory`` and ``sharegpt`` formats mark theirs), then the chosen reply, the answer.

The format records no per-message timestamps, so times and durations stay ``None``.

Detection: a list (or request) whose every message has a Chat role and no ``type`` (Responses
items and Anthropic responses are typed), with string contents or Chat content parts. Lists
with Anthropic-only blocks never get here: the ``anthropic`` format is tried first.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import re
from collections import deque
from collections.abc import Mapping
from typing import Any

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MessageBuilder,
    NameSet,
    as_int,
    as_list,
    mark_rejected,
    prompt_not_recorded,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.openai_responses import (
    attachment_counts,
    attachment_lines,
    describe_call,
    openai_usage,
    output_content,
    parsed_arguments,
    parts_text,
    prompt_images,
    prompt_text,
    record_named,
    refusal_text,
    tool_result,
    warned_unix_timestamp,
)
from turnfold.formats.source import Source, from_object, type_of_record
from turnfold.formats.tables import MEDIA_COMPANIONS
from turnfold.formats.wording import failure, notice
from turnfold.formats.wrappers import (
    CHAT_URL,
    COMPLETIONS_URL,
    RESPONSES_URL,
    BatchLine,
    Exchange,
    batch_line,
    exchange,
    find_messages,
    keep_wrapper_keys,
    sample,
)
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
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
#: The record of a Batch API output line whose call failed.
_BATCH_FAILED = "batch/failed"
#: The object of a streamed completion's chunk (``stream=True``).
CHUNK = "chat.completion.chunk"
_UNFINISHED = "a streamed completion without a finish_reason: it may be cut off"

#: A message is one record, named by its role; a ChatCompletion is one record too.
RECORDS = Records(
    mapped={
        "system": 'instructions: metadata["system"]',
        "developer": 'instructions: metadata["system"]',
        "user": "a prompt (UserMessage; images, audio and files counted)",
        "assistant": "reasoning, text, refusal and tool calls, in order",
        "ai": "an assistant message (saved chats' and datasets' word for it)",
        "tool": "the result of the call with its tool_call_id",
        "function": "the result of a deprecated function_call, by name",
        "tool_call": "ms-swift: a call, in one batch with the tool_call messages just before it",
        "tool_response": "ms-swift: the result of the oldest call still waiting for one",
        "chat.completion": "its first choice's message, usage and finish reason",
        CHUNK: "a piece of a streamed completion: the chunks of one id are read together, "
        "as the chat.completion they stand for",
        "request": "a request's messages, each read as above; a logged call's response "
        "(beside them, or the request under request) read after them as a chat.completion",
        "rejected": "a preference pair's rejected reply (TRL's conversational rows), each "
        'message read as above before the chosen reply, its entries marked meta["rejected"]',
        _BATCH_FAILED: "a Batch API call that failed (its error, or an HTTP status of 400 or "
        "more): an error entry of the API's words, after a prompt not recorded",
    },
    ignored={
        "rejected/conversation": "the conversation a preference pair's rejected messages "
        "repeat: read once, from the chosen ones",
    },
)

#: ms-swift's roles of a call and its result (``swift/llm/template``: ``tool_call``,
#: ``tool_response``), in rows otherwise of Chat messages.
_SWIFT_CALL, _SWIFT_RESULT = "tool_call", "tool_response"
_ROLES = NameSet(
    {"system", "developer", "user", "assistant", "ai", "tool", "function", _SWIFT_CALL,
     _SWIFT_RESULT}
)  # fmt: skip
#: Where saved chats and some datasets keep a message's text instead of ``content``
#: (nebius/SWE-agent-trajectories: ``text``, and a system message's ``system_prompt``).
_TEXT_KEYS = ("text", "system_prompt")
#: Keys and roles only Chat Completions messages have (Anthropic's messages have neither).
_CHAT_KEYS = ("tool_calls", "tool_call_id", "function_call", "reasoning_content", "refusal")
_CHAT_PARTS = NameSet({"text", "image_url", "input_audio", "file", "refusal"})
_TEXT = NameSet({"text"})
_REJECTED, _REPEATED = "rejected", "rejected/conversation"


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


#: Each media column (``images``…) by the kind of file it holds (``image``…), the tag
#: (``<image>``) that stands for its next file in a row's text.
_MEDIA_COLUMNS = {column.removesuffix("s"): column for column in MEDIA_COMPANIONS}
_MEDIA_TAG = re.compile(f"<({'|'.join(_MEDIA_COLUMNS)})>")


class MediaFiles:
    """The files of a dataset row's media columns (``images``, ``videos``, ``audios``: paths,
    URLs or ``{"path", "bytes"}``), named in place of the tags that stand for them: ms-swift and
    LLaMA-Factory give the n-th ``<image>`` of a row's messages the n-th file of ``images``.

    >>> files = MediaFiles({"images": ["desktop.png", "calendar.png"]})
    >>> files.named("<image>What time is it?"), files.named('{"screen": "<image>"}')
    ('[image: desktop.png]What time is it?', '{"screen": "[image: calendar.png]"}')
    >>> files.named("<image>")  # a tag no file is left for stays as written
    '<image>'
    """

    def __init__(self, row: Mapping[str, Any]) -> None:
        self._files = {kind: deque(_file_names(row.get(column)))
                       for kind, column in _MEDIA_COLUMNS.items()}  # fmt: skip

    def __bool__(self) -> bool:
        return any(self._files.values())

    def named(self, text: str) -> str:
        """``text`` with each tag that a file is left for replaced by that file's name."""
        return _MEDIA_TAG.sub(self._name, text) if "<" in text else text

    def _name(self, tag: re.Match[str]) -> str:
        files = self._files[tag[1]]
        return f"[{tag[1]}: {files.popleft()}]" if files else tag[0]


def _file_names(column: Any) -> list[str]:
    """A media column's files by name: a path or URL, a ``{"path"}`` (a ``datasets`` Image) or
    ``{"url"}``, else its place (``#2``) when only its bytes were kept."""
    if isinstance(column, str):
        column = [column]
    if not isinstance(column, list):
        return []
    names = []
    for place, file in enumerate(column, start=1):
        path = (file.get("path") or file.get("url")) if isinstance(file, Mapping) else file
        names.append(path if isinstance(path, str) and path else f"#{place}")
    return names


def _spoken(audio: Mapping[str, Any]) -> str:
    """An answer the model spoke (``modalities: ["audio"]``, whose ``content`` is null): its
    ``transcript``; a history's reference to it (``{"id"}``, no transcript) names it.

    >>> _spoken({"id": "audio_1", "data": "UklGRg==", "transcript": "Hello."})
    'Hello.'
    >>> _spoken({"id": "audio_1"})
    '[audio: audio_1]'
    """
    transcript, own_id = audio.get("transcript"), audio.get("id")
    if isinstance(transcript, str) and transcript:
        return transcript
    return f"[audio: {own_id}]" if isinstance(own_id, str) and own_id else "[audio]"


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
        # Calls in the order made, for results that name no id (answered calls are passed over
        # when met: a result by id leaves its call here).
        self._waiting: deque[ToolCall] = deque()
        self._swift_batch: str | None = None  # the batch of the tool_call message just read
        #: The run's tools (a row's ``tools``), whose names a call written as Python may name.
        self.tools: Any = None
        #: The files a dataset row's media tags stand for (:class:`MediaFiles`), if any.
        self.media: MediaFiles | None = None
        self._declared: tuple[Any, frozenset[str]] = (None, frozenset())
        self._stream: _Stream | None = None  # the streamed completion being fed, chunk by chunk

    # --- feeding ---------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        """Add one message (or every message of a request, or a ChatCompletion's answer)."""
        if not isinstance(message, Mapping) and hasattr(message, "model_dump"):
            message = from_object(message).document  # an SDK object, as plain JSON values
        if is_chunk(message):
            self._chunk(message, line)
            return
        self.end_stream()
        if not isinstance(message, Mapping):
            self.warn("not a message object", line)
        elif is_completion(message):
            self.feed_completion(message, line)
        elif "role" not in message and isinstance(message.get("messages"), list):
            for inner in message["messages"]:
                self.feed(inner, line)
        else:
            self._message(message, line)

    def _chunk(self, chunk: Mapping[str, Any], line: int) -> None:
        """One chunk of a streamed completion: kept until its completion is whole."""
        self.recognized += 1
        if self._stream is not None and self._stream.own_id != chunk.get("id"):
            self.end_stream()
        if self._stream is None:
            self._stream = _Stream(chunk, line)
        self._stream.add(chunk)

    def end_stream(self) -> None:
        """The streamed completion whose chunks were fed last, read as its ChatCompletion: it is
        whole once a chunk of another completion, a message or the end of the source follows."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        if stream.finish is None:  # the log ends mid-stream, or its last chunk was lost
            self.warn(_UNFINISHED, stream.line)
        self.feed_completion(stream.completion(), stream.line)

    def feed_completion(self, completion: Mapping[str, Any], line: int) -> None:
        """A ChatCompletion response: its first choice is the assistant's answer."""
        choice = next(
            (c for c in completion["choices"] if isinstance(c, Mapping) and "message" in c), None
        )
        if choice is None or not isinstance(choice.get("message"), Mapping):
            self.warn("chat completion without a message", line)
            return
        others = sum(isinstance(c, Mapping) and "message" in c for c in completion["choices"]) - 1
        if others:  # n > 1 samples: the run goes on from one; the others are not lost unsaid
            self.warn(f"chat completion with {others + 1} choices: only the first is shown", line)
        own_id = completion.get("id")
        model = completion.get("model")
        if isinstance(model, str) and model:
            self.transcript.metadata.setdefault("model", model)
        written = len(self.transcript.entries)
        created = warned_unix_timestamp(
            completion.get("created"), lambda reason: self.warn(reason, line),
            record_named("chat completion", own_id), "created",
        )  # fmt: skip
        self._assistant(
            choice["message"],
            line,
            timestamp=created,
            batch_id=own_id if isinstance(own_id, str) and own_id else None,
            model=model if isinstance(model, str) else None,
        )
        self._finish_reason(choice.get("finish_reason"), created)
        # After the finish reason: a filtered response with no text carries its usage on its
        # error (the prompt was billed).
        usage = chat_usage(completion.get("usage"))
        named = model if isinstance(model, str) else None
        attach_usage(self.transcript.entries[written:], usage, self.transcript, model=named)

    def feed_rejected(self, source: Source, messages: list[Any], first_line: int) -> None:
        """A preference pair's rejected reply, its entries marked ``meta["rejected"]`` (shown,
        but neither the answer nor a turn of its own), accounted for as ``rejected``. Its calls
        never ran: no result that follows answers them, and their ids are free again."""
        since = len(self.transcript.entries)
        calls, waiting = dict(self._calls), self._waiting.copy()
        for line, message in enumerate(messages, start=first_line):
            self.feed_noted(source, message, line, _REJECTED)
        self._calls, self._waiting = calls, waiting
        mark_rejected(self.transcript, since)

    def _message(self, message: Mapping[str, Any], line: int) -> None:
        if "content" not in message and any(key in message for key in _TEXT_KEYS):
            message = _with_content(message)
        if self.media and isinstance(message.get("content"), str):
            message = {**message, "content": self.media.named(message["content"])}
        role = message.get("role")
        if role == "ai":  # LangChain's and saved chats' word for the assistant
            role = "assistant"
        unread = _unread_parts(message.get("content"))
        if unread and role in _ROLES:
            shown = ", ".join(unread[:3]) + (", …" if len(unread) > 3 else "")
            self.warn(f"{len(unread)} content part(s) of a {role} message not read ({shown})", line)
        batch, self._swift_batch = self._swift_batch, None
        if role == _SWIFT_CALL:
            self._swift_call(message.get("content"), line, batch or f"msg-{line}")
        elif role == _SWIFT_RESULT:
            self._tool_result({"content": message.get("content")}, line)
        elif role == "user":
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
        images = prompt_images(content)
        text = "\n\n".join(
            t for t in (parts_text(content, _TEXT, "\n\n"), *attachment_lines(content)) if t
        )
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
        text = parts_text(message.get("content"), _TEXT, "\n\n")
        if thinking is None and text[:64].lstrip().startswith(_THINK):
            thinking, text = _written_thinking(text)
        if thinking is not None:
            thinking.timestamp = timestamp
            self._append(thinking)
        calls = as_list(message.get("tool_calls"))
        written_calls = None if calls else _text_calls(text) or self._python_calls(text)
        if written_calls is not None:
            text, calls = written_calls
            for index, call in enumerate(calls):  # the format's ids for calls without one
                call["id"] = f"call@{line}.{index}"
        if text:
            self._text(text, model, timestamp, {})
        elif isinstance(message.get("audio"), Mapping):
            self._text(_spoken(message["audio"]), model, timestamp, {"audio": True})
        refusal = message.get("refusal") or refusal_text(message.get("content"))
        if isinstance(refusal, str) and refusal:
            self._text(refusal, model, timestamp, {"refusal": True})
        for index, call in enumerate(calls):
            spec = _call_object(call)
            if spec is None:
                self.warn(f"a tool call that is no call object not read ({call!r:.60})", line)
            else:
                self._start_call(spec, f"{line}.{index}", line, batch, timestamp)
        legacy = message.get("function_call")
        if isinstance(legacy, Mapping):
            self._start_legacy_call(legacy, line, batch, timestamp)
        attach_usage(self.transcript.entries[written:], usage, self.transcript)

    def _python_calls(self, text: str) -> tuple[str, list[dict[str, Any]]] | None:
        """The calls an assistant's text writes as a Python list of calls to tools the run
        declares (ToolACE's and BFCL's ``[get_weather(city="Paris"), other(a=1)]``), as Chat
        tool calls; None for any other text, which stays text."""
        stripped = text.strip()
        if not (stripped.startswith("[") and stripped.endswith("]")):
            return None
        if len(stripped) > _MOST_WRITTEN_CALLS:  # a list of calls is short; this is data
            return None
        calls = python_calls(stripped, self._declared_names())
        return None if calls is None else ("", calls)

    def _declared_names(self) -> frozenset[str]:
        """The names of the tools the run declares so far: in its tools, or in the JSON (or
        Python literal) of their schemas its system prompt holds."""
        said = (self.transcript.metadata.get("system"), self.tools)
        if said != self._declared[0]:
            texts = [t if isinstance(t, str) else codec.dumps(t, default=str)
                     for t in said if t]  # fmt: skip
            names = frozenset(n.strip() for t in texts for n in _DECLARED.findall(t))
            self._declared = (said, names)
        return self._declared[1]

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
        self._waiting.append(entry)

    def _swift_call(self, content: Any, line: int, batch: str) -> None:
        """An ms-swift ``tool_call`` message: one call, in ``batch``."""
        self.recognized += 1
        spec = _call_object(content)
        if spec is None or not isinstance(spec.get("name"), str) or not spec["name"]:
            self.warn("a tool_call that is no {name, arguments} JSON", line)
            spec = {"name": _SWIFT_CALL, "arguments": {"text": content}}
        raw = spec.get("arguments", spec.get("parameters"))
        call_id = f"call@{line}"
        entry = self._new_call(call_id, spec["name"], raw, batch, None, line)
        self._calls[call_id] = entry
        self._waiting.append(entry)
        self._swift_batch = batch

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
        name = _name(message.get("name"))
        content = message.get("content")
        if call_id is not None and call_id != "":
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            why = f"tool result for an unknown tool_call_id {call_id!r}"
        else:
            responses = _RESPONSE.findall(content) if isinstance(content, str) else []
            if responses:  # Hermes' <tool_response> blocks: one a call, in order
                for place, response in enumerate(responses):
                    self._answer_in_order(response.strip(), name, f"{line}.{place}", line)
                return
            listed = self._listed_results(content)
            if listed is not None:  # ToolACE's: one {name, results} a call, by its name
                for place, (named, text) in enumerate(listed):
                    self._answer(named, text, f"{line}.{place}", line, "a result")
                return
            call = self._oldest_waiting(name)
            why = "tool result without a tool_call_id, and no call waits for one"
        if call is None:
            self.warn(why, line)
            own_id = call_id if isinstance(call_id, str) and call_id else f"tool@{line}"
            call = self._new_call(own_id, name, None, None, None, line)
            self._calls[own_id] = call
        self._settle(call, content)

    def _answer_in_order(self, response: str, name: str, where: str, line: int) -> None:
        """One ``<tool_response>``'s body: the result of the oldest call waiting (of the tool
        its ``{"name", "content"}`` JSON names, when it is that)."""
        named = name
        with contextlib.suppress(ValueError):
            parsed = codec.loads(response)
            if isinstance(parsed, Mapping) and isinstance(parsed.get("name"), str):
                named = parsed["name"]
        self._answer(named, response, where, line, "a <tool_response>")

    def _answer(self, named: str, text: str, where: str, line: int, what: str) -> None:
        """``text`` as the result of the oldest call of ``named``'s tool waiting (else of the
        oldest call waiting); one no call waits for is kept as a call of its own, warned."""
        call = self._oldest_waiting(named)
        if call is None:
            self.warn(f"{what} no call waits for", line)
            call = self._new_call(f"tool@{where}", named, None, None, None, line)
        self._settle(call, text)

    def _listed_results(self, content: Any) -> list[tuple[str, str]] | None:
        """A tool message answering several calls at once, as ToolACE writes it: a JSON list
        of ``{"name", "results"}`` (or ``content``), each naming a call still waiting (its
        results as their JSON); None for any other content, one result as it is."""
        if not isinstance(content, str) or not content.lstrip().startswith("[{"):
            return None
        try:
            listed = codec.loads(content)
        except ValueError:
            return None
        waiting = [c.name for c in self._waiting if c.result is None]
        found = []
        for each in listed if isinstance(listed, list) else [None]:
            if not isinstance(each, Mapping) or each.get("name") not in waiting:
                return None
            waiting.remove(each["name"])
            value = each.get("results", each.get("content"))
            text = value if isinstance(value, str) else codec.dumps(value, default=str)
            found.append((each["name"], text))
        return found or None

    def _oldest_waiting(self, name: str) -> ToolCall | None:
        """The oldest call without a result (of tool ``name``'s, when named and one is), taken
        out of the calls waiting."""
        waiting = self._waiting
        while waiting and waiting[0].result is not None:
            waiting.popleft()
        if name:
            named = next((c for c in waiting if c.name == name and c.result is None), None)
            if named is not None:
                waiting.remove(named)
                return named
        return waiting.popleft() if waiting else None

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
            self._append(
                notice("reader.cut_off", level="warning", subtype="length", timestamp=timestamp)
            )
        elif reason == "content_filter":
            self._append(failure("reader.withheld_content_filter", timestamp=timestamp))

    # --- helpers ---------------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)


def _name(value: Any) -> str:
    return value if isinstance(value, str) else ""


#: The Hermes function-calling template's calls and results, written in a message's text
#: (NousResearch/Hermes-Function-Calling; Qwen2.5 and Qwen3's chat templates).
_CALL_TAG = "<tool_call>"
_WRITTEN_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>(.*?)</tool_response>", re.DOTALL)


#: Reasoning written at the head of an assistant's text (Qwen3's and DeepSeek-R1's templates).
_THINK, _THOUGHT = "<think>", re.compile(r"<think>(.*?)</think>\s*", re.DOTALL)


def _written_thinking(text: str) -> tuple[Thinking | None, str]:
    """The reasoning an assistant's text opens with in ``<think>`` tags, and the text after it;
    no Thinking (and the text as it is) when the tag is never closed."""
    found = _THOUGHT.match(text.lstrip())
    if found is None:
        return None, text
    thought = found.group(1).strip()
    rest = text.lstrip()[found.end() :]
    return (Thinking(text=thought, form="text") if thought else None), rest


def _literal(text: str) -> Any:
    """The JSON value ``text`` holds, or the Python literal (Hermes' datasets write many calls
    as ``{'arguments': {...}, 'name': ...}``); None for neither."""
    try:
        return codec.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


#: Qwen3-Coder's form of a written call: ``<function=name>`` holding ``<parameter=key>`` tags,
#: each value the text between them (a line break after the opening tag and before the
#: closing one is the template's, not the value's).
_FUNCTION = re.compile(r"\s*<function=([^>\n]+)>(.*)</function>\s*", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>\n?(.*?)\n?</parameter>", re.DOTALL)


def _written_call(body: str) -> Any:
    """The ``{"name", "arguments"}`` a ``<tool_call>`` tag holds: its JSON or Python literal,
    or Qwen3-Coder's ``<function=…>`` form (whose values stay text: the schema that types them
    is not the message's); None for neither."""
    function = _FUNCTION.fullmatch(body)
    if function is None:
        return _literal(body.strip())
    inner = function.group(2)
    arguments: Any = dict(_PARAMETER.findall(inner))
    if not arguments and inner.strip():
        arguments = _literal(inner.strip())  # a JSON body: <function=name>{...}</function>
        if arguments is None:
            return None
    return {"name": function.group(1).strip(), "arguments": arguments}


def _text_calls(text: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The calls an assistant's text writes in Hermes' ``<tool_call>`` tags (each the JSON, or
    Python literal, of ``{"name", "arguments"}``) as Chat tool calls (without ids), and the
    text around them; None when it writes none, or one that is no such object (the text is
    then shown as it is)."""
    if _CALL_TAG not in text:
        return None
    bodies = _WRITTEN_CALL.findall(text)
    calls = []
    for body in bodies:
        spec = _written_call(body)
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            return None
        arguments = spec.get("arguments", spec.get("parameters"))
        if not isinstance(arguments, str):
            arguments = codec.dumps(arguments if arguments is not None else {}, default=str)
        function = {"name": spec["name"], "arguments": arguments}
        calls.append({"type": "function", "function": function})
    if not calls:
        return None
    return _WRITTEN_CALL.sub("", text).strip(), calls


#: A tool's name as its schema declares it (JSON or a Python literal).
_DECLARED = re.compile(r"""["']name["']\s*:\s*["']([^"'\n]{1,200})["']""")
#: The longest text read as a Python list of calls (one longer is parsed for nothing).
_MOST_WRITTEN_CALLS = 64 * 1024
#: What a name that is no Python name is written as while the calls are parsed.
_ALIAS = "__turnfold_tool_{}"


def python_calls(text: str, declared: frozenset[str]) -> list[dict[str, Any]] | None:
    """The Chat tool calls (without ids) a text that is wholly a Python list of calls writes
    (``[get_weather(city="Paris", unit="c"), other(a=1)]``): each to a ``declared`` tool (a
    name that is no Python name, ``Get Scores``, as the tools declare it), its arguments
    keywords whose values are literals. Parsed, never evaluated (the text is untrusted); None
    for anything else (another name, an argument that is a name or an expression, more than
    the list), which stays text."""
    aliases = {
        _ALIAS.format(n): name
        for n, name in enumerate(sorted(declared, key=len, reverse=True))
        if not name.replace(".", "_").isidentifier() and f"{name}(" in text
    }
    for alias, aliased in aliases.items():
        text = text.replace(f"{aliased}(", f"{alias}(")
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(tree, ast.List) or not tree.elts:
        return None
    calls = []
    for node in tree.elts:
        if not isinstance(node, ast.Call) or node.args:
            return None
        written_name = _dotted(node.func)
        name = aliases.get(written_name or "", written_name)
        if name is None or name not in declared:
            return None
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:  # **spread
                return None
            try:
                arguments[keyword.arg] = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
        written = codec.dumps(arguments, default=str)
        if any(alias in written for alias in aliases):  # a name's text inside a value
            return None
        calls.append({"type": "function", "function": {"name": name, "arguments": written}})
    return calls


def _dotted(node: ast.expr) -> str | None:
    """The name a call is made to: ``f``, or a dotted ``math.hypot``; None for any other."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _with_content(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message that keeps its text under ``text`` (a system message's, when it has none,
    under ``system_prompt``), as one that keeps it under ``content``."""
    text = message.get("text")
    if not text and message.get("role") == "system":
        text = message.get("system_prompt")
    return {**message, "content": text if isinstance(text, str) else None}


def _call_object(value: Any) -> Mapping[str, Any] | None:
    """A tool call as an object: itself, or the object its JSON text holds; None otherwise."""
    if isinstance(value, str):
        try:
            value = codec.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


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


def litellm_usage(usage: Any) -> Usage | None:
    """A litellm ``ModelResponse``'s ``usage``, as the harnesses that call models through
    litellm keep it (mini-swe-agent, OpenHands): a ChatCompletion usage, and an Anthropic
    model's cache writes, which Chat Completions does not name and litellm does
    (``cache_creation_input_tokens``; ``prompt_tokens_details.cache_creation_tokens`` in later
    releases, with the one-hour part in its ``cache_creation_token_details``), with the prompt
    count they belong to (:func:`litellm_prompt_tokens`).

    >>> litellm_usage({"prompt_tokens": 4, "completion_tokens": 9,
    ...                "cache_creation_input_tokens": 6553})  # doctest: +ELLIPSIS
    Usage(input_tokens=6557, output_tokens=9, cache_read_tokens=None, cache_write_tokens=6553...)
    """
    counted = chat_usage(usage)
    if not isinstance(usage, Mapping):
        return counted
    written = as_int(usage.get("cache_creation_input_tokens"))
    details = usage.get("prompt_tokens_details")
    if written is None and isinstance(details, Mapping):
        written = as_int(details.get("cache_creation_tokens"))
    if written is not None and written >= 0:
        counted = counted or Usage()
        counted.cache_write_tokens = written
        counted.input_tokens = litellm_prompt_tokens(
            counted.input_tokens, counted.cache_read_tokens, written
        )
        # The part of them kept for an hour, which costs more (litellm's
        # ``CacheCreationTokenDetails``, from the Anthropic usage's ``cache_creation``).
        split = details.get("cache_creation_token_details") if isinstance(details, Mapping) else {}
        hour = as_int(split.get("ephemeral_1h_input_tokens")) if isinstance(split, Mapping) else 0
        if hour is not None and 0 < hour <= written:
            counted.cache_write_1h_tokens = hour
    return counted


def litellm_prompt_tokens(prompt: int | None, read: int | None, written: int | None) -> int | None:
    """A prompt's tokens, the cached ones included (:mod:`turnfold.usage`'s convention), from
    litellm's count of them, which harnesses record as is.

    litellm's ``prompt_tokens`` for an Anthropic model counts the cache reads; the cache writes
    some releases count in and others leave out: a January 2025 trajectory of OpenHands' tests
    counts them (3439 prompt tokens, 3435 of them written), a 0.48 session (July 2025) leaves
    them out (4 prompt tokens for a response that wrote 6553). A count below its cached parts
    left the writes out: they are added. One that counts them in is never below them, so it
    stays as it is.

    >>> litellm_prompt_tokens(4, 0, 6553), litellm_prompt_tokens(3439, 0, 3435)
    (6557, 3439)
    """
    if prompt is None or not written or prompt >= (read or 0) + written:
        return prompt
    return prompt + written


def is_chunk(value: Any) -> bool:
    """A chunk of a streamed completion, as ``chunk.model_dump()`` writes it."""
    return (
        isinstance(value, Mapping)
        and value.get("object") == CHUNK
        and isinstance(value.get("choices"), list)
    )


_REASONING = "reasoning_content"


class _Stream:
    """The chunks of one streamed completion put together, as the OpenAI SDK's own stream
    helper joins them: each string of a delta appended to the one before it (the content, the
    reasoning, the refusal; a tool call's name and arguments, by the call's ``index``)."""

    def __init__(self, chunk: Mapping[str, Any], line: int) -> None:
        self.own_id, self.line = chunk.get("id"), line
        self.head = {key: chunk.get(key) for key in ("id", "created", "model")}
        self.texts: dict[str, list[str]] = {"content": [], _REASONING: [], "refusal": []}
        self.calls: dict[Any, dict[str, Any]] = {}
        self.choices: list[dict[str, Any]] = []  # the choices after the first (n > 1), as seen
        self.finish: Any = None
        self.usage: Any = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        if isinstance(chunk.get("usage"), Mapping):  # stream_options.include_usage: the last
            self.usage = chunk["usage"]
        for choice in chunk["choices"]:
            if not isinstance(choice, Mapping):
                continue
            if choice.get("index", 0) != 0:
                if choice.get("index") not in [c["index"] for c in self.choices]:
                    self.choices.append({"index": choice.get("index"), "message": {}})
                continue
            self.finish = choice.get("finish_reason") or self.finish
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            for key, pieces in self.texts.items():
                # vLLM and OpenRouter stream the reasoning as ``reasoning``, DeepSeek as
                # ``reasoning_content``: the completion's reader takes either.
                piece = delta.get(key) or (delta.get("reasoning") if key == _REASONING else None)
                if isinstance(piece, str):
                    pieces.append(piece)
            for call in as_list(delta.get("tool_calls")):
                if isinstance(call, Mapping):
                    self._call_piece(call)

    def _call_piece(self, piece: Mapping[str, Any]) -> None:
        call = self.calls.setdefault(
            piece.get("index", len(self.calls)),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        function = piece.get("function")
        for key in ("name", "arguments"):
            value = function.get(key) if isinstance(function, Mapping) else None
            if isinstance(value, str):
                call["function"][key] += value

    def completion(self) -> dict[str, Any]:
        """The ChatCompletion the chunks stand for."""
        message: dict[str, Any] = {"role": "assistant"}
        for key, pieces in self.texts.items():
            message[key] = "".join(pieces) or None
        if self.calls:
            message["tool_calls"] = list(self.calls.values())
        first = {"index": 0, "message": message, "finish_reason": self.finish}
        return {**self.head, "object": "chat.completion", "choices": [first, *self.choices],
                "usage": self.usage}  # fmt: skip


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
    if content is None and "content" not in message:
        content = next((message[k] for k in _TEXT_KEYS if isinstance(message.get(k), str)), None)
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
#: Roles no other message API has.
_CHAT_ROLES = NameSet({"tool", "function", "developer", _SWIFT_CALL, _SWIFT_RESULT})


def _classify(message: Any) -> int:
    if is_completion(message) or is_chunk(message):
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
    batch = batch_line(document)
    if batch is not None:
        if batch.endpoint == RESPONSES_URL:
            return Evidence.none("a Batch API line of the Responses API")
        if batch.request is None or batch.endpoint != CHAT_URL:
            # A completion, a failed call (its line says no more), or a line of an endpoint
            # no format reads, which read() refuses saying so.
            return Evidence(share=1.0, marks=1)
        document = batch.request
    answer = _logged_answer(document)
    found = find_messages(document if answer is None else answer.request)
    if found is None:
        return Evidence.none("no message list")
    tail = [] if answer is None else [answer.response]
    return Evidence.of(sample(found.messages) + tail, _classify, _LACKS)


def _logged_answer(document: Any) -> Exchange | None:
    """A logged call (:func:`~turnfold.formats.wrappers.exchange`) whose response is a
    ChatCompletion: the request's messages, then the completion's answer."""
    call = exchange(document)
    return call if call is not None and is_completion(call.response) else None


def read(source: Source) -> Transcript:
    """Every message of ``source`` fed to an :class:`OpenAIChatBuilder` (static), each accounted
    for by its role (:data:`RECORDS`); a list inside a wrapper object is found by
    :func:`~turnfold.formats.wrappers.find_messages` and the wrapper's other keys kept."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = OpenAIChatBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    batch = batch_line(document)
    if batch is not None and batch.endpoint == COMPLETIONS_URL:
        batch = _completion_as_chat(source, batch)
    if batch is not None and batch.request is None:
        return _batch_outcome(source, batch, transcript, builder)
    if batch is not None:
        if batch.endpoint != CHAT_URL:
            raise TranscriptFormatError(source.name, [NAME], 1, _not_chat(batch))
        document = batch.request
    answer = _logged_answer(document)
    if answer is not None:
        document = answer.request
    found = (
        find_messages(document)
        if isinstance(document, Mapping) and not is_completion(document)
        else None
    )
    if found is not None and isinstance(document, Mapping):
        # The row's model and system prompt, unless its run holds the prompt already (a row
        # made of text keys: ms-swift's query and response, glaive's system and chat).
        _request_metadata(found.rest, transcript)
        builder.tools = found.rest.get("tools")
        builder.media = MediaFiles(found.rest)
        numbered = list(enumerate(found.messages, start=1))
        reply = len(numbered) if found.reply is None else found.reply
        for line, message in numbered[:reply]:
            builder.feed_noted(source, message, line, _record_type(message))
        for _ in range(found.repeated):
            source.note(_REPEATED, "ignored")
        builder.feed_rejected(source, found.rejected, len(numbered) + found.repeated + 1)
        for line, message in numbered[reply:]:
            builder.feed_noted(source, message, line, _record_type(message))
        if answer is not None:
            after = len(numbered) + found.repeated + len(found.rejected) + 1
            builder.feed_noted(source, answer.response, after, "chat.completion")
            answered = answer.response.get("model")
            if isinstance(answered, str) and answered:  # the model that answered, not the
                transcript.metadata["model"] = answered  # alias asked for: named once
        keep_wrapper_keys(transcript, found.rest)
        first_line: int | None = 1
    else:
        first_line = builder.feed_records(source, _record_type)
        builder.end_stream()
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first_line, "no Chat Completions messages")
    return transcript


def _batch_outcome(
    source: Source, line: BatchLine, transcript: Transcript, builder: OpenAIChatBuilder
) -> Transcript:
    """A Batch API output line: its ChatCompletion, or the error of its failed call, after a
    prompt not recorded (the output file keeps no request: its input file's line of the same
    ``custom_id`` does); the line's ``custom_id``, ``id``, status and request id as metadata."""
    if line.failure is None and line.endpoint != CHAT_URL:
        raise TranscriptFormatError(source.name, [NAME], 1, _not_chat(line))
    transcript.append(prompt_not_recorded())
    if line.response is not None:
        builder.feed_noted(source, line.response, 1, "chat.completion")
        if isinstance(line.response.get("model"), str):
            transcript.metadata["model"] = line.response["model"]
    else:
        transcript.append(AssistantError(message=line.failure or "", wording=line.wording))
        source.note(_BATCH_FAILED, "mapped")
    keep_wrapper_keys(transcript, line.metadata)
    return transcript


def _completion_as_chat(source: Source, line: BatchLine) -> BatchLine:
    """A Batch API line of the legacy ``/v1/completions`` as the Chat call it reads as: its
    ``prompt`` the user's message, its first choice's ``text`` the assistant's (a
    ``text_completion`` is a ChatCompletion whose message is text)."""
    if line.request is not None:
        prompt = line.request.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
            prompt = prompt[0]
        if not isinstance(prompt, str):
            what = f"{len(prompt)} prompts" if isinstance(prompt, list) else "no text prompt"
            reason = (f"{line.custom_id!r} is a Batch API {COMPLETIONS_URL} request of {what}: "
                      "one run is one prompt")  # fmt: skip
            raise TranscriptFormatError(source.name, [NAME], 1, reason)
        request = {k: v for k, v in line.request.items() if k != "prompt"}
        messages = [{"role": "user", "content": prompt}]
        return dataclasses.replace(
            line, endpoint=CHAT_URL, request={**request, "messages": messages}
        )
    body = line.response or {}
    choices = [
        {**choice, "message": {"role": "assistant", "content": choice.get("text")}}
        for choice in as_list(body.get("choices")) if isinstance(choice, Mapping)
    ]  # fmt: skip
    answer = {**body, "object": "chat.completion", "choices": choices}
    return dataclasses.replace(line, endpoint=CHAT_URL, response=answer)


def _not_chat(line: BatchLine) -> str:
    """Why a Batch API line of another endpoint is no Chat run: a Responses call is read by
    its own format; an embedding (or a legacy completion) is no transcript run at all."""
    held = "request" if line.request is not None else "response"
    said = f"{line.custom_id!r} is a Batch API {line.endpoint or 'unknown endpoint'} {held}"
    if line.endpoint == RESPONSES_URL:
        return f"{said}: read it as openai-responses"
    return f"{said}, not a transcript run (no conversation to show)"


def _record_type(record: Any) -> str:
    """A message by its role; a ChatCompletion is ``chat.completion``; a request ``request``."""
    if is_completion(record):
        return "chat.completion"
    if is_chunk(record):
        return CHUNK
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
