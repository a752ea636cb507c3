"""A lone Cline 3 ``ui_messages.json`` read as what the chat panel showed, on the file the real
Cline CLI 2.18.0 (Cline core 3.x) wrote for a scripted task: a command that succeeds, one that
fails, a file read, the completion (``tests/fixtures/cline/cline-cli-2.18.0_ui-messages/``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import turnfold
from turnfold import AssistantText, ToolCall, UserMessage
from turnfold.formats.agents.cline import _results
from turnfold.model import CompactionBoundary, SystemNotice

UI = Path(__file__).parents[1] / "fixtures" / "cline" / "cline-cli-2.18.0_ui-messages"
UI = UI / "ui_messages.json"


def test_a_lone_ui_messages_file_is_the_panel_s_view_with_one_warning() -> None:
    transcript = turnfold.load(UI)
    assert transcript.metadata["source_format"] == "cline"
    assert [w.reason for w in transcript.warnings] == [
        "read as what Cline's chat panel showed: the model's own messages "
        "(api_conversation_history.json) were not found beside it"
    ]
    entries = transcript.entries
    assert isinstance(entries[0], UserMessage)
    assert entries[0].text == "TF-FIRST: run the checks and read the notes."
    texts = [e.text for e in entries if isinstance(e, AssistantText)]
    assert texts[-1] == "TF-DONE-1: ran the check, saw the failure, read the notes."
    assert "TF-READ: reading the notes." in texts


def test_commands_their_outputs_and_outcomes_and_the_tool_s_payload() -> None:
    calls = turnfold.load(UI).tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("execute_command", "success"),
        ("execute_command", "error"),  # the next request says "Command failed with exit code 3."
        ("read_file", "success"),  # say: tool "readFile"
    ]
    assert calls[0].args == {"command": "printf 'TF-OK-%s\\n' 23"}
    assert calls[0].result is not None
    assert calls[0].result.text == "TF-OK-23\n"
    assert calls[1].result is not None
    assert calls[1].result.text == (
        "TF-FAIL-OUT\n\nls: cannot access '/tf-missing': No such file or directory"
    )
    assert calls[2].args["path"] == "notes.txt"
    # The panel shows no file content: the result is what the next request sent the model.
    assert calls[2].result is not None
    assert calls[2].result.text == (
        "1 | A file for the agents to read.\n2 | TF-NOTE-LINE: the line the edit replaces."
        "\n\n(File has 2 lines total.)"
    )


def test_each_request_s_usage_goes_on_its_response() -> None:
    transcript = turnfold.load(UI)
    used = [
        (e.usage.input_tokens, e.usage.output_tokens, e.usage.cache_read_tokens)
        for e in transcript.entries
        if isinstance(e, (AssistantText, ToolCall)) and e.usage is not None
    ]
    # What the scripted server sent: prompt 1000n+7 (cached tokens included: the OpenAI-
    # compatible handler passes prompt_tokens on), completion 10n+3, 100(n-1) cached.
    assert used == [(1007, 13, 0), (2007, 23, 100), (3007, 33, 200), (4007, 43, 300)]
    assert transcript.metadata["api_requests"] == 4
    assert (transcript.metadata["model"], transcript.metadata["model_provider"]) == (
        "fake-model", "openai",
    )  # fmt: skip


def test_with_the_history_beside_it_the_warning_points_there(tmp_path: Path) -> None:
    shutil.copy(UI, tmp_path / "ui_messages.json")
    (tmp_path / "api_conversation_history.json").write_text("[]")
    transcript = turnfold.load(tmp_path / "ui_messages.json")
    assert [w.reason for w in transcript.warnings] == [
        "read as what Cline's chat panel showed: the model's own messages "
        "(api_conversation_history.json) are beside it; load that file for them"
    ]
    assert len(transcript.tool_calls()) == 3


# Hand-made panels (no real file holds these kinds here), in the shapes Cline's handlers write
# them (cline/cline 791d2389^ src/core/task/tools/handlers/: UseMcpToolHandler,
# BrowserToolHandler, PlanModeRespondHandler) and Roo Code's (RooCodeInc/Roo-Code cb836567:
# Task.startTask, ClineProvider's subtask_result, Task's condense_context).
def _request(ts: int, request: str) -> dict[str, Any]:
    info = {"request": request, "tokensIn": 10, "tokensOut": 2, "cost": 0.001}
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info)}


def _load(tmp_path: Path, messages: list[dict[str, Any]]) -> turnfold.Transcript:
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(messages))
    return turnfold.load(path)


SHOT = "data:image/webp;base64,UklGRg=="


def test_mcp_and_browser_calls_get_their_results_and_plan_mode_its_answer(
    tmp_path: Path,
) -> None:
    mcp = {"serverName": "weather", "type": "use_mcp_tool", "toolName": "forecast",
           "arguments": '{"city": "Oslo"}'}  # fmt: skip
    seen = {"screenshot": SHOT, "logs": "TF-LOG: ready", "currentUrl": "http://localhost:3000/"}
    plan = {"response": "TF-PLAN: first the API, then the page.", "options": ["Go", "Wait"],
            "selected": "Go"}  # fmt: skip
    transcript = _load(tmp_path, [
        {"ts": 1, "type": "say", "say": "task", "text": "TF-TASK: check the weather page."},
        _request(2, "<task>\nTF-TASK: check the weather page.\n</task>"),
        {"ts": 3, "type": "ask", "ask": "plan_mode_respond", "text": json.dumps(plan)},
        _request(4, "[plan_mode_respond] Result:\n<user_message>\nGo\n</user_message>"),
        {"ts": 5, "type": "say", "say": "use_mcp_server", "text": json.dumps(mcp)},
        {"ts": 6, "type": "say", "say": "mcp_server_request_started"},
        {"ts": 7, "type": "say", "say": "mcp_server_response", "text": "TF-SUNNY\n\n" + SHOT},
        _request(8, "[use_mcp_tool for 'weather'] Result:\nTF-SUNNY"),
        {"ts": 9, "type": "say", "say": "browser_action_launch", "text": "http://localhost:3000"},
        {"ts": 10, "type": "say", "say": "browser_action_result", "text": ""},
        {"ts": 11, "type": "say", "say": "browser_action_result", "text": json.dumps(seen)},
        _request(12, "[browser_action for 'launch'] Result:\nThe browser action has been "
                 "executed.\n\nConsole logs:\nTF-LOG: ready"),
        {"ts": 13, "type": "say", "say": "browser_action", "text": json.dumps(
            {"action": "click", "coordinate": "450,300"})},
        {"ts": 14, "type": "say", "say": "completion_result", "text": "TF-DONE"},
    ])  # fmt: skip
    # Only the panel's warning: every kind is read, none shown as an unknown notice.
    assert [w.reason for w in transcript.warnings] == [
        "read as what Cline's chat panel showed: the model's own messages "
        "(api_conversation_history.json) were not found beside it"
    ]
    said = [(type(e).__name__, e.text) for e in transcript.entries
            if isinstance(e, (UserMessage, AssistantText))]  # fmt: skip
    assert said == [
        ("UserMessage", "TF-TASK: check the weather page."),
        ("AssistantText", "TF-PLAN: first the API, then the page."),
        ("UserMessage", "Go"),
        ("AssistantText", "TF-DONE"),
    ]
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("use_mcp_tool", "success"),
        ("browser_action", "success"),
        ("browser_action", "unknown"),  # no request sent its result back
    ]
    forecast, launch, click = calls
    assert forecast.args["toolName"] == "forecast"
    assert forecast.result is not None
    assert forecast.result.text == "TF-SUNNY"
    assert [i.media_type for i in forecast.result.images] == ["image/webp"]
    assert launch.args == {"action": "launch", "url": "http://localhost:3000"}
    assert launch.result is not None
    assert launch.result.text == "URL: http://localhost:3000/\nconsole logs: TF-LOG: ready"
    assert [i.data for i in launch.result.images] == ["UklGRg=="]
    assert click.args == {"action": "click", "coordinate": "450,300"}


def test_roo_code_s_task_is_the_panel_s_first_text_and_a_sub_task_s_answer_its_call_s(
    tmp_path: Path,
) -> None:
    new_task = {"tool": "newTask", "mode": "code", "content": "TF-SUB: write the tests."}
    condensed = {"cost": 0.01, "prevContextTokens": 90000, "newContextTokens": 9000,
                 "summary": "TF-SUMMARY"}  # fmt: skip
    transcript = _load(tmp_path, [
        {"ts": 1, "type": "say", "say": "text", "text": "TF-ROO-TASK: add tests."},
        _request(2, "<task>\nTF-ROO-TASK: add tests.\n</task>"),
        {"ts": 3, "type": "say", "say": "text", "text": "TF-ROO-TEXT: delegating."},
        {"ts": 4, "type": "ask", "ask": "tool", "text": json.dumps(new_task)},
        {"ts": 5, "type": "say", "say": "subtask_result", "text": "TF-SUB-DONE: 3 tests."},
        # Roo Code's requests now send native tool results: no "request" text to settle calls.
        {"ts": 6, "type": "say", "say": "api_req_started", "text": json.dumps(
            {"apiProtocol": "anthropic", "tokensIn": 10, "tokensOut": 2})},
        {"ts": 7, "type": "say", "say": "condense_context", "contextCondense": condensed},
        {"ts": 8, "type": "say", "say": "checkpoint_saved", "text": "0123abcd"},
        {"ts": 8, "type": "say", "say": "sliding_window_truncation", "contextTruncation": {
            "truncationId": "t1", "messagesRemoved": 4, "prevContextTokens": 120000,
            "newContextTokens": 60000}},
        {"ts": 8, "type": "say", "say": "rooignore_error", "text": ".env"},
        {"ts": 9, "type": "say", "say": "completion_result", "text": "TF-ROO-DONE"},
    ])  # fmt: skip
    assert len(transcript.warnings) == 1  # the panel's own
    first = transcript.entries[0]
    assert isinstance(first, UserMessage)
    assert first.text == "TF-ROO-TASK: add tests."
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["TF-ROO-TEXT: delegating.", "TF-ROO-DONE"]
    (call,) = transcript.tool_calls()
    assert (call.name, call.status, call.args["mode"]) == ("new_task", "success", "code")
    assert call.result is not None
    assert call.result.text == "TF-SUB-DONE: 3 tests."
    boundaries = [e for e in transcript.entries if isinstance(e, CompactionBoundary)]
    assert [(b.trigger, b.summary, b.pre_tokens) for b in boundaries] == [
        ("condense", "TF-SUMMARY", 90000),
        ("truncation", None, 120000),
    ]
    notices = [(e.level, e.text) for e in transcript.entries if isinstance(e, SystemNotice)]
    assert notices == [("warning", "blocked by .rooignore: .env")]


def test_roo_code_s_result_headers_name_their_tools() -> None:
    # presentAssistantMessage's toolDescription: "in … mode" and "to …" besides "for …".
    request = (
        "[new_task in Code mode: 'TF-SUB'] Result:\nTF-SUB-DONE\n\n"
        "[switch_mode to 'code' because: TF-WHY] Result:\nTF-SWITCHED"
    )
    assert [(name, body) for name, _, body in _results(request)] == [
        ("new_task", "TF-SUB-DONE"), ("switch_mode", "TF-SWITCHED"),
    ]  # fmt: skip


def test_sub_agents_hooks_and_a_new_task_are_read_not_warned_of(tmp_path: Path) -> None:
    # SubagentToolHandler (say use_subagents {prompts}), hook-executor.ts (hook_status),
    # ExecuteCommandToolHandler (command_permission_denied), NewTaskHandler (ask new_task).
    hook = {"hookName": "PreToolUse", "toolName": "execute_command", "status": "running"}
    transcript = _load(tmp_path, [
        {"ts": 1, "type": "say", "say": "task", "text": "TF-TASK: survey the repo."},
        _request(2, "<task>\nTF-TASK: survey the repo.\n</task>"),
        {"ts": 3, "type": "say", "say": "use_subagents", "text": json.dumps(
            {"prompts": ["TF-P1: list the configs.", "TF-P2: list the tests."]})},
        _request(4, "[subagents] Result:\nSubagent results:\nTotal: 2"),
        {"ts": 5, "type": "say", "say": "hook_status", "text": json.dumps(hook)},
        {"ts": 6, "type": "say", "say": "command_permission_denied", "text": "TF-DENIED: rm"},
        {"ts": 7, "type": "ask", "ask": "new_task", "text": "TF-CONTEXT: carry on there."},
    ])  # fmt: skip
    assert len(transcript.warnings) == 1  # the panel's own
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("use_subagents", "success"),
        ("new_task", "unknown"),  # the panel ends on it: no request sent its result
    ]
    assert calls[0].args == {"prompts": ["TF-P1: list the configs.", "TF-P2: list the tests."]}
    assert calls[0].result is not None
    assert calls[0].result.text.startswith("Subagent results:")
    assert calls[1].args == {"context": "TF-CONTEXT: carry on there."}
    notices = [(e.level, e.text) for e in transcript.entries if isinstance(e, SystemNotice)]
    assert notices == [
        ("info", "hook PreToolUse execute_command running"),
        ("warning", "command not permitted: TF-DENIED: rm"),
    ]
