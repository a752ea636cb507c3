"""A saved LangGraph stream that cannot tell how its run ended names the recursion limit and a
drain among the ways (spec A-1, L-3, L-4, P-7, H-6).

LangGraph stops a run unfinished between two steps when its recursion limit is reached
(``GraphRecursionError``) or its host asks it to drain through ``RunControl``
(``GraphDrained``), and raises either out of the stream: no stream mode records them. So
wherever a stream's events leave its end in doubt (it ends on a tool's result, on a
checkpoint naming the next step, on the model's result with its calls not run, or with calls
unanswered in ``values`` and ``messages``), the limit and a drain leave those very events
too. Each stream below is of a real run, compared event for event with the runs its warning
already named (the graph ending there, a breakpoint's pause, a cut); all read alike, as they
end, and the one warning names exactly the endings the modes leave possible, the limit and a
drain among them. Old code's warnings named neither.

With ``updates`` among the modes a stream ending between two steps names no pause, so it
reads cut off (tests/test_langgraph_updates_cut_between_steps.py); ending on a tool's result, the
graph may
have ended there, so it is in doubt still, as below.

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): the ``lookup`` agent of
``tests/fixtures/frameworks/langchain/langgraph_stream_runs.py`` (``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``) and its ``limited`` and
``drained`` runs; the helpers are ``tests/langgraph_streams.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain_core.load import dumps as lc_dumps

import turnfold
from tests.fixtures.frameworks.langchain import langgraph_stream_runs as lookup
from tests.langgraph_streams import (
    UNFINISHED_STOPS,
    before_calls_ran,
    between_checkpoint,
    calls,
    checkpoints_next,
    in_doubt,
    kinds,
    read_as_it_ends,
    reasons,
    unanswered,
)

#: ``lookup`` called and answered.
ANSWERED = [("c1", "success", "langgraph: 1.2.24")]
#: ``lookup`` called, not run: its outcome unknown (L-3).
NOT_RUN = [("c1", "unknown", None)]


def _read_alike(
    runs: list[list[Any]], warning: Callable[[list[Any]], str], shown: list[Any]
) -> None:
    """Each run's stream, saved by ``dumps`` or as the objects, read as it ends, its calls
    ``shown``, with the one ``warning``, which names the recursion limit and a drain."""
    for events in runs:
        for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
            (reason,) = reasons(loaded)
            assert reason == warning(events)
            assert UNFINISHED_STOPS in reason
            read_as_it_ends(loaded)
            assert calls(loaded) == shown


# --- 1. on a tool's result, no step after it ----------------------------------------------------


#: Every mode ``IN_DOUBT`` of tests/langgraph_streams.py words a warning for.
MODES: list[Any] = [
    "updates",
    "values",
    "messages",
    ["updates", "messages"],
    ["values", "messages"],
    "tasks",
    "debug",
    ["updates", "tasks"],
    ["updates", "debug"],
]


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_L3_a_stream_ending_on_a_result_names_the_recursion_limit_and_a_drain(mode: Any) -> None:
    """The run stopped by its recursion limit after the tools step (``recursion_limit=2``)
    and the run drained as its tool answered stream, in every mode, what the
    ``return_direct`` run and the run cut after its tools node stream (``debug`` and
    ``tasks`` without a checkpointer, which streams no checkpoint naming the next step).
    All four read as they end, the warning naming the graph's end, the limit, the drain,
    what else the modes leave in doubt (``IN_DOUBT``) and the cut; with ``updates``
    beside ``debug`` or ``tasks``, nothing else. Old code named neither the limit nor the
    drain."""
    checkpointer = not ({"tasks", "debug"} & set(mode if isinstance(mode, list) else [mode]))
    agent = lookup.lookup_agent("direct", checkpointer=checkpointer)
    direct = list(lookup.stream(agent, mode, "direct"))
    cut_agent = lookup.lookup_agent(checkpointer=checkpointer)
    cut = lookup.until_after_tools(lookup.stream(cut_agent, mode, "cut"), mode)
    limited = lookup.limited(mode, 2, checkpointer)
    drained = lookup.drained(mode, "tools", checkpointer)
    alike = [direct, cut, limited, drained]
    assert all(kinds(events, mode) == kinds(direct, mode) for events in alike)
    assert kinds(direct, mode)[-1][1] == "tools"
    _read_alike(alike, lambda events: in_doubt("c1", len(events), mode), ANSWERED)


# --- 2. between two steps, in modes that record no pause ----------------------------------------


#: By the step the run stopped after: the breakpoint that pauses it there, and the step next.
AFTER: dict[str, tuple[dict[str, Any], str]] = {
    "tools": ({"interrupt_after": ["tools"]}, "model"),
    "model": ({"interrupt_before": ["tools"]}, "tools"),
}
#: The recursion limit that stops the run after each step.
STEPS = {"model": 1, "tools": 2}


@pytest.mark.parametrize("after", ["model", "tools"])
@pytest.mark.parametrize("mode", ["debug", "checkpoints"])
def test_L3_a_stream_ending_on_a_checkpoint_naming_the_next_step_names_the_limit_and_a_drain(
    mode: str, after: str
) -> None:
    """With a checkpointer, a ``debug`` or ``checkpoints`` stream of a run stopped after a
    step ends on the checkpoint naming the next: so ends the run paused there at a
    breakpoint, the run stopped by its recursion limit there and the run drained in that
    step (and a stream cut there: tests/formats/test_langgraph_cut_after_tools.py). All
    read as they end, the warning naming the checkpoint's line and the breakpoint, the
    limit, the drain and the cut (in ``checkpoints``, which streams no task, the next
    step's own ``interrupt()`` and error too). Old code named neither the limit nor the
    drain."""
    pause, next_node = AFTER[after]
    paused = list(lookup.stream(lookup.lookup_agent(**pause), mode, "paused"))
    limited = lookup.limited(mode, STEPS[after])
    drained = lookup.drained(mode, after)
    alike = [paused, limited, drained]
    assert all(kinds(events, mode) == kinds(paused, mode) for events in alike)
    last = paused[-1] if mode == "checkpoints" else paused[-1]["payload"]
    assert last["next"] == [next_node]
    warning = checkpoints_next if mode == "checkpoints" else between_checkpoint
    shown = ANSWERED if after == "tools" else NOT_RUN
    _read_alike(alike, lambda events: warning(len(events), next_node), shown)


@pytest.mark.parametrize("mode", ["debug", "tasks"])
def test_L3_a_stream_ending_on_the_models_result_its_calls_not_run_names_the_limit_and_a_drain(
    mode: str,
) -> None:
    """No checkpoint (``debug`` without a checkpointer, ``tasks``): the stream ends on the
    model's task result, ``c1`` not run, as the run paused before its tools node at a
    breakpoint, the run stopped by its recursion limit after the model's step
    (``recursion_limit=1``), the run drained as the model answered and the run cut there
    end. All read as they end, ``c1`` unknown, the warning naming the breakpoint, the
    limit, the drain and the cut. Old code named neither the limit nor the drain."""
    agent = lookup.lookup_agent(checkpointer=False, interrupt_before=["tools"])
    paused = list(lookup.stream(agent, mode, "paused"))
    cut = lookup.until_tools(
        lookup.stream(lookup.lookup_agent(checkpointer=False), mode, "c"), mode
    )
    limited = lookup.limited(mode, 1, checkpointer=False)
    drained = lookup.drained(mode, "model", checkpointer=False)
    alike = [paused, cut, limited, drained]
    assert all(kinds(events, mode) == kinds(paused, mode) for events in alike)
    assert kinds(paused, mode)[-1] == (mode, "model")
    _read_alike(alike, lambda events: before_calls_ran(len(events), "model", "'c1'", mode), NOT_RUN)


@pytest.mark.parametrize("mode", ["values", "messages", ["values", "messages"]], ids=str)
def test_L3_a_values_or_messages_stream_with_calls_unanswered_names_the_limit_and_a_drain(
    mode: Any,
) -> None:
    """``values`` and ``messages`` alone record no stop between two steps: the run paused
    before its tools node, the run stopped by its recursion limit after the model's step,
    the run drained as the model answered and the run cut there all end with ``c1``
    unanswered. All read as they end, ``c1`` unknown, the warning naming the breakpoint
    (and, in ``messages`` alone, ``interrupt()``), the limit, the drain, the tools node's
    error and the cut. Old code named neither the limit nor the drain."""
    paused = list(lookup.stream(lookup.lookup_agent(interrupt_before=["tools"]), mode, "p"))
    cut = lookup.until_tools(lookup.stream(lookup.lookup_agent(), mode, "c"), mode)
    alike = [paused, cut, lookup.limited(mode, 1), lookup.drained(mode, "model")]
    assert all(kinds(events, mode) == kinds(paused, mode) for events in alike)
    assert kinds(paused, mode)[-1][1] == "model"
    _read_alike(alike, lambda events: unanswered(len(events), "'c1'", mode), NOT_RUN)
