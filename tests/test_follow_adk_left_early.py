"""Spec A-2 (with P-7): a followed Google ADK ``runner.run`` the user leaves early shows what
the run did before it stopped, then the stop, last.

``Runner.run`` (google-adk 2.13, ``runners.py``) runs ``run_async`` on a thread of its own
that appends each event to the session and puts it on a queue the generator reads: the thread
runs ahead of the user's loop. When that loop leaves (``break``), the generator's ``finally``
cancels the invocation and joins the thread; by then the session may hold the result of the
call the user last saw, or the whole run. The old code showed none of what the run appended
after the last event followed: a call that returned read cancelled, an answer the run gave
was lost, and which of them happened depended on the two threads' race.

Every run is the real ADK's on the offline scripted ``BaseLlm`` of
``tests/adk_followed_runs.py``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import turnfold
from tests.adk_followed_runs import APP, USER, add, calc_runner, message, scripted, stored_session
from tests.formats.loops import on_thread, run_async
from turnfold.model import AbortMarker, Transcript

#: A bound on waiting for the ADK's thread, so a broken run fails rather than hangs.
_JOIN = 120.0


def _left_early(runner: Any, *, wait_for_the_run: bool = False) -> tuple[Transcript, Any]:
    """``runner.run`` followed, left at its first event (``break``), as a script does it:
    the followed transcript and the session as the service stores it after. With
    ``wait_for_the_run``, the run's own threads (started for it, not before) are joined
    before the ``break``: the run reached its end before the user's loop left it."""

    def go() -> tuple[Transcript, str]:
        session = run_async(runner.session_service.create_session(app_name=APP, user_id=USER))
        before = set(threading.enumerate())
        events = runner.run(user_id=USER, session_id=session.id, new_message=message("0+2?"))
        followed = turnfold.follow(events, display=False)
        try:
            for _ in followed:
                if wait_for_the_run:
                    for thread in set(threading.enumerate()) - before:
                        thread.join(_JOIN)
                        assert not thread.is_alive(), f"{thread.name} never ended"
                break
            return followed.transcript, session.id
        finally:
            events.close()

    live, session_id = on_thread(go)
    return live, stored_session(runner, session_id)


def _assert_what_the_session_holds_then_the_stop(live: Transcript, session: Any) -> None:
    """The followed run is the load of its session, its calls left open cancelled (the load
    cannot tell them from calls running on: unknown), then the user's stop, last."""
    *shown, marker = live.entries
    assert isinstance(marker, AbortMarker)
    assert marker.reason == "Stopped by the user"
    loaded = turnfold.load(session)
    assert [type(e).__name__ for e in shown] == [type(e).__name__ for e in loaded.entries]
    assert [(c.name, c.status) for c in live.tool_calls()] == [
        (c.name, "cancelled" if c.status == "unknown" else c.status) for c in loaded.tool_calls()
    ]
    assert [(c.call_id, c.result) for c in live.tool_calls()] == [
        (c.call_id, c.result) for c in loaded.tool_calls()
    ]
    assert live.warnings == []


def test_A2_a_sync_adk_run_that_answered_before_the_user_left_shows_its_answer_then_the_stop() -> (
    None
):
    """The run added and answered on its thread before the user's loop left it: the call's
    result and the answer are shown, as the session holds them, then the stop (the old code
    showed the call cancelled and no answer)."""
    runner = calc_runner()
    live, session = _left_early(runner, wait_for_the_run=True)
    assert [(c.name, c.status) for c in live.tool_calls()] == [("add", "success")]
    assert [type(e).__name__ for e in live.entries] == [
        "UserMessage",
        "ToolCall",
        "AssistantText",
        "AbortMarker",
    ]
    assert live.entries[2].text == "0+2=2."
    _assert_what_the_session_holds_then_the_stop(live, session)


def test_A2_a_sync_adk_run_stopped_inside_its_tool_shows_the_call_cancelled_then_the_stop() -> None:
    """The tool never returns until the stop cancels it: nothing follows the call, which
    reads cancelled, then the stop."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    async def stuck_add(a: int, b: int) -> int:
        """Add two numbers."""
        await asyncio.Event().wait()  # never set: the stop cancels it
        return add(a, b)

    stuck_add.__name__ = "add"
    model = scripted([[("add", {"a": 0, "b": 2}, "call_0")], ["0+2=2."]])
    runner = InMemoryRunner(
        agent=LlmAgent(name="calc", model=model, tools=[stuck_add]), app_name=APP
    )
    live, session = _left_early(runner)
    assert [(c.name, c.status) for c in live.tool_calls()] == [("add", "cancelled")]
    assert [type(e).__name__ for e in live.entries] == ["UserMessage", "ToolCall", "AbortMarker"]
    _assert_what_the_session_holds_then_the_stop(live, session)


@pytest.mark.parametrize("attempt", range(10))
def test_A2_a_sync_adk_run_left_at_once_shows_what_its_session_holds_then_the_stop(
    attempt: int,
) -> None:
    """Left at once, the run's thread and the user's loop race: however far the run got (the
    call only, its result, or the answer), the followed run is its session, then the stop,
    each time (the old code dropped whatever the thread appended after the first event)."""
    live, session = _left_early(calc_runner())
    _assert_what_the_session_holds_then_the_stop(live, session)
