"""pydantic-ai's message history (spec A-1, A-2, issue 22): an ``AgentRunResult``, a list of
``ModelRequest`` / ``ModelResponse`` messages, or their saved JSON
(``all_messages_json()``, ``ModelMessagesTypeAdapter.dump_python(..., mode="json")``, or an
``AgentRunResult`` dumped by pydantic: ``{"messages": [...], "output": ..., "usage": ...}``).

Input shapes: a list of messages ``{"kind": "request" | "response", "parts": [{"part_kind":
...}, ...]}`` (a JSON document or JSON lines), or a document whose ``messages`` holds them.
``load`` of a Python object goes through :func:`plain`, which reads the messages' dataclass
fields directly (the framework's own serializer for anything unusual), so a run object and its
saved JSON read the same.

A run a tool's exception stopped (any exception but ``ToolFailed`` and ``ModelRetry``, which
are the call's return) has no return for that call: pydantic-ai raises instead, and its history
ends in the request of the returns collected so far (``state='interrupted'``). The stopped
``AgentRun`` (``agent.iter()``), or the messages ``capture_run_messages()`` kept given with the
exception, ``(messages, exc)``, end in an :class:`AssistantError` of it, and the call that
raised, told by the exception's traceback (:func:`raised_in`), is ``error`` with its text
(:func:`tool_raised`), as following the run shows it; the messages alone leave the calls
``unknown`` with a warning (:func:`_interrupted`).

Mapping, part by part (the message is one record, each part another, ``request/<part_kind>``):

- ``system-prompt`` and a request's ``instructions`` → ``metadata["system"]`` (each distinct
  text once, as the other loaders keep instructions); ``user-prompt`` → :class:`UserMessage`
  (text, text content, inline images; URLs and other files as attachment lines), its own
  ``timestamp``; a tool return's content reads the same, a file returned alone (not in a
  list: an image a tool returned, say) as one item, as pydantic-ai reads it. A ``user-prompt``
  after the returns of a request of the same run (``run_id``) as the response they answer is
  the tools' ``ToolReturn.content``, which the model reads as user content: the rest of its
  call's result (``meta["user_content"]``), when its call can be told: one return, one such
  part per return (both in call order), or, for fewer such parts than returns, by time
  (:func:`contents_by_time`); else, like a new run's prompt, the user's, with a warning when
  it may be a tool's;
- ``text`` → :class:`AssistantText` with the response's ``model_name``; ``thinking`` →
  :class:`Thinking` (an empty one with a ``signature`` is ``encrypted``); ``file`` → an
  attachment line of the answer; ``speech`` → its transcript; ``compaction`` →
  :class:`CompactionBoundary`; ``capability`` (2.78: what a capability or the application tells
  the model mid-conversation, ``ctx.enqueue``) → an info :class:`SystemNotice` (subtype
  ``capability``) of its content, its ``kind`` and ``rendering.voice`` in ``meta``;
- ``tool-call`` (``args`` a dict or a JSON string, read as ``args_as_dict()`` does) →
  :class:`ToolCall`; the calls of one response are one batch (``provider_response_id``, else
  ``response-<n>``); ``tool-return`` settles the call with its ``tool_call_id`` by its
  ``outcome``: ``success`` (or none, older files) → success, ``failed`` → error, ``retried``
  (``ModelRetry``, invalid arguments) → error with ``meta["retry"]``, ``denied`` and
  ``interrupted`` → cancelled; ``ended_at`` is the return's ``timestamp``, ``started_at`` the
  response's. ``retry-prompt`` (deprecated) with a ``tool_name`` is a retried return of that
  call; without one, like ``retry-feedback``, a warning :class:`SystemNotice`, the text the
  unusable response ended with a rejected reply (``meta["rejected"]``);
  ``builtin-tool-call`` / ``builtin-tool-return`` (a provider's own tools) pair the same way
  inside the response (``meta["builtin"]``);
- each ``ModelResponse.usage`` → :class:`Usage` of its last text (else ``usage`` of
  its first entry; pydantic-ai writes 0 for counts a provider did not report, so 0 reads as
  not recorded); ``timestamp`` → its entries' ``timestamp``; ``provider_name`` and
  ``finish_reason`` → ``meta`` of its first entry; ``finish_reason: "length"`` adds a
  warning notice (the answer was cut off);
- instruction, tool-availability, capability and model-settings deltas and baselines are the
  framework's prompt-cache bookkeeping: ignored by design;
- an ``AgentRunResult``'s ``output`` → ``metadata["final_output"]``, its ``usage`` (the run's
  ``RunUsage``) → ``metadata["usage"]``, ``run_id`` / ``conversation_id`` → metadata. A run
  given a ``message_history`` holds its responses too (before ``new_message_index``), which its
  ``RunUsage`` does not count: ``metadata["usage"]`` adds their usage (each response once, as a
  load of the saved messages counts them), the ``RunUsage`` kept in ``metadata["run_usage"]``
  (:func:`delegated_usage`). An output
  that is not a string (``output_type=Model``: the output tool ``final_result``'s call, whose
  return says only "Final result processed.", holds it) is also the turn's answer (P-2): an
  :class:`AssistantText` of it as a fenced JSON block (``meta["structured_output"]``) with the
  last response's model and timestamp, unless a text after the last call states it already
  (native or prompted output is the model's own JSON text); the output call stays as it is.
  A saved message list alone (``all_messages_json()``) holds no output, and shows none. An
  output that is a ``DeferredToolRequests`` (the run ended waiting on deferred calls) makes
  each of its calls wait: one in ``approvals`` is ``confirming`` with a :class:`PendingAction`
  ``permission`` ("Approve <tool>?"), one in ``calls`` (a question, ``_kinds``, or a call run
  outside the agent) is ``pending`` with a :class:`PendingAction` ``question``; its
  ``metadata`` for the call goes to the action's ``meta``.

Sub-agents: pydantic-ai's "agent delegation" runs another agent inside a tool; the child's
messages are not in the parent's history, so the call reads as a plain tool call (nothing is
invented about a child it does not record). Run with ``usage=ctx.usage``, its requests and
tokens are in the run's ``RunUsage``, beyond the history's responses: they are counted as
sub-agents' tokens, one total under no call (:func:`delegated_usage`).

Live (:class:`Follower`): the nodes of ``agent.iter()`` (``ModelRequestNode.request`` and
``CallToolsNode.model_response`` are the very messages of the history), and the events of
``run_stream_events()`` / an ``event_stream_handler`` (``PartStartEvent`` / ``PartDeltaEvent``
/ ``PartEndEvent`` build text, thinking and calls as they stream; ``FunctionToolCallEvent``
makes a call ``executing``; ``FunctionToolResultEvent`` settles it; the closing
``AgentRunResultEvent`` adds what the events lack: usage, model and timestamps per response,
the output and the run's usage). ``DeferredToolRequestsEvent`` makes its calls wait at once;
the ones no handler answered in the run are shown waiting at the end, with their pending
actions, as a load of the result shows them (from the result's output, else from the events).
``EnqueuedMessagesEvent`` shows the request parts ``ctx.enqueue`` delivered (a prompt, a
capability part) where the history holds them. ``ModelResponseRejectedEvent`` (2.78) ends the
rejected response (the one replacing it is another) with the retry notice a load shows after
it; ``CompactionEndEvent`` (2.78) is the :class:`CompactionBoundary` of its record's part.
Before 2.78 a rejected streamed response has no event of its own: a part starting at an index
whose part has ended begins the next response, and the retry feedback is not shown live.
A stream that ends in the ``UnexpectedModelBehavior`` of a tool that used up its retries
makes that tool's open call an error (its history records no return for it); one a tool's
exception ended, the call that raised (:func:`tool_raised`: by the exception, which the run
handle holds, else the one call that started and did not return), and the interrupted
request's returns are read from the handle (:meth:`Follower._interrupted_request`). The events do
not carry the prompt: given the ``AgentRunEvents`` handle first (``begin(events)``), the
follower reads, once, at the first event, the ``message_history`` the run was given, whole (as a
load shows it), then the run's requests before its first response, from the handle's history;
without it the prompt is not shown live (the system prompt reaches ``metadata``
with the closing result). Given an ``AgentRun`` (``agent.iter()``), the follower reads at
``End`` the requests its history holds after the last node's message (the returns of the calls
that ran beside deferred ones are in a last request no node carries).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    UNSETTLED,
    MessageBuilder,
    NameSet,
    approval_text,
    as_int,
    as_list,
    checked_timestamp,
    describe_args,
    plain_output,
    stringify,
    structured_answer,
    text_result,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.frameworks import is_interrupt
from turnfold.formats.source import Source, plain_each, plain_value, type_of_record
from turnfold.formats.wording import failure, notice
from turnfold.formats.wrappers import sample
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Disposition,
    Entry,
    ImageData,
    PendingKind,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
    utc,
)
from turnfold.usage import Tokens, add_into, attach_usage, count_tokens, counts_of

NAME = "pydantic-ai"

KINDS = NameSet({"request", "response"})
#: Parts that are the framework's bookkeeping for the prompt cache, not the conversation.
_BOOKKEEPING = (
    "instruction-delta",
    "instruction-baseline",
    "tool-availability-delta",
    "capability-load-delta",
    "model-settings-delta",
)
BOOKKEEPING = NameSet(_BOOKKEEPING)
#: ``BaseToolReturnPart.outcome`` → the call's status.
OUTCOMES: dict[str, ToolStatus] = {
    "success": "success",
    "failed": "error",
    "retried": "error",
    "denied": "cancelled",
    "interrupted": "cancelled",
}
#: ``DeferredToolRequests.kind()`` (``pydantic_ai/_deferred.py``): what a deferred call waits
#: for → the call's status while it waits, and the pending action shown for it. A call waiting
#: for its approval awaits the user's confirmation; a question's answer, or the result of a
#: call run outside the agent, is an answer the run waits for before the call has one.
DEFERRED: dict[str, tuple[ToolStatus, PendingKind]] = {
    "approval": ("confirming", "permission"),
    "question": ("pending", "question"),
    "external": ("pending", "question"),
}
#: The keys of a ``DeferredToolRequests`` as JSON: such an output is the calls the run left
#: waiting, never its answer.
_DEFERRED_KEYS = frozenset({"calls", "approvals"})
#: ``pydantic_ai.messages.INVALID_JSON_KEY``: what ``args_as_dict()`` makes of arguments that
#: are no JSON object.
INVALID_JSON_KEY = "INVALID_JSON"
#: Keys of an ``AgentRunResult`` dumped by pydantic that say nothing a transcript shows.
_IGNORED_KEYS: dict[str, str] = {
    "output_tool_name": "the output tool's name (its call is shown)",
    "traceparent": "the run's tracing span",
    "conversation_revision": "conversation-store bookkeeping",
    "conversation_unsaved": "conversation-store bookkeeping",
    "conversation_unchecked": "conversation-store bookkeeping",
    "conversation_saved": "conversation-store bookkeeping",
}


# --- run objects (spec A-1) -------------------------------------------------------------------


def _iso(value: Any) -> Any:
    """A datetime as pydantic writes it in JSON (UTC as ``Z``), so an object and its saved
    JSON give the same timestamps."""
    if isinstance(value, datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    return value


_SCALARS = (str, int, float, bool, type(None))


def _json(value: Any) -> Any:
    """A part's content as JSON: scalars as they are, anything else by pydantic-ai's own
    serializer for tool returns (``tool_return_ta``), which knows its content types."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, dict)) and _all_json(value):
        return codec.loads(codec.dumps(value))  # a copy: nothing the user holds is shared
    from pydantic_ai.messages import tool_return_ta

    return tool_return_ta.dump_python(value, mode="json")


def _all_json(value: Any, depth: int = 0) -> bool:
    if isinstance(value, _SCALARS):
        return True
    if depth > 20:
        return False
    if isinstance(value, list):
        return all(_all_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _all_json(v, depth + 1) for k, v in value.items())
    return False


def _dump_part(part: Any, request: bool) -> Any:
    """A part by the framework's own serializer (for the part kinds read rarely)."""
    from pydantic import TypeAdapter
    from pydantic_ai.messages import ModelRequestPart, ModelResponsePart

    key = "request" if request else "response"
    adapter = _PART_ADAPTERS.get(key)
    if adapter is None:
        union: Any = ModelRequestPart if request else ModelResponsePart
        adapter = _PART_ADAPTERS[key] = TypeAdapter(union)
    return adapter.dump_python(part, mode="json")


_PART_ADAPTERS: dict[str, Any] = {}


def _plain_usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    out: dict[str, Any] = {}
    for name in (
        "requests",
        "tool_calls",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cache_write_1h_tokens",
        "output_reasoning_tokens",
    ):
        value = getattr(usage, name, None)
        if isinstance(value, int):
            out[name] = value
    details = getattr(usage, "details", None)
    if isinstance(details, dict) and details:
        out["details"] = dict(details)
    return out


def plain_part(part: Any, request: bool) -> Any:
    """One part of a message as its saved JSON holds the fields :func:`read` reads: the
    dataclass fields read directly (a run of a thousand messages converts in a fraction of
    the framework's own dump), the framework's serializer for the rest."""
    kind = getattr(part, "part_kind", None)
    if kind == "text":
        return {"part_kind": kind, "content": part.content}
    if kind == "tool-call":
        args = part.args
        return {
            "part_kind": kind,
            "tool_name": part.tool_name,
            "args": dict(args) if type(args) is dict and _all_json(args) else _json(args),
            "tool_call_id": part.tool_call_id,
        }
    if kind == "tool-return" and isinstance(part.content, _SCALARS):
        retry = getattr(part, "retry", None)
        return {
            "part_kind": kind,
            "tool_name": part.tool_name,
            "content": part.content,
            "tool_call_id": part.tool_call_id,
            "timestamp": _iso(part.timestamp),
            "outcome": part.outcome,
            "retry": None if retry is None else plain_value(retry),
        }
    if kind == "user-prompt" and isinstance(part.content, str):
        return {"part_kind": kind, "content": part.content, "timestamp": _iso(part.timestamp)}
    if kind == "system-prompt":
        return {"part_kind": kind, "content": part.content, "timestamp": _iso(part.timestamp)}
    if kind == "thinking":
        return {
            "part_kind": kind,
            "content": part.content,
            "signature": part.signature,
            "provider_name": part.provider_name,
        }
    if kind == "retry-prompt":  # deprecated, so no longer in the serializer's union
        content = part.content
        return {
            "part_kind": kind,
            "content": content if isinstance(content, str) else _json(list(content)),
            "tool_name": part.tool_name,
            "tool_call_id": part.tool_call_id,
            "timestamp": _iso(part.timestamp),
        }
    return _dump_part(part, request)


def plain_message(message: Any) -> dict[str, Any]:
    """A ``ModelRequest`` or ``ModelResponse`` as :func:`read` reads it."""
    kind = getattr(message, "kind", None)
    request = kind == "request"
    out: dict[str, Any] = {
        "kind": kind,
        "parts": plain_each(message.parts, lambda part: plain_part(part, request)),
        "timestamp": _iso(message.timestamp),
        "run_id": message.run_id,
        "conversation_id": message.conversation_id,
    }
    if request:
        out["instructions"] = message.instructions
        # ``'interrupted'`` (2.x): the run stopped while its tools ran (:func:`_interrupted`).
        out["state"] = getattr(message, "state", None)
    else:
        out["usage"] = _plain_usage(message.usage)
        out["model_name"] = message.model_name
        out["provider_name"] = message.provider_name
        out["provider_response_id"] = message.provider_response_id
        out["finish_reason"] = message.finish_reason
    return out


def _is_message_object(value: Any) -> bool:
    return getattr(value, "kind", None) in KINDS and hasattr(value, "parts")


def _plain_record(value: Any) -> Any:
    return plain_message(value) if _is_message_object(value) else plain_value(value)


def _is_agent_run(value: Any) -> bool:
    """Whether ``value`` is ``agent.iter()``'s ``AgentRun``, told by its type: a stopped run's
    ``next_node`` raises the exception that stopped it."""
    kind = type(value)
    return kind.__name__ == "AgentRun" and kind.__module__.startswith("pydantic_ai.")


def _stopped_by(run: Any) -> Exception | None:
    """The exception that stopped an unfinished ``AgentRun`` (its ``next_node`` raises it
    again); None for a run that is only paused (left before its end), or stopped by a Ctrl-C
    or a cancel: ``follow`` shows that stop itself, and the interrupt, raised again here,
    would leave the run's calls unsettled and reach the user a second time."""
    try:
        getattr(run, "next_node")  # noqa: B009  (a property that raises: read for that)
    except BaseException as exc:
        if isinstance(exc, Exception):
            return exc
        if is_interrupt(exc):
            return None
        raise
    return None


def _raised(exc: Exception | None) -> dict[str, Any]:
    """The document's keys for the exception that stopped a run: ``error``, worded as
    :class:`~turnfold.following.Follow` ends a followed run that raised, and ``raised_in``
    (:func:`raised_in`)."""
    if exc is None:
        return {"error": None}
    return {"error": f"{type(exc).__name__}: {exc}", "raised_in": raised_in(exc)}


def raised_in(exc: BaseException) -> list[str]:
    """The ids of the tool calls whose execution ``exc`` left, innermost first: read off its
    traceback, whose frames of pydantic-ai's tool execution hold the call they run (a local
    ``call``, its ``ToolCallPart``). The messages record no return for a call whose tool
    raised, and the exception names no call; the traceback is the one record of which did,
    even among calls of one tool running at once. Empty for an exception raised outside any
    tool (a usage limit checked before the calls run)."""
    found: list[str] = []
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if str(frame.f_globals.get("__name__", "")).startswith("pydantic_ai."):
            call = frame.f_locals.get("call")
            call_id = getattr(call, "tool_call_id", None)
            if getattr(call, "part_kind", None) == "tool-call" and isinstance(call_id, str):
                if call_id in found:
                    found.remove(call_id)
                found.insert(0, call_id)
        tb = tb.tb_next
    return found


#: What :func:`plain` makes of an exception a run raised: the name of its type alone.
RAISED = "raised"


def plain(value: Any) -> Any:
    """An ``AgentRunResult`` (or the ``AgentRunResultEvent`` holding one, or an ``AgentRun``,
    finished or not), a list of messages or one message as the records :func:`read` reads;
    the value itself is never modified. An exception the run raised (``UsageLimitExceeded``
    from ``agent.run_sync``) holds none of the run's messages: ``{"raised": "<its type>"}``,
    which :func:`read` refuses saying how to keep them; given with the messages
    ``capture_run_messages`` kept, ``(messages, exc)``, it is the run's end (:func:`_raised`)."""
    if isinstance(value, BaseException):
        return {RAISED: type(value).__name__}
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], (list, tuple))
        and isinstance(value[1], Exception)
    ):
        return {"messages": plain_each(value[0], _plain_record), **_raised(value[1])}
    result = getattr(value, "result", None)
    if result is not None and hasattr(result, "all_messages"):
        value = result  # AgentRunResultEvent, a finished AgentRun
    if isinstance(value, (list, tuple)):
        return plain_each(value, _plain_record)
    if _is_message_object(value):
        return [plain_message(value)]
    all_messages = getattr(value, "all_messages", None)
    # An AgentRun with no result yet (``agent.iter()`` stopped by an exception, a usage
    # limit say, or left before its end) holds the messages so far and no output.
    unfinished = result is None and _is_agent_run(value)
    if callable(all_messages) and (hasattr(value, "output") or unfinished):
        usage = getattr(value, "usage", None)
        if callable(usage) and not hasattr(usage, "input_tokens"):
            usage = usage()  # a method in older releases, and an AgentRun's
        return {
            "messages": plain_each(all_messages(), plain_message),
            **(
                _raised(_stopped_by(value))
                if unfinished
                else {"output": plain_output(value.output)}
            ),
            "usage": _plain_usage(usage),
            "new_message_index": _new_message_index(value),
            "run_id": getattr(value, "run_id", None),
            "conversation_id": getattr(value, "conversation_id", None),
        }
    messages = getattr(value, "messages", None)
    if isinstance(messages, list):  # a Conversation
        return {"messages": plain_each(filter(_is_message_object, messages), plain_message)}
    return plain_value(value)


def _new_message_index(run: Any) -> int | None:
    """Where a run's own messages start in its history (``new_messages()`` is the history from
    there): after the ``message_history`` it was given. None when the run cannot tell."""
    try:
        return len(run.all_messages()) - len(run.new_messages())
    except Exception:  # an unfinished run of an older release, another class
        return None


# --- detection -------------------------------------------------------------------------------


def is_message(value: Any) -> bool:
    """A saved message: ``kind`` request or response, and ``parts`` typed by ``part_kind``."""
    if not isinstance(value, Mapping) or value.get("kind") not in KINDS:
        return False
    parts = value.get("parts")
    if not isinstance(parts, list):
        return False
    return all(isinstance(p, Mapping) and isinstance(p.get("part_kind"), str) for p in parts[:4])


def _classify(value: Any) -> int:
    return DISTINCTIVE if is_message(value) else NOT_MINE


_LACKS = "no message of kind request/response with typed parts"


def detect(source: Source) -> Evidence:
    """A list of saved messages (``kind`` + ``parts[].part_kind``: marks only pydantic-ai
    writes), or a document whose ``messages`` holds them."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping):
        messages = document.get("messages")
        if not isinstance(messages, list) or not messages:
            return Evidence.none("no messages list")
        found = sample(messages)
        marks = sum(1 for m in found if is_message(m))
        if not marks:
            return Evidence.none(_LACKS)
        return Evidence(share=marks / len(found), marks=marks + 1)
    return Evidence.of(source.head_values(), _classify, _LACKS)


# --- the builder -------------------------------------------------------------------------------


def args_of(raw: Any) -> Any:
    """Tool arguments as ``BaseToolCallPart.args_as_dict()`` reads them."""
    if not raw:
        return {}
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str):
        try:
            parsed = codec.loads(raw)
        except ValueError:
            return {INVALID_JSON_KEY: raw}
        return parsed if isinstance(parsed, dict) else {INVALID_JSON_KEY: raw}
    return {INVALID_JSON_KEY: stringify(raw)}


def _usage_of(raw: Any) -> tuple[Usage | None, dict[str, Any] | None]:
    """``RequestUsage`` (or the ``Usage`` of releases before 0.7) as a :class:`Usage` (0 is
    pydantic-ai's "not reported") and its ``details``."""
    if not isinstance(raw, Mapping):
        return None, None

    def count(key: str) -> int | None:
        value = as_int(raw.get(key))
        return value if value else None

    # Before 0.7, pydantic-ai's ``Usage`` named them ``request_tokens`` / ``response_tokens``.
    usage = Usage(
        input_tokens=count("input_tokens") or count("request_tokens"),
        output_tokens=count("output_tokens") or count("response_tokens"),
        cache_read_tokens=count("cache_read_tokens"),
        cache_write_tokens=count("cache_write_tokens"),
        reasoning_tokens=count("output_reasoning_tokens"),
    )
    details = raw.get("details")
    # An Anthropic model's one-hour cache writes cost more than the rest: the field where the
    # release has it, else the Anthropic count its ``details`` keep (``extract_usage_details``).
    hour = count("cache_write_1h_tokens")
    if hour is None and isinstance(details, Mapping):
        hour = as_int(details.get("ephemeral_1h_input_tokens")) or None
    if hour is not None and hour <= (usage.cache_write_tokens or 0):
        usage.cache_write_1h_tokens = hour
    return (None if usage == Usage() else usage), (
        dict(details) if isinstance(details, Mapping) and details else None
    )


def _content_item(item: Any) -> tuple[str | None, ImageData | None, str | None]:
    """One item of a multimodal prompt or tool return: (text, image, attachment line)."""
    if isinstance(item, str):
        return item, None, None
    if not isinstance(item, Mapping):
        return stringify(item), None, None
    kind = item.get("kind")
    if kind in ("text-content", "structured-content"):
        content = item.get("content")
        return (content if isinstance(content, str) else stringify(content)), None, None
    if kind == "cache-point":
        return None, None, None
    media = item.get("media_type")
    if kind == "binary" and isinstance(media, str) and media.startswith("image/"):
        data = item.get("data")
        if isinstance(data, str):
            return None, ImageData(media_type=media, data=data), None
    name = item.get("url") or item.get("file_id") or item.get("identifier")
    label = "file" if kind in (None, "binary") else str(kind).replace("-", " ")
    described = " · ".join(str(v) for v in (name, media) if isinstance(v, str) and v)
    return None, None, f"[{label}: {described}]" if described else f"[{label}]"


#: The ``kind`` of each of pydantic-ai's ``MultiModalContent`` types (``ImageUrl``,
#: ``AudioUrl``, ``DocumentUrl``, ``VideoUrl``, ``BinaryContent``, ``UploadedFile`` in
#: ``pydantic_ai/messages.py``).
FILE_KINDS = NameSet(
    {"image-url", "audio-url", "document-url", "video-url", "binary", "uploaded-file"}
)


def content_of(value: Any, *, prompt: bool = False) -> tuple[str | None, list[ImageData], int]:
    """Prompt or tool-return content as text, inline images and how many items were
    attachments. A prompt's list (``prompt``) is a sequence of ``UserContent``, each string a
    text of it (``run_sync(["Compare:", "a", "b"])``, a ``ToolReturn``'s ``content``); a tool
    return's list of strings is the value the tool returned, shown as it is (JSON)."""
    if value is None:
        return None, [], 0
    if isinstance(value, str):
        return value, [], 0
    if not isinstance(value, list):
        # A tool that returns one file (an image, say) leaves it as the return's whole
        # content, not in a list; pydantic-ai reads it as a file all the same
        # (``BaseToolReturnPart._split_content``: ``is_multi_modal_content(self.content)``).
        if not isinstance(value, Mapping) or value.get("kind") not in FILE_KINDS:
            return stringify(value), [], 0
        value = [value]
    elif not prompt and not any(
        isinstance(i, Mapping) and isinstance(i.get("kind"), str) for i in value
    ):
        return stringify(value), [], 0
    texts: list[str] = []
    images: list[ImageData] = []
    attached = 0
    for item in value:
        text, image, line = _content_item(item)
        if text:
            texts.append(text)
        if image is not None:
            images.append(image)
        if line is not None:
            texts.append(line)
            attached += 1
    return ("\n\n".join(texts) if texts else None), images, attached


Note = Callable[[str, Disposition], None]


def _no_note(record_type: str, disposition: Disposition) -> None:
    pass


class PydanticAIBuilder(MessageBuilder):
    """Builds a transcript from pydantic-ai messages (their saved JSON form) fed one at a
    time, static (``read``) or live (:class:`Follower`), through ``transcript.append`` /
    ``update`` so a displayed transcript hears every change (spec L-5)."""

    def __init__(
        self,
        transcript: Transcript,
        source_name: str = "<messages>",
        *,
        live: bool = False,
        note: Note = _no_note,
    ) -> None:
        super().__init__(transcript, source_name, live=live)
        self.note = note
        self.responses = 0
        self._systems: set[str] = set()
        self._builtin: set[str] = set()
        #: The calls the run ended waiting on (:meth:`deferred`), by id.
        self.waiting: set[str] = set()
        #: The ``model_name`` and ``timestamp`` of the last response: the one that produced
        #: the run's output (:meth:`output`).
        self.last_response: tuple[str | None, str | None] = (None, None)
        #: The ``run_id`` of the last response (:meth:`_tool_contents`).
        self._response_run: Any = None
        #: The batch of the last response, and the line of the last message when it is a
        #: request the run stopped assembling (``state='interrupted'``, :func:`_interrupted`).
        self.last_batch: str | None = None
        self.interrupted: int | None = None

    # --- messages ------------------------------------------------------------------------

    def feed(self, message: Mapping[str, Any], line: int) -> None:
        kind = message.get("kind") if isinstance(message, Mapping) else None
        parts = message.get("parts") if isinstance(message, Mapping) else None
        if kind not in KINDS or not isinstance(parts, list):
            record = type_of_record(message)
            if isinstance(message, MalformedLine):
                self.warn(message.reason, line)
            else:
                self.warn(f"not a pydantic-ai message ({record}) skipped", line)
            self.note(record, "warned")
            return
        self.interrupted = None
        if kind == "request":
            if message.get("state") == "interrupted":
                self.interrupted = line
            self.feed_request(message, parts, line)
        else:
            self.feed_response(message, parts, line)

    def feed_request(self, message: Mapping[str, Any], parts: list[Any], line: int) -> None:
        self.note("request", "mapped")
        metadata = self.transcript.metadata
        for key in ("run_id", "conversation_id"):
            value = message.get(key)
            if isinstance(value, str) and value:
                metadata.setdefault(key, value)
        contents = self._tool_contents(message, parts, line)
        for index, part in enumerate(parts):
            call_id = contents.get(index)
            if call_id is None:
                self.request_part(part, line)
            else:
                self.tool_content(call_id, part.get("content"))
                self.note("request/user-prompt", "mapped")
        instructions = message.get("instructions")
        if isinstance(instructions, str) and instructions:
            self.system(instructions)

    def feed_response(self, message: Mapping[str, Any], parts: list[Any], line: int) -> None:
        self.note("response", "mapped")
        self.responses += 1
        self._response_run = message.get("run_id")
        own = message.get("provider_response_id")
        batch = own if isinstance(own, str) and own else f"response-{self.responses}"
        named = own[:80] if isinstance(own, str) and own else self.responses
        stamp = self.stamp(message, f"response {named}", line)
        model = message.get("model_name")
        model = model if isinstance(model, str) and model else None
        if model is not None:
            self.transcript.metadata["model"] = model
        self.last_response = (model, stamp)
        entries: list[Entry] = []
        for part in parts:
            entry = self.response_part(part, batch, stamp, model, line)
            if entry is not None:
                entries.append(entry)
        self.response_meta(message, entries)
        self.last_batch = batch

    def _tool_contents(
        self, message: Mapping[str, Any], parts: list[Any], line: int
    ) -> dict[int, str]:
        """The user-prompt parts of a request that are tools' content, by their index among
        ``parts``, each with the id of the call whose tool gave it.

        A tool that returns ``ToolReturn(content=...)`` has that content sent to the model as a
        ``UserPromptPart``, after every return of the request (``_tool_execution``: the user
        parts by call index, after the returns by call index); nothing in it names its call.
        Such a part follows the returns in a request of the same run as the response whose
        calls they answer. A request of another run (a new prompt beside the results of
        deferred calls, ``_agent_graph``) holds the user's prompt. Fewer such parts than
        returns (some tools gave none) are told by time (:func:`contents_by_time`); when the
        times cannot tell, the parts stay the user's, with a warning."""
        run = message.get("run_id")
        if not isinstance(run, str) or not run or run != self._response_run:
            return {}
        returns: list[tuple[str, Any]] = []
        prompts: list[int] = []
        for index, part in enumerate(parts):
            kind = part.get("part_kind") if isinstance(part, Mapping) else None
            if kind == "tool-return" and isinstance(part.get("tool_call_id"), str):
                returns.append((part["tool_call_id"], part.get("timestamp")))
            elif kind == "user-prompt" and returns:
                prompts.append(index)
        if not prompts:
            return {}
        if len(returns) == 1:
            return dict.fromkeys(prompts, returns[0][0])
        if len(prompts) == len(returns):
            return dict(zip(prompts, (call_id for call_id, _ in returns), strict=True))
        if len(prompts) > len(returns):
            return {}
        told = contents_by_time([parts[index].get("timestamp") for index in prompts], returns)
        if told is None:
            self.warn(
                f"{len(prompts)} user prompt(s) after the returns of {len(returns)} calls may be "
                "tools' ToolReturn.content; their times do not tell whose: shown as the user's",
                line,
            )
            return {}
        return dict(zip(prompts, told, strict=True))

    def tool_content(self, call_id: str, content: Any) -> None:
        """Content a tool gave beside its return (``ToolReturn.content``), which the model
        read as user content: the rest of that call's result, not the user's prompt (its
        text after the return's, its images after the return's)."""
        call = self._calls.get(call_id)
        text, images, _ = content_of(content, prompt=True)
        if call is None or call.result is None:
            self.user_prompt(content, None)
            return
        result = call.result
        joined = "\n\n".join(t for t in (result.text, text) if t)
        self.transcript.update(
            call,
            result=text_result(joined or None, images=[*result.images, *images]),
            meta={**call.meta, "user_content": True},
        )

    def response_meta(self, message: Mapping[str, Any], entries: list[Entry]) -> None:
        """A response's usage, provider and finish reason, on the entries it made."""
        usage, details = _usage_of(message.get("usage"))
        if entries:
            first = entries[0]
            meta: dict[str, Any] = {
                key: value
                for key in ("provider_name", "finish_reason")
                if isinstance(value := message.get(key), str) and value
            }
            if details:
                meta["usage_details"] = details
            if meta:
                self.transcript.update(first, meta={**first.meta, **meta})
            attach_usage(entries, usage, self.transcript)
        if message.get("finish_reason") == "length":
            self._append(notice("reader.cut_off_token_limit", level="warning", subtype="length"))

    # --- request parts -------------------------------------------------------------------

    def request_part(self, part: Any, line: int) -> None:
        kind = part.get("part_kind") if isinstance(part, Mapping) else None
        if not isinstance(part, Mapping) or not isinstance(kind, str):
            self._unknown("request", part, line)
            return
        record = f"request/{kind}"
        if kind == "user-prompt":
            self.user_prompt(part.get("content"), self.stamp(part, f"a {kind} part", line))
        elif kind == "system-prompt":
            content = part.get("content")
            if isinstance(content, str) and content:
                self.system(content)
        elif kind in ("tool-return", "builtin-tool-return"):
            self.tool_return(part, line)
        elif kind == "retry-prompt":
            self.retry_prompt(part, line)
        elif kind == "retry-feedback":
            self.retry_notice(part.get("content"), self.stamp(part, f"a {kind} part", line))
        elif kind == "speech":
            text = part.get("transcript")
            if isinstance(text, str) and text:
                self._append(UserMessage(text=text, meta={"speech": True}))
        elif kind == "compaction":
            self.compaction(part)
        elif kind == "capability":
            self.capability(part, line)
        elif kind in BOOKKEEPING:
            self.note(record, "ignored")
            return
        else:
            self._unknown("request", part, line)
            return
        self.note(record, "mapped")

    def system(self, text: str) -> None:
        if text in self._systems:
            return
        self._systems.add(text)
        metadata = self.transcript.metadata
        previous = metadata.get("system")
        metadata["system"] = f"{previous}\n\n{text}" if previous else text

    def user_prompt(self, content: Any, stamp: str | None) -> None:
        text, images, attached = content_of(content, prompt=True)
        if text or images:
            meta = {"attachments": attached} if attached else {}
            self._append(UserMessage(text=text or "", images=images, timestamp=stamp, meta=meta))

    def tool_return(self, part: Mapping[str, Any], line: int) -> None:
        call_id = part.get("tool_call_id")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            name = part.get("tool_name")
            self.warn(f"tool return for an unknown tool_call_id {call_id!r}", line)
            call = self.start_call(
                {"tool_name": name, "tool_call_id": call_id, "args": None}, None, None, line
            )
            if call is None:
                return
        outcome = part.get("outcome")
        outcome = outcome if isinstance(outcome, str) else "success"  # older files: no field
        status = OUTCOMES.get(outcome, "unknown")
        text, images, _ = content_of(part.get("content"))
        changes: dict[str, Any] = {
            "status": status,
            "result": text_result(text, images=images),
            "ended_at": self.stamp(part, f"the return of call {call.call_id}", line),
        }
        meta = dict(call.meta)
        if outcome != "success":
            meta["outcome"] = outcome
        if outcome == "retried":
            retry = part.get("retry")
            meta["retry"] = dict(retry) if isinstance(retry, Mapping) else True
        if meta != call.meta:
            changes["meta"] = meta
        self.transcript.update(call, **changes)

    def retry_prompt(self, part: Mapping[str, Any], line: int) -> None:
        """The deprecated ``RetryPromptPart``: a retried return of its call when it names a
        tool (as pydantic-ai itself reads it), else feedback on the whole response."""
        if not part.get("tool_name"):
            self.retry_notice(part.get("content"), self.stamp(part, "a retry-prompt part", line))
            return
        self.tool_return({**part, "outcome": "retried", "retry": None}, line)

    def retry_notice(self, content: Any, stamp: str | None = None) -> None:
        """Feedback on the whole response, at the time its part records (``stamp``): the
        framework could not use that response (its output failed validation, an output
        validator asked for a retry), so its text, the entries it ends with, is a rejected
        reply (``meta["rejected"]``), not an answer."""
        for entry in reversed(self.transcript.entries):
            if isinstance(entry, AssistantText):
                self.transcript.update(entry, meta={**entry.meta, "rejected": True})
            elif not isinstance(entry, Thinking):
                break
        text = content if isinstance(content, str) else stringify(content)
        self._append(
            notice(
                "reader.retry", {"said": text}, level="warning", subtype="retry", timestamp=stamp
            )
        )

    def stamp(self, holder: Mapping[str, Any], what: str, line: int) -> str | None:
        """A message's or part's ``timestamp``; one that is no time is left out, said of
        ``what`` holds it (``common.warned_timestamp``)."""
        return warned_timestamp(holder.get("timestamp"), checked_timestamp,
                                lambda reason: self.warn(reason, line), what,
                                name="timestamp")  # fmt: skip

    def capability(self, part: Mapping[str, Any], line: int) -> None:
        """A ``CapabilityPart``: content the model is given mid-conversation in the
        application's voice (``instruction``) or as framed data (``data``), not the user's."""
        text, images, _ = content_of(part.get("content"))
        rendering = part.get("rendering")
        voice = rendering.get("voice") if isinstance(rendering, Mapping) else None
        meta = {"capability_kind": part.get("kind"), "voice": voice}
        shown = text or ("[image]" if images else "")
        stamp = self.stamp(part, "a capability part", line)  # when it was told, as every part's
        self._append(SystemNotice(text=shown, subtype="capability", meta=meta, timestamp=stamp))

    def compaction(self, part: Mapping[str, Any]) -> None:
        summary = part.get("content")
        self._append(CompactionBoundary(summary=summary if isinstance(summary, str) else None))

    # --- response parts ------------------------------------------------------------------

    def response_part(
        self, part: Any, batch: str, stamp: str | None, model: str | None, line: int
    ) -> Entry | None:
        kind = part.get("part_kind") if isinstance(part, Mapping) else None
        if not isinstance(part, Mapping) or not isinstance(kind, str):
            self._unknown("response", part, line)
            return None
        entry: Entry | None = None
        if kind == "text":
            text = part.get("content")
            if isinstance(text, str) and text:
                entry = self._append(AssistantText(text=text, model=model, timestamp=stamp))
        elif kind == "tool-call":
            entry = self.start_call(part, batch, stamp, line)
        elif kind == "thinking":
            entry = self.thinking(part, stamp)
        elif kind == "builtin-tool-call":
            entry = self.start_call(part, batch, stamp, line)
            if entry is not None:
                self._builtin.add(str(part.get("tool_call_id")))
                self.transcript.update(entry, meta={**entry.meta, "builtin": True})
        elif kind == "builtin-tool-return":
            self.tool_return(part, line)
        elif kind == "file":
            _, images, _ = content_of([part.get("content")])
            text, _, _ = content_of([{**(part.get("content") or {}), "data": None}])
            # A file the model returned: an image is the text's own, any other file a line
            # naming it.
            shown = text or ("" if images else "[file]")
            entry = self._append(
                AssistantText(text=shown, model=model, timestamp=stamp, images=images)
            )
        elif kind == "speech":
            text = part.get("transcript")
            if isinstance(text, str) and text:
                entry = self._append(
                    AssistantText(text=text, model=model, timestamp=stamp, meta={"speech": True})
                )
        elif kind == "compaction":
            self.compaction(part)
        else:
            self._unknown("response", part, line)
            return None
        self.note(f"response/{kind}", "mapped")
        return entry

    def thinking(self, part: Mapping[str, Any], stamp: str | None) -> Entry | None:
        text = part.get("content")
        signature = part.get("signature")
        if isinstance(text, str) and text:
            return self._append(Thinking(text=text, timestamp=stamp))
        if isinstance(signature, str) and signature:
            return self._append(Thinking(form="encrypted", data=signature, timestamp=stamp))
        return None

    def start_call(
        self, part: Mapping[str, Any], batch: str | None, stamp: str | None, line: int
    ) -> ToolCall | None:
        call_id = part.get("tool_call_id")
        name = part.get("tool_name")
        name = name if isinstance(name, str) else ""
        if not isinstance(call_id, str) or not call_id:
            self.warn(f"tool call {name!r} without a tool_call_id", line)
            call_id = f"call@{line}"
        previous = self._calls.get(call_id)
        if previous is not None:
            self.warn(f"tool call id {call_id!r} used twice", line)
        args = args_of(part.get("args"))
        call = ToolCall(
            call_id=call_id,
            name=name,
            args=args,
            description=describe_args(name, args),
            status=self.open_status,
            batch_id=batch,
            started_at=stamp,
            timestamp=stamp,
        )
        self._calls[call_id] = call
        self._append(call)
        return call

    # --- helpers -------------------------------------------------------------------------

    def _append(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def _unknown(self, where: str, part: Any, line: int) -> None:
        if isinstance(part, MalformedLine):  # a part pydantic-ai's serializer failed on
            self.warn(f"{where} part: {part.reason}", line)
            return
        kind = part.get("part_kind") if isinstance(part, Mapping) else None
        name = kind if isinstance(kind, str) else type_of_record(part)
        self.warn(f"{where} part of unknown kind {name!r} skipped", line)
        self.note(f"{where}/{name}", "warned")

    # --- the run's output ----------------------------------------------------------------

    def output(self, output: Any) -> None:
        """An ``AgentRunResult``'s output: a ``DeferredToolRequests`` makes its calls wait
        (:meth:`deferred`); any other structured output (an output tool's, say, whose call
        returns only "Final result processed.") is the turn's answer, as of the last response."""
        if isinstance(output, Mapping) and output.keys() >= _DEFERRED_KEYS:
            self.deferred(output)  # calls left waiting (or none this transcript holds)
            return
        model, stamp = self.last_response
        structured_answer(self.transcript, output, model=model, timestamp=stamp)

    # --- deferred calls ------------------------------------------------------------------

    def deferred(self, requests: Any) -> bool:
        """A ``DeferredToolRequests`` (as JSON): the calls the run ended waiting on, each
        waiting for an approval (``approvals``) or for an answer or the result of a run
        outside the agent (``calls``). Each is ``confirming`` or ``pending`` and has its
        :class:`PendingAction`, once. False (and nothing shown) when ``requests`` is no such
        thing: a run's output of another type, or calls this transcript does not hold."""
        if not isinstance(requests, Mapping):
            return False
        approvals, others = requests.get("approvals"), requests.get("calls")
        if type(approvals) is not list or type(others) is not list or not approvals + others:
            return False
        # ``_kinds`` is how a DeferredToolRequests keeps which of its ``calls`` are questions
        # (serialized only when there are any); every other one is ``external``.
        kinds = requests.get("_kinds")
        kinds = kinds if isinstance(kinds, Mapping) else {}
        metadata = requests.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        found: list[tuple[ToolCall, str]] = []
        for part, approval in [(p, True) for p in approvals] + [(p, False) for p in others]:
            call_id = part.get("tool_call_id") if isinstance(part, Mapping) else None
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            if call is None:
                return False
            kind = "approval" if approval else kinds.get(call.call_id)
            found.append((call, kind if kind in DEFERRED else "external"))
        for call, kind in found:
            if call.call_id in self.waiting or call.status not in UNSETTLED:
                continue  # shown already, or answered since (a handler's results)
            status, action = DEFERRED[kind]
            self.waiting.add(call.call_id)
            meta: dict[str, Any] = {"deferred": kind}
            extra = metadata.get(call.call_id)
            if extra:
                meta["metadata"] = plain_value(extra)
            text = _waiting_text(call, kind)
            self._append(
                self.wait_on_user(
                    call, action, text, status=status, meta=meta, call_meta={"deferred": kind}
                )
            )
        return True


#: The error ``ToolManager._check_max_retries`` (``pydantic_ai/tool_manager.py``) raises when
#: a tool asks for one retry more than its ``max_retries``, as the followed stream's error row
#: (``<type>: <message>``) shows it.
_RETRIES_EXCEEDED = re.compile(
    r"UnexpectedModelBehavior: (?P<reason>Tool (?P<name>'[^']*'|\"[^\"]*\") exceeded max "
    r"retries count of (?P<count>\d+))"
)


def contents_by_time(made: list[Any], returns: list[tuple[str, Any]]) -> list[str] | None:
    """The calls whose tools gave the ``ToolReturn.content`` parts made at ``made`` (their
    timestamps, in the request's order), among ``returns`` (each call's id and its return's
    timestamp, in the request's order); None when the times cannot tell.

    pydantic-ai makes a tool's return part when the tool finishes and its content part as that
    result is handed on, so a content part comes after its call's return and before the
    returns of the calls that finish later: its call is the latest to return before it. The
    parts keep call order, so each content's call comes after the one before's. Calls that
    finish in one step of the event loop (instant async tools) are all handed on after their
    returns: a content of such a call reads as the last one's, which nothing recorded can
    correct (the live events name the call: :class:`Follower`).

    >>> at = "2026-01-01T00:00:0{}".format
    >>> contents_by_time([at(3)], [("a", at(1)), ("b", at(2)), ("c", at(4))])
    ['b']
    >>> contents_by_time([at(5), at(6)], [("a", at(2)), ("b", at(3)), ("c", at(4))]) is None
    True
    """
    told: list[str] = []
    first = 0  # the first return the next content's call can be
    for stamp in made:
        moment = utc(stamp)
        latest: tuple[int, datetime] | None = None
        for position in range(first, len(returns)):
            returned = utc(returns[position][1])
            if moment is None or returned is None:
                return None
            if returned <= moment and (latest is None or returned >= latest[1]):
                latest = (position, returned)
        if latest is None:
            return None
        told.append(returns[latest[0]][0])
        first = latest[0] + 1
    return told


def _waiting_text(call: ToolCall, kind: str) -> str:
    """What a deferred call waits for, in the words of the pending action."""
    if kind == "approval":
        return approval_text(call.name)
    name = call.name or "tool"
    if kind == "question":  # what is asked: its one text argument (AskUser's question)
        args = call.args if isinstance(call.args, Mapping) else {}
        texts = [value for value in args.values() if isinstance(value, str) and value]
        asked = call.description or (texts[0] if len(texts) == 1 else None)
        return f"{name}: {asked}" if asked else f"Answer {name}"
    return f"Result of {name}, run outside the agent"


# --- reading ---------------------------------------------------------------------------------


def read(source: Source) -> Transcript:
    """The messages of ``source`` (a message list, JSON lines of messages, or a document whose
    ``messages`` holds them), every message and part accounted for."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = PydanticAIBuilder(transcript, source.name, note=source.note)
    document = source.document if source.is_document else None
    if isinstance(document, Mapping):
        messages = document.get("messages")
        if not isinstance(messages, list) and isinstance(document.get(RAISED), str):
            raise TranscriptFormatError(source.name, [NAME], None, _no_messages(document[RAISED]))
        if not isinstance(messages, list):
            raise TranscriptFormatError(source.name, [NAME], None, "no messages list")
        start = as_int(document.get("new_message_index")) or 0
        history: History | None = None
        for line, message in enumerate(messages, start=1):
            if line == start + 1:
                history = spent(builder)
            builder.feed(message, line)
        for key, value in document.items():
            if key != "messages":
                _top_level(source, builder, key, value)
        # A load's call with no return is unknown, where a followed one was still running.
        _retries_exceeded(transcript, builder._calls.values(), ("unknown",))
        found = document.get("raised_in")
        if isinstance(found, list) and all(isinstance(i, str) for i in found):
            tool_raised(builder, found, ("unknown",))
        delegated_usage(transcript, builder.responses, history)
    else:
        for line, record in source.records():
            builder.feed(record, line)
    if not (isinstance(document, Mapping) and document.get("error")):
        _interrupted(builder)
    if not transcript.entries and builder.responses == 0 and not transcript.metadata.get("system"):
        raise TranscriptFormatError(source.name, [NAME], None, "no pydantic-ai messages")
    return transcript


def _no_messages(raised: str) -> str:
    """Why an exception a run raised is no transcript, and how to keep the run's messages:
    ``capture_run_messages`` collects them as the run goes, even when it raises."""
    return (
        f"a {raised[:100]} exception holds no messages of the run; to keep them, run the "
        "agent inside `with capture_run_messages() as messages:` (from pydantic_ai) and, "
        "where the exception is caught, turnfold.load(messages) "
        "(turnfold.load((messages, exc)) shows the exception too)"
    )


def run_metadata(transcript: Transcript, output: Any, usage: Any) -> None:
    """An ``AgentRunResult``'s output and run usage (``RunUsage``) in metadata."""
    if output is not None:
        transcript.metadata["final_output"] = output
    if isinstance(usage, Mapping):
        totals = {k: v for k, v in usage.items() if v not in (0, None, {})}
        if totals:
            transcript.metadata["usage"] = totals


#: What the messages before a run's own (the ``message_history`` it was given) spent: the
#: tokens of their responses, and how many responses they are (:func:`spent`).
History = tuple[Tokens, int]


def spent(builder: PydanticAIBuilder) -> History:
    """The tokens and number of the responses read so far (:data:`History`)."""
    return count_tokens(builder.transcript.entries), builder.responses


def delegated_usage(transcript: Transcript, responses: int, history: History | None) -> None:
    """The tokens of agents a tool ran with ``usage=ctx.usage`` (agent delegation), apart
    from the run's own (spec U-1); and those of the ``message_history`` the run was given
    (``history``: what its messages spent, :func:`spent`), which its ``RunUsage`` does not
    count while its responses are shown: ``metadata["usage"]`` counts them too, each response
    once, as a load of the saved messages does, and the ``RunUsage`` stays in
    ``metadata["run_usage"]``.

    Such an agent adds its requests and tokens to the run's ``RunUsage``, while its messages
    are in no history of the run: a run that counts more ``requests`` than its history has
    responses spent the difference in delegated agents. Which call ran which agent, and on
    which model, is not recorded, so their total is ``metadata["subagent_usage"]``, under no
    call; ``metadata["usage"]`` becomes the run's own responses' and the ``RunUsage`` stays
    in ``metadata["run_usage"]``. An agent run without ``usage=ctx.usage`` is counted nowhere
    in the run (pydantic-ai records none of it)."""
    meta = transcript.metadata
    run = meta.get("usage")
    if not isinstance(run, Mapping):
        return
    before, earlier = history if history is not None else ({}, 0)
    requests = as_int(run.get("requests"))
    shown = count_tokens(transcript.entries)
    if requests is not None and requests > responses - earlier:
        own = {name: shown.get(name, 0) - before.get(name, 0) for name in shown}
        beyond = {name: value - own.get(name, 0) for name, value in counts_of(run).items()}
        if any(beyond.values()) and all(value >= 0 for value in beyond.values()):
            meta["run_usage"] = dict(run)
            meta["usage"] = {**shown, "requests": responses}
            meta["subagent_usage"] = beyond
            return
    if earlier:
        meta["run_usage"] = dict(run)
        totals = counts_of(run)
        add_into(totals, before)
        if requests is not None:
            totals["requests"] = requests + earlier
        meta["usage"] = totals


def _top_level(source: Source, builder: PydanticAIBuilder, key: str, value: Any) -> None:
    transcript = builder.transcript
    if key == "output":
        run_metadata(transcript, value, None)
        builder.output(value)
    elif key == "usage":
        run_metadata(transcript, None, value)
    elif key in ("run_id", "conversation_id"):
        if isinstance(value, str) and value:
            transcript.metadata[key] = value
    elif key == "new_message_index":
        pass  # read with the messages (:func:`read`): the history before it is the run's usage's
    elif key == "error":
        if isinstance(value, str) and value:
            transcript.append(AssistantError(message=value))
    elif key == "raised_in":
        pass  # read after the error (:func:`read`): the call it names raised it
    elif key == "metadata":
        if value:
            transcript.metadata["run_metadata"] = value
    elif key in _IGNORED_KEYS:
        source.ignored(key)
        return
    else:
        source.ignored("other key")
        return
    source.mapped(key)


# --- live (spec A-2) -----------------------------------------------------------------------

#: Event kinds that add nothing to the transcript (``event_kind`` of pydantic-ai's events).
_QUIET_EVENTS = NameSet(
    {
        "final_result",
        "tool_availability_delta",
        "capability_load_delta",
        "model_settings_delta",
        "custom",
        # A compaction announced: its CompactionEndEvent shows it once it is done (none
        # follows one cancelled or failed, and the history then holds no compaction).
        "compaction_start",
        "capability",
        # A handler's answers to deferred calls: each answered call's own
        # FunctionToolResultEvent follows and settles it (``DeferredToolResultsEvent``).
        "deferred_tool_results",
    }
)


class Follower:
    """Follows ``agent.iter()`` nodes or ``run_stream_events()`` events into ``transcript``.

    Nodes hand over whole messages, which go to the same builder :func:`read` uses, so the
    followed transcript is the loaded one. Stream events build the response part by part
    (each event's work is proportional to what it carries); the closing
    ``AgentRunResultEvent`` adds what only the messages record (usage, model, timestamps).
    """

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.builder = PydanticAIBuilder(transcript, "<follow>", live=True)
        # The streamed response: its entries by part index, and the raw arguments so far.
        self._parts: dict[int, Entry] = {}
        self._args: dict[int, str] = {}
        #: The indexes of the streamed response's parts that have ended.
        self._ended: set[int] = set()
        self._streaming = False
        #: The entries each streamed response made, in order (for the closing result).
        self._streamed: list[list[Entry]] = []
        self._finished = False
        self._handle: Any = None
        #: The run handle given to :meth:`begin`, kept for the run's last request (see
        #: :meth:`_trailing_requests`), and the messages fed, by identity.
        self._run: Any = None
        self._fed: set[int] = set()
        #: The ``DeferredToolRequests`` of each ``DeferredToolRequestsEvent`` (as JSON): the
        #: calls still waiting when the run ends are shown waiting, as a load shows them.
        self._deferred: list[Any] = []
        #: What the ``message_history`` the run was given spent (:func:`spent`), read whole
        #: from the run handle before its own messages (:meth:`_opening`).
        self._history: History | None = None
        #: The ``run_id`` of the last response a node or the run handle brought: the followed
        #: run's, once one of its responses came (:meth:`_message`).
        self._run_id: Any = None

    def begin(self, run: Any) -> None:
        """The handle whose events are followed (``run_stream_events()``'s ``AgentRunEvents``):
        its history, read once at the first event, holds the prompt the events lack."""
        self._handle = self._run = run

    def feed(self, event: Any) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            self._opening(handle)
        name = type(event).__name__
        if name == "ModelRequestNode":
            self._message(event.request)
        elif name == "CallToolsNode":
            self._message(event.model_response)
        elif name in ("ModelRequest", "ModelResponse"):
            self._message(event)
        elif name == "End":
            self._trailing_requests()
            data = getattr(event, "data", None)
            self._output(getattr(data, "output", None))
        elif name == "UserPromptNode":
            pass  # its prompt comes again in the first ModelRequestNode's request
        else:
            self._event(event)

    def _opening(self, handle: Any) -> None:
        """What the run handle's history holds before the first event: the
        ``message_history`` the run was given, whole, as a load of the run shows it (no event
        carries it), then the run's requests before its first response (system prompt, user
        prompt); a handle that cannot tell (not started, another agent class) adds nothing."""
        try:
            messages = handle.all_messages()
        except Exception:  # the handle's own refusal: the events are still followed
            return
        start = _new_message_index(handle) or 0
        for message in messages[:start]:
            if _is_message_object(message):
                self._message(message)
        self._history = spent(self.builder)
        self._run_id = None  # the history's runs are not the followed one
        for message in messages[start:]:
            if not _is_message_object(message) or message.kind != "request":
                break
            self._message(message)

    def _trailing_requests(self) -> None:
        """The requests the run's history holds after the last node's message: a run that
        ends on deferred calls records the returns of the calls that did run beside them in a
        last request, which no node carries (``End`` follows the ``CallToolsNode``). Read from
        the run handle, when one was given, after the last message a node fed."""
        run = self._run
        if run is None or not self._fed:
            return
        try:
            messages = run.all_messages()
        except Exception:  # the handle's own refusal: the nodes are still followed
            return
        trailing: list[Any] = []
        for message in reversed(messages):
            if id(message) in self._fed:
                break
            if not _is_message_object(message) or message.kind != "request":
                return  # not only requests after it: its place in the history is unknown
            trailing.append(message)
        else:
            return  # no fed message in the history: where the nodes stand is not known
        for message in reversed(trailing):
            self._message(message)

    def _message(self, message: Any) -> None:
        self._fed.add(id(message))
        self._streaming = False
        plain = plain_message(message)
        if plain["kind"] == "response":
            self._run_id = plain["run_id"]
        elif plain["run_id"] is None:
            # A node's request is not sent yet, so has no run id (pydantic-ai sets it as it
            # sends it): it is of the run whose response a node brought before it, if any.
            plain["run_id"] = self._run_id
        self.builder.feed(plain, self.builder.responses + 1)

    def _output(self, output: Any) -> None:
        if output is not None:
            value = self.transcript.metadata["final_output"] = plain_output(output)
            self.builder.output(value)

    # --- stream events -------------------------------------------------------------------

    def _event(self, event: Any) -> None:
        kind = getattr(event, "event_kind", None)
        if kind == "part_start":
            self._part_start(event.index, event.part)
        elif kind == "part_delta":
            self._part_delta(event.index, event.delta)
        elif kind == "part_end":
            self._part_end(event.index, event.part)
        elif kind in ("function_tool_call", "output_tool_call"):
            self._streaming = False
            call = self._call_of(event.part)
            if call.status == "pending":
                self.transcript.update(call, status="executing")
        elif kind in ("function_tool_result", "output_tool_result"):
            self._streaming = False
            self.builder.tool_return(plain_part(event.part, True), 0)
            content = getattr(event, "content", None)
            if content is not None:  # the tool's ToolReturn.content: the rest of its result
                prompt = plain_part(_prompt_part(content), True)
                self.builder.tool_content(event.part.tool_call_id, prompt.get("content"))
        elif kind == "deferred_tool_requests":
            # The calls wait from here (each had its FunctionToolCallEvent): for an approval,
            # an answer or an outside result. A handler may still answer them in the run
            # (``HandleDeferredToolCalls``), so what is left waiting is shown at the end.
            self._streaming = False
            requests = plain_value(event.requests)
            self._deferred.append(requests)
            self._wait(requests)
        elif kind == "enqueued_messages":
            self._enqueued(event)
        elif kind == "model_response_rejected":
            self._rejected(event.reason)
        elif kind == "compaction_end":
            self._streaming = False
            self.builder.compaction(plain_part(event.record.part, True))
        elif kind == "agent_run_result":
            self._result(event.result)
        elif kind in _QUIET_EVENTS:
            pass
        else:
            self.builder.warn_once(f"event {type(event).__name__} not shown")

    def _enqueued(self, event: Any) -> None:
        """What ``ctx.enqueue`` delivered into the history: parts added to a request (after a
        call's return, before the prompt), or requests of their own."""
        parts = list(getattr(event, "parts", ()) or ())
        if not parts:
            for message in getattr(event, "messages", ()) or ():
                if getattr(message, "kind", None) == "request":
                    parts.extend(message.parts)
        for part in parts:
            self._streaming = False
            self.builder.request_part(plain_part(part, True), 0)

    def _rejected(self, reason: Any) -> None:
        """The response just streamed was rejected: the next one is another response, and
        the feedback the model is sent (a ``RetryFeedbackPart``) shows as a load shows it; a
        response a capability replaced says so."""
        self._streaming = False
        if getattr(reason, "part_kind", None) == "retry-feedback":
            self.builder.request_part(plain_part(reason, True), 0)
        else:
            said = {"kind": str(getattr(reason, "kind", None))}
            self.builder._append(notice("reader.replaced", said, level="warning", subtype="retry"))

    def _response(self) -> list[Entry]:
        """The entries of the response being streamed (a new one after tool events)."""
        if not self._streaming:
            self._streaming = True
            self.builder.responses += 1
            self._parts, self._args, self._ended = {}, {}, set()
            self._streamed.append([])
        return self._streamed[-1]

    def _batch(self) -> str:
        return f"response-{self.builder.responses}"

    def _part_start(self, index: int, part: Any) -> None:
        if index in self._ended:
            # A part ended is not started again within its response: before 2.78 (no
            # ModelResponseRejectedEvent) this is the response that replaces a rejected one.
            self._streaming = False
        entries = self._response()
        kind = getattr(part, "part_kind", None)
        known = self._parts.get(index)
        if kind == "text":
            if isinstance(known, AssistantText):
                self.transcript.update(known, text=part.content)
                return
            entry: Entry = self.transcript.append(AssistantText(text=part.content))
        elif kind == "thinking":
            if isinstance(known, Thinking):
                self.transcript.update(known, text=part.content)
                return
            entry = self.transcript.append(Thinking(text=part.content, streaming=True))
        elif kind == "tool-call":
            args = part.args
            self._args[index] = args if isinstance(args, str) else ""
            if isinstance(known, ToolCall):
                return
            name = part.tool_name
            entry = ToolCall(
                call_id=part.tool_call_id,
                name=name,
                args=args_of(args) if isinstance(args, dict) else None,
                status="pending",
                batch_id=self._batch(),
            )
            self.builder._calls[entry.call_id] = entry
            self.transcript.append(entry)
        else:
            return  # the other parts are shown whole, at their end
        self._parts[index] = entry
        entries.append(entry)

    def _part_delta(self, index: int, delta: Any) -> None:
        entry = self._parts.get(index)
        kind = getattr(delta, "part_delta_kind", None)
        if (kind == "text" and isinstance(entry, AssistantText)) or (
            kind == "thinking" and isinstance(entry, Thinking)
        ):
            self.transcript.update(entry, text=entry.text + (delta.content_delta or ""))
        elif kind == "tool_call" and isinstance(entry, ToolCall):
            piece = getattr(delta, "args_delta", None)
            if isinstance(piece, str):
                self._args[index] = self._args.get(index, "") + piece
            name = getattr(delta, "tool_name_delta", None)
            if isinstance(name, str) and name:
                self.transcript.update(entry, name=entry.name + name)

    def _part_end(self, index: int, part: Any) -> None:
        entries = self._response()
        self._ended.add(index)
        entry = self._parts.get(index)
        kind = getattr(part, "part_kind", None)
        if kind == "text" and isinstance(entry, AssistantText):
            self.transcript.update(entry, text=part.content)
        elif kind == "thinking" and isinstance(entry, Thinking):
            self.transcript.update(entry, text=part.content, streaming=False)
        elif kind == "tool-call" and isinstance(entry, ToolCall):
            args = args_of(part.args)
            self.transcript.update(
                entry,
                name=part.tool_name,
                args=args,
                description=describe_args(part.tool_name, args),
            )
        else:
            made = self.builder.response_part(plain_part(part, False), self._batch(), None, None, 0)
            if made is not None:
                entries.append(made)

    def _call_of(self, part: Any) -> ToolCall:
        call = self.builder._calls.get(part.tool_call_id)
        if call is None:  # an event handler that saw no part events for it
            made = self.builder.start_call(plain_part(part, False), self._batch(), None, 0)
            assert made is not None
            call = made
        return call

    def _result(self, result: Any) -> None:
        """The run's result: what the events lack, from its messages (once, at the end)."""
        self._finished = True
        document = plain(result)
        if not isinstance(document, Mapping):
            return
        streamed = iter(self._streamed)
        # The history's responses were read whole (:meth:`_opening`): the streamed ones follow.
        history = self._history[1] if self._history is not None else 0
        for message in as_list(document.get("messages")):
            if not isinstance(message, Mapping):
                # Which response it was is not known: the ones after it would take another's
                # usage and model, so they keep what their events gave.
                reason = message.reason if isinstance(message, MalformedLine) else "not a message"
                self.builder.warn(f"the run's result: {reason}", None)
                break
            if message.get("kind") == "request":
                for part in as_list(message.get("parts")):
                    if isinstance(part, Mapping) and part.get("part_kind") == "system-prompt":
                        self.builder.system(part.get("content") or "")
                if message.get("instructions"):
                    self.builder.system(message["instructions"])
                continue
            if history > 0:
                history -= 1
                continue
            entries = next(streamed, None)
            if entries is None:
                break
            self._settle_response(message, entries)
        run_metadata(self.transcript, document.get("output"), document.get("usage"))
        delegated_usage(self.transcript, self.builder.responses, self._history)
        self.builder.output(document.get("output"))

    def _settle_response(self, message: Mapping[str, Any], entries: list[Entry]) -> None:
        stamp = checked_timestamp(message.get("timestamp"))
        model = message.get("model_name") if isinstance(message.get("model_name"), str) else None
        if model:
            self.transcript.metadata["model"] = model
        self.builder.last_response = (model, stamp)
        for entry in entries:
            changes: dict[str, Any] = {"timestamp": stamp}
            if isinstance(entry, ToolCall):
                changes["started_at"] = stamp
            elif isinstance(entry, AssistantText):
                changes["model"] = model
            self.transcript.update(entry, **changes)
        self.builder.response_meta(message, entries)

    def _wait(self, requests: Any) -> None:
        """The deferred calls of ``requests`` wait (``confirming`` or ``pending``) from now."""
        if not isinstance(requests, Mapping):
            return
        kinds = requests.get("_kinds")
        kinds = kinds if isinstance(kinds, Mapping) else {}
        for key, approval in (("approvals", True), ("calls", False)):
            for part in as_list(requests.get(key)):
                call_id = part.get("tool_call_id") if isinstance(part, Mapping) else None
                call = self.builder._calls.get(call_id) if isinstance(call_id, str) else None
                if call is None or call.status not in ("pending", "executing"):
                    continue
                kind = "approval" if approval else kinds.get(call.call_id)
                status = DEFERRED[kind if kind in DEFERRED else "external"][0]
                self.transcript.update(call, status=status)

    def close(self) -> None:
        for requests in self._deferred:  # no closing result said it: the events did
            self.builder.deferred(requests)
        self._interrupted_request()
        _retries_exceeded(self.transcript, self.builder._calls.values(), ("pending", "executing"))
        exc = _run_exception(self._run)
        tool_raised(self.builder, None if exc is None else raised_in(exc), ("pending", "executing"))
        self.builder.settle_open(self.builder._calls.values(), waiting=self.builder.waiting)

    def _interrupted_request(self) -> None:
        """The returns a run that stopped while its tools ran collected (the request of its
        history it stopped assembling, ``state='interrupted'``), read from the run handle
        when one was given: no node carries that request, and no event the return of a tool
        that finished as another raised (``parallel_ordered_events``), which a load of the
        run shows all the same."""
        run = self._run
        if run is None:
            return
        try:
            messages = run.all_messages()
        except Exception:  # the handle's own refusal: what was followed stands
            return
        if not messages:
            return
        last = messages[-1]
        if (
            _is_message_object(last)
            and last.kind == "request"
            and getattr(last, "state", None) == "interrupted"
            and id(last) not in self._fed
        ):
            self._message(last)


def _run_exception(run: Any) -> Exception | None:
    """The exception that ended a followed run, from its handle: an ``AgentRun``'s (its
    ``next_node`` raises it again), or the background task of ``run_stream_events()``'s
    ``AgentRunEvents``, which raised it out of the stream; None while the run goes on, when it
    was cancelled or ended well, and without a handle."""
    if _is_agent_run(run):
        return _stopped_by(run)
    import asyncio  # here: loading a saved run imports none of it (test_startup)

    task = getattr(run, "_task", None)
    if not isinstance(task, asyncio.Future) or not task.done() or task.cancelled():
        return None
    exc = task.exception()
    return exc if isinstance(exc, Exception) else None


def _retries_exceeded(transcript: Transcript, calls: Any, open_statuses: tuple[str, ...]) -> None:
    """A run that ended raising ``UnexpectedModelBehavior`` because a tool used up its
    retries: that tool's last call (the one of ``calls`` still in ``open_statuses``) failed.
    The history has no return for it (pydantic-ai raises instead of recording one), so only
    the error says so: the followed stream ended in it, or the stopped ``AgentRun`` a load
    read (its row is the transcript's last), naming the tool."""
    entries = transcript.entries
    last = entries[-1] if entries else None
    match = _RETRIES_EXCEEDED.match(last.message) if isinstance(last, AssistantError) else None
    if match is None:
        return
    name = match["name"][1:-1]  # the tool's name as repr() writes it
    open_calls = [call for call in calls if call.name == name and call.status in open_statuses]
    if len(open_calls) != 1:
        return  # which of its calls raised is not said
    call = open_calls[0]
    transcript.update(
        call,
        status="error",
        result=text_result(match["reason"]),
        meta={**call.meta, "outcome": "retried", "retries_exceeded": int(match["count"])},
    )


def tool_raised(
    builder: PydanticAIBuilder, found: Sequence[str] | None, open_statuses: tuple[str, ...]
) -> None:
    """A run that ended raising an exception out of a tool (not ``ToolFailed`` or
    ``ModelRetry``, which pydantic-ai records as the call's return): the history records no
    return for that call, and the run's error (the transcript's last entry) names no call.

    ``found`` is the calls the exception left, innermost first (:func:`raised_in`): the first
    of them still in ``open_statuses`` raised it. Without the exception (``found`` None: a
    followed stream that leads back to no run), the calls that started (``executing``: their
    ``FunctionToolCallEvent`` came) and did not return are the ones that can have raised it;
    with the exception, a call its traceback does not name did not. One such call is
    ``error`` with the exception's text; of several, which raised is not told: they stay
    open (``unknown`` once settled, spec L-3). Either way the run's error says which tool or
    tools raised it (the ADK reader's words, ``reader.run_ended_raised``)."""
    transcript = builder.transcript
    last = transcript.entries[-1] if transcript.entries else None
    if not isinstance(last, AssistantError) or last.wording is not None:
        return  # the run did not end raising, or its error says so already
    if _RETRIES_EXCEEDED.match(last.message):
        return  # pydantic-ai's own error, for the call :func:`_retries_exceeded` tells
    if found is not None:
        opened = (builder._calls.get(call_id) for call_id in found)
        raising = next((c for c in opened if c is not None and c.status in open_statuses), None)
        suspects = [raising] if raising is not None else []
    else:
        suspects = [c for c in builder._calls.values() if c.status == "executing"]
    if not suspects:
        return
    if len(suspects) == 1:
        transcript.update(suspects[0], status="error", result=text_result(last.message))
    ended = _ended_raising(suspects, last.message)
    transcript.update(last, message=ended.message, wording=ended.wording)


def _ended_raising(calls: list[ToolCall], said: str) -> AssistantError:
    """The run's error, naming the tool or tools of ``calls`` one of which raised ``said``
    (a call with no name is "a tool": a name is never made up)."""
    names = list(dict.fromkeys(call.name for call in calls if call.name))
    unnamed = not all(call.name for call in calls)
    if not names:
        return failure("reader.run_ended_raised.a_tool", {"said": said})
    if len(names) == 1 and not unnamed:
        return failure("reader.run_ended_raised", {"who": names[0], "said": said})
    # {names} lists them as the view's language does (``with_words``), {last} ends the list.
    listed = {f"names.{n}": v for n, v in enumerate(names if unnamed else names[:-1])}
    key = "reader.run_ended_raised.either_a_tool" if unnamed else "reader.run_ended_raised.either"
    return failure(key, {**listed, "last": names[-1], "said": said})


def _interrupted(builder: PydanticAIBuilder) -> None:
    """Messages that end in a request the run stopped assembling (``state='interrupted'``:
    ``capture_run_messages()`` of a run that raised, or that was cancelled, while its tools
    ran) without the exception: the calls of the last response with no return are left
    ``unknown`` (which raised, if one did, only the exception tells), and a warning says so."""
    if builder.interrupted is None:
        return
    left = [
        call
        for call in builder._calls.values()
        if call.batch_id == builder.last_batch and call.status == "unknown"
    ]
    if not left:
        return
    named = ", ".join(f"{call.name} ({call.call_id})" for call in left[:10])
    builder.warn(
        f"the run stopped while its tools ran (its last request is interrupted): {named} "
        "returned nothing; the exception or cancel that stopped it is not in the messages: "
        "turnfold.load((messages, exc)) shows it, and which call raised it",
        builder.interrupted,
    )


def _prompt_part(content: Any) -> Any:
    from pydantic_ai.messages import UserPromptPart

    return UserPromptPart(content)


RECORDS = Records(
    mapped={
        "request": "a ModelRequest: its parts in order; instructions → metadata['system']; "
        "the last one interrupted (the run stopped while its tools ran) with no error known: a "
        "warning naming the calls of the last response left without a return",
        "response": "a ModelResponse: its parts in order; usage on its last text, "
        "model_name, timestamp, provider_name and finish_reason",
        "request/system-prompt": "metadata['system'] (each distinct text once)",
        "request/user-prompt": "UserMessage (text, images; other files as attachment lines); "
        "after the returns of a request of the response's run, a tool's ToolReturn.content: the "
        "rest of its call's result (meta['user_content'])",
        "request/tool-return": "settles its call by outcome: success → success, failed or "
        "retried → error (meta['retry']), denied or interrupted → cancelled",
        "request/retry-prompt": "deprecated: a retried return of the call it names (error, "
        "its text the result), else a warning SystemNotice",
        "request/retry-feedback": "a warning SystemNotice (the response was not usable); that "
        "response's text rejected (meta['rejected'])",
        "request/speech": "UserMessage of its transcript",
        "request/compaction": "CompactionBoundary with its summary",
        "request/capability": "an info SystemNotice (subtype capability) of its content, "
        "meta: its kind and voice",
        "response/text": "AssistantText with the response's model_name",
        "response/thinking": "Thinking (encrypted when only a signature is kept)",
        "response/tool-call": "ToolCall (args as args_as_dict() reads them), one batch per "
        "response",
        "response/builtin-tool-call": "ToolCall of a provider's own tool (meta['builtin'])",
        "response/builtin-tool-return": "settles its builtin call, as tool-return",
        "response/file": "AssistantText: an attachment line of the file",
        "response/speech": "AssistantText of its transcript",
        "response/compaction": "CompactionBoundary with its summary",
        "output": "an AgentRunResult's output: metadata['final_output']; a "
        "DeferredToolRequests makes its calls wait (confirming / pending), a PendingAction each; "
        "any other non-string output (an output tool's) is the answer: an AssistantText of it "
        "as fenced JSON (meta['structured_output']) unless the last text states it",
        "usage": "an AgentRunResult's RunUsage: metadata['usage']",
        "error": "the exception that stopped an unfinished AgentRun (agent.iter()), or given "
        "with the run's messages ((messages, exc)): an AssistantError of it, as a followed run "
        "that raised ends",
        "raised_in": "the tool calls the exception's traceback passes through, innermost first: "
        "the first the run left without a return raised it (error, the exception's text its "
        "result), and the AssistantError names its tool",
        "new_message_index": "where the run's own messages start: the responses before it (its "
        "message_history) are counted in metadata['usage'] beside the RunUsage, which counts only "
        "the run's (kept in metadata['run_usage'])",
        "run_id": "metadata['run_id']",
        "conversation_id": "metadata['conversation_id']",
        "metadata": "the run's metadata: metadata['run_metadata']",
    },
    ignored={
        **{
            f"request/{k}": "prompt-cache bookkeeping of instructions, tools and settings"
            for k in _BOOKKEEPING
        },
        **_IGNORED_KEYS,
        "other key": "other keys of a saved AgentRunResult",
    },
)
