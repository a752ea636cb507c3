"""Qwen Code's token counts, each response once and its reasoning once (spec U-1), as the real
Qwen Code 0.24.4 writes them through an OpenAI-compatible API (tests/agents saw both)."""

from __future__ import annotations

from typing import Any

from tests.formats.test_qwen import assistant, fcall, load, result, user
from turnfold import AssistantText, ToolCall
from turnfold.usage import count_tokens


def openai_usage(n: int) -> dict[str, Any]:
    """``usageMetadata`` as Qwen Code's OpenAI converter writes it: the completion's count,
    reasoning included, as the candidates; the total is prompt plus candidates."""
    prompt, completion, reasoning = 1000 * n, 10 * n, n
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": completion,
        "thoughtsTokenCount": reasoning,
        "totalTokenCount": prompt + completion,
        "cachedContentTokenCount": 100 * n,
    }


def test_U1_qwen_openai_reasoning_is_counted_once_in_the_output() -> None:
    transcript = load(
        user("u1", None, "q"),
        assistant("a1", "u1", {"text": "4."}, usageMetadata=openai_usage(2)),
    )
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.output_tokens, answer.usage.reasoning_tokens) == (20, 2)


def test_U1_qwen_gemini_counts_add_the_thoughts_their_total_adds() -> None:
    gemini = {"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 5,
              "totalTokenCount": 125}  # fmt: skip
    transcript = load(
        user("u1", None, "q"), assistant("a1", "u1", {"text": "4."}, usageMetadata=gemini)
    )
    assert count_tokens(transcript.entries)["output_tokens"] == 25


def test_U1_qwen_subagent_usage_on_a_record_of_its_own_goes_to_the_calls_after_it() -> None:
    # Qwen Code 0.24.4's sub-agent: a response of calls is an empty record with the usage, then
    # a record with the calls and none.
    transcript = load(
        user("u1", None, "task"),
        assistant("a1", "u1", usageMetadata=openai_usage(1)),
        assistant("a2", "a1", fcall("c1")),
        result("r1", "a2", "c1"),
        assistant("a3", "r1", {"text": "done"}, usageMetadata=openai_usage(2)),
    )
    call = transcript.tool_calls()[0]
    assert isinstance(call, ToolCall)
    assert call.usage is not None
    assert call.usage.input_tokens == 1000
    assert count_tokens(transcript.entries) == {
        "input_tokens": 3000, "output_tokens": 30, "cache_read_tokens": 300,
        "reasoning_tokens": 3,
    }  # fmt: skip


def test_U1_qwen_usage_of_its_own_is_given_only_to_its_child() -> None:
    transcript = load(
        user("u1", None, "q"),
        assistant("a1", "u1", usageMetadata=openai_usage(1)),
        user("u2", "a1", "again"),
        assistant("a2", "u2", fcall("c1"), usageMetadata=openai_usage(2)),
        assistant("a3", "a2", fcall("c2")),
    )
    first, second = transcript.tool_calls()
    assert first.usage is not None
    assert first.usage.input_tokens == 2000
    assert second.usage is None  # its parent's usage is its parent's own


def test_U1_qwen_subagent_usage_whose_calls_never_come_is_warned_not_dropped() -> None:
    # A sub-agent cut off after its response's usage record, before the record of its calls.
    transcript = load(
        user("u1", None, "task"), assistant("a1", "u1", usageMetadata=openai_usage(1))
    )
    assert count_tokens(transcript.entries) == {}
    (warning,) = transcript.warnings
    assert (warning.line, "tokens not counted" in warning.reason) == (2, True)


def test_U1_qwen_subagent_usage_before_a_record_of_a_lost_parent_is_warned() -> None:
    """The record after it names another parent (lost): not its child, whose usage it is."""
    transcript = load(
        user("u1", None, "task"),
        assistant("a1", "u1", usageMetadata=openai_usage(1)),
        assistant("a2", "gone", fcall("c1")),
    )
    assert transcript.tool_calls()[0].usage is None
    assert sorted(w.line or 0 for w in transcript.warnings) == [2, 3]  # and the lost parent
