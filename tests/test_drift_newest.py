"""Drift: what the newest releases write, read as the pinned ones are (spec A-1, H-4, U-1, U-2).

* pydantic-ai's OpenTelemetry instrumentation records an Anthropic response's one-hour cache
  writes only among its usage details (``gen_ai.usage.details.ephemeral_1h_input_tokens``, and
  ``…compaction_ephemeral_1h_input_tokens`` for its compaction iterations; the semantic
  conventions have no name for them): a trace of a real pydantic-ai run on a scripted Anthropic
  Messages server, exported by the real ``opentelemetry-sdk`` in-memory exporter, gives each
  response the one-hour part pydantic-ai itself counted, so the cost prices it at its rate.

smolagents 1.26.0, google-adk 2.13.0 and openai-agents 0.24.0, the pins, are also the newest
releases on the registry: their own tests, run in a venv of each with every dependency at its
newest (OpenTelemetry 1.45, openai 3.63, mcp 2.3), are their drift check, and the fixtures those
venvs write match the pinned ones (the Agents SDK's run state byte for byte).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.test_otlp import _memory_provider, _request_line
from tests.test_cost_1h_readers import MODEL, USAGES, _check_cost, _messages_server
from turnfold.model import Transcript
from turnfold.usage import USAGE_KINDS

# --- pydantic-ai's OpenTelemetry spans: one-hour cache writes --------------------------------

#: The scripted run: a tool call, then the answer (one trace, two model spans).
ADD_THEN_ANSWER: list[tuple[list[dict[str, Any]], str]] = [
    ([{"type": "tool_use", "id": "toolu_tf_1h", "name": "add", "input": {"a": 1, "b": 2}}],
     "tool_use"),
    ([{"type": "text", "text": "TF-1H-OTEL: 3"}], "end_turn"),
]  # fmt: skip


def _traced_pydantic_ai_run(url: str, path: Path) -> Any:
    """pydantic-ai's ``AnthropicModel`` (the real ``anthropic`` client) on the server at
    ``url``, traced by its own ``Instrumentation`` capability into the SDK's in-memory
    exporter; the spans written to ``path``. Returns the run's result."""
    from anthropic import AsyncAnthropic
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider, exporter = _memory_provider()
    client = AsyncAnthropic(base_url=url, api_key="sk-ant-fake", max_retries=0)
    model = AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))
    traced = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = Agent(model, capabilities=[traced])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    result = agent.run_sync("TF-1H-OTEL: add 1 and 2")
    path.write_text(_request_line(exporter), encoding="utf-8")
    return result


def _span_attributes(path: Path, name: str) -> list[dict[str, Any]]:
    request = json.loads(path.read_text(encoding="utf-8"))
    return [
        {a["key"]: a["value"] for a in span["attributes"]}
        for resource in request["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if span["name"].startswith(name)
    ]


def _carried(transcript: Transcript) -> list[Any]:
    return [e.usage for e in transcript.entries if isinstance(e, USAGE_KINDS) and e.usage]


def test_U2_pydantic_ai_spans_one_hour_cache_writes_are_read_and_priced(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("opentelemetry.sdk")
    trace = tmp_path / "pydantic-ai_anthropic_one-hour-cache.jsonl"
    with _messages_server(ADD_THEN_ANSWER) as url:
        _traced_pydantic_ai_run(url, trace)
    chats = _span_attributes(trace, "chat ")
    assert [c["gen_ai.usage.details.ephemeral_1h_input_tokens"] for c in chats] == [
        {"intValue": str(u[3])} for u in USAGES
    ]  # where pydantic-ai puts them: no semantic-conventions attribute holds them
    transcript = turnfold.load(trace)
    assert transcript.metadata["source_format"] == "otlp"
    assert transcript.warnings == []
    assert [c.status for c in transcript.tool_calls()] == ["success"]
    _check_cost(transcript, USAGES)


#: A response whose compaction iteration also wrote to the one-hour cache (Anthropic's
#: ``usage.iterations``): the top-level counts exclude the iteration's; pydantic-ai adds them.
_COMPACTED_USAGE = {
    "input_tokens": 20, "output_tokens": 30, "cache_read_input_tokens": 0,
    "cache_creation_input_tokens": 300,
    "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
    "iterations": [
        {"type": "compaction", "input_tokens": 500, "output_tokens": 50,
         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 400,
         "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 400}},
        {"type": "message", "input_tokens": 20, "output_tokens": 30,
         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 300,
         "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}},
    ],
}  # fmt: skip


def _compacting_message(index: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    """:data:`ADD_THEN_ANSWER`'s ``index``-th response: the answer's usage is
    :data:`_COMPACTED_USAGE` (pydantic-ai reads it off the stream's ``message_start``)."""
    usage = _COMPACTED_USAGE if index else {
        "input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }  # fmt: skip
    return {"id": f"msg_tf_compact_{index + 1}", "type": "message", "role": "assistant",
            "model": MODEL, "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": usage}  # fmt: skip


def test_U1_pydantic_ai_spans_count_a_compaction_s_one_hour_writes_as_pydantic_ai_does(
    tmp_path: Path,
) -> None:
    """The trace's counts are the run's own ``RequestUsage``'s, response by response: the
    compaction iteration's one-hour writes among the one-hour ones, as among the writes."""
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("opentelemetry.sdk")
    trace = tmp_path / "pydantic-ai_anthropic_compaction.jsonl"
    with _messages_server(ADD_THEN_ANSWER, _compacting_message) as url:
        result = _traced_pydantic_ai_run(url, trace)
    own = [m.usage for m in result.all_messages() if m.kind == "response"]
    assert [u.cache_write_1h_tokens for u in own] == [0, 600]  # pydantic-ai's own count
    hour = "gen_ai.usage.details.ephemeral_1h_input_tokens"
    (chat,) = [c for c in _span_attributes(trace, "chat ") if hour in c]
    assert chat["gen_ai.usage.details.compaction_ephemeral_1h_input_tokens"] == {"intValue": "400"}
    transcript = turnfold.load(trace)
    assert transcript.warnings == []
    assert [
        (u.input_tokens, u.output_tokens, u.cache_write_tokens, u.cache_write_1h_tokens)
        for u in _carried(transcript)
    ] == [
        (u.input_tokens, u.output_tokens, u.cache_write_tokens or None,
         u.cache_write_1h_tokens or None)
        for u in own
    ]  # fmt: skip
