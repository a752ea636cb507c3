"""Spec A-2: a followed run equals the load of what the framework kept when the run is over,
for what the run's events leave out.

Google ADK: ``runner.run_async(new_message=...)`` appends the user's message to the session
as an event of its own, timed by the ADK (``_build_and_append_user_event`` in
``google/adk/runners.py``), before the agent's first event, and yields it only with
``yield_user_message``; the session's id, app and user are the run's arguments and the
runner's ``app_name``, and its update time and state are the session's once the run is over.
The followed prompt is that recorded event, its time included, and the followed metadata is
the load's.

smolagents: ``agent.run(task, stream=True, reset=False)`` keeps the earlier runs' steps in
``agent.memory.steps`` and appends the new ``TaskStep`` after them (``MultiStepAgent.run``,
smolagents 1.26 ``agents.py``); ``_run_stream`` yields only the new run's steps. The followed
view is the whole conversation, as ``load(agent)`` reads the memory after the run.

Every run is the real framework's on an offline scripted model: the ADK on a ``BaseLlm``
subclass (after ``tests/formats/adk_runs.py``'s ``ScriptedLlm``), smolagents on the scripted
``Model`` subclass of ``tests/formats/smolagents_runs.py``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import AsyncGenerator
from typing import Any

import pytest

import turnfold
from tests.formats.loops import on_thread, run_async
from turnfold.model import Transcript, UserMessage


def _followed(events: Any, **options: Any) -> Transcript:
    followed = turnfold.follow(events, display=False, **options)
    for _ in followed:
        pass
    return followed.transcript


def _prompts(transcript: Transcript) -> list[tuple[str, str | None]]:
    return [(e.text, e.timestamp) for e in transcript.entries if isinstance(e, UserMessage)]


# --- Google ADK -------------------------------------------------------------------------------

_APP, _USER = "leftovers2", "u"
#: ``temp:`` state lives only in the run's own copy of the session (the ADK never stores it).
_STATE = {"topic": "sums", "temp:scratch": "not stored"}


def _scripted(replies: list[list[Any]]) -> Any:
    """A ``BaseLlm`` answering each request with the next reply: text, or ``(name, args, call
    id)`` calls."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    def part(piece: Any) -> Any:
        if isinstance(piece, tuple):
            name, args, call_id = piece
            return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))
        return types.Part(text=piece)

    class ScriptedLlm(BaseLlm):
        model: str = "scripted-1"
        replies: list[list[Any]]

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            reply = self.replies.pop(0)
            yield LlmResponse(
                content=types.Content(role="model", parts=[part(p) for p in reply]),
                model_version="scripted-1",
                usage_metadata=types.GenerateContentResponseUsageMetadata(
                    prompt_token_count=10, candidates_token_count=5, total_token_count=15
                ),
            )

    return ScriptedLlm(replies=replies)


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _adk_runner(runs: int = 1, *, sequential: bool = False) -> Any:
    """``calc`` adds and answers, ``runs`` times; the root agent itself, or the only step of
    a ``SequentialAgent`` (whose run holds its session a generator further down)."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent, SequentialAgent
    from google.adk.runners import InMemoryRunner

    replies: list[list[Any]] = []
    for n in range(runs):
        replies += [[("_add", {"a": n, "b": 2}, f"call_{n}")], [f"{n}+2={n + 2}."]]
    calc = LlmAgent(name="calc", model=_scripted(replies), tools=[_add])
    root: Any = calc
    if sequential:
        with warnings.catch_warnings():  # deprecated in favour of Workflow, still supported
            warnings.simplefilter("ignore", DeprecationWarning)
            root = SequentialAgent(name="steps", sub_agents=[calc])
    return InMemoryRunner(agent=root, app_name=_APP)


def _message(text: str) -> Any:
    from google.genai import types

    return types.Content(role="user", parts=[types.Part(text=text)])


def _adk_runs(
    runner: Any, prompts: list[str], *, yield_user_message: bool = False
) -> tuple[list[Transcript], Any]:
    """Each prompt a ``runner.run_async(...)`` in one session, followed to its end (the first
    with a state delta): the followed transcripts and the final session."""

    async def go() -> tuple[list[Transcript], Any]:
        service = runner.session_service
        session = await service.create_session(app_name=_APP, user_id=_USER)
        followed = []
        for n, prompt in enumerate(prompts):
            events = runner.run_async(
                user_id=_USER,
                session_id=session.id,
                new_message=_message(prompt),
                state_delta=dict(_STATE) if n == 0 else None,
                yield_user_message=yield_user_message,
            )
            run = turnfold.follow(events, display=False)
            async for _ in run:
                pass
            followed.append(run.transcript)
        final = await service.get_session(app_name=_APP, user_id=_USER, session_id=session.id)
        return followed, final

    return run_async(go())


@pytest.mark.parametrize("sequential", [False, True], ids=["llm-agent", "sequential-agent"])
@pytest.mark.parametrize("yield_user_message", [False, True], ids=["prompt-read", "prompt-yielded"])
def test_A2_a_followed_adk_run_equals_the_load_of_its_session_prompt_time_and_metadata(
    yield_user_message: bool, sequential: bool
) -> None:
    """The prompt read off the generator is the session's own user event, at the time the
    ADK recorded it; the session's id, app, user, update time and stored state are the
    followed run's metadata as they are the load's: the followed run is the load."""
    runner = _adk_runner(sequential=sequential)
    (live,), session = _adk_runs(runner, ["What is 0+2?"], yield_user_message=yield_user_message)
    loaded = turnfold.load(session)
    (recorded,) = [e for e in session.events if e.author == "user"]
    assert _prompts(live) == _prompts(loaded) == [("What is 0+2?", _iso(recorded.timestamp))]
    assert {k: live.metadata.get(k) for k in ("session_id", "app_name", "user_id")} == {
        "session_id": session.id,
        "app_name": _APP,
        "user_id": _USER,
    }
    assert loaded.metadata["state"] == {"topic": "sums"}  # temp: state is never stored
    assert live.metadata == loaded.metadata
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_a_followed_second_adk_run_shows_its_own_prompt_at_its_recorded_time() -> None:
    """A second run in the session: its prompt is the user event of its own invocation (not
    the first run's), and its metadata the session's after it (the later update time)."""
    prompts = ["What is 0+2?", "And 1+2?"]
    (first, second), session = _adk_runs(_adk_runner(2), prompts)
    users = [e for e in session.events if e.author == "user" and e.content]
    assert [u.content.parts[0].text for u in users] == prompts
    assert _prompts(first) == [(prompts[0], _iso(users[0].timestamp))]
    assert _prompts(second) == [(prompts[1], _iso(users[1].timestamp))]
    loaded = turnfold.load(session)
    assert second.metadata == loaded.metadata
    assert first.metadata["updated_at"] < second.metadata["updated_at"]
    # Each followed run numbers its own entries; the session's load numbers them all.
    unnumbered = [dataclasses.replace(e, id="") for e in first.entries + second.entries]
    assert unnumbered == [dataclasses.replace(e, id="") for e in loaded.entries]


def test_A2_following_the_sync_adk_run_keeps_its_prompt_and_session_names() -> None:
    """``runner.run`` runs ``run_async`` on a thread of its own, whose session the generator
    does not hold: the prompt is still shown first (its recorded time read from the runner's
    session service when the run is over: ``tests/test_follow_leftovers3.py``), and the
    session's id, app and user come from the run's arguments."""
    runner = _adk_runner()

    def go() -> tuple[Transcript, Any]:
        service = runner.session_service
        session = run_async(service.create_session(app_name=_APP, user_id=_USER))
        events = runner.run(user_id=_USER, session_id=session.id, new_message=_message("0+2?"))
        return _followed(events), session

    live, session = on_thread(go)
    stored = run_async(
        runner.session_service.get_session(app_name=_APP, user_id=_USER, session_id=session.id)
    )
    (recorded,) = [e for e in stored.events if e.author == "user"]
    assert _prompts(live) == [("0+2?", _iso(recorded.timestamp))]
    assert live.entries[0] is next(e for e in live.entries if isinstance(e, UserMessage))
    assert {k: live.metadata.get(k) for k in ("session_id", "app_name", "user_id")} == {
        "session_id": session.id,
        "app_name": _APP,
        "user_id": _USER,
    }
    assert live.warnings == []


def _iso(epoch: float) -> str | None:
    from turnfold.formats.openai_responses import unix_timestamp

    return unix_timestamp(epoch)


# --- smolagents: reset=False ------------------------------------------------------------------


def _smolagents_runs() -> Any:
    pytest.importorskip("smolagents")
    from tests.formats import smolagents_runs

    return smolagents_runs


def _conversing_agent(*, stream_outputs: bool) -> Any:
    """A ``ToolCallingAgent`` for two runs: the first adds and asks its managed agent
    ``helper``, then answers; the second adds again and answers."""
    runs = _smolagents_runs()
    from smolagents import ToolCallingAgent

    add, _ = runs._tools()
    helper = runs._managed(
        "helper",
        [
            runs._message(None, ("add", {"a": 5, "b": 6}, "h_1"), tokens=3),
            runs._message(None, ("final_answer", {"answer": "11"}, "h_2"), tokens=2),
        ],
    )
    replies = [
        runs._message("First sum.", ("add", {"a": 1, "b": 2}, "call_1")),
        runs._message(None, ("helper", {"task": "add 5 and 6"}, "call_2")),
        runs._message(None, ("final_answer", {"answer": "3 and 11"}, "call_3")),
        runs._message("Second sum.", ("add", {"a": 3, "b": 4}, "call_4")),
        runs._message(None, ("final_answer", {"answer": "7"}, "call_5")),
    ]
    return ToolCallingAgent(
        tools=[add],
        managed_agents=[helper],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=stream_outputs,
        model=runs._model_class()(replies),
    )


_FIRST, _SECOND = "Add 1 and 2, and ask the helper for 5+6.", "Now add 3 and 4."


@pytest.mark.parametrize("given", [False, True], ids=["generator-s-agent", "agent-keyword"])
def test_A2_a_followed_run_with_reset_false_shows_the_whole_conversation(given: bool) -> None:
    """The second run (``reset=False``) followed shows the first run's task, its steps and
    its helper's run, then the new task and its steps: the load of the agent after the run,
    entry for entry (call batches numbered across both runs, as the memory's steps are)."""
    agent = _conversing_agent(stream_outputs=True)
    agent.run(_FIRST)
    options = {"agent": agent} if given else {}
    live = _followed(agent.run(_SECOND, stream=True, reset=False), **options)
    loaded = turnfold.load(agent)
    assert [text for text, _ in _prompts(live)] == [_FIRST, _SECOND]
    assert [(c.call_id, c.batch_id) for c in live.tool_calls()] == [
        ("call_1", "step-1"),
        ("call_2", "step-2"),
        ("call_4", "step-4"),
    ]
    helper = live.tool_calls()[1].subagent
    assert helper is not None
    assert (helper.name, helper.task, helper.steps_missing) == ("helper", "add 5 and 6", False)
    assert live.warnings == loaded.warnings == []
    assert live.metadata == loaded.metadata
    assert live == loaded


def test_A2_a_followed_run_with_reset_false_without_streamed_text() -> None:
    """Without streamed text the new run's entries come in the stream's order (a step's text
    after its calls, as for any followed run), but the conversation up to the new task is the
    load's, entry for entry, and every call is the load's."""
    agent = _conversing_agent(stream_outputs=False)
    agent.run(_FIRST)
    live = _followed(agent.run(_SECOND, stream=True, reset=False))
    loaded = turnfold.load(agent)
    second = [n for n, e in enumerate(loaded.entries) if isinstance(e, UserMessage)][-1]
    assert live.entries[: second + 1] == loaded.entries[: second + 1]
    # The new step's text comes after its call live, so the call's entry id is one ahead.
    unnumbered = [dataclasses.replace(c, id="") for c in live.tool_calls()]
    assert unnumbered == [dataclasses.replace(c, id="") for c in loaded.tool_calls()]
    assert live.warnings == loaded.warnings == []


def test_A2_a_followed_run_with_reset_shows_only_its_own_task() -> None:
    """The default ``reset=True`` clears the memory first: the followed run is the new task
    and its steps alone, as the load of the agent shows them. (The load also warns that the
    helper's memory still holds its run of the first task, which no step of this run made.)"""
    agent = _conversing_agent(stream_outputs=True)
    agent.run(_FIRST)
    live = _followed(agent.run(_SECOND, stream=True))
    loaded = turnfold.load(agent)
    assert [text for text, _ in _prompts(live)] == [_SECOND]
    assert live.entries == loaded.entries
    assert live.metadata == loaded.metadata
