"""An OpenCode response cut off with its process (spec P-7): the interrupt fixture is a real
run stopped mid-call by the agent harness (``tests/agents``), which left the assistant message
with no ``time.completed``, no ``finish`` and no ``error``."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import turnfold
from turnfold.formats.agents import opencode
from turnfold.model import AbortMarker, Transcript
from turnfold.process import Turn, project

HERE = Path(__file__).parent.parent / "fixtures" / "opencode"
INTERRUPT, WORK = HERE / "interrupt", HERE / "work"


def _statuses(transcript: Transcript) -> list[str]:
    return [node.header.status for node in project(transcript) if isinstance(node, Turn)]


def test_a_response_cut_off_with_its_process_reads_stopped() -> None:
    for path in (INTERRUPT / "opencode.db", INTERRUPT / "export.json"):
        transcript = turnfold.load(path)
        assert _statuses(transcript) == ["stopped"], path
        marker = transcript.entries[-1]
        assert isinstance(marker, AbortMarker)
        assert marker.reason == opencode.UNFINISHED
        # The call it was running keeps no invented outcome, and its output so far (L-3).
        [call] = transcript.tool_calls()
        assert (call.name, call.status) == ("bash", "unknown")
        assert (call.result.text or "").strip() == "TF-SLOW-START" if call.result else False


def test_finished_responses_are_not_marked(tmp_path: Path) -> None:
    transcript = turnfold.load(WORK / "opencode.db")
    assert _statuses(transcript) == ["completed", "completed"]
    assert not any(isinstance(e, AbortMarker) for e in transcript.entries)
    # A response that ended with a recorded finish but no completion time (not seen written,
    # but a finish reason is a record of its end) is no stop either.
    path = tmp_path / "opencode.db"
    shutil.copyfile(WORK / "opencode.db", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE message SET data = json_remove(data, '$.time.completed') "
                   "WHERE json_extract(data, '$.role') = 'assistant'")  # fmt: skip
    db.close()
    assert _statuses(turnfold.load(path)) == ["completed", "completed"]


def test_a_recorded_abort_is_said_once(tmp_path: Path) -> None:
    """The user's abort (``MessageAbortedError``) is the stop's one marker, its own words."""
    path = tmp_path / "opencode.db"
    shutil.copyfile(INTERRUPT / "opencode.db", path)
    error = {"name": opencode.ABORTED_ERROR, "data": {"message": "The operation was aborted."}}
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE message SET data = json_set(data, '$.error', json(?)) "
            "WHERE json_extract(data, '$.role') = 'assistant'",
            (json.dumps(error),),
        )
    db.close()
    transcript = turnfold.load(path)
    markers = [e for e in transcript.entries if isinstance(e, AbortMarker)]
    assert [m.reason for m in markers] == ["The operation was aborted."]
    assert _statuses(transcript) == ["stopped"]
