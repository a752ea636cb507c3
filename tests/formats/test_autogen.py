"""AutoGen AgentChat's runs (spec A-1, A-2, L-1, L-3, L-4, X-2; issue 22).

The fixtures under ``tests/fixtures/frameworks/autogen/`` were written by the real framework
(``autogen-agentchat`` 0.7.5, its ``ReplayChatCompletionClient``, no network) with
``tests/formats/autogen_runs.py``; the tests marked as such run AutoGen again and read its
objects and its live stream. The small message lists built below are hand-made, in the shape
``BaseMessage.dump()`` writes.

A Swarm's handoffs nest (issue 22, the rule for handoffs): the agent handed off to writes its
steps in the handoff call's sub-agent, its last text (the run's answer) stays at the top level.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import autogen_runs as runs
from tests.formats.counters_autogen import autogen as count_calls
from tests.formats.counters_autogen import calls_by_agent
from tests.formats.nesting import calls_by_id, calls_by_level
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks import adapter_of, autogen
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.usage import counts_of

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "autogen"
RESULT = FIXTURES / "autogen_v0.7.5_task-result_agent-tool.json"
MESSAGES = FIXTURES / "autogen_v0.7.5_messages_agent-tool.json"
SWARM = FIXTURES / "autogen_v0.7.5_task-result_swarm-handoff.json"
SELECTOR = FIXTURES / "autogen_v0.7.5_task-result_selector-team.json"
CHAIN = FIXTURES / "autogen_v0.7.5_task-result_swarm-chain.json"


def _all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def _entries(transcript: Transcript) -> list[Any]:
    """Every entry, those nested in sub-agents included, depth first."""
    out: list[Any] = []
    for entry in transcript.entries:
        out.append(entry)
        if isinstance(entry, ToolCall) and entry.subagent and entry.subagent.transcript:
            out += _entries(entry.subagent.transcript)
    return out


def _shape(transcript: Transcript) -> list[Any]:
    """What follow and load must agree on: every entry's kind, text, call, status, result."""
    out: list[Any] = []
    for e in transcript.entries:
        result = e.result.text if isinstance(e, ToolCall) and e.result else None
        out.append(
            (type(e).__name__, getattr(e, "text", None), getattr(e, "call_id", None),
             getattr(e, "name", None), getattr(e, "args", None), getattr(e, "status", None),
             result, e.timestamp)
        )  # fmt: skip
        if isinstance(e, ToolCall) and e.subagent and e.subagent.transcript:
            out.append(_shape(e.subagent.transcript))
    return out


def _msg(kind: str, source: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "source": source, "models_usage": None, "metadata": {}, **fields}


def _request(source: str, *calls: tuple[str, str, str], **fields: Any) -> dict[str, Any]:
    content = [{"id": i, "name": n, "arguments": a} for i, n, a in calls]
    return _msg("ToolCallRequestEvent", source, content=content, **fields)


def _execution(source: str, *results: tuple[str, str, Any]) -> dict[str, Any]:
    content = [{"call_id": i, "content": c, "is_error": e, "name": "t"} for i, c, e in results]
    return _msg("ToolCallExecutionEvent", source, content=content)


# --- the real framework's saved run ------------------------------------------------------


def test_A1_a_saved_task_result_reads_prompt_thinking_calls_sub_agent_and_answer() -> None:
    transcript = turnfold.load(RESULT)
    assert transcript.warnings == []
    assert transcript.metadata == {"source_format": "autogen", "agent": "calc"}
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage", "Thinking", "ToolCall", "ToolCall", "ToolCall", "Thinking", "AssistantText",
    ]  # fmt: skip
    user, thinking = transcript.entries[:2]
    assert isinstance(user, UserMessage)
    assert user.text == runs.PROMPT
    assert isinstance(thinking, Thinking)
    assert (thinking.text, thinking.meta["agent"]) == ("First add.", "calc")
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"], answer.model) == (runs.ANSWER, "calc", None)
    calls = transcript.tool_calls()
    assert [(c.call_id, c.name, c.args) for c in calls] == [
        ("call_1", "add", {"a": 1, "b": 2}),
        ("call_2", "explode", {"x": "y"}),
        ("call_3", "researcher", {"task": "Why do tools fail?"}),
    ]
    assert calls[0].result is not None
    assert calls[0].result.text == "3"
    # One model response, one batch: the request event's id.
    assert calls[1].batch_id == calls[2].batch_id != calls[0].batch_id
    assert len(_all_calls(transcript)) == count_calls(RESULT) == 4
    assert calls_by_level(transcript, "calc") == calls_by_agent(RESULT)


def test_L3_autogen_s_is_error_flag_decides_each_call_s_status() -> None:
    calls = calls_by_id(turnfold.load(RESULT))
    assert {k: c.status for k, c in calls.items()} == {
        "call_1": "success", "call_2": "error", "call_3": "success", "call_r1": "success",
    }  # fmt: skip
    assert calls["call_2"].result is not None
    assert calls["call_2"].result.text == "boom: y"
    # A result without the flag is not claimed either way.
    messages = [_request("a", ("c1", "t", "{}")), _execution("a", ("c1", "out", None))]
    assert turnfold.load(messages, format="autogen").tool_calls()[0].status == "unknown"


def test_A1_an_agent_s_multimodal_message_shows_its_images_with_its_text() -> None:
    """A ``MultiModalMessage`` an agent wrote: its images (``Image.to_base64``: PNG) are its
    text's, as a user's are their prompt's; they were counted and dropped."""
    messages = [
        _msg("TextMessage", "user", content="Draw a cat"),
        _msg("MultiModalMessage", "painter", content=["Here:", {"data": "aGk="}]),
    ]
    entries = turnfold.load(messages, format="autogen").entries
    answer = entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "Here:"
    assert [(i.media_type, i.data) for i in answer.images] == [("image/png", "aGk=")]


def test_L1_an_agent_tool_s_inner_run_is_nested_as_the_call_s_sub_agent() -> None:
    research = calls_by_id(turnfold.load(RESULT))["call_3"]
    assert research.result is not None
    assert research.result.text == "researcher: Because tools fail."
    agent = research.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert (agent.name, agent.task, agent.steps_missing) == (
        "researcher",
        "Why do tools fail?",
        False,
    )
    assert (agent.tool_count, agent.output_tokens) == (1, 15)
    assert research.description == "Why do tools fail?"  # the task, as the call's summary
    child = agent.transcript.entries
    assert [type(e).__name__ for e in child] == ["UserMessage", "ToolCall", "AssistantText"]
    assert isinstance(child[0], UserMessage)
    assert child[0].text == "Why do tools fail?"
    assert isinstance(child[1], ToolCall)
    assert (child[1].call_id, child[1].args, child[1].meta["agent"]) == (
        "call_r1", {"a": 5, "b": 5}, "researcher",
    )  # fmt: skip
    assert isinstance(child[2], AssistantText)
    assert child[2].text == "Because tools fail."


def test_A1_usage_per_model_message_and_timestamps_from_created_at() -> None:
    transcript = turnfold.load(RESULT)
    calls = calls_by_id(transcript)
    assert counts_of(calls["call_1"].usage) == {"input_tokens": 10, "output_tokens": 1}
    assert counts_of(calls["call_2"].usage) == {"input_tokens": 20, "output_tokens": 2}
    assert "usage" not in calls["call_3"].meta  # the batch's usage is on its first call
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (30, 3)
    saved = json.loads(RESULT.read_text(encoding="utf-8"))["messages"]
    assert [e.timestamp for e in transcript.entries if not isinstance(e, ToolCall)] == [
        saved[i]["created_at"] for i in (0, 1, 10, 11)
    ]
    # A call starts when its request was recorded and ends with its execution event.
    assert calls["call_1"].started_at == saved[2]["created_at"]
    assert calls["call_1"].ended_at == saved[3]["created_at"]
    assert calls["call_1"].recorded_duration_ms is not None


def test_A1_the_saved_message_list_reads_like_the_task_result() -> None:
    assert _format_of(MESSAGES) == _format_of(RESULT) == "autogen"
    listed, result = turnfold.load(MESSAGES), turnfold.load(RESULT)
    assert listed.warnings == []
    assert _shape(listed) == _shape(result)
    # The same messages as JSON lines, and as JSON text.
    lines = "\n".join(json.dumps(m) for m in json.loads(MESSAGES.read_text(encoding="utf-8")))
    assert _shape(turnfold.load(lines + "\n")) == _shape(result)
    assert _shape(turnfold.load(RESULT.read_text(encoding="utf-8"))) == _shape(result)


def _format_of(value: Any) -> str | None:
    source, _ = open_source(value)
    return which_format(source)


def test_L1_a_swarm_handoff_is_an_agent_call_and_the_answer_stays_on_top() -> None:
    transcript = turnfold.load(SWARM)
    assert transcript.warnings == []
    assert transcript.metadata["stop_reason"] == "Text 'TERMINATE' mentioned"
    assert transcript.metadata["agent"] == "writer"
    calls = calls_by_id(transcript)
    handoff = calls["call_2"]
    assert (handoff.name, handoff.status, handoff.meta["agent"]) == (
        "transfer_to_writer", "success", "triage",
    )  # fmt: skip
    assert handoff.subagent is not None
    assert (handoff.subagent.name, handoff.subagent.task) == ("writer", "handoff from triage")
    # The writer only answered: its answer is on top, so its fold holds nothing.
    assert (handoff.subagent.transcript, handoff.subagent.tool_count) == (None, 0)
    assert not any(isinstance(e, SystemNotice) for e in transcript.entries)  # the call says it
    assert transcript.entries[-2] is handoff
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"]) == (runs.TEAM_ANSWER, "writer")
    assert len(calls) == count_calls(SWARM) == 2


def test_L1_a_swarm_chain_nests_onward_with_a_team_tool_and_a_handoff_back() -> None:
    transcript = turnfold.load(CHAIN)
    assert transcript.warnings == []
    assert transcript.metadata["agent"] == "writer"
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["UserMessage", "ToolCall", "Thinking", "ToolCall", "AssistantText"]
    to_writer, answer = transcript.entries[3:]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"]) == (runs.CHAIN_ANSWER, "writer")
    assert isinstance(to_writer, ToolCall)
    writer = to_writer.subagent
    assert writer is not None
    assert writer.transcript is not None
    assert (writer.name, writer.task, writer.tool_count, writer.subagent_count) == (
        "writer", "handoff from triage", 2, 2,
    )  # fmt: skip
    assert writer.output_tokens == 3 + 6 + 9  # the writer's own responses
    research, to_checker = writer.transcript.entries
    # The team used as a tool: its inner run nested under the writer's call of it.
    assert isinstance(research, ToolCall)
    assert research.subagent is not None
    assert research.subagent.transcript is not None
    assert (research.name, research.status, research.subagent.name) == (
        "research", "success", "researcher",
    )  # fmt: skip
    inner = [(type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None))
             for e in research.subagent.transcript.entries]  # fmt: skip
    assert inner == [
        ("UserMessage", runs.CHAIN_TASK), ("ToolCall", "add"),
        ("AssistantText", "Because 2+1=3 too."),
    ]  # fmt: skip
    # The checker inside the writer's fold; its handoff back nests nothing.
    assert isinstance(to_checker, ToolCall)
    checker = to_checker.subagent
    assert checker is not None
    assert checker.transcript is not None
    assert (checker.name, checker.task, checker.tool_count) == ("checker", "handoff from writer", 2)
    explode, back = checker.transcript.entries
    assert isinstance(explode, ToolCall)
    assert (explode.name, explode.status) == ("explode", "error")
    assert isinstance(back, ToolCall)
    assert back.subagent is not None
    assert (back.name, back.subagent.name, back.subagent.transcript) == (
        "transfer_to_writer", "writer", None,
    )  # fmt: skip
    assert not any(isinstance(e, SystemNotice) for e in _entries(transcript))
    texts = [e.text for e in _entries(transcript) if isinstance(e, AssistantText)]
    assert texts.count(runs.CHAIN_ANSWER) == 1
    assert len(_all_calls(transcript)) == count_calls(CHAIN) == 7
    assert calls_by_level(transcript, "triage") == calls_by_agent(CHAIN)


def test_L1_a_new_task_ends_the_turn_of_the_agent_handed_off_to() -> None:
    messages = [
        _msg("TextMessage", "user", content="first"),
        _request("a", ("h1", "transfer_to_b", "{}")),
        _execution("a", ("h1", "Transferred to b.", False)),
        _msg("HandoffMessage", "a", target="b", content="Transferred to b."),
        _request("b", ("c1", "look", "{}")),
        _execution("b", ("c1", "seen", False)),
        _msg("TextMessage", "b", content="First answer."),
        _msg("TextMessage", "user", content="second"),
        _msg("TextMessage", "b", content="Second answer."),
        _request("b", ("h2", "transfer_to_user", "{}")),
        _execution("b", ("h2", "Transferred to user.", False)),
        _msg("HandoffMessage", "b", target="user", content="Transferred to user."),
    ]
    transcript = turnfold.load(messages, format="autogen")
    assert transcript.warnings == []
    shown = [(type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None))
             for e in transcript.entries]  # fmt: skip
    assert shown == [
        ("UserMessage", "first"),
        ("ToolCall", "transfer_to_b"),
        ("AssistantText", "First answer."),  # the first turn's answer, on top
        ("UserMessage", "second"),
        ("AssistantText", "Second answer."),  # b goes on at the top, as the call said
        ("ToolCall", "transfer_to_user"),
        ("SystemNotice", "Handed off to user"),  # the person, not an agent: nothing nests
    ]
    first = transcript.entries[1]
    assert isinstance(first, ToolCall)
    assert first.subagent is not None
    assert first.subagent.transcript is not None
    assert [c.call_id for c in first.subagent.transcript.tool_calls()] == ["c1"]


def test_A1_a_selector_team_s_speakers_memory_summary_proxy_code_and_structured_answer() -> None:
    transcript = turnfold.load(SELECTOR)
    assert transcript.warnings == []
    assert transcript.metadata["stop_reason"].startswith("Maximum number of messages 5 reached")
    shown = [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None),
         getattr(e, "subtype", None), e.meta.get("agent"))
        for e in transcript.entries
    ]  # fmt: skip
    assert shown == [
        ("UserMessage", runs.SELECTOR_PROMPT, None, None),
        ("ToolCall", "memory_query", None, "summer"),
        ("ToolCall", "add", None, "summer"),
        ("SystemNotice", "3", "tool_call_summary", "summer"),
        ("SystemNotice", "Next speaker: proxy", "speaker", "SelectorGroupChatManager"),
        ("UserMessage", runs.PROXY_REPLY, None, "proxy"),
        ("AssistantText", runs.CODE, None, "coder"),  # no notice: the user's turn
        ("ToolCall", "execute_code", None, "coder"),
        ("AssistantText", "The code failed with exit code 3.", None, "coder"),
        ("SystemNotice", "Next speaker: judge", "speaker", "SelectorGroupChatManager"),
        ("AssistantText", '{"n": 3}', None, "judge"),
    ]
    memory, add, code = transcript.tool_calls()
    assert memory.memory == "read"
    assert memory.result is not None
    assert memory.result.text == runs.MEMORY
    assert (add.status, add.args) == ("success", {"a": 1, "b": 2})
    assert code.status == "error"  # exit code 3
    assert code.args == {"code": "import sys\nprint('bad')\nsys.exit(3)\n", "language": "python"}
    assert code.result is not None
    assert "exit code: 3" in (code.result.text or "")
    assert transcript.entries[-1].meta["structured"] == {"n": 3}
    assert len(transcript.tool_calls()) == count_calls(SELECTOR) == 3


# --- hand-made message lists: the other message types -------------------------------------


def test_A1_a_tool_call_summary_is_a_notice_not_a_second_answer() -> None:
    summary = _msg(
        "ToolCallSummaryMessage", "a", content="3\nboom",
        tool_calls=[{"id": "c1", "name": "add", "arguments": "{}"},
                    {"id": "c2", "name": "boom", "arguments": "{}"}],
        results=[{"call_id": "c1", "content": "3", "is_error": False, "name": "add"},
                 {"call_id": "c2", "content": "boom", "is_error": True, "name": "boom"}],
    )  # fmt: skip
    messages = [
        _msg("TextMessage", "user", content="go"),
        _request("a", ("c1", "add", "{}")),
        _execution("a", ("c1", "3", False)),
        summary,
    ]
    transcript = turnfold.load(messages, format="autogen")
    assert not any(isinstance(e, AssistantText) for e in transcript.entries)
    notice = transcript.entries[-1]
    assert isinstance(notice, SystemNotice)
    assert (notice.text, notice.subtype, notice.meta["call_ids"]) == (
        "3\nboom", "tool_call_summary", ["c1", "c2"],
    )  # fmt: skip
    # c2 is in the summary alone (its request was not kept): it is a call all the same.
    assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [
        ("c1", "success"), ("c2", "error"),
    ]  # fmt: skip


def test_A1_team_events_speakers_stop_memory_code_and_structured_messages() -> None:
    tea = [{"content": "likes tea", "mime_type": "text/plain"}]
    usage = {"prompt_tokens": 4, "completion_tokens": 1}
    code = "```python\nprint(1)\n```"
    blocks = [{"code": "print(1)", "language": "python"}]
    failed = {"exit_code": 1, "output": "Traceback"}
    messages = [
        _msg("TextMessage", "user", content="chat"),
        _msg("SelectSpeakerEvent", "SelectorGroupChatManager", content=["alice"]),
        _msg("MemoryQueryEvent", "alice", id="q1", content=tea),
        _msg("TextMessage", "alice", content="hi", models_usage=usage),
        _msg("SelectSpeakerEvent", "SelectorGroupChatManager", content=["coder"]),
        _msg("CodeGenerationEvent", "coder", id="g1", retry_attempt=0, content=code,
             code_blocks=blocks),
        _msg("CodeExecutionEvent", "coder", retry_attempt=0, result=failed),
        _msg("StructuredMessage[Answer]", "bob", content={"n": 3}, format_string="n is {n}"),
        _msg("UserInputRequestedEvent", "proxy", request_id="r1", content=""),
        _msg("TextMessage", "proxy", content="thanks"),
        _msg("StopMessage", "bob", content="done"),
    ]  # fmt: skip
    transcript = turnfold.load(messages)
    assert transcript.metadata["source_format"] == "autogen"
    assert transcript.warnings == []
    shown = [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "name", None),
         getattr(e, "subtype", None))
        for e in transcript.entries
    ]  # fmt: skip
    assert shown == [
        ("UserMessage", "chat", None),
        ("ToolCall", "memory_query", None),
        ("AssistantText", "hi", None),
        ("SystemNotice", "Next speaker: coder", "speaker"),
        ("AssistantText", "```python\nprint(1)\n```", None),
        ("ToolCall", "execute_code", None),
        ("SystemNotice", "Agent: bob", "agent"),
        ("AssistantText", "n is 3", None),
        ("UserMessage", "thanks", None),  # what the person typed into the proxy
        ("SystemNotice", "done", "stop"),
    ]
    memory, code = transcript.tool_calls()
    assert (memory.memory, memory.status, memory.meta["memories"]) == ("read", "success", 1)
    assert memory.result is not None
    assert memory.result.text == "likes tea"
    assert (code.call_id, code.status, code.args) == (
        "g1", "error", {"code": "print(1)", "language": "python"},
    )  # fmt: skip
    assert code.result is not None
    assert code.result.text == "Traceback"
    structured = transcript.entries[7]
    assert structured.meta["structured"] == {"n": 3}
    assert transcript.metadata["stop_message"] == "done"
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.types("mapped") <= autogen.RECORDS.known()


def test_A2_streamed_chunks_grow_one_entry_that_the_final_message_replaces() -> None:
    follower_transcript = Transcript()
    follower = autogen.Follower(follower_transcript)
    chunks = [
        _msg("ModelClientStreamingChunkEvent", "a", content=part, full_message_id="m1")
        for part in ("1+2", "=3")
    ]
    final = _msg("TextMessage", "a", id="m1", content="1+2=3",
                 models_usage={"prompt_tokens": 5, "completion_tokens": 2})  # fmt: skip
    follower.feed(chunks[0])
    follower.feed(chunks[1])
    assert [e.text for e in follower_transcript.entries] == ["1+2=3"]  # type: ignore[attr-defined]
    follower.feed(final)
    follower.close()
    (entry,) = follower_transcript.entries
    assert isinstance(entry, AssistantText)
    assert entry.usage is not None
    assert entry.usage.output_tokens == 2
    # Chunks that end as the agent's thought, unmarked: the note they streamed as holds it,
    # once, and no entry is left empty (tests/formats/test_autogen_streamed_thoughts.py).
    other = Transcript()
    follower = autogen.Follower(other)
    follower.feed(_msg("ModelClientStreamingChunkEvent", "a", content="hmm", full_message_id="m2"))
    follower.feed(_msg("ThoughtEvent", "a", id="m2", content="hmm"))
    (note,) = other.entries
    assert isinstance(note, AssistantText)
    assert (note.text, note.meta["streamed_as"]) == ("hmm", "thinking")


# --- bad input ---------------------------------------------------------------------------


def test_L4_a_malformed_saved_file_warns_and_shows_the_rest(tmp_path: Path) -> None:
    good = json.loads(MESSAGES.read_text(encoding="utf-8"))
    lines = [json.dumps(good[0]), "{not json", json.dumps({"type": "Nonsense", "source": "a"})]
    lines += [json.dumps(m) for m in good[1:]]
    lines.append(json.dumps(_execution("calc", ("nope", "x", False))))
    path = tmp_path / "messages.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    transcript = turnfold.load(path)
    assert transcript.metadata["source_format"] == "autogen"
    assert len(_all_calls(transcript)) == 4
    reasons = [(w.line, w.reason) for w in transcript.warnings]
    assert any(line == 2 and "invalid JSON" in reason for line, reason in reasons)
    assert any(line == 3 and "Nonsense" in reason for line, reason in reasons)
    assert any("unknown call id 'nope'" in reason for _, reason in reasons)
    assert all(w.source == str(path) for w in transcript.warnings)


def test_L4_a_file_of_no_agentchat_messages_is_a_format_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "task.json"
    path.write_text(
        json.dumps({"messages": [{"type": "Nope", "source": "x", "models_usage": None}]})
    )
    with pytest.raises(TranscriptFormatError) as error:
        turnfold.load(path, format="autogen")
    assert str(path) in str(error.value)


# --- the real framework's objects and live stream -----------------------------------------


def test_A1_a_task_result_object_its_messages_and_one_message_load() -> None:
    pytest.importorskip("autogen_agentchat")
    result = runs.solo_run()
    assert type(result).__module__ == "autogen_agentchat.base._task"
    assert adapter_of(result) is autogen
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    assert _shape(transcript)[0][:2] == ("UserMessage", runs.PROMPT)
    assert {c.call_id: c.status for c in _all_calls(transcript)} == {
        "call_1": "success", "call_2": "error", "call_3": "success", "call_r1": "success",
    }  # fmt: skip
    # The framework's own count of its calls: every FunctionCall of a request event.
    from autogen_agentchat.messages import ToolCallRequestEvent

    own = {c.id for m in result.messages if isinstance(m, ToolCallRequestEvent) for c in m.content}
    assert len(_all_calls(transcript)) == len(own) == 4
    assert _shape(turnfold.load(list(result.messages))) == _shape(transcript)
    assert _shape(turnfold.load(result.messages[-1])) == [
        ("AssistantText", runs.ANSWER, None, None, None, None, None,
         result.messages[-1].dump()["created_at"])
    ]  # fmt: skip
    before = [m.dump() for m in result.messages]
    turnfold.load(result)
    assert [m.dump() for m in result.messages] == before  # nothing the user passed changes


def test_L4_framework_objects_of_the_wrong_kind_are_a_format_error() -> None:
    pytest.importorskip("autogen_agentchat")
    from autogen_core import FunctionCall

    with pytest.raises(TranscriptFormatError, match="no AgentChat message"):
        turnfold.load([FunctionCall(id="c", name="n", arguments="{}")])
    with pytest.raises(TranscriptFormatError, match="AssistantAgent is no AutoGen run"):
        turnfold.load(runs.solo_agent())


@pytest.mark.parametrize("stream", [True, False], ids=["streamed-model", "whole-messages"])
def test_A2_following_run_stream_gives_what_load_of_the_task_result_gives(stream: bool) -> None:
    pytest.importorskip("autogen_agentchat")
    events = runs.solo_stream(stream=stream)
    assert any(type(e).__name__ == "ModelClientStreamingChunkEvent" for e in events) is stream
    live = Transcript()
    follower = autogen.Follower(live)
    statuses: list[str] = []
    for event in events:
        follower.feed(event)
        if type(event).__name__ == "ToolCallRequestEvent" and event.source == "calc":
            statuses.append(live.tool_calls()[-1].status)
    follower.close()
    assert statuses == ["executing", "executing"]  # running until their results arrive
    assert _shape(live) == _shape(turnfold.load(events[-1]))
    assert live.entries[-1].text == runs.ANSWER  # type: ignore[attr-defined]


def test_A2_following_a_swarm_gives_the_handoff_and_the_writer_s_answer() -> None:
    pytest.importorskip("autogen_agentchat")
    events = runs.team_stream()
    follow = turnfold.follow(events, display=False)
    assert list(follow) == events  # every event passed on unchanged
    loaded = turnfold.load(events[-1])
    assert _shape(follow.transcript) == _shape(loaded)
    assert follow.transcript == loaded  # the same entries, ids, nesting and metadata
    # A fresh run reads as the saved fixture does, but for the clock.
    assert [s[:-1] for s in _shape(loaded)] == [s[:-1] for s in _shape(turnfold.load(SWARM))]
    assert [c.name for c in follow.transcript.tool_calls()] == ["add", "transfer_to_writer"]


def test_A2_following_a_swarm_chain_nests_live_as_the_load_does() -> None:
    pytest.importorskip("autogen_agentchat")
    events = runs.chain_stream()
    follow = turnfold.follow(events, display=False)
    seen: list[list[Any]] = []
    follow.transcript.observe(lambda change: seen.append(_shape(follow.transcript)))
    assert list(follow) == events
    loaded = turnfold.load(events[-1])
    assert follow.transcript.warnings == []
    assert follow.transcript == loaded
    # A fresh run reads as the saved fixture does, but for the clock.
    assert _strip_times(_shape(loaded)) == _strip_times(_shape(turnfold.load(CHAIN)))

    # While the checker worked, the top transcript's observers (a widget) saw its failing
    # call inside the writer's fold, itself under the triage's handoff call.
    def checker_steps(rows: list[Any]) -> list[Any]:
        writer = rows[4] if len(rows) > 4 and isinstance(rows[4], list) else []
        nested = [r for r in writer if isinstance(r, list)]
        return nested[-1] if len(nested) == 2 else []

    assert any(
        any(r[0] == "ToolCall" and r[3] == "explode" and r[5] == "error" for r in checker_steps(s))
        for s in seen
    )
    # The answer arrived in the writer's fold and ended on top when the run did.
    assert seen[-1][-1][:2] == ("AssistantText", runs.CHAIN_ANSWER)
    assert all(r[:2] != ("AssistantText", runs.CHAIN_ANSWER) for r in seen[-1][4])


def test_A2_the_live_widget_ends_showing_what_a_widget_of_the_loaded_chain_shows() -> None:
    pytest.importorskip("autogen_agentchat")
    from turnfold.widget import TranscriptWidget

    events = runs.chain_stream()
    follow = turnfold.follow(events, display=False)
    live = follow.widget  # shown from the start, as in a notebook
    fresh = TranscriptWidget(turnfold.load(events[-1]))
    try:
        assert list(follow) == events
        live.flush()
        assert live.view == fresh.view
    finally:
        live.close()
        fresh.close()


def _strip_times(shape: list[Any]) -> list[Any]:
    return [_strip_times(r) if isinstance(r, list) else r[:-1] for r in shape]


def test_A2_the_live_view_hears_of_the_sub_agent_s_steps() -> None:
    pytest.importorskip("autogen_agentchat")
    live = Transcript()
    changes: list[tuple[str, tuple[str, ...]]] = []
    live.observe(lambda change: changes.append((change.action, change.fields)))
    follower = autogen.Follower(live)
    for event in runs.solo_stream(stream=False):
        follower.feed(event)
    follower.close()
    # The researcher's user message, call, result and answer each update its host call.
    assert changes.count(("update", ("subagent",))) >= 4


def test_A2_following_a_selector_team_gives_what_load_of_its_task_result_gives() -> None:
    pytest.importorskip("autogen_agentchat")
    events = runs.selector_stream()
    follow = turnfold.follow(events, display=False)
    assert list(follow) == events
    assert _shape(follow.transcript) == _shape(turnfold.load(events[-1]))
    assert [c.status for c in follow.transcript.tool_calls()] == ["success", "success", "error"]


def test_A2_follow_wraps_the_async_run_stream_itself() -> None:
    pytest.importorskip("autogen_agentchat")

    async def main() -> tuple[Any, list[Any]]:
        stream = runs.solo_agent(stream=True).run_stream(task=runs.PROMPT)
        follow = turnfold.follow(stream, display=False)
        return follow, [event async for event in follow]

    follow, events = runs.in_thread(main())
    assert type(events[-1]).__name__ == "TaskResult"
    assert follow.transcript.metadata["source_format"] == "autogen"
    assert _shape(follow.transcript) == _shape(turnfold.load(events[-1]))


def test_A1_an_agent_s_response_loads_its_inner_messages_and_reply() -> None:
    pytest.importorskip("autogen_agentchat")
    from autogen_agentchat.messages import TextMessage
    from autogen_core import CancellationToken

    task = [TextMessage(content=runs.PROMPT, source="user")]
    response = runs.in_thread(runs.solo_agent().on_messages(task, CancellationToken()))
    transcript = turnfold.load(response)
    assert transcript.warnings == []
    assert [c.call_id for c in transcript.tool_calls()] == ["call_1", "call_2", "call_3"]
    assert transcript.entries[-1].text == runs.ANSWER  # type: ignore[attr-defined]


def test_L2_detection_needs_agentchat_messages_not_just_a_messages_key() -> None:
    assert _format_of({"messages": [], "events": []}) != "autogen"
    chat = {"messages": [{"role": "user", "content": "hi"}]}
    assert _format_of(chat) != "autogen"
    assert _format_of(json.loads(SWARM.read_text(encoding="utf-8"))) == "autogen"


def test_A1_a_saved_run_stream_s_closing_task_result_is_read_once() -> None:
    """``run_stream`` yields the messages, then the ``TaskResult`` that holds them again:
    saved as one list (each item's dump), the result gives its ``stop_reason`` and its copy of
    the messages is not read twice, nor skipped as no message."""
    messages = json.loads(MESSAGES.read_text(encoding="utf-8"))
    result = json.loads(RESULT.read_text(encoding="utf-8"))
    alone = turnfold.load(RESULT)
    stream = turnfold.load([*messages, {**result, "stop_reason": "Maximum number of turns"}])
    assert stream.warnings == []
    assert stream.metadata["stop_reason"] == "Maximum number of turns"
    assert len(stream.tool_calls(nested=True)) == len(alone.tool_calls(nested=True))
    assert stream.accounting is not None
    assert stream.accounting.unaccounted == []
