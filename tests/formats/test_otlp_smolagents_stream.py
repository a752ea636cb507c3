"""A smolagents run made with ``run(stream=True)``, traced by OpenInference (spec H-4).

For a streamed run, the ``_RunWrapper`` of openinference-instrumentation-smolagents 0.1.43
writes as the agent span's output every chunk the stream yielded, their ``str()`` joined (it
looks for ``agent.monitor.steps``, which smolagents 1.26's ``Monitor`` has not): the tool calls,
tool outputs and action steps as their ``repr``, then the ``FinalAnswerStep(output=…)`` that
ends the stream. Where the agent span's output is the run's answer (a run that hit
``max_steps`` traced without model spans: smolagents' ``provide_final_answer`` is seen nowhere
else), that was shown as the answer, reprs and all. Now the answer is the final step's output,
once, as for the same run not streamed.

The runs are real and offline, as tests/formats/test_otlp.py makes its smolagents traces: the
real instrumentor on smolagents' ``ToolCallingAgent`` / ``CodeAgent`` with the scripted model of
tests/formats/smolagents_runs.py, or with ``OpenAIModel`` on a mocked HTTP server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openinference.instrumentation.smolagents")

import turnfold
from tests.formats.test_otlp import (
    _memory_provider,
    _read_as,
    _request_line,
    _scripted_code_agent,
    _scripted_tool_agent,
    trace_agent_run,
)
from turnfold.model import AssistantText, Transcript

TASK = "add 1 and 2"
MAX_STEPS_ANSWER = "The answer is 3."


def _max_steps_agent(*, llm_spans: bool) -> Any:
    """A ``ToolCallingAgent`` allowed one step, which adds: smolagents then asks the model for
    an answer (``provide_final_answer``), the scripted reply :data:`MAX_STEPS_ANSWER`."""
    from tests.formats import smolagents_runs

    message = smolagents_runs._message
    first = message("Let me add first.", ("add", {"a": 1, "b": 2}, "call_1"))
    replies = [first, message(MAX_STEPS_ANSWER)]
    return _scripted_tool_agent(replies, llm_spans=llm_spans, max_steps=1)


def _streamed(agent: Any, tmp_path: Path, *, chunks: int | None = None) -> Transcript:
    """``agent.run(TASK, stream=True)`` traced by the real instrumentor, read from its OTLP
    line; the stream read whole, or only its first ``chunks`` chunks and then closed."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    provider, exporter = _memory_provider()
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        stream = agent.run(TASK, stream=True)
        if chunks is None:
            list(stream)
        else:
            for _ in range(chunks):
                next(stream)
            stream.close()
    finally:
        instrumentor.uninstrument()
    path = tmp_path / "streamed.jsonl"
    path.write_text(_request_line(exporter))
    return turnfold.load(path)


def _answers(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, AssistantText)]


@pytest.mark.parametrize("llm_spans", [False, True], ids=["agent-spans", "llm-spans"])
def test_H4_a_streamed_run_s_answer_is_its_final_step_s_output_once(
    llm_spans: bool, tmp_path: Path
) -> None:
    """The streamed run reads as the same run not streamed: the task, the call, the max-steps
    notice, the answer once (not the stream's chunks joined)."""
    streamed = _streamed(_max_steps_agent(llm_spans=llm_spans), tmp_path)
    plain_path = tmp_path / "plain.jsonl"
    plain_path.write_text(trace_agent_run(_max_steps_agent(llm_spans=llm_spans), TASK))
    plain = turnfold.load(plain_path)
    assert streamed.warnings == []
    assert _answers(streamed) == [MAX_STEPS_ANSWER]
    assert _read_as(streamed) == _read_as(plain)
    assert ("call", "add", {"a": 1, "b": 2}, "success", "3") in _read_as(streamed)


def test_H4_a_streamed_code_agent_s_answer_is_shown_once(tmp_path: Path) -> None:
    """A ``CodeAgent`` answering from its code (``final_answer(3)``, a number): its tool span
    gives the answer; the agent span's joined chunks add nothing."""
    agent = _scripted_code_agent(
        ["Thought: add.\n<code>\nfinal_answer(add(a=1, b=2))\n</code>"], llm_spans=False
    )
    assert _answers(_streamed(agent, tmp_path)) == ["3"]


def test_H4_a_stream_closed_before_its_answer_shows_no_answer(tmp_path: Path) -> None:
    """The caller stopped reading after the first step's chunks (``close()``): the instrumentor
    still ends the span, its output the chunks read so far, no ``FinalAnswerStep``: no answer
    is shown, and nothing of the chunks' reprs."""
    transcript = _streamed(_max_steps_agent(llm_spans=False), tmp_path, chunks=4)
    assert _answers(transcript) == []
    assert not [e for e in transcript.entries if "ToolCall(" in (getattr(e, "text", "") or "")]
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("add", "success")
