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
  (:func:`.messages.adk_response`).

Either way the calls then have no id but the one ADK gives each after the response is
traced (``adk-…``), which only its tool span names: the reader gives it to them
(:meth:`.otlp._Rebuild._given_ids`). The tool spans' arguments and results are read with the
other conventions' (:func:`.messages.tool_response`).

Apart from :mod:`.messages` because it reads whole requests, as :mod:`.langfuse_io` does, and
from the reader because it runs once per span as it is read (:func:`restore_adk_span`).
"""

from __future__ import annotations

import re
from typing import Any

from turnfold.formats.common import MAPPINGS, as_list
from turnfold.formats.traces.gemini_cli_spans import gemini_messages
from turnfold.formats.traces.langfuse_io import request_messages, response_messages, text_value
from turnfold.formats.traces.messages import adk_response
from turnfold.formats.traces.spans import (
    ADK_EVENT_ID,
    ADK_LLM_REQUEST,
    ADK_LLM_RESPONSE,
    json_value,
)

#: The conventions' keys whose messages the span's own are; a span holding one (OpenInference's
#: ADK instrumentor writes its messages on ADK's spans) is read by it.
_OWN_MESSAGES = ("gen_ai.input.messages", "gen_ai.output.messages", "openinference.span.kind")
_MESSAGES = ("gen_ai.input.messages", "gen_ai.output.messages")
#: Schema 2's id of a call or response that had none: ``<tool name>_<part index>``.
_FALLBACK_ID = re.compile(r"^(.+)_\d+$")


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
    for message in messages:
        parts = message.get("parts") if isinstance(message, MAPPINGS) else None
        if not isinstance(parts, list):
            out.append(message)
            continue
        out.append({**message, "parts": [_part(p) for p in as_list(parts)]})
    return out


def _part(part: Any) -> Any:
    if not isinstance(part, MAPPINGS) or not isinstance(part.get("id"), str):
        return part
    made = _FALLBACK_ID.match(part["id"])
    kind = part.get("type")
    if kind == "tool_call" and made and made[1] == part.get("name"):
        return {k: v for k, v in part.items() if k != "id"}
    if kind == "tool_call_response" and made:
        value, failed = adk_response(part.get("response"))
        said = {k: v for k, v in part.items() if k != "id"}
        said.update(name=made[1], response=value)
        return {**said, "status": "error"} if failed else said
    return part
