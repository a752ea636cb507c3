"""OpenTelemetry OTLP JSON traces (spec H-4, issue 13): conversations rebuilt from span trees.

The fixtures under ``tests/fixtures/traces/otlp/`` are written by :func:`write_trace`, which
drives the real ``openai`` client against a loopback fake Chat Completions server, instrumented
by the real OpenInference and OpenTelemetry GenAI instrumentors, with agent and tool spans made
by the real ``opentelemetry-sdk`` as agent frameworks make them, encoded by the OTLP exporter's
own encoder. ``test_H4_the_installed_instrumentors_write_what_the_loader_reads`` writes them again
with the installed versions; ``TURNFOLD_UPDATE_FIXTURES=1`` rewrites the committed files.
Agent frameworks' own tracing makes the others: Strands Agents' tracer in its three modes
(:func:`write_strands_trace`) and OpenInference's smolagents instrumentor
(:func:`write_smolagents_trace`), on the scripted runs of ``strands_runs.py`` and
``smolagents_runs.py``, checked the same way by
``test_H4_the_installed_frameworks_trace_what_the_loader_reads``.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats.errors import SampleSelectionError
from turnfold.formats.traces import otlp
from turnfold.model import (
    AssistantError,
    AssistantText,
    CompactionBoundary,
    ImageData,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces" / "otlp"
STYLES = ("openinference", "genai")
PROMPT = "TF-WEATHER: what is the weather in Paris and Atlantis? Ask the expert what to wear."
SECOND = "TF-AGAIN: and tomorrow?"
EXPERT = "TF-EXPERT: what should one wear in the rain?"


# --- the fake model and the generator ------------------------------------------------------


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: which answer a request gets follows from what it already holds."""
    messages = body["messages"]
    results = sum(1 for m in messages if m["role"] == "tool")
    message: dict[str, Any]
    if messages[-1]["role"] == "user" and messages[-1]["content"] == EXPERT:
        message = {"role": "assistant", "content": "TF-UMBRELLA: bring an umbrella."}
    elif messages[-1]["role"] == "user" and messages[-1]["content"] == SECOND:
        message = {"role": "assistant", "content": "TF-TOMORROW: sunny again."}
    elif results == 0:
        message = {"role": "assistant", "content": None, "tool_calls": [
            _call("call_paris", "get_weather", {"city": "Paris"}),
            _call("call_atlantis", "get_weather", {"city": "Atlantis"}),
        ]}  # fmt: skip
    elif results == 2:
        message = {
            "role": "assistant",
            "content": "TF-ASKING: asking the expert.",
            "tool_calls": [_call("call_expert", "ask_expert", {"question": EXPERT})],
        }
    else:
        message = {"role": "assistant", "content": "TF-DONE: sunny in Paris, take an umbrella."}
    index = len(messages)
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 1767225600 + index,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10 * index, "completion_tokens": 7},
    }  # fmt: skip


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps(_reply(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def _fake_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()


_TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("get_weather", "ask_expert")
]
_WEATHER = {"Paris": "sunny, 21C"}


@contextmanager
def _instrumented(style: str) -> Iterator[tuple[Any, Any]]:
    """A tracer provider with an in-memory exporter, the style's instrumentor on openai."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = {k: os.environ.get(k) for k in _GENAI_ENV}
    if style == "genai":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        os.environ.update(_GENAI_ENV)
        instrumentor: Any = OpenAIInstrumentor()
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        instrumentor = OIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider.get_tracer("turnfold.tests.agent"), exporter
    finally:
        instrumentor.uninstrument()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_GENAI_ENV = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}


def _agent_attributes(style: str, name: str, prompt: str) -> dict[str, Any]:
    if style == "genai":
        first = [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
        return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                "gen_ai.conversation.id": "tf-conversation-1",
                "gen_ai.input.messages": json.dumps(first)}  # fmt: skip
    return {"openinference.span.kind": "AGENT", "agent.name": name,
            "session.id": "tf-conversation-1", "input.value": prompt}  # fmt: skip


def _run_agent(style: str, tracer: Any, client: Any, prompt: str, name: str) -> str:
    """One agent run as frameworks trace it: an agent span holding only the first prompt and
    the final reply, the model calls (instrumented) and a tool span per call."""
    from opentelemetry.trace import Status, StatusCode

    span_name = f"invoke_agent {name}" if style == "genai" else name
    with tracer.start_as_current_span(
        span_name, attributes=_agent_attributes(style, name, prompt)
    ) as agent:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a weather agent."},
            {"role": "user", "content": prompt},
        ]
        while True:
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=_TOOLS
            )
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                args = json.loads(call.function.arguments)
                attributes = (
                    {"gen_ai.operation.name": "execute_tool",
                     "gen_ai.tool.name": call.function.name, "gen_ai.tool.call.id": call.id,
                     "gen_ai.tool.call.arguments": call.function.arguments}
                    if style == "genai"
                    else {"openinference.span.kind": "TOOL", "tool.name": call.function.name,
                          "input.value": call.function.arguments}
                )  # fmt: skip
                tool_name = (
                    f"execute_tool {call.function.name}" if style == "genai" else call.function.name
                )
                with tracer.start_as_current_span(tool_name, attributes=attributes) as tool:
                    if call.function.name == "ask_expert":
                        result = _run_agent(style, tracer, client, args["question"], "expert")
                    elif args["city"] in _WEATHER:
                        result = _WEATHER[args["city"]]
                    else:
                        result = f"Error: no such city {args['city']}"
                        tool.record_exception(LookupError(f"no such city {args['city']}"))
                        tool.set_status(Status(StatusCode.ERROR, result))
                    key = "gen_ai.tool.call.result" if style == "genai" else "output.value"
                    tool.set_attribute(key, result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        answer = message.content or ""
        if style == "genai":
            final = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            agent.set_attribute("gen_ai.output.messages", json.dumps(final))
        else:
            agent.set_attribute("output.value", answer)
        return answer


def _hex_ids(value: Any) -> Any:
    """The OTLP JSON encoding writes trace and span ids as hex, where protobuf's JSON mapping
    writes base64 (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding)."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId")
            else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def write_trace(style: str, path: Path) -> Path:
    """Two turns of one conversation (two traces), one OTLP request per trace, as the file
    exporters write them: JSON lines (``genai``) or one document (``openinference``)."""
    import openai
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    requests = []
    with _fake_server() as base_url, _instrumented(style) as (tracer, exporter):
        client = openai.OpenAI(base_url=base_url, api_key="sk-fake", max_retries=0)
        for prompt in (PROMPT, SECOND):
            _run_agent(style, tracer, client, prompt, "weather-agent")
            requests.append(_hex_ids(MessageToDict(encode_spans(exporter.get_finished_spans()))))
            exporter.clear()
    if style == "genai":
        path.write_text("".join(json.dumps(r) + "\n" for r in requests))
    else:
        merged = {"resourceSpans": [rs for r in requests for rs in r["resourceSpans"]]}
        path.write_text(json.dumps(merged, indent=1) + "\n")
    return path


def fixture_path(style: str) -> Path:
    suffix = ".jsonl" if style == "genai" else ".json"
    return FIXTURES / f"{style}_openai_weather-agent{suffix}"


# --- what a reader sees -----------------------------------------------------------------------


def outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Entries as (kind, text or name, status, result, nested outline), times left out."""
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, UserMessage):
            rows.append(("user", entry.text))
        elif isinstance(entry, AssistantText):
            rows.append(("text", entry.text))
        elif isinstance(entry, AssistantError):
            rows.append(("error", entry.message))
        elif isinstance(entry, Thinking):
            rows.append(("thinking", entry.text))
        elif isinstance(entry, ToolCall):
            child = entry.subagent.transcript if entry.subagent else None
            rows.append((
                "call", entry.name, entry.args, entry.status,
                entry.result.text if entry.result else None,
                outline(child) if child is not None else None,
            ))  # fmt: skip
    return rows


EXPECTED = [
    ("user", PROMPT),
    ("call", "get_weather", {"city": "Paris"}, "success", "sunny, 21C", None),
    ("call", "get_weather", {"city": "Atlantis"}, "error", "Error: no such city Atlantis", None),
    ("text", "TF-ASKING: asking the expert."),
    ("call", "ask_expert", {"question": EXPERT}, "success", "TF-UMBRELLA: bring an umbrella.",
     [("user", EXPERT), ("text", "TF-UMBRELLA: bring an umbrella.")]),
    ("text", "TF-DONE: sunny in Paris, take an umbrella."),
    ("user", SECOND),
    ("text", "TF-TOMORROW: sunny again."),
]  # fmt: skip


@pytest.mark.parametrize("style", STYLES)
def test_H4_a_trace_is_rebuilt_from_its_span_tree_once_per_message(style: str) -> None:
    """Every model span repeats the history and the agent span holds only the first prompt
    and the final reply: each message is shown once, tool spans settle the calls the model
    spans asked for (by id, or by name where OpenInference records none), the nested agent is
    the expert call's sub-agent, the second trace of the conversation its second turn."""
    transcript = turnfold.load(fixture_path(style))
    assert transcript.metadata["source_format"] == "otlp"
    assert outline(transcript) == EXPECTED
    assert transcript.warnings == []
    meta = transcript.metadata
    assert (meta["agent"], meta["model"], meta["session_id"]) == (
        "weather-agent", "gpt-4o-mini-2024-07-18", "tf-conversation-1"
    )  # fmt: skip
    assert meta["system"] == "You are a weather agent."
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert all(t.usage is not None and t.usage.output_tokens == 7 for t in texts)
    calls = transcript.tool_calls()
    assert all(c.started_at and c.ended_at and c.recorded_duration_ms is not None for c in calls)


@pytest.mark.parametrize("style", STYLES)
def test_H4_the_installed_instrumentors_write_what_the_loader_reads(
    style: str, tmp_path: Path
) -> None:
    """Compatibility with the installed opentelemetry-sdk and instrumentors: a trace written
    now reads as the committed fixture does (``TURNFOLD_UPDATE_FIXTURES=1`` rewrites those)."""
    pytest.importorskip("opentelemetry.sdk")
    target = fixture_path(style) if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else None
    path = write_trace(style, target or tmp_path / fixture_path(style).name)
    transcript = turnfold.load(path)
    assert outline(transcript) == EXPECTED
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H4_base64_ids_read_as_the_hex_ones() -> None:
    """A plain protobuf JSON mapping (MessageToJson) writes ids in base64; OTLP JSON in hex."""

    def to_base64(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k in ("traceId", "spanId", "parentSpanId") else to_base64(v)
                for k, v in value.items()
            }  # fmt: skip
        return [to_base64(v) for v in value] if isinstance(value, list) else value

    document = json.loads(fixture_path("openinference").read_text())
    assert outline(turnfold.load(to_base64(document))) == EXPECTED


def _span(
    name: str,
    span_id: str,
    attributes: dict[str, Any],
    *,
    trace: str = "a" * 32,
    parent: str | None = None,
    start: int = 1,
    **extra: Any,
) -> dict[str, Any]:
    span = {
        "traceId": trace, "spanId": span_id, "name": name,
        "startTimeUnixNano": str(1767225600_000000000 + start * 1_000_000),
        "endTimeUnixNano": str(1767225600_000000000 + start * 1_000_000 + 500_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
        **extra,
    }  # fmt: skip
    if parent:
        span["parentSpanId"] = parent
    return span


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def _said(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _request(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}) + "\n"


def test_H4_a_file_of_several_conversations_names_them_and_sample_picks_one() -> None:
    """One conversation is one transcript: the loader does not guess which one is meant."""
    text = _request(
        _span("chat m", "1" * 16, {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "c-1",
              "gen_ai.input.messages": _said("user", "one")}),
        _span("chat m", "2" * 16, {"gen_ai.operation.name": "chat", "session.id": "c-2",
              "gen_ai.input.messages": _said("user", "two")},
              trace="b" * 32, start=2),
    )  # fmt: skip
    with pytest.raises(SampleSelectionError, match=r"2 conversations: .*\(ids 'c-1', 'c-2'\)"):
        turnfold.load(text)
    source = _source(text)
    picked = otlp.read(source, sample="c-2")
    assert outline(picked) == [("user", "two")]
    assert source.accounting.counts == {
        "span/chat": {"mapped": 1}, "span/(other conversation)": {"ignored": 1}
    }  # fmt: skip


def test_L4_a_time_or_count_too_large_for_an_integer_is_no_time_not_a_crash() -> None:
    """A JSON number past a float's range decodes as infinity, which no integer holds (found by
    the fuzz test of test_loading): the span's time and the attribute are then unknown, and the
    rest of the span is read."""
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 7,
                  "gen_ai.input.messages": _said("user", "one")}  # fmt: skip
    span = _span("chat m", "1" * 16, attributes)
    text = _request(span)
    text = text.replace('"startTimeUnixNano": "1767225600001000000"', '"startTimeUnixNano": 1e999')
    text = text.replace('"intValue": "7"', '"intValue": 1e999')
    assert text.count("1e999") == 2
    assert outline(turnfold.load(text)) == [("user", "one")]


def test_H4_each_conversation_read_from_a_file_keeps_the_accounting_its_own_load_gives() -> None:
    """``read_each`` (a scan's rows) gives each conversation the accounting ``load(path,
    sample=id)`` gives it: its own spans mapped, the others' set aside, each row its own copy."""
    text = _request(
        _span("chat m", "1" * 16, {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "c-1",
              "gen_ai.input.messages": _said("user", "one")}),
        _span("execute_tool t", "3" * 16, {"gen_ai.operation.name": "execute_tool",
              "gen_ai.conversation.id": "c-1"}, start=1),
        _span("chat m", "2" * 16, {"gen_ai.operation.name": "chat", "session.id": "c-2",
              "gen_ai.input.messages": _said("user", "two")},
              trace="b" * 32, start=2),
    ) + "not json\n"  # fmt: skip
    each = dict(otlp.read_each(_source(text)))
    assert list(each) == ["c-1", "c-2"]
    for key, transcript in each.items():
        loaded = turnfold.load(text, sample=key)
        assert transcript.accounting == loaded.accounting
        assert transcript.warnings == loaded.warnings
    assert each["c-2"].accounting is not None
    assert each["c-2"].accounting.counts == {
        "span/chat": {"mapped": 1}, "span/(other conversation)": {"ignored": 2},
        "(invalid JSON)": {"warned": 1},
    }  # fmt: skip


def _source(text: str) -> Any:
    from turnfold.formats.source import open_source

    return open_source(text)[0]


def test_H4_older_per_message_events_and_flattened_prompts_are_read() -> None:
    """Instrumentations older than ``gen_ai.input.messages`` wrote one span event per message
    (``gen_ai.user.message``, ``gen_ai.choice``) or flattened ``gen_ai.prompt.N.*``."""
    events = [
        {"name": "gen_ai.user.message", "attributes": [
            {"key": "content", "value": {"stringValue": "TF-OLD: hello"}}]},
        {"name": "gen_ai.choice", "attributes": [{"key": "message", "value": {
            "stringValue": '{"content": "TF-OLD-REPLY", "tool_calls": [{"id": "c9", '
            '"function": {"name": "ls", "arguments": "{}"}}]}'}}]},
    ]  # fmt: skip
    text = _request(
        _span("chat old", "1" * 16, {"gen_ai.operation.name": "chat"}, events=events),
        _span("chat older", "2" * 16, {"gen_ai.operation.name": "chat",
              "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "TF-OLD: hello",
              "gen_ai.prompt.1.role": "tool", "gen_ai.prompt.1.tool_call_id": "c9",
              "gen_ai.prompt.1.content": "a.txt",
              "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "TF-DONE"},
              start=2),
    )  # fmt: skip
    transcript = turnfold.load(text)
    assert outline(transcript) == [
        ("user", "TF-OLD: hello"), ("text", "TF-OLD-REPLY"),
        ("call", "ls", {}, "unknown", "a.txt", None), ("text", "TF-DONE"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("status", "events", "result", "expected"),
    [
        ({}, [], "42 files", "success"),
        ({"code": "STATUS_CODE_ERROR", "message": "boom"}, [], None, "error"),
        ({}, [{"name": "exception", "attributes": [
            {"key": "exception.message", "value": {"stringValue": "disk full"}}]}], None, "error"),
        ({}, [], "Exit Code: 2\nls: no such file", "error"),
        ({}, [], "Command timed out after 30 s", "error"),
    ],
)  # fmt: skip
def test_H4_a_tool_span_s_status_says_whether_the_call_failed(
    status: dict[str, Any], events: list[Any], result: str | None, expected: str
) -> None:
    """A span's error status or exception event is a failure, and so is a result whose text
    states one (the one rule of :func:`~turnfold.formats.gemini_parts.corrected_status`)."""
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash"}
    if result is not None:
        attributes["gen_ai.tool.call.result"] = result
    transcript = turnfold.load(_request(_span("execute_tool bash", "1" * 16, attributes,
                                              status=status, events=events)))  # fmt: skip
    (call,) = transcript.tool_calls()
    assert call.status == expected


def test_H4_spans_of_no_genai_operation_are_left_out_by_design() -> None:
    text = _request(
        _span("GET /v1/chat/completions", "3" * 16, {"http.method": "GET"}),
        _span("chat m", "1" * 16, {"gen_ai.operation.name": "chat",
              "gen_ai.output.messages": _said("assistant", "hi")}),
    ) + json.dumps({"resourceSpans": []}) + "\n"  # fmt: skip
    transcript = turnfold.load(text)
    assert outline(transcript) == [("text", "hi")]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "span/(other)": {"ignored": 1},
        "span/chat": {"mapped": 1},
        "request/(empty)": {"ignored": 1},
    }


# --- message parts of the GenAI schemas (semantic-conventions-genai, model/gen-ai/) ----------

#: A 1x1 PNG, base64, as a ``BlobPart`` carries it.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
    "RU5ErkJggg=="
)


def _chat_span(span_id: str, start: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(inputs)}
    if outputs:
        attributes["gen_ai.output.messages"] = json.dumps(outputs)
    return _span("chat gpt-5", span_id, attributes, start=start)


def test_H4_server_tools_images_and_compactions_of_genai_parts_are_entries() -> None:
    """A ``server_tool_call`` is a call its ``server_tool_call_response`` settles, a
    ``compaction`` a boundary with its summary, a ``blob`` image in a prompt the prompt's
    image, a ``uri`` a line naming it (never fetched); a model's own image its text's image,
    once, though every later model span repeats it in its input."""
    prompt = {
        "role": "user",
        "parts": [
            {"type": "text", "content": "TF-DRAW: the weather in Paris, drawn like this one."},
            {"type": "blob", "modality": "image", "mime_type": "image/png", "content": PNG},
            {
                "type": "uri",
                "modality": "image",
                "mime_type": "image/jpeg",
                "uri": "https://example.org/style.jpg",
            },
        ],
    }
    answer = {
        "role": "assistant",
        "parts": [
            {
                "type": "server_tool_call",
                "id": "ws_1",
                "name": "web_search",
                "server_tool_call": {"type": "web_search", "query": "Paris weather today"},
            },
            {
                "type": "server_tool_call_response",
                "id": "ws_1",
                "server_tool_call_response": {
                    "type": "web_search",
                    "results": [
                        {"url": "https://meteo.example/paris", "title": "Paris: 21C sunny"}
                    ],
                },
            },
            {"type": "text", "content": "TF-SUNNY: 21C and sunny. Here is a drawing:"},
            {"type": "blob", "modality": "image", "mime_type": "image/png", "content": PNG},
            {"type": "compaction", "id": "cmp_1", "content": "TF-SUMMARY: Paris weather asked."},
        ],
        "finish_reason": "stop",
    }
    thanks = {"role": "user", "parts": [{"type": "text", "content": "TF-THANKS"}]}
    transcript = turnfold.load(_request(
        _chat_span("1" * 16, 1, [prompt], [answer]),
        _chat_span("2" * 16, 2, [prompt, answer, thanks], []),
    ))  # fmt: skip
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "AssistantText", "CompactionBoundary", "UserMessage"
    ]  # fmt: skip
    user, search, text, boundary, _ = transcript.entries
    assert isinstance(user, UserMessage)
    assert user.text == (
        "TF-DRAW: the weather in Paris, drawn like this one.\n\n"
        "[attachment: https://example.org/style.jpg · image/jpeg]"
    )
    assert user.images == [ImageData(media_type="image/png", data=PNG)]
    assert isinstance(search, ToolCall)
    assert search.result is not None
    assert (search.call_id, search.name, search.args, search.status) == (
        "ws_1", "web_search", {"type": "web_search", "query": "Paris weather today"}, "success"
    )  # fmt: skip
    assert "https://meteo.example/paris" in (search.result.text or "")
    assert search.result.structured["results"][0]["title"] == "Paris: 21C sunny"
    assert isinstance(text, AssistantText)
    assert text.text == "TF-SUNNY: 21C and sunny. Here is a drawing:"
    assert text.images == [ImageData(media_type="image/png", data=PNG)]
    assert isinstance(boundary, CompactionBoundary)
    assert boundary.summary == "TF-SUMMARY: Paris weather asked."
    assert transcript.warnings == []


def test_H4_a_tool_message_s_blob_image_is_its_result_s_and_server_calls_pair_without_ids() -> None:
    """The schemas make a server tool call's id optional: a response without one settles the
    server call still waiting; an image beside a ``tool_call_response`` is that result's."""
    asked = {
        "role": "assistant",
        "parts": [
            {
                "type": "server_tool_call",
                "name": "code_interpreter",
                "server_tool_call": {"type": "code_interpreter", "code": "1/0"},
            },
            {
                "type": "server_tool_call_response",
                "server_tool_call_response": {
                    "type": "code_interpreter",
                    "outputs": [{"type": "logs", "logs": "ZeroDivisionError"}],
                    "status": "failed",
                },
            },
            {"type": "tool_call", "id": "c1", "name": "screenshot", "arguments": {}},
        ],
    }
    shot = {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "TF-SHOT"},
            {"type": "blob", "modality": "image", "mime_type": "image/png", "content": PNG},
        ],
    }
    transcript = turnfold.load(_request(
        _chat_span("1" * 16, 1, [_said_parts("user", "go")], [asked]),
        _chat_span("2" * 16, 2, [_said_parts("user", "go"), asked, shot], []),
    ))  # fmt: skip
    interpreter, screenshot = transcript.tool_calls()
    assert (interpreter.name, interpreter.status) == ("code_interpreter", "error")
    assert interpreter.result is not None
    assert interpreter.result.text == "ZeroDivisionError"
    assert screenshot.result is not None
    assert (screenshot.result.text, screenshot.result.images) == (
        "TF-SHOT", [ImageData(media_type="image/png", data=PNG)]
    )  # fmt: skip
    assert transcript.warnings == []


def _said_parts(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_H4_a_part_of_no_schema_type_is_named_and_warned_about_once() -> None:
    """A ``GenericPart`` of a type the schemas do not define (an extension's card) is shown by
    its name with a warning, and a part that is no object is not skipped silently."""
    prompt = {
        "role": "user",
        "parts": [
            {"type": "text", "content": "TF-APPROVE"},
            {"type": "microsoft.a365.adaptive_card", "card_id": "ac-1", "action": "approved"},
            7,
        ],
    }
    reply = _said_parts("assistant", "TF-OK")
    transcript = turnfold.load(_request(
        _chat_span("1" * 16, 1, [prompt], [reply]),
        _chat_span("2" * 16, 2, [prompt, reply, _said_parts("user", "again")], []),
    ))  # fmt: skip
    assert outline(transcript) == [
        ("user", "TF-APPROVE\n\n[microsoft.a365.adaptive_card]"), ("text", "TF-OK"),
        ("user", "again"),
    ]  # fmt: skip
    assert [w.reason for w in transcript.warnings] == [
        "a message part of type 'microsoft.a365.adaptive_card' is shown by its name only",
        "a message part that is not an object was skipped",
    ]


@pytest.mark.parametrize(
    ("response", "status", "text"),
    [
        ({"type": "code_interpreter", "outputs": [{"type": "logs", "logs": "(10, 20)"}]},
         "success", "(10, 20)"),
        ({"type": "code_execution", "result": "1", "is_error": False}, "success", "1"),
        ({"type": "code_execution", "result": "Traceback", "is_error": True}, "error", "Traceback"),
        ({"type": "mcp_tool_result", "content": "file contents"}, "success", "file contents"),
        ({"type": "web_search_tool_result", "content": {
            "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
         "error", None),
        ({"type": "code_execution", "output": "", "outcome": "OUTCOME_DEADLINE_EXCEEDED"},
         "error", ""),
        ({"type": "image_generation"}, "success", None),
    ],
)  # fmt: skip
def test_H4_a_server_tool_response_states_its_outcome_as_its_provider_writes_it(
    response: dict[str, Any], status: str, text: str | None
) -> None:
    """OpenAI's code interpreter ``outputs``, Google's code execution (``is_error``,
    ``outcome``), Anthropic's server results (``*_error`` content): the payload is kept."""
    got, result = otlp.server_tool_outcome(response)
    assert got == status
    if text is not None:
        assert result.text == text
    assert result.structured == response


def test_H4_an_otlp_file_is_detected_as_otlp_and_nothing_else() -> None:
    from turnfold.formats import which_format

    for style in STYLES:
        assert which_format(_source(fixture_path(style).read_text())) == "otlp"


# --- agent frameworks' own tracing: Strands Agents, smolagents through OpenInference ----------

#: Strands' tracer in its three modes (strands/telemetry/tracer.py, read from
#: ``OTEL_SEMCONV_STABILITY_OPT_IN`` when the tracer is made): the older per-message events
#: with Bedrock Converse content, the latest conventions on the details event, and the
#: latest conventions as span attributes.
STRANDS_MODES = {
    "events": "",
    "latest": "gen_ai_latest_experimental",
    "latest-attributes": "gen_ai_latest_experimental,gen_ai_span_attributes_only",
}
#: smolagents_runs' scripted runs; ``llm-spans`` is the tool-calling run on a model class the
#: instrumentor traces (:func:`_served_model`), with one more failure; ``code-llm-spans`` a
#: CodeAgent on it (:func:`_code_llm_spans_agent`).
SMOLAGENTS_RUNS = ("tool-calling", "code", "llm-spans", "code-llm-spans")


def strands_fixture(mode: str) -> Path:
    return FIXTURES / f"strands_calc-agent_{mode}.jsonl"


def smolagents_fixture(run: str) -> Path:
    return FIXTURES / f"openinference-smolagents_{run}.jsonl"


def _request_line(exporter: Any) -> str:
    """The exporter's spans as one OTLP JSON request line, as the file exporters write them;
    exception stack traces (this machine's paths) trimmed: the loader reads their type and
    message."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = _hex_ids(MessageToDict(encode_spans(exporter.get_finished_spans())))
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for event in span.get("events", []):
                    for attribute in event.get("attributes", []):
                        if attribute["key"] == "exception.stacktrace":
                            attribute["value"] = {"stringValue": "[trimmed for fixture]"}
    return json.dumps(request) + "\n"


def _memory_provider() -> tuple[Any, Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@contextmanager
def _strands_tracing(mode: str) -> Iterator[Any]:
    """Strands' own tracer in ``mode``, exporting to memory: the tracer reads the opt-in when
    it is made and is one per process (``get_tracer``), so one is made for the run and put in
    its place, sending to this provider rather than the global one."""
    from strands.telemetry import tracer as strands_tracer

    provider, exporter = _memory_provider()
    saved_env = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN")
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = STRANDS_MODES[mode]
    try:
        tracer = strands_tracer.Tracer()
    finally:
        if saved_env is None:
            os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
        else:
            os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = saved_env
    tracer.tracer = provider.get_tracer(tracer.service_name)
    saved = strands_tracer._tracer_instance
    strands_tracer._tracer_instance = tracer  # type: ignore[assignment]
    try:
        yield exporter
    finally:
        strands_tracer._tracer_instance = saved


def write_strands_trace(mode: str, path: Path) -> Path:
    """The strands fixture's run (tests/formats/strands_runs.py: ``calc`` calls ``add`` twice
    in one response, ``explode``, which raises, and ``researcher``, an agent used as a tool,
    which calls ``add``; then it reasons and answers) traced by Strands itself, one line."""
    from tests.formats import strands_runs

    with _strands_tracing(mode) as exporter:
        strands_runs.run(trace_attributes={"session.id": "tf-strands-1"})
        path.write_text(_request_line(exporter))
    return path


#: What :func:`_served_model`'s server answers once its scripted replies are used up (an
#: HTTP 500: the model call fails as with a real server, never an error of the test's queue).
SERVED_OUT = "No scripted reply left."


def _served_model(replies: list[Any]) -> Any:
    """smolagents' ``OpenAIModel`` on the real ``openai`` client, whose HTTP requests httpx's
    ``MockTransport`` answers with the scripted replies (smolagents ``ChatMessage``) as Chat
    Completions responses, in order, then with an HTTP 500 error (:data:`SERVED_OUT`): the
    instrumentor wraps the ``generate`` of smolagents' own model classes, so each model call
    is an LLM span."""
    import httpx
    from smolagents import OpenAIModel

    def completion(index: int, reply: Any) -> dict[str, Any]:
        calls = [
            {"id": c.id, "type": "function", "function": {
                "name": c.function.name, "arguments": json.dumps(c.function.arguments)}}
            for c in reply.tool_calls or []
        ]  # fmt: skip
        usage = reply.token_usage
        return {
            "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 1_700_000_000,
            "model": "scripted-1",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": {"role": "assistant", "content": reply.content,
                                     **({"tool_calls": calls} if calls else {})}}],
            "usage": {"prompt_tokens": usage.input_tokens,
                      "completion_tokens": usage.output_tokens,
                      "total_tokens": usage.input_tokens + usage.output_tokens},
        }  # fmt: skip

    queue = [completion(index, reply) for index, reply in enumerate(replies)]

    def answer(request: httpx.Request) -> httpx.Response:
        if not queue:  # the server failing, as one does: an HTTP error the client raises
            error = {"message": SERVED_OUT, "type": "server_error"}
            return httpx.Response(500, json={"error": error})
        return httpx.Response(200, json=queue.pop(0))

    transport = httpx.MockTransport(answer)
    return OpenAIModel(
        "scripted-1",
        api_base="http://scripted.invalid/v1",
        api_key="sk-fake",
        client_kwargs={"http_client": httpx.Client(transport=transport), "max_retries": 0},
    )


def _llm_spans_agent() -> Any:
    """smolagents_runs' main run (a plan, ``add``, ``explode`` raising, two calls in one step,
    the managed agent ``helper``, ``final_answer``) with a call of a tool the agent lacks
    after ``explode`` (its step fails with no tool span), each agent on :func:`_served_model`."""
    from tests.formats import smolagents_runs

    agent = smolagents_runs.make_agent()
    replies = agent.model.replies
    replies.insert(3, smolagents_runs._message(None, ("multiply", {"a": 2, "b": 3}, "call_2b")))
    agent.model = _served_model(replies)
    helper = agent.managed_agents["helper"]
    helper.model = _served_model(helper.model.replies)
    return agent


CODE_LLM_TASK = "Add in code, try explode twice, ask the helper, then answer."


def _code_llm_spans_agent() -> Any:
    """A CodeAgent with smolagents_runs' tools and managed agent ``helper``, each agent on
    :func:`_served_model`: code calling ``add`` twice, its reply stopped before ``</code>`` (a
    stop sequence of the model call, where a model's reply ends); code that prints, then raises
    in ``explode``, and the same reply again; a reply with no code (``AgentParsingError``);
    code asking the helper; ``final_answer`` from code."""
    from smolagents import CodeAgent

    from tests.formats import smolagents_runs

    add, explode = smolagents_runs._tools()
    helper = smolagents_runs.make_agent().managed_agents["helper"]
    helper.model = _served_model(helper.model.replies)
    failing = "Thought: now the failing tool.\n<code>\nprint('trying')\nexplode(x='y')\n</code>"
    replies = [
        "Thought: I add in code.\n<code>\nresult = add(a=1, b=2)\nprint(result, add(a=3, b=4))\n",
        failing,
        failing,
        "I forgot the code block.",
        "Thought: ask the helper.\n<code>\nprint(helper(task='add 5 and 6'))\n</code>",
        "Thought: done.\n<code>\nfinal_answer(f'done: {result}')\n</code>",
    ]
    return CodeAgent(
        tools=[add, explode],
        managed_agents=[helper],
        verbosity_level=0,
        logger=smolagents_runs._quiet(),
        model=_served_model([smolagents_runs._message(text) for text in replies]),
    )


def trace_smolagents(run: str) -> tuple[Any, str]:
    """A smolagents run of tests/formats/smolagents_runs.py (a ToolCallingAgent with a managed
    agent ``helper``, a CodeAgent) traced by openinference-instrumentation-smolagents: the
    finished agent and its spans as one line. Their scripted model overrides ``generate``, which
    the instrumentor wraps only on smolagents' own model classes, so there are no LLM spans:
    the AGENT spans' task, answer and token counts are all there is of the model; the
    ``llm-spans`` and ``code-llm-spans`` runs have them (:func:`_llm_spans_agent`,
    :func:`_code_llm_spans_agent`)."""
    from tests.formats import smolagents_runs

    make, task = {
        "tool-calling": (smolagents_runs.make_agent, smolagents_runs.TASK),
        "code": (smolagents_runs.make_code_agent, smolagents_runs.CODE_TASK),
        "llm-spans": (_llm_spans_agent, smolagents_runs.TASK),
        "code-llm-spans": (_code_llm_spans_agent, CODE_LLM_TASK),
    }[run]
    agent = make()
    return agent, trace_agent_run(agent, task)


def trace_agent_run(agent: Any, task: str) -> str:
    """The spans of ``agent.run(task)`` traced by openinference-instrumentation-smolagents, as
    one line."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider, exporter = _memory_provider()
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        agent.run(task)
    finally:
        instrumentor.uninstrument()
    return _request_line(exporter)


def write_smolagents_trace(run: str, path: Path) -> Path:
    path.write_text(trace_smolagents(run)[1])
    return path


STRANDS_PROMPT = "add 1 and 2 and 3 and 4, explode y, ask the researcher"
EXPECTED_STRANDS = [
    ("user", STRANDS_PROMPT),
    ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
    ("call", "add", {"a": 3, "b": 4}, "success", "7", None),
    ("text", "Now the failing one. "),
    ("call", "explode", {"x": "y"}, "error", "Error: boom: y", None),
    ("call", "researcher", {"input": "what is 5+6?"}, "success", "It is 11. \n", [
        ("user", "what is 5+6?"),
        ("call", "add", {"a": 5, "b": 6}, "success", "11", None),
        ("text", "It is 11. "),
    ]),
    ("thinking", "All done; explode failed."),
    ("text", "1+2=3, 3+4=7; explode failed; the researcher says 11. "),
]  # fmt: skip


@pytest.mark.parametrize("mode", STRANDS_MODES)
def test_H4_strands_own_tracing_reads_as_the_run_it_traced(mode: str) -> None:
    """Strands writes Bedrock Converse content (``[{"text"}]``, ``toolUse``, ``toolResult``) in
    its events, or GenAI parts with Converse blocks in them, and starts every model and tool
    span inside an ``execute_event_loop_cycle`` span: the prompt comes first, the calls are
    settled by their tool spans (a failing one with the error its model saw), the agent used
    as a tool is that call's sub-agent, the reasoning and answer come last and once (the agent
    span's ``str(AgentResult)`` repeats the answer with a newline)."""
    transcript = turnfold.load(strands_fixture(mode))
    assert outline(transcript) == EXPECTED_STRANDS
    assert transcript.warnings == []
    meta = transcript.metadata
    assert (meta["agent"], meta["model"], meta["system"], meta["session_id"]) == (
        "calc", "scripted-1", "You are terse.", "tf-strands-1"
    )  # fmt: skip
    researcher = transcript.tool_calls()[-1].subagent
    assert researcher is not None
    assert (researcher.name, researcher.task) == ("researcher", "what is 5+6?")
    assert transcript.accounting is not None
    assert transcript.accounting.counts["span/execute_event_loop_cycle"] == {"ignored": 6}


@pytest.mark.parametrize("mode", STRANDS_MODES)
def test_H4_strands_tokens_are_the_chat_spans_not_the_agent_spans_sums_again(mode: str) -> None:
    """Every ``chat`` span records its response's usage and every ``invoke_agent`` span the sum
    of its agent's (``accumulated_usage``): each response counted once, the sub-agent's apart."""
    from turnfold.usage import transcript_tokens

    transcript = turnfold.load(strands_fixture(mode))
    tokens = transcript_tokens(transcript)
    assert tokens.own == {"input_tokens": 70, "output_tokens": 24,
                          "cache_read_tokens": 30, "cache_write_tokens": 2}  # fmt: skip
    assert tokens.subagents == {"input_tokens": 20, "output_tokens": 10}
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [t.usage.output_tokens if t.usage else None for t in texts] == [5, 9]


_SMOLAGENTS_ANSWER = "1+2=3; explode failed; 2+2=4 and 3+3=6; the helper says 11."
#: What the CodeAgent's failing step printed, then its error (as the smolagents loader joins
#: a failed step's observations and error).
_EXPLODED = (
    "Execution logs:\ntrying\n\n"
    "Code execution failed at line 'explode(x='y')' due to: ValueError: boom: y"
)
_HELPER = [
    ("user", "HELPER-TASK"),
    ("call", "add", {"a": 5, "b": 6}, "success", "11", None),
    ("text", "11"),
]
#: What each run reads as: a ``final_answer`` call is the answer (as the smolagents loader
#: shows it), not a call.
EXPECTED_SMOLAGENTS = {
    "tool-calling": [
        ("user", "Plan, add 1 and 2, try explode, add twice at once, ask the helper, then answer."),
        ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
        ("call", "explode", {"x": "y"}, "error", "ValueError: boom: y", None),
        ("call", "add", {"a": 2, "b": 2}, "success", "4", None),
        ("call", "add", {"a": 3, "b": 3}, "success", "6", None),
        ("call", "invoke_agent", {"agent": "helper", "prompt": "HELPER-TASK"}, "success", "11",
         _HELPER),
        ("text", _SMOLAGENTS_ANSWER),
    ],
    "code": [
        ("user", "Add 1 and 2 in code, try explode, then answer."),
        ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
        ("call", "explode", {"x": "y"}, "error", "ValueError: boom: y", None),
        ("text", "done: 3"),
    ],
    "llm-spans": [
        ("user", "Plan, add 1 and 2, try explode, add twice at once, ask the helper, then answer."),
        ("thinking", "1. add 1 and 2\n2. try explode\n3. ask the helper"),
        ("thinking", "Let me add first."),
        ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
        ("call", "explode", {"x": "y"}, "error", "ValueError: boom: y", None),
        ("call", "multiply", {"a": 2, "b": 3}, "error",
         "Unknown tool multiply, should be one of: add, explode, final_answer, helper.", None),
        ("thinking", "Two sums at once."),
        ("call", "add", {"a": 2, "b": 2}, "success", "4", None),
        ("call", "add", {"a": 3, "b": 3}, "success", "6", None),
        ("call", "helper", {"task": "add 5 and 6"}, "success", "11", _HELPER),
        ("text", _SMOLAGENTS_ANSWER),
    ],
    "code-llm-spans": [
        ("user", CODE_LLM_TASK),
        ("thinking", "I add in code."),
        ("call", "python", "result = add(a=1, b=2)\nprint(result, add(a=3, b=4))", "success",
         "Execution logs:\n3 7\nLast output from code snippet:\nNone", None),
        ("thinking", "now the failing tool."),
        ("call", "python", "print('trying')\nexplode(x='y')", "error", _EXPLODED, None),
        ("thinking", "now the failing tool."),
        ("call", "python", "print('trying')\nexplode(x='y')", "error", _EXPLODED, None),
        ("thinking", "I forgot the code block."),
        ("thinking", "ask the helper."),
        ("call", "python", "print(helper(task='add 5 and 6'))", "success",
         "Execution logs:\nHere is the final answer from your managed agent 'helper':\n11\n"
         "Last output from code snippet:\nNone", _HELPER),
        ("thinking", "done."),
        ("call", "python", "final_answer(f'done: {result}')", "success",
         "Execution logs:\nLast output from code snippet:\ndone: 3", None),
        ("text", "done: 3"),
    ],
}  # fmt: skip


def _helper_task(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The outline with the managed agent's task (smolagents' ``managed_agent`` prompt
    template around ``add 5 and 6``) named ``HELPER-TASK``."""

    def named(value: Any) -> Any:
        if isinstance(value, str) and "\nTask:\nadd 5 and 6\n" in value:
            return "HELPER-TASK"
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(named(v) for v in value)
        return value

    return [named(row) for row in rows]


@pytest.mark.parametrize("run", SMOLAGENTS_RUNS)
def test_H4_smolagents_traced_by_openinference_reads_as_its_run(run: str) -> None:
    """OpenInference's smolagents instrumentor writes the agent's ``run`` arguments as the
    AGENT span's ``input.value`` (``{"task": …}``), the answer as its ``output.value`` (``11``
    is JSON too), a tool's call as ``{"args", "sanitize_inputs_outputs", "kwargs"}``, and a
    managed agent's AGENT span inside the manager's CHAIN step: the task is the prompt, the
    arguments are the model's, the managed agent is a sub-agent with its task and answer;
    a ``final_answer`` call is the answer (as the smolagents loader shows it), not a call. With
    LLM spans, the model's text (a plan, a step's thought) is thinking and the managed agent
    nests under the call of its name; a CodeAgent's step is a ``python`` call of its code, the
    tool spans and managed agent its code ran inside it, a reply with no code an error notice.
    """
    transcript = turnfold.load(smolagents_fixture(run))
    assert _helper_task(outline(transcript)) == EXPECTED_SMOLAGENTS[run]
    assert transcript.warnings == []
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.level, n.subtype) for n in notices] == (
        [("error", "step")] if run == "code-llm-spans" else []
    )
    assert all(n.text.startswith("AgentParsingError: Error in code parsing:") for n in notices)
    if run == "tool-calling":
        helper = transcript.tool_calls()[4].subagent
        assert helper is not None
        assert helper.name == "helper"
        assert helper.task is not None
        assert "Task:\nadd 5 and 6" in helper.task


def test_H4_smolagents_agent_spans_token_counts_are_its_usage_when_no_llm_span_has_one() -> None:
    """Without LLM spans, the AGENT span's ``llm.token_count.*`` (the agent monitor's totals)
    is the only record of the run's usage: counted, the managed agent's under its call."""
    from turnfold.usage import transcript_tokens

    tokens = transcript_tokens(turnfold.load(smolagents_fixture("tool-calling")))
    assert tokens.own == {"input_tokens": 50, "output_tokens": 29}
    assert tokens.subagents == {"input_tokens": 20, "output_tokens": 5}


@pytest.mark.parametrize(
    ("run", "own", "carried"),
    [
        ("llm-spans", {"input_tokens": 70, "output_tokens": 41}, [7, 5, 5, 5, 5, 5, 9]),
        ("code-llm-spans", {"input_tokens": 60, "output_tokens": 30}, [5] * 6),
    ],
)
def test_H4_smolagents_llm_spans_count_each_response_once(
    run: str, own: dict[str, int], carried: list[int]
) -> None:
    """Each LLM span records its response's usage and each AGENT span their sum again: every
    response counted once, on what it wrote (the plan, a step's thought or calls, the answer
    its ``final_answer`` call gave; a CodeAgent's thought), the managed agent's under its
    call."""
    from turnfold.usage import transcript_tokens

    transcript = turnfold.load(smolagents_fixture(run))
    tokens = transcript_tokens(transcript)
    assert tokens.own == own
    assert tokens.subagents == {"input_tokens": 20, "output_tokens": 5}
    assert [e.usage.output_tokens for e in transcript.entries if getattr(e, "usage", None)] == (
        carried
    )


def _calls_outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Every call as (name, arguments, status, its sub-agent's calls)."""
    return [
        (call.name, call.args, call.status,
         _calls_outline(call.subagent.transcript)
         if call.subagent is not None and call.subagent.transcript is not None
         else None)
        for call in transcript.tool_calls()
    ]  # fmt: skip


def _reads_as_loaded(traced: Transcript, loaded: Transcript, task: str, answer: str) -> None:
    """What a trace with LLM spans and ``turnfold.load(agent)`` agree on: the task once (the LLM
    spans' input is the agent's memory written again), the answer once, the step errors no call
    owns, the system prompt, model and the agent's own tokens (each response once: the AGENT
    span's sums are not counted again)."""
    from turnfold.usage import transcript_tokens

    def kinds(transcript: Transcript, kind: type[Any]) -> list[Any]:
        return [e for e in transcript.entries if isinstance(e, kind)]

    assert traced.warnings == []
    assert [e.text for e in kinds(traced, UserMessage)] == [task]
    assert [e.text for e in kinds(loaded, UserMessage)] == [task]
    assert [e.text for e in kinds(traced, AssistantText)][-1:] == [answer]
    assert [e.text for e in kinds(loaded, AssistantText)][-1:] == [answer]
    notices = [(e.level, e.text) for e in kinds(traced, SystemNotice)]
    assert notices == [(e.level, e.text) for e in kinds(loaded, SystemNotice)]
    assert transcript_tokens(traced).own == transcript_tokens(loaded).own
    for key in ("system", "model"):
        assert traced.metadata[key] == loaded.metadata[key]


def test_H4_smolagents_llm_spans_read_as_the_agent_itself_loads(tmp_path: Path) -> None:
    """A smolagents run traced with its model calls reads as ``turnfold.load(agent)`` reads
    the run: the same calls with the same statuses (a call of a tool the agent lacks has no
    tool span: its step's error settles it; the managed agent nests under the call of its
    name), the task, answer, system prompt, model and tokens (:func:`_reads_as_loaded`)."""
    pytest.importorskip("openinference.instrumentation.smolagents")
    from turnfold.usage import transcript_tokens

    agent, line = trace_smolagents("llm-spans")
    path = tmp_path / "trace.jsonl"
    path.write_text(line)
    traced, loaded = turnfold.load(path), turnfold.load(agent)
    assert _calls_outline(traced) == _calls_outline(loaded)
    _reads_as_loaded(traced, loaded, agent.task, _SMOLAGENTS_ANSWER)
    assert transcript_tokens(traced) == transcript_tokens(loaded)
    traced_helper, loaded_helper = (
        c.subagent for t in (traced, loaded) for c in t.tool_calls() if c.name == "helper"
    )
    assert traced_helper is not None
    assert loaded_helper is not None
    assert traced_helper.task == loaded_helper.task == "add 5 and 6"


def test_H4_smolagents_code_agent_llm_spans_read_as_the_agent_itself_loads(tmp_path: Path) -> None:
    """A CodeAgent's step traced with its model call reads as ``turnfold.load(agent)`` reads
    it: the thought, then one ``python`` call of the code (its arguments), its result the
    step's observations (the execution logs, then the error of code that failed), its status
    the step's; the tool spans its code ran are not calls of their own; a reply with no code
    is the step's error notice; the answer is ``final_answer``'s, once; the managed agent its
    code ran nests under that python call, with the same calls and tokens."""
    pytest.importorskip("openinference.instrumentation.smolagents")
    from turnfold.usage import transcript_tokens

    agent, line = trace_smolagents("code-llm-spans")
    path = tmp_path / "trace.jsonl"
    path.write_text(line)
    traced, loaded = turnfold.load(path), turnfold.load(agent)
    assert _calls_outline(traced) == _calls_outline(loaded)
    traced_calls, loaded_calls = traced.tool_calls(), loaded.tool_calls()
    assert [c.result.text if c.result else None for c in traced_calls] == [
        c.result.text if c.result else None for c in loaded_calls
    ]
    assert [c.meta["tool_name"] for c in traced_calls] == ["python_interpreter"] * 5
    thoughts = [e.text for e in traced.entries if isinstance(e, Thinking)]
    assert thoughts == [  # the load's, but for the closing tag smolagents adds to its memory
        e.text.removesuffix("</code>") for e in loaded.entries if isinstance(e, Thinking)
    ]
    _reads_as_loaded(traced, loaded, CODE_LLM_TASK, "done: 3")
    helper = traced_calls[3].subagent
    assert helper is not None
    assert helper.transcript is not None
    assert transcript_tokens(traced) == transcript_tokens(loaded)
    loaded_helper = loaded_calls[3].subagent
    assert loaded_helper is not None
    assert loaded_helper.task == "add 5 and 6"


def _read_as(transcript: Transcript, *, thoughts: bool = True) -> list[tuple[Any, ...]]:
    """What a smolagents trace and ``turnfold.load(agent)`` are compared on: the entries in
    order (the task, thoughts, calls with their status and result, notices, the answer)."""
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, SystemNotice):
            rows.append(("notice", entry.level, entry.subtype, entry.text))
        elif isinstance(entry, ToolCall):
            rows.append(("call", entry.name, entry.args, entry.status,
                         entry.result.text if entry.result else None))  # fmt: skip
        elif isinstance(entry, Thinking):
            rows += [("thinking", entry.text)] if thoughts else []
        elif isinstance(entry, (UserMessage, AssistantText, AssistantError)):
            rows.append(outline(Transcript(entries=[entry]))[0])
    return rows


def _scripted_tool_agent(replies: list[Any], *, llm_spans: bool, max_steps: int = 20) -> Any:
    """A ``ToolCallingAgent`` with smolagents_runs' tools on the scripted ``replies``: on
    :func:`_served_model` (LLM spans) or on smolagents_runs' model class (none)."""
    from smolagents import ToolCallingAgent

    from tests.formats import smolagents_runs

    model = _served_model(replies) if llm_spans else smolagents_runs._model_class()(replies)
    return ToolCallingAgent(
        tools=list(smolagents_runs._tools()),
        verbosity_level=0,
        logger=smolagents_runs._quiet(),
        max_steps=max_steps,
        model=model,
    )


def _scripted_code_agent(replies: list[str], *, llm_spans: bool, max_steps: int = 20) -> Any:
    from smolagents import CodeAgent

    from tests.formats import smolagents_runs

    messages = [smolagents_runs._message(text) for text in replies]
    model = _served_model(messages) if llm_spans else smolagents_runs._model_class()(messages)
    return CodeAgent(
        tools=list(smolagents_runs._tools()),
        verbosity_level=0,
        logger=smolagents_runs._quiet(),
        max_steps=max_steps,
        model=model,
    )


def _traced_and_loaded(agent: Any, task: str, tmp_path: Path) -> tuple[Transcript, Transcript]:
    path = tmp_path / "trace.jsonl"
    path.write_text(trace_agent_run(agent, task))
    traced = turnfold.load(path)
    assert traced.warnings == []
    return traced, turnfold.load(agent)


@pytest.mark.parametrize("llm_spans", [True, False], ids=["llm-spans", "agent-spans"])
def test_H4_a_smolagents_step_error_no_call_owns_is_the_notice_the_loader_shows(
    llm_spans: bool, tmp_path: Path
) -> None:
    """A ToolCallingAgent's reply with no call (``AgentParsingError``, recorded as the step
    span's exception) has no call to hold its error: as ``turnfold.load(agent)`` shows it, an
    error notice on its step, after the step's thought. Without LLM spans the thoughts are not
    in the trace; everything else reads alike."""
    pytest.importorskip("openinference.instrumentation.smolagents")
    from tests.formats import smolagents_runs

    message = smolagents_runs._message
    replies = [
        message("I will answer without a tool."),
        message(None, ("add", {"a": 1, "b": 2}, "call_1")),
        message(None, ("final_answer", {"answer": "3"}, "call_2")),
    ]
    agent = _scripted_tool_agent(replies, llm_spans=llm_spans)
    traced, loaded = _traced_and_loaded(agent, "add 1 and 2", tmp_path)
    error = (
        "AgentParsingError: Error while parsing tool call from model output: "
        "The model output does not contain any JSON blob."
    )
    assert _read_as(loaded) == [
        ("user", "add 1 and 2"),
        ("thinking", "I will answer without a tool."),
        ("notice", "error", "step", error),
        ("call", "add", {"a": 1, "b": 2}, "success", "3"),
        ("text", "3"),
    ]
    assert _read_as(traced, thoughts=llm_spans) == _read_as(loaded, thoughts=llm_spans)


def test_H4_a_smolagents_step_error_of_no_one_call_is_a_notice_beside_the_calls_that_ran(
    tmp_path: Path,
) -> None:
    """A step of two calls, one of a tool the agent lacks (``AgentToolExecutionError`` whose
    message names no call as smolagents quotes it): as ``turnfold.load(agent)`` shows it,
    the error is the step's notice, the call that no tool span ran ``unknown``; the trace
    also knows that the other call ran (its tool span), which the agent's memory does not
    record (a failed step keeps no observations)."""
    pytest.importorskip("openinference.instrumentation.smolagents")
    from tests.formats import smolagents_runs

    message = smolagents_runs._message
    replies = [
        message(None, ("add", {"a": 1, "b": 2}, "call_1"), ("multiply", {"a": 2}, "call_2")),
        message(None, ("final_answer", {"answer": "3"}, "call_3")),
    ]
    agent = _scripted_tool_agent(replies, llm_spans=True)
    traced, loaded = _traced_and_loaded(agent, "add, multiply", tmp_path)
    notice = (
        "notice", "error", "step",
        "AgentToolExecutionError: Unknown tool multiply, should be one of: add, explode, "
        "final_answer.",
    )  # fmt: skip
    assert _read_as(loaded) == [
        ("user", "add, multiply"),
        ("call", "add", {"a": 1, "b": 2}, "unknown", None),
        ("call", "multiply", {"a": 2}, "unknown", None),
        notice,
        ("text", "3"),
    ]
    assert _read_as(traced) == [
        ("user", "add, multiply"),
        ("call", "add", {"a": 1, "b": 2}, "success", "3"),
        ("call", "multiply", {"a": 2}, "unknown", None),
        notice,
        ("text", "3"),
    ]


@pytest.mark.parametrize("llm_spans", [True, False], ids=["llm-spans", "agent-spans"])
@pytest.mark.parametrize("kind", ["tool-calling", "code"])
def test_H4_a_smolagents_run_that_hits_max_steps_reads_as_the_agent_itself_loads(
    kind: str, llm_spans: bool, tmp_path: Path
) -> None:
    """At ``max_steps`` smolagents asks the model for an answer anyway (``provide_final_answer``:
    a model span of the agent's own, after its last step) and records a step whose error is
    ``AgentMaxStepsError``: as ``turnfold.load(agent)`` shows it, a max-steps notice, then
    the model's reply as the answer (not a plan), with that call's usage. Traced without LLM
    spans, a run that answered in none of the steps it was allowed hit the limit too."""
    pytest.importorskip("openinference.instrumentation.smolagents")
    from tests.formats import smolagents_runs

    if kind == "code":
        agent = _scripted_code_agent(
            ["<code>\nprint(add(a=1, b=2))\n</code>", "The answer is 3."],
            llm_spans=llm_spans,
            max_steps=1,
        )
    else:
        message = smolagents_runs._message
        replies = [message(None, ("add", {"a": 1, "b": 2}, "call_1")), message("The answer is 3.")]
        agent = _scripted_tool_agent(replies, llm_spans=llm_spans, max_steps=1)
    traced, loaded = _traced_and_loaded(agent, "add 1 and 2", tmp_path)
    rows = _read_as(loaded)
    assert rows[-2:] == [
        ("notice", "warning", "max_steps", "Reached max steps."),
        ("text", "The answer is 3."),
    ]
    if llm_spans or kind == "tool-calling":
        assert _read_as(traced) == rows
    else:  # without its model span, a CodeAgent's code is not in the trace: the tools it ran
        add = ("call", "add", {"a": 1, "b": 2}, "success", "3")
        assert _read_as(traced) == [rows[0], add, *rows[-2:]]
    if llm_spans:
        from turnfold.usage import transcript_tokens

        answers = [e for t in (traced, loaded) for e in t.entries if isinstance(e, AssistantText)]
        assert [a.usage.output_tokens if a.usage else None for a in answers] == [5, 5]
        assert transcript_tokens(traced).own == transcript_tokens(loaded).own


#: Answers that are not strings, as ``final_answer`` is given them, and as JSON (a dict's or
#: a list's in a fenced block).
_NOT_TEXT = {
    "number": (42, "42"),
    "dict": (
        {"a": 1, "b": [2, 3]},
        '```json\n{\n  "a": 1,\n  "b": [\n    2,\n    3\n  ]\n}\n```',
    ),
    "list": ([1, 2], "```json\n[\n  1,\n  2\n]\n```"),
}


@pytest.mark.parametrize("llm_spans", [True, False], ids=["llm-spans", "agent-spans"])
@pytest.mark.parametrize("kind", ["tool-calling", "code"])
@pytest.mark.parametrize("answer", _NOT_TEXT)
def test_H4_a_smolagents_answer_that_is_not_text_reads_as_the_agent_itself_loads(
    answer: str, kind: str, llm_spans: bool, tmp_path: Path
) -> None:
    """``final_answer(42)``, of a dict, of a list: the AGENT span's output is the answer's
    ``str()`` (``{'a': 1}``), the ``final_answer`` tool span's its JSON; as
    ``turnfold.load(agent)`` shows it (a CodeAgent's ``action_output``, a ToolCallingAgent's
    call argument), the answer is its JSON."""
    pytest.importorskip("openinference.instrumentation.smolagents")
    from tests.formats import smolagents_runs

    value, shown = _NOT_TEXT[answer]
    if kind == "code":
        agent = _scripted_code_agent(
            [f"<code>\nfinal_answer({value!r})\n</code>"], llm_spans=llm_spans
        )
    else:
        replies = [smolagents_runs._message(None, ("final_answer", {"answer": value}, "c1"))]
        agent = _scripted_tool_agent(replies, llm_spans=llm_spans)
    traced, loaded = _traced_and_loaded(agent, "answer", tmp_path)
    assert _read_as(loaded)[-1] == ("text", shown)
    if llm_spans or kind == "tool-calling":
        assert _read_as(traced) == _read_as(loaded)
    else:
        assert _read_as(traced) == [("user", "answer"), ("text", shown)]


def test_H4_each_model_span_s_calls_are_one_batch() -> None:
    """A trace's spans are all on one line of the file: the calls of one model span (one
    response) are one batch, those of the next another."""
    calls = {c.call_id: c for c in turnfold.load(smolagents_fixture("llm-spans")).tool_calls()}
    assert calls["call_3a"].batch_id == calls["call_3b"].batch_id
    assert len({calls[i].batch_id for i in ("call_1", "call_2", "call_2b", "call_3a")}) == 4


@pytest.mark.parametrize(
    ("reply", "thought", "code", "default_tags"),
    [
        ("Thought: add.\n<code>\nx = 1\n</code>\nafter", "add.", "x = 1", True),
        ("Thought: cut.\n<code>\nx = 1\n", "cut.", "x = 1", True),
        ("Two.\n<code>\na = 1\n</code>\nthen\n<code>\nb = 2\n</code>", "Two.", "a = 1\n\nb = 2",
         True),
        ("Markdown.\n```python\nx = 1\n```", "Markdown.", "x = 1", True),
        ("Markdown, cut.\n```py\nx = 1", "Markdown, cut.", "x = 1", False),
        ("print(1)", "", "print(1)", False),
    ],
    ids=["block", "closing-tag-cut", "two-blocks", "markdown", "markdown-cut", "no-block"],
)  # fmt: skip
def test_H4_a_code_agent_s_reply_is_its_thought_and_the_code_smolagents_ran(
    reply: str, thought: str, code: str, default_tags: bool
) -> None:
    """A CodeAgent's model span records the model's reply, not the code: it is parsed as
    smolagents parses it for an agent of the default ``code_block_tags`` (``parse_code_blobs``
    of the reply with the closing tag its stop sequence cut added), or of ``"markdown"`` (its
    closing fence cut the same way); a reply with no block was run whole (an agent of other
    tags: the default agent fails such a step, ``AgentParsingError``, and no code is read)."""
    assert otlp.smolagents_code(reply) == (thought, code)
    if default_tags:
        utils = pytest.importorskip("smolagents.utils")
        closed = reply if reply.rstrip().endswith("</code>") else reply + "</code>"
        assert utils.parse_code_blobs(closed, ("<code>", "</code>")) == code


def _parallel_adds_swapped(run: str, path: Path) -> Path:
    """The smolagents fixture of ``run`` with the start times of the TOOL spans of its two
    parallel ``add`` calls swapped, as the thread pool that runs them may start them."""
    document = json.loads(smolagents_fixture(run).read_text())
    spans = [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]

    def tool_span(kwargs: str) -> dict[str, Any]:
        return next(
            s for s in spans
            if any(a["key"] == "input.value" and kwargs in a["value"].get("stringValue", "")
                   for a in s.get("attributes", []))
            and s["name"] == "SimpleTool"
        )  # fmt: skip

    first, second = tool_span('"kwargs": {"a": 2, "b": 2}'), tool_span('"kwargs": {"a": 3, "b": 3}')
    first["startTimeUnixNano"], second["startTimeUnixNano"] = (
        second["startTimeUnixNano"], first["startTimeUnixNano"]
    )  # fmt: skip
    path.write_text(json.dumps(document) + "\n")
    return path


def test_H4_tool_spans_without_a_call_id_settle_the_call_of_their_arguments(
    tmp_path: Path,
) -> None:
    """smolagents runs a response's calls in a thread pool, so their TOOL spans (which carry
    no call id) may start in any order: each settles the call of its arguments, not the first
    unsettled call of its name."""
    path = _parallel_adds_swapped("llm-spans", tmp_path / "swapped.jsonl")
    calls = {c.call_id: c for c in turnfold.load(path).tool_calls()}
    results = [calls[i].result for i in ("call_3a", "call_3b")]
    assert [r.text if r else None for r in results] == ["4", "6"]


def _batches_unordered(transcript: Transcript) -> list[Any]:
    """The outline with the rows of each batch of calls sorted: for a trace that does not
    record the order of a batch's calls (:data:`_UNORDERED`)."""
    shown = [e for e in transcript.entries if not isinstance(e, (SystemNotice, CompactionBoundary))]
    rows = outline(transcript)
    groups = itertools.groupby(
        zip(shown, rows, strict=True),
        key=lambda pair: pair[0].batch_id if isinstance(pair[0], ToolCall) else pair[0].id,
    )
    return [sorted((row for _, row in group), key=repr) for _, group in groups]


def test_H4_a_smolagents_step_s_calls_are_one_batch_whose_order_no_llm_span_says() -> None:
    """Without LLM spans nothing in the trace says in which order the model asked for a step's
    parallel calls (the TOOL spans start as the thread pool runs them): the calls one step ran
    are one batch, and a trace whose spans started in the other order reads as the same
    batches."""
    calls = turnfold.load(smolagents_fixture("tool-calling")).tool_calls()
    assert [c.args for c in calls][2:4] == [{"a": 2, "b": 2}, {"a": 3, "b": 3}]
    batches = [c.batch_id for c in calls]
    assert batches[2] == batches[3]
    assert None not in batches[:4]
    assert len(set(batches[:4])) == 3


def test_H4_parallel_calls_in_the_other_order_are_the_same_batches(tmp_path: Path) -> None:
    """What the rerun of the no-LLM-spans smolagents run is compared on (:data:`_UNORDERED`):
    the same batches of calls, whichever of a batch's parallel calls ran first."""
    fixture = turnfold.load(smolagents_fixture("tool-calling"))
    swapped = turnfold.load(_parallel_adds_swapped("tool-calling", tmp_path / "swapped.jsonl"))
    assert outline(swapped) != outline(fixture)
    assert _batches_unordered(swapped) == _batches_unordered(fixture)


_WRITERS = {
    **{strands_fixture(m).name: (write_strands_trace, m, "strands") for m in STRANDS_MODES},
    **{smolagents_fixture(r).name: (write_smolagents_trace, r, "openinference.instrumentation."
                                    "smolagents") for r in SMOLAGENTS_RUNS},
}  # fmt: skip


#: The fixtures that do not record the order of a batch's calls: smolagents' parallel calls
#: traced without the LLM span that asked for them.
_UNORDERED = {smolagents_fixture("tool-calling").name}


@pytest.mark.parametrize("name", _WRITERS)
def test_H4_the_installed_frameworks_trace_what_the_loader_reads(name: str, tmp_path: Path) -> None:
    """Compatibility with the installed strands-agents, smolagents and OpenInference
    instrumentor: a trace written now reads as the committed fixture does, but for the order
    of parallel calls where the trace does not record it (``TURNFOLD_UPDATE_FIXTURES=1``
    rewrites those)."""
    write, variant, package = _WRITERS[name]
    pytest.importorskip(package)
    target = FIXTURES / name if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else tmp_path / name
    written = turnfold.load(write(variant, target))
    committed = turnfold.load(FIXTURES / name)
    if name in _UNORDERED:
        assert _batches_unordered(written) == _batches_unordered(committed)
    else:
        assert outline(written) == outline(committed)
    assert written.warnings == []
    assert written.accounting is not None
    assert written.accounting.unaccounted == []


def test_H4_converse_bytes_strands_tracer_replaced_are_no_image() -> None:
    """Strands' tracer writes bytes as ``"<replaced>"``: such an image block has no image
    (not one whose data is that text) and its line counts no bytes, in the strands loader's
    reading as in a trace's."""
    from turnfold.formats.frameworks.strands import attachment_line, image_of

    replaced = {"format": "png", "source": {"bytes": "<replaced>"}}
    assert image_of(replaced) is None
    assert attachment_line("image", replaced) == "[attachment: image · png]"
    message = {"role": "user", "content": [{"text": "look"}, {"image": replaced}]}
    (prompt,) = turnfold.load(json.dumps([message])).entries
    assert isinstance(prompt, UserMessage)
    assert (prompt.text, prompt.images) == ("look\n\n[attachment: image · png]", [])


@pytest.mark.parametrize("mode", ["events", "latest"])
def test_H4_strands_converse_blocks_of_every_kind_are_read(mode: str) -> None:
    """Strands' tracer driven as its event loop drives it, with the Converse blocks the run
    above has none of, and its system prompt (a ``gen_ai.system.message`` event, or
    ``gen_ai.system_instructions`` on the details event of a model span): media (whose bytes
    the tracer writes as ``"<replaced>"``: named by a line), a prompt-cache marker (nothing),
    guarded and cited text, an interrupt's response, reasoning that is a signature alone, a
    tool result of ``json`` content and ``status: "error"`` with no tool span (the older
    events keep the status; the latest parts drop it, so the result's text is all there is)."""
    pytest.importorskip("strands")
    from strands.telemetry import tracer as strands_tracer

    png = base64.b64decode(PNG)
    prompt = {"role": "user", "content": [
        {"text": "TF-LOOK"},
        {"image": {"format": "png", "source": {"bytes": png}}},
        {"document": {"format": "pdf", "name": "report", "source": {"bytes": b"%PDF-1.7"}}},
        {"cachePoint": {"type": "default"}},
        {"guardContent": {"text": {"text": "TF-GUARDED"}}},
    ]}  # fmt: skip
    asked = {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"signature": "sig-9"}}},
        {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"q": "x"}}},
    ]}  # fmt: skip
    failed = {"role": "user", "content": [{"toolResult": {
        "toolUseId": "t1", "status": "error", "content": [{"text": "TF-NOT-FOUND"},
                                                          {"json": {"code": 404}}]}}]}  # fmt: skip
    resumed = {"role": "user", "content": [
        {"interruptResponse": {"interruptId": "i1", "response": "approved"}}]}  # fmt: skip
    answer = {"role": "assistant", "content": [
        {"citationsContent": {"content": [{"text": "TF-CITED"}], "citations": []}}]}  # fmt: skip
    usage = {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}
    with _strands_tracing(mode) as exporter:
        tracer = strands_tracer.get_tracer()
        for inputs, output, stop in (
            ([prompt], asked, "tool_use"),
            ([prompt, asked, failed, resumed], answer, "end_turn"),
        ):
            span = tracer.start_model_invoke_span(
                messages=inputs,  # type: ignore[arg-type]
                model_id="m1",
                custom_trace_attributes={"session.id": "tf-blocks"},
                system_prompt="TF-SYSTEM",
            )
            tracer.end_model_invoke_span(span, output, usage, {"latencyMs": 1}, stop)  # type: ignore[arg-type]
        text = _request_line(exporter)
    transcript = turnfold.load(text)
    assert outline(transcript) == [
        ("user", "TF-LOOK\n\n[attachment: image · png]\n\n[attachment: document · report · pdf]"
                 "\n\nTF-GUARDED"),
        ("thinking", ""),
        ("call", "lookup", {"q": "x"}, "error" if mode == "events" else "unknown",
         'TF-NOT-FOUND\n{\n  "code": 404\n}', None),
        ("user", "[interrupt response: approved]"),
        ("text", "TF-CITED"),
    ]  # fmt: skip
    thinking = transcript.entries[1]
    assert isinstance(thinking, Thinking)
    assert (thinking.form, thinking.data) == ("encrypted", "sig-9")
    assert transcript.metadata["system"] == "TF-SYSTEM"
    assert transcript.warnings == []


def test_H4_a_tool_response_whose_id_is_no_string_is_warned_of_not_a_crash() -> None:
    """A ``tool_call_response`` part's ``id`` of another type (here a list) is an unknown id,
    warned of, as the Chat reader warns of one; it was looked up as a key and raised."""
    inputs = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": [1],
                                          "response": "TF-ORPHAN"}]}]  # fmt: skip
    transcript = turnfold.load(_request(_chat_span("1" * 16, 1, inputs, [])))
    assert outline(transcript) == [("call", "", None, "unknown", "TF-ORPHAN", None)]
    assert [w.reason for w in transcript.warnings] == [
        "tool result for an unknown tool_call_id [1]"
    ]


# --- one call traced twice, a workflow's wrapper span, the session's own agent ----------------

OPENAI_AGENTS_FIXTURE = FIXTURES / "openinference-openai-agents_openai_weather-agent.jsonl"


def test_H4_an_openai_agents_run_traced_by_two_instrumentors_is_its_agent_s_session() -> None:
    """A real OpenAI Agents SDK run traced by OpenInference's Agents and OpenAI instrumentors at
    once: the SDK's trace is an ``AGENT`` span of its workflow's name and nothing else, around
    the agent's ``AGENT`` span, which is the session's run (its prompt the title), not a
    sub-agent of an empty session; each model call is an ``LLM`` span of the SDK's with the
    client's ``LLM`` span of the same call inside it, its tokens counted once (U-1), not
    twice in a recorded total."""
    from turnfold.session import session_facts

    transcript = turnfold.load(OPENAI_AGENTS_FIXTURE)
    assert outline(transcript) == [
        ("user", PROMPT),
        ("call", "get_weather", {"city": "Paris"}, "success", "sunny, 21C", None),
        ("call", "get_weather", {"city": "Atlantis"}, "error",
         "An error occurred while running the tool. Please try again.", None),
        ("text", "TF-ASKING: asking the expert."),
        ("call", "ask_expert", {"question": EXPERT}, "success",
         "TF-UMBRELLA: bring an umbrella.", None),
        ("text", "TF-DONE: sunny in Paris, take an umbrella."),
    ]  # fmt: skip
    assert transcript.metadata["agent"] == "weather-agent"
    assert "usage" not in transcript.metadata
    facts = session_facts(transcript)
    # The scripted server's three responses: 20, 50 and 70 input tokens, 7 output each.
    assert facts.tokens == {"input_tokens": 140, "output_tokens": 21}
    assert (facts.tool_calls, facts.failed_tools, facts.subagent_tokens) == (3, 1, {})
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H4_a_model_span_inside_a_model_span_is_the_same_call_its_usage_counted_once() -> None:
    """A framework's model span and its client instrumentor's span of the same call inside it
    (LangChain's and the provider's, the OpenAI Agents SDK's and OpenAI's) record the same
    messages and usage: the inner span's usage, which no entry carries (its messages were
    read), is not added to the total again."""
    from turnfold.session import session_facts

    usage = {"gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 4}
    asked = _said("user", "TF-ONCE")
    answered = _said("assistant", "TF-ANSWER")
    outer = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": asked,
             "gen_ai.output.messages": answered, **usage}  # fmt: skip
    transcript = turnfold.load(
        _request(
            _span("chat gpt-5", "1" * 16, outer, start=1),
            _span("chat gpt-5", "2" * 16, outer, parent="1" * 16, start=2),
        )
    )
    assert outline(transcript) == [("user", "TF-ONCE"), ("text", "TF-ANSWER")]
    assert "usage" not in transcript.metadata
    assert session_facts(transcript).tokens == {"input_tokens": 30, "output_tokens": 4}


def test_H4_the_session_s_agent_and_outcome_are_its_own_run_s_not_a_sub_agent_s() -> None:
    """An agent span among the session's model spans, run for the one call waiting for its
    result (an agent called over A2A, its spans in the same trace), is a sub-agent: its name
    is not the session's agent, and its failure is its call's, not the session's outcome."""
    call = {"type": "tool_call", "id": "c1", "name": "ask_remote", "arguments": {"q": "x"}}
    model = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": _said("user", "TF-GO"),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}]),
    }
    remote = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "remote",
              "gen_ai.input.messages": _said("user", "x")}  # fmt: skip
    failed = {"status": {"code": "STATUS_CODE_ERROR", "message": "TF-REMOTE-DOWN"}}
    transcript = turnfold.load(
        _request(
            _span("chat gpt-5", "1" * 16, model, start=1),
            _span("invoke_agent remote", "2" * 16, remote, start=2, **failed),
        )
    )
    (asked,) = transcript.tool_calls()
    assert asked.subagent is not None
    assert asked.subagent.name == "remote"
    assert asked.status == "error"
    assert "agent" not in transcript.metadata
    assert "outcome" not in transcript.metadata


def test_H4_an_agent_a_tool_span_ran_is_a_sub_agent_when_the_session_s_agent_span_is_missing() -> (
    None
):
    """A run still going when its spans were exported (a trace file followed live) has no agent
    span yet (it ends last): its model and tool spans are roots, and the agent the
    ``ask_expert`` tool span ran is that call's sub-agent, not the session's own run (its
    prompt and reply in the session's conversation, its name the session's agent)."""
    first = fixture_path("genai").read_text().splitlines()[0]
    request = json.loads(first)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [
                s for s in scope["spans"] if s["name"] != "invoke_agent weather-agent"
            ]
    transcript = turnfold.load(json.dumps(request) + "\n")
    assert outline(transcript) == EXPECTED[:6]  # the first turn, the expert nested
    assert "agent" not in transcript.metadata


# --- a model call that failed, its exception passed up through the agent span --------------

OVERLOADED = "TF-OVERLOADED: the model is overloaded"

#: What each instrumentor makes of the failed call: the model span's error, and the model
#: named by the request (the response, which names it otherwise, never came).
MODEL_ERRORS = {
    "genai": f"Error code: 500 - {OVERLOADED}",  # opentelemetry-instrumentation-openai-v2
    "openinference": f"InternalServerError: Error code: 500 - {OVERLOADED}",
}


def model_error_fixture(style: str) -> Path:
    return FIXTURES / f"{style}_openai_model-error.jsonl"


class _Overloaded(BaseHTTPRequestHandler):
    """A Chat Completions server whose every answer is HTTP 500."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        error = {"message": OVERLOADED, "type": "server_error", "code": "overloaded"}
        data = json.dumps({"error": error}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def write_model_error_trace(style: str, path: Path) -> Path:
    """An agent run whose one model call fails (HTTP 500), the real ``openai`` client traced
    by the style's instrumentor: ``opentelemetry-instrumentation-openai-v2`` (GenAI latest
    semconv) sets the model span's status to ``str(error)``, OpenInference's to
    ``<type name>: <message>`` with an ``exception`` event and no ``llm.model_name`` (only
    ``llm.invocation_parameters``); the exception leaves the agent span, which the SDK's
    ``start_as_current_span`` ends with an ``exception`` event and the status
    ``InternalServerError: <message>``."""
    import openai

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Overloaded)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with _instrumented(style) as (tracer, exporter):
            client = openai.OpenAI(
                base_url=f"http://127.0.0.1:{server.server_port}/v1",
                api_key="sk-fake",
                max_retries=0,
            )
            attributes = _agent_attributes(style, "weather-agent", PROMPT)
            name = "invoke_agent weather-agent" if style == "genai" else "weather-agent"
            agent = tracer.start_as_current_span(name, attributes=attributes)
            asked = [{"role": "user", "content": PROMPT}]
            with pytest.raises(openai.InternalServerError), agent:
                client.chat.completions.create(model="gpt-4o-mini", messages=asked, tools=_TOOLS)
            path.write_text(_request_line(exporter))
    finally:
        server.shutdown()
    return path


@pytest.mark.parametrize("style", STYLES)
def test_H4_a_model_call_s_error_passed_up_through_the_agent_span_is_shown_once(
    style: str, tmp_path: Path
) -> None:
    """The agent run failed because its model call did: one error, the model span's, though
    the agent span words the same exception its own way (its type before its message); the
    session's outcome is the error, its model the one the call asked for. Checked on the
    committed trace and on one the installed instrumentor writes now
    (``TURNFOLD_UPDATE_FIXTURES=1`` rewrites the committed one)."""
    fixture = model_error_fixture(style)
    target = fixture if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else None
    written = write_model_error_trace(style, target or tmp_path / fixture.name)
    for path in (fixture, written):
        transcript = turnfold.load(path)
        assert outline(transcript) == [("user", PROMPT), ("error", MODEL_ERRORS[style])]
        assert transcript.metadata["outcome"] == "error"
        assert transcript.metadata["agent"] == "weather-agent"
        assert transcript.metadata["model"] == "gpt-4o-mini"
        assert transcript.warnings == []
        (row,) = turnfold.scan(path).to_pandas().to_dict("records")
        assert (row["turns"], row["errors"], row["tool_calls"]) == (1, 1, 0)


def test_H4_an_agent_s_own_error_after_its_model_call_s_other_error_is_shown() -> None:
    """An agent span that failed for a reason of its own after a model call failed (the
    agent recovered, then raised something else) is a second error, not a repeat."""
    model = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": _said("user", "TF-GO")}
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}
    failed = {"status": {"code": "STATUS_CODE_ERROR", "message": "TF-MODEL-DOWN"}}
    own = {"status": {"code": "STATUS_CODE_ERROR", "message": "ValueError: TF-BAD-STATE"},
           "events": [{"name": "exception", "attributes": [
               {"key": "exception.type", "value": _value("ValueError")},
               {"key": "exception.message", "value": _value("TF-BAD-STATE")}]}]}  # fmt: skip
    transcript = turnfold.load(
        _request(
            _span("invoke_agent a", "1" * 16, agent, start=0, **own),
            _span("chat m", "2" * 16, model, parent="1" * 16, start=1, **failed),
        )
    )
    assert outline(transcript) == [
        ("user", "TF-GO"),
        ("error", "TF-MODEL-DOWN"),
        ("error", "ValueError: TF-BAD-STATE"),
    ]


# --- the GenAI conventions' workflow, as opentelemetry-util-genai writes it ----------------

WORKFLOW_FIXTURE = FIXTURES / "genai_util-genai_workflow_failed.jsonl"
FLOW = "TF-FLOW: find order A-1 then write the reply"


def write_workflow_trace(path: Path) -> Path:
    """A workflow of two agents, traced by ``opentelemetry-util-genai``'s own handler (the
    GenAI latest semconv, content on spans): ``invoke_workflow support-flow`` around
    ``invoke_agent triage`` (a model call asking for ``lookup``, which raises, then its reply)
    and ``invoke_agent writer``; the workflow then raises after its output was set."""
    from opentelemetry.util.genai.handler import get_telemetry_handler
    from opentelemetry.util.genai.types import (
        InputMessage,
        OutputMessage,
        Text,
        ToolCallRequest,
        ToolCallResponse,
    )

    saved = {k: os.environ.get(k) for k in _GENAI_ENV}
    os.environ.update(_GENAI_ENV)
    try:
        provider, exporter = _memory_provider()
        handler = get_telemetry_handler(tracer_provider=provider)
        user = InputMessage(role="user", parts=[Text(content=FLOW)])
        asked = ToolCallRequest(arguments={"id": "A-1"}, name="lookup", id="call_1")

        def said(text: str) -> list[OutputMessage]:
            return [OutputMessage("assistant", [Text(content=text)], finish_reason="stop")]

        def lookup() -> None:
            with handler.tool("lookup", tool_call_id="call_1") as tool:
                tool.arguments = {"id": "A-1"}
                raise LookupError("TF-NO-ORDER A-1")

        def triage() -> None:
            with handler.invoke_local_agent(agent_name="triage", request_model="gpt-5") as agent:
                agent.input_messages = [user]
                with handler.inference("openai", request_model="gpt-5") as call:
                    call.input_messages = [user]
                    call.output_messages = [
                        OutputMessage("assistant", [asked], finish_reason="tool_calls")
                    ]
                    call.input_tokens, call.output_tokens, call.response_id = 11, 3, "resp_1"
                with pytest.raises(LookupError):
                    lookup()
                answered = ToolCallResponse(response="TF-NO-ORDER A-1", id="call_1")
                with handler.inference("openai", request_model="gpt-5") as call:
                    call.input_messages = [
                        user,
                        InputMessage(role="assistant", parts=[asked]),
                        InputMessage(role="tool", parts=[answered]),
                    ]
                    call.output_messages = said("TF-TRIAGED: no such order")
                    call.input_tokens, call.output_tokens, call.response_id = 22, 4, "resp_2"
                agent.output_messages = said("TF-TRIAGED: no such order")

        def write() -> None:
            with handler.invoke_local_agent(agent_name="writer", request_model="gpt-5") as agent:
                brief = InputMessage(role="user", parts=[Text(content="TF-WRITE: no such order")])
                agent.input_messages = [brief]
                with handler.inference("openai", request_model="gpt-5") as call:
                    call.input_messages = [brief]
                    call.output_messages = said("TF-REPLY: we found no order A-1.")
                    call.input_tokens, call.output_tokens, call.response_id = 5, 6, "resp_3"
                agent.output_messages = said("TF-REPLY: we found no order A-1.")

        def flow() -> None:
            with handler.workflow("support-flow") as run:
                run.input_messages = [user]
                triage()
                write()
                run.output_messages = said("TF-REPLY: we found no order A-1.")
                raise RuntimeError("TF-FLOW-BROKE")

        with pytest.raises(RuntimeError):
            flow()
        path.write_text(_request_line(exporter))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return path


def test_H4_a_genai_workflow_is_the_session_s_run_its_agents_sub_agents(tmp_path: Path) -> None:
    """The GenAI conventions' ``invoke_workflow`` span (what opentelemetry-util-genai and
    Google ADK write around a run) is the session's run, as an OpenLLMetry ``@workflow`` is:
    its name the session's agent, the agents it invokes sub-agents (the writer's brief is not
    a prompt of the user's), and its failure the session's error and outcome, not dropped
    with the span. Checked on the committed trace and on one written now
    (``TURNFOLD_UPDATE_FIXTURES=1`` rewrites the committed one)."""
    pytest.importorskip("opentelemetry.util.genai.handler")
    target = WORKFLOW_FIXTURE if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else None
    written = write_workflow_trace(target or tmp_path / WORKFLOW_FIXTURE.name)
    reply = "TF-REPLY: we found no order A-1."
    for path in (WORKFLOW_FIXTURE, written):
        transcript = turnfold.load(path)
        assert outline(transcript) == [
            ("user", FLOW),
            ("call", "invoke_agent", {"agent": "triage", "prompt": FLOW}, "success",
             "TF-TRIAGED: no such order", [
                ("user", FLOW),
                ("call", "lookup", {"id": "A-1"}, "error", "TF-NO-ORDER A-1", None),
                ("text", "TF-TRIAGED: no such order"),
            ]),
            ("call", "invoke_agent", {"agent": "writer", "prompt": "TF-WRITE: no such order"},
             "success", reply, [("user", "TF-WRITE: no such order"), ("text", reply)]),
            ("text", reply),
            ("error", "TF-FLOW-BROKE"),
        ]  # fmt: skip
        assert transcript.metadata["agent"] == "support-flow"
        assert transcript.metadata["outcome"] == "error"
        assert transcript.accounting is not None
        assert transcript.accounting.counts["span/invoke_agent"] == {"mapped": 3}
        assert "span/(other)" not in transcript.accounting.counts
