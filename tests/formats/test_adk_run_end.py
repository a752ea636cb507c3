"""A Google ADK run a tool's exception ended reads Failed (spec P-7): a failed tool alone
does not fail the turn, but a run that ended on the error did.

The ADK records a tool's exception as an error event (``error_code``, ``error_message``,
``workflow/_node_runner.py``) and raises it out of ``Runner.run_async``: nothing of the
invocation follows. The run that went on after the error (the node retried, or the tool's
``on_tool_error_callback`` answered the model) stays as it was."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.model import AssistantError, AssistantText, ToolCall, Transcript, UserMessage
from turnfold.process import project
from turnfold.render.viewmodel import Turn

FIXTURES = Path(__file__).parent.parent / "fixtures" / "frameworks" / "adk"
RAISES = FIXTURES / "adk_v2.13.0_events_tool-raises.json"
#: A real run whose ``explode`` failed through ``on_tool_error_callback`` and went on.
SESSION = FIXTURES / "adk_v2.13.0_session_subagents.json"
ENDED = "The run ended: explode raised ValueError: boom: z"


def _statuses(transcript: Transcript) -> list[str]:
    return [node.header.status for node in project(transcript) if isinstance(node, Turn)]


def _errors(transcript: Transcript) -> list[tuple[str, str | None, dict[str, Any]]]:
    errors = [e for e in transcript.entries if isinstance(e, AssistantError)]
    return [(e.message, e.timestamp, e.meta) for e in errors]


def raised_events() -> list[dict[str, Any]]:
    """The events of the committed run whose tool raised."""
    events: list[dict[str, Any]] = json.loads(RAISES.read_text(encoding="utf-8"))
    return events


def asked_again(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` and a next run: the user asks again (a new invocation) and it answers."""
    ask = copy.deepcopy(events[0])
    ask.update(invocation_id="e-next", id="ask", timestamp=ask["timestamp"] + 10)
    ask["content"]["parts"] = [{"text": "Try again."}]
    reply = copy.deepcopy(events[3])
    reply.update(invocation_id="e-next", id="reply", timestamp=ask["timestamp"] + 1)
    reply["content"]["parts"] = [{"text": "Done."}]
    return [*events, ask, reply]


def test_P7_a_run_a_tool_s_exception_ended_is_failed_naming_the_tool_and_its_error() -> None:
    transcript = turnfold.load(RAISES)
    assert transcript.warnings == []
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "ToolCall", "ToolCall", "AssistantError",
    ]  # fmt: skip
    failed = transcript.tool_calls()[-1]
    assert (failed.name, failed.status) == ("explode", "error")
    error = transcript.entries[-1]
    assert isinstance(error, AssistantError)
    assert error.message == ENDED
    assert error.meta == {"agent": "calc"}
    assert error.timestamp == failed.ended_at  # the ADK's error event's
    assert _statuses(transcript) == ["failed"]


def test_P7_a_run_that_went_on_after_the_tool_s_error_is_not_failed() -> None:
    """Events of the same invocation after the error event (the node retried and the model
    answered: ``_node_runner`` retries under a ``retry_config``): the call failed, the run did
    not. The answer event is the fixture's own model event with text for its call."""
    events = raised_events()
    answer = copy.deepcopy(events[3])
    answer["content"]["parts"] = [{"text": "explode failed; 1+2=3."}]
    answer["id"] = "answer"
    answer["timestamp"] += 1
    transcript = turnfold.load([*events, answer])
    assert transcript.warnings == []
    assert [c.status for c in transcript.tool_calls()] == ["success", "error"]
    assert _errors(transcript) == []
    assert isinstance(transcript.entries[-1], AssistantText)
    assert _statuses(transcript) == ["completed"]


def test_P7_a_failed_run_s_error_stays_in_its_own_turn_when_the_user_asks_again() -> None:
    """The session goes on with a new message (a new invocation): the run before it ended on
    the error, which closes that turn, not the next."""
    transcript = turnfold.load(asked_again(raised_events()))
    assert transcript.warnings == []
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage", "ToolCall", "ToolCall", "AssistantError", "UserMessage", "AssistantText",
    ]  # fmt: skip
    assert [m for m, _, _ in _errors(transcript)] == [ENDED]
    assert isinstance(transcript.entries[4], UserMessage)
    assert _statuses(transcript) == ["failed", "completed"]


def test_P7_a_run_an_error_callback_answered_went_on_and_is_not_failed() -> None:
    """The real run whose ``explode`` failed through ``on_tool_error_callback`` (its
    ``{"error": ...}`` response) and whose model answered: no error of the run."""
    transcript = turnfold.load(SESSION)
    assert any(isinstance(c, ToolCall) and c.status == "error" for c in transcript.tool_calls())
    assert _errors(transcript) == []
    assert _statuses(transcript) == ["completed"]


def test_A2_a_followed_run_a_tool_s_exception_ended_ends_as_its_load_with_one_error() -> None:
    """The stream raised the exception too (``Follow`` ends its transcript with it): the
    followed run ends with the one error a load of its session shows, not two."""
    pytest.importorskip("google.adk")
    from tests.formats import adk_runs

    (session, _, failure), live = adk_runs.followed(adk_runs.raising_run)
    assert isinstance(failure, ValueError)
    loaded = turnfold.load(session)
    assert [m for m, _, _ in _errors(loaded)] == [ENDED]
    assert _errors(live) == _errors(loaded)
    assert isinstance(live.entries[-1], AssistantError)
    assert _statuses(live) == _statuses(loaded) == ["failed"]


def _over_the_llm_call_limit(
    *, follow: bool, yield_user_message: bool = False
) -> tuple[Any, Transcript | None, BaseException | None]:
    """A run whose model calls ``add`` again and again until ``max_llm_calls=3`` stops it: the
    ADK records ``LlmCallsLimitExceededError`` as an error event of no call, then raises it.
    Its session, the followed transcript (when ``follow``) and the exception raised."""
    import logging

    from google.adk.agents import LlmAgent
    from google.adk.agents.run_config import RunConfig
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from tests.formats import adk_runs
    from tests.formats.loops import run_async

    replies = [[("add", {"a": n, "b": 1}, f"c{n}")] for n in range(6)]
    calc = LlmAgent(name="calc", model=adk_runs._scripted(replies, 10), tools=[adk_runs.add])
    runner = InMemoryRunner(agent=calc, app_name=adk_runs.APP)

    async def go() -> tuple[Any, Transcript | None, BaseException | None]:
        made = await runner.session_service.create_session(
            app_name=adk_runs.APP, user_id=adk_runs.USER
        )
        events = runner.run_async(
            user_id=adk_runs.USER, session_id=made.id, run_config=RunConfig(max_llm_calls=3),
            new_message=types.Content(role="user", parts=[types.Part(text="count")]),
            yield_user_message=yield_user_message,
        )  # fmt: skip
        followed = turnfold.follow(events, display=False) if follow else None
        failure = None
        try:
            async for _ in followed if followed is not None else events:
                pass
        except Exception as exc:  # the ADK raises the error it recorded
            failure = exc
        session = await runner.session_service.get_session(
            app_name=adk_runs.APP, user_id=adk_runs.USER, session_id=made.id
        )
        return session, followed.transcript if followed is not None else None, failure

    logging.getLogger("google_adk").disabled = True  # it logs the failure with its traceback
    try:
        return run_async(go())
    finally:
        logging.getLogger("google_adk").disabled = False


def test_A2_a_followed_run_the_llm_call_limit_ended_shows_its_error_once() -> None:
    """A model-level error (no call open) ended the run and the stream raised it: the
    followed run showed it twice, the event's and the one ``Follow`` ends a broken stream
    with; now once, as a load of the session shows it."""
    pytest.importorskip("google.adk")
    session, live, failure = _over_the_llm_call_limit(follow=True)
    assert type(failure).__name__ == "LlmCallsLimitExceededError"
    assert live is not None
    loaded = turnfold.load(session)
    message = "LlmCallsLimitExceededError: Max number of llm calls limit of `3` exceeded"
    assert [m for m, _, meta in _errors(loaded)] == [message]
    assert [(m, meta) for m, _, meta in _errors(live)] == [(message, {"agent": "calc"})]
    assert _errors(live) == _errors(loaded)
    assert isinstance(live.entries[-1], AssistantError)
    assert _statuses(live) == _statuses(loaded) == ["failed"]
    assert live.warnings == []


@pytest.mark.parametrize("yield_user_message", [False, True])
def test_A2_a_followed_run_begins_with_the_user_s_message_once(yield_user_message: bool) -> None:
    """``run_async`` yields the user's message only when asked (``yield_user_message``): the
    followed run began without its prompt; it is read off the generator, and not shown twice
    when the runner yields it."""
    pytest.importorskip("google.adk")
    session, live, _ = _over_the_llm_call_limit(follow=True, yield_user_message=yield_user_message)
    assert live is not None
    prompts = [e.text for e in live.entries if isinstance(e, UserMessage)]
    assert prompts == ["count"]
    assert isinstance(live.entries[0], UserMessage)
    loaded = turnfold.load(session)
    assert [type(e).__name__ for e in live.entries] == [type(e).__name__ for e in loaded.entries]
