"""OpenHands V1 conversations, as the OpenHands Software Agent SDK persists them (spec H-3).

The fixture is a real run (``tests/fixtures/harnesses/openhands-sdk/README.md``); the other
shapes are written here in the SDK's own field names (``openhands/sdk/event/``), one event
file each, as ``EventLog`` writes them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats.harnesses import openhands_sdk
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.session import session_facts

FIXTURE = Path(__file__).parents[1] / "fixtures" / "harnesses" / "openhands-sdk"
CONVERSATION = FIXTURE / "conversations" / "2e6c222a6c254b28bab45a8281ad9b15"
EVENTS_FILE = FIXTURE / "openhands-sdk_v1.58.2_events.jsonl"


def _calls(transcript: Transcript) -> list[ToolCall]:
    return transcript.tool_calls()


def _write(folder: Path, events: list[dict[str, Any]], state: dict[str, Any] | None) -> Path:
    """A conversation folder: ``base_state.json`` (unless None) and one file per event."""
    (folder / "events").mkdir(parents=True)
    if state is not None:
        (folder / "base_state.json").write_text(json.dumps(state), encoding="utf-8")
    for index, event in enumerate(events):
        name = f"event-{index:05d}-{event.get('id', f'{index:08x}-0000')}.json"
        (folder / "events" / name).write_text(json.dumps(event), encoding="utf-8")
    return folder


def _state(**fields: Any) -> dict[str, Any]:
    return {
        "id": "6f1c0c8e-0000-4000-8000-000000000001",
        "agent": {"llm": {"model": "anthropic/claude-sonnet-4-5"}, "kind": "Agent"},
        "workspace": {"working_dir": "/repo", "kind": "LocalWorkspace"},
        "execution_status": "finished",
        **fields,
    }


def _user(event_id: str, text: str, **fields: Any) -> dict[str, Any]:
    return {"id": event_id, "timestamp": "2026-01-01T10:00:00", "source": "user",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "kind": "MessageEvent", **fields}  # fmt: skip


def _reply(event_id: str, text: str, **fields: Any) -> dict[str, Any]:
    return {"id": event_id, "timestamp": "2026-01-01T10:00:05", "source": "agent",
            "llm_message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "llm_response_id": f"resp-{event_id}", "kind": "MessageEvent", **fields}  # fmt: skip


def _action(event_id: str, tool: str, args: dict[str, Any], **fields: Any) -> dict[str, Any]:
    call_id = f"call-{event_id}"
    return {"id": event_id, "timestamp": "2026-01-01T10:00:01", "source": "agent",
            "thought": [], "tool_name": tool, "tool_call_id": call_id,
            "tool_call": {"id": call_id, "name": tool, "arguments": json.dumps(args)},
            "llm_response_id": f"resp-{event_id}", "kind": "ActionEvent", **fields}  # fmt: skip


def _terminal(event_id: str, action: str, **observation: Any) -> dict[str, Any]:
    return {"id": event_id, "timestamp": "2026-01-01T10:00:02", "source": "environment",
            "tool_name": "terminal", "tool_call_id": f"call-{action}", "action_id": action,
            "observation": {"content": [{"type": "text", "text": "out"}], "is_error": False,
                            "kind": "TerminalObservation", **observation},
            "kind": "ObservationEvent"}  # fmt: skip


# --- the real run -----------------------------------------------------------------------------


def test_H3_a_real_conversation_shows_every_step_the_agent_took() -> None:
    transcript = openhands_sdk.read_path(CONVERSATION)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    calls = _calls(transcript)
    assert [(c.name, c.description, c.status) for c in calls] == [
        ("task_tracker", "plan", "success"),
        ("terminal", "ls -la", "success"),
        ("terminal", "pwd", "success"),
        ("file_editor create", "hello.py", "success"),
        ("terminal", "python3 hello.py", "success"),
        ("file_editor str_replace", "hello.py", "success"),
        ("terminal", "python3 missing.py", "error"),  # exit code 2
        ("no_such_tool", None, "error"),  # an AgentErrorEvent: the tool does not exist
        ("file_editor view", "hello.py", "success"),
        ("task", "count lines", "success"),
        ("terminal", "rm -rf build", "cancelled"),  # rejected in confirmation mode
    ]
    tracker, ls, pwd, create, _, replace, missing, unknown, _, task, rejected = calls
    assert ls.batch_id == pwd.batch_id == "chatcmpl-main-1"  # one response, two calls
    assert ls.meta["summary"] == "list the workspace"  # the model's own, not an argument
    assert ls.args == {"command": "ls -la"}
    assert tracker.result is not None
    assert tracker.result.kind == "todo"
    assert tracker.result.text == "[~] Write hello.py\n[ ] Run it"
    assert create.result is not None
    assert create.result.kind == "diff"
    assert replace.result is not None
    assert replace.result.kind == "diff"
    assert "-print('hello')\n+print('hello, world')" in (replace.result.text or "")
    assert missing.result is not None
    assert (missing.result.text or "").endswith("[The command completed with exit code 2.]")
    assert unknown.result is not None
    assert "not found" in (unknown.result.text or "")
    assert rejected.result is not None
    assert rejected.result.text == "Not now: keep the build directory."
    assert task.result is not None
    assert task.result.kind == "subagent"
    assert task.subagent is not None
    assert task.subagent.agent_id == "task_00000001"
    child = task.subagent.transcript
    assert child is not None
    assert task.subagent.tool_count == 1
    assert [type(e).__name__ for e in child.entries] == ["UserMessage", "ToolCall", "AssistantText"]
    assert child.tool_calls()[0].description == "wc -l hello.py"
    kinds = [type(e) for e in transcript.entries]
    assert kinds.count(CompactionBoundary) == 2
    assert kinds.count(UserMessage) == 2
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert "Done: hello.py prints a greeting." in texts  # the finish tool's message
    thoughts = [e.text for e in transcript.entries if isinstance(e, Thinking)]
    assert thoughts == ["The user wants a tiny script; plan, then build it.",  # reasoning_content
                        "The script works; time to wrap up."]  # the think tool  # fmt: skip


def test_U1_each_response_s_usage_sits_on_its_entries_once() -> None:
    transcript = openhands_sdk.read_path(CONVERSATION)
    carriers = [e for e in transcript.entries if getattr(e, "usage", None) is not None]
    ids = [e.usage.response_id for e in carriers]  # type: ignore[attr-defined]
    assert ids == [f"chatcmpl-main-{n}" for n in range(13)]
    first = carriers[0]
    assert isinstance(first, AssistantText)
    assert first.model == "openai/scripted-model"
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.output_tokens) == (1000, 20)
    assert (first.usage.cache_read_tokens, first.usage.reasoning_tokens) == (500, 5)
    # The session's own totals, the condenser's two responses included, a sub-agent's not.
    agent, condenser = sum(1000 + 100 * n for n in range(13)), 1000 + 1100
    assert transcript.metadata["usage"]["input_tokens"] == agent + condenser
    assert "cost_usd" not in transcript.metadata  # litellm had no price for the model


def test_H6_the_conversation_s_metadata() -> None:
    metadata = openhands_sdk.read_path(CONVERSATION).metadata
    assert metadata["source_format"] == "openhands-sdk"
    assert metadata["session_id"] == "2e6c222a-6c25-4b28-bab4-5a8281ad9b15"
    assert metadata["model"] == "openai/scripted-model"
    assert metadata["cwd"] == "/tmp/openhands-sdk-fixture/workspace"
    assert metadata["execution_status"] == "finished"
    assert metadata["system"].startswith("<SOUL>")


def test_L2_the_folder_its_events_its_state_and_any_event_file_read_the_same() -> None:
    whole = openhands_sdk.read_path(CONVERSATION)
    assert openhands_sdk.read_path(CONVERSATION / "events") == whole
    assert turnfold.load(CONVERSATION / "base_state.json") == whole
    event = sorted((CONVERSATION / "events").glob("event-*.json"))[7]
    assert turnfold.load(event) == whole
    assert turnfold.load(event, format="openhands-sdk") == whole  # through read_path


def test_L2_load_of_a_conversation_folder() -> None:
    assert turnfold.load(CONVERSATION) == openhands_sdk.read_path(CONVERSATION)
    assert turnfold.load(str(CONVERSATION / "events")) == openhands_sdk.read_path(CONVERSATION)
    with pytest.raises(IsADirectoryError):  # a folder no format reads as one run
        turnfold.load(CONVERSATION.parent)


def test_L2_events_without_their_folder_read_in_order() -> None:
    from_file = turnfold.load(EVENTS_FILE)
    whole = openhands_sdk.read_path(CONVERSATION)
    assert from_file.metadata["source_format"] == "openhands-sdk"
    assert [(c.name, c.status) for c in _calls(from_file)] == [
        (c.name, c.status) for c in _calls(whole)
    ]
    assert all(getattr(e, "usage", None) is None for e in from_file.entries)  # in base_state
    task = next(c for c in _calls(from_file) if c.name == "task")
    assert task.subagent is not None
    assert task.subagent.steps_missing
    lines = [json.loads(line) for line in EVENTS_FILE.read_text().splitlines()]
    page = turnfold.load(json.dumps({"items": lines, "next_page_id": None}))  # the agent server's
    assert page.entries == from_file.entries


FORKED_EVENTS = FIXTURE / "openhands-sdk_v1.58.2_navigate-to_forked-events.jsonl"


def test_H3_events_that_fork_without_their_folder_show_the_last_event_s_branch() -> None:
    """The real SDK's events after ``navigate_to`` back to the system prompt and a new prompt:
    without ``base_state.json`` no head says which branch is active; the last event's is read,
    the first prompt and its answer are accounted as off the branch, and the load says so."""
    transcript = turnfold.load(FORKED_EVENTS)
    assert [e.text for e in transcript.entries] == ["Say hello in French.", "Bonjour !"]  # type: ignore[attr-defined]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["(off the active branch)"] == {"ignored": 2}
    assert any("fork" in w.reason and "last event" in w.reason for w in transcript.warnings)
    lines = [json.loads(line) for line in FORKED_EVENTS.read_text().splitlines()]
    assert turnfold.load(json.dumps(lines)).entries == transcript.entries  # one JSON array


def test_H3_events_that_do_not_fork_are_all_read_without_a_word() -> None:
    transcript = turnfold.load(EVENTS_FILE)
    assert not any("fork" in w.reason for w in transcript.warnings)
    assert transcript.accounting is not None
    assert "(off the active branch)" not in transcript.accounting.counts


def test_H3_a_page_of_events_that_begins_mid_log_is_read_whole() -> None:
    """The agent server's page of the log's later events: the first one's parent is on an
    earlier page, which ends the branch rather than breaking it."""
    events = [
        _user("b0000002-0000", "Go on", parent_id="b0000001-0000"),
        _reply("b0000003-0000", "Done.", parent_id="b0000002-0000"),
        {"id": "b0000004-0000", "kind": "ConversationStateUpdateEvent", "source": "environment",
         "key": "execution_status", "value": "finished", "parent_id": "b0000002-0000"},
    ]  # fmt: skip
    transcript = turnfold.load(json.dumps({"items": events, "next_page_id": None}))
    assert [e.text for e in transcript.entries] == ["Go on", "Done."]  # type: ignore[attr-defined]
    assert transcript.warnings == []


# --- shapes the run did not write ---------------------------------------------------------------


def test_H3_only_the_active_branch_is_shown(tmp_path: Path) -> None:
    """``navigate_to`` moved the head back to the prompt and the agent answered again: the
    first answer is on a branch the conversation left."""
    events = [
        _user("a0000001-0000", "Say hi"),
        _reply("a0000002-0000", "Hello!", parent_id="a0000001-0000"),
        _reply("a0000003-0000", "Hi there.", parent_id="a0000001-0000"),
    ]
    folder = _write(tmp_path / "c", events, _state(leaf_event_id="a0000003-0000"))
    transcript = openhands_sdk.read_path(folder)
    assert [e.text for e in transcript.entries] == ["Say hi", "Hi there."]  # type: ignore[attr-defined]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["(off the active branch)"] == {"ignored": 1}
    unbranched = _write(tmp_path / "d", events, _state())  # no head: every event
    assert len(openhands_sdk.read_path(unbranched).entries) == 3


def test_H3_reasoning_in_each_form_the_sdk_keeps(tmp_path: Path) -> None:
    events = [
        _reply("b0000001-0000", "A", thinking_blocks=[]),
        _reply("b0000002-0000", "B"),
        _reply("b0000003-0000", "C"),
        _reply("b0000004-0000", "D"),
    ]
    events[0]["llm_message"]["thinking_blocks"] = [
        {"type": "thinking", "thinking": "Plan it.", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    events[0]["llm_message"]["reasoning_content"] = "Plan it."  # litellm's copy: shown once
    events[1]["llm_message"]["responses_reasoning_item"] = {"summary": ["Short."]}
    events[2]["llm_message"]["responses_reasoning_item"] = {
        "summary": [],
        "encrypted_content": "gAAA",
    }
    events[3]["llm_message"]["reasoning_content"] = "Raw thoughts."
    transcript = openhands_sdk.read_path(_write(tmp_path / "c", events, _state()))
    thinking = [(e.form, e.text, e.data) for e in transcript.entries if isinstance(e, Thinking)]
    assert thinking == [("text", "Plan it.", None), ("redacted", "", "opaque"),
                        ("summary", "Short.", None), ("encrypted", "", "gAAA"),
                        ("text", "Raw thoughts.", None)]  # fmt: skip


def test_H3_images_of_a_prompt(tmp_path: Path) -> None:
    event = _user("c0000001-0000", "What is this?")
    event["llm_message"]["content"].append(
        {"type": "image", "image_urls": ["data:image/png;base64,iVBO", "https://x.test/a.png"]}
    )
    (prompt,) = openhands_sdk.read_path(_write(tmp_path / "c", [event], _state())).entries
    assert isinstance(prompt, UserMessage)
    assert [(i.media_type, i.data) for i in prompt.images] == [("image/png", "iVBO")]
    assert prompt.meta["image_urls"] == ["https://x.test/a.png"]


@pytest.mark.parametrize(
    ("observation", "status"),
    [
        ({"exit_code": 0}, "success"),
        ({"exit_code": 1}, "error"),
        ({"exit_code": -1}, "error"),  # still running when the tool returned (V0's rule)
        ({"exit_code": 0, "timeout": True}, "error"),
        ({"exit_code": 0, "is_error": True}, "error"),
        ({"is_error": None}, "unknown"),
    ],
)
def test_H3_a_command_s_status(observation: dict[str, Any], status: str) -> None:
    assert openhands_sdk.status_of({"kind": "TerminalObservation", "is_error": False,
                                    **observation}) == status  # fmt: skip


def test_H3_errors_pauses_interrupts_and_hooks(tmp_path: Path) -> None:
    events = [
        _user("d0000001-0000", "Run it"),
        _action("d0000002-0000", "terminal", {"command": "sleep 100"}),
        {"id": "d0000003-0000", "source": "user", "kind": "InterruptEvent"},
        {"id": "d0000004-0000", "source": "user", "kind": "PauseEvent"},
        {"id": "d0000005-0000", "source": "hook", "kind": "HookExecutionEvent",
         "hook_event_type": "PreToolUse", "hook_command": "check.sh", "tool_name": "terminal",
         "success": True, "blocked": True, "exit_code": 2, "reason": "rm is not allowed"},
        {"id": "d0000006-0000", "source": "hook", "kind": "HookExecutionEvent",
         "hook_event_type": "Stop", "hook_command": "ok.sh", "success": True, "exit_code": 0},
        {"id": "d0000007-0000", "source": "environment", "kind": "ConversationErrorEvent",
         "code": "LLMBadRequestError", "detail": "context window exceeded"},
        {"id": "d0000008-0000", "source": "agent", "kind": "AgentErrorEvent",
         "tool_name": "terminal", "tool_call_id": "nowhere", "error": "lost"},
        {"id": "d0000009-0000", "source": "environment", "kind": "CondensationRequest"},
        {"id": "d0000010-0000", "source": "environment", "kind": "Condensation",
         "forgotten_event_ids": ["d0000001-0000"], "summary": "S", "llm_response_id": "r"},
    ]  # fmt: skip
    transcript = openhands_sdk.read_path(_write(tmp_path / "c", events, _state()))
    assert transcript.warnings == []
    (call,) = _calls(transcript)
    assert call.status == "cancelled"  # the interrupt cut it off
    shown = [(type(e).__name__, getattr(e, "text", None) or getattr(e, "message", None))
             for e in transcript.entries[2:]]  # fmt: skip
    assert shown == [
        ("AbortMarker", None),
        ("SystemNotice", "The user paused the agent."),
        ("SystemNotice", "The PreToolUse hook (terminal) blocked it: rm is not allowed"),
        ("AssistantError", "context window exceeded"),
        ("AssistantError", "lost"),
        ("CompactionBoundary", None),
    ]
    assert isinstance(transcript.entries[2], AbortMarker)
    assert isinstance(transcript.entries[4], SystemNotice)
    assert transcript.entries[4].level == "warning"
    assert isinstance(transcript.entries[5], AssistantError)
    boundary = transcript.entries[-1]
    assert isinstance(boundary, CompactionBoundary)
    assert boundary.summary == "S"
    assert transcript.accounting is not None
    assert transcript.accounting.counts["HookExecutionEvent/success"] == {"ignored": 1}


def test_H3_an_acp_agent_s_call_is_updated_by_its_later_events(tmp_path: Path) -> None:
    started = {"id": "e0000001-0000", "source": "agent", "kind": "ACPToolCallEvent",
               "tool_call_id": "tc1", "title": "Run `make`", "tool_kind": "execute",
               "status": "in_progress", "raw_input": {"command": "make"}}  # fmt: skip
    ended = {**started, "id": "e0000002-0000", "status": "failed", "raw_output": "Error 2",
             "is_error": True}  # fmt: skip
    transcript = openhands_sdk.read_path(_write(tmp_path / "c", [started, ended], _state()))
    (call,) = _calls(transcript)
    assert (call.name, call.description, call.status) == ("execute", "Run `make`", "error")
    assert call.result is not None
    assert call.result.text == "Error 2"


def test_L4_what_the_folder_holds_besides_its_events_is_said(tmp_path: Path) -> None:
    events = [_user("f0000001-0000", "hi"), {"id": "f0000002-0000", "kind": "NewEvent"}]
    folder = _write(tmp_path / "c", events, _state())
    (folder / "events" / "notes.txt").write_text("x")
    (folder / "events" / "event-00003-0000000a-0000.json").write_text("{not json")
    (folder / "events" / ".eventlog.lock").write_text("")  # the log's own: passed over
    transcript = openhands_sdk.read_path(folder)
    reasons = [(w.line, w.reason) for w in transcript.warnings]
    assert reasons == [
        (None, f"notes.txt in {folder / 'events'}: not an event file, not read"),
        (None, f"no event file for index 2 of {folder / 'events'} (the SDK stops there): the "
               "events after it are read"),
        (2, "unknown event kind 'NewEvent' skipped"),
        (4, "event-00003-0000000a-0000.json: invalid JSON: Expecting property name enclosed "
            "in double quotes: line 1 column 2 (char 1)"),
    ]  # fmt: skip
    assert [e.text for e in transcript.entries] == ["hi"]  # type: ignore[attr-defined]


def test_H3_a_priced_run_records_its_cost(tmp_path: Path) -> None:
    usage = {"model": "m", "prompt_tokens": 10, "completion_tokens": 2, "response_id": "r1"}
    stats = {"usage_to_metrics": {
        "agent": {"accumulated_cost": 0.25, "costs": [{"model": "m", "cost": 0.25}],
                  "accumulated_token_usage": usage, "token_usages": [usage]},
        "task:task_00000001": {"accumulated_cost": 0.5, "costs": [{"model": "m", "cost": 0.5}],
                               "accumulated_token_usage": {**usage, "prompt_tokens": 99}},
    }}  # fmt: skip
    folder = _write(tmp_path / "c", [_reply("a3000001-0000", "ok")], _state(stats=stats))
    metadata = openhands_sdk.read_path(folder).metadata
    assert metadata["cost_usd"] == 0.75  # the sub-agent's included, as the SDK totals it
    assert metadata["usage"] == {"input_tokens": 10, "output_tokens": 2}  # its own apart


def test_H3_a_task_whose_conversation_is_gone_says_its_steps_are_missing(tmp_path: Path) -> None:
    events = [_action("a1000001-0000", "task", {"prompt": "Look around"})]
    folder = _write(tmp_path / "c", events, _state())
    _write(folder / "subagents" / "abc", [_user("a2000001-0000", "Something else")], _state())
    transcript = openhands_sdk.read_path(folder)
    (call,) = _calls(transcript)
    assert call.subagent is not None
    assert call.subagent.steps_missing
    assert [w.reason for w in transcript.warnings] == [
        f"sub-agent conversation {_state()['id']} answers no task or delegate call: not shown"
    ]


# --- a scan -----------------------------------------------------------------------------------


def test_C1_discover_gives_one_row_per_conversation_not_per_event_file(tmp_path: Path) -> None:
    root = tmp_path / "conversations"
    shutil.copytree(CONVERSATION, root / CONVERSATION.name)
    shutil.copytree(CONVERSATION, root / "0123456789abcdef0123456789abcdef")
    rows = turnfold.scan(root, workers=1, cache=False)
    assert sorted(row["key"] for row in rows) == sorted(
        str(root / name / "base_state.json") for name in (CONVERSATION.name,
                                                           "0123456789abcdef0123456789abcdef")
    )  # fmt: skip
    assert all(row["error"] is None for row in rows)
    # A glob names every file: the event files and the sub-agent's state are their parent's.
    assert len(turnfold.scan(str(root / "**"), workers=1, cache=False)) == 2


def test_L4_an_index_named_far_beyond_the_others_is_not_counted_up_to(tmp_path: Path) -> None:
    """The first missing index is looked for among len(found) + 1, not up to the largest."""
    folder = _write(tmp_path / "c", [_user("f1000001-0000", "hi")], _state())
    (folder / "events" / "event-99999999999-abcdef01.json").write_text(
        json.dumps(_reply("abcdef01", "late"))
    )
    transcript = openhands_sdk.read_path(folder)  # without the bound: a loop of 10**11
    assert [w.reason for w in transcript.warnings] == [
        f"no event file for index 1 of {folder / 'events'} (the SDK stops there): "
        "the events after it are read"
    ]
    assert [e.text for e in transcript.entries] == ["hi", "late"]  # type: ignore[attr-defined]


def test_H3_events_written_after_the_head_that_descend_from_it_are_read(tmp_path: Path) -> None:
    events = [
        _user("a4000001-0000", "Say hi"),
        _reply("a4000002-0000", "Hello!", parent_id="a4000001-0000"),
        _reply("a4000003-0000", "And more.", parent_id="a4000002-0000"),
        _reply("a4000004-0000", "Elsewhere.", parent_id="a4000001-0000"),
    ]
    folder = _write(tmp_path / "c", events, _state(leaf_event_id="a4000002-0000"))
    transcript = openhands_sdk.read_path(folder)
    assert [e.text for e in transcript.entries] == ["Say hi", "Hello!", "And more."]  # type: ignore[attr-defined]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["(off the active branch)"] == {"ignored": 1}


def test_H3_an_edit_s_diff_breaks_lines_at_newlines_only(tmp_path: Path) -> None:
    observation = {"command": "str_replace", "path": "/repo/a.txt", "prev_exist": True,
                   "old_content": "a\x0cb\n", "new_content": "a\x0cc\n"}  # fmt: skip
    diff = openhands_sdk._edit_diff(observation, "/repo")
    assert diff is not None
    assert diff.split("\n")[3:] == ["-a\x0cb", "+a\x0cc", ""]  # splitlines: "-a", "-b", …


def test_H3_tasks_of_one_prompt_get_the_conversations_in_the_order_they_began(
    tmp_path: Path,
) -> None:
    events = [
        _action("a5000001-0000", "task", {"prompt": "Look"}),
        _action("a5000002-0000", "task", {"prompt": "Look"}),
    ]
    folder = _write(tmp_path / "c", events, _state())
    # The folder of the later conversation sorts first by name (ids are random).
    _write(
        folder / "subagents" / "0a",
        [
            _user("a6000002-0000", "Look", timestamp="2026-01-01T10:05:00"),
            _reply("a6000003-0000", "second"),
        ],
        _state(),
    )
    _write(
        folder / "subagents" / "ff",
        [
            _user("a6000001-0000", "Look", timestamp="2026-01-01T10:01:00"),
            _reply("a6000004-0000", "first"),
        ],
        _state(),
    )
    first, second = _calls(openhands_sdk.read_path(folder))
    texts = []
    for call in (first, second):
        assert call.subagent is not None
        assert call.subagent.transcript is not None
        entries = call.subagent.transcript.entries
        texts.append([e.text for e in entries if isinstance(e, AssistantText)])
    assert texts == [["first"], ["second"]]


def test_H3_a_notice_keeps_its_image_urls_and_says_its_images_are_lost(tmp_path: Path) -> None:
    event = _user("c1000001-0000", "A hook says", source="hook")
    event["llm_message"]["content"].append(
        {"type": "image", "image_urls": ["data:image/png;base64,iVBO", "https://x.test/a.png"]}
    )
    transcript = openhands_sdk.read_path(_write(tmp_path / "c", [event], _state()))
    (notice,) = transcript.entries
    assert isinstance(notice, SystemNotice)
    assert notice.meta["image_urls"] == ["https://x.test/a.png"]
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (1, "1 image(s) of a hook message not shown")
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["MessageEvent"] == {"warned": 1}


def test_U1_a_prompt_count_without_its_cache_writes_gets_them(tmp_path: Path) -> None:
    """The SDK records litellm's ``prompt_tokens`` as is, which some litellm releases give an
    Anthropic model without the cache writes: a count below its cached parts gets them added
    (:func:`openhands_sdk.litellm_prompt_tokens`), one that holds them is kept."""
    apart = {"model": "m", "prompt_tokens": 4, "completion_tokens": 115, "cache_read_tokens": 0,
             "cache_write_tokens": 6553, "response_id": "resp-a3000001-0000"}  # fmt: skip
    within = {**apart, "prompt_tokens": 6559, "cache_read_tokens": 6553, "cache_write_tokens": 0}
    stats = {"usage_to_metrics": {"agent": {"accumulated_token_usage": apart,
                                            "token_usages": [apart]}}}  # fmt: skip
    folder = _write(tmp_path / "c", [_reply("a3000001-0000", "ok")], _state(stats=stats))
    transcript = openhands_sdk.read_path(folder)
    reply = transcript.entries[0]
    assert isinstance(reply, AssistantText)
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.cache_write_tokens) == (6557, 6553)
    assert transcript.metadata["usage"]["input_tokens"] == 6557
    kept = openhands_sdk._usage(within)
    assert kept is not None
    assert kept.input_tokens == 6559


#: A real conversation resumed in a second process (README: the same ``conversation_id`` and
#: ``persistence_dir``, the SDK's ``10_persistence.py``): one call and an answer each round.
RESUMED = FIXTURE / "resumed" / "5e5e5e5e000040008000000000000001"


def test_H3_a_conversation_resumed_in_a_new_process_goes_on_as_further_turns_of_one_run() -> None:
    """The resumed process appends to the same ``events/`` (no second system prompt) and
    saves one ``base_state.json`` whose totals are both rounds': one run of two turns, each
    round's call paired with its outcome, each round's answer its turn's."""
    transcript = openhands_sdk.read_path(RESUMED)
    assert transcript.warnings == []
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "Run the first check.",
        "Now run the second check.",
    ]
    assert [(c.call_id, c.args["command"], c.status) for c in _calls(transcript)] == [
        ("call_first_0", "echo first-round", "success"),
        ("call_second_0", "ls /missing-second-round", "error"),
    ]
    answers = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert answers == [
        "The first round printed first-round.",
        "The second round ran after the resume; its command failed (exit code 2).",
    ]
    carriers = [e for e in transcript.entries if getattr(e, "usage", None) is not None]
    assert [e.usage.response_id for e in carriers] == [  # type: ignore[attr-defined]
        "chatcmpl-first-0", "chatcmpl-first-1", "chatcmpl-second-0", "chatcmpl-second-1"
    ]  # fmt: skip
    # base_state.json's totals are the conversation's, the first process's responses included.
    assert transcript.metadata["usage"]["input_tokens"] == 1000 + 1100 + 2000 + 2100
    facts = session_facts(transcript)
    assert (facts.turns, facts.tool_calls, facts.failed_tools) == (2, 2, 1)
    rows = turnfold.scan(RESUMED.parent, workers=1, cache=False).to_pandas()
    assert rows[["turns", "tool_calls", "failed_tools", "input_tokens"]].values.tolist() == [
        [2, 2, 1, 6200]
    ]
