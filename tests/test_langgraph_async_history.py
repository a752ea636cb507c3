"""LangGraph followed live (spec A-2, L-4): an ``astream`` whose checkpointer is read by an
await, a stream of the user's own around LangGraph's, and a human review that edits a call.

The runs are real: ``create_agent`` with the scripted offline model of
``tests/formats/langchain_runs.py`` and its ``interrupt_agent`` (a tool that asks a human with
``interrupt()``), checkpointed by LangGraph's ``AsyncSqliteSaver`` (langgraph-checkpoint-sqlite,
an in-memory SQLite database) or ``InMemorySaver``; the review graph is the one of LangGraph's
"review tool calls" how-to (a node that ``interrupt()``s after the model and, on an edit,
writes the model's message again under its id with the reviewer's arguments).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterable, Callable, Coroutine, Iterator
from typing import Any, Literal

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats.langchain_runs import RESUMED, said
from turnfold.model import SystemNotice, ToolCall, Transcript, UserMessage
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

INPUTS = {"messages": [("user", runs.PROMPT)]}


def _text(transcript: Transcript, locale: str = "en") -> str:
    return render_text(build_view_model(transcript, DisplaySettings(locale=locale)))


def _in_fresh_loop(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """``main()`` run by ``asyncio.run`` in a thread of its own: other tests may leave a
    loop running in this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()


async def _saver(kind: str, stack: Any) -> Any:
    if kind == "memory":
        return InMemorySaver()
    pytest.importorskip("aiosqlite")
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    return await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(":memory:"))


async def _drain(events: AsyncIterable[Any]) -> list[Any]:
    return [event async for event in events]


# --- 1. astream with an async checkpointer: the thread's history awaited ---------------------


@pytest.mark.parametrize("mode", ["updates", "messages", ["updates", "messages"]], ids=str)
@pytest.mark.parametrize("saver", ["sqlite", "memory"])
def test_A2_a_resumed_astream_shows_the_history_its_async_checkpointer_holds(
    saver: str, mode: Any
) -> None:
    """``astream(Command(resume=...))`` with ``AsyncSqliteSaver``, whose sync reads wait on
    the loop running the stream: the history is awaited (``aget_state``) before the first
    event, so the prompt and the call the interrupt stopped show, settled by its result, with
    no warning, as the load of the final state shows them."""
    from contextlib import AsyncExitStack

    async def main() -> tuple[Any, Any]:
        async with AsyncExitStack() as stack:
            agent = runs.interrupt_agent(["/a"])
            agent.checkpointer = await _saver(saver, stack)
            config = runs._config(f"async-resumed-{saver}-{mode}")
            await _drain(agent.astream({"messages": [("user", "rm /a")]}, config))
            assert (await agent.aget_state(config)).interrupts
            resumed = agent.astream(Command(resume="yes"), config, stream_mode=mode)
            run = turnfold.follow(resumed, display=False)
            await _drain(run)
            return run, (await agent.aget_state(config)).values

    run, final = _in_fresh_loop(main)
    assert run.transcript.warnings == []
    assert said(run.transcript) == RESUMED
    assert run.transcript.entries == turnfold.load(final).entries
    (call,) = run.transcript.tool_calls()
    assert call.result is not None
    assert (call.call_id, call.args, call.result.text) == ("d1", {"path": "/a"}, "deleted /a")


@pytest.mark.parametrize("saver", ["sqlite", "memory"])
def test_A2_a_thread_s_next_turn_by_astream_shows_its_earlier_turns(saver: str) -> None:
    from contextlib import AsyncExitStack

    async def main() -> tuple[Any, Any]:
        async with AsyncExitStack() as stack:
            agent = runs.scripted_agent()
            agent.checkpointer = await _saver(saver, stack)
            config = runs._config(f"async-next-turn-{saver}")
            await agent.ainvoke(INPUTS, config)
            again = {"messages": [("user", "Once more.")]}
            run = turnfold.follow(
                agent.astream(again, config, stream_mode="updates"), display=False
            )
            await _drain(run)
            return run, (await agent.aget_state(config)).values

    run, final = _in_fresh_loop(main)
    assert run.transcript.warnings == []
    assert run.transcript.entries == turnfold.load(final).entries
    prompts = [e.text for e in run.transcript.entries if type(e) is UserMessage]
    assert prompts == [runs.PROMPT, "Once more."]


class _FailingOnce(InMemorySaver):
    """A checkpointer whose first async read fails (a dropped connection): turnfold's read
    before the run meets it; the run's own reads after it do not."""

    failed = False

    async def aget_tuple(self, config: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise ConnectionError("the database went away")
        return await super().aget_tuple(config)


def test_L4_a_resumed_astream_whose_history_cannot_be_read_says_why_and_shows_the_rest() -> None:
    async def main() -> Any:
        agent = runs.interrupt_agent(["/a"])
        config = runs._config("async-failing-read")
        await _drain(agent.astream({"messages": [("user", "rm /a")]}, config))
        saver = _FailingOnce()
        saver.storage, saver.writes, saver.blobs = (
            agent.checkpointer.storage, agent.checkpointer.writes, agent.checkpointer.blobs
        )  # fmt: skip
        agent.checkpointer = saver
        resumed = agent.astream(Command(resume="yes"), config, stream_mode="updates")
        run = turnfold.follow(resumed, display=False)
        await _drain(run)
        return run

    run = _in_fresh_loop(main)
    first, second = (w.reason for w in run.transcript.warnings)
    assert first == (
        "a run resumed from a checkpoint: the thread's messages before it are not shown, its "
        "checkpointer could not be read before the run (ConnectionError: the database went "
        'away); stream with stream_mode="values" (or add "values" to the modes), whose '
        "states hold them"
    )
    assert second == "tool result for an unknown tool_call_id 'd1'"
    # Everything the stream holds is shown: the call, settled by its result, and the answer.
    assert said(run.transcript) == RESUMED[1:]


# --- 2. a stream of the user's own: live as loaded -------------------------------------------


def _wrapped(events: Iterator[Any]) -> Iterator[Any]:
    """A stream of the user's own around LangGraph's: turnfold cannot reach the graph."""
    yield from events


def _saved(events: list[Any]) -> str:
    from langchain_core.load import dumps

    return dumps(events)


@pytest.mark.parametrize("mode", ["updates", "messages", ["updates", "messages"]], ids=str)
def test_A2_a_wrapped_stream_followed_shows_what_its_saved_events_load_as(mode: Any) -> None:
    """No event of these modes holds the prompt: followed live, as loaded from the saved
    events, a prompt not recorded stands in its place, its note saying how to keep it."""
    agent = runs.scripted_agent()
    config = runs._config(f"wrapped-{mode}")
    stream = _wrapped(agent.stream(INPUTS, config, stream_mode=mode))
    run = turnfold.follow(stream, format="langchain", display=False)
    events = list(run)
    loaded = turnfold.load(_saved(events))
    assert run.transcript.warnings == loaded.warnings == []
    assert run.transcript.entries == loaded.entries
    first = run.transcript.entries[0]
    assert type(first) is UserMessage
    assert first.meta == {"prompt_not_recorded": True,
                          "prompt_note": "user.prompt_not_recorded.langgraph_stream"}  # fmt: skip
    assert _text(run.transcript) == _text(loaded)
    note = "Prompt not recorded: LangGraph's updates and messages hold no input"
    assert f'  {note} (add "values" to keep it)' in _text(run.transcript).splitlines()


def test_A2_a_wrapped_resumed_stream_followed_shows_what_its_saved_events_load_as() -> None:
    agent = runs.interrupt_agent(["/a"])
    config = runs._config("wrapped-resumed")
    list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode="updates"))
    resumed = _wrapped(agent.stream(Command(resume="yes"), config, stream_mode="updates"))
    run = turnfold.follow(resumed, format="langchain", display=False)
    loaded = turnfold.load(_saved(list(run)))
    assert run.transcript.entries == loaded.entries
    assert [type(e).__name__ for e in run.transcript.entries] == [
        "UserMessage", "ToolCall", "AssistantText"]  # fmt: skip
    assert run.transcript.entries[0].meta["prompt_not_recorded"] is True


def test_A2_langgraph_s_own_stream_of_an_input_of_no_messages_guesses_no_prompt() -> None:
    """Followed off LangGraph's own generator, the input is read, so an input of no
    messages (a graph whose first node speaks) has no prompt-not-recorded line before it."""

    def greet(state: MessagesState) -> Any:
        return {"messages": [AIMessage("Hello.", id="g1")]}

    graph = StateGraph(MessagesState)
    graph.add_node(greet)
    graph.add_edge(START, "greet")
    run = turnfold.follow(graph.compile().stream({"messages": []}, stream_mode="updates"),
                          display=False)  # fmt: skip
    list(run)
    assert run.transcript.warnings == []
    assert [(type(e).__name__, e.text) for e in run.transcript.entries] == [  # type: ignore[attr-defined]
        ("AssistantText", "Hello.")]  # fmt: skip


# --- 3. a human review that edits the call ---------------------------------------------------


@tool
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


def _review_graph(written: str = "dict") -> Any:
    """LangGraph's "review tool calls" how-to: the model calls ``remove``; ``human_review``
    asks with ``interrupt()`` and, told ``{"action": "update", "data": args}``, writes the
    model's message again under its id with the reviewer's arguments (``written``: a dict
    message, as the how-to writes it, or the message object copied), then runs the tool."""
    model = runs.FakeToolModel(
        responses=[
            AIMessage("", id="m1", tool_calls=[{"name": "remove", "args": {"path": "/a"},
                                                "id": "r1"}]),
            AIMessage("Removed.", id="m2"),
        ]
    )  # fmt: skip

    def call_llm(state: MessagesState) -> Any:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> Literal["human_review", "__end__"]:
        last = state["messages"][-1]
        return "human_review" if isinstance(last, AIMessage) and last.tool_calls else "__end__"

    def human_review(state: MessagesState) -> Command[Literal["call_llm", "run_tool"]]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        call = last.tool_calls[-1]
        review = interrupt({"question": "Is this correct?", "tool_call": call})
        if review["action"] == "continue":
            return Command(goto="run_tool")
        edited = {"id": call["id"], "name": call["name"], "args": review["data"]}
        message: Any = {"role": "ai", "content": last.content, "tool_calls": [edited],
                        "id": last.id}  # fmt: skip
        if written == "object":
            message = last.model_copy(update={"tool_calls": [edited]})
        return Command(goto="run_tool", update={"messages": [message]})

    graph = StateGraph(MessagesState)
    graph.add_node(call_llm)
    graph.add_node("run_tool", ToolNode([remove]))
    graph.add_node(human_review)
    graph.add_edge(START, "call_llm")
    graph.add_conditional_edges("call_llm", route)
    graph.add_edge("run_tool", "call_llm")
    return graph.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("mode", ["updates", ["updates", "messages"]], ids=str)
@pytest.mark.parametrize("written", ["dict", "object"])
def test_A2_a_call_a_reviewer_edited_shows_as_it_ran_and_the_model_s_call_in_a_notice(
    written: str, mode: Any
) -> None:
    """(A ``messages`` stream alone never carries the review node's message, in either form:
    LangGraph streams it no message of an id it holds; there the edit is not in the events.)"""
    graph = _review_graph(written)
    config = runs._config(f"review-{mode}")
    list(graph.stream({"messages": [("user", "rm /a")]}, config, stream_mode="updates"))
    assert graph.get_state(config).interrupts
    resume: Command[Any] = Command(resume={"action": "update", "data": {"path": "/b"}})
    run = turnfold.follow(graph.stream(resume, config, stream_mode=mode), display=False)
    list(run)
    assert run.transcript.warnings == []
    (call,) = run.transcript.tool_calls()
    assert call.result is not None
    # The call as it ran, as the thread's final state holds it.
    assert (call.call_id, call.args, call.status, call.result.text) == (
        "r1", {"path": "/b"}, "success", "removed /b")  # fmt: skip
    (final_call,) = turnfold.load(graph.get_state(config).values).tool_calls()
    assert (final_call.args, final_call.description) == (call.args, call.description)
    # The model's own call: kept in the call's meta, and said after it.
    assert call.meta["model_call"] == {"name": "remove", "args": {"path": "/a"}}
    kinds = [type(e).__name__ for e in run.transcript.entries]
    assert kinds == ["UserMessage", "ToolCall", "SystemNotice", "AssistantText"]
    notice = run.transcript.entries[2]
    assert isinstance(notice, SystemNotice)
    assert notice.text == 'remove edited before it ran; the model asked for {"path":"/a"}'
    assert 'remove edited before it ran; the model asked for {"path":"/a"}' in _text(run.transcript)
    assert '在运行前被编辑；模型原本请求的是 {"path":"/a"}' in _text(run.transcript, "zh")
    # The edit, as the load of its dump shows it.
    assert turnfold.load(run.transcript.dump()).entries == run.transcript.entries


def test_A2_a_call_the_reviewer_let_run_as_asked_has_no_notice() -> None:
    graph = _review_graph()
    config = runs._config("review-continue")
    list(graph.stream({"messages": [("user", "rm /a")]}, config, stream_mode="updates"))
    run = turnfold.follow(graph.stream(Command(resume={"action": "continue"}), config),
                          display=False)  # fmt: skip
    list(run)
    assert run.transcript.warnings == []
    assert not any(isinstance(e, SystemNotice) for e in run.transcript.entries)
    (call,) = [e for e in run.transcript.entries if isinstance(e, ToolCall)]
    assert (call.args, call.meta) == ({"path": "/a"}, {})
