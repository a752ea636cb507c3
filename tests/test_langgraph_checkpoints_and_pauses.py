"""Saved LangGraph streams whose modes record less than ``updates`` does (spec A-1, A-2, L-3,
L-4, P-7, H-6): ``debug`` and ``checkpoints``.

- A run paused at a static breakpoint (``interrupt_before`` / ``interrupt_after``): LangGraph
  streams the pause as an ``__interrupt__`` update and in no other mode. A ``debug`` stream
  of it ends between two steps, event for event as one cut off there ends (a checkpoint
  naming the next step, or, without a checkpointer, a step's last task result). So it is
  called neither cut off nor paused: read as it ends, one warning saying which it may be.
- A ``debug`` stream with checkpoints cut between a task's result and the checkpoint after
  its step: LangGraph always streams that checkpoint (at a breakpoint too), so the run was
  cut off, and the result, which only the task's event holds, is shown.
- ``stream_mode="checkpoints"`` alone: each event a ``CheckpointPayload`` (``config``,
  ``parent_config``, ``values``, ``metadata``, ``next``, ``tasks``), as the runs below
  yield it. Its states hold the run's messages, each read once; its last ``next`` says
  whether the run ended; a run that stopped in a step (``interrupt()``, a breakpoint, an
  error, a cut) streams no event of it, said in a warning naming the file.

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): ``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``. The fixtures are made by
``tests/fixtures/frameworks/langchain/langgraph_pauses_recipe.py``; the helpers are
``tests/langgraph_streams.py``'s.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain_core.load import dumps as lc_dumps

import turnfold
from tests import followed_runs
from tests.fixtures.frameworks.langchain import langgraph_stream_runs as lookup
from tests.formats import langchain_runs as runs
from tests.langgraph_streams import (
    FIXTURES,
    accounted,
    before_calls_ran,
    between_checkpoint,
    calls,
    checkpoints_next,
    cut_off,
    in_doubt,
    read_as_it_ends,
    reasons,
    saved_events,
    stopped_by_the_cut,
)

PAUSED_NO_SAVER = (
    FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_no-checkpointer_interrupt-after-tools.jsonl"
)
PAUSED_SAVER = FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_interrupt-after-tools.jsonl"
CUT_BEFORE_CHECKPOINT = (
    FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_cut-before-checkpoint.jsonl"
)
CHECKPOINTS = FIXTURES / "langgraph_v1.2.24_stream-dumps_checkpoints_tool-error.jsonl"
CHECKPOINTS_INTERRUPT = FIXTURES / "langgraph_v1.2.24_stream-dumps_checkpoints_interrupt.jsonl"


# --- 1. a debug stream of a run paused at a breakpoint ------------------------------------------


def test_L3_a_debug_stream_paused_after_tools_without_a_checkpointer_says_it_may_have_paused() -> (
    None
):
    """``interrupt_after=["tools"]``, no checkpointer: the four events (the model's task and
    result, the tools' task and result) are all a ``debug`` stream holds of the pause, the
    same as of a graph ending on its tools node or of a stream cut there. Read as it ends,
    the call settled, and the one warning names the breakpoint among the ways (the
    recursion limit and a drain too: tests/test_langgraph_recursion_limit_and_drain.py). Old code's
    warning named only the graph's end and the cut."""
    assert [e["type"] for e in saved_events(PAUSED_NO_SAVER)] == ["task", "task_result"] * 2
    loaded = turnfold.load(PAUSED_NO_SAVER)
    assert reasons(loaded) == [in_doubt("c1", 4, "debug")]
    assert loaded.warnings[0].source == str(PAUSED_NO_SAVER)
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "success", "langgraph: 1.2.24")]
    accounted(loaded, PAUSED_NO_SAVER, "debug event")


def test_L3_a_debug_stream_paused_after_tools_with_a_checkpointer_is_not_called_cut_off() -> None:
    """With a checkpointer LangGraph streams the checkpoint after the tools step, naming the
    model's step next, then stops: a stream cut there ends the same. Old code read the pause
    as a cut: stopped, ``incomplete``, an abort marker."""
    last = saved_events(PAUSED_SAVER)[-1]
    assert (last["type"], last["payload"]["next"]) == ("checkpoint", ["model"])
    loaded = turnfold.load(PAUSED_SAVER)
    assert reasons(loaded) == [between_checkpoint(8, "model")]
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "success", "langgraph: 1.2.24")]
    accounted(loaded, PAUSED_SAVER, "debug event")


@pytest.mark.parametrize("checkpointer", [False, True], ids=["no-checkpointer", "checkpointer"])
def test_L3_a_debug_stream_paused_before_tools_is_not_called_cut_off(checkpointer: bool) -> None:
    """``interrupt_before=["tools"]``: the run pauses with the model's call not run; its
    ``debug`` stream ends on the model's result (or the checkpoint naming the tools step
    next). The call's outcome is unknown (it has not run, L-3), the run not ``incomplete``,
    one warning. Old code called it cut off."""
    agent = lookup.lookup_agent(checkpointer=checkpointer, interrupt_before=["tools"])
    events = list(lookup.stream(agent, "debug", f"before-{checkpointer}"))
    for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
        if checkpointer:
            assert reasons(loaded) == [between_checkpoint(5, "tools")]
        else:
            assert reasons(loaded) == [before_calls_ran(2, "model", "'c1'")]
        read_as_it_ends(loaded)
        assert calls(loaded) == [("c1", "unknown", None)]


@pytest.mark.parametrize("pause", ["interrupt_before", "interrupt_after"])
def test_L3_with_updates_among_the_modes_the_pause_is_recorded_and_nothing_is_said(
    pause: str,
) -> None:
    """The same paused runs streamed with ``["debug", "updates"]``: the ``__interrupt__``
    update records the pause, so no warning. (A check of the rule's limit: this holds on the
    old code too.)"""
    agent = lookup.lookup_agent(checkpointer=False, **{pause: ["tools"]})
    events = list(lookup.stream(agent, ["debug", "updates"], pause))
    assert events[-1] == ("updates", {"__interrupt__": ()})
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    read_as_it_ends(loaded)


# --- 2. a debug stream cut before its step's checkpoint -----------------------------------------


def test_L4_a_debug_stream_cut_before_the_checkpoint_after_a_tool_keeps_its_result() -> None:
    """The file ends with the tools task's result: the checkpoint after the step, which holds
    the tool's message, never came. The result is shown from the task's writes (old code
    lost it: the call read unknown, with no result), and, since LangGraph streams that
    checkpoint after every step (at a breakpoint too), the run reads stopped and
    ``incomplete``, its warning naming the result's line."""
    events = saved_events(CUT_BEFORE_CHECKPOINT)
    assert [e["type"] for e in events[-3:]] == ["checkpoint", "task", "task_result"]
    loaded = turnfold.load(CUT_BEFORE_CHECKPOINT)
    assert reasons(loaded) == [
        cut_off("checkpoint after the step of 'tools', whose result is on line 7")
    ]
    stopped_by_the_cut(loaded)
    assert calls(loaded) == [("call_1", "success", "3")]
    accounted(loaded, CUT_BEFORE_CHECKPOINT, "debug event")


def test_L4_a_debug_stream_cut_before_the_checkpoint_after_the_model_shows_its_message() -> None:
    """Cut after the model's task result: its message (thinking, the call of ``add``) is
    shown, the call's result never came: cut off. Old code showed the prompt alone."""
    events = list(lookup.stream(runs.scripted_agent(), "debug", "cut-model", runs.PROMPT))
    first_model = next(n for n, e in enumerate(events) if e["type"] == "task_result")
    loaded = turnfold.load(lc_dumps(events[: first_model + 1]))
    assert reasons(loaded) == [cut_off("result of call 'call_1'")]
    assert [type(e).__name__ for e in loaded.entries] == [
        "UserMessage", "Thinking", "ToolCall", "AbortMarker"
    ]  # fmt: skip
    assert calls(loaded) == [("call_1", "unknown", None)]
    stopped_by_the_cut(loaded)


# --- 3. stream_mode="checkpoints" ---------------------------------------------------------------


def test_A1_a_checkpoints_stream_reads_as_the_run_each_message_once() -> None:
    """Each event a ``CheckpointPayload``, the state after a step: the messages of the whole
    run, each read once though every later checkpoint holds it again; the last names no
    next step, so the run ended, said by nothing. Old code read each checkpoint as an update
    of nodes named ``config``, ``values``… and warned of the first as no stream's event."""
    events = saved_events(CHECKPOINTS)
    assert all(
        e.keys() == {"config", "parent_config", "values", "metadata", "next", "tasks"}
        for e in events
    )
    assert events[-1]["next"] == []
    loaded = turnfold.load(CHECKPOINTS)
    assert loaded.warnings == []
    read_as_it_ends(loaded)
    assert runs.said(loaded) == [
        ("UserMessage", runs.PROMPT, None),
        ("Thinking", "I add first.", None),
        ("ToolCall", "add", "success"),
        ("Thinking", "Now the failing one.", None),
        ("AssistantText", "Trying it.", None),
        ("ToolCall", "explode", "error"),
        ("Thinking", "Both calls are done.", None),
        ("AssistantText", runs.ANSWER, None),
    ]
    accounted(loaded, CHECKPOINTS, "checkpoints event")


@pytest.mark.parametrize("mode", ["checkpoints", ["checkpoints"]], ids=str)
def test_A1_A2_a_checkpoints_stream_loads_and_follows_as_the_runs_final_state(mode: Any) -> None:
    """Live, the events (bare, or ``[mode, chunk]`` pairs when the mode is listed), saved or
    as the objects, and followed, all give the transcript of the run's final state. Old code
    refused the pairs (no LangChain messages) and warned of the bare stream's first event."""
    agent = runs.scripted_agent()
    config = runs._config(f"cps-{mode}")
    events = list(agent.stream({"messages": [("user", runs.PROMPT)]}, config, stream_mode=mode))
    final = turnfold.load(agent.get_state(config).values)
    for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
        assert loaded.warnings == []
        assert loaded.entries == final.entries
    agent = runs.scripted_agent()
    followed = followed_runs.followed(lookup.stream(agent, mode, "cps-live", runs.PROMPT))
    assert followed.warnings == []
    live_final = turnfold.load(agent.get_state(runs._config("cps-live")).values)
    assert followed.entries == live_final.entries


def test_L4_a_checkpoints_stream_of_a_run_stopped_in_a_step_says_so_naming_the_file() -> None:
    """``interrupt()`` in the tool: a ``checkpoints`` stream ends on the checkpoint naming the
    tools step, and holds nothing of the interrupt (nor would it of a breakpoint, an error or
    a cut in that step). Read as it ends, the call not run (unknown), one warning naming
    the file and the checkpoint's line. Old code called it cut off, and warned of its first
    event as no stream's."""
    assert [e["next"] for e in saved_events(CHECKPOINTS_INTERRUPT)] == [
        ["__start__"], ["model"], ["tools"]
    ]  # fmt: skip
    loaded = turnfold.load(CHECKPOINTS_INTERRUPT)
    (warning,) = loaded.warnings
    assert warning.source == str(CHECKPOINTS_INTERRUPT)
    assert warning.reason == checkpoints_next(3, "tools")
    read_as_it_ends(loaded)
    assert calls(loaded) == [("d1", "unknown", None)]
    accounted(loaded, CHECKPOINTS_INTERRUPT, "checkpoints event")
