"""A sub-agent's duration in Claude Code's stream-json and the Claude Agent SDK (spec F-7, L-3).

The CLI's task events record a sub-agent's run: ``system/task_notification`` its
``usage.duration_ms``; from CLI 2.1.337 ``task_started`` its ``written_at`` and the
``background_tasks_changed`` list its ``start_time``, beside ``task_updated``'s
``patch.end_time``. The fixtures are real runs, each against a scripted model on 127.0.0.1:
``claude -p`` 2.1.332 with a foreground ``Agent`` (tests/agents harness), ``claude -p`` 2.1.337
with a background one stopped by ``TaskStop``, whose notification records no ``usage``
(``background_agent_stopped_recipe.txt``), and the Claude Agent SDK 0.2.189 / 0.2.190 (CLI
2.1.332 / 2.1.337 bundled) with a background one (tests/formats/claude_agent_sdk_runs.py).
Where a test takes a field out of a real run's records, it says which.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats.frameworks import claude_agent_sdk
from turnfold.model import SubAgent, ToolCall, Transcript
from turnfold.render.viewmodel import build_view_model, iter_nodes

FIXTURES = Path(__file__).parents[1] / "fixtures"
STREAM = FIXTURES / "agents" / "claude-stream-json"
FOREGROUND = STREAM / "claude-code_v2.1.332_stream-json_subagent.jsonl"
FOREGROUND_PARTIAL = STREAM / "claude-code_v2.1.332_stream-json_partial-messages.jsonl"
STOPPED = STREAM / "claude-code_v2.1.337_stream-json_background-agent-stopped.jsonl"
SDK = FIXTURES / "frameworks" / "claude-agent-sdk"
#: A background ``Agent``: its call's result says it launched, its task events say how it ran.
BACKGROUND = SDK / "claude-agent-sdk_v0.2.189_asdict_cli-subagent.json"
BACKGROUND_NEWER = SDK / "claude-agent-sdk_v0.2.190_asdict_cli-subagent.json"


def _agent_call(transcript: Transcript) -> ToolCall:
    (call,) = [c for c in transcript.tool_calls() if c.subagent is not None]
    return call


def _agent(transcript: Transcript) -> SubAgent:
    agent = _agent_call(transcript).subagent
    assert agent is not None
    return agent


def _lines(transcript: Transcript) -> list[str]:
    """The F-7 lines the view model gives every renderer."""
    view = build_view_model(transcript)
    return [
        node["subagent"]["line"]
        for node in iter_nodes(view)
        if node.get("kind") == "tool" and node.get("subagent") and node["subagent"]["line"]
    ]


@pytest.mark.parametrize(
    ("path", "duration", "shown"),
    [(FOREGROUND, 1128.0, "1.1s"), (FOREGROUND_PARTIAL, 185.0, "185ms")],
    ids=["stream-json", "partial-messages"],
)
def test_F7_a_foreground_sub_agent_s_duration_is_its_call_s_recorded_total(
    path: Path, duration: float, shown: str
) -> None:
    """The call's ``tool_use_result.totalDurationMs``, as the session file's line is read
    (``toolUseResult``), and as the report the model read says (``<usage>duration_ms``)."""
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert _agent(transcript).duration_ms == duration
    assert _agent_call(transcript).duration_ms == duration
    assert _lines(transcript) == [f"✔ general-purpose: scripted sub-agent · 1 tool · {shown}"]


@pytest.mark.parametrize(
    ("path", "duration"),
    [(BACKGROUND, 415.0), (BACKGROUND_NEWER, 233.0)],
    ids=["cli-2.1.332", "cli-2.1.337"],
)
def test_F7_a_background_sub_agent_s_duration_is_its_task_notification_s(
    path: Path, duration: float
) -> None:
    """The call's result only says the agent was launched; the notification that it finished
    records how long it ran, which is the call's duration too (it ran until then)."""
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert _agent(transcript).duration_ms == duration
    assert _agent_call(transcript).duration_ms == duration
    shown = f"{int(duration)}ms"
    assert _lines(transcript) == [f"✔ general-purpose: sub task · 1 tool · {shown} · 10 tokens"]


def _messages(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _without_notification_usage(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    changed = copy.deepcopy(messages)
    for message in changed:
        if message.get("subtype") == "task_notification":
            del message["usage"], message["data"]["usage"]
    return changed


def _load(messages: list[dict[str, Any]], tmp_path: Path) -> Transcript:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return turnfold.load(path)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_F7_a_stopped_sub_agent_ran_from_its_start_to_its_end() -> None:
    """CLI 2.1.337, a background agent stopped by ``TaskStop``: its notification (``stopped``)
    records no duration; the task list's ``start_time`` (1796563888019) to ``task_updated``'s
    ``end_time`` (1796563889712) does. Stopped, it is ``cancelled`` (its launch's result said
    only that it started), as the session file's ``<task-notification>`` reads."""
    (notified,) = [e for e in _events(STOPPED) if e.get("subtype") == "task_notification"]
    assert (notified["status"], "usage" in notified) == ("stopped", False)
    transcript = turnfold.load(STOPPED)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert _agent(transcript).duration_ms == 1693.0
    assert _agent_call(transcript).duration_ms == 1693.0
    assert _agent_call(transcript).status == "cancelled"
    assert _lines(transcript) == ["✖ general-purpose: sub task · 1 tool · 1.7s · 5 tokens"]


def test_F7_without_the_task_list_the_task_started_event_s_time_is_the_start(
    tmp_path: Path,
) -> None:
    """The same stream without its ``background_tasks_changed`` events: ``task_started``'s
    ``written_at`` (13:31:28.028Z) to ``end_time`` (13:31:29.712Z)."""
    events = [e for e in _events(STOPPED) if e.get("subtype") != "background_tasks_changed"]
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert _agent(turnfold.load(path)).duration_ms == 1684.0


def test_A1_the_sdk_s_task_messages_time_a_sub_agent_without_a_recorded_duration(
    tmp_path: Path,
) -> None:
    """The SDK's saved messages (CLI 2.1.337) without the notification's ``usage``: the task
    list's ``start_time`` to ``end_time`` (1796563126991 → 1796563127213)."""
    transcript = _load(_without_notification_usage(_messages(BACKGROUND_NEWER)), tmp_path)
    assert transcript.warnings == []
    assert _agent(transcript).duration_ms == 222.0
    assert _lines(transcript) == ["✔ general-purpose: sub task · 1 tool · 222ms · 10 tokens"]


def test_L3_an_older_cli_without_a_start_time_records_no_duration(tmp_path: Path) -> None:
    """CLI 2.1.332 writes no start of a task: without the notification's duration, none is
    recorded (not 0), and the line shows none."""
    transcript = _load(_without_notification_usage(_messages(BACKGROUND)), tmp_path)
    assert _agent(transcript).duration_ms is None
    assert _agent_call(transcript).duration_ms is None
    assert _lines(transcript) == ["✔ general-purpose: sub task · 1 tool · 10 tokens"]


def test_F7_an_unreadable_duration_is_warned_about_and_the_times_are_used(tmp_path: Path) -> None:
    messages = _messages(BACKGROUND_NEWER)
    at = next(i for i, m in enumerate(messages) if m.get("subtype") == "task_notification")
    messages[at]["data"]["usage"]["duration_ms"] = "233"
    messages[at]["usage"]["duration_ms"] = "233"
    transcript = _load(messages, tmp_path)
    assert [(w.reason, w.line) for w in transcript.warnings] == [
        ("task_notification: usage.duration_ms is not a number of milliseconds: '233'", at + 1)
    ]
    assert _agent(transcript).duration_ms == 222.0


def test_A2_a_followed_background_sub_agent_shows_its_duration_once_it_ends() -> None:
    """Live: no duration while the agent runs; its start to its end once ``task_updated``
    says it ended, then the notification's recorded one; closed, the transcript is the
    load's."""
    messages = _messages(BACKGROUND_NEWER)
    ended = next(i for i, m in enumerate(messages) if m.get("subtype") == "task_updated")
    at = next(i for i, m in enumerate(messages) if m.get("subtype") == "task_notification")
    live = Transcript()
    follower = claude_agent_sdk.Follower(live)
    for message in messages[:ended]:
        follower.feed(message)
    assert _agent(live).duration_ms is None
    for message in messages[ended:at]:
        follower.feed(message)
    assert _agent(live).duration_ms == 222.0
    follower.feed(messages[at])
    assert _agent(live).duration_ms == 233.0
    assert _agent_call(live).duration_ms == 233.0
    for message in messages[at + 1 :]:
        follower.feed(message)
    follower.close()
    assert _agent(live).duration_ms == 233.0
    assert live.dump() == turnfold.load(BACKGROUND_NEWER).dump()
