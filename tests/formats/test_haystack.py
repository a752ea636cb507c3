"""Haystack agents after the run and live (spec A-1, A-2, A-3, L-3, L-4).

The runs are the real ``haystack-ai`` ``Agent`` with real ``Tool``s and a scripted chat
generator that replies as ``OpenAIChatGenerator`` does (``haystack_runs``): an agent that thinks,
calls ``add`` (succeeds) and ``explode`` (raises: ``error=True``) and answers; one that asks a
helper agent wrapped in a ``ComponentTool``; one that stops on an exit condition.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before Haystack is imported: no posthog

pytest.importorskip("haystack")

import turnfold
from tests.formats import haystack_runs
from tests.formats.counters_haystack import haystack as count_calls
from tests.formats.loops import run_async
from turnfold.formats.frameworks import adapter_of, haystack
from turnfold.model import (
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)

SOLO = haystack_runs.FIXTURES / "haystack-ai_v3.4.1_messages_solo.json"
NESTED = haystack_runs.FIXTURES / "haystack-ai_v3.4.1_messages_nested.json"
FAILED = "Failed to invoke Tool `explode` with parameters {'x': 'y'}. Error: boom: y"
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "explode", {"x": "y"}, "error", FAILED),
]
ANSWER = "1+2=3; explode failed."


@pytest.fixture(scope="module")
def solo() -> dict[str, Any]:
    return haystack_runs.run("solo")


@pytest.fixture(scope="module")
def nested() -> dict[str, Any]:
    return haystack_runs.run("nested")


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


def saved(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages as users save them: ``to_dict()`` each, through JSON."""
    loaded: list[dict[str, Any]] = json.loads(json.dumps([m.to_dict() for m in result["messages"]]))
    return loaded


# --- A-1: after the run -------------------------------------------------------------------------


def test_A1_an_agent_result_reads_its_thinking_calls_outcomes_usage_and_answer(
    solo: dict[str, Any],
) -> None:
    transcript = turnfold.load(solo)
    assert transcript.metadata["source_format"] == "haystack"
    assert kinds(transcript) == ["UserMessage", "Thinking", "ToolCall", "ToolCall", "AssistantText"]
    user, thinking, add, explode, answer = transcript.entries
    assert isinstance(user, UserMessage)
    assert user.text == haystack_runs.PROMPT
    assert isinstance(thinking, Thinking)
    assert thinking.text == "need add"
    assert calls_of(transcript) == CALLS  # explode's error by the ToolInvoker's error flag
    assert isinstance(add, ToolCall)
    assert isinstance(explode, ToolCall)
    assert add.batch_id == "msg-3"
    assert explode.batch_id == "msg-5"
    assert isinstance(answer, AssistantText)
    assert answer.text == ANSWER
    assert answer.model == haystack_runs.MODEL
    # OpenAI's counts as OpenAIChatGenerator keeps them: the reply with the thinking and the
    # call carries it on its thinking, cached input and reasoning from the details.
    assert thinking.usage is not None
    assert (thinking.usage.input_tokens, thinking.usage.output_tokens) == (21, 6)
    assert (thinking.usage.cache_read_tokens, thinking.usage.reasoning_tokens) == (4, 2)
    assert explode.usage is not None
    assert explode.usage.input_tokens == 22
    assert answer.usage is not None
    assert answer.usage.output_tokens == 8
    assert transcript.metadata["system"] == "Be terse."
    assert transcript.metadata["model"] == haystack_runs.MODEL
    assert transcript.metadata["exit_reason"] == "text"
    assert transcript.warnings == []
    # Not streamed: no timestamp is recorded, so none is shown (L-3).
    assert all(entry.timestamp is None for entry in transcript.entries)


def test_A1_objects_read_by_attribute_equal_their_saved_to_dict(solo: dict[str, Any]) -> None:
    for message in solo["messages"]:
        assert haystack.message_record(message) == message.to_dict()
    from_objects = turnfold.load(solo)
    from_saved = turnfold.load(saved(solo), format="haystack")
    assert from_saved.entries == from_objects.entries
    assert calls_of(from_saved) == CALLS


def test_A1_the_messages_alone_and_one_message_read(solo: dict[str, Any]) -> None:
    assert calls_of(turnfold.load(solo["messages"])) == CALLS
    last = turnfold.load(solo["last_message"])
    assert kinds(last) == ["AssistantText"]


def test_A1_older_saved_forms_read_alike(solo: dict[str, Any]) -> None:
    """``from_dict`` reads the 2.9–2.11 form (``_role``, ``_content``…) and the pre-2.9 one
    (``content`` a string); so does the loader."""
    current = turnfold.load(saved(solo), format="haystack")
    underscored = [
        {"_role": m["role"], "_content": m["content"], "_name": m["name"], "_meta": m["meta"]}
        for m in saved(solo)
    ]
    assert turnfold.load(underscored, format="haystack").entries == current.entries
    old = [
        {"role": "user", "content": "hi", "name": None, "meta": {}},
        {"role": "assistant", "content": "hello", "name": None, "meta": {"model": "m"}},
    ]
    assert [getattr(e, "text", None) for e in turnfold.load(old, format="haystack").entries] == [
        "hi",
        "hello",
    ]


def test_A1_pydantic_flat_parts_read_as_from_dict_reads_them(solo: dict[str, Any]) -> None:
    from haystack.dataclasses import ChatMessage

    flat = []
    for message in saved(solo):
        parts = [next(iter(p.values())) if "text" not in p else p for p in message["content"]]
        flat.append({**message, "content": parts})
    assert [ChatMessage.from_dict(m) for m in flat] == solo["messages"]
    assert calls_of(turnfold.load(flat, format="haystack")) == CALLS


def test_A1_the_saved_fixture_is_detected_and_every_record_accounted_for() -> None:
    transcript = turnfold.load(SOLO)
    assert transcript.metadata["source_format"] == "haystack"
    assert calls_of(transcript) == CALLS
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert count_calls(SOLO) == 2


def test_A1_an_agent_used_as_a_tool_is_a_sub_agent_with_its_messages(
    nested: dict[str, Any],
) -> None:
    transcript = turnfold.load(nested)
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("helper", "success")
    assert call.result is not None
    assert call.result.text == "2+2=4"
    sub = call.subagent
    assert sub is not None
    assert sub.transcript is not None
    assert (sub.name, sub.task, sub.tool_count) == ("helper", "what is 2+2?", 1)
    assert calls_of(sub.transcript) == [("call_h1", "add", {"a": 2, "b": 2}, "success", "4")]
    assert kinds(sub.transcript) == ["UserMessage", "ToolCall", "AssistantText"]
    assert transcript.entries[-1].text == "The helper says 4."  # type: ignore[attr-defined]
    assert len(transcript.tool_calls(nested=True)) == count_calls(NESTED) == 2
    assert turnfold.load(NESTED).entries == transcript.entries


def test_A1_an_exit_condition_tool_ends_the_run() -> None:
    transcript = turnfold.load(haystack_runs.run("exit"))
    assert calls_of(transcript) == [("call_f1", "finish", {"answer": "done"}, "success", "done")]
    assert transcript.metadata["exit_reason"] == "finish"
    assert not any(isinstance(e, SystemNotice) for e in transcript.entries)


def test_A1_a_run_stopped_by_its_step_budget_says_so() -> None:
    from haystack.dataclasses import ChatMessage

    agent = haystack_runs.solo_agent(max_agent_steps=1)
    result = agent.run(messages=[ChatMessage.from_user(haystack_runs.PROMPT)])
    transcript = turnfold.load(result)
    assert result["exit_reason"] == "max_agent_steps"
    assert calls_of(transcript) == CALLS[:1]
    notice = transcript.entries[-1]
    assert isinstance(notice, SystemNotice)
    assert "max_agent_steps" in notice.text


def test_A1_a_pipeline_result_reads_its_agent_component(solo: dict[str, Any]) -> None:
    from haystack import Pipeline
    from haystack.dataclasses import ChatMessage

    pipeline = Pipeline()
    pipeline.add_component("assistant", haystack_runs.solo_agent())
    result = pipeline.run(
        {"assistant": {"messages": [ChatMessage.from_user(haystack_runs.PROMPT)]}}
    )
    assert adapter_of(result) is haystack
    transcript = turnfold.load(result)
    assert transcript.metadata["agent"] == "assistant"
    assert calls_of(transcript) == CALLS
    two = turnfold.load({"first": result["assistant"], "second": solo})
    assert calls_of(two) == CALLS
    assert [w.reason for w in two.warnings] == [
        "pipeline component 'second' also holds messages: load result['second']"
    ]


def test_A1_calls_without_ids_are_settled_by_name_and_arguments() -> None:
    """Some generators (Ollama's) make calls with no id: a result finds its call by the
    origin it carries."""
    from haystack.dataclasses import ChatMessage
    from haystack.dataclasses import ToolCall as HaystackCall

    first = HaystackCall(tool_name="add", arguments={"a": 1, "b": 2})
    second = HaystackCall(tool_name="add", arguments={"a": 5, "b": 5})
    messages = [
        ChatMessage.from_user("add twice"),
        ChatMessage.from_assistant(tool_calls=[first, second]),
        ChatMessage.from_tool("10", origin=second),
        ChatMessage.from_tool("boom", origin=first, error=True),
    ]
    transcript = turnfold.load(messages)
    assert calls_of(transcript) == [
        ("", "add", {"a": 1, "b": 2}, "error", "boom"),
        ("", "add", {"a": 5, "b": 5}, "success", "10"),
    ]


def test_L4_a_result_for_no_call_and_an_unknown_role_are_warned_of() -> None:
    messages = [
        {"role": "user", "meta": {}, "name": None, "content": [{"text": "hi"}]},
        {"role": "tool", "meta": {}, "name": None, "content": [{"tool_call_result": {
            "result": "x", "origin": {"tool_name": "t", "arguments": {}, "id": "nope"},
            "error": False}}]},
        {"role": "function", "meta": {}, "name": None, "content": [{"text": "?"}]},
    ]  # fmt: skip
    transcript = turnfold.load(messages, format="haystack")
    assert [(w.reason, w.line) for w in transcript.warnings] == [
        ("tool result for an unknown tool call 'nope'", 2),
        ("not a ChatMessage (role 'function')", 3),
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["tool"] == {"warned": 1}


def test_A1_a_length_cut_reply_and_a_filtered_one_are_said() -> None:
    from haystack.dataclasses import ChatMessage

    messages = [
        ChatMessage.from_user("write"),
        ChatMessage.from_assistant("half", meta={"finish_reason": "length"}),
        ChatMessage.from_assistant("", meta={"finish_reason": "content_filter"}),
    ]
    transcript = turnfold.load(messages)
    assert kinds(transcript) == ["UserMessage", "AssistantText", "SystemNotice", "AssistantError"]


def test_A1_an_agent_object_is_refused_with_what_to_load() -> None:
    with pytest.raises(TypeError, match="keeps no run"):
        haystack.plain(haystack_runs.solo_agent())


# --- A-2: live ------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["solo", "nested", "exit"])
def test_A2_following_the_chunks_ends_as_load_of_the_result(which: str) -> None:
    from haystack.dataclasses import ChatMessage

    agent = haystack_runs.AGENTS[which]()
    messages = [ChatMessage.from_user(haystack_runs.PROMPTS[which])]
    passed: list[Any] = []
    live = haystack.Live(messages, agent=agent, then=passed.append, display=False)
    result = agent.run(messages=messages, streaming_callback=live)
    assert live.transcript.tool_calls()  # shown while the run went on
    assert live.end(result) == turnfold.load(result)
    assert passed
    assert all(type(chunk).__name__ == "StreamingChunk" for chunk in passed)
    assert live.transcript.warnings == []


def test_A2_the_stream_shows_the_reply_as_it_is_written() -> None:
    """Mid-stream: the thinking grows, then the call appears with its arguments growing; the
    chunks' ``received_at`` is the reply's ``completion_start_time``, as a load reads it."""
    from haystack.dataclasses import ChatMessage

    agent = haystack_runs.solo_agent()
    messages = [ChatMessage.from_user(haystack_runs.PROMPT)]
    live = haystack.Live(messages, agent=agent, display=False)
    seen: list[list[str]] = []

    def watch(chunk: Any) -> None:
        live(chunk)
        seen.append(kinds(live.transcript))

    result = agent.run(messages=messages, streaming_callback=watch)
    assert ["UserMessage", "Thinking"] in seen
    assert ["UserMessage", "Thinking", "ToolCall"] in seen
    call = live.transcript.tool_calls()[0]
    live.end(result)
    assert call.status == "success"
    assert call.args == {"a": 1, "b": 2}
    stamped = [e.timestamp for e in turnfold.load(result).entries if not isinstance(e, UserMessage)]
    assert all(stamped)
    assert stamped == [
        e.timestamp for e in live.transcript.entries if not isinstance(e, UserMessage)
    ]


def test_A2_run_async_with_the_async_callback_under_a_running_loop() -> None:
    from haystack.dataclasses import ChatMessage

    async def main() -> tuple[Any, Any]:
        agent = haystack_runs.solo_agent()
        messages = [ChatMessage.from_user(haystack_runs.PROMPT)]
        live = haystack.Live(messages, agent=agent, display=False)
        result = await agent.run_async(messages=messages, streaming_callback=live.acallback)
        await asyncio.sleep(0)
        return live, result

    live, result = run_async(main())
    assert live.end(result) == turnfold.load(result)
    assert calls_of(live.transcript) == CALLS


def test_A2_a_chunk_it_cannot_map_never_breaks_the_run() -> None:
    live = haystack.Live(display=False)
    live(object())
    live("not a chunk")
    transcript = live.end()
    assert [w.reason for w in transcript.warnings] == [
        "event object not shown",
        "event str not shown",
    ]


def test_A2_an_agent_used_as_a_tool_streaming_into_the_callback_grows_in_its_call() -> None:
    """With ``tool_streaming_callback_passthrough=True`` the helper agent's chunks come through
    the same callback while its call runs: they grow the call's sub-agent, not the run."""
    from haystack.dataclasses import ChatMessage

    agent = haystack_runs.nested_agent(tool_streaming_callback_passthrough=True)
    messages = [ChatMessage.from_user(haystack_runs.PROMPTS["nested"])]
    live = haystack.Live(messages, agent=agent, display=False)
    during: list[list[str]] = []

    def watch(chunk: Any) -> None:
        live(chunk)
        sub = live.transcript.tool_calls()[0].subagent if live.transcript.tool_calls() else None
        if sub is not None and sub.transcript is not None:
            during.append(kinds(sub.transcript))

    result = agent.run(messages=messages, streaming_callback=watch)
    assert ["UserMessage", "ToolCall"] not in during  # no prompt is streamed: its call first
    assert ["ToolCall", "AssistantText"] in during
    assert kinds(live.transcript) == ["UserMessage", "ToolCall", "AssistantText"]  # its own
    assert live.end(result) == turnfold.load(result)
