"""Cline 4.x sessions, ``<sessionId>.messages.json`` (spec H-5, H-6, C-1).

The fixture is hand-made, written from the Cline SDK's writer at cline/cline 21cb8d25 (see
tests/fixtures/SOURCES.md; test_cline_teams.py's was written by the real CLI):
``cline-4.x_hand-made_session/<sessionId>/`` holds the session's messages, its manifest
``<sessionId>.json`` and a sub-agent's ``agent_<id>.messages.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.agents.cline_messages import tool_outcome, unwrap_prompt
from turnfold.formats.source import from_object
from turnfold.model import (
    AssistantText,
    CompactionBoundary,
    SystemNotice,
    Thinking,
    ToolCall,
    UserMessage,
)
from turnfold.session import session_facts
from turnfold.tools import tool_category

SESSION_ID = "1784200000000_q7w2e"
FOLDER = Path(__file__).parents[1] / "fixtures" / "cline" / "cline-4.x_hand-made_session"
SESSION = FOLDER / SESSION_ID / f"{SESSION_ID}.messages.json"
SUBAGENT = FOLDER / SESSION_ID / "agent_Vb3kQ9xZ.messages.json"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _calls(transcript: turnfold.Transcript) -> dict[str, ToolCall]:
    return {call.call_id: call for call in transcript.tool_calls()}


def test_H5_a_session_reads_the_user_s_words_thinking_text_and_calls_in_order() -> None:
    transcript = turnfold.load(SESSION)
    assert transcript.metadata["source_format"] == "cline-messages"
    assert transcript.warnings == []
    kinds = [type(entry).__name__ for entry in transcript.entries]
    assert kinds == [
        "UserMessage", "Thinking", "AssistantText", "ToolCall", "ToolCall",
        "AssistantText", "ToolCall", "ToolCall", "ToolCall", "UserMessage",
        "SystemNotice", "AssistantText", "ToolCall", "ToolCall", "AssistantText",
        "SystemNotice", "UserMessage", "Thinking", "AssistantText",
    ]  # fmt: skip
    task = transcript.entries[0]
    assert isinstance(task, UserMessage)
    # <user_input mode="act"> unwrapped; the attached file is a line, relative to the cwd.
    assert task.text == (
        "Make the price tests pass, and tidy the README while you are at it.\n\n"
        "[attachment: README.md · 44 B]"
    )
    assert task.meta == {"mode": "act"}
    thinking = transcript.entries[1]
    assert isinstance(thinking, Thinking)
    assert thinking.text.startswith("The failing test is about discounts.")
    switch, question = transcript.entries[15:17]
    assert isinstance(switch, SystemNotice)
    assert switch.subtype == "mode_switch"
    assert switch.text.startswith("The user switched from act mode to plan mode")
    assert isinstance(question, UserMessage)
    assert question.text == "What would you refactor next? Here is the cart page."
    assert question.meta == {"mode": "plan", "images": 1}
    assert question.images[0].media_type == "image/png"
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.model == "claude-sonnet-4-6"


def test_H5_tool_results_read_as_cline_s_tools_return_them() -> None:
    calls = _calls(turnfold.load(SESSION))
    read = calls["toolu_01Hk3Rp9Vb2mN7cQ4sXyZa1"]
    assert (read.name, tool_category(read.name), read.status) == ("read_files", "read", "success")
    assert read.description == "src/shop/price.py, tests/test_price.py"
    # A ToolOperationResult per file, each headed by its query.
    assert read.result is not None
    assert read.result.text is not None
    first, second = read.result.text.split("\n\n")
    assert first.startswith("/home/user/shop/src/shop/price.py\n1 | def apply_discount")
    assert second.startswith("/home/user/shop/tests/test_price.py:1-40\n1 | from shop.price")
    # success: false fails the call; the command's output says why, once.
    tests = calls["toolu_01Jm5Tq2Wc8nP3dR6tYzAb2"]
    assert (tool_category(tests.name), tests.status) == ("command", "error")
    assert tests.result is not None
    assert tests.result.text is not None
    assert tests.result.text.startswith("[Command exited with code 1]\nF\nFAILED")
    # One ToolOperationResult, persisted as its JSON: its result.
    edit = calls["toolu_01Kp7Ur4Xd9oQ5eS8uZaBc3"]
    assert (tool_category(edit.name), edit.status, edit.description) == (
        "edit", "success", "src/shop/price.py",
    )  # fmt: skip
    assert edit.result is not None
    assert edit.result.text is not None
    assert edit.result.text.startswith("Edited /home/user/shop/src/shop/price.py\n```diff")
    # A denied edit is cancelled, and the feedback given with it is the user's message.
    denied = calls["toolu_01Lq9Vs6Ye1pR7fT0vAbCd4"]
    assert denied.status == "cancelled"
    assert denied.result is not None
    assert denied.result.text == (
        "The user denied this edit. The file was NOT modified and still contains its original "
        "content."
    )
    transcript = turnfold.load(SESSION)
    feedback = transcript.entries[9]
    assert isinstance(feedback, UserMessage)
    assert feedback.text == "Leave the README alone, only fix the tests."
    # is_error with the runtime's {"error": …}: the error's text.
    lint = calls["toolu_01Ot5Yv2Bh7sU3iW6yDeFg7"]
    assert lint.status == "error"
    assert lint.result is not None
    assert lint.result.text == "Unknown tool: lint"


def test_H6_metrics_modelinfo_and_ts_give_usage_cost_model_and_times() -> None:
    transcript = turnfold.load(SESSION)
    first = transcript.entries[2]
    assert isinstance(first, AssistantText)
    assert first.usage is not None
    # inputTokens is the prompt's total, cached tokens in it (the AI SDK's inputTokens.total).
    assert (first.usage.input_tokens, first.usage.output_tokens) == (14210, 188)
    assert (first.usage.cache_read_tokens, first.usage.cache_write_tokens) == (0, 14020)
    assert first.usage.response_id == "msg_Qd81xTzA"
    assert first.meta["cost_usd"] == 0.056218
    assert first.timestamp == "2026-07-16T11:06:44.210000+00:00"
    metadata = transcript.metadata
    assert (metadata["model"], metadata["model_provider"]) == ("claude-sonnet-4-6", "anthropic")
    # The session's five responses and its sub-agent's two.
    assert metadata["cost_usd"] == pytest.approx(0.089197 + 0.006716)
    # A call runs from its message's time to its result's.
    tests = _calls(transcript)["toolu_01Jm5Tq2Wc8nP3dR6tYzAb2"]
    assert tests.recorded_duration_ms == 1664
    facts = session_facts(transcript)
    assert facts.agent == "Cline"
    assert facts.tokens["input_tokens"] == 78198 + 6410
    assert facts.cost_usd == pytest.approx(0.095913)


def test_H6_the_envelope_and_the_manifest_beside_it_are_the_session_s_facts() -> None:
    metadata = turnfold.load(SESSION).metadata
    assert metadata["session_id"] == SESSION_ID
    assert metadata["agent_role"] == "lead"
    assert metadata["origin"] == {"source": "vscode", "mode": "user", "sessionId": SESSION_ID}
    assert metadata["system"].startswith("You are Cline")
    assert metadata["cwd"] == "/home/user/shop"
    assert metadata["title"].startswith("Make the price tests pass")
    assert (metadata["status"], metadata["source"]) == ("completed", "vscode")
    assert (metadata["started_at"], metadata["ended_at"]) == (
        "2026-07-16T11:06:39.412Z", "2026-07-16T11:08:27.612Z",
    )  # fmt: skip
    assert "outcome" not in metadata  # completed


def test_H6_a_session_the_manifest_says_failed_is_an_error() -> None:
    # The real cline 3.0.65 ended this run on an API error (exit code 1): its manifest's status
    # is "failed", the outcome the CLI's --json output gives the same run (finishReason error).
    folder = FOLDER.parent / "cline-cli-3.0.65_api-error" / "1796495860052_aovfe"
    transcript = turnfold.load(folder / "1796495860052_aovfe.messages.json")
    assert transcript.metadata["status"] == "failed"
    assert transcript.metadata["outcome"] == "error"
    assert session_facts(transcript).outcome == "error"


def test_H5_a_spawn_agent_call_holds_the_sub_agent_whose_prompt_was_its_task() -> None:
    transcript = turnfold.load(SESSION)
    spawn = _calls(transcript)["toolu_01Mr1Wt8Zf3qS9gU2wBcDe5"]
    assert tool_category(spawn.name) == "agent"
    assert spawn.result is not None
    assert spawn.result.text == "src/shop/cart.py:14\nsrc/shop/checkout.py:31"  # its answer
    agent = spawn.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert (agent.agent_id, agent.tool_count, agent.output_tokens) == ("agent_Vb3kQ9xZ", 1, 61)
    assert agent.task == "Find every caller of apply_discount in /home/user/shop and list them."
    assert not agent.steps_missing
    (search,) = agent.transcript.tool_calls()
    assert (search.name, search.status, search.description) == (
        "search_codebase", "success", "apply_discount\\(",
    )  # fmt: skip
    assert agent.transcript.metadata["agent_role"] == "subagent"


def test_H5_a_sub_agent_s_file_alone_and_a_session_without_its_folder(tmp_path: Path) -> None:
    alone = turnfold.load(SUBAGENT)
    assert alone.metadata["agent_role"] == "subagent"
    assert alone.metadata["task_type"] == "subagent_task"
    assert alone.metadata["model"] == "claude-haiku-4-5"
    copy = tmp_path / "session.messages.json"
    shutil.copy(SESSION, copy)
    transcript = turnfold.load(copy)
    spawn = _calls(transcript)["toolu_01Mr1Wt8Zf3qS9gU2wBcDe5"]
    assert spawn.subagent is not None
    assert spawn.subagent.steps_missing  # the call ran one; its steps are not here
    assert spawn.subagent.output_tokens == 61
    assert "cwd" not in transcript.metadata  # no manifest beside it either


def test_H5_a_sub_agent_file_that_matches_no_call_is_said(tmp_path: Path) -> None:
    folder = tmp_path / SESSION_ID
    shutil.copytree(FOLDER / SESSION_ID, folder)
    stray = json.loads(SUBAGENT.read_text())
    stray["messages"][0]["content"][0]["text"] = "A task no call gave."
    (folder / "agent_Zz9Yy8Xx.messages.json").write_text(json.dumps(stray))
    transcript = turnfold.load(folder / SESSION.name)
    assert [w.reason for w in transcript.warnings] == [
        "sub-agent session agent_Zz9Yy8Xx.messages.json matches no spawn_agent call's task; "
        "not shown"
    ]


def _session(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "updated_at": "2026-07-16T10:00:00.000Z", "agent": "lead",
            "sessionId": "s1", "origin": {"source": "cli", "mode": "user", "sessionId": "s1"},
            "messages": list(messages)}  # fmt: skip


def _user(text: str, **extra: Any) -> dict[str, Any]:
    return {"id": "m", "role": "user", "content": [{"type": "text", "text": text}], **extra}


def test_H5_messages_the_runtime_wrote_in_the_user_s_role_are_notices() -> None:
    summary = {"kind": "compaction_summary", "displayRole": "system", "userRunSpan": 1,
               "summary": "Fixed the discount.", "tokensBefore": 120000}  # fmt: skip
    transcript = turnfold.load(
        _session(
            _user('<user_command slash="review">the cart</user_command>'),
            _user("Earlier: fixed the discount.", metadata=summary),
            _user(
                '<hook_context source="UserPromptSubmit">\nlint is on\n</hook_context>',
                metadata={"userRunSpan": 0, "displayRole": "system"},
            ),
            _user(
                '<user_input mode="act">[TASK RESUMPTION] This task was interrupted.\nGo on.'
                "</user_input>"
            ),
            _user(
                '<user_input mode="act">The user approved switching to act mode. Continue with '
                "the approved plan now.</user_input>"
            ),
        )
    )
    command, boundary, hook, resumed, switched = transcript.entries
    assert isinstance(command, UserMessage)
    assert (command.command, command.text) == ("/review", "the cart")
    assert isinstance(boundary, CompactionBoundary)
    assert (boundary.summary, boundary.pre_tokens) == ("Fixed the discount.", 120000)
    assert isinstance(hook, SystemNotice)
    assert hook.subtype == "hook_context"
    assert isinstance(resumed, SystemNotice)
    assert (resumed.subtype, resumed.text) == ("task_resumption", "[TASK RESUMPTION] This task "
                                               "was interrupted.")  # fmt: skip
    assert isinstance(switched, SystemNotice)
    assert switched.subtype == "mode_switch"


def test_L4_a_message_whose_content_is_no_text_or_list_is_warned_of() -> None:
    transcript = turnfold.load(_session({"role": "user", "content": 5}, _user("hi")))
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (1, "not an Anthropic message (role 'user')")
    ]
    assert [type(e).__name__ for e in transcript.entries] == ["UserMessage"]


@pytest.mark.parametrize(
    ("block", "status", "text"),
    [
        ({"content": "plain output"}, "success", "plain output"),
        ({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
         "success", "a\nb"),
        ({"content": [{"query": "ls", "result": "", "error": "Command failed: spawn ENOENT",
                       "success": False}]}, "error", "Command failed: spawn ENOENT"),
        # Interrupted: the run's abort stopped the command (the real CLI's, tests/agents).
        ({"content": [{"query": "sleep 45", "result": "",
                       "error": "Command failed: Command was aborted", "success": False}]},
         "cancelled", "Command failed: Command was aborted"),
        ({"content": [{"query": "a", "result": "", "error": "Command failed: Command was aborted",
                       "success": False},
                      {"query": "b", "result": "", "error": "Command failed: exit 2",
                       "success": False}]},
         "error", "a\nCommand failed: Command was aborted\n\nb\nCommand failed: exit 2"),
        ({"content": '{"error":"Tool \\"editor\\" was not approved"}', "is_error": True},
         "cancelled", 'Tool "editor" was not approved'),
        ({"content": '{"error":"User rejected the tool call"}', "is_error": True},
         "cancelled", "User rejected the tool call"),
        ({"content": '{"error":"editor timed out"}', "is_error": True}, "error",
         "editor timed out"),
        ({"content": '{"not":"an operation"}'}, "success", '{"not":"an operation"}'),
        ({"content": [{"type": "web_search_result", "title": "Docs", "url": "https://x.dev"}]},
         "success", "Docs — https://x.dev"),
    ],
)  # fmt: skip
def test_H5_a_tool_result_s_status_and_text(block: dict[str, Any], status: str, text: str) -> None:
    found, result, _, _ = tool_outcome({"type": "tool_result", "tool_use_id": "t", **block})
    assert (found, result.text) == (status, text)


def test_H5_images_a_tool_returned_are_the_result_s_images() -> None:
    image = {"type": "image", "data": "aGk=", "mediaType": "image/png"}
    operation = {"query": "/a.png", "result": [image], "success": True}
    _, result, _, _ = tool_outcome({"type": "tool_result", "content": [operation]})
    assert [(i.media_type, i.data) for i in result.images] == [("image/png", "aGk=")]


def test_H5_the_user_s_words_are_unwrapped_as_the_runtime_wrapped_them() -> None:
    assert unwrap_prompt("plain") == ("plain", {}, [])
    assert unwrap_prompt('<user_input mode="yolo">go</user_input>') == ("go", {"mode": "yolo"}, [])


def test_H5_detection_tells_the_messages_file_from_anthropic_lists_and_its_sidecars() -> None:
    document = json.loads(SESSION.read_text())
    assert which_format(from_object(document)) == "cline-messages"
    # Its messages alone carry no mark of Cline's: another format reads them.
    assert which_format(from_object(document["messages"])) != "cline-messages"
    # The compacted history beside it is no session of its own.
    compaction = {"version": 1, "updated_at": "2026-07-16T10:00:00.000Z",
                  "source_message_count": 3, "messages": document["messages"][:2]}  # fmt: skip
    assert which_format(from_object(compaction)) != "cline-messages"


def test_C1_a_scan_of_cline_s_sessions_folder_is_a_row_per_session(tmp_path: Path) -> None:
    sessions = tmp_path / ".cline" / "data" / "sessions"
    shutil.copytree(FOLDER / SESSION_ID, sessions / SESSION_ID)
    compaction = {"version": 1, "updated_at": "2026-07-16T11:08:00.000Z",
                  "source_message_count": 2, "messages": [_user("summary")]}  # fmt: skip
    (sessions / SESSION_ID / f"{SESSION_ID}.compaction.json").write_text(json.dumps(compaction))
    # A teammate's file is a run of the session too (test_cline_teams.py), even one no call
    # in the session started (the session's warning says so).
    teammate = json.loads(SUBAGENT.read_text())
    teammate.update(agent="teammate", sessionId=f"{SESSION_ID}__teamtask__coder__a1B2c3",
                    taskType="team")  # fmt: skip
    (sessions / SESSION_ID / "coder__a1B2c3.messages.json").write_text(json.dumps(teammate))
    corpus = turnfold.scan(sessions, workers=1)
    rows = corpus.to_pandas().set_index("key")
    assert [Path(k).name for k in rows.index] == [f"{SESSION_ID}.messages.json"]
    session = rows.loc[str(sessions / SESSION_ID / SESSION.name)]
    assert (session["format"], session["agent"]) == ("cline-messages", "cline")
    assert rows["error"].isna().all()
    assert (session["tool_calls"], session["subagents"]) == (7, 1)
    assert session["cost_usd"] == pytest.approx(0.095913)


def test_C4_a_changed_sub_agent_file_or_manifest_reads_its_session_again(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(FOLDER / SESSION_ID, sessions / SESSION_ID)
    first = turnfold.scan(sessions, workers=1)
    assert (first.read, len(first.keys)) == (3, 1)  # the session, its sub-agent, its manifest
    child = sessions / SESSION_ID / SUBAGENT.name
    grown = json.loads(child.read_text())
    grown["messages"][-1]["metrics"]["cost"] = 0.5
    child.write_text(json.dumps(grown))
    again = turnfold.scan(sessions, workers=1)
    assert again.read == 2  # the sub-agent's file and its session
    assert again.to_pandas()["cost_usd"][0] == pytest.approx(0.089197 + 0.003341 + 0.5)
    manifest = sessions / SESSION_ID / f"{SESSION_ID}.json"
    facts = json.loads(manifest.read_text())
    facts["metadata"]["title"] = "Renamed"
    manifest.write_text(json.dumps(facts))
    assert turnfold.scan(sessions, workers=1).read == 2  # the manifest and its session
