"""The Claude Agent SDK's messages (spec A-1, A-2, A-3, L-1, L-3, L-4, X-2; issue 22).

The runs are the real SDK's (``claude-agent-sdk`` 0.2.189): ``query()`` over a scripted
``Transport`` that plays the stream-json lines the ``claude`` CLI prints, parsed by the SDK's
own message parser (``tests/formats/claude_agent_sdk_runs.py``). The fixture under
``tests/fixtures/frameworks/claude-agent-sdk/`` is that run's messages saved with
``dataclasses.asdict``, written by the same file's ``main()``. The ``…_cli-*.json`` fixtures are the
messages of the ``claude`` CLI bundled in the SDK's wheel (2.1.332), run by the same file's
``main() --cli`` inside ``unshare -n`` against the scripted fake Anthropic API of
``shared/notes/real-agents/claude/fake_anthropic.py`` on 127.0.0.1, with and without partial
messages. The edge cases below build the SDK's message dataclasses directly.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks import claude_agent_sdk
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptChange,
    UserMessage,
)
from turnfold.process import plan_projection, segment_answer
from turnfold.session import session_facts
from turnfold.usage import counts_of

pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is in the frameworks extra")

from claude_agent_sdk import types as t

from tests.formats import claude_agent_sdk_runs as runs
from tests.formats.counters_claude_agent_sdk import claude_agent_sdk as count_saved_calls

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "claude-agent-sdk"
SAVED = FIXTURES / "claude-agent-sdk_v0.2.189_asdict_subagent.json"
CLI = FIXTURES / "claude-agent-sdk_v0.2.189_asdict_cli-subagent.json"
CLI_PARTIAL = FIXTURES / "claude-agent-sdk_v0.2.189_asdict_cli-partial-messages.json"
#: The same run of the CLI 2.1.337 that claude-agent-sdk 0.2.190 bundles (newer than the pin): its
#: task events add ``written_at`` and its task list ``start_time``, which nothing here reads.
CLI_NEWER = FIXTURES / "claude-agent-sdk_v0.2.190_asdict_cli-subagent.json"
NAME = claude_agent_sdk.NAME


@pytest.fixture(scope="module")
def messages() -> list[Any]:
    """What ``query()`` yielded for the scripted run."""
    found: list[Any] = runs.run()
    return found


def _all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def _summary(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Calls (id, name, args, status, result) at every depth, and the final answer."""
    calls = [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in _all_calls(transcript)
    ]
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    return [*calls, ("answer", texts[-1] if texts else None)]


def _sdk_tool_uses(messages: list[Any]) -> set[str]:
    """The SDK's own count: ``ToolUseBlock`` ids in ``AssistantMessage`` contents."""
    return {
        block.id
        for message in messages
        if isinstance(message, t.AssistantMessage)
        for block in message.content
        if isinstance(block, (t.ToolUseBlock, t.ServerToolUseBlock))
    }


# --- after the run --------------------------------------------------------------------


def test_A1_query_s_messages_load_with_thinking_calls_statuses_sub_agent_and_answer(
    messages: list[Any],
) -> None:
    transcript = turnfold.load(messages)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    meta = transcript.metadata
    assert meta["source_format"] == NAME
    assert (meta["model"], meta["session_id"], meta["version"]) == (
        "claude-sonnet-4-5", runs.SESSION, "2.1.332"
    )  # fmt: skip
    unprompted, thinking = transcript.entries[:2]  # query()'s prompt is not among them
    assert isinstance(unprompted, UserMessage)
    assert (unprompted.text, unprompted.meta) == ("", {"prompt_not_recorded": True})
    assert isinstance(thinking, Thinking)
    assert thinking.text == "Add first, then run false."
    assert [(c.name, c.args, c.status) for c in transcript.tool_calls()] == [
        ("mcp__calc__add", {"a": 1, "b": 2}, "success"),
        ("Bash", {"command": "false"}, "error"),  # ToolResultBlock.is_error
        ("Agent", runs.AGENT_ARGS, "success"),
    ]
    results = [c.result.text if c.result else None for c in transcript.tool_calls()]
    assert results == ["3", "Exit code 1", "The answer is in answer.txt."]
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == runs.ANSWER
    assert answer.model == "claude-sonnet-4-5"


def test_L1_the_sub_agent_s_messages_nest_under_its_agent_call(messages: list[Any]) -> None:
    """Messages with a ``parent_tool_use_id`` are the sub-agent's, not the session's."""
    agent = turnfold.load(messages).tool_calls()[-1]
    assert agent.subagent is not None
    assert agent.subagent.transcript is not None
    assert (agent.subagent.name, agent.subagent.task, agent.subagent.tool_count) == (
        "general-purpose", "find the answer file", 1
    )  # fmt: skip
    child = agent.subagent.transcript
    assert [(c.name, c.args, c.status) for c in child.tool_calls()] == [
        ("Glob", {"pattern": "*.txt"}, "success")
    ]
    assert [e.text for e in child.entries if isinstance(e, AssistantText)] == [
        "The answer is in answer.txt."
    ]


def test_A1_an_independent_count_of_the_sdk_s_tool_uses_equals_the_calls(
    messages: list[Any],
) -> None:
    transcript = turnfold.load(messages)
    assert {c.call_id for c in _all_calls(transcript)} == _sdk_tool_uses(messages)
    assert len(_all_calls(transcript)) == len(_sdk_tool_uses(messages)) == 4


def test_A1_usage_is_counted_once_per_message_id_and_the_totals_come_from_the_result(
    messages: list[Any],
) -> None:
    """The CLI splits one API message into several ``AssistantMessage`` objects with the same
    ``message_id``, each holding the ``message_start`` usage: it is counted once, and its
    output count (``message_start``'s 1, never the final count) is not recorded."""
    transcript = turnfold.load(messages)
    ids = [
        m.message_id
        for m in messages
        if isinstance(m, t.AssistantMessage) and m.parent_tool_use_id is None
    ]
    assert len(ids) == 5
    assert len(set(ids)) == 4
    with_usage = [e for e in transcript.entries if getattr(e, "usage", None) or "usage" in e.meta]
    assert len(with_usage) == len(set(ids))
    first = transcript.entries[1]  # msg_01: thinking + add, no text: on its first entry
    assert isinstance(first, Thinking)
    assert counts_of(first.usage) == {"input_tokens": 160, "cache_read_tokens": 40}  # cache in
    assert "usage" not in transcript.tool_calls()[0].meta
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (160, None)  # cache in
    result = messages[-1]
    assert isinstance(result, t.ResultMessage)
    meta = transcript.metadata
    assert meta["usage"] == {"input_tokens": 800, "output_tokens": 90, "cache_read_tokens": 200}
    assert meta["model_usage"] == result.model_usage
    assert (meta["outcome"], meta["cost_usd"], meta["num_turns"], meta["duration_ms"]) == (
        "pass", 0.0123, 4, 4200
    )  # fmt: skip


def test_A1_a_tuple_a_single_message_and_session_messages_read_too(messages: list[Any]) -> None:
    whole = turnfold.load(messages)
    assert turnfold.load(tuple(messages)).dump() == whole.dump()
    (only,) = turnfold.load(messages[1]).entries  # one AssistantMessage
    assert isinstance(only, Thinking)
    # get_session_messages() gives SessionMessage objects: type, uuid, session id, message.
    lines = [line for line in runs.script() if line["type"] in ("user", "assistant")]
    stored = [
        t.SessionMessage(
            type=line["type"], uuid=line["uuid"], session_id=runs.SESSION,
            message=line["message"], parent_tool_use_id=line["parent_tool_use_id"],
        )
        for line in lines
    ]  # fmt: skip
    read = turnfold.load(stored)
    assert read.metadata["source_format"] == NAME
    assert read.warnings == []
    assert _summary(read) == _summary(whole)


def test_A1_plain_gives_the_lines_the_cli_printed_and_leaves_the_messages_alone(
    messages: list[Any],
) -> None:
    before = copy.deepcopy(messages)
    records = claude_agent_sdk.plain(messages)
    assert messages == before
    assert [r["type"] for r in records] == [line["type"] for line in runs.script()]
    for record, line in zip(records, runs.script(), strict=True):
        if line["type"] in ("assistant", "user"):
            assert record["message"]["content"] == line["message"]["content"]
            assert record["parent_tool_use_id"] == line["parent_tool_use_id"]
    # The lines are the CLI's stream-json: saved, they load as that format, with the same run.
    text = "\n".join(json.dumps(r) for r in records)
    as_stream = turnfold.load(text)
    assert as_stream.metadata["source_format"] == "claude-stream-json"
    assert _summary(as_stream) == _summary(turnfold.load(messages))


def test_A1_the_asdict_fixture_loads_from_its_file_by_detection(
    messages: list[Any], tmp_path: Path
) -> None:
    assert which_format(open_source(SAVED)[0]) == NAME
    saved = turnfold.load(SAVED)
    assert saved.warnings == []
    assert saved.metadata["source_format"] == NAME
    assert saved.dump() == turnfold.load(messages).dump()  # the block types recovered
    assert len(_all_calls(saved)) == count_saved_calls(SAVED) == 4
    # JSON lines of the same dicts, as a notebook may append them one by one.
    lines = tmp_path / "run.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in runs.as_dicts(messages)), encoding="utf-8")
    assert which_format(open_source(lines)[0]) == NAME
    assert turnfold.load(lines).dump() == saved.dump()


def test_A1_a_fresh_run_saved_with_asdict_reads_like_the_fixture() -> None:
    fresh = json.dumps(runs.as_dicts(runs.run()))
    assert turnfold.load(fresh).dump() == turnfold.load(SAVED).dump()


@pytest.mark.parametrize(
    "path", [CLI, CLI_PARTIAL, CLI_NEWER], ids=["whole", "partial", "whole-cli-2.1.337"]
)
def test_A1_the_real_cli_s_messages_read_with_the_failing_bash_and_the_sub_agent(
    path: Path,
) -> None:
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.metadata["source_format"] == NAME
    assert isinstance(transcript.entries[1], Thinking)  # after the prompt not recorded
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("Bash", "success"), ("Bash", "error"), ("Agent", "success")
    ]  # fmt: skip
    failed = calls[1].result
    assert failed is not None
    assert failed.text is not None
    assert failed.text.startswith("Exit code 2")
    agent = calls[2].subagent
    assert agent is not None
    assert agent.transcript is not None
    # The call's description names the task (a background agent's messages start without its
    # prompt either way).
    assert (agent.name, agent.task) == ("general-purpose", "sub task")
    assert [(c.name, c.status) for c in agent.transcript.tool_calls()] == [("Bash", "success")]
    assert len(_all_calls(transcript)) == count_saved_calls(path) == 4
    # The CLI split the first API message (thinking, then Bash) into two messages of one id.
    saved = json.loads(path.read_text(encoding="utf-8"))
    ids = [m["message_id"] for m in saved if "message_id" in m and not m["parent_tool_use_id"]]
    assert len(ids) == len(set(ids)) + 1
    with_usage = [e for e in transcript.entries if getattr(e, "usage", None) or "usage" in e.meta]
    assert len(with_usage) == len(set(ids))


def test_A1_with_partial_messages_each_response_s_output_is_its_message_delta_s() -> None:
    """``include_partial_messages``: each response's ``StreamEvent`` ``message_delta`` holds
    its final output count (its ``AssistantMessage`` objects, ``message_start``'s 1). The SDK's
    ``StreamEvent`` has no message id: the delta is of the message its agent's last
    ``message_start`` began. Without partial messages, or for the sub-agent's responses (which
    have no ``StreamEvent``), the output is not recorded."""
    saved = json.loads(CLI_PARTIAL.read_text(encoding="utf-8"))
    deltas = [m["event"] for m in saved if m.get("event", {}).get("type") == "message_delta"]
    assert [d["usage"]["output_tokens"] for d in deltas] == [5] * 5
    assert {m["usage"]["output_tokens"] for m in saved if "message_id" in m} == {1}

    def outputs(transcript: Transcript) -> list[int | None]:
        usages = [getattr(e, "usage", None) for e in transcript.entries]
        return [u.output_tokens for u in usages if u is not None]

    partial, whole = turnfold.load(CLI_PARTIAL), turnfold.load(CLI)
    assert outputs(partial) == [5] * 5
    assert outputs(whole) == [None] * 5
    agent = partial.tool_calls()[-1].subagent
    assert agent is not None
    assert agent.transcript is not None
    assert outputs(agent.transcript) == [None, None]


def test_A2_following_the_real_cli_s_partial_messages_ends_as_their_load() -> None:
    saved = json.loads(CLI_PARTIAL.read_text(encoding="utf-8"))
    assert sum("event" in m for m in saved) > 20  # StreamEvents
    live = Transcript()
    grown: list[TranscriptChange] = []
    live.observe(lambda change: grown.append(change) if change.fields == ("text",) else None)
    follower = claude_agent_sdk.Follower(live)
    for message in saved:  # the saved dicts, as the messages would arrive
        follower.feed(message)
    follower.close()
    assert live.dump() == turnfold.load(CLI_PARTIAL).dump()
    assert {type(c.entry).__name__ for c in grown} == {"Thinking", "AssistantText"}


# --- edge cases, built from the dataclasses ------------------------------------------------


def _assistant(*blocks: Any, message_id: str = "msg_x", **fields: Any) -> Any:
    return t.AssistantMessage(
        content=list(blocks), model="claude-x", message_id=message_id, **fields
    )


def _user(*blocks: Any, parent: str | None = None) -> Any:
    return t.UserMessage(content=list(blocks), parent_tool_use_id=parent)


def _result(subtype: str = "success", is_error: bool = False, **fields: Any) -> Any:
    return t.ResultMessage(
        subtype=subtype, duration_ms=10, duration_api_ms=5, is_error=is_error, num_turns=1,
        session_id="s", **fields,
    )  # fmt: skip


def test_L3_a_result_without_is_error_succeeds_and_a_call_without_a_result_stays_unknown() -> None:
    transcript = turnfold.load(
        [
            _assistant(t.ToolUseBlock(id="toolu_a", name="Read", input={"file_path": "a"})),
            _user(t.ToolResultBlock(tool_use_id="toolu_a", content="text of a")),
            _assistant(
                t.ToolUseBlock(id="toolu_b", name="Bash", input={"command": "x"}), message_id="m2"
            ),
        ]
    )  # fmt: skip
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("Read", "success"), ("Bash", "unknown")
    ]  # fmt: skip
    assert all(c.started_at is None and c.duration_ms is None for c in transcript.tool_calls())


def test_A1_server_tools_thinking_api_errors_resets_and_sdk_bookkeeping() -> None:
    advisor = t.ServerToolUseBlock(id="srvtoolu_1", name="advisor", input={"question": "q"})
    advised = t.ServerToolResultBlock(
        tool_use_id="srvtoolu_1", content={"type": "advisor_result", "text": "do it"}
    )
    messages = [
        _assistant(t.ThinkingBlock(thinking="", signature="opaque"), advisor, advised),
        t.MirrorErrorMessage(subtype="mirror_error", data={"type": "system"}, error="disk"),
        _assistant(t.TextBlock(text="API Error: rate limited"), message_id="m2",
                   error="rate_limit"),
        t.ConversationResetMessage(new_conversation_id="c2", uuid="r", session_id="s"),
        t.StreamEvent(uuid="e", session_id="s", event={"type": "message_stop"}),
        _result("error_max_turns", True, result="stopped at 1 turn"),
    ]  # fmt: skip
    for transcript in (turnfold.load(messages), turnfold.load(json.dumps(runs.as_dicts(messages)))):
        assert transcript.warnings == []
        assert transcript.metadata["source_format"] == NAME
        kinds = [type(e).__name__ for e in transcript.entries]
        assert kinds == ["Thinking", "ToolCall", "AssistantError", "SystemNotice", "AssistantError"]
        thinking, call, api_error, reset, stopped = transcript.entries
        assert isinstance(thinking, Thinking)
        assert thinking.form == "encrypted"
        assert isinstance(call, ToolCall)
        assert (call.name, call.status) == ("advisor", "success")
        assert isinstance(api_error, AssistantError)
        assert (api_error.message, api_error.meta) == (
            "API Error: rate limited",
            {"error": "rate_limit"},
        )
        assert isinstance(reset, SystemNotice)
        assert reset.subtype == "conversation_reset"
        assert isinstance(stopped, AssistantError)
        assert stopped.message == "stopped at 1 turn"
        assert transcript.metadata["outcome"] == "incomplete"
        assert transcript.accounting is not None
        counts = transcript.accounting.counts
        assert counts["system/mirror_error"] == {"ignored": 1}
        assert counts["stream_event"] == {"ignored": 1}


def test_A1_split_messages_of_one_id_give_its_usage_to_the_last_text_only() -> None:
    usage = {"input_tokens": 7, "output_tokens": 1}
    transcript = turnfold.load(
        [
            _assistant(t.TextBlock(text="first"), message_id="m1", usage=usage),
            _assistant(t.TextBlock(text="second"), message_id="m1", usage=usage),
        ]
    )
    first, second = transcript.entries
    assert isinstance(first, AssistantText)
    assert isinstance(second, AssistantText)
    assert first.usage is None
    assert second.usage is not None
    assert second.usage.input_tokens == 7


def test_L1_a_sub_agent_of_a_sub_agent_nests_two_levels_deep() -> None:
    task = {"description": "d", "prompt": "p", "subagent_type": "explorer"}
    transcript = turnfold.load(
        [
            _assistant(t.ToolUseBlock(id="toolu_1", name="Task", input=task)),
            _assistant(t.ToolUseBlock(id="toolu_2", name="Task", input=task), message_id="m2",
                       parent_tool_use_id="toolu_1"),
            _assistant(t.ToolUseBlock(id="toolu_3", name="Bash", input={"command": "ls"}),
                       message_id="m3", parent_tool_use_id="toolu_2"),
            _user(t.ToolResultBlock(tool_use_id="toolu_3", content="x", is_error=True),
                  parent="toolu_2"),
            _user(t.ToolResultBlock(tool_use_id="toolu_2", content="done"), parent="toolu_1"),
            _user(t.ToolResultBlock(tool_use_id="toolu_1", content="done")),
        ]
    )  # fmt: skip
    assert transcript.warnings == []
    (outer,) = transcript.tool_calls()
    assert outer.subagent is not None
    assert outer.subagent.transcript is not None
    (inner,) = outer.subagent.transcript.tool_calls()
    assert inner.subagent is not None
    assert inner.subagent.transcript is not None
    (bash,) = inner.subagent.transcript.tool_calls()
    assert (outer.status, inner.status, bash.status) == ("success", "success", "error")


# --- L-4: bad input ------------------------------------------------------------------------


def test_L4_a_list_of_the_sdk_s_other_objects_is_a_format_error_naming_the_source() -> None:
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load([t.TextBlock(text="a block, not a message"), t.ClaudeAgentOptions()])
    assert "<object>" in str(raised.value)
    assert NAME in str(raised.value)


def test_L4_an_object_among_the_messages_is_a_warning_and_the_rest_is_shown(
    messages: list[Any],
) -> None:
    transcript = turnfold.load([*messages[:4], t.TextBlock(text="stray"), *messages[4:]])
    assert [w.reason for w in transcript.warnings] == [
        "unknown stream-json event '(TextBlock)' skipped"
    ]
    assert transcript.warnings[0].line == 5
    assert _summary(transcript) == _summary(turnfold.load(messages))


def test_L4_a_malformed_saved_file_warns_on_its_lines_and_reads_the_rest(
    messages: list[Any], tmp_path: Path
) -> None:
    lines = [json.dumps(m) for m in runs.as_dicts(messages)]
    lines[3] = lines[3][:40]  # a truncated line
    broken = dict(runs.as_dicts(messages)[4])
    broken["content"] = {"not": "blocks"}  # an AssistantMessage whose content is no list
    lines[4] = json.dumps(broken)
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == NAME
    # 4: invalid JSON; 5: no message; 6: the result of the call line 5 held.
    assert sorted({w.line for w in transcript.warnings if w.line is not None}) == [4, 5, 6]
    assert all(w.source == str(path) for w in transcript.warnings)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert [(c.name, c.status) for c in _all_calls(transcript)] == [
        ("mcp__calc__add", "unknown"), ("Agent", "success"), ("Glob", "success")
    ]  # fmt: skip


# --- live -----------------------------------------------------------------------------


def _followed(partial: bool) -> tuple[Transcript, list[Any], list[TranscriptChange]]:
    """The run followed with ``turnfold.follow`` over ``query()``; what the follower's
    transcript became, the messages, and every change the transcript announced."""
    follows: list[Any] = []
    changes: list[TranscriptChange] = []

    def wrap(stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
        follows.append(turnfold.follow(stream, display=False))
        follows[0].transcript.observe(changes.append)
        return follows[0]  # type: ignore[no-any-return]

    messages = runs.run_followed(wrap, partial=partial)
    return follows[0].transcript, messages, changes


def test_A2_following_query_with_partial_messages_grows_the_text_and_ends_as_load() -> None:
    live, messages, changes = _followed(partial=True)
    assert any(isinstance(m, t.StreamEvent) for m in messages)
    loaded = turnfold.load(messages)
    assert live.warnings == loaded.warnings == []
    assert live.metadata["source_format"] == NAME
    assert _summary(live) == _summary(loaded) == _summary(turnfold.load(runs.run()))
    assert live.dump() == loaded.dump()
    # The answer grew piece by piece from its deltas before its AssistantMessage settled it.
    answer = live.entries[-1]
    grown = [c for c in changes if c.entry is answer and c.fields == ("text",)]
    assert len(grown) == 3
    thinking = live.entries[1]  # after the prompt not recorded
    assert isinstance(thinking, Thinking)
    assert not thinking.streaming
    assert any(c.entry is thinking and c.fields == ("text",) for c in changes)
    # Calls ran ("executing") until their results arrived.
    started = {
        c.entry.id for c in changes if c.action == "append" and isinstance(c.entry, ToolCall)
    }
    assert len(started) == 3
    assert all(c.status != "executing" for c in _all_calls(live))


def test_A2_following_whole_messages_shows_what_load_shows() -> None:
    live, messages, _ = _followed(partial=False)
    assert _summary(live) == _summary(turnfold.load(messages))
    assert live.dump() == turnfold.load(messages).dump()


def test_A2_a_call_is_executing_and_its_sub_agent_nested_while_it_runs(
    messages: list[Any],
) -> None:
    transcript = Transcript()
    follower = claude_agent_sdk.Follower(transcript)
    seen: dict[str, Any] = {}
    for message in messages:
        follower.feed(message)
        calls = transcript.tool_calls()
        agent = calls[-1] if calls and calls[-1].name == "Agent" else None
        if agent is not None and agent.subagent is not None and "nested" not in seen:
            seen["nested"] = (agent.status, type(message).__name__, message.parent_tool_use_id)
        if calls and "first" not in seen:
            seen["first"] = calls[0].status
    follower.close()
    assert seen["first"] == "executing"
    assert seen["nested"] == ("executing", "UserMessage", "toolu_03")
    assert _summary(transcript) == _summary(turnfold.load(messages))


def test_A2_a_call_still_running_when_the_stream_ends_is_unknown_as_in_a_load() -> None:
    call = _assistant(t.ToolUseBlock(id="toolu_z", name="Bash", input={"command": "sleep 9"}))
    transcript = Transcript()
    follower = claude_agent_sdk.Follower(transcript)
    follower.feed(call)
    assert transcript.tool_calls()[0].status == "executing"
    follower.close()
    assert (
        transcript.tool_calls()[0].status
        == "unknown"
        == turnfold.load([call]).tool_calls()[0].status
    )


def test_A2_feeding_costs_the_new_message_only() -> None:
    """A long run's last messages are fed as fast as its first (never the whole history)."""
    steps = []
    for i in range(1500):
        call = t.ToolUseBlock(id=f"toolu_{i}", name="Bash", input={"command": f"echo {i}"})
        steps += [
            _assistant(t.TextBlock(text=f"step {i}"), call, message_id=f"m{i}",
                       usage={"input_tokens": i, "output_tokens": 1}),
            _user(t.ToolResultBlock(tool_use_id=f"toolu_{i}", content=str(i))),
        ]  # fmt: skip
    follower = claude_agent_sdk.Follower(Transcript())
    work = []
    for chunk in (steps[:500], steps[500:2500], steps[2500:]):
        work.append(_lines_run(lambda chunk=chunk: [follower.feed(m) for m in chunk]))
    follower.close()
    # Work, not time (a loaded machine's clock says nothing): the last 500 messages take about
    # the lines of Python the first 500 took; a walk over the history would take several times.
    assert work[2] < 1.5 * work[0], work


def _lines_run(action: Callable[[], object]) -> int:
    """How many lines of Python ``action`` runs: a measure of its work that does not depend
    on the machine's load."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Callable[..., object]:
        nonlocal count
        count += event == "line"
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(previous)
    return count


# --- no cost when unused -------------------------------------------------------------


def test_A3_the_module_and_a_saved_run_need_no_sdk_import() -> None:
    code = (
        "import sys, turnfold\n"
        "from turnfold.formats.frameworks import claude_agent_sdk\n"
        f"t = turnfold.load({str(SAVED)!r})\n"
        "assert len(t.tool_calls()) == 3, t.tool_calls()\n"
        "assert 'claude_agent_sdk' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


#: Messages of claude-agent-sdk 0.1.10 saved with ``dataclasses.asdict``, hand-made in the shape
#: of that release's ``types.py`` (anthropics/claude-agent-sdk-python, tag v0.1.10): an
#: ``AssistantMessage`` has no ``message_id`` and a ``UserMessage`` no ``tool_use_result`` yet.
_SONNET = "claude-sonnet-4-5-20250929"
_OLDER_RELEASE = [
    {"subtype": "init", "data": {"type": "system", "subtype": "init", "session_id": "s1",
                                 "model": _SONNET, "tools": ["Bash", "Task"]}},
    {"content": [{"text": "I'll check, and ask a helper."},
                 {"id": "toolu_01", "name": "Bash", "input": {"command": "ls /nope"}},
                 {"id": "toolu_02", "name": "Task",
                  "input": {"description": "Look", "prompt": "Find the file."}}],
     "model": _SONNET, "parent_tool_use_id": None, "error": None},
    {"content": [{"tool_use_id": "toolu_01", "content": "ls: no /nope", "is_error": True}],
     "parent_tool_use_id": None},
    {"content": "Find the file.", "parent_tool_use_id": "toolu_02"},
    {"content": [{"text": "At /tmp/f."}], "model": "claude-haiku-4-5-20251001",
     "parent_tool_use_id": "toolu_02", "error": None},
    {"content": [{"tool_use_id": "toolu_02", "content": [{"type": "text", "text": "At /tmp/f."}],
                  "is_error": None}], "parent_tool_use_id": None},
    {"content": [{"text": "It is /tmp/f."}], "model": _SONNET, "parent_tool_use_id": None,
     "error": None},
    {"subtype": "success", "duration_ms": 5210, "duration_api_ms": 4800, "is_error": False,
     "num_turns": 3, "session_id": "s1", "total_cost_usd": 0.0123, "usage": None,
     "result": "It is /tmp/f.", "structured_output": None},
]  # fmt: skip


def test_A1_messages_of_releases_before_message_id_are_read(tmp_path: Path) -> None:
    """Until 0.2.141 the SDK's ``AssistantMessage`` had no ``message_id`` (and before 0.1.30
    its ``UserMessage`` no ``tool_use_result``): such a saved run was refused as no
    transcript. Its messages are known by their fields, and read like a current release's."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_OLDER_RELEASE), encoding="utf-8")
    assert which_format(open_source(path)[0]) == "claude-agent-sdk"
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [("Bash", "error"), ("Task", "success")]
    assert calls[1].subagent is not None
    assert calls[1].subagent.transcript is not None
    assert [c.name for c in transcript.tool_calls(nested=True)] == ["Bash", "Task"]
    assert isinstance(transcript.entries[-1], AssistantText)
    assert transcript.entries[-1].text == "It is /tmp/f."


def test_U3_a_stream_of_two_runs_lasts_both_runs() -> None:
    # A background agent's notification starts a second run in the same stream: each result
    # gives its own run's duration and turns (1280 ms and 4, then 75 ms and 1), and the
    # process's API time and cost so far (453 ms and $0.00098 in both).
    path = FIXTURES / "claude-agent-sdk_v0.2.189_asdict_cli-subagent.json"
    transcript = turnfold.load(path)
    meta = transcript.metadata
    assert (meta["duration_ms"], meta["num_turns"], meta["duration_api_ms"]) == (1355, 5, 453)
    assert meta["cost_usd"] == pytest.approx(0.00098)
    assert session_facts(transcript).duration_s == pytest.approx(1.355)


# --- ClaudeSDKClient: several query() calls (spec P-1) -------------------------------------

#: The real bundled CLI 2.1.332 under ``ClaudeSDKClient``: two ``query()`` calls of one
#: session (``FIRST-PROMPT…``, ``SECOND-PROMPT…``), the messages each ``receive_response()``
#: gave; ``…-replayed`` with ``extra_args={"replay-user-messages": None}`` (recipe:
#: tests/fixtures/frameworks/claude-agent-sdk/README.md).
CLI_TWO = FIXTURES / "claude-agent-sdk_v0.2.189_asdict_cli-two-queries.json"
CLI_REPLAYED = FIXTURES / "claude-agent-sdk_v0.2.189_asdict_cli-two-queries-replayed.json"
ANSWERS = ["echo printed hi; ls failed; subagent ran.", "second turn: still fine."]


def _prompts(transcript: Transcript) -> list[tuple[str, dict[str, Any]]]:
    return [(e.text, e.meta) for e in transcript.entries if isinstance(e, UserMessage)]


def _turn_answers(transcript: Transcript) -> list[str | None]:
    answers = [segment_answer(p.segment) for p in plan_projection(transcript) if p.segment]
    return [a.text if a else None for a in answers]


def test_P1_each_query_of_a_client_session_is_a_turn_whose_prompt_is_not_recorded() -> None:
    """Each ``query()`` starts a run of its own (an ``init`` message, a ``ResultMessage``) and
    its prompt is not among the messages: each is a turn whose prompt is marked not recorded,
    with its own answer, and the session has no title made of the mark."""
    raw = json.loads(CLI_TWO.read_text(encoding="utf-8"))
    assert [m.get("subtype") for m in raw].count("init") == 2
    assert not any(isinstance(m.get("content"), str) for m in raw)  # no prompt among them
    transcript = turnfold.load(CLI_TWO)
    assert transcript.warnings == []
    assert _prompts(transcript) == [("", {"prompt_not_recorded": True})] * 2
    assert _turn_answers(transcript) == ANSWERS
    assert session_facts(transcript).turns == 2
    row = turnfold.scan([CLI_TWO], cache=False).to_pandas().iloc[0]
    assert row.isna()["title"]
    assert row["turns"] == 2


def test_P1_prompts_the_cli_replays_are_the_turns_prompts() -> None:
    """With ``replay-user-messages`` each prompt arrives as a ``UserMessage`` just after its
    run's ``init`` (the second after the first run's background agent's last messages): the
    turns' prompts are those texts, no mark of a prompt not recorded is left, and the first
    titles the session."""
    transcript = turnfold.load(CLI_REPLAYED)
    assert transcript.warnings == []
    assert _prompts(transcript) == [
        ("FIRST-PROMPT: run echo hi", {}), ("SECOND-PROMPT: anything else?", {})]  # fmt: skip
    assert _turn_answers(transcript) == ANSWERS
    row = turnfold.scan([CLI_REPLAYED], cache=False).to_pandas().iloc[0]
    assert row["title"] == "FIRST-PROMPT: run echo hi"


def test_A2_a_followed_replayed_prompt_settles_the_mark_in_place() -> None:
    """Followed live, a run's mark shows from its ``init``; the replayed prompt then takes its
    place (the same entry, updated), so the view keeps its key and the transcript ends as
    ``load`` gives it."""
    messages = json.loads(CLI_REPLAYED.read_text(encoding="utf-8"))
    live = Transcript()
    changes: list[TranscriptChange] = []
    live.observe(changes.append)
    follower = claude_agent_sdk.Follower(live)
    follower.feed(messages[0])  # the init
    (mark,) = live.entries
    assert (mark.kind, mark.meta) == ("user", {"prompt_not_recorded": True})
    for message in messages[1:]:
        follower.feed(message)
    follower.close()
    assert live.entries[0] is mark
    assert isinstance(mark, UserMessage)
    assert (mark.text, mark.meta) == ("FIRST-PROMPT: run echo hi", {})
    appended = [c.entry for c in changes if c.action == "append"]
    assert sum(isinstance(e, UserMessage) for e in appended) == 2  # one per run, none extra
    assert live.dump() == turnfold.load(CLI_REPLAYED).dump()


def test_A2_a_prompt_already_in_the_transcript_is_not_marked_again() -> None:
    """A notebook that records its prompt itself before following ``query()``: the run's
    ``init`` finds it and adds no mark of a prompt not recorded."""
    live = Transcript()
    live.append(UserMessage(text="FIRST-PROMPT: run echo hi"))
    follower = claude_agent_sdk.Follower(live)
    for message in json.loads(CLI.read_text(encoding="utf-8")):
        follower.feed(message)
    follower.close()
    first, second = live.entries[:2]
    assert (first.kind, second.kind) == ("user", "thinking")
    assert _prompts(live)[0] == ("FIRST-PROMPT: run echo hi", {})
