"""Spec A-2: what a followed run reads off the generator the framework returned, and when.

smolagents: ``_run_stream`` yields a ``PlanningStep`` and only then replaces its ``timing``
(smolagents 1.26, ``agents.py``: ``planning_step.timing = Timing(start_time=planning_start_time,
...)`` after the ``yield``), so the plan a follower shows at once takes the time the load of the
agent reads when the run goes on. Google ADK: ``runner.run_async(...)``'s frame holds the
``Runner`` (its ``self``), whose ``agent`` is the root agent, whose tree says which tools are
agents (``AgentTool``), so ``agent=`` is needed only for events that are not that generator,
and still wins when given. The shared helper ``generator_arguments`` matches a package too (Agno
runs its streams from several modules of ``agno``).

Every run is the real framework's on an offline model: smolagents on the scripted ``Model``
subclass of ``tests/formats/smolagents_runs.py``; the ADK on the scripted ``BaseLlm`` of
``tests/adk_followed_runs.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

import turnfold
from tests.adk_followed_runs import APP, USER, add, message, scripted
from tests.followed_runs import followed
from tests.formats.loops import run_async
from tests.smolagents_helper_runs import smolagents_runs
from turnfold.formats.frameworks import generator_arguments
from turnfold.model import Thinking, ToolCall, Transcript, UserMessage

# --- smolagents: a plan's time ---------------------------------------------------------------


def _replanning_agent(*, stream_outputs: bool) -> Any:
    """A ``ToolCallingAgent`` that plans at step 1 and plans again at step 3
    (``planning_interval=2``): an initial plan and an updated one, each yielded before
    smolagents sets its time."""
    runs = smolagents_runs()
    from smolagents import ToolCallingAgent

    add, _ = runs._tools()
    replies = [
        runs._message("1. add 1 and 2\n2. add 3 and 4", tokens=7),  # the initial plan
        runs._message("First sum.", ("add", {"a": 1, "b": 2}, "call_1")),
        runs._message("Second sum.", ("add", {"a": 3, "b": 4}, "call_2")),
        runs._message("1. answer 3 and 7", tokens=4),  # the updated plan
        runs._message("Done.", ("final_answer", {"answer": "3 and 7"}, "call_3")),
    ]
    return ToolCallingAgent(
        tools=[add],
        planning_interval=2,
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=stream_outputs,
        model=runs._model_class()(replies),
    )


def _planning_agent(which: str, *, stream_outputs: bool) -> tuple[Any, str]:
    runs = smolagents_runs()
    if which == "plan":
        return runs.make_agent(stream_outputs=stream_outputs), runs.TASK
    return _replanning_agent(stream_outputs=stream_outputs), "Add 1 and 2, then 3 and 4."


def _plans(transcript: Transcript, agent: Any) -> list[tuple[str, str | None]]:
    """The plans shown (the Thinking entries that hold a planning step's plan), with their
    timestamps."""
    plans = [s.plan for s in agent.memory.steps if type(s).__name__ == "PlanningStep"]
    assert plans, "the agent planned"
    return [
        (e.text, e.timestamp)
        for e in transcript.entries
        if isinstance(e, Thinking) and any(plan in e.text for plan in plans)
    ]


@pytest.mark.parametrize("which", ["plan", "replan"])
@pytest.mark.parametrize("given", [False, True], ids=["generator-s-agent", "agent-keyword"])
def test_A2_a_followed_planning_agent_equals_the_load_of_the_agent(which: str, given: bool) -> None:
    """A streaming agent that plans, followed (its generator's agent, or ``agent=``), is the
    load of the agent, entry for entry: each plan at the time smolagents sets after yielding
    it."""
    agent, task = _planning_agent(which, stream_outputs=True)
    live = followed(agent.run(task, stream=True), **({"agent": agent} if given else {}))
    loaded = turnfold.load(agent)
    assert isinstance(live.entries[0], UserMessage)
    assert len(_plans(live, agent)) == (1 if which == "plan" else 2)
    assert _plans(live, agent) == _plans(loaded, agent)
    assert live.warnings == loaded.warnings == []
    assert live == loaded


@pytest.mark.parametrize("which", ["plan", "replan"])
def test_A2_a_followed_plan_takes_its_load_s_time_without_streamed_text(which: str) -> None:
    """Without streaming a step's text arrives after its calls (so the entries' order is the
    stream's), but each plan still takes the time the load gives it."""
    agent, task = _planning_agent(which, stream_outputs=False)
    live = followed(agent.run(task, stream=True))
    assert _plans(live, agent) == _plans(turnfold.load(agent), agent)


# --- Google ADK: the runner's agent tree -----------------------------------------------------


def _researching_runner() -> Any:
    """``calc`` adds, asks ``researcher`` (an ``AgentTool``: it runs in a session of its own,
    which the ADK discards) and answers."""
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.agent_tool import AgentTool

    researcher = LlmAgent(
        name="researcher",
        description="Explains things.",
        model=scripted([["Because sums are sums."]]),
    )
    calc = LlmAgent(
        name="calc",
        model=scripted(
            [
                [("add", {"a": 1, "b": 2}, "call_1")],
                [("researcher", {"request": "why 3?"}, "call_2")],
                ["3, because sums are sums."],
            ]
        ),
        tools=[add, AgentTool(agent=researcher)],
    )
    return InMemoryRunner(agent=calc, app_name=APP)


def _adk_followed(
    runner: Any, *, yield_user_message: bool = False, **options: Any
) -> tuple[Transcript, Any]:
    """``runner.run_async(...)`` followed to its end: the transcript and the final session."""

    async def go() -> tuple[Transcript, Any]:
        service = runner.session_service
        session = await service.create_session(app_name=APP, user_id=USER)
        events = runner.run_async(
            user_id=USER,
            session_id=session.id,
            new_message=message("What is 1+2, and why?"),
            yield_user_message=yield_user_message,
        )
        followed = turnfold.follow(events, display=False, **options)
        async for _ in followed:
            pass
        final = await service.get_session(app_name=APP, user_id=USER, session_id=session.id)
        return followed.transcript, final

    return run_async(go())


def _agent_calls(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (
            c.call_id,
            c.name,
            c.status,
            None if c.subagent is None else (c.subagent.name, c.subagent.steps_missing),
        )
        for c in transcript.tool_calls()
    ]


def _outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What two runs of one script show alike (no clock): each entry's kind and text, each
    call's outline."""
    calls = iter(_agent_calls(transcript))
    return [
        (type(e).__name__, next(calls) if isinstance(e, ToolCall) else getattr(e, "text", None))
        for e in transcript.entries
    ]


def _as_loaded(live: Transcript, loaded: Transcript) -> None:
    """The followed run is the load of its session entry for entry; a prompt read off the
    generator (not yielded) has no time of its own, and the session's fields (its id, app,
    user, update time) are no event's."""
    prompt, *rest = live.entries
    shown, *kept = loaded.entries
    assert isinstance(prompt, UserMessage)
    assert isinstance(shown, UserMessage)
    assert prompt.text == shown.text
    assert prompt.timestamp in (None, shown.timestamp)
    assert rest == kept
    assert live.warnings == loaded.warnings == []


_RESEARCHED = [
    ("call_1", "add", "success", None),
    ("call_2", "researcher", "success", ("researcher", True)),
]


@pytest.mark.parametrize("yield_user_message", [False, True], ids=["prompt-read", "prompt-yielded"])
def test_A2_following_run_async_needs_no_agent_keyword_for_an_agent_tool(
    yield_user_message: bool,
) -> None:
    """Without ``agent=`` the followed run's ``AgentTool`` call is a sub-agent, read off the
    runner: the followed run shows what it shows with ``agent=``, the load of its session
    with the agent (whether the runner yields the user's message or it is read)."""
    pytest.importorskip("google.adk")
    runner = _researching_runner()
    without, session = _adk_followed(runner, yield_user_message=yield_user_message)
    assert _agent_calls(without) == _RESEARCHED
    _as_loaded(without, turnfold.load(session, agent=runner.agent))
    given = _researching_runner()
    with_agent, session = _adk_followed(
        given, yield_user_message=yield_user_message, agent=given.agent
    )
    _as_loaded(with_agent, turnfold.load(session, agent=given.agent))
    assert _outline(without) == _outline(with_agent)
    assert _outline(without)[0] == ("UserMessage", "What is 1+2, and why?")


def test_A2_following_run_async_with_an_agent_keyword_reads_that_agent() -> None:
    """``agent=`` wins over the runner's: an agent whose tree has no ``AgentTool`` leaves the
    call plain, as a load of the session with that agent does."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent

    other = LlmAgent(name="calc", model="unused")
    live, session = _adk_followed(_researching_runner(), agent=other)
    assert [row[3] for row in _agent_calls(live)] == [None, None]
    _as_loaded(live, turnfold.load(session, agent=other))


# --- the shared helper: a framework's package -----------------------------------------------


def _generator_of(module: str) -> Any:
    """A real generator whose code is defined in the module named ``module``."""
    namespace: dict[str, Any] = {"__name__": module}
    exec("def _run_stream(run_response):\n    yield run_response\n", namespace)
    return namespace["_run_stream"]("the run")


@pytest.mark.parametrize(
    ("defined_in", "asked", "functions", "found"),
    [
        ("agno.agent._run", "agno", None, True),
        ("agno.agent._run", "agno.agent._run", ("_run_stream",), True),
        ("agno", "agno", None, True),
        ("agnoctl.run", "agno", None, False),  # another package whose name begins alike
        ("agno.agent._run", "agno", ("_arun_stream",), False),
        ("other.agno", "agno", None, False),
    ],
)
def test_A2_generator_arguments_matches_a_module_or_its_package(
    defined_in: str, asked: str, functions: tuple[str, ...] | None, found: bool
) -> None:
    events = _generator_of(defined_in)
    given = generator_arguments(events, asked, functions)
    assert (given is not None) is found
    if given is not None:
        assert given["run_response"] == "the run"
    for _ in events:
        pass
    assert generator_arguments(events, asked, functions) is None  # ended: no frame
