"""Codex's ``wait``: what it waits on decides where it is counted (spec F-2, P-6, C-2).

Codex has had two tools named ``wait`` (openai/codex, codex-rs):

- the first multi-agent tools' (``tools/spec.rs`` ``create_wait_tool``: ``ids`` — "Agent ids to
  wait on" — and ``timeout_ms``), which waits on agents and became ``wait_agent`` (the
  ``multi_agent_v1`` namespace's, ``targets``): both are coordination, counted with
  ``send_message`` and ``list_agents``, never as a sub-agent run;
- code mode's (``codex_code_mode::WAIT_TOOL_NAME``: ``cell_id``, ``yield_time_ms``,
  ``max_tokens``, ``terminate``), which waits on an ``exec`` cell that yielded and returns what
  the script printed next: a command, as ``exec`` is.

The rollout is written here in the shapes Codex records (no real code-mode rollout was at
hand): ``exec`` a ``custom_tool_call``, ``wait`` a ``function_call`` whose output starts with the
cell's header (``Script running with cell ID 8`` / ``Script completed``, ``Wall time``,
``Output:``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import turnfold
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings
from turnfold.tools import tool_category

SCRIPT = (
    'const r = await tools.exec_command({cmd: "pytest -q"});\n'
    'console.log("exit_code: " + r.exit_code);'
)


def _line(kind: str, payload: dict[str, Any], second: int) -> str:
    stamp = f"2026-05-12T10:00:{second:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload})


def _rollout(tmp_path: Path, *, agents: bool = True) -> Path:
    """A turn that runs a script, waits on its cell, then (``agents``) waits on agents."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "c1",
                           "name": "exec", "input": SCRIPT}),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c1",
                           "output": "Script running with cell ID 8\nWall time 11.0 seconds\n"
                                     "Output:\n"}),
        ("response_item", {"type": "function_call", "name": "wait", "call_id": "c2",
                           "arguments": json.dumps({"cell_id": "8", "yield_time_ms": 10000})}),
        ("response_item", {"type": "function_call_output", "call_id": "c2",
                           "output": "Script completed\nWall time 4.2 seconds\nOutput:\n"
                                     "5 passed in 0.1s\nexit_code: 0\n"}),
    ]  # fmt: skip
    calls += [
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
    ] if agents else []  # fmt: skip
    records = [
        ("session_meta", {"id": "019c0de0-0000-7000-8000-0000000000f1", "cwd": "/repo",
                          "timestamp": "2026-05-12T10:00:00.000Z", "originator": "codex_cli_rs",
                          "cli_version": "0.171.0", "source": "cli"}),
        ("turn_context", {"turn_id": "t", "cwd": "/repo", "model": "gpt-5.2-codex"}),
        ("event_msg", {"type": "task_started"}),
        ("event_msg", {"type": "user_message", "message": "Run the tests", "images": []}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "Run the tests"}]}),
        *calls,
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "All 5 tests pass."}]}),
    ]  # fmt: skip
    path = tmp_path / "rollout-2026-05-12T10-00-00-019c0de0-0000-7000-8000-0000000000f1.jsonl"
    text = "".join(_line(kind, payload, n) + "\n" for n, (kind, payload) in enumerate(records))
    path.write_text(text, encoding="utf-8")
    return path


def test_F2_code_mode_s_wait_is_the_script_s_command_an_agents_wait_is_coordination(
    tmp_path: Path,
) -> None:
    transcript = turnfold.load(_rollout(tmp_path))
    assert transcript.warnings == []
    shown = [(c.name, c.description, c.status, tool_category(c.name))
             for c in transcript.tool_calls()]  # fmt: skip
    assert shown == [
        ("exec", "pytest -q", "unknown", "command"),  # yielded: still running
        ("exec wait", "cell 8", "success", "command"),  # the script printed exit_code: 0
        ("wait", None, "success", "other"),
        ("wait_agent", None, "success", "other"),
    ]
    _, cell, agents, _ = transcript.tool_calls()
    assert cell.meta["tool"] == "wait"  # the tool's own name is kept
    assert cell.args == {"cell_id": "8", "yield_time_ms": 10000}
    assert cell.result is not None
    assert "5 passed in 0.1s" in (cell.result.text or "")
    assert agents.subagent is None  # a wait on agents runs none


def test_P6_a_script_and_the_waits_on_its_cell_are_titled_as_commands(tmp_path: Path) -> None:
    transcript = turnfold.load(_rollout(tmp_path, agents=False))
    plain = build_view_model(transcript, DisplaySettings(locale="en"))
    (turn,) = [node for node in plain["nodes"] if node["kind"] == "turn"]
    groups = [node for node in turn["process"]["children"] if node["kind"] == "group"]
    assert [(g["title"], g["count"]) for g in groups] == [("Ran commands", "2 operations")]
    # With the waits on agents: commands, then other tools.
    transcript = turnfold.load(_rollout(tmp_path))
    plain = build_view_model(transcript, DisplaySettings(locale="en"))
    (turn,) = [node for node in plain["nodes"] if node["kind"] == "turn"]
    groups = [node for node in turn["process"]["children"] if node["kind"] == "group"]
    assert [(g["title"], g["count"]) for g in groups] == [
        ("Ran commands and used tools", "4 operations")
    ]


def test_C2_the_corpus_counts_the_cell_wait_among_commands_and_no_wait_as_a_sub_agent(
    tmp_path: Path,
) -> None:
    path = _rollout(tmp_path)
    corpus = turnfold.scan([path], cache=False, workers=1)
    (row,) = corpus.rows
    assert (row["tool_calls"], row["subagents"]) == (4, 0)
    calls = corpus.tool_calls().to_pylist()
    assert [(c["name"], c["category"]) for c in calls] == [
        ("exec", "command"), ("exec wait", "command"), ("wait", "other"), ("wait_agent", "other")
    ]  # fmt: skip
