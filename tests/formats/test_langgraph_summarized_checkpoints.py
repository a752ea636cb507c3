"""A LangGraph thread whose history was cut short, loaded from its ``SqliteSaver`` database
(``langgraph-checkpoints``; spec L-1, A-1).

``SummarizationMiddleware`` replaces an agent's history by a summary
(``RemoveMessage(REMOVE_ALL_MESSAGES)``, the summary, the last messages kept), and LangGraph's
summarise-and-delete pattern removes old messages with ``RemoveMessage`` and keeps a
``summary`` in the state: the newest checkpoint holds only what is left. The earlier messages
are in the earlier checkpoints, so the load shows the whole conversation, each message once:
what was said before the summary, the compaction, what followed. The committed database was
written by the real ``SqliteSaver`` on scripted models
(``tests/fixtures/frameworks/langchain/langgraph_summarized_recipe.py``); LangGraph's own
``get_state_history`` reads its checkpoints back to check the load against (trusted here: the
fixture is the project's own).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph.checkpoint.sqlite")

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats.recipes import recipe as load_recipe
from turnfold.formats.frameworks import langgraph_checkpoints
from turnfold.model import CompactionBoundary, ToolCall, Transcript

recipe = load_recipe(runs.FIXTURES / "langgraph_summarized_recipe.py")
DB = recipe.FIXTURE
SUMMARY_TEXT = f"Here is a summary of the conversation to date:\n\n{recipe.SUMMARY}"


def said(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each entry as a user reads it: its kind and text, a call with its outcome, a
    compaction with its summary."""
    out: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result else None
            out.append(("call", entry.call_id, entry.args, entry.status, result))
        elif isinstance(entry, CompactionBoundary):
            out.append(("compaction", entry.summary))
        else:
            out.append((type(entry).__name__, getattr(entry, "text", None)))
    return out


def checkpoints(path: Path, thread: str) -> int:
    """How many checkpoints the saver wrote for ``thread``'s root graph."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        query = "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
        count: int = db.execute(query, (thread,)).fetchone()[0]
        return count


SUMMARIZED = [
    ("UserMessage", "What is 1+2?"),
    ("Thinking", "I add."),
    ("call", "t1", {"a": 1, "b": 2}, "success", "3"),
    ("AssistantText", "3."),
    ("UserMessage", "And 3+4?"),
    ("Thinking", "I add again."),
    ("call", "t2", {"a": 3, "b": 4}, "success", "7"),
    ("AssistantText", "7."),
    ("UserMessage", "And the two sums added?"),
    ("compaction", SUMMARY_TEXT),
    ("AssistantText", "10."),
]


def test_L1_a_summarised_thread_shows_what_was_said_before_its_summary_then_what_followed() -> None:
    """The third prompt's model call came after ``SummarizationMiddleware`` replaced the
    history: the newest checkpoint holds the summary, the two messages kept and the answer.
    The load shows the first two turns (from the checkpoint the middleware ran from), the
    compaction where the summary was made, then the answer; the two messages kept across the
    summary ("7." and the third prompt) once each."""
    transcript = turnfold.load(DB, sample=recipe.SUMMARIZED)
    assert transcript.warnings == []
    assert said(transcript) == SUMMARIZED
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["summarised checkpoint"] == {"mapped": 1}
    assert accounting.counts["ai"] == {"mapped": 5}
    # Each checkpoint of the thread counted once: the newest, the one summarised, the rest.
    earlier = accounting.counts["earlier checkpoint"]["ignored"]
    assert 1 + 1 + earlier == checkpoints(DB, recipe.SUMMARIZED)
    for disposition in ("mapped", "ignored"):  # every record type noted is documented
        assert all(langgraph_checkpoints.RECORDS.disposition(t) == disposition
                   for t in accounting.types(disposition))  # fmt: skip


def test_L1_messages_a_graph_removed_show_before_a_compaction_of_its_state_s_summary() -> None:
    """LangGraph's summarise-and-delete pattern writes no summary message: the removed
    messages are shown, then a compaction whose summary is the state's ``summary``."""
    transcript = turnfold.load(DB, sample=recipe.TRIMMED)
    assert transcript.warnings == []
    chats = [(kind, text) for prompt, answer in recipe.CHATS
             for kind, text in (("UserMessage", prompt), ("AssistantText", answer))]  # fmt: skip
    assert said(transcript) == [*chats, ("compaction", recipe.TRIMMED_SUMMARY)]


def history(path: Path, thread: str) -> list[Any]:
    """Every message of the thread's checkpoints, as LangGraph's ``get_state_history`` reads
    them, each once (by id), in the order they were first saved."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    make = recipe.summarized_agent if thread == recipe.SUMMARIZED else recipe.trimmed_graph
    with SqliteSaver.from_conn_string(str(path)) as saver:
        states = list(make(saver).get_state_history(recipe.base.config(thread)))
    seen: dict[str, Any] = {}
    for state in reversed(states):  # oldest first
        for message in state.values.get("messages", []):
            seen.setdefault(message.id, message)
    return list(seen.values())


@pytest.mark.parametrize("thread", ["summarized", "trimmed"])
def test_L1_the_load_holds_each_message_of_the_thread_s_history_once(
    tmp_path: Path, thread: str
) -> None:
    """Against LangGraph's own reading of every checkpoint: the messages the load shows are
    those of the whole history, in order, none lost, none twice."""
    path = tmp_path / "checkpoints.sqlite"
    shutil.copyfile(DB, path)  # the saver writes to the file it opens
    from_history = said(turnfold.load(history(path, thread)))
    loaded = said(turnfold.load(DB, sample=thread))
    if thread == "trimmed":  # no message of the history is its compaction
        assert loaded[-1] == ("compaction", recipe.TRIMMED_SUMMARY)
        loaded = loaded[:-1]
    assert loaded == from_history


def test_L1_a_thread_that_removed_nothing_reads_as_its_newest_checkpoint() -> None:
    """Only checkpoints from which a task removed messages are read besides the newest:
    a thread that removed none loads as before (each earlier checkpoint counted)."""
    other = load_recipe(runs.FIXTURES / "langgraph_checkpoints_recipe.py")
    transcript = turnfold.load(other.FIXTURE, sample=other.TWO_TURNS)
    assert [e for e in said(transcript) if e[0] == "compaction"] == []
    assert transcript.accounting is not None
    assert "summarised checkpoint" not in transcript.accounting.counts
    assert transcript.accounting.counts["earlier checkpoint"] == {"ignored": 9}


def test_X1_a_damaged_summarised_checkpoint_is_warned_of_and_the_rest_shown(tmp_path: Path) -> None:
    """The checkpoint the middleware ran from cannot be read: the messages removed there
    cannot be shown, which a warning naming it says; what the newest holds is shown."""
    path = tmp_path / "checkpoints.sqlite"
    shutil.copyfile(DB, path)
    with sqlite3.connect(path) as db:
        (checkpoint,) = db.execute(
            "SELECT DISTINCT checkpoint_id FROM writes WHERE thread_id = ? AND "
            "instr(value, ?) > 0", (recipe.SUMMARIZED, b"RemoveMessage")
        ).fetchone()  # fmt: skip
        db.execute("UPDATE checkpoints SET checkpoint = X'c1' WHERE checkpoint_id = ?",
                   (checkpoint,))  # fmt: skip
    transcript = turnfold.load(path, sample=recipe.SUMMARIZED)
    (warning,) = transcript.warnings
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.counts["summarised checkpoint"] == {"warned": 1}
    earlier = accounting.counts["earlier checkpoint"]["ignored"]
    assert 1 + 1 + earlier == checkpoints(path, recipe.SUMMARIZED)
    assert checkpoint in warning.reason
    assert "removed there are not shown" in warning.reason
    assert said(transcript) == [
        ("compaction", SUMMARY_TEXT),
        ("AssistantText", "7."),
        ("UserMessage", "And the two sums added?"),
        ("AssistantText", "10."),
    ]


@pytest.mark.parametrize("thread", ["summarized", "trimmed"])
def test_A1_a_thread_s_state_history_from_any_checkpointer_loads_whole(thread: str) -> None:
    """``list(graph.get_state_history(config))`` (here of an ``InMemorySaver``; any
    checkpointer, Postgres's too, gives the same snapshots) loads as the database does: the
    whole conversation, each message once, the compaction where the history was cut."""
    from langgraph.checkpoint.memory import InMemorySaver

    config = recipe.base.config(thread)
    if thread == recipe.SUMMARIZED:
        graph = recipe.summarized_agent(InMemorySaver())
        prompts = list(recipe.TURNS)
    else:
        graph = recipe.trimmed_graph(InMemorySaver())
        prompts = [prompt for prompt, _ in recipe.CHATS]
    for prompt in prompts:
        graph.invoke({"messages": [("user", prompt)]}, config)
    loaded = turnfold.load(list(graph.get_state_history(config)))
    assert loaded.warnings == []
    assert said(loaded) == said(turnfold.load(DB, sample=thread))
    # The newest state alone is only what the thread holds now, all of it in the whole.
    now, whole = said(turnfold.load(graph.get_state(config))), said(loaded)
    assert len(now) < len(whole)
    assert all(entry in whole for entry in now if entry[0] != "compaction")
