"""LangGraph ``tasks`` streams (spec A-1, A-2, L-4, P-3): a lone ``stream_mode="tasks"``
stream loads and is followed as the run it streamed, each task start and result read by the
rule a ``debug`` stream's tasks are read with; a task whose node raised shows its error as
the run's failure, as a followed ``updates`` stream that raised shows it.

The runs are real: ``create_agent`` and hand-built ``StateGraph`` / ``ToolNode`` graphs
(langgraph 1.2) on the scripted offline model of ``tests/formats/langchain_runs.py``
(``FakeToolModel``). Streams are saved the ways users save them: ``langchain_core.load.dumps``
(an exception becomes ``dumpd``'s ``not_implemented`` record, its ``repr`` kept) and
``json.dumps`` with a ``default`` (a message's ``model_dump``, anything else its ``str``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.load import dumps as lc_dumps
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import turnfold
from tests import followed_runs
from tests.formats import langchain_runs as runs
from turnfold.model import AssistantError, PendingAction, ToolCall, Transcript, UserMessage


def _shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What each entry shows, without the ids a run makes anew."""
    out: list[tuple[Any, ...]] = []
    for e in transcript.entries:
        if isinstance(e, ToolCall):
            result = e.result.text if e.result else None
            out.append(("call", e.call_id, e.name, e.args, e.status, result))
        elif isinstance(e, AssistantError):
            out.append(("error", e.message))
        else:
            out.append((type(e).__name__, getattr(e, "text", None)))
    return out


def _followed(events: Any) -> Transcript:
    """``turnfold.follow(graph.stream(...))`` consumed to its end, or to the error the run
    raised (its node's own: the follow says it)."""
    return followed_runs.followed(events, ValueError, RuntimeError)


def _model_dump(value: Any) -> Any:
    """``json.dumps``' ``default`` as users write it: a message's fields, else its text."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else str(value)


# --- 1. a lone tasks stream ----------------------------------------------------------------


def _calculator() -> Any:
    """The scripted calculator agent (a call of ``add``, a handled ``ToolException``, the
    answer), without a checkpointer."""
    return create_agent(runs.scripted_model(), tools=[runs.add, runs.explode], name="calculator")


def _calculate(mode: Any, form: dict[str, Any]) -> Any:
    given = {"messages": [("user", runs.PROMPT)]}
    return _calculator().stream(given, stream_mode=mode, **form)


#: A lone tasks stream in each of its shapes: bare payloads, ``(mode, payload)`` tuples,
#: ``(namespace, payload)`` tuples and version 2's ``{"type": "tasks", ...}`` parts.
LONE = {
    "bare": ("tasks", {}),
    "listed": (["tasks"], {}),
    "subgraphs": ("tasks", {"subgraphs": True}),
    "v2": ("tasks", {"version": "v2"}),
}


@pytest.mark.parametrize("form", LONE)
def test_A2_a_lone_tasks_stream_loads_and_is_followed_as_the_run(form: str) -> None:
    """``stream_mode="tasks"`` alone: each model task's input is the state (the first holds
    the prompt), each result the messages its node wrote, a tool task's input the call it
    runs. Kept as objects, saved by ``dumps`` or ``json.dumps``, or followed live, the stream
    shows what ``invoke``'s result shows, with no warning, each record a ``tasks`` event."""
    expected = turnfold.load(_calculator().invoke({"messages": [("user", runs.PROMPT)]}))
    events = list(_calculate(*LONE[form]))
    if form == "bare":
        assert {frozenset(e) for e in events} == {
            frozenset({"id", "name", "input", "triggers", "metadata"}),
            frozenset({"id", "name", "error", "result", "interrupts"}),
        }
    saved = [
        turnfold.load(events),
        turnfold.load(lc_dumps(events)),
        turnfold.load(json.dumps(events, default=_model_dump)),
    ]
    for transcript in saved:
        assert [w.reason for w in transcript.warnings] == []
        assert transcript.accounting is not None
        assert transcript.accounting.counts == {"tasks event": {"mapped": len(events)}}
    followed = _followed(_calculate(*LONE[form]))
    for transcript in (*saved, followed):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript) == _shown(expected)
        assert isinstance(transcript.entries[0], UserMessage)
        assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [
            ("call_1", "success"), ("call_2", "error")]  # fmt: skip


def test_A2_a_lone_tasks_stream_shows_the_interrupt_on_the_call_its_task_ran() -> None:
    """``interrupt()`` in a tool, two calls run in parallel: each task's result holds its
    interrupt, and the task's input names its call, so each call waits with its own
    question, loaded or followed, as the load of ``invoke``'s result shows them."""

    def stream() -> Any:
        agent = runs.interrupt_agent(["/a", "/b"])
        return agent.stream(
            {"messages": [("user", "rm")]}, runs._config("tasks"), stream_mode="tasks"
        )

    events = list(stream())
    for transcript in (turnfold.load(lc_dumps(events)), _followed(stream())):
        assert [w.reason for w in transcript.warnings] == []
        pending = [e for e in transcript.entries if isinstance(e, PendingAction)]
        assert sorted((p.action, p.call_id, json.loads(p.text)["path"]) for p in pending) == [
            ("question", "d1", "/a"), ("question", "d2", "/b")]  # fmt: skip
        assert {c.call_id: c.status for c in transcript.tool_calls()} == {
            "d1": "confirming", "d2": "confirming"}  # fmt: skip


# --- 2. a task whose node raised -------------------------------------------------------------


@tool
def crash(path: str) -> str:
    """Read a file from a disk that is gone."""
    raise ValueError(f"disk gone: {path}")


def _crashing_tools(checkpointer: Any = None) -> Any:
    """A hand-built ReAct graph whose ``ToolNode`` does not handle tool errors
    (``handle_tool_errors=False``): its one call of ``crash`` raises out of the graph."""
    model = runs.FakeToolModel(
        responses=[
            AIMessage(
                "Looking.", tool_calls=[{"name": "crash", "args": {"path": "/a"}, "id": "c1"}]
            ),
            AIMessage("Never said."),
        ]
    )
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([crash], handle_tool_errors=False))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def _audit(state: Any) -> Any:
    raise RuntimeError("quota exceeded")


def _raising_node(checkpointer: Any = None) -> Any:
    """A graph whose model node answers, then a plain node (``audit``) raises."""
    model = runs.FakeToolModel(responses=[AIMessage("All good.")])
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("audit", _audit)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "audit")
    return graph.compile(checkpointer=checkpointer)


GRAPHS = {
    "tool-node": (_crashing_tools, "ValueError", "disk gone: /a"),
    "plain-node": (_raising_node, "RuntimeError", "quota exceeded"),
}
#: The modes whose events hold task results; ``debug`` with a checkpointer (its checkpoints
#: hold the messages) and without (its tasks do).
FAILED_MODES = [("tasks", False), ("debug", False), ("debug", True), (["updates", "tasks"], False)]


def _stream(graph: str, mode: Any, checkpointed: bool) -> Any:
    make = GRAPHS[graph][0]
    compiled = make(InMemorySaver() if checkpointed else None)
    config = runs._config(f"{graph}-{mode}")
    return compiled.stream({"messages": [("user", "go")]}, config, stream_mode=mode)


def _until_raised(events: Any) -> list[Any]:
    kept: list[Any] = []
    with pytest.raises((ValueError, RuntimeError)):  # noqa: PT012 - the events before it
        for event in events:
            kept.append(event)
    return kept


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize(("mode", "checkpointed"), FAILED_MODES, ids=str)
def test_P3_a_node_s_raised_error_in_a_saved_task_result_is_the_run_s_failure(
    graph: str, mode: Any, checkpointed: bool
) -> None:
    """The stream ends where the node raised: its task's result holds the exception, the only
    trace of it a saved stream keeps. Loaded (as objects, or saved by ``dumps``), it is the
    run's error, shown outside the fold once, in the words a followed ``updates`` stream
    that raised ends with (``<type>: <message>``); its call, whose outcome no message holds,
    is ``unknown`` there as here. Saved by ``json.dumps(default=str)``, only its message is
    left, and shown."""
    _, kind, message = GRAPHS[graph]
    reference = _followed(_stream(graph, "updates", checkpointed))
    said = f"{kind}: {message}"
    assert _shown(reference)[-1] == ("error", said)
    events = _until_raised(_stream(graph, mode, checkpointed))
    for transcript in (turnfold.load(events), turnfold.load(lc_dumps(events))):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == _shown(reference)[1:]
        assert transcript.entries[-1].meta == {"node": "tools" if graph == "tool-node" else "audit"}
    default_str = turnfold.load(json.dumps(events, default=_model_dump))
    errors = [e.message for e in default_str.entries if isinstance(e, AssistantError)]
    assert errors == [message]


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize(("mode", "checkpointed"), FAILED_MODES, ids=str)
def test_P3_a_followed_node_s_error_is_shown_once(
    graph: str, mode: Any, checkpointed: bool
) -> None:
    """Live, the task's result tells the error and then the stream raises it: one error,
    the node's, shown as a followed ``updates`` stream shows it, and as the saved stream
    loads."""
    reference = _followed(_stream(graph, "updates", checkpointed))
    followed = _followed(_stream(graph, mode, checkpointed))
    loaded = turnfold.load(lc_dumps(_until_raised(_stream(graph, mode, checkpointed))))
    assert [w.reason for w in followed.warnings] == []
    assert _shown(followed) == _shown(reference)
    assert [type(e) for e in followed.entries].count(AssistantError) == 1
    assert followed.entries[-1].meta == loaded.entries[-1].meta
    assert _shown(followed)[1:] == _shown(loaded)[1:]
