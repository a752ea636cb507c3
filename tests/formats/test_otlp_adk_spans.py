"""Google ADK's own tracer with content (spec H-4): in its telemetry schema 1 (its 1.x
releases; 2.x under ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``) the ``call_llm`` span's request
and response, the tool span's arguments and result (google/adk/telemetry/tracing.py:
``trace_call_llm``, ``trace_tool_call``); in its schema 2 (2.x's default) the GenAI messages
it writes (``_experimental_semconv.py``), its calls' ids made up.

:func:`write_adk_schema_1_trace` runs the installed ADK (google-adk 2.13.0) on a scripted
model that answers as Gemini does, its calls without ids (ADK gives each its ``adk-…`` id
after the response is traced): ``ls`` (a list), ``add`` (a number) in one response, a thought
before them, ``explode`` raising (answered by ``on_tool_error_callback``), the agent
``helper`` as a tool (``AgentTool``), the answer. The run's ADK session is the reference: the
trace reads as the ADK reader reads that session. The variants (:data:`VARIANTS`): schema 1,
schema 1 with ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false`` (every request, response,
argument and result ``"{}"``), schema 2 with content on the spans
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``).
``TURNFOLD_UPDATE_FIXTURES=1`` rewrites the committed fixtures.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_otlp import FIXTURES, _request_line, outline
from tests.formats.test_otlp_own_tracers import _global_spans
from turnfold.formats.traces.messages import adk_response, returned_content
from turnfold.model import ToolCall, Transcript
from turnfold.usage import transcript_tokens

PROMPT = "TF-ADK: list the folder, add 1 and 2, explode, then ask the helper."
VARIANTS = {
    "schema-1_content": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},
    "schema-1_no-content": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1",
                            "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"},
    "schema-2_content": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "2",
                         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
}  # fmt: skip


def adk_fixture(variant: str) -> Path:
    return FIXTURES / f"google-adk_{variant}.jsonl"


def _adk_run() -> Any:
    """The scripted run (every response with usage of its own); its ADK session."""
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

    def call(name: str, args: dict[str, Any]) -> Any:  # no id: Gemini gives none
        return types.Part(function_call=types.FunctionCall(name=name, args=args))

    def ls(path: str) -> list[str]:
        """List a folder."""
        return ["a.txt", "b.txt"]

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
            [types.Part(text="list and add", thought=True), call("ls", {"path": "."}),
             call("add", {"a": 1, "b": 2})],
            [call("explode", {"x": "y"})],
            [call("helper", {"request": "meaning"})],
            [types.Part(text="TF-DONE")],
        ],
    )  # fmt: skip
    agent = LlmAgent(
        name="calc",
        model=model,
        instruction="You are terse.",
        tools=[ls, add, explode, AgentTool(helper)],
        on_tool_error_callback=lambda tool, args, tool_context, error: {"error": str(error)},
    )

    async def run() -> Any:
        runner = InMemoryRunner(agent=agent, app_name="demo")
        session = await runner.session_service.create_session(app_name="demo", user_id="u")
        prompt = types.Content(role="user", parts=[types.Part(text=PROMPT)])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=prompt):
            pass
        return await runner.session_service.get_session(
            app_name="demo", user_id="u", session_id=session.id
        )

    return asyncio.run(run())


def write_adk_trace(variant: str, path: Path) -> tuple[Path, Any]:
    """The run traced by ADK's own tracer in ``variant``'s environment, as one OTLP request
    line at ``path``; the run's session."""
    exporter = _global_spans()
    exporter.clear()
    settings = VARIANTS[variant]
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        session = _adk_run()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    path.write_text(_request_line(exporter), encoding="utf-8")
    exporter.clear()
    return path, session


def _as_session_shows(transcript: Transcript) -> list[tuple[Any, ...]]:
    """The outline without sub-agents: the ADK session of the run holds no trace of the
    helper's own run (``AgentTool`` runs it in a session of its own), the trace does."""
    return [row[:5] if row[0] == "call" else row for row in outline(transcript)]


EXPECTED = [
    ("user", PROMPT),
    ("thinking", "list and add"),
    ("call", "ls", {"path": "."}, "success", '[\n  "a.txt",\n  "b.txt"\n]', None),
    ("call", "add", {"a": 1, "b": 2}, "success", "3", None),
    ("call", "explode", {"x": "y"}, "error", "boom: y", None),
    ("call", "helper", {"request": "meaning"}, "success", "TF-42",
     [("user", "meaning"), ("text", "TF-42")]),
    ("text", "TF-DONE"),
]  # fmt: skip


def test_H4_adk_s_own_spans_read_as_its_session_with_each_call_s_result() -> None:
    """ADK's ``call_llm`` span is the model call (its request the prompt and system prompt,
    its response the thought, calls and answer), each tool span settles its call with its
    result (``gcp.vertex.agent.tool_response``: ``{"result": x}`` is ``x``, ``{"error": e}``
    a failure): the same run as ADK's own session shows it, and the helper's run under its
    call. Gemini's calls carry no id: each takes the ``adk-…`` id of its tool span, which
    runs beside the model span, after it; the next request's history (no ids either) is
    the same calls, not new ones. Usage is each response's, once (its ``generate_content``
    span inside ``call_llm`` is the same call)."""
    transcript = turnfold.load(adk_fixture("schema-1_content"))
    assert outline(transcript) == EXPECTED
    assert transcript.warnings == []
    assert transcript.metadata["agent"] == "calc"
    assert transcript.metadata["model"] == "scripted-1"
    assert transcript.metadata["system"].startswith("You are terse.")
    calls = transcript.tool_calls()
    assert all(c.call_id.startswith("adk-") for c in calls)
    assert calls[0].batch_id == calls[1].batch_id != calls[2].batch_id
    assert transcript_tokens(transcript).own == {"input_tokens": 50, "output_tokens": 10}
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H4_adk_s_schema_2_messages_read_as_the_run_its_made_up_ids_left_out() -> None:
    """Schema 2 writes the GenAI messages, a call without an id named ``<tool>_<part index>``
    in the response and its function response ``<tool>_<its own part index>`` in the next
    request: neither names the other, nor the ``adk-…`` id of the tool span that ran it.
    Taken out, each call takes its tool span's id and the history repeats the same calls:
    the run as schema 1 reads it, but for the model's thought, which schema 2 writes as
    text (``_to_part`` keeps a part's text, not that it is a thought)."""
    transcript = turnfold.load(adk_fixture("schema-2_content"))
    thought = ("thinking", "list and add")
    assert outline(transcript) == [("text", thought[1]) if r == thought else r for r in EXPECTED]
    assert transcript.warnings == []
    assert all(c.call_id.startswith("adk-") for c in transcript.tool_calls())
    assert transcript_tokens(transcript).own == {"input_tokens": 50, "output_tokens": 10}


def test_H4_adk_spans_without_content_show_calls_without_arguments_or_results() -> None:
    """With content capture off ADK writes ``"{}"`` for every request, response, argument and
    result: nothing of that is a call of no arguments or an empty result. The calls the tool
    spans make stand, their status the spans', and the load says the content is missing."""
    transcript = turnfold.load(adk_fixture("schema-1_no-content"))
    assert [row[:6] for row in outline(transcript)] == [
        ("call", "ls", None, "success", None, None),
        ("call", "add", None, "success", None, None),
        ("call", "explode", None, "error", "TOOL_ERROR", None),
        ("call", "helper", None, "success", None, []),
    ]
    assert [w.reason.split(" (")[0] for w in transcript.warnings] == [
        "the trace records no message content"
    ]
    assert transcript_tokens(transcript).own == {"input_tokens": 50, "output_tokens": 10}


def test_H4_a_tool_s_list_result_is_shown_whole_as_it_returned_it() -> None:
    """A tool's value that is a JSON list (``["a.txt", "b.txt"]``, numbers) is what the tool
    returned: shown whole as JSON, not as its items joined like content parts (numbers among
    them were dropped). A list of content parts (an MCP tool's) is still read as parts."""
    assert returned_content(["a.txt", "b.txt"]) == ('[\n  "a.txt",\n  "b.txt"\n]', [])
    assert returned_content([1, 2, 3]) == ("[\n  1,\n  2,\n  3\n]", [])
    assert returned_content([]) == ("[]", [])
    assert returned_content([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == (
        "a\nb",
        [],
    )
    mixed = [{"type": "text", "text": "a"}, {"name": "b"}]
    assert returned_content(mixed) == ('[\n  {\n    "type": "text",\n    "text": "a"\n  },\n'
                                       '  {\n    "name": "b"\n  }\n]', [])  # fmt: skip
    assert adk_response({"result": ["a"]}) == (["a"], False)
    assert adk_response({"result": 1, "more": 2}) == ({"result": 1, "more": 2}, False)


@pytest.mark.parametrize("variant", VARIANTS)
def test_H4_the_installed_adk_traces_what_the_loader_reads(variant: str, tmp_path: Path) -> None:
    """Compatibility with the installed google-adk: a trace written now reads as the committed
    fixture does, and, with content, as the run's own ADK session reads."""
    pytest.importorskip("google.adk")
    name = adk_fixture(variant).name
    target = FIXTURES / name if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else tmp_path / name
    path, session = write_adk_trace(variant, target)
    written = turnfold.load(path)
    committed = turnfold.load(adk_fixture(variant))
    assert outline(written) == outline(committed)
    assert [w.reason for w in written.warnings] == [w.reason for w in committed.warnings]
    if variant == "schema-1_content":
        assert _as_session_shows(written) == _as_session_shows(turnfold.load(session))
    assert all(isinstance(c, ToolCall) for c in written.tool_calls())
