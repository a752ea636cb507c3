"""One value over the record limit (X-1) in a SQLite store of sessions never refuses the whole
database: the query that lists its sessions, and those that read a session's own parts apart
from its messages, read every value through ``databases.rows``/``databases.row``, so a long
value is clipped or left out with a warning naming its session, and every session is still
listed, loaded and scanned a row each (C-7).

LangGraph's checkpointer databases are written here by the real langgraph-checkpoint-sqlite
``SqliteSaver`` running the ``create_agent`` agents of
``tests/fixtures/frameworks/langchain/langgraph_checkpoints_recipe.py`` on their scripted model.
LangGraph copies the run's ``config["metadata"]`` into every checkpoint's ``metadata``: a run
given a long one is how a real checkpoint's metadata grows past the limit. The other stores
are copies of the committed databases their own tools wrote, one value lengthened.

Each test runs with SQLite's length limit (Python 3.11 and later) and without it (3.10, where
each value is measured in its query)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.fixtures.traces.mlflow import mlflow_recipe
from tests.formats.oversized import LIMIT, PADDING, lower_limit, shown, skipped
from tests.formats.recipes import recipe as load_recipe
from tests.formats.stores import writable
from turnfold.formats import databases

FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.fixture(params=[True, False], ids=["limited", "unlimited"])
def limited(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test with SQLite's length limit (Python 3.11 and later) and without (3.10)."""
    if request.param and sys.version_info < (3, 11):
        pytest.skip("SQLite's limit is set from Python 3.11")
    monkeypatch.setattr(databases, "LIMITED", request.param)
    return bool(request.param)


def _length(path: Path, table: str, rowid: int, column: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        query = f"SELECT length(CAST({column} AS BLOB)) FROM {table} WHERE rowid = ?"
        (size,) = db.execute(query, (rowid,)).fetchone()
    return int(size)


def _clipped(path: Path, table: str, rowid: int, key: str, column: str, key_column: str) -> str:
    """The warning of the value ``column`` of the row ``rowid`` clipped (``databases.row``)."""
    return (f"{table} row {rowid} ({key_column} {key}): its {column} of "
            f"{_length(path, table, rowid, column):,} bytes, over the limit of {LIMIT:,} "
            f"(TURNFOLD_MAX_RECORD_BYTES); clipped to its first {databases.CLIPPED_BYTES:,} "
            "bytes")  # fmt: skip


# --- LangGraph's checkpointer -------------------------------------------------------------------

pytest.importorskip("langgraph.checkpoint.sqlite")
langgraph = load_recipe(FIXTURES / "frameworks" / "langchain" / "langgraph_checkpoints_recipe.py")
TOOL_ERROR, TWO_TURNS = langgraph.TOOL_ERROR, langgraph.TWO_TURNS


def _checkpointed(path: Path, metadata: dict[str, Any]) -> None:
    """LangGraph's ``SqliteSaver`` at ``path`` holding the recipe's ``tool-error`` thread and
    its ``two-turns`` thread, whose runs are given ``metadata``."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(path)) as saver:
        failing, turns = langgraph.agents(saver)
        failing.invoke({"messages": [("user", langgraph.langchain_runs.PROMPT)]},
                       langgraph.config(TOOL_ERROR))  # fmt: skip
        for prompt in langgraph.TURNS:
            turns.invoke({"messages": [("user", prompt)]},
                         {**langgraph.config(TWO_TURNS), "metadata": metadata})  # fmt: skip


def _newest_root(path: Path, thread: str) -> tuple[int, str]:
    """The rowid and id of ``thread``'s newest checkpoint of the root namespace."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        found: tuple[int, str] = db.execute(
            "SELECT rowid, checkpoint_id FROM checkpoints WHERE thread_id = ? AND "
            "checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1", (thread,)
        ).fetchone()  # fmt: skip
    return found


def test_X1_a_langgraph_thread_whose_metadata_is_too_long_is_listed_loaded_and_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """A run given a long ``config["metadata"]`` (a document attached to it): every checkpoint
    of its thread holds it. The database is listed (that thread by its id alone), the thread
    loads from its newest checkpoint with its metadata left out and a warning naming the
    thread, the other thread as before, and a scan of the folder is a row per thread."""
    plain, folder = tmp_path / "plain.sqlite", tmp_path / "runs"
    folder.mkdir()
    path = folder / "memory.sqlite"
    _checkpointed(plain, {})
    _checkpointed(path, {"attachment": "x" * (2 * LIMIT)})
    whole = {thread: turnfold.load(plain, sample=thread) for thread in (TOOL_ERROR, TWO_TURNS)}
    lower_limit(monkeypatch)

    from turnfold.formats.frameworks import langgraph_checkpoints

    assert list(langgraph_checkpoints.sessions(path)) == [
        (TOOL_ERROR, "thread calculator"), (TWO_TURNS, "thread")]  # fmt: skip
    transcript = turnfold.load(path, sample=TWO_TURNS)
    rowid, checkpoint_id = _newest_root(path, TWO_TURNS)
    size = _length(path, "checkpoints", rowid, "metadata")
    assert [w.reason for w in transcript.warnings] == [
        f"thread {TWO_TURNS}: checkpoints row {rowid} (checkpoint_id {checkpoint_id}): its "
        f"metadata of {size:,} bytes, over the limit of {LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); "
        "left out (the checkpoint's step, source and agent's name are not shown)"
    ]  # fmt: skip
    assert transcript.warnings[0].source == str(path)
    assert shown(transcript.entries) == shown(whole[TWO_TURNS].entries)
    assert transcript.metadata["checkpoint_id"] == checkpoint_id
    assert "agent" not in transcript.metadata
    assert "step" not in transcript.metadata
    assert whole[TWO_TURNS].metadata["agent"] == "calculator"
    other = turnfold.load(path, sample=TOOL_ERROR)
    assert shown(other.entries) == shown(whole[TOOL_ERROR].entries)
    assert [w.reason for w in other.warnings] == [w.reason for w in whole[TOOL_ERROR].warnings]
    assert other.metadata["agent"] == "calculator"

    frame = turnfold.scan(folder, cache=False, workers=1).to_pandas().set_index("key")
    assert sorted(frame.index) == [f"{path}#{TOOL_ERROR}", f"{path}#{TWO_TURNS}"]
    assert frame["error"].isna().all()
    assert frame.loc[f"{path}#{TWO_TURNS}", ["tool_calls", "warnings"]].tolist() == [2, 1]
    assert frame.loc[f"{path}#{TOOL_ERROR}", "tool_calls"] == 2


def test_X1_a_subgraph_s_metadata_too_long_costs_it_only_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """The agent a tool ran (its checkpoints under ``tools:<task id>``): its newest
    checkpoint's metadata lengthened, it still nests under its call, unnamed, with a warning
    naming the thread and the namespace."""
    path = tmp_path / "checkpoints.sqlite"
    shutil.copyfile(langgraph.FIXTURE, path)
    whole = turnfold.load(path, sample=langgraph.AGENT_TOOL)
    with writable(path) as db:
        rowid, namespace, checkpoint_id = db.execute(
            "SELECT rowid, checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ? "
            "AND checkpoint_ns != '' ORDER BY checkpoint_id DESC LIMIT 1",
            (langgraph.AGENT_TOOL,),
        ).fetchone()  # fmt: skip
        db.execute("UPDATE checkpoints SET metadata = metadata || ? WHERE rowid = ?",
                   (PADDING, rowid))  # fmt: skip
    lower_limit(monkeypatch)
    transcript = turnfold.load(path, sample=langgraph.AGENT_TOOL)
    size = _length(path, "checkpoints", rowid, "metadata")
    assert [w.reason for w in transcript.warnings] == [
        f"thread {langgraph.AGENT_TOOL}, namespace {namespace}: checkpoints row {rowid} "
        f"(checkpoint_id {checkpoint_id}): its metadata of {size:,} bytes, over the limit of "
        f"{LIMIT:,} (TURNFOLD_MAX_RECORD_BYTES); left out (the checkpoint's step, source and "
        "agent's name are not shown)"
    ]  # fmt: skip
    (call,) = [c for c in transcript.tool_calls() if c.subagent is not None]
    (was,) = [c for c in whole.tool_calls() if c.subagent is not None]
    assert call.call_id == was.call_id
    assert (call.subagent.name, was.subagent.name) == (None, "helper")  # type: ignore[union-attr]
    assert shown(call.subagent.transcript.entries) == shown(was.subagent.transcript.entries)  # type: ignore[union-attr]
    assert shown(transcript.entries) == shown(whole.entries)


def test_X1_an_earlier_messages_write_too_long_to_read_is_warned_of_and_the_thread_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """The search for the writes that removed messages (a summarised history) asked SQLite to
    look inside every ``messages`` write, and one over the limit refused the thread: it is now
    skipped with a warning naming its row, the thread read whole from its newest checkpoint."""
    path = tmp_path / "checkpoints.sqlite"
    shutil.copyfile(langgraph.FIXTURE, path)
    whole = turnfold.load(path, sample=TWO_TURNS)
    newest = _newest_root(path, TWO_TURNS)[1]
    with writable(path) as db:
        (rowid,) = db.execute(
            "SELECT rowid FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND "
            "channel = 'messages' AND checkpoint_id < ? ORDER BY checkpoint_id LIMIT 1",
            (TWO_TURNS, newest),
        ).fetchone()  # fmt: skip
        db.execute("UPDATE writes SET value = value || ? WHERE rowid = ?", (PADDING, rowid))
    lower_limit(monkeypatch)
    transcript = turnfold.load(path, sample=TWO_TURNS)
    said = skipped(path, "writes", rowid, "value", "checkpoint_id")
    assert [w.reason for w in transcript.warnings] == [
        f"thread {TWO_TURNS}: {said}: the messages it removed, if any, are not shown"
    ]
    assert transcript.entries == whole.entries


# --- OpenCode, Crush: a session's long title ----------------------------------------------------


def test_X1_an_opencode_session_whose_title_is_too_long_is_listed_loaded_and_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """OpenCode's committed database (the real opencode wrote it): the session's title
    lengthened. The listing read every title whole (and refused the database); the session is
    now listed by its id and read with its title clipped, a warning naming the row (Crush's
    own test: ``test_crush.py``)."""
    from turnfold.formats.agents import opencode

    source = FIXTURES / "opencode" / "work" / "opencode.db"
    folder = tmp_path / "work"
    folder.mkdir()
    path = folder / "opencode.db"
    shutil.copyfile(source, path)
    whole = turnfold.load(source)
    with writable(path) as db:
        rowid, session_id, title = db.execute(
            "SELECT rowid, id, title FROM session WHERE parent_id IS NULL").fetchone()  # fmt: skip
        db.execute("UPDATE session SET title = title || ? WHERE rowid = ?", (PADDING, rowid))
    lower_limit(monkeypatch)
    assert list(opencode.sessions(path)) == [(session_id, "session")]
    transcript = turnfold.load(path)
    assert [w.reason for w in transcript.warnings] == [
        _clipped(path, "session", rowid, session_id, "title", "id")]  # fmt: skip
    assert transcript.metadata["title"] == (title + PADDING)[: databases.CLIPPED_BYTES]
    assert shown(transcript.entries) == shown(whole.entries)
    frame = turnfold.scan(folder, cache=False, workers=1).to_pandas()
    assert frame["key"].tolist() == [f"{path}#{session_id}"]
    assert frame["error"].isna().all()
    assert frame["warnings"].tolist() == [1]


# --- MLflow's tracking store: a trace's long tag or metadata value -----------------------------


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MLflow's default SQLite store as the real mlflow left it, its recipe's session of two
    traces played against a scripted server."""
    pytest.importorskip("mlflow")
    folder = tmp_path_factory.mktemp("mlflow")
    mlflow_recipe.run(folder)
    return folder / "mlflow.db"


def test_X1_an_mlflow_trace_s_long_tag_and_metadata_value_are_left_out_with_warnings(
    mlflow_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """The first trace's inputs (``mlflow.traceInputs``, a metadata value: a long request)
    and a tag of it (``mlflow.artifactLocation``) lengthened: every metadata and tag value was
    read whole, and the store refused. Now the conversation is listed and read as before, each
    long value left out with a warning naming its trace, and a scan is its row."""
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "mlflow.db"
    shutil.copyfile(mlflow_store, path)
    whole = turnfold.load(mlflow_store, sample=mlflow_recipe.SESSION)
    with writable(path) as db:
        first = db.execute("SELECT request_id FROM trace_info ORDER BY timestamp_ms").fetchone()[0]
        meta, tag = (
            db.execute(f"SELECT rowid FROM {table} WHERE request_id = ? AND key = ?",
                       (first, key)).fetchone()[0]
            for table, key in (("trace_request_metadata", "mlflow.traceInputs"),
                               ("trace_tags", "mlflow.artifactLocation"))
        )  # fmt: skip
        db.execute("UPDATE trace_request_metadata SET value = value || ? WHERE rowid = ?",
                   (PADDING, meta))  # fmt: skip
        db.execute("UPDATE trace_tags SET value = value || ? WHERE rowid = ?", (PADDING, tag))
    lower_limit(monkeypatch)
    from turnfold.formats.traces import mlflow

    assert list(mlflow.sessions(path)) == list(mlflow.sessions(mlflow_store))
    transcript = turnfold.load(path, sample=mlflow_recipe.SESSION)
    assert [w.reason for w in transcript.warnings] == [
        skipped(path, "trace_request_metadata", meta, "value", "request_id"),
        skipped(path, "trace_tags", tag, "value", "request_id"),
        *(w.reason for w in whole.warnings),
    ]
    assert transcript.entries == whole.entries
    frame = turnfold.scan(folder, cache=False, workers=1).to_pandas()
    assert frame["key"].tolist() == [f"{path}#{mlflow_recipe.SESSION}"]
    assert frame["error"].isna().all()
