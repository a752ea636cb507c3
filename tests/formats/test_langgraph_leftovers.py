"""LangGraph leftovers (spec A-2, L-3, P-3, X-2): a node's error a graph routes to its error
handler, the sibling tasks a failed step cancels, and the review edits a ``messages`` stream
cannot hold.

The runs are real (langgraph 1.2, langchain 1.5, offline): hand-built ``StateGraph`` graphs
whose node raises and whose ``add_node(..., error_handler=...)`` handler routes on with a
``Command`` (``langgraph.graph.state``: the handler runs as the node ``__error_handler__<node>``,
given a ``langgraph.errors.NodeError``); ``create_agent`` and a plain graph whose two parallel
tasks of one step are ``async``, one raising while the other waits, so that ``astream`` cancels
the waiting one (``langgraph.pregel._runner``); and ``create_agent`` with
``HumanInTheLoopMiddleware`` resumed with an "edit" and a "reject" decision. The model is the
scripted offline one of ``tests/formats/langchain_runs.py`` (``FakeToolModel``). Streams are
saved with ``langchain_core.load.dumps``, as users save them.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.load import dumps as lc_dumps
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import NodeError
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

import turnfold
from tests import followed_runs
from tests.formats import langchain_runs as runs
from turnfold.model import AbortMarker, AssistantError, SystemNotice, ToolCall, Transcript
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings


def _shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What each entry shows, without the ids a run makes anew."""
    out: list[tuple[Any, ...]] = []
    for e in transcript.entries:
        if isinstance(e, ToolCall):
            result = e.result.text if e.result else None
            out.append(("call", e.call_id, e.name, e.status, result))
        elif isinstance(e, AssistantError):
            out.append(("error", e.message))
        elif isinstance(e, AbortMarker):
            out.append(("stop", e.reason))
        elif isinstance(e, SystemNotice):
            out.append(("notice", e.text))
        else:
            out.append((type(e).__name__, getattr(e, "text", None)))
    return out


def _followed(events: Any) -> Transcript:
    """``turnfold.follow(graph.stream(...))`` consumed to its end, or to the error the run
    raised (its own ``ConnectionError``: the follow says it)."""
    return followed_runs.followed(events, ConnectionError)


async def _followed_async(events: Any) -> tuple[Transcript, list[Any]]:
    """``turnfold.follow(graph.astream(...))`` consumed with ``async for``: its transcript and
    the events it passed through, up to what the run raised."""
    run = turnfold.follow(events, display=False)
    seen: list[Any] = []
    with contextlib.suppress(ConnectionError):
        async for event in run:
            seen.append(event)
    return run.transcript, seen


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


# --- 1. a node's error routed to its error handler -------------------------------------------


def _fetch(state: Any) -> Any:
    raise ConnectionError("host unreachable")


def _on_fetch_error(state: Any, error: NodeError) -> Command[Any]:
    said = AIMessage(f"fetch failed: {error.error}", id="h1")
    return Command(update={"messages": [said]}, goto="fallback")


def _routed(checkpointer: Any = None) -> Any:
    """``agent`` says it will look, ``fetch`` raises, its error handler writes a message and
    routes to ``fallback``, whose model answers."""
    model = runs.FakeToolModel(
        responses=[AIMessage("Let me check.", id="m1"), AIMessage("Recovered: cache.", id="m2")]
    )
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("fetch", _fetch, error_handler=_on_fetch_error)
    graph.add_node("fallback", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "fetch")
    graph.add_edge("fallback", END)
    return graph.compile(checkpointer=checkpointer)


#: The modes whose events hold task results: ``tasks`` alone, ``debug`` without a
#: checkpointer (its tasks hold the messages) and with one (its checkpoints do), and
#: ``updates`` beside ``tasks`` (the handler's update comes before its task's result).
TASK_MODES = [("tasks", False), ("debug", False), ("debug", True), (["updates", "tasks"], False)]


def _routed_stream(mode: Any, checkpointed: bool) -> Any:
    graph = _routed(InMemorySaver() if checkpointed else None)
    return graph.stream({"messages": [("user", "go")]}, _config("routed"), stream_mode=mode)


@pytest.mark.parametrize(("mode", "checkpointed"), TASK_MODES, ids=str)
def test_P3_a_node_s_error_shows_before_the_work_its_error_handler_routed_to(
    mode: Any, checkpointed: bool
) -> None:
    """The node's error (its task's result) shows once, where it happened: after the work
    before it and before what its handler wrote and the node it routed to did, loaded
    (as objects or saved by ``dumps``) or followed live. Old code showed it only when the
    next task started, after the handler's message."""
    events = list(_routed_stream(mode, checkpointed))
    assert any(
        isinstance(e, dict) and (e.get("payload") or e).get("name") == "__error_handler__fetch"
        for e in (x[1] if isinstance(x, tuple) else x for x in events)
    )
    expected = [
        ("notice", "ConnectionError: host unreachable"),
        ("AssistantText", "fetch failed: host unreachable"),
        ("AssistantText", "Recovered: cache."),
    ]
    for transcript in (
        turnfold.load(events),
        turnfold.load(lc_dumps(events)),
        _followed(_routed_stream(mode, checkpointed)),
    ):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == [("AssistantText", "Let me check."), *expected]
        (error,) = [e for e in transcript.entries if isinstance(e, SystemNotice)]
        assert error.meta == {"node": "fetch"}


@tool
def crash(path: str) -> str:
    """Read a file from a disk that is gone."""
    raise ValueError(f"disk gone: {path}")


def _retry_on_error(state: Any, error: NodeError) -> Command[Any]:
    """The error handler of a ``ToolNode`` that does not handle its tools' errors: each call
    answered with the error, and the model asked again."""
    calls = state["messages"][-1].tool_calls
    said = f"{type(error.error).__name__}: {error.error}"
    answers = [ToolMessage(said, tool_call_id=c["id"], status="error") for c in calls]
    return Command(update={"messages": answers}, goto="agent")


def _tool_routed(checkpointer: Any = None) -> Any:
    model = runs.FakeToolModel(
        responses=[
            AIMessage("Looking.", id="m1", tool_calls=[
                {"name": "crash", "args": {"path": "/a"}, "id": "c1"}]),
            AIMessage("The disk is gone.", id="m2"),
        ]
    )  # fmt: skip
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node(
        "tools", ToolNode([crash], handle_tool_errors=False), error_handler=_retry_on_error
    )
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    return graph.compile(checkpointer=checkpointer)


@pytest.mark.parametrize(("mode", "checkpointed"), TASK_MODES, ids=str)
def test_P3_a_tool_node_s_routed_error_shows_once_between_its_call_and_the_answer(
    mode: Any, checkpointed: bool
) -> None:
    """A ``ToolNode`` raising, its handler answering the call with the error: the call is
    ``error`` with the handler's result, the node's error shows once, before the model's
    answer the handler routed to, loaded or followed."""

    def stream() -> Any:
        graph = _tool_routed(InMemorySaver() if checkpointed else None)
        return graph.stream({"messages": [("user", "go")]}, _config("tool"), stream_mode=mode)

    events = list(stream())
    for transcript in (turnfold.load(lc_dumps(events)), _followed(stream())):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == [
            ("AssistantText", "Looking."),
            ("call", "c1", "crash", "error", "ValueError: disk gone: /a"),
            ("notice", "ValueError: disk gone: /a"),
            ("AssistantText", "The disk is gone."),
        ]


# --- 2. the sibling tasks a failed step cancels -----------------------------------------------


@tool
async def fetch_primary(url: str) -> str:
    """Fetch from the primary host."""
    await asyncio.sleep(0)
    raise ConnectionError(f"primary down: {url}")


@tool
async def fetch_mirror(url: str) -> str:
    """Fetch from the mirror (slow: cancelled long before it would answer)."""
    await asyncio.sleep(60)
    return "mirror ok"


def _parallel_agent(checkpointer: Any = None) -> Any:
    """``create_agent`` whose one response calls both tools (``p1``, ``p2``): each call a task
    of its own (``Send``) in one step; ``fetch_primary`` raises (no tool error handling), so
    LangGraph cancels ``fetch_mirror``'s task and the run raises."""
    model = runs.FakeToolModel(
        responses=[
            AIMessage("Fetching both.", id="m1", tool_calls=[
                {"name": "fetch_primary", "args": {"url": "/x"}, "id": "p1"},
                {"name": "fetch_mirror", "args": {"url": "/x"}, "id": "p2"}]),
            AIMessage("Never said.", id="m2"),
        ]
    )  # fmt: skip
    return create_agent(model, tools=[fetch_primary, fetch_mirror], checkpointer=checkpointer)


async def _primary(state: Any) -> Any:
    await asyncio.sleep(0)
    raise ConnectionError("primary down")


async def _mirror(state: Any) -> Any:
    await asyncio.sleep(60)
    return {"messages": [AIMessage("mirror ok", id="s1")]}


def _parallel_nodes(checkpointer: Any = None) -> Any:
    """A plain graph: ``plan`` answers, then ``primary`` and ``mirror`` run in one step;
    ``primary`` raises and ``mirror`` is cancelled."""
    model = runs.FakeToolModel(responses=[AIMessage("Plan: fetch both.", id="m1")])
    graph = StateGraph(MessagesState)
    graph.add_node("plan", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("primary", _primary)
    graph.add_node("mirror", _mirror)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "primary")
    graph.add_edge("plan", "mirror")
    return graph.compile(checkpointer=checkpointer)


CANCEL_MODES = [("tasks", False), ("debug", False), ("debug", True), (["updates", "tasks"], False)]
MIRROR_CANCELLED = "mirror was cancelled: a task of its step raised ConnectionError: primary down"


def _astream(make: Any, mode: Any, checkpointed: bool) -> Any:
    graph = make(InMemorySaver() if checkpointed else None)
    return graph.astream({"messages": [("user", "go")]}, _config("cancel"), stream_mode=mode)


async def _until_raised(events: Any) -> list[Any]:
    kept: list[Any] = []
    with pytest.raises(ConnectionError):  # noqa: PT012 - the events before it
        async for event in events:
            kept.append(event)
    return kept


def _both(make: Any, mode: Any, checkpointed: bool) -> list[Transcript]:
    """The run's stream saved (as objects, by ``dumps``) and loaded, and followed live."""

    async def go() -> list[Transcript]:
        events = await _until_raised(_astream(make, mode, checkpointed))
        followed, seen = await _followed_async(_astream(make, mode, checkpointed))
        assert len(seen) == len(events)
        return [turnfold.load(events), turnfold.load(lc_dumps(events)), followed]

    return asyncio.run(go())


@pytest.mark.parametrize(("mode", "checkpointed"), CANCEL_MODES, ids=str)
def test_L3_a_call_whose_task_the_failed_step_cancelled_is_cancelled(
    mode: Any, checkpointed: bool
) -> None:
    """The task that raised ran ``p1``: that call is ``error``, its result the error; its
    sibling ``p2``, started and never finished, is ``cancelled`` (not ``unknown``, not a
    success), its result saying why; the run's error shows once."""
    for transcript in _both(_parallel_agent, mode, checkpointed):
        assert [w.reason for w in transcript.warnings] == []
        said = "ConnectionError: primary down: /x"
        why = f"cancelled: a task of its step raised {said}"
        assert _shown(transcript)[1:] == [
            ("AssistantText", "Fetching both."),
            ("call", "p1", "fetch_primary", "error", said),
            ("call", "p2", "fetch_mirror", "cancelled", why),
            ("error", said),
        ]


@pytest.mark.parametrize(("mode", "checkpointed"), CANCEL_MODES, ids=str)
def test_L3_a_node_the_failed_step_cancelled_is_said_after_the_run_s_error(
    mode: Any, checkpointed: bool
) -> None:
    """A plain node cancelled beside the node that raised writes no message: a stop after
    the run's error names it, so it neither vanishes nor reads as done; said in the view's
    language."""
    for transcript in _both(_parallel_nodes, mode, checkpointed):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == [
            ("AssistantText", "Plan: fetch both."),
            ("error", "ConnectionError: primary down"),
            ("stop", MIRROR_CANCELLED),
        ]
        (stop,) = [e for e in transcript.entries if isinstance(e, AbortMarker)]
        assert stop.meta == {"node": "mirror", "status": "cancelled"}
        zh = render_text(build_view_model(transcript, DisplaySettings(locale="zh")))
        assert "mirror 已被取消" in zh


# --- 3. review edits a messages stream does not hold -------------------------------------------


@tool
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


def _reviewed_agent() -> Any:
    """``create_agent`` whose response calls ``remove`` on ``/a`` and ``/c`` (``r1``, ``r2``),
    each call reviewed by ``HumanInTheLoopMiddleware`` before it runs, then answers."""
    calls = [
        {"name": "remove", "args": {"path": p}, "id": f"r{n}"}
        for n, p in enumerate(["/a", "/c"], 1)
    ]
    model = runs.FakeToolModel(responses=[AIMessage("", tool_calls=calls), AIMessage("Done.")])
    review = HumanInTheLoopMiddleware(interrupt_on={"remove": True})
    return create_agent(model, tools=[remove], middleware=[review], checkpointer=InMemorySaver())


EDIT_AND_REJECT: Command[Any] = Command(
    resume={
        "decisions": [
            {"type": "edit", "edited_action": {"name": "remove", "args": {"path": "/b"}}},
            {"type": "reject", "message": "keep /c"},
        ]
    }
)
NOT_STREAMED = (
    "HumanInTheLoopMiddleware.after_model reviewed tool calls, but this stream holds none of "
    'its edits (only the "updates", "values", "tasks" and "debug" modes do): a call a reviewer '
    "edited shows as the model asked for it. Stream with one of those modes, or load the thread "
    "(graph.get_state(config)), to see the calls as they ran."
)


def _resumed(mode: Any, thread: str) -> tuple[Any, Any]:
    """The reviewed agent run to its interrupt, and the stream of its resumed run."""
    agent, config = _reviewed_agent(), _config(thread)
    list(agent.stream({"messages": [("user", "rm /a /c")]}, config, stream_mode=mode))
    return agent, agent.stream(EDIT_AND_REJECT, config, stream_mode=mode)


def test_A2_a_messages_stream_says_it_holds_no_review_edits() -> None:
    """The resumed ``messages`` stream carries the reviewer's rejection (its tool message's
    metadata names the middleware's node) but not the edit, which only the state holds: one
    notice, in the view's language, says the stream holds no edits, saved or followed.
    Followed, the calls come from the thread's checkpointer: the edited one shows as the
    model asked for it (saved, the stream holds no call at all, which its warnings say)."""
    _, stream = _resumed("messages", "saved")
    events = list(stream)
    assert {m["langgraph_node"] for _, m in events} >= {"HumanInTheLoopMiddleware.after_model"}
    _, live = _resumed("messages", "live")
    followed = _followed(live)
    assert [(c.call_id, c.args, c.status) for c in followed.tool_calls()] == [
        ("r1", {"path": "/a"}, "success"), ("r2", {"path": "/c"}, "cancelled")]  # fmt: skip
    for transcript in (turnfold.load(lc_dumps(events)), followed):
        notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
        assert [n.text for n in notices] == [NOT_STREAMED]
        assert notices[0].level == "warning"
        zh = render_text(build_view_model(transcript, DisplaySettings(locale="zh")))
        assert "审阅了工具调用，但此流不含它的任何编辑" in zh


def test_A2_a_followed_messages_stream_of_a_reviewed_graph_says_it_with_no_review_message() -> None:
    """Followed live, the graph itself shows the review node: a resumed stream whose every
    decision was an edit (no message of the review node) still says it holds no edits."""
    agent, config = _reviewed_agent(), _config("edits-only")
    list(agent.stream({"messages": [("user", "rm /a /c")]}, config, stream_mode="messages"))
    edit = {"type": "edit", "edited_action": {"name": "remove", "args": {"path": "/b"}}}
    resume: Command[Any] = Command(resume={"decisions": [edit, {"type": "approve"}]})
    followed = _followed(agent.stream(resume, config, stream_mode="messages"))
    assert [e.text for e in followed.entries if isinstance(e, SystemNotice)] == [NOT_STREAMED]


@pytest.mark.parametrize("mode", ["updates", "values", ["values", "messages"]], ids=str)
def test_A2_a_stream_that_holds_the_edits_shows_them_and_no_notice(mode: Any) -> None:
    """A mode that holds the state's edits shows the edited call as it ran, with no notice
    that edits are missing."""
    _, stream = _resumed(mode, f"with-{mode}")
    loaded = turnfold.load(lc_dumps(list(stream)))
    assert NOT_STREAMED not in [e.text for e in loaded.entries if isinstance(e, SystemNotice)]
    (edited, _) = loaded.tool_calls()
    assert (edited.call_id, edited.args) == ("r1", {"path": "/b"})
