"""How a background task ended, in Claude Code's stream-json and the Claude Agent SDK (F-7).

A call launched in the background (an ``Agent``'s ``async_launched`` result, a ``Bash``
command's ``backgroundTaskId``) only says it started; ``system/task_notification``'s
``status`` (``completed`` / ``failed`` / ``stopped``) says how it ended, as the session
file's ``<task-notification>`` does for Claude Code's own reader. The fixtures are real runs,
each against a scripted model on 127.0.0.1: ``claude -p`` 2.1.337 with a background agent
stopped by ``TaskStop`` (``background_agent_stopped_recipe.txt``), ``claude -p`` 2.1.337 with
two background commands, one failing, one stopped (``background_commands_recipe.txt``), and
the Claude Agent SDK 0.2.190 (CLI 2.1.337) with a background agent that completed
(tests/formats/claude_agent_sdk_runs.py). Where a test changes a real run's event, it says
which.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.claude_background_runs import agent_call, read_events, write_events
from turnfold.formats.agents.claude_stream import StreamReader, subagent_usage
from turnfold.formats.frameworks import claude_agent_sdk
from turnfold.formats.source import open_source
from turnfold.model import Transcript
from turnfold.render.viewmodel import build_view_model, iter_nodes

FIXTURES = Path(__file__).parents[1] / "fixtures"
STREAM = FIXTURES / "agents" / "claude-stream-json"
STOPPED = STREAM / "claude-code_v2.1.337_stream-json_background-agent-stopped.jsonl"
COMMANDS = STREAM / "claude-code_v2.1.337_stream-json_background-commands.jsonl"
SDK = (
    FIXTURES
    / "frameworks"
    / "claude-agent-sdk"
    / "claude-agent-sdk_v0.2.190_asdict_cli-subagent.json"
)


def _lines(transcript: Transcript) -> list[str]:
    """The F-7 lines the view model gives every renderer."""
    lines: list[str] = []
    for node in iter_nodes(build_view_model(transcript)):
        item: Mapping[str, Any] = node
        agent = item.get("subagent")
        if item.get("kind") == "tool" and agent and agent["line"]:
            lines.append(agent["line"])
    return lines


def _follow(path: Path) -> tuple[list[tuple[int, str]], Transcript]:
    """The stream fed live, event by event: the agent call's status after each event that
    has one, and the transcript once the stream ends (its sub-agent's tokens read as a load
    reads them)."""
    source, _ = open_source(path)
    reader = StreamReader(source, live=True)
    seen: list[tuple[int, str]] = []
    for line, record in source.records():
        reader.feed(record, line)
        found = [c for c in reader.main.transcript.tool_calls() if c.call_id == "toolu_1"]
        if found:
            seen.append((line, found[0].status))
    transcript = reader.finish()
    subagent_usage(transcript)
    return seen, transcript


def test_F7_a_stopped_background_agent_is_cancelled_loaded_and_followed() -> None:
    """Its launch's result (line 5) says it started; its notification (line 10) that it was
    stopped. Live, it runs until then; loaded and followed, it ends ``cancelled`` (✖)."""
    notified = read_events(STOPPED)[9]
    assert (notified["subtype"], notified["status"]) == ("task_notification", "stopped")
    transcript = turnfold.load(STOPPED)
    assert transcript.warnings == []
    call = agent_call(transcript)
    assert (call.status, call.meta) == ("cancelled", {"background": True})
    assert _lines(transcript) == ["✖ general-purpose: sub task · 1 tool · 1.7s · 5 tokens"]
    seen, live = _follow(STOPPED)
    assert {status for line, status in seen if 5 <= line < 10} == {"executing"}
    assert {status for line, status in seen if line >= 10} == {"cancelled"}
    assert live.dump() == transcript.dump()


@pytest.mark.parametrize(
    ("status", "outcome", "glyph"),
    [("completed", "success", "✔"), ("failed", "error", "✖"), ("stopped", "cancelled", "✖")],
)
def test_F7_a_background_agent_s_notified_status_is_its_outcome(
    status: str, outcome: str, glyph: str, tmp_path: Path
) -> None:
    """The real stream with its notification's ``status`` changed (line 10): each reads as
    Claude Code's session reader reads the same ``<status>``."""
    events = read_events(STOPPED)
    events[9]["status"] = status
    transcript = turnfold.load(write_events(events, tmp_path / "stream.jsonl"))
    assert transcript.warnings == []
    assert agent_call(transcript).status == outcome
    (line,) = _lines(transcript)
    assert line.startswith(f"{glyph} general-purpose: sub task")


def test_F7_a_status_not_known_is_warned_about_and_the_outcome_is_unknown(tmp_path: Path) -> None:
    events = read_events(STOPPED)
    events[9]["status"] = "paused"
    transcript = turnfold.load(write_events(events, tmp_path / "stream.jsonl"))
    assert [(w.reason, w.line) for w in transcript.warnings] == [
        ("task_notification: status 'paused' is not one known: its call's outcome is unknown", 10)
    ]
    assert agent_call(transcript).status == "unknown"


def test_F7_a_background_agent_without_its_notification_did_not_end_as_far_as_is_known(
    tmp_path: Path,
) -> None:
    """The real stream without its ``task_updated`` and ``task_notification`` (lines 9 and
    10): the launch's success is not the agent's; its outcome is not recorded."""
    events = [e for e in read_events(STOPPED) if e.get("subtype") not in
              ("task_updated", "task_notification")]  # fmt: skip
    transcript = turnfold.load(write_events(events, tmp_path / "stream.jsonl"))
    assert agent_call(transcript).status == "unknown"
    assert not _lines(transcript)[0].startswith("✔")


def test_F7_background_commands_end_as_their_notifications_say() -> None:
    """``local_bash`` tasks are reported as agents are: ``sleep 0.5; exit 3`` failed
    (``error``, its summary after the launch's result, as the session file's
    ``<task-notification>`` adds it), ``sleep 30`` was stopped by ``TaskStop``
    (``cancelled``); each lasted the notification's own ``duration_ms`` (557, 2090). The
    foreground ``sleep 2`` is its result's."""
    kinds = [(e.get("task_type"), e.get("status")) for e in read_events(COMMANDS)
             if e.get("subtype") in ("task_started", "task_notification")]  # fmt: skip
    assert kinds == [("local_bash", None), ("local_bash", None), (None, "failed"),
                     (None, "stopped")]  # fmt: skip
    transcript = turnfold.load(COMMANDS)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status, c.duration_ms) for c in calls] == [
        ("Bash", "error", 557.0),
        ("Bash", "cancelled", 2090.0),
        ("Bash", "success", None),
        ("TaskStop", "success", None),
    ]
    failed = calls[0].result
    assert failed is not None
    assert failed.text is not None
    assert failed.text.startswith("Command running in background with ID: be0zlpa00.")
    assert failed.text.endswith('\nBackground command "fail later" failed with exit code 3')


def test_A2_background_commands_followed_end_as_loaded() -> None:
    """Live, a command runs as its launch left it until its notification, then ends as the
    load ends it (the summary added once)."""
    seen, live = _follow(COMMANDS)
    assert {status for line, status in seen if line < 5} == {"executing"}
    assert {status for line, status in seen if 5 <= line < 12} == {"success"}
    assert {status for line, status in seen if line >= 12} == {"error"}
    assert live.dump() == turnfold.load(COMMANDS).dump()


def test_A1_the_sdk_s_failed_background_agent_is_an_error_loaded_and_followed(
    tmp_path: Path,
) -> None:
    """The SDK's saved messages (CLI 2.1.337) with the notification's ``status`` changed to
    ``failed`` (message 17): the agent's call is an error, loaded and followed alike; as
    saved (``completed``), a success."""
    messages = json.loads(SDK.read_text(encoding="utf-8"))
    assert agent_call(turnfold.load(SDK)).status == "success"
    at = next(i for i, m in enumerate(messages) if m.get("subtype") == "task_notification")
    assert messages[at]["data"]["status"] == messages[at]["status"] == "completed"
    messages[at]["data"]["status"] = messages[at]["status"] = "failed"
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    loaded = turnfold.load(path)
    assert loaded.warnings == []
    assert agent_call(loaded).status == "error"
    live = Transcript()
    follower = claude_agent_sdk.Follower(live)
    for message in messages[:at]:
        follower.feed(message)
    assert agent_call(live).status == "executing"
    for message in messages[at:]:
        follower.feed(message)
    follower.close()
    assert agent_call(live).status == "error"
    assert live.dump() == loaded.dump()
