"""Spec A-2: a followed run equals the load of what the framework kept when the run is over,
for what happens after the run's last event and what only the framework's store holds.

smolagents: ``agent.run(task, stream=True)`` (``reset=True``) clears the agent's memory but
not its managed agents' (``MultiStepAgent.run``, smolagents 1.26 ``agents.py``): a helper's
memory still holds its run of the earlier task, which no step of this run made. A load of the
agent says so in a warning; the followed run says the same.

Google ADK: with ``EventsCompactionConfig`` on the ``App``, the runner summarises the session
after the invocation's last event (``Runner._run_post_invocation_compaction``, called after
the agent's events in ``google/adk/runners.py`` and ``workflow/_node_runner_utils.py``) and
appends the summary to the session without yielding it. The summarizer is the config's own
(``LlmEventSummarizer(llm=...)``), else the root agent's model
(``apps/compaction.py``, ``_ensure_compaction_summarizer``): here a scripted ``BaseLlm``, so
nothing reaches a network. The sync ``runner.run`` runs ``run_async`` on a thread of its own
(``Runner.run``): its generator holds no session, and the runner's session service gives it
when the run is over.

Every run is the real framework's on an offline scripted model: the ADK's of
``tests/adk_followed_runs.py``, smolagents' of ``tests/smolagents_helper_runs.py``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import turnfold
from tests.adk_followed_runs import (
    APP,
    SUMMARY,
    USER,
    async_runs,
    calc_runner,
    failing_after_the_run,
    iso,
    message,
    sync_runs,
)
from tests.followed_runs import followed, user_prompts
from tests.formats.loops import on_thread, run_async
from tests.smolagents_helper_runs import FIRST, SECOND, agent_with_helper
from turnfold.model import AssistantText, CompactionBoundary, Transcript

# --- smolagents: a helper's run of an earlier task -------------------------------------------


@pytest.mark.parametrize("given", [False, True], ids=["generator-s-agent", "agent-keyword"])
def test_A2_a_followed_run_warns_of_a_helper_run_it_did_not_make_as_the_load_does(
    given: bool,
) -> None:
    """The second run (``reset=True``) makes no call of the helper, whose memory still holds
    its run of the first task: the load of the agent warns that run is not shown, and the
    followed run has the same warning and the same entries."""
    agent = agent_with_helper()
    agent.run(FIRST)
    options = {"agent": agent} if given else {}
    live = followed(agent.run(SECOND, stream=True), **options)
    loaded = turnfold.load(agent)
    reasons = [w.reason for w in loaded.warnings]
    assert reasons == ["helper's kept run ran outside the steps: not shown"]
    assert [w.reason for w in live.warnings] == reasons
    assert [w.line for w in live.warnings] == [w.line for w in loaded.warnings]
    assert all(c.subagent is None for c in live.tool_calls())
    assert live.entries == loaded.entries
    assert live.metadata == loaded.metadata


def test_A2_a_followed_run_that_calls_its_helper_has_no_warning() -> None:
    """The first run calls the helper: its kept run is this run's, nested under the call, and
    neither the followed run nor the load warns."""
    agent = agent_with_helper()
    live = followed(agent.run(FIRST, stream=True))
    loaded = turnfold.load(agent)
    helper = live.tool_calls()[1].subagent
    assert helper is not None
    assert helper.name == "helper"
    assert live.warnings == loaded.warnings == []
    assert live == loaded


# --- Google ADK: compaction after the last event, and the sync run ---------------------------


def _compactions(transcript: Transcript) -> list[CompactionBoundary]:
    return [e for e in transcript.entries if isinstance(e, CompactionBoundary)]


@pytest.mark.parametrize("sequential", [False, True], ids=["llm-agent", "sequential-agent"])
@pytest.mark.parametrize("runs", [async_runs, sync_runs], ids=["run_async", "run"])
def test_A2_a_followed_adk_run_shows_the_compaction_appended_after_its_last_event(
    runs: Any, sequential: bool
) -> None:
    """The summary the runner appends after the last event, never yielded, is in the session
    the run held: the followed run shows it where the load does, as its last entry."""
    runner = calc_runner(compaction=True, sequential=sequential)
    (live,), session = runs(runner, ["What is 0+2?"])
    (summary,) = [e for e in session.events if e.actions.compaction]
    assert session.events[-1] is summary
    loaded = turnfold.load(session)
    assert [c.summary for c in _compactions(loaded)] == [SUMMARY]
    assert live.entries[-1] == loaded.entries[-1] == _compactions(loaded)[0]
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_each_followed_adk_run_shows_its_own_compaction_once() -> None:
    """Two runs, each summarised when it is over: each followed run shows the summary made
    after it, not the one before it, and the two together are the load of the session."""
    prompts = ["What is 0+2?", "And 1+2?"]
    (first, second), session = async_runs(calc_runner(2, compaction=True), prompts)
    summaries = [e for e in session.events if e.actions.compaction]
    assert len(summaries) == 2
    assert [len(_compactions(t)) for t in (first, second)] == [1, 1]
    assert [c.timestamp for c in _compactions(first) + _compactions(second)] == [
        c.timestamp for c in _compactions(turnfold.load(session))
    ]
    # Each followed run numbers its own entries; the session's load numbers them all.
    unnumbered = [dataclasses.replace(e, id="") for e in first.entries + second.entries]
    assert unnumbered == [dataclasses.replace(e, id="") for e in turnfold.load(session).entries]


@pytest.mark.parametrize("in_loop", [False, True], ids=["no-loop", "running-loop"])
def test_A2_a_followed_sync_adk_run_equals_the_load_of_its_session(in_loop: bool) -> None:
    """``runner.run`` holds no session: when the run is over the runner's session service
    gives it, and the prompt takes the time the ADK recorded for it, and the metadata the
    session's update time and state, as a load of the session reads them."""
    (live,), session = sync_runs(calc_runner(), ["What is 0+2?"], in_loop=in_loop)
    loaded = turnfold.load(session)
    (recorded,) = [e for e in session.events if e.author == "user" and e.content]
    assert user_prompts(live) == user_prompts(loaded) == [("What is 0+2?", iso(recorded.timestamp))]
    assert loaded.metadata["state"] == {"topic": "sums"}
    assert live.metadata == loaded.metadata
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_a_second_followed_sync_adk_run_has_its_own_prompt_time_and_the_later_update() -> None:
    """The second sync run's prompt is the user event of its own invocation, and its update
    time the session's after it."""
    prompts = ["What is 0+2?", "And 1+2?"]
    (first, second), session = sync_runs(calc_runner(2), prompts)
    users = [e for e in session.events if e.author == "user" and e.content]
    assert user_prompts(first) == [(prompts[0], iso(users[0].timestamp))]
    assert user_prompts(second) == [(prompts[1], iso(users[1].timestamp))]
    assert second.metadata == turnfold.load(session).metadata
    assert first.metadata["updated_at"] < second.metadata["updated_at"]


def test_A2_a_sync_adk_run_whose_session_service_fails_is_shown_with_a_warning() -> None:
    """The session service fails when asked for the session after the run (its first
    ``get_session`` is the runner's own): the followed run is shown as the stream gave it,
    its prompt without a time, and a warning names the session and the error."""
    runner = calc_runner()
    service = runner.session_service = failing_after_the_run()
    session = run_async(service.create_session(app_name=APP, user_id=USER))
    events = runner.run(user_id=USER, session_id=session.id, new_message=message("0+2?"))
    live = on_thread(lambda: followed(events))
    assert user_prompts(live) == [("0+2?", None)]
    assert [e.text for e in live.entries if isinstance(e, AssistantText)] == ["0+2=2."]
    assert [w.reason for w in live.warnings] == [
        f"the session {session.id!r} could not be read from the runner's session service "
        "(ConnectionError: the store went away): the prompt has no time and the session's "
        "state is not shown"
    ]
    assert "updated_at" not in live.metadata
