"""Spec A-2 (with P-7): a Ctrl-C in an Agents SDK tool leaves no task of the followed run behind.

The Agents SDK (0.24) runs each function tool in an asyncio task of its own. A
``KeyboardInterrupt`` raised there leaves the event loop at once (``Task.__step`` re-raises
it) and reaches the cell, while the cell's task, the run's loop and its tool tasks stay
pending on IPython's event loop: the next cell that awaits steps them, and the SDK raises the
tool's interrupt again out of that cell (``_FunctionToolBatchExecutor._await_invoke_task``
turns a cancel of the tool's task back into the tool's ``KeyboardInterrupt``). ``follow``
ends the run at the cell's end, stopped (P-7), cancels the task that was left stepping it
and runs the loop until that task and the run's are done, so the next cell runs clean.

Each cell runs in a real IPython ``InteractiveShell`` (its own asyncio runner for top-level
``await``, as tests/test_follow_cell_end.py runs them); each run is the real SDK's on its
offline scripted model (``agents.testing.ScriptedModel``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from tests import test_follow_cell_end as cell_end
from tests.test_follow_cell_end import ANSWER, FOLLOW_IN_THE_CELL, Shell
from turnfold import following
from turnfold.model import AbortMarker, AssistantError
from turnfold.transport import unpack_view

pytest.importorskip("agents")
pytest.importorskip("IPython")

#: The real IPython shell the cells run in, and its loop drained after each test.
ipython = cell_end.ipython


def _ipython_loop_tasks() -> set[asyncio.Task[Any]]:
    """The tasks pending on the event loop IPython runs its cells' top-level ``await`` on."""
    from IPython.core.async_helpers import get_asyncio_loop

    return asyncio.all_tasks(get_asyncio_loop())


def _interrupting_tool(kind: str, pressed: KeyboardInterrupt, calls: list[str]) -> Any:
    """The tool ``add`` (sync: on the SDK's worker thread; async: in its own task), whose
    body is where the user's Ctrl-C lands: it raises ``pressed``."""

    def add_sync(a: int, b: int) -> int:
        """Add two numbers."""
        calls.append("add")
        raise pressed

    async def add_async(a: int, b: int) -> int:
        """Add two numbers."""
        calls.append("add")
        raise pressed

    add = add_sync if kind == "sync" else add_async
    add.__name__ = "add"
    return add


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_A2_P7_a_ctrl_c_in_an_agents_sdk_tool_leaves_no_task_and_no_stray_interrupt(
    ipython: Shell, kind: str
) -> None:
    """The cell gets the user's own ``KeyboardInterrupt`` (that very object, not swallowed);
    once it is over no task of the run is left on IPython's loop, and the next cell that
    awaits runs without an interrupt. The transcript keeps what was read, the call cancelled,
    the turn stopped once (the old code left four tasks pending, and the next ``await`` got
    the tool's ``KeyboardInterrupt`` again)."""
    pressed = KeyboardInterrupt()
    calls: list[str] = []
    ipython.ns["agent"] = cell_end._agent(_interrupting_tool(kind, pressed, calls))

    result = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert result.error_in_exec is pressed
    assert calls == ["add"]
    assert _ipython_loop_tasks() == set()

    after = ipython.run_cell("await asyncio.sleep(0)\nawait asyncio.sleep(0.01)\nafter = 1")
    assert after.error_in_exec is None
    assert after.success
    assert ipython.ns["after"] == 1
    assert _ipython_loop_tasks() == set()

    run, widget = ipython.ns["run"], ipython.ns["widget"]
    live = run.transcript
    assert [(c.name, c.status, c.args) for c in live.tool_calls()] == [
        ("add", "cancelled", {"a": 1, "b": 2})
    ]
    assert [e for e in live.entries if isinstance(e, AbortMarker)] == [live.entries[-1]]
    assert not [e for e in live.entries if isinstance(e, AssistantError)]
    assert [w.reason for w in live.warnings] == []
    assert cell_end._statuses(live) == ["stopped"]
    assert widget.running is False
    assert cell_end._saved_statuses(widget) == ["stopped"]
    assert ipython.watchers() == []
    widget.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_A2_P7_the_users_interrupt_is_shown_once_while_the_run_stops(
    ipython: Shell, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shell shows the interrupt as the cell's error, and nothing shows it again while the
    run stops: not IPython's ``run_code`` when the cell's code gets it back at its ``async
    for``, nor asyncio for the SDK's report of the tool task that raised it ("Background
    function tool task raised a fatal exception."), which the old code both let through
    (three tracebacks of one Ctrl-C in terminal IPython). The shell's ``showtraceback`` and
    the loop's exception handler are the user's again afterwards."""
    from IPython.core.async_helpers import get_asyncio_loop

    pressed = KeyboardInterrupt()
    ipython.ns["agent"] = cell_end._agent(_interrupting_tool(kind, pressed, []))
    shown: list[BaseException | None] = []
    show = ipython.shell.showtraceback

    def showtraceback(*args: Any, **kwargs: Any) -> None:
        shown.append(sys.exc_info()[1])
        show(*args, **kwargs)

    monkeypatch.setattr(ipython.shell, "showtraceback", showtraceback)
    reported: list[dict[str, Any]] = []

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        reported.append(context)

    loop = get_asyncio_loop()
    loop.set_exception_handler(report)

    result = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert result.error_in_exec is pressed
    assert shown == [pressed]
    assert [context.get("exception") for context in reported] == []
    assert ipython.shell.showtraceback == showtraceback
    assert loop.get_exception_handler() is report
    assert ipython.run_cell("await asyncio.sleep(0.01)").success
    assert shown == [pressed]
    assert reported == []
    assert cell_end._statuses(ipython.ns["run"].transcript) == ["stopped"]
    ipython.ns["widget"].close()


def test_A2_only_the_interrupt_shown_already_is_kept_from_being_shown_again(
    ipython: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the run stops, any other exception is shown as ever: the shell's traceback of it
    (given or being handled) and a loop report of it reach the user's ``showtraceback`` and
    exception handler; the interrupt the cell showed does not, by either way."""
    from IPython.core.async_helpers import get_asyncio_loop

    pressed, other = KeyboardInterrupt(), ValueError("a clean-up failed")
    shown: list[Any] = []
    monkeypatch.setattr(
        ipython.shell, "showtraceback", lambda exc_tuple=None, **kw: shown.append(exc_tuple)
    )
    reported: list[Any] = []
    loop = get_asyncio_loop()
    loop.set_exception_handler(lambda loop, context: reported.append(context["exception"]))

    with following._shown_once(pressed, ipython.shell, loop):
        for error in (pressed, other):
            ipython.shell.showtraceback((type(error), error, None))
            loop.call_exception_handler({"message": "a task raised", "exception": error})
            try:
                raise error
            except BaseException:
                ipython.shell.showtraceback(running_compiled_code=True)

    assert shown == [(ValueError, other, None), None]
    assert reported == [other]
    ipython.shell.showtraceback((KeyboardInterrupt, pressed, None))
    loop.call_exception_handler({"message": "a task raised", "exception": pressed})
    assert shown[-1] == (KeyboardInterrupt, pressed, None)
    assert reported == [other, pressed]


def test_A2_after_a_ctrl_c_the_next_followed_run_in_the_same_shell_completes(
    ipython: Shell,
) -> None:
    """The shell's loop is whole after the stop: the same cell run again with a tool that
    returns follows its run to the answer, completed, and leaves no task behind (on the old
    code the stray interrupt broke that next run's cell)."""
    pressed = KeyboardInterrupt()
    ipython.ns["agent"] = cell_end._agent(_interrupting_tool("async", pressed, []))
    assert ipython.run_cell(FOLLOW_IN_THE_CELL).error_in_exec is pressed
    ipython.ns["widget"].close()

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    ipython.ns["agent"] = cell_end._agent(add)
    again = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert again.error_in_exec is None
    assert again.success
    run, widget = ipython.ns["run"], ipython.ns["widget"]
    assert [c.result.text for c in run.transcript.tool_calls() if c.result] == ["3"]
    assert cell_end._statuses(run.transcript) == ["completed"]
    assert ANSWER in [getattr(e, "text", None) for e in run.transcript.entries]
    assert _ipython_loop_tasks() == set()
    widget.close()


def test_A2_the_cells_code_gets_the_users_interrupt_where_it_followed_and_goes_no_further(
    ipython: Shell,
) -> None:
    """The interrupt left the loop before the cell's code could see it: once the run is
    stopped, that code gets it at its ``async for`` (its ``except KeyboardInterrupt`` runs,
    with the very object the user raised), and what follows the loop never runs (on the old
    code the cell's code was left hanging, its handler never run)."""
    pressed = KeyboardInterrupt()
    ipython.ns["agent"] = cell_end._agent(_interrupting_tool("async", pressed, []))

    result = ipython.run_cell(
        FOLLOW_IN_THE_CELL.replace("async for", "try:\n  async for").replace(
            "    pass", "      pass\n  past_the_loop = True"
        )
        + "except KeyboardInterrupt as stop:\n  stopped = stop\n"
    )

    assert result.error_in_exec is pressed
    assert ipython.ns.get("stopped") is pressed
    assert "past_the_loop" not in ipython.ns
    assert _ipython_loop_tasks() == set()
    ipython.ns["widget"].close()


def test_A2_a_second_ctrl_c_while_the_run_stops_reaches_the_user(
    ipython: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the interrupt the cell got already is absorbed while the run's tasks stop: a tool
    that a second Ctrl-C stops as it is cancelled raises a new ``KeyboardInterrupt``, which
    the shell shows (a cell-end callback's error), never swallowed; the transcript still
    shows the run stopped."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool

    pressed, again = KeyboardInterrupt("first"), KeyboardInterrupt("second")

    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        raise pressed

    async def wait() -> str:
        """Wait for ever."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise again from None  # the user's second Ctrl-C, as the run stops
        return "never"

    model = ScriptedModel(
        [
            ModelStep(
                output=[
                    function_call("wait", {}, call_id="call_w"),
                    function_call("add", {"a": 1, "b": 2}, call_id="call_a"),
                ]
            ),
            ModelStep(output=[assistant_message(ANSWER)]),
        ]
    )
    ipython.ns["agent"] = Agent(
        name="calc", tools=[function_tool(wait), function_tool(add)], model=model
    )
    shown: list[BaseException | None] = []
    show = ipython.shell.showtraceback

    def showtraceback(*args: Any, **kwargs: Any) -> None:
        shown.append(sys.exc_info()[1])
        show(*args, **kwargs)

    monkeypatch.setattr(ipython.shell, "showtraceback", showtraceback)

    result = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert result.error_in_exec is pressed
    assert again in shown
    live = ipython.ns["run"].transcript
    assert sorted((c.name, c.status) for c in live.tool_calls()) == [
        ("add", "cancelled"),
        ("wait", "cancelled"),
    ]
    assert cell_end._statuses(live) == ["stopped"]
    ipython.ns["widget"].close()


#: Steps of the event loop a cancelled task of the run takes to end (its clean-up: closing a
#: connection, say): enough that the cell's task is done long before it.
CLEAN_UP_STEPS = 30


async def _cleaning_up_when_cancelled() -> None:
    """Wait for ever; cancelled, take :data:`CLEAN_UP_STEPS` steps to end."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        for _ in range(CLEAN_UP_STEPS):
            await asyncio.sleep(0)
        raise


@pytest.mark.parametrize("slow", ["tool", "guardrail"])
def test_A2_the_run_tasks_that_end_slowly_when_cancelled_are_waited_for(
    ipython: Shell, slow: str
) -> None:
    """Besides the interrupted tool, the run has a task that takes a while to end once
    cancelled: a second tool of the same model step (the SDK cancels it and does not wait for
    it) or an input guardrail still running (the run's own task). Both are ended before the
    cell's end is over: no task is left, the next cell runs clean, and the transcript says
    nothing was left pending."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, GuardrailFunctionOutput, function_tool, input_guardrail

    pressed = KeyboardInterrupt()

    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        raise pressed

    async def wait() -> str:
        """Wait for something."""
        await _cleaning_up_when_cancelled()
        return "never"

    @input_guardrail
    async def checking(context: Any, agent: Any, given: Any) -> GuardrailFunctionOutput:
        await _cleaning_up_when_cancelled()
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    calls = [function_call("add", {"a": 1, "b": 2}, call_id="call_a")]
    if slow == "tool":
        calls.insert(0, function_call("wait", {}, call_id="call_w"))
    model = ScriptedModel([ModelStep(output=calls), ModelStep(output=[assistant_message(ANSWER)])])
    ipython.ns["agent"] = Agent(
        name="calc",
        tools=[function_tool(wait), function_tool(add)],
        input_guardrails=[checking] if slow == "guardrail" else [],
        model=model,
    )

    result = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert result.error_in_exec is pressed
    assert _ipython_loop_tasks() == set()
    assert ipython.run_cell("await asyncio.sleep(0)").success
    live = ipython.ns["run"].transcript
    assert {c.status for c in live.tool_calls()} == {"cancelled"}
    assert [w.reason for w in live.warnings] == []
    assert cell_end._statuses(live) == ["stopped"]
    ipython.ns["widget"].close()


def test_A2_a_run_task_that_will_not_stop_is_left_and_said_in_a_warning(
    ipython: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool beside the interrupted one ignores the cancel the run's stop sends it: the shell
    is not held past the stop's wait (shortened here), and the transcript (in the saved view
    too) warns that the run's tasks were left pending, rather than say nothing."""
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from agents import Agent, function_tool

    monkeypatch.setattr(following, "_STOP_SECONDS", 0.2)
    pressed = KeyboardInterrupt()

    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        raise pressed

    async def stubborn() -> str:
        """Wait, and wait again when cancelled once (a second cancel, the test's, ends it)."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.Event().wait()
        return "never"

    model = ScriptedModel(
        [
            ModelStep(
                output=[
                    function_call("stubborn", {}, call_id="call_s"),
                    function_call("add", {"a": 1, "b": 2}, call_id="call_a"),
                ]
            ),
            ModelStep(output=[assistant_message(ANSWER)]),
        ]
    )
    ipython.ns["agent"] = Agent(
        name="calc", tools=[function_tool(stubborn), function_tool(add)], model=model
    )

    result = ipython.run_cell(FOLLOW_IN_THE_CELL)

    assert result.error_in_exec is pressed
    live, widget = ipython.ns["run"].transcript, ipython.ns["widget"]
    reasons = [w.reason for w in live.warnings]
    assert len(reasons) == 1
    assert reasons[0].startswith("the run's tasks did not stop after the interrupt")
    assert "_invoke_tool_and_run_post_invoke" in reasons[0]
    assert cell_end._statuses(live) == ["stopped"]
    assert "tasks did not stop after the interrupt" in str(unpack_view(widget._view))
    widget.close()
