"""LangChain messages and LangGraph runs (spec A-1, A-2, A-3, L-1, L-3, L-4, X-2; issue 22).

The runs are real: ``create_agent`` with the scripted offline model of
``tests/formats/langchain_runs.py`` (thinking, a call that succeeds, a ``ToolException`` the
tool handles, usage on every response, an answer). The fixtures under
``tests/fixtures/frameworks/langchain/`` were written by the same script (``main()``) with
langchain-core 1.8.3. The few records built by hand below are marked so, written from the
types of ``langchain_core.messages``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from pydantic import BaseModel

import turnfold
from tests.formats import langchain_runs as runs
from tests.formats import langgraph_saved_streams as saved_streams
from tests.formats.counters_langchain import langchain as count_saved_calls
from tests.formats.counters_langchain import langchain_by_agent as count_by_agent
from tests.formats.flat_reads import assert_read_alike, read_both
from tests.formats.structured_answers import answer_of, structured_answers
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks import langchain as adapter
from turnfold.formats.source import open_source
from turnfold.model import (
    AssistantText,
    CompactionBoundary,
    PendingAction,
    Thinking,
    ToolCall,
    Transcript,
    TranscriptChange,
    UserMessage,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "langchain"
TO_DICT = FIXTURES / "langchain_v1.8.3_messages-to-dict_tool-error.json"
DUMPD = FIXTURES / "langchain_v1.8.3_dumpd_tool-error.json"
HANDOFFS = FIXTURES / "langchain_v1.8.3_messages-to-dict_handoffs.json"


def count_calls(messages: list[Any]) -> int:
    """The framework's own count: the ``tool_calls`` and ``invalid_tool_calls`` of its AI
    messages (``langchain_core.messages.AIMessage``), read apart from the loader."""
    from langchain_core.messages import AIMessage

    return sum(
        len(m.tool_calls) + len(m.invalid_tool_calls) for m in messages if isinstance(m, AIMessage)
    )


def all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def outcome(transcript: Transcript) -> tuple[list[Any], str | None]:
    """What a follow must end with: each call's id, name, args, status and result, and the
    answer (the last text)."""
    calls = [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    return calls, texts[-1] if texts else None


Seen = tuple[TranscriptChange, Any, Any]


def follow(events: list[Any]) -> tuple[Transcript, list[Seen]]:
    """The transcript a follower makes of ``events``, and every change its observers saw,
    with the entry's text and status at that moment."""
    transcript = Transcript()
    changes: list[Seen] = []
    transcript.observe(
        lambda c: changes.append(
            (c, getattr(c.entry, "text", None), getattr(c.entry, "status", None))
        )
    )
    follower = adapter.Follower(transcript)
    for event in events:
        follower.feed(event)
    follower.close()
    return transcript, changes


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return runs.run_result()


# --- the objects after a run ------------------------------------------------------------


def test_A1_a_message_list_reads_prompt_thinking_calls_statuses_usage_and_answer(
    result: dict[str, Any],
) -> None:
    messages = result["messages"]
    transcript = turnfold.load(messages)
    assert transcript.metadata["source_format"] == "langchain"
    assert transcript.metadata["model"] == runs.MODEL
    assert transcript.warnings == []
    user = transcript.entries[0]
    assert isinstance(user, UserMessage)
    assert user.text == runs.PROMPT
    calls = {c.call_id: c for c in transcript.tool_calls()}
    assert (calls["call_1"].name, calls["call_1"].args) == ("add", {"a": 1, "b": 2})
    assert calls["call_1"].status == "success"
    assert calls["call_1"].result.text == "3"
    assert (calls["call_2"].name, calls["call_2"].status) == ("explode", "error")
    assert calls["call_2"].result is not None
    assert calls["call_2"].result.text == "boom: y"
    assert calls["call_1"].batch_id == messages[1].id  # a response's calls are its batch
    thinking = [e.text for e in transcript.entries if isinstance(e, Thinking)]
    assert thinking == ["I add first.", "Now the failing one.", "Both calls are done."]
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [t.text for t in texts] == ["Trying it.", runs.ANSWER]
    assert texts[-1].model == runs.MODEL
    assert texts[-1].meta["agent"] == "calculator"
    usage = texts[-1].usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (130, 20)
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (4, 1, 3)
    # The first response wrote no text: its usage rides on its first entry.
    first = next(e for e in transcript.entries if isinstance(e, Thinking))
    assert first.usage.input_tokens == 101


def test_A1_an_independent_count_of_the_framework_s_calls_equals_the_transcript_s(
    result: dict[str, Any],
) -> None:
    transcript = turnfold.load(result["messages"])
    assert count_calls(result["messages"]) == len(all_calls(transcript)) == 2


def test_A1_a_graph_result_reads_like_its_messages_and_keeps_scalar_state(
    result: dict[str, Any],
) -> None:
    state = {**result, "step_count": 7, "scratch": {"k": [1, 2]}}
    transcript = turnfold.load(state)
    assert transcript.entries == turnfold.load(result["messages"]).entries
    assert transcript.metadata["step_count"] == 7
    assert "scratch" not in transcript.metadata
    assert transcript.accounting is not None
    assert transcript.accounting.counts["other state"] == {"ignored": 1}
    assert "scratch" in state
    assert state["scratch"] == {"k": [1, 2]}


def test_A1_loading_never_shares_or_changes_the_messages(result: dict[str, Any]) -> None:
    messages = result["messages"]
    before = [m.model_dump() for m in messages]
    transcript = turnfold.load(messages)
    call = next(c for c in transcript.tool_calls() if c.call_id == "call_1")
    call.args["a"] = 99
    assert [m.model_dump() for m in messages] == before


def test_A1_messages_to_dict_output_loads_as_objects_and_from_its_file_with_detection(
    result: dict[str, Any],
) -> None:
    from langchain_core.messages import messages_to_dict

    saved = messages_to_dict(result["messages"])
    assert outcome(turnfold.load(saved)) == outcome(turnfold.load(result["messages"]))
    source, _ = open_source(TO_DICT)
    assert which_format(source) == "langchain"
    transcript = turnfold.load(TO_DICT)
    assert transcript.warnings == []
    assert outcome(transcript) == outcome(turnfold.load(result["messages"]))
    assert count_saved_calls(TO_DICT) == len(all_calls(transcript))


def test_A1_the_dumpd_form_loads_from_its_file_like_messages_to_dict() -> None:
    source, _ = open_source(DUMPD)
    assert which_format(source) == "langchain"
    dumped = turnfold.load(DUMPD)
    assert dumped.warnings == []
    assert outcome(dumped) == outcome(turnfold.load(TO_DICT))
    assert [type(e) for e in dumped.entries] == [type(e) for e in turnfold.load(TO_DICT).entries]


def test_A1_message_chunks_read_as_their_messages() -> None:
    from langchain_core.messages import AIMessageChunk, HumanMessageChunk, ToolMessage

    chunks = [
        HumanMessageChunk(content="hi"),
        AIMessageChunk(content="Looking", id="m1")
        + AIMessageChunk(
            content=" it up.",
            id="m1",
            tool_call_chunks=[{"name": "search", "args": '{"query": "x"}', "id": "c1", "index": 0}],
        ),
        ToolMessage(content="found", tool_call_id="c1", status="success"),
    ]
    transcript = turnfold.load(chunks)
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == [
        "Looking it up."
    ]
    (call,) = transcript.tool_calls()
    assert (call.name, call.args, call.status) == ("search", {"query": "x"}, "success")
    assert transcript.accounting is not None
    assert transcript.accounting.counts["AIMessageChunk"] == {"mapped": 1}


def test_A1_reasoning_blocks_invalid_calls_and_standard_content_are_read() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    # Hand-made, in the shapes of langchain_core's content blocks and InvalidToolCall.
    messages = [
        HumanMessage(content=[{"type": "text", "text": "look"}, {"type": "image_url"}]),
        AIMessage(
            content=[
                {"type": "reasoning", "reasoning": "standard reasoning"},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a summary"}]},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "Calling."},
                {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
            ],
            tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
            invalid_tool_calls=[
                {"name": "g", "args": "{oops", "id": "c2", "error": "bad JSON", "type": "x"}
            ],
        ),
        ToolMessage(content=[{"type": "text", "text": "done"}], tool_call_id="c1"),
    ]
    transcript = turnfold.load(messages)
    assert transcript.entries[0].text == "look"  # type: ignore[attr-defined]
    assert transcript.entries[0].meta == {"images": 1}
    forms = [(e.form, e.text, e.data) for e in transcript.entries if isinstance(e, Thinking)]
    assert forms == [
        ("text", "standard reasoning", None),
        ("summary", "a summary", None),
        ("redacted", "", "opaque"),
    ]
    calls = {c.call_id: c for c in transcript.tool_calls()}
    assert len(calls) == 2  # the tool_use block repeats tool_calls: not a call of its own
    assert calls["c1"].status == "success"
    assert calls["c1"].result.text == "done"
    assert calls["c2"].status == "error"
    assert calls["c2"].result.text == "bad JSON"
    assert calls["c2"].meta["invalid"] is True
    assert transcript.warnings == []


def test_L3_what_the_messages_do_not_record_stays_absent() -> None:
    # Hand-made records: a tool message without a status (an older dump), no usage, no model.
    records = [
        {"type": "human", "data": {"content": "go"}},
        {
            "type": "ai",
            "data": {"content": "", "tool_calls": [{"name": "f", "args": {}, "id": "c1"}]},
        },
        {"type": "tool", "data": {"content": "ok", "tool_call_id": "c1"}},
        {
            "type": "ai",
            "data": {"content": "", "tool_calls": [{"name": "f", "args": {}, "id": "c2"}]},
        },
    ]
    transcript = turnfold.load(records)
    c1, c2 = transcript.tool_calls()
    assert c1.status == "unknown"  # a result without status: finished, outcome not recorded
    assert c2.status == "unknown"
    assert c2.result is None
    assert all(e.timestamp is None for e in transcript.entries)
    assert all(c.started_at is None and c.duration_ms is None for c in transcript.tool_calls())
    assert "model" not in transcript.metadata
    assert c1.subagent is None  # no sub-agent is invented


# --- L-4: bad input --------------------------------------------------------------------------


def test_L4_objects_of_the_framework_that_are_not_messages_are_a_format_error() -> None:
    from langchain_core.documents import Document

    with pytest.raises(TranscriptFormatError, match="<object>"):
        turnfold.load([Document(page_content="a"), Document(page_content="b")])


def test_L4_a_malformed_saved_file_is_a_format_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"type": "ai", "data": {"content": "x"', encoding="utf-8")
    with pytest.raises(TranscriptFormatError, match=r"broken\.json"):
        turnfold.load(broken)


def test_L4_a_bad_record_among_good_ones_is_a_warning_and_the_rest_is_shown(
    tmp_path: Path,
) -> None:
    records = TO_DICT.read_text(encoding="utf-8").rstrip().rstrip("]") + ', {"type": "ai"}]'
    path = tmp_path / "one-bad.json"
    path.write_text(records, encoding="utf-8")
    transcript = turnfold.load(path, format="langchain")
    assert len(transcript.warnings) == 1
    assert "one-bad.json" in str(transcript.warnings[0])
    assert outcome(transcript) == outcome(turnfold.load(TO_DICT))


def test_L4_calls_without_an_id_each_get_one_no_other_call_has() -> None:
    """Hand-made, in the shapes of ``langchain_core.messages.tool.ToolCall`` (whose ``id``
    may be None) and Anthropic's server block: calls without an id, two in one message and
    a server call in each of two messages fed in one event, are each shown as a call of its
    own, with a warning each (but the garbled call, never run)."""
    from langchain_core.messages import AIMessage, HumanMessage

    search = {"type": "server_tool_use", "name": "web_search", "input": {}}
    messages = [
        HumanMessage("go", id="h1"),
        AIMessage(
            [search],
            tool_calls=[
                {"name": "f", "args": {}, "id": None},
                {"name": "g", "args": {}, "id": None},
            ],
            invalid_tool_calls=[{"name": "h", "args": "{", "id": None, "error": "bad"}],
            id="a1",
        ),
        AIMessage([search], id="a2"),
    ]
    loaded = turnfold.load(messages)
    followed, _ = follow([{"messages": messages}])  # one values event: one line for both
    for transcript in (loaded, followed):
        calls = transcript.tool_calls()
        assert [c.name for c in calls] == ["web_search", "f", "g", "h", "web_search"]
        assert len({c.call_id for c in calls}) == 5
        assert sorted(w.reason for w in transcript.warnings) == [
            "server_tool_use block without an id", "server_tool_use block without an id",
            "tool call without an id", "tool call without an id",
        ]  # fmt: skip


# --- live ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode",
    [["updates", "messages"], "values", "updates", "messages", ["values", "messages", "tasks"]],
    ids=str,
)
def test_A2_following_the_stream_ends_with_what_load_gives_for_the_final_state(mode: Any) -> None:
    events, final = runs.stream_run(mode)
    transcript, _ = follow(events)
    loaded = turnfold.load(final)
    assert outcome(transcript) == outcome(loaded)
    assert outcome(transcript)[0][1][3] == "error"
    assert transcript.warnings == []
    # Each message once: the entries are load's, a prompt not recorded in the place of the
    # prompt where the stream omits it (as the saved stream loads).
    kinds = [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries]
    expected = [(type(e).__name__, getattr(e, "text", None)) for e in loaded.entries]
    assert kinds == (expected if "values" in mode else [("UserMessage", ""), *expected[1:]])


@pytest.mark.parametrize(
    "mode", [["updates", "messages"], "values", "updates", ["values", "messages", "tasks"]], ids=str
)
@pytest.mark.parametrize("subgraphs", [False, True], ids=["", "subgraphs"])
def test_A2_a_version_2_stream_is_followed_as_its_version_1_twin(
    mode: Any, subgraphs: bool
) -> None:
    """``stream(..., version="v2")`` yields ``StreamPart`` dicts (``{"type", "ns", "data"}``,
    ``langgraph.types``) in every mode: followed, they end as the same run streamed in the
    default form does, and as the load of its final state."""
    parts, final = runs.stream_run(mode, subgraphs=subgraphs, version="v2")
    assert all(set(part) >= {"type", "ns", "data"} for part in parts)
    events, _ = runs.stream_run(mode, subgraphs=subgraphs)
    followed, _ = follow(parts)
    assert followed.warnings == []
    assert outcome(followed) == outcome(follow(events)[0]) == outcome(turnfold.load(final))


@pytest.mark.parametrize(
    "mode", [["updates", "messages"], "messages", ["values", "messages"]], ids=str
)
def test_A1_the_stream_s_events_kept_as_objects_load_as_they_are_followed(mode: Any) -> None:
    """``load(list(agent.stream(...)))``: the events as the stream gave them, tuples whose
    messages (their chunks too) are read as messages, not dumped without their ``type``
    (``model_dump`` leaves out a default): the run that following them shows."""
    events, final = runs.stream_run(mode)
    loaded = turnfold.load(events)
    followed, _ = follow(events)
    assert loaded.warnings == []
    assert outcome(loaded) == outcome(followed) == outcome(turnfold.load(final))
    assert outcome(loaded)[0][1][3] == "error"
    answers = [e.text for e in loaded.entries if isinstance(e, AssistantText)]
    assert answers[-1] == runs.ANSWER


@pytest.mark.parametrize(
    "kwargs",
    [{"subgraphs": True}, {"version": "v2"}, {"subgraphs": True, "version": "v2"}],
    ids=["subgraphs", "v2", "subgraphs-v2"],
)
def test_A1_updates_kept_as_objects_with_a_namespace_or_as_parts_load_as_followed(
    kwargs: dict[str, Any],
) -> None:
    """``load(list(agent.stream(..., stream_mode="updates", subgraphs=True)))`` (or
    ``version="v2"``'s parts): each message sits a level deeper than in the default form, in
    ``(namespace, {node: {"messages": [...]}})``; the list is still the run's, not "not a
    transcript"."""
    events, final = runs.stream_run("updates", **kwargs)
    loaded = turnfold.load(events)
    assert loaded.warnings == []
    assert outcome(loaded) == outcome(follow(events)[0]) == outcome(turnfold.load(final))
    assert outcome(loaded)[0][1][3] == "error"


def test_A1_a_child_agent_s_updates_kept_as_objects_nest_under_its_call() -> None:
    events, _ = runs.stream_parent("updates")
    (call,) = turnfold.load(events).tool_calls()
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert (call.subagent.name, outcome(call.subagent.transcript)) == (
        "helper",
        ([("child_call_1", "add", {"a": 2, "b": 3}, "success", "5")], runs.CHILD_ANSWER),
    )


def test_A2_streamed_tokens_grow_one_entry_and_calls_run_until_their_result() -> None:
    events, _ = runs.stream_run(["updates", "messages"])
    transcript, changes = follow(events)
    answer = next(e for e in transcript.entries if getattr(e, "text", None) == runs.ANSWER)
    grown = [text for c, text, _ in changes if c.entry is answer]
    assert grown[0] == "1+2=3;"
    assert grown[-1] == runs.ANSWER
    assert len(set(grown)) > 3
    call = next(c for c in transcript.tool_calls() if c.call_id == "call_2")
    statuses = [status for c, _, status in changes if c.entry is call]
    assert statuses[0] == "executing"
    assert statuses[-1] == "error"
    streaming = next(e for e in transcript.entries if isinstance(e, Thinking))
    assert streaming.streaming is False  # the complete message ended its streaming


def test_A2_turnfold_follow_passes_every_event_and_fills_its_transcript() -> None:
    events, final = runs.stream_run(["updates", "messages"])
    run = turnfold.follow(iter(events), display=False)
    assert list(run) == events
    assert outcome(run.transcript) == outcome(turnfold.load(final))


def test_A2_an_astream_followed_with_async_for_ends_like_the_load_of_its_state() -> None:
    # A fresh thread's loop: other tests may leave one running in this thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run, events, final = pool.submit(
            asyncio.run, runs.follow_astream(["updates", "messages"])
        ).result()
    assert len(events) > 10
    assert outcome(run.transcript) == outcome(turnfold.load(final))
    assert outcome(run.transcript)[0][1][3] == "error"


def _follow_astream_events(version: str) -> tuple[Any, list[Any], Any]:
    """``turnfold.follow(agent.astream_events(..., version=version))`` of the scripted agent,
    consumed with ``async for`` on a fresh thread's loop: the follow, the events, the state."""
    from turnfold.following import follow as follow_run

    async def main() -> tuple[Any, list[Any], Any]:
        agent, config = runs.scripted_agent(), runs._config(f"events-{version}")
        prompt = {"messages": [("user", runs.PROMPT)]}
        run = follow_run(agent.astream_events(prompt, config, version=version), display=False)
        events = [event async for event in run]
        return run, events, (await agent.aget_state(config)).values

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        followed: tuple[Any, list[Any], Any] = pool.submit(asyncio.run, main()).result()
    return followed


@pytest.mark.filterwarnings("ignore:astream_events version='v1' is deprecated")
def test_A2_astream_events_followed_show_the_run_as_its_updates_do() -> None:
    """``agent.astream_events(..., version="v2")``, LangChain's event stream: the graph's own
    ``on_chain_stream`` events carry each step's update, so the run shows as an ``updates``
    stream does, and its first node's ``on_chain_start`` input holds the prompt, which no
    update holds (it is shown, as a load of the final state shows it); the dozens of other
    events (tokens, model and tool starts and ends, the nodes' own streams) repeat them. Version 1,
    deprecated, names no parent run: the graph's own events are told by naming no node. The
    events kept in a list, or saved as a stream's are, load the same."""
    for version in ("v2", "v1"):
        run, events, final = _follow_astream_events(version)
        assert len(events) > 20
        assert {e["event"] for e in events} >= {"on_chat_model_stream", "on_tool_end"}
        loaded = turnfold.load(final)
        assert run.transcript.warnings == []
        assert outcome(run.transcript) == outcome(loaded)
        assert outcome(run.transcript)[0][1][3] == "error"
        shown = [(type(e).__name__, getattr(e, "text", None)) for e in run.transcript.entries]
        assert shown == [(type(e).__name__, getattr(e, "text", None)) for e in loaded.entries]
        assert shown[0] == ("UserMessage", runs.PROMPT)
        # The events kept in a list, or saved: loaded as they were followed.
        for kept in (events, *(saved_streams.SAVERS[k](events) for k in ("dumps", "jsonl"))):
            from_events = turnfold.load(kept)
            assert from_events.warnings == []
            assert outcome(from_events) == outcome(run.transcript)
            assert from_events.entries[0] == run.transcript.entries[0]


@pytest.mark.parametrize(
    "mode",
    [["updates", "messages"], "updates", "values", "messages", ["updates", "messages", "tasks"]],
    ids=str,
)
def test_A2_a_child_agent_run_inside_a_tool_is_nested_as_a_subagent_of_its_call(mode: Any) -> None:
    events, final = runs.stream_parent(mode)
    transcript, _ = follow(events)
    assert outcome(transcript) == outcome(turnfold.load(final))
    (call,) = transcript.tool_calls()
    assert call.name == "ask_helper"
    assert call.status == "success"
    assert call.subagent is not None
    assert call.subagent.name == "helper"
    child = call.subagent.transcript
    assert child is not None
    (child_call,) = child.tool_calls()
    assert (child_call.call_id, child_call.args, child_call.status) == (
        "child_call_1",
        {"a": 2, "b": 3},
        "success",
    )
    assert outcome(child)[1] == runs.CHILD_ANSWER
    assert len(all_calls(transcript)) == 2
    # The static load of the parent's state holds no trace of the child: nothing invented.
    assert turnfold.load(final).tool_calls()[0].subagent is None


def test_A2_feeding_a_values_stream_reads_only_the_new_messages() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    class Counted(list):  # type: ignore[type-arg]
        """A state's message list that counts the messages read from it."""

        read = 0

        def __getitem__(self, index: Any) -> Any:
            found = super().__getitem__(index)
            Counted.read += len(found) if isinstance(index, slice) else 1
            return found

    history: list[Any] = [HumanMessage("go", id="h")]
    states = []
    for step in range(500):
        history += [
            AIMessage("", id=f"a{step}", tool_calls=[{"name": "f", "args": {}, "id": f"c{step}"}]),
            ToolMessage("ok", tool_call_id=f"c{step}", id=f"t{step}"),
        ]
        states.append({"messages": Counted(history)})
    transcript, _ = follow(states)
    assert len(transcript.tool_calls()) == 500
    assert Counted.read <= 3 * len(history)  # O(new messages), not O(history) per state


# --- no cost when unused ------------------------------------------------------------------


def test_A3_the_adapter_imports_without_the_framework() -> None:
    code = (
        "import sys, turnfold, turnfold.formats.frameworks.langchain as m; "
        "import turnfold.formats as f; f._modules(); "
        "print(any(k.split('.')[0] in ('langchain_core', 'langgraph', 'langchain') "
        "for k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- handoffs between agents (spec; issue 22) ----------------------------------------


def _by_agent(transcript: Transcript) -> dict[str, int]:
    counts: dict[str, int] = {}
    for call in all_calls(transcript):
        counts[call.meta["agent"]] = counts.get(call.meta["agent"], 0) + 1
    return counts


def _tree(transcript: Transcript) -> list[Any]:
    """Every entry, with each call's status, result and sub-agent, children nested."""
    out: list[Any] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            sub = entry.subagent
            out.append(
                (entry.call_id, entry.name, entry.status,
                 entry.result.text if entry.result else None,
                 (sub.name, sub.task, sub.tool_count) if sub else None)
            )  # fmt: skip
            if sub is not None and sub.transcript is not None:
                out.append(_tree(sub.transcript))
        else:
            out.append((type(entry).__name__, getattr(entry, "text", None)))
    return out


def test_A1_a_handoff_nests_the_agent_handed_to_and_its_answer_stays_on_top() -> None:
    transcript = turnfold.load(HANDOFFS)
    assert transcript.warnings == []
    assert [type(e).__name__ for e in transcript.entries] == [
        "UserMessage", "Thinking", "ToolCall", "AssistantText",
    ]  # fmt: skip
    to_billing = transcript.entries[2]
    assert isinstance(to_billing, ToolCall)
    assert to_billing.subagent is not None
    assert (to_billing.name, to_billing.subagent.name, to_billing.subagent.task) == (
        "transfer_to_billing", "billing", "handoff from triage",
    )  # fmt: skip
    billing = to_billing.subagent.transcript
    assert billing is not None
    assert [getattr(e, "name", type(e).__name__) for e in billing.entries] == [
        "Thinking", "add", "Thinking", "AssistantText", "transfer_to_refunds",
    ]  # fmt: skip
    assert to_billing.subagent.tool_count == 2
    to_refunds = billing.entries[-1]
    assert isinstance(to_refunds, ToolCall)
    assert to_refunds.subagent is not None
    assert (to_refunds.subagent.name, to_refunds.subagent.task) == (
        "refunds", "handoff from billing",
    )  # fmt: skip
    refunds = to_refunds.subagent.transcript
    assert refunds is not None
    add, back = refunds.tool_calls()
    assert (add.call_id, add.status, add.result.text if add.result else None) == (
        "f_1", "success", "4",
    )  # fmt: skip
    assert back.subagent is not None  # back to billing, an ancestor: its steps go on there
    assert (back.subagent.name, back.subagent.transcript) == ("billing", None)
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.meta["agent"]) == (runs.HANDOFF_ANSWER, "billing")
    assert not any(
        isinstance(e, AssistantText) and e.text == runs.HANDOFF_ANSWER for e in billing.entries
    )  # not shown twice
    assert _by_agent(transcript) == count_by_agent(HANDOFFS)
    assert len(all_calls(transcript)) == count_saved_calls(HANDOFFS) == 5


def test_A1_a_new_prompt_ends_the_turn_and_its_handoffs() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages = [
        HumanMessage("hi"),
        AIMessage("", name="triage",
                  tool_calls=[{"name": "transfer_to_writer", "args": {}, "id": "t1"}]),
        ToolMessage("Successfully transferred to writer", tool_call_id="t1"),
        AIMessage("Hello.", name="writer"),
        HumanMessage("again"),
        AIMessage("Still here.", name="writer"),
    ]  # fmt: skip
    transcript = turnfold.load(messages)
    assert transcript.warnings == []
    assert [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries] == [
        ("UserMessage", "hi"), ("ToolCall", None), ("AssistantText", "Hello."),
        ("UserMessage", "again"), ("AssistantText", "Still here."),
    ]  # fmt: skip
    sub = transcript.tool_calls()[0].subagent
    assert sub is not None
    assert (sub.name, sub.tool_count) == ("writer", 0)
    assert sub.transcript is not None
    assert sub.transcript.entries == []


def test_A1_an_unnamed_entry_agent_hands_off_and_the_next_turn_starts_where_it_was() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def transfer(to: str, call_id: str, name: str | None = None) -> list[Any]:
        return [
            AIMessage("", name=name, tool_calls=[
                {"name": f"transfer_to_{to}", "args": {}, "id": call_id}]),
            ToolMessage(f"Successfully transferred to {to}", tool_call_id=call_id),
        ]  # fmt: skip

    messages = [
        HumanMessage("hi"),
        *transfer("billing", "t1"),  # an agent made without a name
        AIMessage("Billing here.", name="billing"),
        HumanMessage("and refunds?"),
        # the next turn starts with billing, in control at the top level since no call
        # of this turn handed to it; its handoff is from billing
        *transfer("refunds", "t2", "billing"),
        AIMessage("Refunded.", name="refunds"),
    ]
    transcript = turnfold.load(messages)
    assert transcript.warnings == []
    assert [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries] == [
        ("UserMessage", "hi"), ("ToolCall", None), ("AssistantText", "Billing here."),
        ("UserMessage", "and refunds?"), ("ToolCall", None), ("AssistantText", "Refunded."),
    ]  # fmt: skip
    first, second = transcript.tool_calls()
    assert first.subagent is not None
    assert (first.subagent.name, first.subagent.task) == ("billing", None)  # from no name
    assert second.subagent is not None
    assert (second.subagent.name, second.subagent.task) == ("refunds", "handoff from billing")


@pytest.mark.parametrize("subgraphs", [False, True], ids=["flat", "subgraphs"])
@pytest.mark.parametrize(
    "mode", [["updates", "messages"], "values", "updates", ["values", "messages"]], ids=str
)
def test_A2_following_a_handoff_graph_ends_with_what_load_gives(mode: Any, subgraphs: bool) -> None:
    events, final = runs.stream_handoffs(mode, subgraphs=subgraphs)
    transcript, _ = follow(events)
    loaded = turnfold.load(final)
    assert transcript.warnings == []
    tree = _tree(loaded)
    assert tree == _tree(turnfold.load(HANDOFFS))
    # each agent node's update carries the whole state's messages (the handoff's
    # Command(update=...) passes them on), so the prompt is there in every mode
    assert _tree(transcript) == tree
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == runs.HANDOFF_ANSWER


# --- a finished run read flat (issue 22) ---------------------------------------------------


def _benchmark_run(steps: int) -> Any:
    from benchmarks import frameworks

    return frameworks.CASES["langchain"](steps).run()


def test_A1_a_finished_run_read_flat_reads_as_the_builder_reads_it_message_by_message(
    monkeypatch: pytest.MonkeyPatch, result: dict[str, Any]
) -> None:
    """A finished run of one agent is read flat, each call made already settled by its tool
    message: the transcript is the one the builder makes message by message, to the last
    field (entries and ids, thinking, texts, statuses, handled tool errors, artifacts, usage
    details, model, metadata, warnings and the accounting of every record). A run the flat
    read does not know (handoffs, garbled calls, a result before its call or a second one)
    is the builder's alone, and reads as before."""
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        messages_to_dict,
    )

    two_turns = [
        SystemMessage(content="You are terse."),
        HumanMessage(content=[{"type": "text", "text": "look"}, {"type": "image_url"}]),
        AIMessage(
            content=[{"type": "text", "text": "Looking."}, {"type": "mystery"}],
            tool_calls=[
                {"name": "search", "args": {"query": "x"}, "id": "c1"},
                {"name": "Bash", "args": {"command": "ls"}, "id": "c2"},
            ],
            response_metadata={"model": "m-2"},
        ),
        ToolMessage(content="found", tool_call_id="c1", artifact={"hits": [1, 2]}),
        HumanMessage(content="again"),
        AIMessage(
            content="Done.",
            usage_metadata={"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
        ),
    ]  # c2 never answered; the unknown block warns
    chunks = [
        HumanMessage(content="hi"),
        AIMessageChunk(content="Looking", id="m1")
        + AIMessageChunk(
            content=" it up.",
            id="m1",
            tool_call_chunks=[{"name": "search", "args": '{"query": "x"}', "id": "c1", "index": 0}],
        ),
        ToolMessage(content="found", tool_call_id="c1", status="success"),
    ]
    garbled = [
        HumanMessage(content="go"),
        AIMessage(
            content="",
            invalid_tool_calls=[
                {"name": "g", "args": "{oops", "id": "c9", "error": "bad JSON", "type": "x"}
            ],
        ),
    ]
    early = [HumanMessage(content="go"), ToolMessage(content="?", tool_call_id="c1")]
    # Read flat up to the second result of c1: the system prompt, model and warning the flat
    # read met first are the builder's once, not twice.
    answered_twice = [
        *two_turns[:4],
        ToolMessage(content="again", tool_call_id="c1"),
    ]
    inputs = {  # name: (what is loaded, whether it is read flat)
        "benchmark": (_benchmark_run(40), True),
        "result": (result, True),
        "messages": (result["messages"], True),
        "messages_to_dict": (messages_to_dict(result["messages"]), True),
        "dumpd file": (DUMPD, True),
        "two turns": (two_turns, True),
        "chunks": (chunks, True),
        "handoffs": (HANDOFFS, False),
        "garbled": (garbled, False),
        "result before its call": (early, False),
        "a second result": (answered_twice, False),
    }
    for name, (value, flat) in inputs.items():
        read, built, taken = read_both(
            monkeypatch, adapter, value, tried="_read_flat", declined=None
        )
        assert taken == flat, name
        assert_read_alike(read, built, name)
    assert turnfold.load(two_turns).warnings  # the unknown block: read flat, warned alike


def _random_run(chance: Any) -> list[Any]:
    """Messages of a finished run of one agent whose shapes ``chance`` (a ``random.Random``)
    picks: a system prompt or none; one to three turns, each of one to four responses with
    reasoning (``reasoning_content``, a thinking block, a reasoning block with a summary, or
    none), text as a string, as blocks or none, zero to three calls (some never answered), a
    model or none, usage with details, without, or none; results as text or blocks, failed or
    succeeded, with an artifact or not."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    agent = chance.choice([None, "calc"])
    messages: list[Any] = []
    if chance.random() < 0.3:
        messages.append(SystemMessage(content="Be brief."))
    for turn in range(chance.randint(1, 3)):
        messages.append(HumanMessage(content=f"task {turn}"))
        for n in range(chance.randint(1, 4)):
            step = f"{turn}_{n}"
            blocks: list[Any] = []
            extra: dict[str, Any] = {}
            reasoning = chance.choice(["kwargs", "thinking", "summary", None])
            if reasoning == "kwargs":
                extra["reasoning_content"] = f"pondering {step}"
            elif reasoning == "thinking":
                blocks.append({"type": "thinking", "thinking": f"hmm {step}"})
            elif reasoning == "summary":
                blocks.append({"type": "reasoning", "summary": [{"text": f"sum {step}"}]})
            text = chance.choice(["", f"note {step}"])
            if text:
                blocks.append({"type": "text", "text": text})
            calls = [
                {
                    "name": chance.choice(["add", "Bash", "search"]),
                    "args": {"a": k},
                    "id": f"c{step}_{k}",
                }
                for k in range(chance.randint(0, 3))
            ]
            usage = chance.choice([None, "plain", "details"])
            counted: dict[str, Any] = {}
            if usage is not None:
                counted["usage_metadata"] = {
                    "input_tokens": n + 1,
                    "output_tokens": 2,
                    "total_tokens": n + 3,
                }
                if usage == "details":
                    counted["usage_metadata"]["input_token_details"] = {"cache_read": 1}
                    counted["usage_metadata"]["output_token_details"] = {"reasoning": 1}
            messages.append(
                AIMessage(
                    content=blocks if blocks and chance.random() < 0.7 else text,
                    additional_kwargs=extra,
                    tool_calls=calls,
                    name=agent,
                    response_metadata={"model_name": "m-1"} if chance.random() < 0.5 else {},
                    **counted,
                )
            )
            for call in calls:
                if chance.random() < 0.15:
                    continue  # never answered
                output = f"out {call['id']}"
                messages.append(
                    ToolMessage(
                        content=output
                        if chance.random() < 0.6
                        else [{"type": "text", "text": output}],
                        tool_call_id=call["id"],
                        status=chance.choice(["success", "error"]),
                        artifact={"raw": output} if chance.random() < 0.3 else None,
                    )
                )
    return messages


def test_A1_random_runs_of_one_agent_read_flat_as_the_builder_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Runs of random shapes (reasoning in each form, texts as strings and blocks, zero to
    three calls per response, unanswered and failing calls, artifacts, usage with and without
    details, models, system prompts, several turns) read flat and message by message give the
    same transcript, its warnings and its accounting."""
    import random

    for seed in range(12):
        messages = _random_run(random.Random(seed))
        read, built, taken = read_both(
            monkeypatch, adapter, messages, tried="_read_flat", declined=None
        )
        assert taken, seed
        assert_read_alike(read, built, seed)


# --- what QA found running real LangGraph runs (spec) -------------------------


def _pending(transcript: Transcript) -> list[tuple[str, str | None, str, list[str]]]:
    """Each pending action: its kind, call, text and options."""
    return [
        (e.action, e.call_id, e.text, e.options)
        for e in transcript.entries
        if isinstance(e, PendingAction)
    ]


@pytest.mark.parametrize("mode", ["updates", ["updates", "messages"], "values"], ids=str)
def test_A2_a_tool_node_whose_updates_are_listed_settles_every_call(mode: Any) -> None:
    """A ``ToolNode`` whose tools answer with a ``Command(update=...)`` beside a plain result
    writes its channel twice, and ``updates`` lists the two updates under the node: each is
    read, so every call ends with its result, as the load of the final state says."""
    events, final = runs.stream_graph(runs.command_graph(), "go", mode)
    if mode == "updates":
        assert any(isinstance(e.get("tools"), list) for e in events)  # the shape at hand
    transcript, _ = follow(events)
    assert transcript.warnings == []
    assert outcome(transcript) == outcome(turnfold.load(final))
    assert [(c.call_id, c.status, c.result.text if c.result else None)
            for c in transcript.tool_calls()] == [("c1", "success", "3"),
                                                   ("c2", "success", "flag set")]  # fmt: skip


def test_A1_a_tool_s_images_in_every_form_langchain_passes_on_are_its_result_s_images(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool's image blocks (LangChain's standard ``base64`` / ``url`` / ``file_id``, the v0
    ``source_type`` form, Anthropic's ``source``, OpenAI's ``image_url``) are the result's
    images when they hold the image, and named when they point at one (never fetched); a
    file block is named, its data not shown as text."""
    from turnfold.model import ImageData

    result = runs.image_agent().invoke({"messages": [("user", "shot")]}, runs._config("images"))
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    (call,) = transcript.tool_calls()
    assert call.result is not None
    inline = [block for block, named in runs.IMAGE_BLOCKS if named is None]
    assert call.result.images == [ImageData(media_type="image/png", data=runs.PNG)] * len(inline)
    assert call.result.text == "\n".join(
        ["page a", *(named for _, named in runs.IMAGE_BLOCKS if named is not None)]
    )
    read, built, taken = read_both(monkeypatch, adapter, result, tried="_read_flat", declined=None)
    assert taken
    assert_read_alike(read, built, "images")
    events, _ = runs.stream_graph(runs.image_agent(), "shot", "updates")
    followed, _ = follow(events)
    assert followed.tool_calls()[0].result == call.result


@pytest.mark.parametrize("standard", [False, True], ids=["anthropic", "standard"])
def test_A1_a_provider_s_own_tool_calls_are_calls_settled_by_their_results(
    standard: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Anthropic's ``server_tool_use`` + ``web_search_tool_result`` blocks, and the standard
    ``server_tool_call`` + ``server_tool_result`` that ``content_blocks`` makes of them, are
    in no ``tool_calls``: each is a call of its message's batch, before its text, settled by
    its result; read flat as the builder reads it, and followed alike."""
    from langchain_core.messages import messages_to_dict

    result = runs.server_tool_agent(standard).invoke(
        {"messages": [("user", "weather?")]}, runs._config(f"server-{standard}")
    )
    searched = result["messages"][1]
    assert searched.tool_calls[0]["id"] == "c1"  # the search is not among them
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    assert [(type(e).__name__, getattr(e, "name", None) or getattr(e, "text", None))
            for e in transcript.entries] == [
        ("UserMessage", "weather?"), ("ToolCall", "web_search"), ("AssistantText", "It is sunny."),
        ("ToolCall", "add"), ("AssistantText", "Sunny; 1+2=3."),
    ]  # fmt: skip
    search, add = transcript.tool_calls()
    assert (search.call_id, search.args, search.status) == (
        "srvtoolu_1", {"query": "weather"}, "success",
    )  # fmt: skip
    assert search.result is not None
    assert search.result.text == "Weather — https://w.example"
    assert search.meta == {"server": True}
    assert search.batch_id == add.batch_id == searched.id
    saved = tmp_path / "server.json"
    saved.write_text(json_text(messages_to_dict(result["messages"])), encoding="utf-8")
    assert count_saved_calls(saved) == len(all_calls(turnfold.load(saved))) == 2
    read, built, taken = read_both(monkeypatch, adapter, result, tried="_read_flat", declined=None)
    assert taken
    assert_read_alike(read, built, standard)
    for mode in (["updates", "messages"], "updates", "values"):
        events, final = runs.stream_graph(runs.server_tool_agent(standard), "weather?", mode)
        followed, _ = follow(events)
        assert followed.warnings == [], mode
        assert outcome(followed) == outcome(turnfold.load(final)), mode
        kinds = [type(e).__name__ for e in transcript.entries]
        # In its place, live too; the prompt where the stream has it (values)
        expected = kinds if mode == "values" else ["UserMessage", *kinds[1:]]
        assert [type(e).__name__ for e in followed.entries] == expected, mode
    follower = adapter.Follower(Transcript())
    for event in runs.stream_graph(runs.server_tool_agent(standard), "weather?", "updates")[0]:
        follower.feed(event)
    assert follower._root.builder.open_calls() == []  # settled in its message: not open


def json_text(value: Any) -> str:
    import json

    return json.dumps(value)


def test_A1_server_calls_in_every_shape_are_settled_or_warned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hand-made, in the block shapes of ``langchain_core.messages.content`` and of
    ``block_translators.anthropic``: a streamed call (``partial_json``, a
    ``server_tool_call_chunk``), an MCP connector's call and its failed result, each
    settled in its message; a turn the provider paused (its call in one message, its result
    in the next) settles the call; a result for no call, or a call block without an id,
    warns. Both reads agree; those of one message are read flat."""
    from langchain_core.messages import AIMessage, HumanMessage

    use = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}}
    hit = {"type": "web_search_result", "url": "https://x", "title": "X"}
    found = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [hit]}
    shapes = [HumanMessage("go"), AIMessage([
        {"type": "server_tool_use", "id": "s2", "name": "web_fetch", "input": {},
         "partial_json": '{"url": "https://y"}'},
        {"type": "server_tool_call_chunk", "id": "s3", "name": "code_interpreter",
         "args": '{"code": "1+1"}'},
        {"type": "server_tool_result", "tool_call_id": "s3", "status": "error",
         "output": [{"type": "logs", "logs": "boom"}]},
        {"type": "mcp_tool_use", "id": "m1", "name": "lookup", "server_name": "kb",
         "input": {"k": 1}},
        {"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": True,
         "content": [{"type": "text", "text": "no such key"}]},
        "Done.",
    ])]  # fmt: skip
    paused = [HumanMessage("go"), AIMessage([use]), AIMessage([found, "Found X."])]
    orphan = [HumanMessage("go"), AIMessage([{**found, "tool_use_id": "s9"}, "Found."])]
    no_id = [HumanMessage("go"), AIMessage([{k: v for k, v in use.items() if k != "id"}])]
    for name, messages, flat in (("shapes", shapes, True), ("paused", paused, False),
                                 ("orphan", orphan, False), ("no id", no_id, True)):  # fmt: skip
        read, built, taken = read_both(
            monkeypatch, adapter, messages, tried="_read_flat", declined=None
        )
        assert taken == flat, name
        assert_read_alike(read, built, name)
    assert [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in turnfold.load(shapes).tool_calls()
    ] == [
        ("s2", "web_fetch", {"url": "https://y"}, "unknown", None),  # no result recorded
        ("s3", "code_interpreter", {"code": "1+1"}, "error", "boom"),
        ("m1", "lookup", {"k": 1}, "error", "no such key"),
    ]
    (call,) = turnfold.load(paused).tool_calls()
    assert (call.call_id, call.status) == ("s1", "success")
    assert call.result is not None
    assert call.result.text == "X — https://x"
    assert [w.reason for w in turnfold.load(orphan).warnings] == [
        "server tool result for an unknown call id 's9'"
    ]
    unnamed = turnfold.load(no_id)
    assert [w.reason for w in unnamed.warnings] == ["server_tool_use block without an id"]
    assert [c.name for c in unnamed.tool_calls()] == ["web_search"]


def test_A1_an_interrupted_result_ends_with_what_it_waits_for_on_the_call_it_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``invoke`` of a run stopped on ``interrupt()`` returns its interrupts under
    ``__interrupt__``: each is a pending action at the end, on the call it came from where
    it can be told (the one call waiting; the call a ``HumanInTheLoopMiddleware`` request
    names, by its arguments or its id), else on none."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    def load_stopped(paths: list[str], middleware: Any = ()) -> Transcript:
        agent = runs.interrupt_agent(paths, middleware)
        result = agent.invoke({"messages": [("user", "rm")]}, runs._config("stopped"))
        assert result["__interrupt__"]
        read, built, taken = read_both(
            monkeypatch, adapter, result, tried="_read_flat", declined=None
        )
        assert taken
        assert_read_alike(read, built, paths)
        return read

    one = load_stopped(["/a"])
    assert one.warnings == []
    assert isinstance(one.entries[-1], PendingAction)
    ((action, call_id, text, _),) = _pending(one)
    assert (action, call_id) == ("question", "d1")
    assert _statuses(one) == {"d1": "confirming"}  # it waits for the human's answer
    assert '"question": "Delete /a?"' in text
    assert one.accounting is not None
    assert one.accounting.counts["__interrupt__"] == {"mapped": 1}
    assert "other state" not in one.accounting.counts
    # Two calls stopped in parallel: which interrupt is whose, the result does not say.
    both = load_stopped(["/a", "/b"])
    assert sorted(_pending(both))[0][:2] == ("question", None)
    assert set(_statuses(both).values()) == {"unknown"}
    approvals = ["approve", "edit", "reject", "respond"]
    for mode in ("batched", "per_call"):
        gate = HumanInTheLoopMiddleware(interrupt_on={"delete_file": True}, interrupt_mode=mode)
        # per call, the two tasks interrupt in the order their threads ran
        asked = sorted(_pending(load_stopped(["/a", "/b"], [gate])), key=lambda a: str(a[1]))
        assert [(a, c, o) for a, c, _, o in asked] == [
            ("permission", "d1", approvals), ("permission", "d2", approvals),
        ], mode  # fmt: skip
        assert "Args: {'path': '/a'}" in asked[0][2]
        assert _statuses(load_stopped(["/a", "/b"], [gate])) == {
            "d1": "confirming", "d2": "confirming"
        }, mode  # fmt: skip
    # Hand-made: the interrupt in its {"value", "id"} form; a call of an earlier turn never
    # answered is not the one waiting.
    state = {
        "messages": [
            {"type": "human", "data": {"content": "one"}},
            {"type": "ai", "data": {"content": "", "id": "a1",
                                    "tool_calls": [{"name": "f", "args": {}, "id": "old"}]}},
            {"type": "human", "data": {"content": "two"}},
            {"type": "ai", "data": {"content": "", "id": "a2",
                                    "tool_calls": [{"name": "f", "args": {}, "id": "new"}]}},
        ],
        "__interrupt__": [{"value": "Go on?", "id": "i1"}],
    }  # fmt: skip
    stopped = turnfold.load(state)
    assert _pending(stopped) == [("question", "new", "Go on?", [])]
    assert stopped.entries[-1].meta == {"interrupt_id": "i1"}


def _statuses(transcript: Transcript) -> dict[str, str]:
    return {call.call_id: call.status for call in transcript.tool_calls()}


def test_A1_a_version_2_result_loads_as_its_version_1_twin() -> None:
    """``invoke(..., version="v2")`` returns a ``GraphOutput`` (``langgraph.types``), the
    state in ``value`` and the interrupts apart in ``interrupts``: it loads as the result of
    the same run in the default form, stopped on an interrupt or finished."""
    for paths in (["/a"], ["/a", "/b"]):
        one, two = runs.interrupt_agent(paths), runs.interrupt_agent(paths)
        prompt = {"messages": [("user", "rm")]}
        output = one.invoke(prompt, runs._config("v2"), version="v2")
        assert type(output).__name__ == "GraphOutput"
        assert output.interrupts
        result = two.invoke(prompt, runs._config("v1"))
        loaded, twin = turnfold.load(output), turnfold.load(result)
        # Two calls stopped in parallel come in the order their threads reached interrupt().
        assert sorted(_pending(loaded), key=repr) == sorted(_pending(twin), key=repr)
        assert outcome(loaded) == outcome(twin)
        assert loaded.accounting == twin.accounting
    finished = runs.scripted_agent().invoke(
        {"messages": [("user", runs.PROMPT)]}, runs._config("v2-done"), version="v2"
    )
    assert not finished.interrupts
    assert outcome(turnfold.load(finished)) == outcome(turnfold.load(runs.run_result()))


def test_A1_a_state_snapshot_loads_as_the_result_of_its_run() -> None:
    """``graph.get_state(config)`` gives a ``StateSnapshot``, a named tuple of the state
    (``values``), its pending ``interrupts`` and bookkeeping (``next``, ``config``, ``tasks``…):
    it loads as the run's result, stopped on an interrupt or finished, not as a tuple of
    stream events with a warning for each bookkeeping field."""
    agent, config = runs.interrupt_agent(["/a"]), runs._config("snapshot")
    result = agent.invoke({"messages": [("user", "rm")]}, config)
    snapshot = agent.get_state(config)
    assert type(snapshot).__name__ == "StateSnapshot"
    assert snapshot.interrupts
    loaded, twin = turnfold.load(snapshot), turnfold.load(result)
    assert loaded.warnings == []
    assert _pending(loaded) == _pending(twin) != []
    assert outcome(loaded) == outcome(twin)
    agent, config = runs.scripted_agent(), runs._config("snapshot-done")
    finished = agent.invoke({"messages": [("user", runs.PROMPT)]}, config)
    loaded = turnfold.load(agent.get_state(config))
    assert loaded.warnings == []
    assert loaded.entries == turnfold.load(finished).entries
    assert outcome(loaded)[0][1][3] == "error"


@pytest.mark.parametrize("schema", ["pydantic", "dataclass"])
def test_A1_A2_a_version_2_state_of_a_pydantic_or_dataclass_schema_reads_as_its_dict(
    schema: str,
) -> None:
    """With ``version="v2"``, a ``StateGraph`` whose state schema is a Pydantic model or a
    dataclass hands its state over as that object (``GraphOutput.value``, a ``values``
    part's ``data``): read by its fields, it loads and follows as the dict of version 1."""
    prompt = {"messages": [("user", "add")]}
    output = runs.schema_graph(schema).invoke(prompt, runs._config("v2"), version="v2")
    assert not isinstance(output.value, dict)
    result = runs.schema_graph(schema).invoke(prompt, runs._config("v1"))
    loaded = turnfold.load(output)
    expected = ([("c1", "add", {"a": 1, "b": 2}, "success", "3")], "1+2=3.")
    assert outcome(loaded) == outcome(turnfold.load(result)) == expected
    assert loaded.metadata["turns"] == 2
    graph = runs.schema_graph(schema)
    parts, _ = runs.stream_graph(graph, "add", "values", version="v2")
    assert not isinstance(parts[-1]["data"], dict)
    followed, _ = follow(parts)
    assert (outcome(followed), followed.warnings) == (expected, [])


def test_A2_a_values_state_that_cannot_be_read_is_said_once() -> None:
    class Opaque:
        """A state of no schema turnfold reads."""

    part = {"type": "values", "ns": (), "data": Opaque(), "interrupts": ()}
    transcript, _ = follow([part, part])
    assert [w.reason for w in transcript.warnings] == ["values event of a state not read (Opaque)"]


#: Stream modes, alone and in lists: an interrupt comes as an ``__interrupt__`` update, in the
#: state of a ``values`` event (``PregelLoop.output_writes``) and in its task's ``tasks``
#: result (``debug`` wraps it).
INTERRUPTED_MODES = [
    ["updates", "messages"],
    "updates",
    ["updates", "tasks"],
    "values",
    ["values", "messages"],
    ["values", "tasks"],
    ["values", "debug"],
]


@pytest.mark.parametrize(
    "form", [{}, {"subgraphs": True}, {"version": "v2"}], ids=["", "subgraphs", "v2"]
)
@pytest.mark.parametrize("mode", INTERRUPTED_MODES, ids=str)
def test_A2_following_an_interrupted_run_shows_what_it_waits_for_once_on_its_call(
    mode: Any, form: dict[str, Any]
) -> None:
    """Live, an interrupt is shown once (it comes as an ``__interrupt__`` update, in the
    state of the last ``values`` event or beside it in a version 2 part, and in its task's
    ``tasks`` result), on the call it stopped, which waits (``confirming``): the one call
    waiting, or the call of the tool task the ``tasks`` result names, as the load of the
    result shows it."""
    agent = runs.interrupt_agent(["/a"])
    result = agent.invoke({"messages": [("user", "rm")]}, runs._config("loaded"))
    events, _ = runs.stream_graph(runs.interrupt_agent(["/a"]), "rm", mode, **form)
    transcript, _ = follow(events)
    loaded = turnfold.load(result)
    assert transcript.warnings == []
    assert _pending(transcript) == _pending(loaded)
    assert _pending(transcript)[0][:2] == ("question", "d1")
    assert outcome(transcript) == outcome(loaded)
    assert _statuses(transcript) == {"d1": "confirming"}
    events, _ = runs.stream_graph(runs.interrupt_agent(["/a", "/b"]), "rm", mode)
    transcript, _ = follow(events)
    named = sorted(str(c) for _, c, _, _ in _pending(transcript))
    if "tasks" in mode or "debug" in mode:  # two calls stopped in parallel: each task names its own
        assert named == ["d1", "d2"]
        assert _statuses(transcript) == {"d1": "confirming", "d2": "confirming"}
    else:  # which interrupt is whose, nothing else says
        assert named == ["None", "None"]
        assert _statuses(transcript) == {"d1": "unknown", "d2": "unknown"}


@pytest.mark.parametrize("mode", ["updates", "values", ["values", "messages"]], ids=str)
def test_A2_a_followed_approval_request_shows_a_permission_on_each_waiting_call(
    mode: Any,
) -> None:
    """``HumanInTheLoopMiddleware`` stops the run before its tools run: followed in any
    mode, each call asked about waits (``confirming``) with a permission naming it and the
    decisions allowed, as the load of the result shows them."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    def gate() -> Any:
        return HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})

    agent = runs.interrupt_agent(["/a", "/b"], [gate()])
    loaded = turnfold.load(agent.invoke({"messages": [("user", "rm")]}, runs._config("hitl")))
    events, _ = runs.stream_graph(runs.interrupt_agent(["/a", "/b"], [gate()]), "rm", mode)
    transcript, _ = follow(events)
    assert transcript.warnings == []
    assert _pending(transcript) == _pending(loaded)
    assert [(a, c) for a, c, _, _ in _pending(transcript)] == [
        ("permission", "d1"), ("permission", "d2"),
    ]  # fmt: skip
    assert outcome(transcript) == outcome(loaded)
    assert _statuses(transcript) == {"d1": "confirming", "d2": "confirming"}


def test_A2_an_interrupted_astream_in_values_mode_ends_like_the_load_of_its_result() -> None:
    """``turnfold.follow`` over ``astream(stream_mode="values")`` of a run stopped on
    ``interrupt()``: the same pending question on the same waiting call as its result."""
    agent = runs.interrupt_agent(["/a"])
    loaded = turnfold.load(agent.invoke({"messages": [("user", "rm")]}, runs._config("sync")))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run, events, _ = pool.submit(
            asyncio.run, runs.follow_astream("values", runs.interrupt_agent(["/a"]), "rm")
        ).result()
    assert "__interrupt__" in events[-1]  # what the values stream says of the interrupt
    assert _pending(run.transcript) == _pending(loaded)
    assert outcome(run.transcript) == outcome(loaded)
    assert _statuses(run.transcript) == {"d1": "confirming"}


@pytest.mark.parametrize(
    "mode", ["updates", ["updates", "messages"], ["updates", "tasks"]], ids=str
)
def test_A2_agents_called_as_tools_in_parallel_nest_under_their_own_calls(mode: Any) -> None:
    """Two agents run as tools in parallel, streamed with ``subgraphs=True``: each run is
    nested under its own call, from ``updates`` alone too (nothing there names the call a
    run of ``tools:<task id>`` belongs to; the result that is a run's answer does)."""
    events, final = runs.stream_graph(runs.parallel_parent(), "ask", mode, subgraphs=True)
    transcript, _ = follow(events)
    assert transcript.warnings == []
    assert outcome(transcript) == outcome(turnfold.load(final))
    nested = {}
    for call in transcript.tool_calls():
        assert call.subagent is not None, call.call_id
        assert call.subagent.transcript is not None, call.call_id
        nested[call.call_id] = (call.subagent.name, outcome(call.subagent.transcript))
    assert nested == {
        "p1": ("alice", ([("ca", "add", {"a": 1, "b": 2}, "success", "3")], "alice: 3")),
        "p2": ("bob", ([("cb", "add", {"a": 3, "b": 4}, "success", "7")], "bob: 7")),
    }


def test_A2_parallel_agent_runs_nothing_matches_to_a_call_are_nested_by_a_guess_and_said() -> None:
    """When no event and no result tells which call a run is of (the tools wrap their
    agents' answers, ``updates`` only), the runs' steps are still shown: each nested under
    the call most likely its own (a tool named after its agent), with a warning saying so."""
    events, _ = runs.stream_graph(runs.parallel_parent(wrapped=True), "ask", "updates",
                                  subgraphs=True)  # fmt: skip
    transcript, _ = follow(events)
    # Each guess is said (a run that went on past the other call's result is told apart, and
    # needs none: how many there are depends on how the threads ran)
    assert all("was guessed to be that of call" in w.reason for w in transcript.warnings)
    subagents = {c.call_id: c.subagent for c in transcript.tool_calls()}
    assert {k: v.name if v else None for k, v in subagents.items()} == {"p1": "alice", "p2": "bob"}
    assert len(all_calls(transcript)) == 4  # no child step dropped


#: Hand-made: a parent's calls of two tools that each run an agent.
ASK_CALLS = [
    {"name": "ask_one", "args": {}, "id": "p1"},
    {"name": "ask_two", "args": {}, "id": "p2"},
]


def _update_event(node: str, message: Any, namespace: tuple[str, ...] = ()) -> Any:
    """An ``updates`` event of ``subgraphs=True``: ``(namespace, {node: {"messages"}})``."""
    return namespace, {node: {"messages": [message]}}


def test_A2_a_child_run_going_on_past_a_result_is_not_that_call_s_run() -> None:
    """Hand-made ``updates`` events (subgraphs) in an order LangGraph may stream them: two
    runs begin while ``p1`` and ``p2`` run; ``p1``'s result (not a run's answer) comes while
    the run of ``tools:b`` goes on, so that run is ``p2``'s, and the other ``p1``'s: no
    guess, no warning."""
    from langchain_core.messages import AIMessage, ToolMessage

    update, calls = _update_event, ASK_CALLS
    events = [
        update("model", AIMessage("", id="m0", tool_calls=calls)),
        update("model", AIMessage("A started.", id="a1", name="x"), ("tools:a",)),
        update("model", AIMessage("B started.", id="b1", name="y"), ("tools:b",)),
        update("tools", ToolMessage("wrapped A", tool_call_id="p1", id="t1")),
        update("model", AIMessage("B done.", id="b2", name="y"), ("tools:b",)),
        update("tools", ToolMessage("wrapped B", tool_call_id="p2", id="t2")),
    ]
    transcript, _ = follow(events)
    assert transcript.warnings == []
    subagents = {c.call_id: c.subagent.name if c.subagent else None
                 for c in transcript.tool_calls()}  # fmt: skip
    assert subagents == {"p1": "x", "p2": "y"}


@pytest.mark.parametrize(
    ("names", "expected"),
    [(("two", "one"), {"p1": "one", "p2": "two"}), (("x", "y"), {"p1": "y", "p2": "x"})],
    ids=["by name", "by order"],
)
def test_A2_child_runs_no_event_tells_apart_are_nested_by_a_guess_said_in_a_warning(
    names: tuple[str, str], expected: dict[str, str]
) -> None:
    """Hand-made ``updates`` events (subgraphs): both runs end before any result, and no
    result is a run's answer. Their steps are still shown, each run nested under the call
    whose tool is named after its agent, else in order (the run that ended first with the
    call whose result came first), each guess said in a warning."""
    from langchain_core.messages import AIMessage, ToolMessage

    update, calls = _update_event, ASK_CALLS
    events = [
        update("model", AIMessage("", id="m0", tool_calls=calls)),
        update("model", AIMessage("A.", id="a1", name=names[0]), ("tools:a",)),
        update("model", AIMessage("B.", id="b1", name=names[1]), ("tools:b",)),
        update("tools", ToolMessage("wrapped", tool_call_id="p2", id="t2")),
        update("tools", ToolMessage("wrapped", tool_call_id="p1", id="t1")),
    ]
    transcript, _ = follow(events)
    subagents = {c.call_id: c.subagent.name if c.subagent else None
                 for c in transcript.tool_calls()}  # fmt: skip
    assert subagents == expected
    assert sorted(w.reason for w in transcript.warnings) == [
        f"the run of namespace tools:{run} was guessed to be that of call {call!r} "
        "(no event named its call)"
        for run, call in sorted(
            ("a" if name == names[0] else "b", call) for call, name in expected.items()
        )
    ]


# --- calls of a handoff's child: settled and waiting where they are shown (issue 22) ---------


def _handed_to_writer(*tail: Any) -> list[Any]:
    """Hand-made messages: ``triage`` hands off to ``writer``, whose messages ``tail`` are."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    return [
        HumanMessage("hi", id="h1"),
        AIMessage("", name="triage", id="a1",
                  tool_calls=[{"name": "transfer_to_writer", "args": {}, "id": "t1"}]),
        ToolMessage("Successfully transferred to writer", tool_call_id="t1", id="r1"),
        *tail,
    ]  # fmt: skip


def _child_of(transcript: Transcript) -> Transcript:
    """The transcript of the agent the first call handed to."""
    sub = transcript.tool_calls()[0].subagent
    assert sub is not None
    assert sub.transcript is not None
    return sub.transcript


def test_L4_a_call_id_used_again_at_another_level_settles_each_call_where_it_is() -> None:
    """Hand-made: the agent handed to calls ``x``; the next turn, at the top level, calls
    ``x`` again. Each result settles its own call where it is shown, loaded and followed (a
    second call of an id was looked for in the first one's transcript: KeyError)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    add = [{"name": "add", "args": {}, "id": "x"}]
    messages = _handed_to_writer(
        AIMessage("", name="writer", id="a2", tool_calls=add),
        ToolMessage("4", tool_call_id="x", id="r2"),
        AIMessage("Four.", name="writer", id="a3"),
        HumanMessage("again", id="h2"),
        AIMessage("", name="writer", id="a4", tool_calls=add),
        ToolMessage("5", tool_call_id="x", id="r3"),
    )
    followed, _ = follow([_update_event("agent", message) for message in messages])
    for transcript in (turnfold.load(messages), followed):
        assert transcript.warnings == []
        settled = [
            [(c.call_id, c.status, c.result.text if c.result else None) for c in t.tool_calls()]
            for t in (_child_of(transcript), transcript)
        ]
        assert settled == [
            [("x", "success", "4")],
            [("t1", "success", "Successfully transferred to writer"), ("x", "success", "5")],
        ]


def test_A1_A2_a_call_stopped_in_a_handoff_s_child_waits_there_and_its_observers_hear() -> None:
    """Hand-made: the agent handed to calls ``d1`` and ``d2``, and the run stops on an
    interrupt naming ``d1``. Loaded, ``d1`` waits in the child and the pending action ends
    the transcript; followed, the child's observers hear ``d1`` wait, then, as the stream
    ends, ``d2`` (never answered) become ``unknown`` while ``d1`` keeps waiting."""
    from langchain_core.messages import AIMessage

    calls = [{"name": "delete", "args": {"path": f"/{n}"}, "id": f"d{n}"} for n in (1, 2)]
    messages = _handed_to_writer(AIMessage("", name="writer", id="a2", tool_calls=calls))
    interrupt = {"value": {"tool_call_id": "d1", "question": "Delete /1?"}, "id": "i1"}

    loaded = turnfold.load({"messages": messages, "__interrupt__": [interrupt]})
    assert loaded.warnings == []
    assert [(c.call_id, c.status) for c in _child_of(loaded).tool_calls()] == [
        ("d1", "confirming"), ("d2", "unknown"),
    ]  # fmt: skip
    assert [(a, c) for a, c, _, _ in _pending(loaded)] == [("question", "d1")]

    transcript = Transcript()
    follower = adapter.Follower(transcript)
    for message in messages:
        follower.feed(_update_event("agent", message))
    heard: list[tuple[str, tuple[str, ...], str]] = []
    _child_of(transcript).observe(
        lambda c: heard.append((c.entry.call_id, c.fields, c.entry.status))
    )
    follower.feed(((), {"__interrupt__": [interrupt]}))
    follower.close()
    assert heard == [("d1", ("status",), "confirming"), ("d2", ("status",), "unknown")]
    assert _pending(transcript) == _pending(loaded)


def test_A1_the_responses_reasoning_item_in_additional_kwargs_is_thinking() -> None:
    """LangChain.js and langchain-openai's v0 output keep an OpenAI Responses reasoning item
    in ``additional_kwargs["reasoning"]``, not in the content: its summary is the thinking
    (a real LangGraph.js state, gpt-5; its encrypted content alone, a redacted thought)."""
    path = FIXTURES / "langgraphjs_real_values-state_responses-reasoning.json"
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    thinking = [e for e in transcript.entries if isinstance(e, Thinking)]
    assert len(thinking) == 1
    assert thinking[0].form == "summary"
    assert thinking[0].text is not None
    assert thinking[0].text.startswith("**Deleting a file**")
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [("delete_file", "success")]
    hidden = {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}
    ai = {"type": "ai", "data": {"content": "Done.", "additional_kwargs": {"reasoning": hidden}}}
    entries = turnfold.load([{"type": "human", "data": {"content": "Go."}}, ai]).entries
    assert [(type(e).__name__, getattr(e, "form", None)) for e in entries[1:]] == [
        ("Thinking", "encrypted"), ("AssistantText", None),
    ]  # fmt: skip


def test_L4_streamed_chunks_that_do_not_merge_keep_their_text_and_say_so() -> None:
    # LangChain refuses to merge chunks whose metadata disagree (a key of two types); the
    # message is still shown, its chunks' text joined, with a warning.
    path = FIXTURES / "langgraph_v1.2.24_stream-dumps_updates-messages_v1-blocks.json"
    events = json.loads(path.read_text(encoding="utf-8"))
    chunks = [e[1][0]["kwargs"] for e in events if e[0] == "messages"]
    first = next(c for c in chunks if c.get("response_metadata"))
    first["response_metadata"]["model_provider"] = 1  # a number, not text
    transcript = turnfold.load(events)
    assert any("do not merge" in w.reason for w in transcript.warnings)
    assert transcript.entries  # the run is read


# --- structured output (P-2) --------------------------------------------------------------------


class City(BaseModel):
    name: str
    population: int
    country: str = "FR"  # left at its default: part of the output all the same


CITY = {"name": "Paris", "population": 3, "country": "FR"}


def _city_agent(strategy: str) -> Any:
    """``create_agent(..., response_format=...)`` on the scripted model: it calls ``add``,
    then gives its structured response, as the tool strategy's call of ``City`` (answered by
    a ToolMessage "Returning structured response: ...") or as the provider strategy's JSON
    text."""
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
    from langchain_core.messages import AIMessage

    def ai(content: str, *calls: tuple[str, dict[str, Any], str]) -> AIMessage:
        tool_calls = [{"name": name, "args": args, "id": cid} for name, args, cid in calls]
        metadata = {"model_name": runs.MODEL}
        return AIMessage(content, tool_calls=tool_calls, response_metadata=metadata)

    said = {"name": "Paris", "population": 3}
    last = ai("", ("City", said, "call_2")) if strategy == "tool" else ai(json.dumps(said))
    model = runs.FakeToolModel(responses=[ai("", ("add", {"a": 1, "b": 2}, "call_1")), last])
    response_format = ToolStrategy(City) if strategy == "tool" else ProviderStrategy(City)
    return create_agent(model, tools=[runs.add], response_format=response_format)


def test_P2_a_tool_strategy_s_structured_response_is_the_turn_s_answer() -> None:
    from langchain_core.messages import messages_to_dict

    result = _city_agent("tool").invoke({"messages": [("user", "Which city?")]})
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    answer, shown = answer_of(transcript)
    assert answer.meta == {"structured_output": True}
    assert json.loads(shown) == CITY
    assert answer.model == runs.MODEL  # of the message that gave it
    call = transcript.tool_calls()[-1]
    assert (call.name, call.status) == ("City", "success")  # stays in the process
    assert call.result is not None
    assert (call.result.text or "").startswith("Returning structured response:")
    assert transcript.metadata["structured_response"] == CITY
    # Saved as JSON (messages_to_dict beside the response), it loads the same.
    saved = {"messages": messages_to_dict(result["messages"]), "structured_response": CITY}
    assert turnfold.load(json.dumps(saved)).entries == transcript.entries


@pytest.mark.parametrize("mode", [["updates", "messages"], "values", "updates"], ids=str)
def test_P2_a_followed_stream_ends_with_the_structured_answer_load_gives(mode: Any) -> None:
    agent = _city_agent("tool")
    events = list(agent.stream({"messages": [("user", "Which city?")]}, stream_mode=mode))
    transcript, _ = follow(events)
    loaded = turnfold.load(agent.invoke({"messages": [("user", "Which city?")]}))
    assert transcript.warnings == []
    assert outcome(transcript) == outcome(loaded)
    assert answer_of(transcript)[0].meta == {"structured_output": True}
    assert transcript.metadata["structured_response"] == CITY
    kinds = [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries]
    expected = [(type(e).__name__, getattr(e, "text", None)) for e in loaded.entries]
    assert kinds == (expected if "values" in mode else [("UserMessage", ""), *expected[1:]])


def test_P2_a_provider_strategy_s_json_text_is_the_answer_and_gets_no_second() -> None:
    result = _city_agent("provider").invoke({"messages": [("user", "Which city?")]})
    assert result["structured_response"] == City(name="Paris", population=3)
    transcript = turnfold.load(result)
    answer, _ = answer_of(transcript)
    assert json.loads(answer.text) == {"name": "Paris", "population": 3}  # the default unsaid
    assert structured_answers(transcript) == []


def test_P2_a_run_without_a_structured_response_is_shown_as_before() -> None:
    transcript = turnfold.load(runs.run_result())
    assert answer_of(transcript)[0].text == runs.ANSWER
    assert structured_answers(transcript) == []


# --- SummarizationMiddleware: the history summarised mid-run -----------------------------------

SUMMARY = "SUMMARY: the user added 1+2=3."


def _summarizing_agent() -> Any:
    """A real ``create_agent`` whose ``SummarizationMiddleware`` summarises the history once it
    holds 4 messages, keeping the last 2 (two turns: 1+2, then 3+4)."""
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import AIMessage

    def said(text: str, calls: list[tuple[str, dict[str, Any], str]], n: int) -> AIMessage:
        return AIMessage(
            content=text,
            tool_calls=[{"name": name, "args": args, "id": cid} for name, args, cid in calls],
            usage_metadata=runs._usage(100 + n, 10 + n),
            response_metadata={"model_name": runs.MODEL},
        )

    model = runs.FakeToolModel(
        responses=[
            said("", [("add", {"a": 1, "b": 2}, "c1")], 1),
            said("three", [], 2),
            said("", [("add", {"a": 3, "b": 4}, "c2")], 3),
            said("seven", [], 4),
        ]
    )
    summarizer = runs.FakeToolModel(responses=[AIMessage(SUMMARY)])
    return runs.create_agent(
        model,
        tools=[runs.add],
        checkpointer=runs.InMemorySaver(),
        middleware=[
            SummarizationMiddleware(model=summarizer, trigger=("messages", 4), keep=("messages", 2))
        ],
    )


def test_A1_a_summary_of_the_history_is_a_compaction_not_the_user_s_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = _summarizing_agent()
    config = runs._config("summarized")
    agent.invoke({"messages": [("user", "add 1 and 2")]}, config)
    result = agent.invoke({"messages": [("user", "now 3 and 4")]}, config)
    from langchain_core.messages import messages_to_dict

    # The middleware's own mark on the message that replaced the history.
    assert result["messages"][0].additional_kwargs == {"lc_source": "summarization"}
    for loaded in (turnfold.load(result), turnfold.load(messages_to_dict(result["messages"]))):
        first = loaded.entries[0]
        assert isinstance(first, CompactionBoundary)
        assert first.summary is not None
        assert first.summary.endswith(SUMMARY)
        assert not [e for e in loaded.entries if isinstance(e, UserMessage)]
        assert outcome(loaded) == ([("c2", "add", {"a": 3, "b": 4}, "success", "7")], "seven")
        assert loaded.warnings == []
    # The builder, message by message, reads it as the flat read does.
    read, built, taken = read_both(
        monkeypatch, adapter, result["messages"], tried="_read_flat", declined=None
    )
    assert taken
    assert_read_alike(read, built, "summarized")


@pytest.mark.parametrize("mode", [["updates", "messages"], "values", "updates"], ids=str)
def test_A2_a_followed_run_shows_each_summary_as_a_compaction_and_the_prompt_as_the_user_s(
    mode: Any,
) -> None:
    agent = _summarizing_agent()
    config = runs._config(f"summarized-{mode}")
    events = list(agent.stream({"messages": [("user", "add 1 and 2")]}, config, stream_mode=mode))
    events += agent.stream({"messages": [("user", "now 3 and 4")]}, config, stream_mode=mode)
    transcript, _ = follow(events)
    assert transcript.warnings == []
    shown = [
        (type(e).__name__, getattr(e, "text", None) or getattr(e, "summary", None))
        for e in transcript.entries
        if not isinstance(e, ToolCall)
    ]
    prompts = [text for kind, text in shown if kind == "UserMessage"]
    # The second prompt reaches an updates stream only in the middleware's rewrite; the
    # first is a prompt not recorded (no text).
    assert prompts == (
        ["add 1 and 2", "now 3 and 4"] if "values" in mode else [None, "now 3 and 4"]
    )
    boundaries = [text for kind, text in shown if kind == "CompactionBoundary"]
    assert len(boundaries) == 2  # before each model call of the second turn
    assert [text[-len(SUMMARY) :] for text in boundaries if text] == [SUMMARY, SUMMARY]
    assert shown[-1] == ("AssistantText", "seven")
