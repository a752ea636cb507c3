"""A smolagents run whose model call raised reads as a failed run (spec A-1, A-2, P-3, L-3).

smolagents wraps an exception of the model's ``generate`` in ``AgentGenerationError`` and
re-raises it out of ``agent.run``: the step is saved empty (no model output, no ``error``) and
nothing else records the error. Before, ``load(agent)`` showed a run that just stopped after
its last call. The runs are real (smolagents 1.26, offline): the scripted model of
``tests/formats/smolagents_runs.py``, made to raise on its second call.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

pytest.importorskip("smolagents")

import turnfold
from tests.formats import smolagents_runs as runs
from turnfold.model import AssistantError, AssistantText, ToolCall, Transcript, UserMessage
from turnfold.process import project
from turnfold.render.viewmodel import Turn

TASK = "add 1 and 2"
FAILURE = "rate limited: 429 Too Many Requests"


def _agent(kind: str = "tool-calling") -> Any:
    """An agent whose model answers once, then raises (an API error, say)."""
    from smolagents import CodeAgent, ToolCallingAgent

    class RaisingModel(runs._model_class()):  # type: ignore[misc]
        def generate(self, messages: Any, **kwargs: Any) -> Any:
            reply = self.replies.pop(0)
            if isinstance(reply, Exception):
                raise reply
            return reply

        def generate_stream(self, messages: Any, **kwargs: Any) -> Any:
            if isinstance(self.replies[0], Exception):
                raise self.replies.pop(0)
            yield from super().generate_stream(messages, **kwargs)

    add, _ = runs._tools()
    if kind == "code":
        first = runs._message("Thought: add.\n<code>\nprint(add(a=1, b=2))\n</code>")
        make: Any = CodeAgent
    else:
        first = runs._message("Let me add first.", ("add", {"a": 1, "b": 2}, "call_1"))
        make = ToolCallingAgent
    model = RaisingModel([first, RuntimeError(FAILURE)])
    return make(tools=[add], verbosity_level=0, logger=runs._quiet(), model=model)


def shown(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            out.append(
                ("call", entry.name, entry.args, entry.status, entry.result and entry.result.text)
            )
        elif isinstance(entry, AssistantError):
            out.append(("error", entry.message))
        elif isinstance(entry, (UserMessage, AssistantText)):
            out.append((type(entry).__name__, entry.text))
    return out


def _turn_status(transcript: Transcript) -> str:
    (turn,) = [node for node in project(transcript) if isinstance(node, Turn)]
    return turn.header.status


RAISED = f"AgentGenerationError: Error while generating output:\n{FAILURE}"
TOOL_CALLING_RUN = [
    ("UserMessage", TASK),
    ("call", "add", {"a": 1, "b": 2}, "success", "3"),
]


def _load_where_raised(agent: Any) -> Transcript:
    """``load(agent)`` in the ``except`` block around its run, as a user writes it."""
    from smolagents.utils import AgentGenerationError

    try:
        agent.run(TASK)
    except AgentGenerationError:
        return turnfold.load(agent)
    raise AssertionError("the run did not raise")


def test_A1_loading_the_agent_where_its_run_raised_shows_the_generation_error() -> None:
    agent = _agent()
    transcript = _load_where_raised(agent)
    assert agent.memory.steps[-1].error is None  # smolagents records no error
    assert shown(transcript) == [*TOOL_CALLING_RUN, ("error", RAISED)]
    assert _turn_status(transcript) == "failed"
    error = transcript.entries[-1]
    assert error.timestamp is not None  # the failed step's end
    assert transcript.warnings == []


def test_A1_the_error_a_notebook_reported_last_is_the_run_s_when_its_step_holds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a notebook the failed ``run`` is one cell and ``load(agent)`` the next: IPython
    keeps the error it showed in ``sys.last_value``; it is this run's only when its
    traceback holds the agent's last step (another agent's error is not taken)."""
    agent, other = _agent(), _agent()
    errors = []
    for each in (agent, other):
        try:
            each.run(TASK)
        except Exception as error:
            errors.append(error)
    monkeypatch.setattr(sys, "last_value", errors[0], raising=False)
    monkeypatch.setattr(sys, "last_exc", errors[0], raising=False)
    assert shown(turnfold.load(agent))[-1] == ("error", RAISED)
    assert shown(turnfold.load(agent.memory))[-1] == ("error", RAISED)
    assert shown(turnfold.load(other))[-1] != ("error", RAISED)


def test_A1_without_the_error_the_empty_last_step_still_ends_the_run_as_failed() -> None:
    """Saved steps (``step.dict()``), or an agent whose error is gone: the empty last step
    is all smolagents leaves of it, and the turn still fails, saying so."""
    from smolagents.utils import AgentGenerationError

    agent = _agent()
    with pytest.raises(AgentGenerationError, match=FAILURE):
        agent.run(TASK)
    saved = json.dumps([step.dict() for step in agent.memory.steps], default=str)
    for transcript in (turnfold.load(agent), turnfold.load(saved)):
        *rest, last = shown(transcript)
        assert rest[: len(TOOL_CALLING_RUN)] == TOOL_CALLING_RUN
        assert last == (
            "error",
            "Step 2 has no model output: its model call failed (smolagents raises "
            "AgentGenerationError, stopping the run, and records no error for it)",
        )
        assert _turn_status(transcript) == "failed"


def test_A1_a_code_agent_s_generation_error_is_shown_too() -> None:
    transcript = _load_where_raised(_agent("code"))
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [("python", "success")]
    assert shown(transcript)[-1] == (
        "error",
        f"AgentGenerationError: Error in generating model output:\n{FAILURE}",
    )


def test_A1_a_finished_run_gets_no_error() -> None:
    transcript = turnfold.load(runs.run())
    assert not [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert _turn_status(transcript) == "completed"


def test_A2_following_the_failed_run_ends_as_loading_it_in_the_except_block() -> None:
    """Followed, the stream raises the error itself (turnfold.follow shows it); the load
    in the ``except`` block shows the same, the task too (read off the agent ``run``'s
    generator holds: the stream carries none)."""
    agent = _agent()
    followed = turnfold.follow(agent.run(TASK, stream=True), display=False)
    try:
        for _ in followed:
            pass
    except Exception:
        loaded = turnfold.load(agent)
    assert shown(followed.transcript) == [*TOOL_CALLING_RUN, ("error", RAISED)]
    assert shown(followed.transcript) == shown(loaded)
    assert _turn_status(followed.transcript) == "failed"
