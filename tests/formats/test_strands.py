"""Strands Agents runs and Bedrock Converse messages (spec A-1, A-2, A-3, L-3, L-4; issue 22).

The runs are scripted offline with a ``Model`` subclass (``strands_runs.py``): two ``add``
calls in one response, a failing ``explode``, the ``researcher`` agent used as a tool,
reasoning and a final answer, usage on every response.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.frameworks import adapter_of, strands
from turnfold.model import (
    AssistantText,
    PendingAction,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import counts_of

pytest.importorskip("strands")

from tests.formats import strands_runs
from tests.formats.counters_strands import strands as count_calls

FIXTURE = strands_runs.FIXTURES / "strands_v1.62.0_messages_agent-tool.json"
CALLS = [
    ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
    ("call_2", "add", {"a": 3, "b": 4}, "success", "7"),
    ("call_3", "explode", {"x": "y"}, "error", "Error: boom: y"),
    ("call_4", "researcher", {"input": "what is 5+6?"}, "success", "It is 11. \n"),
]
ANSWER = "1+2=3, 3+4=7; explode failed; the researcher says 11. "


@pytest.fixture(scope="module")
def run() -> tuple[Any, Any]:
    return strands_runs.run()


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def answer_of(transcript: Transcript) -> str | None:
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    return texts[-1].text if texts else None


def framework_count(agent: Any) -> int:
    """The agent's tool calls counted from Strands' own types, not by turnfold: the
    ``toolUse`` blocks of ``agent.messages`` (``strands.types.content.ContentBlock``)."""
    from strands.types.content import ContentBlock

    assert "toolUse" in ContentBlock.__annotations__
    return sum(1 for m in agent.messages for block in m["content"] if "toolUse" in block)


# --- after the run -------------------------------------------------------------------------


def test_A1_load_agent_shows_calls_statuses_thinking_usage_and_model(run: tuple[Any, Any]) -> None:
    agent, _ = run
    transcript = turnfold.load(agent)
    assert transcript.metadata == {
        "source_format": "strands",
        "agent": "calc",
        "model": "scripted-1",
        "system": "You are terse.",
    }
    assert calls_of(transcript) == CALLS
    assert isinstance(transcript.entries[0], UserMessage)
    assert transcript.entries[0].text == strands_runs.PROMPT
    thinking = [e for e in transcript.entries if isinstance(e, Thinking)]
    assert [t.text for t in thinking] == ["All done; explode failed."]
    assert answer_of(transcript) == ANSWER
    last = [e for e in transcript.entries if isinstance(e, AssistantText)][-1]
    assert last.usage == Usage(  # Bedrock counts cached input apart: 40 + 30 + 2
        input_tokens=72, output_tokens=9, cache_read_tokens=30, cache_write_tokens=2
    )
    calls = transcript.tool_calls()
    assert calls[0].batch_id == calls[1].batch_id != calls[2].batch_id  # one response, two calls
    assert counts_of(calls[0].usage) == {
        "input_tokens": 10,
        "output_tokens": 5,
    }  # no text to hold it
    assert transcript.warnings == []


def test_A1_an_agent_used_as_a_tool_is_a_sub_agent_holding_its_run(
    run: tuple[Any, Any],
) -> None:
    agent, _ = run
    researcher = turnfold.load(agent).tool_calls()[3]
    assert researcher.subagent is not None
    assert researcher.subagent.name == "researcher"
    # as_tool() resets the agent before each call, so it holds this (its only) call's run
    assert not researcher.subagent.steps_missing
    child = researcher.subagent.transcript
    assert child is not None
    assert [type(e).__name__ for e in child.entries] == ["UserMessage", "ToolCall", "AssistantText"]
    (inner,) = child.tool_calls()
    assert (inner.call_id, inner.name, inner.status) == ("r_1", "add", "success")
    assert researcher.subagent.tool_count == 1
    # A bare message list does not say which tools are agents: nothing is invented.
    assert all(c.subagent is None for c in turnfold.load(agent.messages).tool_calls())


def test_A1_load_messages_list_detects_strands(run: tuple[Any, Any]) -> None:
    agent, _ = run
    before = copy.deepcopy(agent.messages)
    transcript = turnfold.load(agent.messages)
    assert transcript.metadata["source_format"] == "strands"
    assert calls_of(transcript) == CALLS
    assert answer_of(transcript) == ANSWER
    assert agent.messages == before  # nothing the user passed is modified


def test_A1_counter_of_the_framework_s_own_calls_equals_the_transcript(
    run: tuple[Any, Any],
) -> None:
    agent, result = run
    transcript = turnfold.load(agent)
    assert framework_count(agent) == len(transcript.tool_calls()) == 4
    # The run's own metrics count the same calls, and the failure (error_count).
    metrics = result.metrics.tool_metrics
    assert sum(m.call_count for m in metrics.values()) == 4
    errors = {name for name, m in metrics.items() if m.error_count}
    assert errors == {c.name for c in transcript.tool_calls() if c.status == "error"}


def test_A1_the_saved_json_loads_from_a_file_with_detection(
    run: tuple[Any, Any], tmp_path: Path
) -> None:
    agent, _ = run
    document = tmp_path / "messages.json"
    document.write_text(json.dumps(agent.messages), encoding="utf-8")
    lines = tmp_path / "messages.jsonl"
    lines.write_text("".join(json.dumps(m) + "\n" for m in agent.messages), encoding="utf-8")
    for path in (document, lines):
        transcript = turnfold.load(path)
        assert transcript.metadata["source_format"] == "strands"
        assert calls_of(transcript) == CALLS
        assert transcript.accounting is not None
        assert transcript.accounting.unaccounted == []
    assert turnfold.load(json.dumps(agent.messages)) == turnfold.load(agent.messages)


def test_A1_the_fixture_written_by_strands_loads(run: tuple[Any, Any]) -> None:
    transcript = turnfold.load(FIXTURE)
    assert transcript.metadata["source_format"] == "strands"
    assert calls_of(transcript) == CALLS
    assert answer_of(transcript) == ANSWER
    assert transcript.warnings == []


def test_A1_a_session_s_stored_messages_load_with_their_timestamps(tmp_path: Path) -> None:
    from strands.session.file_session_manager import FileSessionManager

    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    agent, _ = strands_runs.run(session_manager=manager)
    stored = manager.list_messages("s1", agent.agent_id)
    files = sorted(tmp_path.rglob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    assert len(stored) == len(files) == len(agent.messages)
    records = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    for transcript in (turnfold.load(stored), turnfold.load(json.dumps(records))):
        assert transcript.metadata["source_format"] == "strands"
        assert calls_of(transcript) == CALLS
        assert [e.timestamp for e in transcript.entries] == expected_stamps(records)
    one = turnfold.load(files[0])  # one message_<n>.json: the prompt
    assert [type(e) for e in one.entries] == [UserMessage]
    assert one.entries[0].timestamp == records[0]["created_at"]


def expected_stamps(records: list[Any]) -> list[str]:
    """Each entry's timestamp, written from the stored records: entries follow the messages in
    order, one per block that shows (a tool result settles its call instead), each stamped with
    its message's ``created_at``."""
    stamps = []
    for record in records:
        shown = [b for b in record["message"]["content"] if "toolResult" not in b]
        stamps += [record["created_at"]] * len(shown)
    return stamps


def test_A1_an_agent_result_shows_its_last_message_and_says_the_calls_are_not_in_it(
    run: tuple[Any, Any],
) -> None:
    _, result = run
    transcript = turnfold.load(result)
    assert transcript.tool_calls() == []
    notice = transcript.entries[0]
    assert "only the run's last message" in notice.text
    assert "4 tool call(s)" in notice.text
    assert answer_of(transcript) == ANSWER
    assert transcript.metadata["tool_metrics"]["explode"]["error_count"] == 1
    assert transcript.metadata["stop_reason"] == "end_turn"


def test_A1_bedrock_converse_requests_and_responses_load_by_detection() -> None:
    # Shapes of boto3's bedrock-runtime converse(): request kwargs and the response.
    request = {
        "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
        "system": [{"text": "Be terse."}],
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [{"text": "Checking."}, {"toolUse": {
                "toolUseId": "tooluse_a", "name": "get_weather", "input": {"city": "Paris"}}}]},
            {"role": "user", "content": [{"toolResult": {
                "toolUseId": "tooluse_a", "status": "error", "content": [{"text": "timeout"}]}}]},
        ],
        "inferenceConfig": {"maxTokens": 200},
        "toolConfig": {"tools": []},
    }  # fmt: skip
    transcript = turnfold.load(json.dumps(request))
    assert transcript.metadata["source_format"] == "strands"
    assert transcript.metadata["model"] == request["modelId"]
    assert transcript.metadata["system"] == "Be terse."
    assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [("tooluse_a", "error")]
    response = {
        "ResponseMetadata": {"RequestId": "r-1", "HTTPStatusCode": 200},
        "output": {"message": {"role": "assistant", "content": [{"text": "Rain."}]}},
        "stopReason": "max_tokens",
        "usage": {"inputTokens": 20, "outputTokens": 8, "totalTokens": 28},
        "metrics": {"latencyMs": 300},
    }
    transcript = turnfold.load(json.dumps(response))
    assert transcript.metadata["source_format"] == "strands"
    text = next(e for e in transcript.entries if isinstance(e, AssistantText))
    assert text.text == "Rain."
    assert text.usage == Usage(input_tokens=20, output_tokens=8)
    assert any(getattr(e, "subtype", None) == "max_tokens" for e in transcript.entries)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["ResponseMetadata"] == {"ignored": 1}


def test_A1_images_documents_json_results_and_redacted_reasoning() -> None:
    png = b"\x89PNG\r\n"
    messages = [
        {"role": "user", "content": [
            {"text": "Look"}, {"image": {"format": "png", "source": {"bytes": png}}},
            {"document": {"format": "pdf", "name": "spec", "source": {"bytes": b"%PDF"}}},
            {"cachePoint": {"type": "default"}}]},
        {"role": "assistant", "content": [
            {"reasoningContent": {"redactedContent": b"\x00\x01"}},
            {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"q": "x"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success",
            "content": [{"json": {"n": 1}}, {"image": {"format": "jpeg",
                                                       "source": {"bytes": png}}}]}}]},
    ]  # fmt: skip
    before = copy.deepcopy(messages)
    transcript = turnfold.load(messages)
    assert messages == before
    user = transcript.entries[0]
    assert isinstance(user, UserMessage)
    assert user.images[0].media_type == "image/png"
    assert "[attachment: document · spec · pdf · 4 B]" in user.text
    thinking = transcript.entries[1]
    assert isinstance(thinking, Thinking)
    assert thinking.form == "redacted"
    assert thinking.data
    call = transcript.tool_calls()[0]
    assert call.status == "success"
    assert call.result is not None
    assert call.result.structured == {"n": 1}
    assert call.result.images[0].media_type == "image/jpeg"
    assert transcript.warnings == []


# --- L-3, L-4 -----------------------------------------------------------------------------------


def test_L3_no_timestamps_and_a_call_without_a_result_is_unknown(run: tuple[Any, Any]) -> None:
    agent, _ = run
    transcript = turnfold.load(agent.messages[:-2])  # cut before the researcher's result
    assert all(e.timestamp is None for e in transcript.entries)
    assert all(c.started_at is None and c.duration_ms is None for c in transcript.tool_calls())
    assert transcript.tool_calls()[-1].status == "unknown"


def test_L4_objects_of_the_wrong_kind_and_malformed_files_say_what_they_are(
    tmp_path: Path,
) -> None:
    from strands import tool

    @tool
    def noop() -> str:
        """Nothing."""
        return ""

    with pytest.raises(TranscriptFormatError) as error:
        turnfold.load([noop, noop])
    assert "<object>" in str(error.value)
    from strands.multiagent.base import MultiAgentResult

    with pytest.raises(TranscriptFormatError) as error:
        turnfold.load(MultiAgentResult())  # a Swarm's or Graph's result: no messages in it
    assert "MultiAgentResult holds no messages" in str(error.value)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"role": "user", "content": [{"toolUse": {}}]}])[:-9])
    with pytest.raises(TranscriptFormatError) as error:
        turnfold.load(broken)
    assert "broken.json" in str(error.value)


def test_L4_unknown_blocks_and_orphan_results_warn_and_the_rest_is_shown() -> None:
    messages = [
        {"role": "user", "content": [{"text": "go"}, {"hologram": {"x": 1}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "f",
                                                       "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "zzz", "status": "success",
                                                     "content": []}}]},
    ]  # fmt: skip
    transcript = turnfold.load(messages, format="strands")
    reasons = [w.reason for w in transcript.warnings]
    assert any("hologram" in r for r in reasons)
    assert any("unknown toolUseId 'zzz'" in r for r in reasons)
    assert [c.call_id for c in transcript.tool_calls()] == ["a"]
    assert isinstance(transcript.entries[0], UserMessage)
    assert transcript.entries[0].text == "go"


def test_L2_plain_messages_are_not_claimed() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert turnfold.load(plain).metadata["source_format"] == "openai"
    anthropic = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f",
                                           "input": {}}]},
    ]  # fmt: skip
    assert turnfold.load(anthropic).metadata["source_format"] == "anthropic"


# --- live ----------------------------------------------------------------------------------


def test_A2_the_follower_fed_the_live_stream_ends_as_load_of_the_agent() -> None:
    transcript = Transcript()
    follower = strands.Follower(transcript)
    seen: list[tuple[str, str, str]] = []
    longest_text = [0]

    def observe(change: Any) -> None:
        entry = change.entry
        if isinstance(entry, ToolCall):
            seen.append((entry.call_id, entry.status, type(entry.args).__name__))
        if isinstance(entry, AssistantText):
            longest_text[0] = max(longest_text[0], len(entry.text))

    transcript.observe(observe)
    agent, events = strands_runs.live_run(follower.feed)
    follower.close()
    loaded = turnfold.load(agent)
    assert transcript == loaded
    assert calls_of(transcript) == CALLS
    assert answer_of(transcript) == ANSWER
    # While written, a call is executing with its input as the growing JSON string.
    assert ("call_1", "executing", "str") in seen
    assert ("call_3", "error", "dict") in seen
    assert longest_text[0] == len(ANSWER)
    # The events themselves hold the agent (found by adapter_of) or plain dicts.
    found = {adapter_of(e).NAME if adapter_of(e) else None for e in events}
    assert found == {"strands", None}
    assert adapter_of(events[0]) is None  # init_event_loop comes before any Strands object
    assert adapter_of(events[-1]) is strands  # {"result": AgentResult}


def test_A2_turnfold_follow_picks_strands_from_the_events_and_ends_as_load() -> None:
    agent, followed = strands_runs.followed_run()
    assert followed.transcript.metadata["source_format"] == "strands"
    assert followed.transcript == turnfold.load(agent)
    assert calls_of(followed.transcript) == CALLS


def test_A2_events_replayed_after_the_run_give_the_same_transcript() -> None:
    agent, events = strands_runs.live_run()
    transcript = Transcript()
    follower = strands.Follower(transcript)
    for event in events:
        follower.feed(event)
    follower.close()
    assert transcript == turnfold.load(agent)


def test_A2_the_follower_keeps_what_the_sliding_window_drops_and_load_says_so() -> None:
    transcript = Transcript()
    follower = strands.Follower(transcript)
    agent = strands_runs.long_run(25, follower.feed)  # 52 messages, 40 kept by the agent
    follower.close()
    assert [c.call_id for c in transcript.tool_calls()] == [f"c{i}" for i in range(25)]
    assert all(c.status == "success" for c in transcript.tool_calls())
    loaded = turnfold.load(agent)
    removed = agent.conversation_manager.removed_message_count
    assert removed > 0
    assert removed + len(agent.messages) == 52
    assert loaded.entries[0].text.startswith(f"{removed} earlier message(s) were removed")
    kept = {c.call_id for c in loaded.tool_calls()}
    assert kept < {c.call_id for c in transcript.tool_calls()}
    assert loaded.warnings == []
    assert answer_of(loaded) == answer_of(transcript) == "Done. "


# --- A-3 ----------------------------------------------------------------------------------------


def test_A3_the_module_imports_without_importing_strands() -> None:
    code = (
        "import sys, turnfold, turnfold.formats.frameworks.strands as s\n"
        "t = turnfold.load([{'role': 'user', 'content': [{'toolUse': {}}]}, "
        "{'role': 'assistant', 'content': [{'toolUse': {'toolUseId': 'a', 'name': 'f', "
        "'input': {}}}]}])\n"
        "print(t.metadata['source_format'], 'strands' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["strands", "False"]


# --- agents used as tools (spec, L-1; issue 22) ----------------------------------------

AGENTS_AS_TOOLS = strands_runs.FIXTURES / "strands_v1.62.0_messages_agents-as-tools.json"


@pytest.fixture(scope="module")
def lead() -> tuple[Any, Any]:
    return strands_runs.orchestrator_run()


def _agents(transcript: Transcript) -> list[tuple[Any, ...]]:
    out = []
    for call in transcript.tool_calls():
        sub = call.subagent
        child = sub.transcript if sub else None
        out.append(
            (call.name, sub.name if sub else None, sub.steps_missing if sub else None,
             calls_of(child) if child else None)
        )  # fmt: skip
    return out


def test_A1_an_agent_given_as_a_tool_and_one_called_by_a_tool_function_nest(
    lead: tuple[Any, Any],
) -> None:
    agent, _ = lead
    transcript = turnfold.load(agent)
    assert transcript.warnings == []
    assert _agents(transcript) == [
        ("writer", "writer", False, []),
        ("check", "checker", False, [("k_1", "add", {"a": 2, "b": 2}, "success", "4")]),
        ("draft", None, True, None),  # its agent is made inside the function: no steps kept
    ]
    writer = transcript.tool_calls()[0].subagent
    assert writer is not None
    assert writer.transcript is not None
    assert [getattr(e, "text", None) for e in writer.transcript.entries] == [
        "a note", "Note: all good. ",
    ]  # fmt: skip
    assert answer_of(transcript) == strands_runs.ORCHESTRATOR_ANSWER + " "
    assert transcript.entries[-1].text == strands_runs.ORCHESTRATOR_ANSWER + " "  # on top
    # the independent count: toolUse blocks of the lead's messages, then of each child's
    tools = {t: agent.tool_registry.registry[t] for t in ("writer", "check")}
    checker = tools["check"].__wrapped__.__closure__
    checker_agent = next(c.cell_contents for c in checker if hasattr(c.cell_contents, "messages"))
    assert framework_count(agent) == len(transcript.tool_calls()) == 3
    assert framework_count(checker_agent) == 1
    assert framework_count(tools["writer"].agent) == 0
    # the saved messages alone do not say which tools are agents
    assert all(c.subagent is None for c in turnfold.load(AGENTS_AS_TOOLS).tool_calls())
    assert count_calls(AGENTS_AS_TOOLS) == 3


def test_A1_an_agent_tool_called_twice_holds_only_its_last_run() -> None:
    agent, _ = strands_runs.orchestrator_run(twice=True)
    transcript = turnfold.load(agent)
    writers = [c for c in transcript.tool_calls() if c.name == "writer"]
    assert [(c.call_id, c.subagent.steps_missing if c.subagent else None) for c in writers] == [
        ("l_1", True), ("l_4", False),
    ]  # fmt: skip
    last = writers[1].subagent
    assert last is not None
    assert last.transcript is not None
    assert answer_of(last.transcript) == "Second note. "


def test_A2_following_agents_used_as_tools_ends_as_load_of_the_agent() -> None:
    agent, followed = strands_runs.orchestrator_run(follow=True)
    live = followed.transcript
    assert live.warnings == []
    assert live == turnfold.load(agent)
    assert [row[:3] for row in _agents(live)] == [
        ("writer", "writer", False), ("check", "checker", False), ("draft", None, True),
    ]  # fmt: skip


def test_A2_an_agent_tool_s_run_grows_live_in_its_call_and_every_call_keeps_its_own() -> None:
    transcript = Transcript()
    follower = strands.Follower(transcript)
    seen: list[tuple[str, list[str]]] = []

    def observe(change: Any) -> None:
        entry = change.entry
        if isinstance(entry, ToolCall) and entry.name == "researcher" and entry.subagent:
            child = entry.subagent.transcript
            seen.append((entry.status, [type(e).__name__ for e in child.entries] if child else []))

    transcript.observe(observe)
    strands_runs.live_run(follower.feed)
    follower.close()
    # the child's steps show while its call still runs, from its own streamed events
    assert ("executing", ["UserMessage", "ToolCall", "AssistantText"]) in seen
    # a follow sees each call's run; the agent keeps only its last, so a load shows less
    agent, followed = strands_runs.orchestrator_run(follow=True, twice=True)
    live, loaded = followed.transcript, turnfold.load(agent)
    assert calls_of(live) == calls_of(loaded)
    first_live, first_loaded = live.tool_calls()[0].subagent, loaded.tool_calls()[0].subagent
    assert first_live is not None
    assert first_loaded is not None
    assert (first_live.steps_missing, first_loaded.steps_missing) == (False, True)
    assert first_live.transcript is not None
    assert answer_of(first_live.transcript) == "Note: all good. "
    assert live.tool_calls()[-1].subagent == loaded.tool_calls()[-1].subagent


def test_L2_a_text_only_converse_list_is_strands_and_a_typed_one_is_not() -> None:
    converse = [
        {"role": "user", "content": [{"text": "hi"}]},
        {"role": "assistant", "content": [{"text": "hello"}]},
    ]
    transcript = turnfold.load(converse)
    assert transcript.metadata["source_format"] == "strands"
    assert [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries] == [
        ("UserMessage", "hi"), ("AssistantText", "hello"),
    ]  # fmt: skip
    assert turnfold.load(json.dumps(converse)).metadata["source_format"] == "strands"
    # Anthropic types every block: text-only Anthropic messages are never claimed here
    typed = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
    ]
    assert turnfold.load(typed).metadata["source_format"] != "strands"
    with_system = {"system": "Be brief.", "messages": typed}
    assert turnfold.load(with_system).metadata["source_format"] == "anthropic"


# --- a run stopped by interrupts (the real Strands, a BeforeToolCallEvent hook) ------------------

#: The stopped run: ``read`` ran (its result is in the agent's interrupt state only), each
#: ``delete`` waits for its interrupt's answer.
STOPPED = [
    ("i_1", "read", {"path": "/a"}, "success", "contents of /a"),
    ("i_2", "delete", {"path": "/a"}, "confirming", None),
    ("i_3", "delete", {"path": "/b"}, "confirming", None),
]


def pending_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [
        (e.action, e.text, e.call_id, e.meta["name"], e.meta["reason"])
        for e in transcript.entries
        if isinstance(e, PendingAction)
    ]


PENDING = [
    ("question", 'approve-delete: {"path":"/a"}', "i_2", "approve-delete", {"path": "/a"}),
    ("question", 'approve-delete: {"path":"/b"}', "i_3", "approve-delete", {"path": "/b"}),
]


def test_A1_an_agent_stopped_by_interrupts_shows_them_pending_and_the_calls_that_ran() -> None:
    """``load(agent)`` of a run stopped by a hook's interrupts showed every call ``unknown``
    (``read``'s result is in the agent's interrupt state, not its messages) and nothing of the
    interrupts; ``load(AgentResult)`` did not show them either."""
    agent, result = strands_runs.interrupted_run()
    assert result.stop_reason == "interrupt"
    loaded = turnfold.load(agent)
    assert loaded.warnings == []
    assert calls_of(loaded) == STOPPED
    assert pending_of(loaded) == PENDING
    assert isinstance(loaded.entries[-1], PendingAction)
    from_result = turnfold.load(result)
    assert pending_of(from_result) == PENDING
    assert [c.status for c in from_result.tool_calls()] == ["unknown", "confirming", "confirming"]
    # Resumed with the answers, the interrupts are gone and the calls settled by Strands.
    strands_runs.resume(agent, result)
    resumed = turnfold.load(agent)
    assert pending_of(resumed) == []
    assert [c.status for c in resumed.tool_calls()] == ["success", "success", "error"]
    assert answer_of(resumed) == strands_runs.INTERRUPT_ANSWER + " "  # turn() adds a space


def test_A2_a_followed_run_stopped_by_interrupts_ends_as_load_of_the_agent() -> None:
    """Followed, the stopped run ended with its calls ``executing`` where a load says what
    became of them, and its ``tool_interrupt_event`` events were passed over in silence."""
    agent, followed = strands_runs.interrupted_run(follow=True)
    transcript = followed.transcript
    assert transcript.warnings == []
    assert transcript == turnfold.load(agent)
    assert calls_of(transcript) == STOPPED
    assert pending_of(transcript) == PENDING


def test_A2_an_event_of_a_kind_not_shown_is_warned_of_once() -> None:
    """Events the follower does not show were dropped in silence (X-2)."""
    transcript = Transcript()
    follower = strands.Follower(transcript)
    events: list[dict[str, Any]] = [
        {"init_event_loop": True}, {"mystery": 1}, {"mystery": 2}, {"delta": {}},
        {"force_stop": True, "force_stop_reason": "limit"},
    ]  # fmt: skip
    for event in events:
        follower.feed(event)
    follower.close()
    assert [w.reason for w in transcript.warnings] == ["event {mystery} not shown"]
    assert [type(e).__name__ for e in transcript.entries] == ["AssistantError"]  # force_stop


def test_A2_a_stream_that_ends_with_calls_open_leaves_them_unknown_as_load_does() -> None:
    """A stream that ends (breaks off) before its calls' results left them ``executing``,
    where a load of the same messages says ``unknown`` (L-3)."""
    agent, events = strands_runs.live_run()
    first = next(i for i, e in enumerate(events) if isinstance(e, dict) and "message" in e)
    transcript = Transcript()
    follower = strands.Follower(transcript)
    for event in events[: first + 1]:  # up to the first response, whose calls then run
        follower.feed(event)
    follower.close()
    assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [
        ("call_1", "unknown"), ("call_2", "unknown"),
    ]  # fmt: skip
    assert calls_of(transcript) == calls_of(turnfold.load(agent.messages[:2]))
