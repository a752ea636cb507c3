"""Sources of many sessions made by the real tools, for the tests of picking one of them
(spec §10, L-4) and of the command line's key of the first (W-6): the committed databases
(tests/fixtures/SOURCES.md), an OpenCode database of two sessions made of the two committed
ones (each written by OpenCode itself, one's rows copied into the other), and MLflow's store
written by the real ``mlflow`` (its recipe, offline), one of its two traces given a session of
its own."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

from tests.fixtures.traces.mlflow import mlflow_recipe
from turnfold.formats.traces import mlflow

FIXTURES = Path(__file__).parents[1] / "fixtures"
FRAMEWORKS = FIXTURES / "frameworks"
CRUSH = FIXTURES / "crush" / "quay" / ".crush" / "crush.db"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
#: A second OpenCode database, of one session, written by OpenCode (its interrupted run).
OPENCODE_OTHER = FIXTURES / "opencode" / "interrupt" / "opencode.db"
ADK = FRAMEWORKS / "adk" / "adk_v2.13.0_databasesessionservice.db"
AGNO = FRAMEWORKS / "agno" / "agno_v3.1.10_sqlitedb.db"
AGENTS_SDK = FRAMEWORKS / "openai-agents" / "openai-agents_v0.24.0_sqlitesession.db"
LANGGRAPH = FRAMEWORKS / "langchain" / "langgraph_v1.2.24_sqlitesaver_checkpoints.sqlite"
BATCH_OUTPUT = FIXTURES / "datasets" / "openai-3.57.0_batch_chat_output.jsonl"


def opencode_of_two(folder: Path) -> Path:
    """OpenCode's database holding two top-level sessions: the committed one, and the rows of
    the other committed database (its project, session, messages and parts) copied in."""
    path = folder / "opencode.db"
    shutil.copyfile(OPENCODE, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("ATTACH DATABASE ? AS other", (str(OPENCODE_OTHER),))
        for table in ("project", "session", "message", "part"):
            db.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM other.{table}")
    return path


def mlflow_of_two(folder: Path) -> Path:
    """MLflow's default store as the real ``mlflow`` writes it (the recipe's two traces of one
    session), the second trace moved to a session of its own: two conversations."""
    mlflow_recipe.run(folder)
    store = folder / "mlflow.db"
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        (second,) = db.execute(
            "SELECT request_id FROM trace_info ORDER BY timestamp_ms LIMIT 1 OFFSET 1"
        ).fetchone()
        # The session is the trace's metadata, and (MLflow 3.x) a column of its own.
        db.execute("UPDATE trace_request_metadata SET value = 'TF-OTHER' WHERE request_id = ? "
                   "AND key = ?", (second, mlflow.SESSION))  # fmt: skip
        db.execute("UPDATE trace_info SET session_id = 'TF-OTHER' WHERE request_id = ?", (second,))
    return store
