"""A pydantic-ai tool that raised a plain exception (spec A-1, A-2, L-3, P-7), and following an
async run in a notebook task (docs/frameworks.md, spec A-2).

pydantic-ai (2.68, ``_agent_graph.py``) records no return for a call whose tool raised: the
exception leaves the run, and the history ends in a request of the returns collected so far,
``state='interrupted'``. Nothing in it says which call raised; the exception's traceback does
(it passes through pydantic-ai's execution of that call), and a followed stream saw that call
start (``FunctionToolCallEvent``) with no result. Loaded (the stopped ``AgentRun``, or
``capture_run_messages()`` with the exception) and followed, the call that raised is ``error``
with the exception's text and the turn failed; where which call raised cannot be told, the
calls stay ``unknown`` and the transcript says so.

Every run is the real pydantic-ai's, offline, on its ``FunctionModel`` or ``TestModel``.
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats.loops import run_async
from tests.formats.pydantic_ai_runs import stopped_run
from tests.kernel_cells import kernel_cells
from turnfold.following import follow
from turnfold.model import AssistantError, Transcript
from turnfold.process import Turn, project

pytest.importorskip("pydantic_ai")

DOCS = Path(__file__).parents[1] / "docs" / "frameworks.md"


# --- runs ------------------------------------------------------------------------------------


def _agent(parts: Callable[[], list[Any]], *, add_alone: bool = True, **kwargs: Any) -> Any:
    """An agent whose model answers the first request with ``parts()`` and then "done", and
    whose tools: ``add`` returns (``add_alone``: ``sequential=True``, so it runs, and returns,
    before the calls after it start, as pydantic-ai runs a barrier tool), ``explode`` raises
    ``ValueError`` (for ``x="wait"`` it waits until the run is torn down), ``wait`` waits
    until then."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> Any:
        if sum(isinstance(m, ModelRequest) for m in messages) == 1:
            return ModelResponse(parts=parts(), model_name="scripted-1")
        return ModelResponse(parts=[TextPart("done")], model_name="scripted-1")

    async def stream(messages: list[Any], info: Any) -> AsyncIterator[Any]:
        from pydantic_ai.models.function import DeltaToolCall

        if sum(isinstance(m, ModelRequest) for m in messages) == 1:
            yield {
                i: DeltaToolCall(p.tool_name, json.dumps(p.args), tool_call_id=p.tool_call_id)
                for i, p in enumerate(parts())
            }
        else:
            yield "done"

    agent = Agent(FunctionModel(respond, stream_function=stream), **kwargs)

    @agent.tool_plain(sequential=add_alone)
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @agent.tool_plain
    async def explode(x: str) -> str:
        """Raises, but for x="wait"."""
        if x == "wait":
            await asyncio.Event().wait()
        raise ValueError(f"boom: {x}")

    @agent.tool_plain
    async def wait() -> str:
        """Waits until the run is torn down."""
        await asyncio.Event().wait()
        return "never"

    return agent


def _call(name: str, call_id: str, **args: Any) -> Any:
    from pydantic_ai.messages import ToolCallPart

    return ToolCallPart(name, args, tool_call_id=call_id)


def _add_then_explode() -> list[Any]:
    return [_call("add", "call_1", a=1, b=2), _call("explode", "call_2", x="y")]


def _explode_twice() -> list[Any]:
    """Two calls of one tool, running at once: the second raises, the first is torn down."""
    return [_call("explode", "call_1", x="wait"), _call("explode", "call_2", x="a")]


def _wait_and_explode() -> list[Any]:
    return [_call("wait", "call_1"), _call("explode", "call_2", x="y")]


def _explode_then_add() -> list[Any]:
    return [_call("explode", "call_1", x="y"), _call("add", "call_2", a=1, b=2)]


def _followed_events(
    agent: Any, *, handle: bool = True, mode: Any = "parallel", **kwargs: Any
) -> tuple[Any, BaseException, list[Any]]:
    """``follow`` of ``run_stream_events("go")`` to its exception, inside
    ``capture_run_messages``: given the ``AgentRunEvents`` handle, or (``handle=False``) only
    its events, passed on by a generator of the test's own, which leads back to no run; the
    tools run in pydantic-ai's parallel execution ``mode``."""
    from pydantic_ai import Agent, capture_run_messages

    async def main() -> tuple[Any, BaseException, list[Any]]:
        with capture_run_messages() as captured, Agent.parallel_tool_call_execution_mode(mode):
            async with agent.run_stream_events("go", **kwargs) as events:

                async def bare() -> AsyncIterator[Any]:
                    async for event in events:
                        yield event

                followed = follow(events if handle else bare(), display=False)
                try:
                    async for _ in followed:
                        pass
                except Exception as exc:
                    return followed, exc, captured
        raise AssertionError("the run did not raise")

    return run_async(main())


# --- what a user sees ----------------------------------------------------------------------------


def _calls(transcript: Transcript) -> list[tuple[str, str, str, str | None]]:
    """Each call: id, name, status and result text."""
    return [
        (c.call_id, c.name, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def _turn_status(transcript: Transcript) -> str:
    turns = [node for node in project(transcript) if isinstance(node, Turn)]
    return turns[-1].header.status


def _error(transcript: Transcript) -> str:
    last = transcript.entries[-1]
    assert isinstance(last, AssistantError), last
    return last.message


# --- the call that raised (A-1, A-2) -----------------------------------------------------------


def test_A1_A2_an_agent_run_stopped_by_its_tool_loads_that_call_failed_as_followed() -> None:
    """``agent.iter()``: ``add`` returned, ``explode`` raised ``ValueError``. Followed and
    loaded, ``explode`` is an error with the exception's text, ``add`` a success (its return is
    in the interrupted request no node carries), and the turn failed, naming the tool."""
    agent_run, followed, exc, _ = stopped_run(_agent(_add_then_explode))
    assert type(exc) is ValueError
    loaded = turnfold.load(agent_run)
    expected = [
        ("call_1", "add", "success", "3"),
        ("call_2", "explode", "error", "ValueError: boom: y"),
    ]
    assert _calls(followed.transcript) == expected
    assert _calls(loaded) == expected
    assert loaded.entries == followed.transcript.entries
    assert loaded.warnings == followed.transcript.warnings == []
    for transcript in (loaded, followed.transcript):
        assert _error(transcript) == "The run ended: explode raised ValueError: boom: y"
        assert _turn_status(transcript) == "failed"


def test_A1_A2_captured_messages_with_the_exception_load_as_the_followed_events_show() -> None:
    """``run_stream_events()`` followed (the handle given), and what ``capture_run_messages``
    kept of the same run loaded with the exception: the same calls, statuses, results and
    error."""
    followed, exc, captured = _followed_events(_agent(_add_then_explode))
    loaded = turnfold.load((captured, exc))
    expected = [
        ("call_1", "add", "success", "3"),
        ("call_2", "explode", "error", "ValueError: boom: y"),
    ]
    assert _calls(followed.transcript) == _calls(loaded) == expected
    assert _error(followed.transcript) == _error(loaded)
    assert _error(loaded) == "The run ended: explode raised ValueError: boom: y"
    assert loaded.warnings == followed.transcript.warnings == []
    assert _turn_status(loaded) == _turn_status(followed.transcript) == "failed"


def test_A1_A2_of_two_calls_of_one_tool_running_at_once_the_one_that_raised_failed() -> None:
    """Both ``explode`` calls run at once; the second raises, the first is torn down without a
    return. One tool, two open calls: the exception's traceback tells which one raised."""
    agent_run, followed, exc, captured = stopped_run(_agent(_explode_twice))
    expected = [
        ("call_1", "explode", "unknown", None),
        ("call_2", "explode", "error", "ValueError: boom: a"),
    ]
    assert _calls(followed.transcript) == expected
    assert _calls(turnfold.load(agent_run)) == expected
    assert _calls(turnfold.load((captured, exc))) == expected
    events_followed, _, _ = _followed_events(_agent(_explode_twice))
    assert _calls(events_followed.transcript) == expected


def test_A1_A2_a_return_no_event_brought_is_read_from_the_run_as_a_load_reads_it() -> None:
    """``parallel_ordered_events``: ``explode`` (first) raised as ``add`` had returned, and
    pydantic-ai settles results in call order, so no event brings ``add``'s return; the
    history's interrupted request holds it, and the followed run reads it from its handle."""
    followed, exc, captured = _followed_events(
        _agent(_explode_then_add, add_alone=False), mode="parallel_ordered_events"
    )
    expected = [
        ("call_1", "explode", "error", "ValueError: boom: y"),
        ("call_2", "add", "success", "3"),
    ]
    assert _calls(turnfold.load((captured, exc))) == expected
    assert _calls(followed.transcript) == expected


def test_A1_a_test_model_run_whose_tool_raised_loads_as_followed() -> None:
    from pydantic_ai.models.test import TestModel

    agent = _agent(_add_then_explode)
    agent_run, followed, exc, captured = stopped_run(agent, model=TestModel(call_tools=["explode"]))
    assert str(exc).startswith("boom: ")
    loaded = turnfold.load(agent_run)
    assert loaded.entries == followed.transcript.entries
    [call] = loaded.tool_calls()
    assert (call.name, call.status) == ("explode", "error")
    assert call.result is not None
    assert call.result.text == f"ValueError: {exc}"
    assert _calls(turnfold.load((captured, exc))) == _calls(loaded)
    assert _turn_status(loaded) == "failed"


def test_L3_captured_messages_alone_leave_the_calls_unknown_and_say_why() -> None:
    """Without the exception, the messages do not say which call raised (nor that one did: a
    cancel leaves the same history): the calls stay unknown, and a warning names them and how
    to show it."""
    _, _, captured = _followed_events(_agent(_add_then_explode))
    loaded = turnfold.load(captured)
    assert _calls(loaded) == [
        ("call_1", "add", "success", "3"),
        ("call_2", "explode", "unknown", None),
    ]
    [warning] = loaded.warnings
    assert "explode (call_2)" in warning.reason
    assert "turnfold.load((messages, exc))" in warning.reason


def test_A2_followed_events_alone_one_started_call_is_the_one_that_raised() -> None:
    """Events passed on by a generator of the user's lead back to no run, so not to the
    exception's traceback: the one call that started and did not return raised."""
    followed, _, _ = _followed_events(_agent(_add_then_explode), handle=False)
    assert _calls(followed.transcript) == [
        ("call_1", "add", "success", "3"),
        ("call_2", "explode", "error", "ValueError: boom: y"),
    ]
    assert _error(followed.transcript) == "The run ended: explode raised ValueError: boom: y"


def test_A2_followed_events_alone_two_running_calls_stay_unknown_and_the_error_says_so() -> None:
    """``wait`` and ``explode`` both started; which raised the events do not tell: both stay
    unknown, and the run's error names them both."""
    followed, exc, captured = _followed_events(_agent(_wait_and_explode), handle=False)
    assert _calls(followed.transcript) == [
        ("call_1", "wait", "unknown", None),
        ("call_2", "explode", "unknown", None),
    ]
    assert (
        _error(followed.transcript) == "The run ended: wait or explode raised ValueError: boom: y"
    )
    assert _turn_status(followed.transcript) == "failed"
    # With the exception, its traceback tells.
    assert _calls(turnfold.load((captured, exc)))[1] == (
        "call_2",
        "explode",
        "error",
        "ValueError: boom: y",
    )


def test_L3_a_tool_call_limit_is_no_tool_s_exception() -> None:
    """``UsageLimitExceeded`` for ``tool_calls_limit`` leaves the response's calls without a
    return too, but no tool ran: none is made an error, and the error is the run's own."""
    from pydantic_ai.usage import UsageLimits

    limits = UsageLimits(tool_calls_limit=1)
    agent_run, followed, exc, captured = stopped_run(_agent(_add_then_explode), usage_limits=limits)
    assert type(exc).__name__ == "UsageLimitExceeded"
    for transcript in (
        followed.transcript,
        turnfold.load(agent_run),
        turnfold.load((captured, exc)),
    ):
        assert [status for _, _, status, _ in _calls(transcript)] == ["unknown", "unknown"]
        assert _error(transcript) == f"UsageLimitExceeded: {exc}"
    events_followed, _, _ = _followed_events(
        _agent(_add_then_explode), handle=False, usage_limits=limits
    )
    assert [status for _, _, status, _ in _calls(events_followed.transcript)] == [
        "unknown",
        "unknown",
    ]
    assert _error(events_followed.transcript) == f"UsageLimitExceeded: {exc}"


def test_L3_retries_running_out_beside_a_running_call_blame_only_the_retried_one() -> None:
    """``flaky`` uses up its retries (``UnexpectedModelBehavior``, which names it) while
    ``wait`` runs: ``flaky`` failed, as before; ``wait``, torn down, stays unknown, followed
    by the bare events too (where it is a call that started and did not return)."""
    from pydantic_ai import ModelRetry

    def retrying() -> Any:
        agent = _agent(lambda: [_call("wait", "call_1"), _call("flaky", "call_2")], retries=0)

        @agent.tool_plain
        async def flaky() -> str:
            """Always asks for a retry."""
            raise ModelRetry("again")

        return agent

    agent_run, followed, exc, _ = stopped_run(retrying())
    assert type(exc).__name__ == "UnexpectedModelBehavior"
    loaded = turnfold.load(agent_run)
    assert loaded.entries == followed.transcript.entries
    expected = [
        ("call_1", "wait", "unknown", None),
        ("call_2", "flaky", "error", "Tool 'flaky' exceeded max retries count of 0"),
    ]
    assert _calls(loaded) == expected
    assert _error(loaded) == f"UnexpectedModelBehavior: {exc}"
    events_followed, _, _ = _followed_events(retrying(), handle=False)
    assert _calls(events_followed.transcript) == expected
    assert _error(events_followed.transcript) == f"UnexpectedModelBehavior: {exc}"


# --- docs: following an async run in a notebook task -----------------------------------------


def _task_snippet() -> str:
    """The code block of docs/frameworks.md that follows a run in a task, as a user pastes it."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```", text, flags=re.M | re.S)
    found = [textwrap.dedent(code) for _, code in blocks if "asyncio.ensure_future(" in code]
    assert len(found) == 1, "docs/frameworks.md shows one task snippet"
    return found[0]


_SCRIPTED_AGENT = '''
import turnfold
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


agent = Agent(
    name="adder",
    tools=[add],
    model=ScriptedModel(
        [
            ModelStep(output=[function_call("add", {"a": 1, "b": 2}, call_id="call_1")]),
            ModelStep(output=[assistant_message("1+2=3")]),
        ]
    ),
)
'''

_AFTER_THE_TASK = """
await task
loaded = turnfold.load(followed.run)
print(followed.widget.running, followed.transcript == loaded, [
    (c.name, c.status, c.result.text) for c in followed.transcript.tool_calls()
])
"""


def test_A2_docs_the_task_snippet_follows_a_run_in_a_kernel() -> None:
    """The snippet, pasted into a cell of a real kernel (its event loop running): the widget
    is the cell's value, and the task follows the run to its end, as a load of the run shows
    it."""
    pytest.importorskip("agents")
    snippet = _task_snippet()
    _, shown, after = kernel_cells([_SCRIPTED_AGENT, snippet, _AFTER_THE_TASK])
    assert any("application/vnd.jupyter.widget-view+json" in data for data in shown), shown
    printed = "".join(data.get("text", "") for data in after)
    # The Agents SDK records no success flag: a tool's output leaves its call unknown (L-3).
    assert printed.strip() == "False True [('add', 'unknown', '3')]"
