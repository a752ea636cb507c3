"""Agent frameworks' own OpenTelemetry tracing, and spans as the SDK's console exporter prints
them (spec H-4): pydantic-ai's instrumentation, Google ADK's tracer, ``ConsoleSpanExporter``.

The fixtures are written by the writers below with the installed frameworks on scripted runs
(no model is called): :func:`write_pydantic_ai_trace` (pydantic-ai's ``Instrumentation``
capability, in its attribute layout version 2 and its default), :func:`write_adk_trace`
(ADK's tracer, content capture off as it is by default: a trace of names, ids and counts) and
:func:`write_console_trace` (the pydantic-ai run printed by the SDK's ``ConsoleSpanExporter``,
one span a line). ``test_H4_the_installed_tracers_write_what_the_loader_reads`` writes them
again; ``TURNFOLD_UPDATE_FIXTURES=1`` rewrites the committed files.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_otlp import (
    FIXTURES,
    _chat_span,
    _memory_provider,
    _request,
    _request_line,
    _span,
    outline,
)
from turnfold.model import ToolCall, Transcript, UserMessage
from turnfold.session import session_facts
from turnfold.usage import transcript_tokens

PROMPT = "TF-CALC: add 1 and 2 and 3 and 4, then explode, then ask the helper."
#: A 1×1 PNG, the prompt's image.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)
CHART = "https://example.com/chart.png"
PYDANTIC_AI_VERSIONS = ("2", "5")


def pydantic_ai_fixture(version: str) -> Path:
    return FIXTURES / f"pydantic-ai_calc-agent_instrumentation-v{version}.jsonl"


ADK_FIXTURE = FIXTURES / "google-adk_calc-agent_no-content.jsonl"
CONSOLE_FIXTURE = FIXTURES / "console-span-exporter_pydantic-ai_calc-agent.jsonl"


# --- pydantic-ai ---------------------------------------------------------------------------


def _pydantic_ai_run(provider: Any, version: int) -> None:
    """The scripted run: reasoning and two parallel calls, a call that fails (``ToolFailed``),
    a call of a tool that runs the agent ``helper``, the answer; a prompt with an image given
    as bytes and one given as a URL."""
    from pydantic_ai import Agent, BinaryContent, ImageUrl, InstrumentationSettings
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage

    settings = InstrumentationSettings(tracer_provider=provider, version=version)
    traced = [Instrumentation(settings=settings)]
    helper = Agent(
        FunctionModel(
            lambda messages, info: ModelResponse(
                parts=[TextPart("TF-42: helper says 42")],
                usage=RequestUsage(input_tokens=7, output_tokens=3),
                model_name="helper-model",
            ),
            model_name="helper-model",
        ),
        name="helper",
        capabilities=traced,
    )
    replies = [
        [ThinkingPart("need two sums"), ToolCallPart("add", {"a": 1, "b": 2}, "call_1"),
         ToolCallPart("add", {"a": 3, "b": 4}, "call_2")],
        [TextPart("TF-NOW: now explode"), ToolCallPart("explode", {"x": "y"}, "call_3")],
        [ToolCallPart("ask_helper", {"q": "meaning"}, "call_4")],
        [TextPart("TF-DONE: 3 and 7; explode failed; the helper says 42.")],
    ]  # fmt: skip

    def script(messages: Any, info: Any) -> ModelResponse:
        turn = 5 - len(replies)
        usage = RequestUsage(input_tokens=10 * turn, output_tokens=turn)
        return ModelResponse(parts=replies.pop(0), usage=usage, model_name="scripted")

    agent = Agent(
        FunctionModel(script, model_name="scripted"),
        name="calc",
        instructions="You are terse.",
        capabilities=traced,
    )

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @agent.tool_plain
    def explode(x: str) -> str:
        """Always fails."""
        raise ToolFailed(f"boom: {x}")

    @agent.tool_plain
    async def ask_helper(q: str) -> str:
        """Ask the helper agent."""
        return (await helper.run(q)).output

    prompt = [PROMPT, BinaryContent(PIXEL, media_type="image/png"), ImageUrl(CHART)]
    asyncio.run(agent.run(prompt))


def write_pydantic_ai_trace(version: str, path: Path) -> Path:
    provider, exporter = _memory_provider()
    _pydantic_ai_run(provider, int(version))
    path.write_text(_request_line(exporter), encoding="utf-8")
    return path


def expected_pydantic_ai(version: str) -> list[Any]:
    """The run's outline: the prompt's image URL a line naming it (with its media type from
    version 4 on), its bytes an image of the prompt."""
    chart = CHART if version < "4" else f"{CHART} · image/png"
    return [("user", f"{PROMPT}\n\n[attachment: {chart}]"), *_EXPECTED_PYDANTIC_AI]


_EXPECTED_PYDANTIC_AI = [
    ("thinking", "need two sums"),
    ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
    ("call", "add", {"a": 3, "b": 4}, "success", "7", None),
    ("text", "TF-NOW: now explode"),
    ("call", "explode", {"x": "y"}, "error", "boom: y", None),
    ("call", "ask_helper", {"q": "meaning"}, "success", "TF-42: helper says 42",
     [("user", "meaning"), ("text", "TF-42: helper says 42")]),
    ("text", "TF-DONE: 3 and 7; explode failed; the helper says 42."),
]  # fmt: skip


@pytest.mark.parametrize("version", PYDANTIC_AI_VERSIONS)
def test_H4_pydantic_ai_instrumentation_reads_as_the_run_it_traced(version: str) -> None:
    """Its ``thinking`` part is reasoning; before its version 3 it names a tool span's arguments
    and result ``tool_arguments`` / ``tool_response``, and before its version 4 a blob
    ``binary`` and a URL ``image-url``: read as the parts of the schemas they stand for."""
    transcript = turnfold.load(pydantic_ai_fixture(version))
    assert outline(transcript) == expected_pydantic_ai(version)
    assert transcript.warnings == []
    prompt = transcript.entries[0]
    assert isinstance(prompt, UserMessage)
    assert [image.media_type for image in prompt.images] == ["image/png"]
    calls = transcript.tool_calls()
    assert all(c.ended_at for c in calls)
    assert len({c.batch_id for c in calls[:2]}) == 1
    tokens = transcript_tokens(transcript)
    assert tokens.own == {"input_tokens": 100, "output_tokens": 10}
    assert tokens.subagents == {"input_tokens": 7, "output_tokens": 3}
    assert transcript.metadata["agent"] == "calc"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H4_a_tool_message_after_a_tool_span_without_its_result_keeps_the_span_s_status() -> None:
    """A tool span that recorded no result (an instrumentation naming it otherwise, content
    off on tool spans) settles the call: the next model span's tool message gives the result,
    and the span's status and end stand (a message knows neither)."""
    asked = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    call = {"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}
    answered = [*asked, {"role": "assistant", "parts": [call]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                            "response": "done"}]}]  # fmt: skip
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.name": "f"}  # fmt: skip
    transcript = turnfold.load(
        _request(
            _chat_span("1" * 16, 1, asked, [{"role": "assistant", "parts": [call]}]),
            _span("execute_tool f", "2" * 16, tool, start=2),
            _chat_span("3" * 16, 3, answered, []),
        )
    )
    (settled,) = transcript.tool_calls()
    assert (settled.status, settled.result and settled.result.text) == ("success", "done")
    assert settled.ended_at == "2026-01-01T00:00:00.002500Z"


# --- Google ADK ----------------------------------------------------------------------------


@functools.cache
def _global_spans() -> Any:
    """An exporter of the global tracer provider, which ADK's tracer (one made at import by
    ``trace.get_tracer``) sends to: one for the test process."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


def _adk_run() -> None:
    """The scripted run: two parallel ``add`` calls, ``explode`` raising (answered by
    ``on_tool_error_callback``, without which the run dies), the agent ``helper`` as a tool
    (``AgentTool``), the answer; every response with usage of its own."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.agent_tool import AgentTool
    from google.genai import types

    class Scripted(BaseLlm):  # type: ignore[misc]
        replies: list[Any] = []  # noqa: RUF012 (a pydantic field, copied per instance)

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            turn = len(self.replies)
            yield LlmResponse(
                content=types.Content(role="model", parts=self.replies.pop(0)),
                model_version=self.model,
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=10 + turn, candidates_token_count=turn,
                    total_token_count=10 + 2 * turn,
                ),
            )  # fmt: skip

    def call(name: str, args: dict[str, Any], call_id: str) -> Any:
        return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def explode(x: str) -> str:
        """Always fails."""
        raise ValueError(f"boom: {x}")

    helper = LlmAgent(
        name="helper",
        description="answers",
        model=Scripted(model="helper-1", replies=[[types.Part(text="TF-42")]]),
        instruction="Help.",
    )
    model = Scripted(
        model="scripted-1",
        replies=[
            [types.Part(text="need two sums", thought=True), call("add", {"a": 1, "b": 2}, "c1"),
             call("add", {"a": 3, "b": 4}, "c2")],
            [call("explode", {"x": "y"}, "c3")],
            [call("helper", {"request": "meaning"}, "c4")],
            [types.Part(text="TF-DONE")],
        ],
    )  # fmt: skip
    agent = LlmAgent(
        name="calc",
        model=model,
        instruction="You are terse.",
        tools=[add, explode, AgentTool(helper)],
        on_tool_error_callback=lambda tool, args, tool_context, error: {"error": str(error)},
    )

    async def run() -> None:
        runner = InMemoryRunner(agent=agent, app_name="demo")
        session = await runner.session_service.create_session(app_name="demo", user_id="u")
        prompt = types.Content(role="user", parts=[types.Part(text=PROMPT)])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=prompt):
            pass

    asyncio.run(run())


def write_adk_trace(variant: str, path: Path) -> Path:
    exporter = _global_spans()
    exporter.clear()
    saved = {
        k: os.environ.pop(k, None)
        for k in (
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            "OTEL_SEMCONV_STABILITY_OPT_IN",
        )
    }
    try:
        _adk_run()
    finally:
        os.environ.update({k: v for k, v in saved.items() if v is not None})
    path.write_text(_request_line(exporter), encoding="utf-8")
    exporter.clear()
    return path


def test_H4_a_trace_without_content_shows_its_calls_and_counts_every_response() -> None:
    """ADK records no message content by default (nor do the OpenAI instrumentor and the
    Microsoft Agent Framework): each model span's usage goes on the first of the calls the
    tool spans after it make, those calls one batch, and where a response's usage has no
    entry to carry it (the answer, not recorded) the model spans' sum is the transcript's
    recorded total. ADK's span for the merged responses of parallel calls is no call; the
    load says that the trace holds no content."""
    transcript = turnfold.load(ADK_FIXTURE)
    assert outline(transcript) == [
        ("call", "add", None, "success", None, None),
        ("call", "add", None, "success", None, None),
        ("call", "explode", None, "error", "TOOL_ERROR", None),
        ("call", "helper", None, "success", None, []),
    ]
    add_1, add_2, explode, helper = transcript.tool_calls()
    assert add_1.batch_id == add_2.batch_id != explode.batch_id
    assert [c.usage and c.usage.input_tokens for c in (add_1, add_2, explode, helper)] == [
        14,
        None,
        13,
        12,
    ]
    assert transcript.metadata["usage"] == {"input_tokens": 50, "output_tokens": 10}
    assert transcript_tokens(transcript).own == {"input_tokens": 50, "output_tokens": 10}
    assert helper.subagent is not None
    assert helper.subagent.transcript.metadata["usage"] == {"input_tokens": 11, "output_tokens": 1}
    assert [w.reason.split(" (")[0] for w in transcript.warnings] == [
        "the trace records no message content"
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["span/execute_tool (merged)"] == {"ignored": 1}
    assert transcript.accounting.unaccounted == []


# --- ConsoleSpanExporter -------------------------------------------------------------------


def _console_lines(indent: int | None) -> str:
    """The pydantic-ai run as the SDK's ``ConsoleSpanExporter`` prints it (``indent=None``:
    one span a line, the usual formatter when the output is kept as a file)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    out = io.StringIO()
    provider = TracerProvider()
    formatter = (lambda span: span.to_json(indent=indent) + "\n") if indent is None else None
    exporter = ConsoleSpanExporter(out=out, **({"formatter": formatter} if formatter else {}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _pydantic_ai_run(provider, 5)
    return out.getvalue()


def write_console_trace(variant: str, path: Path) -> Path:
    path.write_text(_console_lines(None), encoding="utf-8")
    return path


def test_H4_spans_the_console_exporter_printed_read_as_their_otlp_export(tmp_path: Path) -> None:
    """``ReadableSpan.to_json()``'s form (``context`` ids with ``0x``, ISO times, plain
    attributes, ``status_code``): one span a line, or the spans as one JSON list."""
    transcript = turnfold.load(CONSOLE_FIXTURE)
    assert outline(transcript) == expected_pydantic_ai("5")
    assert transcript.warnings == []
    assert transcript_tokens(transcript).own == {"input_tokens": 100, "output_tokens": 10}
    assert all(c.ended_at and c.started_at for c in transcript.tool_calls())
    spans = [json.loads(line) for line in CONSOLE_FIXTURE.read_text().splitlines()]
    listed = tmp_path / "spans.json"
    listed.write_text(json.dumps(spans, indent=2), encoding="utf-8")
    assert outline(turnfold.load(listed)) == expected_pydantic_ai("5")


def test_H4_the_console_exporter_s_default_output_reads_as_its_spans_one_a_line(
    tmp_path: Path,
) -> None:
    """The SDK's ``ConsoleSpanExporter`` prints each span's ``to_json()`` indented, one after
    another (no list, no one-line form): that text, written by the real exporter, reads as the
    spans one a line do; a last span cut off is said, the spans before it read."""
    printed = _console_lines(4)
    assert printed.startswith("{\n")
    assert printed.count('"context"') > 2
    path = tmp_path / "console.txt"
    path.write_text(printed, encoding="utf-8")
    transcript = turnfold.load(path)
    assert outline(transcript) == expected_pydantic_ai("5")
    assert transcript.warnings == []
    cut = tmp_path / "cut.txt"
    cut.write_text(printed[: printed.rindex('"attributes"')], encoding="utf-8")
    truncated = turnfold.load(cut)
    assert any("invalid JSON after" in w.reason for w in truncated.warnings)
    assert len(truncated.tool_calls()) == len(transcript.tool_calls())


def test_H4_a_span_printed_again_is_read_once() -> None:
    """A span processor that prints each span as it starts and as it ends (the Microsoft Agent
    Framework sample that printed a trace this way) or two exporters on one stream: the copy
    that ended is read, the other accounted for as a repeat."""
    spans = [json.loads(line) for line in CONSOLE_FIXTURE.read_text().splitlines()]
    started = [{**span, "end_time": None} for span in spans]
    transcript = turnfold.load("\n".join(json.dumps(s) for s in started + spans) + "\n")
    assert outline(transcript) == expected_pydantic_ai("5")
    assert all(c.ended_at for c in transcript.tool_calls())
    assert transcript.accounting is not None
    assert transcript.accounting.counts["span/(repeated)"] == {"ignored": len(spans)}
    assert transcript.accounting.unaccounted == []


def test_H4_a_console_span_of_no_ids_is_warned_of_not_a_crash() -> None:
    broken = {"name": "chat m", "context": {"span_id": 7}, "parent_id": None, "attributes": "x"}
    transcript = turnfold.load(json.dumps(broken) + "\n" + json.dumps(broken) + "\n")
    assert [w.reason for w in transcript.warnings][:2] == [
        "span without a traceId or spanId skipped"
    ] * 2
    assert isinstance(transcript, Transcript)


# --- the writers, again --------------------------------------------------------------------


_WRITERS = {
    **{pydantic_ai_fixture(v).name: (write_pydantic_ai_trace, v, "pydantic_ai")
       for v in PYDANTIC_AI_VERSIONS},
    ADK_FIXTURE.name: (write_adk_trace, "", "google.adk"),
    CONSOLE_FIXTURE.name: (write_console_trace, "", "pydantic_ai"),
}  # fmt: skip


@pytest.mark.parametrize("name", _WRITERS)
def test_H4_the_installed_tracers_write_what_the_loader_reads(name: str, tmp_path: Path) -> None:
    """Compatibility with the installed pydantic-ai and google-adk: a trace written now reads
    as the committed fixture does (``TURNFOLD_UPDATE_FIXTURES=1`` rewrites those)."""
    write, variant, package = _WRITERS[name]
    pytest.importorskip(package)
    target = FIXTURES / name if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else tmp_path / name
    written = turnfold.load(write(variant, target))
    committed = turnfold.load(FIXTURES / name)
    assert outline(written) == outline(committed)
    assert [w.reason for w in written.warnings] == [w.reason for w in committed.warnings]
    assert written.accounting is not None
    assert written.accounting.unaccounted == []
    assert all(isinstance(c, ToolCall) for c in written.tool_calls())


# --- a Jaeger export of OpenLLMetry's LangChain spans --------------------------------------

JAEGER_FIXTURE = FIXTURES / "jaeger_openllmetry-langchain_a2a-supervisor_trimmed.json"


def test_H4_a_jaeger_export_reads_as_its_spans_and_a_remote_agent_nests_in_its_call() -> None:
    """A real trace as Jaeger's UI downloads it (``tags``, ``CHILD_OF`` references, times in
    microseconds): a supervisor whose model asks for ``query_detector``, a call its code makes
    over A2A, the detector's LangGraph run traced in the same trace with no tool span between.
    The run nests in the one call waiting for its result; the graph's ``invoke_agent`` span
    and its workflow's (one name) are one run; OpenLLMetry's tool result, a serialized
    ``ToolMessage``, is its content, its ``tool_call_id`` the call it settles."""
    transcript = turnfold.load(JAEGER_FIXTURE)
    rows = outline(transcript)
    assert [row[:2] for row in rows] == [
        ("user", "Hola! Dime porfavor cuál es mi inventario de red"),
        ("call", "query_detector"),
        ("text", rows[2][1]),
    ]
    (detector,) = transcript.tool_calls()[:1]
    assert detector.status == "success"
    assert detector.subagent is not None
    assert detector.subagent.name == "LangGraph"
    inner = outline(detector.subagent.transcript)
    assert [row[0] for row in inner] == ["user", "call", "text"]
    assert inner[1][1:4] == ("pyats_list_devices", {}, "success")
    assert inner[1][4].startswith('{\n  "status": "completed"')
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H4_openllmetry_s_unknown_model_is_no_model_its_langchain_metadata_names_it() -> None:
    """OpenLLMetry's LangChain instrumentation writes ``gen_ai.request.model`` and
    ``gen_ai.response.model`` as ``"unknown"`` when LangChain's response names no model
    (``_extract_model_name_from_association_metadata``), the model LangChain's metadata names
    beside it (``traceloop.association.properties.ls_model_name``): that is the model, and
    its price gives the session a cost; a span naming no model but ``"unknown"`` has none."""
    transcript = turnfold.load(JAEGER_FIXTURE)
    model = "anthropic/claude-opus-4-5-20251101"
    assert transcript.metadata["model"] == model
    facts = session_facts(transcript)
    assert facts.models == [model]
    assert facts.cost is not None
    assert facts.cost.usd > 0
    unknown = {"gen_ai.request.model": "unknown", "gen_ai.response.model": "unknown"}
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "TF-HI"}]}]
    asked = [{"role": "user", "parts": [{"type": "text", "content": "TF-GO"}]}]
    span = _chat_span("1" * 16, 1, asked, said)
    span["attributes"] += [{"key": k, "value": {"stringValue": v}} for k, v in unknown.items()]
    alone = turnfold.load(_request(span))
    assert "model" not in alone.metadata
    assert [getattr(e, "model", None) for e in alone.entries] == [None, None]


def test_H4_a_langchain_tool_message_of_status_error_is_a_failed_call() -> None:
    message = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages",
               "ToolMessage"], "kwargs": {"content": "no such device", "tool_call_id": "c1",
                                          "status": "error"}}  # fmt: skip
    call = {"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1}}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "f",
        "gen_ai.tool.call.arguments": json.dumps({"input_str": "{'x': 1}", "inputs": {"x": 1}}),
        "gen_ai.tool.call.result": json.dumps({"output": message, "kwargs": {}}),
    }
    asked = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    transcript = turnfold.load(
        _request(
            _chat_span("1" * 16, 1, asked, [{"role": "assistant", "parts": [call]}]),
            _span("execute_tool f", "2" * 16, tool, start=2),
            _span(
                "execute_tool f",
                "3" * 16,
                {
                    **tool,
                    "gen_ai.tool.call.result": json.dumps(
                        {"output": {**message, "kwargs": {"content": "ok", "tool_call_id": "c2"}}}
                    ),
                },
                start=3,
            ),
        )
    )
    asked_call, own = transcript.tool_calls()
    assert (asked_call.call_id, asked_call.status) == ("c1", "error")
    assert asked_call.result is not None
    assert asked_call.result.text == "no such device"
    assert (own.call_id, own.args, own.status) == ("c2", {"x": 1}, "success")


def test_H4_an_agent_run_first_thing_in_another_s_is_its_sub_agent() -> None:
    """An agent span whose first span is another agent's (a delegation before any model
    call): that run is a sub-agent, not lost."""
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "TF-INNER"}]}]
    outer = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "outer"}
    inner = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "inner"}
    transcript = turnfold.load(
        _request(
            _span("invoke_agent outer", "1" * 16, outer, start=1),
            _span("invoke_agent inner", "2" * 16, inner, parent="1" * 16, start=2),
            {**_chat_span("3" * 16, 3, [], said), "parentSpanId": "2" * 16},
        )
    )
    assert outline(transcript) == [
        ("call", "invoke_agent", {"agent": "inner"}, "success", "TF-INNER", [("text", "TF-INNER")])
    ]


# --- operations named otherwise ------------------------------------------------------------


def test_H4_openllmetry_s_older_spans_are_model_calls_by_their_request_type() -> None:
    """OpenLLMetry before ``gen_ai.operation.name`` (traceloop's ``openai.chat`` spans) says
    what a span is only in ``llm.request.type``; its messages are ``gen_ai.prompt.N`` /
    ``gen_ai.completion.N`` with flattened tool calls (the shape of its 0.48 spans)."""
    attributes = {
        "gen_ai.system": "OpenAI", "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "You are a support agent.",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "Where is order A-1187?",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_9",
        "gen_ai.completion.0.tool_calls.0.name": "lookup_order",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"order_id": "A-1187"}',
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.usage.prompt_tokens": 412, "gen_ai.usage.completion_tokens": 27,
        "gen_ai.usage.cache_creation_input_tokens": 1024,
    }  # fmt: skip
    transcript = turnfold.load(_request(_span("openai.chat", "1" * 16, attributes)))
    assert outline(transcript) == [
        ("user", "Where is order A-1187?"),
        ("call", "lookup_order", {"order_id": "A-1187"}, "unknown", None, None),
    ]
    assert transcript.metadata["system"] == "You are a support agent."
    (call,) = transcript.tool_calls()
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.cache_write_tokens) == (412, 1024)
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"span/chat": {"mapped": 1}}


def test_H4_litellm_s_call_type_operation_is_a_model_call() -> None:
    """LiteLLM's OTel callback writes its call type (``acompletion``) as the operation."""
    said = [{"role": "user", "parts": [{"type": "text", "content": "Where?"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "There."}]}]
    attributes = {
        "gen_ai.operation.name": "acompletion",
        "gen_ai.input.messages": json.dumps(said),
        "gen_ai.output.messages": json.dumps(answer),
        "gen_ai.usage.input_tokens": 1204,
        "gen_ai.usage.output_tokens": 88,
    }
    transcript = turnfold.load(_request(_span("litellm_request", "1" * 16, attributes)))
    assert outline(transcript) == [("user", "Where?"), ("text", "There.")]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"span/chat": {"mapped": 1}}


def test_H4_an_agent_span_beside_its_model_spans_is_the_session_s_own_run() -> None:
    """The Microsoft Agent Framework starts an agent's model and tool spans beside its
    ``invoke_agent`` span, under the workflow executor's span: with no call waiting for a
    result when it starts, the agent span is the session's own run, not a sub-agent."""
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "TF-HI"}]}]
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Weather agent"}
    executor = _span("executor.process Weather agent", "1" * 16, {}, start=1)
    transcript = turnfold.load(
        _request(
            executor,
            _span("invoke_agent Weather agent", "2" * 16, agent, parent="1" * 16, start=2),
            {**_chat_span("3" * 16, 3, [], said), "parentSpanId": "1" * 16},
        )
    )
    assert outline(transcript) == [("text", "TF-HI")]
    assert transcript.metadata["agent"] == "Weather agent"


# --- the Vercel AI SDK ---------------------------------------------------------------------


def test_H4_vercel_ai_sdk_spans_read_as_provider_calls_and_tool_runs() -> None:
    """The AI SDK's own spans (``ai.operationId``; hand-made in the shape its 5.0 telemetry
    writes, vercel/ai ``packages/ai/src/generate-text``): each ``ai.generateText.doGenerate``
    a model call (``ai.prompt.messages``, ``ai.response.text`` / ``ai.response.toolCalls``),
    each ``ai.toolCall`` the run of its call (``ai.toolCall.id`` / ``args`` / ``result``, an
    error status a failure), the outer ``ai.generateText`` span left out (it repeats them)."""
    system = {"role": "system", "content": "You are a support agent."}
    user = {"role": "user", "content": [{"type": "text", "text": "Where is order A-1187?"}]}
    asked = {"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "c1", "toolName": "lookup_order",
         "input": {"order_id": "A-1187"}},
        {"type": "tool-call", "toolCallId": "c2", "toolName": "refund", "input": {}},
    ]}  # fmt: skip
    results = {"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "c1", "toolName": "lookup_order",
         "output": {"type": "json", "value": {"status": "in_transit"}}},
        {"type": "tool-result", "toolCallId": "c2", "toolName": "refund",
         "output": {"type": "error-text", "value": "not allowed"}},
    ]}  # fmt: skip
    calls = [{"toolCallId": "c1", "toolName": "lookup_order", "input": {"order_id": "A-1187"}},
             {"toolCallId": "c2", "toolName": "refund", "input": {}}]  # fmt: skip
    outer = {"ai.operationId": "ai.generateText", "ai.prompt": '{"prompt":"Where?"}',
             "ai.response.text": "It is in transit."}  # fmt: skip
    first = {"ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini",
             "ai.prompt.messages": json.dumps([system, user]), "ai.response.text": "",
             "ai.response.toolCalls": json.dumps(calls), "gen_ai.usage.input_tokens": 412,
             "gen_ai.usage.output_tokens": 27}  # fmt: skip
    second = {"ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini",
              "ai.prompt.messages": json.dumps([system, user, asked, results]),
              "ai.response.text": "It is in transit.", "ai.usage.promptTokens": 500,
              "ai.usage.completionTokens": 9}  # fmt: skip

    def tool(call_id: str, name: str, **more: Any) -> dict[str, Any]:
        return {"ai.operationId": "ai.toolCall", "ai.toolCall.id": call_id,
                "ai.toolCall.name": name, **more}  # fmt: skip

    transcript = turnfold.load(
        _request(
            _span("ai.generateText", "1" * 16, outer, start=1),
            _span("ai.generateText.doGenerate", "2" * 16, first, parent="1" * 16, start=2),
            _span("ai.toolCall", "3" * 16, tool("c1", "lookup_order", **{
                "ai.toolCall.args": '{"order_id":"A-1187"}',
                "ai.toolCall.result": '{"status":"in_transit"}'}), parent="1" * 16, start=3),
            _span("ai.toolCall", "4" * 16, tool("c2", "refund"), parent="1" * 16, start=4,
                  status={"code": 2, "message": "not allowed"}),
            _span("ai.generateText.doGenerate", "5" * 16, second, parent="1" * 16, start=5),
        )
    )  # fmt: skip
    assert outline(transcript) == [
        ("user", "Where is order A-1187?"),
        ("call", "lookup_order", {"order_id": "A-1187"}, "success",
         '{\n  "status": "in_transit"\n}', None),
        ("call", "refund", {}, "error", "not allowed", None),
        ("text", "It is in transit."),
    ]  # fmt: skip
    assert transcript.metadata["system"] == "You are a support agent."
    assert transcript_tokens(transcript).own == {"input_tokens": 912, "output_tokens": 36}
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "span/(other)": {"ignored": 1},
        "span/chat": {"mapped": 2},
        "span/execute_tool": {"mapped": 2},
    }
