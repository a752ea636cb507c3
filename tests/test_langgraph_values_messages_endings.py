"""Two leftovers of saved LangGraph streams (spec A-1, A-2, L-3, L-4, P-7, H-6).

- ``debug`` events as the objects a run yields, six levels above their messages
  (``version="v2"``'s ``{"type", "ns", "data"}`` parts, ``(mode, chunk)`` pairs of a listed
  mode, ``(namespace, chunk)`` pairs of ``subgraphs=True``): ``turnfold.load(events)`` reads
  them as it reads the same events saved with ``langchain_core.load.dumps``.
- A stream of ``values`` and ``messages`` events alone records no static breakpoint's pause,
  no node's error (LangGraph raises it out of the stream) and no cut, and ``messages`` no
  ``interrupt()`` either: a run paused before its tools node, one whose tools node raised and
  one cut off there stream the same events, run below. Such a stream is read as it ends (the
  calls not run are unknown, L-3), never called cut off without evidence, with one warning
  listing what it may be; ``updates`` among the modes records a pause, and a stream of them is
  read as before.

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): ``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``. The fixtures are made by
``tests/fixtures/frameworks/langchain/langgraph_values_messages_recipe.py``; the helpers are
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
from tests.fixtures.frameworks.langchain import langgraph_values_messages_recipe as recipe
from tests.formats import langchain_runs as runs
from tests.langgraph_streams import (
    FIXTURES,
    accounted,
    calls,
    cut_off,
    kinds,
    line_count,
    read_as_it_ends,
    reasons,
    stopped_by_the_cut,
    unanswered,
)

VALUES_PAUSED = FIXTURES / "langgraph_v1.2.24_stream-dumps_values_interrupt-before-tools.jsonl"
MESSAGES_PAUSED = FIXTURES / "langgraph_v1.2.24_stream-dumps_messages_interrupt-before-tools.jsonl"


# --- 1. debug events as the objects a run yields ------------------------------------------------


#: The whole scripted run (a call that succeeds, a handled ``ToolException``, the answer).
SCRIPTED = [
    ("UserMessage", runs.PROMPT, None),
    ("Thinking", "I add first.", None),
    ("ToolCall", "add", "success"),
    ("Thinking", "Now the failing one.", None),
    ("AssistantText", "Trying it.", None),
    ("ToolCall", "explode", "error"),
    ("Thinking", "Both calls are done.", None),
    ("AssistantText", runs.ANSWER, None),
]

#: ``stream``'s mode and options whose ``debug`` events hold a checkpoint's messages six
#: levels down the list of events.
DEEP_DEBUG: dict[str, tuple[Any, dict[str, Any]]] = {
    "v2": ("debug", {"version": "v2"}),
    "v2-listed": (["debug"], {"version": "v2"}),
    "v2-subgraphs": ("debug", {"version": "v2", "subgraphs": True}),
    "listed": (["debug"], {}),
    "subgraphs": ("debug", {"subgraphs": True}),
}


@pytest.mark.parametrize("shape", list(DEEP_DEBUG))
def test_A1_debug_events_as_objects_load_as_their_dumps(shape: str) -> None:
    """``list(agent.stream(..., stream_mode="debug", version="v2"))`` (and the pairs of a
    listed mode or of ``subgraphs=True``): the objects load as the same events saved with
    ``dumps`` do, and as the run's final state: the whole run, no warning. Old code raised
    ``TranscriptFormatError`` ("no LangChain messages in the stream"): the objects were
    not told for LangChain's (their messages were past the depth it looked), so read as
    plain values, each message dumped without its type."""
    mode, options = DEEP_DEBUG[shape]
    agent = runs.scripted_agent()
    events = list(lookup.stream(agent, mode, f"deep-{shape}", runs.PROMPT, **options))
    if options.get("version") == "v2":
        assert {e["type"] for e in events} == {"debug"}
        assert events[1]["data"]["payload"]["values"]["messages"]  # six levels down
    loaded = turnfold.load(events)
    dumped = turnfold.load(lc_dumps(events))
    final = turnfold.load(agent.get_state(runs._config(f"deep-{shape}")).values)
    assert loaded.warnings == dumped.warnings == []
    assert runs.said(loaded) == SCRIPTED
    assert loaded.entries == dumped.entries == final.entries
    assert loaded.metadata == dumped.metadata


def test_A2_a_followed_v2_debug_stream_shows_what_its_events_load_as() -> None:
    """``turnfold.follow`` of the ``version="v2"`` ``debug`` stream yields each part as it
    came, and its transcript equals the load of the parts it yielded, as objects and saved
    with ``dumps``. (The follow itself read the parts on old code too; the load of the
    objects raised.)"""
    agent = runs.scripted_agent()
    stream = lookup.stream(agent, "debug", "v2-live", runs.PROMPT, version="v2")
    run = turnfold.follow(stream, display=False)
    events = list(run)
    assert [e["type"] for e in events] == ["debug"] * len(events)
    followed = run.transcript
    assert followed.warnings == []
    assert runs.said(followed) == SCRIPTED
    for loaded in (turnfold.load(events), turnfold.load(lc_dumps(events))):
        assert loaded.warnings == []
        assert loaded.entries == followed.entries


# --- 2. values and messages alone: a pause, an error and a cut stream the same ------------------


@pytest.mark.parametrize("mode", ["values", "messages", ["values", "messages"]], ids=str)
def test_L3_a_values_or_messages_stream_paused_before_tools_is_not_called_cut_off(
    mode: Any,
) -> None:
    """``interrupt_before=["tools"]``: the run pauses with ``c1`` not run, and neither mode
    streams the pause. Its stream is, event for event, that of the run whose tools node
    raised (LangGraph raises the error out of the stream) and of the run cut off before its
    tools node. All three read alike, saved by ``dumps`` or as the objects: as they end, the
    call unknown (it has not run, L-3), the run not ``incomplete``, one warning listing the
    pause, the error and the cut (and, in ``messages`` alone, ``interrupt()``; the
    recursion limit and a drain too: tests/test_langgraph_recursion_limit_and_drain.py). Old code
    called
    each cut off: stopped, ``incomplete``, an abort marker."""
    paused = list(lookup.stream(lookup.lookup_agent(interrupt_before=["tools"]), mode, "p"))
    raised = lookup.until_raised(lookup.stream(lookup.lookup_agent("tool-raises"), mode, "r"))
    cut = lookup.until_tools(lookup.stream(lookup.lookup_agent(), mode, "c"), mode)
    assert kinds(paused, mode) == kinds(raised, mode) == kinds(cut, mode)
    assert kinds(paused, mode)[-1][1] == "model"
    for events in (paused, raised, cut):
        for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
            assert reasons(loaded) == [unanswered(len(events), "'c1'", mode)]
            read_as_it_ends(loaded)
            assert calls(loaded) == [("c1", "unknown", None)]
            assert [type(e).__name__ for e in loaded.entries] == [
                "UserMessage", "AssistantText", "ToolCall"
            ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "mode"),
    [(VALUES_PAUSED, "values"), (MESSAGES_PAUSED, "messages")],
    ids=["values", "messages"],
)
def test_L3_L4_a_saved_paused_stream_says_what_it_may_be_naming_the_file(
    path: Path, mode: str
) -> None:
    """The saved streams of the paused run: the warning names the file and its last line,
    every event is read, none warned of. Old code read them as cut off."""
    loaded = turnfold.load(path)
    (warning,) = loaded.warnings
    assert warning.source == str(path)
    assert warning.reason == unanswered(line_count(path), "'c1'", mode)
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "unknown", None)]
    accounted(loaded, path, f"{mode} event")


def test_L3_a_messages_stream_stopped_inside_its_tools_step_may_be_an_interrupt() -> None:
    """Two calls of one tools step: ``lookup`` answers, ``remove`` stops on ``interrupt()``.
    ``messages`` does not stream it: the stream ends on ``lookup``'s answer, as one whose
    ``remove`` raised or that was cut there ends. No breakpoint pauses inside a step, so the
    warning lists ``interrupt()``, the error and the cut; the run is read as it ends, ``c2``
    unknown. Old code called the paused run cut off."""
    events = list(lookup.stream(recipe.two_calls_agent(), "messages", "two"))
    assert kinds(events, "messages")[-2:] == [("messages", "model"), ("messages", "tools")]
    loaded = turnfold.load(lc_dumps(events))
    assert reasons(loaded) == [unanswered(len(events), "'c2'", "messages", in_step=True)]
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "success", "langgraph: 1.2.24"), ("c2", "unknown", None)]


def test_L3_with_values_a_stream_stopped_inside_its_tools_step_reads_cut_off() -> None:
    """``["values", "messages"]`` of two calls that both answer, cut after the first answer
    (whichever task's thread ended first): ``values`` would have streamed an
    ``interrupt()`` (a state's ``__interrupt__``) and no breakpoint pauses inside a step, so
    nothing but an error or a cut fits: read cut off, as before. (A check of the rule's
    limit: this holds on the old code too.)"""
    mode = ["values", "messages"]
    stream = lookup.stream(recipe.two_calls_agent(asks=False), mode, "two-cut")
    events = lookup.until_tools(stream, mode, keep_first=True)
    assert kinds(events, mode)[-1] == ("messages", "tools")
    answered = events[-1][1][0].tool_call_id
    unanswered = ({"c1", "c2"} - {answered}).pop()
    loaded = turnfold.load(lc_dumps(events))
    assert reasons(loaded) == [cut_off(f"result of call {unanswered!r}")]
    stopped_by_the_cut(loaded)
    assert {c[0]: c[1] for c in calls(loaded)} == {answered: "success", unanswered: "unknown"}


def test_L3_a_values_stream_records_an_interrupt_and_says_nothing() -> None:
    """``interrupt()`` in the tool: ``values`` streams it (a state's ``__interrupt__``), so
    the stream records the pause: no warning, the request shown. (A check of the rule's
    limit: this holds on the old code too.)"""
    events = list(lookup.stream(runs.interrupt_agent(["a.txt"]), "values", "int-values"))
    assert "__interrupt__" in events[-1]
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    assert "outcome" not in loaded.metadata
    assert runs.said(loaded)[-2:] == [
        ("ToolCall", "delete_file", "confirming"),
        ("PendingAction", '{\n  "question": "Delete a.txt?",\n  "path": "a.txt"\n}', None),
    ]


@pytest.mark.parametrize("mode", ["updates", ["updates", "messages"]], ids=str)
def test_L3_an_updates_stream_whose_tools_node_raised_still_reads_cut_off(mode: Any) -> None:
    """``updates`` among the modes records a pause (an ``__interrupt__`` update), so a stream
    that ends with a call unanswered and no pause was not paused: read cut off, as before.
    (A check of the rule's limit: this holds on the old code too.)"""
    events = lookup.until_raised(lookup.stream(lookup.lookup_agent("tool-raises"), mode, "u"))
    loaded = turnfold.load(lc_dumps(events))
    assert reasons(loaded) == [cut_off("result of call 'c1'")]
    stopped_by_the_cut(loaded)
    assert calls(loaded) == [("c1", "unknown", None)]
