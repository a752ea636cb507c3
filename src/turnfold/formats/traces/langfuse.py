"""Langfuse trace exports (spec H-4): the OTLP traces Langfuse stored, read as OTLP traces.

Input: a trace as Langfuse's public API gives it (``GET /api/public/traces/{id}``: the trace's
fields and its ``observations``), the ``{"trace", "observations"}`` pair its web app's tRPC
routes give (``traces.byIdWithObservationsAndScores`` and ``observations.byId``, what
``worker/src/__tests__/chatml/framework-traces/download_traces.js`` saves), a list of either, a
page ``{"data": [...]}`` of traces, or a page of observations (``GET /api/public/observations``,
or Langfuse v4's ``GET /api/public/v2/observations``: its metadata flattened to dotted keys,
made an object again by :func:`_metadata`, its trace's session and user on each observation;
it gives input, output and metadata only when asked for, ``fields=…,io,metadata``: without
input and output the load is an error saying what to export, without metadata a warning).
A page of the trace list (``GET /api/public/traces``) names each trace's observations by id
only: it holds no conversation, and its load is an error saying what to export instead (a
trace of it beside whole ones, a warning).

Langfuse turns each OTel span it ingests into an observation
(``packages/shared/src/server/otel/OtelIngestionProcessor.ts``): ``id`` the span id,
``parentObservationId`` its parent, ``startTime`` / ``endTime``, ``level`` ``ERROR`` for an error
status and ``statusMessage`` its message, and in ``metadata`` the span's own attributes
(``attributes``, values that were not strings as JSON text), its ``scope`` and
``resourceAttributes``. Its events are not kept. The attributes it reads as the observation's
``input`` and ``output`` (``extractInputAndOutput``) it took out of ``metadata.attributes``
since October 2025 (exports before that keep both): they are put back as the span's
convention writes them (:mod:`~turnfold.formats.traces.langfuse_io`), so the OTLP reader's
rules for each instrumentor read them (:mod:`~turnfold.formats.traces.otlp`).

Observations the Langfuse SDK wrote itself (scope ``langfuse-sdk``, no attributes kept: its
``@observe`` functions, its LangChain callback handler, its OpenAI wrapper) carry only their
type, name, input and output: a ``GENERATION`` whose input is a list of chat messages is a model
call in Chat Completions shape (its output the reply; LangChain's messages as the callback
handler writes them: :func:`_chat_messages`), a ``TOOL`` a tool run of its name (a LangChain
tool's output, its ``ToolMessage``, gives the result, the call id and a failure), an ``AGENT``
an agent run; a generation inside another model observation is the same call traced again
(left out); any other generation, its input no message list, is a warning. ``SPAN``,
``CHAIN``, ``EVENT`` and the other types of the SDK are steps, read through, except a SPAN
whose output is a LangChain ``ToolMessage`` (a tool's run, as the SDK wrote it before it typed
tools).

Usage (U-1): a model call's attributes where they record it, else its observation's
``usageDetails`` (Langfuse's buckets ``input``/``output`` exclude their cache and reasoning
details; the conventions' counts include them: :func:`_usage_attributes`). Cost (U-2): Langfuse's
``costDetails`` are its own estimate from its price table, not what the agent recorded, so they
are not shown as recorded; the transcript's cost is estimated as any trace's is.

One conversation is one transcript (H-4): a trace's ``sessionId`` names its conversation (else
the spans' conversation id, else the trace id); several in one input are picked by
``sample=``. Metadata (H-6): ``trace_ids``, ``user`` (the trace's ``userId``).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from turnfold import codec
from turnfold.formats.catalog import Records
from turnfold.formats.common import MAPPINGS, as_int, as_list
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.source import Source
from turnfold.formats.traces import otlp
from turnfold.formats.traces.adk_spans import restore_adk_span
from turnfold.formats.traces.langfuse_io import EVENTS, events_list, put_first, restore
from turnfold.formats.traces.otlp import (
    chosen_conversation,
    conversation_transcript,
    conversations,
    reparent,
    set_aside_other_conversations,
)
from turnfold.formats.traces.spans import (
    Span,
    Warn,
    iso_nanos,
    json_value,
    nano_time,
    operation,
    placed,
    span_time,
)
from turnfold.model import Transcript

NAME = "langfuse"
#: ``load(path, sample=<conversation id>)`` picks one conversation (formats/__init__).
HAS_SAMPLES = True

_TRACED_AGAIN = "span/(traced again)"
_SDK_STEP = "span/(Langfuse SDK step)"

RECORDS = Records(
    mapped={
        "trace": "a trace: its observations are its spans; its sessionId names its "
        "conversation, its userId the user",
        **otlp.RECORDS.mapped,
    },
    ignored={
        **otlp.RECORDS.ignored,
        _SDK_STEP: "an observation the Langfuse SDK wrote of a step (SPAN, CHAIN, EVENT…): "
        "the observations under it are read",
        _TRACED_AGAIN: "a Langfuse SDK generation inside a model observation: the same call "
        "traced again, read once",
    },
)

_SDK_SCOPE = "langfuse-sdk"
#: A Langfuse SDK observation's type → the operation it is read as (:func:`_observation_span`).
_SDK_OPERATIONS = {"GENERATION": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent"}
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_USAGE_KEYS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.prompt",
    "llm.token_count.completion",
    "ai.usage.inputTokens",
    "ai.usage.promptTokens",
    "ai.usage.outputTokens",
    "ai.usage.completionTokens",
)


# --- detection ------------------------------------------------------------------------------


def _is_observation(value: Any) -> bool:
    """An observation: ``type``, ``traceId`` and the ``parentObservationId`` key (null at a
    root), which no other format's records carry."""
    return (
        isinstance(value, MAPPINGS)
        and "parentObservationId" in value
        and isinstance(value.get("type"), str)
        and "traceId" in value
    )


def _observations_of(value: Any) -> list[Any] | None:
    """The observations of a trace (either shape), None for a value that is no trace."""
    if not isinstance(value, MAPPINGS):
        return None
    observations = value.get("observations")
    if isinstance(observations, list) and (
        isinstance(value.get("trace"), MAPPINGS) or "id" in value
    ):
        return observations
    return None


def _is_trace(value: Any) -> bool:
    observations = _observations_of(value) or []
    return any(_is_observation(o) for o in observations[:8])


def _is_listed_trace(value: Any) -> bool:
    """A trace as the trace list gives it (``GET /api/public/traces``, ``TraceWithDetails``
    in Langfuse's API definition ``fern/apis/server/definition/commons.yml``): its
    ``htmlPath`` and its observations' ids, not the observations."""
    observations = _observations_of(value)
    return (
        observations is not None
        and isinstance(value.get("htmlPath"), str)
        and all(isinstance(o, str) for o in observations)
    )


def _records_of(value: Any) -> list[Any]:
    """A page's items (``{"data": [...]}``, ``meta`` beside it), else the value itself."""
    data = value.get("data") if isinstance(value, MAPPINGS) else None
    if isinstance(data, list) and "observations" not in value:
        return data
    return [value]


def _classify(value: Any) -> int:
    items = _records_of(value)[:8]
    if items and all(_is_trace(i) or _is_observation(i) or _is_listed_trace(i) for i in items):
        return DISTINCTIVE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """A Langfuse trace with its observations (one, a list, a page of them) or a page of
    observations; a page of the trace list, which names the observations by id only, too (its
    read says what to export instead)."""
    lacks = "no Langfuse trace (observations with parentObservationId and type)"
    if source.is_document and isinstance(source.document, MAPPINGS):
        return Evidence.of([source.document], _classify, lacks)
    return Evidence.of(source.head_values(), _classify, lacks)


# --- observations as spans ------------------------------------------------------------------


def _mapping(value: Any) -> dict[str, Any]:
    decoded = json_value(value)
    return dict(decoded) if isinstance(decoded, MAPPINGS) else {}


#: The groups of an observation's metadata as Langfuse keeps an OTel span's
#: (``OtelIngestionProcessor.ts``): its ``attributes``, ``scope`` and ``resourceAttributes``.
_GROUPS = ("attributes", "scope", "resourceAttributes")


def _metadata(raw: Any) -> dict[str, Any]:
    """An observation's metadata as the v1 API gives it. The v2 observations API (``GET
    /api/public/v2/observations``, Langfuse v4's events table) gives it flattened
    (``flattenJsonToPathArrays`` in packages/shared/src/server/otel/utils.ts: an object's keys
    joined by dots, ``{"attributes.gen_ai.tool.name": "add", "scope.name": …, "inputs.q":
    …}``), every value read back as JSON where it is JSON (``parseMetadataCHRecordToDomain``):
    made objects again, a span's attributes and resource attributes (whose own keys are
    dotted) by their first dot, the span's attribute values text as in v1 (:func:`_attributes`
    reads them), any other object (the LangChain handler's ``inputs``) by every dot."""
    metadata = _mapping(raw)
    flattened = not any(group in metadata for group in _GROUPS) and any(
        "." in key and key.split(".", 1)[0] in _GROUPS for key in metadata
    )
    if not flattened:
        return metadata  # the v1 API's, or the metadata of no span
    nested: dict[str, Any] = {}
    for key, value in metadata.items():
        group, _, rest = key.partition(".")
        if group == "attributes" and not isinstance(value, str):
            value = codec.dumps(value, default=str)
        _put(nested, [group, rest] if group in _GROUPS and rest else key.split("."), key, value)
    return nested


def _put(into: dict[str, Any], path: list[str], key: str, value: Any) -> None:
    """``value`` at ``path`` in ``into``; at its flat ``key`` where a step of the path is a
    value already (a key that is also another's prefix), rather than lose either."""
    place = into
    for step in path[:-1]:
        inner = place.setdefault(step, {})
        if not isinstance(inner, dict):
            into[key] = value
            return
        place = inner
    place[path[-1]] = value


def _attributes(raw: Any) -> dict[str, Any]:
    """A span's attributes as Langfuse kept them: every value that was not a string is JSON
    text (``JSON.stringify``); the token counts are read back as numbers, as the conventions
    write them. Other values stay text: an id of digits is still an id."""
    attributes = _mapping(raw)
    for key, value in attributes.items():
        if isinstance(value, str) and ("usage" in key or "token_count" in key):
            number = json_value(value)
            if isinstance(number, int) and not isinstance(number, bool):
                attributes[key] = number
    return attributes


def _usage_attributes(details: Mapping[str, Any]) -> dict[str, int]:
    """An observation's ``usageDetails`` as GenAI usage attributes. Langfuse's ``input`` and
    ``output`` buckets leave out what their ``input_*`` / ``output_*`` details count (its
    SDK's normalisation: ``input`` less ``input_cache_read``, ``output`` less
    ``output_reasoning``; 179 + 35 + 64 = 278 in a LangChain generation of the fixtures),
    while the conventions' counts include them: the bucket and its details."""
    counts = {str(k): n for k, v in details.items() if (n := as_int(v)) is not None}
    out: dict[str, int] = {}
    for side, older in (("input", "prompt_tokens"), ("output", "completion_tokens")):
        own = _first(counts, side, f"{side}_tokens", older)
        if own is not None:
            parts = (
                n for k, n in counts.items() if k.startswith(f"{side}_") and k != f"{side}_tokens"
            )
            out[f"gen_ai.usage.{side}_tokens"] = own + sum(parts)
    for key, names in _USAGE_DETAILS.items():
        count = _first(counts, *names)
        if count:
            out[key] = count
    return out


#: The details of ``usageDetails`` (Langfuse's names, and the ones its ingestion keeps of
#: OpenInference's ``llm.token_count.*``) and their GenAI attributes.
_USAGE_DETAILS = {
    "gen_ai.usage.cache_read.input_tokens": (
        "input_cache_read",
        "input_cached_tokens",
        "prompt_details.cache_read",
    ),
    "gen_ai.usage.cache_creation.input_tokens": (
        "input_cache_creation",
        "input_cache_write",
        "prompt_details.cache_write",
    ),
    "gen_ai.usage.reasoning.output_tokens": (
        "output_reasoning",
        "output_reasoning_tokens",
        "completion_details.reasoning",
    ),
}


def _first(counts: Mapping[str, int], *keys: str) -> int | None:
    return next((counts[k] for k in keys if k in counts), None)


def _chat_messages(value: Any) -> list[dict[str, Any]] | None:
    """A Langfuse SDK generation's input as Chat Completions messages, None when it is none
    (a prompt flattened to text, a framework's own objects). Langfuse's LangChain callback
    handlers write LangChain's messages nearly so (langfuse-python's
    ``langfuse/langchain/CallbackHandler.py``, ``_convert_message_to_dict``): an AI message's
    calls as LangChain writes them (:func:`_assistant`), and after the messages the tools
    offered, each a message of role ``tool`` holding its definition (``on_chat_model_start``:
    ``{"role": "tool", "content": tool}``), which are no results and are left out. Its JS
    handler writes a ``ToolMessage`` with its tool's name as the role and no call id (the
    langgraph-js fixture): the result of the oldest call of that name not yet answered."""
    if not isinstance(value, list) or not value:
        return None
    messages: list[dict[str, Any]] = []
    waiting: list[tuple[str, Any]] = []  # (name, call id) of the calls asked for, unanswered
    for item in value:
        if not isinstance(item, MAPPINGS) or not isinstance(role := item.get("role"), str):
            return None
        message = dict(item)
        if role == "tool" and _is_tool_definition(message):
            continue
        if role == "assistant":
            message = _assistant(message)
            for call in as_list(message.get("tool_calls")):
                function = call.get("function") if isinstance(call, MAPPINGS) else None
                if isinstance(function, MAPPINGS):
                    waiting.append((str(function.get("name")), call.get("id")))
        elif role == "tool":
            waiting = [w for w in waiting if w[1] != message.get("tool_call_id")]
        elif role not in _CHAT_ROLES:
            answered = next((w for w in waiting if w[0] == role), None)
            if answered is None:
                return None
            waiting.remove(answered)
            message = {**message, "role": "tool", "name": role, "tool_call_id": answered[1]}
        messages.append(message)
    return messages


def _assistant(message: dict[str, Any]) -> dict[str, Any]:
    """An AI message as the LangChain callback handler writes it, its calls in Chat
    Completions shape: since langfuse-python 3.3.4 LangChain's own ``tool_calls`` (``{name,
    args, id, type: "tool_call"}``) and ``invalid_tool_calls`` (``args`` the text the model
    wrote), before it only the provider's calls in ``additional_kwargs.tool_calls``.

    >>> _assistant({"role": "assistant", "content": "", "tool_calls": [
    ...     {"name": "ls", "args": {"path": "."}, "id": "c1", "type": "tool_call"}]})["tool_calls"]
    [{'id': 'c1', 'type': 'function', 'function': {'name': 'ls', 'arguments': '{"path":"."}'}}]
    """
    extra = message.get("additional_kwargs")
    calls = [*as_list(message.get("tool_calls")), *as_list(message.get("invalid_tool_calls"))]
    if not calls and isinstance(extra, MAPPINGS):
        calls = as_list(extra.get("tool_calls"))
    if not calls:
        return message
    chat = []
    for call in calls:
        if isinstance(call, MAPPINGS) and not isinstance(call.get("function"), MAPPINGS):
            args = call.get("args")
            arguments = args if isinstance(args, str) else codec.dumps(args)
            call = {"id": call.get("id"), "type": "function",
                    "function": {"name": call.get("name"), "arguments": arguments}}  # fmt: skip
        chat.append(call)
    return {**message, "tool_calls": chat}


def _is_tool_definition(message: Mapping[str, Any]) -> bool:
    """A tool offered, as the LangChain callback handler lists it among the messages: a
    ``tool`` message without a call id whose content is a function's definition."""
    content = message.get("content")
    return (
        not message.get("tool_call_id")
        and isinstance(content, MAPPINGS)
        and content.get("type") == "function"
        and isinstance(content.get("function"), MAPPINGS)
    )


def _tool_message(value: Any) -> Mapping[str, Any] | None:
    """A LangChain ``ToolMessage`` as the Langfuse SDK serializes a tool's output (its fields:
    ``content``, ``tool_call_id``, ``status``…), else None."""
    if (
        isinstance(value, MAPPINGS)
        and value.get("type") == "tool"
        and isinstance(value.get("tool_call_id"), str)
        and "content" in value
    ):
        return value
    return None


def _chat_reply(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, MAPPINGS) and value.get("role") == "assistant":
        return [_assistant(dict(value))]
    if isinstance(value, str):
        return [{"role": "assistant", "content": value}]
    return _chat_messages(value)


class _Read:
    """The spans of an input's traces, what was said of each trace, and how each span was
    counted."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.traces: dict[str, Mapping[str, Any]] = {}
        self.kinds: dict[tuple[str, str], str] = {}
        #: How many observations were given, and how many with their input or output and with
        #: their metadata (the v2 API's field groups ``io`` and ``metadata``, left out unless
        #: asked for); the first trace and line given.
        self.observed = self.with_io = self.with_metadata = 0
        self.first: tuple[Any, int] | None = None


def _observation_span(
    raw: Mapping[str, Any],
    trace: Mapping[str, Any],
    line: int,
    types: Mapping[str, str],
    source: Source,
    warn: Warn,
) -> tuple[Span | None, str]:
    """An observation as the OTLP reader's span and its record type (None: not read)."""
    own = raw.get("id")
    trace_id = raw.get("traceId") or trace.get("id")
    if not isinstance(own, str) or not own or not isinstance(trace_id, str) or not trace_id:
        return None, "span"
    metadata = _metadata(raw.get("metadata"))
    scope_info = metadata.get("scope")
    scope = scope_info.get("name") if isinstance(scope_info, MAPPINGS) else None
    kind = str(raw.get("type") or "SPAN")
    name = raw.get("name") if isinstance(raw.get("name"), str) else None
    name = name or ""
    inp, out = json_value(raw.get("input")), json_value(raw.get("output"))
    parent = raw.get("parentObservationId")
    parent = parent if isinstance(parent, str) and parent else None
    raw_attributes = metadata.get("attributes")
    attributes = _attributes(raw_attributes)
    chat = None
    failed = raw.get("level") == "ERROR"
    if scope == _SDK_SCOPE or not isinstance(raw_attributes, (MAPPINGS, str)):
        op = _SDK_OPERATIONS.get(kind)
        answer = _tool_message(out)
        if op is None and answer is not None:
            # A LangChain tool run, as langfuse-python before 3.3.1 wrote it: a SPAN whose
            # output is the ToolMessage.
            op = "execute_tool"
        given = metadata.get("inputs")
        if op == "execute_tool" and isinstance(given, MAPPINGS) and not isinstance(inp, MAPPINGS):
            # Its input is the tool's input as text (Python's repr of a dict, before 4.11);
            # the keyword arguments the tool was called with are in its metadata.
            inp = given
        if op is None:
            return _span(raw, own, trace_id, parent, name, "(other)", {}, line, warn), _SDK_STEP
        if op == "chat":
            inputs = _chat_messages(inp)
            if inputs is None:
                if types.get(parent or "") == "GENERATION":
                    return None, _TRACED_AGAIN
                warn(f"observation {own} ({name or kind}): a Langfuse SDK generation whose "
                     "input is no list of chat messages; its model call is not shown")  # fmt: skip
                return None, _SDK_STEP
            chat = (inputs, _chat_reply(out) or [])
        attributes["gen_ai.operation.name"] = op
        if op == "execute_tool":
            attributes["gen_ai.tool.name"] = name
        elif op == "invoke_agent":
            attributes["gen_ai.agent.name"] = name
            put_first(attributes, ("input.value",), inp)
            put_first(attributes, ("output.value",), out)
        if op == "execute_tool" and answer is not None:
            attributes["gen_ai.tool.call.id"] = answer["tool_call_id"]
            out = answer["content"]
            failed = failed or answer.get("status") == "error"
        if op == "execute_tool":
            put_first(attributes, ("gen_ai.tool.call.arguments",), inp)
            put_first(attributes, ("gen_ai.tool.call.result",), out)
    else:

        def said(reason: str) -> None:
            warn(f"observation {own} ({name or kind}): {reason}")

        restore(attributes, scope or "", inp, out, said)
        restore_adk_span(attributes)  # Google ADK's own spans (.adk_spans)
    events = events_list(attributes.pop(EVENTS, None)) or []
    model = raw.get("model") or raw.get("providedModelName")  # the v2 API's name for it
    if isinstance(model, str) and model:
        attributes.setdefault("gen_ai.request.model", model)
    session = trace.get("sessionId")
    if isinstance(session, str) and session:
        attributes["session.id"] = session  # the OTLP reader's conversation (conversation_of)
    op = operation(name, attributes)
    if op == "(other)" and kind == "TOOL":
        # Langfuse typed it a tool run from its attributes (ObservationTypeMapper):
        # pydantic-ai before its instrumentation's version 3 names no operation (Koog 0.3's
        # tool span, which names none either, is one by its attributes: spans.operation).
        op = "execute_tool"
        attributes.setdefault("gen_ai.tool.name", name)
    if op in otlp.MODEL_OPS and not any(k in attributes for k in _USAGE_KEYS):
        details = raw.get("usageDetails")
        attributes.update(_usage_attributes(details if isinstance(details, MAPPINGS) else {}))
    span = _span(raw, own, trace_id, parent, name, op, attributes, line, warn, events, chat)
    span.failed = failed
    return span, otlp.record_type(op)


def _span(
    raw: Mapping[str, Any],
    own: str,
    trace_id: str,
    parent: str | None,
    name: str,
    op: str,
    attributes: dict[str, Any],
    line: int,
    warn: Warn,
    events: list[tuple[str, dict[str, Any]]] | None = None,
    chat: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
) -> Span:
    started_at = span_time(raw.get("startTime"), _iso_time, warn, own, "startTime", "ISO 8601")
    ended_at = span_time(raw.get("endTime"), _iso_time, warn, own, "endTime", "ISO 8601")
    message = raw.get("statusMessage")
    return Span(
        trace_id=trace_id,
        span_id=own,
        parent_id=parent,
        name=name,
        op=op,
        start=placed(
            iso_nanos(raw.get("startTime")) if started_at is not None else None,
            iso_nanos(raw.get("endTime")) if ended_at is not None else None,
        ),
        started_at=started_at,
        ended_at=ended_at,
        attributes=attributes,
        events=events or [],
        failed=raw.get("level") == "ERROR",
        status_message=message if isinstance(message, str) and message else None,
        line=line,
        chat=chat,
    )


def _iso_time(value: Any) -> str | None:
    return nano_time(iso_nanos(value))


def _traces_of(record: Any) -> Iterator[tuple[Mapping[str, Any], list[Any]]]:
    """Each trace of a record and its observations; a page of observations is grouped by
    their ``traceId``, the trace's session and user those its observations name (the v2 API
    gives each observation its trace's ``sessionId`` and ``userId``; v1 none)."""
    loose: dict[str, list[Any]] = {}
    for item in _records_of(record):
        observations = _observations_of(item)
        if observations is not None:
            trace = item["trace"] if isinstance(item.get("trace"), MAPPINGS) else item
            yield trace, observations
        elif _is_observation(item):
            loose.setdefault(str(item.get("traceId")), []).append(item)
    for trace_id, observations in loose.items():
        trace = {"id": trace_id}
        for key in ("sessionId", "userId"):
            named = next((o[key] for o in observations if isinstance(o.get(key), str) and o[key]),
                         None)  # fmt: skip
            if named is not None:
                trace[key] = named
        yield trace, observations


def _read(source: Source) -> _Read:
    read = _Read()
    left_out: dict[tuple[str, str], str | None] = {}
    said: set[str] = set()
    #: The first trace given without its observations, and its line.
    unlisted: tuple[Any, int] | None = None
    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        found = list(_traces_of(record))
        if not found:
            source.warn("not a Langfuse trace (no observations)", line)
            continue
        warn = otlp.said_once(source, line, said)
        for trace, observations in found:
            source.mapped("trace")
            trace_id = trace.get("id")
            if isinstance(trace_id, str):
                read.traces.setdefault(trace_id, trace)
            listed = [o for o in observations if _is_observation(o)]
            if not listed and unlisted is None:
                unlisted = (trace_id, line)
            if len(listed) < len(observations):
                source.warn(f"trace {trace_id}: {len(observations) - len(listed)} observations "
                            f"are no observation objects (the trace list names them by id): "
                            f"{_EXPORT_INSTEAD.format(trace_id)}", line)  # fmt: skip
            types = {o["id"]: o["type"] for o in listed if isinstance(o.get("id"), str)}
            if listed and read.first is None:
                read.first = (trace_id, line)
            for raw in listed:
                read.observed += 1
                read.with_io += "input" in raw or "output" in raw
                read.with_metadata += "metadata" in raw
                span, kind = _observation_span(raw, trace, line, types, source, warn)
                if span is None:
                    if kind == "span":
                        source.warn("observation without an id or traceId skipped", line,
                                    record_type="span")  # fmt: skip
                    else:
                        source.ignored(kind)
                    continue
                key = (span.trace_id, span.span_id)
                if key in read.kinds:
                    source.ignored("span/(repeated)")
                    continue
                read.kinds[key] = kind
                source.note(kind, "ignored" if kind in RECORDS.ignored else "mapped")
                if kind in RECORDS.mapped:
                    read.spans.append(span)
                else:
                    left_out[key] = span.parent_id
    if read.observed and read.first is not None and not read.with_io:
        # No observation has its input or output (the v2 API's default field groups): nothing
        # of the conversation is in it, not an empty one: what to export.
        trace_id, line = read.first
        reason = f"Langfuse observations without their input and output: {_WITH_FIELDS}"
        raise TranscriptFormatError(source.name, [NAME], line, reason.format(trace_id))
    if read.observed and read.first is not None and not read.with_metadata:
        trace_id, line = read.first
        source.warn(f"Langfuse observations without their metadata, so without their spans' "
                    f"attributes: read by their type, name, input and output only; "
                    f"{_WITH_FIELDS.format(trace_id)}", line)  # fmt: skip
    if unlisted is not None and not read.kinds:
        # Nothing of a conversation is in it: not an empty transcript, but what to export.
        trace_id, line = unlisted
        reason = f"Langfuse traces without their observations: {_EXPORT_INSTEAD.format(trace_id)}"
        raise TranscriptFormatError(source.name, [NAME], line, reason)
    reparent(read.spans, left_out)
    return read


#: What to export for observations the v2 API gave without the field groups the reader needs
#: (``fields``: by default only ``core`` and ``basic``; web/src/features/public-api/types/
#: observations.ts, ``GetObservationsV2Query``).
_WITH_FIELDS = (
    "export them with their input, output and metadata (GET /api/public/v2/observations?"
    "traceId={0}&fields=core,basic,io,metadata,model,usage), or each trace whole "
    "(GET /api/public/traces/{0})"
)
#: What to export for a trace the trace list gives without its observations.
_EXPORT_INSTEAD = (
    "export each trace whole (GET /api/public/traces/{0}, as the Langfuse SDKs' "
    "api.trace.get gives it) or its observations (GET /api/public/observations?traceId={0})"
)


# --- reading --------------------------------------------------------------------------------


def read(source: Source, *, sample: str | None = None, epoch: int | None = None) -> Transcript:
    """The conversation of ``source`` (the one named ``sample`` when it holds several)."""
    if epoch is not None:
        raise ValueError(f"{source.name}: Langfuse conversations have no epochs; pass sample= only")
    read = _read(source)
    grouped = conversations(read.spans)
    if not grouped:
        return Transcript(metadata={"source_format": NAME})
    key = chosen_conversation(source.name, NAME, grouped, sample, "session or trace id")
    held = _held(read, grouped)
    set_aside_other_conversations(source.accounting, sum(held.values(), Counter()) - held[key])
    return _settled(conversation_transcript(source.name, key, grouped), read, grouped[key])


def read_each(source: Source) -> Iterator[tuple[str | None, Transcript]]:
    """Every conversation of ``source``, as :func:`.otlp.read_each` gives an OTLP file's."""
    from turnfold.formats import settle_load

    read = _read(source)
    grouped = conversations(read.spans)
    module = sys.modules[__name__]
    if not grouped:
        yield None, settle_load(Transcript(metadata={"source_format": NAME}), source, module)
    held = _held(read, grouped)
    every = sum(held.values(), Counter())
    for key in grouped:
        accounting = source.accounting.copy()
        set_aside_other_conversations(accounting, every - held[key])
        transcript = _settled(
            conversation_transcript(source.name, key, grouped), read, grouped[key]
        )
        yield (
            (key if len(grouped) > 1 else None),
            settle_load(transcript, source, module, accounting),
        )


def _held(read: _Read, grouped: Mapping[str, list[Span]]) -> dict[str, Counter[str]]:
    return {k: Counter(read.kinds[(s.trace_id, s.span_id)] for s in v) for k, v in grouped.items()}


def _settled(transcript: Transcript, read: _Read, spans: list[Span]) -> Transcript:
    """The traces' own fields as the conversation's metadata (H-6)."""
    metadata = transcript.metadata
    metadata["source_format"] = NAME
    ids = list(dict.fromkeys(s.trace_id for s in sorted(spans, key=lambda s: s.start)))
    metadata["trace_ids"] = ids
    for trace_id in ids:
        user = read.traces.get(trace_id, {}).get("userId")
        if isinstance(user, str) and user:
            metadata.setdefault("user", user)
    return transcript
