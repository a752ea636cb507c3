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
from turnfold.model import AssistantText, CompactionBoundary, Transcript, UserMessage


def _followed(events: Any, **options: Any) -> Transcript:
    followed = turnfold.follow(events, display=False, **options)
    for _ in followed:
        pass
    return followed.transcript


def _prompts(transcript: Transcript) -> list[tuple[str, str | None]]:
    return [(e.text, e.timestamp) for e in transcript.entries if isinstance(e, UserMessage)]


def _iso(epoch: float) -> str | None:
    from turnfold.formats.openai_responses import unix_timestamp

    return unix_timestamp(epoch)


# --- smolagents: a helper's run of an earlier task -------------------------------------------


def _agent_with_helper() -> Any:
    """A ``ToolCallingAgent`` for two runs: the first adds and asks its managed agent
    ``helper``, then answers; the second adds again and answers, without the helper."""
    pytest.importorskip("smolagents")
    from smolagents import ToolCallingAgent

    from tests.formats import smolagents_runs as runs

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
        stream_outputs=True,
        model=runs._model_class()(replies),
    )


@pytest.mark.parametrize("given", [False, True], ids=["generator-s-agent", "agent-keyword"])
def test_A2_a_followed_run_warns_of_a_helper_run_it_did_not_make_as_the_load_does(
    given: bool,
) -> None:
    """The second run (``reset=True``) makes no call of the helper, whose memory still holds
    its run of the first task: the load of the agent warns that run is not shown, and the
    followed run has the same warning and the same entries."""
    agent = _agent_with_helper()
    agent.run("Add 1 and 2, and ask the helper for 5+6.")
    options = {"agent": agent} if given else {}
    live = _followed(agent.run("Now add 3 and 4.", stream=True), **options)
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
    agent = _agent_with_helper()
    live = _followed(agent.run("Add 1 and 2, and ask the helper for 5+6.", stream=True))
    loaded = turnfold.load(agent)
    helper = live.tool_calls()[1].subagent
    assert helper is not None
    assert helper.name == "helper"
    assert live.warnings == loaded.warnings == []
    assert live == loaded


# --- Google ADK: compaction after the last event, and the sync run ---------------------------

_APP, _USER = "leftovers3", "u"
_SUMMARY = "The user asked for sums; the agent added them."


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


def _adk_runner(runs: int = 1, *, compaction: bool = False, sequential: bool = False) -> Any:
    """``calc`` adds and answers, ``runs`` times, in an ``App``: the root agent itself, or the
    only step of a ``SequentialAgent`` (run by ``_run_with_trace``, which compacts apart);
    with ``compaction``, the app summarises every invocation when it is over
    (``compaction_interval=1``) with a scripted summarizer of its own."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent, SequentialAgent
    from google.adk.apps.app import App, EventsCompactionConfig
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
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
    config = None
    if compaction:
        summarizer = LlmEventSummarizer(llm=_scripted([[_SUMMARY] for _ in range(runs)]))
        config = EventsCompactionConfig(
            compaction_interval=1, overlap_size=0, summarizer=summarizer
        )
    app = App(name=_APP, root_agent=root, events_compaction_config=config)
    return InMemoryRunner(app=app)


def _message(text: str) -> Any:
    from google.genai import types

    return types.Content(role="user", parts=[types.Part(text=text)])


def _session(runner: Any, session_id: str) -> Any:
    return run_async(
        runner.session_service.get_session(app_name=_APP, user_id=_USER, session_id=session_id)
    )


def _async_runs(runner: Any, prompts: list[str]) -> tuple[list[Transcript], Any]:
    """Each prompt a ``runner.run_async(...)`` in one session, followed to its end (the first
    with a state delta): the followed transcripts and the final session."""

    async def go() -> tuple[list[Transcript], str]:
        session = await runner.session_service.create_session(app_name=_APP, user_id=_USER)
        followed = []
        for n, prompt in enumerate(prompts):
            events = runner.run_async(
                user_id=_USER,
                session_id=session.id,
                new_message=_message(prompt),
                state_delta={"topic": "sums"} if n == 0 else None,
            )
            run = turnfold.follow(events, display=False)
            async for _ in run:
                pass
            followed.append(run.transcript)
        return followed, session.id

    followed, session_id = run_async(go())
    return followed, _session(runner, session_id)


def _sync_runs(
    runner: Any, prompts: list[str], *, in_loop: bool = False
) -> tuple[list[Transcript], Any]:
    """Each prompt a ``runner.run(...)`` (the sync form) in one session, followed to its end
    (the first with a state delta), from a thread with no event loop, as a script runs it, or
    (``in_loop``) from a coroutine, as a notebook's cell runs it beside the kernel's loop."""

    def go() -> tuple[list[Transcript], str]:
        service = runner.session_service
        session = run_async(service.create_session(app_name=_APP, user_id=_USER))
        followed = []
        for n, prompt in enumerate(prompts):
            events = runner.run(
                user_id=_USER,
                session_id=session.id,
                new_message=_message(prompt),
                state_delta={"topic": "sums"} if n == 0 else None,
            )
            followed.append(_followed(events))
        return followed, session.id

    async def in_a_loop() -> tuple[list[Transcript], str]:
        return go()

    followed, session_id = run_async(in_a_loop()) if in_loop else on_thread(go)
    return followed, _session(runner, session_id)


def _compactions(transcript: Transcript) -> list[CompactionBoundary]:
    return [e for e in transcript.entries if isinstance(e, CompactionBoundary)]


@pytest.mark.parametrize("sequential", [False, True], ids=["llm-agent", "sequential-agent"])
@pytest.mark.parametrize("runs", [_async_runs, _sync_runs], ids=["run_async", "run"])
def test_A2_a_followed_adk_run_shows_the_compaction_appended_after_its_last_event(
    runs: Any, sequential: bool
) -> None:
    """The summary the runner appends after the last event, never yielded, is in the session
    the run held: the followed run shows it where the load does, as its last entry."""
    runner = _adk_runner(compaction=True, sequential=sequential)
    (live,), session = runs(runner, ["What is 0+2?"])
    (summary,) = [e for e in session.events if e.actions.compaction]
    assert session.events[-1] is summary
    loaded = turnfold.load(session)
    assert [c.summary for c in _compactions(loaded)] == [_SUMMARY]
    assert live.entries[-1] == loaded.entries[-1] == _compactions(loaded)[0]
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_each_followed_adk_run_shows_its_own_compaction_once() -> None:
    """Two runs, each summarised when it is over: each followed run shows the summary made
    after it, not the one before it, and the two together are the load of the session."""
    prompts = ["What is 0+2?", "And 1+2?"]
    (first, second), session = _async_runs(_adk_runner(2, compaction=True), prompts)
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
    (live,), session = _sync_runs(_adk_runner(), ["What is 0+2?"], in_loop=in_loop)
    loaded = turnfold.load(session)
    (recorded,) = [e for e in session.events if e.author == "user" and e.content]
    assert _prompts(live) == _prompts(loaded) == [("What is 0+2?", _iso(recorded.timestamp))]
    assert loaded.metadata["state"] == {"topic": "sums"}
    assert live.metadata == loaded.metadata
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_a_second_followed_sync_adk_run_has_its_own_prompt_time_and_the_later_update() -> None:
    """The second sync run's prompt is the user event of its own invocation, and its update
    time the session's after it."""
    prompts = ["What is 0+2?", "And 1+2?"]
    (first, second), session = _sync_runs(_adk_runner(2), prompts)
    users = [e for e in session.events if e.author == "user" and e.content]
    assert _prompts(first) == [(prompts[0], _iso(users[0].timestamp))]
    assert _prompts(second) == [(prompts[1], _iso(users[1].timestamp))]
    assert second.metadata == turnfold.load(session).metadata
    assert first.metadata["updated_at"] < second.metadata["updated_at"]


def test_A2_a_sync_adk_run_whose_session_service_fails_is_shown_with_a_warning() -> None:
    """The session service fails when asked for the session after the run (its first
    ``get_session`` is the runner's own): the followed run is shown as the stream gave it,
    its prompt without a time, and a warning names the session and the error."""
    from google.adk.sessions import InMemorySessionService

    class FailingAfterTheRun(InMemorySessionService):
        calls = 0

        async def get_session(self, **names: Any) -> Any:
            self.calls += 1
            if self.calls > 1:
                raise ConnectionError("the store went away")
            return await super().get_session(**names)

    runner = _adk_runner()
    service = FailingAfterTheRun()
    runner.session_service = service
    session = run_async(service.create_session(app_name=_APP, user_id=_USER))
    events = runner.run(user_id=_USER, session_id=session.id, new_message=_message("0+2?"))
    live = on_thread(lambda: _followed(events))
    assert _prompts(live) == [("0+2?", None)]
    assert [e.text for e in live.entries if isinstance(e, AssistantText)] == ["0+2=2."]
    assert [w.reason for w in live.warnings] == [
        f"the session {session.id!r} could not be read from the runner's session service "
        "(ConnectionError: the store went away): the prompt has no time and the session's "
        "state is not shown"
    ]
    assert "updated_at" not in live.metadata
