"""Microsoft Agent Framework compaction (spec A-1, L-1, L-3, L-4, P-1, U-1).

The runs are the framework's own (``agent_framework_runs.py``: a scripted ``BaseChatClient``,
offline): a session a ``CompactionProvider`` summarises after each run
(``SummarizationStrategy``, its summariser scripted too), one whose older groups a
``SlidingWindowStrategy`` leaves out, and a run whose client compacts its older tool results
in the run (``ToolResultCompactionStrategy``). The strategies keep every message and mark it
(``_excluded``, ``_summary_of_message_ids``): a summary is a compaction boundary, never an
answer, and what it stands for is shown before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import turnfold
from turnfold.formats.frameworks import agent_framework
from turnfold.model import AssistantText, CompactionBoundary, ToolCall, Transcript, UserMessage
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings
from turnfold.usage import transcript_tokens

pytest.importorskip("agent_framework")

from tests.formats import agent_framework_runs as runs
from tests.formats.counters_agent_framework import agent_framework as count_calls

SUMMARIZED = runs.FIXTURES / "agent-framework_v1.23.0_session_summarized.json"
WINDOW = runs.FIXTURES / "agent-framework_v1.23.0_session_sliding-window.json"
TOOLS_RESPONSE = runs.FIXTURES / "agent-framework_v1.23.0_response_tool-results-compacted.json"
TOOLS_SESSION = runs.FIXTURES / "agent-framework_v1.23.0_session_tool-results-compacted.json"
TOOL_SUMMARIES = "[Tool results: add: 3]\n\n[Tool results: add: 7]"
U, C, T, B = "UserMessage", "ToolCall", "AssistantText", "CompactionBoundary"


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


def boundaries(transcript: Transcript) -> list[CompactionBoundary]:
    return [e for e in transcript.entries if isinstance(e, CompactionBoundary)]


def texts(transcript: Transcript, kind: type) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, kind)]


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.status, c.result.text if c.result else None) for c in transcript.tool_calls()
    ]


def excluded(transcript: Transcript) -> list[str | None]:
    return [e.meta.get("excluded") for e in transcript.entries]


@pytest.fixture(scope="module")
def summarized() -> tuple[Any, Any, list[Any]]:
    return runs.summarized()


# --- a summary is a boundary, shown where what it summarised ends --------------------------


def test_A1_a_summarized_session_shows_each_summary_as_a_boundary_not_an_answer() -> None:
    """The framework stores each summary before the messages it stands for: they were read as
    the agent's answers, first thing in the session, before its first prompt."""
    transcript = turnfold.load(SUMMARIZED)
    assert kinds(transcript) == [U, C, T, B, U, C, T, B, U, T]
    # The provider compacts when a run ends, before the history stores that run: the last
    # run of the session is not summarised, so two summaries of three.
    first, second = boundaries(transcript)
    assert [first.summary, second.summary] == runs.SUMMARIES[:2]
    assert (first.trigger, second.trigger) == ("summarized", "summarized")
    assert first.meta == {"summary_ids": ["summary_4"], "excluded_messages": 3}
    # A summary of the first summary and of the second run: both left out of the context.
    assert second.meta == {"summary_ids": ["summary_9"], "excluded_messages": 5}
    # Nothing lost or doubled: every prompt, call and answer once, in the order said.
    assert texts(transcript, UserMessage) == runs.SESSION_PROMPTS
    assert texts(transcript, AssistantText) == [
        "1+2 is 3.", "3+4 is 7.", "We added 1+2 and 3+4.",
    ]  # fmt: skip
    assert calls_of(transcript) == [("call_1", "success", "3"), ("call_2", "success", "7")]
    assert len(transcript.tool_calls()) == count_calls(SUMMARIZED)
    assert transcript.warnings == []


def test_L1_messages_left_out_of_the_context_stay_where_they_were_said_and_say_so() -> None:
    transcript = turnfold.load(SUMMARIZED)
    # The first run and the second prompt and call were summarised; the second answer was kept.
    assert excluded(transcript) == [
        "summarized", "summarized", "summarized", None,
        "summarized", "summarized", None, None, None, None,
    ]  # fmt: skip


def test_P1_a_compaction_ends_its_turn_and_the_view_shows_its_summary_once(
    summarized: tuple[Any, Any, list[Any]],
) -> None:
    view = build_view_model(turnfold.load(SUMMARIZED), DisplaySettings())
    text = render_text(view)
    assert text.count("Context compacted") == 2
    # Folded behind the divider, not shown as an answer.
    assert runs.SUMMARIES[0] not in text
    compactions = [n for n in view["nodes"] if n["kind"] == "compaction"]
    assert [runs.SUMMARIES[0] in (n["summary_html"] or "") for n in compactions] == [True, False]
    turns = [n for n in view["nodes"] if n["kind"] == "turn"]
    assert len(turns) == 3  # one per prompt: no turn split or merged by a boundary


def test_A1_the_session_object_reads_as_its_saved_json(
    summarized: tuple[Any, Any, list[Any]],
) -> None:
    _, session, _ = summarized
    loaded = turnfold.load(session)
    assert loaded == turnfold.load(SUMMARIZED)
    assert [b.summary for b in boundaries(loaded)] == runs.SUMMARIES[:2]
    assert turnfold.load(session.to_dict()) == turnfold.load(session)


def _numbers(value: Any) -> Iterator[int | float]:
    """Every number in a JSON value, however deep."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


def test_U1_the_summariser_s_usage_is_not_recorded_so_not_counted(
    summarized: tuple[Any, Any, list[Any]],
) -> None:
    """The strategy keeps the summariser's text only: its tokens are in no record, so in no
    total; the runs' own usage is not in a session either (its messages hold none)."""
    _, session, responses = summarized
    saved = session.to_dict()
    # Compared as numbers: a random id or a timestamp of the session may spell "500".
    assert runs.SUMMARIZER_USAGE["input_token_count"] not in list(_numbers(saved))
    assert "input_token_count" not in json.dumps(saved)
    transcript = turnfold.load(session)
    assert transcript_tokens(transcript).combined == {}
    shown = boundaries(transcript)
    assert len(shown) == 2
    assert not any("usage" in b.meta or "model" in b.meta for b in shown)  # none invented
    assert [r.usage_details["input_token_count"] for r in responses] == [30, 70, 50]


# --- left out with no summary -------------------------------------------------------------


def test_A1_a_sliding_window_s_exclusions_are_one_boundary_before_the_next_prompt_in_context() -> (
    None
):
    transcript = turnfold.load(WINDOW)
    assert kinds(transcript) == [U, C, T, U, C, T, B, U, T]
    (boundary,) = boundaries(transcript)
    assert (boundary.summary, boundary.trigger) == (None, "sliding_window")
    assert boundary.meta == {"excluded_messages": 5}
    # The first run and the second prompt left out; the second call and answer kept.
    assert excluded(transcript)[:6] == ["sliding_window"] * 4 + [None, None]
    assert texts(transcript, UserMessage) == runs.SESSION_PROMPTS
    assert len(transcript.tool_calls()) == count_calls(WINDOW) == 2
    _, session, _ = runs.sliding_window()
    assert turnfold.load(session) == transcript


# --- compacted in the run -----------------------------------------------------------------


def test_A1_tool_results_compacted_in_the_run_are_one_boundary_after_the_answer() -> None:
    """The function-invocation loop puts the strategy's ``[Tool results: …]`` messages in the
    response, each before the call it collapsed: the first was read as the run's answer."""
    for path, prompt in ((TOOLS_RESPONSE, []), (TOOLS_SESSION, [U])):
        transcript = turnfold.load(path)
        assert kinds(transcript) == [*prompt, C, C, C, T, B], path.name
        (boundary,) = boundaries(transcript)
        assert boundary.summary == TOOL_SUMMARIES
        assert boundary.trigger == "tool_result_compaction"
        assert boundary.meta["excluded_messages"] == 4  # two calls and their two results
        assert calls_of(transcript) == [
            ("call_1", "success", "3"), ("call_2", "success", "7"), ("call_3", "success", "11"),
        ]  # fmt: skip
        assert [c.meta.get("excluded") for c in transcript.tool_calls()] == [
            "tool_result_compaction", "tool_result_compaction", None,
        ]  # fmt: skip
        assert texts(transcript, AssistantText) == ["3, 7 and 11."]
        assert transcript.warnings == []


def test_U1_the_run_s_usage_goes_on_its_answer_once_not_on_a_summary() -> None:
    _, _, response = runs.tool_results_compacted()
    transcript = turnfold.load(response)
    answer = transcript.entries[-2]
    assert isinstance(answer, AssistantText)
    assert answer.text == "3, 7 and 11."
    assert answer.usage is not None
    # The loop adds up its four model calls; the collapsing wrote no model call.
    assert transcript_tokens(transcript).combined == {"input_tokens": 100, "output_tokens": 10}
    assert response.usage_details == {"input_token_count": 100, "output_token_count": 10}
    # The saved JSON reads the same (it leaves out the model id, which the object holds).
    assert turnfold.load(json.loads(response.to_json())) == turnfold.load(TOOLS_RESPONSE)


def test_A2_a_streamed_compacted_run_carries_no_summary_and_follows_as_it_loads() -> None:
    """The framework reconciles summaries into a whole run's response only: a streamed run's
    updates and final response hold none, so the follower has none to show (a guard: the
    follower and the load agree)."""
    transcript = Transcript()
    follower = agent_framework.Follower(transcript)
    _, _, final = runs.tool_results_compacted(stream=True, feed=follower.feed)
    follower.close()
    assert not any("_group" in m.additional_properties for m in final.messages)
    assert transcript == turnfold.load(final)
    assert not boundaries(transcript)
    assert len(transcript.tool_calls()) == 3


# --- L-4: what the marks do not account for -------------------------------------------------


def test_L4_a_summary_naming_messages_the_history_does_not_hold_is_shown_at_the_end_and_said() -> (
    None
):
    document = json.loads(SUMMARIZED.read_text(encoding="utf-8"))
    messages = document["state"]["in_memory"]["messages"]
    # The history lost the second run's tool result (msg_7), which the second summary names.
    kept = [m for m in messages if m.get("message_id") != "msg_7"]
    document["state"]["in_memory"]["messages"] = kept
    transcript = turnfold.load(document)
    assert kinds(transcript) == [U, C, T, B, U, C, T, U, T, B]
    assert boundaries(transcript)[-1].summary == runs.SUMMARIES[1]
    assert [(w.reason, w.line) for w in transcript.warnings] == [
        ("compaction summary 'summary_9' names messages the history does not hold (msg_7): "
         "shown at the end", 1),
    ]  # fmt: skip
    # Its call has no recorded outcome, not dropped (L-3).
    assert transcript.tool_calls()[1].status == "unknown"


def test_L1_the_marks_survive_the_native_dump() -> None:
    transcript = turnfold.load(SUMMARIZED)
    loaded = turnfold.load(transcript.dump())
    assert loaded == transcript
    assert len(boundaries(loaded)) == 2
    assert excluded(loaded).count("summarized") == 5


def test_A1_a_list_of_messages_saved_one_a_line_reads_the_same(tmp_path: Any) -> None:
    document = json.loads(SUMMARIZED.read_text(encoding="utf-8"))
    lines = tmp_path / "history.jsonl"
    lines.write_text(
        "".join(json.dumps(m) + "\n" for m in document["state"]["in_memory"]["messages"]),
        encoding="utf-8",
    )
    transcript = turnfold.load(lines)
    assert kinds(transcript) == kinds(turnfold.load(SUMMARIZED))
    assert transcript.accounting is not None
    assert "message/summary" in transcript.accounting.types("mapped")
    assert isinstance(transcript.entries[1], ToolCall)
