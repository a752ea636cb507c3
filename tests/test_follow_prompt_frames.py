"""Spec A-2: following the generator a framework returns shows the user's prompt, read off the
generator's frame, as ADK's and LangGraph's followers read theirs.

smolagents: ``agent.run(task, stream=True)`` returns ``_run_stream(task, ...)`` of the agent,
after writing the task to the agent's memory; no event carries it. The generator's ``self`` is
the agent, which gives the task, the agent's identity and its managed agents' runs, so
``agent=`` is needed only for events that are not that generator. The Agents SDK:
``result.stream_events()`` (the form spec A-2 names) is an async generator method of the
``RunResultStreaming``, its ``self`` the run, which holds the input and what the run stopped
for; following it is following the run.

Every run is the real framework's on its own offline model (smolagents: the scripted
``Model`` subclass of ``tests/formats/smolagents_runs.py``; the Agents SDK:
``agents.testing.ScriptedModel``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import turnfold
from tests.followed_runs import followed
from tests.formats.loops import on_thread
from tests.smolagents_helper_runs import adding_helper, smolagents_runs
from turnfold.model import PendingAction, Transcript, UserMessage

# --- smolagents ---------------------------------------------------------------------------------


def _streaming_agent() -> Any:
    """A ``ToolCallingAgent`` that streams its text (so a followed run's entries come in the
    order a load gives them) and plans nothing: it adds, calls ``explode`` (which fails), asks
    its managed agent ``helper``, then answers."""
    runs = smolagents_runs()
    from smolagents import ToolCallingAgent

    add, explode = runs._tools()
    replies = [
        runs._message("Let me add first.", ("add", {"a": 1, "b": 2}, "call_1")),
        runs._message(None, ("explode", {"x": "y"}, "call_2")),
        runs._message(None, ("helper", {"task": "add 5 and 6"}, "call_3")),
        runs._message("All done.", ("final_answer", {"answer": "3, and 11"}, "call_4")),
    ]
    return ToolCallingAgent(
        tools=[add, explode],
        managed_agents=[adding_helper()],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=True,
        model=runs._model_class()(replies),
    )


@pytest.mark.parametrize(
    "additional_args", [None, {"limit": 12}], ids=["task", "task-with-additional-args"]
)
def test_A2_a_followed_smolagents_stream_equals_the_load_of_its_agent_prompt_included(
    additional_args: dict[str, Any] | None,
) -> None:
    """No ``agent=``: the generator's agent gives the task (with the text smolagents appends
    for ``additional_args``), its name, class, model and system prompt, and the managed
    agent's run under its call: the followed run is the load of the agent, entry for entry."""
    agent = _streaming_agent()
    task = "Add 1 and 2, try explode, ask the helper."
    live = followed(agent.run(task, stream=True, additional_args=additional_args))
    loaded = turnfold.load(agent)
    (prompt,) = [e for e in live.entries if isinstance(e, UserMessage)]
    assert live.entries[0] is prompt
    assert prompt.text == agent.task
    assert prompt.text.startswith(task)
    assert ("limit" in prompt.text) is (additional_args is not None)
    helper = live.tool_calls()[-1].subagent
    assert helper is not None
    assert (helper.name, helper.task, helper.steps_missing) == ("helper", "add 5 and 6", False)
    assert live.warnings == loaded.warnings == []
    assert live.metadata == loaded.metadata
    assert live == loaded


def _outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each call's id, name, status and result, and its sub-agent's name, task,
    ``steps_missing`` and calls (the same outline, one level down)."""
    return [
        (
            c.call_id,
            c.name,
            c.status,
            c.result.text if c.result else None,
            None
            if c.subagent is None
            else (
                c.subagent.name,
                c.subagent.task,
                c.subagent.steps_missing,
                None if c.subagent.transcript is None else _outline(c.subagent.transcript),
            ),
        )
        for c in transcript.tool_calls()
    ]


def _shown(transcript: Transcript) -> tuple[Any, ...]:
    """What a followed run shows that no clock changes: prompts, agent, calls, sub-agents."""
    prompts = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    identity = {k: transcript.metadata.get(k) for k in ("agent_class", "model", "system")}
    return prompts, identity, _outline(transcript), transcript.warnings


@pytest.mark.parametrize(
    ("make", "task"),
    [
        pytest.param("make_agent", "TASK", id="tool-calling-with-plan"),
        pytest.param("make_code_manager", "CODE_MANAGER_TASK", id="code-agent-managing"),
        pytest.param("make_code_agent", "CODE_TASK", id="code-agent"),
    ],
)
def test_A2_a_followed_smolagents_stream_needs_no_agent_keyword(make: str, task: str) -> None:
    """Followed without ``agent=``, a run shows what it shows with it: the task, the agent's
    identity, and every managed run nested as its step ends (the code manager's first helper
    run too, which the helper's memory no longer holds when the run is over)."""
    runs = smolagents_runs()
    text = getattr(runs, task)
    given = getattr(runs, make)()
    with_agent = followed(given.run(text, stream=True), agent=given)
    bare = getattr(runs, make)()
    without = followed(bare.run(text, stream=True))
    assert _shown(without) == _shown(with_agent)
    assert _shown(without)[0] == [text]
    assert isinstance(without.entries[0], UserMessage)
    nested = [row[4] for row in _outline(without) if row[4] is not None]
    assert all(not steps_missing for _, _, steps_missing, _ in nested)


# --- the OpenAI Agents SDK ------------------------------------------------------------------------


def _agents() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from agents import set_tracing_disabled

    set_tracing_disabled(True)  # the default exporter wants OPENAI_API_KEY


def _usage(n: int) -> Any:
    from agents.usage import Usage

    return Usage(requests=1, input_tokens=10 * n, output_tokens=n, total_tokens=11 * n)


def _handing_off() -> Any:
    """``triage`` reasons, calls ``add`` and hands off to ``writer``, which answers."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from openai.types.responses import ResponseReasoningItem
    from openai.types.responses.response_reasoning_item import Summary

    from agents import Agent, function_tool

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    writer = Agent(
        name="writer",
        instructions="You write the final answer.",
        model=ScriptedModel(
            [ModelStep(output=[assistant_message("1+2=3.")], usage=_usage(3), response_id="r3")]
        ),
    )
    thought = ResponseReasoningItem(
        id="rs_1", type="reasoning", summary=[Summary(text="Add first.", type="summary_text")]
    )
    return Agent(
        name="triage",
        tools=[add],
        handoffs=[writer],
        model=ScriptedModel(
            [
                ModelStep(
                    output=[thought, function_call("add", {"a": 1, "b": 2}, call_id="c1")],
                    usage=_usage(1),
                    response_id="r1",
                ),
                ModelStep(
                    output=[function_call("transfer_to_writer", {}, call_id="c2")],
                    usage=_usage(2),
                    response_id="r2",
                ),
            ]
        ),
    )


def _approving() -> Any:
    """An agent whose ``delete`` needs approval: its run stops with ``delete`` waiting."""
    from agents.testing import ModelStep, ScriptedModel, function_call

    from agents import Agent, function_tool

    @function_tool(needs_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @function_tool
    def read(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    step = ModelStep(
        output=[
            function_call("read", {"path": "/a"}, call_id="c1"),
            function_call("delete", {"path": "/a"}, call_id="c2"),
        ],
        usage=_usage(1),
        response_id="r1",
    )
    return Agent(name="fs", tools=[delete, read], model=ScriptedModel([step]))


def _follow_stream_events(agent: Any, prompt: Any, **options: Any) -> tuple[Transcript, Any]:
    """``Runner.run_streamed(agent, prompt)`` followed by its ``stream_events()`` alone (no
    ``turnfold.follow(result)``), on a loop of its own: the transcript and the finished run."""
    from agents import Runner

    async def main() -> tuple[Transcript, Any]:
        result = Runner.run_streamed(agent, prompt, **options)
        followed = turnfold.follow(result.stream_events(), display=False)
        async for _ in followed:
            pass
        return followed.transcript, result

    return on_thread(lambda: asyncio.run(main()))


_PROMPTS: dict[str, Any] = {
    "text": "Add 1 and 2, then let the writer answer.",
    "input-items": [
        {"role": "user", "content": "What is 1+2?"},
        {"role": "assistant", "content": "Let me work it out."},
        {"role": "user", "content": "Then let the writer answer."},
    ],
}


@pytest.mark.parametrize("prompt", list(_PROMPTS), ids=list(_PROMPTS))
def test_A2_following_stream_events_equals_the_load_of_the_run_prompt_included(
    prompt: str,
) -> None:
    _agents()
    live, result = _follow_stream_events(_handing_off(), _PROMPTS[prompt])
    loaded = turnfold.load(result)
    users = [e for e in live.entries if isinstance(e, UserMessage)]
    assert users
    assert live.entries[0] is users[0]
    assert [u.text for u in users] == [u.text for u in loaded.entries if isinstance(u, UserMessage)]
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_following_stream_events_shows_the_approval_the_run_stopped_for() -> None:
    """The run's ``interruptions`` (no event carries them) are read off the run the generator
    belongs to: the call waits ``confirming`` with its pending action, as loaded, and no
    warning says approvals are unshown."""
    _agents()
    live, result = _follow_stream_events(_approving(), "Read and delete /a.")
    assert [item.raw_item.call_id for item in result.interruptions] == ["c2"]
    loaded = turnfold.load(result)
    assert [e.text for e in live.entries if isinstance(e, UserMessage)] == ["Read and delete /a."]
    assert [(c.call_id, c.status) for c in live.tool_calls()] == [
        ("c1", "unknown"),
        ("c2", "confirming"),
    ]
    assert [type(e) for e in live.entries].count(PendingAction) == 1
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_following_stream_events_shows_a_session_s_history_before_the_prompt() -> None:
    """A session's history joins the run's input only once the run loop prepared it; read
    off the run ``stream_events()`` belongs to, it shows before the prompt, as loaded."""
    _agents()
    from agents import Runner, SQLiteSession

    session = SQLiteSession("follow-prompt-frames")
    make: Callable[[], Any] = _handing_off
    on_thread(lambda: Runner.run_sync(make(), "First: add 1 and 2.", session=session))
    live, result = _follow_stream_events(make(), "Second: again.", session=session)
    loaded = turnfold.load(result)
    prompts = [e.text for e in live.entries if isinstance(e, UserMessage)]
    assert prompts == ["First: add 1 and 2.", "Second: again."]
    assert live.warnings == []
    assert live == loaded
