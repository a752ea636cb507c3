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

Every run is the real framework's on an offline scripted model: the ADK's of
``tests/adk_followed_runs.py``, smolagents' of ``tests/smolagents_helper_runs.py``.
"""

from __future__ import annotations

import dataclasses

import pytest

import turnfold
from tests.adk_followed_runs import APP, USER, async_runs, calc_runner, iso, sync_runs
from tests.followed_runs import followed, user_prompts
from tests.smolagents_helper_runs import FIRST, SECOND, agent_with_helper
from turnfold.model import UserMessage

# --- Google ADK -------------------------------------------------------------------------------


@pytest.mark.parametrize("sequential", [False, True], ids=["llm-agent", "sequential-agent"])
@pytest.mark.parametrize("yield_user_message", [False, True], ids=["prompt-read", "prompt-yielded"])
def test_A2_a_followed_adk_run_equals_the_load_of_its_session_prompt_time_and_metadata(
    yield_user_message: bool, sequential: bool
) -> None:
    """The prompt read off the generator is the session's own user event, at the time the
    ADK recorded it; the session's id, app, user, update time and stored state are the
    followed run's metadata as they are the load's: the followed run is the load."""
    runner = calc_runner(sequential=sequential)
    (live,), session = async_runs(runner, ["What is 0+2?"], yield_user_message=yield_user_message)
    loaded = turnfold.load(session)
    (recorded,) = [e for e in session.events if e.author == "user"]
    assert user_prompts(live) == user_prompts(loaded) == [("What is 0+2?", iso(recorded.timestamp))]
    assert {k: live.metadata.get(k) for k in ("session_id", "app_name", "user_id")} == {
        "session_id": session.id,
        "app_name": APP,
        "user_id": USER,
    }
    assert loaded.metadata["state"] == {"topic": "sums"}  # temp: state is never stored
    assert live.metadata == loaded.metadata
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_a_followed_second_adk_run_shows_its_own_prompt_at_its_recorded_time() -> None:
    """A second run in the session: its prompt is the user event of its own invocation (not
    the first run's), and its metadata the session's after it (the later update time)."""
    prompts = ["What is 0+2?", "And 1+2?"]
    (first, second), session = async_runs(calc_runner(2), prompts)
    users = [e for e in session.events if e.author == "user" and e.content]
    assert [u.content.parts[0].text for u in users] == prompts
    assert user_prompts(first) == [(prompts[0], iso(users[0].timestamp))]
    assert user_prompts(second) == [(prompts[1], iso(users[1].timestamp))]
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
    (live,), session = sync_runs(calc_runner(), ["0+2?"])
    (recorded,) = [e for e in session.events if e.author == "user"]
    assert user_prompts(live) == [("0+2?", iso(recorded.timestamp))]
    assert live.entries[0] is next(e for e in live.entries if isinstance(e, UserMessage))
    assert {k: live.metadata.get(k) for k in ("session_id", "app_name", "user_id")} == {
        "session_id": session.id,
        "app_name": APP,
        "user_id": USER,
    }
    assert live.warnings == []


# --- smolagents: reset=False ------------------------------------------------------------------


@pytest.mark.parametrize("given", [False, True], ids=["generator-s-agent", "agent-keyword"])
def test_A2_a_followed_run_with_reset_false_shows_the_whole_conversation(given: bool) -> None:
    """The second run (``reset=False``) followed shows the first run's task, its steps and
    its helper's run, then the new task and its steps: the load of the agent after the run,
    entry for entry (call batches numbered across both runs, as the memory's steps are)."""
    agent = agent_with_helper(stream_outputs=True)
    agent.run(FIRST)
    options = {"agent": agent} if given else {}
    live = followed(agent.run(SECOND, stream=True, reset=False), **options)
    loaded = turnfold.load(agent)
    assert [text for text, _ in user_prompts(live)] == [FIRST, SECOND]
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
    agent = agent_with_helper(stream_outputs=False)
    agent.run(FIRST)
    live = followed(agent.run(SECOND, stream=True, reset=False))
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
    agent = agent_with_helper(stream_outputs=True)
    agent.run(FIRST)
    live = followed(agent.run(SECOND, stream=True))
    loaded = turnfold.load(agent)
    assert [text for text, _ in user_prompts(live)] == [SECOND]
    assert live.entries == loaded.entries
    assert live.metadata == loaded.metadata
