"""A smolagents run whose model call failed, traced by OpenInference (spec H-4, A-1, L-3).

smolagents wraps the model's error in ``AgentGenerationError`` (recorded on the ``Step N``
span) and re-raises it out of ``agent.run``; OpenInference's ``_RunWrapper``
(openinference-instrumentation-smolagents 0.1.43) then records it on the agent span and never
ends that span, so no exporter gets it: the trace is the steps, model and tool spans alone.
Before, such a trace was not read as smolagents' (the task as ``New task:\\n…``, the model's
input memory again as duplicate messages, two "unknown role" warnings, the model span's error
for the run's). Now it reads as ``turnfold.load(agent)`` reads the run in the ``except`` block
around it: the step's error is the run's failure.

The runs are real and offline, as tests/formats/test_otlp.py makes its smolagents traces:
smolagents 1.26 on its ``OpenAIModel`` with the real ``openai`` client, whose server (httpx's
``MockTransport``, :func:`test_otlp._served_model`) answers the scripted replies, then an HTTP
500 the client raises.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openinference.instrumentation.smolagents")

import turnfold
from tests.formats.test_otlp import (
    FIXTURES,
    SERVED_OUT,
    _memory_provider,
    _read_as,
    _request_line,
    _scripted_code_agent,
    _scripted_tool_agent,
    _served_model,
)
from turnfold.model import AssistantError, AssistantText, Transcript, UserMessage
from turnfold.process import project
from turnfold.render.viewmodel import Turn

TASK = "add 1 and 2"
#: The ``openai`` client's error for the server's HTTP 500, as the model span records it.
SERVER_ERROR = f"Error code: 500 - {SERVED_OUT}"
#: A ToolCallingAgent's and a CodeAgent's ``AgentGenerationError`` (smolagents' own wording).
GENERATION_ERROR = {
    "tool-calling": f"AgentGenerationError: Error while generating output:\n{SERVER_ERROR}",
    "code": f"AgentGenerationError: Error in generating model output:\n{SERVER_ERROR}",
}


def _agent(kind: str, *, answered: int = 1, max_steps: int = 20) -> Any:
    """An agent whose model's server answers ``answered`` replies (a thought and a call of
    ``add``), then fails."""
    from tests.formats import smolagents_runs

    if kind == "code":
        replies = ["Thought: add.\n<code>\nprint(add(a=1, b=2))\n</code>"][:answered]
        return _scripted_code_agent(replies, llm_spans=True, max_steps=max_steps)
    message = smolagents_runs._message
    first = message("Let me add first.", ("add", {"a": 1, "b": 2}, "call_1"))
    return _scripted_tool_agent([first][:answered], llm_spans=True, max_steps=max_steps)


def trace_failed_run(agent: Any) -> tuple[Transcript | None, str]:
    """The spans of ``agent.run(TASK)`` as one OTLP line, and ``turnfold.load(agent)`` in the
    ``except`` block around the run when it raised (None when it did not)."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider, exporter = _memory_provider()
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    loaded = None
    try:
        agent.run(TASK)
    except Exception:
        loaded = turnfold.load(agent)
    finally:
        instrumentor.uninstrument()
    return loaded, _request_line(exporter)


def fixture(kind: str) -> Path:
    return FIXTURES / f"openinference-smolagents_{kind}_generation-error.jsonl"


def write_generation_error_trace(kind: str, path: Path) -> Path:
    """The committed fixtures: a ``ToolCallingAgent`` (``tool-calling``) or a ``CodeAgent``
    (``code``) whose first step adds, whose second step's model call gets the HTTP 500."""
    path.write_text(trace_failed_run(_agent(kind))[1])
    return path


def _turn_status(transcript: Transcript) -> str:
    """The status of the run's last turn (a max-steps notice starts one of its own)."""
    turns = [node for node in project(transcript) if isinstance(node, Turn)]
    return turns[-1].header.status


#: What each fixture reads as: the task, the step that ran, the run's failure.
EXPECTED = {
    "tool-calling": [
        ("user", TASK),
        ("thinking", "Let me add first."),
        ("call", "add", {"a": 1, "b": 2}, "success", "3"),
        ("error", GENERATION_ERROR["tool-calling"]),
    ],
    "code": [
        ("user", TASK),
        ("thinking", "add."),
        ("call", "python", "print(add(a=1, b=2))", "success",
         "Execution logs:\n3\nLast output from code snippet:\nNone"),
        ("error", GENERATION_ERROR["code"]),
    ],
}  # fmt: skip


@pytest.mark.parametrize("kind", EXPECTED)
def test_H4_a_smolagents_trace_without_its_agent_span_reads_as_the_run_that_failed(
    kind: str,
) -> None:
    """The trace has no agent span (the fixture's spans: two steps, their model calls, the
    tool its first step ran): read as smolagents' run all the same, the task once (not the
    model input's ``New task:`` text), the model's text once, as thinking, no warning about
    smolagents' ``tool-call`` / ``tool-response`` roles; the step's ``AgentGenerationError`` is
    the run's one error (the model span's own is its cause), the turn failed."""
    transcript = turnfold.load(fixture(kind))
    assert _read_as(transcript) == EXPECTED[kind]
    assert transcript.warnings == []
    assert [e for e in transcript.entries if isinstance(e, AssistantText)] == []
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [TASK]
    assert _turn_status(transcript) == "failed"
    assert transcript.metadata["outcome"] == "error"
    assert transcript.metadata["model"] == "scripted-1"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert "span/AGENT" not in transcript.accounting.counts


@pytest.mark.parametrize("kind", EXPECTED)
def test_H4_the_failed_run_traced_reads_as_loading_the_agent_where_it_raised(
    kind: str, tmp_path: Path
) -> None:
    """The installed smolagents and instrumentor, now: the trace reads as ``load(agent)`` in the
    ``except`` block (the same entries, the same error text), and as the committed fixture
    (``TURNFOLD_UPDATE_FIXTURES=1`` rewrites it)."""
    loaded, line = trace_failed_run(_agent(kind))
    assert loaded is not None
    path = fixture(kind) if os.environ.get("TURNFOLD_UPDATE_FIXTURES") else tmp_path / "t.jsonl"
    path.write_text(line)
    traced = turnfold.load(path)
    assert _read_as(traced) == _read_as(loaded) == EXPECTED[kind]
    assert traced.warnings == []
    assert _read_as(turnfold.load(fixture(kind))) == _read_as(traced)


def test_H4_a_run_whose_first_model_call_failed_is_its_task_and_the_error() -> None:
    """No step ran: the one model span, in its step, is all there is of the run."""
    loaded, line = trace_failed_run(_agent("tool-calling", answered=0))
    traced = turnfold.load(line)
    assert _read_as(traced) == [("user", TASK), ("error", GENERATION_ERROR["tool-calling"])]
    assert loaded is not None
    assert _read_as(loaded) == _read_as(traced)
    assert _turn_status(traced) == "failed"


def test_H4_a_smolagents_trace_of_a_plan_that_failed_shows_its_prompt_and_error() -> None:
    """A planning call that fails raises the client's error itself (no step, no
    ``AgentGenerationError``): the trace is that model span alone, recognised as smolagents' by
    its input (smolagents' ``ChatMessage`` objects); with no ``New task:`` message the plan's
    prompt, which holds the task, is shown, then the model's error."""
    agent = _agent("tool-calling", answered=0)
    agent.planning_interval = 1
    _, line = trace_failed_run(agent)
    traced = turnfold.load(line)
    (prompt,) = [e for e in traced.entries if isinstance(e, UserMessage)]
    assert f"Here is your task:\n```\n{TASK}\n```" in prompt.text
    assert _read_as(traced)[1:] == [("error", f"InternalServerError: {SERVER_ERROR}")]
    assert traced.warnings == []


@pytest.mark.parametrize("kind", ["tool-calling", "code"])
def test_H4_a_max_steps_run_whose_call_for_an_answer_failed_shows_that_error(kind: str) -> None:
    """At ``max_steps`` smolagents asks the model for an answer (``provide_final_answer``);
    when that call fails it answers the failure's text instead and the run ends without
    raising (its agent span exported, its output the ``str()`` of that answer's content).
    The trace shows the model span's error after the max-steps notice, not the agent span's
    text; ``load(agent)`` shows smolagents' answer text for the same failure."""
    loaded, line = trace_failed_run(_agent(kind, max_steps=1))
    assert loaded is None  # the run did not raise
    traced = turnfold.load(line)
    rows = _read_as(traced)
    assert rows[-2:] == [
        ("notice", "warning", "max_steps", "Reached max steps."),
        ("error", f"InternalServerError: {SERVER_ERROR}"),
    ]
    assert not [e for e in traced.entries if isinstance(e, AssistantText)]
    assert traced.warnings == []
    assert _turn_status(traced) == "failed"


def test_H4_the_served_model_fails_with_an_http_error_once_its_replies_are_used() -> None:
    """The case that raised ``IndexError: pop from empty list`` (recorded on the model span,
    then shown as the run's error): a request after the scripted replies popped an empty
    queue in the test's transport. Now the server answers HTTP 500, which the client raises."""
    import openai
    from smolagents import ChatMessage, MessageRole

    model = _served_model([])
    prompt = [ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": TASK}])]
    with pytest.raises(openai.InternalServerError, match=SERVED_OUT):
        model.generate(prompt)


def test_H4_a_model_span_s_own_error_stands_where_its_step_recorded_none() -> None:
    """A failed model span in a smolagents run whose step holds no ``AgentGenerationError`` (a
    trace cut before the step's end, say) is still shown as its error."""
    line = trace_failed_run(_agent("tool-calling"))[1]
    request = json.loads(line)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s["name"] != "Step 2"]
    traced = turnfold.load(json.dumps(request))
    errors = [e.message for e in traced.entries if isinstance(e, AssistantError)]
    assert errors == [f"InternalServerError: {SERVER_ERROR}"]
    assert _read_as(traced)[0] == ("user", TASK)


def test_H4_a_managed_agent_whose_model_call_failed_nests_under_its_manager_s_call() -> None:
    """The managed agent's run raised (its agent span missing, its steps' parent): its spans
    are its own run, nested under its manager's ``helper`` call, which failed with the error
    its manager's step was told; the manager's run goes on and answers, as
    ``turnfold.load(agent)`` shows it."""
    from smolagents import ToolCallingAgent

    from tests.formats import smolagents_runs

    message = smolagents_runs._message
    add, _ = smolagents_runs._tools()
    helper = ToolCallingAgent(
        tools=[add], name="helper", description="Adds numbers.", verbosity_level=0,
        logger=smolagents_runs._quiet(),
        model=_served_model([message(None, ("add", {"a": 5, "b": 6}, "h_1"))]),
    )  # fmt: skip
    agent = ToolCallingAgent(
        tools=[add], managed_agents=[helper], verbosity_level=0,
        logger=smolagents_runs._quiet(),
        model=_served_model([message(None, ("helper", {"task": "add 5 and 6"}, "c1")),
                             message(None, ("final_answer", {"answer": "no helper"}, "c2"))]),
    )  # fmt: skip
    loaded, line = trace_failed_run(agent)
    assert loaded is None  # the manager's run did not raise
    traced, loaded = turnfold.load(line), turnfold.load(agent)
    assert _read_as(traced) == _read_as(loaded)
    (call,) = traced.tool_calls()
    assert (call.name, call.status) == ("helper", "error")
    assert call.result is not None
    assert GENERATION_ERROR["tool-calling"].removeprefix("AgentGenerationError: ") in (
        call.result.text
    )
    assert call.subagent is not None
    assert call.subagent.task == "add 5 and 6"
    assert call.subagent.transcript is not None
    assert _read_as(call.subagent.transcript)[1:] == [
        ("call", "add", {"a": 5, "b": 6}, "success", "11"),
        ("error", GENERATION_ERROR["tool-calling"]),
    ]
    assert _read_as(traced)[-1] == ("text", "no helper")
    assert traced.warnings == []
    assert "outcome" not in traced.metadata
