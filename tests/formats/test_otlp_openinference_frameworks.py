"""Raw OTLP traces of OpenInference's google_genai, google_adk and llama_index instrumentors and
of Koog 0.3 read as their Langfuse exports read (spec H-4).

The spans are the real ones of the Langfuse exports in ``fixtures/traces/langfuse`` (MIT,
langfuse/langfuse ``worker/src/__tests__/chatml/framework-traces``, commit 6275144), exported
before Langfuse took the attributes it reads out (each observation's ``metadata.attributes``
is its span's attributes as the instrumentor wrote them, its ``metadata.scope`` the
instrumentation scope): written back as the OTLP JSON an exporter writes
(``ExportTraceServiceRequest``), the array attributes Langfuse kept as JSON text as arrays
again. The expected values are read from the spans, never written down.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import turnfold
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage
from turnfold.usage import transcript_tokens

LANGFUSE = Path(__file__).parent.parent / "fixtures" / "traces" / "langfuse"
#: The attributes these instrumentors write as arrays, and as numbers, which Langfuse keeps as
#: JSON text.
_ARRAYS = frozenset({"llm.prompts", "gen_ai.response.finish_reasons"})
_NUMBERS = ("llm.token_count.", "gen_ai.usage.", "gen_ai.request.temperature")


def _observations(name: str) -> list[dict[str, Any]]:
    export = json.loads((LANGFUSE / f"{name}.trace.json").read_text("utf-8"))
    observations: list[dict[str, Any]] = export["observations"]
    return observations


def _metadata(observation: dict[str, Any]) -> dict[str, Any]:
    metadata = observation["metadata"]
    return json.loads(metadata) if isinstance(metadata, str) else metadata


def _attributes(observation: dict[str, Any]) -> dict[str, Any]:
    attributes = _metadata(observation).get("attributes") or {}
    return json.loads(attributes) if isinstance(attributes, str) else dict(attributes)


def _any_value(key: str, value: Any) -> dict[str, Any]:
    if key in _ARRAYS and isinstance(value, str):
        listed = json.loads(value)
        return {"arrayValue": {"values": [{"stringValue": item} for item in listed]}}
    if key.startswith(_NUMBERS) and isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def _nanos(iso: str) -> str:
    return str(int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 10**9))


def _otlp(observations: list[dict[str, Any]], **changed: dict[str, Any]) -> dict[str, Any]:
    """The spans of ``observations`` as one OTLP JSON request; ``changed``: attributes of the
    span of that id replaced (None: taken out)."""
    scopes: dict[str, list[dict[str, Any]]] = {}
    for observation in observations:
        attributes = _attributes(observation)
        for key, value in changed.get(observation["id"], {}).items():
            if value is None:
                attributes.pop(key, None)
            else:
                attributes[key] = value
        span = {
            "traceId": observation["traceId"],
            "spanId": observation["id"],
            "name": observation["name"],
            "kind": 1,
            "startTimeUnixNano": _nanos(observation["startTime"]),
            "endTimeUnixNano": _nanos(observation["endTime"]),
            "attributes": [{"key": k, "value": _any_value(k, v)} for k, v in attributes.items()],
            "status": {},
        }
        if observation.get("parentObservationId"):
            span["parentSpanId"] = observation["parentObservationId"]
        scope = (_metadata(observation).get("scope") or {}).get("name", "")
        scopes.setdefault(scope, []).append(span)
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [
        {"scope": {"name": name}, "spans": spans} for name, spans in scopes.items()
    ]}]}  # fmt: skip


def _named(observations: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    listed = [o for o in observations if o["name"] == name]
    return sorted(listed, key=lambda o: o["startTime"])


def _texts(transcript: Transcript, kind: type[UserMessage | AssistantText]) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, kind)]


def _calls(transcript: Transcript) -> list[ToolCall]:
    return [e for e in transcript.entries if isinstance(e, ToolCall)]


def _seen(transcript: Transcript) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            seen.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        else:
            seen.append((type(entry).__name__, getattr(entry, "text", None)))
    return seen


def _loaded(name: str) -> tuple[list[dict[str, Any]], Transcript]:
    observations = _observations(name)
    return observations, turnfold.load(_otlp(observations))


def _is_otlp(transcript: Transcript) -> None:
    assert transcript.metadata["source_format"] == "otlp"


def test_H4_raw_spans_read_as_their_langfuse_export() -> None:
    for name in ("google-adk-2025-08-28", "google-gemini-2025-08-01", "llamaindex-2025-06-05",
                 "koog-2025-08-26"):  # fmt: skip
        _, raw = _loaded(name)
        _is_otlp(raw)
        export = json.loads((LANGFUSE / f"{name}.trace.json").read_text("utf-8"))
        assert _seen(raw) == _seen(turnfold.load(export)), name
        assert raw.warnings == [], (name, raw.warnings)


# --- Google GenAI: the model's role ``model`` -------------------------------------------------


def test_H4_openinference_gemini_reply_of_role_model_is_the_assistants() -> None:
    observations, t = _loaded("google-gemini-2025-08-01")
    [call] = observations
    attributes = _attributes(call)
    assert attributes["llm.output_messages.0.message.role"] == "model"  # the premise
    [candidate] = json.loads(attributes["output.value"])["candidates"]
    assert _texts(t, UserMessage) == [attributes["llm.input_messages.0.message.content"]]
    assert _texts(t, AssistantText) == ["".join(p["text"] for p in candidate["content"]["parts"])]
    assert t.warnings == []


# --- Google ADK through OpenInference ---------------------------------------------------------


def test_H4_adk_run_prompt_reply_and_call_as_adk_writes_them() -> None:
    """The ``CHAIN`` span's input is ``Runner.run_async``'s arguments, its and the ``AGENT``
    span's output the final event; the model's call has no id, its tool span ADK's."""
    observations, t = _loaded("google-adk-2025-08-28")
    [chain] = [o for o in observations if _attributes(o).get("openinference.span.kind") == "CHAIN"]
    given = json.loads(_attributes(chain)["input.value"])["new_message"]
    assert _texts(t, UserMessage) == ["".join(p["text"] for p in given["parts"])]
    asking, answering = _named(observations, "call_llm")
    assert "tool_calls.0.tool_call.id" not in str(_attributes(asking))  # the premise
    [tool] = [o for o in observations if _attributes(o).get("openinference.span.kind") == "TOOL"]
    ran = _attributes(tool)
    [call] = _calls(t)
    assert (call.call_id, call.name) == (ran["gen_ai.tool.call.id"], ran["gen_ai.tool.name"])
    assert call.args == json.loads(ran["gcp.vertex.agent.tool_call_args"])
    assert call.status == "success"
    assert call.result is not None
    response = json.loads(ran["output.value"])["response"]
    assert json.loads(call.result.text or "") == response
    [part] = json.loads(_attributes(answering)["output.value"])["content"]["parts"]
    assert _texts(t, AssistantText) == [part["text"]]  # once: the run's output repeats it
    request = json.loads(_attributes(answering)["gcp.vertex.agent.llm_request"])
    assert t.metadata["system"] == request["config"]["system_instruction"]
    assert t.warnings == []


def test_H4_adk_tool_call_ids_of_later_versions_and_several_calls() -> None:
    """openinference-instrumentation-google-adk since 0.1.4 also writes the response's id as
    ``tool.id``; two calls of one tool in one response take the ids of their spans in order
    (the run up to the tools' spans: the reply's model span left out)."""
    observations = _observations("google-adk-2025-08-28")
    asking, answering = _named(observations, "call_llm")
    [tool] = [o for o in observations if o["name"].startswith("execute_tool")]
    second = copy.deepcopy(tool)
    second["id"] = "0" * 15 + "1"
    second["startTime"] = second["endTime"]
    attributes = _attributes(second)
    attributes["gen_ai.tool.call.id"] = attributes["tool.id"] = "adk-second"
    attributes["output.value"] = json.dumps(
        {"id": "adk-second", "name": "say_hello", "response": {"greeting": "Hello again"}}
    )
    second["metadata"] = json.dumps({**_metadata(second), "attributes": attributes})
    both = {"llm.output_messages.0.message.tool_calls.1.tool_call.function.name": "say_hello"}
    kept = [o for o in observations if o is not answering]
    t = turnfold.load(_otlp([*kept, second], **{asking["id"]: both}))
    calls = _calls(t)
    assert [c.call_id for c in calls] == [_attributes(tool)["gen_ai.tool.call.id"], "adk-second"]
    assert [json.loads(c.result.text or "") for c in calls if c.result is not None] == [
        json.loads(_attributes(tool)["gcp.vertex.agent.tool_response"]),
        {"greeting": "Hello again"},
    ]
    assert len({c.batch_id for c in calls}) == 1  # one response's
    assert not any("without an id" in w.reason for w in t.warnings), t.warnings


# --- llama_index's completion API -------------------------------------------------------------


def test_H4_openinference_completion_prompts_and_reply() -> None:
    observations, t = _loaded("llamaindex-2025-06-05")
    [call] = _named(observations, "OpenAI.complete")
    attributes = _attributes(call)
    assert _texts(t, UserMessage) == json.loads(attributes["llm.prompts"])
    assert _texts(t, AssistantText) == [attributes["output.value"]]
    tokens = transcript_tokens(t).own
    assert (tokens["input_tokens"], tokens["output_tokens"]) == (
        int(attributes["llm.token_count.prompt"]),
        int(attributes["llm.token_count.completion"]),
    )
    assert t.warnings == []


def test_H4_completion_prompts_and_choices_as_the_conventions_flatten_them() -> None:
    """OpenInference's conventions now write a completion's prompts and choices flattened
    (spec/semantic_conventions.md: ``llm.prompts.N.prompt.text``,
    ``llm.choices.N.completion.text``)."""
    observations = _observations("llamaindex-2025-06-05")
    [call] = _named(observations, "OpenAI.complete")
    attributes = _attributes(call)
    [prompt] = json.loads(attributes["llm.prompts"])
    flat = {"llm.prompts": None, "llm.prompts.0.prompt.text": prompt,
            "llm.choices.0.completion.text": "The choice.", "output.value": None}  # fmt: skip
    t = turnfold.load(_otlp(observations, **{call["id"]: flat}))
    assert _texts(t, UserMessage) == [prompt]
    assert _texts(t, AssistantText) == ["The choice."]


# --- Koog 0.3 ---------------------------------------------------------------------------------


def test_H4_koog_tool_spans_and_call_lists_in_raw_spans() -> None:
    """Koog 0.3's tool spans name no operation; its messages hold a response's calls as the
    JSON text of a list of Chat calls and its results without a call id."""
    observations, t = _loaded("koog-2025-08-26")
    tools = {_attributes(o)["gen_ai.tool.call.id"]: _attributes(o)
             for o in observations if o["name"].startswith("tool.")}  # fmt: skip
    assert not any("gen_ai.operation.name" in a for a in tools.values())  # the premise
    first, last = _named(observations, "llm.chat")
    asked = [c for k, v in sorted(_attributes(first).items()) if k.endswith(".content")
             and k.startswith("gen_ai.completion.") for c in json.loads(v)]  # fmt: skip
    calls = _calls(t)
    assert [(c.call_id, c.name) for c in calls] == [(a["id"], a["function"]["name"]) for a in asked]
    for call in calls:
        assert call.args == json.loads(tools[call.call_id]["input.value"])
        assert call.status == "success"
        assert call.result is not None
        assert call.result.text == tools[call.call_id]["output.value"]
    assert t.metadata["system"] == _attributes(first)["gen_ai.prompt.0.content"]
    assert _texts(t, UserMessage) == [_attributes(first)["gen_ai.prompt.1.content"]]
    assert _texts(t, AssistantText) == [_attributes(last)["gen_ai.completion.0.content"]]
    assert t.warnings == []
