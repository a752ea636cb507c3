"""Google ADK's own model-call spans (spec H-4): the request and response its tracer records,
read as the GenAI conventions' messages, in each of its telemetry schemas
(``google/adk/telemetry``; ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN``).

- Schema 1 (its 1.x releases, and 2.x with the opt-in ``1``; ``tracing.py``,
  ``trace_call_llm``) writes each model call as a ``call_llm`` span that names no GenAI
  operation (:func:`.spans.operation` reads it as a ``generate_content``), holding the whole
  call: ``gcp.vertex.agent.llm_request`` (the ``LlmRequest`` as JSON: ``model``, ``config``
  with its ``system_instruction``, the Gemini ``contents`` of the history) and
  ``gcp.vertex.agent.llm_response`` (the ``LlmResponse``, ``model_dump_json(exclude_none=
  True)``), each ``"{}"`` where content capture is off. They are put as the span's
  ``gen_ai.input.messages``, ``gen_ai.output.messages`` and ``gen_ai.system_instructions``,
  read as their client has them (:func:`.langfuse_io.request_messages`,
  :func:`.langfuse_io.response_messages`, which a Langfuse export of these spans reads too),
  each call's id as the model gave it (none from Gemini).
- Schema 2 (2.x's default) writes the GenAI messages itself (``_experimental_semconv.py``,
  ``_to_part``), a call or function response without an id given ``<tool name>_<index of
  its part>``: a call's and its response's differ (their parts' places in two contents), so
  neither names the other. Those ids are taken out, a response keeping its tool's name,
  and its ``{"result": x}`` / ``{"error": e}`` read as the ADK reader reads them
  (:func:`.messages.adk_response`). A response part names no tool, so its own id of that
  shape (a model's ``b_1``) is told from a made-up one by the call before it in the history
  that has that id and kept.

Either way the calls then have no id but the one ADK gives each after the response is
traced (``adk-…``), which only its tool span names: the reader gives it to them
(:meth:`.otlp._Rebuild._given_ids`). The tool spans' arguments and results are read with the
other conventions' (:func:`.messages.tool_response`).

Schema 1 writes ``"{}"`` for a tool span's arguments and result where content capture is off
(``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false``), which is also what a tool of no arguments
that returned ``{}`` writes with it on: the span alone cannot tell them apart, its trace can
(:func:`drop_uncaptured_placeholders`), so that an empty object reads as the result it is and
only a missing attribute as content not captured (schema 2 writes nothing where it is off).
A tool that returned ``None`` writes ``{"result": null}``: its call returned, a result with no
text (:func:`returned_none`), as the ADK reader shows it, whether or not a later request repeats
it. A tool that raised writes ``"<not specified>"`` as its call id, naming no call
(:func:`call_id_not_recorded`): the reader finds its call as it does for a span without an id.

Apart from :mod:`.messages` because it reads whole requests, as :mod:`.langfuse_io` does, and
from the reader because it runs once per span as it is read (:func:`restore_adk_span`), or
once per conversation on its spans (:func:`drop_uncaptured_placeholders`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from turnfold.formats.common import MAPPINGS, as_list
from turnfold.formats.traces.gemini_cli_spans import gemini_messages
from turnfold.formats.traces.langfuse_io import request_messages, response_messages, text_value
from turnfold.formats.traces.messages import adk_response
from turnfold.formats.traces.spans import (
    ADK_EVENT_ID,
    ADK_LLM_REQUEST,
    ADK_LLM_RESPONSE,
    ADK_TOOL_ARGUMENTS,
    ADK_TOOL_RESPONSE,
    Span,
    json_value,
)

#: The conventions' keys whose messages the span's own are; a span holding one (OpenInference's
#: ADK instrumentor writes its messages on ADK's spans) is read by it.
_OWN_MESSAGES = ("gen_ai.input.messages", "gen_ai.output.messages", "openinference.span.kind")
_MESSAGES = ("gen_ai.input.messages", "gen_ai.output.messages")
#: Schema 2's id of a call or response that had none: ``<tool name>_<part index>``.
_FALLBACK_ID = re.compile(r"^(.+)_\d+$")
#: What schema 1 writes for each content attribute where content capture is off
#: (google/adk/telemetry/tracing.py 2.13.0, ``trace_call_llm`` and ``trace_tool_call``: the
#: request, the response, a tool's arguments and result); ADK's 1.x releases before the switch
#: (1.15.0) always write the content, and ``"{}"`` only as a tool span's request and response.
_UNCAPTURED = "{}"
#: What its tool span says of the call id where it has no function response to take it from
#: (google/adk/telemetry/tracing.py 2.13.0, ``trace_tool_call``, in both schemas; its early
#: releases' too): :func:`call_id_not_recorded`.
_UNSPECIFIED = "<not specified>"


def restore_adk_span(a: dict[str, Any]) -> None:
    """Read the attributes ``a`` of a span of ADK's own tracer as the GenAI conventions': a
    ``call_llm`` span's request and response as messages and system instructions (schema 1,
    where the span holds no other convention's messages and its content was captured), a
    ``generate_content`` span's messages without the ids schema 2 made up. Any other span is
    left as it is."""
    if isinstance(a.get(ADK_LLM_REQUEST), str) and not any(k in a for k in _OWN_MESSAGES):
        _restore_call_llm(a)
    elif ADK_EVENT_ID in a and "openinference.span.kind" not in a:
        for key in _MESSAGES:
            value = a.get(key)
            if isinstance(value, str) and '"tool_call' in value:
                a[key] = text_value(_without_made_up_ids(json_value(value)))


def drop_uncaptured_placeholders(spans: Iterable[Span]) -> None:
    """Take out of the ADK tool spans of ``spans`` the ``"{}"`` arguments and result that stand
    for content not captured, so that only what was captured is read: those of a trace whose
    ADK model span (``call_llm``) holds ``"{}"`` as its request, which a request captured never
    is (it names its model and holds its contents). In a trace whose model spans hold their
    request, or that holds none, ``"{}"`` is what the tool was called with or returned: an
    empty object."""
    spans = list(spans)
    uncaptured = {s.trace_id for s in spans if _uncaptured_model_call(s.attributes)}
    for span in spans:
        if span.trace_id not in uncaptured:
            continue
        a = span.attributes
        for key in (ADK_TOOL_ARGUMENTS, ADK_TOOL_RESPONSE):
            if a.get(key) == _UNCAPTURED:
                del a[key]


def returned_none(span: Span) -> bool:
    """Whether ``span`` is an ADK tool span of a tool that returned ``None``: its response is
    ``{"result": null}`` (the ADK wraps a return that is no dict as ``{"result": value}``,
    google/adk/flows/llm_flows/tools/_caller.py 2.13.0, ``_build_function_response_content``),
    written as ``gcp.vertex.agent.tool_response`` (schema 1) or ``gen_ai.tool.call.result``
    (schema 2). The call returned, with nothing to show: a result with no text, as the ADK
    reader reads that response, not one the trace did not record."""
    a = span.attributes
    if ADK_EVENT_ID not in a:
        return False
    raw = a.get("gen_ai.tool.call.result", a.get(ADK_TOOL_RESPONSE))
    return isinstance(raw, str) and json_value(raw) == {"result": None}


def call_id_not_recorded(span: Span) -> bool:
    """Whether ``span`` is an ADK tool span that does not record its call's id: it writes
    ``"<not specified>"`` as ``gen_ai.tool.call.id`` where it has no function response to take
    the id from, as for a tool that raised and that no ``on_tool_error_callback`` answered
    (google/adk/flows/llm_flows/tools/_caller.py 2.13.0, ``_run_with_trace``: ``raise
    tool_error`` inside ``record_tool_execution``, which then traces the call with no response
    event), the exception then raised out of ``Runner.run_async``. The call the model asked for
    has an id of its own (the model's, or the ``adk-…`` the ADK gave it) that the span does not
    name: read as an id, the span was a second call beside the model's, of unknown outcome.
    The span is that call's run all the same, to be found as a span without an id is (by its
    tool's name and arguments)."""
    return span.op == "execute_tool" and span.attributes.get("gen_ai.tool.call.id") == _UNSPECIFIED


def _uncaptured_model_call(a: dict[str, Any]) -> bool:
    """Whether ``a`` are an ADK ``call_llm`` span's written with content capture off (a tool
    span, which writes a result, holds ``"{}"`` as its request whatever the setting)."""
    return a.get(ADK_LLM_REQUEST) == _UNCAPTURED and ADK_TOOL_RESPONSE not in a


def _restore_call_llm(a: dict[str, Any]) -> None:
    request = json_value(a[ADK_LLM_REQUEST])
    if isinstance(request, MAPPINGS) and request:
        messages, system = request_messages(request)
        if messages is not None:
            a["gen_ai.input.messages"] = text_value(gemini_messages(messages, _model_id))
        if system and "gen_ai.system_instructions" not in a:
            a["gen_ai.system_instructions"] = system
    response = json_value(a.get(ADK_LLM_RESPONSE))
    if isinstance(response, MAPPINGS) and response:
        replies = response_messages(response)
        if replies is not None:
            a["gen_ai.output.messages"] = text_value(gemini_messages(replies, _model_id))


def _model_id(name: Any, given: Any) -> Any:
    """A call's id as ADK's schema 1 writes it: the model's own."""
    return given


def _without_made_up_ids(messages: Any) -> Any:
    """Schema 2's GenAI messages, each ``tool_call`` and ``tool_call_response`` part whose id
    is the one it made up (:data:`_FALLBACK_ID`) without it, a response with its tool's name
    and ADK's reading of its result (:func:`.messages.adk_response`)."""
    if not isinstance(messages, list):
        return messages
    out = []
    kept: set[str] = set()  # the calls' own ids so far: a response answering one has it too
    for message in messages:
        parts = message.get("parts") if isinstance(message, MAPPINGS) else None
        if not isinstance(parts, list):
            out.append(message)
            continue
        out.append({**message, "parts": [_part(p, kept) for p in as_list(parts)]})
    return out


def _part(part: Any, kept: set[str]) -> Any:
    """A part without the id schema 2 made up for it; a call's own id is added to ``kept``."""
    if not isinstance(part, MAPPINGS) or not isinstance(part.get("id"), str):
        return part
    made = _FALLBACK_ID.match(part["id"])
    kind = part.get("type")
    if kind == "tool_call" and made and made[1] == part.get("name"):
        return {k: v for k, v in part.items() if k != "id"}
    if kind == "tool_call":
        kept.add(part["id"])
    # A response's id is the call's (``_to_part``: ``response.id``, which the ADK copies from
    # its call), made up only where the call had none: an id a call kept is the model's own,
    # whatever its shape (``b_1`` is no call of a tool ``b``).
    if kind == "tool_call_response" and made and part["id"] not in kept:
        value, failed = adk_response(part.get("response"))
        said = {k: v for k, v in part.items() if k != "id"}
        said.update(name=made[1], response=value)
        return {**said, "status": "error"} if failed else said
    return part
