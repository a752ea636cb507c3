"""MLflow traces of ``mlflow.langchain.autolog()`` around a LangGraph ``create_agent`` run and
of ``mlflow.anthropic.autolog()`` around the ``anthropic`` client (spec H-4, U-1): fixtures the
real mlflow made (``tests/fixtures/traces/mlflow/autolog_recipe.py``), and a live run of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.fixtures.traces.mlflow import autolog_recipe as recipe
from tests.formats import langchain_runs as lc
from turnfold.model import AssistantText, Thinking, Transcript, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces" / "mlflow"

LANGGRAPH = FIXTURES / "langgraph-agent_trace.json"
ANTHROPIC = FIXTURES / "anthropic-weather_trace.json"


def _texts(transcript: Transcript, kind: type) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, kind)]


def _usages(transcript: Transcript) -> list[tuple[int | None, int | None]]:
    return [
        (e.usage.input_tokens, e.usage.output_tokens)
        for e in transcript.entries
        if getattr(e, "usage", None) is not None
    ]


def _langgraph_run(transcript: Transcript) -> None:
    assert transcript.warnings == []
    # The graph's input is LangChain's ("user", text) tuple: the prompt, once, as text.
    assert _texts(transcript, UserMessage) == [lc.PROMPT]
    assert transcript.metadata["system"] == "You are terse."
    assert transcript.metadata["session_id"] == recipe.LANGGRAPH_THREAD
    assert transcript.metadata["agent"] == "calculator"
    # The chat model spans' LLMResult: their thinking blocks, text and (from the graph's
    # state, by the message's id) their calls, each call once. The answer's response MLflow
    # converted to Chat Completions (its additional_kwargs lost) is the state's whole message:
    # its reasoning_content shown, as the LangChain reader shows it.
    assert _texts(transcript, Thinking) == [
        "I add first.", "Now the failing one.", "Both calls are done."
    ]  # fmt: skip
    # No model parameter for MLflow to record: each response's response_metadata says it.
    assert transcript.metadata["model"] == lc.MODEL
    assert [e.model for e in transcript.entries if isinstance(e, AssistantText)] == [lc.MODEL] * 2
    add, explode = transcript.tool_calls()
    assert (add.call_id, add.name, add.args) == ("call_1", "add", {"a": 1, "b": 2})
    assert add.status == "success"
    assert add.result is not None
    assert add.result.text == "3"
    # The ToolException LangChain handled: its span ended OK, its ToolMessage says error.
    assert (explode.call_id, explode.name, explode.args) == ("call_2", "explode", {"x": "y"})
    assert explode.status == "error"
    assert explode.result is not None
    assert explode.result.text == "boom: y"
    assert _texts(transcript, AssistantText) == ["Trying it.", lc.ANSWER]
    # U-1: each model call's usage once (langchain_runs._usage: 100+n in, 10+n out).
    assert _usages(transcript) == [(101, 11), (102, 12), (130, 20)]


def _anthropic_run(transcript: Transcript) -> None:
    assert transcript.warnings == []
    assert _texts(transcript, UserMessage) == [recipe.ANTHROPIC_PROMPT]
    assert transcript.metadata["model"] == recipe.ANTHROPIC_MODEL
    assert transcript.metadata["agent"] == "weather_agent"
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name, call.args, call.status) == (
        "toolu_tf_1", "get_weather", {"city": "Oslo"}, "success"
    )  # fmt: skip
    assert call.result is not None
    assert call.result.text == recipe.WEATHER
    # The response's text and the same message in the next request's history: shown once.
    answers = _texts(transcript, AssistantText)
    assert answers == ["TF-CHECKING: one lookup.", recipe.ANTHROPIC_ANSWER]
    assert _usages(transcript) == recipe.ANTHROPIC_USAGES
    assert transcript.metadata["cost_usd"] > 0


def test_H4_a_langgraph_agent_traced_by_langchain_autolog() -> None:
    _langgraph_run(turnfold.load(LANGGRAPH))


def test_H4_an_anthropic_client_traced_by_anthropic_autolog() -> None:
    _anthropic_run(turnfold.load(ANTHROPIC))


def test_H4_an_anthropic_tool_result_in_history_alone_settles_its_call() -> None:
    """Without the tool's span, the ``tool_result`` block of the next request is the result."""
    trace = json.loads(ANTHROPIC.read_text())
    trace["data"]["spans"] = [s for s in trace["data"]["spans"] if s["name"] != "get_weather"]
    transcript = turnfold.load(json.dumps(trace))
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name) == ("toolu_tf_1", "get_weather")
    assert call.result is not None
    assert call.result.text == recipe.WEATHER
    assert transcript.warnings == []


def test_H4_an_anthropic_response_s_thinking_is_shown_once() -> None:
    """Extended thinking: the response's ``thinking`` block, sent back in the next request."""
    trace = json.loads(ANTHROPIC.read_text())
    thinking = {"type": "thinking", "thinking": "TF-THOUGHT: look it up.", "signature": "c2ln"}
    first, second = (s for s in trace["data"]["spans"] if s["name"] == "Messages.create")
    response = json.loads(first["attributes"]["mlflow.spanOutputs"])
    response["content"].insert(0, thinking)
    first["attributes"]["mlflow.spanOutputs"] = json.dumps(response)
    request = json.loads(second["attributes"]["mlflow.spanInputs"])
    request["messages"][1]["content"].insert(0, thinking)
    second["attributes"]["mlflow.spanInputs"] = json.dumps(request)
    transcript = turnfold.load(json.dumps(trace))
    assert _texts(transcript, Thinking) == ["TF-THOUGHT: look it up."]
    assert len(transcript.tool_calls()) == 1
    assert transcript.warnings == []


def test_H4_live_langchain_and_anthropic_autolog(tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    traces: dict[str, Any] = recipe.run(tmp_path)
    _langgraph_run(turnfold.load(traces["langgraph-agent"]))
    _anthropic_run(turnfold.load(traces["anthropic-weather"]))


def test_H4_an_anthropic_tool_result_in_error_alone_fails_its_call() -> None:
    """Without the tool's span, a ``tool_result`` of ``is_error: true`` in the next request is
    the call's outcome: failed, its text the result (not a success the span never said)."""
    trace = json.loads(ANTHROPIC.read_text())
    trace["data"]["spans"] = [s for s in trace["data"]["spans"] if s["name"] != "get_weather"]
    second = [s for s in trace["data"]["spans"] if s["name"] == "Messages.create"][1]
    request = json.loads(second["attributes"]["mlflow.spanInputs"])
    (result,) = request["messages"][2]["content"]
    result.update(is_error=True, content="City not found")
    second["attributes"]["mlflow.spanInputs"] = json.dumps(request)
    transcript = turnfold.load(json.dumps(trace))
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name, call.status) == ("toolu_tf_1", "get_weather", "error")
    assert call.result is not None
    assert call.result.text == "City not found"
    assert transcript.warnings == []


def test_H4_a_langchain_run_mlflow_converted_shows_its_reasoning_and_model_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model of string contents and ``additional_kwargs["reasoning_content"]`` (DeepSeek,
    Qwen… through LangChain), two turns of one thread under the real
    ``mlflow.langchain.autolog()``: MLflow converts every request and response to Chat
    Completions messages, their reasoning and model dropped. Each is read as the graph
    state's whole message: every reasoning shown once (the history each next request repeats
    is the same message), the model named, each call once."""
    mlflow = pytest.importorskip("mlflow")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver

    def reply(text: str, thought: str, calls: list[Any] | None = None) -> AIMessage:
        return AIMessage(content=text, additional_kwargs={"reasoning_content": thought},
                         tool_calls=calls or [],
                         response_metadata={"model_name": "TF-REASONER"})  # fmt: skip

    model = lc.FakeToolModel(responses=[
        reply("Adding.", "TF-R1", [{"name": "add", "args": {"a": 1, "b": 2}, "id": "call_r1"}]),
        reply("3.", "TF-R2"),
        reply("Still 3.", "TF-R3"),
    ])  # fmt: skip
    agent = create_agent(model, tools=[lc.add], name="reasoner", checkpointer=InMemorySaver())
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.chdir(tmp_path)  # MLflow's default store is made here
    mlflow.set_tracking_uri(None)
    mlflow.set_tracking_uri(mlflow.get_tracking_uri())
    mlflow.langchain.autolog()
    ids = []
    try:
        for prompt in ("1+2?", "Again?"):
            agent.invoke({"messages": [("user", prompt)]}, lc._config("TF-REASONING"))
            ids.append(mlflow.get_last_active_trace_id())
    finally:
        mlflow.langchain.autolog(disable=True)
    mlflow.flush_trace_async_logging()
    traces = [json.loads(mlflow.get_trace(i).to_json()) for i in ids]
    first = next(s for s in traces[0]["data"]["spans"] if s["name"] == "FakeToolModel")
    assert "reasoning_content" not in first["attributes"]["mlflow.spanOutputs"]  # converted
    transcript = turnfold.load(json.dumps(traces))
    assert transcript.warnings == []
    assert _texts(transcript, UserMessage) == ["1+2?", "Again?"]
    assert _texts(transcript, Thinking) == ["TF-R1", "TF-R2", "TF-R3"]
    assert _texts(transcript, AssistantText) == ["Adding.", "3.", "Still 3."]
    assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [("call_r1", "success")]
    assert transcript.metadata["model"] == "TF-REASONER"
