"""Runs of the real Google ADK on a scripted ``BaseLlm`` (after ``tests/formats/adk_runs.py``'s
``ScriptedLlm``, whose module imports ``loops`` by a path these top-level tests do not have),
followed to their end, for the tests that a followed ADK run is the load of its session (spec
A-2; tests/test_follow_leftovers.py, tests/test_follow_leftovers2.py,
tests/test_follow_leftovers3.py, tests/test_follow_failures.py).

``calc`` adds with :func:`add` and answers, in an ``App`` of :data:`APP` (``InMemoryRunner``;
the ADK wraps a bare agent in one too); its runs are in one session of :data:`USER`'s."""

from __future__ import annotations

import warnings
from collections.abc import AsyncGenerator
from typing import Any

import pytest

import turnfold
from tests.followed_runs import followed
from tests.formats.loops import on_thread, run_async
from turnfold.model import Transcript

APP, USER = "calc-app", "u"
#: The summary the app's scripted summarizer writes of each invocation (``compaction=True``).
SUMMARY = "The user asked for sums; the agent added them."
#: The first run's state delta: ``temp:`` state lives only in the run's own copy of the
#: session (the ADK never stores it).
STATE = {"topic": "sums", "temp:scratch": "not stored"}


def scripted(replies: list[list[Any]]) -> Any:
    """A ``BaseLlm`` answering each request with the next reply: text, or ``(name, args, call
    id)`` calls, unstreamed."""
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


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def calc_runner(runs: int = 1, *, compaction: bool = False, sequential: bool = False) -> Any:
    """``calc`` adds and answers, ``runs`` times: the root agent itself, or the only step of a
    ``SequentialAgent`` (whose run holds its session a generator further down, and is run by
    ``_run_with_trace``, which compacts apart); with ``compaction``, the app summarises every
    invocation when it is over (``compaction_interval=1``) with a scripted summarizer of its
    own, so nothing reaches a network."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent, SequentialAgent
    from google.adk.apps.app import App, EventsCompactionConfig
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
    from google.adk.runners import InMemoryRunner

    replies: list[list[Any]] = []
    for n in range(runs):
        replies += [[("add", {"a": n, "b": 2}, f"call_{n}")], [f"{n}+2={n + 2}."]]
    calc = LlmAgent(name="calc", model=scripted(replies), tools=[add])
    root: Any = calc
    if sequential:
        with warnings.catch_warnings():  # deprecated in favour of Workflow, still supported
            warnings.simplefilter("ignore", DeprecationWarning)
            root = SequentialAgent(name="steps", sub_agents=[calc])
    config = None
    if compaction:
        summarizer = LlmEventSummarizer(llm=scripted([[SUMMARY] for _ in range(runs)]))
        config = EventsCompactionConfig(
            compaction_interval=1, overlap_size=0, summarizer=summarizer
        )
    return InMemoryRunner(app=App(name=APP, root_agent=root, events_compaction_config=config))


def message(text: str) -> Any:
    """The user's message ``text``, as a run's ``new_message``."""
    from google.genai import types

    return types.Content(role="user", parts=[types.Part(text=text)])


def stored_session(runner: Any, session_id: str) -> Any:
    """The session as the runner's session service holds it."""
    return run_async(
        runner.session_service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    )


def _arguments(session_id: str, n: int, prompt: str) -> dict[str, Any]:
    """The ``n``-th run's arguments in the session: the first with the state delta."""
    return {
        "user_id": USER,
        "session_id": session_id,
        "new_message": message(prompt),
        "state_delta": dict(STATE) if n == 0 else None,
    }


def async_runs(
    runner: Any, prompts: list[str], *, yield_user_message: bool = False
) -> tuple[list[Transcript], Any]:
    """Each prompt a ``runner.run_async(...)`` in one session, followed to its end with
    ``async for``: the followed transcripts and the final session."""

    async def go() -> tuple[list[Transcript], str]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        transcripts = []
        for n, prompt in enumerate(prompts):
            events = runner.run_async(
                **_arguments(session.id, n, prompt), yield_user_message=yield_user_message
            )
            run = turnfold.follow(events, display=False)
            async for _ in run:
                pass
            transcripts.append(run.transcript)
        return transcripts, session.id

    transcripts, session_id = run_async(go())
    return transcripts, stored_session(runner, session_id)


def sync_runs(
    runner: Any, prompts: list[str], *, in_loop: bool = False
) -> tuple[list[Transcript], Any]:
    """Each prompt a ``runner.run(...)`` (the sync form) in one session, followed to its end,
    from a thread with no event loop, as a script runs it, or (``in_loop``) from a coroutine,
    as a notebook's cell runs it beside the kernel's loop: the followed transcripts and the
    final session."""

    def go() -> tuple[list[Transcript], str]:
        session = run_async(runner.session_service.create_session(app_name=APP, user_id=USER))
        transcripts = [
            followed(runner.run(**_arguments(session.id, n, prompt)))
            for n, prompt in enumerate(prompts)
        ]
        return transcripts, session.id

    async def in_a_loop() -> tuple[list[Transcript], str]:
        return go()

    transcripts, session_id = run_async(in_a_loop()) if in_loop else on_thread(go)
    return transcripts, stored_session(runner, session_id)


def failing_after_the_run() -> Any:
    """An ``InMemorySessionService`` whose ``get_session`` fails after its first call (the
    runner's own): the session cannot be read when the run is over."""
    from google.adk.sessions import InMemorySessionService

    class FailingAfterTheRun(InMemorySessionService):
        calls = 0

        async def get_session(self, **names: Any) -> Any:
            self.calls += 1
            if self.calls > 1:
                raise ConnectionError("the store went away")
            return await super().get_session(**names)

    return FailingAfterTheRun()


def iso(epoch: float) -> str | None:
    """An ADK event's time (seconds since the epoch) as a transcript's timestamp."""
    from turnfold.formats.openai_responses import unix_timestamp

    return unix_timestamp(epoch)
