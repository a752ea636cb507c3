"""Real smolagents agents with a managed agent ``helper``, on the scripted ``Model`` of
``tests/formats/smolagents_runs.py``, for the tests that a followed smolagents run is the load of
its agent (spec A-2; tests/test_follow_leftovers.py, tests/test_follow_leftovers2.py,
tests/test_follow_leftovers3.py, tests/test_follow_prompt_frames.py,
tests/test_follow_failures.py)."""

from __future__ import annotations

from typing import Any

import pytest

#: The two tasks of :func:`agent_with_helper`'s runs.
FIRST, SECOND = "Add 1 and 2, and ask the helper for 5+6.", "Now add 3 and 4."


def smolagents_runs() -> Any:
    """``tests/formats/smolagents_runs.py``; the test skipped where smolagents is missing."""
    pytest.importorskip("smolagents")
    from tests.formats import smolagents_runs as runs

    return runs


def adding_helper() -> Any:
    """The managed agent ``helper``: it adds 5 and 6, and answers 11."""
    runs = smolagents_runs()
    return runs._managed(
        "helper",
        [
            runs._message(None, ("add", {"a": 5, "b": 6}, "h_1"), tokens=3),
            runs._message(None, ("final_answer", {"answer": "11"}, "h_2"), tokens=2),
        ],
    )


def agent_with_helper(*, stream_outputs: bool = True) -> Any:
    """A ``ToolCallingAgent`` for two runs: the first (:data:`FIRST`) adds and asks
    :func:`adding_helper`, then answers; the second (:data:`SECOND`) adds again and answers,
    without the helper."""
    runs = smolagents_runs()
    from smolagents import ToolCallingAgent

    add, _ = runs._tools()
    replies = [
        runs._message("First sum.", ("add", {"a": 1, "b": 2}, "call_1")),
        runs._message(None, ("helper", {"task": "add 5 and 6"}, "call_2")),
        runs._message(None, ("final_answer", {"answer": "3 and 11"}, "call_3")),
        runs._message("Second sum.", ("add", {"a": 3, "b": 4}, "call_4")),
        runs._message(None, ("final_answer", {"answer": "7"}, "call_5")),
    ]
    return ToolCallingAgent(
        tools=[add],
        managed_agents=[adding_helper()],
        verbosity_level=0,
        logger=runs._quiet(),
        stream_outputs=stream_outputs,
        model=runs._model_class()(replies),
    )
