"""Spec A-2 (with P-7, N-1): a followed run whose cell ended does not stay "running".

The Agents SDK (0.24) runs each function tool in an asyncio task of its own (a sync tool's body
on a worker thread, ``asyncio.to_thread``). A ``KeyboardInterrupt`` raised there (the stop
button) makes ``Task.__step`` re-raise it out of the event loop: IPython's ``run_until_complete``
of the cell returns it to the cell, and the cell's own task, suspended in the ``async for`` over
``turnfold.follow(...)``, is never stepped again, so the follow's generator is never closed.

Each cell runs in a real IPython ``InteractiveShell`` (IPython's own asyncio runner for top-level
``await``); each run is the real SDK's on its offline scripted model
(``agents.testing.ScriptedModel``). The shell runs its cells on a thread of its own
(``tests.formats.loops.on_thread``): a test before may leave an event loop running on the main
thread, and IPython's runner cannot start beside it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.formats.loops import on_thread
from turnfold.model import AbortMarker, AssistantError, Transcript
from turnfold.process import Turn, project
from turnfold.transport import unpack_view

pytest.importorskip("agents")
pytest.importorskip("IPython")

PROMPT = "Add 1 and 2."
ANSWER = "1+2=3."

#: What a notebook user writes to watch the run: the follow's widget as the cell's display,
#: then the events consumed in the cell (top-level ``async for``).
FOLLOW_IN_THE_CELL = """
run = turnfold.follow(Runner.run_streamed(agent, PROMPT))
widget = run.widget
async for event in run:
    pass
"""


def _agent(add: Callable[..., Any]) -> Any:
    """An agent whose scripted model calls ``add`` (the given body) once, then answers."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # the default exporter wants OPENAI_API_KEY
    model = ScriptedModel(
        [
            ModelStep(output=[function_call("add", {"a": 1, "b": 2}, call_id="call_1")]),
            ModelStep(output=[assistant_message(ANSWER)]),
        ]
    )
    return Agent(name="calc", tools=[function_tool(add)], model=model)


def _statuses(transcript: Transcript) -> list[str]:
    return [node.header.status for node in project(transcript) if isinstance(node, Turn)]


def _saved_statuses(widget: Any) -> list[str]:
    """The turns' statuses in what a saved notebook keeps, checked to be the current view."""
    saved = unpack_view(widget._view)
    assert saved["rev"] == widget._transport.rev
    assert saved["view"] == widget._transport.wire_view()
    return [node["status"] for node in saved["view"]["nodes"] if node["kind"] == "turn"]


class Shell:
    """A real IPython ``InteractiveShell``, its cells run on one worker thread each."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.ns: dict[str, Any] = shell.user_ns

    def run_cell(self, code: str) -> Any:
        return on_thread(lambda: self.shell.run_cell(code))

    def watchers(self) -> list[Any]:
        """The ``post_run_cell`` callbacks that are a follow's."""
        callbacks = self.shell.events.callbacks["post_run_cell"]
        return [c for c in callbacks if getattr(c, "__name__", "") == "_cell_ended"]


def _drain_ipython_loop() -> None:
    """Cancel what the runs left on IPython's event loop and close it (IPython makes a new one
    when asked again), so no stranded task outlives the test."""
    from IPython.core.async_helpers import get_asyncio_loop

    loop = get_asyncio_loop()
    # Cancelling the SDK's run starts its clean-up tasks: cancelled and awaited in turn.
    for _ in range(10):  # bounded: a test never hangs here
        tasks = asyncio.all_tasks(loop)
        if not tasks:
            break
        for task in tasks:
            task.cancel()
        # A stranded tool task re-raises its KeyboardInterrupt out of the loop once stepped.
        with contextlib.suppress(KeyboardInterrupt):
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


@pytest.fixture
def ipython(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shell]:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    assert not InteractiveShell.initialized(), "another IPython shell runs in this process"
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    # What the shell takes over while it lives (sys.modules' __main__: init_sys_modules).
    for name in ("displayhook", "excepthook"):
        monkeypatch.setattr(sys, name, getattr(sys, name))
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor"
    shell = InteractiveShell.instance(config=config)
    try:
        cells = Shell(shell)
        cells.run_cell("import asyncio\nimport turnfold\nfrom agents import Runner")
        cells.ns["PROMPT"] = PROMPT
        yield cells
    finally:
        on_thread(_drain_ipython_loop)
        atexit.unregister(shell.atexit_operations)
        InteractiveShell.clear_instance()


@pytest.mark.parametrize("tool", ["sync", "async"])
def test_A2_N1_a_ctrl_c_in_an_agents_sdk_tool_ends_the_followed_run_stopped_at_the_cells_end(
    ipython: Shell, tool: str
) -> None:
    """The tool raises ``KeyboardInterrupt`` in its own task: the cell gets it, and the run,
    whose stream the cell's loop never closed, is ended at the cell's end as a Ctrl-C ends it:
    the call cancelled, the turn stopped, the widget no longer running, its saved view that
    stopped run, the cell's watch gone (the old code left the call executing, the turn
    running and ``widget.running`` True for good)."""

    def add_sync(a: int, b: int) -> int:
        """Add two numbers."""
        raise KeyboardInterrupt  # the kernel's stop button while the tool runs

    async def add_async(a: int, b: int) -> int:
        """Add two numbers."""
        raise KeyboardInterrupt  # the kernel's stop button while the tool runs

    add_sync.__name__ = add_async.__name__ = "add"
    ipython.ns["agent"] = _agent(add_sync if tool == "sync" else add_async)

    result = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert isinstance(result.error_in_exec, KeyboardInterrupt)  # the user's, not swallowed
    run, widget = ipython.ns["run"], ipython.ns["widget"]
    live = run.transcript
    assert [(c.name, c.status) for c in live.tool_calls()] == [("add", "cancelled")]
    assert isinstance(live.entries[-1], AbortMarker)
    assert not [e for e in live.entries if isinstance(e, AssistantError)]
    assert _statuses(live) == ["stopped"]
    assert widget.running is False
    assert _saved_statuses(widget) == ["stopped"]
    assert ipython.watchers() == []
    widget.close()


def test_A2_a_run_that_ends_in_its_cell_or_goes_on_in_a_background_task_is_not_cut(
    ipython: Shell,
) -> None:
    """A run followed to its end in the cell reads as before: completed, not stopped, and no
    watch is left on the shell. A run followed in a task of the user's (``create_task``),
    which waits in its tool when its cell ends, is not cut there: it stays running, its call
    executing, and finishes in a later cell, completed."""
    from turnfold import load

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    ipython.ns["agent"] = _agent(add)
    assert ipython.run_cell(FOLLOW_IN_THE_CELL).success
    run, widget = ipython.ns["run"], ipython.ns["widget"]
    assert _statuses(run.transcript) == ["completed"]
    assert not [e for e in run.transcript.entries if isinstance(e, AbortMarker)]
    assert widget.running is False
    assert ipython.watchers() == []
    widget.close()

    gate: dict[str, asyncio.Event] = {}

    async def slow_add(a: int, b: int) -> int:
        """Add two numbers."""
        gate["open"] = asyncio.Event()
        await gate["open"].wait()
        return a + b

    slow_add.__name__ = "add"
    ipython.ns["agent"] = _agent(slow_add)
    ipython.ns["gate"] = gate
    started = ipython.run_cell(
        """
result = Runner.run_streamed(agent, PROMPT)
run = turnfold.follow(result)
widget = run.widget

async def watch():
    async for event in run:
        pass

task = asyncio.create_task(watch())
while "open" not in gate:  # the tool waits
    await asyncio.sleep(0.01)
"""
    )
    assert started.success
    run, widget = ipython.ns["run"], ipython.ns["widget"]
    assert [(c.name, c.status) for c in run.transcript.tool_calls()] == [("add", "executing")]
    assert not [e for e in run.transcript.entries if isinstance(e, AbortMarker)]
    assert widget.running is True
    assert len(ipython.watchers()) == 1

    assert ipython.run_cell('gate["open"].set()\nawait task').success
    # The SDK's output does not say the call succeeded: "unknown", as a load reads it.
    assert [(c.name, c.status) for c in run.transcript.tool_calls()] == [("add", "unknown")]
    assert [c.result.text for c in run.transcript.tool_calls() if c.result] == ["3"]
    assert _statuses(run.transcript) == ["completed"]
    assert run.transcript == load(ipython.ns["result"])
    assert widget.running is False
    assert _saved_statuses(widget) == ["completed"]
    assert ipython.watchers() == []
    widget.close()


def test_A2_N1_a_run_on_a_loop_of_its_own_goes_on_after_its_cell_and_is_stopped_when_it_closes(
    ipython: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run followed on an event loop of its own, on a thread (``run_coroutine_threadsafe``),
    goes on after its cell: not cut there. The user then closes that loop while the run waits
    in its tool: nothing can step the stream any more, so at that cell's end the run is ended
    stopped, the widget no longer running and its view saved (the old code left it running)."""

    async def slow_add(a: int, b: int) -> int:
        """Add two numbers."""
        await asyncio.Event().wait()  # never set: the run is left here
        return a + b

    slow_add.__name__ = "add"
    ipython.ns["agent"] = _agent(slow_add)
    started = ipython.run_cell(
        """
import threading, time
loop = asyncio.new_event_loop()
thread = threading.Thread(target=loop.run_forever)
thread.start()

async def watch():
    global run, widget
    run = turnfold.follow(Runner.run_streamed(agent, PROMPT))
    widget = run.widget
    async for event in run:
        pass

watching = asyncio.run_coroutine_threadsafe(watch(), loop)
deadline = time.monotonic() + 120  # the run waits in its tool (never a hang)
while "run" not in globals() or [c.status for c in run.transcript.tool_calls()] != ["executing"]:
    assert time.monotonic() < deadline, "the run never reached its tool"
    time.sleep(0.01)
"""
    )
    assert started.success
    run, widget = ipython.ns["run"], ipython.ns["widget"]
    assert widget.running is True
    assert [(c.name, c.status) for c in run.transcript.tool_calls()] == [("add", "executing")]

    closed = ipython.run_cell("loop.call_soon_threadsafe(loop.stop)\nthread.join()\nloop.close()")
    assert closed.success
    assert [(c.name, c.status) for c in run.transcript.tool_calls()] == [("add", "cancelled")]
    assert _statuses(run.transcript) == ["stopped"]
    assert widget.running is False
    assert _saved_statuses(widget) == ["stopped"]
    assert ipython.watchers() == []
    widget.close()
    del run, widget
    _forget_the_closed_loop(ipython, monkeypatch)


def _forget_the_closed_loop(ipython: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the closed loop left pending (the SDK's run loop and its tasks) collected now, so
    their complaints (asyncio's "Task was destroyed but it is pending!", a coroutine never
    awaited) are this scenario's, not a later test's."""
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ipython.shell.reset(new_session=False)
        gc.collect()


def test_A2_a_stream_stepped_by_hand_cell_by_cell_is_not_cut_between_its_events(
    ipython: Shell,
) -> None:
    """A user who steps the stream a cell at a time (``await anext(it)``) holds it between two
    events when a cell ends: it is not ended there (the cell's task is done, but no step was
    left unfinished), and reads to its end, completed, in a later cell."""

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    ipython.ns["agent"] = _agent(add)
    first = ipython.run_cell(
        "run = turnfold.follow(Runner.run_streamed(agent, PROMPT))\n"
        "widget = run.widget\n"
        "it = aiter(run)\n"
        "first = await anext(it)"
    )
    assert first.success
    run, widget = ipython.ns["run"], ipython.ns["widget"]
    assert widget.running is True
    assert not [e for e in run.transcript.entries if isinstance(e, AbortMarker)]
    assert len(ipython.watchers()) == 1

    assert ipython.run_cell("async for event in it:\n    pass").success
    assert _statuses(run.transcript) == ["completed"]
    assert not [e for e in run.transcript.entries if isinstance(e, AbortMarker)]
    assert widget.running is False
    assert ipython.watchers() == []
    widget.close()
