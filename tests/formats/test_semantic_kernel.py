"""Semantic Kernel's runs (``semantic-kernel``): a ``ChatHistory`` and its ``serialize()``, an
agent's ``ChatHistoryAgentThread``, its ``AgentResponseItem`` s, and its streamed run.

The committed files were written by the real semantic-kernel 1.45.0 (its OpenAI connector on a
scripted endpoint, its auto function invocation running a real plugin, its
``ChatHistorySummarizationReducer`` summarising with the same service; ``semantic_kernel_runs.py``,
run in a venv of its own: SK's pins conflict with the test set's). The tests of live objects
run where semantic-kernel is installed, and check that an object loads as its saved form does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.frameworks import semantic_kernel
from turnfold.model import (
    AssistantText,
    CompactionBoundary,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.session import session_facts

FIXTURES = Path(__file__).parent.parent / "fixtures" / "frameworks" / "semantic-kernel"
HISTORY = FIXTURES / "semantic-kernel_v1.45.0_chat-history_two-turns.json"
THREAD = FIXTURES / "semantic-kernel_v1.45.0_agent-thread_calc.json"
STREAM = FIXTURES / "semantic-kernel_v1.45.0_agent-stream_calc.jsonl"
REDUCED = FIXTURES / "semantic-kernel_v1.45.0_summarization-reducer_two-turns.json"

BOOM = "An error occurred while invoking the function math-explode: boom: y"


def shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each entry as a user sees it, with the agent it is attributed to."""
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        agent = entry.meta.get("agent")
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            rows.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        elif isinstance(entry, CompactionBoundary):
            rows.append(("compaction", agent, entry.summary))
        else:
            rows.append((type(entry).__name__, agent, getattr(entry, "text", None)))
    return rows


def usage_of(transcript: Transcript) -> list[tuple[str, Usage]]:
    return [
        (type(e).__name__, e.usage)
        for e in transcript.entries
        if getattr(e, "usage", None) is not None
    ]


def test_a_saved_chat_history_shows_prompts_calls_with_outcomes_and_answers() -> None:
    transcript = turnfold.load(HISTORY)
    assert transcript.metadata["source_format"] == "semantic-kernel"
    assert transcript.metadata["system"] == "You add things with the math plugin."
    assert shown(transcript) == [
        ("UserMessage", None, "Add 2 and 3, then explode y."),
        # The native function returned: SK recorded the arguments it ran with.
        ("call", "call_add", "math-add", {"a": 2, "b": 3}, "success", "5"),
        # It raised: SK's own failure text is all it records of that.
        ("call", "call_boom", "math-explode", {"x": "y"}, "error", BOOM),
        ("AssistantText", None, "2 + 3 = 5; explode failed with boom: y."),
        ("UserMessage", None, "And 10 plus 1?"),
        ("call", "call_add2", "math-add", {"a": 10, "b": 1}, "success", "11"),
        ("AssistantText", None, "10 + 1 = 11."),
    ]
    assert transcript.warnings == []
    calls = [e for e in transcript.entries if isinstance(e, ToolCall)]
    assert calls[0].batch_id == calls[1].batch_id is not None  # one response made both
    assert calls[2].batch_id is None
    answer = transcript.entries[3]
    assert isinstance(answer, AssistantText)
    assert answer.model == "gpt-4o-mini"
    assert answer.timestamp == "2026-01-01T00:00:14Z"  # the response's created, in UTC


def test_each_response_s_completion_usage_is_counted_once_where_it_was_made() -> None:
    transcript = turnfold.load(HISTORY)
    # A response of only calls carries its usage on its first call; one with text, on it.
    assert usage_of(transcript) == [
        ("ToolCall", Usage(input_tokens=50, output_tokens=6, cache_read_tokens=0,
                           reasoning_tokens=0, response_id="chatcmpl-1")),
        ("AssistantText", Usage(input_tokens=60, output_tokens=7, cache_read_tokens=16,
                                reasoning_tokens=0, response_id="chatcmpl-2")),
        ("ToolCall", Usage(input_tokens=70, output_tokens=8, cache_read_tokens=16,
                           reasoning_tokens=0, response_id="chatcmpl-3")),
        ("AssistantText", Usage(input_tokens=80, output_tokens=9, cache_read_tokens=16,
                                reasoning_tokens=0, response_id="chatcmpl-4")),
    ]  # fmt: skip


def test_every_message_of_a_history_is_accounted_for() -> None:
    transcript = turnfold.load(HISTORY)
    assert transcript.accounting.counts == {
        "message/system": {"mapped": 1},
        "message/user": {"mapped": 2},
        "message/assistant": {"mapped": 4},
        "message/tool": {"mapped": 3},
    }
    assert transcript.accounting.unaccounted == []


def test_an_agent_s_thread_names_the_agent_on_its_answers() -> None:
    transcript = turnfold.load(THREAD)
    assert shown(transcript) == [
        ("UserMessage", None, "Add 2 and 3, then explode y."),
        ("call", "call_add", "math-add", {"a": 2, "b": 3}, "success", "5"),
        ("call", "call_boom", "math-explode", {"x": "y"}, "error", BOOM),
        ("AssistantText", "Calc", "2 + 3 = 5; explode failed."),
        ("UserMessage", None, "Anything else?"),
        ("AssistantText", "Calc", "Nothing else to add."),
    ]
    # The agent's instructions go with each request, not into its thread.
    assert "system" not in transcript.metadata


def test_a_streamed_run_saved_loads_as_its_thread_shows_the_same_turn() -> None:
    streamed = turnfold.load(STREAM)
    thread = turnfold.load(THREAD)
    assert shown(streamed) == shown(thread)[:4]
    assert usage_of(streamed) == usage_of(thread)[:2]
    assert streamed.warnings == []
    assert streamed.accounting.counts == {
        "message/user": {"mapped": 1},
        "chunk/assistant": {"mapped": 10},
        "chunk/tool": {"mapped": 2},
    }


def events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in STREAM.read_text().splitlines()]


def test_following_a_stream_shows_calls_running_until_sk_hands_on_their_results() -> None:
    transcript = Transcript()
    follower = semantic_kernel.Follower(transcript)
    stream = events()
    calls_message = next(i for i, e in enumerate(stream) if e["role"] == "tool")
    for event in stream[:calls_message]:
        follower.feed(event)
    assert [(e.name, e.status) for e in transcript.entries if isinstance(e, ToolCall)] == [
        ("math-add", "executing"),
        ("math-explode", "executing"),
    ]
    for event in stream[calls_message:]:
        follower.feed(event)
    follower.close()
    assert shown(transcript) == shown(turnfold.load(STREAM))
    # The answer grew piece by piece into one text.
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == [
        "2 + 3 = 5; explode failed."
    ]


def test_follow_over_the_stream_ends_as_the_load_of_its_saved_form() -> None:
    run = turnfold.follow(events(), format="semantic-kernel", display=False)
    assert len(list(run)) == len(events())
    assert shown(run.transcript) == shown(turnfold.load(STREAM))
    assert usage_of(run.transcript) == usage_of(turnfold.load(STREAM))


def test_a_stream_cut_before_its_results_leaves_its_calls_without_an_outcome() -> None:
    stream = [e for e in events() if e["role"] != "tool"]
    transcript = turnfold.load(stream)
    assert [(e.name, e.status) for e in transcript.entries if isinstance(e, ToolCall)] == [
        ("math-add", "unknown"),
        ("math-explode", "unknown"),
    ]


@pytest.mark.parametrize(
    "result",
    [
        "An error occurred while invoking the function math-add: division by zero",
        "The tool call with name `math-nope` is not part of the provided tools, please try "
        "again with a supplied tool call name and make sure to validate the name.",
        "The tool call arguments are malformed. Arguments must be in JSON format. Please try "
        "again.",
        "Missing required argument(s): ['b']. Please revise the arguments to match the "
        "function signature.",
        "Received unexpected argument(s): ['c']. Please revise the arguments to match the "
        "function signature.",
        "There are `2` tool call arguments required and only `1` received. The required "
        "arguments are: ['a', 'b']. Please provide the required arguments and try again.",
    ],
)
def test_sk_s_failure_texts_are_errors(result: str) -> None:
    history = json.loads(HISTORY.read_text())
    history["messages"][3]["items"][0]["result"] = result  # call_add's result
    call = turnfold.load(history).entries[1]
    assert isinstance(call, ToolCall)
    assert (call.call_id, call.status, call.result and call.result.text) == (
        "call_add",
        "error",
        result,
    )


def test_a_result_sk_records_no_invocation_for_has_no_known_outcome() -> None:
    # A prompt function's result, or one a filter set, has no used_arguments: not a success.
    history = json.loads(HISTORY.read_text())
    del history["messages"][3]["items"][0]["metadata"]["used_arguments"]
    call = turnfold.load(history).entries[1]
    assert isinstance(call, ToolCall)
    assert (call.status, call.result and call.result.text) == ("unknown", "5")


def test_answers_without_their_thread_mark_the_prompt_as_not_recorded() -> None:
    # What a list of AgentResponseItems holds: the agent's answers only.
    thread = json.loads(THREAD.read_text())
    answers = [
        m for m in thread["messages"] if m["role"] == "assistant" and m["items"][0].get("text")
    ]
    transcript = turnfold.load(answers)
    first = transcript.entries[0]
    assert isinstance(first, UserMessage)
    assert first.meta == {"prompt_not_recorded": True}
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == [
        "2 + 3 = 5; explode failed.",
        "Nothing else to add.",
    ]


def test_a_bad_message_and_a_result_without_its_call_are_warned_of_the_rest_shown() -> None:
    history = json.loads(HISTORY.read_text())
    history["messages"].insert(2, {"content_type": "message", "role": 7, "items": []})
    del history["messages"][3]  # the first response's calls
    transcript = turnfold.load(history, format="semantic-kernel")
    reasons = [w.reason for w in transcript.warnings]
    assert "not a Semantic Kernel message: not read" in reasons
    assert "result of call 'call_add' has no call before it" in reasons
    assert "result of call 'call_boom' has no call before it" in reasons
    calls = [e for e in transcript.entries if isinstance(e, ToolCall)]
    # Shown all the same, with their results and outcomes.
    assert [(c.name, c.status) for c in calls[:2]] == [
        ("math-add", "success"),
        ("math-explode", "error"),
    ]
    assert transcript.accounting.unaccounted == []


def test_a_file_of_no_sk_messages_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(path, format="semantic-kernel")
    assert "history.json" in str(raised.value)


# --- live objects: where semantic-kernel is installed (its pins conflict with the test set's) --


@pytest.fixture(scope="module")
def runs() -> Any:
    pytest.importorskip("semantic_kernel")
    from tests.formats import semantic_kernel_runs  # type: ignore[import-not-found]

    return semantic_kernel_runs


def test_a_chat_history_object_loads_as_its_serialize_output(runs: Any) -> None:
    history = asyncio.run(runs.chat_history_run())
    transcript = turnfold.load(history)
    assert transcript.metadata["source_format"] == "semantic-kernel"
    assert shown(transcript) == shown(turnfold.load(history.serialize()))
    assert shown(transcript) == shown(turnfold.load(HISTORY))
    assert usage_of(transcript) == usage_of(turnfold.load(HISTORY))


def test_a_thread_and_its_response_items_load(runs: Any) -> None:
    thread, items = asyncio.run(runs.agent_run())
    assert shown(turnfold.load(thread)) == shown(turnfold.load(THREAD))
    answers = turnfold.load(items)
    assert answers.entries[0].meta == {"prompt_not_recorded": True}
    assert [e.text for e in answers.entries if isinstance(e, AssistantText)] == [
        "2 + 3 = 5; explode failed.",
        "Nothing else to add.",
    ]


def test_following_an_agent_s_streamed_run_live(runs: Any) -> None:
    from semantic_kernel.agents import ChatHistoryAgentThread

    async def follow() -> Transcript:
        agent = runs.agent_on(runs.stream_script())
        stream = semantic_kernel.stream_events(
            agent, messages="Add 2 and 3, then explode y.", thread=ChatHistoryAgentThread()
        )
        run = turnfold.follow(stream, display=False)
        async for _ in run:
            pass
        return run.transcript

    transcript = asyncio.run(follow())
    assert shown(transcript) == shown(turnfold.load(STREAM))
    assert usage_of(transcript) == usage_of(turnfold.load(STREAM))


def test_a_streamed_text_before_calls_is_shown_and_counted_once() -> None:
    # A response that writes a text and then calls (the real stream's first response, with
    # a text piece added): SK yields the text and the response's usage, then hands on its
    # whole message, which repeats both.
    stream = events()
    piece = json.loads(json.dumps(stream[6]))  # a text piece of the second response
    piece["metadata"] = {**stream[1]["metadata"], "usage": None}
    piece["items"][0]["text"] = "Let me compute."
    stream.insert(1, piece)
    stream[3]["items"].insert(
        0, {"metadata": {}, "content_type": "text", "text": "Let me compute."}
    )
    transcript = turnfold.load(stream)
    assert shown(transcript)[:3] == [
        ("UserMessage", None, "Add 2 and 3, then explode y."),
        ("AssistantText", "Calc", "Let me compute."),
        ("call", "call_add", "math-add", {"a": 2, "b": 3}, "success", "5"),
    ]
    assert [(kind, u.response_id) for kind, u in usage_of(transcript)] == [
        ("AssistantText", "chatcmpl-1"),
        ("AssistantText", "chatcmpl-2"),
    ]


# --- ChatHistorySummarizationReducer: its summary is a compaction -----------------------------

SUMMARY = "The user asked to add 2 and 3 and to explode y; 2 + 3 = 5 and explode failed."
#: The summariser's response (the reducer's request to the same service) and the two after it.
SUMMARIZER = Usage(input_tokens=70, output_tokens=8, cache_read_tokens=16, reasoning_tokens=0,
                   response_id="chatcmpl-3")  # fmt: skip
AFTER = [
    Usage(input_tokens=80, output_tokens=9, cache_read_tokens=16, reasoning_tokens=0,
          response_id="chatcmpl-4"),
    Usage(input_tokens=90, output_tokens=10, cache_read_tokens=16, reasoning_tokens=0,
          response_id="chatcmpl-5"),
]  # fmt: skip


def test_a_summarization_reducer_s_summary_reads_as_a_compaction_not_an_answer() -> None:
    transcript = turnfold.load(REDUCED)
    # The reducer kept the system prompt, put its summary in place of the first turn, and kept
    # the second turn; its summary is its summariser's answer (role assistant), not the agent's.
    assert transcript.metadata["system"] == "You add things with the math plugin."
    assert shown(transcript) == [
        ("compaction", None, SUMMARY),
        ("UserMessage", None, "And 10 plus 1?"),
        ("call", "call_add2", "math-add", {"a": 10, "b": 1}, "success", "11"),
        ("AssistantText", None, "10 + 1 = 11."),
    ]
    boundary = transcript.entries[0]
    assert isinstance(boundary, CompactionBoundary)
    assert boundary.timestamp == "2026-01-01T00:00:21Z"  # the summariser's response's created
    assert transcript.warnings == []
    assert transcript.accounting.counts == {
        "message/system": {"mapped": 1},
        "message/summary": {"mapped": 1},
        "message/user": {"mapped": 1},
        "message/assistant": {"mapped": 2},
        "message/tool": {"mapped": 1},
    }
    assert turnfold.load(transcript.dump()) == transcript  # the boundary's meta kept (L-2)


def test_the_summariser_s_tokens_count_in_the_session_and_in_no_turn() -> None:
    transcript = turnfold.load(REDUCED)
    # The turn's responses carry their own usage; the summariser's is on no entry a turn adds.
    assert usage_of(transcript) == [("ToolCall", AFTER[0]), ("AssistantText", AFTER[1])]
    boundary = transcript.entries[0]
    assert boundary.meta == {
        "model": "gpt-4o-mini",
        "response_id": "chatcmpl-3",
        "usage": {"input_tokens": 70, "output_tokens": 8, "cache_read_tokens": 16,
                  "reasoning_tokens": 0},
    }  # fmt: skip
    # The session spent all three responses: the summary was a billed model call.
    session = {"input_tokens": 240, "output_tokens": 27, "cache_read_tokens": 48,
               "reasoning_tokens": 0}  # fmt: skip
    assert transcript.metadata["usage"] == session
    assert session_facts(transcript).tokens == session


def test_a_summary_with_the_system_role_is_no_system_prompt() -> None:
    # SK's reducer tells a summary by its mark, whatever its role (its own code allows a
    # system one): alone at the top, it is still the compaction, not the instructions.
    history = json.loads(REDUCED.read_text())
    del history["messages"][0]
    history["messages"][0]["role"] = "system"
    transcript = turnfold.load(history)
    assert "system" not in transcript.metadata
    assert shown(transcript)[:2] == [
        ("compaction", None, SUMMARY),
        ("UserMessage", None, "And 10 plus 1?"),
    ]


def test_an_answer_whose_prompt_was_summarised_marks_it_not_recorded() -> None:
    # The reducer cuts where it may (never between a call and its result): what it kept can
    # begin with the agent's messages, their prompt in the summary.
    history = json.loads(REDUCED.read_text())
    del history["messages"][2]  # "And 10 plus 1?"
    transcript = turnfold.load(history)
    assert isinstance(transcript.entries[0], CompactionBoundary)
    prompt = transcript.entries[1]
    assert isinstance(prompt, UserMessage)
    assert prompt.meta == {"prompt_not_recorded": True}
    assert [type(e).__name__ for e in transcript.entries[2:]] == ["ToolCall", "AssistantText"]


def test_following_a_summarised_history_counts_the_summariser_as_it_comes() -> None:
    messages = json.loads(REDUCED.read_text())["messages"]
    transcript = Transcript()
    follower = semantic_kernel.Follower(transcript)
    for message in messages[:2]:  # the system prompt, the summary
        follower.feed(message)
    summarizer = {"input_tokens": 70, "output_tokens": 8, "cache_read_tokens": 16,
                  "reasoning_tokens": 0}  # fmt: skip
    assert transcript.metadata["usage"] == summarizer  # the live header counts it already
    for message in messages[2:]:
        follower.feed(message)
    follower.close()
    loaded = turnfold.load(REDUCED)
    assert shown(transcript) == shown(loaded)
    assert transcript.metadata["usage"] == loaded.metadata["usage"]


def test_a_summary_counted_once_however_often_it_is_read() -> None:
    # The same summary message twice (a history saved with a copy of it): one response.
    history = json.loads(REDUCED.read_text())
    history["messages"].insert(2, history["messages"][1])
    transcript = turnfold.load(history)
    assert transcript.metadata["usage"] == turnfold.load(REDUCED).metadata["usage"]


def test_a_summarization_reducer_object_loads_as_its_serialize_output(runs: Any) -> None:
    from semantic_kernel.agents import ChatHistoryAgentThread

    reducer, endpoint = asyncio.run(runs.summarized_run())
    # The third request was the reducer's: the first turn and SK's summarisation instructions.
    asked = endpoint.requests[2]["messages"]
    assert asked[-1]["role"] == "system"
    assert asked[-1]["content"].strip().startswith("Provide a concise and complete summarization")
    transcript = turnfold.load(reducer)
    assert transcript.metadata["source_format"] == "semantic-kernel"
    assert shown(transcript) == shown(turnfold.load(REDUCED))
    assert transcript.metadata["usage"] == turnfold.load(REDUCED).metadata["usage"]
    # An agent's thread keeping its history in the reducer reads alike.
    thread = ChatHistoryAgentThread(chat_history=reducer)
    assert shown(turnfold.load(thread)) == shown(transcript)
