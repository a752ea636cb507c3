"""LangGraph edge cases (spec A-2, L-3, L-4, P-7): streams saved or followed around a human
review, a run cut off by a node's error, a ``ToolNode`` cancelled with its step, many
interrupts at once, and a source of many warnings.

The runs are real (langgraph 1.2, langchain 1.5, offline): ``create_agent`` with
``HumanInTheLoopMiddleware`` stopped and resumed with ``Command(resume=...)``, a tool that
raises, a hand-built ``StateGraph`` whose ``tools_condition`` routes to a ``ToolNode`` beside a
node that raises, and an agent whose tools ``interrupt()`` in parallel tasks. The model is the
scripted offline one of ``tests/formats/langchain_runs.py`` (``FakeToolModel``). Streams are
saved with ``langchain_core.load.dumps``, as users save them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.load import dumps as lc_dumps
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, messages_to_dict
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

import turnfold
from tests import followed_runs
from tests.formats import langchain_runs as runs
from tests.formats.test_langgraph_leftovers import NOT_STREAMED, _reviewed_agent, _shown
from tests.test_langchain_hitl import EDIT_B, SAID_B, _agent, _edit
from turnfold.formats.source import MAX_LISTED_WARNINGS, UnlistedWarnings, warning_count
from turnfold.model import (
    AbortMarker,
    AssistantError,
    PendingAction,
    SystemNotice,
    Transcript,
)

CUT_OFF = (
    "the stream ends inside the run begun on line 1 (no result of call 'c1'): how that run "
    "ended is not recorded"
)


def _notices(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, SystemNotice)]


def _stopped_and_resumed(agent: Any, mode: Any, resume: Any, thread: str) -> tuple[list, list]:
    """The events of ``agent``'s run to its interrupt, and of the run resumed with ``resume``."""
    config = runs._config(thread)
    first = list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode=mode))
    second = list(agent.stream(resume, config, stream_mode=mode))
    return first, second


# --- 1. a saved messages stream of a review whose every decision was an edit ----------------


EDIT_BOTH: Command[Any] = Command(
    resume={"decisions": [_edit("remove", "/b"), _edit("remove", "/d")]}
)


def test_A2_a_saved_messages_stream_of_edits_only_says_it_holds_no_edits() -> None:
    """A resumed ``messages`` stream whose every decision was an edit holds no message of the
    review's node (LangGraph streams no message a node writes again under its id), only the
    results of the edited calls, which the middleware marks: saved (the resumed run alone, or
    with the run it resumed), it says once that it holds none of the edits, as a followed one
    does, rather than show the model's calls as if they ran. Old code said nothing."""
    first, second = _stopped_and_resumed(_reviewed_agent(), "messages", EDIT_BOTH, "edits")
    for events in (second, first + second):
        loaded = turnfold.load(lc_dumps(events))
        assert _notices(loaded) == [NOT_STREAMED]
        assert [c.status for c in loaded.tool_calls()] == ["success", "success"]


# --- 2. many interrupts at once: each waits on its own call ---------------------------------


def test_A2_interrupts_of_many_parallel_tool_tasks_each_wait_on_their_own_call() -> None:
    """Eleven tool tasks interrupt in one step (``d1`` … ``d11``: ids and task namespaces that
    share prefixes, ``d1`` and ``d10``): each question waits on its own call, and the run
    resumed with an answer per interrupt id settles each call with its own result, saved
    or followed. Every match is by the whole id (interrupt, task, call), none by a prefix:
    this holds on the old code too."""
    paths = [f"/p{n}" for n in range(1, 12)]
    agent = runs.interrupt_agent(paths)
    config = runs._config("many")
    mode = ["updates", "tasks"]
    first = list(agent.stream({"messages": [("user", "rm all")]}, config, stream_mode=mode))
    interrupts = agent.get_state(config).interrupts
    assert len(interrupts) == 11
    yes = {"/p1", "/p10"}
    answers = {i.id: "yes" if i.value["path"] in yes else "no" for i in interrupts}
    second = list(agent.stream(Command(resume=answers), config, stream_mode=mode))
    stopped = turnfold.load(lc_dumps(first))
    waiting = {a.call_id: json.loads(a.text)["path"] for a in stopped.entries
               if isinstance(a, PendingAction)}  # fmt: skip
    assert waiting == {f"d{n}": f"/p{n}" for n in range(1, 12)}
    assert {c.call_id: c.status for c in stopped.tool_calls()} == dict.fromkeys(
        waiting, "confirming"
    )
    resumed = turnfold.load(lc_dumps(first + second))
    expected = [
        (f"d{n}", "success", f"deleted /p{n}" if f"/p{n}" in yes else f"kept /p{n}")
        for n in range(1, 12)
    ]
    assert [(c.call_id, c.status, c.result.text if c.result else None)
            for c in resumed.tool_calls()] == expected  # fmt: skip
    assert resumed.warnings == []


# --- 3. a review resumed in a messages and tasks stream ---------------------------------------


def test_A2_a_review_resumed_in_a_messages_and_tasks_stream_shows_once_in_order() -> None:
    """``stream_mode=["messages", "tasks"]``, stopped on the review and resumed with an edit:
    the review's task result holds the reviewer's call, so the call shows as it ran (the
    model's kept and said), the review's question shows once, before the edit and the
    answer, with no notice that the stream lacks the edits; saved as one stream, as objects
    or by ``dumps``. Old code showed the model's call and never the edit."""
    first, second = _stopped_and_resumed(_agent(["/a"]), ["messages", "tasks"], EDIT_B, "mt")
    for loaded in (turnfold.load(first + second), turnfold.load(lc_dumps(first + second))):
        assert loaded.warnings == []
        kinds = [type(e).__name__ for e in loaded.entries]
        assert kinds[1:] == ["ToolCall", "PendingAction", "SystemNotice", "AssistantText"]
        (call,) = loaded.tool_calls()
        assert (call.call_id, call.args, call.status) == ("r1", {"path": "/b"}, "success")
        assert call.meta["model_call"] == {"name": "remove", "args": {"path": "/a"}}
        assert _notices(loaded) == [SAID_B]
        (review,) = [e for e in loaded.entries if isinstance(e, PendingAction)]
        assert review.call_id == "r1"


def test_A2_a_followed_resumed_messages_and_tasks_stream_shows_the_edit_once() -> None:
    """Followed live, the resumed run (its history read from the thread) shows the call as
    the reviewer edited it, said once, and no notice that the stream lacks the edits: its
    first task result (the review's) comes before any ``messages`` event, so its ``tasks``
    events are read as the run's whole record. A check of item 3 live: this holds on the
    old code too."""
    agent = _agent(["/a"])
    config = runs._config("mt-live")
    mode = ["messages", "tasks"]
    list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode=mode))
    followed = followed_runs.followed(agent.stream(EDIT_B, config, stream_mode=mode))
    (call,) = followed.tool_calls()
    assert (call.call_id, call.args, call.status) == ("r1", {"path": "/b"}, "success")
    assert _notices(followed) == [SAID_B]


# --- 4. an updates stream saved up to a node's error ------------------------------------------


@tool
def crash(x: str) -> str:
    """Read from a disk that is gone."""
    raise ValueError(f"disk gone: {x}")


def _crashing_agent() -> Any:
    model = runs.FakeToolModel(
        responses=[
            AIMessage(
                "Let me try.", tool_calls=[{"name": "crash", "args": {"x": "y"}, "id": "c1"}]
            ),
            AIMessage("Never said."),
        ]
    )
    return create_agent(model, tools=[crash], checkpointer=InMemorySaver())


def test_L3_an_updates_stream_saved_up_to_a_node_s_error_reads_stopped_not_finished() -> None:
    """In ``updates`` mode a tool that raises raises out of the stream: the events saved up
    to it end with the call unanswered and nothing more. Loaded, the run reads stopped (its
    turn ends in a stop), ``incomplete``, and a warning says the stream ends inside the run;
    the call's outcome stays unknown (L-3). Followed, the run's error says it. A whole
    stream gets none of this. Old code showed the cut-off run as a finished one."""
    events: list[Any] = []
    with pytest.raises(ValueError, match="disk gone"):  # noqa: PT012 - the events before it
        for event in _crashing_agent().stream(
            {"messages": [("user", "go")]}, runs._config("cut"), stream_mode="updates"
        ):
            events.append(event)
    loaded = turnfold.load(lc_dumps(events))
    assert [w.reason for w in loaded.warnings] == [CUT_OFF]
    assert loaded.metadata["outcome"] == "incomplete"
    assert isinstance(loaded.entries[-1], AbortMarker)
    assert [(c.call_id, c.status) for c in loaded.tool_calls()] == [("c1", "unknown")]
    followed = followed_runs.followed(
        _crashing_agent().stream({"messages": [("user", "go")]}, runs._config("f"),
                                 stream_mode="updates"),
        ValueError,
    )  # fmt: skip
    assert isinstance(followed.entries[-1], AssistantError)
    assert "outcome" not in followed.metadata
    whole, _ = runs.stream_run("updates")
    finished = turnfold.load(lc_dumps(whole))
    assert "outcome" not in finished.metadata
    assert not any(isinstance(e, AbortMarker) for e in finished.entries)


# --- 5. a ToolNode tools_condition routed to, cancelled with its step -------------------------


@tool
async def fetch_mirror(url: str) -> str:
    """Fetch from the mirror (slow: cancelled long before it would answer)."""
    await asyncio.sleep(60)
    return "mirror ok"


async def _audit(state: Any) -> Any:
    await asyncio.sleep(0)
    raise ConnectionError("audit down")


def _tool_node_beside_a_failure(checkpointer: Any = None) -> Any:
    """``agent`` calls ``fetch_mirror`` twice (``t1``, ``t2``); ``tools_condition`` routes to a
    ``ToolNode`` (one task, given the state, running both calls) while ``audit`` runs in the
    same step and raises, so LangGraph cancels the ``ToolNode``'s task."""
    model = runs.FakeToolModel(
        responses=[
            AIMessage("Fetching.", id="m1", tool_calls=[
                {"name": "fetch_mirror", "args": {"url": "/x"}, "id": "t1"},
                {"name": "fetch_mirror", "args": {"url": "/y"}, "id": "t2"}]),
            AIMessage("Never said.", id="m2"),
        ]
    )  # fmt: skip
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([fetch_mirror]))
    graph.add_node("audit", _audit)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("agent", "audit")
    return graph.compile(checkpointer=checkpointer)


CANCEL_MODES = [("tasks", False), ("debug", False), ("debug", True), (["updates", "tasks"], False)]


@pytest.mark.parametrize(("mode", "checkpointed"), CANCEL_MODES, ids=str)
def test_L3_the_calls_of_a_tool_node_its_failed_step_cancelled_are_cancelled(
    mode: Any, checkpointed: bool
) -> None:
    """The ``ToolNode``'s task started and never ended: each call it was running is
    ``cancelled``, its result saying why, after which the run's error shows once; loaded
    (as objects, by ``dumps``) or followed. Old code left both calls ``unknown`` and said the
    node cancelled in a stop."""

    def stream() -> Any:
        graph = _tool_node_beside_a_failure(InMemorySaver() if checkpointed else None)
        return graph.astream({"messages": [("user", "go")]}, runs._config("c"), stream_mode=mode)

    async def go() -> list[Transcript]:
        events: list[Any] = []
        with contextlib.suppress(ConnectionError):
            async for event in stream():
                events.append(event)
        run = turnfold.follow(stream(), display=False)
        with contextlib.suppress(ConnectionError):
            async for _ in run:
                pass
        return [turnfold.load(events), turnfold.load(lc_dumps(events)), run.transcript]

    said = "ConnectionError: audit down"
    why = f"cancelled: a task of its step raised {said}"
    for transcript in asyncio.run(go()):
        assert [w.reason for w in transcript.warnings] == []
        assert _shown(transcript)[1:] == [
            ("AssistantText", "Fetching."),
            ("call", "t1", "fetch_mirror", "cancelled", why),
            ("call", "t2", "fetch_mirror", "cancelled", why),
            ("error", said),
        ]


# --- 6. many warnings: bounded, and each record still told warned -----------------------------


def _many(kind: str, n: int) -> list[Any]:
    """A prompt, then ``n`` messages each of which warns: chat messages of a role no reader
    knows (read message by message), or AI messages holding a block of an unknown type
    (read flat, in one pass)."""
    if kind == "chat":
        return [HumanMessage("hi"), *(ChatMessage(content="x", role="robot") for _ in range(n))]
    return [HumanMessage("hi"), *(AIMessage([{"type": "weird", "n": i}], id=f"a{i}")
                                  for i in range(n))]  # fmt: skip


@pytest.mark.parametrize("kind", ["chat", "ai"])
def test_L4_many_warnings_are_bounded_and_every_record_that_warned_is_counted(kind: str) -> None:
    """Past :data:`MAX_LISTED_WARNINGS` the warnings are only counted (a hostile file of a
    million bad messages holds no million warnings), and the accounting still tells every
    record that warned: counted, not measured by the list's length. Old code listed each."""
    n = MAX_LISTED_WARNINGS + 500
    loaded = turnfold.load(json.dumps(messages_to_dict(_many(kind, n))))
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    assert isinstance(loaded.warnings[-1], UnlistedWarnings)
    assert warning_count(loaded.warnings) == n
    assert loaded.accounting.counts[kind] == {"warned": n}


def test_L4_a_streamed_message_s_warning_is_said_once_past_the_listed_warnings() -> None:
    """A saved stream whose first events are followed by more unreadable lines than are
    listed: a message streamed as chunks, then given whole by its update, warns of its
    unknown block once (its merged chunks' read), not again when its whole form is read,
    though the list no longer grows to take the second one back. Old code listed every
    warning."""
    model = runs.FakeToolModel(
        responses=[AIMessage([{"type": "text", "text": "Hi."}, {"type": "weird", "n": 1}])]
    )
    agent = create_agent(model, tools=[], checkpointer=InMemorySaver())
    events = list(
        agent.stream({"messages": [("user", "hi")]}, runs._config("w"),
                     stream_mode=["messages", "updates"])
    )  # fmt: skip
    bad = MAX_LISTED_WARNINGS + 5
    lines = [lc_dumps(events[0]), *['{"not": "an event"}'] * bad]
    lines += [lc_dumps(event) for event in events[1:]]
    # Mostly unreadable lines: no format is detected in them, so it is named.
    loaded = turnfold.load("\n".join(lines) + "\n", format="langchain")
    assert warning_count(loaded.warnings) == bad + 1
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    assert [e.text for e in loaded.entries if type(e).__name__ == "AssistantText"] == [
        "Hi.\n\n[weird]"
    ]
