"""A Google ADK run whose tools raised side by side, read from its session (spec H-4, L-3):
the session records one exception and not which call raised it, so no call is given another
call's exception.

The ADK runs the calls of one response as tasks gathered together (``_gather_or_cancel`` in
google/adk/flows/llm_flows/tools/_batch_executor.py 2.13.0): the first exception ends the
batch, the calls still running are cancelled, the exceptions of the others are dropped, the
results of the calls that returned are kept (``_keep_completed_responses``, one response
event), and the node records the exception that ended it as one error event naming no call
(``workflow/_node_runner.py``: ``error_code`` the exception's type, ``error_message`` its
text) before ``Runner.run_async`` raises it. The trace reader shows each call's own exception
(its span records it, ``test_adk_raised_tool.py``); the session holds only the first.

The runs are real ADK runs (google-adk 2.13.0, installed) on the scripted model of the other
ADK tests (no network).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import turnfold
from tests.formats import adk_runs
from tests.formats.loops import run_async
from tests.formats.test_adk_handover_and_empty_result import _agent, five
from tests.formats.test_adk_handover_schemas import _turns
from turnfold.model import AssistantError, Transcript

pytest.importorskip("google.adk")


async def smoulder(x: str, delay: float) -> str:
    """Fails after ``delay`` seconds."""
    await asyncio.sleep(delay)
    raise ValueError(f"smoulder: {x}")


def _errors(session: Any) -> list[tuple[Any, Any]]:
    """The session's error events: their code and message."""
    return [(e.error_code, e.error_message) for e in session.events if e.error_code]


def _shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls(nested=True)
    ]


def _warned(transcript: Transcript, said: str, calls: list[str]) -> None:
    """One warning: the exception recorded, the calls it may have come from (by id), and
    that which raised it is not recorded."""
    [warning] = transcript.warnings
    assert f"records one exception ({said})" in warning.reason
    ids = [c.call_id for c in transcript.tool_calls(nested=True) if c.name in calls]
    assert all(f"({call_id})" in warning.reason for call_id in ids)
    assert "which of them raised it is not recorded" in warning.reason


@pytest.mark.parametrize("call_ids", [("f_1", "r_1", "r_2"), (None, None, None)],
                         ids=["model-ids", "no-ids"])  # fmt: skip
def test_H4_adk_calls_that_raised_side_by_side_are_not_given_one_another_s_exception(
    call_ids: tuple[str | None, ...],
) -> None:
    """``five`` returns, both ``explode`` raise (``boom: y``, ``boom: z``): the session keeps
    five's result and one error event, the first exception (the premise). Both ``explode`` are
    failed without a result (neither is given ``boom: y`` as its own), a warning says which
    calls the one exception may have come from, and the run ends on it."""
    calls = [("five", {}, call_ids[0]), ("explode", {"x": "y"}, call_ids[1]),
             ("explode", {"x": "z"}, call_ids[2])]  # fmt: skip
    calc = _agent("calc", [calls, ["never said"]], [adk_runs.explode, five])
    session, raised = _turns(calc, ("go",))
    assert str(raised) == "boom: y"
    assert _errors(session) == [("ValueError", "boom: y")]
    loaded = turnfold.load(session)
    assert _shown(loaded) == [
        ("five", {}, "success", "5"),
        ("explode", {"x": "y"}, "error", None),
        ("explode", {"x": "z"}, "error", None),
    ]
    _warned(loaded, "ValueError: boom: y", ["explode"])
    last = loaded.entries[-1]
    assert isinstance(last, AssistantError)
    assert last.message == "The run ended: explode raised ValueError: boom: y"
    assert loaded.metadata["outcome"] == "error"


def test_H4_adk_the_exception_recorded_is_not_always_the_first_call_s() -> None:
    """Why the order of the calls does not tell which raised: ``smoulder`` ``y`` waits, ``z``
    raises at once; the session records ``z``'s exception (``y`` was cancelled while it
    waited), the second call's. Neither call is given it, and both tools are named."""
    calls = [("smoulder", {"x": "y", "delay": 0.2}, "r_1"), ("explode", {"x": "z"}, "r_2")]
    calc = _agent("calc", [calls, ["never said"]], [smoulder, adk_runs.explode])
    session, raised = _turns(calc, ("go",))
    assert str(raised) == "boom: z"
    assert _errors(session) == [("ValueError", "boom: z")]
    loaded = turnfold.load(session)
    assert _shown(loaded) == [
        ("smoulder", {"x": "y", "delay": 0.2}, "error", None),
        ("explode", {"x": "z"}, "error", None),
    ]
    _warned(loaded, "ValueError: boom: z", ["smoulder", "explode"])
    last = loaded.entries[-1]
    assert isinstance(last, AssistantError)
    assert last.message == "The run ended: smoulder or explode raised ValueError: boom: z"


def test_H4_adk_the_one_call_left_open_beside_results_is_given_its_exception() -> None:
    """``five`` returns beside ``explode``, which raises: five's result is kept (its response
    event comes before the error), so ``explode`` is the one call left open, the one that
    raised: the exception is its result, with no warning."""
    calls = [("five", {}, "f_1"), ("explode", {"x": "y"}, "r_1")]
    calc = _agent("calc", [calls, ["never said"]], [adk_runs.explode, five])
    session, _ = _turns(calc, ("go",))
    loaded = turnfold.load(session)
    assert _shown(loaded) == [
        ("five", {}, "success", "5"),
        ("explode", {"x": "y"}, "error", "ValueError: boom: y"),
    ]
    assert loaded.warnings == []


def test_H4_adk_calls_that_raised_side_by_side_followed_as_loaded() -> None:
    """Followed (``turnfold.follow`` on ``run_async``), the run shows its calls, their
    warning and its end as a load of its session does."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    calls = [("explode", {"x": "y"}, "r_1"), ("explode", {"x": "z"}, "r_2")]
    calc = _agent("calc", [calls, ["never said"]], [adk_runs.explode])
    runner = Runner(agent=calc, app_name=adk_runs.APP, session_service=InMemorySessionService())
    (session, _, failure), live = adk_runs.followed(
        lambda wrap: run_async(adk_runs._run(runner, wrap, False))
    )
    assert str(failure) == "boom: y"
    loaded = turnfold.load(session)
    assert (
        _shown(live)
        == _shown(loaded)
        == [
            ("explode", {"x": "y"}, "error", None),
            ("explode", {"x": "z"}, "error", None),
        ]
    )
    assert [w.reason for w in live.warnings] == [w.reason for w in loaded.warnings]
    _warned(live, "ValueError: boom: y", ["explode"])
    assert isinstance(live.entries[-1], AssistantError)
    assert live.entries[-1].message == loaded.entries[-1].message
    assert live.metadata["outcome"] == loaded.metadata["outcome"] == "error"
