"""A saved LangGraph stream that ends right after a tools node's result (spec A-1, A-2, L-3,
L-4, P-7, H-6): read by what the stream holds.

- It says the run went on: a ``tasks`` stream's last task started and never ended. Then the
  run is cut off, as every cut-off stream reads
  (``common.stream_cut_off``): one warning, the run ``incomplete``, its turn stopped,
  everything the stream holds still shown.
- It cannot tell: an ``updates``, ``values``, ``messages`` or lone ``tasks`` stream cut off
  after the tools node holds the very events of a run whose graph ends there (an edge from
  its tools node to ``END``, ``create_agent``'s ``return_direct`` tool), shown below with
  real runs of both (and, where its modes do not record them, of a run paused there or whose
  next node raised: tests/test_langgraph_endings_on_a_result.py). A finished run is never called cut
  off without evidence: the run is read as it ends, and one warning says the stream cannot
  tell, naming each way it may have ended.
- It says the run paused (an ``__interrupt__`` update: a static breakpoint's is empty):
  neither cut off nor in doubt. A ``debug`` stream, which streams no pause, whose last
  checkpoint names a next step that never began may be paused or cut there: read as it
  ends, said (tests/test_langgraph_checkpoints_and_pauses.py).

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): ``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``, hand-built ``StateGraph``
s with ``ToolNode``. The fixtures are made by
``tests/fixtures/frameworks/langchain/langgraph_cut_off_recipe.py``; the helpers are
``tests/langgraph_streams.py``'s.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.load import dumps as lc_dumps
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import turnfold
from tests import followed_runs
from tests.fixtures.frameworks.langchain import langgraph_stream_runs as lookup
from tests.formats import langchain_runs as runs
from tests.langgraph_streams import (
    FIXTURES,
    accounted,
    between_checkpoint,
    calls,
    cut_off,
    in_doubt,
    kinds,
    read_as_it_ends,
    reasons,
    stopped_by_the_cut,
)

CUT_UPDATES = FIXTURES / "langgraph_v1.2.24_stream-dumps_updates-messages_cut-after-tools.jsonl"
CUT_DEBUG = FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_cut-after-tools.jsonl"
CUT_TASKS = FIXTURES / "langgraph_v1.2.24_stream-dumps_tasks_cut-in-model.jsonl"
DIRECT_UPDATES = FIXTURES / "langgraph_v1.2.24_stream-dumps_updates_return-direct.jsonl"
DIRECT_DEBUG = FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_return-direct.jsonl"


# --- 1. the stream says the run went on: cut off ------------------------------------------------


def test_L3_a_debug_stream_ending_on_a_checkpoint_naming_a_step_cannot_tell_pause_from_cut() -> (
    None
):
    """The run's checkpoint after the tools step names the model's step next, and the file
    ends there, before that step's first task: the run did not end, but a run paused there
    at a breakpoint (``interrupt_after=["tools"]``) streams the very same events, which
    ``debug`` does not mark (tests/test_langgraph_checkpoints_and_pauses.py runs both). So it is
    called
    neither cut off nor paused: read as it ends, one warning naming the checkpoint's line;
    the call keeps its result. (It read stopped and incomplete before: a pause called a cut.)"""
    assert json.loads(CUT_DEBUG.read_text().splitlines()[-1])["payload"]["next"] == ["model"]
    loaded = turnfold.load(CUT_DEBUG)
    assert reasons(loaded) == [between_checkpoint(8, "model")]
    read_as_it_ends(loaded)
    assert calls(loaded) == [("call_1", "success", "3")]
    accounted(loaded, CUT_DEBUG)


def test_L4_P7_a_tasks_stream_cut_while_the_model_ran_reads_stopped_and_incomplete() -> None:
    """After the tools task's result, the model's task started and its result never came:
    the run did not end. Old code showed a finished run."""
    loaded = turnfold.load(CUT_TASKS)
    assert reasons(loaded) == [cut_off("result of the 'model' task it started")]
    stopped_by_the_cut(loaded)
    assert calls(loaded) == [("call_1", "success", "3")]
    accounted(loaded, CUT_TASKS)


def test_L3_a_debug_stream_whose_graph_ends_on_its_tools_node_reads_finished() -> None:
    """The ``return_direct`` tool ends the run: the last checkpoint names no next step, so
    the whole stream, which ends on the tool's result, is a finished run, said by nothing.
    (A check that the rule above needs its evidence: this holds on the old code too.)"""
    assert json.loads(DIRECT_DEBUG.read_text().splitlines()[-1])["payload"]["next"] == []
    loaded = turnfold.load(DIRECT_DEBUG)
    assert loaded.warnings == []
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "success", "langgraph: 1.2.24")]
    accounted(loaded, DIRECT_DEBUG)


# --- 2. the stream cannot tell: read as it ends, said -------------------------------------------


def test_L3_a_stream_cut_after_the_tools_node_and_a_graph_ending_there_read_alike() -> None:
    """An ``updates`` + ``messages`` stream of ``create_agent`` cut off after its tools node,
    and the whole ``updates`` stream of an agent whose ``return_direct`` tool ends the run:
    both end on a tools node's update, no step after it, and no event says whether one was
    to come. Neither is called cut off (never without evidence); each says, once, that the
    stream cannot tell, and everything stays shown. Old code said nothing."""
    cut = turnfold.load(CUT_UPDATES)
    assert reasons(cut) == [in_doubt("call_1", 5, ["updates", "messages"])]
    read_as_it_ends(cut)
    assert calls(cut) == [("call_1", "success", "3")]
    accounted(cut, CUT_UPDATES)
    direct = turnfold.load(DIRECT_UPDATES)
    assert reasons(direct) == [in_doubt("c1", 2, "updates")]
    read_as_it_ends(direct)
    assert calls(direct) == [("c1", "success", "langgraph: 1.2.24")]
    accounted(direct, DIRECT_UPDATES)


def _agent(direct: bool, **options: Any) -> Any:
    """``create_agent`` with one tool, ``lookup``, on a model that calls it and then would
    answer: ``return_direct`` or not, the only difference."""
    from langchain_core.tools import tool

    @tool(return_direct=direct)
    def lookup(query: str) -> str:
        """Look a release up."""
        return f"{query}: 1.2.24"

    model = runs.FakeToolModel(
        responses=[
            AIMessage("Looking.", id="m1",
                      tool_calls=[{"name": "lookup", "args": {"query": "lg"}, "id": "c1"}]),
            AIMessage("It is 1.2.24.", id="m2"),
        ]
    )  # fmt: skip
    return create_agent(model, tools=[lookup], checkpointer=InMemorySaver(), **options)


def _end_edge_graph(checkpointer: Any = None) -> Any:
    """A hand-built graph whose tools node leads to ``END``: its run ends on a tool's
    result (``tools_condition`` routes to the ``ToolNode``)."""
    from langchain_core.tools import tool

    @tool
    def lookup(query: str) -> str:
        """Look a release up."""
        return f"{query}: 1.2.24"

    model = runs.FakeToolModel(
        responses=[AIMessage("Looking.", id="m1",
                             tool_calls=[{"name": "lookup", "args": {"query": "lg"}, "id": "c1"}])]
    )  # fmt: skip
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([lookup]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=checkpointer)


def _stream(graph: Any, mode: Any, thread: str) -> Any:
    return graph.stream({"messages": [("user", "lg?")]}, runs._config(thread), stream_mode=mode)


MODES = ["updates", "values", "messages", ["updates", "messages"], ["values", "messages"]]


@pytest.mark.parametrize("mode", [*MODES, "tasks"], ids=str)
def test_L3_a_cut_after_tools_reads_as_a_graph_ending_there_unless_debug_says(mode: Any) -> None:
    """Cut off after its tools node (the consumer stopped reading before the model's next
    step), the run of ``lookup`` streams, event for event, what the run of the same agent
    whose ``lookup`` is ``return_direct`` streams whole, and a hand-built graph whose tools
    node leads to ``END`` streams the same ending: all three read alike, as they end, with
    the one warning that the stream cannot tell, saved by ``dumps`` or as the objects.
    Old code read each as a finished run and said nothing."""
    cut = lookup.until_after_tools(_stream(_agent(False), mode, "cut"), mode)
    whole = list(_stream(_agent(True), mode, "direct"))
    edge = list(_stream(_end_edge_graph(InMemorySaver()), mode, "edge"))
    assert kinds(cut, mode) == kinds(whole, mode)
    for events in (cut, whole, edge):
        for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
            (reason,) = reasons(loaded)
            assert reason == in_doubt("c1", len(events), mode)
            read_as_it_ends(loaded)
            assert calls(loaded) == [("c1", "success", "lg: 1.2.24")]


def test_L3_a_debug_stream_of_a_graph_whose_tools_node_leads_to_end_reads_finished() -> None:
    """The hand-built graph's whole ``debug`` stream ends on its tools step: its last
    checkpoint names no step, so the run ended, said by nothing. (A check that the doubt
    above is only where no checkpoint says: this holds on the old code too.)"""
    events = list(_stream(_end_edge_graph(InMemorySaver()), "debug", "edge-debug"))
    assert events[-1]["type"] == "checkpoint"
    assert events[-1]["payload"]["next"] == []
    whole = turnfold.load(lc_dumps(events))
    assert whole.warnings == []
    read_as_it_ends(whole)
    assert calls(whole) == [("c1", "success", "lg: 1.2.24")]


# --- 3. the stream says the run paused: neither cut off nor in doubt ----------------------------


PAUSE_MODES = ["updates", ["updates", "messages"], ["updates", "values"], ["messages", "updates"]]


@pytest.mark.parametrize("mode", PAUSE_MODES, ids=str)
def test_L3_a_run_paused_at_a_breakpoint_before_its_tools_is_notcut_off(mode: Any) -> None:
    """``interrupt_before=["tools"]``: the run pauses with the model's call unanswered, and
    LangGraph streams the pause as an empty ``__interrupt__`` update, its last event. The
    stream records how the run stopped: no warning, not ``incomplete``, the call's outcome
    unknown (it has not run, L-3). Old code called it cut off."""
    events = list(_stream(_agent(False, interrupt_before=["tools"]), mode, "before"))
    assert events[-1] in ({"__interrupt__": ()}, ("updates", {"__interrupt__": ()}))
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "unknown", None)]


@pytest.mark.parametrize("mode", PAUSE_MODES, ids=str)
def test_L3_a_run_paused_at_a_breakpoint_after_its_tools_is_notin_doubt(mode: Any) -> None:
    """``interrupt_after=["tools"]``: the run pauses right after its tools node's result,
    and says so: not read as a stream that cannot tell how its run ended. (A check of the
    rule above's limit: this holds on the old code too.)"""
    events = list(_stream(_agent(False, interrupt_after=["tools"]), mode, "after"))
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    read_as_it_ends(loaded)
    assert calls(loaded) == [("c1", "success", "lg: 1.2.24")]


def test_A2_a_followed_run_ending_on_its_tool_is_notin_doubt() -> None:
    """Followed live, a run's stream ends when the run does: the ``return_direct`` run reads
    finished, with no warning. (This holds on the old code too.)"""
    followed = followed_runs.followed(_stream(_agent(True), ["updates", "messages"], "live"))
    assert followed.warnings == []
    read_as_it_ends(followed)
    assert calls(followed) == [("c1", "success", "lg: 1.2.24")]
