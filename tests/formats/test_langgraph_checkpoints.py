"""LangGraph's SQLite checkpointer database (``langgraph-checkpoints``): the file
``SqliteSaver`` / ``AsyncSqliteSaver`` keep a graph's threads in, loaded a thread at a time
and scanned a row a thread, never deserialised by LangGraph's own serializer nor pickle.

The committed database was written by the real langgraph-checkpoint-sqlite 3.1.2
``SqliteSaver`` as the checkpointer of real ``create_agent`` agents on the scripted model of
``langchain_runs`` (``tests/fixtures/frameworks/langchain/langgraph_checkpoints_recipe.py``):
the ``tool-error`` thread (``add`` succeeds, ``explode`` raises, handled), the ``two-turns``
thread (two ``invoke`` calls), the ``agent-tool`` thread (a tool invokes a second agent: its
checkpoints under ``tools:<task id>``) and the ``subgraph-node`` thread (a compiled agent as a
node). LangGraph's own ``get_state`` reads each back (trusted here:
the fixture is the project's own), to load the same messages.
"""

from __future__ import annotations

import contextlib
import pickle
import shutil
import sqlite3
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph.checkpoint.sqlite")

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats.counters_langgraph import langgraph_checkpoints as count_calls
from tests.formats.oversized import PADDING, lower_limit, skipped
from tests.formats.recipes import recipe as load_recipe
from tests.formats.stores import writable
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import agno_db, langgraph_checkpoints
from turnfold.model import (
    AssistantText,
    PendingAction,
    Transcript,
    UserMessage,
)
from turnfold.session import session_facts

recipe = load_recipe(runs.FIXTURES / "langgraph_checkpoints_recipe.py")

DB = recipe.FIXTURE
TOOL_ERROR, TWO_TURNS = recipe.TOOL_ERROR, recipe.TWO_TURNS
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", "boom: y"),
]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The committed database copied (LangGraph's saver writes to the file it opens)."""
    path = tmp_path / "checkpoints.sqlite"
    shutil.copyfile(DB, path)
    return path


def state_messages(path: Path, thread: str) -> list[Any]:
    """``graph.get_state(config).values["messages"]``: the thread as LangGraph reads it."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(path)) as saver:
        failing, turns = recipe.agents(saver)
        graph = failing if thread == TOOL_ERROR else turns
        messages: list[Any] = graph.get_state(recipe.config(thread)).values["messages"]
        return messages


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def texts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, (UserMessage, AssistantText))]


def usages(transcript: Transcript) -> list[tuple[Any, ...]]:
    found = [getattr(e, "usage", None) for e in transcript.entries]
    return [(u.input_tokens, u.output_tokens, u.cache_read_tokens) for u in found if u is not None]


def saved_times(path: Path, thread: str) -> list[str]:
    """Every checkpoint's ``ts`` of ``thread``, oldest first, as LangGraph's own ``list()``
    reads the checkpoints back."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(str(path)) as saver:
        return [item.checkpoint["ts"] for item in saver.list(config)][::-1]


def newest(db: sqlite3.Connection, thread: str) -> tuple[str, str, bytes]:
    """The id, type and blob of ``thread``'s newest root checkpoint."""
    row: tuple[str, str, bytes] = db.execute(
        "SELECT checkpoint_id, type, checkpoint FROM checkpoints WHERE thread_id = ? AND "
        "checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    ).fetchone()
    return row


# --- load ---------------------------------------------------------------------------------------


def test_a_thread_loads_as_its_state_s_messages_load(copy: Path) -> None:
    transcript = turnfold.load(DB, sample=TOOL_ERROR)
    assert transcript.metadata["source_format"] == "langgraph-checkpoints"
    assert calls_of(transcript) == CALLS
    assert texts(transcript) == [runs.PROMPT, "Trying it.", runs.ANSWER]
    assert usages(transcript) == [(101, 11, 4), (102, 12, 4), (130, 20, 4)]
    assert [e.model for e in transcript.entries if isinstance(e, AssistantText)] == [runs.MODEL] * 2
    meta = transcript.metadata
    assert (meta["session_id"], meta["step"], meta["agent"]) == (TOOL_ERROR, 5, "calculator")
    assert meta["checkpoint_source"] == "loop"
    assert transcript.warnings == []
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["checkpoint"] == {"mapped": 1}
    assert accounting.counts["earlier checkpoint"] == {"ignored": 6}
    assert accounting.counts["ai"] == {"mapped": 3}
    for disposition in ("mapped", "ignored"):  # every record type noted is documented
        assert all(langgraph_checkpoints.RECORDS.disposition(t) == disposition
                   for t in accounting.types(disposition))  # fmt: skip

    for thread in (TOOL_ERROR, TWO_TURNS):
        loaded = turnfold.load(DB, sample=thread)
        from_state = turnfold.load(state_messages(copy, thread))
        assert from_state.metadata["source_format"] == "langchain"
        assert loaded.entries == from_state.entries
        assert calls_of(loaded) == calls_of(from_state)
        assert usages(loaded) == usages(from_state)


def test_a_thread_of_two_turns_holds_both() -> None:
    transcript = turnfold.load(DB, sample=TWO_TURNS)
    assert texts(transcript) == ["What is 1+2?", "3.", "And 3+4?", "7."]
    assert [(c.call_id, c.args, c.status, c.result.text if c.result else None)
            for c in transcript.tool_calls()] == [
        ("t1", {"a": 1, "b": 2}, "success", "3"), ("t2", {"a": 3, "b": 4}, "success", "7"),
    ]  # fmt: skip
    assert transcript.metadata["step"] == 8


def test_a_thread_spans_its_first_checkpoint_to_its_newest(copy: Path) -> None:
    """The messages hold no time; each checkpoint does (``ts``, when the graph saved it): the
    thread began at its first (its first run's input) and was last saved at its newest. The
    header and the scan row show that date and span; the entries stay undated."""
    transcript = turnfold.load(DB, sample=TWO_TURNS)
    times = saved_times(copy, TWO_TURNS)
    assert (transcript.metadata["started_at"], transcript.metadata["updated_at"]) == (
        times[0], times[-1]
    )  # fmt: skip
    assert all(e.timestamp is None for e in transcript.entries)
    facts = session_facts(transcript)
    assert facts.started == datetime.fromisoformat(times[0])
    span = datetime.fromisoformat(times[-1]) - datetime.fromisoformat(times[0])
    assert facts.duration_s == pytest.approx(span.total_seconds())
    assert facts.ended is not None
    assert abs((facts.ended - datetime.fromisoformat(times[-1])).total_seconds()) < 1e-3
    (row,) = [r for r in turnfold.scan([copy], cache=False).rows if r["sample"] == TWO_TURNS]
    assert (row["started"], row["ended"]) == (facts.started, facts.ended)
    assert row["duration_s"] == pytest.approx(facts.duration_s)


def test_sample_picks_a_thread_and_a_database_of_many_names_them_without_one(copy: Path) -> None:
    assert list(langgraph_checkpoints.sessions(DB)) == [
        (TOOL_ERROR, "thread calculator"), (TWO_TURNS, "thread calculator"),
        (recipe.AGENT_TOOL, "thread parent"), (recipe.SUBGRAPH_NODE, "thread"),
    ]  # fmt: skip
    with pytest.raises(ValueError, match=r"holds 4 LangGraph threads: pick one with sample=") as e:
        turnfold.load(DB)
    assert TOOL_ERROR in str(e.value)
    assert TWO_TURNS in str(e.value)
    with pytest.raises(ValueError, match="holds no LangGraph thread 'nope'"):
        turnfold.load(DB, sample="nope")
    with pytest.raises(ValueError, match="no epochs"):
        turnfold.load(DB, sample=TOOL_ERROR, epoch=1)
    with writable(copy) as db:
        db.execute("DELETE FROM checkpoints WHERE thread_id != ?", (TOOL_ERROR,))
    assert calls_of(turnfold.load(copy)) == CALLS


def test_an_interrupt_waiting_on_the_user_is_a_pending_action(tmp_path: Path) -> None:
    """``interrupt()`` in a tool: the thread's newest checkpoint has the interrupt as a pending
    write (``__interrupt__``), shown as the graph result's interrupt is; read from the file
    ``SqliteSaver`` left in WAL mode, beside the live connection."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "chat.db"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        agent = runs.interrupt_agent(["/a"])
        agent.checkpointer = saver
        result = agent.invoke({"messages": [("user", "rm")]}, recipe.config("stopped"))
        assert result["__interrupt__"]
        transcript = turnfold.load(path)
    expected = turnfold.load(result)
    assert transcript.entries == expected.entries
    action = transcript.entries[-1]
    assert isinstance(action, PendingAction)
    assert action.call_id == "d1"
    assert "Delete /a?" in action.text
    assert [c.status for c in transcript.tool_calls()] == ["confirming"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["__interrupt__"] == {"mapped": 1}


# --- untrusted content --------------------------------------------------------------------------


def test_an_extension_naming_another_module_is_data_never_imported(
    copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint's msgpack extension names a module and class, which LangGraph's own
    serializer imports and calls: here they are read as data, and the module (importable,
    with an import that would leave a mark) is never imported."""
    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    probe = "tf_checkpoint_probe"
    (tmp_path / f"{probe}.py").write_text(
        "import sys\nsys.tf_probe_imported = True\n"
        "class AIMessage:\n    def __init__(self, **kw):\n        pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    serde = JsonPlusSerializer()
    fields = {"type": "ai", "content": "injected", "additional_kwargs": {},
              "response_metadata": {}, "tool_calls": []}  # fmt: skip
    injected = ormsgpack.Ext(
        5, ormsgpack.packb([probe, "AIMessage", fields, "model_validate_json"])
    )
    with writable(copy) as db:
        checkpoint_id, kind, blob = newest(db, TOOL_ERROR)
        checkpoint = serde.loads_typed((kind, blob))  # the project's own fixture: trusted
        checkpoint["channel_values"]["messages"].append(injected)
        checkpoint["channel_values"]["notes"] = ormsgpack.Ext(2, ormsgpack.packb(
            [probe, "Notes", {"text": "kept as data"}]))  # fmt: skip
        kind, blob = serde.dumps_typed(checkpoint)
        db.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
                   (blob, checkpoint_id))  # fmt: skip
    transcript = turnfold.load(copy, sample=TOOL_ERROR)
    assert probe not in sys.modules
    assert not hasattr(sys, "tf_probe_imported")
    assert texts(transcript)[-1] == "injected"  # its fields, read as a message's
    assert calls_of(transcript) == CALLS

    # LangGraph's own serializer would have imported it (the reason it is not used).
    try:
        serde.loads_typed((kind, blob))
        assert probe in sys.modules
    finally:
        sys.modules.pop(probe, None)
        with contextlib.suppress(AttributeError):
            del sys.tf_probe_imported  # type: ignore[attr-defined]


def test_a_pickle_checkpoint_is_warned_of_and_never_unpickled(copy: Path) -> None:
    """``JsonPlusSerializer(pickle_fallback=True)`` writes ``pickle`` payloads: never
    unpickled (this one would run code); the thread is read from its newest readable
    checkpoint, the one before (all but the answer)."""

    class Payload:
        def __reduce__(self) -> Any:
            return (exec, ("import sys; sys.tf_unpickled = True",))

    with writable(copy) as db:
        checkpoint_id, _, _ = newest(db, TOOL_ERROR)
        db.execute("UPDATE checkpoints SET type = 'pickle', checkpoint = ? "
                   "WHERE checkpoint_id = ?", (pickle.dumps(Payload()), checkpoint_id))  # fmt: skip
    transcript = turnfold.load(copy, sample=TOOL_ERROR)
    assert not hasattr(sys, "tf_unpickled")
    (warning,) = transcript.warnings
    assert warning.reason.startswith(f"thread {TOOL_ERROR}: checkpoint {checkpoint_id} is not "
                                     "read: a pickle, which turnfold never unpickles")  # fmt: skip
    assert calls_of(transcript) == CALLS
    assert texts(transcript) == [runs.PROMPT, "Trying it."]  # the answer came in the last step
    assert transcript.accounting is not None
    assert transcript.accounting.counts["checkpoint"] == {"warned": 1, "mapped": 1}
    assert transcript.accounting.counts["earlier checkpoint"] == {"ignored": 5}


def test_a_damaged_checkpoint_is_a_warning_and_the_thread_is_read_from_the_one_before(
    copy: Path,
) -> None:
    with writable(copy) as db:
        checkpoint_id, _, blob = newest(db, TWO_TURNS)
        db.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
                   (blob[: len(blob) // 2], checkpoint_id))  # fmt: skip
    transcript = turnfold.load(copy, sample=TWO_TURNS)
    (warning,) = transcript.warnings
    assert f"checkpoint {checkpoint_id} is not read: its msgpack blob is damaged" in warning.reason
    assert texts(transcript) == ["What is 1+2?", "3.", "And 3+4?"]
    assert [c.status for c in transcript.tool_calls()] == ["success", "success"]
    with writable(copy) as db:  # none readable: a clear error, naming the thread
        db.execute("UPDATE checkpoints SET checkpoint = x'c1' WHERE thread_id = ?", (TWO_TURNS,))
    error = r"thread two-turns: none of its 10 checkpoints can be read \(the newest: its msgpack"
    with pytest.raises(TranscriptFormatError, match=error):
        turnfold.load(copy, sample=TWO_TURNS)


def test_other_files_are_not_langgraph_s() -> None:
    agno = Path(__file__).parents[1] / "fixtures/frameworks/agno/agno_v3.1.10_sqlitedb.db"
    assert langgraph_checkpoints.detect_path(DB) is not None
    assert langgraph_checkpoints.detect_path(agno) is None
    assert agno_db.detect_path(DB) is None
    assert langgraph_checkpoints.detect_path(Path(recipe.__file__)) is None
    with pytest.raises(TranscriptFormatError, match="pass its path"):
        turnfold.load('{"x": 1}', format="langgraph-checkpoints")


# --- scan ---------------------------------------------------------------------------------------


def test_a_scan_is_a_row_per_thread(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    path = folder / "memory.db"
    shutil.copyfile(DB, path)
    with writable(folder / "other.sqlite") as other:  # the tables' names, not their columns
        other.execute("CREATE TABLE checkpoints (thread_id TEXT, data BLOB)")
        other.execute("CREATE TABLE writes (thread_id TEXT)")
    before = {p.name for p in folder.iterdir()}

    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    frame = corpus.to_pandas().set_index("key")
    threads = (TOOL_ERROR, TWO_TURNS, recipe.AGENT_TOOL, recipe.SUBGRAPH_NODE)
    assert sorted(frame.index) == sorted(f"{path}#{thread}" for thread in threads)
    assert set(frame["format"]) == {"langgraph-checkpoints"}
    assert corpus.errors == 0
    assert corpus.skipped == 1  # other.sqlite
    assert frame.loc[f"{path}#{TOOL_ERROR}", ["tool_calls", "failed_tools"]].tolist() == [2, 1]
    assert frame.loc[f"{path}#{TWO_TURNS}", ["tool_calls", "failed_tools"]].tolist() == [2, 0]
    for thread in threads:
        assert corpus[f"{path}#{thread}"].entries == turnfold.load(DB, sample=thread).entries
    # the counter reads the root checkpoints: the helper's call inside ask_helper is not there
    assert int(frame["tool_calls"].sum()) == count_calls(DB) == 6
    assert {p.name for p in folder.iterdir()} == before  # read only: nothing written beside


def test_a_json_checkpoint_from_before_msgpack_reads_alike(copy: Path) -> None:
    """``JsonPlusSerializer``'s ``json`` checkpoints (before its msgpack migration): messages
    as ``dumpd`` constructors, other classes as ``lc: 2`` constructors, read as their data."""
    import json

    from langchain_core.load import dumpd
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    expected = turnfold.load(DB, sample=TOOL_ERROR)
    with writable(copy) as db:
        checkpoint_id, kind, blob = newest(db, TOOL_ERROR)
        checkpoint = JsonPlusSerializer().loads_typed((kind, blob))
        values = {
            "messages": [dumpd(m) for m in checkpoint["channel_values"]["messages"]],
            "notes": {"lc": 2, "type": "constructor", "id": ["tf_json_probe", "Notes"],
                      "kwargs": {"text": "data"}},
        }  # fmt: skip
        document = {"v": 1, "id": checkpoint_id, "ts": checkpoint["ts"], "channel_values": values}
        db.execute("UPDATE checkpoints SET type = 'json', checkpoint = ? WHERE checkpoint_id = ?",
                   (json.dumps(document).encode(), checkpoint_id))  # fmt: skip
    transcript = turnfold.load(copy, sample=TOOL_ERROR)
    assert "tf_json_probe" not in sys.modules
    assert transcript.warnings == []
    assert transcript.entries == expected.entries
    assert calls_of(transcript) == CALLS


# --- subgraphs -------------------------------------------------------------------------------


def subgraph_messages(path: Path, thread: str, namespace: str) -> list[Any]:
    """The newest checkpoint's messages of a subgraph's namespace, as LangGraph reads them."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    uri = f"{path.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, check_same_thread=False)) as db:
        saver = SqliteSaver(db)
        saver.is_setup = True
        conf = {"configurable": {"thread_id": thread, "checkpoint_ns": namespace}}
        found = saver.get_tuple(conf)  # type: ignore[arg-type]
        assert found is not None
        return list(found.checkpoint["channel_values"]["messages"])


def namespaces(path: Path, thread: str) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [ns for (ns,) in db.execute("SELECT DISTINCT checkpoint_ns FROM checkpoints "
                                           "WHERE thread_id = ? AND checkpoint_ns != ''",
                                           (thread,))]  # fmt: skip


def test_an_agent_run_inside_a_tool_nests_under_the_call_its_task_ran(tmp_path: Path) -> None:
    """The helper agent ``ask_helper`` invokes saves into the parent's checkpointer under
    ``tools:<task id>``; the task's write (its tool message) names the call: the helper's
    own messages become that call's sub-agent, as they load on their own."""
    transcript = turnfold.load(DB, sample=recipe.AGENT_TOOL)
    assert transcript.warnings == []
    (call,) = transcript.tool_calls()
    assert (call.call_id, call.name, call.status) == ("p1", "ask_helper", "success")
    assert call.result is not None
    assert call.result.text == runs.CHILD_ANSWER
    assert texts(transcript)[-1] == runs.PARENT_ANSWER
    assert call.subagent is not None
    # Named by its checkpoint's agent, its task what the tool asked it (the run's prompt).
    assert (call.subagent.name, call.subagent.task) == ("helper", "2+3?")
    child = call.subagent.transcript
    assert child is not None
    assert calls_of(child) == [("child_call_1", "add", {"a": 2, "b": 3}, "success", "5")]
    assert texts(child) == ["2+3?", runs.CHILD_ANSWER]
    (namespace,) = namespaces(DB, recipe.AGENT_TOOL)
    assert namespace.startswith("tools:")
    from langchain_core.load import dumpd

    own = tmp_path / "child.json"
    own.write_text(
        turnfold.codec.dumps(
            [dumpd(m) for m in subgraph_messages(DB, recipe.AGENT_TOOL, namespace)]
        )
    )
    assert child.entries == turnfold.load(own).entries
    assert transcript.accounting is not None
    assert transcript.accounting.counts["subgraph checkpoint"] == {"mapped": 1}
    assert [c.call_id for c in transcript.tool_calls(nested=True)] == ["p1", "child_call_1"]


def test_a_subgraph_node_s_messages_are_its_parent_s_and_are_not_shown_twice() -> None:
    """A compiled graph used as a node writes its messages back into the parent's state
    (the LangChain reader's rule for such namespaces): its checkpoint is counted."""
    transcript = turnfold.load(DB, sample=recipe.SUBGRAPH_NODE)
    assert transcript.warnings == []
    assert calls_of(transcript) == [("child_call_1", "add", {"a": 2, "b": 3}, "success", "5")]
    assert all(call.subagent is None for call in transcript.tool_calls())
    assert texts(transcript) == [recipe.SUBGRAPH_PROMPT, runs.CHILD_ANSWER]
    (namespace,) = namespaces(DB, recipe.SUBGRAPH_NODE)
    assert namespace.startswith("helper:")
    assert transcript.accounting is not None
    assert transcript.accounting.counts["subgraph node checkpoint"] == {"ignored": 1}


def test_a_subgraph_nothing_ties_to_its_call_is_shown_after_the_thread_with_a_warning(
    tmp_path: Path,
) -> None:
    """``checkpointer=True`` keeps one history per thread under the namespace without the
    task id (``tools``): nothing names the call, so the helper's run is shown after the
    parent's messages, never dropped."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = tmp_path / "own.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        agent = recipe.agent_tool(saver, child_checkpointer=True)
        agent.invoke({"messages": [("user", recipe.SUBGRAPH_PROMPT)]}, recipe.config("t"))
    assert namespaces(path, "t") == ["tools"]
    transcript = turnfold.load(path)
    (warning,) = transcript.warnings
    assert warning.reason == ("thread t: nothing names the call or node that ran the subgraph "
                              "of namespace tools: shown after the thread's messages")  # fmt: skip
    ask, shown = transcript.tool_calls()
    assert (ask.call_id, ask.subagent) == ("p1", None)
    assert transcript.entries[-1] is shown
    assert shown.subagent is not None
    assert (shown.subagent.name, shown.subagent.task) == ("helper", "tools")
    assert shown.subagent.transcript is not None
    assert calls_of(shown.subagent.transcript) == [
        ("child_call_1", "add", {"a": 2, "b": 3}, "success", "5")
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["subgraph checkpoint"] == {"warned": 1}


# --- a DeltaChannel messages channel (langgraph 1.2, beta) --------------------------------------

delta = load_recipe(runs.FIXTURES / "langgraph_delta_recipe.py")


def test_a_delta_channel_thread_loads_whole_from_its_snapshot_and_the_writes_since(
    tmp_path: Path,
) -> None:
    """A thread whose messages are a ``DeltaChannel`` failed to load ("checkpoint ... holds
    no messages channel"): between snapshots a checkpoint does not hold the channel, and
    LangGraph rebuilds it from the nearest snapshot and the ancestors' writes. Loaded, it is
    what LangGraph's own ``get_state`` gives, made now and in the committed fixture."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    live, committed = tmp_path / "delta.sqlite", tmp_path / "committed.sqlite"
    delta.write(live)
    shutil.copyfile(delta.FIXTURE, committed)  # LangGraph's saver writes to the file it opens
    for path in (live, committed):
        with SqliteSaver.from_conn_string(str(path)) as saver:
            state = delta.agent(saver).get_state(recipe.config(delta.THREAD)).values["messages"]
        with contextlib.closing(sqlite3.connect(path)) as db:
            _, kind, blob = newest(db, delta.THREAD)
            assert "messages" not in langgraph_checkpoints.decoded(kind, blob)["channel_values"]
        transcript = turnfold.load(path)
        assert transcript.warnings == []
        assert texts(transcript) == ["What is 1+2?", "3.", "And 3+4?", "7."]
        assert [(c.call_id, c.args, c.status, c.result.text if c.result else None)
                for c in transcript.tool_calls()] == [
            ("t1", {"a": 1, "b": 2}, "success", "3"), ("t2", {"a": 3, "b": 4}, "success", "7"),
        ]  # fmt: skip
        assert transcript.entries == turnfold.load(state).entries
        accounting = transcript.accounting
        assert accounting is not None
        assert accounting.unaccounted == []
        assert accounting.counts["delta write"]["mapped"] > 0


def test_delta_writes_replay_as_add_messages_replaces_and_removes() -> None:
    """The replay follows ``add_messages``: a message of a known id replaces it, a
    ``RemoveMessage`` deletes its id, ``REMOVE_ALL_MESSAGES`` first drops the history (checked
    against LangGraph's own reducer)."""
    from langchain_core.load import dumpd
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

    seed = [HumanMessage("hi", id="h"), AIMessage("draft", id="a")]
    writes = [
        [AIMessage("final", id="a"), HumanMessage("more", id="h2")],
        [RemoveMessage(id="h")],
        [AIMessage("last", id="a2")],
    ]
    expected = seed
    replayed = [dumpd(m) for m in seed]
    for write in writes:
        expected = add_messages(expected, write)
        replayed = langgraph_checkpoints._add_messages(replayed, [dumpd(m) for m in write])
    assert [(m["kwargs"]["id"], m["kwargs"]["content"]) for m in replayed] == [
        (m.id, m.content) for m in expected
    ]
    reset = [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("anew", id="n")]
    replayed = langgraph_checkpoints._add_messages(replayed, [dumpd(m) for m in reset])
    assert [m["kwargs"]["id"] for m in replayed] == [m.id for m in add_messages(expected, reset)]


def test_a_damaged_snapshot_is_said_and_the_messages_are_rebuilt_from_an_older_one(
    tmp_path: Path,
) -> None:
    """The snapshot the replay starts from cannot be read: a warning names it, and the writes
    since an older state (here the thread's start) rebuild the same conversation."""
    path = tmp_path / "delta.sqlite"
    shutil.copyfile(delta.FIXTURE, path)
    whole = turnfold.load(path)
    with writable(path) as db:
        rows = db.execute("SELECT checkpoint_id, type, checkpoint FROM checkpoints "
                          "ORDER BY checkpoint_id DESC").fetchall()  # fmt: skip
        snapshot = next(
            cid for cid, kind, blob in rows[1:]
            if "messages" in langgraph_checkpoints.decoded(kind, blob)["channel_values"]
        )  # fmt: skip
        db.execute("UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
                   (b"\xc1 damaged", snapshot))  # fmt: skip
    transcript = turnfold.load(path)
    assert [w.reason for w in transcript.warnings] == [
        f"thread {delta.THREAD}: checkpoint {snapshot} is not read (its msgpack blob is "
        f"damaged ({transcript.warnings[0].reason.split('damaged (', 1)[1]}"
    ]
    assert transcript.warnings[0].reason.endswith("the messages are rebuilt from an older one")
    assert transcript.entries == whole.entries


def test_X1_a_checkpoint_too_long_to_read_is_warned_of_by_its_row_and_the_one_before_read(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row over the record limit is never read whole (SQLite refuses it): the newest
    checkpoint is left out as a damaged one is, with a warning naming its row and id, and the
    thread read from the one before."""
    lower_limit(monkeypatch)
    with writable(copy) as db:
        checkpoint_id, _, _ = newest(db, TWO_TURNS)
        (rowid,) = db.execute(
            "SELECT rowid FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        ).fetchone()
        db.execute("UPDATE checkpoints SET checkpoint = checkpoint || ? WHERE rowid = ?",
                   (PADDING.encode(), rowid))  # fmt: skip
    assert langgraph_checkpoints.detect_path(copy) is not None
    transcript = turnfold.load(copy, sample=TWO_TURNS)
    (warning,) = transcript.warnings
    assert warning.source == str(copy)
    said = skipped(copy, "checkpoints", rowid, "checkpoint", "checkpoint_id")
    assert warning.reason == f"thread {TWO_TURNS}: {said}"
    assert texts(transcript) == ["What is 1+2?", "3.", "And 3+4?"]
    assert [c.status for c in transcript.tool_calls()] == ["success", "success"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["checkpoint"] == {"warned": 1, "mapped": 1}


def test_X1_a_snapshot_too_long_to_read_is_said_and_the_messages_rebuilt_from_an_older_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot a ``DeltaChannel`` replay starts from is over the record limit: never read
    whole, it is warned of by its row as a damaged one is, and the writes since an older state
    rebuild the same conversation (the walk goes on past it by its parent's id)."""
    lower_limit(monkeypatch)
    path = tmp_path / "delta.sqlite"
    shutil.copyfile(delta.FIXTURE, path)
    whole = turnfold.load(path)
    with writable(path) as db:
        rows = db.execute("SELECT rowid, checkpoint_id, type, checkpoint FROM checkpoints "
                          "ORDER BY checkpoint_id DESC").fetchall()  # fmt: skip
        rowid, snapshot = next(
            (rowid, cid) for rowid, cid, kind, blob in rows[1:]
            if "messages" in langgraph_checkpoints.decoded(kind, blob)["channel_values"]
        )  # fmt: skip
        db.execute("UPDATE checkpoints SET checkpoint = checkpoint || ? WHERE rowid = ?",
                   (PADDING.encode(), rowid))  # fmt: skip
    transcript = turnfold.load(path)
    said = skipped(path, "checkpoints", rowid, "checkpoint", "checkpoint_id")
    assert [w.reason for w in transcript.warnings] == [
        f"thread {delta.THREAD}: checkpoint {snapshot} is not read ({said}): the messages are "
        "rebuilt from an older one"
    ]
    assert transcript.entries == whole.entries
