"""The Cline CLI's ``--json`` stdout (``cline-json``), on what the real ``cline`` 3.0.65 printed in
the tests/agents harness (``tests/fixtures/cline/cline-cli-3.0.65_json/``): the ``work`` scenario
(reads, a search, commands that succeed and fail, edits, a sub-agent) and ``interrupt`` (Ctrl-C
during a command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold import AssistantText, Thinking, ToolCall
from turnfold.session import session_facts
from turnfold.usage import counts_of

FIXTURES = Path(__file__).parents[1] / "fixtures" / "cline" / "cline-cli-3.0.65_json"
WORK, INTERRUPT = FIXTURES / "work.jsonl", FIXTURES / "interrupt.jsonl"


def test_it_is_detected_as_its_own_format() -> None:
    assert turnfold.load(WORK).metadata["source_format"] == "cline-json"
    assert turnfold.load(INTERRUPT).metadata["source_format"] == "cline-json"


def test_the_calls_their_arguments_outcomes_and_results() -> None:
    transcript = turnfold.load(WORK)
    calls = transcript.tool_calls()
    assert [(c.call_id, c.name, c.status) for c in calls] == [
        ("call_tffirst_0_0", "read_files", "success"),
        ("call_tffirst_0_1", "search_codebase", "success"),
        ("call_tffirst_0_2", "run_commands", "success"),
        ("call_tffirst_1_0", "run_commands", "success"),
        ("call_tffirst_2_0", "run_commands", "error"),
        ("call_tffirst_3_0", "editor", "success"),
        ("call_tffirst_3_1", "editor", "success"),
        ("call_tffirst_4_0", "run_commands", "success"),
        ("call_tffirst_5_0", "spawn_agent", "success"),
    ]
    # One model response's calls are one batch.
    assert {c.batch_id for c in calls[:3]} == {"call_tffirst_0_0"}
    assert calls[3].args == {"commands": ["printf 'TF-OK-%s\\n' 23"]}
    assert calls[3].result is not None
    assert calls[3].result.text == "TF-OK-23\n"
    failed = calls[4].result
    assert failed is not None
    assert failed.text is not None
    assert failed.text.startswith("[Command exited with code 3]\nTF-FAIL-OUT")
    assert "No such file or directory" in failed.text
    assert calls[5].args["old_text"] == "TF-NOTE-LINE"
    assert calls[7].result is not None
    assert "TF-LINE-6000" in (calls[7].result.text or "")
    assert calls[0].duration_ms == 8.0


def test_text_thinking_and_the_final_answer() -> None:
    entries = turnfold.load(WORK).entries
    assert isinstance(entries[0], Thinking)
    assert entries[0].text == "TF-THINK: read, search and list at once."
    texts = [e.text for e in entries if isinstance(e, AssistantText)]
    assert texts == [
        "TF-FIX: editing the notes and adding a file.",
        "TF-DONE-1: read, searched, listed, ran, edited, wrote and delegated.",
    ]
    assert all(e.model == "claude-sonnet-4-6" for e in entries if isinstance(e, AssistantText))


def test_each_model_call_s_usage_once_and_the_run_s_totals() -> None:
    transcript = turnfold.load(WORK)
    spawn = transcript.tool_calls()[-1]
    assert spawn.usage is not None
    assert counts_of(spawn.usage) == {
        "input_tokens": 18150,
        "output_tokens": 65,
        "cache_read_tokens": 6020,
        "cache_write_tokens": 6030,
    }
    assert spawn.meta["cost_usd"] == pytest.approx(0.0436935)
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert last.usage is not None
    assert last.usage.input_tokens == 27150
    meta = transcript.metadata
    # run_result's usage: the lead's own calls, not the sub-agent's.
    assert meta["usage"] == {
        "input_tokens": 91050, "output_tokens": 335,
        "cache_read_tokens": 30140, "cache_write_tokens": 30210,
    }  # fmt: skip
    assert meta["cost_usd"] == pytest.approx(0.2194545)
    assert (meta["model"], meta["model_provider"]) == ("claude-sonnet-4-6", "anthropic")
    assert meta["duration_ms"] == 1258
    assert "outcome" not in meta
    assert meta["finish_reason"] == "completed"
    assert transcript.warnings == []


def test_the_sub_agent_s_events_are_its_own_transcript_under_its_call() -> None:
    spawn = turnfold.load(WORK).tool_calls()[-1]
    assert spawn.result is not None
    assert spawn.result.text == "TF-SUB-DONE: the sub-agent echoed its word."
    agent = spawn.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert agent.task == "TF-SUBTASK: echo a word and report back."
    assert agent.agent_id == "agent_1796465622946_3iqfrd"
    assert (agent.output_tokens, agent.tool_count, agent.steps_missing) == (160, 1, False)
    (call,) = agent.transcript.tool_calls()
    assert (call.call_id, call.args, call.status) == (
        "call_tfsubtask_0_0", {"commands": ["echo TF-SUB-OK"]}, "success",
    )  # fmt: skip
    assert call.usage is not None
    assert call.usage.input_tokens == 21150
    answer = agent.transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "TF-SUB-DONE: the sub-agent echoed its word."
    assert agent.transcript.metadata["usage"]["input_tokens"] == 45300


def test_a_stream_cut_off_by_ctrl_c_keeps_the_running_command_s_output_and_says_so() -> None:
    transcript = turnfold.load(INTERRUPT)
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("run_commands", "unknown")
    assert call.result is not None
    assert call.result.text == "TF-SLOW-START\n"
    assert [w.reason for w in transcript.warnings] == [
        "the stream ends before the run did (no done event); 1 call(s) without a result"
    ]


def _events(*events: dict[str, object]) -> str:
    return "".join(json.dumps({"ts": "2026-12-05T10:00:00.000Z", **e}) + "\n" for e in events)


def test_a_denied_call_an_error_and_an_aborted_run() -> None:
    start = {"type": "content_start", "contentType": "tool", "toolName": "editor",
             "toolCallId": "c1", "input": {"path": "a.txt", "new_text": "x"}}  # fmt: skip
    denied = (
        "Tool execution was cancelled because the user sent a follow-up message.\n\n"
        "The user provided the following feedback:\n<feedback>\nnot that file\n</feedback>"
    )
    end = {"type": "content_end", "contentType": "tool", "toolName": "editor",
           "toolCallId": "c1", "output": denied, "error": denied}  # fmt: skip
    text = _events(
        {"type": "hook_event", "hookEventName": "agent_start", "agentId": "a",
         "parentAgentId": None},
        {"type": "agent_event", "event": {"type": "iteration_start", "iteration": 1}},
        {"type": "agent_event", "event": start},
        {"type": "agent_event", "event": end},
        {"type": "agent_event", "event": {"type": "error", "recoverable": False, "iteration": 1,
                                          "error": {"name": "Error", "message": "TF-BOOM"}}},
        {"type": "agent_event", "event": {"type": "done", "reason": "aborted", "text": "",
                                          "iterations": 1}},
        {"type": "run_aborted", "reason": "local_abort", "message": "aborted"},
    )  # fmt: skip
    transcript = turnfold.load(text)
    (call,) = transcript.tool_calls()
    assert call.status == "cancelled"
    assert [type(e).__name__ for e in transcript.entries] == [
        "ToolCall", "UserMessage", "AssistantError",
    ]  # fmt: skip
    assert transcript.entries[1].text == "not that file"  # type: ignore[attr-defined]
    assert transcript.entries[2].message == "TF-BOOM"  # type: ignore[attr-defined]
    assert transcript.metadata["outcome"] == "cancelled"
    assert isinstance(transcript.entries[0], ToolCall)


def test_the_session_spans_the_run_not_only_its_entries() -> None:
    # The `trouble` run: its first request was retried for two seconds before the model's first
    # text; the run's span is its first line (the lead's agent_start) to its run_result, as
    # the run_result's own durationMs (2291) says, not the 80 ms between its entries.
    facts = session_facts(turnfold.load(FIXTURES / "trouble.jsonl"))
    assert facts.started is not None
    assert facts.ended is not None
    assert facts.started.isoformat() == "2026-12-05T18:45:25.174000+00:00"
    assert facts.ended.isoformat() == "2026-12-05T18:45:27.473000+00:00"
    assert facts.duration_s == pytest.approx(2.299)
    # A stream cut off before its run_result still starts at its first line.
    facts = session_facts(turnfold.load(INTERRUPT))
    assert facts.started is not None
    assert facts.started.isoformat() == "2026-12-05T10:13:44.228000+00:00"
