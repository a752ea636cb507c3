"""Claude Code ``stream-json`` (spec H-5, H-6; issue 13).

The fixture ``claude-code_v2.1.332_stream-json_subagent.jsonl`` is the stdout of the real
``claude -p … --output-format stream-json --verbose`` (Claude Code 2.1.332 from
``tests/agents``) against the harness's scripted model on 127.0.0.1 (recipe:
``tests/agents``, scenario in the commit that added it); ``…_as-array.json`` holds the same
events saved as one JSON array. The ``…_tokens-*`` files are the stdout of the real Claude
Code 2.1.332 (a run, its ``--resume``, two prompts in one process; ``…_partial-messages`` a run
with ``--include-partial-messages``) and the ``qwen-stream-json/
…_tokens-*`` files that of the real Qwen Code 0.24.4 (a run and its ``--resume``), each response
with token counts of its own (recipes: each folder's README).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.agents.claude_stream import StreamReader
from turnfold.formats.source import open_source
from turnfold.model import (
    AbortMarker,
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.process import Turn, plan_projection, project
from turnfold.session import session_facts
from turnfold.usage import Tokens, add_into, responses, transcript_tokens

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "claude-stream-json"
REAL = FIXTURES / "claude-code_v2.1.332_stream-json_subagent.jsonl"
ARRAY = FIXTURES / "claude-code_v2.1.332_stream-json_as-array.json"
TOKENS_FIRST = FIXTURES / "claude-code_v2.1.332_stream-json_tokens-first.jsonl"
TOKENS_RESUMED = FIXTURES / "claude-code_v2.1.332_stream-json_tokens-resumed.jsonl"
TOKENS_TWO_PROMPTS = FIXTURES / "claude-code_v2.1.332_stream-json_tokens-two-prompts.jsonl"
PARTIAL = FIXTURES / "claude-code_v2.1.332_stream-json_partial-messages.jsonl"
QWEN = FIXTURES.parent / "qwen-stream-json"
QWEN_FIRST = QWEN / "qwen-code_v0.24.4_stream-json_tokens-first.jsonl"
QWEN_RESUMED = QWEN / "qwen-code_v0.24.4_stream-json_tokens-resumed.jsonl"


def _calls(path: Path) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in turnfold.load(path).tool_calls()]


def _not_recorded(entry: Any) -> bool:
    """``entry`` marks a turn whose prompt the stream does not record (and is nothing else)."""
    return isinstance(entry, UserMessage) and (entry.text, entry.meta) == (
        "", {"prompt_not_recorded": True})  # fmt: skip


def _said(transcript: Transcript) -> list[str]:
    """The prompts the transcript records (marks of prompts not recorded left out)."""
    return [e.text for e in transcript.entries if isinstance(e, UserMessage)
            and not _not_recorded(e)]  # fmt: skip


@pytest.mark.parametrize("path", [REAL, ARRAY], ids=["jsonl", "array"])
def test_H5_a_real_stream_json_run_reads_as_the_session_it_was(path: Path) -> None:
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "claude-stream-json"
    assert transcript.warnings == []
    assert _calls(path) == [
        ("Read", "success"), ("Bash", "success"), ("Bash", "success"), ("Bash", "error"),
        ("Edit", "success"), ("Agent", "success"),
    ]  # fmt: skip
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds[:2] == ["UserMessage", "Thinking"]  # the prompt not recorded, then the run
    assert _not_recorded(transcript.entries[0])
    assert isinstance(transcript.entries[1], Thinking)
    last = transcript.entries[-1]
    assert isinstance(last, AssistantText)
    assert last.text == "TF-DONE-1: read, listed, ran, edited and delegated."


def test_H5_sub_agent_events_nest_under_their_agent_call() -> None:
    """Events with a ``parent_tool_use_id`` are the sub-agent's, not the session's."""
    transcript = turnfold.load(REAL)
    agent = transcript.tool_calls()[-1]
    assert agent.subagent is not None
    child = agent.subagent.transcript
    assert child is not None
    assert agent.subagent.name == "general-purpose"
    # The call's description names the task, as in the session file of the same run; the
    # prompt is the child's first message.
    assert agent.subagent.task == "scripted sub-agent"
    first = child.entries[0]
    assert isinstance(first, UserMessage)
    assert first.text == "TF-SUBTASK: echo a word and report back."
    assert [
        (c.name, c.status, c.result.text if c.result else None) for c in child.tool_calls()
    ] == [("Bash", "success", "TF-SUB-OK")]
    assert not any(
        isinstance(e, UserMessage) and e.text.startswith("TF-SUBTASK") for e in transcript.entries
    )


def test_H6_the_result_event_gives_outcome_cost_and_duration() -> None:
    meta = turnfold.load(REAL).metadata
    assert meta["outcome"] == "pass"
    assert meta["cost_usd"] == pytest.approx(0.00112)
    assert (meta["duration_ms"], meta["num_turns"]) == (3282, 7)
    assert (meta["agent"], meta["model"], meta["version"]) == (
        "claude-code", "claude-opus-5-5", "2.1.332"
    )  # fmt: skip


def test_H5_usage_is_counted_once_per_message_although_every_block_repeats_it() -> None:
    """Each content block is an event carrying the whole message's usage (spec U-1)."""
    transcript = turnfold.load(REAL)
    with_usage = [e for e in transcript.entries if getattr(e, "usage", None) is not None]
    messages = {
        json.loads(line)["message"]["id"]
        for line in REAL.read_text().splitlines()
        if json.loads(line).get("type") == "assistant"
        and json.loads(line).get("parent_tool_use_id") is None
    }
    # One entry of each message carries its usage: its last text, else its first entry.
    assert len(with_usage) == len(messages)


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "session_id": "s-1", **fields}


@pytest.mark.parametrize(
    ("subtype", "is_error", "outcome"),
    [
        ("success", False, "pass"),
        ("success", True, "error"),
        ("error_max_turns", True, "incomplete"),
        ("error_during_execution", True, "error"),
    ],
)
def test_H6_result_subtypes_are_outcomes(subtype: str, is_error: bool, outcome: str) -> None:
    events = [
        _event("system", subtype="init", model="claude-x", cwd="/w"),
        _event("assistant", parent_tool_use_id=None, message={
            "id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}),
        _event("result", subtype=subtype, is_error=is_error, result="TF-RESULT",
               total_cost_usd=0.5, num_turns=1),
    ]  # fmt: skip
    transcript = turnfold.load("\n".join(json.dumps(e) for e in events))
    assert transcript.metadata["outcome"] == outcome
    errors = [e.message for e in transcript.entries if isinstance(e, AssistantError)]
    assert errors == ([] if outcome == "pass" else ["TF-RESULT"])


def test_H5_stream_json_is_not_read_as_a_claude_code_session_or_a_message_list() -> None:
    assert which_format(open_source(REAL)[0]) == "claude-stream-json"
    assert which_format(open_source(ARRAY)[0]) == "claude-stream-json"


def test_H5_unknown_events_are_warned_about_not_dropped() -> None:
    events = [_event("system", subtype="init"), _event("system", subtype="tf_new_thing")]
    transcript = turnfold.load("\n".join(json.dumps(e) for e in events))
    assert any("tf_new_thing" in w.reason for w in transcript.warnings)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H5_a_tool_call_in_the_stream_is_paired_with_its_result() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "false"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Exit code 1",
              "is_error": True}  # fmt: skip
    events = [
        _event("assistant", parent_tool_use_id=None,
               message={"id": "m1", "role": "assistant", "content": [call]}),
        _event("user", parent_tool_use_id=None, message={"role": "user", "content": [result]}),
    ]  # fmt: skip
    (only,) = turnfold.load("\n".join(json.dumps(e) for e in events)).tool_calls()
    assert isinstance(only, ToolCall)
    assert (only.status, only.result.text if only.result else None) == ("error", "Exit code 1")


# --- Claude Code's token counts ------------------------------------------------------------


def _sent(*numbers: int) -> Tokens:
    """What the scripted server sent with the play's responses ``numbers`` (README: every count
    a number of its own), summed in turnfold's names: cached input is part of the input."""
    total: Tokens = {}
    for n in numbers:
        add_into(
            total,
            {
                "input_tokens": 3000 * n + 150,
                "output_tokens": 10 * n + 5,
                "cache_read_tokens": 1000 * n + 20,
                "cache_write_tokens": 1000 * n + 30,
            },
        )
    return total


def _without_output(counts: Tokens) -> Tokens:
    return {k: v for k, v in counts.items() if k != "output_tokens"}


def test_U1_a_claude_code_message_s_output_count_is_not_recorded() -> None:
    """Every message is written with the API's ``message_start`` usage: its input and cache
    counts are the response's, its ``output_tokens`` (1) the count at the response's start,
    never its final one. The output is not recorded; the input and cache counts are."""
    assert {
        json.loads(line)["message"]["usage"]["output_tokens"]
        for line in TOKENS_FIRST.read_text().splitlines()
        if json.loads(line)["type"] == "assistant"
    } == {1}
    transcript = turnfold.load(TOKENS_FIRST)
    assert [counts for _, counts in responses(transcript.entries, type)] == [
        _without_output(_sent(n)) for n in (1, 2, 5)
    ]
    agent = transcript.tool_calls()[-1].subagent
    assert agent is not None
    assert agent.transcript is not None
    # The sub-agent's last response (4) is not in the stream: its call's result holds its text.
    assert [c for _, c in responses(agent.transcript.entries, type)] == [_without_output(_sent(3))]


def test_U1_the_result_gives_the_run_s_total_in_turnfold_s_names() -> None:
    """The ``result``'s ``usage`` is the session's own responses (not the sub-agent's), cached
    input apart as Anthropic counts it: kept with the cache added in, it is the header's own
    part, output included; the sub-agent's part is what its messages record."""
    transcript = turnfold.load(TOKENS_FIRST)
    assert transcript.metadata["usage"] == _sent(1, 2, 5)
    tokens = transcript_tokens(transcript)
    assert tokens.own == _sent(1, 2, 5)
    assert tokens.subagents == _without_output(_sent(3))
    assert session_facts(transcript).tokens == tokens.combined
    assert tokens.combined["output_tokens"] == 15 + 25 + 55  # no sub-agent's start count added
    result = _stream(TOKENS_FIRST)[-1]
    assert transcript.metadata["model_usage"] == result["modelUsage"]  # kept as it was


def test_U1_a_resumed_run_s_result_counts_this_run_only() -> None:
    transcript = turnfold.load(TOKENS_RESUMED)
    assert transcript_tokens(transcript).own == transcript.metadata["usage"] == _sent(6, 7)


def test_U1_the_results_of_several_prompts_in_one_stream_add_up() -> None:
    """With ``--input-format stream-json`` each prompt ends in a ``result`` of its own whose
    ``usage`` counts that prompt's responses (its ``modelUsage`` and cost, all so far)."""
    results = [e for e in _stream(TOKENS_TWO_PROMPTS) if e["type"] == "result"]
    assert [r["usage"]["input_tokens"] for r in results] == [1100 + 2100, 3100 + 4100]
    transcript = turnfold.load(TOKENS_TWO_PROMPTS)
    assert transcript.metadata["usage"] == _sent(1, 2, 3, 4)
    assert transcript.metadata["cost_usd"] == results[-1]["total_cost_usd"]


def _events(path: Path, kind: str) -> list[dict[str, Any]]:
    """The raw streaming events of type ``kind`` in a ``--include-partial-messages`` stream."""
    return [
        {**e["event"], "api_message_id": e.get("api_message_id")}
        for e in _stream(path)
        if e["type"] == "stream_event" and e["event"]["type"] == kind
    ]


def test_U1_with_partial_messages_a_response_s_output_is_its_message_delta_s() -> None:
    """``--include-partial-messages`` adds the API's streaming events; each response's
    ``message_delta`` holds its final output count, written after the response's
    ``assistant`` events (their ``message_start`` count 1): it goes on the entry that carries
    the response's usage. A sub-agent's responses have no partial events: their output stays
    not recorded."""
    starts = [e["message"]["id"] for e in _events(PARTIAL, "message_start")]
    # The message_start's id is the assistant events' message.id (and the CLI's api_message_id).
    assert starts == list(dict.fromkeys(
        e["message"]["id"] for e in _stream(PARTIAL)
        if e["type"] == "assistant" and not e["parent_tool_use_id"]
    ))  # fmt: skip
    deltas = _events(PARTIAL, "message_delta")
    assert [d["api_message_id"] for d in deltas] == starts
    assert [d["usage"]["output_tokens"] for d in deltas] == [15, 25, 55]
    assert not any(
        e["type"] == "stream_event" and e["parent_tool_use_id"] for e in _stream(PARTIAL)
    )
    transcript = turnfold.load(PARTIAL)
    assert transcript.warnings == []
    assert [counts for _, counts in responses(transcript.entries, type)] == [
        _sent(n) for n in (1, 2, 5)
    ]
    tokens = transcript_tokens(transcript)
    assert tokens.own == transcript.metadata["usage"] == _sent(1, 2, 5)
    assert tokens.subagents == _without_output(_sent(3))


def test_A2_following_partial_messages_gives_the_output_when_its_delta_arrives() -> None:
    """Live, the entry that carries a response's usage gets its output count from the
    ``message_delta``, and the follow ends as the load."""
    source, _ = open_source(PARTIAL)
    reader = StreamReader(source, live=True)
    outputs: list[int | None] = []
    for line, record in source.records():
        reader.feed(record, line)
        if record.get("event", {}).get("type") == "message_delta":
            carrier = [e for e in reader.main.transcript.entries if getattr(e, "usage", None)][-1]
            assert isinstance(carrier, (AssistantText, ToolCall))
            assert carrier.usage is not None
            outputs.append(carrier.usage.output_tokens)
    assert outputs == [15, 25, 55]
    assert reader.finish().dump() == turnfold.load(PARTIAL).dump()


def test_U1_a_message_delta_s_input_counts_are_the_response_s_final_ones(tmp_path: Path) -> None:
    """The API's ``message_delta`` counts are cumulative: with a server tool run within the
    response (web search), its input counts grow past ``message_start``'s, and the delta's
    are the response's. A delta of the output count alone (an older API) leaves the input as
    ``message_start`` gave it. (The real stream above, whose deltas repeat the start's input
    counts, with its first delta's input grown and its second's input counts dropped.)"""
    records = _stream(PARTIAL)
    deltas = [
        r["event"]["usage"]
        for r in records
        if r["type"] == "stream_event" and r["event"]["type"] == "message_delta"
    ]
    deltas[0].update(input_tokens=1900, cache_read_input_tokens=1520)  # read search results
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        del deltas[1][key]
    path = tmp_path / "grown.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    counts = [counts for _, counts in responses(transcript.entries, type)]
    assert counts[0] == {
        "input_tokens": 1900 + 1520 + 1030,
        "output_tokens": 15,
        "cache_read_tokens": 1520,
        "cache_write_tokens": 1030,
    }
    assert counts[1:] == [_sent(2), _sent(5)]


# --- Qwen Code's stream-json ---------------------------------------------------------------


def _stream(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _own_usage(path: Path) -> dict[str, int]:
    """The usage of the session's own responses as the stream records them: each response's
    last message's (the others carry the CLI's empty default), its input the whole prompt."""
    totals = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0}
    for event in _stream(path):
        usage = event.get("message", {}).get("usage")
        if event["type"] != "assistant" or event["parent_tool_use_id"] or not usage["input_tokens"]:
            continue
        totals["input_tokens"] += usage["input_tokens"]
        totals["output_tokens"] += usage["output_tokens"]
        totals["cache_read_tokens"] += usage["cache_read_input_tokens"]
    return totals


def test_U1_a_resumed_qwen_run_counts_its_own_responses_not_the_session_s_total() -> None:
    """Qwen Code's ``result.usage`` is every request of the session so far: a resume replays
    the earlier runs' counts into it. The run's tokens are its two responses'."""
    transcript = turnfold.load(QWEN_RESUMED)
    result = _stream(QWEN_RESUMED)[-1]
    assert result["usage"]["input_tokens"] == 9600  # 5500 of the first run, 4100 of this one
    assert transcript_tokens(transcript).own == _own_usage(QWEN_RESUMED) == {
        "input_tokens": 4100, "output_tokens": 110, "cache_read_tokens": 3600
    }  # fmt: skip
    assert "usage" not in transcript.metadata
    raw = result["usage"]  # in turnfold's names: its input holds the cached tokens already
    assert transcript.metadata["session_usage"] == {
        "input_tokens": raw["input_tokens"],
        "output_tokens": raw["output_tokens"],
        "cache_read_tokens": raw["cache_read_input_tokens"],
    }
    assert "session_usage" not in turnfold.load(REAL).metadata  # Claude Code's is the run's
    assert turnfold.load(REAL).metadata["usage"]["input_tokens"] == 60


def test_U1_each_qwen_response_is_counted_once_on_its_text() -> None:
    """A response is one message per kind of block, ids apart, its usage on the last one only:
    the usage goes on the response's text, the zero counts of the others record nothing, and
    cached input is part of ``input_tokens``, not added to it."""
    transcript = turnfold.load(QWEN_FIRST)
    assert transcript.warnings == []
    carried = [
        (type(e).__name__, e.usage.input_tokens, e.usage.cache_read_tokens)
        for e in transcript.entries
        if isinstance(e, (AssistantText, Thinking, ToolCall)) and e.usage is not None
    ]
    assert carried == [
        ("AssistantText", 1200, 0), ("ToolCall", 1500, 1000), ("AssistantText", 1700, 1500)
    ]  # fmt: skip
    look = transcript.entries[2]  # after the prompt not recorded and the thinking
    assert isinstance(look, AssistantText)
    assert look.text.startswith("TF-LOOK-T")
    tokens = transcript_tokens(transcript)
    assert tokens.own == _own_usage(QWEN_FIRST)
    # The sub-agent's messages carry only the empty default: its tokens are not recorded.
    assert tokens.subagents == {}


def test_U1_a_qwen_response_ends_at_its_usage_or_the_next_user_event() -> None:
    """A response the API gave no usage for does not take the next response's, and a response
    that follows another without a user event between keeps its own."""
    empty = {"input_tokens": 0, "output_tokens": 0}
    usage = {"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}
    call = {"type": "tool_use", "id": "c1", "name": "run_shell_command", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "c1", "content": "ok"}
    events = [
        _event("system", subtype="init", qwen_code_version="0.24.4"),
        _event("assistant", parent_tool_use_id=None, message={
            "id": "a", "role": "assistant", "content": [{"type": "text", "text": "A"}],
            "usage": empty}),
        _event("assistant", parent_tool_use_id=None, message={
            "id": "b", "role": "assistant", "content": [call], "usage": empty}),
        _event("user", parent_tool_use_id=None, message={"role": "user", "content": [result]}),
        _event("assistant", parent_tool_use_id=None, message={
            "id": "c", "role": "assistant", "content": [{**call, "id": "c2"}], "usage": usage}),
        _event("assistant", parent_tool_use_id=None, message={
            "id": "d", "role": "assistant", "content": [{"type": "text", "text": "D"}],
            "usage": {**usage, "output_tokens": 3}}),
    ]  # fmt: skip
    transcript = turnfold.load("\n".join(json.dumps(e) for e in events))
    first, second = transcript.tool_calls()
    text = transcript.entries[1]
    assert isinstance(text, AssistantText)
    assert (first.usage, text.usage) == (None, None)
    assert second.usage is not None
    assert (second.usage.input_tokens, second.usage.output_tokens) == (7, 2)
    assert transcript_tokens(transcript).own == {"input_tokens": 14, "output_tokens": 5}


@pytest.mark.parametrize(
    "path", [QWEN_FIRST, QWEN_RESUMED, REAL], ids=["qwen", "qwen-resumed", "claude"]
)
def test_H5_the_run_s_own_prompt_is_not_in_the_stream_so_its_turn_has_none(path: Path) -> None:
    """``-p`` is not echoed (nor a prompt on stdin with ``--input-format stream-json``): the
    run's turn begins with a mark that its prompt is not recorded; no prompt is made up, and
    the session has no title."""
    transcript = turnfold.load(path)
    assert _not_recorded(transcript.entries[0])
    assert _said(transcript) == []
    row = turnfold.scan([path], cache=False).to_pandas().iloc[0]
    assert row.isna()["title"]  # no words to title the session by


GLM_BACKEND = FIXTURES / "claude-code_v2.1.138_real_glm-backend_notification-and-empty-usage.jsonl"


def test_H5_a_real_notification_of_the_cli_is_a_notice() -> None:
    """Claude Code 2.1.138 printed ``system/notification`` ("Stop hook error occurred"); it
    was an unknown event, warned of and dropped."""
    transcript = turnfold.load(GLM_BACKEND)
    assert transcript.warnings == []
    notices = [e for e in transcript if isinstance(e, SystemNotice)]
    [notice] = [e for e in notices if e.subtype == "notification"]
    assert notice.text == "Stop hook error occurred"
    assert notice.meta == {"key": "stop-hook-error", "priority": "immediate"}
    assert transcript.accounting is not None
    assert transcript.accounting.counts["system/notification"] == {"mapped": 1}


def test_H5_a_synthetic_user_event_is_the_cli_s_words_not_a_prompt() -> None:
    """The Stop hook's feedback comes back as a user event marked ``isSynthetic`` (Claude Code
    keeps it as ``isMeta``): the user typed nothing, so no prompt, a notice before the answer
    it prompted, and no corpus row titled by it."""
    transcript = turnfold.load(GLM_BACKEND)
    assert _said(transcript) == []
    kinds = [(type(e).__name__, getattr(e, "subtype", None)) for e in transcript.entries]
    at = kinds.index(("SystemNotice", "synthetic"))
    notice = transcript.entries[at]
    assert notice.text == "Stop hook feedback:\nCheck updating your expertise"
    assert notice.timestamp == "2026-05-11T06:34:53.193Z"
    assert kinds[at + 1] == ("SystemNotice", "notification")
    row = turnfold.scan([GLM_BACKEND], cache=False).to_pandas().iloc[0]
    assert row["title"] != row["title"]  # NaN: the run's own prompt is not in the stream


def test_U1_an_empty_usage_of_an_anthropic_compatible_server_records_none() -> None:
    """A GLM backend's messages carry ``{"input_tokens": 0, "output_tokens": 0}`` but for the
    first: those responses' tokens are unknown, not zero."""
    transcript = turnfold.load(GLM_BACKEND)
    carriers = [e for e in transcript if getattr(e, "usage", None) is not None]
    assert len(carriers) == 1
    assert carriers[0].usage.input_tokens == 6446  # 5166 + 1280 cached
    assert transcript.metadata["usage"]["input_tokens"] == 51030  # the result's, as recorded


def test_H5_calls_are_described_relative_to_the_init_s_working_folder() -> None:
    """``system/init`` names the cwd (Qwen Code: /home/user/project); the calls' paths, a
    sub-agent's included, read relative to it, as the session file's calls do."""
    transcript = turnfold.load(QWEN / "qwen-code_v0.24.4_stream-json_subagent.jsonl")
    assert transcript.metadata["cwd"] == "/home/user/project"
    described = [(c.name, c.description) for c in transcript.tool_calls()]
    assert ("read_file", "notes.txt") in described
    assert ("read_file", "tf-missing.txt") in described
    assert ("edit", "notes.txt") in described
    assert ("write_file", "new.txt") in described
    claude = turnfold.load(REAL)
    assert [c.description for c in claude.tool_calls() if c.name in ("Read", "Edit")] == [
        "notes.txt",
        "notes.txt",
    ]


@pytest.mark.parametrize("path", [TOKENS_FIRST, PARTIAL, REAL], ids=["first", "partial", "real"])
def test_F7_a_subagent_s_result_is_its_report_not_the_hand_back_frame(path: Path) -> None:
    """As in the session file: ``tool_use_result.content`` (less a harness note such as
    ``<tools-used-before-summary>``) is the report; the ``tool_result`` wraps it for the
    model."""
    transcript = turnfold.load(path)
    (agent,) = (c for c in transcript.tool_calls() if c.name in ("Agent", "Task"))
    assert agent.status == "success"
    assert agent.result is not None
    assert agent.result.text == "TF-SUB-DONE: the sub-agent echoed its word."


def test_H6_a_resumed_run_s_cost_is_its_own_not_the_session_s_so_far() -> None:
    """``--resume`` carries the session's cost over: the resumed run's ``total_cost_usd``
    counts the first run's requests too; ``model_usage_since_last_result`` is the run's own."""
    (result,) = [e for e in _stream(TOKENS_RESUMED) if e["type"] == "result"]
    own = result["model_usage_since_last_result"]["claude-opus-5-5"]["costUSD"]
    assert own < result["total_cost_usd"]
    meta = turnfold.load(TOKENS_RESUMED).metadata
    assert meta["cost_usd"] == pytest.approx(own)
    assert meta["session_cost_usd"] == result["total_cost_usd"]
    assert session_facts(turnfold.load(TOKENS_RESUMED)).cost.usd == pytest.approx(own)


def test_H6_a_fresh_stream_s_cost_is_its_total() -> None:
    for path in (TOKENS_FIRST, TOKENS_TWO_PROMPTS):
        results = [e for e in _stream(path) if e["type"] == "result"]
        meta = turnfold.load(path).metadata
        assert meta["cost_usd"] == results[-1]["total_cost_usd"]
        assert "session_cost_usd" not in meta


INTERRUPTED = FIXTURES / "claude-code_v2.1.332_stream-json_interrupted.jsonl"


def test_P7_an_interrupt_is_an_abort_marker_not_the_user_s_prompt() -> None:
    """The real stdout of a run whose command the user rejected, then stopped: the CLI's
    ``[Request interrupted by user for tool use]`` is no prompt (nor the run's title), and the
    rejected call is ``cancelled``, as the session file of the same run reads."""
    transcript = turnfold.load(INTERRUPTED)
    assert [e.kind for e in transcript] == ["user", "tool_call", "abort"]
    assert _said(transcript) == []
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("Bash", "cancelled")
    assert call.result is not None
    assert call.result.text.startswith("The user doesn't want to proceed with this tool use.")
    (abort,) = [e for e in transcript if isinstance(e, AbortMarker)]
    assert abort.reason == "Request interrupted by user for tool use"
    assert _said(transcript) == []
    assert session_facts(transcript).turns == 1


def test_H6_a_run_the_user_stopped_is_incomplete_not_an_error() -> None:
    """Its ``result`` is ``error_during_execution`` with ``terminal_reason`` ``aborted_tools``
    and ``errors`` holding the CLI's own ``[ede_diagnostic] …`` line: Claude Code's host shows
    such a turn as stopped and leaves that line out, as the run's session file reads (no error,
    the turn stopped)."""
    (result,) = [e for e in _stream(INTERRUPTED) if e["type"] == "result"]
    assert result["terminal_reason"] == "aborted_tools"
    assert result["errors"][0].startswith("[ede_diagnostic]")
    transcript = turnfold.load(INTERRUPTED)
    assert transcript.metadata["outcome"] == "incomplete"
    assert not [e for e in transcript if isinstance(e, AssistantError)]
    assert isinstance(transcript.entries[-1], AbortMarker)
    row = turnfold.scan([INTERRUPTED], cache=False).to_pandas().iloc[0]
    assert (row["errors"], row["outcome"]) == (0, "incomplete")


def test_H6_a_stopped_run_without_the_interrupt_event_still_ends_stopped() -> None:
    """A stop while the answer streamed (``aborted_streaming``) ends in an abort marker even
    where no ``[Request interrupted…]`` event came before the result."""
    events = [
        _event("system", subtype="init", model="claude-x", cwd="/w"),
        _event("assistant", parent_tool_use_id=None, message={
            "id": "m1", "role": "assistant", "content": [{"type": "text", "text": "TF-PART"}]}),
        _event("result", subtype="error_during_execution", is_error=True,
               terminal_reason="aborted_streaming",
               errors=["[ede_diagnostic] result_type=assistant last_content_type=text"]),
    ]  # fmt: skip
    transcript = turnfold.load("\n".join(json.dumps(e) for e in events))
    assert [e.kind for e in transcript] == ["user", "assistant", "abort"]
    assert transcript.metadata["outcome"] == "incomplete"


TROUBLE = FIXTURES / "claude-code_v2.1.332_stream-json_api-retry-then-error.jsonl"


def test_H6_a_failed_request_s_error_is_shown_once_not_again_from_the_result() -> None:
    """The real stdout of the ``trouble`` scenario: the CLI writes its message for the failed
    request (``API Error: 400 …``, an event with ``error``), then a ``result`` (``is_error``)
    whose ``result`` is that same text: one error, as the session file shows."""
    (result,) = [e for e in _stream(TROUBLE) if e["type"] == "result"]
    assert result["is_error"] is True
    transcript = turnfold.load(TROUBLE)
    errors = [e.message for e in transcript if isinstance(e, AssistantError)]
    assert errors == [result["result"]]
    assert errors == ["API Error: 400 messages: the request is not valid (TF-ERR-FATAL)"]
    assert transcript.metadata["outcome"] == "error"
    row = turnfold.scan([TROUBLE], cache=False).to_pandas().iloc[0]
    assert row["errors"] == 1


def test_H5_a_retried_request_is_a_warning_before_the_answer_it_waited_for() -> None:
    """``system/api_retry`` (made by the CLI of the session file's ``system/api_error`` while
    it retries) reads as that line does: a warning naming the status, the error and the
    attempt, where the run waited, not an error of the run."""
    transcript = turnfold.load(TROUBLE)
    assert transcript.warnings == []
    kinds = [e.kind for e in transcript]
    assert kinds == ["user", "system", "assistant", "tool_call", "error"]
    notice = transcript.entries[1]
    assert isinstance(notice, SystemNotice)
    assert (notice.text, notice.level) == (
        "API error 529: overloaded (attempt 1 of 1; retrying)", "warning")  # fmt: skip
    assert transcript.accounting is not None
    assert transcript.accounting.counts["system/api_retry"] == {"mapped": 1}
    glm = [e for e in turnfold.load(GLM_BACKEND) if isinstance(e, SystemNotice)]
    assert glm[0].text == "API error 429: rate_limit (attempt 1 of 10; retrying)"


def test_P7_an_interrupt_cancels_the_calls_still_running() -> None:
    events = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "m", "cwd": "/w"},
        {"type": "assistant", "parent_tool_use_id": None, "session_id": "s",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 9"}}]}},
        {"type": "user", "parent_tool_use_id": None, "session_id": "s", "message": {
            "role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}],
        }},
    ]  # fmt: skip
    transcript = turnfold.load("".join(json.dumps(e) + "\n" for e in events))
    assert [e.kind for e in transcript] == ["user", "tool_call", "abort"]
    assert transcript.tool_calls()[0].status == "cancelled"


def test_L2_stream_results_take_the_session_file_s_shapes() -> None:
    """An edit's ``tool_use_result`` gives its diff, a sub-agent's its duration, as the
    session file's ``toolUseResult`` does."""
    transcript = turnfold.load(REAL)
    edit = next(c for c in transcript.tool_calls() if c.name == "Edit")
    assert edit.result is not None
    assert edit.result.kind == "diff"
    assert "-TF-NOTE-LINE: the line the edit replaces." in edit.result.text.splitlines()
    agent = next(c for c in transcript.tool_calls() if c.name in ("Agent", "Task"))
    results = [e.get("tool_use_result") for e in _stream(REAL)]
    (raw,) = [r for r in results if isinstance(r, dict) and "agentId" in r]
    assert agent.duration_ms == raw["totalDurationMs"]


# --- runs whose prompt the stream does not record (spec P-1) --------------------------------


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


def _answers(transcript: Transcript) -> list[str | None]:
    return [turn.answer.text if turn.answer else None for turn in _turns(transcript)]


def test_P1_each_prompt_s_run_in_one_stream_is_a_turn_of_its_own() -> None:
    """Two prompts written on the stdin of one ``claude -p --input-format stream-json`` (real
    stdout): an ``init`` … ``result`` per prompt and neither prompt in the stream. Each run is
    a turn whose prompt is marked not recorded, and the first run's answer is its own turn's
    answer, not progress text folded into one turn with the second."""
    transcript = turnfold.load(TOKENS_TWO_PROMPTS)
    assert transcript.warnings == []
    inits = [i for i, e in enumerate(_stream(TOKENS_TWO_PROMPTS)) if e.get("subtype") == "init"]
    assert len(inits) == 2
    marks = [i for i, e in enumerate(transcript.entries) if _not_recorded(e)]
    assert marks[0] == 0
    assert len(marks) == 2
    assert _said(transcript) == []
    turns = _turns(transcript)
    assert _answers(transcript) == [
        "TF-DONE-1: checked.", "TF-DONE-2: still fine after the resume."]  # fmt: skip
    commands = [
        [e.args["command"] for e in item.segment.entries if isinstance(e, ToolCall)]
        for item in plan_projection(transcript) if item.segment is not None
    ]  # fmt: skip
    assert commands == [["echo TF-OK"], ["echo TF-AGAIN"]]
    assert [t.header.status for t in turns] == ["completed", "completed"]
    assert session_facts(transcript).turns == 2
    assert transcript.accounting is not None
    assert transcript.accounting.counts["system/init"] == {"mapped": 2}


def test_P1_a_resumed_run_s_stream_appended_to_the_first_is_its_second_turn(
    tmp_path: Path,
) -> None:
    """``claude -p --resume … >> run.jsonl``: the real first run's stdout and its resumed
    run's, in one file, read as two turns, each prompt marked not recorded."""
    both = tmp_path / "run.jsonl"
    both.write_text(TOKENS_FIRST.read_text() + TOKENS_RESUMED.read_text())
    transcript = turnfold.load(both)
    assert transcript.warnings == []
    assert _answers(transcript) == [
        "TF-DONE-1: read and delegated.", "TF-DONE-2: still fine after the resume."]  # fmt: skip
    assert [_not_recorded(e) for e in transcript.entries if isinstance(e, UserMessage)] == [
        True, True]  # fmt: skip


def test_P1_a_replayed_prompt_is_the_run_s_prompt_not_a_second_one() -> None:
    """``--replay-user-messages`` echoes each prompt just after its run's ``init``: it is the
    run's prompt, where the mark of a prompt not recorded stood, not a turn of its own; a run
    without one keeps the mark."""
    user = {"role": "user", "content": "TF-ASK: check it"}
    answer = {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "TF-OK"}]}
    events = [
        _event("system", subtype="init", model="claude-x", cwd="/w"),
        _event("user", parent_tool_use_id=None, message=user, timestamp="2026-12-05T10:00:00Z"),
        _event("assistant", parent_tool_use_id=None, message=answer),
        _event("result", subtype="success", is_error=False),
        _event("system", subtype="init", model="claude-x", cwd="/w"),
        _event("assistant", parent_tool_use_id=None, message={**answer, "id": "m2"}),
        _event("result", subtype="success", is_error=False),
    ]  # fmt: skip
    transcript = turnfold.load("\n".join(json.dumps(e) for e in events))
    assert transcript.warnings == []
    assert [e.kind for e in transcript] == ["user", "assistant", "user", "assistant"]
    prompt, _, mark, _ = transcript.entries
    assert isinstance(prompt, UserMessage)
    assert (prompt.text, prompt.meta, prompt.timestamp) == (
        "TF-ASK: check it", {}, "2026-12-05T10:00:00Z")  # fmt: skip
    assert _not_recorded(mark)
    assert _said(transcript) == ["TF-ASK: check it"]
    assert _answers(transcript) == ["TF-OK", "TF-OK"]
