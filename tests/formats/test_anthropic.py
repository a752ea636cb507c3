"""Anthropic Messages API message lists (spec L-2.6; L-3 honest unknowns, L-5 live updates)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

import pytest

from turnfold import (
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptFormatError,
    UserMessage,
    load,
)
from turnfold.formats import anthropic, native, which_format
from turnfold.formats.anthropic import AnthropicBuilder
from turnfold.formats.source import from_object
from turnfold.model import LoadWarning, TranscriptChange
from turnfold.session import session_facts

PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}

CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in /tmp?"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "I should list it.", "signature": "EqQB"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls /tmp"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "/a"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x.txt"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": "No such file",
                "is_error": True,
            },
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "There is x.txt."}]},
]


def kinds(transcript: Transcript) -> list[str]:
    return [e.kind for e in transcript]


def only(transcript: Transcript, cls: type[Any]) -> Any:
    [entry] = [e for e in transcript if isinstance(e, cls)]
    return entry


# --- the basic mapping ----------------------------------------------------------------------------


def test_L2_anthropic_conversation_maps_to_entries() -> None:
    transcript = load(CONVERSATION)
    assert transcript.metadata == {"source_format": "anthropic"}
    assert kinds(transcript) == [
        "user",
        "thinking",
        "assistant",
        "tool_call",
        "tool_call",
        "assistant",
    ]
    ls, read = transcript.tool_calls()
    assert (ls.call_id, ls.name, ls.args) == ("toolu_1", "bash", {"command": "ls /tmp"})
    assert ls.description == "ls /tmp"
    assert (ls.status, ls.result and ls.result.text) == ("success", "x.txt")
    assert (read.status, read.result and read.result.text) == ("error", "No such file")
    assert ls.batch_id == read.batch_id == "msg-2"
    assert (ls.started_at, ls.ended_at, ls.recorded_duration_ms) == (None, None, None)
    assert transcript.warnings == []


def test_L2_anthropic_round_trips_and_loads_from_json_text() -> None:
    transcript = load(CONVERSATION)
    assert load(transcript.dump()) == transcript
    assert load(json.dumps(CONVERSATION)) == transcript
    jsonl = "".join(json.dumps(m) + "\n" for m in CONVERSATION)
    assert load(jsonl) == transcript


def test_L4_anthropic_input_is_not_modified() -> None:
    messages = copy.deepcopy(CONVERSATION)
    load(messages)
    builder = AnthropicBuilder(live=True)
    for line, message in enumerate(messages, start=1):
        builder.feed(message, line)
    assert messages == CONVERSATION


@pytest.mark.parametrize(
    ("block", "form", "text", "data"),
    [
        ({"type": "thinking", "thinking": "Plan.", "signature": "s"}, "text", "Plan.", None),
        ({"type": "thinking", "thinking": "", "signature": "s"}, "encrypted", "", "s"),
        ({"type": "redacted_thinking", "data": "EmwKAhgBEgy"}, "redacted", "", "EmwKAhgBEgy"),
    ],
)
def test_P9_anthropic_thinking_forms(
    block: dict[str, Any], form: str, text: str, data: str | None
) -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [block, {"type": "text", "text": "a"}]},
    ]
    thinking = only(load(messages), Thinking)
    assert (thinking.form, thinking.text, thinking.data) == (form, text, data)


def test_P9_anthropic_empty_thinking_is_no_entry() -> None:
    messages = [{"role": "assistant", "content": [{"type": "thinking", "thinking": ""},
                                                  {"type": "tool_use", "id": "t", "name": "x",
                                                   "input": {}}]}]  # fmt: skip
    assert kinds(load(messages)) == ["tool_call"]


def test_L3_anthropic_call_without_result_is_unknown() -> None:
    messages = [
        {"role": "user", "content": "run"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                           "input": {"command": "sleep 1"}}]},
    ]  # fmt: skip
    [call] = load(messages).tool_calls()
    assert (call.status, call.result) == ("unknown", None)


def test_L2_anthropic_images_and_documents() -> None:
    messages = [
        {"role": "user", "content": [{"type": "image", "source": PNG},
                                     {"type": "text", "text": "What is this?"}]},
        {"role": "user", "content": [{"type": "document", "title": "spec.pdf", "source": {
            "type": "base64", "media_type": "application/pdf", "data": "QUJD"}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "screenshot",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "captured"}, {"type": "image", "source": PNG},
            {"type": "document", "title": "report.pdf",
             "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"}},
        ]}]},
    ]  # fmt: skip
    transcript = load(messages)
    prompt, document = [e for e in transcript if isinstance(e, UserMessage)]
    assert (prompt.text, prompt.meta) == ("What is this?", {"images": 1})
    assert [(i.media_type, i.data) for i in prompt.images] == [("image/png", "iVBORw0KGgo=")]
    # Issue 11.8: what the user attached is an attachment line, never dropped.
    assert document.text == "[attachment: spec.pdf · application/pdf · 3 B]"
    assert document.meta == {"documents": 1}
    [call] = transcript.tool_calls()
    assert call.result is not None
    assert call.result.text == "captured\n[report.pdf]"
    assert [(i.media_type, i.data) for i in call.result.images] == [("image/png", "iVBORw0KGgo=")]


def test_X2_anthropic_search_result_blocks_of_a_prompt_are_shown() -> None:
    # search_result (SearchResultBlockParam): sources an application hands the model to cite.
    # They were skipped as an unknown block type, their text lost.
    messages = [
        {"role": "user", "content": [
            {"type": "search_result", "source": "https://kb.example/refunds",
             "title": "Refund policy",
             "content": [{"type": "text", "text": "Refunds within 30 days."}],
             "citations": {"enabled": True}},
            {"type": "text", "text": "How long do I have to ask for a refund?"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "30 days."}]},
    ]  # fmt: skip
    transcript = load(messages)
    assert transcript.warnings == []
    (prompt,) = [e for e in transcript if isinstance(e, UserMessage)]
    assert prompt.text.split("\n") == [
        "[search result: Refund policy — https://kb.example/refunds]",
        "Refunds within 30 days.",
        "",
        "How long do I have to ask for a refund?",
    ]


def test_L2_anthropic_usage_goes_on_the_last_text_of_the_message() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "id": "msg_01", "model": "claude-opus-4",
         "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 3,
                   "cache_creation_input_tokens": 4},
         "content": [{"type": "text", "text": "one"},
                     {"type": "tool_use", "id": "t1", "name": "x", "input": {}},
                     {"type": "text", "text": "two"}]},
    ]  # fmt: skip
    transcript = load(messages)
    first, second = [e for e in transcript if isinstance(e, AssistantText)]
    assert first.usage is None
    assert second.usage is not None
    # Anthropic counts cached input apart: turnfold's input holds it (10 + 3 + 4).
    assert (second.usage.input_tokens, second.usage.output_tokens) == (17, 20)
    assert (second.usage.cache_read_tokens, second.usage.cache_write_tokens) == (3, 4)
    assert second.model == "claude-opus-4"
    assert transcript.tool_calls()[0].batch_id == "msg_01"


# --- server tools and MCP -------------------------------------------------------------------------


def server_turn(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
             "input": {"query": "python decorators"}},
            {"tool_use_id": "srvtoolu_1", **result},
            {"type": "text", "text": "Decorators wrap functions."},
        ]},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("result", "status", "text"),
    [
        ({"type": "web_search_tool_result", "content": [
            {"type": "web_search_result", "url": "https://docs.python.org/x", "title": "Docs",
             "encrypted_content": "…", "page_age": None}]},
         "success", "Docs — https://docs.python.org/x"),
        ({"type": "web_search_tool_result", "content": {
            "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
         "error", "max_uses_exceeded"),
        ({"type": "web_fetch_tool_result", "content": {
            "type": "web_fetch_result", "url": "https://example.com",
            "content": {"type": "document", "source": {"type": "text", "data": "Example"}}}},
         "success", "https://example.com\nExample"),
        ({"type": "web_fetch_tool_result", "content": {
            "type": "web_fetch_tool_error", "error_code": "url_not_accessible"}},
         "error", "url_not_accessible"),
        ({"type": "code_execution_tool_result", "content": {
            "type": "code_execution_result", "stdout": "4\n", "stderr": "", "return_code": 0}},
         "success", "4\n"),
        ({"type": "code_execution_tool_result", "content": {
            "type": "code_execution_result", "stdout": "", "stderr": "boom", "return_code": 1}},
         "error", "boom"),
        # The text editor's and tool search's errors say what went wrong beside their code.
        ({"type": "text_editor_code_execution_tool_result", "content": {
            "type": "text_editor_code_execution_tool_result_error",
            "error_code": "invalid_tool_input", "error_message": "old_str not found in a.py"}},
         "error", "invalid_tool_input: old_str not found in a.py"),
        ({"type": "tool_search_tool_result", "content": {
            "type": "tool_search_tool_result_error", "error_code": "unavailable",
            "error_message": None}},
         "error", "unavailable"),
    ],
)  # fmt: skip
def test_L2_anthropic_server_tool_results(result: dict[str, Any], status: str, text: str) -> None:
    transcript = load(server_turn(result))
    assert kinds(transcript) == ["user", "tool_call", "assistant"]
    [call] = transcript.tool_calls()
    assert (call.call_id, call.name, call.status) == ("srvtoolu_1", "web_search", status)
    assert call.result is not None
    assert call.result.text == text


def test_L2_anthropic_mcp_tool_use_and_result() -> None:
    messages = [
        {"role": "assistant", "content": [
            {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "s",
             "input": {"text": "hi"}},
            {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": True,
             "content": [{"type": "text", "text": "server down"}]},
        ]},
    ]  # fmt: skip
    [call] = load(messages).tool_calls()
    assert (call.name, call.status) == ("echo", "error")
    assert call.result is not None
    assert call.result.text == "server down"


# --- other input shapes ---------------------------------------------------------------------------


def test_L2_anthropic_request_with_system_prompt() -> None:
    request = {
        "model": "claude-opus-4",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
    }
    transcript = load(request)
    assert transcript.metadata == {
        "source_format": "anthropic",
        "system": "You are terse.",
        "model": "claude-opus-4",
        "max_tokens": 1024,  # the request's other keys are kept (issue 11)
    }
    assert kinds(transcript) == ["user", "assistant"]


@pytest.mark.parametrize(
    ("stop_reason", "kind"),
    [("end_turn", None), ("refusal", AssistantError), ("max_tokens", SystemNotice)],
)
def test_L2_anthropic_response_object(stop_reason: str, kind: type[Any] | None) -> None:
    response = {
        "id": "msg_01A",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": "Hello"}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    transcript = load(response)
    assert transcript.metadata["model"] == "claude-sonnet-4"
    text = transcript.entries[0]
    assert isinstance(text, AssistantText)
    assert text.usage is not None
    assert text.usage.output_tokens == 1
    assert len(transcript) == (1 if kind is None else 2)
    if kind is not None:
        assert isinstance(transcript.entries[1], kind)


def test_L2_a_prompt_then_the_sdk_message_it_got_is_anthropic() -> None:
    # [prompt, client.messages.create(...)] read "equally well as anthropic and
    # openai-responses" when the answer was text alone: a Responses item has no stop_reason.
    from anthropic.types import Message

    message = Message.model_validate(
        {"id": "msg_01C", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
         "content": [{"type": "text", "text": "Paris."}], "stop_reason": "end_turn",
         "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 3}}
    )  # fmt: skip
    for saved in (message, message.model_dump(), json.loads(message.to_json())):
        transcript = load([{"role": "user", "content": "Capital of France?"}, saved])
        assert transcript.metadata["source_format"] == "anthropic"
        prompt, answer = transcript.entries
        assert isinstance(prompt, UserMessage)
        assert prompt.text == "Capital of France?"
        assert isinstance(answer, AssistantText)
        assert answer.text == "Paris."
        assert answer.usage is not None
        assert answer.usage.output_tokens == 3


@pytest.mark.parametrize(
    ("stop_reason", "notice"),
    [
        ("max_tokens", "The response was cut off at the max_tokens limit."),
        (
            "model_context_window_exceeded",
            "The response was cut off at the model's context window limit.",
        ),
        ("pause_turn", "The API paused the turn before the model finished (pause_turn)."),
    ],
)
def test_L2_anthropic_sdk_message_stopped_short_says_so(stop_reason: str, notice: str) -> None:
    # The SDK's StopReason (anthropic 2.x): a response stopped by the context window or paused
    # by the API mid-turn had ended like a finished answer, nothing said.
    from anthropic.types import Message

    message = Message.model_validate(
        {
            "id": "msg_01B",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Searching the web for"}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 4},
        }
    )
    transcript = load([{"role": "user", "content": "Find the release notes."}, message])
    text, stop = transcript.entries[1:]
    assert isinstance(text, AssistantText)
    assert text.text == "Searching the web for"
    assert isinstance(stop, SystemNotice)
    assert (stop.text, stop.level, stop.subtype) == (notice, "warning", stop_reason)


class SdkBlock:
    """Stands in for an SDK content block: a pydantic-like object with ``model_dump``."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return dict(self.fields)


class SdkMessage(SdkBlock):
    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {
            key: [b.model_dump() if isinstance(b, SdkBlock) else b for b in value]
            if isinstance(value, list)
            else value
            for key, value in self.fields.items()
        }


def test_L2_anthropic_sdk_objects() -> None:
    messages = [
        SdkMessage(role="user", content="list files"),
        SdkMessage(role="assistant", content=[
            SdkBlock(type="text", text="Listing."),
            SdkBlock(type="tool_use", id="toolu_9", name="bash", input={"command": "ls"}),
        ]),
        SdkMessage(role="user", content=[
            SdkBlock(type="tool_result", tool_use_id="toolu_9", content="a b", is_error=False),
        ]),
    ]  # fmt: skip
    transcript = load(messages)
    assert transcript.metadata["source_format"] == "anthropic"
    assert kinds(transcript) == ["user", "assistant", "tool_call"]
    assert transcript.tool_calls()[0].status == "success"


# --- detection ------------------------------------------------------------------------------------

TOOL_USE = {"type": "tool_use", "id": "t", "name": "x", "input": {}}


@pytest.mark.parametrize(
    ("value", "claimed"),
    [
        (CONVERSATION, True),
        ([{"role": "assistant", "content": [TOOL_USE]}], True),
        ([{"role": "user", "content": [{"type": "image", "source": PNG}]}], True),
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                        "content": "x"}]}], True),
        ({"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}, True),
        # Plain text reads the same in both APIs: left to the OpenAI Chat loader.
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], False),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], False),
        # OpenAI Chat Completions.
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], False),
        ([{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "ok"}], False),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], False),
        ([{"role": "assistant", "content": [TOOL_USE], "refusal": None}], False),
        ([{"role": "assistant", "content": [TOOL_USE], "tool_calls": []}], False),
        # OpenAI Responses.
        ([{"type": "message", "role": "user", "content": [{"type": "input_text",
                                                           "text": "hi"}]}], False),
        ({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "hi"}]}, False),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}], False),
        # Not messages at all.
        ({"just": "an object"}, False),
        ([1, 2, 3], False),
        ([], False),
    ],
)  # fmt: skip
def test_L2_anthropic_detection(value: Any, claimed: bool) -> None:
    assert (which_format(from_object(value)) == anthropic.NAME) is claimed


def test_L2_a_list_marked_by_two_apis_is_an_error_naming_both() -> None:
    # "developer" exists only in OpenAI's API, tool_use blocks only in Anthropic's.
    mixed = [{"role": "developer", "content": "x"}, {"role": "assistant", "content": [TOOL_USE]}]
    with pytest.raises(TranscriptFormatError, match=r"reads equally well as.*anthropic.*openai"):
        load(mixed)


def test_L2_anthropic_detection_looks_past_plain_messages_in_a_document() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}] * 40
    messages = [*plain, {"role": "assistant", "content": [TOOL_USE]}]
    assert which_format(from_object(messages)) == anthropic.NAME


def test_L4_anthropic_forced_on_something_else_warns() -> None:
    transcript = load([{"role": "system", "content": "x"}, 7], format="anthropic")
    assert transcript.entries == []
    assert [w.line for w in transcript.warnings] == [1, 2, None]
    assert transcript.warnings[-1].reason.startswith("nothing to show")  # never silently empty


def test_L4_anthropic_empty_list_is_a_format_error() -> None:
    with pytest.raises(TranscriptFormatError):
        load([], format="anthropic")


def test_L4_anthropic_oddities_are_warnings() -> None:
    messages = [
        {"role": "assistant", "content": [TOOL_USE, TOOL_USE, {"type": "tool_use", "name": "y"},
                                          {"type": "mystery"}, {"type": "mystery"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zzz", "content": ""}]},
    ]  # fmt: skip
    transcript = load(messages, format="anthropic")
    assert [c.call_id for c in transcript.tool_calls()] == ["t", ""]
    assert [w.reason for w in transcript.warnings] == [
        "duplicate tool call id 't' skipped",
        "tool_use block without an id",
        "unknown content block type 'mystery' skipped",
        "tool_result for an unknown tool_use_id 'zzz'",
    ]


# --- the builder, live ----------------------------------------------------------------------------


def test_L5_anthropic_builder_appends_then_updates_the_call() -> None:
    transcript = Transcript()
    changes: list[TranscriptChange] = []
    transcript.observe(changes.append)
    builder = AnthropicBuilder(transcript, live=True)
    builder.feed(CONVERSATION[0], 1)
    builder.feed(CONVERSATION[1], 2)
    assert [(c.action, c.entry.kind) for c in changes] == [
        ("append", "user"),
        ("append", "thinking"),
        ("append", "assistant"),
        ("append", "tool_call"),
        ("append", "tool_call"),
    ]
    calls = transcript.tool_calls()
    assert [c.status for c in calls] == ["executing", "executing"]
    ids = [e.id for e in transcript]
    changes.clear()
    builder.feed(CONVERSATION[2], 3)
    assert [(c.action, c.entry, c.fields) for c in changes] == [
        ("update", calls[0], ("status", "result")),
        ("update", calls[1], ("status", "result")),
    ]
    assert [c.status for c in calls] == ["success", "error"]
    assert [e.id for e in transcript] == ids  # updates never renumber
    builder.feed(CONVERSATION[3], 4)
    assert changes[-1].action == "append"


def test_L5_anthropic_builder_static_calls_start_unknown() -> None:
    builder = AnthropicBuilder()
    builder.feed(CONVERSATION[1], 7)
    calls = builder.transcript.tool_calls()
    assert [c.status for c in calls] == ["unknown", "unknown"]
    assert {c.batch_id for c in calls} == {"msg-7"}


def test_L5_anthropic_builder_usage_update_is_observed() -> None:
    transcript = Transcript()
    changes: list[TranscriptChange] = []
    transcript.observe(changes.append)
    AnthropicBuilder(transcript, live=True).feed(
        {"role": "assistant", "content": "hi", "usage": {"output_tokens": 2}}, 1
    )
    assert [(c.action, c.fields) for c in changes] == [("append", ()), ("update", ("usage",))]
    entry = transcript.entries[0]
    assert isinstance(entry, AssistantText)
    assert entry.usage is not None
    assert entry.usage.output_tokens == 2


def test_L5_anthropic_builder_works_with_message_sync() -> None:
    from turnfold.recording import MessageSync

    sync = MessageSync(format="anthropic")
    messages: list[Any] = [CONVERSATION[0], CONVERSATION[1]]
    sync.sync(messages)
    assert [c.status for c in sync.transcript.tool_calls()] == ["executing", "executing"]
    messages.append(CONVERSATION[2])
    sync.sync(messages)
    assert [c.status for c in sync.transcript.tool_calls()] == ["success", "error"]
    assert all(isinstance(c, ToolCall) for c in sync.transcript.tool_calls())


# --- issue 11: wrappers, detection, accounting ----------------------------------------------------

MESSAGES = Path(__file__).parents[1] / "fixtures" / "messages"


def test_X2_issue11_1_sdk_session_wrapper_is_read_whole_and_keeps_its_keys() -> None:
    # {"version", "updated_at", "agent", "sessionId", "messages"} was read as Gemini CLI: empty.
    # It is the envelope of Cline's SDK (buildMessagesFilePayload), read by its own reader.
    transcript = load(MESSAGES / "anthropic_sdk-session-wrapper.json")
    assert transcript.metadata == {
        "source_format": "cline-messages",
        "agent": "cline",
        "agent_role": "sdk-agent",
        "version": 2,
        "updated_at": "2025-09-30T14:02:11.512Z",
        "session_id": "7d1f6c52-3a0e-4a49-9d3c-2f1f0c5e8b10",
    }
    calls = transcript.tool_calls()
    assert len(calls) == 11
    assert [c.status for c in calls].count("error") == 1
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"user": {"mapped": 12}, "assistant": {"mapped": 12}}


def test_X2_issue11_1_bare_list_of_sdk_messages_is_detected() -> None:
    # One message with a block Chat Completions also types ("file") made the list no format's.
    path = MESSAGES / "anthropic_bare-list_file-block.json"
    assert which_format(from_object(json.loads(path.read_text()))) == anthropic.NAME
    transcript = load(path)
    assert len(transcript.tool_calls()) == 11
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    # Issue 11.8: the attached file is shown as an attachment line, not dropped with a warning.
    prompt = transcript.entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text.endswith("\n\n[attachment: spec.md]")
    assert (prompt.meta, transcript.warnings) == ({"files": 1}, [])


def test_X2_wrapper_keys_never_replace_what_the_loader_sets() -> None:
    wrapped = {
        "source_format": "elsewhere",
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    transcript = load(wrapped, format="anthropic")
    assert transcript.metadata == {"source_format": "anthropic", "system": "Be brief."}


def test_L4_issue11_8_an_unknown_block_is_warned_and_its_message_accounted() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "mystery"}]}]
    transcript = load(messages, format="anthropic")
    assert [w.reason for w in transcript.warnings] == [
        "unknown content block type 'mystery' skipped"
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {"user": {"warned": 1}}


@pytest.mark.parametrize("layout", ["jsonl", "json"])
def test_X2_a_dump_of_the_load_accounts_for_every_line(layout: Literal["jsonl", "json"]) -> None:
    # turnfold's own format: the header, each entry by its kind, each warning (native.RECORDS).
    transcript = load(MESSAGES / "anthropic_bare-list_file-block.json")
    transcript.warnings.append(LoadWarning(reason="kept", line=3))
    again = load(transcript.dump(layout=layout))
    assert again == transcript
    assert again.accounting is not None
    assert again.accounting.unaccounted == []
    assert again.accounting.counts == {
        "header": {"mapped": 1},
        "user": {"mapped": 1},
        "thinking": {"mapped": 1},
        "assistant": {"mapped": 4},
        "tool_call": {"mapped": 11},
        "warning": {"mapped": 1},
    }
    assert set(again.accounting.types("mapped")) <= set(native.RECORDS.mapped)


def test_L2_response_objects_saved_among_the_messages_are_anthropic_s() -> None:
    """A conversation saved with each response as the SDK returned it (``response.model_dump()``,
    ``{"type": "message", "stop_reason", ...}``) read "equally well as anthropic and
    openai-responses": the user had to name the format. The responses are real Messages API
    responses of anthropics/anthropic-sdk-python's ``tests/lib/tools/test_runners.py``
    (``tool_call_error``; MIT), trimmed to the keys read."""

    def response(msg_id: str, content: list[dict[str, Any]], stop: str, out: int) -> dict:
        usage = {"input_tokens": 473, "output_tokens": out}
        return {"id": msg_id, "type": "message", "role": "assistant",
                "model": "claude-3-5-sonnet-20241022", "content": content, "stop_reason": stop,
                "stop_sequence": None, "usage": usage}  # fmt: skip

    def weather(call_id: str, units: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": call_id, "name": "get_weather",
                "input": {"location": "San Francisco, CA", "units": units}}  # fmt: skip

    messages = [
        {"role": "user", "content": "What is the weather in SF?"},
        response("msg_014RTukBtZkatJqx6AQNJmz5", [
            {"type": "text", "text": "I'll show it in both Celsius and Fahrenheit."},
            weather("toolu_01Eqm7dFsQRKLFSSecctffe1", "c"),
            weather("toolu_01E7AD7aA4uR7cRk3kWs4oxa", "f"),
        ], "tool_use", 162),
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01Eqm7dFsQRKLFSSecctffe1",
             "content": "RuntimeError('Unexpected error, try again')", "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_01E7AD7aA4uR7cRk3kWs4oxa",
             "content": '{"location": "San Francisco, CA", "condition": "Sunny"}'},
        ]},
        response("msg_011W15YiUj9QAvCEQ1gDYCKB", [
            {"type": "text", "text": "It is sunny in San Francisco."},
        ], "end_turn", 41),
    ]  # fmt: skip
    transcript = load({"messages": messages, "reward": 1})
    assert transcript.metadata["source_format"] == "anthropic"
    assert transcript.warnings == []
    assert [c.status for c in transcript.tool_calls()] == ["error", "success"]
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.model == "claude-3-5-sonnet-20241022"
    assert answer.usage is not None
    assert answer.usage.response_id == "msg_011W15YiUj9QAvCEQ1gDYCKB"


def test_U1_a_refusal_with_no_text_still_counts_its_billed_tokens() -> None:
    # The prompt was billed; with no text to carry it the usage had been dropped.
    refused = {"id": "msg_1", "type": "message", "role": "assistant",
               "model": "claude-sonnet-4-5", "content": [], "stop_reason": "refusal",
               "stop_sequence": None,
               "usage": {"input_tokens": 120, "output_tokens": 3}}  # fmt: skip
    transcript = load([{"role": "user", "content": "do the bad thing"}, refused])
    (error,) = [e for e in transcript.entries if isinstance(e, AssistantError)]
    assert error.usage is not None
    assert session_facts(transcript).tokens == {"input_tokens": 120, "output_tokens": 3}
    assert load(transcript.dump()) == transcript  # kept by the lossless form


# --- a logged API call: the request, then the response (QA pass, H) -----------------------------
# Made by tests/fixtures/messages/api_call_logs_recipe.py with the anthropic SDK's own types.

FIXTURE_MESSAGES = Path(__file__).parents[1] / "fixtures" / "messages"
LOGGED_CALL = FIXTURE_MESSAGES / "anthropic-2.15.0_messages-and-response.json"


@pytest.mark.parametrize("shape", ["beside", "request+response"])
def test_L2_anthropic_logged_call_is_its_request_then_its_response(shape: str) -> None:
    # The response beside the request's messages was left out without a word: no answer, no
    # usage; under {"request", "response"} the file was no transcript at all.
    call = json.loads(LOGGED_CALL.read_text(encoding="utf-8"))
    if shape == "request+response":
        response = call.pop("response")
        call = {"request": call, "response": response}
    transcript = load(call)
    assert transcript.metadata["source_format"] == "anthropic"
    assert transcript.metadata["system"] == "Be brief."
    assert transcript.metadata["model"] == "claude-sonnet-4-5-20250929"  # the one that answered
    assert "response" not in transcript.metadata
    user, tool, answer = list(transcript)
    assert isinstance(user, UserMessage)
    assert user.text == "Which Python is installed?"
    assert isinstance(tool, ToolCall)
    assert (tool.name, tool.status) == ("bash", "error")
    assert tool.result is not None
    assert tool.result.text == "bash: python3: command not found"
    assert isinstance(answer, AssistantText)
    assert answer.text == "python3 is not installed here."
    facts = session_facts(transcript)
    assert facts.models == ["claude-sonnet-4-5-20250929"]
    assert (facts.turns, facts.tool_calls, facts.failed_tools) == (1, 1, 1)
    assert facts.tokens["output_tokens"] == 9
    assert facts.tokens["cache_read_tokens"] == 1200
    assert transcript.warnings == []
