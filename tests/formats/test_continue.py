"""Continue sessions (``continue`` format): the real session file ``cn`` 1.5.47
(``@continuedev/cli``) wrote playing the harness's ``work`` scenario against the scripted model
server (``tests/fixtures/continue/continue_recipe.py`` says how), and the shapes only the VS Code
and JetBrains extensions write (thinking items, ``<think>`` reasoning, context items, tool
messages, Continue's own usage names), written from ``core/index.d.ts``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import turnfold
from turnfold.corpus import scan
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

FIXTURES = Path(__file__).parents[1] / "fixtures" / "continue" / "work"
SESSIONS = FIXTURES / "sessions"
WORK = SESSIONS / "4b888bc9-986f-432a-9fe4-8f6b4db60a07.json"
TRUTH = json.loads((FIXTURES / "truth.txt").read_text())


def test_the_cli_session_holds_every_call_the_server_issued_with_its_outcome() -> None:
    transcript = turnfold.load(WORK)
    assert transcript.metadata["source_format"] == "continue"
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    issued = TRUTH["issued"]
    assert [c.call_id for c in calls] == [i["call_id"] for i in issued]
    assert [c.name for c in calls] == [i["name"] for i in issued]
    assert [c.args for c in calls] == [i["args"] for i in issued]
    assert [c.status for c in calls] == [
        "error" if i["outcome"] == "fail" else "success" for i in issued
    ]
    for call, sent in zip(calls, issued, strict=True):
        assert call.result is not None
        assert call.result.text is not None
        assert call.result.text.startswith(sent["result"][:200])
    failed = next(c for c in calls if c.status == "error")
    assert failed.args == {"command": "echo TF-FAIL-OUT; ls /tf-missing; exit 3"}
    assert failed.result is not None
    assert "exit code 3" in (failed.result.text or "")
    # The three calls of the first response are one batch; each later response its own.
    assert len({c.batch_id for c in calls[:3]}) == 1
    assert calls[3].batch_id != calls[0].batch_id


def test_the_cli_session_holds_the_prompts_and_texts_in_order() -> None:
    transcript = turnfold.load(WORK)
    users = [e.text for e in transcript.entries if isinstance(e, UserMessage)]
    assert users == [
        "TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
        "TF-SECOND: one more check after the resume, please.",
    ]
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    sent = [r["text"] for r in TRUTH["responses"] if r["text"]]
    assert [t.text for t in texts] == sent
    assert {t.model for t in texts} == {"fake-model"}
    # 1.5.47 keeps no reasoning_content of a Chat Completions stream: no thinking to show.
    assert not any(isinstance(e, Thinking) for e in transcript.entries)


def test_each_response_s_usage_is_the_server_s() -> None:
    transcript = turnfold.load(WORK)
    loaded = [
        e.usage
        for e in transcript.entries
        if isinstance(e, (AssistantText, ToolCall)) and e.usage is not None
    ]
    sent = [r["usage"] for r in TRUTH["responses"]]
    assert len(loaded) == len(sent)
    for usage, counts in zip(loaded, sent, strict=True):
        assert usage.input_tokens == counts["input_tokens"]
        assert usage.output_tokens == counts["output_tokens"]
        assert usage.cache_read_tokens == counts["cache_read_tokens"]
        assert usage.reasoning_tokens == counts["reasoning_tokens"]
    facts = session_facts(transcript)
    assert facts.agent == "Continue"
    assert facts.tokens["input_tokens"] == sum(c["input_tokens"] for c in sent)
    assert facts.tokens["cache_read_tokens"] == sum(c["cache_read_tokens"] for c in sent)
    # The CLI's own total: input and output as the responses sum them.
    assert transcript.metadata["session_usage"] == {
        "input_tokens": sum(c["input_tokens"] for c in sent),
        "output_tokens": sum(c["output_tokens"] for c in sent),
    }
    assert transcript.metadata["cost_usd"] > 0
    assert transcript.metadata["session_id"] == WORK.stem


def test_every_item_is_accounted_for() -> None:
    accounting = turnfold.load(WORK).accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.counts["item/user"] == {"mapped": 2}
    assert accounting.counts["item/assistant"] == {"mapped": 8}
    assert accounting.counts["item/editorState"] == {"ignored": 2}


def test_a_scan_of_the_sessions_folder_is_a_row_per_session_not_the_index(
    tmp_path: Path,
) -> None:
    root = tmp_path / ".continue" / "sessions"
    shutil.copytree(SESSIONS, root)
    document = json.loads(WORK.read_text())
    document["sessionId"] = "second"
    document["history"] = document["history"][:2]
    (root / "second.json").write_text(json.dumps(document))
    corpus = scan(tmp_path, workers=1, cache=False)  # a home folder: .continue is walked
    rows = list(corpus)
    # The index (sessions.json) is Continue's own file, no session: passed over, not counted as a
    # skipped file (corpus/discover.py AGENT_FILES).
    assert corpus.skipped == 0
    assert sorted(r["key"] for r in rows) == sorted(
        [str(root / WORK.name), str(root / "second.json")]
    )
    assert {r["format"] for r in rows} == {"continue"}
    assert all(r["error"] is None for r in rows)
    assert sorted(r["tool_calls"] for r in rows) == [3, 9]


# --- shapes the extensions write (core/index.d.ts, gui/src/redux/slices/sessionSlice.ts) ------


def _session(*history: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": "ext-1",
        "title": "Fix the parser",
        "workspaceDirectory": "file:///home/me/app",
        "history": list(history),
        **extra,
    }


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _state(call_id: str, name: str, status: str, output: str | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {
        "toolCallId": call_id,
        "toolCall": _call(call_id, name, {"filepath": "a.py"}),
        "status": status,
        "parsedArgs": {"filepath": "a.py"},
    }
    if output is not None:
        state["output"] = [{"name": "a.py", "description": "a.py", "content": output}]
    return state


EXTENSION = _session(
    {
        "message": {"role": "user", "content": [{"type": "text", "text": "Why does it fail?"}],
                    "id": "u1"},
        "contextItems": [
            {
                "name": "parser.py",
                "description": "src/parser.py",
                "content": "```python\ndef parse(): ...\n```",
                "id": {"providerTitle": "file", "itemId": "x"},
                "uri": {"type": "file", "value": "file:///home/me/app/src/parser.py"},
            }
        ],
        "editorState": {"type": "doc"},
        "modifiers": {"useCodebase": False, "noContext": True},
    },
    {
        "message": {"role": "thinking", "content": "", "redactedThinking": "ENCRYPTED",
                    "id": "t0"},
        "contextItems": [],
    },
    {
        "message": {"role": "thinking", "content": "The parser skips blank lines.",
                    "signature": "sig", "id": "t1"},
        "contextItems": [],
    },
    {
        "message": {
            "role": "assistant",
            "content": "Reading it.",
            "id": "a1",
            "toolCalls": [
                _call("c1", "read_file", {"filepath": "a.py"}),
                _call("c2", "edit_existing_file", {"filepath": "a.py"}),
                _call("c3", "run_terminal_command", {"command": "pytest"}),
            ],
            "usage": {
                "promptTokens": 900,
                "completionTokens": 40,
                "promptTokensDetails": {"cachedTokens": 500, "cacheWriteTokens": 100},
                "completionTokensDetails": {"reasoningTokens": 12},
            },
        },
        "contextItems": [],
        "promptLogs": [{"modelTitle": "Claude Sonnet", "modelProvider": "anthropic",
                        "prompt": "…", "completion": "…"}],
        "toolCallStates": [
            _state("c1", "read_file", "done", "def parse(): ..."),
            _state("c2", "edit_existing_file", "canceled"),
            _state("c3", "run_terminal_command", "errored", "Command failed: exit 1"),
        ],
        "reasoning": {"active": False, "text": "Look at the file first.", "startAt": 1750000000000,
                      "endAt": 1750000001000},
    },
    {
        "message": {"role": "tool", "content": "def parse(): ...", "toolCallId": "c1"},
        "contextItems": [],
    },
    {
        "message": {"role": "assistant", "content": "", "id": "a2",
                    "toolCalls": [_call("c4", "read_file", {"filepath": "b.py"})]},
        "contextItems": [],
        "toolCallStates": [_state("c4", "read_file", "calling")],
        "conversationSummary": "The user asked why the parser fails.",
        "brandNewField": True,
    },
    mode="agent",
    chatModelTitle="Claude Sonnet",
)  # fmt: skip


def test_the_extension_s_items_thinking_context_calls_and_statuses() -> None:
    transcript = turnfold.load(EXTENSION)
    assert transcript.metadata["source_format"] == "continue"
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "SystemNotice", "UserMessage", "Thinking", "Thinking", "Thinking", "AssistantText",
        "ToolCall", "ToolCall", "ToolCall", "ToolCall", "CompactionBoundary",
    ]  # fmt: skip
    notice = transcript.entries[0]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "attachment"
    assert "parser.py" in notice.text
    assert "src/parser.py" in notice.text
    assert notice.meta["content"].startswith("```python")
    user = transcript.entries[1]
    assert isinstance(user, UserMessage)
    assert user.text == "Why does it fail?"
    redacted, thought, reasoning = transcript.entries[2:5]
    assert isinstance(redacted, Thinking)
    assert redacted.form == "redacted"
    assert redacted.data == "ENCRYPTED"
    assert isinstance(thought, Thinking)
    assert thought.text == "The parser skips blank lines."
    assert isinstance(reasoning, Thinking)
    assert reasoning.text == "Look at the file first."
    assert reasoning.timestamp is not None
    assert reasoning.timestamp.startswith("2025-06-15")
    calls = transcript.tool_calls()
    assert [(c.call_id, c.status) for c in calls] == [
        ("c1", "success"), ("c2", "cancelled"), ("c3", "error"), ("c4", "unknown"),
    ]  # fmt: skip
    assert calls[0].result is not None
    assert calls[0].result.text == "def parse(): ..."
    assert calls[2].result is not None
    assert "exit 1" in (calls[2].result.text or "")
    assert calls[2].args == {"filepath": "a.py"}  # parsedArgs, as the state settled them
    text = transcript.entries[5]
    assert isinstance(text, AssistantText)
    assert text.model == "Claude Sonnet"
    assert text.usage is not None
    assert (text.usage.input_tokens, text.usage.cache_read_tokens) == (900, 500)
    assert (text.usage.cache_write_tokens, text.usage.reasoning_tokens) == (100, 12)
    boundary = transcript.entries[-1]
    assert isinstance(boundary, CompactionBoundary)
    assert boundary.summary == "The user asked why the parser fails."
    assert transcript.metadata["mode"] == "agent"
    assert transcript.metadata["cwd"] == "file:///home/me/app"
    # A field of a newer version is said once; the others are accounted for.
    assert [w.reason for w in transcript.warnings] == [
        "history[5]: item field 'brandNewField' not read"
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_a_tool_message_is_the_result_where_the_state_has_none() -> None:
    session = _session(
        {"message": {"role": "user", "content": "go"}, "contextItems": []},
        {
            "message": {"role": "assistant", "content": "",
                        "toolCalls": [_call("c1", "read_file", {"filepath": "a.py"})]},
            "contextItems": [],
        },
        {"message": {"role": "tool", "content": "TF-CONTENT", "toolCallId": "c1"},
         "contextItems": []},
        {"message": {"role": "tool", "content": "stray", "toolCallId": "nope"},
         "contextItems": []},
    )  # fmt: skip
    transcript = turnfold.load(session)
    (call,) = transcript.tool_calls()
    assert call.status == "success"
    assert call.result is not None
    assert call.result.text == "TF-CONTENT"
    assert call.args == {"filepath": "a.py"}
    assert any("a tool result for no call ('nope')" in w.reason for w in transcript.warnings)


def test_a_call_never_run_at_the_end_has_no_outcome() -> None:
    session = _session(
        {"message": {"role": "user", "content": "go"}, "contextItems": []},
        {
            "message": {"role": "assistant", "content": "",
                        "toolCalls": [_call("c1", "read_file", {"filepath": "a.py"})]},
            "contextItems": [],
            "toolCallStates": [_state("c1", "read_file", "generated")],
        },
    )  # fmt: skip
    (call,) = turnfold.load(session).tool_calls()
    assert call.status == "unknown"
    assert call.result is None


def test_a_reasoning_time_past_the_calendar_is_no_time_not_a_crash() -> None:
    session = _session(
        {"message": {"role": "user", "content": "hi"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "ok"}, "contextItems": [],
         "reasoning": {"text": "thinking it over", "active": False, "startAt": 1e30}},
    )  # fmt: skip
    entries = turnfold.load(session).entries
    thinking = next(e for e in entries if isinstance(e, Thinking))
    assert thinking.text == "thinking it over"
    assert thinking.timestamp is None


def test_an_unknown_role_is_warned_of_and_the_rest_read() -> None:
    session = _session(
        {"message": {"role": "user", "content": "hi"}, "contextItems": []},
        {"message": {"role": "narrator", "content": "??"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "hello"}, "contextItems": []},
    )
    transcript = turnfold.load(session)
    assert [type(e).__name__ for e in transcript.entries] == ["UserMessage", "AssistantText"]
    assert any("unknown role 'narrator'" in w.reason for w in transcript.warnings)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["item/narrator"] == {"warned": 1}


def test_detection_takes_the_session_not_other_sessions_with_a_session_id() -> None:
    # Gemini CLI's legacy file has sessionId and messages; a Continue session has no messages.
    message = {"id": "m1", "type": "user", "content": "hi", "timestamp": "2025-01-01T00:00:00Z"}
    gemini = {"sessionId": "s", "projectHash": "h", "messages": [message]}
    assert turnfold.load(gemini).metadata["source_format"] == "gemini"
    # A history of other items is no Continue session.
    other = {"sessionId": "s", "history": [{"role": "user", "content": "hi"}]}
    assert turnfold.load(other).metadata["source_format"] != "continue"
    assert turnfold.load(_session()).metadata["source_format"] == "continue"


def test_each_call_is_described_by_what_it_acted_on_relative_to_the_work_folder() -> None:
    # cn 1.5.47 names its paths filepath / dirpath; a Search is its pattern, not its folder.
    calls = turnfold.load(WORK).tool_calls()
    assert [(c.name, c.description) for c in calls] == [
        ("Read", "notes.txt"),
        ("Search", "TF-NEEDLE"),
        ("List", "."),  # the work folder itself
        ("Bash", "printf 'TF-OK-%s\\n' 23"),
        ("Bash", "echo TF-FAIL-OUT; ls /tf-missing; exit 3"),
        ("Edit", "notes.txt"),
        ("Write", "new.txt"),
        ("Bash", "seq -f 'TF-LINE-%g' 1 6000"),
        ("Bash", "echo TF-AGAIN"),
    ]


def test_the_extension_s_tools_are_described_by_their_path_arguments() -> None:
    session = _session(
        {"message": {"role": "user", "content": "look"}, "contextItems": []},
        {
            "message": {
                "role": "assistant",
                "content": "",
                "toolCalls": [
                    _call("c1", "ls", {"dirPath": "/home/me/app/src", "recursive": False}),
                    _call("c2", "view_subdirectory", {"directory_path": "/home/me/app/lib"}),
                    _call("c3", "create_new_file", {"filepath": "a.py", "contents": "x"}),
                    # the cn CLI's sub-agent (extensions/cli/docs/subagents.md)
                    _call(
                        "c4",
                        "Subagent",
                        {
                            "description": "Research API patterns",
                            "prompt": "Document every endpoint.",
                            "subagent_name": "general",
                        },
                    ),
                ],
            },
            "contextItems": [],
        },
    )  # the extensions' workspaceDirectory is a file:// URI
    calls = turnfold.load(session, format="continue").tool_calls()
    assert [c.description for c in calls] == ["src", "lib", "a.py", "Research API patterns"]
    assert [tool_category(c.name) for c in calls] == ["list", "list", "write", "agent"]
