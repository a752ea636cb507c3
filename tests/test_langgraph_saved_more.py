"""LangGraph leftovers (spec A-1, A-2, L-4): a checkpointer database shows a reviewer's edits and
the state's other keys as the thread's state does; a saved stream's interrupt shows what it
asked however the stream was saved; a ``debug`` stream of a graph without a checkpointer loads.

The runs are real: ``create_agent`` on the scripted offline model of
``tests/formats/langchain_runs.py`` (``FakeToolModel``), with langchain 1.5's
``HumanInTheLoopMiddleware`` and ``ModelCallLimitMiddleware``, and langgraph-checkpoint-sqlite
3.1's ``SqliteSaver`` writing a real database file. Streams are saved the ways users save them:
``langchain_core.load.dumps`` (an ``Interrupt`` becomes ``dumpd``'s ``not_implemented`` record,
its ``repr`` kept), ``json.dumps`` with a ``default`` (a message's ``model_dump``, anything else
its ``str``: the ``Interrupt``'s repr) and ``turnfold.codec.dumps`` with one (msgspec writes the
``Interrupt`` dataclass as its fields).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, ModelCallLimitMiddleware
from langchain_core.load import dumps as lc_dumps
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

import turnfold
from tests.formats import langchain_runs as runs
from turnfold import codec
from turnfold.model import PendingAction, SystemNotice, ToolCall, Transcript, UserMessage


@tool
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


def _reviewed_agent(checkpointer: Any, turns: int = 1) -> Any:
    """An agent whose responses call ``remove`` on ``/a`` (``r1``, then ``s1`` for a second
    prompt), each call reviewed by ``HumanInTheLoopMiddleware`` before it runs, its model calls
    counted by ``ModelCallLimitMiddleware`` (the state's ``thread_model_call_count``)."""
    responses: list[BaseMessage] = []
    for turn, call_id in zip(range(turns), ("r1", "s1"), strict=False):
        call = {"name": "remove", "args": {"path": "/a"}, "id": call_id}
        responses += [AIMessage("", tool_calls=[call]), AIMessage(f"Done {turn + 1}.")]
    middleware: list[Any] = [
        HumanInTheLoopMiddleware(interrupt_on={"remove": True}),
        ModelCallLimitMiddleware(thread_limit=50),
    ]
    return create_agent(
        runs.FakeToolModel(responses=responses),
        tools=[remove],
        middleware=middleware,
        checkpointer=checkpointer,
    )


def _edit(path: str) -> Command[Any]:
    edited = {"type": "edit", "edited_action": {"name": "remove", "args": {"path": path}}}
    return Command(resume={"decisions": [edited]})


def _calls(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.meta.get("model_call"))
        for c in transcript.tool_calls()
    ]


def _shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What each entry shows, without the ids a run makes anew (its messages' run ids)."""
    out: list[tuple[Any, ...]] = []
    for e in transcript.entries:
        if isinstance(e, ToolCall):
            result = e.result.text if e.result else None
            out.append(("call", e.call_id, e.name, e.args, e.status, result, e.meta))
        else:
            usage = getattr(e, "usage", None)
            tokens = (usage.input_tokens, usage.output_tokens) if usage else None
            out.append((type(e).__name__, getattr(e, "text", None), tokens, e.meta))
    return out


def _notices(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, SystemNotice)]


# --- 1. a checkpointer database holds the reviewer's edits ---------------------------------


def _reviewed_database(path: Path) -> tuple[Any, Transcript]:
    """A thread of two turns in a ``SqliteSaver`` database at ``path``, each call edited by
    the reviewer (``/b``, then ``/e``): its state and the load of its history."""
    config = runs._config("reviewed")
    with SqliteSaver.from_conn_string(str(path)) as saver:
        agent = _reviewed_agent(saver, turns=2)
        assert agent.invoke({"messages": [("user", "rm /a")]}, config)["__interrupt__"]
        agent.invoke(_edit("/b"), config)
        assert agent.invoke({"messages": [("user", "rm /a again")]}, config)["__interrupt__"]
        agent.invoke(_edit("/e"), config)
        state = agent.get_state(config).values
        return state, turnfold.load(list(agent.get_state_history(config)))


ASKED = {"name": "remove", "args": {"path": "/a"}}
EDITED = [
    ("r1", "remove", {"path": "/b"}, "success", ASKED),
    ("s1", "remove", {"path": "/e"}, "success", ASKED),
]


def test_A1_a_sqlite_thread_shows_each_turn_s_edits_as_its_history_does(tmp_path: Path) -> None:
    """The database, loaded, shows both edited calls as they ran, the model's calls kept and
    said, as the thread's history (``get_state_history``) loaded does (its state holds the
    last turn's edits only); the state's scalar ``thread_model_call_count`` goes to metadata
    as the state loaded puts it there."""
    path = tmp_path / "checkpoints.sqlite"
    state, history = _reviewed_database(path)
    assert state["hitl_edited_tool_calls"] == {"s1": {"name": "remove", "args": {"path": "/e"}}}
    loaded = turnfold.load(path)
    assert loaded.warnings == history.warnings == []
    assert _calls(loaded) == EDITED
    assert loaded.entries == history.entries
    said = 'remove edited before it ran; the model asked for {"path":"/a"}'
    assert _notices(loaded) == [said, said]
    assert loaded.metadata["thread_model_call_count"] == state["thread_model_call_count"] == 4
    assert turnfold.load(dict(state)).metadata["thread_model_call_count"] == 4
    assert loaded.accounting is not None
    assert loaded.accounting.counts["hitl_edited_tool_calls"] == {"mapped": 1}


def test_L4_a_reviewer_s_write_that_is_no_mapping_is_said_and_the_rest_shown(
    tmp_path: Path,
) -> None:
    """A write of ``hitl_edited_tool_calls`` that holds no edits (a damaged or foreign file,
    written here by LangGraph's own serializer) is a warning naming the thread; each edit
    the other writes hold is still shown."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    path = tmp_path / "checkpoints.sqlite"
    _reviewed_database(path)
    kind, blob = JsonPlusSerializer().dumps_typed(["not", "edits"])
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        (first,) = db.execute("SELECT MIN(checkpoint_id) FROM checkpoints").fetchone()
        db.execute(
            "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
            "channel, type, value) VALUES ('reviewed', '', ?, 'junk', 0, "
            "'hitl_edited_tool_calls', ?, ?)",
            (first, kind, blob),
        )
    loaded = turnfold.load(path)
    assert [w.reason for w in loaded.warnings] == [
        f"thread reviewed: a reviewer's edits of a list (not read) at checkpoint {first}"
    ]
    assert _calls(loaded) == EDITED


# --- 2. a saved stream's interrupt -------------------------------------------------------------


def _model_dump(value: Any) -> Any:
    """``json.dumps``' ``default`` as users write it: a message's fields, else its text."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else str(value)


def _fields(value: Any) -> Any:
    """``codec.dumps``' ``default`` (msgspec's hook, asked only of what it cannot write)."""
    return value.model_dump()


def _fields_or_none(value: Any) -> Any:
    """A ``default`` that writes nothing of what is no message."""
    return value.model_dump() if hasattr(value, "model_dump") else None


def _fields_or_asdict(value: Any) -> Any:
    """A ``default`` writing a message's fields and a dataclass's (the ``Interrupt``)."""
    return value.model_dump() if hasattr(value, "model_dump") else dataclasses.asdict(value)


#: The ways a stream is saved: the text of the file.
SAVERS = {
    "dumps": lambda events: lc_dumps(events),
    "json-default": lambda events: json.dumps(events, default=_model_dump),
    "codec-default": lambda events: codec.dumps(events, default=_fields),
    "json-asdict": lambda events: json.dumps(events, default=_fields_or_asdict),
}
MODES = ["updates", "values", ["updates", "values"], ["updates", "messages"]]
REQUEST = "Tool execution requires approval\n\nTool: remove\nArgs: {'path': '/a'}"


def _stopped(mode: Any, thread: str) -> tuple[list[Any], Any, Any]:
    """The events of a reviewed run streamed to its interrupt, the interrupt, and the load
    of the thread's state (``graph.get_state(config)``) it stopped in."""
    agent = _reviewed_agent(InMemorySaver())
    config = runs._config(thread)
    events = list(agent.stream({"messages": [("user", "rm /a")]}, config, stream_mode=mode))
    snapshot = agent.get_state(config)
    (interrupt,) = snapshot.interrupts
    return events, interrupt, turnfold.load(snapshot)


def _pending(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (e.action, e.text, e.call_id, e.options, e.meta.get("interrupt_id"))
        for e in transcript.entries
        if isinstance(e, PendingAction)
    ]


@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("mode", MODES, ids=str)
def test_A2_a_saved_stream_s_interrupt_shows_what_it_asked(mode: Any, saver: str) -> None:
    """However it was saved, the stream's interrupt is one pending permission on the call it
    stopped (``confirming``), its text the middleware's request, its id the interrupt's: as
    the state the run stopped in loads, with no warning."""
    events, interrupt, state = _stopped(mode, f"{saver}-{mode}")
    loaded = turnfold.load(SAVERS[saver](events))
    decisions = ["approve", "edit", "reject", "respond"]
    assert _pending(loaded) == [("permission", REQUEST, "r1", decisions, interrupt.id)]
    assert _pending(loaded) == _pending(state)
    assert [w.reason for w in loaded.warnings] == []
    assert [c.status for c in loaded.tool_calls()] == ["confirming"]


def test_A2_an_interrupt_of_a_tool_saved_as_its_repr_shows_its_question() -> None:
    """``interrupt()`` in a tool (a value of the user's), its stream, and ``invoke``'s result,
    saved by ``langchain_core.load.dumps``: the question is the value, not LangChain's record
    of it."""
    agent = runs.interrupt_agent(["/a"])
    config = runs._config("tool-interrupt")
    events = list(agent.stream({"messages": [("user", "rm")]}, config, stream_mode="values"))
    (interrupt,) = agent.get_state(config).interrupts
    result = runs.interrupt_agent(["/a"]).invoke({"messages": [("user", "rm")]}, config)
    (invoked,) = result["__interrupt__"]
    for loaded, own_id in ((turnfold.load(lc_dumps(events)), interrupt.id),
                           (turnfold.load(lc_dumps(result)), invoked.id)):  # fmt: skip
        (action,) = [e for e in loaded.entries if isinstance(e, PendingAction)]
        assert action.action == "question"
        assert json.loads(action.text) == {"question": "Delete /a?", "path": "/a"}
        assert (action.call_id, action.meta["interrupt_id"]) == ("d1", own_id)
        assert loaded.warnings == []


def test_L4_an_interrupt_saved_with_nothing_of_it_left_is_said_once() -> None:
    """``json.dumps(default=...)`` writing ``None`` for what is no message leaves nothing of
    the interrupt: one warning says so and how to keep it; the call still waits on the user,
    and every message is shown."""
    events, _, state = _stopped(["updates", "values"], "nothing-left")
    loaded = turnfold.load(json.dumps(events, default=_fields_or_none))
    assert [w.reason for w in loaded.warnings] == [
        "an interrupt holds nothing of its value or id (saved as None): the run waits on a "
        "human, what for is not shown; save the stream with langchain_core.load.dumps (which "
        "keeps its repr), or give json.dumps a default that writes dataclasses.asdict of it"
    ]
    (action,) = [e for e in loaded.entries if isinstance(e, PendingAction)]
    assert (action.action, action.text, action.call_id) == ("question", "", "r1")
    assert [c.status for c in loaded.tool_calls()] == ["confirming"]
    assert [type(e).__name__ for e in loaded.entries] == [type(e).__name__ for e in state.entries]


@pytest.mark.parametrize(
    ("value", "shown", "interrupt_id"),
    [
        ("__import__('os').system('touch {marker}')", "__import__('os').system('touch {marker}')",
         "i9"),
        ("[" * 5000 + "]" * 5000, None, None),
        ("'" + "x" * (1 << 20) + "'", None, None),
    ],
    ids=["code", "nested", "long"],
)  # fmt: skip
def test_X1_an_interrupt_s_repr_is_parsed_never_run(
    tmp_path: Path, value: str, shown: str | None, interrupt_id: str | None
) -> None:
    """A hostile repr in a saved stream: code is its text, never run; one nested too deep to
    parse, or too long to be parsed, is shown as written. The messages all show."""
    marker = tmp_path / "ran"
    value, shown = value.format(marker=marker), shown and shown.format(marker=marker)
    events, _, _ = _stopped("updates", f"hostile-{len(value)}")
    saved = json.loads(lc_dumps(events))
    (record,) = [r for r in saved if "__interrupt__" in r]
    written = f"Interrupt(value={value}, id='i9')"
    record["__interrupt__"][0]["repr"] = written
    loaded = turnfold.load(json.dumps(saved))
    (action,) = [e for e in loaded.entries if isinstance(e, PendingAction)]
    assert action.text == (shown if shown is not None else written)
    assert action.meta.get("interrupt_id") == interrupt_id
    assert not marker.exists()
    assert loaded.warnings == []
    assert [c.status for c in loaded.tool_calls()] == ["confirming"]


# --- 3. a debug stream of a graph without a checkpointer ----------------------------------------


def _calculator() -> Any:
    """The scripted calculator agent (a call of ``add``, a handled ``ToolException``, the
    answer) compiled without a checkpointer."""
    return create_agent(runs.scripted_model(), tools=[runs.add, runs.explode], name="calculator")


def test_A2_a_debug_stream_without_checkpoints_loads_from_its_tasks() -> None:
    """No checkpointer: the stream's events are tasks and their results only. The first
    model task's input holds the prompt; each result the messages its node wrote. Loaded as
    events, saved, or followed, it shows what ``invoke``'s result shows."""
    expected = turnfold.load(_calculator().invoke({"messages": [("user", runs.PROMPT)]}))
    events = list(_calculator().stream({"messages": [("user", runs.PROMPT)]}, stream_mode="debug"))
    assert {e["type"] for e in events} == {"task", "task_result"}
    followed = turnfold.follow(
        _calculator().stream({"messages": [("user", runs.PROMPT)]}, stream_mode="debug"),
        display=False,
    )
    list(followed)
    for transcript in (turnfold.load(events), turnfold.load(lc_dumps(events)),
                       followed.transcript):  # fmt: skip
        assert transcript.warnings == []
        assert _shown(transcript) == _shown(expected)
        assert isinstance(transcript.entries[0], UserMessage)
        assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [
            ("call_1", "success"), ("call_2", "error")]  # fmt: skip


def test_A2_a_debug_stream_without_checkpoints_shows_a_node_s_several_writes() -> None:
    """A node that writes its messages more than once in a step has its writes listed
    (``{"$writes": [...]}``, ``map_task_result_writes``): each is read, in order."""
    graph = runs.command_graph()
    graph.checkpointer = None
    given = {"messages": [("user", "set the flag")]}
    expected = turnfold.load(runs.command_graph().invoke(given, runs._config("command")))
    events = list(graph.stream(given, stream_mode="debug"))
    loaded = turnfold.load(lc_dumps(events))
    assert loaded.warnings == []
    assert _shown(loaded) == _shown(expected)
    assert any(isinstance(e, ToolCall) for e in loaded.entries)
