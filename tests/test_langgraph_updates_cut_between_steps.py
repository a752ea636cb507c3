"""A saved LangGraph stream with ``updates`` among its modes that ends between two steps
(spec A-1, L-3, L-4, P-7, H-6): on a checkpoint naming the next step (``debug``,
``checkpoints``), or on the model's result with its calls not run (``debug`` or ``tasks``).

``updates`` streams a static breakpoint's pause (``interrupt_before`` / ``interrupt_after``)
and an ``interrupt()`` as an ``__interrupt__`` update, and ``debug`` and ``tasks`` stream
the next step's task before it runs; so no pause leaves such a stream, and neither does a
node's error in ``debug`` or ``tasks`` (its task is streamed, then its error). What does
leave it, besides a cut, is an unfinished run whose end LangGraph raises out of the stream,
each run below: the recursion limit reached (``GraphRecursionError``), a drain requested
through ``RunControl`` (``GraphDrained``, a host shutting down) and, in ``checkpoints``,
which streams no task, the next node's error. None of them ended the run or paused it, so
the stream reads cut off: stopped, ``incomplete``, its warning saying how the run ended is
not recorded. Old code read each as it ends, its warning naming a breakpoint's pause.

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): the ``lookup`` agent of
``tests/fixtures/frameworks/langchain/langgraph_stream_runs.py`` (``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``); the helpers are
``tests/langgraph_streams.py``'s.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain_core.load import dumps as lc_dumps

import turnfold
from tests.fixtures.frameworks.langchain import langgraph_stream_runs as lookup
from tests.langgraph_streams import (
    between_checkpoint,
    calls,
    cut_off,
    kinds,
    read_as_it_ends,
    reasons,
    stopped_by_the_cut,
)


def _loads(events: list[Any]) -> list[Any]:
    """The stream saved by ``dumps`` and as the objects, each loaded."""
    return [turnfold.load(lc_dumps(events)), turnfold.load(events)]


# --- 1. on a checkpoint naming the next step -----------------------------------------------------


@pytest.mark.parametrize("mode", [["updates", "debug"], ["debug", "updates"]], ids=str)
def test_L3_L4_an_updates_and_debug_stream_cut_after_tools_reads_cut_off(mode: Any) -> None:
    """Cut after the tools step, the stream ends on the checkpoint naming the model's step
    next. A breakpoint there would have streamed its ``__interrupt__`` update after that
    checkpoint (the paused run, run here); the model's error its task first. The runs
    stopped by the recursion limit and by a drain stream these very events: all read cut
    off, saved by ``dumps`` or as the objects, ``lookup``'s result kept. Old code read them
    as they end, naming a breakpoint's pause as the run's possible end."""
    cut = lookup.until_after_tools(lookup.stream(lookup.lookup_agent(), mode, "cut"), mode)
    limited, drained = lookup.limited(mode, 2), lookup.drained(mode)
    assert kinds(limited, mode) == kinds(drained, mode) == kinds(cut, mode)
    assert (cut[-1][1]["type"], cut[-1][1]["payload"]["next"]) == ("checkpoint", ["model"])
    paused = list(lookup.stream(lookup.lookup_agent(interrupt_after=["tools"]), mode, "paused"))
    assert kinds(paused, mode) == [*kinds(cut, mode), ("updates", "__interrupt__")]
    for events in (cut, limited, drained):
        for loaded in _loads(events):
            assert reasons(loaded) == [
                cut_off(f"step of 'model', which its checkpoint on line {len(events)} names next")
            ]
            stopped_by_the_cut(loaded)
            assert calls(loaded) == [("c1", "success", "langgraph: 1.2.24")]


def test_L3_L4_an_updates_and_checkpoints_stream_ending_on_a_checkpoint_reads_cut_off() -> None:
    """``checkpoints`` streams no task, so there the model's error also leaves the stream
    ending on the checkpoint that names its step; ``updates`` records every pause
    (``interrupt()`` before the model, run here, and a breakpoint). The cut run, the
    model's error, the recursion limit and a drain: all unfinished, all read cut off. Old
    code read them as they end, naming ``interrupt()`` and a breakpoint."""
    mode = ["updates", "checkpoints"]
    cut = lookup.until_after_tools(lookup.stream(lookup.lookup_agent(), mode, "cut"), mode)
    raised = lookup.until_raised(lookup.stream(lookup.lookup_agent("model-raises"), mode, "r"))
    stopped = [cut, raised, lookup.limited(mode, 2), lookup.drained(mode)]
    assert all(kinds(events, mode) == kinds(cut, mode) for events in stopped)
    assert cut[-1] == ("checkpoints", cut[-1][1])
    assert cut[-1][1]["next"] == ["model"]
    asked = list(lookup.stream(lookup.lookup_agent("asks"), mode, "asks"))
    assert kinds(asked, mode)[-1] == ("updates", "__interrupt__")
    for events in stopped:
        for loaded in _loads(events):
            assert reasons(loaded) == [
                cut_off(f"step of 'model', which its checkpoint on line {len(events)} names next")
            ]
            stopped_by_the_cut(loaded)
            assert calls(loaded) == [("c1", "success", "langgraph: 1.2.24")]


@pytest.mark.parametrize("mode", [["updates", "debug"], ["updates", "checkpoints"]], ids=str)
def test_L3_L4_a_stream_ending_on_the_checkpoint_naming_the_tools_step_reads_cut_off(
    mode: Any,
) -> None:
    """Cut before the tools step (and, in ``checkpoints``, the run whose tool raised, which
    it does not stream): the checkpoint names the tools step, ``c1`` not run. ``updates``
    would have streamed a breakpoint's pause there: read cut off, ``c1`` unknown (L-3). Old
    code read it as it ends."""
    cut = lookup.until_tools(lookup.stream(lookup.lookup_agent(), mode, "cut"), mode)
    stopped = [cut, lookup.limited(mode, 1)]
    if "checkpoints" in mode:
        stream = lookup.stream(lookup.lookup_agent("tool-raises"), mode, "tool-raises")
        stopped.append(lookup.until_raised(stream))
    assert all(kinds(events, mode) == kinds(cut, mode) for events in stopped)
    for events in stopped:
        for loaded in _loads(events):
            assert reasons(loaded) == [cut_off("result of call 'c1'")]
            stopped_by_the_cut(loaded)
            assert calls(loaded) == [("c1", "unknown", None)]


# --- 2. on the model's result, its calls not run (no checkpoint) ---------------------------------


@pytest.mark.parametrize(
    ("mode", "checkpointer"),
    [(["updates", "debug"], False), (["updates", "tasks"], False), (["updates", "tasks"], True)],
    ids=["updates-debug", "updates-tasks", "updates-tasks-checkpointer"],
)
def test_L3_L4_an_updates_stream_ending_on_the_models_result_with_calls_not_run_reads_cut_off(
    mode: Any, checkpointer: bool
) -> None:
    """No checkpoint names the next step: the stream ends on the model's task result, ``c1``
    not run. A breakpoint before the tools step streams its ``__interrupt__`` update (run
    here), the tool's error its task first; the run stopped by its recursion limit streams
    these very events. Both read cut off, ``c1`` unknown. Old code read them as they end,
    naming a breakpoint's pause."""
    agent = lookup.lookup_agent(checkpointer=checkpointer)
    cut = lookup.until_tools(lookup.stream(agent, mode, "cut"), mode)
    limited = lookup.limited(mode, 1, checkpointer)
    assert kinds(limited, mode) == kinds(cut, mode)
    assert kinds(cut, mode)[-1] == (mode[1], "model")
    paused = lookup.lookup_agent(checkpointer=checkpointer, interrupt_before=["tools"])
    assert kinds(list(lookup.stream(paused, mode, "paused")), mode)[-1] == (
        "updates",
        "__interrupt__",
    )
    raised = lookup.lookup_agent("tool-raises", checkpointer=checkpointer)
    assert (mode[1], "tools") in kinds(lookup.until_raised(lookup.stream(raised, mode, "r")), mode)
    for events in (cut, limited):
        for loaded in _loads(events):
            assert reasons(loaded) == [cut_off("result of call 'c1'")]
            stopped_by_the_cut(loaded)
            assert calls(loaded) == [("c1", "unknown", None)]


# --- 3. the rule's limits: what still reads as it ends -------------------------------------------


@pytest.mark.parametrize("mode", [["updates", "debug"], ["updates", "checkpoints"]], ids=str)
def test_L3_with_updates_a_pause_between_steps_is_recorded_and_nothing_is_said(mode: Any) -> None:
    """The runs paused at a breakpoint before and after the tools step: the
    ``__interrupt__`` update says so, no warning, not cut off. (A check of the rule's
    limit: this holds on the old code too.)"""
    for pause, status in (("interrupt_before", "unknown"), ("interrupt_after", "success")):
        events = list(lookup.stream(lookup.lookup_agent(**{pause: ["tools"]}), mode, pause))
        for loaded in _loads(events):
            assert loaded.warnings == []
            read_as_it_ends(loaded)
            assert [c[:2] for c in calls(loaded)] == [("c1", status)]


def test_L3_without_updates_a_debug_stream_still_names_the_breakpoint() -> None:
    """The same cut in ``debug`` alone: a breakpoint's pause leaves those events too, so the
    stream is read as it ends, said. (A check of the rule's limit: this holds on the old
    code too.)"""
    cut = lookup.until_after_tools(lookup.stream(lookup.lookup_agent(), "debug", "c"), "debug")
    loaded = turnfold.load(lc_dumps(cut))
    assert reasons(loaded) == [between_checkpoint(len(cut), "model")]
    read_as_it_ends(loaded)
