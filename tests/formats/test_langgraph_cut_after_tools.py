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
  next node raised: tests/test_langgraph_streams58c.py). A finished run is never called cut
  off without evidence: the run is read as it ends, and one warning says the stream cannot
  tell, naming each way it may have ended.
- It says the run paused (an ``__interrupt__`` update: a static breakpoint's is empty):
  neither cut off nor in doubt. A ``debug`` stream, which streams no pause, whose last
  checkpoint names a next step that never began may be paused or cut there: read as it
  ends, said (tests/test_langgraph_streams58.py).

The runs are real (langgraph 1.2.24, langchain 1.5.2, offline): ``create_agent`` on the
scripted ``FakeToolModel`` of ``tests/formats/langchain_runs.py``, hand-built ``StateGraph``
s with ``ToolNode``. The fixtures are made by
``tests/fixtures/frameworks/langchain/langgraph_cut_off_recipe.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
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
from tests.fixtures.frameworks.langchain import langgraph_cut_off_recipe as recipe
from tests.formats import langchain_runs as runs
from turnfold.formats.common import UNFINISHED
from turnfold.model import AbortMarker, Transcript
from turnfold.process import Turn, project

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "langchain"
CUT_UPDATES = FIXTURES / "langgraph_v1.2.24_stream-dumps_updates-messages_cut-after-tools.jsonl"
CUT_DEBUG = FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_cut-after-tools.jsonl"
CUT_TASKS = FIXTURES / "langgraph_v1.2.24_stream-dumps_tasks_cut-in-model.jsonl"
DIRECT_UPDATES = FIXTURES / "langgraph_v1.2.24_stream-dumps_updates_return-direct.jsonl"
DIRECT_DEBUG = FIXTURES / "langgraph_v1.2.24_stream-dumps_debug_return-direct.jsonl"


def _cut_off(end: str) -> str:
    return (
        f"the stream ends inside the run begun on line 1 (no {end}): how that run ended is "
        "not recorded"
    )


#: The ways a run may end that leave a stream ending on a tool's result besides a cut, as
#: its warning names them.
ENDED = "ended there (a graph whose tools node leads to END, a return_direct tool)"
BREAKPOINT = "paused at a breakpoint (interrupt_before / interrupt_after)"
RAISED = "its next node raised an error"

#: By the stream's mode: the ways the stream's events leave in doubt besides the graph's
#: end and a cut (its modes record the others: ``updates`` a pause, ``values`` an
#: ``interrupt()``, ``tasks`` the next node's task), and its modes as the warning names them
#: (tests/test_langgraph_streams58c.py runs each way).
IN_DOUBT: dict[str, tuple[list[str], str]] = {
    "updates": ([RAISED], "updates"),
    "values": ([BREAKPOINT, RAISED], "values"),
    "messages": ([f"{BREAKPOINT} or on interrupt()", RAISED], "messages"),
    "['updates', 'messages']": ([RAISED], "messages and updates"),
    "['values', 'messages']": ([BREAKPOINT, RAISED], "messages and values"),
    "tasks": ([BREAKPOINT], "tasks"),
    "debug": ([BREAKPOINT], "debug"),
    "['updates', 'tasks']": ([], "tasks and updates"),
    "['updates', 'debug']": ([], "debug and updates"),
}


def _in_doubt(call_id: str, line: int, mode: Any) -> str:
    """The warning of a stream in ``mode`` ending on a tool's result (:data:`IN_DOUBT`)."""
    ways, modes = IN_DOUBT[str(mode)]
    return (
        f"the stream ends on the result of call {call_id!r} (line {line}), no step after it: "
        f"whether the run {', '.join([ENDED, *ways])} or the stream was cut off is not "
        f"recorded ({modes} events record none of these)"
    )


def _reasons(transcript: Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


def _statuses(transcript: Transcript) -> list[str]:
    return [item.header.status for item in project(transcript) if isinstance(item, Turn)]


def _calls(transcript: Transcript) -> list[tuple[str, str, str | None]]:
    return [
        (c.call_id, c.status, c.result.text if c.result else None) for c in transcript.tool_calls()
    ]


def _stopped_by_the_cut(transcript: Transcript) -> None:
    last = transcript.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.reason == UNFINISHED
    assert transcript.metadata["outcome"] == "incomplete"
    assert _statuses(transcript) == ["stopped"]


def _read_as_it_ends(transcript: Transcript) -> None:
    assert "outcome" not in transcript.metadata
    assert not any(isinstance(e, AbortMarker) for e in transcript.entries)
    assert _statuses(transcript) == ["completed"]


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _accounted(transcript: Transcript, path: Path) -> None:
    """Every event of the file read, none warned of: the warning is the stream's end's."""
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.total("mapped") == _lines(path)


# --- 1. the stream says the run went on: cut off ------------------------------------------------


def test_L3_a_debug_stream_ending_on_a_checkpoint_naming_a_step_cannot_tell_pause_from_cut() -> (
    None
):
    """The run's checkpoint after the tools step names the model's step next, and the file
    ends there, before that step's first task: the run did not end, but a run paused there
    at a breakpoint (``interrupt_after=["tools"]``) streams the very same events, which
    ``debug`` does not mark (tests/test_langgraph_streams58.py runs both). So it is called
    neither cut off nor paused: read as it ends, one warning naming the checkpoint's line;
    the call keeps its result. (It read stopped and incomplete before: a pause called a cut.)"""
    assert json.loads(CUT_DEBUG.read_text().splitlines()[-1])["payload"]["next"] == ["model"]
    loaded = turnfold.load(CUT_DEBUG)
    assert _reasons(loaded) == [
        "the stream ends on the checkpoint on line 8, which names 'model' next, before that "
        "step began: whether the run paused at a breakpoint (interrupt_before / "
        "interrupt_after, which debug events do not record) or the stream was cut off is not "
        "recorded"
    ]
    _read_as_it_ends(loaded)
    assert _calls(loaded) == [("call_1", "success", "3")]
    _accounted(loaded, CUT_DEBUG)


def test_L4_P7_a_tasks_stream_cut_while_the_model_ran_reads_stopped_and_incomplete() -> None:
    """After the tools task's result, the model's task started and its result never came:
    the run did not end. Old code showed a finished run."""
    loaded = turnfold.load(CUT_TASKS)
    assert _reasons(loaded) == [_cut_off("result of the 'model' task it started")]
    _stopped_by_the_cut(loaded)
    assert _calls(loaded) == [("call_1", "success", "3")]
    _accounted(loaded, CUT_TASKS)


def test_L3_a_debug_stream_whose_graph_ends_on_its_tools_node_reads_finished() -> None:
    """The ``return_direct`` tool ends the run: the last checkpoint names no next step, so
    the whole stream, which ends on the tool's result, is a finished run, said by nothing.
    (A check that the rule above needs its evidence: this holds on the old code too.)"""
    assert json.loads(DIRECT_DEBUG.read_text().splitlines()[-1])["payload"]["next"] == []
    loaded = turnfold.load(DIRECT_DEBUG)
    assert loaded.warnings == []
    _read_as_it_ends(loaded)
    assert _calls(loaded) == [("c1", "success", "langgraph: 1.2.24")]
    _accounted(loaded, DIRECT_DEBUG)


# --- 2. the stream cannot tell: read as it ends, said -------------------------------------------


def test_L3_a_stream_cut_after_the_tools_node_and_a_graph_ending_there_read_alike() -> None:
    """An ``updates`` + ``messages`` stream of ``create_agent`` cut off after its tools node,
    and the whole ``updates`` stream of an agent whose ``return_direct`` tool ends the run:
    both end on a tools node's update, no step after it, and no event says whether one was
    to come. Neither is called cut off (never without evidence); each says, once, that the
    stream cannot tell, and everything stays shown. Old code said nothing."""
    cut = turnfold.load(CUT_UPDATES)
    assert _reasons(cut) == [_in_doubt("call_1", 5, ["updates", "messages"])]
    _read_as_it_ends(cut)
    assert _calls(cut) == [("call_1", "success", "3")]
    _accounted(cut, CUT_UPDATES)
    direct = turnfold.load(DIRECT_UPDATES)
    assert _reasons(direct) == [_in_doubt("c1", 2, "updates")]
    _read_as_it_ends(direct)
    assert _calls(direct) == [("c1", "success", "langgraph: 1.2.24")]
    _accounted(direct, DIRECT_UPDATES)


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


def _kinds(events: list[Any], mode: Any) -> list[tuple[Any, Any]]:
    """Each event as its mode and node: what a stream says of where its run is."""
    bare = mode if isinstance(mode, str) else None
    return [(bare or event[0], recipe._node(event, bare)) for event in events]


MODES = ["updates", "values", "messages", ["updates", "messages"], ["values", "messages"]]


@pytest.mark.parametrize("mode", [*MODES, "tasks"], ids=str)
def test_L3_a_cut_after_tools_reads_as_a_graph_ending_there_unless_debug_says(mode: Any) -> None:
    """Cut off after its tools node (the consumer stopped reading before the model's next
    step), the run of ``lookup`` streams, event for event, what the run of the same agent
    whose ``lookup`` is ``return_direct`` streams whole, and a hand-built graph whose tools
    node leads to ``END`` streams the same ending: all three read alike, as they end, with
    the one warning that the stream cannot tell, saved by ``dumps`` or as the objects.
    Old code read each as a finished run and said nothing."""
    cut = recipe.until_after_tools(_stream(_agent(False), mode, "cut"), mode)
    whole = list(_stream(_agent(True), mode, "direct"))
    edge = list(_stream(_end_edge_graph(InMemorySaver()), mode, "edge"))
    assert _kinds(cut, mode) == _kinds(whole, mode)
    for events in (cut, whole, edge):
        for loaded in (turnfold.load(lc_dumps(events)), turnfold.load(events)):
            (reason,) = _reasons(loaded)
            assert reason == _in_doubt("c1", len(events), mode)
            _read_as_it_ends(loaded)
            assert _calls(loaded) == [("c1", "success", "lg: 1.2.24")]


def test_L3_a_debug_stream_of_a_graph_whose_tools_node_leads_to_end_reads_finished() -> None:
    """The hand-built graph's whole ``debug`` stream ends on its tools step: its last
    checkpoint names no step, so the run ended, said by nothing. (A check that the doubt
    above is only where no checkpoint says: this holds on the old code too.)"""
    events = list(_stream(_end_edge_graph(InMemorySaver()), "debug", "edge-debug"))
    assert events[-1]["type"] == "checkpoint"
    assert events[-1]["payload"]["next"] == []
    whole = turnfold.load(lc_dumps(events))
    assert whole.warnings == []
    _read_as_it_ends(whole)
    assert _calls(whole) == [("c1", "success", "lg: 1.2.24")]


# --- 3. the stream says the run paused: neither cut off nor in doubt ----------------------------


PAUSE_MODES = ["updates", ["updates", "messages"], ["updates", "values"], ["messages", "updates"]]


@pytest.mark.parametrize("mode", PAUSE_MODES, ids=str)
def test_L3_a_run_paused_at_a_breakpoint_before_its_tools_is_not_cut_off(mode: Any) -> None:
    """``interrupt_before=["tools"]``: the run pauses with the model's call unanswered, and
    LangGraph streams the pause as an empty ``__interrupt__`` update, its last event. The
    stream records how the run stopped: no warning, not ``incomplete``, the call's outcome
    unknown (it has not run, L-3). Old code called it cut off."""
    events = list(_stream(_agent(False, interrupt_before=["tools"]), mode, "before"))
    assert events[-1] in ({"__interrupt__": ()}, ("updates", {"__interrupt__": ()}))
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    _read_as_it_ends(loaded)
    assert _calls(loaded) == [("c1", "unknown", None)]


@pytest.mark.parametrize("mode", PAUSE_MODES, ids=str)
def test_L3_a_run_paused_at_a_breakpoint_after_its_tools_is_not_in_doubt(mode: Any) -> None:
    """``interrupt_after=["tools"]``: the run pauses right after its tools node's result,
    and says so: not read as a stream that cannot tell how its run ended. (A check of the
    rule above's limit: this holds on the old code too.)"""
    events = list(_stream(_agent(False, interrupt_after=["tools"]), mode, "after"))
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    _read_as_it_ends(loaded)
    assert _calls(loaded) == [("c1", "success", "lg: 1.2.24")]


def test_A2_a_followed_run_ending_on_its_tool_is_not_in_doubt() -> None:
    """Followed live, a run's stream ends when the run does: the ``return_direct`` run reads
    finished, with no warning. (This holds on the old code too.)"""
    followed = followed_runs.followed(_stream(_agent(True), ["updates", "messages"], "live"))
    assert followed.warnings == []
    _read_as_it_ends(followed)
    assert _calls(followed) == [("c1", "success", "lg: 1.2.24")]
