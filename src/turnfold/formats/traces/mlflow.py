"""MLflow traces (spec H-4): what ``mlflow.openai.autolog()``, ``mlflow.langchain.autolog()``
and ``@mlflow.trace`` record, read with the OTLP reader's span tree and builder.

Input, each a trace as MLflow serializes it (``Trace.to_dict()`` / ``to_json()``:
``{"info": {trace_id, state, trace_metadata, tags…}, "data": {"spans": [...]}}``):

- an ``mlflow.entities.Trace`` (``mlflow.get_trace(id)``), or a list of them
  (``mlflow.search_traces(return_type="list")``), recognised by its type's module (spec A-3:
  nothing here imports mlflow): :func:`plain`;
- a trace's JSON file (``trace.to_json()``), a JSON list of traces, one trace a line, or a row
  of the ``search_traces()`` DataFrame's ``trace`` column (that JSON text);
- the ``traces.json`` of a trace's artifacts (``mlruns/<experiment>/traces/<id>/artifacts/``:
  ``{"spans": [...]}``, no trace info);
- the SQLite store MLflow writes by default since 3.7 (``sqlite:///mlflow.db`` when no
  ``./mlruns`` of experiments is there, ``mlflow/store/tracking/__init__.py``
  ``DEFAULT_TRACKING_URI``): its ``trace_info``, ``trace_request_metadata``, ``trace_tags``
  and ``spans`` tables (a span's ``content`` is its ``to_dict()`` JSON), read only
  (:func:`read_path`); a trace whose spans the table lacks (stored as an artifact, MLflow before
  3.5) is read from its ``traces.json`` beside the store when that is a local folder.

A span is an OTel span in MLflow's dict form: ids in base64, Unix nanoseconds, the status
``STATUS_CODE_*`` and every attribute value JSON text. It is decoded into the OTLP reader's
:class:`~.spans.Span` (:func:`_span`), its MLflow attributes given the conventions that reader
knows: ``mlflow.spanType`` its operation (``CHAT_MODEL`` and ``LLM`` a model call, ``TOOL``,
``AGENT``, ``CHAIN``; ``UNKNOWN``, ``PARSER``, ``MEMORY``, ``WORKFLOW``, ``TASK``, retrieval
and evaluation spans left out, the spans under them read as under the span above), the
request and response in ``mlflow.spanInputs`` / ``mlflow.spanOutputs`` its messages
(:func:`_messages`: Chat Completions' ``messages`` and ``choices``, the Responses API's ``input``
and ``output`` items, Anthropic's Messages (``mlflow.anthropic.autolog()``), LangChain's
messages, ``("user", text)`` tuples and ``LLMResult`` generations (``mlflow.langchain.autolog()``,
a generation's calls found by its message's id in the graph's state; a message MLflow
converted to a Chat Completions one, its thinking and model lost, read as the whole message
of the state it was made from, :class:`_Replies`; a LangChain message's content, provider
blocks or langchain-core 1.x's standard ones, read by the rule the LangChain readers share,
:mod:`~turnfold.formats.langchain_blocks`: :func:`.langchain_messages.langchain_reply`),
a function's one string argument and its return value as prompt and reply),
``mlflow.chat.tokenUsage`` its ``gen_ai.usage.*``, ``mlflow.llm.model`` its model (else a
LangChain response's ``response_metadata`` model, as the LangChain reader reads it), a tool
span's inputs and outputs its arguments and result (``input.value`` / ``output.value``); an
``ERROR`` status and its ``exception`` event are the failure, and so is a LangChain
``ToolMessage`` of ``status="error"`` (an error LangChain handled ends the span OK). From
there the conversation is rebuilt as an OTLP trace's (:mod:`~turnfold.formats.traces.otlp`):
tool spans settle the calls of the model's response by name and arguments, a nested ``AGENT``
span is a sub-agent, usage is each model span's, once (U-1; the trace's
``mlflow.trace.tokenUsage`` is their sum, not read).

One conversation is one transcript (H-4): the traces of one session
(``mlflow.trace.session`` in the trace's metadata; ``session_id`` in the store), each one
request and its response, are its turns in time order; a trace of no session is a conversation
of its own. Several conversations in one input are picked by ``sample=<session or trace id>``.

Metadata (H-6): ``session_id``, ``trace_ids``, ``agent`` (the outermost agent span, else the
trace's name), ``model``, ``user`` (``mlflow.trace.user``), ``cost_usd`` (the traces'
``mlflow.trace.cost``, MLflow's estimate), ``outcome`` ``error`` when a trace's state is
``ERROR``. A trace still running (``IN_PROGRESS``, spans without an end time) shows its
unfinished tool calls as executing.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from turnfold import codec
from turnfold.formats import databases, langchain_blocks
from turnfold.formats.anthropic_blocks import content_of as result_content
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MAPPINGS,
    as_list,
    checked_timestamp,
    epoch_iso,
    stringify,
    warned_timestamp,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import MalformedLine, unselected
from turnfold.formats.source import Source, TooLarge, open_source, read_bounded
from turnfold.formats.traces.chat_keys import _FAILED, _IMAGES
from turnfold.formats.traces.langchain_messages import (
    image_pairs,
    is_message_tuple,
    langchain_message,
    langchain_reply,
    strip_none,
)
from turnfold.formats.traces.otlp import (
    chosen_conversation,
    conversation_transcript,
    conversations,
    reparent,
    said_once,
    set_aside_other_conversations,
)
from turnfold.formats.traces.spans import (
    _NANOS,
    Span,
    Warn,
    events_of,
    json_value,
    nano_time,
    placed,
    plain_attributes,
    span_id,
    span_time,
    status_of,
)
from turnfold.model import ToolCall, Transcript

NAME = "mlflow"
#: ``load(path, sample=<conversation id>)`` picks one conversation (formats/__init__).
HAS_SAMPLES = True
#: The store's file name (``sqlite:///mlflow.db``, the default tracking URI).
DATABASE = "mlflow.db"

#: ``mlflow.spanType`` (mlflow/entities/span.py ``SpanType``) → the OTLP reader's operation.
_OPERATIONS = {
    "CHAT_MODEL": "LLM",
    "LLM": "LLM",
    "AGENT": "AGENT",
    "TOOL": "TOOL",
    "CHAIN": "CHAIN",
}

RECORDS = Records(
    mapped={
        "trace": "one request and its response; its session names its conversation",
        "span/CHAT_MODEL": "a model call: the messages new in its request, its response, "
        "usage and model; a LangChain message's content read by formats/langchain_blocks "
        "(reasoning and thinking, text without its annotations/citations, refusals, calls of "
        "tool_calls or call blocks once, garbled calls failed, a provider's own tool calls "
        "settled by their results, images, other blocks named with a warning; a message "
        "MLflow converted to Chat Completions, its thinking and model dropped, read as the "
        "graph state's whole message it was made from; the model its response_metadata's "
        "when MLflow recorded none)",
        "span/LLM": "a model call, as span/CHAT_MODEL",
        "span/TOOL": "a tool run: the call of its name and arguments settled with its "
        "result, times and status",
        "span/AGENT": "an agent run: the outermost is the turn, nested ones sub-agents",
        "span/CHAIN": "a step: the spans under it are read; its own input only as the "
        "prompt of a trace whose outermost span it is",
    },
    ignored={
        "span/UNKNOWN": "a traced function of no type: the spans under it are read as if "
        "under the span above it",
        "span/PARSER": "output parsing: not part of the conversation",
        "span/MEMORY": "memory reads and writes: not part of the conversation",
        "span/WORKFLOW": "a workflow's span: the spans under it are read",
        "span/TASK": "a step of a workflow: the spans under it are read",
        "span/RETRIEVER": "retrieval steps: their documents are not messages",
        "span/EMBEDDING": "embedding calls carry no conversation",
        "span/RERANKER": "reranking steps: their documents are not messages",
        "span/GUARDRAIL": "guardrail checks: not part of the conversation",
        "span/EVALUATOR": "evaluations: not part of the conversation",
        "span/(other)": "a span of a type MLflow does not define",
        "span/(repeated)": "a span written again: the copy that ended is read",
        "span/(other conversation)": "spans of another conversation of the input (read "
        "with sample=<conversation id>)",
    },
)

#: The trace metadata key of the session a trace belongs to (mlflow/tracing/constant.py).
SESSION = "mlflow.trace.session"
#: The ids and keys of the store's rows, read no longer than an id may be
#: (``databases.KEY_BYTES``): a hostile one costs its row, never the store.
_KEYS = ("request_id", "trace_id", "span_id", "session_id", "status", "key")


# --- objects --------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """An ``mlflow.entities.Trace`` as its ``to_dict()``; a list of them as a list."""
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


# --- detection ------------------------------------------------------------------------------


def _is_trace(value: Any) -> bool:
    """``{"info": {"trace_id"…}, "data": {"spans": [...]}}``: a trace's ``to_dict()``."""
    if not isinstance(value, MAPPINGS):
        return False
    info, data = value.get("info"), value.get("data")
    return (
        isinstance(info, MAPPINGS)
        and ("trace_id" in info or "request_id" in info)
        and isinstance(data, MAPPINGS)
        and isinstance(data.get("spans"), list)
    )


def _is_mlflow_span(value: Any) -> bool:
    attributes = value.get("attributes") if isinstance(value, MAPPINGS) else None
    return isinstance(attributes, MAPPINGS) and (
        "mlflow.spanType" in attributes or "mlflow.traceRequestId" in attributes
    )


def _is_artifact(value: Any) -> bool:
    """A trace's ``traces.json`` artifact: ``{"spans": [...]}`` of MLflow spans."""
    if not isinstance(value, MAPPINGS) or set(value) != {"spans"}:
        return False
    spans = value["spans"]
    return isinstance(spans, list) and bool(spans) and _is_mlflow_span(spans[0])


def _classify(value: Any) -> int:
    return DISTINCTIVE if _is_trace(value) or _is_artifact(value) else NOT_MINE


def detect(source: Source) -> Evidence:
    """A trace's dict (one, a list of them, one a line) or its spans artifact."""
    if source.is_document and isinstance(source.document, MAPPINGS):
        return Evidence.of([source.document], _classify, "no MLflow trace (info, data.spans)")
    return Evidence.of(source.head_values(), _classify, "no MLflow trace (info, data.spans)")


def detect_path(path: Path) -> Evidence | None:
    """MLflow's SQLite store: its ``trace_info`` and ``spans`` tables."""
    found = databases.tables(path)
    if found is None or not found >= {"trace_info", "spans"}:
        return None
    return Evidence(share=1.0, marks=1)


# --- spans ----------------------------------------------------------------------------------


def _attributes(raw: Any) -> dict[str, Any]:
    """MLflow's attributes, each value JSON text, decoded."""
    if not isinstance(raw, MAPPINGS):
        return {}
    return {str(key): json_value(value) for key, value in raw.items()}


def _nanos(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):  # not a number, or an infinite one
        return 0


def _message(value: Any) -> dict[str, Any] | None:
    """A Chat Completions message, or a LangChain message as MLflow writes it (``type``
    ``human`` / ``ai`` / ``system`` / ``tool``), in Chat shape
    (:func:`.langchain_messages.langchain_message`)."""
    if is_message_tuple(value):  # LangChain's ("user", "text") as a graph's input
        return {"role": _LANGCHAIN_ROLES.get(value[0], value[0]), "content": value[1]}
    if not isinstance(value, MAPPINGS):
        return None
    fields: dict[str, Any] = dict(strip_none(value))
    if isinstance(fields.get("role"), str):
        return fields
    role = _LANGCHAIN_ROLES.get(str(fields.get("type")))
    if role is None:
        return None
    return langchain_message(role, fields)


def _chats(value: Any) -> list[dict[str, Any]]:
    """The Chat messages of one message of any form :func:`_message` reads; a LangChain AI
    message's by :func:`.langchain_messages.langchain_reply`, an Anthropic one's by
    :func:`_anthropic`."""
    if isinstance(value, MAPPINGS) and value.get("type") == "ai" and "role" not in value:
        return langchain_reply(strip_none(value))
    message = _message(value)
    return [] if message is None else _anthropic(message)


def _reasoning_of(chat: dict[str, Any]) -> None:
    """An Anthropic assistant message's ``thinking`` blocks as the Chat reader's
    ``reasoning_content``; the other blocks stay (a LangChain message's are read by
    :func:`.langchain_messages.langchain_reply`)."""
    content = chat["content"]
    texts: list[str] = []
    kept = []
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, MAPPINGS) else None
        text = block.get("thinking") if kind == "thinking" else None
        if isinstance(text, str):
            texts.append(text)
        else:
            kept.append(block)
    if texts:
        chat["content"] = kept
    if any(texts):
        chat["reasoning_content"] = "\n\n".join(t for t in texts if t)


def _each(values: list[Any]) -> list[dict[str, Any]]:
    """The Chat messages of a list of messages, Anthropic's each as one or more."""
    return [chat for value in values for chat in _chats(value)]


def _anthropic(message: dict[str, Any]) -> list[dict[str, Any]]:
    """An Anthropic Messages message (``mlflow.anthropic.autolog()`` records the request and
    the response as the SDK has them) in Chat shape: an assistant's ``tool_use`` blocks its
    ``tool_calls``, its thinking its ``reasoning_content`` (:func:`_reasoning_of`); a user's
    ``tool_result`` blocks each a ``tool`` message (failed where ``is_error``, which settles a
    call no tool span settled), before what else it says. A response (``"type": "message"``)
    is its role and content only, as the next request's history repeats it. Any other message
    as it is."""
    if message.get("type") == "message":
        message = {"role": message.get("role"), "content": message.get("content")}
    content = message.get("content")
    if not isinstance(content, list) or not any(
        isinstance(b, MAPPINGS) and b.get("type") in ("tool_use", "tool_result", "thinking")
        for b in content
    ):
        return [message]
    role = message.get("role")
    kept: list[Any] = []
    out: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, MAPPINGS) else None
        if kind == "tool_use" and role == "assistant":
            function = {"name": block.get("name"), "arguments": codec.dumps(block.get("input", {}))}
            calls.append({"id": block.get("id"), "type": "function", "function": function})
        elif kind == "tool_result" and role == "user":
            text, images = result_content(block.get("content"))
            result = {"role": "tool", "tool_call_id": block.get("tool_use_id"),
                      "content": text or ""}  # fmt: skip
            if images:
                result[_IMAGES] = image_pairs(images)
            if block.get("is_error") is True:  # settles a call no tool span settled as failed
                result[_FAILED] = True
            out.append(result)
        else:
            kept.append(block)
    chat: dict[str, Any] = {**message, "content": kept}
    if role == "assistant":
        _reasoning_of(chat)
    if calls:
        chat["tool_calls"] = calls
    if kept or calls or "reasoning_content" in chat:
        out.append(chat)
    return out


_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _response_items(items: list[Any]) -> list[dict[str, Any]]:
    """Responses API items (``message``, ``function_call``, ``function_call_output``,
    ``reasoning``) as Chat messages: a response's calls one assistant message."""
    out: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, MAPPINGS):
            continue
        kind = item.get("type", "message")
        if kind == "message" and isinstance(item.get("role"), str):
            content = item.get("content")
            if isinstance(content, list):
                texts = [p.get("text") for p in content if isinstance(p, MAPPINGS)]
                content = "\n".join(t for t in texts if isinstance(t, str))
            out.append({"role": item["role"], "content": content})
        elif kind == "function_call":
            function = {"name": item.get("name"), "arguments": item.get("arguments")}
            call = {"id": item.get("call_id"), "type": "function", "function": function}
            last = out[-1] if out else None
            if last is not None and last.get("role") == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            content = output if isinstance(output, str) else stringify(output)
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": content})
        elif kind == "reasoning":
            summary = [
                p.get("text") for p in as_list(item.get("summary")) if isinstance(p, MAPPINGS)
            ]
            text = "\n".join(t for t in summary if isinstance(t, str))
            if text:
                out.append({"role": "assistant", "reasoning_content": text})
    return out


def _messages(
    value: Any, role: str, replies: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The messages of a span's inputs or outputs: a list of messages (LangChain's batch, a
    list of lists, its first), ``messages`` (a chat request, an agent's state), ``choices``
    (a Chat Completions response), ``input`` / ``output`` items (the Responses API, an
    ``output_text`` the text), a function's one string argument, a text; any other value is
    the message's text as JSON, never dropped."""
    # A batch (a list of lists of messages), not one ("user", "text") message: its first.
    if isinstance(value, list) and value and isinstance(value[0], list):
        value = value if is_message_tuple(value[0]) else value[0]
    if isinstance(value, list):
        found = _each(value)
        if found:
            return found
    if isinstance(value, MAPPINGS):
        if isinstance(value.get("messages"), list):
            return _messages(value["messages"], role, replies)
        choices = [
            c.get("message") for c in as_list(value.get("choices")) if isinstance(c, MAPPINGS)
        ]
        # LangChain's LLMResult (a chat model span's outputs when MLflow could not convert
        # them to Chat Completions): the first generation of the batch's first prompt.
        # Its message is dumped without its calls (_Replies): the whole one, by id.
        for batch in as_list(value.get("generations"))[:1]:
            for generation in as_list(batch)[:1]:
                got = generation.get("message") if isinstance(generation, MAPPINGS) else None
                reply = got.get("id") if isinstance(got, MAPPINGS) else None
                choices.append((replies or {}).get(reply, got) if isinstance(reply, str) else got)
        if choices:
            return _each(choices)
        items = value.get("input" if role == "user" else "output")
        if isinstance(items, list):
            found = _response_items(items)
            system = value.get("instructions")
            if isinstance(system, str) and system and role == "user":
                found.insert(0, {"role": "system", "content": system})
            return found
        if isinstance(items, str):
            return [{"role": role, "content": items}]
        found = _chats(value)
        if found:
            return found
        texts = [v for v in value.values() if isinstance(v, str)]
        if role == "user" and len(value) == 1 and texts:
            return [{"role": role, "content": texts[0]}]
    if value is None:
        return []
    return [{"role": role, "content": value if isinstance(value, str) else stringify(value)}]


def _conventions(
    op: str, name: str, a: dict[str, Any], replies: _Replies
) -> tuple[dict[str, Any], Any]:
    """The attributes the OTLP reader reads, from an MLflow span's (``a``, decoded), and its
    messages (:attr:`.spans.Span.chat`) where it is a model, agent or step span (``replies``:
    its trace's LangChain AI messages, :class:`_Replies`)."""
    out = dict(a)
    out.pop(_TOOL_ERROR, None)  # ours to set, never the trace's
    inputs, outputs = a.get("mlflow.spanInputs"), a.get("mlflow.spanOutputs")
    chat = None
    if op == "TOOL":
        if "mlflow.spanInputs" in a:
            out["input.value"] = codec.dumps(inputs)
        if "mlflow.spanOutputs" in a and outputs is not None:
            out["output.value"] = outputs if isinstance(outputs, str) else codec.dumps(outputs)
        message = _message(outputs) if isinstance(outputs, MAPPINGS) else None
        if message is not None and message.get("role") == "tool":  # LangChain's ToolMessage
            images = message.get(_IMAGES)
            # Its images as the parts the OTLP reader's tool result reads (an MCP image's).
            out["output.value"] = (
                [{"type": "text", "text": message.get("content")},
                 *({"type": "image", "data": d, "mimeType": m} for m, d in images)]
                if images
                else message.get("content")
            )  # fmt: skip
            out["tool_call.id"] = message.get("tool_call_id")
            # A ToolException LangChain handled: the span ended OK (_span: failed).
            if isinstance(outputs, MAPPINGS) and outputs.get("status") == "error":
                out[_TOOL_ERROR] = True
    elif op in ("LLM", "AGENT", "CHAIN"):
        if op == "LLM" and a.get(_FORMAT) == "langchain":
            inputs, outputs = replies.converted(inputs), replies.converted(outputs)
        chat = (_messages(inputs, "user"), _messages(outputs, "assistant", replies.by_id))
    if op == "LLM":
        model = a.get("mlflow.llm.model")
        # A LangChain response's own model, as the LangChain reader reads it, when MLflow
        # found none in the call's parameters (a chat model of no model_name parameter).
        reply = _langchain_output(outputs, replies) if not isinstance(model, str) else None
        model = model if reply is None else langchain_blocks.model_of(reply)
        if isinstance(model, str):
            out["gen_ai.response.model"] = model
        elif isinstance(inputs, MAPPINGS) and isinstance(inputs.get("model"), str):
            out["gen_ai.request.model"] = inputs["model"]
        if isinstance(outputs, MAPPINGS) and isinstance(outputs.get("id"), str):
            out["gen_ai.response.id"] = outputs["id"]
        usage = a.get("mlflow.chat.tokenUsage")
        if isinstance(usage, MAPPINGS):
            for theirs, ours in _USAGE.items():
                if usage.get(theirs) is not None:
                    out[ours] = usage[theirs]
    if op == "AGENT":
        out.setdefault("gen_ai.agent.name", name)
    return out, chat


#: The span attribute naming its messages' form: ``langchain`` on a LangChain chat model's
#: (``SpanAttributeKey.MESSAGE_FORMAT``).
_FORMAT = "mlflow.message.format"
#: Set on a tool span whose ``ToolMessage`` says ``status="error"``: LangChain ends the run of
#: a tool whose error it handled without an error, its message the failure.
_TOOL_ERROR = "turnfold.tool.failed"

#: ``mlflow.chat.tokenUsage`` keys (``TokenUsageKey``) and the GenAI attributes of each.
_USAGE = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cache_read_input_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_creation_input_tokens": "gen_ai.usage.cache_creation.input_tokens",
}


def span_type(raw: Mapping[str, Any]) -> str:
    """A span's ``mlflow.spanType`` (JSON text in its attributes), ``UNKNOWN`` without one."""
    attributes = raw.get("attributes")
    value = (
        json_value(attributes.get("mlflow.spanType")) if isinstance(attributes, MAPPINGS) else None
    )
    return value if isinstance(value, str) and value else "UNKNOWN"


def record_type(kind: str) -> str:
    found = f"span/{kind}"
    return found if found in RECORDS.mapped or found in RECORDS.ignored else "span/(other)"


def _span(
    raw: Mapping[str, Any],
    line: int,
    session: str | None,
    replies: _Replies,
    warn: Warn,
    after: int | None = None,
) -> Span | None:
    """An MLflow span (its ``to_dict()``) as the OTLP reader's span; a time that is no time
    is left out and ``warn`` told.

    A span sorts among its siblings by its start; one without a start takes the place of the
    span written before it in its trace (``after``): MLflow writes a trace's spans in the order
    they started (``_Trace.to_mlflow_trace`` lists them as ``register_span`` took them, at
    each one's start), so it stays where it was written rather than first of all. The first
    span written takes its end's place (:func:`~.spans.placed`)."""
    trace = span_id(raw.get("trace_id"), 16)
    own = span_id(raw.get("span_id"), 8)
    if trace is None or own is None:
        return None
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    kind = span_type(raw)
    op = _OPERATIONS.get(kind, "(other)")
    attributes, chat = _conventions(op, str(name), _attributes(raw.get("attributes")), replies)
    if session:
        attributes["session.id"] = session  # the OTLP reader's conversation (conversation_of)
    events = events_of(raw, plain_attributes)
    status = status_of(raw)
    message = status.get("message")
    started_at = span_time(
        raw.get("start_time_unix_nano"), nano_time, warn, own, "start_time_unix_nano", _NANOS
    )
    ended_at = span_time(
        raw.get("end_time_unix_nano"), nano_time, warn, own, "end_time_unix_nano", _NANOS
    )
    start = _nanos(raw.get("start_time_unix_nano")) if started_at is not None else None
    end = _nanos(raw.get("end_time_unix_nano")) if ended_at is not None else None
    return Span(
        trace_id=trace,
        span_id=own,
        parent_id=span_id(raw.get("parent_span_id"), 8),
        name=str(name),
        op=op,
        start=placed(start, after if after is not None else end),
        started_at=started_at,
        ended_at=ended_at,
        attributes=attributes,
        events=events,
        failed=status.get("code") in ("STATUS_CODE_ERROR", "ERROR")
        or bool(attributes.pop(_TOOL_ERROR, False)),
        status_message=message if isinstance(message, str) and message else None,
        line=line,
        chat=chat,
    )


class _Replies:
    """The LangChain AI messages of a trace's graph state, each as the whole ``AIMessage``
    (its dump has ``tool_calls``), found in its spans' inputs and outputs: by id, and by what
    MLflow keeps of one it converted (:func:`_reply_key`).

    A chat model span's ``LLMResult`` dumps its ``ChatGeneration.message`` as the field's
    type, ``BaseMessage``, without the ``tool_calls`` of the ``AIMessage`` it is (found by its
    id). When MLflow can convert a chat model's messages to Chat Completions ones
    (``mlflow.langchain.utils.chat.convert_lc_message_to_chat_message``: a request's
    ``messages``, a response's ``choices``) it keeps the role, content and calls only, not the
    message's id, ``additional_kwargs`` (``reasoning_content``…) or ``response_metadata`` (its
    model): the whole message is the one of the graph's state with the same calls (their ids),
    or of no calls and the same content, when that one message has them (:meth:`whole`)."""

    def __init__(self, raws: list[Any]) -> None:
        self.by_id: dict[str, Any] = {}
        #: The ids of the messages of each key: a key of two messages tells neither.
        self._by_key: dict[tuple[str, ...], set[str]] = {}
        for raw in raws:
            attributes = raw.get("attributes") if isinstance(raw, MAPPINGS) else None
            if isinstance(attributes, MAPPINGS):
                for key in ("mlflow.spanInputs", "mlflow.spanOutputs"):
                    text = attributes.get(key)
                    if isinstance(text, str) and '"ai"' in text:  # only LangChain's are walked
                        self._walk(json_value(text))

    def _walk(self, value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                self._walk(item)
        elif isinstance(value, MAPPINGS):
            own = value.get("id")
            if value.get("type") == "ai" and isinstance(own, str):
                if "tool_calls" in value and own not in self.by_id:
                    self.by_id[own] = value
                    key = _reply_key(value.get("content"), _langchain_calls(value))
                    if key is not None:
                        self._by_key.setdefault(key, set()).add(own)
                return
            for item in value.values():
                self._walk(item)

    def whole(self, chat: Any) -> Any:
        """The LangChain AI message MLflow converted to the Chat Completions assistant message
        ``chat``; anything else, or a message none or several of the state's match, as it is."""
        if not isinstance(chat, MAPPINGS) or chat.get("role") != "assistant" or not self._by_key:
            return chat
        calls = [c for c in as_list(chat.get("tool_calls")) if isinstance(c, MAPPINGS)]
        key = _reply_key(chat.get("content"), calls)
        found = self._by_key.get(key) if key is not None else None
        return self.by_id[next(iter(found))] if found is not None and len(found) == 1 else chat

    def converted(self, value: Any) -> Any:
        """A chat model span's inputs or outputs with each assistant message MLflow converted
        as the whole LangChain message (:meth:`whole`): read as every LangChain message is,
        with its thinking and model, and the same in a request's history as in the response."""
        if not isinstance(value, MAPPINGS) or not self._by_key:
            return value
        if isinstance(value.get("messages"), list):
            return {**value, "messages": [self.whole(m) for m in value["messages"]]}
        if isinstance(value.get("choices"), list):
            choices = [
                {**c, "message": self.whole(c.get("message"))} if isinstance(c, MAPPINGS) else c
                for c in value["choices"]
            ]
            return {**value, "choices": choices}
        return value


def _langchain_calls(message: Mapping[str, Any]) -> list[Any]:
    """An ``AIMessage``'s calls, as MLflow's conversion lists them: ``tool_calls`` then
    ``invalid_tool_calls``."""
    return [*as_list(message.get("tool_calls")), *as_list(message.get("invalid_tool_calls"))]


def _reply_key(content: Any, calls: list[Any]) -> tuple[str, ...] | None:
    """What a LangChain AI message and its Chat Completions conversion share: its calls' ids,
    else its content (a message of calls loses its empty content, and an Anthropic one its
    ``tool_use`` blocks, in the conversion); None when a call has no id."""
    if calls:
        ids = [c.get("id") if isinstance(c, MAPPINGS) else None for c in calls]
        named = [i for i in ids if isinstance(i, str) and i]
        return ("calls", *named) if len(named) == len(ids) else None
    return ("content", codec.dumps(strip_none("" if content is None else content)))


def _langchain_output(outputs: Any, replies: _Replies) -> Mapping[str, Any] | None:
    """The LangChain AI message a chat model span's outputs hold (its ``LLMResult``'s first
    generation, as :func:`_messages` reads it; a response MLflow converted, made whole)."""
    if not isinstance(outputs, MAPPINGS):
        return None
    found: Any = None
    for choice in as_list(outputs.get("choices"))[:1]:
        found = choice.get("message") if isinstance(choice, MAPPINGS) else None
    for batch in as_list(outputs.get("generations"))[:1]:
        for generation in as_list(batch)[:1]:
            found = generation.get("message") if isinstance(generation, MAPPINGS) else None
            own = found.get("id") if isinstance(found, MAPPINGS) else None
            found = replies.by_id.get(own, found) if isinstance(own, str) else found
    return found if isinstance(found, MAPPINGS) and found.get("type") == "ai" else None


# --- reading --------------------------------------------------------------------------------


class _Traces:
    """The spans of an input's traces, and what each trace's info says."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        #: Trace info by the spans' trace id (hex), as MLflow wrote it.
        self.infos: dict[str, Mapping[str, Any]] = {}
        self.kinds: dict[tuple[str, str], str] = {}


def _conversation_id(info: Mapping[str, Any], raws: list[Any]) -> str | None:
    """The conversation a trace belongs to: its session, else the trace's own id (``tr-…``,
    from its info or its spans' ``mlflow.traceRequestId``)."""
    metadata = info.get("trace_metadata")
    session = metadata.get(SESSION) if isinstance(metadata, MAPPINGS) else None
    if isinstance(session, str) and session:
        return session
    if isinstance(info.get("trace_id"), str) and info["trace_id"]:
        return str(info["trace_id"])
    for raw in raws:
        attributes = raw.get("attributes") if isinstance(raw, MAPPINGS) else None
        trace = (
            json_value(attributes.get("mlflow.traceRequestId"))
            if isinstance(attributes, MAPPINGS)
            else None
        )
        if isinstance(trace, str) and trace:
            return trace
    return None


def _read_traces(source: Source) -> _Traces:
    read = _Traces()
    at: dict[tuple[str, str], int] = {}
    left_out: dict[tuple[str, str], str | None] = {}
    #: What the spans' times that are no time say, once each (as the OTLP reader's
    #: ``_read_spans``).
    said: set[str] = set()
    for line, record in source.records():
        if isinstance(record, MalformedLine):
            source.warn(record.reason, line)
            continue
        if _is_trace(record):
            info = record["info"]
            raws = record["data"]["spans"]
            source.mapped("trace")
            if not raws:
                _spanless(read, info, line, source)
                continue
        elif _is_artifact(record):
            info, raws = {}, record["spans"]
        else:
            source.warn("not an MLflow trace (no info and data.spans)", line)
            continue
        session = _conversation_id(info, raws)
        replies = _Replies(raws)
        warn = said_once(source, line, said)
        after: int | None = None  # the place of the span written before, in this trace
        for raw in raws:
            span = (
                _span(raw, line, session, replies, warn, after)
                if isinstance(raw, MAPPINGS)
                else None
            )
            if span is None:
                source.warn("span without a trace_id or span_id skipped", line, record_type="span")
                continue
            after = span.start
            read.infos.setdefault(span.trace_id, info)
            key = (span.trace_id, span.span_id)
            if key in at or key in left_out:
                source.ignored("span/(repeated)")
                earlier = at.get(key)
                if earlier is not None and (span.ended_at or not read.spans[earlier].ended_at):
                    read.spans[earlier] = span
                continue
            kind = read.kinds[key] = record_type(span_type(raw))
            source.note(kind, "ignored" if kind in RECORDS.ignored else "mapped")
            if kind in RECORDS.mapped:
                at[key] = len(read.spans)
                read.spans.append(span)
            else:
                left_out[key] = span.parent_id
    reparent(read.spans, left_out)
    return read


def _spanless(read: _Traces, info: Mapping[str, Any], line: int, source: Source) -> None:
    """A trace that holds no spans (``search_traces(include_spans=False)``; a trace whose
    spans the store lost) as what its info keeps: an agent run of its request and response
    previews (``request_preview`` / ``response_preview``, else the ``mlflow.traceInputs`` /
    ``mlflow.traceOutputs`` metadata; MLflow cuts both short), at its ``request_time`` for its
    ``execution_duration_ms``, failed when its state is ``ERROR``: a turn of its conversation
    in its place, never left out unsaid."""
    trace = info.get("trace_id") or info.get("request_id")
    meta = _mapping(info.get("trace_metadata"))
    request = info.get("request_preview") or meta.get("mlflow.traceInputs")
    response = info.get("response_preview") or meta.get("mlflow.traceOutputs")
    if not isinstance(trace, str) or not trace or not (request or response):
        source.warn(f"trace {trace!r} holds no spans and no request or response", line)
        return
    hex_id = trace.removeprefix("tr-")
    start = _request_nanos(info, f"trace {trace}", lambda reason: source.warn(reason, line))
    duration = info.get("execution_duration_ms")
    end = start + int(duration) * 1_000_000 if start and isinstance(duration, int) else None
    name = _mapping(info.get("tags")).get("mlflow.traceName")
    failed = info.get("state") == "ERROR"
    raw = {
        "trace_id": hex_id,
        "span_id": f"spanless:{hex_id}",
        "name": name if isinstance(name, str) else "",
        "start_time_unix_nano": start,
        "end_time_unix_nano": end,
        "status": {"code": "STATUS_CODE_ERROR" if failed else "STATUS_CODE_OK"},
        "attributes": {
            "mlflow.spanType": codec.dumps("AGENT"),
            "mlflow.spanInputs": request if isinstance(request, str) else None,
            "mlflow.spanOutputs": response if isinstance(response, str) else None,
        },
    }
    span = _span(raw, line, _conversation_id(info, []), _Replies([]), _unsaid)
    if span is None:
        return
    read.infos.setdefault(span.trace_id, info)
    read.kinds[(span.trace_id, span.span_id)] = "trace"
    read.spans.append(span)
    source.warn(f"trace {trace} holds no spans: its request and response previews are shown", line)


def _unsaid(reason: str) -> None:
    """A spanless trace's span is made here of times already checked: nothing to say."""


def _request_nanos(info: Mapping[str, Any], what: str, warn: Warn) -> int:
    """When a trace started, in Unix nanoseconds (0 unknown): its ``request_time`` (MLflow 3,
    ISO 8601), else its ``timestamp_ms`` (MLflow 2); one that is no time is left out and
    ``warn`` told, naming the trace (``what``)."""
    stamp = warned_timestamp(info.get("request_time"), checked_timestamp, warn, what,
                             name="request_time", unit="ISO 8601")  # fmt: skip
    if stamp is not None:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1_000_000) * 1000
    millis = info.get("timestamp_ms")
    counted = warned_timestamp(millis, _millis_time, warn, what, name="timestamp_ms",
                               unit="ms since the epoch")  # fmt: skip
    return millis * 1_000_000 if counted is not None and isinstance(millis, int) else 0


def _millis_time(value: Any) -> str | None:
    """Whole Unix milliseconds (MLflow 2's ``timestamp_ms``) as ISO 8601; None for others."""
    return epoch_iso(value, per_second=1000) if isinstance(value, int) else None


def read(source: Source, *, sample: str | None = None, epoch: int | None = None) -> Transcript:
    """The conversation of ``source`` (the one named ``sample`` when it holds several)."""
    if epoch is not None:
        raise ValueError(f"{source.name}: MLflow conversations have no epochs; pass sample= only")
    if source.path is not None and detect_path(source.path) is not None:
        return read_path(source.path, sample=sample)
    return _read(source, sample, stored=False)


def _read(source: Source, sample: str | None, stored: bool) -> Transcript:
    """The conversation of ``source``'s traces that ``sample`` names (with none, the only
    one). Naming none of several, or one not there, is said of a file of traces as of an OTLP
    file, and of the store (``stored``) as of every database of sessions."""
    traces = _read_traces(source)
    grouped = conversations(traces.spans)
    if not grouped:
        return Transcript(metadata={"source_format": NAME})
    if not stored:
        key = chosen_conversation(source.name, NAME, grouped, sample, "session or trace id")
    elif sample in grouped or (sample is None and len(grouped) == 1):
        key = sample if sample is not None else next(iter(grouped))
    else:
        raise unselected(source.name, list(grouped), sample, "MLflow conversation",
                         "<session or trace id>")  # fmt: skip
    held = {
        k: Counter(traces.kinds[(s.trace_id, s.span_id)] for s in v) for k, v in grouped.items()
    }
    set_aside_other_conversations(source.accounting, sum(held.values(), Counter()) - held[key])
    transcript = conversation_transcript(source.name, key, grouped)
    _settle(transcript, [traces.infos[t] for t in dict.fromkeys(s.trace_id for s in grouped[key])])
    return transcript


def _settle(transcript: Transcript, infos: list[Mapping[str, Any]]) -> None:
    """The traces' info as the conversation's metadata (H-6); a trace still running shows
    its unfinished calls as executing."""
    metadata = transcript.metadata
    metadata["source_format"] = NAME
    ids = [i["trace_id"] for i in infos if isinstance(i.get("trace_id"), str)]
    if ids:
        metadata["trace_ids"] = ids
    costs = []
    for info in infos:
        meta = _mapping(info.get("trace_metadata"))
        tags = _mapping(info.get("tags"))
        if isinstance(meta.get("mlflow.trace.user"), str) and meta["mlflow.trace.user"]:
            metadata.setdefault("user", meta["mlflow.trace.user"])
        if isinstance(tags.get("mlflow.traceName"), str):
            metadata.setdefault("agent", tags["mlflow.traceName"])
        cost = json_value(meta.get("mlflow.trace.cost"))
        if isinstance(cost, MAPPINGS) and isinstance(cost.get("total_cost"), (int, float)):
            costs.append(float(cost["total_cost"]))
        if info.get("state") == "ERROR":
            metadata["outcome"] = "error"
    if costs:
        metadata["cost_usd"] = sum(costs)
    if any(info.get("state") == "IN_PROGRESS" for info in infos):
        _running(transcript)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, MAPPINGS) else {}


def _running(transcript: Transcript) -> None:
    """A call whose span has not ended in a trace still running is executing, not unknown."""
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            if entry.status in ("unknown", "pending") and entry.ended_at is None:
                transcript.update(entry, status="executing")
            if entry.subagent is not None and entry.subagent.transcript is not None:
                _running(entry.subagent.transcript)


# --- the SQLite store -----------------------------------------------------------------------


def _store_traces(db: sqlite3.Connection, path: Path, source: Source) -> Iterator[Any]:
    """Each trace of the store as its ``to_dict()``, oldest first."""
    metadata = _by_trace(db, "trace_request_metadata", source)
    tags = _by_trace(db, "trace_tags", source)
    spans: dict[str, list[Any]] = {}
    for row in databases.rows(db, "spans", "trace_id, content", "ORDER BY start_time_unix_nano",
                              key="span_id", bounded=_KEYS):  # fmt: skip
        if isinstance(row, databases.OversizedRow):
            source.warn(row.reason, record_type="span")
            continue
        trace, content = row
        try:
            spans.setdefault(trace, []).append(codec.loads(content))
        except ValueError as exc:
            source.warn(f"trace {trace}: a span's content is no JSON ({exc})", record_type="span")
    # The store keeps a trace's session and cost in columns of their own (3.x), not in its
    # metadata.
    columns = "request_id, status, {}, {}".format(*_columns(db))
    for row in databases.rows(db, "trace_info", columns, "ORDER BY timestamp_ms",
                              key="request_id", bounded=_KEYS):  # fmt: skip
        if isinstance(row, databases.OversizedRow):
            source.warn(row.reason, record_type="trace")
            continue
        trace, state, session, total = row
        meta = metadata.get(trace, {})
        if session:
            meta.setdefault(SESSION, session)
        if total is not None:
            meta.setdefault("mlflow.trace.cost", codec.dumps({"total_cost": total}))
        info = {"trace_id": trace, "state": state, "trace_metadata": meta,
                "tags": tags.get(trace, {})}  # fmt: skip
        held = spans.get(trace)
        if held is None:
            held = _artifact_spans(info["tags"], trace, path, source)
        yield {"info": info, "data": {"spans": held}}


def _by_trace(
    db: sqlite3.Connection, table: str, source: Source | None, where: str = "",
    params: tuple[Any, ...] = (),
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Each trace's keys and values of ``table`` (its metadata or its tags); a value over the
    record limit is left out, with a warning naming its trace when ``source`` takes one (a
    listing has none: the load of the conversation says it)."""
    found: dict[str, dict[str, Any]] = {}
    for row in databases.rows(db, table, "key, value, request_id", where, params,
                              key="request_id", bounded=_KEYS):  # fmt: skip
        if isinstance(row, databases.OversizedRow):
            if source is not None:
                source.warn(row.reason, record_type="trace")
            continue
        key, value, trace = row
        found.setdefault(trace, {})[key] = value
    return found


def _columns(db: sqlite3.Connection) -> tuple[str, str]:
    """The session and cost columns of the store's ``trace_info``, ``NULL`` where its schema
    has none (a store an older MLflow made)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(trace_info)")}
    return tuple(c if c in columns else "NULL" for c in ("session_id", "total_cost"))  # type: ignore[return-value]


def _artifact_spans(tags: Mapping[str, Any], trace: str, path: Path, source: Source) -> list[Any]:
    """The spans of a trace kept as its ``traces.json`` artifact (MLflow before 3.5 wrote no
    spans table), where the artifact location is a local folder."""
    location = tags.get("mlflow.artifactLocation")
    if isinstance(location, str) and location.startswith("file:"):
        location = unquote(urlparse(location).path)
    file = Path(location) / "traces.json" if isinstance(location, str) and location else None
    if file is not None and not file.is_absolute():
        file = path.parent / file
    # The location is followed wherever it lies, outside the store's folder too: MLflow writes
    # there its experiment's artifact root, a folder of the tracking server's choosing
    # (``--default-artifact-root``; ``SqlAlchemyStore._get_trace_artifact_location_tag``,
    # mlflow 3.17). What is read there is bounded as a session file is: a regular file only
    # (a named pipe or a device is never waited on), no larger than the record limit, and
    # taken only when it is an MLflow spans artifact.
    try:
        if file is not None and file.is_file():
            value = codec.loads(read_bounded(file))
            if _is_artifact(value):
                return list(value["spans"])
    except TooLarge as exc:
        source.warn(f"trace {trace}: its spans are not in the store, and {exc.reason}")
        return []
    except (OSError, ValueError):
        pass
    source.warn(f"trace {trace}: its spans are neither in the store nor at {location!r}")
    return []


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The conversation ``sample`` names (a session or trace id) of MLflow's SQLite store at
    ``path``; with none, its only conversation."""
    if epoch is not None:
        raise ValueError(f"{path} is an MLflow store: its conversations have no epochs")
    if not databases.is_database(path):  # a trace's JSON file, named with format="mlflow"
        opened, stream = open_source(path)
        with contextlib.closing(stream) if stream is not None else contextlib.nullcontext():
            opened.path = None
            # What reading the file warned of and accounted for is the load's, as a file's
            # read by detection is.
            return opened.hand_over(read(opened, sample=sample))
    warnings = Source(str(path), iter(()), path=path)
    try:
        databases.refuse_unreadable([sample])  # a trace whose id the listing could not read
        db = databases.connect(path)
        with contextlib.closing(db):
            records = list(enumerate(_store_traces(db, path, warnings), start=1))
    except (OSError, sqlite3.Error) as exc:
        raise databases.unreadable(path, NAME, exc) from None
    source = Source(str(path), iter(records), warnings=warnings.warnings)
    source.accounting = warnings.accounting
    return source.hand_over(_read(source, None if sample is None else str(sample), stored=True))


def sessions(path: Path) -> Iterator[tuple[str, str]]:
    """The conversations (id, title: the first trace's name) of the store at ``path``, in the
    order their first trace started."""
    with contextlib.closing(databases.connect(path)) as db:
        held = _by_trace(db, "trace_request_metadata", None, "WHERE key = ?", (SESSION,))
        groups = {trace: values[SESSION] for trace, values in held.items()}
        tags = _by_trace(db, "trace_tags", None, "WHERE key = ?", ("mlflow.traceName",))
        names = {trace: values["mlflow.traceName"] for trace, values in tags.items()}
        seen = set()
        for row in databases.rows(db, "trace_info", f"request_id, {_columns(db)[0]}",
                                  "ORDER BY timestamp_ms", key="request_id",
                                  bounded=_KEYS):  # fmt: skip
            if isinstance(row, databases.OversizedRow):  # its load says why, alone
                yield databases.stand_in(row), ""
                continue
            trace, session = row
            key = session or groups.get(trace) or trace
            if key not in seen:
                seen.add(key)
                yield key, str(names.get(trace) or "")
