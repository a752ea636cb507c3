"""Spec A-2 (with P-3, P-7): a followed run that fails or is stopped ends as the load of what
the framework kept, entries, statuses, warnings and the turn's status alike.

smolagents (1.26, ``agents.py``): ``_run_stream`` yields the step it was in from its
``finally`` before an exception leaves it, so the follower has the failed step when the
stream raises. A model error is re-raised as ``AgentGenerationError`` (the step saved empty);
``agent.interrupt()`` makes the next step raise ``AgentError("Agent interrupted.")`` and
stays set on the agent until its next run; a ``KeyboardInterrupt`` passes through unwrapped.
A load of the agent in the ``except`` block around its run reads the same.

Google ADK (2.13, ``runners.py``): ``run_async``'s session is read off its generator's frames
(``session_of_run``); where that finds none, the runner's session service gives it, awaited
on the loop that ran the stream. ``Runner.run`` runs ``run_async`` on a thread of its own and,
when its generator is closed early, cancels the invocation and joins that thread.

Every run is the real framework's on an offline scripted model: smolagents on the ``Model``
subclass of ``tests/formats/smolagents_runs.py``, the ADK on the ``BaseLlm`` subclass of
``tests/adk_followed_runs.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Any

import pytest

import turnfold
from tests.adk_followed_runs import (
    APP,
    USER,
    add,
    async_runs,
    calc_runner,
    failing_after_the_run,
    iso,
    message,
    scripted,
    stored_session,
)
from tests.formats.loops import on_thread, run_async
from tests.smolagents_helper_runs import smolagents_runs
from turnfold.model import AbortMarker, AssistantError, AssistantText, Transcript
from turnfold.process import project
from turnfold.render.viewmodel import Turn


def _statuses(transcript: Transcript) -> list[str]:
    return [node.header.status for node in project(transcript) if isinstance(node, Turn)]


# --- smolagents ------------------------------------------------------------------------------

_TASK = "Add 1 and 2, then answer."


def _agent(replies: list[Any], *, code: bool = False, **options: Any) -> Any:
    """A streaming agent whose scripted model returns ``replies`` in order, and raises a reply
    that is an exception (an API error, a Ctrl-C) instead of answering."""
    runs = smolagents_runs()
    from smolagents import CodeAgent, ToolCallingAgent

    class RaisingModel(runs._model_class()):  # type: ignore[misc]
        def generate_stream(self, messages: Any, **kwargs: Any) -> Iterator[Any]:
            if isinstance(self.replies[0], BaseException):
                raise self.replies.pop(0)
            yield from super().generate_stream(messages, **kwargs)

    add, explode = runs._tools()
    make: Any = CodeAgent if code else ToolCallingAgent
    return make(
        tools=[add, explode],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=True,
        model=RaisingModel(replies),
        **options,
    )


def _followed_then_loaded(
    agent: Any, on_event: Callable[[Any], None] | None = None
) -> tuple[Transcript, Transcript, BaseException | None]:
    """The run followed to its end, and ``load(agent)`` where it ended: in the ``except``
    block around the loop when the stream raised, as a notebook user writes it."""
    followed = turnfold.follow(agent.run(_TASK, stream=True), display=False)
    try:
        for event in followed:
            if on_event is not None:
                on_event(event)
    except BaseException as raised:  # a KeyboardInterrupt too: the scripted model's
        return followed.transcript, turnfold.load(agent), raised
    return followed.transcript, turnfold.load(agent), None


def _message(text: str | None, *calls: tuple[str, Any, str]) -> Any:
    return smolagents_runs()._message(text, *calls)


_FAILURE = "rate limited: 429 Too Many Requests"


def _first_step(code: bool) -> Any:
    if code:
        return _message("Thought: add.\n<code>\nprint(add(a=1, b=2))\n</code>")
    return _message("Let me add.", ("add", {"a": 1, "b": 2}, "call_1"))


@pytest.mark.parametrize("code", [False, True], ids=["tool-calling", "code"])
@pytest.mark.parametrize("at", ["first-step", "second-step"])
def test_A2_a_followed_model_error_ends_as_the_load_in_the_except_block(
    code: bool, at: str
) -> None:
    """The model raises (``AgentGenerationError``): the followed run ends on the same error
    as the load, dated at the failed step's end, and the turn failed in both."""
    replies = [RuntimeError(_FAILURE)]
    if at == "second-step":
        replies.insert(0, _first_step(code))
    live, loaded, raised = _followed_then_loaded(_agent(replies, code=code))
    assert type(raised).__name__ == "AgentGenerationError"
    error = live.entries[-1]
    assert isinstance(error, AssistantError)
    assert error.message.endswith(f"\n{_FAILURE}")
    assert error.timestamp is not None
    assert _statuses(live) == _statuses(loaded) == ["failed"]
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


@pytest.mark.parametrize("held", [True, False], ids=["error-held", "switch-only"])
def test_A2_an_interrupted_run_is_stopped_followed_and_loaded(held: bool) -> None:
    """``agent.interrupt()`` after the first step: the stream raises ``AgentError("Agent
    interrupted.")``. Followed and loaded, the run shows its first step, then the user's
    stop; the turn is stopped, not failed. A load after the ``except`` block (the error no
    longer held) reads the agent's ``interrupt_switch``, still set."""
    agent = _agent(
        [
            _message("Let me add.", ("add", {"a": 1, "b": 2}, "call_1")),
            _message(None, ("final_answer", {"answer": "3"}, "call_2")),
        ]
    )

    def interrupt(event: Any) -> None:
        if type(event).__name__ == "ActionStep":
            agent.interrupt()

    live, loaded, raised = _followed_then_loaded(agent, interrupt)
    assert (type(raised).__name__, str(raised)) == ("AgentError", "Agent interrupted.")
    if not held:
        loaded = turnfold.load(agent)
    assert [(c.name, c.status) for c in live.tool_calls()] == [("add", "success")]
    marker = live.entries[-1]
    assert isinstance(marker, AbortMarker)
    assert marker.reason == "Interrupted by the user"
    assert not [e for e in live.entries if isinstance(e, (AssistantError, AssistantText))]
    assert _statuses(live) == _statuses(loaded) == ["stopped"]
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


def test_A2_a_keyboard_interrupt_in_the_model_call_is_a_stop_followed_and_loaded() -> None:
    """A Ctrl-C while the model answers the second step: smolagents does not wrap it, the
    step is saved empty. Followed and loaded where it was raised, the turn was stopped by the
    user at that step's end, not failed."""
    agent = _agent([_first_step(False), KeyboardInterrupt()])
    live, loaded, raised = _followed_then_loaded(agent)
    assert isinstance(raised, KeyboardInterrupt)
    marker = live.entries[-1]
    assert isinstance(marker, AbortMarker)
    assert marker.reason == "Interrupted by the user"
    assert marker.timestamp is not None
    assert _statuses(live) == _statuses(loaded) == ["stopped"]
    assert live.entries == loaded.entries


@pytest.mark.parametrize(
    "case",
    ["max-steps", "tool-raises", "code-raises"],
)
def test_A2_followed_runs_whose_steps_fail_equal_their_load(case: str) -> None:
    """Runs that go on past a failure (a step limit's forced answer, a tool's
    ``AgentToolExecutionError``, a ``CodeAgent``'s ``AgentExecutionError``): the followed run
    is the load, statuses and notices included (a check: these agreed before this fix)."""
    options: dict[str, Any] = {}
    if case == "max-steps":
        replies = [
            _message("a", ("add", {"a": 1, "b": 2}, "c1")),
            _message("b", ("add", {"a": 1, "b": 3}, "c2")),
            _message("forced answer"),
        ]
        options["max_steps"] = 2
    elif case == "tool-raises":
        replies = [
            _message("x", ("explode", {"x": "y"}, "c1")),
            _message(None, ("final_answer", {"answer": "done"}, "c2")),
        ]
    else:
        replies = [
            _message("Thought: x\n<code>\nexplode(x='y')\n</code>"),
            _message("Thought: y\n<code>\nfinal_answer('ok')\n</code>"),
        ]
        options["code"] = True
    live, loaded, raised = _followed_then_loaded(_agent(replies, **options))
    assert raised is None
    if case != "max-steps":
        assert "error" in [c.status for c in live.tool_calls()]
    assert _statuses(live) == _statuses(loaded)
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


# --- Google ADK ------------------------------------------------------------------------------


def test_A2_an_async_adk_run_whose_frames_hold_no_session_reads_it_from_the_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``session_of_run`` finds no session in ``run_async``'s frames: the session is read from
    the runner's session service, awaited on the loop that ran the stream, so the compaction
    the runner appends after its last event, the prompt's time, the update time and the state
    are shown as the load of the session shows them."""
    from turnfold.formats.frameworks import adk

    monkeypatch.setattr(adk, "session_of_run", lambda events: None)
    (live,), session = async_runs(calc_runner(compaction=True), ["0+2?"])
    loaded = turnfold.load(session)
    assert [type(e).__name__ for e in loaded.entries][-1] == "CompactionBoundary"
    assert live.entries[0].timestamp is not None
    assert live.metadata["state"] == {"topic": "sums"}
    assert live.warnings == loaded.warnings == []
    assert live == loaded


def test_A2_an_async_adk_run_whose_service_fails_at_the_end_is_shown_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The service read at the end fails: the run is shown as followed, and a warning names
    the session and the error; the stream itself ends normally."""
    from turnfold.formats.frameworks import adk

    monkeypatch.setattr(adk, "session_of_run", lambda events: None)
    runner = calc_runner()
    runner.session_service = failing_after_the_run()

    async def go() -> tuple[Transcript, str]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        events = runner.run_async(user_id=USER, session_id=session.id, new_message=message("0+2?"))
        followed = turnfold.follow(events, display=False)
        async for _ in followed:
            pass
        return followed.transcript, session.id

    live, session_id = run_async(go())
    assert [e.text for e in live.entries if isinstance(e, AssistantText)] == ["0+2=2."]
    assert live.entries[0].timestamp is None
    assert [w.reason for w in live.warnings] == [
        f"the session {session_id!r} could not be read from the runner's session service "
        "(ConnectionError: the store went away): the prompt has no time and the session's "
        "state is not shown"
    ]


def _slow_runner() -> Any:
    """``calc`` calls ``_add``; the model's second answer never comes (it waits until
    cancelled), so the run is still going when the user's loop leaves it."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    model = scripted([[("add", {"a": 0, "b": 2}, "call_0")], ["0+2=2."]])
    first = type(model).generate_content_async

    class Waiting(type(model)):  # type: ignore[misc]
        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[Any, None]:
            if len(self.replies) == 1:
                await asyncio.sleep(3600)
            async for response in first(self, llm_request, stream):
                yield response

    calc = LlmAgent(name="calc", model=Waiting(replies=model.replies), tools=[add])
    return InMemoryRunner(agent=calc, app_name=APP)


def test_A2_leaving_a_followed_sync_adk_run_early_stops_it_and_shows_it_stopped() -> None:
    """``break`` after the first event of ``runner.run``: no exception; the run is stopped as
    the ADK stops a run its caller leaves (its generator closed: the invocation cancelled,
    its thread joined), and the followed run shows what was followed, the open call
    cancelled, then the user's stop; the turn reads stopped."""
    runner = _slow_runner()
    service = runner.session_service

    def go() -> tuple[Any, Transcript, str]:
        session = run_async(service.create_session(app_name=APP, user_id=USER))
        events = runner.run(user_id=USER, session_id=session.id, new_message=message("0+2?"))
        followed = turnfold.follow(events, display=False)
        try:
            for _ in followed:
                break
            return events, followed.transcript, session.id
        finally:
            events.close()  # the old code left the run waiting: end it either way

    events, live, session_id = on_thread(go)
    assert events.gi_frame is None  # the runner's generator is closed, its thread joined
    session = stored_session(runner, session_id)
    # The run's thread may have run the tool before the stop (its result is then shown).
    returned = any(
        p.function_response for e in session.events if e.content for p in e.content.parts or ()
    )
    assert [(c.name, c.status) for c in live.tool_calls()] == [
        ("add", "success" if returned else "cancelled")
    ]
    marker = live.entries[-1]
    assert isinstance(marker, AbortMarker)
    assert marker.reason == "Stopped by the user"
    assert _statuses(live) == ["stopped"]
    assert live.warnings == []
    (recorded,) = [e for e in session.events if e.author == "user" and e.content]
    assert live.entries[0].timestamp == iso(recorded.timestamp)
