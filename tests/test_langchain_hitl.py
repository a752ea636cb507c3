"""LangChain's ``HumanInTheLoopMiddleware`` (spec A-1, A-2): a reviewer's decisions on a run's
calls, loaded and followed; and the prompt note of a stream whose graph's input holds no
messages.

The runs are real: ``create_agent`` with the scripted offline model of
``tests/formats/langchain_runs.py`` (``FakeToolModel``), ``HumanInTheLoopMiddleware`` (langchain
1.5) and ``InMemorySaver``; each run stops on the middleware's ``interrupt`` and is resumed
with ``Command(resume={"decisions": [...]})``, as the middleware's documentation shows. An
"edit" keeps the model's call in the AI message, puts the reviewer's call in the private
state key ``hitl_edited_tool_calls`` and runs it, its result prefixed with "Executed
instead: ...".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import TypedDict

import turnfold
from tests.formats import langchain_runs as runs
from turnfold.model import AssistantText, SystemNotice, ToolCall, Transcript, UserMessage
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings


@tool
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


@tool
def archive(path: str) -> str:
    """Archive a file."""
    return f"archived {path}"


def _agent(paths: list[str], mode: Any = "batched", turns: int = 1) -> Any:
    """An agent whose response calls ``remove`` on each of ``paths`` (``r1``, ``r2``…), each
    call reviewed by ``HumanInTheLoopMiddleware`` before it runs, then answers "Done."; with
    ``turns=2`` it does so again, its calls ``s1``…, for a second prompt."""
    responses: list[BaseMessage] = []
    for turn, prefix in zip(range(turns), "rs", strict=False):
        calls = [
            {"name": "remove", "args": {"path": path}, "id": f"{prefix}{n}"}
            for n, path in enumerate(paths, start=1)
        ]
        responses += [AIMessage("", tool_calls=calls), AIMessage(f"Done {turn + 1}.")]
    return create_agent(
        runs.FakeToolModel(responses=responses),
        tools=[remove, archive],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"remove": True, "archive": True}, interrupt_mode=mode
            )
        ],
        checkpointer=InMemorySaver(),
    )


def _edit(name: str, path: str) -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": name, "args": {"path": path}}}


EDIT_B: Command[Any] = Command(resume={"decisions": [_edit("remove", "/b")]})


def _reviewed(agent: Any, thread: str, resume: Command[Any], prompt: str = "rm /a") -> Any:
    """``agent`` run to its interrupt and resumed with ``resume``: its config."""
    config = runs._config(thread)
    stopped = agent.invoke({"messages": [("user", prompt)]}, config)
    assert stopped["__interrupt__"]
    agent.invoke(resume, config)
    return config


def _calls(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None,
         c.meta.get("model_call"))
        for c in transcript.tool_calls()
    ]  # fmt: skip


def _notices(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, SystemNotice)]


def _text(transcript: Transcript, locale: str = "en") -> str:
    return render_text(build_view_model(transcript, DisplaySettings(locale=locale)))


NOTE_B = (
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in your "
    "message is the one you produced, not the one that executed. This was intentional and "
    "authorized. Do not re-issue your original call. Executed instead: remove with arguments "
    '{"path": "/b"}.\n\nTool response:\nremoved /b'
)
EDITED_B = ("r1", "remove", {"path": "/b"}, "success", NOTE_B,
            {"name": "remove", "args": {"path": "/a"}})  # fmt: skip
SAID_B = 'remove edited before it ran; the model asked for {"path":"/a"}'
#: Two calls reviewed at once: the first edited to ``/b``, the second approved.
EDIT_B_APPROVE = [_edit("remove", "/b"), {"type": "approve"}]


# --- 1. an edit, loaded from the final state ---------------------------------------------------


def test_A1_a_call_a_reviewer_edited_loads_from_the_state_as_it_ran() -> None:
    """``graph.get_state(config).values`` holds ``hitl_edited_tool_calls``: the call shows the
    reviewer's arguments, the model's kept in ``meta["model_call"]`` and said in a notice
    right after the call, in each locale; the dump of the transcript loads the same."""
    agent = _agent(["/a"])
    config = _reviewed(agent, "state", EDIT_B)
    state = agent.get_state(config).values
    assert state["hitl_edited_tool_calls"] == {"r1": {"name": "remove", "args": {"path": "/b"}}}
    loaded = turnfold.load(state)
    assert loaded.warnings == []
    assert _calls(loaded) == [EDITED_B]
    (call,) = loaded.tool_calls()
    as_run = AIMessage("", tool_calls=[{"name": "remove", "args": {"path": "/b"}, "id": "r1"}])
    assert call.description == turnfold.load([as_run]).tool_calls()[0].description
    kinds = [type(e).__name__ for e in loaded.entries]
    assert kinds == ["UserMessage", "ToolCall", "SystemNotice", "AssistantText"]
    assert _notices(loaded) == [SAID_B]
    assert SAID_B in _text(loaded)
    assert '在运行前被编辑；模型原本请求的是 {"path":"/a"}' in _text(loaded, "zh")
    assert loaded.accounting is not None
    assert loaded.accounting.counts["hitl_edited_tool_calls"] == {"mapped": 1}
    assert turnfold.load(loaded.dump()).entries == loaded.entries


def test_A1_a_reviewer_who_sent_the_call_to_another_tool_is_said_so() -> None:
    """An edit may name another tool (batched mode): the call shows that tool, the notice
    names the tool and arguments the model asked for."""
    agent = _agent(["/a"])
    config = _reviewed(agent, "renamed", Command(resume={"decisions": [_edit("archive", "/a")]}))
    loaded = turnfold.load(agent.get_state(config).values)
    ((call_id, name, args, status, result, model_call),) = _calls(loaded)
    assert (call_id, name, args, status) == ("r1", "archive", {"path": "/a"}, "success")
    assert result is not None
    assert result.endswith("Tool response:\narchived /a")
    assert model_call == {"name": "remove", "args": {"path": "/a"}}
    assert _notices(loaded) == [
        'archive edited before it ran; the model asked for remove {"path":"/a"}'
    ]
    assert '在运行前被编辑；模型原本请求的是 remove {"path":"/a"}' in _text(loaded, "zh")


def test_A1_each_decision_of_one_review_shows_on_its_own_call() -> None:
    """One interrupt, three calls: edited, rejected with a message, approved. The edit is
    shown as it ran; the rejected call never ran (``cancelled``), its result the reviewer's
    message; the approved call ran as the model asked, with no notice."""
    agent = _agent(["/a", "/c", "/d"])
    decisions = [_edit("remove", "/b"), {"type": "reject", "message": "Keep /c."},
                 {"type": "approve"}]  # fmt: skip
    config = _reviewed(agent, "three", Command(resume={"decisions": decisions}))
    loaded = turnfold.load(agent.get_state(config).values)
    assert loaded.warnings == []
    assert _calls(loaded) == [
        EDITED_B,
        ("r2", "remove", {"path": "/c"}, "cancelled",
         "User rejected the tool call for `remove` with reason: Keep /c.", None),
        ("r3", "remove", {"path": "/d"}, "success", "removed /d", None),
    ]  # fmt: skip
    assert _notices(loaded) == [SAID_B]
    kinds = [type(e).__name__ for e in loaded.entries]
    assert kinds == ["UserMessage", *["ToolCall"] * 3, "SystemNotice", "AssistantText"]


@pytest.mark.parametrize(
    ("decision", "status", "text"),
    [
        ({"type": "approve"}, "success", "removed /a"),
        ({"type": "reject"}, "cancelled", "User rejected the tool call for `remove` with id r1. "
         "The tool was not executed. Do not retry this tool call unless the user explicitly "
         "requests it."),
        ({"type": "respond", "message": "It is gone already."}, "success", "It is gone already."),
    ],
    ids=["approve", "reject", "respond"],
)  # fmt: skip
def test_A1_an_approved_rejected_or_answered_call_shows_what_the_reviewer_decided(
    decision: dict[str, Any], status: str, text: str
) -> None:
    agent = _agent(["/a"])
    resume: Command[Any] = Command(resume={"decisions": [decision]})
    config = _reviewed(agent, f"decided-{decision['type']}", resume)
    for loaded in (turnfold.load(agent.get_state(config).values),
                   turnfold.load(list(agent.get_state_history(config)))):  # fmt: skip
        assert loaded.warnings == []
        assert _calls(loaded) == [("r1", "remove", {"path": "/a"}, status, text, None)]
        assert _notices(loaded) == []


def test_A1_a_thread_s_history_shows_the_edits_of_every_turn() -> None:
    """The state keeps the edits of its last turn with calls only; the thread's history
    (``get_state_history``) holds those of every turn."""
    agent = _agent(["/a"], turns=2)
    config = _reviewed(agent, "two-turns", EDIT_B)
    stopped = agent.invoke({"messages": [("user", "rm /a again")]}, config)
    assert stopped["__interrupt__"]
    agent.invoke(Command(resume={"decisions": [_edit("remove", "/e")]}), config)
    final = turnfold.load(agent.get_state(config).values)
    history = turnfold.load(list(agent.get_state_history(config)))
    assert history.warnings == final.warnings == []
    edited_e = ("s1", "remove", {"path": "/e"}, "success")
    assert [c[:4] for c in _calls(final)] == [("r1", "remove", {"path": "/a"}, "success"), edited_e]
    assert [c[:4] for c in _calls(history)] == [EDITED_B[:4], edited_e]
    assert _notices(history) == [SAID_B, SAID_B]  # s1 too was asked for /a
    assert [type(e).__name__ for e in history.entries] == [
        "UserMessage", "ToolCall", "SystemNotice", "AssistantText",
        "UserMessage", "ToolCall", "SystemNotice", "AssistantText",
    ]  # fmt: skip


def test_A1_messages_alone_show_the_call_the_model_asked_for_and_langchain_s_note() -> None:
    """``invoke``'s result leaves out the private key (so does the ``messages`` stream): the
    call shows as the model asked for it, and the result as the tool message holds it, the
    middleware's note first. That note is not parsed: the middleware builds it in a private
    method, after an ``edit_notice`` of the user's choosing (or none)."""
    agent = _agent(["/a"])
    config = runs._config("messages-only")
    agent.invoke({"messages": [("user", "rm /a")]}, config)
    result = agent.invoke(EDIT_B, config)
    assert "hitl_edited_tool_calls" not in result
    loaded = turnfold.load(result)
    assert loaded.warnings == []
    assert _calls(loaded) == [("r1", "remove", {"path": "/a"}, "success", NOTE_B, None)]
    assert _notices(loaded) == []


def test_L3_a_hostile_edit_key_is_said_and_the_rest_is_shown() -> None:
    """An entry of ``hitl_edited_tool_calls`` that is no reviewer's call, or names a call no
    message holds, is a warning; the valid edit and every message still show."""
    agent = _agent(["/a"])
    config = _reviewed(agent, "hostile", EDIT_B)
    state = dict(agent.get_state(config).values)
    state["hitl_edited_tool_calls"] = {
        **state["hitl_edited_tool_calls"], "r9": {"name": "remove", "args": {"path": "/x"}},
        "bad": "junk", "worse": {"args": {}},
    }  # fmt: skip
    loaded = turnfold.load(state)
    assert [w.reason for w in loaded.warnings] == [
        "hitl_edited_tool_calls: no reviewer's call (name, args) for 'bad', 'worse', not shown",
        "hitl_edited_tool_calls names a call no message holds ('r9'): the reviewer's remove "
        '{"path":"/x"} is not shown on a call',
    ]
    assert _calls(loaded) == [EDITED_B]
    assert [type(e).__name__ for e in loaded.entries] == [
        "UserMessage", "ToolCall", "SystemNotice", "AssistantText"]  # fmt: skip
    state["hitl_edited_tool_calls"] = ["not", "a", "mapping"]
    listed = turnfold.load(state)
    assert [w.reason for w in listed.warnings] == [
        "hitl_edited_tool_calls of a list (not read): no edited call shown"
    ]
    assert _calls(listed) == [("r1", "remove", {"path": "/a"}, "success", NOTE_B, None)]


# --- 2. an edit, followed live and saved -------------------------------------------------------

MODES = ["updates", "values", ["updates", "values"], ["updates", "messages"],
         ["values", "messages"], "debug"]  # fmt: skip


def _wrapped(events: Iterator[Any]) -> Iterator[Any]:
    """A stream of the user's own around LangGraph's: turnfold cannot reach the graph."""
    yield from events


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_A2_a_followed_resumed_run_shows_the_edit_as_its_final_state_does(mode: Any) -> None:
    """``turnfold.follow`` over the resumed ``stream``: the same entries as the load of the
    thread's final state (the edit read from the ``after_model`` update or the state)."""
    agent = _agent(["/a", "/c"])
    config = runs._config(f"followed-{mode}")
    list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode=mode))
    resume: Command[Any] = Command(resume={"decisions": EDIT_B_APPROVE})
    run = turnfold.follow(agent.stream(resume, config, stream_mode=mode), display=False)
    list(run)
    final = turnfold.load(agent.get_state(config).values)
    assert run.transcript.warnings == []
    assert run.transcript.entries == final.entries
    assert _calls(run.transcript)[0] == EDITED_B
    assert _notices(run.transcript) == [SAID_B]


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_A2_a_saved_or_wrapped_resumed_stream_shows_the_edit(mode: Any) -> None:
    """The resumed stream saved (``langchain_core.load.dumps``) and loaded, and followed
    through a generator of the user's own: each shows the call as it ran, the model's call
    kept and said, and the other call as the model asked."""
    agent = _agent(["/a", "/c"])
    config = runs._config(f"saved-{mode}")
    list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode=mode))
    resume: Command[Any] = Command(resume={"decisions": EDIT_B_APPROVE})
    run = turnfold.follow(_wrapped(agent.stream(resume, config, stream_mode=mode)),
                          format="langchain", display=False)  # fmt: skip
    events = list(run)
    loaded = turnfold.load(dumps(events))
    final = turnfold.load(agent.get_state(config).values)
    for transcript in (run.transcript, loaded):
        assert transcript.warnings == []
        assert _calls(transcript) == _calls(final)
        assert _notices(transcript) == [SAID_B]
        assert [e for e in transcript.entries if not isinstance(e, UserMessage)] == [
            e for e in final.entries if not isinstance(e, UserMessage)
        ]
    assert run.transcript.entries == loaded.entries


def test_A2_a_followed_next_turn_shows_the_edit_its_history_holds() -> None:
    """A thread's next turn, followed: its earlier turn, read from the checkpointer with the
    state's edits, shows its edited call in place, as the load of the state before it."""
    agent = _agent(["/a"], turns=2)
    config = _reviewed(agent, "next-turn", EDIT_B)
    before = turnfold.load(agent.get_state(config).values)
    again = {"messages": [("user", "rm /a again")]}
    run = turnfold.follow(agent.stream(again, config, stream_mode="updates"), display=False)
    list(run)
    assert run.transcript.warnings == []
    assert run.transcript.entries[: len(before.entries)] == before.entries
    assert _notices(run.transcript) == [SAID_B]


# --- 3. the prompt note of a graph whose input holds no messages -------------------------------


class _TopicState(TypedDict, total=False):
    topic: str
    messages: Annotated[list[AnyMessage], add_messages]


def _poem_graph() -> Any:
    """A graph whose input is a topic: its first node writes the first message."""

    def write(state: _TopicState) -> Any:
        return {"messages": [AIMessage(f"A poem on {state['topic']}.", id="w1")]}

    graph = StateGraph(_TopicState)
    graph.add_node(write)
    graph.add_edge(START, "write")
    return graph.compile()


@pytest.mark.parametrize(
    "mode", ["values", ["updates", "values"], ["messages", "values"], ["updates", "debug"]],
    ids=str,
)  # fmt: skip
def test_A2_a_stream_whose_state_holds_the_input_says_no_prompt_is_missing(mode: Any) -> None:
    """``values`` among the modes: the stream holds the state, so its input, which holds no
    message. No "prompt not recorded" line (which would tell the user to add the very mode
    the stream has), no warning: the graph's own message opens the run, saved or followed
    through a generator of the user's own, as LangGraph's own stream followed shows it."""
    graph = _poem_graph()
    if mode == ["updates", "debug"]:
        graph.checkpointer = InMemorySaver()  # a debug stream's states are its checkpoints
    config = runs._config(f"poem-{mode}")
    own = turnfold.follow(graph.stream({"topic": "cats"}, config, stream_mode=mode),
                          display=False)  # fmt: skip
    list(own)
    wrapped = turnfold.follow(_wrapped(graph.stream({"topic": "cats"}, runs._config(f"w-{mode}"),
                                                    stream_mode=mode)),
                              format="langchain", display=False)  # fmt: skip
    loaded = turnfold.load(dumps(list(wrapped)))
    for transcript in (own.transcript, wrapped.transcript, loaded):
        assert transcript.warnings == []
        assert [(type(e), getattr(e, "text", None)) for e in transcript.entries] == [
            (AssistantText, "A poem on cats.")]  # fmt: skip
        assert "Prompt not recorded" not in _text(transcript)


def test_A2_a_stream_without_the_state_still_says_how_to_keep_the_prompt() -> None:
    """``updates`` alone holds no input: there the line is true, and says so."""
    events = list(_poem_graph().stream({"topic": "cats"}, stream_mode="updates"))
    loaded = turnfold.load(dumps(events))
    first = loaded.entries[0]
    assert isinstance(first, UserMessage)
    assert first.meta["prompt_not_recorded"] is True
    assert (
        'Prompt not recorded: LangGraph\'s updates and messages hold no input (add "values" '
        "to keep it)" in _text(loaded)
    )
    assert isinstance(loaded.entries[1], AssistantText)
    assert not any(isinstance(e, ToolCall) for e in loaded.entries)
