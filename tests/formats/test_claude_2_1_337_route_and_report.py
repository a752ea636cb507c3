"""Claude Code 2.1.337's session file and a background agent's report (X-2, F-7, A-1, A-2).

The fixtures are real runs of the ``claude`` binary bundled in claude-agent-sdk 0.2.190
(Claude Code 2.1.337), each against a scripted model on 127.0.0.1 inside ``unshare -rn``:

- ``claude-code/v2.1.337_real_api-request-route.jsonl``: a ``Read``, a failing ``Bash``, an
  answer (``claude-code/v2.1.337_real_api-request-route_recipe.txt``). 2.1.337 writes
  ``api-request-route`` records (``provider``, ``credential``) that 2.1.332 did not;
- ``claude-code/v2.1.337_real_background-agent-report.jsonl`` and
  ``agents/claude-stream-json/claude-code_v2.1.337_stream-json_background-agent-report.jsonl``:
  the session file and the stdout of one run (a background ``Agent`` that reports, a
  foreground ``sleep 2``, an answer; ``background_agent_report_recipe.txt``). The stream's
  ``task_notification`` carries the report as ``summary`` with ``summary_is_report: true``;
  the session file's ``<task-notification>`` as ``<result>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import turnfold
from tests.claude_background_runs import agent_call, read_events, write_events
from turnfold.formats.agents.claude_stream import StreamReader, subagent_usage
from turnfold.formats.frameworks import claude_agent_sdk
from turnfold.formats.source import open_source
from turnfold.model import AssistantText, ToolCall, Transcript

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROUTE = FIXTURES / "claude-code" / "v2.1.337_real_api-request-route.jsonl"
SESSION = FIXTURES / "claude-code" / "v2.1.337_real_background-agent-report.jsonl"
STREAM_DIR = FIXTURES / "agents" / "claude-stream-json"
STREAM = STREAM_DIR / "claude-code_v2.1.337_stream-json_background-agent-report.jsonl"
STOPPED = STREAM_DIR / "claude-code_v2.1.337_stream-json_background-agent-stopped.jsonl"
SDK = (
    FIXTURES
    / "frameworks"
    / "claude-agent-sdk"
    / "claude-agent-sdk_v0.2.190_asdict_cli-subagent.json"
)
REPORT = "TF-REPORT: the sub-agent echoed from-subagent."


def _outcome(call: ToolCall) -> tuple[Any, ...]:
    assert call.result is not None
    assert call.subagent is not None
    agent = call.subagent
    return (call.status, call.result.text, call.result.kind, agent.tool_count, agent.duration_ms)


def _follow(path: Path) -> tuple[list[tuple[int, str | None]], Transcript]:
    """The stream fed live: the agent call's result text after each event, and the end."""
    source, _ = open_source(path)
    reader = StreamReader(source, live=True)
    seen: list[tuple[int, str | None]] = []
    for line, record in source.records():
        reader.feed(record, line)
        found = [c for c in reader.main.transcript.tool_calls() if c.subagent is not None]
        if found and found[0].result is not None:
            seen.append((line, found[0].result.text))
    transcript = reader.finish()
    subagent_usage(transcript)
    return seen, transcript


def test_X2_a_2_1_337_session_file_is_read_without_loss() -> None:
    """Its three ``api-request-route`` records are the route the requests took: the provider
    (``customEndpoint``: ``ANTHROPIC_BASE_URL``) is the session's ``model_provider``."""
    routes = [e for e in read_events(ROUTE) if e["type"] == "api-request-route"]
    assert [(e["provider"], e["credential"]) for e in routes] == [("customEndpoint", "key")] * 3
    transcript = turnfold.load(ROUTE)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts["api-request-route"] == {"mapped": 3}
    meta = transcript.metadata
    assert (meta["version"], meta["model_provider"]) == ("2.1.337", "customEndpoint")
    read, bash = transcript.tool_calls()
    assert (read.name, read.status) == ("Read", "success")
    assert read.result is not None
    assert "hello from notes" in (read.result.text or "")
    assert (bash.name, bash.status) == ("Bash", "error")
    (answer,) = [e for e in transcript if isinstance(e, AssistantText)]
    assert answer.text == "notes.txt says hello; ls failed: no such directory."


def test_X2_each_route_once_in_the_order_first_taken(tmp_path: Path) -> None:
    """The real file with its second route's provider changed to ``bedrock`` and its third's
    to Claude Code's ``unrecorded`` (a route it did not record, so none)."""
    events = read_events(ROUTE)
    routes = [e for e in events if e["type"] == "api-request-route"]
    routes[1]["provider"], routes[2]["provider"] = "bedrock", "unrecorded"
    transcript = turnfold.load(write_events(events, tmp_path / "session.jsonl"))
    assert transcript.warnings == []
    assert transcript.metadata["model_provider"] == "customEndpoint, bedrock"


def test_F7_a_2_1_337_notification_s_usage_elements_give_the_agent_s_tools_and_duration() -> None:
    """2.1.337's ``<usage>`` holds elements (``<tool_uses>1</tool_uses><duration_ms>209
    </duration_ms>``), no longer ``name: value`` lines."""
    transcript = turnfold.load(SESSION)
    assert transcript.warnings == []
    call = agent_call(transcript)
    assert _outcome(call) == ("success", REPORT, "subagent", 1, 209.0)
    assert call.duration_ms == 209.0


def test_F7_a_background_agent_s_report_is_its_result_as_the_session_file_reads_it() -> None:
    """The stream's launch result (line 5) says it started; its notification (line 12)
    carries the report (``summary_is_report``): loaded, the call's result is the report,
    as the same run's session file gives it; followed live, the launch text until then."""
    notified = read_events(STREAM)[11]
    assert (notified["subtype"], notified["summary"]) == ("task_notification", REPORT)
    assert notified["summary_is_report"] is True
    loaded = turnfold.load(STREAM)
    assert loaded.warnings == []
    call = agent_call(loaded)
    assert call.meta == {"background": True}
    assert _outcome(call) == _outcome(agent_call(turnfold.load(SESSION)))
    seen, live = _follow(STREAM)
    before = {text for line, text in seen if line < 12}
    assert len(before) == 1
    assert before.pop().startswith("Async agent launched successfully.")  # type: ignore[union-attr]
    assert {text for line, text in seen if line >= 12} == {REPORT}
    assert live.dump() == loaded.dump()


def test_F7_a_summary_that_is_no_report_leaves_the_launch_s_result() -> None:
    """A stopped agent's notification (no ``summary_is_report``) has its description as
    ``summary`` ("sub task"): the call keeps its launch's result."""
    notified = read_events(STOPPED)[9]
    assert (notified["summary"], "summary_is_report" in notified) == ("sub task", False)
    call = agent_call(turnfold.load(STOPPED))
    assert call.status == "cancelled"
    assert call.result is not None
    assert call.result.text is not None
    assert call.result.text.startswith("Async agent launched successfully.")


def test_F7_a_later_report_replaces_the_earlier_loaded_and_followed(tmp_path: Path) -> None:
    """The real stream with its notification repeated before the answer, a second report in
    it (the CLI notifies again when a resumed agent stops): the later report is the result."""
    events = read_events(STREAM)
    again = {**events[11], "summary": "TF-REPORT: second", "uuid": "second"}
    path = write_events([*events[:-1], again, events[-1]], tmp_path / "stream.jsonl")
    loaded = turnfold.load(path)
    assert loaded.warnings == []
    assert _outcome(agent_call(loaded))[:3] == ("success", "TF-REPORT: second", "subagent")
    _, live = _follow(path)
    assert live.dump() == loaded.dump()


def test_A1_the_sdk_s_background_agent_report_is_its_result_loaded_and_followed() -> None:
    """The Claude Agent SDK's saved messages (CLI 2.1.337): the ``TaskNotificationMessage``
    carries the report (``summary_is_report``) in its ``data``."""
    messages = json.loads(SDK.read_text(encoding="utf-8"))
    at = next(i for i, m in enumerate(messages) if m.get("subtype") == "task_notification")
    assert messages[at]["data"]["summary_is_report"] is True
    loaded = turnfold.load(SDK)
    assert loaded.warnings == []
    call = agent_call(loaded)
    assert call.result is not None
    assert (call.result.text, call.result.kind) == ("subagent done: from-subagent", "subagent")
    live = Transcript()
    follower = claude_agent_sdk.Follower(live)
    for message in messages[:at]:
        follower.feed(message)
    launched = agent_call(live).result
    assert launched is not None
    assert launched.text is not None
    assert launched.text.startswith("Async agent launched successfully.")
    for message in messages[at:]:
        follower.feed(message)
    follower.close()
    assert live.dump() == loaded.dump()
