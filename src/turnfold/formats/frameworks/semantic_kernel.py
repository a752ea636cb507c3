"""Semantic Kernel's runs (spec A-1, A-2): a ``ChatHistory``, a ``ChatCompletionAgent``'s
``ChatHistoryAgentThread``, the ``AgentResponseItem`` s its ``invoke`` / ``get_response``
give, ``ChatMessageContent`` lists, and their saved form: ``chat_history.serialize()`` (what
``store_chat_history_to_file`` writes; ``model_dump_json()`` is the same with its empty
fields), or messages one ``model_dump_json()`` a line.

Input shapes (each object as SK's own ``model_dump(mode="json", exclude_none=True)`` gives
it, :func:`plain`):

- a history ``{"messages": [...]}``, or a list of messages, or one a line;
- a message ``{"content_type": "message", "role", "name", "items": [...], "ai_model_id",
  "metadata", "finish_reason"}``, its ``items`` each with its ``content_type`` (``text``,
  ``function_call``, ``function_result``, ``reasoning``, ``image``…);
- a streamed piece of a message (``StreamingChatMessageContent``: the same with
  ``choice_index``), as an agent's ``invoke_stream`` yields them.

Mapping:

- ``system`` / ``developer`` → ``metadata["system"]`` (a later one a notice); ``user`` text →
  :class:`UserMessage`; a message's ``name`` (an agent's, which SK sets on its messages) →
  ``meta["agent"]``;
- an ``assistant`` message's items in order: ``text`` → :class:`AssistantText`,
  ``reasoning`` → :class:`Thinking`, ``function_call`` → :class:`ToolCall` (its ``id``
  verbatim, ``name`` the plugin-qualified ``plugin-function``, ``arguments`` a JSON string or
  a dict), the calls of one message one batch; its ``ai_model_id`` the model, its
  ``metadata``: ``id`` the response id, ``created`` (epoch seconds) the time, ``usage``
  (SK's ``CompletionUsage``: ``prompt_tokens`` with ``prompt_tokens_details.cached_tokens``,
  ``completion_tokens`` with ``completion_tokens_details.reasoning_tokens``) the response's
  :class:`Usage`, on its last text (else its first entry); ``finish_reason`` ``length`` is a
  warning notice, ``content_filter`` an :class:`AssistantError`;
- a message the ``ChatHistorySummarizationReducer`` wrote in place of the messages it
  summarised (its ``metadata["__summary__"]``, SK's ``SUMMARY_METADATA_KEY``; its summariser's
  own response, role ``assistant``) → a :class:`CompactionBoundary` of its text, never an
  answer; the reducer removed what it summarised, so a turn after it that begins with no
  prompt has its prompt marked not recorded. The summariser's response is no turn's: its
  ``ai_model_id`` and usage are the boundary's ``meta["model"]`` / ``meta["usage"]`` (its
  counts), and its tokens are in the session's total (``metadata["usage"]``: every response's
  usage, each once, and the summariser's), not in any turn's, nor in the cost estimate (which
  prices the responses shown);
- a ``tool`` message's ``function_result`` settles the call with its ``id``. SK gives the
  model a failure as text, and records no error flag: a result that is one of SK's own
  failure texts (:data:`FAILURE_TEXTS`: the function raised, is not among the tools, got
  malformed or missing arguments) is ``error``; a native function that returned records the
  arguments it was called with (``metadata["used_arguments"]``): ``success``; any other
  result (a prompt function's, a filter's) has no recorded outcome: ``unknown`` (L-3);
- streamed pieces (what ``invoke_stream`` yields): texts grow one :class:`AssistantText`
  until a whole message comes; a piece with only ``metadata["usage"]`` gives that text its
  usage (the usage piece of a response that made calls is passed by: SK's whole message of
  those calls carries the same usage). The calls and results of a streamed run come as whole
  streaming messages, read as the messages above.

Not recorded, so not shown: timestamps of user and tool messages, durations. An agent's
instructions are not in its thread (SK adds them to each request); an ``AgentResponseItem``
holds the agent's answer only, so a list of them has no prompt and no calls (its thread
holds them: ``load(item.thread)``); the messages a ``ChatHistorySummarizationReducer``
summarised (only its summary is left). Not read: ``to_prompt()``'s XML (a prompt template's
rendering, not a saved form).

Live (spec A-2): an agent's ``invoke_stream`` yields its texts only; the function calls and
results go to its ``on_intermediate_message`` callback. :func:`stream_events` runs it with
both in the order SK makes them::

    async for event in turnfold.follow(stream_events(agent, messages="…", thread=thread)): ...

``follow(agent.invoke(...))`` shows the answers, whole messages; any ``ChatMessageContent``
s fed are read as a load reads them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    TranscriptBuilder,
    as_list,
    as_text,
    counted_usage,
    epoch_iso,
    parse_arguments,
    prompt_not_recorded,
    stringify,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source, plain_each, warning_count
from turnfold.formats.wording import failure, notice
from turnfold.model import (
    AssistantText,
    CompactionBoundary,
    Entry,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import Tokens, add_into, count_tokens, counts_of

NAME = "semantic-kernel"

RECORDS = Records(
    mapped={
        "message/user": "UserMessage (its text items)",
        "message/system": 'metadata["system"] (a later one: a notice)',
        "message/developer": 'metadata["system"] (a later one: a notice)',
        "message/assistant": "text → AssistantText, reasoning → Thinking, function_call → "
        'ToolCall; ai_model_id, metadata["usage"] (CompletionUsage) → its Usage',
        "message/tool": "function_result settles its call: SK's failure texts → error, "
        "used_arguments → success, else unknown",
        "message/summary": 'a ChatHistorySummarizationReducer\'s summary (metadata["__summary__"])'
        " → CompactionBoundary; its summariser's usage in the session's total "
        '(metadata["usage"])',
        "chunk/assistant": "a streamed piece: its text grows the answer; usage → its Usage; "
        "the whole message of a stream's function calls → ToolCall",
        "chunk/tool": "a streamed run's tool message (whole): as message/tool",
    },
)

#: The texts SK writes as a function's result when the call failed (``Kernel.
#: invoke_function_call`` and its auto-invocation handler in 1.x): its only record of a failure.
FAILURE_TEXTS = (
    "An error occurred while invoking the function ",
    "The tool call with name `",
    "The tool call arguments are malformed.",
    "Missing required argument(s):",
    "Received unexpected argument(s):",
    "There are `",
)

#: The metadata key SK's summarisation reducer marks its summary message with
#: (``SUMMARY_METADATA_KEY`` in ``semantic_kernel.contents.history_reducer``).
SUMMARY_KEY = "__summary__"

_LACKS = "no Semantic Kernel message (content_type 'message' with role and items)"


# --- objects → records ---------------------------------------------------------------------


def _dump(value: Any) -> Any:
    """One SK object as the record SK's own serialization makes of it."""
    message = getattr(value, "message", None)  # an AgentResponseItem: its message
    if message is not None and hasattr(value, "thread"):
        value = message
    return value.model_dump(mode="json", exclude_none=True)


def plain(value: Any) -> Any:
    """SK's objects as records: a ``ChatHistory`` (or an agent's ``ChatHistoryAgentThread``,
    by the history it keeps) as ``{"messages": [...]}``, a message or a response item as its
    message, a list of them as their messages; the objects are read, never modified."""
    history = getattr(value, "_chat_history", value)  # a ChatHistoryAgentThread's own history
    if isinstance(getattr(history, "messages", None), list):
        return {"messages": plain_each(history.messages, _dump)}
    if isinstance(value, (list, tuple)):
        return plain_each(value, _dump)
    if hasattr(value, "get_messages") and not hasattr(value, "_chat_history"):
        raise TypeError(
            f"a {type(value).__name__} keeps its messages in its service: load "
            "[m async for m in thread.get_messages()]"
        )
    return _dump(value)


# --- detection -----------------------------------------------------------------------------


def _kind(value: Any) -> str | None:
    """``message/<role>``, ``message/summary`` for a summarisation reducer's summary, or, for
    a streamed piece, ``chunk/<role>``; None: not SK's."""
    if not isinstance(value, Mapping) or value.get("content_type") != "message":
        return None
    role = value.get("role")
    if not isinstance(role, str) or not isinstance(value.get("items", []), list):
        return None
    if "choice_index" in value:
        return f"chunk/{role}"
    metadata = value.get("metadata")
    # Whatever its role: SK's reducer tells its summaries apart by this mark alone.
    if isinstance(metadata, Mapping) and metadata.get(SUMMARY_KEY):
        return "message/summary"
    return f"message/{role}"


def _classify(value: Any) -> int:
    return DISTINCTIVE if _kind(value) is not None else NOT_MINE


def _messages_of(document: Any) -> list[Any] | None:
    if isinstance(document, Mapping) and isinstance(document.get("messages"), list):
        return list(document["messages"])
    return None


def detect(source: Source) -> Evidence:
    """Messages as SK dumps them: ``content_type: "message"`` with a ``role`` and ``items``
    (each item with its own ``content_type``), alone, in a list, one a line, or in a
    history's ``messages``."""
    messages = _messages_of(source.document) if source.is_document else None
    if messages is not None:
        return Evidence.of(messages[:32], _classify, _LACKS)
    return Evidence.of_events(source, _classify, _LACKS)


# --- reading -------------------------------------------------------------------------------


def _usage(metadata: Mapping[str, Any]) -> Usage | None:
    """A response's ``CompletionUsage`` (its ``metadata["usage"]``) in turnfold's names."""
    raw = metadata.get("usage")
    if not isinstance(raw, Mapping):
        return None
    prompt = raw.get("prompt_tokens_details")
    completion = raw.get("completion_tokens_details")
    usage = counted_usage(
        raw.get("prompt_tokens"),
        raw.get("completion_tokens"),
        prompt.get("cached_tokens") if isinstance(prompt, Mapping) else None,
        None,
        completion.get("reasoning_tokens") if isinstance(completion, Mapping) else None,
    )
    if usage is not None and as_text(metadata.get("id")):
        usage.response_id = metadata["id"]
    return usage


def _failed(text: str) -> bool:
    return text.startswith(FAILURE_TEXTS)


def _text_of(items: list[Any]) -> str:
    return "".join(
        i["text"] for i in items if isinstance(i, Mapping) and isinstance(i.get("text"), str)
    )


class _Builder(TranscriptBuilder):
    """Writes SK's messages, whole or streamed in pieces, into a transcript."""

    def __init__(self, transcript: Transcript, source_name: str, *, live: bool) -> None:
        super().__init__(transcript, source_name, live=live)
        self._calls: dict[str, ToolCall] = {}
        self._responses = 0
        #: The answer streamed pieces are writing, until a whole message comes.
        self._streamed: AssistantText | None = None
        self._streamed_response: Any = None  # its response's id
        #: The responses whose usage an entry carries: SK repeats a streamed response's usage
        #: on the whole message of its calls (spec U-1: counted once).
        self._counted: set[str] = set()
        self._prompted = False
        #: The tokens of each summarisation reducer's summariser response read: in the
        #: session's total (:meth:`_total`), on no entry a turn counts.
        self._summarizers: list[Tokens] = []

    def feed(self, message: Mapping[str, Any], line: int | None) -> None:
        kind = _kind(message)
        items = as_list(message.get("items"))
        meta = {"agent": message["name"]} if as_text(message.get("name")) else {}
        if kind is None:
            self.warn("not a Semantic Kernel message: not shown", line)
            return
        if kind == "message/summary":
            self._summary(message, items, meta, line)
        elif kind in ("message/system", "message/developer"):
            self._system(_text_of(items), meta)
        elif kind == "message/user":
            self._user(items, meta, line)
        else:
            if not self._prompted:
                # Response items hold the agent's answers only: the prompt is in their thread.
                self.transcript.append(prompt_not_recorded())
                self._prompted = True
            if kind.startswith("chunk/"):
                self._piece(message, kind, items, meta, line)
                return
            if kind == "message/assistant":
                self._assistant(message, items, meta, line)
            elif kind == "message/tool":
                self._results(items, meta, line)
            else:
                self.warn(f"a message of role {message.get('role')!r} not shown", line)
        self._streamed = None
        if self.live:
            self._total()

    def _system(self, text: str, meta: dict[str, Any]) -> None:
        metadata = self.transcript.metadata
        if "system" not in metadata and not self.transcript.entries:
            metadata["system"] = text
        else:  # instructions given within the run: shown where they were given
            self.transcript.append(SystemNotice(text=text, subtype="system", meta=meta))

    def _summary(
        self, message: Mapping[str, Any], items: list[Any], meta: dict[str, Any], line: Any
    ) -> None:
        """The summary a ``ChatHistorySummarizationReducer`` put in place of the messages it
        removed: a compaction, its summariser's response counted in the session only."""
        self._unshown(items, ("text",), line)
        metadata = message.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        boundary = CompactionBoundary(
            summary=_text_of(items) or None,
            timestamp=self._created(metadata, line),
            meta=dict(meta),
        )
        model = as_text(message.get("ai_model_id"))
        if model is not None:
            boundary.meta["model"] = model
        usage = _usage(metadata)
        if usage is not None and usage.response_id not in self._counted:
            if usage.response_id is not None:
                self._counted.add(usage.response_id)
                boundary.meta["response_id"] = usage.response_id
            boundary.meta["usage"] = counts_of(usage)
            self._summarizers.append(counts_of(usage))
        self.transcript.append(boundary)
        # What came before it is gone: an answer after it with no prompt lost its prompt.
        self._prompted = False
        self._finish(message.get("finish_reason"), meta)

    def _total(self) -> None:
        """The session's tokens with its summarisers': every response once, and each summary
        the reducer asked for (``metadata["usage"]``, which wins over the responses' sum)."""
        if not self._summarizers:
            return
        total = count_tokens(self.transcript.entries)
        for tokens in self._summarizers:
            add_into(total, tokens)
        self.transcript.metadata["usage"] = total

    def _user(self, items: list[Any], meta: dict[str, Any], line: int | None) -> None:
        self._unshown(items, ("text",), line)
        self.transcript.append(UserMessage(text=_text_of(items), meta=meta))
        self._prompted = True

    def _assistant(
        self,
        message: Mapping[str, Any],
        items: list[Any],
        meta: dict[str, Any],
        line: Any,
        *,
        streamed: bool = False,
    ) -> None:
        """A whole assistant message; ``streamed``: its text was shown as it streamed."""
        metadata = message.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        model = as_text(message.get("ai_model_id"))
        timestamp = self._created(metadata, line)
        self._responses += 1
        batch = f"response-{self._responses}"
        written: list[Entry] = []
        for item in items:
            if not isinstance(item, Mapping):
                self.warn("an item that is no object not shown", line)
                continue
            content = item.get("content_type")
            entry: Entry
            if content == "text" and streamed:
                continue
            if content == "text":
                entry = AssistantText(text=stringify(item.get("text") or ""), model=model)
            elif content == "reasoning":
                entry = Thinking(text=stringify(item.get("text") or ""))
            elif content == "function_call":
                entry = self._call(item, batch, line)
            elif content == "function_result":
                self._result(item, meta, line)
                continue
            else:
                self.warn_once(f"Semantic Kernel {content!s} content not shown", line)
                continue
            entry.timestamp, entry.meta = timestamp, dict(meta)
            self.transcript.append(entry)
            written.append(entry)
        calls = [e for e in written if isinstance(e, ToolCall)]
        if len(calls) == 1:
            calls[0].batch_id = None  # a call alone is a batch of its own
        self._usage_of(_usage(metadata), written)
        self._finish(message.get("finish_reason"), meta)

    def _created(self, metadata: Mapping[str, Any], line: Any) -> str | None:
        """A response's time, its ``metadata["created"]`` (epoch seconds); one that is no time
        is left out, said of its response (``common.warned_timestamp``)."""
        response = as_text(metadata.get("id"))
        return warned_timestamp(metadata.get("created"), epoch_iso,
                                lambda reason: self.warn(reason, line),
                                f"response {response}" if response else "a message",
                                name="metadata.created",
                                unit="seconds since the epoch")  # fmt: skip

    def _usage_of(self, usage: Usage | None, written: list[Entry]) -> None:
        if usage is None or not written or usage.response_id in self._counted:
            return
        if usage.response_id is not None:
            self._counted.add(usage.response_id)
        texts = [e for e in written if isinstance(e, AssistantText)]
        holder = texts[-1] if texts else written[0]
        self.transcript.update(holder, usage=usage)

    def _finish(self, reason: Any, meta: dict[str, Any]) -> None:
        if reason == "length":
            cut = notice("reader.cut_off_at_token_limit", level="warning", meta=dict(meta))
            self.transcript.append(cut)
        elif reason == "content_filter":
            self.transcript.append(failure("reader.stopped_by_content_filter", meta=dict(meta)))

    def _call(self, item: Mapping[str, Any], batch: str, line: Any) -> ToolCall:
        arguments = item.get("arguments")
        call = ToolCall(
            call_id=as_text(item.get("id")) or f"call@{line}.{len(self._calls)}",
            name=as_text(item.get("name")) or as_text(item.get("function_name")) or "",
            args=parse_arguments(arguments) if isinstance(arguments, str) else arguments,
            status=self.open_status,
            batch_id=batch,
        )
        self._calls[call.call_id] = call
        return call

    def _results(self, items: list[Any], meta: dict[str, Any], line: Any) -> None:
        for item in items:
            if isinstance(item, Mapping) and item.get("content_type") == "function_result":
                self._result(item, meta, line)
            else:
                self.warn_once("a tool message's content other than a result not shown", line)

    def _result(self, item: Mapping[str, Any], meta: dict[str, Any], line: Any) -> None:
        text = stringify(item.get("result"))
        metadata = item.get("metadata")
        status: ToolStatus = "unknown"
        if _failed(text):
            status = "error"
        elif isinstance(metadata, Mapping) and "used_arguments" in metadata:
            status = "success"
        call_id = as_text(item.get("id")) or as_text(item.get("call_id"))
        call = self._calls.pop(call_id, None) if call_id else None
        if call is None:  # a result whose call is not in the messages: shown all the same
            self.warn(f"result of call {call_id!r} has no call before it", line)
            call = ToolCall(
                call_id=call_id or f"result@{line}",
                name=as_text(item.get("name")) or as_text(item.get("function_name")) or "",
                meta=dict(meta),
            )
            self.transcript.append(call)
        self.transcript.update(call, status=status, result=ToolResult(text=text))

    def _piece(
        self, chunk: Mapping[str, Any], kind: str, items: list[Any], meta: dict[str, Any], line: Any
    ) -> None:
        """A streamed piece of an answer (its text, or its usage at the end); the results of
        a streamed run's calls, which SK hands on as whole streaming tool messages."""
        if kind == "chunk/tool":
            self._results(items, meta, line)
            self._streamed = None
            return
        if kind != "chunk/assistant":
            self.warn(f"a streamed message of role {chunk.get('role')!r} not shown", line)
            return
        metadata = chunk.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        if any(isinstance(i, Mapping) and i.get("content_type") == "function_call" for i in items):
            # SK's whole message of the calls a stream made (what the agent adds to its
            # history), as the auto function invocation hands it on: read whole, but for
            # the text already streamed.
            said = self._streamed is not None and self._streamed_response == metadata.get("id")
            self._assistant(chunk, items, meta, line, streamed=said)
            self._streamed = None
            return
        text = _text_of(items)
        streamed = self._streamed
        if streamed is not None and self._streamed_response != metadata.get("id"):
            streamed = self._streamed = None  # another response's text
        if text:
            if streamed is None:
                self._streamed_response = metadata.get("id")
                streamed = self._streamed = AssistantText(
                    text=text,
                    model=as_text(chunk.get("ai_model_id")),
                    timestamp=self._created(metadata, line),
                    meta=meta,
                )
                self.transcript.append(streamed)
            else:
                self.transcript.update(streamed, text=streamed.text + text)
        if streamed is not None:
            self._usage_of(_usage(metadata), [streamed])
        self._finish(chunk.get("finish_reason"), meta)

    def _unshown(self, items: list[Any], shown: tuple[str, ...], line: Any) -> None:
        for item in items:
            content = item.get("content_type") if isinstance(item, Mapping) else None
            if content not in shown:
                self.warn_once(f"Semantic Kernel {content!s} content not shown", line)

    def close(self) -> None:
        self.settle_open(self._calls.values())
        self._calls.clear()
        self._total()


def read(source: Source) -> Transcript:
    """The turns of ``source``: a history's messages, a list of messages, or messages and
    streamed pieces one a line."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = _Builder(transcript, source.name, live=False)
    first: int | None = None
    recognized = 0
    for line, record in source.records():
        first = line if first is None else first
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        messages = _messages_of(record)
        for number, message in enumerate(messages if messages is not None else [record]):
            at = line if messages is None else line + number  # a history's messages by place
            if isinstance(message, MalformedLine):
                source.warn(message.reason, at, record_type="message")
                continue
            kind = _kind(message)
            if kind is None:
                source.warn("not a Semantic Kernel message: not read", at, record_type="other")
                continue
            recognized += 1
            before = warning_count(transcript.warnings)
            builder.feed(message, at)
            warned = warning_count(transcript.warnings) > before
            source.note(kind, "warned" if warned else RECORDS.disposition(kind) or "warned")
    if recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first, _LACKS)
    builder.close()
    return transcript


# --- live (spec A-2) -------------------------------------------------------------------------


async def stream_events(agent: Any, **invoke: Any) -> AsyncIterator[Any]:
    """``agent.invoke_stream(**invoke)`` with the messages SK hands its
    ``on_intermediate_message`` callback (the function calls and their results) yielded in
    the order SK made them, between its streamed texts; the prompt first, when ``messages``
    is given. A callback of the user's own is called as well."""
    # Semantic Kernel is no dependency of turnfold's, nor of its type check (its pins conflict).
    from semantic_kernel.contents import (  # type: ignore[import-not-found, unused-ignore]
        AuthorRole,
        ChatMessageContent,
    )

    own = invoke.pop("on_intermediate_message", None)
    handed: list[Any] = []

    async def hand_on(message: Any) -> None:
        handed.append(message)
        if own is not None:
            await own(message)

    prompts = invoke.get("messages")
    for prompt in prompts if isinstance(prompts, list) else [prompts] if prompts else []:
        yield (
            ChatMessageContent(role=AuthorRole.USER, content=prompt)
            if isinstance(prompt, str)
            else prompt
        )
    async for item in agent.invoke_stream(on_intermediate_message=hand_on, **invoke):
        while handed:
            yield handed.pop(0)
        yield item
    while handed:
        yield handed.pop(0)


class Follower:
    """Follows SK's messages and streamed pieces (``AgentResponseItem`` s or the contents
    themselves) as they arrive: calls ``executing`` until their results come."""

    def __init__(self, transcript: Transcript) -> None:
        transcript.metadata.setdefault("source_format", NAME)
        self.transcript = transcript
        self._builder = _Builder(transcript, f"<{NAME} stream>", live=True)

    def feed(self, event: Any) -> None:
        """One event: a message, a streamed piece, a response item, or a list of them."""
        if isinstance(event, (list, tuple)):
            for part in event:
                self.feed(part)
            return
        try:
            record = event if isinstance(event, Mapping) else _dump(event)
        except Exception:  # not SK's: said once, the run followed on
            self._builder.warn_once(f"{type(event).__name__} is no Semantic Kernel message", None)
            return
        if _kind(record) is None:
            self._builder.warn_once(f"{type(event).__name__} is no Semantic Kernel message", None)
            return
        self._builder.feed(record, None)

    def close(self) -> None:
        """The run ended: calls never settled have no recorded outcome."""
        self._builder.close()
