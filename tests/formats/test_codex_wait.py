"""Codex's ``wait``: what it waits on decides where it is counted (spec F-2, P-6, C-2).

Codex has had two tools named ``wait`` (openai/codex, codex-rs):

- code mode's (``codex_code_mode::WAIT_TOOL_NAME``: ``cell_id``, ``yield_time_ms``,
  ``max_tokens``, ``terminate``), which waits on an ``exec`` cell that yielded and returns what
  the script printed next: a command, as ``exec`` is;
- the first multi-agent tools' (``tools/spec.rs`` ``create_wait_tool``: ``ids`` — "Agent ids to
  wait on" — and ``timeout_ms``), which waits on agents and became ``wait_agent`` (the
  ``multi_agent_v1`` namespace's, ``targets``): both are coordination, counted with
  ``send_message`` and ``list_agents``, never as a sub-agent run.

Code mode is read from a rollout of the **real** Codex CLI 0.171.0
(``tests/fixtures/codex/v0.171_cells-and-processes_recipe.py``, ``[features] code_mode =
true``), and the same run's ``codex exec --json`` stdout. Codex 0.171 offers no ``wait`` on
agent ``ids`` any more (its ``wait`` is code mode's), so that older shape is written here by
hand, in the shapes the rollout records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import turnfold
from turnfold.model import ToolCall
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings
from turnfold.tools import tool_category

FIXTURES = Path(__file__).parents[1] / "fixtures"
CODE_MODE = FIXTURES / "codex" / "v0.171_code-mode.jsonl"
CODE_MODE_STDOUT = (
    FIXTURES / "agents" / "codex-exec-json" / "codex_v0.171.0_exec-json_code-mode.jsonl"
)


CELL_OK = "echo TF-CELL-START; sleep 3; echo TF-CELL-END"
CELL_FAIL = "echo TF-FAIL-START; sleep 4; echo TF-FAIL-END; exit 3"
CELL_STOP = "sleep 20; echo TF-NEVER"


def _shown(calls: list[ToolCall]) -> list[tuple[str, str | None, str, str]]:
    return [(c.name, c.description, c.status, tool_category(c.name)) for c in calls]


def _nested(call: ToolCall) -> list[tuple[str, str | None, str, int | None]]:
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    inner = call.subagent.transcript.tool_calls()
    return [(c.name, c.description, c.status, c.meta.get("exit_code")) for c in inner]


def test_F2_real_code_mode_cells_and_the_waits_on_them_are_the_script_s_commands() -> None:
    transcript = turnfold.load(CODE_MODE)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    # A wait is described by the commands of the cell it waits on (as write_stdin by its
    # process's); a yielded cell has the outcome the wait that collected it read, and that
    # wait, which only collected it, is a success: a failed script counts once.
    assert _shown(calls) == [
        ("exec", CELL_OK, "success", "command"),  # yielded; its wait collected exit_code: 0
        ("exec wait", CELL_OK, "success", "command"),  # Script completed, printed exit_code: 0
        ("exec", CELL_FAIL, "error", "command"),  # yielded; its last wait collected exit_code: 3
        ("exec wait", CELL_FAIL, "unknown", "command"),  # yielded again: still running
        ("exec wait", CELL_FAIL, "success", "command"),  # collected exit_code: 3
        ("exec", CELL_STOP, "cancelled", "command"),  # a wait with terminate stopped it
        ("exec wait", CELL_STOP, "success", "command"),  # terminate: Script terminated
        ("exec", 'text("TF-BOOM-BEGIN");', "error", "command"),  # threw; calls no tool: line 1
    ]
    first, wait, *_, stop, thrown = calls
    assert wait.meta["tool"] == "wait"  # the tool's own name is kept
    assert wait.args == {"cell_id": "1", "yield_time_ms": 10000}
    assert stop.args == {"cell_id": "3", "terminate": True}
    assert wait.result is not None
    assert "exit_code: 0\nTF-CELL-START\nTF-CELL-END" in (wait.result.text or "")
    assert thrown.result is not None
    assert "Script error:\nError: TF-BOOM" in (thrown.result.text or "")
    assert first.result is not None
    assert (first.result.text or "").startswith("Script running with cell ID 1\n")


def test_F2_real_code_mode_nests_each_command_under_the_cell_that_ran_it() -> None:
    """Codex 0.171 records a script's commands only as ``item_completed`` ``CommandExecution``
    items (``exec-<uuid>``), written while the ``wait`` runs; the stopped cell's one ends (-1,
    killed with its cell: stopped, not failed) after the next cell already ran, and still
    belongs to the cell whose script runs it."""
    calls = turnfold.load(CODE_MODE).tool_calls()
    cells = [c for c in calls if c.name == "exec"]
    assert [_nested(c) for c in cells[:3]] == [
        [("exec_command", "echo TF-CELL-START; sleep 3; echo TF-CELL-END", "success", 0)],
        [("exec_command", "echo TF-FAIL-START; sleep 4; echo TF-FAIL-END; exit 3", "error", 3)],
        [("exec_command", "sleep 20; echo TF-NEVER", "cancelled", -1)],
    ]
    assert cells[3].subagent is None  # the script that threw ran no command
    # No F-7 sub-agent line: a cell is a command, not an agent's run (C-2).
    assert [c.subagent.is_run for c in cells[:3] if c.subagent is not None] == [False] * 3
    assert cells[1].subagent is not None
    assert cells[1].subagent.transcript is not None
    (failed,) = cells[1].subagent.transcript.tool_calls()
    assert failed.result is not None
    assert failed.result.text == "TF-FAIL-START\nTF-FAIL-END\n"
    assert failed.duration_ms is not None
    assert failed.duration_ms > 3000


def test_L3_a_yielded_cell_has_the_outcome_its_wait_collected_and_points_at_that_wait() -> None:
    """A cell that yielded (``Script running with cell ID 1``) read "Finished, outcome not
    recorded": its script's end is in the answer of the ``wait`` that collected it."""
    calls = turnfold.load(CODE_MODE).tool_calls()
    cells = {c.call_id: c for c in calls if c.name == "exec"}
    collected = {cell: c.meta.get("collected_by") for cell, c in cells.items()}
    assert collected == {
        "call_cell1": "call_wait1",
        "call_cell2": "call_wait3",  # not call_wait2, which found it still running
        "call_cell3": "call_wait4",  # the terminate
        "call_cell4": None,  # it never yielded
    }
    first = cells["call_cell1"]
    assert first.result is not None
    text = first.result.text or ""
    # What the model was given stays as recorded; the wait that collected it is named.
    assert text == "Script running with cell ID 1\nWall time 1.0 seconds\nOutput:\n\nTF-CELL-BEGIN"
    assert first.meta["collected_by"] == "call_wait1"
    assert not any("still_running" in c.meta for c in cells.values())


def test_L3_a_wait_that_found_its_cell_still_running_says_so() -> None:
    plain = build_view_model(turnfold.load(CODE_MODE), DisplaySettings(locale="en"))
    (turn,) = [node for node in plain["nodes"] if node["kind"] == "turn"]
    (group,) = [node for node in turn["process"]["children"] if node["kind"] == "group"]
    rows = [row for b in group["children"] if b["kind"] == "batch" for row in b["rows"]]
    assert [(r["name"], r["status_label"]) for r in rows] == [
        ("exec", None),  # Done: the wait collected exit_code: 0
        ("exec wait", None),
        ("exec", "Failed"),
        ("exec wait", "Still running"),  # not "Finished, outcome not recorded"
        ("exec wait", None),
        ("exec", "Cancelled"),
        ("exec wait", None),
        ("exec", "Failed"),
    ]
    zh = build_view_model(turnfold.load(CODE_MODE), DisplaySettings(locale="zh"))
    (turn,) = [node for node in zh["nodes"] if node["kind"] == "turn"]
    (group,) = [node for node in turn["process"]["children"] if node["kind"] == "group"]
    rows = [row for b in group["children"] if b["kind"] == "batch" for row in b["rows"]]
    assert rows[3]["status_text"] == "仍在运行"


def test_F2_the_same_run_s_exec_json_shows_the_commands_the_cells_ran() -> None:
    """``codex exec --json`` prints no cell and no wait: the commands the scripts ran, as
    ``command_execution`` items; the stopped cell's command never completes there."""
    calls = turnfold.load(CODE_MODE_STDOUT).tool_calls()
    assert [(c.name, c.description, c.status) for c in calls] == [
        ("exec_command", "echo TF-CELL-START; sleep 3; echo TF-CELL-END", "success"),
        ("exec_command", "echo TF-FAIL-START; sleep 4; echo TF-FAIL-END; exit 3", "error"),
        ("exec_command", "sleep 20; echo TF-NEVER", "unknown"),
    ]


def test_P6_real_cells_and_the_waits_on_them_are_titled_as_commands() -> None:
    transcript = turnfold.load(CODE_MODE)
    plain = build_view_model(transcript, DisplaySettings(locale="en"))
    (turn,) = [node for node in plain["nodes"] if node["kind"] == "turn"]
    groups = [node for node in turn["process"]["children"] if node["kind"] == "group"]
    assert [(g["title"], g["count"]) for g in groups] == [
        ("Thought and ran commands", "8 operations")
    ]
    rows = [row for g in groups for b in g["children"] if b["kind"] == "batch" for row in b["rows"]]
    assert [(r["name"], r["status_text"]) for r in rows][-2:] == [
        ("exec wait", "Done"),
        ("exec", "Failed"),
    ]


def _line(kind: str, payload: dict[str, Any], second: int) -> str:
    stamp = f"2026-05-12T10:00:{second:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload})


def _agent_waits(tmp_path: Path) -> Path:
    """Hand-written: the first multi-agent tools' ``wait`` on agent ``ids`` and ``wait_agent``,
    which Codex 0.171 no longer writes as ``wait``."""
    records = [
        ("session_meta", {"id": "019c0de0-0000-7000-8000-0000000000f1", "cwd": "/repo",
                          "timestamp": "2026-05-12T10:00:00.000Z", "originator": "codex_cli_rs",
                          "cli_version": "0.140.0", "source": "cli"}),
        ("turn_context", {"turn_id": "t", "cwd": "/repo", "model": "gpt-5.2-codex"}),
        ("event_msg", {"type": "task_started"}),
        ("event_msg", {"type": "user_message", "message": "Collect the helper", "images": []}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "Collect the helper"}]}),
        ("response_item", {"type": "function_call", "name": "wait", "call_id": "c3",
                           "arguments": json.dumps({"ids": ["agent-1"], "timeout_ms": 30000})}),
        ("response_item", {"type": "function_call_output", "call_id": "c3",
                           "output": json.dumps({"status": {"agent-1": {"completed": "ok"}},
                                                 "timed_out": False})}),
        ("response_item", {"type": "function_call", "name": "wait_agent", "call_id": "c4",
                           "namespace": "multi_agent_v1",
                           "arguments": json.dumps({"targets": ["agent-1"]})}),
        ("response_item", {"type": "function_call_output", "call_id": "c4",
                           "output": json.dumps({"status": {}, "timed_out": True})}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "The helper is done."}]}),
    ]  # fmt: skip
    path = tmp_path / "rollout-2026-05-12T10-00-00-019c0de0-0000-7000-8000-0000000000f1.jsonl"
    text = "".join(_line(kind, payload, n) + "\n" for n, (kind, payload) in enumerate(records))
    path.write_text(text, encoding="utf-8")
    return path


def test_F2_a_wait_on_agents_is_coordination_not_a_command(tmp_path: Path) -> None:
    transcript = turnfold.load(_agent_waits(tmp_path))
    assert transcript.warnings == []
    assert _shown(transcript.tool_calls()) == [
        ("wait", None, "success", "other"),
        ("wait_agent", None, "success", "other"),
    ]
    assert all(c.subagent is None for c in transcript.tool_calls())  # a wait on agents runs none


def test_C2_the_corpus_counts_cells_and_waits_among_commands_and_no_wait_as_a_sub_agent(
    tmp_path: Path,
) -> None:
    corpus = turnfold.scan([CODE_MODE], cache=False, workers=1)
    (row,) = corpus.rows
    # A cell holds the commands its script ran, opened under its row; it is no agent's run.
    assert (row["tool_calls"], row["subagents"]) == (8, 0)
    calls = corpus.tool_calls().to_pylist()
    assert {(c["name"], c["category"]) for c in calls} == {
        ("exec", "command"), ("exec wait", "command")
    }  # fmt: skip
    corpus = turnfold.scan([_agent_waits(tmp_path)], cache=False, workers=1)
    (row,) = corpus.rows
    assert (row["tool_calls"], row["subagents"]) == (2, 0)
    calls = corpus.tool_calls().to_pylist()
    assert [(c["name"], c["category"]) for c in calls] == [
        ("wait", "other"),
        ("wait_agent", "other"),
    ]
