"""OpenTelemetry spans as the trace reader takes them: the :class:`Span` type and the wire
forms decoded into it, with their ids, times and attribute values.

Three forms: OTLP JSON (an ``ExportTraceServiceRequest``: ``AnyValue`` attributes, ids in hex
or base64, Unix nanoseconds: :func:`raw_spans`, :func:`_span`), the SDK's
``ConsoleSpanExporter`` dump (:func:`is_console_span`, :func:`_console_span`) and Jaeger's JSON
export (:func:`jaeger_traces`, :func:`_jaeger_span`). Each span is named its operation as it
is decoded (:func:`operation`). :func:`json_value` decodes an attribute value written as JSON text,
as every convention writes structured values.

Apart from the reader (:mod:`~turnfold.formats.traces.otlp`) because this is decoding only:
which form a record is and what its fields hold, never what a span means to a conversation.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from turnfold import codec
from turnfold.formats.common import MAPPINGS, as_int, as_list, warned_timestamp

_ERROR_CODES = ("STATUS_CODE_ERROR", 2, "2", "ERROR")
_NANOS = "ns since the epoch"
_HEX = re.compile(r"^[0-9a-fA-F]+$")
#: Where a decoder says a span's time is no time: a warning's reason, which the reader gives
#: the span's line.
Warn = Callable[[str], object]


# --- OTLP values ----------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": …}``, ``{"arrayValue": {"values": […]}}``…) as a
    plain value; ``intValue`` strings become ints.

    >>> any_value({"intValue": "25"}), any_value({"arrayValue": {"values": [{"boolValue": True}]}})
    (25, [True])
    >>> any_value({"kvlistValue": {"values": [{"key": "a", "value": {"doubleValue": 0.5}}]}})
    {'a': 0.5}
    """
    if not isinstance(value, MAPPINGS):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError, OverflowError):  # not a number, or an infinite one
            return None
    for key in ("boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "arrayValue" in value:
        inner = value["arrayValue"]
        values = inner.get("values") if isinstance(inner, MAPPINGS) else None
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        inner = value["kvlistValue"]
        values = inner.get("values") if isinstance(inner, MAPPINGS) else None
        return attributes_of(values)
    return None


def attributes_of(attributes: Any) -> dict[str, Any]:
    """``[{key, value: AnyValue}]`` as a dict of plain values."""
    out: dict[str, Any] = {}
    if isinstance(attributes, list):
        for item in attributes:
            if isinstance(item, MAPPINGS) and isinstance(key := item.get("key"), str):
                value = item.get("value")
                # Most attributes are strings: read those here, the rest through any_value.
                if type(value) is dict and "stringValue" in value:
                    out[key] = value["stringValue"]
                else:
                    out[key] = any_value(value)
    return out


def span_id(value: Any, size: int) -> str | None:
    """A trace or span id as lower-case hex: hex as OTLP JSON writes it, or base64 as a
    protobuf JSON mapping does (``size`` bytes); other strings are kept as they are."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 2 * size and _HEX.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == size else value


def nano_time(value: Any) -> str | None:
    """Unix nanoseconds (a string or int) as ISO-8601 UTC with microseconds; None for 0."""
    try:
        nanos = int(value)
    except (TypeError, ValueError, OverflowError):  # not a number, or an infinite one
        return None
    if nanos <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(nanos // 1000 / 1_000_000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat().replace("+00:00", "Z")


def span_time(
    value: Any, read: Callable[[Any], str | None], warn: Warn, span: str, name: str, unit: str
) -> str | None:
    """A span's time ``name`` as ISO 8601 (``read``); one that is no time is left out and
    ``warn`` told, naming the span (:func:`~turnfold.formats.common.warned_timestamp`)."""
    # Protobuf's JSON mapping writes an unset int64 as "0": a placeholder, as 0 is.
    return warned_timestamp(0 if value == "0" else value, read, warn, f"span {span}", name=name,
                            unit=unit)  # fmt: skip


def json_value(value: Any) -> Any:
    """An attribute value as the value it stands for: text that is JSON decoded (every
    convention writes a structured value as JSON text), any other value, and text that is no
    JSON, as it is.

    >>> json_value('{"city": "Paris"}'), json_value("Paris"), json_value(3)
    ({'city': 'Paris'}, 'Paris', 3)
    """
    if isinstance(value, str):
        try:
            return codec.loads(value)
        except ValueError:
            return value
    return value


# --- spans ----------------------------------------------------------------------------------


@dataclass
class Span:
    """One span, its attributes decoded; ``children`` filled once the whole file is read."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    op: str
    start: int
    started_at: str | None
    ended_at: str | None
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    failed: bool
    status_message: str | None
    line: int
    children: list[Span] = field(default_factory=list)
    #: A span the trace does not hold, stood in for by the reader: the agent span of a
    #: smolagents run that raised, which its instrumentor never ends (``_Rebuild``, otlp).
    missing: bool = False
    #: The span's input and output messages in Chat Completions shape, where its wire form
    #: records a whole request and response rather than a convention's attributes (MLflow's
    #: ``mlflow.spanInputs`` / ``mlflow.spanOutputs``, :mod:`.mlflow`): what
    #: :func:`.messages.model_messages` gives for it.
    chat: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None


#: The tool name of the span Google ADK adds after running a response's calls in parallel,
#: for the one event merging their responses (google/adk/telemetry/tracing.py,
#: ``trace_merged_tool_calls``): each call has a span of its own.
_ADK_MERGED = "(merged tools)"
#: Where Google ADK's own tracer puts a model call's request and response (its ``call_llm``
#: span, which names no operation: :func:`operation`; read by :mod:`.adk_spans`).
ADK_LLM_REQUEST = "gcp.vertex.agent.llm_request"
ADK_LLM_RESPONSE = "gcp.vertex.agent.llm_response"
#: Where it puts a tool span's arguments and result (``trace_tool_call``: :mod:`.messages`).
ADK_TOOL_ARGUMENTS = "gcp.vertex.agent.tool_call_args"
ADK_TOOL_RESPONSE = "gcp.vertex.agent.tool_response"
#: What every span of its own tracer that stands for an event carries (its model and tool
#: spans, in each of its telemetry schemas).
ADK_EVENT_ID = "gcp.vertex.agent.event_id"
#: What Koog 0.3 writes on a tool span, which names no operation (:func:`operation`).
_KOOG_TOOL = frozenset({"gen_ai.tool.name", "gen_ai.tool.call.id"})
#: The span Google ADK's early 1.x releases start for each run of an agent, a sub-agent's as
#: the root's (google/adk/agents/base_agent.py, ``run_async`` and ``run_live``, 1.0.0 and still
#: 1.15.0: ``tracer.start_as_current_span(f'agent_run [{self.name}]')``): its name is all it
#: says, no attribute. Later releases write ``invoke_agent <name>`` with ``gen_ai.agent.name``
#: (google/adk/telemetry/tracing.py, ``trace_agent_invocation``, 1.39.1 and 2.13.0), read alike.
_ADK_AGENT_RUN = re.compile(r"^agent_run \[(.+)\]$", re.DOTALL)


def adk_agent_run(name: str) -> str | None:
    """The agent whose run a span of Google ADK 1.x's named ``name`` is (:data:`_ADK_AGENT_RUN`),
    else None.

    >>> adk_agent_run("agent_run [calc]"), adk_agent_run("call_llm")
    ('calc', None)
    """
    found = _ADK_AGENT_RUN.match(name)
    return found[1] if found else None


#: Operation names instrumentations write for the semantic conventions' ones: LiteLLM's OTel
#: callback writes its call type (litellm/integrations/opentelemetry.py), OpenLLMetry before
#: its move to ``gen_ai.operation.name`` only ``llm.request.type`` (``LLMRequestTypeValues``),
#: and after it ``execute_task`` for a step of a run (a task, as its decorators' below).
_OPERATIONS = {
    "completion": "chat",
    "acompletion": "chat",
    "atext_completion": "text_completion",
    "embedding": "embeddings",
    "aembedding": "embeddings",
    "execute_task": "task",
    # The GenAI conventions' workflow (opentelemetry-util-genai's ``WorkflowInvocation``: "a
    # predetermined sequence of operations", its input and output messages its own): the run
    # the user's code made, the agents it invokes runs within it, as an OpenLLMetry
    # ``@workflow`` (``_TRACELOOP_KINDS``).
    "invoke_workflow": "invoke_agent",
    # Gemini CLI's own operations (packages/core/src/telemetry/constants.ts,
    # ``GeminiCliOperation``): a model call, a tool's run, a sub-agent's run (.gemini_cli_spans).
    "llm_call": "chat",
    "tool_call": "execute_tool",
    "agent_call": "invoke_agent",
}
_LLM_REQUEST_TYPES = {"chat": "chat", "completion": "text_completion", "embedding": "embeddings"}
#: OpenLLMetry's (the Traceloop SDK's) decorator spans, ``traceloop.span.kind``
#: (traceloop/sdk/decorators/base.py ``_setup_span``; no ``gen_ai.operation.name``): a
#: ``@tool`` a tool run, an ``@agent`` and a ``@workflow`` an agent run (the workflow is the
#: run the user's code made, its agents runs within it), a ``@task`` a step of its run. Its
#: LangChain instrumentation writes ``execute_task`` for the same steps.
_TRACELOOP_KINDS = {
    "tool": "execute_tool",
    "agent": "invoke_agent",
    "workflow": "invoke_agent",
    "task": "task",
}
#: The Vercel AI SDK's spans (``ai.operationId``, ai/core/telemetry): a provider call and a
#: tool run are read; a call's outer span (``ai.generateText``…) repeats its provider calls.
_AI_SDK_OPERATIONS = {
    "ai.generateText.doGenerate": "chat",
    "ai.streamText.doStream": "chat",
    "ai.generateObject.doGenerate": "chat",
    "ai.streamObject.doStream": "chat",
    "ai.toolCall": "execute_tool",
    "ai.embed.doEmbed": "embeddings",
    "ai.embedMany.doEmbed": "embeddings",
}


def operation(name: str, attributes: Mapping[str, Any]) -> str:
    """A span's record type: its GenAI operation, its OpenInference kind, OpenLLMetry's older
    ``llm.request.type`` or its decorators' ``traceloop.span.kind``, the Vercel AI SDK's
    ``ai.operationId``, Google ADK's ``call_llm`` and Koog 0.3's tool span by their
    attributes, an agent's run of Google ADK 1.x by its name (:func:`adk_agent_run`), else
    ``(other)``."""
    op = attributes.get("gen_ai.operation.name")
    if isinstance(op, str) and op:
        if op == "execute_tool" and attributes.get("gen_ai.tool.name") == _ADK_MERGED:
            return "execute_tool (merged)"
        return _OPERATIONS.get(op, op)
    kind = attributes.get("openinference.span.kind")
    if isinstance(kind, str) and kind:
        return kind.upper()
    request = attributes.get("llm.request.type")
    if isinstance(request, str) and request in _LLM_REQUEST_TYPES:
        return _LLM_REQUEST_TYPES[request]
    traceloop = attributes.get("traceloop.span.kind")
    if isinstance(traceloop, str) and traceloop in _TRACELOOP_KINDS:
        return _TRACELOOP_KINDS[traceloop]
    step = attributes.get("ai.operationId")
    if isinstance(step, str) and step in _AI_SDK_OPERATIONS:
        return _AI_SDK_OPERATIONS[step]
    if ADK_LLM_REQUEST in attributes:
        # Google ADK's call_llm span (its tracer's 1.x releases and schema 1 since): a model
        # call, as its tool spans (which write the same key, "{}") name theirs.
        return "generate_content"
    if attributes.keys() >= _KOOG_TOOL:
        # Koog 0.3's tool span (``tool.<name>``, scope ``ai.koog``) names its tool and its
        # call and no operation: a tool's run, as Langfuse types it (ObservationTypeMapper).
        return "execute_tool"
    head = name.split(" ", 1)[0]
    if head in ("invoke_agent", "execute_tool", "chat", "create_agent") and " " in name:
        return head
    if adk_agent_run(name) is not None:
        return "invoke_agent"
    return "(other)"


def events_of(
    raw: Mapping[str, Any], attributes: Callable[[Any], dict[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """A span's events as a JSON form writes them (``events``: each a ``name`` and its
    ``attributes``, read by ``attributes``); an event without a name is left out."""
    events = []
    for event in as_list(raw.get("events")):
        if isinstance(event, MAPPINGS) and isinstance(event.get("name"), str):
            events.append((event["name"], attributes(event.get("attributes"))))
    return events


def plain_attributes(values: Any) -> dict[str, Any]:
    """Attributes written as a plain object (a console dump's, MLflow's), copied."""
    return dict(values) if isinstance(values, MAPPINGS) else {}


def status_of(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """A span's ``status`` object; empty where it has none."""
    status = raw.get("status")
    return status if isinstance(status, MAPPINGS) else {}


def _span(raw: Mapping[str, Any], line: int, warn: Warn) -> Span | None:
    trace = span_id(raw.get("traceId"), 16)
    own = span_id(raw.get("spanId"), 8)
    if trace is None or own is None:
        return None
    attributes = attributes_of(raw.get("attributes"))
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    events = events_of(raw, attributes_of)
    status = status_of(raw)
    message = status.get("message")
    started_at = span_time(
        raw.get("startTimeUnixNano"), nano_time, warn, own, "startTimeUnixNano", _NANOS
    )
    ended_at = span_time(
        raw.get("endTimeUnixNano"), nano_time, warn, own, "endTimeUnixNano", _NANOS
    )
    return Span(
        trace_id=trace,
        span_id=own,
        parent_id=span_id(raw.get("parentSpanId"), 8),
        name=str(name),
        op=operation(str(name), attributes),
        start=placed(
            _nanos(raw.get("startTimeUnixNano")) if started_at is not None else None,
            _nanos(raw.get("endTimeUnixNano")) if ended_at is not None else None,
        ),
        started_at=started_at,
        ended_at=ended_at,
        attributes=attributes,
        events=events,
        failed=status.get("code") in _ERROR_CODES,
        status_message=message if isinstance(message, str) and message else None,
        line=line,
    )


def _nanos(value: Any) -> int:
    """OTLP JSON's Unix nanoseconds (a string, or a number) as an int; 0 if none."""
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):  # not a number, or an infinite one
        return 0


def placed(start: int | None, end: int | None) -> int:
    """Where a span sorts among its siblings (:attr:`Span.start`, in Unix nanoseconds): its
    start, or, when that is no time (None), its end, so it stays after the calls it followed
    rather than first of all (0); 0 when it has neither.

    >>> placed(5, 9), placed(None, 9), placed(None, None)
    (5, 9, 0)
    """
    return start if start is not None else end if end is not None else 0


def is_console_span(value: Any) -> bool:
    """A span as the OpenTelemetry SDK's ``ReadableSpan.to_json()`` writes it (what
    ``ConsoleSpanExporter`` prints, one object a span): ``context`` with its ids, ``parent_id``."""
    return (
        isinstance(value, MAPPINGS)
        and isinstance(context := value.get("context"), MAPPINGS)
        and "span_id" in context
        and "parent_id" in value
    )


def _console_id(value: Any, size: int) -> str | None:
    """An id as ``to_json`` writes it: ``0x`` and hex."""
    if isinstance(value, str) and value[:2] in ("0x", "0X"):
        value = value[2:]
    return span_id(value, size)


def iso_nanos(value: Any) -> int:
    """An ISO-8601 time (``to_json`` writes UTC with ``Z``) as Unix nanoseconds; 0 if none."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def _iso_time(value: Any) -> str | None:
    """An ISO-8601 time of a console dump as :func:`nano_time` writes it; None if none."""
    return nano_time(iso_nanos(value))


def _micros_time(value: Any) -> str | None:
    """Jaeger's Unix microseconds as :func:`nano_time` writes them; None if none."""
    micros = as_int(value)
    return nano_time(micros * 1000) if micros is not None else None


def _console_span(raw: Mapping[str, Any], line: int, warn: Warn) -> Span | None:
    """A span of :func:`is_console_span`'s shape: attributes and event attributes are plain
    values already, times ISO strings, the status ``{"status_code", "description"}``."""
    context = raw["context"]
    trace = _console_id(context.get("trace_id"), 16)
    own = _console_id(context.get("span_id"), 8)
    if trace is None or own is None:
        return None
    raw_attributes = raw.get("attributes")
    attributes = dict(raw_attributes) if isinstance(raw_attributes, MAPPINGS) else {}
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    events = events_of(raw, plain_attributes)
    status = status_of(raw)
    message = status.get("description")
    started_at = span_time(raw.get("start_time"), _iso_time, warn, own, "start_time", "ISO 8601")
    ended_at = span_time(raw.get("end_time"), _iso_time, warn, own, "end_time", "ISO 8601")
    return Span(
        trace_id=trace,
        span_id=own,
        parent_id=_console_id(raw.get("parent_id"), 8),
        name=str(name),
        op=operation(str(name), attributes),
        start=placed(
            iso_nanos(raw.get("start_time")) if started_at is not None else None,
            iso_nanos(raw.get("end_time")) if ended_at is not None else None,
        ),
        started_at=started_at,
        ended_at=ended_at,
        attributes=attributes,
        events=events,
        failed=status.get("status_code") in _ERROR_CODES,
        status_message=message if isinstance(message, str) and message else None,
        line=line,
    )


def jaeger_traces(value: Any) -> list[Mapping[str, Any]] | None:
    """The traces of a Jaeger JSON export (the query service's ``{"data": [trace…]}``, what
    its UI's "Download JSON" saves, or one ``{"traceID", "spans", "processes"}``), else None."""
    if not isinstance(value, MAPPINGS):
        return None
    if isinstance(value.get("spans"), list) and "traceID" in value:
        return [value]
    data = value.get("data")
    if isinstance(data, list) and data and isinstance(data[0], MAPPINGS) and "spans" in data[0]:
        return [trace for trace in data if isinstance(trace, MAPPINGS)]
    return None


def _tags(tags: Any) -> dict[str, Any]:
    """Jaeger's ``[{key, type, value}]`` as a dict (its values are typed JSON already)."""
    return {
        t["key"]: t.get("value")
        for t in as_list(tags)
        if isinstance(t, MAPPINGS) and isinstance(t.get("key"), str)
    }


def _jaeger_span(raw: Mapping[str, Any], line: int, warn: Warn) -> Span | None:
    """A span of a Jaeger export: times in microseconds, the parent its ``CHILD_OF``
    reference, events its ``logs`` (the ``event`` field their name), the status the
    ``otel.status_code`` / ``error`` tags the OTLP receiver turns it into."""
    trace = span_id(raw.get("traceID"), 16)
    own = span_id(raw.get("spanID"), 8)
    if trace is None or own is None:
        return None
    attributes = _tags(raw.get("tags"))
    parent = next(
        (
            r.get("spanID")
            for r in as_list(raw.get("references"))
            if isinstance(r, MAPPINGS) and r.get("refType") == "CHILD_OF"
        ),
        None,
    )
    events = []
    for log in as_list(raw.get("logs")):
        fields = _tags(log.get("fields")) if isinstance(log, MAPPINGS) else {}
        name = fields.pop("event", None)
        if isinstance(name, str):
            events.append((name, fields))
    start = as_int(raw.get("startTime")) or 0
    started_at = span_time(raw.get("startTime"), _micros_time, warn, own, "startTime",
                           "µs since the epoch")  # fmt: skip
    ended_at = None
    if started_at is not None:  # an end is its start and duration: no start, no end
        ended_at = span_time(raw.get("duration"), lambda d: _micros_time(start + d)
                             if as_int(d) is not None else None, warn, own, "duration",
                             "µs after its startTime")  # fmt: skip
    failed = attributes.get("otel.status_code") == "ERROR" or attributes.get("error") is True
    message = attributes.get("otel.status_description")
    name = raw.get("operationName") if isinstance(raw.get("operationName"), str) else ""
    return Span(
        trace_id=trace,
        span_id=own,
        parent_id=span_id(parent, 8),
        name=str(name),
        op=operation(str(name), attributes),
        start=start * 1000,
        started_at=started_at,
        ended_at=ended_at,
        attributes=attributes,
        events=events,
        failed=failed,
        status_message=message if isinstance(message, str) and message else None,
        line=line,
    )


def raw_spans(request: Any) -> Iterator[Mapping[str, Any]]:
    """Every span object of an ``ExportTraceServiceRequest``."""
    if not isinstance(request, MAPPINGS):
        return
    for resource in as_list(request.get("resourceSpans")):
        if not isinstance(resource, MAPPINGS):
            continue
        scopes = resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans")
        for scope in as_list(scopes):
            if isinstance(scope, MAPPINGS):
                yield from (s for s in as_list(scope.get("spans")) if isinstance(s, MAPPINGS))
