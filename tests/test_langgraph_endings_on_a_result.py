"""A saved LangGraph stream that ends on a tool's result, no step after it (spec A-1, A-2, L-3,
L-4, P-7, H-6): its warning names every way of ending that leaves those events.

Besides a graph that ends there (an edge from its tools node to ``END``, a ``return_direct``
tool) and a cut, two more runs stream the same events where their modes do not record them:

- a run paused after its tools node at a static breakpoint (``interrupt_after=["tools"]``),
  which LangGraph streams as an ``__interrupt__`` update and in no other mode (so not in
  ``values`` or ``messages``), and, in ``messages`` alone, one paused by ``interrupt()`` in
  its next step (``values`` streams it in a state);
- a run whose next node raised: LangGraph raises a node's error out of the stream, and only
  ``tasks`` and ``debug`` stream that node's task before it runs.

Each stream below is of a real run, and the runs that leave the same events read alike: as
they end (never called cut off without evidence, the call keeps its result), with one
warning listing exactly the ways they may have ended (``IN_DOUBT`` of
tests/langgraph_streams.py). Old code named the graph's end and the cut alone where a
stream holds no ``tasks`` or ``debug`` event, and a breakpoint wherever it does,
``updates`` among the modes or not.

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): ``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``. The fixtures are made by
``tests/fixtures/frameworks/langchain/langgraph_endings_recipe.py``; the helpers are
``tests/langgraph_streams.py``'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain_core.load import dumps as lc_dumps

import turnfold
from tests.fixtures.frameworks.langchain import langgraph_stream_runs as lookup
from tests.langgraph_streams import (
    FIXTURES,
    accounted,
    calls,
    in_doubt,
    kinds,
    line_count,
    read_as_it_ends,
    reasons,
)
from turnfold.model import AssistantError

VALUES_PAUSED = FIXTURES / "langgraph_v1.2.24_stream-dumps_values_interrupt-after-tools.jsonl"
UPDATES_RAISED = FIXTURES / "langgraph_v1.2.24_stream-dumps_updates_model-raised-after-tools.jsonl"

#: What every run below shows: ``lookup`` called and answered.
ANSWERED = [("c1", "success", "langgraph: 1.2.24")]


def _run(end: str | None, mode: Any, thread: str, **options: Any) -> list[Any]:
    """The events the run of :func:`lookup.lookup_agent` ending as ``end`` says streams in
    ``mode``: its whole stream, or, ``"model-raises"``, what it yielded before the error."""
    events = lookup.stream(lookup.lookup_agent(end, **options), mode, thread)
    if end == "model-raises":
        return lookup.until_raised(events)
    return list(events)


def _cut(mode: Any, **options: Any) -> list[Any]:
    """The run whose model answers after the tool, its stream closed at the model's next
    step, as a consumer that stops reading leaves it."""
    events = lookup.stream(lookup.lookup_agent(**options), mode, "cut")
    return lookup.until_after_tools(events, mode)


def _in_doubt_alike(runs: list[list[Any]], mode: Any) -> None:
    """Each run's stream, saved by ``dumps`` or as the objects, read as it ends with the one
    warning of its mode."""
    for events in runs:
        for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
            assert reasons(loaded) == [in_doubt("c1", len(events), mode)]
            read_as_it_ends(loaded)
            assert calls(loaded) == ANSWERED


STOPLESS = ["values", "messages", ["values", "messages"]]


@pytest.mark.parametrize("mode", STOPLESS, ids=str)
def test_L3_a_values_or_messages_stream_ending_on_a_result_names_the_pause_and_the_error(
    mode: Any,
) -> None:
    """``interrupt_after=["tools"]`` pauses the run after ``lookup``'s result, and neither
    mode streams the pause; the run whose model raised next streamed those events before
    LangGraph raised the error; in ``messages`` alone, so did the run whose middleware asked
    a human with ``interrupt()`` before the model (``values`` streams that pause in a
    state). Event for event, each is the stream of the ``return_direct`` run and of the run
    cut after its tools node: all read alike, the warning naming the breakpoint (and
    ``interrupt()`` in ``messages`` alone) and the error. Old code named only the graph's
    end and the cut."""
    direct = _run("direct", mode, "direct")
    paused = _run(None, mode, "paused", interrupt_after=["tools"])
    raised = _run("model-raises", mode, "raises")
    asked = _run("asks", mode, "asks")
    alike = [direct, paused, raised, _cut(mode)]
    assert all(kinds(events, mode) == kinds(direct, mode) for events in alike)
    assert kinds(direct, mode)[-1][1] == "tools"
    if mode == "messages":
        assert kinds(asked, mode) == kinds(direct, mode)
        alike.append(asked)
    else:  # values records the pause: no doubt of it
        state = asked[-1][1] if isinstance(mode, list) else asked[-1]
        assert "__interrupt__" in state
    _in_doubt_alike(alike, mode)


PAUSE_RECORDED = ["updates", ["updates", "messages"]]


@pytest.mark.parametrize("mode", PAUSE_RECORDED, ids=str)
def test_L3_an_updates_stream_ending_on_a_result_names_the_error_not_a_pause(mode: Any) -> None:
    """``updates`` streams a breakpoint's pause and an ``interrupt()`` as an
    ``__interrupt__`` update, so neither ends a stream on ``lookup``'s result; the run
    whose model raised next does, as the ``return_direct`` run and the cut one do: the
    warning names the error and no pause. Old code named only the graph's end and the
    cut."""
    direct = _run("direct", mode, "direct")
    alike = [direct, _run("model-raises", mode, "raises"), _cut(mode)]
    assert all(kinds(events, mode) == kinds(direct, mode) for events in alike)
    for end, options in (("asks", {}), (None, {"interrupt_after": ["tools"]})):
        stopped = _run(end, mode, f"{end}-stopped", **options)
        assert kinds(stopped, mode)[-1][1] == "__interrupt__"
    _in_doubt_alike(alike, mode)


@pytest.mark.parametrize("mode", [["updates", "tasks"], ["updates", "debug"]], ids=str)
def test_L3_beside_tasks_or_debug_events_updates_rules_out_a_pause(mode: Any) -> None:
    """``tasks`` (and ``debug`` of a graph without a checkpointer, which streams no
    checkpoint naming the next step) end on the tools task's result, where a breakpoint's
    pause ends a stream of them alone; with ``updates`` among the modes the paused run's
    stream ends on its ``__interrupt__`` update, and the model's error is its task's
    result. So the ``return_direct`` run and the cut one, alike, may have ended there or
    been cut off, and nothing else: the warning names no breakpoint. Old code named one."""
    options: dict[str, Any] = {"checkpointer": False}
    direct = _run("direct", mode, "direct", **options)
    cut = _cut(mode, **options)
    assert kinds(cut, mode) == kinds(direct, mode)
    assert kinds(direct, mode)[-1] == (mode[1], "tools")
    paused = _run(None, mode, "paused", interrupt_after=["tools"], **options)
    assert kinds(paused, mode)[-1] == ("updates", "__interrupt__")
    raised = turnfold.load(lc_dumps(_run("model-raises", mode, "raises", **options)))
    assert [e.message for e in raised.entries if isinstance(e, AssistantError)] == [
        "RuntimeError: the model provider is down"
    ]
    _in_doubt_alike([direct, cut], mode)


@pytest.mark.parametrize(
    ("path", "mode"),
    [(VALUES_PAUSED, "values"), (UPDATES_RAISED, "updates")],
    ids=["values-paused", "updates-raised"],
)
def test_L3_L4_a_saved_stream_ending_on_a_result_says_what_it_may_be_naming_the_file(
    path: Path, mode: str
) -> None:
    """The saved ``values`` stream of the run paused after its tools node, and the saved
    ``updates`` stream of the run whose model raised next: the warning names the file, its
    last line and the ways its mode leaves in doubt; every event is read, none warned of.
    Old code named only the graph's end and the cut."""
    loaded = turnfold.load(path)
    (warning,) = loaded.warnings
    assert warning.source == str(path)
    assert warning.reason == in_doubt("c1", line_count(path), mode)
    read_as_it_ends(loaded)
    assert calls(loaded) == ANSWERED
    accounted(loaded, path, f"{mode} event")
