"""OpenAI Chat Completions (``format="openai"``) and Responses API (``format="openai-responses"``)
message lists (spec L-2.5), their builders (L-5) and honest statuses (L-3)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptFormatError,
    UserMessage,
)
from turnfold.formats import openai_chat
from turnfold.formats.openai_chat import OpenAIChatBuilder
from turnfold.formats.openai_responses import ResponsesBuilder
from turnfold.model import TranscriptChange
from turnfold.session import session_facts

PNG = "data:image/png;base64,iVBORw0KGgo="


def fn_call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


CHAT = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "What files are here?"},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "I should list the directory.",
        "tool_calls": [
            fn_call("call_ls", "exec_command", cmd="ls"),
            fn_call("call_rd", "read_file", path="a.txt"),
        ],
    },
    {"role": "tool", "tool_call_id": "call_ls", "content": "a.txt\nb.txt"},
    {"role": "tool", "tool_call_id": "call_rd", "content": [{"type": "text", "text": "hello"}]},
    {"role": "assistant", "content": "There are two files: a.txt and b.txt."},
]


def of(transcript: Transcript, kind: type[Any]) -> list[Any]:
    return [e for e in transcript if isinstance(e, kind)]


# --- Chat Completions -----------------------------------------------------------------------------


def test_L2_openai_chat_list_with_tool_calls() -> None:
    before = copy.deepcopy(CHAT)
    t = turnfold.load(CHAT)
    assert before == CHAT  # L-4: nothing the user passed is modified
    assert t.metadata == {"source_format": "openai", "system": "You are a coding agent."}
    assert [e.kind for e in t] == ["user", "thinking", "tool_call", "tool_call", "assistant"]
    thinking = of(t, Thinking)[0]
    assert (thinking.form, thinking.text) == ("text", "I should list the directory.")
    ls, rd = t.tool_calls()
    assert (ls.call_id, ls.name, ls.args, ls.description) == (
        "call_ls",
        "exec_command",
        {"cmd": "ls"},
        "ls",
    )
    assert rd.description == "a.txt"
    assert rd.result.text == "hello"
    # No error flag in this format: a result never makes a success (L-3).
    assert [c.status for c in (ls, rd)] == ["unknown", "unknown"]
    assert ls.result.text == "a.txt\nb.txt"
    assert ls.result.kind == "text"
    assert ls.batch_id == rd.batch_id == "msg-3"
    assert t.warnings == []
    assert turnfold.load(t.dump()) == t


def test_L3_openai_chat_call_without_result_is_unknown() -> None:
    t = turnfold.load(CHAT[:3])
    assert [c.status for c in t.tool_calls()] == ["unknown", "unknown"]
    assert all(c.result is None for c in t.tool_calls())


def test_L2_openai_chat_user_images_and_refusal() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": PNG}},
            ],
        },
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "https://example.invalid/x.png"}}
            ],
        },
    ]
    t = turnfold.load(messages)
    first, second = of(t, UserMessage)
    assert (first.text, first.meta) == ("What is this?", {"images": 1})
    # The inline image is the prompt's (it was counted, its data dropped); a remote one is
    # named, never fetched.
    assert [image.media_type for image in first.images] == ["image/png"]
    assert (second.text, second.meta, second.images) == (
        "[attachment: https://example.invalid/x.png]",
        {"images": 1},
        [],
    )
    (refusal,) = of(t, AssistantText)
    assert refusal.text == "I can't help with that."
    assert refusal.meta == {"refusal": True}


def test_X2_openai_chat_content_parts_no_chat_reader_reads_are_warned_about() -> None:
    """A part of another schema (LLaMA-Factory's ``{"type": "text", "value": …}``) or of an
    unknown type was dropped with the message said to be mapped, and no warning."""
    asked = [{"type": "text", "text": "q"}, {"type": "text", "value": "LOST"}]
    messages = [
        {"role": "user", "content": asked},
        {"role": "assistant", "content": [{"type": "reasoning", "value": "hm"}, "bare"]},
    ]
    t = turnfold.load(messages, format="openai")
    assert [w.reason for w in t.warnings] == [
        "1 content part(s) of a user message not read ('text')",
        "2 content part(s) of a assistant message not read ('reasoning', no type)",
    ]
    assert [w.line for w in t.warnings] == [1, 2]


class SDKMessage:
    """Stands in for an SDK object: only ``model_dump`` is known about it."""

    def __init__(self, **fields: Any) -> None:
        self._fields = fields

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return copy.deepcopy(self._fields)


def test_L2_openai_chat_sdk_objects() -> None:
    objects = [SDKMessage(**m) for m in CHAT]
    assert turnfold.load(objects) == turnfold.load(CHAT)
    builder = OpenAIChatBuilder(Transcript())
    for line, message in enumerate(objects, start=1):
        builder.feed(message, line)  # type: ignore[arg-type]
    assert len(builder.transcript) == len(turnfold.load(CHAT))


COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1747130400,
    "model": "gpt-4.1",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [fn_call("c1", "bash", cmd="ls")],
            },
        }
    ],
    "usage": {
        "prompt_tokens": 20,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 2},
    },
}


def test_L2_openai_chat_completion_response() -> None:
    t = turnfold.load(COMPLETION)
    assert t.metadata == {"source_format": "openai", "model": "gpt-4.1"}
    text, call = t.entries
    assert text.text == "Let me look."
    assert text.model == "gpt-4.1"
    assert text.timestamp == "2025-05-13T10:00:00Z"
    assert (text.usage.input_tokens, text.usage.output_tokens) == (20, 5)
    assert (text.usage.cache_read_tokens, text.usage.reasoning_tokens) == (8, 2)
    assert call.batch_id == "chatcmpl-1"
    assert call.started_at == "2025-05-13T10:00:00Z"


@pytest.mark.parametrize(
    ("reason", "kind"), [("length", SystemNotice), ("content_filter", AssistantError)]
)
def test_L2_openai_chat_finish_reasons(reason: str, kind: type[Any]) -> None:
    completion = copy.deepcopy(COMPLETION)
    completion["choices"][0]["finish_reason"] = reason
    assert len(of(turnfold.load(completion), kind)) == 1


def test_L2_openai_chat_request_and_legacy_function_call() -> None:
    request = {
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
            {"role": "function", "name": "get_weather", "content": "rain"},
        ],
    }
    t = turnfold.load(request)
    assert t.metadata["model"] == "gpt-4o"
    assert t.metadata["system"] == "Be brief."
    (call,) = t.tool_calls()
    assert (call.name, call.args, call.status, call.result.text) == (
        "get_weather",
        {"city": "Oslo"},
        "unknown",
        "rain",
    )


def test_L4_openai_chat_result_for_an_unknown_call() -> None:
    t = turnfold.load(
        [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "ghost", "content": "x"},
        ]
    )
    (call,) = t.tool_calls()
    assert (call.call_id, call.name, call.result.text) == ("ghost", "", "x")
    assert [w.line for w in t.warnings] == [2]


def test_L4_openai_chat_bad_arguments_are_kept_as_text() -> None:
    bad = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls'}}
    t = turnfold.load(
        [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [bad]}]
    )
    assert t.tool_calls()[0].args == '{"cmd": "ls'


@pytest.mark.parametrize(
    ("key", "value", "form"),
    [
        ("reasoning", "thinking aloud", "text"),
        ("reasoning_details", [{"type": "reasoning.summary", "summary": "in short"}], "summary"),
        ("reasoning_details", [{"type": "reasoning.encrypted", "data": "opaque"}], "encrypted"),
    ],
)
def test_P9_openai_chat_reasoning_variants(key: str, value: Any, form: str) -> None:
    t = turnfold.load(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", key: value}]
    )
    (thinking,) = of(t, Thinking)
    assert thinking.form == form
    assert (thinking.data == "opaque") == (form == "encrypted")


# --- Responses API --------------------------------------------------------------------------------

ITEMS = [
    {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "Use tools."}],
    },
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What files are here?"},
            {"type": "input_image", "image_url": PNG},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "**Listing files**"}],
        "encrypted_content": "gAAAA",
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_abc",
        "name": "exec_command",
        "arguments": '{"cmd": "ls"}',
        "status": "completed",
    },
    {
        "type": "function_call",
        "id": "fc_2",
        "call_id": "call_def",
        "name": "bash",
        "arguments": '{"cmd": "pwd"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_abc", "output": "a.txt\nb.txt"},
    {
        "type": "function_call_output",
        "call_id": "call_def",
        "output": [
            {"type": "input_text", "text": "/repo"},
            {"type": "input_image", "image_url": PNG},
        ],
    },
    {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gBBBB"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Two files.", "annotations": []}],
    },
]


def test_L2_openai_responses_items() -> None:
    before = copy.deepcopy(ITEMS)
    t = turnfold.load(ITEMS)
    assert before == ITEMS
    assert t.metadata == {"source_format": "openai-responses", "system": "Use tools."}
    assert [e.kind for e in t] == [
        "user",
        "thinking",
        "tool_call",
        "tool_call",
        "thinking",
        "assistant",
    ]
    prompt = of(t, UserMessage)[0]
    assert (prompt.text, prompt.meta) == ("What files are here?", {"images": 1})
    summary, encrypted = of(t, Thinking)
    assert (summary.form, summary.text, summary.data) == ("summary", "**Listing files**", None)
    assert (encrypted.form, encrypted.text, encrypted.data) == ("encrypted", "", "gBBBB")
    ls, pwd = t.tool_calls()
    assert (ls.status, ls.result.text, ls.description) == ("unknown", "a.txt\nb.txt", "ls")
    assert pwd.result.text == "/repo"
    assert pwd.result.images[0].media_type == "image/png"
    assert ls.batch_id == pwd.batch_id == "batch-4"
    assert turnfold.load(t.dump()) == t


RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1747130400,
    "model": "o4-mini",
    "status": "incomplete",
    "incomplete_details": {"reason": "max_output_tokens"},
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}]},
        {
            "type": "message",
            "role": "assistant",
            "status": "incomplete",
            "content": [{"type": "output_text", "text": "Partial"}],
        },
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "bash",
            "arguments": "{}",
            "status": "in_progress",
        },
        {
            "type": "function_call",
            "call_id": "c2",
            "name": "bash",
            "arguments": "{}",
            "status": "incomplete",
        },
    ],
    "usage": {
        "input_tokens": 30,
        "output_tokens": 7,
        "input_tokens_details": {"cached_tokens": 3},
        "output_tokens_details": {"reasoning_tokens": 4},
    },
}


def test_P7_openai_responses_incomplete_response() -> None:
    t = turnfold.load(RESPONSE)
    assert t.metadata["model"] == "o4-mini"
    (text,) = of(t, AssistantText)
    assert text.meta == {"status": "incomplete"}
    assert text.model == "o4-mini"
    assert (text.usage.input_tokens, text.usage.cache_read_tokens, text.usage.reasoning_tokens) == (
        30,
        3,
        4,
    )
    assert [c.status for c in t.tool_calls()] == ["cancelled", "cancelled"]
    assert {c.batch_id for c in t.tool_calls()} == {"resp_1"}
    (marker,) = of(t, AbortMarker)
    assert marker.reason == "max_output_tokens"
    assert text.timestamp == "2025-05-13T10:00:00Z"


def test_L2_openai_responses_failed_response() -> None:
    failed = {
        "id": "resp_2",
        "object": "response",
        "status": "failed",
        "error": {"message": "server error"},
        "output": [],
    }
    assert [e.message for e in of(turnfold.load(failed), AssistantError)] == ["server error"]


HOSTED = [
    (
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "pytest fixtures"},
        },
        "web_search",
        "success",
        "pytest fixtures",
    ),
    (
        {
            "type": "web_search_call",
            "id": "ws_2",
            "status": "failed",
            "action": {"type": "open_page", "url": "https://example.invalid"},
        },
        "web_search",
        "error",
        "https://example.invalid",
    ),
    (
        {
            "type": "file_search_call",
            "id": "fs_1",
            "status": "completed",
            "queries": ["refund policy"],
            "results": [{"filename": "p.md"}],
        },
        "file_search",
        "success",
        None,
    ),
    (
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "status": "completed",
            "code": "print(1)",
            "outputs": [{"type": "logs", "logs": "1"}],
        },
        "code_interpreter",
        "success",
        None,
    ),
    (
        {
            "type": "image_generation_call",
            "id": "ig_1",
            "status": "completed",
            "result": "iVBORw0KGgo=",
        },
        "image_generation",
        "success",
        None,
    ),
    (
        {
            "type": "mcp_call",
            "id": "mcp_1",
            "server_label": "gh",
            "name": "get_issue",
            "arguments": "{}",
            "error": "boom",
        },
        "get_issue",
        "error",
        None,
    ),
    (
        {
            "type": "web_search_call",
            "id": "ws_3",
            "status": "in_progress",
            "action": {"type": "search", "query": "q"},
        },
        "web_search",
        "unknown",
        "q",
    ),
]


@pytest.mark.parametrize(
    ("item", "name", "status", "description"), HOSTED, ids=[h[0]["id"] for h in HOSTED]
)
def test_L3_openai_responses_hosted_tools(
    item: dict[str, Any], name: str, status: str, description: Any
) -> None:
    (call,) = turnfold.load([item]).tool_calls()
    assert (call.call_id, call.name, call.status, call.description) == (
        item["id"],
        name,
        status,
        description,
    )
    if item["type"] in ("code_interpreter_call", "file_search_call"):
        assert call.result.text
    if item["type"] == "image_generation_call":
        assert call.result.images[0].data == "iVBORw0KGgo="


#: A stored conversation with a hosted MCP server that asks before each call (OpenAI's
#: "Remote MCP" guide: the response ends on an ``mcp_approval_request``, the next request's
#: input answers it with an ``mcp_approval_response``, an approved call runs as an ``mcp_call``
#: naming the request in its ``approval_request_id``).
def _approval(request_id: str, name: str) -> dict[str, Any]:
    return {
        "type": "mcp_approval_request",
        "id": request_id,
        "server_label": "deepwiki",
        "name": name,
        "arguments": '{"repoName": "openai/codex"}',
    }


def test_L3_openai_responses_a_denied_mcp_call_is_a_cancelled_call_with_the_reason() -> None:
    t = turnfold.load(
        [
            {"role": "user", "content": "What transport does codex use?"},
            _approval("mcpr_1", "ask_question"),
            {
                "type": "mcp_approval_response",
                "approval_request_id": "mcpr_1",
                "approve": False,
                "reason": "not that repo",
            },
            {"role": "assistant", "content": "I could not look it up."},
        ],
        format="openai-responses",
    )
    assert not t.warnings
    (call,) = t.tool_calls()
    assert (call.call_id, call.name, call.args, call.meta) == (
        "mcpr_1",
        "ask_question",
        {"repoName": "openai/codex"},
        {"server": "deepwiki", "approval": "denied"},
    )
    assert call.status == "cancelled"
    assert call.result is not None
    assert call.result.text == "denied: not that repo"
    assert session_facts(t).failed_tools == 1


def test_L3_openai_responses_an_approved_mcp_call_is_the_call_that_followed() -> None:
    """One call, not two: the approved request is settled by the ``mcp_call`` that ran."""
    t = turnfold.load(
        [
            {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "output": [_approval("mcpr_2", "read_wiki_structure")],
            },
            {
                "input": [
                    {
                        "type": "mcp_approval_response",
                        "approval_request_id": "mcpr_2",
                        "approve": True,
                    }
                ]
            },
            {
                "id": "resp_2",
                "object": "response",
                "status": "completed",
                "output": [
                    {
                        "type": "mcp_call",
                        "id": "mcp_9",
                        "approval_request_id": "mcpr_2",
                        "server_label": "deepwiki",
                        "name": "read_wiki_structure",
                        "arguments": '{"repoName": "openai/codex"}',
                        "output": "1. Overview\n2. Sandboxing",
                        "error": None,
                        "status": "completed",
                    },
                    {"type": "message", "role": "assistant", "content": "It has two pages."},
                ],
            },
        ],
        format="openai-responses",
    )
    assert not t.warnings
    (call,) = t.tool_calls()
    assert (call.call_id, call.name, call.status, call.batch_id) == (
        "mcpr_2",
        "read_wiki_structure",
        "success",
        "resp_1",
    )
    assert call.result is not None
    assert call.result.text == "1. Overview\n2. Sandboxing"
    assert call.meta == {"server": "deepwiki", "approval": "approved", "mcp_call_id": "mcp_9"}


def test_L5_openai_responses_an_mcp_call_awaiting_approval_is_confirming() -> None:
    t = Transcript()
    builder = ResponsesBuilder(t, live=True)
    builder.feed(_approval("mcpr_3", "ask_question"), 1)
    assert [c.status for c in t.tool_calls()] == ["confirming"]
    builder.feed(
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_3", "approve": True}, 2
    )
    assert [c.status for c in t.tool_calls()] == ["executing"]
    builder.feed(
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_x", "approve": True}, 3
    )
    assert [(w.line, w.reason) for w in t.warnings] == [
        (3, "mcp_approval_response for an unknown approval request 'mcpr_x'")
    ]


def test_L2_openai_responses_custom_tool_patch_and_plan() -> None:
    patch = "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** End Patch"
    plan = {"plan": [{"step": "a", "status": "pending"}]}
    items = [
        {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": patch},
        {"type": "custom_tool_call_output", "call_id": "p1", "output": "Done"},
        {
            "type": "function_call",
            "call_id": "u1",
            "name": "update_plan",
            "arguments": json.dumps(plan),
        },
        {"type": "function_call_output", "call_id": "u1", "output": "Plan updated"},
        {
            "type": "local_shell_call",
            "call_id": "s1",
            "action": {"type": "exec", "command": ["git", "status"]},
        },
        {"type": "local_shell_call_output", "call_id": "s1", "output": "clean"},
        {"type": "compaction", "encrypted_content": "x"},
    ]
    t = turnfold.load(items)
    patch_call, plan_call, shell = t.tool_calls()
    assert (patch_call.description, patch_call.result.kind, patch_call.result.text) == (
        "notes.md",
        "diff",
        patch,
    )
    assert (plan_call.result.kind, plan_call.result.text) == ("plan", "- [ ] a")
    assert (shell.name, shell.description, shell.result.text) == (
        "local_shell",
        "git status",
        "clean",
    )
    assert len(of(t, CompactionBoundary)) == 1
    assert all(c.status == "unknown" for c in t.tool_calls())


def test_L4_openai_responses_unknown_items_warn() -> None:
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"type": "item_reference", "id": "x"},
        {"type": "function_call_output", "call_id": "lost", "output": "late"},
    ]
    t = turnfold.load(items, format="openai-responses")
    assert [e.kind for e in t] == ["user", "tool_call"]
    assert [w.line for w in t.warnings] == [3]
    t = turnfold.load([*items, {"type": "hologram_call", "id": "h"}], format="openai-responses")
    assert [w.line for w in t.warnings] == [3, 4]


# --- detection ------------------------------------------------------------------------------------

DETECTION = [
    (
        "plain-strings",
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        "openai",
    ),
    ("chat-tool-calls", CHAT, "openai"),
    ("chat-completion", COMPLETION, "openai"),
    ("chat-request", {"messages": CHAT}, "openai"),
    ("responses-items", ITEMS, "openai-responses"),
    ("responses-object", RESPONSE, "openai-responses"),
    (
        "responses-easy-typed",
        [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "openai-responses",
    ),
    (
        "anthropic-blocks",
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
            },
        ],
        "anthropic",
    ),
]


@pytest.mark.parametrize(
    ("value", "expected"), [d[1:] for d in DETECTION], ids=[d[0] for d in DETECTION]
)
def test_L2_openai_detection(value: Any, expected: str) -> None:
    assert turnfold.load(value).metadata["source_format"] == expected


def test_L2_openai_jsonl_text_is_detected() -> None:
    text = "".join(json.dumps(m) + "\n" for m in CHAT)
    assert turnfold.load(text) == turnfold.load(CHAT)
    items = "".join(json.dumps(i) + "\n" for i in ITEMS)
    assert turnfold.load(items).metadata["source_format"] == "openai-responses"


@pytest.mark.parametrize("fmt", ["openai", "openai-responses"])
def test_L4_openai_not_a_message_list_is_a_clear_error(fmt: str) -> None:
    with pytest.raises(TranscriptFormatError, match=fmt):
        turnfold.load([{"foo": 1}, {"bar": 2}], format=fmt)


# --- builders: incremental feeds seen by observers (L-5) ------------------------------------------


def _watch(t: Transcript) -> list[TranscriptChange]:
    changes: list[TranscriptChange] = []
    t.observe(changes.append)
    return changes


def test_L5_openai_chat_builder_live_feed() -> None:
    t = Transcript()
    builder = OpenAIChatBuilder(t, live=True)
    changes = _watch(t)
    messages = copy.deepcopy(CHAT)
    for line, message in enumerate(messages[:3], start=1):
        builder.feed(message, line)
    assert [(c.action, c.entry.kind) for c in changes] == [
        ("append", "user"),
        ("append", "thinking"),
        ("append", "tool_call"),
        ("append", "tool_call"),
    ]
    assert [c.status for c in t.tool_calls()] == ["executing", "executing"]
    ids = [e.id for e in t]
    builder.feed(messages[3], 4)
    update = changes[-1]
    assert update.action == "update"
    assert update.entry is t.tool_calls()[0]
    assert set(update.fields) == {"status", "result", "ended_at"}
    assert t.tool_calls()[0].status == "unknown"
    assert t.tool_calls()[1].status == "executing"
    builder.feed(messages[4], 5)
    builder.feed(messages[5], 6)
    assert [e.id for e in t][: len(ids)] == ids  # ids are stable while the transcript grows
    assert messages == CHAT


def test_L5_openai_responses_builder_live_feed() -> None:
    t = Transcript()
    builder = ResponsesBuilder(t, live=True)
    changes = _watch(t)
    for line, entry in enumerate(ITEMS[:5], start=1):
        builder.feed(entry, line)
    assert [c.status for c in t.tool_calls()] == ["executing", "executing"]
    assert all(c.action == "append" for c in changes)
    builder.feed(ITEMS[5], 6)
    assert changes[-1].action == "update"
    assert changes[-1].entry.call_id == "call_abc"
    assert "status" in changes[-1].fields
    assert "result" in changes[-1].fields
    assert [c.status for c in t.tool_calls()] == ["unknown", "executing"]


def test_L5_openai_builders_default_to_static() -> None:
    t = Transcript()
    OpenAIChatBuilder(t).feed(CHAT[2], 1)
    assert [c.status for c in t.tool_calls()] == ["unknown", "unknown"]
    responses = ResponsesBuilder()
    responses.feed(ITEMS[3], 1)
    assert responses.transcript.tool_calls()[0].status == "unknown"


def test_L4_openai_builder_does_not_share_arguments() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": {"cmd": "ls"}},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    t = Transcript()
    OpenAIChatBuilder(t).feed(message, 1)
    t.tool_calls()[0].args["cmd"] = "changed"
    assert call["function"]["arguments"] == {"cmd": "ls"}


def test_L1_openai_calls_are_tool_calls() -> None:
    assert all(isinstance(c, ToolCall) for c in turnfold.load(CHAT).tool_calls())


def test_L2_openai_responses_mixed_easy_and_typed_items() -> None:
    items = [
        {"role": "user", "content": "list files"},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
    ]
    t = turnfold.load(items)
    assert t.metadata["source_format"] == "openai-responses"
    assert [e.kind for e in t] == ["user", "tool_call"]


# --- issue 11: wrappers, odd records, accounting --------------------------------------------------

MESSAGES = Path(__file__).parents[1] / "fixtures" / "messages"


@pytest.mark.parametrize("fmt", [None, "openai"])
def test_X2_issue11_2_eval_trajectory_wrapper_is_read(fmt: str | None) -> None:
    # {"traj": [...], "reward", "info"} failed with "no Chat Completions messages", even forced.
    transcript = turnfold.load(MESSAGES / "openai_eval-trajectory-wrapper.json", format=fmt)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.metadata["reward"] == 1.0
    assert transcript.metadata["score"] == 1.0  # a rollout's reward is its score (H-6)
    assert transcript.metadata["info"]["task_id"] == "count-py-files"
    assert [c.call_id for c in transcript.tool_calls()] == ["call_a1", "call_a2", "call_a3"]
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_X2_issue11_2_an_unknown_role_in_a_list_is_a_warning_not_a_rejection() -> None:
    # A trailing {"role": "session_meta"} made the whole file "not a transcript".
    transcript = turnfold.load(MESSAGES / "openai_trailing-session-meta.json")
    assert transcript.metadata["source_format"] == "openai"
    assert len(transcript.tool_calls()) == 3
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (9, "message with unknown role 'session_meta' skipped")
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["session_meta"] == {"warned": 1}


def test_X2_responses_items_in_a_wrapper_are_read_and_accounted() -> None:
    transcript = turnfold.load(MESSAGES / "openai-responses_wrapped-items.json")
    assert transcript.metadata == {
        "source_format": "openai-responses",
        "run_id": "run_7f3a",
        "score": 0.5,
    }
    assert [c.name for c in transcript.tool_calls()] == ["web_search", "read_file"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["item_reference"] == {"ignored": 1}
    assert transcript.accounting.total("mapped") == 6


def test_X2_chat_jsonl_lines_are_accounted_by_role() -> None:
    text = "".join(json.dumps(m) + "\n" for m in CHAT) + "{not json\n"
    transcript = turnfold.load(text)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.accounting.counts["(invalid JSON)"] == {"warned": 1}
    assert set(transcript.accounting.types("mapped")) <= set(openai_chat.RECORDS.mapped)


# --- the shell, apply_patch and program items (openai 2.x Responses types) ----------------------


def test_L3_shell_apply_patch_and_program_calls_take_the_outcome_their_outputs_state() -> None:
    """Items built with the ``openai`` package's own types, as the API returns them."""
    from openai.types.responses import (
        ResponseApplyPatchToolCall,
        ResponseApplyPatchToolCallOutput,
        ResponseFunctionShellToolCall,
        ResponseFunctionShellToolCallOutput,
    )
    from openai.types.responses.response_output_item import Program, ProgramOutput

    def shell(call_id: str, *commands: str) -> Any:
        return ResponseFunctionShellToolCall(
            id=f"sh_{call_id}",
            call_id=call_id,
            type="shell_call",
            status="completed",
            action={"commands": list(commands), "timeout_ms": 1000},
        )

    def shell_output(call_id: str, *outcomes: dict[str, Any]) -> Any:
        chunks = [
            {"stdout": f"out {n}\n", "stderr": "", "outcome": outcome}
            for n, outcome in enumerate(outcomes)
        ]
        return ResponseFunctionShellToolCallOutput(
            id=f"sho_{call_id}",
            call_id=call_id,
            type="shell_call_output",
            status="completed",
            output=chunks,
        )

    patch = {"type": "update_file", "path": "a.py", "diff": "@@\n-x = 1\n+x = 2\n"}
    items = [
        {"role": "user", "content": "Fix it"},
        shell("s1", "ls", "pwd"),
        shell_output("s1", {"type": "exit", "exit_code": 0}, {"type": "exit", "exit_code": 0}),
        shell("s2", "pytest"),
        shell_output("s2", {"type": "exit", "exit_code": 1}),
        shell("s3", "sleep 100"),
        shell_output("s3", {"type": "timeout"}),
        ResponseApplyPatchToolCall(
            id="ap_1", call_id="p1", type="apply_patch_call", status="completed", operation=patch
        ),
        ResponseApplyPatchToolCallOutput(
            id="apo_1", call_id="p1", type="apply_patch_call_output", status="failed",
            output="hunk did not apply",
        ),
        Program(id="pr_1", call_id="g1", type="program", code="print(1)", fingerprint="f"),
        ProgramOutput(id="pro_1", call_id="g1", type="program_output", result="1",
                      status="completed"),
        {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": []},
    ]  # fmt: skip
    transcript = turnfold.load([item.model_dump() if hasattr(item, "model_dump") else item
                                for item in items], format="openai-responses")  # fmt: skip
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    calls = {c.call_id: c for c in transcript.tool_calls()}
    assert [(c.name, c.status) for c in calls.values()] == [
        ("shell", "success"),
        ("shell", "error"),  # exit code 1
        ("shell", "error"),  # timed out
        ("apply_patch", "error"),  # the patch's own status
        ("program", "success"),
    ]
    assert calls["s1"].args["commands"] == ["ls", "pwd"]
    assert calls["s1"].result is not None
    assert calls["s1"].result.text == "out 0\nout 1"
    assert calls["s2"].result is not None
    assert "(exit code 1)" in calls["s2"].result.text
    assert {k: calls["p1"].args[k] for k in patch} == patch
    assert calls["p1"].result is not None
    assert calls["p1"].result.text == "hunk did not apply"
    assert calls["g1"].args == {"code": "print(1)"}


_CALL = {"type": "function_call", "name": "add", "arguments": '{"a": 1}', "call_id": "c1"}


@pytest.mark.parametrize(
    "item",
    [
        pytest.param(_CALL, id="the common shape: the fast path"),
        pytest.param({**_CALL, "arguments": {"a": 1}}, id="arguments given as an object"),
        pytest.param({**_CALL, "arguments": "not json"}, id="arguments that are not JSON"),
        pytest.param({**_CALL, "id": "fc_1"}, id="an id beside the call id"),
        pytest.param({**_CALL, "status": "incomplete", "namespace": "ns"}, id="cut off"),
        pytest.param({**_CALL, "name": ""}, id="no name: the general path"),
        pytest.param({**_CALL, "name": ["add"]}, id="a name that is no string"),
        pytest.param({**_CALL, "call_id": "", "id": "fc_1"}, id="no call id: its id"),
        pytest.param({**_CALL, "call_id": 7}, id="a call id that is no string"),
        pytest.param({"type": "function_call", "arguments": "{}"}, id="no ids at all"),
        pytest.param({**_CALL, "type": "custom_tool_call", "input": "x"}, id="another kind"),
    ],
)
def test_issue22_a_function_call_reads_alike_on_its_fast_path_and_the_general_one(
    item: dict[str, Any],
) -> None:
    """``deferred_call`` reads the usual function call without dispatching on its type; every
    call reads as ``_call_name_args`` and ``_call_id`` read it, and one that is not of that
    shape (no name, no call id, another kind) takes their path."""
    from turnfold.formats import openai_responses as responses

    call_id, name, args, status, meta = responses.deferred_call(item, 4)
    kind = item["type"]
    general_name, general_args = responses._call_name_args(
        kind, item, responses.DEFERRED_CALLS[kind]
    )
    assert (call_id, name, args) == (
        responses._call_id(item, kind, 4),
        general_name,
        general_args,
    )
    assert status == ("cancelled" if item.get("status") == "incomplete" else None)
    assert meta == ({"namespace": "ns"} if "namespace" in item else {})
    if isinstance(item.get("arguments"), dict):
        assert args is not item["arguments"]  # a copy, never the input's own (L-4)


def test_U1_openai_sdk_usage_counts_the_cache_writes() -> None:
    # The SDK's usage details name the cache writes beside the reads (input_tokens_details /
    # prompt_tokens_details.cache_write_tokens): they were dropped, so a session's cached
    # input read as all reads.
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    response = Response.model_validate(
        {
            "id": "resp_cw", "object": "response", "created_at": 1764979200,
            "model": "gpt-5", "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "status": "completed",
            "output": [{"type": "message", "id": "msg_cw", "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "Done.",
                                     "annotations": []}]}],
            "usage": {"input_tokens": 1000, "output_tokens": 200, "total_tokens": 1200,
                      "input_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300},
                      "output_tokens_details": {"reasoning_tokens": 150}},
        }
    )  # fmt: skip
    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-cw", "object": "chat.completion", "created": 1764979200,
            "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": "Done."}}],
            "usage": {"prompt_tokens": 500, "completion_tokens": 40, "total_tokens": 540,
                      "prompt_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 50},
                      "completion_tokens_details": {"reasoning_tokens": 10}},
        }
    )  # fmt: skip
    (text,) = of(turnfold.load(response), AssistantText)
    assert text.usage is not None
    assert (text.usage.input_tokens, text.usage.cache_read_tokens) == (1000, 600)
    assert (text.usage.cache_write_tokens, text.usage.reasoning_tokens) == (300, 150)
    (text,) = of(turnfold.load(completion), AssistantText)
    assert text.usage is not None
    assert (text.usage.input_tokens, text.usage.cache_read_tokens) == (500, 100)
    assert (text.usage.cache_write_tokens, text.usage.reasoning_tokens) == (50, 10)


def test_X2_a_prompts_files_audio_and_remote_images_are_named_beside_its_text() -> None:
    # A file, an audio clip or an image by URL sent with a prompt's text was only counted in
    # meta: the prompt showed its text and nothing of what came with it.
    chat = [
        {"role": "user", "content": [
            {"type": "text", "text": "Summarise the report and the call."},
            {"type": "file", "file": {"filename": "report.pdf",
                                      "file_data": "data:application/pdf;base64,JVBERi0x"}},
            {"type": "file", "file": {"file_id": "file-abc123"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "image_url", "image_url": {"url": "https://example.invalid/chart.png"}},
            {"type": "image_url", "image_url": {"url": PNG}},
        ]},
        {"role": "assistant", "content": "The report says ..."},
    ]  # fmt: skip
    (prompt,) = of(turnfold.load(chat), UserMessage)
    assert prompt.text.split("\n\n") == [
        "Summarise the report and the call.",
        "[attachment: report.pdf · application/pdf · 6 B]",
        "[attachment: file-abc123]",
        "[attachment: audio · audio/wav · 4 B]",
        "[attachment: https://example.invalid/chart.png]",
    ]
    assert [image.data for image in prompt.images] == ["iVBORw0KGgo="]
    assert prompt.meta == {"files": 3, "images": 2}


def test_X2_a_responses_prompts_images_are_shown_and_its_files_named() -> None:
    # A Responses input message's pasted image (an input_image data URL) was counted, never
    # shown; its input_file and an image by URL were not named.
    from openai.types.responses import EasyInputMessage, ResponseOutputMessage

    items = [
        EasyInputMessage.model_validate(
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "What does the chart show?"},
                {"type": "input_image", "image_url": PNG, "detail": "auto"},
                {"type": "input_image", "image_url": "https://example.invalid/b.png",
                 "detail": "auto"},
                {"type": "input_file", "filename": "data.csv",
                 "file_data": "data:text/csv;base64,YSxiCg=="},
            ]}
        ),
        ResponseOutputMessage.model_validate(
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "A rising line.", "annotations": []}]}
        ),
    ]  # fmt: skip
    transcript = turnfold.load(items)
    assert transcript.metadata["source_format"] == "openai-responses"
    (prompt,) = of(transcript, UserMessage)
    assert prompt.text.split("\n\n") == [
        "What does the chart show?",
        "[attachment: https://example.invalid/b.png]",
        "[attachment: data.csv · text/csv · 4 B]",
    ]
    assert [(i.media_type, i.data) for i in prompt.images] == [("image/png", "iVBORw0KGgo=")]
    # A prompt of nothing but a pasted image shows it, and still reads "[image]" (its title).
    alone = [{"role": "user", "content": [{"type": "input_image", "image_url": PNG}]}]
    (prompt,) = of(turnfold.load(alone, format="openai-responses"), UserMessage)
    assert (prompt.text, len(prompt.images)) == ("[image]", 1)


def test_L2_openai_chat_a_spoken_answer_is_its_transcript() -> None:
    # modalities=["audio"]: the message's content is null and its audio holds the transcript.
    # The answer, and the response's usage with it, were dropped without a word.
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-au", "object": "chat.completion", "created": 1764979200,
            "model": "gpt-4o-audio-preview",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": None,
                                     "audio": {"id": "audio_1", "data": "UklGRg==",
                                               "expires_at": 1764982800,
                                               "transcript": "It is sunny in Paris."}}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        }
    )  # fmt: skip
    transcript = turnfold.load([{"role": "user", "content": "Weather in Paris?"}, completion])
    (answer,) = of(transcript, AssistantText)
    assert (answer.text, answer.meta) == ("It is sunny in Paris.", {"audio": True})
    assert answer.usage is not None
    assert answer.usage.output_tokens == 20
    # A later request's history refers to the spoken answer by id, without its transcript.
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "audio": {"id": "audio_1"}},
        {"role": "user", "content": "And tomorrow?"},
    ]
    (answer,) = of(turnfold.load(history), AssistantText)
    assert answer.text == "[audio: audio_1]"


def test_X2_a_chat_completion_of_several_choices_says_only_the_first_is_shown() -> None:
    # n=2: the second sample was dropped without a word.
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-n2", "object": "chat.completion", "created": 1764979200,
            "model": "gpt-4o",
            "choices": [
                {"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "Paris."}},
                {"index": 1, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "It is Paris."}},
            ],
        }
    )  # fmt: skip
    transcript = turnfold.load([{"role": "user", "content": "Capital of France?"}, completion])
    assert [e.text for e in of(transcript, AssistantText)] == ["Paris."]
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (2, "chat completion with 2 choices: only the first is shown")
    ]


def test_U1_a_filtered_or_failed_response_still_counts_its_billed_tokens() -> None:
    filtered = {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "finish_reason": "content_filter",
                             "message": {"role": "assistant", "content": None}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 0,
                          "total_tokens": 50}}  # fmt: skip
    failed = {"id": "resp_1", "object": "response", "status": "failed", "model": "gpt-5",
              "output": [], "error": {"code": "server_error", "message": "boom"},
              "usage": {"input_tokens": 70, "output_tokens": 0, "total_tokens": 70}}  # fmt: skip
    for response, tokens in ((filtered, 50), (failed, 70)):
        transcript = turnfold.load([{"role": "user", "content": "hello"}, response])
        (error,) = [e for e in transcript.entries if isinstance(e, turnfold.AssistantError)]
        assert error.usage is not None
        assert session_facts(transcript).tokens["input_tokens"] == tokens


# --- a logged API call: the request, then the response (QA pass, H) -----------------------------
# Made by tests/fixtures/messages/api_call_logs_recipe.py with the openai SDK's own types.

CHAT_CALL = MESSAGES / "openai-3.57.0_chat_logged-call.json"
RESPONSES_CALL = MESSAGES / "openai-3.57.0_responses_logged-call.json"
CALL_LOG = MESSAGES.parent / "datasets" / "openai-3.57.0_chat_call-log_two-calls.jsonl"


def _logged(path: Path, shape: str) -> dict[str, Any]:
    """The fixture's call as a log keeps it: ``{"request", "response"}``; the request's keys
    with the ``response`` beside them; each half an HTTP exchange's ``body``."""
    call = json.loads(path.read_text(encoding="utf-8"))
    if shape == "beside":
        return {**call["request"], "response": call["response"]}
    if shape == "bodies":
        return {"request": {"method": "POST", "body": call["request"]},
                "response": {"status_code": 200, "body": call["response"]}}  # fmt: skip
    return call


@pytest.mark.parametrize("shape", ["request+response", "beside", "bodies"])
def test_L2_a_logged_chat_call_is_its_request_then_its_answer(shape: str) -> None:
    # {"request", "response"} was no transcript at all; with the request's messages beside the
    # response, the answer, its usage and its model were left out without a word.
    transcript = turnfold.load(_logged(CHAT_CALL, shape))
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.metadata["system"] == "You answer with the tools you are given."
    assert transcript.metadata["model"] == "gpt-4o-2024-08-06"  # the model that answered
    assert "response" not in transcript.metadata
    user, *calls, answer = list(transcript)
    assert isinstance(user, UserMessage)
    assert user.text == "What is the weather in Paris, and the time there?"
    assert [(c.call_id, c.status, c.result and c.result.text) for c in calls] == [
        ("call_w1", "unknown", '{"temp_c": 14, "sky": "sunny"}'),
        ("call_t1", "unknown", "15:02"),
    ]
    assert isinstance(answer, AssistantText)
    assert answer.text == "Paris: 14 °C and sunny; it is 15:02 there."
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (210, 18)
    assert answer.usage.cache_read_tokens == 128
    assert transcript.warnings == []
    assert session_facts(transcript).models == ["gpt-4o-2024-08-06"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["chat.completion"] == {"mapped": 1}


@pytest.mark.parametrize("shape", ["request+response", "beside"])
def test_L2_a_logged_responses_call_is_its_request_then_its_response(shape: str) -> None:
    # With the request's input beside the Response, the file read as Chat messages: the prompt
    # alone, no turn, the Response's items and usage left out without a word.
    transcript = turnfold.load(_logged(RESPONSES_CALL, shape))
    assert transcript.metadata["source_format"] == "openai-responses"
    assert transcript.metadata["system"] == "Be brief."  # the request's and the Response's, once
    assert transcript.metadata["model"] == "o4-mini-2025-04-16"
    assert "response" not in transcript.metadata
    assert [e.kind for e in transcript] == ["user", "thinking", "tool_call", "assistant"]
    user, thinking, call, answer = list(transcript)
    assert isinstance(user, UserMessage)
    assert user.text == "Which Python is installed?"
    assert isinstance(thinking, Thinking)
    assert thinking.form == "summary"
    assert isinstance(call, ToolCall)
    assert (call.call_id, call.name, call.args) == ("call_py1", "run_shell", {"cmd": "python3 -V"})
    assert isinstance(answer, AssistantText)
    assert answer.text == "I will check python3 -V."
    facts = session_facts(transcript)
    assert (facts.turns, facts.tokens["input_tokens"], facts.tokens["output_tokens"]) == (1, 90, 70)
    assert facts.models == ["o4-mini-2025-04-16"]


def test_C1_a_log_of_chat_calls_is_a_file_of_runs_one_call_each() -> None:
    # A JSON line per call ({"request", "response"}) was no transcript, and no run of a scan.
    rows = turnfold.scan(CALL_LOG, cache=False).to_pandas()
    assert list(rows["key"]) == [f"{CALL_LOG}#0", f"{CALL_LOG}#1"]
    assert set(rows["title"]) == {"What is the weather in Paris, and the time there?"}
    assert list(rows["tool_calls"]) == [2, 2]
    assert list(rows["output_tokens"]) == [40, 18]
    assert list(rows["error"].isna()) == [True, True]
    first = turnfold.load(CALL_LOG, sample=0)  # the first call: its answer is the two calls
    assert [(c.name, c.status) for c in first.tool_calls()] == [
        ("get_weather", "unknown"),
        ("get_time", "unknown"),
    ]
    last = turnfold.load(CALL_LOG, sample=1)
    assert last.entries[-1].text == "Paris: 14 °C and sunny; it is 15:02 there."  # type: ignore[union-attr]


def test_L2_a_row_whose_response_is_text_is_no_logged_call() -> None:
    # ms-swift's query-response rows name their reply "response" too: text, read as before.
    transcript = turnfold.load({"query": "hi", "response": "yo", "history": []})
    assert [(e.kind, getattr(e, "text", None)) for e in transcript] == [
        ("user", "hi"),
        ("assistant", "yo"),
    ]


STREAM = MESSAGES / "openai-3.57.0_chat_stream-chunks.jsonl"


def test_L2_a_log_of_streamed_chunks_is_the_completions_they_stand_for() -> None:
    # Each chunk a line (stream=True, chunk.model_dump_json()) read as "a file of runs under
    # 'choices'": a scan made one error row per chunk, and show named no run.
    transcript = turnfold.load(STREAM)
    assert transcript.metadata["source_format"] == "openai"
    assert transcript.warnings == []
    *calls, answer = list(transcript)
    assert [(c.call_id, c.name, c.args, c.status, c.batch_id) for c in calls] == [
        ("call_w1", "get_weather", {"city": "Paris"}, "unknown", "chatcmpl-TF0001"),
        ("call_t1", "get_time", {"tz": "Europe/Paris"}, "unknown", "chatcmpl-TF0001"),
    ]  # the arguments joined from their pieces
    assert isinstance(answer, AssistantText)
    assert answer.text == "Paris: 14 °C and sunny; it is 15:02 there."
    facts = session_facts(transcript)
    assert (facts.tokens["input_tokens"], facts.tokens["output_tokens"]) == (330, 58)
    assert facts.duration_s == 5.0
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"chat.completion.chunk": {"mapped": 14}}
    row = turnfold.scan(STREAM, cache=False).to_pandas().iloc[0]
    assert (row["key"], row["tool_calls"], row["output_tokens"]) == (str(STREAM), 2, 58)


def test_X2_a_stream_cut_off_before_its_finish_reason_is_shown_and_warned() -> None:
    lines = STREAM.read_text(encoding="utf-8").splitlines()
    cut = [line for line in lines if '"chatcmpl-TF0002"' in line][:2]  # the role, half the text
    transcript = turnfold.load("\n".join(cut) + "\n")
    assert [(e.kind, getattr(e, "text", None)) for e in transcript] == [
        ("assistant", "Paris: 14 °C and sunn")
    ]
    assert [w.reason for w in transcript.warnings] == [
        "a streamed completion without a finish_reason: it may be cut off"
    ]


def test_X2_a_streamed_completion_of_two_choices_says_only_the_first_is_shown() -> None:
    head = {"id": "chatcmpl-n2", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [
        {**head, "choices": [{"index": i, "delta": {"content": text}, "finish_reason": "stop"}]}
        for i, text in ((0, "first"), (1, "second"))
    ]
    transcript = turnfold.load(chunks)
    assert [getattr(e, "text", None) for e in transcript] == ["first"]
    assert [w.reason for w in transcript.warnings] == [
        "chat completion with 2 choices: only the first is shown"
    ]
