"""OpenTelemetry traces as OTLP JSON (spec H-4), with GenAI or OpenInference attributes.

Input: what the OTLP file exporters write, one ``ExportTraceServiceRequest`` per line
(``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``) or one such
document. Span ids are hex as the OTLP JSON encoding says, or base64 as a plain protobuf JSON
mapping writes them; ``intValue`` may be a string. Also spans as the SDK's ``ConsoleSpanExporter``
prints them (``ReadableSpan.to_json()``: ``context`` ids with ``0x``, ``parent_id``, ISO times,
plain attributes), one a line or a JSON list of them (:func:`is_console_span`), and a Jaeger
export (``{"data": [{"traceID", "spans": [{"tags", "references", "logs"…}]}]}``, what its UI
downloads: :func:`jaeger_traces`). A span written again (a processor printing each span as it
starts and as it ends) is read once, the copy that ended (``span/(repeated)``). Every span is
one record of the accounting, typed ``span/<operation>``: the GenAI ``gen_ai.operation.name``
(``chat``, ``execute_tool``, ``invoke_agent``…; LiteLLM's call types read as theirs), the
OpenInference ``openinference.span.kind`` (``LLM``, ``TOOL``, ``AGENT``, ``CHAIN``…) or older
OpenLLMetry's ``llm.request.type`` (:func:`operation`); spans of none (HTTP, database) are
``span/(other)``, left out, and
so are Strands' ``execute_event_loop_cycle`` spans; a span under a span left out hangs from the
nearest span read above it (:func:`reparent`: Strands starts every model and tool span inside
an event-loop cycle).

One conversation is one transcript: a trace belongs to the conversation its spans name
(``gen_ai.conversation.id``, else OpenInference's ``session.id``), else it is a conversation of
its own; traces naming the same conversation are one transcript (a chat app writes a trace per
turn). A file holding several conversations is not guessed at: ``load(path, sample=ID)`` picks
one (:data:`HAS_SAMPLES`), and without it the error lists their ids.

Rebuilding the conversation from the span tree (never from the root span alone: an
``invoke_agent`` span may hold only the first prompt and the final reply):

- the spans of a conversation are taken in start order; an agent span (``invoke_agent``,
  ``AGENT``) inside another agent's tree is a sub-agent: its own spans make its own transcript,
  nested under the tool call that ran it (the ``execute_tool`` span it sits in), else under
  the unsettled call of its name a model span asked for (a smolagents managed agent, run
  inside its manager's step), else under the one call of the last response still waiting for
  its result (an agent called over A2A, traced in the same trace), else under a call of its
  own named ``invoke_agent``. An agent span among model spans outside any agent span is a
  sub-agent of the conversation they make; one right under an agent span of its name is the
  same run (OpenLLMetry's LangGraph graph and workflow spans: :meth:`_Rebuild._inner`);
- a model span (``chat``, ``LLM``) gives its input and output messages: ``gen_ai.input.messages``
  / ``gen_ai.output.messages`` (JSON strings or structured values, the ``parts`` form; also on
  the ``gen_ai.client.inference.operation.details`` event), OpenInference's flattened
  ``llm.input_messages.N.message.*`` / ``llm.output_messages.N.message.*``, the older flattened
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` and the older per-message events
  (``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message``, ``gen_ai.choice``). Each model call's input repeats the history, so
  only the messages not seen before are added (the history as a prefix, else by content);
  messages then map as Chat Completions messages do (:mod:`~turnfold.formats.openai_chat`),
  the parts of a GenAI message in their order (:func:`_from_parts`, the part types of the
  semantic conventions' ``gen-ai-input-messages.json`` / ``gen-ai-output-messages.json``, and
  those pydantic-ai writes in their place, :func:`pydantic_ai_part`, ``thinking`` as reasoning):
  a ``server_tool_call`` is a :class:`~turnfold.model.ToolCall` its
  ``server_tool_call_response`` settles (:func:`server_tool_outcome`), a ``compaction`` a
  :class:`~turnfold.model.CompactionBoundary` with its summary, a ``blob`` image an image of
  the prompt, model text or tool result it is in (in a system message, where no image is
  shown, a line naming it and a warning), a ``uri`` or ``file`` part and any other blob a line
  naming it
  (never fetched); a part of a type the schemas do not define is shown by its name, with a
  warning. Strands writes Bedrock Converse content: in its older events the blocks themselves
  (``[{"text"}, {"toolUse"}, {"toolResult"}]``), in its latest mode the parts it maps them to,
  the blocks without a schema type as ``{"type": <block key>, "content"}``: both read alike
  (:func:`converse_parts`), reasoning as :class:`~turnfold.model.Thinking`, guarded and cited
  text as text, media as a line naming them (the tracer writes no bytes), cache points as
  nothing;
  usage (``gen_ai.usage.*``, ``llm.token_count.*``) and model go on the span's last text, its
  calls are one batch (one response's); a model span with an error status is an
  :class:`~turnfold.model.AssistantError`. A trace without message content (capture is off by
  default in Google ADK, the OpenAI instrumentor, the Microsoft Agent Framework: a warning
  says so): the calls the tool spans after a model span that recorded no output make are its
  response's, one batch, the first carrying its usage; where a response's usage has no entry
  to carry it (an answer not recorded), the model spans' sum is ``metadata["usage"]``, the
  transcript's recorded total (:meth:`_Rebuild._settle_usage`); Google ADK's ``(merged
  tools)`` span, beside the spans of a response's parallel calls, is none;
- a tool span (``execute_tool``, ``TOOL``) settles the call with its id (``gen_ai.tool.call.id``,
  ``tool_call.id``, ``tool.id``; without one, the first unsettled call of its name, or of
  that call's response the one with the span's arguments: a response's calls may run in
  parallel) with its
  result (``gen_ai.tool.call.result``, ``output.value``, pydantic-ai's older ``tool_response``;
  OpenLLMetry's LangChain result is a serialized ``ToolMessage``, read as its content, status
  and call id: :func:`langchain_tool_message`;
  else its output messages' or Strands' ``gen_ai.choice`` event's: :func:`tool_response`; a
  tool message of a later model span gives it when the span has none, the span's status and
  end standing), its times, and its status: an error
  status or an ``exception`` event is ``error``, a result whose text states a failure (a
  non-zero exit code, timed out, rejected) is ``error``
  (:func:`~turnfold.formats.gemini_parts.corrected_status`), any other ended span ``success``. A
  tool span no model span asked for (content capture off) is a call of its own, its arguments
  those of :func:`tool_arguments` (smolagents' as the model gave them);
- an agent span's own input and output (``gen_ai.input.messages``, ``input.value`` /
  ``output.value`` as text, :func:`value_text`: smolagents' run arguments as their ``task``)
  are the prompt and the reply when no model span carried them (Strands' reply repeats the
  last model text with a newline: not shown twice); its usage (the sum of its model calls')
  counts only when none of its model spans recorded any (:meth:`_Rebuild._run`);
- a smolagents run traced by OpenInference (its agent span has ``smolagents.*`` attributes)
  reads as the smolagents loader reads the run itself
  (:mod:`~turnfold.formats.frameworks.smolagents`): its model spans' input is the agent's
  memory written again, of which only the system prompt is read
  (:func:`smolagents_model_messages`); the model's text (a plan, a step's thought) is
  thinking; a ``final_answer`` call is the answer, not a call, and so is the ``final_answer``
  tool span's output (JSON: a number, a list or a dict as the loader shows it, where the agent
  span writes its ``str()``); a step (``CHAIN`` span) that
  failed settles the calls it asked for that no tool span ran (an unknown tool) as ``error``,
  and an error no call of it holds (a reply read as no call or no code,
  ``AgentParsingError``) is an error notice after the step's entries;
  a ``CodeAgent``'s step (its model span offered no tools and asked for no call) is one
  ``python`` call of the code the model wrote (:func:`smolagents_code`), its result and
  status the step's (its observations, its error), the tool spans its code ran part of it;
  a run that hit ``max_steps`` is a warning notice, then the reply of the model call the agent
  makes after its last step (``provide_final_answer``) as the answer (traced without model
  spans: a run that answered in none of the steps it was allowed);
  the calls of a step no model span recorded are one batch;
- metadata (H-6): ``session_id`` (the conversation), ``agent`` (``gen_ai.agent.name``,
  ``agent.name``), ``model``, ``outcome`` ``error`` when the outermost agent span failed.

Limits: the spans of a file are held in memory to rebuild the tree (a conversation's tree can
start at its last line); one line is parsed whole by the reader (:mod:`turnfold.formats.source`).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from turnfold import codec
from turnfold.formats.anthropic_blocks import attachment_line
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    NameSet,
    as_int,
    as_list,
    describe_args,
    parse_arguments,
    stringify,
    text_result,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.frameworks.smolagents import (
    CODE_TOOL,
    CODE_TOOL_SHOWN,
    MAX_STEPS_NOTICE,
    answer_text,
)
from turnfold.formats.frameworks.strands import (
    MEDIA_KEYS,
    citations_text,
    guard_text,
    image_of,
    key_of,
    thinking_of,
    tool_result_content,
)
from turnfold.formats.frameworks.strands import attachment_line as converse_attachment
from turnfold.formats.gemini_parts import corrected_status
from turnfold.formats.openai_chat import OpenAIChatBuilder
from turnfold.formats.openai_responses import describe_call, output_content, plain_copy
from turnfold.formats.source import Source
from turnfold.model import (
    Accounting,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    ImageData,
    LoadWarning,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import Tokens, add_into, attach_usage, counts_of

NAME = "otlp"

RECORDS = Records(
    mapped={
        "span/chat": "a model call: the messages new in its input, its output, usage and model",
        "span/text_completion": "a model call, as span/chat",
        "span/generate_content": "a model call, as span/chat",
        "span/LLM": "an OpenInference model call, as span/chat",
        "span/execute_tool": "the result, times and status of the tool call with its id",
        "span/TOOL": "an OpenInference tool run, as span/execute_tool; run by a smolagents "
        "CodeAgent's code, part of that step's python call",
        "span/invoke_agent": "an agent run: the outermost is the session, nested ones sub-agents",
        "span/AGENT": "an OpenInference agent run, as span/invoke_agent",
        "span/CHAIN": "an OpenInference step: its model and tool spans are read; its own "
        "input and output only when it is the outermost span; a smolagents CodeAgent step's "
        "output and error are its python call's result; a smolagents step's error no call "
        "holds is an error notice",
        "span/create_agent": "the agent's name (metadata)",
    },
    ignored={
        "span/(other)": "spans of no GenAI operation (HTTP, database, framework internals); "
        "the spans under them are read as if under the span above them",
        "span/execute_tool (merged)": "Google ADK's record of the merged responses of calls "
        "run in parallel: each call's own span is read",
        "span/execute_event_loop_cycle": "Strands' event-loop cycles: their messages repeat "
        "those of the model and tool spans under them, which are read",
        "span/embeddings": "embedding calls carry no conversation",
        "span/EMBEDDING": "embedding calls carry no conversation",
        "span/RETRIEVER": "retrieval steps: their documents are not messages",
        "span/RERANKER": "reranking steps: their documents are not messages",
        "span/GUARDRAIL": "guardrail checks: not part of the conversation",
        "span/EVALUATOR": "evaluations: not part of the conversation",
        "span/(other conversation)": "spans of another conversation of the file (read with "
        "sample=<conversation id>)",
        "request/(empty)": "an export request with no spans",
        "span/(repeated)": "a span written again (printed as it started and as it ended, or "
        "by two exporters): the copy that ended is read",
    },
)

_MODEL_OPS = NameSet({"chat", "text_completion", "generate_content", "LLM"})
_TOOL_OPS = NameSet({"execute_tool", "TOOL"})
_AGENT_OPS = NameSet({"invoke_agent", "AGENT"})
_KNOWN_OPS = NameSet(set(RECORDS.mapped) | set(RECORDS.ignored))
_ERROR_CODES = ("STATUS_CODE_ERROR", 2, "2", "ERROR")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
#: The older per-message span events and the role each stands for.
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
#: What a mapping is: decoded JSON is made of dicts, which ``dict`` (an exact type check)
#: accepts before ``Mapping``'s slower ABC check runs; a document passed in may be any mapping.
_MAPS = (dict, Mapping)


# --- OTLP values ----------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": …}``, ``{"arrayValue": {"values": […]}}``…) as a
    plain value; ``intValue`` strings become ints.

    >>> any_value({"intValue": "25"}), any_value({"arrayValue": {"values": [{"boolValue": True}]}})
    (25, [True])
    >>> any_value({"kvlistValue": {"values": [{"key": "a", "value": {"doubleValue": 0.5}}]}})
    {'a': 0.5}
    """
    if not isinstance(value, _MAPS):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            return None
    for key in ("boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "arrayValue" in value:
        inner = value["arrayValue"]
        values = inner.get("values") if isinstance(inner, _MAPS) else None
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        inner = value["kvlistValue"]
        values = inner.get("values") if isinstance(inner, _MAPS) else None
        return attributes_of(values)
    return None


def attributes_of(attributes: Any) -> dict[str, Any]:
    """``[{key, value: AnyValue}]`` as a dict of plain values."""
    out: dict[str, Any] = {}
    if isinstance(attributes, list):
        for item in attributes:
            if isinstance(item, _MAPS) and isinstance(key := item.get("key"), str):
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
    except (TypeError, ValueError):
        return None
    if nanos <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(nanos // 1000 / 1_000_000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat().replace("+00:00", "Z")


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


#: The tool name of the span Google ADK adds after running a response's calls in parallel,
#: for the one event merging their responses (google/adk/telemetry/tracing.py,
#: ``trace_merged_tool_calls``): each call has a span of its own.
_ADK_MERGED = "(merged tools)"


#: Operation names instrumentations write for the semantic conventions' ones: LiteLLM's OTel
#: callback writes its call type (litellm/integrations/opentelemetry.py), OpenLLMetry before
#: its move to ``gen_ai.operation.name`` only ``llm.request.type`` (``LLMRequestTypeValues``).
_OPERATIONS = {
    "completion": "chat",
    "acompletion": "chat",
    "atext_completion": "text_completion",
    "embedding": "embeddings",
    "aembedding": "embeddings",
}
_LLM_REQUEST_TYPES = {"chat": "chat", "completion": "text_completion", "embedding": "embeddings"}
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
    ``llm.request.type``, else ``(other)``."""
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
    step = attributes.get("ai.operationId")
    if isinstance(step, str) and step in _AI_SDK_OPERATIONS:
        return _AI_SDK_OPERATIONS[step]
    head = name.split(" ", 1)[0]
    if head in ("invoke_agent", "execute_tool", "chat", "create_agent") and " " in name:
        return head
    return "(other)"


def _span(raw: Mapping[str, Any], line: int) -> Span | None:
    trace = span_id(raw.get("traceId"), 16)
    own = span_id(raw.get("spanId"), 8)
    if trace is None or own is None:
        return None
    attributes = attributes_of(raw.get("attributes"))
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    events = []
    for event in as_list(raw.get("events")):
        if isinstance(event, _MAPS) and isinstance(event.get("name"), str):
            events.append((event["name"], attributes_of(event.get("attributes"))))
    raw_status = raw.get("status")
    status: Mapping[str, Any] = raw_status if isinstance(raw_status, _MAPS) else {}
    message = status.get("message")
    try:
        start = int(raw.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        start = 0
    return Span(
        trace_id=trace,
        span_id=own,
        parent_id=span_id(raw.get("parentSpanId"), 8),
        name=str(name),
        op=operation(str(name), attributes),
        start=start,
        started_at=nano_time(raw.get("startTimeUnixNano")),
        ended_at=nano_time(raw.get("endTimeUnixNano")),
        attributes=attributes,
        events=events,
        failed=status.get("code") in _ERROR_CODES,
        status_message=message if isinstance(message, str) and message else None,
        line=line,
    )


def is_console_span(value: Any) -> bool:
    """A span as the OpenTelemetry SDK's ``ReadableSpan.to_json()`` writes it (what
    ``ConsoleSpanExporter`` prints, one object a span): ``context`` with its ids, ``parent_id``."""
    return (
        isinstance(value, _MAPS)
        and isinstance(context := value.get("context"), _MAPS)
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


def _console_span(raw: Mapping[str, Any], line: int) -> Span | None:
    """A span of :func:`is_console_span`'s shape: attributes and event attributes are plain
    values already, times ISO strings, the status ``{"status_code", "description"}``."""
    context = raw["context"]
    trace = _console_id(context.get("trace_id"), 16)
    own = _console_id(context.get("span_id"), 8)
    if trace is None or own is None:
        return None
    raw_attributes = raw.get("attributes")
    attributes = dict(raw_attributes) if isinstance(raw_attributes, _MAPS) else {}
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    events = []
    for event in as_list(raw.get("events")):
        if isinstance(event, _MAPS) and isinstance(event.get("name"), str):
            values = event.get("attributes")
            events.append((event["name"], dict(values) if isinstance(values, _MAPS) else {}))
    raw_status = raw.get("status")
    status: Mapping[str, Any] = raw_status if isinstance(raw_status, _MAPS) else {}
    message = status.get("description")
    start, end = iso_nanos(raw.get("start_time")), iso_nanos(raw.get("end_time"))
    return Span(
        trace_id=trace,
        span_id=own,
        parent_id=_console_id(raw.get("parent_id"), 8),
        name=str(name),
        op=operation(str(name), attributes),
        start=start,
        started_at=nano_time(start),
        ended_at=nano_time(end),
        attributes=attributes,
        events=events,
        failed=status.get("status_code") in _ERROR_CODES,
        status_message=message if isinstance(message, str) and message else None,
        line=line,
    )


def jaeger_traces(value: Any) -> list[Mapping[str, Any]] | None:
    """The traces of a Jaeger JSON export (the query service's ``{"data": [trace…]}``, what
    its UI's "Download JSON" saves, or one ``{"traceID", "spans", "processes"}``), else None."""
    if not isinstance(value, _MAPS):
        return None
    if isinstance(value.get("spans"), list) and "traceID" in value:
        return [value]
    data = value.get("data")
    if isinstance(data, list) and data and isinstance(data[0], _MAPS) and "spans" in data[0]:
        return [trace for trace in data if isinstance(trace, _MAPS)]
    return None


def _tags(tags: Any) -> dict[str, Any]:
    """Jaeger's ``[{key, type, value}]`` as a dict (its values are typed JSON already)."""
    return {
        t["key"]: t.get("value")
        for t in as_list(tags)
        if isinstance(t, _MAPS) and isinstance(t.get("key"), str)
    }


def _jaeger_span(raw: Mapping[str, Any], line: int) -> Span | None:
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
            if isinstance(r, _MAPS) and r.get("refType") == "CHILD_OF"
        ),
        None,
    )
    events = []
    for log in as_list(raw.get("logs")):
        fields = _tags(log.get("fields")) if isinstance(log, _MAPS) else {}
        name = fields.pop("event", None)
        if isinstance(name, str):
            events.append((name, fields))
    start = as_int(raw.get("startTime")) or 0
    duration = as_int(raw.get("duration"))
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
        started_at=nano_time(start * 1000),
        ended_at=nano_time((start + duration) * 1000) if duration is not None else None,
        attributes=attributes,
        events=events,
        failed=failed,
        status_message=message if isinstance(message, str) and message else None,
        line=line,
    )


def raw_spans(request: Any) -> Iterator[Mapping[str, Any]]:
    """Every span object of an ``ExportTraceServiceRequest``."""
    if not isinstance(request, _MAPS):
        return
    for resource in as_list(request.get("resourceSpans")):
        if not isinstance(resource, _MAPS):
            continue
        scopes = resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans")
        for scope in as_list(scopes):
            if isinstance(scope, _MAPS):
                yield from (s for s in as_list(scope.get("spans")) if isinstance(s, _MAPS))


def record_type(op: str) -> str:
    """The accounting type of a span of operation ``op``."""
    kind = f"span/{op}"
    return kind if kind in _KNOWN_OPS else "span/(other)"


# --- detection ------------------------------------------------------------------------------


def _is_request(value: Any) -> bool:
    return isinstance(value, _MAPS) and isinstance(value.get("resourceSpans"), list)


def _classify(value: Any) -> int:
    if _is_request(value) or is_console_span(value) or jaeger_traces(value) is not None:
        return DISTINCTIVE
    return NOT_MINE


def detect(source: Source) -> Evidence:
    """``{"resourceSpans": [...]}`` objects: one per line, or one document; spans as
    ``ConsoleSpanExporter`` prints them, one per line or a list of them; a Jaeger export."""
    if source.is_document and isinstance(source.document, _MAPS):
        return Evidence.of([source.document], _classify, "no resourceSpans")
    return Evidence.of(source.head_values(), _classify, "no resourceSpans")


# --- messages -------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return codec.loads(value)
        except ValueError:
            return value
    return value


def unflatten(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened indexed attributes as a list of nested dicts.

    >>> unflatten({"m.0.message.role": "user", "m.0.message.tool_calls.0.tool_call.id": "c1"},
    ...           "m")
    [{'message': {'role': 'user', 'tool_calls': [{'tool_call': {'id': 'c1'}}]}}]
    """
    start = prefix + "."
    root = _nested([(k[len(start) :], v) for k, v in attributes.items() if k.startswith(start)])
    listed = _listed(root)
    return [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []


def _nested(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """Dotted keys and their values as nested dicts (a later key wins where they clash)."""
    root: dict[str, Any] = {}
    for key, value in items:
        node = root
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return root


def _indexed(
    attributes: Mapping[str, Any],
    prefix: str,
    memo: dict[str, tuple[list[tuple[str, Any]], dict[str, Any] | None]] | None,
) -> list[dict[str, Any]] | None:
    """OpenInference's flattened ``prefix.N.message.*`` attributes as Chat messages, as
    :func:`unflatten` and :func:`_openinference` make them; None when the span has none.

    Every model span repeats the history, so the attributes are grouped by index first: an
    index whose attributes equal the ones it had in the span before (``memo``, updated) is
    the message made then, not made again."""
    start = prefix + "."
    size = len(start)
    groups: dict[str, list[tuple[str, Any]]] = {}
    for key, value in attributes.items():
        if key.startswith(start):
            rest = key[size:]
            groups.setdefault(rest.split(".", 1)[0], []).append((rest, value))
    if not groups:
        return None
    if not all(index.isdigit() for index in groups):
        return []  # not a list of messages (as unflatten reads it)
    out: list[dict[str, Any]] = []
    made: dict[str, tuple[list[tuple[str, Any]], dict[str, Any] | None]] = {}
    for index in sorted(groups, key=int):
        items = groups[index]
        known = memo.get(index) if memo is not None else None
        message: dict[str, Any] | None
        if known is not None and known[0] == items:
            message = known[1]
        else:
            node = _listed(_nested(items)[index])
            message = _openinference(node) if isinstance(node, dict) else None
        made[index] = (items, message)
        if message is not None:
            out.append(message)
    if memo is not None:
        memo.clear()
        memo.update(made)
    return out


def _listed(node: Any) -> Any:
    """Dicts whose keys are all indices become lists in index order."""
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listed(node[k]) for k in sorted(node, key=int)]
    return {k: _listed(v) for k, v in node.items()}


def _text_of(content: Any) -> str | None:
    return content if isinstance(content, str) and content else None


#: Private keys of the Chat messages :func:`_from_parts` makes, read by :class:`_Builder`.
#: ``_PART``: a message that is one part with no place in a Chat message (a server tool's call
#: or response, a compaction), made an entry of its own in the order of the parts.
_PART = "turnfold.part"
#: ``_IMAGES``: the inline images of a user's prompt or a tool's response (the entries that
#: show images: model.UserMessage, model.ToolResult), as ``[media type, base64 data]`` pairs.
_IMAGES = "turnfold.images"
#: ``_UNSHOWN``: why parts of the message are named rather than shown, warned when the message
#: is fed (a model span's input repeats the history, converted again for every span).
_UNSHOWN = "turnfold.unshown"
#: Parts of the GenAI message schemas (gen-ai-input-messages.json, gen-ai-output-messages.json)
#: that are entries of their own: ``ServerToolCallPart``, ``ServerToolCallResponsePart``,
#: ``CompactionPart``.
_ENTRY_PARTS = NameSet({"server_tool_call", "server_tool_call_response", "compaction"})
#: Parts that carry data by value (``BlobPart``), by URI (``UriPart``) or by a provider's file
#: id (``FilePart``).
_MEDIA_PARTS = NameSet({"blob", "uri", "file"})
#: ``_FAILED``: a tool message whose result states it failed (a Converse ``toolResult`` of
#: ``status: "error"``), read by :class:`_Builder` when no tool span settles its call.
_FAILED = "turnfold.failed"


# --- Strands' Bedrock Converse content --------------------------------------------------------

#: Converse blocks whose text is shown: a guardrail's content, a cited answer.
_CONVERSE_TEXTS = NameSet({"guardContent", "citationsContent"})


def is_converse(value: Any) -> bool:
    """A list of Bedrock Converse content blocks: dicts of a Converse key each and no ``type``
    (Chat, Anthropic and GenAI parts always carry one).

    >>> is_converse([{"text": "hi"}, {"toolUse": {"toolUseId": "c1", "name": "ls", "input": {}}}])
    True
    >>> is_converse([{"type": "text", "text": "hi"}]), is_converse([])
    (False, False)
    """
    return (
        type(value) is list
        and bool(value)
        and all(
            isinstance(block, _MAPS) and "type" not in block and key_of(block) is not None
            for block in value
        )
    )


def converse_parts(blocks: list[Any]) -> list[Any]:
    """Converse content blocks as the GenAI parts Strands' tracer makes of them when it writes
    the latest conventions (strands/telemetry/tracer.py, ``_map_content_blocks_to_otel_parts``):
    ``text``, ``toolUse`` and ``toolResult`` as the schemas' parts (a result's ``status`` kept,
    which that mapping drops), ``interruptResponse`` as its ``interrupt_response``, any other
    block as ``{"type": its key, "content": its value}``. Its older mode writes the blocks
    themselves (``serialize(message["content"])``), so the two modes read the same.

    >>> converse_parts([{"text": "hi"}, {"cachePoint": {"type": "default"}}])
    [{'type': 'text', 'content': 'hi'}, {'type': 'cachePoint', 'content': {'type': 'default'}}]
    """
    parts: list[Any] = []
    for block in blocks:
        if not isinstance(block, _MAPS):
            parts.append(block)  # warned about by _from_parts
        elif "interruptResponse" in block:
            value = block["interruptResponse"]
            value = value if isinstance(value, _MAPS) else {}
            parts.append({"type": "interrupt_response", "id": value.get("interruptId"),
                          "response": value.get("response")})  # fmt: skip
        elif "text" in block:
            parts.append({"type": "text", "content": block["text"]})
        elif "toolUse" in block:
            use = block["toolUse"] if isinstance(block["toolUse"], _MAPS) else {}
            parts.append({"type": "tool_call", "name": use.get("name"), "id": use.get("toolUseId"),
                          "arguments": use.get("input")})  # fmt: skip
        elif "toolResult" in block:
            result = block["toolResult"] if isinstance(block["toolResult"], _MAPS) else {}
            parts.append({"type": "tool_call_response", "id": result.get("toolUseId"),
                          "response": result.get("content"),
                          "status": result.get("status")})  # fmt: skip
        else:
            parts += [{"type": key, "content": value} for key, value in block.items()]
    return parts


def converse_result(content: list[Any]) -> tuple[str | None, list[ImageData]]:
    """A Converse ``toolResult``'s content as text and images, as the strands loader reads it
    (:func:`~turnfold.formats.frameworks.strands.tool_result_content`), a block of no known
    kind as its JSON.

    >>> converse_result([{"text": "3"}, {"json": {"sum": 3}}])
    ('3\\n{\\n  "sum": 3\\n}', [])
    """
    text, images, _ = tool_result_content(content, stringify)
    return text, images


def _from_parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A GenAI message (``{role, parts}``, or older ``{role, content, tool_calls}``) as Chat
    messages, in the order of its parts; a ``tool_call_response`` part is a tool message of
    its own, a server tool's call or response and a compaction a message of their own
    (``_PART``). Strands' parts for Converse blocks the schemas have no type for
    (:func:`converse_parts`) are read as Strands means them.

    >>> [m.get("content") or m[_PART]["type"] for m in _from_parts({"role": "assistant",
    ...     "parts": [{"type": "server_tool_call", "name": "web_search", "server_tool_call": {}},
    ...               {"type": "text", "content": "Sunny."}]})]
    ['server_tool_call', 'Sunny.']
    """
    role = message.get("role")
    role = role if isinstance(role, str) else "assistant"
    parts = message.get("parts")
    if not isinstance(parts, list):
        return [_older_message(role, message)]
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    images: list[list[str]] = []
    unshown: list[str] = []
    out: list[dict[str, Any]] = []

    def flush() -> None:
        """The parts gathered so far as one message, before a part that is a message."""
        if texts or reasoning or calls or images or unshown:
            out.append(_chat(role, texts[:], reasoning[:], calls[:], images[:], unshown[:]))
            for gathered in (texts, reasoning, calls, images, unshown):
                gathered.clear()

    for part in parts:
        if not isinstance(part, _MAPS):
            unshown.append("a message part that is not an object was skipped")
            continue
        kind = part.get("type")
        if isinstance(kind, str) and kind in _PYDANTIC_AI_PARTS:
            part = pydantic_ai_part(part, kind)
            kind = part.get("type")
        content = part.get("content")
        if kind == "text" and isinstance(content, str):
            texts.append(content)
        elif kind in ("reasoning", "thinking") and isinstance(content, str):
            reasoning.append(content)
        elif kind == "tool_call":
            calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
        elif kind == "tool_call_response" or kind in _ENTRY_PARTS:
            flush()
            if kind == "tool_call_response":
                out.append(_response_message(part))
            else:
                out.append({"role": role, _PART: part})
        elif kind in _MEDIA_PARTS or (kind in MEDIA_KEYS and isinstance(content, _MAPS)):
            image = _media_image(part, str(kind))
            # In a tool's message, media go with the response they follow.
            into = (
                out[-1]
                if role == "tool" and out and not texts and "tool_call_id" in out[-1]
                else None
            )
            if image is not None and (role in ("user", "assistant") or into is not None):
                (images if into is None else into.setdefault(_IMAGES, [])).append(image)
            else:
                line = _media_line(part, str(kind))
                if into is not None:
                    into["content"] = f"{into['content']}\n{line}" if into["content"] else line
                else:
                    texts.append(line)
                if image is not None:
                    # Prompts, the model's texts and tool results hold images: one of another
                    # role's message (a system prompt's) is named, and said not to be shown.
                    unshown.append(
                        f"an image ({image[0]}) in a message of role {role!r} is named, not shown: "
                        "only prompts, the model's texts and tool results show images"
                    )
        elif kind == "reasoningContent":
            thinking = thinking_of(content)
            if thinking is not None and thinking.text:
                reasoning.append(thinking.text)
            elif thinking is not None:  # a signature alone, or redacted: an entry of its own
                flush()
                out.append({"role": role, _PART: part})
            else:
                unshown.append("a reasoningContent part without reasoning was skipped")
        elif kind in _CONVERSE_TEXTS:
            text = guard_text(content) if kind == "guardContent" else citations_text(content)
            if text:
                texts.append(text)
        elif kind == "cachePoint":
            pass  # a prompt-cache marker (Converse's cachePoint block): nothing to show
        elif kind == "interrupt_response":
            texts.append(f"[interrupt response: {stringify(part.get('response'))}]")
        else:
            label = kind if isinstance(kind, str) and kind else "part"
            texts.append(f"[{label}]")
            unshown.append(f"a message part of type {label!r} is shown by its name only")
    if texts or reasoning or calls or images or unshown or not out:
        out.append(_chat(role, texts, reasoning, calls, images, unshown))
    return out


#: The part types pydantic-ai's instrumentation writes where the schemas have others
#: (pydantic_ai/_otel_messages.py): before its version 4, ``binary`` for a blob and
#: ``image-url``… for a uri; in every version ``thinking`` for reasoning (read as such).
_PYDANTIC_AI_PARTS = NameSet({"binary", "image-url", "audio-url", "video-url", "document-url"})


def pydantic_ai_part(part: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """A part of :data:`_PYDANTIC_AI_PARTS` as the schemas' part it stands for.

    >>> pydantic_ai_part({"type": "image-url", "url": "https://a.b/c.png"}, "image-url")
    {'type': 'uri', 'modality': 'image', 'uri': 'https://a.b/c.png'}
    """
    if kind == "binary":
        blob = {"type": "blob", "mime_type": part.get("media_type")}
        return blob if "content" not in part else {**blob, "content": part["content"]}
    uri: dict[str, Any] = {"type": "uri", "modality": kind.removesuffix("-url")}
    return uri if "url" not in part else {**uri, "uri": part["url"]}


def _response_message(part: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_call_response`` part as a tool message; a response that is Converse tool
    result content (Strands') is read as such, its ``status`` kept (:func:`converse_parts`)."""
    response = part.get("response", part.get("result"))
    message: dict[str, Any] = {"role": "tool", "tool_call_id": part.get("id")}
    if is_converse(response):
        text, shown = converse_result(response)
        message["content"] = text or ""
        if shown:
            message[_IMAGES] = [[image.media_type, image.data or ""] for image in shown]
    else:
        message["content"] = _text(response)
    if part.get("status") == "error":
        message[_FAILED] = True
    return message


def _chat(
    role: str,
    texts: list[str],
    reasoning: list[str],
    calls: list[dict[str, Any]],
    images: list[list[str]],
    unshown: list[str],
) -> dict[str, Any]:
    chat: dict[str, Any] = {"role": role}
    if texts:
        chat["content"] = "\n\n".join(texts)
    if reasoning:
        chat["reasoning_content"] = "\n\n".join(reasoning)
    if calls:
        chat["tool_calls"] = calls
    if images:
        chat[_IMAGES] = images
    if unshown:
        chat[_UNSHOWN] = unshown
    return chat


def _media_image(part: Mapping[str, Any], kind: str) -> list[str] | None:
    """A media part that is an image whose bytes are in the trace, as ``[media type, base64
    data]``: a ``BlobPart`` of an image, or a Converse ``image`` block (Strands' part
    ``{"type": "image", "content": {"format", "source"}}``: its tracer writes no bytes)."""
    if kind in MEDIA_KEYS:
        image = image_of(part.get("content")) if kind == "image" else None
        return [image.media_type, image.data or ""] if image is not None else None
    if kind != "blob":
        return None
    data, mime = part.get("content"), part.get("mime_type")
    mime = mime if isinstance(mime, str) and mime else None
    is_image = part.get("modality") == "image" or (mime or "").startswith("image/")
    return [mime or "image", data] if is_image and isinstance(data, str) and data else None


def _media_line(part: Mapping[str, Any], kind: str) -> str:
    """A media part as a line naming it: a Converse media block as the strands loader names it;
    a blob, URI or file part (a URI is never fetched, spec X-1), then the transcript the
    schemas give audio.

    >>> _media_line({"type": "uri", "modality": "image", "uri": "https://a.b/c.png"}, "uri")
    '[attachment: https://a.b/c.png]'
    """
    if kind in MEDIA_KEYS:
        return converse_attachment(kind, part.get("content"))
    media = part.get("mime_type")
    line = attachment_line(
        {
            "name": part.get("uri") or part.get("file_id") or part.get("modality") or kind,
            "media_type": media if isinstance(media, str) else None,
            "source": {"data": part.get("content") if kind == "blob" else None},
        }
    )
    transcript = part.get("transcript")
    return f"{line}\n{transcript}" if isinstance(transcript, str) and transcript else line


#: Where a server tool's response keeps its output, by provider: OpenAI's code interpreter
#: ``outputs``, Google's code execution ``output`` / ``result``, Anthropic's ``*_tool_result``
#: ``content``, a web search's ``results``.
_SERVER_OUTPUTS = ("output", "outputs", "result", "results", "content")
#: Gemini's ``CodeExecutionResult.outcome`` values that are failures.
_FAILED_OUTCOMES = frozenset({"OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"})


def server_tool_outcome(response: Any) -> tuple[ToolStatus, ToolResult]:
    """The status and result a ``server_tool_call_response``'s payload reports. The schemas
    leave the payload to the provider (``GenericServerToolCallResponse``: only ``type``), so
    it is ``success`` unless it states a failure as the providers write one (``is_error``, an
    ``error``, an ``error_code`` or a ``*_error`` type, a ``failed`` status or outcome); the
    whole payload stays the result's structured data.

    >>> server_tool_outcome({"type": "code_interpreter", "outputs": [{"logs": "4"}]})[1].text
    '4'
    >>> server_tool_outcome({"type": "web_search_tool_result",
    ...                      "content": {"type": "web_search_tool_result_error"}})[0]
    'error'
    """
    if not isinstance(response, _MAPS):
        text, images = output_content(response)
        return "success", text_result(text, images=images)
    value = next((response[k] for k in _SERVER_OUTPUTS if response.get(k) is not None), None)
    if value is not None:
        text, images = output_content(value)
    else:
        rest = {k: v for k, v in response.items() if k != "type"}
        text, images = (stringify(rest) if rest else None), []
    status: ToolStatus = (
        "error" if _states_failure(response) or _states_failure(value) else "success"
    )
    return status, text_result(text, images=images, structured=plain_copy(dict(response)))


def _states_failure(value: Any) -> bool:
    if not isinstance(value, _MAPS):
        return False
    kind = value.get("type")
    return (
        value.get("is_error") is True
        or value.get("isError") is True
        or bool(value.get("error"))
        or "error_code" in value
        or (isinstance(kind, str) and kind.endswith("_error"))
        or value.get("status") == "failed"
        or value.get("outcome") in _FAILED_OUTCOMES
    )


def _older_message(role: str, message: Mapping[str, Any]) -> dict[str, Any]:
    chat: dict[str, Any] = {"role": role}
    content = message.get("content")
    if content is not None:
        chat["content"] = content if isinstance(content, (str, list)) else stringify(content)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        chat["tool_calls"] = [
            _call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {})
                  .get("arguments"))
            for c in calls if isinstance(c, _MAPS)
        ]  # fmt: skip
    call_id = message.get("tool_call_id") or message.get("id")
    if role == "tool" and call_id is not None:
        chat["tool_call_id"] = call_id
    return chat


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else stringify(value)


def _openinference(message: Mapping[str, Any]) -> dict[str, Any]:
    """An unflattened ``llm.*_messages.N`` entry (``{"message": {role, content, …}}``)."""
    inner = message.get("message")
    inner = inner if isinstance(inner, _MAPS) else {}
    role = inner.get("role") if isinstance(inner.get("role"), str) else "assistant"
    chat: dict[str, Any] = {"role": role}
    content = inner.get("content")
    if not isinstance(content, str) and isinstance(inner.get("contents"), list):
        texts = [
            (c.get("message_content") or {}).get("text")
            for c in inner["contents"] if isinstance(c, _MAPS)
        ]  # fmt: skip
        content = "\n\n".join(t for t in texts if isinstance(t, str)) or None
    if isinstance(content, str):
        chat["content"] = content
    calls = [c.get("tool_call") for c in as_list(inner.get("tool_calls")) if isinstance(c, _MAPS)]
    if calls:
        chat["tool_calls"] = [
            _call(c.get("id"), (c.get("function") or {}).get("name"),
                  (c.get("function") or {}).get("arguments"))
            for c in calls if isinstance(c, _MAPS)
        ]  # fmt: skip
    if inner.get("tool_call_id") is not None:
        chat["tool_call_id"] = inner["tool_call_id"]
    if isinstance(inner.get("name"), str):
        chat["name"] = inner["name"]
    return chat


def _genai_list(value: Any, memo: _History | None = None) -> list[dict[str, Any]] | None:
    text = value if isinstance(value, str) else None
    if memo is not None and text is not None:
        grown = memo.grown(text)
        if grown is not None:
            return grown
    value = _json(value)
    if not isinstance(value, list):
        return None
    out = _converted(value)
    if memo is not None and text is not None:
        memo.keep(text, out)
    return out


def _converted(messages: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, _MAPS):
            out += _from_parts(message)
    return out


class _History:
    """The last ``gen_ai.input.messages`` text of one agent's model spans and its messages.

    Each model call's input is the one before it with the new messages appended, and an
    instrumentor writes the same messages as the same text: when a text is the last one with
    ``,`` and more elements where its closing ``]`` was, only those elements are decoded (JSON
    reads a prefix the same whatever follows it), the earlier ones are the same messages."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.messages: list[dict[str, Any]] = []
        #: OpenInference's form: the last input's attributes and message for each index.
        self.indexed: dict[str, tuple[list[tuple[str, Any]], dict[str, Any] | None]] = {}
        #: The last input :meth:`_Builder.add_new` counted by content, and its counts.
        self.counted: list[dict[str, Any]] = []
        self.occurrences: Counter[str] = Counter()

    def grown(self, text: str) -> list[dict[str, Any]] | None:
        """The messages of ``text`` when it extends the last text, else None."""
        last = self.text
        if last is None or len(text) <= len(last) or text[len(last) - 1] != ",":
            return None
        if not text.startswith(last[:-1]):
            return None
        tail = _json("[" + text[len(last) :])
        if not isinstance(tail, list):
            return None
        self.keep(text, self.messages + _converted(tail))
        return self.messages

    def keep(self, text: str, messages: list[dict[str, Any]]) -> None:
        # Only a non-empty array closed by its last character can be extended as above.
        grows = len(text) > 2 and text[0] == "[" and text[-1] == "]" and bool(messages)
        self.text, self.messages = (text, messages) if grows else (None, [])


def _flattened_legacy(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``gen_ai.prompt.N.role/content`` and ``gen_ai.completion.N.*`` (OpenLLMetry's form)."""
    out = []
    for message in unflatten(attributes, prefix):
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            message = {**message, "tool_calls": [
                {"id": c.get("id"), "function": {"name": c.get("name"),
                                                  "arguments": c.get("arguments")}}
                for c in calls if isinstance(c, _MAPS)
            ]}  # fmt: skip
        out.append(_older_message(str(message.get("role") or "assistant"), message))
    return out


def _event_messages(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for name, attributes in span.events:
        if name == _DETAILS_EVENT:
            inputs += _genai_list(attributes.get("gen_ai.input.messages")) or []
            outputs += _genai_list(attributes.get("gen_ai.output.messages")) or []
        elif name in _MESSAGE_EVENTS:
            raw = attributes.get("gen_ai.event.content", attributes.get("content"))
            body = _json(raw)
            role = _MESSAGE_EVENTS[name]
            if is_converse(body):
                # Strands' older mode: the message's Converse blocks; a user message that holds
                # toolResult blocks is a gen_ai.tool.message (tracer._get_event_name_for_message)
                role = "user" if role == "tool" else role
                inputs += _from_parts({"role": role, "parts": converse_parts(body)})
                continue
            body = body if isinstance(body, _MAPS) else {"content": _plain(raw, body)}
            fields = {**attributes, **body}
            inputs.append(_older_message(role, fields))
        elif name == "gen_ai.choice":
            raw = attributes.get("gen_ai.event.content", attributes.get("message"))
            body = _json(raw)
            if is_converse(body):  # Strands' model span: the reply's Converse blocks
                outputs += _from_parts({"role": "assistant", "parts": converse_parts(body)})
                continue
            body = (
                body.get("message", body)
                if isinstance(body, _MAPS)
                else {"content": _plain(raw, body)}
            )
            outputs.append(_older_message("assistant", body if isinstance(body, _MAPS) else {}))
    return inputs, outputs


def _plain(raw: Any, decoded: Any) -> Any:
    """An event's content that is no message object: a list as decoded (content parts), else
    the text as written. Strands' agent span ends with ``str(AgentResult)``, plain text that
    may happen to read as JSON (an answer ``11``)."""
    return decoded if isinstance(decoded, list) or not isinstance(raw, str) else raw


def model_messages(
    span: Span, history: _History | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A span's input and output messages in Chat Completions shape, from whichever
    convention recorded them; ``history`` holds the last input of the same agent's model
    spans, which this one's input usually extends."""
    a = span.attributes
    inputs = _genai_list(a.get("gen_ai.input.messages"), history)
    outputs = _genai_list(a.get("gen_ai.output.messages"))
    if inputs is None:
        inputs = _indexed(a, "llm.input_messages", history.indexed if history else None)
    if outputs is None:
        outputs = _indexed(a, "llm.output_messages", None)
    if inputs is None and any(k.startswith("gen_ai.prompt.") for k in a):
        inputs = _flattened_legacy(a, "gen_ai.prompt")
    if outputs is None and any(k.startswith("gen_ai.completion.") for k in a):
        outputs = _flattened_legacy(a, "gen_ai.completion")
    if inputs is None and "ai.prompt.messages" in a:
        listed = _json(a["ai.prompt.messages"])
        if isinstance(listed, list):
            inputs = _converted([ai_sdk_message(m) for m in listed if isinstance(m, _MAPS)])
    if outputs is None and any(k in a for k in _AI_SDK_RESPONSE):
        outputs = _from_parts(ai_sdk_response(a))
    event_in, event_out = _event_messages(span)
    return (inputs if inputs is not None else event_in), (
        outputs if outputs is not None else event_out
    )


#: Where the Vercel AI SDK puts a provider call's response (``recordSpan`` attributes).
_AI_SDK_RESPONSE = ("ai.response.text", "ai.response.toolCalls", "ai.response.object")


def _ai_sdk_media(part: Mapping[str, Any]) -> dict[str, Any]:
    """An AI SDK ``image`` or ``file`` part as a blob (base64 data) or uri part."""
    data = part.get("image", part.get("data"))
    media = part.get("mediaType", part.get("mimeType"))
    modality = "image" if part.get("type") == "image" else None
    if isinstance(data, str) and data.startswith(("http://", "https://")):
        return {"type": "uri", "uri": data, "mime_type": media, "modality": modality}
    return {"type": "blob", "content": data, "mime_type": media, "modality": modality}


def ai_sdk_message(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Vercel AI SDK message (``ai.prompt.messages``: ``{role, content}``, the content a
    string or ``text`` / ``reasoning`` / ``image`` / ``file`` / ``tool-call`` /
    ``tool-result`` parts) as a GenAI message of parts. A tool result's ``output`` (v5: a
    ``{type, value}`` whose ``error-*`` types are failures) or ``result`` (v4) is the
    response."""
    content = message.get("content")
    if not isinstance(content, list):
        return message  # a string: the Chat shape already
    parts: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, _MAPS) else None
        if not isinstance(part, _MAPS):
            parts.append(part)
        elif kind in ("text", "reasoning"):
            parts.append({"type": kind, "content": part.get("text")})
        elif kind == "tool-call":
            arguments = part.get("input", part.get("args"))
            parts.append({"type": "tool_call", "id": part.get("toolCallId"),
                          "name": part.get("toolName"), "arguments": arguments})  # fmt: skip
        elif kind == "tool-result":
            output = part.get("output", part.get("result"))
            failed = part.get("isError") is True
            if (
                isinstance(output, _MAPS)
                and isinstance(output.get("type"), str)
                and "value" in output
            ):
                failed = failed or output["type"].startswith("error")
                output = output["value"]
            response = {"type": "tool_call_response", "id": part.get("toolCallId"),
                        "response": output}  # fmt: skip
            parts.append({**response, "status": "error"} if failed else response)
        elif kind in ("image", "file"):
            parts.append(_ai_sdk_media(part))
        else:
            parts.append(part)  # of no type the schemas have: shown by its name
    return {"role": message.get("role"), "parts": parts}


def ai_sdk_response(a: Mapping[str, Any]) -> dict[str, Any]:
    """A provider call's response as the AI SDK records it: ``ai.response.reasoning``,
    ``ai.response.text`` (``ai.response.object`` for an object), ``ai.response.toolCalls``
    (``[{toolCallId, toolName, input | args}]``), as one GenAI assistant message."""
    parts: list[dict[str, Any]] = []
    reasoning = a.get("ai.response.reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "content": reasoning})
    text = a.get("ai.response.text") or a.get("ai.response.object")
    if isinstance(text, str) and text:
        parts.append({"type": "text", "content": text})
    for call in as_list(_json(a.get("ai.response.toolCalls"))):
        if isinstance(call, _MAPS):
            arguments = call.get("input", call.get("args"))
            parts.append({"type": "tool_call", "id": call.get("toolCallId"),
                          "name": call.get("toolName"), "arguments": arguments})  # fmt: skip
    return {"role": "assistant", "parts": parts}


def _fingerprint(message: Mapping[str, Any]) -> str:
    return codec.dumps(message, default=str, sort_keys=True)


def span_usage(a: Mapping[str, Any]) -> Usage | None:
    """``gen_ai.usage.*`` (and the older ``prompt_tokens``) or ``llm.token_count.*``."""

    def first(*keys: str) -> int | None:
        for key in keys:
            count = as_int(a.get(key))
            if count is not None:
                return count
        return None

    usage = Usage(
        input_tokens=first("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                           "llm.token_count.prompt", "ai.usage.inputTokens",
                           "ai.usage.promptTokens"),
        output_tokens=first("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                            "llm.token_count.completion", "ai.usage.outputTokens",
                            "ai.usage.completionTokens"),
        cache_read_tokens=first("gen_ai.usage.cache_read.input_tokens",
                                "gen_ai.usage.cache_read_input_tokens",
                                "llm.token_count.prompt_details.cache_read",
                                "ai.usage.cachedInputTokens"),
        cache_write_tokens=first("gen_ai.usage.cache_creation.input_tokens",
                                 "gen_ai.usage.cache_creation_input_tokens",
                                 "llm.token_count.prompt_details.cache_write"),
        reasoning_tokens=first("gen_ai.usage.reasoning.output_tokens",
                               "llm.token_count.completion_details.reasoning",
                               "ai.usage.reasoningTokens"),
    )  # fmt: skip
    return None if usage == Usage() else usage


#: Where pydantic-ai's instrumentation before its version 3 puts a tool span's arguments and
#: result (pydantic_ai/_instrumentation.py: ``tool_arguments_attr``, ``tool_result_attr``).
_PYDANTIC_AI_ARGUMENTS = "tool_arguments"
_PYDANTIC_AI_RESULT = "tool_response"


def tool_arguments(span: Span) -> Any:
    """A tool span's arguments, for a call no model span asked for: ``gen_ai.tool.call.arguments``
    (pydantic-ai's older ``tool_arguments``), OpenInference's ``input.value`` (smolagents' as
    the tool was called: :func:`_smolagents_arguments`), the ``tool_call`` part of its input
    messages (Strands' latest mode) or Strands' older ``gen_ai.tool.message`` event, whose
    ``content`` is the tool's input (strands/telemetry/tracer.py, ``start_tool_call_span``)."""
    a = span.attributes
    if "gen_ai.tool.call.arguments" in a:
        value = parse_arguments(a["gen_ai.tool.call.arguments"])
        if (
            isinstance(value, dict)
            and "input_str" in value
            and value.keys() <= _LANGCHAIN_TOOL_START
        ):
            inputs = value.get("inputs")
            return inputs if isinstance(inputs, dict) and inputs else value["input_str"]
        return value
    if _PYDANTIC_AI_ARGUMENTS in a:
        return parse_arguments(a[_PYDANTIC_AI_ARGUMENTS])
    if "ai.toolCall.args" in a:
        return parse_arguments(a["ai.toolCall.args"])
    if "input.value" in a:
        return _smolagents_arguments(parse_arguments(a["input.value"]), a)
    inputs, _ = model_messages(span)
    for message in inputs:
        for call in as_list(message.get("tool_calls")):
            return parse_arguments((call.get("function") or {}).get("arguments"))
    for name, attributes in span.events:
        if name == "gen_ai.tool.message" and "content" in attributes:
            return parse_arguments(attributes["content"])
    return None


#: The parameters OpenInference's smolagents instrumentor binds a tool span's ``input.value``
#: to: those of ``Tool.__call__(self, *args, sanitize_inputs_outputs=False, **kwargs)``
#: (openinference-instrumentation-smolagents ``_ToolCallWrapper``, smolagents ``tools.py``).
_SMOLAGENTS_CALL = frozenset({"args", "sanitize_inputs_outputs", "kwargs"})


def _smolagents_arguments(value: Any, attributes: Mapping[str, Any]) -> Any:
    """A smolagents tool's arguments as the model gave them, not the wrapper of its call:
    keyword arguments as they are, one dict of the tool's inputs as ``Tool.__call__`` takes it,
    positional ones (a CodeAgent's ``final_answer("done")``) by the names of the tool's inputs
    (``tool.parameters``, in the order ``forward`` takes them).

    >>> _smolagents_arguments({"args": ["done"], "sanitize_inputs_outputs": False, "kwargs": {}},
    ...                       {"tool.parameters": '{"answer": {"type": "any"}}'})
    {'answer': 'done'}
    """
    if not isinstance(value, _MAPS) or set(value) != _SMOLAGENTS_CALL:
        return value
    args, kwargs = value["args"], value["kwargs"]
    if not isinstance(args, list) or not isinstance(kwargs, _MAPS):
        return value
    if len(args) == 1 and not kwargs and isinstance(args[0], _MAPS):
        return args[0]
    names = _json(attributes.get("tool.parameters"))
    names = list(names) if isinstance(names, _MAPS) else []
    if len(args) > len(names):
        return value
    return {**dict(zip(names, args, strict=False)), **kwargs}


#: What OpenLLMetry's LangChain instrumentation puts in a tool span's
#: ``gen_ai.tool.call.arguments``: the callback's arguments (``on_tool_start``).
_LANGCHAIN_TOOL_START = frozenset({"input_str", "tags", "metadata", "inputs", "kwargs"})


def langchain_tool_message(span: Span) -> Mapping[str, Any] | None:
    """The fields of the ``ToolMessage`` OpenLLMetry's LangChain instrumentation writes as a
    tool span's result: ``{"output": <the message as langchain's dumpd serializes it>}``
    (``{"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], "kwargs": {content,
    tool_call_id, status…}}``), else None."""
    raw = span.attributes.get("gen_ai.tool.call.result")
    if not isinstance(raw, str) or '"ToolMessage"' not in raw:
        return None
    value = _json(raw)
    output = value.get("output") if isinstance(value, _MAPS) else None
    if not isinstance(output, _MAPS) or output.get("lc") != 1:
        return None
    kind, fields = output.get("id"), output.get("kwargs")
    if isinstance(kind, list) and kind[-1:] == ["ToolMessage"] and isinstance(fields, _MAPS):
        return fields
    return None


def tool_response(span: Span) -> tuple[str | None, list[ImageData]]:
    """A tool span's result: ``gen_ai.tool.call.result``, OpenInference's ``output.value`` or
    pydantic-ai's older ``tool_response``, else the ``tool_call_response`` of its output
    messages (Strands' latest mode, which writes ``gen_ai.tool.call.result`` only for a
    success) or Strands' older ``gen_ai.choice`` event, whose ``message`` is the result's
    content (``end_tool_call_span``). Strands' results are Converse tool result content
    (``[{"text": …}]``)."""
    a = span.attributes
    raw = a.get("gen_ai.tool.call.result", a.get("output.value", a.get(_PYDANTIC_AI_RESULT)))
    raw = a.get("ai.toolCall.result") if raw is None else raw
    if raw is not None:
        value = _json(raw)
        return converse_result(value) if is_converse(value) else output_content(value)
    value = a.get("gen_ai.output.messages")
    messages = _genai_list(value) if value is not None else None
    for name, attributes in span.events if messages is None else ():
        if name == _DETAILS_EVENT:
            messages = (messages or []) + (
                _genai_list(attributes.get("gen_ai.output.messages")) or []
            )
        elif name == "gen_ai.choice" and "message" in attributes:
            body = _json(attributes["message"])
            if is_converse(body):
                return converse_result(body)
            return output_content(_plain(attributes["message"], body))
    for message in messages or ():
        if message.get("role") == "tool" and "tool_call_id" in message:
            images = [ImageData(media_type=m, data=d) for m, d in message.get(_IMAGES, ())]
            return message.get("content"), images
    return None, []


def system_instructions(span: Span) -> Any:
    """A span's ``gen_ai.system_instructions``: an attribute, or on the details event."""
    if "gen_ai.system_instructions" in span.attributes:
        return span.attributes["gen_ai.system_instructions"]
    for name, attributes in span.events:
        if name == _DETAILS_EVENT and "gen_ai.system_instructions" in attributes:
            return attributes["gen_ai.system_instructions"]
    return None


def value_text(value: Any, *, prompt: bool) -> str | None:
    """An OpenInference ``input.value`` / ``output.value`` as the text of a prompt or reply:
    text as written (a JSON string decoded); a prompt written as the arguments of smolagents'
    ``MultiStepAgent.run`` (openinference-instrumentation-smolagents ``_RunWrapper``: JSON of
    ``{"task", "stream", "reset", …}``) its ``task``; other JSON as written, never dropped.

    >>> value_text('{"task": "add 1 and 2", "stream": false}', prompt=True)
    'add 1 and 2'
    >>> value_text("11", prompt=False)
    '11'
    """
    if not isinstance(value, str) or not value:
        return None
    decoded = _json(value)
    if isinstance(decoded, str):
        return decoded or None
    task = decoded.get("task") if prompt and isinstance(decoded, _MAPS) else None
    return task if isinstance(task, str) else value


def agent_span_name(span: Span) -> str:
    """The name of an agent that its span's attributes do not name, from the span's name:
    ``invoke_agent {name}`` (GenAI), ``{name}.run`` (OpenInference's smolagents instrumentor,
    ``_RunWrapper``, whose spans carry ``smolagents.*`` attributes)."""
    name = span.name.removeprefix("invoke_agent ")
    if is_smolagents(span):
        name = name.removesuffix(".run")
    return name


# --- smolagents, traced by OpenInference --------------------------------------------------------

#: The attribute OpenInference writes for the first tool a model call was offered.
_TOOLS_OFFERED = "llm.tools.0.tool.json_schema"
#: The step limit of a smolagents agent (OpenInference's ``_RunWrapper``).
_MAX_STEPS = "smolagents.max_steps"
#: smolagents' tool whose call ends a run with its answer (``FinalAnswerTool``): the answer, as
#: the smolagents loader shows it (:mod:`~turnfold.formats.frameworks.smolagents`), not a call.
SMOLAGENTS_FINAL_ANSWER = "final_answer"


def is_smolagents(span: Span) -> bool:
    """Whether an agent span is a smolagents run's (OpenInference's ``_RunWrapper`` writes
    ``smolagents.*`` attributes)."""
    return any(key.startswith("smolagents.") for key in span.attributes)


def smolagents_model_messages(
    inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], *, forced: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool]:
    """A smolagents model span's messages as the smolagents loader shows its run, and whether
    the output is the run's final answer.

    Its input is the agent's memory written again for the model (``write_memory_to_messages``:
    the task after ``New task:``, a step's text apart from its calls, the calls and results as
    ``tool-call`` / ``tool-response`` text): what it holds, the agent, model and tool spans
    record themselves, so only its system prompt is read. The model's text is thinking (the
    loader's: a step's ``model_output``, the text before it acts, or a plan, ``PlanningStep``);
    a ``final_answer`` call is the answer's text; so is the text of the call smolagents makes
    for an answer when the run hit ``max_steps`` (``provide_final_answer``: ``forced``)."""
    system = [m for m in inputs if m.get("role") == "system"]
    shown: list[dict[str, Any]] = []
    answered = False
    for message in outputs:
        if forced:
            shown.append(message)
            answered = answered or bool(message.get("content"))
            continue
        if "content" in message:
            message = dict(message)
            message["reasoning_content"] = message.pop("content")
        calls = as_list(message.get("tool_calls"))
        finals = [c for c in calls if _function(c).get("name") == SMOLAGENTS_FINAL_ANSWER]
        if finals:
            message = {**message, "tool_calls": [c for c in calls if c not in finals]}
        shown.append(message)
        for call in finals:
            shown.append({"role": "assistant", "content": _final_answer(call)})
            answered = True
    return system, shown, answered


#: Where a ``CodeAgent``'s reply holds its code, with the closing tag the stop sequences of its
#: model call cut off: its default ``code_block_tags``, else the Markdown block smolagents
#: falls back to (``parse_code_blobs``; also its ``code_block_tags="markdown"``).
_CODE_BLOCKS = (
    ("</code>", re.compile(r"<code>(.*?)</code>", re.DOTALL)),
    ("\n```", re.compile(r"```(?:python|py)(.*?)\n```", re.DOTALL)),
)


def smolagents_code(text: str) -> tuple[str, str]:
    """A ``CodeAgent``'s reply as its thought and the code it ran, as smolagents parses it
    (``parse_code_blobs``, the closing tag added when the reply stops before it): the code of
    every block, the thought the text before the first without the ``Thought:`` label (as the
    smolagents loader shows it). A reply with no block was run whole: smolagents runs a reply
    that parses as Python, so an agent of other tags ran it (the default agent's closing tag
    added, no reply parses: the step failed, ``AgentParsingError``, and no code is read).

    >>> smolagents_code("Thought: add.\\n<code>\\nprint(add(a=1, b=2))\\n")
    ('add.', 'print(add(a=1, b=2))')
    """
    for closing, pattern in _CODE_BLOCKS:
        found = list(pattern.finditer(text if text.rstrip().endswith(closing) else text + closing))
        if found:
            code = "\n\n".join(match.group(1).strip() for match in found)
            return _thought(text[: found[0].start()]), code
    return "", text.strip()


def _thought(text: str) -> str:
    text = text.strip()
    return text.removeprefix("Thought:").strip()


def _function(call: Any) -> Mapping[str, Any]:
    function = call.get("function") if isinstance(call, _MAPS) else None
    return function if isinstance(function, _MAPS) else {}


def _final_answer(call: Mapping[str, Any]) -> str:
    """The answer a ``final_answer`` call gives: its ``answer`` argument, else its arguments
    (as smolagents' ``ToolCallingAgent.process_tool_calls`` takes them), shown as the
    smolagents loader shows it (:func:`~turnfold.formats.frameworks.smolagents.answer_text`)."""
    args = parse_arguments(_function(call).get("arguments"))
    answer = args.get("answer", args) if isinstance(args, _MAPS) else args
    return answer if isinstance(answer, str) else answer_text(answer, None)


def _repeats_reply(builder: _Builder, message: Mapping[str, Any]) -> bool:
    """Whether an agent span's reply is the text its last model span already gave: Strands'
    agent span ends with ``str(AgentResult)``, the last message's texts each followed by a
    newline (strands/agent/agent_result.py ``__str__``), so the two differ in white space."""
    text = message.get("content")
    if message.get("role") != "assistant" or not isinstance(text, str) or len(message) > 2:
        return False
    texts: list[str] = []
    for entry in reversed(builder.transcript.entries):
        if isinstance(entry, AssistantText):
            texts.append(entry.text or "")
        elif not isinstance(entry, Thinking):
            break
    return bool(texts) and "".join("".join(texts).split()) == "".join(text.split())


def _str(a: Mapping[str, Any], *keys: str) -> str | None:
    return next((a[k] for k in keys if isinstance(a.get(k), str) and a[k]), None)


def _step_error(span: Span) -> tuple[str, str] | None:
    """The type (its class name) and message of a span's first ``exception`` event, or of the
    ``agent.step_recovery`` event OpenInference's smolagents instrumentor writes for a step's
    tool error (``AgentError.dict()``)."""
    for name, attributes in span.events:
        if name in ("exception", "agent.step_recovery"):
            message = attributes.get("exception.message", attributes.get("message"))
            if isinstance(message, str) and message:
                kind = attributes.get("exception.type", attributes.get("type"))
                kind = kind.rsplit(".", 1)[-1] if isinstance(kind, str) and kind else "AgentError"
                return kind, message
    return None


def _exception_text(span: Span) -> str | None:
    for name, attributes in span.events:
        if name == "exception":
            kind, message = attributes.get("exception.type"), attributes.get("exception.message")
            text = ": ".join(str(p) for p in (kind, message) if p)
            if text:
                return text
    return None


# --- building -------------------------------------------------------------------------------


class _Calls(dict[str, ToolCall]):
    """A builder's calls by id, also in order as a list, counting the ids whose call was
    replaced (a reused id: the list changes where it does not only grow)."""

    def __init__(self) -> None:
        super().__init__()
        self.ordered: list[ToolCall] = []
        self.position: dict[str, int] = {}
        self.replaced = 0

    def __setitem__(self, key: str, value: ToolCall) -> None:
        index = self.position.get(key)
        if index is None:
            self.position[key] = len(self.ordered)
            self.ordered.append(value)
        else:
            self.ordered[index] = value
            self.replaced += 1
        super().__setitem__(key, value)


@dataclass
class _Silent:
    """A model span that recorded no output, and the usage none of its entries took yet."""

    span: Span
    usage: Usage | None
    model: str | None


class _Builder(OpenAIChatBuilder):
    """Chat messages of one agent's spans; a tool message is the result only of a call no tool
    span has settled (a tool span knows the status, the message does not)."""

    def __init__(self, transcript: Transcript, name: str) -> None:
        super().__init__(transcript, name)
        self._ordered = self._calls = _Calls()
        #: The calls tool spans settled, by span id, and how many spans settled each (by id).
        self.by_span: dict[str, ToolCall] = {}
        self._claimed: Counter[int] = Counter()
        #: For :meth:`unclaimed`: per name, a position of ``_calls.ordered`` before which every
        #: call of that name is claimed; valid while no call is unclaimed or replaced.
        self._cursors: dict[str, int] = {}
        self._replaced = 0
        #: The messages fed, in order, and (once needed) how many of each content.
        self.fed: list[dict[str, Any]] = []
        self._counts: Counter[str] | None = None
        self.history = _History()
        #: Server tool calls whose response has not come, oldest first.
        self._server_open: list[ToolCall] = []
        #: How many model spans' usage was put on entries (an agent span's own usage counts
        #: only where none was: :meth:`_Rebuild._run`).
        self.model_usages = 0
        #: Whether these are a smolagents run's spans (:func:`smolagents_model_messages`),
        #: whether the run's answer was given (by a model span or the ``final_answer`` tool
        #: span), the calls of each step (the ``CHAIN`` span, by id), when the run's last step
        #: started (a model span after it is the call for an answer at ``max_steps``), and
        #: whether the run was read as one that hit ``max_steps``.
        self.smolagents = False
        self.answered = False
        self.step_calls: dict[str, list[ToolCall]] = {}
        self.last_step: int | None = None
        self.hit_max_steps = False
        #: The python call of each step read as a ``CodeAgent``'s (by the step's span id): the
        #: tool spans and managed agents under the step ran from its code.
        self.code_calls: dict[str, ToolCall] = {}
        #: The last model span, when it recorded no output (content capture off): the calls
        #: the tool spans after it make are its response's (:meth:`_Rebuild._tool`).
        self.silent: _Silent | None = None
        #: The usage of every model span read, and whether some found no entry to carry it:
        #: then the sum is the transcript's recorded total (:meth:`_Rebuild._settle_usage`).
        self.usage_total: Tokens = {}
        self.unplaced = False
        #: The calls the last model span asked for.
        self.asked: list[ToolCall] = []

    def calls(self) -> dict[str, ToolCall]:
        return self._calls

    def in_step(self, step: Span, call: ToolCall) -> None:
        """Record that the smolagents step ``step`` ran ``call``."""
        calls = self.step_calls.setdefault(step.span_id, [])
        if not any(c is call for c in calls):
            calls.append(call)

    def claimed(self, call: ToolCall) -> bool:
        """Whether a tool or agent span settled ``call``."""
        return self._claimed[id(call)] > 0

    def claim(self, span_id: str, call: ToolCall) -> None:
        """Record that the tool span ``span_id`` settles ``call``."""
        previous = self.by_span.get(span_id)
        if previous is not None:  # a span id seen twice: the call it settled may be free again
            self._claimed[id(previous)] -= 1
            self._cursors.clear()
        self.by_span[span_id] = call
        self._claimed[id(call)] += 1

    def unclaimed(self, name: str, args: Any = None) -> ToolCall | None:
        """The first call named ``name`` that no tool span has settled: a tool span without a
        call id (OpenInference's often have none) is the run of the call asked for first, or,
        when the span records its ``args``, of the first of that response's calls with those
        arguments (a response's calls may run in parallel, in any order: smolagents runs them
        in a thread pool).

        Searched from where the last search for the name stopped, not from the first call:
        claimed calls stay claimed and new ones come last, so the calls before it are still
        all claimed (a replaced call resets that)."""
        calls = self._ordered
        if calls.replaced != self._replaced:
            self._replaced = calls.replaced
            self._cursors.clear()
        ordered = calls.ordered
        claimed = self._claimed
        for index in range(self._cursors.get(name, 0), len(ordered)):
            call = ordered[index]
            if call.name == name and not claimed[id(call)]:
                self._cursors[name] = index
                if args is None or call.args == args or call.batch_id is None:
                    return call
                for later in itertools.islice(ordered, index + 1, None):
                    if later.batch_id != call.batch_id:
                        break
                    if later.name == name and not claimed[id(later)] and later.args == args:
                        return later
                return call
        self._cursors[name] = len(ordered)
        return None

    def _tool_result(self, message: Mapping[str, Any], line: int) -> None:
        call_id = message.get("tool_call_id")
        # An id of another type (a list, a number) is warned about as unknown by the base class.
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is not None and call.result is not None:
            self.recognized += 1
            return
        # A tool span that settled the call without its result (pydantic-ai's before its
        # version 3 names it otherwise, content capture off on tool spans): the message gives
        # the result, the span's status and end stand.
        ran = (call.status, call.ended_at) if call is not None and self._claimed[id(call)] else None
        super()._tool_result(message, line)
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is not None and call.result is not None:
            recorded = call.status if ran is None else ran[0]
            status = (
                "error" if message.get(_FAILED) else corrected_status(recorded, call.result.text)
            )
            if status != call.status:
                self.transcript.update(call, status=status)
            if ran is not None and ran[1] != call.ended_at:
                self.transcript.update(call, ended_at=ran[1])
            images = message.get(_IMAGES)
            if images:
                shown = [*call.result.images, *(ImageData(media_type=m, data=d) for m, d in images)]
                self.transcript.update(call, result=replace(call.result, images=shown))

    # --- what the Chat shape has no place for (_from_parts) ---------------------------------

    def _message(self, message: Mapping[str, Any], line: int) -> None:
        part = message.get(_PART)
        if part is not None:
            self._part(part, line)
            return
        before = len(self.transcript.entries)
        super()._message(message, line)
        for reason in message.get(_UNSHOWN, ()):
            self.warn(reason, line)
        images = message.get(_IMAGES) if message.get("role") == "assistant" else None
        if images and len(self.transcript.entries) > before:  # not history already shown
            shown = [ImageData(media_type=m, data=d) for m, d in images]
            added = self.transcript.entries[before:]
            text = next((e for e in reversed(added) if isinstance(e, AssistantText)), None)
            if text is None:
                self._append(AssistantText(images=shown))
            else:
                self.transcript.update(text, images=[*text.images, *shown])

    def _user(self, message: Mapping[str, Any]) -> None:
        images = message.get(_IMAGES)
        if not images:
            super()._user(message)
            return
        self.recognized += 1
        text = message.get("content")
        shown = [ImageData(media_type=m, data=d) for m, d in images]
        self._append(
            UserMessage(
                text=text if isinstance(text, str) else "",
                images=shown,
                meta={"images": len(shown)},  # as the Chat and Anthropic loaders count them
            )
        )

    def _part(self, part: Mapping[str, Any], line: int) -> None:
        kind = part.get("type")
        if kind == "compaction":
            summary = part.get("content")  # the schema's unencrypted summary, when available
            summary = summary if isinstance(summary, str) and summary else None
            self._append(CompactionBoundary(summary=summary))
        elif kind == "server_tool_call":
            self._server_call(part, line)
        elif kind == "reasoningContent":  # Strands' reasoning without text (_from_parts)
            thinking = thinking_of(part.get("content"))
            if thinking is not None:
                self._append(thinking)
        else:
            self._server_response(part, line)

    def _server_call(self, part: Mapping[str, Any], line: int) -> None:
        """A tool the provider runs (web search, code interpreter…): a call like any other,
        named by the part's ``name``, its arguments the ``server_tool_call`` payload; its
        response settles it, as a hosted call of the Responses API is shown."""
        payload = part.get("server_tool_call")
        name = part.get("name")
        if not (isinstance(name, str) and name) and isinstance(payload, _MAPS):
            name = payload.get("type")
        call_id = part.get("id")
        if not (isinstance(call_id, str) and call_id):  # the schemas' id is optional
            call_id = f"server_tool_call@{line}.{len(self.transcript.entries)}"
        name = name if isinstance(name, str) else ""
        call = self._new_call(call_id, name, payload, f"msg-{line}", None, line)
        self._calls[call_id] = call
        self._server_open.append(call)

    def _server_response(self, part: Mapping[str, Any], line: int) -> None:
        """A server tool's response settles the call with its id; without an id, the last
        server call still waiting for one."""
        call_id = part.get("id")
        call: ToolCall | None = None
        if isinstance(call_id, str) and call_id:
            call = self._calls.get(call_id)
        elif self._server_open:
            call = self._server_open[-1]
        response = part.get("server_tool_call_response")
        if call is None:
            self.warn(f"server tool response for an unknown call id {call_id!r}", line)
            name = response.get("type") if isinstance(response, _MAPS) else None
            own = call_id if isinstance(call_id, str) and call_id else f"server_tool@{line}"
            call = self._new_call(
                own, name if isinstance(name, str) else "", None, None, None, line
            )
            self._calls[own] = call
        self._server_open = [c for c in self._server_open if c is not call]
        if call.result is not None:  # settled already: the response is repeated history
            return
        status, result = server_tool_outcome(response)
        self.transcript.update(call, status=status, result=result)

    def add_new(
        self,
        messages: list[dict[str, Any]],
        line: int,
        history: _History | None = None,
    ) -> list[dict[str, Any]]:
        """Feed the messages not fed before: after the history when it is their prefix, else
        those whose content has not been seen (a framework that trims or reorders history).

        Every model span repeats the history, so this runs over most of a file's messages: the
        prefix is compared as values (in C, stopping at the first difference), and the content
        counts of what was fed are kept up to date rather than recounted for each span. When
        ``messages`` extends the last input of the same agent (``history``), only its new tail
        is counted: fed counts only grow, so a message that was seen then is seen now."""
        count = len(self.fed)
        prints: dict[int, str] = {}
        if messages[:count] == self.fed:
            new = list(range(count, len(messages)))
        else:
            fed = self._fed_counts()
            start = 0
            occurrences: Counter[str] = Counter()
            if history is not None:
                last = history.counted
                if last and messages[: len(last)] == last:
                    start, occurrences = len(last), history.occurrences
            new = []
            for index in range(start, len(messages)):
                fingerprint = _fingerprint(messages[index])
                occurrences[fingerprint] += 1
                # The first fed[f] messages of content f were seen; any more are new.
                if occurrences[fingerprint] > fed[fingerprint]:
                    new.append(index)
                    prints[index] = fingerprint
            if history is not None:
                history.counted, history.occurrences = messages, occurrences
        added = [messages[i] for i in new]
        for index in new:
            message = messages[index]
            self.fed.append(message)
            if self._counts is not None:
                self._counts[prints.get(index) or _fingerprint(message)] += 1
            self.feed(message, line)
        return added

    def _fed_counts(self) -> Counter[str]:
        """How many messages of each content were fed: made when first needed (a file whose
        history always grows as a prefix never needs it), then kept up to date."""
        if self._counts is None:
            self._counts = Counter(_fingerprint(m) for m in self.fed)
        return self._counts


class _Rebuild:
    """The transcript of one conversation from its spans."""

    def __init__(self, spans: list[Span], name: str) -> None:
        self.name = name
        self.by_id = {(s.trace_id, s.span_id): s for s in spans}
        self.roots: list[Span] = []
        for span in sorted(spans, key=lambda s: s.start):
            parent = self.by_id.get((span.trace_id, span.parent_id or ""))
            (parent.children if parent is not None else self.roots).append(span)
        self.models: list[str] = []
        #: How many model spans recorded messages, and how many none (content capture off).
        self.spoken = self.silent = 0

    def transcript(self) -> Transcript:
        transcript = Transcript(metadata={"source_format": NAME})
        builder = _Builder(transcript, self.name)
        scope: list[Span] = []
        for root in self.roots:
            scope += [root] if root.op in _AGENT_OPS else self._walk(root)
        agents = [r for r in self.roots if r.op in _AGENT_OPS]
        self._scope(builder, sorted(scope, key=lambda s: s.start), outermost=True)
        self._settle_usage(builder)
        if self.silent and not self.spoken:
            reason = (
                "the trace records no message content (its instrumentation's content capture "
                "was off): prompts, the model's texts and most tool arguments and results are "
                "not in it"
            )
            transcript.warnings.append(LoadWarning(reason=reason, source=self.name))
        if agents:
            name = _str(agents[0].attributes, "gen_ai.agent.name", "agent.name")
            if name:
                transcript.metadata["agent"] = name
            if any(a.failed for a in agents):
                transcript.metadata["outcome"] = "error"
        if self.models:
            transcript.metadata["model"] = self.models[0]
        return transcript

    def _inner(self, span: Span) -> list[Span]:
        """The spans of an agent's run below its agent span; an agent span of the same name
        right under it is the same run again, read through (OpenLLMetry's LangGraph
        instrumentation writes ``invoke_agent`` for the graph, and again for its workflow)."""
        name = _str(span.attributes, "gen_ai.agent.name", "agent.name")
        inner: list[Span] = []
        for child in span.children:
            same = child.op in _AGENT_OPS and name is not None
            if same and _str(child.attributes, "gen_ai.agent.name", "agent.name") == name:
                inner += self._inner(child)
            else:
                inner += self._walk(child)
        return inner

    def _walk(self, span: Span) -> list[Span]:
        """``span`` and its descendants, stopping at (and including) agent spans."""
        out = [span]
        if span.op in _AGENT_OPS:
            return out
        for child in span.children:
            out += self._walk(child)
        return out

    def _scope(self, builder: _Builder, spans: list[Span], *, outermost: bool = False) -> None:
        """Spans of one agent, in start order; an agent span in the outermost scope is the
        session's own run (a sub-agent where the outermost scope holds model spans outside
        any agent span and one call of the last of them waits for its result: the session's
        conversation ran it), in an agent's scope a sub-agent."""
        talks = outermost and any(s.op in _MODEL_OPS for s in spans)
        step: Span | None = None  # the smolagents step whose spans come now
        for span in spans:
            if step is not None and self._step_of(span) is not step:
                self._step_ended(builder, step)
                step = None
            if builder.smolagents and span.op == "CHAIN":
                step = span
            if span.op in _AGENT_OPS:
                if outermost and not (talks and self._waiting(builder) is not None):
                    self._run(builder, span)  # the session's own agent span
                else:
                    self._subagent(builder, span)
            elif span.op in _MODEL_OPS:
                self._model(builder, span)
            elif span.op in _TOOL_OPS:
                self._tool(builder, span)
            elif span.op == "CHAIN" and outermost and span.parent_id is None:
                self._agent_io(builder, span, before=True)
        if step is not None:
            self._step_ended(builder, step)

    def _run(self, builder: _Builder, span: Span) -> None:
        """An agent span's prompt, the spans of its tree, then its reply; the agent span's own
        usage only where none of its model spans recorded any. Instrumentors write on the
        agent span the sum of its model calls' usage (Strands' ``end_agent_span``:
        ``accumulated_usage``; smolagents' ``_RunWrapper``: the agent monitor's totals), which
        model spans, when there are any, record call by call: counted once, as Phoenix counts
        only LLM spans' ``llm.token_count.*`` (Arize-ai/phoenix#12775)."""
        inner = self._inner(span)
        builder.smolagents = builder.smolagents or is_smolagents(span)
        builder.answered = builder.hit_max_steps = False
        builder.last_step = max((s.start for s in inner if s.op == "CHAIN"), default=None)
        self._system(builder, span)
        self._agent_io(builder, span, before=True)
        start, counted = len(builder.transcript.entries), builder.model_usages
        self._scope(builder, sorted(inner, key=lambda s: s.start))
        if builder.smolagents and not (builder.answered or builder.hit_max_steps or span.failed):
            self._max_steps(builder, span, sum(1 for s in inner if s.op == "CHAIN"))
        self._agent_io(builder, span, before=False)
        if builder.model_usages == counted:
            usage = span_usage(span.attributes)
            attach_usage(builder.transcript.entries[start:], usage, builder.transcript)

    def _agent_io(self, builder: _Builder, span: Span, *, before: bool) -> None:
        inputs, outputs = model_messages(span)
        if not inputs and not outputs:
            key = "input.value" if before else "output.value"
            text = value_text(span.attributes.get(key), prompt=before)
            if text:
                role = "user" if before else "assistant"
                (inputs if before else outputs).append({"role": role, "content": text})
        if not before and builder.answered:
            outputs = []  # smolagents' str(answer) of the answer its final_answer call gave
        messages = inputs if before else [m for m in outputs if not _repeats_reply(builder, m)]
        if messages:
            fed = builder.add_new(messages, span.line)
            self._stamp(builder, len(fed), span.started_at if before else span.ended_at)
        if not before and span.failed:
            text = span.status_message or _exception_text(span) or "The agent run failed."
            builder.transcript.append(AssistantError(message=text, timestamp=span.ended_at))

    def _system(self, builder: _Builder, span: Span) -> None:
        """``gen_ai.system_instructions`` of a model or agent span (a span attribute, or on
        the details event as Strands' latest mode writes it) as the system prompt."""
        system = _json(system_instructions(span))
        if isinstance(system, list):
            texts = [p.get("content") for p in system if isinstance(p, _MAPS)]
            system = "\n\n".join(t for t in texts if isinstance(t, str))
        if isinstance(system, str) and system and "system" not in builder.transcript.metadata:
            builder.transcript.metadata["system"] = system

    def _stamp(self, builder: _Builder, count: int, when: str | None) -> None:
        """Give the entries the last messages added their span's time (the source has no
        per-message times)."""
        if count and when is not None:
            for entry in builder.transcript.entries[-count:]:
                if entry.timestamp is None:
                    entry.timestamp = when

    def _model(self, builder: _Builder, span: Span) -> None:
        inputs, outputs = model_messages(span, builder.history)
        if inputs or outputs:
            self.spoken += 1
        else:
            self.silent += 1
        step = self._code_step(span, outputs) if builder.smolagents else None
        shown = outputs
        forced = builder.smolagents and self._forced_answer(builder, span)
        if builder.smolagents:  # a CodeAgent's step: its thought and code (_code_action)
            inputs, shown, builder.answered = smolagents_model_messages(
                inputs, outputs if step is None else [], forced=forced
            )
        self._system(builder, span)
        before = len(builder.transcript.entries)
        builder.add_new(inputs, span.line, builder.history)
        if forced:  # as the loader shows the step smolagents records for it
            notice = SystemNotice(text=MAX_STEPS_NOTICE, level="warning", subtype="max_steps")
            builder.transcript.append(notice)
            builder.hit_max_steps = True
        for entry in builder.transcript.entries[before:]:
            entry.timestamp = entry.timestamp or span.started_at
        middle = len(builder.transcript.entries)
        builder.add_new(shown, span.line)
        if step is not None:
            self._code_action(builder, span, step, outputs)
        model = _str(span.attributes, "gen_ai.response.model", "llm.model_name",
                     "ai.response.model", "gen_ai.request.model", "ai.model.id")  # fmt: skip
        if model:
            self.models.append(model)
        builder.asked = []
        for entry in builder.transcript.entries[middle:]:
            entry.timestamp = entry.timestamp or span.ended_at
            if isinstance(entry, AssistantText):
                entry.model = entry.model or model
            if isinstance(entry, ToolCall):
                # One model span is one response: its calls one batch (the spans of a trace
                # are often all on one line, which the builder would make one batch of).
                entry.batch_id = f"span-{span.span_id}"
                entry.started_at = entry.started_at or span.ended_at
                builder.asked.append(entry)
                if builder.smolagents and step is None:
                    builder.step_calls.setdefault(span.parent_id or "", []).append(entry)
        usage = span_usage(span.attributes)
        carrier = None
        if usage is not None:
            response = _str(span.attributes, "gen_ai.response.id")
            usage.response_id = response  # one chat span is one response (U-1)
            builder.model_usages += 1
            add_into(builder.usage_total, counts_of(usage))
            carrier = attach_usage(builder.transcript.entries[middle:], usage, builder.transcript)
        self._unsilence(builder)
        if not outputs and not span.failed:
            builder.silent = _Silent(span, usage if carrier is None else None, model)
        elif usage is not None and carrier is None:
            builder.unplaced = True
        if span.failed:
            text = span.status_message or _exception_text(span) or "The model call failed."
            builder.transcript.append(AssistantError(message=text, timestamp=span.ended_at))

    def _unsilence(self, builder: _Builder) -> None:
        """The calls of the last model span that recorded no output have all come: its
        usage, if none of them took it, is carried by no entry."""
        if builder.silent is not None and builder.silent.usage is not None:
            builder.unplaced = True
        builder.silent = None

    def _settle_usage(self, builder: _Builder) -> None:
        """Where some model span's usage has no entry to carry it (a trace without message
        content: a response that was only text), the model spans' sum is the transcript's
        recorded total, so that the session's tokens are all counted."""
        self._unsilence(builder)
        if builder.unplaced and builder.usage_total:
            builder.transcript.metadata["usage"] = dict(builder.usage_total)

    def _tool(self, builder: _Builder, span: Span) -> None:
        a = span.attributes
        message = langchain_tool_message(span)
        call_id = _str(a, "gen_ai.tool.call.id", "tool_call.id", "tool.id", "ai.toolCall.id")
        if call_id is None and message is not None:
            call_id = _str(message, "tool_call_id")
        call = builder.calls().get(call_id) if call_id else None
        name = _str(
            a, "gen_ai.tool.name", "tool.name", "ai.toolCall.name"
        ) or span.name.removeprefix("execute_tool ")
        step = self._step_of(span) if builder.smolagents else None
        if builder.smolagents and name == SMOLAGENTS_FINAL_ANSWER:
            self._tool_answer(builder, span, step)
            return
        if step is not None and step.span_id in builder.code_calls:
            return  # run by the code of a CodeAgent's step: part of its python call
        args = tool_arguments(span) if call is None else None
        if call is None and call_id is None:
            call = builder.unclaimed(name, args)
        if call is None:
            own = call_id or f"span-{span.span_id}"
            # The calls one smolagents step ran, or those run after a model span that recorded
            # no output: one response's, the order of the parallel ones not recorded without
            # its model span's output (smolagents runs them in a thread pool).
            silent = builder.silent
            batch = step or (silent.span if silent is not None else None)
            call = ToolCall(
                call_id=own,
                name=name,
                args=args,
                description=describe_call(name, args, None),
                status="unknown",
                timestamp=span.started_at,
                batch_id=f"span-{batch.span_id}" if batch is not None else None,
            )
            builder.transcript.append(call)
            builder.calls()[own] = call
            if silent is not None and silent.usage is not None:
                attach_usage([call], silent.usage, builder.transcript, model=silent.model)
                silent.usage = None
        builder.claim(span.span_id, call)
        if step is not None:
            builder.in_step(step, call)
        if message is not None:
            text, images = output_content(message.get("content"))
        else:
            text, images = tool_response(span)
        status: ToolStatus
        if span.failed or _exception_text(span) or (message or {}).get("status") == "error":
            status = "error"
            text = text or span.status_message or _exception_text(span)
        else:
            status = corrected_status("success" if span.ended_at else "unknown", text)
        builder.transcript.update(
            call,
            status=status,
            result=text_result(text, images=images) if text is not None or images else call.result,
            started_at=span.started_at,
            ended_at=span.ended_at,
        )

    def _subagent(self, builder: _Builder, span: Span) -> None:
        child = Transcript(metadata={"source_format": NAME})
        sub = _Builder(child, self.name)
        self._run(sub, span)
        self._settle_usage(sub)
        name = _str(span.attributes, "gen_ai.agent.name", "agent.name") or agent_span_name(span)
        task = next((e.text for e in child.entries if isinstance(e, UserMessage)), None)
        subagent = SubAgent(
            name=name or None,
            task=task,
            transcript=child,
            agent_id=_str(span.attributes, "gen_ai.agent.id"),
            tool_count=len(child.tool_calls()),
        )
        answer = next(
            (e.text for e in reversed(child.entries) if isinstance(e, AssistantText)), None
        )
        status: ToolStatus = "error" if span.failed else "success" if span.ended_at else "unknown"
        host = self._host_call(builder, span)
        if host is None:  # a managed agent a CodeAgent's code called: its step's python call
            step = self._step_of(span) if builder.smolagents else None
            host = builder.code_calls.get(step.span_id) if step is not None else None
            host = host if host is not None and host.subagent is None else None
        if host is not None:
            builder.transcript.update(host, subagent=subagent)
            return
        # An agent called as a tool of its name with no tool span (a smolagents managed agent,
        # run by its manager's step): the call the model asked for; else the one call of the
        # last response still waiting for its result (an agent called over the network, A2A:
        # its spans in the trace, the call's tool no span of its own).
        host = builder.unclaimed(name) if name else None
        if host is None:
            host = self._waiting(builder)
        if host is not None:
            builder.claim(span.span_id, host)
            given = host.args.get("task") if isinstance(host.args, dict) else None
            if isinstance(given, str) and given:  # the task before smolagents wraps it
                subagent.task = given
            result = host.result or (text_result(answer) if answer else None)
            builder.transcript.update(
                host,
                subagent=subagent,
                status=status,
                result=result,
                started_at=span.started_at,
                ended_at=span.ended_at,
            )
            return
        call = ToolCall(
            call_id=f"agent-{span.span_id}",
            name="invoke_agent",
            args={"agent": name, "prompt": task} if task else {"agent": name},
            description=name or None,
            status=status,
            result=text_result(answer) if answer else None,
            started_at=span.started_at,
            ended_at=span.ended_at,
            timestamp=span.started_at,
            subagent=subagent,
        )
        builder.transcript.append(call)
        step = self._step_of(span) if builder.smolagents else None
        if step is not None:
            builder.in_step(step, call)

    def _code_step(self, span: Span, outputs: list[dict[str, Any]]) -> Span | None:
        """The step (``CHAIN`` span) whose model call ``span`` is, when that is a
        ``CodeAgent``'s: it offered the model no tools (a ``ToolCallingAgent`` offers its
        tools, ``final_answer`` at least, on every step's call: OpenInference's ``llm.tools``)
        and the model asked for no call but wrote text, its code."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        if parent is None or parent.op != "CHAIN" or span.failed:
            return None
        if _TOOLS_OFFERED in span.attributes or any(m.get("tool_calls") for m in outputs):
            return None
        return parent if any(isinstance(m.get("content"), str) for m in outputs) else None

    def _code_action(
        self, builder: _Builder, span: Span, step: Span, outputs: list[dict[str, Any]]
    ) -> None:
        """A ``CodeAgent``'s step as the smolagents loader reads it: the thought, then a
        ``python`` call of the code (smolagents' ``python_interpreter``, :func:`smolagents_code`),
        its result the step's observations (``output.value``: execution logs and last output),
        with the error when the step failed. A step that could not parse code from the reply
        (``AgentParsingError``) ran none: the reply is the thought, the error a notice."""
        reply = "\n".join(m["content"] for m in outputs if isinstance(m.get("content"), str))
        error = _step_error(step)
        unparsed = error is not None and error[0] == "AgentParsingError"
        thought, code = (_thought(reply), None) if unparsed else smolagents_code(reply)
        if thought:
            builder.transcript.append(Thinking(text=thought, form="text"))
        if code is None:
            return  # no call: the step's error is its notice (_step_ended)
        observations = _str(step.attributes, "output.value")
        status: ToolStatus = "success" if step.ended_at else "unknown"
        text = observations
        if error is not None or step.failed:
            message = error[1] if error is not None else step.status_message or "The step failed."
            status, text = "error", f"{observations}\n{message}" if observations else message
        call = ToolCall(
            call_id=f"span-{span.span_id}",
            name=CODE_TOOL_SHOWN,
            args=code,
            description=describe_args(CODE_TOOL_SHOWN, code),
            status=status,
            result=text_result(text) if text is not None else None,
            started_at=span.ended_at,
            ended_at=step.ended_at,
            meta={"tool_name": CODE_TOOL},
        )
        builder.transcript.append(call)
        builder.code_calls[step.span_id] = call
        builder.in_step(step, call)

    def _step_of(self, span: Span) -> Span | None:
        """The nearest step (``CHAIN`` span) above ``span`` in its agent's tree."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        while parent is not None and parent.op not in _AGENT_OPS:
            if parent.op == "CHAIN":
                return parent
            parent = self.by_id.get((parent.trace_id, parent.parent_id or ""))
        return None

    def _step_ended(self, builder: _Builder, step: Span) -> None:
        """A smolagents step whose spans have all been read: when it failed (its ``CHAIN``
        span's error, or the recovery event OpenInference writes for a tool error the agent
        goes on from), as the smolagents loader reads a step's error. The calls it asked for
        that no tool span ran (an unknown tool, a managed agent that raised), its only one or
        those the message names, are ``error`` with the message as their result; an error
        that no call of the step holds (a reply that could not be read as calls or code,
        ``AgentParsingError``) is an error notice."""
        error = _step_error(step)
        message = error[1] if error is not None else step.status_message
        if not message and not step.failed:
            return
        calls = builder.step_calls.get(step.span_id, [])
        message = message or "The step failed."
        for call in calls:
            if call.status == "unknown" and (len(calls) == 1 or f"'{call.name}'" in message):
                builder.transcript.update(call, status="error", result=text_result(message))
        if not any(call.status == "error" for call in calls):
            text = f"{error[0]}: {error[1]}" if error is not None else message
            notice = SystemNotice(text=text, level="error", subtype="step", timestamp=step.ended_at)
            builder.transcript.append(notice)

    def _forced_answer(self, builder: _Builder, span: Span) -> bool:
        """Whether a smolagents model span is the call for an answer a run that hit
        ``max_steps`` makes (``provide_final_answer``): the agent's own (a step's are in the
        step), with no step after it (a plan is followed by the step it plans)."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        if parent is None or parent.op not in _AGENT_OPS:
            return False
        return builder.last_step is None or span.start > builder.last_step

    def _max_steps(self, builder: _Builder, span: Span, steps: int) -> None:
        """A smolagents run that ended without an answer from its steps, and did not fail,
        after as many steps as it was allowed (its ``run`` arguments' ``max_steps``, else the
        agent's, ``smolagents.max_steps``), hit ``max_steps``: traced without its model calls,
        its answer is only the agent span's output, after the notice the loader shows."""
        arguments = _json(span.attributes.get("input.value"))
        allowed = as_int(arguments.get("max_steps")) if isinstance(arguments, _MAPS) else None
        allowed = allowed if allowed is not None else as_int(span.attributes.get(_MAX_STEPS))
        if allowed is not None and steps >= allowed:
            builder.transcript.append(
                SystemNotice(
                    text=MAX_STEPS_NOTICE,
                    level="warning",
                    subtype="max_steps",
                    timestamp=span.ended_at,
                )
            )

    def _tool_answer(self, builder: _Builder, span: Span, step: Span | None) -> None:
        """The ``final_answer`` tool's run: its output is the run's answer, unless a model
        span gave it (the call's argument) or its step failed (smolagents refused it). It
        records the answer itself, which the agent span's output writes as ``str()``: a
        number, a list or a dict is shown as the loader shows it (JSON, :func:`answer_text`)."""
        if builder.answered or span.failed:
            return
        if step is not None and (step.failed or _step_error(step) is not None):
            return
        raw = span.attributes.get("output.value")
        if not isinstance(raw, str):
            return
        json_value = span.attributes.get("output.mime_type") == "application/json"
        value = _json(raw) if json_value else raw
        text = value if isinstance(value, str) else answer_text(value, None)
        before = len(builder.transcript.entries)
        builder.feed({"role": "assistant", "content": text}, span.line)
        self._stamp(builder, len(builder.transcript.entries) - before, span.ended_at)
        builder.answered = True

    def _waiting(self, builder: _Builder) -> ToolCall | None:
        """The one call of the last response still waiting for its result, if one is."""
        waiting = [c for c in builder.asked if c.result is None and not builder.claimed(c)]
        return waiting[0] if len(waiting) == 1 and waiting[0].subagent is None else None

    def _host_call(self, builder: _Builder, span: Span) -> ToolCall | None:
        """The call of the nearest tool span above ``span``, if the agent ran as a tool."""
        parent = self.by_id.get((span.trace_id, span.parent_id or ""))
        while parent is not None and parent.op not in _AGENT_OPS:
            if parent.op in _TOOL_OPS and parent.span_id in builder.by_span:
                return builder.by_span[parent.span_id]
            parent = self.by_id.get((parent.trace_id, parent.parent_id or ""))
        return None


# --- reading --------------------------------------------------------------------------------


def conversation_of(spans: list[Span]) -> str:
    """The conversation a trace belongs to: the first ``gen_ai.conversation.id`` or
    ``session.id`` its spans carry, else its trace id."""
    for span in sorted(spans, key=lambda s: s.start):
        value = _str(span.attributes, "gen_ai.conversation.id", "session.id")
        if value:
            return value
    return spans[0].trace_id


def conversations(spans: list[Span]) -> dict[str, list[Span]]:
    """Spans by conversation id, conversations in the order their first span started."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    grouped: dict[str, list[Span]] = {}
    for trace in sorted(traces.values(), key=lambda t: min(s.start for s in t)):
        grouped.setdefault(conversation_of(trace), []).extend(trace)
    return grouped


#: ``load(path, sample=<conversation id>)`` picks one conversation of a file (formats/__init__).
HAS_SAMPLES = True


def read(source: Source, *, sample: str | None = None, epoch: int | None = None) -> Transcript:
    """The conversation of ``source`` (the one named ``sample`` when the file holds several);
    traces have no epochs, so ``epoch`` is refused."""
    if epoch is not None:
        raise ValueError(f"{source.name}: OTLP conversations have no epochs; pass sample= only")
    spans = _read_spans(source)
    grouped = conversations(spans)
    if not grouped:
        transcript = Transcript(metadata={"source_format": NAME})
        return transcript
    if sample is None and len(grouped) > 1:
        listed = ", ".join(list(grouped)[:10]) + (", …" if len(grouped) > 10 else "")
        raise TranscriptFormatError(
            source.name,
            [NAME],
            None,
            f"{len(grouped)} conversations in one file ({listed}); load one with "
            "turnfold.load(path, sample=<conversation id>)",
        )
    key = sample if sample is not None else next(iter(grouped))
    if key not in grouped:
        raise TranscriptFormatError(
            source.name, [NAME], None, f"no conversation {key!r}; it holds {', '.join(grouped)}"
        )
    held = _kinds_held(grouped)
    _set_aside(source.accounting, sum(held.values(), Counter()) - held[key])
    return _conversation(source.name, key, grouped)


def read_each(source: Source) -> Iterator[tuple[str | None, Transcript]]:
    """Every conversation of ``source``, the file read once, as its id (None when the file
    holds one, which ``load(path)`` reads) and the transcript ``load(path, sample=id)`` gives:
    the rows a scan makes of a file of several (``path#<conversation id>``), as it makes one
    per sample of an eval log. The file's own warnings (a line that is no JSON) are each one's.
    """
    from turnfold.formats import settle_load

    grouped = conversations(_read_spans(source))
    module = sys.modules[__name__]
    if not grouped:  # no span of a conversation: one empty transcript, as read() gives
        yield None, settle_load(Transcript(metadata={"source_format": NAME}), source, module)
    held = _kinds_held(grouped)
    every = sum(held.values(), Counter())
    for key in grouped:
        accounting = source.accounting.copy()
        _set_aside(accounting, every - held[key])
        transcript = _conversation(source.name, key, grouped)
        yield (
            (key if len(grouped) > 1 else None),
            settle_load(transcript, source, module, accounting),
        )


def _read_spans(source: Source) -> list[Span]:
    """The spans of ``source`` read (their parents left out hung from the span above); every
    span is noted in the source's accounting. A span written again (a span processor that
    prints each span as it starts and as it ends, two exporters on one stream) is read once:
    the copy that ended, else the last."""
    spans: list[Span] = []
    #: Where each span read is in ``spans``, by (trace id, span id).
    at: dict[tuple[str, str], int] = {}
    #: The parents of the spans left out, by (trace id, span id), to hang the spans read under
    #: them from the span above (:func:`reparent`).
    left_out: dict[tuple[str, str], str | None] = {}
    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        traces = jaeger_traces(record)
        if is_console_span(record):
            found = [_console_span(record, line)]
        elif traces is not None:
            found = [
                _jaeger_span(raw, line)
                for trace in traces
                for raw in as_list(trace.get("spans"))
                if isinstance(raw, _MAPS)
            ]
        elif _is_request(record):
            found = [_span(raw, line) for raw in raw_spans(record)]
            if not found:
                source.ignored("request/(empty)")
        else:
            source.warn("not an OTLP export request (no resourceSpans) nor a span", line)
            continue
        for span in found:
            if span is None:
                source.warn("span without a traceId or spanId skipped", line, record_type="span")
                continue
            key = (span.trace_id, span.span_id)
            if key in at or key in left_out:
                source.ignored("span/(repeated)")
                earlier = at.get(key)
                if earlier is not None and (span.ended_at or not spans[earlier].ended_at):
                    spans[earlier] = span
                continue
            kind = record_type(span.op)
            source.note(kind, "ignored" if kind in RECORDS.ignored else "mapped")
            if kind in RECORDS.mapped:
                at[key] = len(spans)
                spans.append(span)
            else:
                left_out[key] = span.parent_id
    reparent(spans, left_out)
    return spans


def _conversation(name: str, key: str, grouped: Mapping[str, list[Span]]) -> Transcript:
    """The transcript of conversation ``key`` (named its ``sample`` when the file holds
    several)."""
    transcript = _Rebuild(grouped[key], name).transcript()
    transcript.metadata["session_id"] = key
    if len(grouped) > 1:
        transcript.metadata["sample"] = key
    return transcript


def reparent(spans: list[Span], left_out: Mapping[tuple[str, str], str | None]) -> None:
    """Hang each span whose parent was left out from the nearest span read above it (or make
    it a root). Strands' tracer starts every model and tool span of an agent inside an
    ``execute_event_loop_cycle`` span (strands/event_loop/event_loop.py,
    ``start_event_loop_cycle_span``): read through, they are the agent's own spans, not roots
    of their own that would come after the agent's reply; an HTTP server span above an agent
    is read through the same way."""
    if not left_out:
        return
    for span in spans:
        parent = span.parent_id
        for _ in range(len(left_out)):  # a bound: a malformed file's parents may loop
            if parent is None or (span.trace_id, parent) not in left_out:
                break
            parent = left_out[(span.trace_id, parent)]
        span.parent_id = parent


def _kinds_held(grouped: Mapping[str, list[Span]]) -> dict[str, Counter[str]]:
    """How many spans of each record type each conversation holds (every span read is a
    mapped one: :func:`_read_spans`)."""
    return {key: Counter(record_type(span.op) for span in spans) for key, spans in grouped.items()}


def _set_aside(accounting: Accounting, others: Counter[str]) -> None:
    """Spans of the conversations not read were counted as mapped when they were read (the
    choice needs the whole file): count them as left out instead (``others``: how many of
    each record type)."""
    counts = accounting.counts
    for kind, count in others.items():
        counts[kind]["mapped"] -= count
        if not counts[kind]["mapped"]:
            del counts[kind]["mapped"]
            if not counts[kind]:
                del counts[kind]
    if others.total():
        accounting.note("span/(other conversation)", "ignored", others.total())
