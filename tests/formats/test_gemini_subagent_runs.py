"""Gemini CLI sub-agent runs recorded before the parent's calls named them (spec L-2.4, H-5).

Before Gemini CLI 0.38 (google-gemini/gemini-cli#25092) a tool call record had no ``agentId``:
the child session ``chats/<sessionId>/<id>.json`` is named by the executor's own random id
(``Math.random().toString(36).slice(2, 8)``, ``local-executor.ts``), which the parent never
records. The fixture is hand-made in the shape of real sessions of that time (a public
repository whose licence does not allow copying them; tests/fixtures/SOURCES.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import turnfold
from turnfold.model import ToolCall, Transcript

FOLDER = Path(__file__).parents[1] / "fixtures" / "gemini" / "subagent-before-agent-id"
SESSION_ID = "7c1e2f40-9a3b-4d5e-8f60-1a2b3c4d5e6f"
SESSION = FOLDER / "session-2026-04-13T18-00-7c1e2f40.json"


def _agents(transcript: Transcript) -> dict[str, ToolCall]:
    return {c.name: c for c in transcript.tool_calls() if c.subagent is not None}


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FOLDER, tmp_path / "chats")
    return tmp_path / "chats"


def test_H5_a_call_that_names_no_agent_id_gets_the_run_given_its_task() -> None:
    transcript = turnfold.load(SESSION)
    assert transcript.warnings == []
    agents = _agents(transcript)
    assert sorted(agents) == ["codebase_investigator", "save_memory"]
    investigator = agents["codebase_investigator"].subagent
    assert investigator is not None
    assert investigator.transcript is not None
    assert (investigator.agent_id, investigator.tool_count) == ("twynek", 1)
    assert investigator.duration_ms == 114_900.0  # the run's start to its last update
    # A run cancelled midway says no "Subagent … finished": its progress display marks it.
    memory = agents["save_memory"]
    assert memory.status == "cancelled"
    assert memory.subagent is not None
    assert memory.subagent.task == "Remember that the vault documentation is incorrect."
    assert memory.subagent.agent_id == "xb7gtb"
    assert memory.subagent.transcript is not None


def test_H5_a_run_no_call_gave_its_task_is_said(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    stray = json.loads((folder / SESSION_ID / "twynek.json").read_text())
    stray["sessionId"] = "q0z9k2"
    stray["messages"][0]["content"][0]["text"] = "Summarize the session for the changelog."
    (folder / SESSION_ID / "q0z9k2.json").write_text(json.dumps(stray))
    transcript = turnfold.load(folder / SESSION.name)
    assert [w.reason for w in transcript.warnings] == [
        f"1 sub-agent session(s) in {SESSION_ID}/ not linked to a tool call"
    ]
    assert _agents(transcript)["codebase_investigator"].subagent.agent_id == "twynek"  # type: ignore[union-attr]


def test_H5_a_run_that_started_after_the_call_was_recorded_is_not_its_run(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / SESSION_ID / "twynek.json"
    late = json.loads(path.read_text())
    late["startTime"] = "2026-04-13T18:05:00.000Z"  # the call was recorded at 18:02
    late["lastUpdated"] = "2026-04-13T18:05:30.000Z"
    path.write_text(json.dumps(late))
    transcript = turnfold.load(folder / SESSION.name)
    investigator = _agents(transcript)["codebase_investigator"].subagent
    assert investigator is not None
    assert (investigator.transcript, investigator.agent_id) == (None, None)
    assert len(transcript.warnings) == 1
