"""Tokens, counted once (spec U-1): each response once, cached input in, sub-agents apart.

The hand counts read the raw files with nothing of turnfold's: each Claude Code
``message.id`` once, at its last line's usage, the main thread and the sidechains apart.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import turnfold
from turnfold.model import AssistantText, SubAgent, Thinking, ToolCall, Transcript, Usage
from turnfold.session import SessionTally, session_facts
from turnfold.usage import (
    TokenCount,
    count_tokens,
    counts_of,
    subagent_tokens,
    total_of,
    transcript_tokens,
)

SAMPLE = Path(turnfold.__file__).parent / "samples" / "claude-code-session.jsonl"
FIXTURES = Path(__file__).parent / "fixtures"


def hand_count(path: Path) -> dict[bool, dict[str, int]]:
    """Tokens by sidechain flag: every message.id once, its last line's usage."""
    responses: dict[tuple[bool, str], dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if record.get("type") == "assistant" and message.get("usage"):
            responses[(bool(record.get("isSidechain")), message["id"])] = message["usage"]
    totals: dict[bool, dict[str, int]] = {False: {}, True: {}}
    for (side, _), usage in responses.items():
        cached = usage.get("cache_read_input_tokens", 0) + usage.get(
            "cache_creation_input_tokens", 0
        )
        counted = {
            "input_tokens": usage.get("input_tokens", 0) + cached,  # Anthropic counts it apart
            "output_tokens": usage.get("output_tokens", 0),
            "cache_read_tokens": usage.get("cache_read_input_tokens", 0),
            "cache_write_tokens": usage.get("cache_creation_input_tokens", 0),
        }
        for name, value in counted.items():
            totals[side][name] = totals[side].get(name, 0) + value
    return totals


def test_U1_the_bundled_session_counts_each_response_once_and_its_sub_agents_apart() -> None:
    expected = hand_count(SAMPLE)
    transcript = turnfold.load(SAMPLE)
    tokens = transcript_tokens(transcript)
    assert tokens.own == expected[False]
    assert tokens.subagents == expected[True]
    facts = session_facts(transcript)
    assert facts.subagent_tokens == expected[True]
    assert facts.total_tokens == sum(
        t["input_tokens"] + t["output_tokens"] for t in expected.values()
    )
    # A response that wrote only calls keeps its usage (it used to be lost with no text).
    assert any(c.usage is not None for c in transcript.tool_calls())


def test_U1_a_session_whose_usage_is_repeated_on_every_block_counts_it_once(
    tmp_path: Path,
) -> None:
    """Claude Code writes one line per content block, each with the message's usage; the last
    line holds the final output count."""
    lines = [{"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-03-02T14:07:00Z",
              "message": {"role": "user", "content": "go"}}]  # fmt: skip
    blocks = [
        {"type": "thinking", "thinking": "plan", "signature": "x"},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}},
        {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "b.py"}},
    ]
    for n, block in enumerate(blocks):
        usage = {
            "input_tokens": 4,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "output_tokens": 10 + 20 * n,
        }
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{n}",
                "parentUuid": f"a{n - 1}" if n else "u1",
                "sessionId": "s",
                "timestamp": f"2026-03-02T14:07:0{n + 1}Z",
                "message": {
                    "id": "msg_1",
                    "role": "assistant",
                    "model": "claude-sonnet-4-20250514",
                    "content": [block],
                    "usage": usage,
                },
            }
        )
    path = tmp_path / "repeated.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    transcript = turnfold.load(path)
    assert not transcript.warnings
    # By hand: one response, 4 + 1000 + 200 input, its final output count 50.
    expected = {
        "input_tokens": 1204,
        "output_tokens": 50,
        "cache_read_tokens": 1000,
        "cache_write_tokens": 200,
    }
    assert session_facts(transcript).tokens == expected
    # Loaders that write the usage on every entry of the response are counted once too.
    for entry in transcript.entries:
        if isinstance(entry, (Thinking, ToolCall)):
            entry.usage = Usage(
                input_tokens=1204,
                output_tokens=50,
                cache_read_tokens=1000,
                cache_write_tokens=200,
                response_id="msg_1",
            )
    assert session_facts(transcript).tokens == expected


def test_U1_a_response_counts_once_at_its_largest_counts() -> None:
    early = Usage(input_tokens=100, output_tokens=1, response_id="r")
    final = Usage(input_tokens=100, output_tokens=40, response_id="r")
    apart = Usage(input_tokens=7, output_tokens=2)  # no id: a response of its own
    entries = [Thinking(usage=early), ToolCall(usage=final), AssistantText(usage=apart)]
    assert count_tokens(entries) == {"input_tokens": 107, "output_tokens": 42}
    assert total_of(count_tokens(entries)) == 149


def test_U1_the_cache_convention_of_each_provider_is_one_convention() -> None:
    """Anthropic counts cached input apart; OpenAI and Gemini within; all read alike here."""
    from turnfold.formats import anthropic_blocks, gemini_parts, openai_chat

    anthropic = anthropic_blocks.usage_of(
        {
            "input_tokens": 5,
            "cache_read_input_tokens": 90,
            "cache_creation_input_tokens": 5,
            "output_tokens": 3,
        }
    )
    openai = openai_chat.chat_usage(
        {
            "prompt_tokens": 100,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 90},
        }
    )
    gemini = gemini_parts.usage_from(
        {
            "promptTokenCount": 100,
            "candidatesTokenCount": 2,
            "thoughtsTokenCount": 1,
            "cachedContentTokenCount": 90,
        }
    )
    for usage in (anthropic, openai, gemini):
        counted = counts_of(usage)
        assert (counted["input_tokens"], counted["output_tokens"]) == (100, 3)
        assert counted["cache_read_tokens"] == 90
    assert counts_of(gemini)["reasoning_tokens"] == 1


_usages = st.one_of(
    st.none(),
    st.builds(
        Usage,
        input_tokens=st.integers(0, 50),
        output_tokens=st.one_of(st.none(), st.integers(0, 50)),
        response_id=st.sampled_from([None, "a", "b"]),
    ),
)


@given(st.lists(st.tuples(st.integers(0, 5), _usages), max_size=20))
def test_U1_the_live_count_agrees_with_one_reading(steps: list[tuple[int, Usage | None]]) -> None:
    """TokenCount, kept up to date entry by entry (a live widget), ends where one pass does."""
    live = TokenCount()
    held: dict[str, Usage | None] = {}
    for slot, usage in steps:
        live.set(f"e{slot}", usage)
        held[f"e{slot}"] = usage
    assert live.totals == count_tokens(ToolCall(id=k, usage=u) for k, u in held.items())


def test_U1_the_widget_tally_follows_usage_changed_in_place() -> None:
    transcript = Transcript()
    call = transcript.append(ToolCall(call_id="c", name="Read"))
    tally = SessionTally(transcript)
    assert tally.facts().tokens == {}
    transcript.update(call, usage=Usage(input_tokens=10, output_tokens=2, response_id="r"))
    text = transcript.append(
        AssistantText(text="done", usage=Usage(input_tokens=10, output_tokens=5, response_id="r"))
    )
    assert tally.facts([call.id, text.id]).tokens == {"input_tokens": 10, "output_tokens": 5}
    transcript.update(text, usage=None)
    assert tally.facts([text.id]).tokens == {"input_tokens": 10, "output_tokens": 2}


def test_U1_corpus_rows_carry_the_header_numbers() -> None:
    corpus = turnfold.scan([SAMPLE], cache=False, workers=1)
    row = next(iter(corpus))
    facts = session_facts(turnfold.load(SAMPLE))
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        assert row[name] == facts.tokens[name]


def test_U1_a_chat_response_of_calls_only_keeps_its_usage() -> None:
    """OpenAI and Anthropic message lists: the usage of a response with no text is kept."""
    completion = {
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "ls", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 6},
    }  # fmt: skip
    openai = turnfold.load([{"role": "user", "content": "list it"}, completion])
    anthropic = turnfold.load([
        {"role": "user", "content": "list it"},
        {"role": "assistant", "id": "msg_9", "content": [
            {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
         "usage": {"input_tokens": 2, "cache_read_input_tokens": 38, "output_tokens": 6}},
    ])  # fmt: skip
    for transcript in (openai, anthropic):
        assert session_facts(transcript).total_tokens == 46


def test_U1_a_sub_agent_s_recorded_total_is_its_tokens() -> None:
    # A sub-agent whose responses no entry carries (an OTLP trace with content capture off:
    # its model spans' sum is its metadata["usage"]) spent tokens all the same.
    recorded = Transcript(metadata={"usage": {"input_tokens": 11, "output_tokens": 1}})
    counted = Transcript([AssistantText(text="hi", usage=Usage(input_tokens=5, output_tokens=2))])
    calls = [
        ToolCall(name="Task", call_id=str(i), subagent=SubAgent(transcript=child))
        for i, child in enumerate((recorded, counted))
    ]
    assert subagent_tokens(calls) == {"input_tokens": 16, "output_tokens": 3}
    otlp = turnfold.load(FIXTURES / "traces" / "otlp" / "google-adk_calc-agent_no-content.jsonl")
    facts = session_facts(otlp)
    assert facts.subagent_tokens == {"input_tokens": 11, "output_tokens": 1}
    assert facts.tokens == {"input_tokens": 61, "output_tokens": 11}
