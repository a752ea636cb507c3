"""Spec A-2 (with P-7, N-1): a followed run the user leaves, a model call cut off mid-stream, and
a Ctrl-C inside a followed run.

Google ADK (2.13): ``runner.run_async(...)`` is an async generator. Leaving ``async for`` over
``turnfold.follow(...)`` (``break``) leaves the follow's own generator suspended; its
``aclose()`` comes from the user, or from the event loop when it drops the generator
(asyncio's async-generator finalizer), and lands in ``Follow._async`` as ``GeneratorExit``.

smolagents (1.26, ``agents.py``): with ``stream_outputs=True`` both agents' ``_step_stream``
collect the model's deltas in ``chat_message_stream_deltas`` and keep none of them on the step
when the model raises mid-stream (the ``AgentGenerationError`` wraps it; a
``KeyboardInterrupt`` passes through); ``_generate_planning_step`` grows its
``plan_message_content`` the same way. ``_run_stream`` yields the empty step from its
``finally`` before the exception leaves it.

A Ctrl-C is a ``KeyboardInterrupt`` raised where the code runs: here by a real tool or the
scripted model of a real smolagents and a real pydantic-ai run.

Every run is the real framework's on an offline scripted model: the ADK's ``BaseLlm`` of
``tests/adk_followed_runs.py``, smolagents' ``Model`` of ``tests/formats/smolagents_runs.py``,
pydantic-ai's own ``FunctionModel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest

import turnfold
from tests.adk_followed_runs import APP, USER, calc_runner, iso, message, stored_session
from tests.formats.loops import on_thread, run_async
from tests.smolagents_helper_runs import smolagents_runs
from tests.threads_left import waited_on
from turnfold.following import Follow
from turnfold.formats.frameworks.pydantic_ai import _run_exception
from turnfold.model import AbortMarker, AssistantError, Thinking, Transcript
from turnfold.process import project
from turnfold.render.viewmodel import Turn
from turnfold.transport import unpack_view
from turnfold.widget import TranscriptWidget


def _statuses(transcript: Transcript) -> list[str]:
    return [node.header.status for node in project(transcript) if isinstance(node, Turn)]


# --- 1. Google ADK: an async run left early ---------------------------------------------------


@pytest.mark.parametrize("closed_by", ["aclose", "the-loop"])
def test_A2_leaving_a_followed_async_adk_run_early_shows_it_stopped(closed_by: str) -> None:
    """``break`` after the first event of ``runner.run_async`` (the model's call of ``add``),
    then the ``async for``'s generator closed by the user (``aclose()``) or by the event loop
    that drops it: the followed run shows the call cancelled, then the user's stop, and the
    turn reads stopped, as a sync ``runner.run`` left early does (the old code ended it as if
    finished: the call ``unknown``, the turn completed)."""
    runner = calc_runner()

    async def go() -> tuple[Follow, Any]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        events = runner.run_async(user_id=USER, session_id=session.id, new_message=message("0+2?"))
        followed = turnfold.follow(events, display=False)
        if closed_by == "aclose":
            stream: Any = followed.__aiter__()  # an async generator: it has aclose()
            async for _ in stream:
                break
            await stream.aclose()
        else:
            async for _ in followed:
                break
            for _ in range(20):  # the loop's finalizer schedules the aclose() as a task
                if followed._ended:
                    break
                await asyncio.sleep(0)
        await events.aclose()
        return followed, session

    followed, session = run_async(go())
    live = followed.transcript
    assert followed._ended
    assert [(c.name, c.status) for c in live.tool_calls()] == [("add", "cancelled")]
    marker = live.entries[-1]
    assert isinstance(marker, AbortMarker)
    assert marker.reason == "Stopped by the user"
    assert _statuses(live) == ["stopped"]
    assert live.warnings == []
    stored = stored_session(runner, session.id)
    (recorded,) = [e for e in stored.events if e.author == "user" and e.content]
    assert live.entries[0].timestamp == iso(recorded.timestamp)
    assert followed.widget.running is False
    followed.widget.close()


# --- 2. smolagents: a model call cut off mid-stream -------------------------------------------

_TASK = "Add 1 and 2, then answer."
#: The model's text streamed before its call raises (8 characters a delta).
_CUT = "Thought: now I will answer that the sum is"
_PLAN_CUT = "1. add the numbers\n2. answ"


def _cutting_agent(replies: list[Any], *, code: bool = False, **options: Any) -> Any:
    """A streaming agent on the scripted model of ``tests/formats/smolagents_runs.py``; a
    reply ``(text, exception)`` streams ``text`` as deltas, then raises ``exception``, as a
    connection reset or a Ctrl-C in the middle of a response does."""
    runs = smolagents_runs()
    from smolagents import CodeAgent, ToolCallingAgent
    from smolagents.models import ChatMessageStreamDelta

    class CuttingModel(runs._model_class()):  # type: ignore[misc]
        def generate_stream(self, messages: Any, **kwargs: Any) -> Iterator[Any]:
            if isinstance(self.replies[0], tuple):
                text, error = self.replies.pop(0)
                for start in range(0, len(text), 8):
                    yield ChatMessageStreamDelta(content=text[start : start + 8])
                raise error
            yield from super().generate_stream(messages, **kwargs)

    add, explode = runs._tools()
    make: Any = CodeAgent if code else ToolCallingAgent
    return make(
        tools=[add, explode],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=True,
        model=CuttingModel(replies),
        **options,
    )


def _step_time(epoch: float) -> str | None:
    """A smolagents step's time (seconds since the epoch) as a transcript's timestamp."""
    from turnfold.formats.frameworks.smolagents import _iso

    return _iso(epoch)


def _followed_then_loaded(agent: Any) -> tuple[Transcript, Transcript, BaseException]:
    """The run followed until it raises, and ``load(agent)`` in the ``except`` block around
    the loop, as a notebook user writes it."""
    followed = turnfold.follow(agent.run(_TASK, stream=True), display=False)
    try:
        for _ in followed:
            pass
    except BaseException as raised:  # a KeyboardInterrupt too: the model's
        return followed.transcript, turnfold.load(agent), raised
    raise AssertionError("the run did not raise")


@pytest.mark.parametrize(
    ("case", "raised", "status"),
    [
        ("tool-calling", "AgentGenerationError", "failed"),
        ("code", "AgentGenerationError", "failed"),
        ("tool-calling", "KeyboardInterrupt", "stopped"),
        ("plan", "RuntimeError", "failed"),
    ],
    ids=["tool-calling-error", "code-error", "tool-calling-ctrl-c", "plan-error"],
)
def test_A2_a_model_call_cut_off_mid_stream_keeps_its_text_followed_and_loaded(
    case: str, raised: str, status: str
) -> None:
    """The model streams part of its second response (or of its plan), then raises: the text
    streamed so far stays shown, settled, dated at its step's start, right before the error
    or the user's stop that cut it off, followed and loaded alike. The old code emptied the
    followed step's streaming text (an empty thought), kept a cut plan undated, and a load
    showed neither."""
    error: BaseException = (
        KeyboardInterrupt() if raised == "KeyboardInterrupt" else RuntimeError("connection reset")
    )
    code = case == "code"
    options: dict[str, Any] = {}
    if case == "plan":
        replies: list[Any] = [(_PLAN_CUT, error)]
        options["planning_interval"] = 1
    else:
        first = (
            smolagents_runs()._message("Thought: add.\n<code>\nprint(add(a=1, b=2))\n</code>")
            if code
            else smolagents_runs()._message("Let me add.", ("add", {"a": 1, "b": 2}, "call_1"))
        )
        replies = [first, (_CUT, error)]
    agent = _cutting_agent(replies, code=code, **options)
    live, loaded, exc = _followed_then_loaded(agent)
    assert type(exc).__name__ == raised
    *_, cut, end = live.entries
    assert isinstance(cut, Thinking)
    assert cut.text == (_PLAN_CUT if case == "plan" else "now I will answer that the sum is")
    assert cut.streaming is False
    assert cut.timestamp is not None
    if case != "plan":
        step = agent.memory.steps[-1]
        assert step.model_output is None  # smolagents keeps none of it
        assert cut.timestamp == _step_time(step.timing.start_time)
    assert isinstance(end, AbortMarker if status == "stopped" else AssistantError)
    assert _statuses(live) == _statuses(loaded) == [status]
    assert live.warnings == loaded.warnings == []
    assert live.entries == loaded.entries


# --- 3. A Ctrl-C inside a followed run --------------------------------------------------------


def _run_until_interrupted(main: Coroutine[Any, Any, None]) -> None:
    """``main`` run to the ``KeyboardInterrupt`` that ends it, on a fresh thread's event loop,
    and what the interrupt leaves wound down before the interrupt is raised on: the tasks it
    left pending cancelled and awaited (a framework may raise the interrupt again as it
    unwinds, so ``asyncio.run``'s own wind-down may stop half-way), the loop's async
    generators and default executor closed, and the exception of every task that ended in it
    read. Unread, a task's exception is logged whenever the task is collected: a collection
    inside a later test's ``ast.parse`` made CPython 3.11.7 raise "AST constructor recursion
    depth mismatch"."""
    tasks: list[asyncio.Task[Any]] = []

    def recorded(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **kwargs)
        tasks.append(task)
        return task

    def run() -> None:
        loop = asyncio.new_event_loop()
        loop.set_task_factory(recorded)
        try:
            loop.run_until_complete(main)
        finally:
            try:
                for _ in range(10):  # bounded: a test never hangs here
                    pending = asyncio.all_tasks(loop)
                    if not pending:
                        break
                    for task in pending:
                        task.cancel()
                    with contextlib.suppress(KeyboardInterrupt):
                        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()
                for task in tasks:
                    if task.done() and not task.cancelled():
                        task.exception()
                tasks.clear()

    on_thread(run)


@contextlib.contextmanager
def _loose_ends() -> Iterator[list[str]]:
    """What is collected by the end of the block and complains as it goes (an unread task
    exception, a pending task destroyed, an unclosed generator's error), as a list filled
    when the block ends: everything is collected there, inside the test, not in a later one."""
    said: list[str] = []

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    handler = Said(logging.ERROR)
    asyncio_log = logging.getLogger("asyncio")
    asyncio_log.addHandler(handler)
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: said.append(repr(unraisable.exc_value))
    try:
        yield said
    finally:
        try:
            gc.collect()
        finally:
            sys.unraisablehook = hook
            asyncio_log.removeHandler(handler)


def _assert_stopped_and_saved(followed: Follow, widget: TranscriptWidget) -> None:
    """The run reads stopped by the user (no error, no answer after the stop), the widget no
    longer runs, and what a saved notebook keeps (``_view``) is the view of the stopped run."""
    live = followed.transcript
    assert isinstance(live.entries[-1], AbortMarker)
    assert not [e for e in live.entries if isinstance(e, AssistantError)]
    assert _statuses(live) == ["stopped"]
    assert widget.running is False
    saved = unpack_view(widget._view)
    assert saved["rev"] == widget._transport.rev
    assert saved["view"] == widget._transport.wire_view()
    turns = [n for n in saved["view"]["nodes"] if n["kind"] == "turn"]
    assert [t["status"] for t in turns] == ["stopped"]


def test_A2_N1_a_ctrl_c_in_a_smolagents_tool_stops_the_followed_run_and_saves_its_view() -> None:
    """A real tool raises ``KeyboardInterrupt`` (smolagents does not catch it): the user's
    loop gets it, the followed run (equal to the load in the ``except`` block) shows the call
    cancelled and the user's stop, and the widget's saved view is that stopped run."""
    runs = smolagents_runs()
    from smolagents import ToolCallingAgent, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: first number
            b: second number
        """
        raise KeyboardInterrupt  # the kernel's stop button while the tool runs

    agent = ToolCallingAgent(
        tools=[add],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=True,
        model=runs._model_class()([runs._message("Let me add.", ("add", {"a": 1, "b": 2}, "c1"))]),
    )
    followed = turnfold.follow(agent.run(_TASK, stream=True), display=False)
    widget = followed.widget  # the cell's value, shown before the first event
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in followed:
                pass
        assert [(c.name, c.status) for c in followed.transcript.tool_calls()] == [
            ("add", "cancelled")
        ]
        _assert_stopped_and_saved(followed, widget)
    finally:
        widget.close()


@pytest.mark.parametrize("where", ["tool", "model"])
def test_A2_N1_a_ctrl_c_in_a_pydantic_ai_run_stops_the_followed_run_and_saves_its_view(
    where: str,
) -> None:
    """``agent.iter()`` followed with ``async for``; a real tool, or the ``FunctionModel``'s
    second request, raises ``KeyboardInterrupt``: it reaches the user's loop, and the followed
    run ends stopped (the call it cut off cancelled, a call that returned kept), not failed,
    with the widget's saved view that stopped run."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    # Both async: they run on the loop's thread, where a kernel's Ctrl-C lands. A sync one runs
    # on an AnyIO worker thread, which the interrupted loop may never tell to stop.
    async def script(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="c1")])
        if where == "model":
            raise KeyboardInterrupt  # the kernel's stop button while the model answers
        return ModelResponse(parts=[TextPart("3")])

    agent = Agent(FunctionModel(script))

    @agent.tool_plain
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        if where == "tool":
            raise KeyboardInterrupt  # the kernel's stop button while the tool runs
        return a + b

    box: list[Follow] = []
    runs: list[Any] = []

    async def main() -> None:
        async with agent.iter(_TASK) as run:
            runs.append(run)
            followed = turnfold.follow(run, display=False)
            box.append(followed)
            _ = followed.widget  # shown before the first event
            async for _ in followed:
                pass

    threads = set(waited_on())
    with _loose_ends() as left, pytest.raises(KeyboardInterrupt):
        _run_until_interrupted(main())
    assert left == []  # no task's exception unread, no generator left to a later collection
    assert [t for t in waited_on() if t not in threads] == []  # no thread left running
    (followed,) = box
    # How the run ended, as the follower's close() reads it, is no error of the run: the
    # interrupt is not raised a second time, out of the follow's end, past its settling.
    assert _run_exception(runs[0]) is None
    try:
        expected = "cancelled" if where == "tool" else "success"
        assert [(c.name, c.status) for c in followed.transcript.tool_calls()] == [("add", expected)]
        _assert_stopped_and_saved(followed, followed.widget)
    finally:
        followed.widget.close()
